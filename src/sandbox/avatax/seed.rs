//! The demo account: three companies with nexus, customers (some holding exemption
//! certificates), and a month of transactions in every status, all made through the same
//! model calls the API uses, so seeded documents carry real calculations and audit records.
//! The same seed gives the same data.

use std::sync::Arc;

use serde_json::{json, Value};
use time::{Duration, OffsetDateTime};

use super::input;
use super::models::{
    self, CertificateInput, CompanyInput, Customer, NexusInput, RefundInput, RefundType, State, VoidReason,
};
use super::reference;
use super::render;
use crate::sandbox::credentials::AVATAX_ACCOUNT_ID;
use crate::sandbox::rng::Rng;
use crate::sandbox::tax::Table;

/// (code, name, nexus states, ship-from ZIP).
const COMPANIES: &[(&str, &str, &[&str], &str)] = &[
    ("DEFAULT", "Opsdeck Demo Retail", &["CA", "WA", "NY", "TX", "IL", "FL"], "92615"),
    ("ACME", "Acme Outdoor Supply", &["CA", "CO", "OR", "PA"], "97201"),
    ("GLOBEX", "Globex Digital", &["WA", "NY", "MA"], "98101"),
];

const CUSTOMER_NAMES: &[&str] = &[
    "Bluebird Cafe",
    "Harbor Schools District",
    "Northwind Traders",
    "Pinecrest Hardware",
    "Riverside Clinic",
    "Summit Outfitters",
    "Tidewater Books",
    "Union Street Bakery",
];

const STREETS: &[&str] = &["Main Street", "Oak Avenue", "Harbor Boulevard", "Pine Road", "Market Street", "Lake Drive"];

/// (tax code, item, price range in dollars).
const PRODUCTS: &[(&str, &str, i64, i64)] = &[
    ("P0000000", "Camp stove", 40, 400),
    ("PC040100", "Rain jacket", 30, 250),
    ("PF052500", "Trail mix case", 10, 80),
    ("D0000000", "Map download", 5, 40),
    ("FR020100", "Shipping", 5, 30),
    ("PS081282", "Yarn", 8, 60),
];

/// Certificate reasons as CertCapture names them.
const EXEMPT_REASONS: &[&str] = &["RESALE", "GOVERNMENT", "CHARITABLE/EXEMPT ORGANIZATION"];

pub(super) fn seeded_state(seed: u64, now: OffsetDateTime, tax: Arc<Table>) -> State {
    let account: i64 = AVATAX_ACCOUNT_ID.parse().unwrap_or(0);
    let mut state = State::new(seed, account, tax);
    let mut rng = Rng::new(seed ^ 0x00A7_A7A7);
    let since = now - Duration::days(400);
    for (index, (code, name, states, origin_zip)) in COMPANIES.iter().enumerate() {
        let company = CompanyInput {
            code: (*code).to_owned(),
            name: (*name).to_owned(),
            default_country: "US".to_owned(),
            taxpayer_id_number: format!("{}", 100_000_000 + rng.below(899_999_999)),
            base_currency_code: "USD".to_owned(),
            is_default: index == 0,
            is_test: true,
        };
        let Ok(created) = state.create_companies(vec![company], since) else { continue };
        let Some(company_id) = created.first().map(|c| c.id) else { continue };
        let nexus = states
            .iter()
            .map(|s| NexusInput {
                country: "US".to_owned(),
                region: (*s).to_owned(),
                effective_date: Some(since.date() - Duration::days(3650)),
                end_date: None,
                nexus_type_id: "SalesOrSellersUseTax".to_owned(),
                has_local_nexus: true,
            })
            .collect();
        let _ = state.create_nexus(company_id, nexus, since);
        let customers = seed_customers(&mut state, &mut rng, company_id, since);
        seed_certificates(&mut state, &mut rng, company_id, &customers, since);
        seed_transactions(&mut state, &mut rng, code, origin_zip, &customers, now, if index == 0 { 32 } else { 12 });
    }
    state
}

fn seed_customers(state: &mut State, rng: &mut Rng, company_id: i64, at: OffsetDateTime) -> Vec<Customer> {
    let customers: Vec<Customer> = CUSTOMER_NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (zip, city, region, _, _) = *rng.pick(&reference::POSTAL_PLACES[4..]);
            Customer {
                customer_code: format!("CUST-{:04}", i + 1),
                name: (*name).to_owned(),
                line1: format!("{} {}", rng.range(10, 9999), rng.pick(STREETS)),
                city: models::title_case(city),
                region: region.to_owned(),
                postal_code: zip.to_owned(),
                country: "US".to_owned(),
                email_address: format!("billing{}@example.com", i + 1),
                phone_number: format!("555-01{:02}", rng.below(100)),
                is_bill: true,
                is_ship: true,
                ..Customer::default()
            }
        })
        .collect();
    state.create_customers(company_id, customers, at).unwrap_or_default()
}

fn seed_certificates(state: &mut State, rng: &mut Rng, company_id: i64, customers: &[Customer], at: OffsetDateTime) {
    let certificates: Vec<CertificateInput> = customers
        .iter()
        .skip(1)
        .step_by(3)
        .map(|c| CertificateInput {
            signed_date: at.date() - Duration::days(rng.range(30, 700)),
            expiration_date: None,
            exemption_number: format!("EX-{}", rng.alphanumeric(8).to_uppercase()),
            exemption_reason: (*rng.pick(EXEMPT_REASONS)).to_owned(),
            zone: c.region.clone(),
            customer_codes: vec![c.customer_code.clone()],
            exempt_percentage: rust_decimal::Decimal::ONE_HUNDRED,
        })
        .collect();
    let _ = state.create_certificates(company_id, certificates, at);
}

/// What happens to the n-th seeded document after it is created, so every status appears.
#[derive(Clone, Copy)]
enum Fate {
    Saved,
    Committed,
    Posted,
    Voided,
    Adjusted,
    Locked,
    Refunded,
    PartlyRefunded,
    Purchase,
}

const FATES: [Fate; 9] = [
    Fate::Committed,
    Fate::Saved,
    Fate::Voided,
    Fate::Adjusted,
    Fate::Committed,
    Fate::Posted,
    Fate::Refunded,
    Fate::Locked,
    Fate::Purchase,
];

fn money(rng: &mut Rng, lo: i64, hi: i64) -> Value {
    let cents = rng.range(lo * 100, hi * 100);
    render::money(rust_decimal::Decimal::new(cents, 2))
}

fn seed_transactions(
    state: &mut State,
    rng: &mut Rng,
    company_code: &str,
    origin_zip: &str,
    customers: &[Customer],
    now: OffsetDateTime,
    count: usize,
) {
    let Some((_, origin_city, origin_region, _, _)) = reference::postal_place(origin_zip) else { return };
    for n in 0..count {
        let customer = rng.pick(customers).clone();
        let day = now.date() - Duration::days(rng.range(0, 27));
        let code = format!("INV-{company_code}-{}", 1001 + n);
        let fate = if n == count - 1 { Fate::PartlyRefunded } else { FATES[n % FATES.len()] };
        let lines: Vec<Value> = (0..rng.range(1, 3))
            .map(|i| {
                let (tax_code, item, lo, hi) = *rng.pick(PRODUCTS);
                json!({"number": (i + 1).to_string(), "quantity": rng.range(1, 4), "amount": money(rng, lo, hi),
                       "taxCode": tax_code, "itemCode": format!("SKU-{}", 100 + rng.below(900)), "description": item})
            })
            .collect();
        let doc_type = if matches!(fate, Fate::Purchase) { "PurchaseInvoice" } else { "SalesInvoice" };
        let request = json!({
            "type": doc_type,
            "code": code,
            "companyCode": company_code,
            "date": render::date(day),
            "customerCode": customer.customer_code,
            "purchaseOrderNo": format!("PO-{}", rng.range(10_000, 99_999)),
            "addresses": {
                "shipFrom": {"line1": "100 Warehouse Way", "city": models::title_case(origin_city), "region": origin_region,
                             "country": "US", "postalCode": origin_zip},
                "shipTo": {"line1": customer.line1, "city": customer.city, "region": customer.region,
                           "country": "US", "postalCode": customer.postal_code},
            },
            "lines": lines,
            "commit": !matches!(fate, Fate::Saved | Fate::Posted),
            "currencyCode": "USD",
            "description": format!("Order for {}", customer.name),
        });
        let created_at = OffsetDateTime::new_utc(
            day,
            time::Time::from_hms(rng.range(8, 18) as u8, 0, 0).unwrap_or(time::Time::MIDNIGHT),
        );
        let Ok(parsed) = input::transaction(&request, "") else { continue };
        let Ok(created) = state.create_transaction(parsed, request.clone(), created_at) else { continue };
        let later = created_at + Duration::hours(rng.range(1, 48));
        match fate {
            Fate::Saved | Fate::Committed | Fate::Purchase => {}
            Fate::Posted => {
                let _ = state.verify(company_code, &code, None, later);
            }
            Fate::Voided => {
                let _ = state.void(company_code, &code, None, VoidReason::DocVoided, later);
            }
            Fate::Locked => {
                let _ = state.lock(created.company_id, &code);
            }
            Fate::Adjusted => {
                let mut changed = request.clone();
                if let Some(first) = changed.pointer_mut("/lines/0/amount") {
                    *first = money(rng, 20, 90);
                }
                if let Ok(parsed) = input::transaction(&changed, "") {
                    let adjust = json!({"adjustmentReason": "PriceAdjusted", "adjustmentDescription": "Price matched",
                                        "newTransaction": changed});
                    // A seed that does not apply is left out, as the create above is.
                    let _ = state.adjust(
                        company_code,
                        &code,
                        None,
                        "PriceAdjusted",
                        "Price matched",
                        parsed,
                        adjust,
                        later,
                    );
                }
            }
            Fate::Refunded | Fate::PartlyRefunded => {
                let partial = matches!(fate, Fate::PartlyRefunded);
                let refund = RefundInput {
                    code: format!("{code}-R"),
                    date: (later.date()).min(now.date()),
                    kind: if partial { RefundType::Partial } else { RefundType::Full },
                    percentage: None,
                    lines: if partial { vec!["1".to_owned()] } else { Vec::new() },
                    reference_code: "Returned by the customer".to_owned(),
                    use_tax_date_override: false,
                };
                let body = json!({"refundTransactionCode": refund.code, "refundDate": render::date(refund.date),
                                  "refundType": if partial { "Partial" } else { "Full" }, "refundLines": refund.lines,
                                  "referenceCode": refund.reference_code});
                let _ = state.refund(company_code, &code, None, refund, body, later);
            }
        }
    }
}
