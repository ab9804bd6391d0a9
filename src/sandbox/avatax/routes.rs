//! The handlers: read the call, ask the models, write the answer. Each runs under the state
//! lock, so a call sees and leaves a consistent state.

use serde_json::{json, Value};

use super::calc::{self, Place};
use super::documents::{Documents, Indexed};
use super::errors::AvaError;
use super::input::{self, Fields};
use super::models::{self, DocStatus, DocType, State, VoidReason};
use super::odata::{self, ListQuery};
use super::reference;
use super::render::{self, Change, Include};
use super::{Call, Op, Reply, Shared};
use crate::sandbox::credentials::AVATAX_ACCOUNT_ID;
use crate::sandbox::tax::Table;

pub(super) fn handle(shared: &Shared, op: Op, call: &Call) -> Result<Reply, AvaError> {
    let mut state = shared.lock();
    let state = &mut *state;
    match op {
        Op::Ping => ping(state, call),
        Op::SubscriptionsList => subscriptions_list(state, call),
        Op::CompaniesList => companies_list(state, call),
        Op::CompaniesCreate => companies_create(state, call),
        Op::CompaniesGet => companies_get(state, call),
        Op::CustomersList => customers_list(state, call),
        Op::CustomersCreate => customers_create(state, call),
        Op::CertificatesList => certificates_list(state, call),
        Op::CertificatesCreate => certificates_create(state, call),
        Op::NexusList => nexus_list(state, call),
        Op::NexusCreate => nexus_create(state, call),
        Op::TransactionsCreate => transactions_create(state, call),
        Op::TransactionsCreateOrAdjust => transactions_create_or_adjust(state, call),
        Op::TransactionsList => transactions_list(state, call),
        Op::TransactionsGet => transactions_get(state, call, None),
        Op::TransactionsGetByType => transactions_get(state, call, Some(call.segment(5))),
        Op::TransactionsGetById => transactions_get_by_id(state, call),
        Op::TransactionsAdjust => transactions_adjust(state, call),
        Op::TransactionsCommit => transactions_commit(state, call),
        Op::TransactionsUncommit => {
            let t = state.uncommit(call.segment(1), call.segment(3), document_type(call)?, call.now)?;
            Reply::ok(render::transaction(&t, include(call, Include::FULL)))
        }
        Op::TransactionsVerify => {
            let t = state.verify(call.segment(1), call.segment(3), document_type(call)?, call.now)?;
            Reply::ok(render::transaction(&t, include(call, Include::FULL)))
        }
        Op::TransactionsVoid => transactions_void(state, call),
        Op::TransactionsRefund => transactions_refund(state, call),
        Op::TransactionsAudit => transactions_audit(state, call),
        Op::TransactionsAuditByType => transactions_audit(state, call),
        Op::AddressesResolve => addresses_resolve(&state.tax, call),
        Op::TaxRatesByAddress => tax_rates_by_address(&state.tax, call),
        Op::TaxRatesByPostalCode => tax_rates_by_postal_code(&state.tax, call),
        Op::TaxCodesList => tax_codes_list(call),
        Op::NotFound => Err(AvaError::no_such_path(call.method.as_str(), &call.path)),
    }
}

fn include(call: &Call, default: Include) -> Include {
    Include::parse(call.query("$include"), default)
}

fn document_type(call: &Call) -> Result<Option<DocType>, AvaError> {
    match call.query("documentType").map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(text) => {
            DocType::parse(text).map(Some).ok_or_else(|| AvaError::invalid_enum("documentType", text, DocType::NAMES))
        }
    }
}

fn list_query(call: &Call) -> ListQuery {
    ListQuery { filter: call.query("$filter").map(str::to_owned), order_by: call.query("$orderBy").map(str::to_owned) }
}

/// The FetchResult of a list call.
fn fetch(call: &Call, records: Vec<Value>, template: &Value) -> Result<Reply, AvaError> {
    fetch_rendered(call, records, |record| record, &|_| None, template)
}

/// The FetchResult of a list whose records are rendered as they are needed: only a page's
/// worth when nothing is filtered or sorted, and none for a filter or a sort on the fields
/// `reader` reads.
fn fetch_rendered<'r, R: Clone>(
    call: &Call,
    records: Vec<R>,
    render: impl Fn(R) -> Value,
    reader: &dyn Fn(&str) -> Option<odata::FieldReader<'r, R>>,
    template: &Value,
) -> Result<Reply, AvaError> {
    let list = list_query(call);
    Reply::ok(odata::fetch_result(&call.path, records, render, reader, template, &list, &call.raw_query)?)
}

/// The numeric company id of a company-scoped path.
fn company_id(state: &State, call: &Call) -> Result<i64, AvaError> {
    let raw = call.segment(1);
    let id: i64 = raw.trim().parse().map_err(|_| {
        AvaError::invalid_value("companyId", format!("'{raw}' is not a company id; company ids are whole numbers."))
            .target("HttpRequest")
    })?;
    Ok(state.company(id)?.id)
}

fn ping(state: &State, call: &Call) -> Result<Reply, AvaError> {
    if !call.authenticated {
        return Reply::ok(json!({"version": "24.12.0", "authenticated": false, "authenticationType": "None"}));
    }
    let account: i64 = AVATAX_ACCOUNT_ID.parse().unwrap_or(0);
    let company = state.companies.iter().find(|c| c.is_default).map(|c| c.id);
    Reply::ok(json!({
        "version": "24.12.0",
        "authenticated": true,
        "authenticationType": "AccountIdLicenseKey",
        "authenticatedUserName": AVATAX_ACCOUNT_ID,
        "authenticatedUserId": 0,
        "authenticatedAccountId": account,
        "authenticatedCompanyId": company,
        "crmid": "",
    }))
}

/// The services the sandbox account subscribes to: those the simulator serves (US sales tax,
/// VAT and other international taxes, address resolution, exemption certificates), in effect
/// since the default company was created.
const SUBSCRIPTIONS: [(i64, &str); 5] =
    [(1, "AvaTaxST"), (2, "AvaTaxPro"), (3, "AvaTaxGlobal"), (4, "AutoAddress"), (10, "AvaCert")];

fn subscriptions_list(state: &State, call: &Call) -> Result<Reply, AvaError> {
    let account: i64 = AVATAX_ACCOUNT_ID.parse().unwrap_or(0);
    let since = state.companies.iter().find(|c| c.is_default).map_or(call.now, |c| c.created);
    let rows: Vec<Value> = SUBSCRIPTIONS
        .iter()
        .zip(8_224_630_i64..)
        .map(|((type_id, name), id)| {
            json!({
                "id": id, "accountId": account, "subscriptionTypeId": type_id, "subscriptionDescription": name,
                "effectiveDate": render::date(since.date()), "createdUserId": 0,
                "createdDate": render::timestamp(since), "modifiedDate": render::timestamp(since), "modifiedUserId": 0,
            })
        })
        .collect();
    let template = rows.first().cloned().unwrap_or(Value::Null);
    fetch_rendered(call, rows, |row| row, &|_| None, &template)
}

fn wants(call: &Call, what: &str) -> bool {
    call.query("$include").is_some_and(|i| i.split(',').any(|w| w.trim().eq_ignore_ascii_case(what)))
}

fn company_value(state: &State, call: &Call, company: &models::Company) -> Value {
    if wants(call, "Nexus") {
        let nexus = state.nexus.iter().filter(|n| n.company_id == company.id).map(render::nexus).collect();
        render::company_with_nexus(company, nexus)
    } else {
        render::company(company)
    }
}

fn companies_list(state: &State, call: &Call) -> Result<Reply, AvaError> {
    let records: Vec<Value> = state.companies.iter().map(|c| company_value(state, call, c)).collect();
    let template = state.companies.first().map(render::company).unwrap_or(Value::Null);
    fetch(call, records, &template)
}

fn companies_get(state: &State, call: &Call) -> Result<Reply, AvaError> {
    let id = company_id(state, call)?;
    let company = state.company(id)?;
    Reply::ok(company_value(state, call, company))
}

fn items<T>(call: &Call, what: &str, parse: impl Fn(&Value, &str) -> Result<T, AvaError>) -> Result<Vec<T>, AvaError> {
    let body = call.json()?;
    input::array_body(&body, what)?.iter().enumerate().map(|(i, v)| parse(v, &format!("[{i}]"))).collect()
}

fn companies_create(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let inputs = items(call, "companies", input::company)?;
    let created = state.create_companies(inputs, call.now)?;
    Reply::created(Value::Array(created.iter().map(render::company).collect()))
}

fn customer_value(state: &State, call: &Call, c: &models::Customer) -> Value {
    let certificates = wants(call, "certificates").then(|| {
        state
            .certificates
            .iter()
            .filter(|x| x.company_id == c.company_id && x.customer_codes.contains(&c.customer_code))
            .map(|x| render::certificate(x, None))
            .collect()
    });
    render::customer(c, certificates)
}

fn customers_list(state: &State, call: &Call) -> Result<Reply, AvaError> {
    let id = company_id(state, call)?;
    let records =
        state.customers.iter().filter(|c| c.company_id == id).map(|c| customer_value(state, call, c)).collect();
    let template = render::customer(&models::Customer::default(), None);
    fetch(call, records, &template)
}

fn customers_create(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let id = company_id(state, call)?;
    let inputs = items(call, "customers", input::customer)?;
    let created = state.create_customers(id, inputs, call.now)?;
    Reply::created(Value::Array(created.iter().map(|c| render::customer(c, None)).collect()))
}

fn certificate_value(state: &State, call: &Call, c: &models::Certificate) -> Value {
    let customers = wants(call, "customers").then(|| {
        state
            .customers
            .iter()
            .filter(|x| x.company_id == c.company_id && c.customer_codes.contains(&x.customer_code))
            .map(|x| render::customer(x, None))
            .collect()
    });
    render::certificate(c, customers)
}

fn certificates_list(state: &State, call: &Call) -> Result<Reply, AvaError> {
    let id = company_id(state, call)?;
    let records =
        state.certificates.iter().filter(|c| c.company_id == id).map(|c| certificate_value(state, call, c)).collect();
    let template = state.certificates.first().map(|c| render::certificate(c, None)).unwrap_or(Value::Null);
    fetch(call, records, &template)
}

fn certificates_create(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let id = company_id(state, call)?;
    let inputs = items(call, "certificates", input::certificate)?;
    let created = state.create_certificates(id, inputs, call.now)?;
    Reply::created(Value::Array(created.iter().map(|c| render::certificate(c, None)).collect()))
}

fn nexus_list(state: &State, call: &Call) -> Result<Reply, AvaError> {
    let id = company_id(state, call)?;
    let records = state.nexus.iter().filter(|n| n.company_id == id).map(render::nexus).collect();
    let template = state.nexus.first().map(render::nexus).unwrap_or(Value::Null);
    fetch(call, records, &template)
}

fn nexus_create(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let id = company_id(state, call)?;
    let inputs = items(call, "nexus declarations", input::nexus)?;
    let created = state.create_nexus(id, inputs, call.now)?;
    Reply::created(Value::Array(created.iter().map(render::nexus).collect()))
}

fn transactions_create(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let body = call.json()?;
    let parsed = input::transaction(&body, "")?;
    let transaction = state.create_transaction(parsed, body, call.now)?;
    let response = render::transaction(&transaction, include(call, Include::FULL));
    Reply::created(response)
}

/// `POST /transactions/createoradjust` (not in the spec; every recorded integration uses it):
/// `{"createTransactionModel": {...}}` creates the document (201), or adjusts the one of the same
/// company, code and type that a create would refuse (a committed one: 200, the next version,
/// `Other` "Create or adjust transaction", as recorded answers show).
fn transactions_create_or_adjust(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let body = call.json()?;
    let model = Fields::of(&body, "")?
        .get("createTransactionModel")
        .ok_or_else(|| AvaError::required("createTransactionModel"))?
        .clone();
    let parsed = input::transaction(&model, "createTransactionModel")?;
    let existing = parsed.doc_type.is_recorded() && !parsed.code.trim().is_empty();
    let committed = existing
        && state
            .transaction(&parsed.company_code, &parsed.code, Some(parsed.doc_type))
            .is_ok_and(|t| !matches!(t.status, DocStatus::Saved | DocStatus::Posted));
    if committed {
        let (company, code, doc_type) = (parsed.company_code.clone(), parsed.code.clone(), parsed.doc_type);
        let t = state.adjust(
            &company,
            &code,
            Some(doc_type),
            "Other",
            "Create or adjust transaction",
            parsed,
            body,
            call.now,
        )?;
        return Reply::ok(render::changed_transaction(&t, include(call, Include::FULL), Change::Adjusted));
    }
    let transaction = state.create_transaction(parsed, model, call.now)?;
    Reply::created(render::transaction(&transaction, include(call, Include::FULL)))
}

fn transactions_list(state: &State, call: &Call) -> Result<Reply, AvaError> {
    let company = state.company_by_code(call.segment(1))?;
    let data_source = match call.query("dataSourceId").map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(raw) => Some(
            raw.parse::<i64>()
                .map_err(|_| AvaError::invalid_value("dataSourceId", format!("'{raw}' is not a whole number.")))?,
        ),
    };
    let filter_text = call.query("$filter").unwrap_or("");
    let filter = odata::parse_filter(filter_text)?;
    // Without a date criterion the service searches the last 30 days only.
    let mentions_date = filter.as_ref().is_some_and(|f| odata::mentions(f, "date"));
    // A filter that names one code or customer code needs only the versions with it, which the
    // store indexes.
    let indexed = filter.as_ref().and_then(|f| {
        Indexed::ALL.into_iter().find_map(|field| odata::required_text(f, field.field()).map(|text| (field, text)))
    });
    let since = call.now.date() - time::Duration::days(30);
    let shape = include(call, Include::HEADER);
    let documents = &state.transactions;
    // Documents recorded through the API carry no data source id.
    let records = match (data_source, indexed) {
        (Some(_), _) => Vec::new(),
        (None, Some((field, text))) => {
            let in_window = |at: &usize| mentions_date || documents.row(*at).date >= since;
            documents.with_text(field, company.id, &text).filter(in_window).collect()
        }
        (None, None) => documents.of_company(company.id, (!mentions_date).then_some(since)),
    };
    let template = documents.first().map(|t| render::transaction(t, Include::FULL)).unwrap_or(Value::Null);
    let reader = |name: &str| document_reader(documents, name);
    fetch_rendered(call, records, |i| render::transaction(&documents[i], shape), &reader, &template)
}

/// How a filter or sort reads a field of the document at a position: the date and total from
/// the store's rows beside each other, any other header field from the document itself, so no
/// document is written out but the page's. Stored documents are never quotes, so every header
/// field is theirs to read.
pub(super) fn document_reader<'a>(
    documents: &'a Documents<models::Transaction>,
    name: &str,
) -> Option<odata::FieldReader<'a, usize>> {
    if name.eq_ignore_ascii_case("totalAmount") {
        return Some(Box::new(|i: &usize| render::money(documents.row(*i).total_amount)));
    }
    if name.eq_ignore_ascii_case("date") {
        return Some(Box::new(|i: &usize| Value::String(render::date(documents.row(*i).date))));
    }
    render::transaction_field(name).map(|read| Box::new(move |i: &usize| read(&documents[*i])) as _)
}

fn transactions_get(state: &State, call: &Call, type_segment: Option<&str>) -> Result<Reply, AvaError> {
    let doc_type = match type_segment {
        Some(text) => {
            Some(DocType::parse(text).ok_or_else(|| AvaError::invalid_enum("documentType", text, DocType::NAMES))?)
        }
        None => document_type(call)?,
    };
    let t = state.transaction(call.segment(1), call.segment(3), doc_type)?;
    Reply::ok(render::transaction(t, include(call, Include::FULL)))
}

fn transactions_get_by_id(state: &State, call: &Call) -> Result<Reply, AvaError> {
    let raw = call.segment(1);
    let id: i64 =
        raw.parse().map_err(|_| AvaError::invalid_value("id", format!("'{raw}' is not a transaction id.")))?;
    let t = state.transactions.position(id).map(|i| &state.transactions[i]).ok_or_else(|| {
        AvaError::not_found("Document", raw).describe(format!("The Document with id '{raw}' was not found."))
    })?;
    Reply::ok(render::transaction(t, include(call, Include::FULL)))
}

fn transactions_adjust(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let body = call.json()?;
    let fields = Fields::of(&body, "")?;
    let reason = fields.required_text("adjustmentReason")?;
    let description = fields.text("adjustmentDescription")?;
    let new_body = fields.get("newTransaction").ok_or_else(|| AvaError::required("newTransaction"))?;
    let parsed = input::transaction(new_body, "newTransaction")?;
    let t = state.adjust(
        call.segment(1),
        call.segment(3),
        document_type(call)?,
        &reason,
        &description,
        parsed,
        body.clone(),
        call.now,
    )?;
    Reply::ok(render::changed_transaction(&t, include(call, Include::FULL), Change::Adjusted))
}

fn transactions_commit(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let body = call.json()?;
    let commit = Fields::of(&body, "")?.flag("commit")?.ok_or_else(|| AvaError::required("commit"))?;
    let t = state.commit(call.segment(1), call.segment(3), document_type(call)?, commit, call.now)?;
    Reply::ok(render::transaction(&t, include(call, Include::FULL)))
}

fn transactions_void(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let body = call.json()?;
    let code = Fields::of(&body, "")?.required_text("code")?;
    let reason = VoidReason::parse(&code).ok_or_else(|| AvaError::invalid_enum("code", &code, &VoidReason::NAMES))?;
    let t = state.void(call.segment(1), call.segment(3), document_type(call)?, reason, call.now)?;
    Reply::ok(render::changed_transaction(&t, include(call, Include::FULL), Change::Voided))
}

fn transactions_refund(state: &mut State, call: &Call) -> Result<Reply, AvaError> {
    let body = call.json()?;
    let use_tax_date = match call.query("useTaxDateOverride").map(str::trim) {
        None | Some("") => false,
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(v) => return Err(AvaError::invalid_value("useTaxDateOverride", format!("'{v}' is not true or false."))),
    };
    let refund = input::refund(&body, use_tax_date)?;
    let t = state.refund(call.segment(1), call.segment(3), document_type(call)?, refund, body, call.now)?;
    // The refund is a new document: 201 Created, as recorded traffic shows.
    Reply::created(render::transaction(&t, include(call, Include::FULL)))
}

fn transactions_audit(state: &State, call: &Call) -> Result<Reply, AvaError> {
    let (t, audit) = match call.segments.get(5) {
        Some(text) if call.segment(4) == "types" => {
            let doc_type =
                DocType::parse(text).ok_or_else(|| AvaError::invalid_enum("documentType", text, DocType::NAMES))?;
            let t = state.transaction(call.segment(1), call.segment(3), Some(doc_type))?;
            state.audit(call.segment(1), &t.code)?
        }
        _ => state.audit(call.segment(1), call.segment(3))?,
    };
    Reply::ok(json!({
        "companyId": t.company_id,
        "serverTimestamp": render::timestamp(audit.timestamp),
        "serverDuration": "00:00:00.0010000",
        "apiCallStatus": "OriginalApiCallAvailable",
        "original": {"request": audit.request(), "response": render::transaction(&audit.as_answered(t), Include::FULL)},
        "reconstructed": {"request": render::reconstructed_request(t)},
    }))
}

/// Where a named field of an address is kept.
type AddressField = fn(&mut models::Address) -> &mut String;

/// The fields of an address an address call names.
const ADDRESS_FIELDS: [(&str, AddressField); 7] = [
    ("line1", |a| &mut a.line1),
    ("line2", |a| &mut a.line2),
    ("line3", |a| &mut a.line3),
    ("city", |a| &mut a.city),
    ("region", |a| &mut a.region),
    ("country", |a| &mut a.country),
    ("postalCode", |a| &mut a.postal_code),
];

/// The address fields of a resolve or rates call (query parameters, or a JSON body on POST),
/// and the fields as given, which the resolver echoes: only those sent, as AvaTax echoes them.
fn address_fields(call: &Call) -> Result<(models::Address, Value), AvaError> {
    let mut address = models::Address::default();
    let mut echo = serde_json::Map::new();
    if call.method == axum::http::Method::POST {
        let body = call.json()?;
        let f = Fields::of(&body, "")?;
        for (name, field) in ADDRESS_FIELDS {
            if f.get(name).is_some() {
                let value = f.text(name)?;
                echo.insert(name.to_owned(), json!(value));
                *field(&mut address) = value;
            }
        }
    } else {
        for (name, field) in ADDRESS_FIELDS {
            if let Some(value) = call.query(name) {
                echo.insert(name.to_owned(), json!(value));
                value.clone_into(field(&mut address));
            }
        }
    }
    Ok((address, Value::Object(echo)))
}

/// USPS-style street abbreviations for the resolved line.
fn standardize_line(line: &str) -> String {
    const ABBREVIATIONS: &[(&str, &str)] = &[
        ("STREET", "ST"),
        ("AVENUE", "AVE"),
        ("BOULEVARD", "BLVD"),
        ("ROAD", "RD"),
        ("DRIVE", "DR"),
        ("LANE", "LN"),
        ("CIRCLE", "CIR"),
        ("COURT", "CT"),
        ("PLACE", "PL"),
        ("SUITE", "STE"),
        ("NORTHEAST", "NE"),
        ("NORTHWEST", "NW"),
        ("SOUTHEAST", "SE"),
        ("SOUTHWEST", "SW"),
    ];
    line.split_whitespace()
        .map(|w| {
            let upper = w.trim_end_matches('.').to_uppercase();
            ABBREVIATIONS.iter().find(|(long, _)| *long == upper).map_or(upper, |(_, short)| (*short).to_owned())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn addresses_resolve(table: &Table, call: &Call) -> Result<Reply, AvaError> {
    let (given, echo) = address_fields(call)?;
    let text_case = call.query("textCase").unwrap_or("Default").trim().to_owned();
    let mixed = match text_case.to_ascii_lowercase().as_str() {
        "" | "default" | "upper" => false,
        "mixed" => true,
        _ => {
            return Err(AvaError::new(400, "InvalidAddressTextCase", 312, format!("'{text_case}' is not a text case."))
                .describe("Use Default, Upper or Mixed.")
                .refers_to("textCase"))
        }
    };
    let country = crate::sandbox::tax::canonical_country(if given.country.trim().is_empty() {
        "US"
    } else {
        given.country.as_str()
    });
    if country != "US" && country != "CA" {
        return Err(AvaError::new(400, "InvalidCountry", 125, format!("Addresses in '{country}' cannot be resolved."))
            .describe("Address resolution covers the United States and Canada.")
            .refers_to("country"));
    }
    let has = |s: &str| !s.trim().is_empty();
    // AvaTax's own rule, word for word in its refusal: a postal code, or line1 + city + region.
    let complete = has(&given.postal_code) || (has(&given.line1) && has(&given.city) && has(&given.region));
    if !complete {
        return Err(AvaError::new(400, "InvalidAddress", 309, "The address value was incomplete.").describe(
            "The address value NULL was incomplete. You must provide either a valid postal code, \
             line1 + city + region, or line1 + postal code.",
        ));
    }
    let message = |summary: &str, details: &str, refers_to: &str, source: &str| json!({"summary": summary, "details": details, "refersTo": refers_to, "severity": "Error", "source": source});
    if country == "CA" {
        return Reply::ok(json!({
            "address": echo,
            "validatedAddresses": [],
            "resolutionQuality": "NotCoded",
            "messages": [message("The address could not be located.", "The simulator has no Canadian street data.",
                                 "Address", "Avalara.AvaTax.Services.Address")],
        }));
    }
    let as_given = json!({
        "addressType": "UnknownAddressType", "line1": given.line1, "line2": given.line2, "line3": given.line3,
        "city": given.city, "region": given.region, "country": "US", "postalCode": given.postal_code,
    });
    let postal = given.postal_code.trim();
    let state = table.zip_state(postal);
    if has(postal) && state.is_none() {
        // A postal code no state has: AvaTax answers 200 and says it could not place the address.
        return Reply::ok(json!({
            "address": echo,
            "validatedAddresses": [as_given],
            "resolutionQuality": "External",
            "messages": [
                message("Address not geocoded.", "Address cannot be geocoded.", "Address", "Avalara.AvaTax.Common"),
                message("The city could not be determined.", "The city could not be found or determined from postal code.",
                        "Address.City", "Avalara.AvaTax.Common"),
            ],
        }));
    }
    // A ZIP decides the state (a ZIP of New York given with AL is placed in NY, as AvaTax does);
    // without one, a city the resolver knows in the given state.
    let place = if has(postal) {
        reference::postal_place(postal)
    } else {
        let region = given.region.trim().to_ascii_uppercase();
        reference::POSTAL_PLACES.iter().copied().find(|p| p.1.eq_ignore_ascii_case(given.city.trim()) && p.2 == region)
    };
    let (zip, city, region) = match (place, state) {
        (Some((zip, city, region, _, _)), _) => (zip.to_owned(), city.to_owned(), region.to_owned()),
        (None, Some(region)) => {
            let zip = crate::sandbox::tax::zip5(postal).unwrap_or(postal).to_owned();
            (zip, given.city.trim().to_uppercase(), region)
        }
        (None, None) => {
            return Reply::ok(json!({
                "address": echo,
                "validatedAddresses": [as_given],
                "resolutionQuality": "NotCoded",
                "messages": [message("The address is not deliverable.",
                                     "The address could not be found in the simulator's postal data.",
                                     "Address", "Avalara.AvaTax.Services.Address")],
            }));
        }
    };
    let rates = calc::rates_for(
        table,
        &Place { country: "US".to_owned(), region: region.clone(), postal_code: zip.clone(), city: city.clone() },
    )?;
    let authorities: Vec<Value> = rates
        .jurisdictions
        .iter()
        .map(|j| {
            json!({"avalaraId": j.id.to_string(), "jurisdictionName": j.name, "jurisdictionType": j.level.name(),
                   "signatureCode": j.signature})
        })
        .collect();
    let coordinates = place.map(|(_, _, _, latitude, longitude)| (latitude, longitude));
    let case = |s: &str| if mixed { models::title_case(s) } else { s.to_uppercase() };
    let mut validated = json!({
        "addressType": if has(&given.line1) { "StreetOrResidentialAddress" } else { "UnknownAddressType" },
        "line1": case(&standardize_line(&given.line1)),
        "line2": case(&given.line2),
        "line3": case(&given.line3),
        "city": case(&city),
        "region": region,
        "country": "US",
        "postalCode": if has(postal) { postal.to_owned() } else { zip },
    });
    let mut body = json!({
        "address": echo,
        "resolutionQuality": if has(&given.line1) { "Intersection" } else { "PostalCentroidGood" },
        "taxAuthorities": authorities,
    });
    match coordinates {
        Some((latitude, longitude)) => {
            render::insert(&mut validated, "latitude", json!(latitude));
            render::insert(&mut validated, "longitude", json!(longitude));
            render::insert(&mut body, "coordinates", json!({"latitude": latitude, "longitude": longitude}));
        }
        // The real resolver places every ZIP; the simulator knows the coordinates of a few, and
        // says so rather than invent them.
        None => render::insert(
            &mut body,
            "messages",
            json!([{"summary": "The simulator has no coordinates for this postal code.",
                    "details": "Its tax authorities are known; its latitude and longitude are not.",
                    "refersTo": "Address", "severity": "Warning", "source": "opsdeck sandbox"}]),
        ),
    }
    render::insert(&mut body, "validatedAddresses", json!([validated]));
    Reply::ok(body)
}

fn rates_body(rates: &calc::Rates) -> Value {
    let list: Vec<Value> = rates
        .jurisdictions
        .iter()
        .map(|j| json!({"rate": render::money(j.rate), "name": j.tax_name, "type": j.level.name()}))
        .collect();
    let mut body = json!({"totalRate": render::money(rates.total()), "rates": list});
    if rates.fallback {
        render::insert(
            &mut body,
            "messages",
            json!([{"summary": "Only the state rate is known for this postal code.", "refersTo": "postalCode",
                    "severity": "Warning", "source": "opsdeck sandbox"}]),
        );
    }
    body
}

fn tax_rates_by_address(table: &Table, call: &Call) -> Result<Reply, AvaError> {
    let (given, _) = address_fields(call)?;
    for (name, value) in [
        ("line1", &given.line1),
        ("region", &given.region),
        ("postalCode", &given.postal_code),
        ("country", &given.country),
    ] {
        if value.trim().is_empty() {
            return Err(AvaError::required(name));
        }
    }
    let address = models::complete_address(table, given, "address")?;
    let rates = calc::rates_for(
        table,
        &Place {
            country: address.country,
            region: address.region,
            postal_code: address.postal_code,
            city: address.city,
        },
    )?;
    Reply::ok(rates_body(&rates))
}

fn tax_rates_by_postal_code(table: &Table, call: &Call) -> Result<Reply, AvaError> {
    let country = call.query("country").unwrap_or("").trim().to_ascii_uppercase();
    let postal = call.query("postalCode").unwrap_or("").trim().to_owned();
    if country.is_empty() {
        return Err(AvaError::required("country"));
    }
    if postal.is_empty() {
        return Err(AvaError::required("postalCode"));
    }
    if country != "US" {
        return Err(AvaError::new(
            400,
            "InvalidCountry",
            125,
            format!("Rates by postal code are for US postal codes; '{country}' was given."),
        )
        .refers_to("country"));
    }
    if !models::us_postal_code_ok(&postal) {
        return Err(AvaError::new(400, "InvalidPostalCode", 317, format!("'{postal}' is not a valid US postal code."))
            .describe("A US postal code is 5 digits, or ZIP+4 written 12345-6789.")
            .refers_to("postalCode"));
    }
    // The state comes from the ZIP; rates_for falls back to the state rate for unlisted ZIPs.
    let rates =
        calc::rates_for(table, &Place { country, region: String::new(), postal_code: postal, city: String::new() })?;
    Reply::ok(rates_body(&rates))
}

fn tax_codes_list(call: &Call) -> Result<Reply, AvaError> {
    let records: Vec<Value> = reference::TAX_CODES.iter().map(render::tax_code).collect();
    let template = records.first().cloned().unwrap_or(Value::Null);
    fetch(call, records, &template)
}
