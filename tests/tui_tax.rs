//! The console's AvaTax and TaxJar views driven by keys against loopback fake upstreams that
//! answer the vendors' documented JSON (shared/api/avatax.md, taxjar.md): companies to
//! transactions, the transaction view and its actions, rate and calculation breakdowns.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use opsdeck::cli::GlobalArgs;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::harness::Harness;

fn no_args() -> GlobalArgs {
    GlobalArgs::default()
}

async fn harness_with(vars: Vec<(&'static str, String)>) -> Harness {
    Harness::with_env(no_args(), &move |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| (name == "COLORTERM").then(|| "truecolor".into()))
    })
    .await
}

/// What the fake AvaTax saw and holds: transaction statuses by code, and the calls made.
#[derive(Default)]
struct Books {
    status: HashMap<String, String>,
    calls: Vec<String>,
}

type Shared = Arc<Mutex<Books>>;

/// The documented Irvine transaction ([JS test/fixtures/transaction_response.js]), with its
/// four jurisdictions, under `code` and `status`.
fn transaction(code: &str, status: &str, with_lines: bool) -> Value {
    let detail = |name: &str, kind: &str, tax_name: &str, rate: f64, tax: f64| json!({"jurisName": name, "jurisType": kind, "taxName": tax_name, "rate": rate, "taxableAmount": 100, "tax": tax});
    let mut tx = json!({
        "id": 289450369, "code": code, "companyId": 265543, "date": "2017-04-12", "status": status,
        "type": "SalesInvoice", "customerCode": "ABC", "totalAmount": 1234.5, "totalExempt": 0,
        "totalTax": 95.67, "totalTaxable": 1234.5, "version": 1, "adjustmentReason": "NotAdjusted", "locked": false,
    });
    if with_lines {
        tx["lines"] = json!([{
            "lineNumber": "1", "itemCode": "Y0001", "description": "Yarn", "quantity": 1, "lineAmount": 100,
            "taxableAmount": 100, "exemptAmount": 0, "tax": 7.75, "taxCode": "PS081282",
            "details": [
                detail("CALIFORNIA", "STA", "CA STATE TAX", 0.06, 6.0),
                detail("ORANGE", "CTY", "CA COUNTY TAX", 0.0025, 0.25),
                detail("ORANGE COUNTY DISTRICT TAX SP", "STJ", "CA SPECIAL TAX", 0.005, 0.5),
                detail("ORANGE CO LOCAL TAX SL", "STJ", "CA SPECIAL TAX", 0.01, 1.0),
            ]
        }]);
        tx["summary"] = json!([{"jurisType": "State", "jurisName": "CALIFORNIA", "taxName": "CA STATE TAX",
            "rate": 0.06, "taxable": 100, "tax": 6}]);
        tx["addresses"] = json!([{"line1": "123 Main Street", "city": "Irvine", "region": "CA", "country": "US", "postalCode": "92615"}]);
    }
    tx
}

fn not_found(code: &str) -> (StatusCode, Json<Value>) {
    let body = json!({"error": {"code": "EntityNotFoundError", "message": "Document not found.", "target": "HttpRequest",
        "details": [{"code": "EntityNotFoundError", "number": 4, "message": "Document not found.",
            "description": format!("The Document with code '{code}' was not found."), "faultCode": "Client", "severity": "Error"}]}});
    (StatusCode::NOT_FOUND, Json(body))
}

fn fake_avatax(books: Shared) -> Router {
    Router::new()
        .route(
            "/api/v2/companies",
            get(|| async {
                Json(json!({"@recordsetCount": 2, "value": [
                    {"id": 265543, "companyCode": "DEFAULT", "name": "API Trial Company", "isDefault": true, "isActive": true},
                    {"id": 265544, "companyCode": "ACME", "name": "Acme Inc", "isDefault": false, "isActive": true}]}))
            }),
        )
        .route(
            "/api/v2/companies/{company}/transactions",
            get(|State(books): State<Shared>, Path(company): Path<String>| async move {
                let mut books = books.lock().unwrap();
                books.calls.push(format!("list {company}"));
                let mut rows: Vec<Value> =
                    books.status.iter().map(|(code, status)| transaction(code, status, false)).collect();
                rows.sort_by(|a, b| a["code"].as_str().cmp(&b["code"].as_str()));
                Json(json!({"@recordsetCount": rows.len(), "value": rows}))
            }),
        )
        .route(
            "/api/v2/companies/{company}/transactions/{code}",
            get(|State(books): State<Shared>, Path((company, code)): Path<(String, String)>, RawQuery(query): RawQuery| async move {
                let mut books = books.lock().unwrap();
                let query = percent_encoding::percent_decode_str(&query.unwrap_or_default()).decode_utf8_lossy().into_owned();
                books.calls.push(format!("get {company} {code} {query}"));
                match books.status.get(&code) {
                    Some(status) => Ok(Json(transaction(&code, status, true))),
                    None => Err(not_found(&code)),
                }
            }),
        )
        .route(
            "/api/v2/companies/{company}/transactions/{code}/{action}",
            post(|State(books): State<Shared>, Path((company, code, action)): Path<(String, String, String)>, Json(body): Json<Value>| async move {
                let mut books = books.lock().unwrap();
                books.calls.push(format!("{action} {company} {code} {body}"));
                let Some(status) = books.status.get(&code).cloned() else { return Err(not_found(&code)) };
                let next = match (action.as_str(), status.as_str()) {
                    ("commit", "Saved" | "Posted") => "Committed",
                    ("void", "Cancelled") => {
                        return Err((StatusCode::BAD_REQUEST, Json(json!({"error": {"code": "TransactionAlreadyCancelled",
                            "message": "The transaction has already been cancelled.", "target": "IncorrectData", "details": []}}))))
                    }
                    ("void", _) => "Cancelled",
                    _ => return Err((StatusCode::BAD_REQUEST, Json(json!({"error": {"code": "GetTaxError",
                        "message": "DocStatus is invalid for this operation.", "target": "IncorrectData", "details": []}})))),
                };
                books.status.insert(code.clone(), next.to_owned());
                Ok(Json(transaction(&code, next, true)))
            }),
        )
        .route(
            "/api/v2/taxrates/byaddress",
            get(|| async {
                Json(json!({"totalRate": 0.0775, "rates": [
                    {"rate": 0.0025, "name": "CA COUNTY TAX", "type": "County"},
                    {"rate": 0.06, "name": "CA STATE TAX", "type": "State"},
                    {"rate": 0.005, "name": "CA SPECIAL TAX", "type": "Special"},
                    {"rate": 0.01, "name": "CA SPECIAL TAX", "type": "Special"}]}))
            }),
        )
        .with_state(books)
}

async fn avatax_console() -> (Harness, Shared) {
    let books: Shared = Arc::default();
    {
        let mut b = books.lock().unwrap();
        for (code, status) in [("INV-1001", "Committed"), ("INV-1002", "Saved"), ("INV-1003", "Cancelled")] {
            b.status.insert(code.into(), status.into());
        }
    }
    let url = opsdeck::sandbox::serve_loopback(fake_avatax(books.clone())).await.unwrap();
    let mut h = harness_with(vec![("OPSDECK_AVATAX_URL", url)]).await;
    h.keys("3");
    h.settle().await;
    (h, books)
}

#[tokio::test]
async fn companies_lead_to_their_transactions_with_money_and_status() {
    let (mut h, books) = avatax_console().await;
    let screen = h.screen();
    assert!(screen.contains("companies page 1") && screen.contains("API Trial Company"), "{screen}");
    h.keys("<Enter>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("transactions of DEFAULT"), "{screen}");
    assert!(screen.contains("1,234.50") && screen.contains("95.67"), "money format:\n{screen}");
    assert!(screen.contains("Committed") && screen.contains("Cancelled"), "{screen}");
    assert!(books.lock().unwrap().calls.contains(&"list DEFAULT".to_owned()));
    // The status column is coloured by what the status means.
    let theme = h.console.app.theme.clone();
    let buffer = h.buffer_after_draw().clone();
    let fg_of = |word: &str| {
        let lines: Vec<String> = (0..buffer.area.height)
            .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect())
            .collect();
        let (y, line) = lines.iter().enumerate().find(|(_, l)| l.contains(word)).unwrap();
        let x = line[..line.find(word).unwrap()].chars().count();
        buffer[(u16::try_from(x).unwrap(), u16::try_from(y).unwrap())].fg
    };
    assert_eq!(fg_of("Committed"), theme.success.fg.unwrap());
    assert_eq!(fg_of("Cancelled"), theme.error.fg.unwrap());
}

#[tokio::test]
async fn a_transaction_opens_with_its_lines_and_tax_by_jurisdiction() {
    let (mut h, books) = avatax_console().await;
    h.keys("<Enter>");
    h.settle().await;
    h.keys("j<Enter>");
    assert!(matches!(h.console.app.popup, Some(Popup::Detail(_))), "the view opens at once");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("transaction INV-1002"), "{screen}");
    for text in
        ["tax of line 1 by jurisdiction", "CALIFORNIA", "ORANGE CO LOCAL TAX SL", "6.00 %", "0.25 %", "7.75", "Yarn"]
    {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    let calls = books.lock().unwrap().calls.clone();
    let get = calls.iter().find(|c| c.starts_with("get DEFAULT INV-1002 ")).unwrap();
    assert!(get.contains("documentType=SalesInvoice") && get.contains("$include=Summary"), "{get}");
    // b brings the view back after it is closed.
    h.keys("<Esc>");
    assert!(h.console.app.popup.is_none());
    h.keys("b");
    assert!(matches!(h.console.app.popup, Some(Popup::Detail(_))));
}

#[tokio::test]
async fn commit_and_void_from_the_transaction_view_with_codes_prefilled() {
    let (mut h, books) = avatax_console().await;
    h.keys("<Enter>");
    h.settle().await;
    h.keys("j<Enter>");
    h.settle().await;
    h.keys("c");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("commit form:\n{}", h.screen()) };
    assert_eq!(form.op.name, "transactions_commit");
    let values = form.values();
    assert_eq!(values["companyCode"], "DEFAULT");
    assert_eq!(values["transactionCode"], "INV-1002");
    assert_eq!(values["documentType"], "SalesInvoice");
    assert_eq!(values["commit"], "true");
    h.keys("<C-s>");
    h.settle().await;
    h.settle().await;
    let (status, _) = h.console.app.status().cloned().unwrap();
    assert!(status.starts_with("avatax transactions_commit: 200"), "{status}");
    assert_eq!(books.lock().unwrap().status["INV-1002"], "Committed");
    let screen = h.screen();
    assert!(screen.contains("transaction INV-1002") && screen.contains("status Committed"), "{screen}");
    // Void asks first (it cannot be undone), then the list shows the document Cancelled.
    h.keys("v");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("void form") };
    assert_eq!(form.values()["code"], "DocVoided");
    h.keys("<C-s>");
    let screen = h.screen();
    assert!(screen.contains("This cannot be undone"), "{screen}");
    // The target line names the document, not the options of the answer.
    let target = screen.lines().find(|l| l.contains("target:")).unwrap_or_default();
    assert!(target.contains("transactionCode=INV-1002") && !target.contains("$include"), "{target}");
    h.keys("y");
    h.settle().await;
    h.settle().await;
    assert_eq!(books.lock().unwrap().status["INV-1002"], "Cancelled");
    h.keys("<Esc>");
    let screen = h.screen();
    let row = screen.lines().find(|l| l.contains("INV-1002")).unwrap();
    assert!(row.contains("Cancelled"), "the list was refreshed: {row}");
    // Voiding it again gets AvaTax's error, shown plainly; nothing changes.
    h.keys("<Enter>");
    h.settle().await;
    h.keys("v<C-s>y");
    h.settle().await;
    let (status, _) = h.console.app.status().cloned().unwrap();
    assert!(status.contains("already been cancelled"), "{status}");
}

#[tokio::test]
async fn adjust_and_refund_forms_start_from_the_document() {
    let (mut h, _) = avatax_console().await;
    h.keys("<Enter>");
    h.settle().await;
    h.keys("<Enter>");
    h.settle().await;
    h.keys("a");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("adjust form") };
    let draft: Value = serde_json::from_str(&form.values()["newTransaction"]).unwrap();
    assert_eq!(draft["code"], "INV-1001");
    assert_eq!(draft["lines"][0]["amount"], 100);
    assert!(!form.values().contains_key("adjustmentReason"), "the reason is the user's to give");
    h.keys("<Esc>b f");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("refund form:\n{}", h.screen()) };
    assert_eq!(form.op.name, "transactions_refund");
    assert_eq!(form.values()["refundType"], "Full");
    assert_eq!(form.values()["refundTransactionCode"], "INV-1001-refund");
    assert_eq!(form.values()["refundDate"].len(), 10);
}

#[tokio::test]
async fn avatax_rates_by_address_show_as_a_table() {
    let (mut h, _) = avatax_console().await;
    h.keys(":avatax tax_rates_by_address<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("line1", "123 Main Street");
    form.set_value("region", "CA");
    form.set_value("postalCode", "92615");
    form.set_value("country", "US");
    h.keys("<C-s>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("rates by jurisdiction"), "{screen}");
    for text in ["CA STATE TAX", "6.00 %", "0.25 %", "total", "7.75 %"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
}

fn fake_taxjar() -> Router {
    Router::new()
        .route(
            "/v2/taxes",
            post(|Json(body): Json<Value>| async move {
                let items = body["line_items"].as_array().cloned().unwrap_or_default();
                if items.is_empty() {
                    return Err((StatusCode::BAD_REQUEST, Json(json!({"error": "Bad Request", "detail": "line_items missing", "status": 400}))));
                }
                Ok(Json(json!({"tax": {
                    "order_total_amount": 16.5, "shipping": 1.5, "taxable_amount": 15, "amount_to_collect": 1.35,
                    "rate": 0.09, "has_nexus": true, "freight_taxable": false, "tax_source": "destination",
                    "jurisdictions": {"country": "US", "state": "CA", "county": "LOS ANGELES", "city": "LOS ANGELES"},
                    "breakdown": {
                        "taxable_amount": 15, "tax_collectable": 1.35, "combined_tax_rate": 0.09,
                        "state_taxable_amount": 15, "state_tax_rate": 0.0625, "state_tax_collectable": 0.94,
                        "county_taxable_amount": 15, "county_tax_rate": 0.0025, "county_tax_collectable": 0.04,
                        "city_taxable_amount": 0, "city_tax_rate": 0, "city_tax_collectable": 0,
                        "special_district_taxable_amount": 15, "special_tax_rate": 0.025, "special_district_tax_collectable": 0.38,
                        "line_items": items.iter().map(|i| json!({"id": i["id"], "taxable_amount": 15, "tax_collectable": 1.35,
                            "combined_tax_rate": 0.09, "state_amount": 0.94, "county_amount": 0.04, "city_amount": 0,
                            "special_district_amount": 0.38})).collect::<Vec<_>>()}}})))
            }),
        )
        .route(
            "/v2/rates/{zip}",
            get(|Path(zip): Path<String>| async move {
                Json(json!({"rate": {"zip": zip, "state": "CA", "state_rate": "0.0625", "county": "LOS ANGELES",
                    "county_rate": "0.01", "city": "SANTA MONICA", "city_rate": "0.0",
                    "combined_district_rate": "0.025", "combined_rate": "0.0975", "freight_taxable": false}}))
            }),
        )
        .route("/v2/transactions/orders", get(|| async { Json(json!({"orders": ["123", "456"]})) }))
        .route(
            "/v2/transactions/orders/{id}",
            get(|Path(id): Path<String>| async move {
                // The documented order fixture [RUBY spec/fixtures/order.json]: money as strings.
                Json(json!({"order": {"transaction_id": id, "user_id": 10649, "transaction_date": "2015-05-14T00:00:00Z",
                    "provider": "api", "exemption_type": "non_exempt", "from_country": "US", "from_zip": "93107",
                    "from_state": "CA", "from_city": "SANTA BARBARA", "from_street": "1281 State St", "to_country": "US",
                    "to_zip": "90002", "to_state": "CA", "to_city": "LOS ANGELES", "to_street": "123 Palm Grove Ln",
                    "amount": "1017.45", "shipping": "1.5", "sales_tax": "0.95",
                    "line_items": [{"id": "1", "quantity": 1, "product_identifier": "12-34243-9", "description": "Fuzzy Widget",
                        "product_tax_code": "20010", "unit_price": "15.0", "discount": "0.0", "sales_tax": "0.95"}]}}))
            }),
        )
}

async fn taxjar_console() -> Harness {
    let url = opsdeck::sandbox::serve_loopback(fake_taxjar()).await.unwrap();
    let mut h = harness_with(vec![("OPSDECK_TAXJAR_URL", url)]).await;
    h.keys("4");
    h.settle().await;
    h
}

#[tokio::test]
async fn taxjar_calculation_shows_its_breakdown_by_jurisdiction_and_line() {
    let mut h = taxjar_console().await;
    h.keys(":taxjar taxes_calculate<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("to_country", "US");
    form.set_value("to_zip", "90002");
    form.set_value("to_state", "CA");
    form.set_value("shipping", "1.5");
    form.set_value(
        "line_items",
        r#"[{"id":"1","quantity":1,"product_tax_code":"20010","unit_price":15,"discount":0}]"#,
    );
    h.keys("<C-s>");
    h.settle().await;
    let screen = h.screen();
    for text in
        ["breakdown by jurisdiction", "special district", "2.50 %", "0.38", "to collect 1.35", "line items", "9.00 %"]
    {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
}

/// An amount without line items is taxed with no breakdown, as TaxJar answers; the view says why.
#[tokio::test]
async fn taxjar_calculation_without_line_items_says_why_there_is_no_breakdown() {
    let mut h = harness_with(Vec::new()).await;
    h.keys("4");
    h.settle().await;
    h.keys(":taxjar taxes_calculate<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("to_country", "US");
    form.set_value("to_zip", "90002");
    form.set_value("to_state", "CA");
    form.set_value("amount", "15");
    form.set_value("shipping", "1.5");
    h.keys("<C-s>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("has nexus true") && screen.contains("to collect"), "{screen}");
    assert!(screen.contains("only for line items"), "{screen}");
    assert!(!screen.contains("breakdown by jurisdiction"), "{screen}");
}

#[tokio::test]
async fn taxjar_rate_of_a_location_is_a_table() {
    let mut h = taxjar_console().await;
    h.keys(":taxjar rates_get<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("zip", "90404");
    h.keys("<C-s>");
    h.settle().await;
    let screen = h.screen();
    for text in ["rates by jurisdiction", "SANTA MONICA", "6.25 %", "special districts", "9.75 %"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
}

#[tokio::test]
async fn the_calculate_form_edits_line_items_as_a_table() {
    let mut h = taxjar_console().await;
    h.keys(":taxjar taxes_calculate<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("to_country", "US");
    form.set_value("to_zip", "90002");
    form.set_value("to_state", "CA");
    form.set_value("shipping", "1.5");
    // line_items is the last field: S-Tab from the first reaches it.
    h.keys("<S-Tab>");
    assert!(h.screen().contains("Ctrl-e: edit as a table"), "{}", h.screen());
    h.keys("<C-e>");
    let screen = h.screen();
    assert!(screen.contains("quantity*") && screen.contains("product_tax_code"), "{screen}");
    // Row 1: quantity 1 (pre-set), price 15, tax code 20010; row 2 added, then deleted.
    h.keys("<Tab>15<Tab><Tab>20010<C-n><Tab>abc<Enter>");
    assert!(h.screen().contains("row 2 unit_price"), "a bad cell is named:\n{}", h.screen());
    h.keys("<C-d><Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("back in the form") };
    assert!(!form.editing_line_items());
    let items: Value = serde_json::from_str(&form.values()["line_items"]).unwrap();
    assert_eq!(items, json!([{"id": "1", "quantity": 1, "unit_price": 15, "product_tax_code": "20010"}]));
    h.keys("<C-s>");
    h.settle().await;
    assert!(h.screen().contains("breakdown by jurisdiction"), "{}", h.screen());
}

#[tokio::test]
async fn a_taxjar_order_opens_from_its_id_with_money_in_money_format() {
    let mut h = taxjar_console().await;
    let screen = h.screen();
    assert!(screen.contains("orders page 1 · 2 rows") && screen.contains("456"), "{screen}");
    h.keys("j<Enter>");
    h.settle().await;
    let screen = h.screen();
    for text in ["order 456", "amount 1,017.45", "sales tax 0.95", "Fuzzy Widget", "15.00", "LOS ANGELES"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    // `t`: a tax calculation of the same sale, pre-filled from the order, sent only on Ctrl-s.
    assert!(screen.contains("t tax calculation of this sale"), "{screen}");
    h.keys("t");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("a form:\n{}", h.screen()) };
    assert_eq!(form.op.name, "taxes_calculate");
    let values = form.values();
    for (name, value) in [("to_city", "LOS ANGELES"), ("amount", "1017.45"), ("to_country", "US")] {
        assert_eq!(values.get(name).map(String::as_str), Some(value), "{name}: {values:?}");
    }
    let items: Value = serde_json::from_str(&values["line_items"]).unwrap();
    assert_eq!(items[0]["unit_price"], json!(15.0), "{items}");
    assert!(items[0].get("sales_tax").is_none(), "a calculation is not told the tax: {items}");
}

/// The same views against the embedded TaxJar simulator rather than a fake.
#[tokio::test]
async fn taxjar_views_against_the_embedded_simulator() {
    let mut h = Harness::new().await;
    h.keys("4");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("4 TaxJar SANDBOX"), "{screen}");
    assert!(h.console.app.tab().browser.row_count() > 0, "seeded orders:\n{screen}");
    h.keys("<Enter>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("line items") && screen.contains("sales tax"), "{screen}");
    h.keys("<Esc>:taxjar taxes_calculate<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    for (name, value) in [
        ("from_country", "US"),
        ("from_zip", "92093"),
        ("from_state", "CA"),
        ("to_country", "US"),
        ("to_zip", "90002"),
        ("to_state", "CA"),
        ("shipping", "1.5"),
    ] {
        form.set_value(name, value);
    }
    h.keys("<S-Tab><C-e><Tab>15<Tab><Tab>20010<Enter><C-s>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains("breakdown by jurisdiction") && screen.contains("to collect"), "{screen}");
}

/// Commit and void on a selected transaction of the embedded AvaTax simulator, and its real
/// error for an illegal transition.
#[tokio::test]
async fn avatax_commit_and_void_against_the_embedded_simulator() {
    let mut h = Harness::new().await;
    h.keys("3");
    h.settle().await;
    assert!(h.screen().contains("3 AvaTax SANDBOX"), "{}", h.screen());
    h.keys("<Enter>");
    h.settle().await;
    // The first Saved document of the default company.
    let records = h.console.app.tab().browser.records().to_vec();
    let saved = records.iter().position(|r| r["status"] == "Saved").expect("a seeded Saved document");
    let code = records[saved]["code"].as_str().unwrap().to_owned();
    h.keys(&"j".repeat(saved));
    h.keys("<Enter>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.contains(&format!("transaction {code}")) && screen.contains("by jurisdiction"), "{screen}");
    h.keys("c<C-s>");
    h.settle().await;
    h.settle().await;
    let (status, _) = h.console.app.status().cloned().unwrap();
    assert!(status.starts_with("avatax transactions_commit: 200"), "{status}");
    assert!(h.screen().contains("status Committed"), "{}", h.screen());
    // Committing again is illegal: AvaTax's error, and the document stays committed.
    h.keys("c<C-s>");
    h.settle().await;
    let (status, _) = h.console.app.status().cloned().unwrap();
    assert!(status.contains("HTTP 400"), "{status}");
    h.keys("b");
    h.keys("v<C-s>y");
    h.settle().await;
    h.settle().await;
    let (status, _) = h.console.app.status().cloned().unwrap();
    assert!(status.starts_with("avatax transactions_void: 200"), "{status}");
    h.keys("<Esc>");
    let row = h.console.app.tab().browser.selected_record().unwrap();
    assert_eq!(
        (row["code"].as_str(), row["status"].as_str()),
        (Some(code.as_str()), Some("Cancelled")),
        "list refreshed"
    );
}

/// A path parameter comes only from a record the user selected: companies (DEFAULT) → tax codes
/// (whose system codes say `companyId: 0`) → customers lists DEFAULT's customers, never company 0.
#[tokio::test]
async fn a_list_is_called_with_the_company_the_user_chose_never_a_zero_id() {
    let mut h = Harness::new().await;
    h.keys("3");
    h.settle().await;
    h.browse("companies").await;
    let companies = h.console.app.tab().browser.records().to_vec();
    let default = companies.iter().position(|c| c["companyCode"] == "DEFAULT").expect("DEFAULT is seeded");
    let id = companies[default]["id"].to_string();
    h.console.app.focus = Focus::Browser;
    h.keys(&"j".repeat(default));
    h.browse("tax codes").await;
    assert!(h.console.app.tab().browser.row_count() > 0, "{}", h.screen());
    for resource in ["customers", "certificates"] {
        h.browse(resource).await;
        let sent = h.console.app.tab().sent.as_ref().expect("a list call").url.clone();
        assert!(sent.contains(&format!("/companies/{id}/")), "{resource}: {sent}");
        assert!(!sent.contains("/companies/0/"), "{resource}: {sent}");
        let screen = h.screen();
        assert!(screen.contains(&format!("{resource} of DEFAULT")), "{screen}");
        assert!(!screen.contains("404 Not Found"), "{screen}");
    }
}

/// With no company chosen yet, a list that needs one says where to choose it and sends nothing.
#[tokio::test]
async fn a_list_that_needs_a_company_says_to_pick_one_first_and_sends_nothing() {
    let mut h = Harness::new().await;
    h.keys("3");
    h.settle().await;
    let sent_before = h.console.app.tab().sent.clone().map(|s| s.url);
    let active = h.console.app.active;
    h.console.app.tabs[active].context.clear();
    h.browse("customers").await;
    let screen = h.screen();
    assert!(screen.contains("pick one in companies first"), "{screen}");
    assert_eq!(h.console.app.tab().sent.clone().map(|s| s.url), sent_before, "nothing sent");
    assert!(h.console.app.popup.is_none(), "no form guessed at");
}

/// A list of things with an amount (AvaTax transactions) is no time series: no chart takes half
/// the browser unasked; `C` draws one on request.
#[tokio::test]
async fn transactions_get_a_chart_only_when_asked() {
    let mut h = Harness::new().await;
    h.keys("3");
    h.settle().await;
    h.keys("<Enter>");
    h.settle().await;
    assert!(h.console.app.tab().browser.row_count() > 0, "{}", h.screen());
    assert!(h.console.app.chart().is_none(), "no chart unasked:\n{}", h.screen());
    h.keys("C");
    assert!(h.console.app.chart().is_some(), "C asks for it:\n{}", h.screen());
    h.keys("C");
    assert!(h.console.app.chart().is_none(), "C hides it again");
}
