//! Every EasyPost operation through opsdeck's client against the in-process simulator: addresses,
//! parcels, shipments bought and their labels fetched, batches and trackers moved on the sandbox
//! clock, insurance, refunds, webhooks whose signed POSTs a receiver here checks, paging, and
//! EasyPost's error shape.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use hmac::{Hmac, Mac};
use opsdeck::catalog::{Paging, Service};
use opsdeck::client::{pagination, CallError, Response};
use opsdeck::sandbox::serve_loopback;
use serde_json::{json, Value};
use sha2::Sha256;

mod common;

struct EasyPost {
    sim: common::Simulated,
}

impl EasyPost {
    async fn start() -> EasyPost {
        EasyPost { sim: common::Simulated::start(Service::Easypost).await }
    }

    async fn call(&self, op: &str, params: &[(&str, &str)]) -> Result<Response, CallError> {
        self.sim.send(&self.sim.target, op, params, None).await
    }

    async fn json(&self, op: &str, params: &[(&str, &str)]) -> Value {
        let response = self.call(op, params).await.unwrap_or_else(|e| panic!("{op}: {e}"));
        serde_json::from_slice(&response.body).unwrap_or_else(|e| panic!("{op}: {e}"))
    }

    /// A file the simulator serves, fetched as a browser or the console would: no credentials.
    async fn fetch(&self, url: &str) -> (StatusCode, String, Vec<u8>) {
        let response = self.sim.http.get(url).send().await.unwrap();
        let status = response.status();
        let kind = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        (status, kind, response.bytes().await.unwrap().to_vec())
    }

    /// Moves the sandbox clock and lets the background task catch up.
    async fn advance(&self, ms: i64) {
        self.sim.sandbox.clock().advance(ms);
        tokio::time::timeout(Duration::from_secs(60), self.sim.sandbox.caught_up())
            .await
            .expect("the background task caught up with the clock");
    }

    async fn new_shipment(&self) -> Value {
        let shipment = json!({"to_address": {"name": "Dr. Steve Brule", "street1": "179 N Harbor Dr", "city": "Redondo Beach", "state": "CA", "zip": "90277"},
                              "from_address": {"name": "EasyPost", "street1": "417 Montgomery St", "city": "San Francisco", "state": "CA", "zip": "94104"},
                              "parcel": {"length": 10, "width": 8, "height": 4, "weight": 15.4}});
        self.json("shipments_create", &[("shipment", &shipment.to_string())]).await
    }
}

/// A POST the receiver got: headers and body.
type Post = (HeaderMap, Vec<u8>);

fn api_error(result: Result<Response, CallError>) -> opsdeck::client::ApiError {
    match result {
        Err(CallError::Api(e)) => e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn lowest(shipment: &Value) -> Value {
    let mut rates = shipment["rates"].as_array().unwrap().clone();
    rates.sort_by(|a, b| {
        let price = |r: &Value| r["rate"].as_str().unwrap().parse::<f64>().unwrap();
        price(a).total_cmp(&price(b))
    });
    rates[0].clone()
}

#[tokio::test]
async fn addresses_and_parcels() {
    let ep = EasyPost::start().await;
    let fields = json!({"name": "Jack Sparrow", "street1": "388 Townsend St", "street2": "Apt 20", "city": "San Francisco", "state": "CA", "zip": "94107"});
    let plain = ep.json("addresses_create", &[("address", &fields.to_string())]).await;
    assert!(plain["id"].as_str().unwrap().starts_with("adr_"));
    assert_eq!((plain["street1"].as_str(), plain["verifications"].clone()), (Some("388 Townsend St"), json!({})));
    let verified = ep.json("addresses_create", &[("address", &fields.to_string()), ("verify", "true")]).await;
    assert_eq!(verified["street1"], "388 TOWNSEND ST APT 20");
    assert_eq!(verified["verifications"]["delivery"]["details"]["time_zone"], "America/Los_Angeles");
    let wrapped = ep.json("addresses_create_and_verify", &[("address", &fields.to_string())]).await;
    assert!(wrapped["address"]["zip"].as_str().unwrap().starts_with("94107-"));
    let by_id = ep.json("addresses_verify", &[("id", plain["id"].as_str().unwrap())]).await;
    assert_ne!(by_id["address"]["id"], plain["id"], "a verified copy is a new address");
    let got = ep.json("addresses_get", &[("id", plain["id"].as_str().unwrap())]).await;
    assert_eq!(got["street1"], "388 Townsend St", "the original is unchanged");
    let listed = ep.json("addresses_list", &[("page_size", "2")]).await;
    assert_eq!(listed["addresses"].as_array().unwrap().len(), 2);
    assert_eq!(listed["has_more"], true);
    let bad = api_error(
        ep.call("addresses_create_and_verify", &[("address", r#"{"street1": "Nowhere", "zip": "00000"}"#)]).await,
    );
    assert_eq!((bad.status, bad.code.as_deref()), (422, Some("ADDRESS.VERIFY.FAILURE")));
    assert!(bad.message.contains("Unable to verify address"), "{}", bad.message);
    let strict = api_error(
        ep.call(
            "addresses_create",
            &[("address", r#"{"street1": "Main St", "zip": "94107"}"#), ("verify_strict", "true")],
        )
        .await,
    );
    assert_eq!(strict.status, 422);
    let parcel = ep
        .json("parcels_create", &[("parcel", r#"{"length": 20.2, "width": 10.9, "height": 5, "weight": 65.9}"#)])
        .await;
    assert_eq!(parcel["weight"], 65.9);
    let got = ep.json("parcels_get", &[("id", parcel["id"].as_str().unwrap())]).await;
    assert_eq!(got["id"], parcel["id"]);
    let impossible = api_error(ep.call("parcels_create", &[("parcel", r#"{"weight": 10, "length": 5}"#)]).await);
    assert_eq!((impossible.status, impossible.code.as_deref()), (422, Some("PARCEL.DIMENSIONS.INCOMPLETE")));
    let unknown = api_error(ep.call("parcels_get", &[("id", "prcl_nope")]).await);
    assert_eq!((unknown.status, unknown.code.as_deref()), (404, Some("NOT_FOUND")));
}

#[tokio::test]
async fn shipments_bought_labelled_listed_and_paged() {
    let ep = EasyPost::start().await;
    let shipment = ep.new_shipment().await;
    let id = shipment["id"].as_str().unwrap().to_owned();
    let rate = lowest(&shipment);
    let bought = ep
        .json(
            "shipments_buy",
            &[("id", &id), ("rate", &json!({"id": rate["id"]}).to_string()), ("insurance", "249.99")],
        )
        .await;
    assert_eq!(bought["selected_rate"]["id"], rate["id"]);
    assert_eq!(bought["insurance"], "249.99");
    let code = bought["tracking_code"].as_str().unwrap().to_owned();
    let twice =
        api_error(ep.call("shipments_buy", &[("id", &id), ("rate", &json!({"id": rate["id"]}).to_string())]).await);
    assert_eq!((twice.status, twice.code.as_deref()), (422, Some("SHIPMENT.POSTAGE.EXISTS")));
    let (status, kind, png) = ep.fetch(bought["postage_label"]["label_url"].as_str().unwrap()).await;
    assert_eq!((status, kind.as_str()), (StatusCode::OK, "image/png"));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    let pdf = ep.json("shipments_label", &[("id", &id), ("file_format", "PDF")]).await;
    let (_, kind, bytes) = ep.fetch(pdf["postage_label"]["label_pdf_url"].as_str().unwrap()).await;
    assert_eq!(kind, "application/pdf");
    assert!(bytes.starts_with(b"%PDF-"));
    let zpl = ep.json("shipments_label", &[("id", &id), ("file_format", "ZPL")]).await;
    let (_, _, bytes) = ep.fetch(zpl["postage_label"]["label_zpl_url"].as_str().unwrap()).await;
    assert!(String::from_utf8(bytes).unwrap().contains(&code));
    let got = ep.json("shipments_get", &[("id", &id)]).await;
    assert_eq!(got["postage_label"]["label_zpl_url"], zpl["postage_label"]["label_zpl_url"]);
    let not_bought = ep.new_shipment().await;
    let early = api_error(
        ep.call("shipments_label", &[("id", not_bought["id"].as_str().unwrap()), ("file_format", "PDF")]).await,
    );
    assert_eq!(early.status, 422);
    // Only bought shipments by default; all with purchased=false.
    let bought_only = ep.json("shipments_list", &[("page_size", "100")]).await;
    assert!(bought_only["shipments"].as_array().unwrap().iter().all(|s| !s["selected_rate"].is_null()));
    let all = ep.json("shipments_list", &[("page_size", "100"), ("purchased", "false")]).await;
    assert!(all["shipments"].as_array().unwrap().iter().any(|s| s["id"] == not_bought["id"]));
    // Walk every page the way `--all-pages` does: before_id of the last record.
    let op = Service::Easypost.operation("shipments_list").unwrap();
    assert_eq!(op.paging, Paging::HasMore);
    let values =
        [("page_size", "4"), ("purchased", "false")].iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let mut request = opsdeck::client::build(op, &values, None, &ep.sim.target).unwrap();
    let mut seen = Vec::new();
    for _ in 0..50 {
        let response = opsdeck::client::request::execute(
            &ep.sim.http,
            &request,
            &ep.sim.target.credentials,
            &opsdeck::client::HttpSettings::default(),
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap();
        let page: Value = serde_json::from_slice(&response.body).unwrap();
        seen.extend(page["shipments"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()));
        match pagination::next_page(op.paging, &request, &response).unwrap() {
            Some(next) => request = next,
            None => break,
        }
    }
    let unique: std::collections::HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no record twice");
    assert_eq!(seen.len(), all["shipments"].as_array().unwrap().len(), "every record once");
    assert!(seen.len() > 8, "{}", seen.len());
}

#[tokio::test]
async fn batches_from_creating_to_a_scan_form() {
    let ep = EasyPost::start().await;
    let a = ep.new_shipment().await;
    let b = ep.new_shipment().await;
    let c = ep.new_shipment().await;
    let batch = ep
        .json(
            "batches_create",
            &[("batch", &json!({"shipments": [{"id": a["id"]}, {"id": b["id"]}], "reference": "t"}).to_string())],
        )
        .await;
    assert_eq!(batch["state"], "creating");
    let id = batch["id"].as_str().unwrap().to_owned();
    ep.advance(2_000).await;
    assert_eq!(ep.json("batches_get", &[("id", &id)]).await["state"], "created");
    let added =
        ep.json("batches_add_shipments", &[("id", &id), ("shipments", &json!([{"id": c["id"]}]).to_string())]).await;
    assert_eq!(added["num_shipments"], 3);
    let removed =
        ep.json("batches_remove_shipments", &[("id", &id), ("shipments", &json!([{"id": c["id"]}]).to_string())]).await;
    assert_eq!(removed["num_shipments"], 2);
    let missing = api_error(
        ep.call("batches_remove_shipments", &[("id", &id), ("shipments", &json!([{"id": c["id"]}]).to_string())]).await,
    );
    assert_eq!(missing.status, 422);
    let buying = ep.json("batches_buy", &[("id", &id)]).await;
    assert_eq!(buying["status"]["queued_for_purchase"], 2);
    ep.advance(5_000).await;
    let bought = ep.json("batches_get", &[("id", &id)]).await;
    assert_eq!(
        (bought["state"].as_str(), bought["status"]["postage_purchased"].as_u64()),
        (Some("purchased"), Some(2))
    );
    // A purchased batch still takes shipments (EasyPost does not make callers wait on a state).
    let added =
        ep.json("batches_add_shipments", &[("id", &id), ("shipments", &json!([{"id": c["id"]}]).to_string())]).await;
    assert_eq!(added["num_shipments"], 3);
    let labelling = ep.json("batches_label", &[("id", &id), ("file_format", "PDF")]).await;
    assert_eq!(labelling["state"], "label_generating");
    ep.advance(2_000).await;
    let labelled = ep.json("batches_get", &[("id", &id)]).await;
    assert_eq!(labelled["state"], "label_generated");
    let (_, _, pdf) = ep.fetch(labelled["label_url"].as_str().unwrap()).await;
    assert!(String::from_utf8_lossy(&pdf).contains("/Count 2"), "one page per label");
    let form = ep.json("batches_scan_form", &[("id", &id)]).await;
    assert_eq!(form["scan_form"]["status"], "creating");
    ep.advance(2_000).await;
    let scanned = ep.json("batches_get", &[("id", &id)]).await;
    assert_eq!(scanned["scan_form"]["status"], "created");
    let (_, kind, _) = ep.fetch(scanned["scan_form"]["form_url"].as_str().unwrap()).await;
    assert_eq!(kind, "application/pdf");
    let listed = ep.json("batches_list", &[("page_size", "1")]).await;
    assert_eq!(listed["batches"][0]["id"], id.as_str());
    // The catalog knows the formats: a PNG batch label is refused before anything is sent.
    let bad = ep.call("batches_label", &[("id", &id), ("file_format", "PNG")]).await;
    assert!(matches!(bad, Err(CallError::Invalid(ref m)) if m.contains("PDF, ZPL, EPL2")), "{bad:?}");
}

#[tokio::test]
async fn trackers_insurance_and_refunds() {
    let ep = EasyPost::start().await;
    let tracker =
        ep.json("trackers_create", &[("tracker", r#"{"tracking_code": "EZ4000000004", "carrier": "USPS"}"#)]).await;
    assert_eq!(tracker["status"], "delivered");
    let same = ep.json("trackers_create", &[("tracker", r#"{"tracking_code": "EZ4000000004"}"#)]).await;
    assert_eq!(same["id"], tracker["id"]);
    let got = ep.json("trackers_get", &[("id", tracker["id"].as_str().unwrap())]).await;
    assert_eq!(got["tracking_details"].as_array().unwrap().last().unwrap()["status"], "delivered");
    let filtered = ep.json("trackers_list", &[("tracking_code", "EZ4000000004")]).await;
    assert_eq!(filtered["trackers"].as_array().unwrap().len(), 1);
    let shipment = ep.new_shipment().await;
    let id = shipment["id"].as_str().unwrap();
    let bought =
        ep.json("shipments_buy", &[("id", id), ("rate", &json!({"id": lowest(&shipment)["id"]}).to_string())]).await;
    let carrier = bought["selected_rate"]["carrier"].as_str().unwrap();
    let code = bought["tracking_code"].as_str().unwrap();
    let refunds = ep
        .json("refunds_create", &[("refund", &json!({"carrier": carrier, "tracking_codes": [code]}).to_string())])
        .await;
    assert_eq!(refunds[0]["status"], "submitted");
    let refund_id = refunds[0]["id"].as_str().unwrap();
    ep.advance(6 * 60_000).await;
    assert_eq!(ep.json("refunds_get", &[("id", refund_id)]).await["status"], "refunded");
    assert!(ep.json("refunds_list", &[]).await["refunds"].as_array().unwrap().iter().any(|r| r["id"] == refund_id));
    let insurance = json!({"tracking_code": "9400100000000000000042", "carrier": "USPS", "amount": "100.00",
        "to_address": {"street1": "179 N Harbor Dr", "city": "Redondo Beach", "state": "CA", "zip": "90277"},
        "from_address": {"street1": "417 Montgomery St", "city": "San Francisco", "state": "CA", "zip": "94104"}});
    let created = ep.json("insurance_create", &[("insurance", &insurance.to_string())]).await;
    assert_eq!(created["status"], "pending");
    let ins = created["id"].as_str().unwrap();
    ep.advance(4_000).await;
    assert_eq!(ep.json("insurance_get", &[("id", ins)]).await["status"], "purchased");
    assert!(ep.json("insurance_list", &[]).await["insurances"].as_array().unwrap().iter().any(|i| i["id"] == ins));
    let refunded = ep.json("insurance_refund", &[("id", ins)]).await;
    assert_eq!(refunded["status"], "cancelled");
    let again = api_error(ep.call("insurance_refund", &[("id", ins)]).await);
    assert_eq!(again.status, 404);
}

#[tokio::test]
async fn webhooks_receive_signed_events_with_retries_and_custom_headers() {
    let ep = EasyPost::start().await;
    let received: Arc<Mutex<Vec<Post>>> = Arc::default();
    let got = Arc::clone(&received);
    let receiver = axum::Router::new().fallback(move |headers: HeaderMap, body: axum::body::Bytes| {
        let got = Arc::clone(&got);
        async move {
            let mut all = got.lock().unwrap();
            let id = |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap_or(Value::Null)["id"].clone();
            // The first POST of each event fails, so the retry shows.
            let first = !all.iter().any(|(_, b)| id(b) == id(&body));
            all.push((headers, body.to_vec()));
            if first {
                StatusCode::SERVICE_UNAVAILABLE
            } else {
                StatusCode::OK
            }
        }
    });
    let url = format!("{}/easypost", serve_loopback(receiver).await.unwrap());
    let secret = "s3cret-caf\u{e9}";
    let hook = ep
        .json(
            "webhooks_create",
            &[(
                "webhook",
                &json!({"url": url, "webhook_secret": secret, "custom_headers": [{"name": "X-Team", "value": "ops"}]})
                    .to_string(),
            )],
        )
        .await;
    assert!(hook.get("webhook_secret").is_none(), "the secret is write-only");
    let hook_id = hook["id"].as_str().unwrap().to_owned();
    // A webhook to a public URL is taken (EasyPost answers 201); the sandbox never posts to it.
    let public = ep.json("webhooks_create", &[("webhook", r#"{"url": "https://example.com/hook"}"#)]).await;
    assert_eq!(public["url"], "https://example.com/hook");
    assert!(ep.json("webhooks_list", &[]).await["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["id"] == hook_id.as_str()));
    assert_eq!(ep.json("webhooks_get", &[("id", &hook_id)]).await["url"], url.as_str());
    ep.json("trackers_create", &[("tracker", r#"{"tracking_code": "EZ3000000003", "carrier": "USPS"}"#)]).await;
    let of_tracker = |posts: &[Post]| -> Vec<Value> {
        posts
            .iter()
            .map(|(_, b)| serde_json::from_slice::<Value>(b).unwrap())
            .filter(|e| e["result"]["tracking_code"] == "EZ3000000003")
            .collect()
    };
    ep.advance(1_000).await;
    assert_eq!(of_tracker(&received.lock().unwrap()).len(), 1, "the first POST, answered 503");
    ep.advance(30_000).await;
    let posts = received.lock().unwrap().clone();
    let mine = of_tracker(&posts);
    assert_eq!(mine.len(), 2, "retried 30 s later");
    assert_eq!(mine[0]["id"], mine[1]["id"]);
    assert_eq!((mine[0]["object"].as_str(), mine[0]["description"].as_str()), (Some("Event"), Some("tracker.created")));
    for (headers, body) in &posts {
        let key: String = unicode_nfkd(secret);
        let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).unwrap();
        mac.update(body);
        let hex: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(headers["x-hmac-signature"].to_str().unwrap(), format!("hmac-sha256-hex={hex}"));
        assert_eq!(headers["x-team"], "ops");
    }
    let updated = ep.json("webhooks_update", &[("id", &hook_id), ("webhook_secret", "")]).await;
    assert_eq!(updated["disabled_at"], Value::Null);
    ep.json("webhooks_delete", &[("id", &hook_id)]).await;
    let gone = api_error(ep.call("webhooks_get", &[("id", &hook_id)]).await);
    assert_eq!(gone.status, 404);
    let log: Value = serde_json::from_slice(
        &ep.sim
            .http
            .get(format!("{}/easypost/webhooks", ep.sim.sandbox.control_url()))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap(),
    )
    .unwrap();
    let outcomes: Vec<(&str, &str)> = log["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["event"] == "tracker.created")
        .map(|a| (a["outcome"].as_str().unwrap(), a["url"].as_str().unwrap()))
        .collect();
    let to = |target: &str| outcomes.iter().filter(|(_, u)| *u == target).map(|(o, _)| *o).collect::<Vec<_>>();
    assert_eq!(to(url.as_str()), ["delivered", "retrying"]);
    // The public one is in the log as not sent, with why.
    assert_eq!(to("https://example.com/hook"), ["not sent"]);
    assert!(log["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["url"] == "https://example.com/hook" && a["why"].is_string()));
}

/// The NFKD form EasyPost signs with: `é` as `e` and a combining accent.
fn unicode_nfkd(text: &str) -> String {
    text.replace('\u{e9}', "e\u{301}")
}

#[tokio::test]
async fn a_webhook_that_keeps_failing_is_disabled_until_updated() {
    let ep = EasyPost::start().await;
    let receiver = axum::Router::new().fallback(|| async { StatusCode::INTERNAL_SERVER_ERROR });
    let url = format!("{}/down", serve_loopback(receiver).await.unwrap());
    let hook = ep.json("webhooks_create", &[("webhook", &json!({"url": url}).to_string())]).await;
    let id = hook["id"].as_str().unwrap().to_owned();
    ep.json("trackers_create", &[("tracker", r#"{"tracking_code": "EZ2000000002", "carrier": "USPS"}"#)]).await;
    for wait in [1_000, 30_000, 60_000, 300_000, 900_000, 3_600_000] {
        ep.advance(wait).await;
    }
    let disabled = ep.json("webhooks_get", &[("id", &id)]).await;
    assert!(disabled["disabled_at"].is_string(), "{disabled}");
    let enabled = ep.json("webhooks_update", &[("id", &id), ("url", &url)]).await;
    assert!(enabled["disabled_at"].is_null());
}
