//! The AvaTax simulator's rules without HTTP: the filter parser, the transaction state machine
//! and the arithmetic, against the state directly.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use rust_decimal_macros::dec;
use serde_json::{json, Value};
use time::macros::datetime;
use time::OffsetDateTime;

use super::errors::AvaError;
use super::input;
use super::models::{DocStatus, DocType, RefundInput, RefundType, State, VoidReason};
use super::odata::{self, CompareOp, Filter, ListQuery, Literal};
use super::seed::seeded_state;
use crate::sandbox::request::Query;

const NOW: OffsetDateTime = datetime!(2024-06-15 12:00 UTC);

fn state() -> State {
    seeded_state(7, NOW, crate::sandbox::tax::builtin().unwrap())
}

fn sale(code: &str, amount: f64, commit: bool) -> Value {
    json!({
        "type": "SalesInvoice", "code": code, "companyCode": "DEFAULT", "date": "2024-06-14", "customerCode": "ABC",
        "addresses": {"SingleLocation": {"line1": "123 Main Street", "city": "Irvine", "region": "CA", "country": "US", "postalCode": "92615"}},
        "lines": [{"number": "1", "quantity": 1, "amount": amount, "taxCode": "PS081282"}],
        "commit": commit,
    })
}

fn create(state: &mut State, body: &Value) -> Result<super::models::Transaction, AvaError> {
    let parsed = input::transaction(body, "")?;
    state.create_transaction(parsed, body.clone(), NOW)
}

#[test]
fn the_worked_example_of_api_avatax_md() {
    let mut state = state();
    let t = create(&mut state, &sale("YARN-1", 100.0, true)).unwrap();
    assert_eq!(t.status, DocStatus::Committed);
    assert_eq!(t.total_tax(), dec!(7.75));
    let rates: Vec<_> = t.lines[0].tax.details.iter().map(|d| (d.jurisdiction.tax_name.as_str(), d.tax)).collect();
    assert_eq!(
        rates,
        [
            ("CA STATE TAX", dec!(6)),
            ("CA COUNTY TAX", dec!(0.25)),
            ("CA SPECIAL TAX", dec!(0.5)),
            ("CA SPECIAL TAX", dec!(1))
        ]
    );
    // 90 in the adjust fixture gives 6.98: each jurisdiction rounds to the cent.
    let t = create(&mut state, &sale("YARN-2", 90.0, false)).unwrap();
    assert_eq!(t.total_tax(), dec!(6.98));
}

#[test]
fn lenient_names_enums_and_booleans_as_the_service_reads_them() {
    let mut state = state();
    let body = json!({"TYPE": 1, "Code": "LENIENT", "date": "2024-06-14T00:00:00", "CustomerCode": "ABC", "commit": "true",
                      "exemptionno": "GTX1080",
                      "addresses": {"shipto": {"postalCode": "92615", "country": "US"}},
                      "lines": [{"amount": "110"}]});
    let t = create(&mut state, &body).unwrap();
    assert_eq!((t.doc_type, t.status), (DocType::SALES_INVOICE, DocStatus::Committed));
    // The exemption blog's case: all exempt, no tax.
    assert_eq!((t.total_exempt(), t.total_tax()), (dec!(110), dec!(0)));
    assert_eq!(t.lines[0].destination.region, "CA", "the region of a known ZIP is filled in");
}

#[test]
fn void_codes_follow_the_table_of_the_voiding_guide() {
    let mut state = state();
    create(&mut state, &sale("V-1", 10.0, false)).unwrap();
    // Unspecified changes nothing; PostFailed needs a Posted document.
    assert_eq!(state.void("DEFAULT", "V-1", None, VoidReason::Unspecified, NOW).unwrap().status, DocStatus::Saved);
    assert_eq!(state.void("DEFAULT", "V-1", None, VoidReason::PostFailed, NOW).unwrap_err().code, "GetTaxError");
    state.verify("DEFAULT", "V-1", None, NOW).unwrap();
    assert_eq!(state.void("DEFAULT", "V-1", None, VoidReason::PostFailed, NOW).unwrap().status, DocStatus::Saved);
    assert_eq!(
        state.void("DEFAULT", "V-1", None, VoidReason::AdjustmentCancelled, NOW).unwrap_err().code,
        "GetTaxError"
    );
    // DocDeleted on a committed document voids it; on a voided one removes it.
    state.commit("DEFAULT", "V-1", None, true, NOW).unwrap();
    assert_eq!(state.void("DEFAULT", "V-1", None, VoidReason::DocDeleted, NOW).unwrap().status, DocStatus::Cancelled);
    state.void("DEFAULT", "V-1", None, VoidReason::DocDeleted, NOW).unwrap();
    assert_eq!(state.transaction("DEFAULT", "V-1", None).unwrap_err().code, "EntityNotFoundError");
}

#[test]
fn a_refused_call_leaves_the_state_as_it_was() {
    let mut state = state();
    create(&mut state, &sale("KEEP-1", 10.0, true)).unwrap();
    let before = format!("{:?}", state.transactions);
    let mut bad = sale("KEEP-2", 10.0, false);
    bad["addresses"]["SingleLocation"]["postalCode"] = json!("00000");
    bad["addresses"]["SingleLocation"]["region"] = json!("PA");
    assert_eq!(create(&mut state, &bad).unwrap_err().code, "GetTaxError");
    assert_eq!(state.commit("DEFAULT", "KEEP-1", None, true, NOW).unwrap_err().code, "TransactionIsCommitted");
    let refund = RefundInput {
        code: "R".into(),
        date: NOW.date(),
        kind: RefundType::Percentage,
        percentage: Some(dec!(150)),
        lines: Vec::new(),
        reference_code: String::new(),
        use_tax_date_override: false,
    };
    assert_eq!(
        state.refund("DEFAULT", "KEEP-1", None, refund, json!({}), NOW).unwrap_err().code,
        "RefundPercentageOutOfRange"
    );
    let adjust = input::transaction(&sale("KEEP-1", 5.0, false), "").unwrap();
    assert_eq!(
        state.adjust("DEFAULT", "KEEP-1", None, "NotAdjusted", "", adjust, json!({}), NOW).unwrap_err().code,
        "InvalidAdjustmentType"
    );
    assert_eq!(format!("{:?}", state.transactions), before);
}

#[test]
fn money_past_what_the_simulator_can_add_up_is_refused_and_stores_nothing() {
    let mut state = state();
    let before = format!("{:?}", state.transactions);
    let max = "79228162514264337593543950335";
    let mut two_lines = sale("HUGE-1", 1.0, false);
    let line = two_lines["lines"][0].clone();
    two_lines["lines"] = json!([line.clone(), line]);
    // As text: a JSON number this large reads as a float just past the largest Decimal.
    two_lines["lines"][0]["amount"] = json!(max);
    two_lines["lines"][1]["amount"] = json!(max);
    two_lines["lines"][1]["number"] = json!("2");
    let mut tiny_quantity = sale("HUGE-2", 1e27, false);
    tiny_quantity["lines"][0]["quantity"] = json!(1e-20);
    let mut override_shares = sale("HUGE-3", 1e27, false);
    let negative = json!({"number": "2", "quantity": 1, "amount": -9.99e26, "taxCode": "PS081282"});
    override_shares["lines"].as_array_mut().unwrap().push(negative);
    override_shares["taxOverride"] = json!({"type": "TaxAmount", "taxAmount": 1e27, "reason": "x"});
    for body in [&two_lines, &tiny_quantity, &override_shares] {
        let Err(error) = create(&mut state, body) else { panic!("accepted {body}") };
        assert_eq!((error.status, error.code, error.number), (400, "RangeError", 6), "{body}");
    }
    assert_eq!(format!("{:?}", state.transactions), before);
    // One line of the largest amount still works, and its totals render.
    let one = create(&mut state, &sale("BIG-1", 1e27, false)).unwrap();
    assert_eq!(one.total_amount(), one.lines[0].line_amount);
}

#[test]
fn tax_amount_override_spreads_over_the_lines_and_keeps_the_calculation() {
    let mut state = state();
    let mut body = sale("OVR-1", 100.0, false);
    body["lines"] = json!([{"amount": 100}, {"amount": 300}]);
    body["taxOverride"] = json!({"type": "TaxAmount", "taxAmount": 20, "reason": "Collected at the register"});
    let t = create(&mut state, &body).unwrap();
    assert_eq!(t.total_tax(), dec!(20));
    assert_eq!(t.total_tax_calculated(), dec!(31));
    assert_eq!((t.lines[0].tax.tax, t.lines[1].tax.tax), (dec!(5), dec!(15)));
    assert_eq!(t.lines[1].tax.details.iter().map(|d| d.tax).sum::<rust_decimal::Decimal>(), dec!(15));
}

#[test]
fn filters_parse_with_precedence_and_refuse_what_is_malformed() {
    let parsed = odata::parse_filter("a eq 1 or b eq 'x' and (c gt 2)").unwrap().unwrap();
    match parsed {
        Filter::Or(terms) => {
            assert_eq!(
                terms[0],
                Filter::Compare { field: "a".into(), op: CompareOp::Eq, value: Literal::Number("1".into()) }
            );
            assert!(matches!(&terms[1], Filter::And(t) if t.len() == 2));
        }
        other => panic!("or binds loosest: {other:?}"),
    }
    assert_eq!(odata::parse_filter("  ").unwrap(), None);
    assert!(
        matches!(odata::parse_filter("name eq 'O''Brien'").unwrap(), Some(Filter::Compare { value: Literal::Text(t), .. }) if t == "O'Brien")
    );
    for (text, code) in [
        ("a eq", "SyntaxError"),
        ("a eq 'x", "UnterminatedValueError"),
        ("a eq 1)", "SyntaxError"),
        ("a eq 1 b eq 2", "UnknownConjunctionError"),
        ("a matches 1", "MalformedFilterException"),
        ("a eq 1 2", "ExpectedConjunctionError"),
        ("a # 1", "SyntaxError"),
    ] {
        assert_eq!(odata::parse_filter(text).unwrap_err().code, code, "{text}");
    }
}

#[test]
fn hostile_filters_are_refused_as_syntax_errors_without_exhausting_the_stack() {
    // Run on a thread with a worker's stack (tokio's 2 MiB), where the sandbox parses filters.
    let worker = std::thread::Builder::new().stack_size(2 * 1024 * 1024);
    let handle = worker
        .spawn(|| {
            let parens = format!("{}totalAmount gt 0{}", "(".repeat(1500), ")".repeat(1500));
            let nots = format!("{}totalAmount gt 0", "not ".repeat(12_000));
            for text in [parens.as_str(), nots.as_str()] {
                let error = odata::parse_filter(text).unwrap_err();
                assert_eq!((error.status, error.code, error.number), (400, "SyntaxError", 19));
                assert_eq!(error.refers_to.as_deref(), Some("$filter"));
            }
            // As deep as allowed still parses and runs.
            let depth = odata::MAX_FILTER_DEPTH;
            let deep = format!("{}a gt 0{}", "(".repeat(depth), ")".repeat(depth));
            assert!(odata::parse_filter(&deep).unwrap().is_some());
            let too_deep = format!("{}not a gt 0", "not ".repeat(depth));
            assert_eq!(odata::parse_filter(&too_deep).unwrap_err().code, "SyntaxError");
            // The longest filter read, all `and`s: parsed, checked, matched and dropped.
            let mut chain = String::from("a gt 0");
            while chain.len() + " and a gt 0".len() <= odata::MAX_FILTER_LEN {
                chain.push_str(" and a gt 0");
            }
            let records = vec![json!({"a": 1}), json!({"a": 0})];
            let list = ListQuery { filter: Some(chain.clone()), order_by: None };
            let page =
                odata::fetch_result("/x", records.clone(), |r| r, &|_| None, &records[0], &list, &Query::default())
                    .unwrap();
            assert_eq!(page["@recordsetCount"], 1);
            chain.push_str(" and a gt 0");
            assert_eq!(odata::parse_filter(&chain).unwrap_err().code, "SyntaxError");
        })
        .unwrap();
    handle.join().unwrap();
}

#[test]
fn fetch_result_filters_sorts_and_links_the_next_page() {
    let records: Vec<Value> = (1..=5)
        .map(|i| json!({"id": i, "name": format!("n{i}"), "region": if i % 2 == 0 { "CA" } else { "WA" }}))
        .collect();
    let list = ListQuery { filter: Some("region eq 'ca' or id ge 5".into()), order_by: Some("id desc".into()) };
    let query = Query::parse("$top=2").unwrap();
    let result = odata::fetch_result("/x", records.clone(), |r| r, &|_| None, &records[0], &list, &query).unwrap();
    assert_eq!(result["@recordsetCount"], 3);
    assert_eq!(result["value"], json!([records[4], records[3]]));
    assert_eq!(result["@nextLink"], "/x?%24top=2&%24skip=2");
    let over = Query::parse("$top=5000").unwrap();
    assert_eq!(
        odata::fetch_result("/x", records, |r| r, &|_| None, &json!({"id": 1}), &ListQuery::default(), &over)
            .unwrap_err()
            .code,
        "QueryParameterOutOfRange"
    );
}

#[test]
fn a_sorted_page_is_a_page_of_the_whole_stable_sort() {
    // 300 records in 7 amounts: many ties, which keep the list's own order.
    let amounts = |i: i64| (i * 5) % 7;
    let records: Vec<i64> = (0..300).collect();
    let mut expected = records.clone();
    expected.sort_by_key(|i| std::cmp::Reverse(amounts(*i)));
    let list = ListQuery { filter: Some("id ge 0".into()), order_by: Some("amount desc".into()) };
    let mut seen = Vec::new();
    for skip in (0..300).step_by(40) {
        let query = Query::parse(&format!("$top=40&$skip={skip}")).unwrap();
        let render = |i: i64| json!({"id": i, "amount": amounts(i)});
        let page = odata::fetch_result(
            "/x",
            records.clone(),
            render,
            &|_| None,
            &json!({"id": 0, "amount": 0}),
            &list,
            &query,
        )
        .unwrap();
        assert_eq!(page["@recordsetCount"], 300);
        seen.extend(page["value"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()));
    }
    assert_eq!(seen, expected, "pages of a selection read as pages of one stable sort");
}

#[test]
fn an_unfiltered_page_renders_only_itself_and_reads_as_a_filtered_one() {
    let records: Vec<i64> = (1..=25).collect();
    let rendered = std::cell::Cell::new(0);
    let render = |i: i64| {
        rendered.set(rendered.get() + 1);
        json!({"id": i})
    };
    let query = Query::parse("$top=10&$skip=10").unwrap();
    let plain =
        odata::fetch_result("/x", records.clone(), render, &|_| None, &json!({"id": 0}), &ListQuery::default(), &query)
            .unwrap();
    assert_eq!(rendered.get(), 10, "only the page is rendered");
    assert_eq!(plain["@recordsetCount"], 25);
    assert_eq!(plain["value"], json!((11..=20).map(|i| json!({"id": i})).collect::<Vec<_>>()));
    assert_eq!(plain["@nextLink"], "/x?%24top=10&%24skip=20");
    let everything = ListQuery { filter: Some("id gt 0".into()), order_by: None };
    let filtered =
        odata::fetch_result("/x", records, |i| json!({"id": i}), &|_| None, &json!({"id": 0}), &everything, &query)
            .unwrap();
    assert_eq!((&filtered["@recordsetCount"], &filtered["value"]), (&plain["@recordsetCount"], &plain["value"]));
}

#[test]
fn documents_past_the_cap_forget_the_oldest_first() {
    let mut state = state();
    let seeded = state.transactions.len();
    state.caps.documents = seeded + 20;
    for i in 0..200 {
        create(&mut state, &sale(&format!("CAP-{i}"), 10.0, false)).unwrap();
        assert!(state.transactions.len() <= state.caps.documents, "{} kept", state.transactions.len());
    }
    let codes: Vec<&str> = state.transactions.iter().map(|t| t.code.as_str()).collect();
    assert!(codes.contains(&"CAP-199"), "the newest is kept");
    assert!(!codes.contains(&"CAP-0"), "the oldest is forgotten");
}

#[test]
fn customers_past_their_cap_forget_the_oldest_and_companies_past_theirs_are_refused() {
    use super::models::{CompanyInput, Customer};
    let mut state = state();
    let company = state.company_by_code("DEFAULT").unwrap().id;
    state.caps.customers = 5;
    for i in 0..20 {
        let customer = Customer {
            customer_code: format!("CAP-{i}"),
            name: "Capped".into(),
            line1: "1 Main St".into(),
            city: "Irvine".into(),
            region: "CA".into(),
            postal_code: "92615".into(),
            country: "US".into(),
            ..Customer::default()
        };
        state.create_customers(company, vec![customer], NOW).unwrap();
        assert!(state.customers.len() <= state.caps.customers);
    }
    let codes: Vec<&str> = state.customers.iter().map(|c| c.customer_code.as_str()).collect();
    assert_eq!(codes, ["CAP-15", "CAP-16", "CAP-17", "CAP-18", "CAP-19"], "the newest five");

    state.caps.companies = state.companies.len() + 1;
    let company = |code: &str| CompanyInput {
        code: code.into(),
        name: code.into(),
        default_country: "US".into(),
        ..CompanyInput::default()
    };
    state.create_companies(vec![company("ONE-MORE")], NOW).unwrap();
    let before = state.companies.len();
    let refused = state.create_companies(vec![company("TOO-MANY")], NOW).unwrap_err();
    assert_eq!((refused.status, refused.code), (400, "SandboxLimitReached"));
    assert_eq!(state.companies.len(), before, "nothing is stored");
}

#[test]
fn the_document_index_agrees_with_the_documents_through_deletes_adjustments_and_the_cap() {
    let mut state = state();
    let company = state.company_by_code("DEFAULT").unwrap().id;
    state.caps.documents = 30;
    for i in 0..40 {
        create(&mut state, &sale(&format!("IDX-{i}"), 10.0 + f64::from(i), false)).unwrap();
    }
    // Deleted with every version; adjusted then the adjustment cancelled; lower-case lookups.
    state.void("DEFAULT", "idx-39", None, VoidReason::DocDeleted, NOW).unwrap();
    let changed = input::transaction(&sale("IDX-38", 99.0, false), "").unwrap();
    state.adjust("DEFAULT", "IDX-38", None, "PriceAdjusted", "", changed, json!({}), NOW).unwrap();
    assert_eq!(state.transaction("DEFAULT", "idx-38", None).unwrap().version, 2);
    state.void("DEFAULT", "IDX-38", None, VoidReason::AdjustmentCancelled, NOW).unwrap();
    assert_eq!(state.transaction("DEFAULT", "IDX-38", None).unwrap().version, 1);
    assert_eq!(state.transaction("DEFAULT", "IDX-39", None).unwrap_err().code, "EntityNotFoundError");
    // Every version the list picks is found again by its code, and a forgotten one is not.
    let listed = state.transactions.of_company(company, None);
    let all: Vec<usize> =
        (0..state.transactions.len()).filter(|i| state.transactions[*i].company_id == company).collect();
    assert_eq!(listed, all);
    for i in listed {
        let t = &state.transactions[i];
        if t.status != DocStatus::Adjusted {
            assert_eq!(state.transaction("DEFAULT", &t.code, Some(t.doc_type)).unwrap().id, t.id, "{}", t.code);
        }
        assert_eq!(state.transactions.position(t.id), Some(i));
    }
    assert!(state.transaction("DEFAULT", "IDX-0", None).is_err(), "the oldest went past the cap");
    // The customer code index and the rows agree with the documents too.
    let documents = &state.transactions;
    for i in 0..documents.len() {
        let t = &documents[i];
        let row = documents.row(i);
        assert_eq!((row.company_id, row.date, row.total_amount), (t.company_id, t.input.date, t.total_amount()));
        let lowered = t.input.customer_code.to_lowercase();
        let expected: Vec<usize> = (0..documents.len())
            .filter(|j| documents[*j].company_id == t.company_id)
            .filter(|j| documents[*j].input.customer_code.to_lowercase() == lowered)
            .collect();
        let found: Vec<usize> = documents
            .with_text(super::documents::Indexed::CustomerCode, t.company_id, &lowered.to_uppercase())
            .collect();
        assert_eq!(found, expected, "{}", t.input.customer_code);
    }
}

/// What recorded AvaTax traffic shows production accepting.
#[test]
fn accepted_as_production_accepts() {
    let mut state = state();
    // Freight's short code FR (every order with shipping), answered as sent; an unknown code of a
    // known family is taxed as that family.
    let mut shipped = sale("FR-1", 10.0, true);
    shipped["lines"] = json!([{"number": "1", "amount": 10, "taxCode": "PS081282"},
                              {"number": "2", "amount": 5, "taxCode": "FR"},
                              {"number": "3", "amount": 5, "taxCode": "FR020199"}]);
    let t = create(&mut state, &shipped).unwrap();
    assert_eq!(t.lines[1].tax_code.code, "FR");
    // California does not tax freight.
    assert_eq!((t.lines[1].tax.tax, t.lines[2].tax.tax), (dec!(0), dec!(0)));
    let rendered = super::render::transaction(&t, super::render::Include::FULL);
    assert_eq!(
        (&rendered["lines"][1]["taxCode"], &rendered["lines"][2]["taxCode"]),
        (&json!("FR"), &json!("FR020199"))
    );
    // ISO alpha-3 countries.
    for (country, region, postal) in [("CAN", "ON", "M5V 2T6"), ("GBR", "", "SW1A 1AA"), ("USA", "CA", "92615")] {
        let mut body = sale(&format!("C-{country}"), 10.0, false);
        body["addresses"] = json!({"SingleLocation": {"line1": "1 Main St", "city": "X", "region": region,
                                                      "country": country, "postalCode": postal}});
        let t = create(&mut state, &body).unwrap_or_else(|e| panic!("{country}: {e:?}"));
        assert_eq!(t.lines[0].destination.country, &country[..2], "{country}");
    }
    // A ZIP of another state is accepted (taxed by the state given); one no state has is not.
    let mut body = sale("ZIP-1", 100.0, false);
    body["addresses"]["SingleLocation"]["postalCode"] = json!("10001");
    let t = create(&mut state, &body).unwrap();
    assert_eq!(t.lines[0].destination.region, "CA");
    assert!(t.total_tax() > dec!(0));
    body["code"] = json!("ZIP-2");
    body["addresses"]["SingleLocation"]["postalCode"] = json!("00000");
    body["addresses"]["SingleLocation"]["region"] = json!("PA");
    let error = create(&mut state, &body).unwrap_err();
    assert_eq!(
        (error.status, error.code, error.message.as_str()),
        (400, "GetTaxError", "Zip is not valid for the state")
    );
}

/// The keys, types and formats of recorded answers (a 2022 committed SalesInvoice, a 2021
/// SalesOrder).
#[test]
fn transactions_carry_the_keys_of_recorded_answers() {
    let mut state = state();
    let t = create(&mut state, &sale("KEYS-1", 100.0, true)).unwrap();
    let value = super::render::transaction(&t, super::render::Include::FULL);
    let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "code",
            "companyId",
            "date",
            "paymentDate",
            "status",
            "type",
            "batchCode",
            "currencyCode",
            "exchangeRateCurrencyCode",
            "customerUsageType",
            "entityUseCode",
            "customerVendorCode",
            "customerCode",
            "exemptNo",
            "reconciled",
            "locationCode",
            "reportingLocationCode",
            "purchaseOrderNo",
            "referenceCode",
            "salespersonCode",
            "taxOverrideType",
            "taxOverrideAmount",
            "taxOverrideReason",
            "totalAmount",
            "totalExempt",
            "totalDiscount",
            "totalTax",
            "totalTaxable",
            "totalTaxCalculated",
            "adjustmentReason",
            "adjustmentDescription",
            "locked",
            "region",
            "country",
            "version",
            "softwareVersion",
            "originAddressId",
            "destinationAddressId",
            "exchangeRateEffectiveDate",
            "exchangeRate",
            "description",
            "email",
            "businessIdentificationNo",
            "modifiedDate",
            "modifiedUserId",
            "taxDate",
            "lines",
            "addresses",
            "locationTypes",
            "summary",
        ]
    );
    let modified = value["modifiedDate"].as_str().unwrap();
    assert!(modified.len() == 28 && modified.ends_with('Z') && modified.as_bytes()[19] == b'.', "{modified}");
    let line = &value["lines"][0];
    for (key, expected) in [
        ("hsCode", json!("")),
        ("vatCode", json!("")),
        ("costInsuranceFreight", json!(0)),
        ("vatNumberTypeId", json!(0)),
        ("nonPassthroughDetails", json!([])),
    ] {
        assert_eq!(line[key], expected, "{key}");
    }
    assert!(line.get("parameters").is_none());
    assert!(line["lineLocationTypes"].is_array());
    let detail = &line["details"][0];
    assert_eq!((&detail["taxSubTypeId"], &detail["isNonPassThru"]), (&json!("S"), &json!(false)));
    assert_eq!(value["summary"][0]["taxSubType"], "S");
    // No coordinates were given: the address carries those of its ZIP, as strings, where the
    // resolver can place it, and "" where it cannot.
    assert_eq!(
        (&value["addresses"][0]["latitude"], &value["addresses"][0]["longitude"]),
        (&json!("33.657808"), &json!("-117.968489"))
    );
    let mut far = sale("KEYS-3", 100.0, false);
    far["addresses"]["SingleLocation"]["postalCode"] = json!("92101");
    far["addresses"]["SingleLocation"]["city"] = json!("San Diego");
    let far = super::render::transaction(&create(&mut state, &far).unwrap(), super::render::Include::FULL);
    assert_eq!((&far["addresses"][0]["latitude"], &far["addresses"][0]["longitude"]), (&json!(""), &json!("")));
    // A SalesOrder leaves out what it has no value for, rather than filling it with "" and 0.
    let mut order = sale("KEYS-2", 100.0, false);
    order["type"] = json!("SalesOrder");
    let t = create(&mut state, &order).unwrap();
    let value = super::render::transaction(&t, super::render::Include::FULL);
    for absent in [
        "taxOverrideType",
        "softwareVersion",
        "originAddressId",
        "description",
        "email",
        "region",
        "adjustmentDescription",
        "parameters",
        "locationTypes",
        "isSellerImporterOfRecord",
    ] {
        assert!(value.get(absent).is_none(), "{absent}");
    }
    assert_eq!((&value["id"], &value["paymentDate"]), (&json!(0), &json!("2024-06-14")));
    let line = &value["lines"][0];
    for absent in ["boundaryOverrideId", "sourcing", "taxEngine", "revAccount", "originAddressId", "isSSTP"] {
        assert!(line.get(absent).is_none(), "{absent}");
    }
    assert_eq!((&line["id"], &line["hsCode"]), (&json!(0), &json!("")));
    let detail = &line["details"][0];
    for absent in ["addressId", "signatureCode", "sourcing", "serCode", "taxableUnits", "jurisdictionId"] {
        assert!(detail.get(absent).is_none(), "{absent}");
    }
    // A quote keeps an email given with it (recorded 2024 quotes), and leaves out an empty one.
    let mut quote = sale("KEYS-5", 10.0, false);
    quote["type"] = json!("SalesOrder");
    quote["email"] = json!("user@email.com");
    let value = super::render::transaction(&create(&mut state, &quote).unwrap(), super::render::Include::FULL);
    assert_eq!(value["email"], "user@email.com");
    // A quote with a tax override keeps it, as recorded ReturnOrders do.
    let mut quote = sale("KEYS-4", -10.0, false);
    quote["type"] = json!("ReturnOrder");
    quote["taxOverride"] = json!({"type": "TaxDate", "reason": "Refund for return #11", "taxDate": "2024-06-01"});
    let value = super::render::transaction(&create(&mut state, &quote).unwrap(), super::render::Include::FULL);
    assert_eq!(
        (&value["taxOverrideType"], &value["taxOverrideAmount"], &value["taxOverrideReason"]),
        (&json!("TaxDate"), &json!(0), &json!("Refund for return #11"))
    );
    assert_eq!(detail["liabilityType"], "Seller");
    assert_eq!(value["addresses"][0]["id"], 0);
}

#[test]
fn force_timeout_fails_with_a_400_as_recorded() {
    let error = super::force_timeout_error();
    assert_eq!((error.status, error.code), (400, "TimeoutRequested"));
}

/// A tax code past the model's 25 characters is refused as recorded (solidus_avatax_certified,
/// "returns error response when taxCode is too long"); 25 characters are taken.
#[test]
fn a_tax_code_longer_than_the_model_allows_is_refused_as_recorded() {
    let mut state = state();
    let mut body = sale("LONG-CODE", 10.0, false);
    body["lines"][0]["taxCode"] = json!("TAXCODE - 347722 - 9999999");
    let error = create(&mut state, &body).unwrap_err();
    assert_eq!((error.status, error.code, error.number), (400, "StringLengthError", 13));
    assert_eq!(error.message, "Field 'taxCode' has an invalid length.");
    assert_eq!(error.description, "Field 'taxCode' must be between 0 and 25 characters in length.");
    assert!(state.transaction("DEFAULT", "LONG-CODE", None).is_err());
    body["lines"][0]["taxCode"] = json!("TAXCODE - 347722 - 999999");
    assert!(create(&mut state, &body).is_ok());
    // A postal code past 11 characters likewise (recorded in saleor's cassettes).
    let mut body = sale("LONG-ZIP", 10.0, false);
    body["addresses"]["SingleLocation"]["postalCode"] = json!("53-601-53-601");
    let error = create(&mut state, &body).unwrap_err();
    assert_eq!(error.description, "Field 'postalCode' must be between 0 and 11 characters in length.");
}

/// An intra-community supply (Italy to France, to a buyer with a VAT number) is zero-rated in
/// Italy and carries the Art. 138 invoice message on goods, as recorded
/// (solidus_avatax_certified, VAT "with BusinessIdentificationNo"); freight gets "no applicable
/// messaging". Without the buyer's number it is an ordinary sale with no invoice messages.
#[test]
fn an_intra_eu_supply_to_a_business_is_zero_rated_with_its_invoice_message() {
    let mut state = state();
    let route = json!({"shipFrom": {"line1": "Via Roma 1", "city": "Florence", "country": "IT", "postalCode": "50122"},
                       "shipTo": {"line1": "8 Boulevard du Palais", "city": "Paris", "country": "FR", "postalCode": "75001"}});
    let body = |code: &str, bin: &str| {
        json!({"type": "SalesOrder", "code": code, "companyCode": "DEFAULT", "date": "2024-05-01", "customerCode": "EU-1",
               "businessIdentificationNo": bin, "addresses": route,
               "lines": [{"number": "1-LI", "amount": 10, "taxCode": "PC030000", "taxIncluded": true},
                         {"number": "2-FR", "amount": 10, "taxCode": "FR000000", "taxIncluded": true}]})
    };
    let t = create(&mut state, &body("EU-B2B", "FR40303265045")).unwrap();
    let value = super::render::transaction(&t, super::render::Include::FULL);
    assert_eq!(value["totalTax"].as_f64(), Some(0.0));
    assert_eq!(value["totalAmount"].as_f64(), Some(20.0), "a zero rate leaves a tax-included amount whole");
    let detail = &value["lines"][0]["details"][0];
    assert_eq!(
        (&detail["country"], &detail["region"], &detail["jurisName"], &detail["taxName"], &detail["rate"]),
        (&json!("IT"), &json!("IT"), &json!("ITALY"), &json!("Zero Rate"), &json!(0))
    );
    assert_eq!((&detail["taxType"], &detail["rateType"]), (&json!("Output"), &json!("Zero")));
    assert_eq!(
        value["invoiceMessages"],
        json!([{"content": "No applicable messaging for this line.", "lineNumbers": ["2-FR"]},
               {"content": "Intra-EU Supply of Goods as per Art. 138 EU VAT Directive 2006/112", "lineNumbers": ["1-LI"]}])
    );
    let note = &value["messages"][0];
    assert_eq!((&note["severity"], &note["source"]), (&json!("Success"), &json!("Avalara.AvaTax.TaxEngine")));
    let listed: Value = serde_json::from_str(note["details"].as_str().unwrap()).unwrap();
    assert_eq!(
        listed["InvoiceMessageList"],
        json!([{"TaxLineNo": "1-LI", "MessageCode": 1}, {"TaxLineNo": "2-FR", "MessageCode": 0}])
    );

    let t = create(&mut state, &body("EU-B2C", "")).unwrap();
    let value = super::render::transaction(&t, super::render::Include::FULL);
    assert!(value.get("invoiceMessages").is_none() && value.get("messages").is_none(), "{value}");
    assert_ne!(value["lines"][0]["details"][0]["taxName"], "Zero Rate");
}

/// A filter or sort over stored documents reads the fields it names through the header's
/// readers: the same page and count as rendering every document and matching that, and no
/// document rendered but the page's.
#[test]
fn a_filter_or_sort_read_through_the_header_fields_agrees_with_one_over_rendered_documents() {
    use super::render::{self, Include};
    let mut state = state();
    for i in 0..60 {
        let mut body = sale(&format!("READ-{i}"), 10.0 + f64::from(i % 13), i % 3 == 0);
        body["customerCode"] = json!(format!("Cust-{}", i % 5));
        if i % 4 == 0 {
            body["addresses"]["SingleLocation"] = json!({"line1": "1 Pike St", "city": "Seattle", "region": "WA", "country": "US", "postalCode": "98101"});
        }
        create(&mut state, &body).unwrap();
    }
    state.void("DEFAULT", "READ-7", None, VoidReason::DocVoided, NOW).unwrap();
    // An adjusted document: its new version has other lines, a new total and another customer.
    let mut changed = sale("READ-8", 77.0, false);
    changed["customerCode"] = json!("Cust-4");
    let changed = input::transaction(&changed, "").unwrap();
    state.adjust("DEFAULT", "READ-8", None, "PriceAdjusted", "", changed, json!({}), NOW).unwrap();
    let state = &state;
    let records: Vec<usize> = (0..state.transactions.len()).collect();
    let full = |i: usize| render::transaction(&state.transactions[i], Include::HEADER);
    let reader = |name: &str| super::routes::document_reader(&state.transactions, name);
    let template = render::transaction(&state.transactions[0], Include::FULL);
    let cases = [
        (Some("status eq Committed"), Some("totalAmount desc, code")),
        (Some("customercode eq 'cust-2' and region eq 'WA'"), None),
        (Some("totalTax between 1 and 1.5 or code startswith 'read-5'"), Some("TOTALTAX, id desc")),
        (Some("status ne 'Committed' and not (customerCode in ('Cust-1', 'Cust-3'))"), Some("date desc")),
        (None, Some("customerCode desc, totalAmount")),
        (Some("adjustmentDescription is null or locked eq false"), Some("region")),
    ];
    for (filter, order_by) in cases {
        let list = ListQuery { filter: filter.map(str::to_owned), order_by: order_by.map(str::to_owned) };
        for paging in ["$top=7", "$top=5&$skip=9", "$top=1000"] {
            let query = Query::parse(paging).unwrap();
            let rendered = std::cell::Cell::new(0);
            let counted = |i: usize| {
                rendered.set(rendered.get() + 1);
                full(i)
            };
            let read = odata::fetch_result("/x", records.clone(), counted, &reader, &template, &list, &query).unwrap();
            let page = read["value"].as_array().unwrap().len();
            assert_eq!(rendered.get(), page, "{filter:?} {order_by:?}: only the page is rendered");
            let plain = odata::fetch_result("/x", records.clone(), full, &|_| None, &template, &list, &query).unwrap();
            assert_eq!(read, plain, "{filter:?} {order_by:?} {paging}");
            assert!(plain["@recordsetCount"].as_u64().unwrap() > 0, "{filter:?} keeps some documents");
        }
    }
    // A field no reader gives (the lines) is refused as before.
    let nested = ListQuery { filter: Some("lines eq 1".into()), order_by: None };
    let error = odata::fetch_result("/x", records, full, &reader, &template, &nested, &Query::default()).unwrap_err();
    assert_eq!(error.code, "FieldNotQueryableError");
}

/// `money` writes the number an amount's decimal text reads as, whichever way it gets there.
#[test]
fn money_is_the_number_its_decimal_text_reads_as() {
    use rust_decimal::Decimal;
    use std::str::FromStr;
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut amounts: Vec<Decimal> = ["0", "-0.00", "0.1", "0.3", "-7.75", "12.50", "9007199254740993", "1e-28"]
        .iter()
        .map(|text| Decimal::from_str(text).or_else(|_| Decimal::from_scientific(text)).unwrap())
        .collect();
    amounts.extend([Decimal::MAX, Decimal::MIN, dec!(0.0000000000000000000000000001)]);
    for _ in 0..20_000 {
        let digits = i64::try_from(next() >> (next() % 64)).unwrap_or(i64::MAX);
        let sign = if next() % 2 == 0 { 1 } else { -1 };
        let scale = u32::try_from(next() % 29).unwrap();
        amounts.push(Decimal::new(sign * digits, scale));
    }
    for amount in amounts {
        let text = amount.normalize().to_string();
        let read = serde_json::Number::from_str(&text).map(Value::Number).unwrap_or(Value::Null);
        assert_eq!(super::render::money(amount).to_string(), read.to_string(), "{amount}");
    }
}

#[test]
fn a_date_is_written_as_the_formatter_would() {
    use time::{Date, Month};
    for (year, month, day) in
        [(2024, Month::June, 5), (1, Month::January, 1), (9999, Month::December, 31), (-7, Month::March, 9)]
    {
        let at = Date::from_calendar_date(year, month, day).unwrap();
        let expected = format!("{year:04}-{:02}-{day:02}", u8::from(month));
        assert_eq!(super::render::date(at), expected);
    }
}
