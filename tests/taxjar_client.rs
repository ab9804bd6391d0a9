//! Every TaxJar operation through opsdeck's client against the in-process simulator: the tax
//! engine's worked cases, transactions, customers changing calculations, lookups, and TaxJar's
//! error shapes for bad input (with no state change).

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use opsdeck::catalog::Service;
use opsdeck::client::{self, CallError, Credentials, Response, Secret, Target};
use serde_json::{json, Value};

mod common;

/// The Taxjar simulator and a client for it; `Deref` gives its sandbox, http and target.
struct Taxjar(common::Simulated);

impl std::ops::Deref for Taxjar {
    type Target = common::Simulated;
    fn deref(&self) -> &common::Simulated {
        &self.0
    }
}

impl Taxjar {
    async fn start() -> Taxjar {
        Taxjar(common::Simulated::start(Service::Taxjar).await)
    }

    async fn call_as(
        &self,
        target: &Target,
        op: &str,
        params: &[(&str, &str)],
        body: Option<Value>,
    ) -> Result<Response, CallError> {
        self.0.send(target, op, params, body).await
    }

    async fn call(&self, op: &str, params: &[(&str, &str)], body: Option<Value>) -> Result<Response, CallError> {
        self.call_as(&self.target, op, params, body).await
    }

    /// A request the client would refuse to build (a required field left out), sent as is.
    async fn raw(&self, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
        let url = format!("{}{path}", self.sandbox.base_url(Service::Taxjar));
        let response = self
            .http
            .request(method, url)
            .bearer_auth("sandbox-taxjar-token")
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, serde_json::from_slice(&response.bytes().await.unwrap()).unwrap())
    }

    async fn json(&self, op: &str, params: &[(&str, &str)], body: Option<Value>) -> Value {
        let response = self.call(op, params, body).await.unwrap_or_else(|e| panic!("{op}: {e}"));
        serde_json::from_slice(&response.body).expect("JSON body")
    }
}

fn api_error(result: Result<Response, CallError>) -> client::ApiError {
    match result {
        Err(CallError::Api(e)) => e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn docs_calculation() -> Value {
    json!({"from_country":"US","from_zip":"92093","from_state":"CA","from_city":"La Jolla","from_street":"9500 Gilman Drive",
      "to_country":"US","to_zip":"90002","to_state":"CA","to_city":"Los Angeles","to_street":"1335 E 103rd St",
      "amount":15,"shipping":1.5,
      "nexus_addresses":[{"id":"Main Location","country":"US","zip":"92093","state":"CA","city":"La Jolla","street":"9500 Gilman Drive"}],
      "line_items":[{"id":"1","quantity":1,"product_tax_code":"20010","unit_price":15,"discount":0}]})
}

#[tokio::test]
async fn wrong_token_gets_taxjars_401() {
    let taxjar = Taxjar::start().await;
    let mut wrong = taxjar.target.clone();
    wrong.credentials = Credentials::Taxjar(Secret::new("not-the-token"));
    let error = api_error(taxjar.call_as(&wrong, "categories_list", &[], None).await);
    assert_eq!(error.status, 401);
    assert_eq!(error.code.as_deref(), Some("Unauthorized"));
    assert_eq!(error.message, "Not authorized for route 'GET /v2/categories'");
}

#[tokio::test]
async fn calculation_matches_the_docs_example() {
    let taxjar = Taxjar::start().await;
    let tax = &taxjar.json("taxes_calculate", &[], Some(docs_calculation())).await["tax"];
    assert_eq!(tax["order_total_amount"], json!(16.5));
    assert_eq!(tax["taxable_amount"], json!(15));
    assert_eq!(tax["amount_to_collect"], json!(1.35));
    assert_eq!(tax["rate"], json!(0.09));
    assert_eq!(tax["has_nexus"], json!(true));
    assert_eq!(tax["freight_taxable"], json!(false));
    assert_eq!(tax["tax_source"], "destination");
    assert_eq!(tax["jurisdictions"], json!({"country":"US","state":"CA","county":"LOS ANGELES","city":"LOS ANGELES"}));
    let breakdown = &tax["breakdown"];
    assert_eq!(breakdown["state_tax_collectable"], json!(0.94));
    assert_eq!(breakdown["county_tax_collectable"], json!(0.04));
    assert_eq!(breakdown["special_district_tax_collectable"], json!(0.38));
    assert!(breakdown.get("shipping").is_none());
    let line = &breakdown["line_items"][0];
    assert_eq!(
        (line["id"].as_str(), &line["state_amount"], &line["special_tax_rate"]),
        (Some("1"), &json!(0.94), &json!(0.025))
    );
}

#[tokio::test]
async fn calculation_with_freight_nexus_and_customers() {
    let taxjar = Taxjar::start().await;
    // New Jersey taxes shipping: the Ruby fixture's 1.16.
    let nj = json!({"from_country":"US","from_zip":"07001","from_state":"NJ","to_country":"US","to_zip":"07446","to_state":"NJ",
        "amount":15,"shipping":1.5,"exemption_type":"non_exempt",
        "nexus_addresses":[{"country":"US","state":"NJ"}],
        "line_items":[{"id":"1","quantity":1,"unit_price":15}]});
    let tax = &taxjar.json("taxes_calculate", &[], Some(nj)).await["tax"];
    assert_eq!(
        (&tax["amount_to_collect"], &tax["freight_taxable"], &tax["exemption_type"]),
        (&json!(1.16), &json!(true), &json!("non_exempt"))
    );
    assert_eq!(tax["breakdown"]["shipping"]["tax_collectable"], json!(0.11));
    // No nexus in Oregon (docs' FL → OR example): nothing to collect, no breakdown.
    let oregon = json!({"from_country":"US","from_zip":"33101","from_state":"FL","to_country":"US","to_zip":"97035","to_state":"OR","amount":15,"shipping":1.5});
    let tax = &taxjar.json("taxes_calculate", &[], Some(oregon)).await["tax"];
    assert_eq!(
        (&tax["has_nexus"], &tax["amount_to_collect"], &tax["tax_source"]),
        (&json!(false), &json!(0), &Value::Null)
    );
    assert!(tax.get("breakdown").is_none());
    // A new wholesale customer exempt in CA makes a CA sale exempt; deleting it restores the tax.
    let customer = json!({"customer_id":"reseller-9","exemption_type":"wholesale","name":"Reseller",
        "exempt_regions":[{"country":"US","state":"CA"}]});
    taxjar.json("customers_create", &[], Some(customer)).await;
    let mut body = docs_calculation();
    body["customer_id"] = json!("reseller-9");
    let tax = &taxjar.json("taxes_calculate", &[], Some(body.clone())).await["tax"];
    assert_eq!((&tax["amount_to_collect"], &tax["exemption_type"]), (&json!(0), &json!("wholesale")));
    taxjar.json("customers_delete", &[("customer_id", "reseller-9")], None).await;
    // Without its customer the id is ignored and the sale taxed again.
    let tax = &taxjar.json("taxes_calculate", &[], Some(body)).await["tax"];
    assert_ne!(tax["amount_to_collect"], json!(0));
    // International: Toronto at 13%.
    let mut toronto = json!({"to_country":"CA","to_zip":"M5V 2T6","to_state":"ON","amount":15,"shipping":1.5,
        "nexus_addresses":[{"country":"CA","state":"ON"}]});
    let tax = &taxjar.json("taxes_calculate", &[], Some(toronto.clone())).await["tax"];
    assert_eq!((&tax["amount_to_collect"], &tax["has_nexus"]), (&json!(2.15), &json!(true)));
    // "If has_nexus is false or no line items are provided, no breakdown is returned."
    assert!(tax.get("breakdown").is_none(), "{tax}");
    toronto["line_items"] = json!([{"id": "1", "quantity": 1, "unit_price": 15}]);
    let tax = &taxjar.json("taxes_calculate", &[], Some(toronto)).await["tax"];
    assert_eq!(
        (&tax["amount_to_collect"], &tax["breakdown"]["gst"], &tax["breakdown"]["pst_tax_rate"]),
        (&json!(2.15), &json!(0.83), &json!(0.08))
    );
}

#[tokio::test]
async fn calculation_refuses_bad_input_with_taxjars_errors() {
    let taxjar = Taxjar::start().await;
    let (status, body) = taxjar
        .raw(
            reqwest::Method::POST,
            "/v2/taxes",
            json!({"to_country":"US","to_zip":"90002","to_state":"CA","amount":15}),
        )
        .await;
    assert_eq!((status, body), (406, json!({"error":"Not Acceptable","detail":"shipping is missing","status":406})));
    let cases = [
        (
            json!({"to_country":"US","to_zip":"90002","to_state":"NY","amount":15,"shipping":0}),
            400,
            "to_zip 90002 is not used within to_state NY",
        ),
        (
            json!({"to_country":"US","to_zip":"9000","to_state":"CA","amount":15,"shipping":0}),
            400,
            "to_zip 9000 is not a valid postal code",
        ),
        (
            json!({"to_country":"US","to_zip":"90002","to_state":"CA","shipping":0,"line_items":[{"quantity":-1,"unit_price":5}]}),
            400,
            "line_items[0].quantity must not be negative",
        ),
    ];
    for (body, status, detail) in cases {
        let error = api_error(taxjar.call("taxes_calculate", &[], Some(body)).await);
        assert_eq!((error.status, error.message.as_str()), (status, detail));
    }
}

fn order(id: &str) -> Value {
    json!({"transaction_id": id, "transaction_date": "2015/05/14", "from_country": "US", "from_zip": "93107",
      "from_state": "CA", "from_city": "Santa Barbara", "from_street": "1281 State St", "to_country": "US",
      "to_zip": "90002", "to_state": "CA", "to_city": "Los Angeles", "to_street": "123 Palm Grove Ln",
      "amount": 17.45, "shipping": 1.5, "sales_tax": 0.95, "exemption_type": "non_exempt",
      "line_items": [{"id": "1", "quantity": 1, "product_identifier": "12-34243-9", "description": "Fuzzy Widget",
                      "product_tax_code": "20010", "unit_price": 15, "discount": 0, "sales_tax": 0.95}]})
}

#[tokio::test]
async fn orders_and_refunds_lifecycle() {
    let taxjar = Taxjar::start().await;
    let created = &taxjar.json("orders_create", &[], Some(order("T-100"))).await["order"];
    assert_eq!(created["transaction_date"], "2015-05-14T00:00:00.000Z");
    assert_eq!(
        (&created["amount"], &created["to_city"], &created["user_id"]),
        (&json!("17.45"), &json!("LOS ANGELES"), &json!(10649))
    );
    assert_eq!(created["line_items"][0]["unit_price"], "15.0");
    // Duplicate id: TaxJar's 422, and the order is unchanged.
    let mut again = order("T-100");
    again["amount"] = json!(99);
    let error = api_error(taxjar.call("orders_create", &[], Some(again)).await);
    assert_eq!((error.status, error.code.as_deref()), (422, Some("Unprocessable Entity")));
    let got = &taxjar.json("orders_get", &[("transaction_id", "T-100")], None).await["order"];
    assert_eq!(got["amount"], "17.45");
    // Lists by day and by range, beside the seeded order of TaxJar's docs (123, of that day).
    let day = taxjar.json("orders_list", &[("transaction_date", "2015/05/14")], None).await;
    assert_eq!(day["orders"], json!(["123", "T-100"]));
    let range = taxjar
        .json("orders_list", &[("from_transaction_date", "2015/05/01"), ("to_transaction_date", "2015/05/31")], None)
        .await;
    assert_eq!(range["orders"], json!(["123", "T-100"]));
    let error = api_error(taxjar.call("orders_list", &[("transaction_date", "2015/13/40")], None).await);
    assert_eq!(error.status, 400);
    // Update.
    let updated = &taxjar
        .json("orders_update", &[("transaction_id", "T-100")], Some(json!({"amount": 20, "shipping": 5})))
        .await["order"];
    assert_eq!(
        (&updated["amount"], &updated["shipping"], &updated["sales_tax"]),
        (&json!("20.0"), &json!("5.0"), &json!("0.95"))
    );
    // A refund of it, signed negative; one of an unknown order is refused.
    let mut refund = order("T-100-R");
    refund["transaction_reference_id"] = json!("T-100");
    let created = &taxjar.json("refunds_create", &[], Some(refund.clone())).await["refund"];
    assert_eq!((&created["amount"], &created["transaction_reference_id"]), (&json!("-17.45"), &json!("T-100")));
    // A refund of an order TaxJar does not have is accepted (whether production refuses it is
    // not known).
    refund["transaction_id"] = json!("T-101-R");
    refund["transaction_reference_id"] = json!("NOPE");
    let other = &taxjar.json("refunds_create", &[], Some(refund)).await["refund"];
    assert_eq!(other["transaction_reference_id"], "NOPE");
    let refunds = taxjar.json("refunds_list", &[("transaction_date", "2015/05/14")], None).await;
    assert_eq!(refunds["refunds"], json!(["321", "T-100-R", "T-101-R"]));
    // A refund may carry its order's id (recorded 201; refunds and orders are kept apart).
    let same = &taxjar
        .json(
            "refunds_create",
            &[],
            Some(json!({"transaction_id": "T-100", "transaction_reference_id": "T-100",
            "transaction_date": "2015/05/14", "to_country": "US", "to_zip": "90002", "to_state": "CA",
            "amount": 1, "shipping": 0, "sales_tax": 0})),
        )
        .await["refund"];
    assert_eq!((&same["transaction_id"], &same["transaction_reference_id"]), (&json!("T-100"), &json!("T-100")));
    assert_eq!(taxjar.json("orders_get", &[("transaction_id", "T-100")], None).await["order"]["amount"], "20.0");
    // The seeded order and refund of TaxJar's docs answer as its examples show.
    let docs = &taxjar.json("refunds_get", &[("transaction_id", "321")], None).await["refund"];
    assert_eq!(
        (&docs["transaction_reference_id"], &docs["amount"], &docs["line_items"][0]["description"]),
        (&json!("123"), &json!("-17.45"), &json!("Fuzzy Widget"))
    );
    let got = &taxjar.json("refunds_get", &[("transaction_id", "T-100-R")], None).await["refund"];
    assert_eq!(got["sales_tax"], "-0.95");
    let updated = &taxjar
        .json(
            "refunds_update",
            &[("transaction_id", "T-100-R")],
            Some(json!({"transaction_reference_id": "T-100", "shipping": 2})),
        )
        .await["refund"];
    assert_eq!(updated["shipping"], "-2.0");
    let deleted = &taxjar.json("refunds_delete", &[("transaction_id", "T-100-R")], None).await["refund"];
    assert_eq!((&deleted["transaction_id"], &deleted["amount"]), (&json!("T-100-R"), &Value::Null));
    // Delete, then it is gone.
    let deleted = &taxjar.json("orders_delete", &[("transaction_id", "T-100")], None).await["order"];
    assert_eq!((&deleted["transaction_id"], &deleted["line_items"]), (&json!("T-100"), &json!([])));
    let error = api_error(taxjar.call("orders_get", &[("transaction_id", "T-100")], None).await);
    assert_eq!((error.status, error.code.as_deref()), (404, Some("Not Found")));
    assert_eq!(api_error(taxjar.call("orders_delete", &[("transaction_id", "T-100")], None).await).status, 404);
}

#[tokio::test]
async fn transaction_bad_input_changes_nothing() {
    let taxjar = Taxjar::start().await;
    let before = taxjar.json("orders_list", &[], None).await;
    let cases: Vec<(Value, u16, &str)> = vec![
        (
            {
                let mut o = order("X2");
                o["transaction_date"] = json!("14 May");
                o
            },
            400,
            "",
        ),
        (
            {
                let mut o = order("X3");
                o["to_state"] = json!("NY");
                o
            },
            400,
            "to_zip 90002 is not used within to_state NY",
        ),
        (
            {
                let mut o = order("X4");
                o["line_items"][0]["quantity"] = json!(-2);
                o
            },
            400,
            "line_items[0].quantity must not be negative",
        ),
        (
            {
                let mut o = order("X5");
                o["line_items"][0].as_object_mut().unwrap().remove("sales_tax");
                o
            },
            406,
            "line_items[0].sales_tax is missing",
        ),
        (
            {
                let mut o = order("X6");
                o["exemption_type"] = json!("wholesale");
                o
            },
            400,
            "sales_tax must be 0 for exemption_type wholesale",
        ),
        (
            {
                let mut o = order("bad id!");
                o["transaction_id"] = json!("bad id!");
                o
            },
            400,
            "",
        ),
    ];
    for (body, status, detail) in cases {
        let error = api_error(taxjar.call("orders_create", &[], Some(body)).await);
        assert_eq!(error.status, status, "{}", error.message);
        if !detail.is_empty() {
            assert_eq!(error.message, detail);
        }
    }
    let mut undated = order("X1");
    undated.as_object_mut().unwrap().remove("transaction_date");
    let (status, body) = taxjar.raw(reqwest::Method::POST, "/v2/transactions/orders", undated).await;
    assert_eq!((status, body["detail"].as_str()), (406, Some("transaction_date is missing")));
    assert_eq!(taxjar.json("orders_list", &[], None).await, before);
    let error =
        api_error(taxjar.call("orders_update", &[("transaction_id", "nope")], Some(json!({"amount": 1}))).await);
    assert_eq!(error.status, 404);
}

#[tokio::test]
async fn seeded_data_and_customers() {
    let taxjar = Taxjar::start().await;
    let orders = taxjar.json("orders_list", &[], None).await;
    assert!(orders["orders"].as_array().unwrap().len() >= 12);
    let first = orders["orders"][0].as_str().unwrap().to_owned();
    let order = &taxjar.json("orders_get", &[("transaction_id", &first)], None).await["order"];
    assert_eq!(order["provider"], "api");
    assert!(!taxjar.json("refunds_list", &[], None).await["refunds"].as_array().unwrap().is_empty());
    let customers = taxjar.json("customers_list", &[], None).await;
    assert!(customers["customers"].as_array().unwrap().contains(&json!("123")));
    let dunder = &taxjar.json("customers_get", &[("customer_id", "123")], None).await["customer"];
    assert_eq!(dunder["exempt_regions"], json!([{"country":"US","state":"FL"},{"country":"US","state":"PA"}]));
    let updated = &taxjar
        .json(
            "customers_update",
            &[("customer_id", "123")],
            Some(json!({"exemption_type":"non_exempt","name":"Dunder Mifflin"})),
        )
        .await["customer"];
    assert_eq!((&updated["exemption_type"], &updated["exempt_regions"]), (&json!("non_exempt"), &json!([])));
    let error = api_error(
        taxjar
            .call("customers_create", &[], Some(json!({"customer_id":"123","exemption_type":"other","name":"x"})))
            .await,
    );
    assert_eq!(error.status, 422);
    let (status, body) =
        taxjar.raw(reqwest::Method::POST, "/v2/customers", json!({"customer_id":"c9","name":"x"})).await;
    assert_eq!((status, body["detail"].as_str()), (406, Some("exemption_type is missing")));
    let error = api_error(taxjar.call("customers_create", &[], Some(json!({"customer_id":"c9","exemption_type":"wholesale","name":"x","exempt_regions":[{"country":"US","state":"ZZ"}]}))).await);
    assert_eq!(error.status, 400);
    assert_eq!(api_error(taxjar.call("customers_get", &[("customer_id", "c9")], None).await).status, 404);
}

#[tokio::test]
async fn lookups() {
    let taxjar = Taxjar::start().await;
    let regions = taxjar.json("nexus_list", &[], None).await;
    let codes: Vec<&str> =
        regions["regions"].as_array().unwrap().iter().filter_map(|r| r["region_code"].as_str()).collect();
    assert!(codes.contains(&"CA") && codes.contains(&"NY") && codes.contains(&"WA"));
    let categories = taxjar.json("categories_list", &[], None).await;
    assert!(categories["categories"].as_array().unwrap().iter().any(|c| c["product_tax_code"] == "31000"));
    let rate =
        &taxjar.json("rates_get", &[("zip", "90404"), ("city", "Santa Monica"), ("state", "CA")], None).await["rate"];
    assert_eq!(
        rate,
        &json!({"zip":"90404","state":"CA","state_rate":"0.0625","county":"LOS ANGELES","county_rate":"0.01",
        "city":"SANTA MONICA","city_rate":"0.0","combined_district_rate":"0.025","combined_rate":"0.0975","freight_taxable":false})
    );
    let sst = &taxjar.json("rates_get", &[("zip", "05495-2086")], None).await["rate"];
    assert_eq!(
        (&sst["country_rate"], &sst["combined_rate"], &sst["freight_taxable"]),
        (&json!("0.0"), &json!("0.07"), &json!(true))
    );
    let fallback = &taxjar.json("rates_get", &[("zip", "90000")], None).await["rate"];
    assert_eq!((&fallback["combined_rate"], &fallback["opsdeck_state_fallback"]), (&json!("0.0725"), &json!(true)));
    let finland = &taxjar.json("rates_get", &[("zip", "00150"), ("country", "FI")], None).await["rate"];
    assert_eq!((&finland["standard_rate"], &finland["name"]), (&json!("0.24"), &json!("Finland")));
    let vancouver = &taxjar.json("rates_get", &[("zip", "V5K0A1"), ("country", "CA")], None).await["rate"];
    assert_eq!((&vancouver["state"], &vancouver["combined_rate"]), (&json!("BC"), &json!("0.12")));
    assert_eq!(api_error(taxjar.call("rates_get", &[("zip", "ABCDE")], None).await).status, 400);
    let summary = taxjar.json("summary_rates_list", &[], None).await;
    let list = summary["summary_rates"].as_array().unwrap();
    assert!(list.iter().any(|r| r["country_code"] == "UK" && r["minimum_rate"]["rate"] == json!(0.2)));
    assert!(list.iter().any(|r| r["region_code"] == "CA" && r["minimum_rate"]["rate"] == json!(0.0725)));
    let found =
        taxjar.json("addresses_validate", &[("state", "AZ"), ("city", "Phoenix"), ("street", "1109 9th")], None).await;
    assert_eq!(found["addresses"].as_array().unwrap().len(), 2);
    let error =
        api_error(taxjar.call("addresses_validate", &[("street", "1 Nowhere Rd"), ("zip", "90002")], None).await);
    assert_eq!(error.status, 404);
    let vat = &taxjar.json("validations_validate", &[("vat", "FR40303265045")], None).await["validation"];
    assert_eq!(
        (&vat["valid"], &vat["exists"], &vat["vies_response"]["name"]),
        (&json!(true), &json!(true), &json!("SA SODIMAS"))
    );
    let bad = &taxjar.json("validations_validate", &[("vat", "FR41303265045")], None).await["validation"];
    assert_eq!(bad["valid"], json!(false));
    assert_eq!(api_error(taxjar.call("validations_validate", &[("vat", "12345")], None).await).status, 400);
}

/// What recorded TaxJar traffic shows production accepting, and how it answers.
#[tokio::test]
async fn orders_are_accepted_and_answered_as_taxjar_does() {
    let taxjar = Taxjar::start().await;
    // Unknown product tax codes and an unknown customer: 201, codes kept; a numeric line id
    // stays a number; the answer's date has milliseconds.
    let mut body = order("REAL-1");
    body["customer_id"] = json!("no-such-customer");
    body["line_items"][0]["id"] = json!(7);
    body["line_items"][0]["product_tax_code"] = json!("TaxCode - 410790");
    let (status, created) = taxjar.raw(reqwest::Method::POST, "/v2/transactions/orders", body).await;
    assert_eq!(status, 201, "{created}");
    let created = &created["order"];
    assert_eq!(created["customer_id"], "no-such-customer");
    assert_eq!(created["line_items"][0]["id"], json!(7));
    assert_eq!(created["line_items"][0]["product_tax_code"], "TaxCode - 410790");
    assert_eq!(created["transaction_date"], "2015-05-14T00:00:00.000Z");
    // The order as read back can be sent again (its date in the answer's own layout).
    let mut again = created.clone();
    again["transaction_id"] = json!("REAL-2");
    let (status, answer) = taxjar.raw(reqwest::Method::POST, "/v2/transactions/orders", again).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer["order"]["transaction_date"], "2015-05-14T00:00:00.000Z");
    // An order without an origin answers from_country "US".
    let mut no_origin = order("REAL-3");
    for field in ["from_country", "from_zip", "from_state", "from_city", "from_street"] {
        no_origin.as_object_mut().unwrap().remove(field);
    }
    let (status, answer) = taxjar.raw(reqwest::Method::POST, "/v2/transactions/orders", no_origin).await;
    assert_eq!((status, &answer["order"]["from_country"]), (201, &json!("US")));
    // A refund is created with 201 too.
    let mut refund = order("REAL-1-R");
    refund["transaction_reference_id"] = json!("REAL-1");
    let (status, _) = taxjar.raw(reqwest::Method::POST, "/v2/transactions/refunds", refund).await;
    assert_eq!(status, 201);
    // /v2/taxes: a code TaxJar does not define is ignored (taxed as general merchandise).
    let mut calc = docs_calculation();
    calc["line_items"] = json!([{"id": "1", "quantity": 1, "unit_price": 15, "product_tax_code": "123"}]);
    let (status, answer) = taxjar.raw(reqwest::Method::POST, "/v2/taxes", calc).await;
    assert_eq!(status, 200, "{answer}");
    assert_ne!(answer["tax"]["amount_to_collect"], json!(0));
}
