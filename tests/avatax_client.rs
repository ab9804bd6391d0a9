//! Every AvaTax operation through opsdeck's client against the in-process simulator: the
//! transaction life cycle with its legal and illegal transitions, OData lists, error shapes and
//! bad input that changes nothing.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use opsdeck::catalog::Service;
use opsdeck::client::{self, CallError, Credentials, Response, Secret, Target};
use serde_json::{json, Value};

mod common;

/// The Ava simulator and a client for it; `Deref` gives its sandbox, http and target.
struct Ava(common::Simulated);

impl std::ops::Deref for Ava {
    type Target = common::Simulated;
    fn deref(&self) -> &common::Simulated {
        &self.0
    }
}

impl Ava {
    async fn start() -> Ava {
        Ava(common::Simulated::start(Service::Avatax).await)
    }

    async fn call_as(&self, target: &Target, op: &str, params: &[(&str, &str)]) -> Result<Response, CallError> {
        self.0.send(target, op, params, None).await
    }

    async fn call(&self, op: &str, params: &[(&str, &str)]) -> Result<Response, CallError> {
        self.call_as(&self.target, op, params).await
    }

    async fn json(&self, op: &str, params: &[(&str, &str)]) -> Value {
        let response = self.call(op, params).await.unwrap_or_else(|e| panic!("{op}: {e}"));
        serde_json::from_slice(&response.body).expect("JSON body")
    }

    async fn json_owned(&self, op: &str, params: &[(&str, String)]) -> Value {
        let refs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.json(op, &refs).await
    }

    async fn error(&self, op: &str, params: &[(&str, &str)]) -> client::ApiError {
        api_error(self.call(op, params).await)
    }

    /// A raw request, for what opsdeck's client would refuse to send.
    async fn raw(&self, method: reqwest::Method, path: &str, body: Option<&str>, auth: bool) -> (u16, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.sandbox.base_url(Service::Avatax)));
        if auth {
            request = request.basic_auth("1100000001", Some("SANDBOXLICENSEKEY"));
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_owned());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        assert!(response.headers().contains_key("x-correlation-id"), "every response has x-correlation-id");
        (status, serde_json::from_slice(&response.bytes().await.unwrap()).unwrap_or(Value::Null))
    }

    async fn company_id(&self, code: &str) -> String {
        let list = self.json("companies_list", &[("$filter", &format!("companyCode eq '{code}'"))]).await;
        list["value"][0]["id"].as_i64().unwrap().to_string()
    }

    /// A sale in Irvine (the api/ worked example: 7.75 %).
    async fn create(&self, code: &str, doc_type: &str, amount: &str, commit: bool) -> Value {
        let lines =
            format!(r#"[{{"number":"1","quantity":1,"amount":{amount},"taxCode":"PS081282","description":"Yarn"}}]"#);
        self.json(
            "transactions_create",
            &[
                ("type", doc_type),
                ("code", code),
                ("companyCode", "DEFAULT"),
                ("date", &today()),
                ("customerCode", "ABC"),
                ("addresses", IRVINE),
                ("lines", &lines),
                ("commit", if commit { "true" } else { "false" }),
            ],
        )
        .await
    }

    async fn get(&self, code: &str) -> Result<Response, CallError> {
        self.call("transactions_get", &[("companyCode", "DEFAULT"), ("transactionCode", code)]).await
    }

    async fn count(&self) -> u64 {
        let list =
            self.json("transactions_list", &[("companyCode", "DEFAULT"), ("$filter", "date ge '2000-01-01'")]).await;
        list["@recordsetCount"].as_u64().unwrap()
    }
}

const IRVINE: &str = r#"{"singleLocation":{"line1":"123 Main Street","city":"Irvine","region":"CA","country":"US","postalCode":"92615"}}"#;

fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

fn api_error(result: Result<Response, CallError>) -> client::ApiError {
    match result {
        Err(CallError::Api(e)) => e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn ping_answers_200_with_and_without_good_credentials() {
    let ava = Ava::start().await;
    let ok = ava.json("utilities_ping", &[]).await;
    assert_eq!(ok["authenticated"], true);
    assert_eq!(ok["authenticationType"], "AccountIdLicenseKey");
    let mut wrong = ava.target.clone();
    wrong.credentials =
        Credentials::Avatax { account_id: "1100000001".into(), license_key: Secret::new("NOT-THE-KEY") };
    let response = ava.call_as(&wrong, "utilities_ping", &[]).await.unwrap();
    assert_eq!(response.status, 200);
    let body: Value = serde_json::from_slice(&response.body).unwrap();
    assert_eq!(body["authenticated"], false);
    assert_eq!(body["authenticationType"], "None");
    let (status, body) = ava.raw(reqwest::Method::GET, "/api/v2/utilities/ping", None, false).await;
    assert_eq!((status, body["authenticated"].clone()), (200, json!(false)));
}

#[tokio::test]
async fn wrong_or_missing_credentials_get_avataxs_401_bodies() {
    let ava = Ava::start().await;
    let mut wrong = ava.target.clone();
    wrong.credentials = Credentials::Avatax { account_id: "1100000001".into(), license_key: Secret::new("WRONG") };
    let error = api_error(ava.call_as(&wrong, "companies_list", &[]).await);
    assert_eq!(error.status, 401);
    assert_eq!(error.code.as_deref(), Some("AuthenticationException"));
    let (status, body) = ava.raw(reqwest::Method::GET, "/api/v2/companies", None, false).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "AuthenticationIncomplete");
    assert_eq!(body["error"]["target"], "HttpRequestHeaders");
    assert_eq!(body["error"]["details"][0]["number"], 34);
    // Empty Basic credentials (`Basic Og==`) get AvaTax's bare answer, as recorded.
    let empty = ava
        .http
        .get(format!("{}/api/v2/companies", ava.sandbox.base_url(Service::Avatax)))
        .header("Authorization", "Basic Og==")
        .send()
        .await
        .unwrap();
    assert_eq!(empty.status().as_u16(), 401);
    let body: Value = serde_json::from_slice(&empty.bytes().await.unwrap()).unwrap();
    assert_eq!(body, json!({"error": {"code": "AuthenticationException", "message": "BadRequest"}}));
}

#[tokio::test]
async fn companies_list_get_create_and_their_errors() {
    let ava = Ava::start().await;
    let list = ava.json("companies_list", &[]).await;
    assert_eq!(list["@recordsetCount"], 3);
    assert_eq!(list["value"][0]["companyCode"], "DEFAULT");
    assert_eq!(list["value"][0]["isDefault"], true);
    let id = ava.company_id("ACME").await;
    let one = ava.json("companies_get", &[("companyId", &id), ("$include", "Nexus")]).await;
    assert_eq!(one["companyCode"], "ACME");
    assert!(one["nexus"].as_array().unwrap().iter().any(|n| n["region"] == "CO"));

    let missing = ava.error("companies_get", &[("companyId", "999")]).await;
    assert_eq!((missing.status, missing.code.as_deref()), (404, Some("EntityNotFoundError")));

    let body = r#"[{"companyCode":"NEWCO","name":"New Co","defaultCountry":"US"}]"#;
    let created = ava.call("companies_create", &[("companies", body)]).await.unwrap();
    assert_eq!(created.status, 201);
    let created: Value = serde_json::from_slice(&created.body).unwrap();
    assert_eq!(created[0]["companyCode"], "NEWCO");
    let duplicate = ava.error("companies_create", &[("companies", body)]).await;
    assert_eq!(duplicate.code.as_deref(), Some("DuplicateCompanyCode"));
    let incomplete =
        ava.error("companies_create", &[("companies", r#"[{"companyCode":"X2","defaultCountry":"US"}]"#)]).await;
    assert_eq!(incomplete.code.as_deref(), Some("ValueRequiredError"));
    // The failed calls created nothing.
    assert_eq!(ava.json("companies_list", &[]).await["@recordsetCount"], 4);
}

#[tokio::test]
async fn customers_certificates_and_nexus_create_list_and_exempt_a_sale() {
    let ava = Ava::start().await;
    let id = ava.company_id("GLOBEX").await;
    let customers = ava.json("customers_list", &[("companyId", &id), ("$top", "3")]).await;
    assert_eq!(customers["value"].as_array().unwrap().len(), 3);
    assert!(customers["@nextLink"].as_str().unwrap().contains("%24skip=3"));

    let customer = r#"[{"customerCode":"SCHOOL-1","name":"Harbor School","line1":"1 School Rd","city":"Irvine","region":"CA","postalCode":"92615","country":"US"}]"#;
    assert_eq!(ava.call("customers_create", &[("companyId", &id), ("customers", customer)]).await.unwrap().status, 201);
    let dup = ava.error("customers_create", &[("companyId", &id), ("customers", customer)]).await;
    assert_eq!(dup.code.as_deref(), Some("DuplicateEntry"));

    // GLOBEX has no nexus in CA: a sale there is not taxed until nexus is declared.
    let sale = |code: &str| {
        [
            ("type", "SalesOrder".to_owned()),
            ("code", code.to_owned()),
            ("companyCode", "GLOBEX".to_owned()),
            ("date", today()),
            ("customerCode", "SCHOOL-1".to_owned()),
            ("addresses", IRVINE.to_owned()),
            ("lines", r#"[{"amount":200,"taxCode":"P0000000"}]"#.to_owned()),
        ]
    };
    let untaxed = ava.json_owned("transactions_create", &sale("Q1")).await;
    assert_eq!(untaxed["totalTax"], 0);
    // A SalesOrder's details carry no nonTaxableType (recorded traffic); the amount says it.
    assert_eq!(untaxed["lines"][0]["details"][0]["nonTaxableAmount"], 200);

    let nexus = r#"[{"country":"US","region":"CA"}]"#;
    let declared = ava.json("nexus_create", &[("companyId", &id), ("nexus", nexus)]).await;
    assert_eq!(declared[0]["jurisCode"], "06");
    assert_eq!(declared[0]["jurisName"], "CALIFORNIA");
    let again = ava.error("nexus_create", &[("companyId", &id), ("nexus", nexus)]).await;
    assert_eq!(again.code.as_deref(), Some("DuplicateNexusError"));
    let bogus =
        ava.error("nexus_create", &[("companyId", &id), ("nexus", r#"[{"country":"US","region":"ZZ"}]"#)]).await;
    assert_eq!(bogus.code.as_deref(), Some("UnknownNexusError"));
    let listed = ava.json("nexus_list", &[("companyId", &id), ("$filter", "region eq 'CA'")]).await;
    assert_eq!(listed["@recordsetCount"], 1);

    let taxed = ava.json_owned("transactions_create", &sale("Q2")).await;
    assert_eq!(taxed["totalTax"], 15.5);

    let certificate = r#"[{"signedDate":"2020-01-01","expirationDate":"2099-12-31","exemptionNumber":"SCH-1","exemptionReason":{"name":"EDUCATIONAL"},"exposureZone":{"name":"California"},"customers":[{"customerCode":"SCHOOL-1"}]}]"#;
    let cert = ava.json("certificates_create", &[("companyId", &id), ("certificates", certificate)]).await;
    assert_eq!(cert[0]["exposureZone"]["region"], "CA");
    let unknown_customer = certificate.replace("SCHOOL-1\"}", "NOBODY\"}");
    let refused = ava.error("certificates_create", &[("companyId", &id), ("certificates", &unknown_customer)]).await;
    assert_eq!(refused.code.as_deref(), Some("EntityNotFoundError"));
    let exempt = ava.json_owned("transactions_create", &sale("Q3")).await;
    assert_eq!(exempt["totalTax"], 0);
    assert_eq!(exempt["totalExempt"], 200);
    assert_eq!(exempt["lines"][0]["exemptCertId"], cert[0]["id"]);
    let certs = ava.json("certificates_list", &[("companyId", &id), ("$include", "customers")]).await;
    assert!(certs["value"].as_array().unwrap().iter().any(|c| c["customers"][0]["customerCode"] == "SCHOOL-1"));
}

#[tokio::test]
async fn a_sales_order_is_a_quote_and_an_invoice_is_recorded() {
    let ava = Ava::start().await;
    let before = ava.count().await;
    let quote = ava.create("QUOTE-1", "SalesOrder", "100", false).await;
    assert_eq!(quote["status"], "Temporary");
    assert_eq!(quote["totalTax"], 7.75);
    assert_eq!(quote["lines"][0]["details"].as_array().unwrap().len(), 4);
    assert_eq!(ava.count().await, before);
    assert_eq!(api_error(ava.get("QUOTE-1").await).code.as_deref(), Some("EntityNotFoundError"));

    let created = ava
        .call(
            "transactions_create",
            &[
                ("type", "SalesInvoice"),
                ("code", "INV-1"),
                ("companyCode", "DEFAULT"),
                ("date", &today()),
                ("customerCode", "ABC"),
                ("addresses", IRVINE),
                ("lines", r#"[{"number":"1","amount":100,"taxCode":"PS081282"}]"#),
            ],
        )
        .await
        .unwrap();
    assert_eq!(created.status, 201);
    let invoice: Value = serde_json::from_slice(&created.body).unwrap();
    assert_eq!(invoice["status"], "Saved");
    assert_eq!(invoice["totalTaxable"], 100);
    assert_eq!(invoice["summary"].as_array().unwrap().len(), 4);
    assert_eq!(ava.count().await, before + 1);
    let fetched: Value = serde_json::from_slice(&ava.get("INV-1").await.unwrap().body).unwrap();
    assert_eq!(fetched["id"], invoice["id"]);
    let committed = ava.create("INV-2", "SalesInvoice", "50", true).await;
    assert_eq!(committed["status"], "Committed");
    assert_eq!(committed["totalTax"], 3.88);
    // Re-creating a committed code is refused; a saved one is replaced.
    let again = ava
        .error(
            "transactions_create",
            &[
                ("type", "SalesInvoice"),
                ("code", "INV-2"),
                ("date", &today()),
                ("customerCode", "ABC"),
                ("addresses", IRVINE),
                ("lines", r#"[{"amount":1}]"#),
            ],
        )
        .await;
    assert_eq!(again.code.as_deref(), Some("TransactionAlreadyExists"));
    let replaced = ava.create("INV-1", "SalesInvoice", "200", false).await;
    assert_eq!((replaced["id"].clone(), replaced["totalTax"].clone()), (invoice["id"].clone(), json!(15.5)));
}

#[tokio::test]
async fn commit_void_and_the_transitions_they_refuse() {
    let ava = Ava::start().await;
    ava.create("LIFE-1", "SalesInvoice", "100", false).await;
    let tx = [("companyCode", "DEFAULT"), ("transactionCode", "LIFE-1")];
    let committed = ava.json("transactions_commit", &[tx[0], tx[1], ("commit", "true")]).await;
    assert_eq!(committed["status"], "Committed");
    let twice = ava.error("transactions_commit", &[tx[0], tx[1], ("commit", "true")]).await;
    assert_eq!(twice.code.as_deref(), Some("TransactionIsCommitted"));
    let post_failed = ava.error("transactions_void", &[tx[0], tx[1], ("code", "PostFailed")]).await;
    assert_eq!(post_failed.code.as_deref(), Some("GetTaxError"));
    let voided = ava.json("transactions_void", &[tx[0], tx[1], ("code", "DocVoided")]).await;
    assert_eq!(voided["status"], "Cancelled");
    let again = ava.error("transactions_void", &[tx[0], tx[1], ("code", "DocVoided")]).await;
    assert_eq!(again.code.as_deref(), Some("TransactionAlreadyCancelled"));
    let commit_voided = ava.error("transactions_commit", &[tx[0], tx[1], ("commit", "true")]).await;
    assert_eq!((commit_voided.status, commit_voided.code.as_deref()), (400, Some("GetTaxError")));
    let adjust_voided = ava
        .error(
            "transactions_adjust",
            &[tx[0], tx[1], ("adjustmentReason", "PriceAdjusted"), ("newTransaction", &new_transaction("80"))],
        )
        .await;
    assert_eq!(adjust_voided.code.as_deref(), Some("GetTaxError"));
    let refund_voided = ava.error("transactions_refund", &[tx[0], tx[1], ("refundDate", &today())]).await;
    assert_eq!(refund_voided.code.as_deref(), Some("InvalidDocumentStatusForRefund"));
    // Still cancelled after all the refusals.
    let fetched: Value = serde_json::from_slice(&ava.get("LIFE-1").await.unwrap().body).unwrap();
    assert_eq!(fetched["status"], "Cancelled");

    // DocDeleted removes a saved document.
    ava.create("LIFE-2", "SalesInvoice", "10", false).await;
    ava.json("transactions_void", &[tx[0], ("transactionCode", "LIFE-2"), ("code", "DocDeleted")]).await;
    assert_eq!(api_error(ava.get("LIFE-2").await).status, 404);
    // The wrong document type is named as such.
    ava.create("LIFE-3", "PurchaseInvoice", "10", false).await;
    let wrong_type = ava
        .error(
            "transactions_commit",
            &[tx[0], ("transactionCode", "LIFE-3"), ("documentType", "SalesInvoice"), ("commit", "true")],
        )
        .await;
    assert_eq!(wrong_type.code.as_deref(), Some("InvalidDocumentType"));
    let unknown = ava.error("transactions_commit", &[tx[0], ("transactionCode", "NOPE"), ("commit", "true")]).await;
    assert_eq!((unknown.status, unknown.code.as_deref()), (404, Some("EntityNotFoundError")));
}

fn new_transaction(amount: &str) -> String {
    json!({"type": "SalesInvoice", "date": today(), "customerCode": "ABC", "commit": true,
           "addresses": serde_json::from_str::<Value>(IRVINE).unwrap(),
           "lines": [{"number": "1", "amount": amount.parse::<f64>().unwrap(), "taxCode": "PS081282"}]})
    .to_string()
}

#[tokio::test]
async fn adjust_makes_a_new_version_and_adjustment_cancelled_undoes_it() {
    let ava = Ava::start().await;
    let original = ava.create("ADJ-1", "SalesInvoice", "100", true).await;
    let tx = [("companyCode", "DEFAULT"), ("transactionCode", "ADJ-1")];
    // opsdeck's client refuses this before sending; the simulator refuses it too.
    let body = format!(r#"{{"newTransaction":{}}}"#, new_transaction("90"));
    let (status, missing_reason) =
        ava.raw(reqwest::Method::POST, "/api/v2/companies/DEFAULT/transactions/ADJ-1/adjust", Some(&body), true).await;
    assert_eq!((status, missing_reason["error"]["code"].clone()), (400, json!("ValueRequiredError")));
    assert_eq!(missing_reason["error"]["details"][0]["refersTo"], "adjustmentReason");
    let other = ava
        .error(
            "transactions_adjust",
            &[tx[0], tx[1], ("adjustmentReason", "Other"), ("newTransaction", &new_transaction("90"))],
        )
        .await;
    assert_eq!(other.code.as_deref(), Some("ValueRequiredError"));
    let adjusted = ava
        .json(
            "transactions_adjust",
            &[
                tx[0],
                tx[1],
                ("adjustmentReason", "PriceAdjusted"),
                ("adjustmentDescription", "Price dropped"),
                ("newTransaction", &new_transaction("90")),
            ],
        )
        .await;
    assert_eq!(adjusted["version"], 2);
    assert_ne!(adjusted["id"], original["id"]);
    assert_eq!(adjusted["adjustmentReason"], "PriceAdjusted");
    assert_eq!(adjusted["status"], "Committed");
    assert_eq!(adjusted["totalTax"], 6.98);
    let versions = ava
        .json(
            "transactions_list",
            &[tx[0], ("$filter", "code eq 'ADJ-1' and date ge '2000-01-01'"), ("$orderBy", "version")],
        )
        .await;
    let statuses: Vec<&str> =
        versions["value"].as_array().unwrap().iter().map(|v| v["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["Adjusted", "Committed"]);
    let undone = ava.json("transactions_void", &[tx[0], tx[1], ("code", "AdjustmentCancelled")]).await;
    assert_eq!((undone["version"].clone(), undone["status"].clone()), (json!(1), json!("Committed")));
    let fetched: Value = serde_json::from_slice(&ava.get("ADJ-1").await.unwrap().body).unwrap();
    assert_eq!(fetched["totalTax"], 7.75);
}

#[tokio::test]
async fn refunds_full_partial_tax_only_and_percentage() {
    let ava = Ava::start().await;
    let lines = r#"[{"number":"1","amount":100,"taxCode":"PS081282"},{"number":"2","amount":50,"taxCode":"PS081282"}]"#;
    ava.json(
        "transactions_create",
        &[
            ("type", "SalesInvoice"),
            ("code", "SALE-1"),
            ("date", &today()),
            ("customerCode", "ABC"),
            ("addresses", IRVINE),
            ("lines", lines),
            ("commit", "true"),
        ],
    )
    .await;
    let tx = [("companyCode", "DEFAULT"), ("transactionCode", "SALE-1")];
    let refund =
        |code: &'static str, kind: &'static str| [tx[0], tx[1], ("refundTransactionCode", code), ("refundType", kind)];
    let date = today();
    let full =
        ava.json("transactions_refund", &[&refund("R-FULL", "Full")[..], &[("refundDate", &date)]].concat()).await;
    assert_eq!((full["type"].clone(), full["status"].clone()), (json!("ReturnInvoice"), json!("Committed")));
    assert_eq!((full["totalAmount"].clone(), full["totalTax"].clone()), (json!(-150), json!(-11.63)));
    let partial = ava
        .json(
            "transactions_refund",
            &[&refund("R-PART", "Partial")[..], &[("refundDate", &date), ("refundLines", "2")]].concat(),
        )
        .await;
    assert_eq!((partial["totalAmount"].clone(), partial["totalTax"].clone()), (json!(-50), json!(-3.88)));
    let tax_only =
        ava.json("transactions_refund", &[&refund("R-TAX", "TaxOnly")[..], &[("refundDate", &date)]].concat()).await;
    assert_eq!((tax_only["totalAmount"].clone(), tax_only["totalTax"].clone()), (json!(0), json!(-11.63)));
    let percent = ava
        .json(
            "transactions_refund",
            &[&refund("R-PCT", "Percentage")[..], &[("refundDate", &date), ("refundPercentage", "10")]].concat(),
        )
        .await;
    assert_eq!((percent["totalAmount"].clone(), percent["totalTax"].clone()), (json!(-15), json!(-1.17)));
    let no_lines =
        ava.error("transactions_refund", &[&refund("R-X", "Partial")[..], &[("refundDate", &date)]].concat()).await;
    assert_eq!(no_lines.code.as_deref(), Some("RefundLinesRequired"));
    let bad_line = ava
        .error(
            "transactions_refund",
            &[&refund("R-X", "Partial")[..], &[("refundDate", &date), ("refundLines", "9")]].concat(),
        )
        .await;
    assert_eq!(bad_line.code.as_deref(), Some("LineNoOutOfRange"));
    let no_pct =
        ava.error("transactions_refund", &[&refund("R-X", "Percentage")[..], &[("refundDate", &date)]].concat()).await;
    assert_eq!(no_pct.code.as_deref(), Some("RefundPercentageMissing"));
    let quote = ava
        .error(
            "transactions_refund",
            &[&refund("R-X", "Full")[..], &[("refundDate", &date), ("documentType", "SalesOrder")]].concat(),
        )
        .await;
    assert_eq!(quote.code.as_deref(), Some("InvalidDocumentTypeForRefund"));
    let bad_date =
        ava.error("transactions_refund", &[&refund("R-X", "Full")[..], &[("refundDate", "2024-02-30")]].concat()).await;
    assert_eq!(bad_date.code.as_deref(), Some("DateFormatError"));
    // The sale is unchanged by its refunds.
    let sale: Value = serde_json::from_slice(&ava.get("SALE-1").await.unwrap().body).unwrap();
    assert_eq!((sale["status"].clone(), sale["totalTax"].clone()), (json!("Committed"), json!(11.63)));
}

#[tokio::test]
async fn audit_returns_the_original_request_and_response() {
    let ava = Ava::start().await;
    let created = ava.create("AUD-1", "SalesInvoice", "100", false).await;
    let audit = ava.json("transactions_audit", &[("companyCode", "DEFAULT"), ("transactionCode", "AUD-1")]).await;
    assert_eq!(audit["apiCallStatus"], "OriginalApiCallAvailable");
    assert_eq!(audit["original"]["request"]["code"], "AUD-1");
    assert_eq!(audit["original"]["request"]["lines"][0]["taxCode"], "PS081282");
    assert_eq!(audit["original"]["response"]["id"], created["id"]);
    assert_eq!(audit["original"]["response"]["totalTax"], 7.75);
    assert_eq!(audit["reconstructed"]["request"]["type"], "SalesInvoice");
    // The answer of the original call, whole, even after the document has moved on.
    assert_eq!(audit["original"]["response"], created);
    ava.json("transactions_commit", &[("companyCode", "DEFAULT"), ("transactionCode", "AUD-1"), ("commit", "true")])
        .await;
    let later = ava.json("transactions_audit", &[("companyCode", "DEFAULT"), ("transactionCode", "AUD-1")]).await;
    assert_eq!(later["original"]["response"], created);
    assert_eq!(later["original"]["request"], audit["original"]["request"]);
}

#[tokio::test]
async fn seeded_history_has_every_status_and_locked_documents_refuse_changes() {
    let ava = Ava::start().await;
    let all = ava
        .json("transactions_list", &[("companyCode", "DEFAULT"), ("$top", "1000"), ("$filter", "date ge '2000-01-01'")])
        .await;
    let statuses: Vec<&str> = all["value"].as_array().unwrap().iter().map(|v| v["status"].as_str().unwrap()).collect();
    for status in ["Saved", "Posted", "Committed", "Cancelled", "Adjusted"] {
        assert!(statuses.contains(&status), "{status} missing from {statuses:?}");
    }
    let locked = ava
        .json(
            "transactions_list",
            &[("companyCode", "DEFAULT"), ("$filter", "locked eq true and date ge '2000-01-01'")],
        )
        .await;
    let code = locked["value"][0]["code"].as_str().unwrap().to_owned();
    let refused = ava
        .error("transactions_void", &[("companyCode", "DEFAULT"), ("transactionCode", &code), ("code", "DocVoided")])
        .await;
    assert_eq!(refused.code.as_deref(), Some("CannotModifyLockedTransaction"));
    // Same seed, same data.
    let other = Ava::start().await;
    let again = other
        .json("transactions_list", &[("companyCode", "DEFAULT"), ("$top", "1000"), ("$filter", "date ge '2000-01-01'")])
        .await;
    assert_eq!(all["value"][3]["code"], again["value"][3]["code"]);
    assert_eq!(all["value"][3]["totalTax"], again["value"][3]["totalTax"]);
}

#[tokio::test]
async fn odata_filters_order_and_paging() {
    let ava = Ava::start().await;
    let company = [("companyCode", "DEFAULT")];
    let committed = ava
        .json(
            "transactions_list",
            &[company[0], ("$filter", "status eq Committed and (type eq 'SalesInvoice' or type eq 'ReturnInvoice')")],
        )
        .await;
    let rows = committed["value"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["status"] == "Committed"));
    assert_eq!(committed["@recordsetCount"].as_u64().unwrap(), rows.len() as u64);
    let ordered = ava.json("transactions_list", &[company[0], ("$orderBy", "totalAmount DESC"), ("$top", "5")]).await;
    let amounts: Vec<f64> =
        ordered["value"].as_array().unwrap().iter().map(|r| r["totalAmount"].as_f64().unwrap()).collect();
    assert!(amounts.windows(2).all(|w| w[0] >= w[1]), "{amounts:?}");
    let codes = ava
        .json("tax_codes_list", &[("$filter", "taxCode startswith 'PF' and not (description contains 'carbonated')")])
        .await;
    assert!(codes["value"].as_array().unwrap().iter().all(|c| c["taxCode"].as_str().unwrap().starts_with("PF")));
    assert!(codes["value"].as_array().unwrap().iter().all(|c| c["taxCode"] != "PF050101"));

    // Paging: @nextLink carries the filter and the next $skip, and the client follows it.
    let page = ava
        .json(
            "customers_list",
            &[("companyId", &ava.company_id("DEFAULT").await), ("$top", "3"), ("$filter", "country eq 'US'")],
        )
        .await;
    let next = page["@nextLink"].as_str().unwrap();
    assert!(next.starts_with("/api/v2/companies/") && next.contains("%24filter=country+eq+%27US%27"), "{next}");
    let (status, second) = ava.raw(reqwest::Method::GET, next, None, true).await;
    assert_eq!(status, 200);
    assert_ne!(second["value"][0]["customerCode"], page["value"][0]["customerCode"]);
    let last = ava.json("customers_list", &[("companyId", &ava.company_id("DEFAULT").await), ("$skip", "6")]).await;
    assert!(last.get("@nextLink").is_none());

    for (filter, code) in [
        ("status eq 'Committed", "UnterminatedValueError"),
        ("status eq", "SyntaxError"),
        ("(status eq Saved", "SyntaxError"),
        ("status eq Saved Committed", "ExpectedConjunctionError"),
        ("status eq Saved xor type eq SalesInvoice", "UnknownConjunctionError"),
        ("status like 'S%'", "MalformedFilterException"),
        ("nosuchfield eq 1", "InvalidQueryField"),
        ("id eq 'abc'", "InvalidQueryValue"),
        ("date gt '2024-13-45'", "DateFormatError"),
        ("lines eq 1", "FieldNotQueryableError"),
    ] {
        let error = ava.error("transactions_list", &[company[0], ("$filter", filter)]).await;
        assert_eq!((error.status, error.code.as_deref()), (400, Some(code)), "{filter}");
    }
    let bad_order = ava.error("companies_list", &[("$orderBy", "name sideways")]).await;
    assert_eq!(bad_order.code.as_deref(), Some("SyntaxError"));
    let unknown_order = ava.error("companies_list", &[("$orderBy", "shoeSize")]).await;
    assert_eq!(unknown_order.code.as_deref(), Some("FieldNotOrderableError"));
}

#[tokio::test]
async fn bad_input_is_refused_with_avataxs_errors_and_changes_nothing() {
    let ava = Ava::start().await;
    let before = ava.count().await;
    let base = |lines: &'static str, addresses: &'static str, date: String, company: &'static str| {
        vec![
            ("type", "SalesInvoice".to_owned()),
            ("code", "BAD-1".to_owned()),
            ("companyCode", company.to_owned()),
            ("date", date),
            ("customerCode", "ABC".to_owned()),
            ("addresses", addresses.to_owned()),
            ("lines", lines.to_owned()),
        ]
    };
    let ok_lines = r#"[{"amount":10}]"#;
    let cases = [
        (base(r#"[{"amount":10,"quantity":-2}]"#, IRVINE, today(), "DEFAULT"), "RangeError"),
        (
            base(ok_lines, r#"{"shipTo":{"region":"PA","postalCode":"00000","country":"US"}}"#, today(), "DEFAULT"),
            "GetTaxError",
        ),
        (base("[]", IRVINE, today(), "DEFAULT"), "MissingLine"),
        (base(ok_lines, r#"{"shipTo":{"line1":"1 Main St","country":"US"}}"#, today(), "DEFAULT"), "InvalidAddress"),
        (
            base(ok_lines, r#"{"shipTo":{"region":"CA","postalCode":"9261","country":"US"}}"#, today(), "DEFAULT"),
            "InvalidPostalCode",
        ),
        (
            base(ok_lines, r#"{"shipTo":{"region":"XX","postalCode":"92615","country":"US"}}"#, today(), "DEFAULT"),
            "InvalidCountryRegion",
        ),
        (base(ok_lines, "{}", today(), "DEFAULT"), "MissingAddress"),
        (base(ok_lines, IRVINE, today(), "NOSUCHCO"), "EntityNotFoundError"),
    ];
    for (params, code) in cases {
        let refs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let error = ava.error("transactions_create", &refs).await;
        assert_eq!(error.code.as_deref(), Some(code), "{params:?}");
    }
    let (status, body) = ava
        .raw(
            reqwest::Method::POST,
            "/api/v2/transactions/create",
            Some(r#"{"type":"SalesInvoice","date":"2024-02-30","customerCode":"A","lines":[{"amount":1}]}"#),
            true,
        )
        .await;
    assert_eq!((status, body["error"]["code"].clone()), (400, json!("DateFormatError")));
    assert_eq!(body["error"]["details"][0]["refersTo"], "date");
    let (status, body) = ava.raw(reqwest::Method::POST, "/api/v2/transactions/create", Some("{not json"), true).await;
    assert_eq!((status, body["error"]["code"].clone()), (400, json!("JsonFormatError")));
    let (status, body) = ava.raw(reqwest::Method::POST, "/api/v2/transactions/create", Some(""), true).await;
    assert_eq!((status, body["error"]["code"].clone()), (400, json!("ModelRequiredException")));
    let (status, body) = ava.raw(reqwest::Method::GET, "/api/v2/nowhere", None, true).await;
    assert_eq!((status, body["error"]["code"].clone()), (404, json!("IncorrectPathError")));
    let unknown_tx = ava.error("transactions_get", &[("companyCode", "DEFAULT"), ("transactionCode", "NO-SUCH")]).await;
    assert_eq!(unknown_tx.message, "Document not found. The Document with code 'NO-SUCH' was not found.");
    assert_eq!(ava.count().await, before);
}

/// The resolver answers as the recorded real one (conformance recordings of 2021): it refuses
/// only an incomplete address, and says in messages what it could not place.
#[tokio::test]
async fn addresses_resolve_refuses_only_an_incomplete_address() {
    let ava = Ava::start().await;
    let resolve = "/api/v2/addresses/resolve";
    // Neither a postal code nor line1 + city + region: the recorded refusal, word for word.
    let (status, body) = ava
        .raw(reqwest::Method::POST, resolve, Some(r#"{"line1":"A Different Road","city":null,"region":"AL"}"#), true)
        .await;
    assert_eq!(status, 400);
    let detail = &body["error"]["details"][0];
    assert_eq!((&detail["code"], &detail["number"]), (&json!("InvalidAddress"), &json!(309)));
    assert!(detail["description"].as_str().unwrap().contains("line1 + city + region, or line1 + postal code"));
    assert!(detail.get("refersTo").is_none(), "the recorded refusal names no field: {detail}");

    // A postal code no state has is answered 200, with what could not be done.
    let (status, body) = ava
        .raw(
            reqwest::Method::GET,
            &format!("{resolve}?line1=915%20S%20Jackson%20St&city=Nowhere&region=AL&postalCode=42"),
            None,
            true,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let summaries: Vec<&str> =
        body["messages"].as_array().unwrap().iter().map(|m| m["summary"].as_str().unwrap()).collect();
    assert_eq!(summaries, ["Address not geocoded.", "The city could not be determined."]);
    assert!(body.get("coordinates").is_none() && body.get("taxAuthorities").is_none());
    assert_eq!(body["resolutionQuality"], "External");
    // Only the fields sent are echoed.
    assert_eq!(
        body["address"],
        json!({"line1": "915 S Jackson St", "city": "Nowhere", "region": "AL", "postalCode": "42"})
    );

    // The ZIP decides the state: a New York ZIP given with AL is placed in New York.
    let (status, body) = ava
        .raw(
            reqwest::Method::POST,
            resolve,
            Some(r#"{"line1":"47 W 13th St","city":"New York","region":"AL","country":"US","postalCode":"10011"}"#),
            true,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["validatedAddresses"][0]["region"], "NY");
    assert_eq!(body["coordinates"], json!({"latitude": 40.736333, "longitude": -73.996328}));
    assert!(body.get("messages").is_none());
    let names: Vec<&str> =
        body["taxAuthorities"].as_array().unwrap().iter().map(|a| a["jurisdictionName"].as_str().unwrap()).collect();
    assert!(names.contains(&"NEW YORK"), "{names:?}");

    // A ZIP the tax table knows but whose coordinates the simulator lacks: its authorities, and a
    // warning instead of invented coordinates.
    let (status, body) = ava
        .raw(reqwest::Method::GET, &format!("{resolve}?line1=1%20Main%20St&postalCode=11430&country=US"), None, true)
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("coordinates").is_none());
    assert_eq!(body["messages"][0]["severity"], "Warning");
    assert!(!body["taxAuthorities"].as_array().unwrap().is_empty());
    assert_eq!(body["validatedAddresses"][0]["region"], "NY");
}

/// The account's subscriptions (which integrations read to learn what the account may do): the
/// services the simulator serves, as a fetch result that filters like every list.
#[tokio::test]
async fn the_account_lists_its_subscriptions() {
    let ava = Ava::start().await;
    let (status, body) = ava.raw(reqwest::Method::GET, "/api/v2/utilities/subscriptions", None, true).await;
    assert_eq!(status, 200, "{body}");
    let names: Vec<&str> =
        body["value"].as_array().unwrap().iter().map(|s| s["subscriptionDescription"].as_str().unwrap()).collect();
    assert_eq!(names, ["AvaTaxST", "AvaTaxPro", "AvaTaxGlobal", "AutoAddress", "AvaCert"]);
    assert_eq!(body["@recordsetCount"], 5);
    assert_eq!(body["value"][0]["accountId"], json!(1_100_000_001_i64));
    let (_, filtered) = ava
        .raw(reqwest::Method::GET, "/api/v2/utilities/subscriptions?$filter=subscriptionTypeId%20eq%2010", None, true)
        .await;
    assert_eq!(filtered["value"].as_array().map(Vec::len), Some(1), "{filtered}");
    let (status, _) = ava.raw(reqwest::Method::GET, "/api/v2/utilities/subscriptions", None, false).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn addresses_rates_and_tax_codes() {
    let ava = Ava::start().await;
    let resolved = ava
        .json(
            "addresses_resolve",
            &[
                ("line1", "1000 Main Street"),
                ("city", "Irvine"),
                ("region", "CA"),
                ("postalCode", "92614"),
                ("country", "US"),
            ],
        )
        .await;
    assert_eq!(resolved["validatedAddresses"][0]["line1"], "1000 MAIN ST");
    assert_eq!(resolved["coordinates"]["latitude"], 33.691385);
    assert_eq!(resolved["resolutionQuality"], "Intersection");
    assert!(resolved["taxAuthorities"].as_array().unwrap().iter().any(|a| a["signatureCode"] == "EMTN"));
    let postal_only =
        ava.json("addresses_resolve", &[("postalCode", "98110"), ("region", "WA"), ("country", "US")]).await;
    assert_eq!(postal_only["resolutionQuality"], "PostalCentroidGood");
    assert_eq!(postal_only["coordinates"]["longitude"], -122.53178);
    let incomplete = ava.error("addresses_resolve", &[("line1", "1 Nowhere Rd")]).await;
    assert_eq!(incomplete.code.as_deref(), Some("InvalidAddress"));

    let rates = ava
        .json(
            "tax_rates_by_address",
            &[
                ("line1", "123 Main Street"),
                ("city", "Irvine"),
                ("region", "CA"),
                ("postalCode", "92615"),
                ("country", "US"),
            ],
        )
        .await;
    assert_eq!(rates["totalRate"], 0.0775);
    assert_eq!(rates["rates"].as_array().unwrap().len(), 4);
    let by_zip = ava.json("tax_rates_by_postal_code", &[("country", "US"), ("postalCode", "92615")]).await;
    assert_eq!(by_zip["totalRate"], 0.0775);
    let bad_zip = ava.error("tax_rates_by_postal_code", &[("country", "US"), ("postalCode", "ABCDE")]).await;
    assert_eq!(bad_zip.code.as_deref(), Some("InvalidPostalCode"));

    let codes = ava.json("tax_codes_list", &[("$filter", "taxCode eq 'NT'")]).await;
    assert_eq!(codes["@recordsetCount"], 1);
    assert_eq!(codes["value"][0]["taxCodeTypeId"], "N");
}

#[tokio::test]
async fn product_rules_and_the_state_fallback_come_from_the_shared_engine() {
    let ava = Ava::start().await;
    let philadelphia = r#"{"shipFrom":{"region":"OR","postalCode":"97201","country":"US"},"shipTo":{"line1":"1 Market St","city":"Philadelphia","region":"PA","postalCode":"19103","country":"US"}}"#;
    let lines =
        r#"[{"number":"1","amount":100,"taxCode":"PC040100"},{"number":"2","amount":100,"taxCode":"P0000000"}]"#;
    let quote = ava
        .json(
            "transactions_create",
            &[
                ("companyCode", "ACME"),
                ("date", &today()),
                ("customerCode", "C"),
                ("addresses", philadelphia),
                ("lines", lines),
            ],
        )
        .await;
    // Pennsylvania does not tax clothing; the camp stove pays state and Philadelphia tax.
    assert_eq!(quote["lines"][0]["tax"], 0);
    assert_ne!(quote["lines"][0]["details"][0]["nonTaxableAmount"], 0);
    assert_eq!(quote["lines"][1]["tax"], 8);
    assert_eq!(quote["totalTax"], 8);

    // A ZIP the table does not list: the state rate, and a message saying so.
    let elsewhere = r#"{"singleLocation":{"region":"TX","postalCode":"75000","country":"US"}}"#;
    let fallback = ava
        .json(
            "transactions_create",
            &[("date", &today()), ("customerCode", "C"), ("addresses", elsewhere), ("lines", r#"[{"amount":100}]"#)],
        )
        .await;
    assert_eq!(fallback["totalTax"], 6.25);
    assert!(fallback["messages"][0]["summary"].as_str().unwrap().contains("state rate"), "{fallback}");
    let rates = ava.json("tax_rates_by_postal_code", &[("country", "US"), ("postalCode", "19103")]).await;
    assert_eq!(rates["totalRate"], 0.08);
}

#[tokio::test]
async fn concurrent_creates_lose_nothing_and_never_duplicate_a_document() {
    let ava = std::sync::Arc::new(Ava::start().await);
    let before = ava.count().await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        let ava = std::sync::Arc::clone(&ava);
        tasks.push(tokio::spawn(async move {
            // Half race for one code; the other half each have their own.
            let code = if i % 2 == 0 { "RACE-SHARED".to_owned() } else { format!("RACE-{i}") };
            let lines = r#"[{"amount":10}]"#;
            ava.call(
                "transactions_create",
                &[
                    ("type", "SalesInvoice"),
                    ("code", &code),
                    ("date", &today()),
                    ("customerCode", "C"),
                    ("addresses", IRVINE),
                    ("lines", lines),
                    ("commit", "true"),
                ],
            )
            .await
        }));
    }
    let mut created = 0;
    let mut refused = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(response) => {
                assert_eq!(response.status, 201);
                created += 1;
            }
            Err(CallError::Api(e)) => {
                assert_eq!(e.code.as_deref(), Some("TransactionAlreadyExists"));
                refused += 1;
            }
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!((created, refused), (21, 19));
    assert_eq!(ava.count().await, before + 21);
    let shared = ava
        .json(
            "transactions_list",
            &[("companyCode", "DEFAULT"), ("$filter", "code eq 'RACE-SHARED' and date ge '2000-01-01'")],
        )
        .await;
    assert_eq!(shared["@recordsetCount"], 1);
}

#[tokio::test]
async fn injected_faults_answer_in_avataxs_shape_and_reset_restores_the_seed() {
    let ava = Ava::start().await;
    let http = reqwest::Client::new();
    let control = format!("http://{}", ava.sandbox.control);
    // A POST, which the client does not retry.
    let fault = json!({"service": "avatax", "path": "/api/v2/companies", "method": "POST", "status": 503, "count": 1});
    let added = http
        .post(format!("{control}/faults"))
        .header("content-type", "application/json")
        .body(fault.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(added.status(), 201);
    let body = r#"[{"companyCode":"FAULTY","name":"Faulty","defaultCountry":"US"}]"#;
    let error = ava.error("companies_create", &[("companies", body)]).await;
    assert_eq!(error.status, 503);
    assert_eq!(error.code.as_deref(), Some("ServiceNotReady"));
    assert_eq!(ava.json("companies_list", &[]).await["@recordsetCount"], 3, "the failed call created nothing");
    assert_eq!(ava.call("companies_create", &[("companies", body)]).await.unwrap().status, 201, "one call only");

    let before = ava.count().await;
    ava.create("RESET-1", "SalesInvoice", "10", false).await;
    assert_eq!(ava.count().await, before + 1);
    let reset = http.post(format!("{control}/reset?service=avatax")).send().await.unwrap();
    assert_eq!(reset.status(), 200);
    assert_eq!(ava.count().await, before);
}

/// A refund is a new document: 201 Created, as recorded production traffic shows.
#[tokio::test]
async fn a_refund_is_created() {
    let ava = Ava::start().await;
    ava.create("STATUS-1", "SalesInvoice", "100", true).await;
    let body = format!(r#"{{"refundTransactionCode":"STATUS-1-R","refundType":"Full","refundDate":"{}"}}"#, today());
    let (status, refund) = ava
        .raw(reqwest::Method::POST, "/api/v2/companies/DEFAULT/transactions/STATUS-1/refund", Some(&body), true)
        .await;
    assert_eq!((status, &refund["type"]), (201, &json!("ReturnInvoice")), "{refund}");
}

/// `transactions/createoradjust`, which every recorded integration uses: a new document is
/// created (201); sent again once committed, it is adjusted (200, version 2, reason Other, as
/// recorded answers show); a country the table has no rates for is taxed at nothing, not refused.
#[tokio::test]
async fn create_or_adjust_creates_then_adjusts_a_committed_document() {
    let ava = Ava::start().await;
    let model = |amount: u32, country: &str| {
        json!({"createTransactionModel": {"type": "SalesInvoice", "code": "COA-1", "companyCode": "DEFAULT",
            "date": "2026-11-20", "customerCode": "C1", "commit": true,
            "addresses": {"singleLocation": {"line1": "2000 Main Street", "city": "Irvine", "region": "CA",
                "country": country, "postalCode": "92614"}},
            "lines": [{"number": "1", "amount": amount, "taxCode": "P0000000"}]}})
        .to_string()
    };
    let path = "/api/v2/transactions/createoradjust";
    let (status, first) = ava.raw(reqwest::Method::POST, path, Some(&model(100, "US")), true).await;
    assert_eq!(
        (status, first["version"].as_i64(), first["status"].as_str()),
        (201, Some(1), Some("Committed")),
        "{first}"
    );
    let (status, second) = ava.raw(reqwest::Method::POST, path, Some(&model(150, "US")), true).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!((second["version"].as_i64(), second["adjustmentReason"].as_str()), (Some(2), Some("Other")));
    assert_eq!(second["adjustmentDescription"], "Create or adjust transaction");
    assert_eq!(second["totalAmount"], 150.0);
    let (status, _) = ava.raw(reqwest::Method::POST, path, Some("{}"), true).await;
    assert_eq!(status, 400, "the model is required");
    let costa_rica = model(100, "CR").replace("COA-1", "COA-2");
    let (status, abroad) = ava.raw(reqwest::Method::POST, path, Some(&costa_rica), true).await;
    assert_eq!((status, abroad["totalTax"].as_f64()), (201, Some(0.0)), "{abroad}");
    ava.sandbox.shutdown();
}

/// A filter naming one code is answered from the store's index of codes, and answers what the
/// whole search answers: any case of the code, the 30-day window when no date is named.
#[tokio::test]
async fn a_filter_on_one_code_answers_as_the_whole_search_does() {
    let ava = Ava::start().await;
    let company = ("companyCode", "DEFAULT");
    // A document dated long ago, and one of today with another code.
    let lines = r#"[{"number":"1","quantity":1,"amount":100,"taxCode":"PS081282","description":"Yarn"}]"#;
    for (code, date) in [("OLD-CODE-1", "2020-01-15".to_owned()), ("NEW-CODE-1", today())] {
        ava.json(
            "transactions_create",
            &[
                ("type", "SalesInvoice"),
                ("code", code),
                company,
                ("date", &date),
                ("customerCode", "ABC"),
                ("addresses", IRVINE),
                ("lines", lines),
            ],
        )
        .await;
    }
    let code = "OLD-CODE-1".to_owned();
    let list = |filter: String| {
        let ava = &ava;
        async move {
            let answer = ava.json("transactions_list", &[company, ("$filter", &filter)]).await;
            answer["value"].as_array().unwrap().iter().map(|d| d["id"].as_i64().unwrap()).collect::<Vec<_>>()
        }
    };
    let indexed = list(format!("code eq '{}' and date ge '2000-01-01'", code.to_ascii_lowercase())).await;
    // `or` with itself says the same and cannot use the index: the whole search.
    let searched = list(format!("(code eq '{code}' or code eq '{code}') and date ge '2000-01-01'")).await;
    assert!(!indexed.is_empty());
    assert_eq!(indexed, searched);
    // No date named: the last 30 days only, as the service searches.
    assert_eq!(list(format!("code eq '{code}'")).await, list(format!("code eq '{code}' or code eq '{code}'")).await);
    assert!(list(format!("code eq '{code}'")).await.is_empty(), "{code} is older than 30 days");
    let recent = list("code eq 'new-code-1'".to_owned()).await;
    assert_eq!(recent.len(), 1);
    assert_eq!(recent, list("code eq 'NEW-CODE-1' or code eq 'NEW-CODE-1'".to_owned()).await);
}

/// A filter on a customer code (which the store indexes) keeps what a filter over every
/// document would, whatever the letter case, and a sort on the date and the total reads as one.
#[tokio::test]
async fn a_customer_code_filter_and_a_date_sort_agree_with_the_whole_list() {
    let ava = Ava::start().await;
    let company = ("companyCode", "DEFAULT");
    let every = ("$filter", "date ge '2000-01-01'");
    let all = ava.json("transactions_list", &[company, ("$top", "1000"), every]).await;
    let rows = all["value"].as_array().unwrap();
    let customer = rows[rows.len() / 2]["customerCode"].as_str().unwrap().to_owned();
    let expected: Vec<&Value> = rows
        .iter()
        .filter(|r| r["customerCode"].as_str().unwrap().eq_ignore_ascii_case(&customer))
        .map(|r| &r["id"])
        .collect();
    let filter = format!("customerCode eq '{}' and date ge '2000-01-01'", customer.to_lowercase());
    let found = ava.json("transactions_list", &[company, ("$top", "1000"), ("$filter", &filter)]).await;
    let ids: Vec<&Value> = found["value"].as_array().unwrap().iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, expected, "{filter}");
    assert_eq!(found["@recordsetCount"].as_u64(), Some(expected.len() as u64));

    let sorted = ava
        .json("transactions_list", &[company, ("$top", "1000"), every, ("$orderBy", "date desc, totalAmount")])
        .await;
    let mut expected: Vec<&Value> = rows.iter().collect();
    expected.sort_by(|a, b| {
        let date = b["date"].as_str().unwrap().cmp(a["date"].as_str().unwrap());
        date.then(a["totalAmount"].as_f64().unwrap().total_cmp(&b["totalAmount"].as_f64().unwrap()))
    });
    let ids = |list: &[&Value]| list.iter().map(|r| r["id"].clone()).collect::<Vec<_>>();
    let got: Vec<&Value> = sorted["value"].as_array().unwrap().iter().collect();
    assert_eq!(ids(&got), ids(&expected));
}
