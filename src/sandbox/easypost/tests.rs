//! The EasyPost simulator's rules without a network: requests through the router with
//! `oneshot`, time moved with `clock.advance`.

use axum::body::{to_bytes, Body};
use axum::http::Request;
use serde_json::{json, Value};
use tower::ServiceExt;

use super::*;
use crate::sandbox::SandboxClock;

const START_MS: i64 = 1_767_225_600_000; // Thu, 01 Jan 2026 00:00:00 UTC

fn simulator(seed: u64) -> (EasypostSimulator, SandboxClock) {
    let clock = SandboxClock::starting_at(START_MS, 1.0).unwrap();
    (EasypostSimulator::new(&Platform::new(seed, clock.clone())), clock)
}

struct Sent {
    status: u16,
    body: Value,
    bytes: Vec<u8>,
    content_type: String,
}

async fn send(router: &Router, method: &str, path: &str, body: Option<Value>) -> Sent {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {}", credentials::EASYPOST_KEY))
        .header("host", "127.0.0.1:7708")
        .header("content-type", "application/json");
    let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
    let response = router.clone().oneshot(request.body(body).unwrap()).await.unwrap();
    let status = response.status().as_u16();
    let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap().to_vec();
    Sent { status, body: serde_json::from_slice(&bytes).unwrap_or(Value::Null), bytes, content_type }
}

async fn get(router: &Router, path: &str) -> Sent {
    send(router, "GET", path, None).await
}

async fn post(router: &Router, path: &str, body: Value) -> Sent {
    send(router, "POST", path, Some(body)).await
}

fn to() -> Value {
    json!({"name": "Dr. Steve Brule", "street1": "179 N Harbor Dr", "city": "Redondo Beach", "state": "CA", "zip": "90277"})
}

fn from() -> Value {
    json!({"name": "EasyPost", "street1": "417 Montgomery St", "street2": "5th Floor", "city": "San Francisco", "state": "CA", "zip": "94104"})
}

async fn new_shipment(router: &Router) -> Value {
    let sent = post(
        router,
        "/v2/shipments",
        json!({"shipment": {"to_address": to(), "from_address": from(), "parcel": {"length": 10, "width": 8, "height": 4, "weight": 15.4}}}),
    )
    .await;
    assert_eq!(sent.status, 201, "{}", sent.body);
    sent.body
}

fn cheapest(shipment: &Value) -> Value {
    let mut rates = shipment["rates"].as_array().unwrap().clone();
    rates.sort_by(|a, b| {
        a["rate"]
            .as_str()
            .unwrap()
            .parse::<f64>()
            .unwrap()
            .total_cmp(&b["rate"].as_str().unwrap().parse::<f64>().unwrap())
    });
    rates[0].clone()
}

#[tokio::test]
async fn a_key_is_required_and_checked() {
    let (sim, _) = simulator(1);
    let router = sim.router();
    let anonymous = router.clone().oneshot(Request::get("/v2/shipments").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let body: Value = serde_json::from_slice(&to_bytes(anonymous.into_body(), 4096).await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "APIKEY.REQUIRED");
    // A key EasyPost does not take: 403 APIKEY.INACTIVE, as recorded.
    let wrong = Request::get("/v2/shipments").header("authorization", "Bearer EZTKwrong").body(Body::empty()).unwrap();
    let response = router.clone().oneshot(wrong).await.unwrap();
    assert_eq!(response.status(), 403);
    let body: Value = serde_json::from_slice(&to_bytes(response.into_body(), 4096).await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "APIKEY.INACTIVE");
    // Basic with the key as user and an empty password, as the Node SDK sends.
    let basic = format!(
        "Basic {}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, format!("{}:", credentials::EASYPOST_KEY))
    );
    let ok = Request::get("/v2/shipments").header("authorization", basic).body(Body::empty()).unwrap();
    assert_eq!(router.clone().oneshot(ok).await.unwrap().status(), 200);
}

#[tokio::test]
async fn shipments_are_rated_bought_once_and_labelled_in_every_format() {
    let (sim, _) = simulator(2);
    let router = sim.router();
    let shipment = new_shipment(&router).await;
    let carriers: std::collections::BTreeSet<&str> =
        shipment["rates"].as_array().unwrap().iter().map(|r| r["carrier"].as_str().unwrap()).collect();
    assert_eq!(carriers.len(), 3, "{carriers:?}");
    assert!(shipment["rates"].as_array().unwrap().len() >= 9);
    assert_eq!(shipment["usps_zone"], 4, "San Francisco to Redondo Beach is about 350 miles");
    let id = shipment["id"].as_str().unwrap();
    let rate = cheapest(&shipment);
    let bought =
        post(&router, &format!("/v2/shipments/{id}/buy"), json!({"rate": {"id": rate["id"]}, "insurance": "100"}))
            .await;
    assert_eq!(bought.status, 200, "{}", bought.body);
    let body = &bought.body;
    assert_eq!(body["selected_rate"]["id"], rate["id"]);
    assert!(body["tracking_code"].as_str().unwrap().len() >= 12);
    // Answered before any scan, as recorded: the label's tracker is unknown until its first.
    assert_eq!((&body["tracker"]["status"], &body["status"]), (&json!("unknown"), &json!("unknown")));
    let scanned = get(&router, &format!("/v2/shipments/{id}")).await.body;
    assert_eq!(scanned["tracker"]["status"], "pre_transit", "the first scan is made at the purchase");
    assert_eq!(body["insurance"], "100.00");
    let fees: Vec<&str> = body["fees"].as_array().unwrap().iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(fees, ["LabelFee", "PostageFee", "InsuranceFee"]);
    assert_eq!(body["fees"][1]["amount"], format!("{:.5}", rate["rate"].as_str().unwrap().parse::<f64>().unwrap()));
    // Twice is refused, and nothing changes.
    let again = post(&router, &format!("/v2/shipments/{id}/buy"), json!({"rate": {"id": rate["id"]}})).await;
    assert_eq!((again.status, again.body["error"]["code"].as_str()), (422, Some("SHIPMENT.POSTAGE.EXISTS")));
    // The PNG is served and decodes; PDF, ZPL and EPL2 by conversion.
    let url = body["postage_label"]["label_url"].as_str().unwrap();
    let path = url.trim_start_matches("http://127.0.0.1:7708");
    let png = get(&router, path).await;
    assert_eq!((png.status, png.content_type.as_str()), (200, "image/png"));
    assert!(png.bytes.starts_with(b"\x89PNG"));
    for (format, field, magic) in
        [("PDF", "label_pdf_url", &b"%PDF"[..]), ("ZPL", "label_zpl_url", b"^XA"), ("EPL2", "label_epl2_url", b"\nN")]
    {
        let converted = get(&router, &format!("/v2/shipments/{id}/label?file_format={format}")).await;
        assert_eq!(converted.status, 200, "{}", converted.body);
        let url = converted.body["postage_label"][field].as_str().unwrap().to_owned();
        let file = get(&router, url.trim_start_matches("http://127.0.0.1:7708")).await;
        assert!(file.bytes.starts_with(magic), "{format}");
        assert!(
            String::from_utf8_lossy(&file.bytes).contains(body["tracking_code"].as_str().unwrap()) || format == "PDF"
        );
    }
    let bad = get(&router, &format!("/v2/shipments/{id}/label?file_format=GIF")).await;
    assert_eq!((bad.status, bad.body["error"]["code"].as_str()), (422, Some("PARAMETER.INVALID")));
}

#[tokio::test]
async fn bad_input_is_refused_in_easyposts_shape_and_changes_nothing() {
    let (sim, _) = simulator(3);
    let router = sim.router();
    let before =
        get(&router, "/v2/shipments?page_size=100&purchased=false").await.body["shipments"].as_array().unwrap().len();
    let addresses_before =
        get(&router, "/v2/addresses?page_size=100").await.body["addresses"].as_array().unwrap().len();
    let empty = post(&router, "/v2/shipments", json!({"shipment": {}})).await;
    assert_eq!(empty.status, 422);
    assert_eq!(empty.body["error"]["code"], "PARAMETER.REQUIRED");
    assert_eq!(empty.body["error"]["errors"][0], json!({"field": "shipment", "message": "cannot be blank"}));
    let heavy = post(
        &router,
        "/v2/shipments",
        json!({"shipment": {"to_address": to(), "from_address": from(), "parcel": {"weight": -1}}}),
    )
    .await;
    assert_eq!((heavy.status, heavy.body["error"]["code"].as_str()), (422, Some("PARAMETER.INVALID")));
    let unknown = post(
        &router,
        "/v2/shipments",
        json!({"shipment": {"to_address": {"id": "adr_nope"}, "from_address": from(), "parcel": {"weight": 3}}}),
    )
    .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(
        get(&router, "/v2/shipments?page_size=100&purchased=false").await.body["shipments"].as_array().unwrap().len(),
        before
    );
    assert_eq!(
        get(&router, "/v2/addresses?page_size=100").await.body["addresses"].as_array().unwrap().len(),
        addresses_before
    );
    let rate = post(&router, "/v2/shipments/shp_nope/buy", json!({"rate": {"id": "rate_nope"}})).await;
    assert_eq!((rate.status, rate.body["error"]["code"].as_str()), (404, Some("NOT_FOUND")));
    let a = new_shipment(&router).await;
    let b = new_shipment(&router).await;
    let foreign = post(
        &router,
        &format!("/v2/shipments/{}/buy", a["id"].as_str().unwrap()),
        json!({"rate": {"id": b["rates"][0]["id"]}}),
    )
    .await;
    assert_eq!((foreign.status, foreign.body["error"]["code"].as_str()), (422, Some("SHIPMENT.RATE.INVALID")));
    let strict = post(
        &router,
        "/v2/addresses",
        json!({"address": {"street1": "Main St", "zip": "94107"}, "verify_strict": true}),
    )
    .await;
    assert_eq!((strict.status, strict.body["error"]["code"].as_str()), (422, Some("ADDRESS.VERIFY.FAILURE")));
    let loose =
        post(&router, "/v2/addresses", json!({"address": {"street1": "Main St", "zip": "94107"}, "verify": true}))
            .await;
    assert_eq!(loose.status, 201);
    assert_eq!(loose.body["verifications"]["delivery"]["success"], false);
    let not_json = send(&router, "POST", "/v2/parcels", None).await;
    assert_eq!(not_json.status, 422);
    // A path the simulator does not serve is EasyPost's 404, saying so, never 405.
    let method = send(&router, "DELETE", "/v2/shipments", None).await;
    assert_eq!(method.status, 404);
    assert_eq!(method.body["error"]["code"], "NOT_FOUND");
    assert_eq!(method.body["error"]["errors"][0]["field"], "path");
    assert!(method.body["error"]["errors"][0]["message"].as_str().unwrap().contains("not simulated"));
}

#[tokio::test]
async fn trackers_move_on_the_sandbox_clock_and_test_codes_stand_still() {
    let (sim, clock) = simulator(4);
    let router = sim.router();
    let created = post(&router, "/v2/trackers", json!({"tracker": {"tracking_code": "9400111111111111111111"}})).await;
    assert_eq!(created.status, 201);
    assert_eq!(created.body["status"], "pre_transit");
    assert_eq!(created.body["carrier"], "USPS");
    let id = created.body["id"].as_str().unwrap().to_owned();
    clock.advance(30_000);
    let moving = get(&router, &format!("/v2/trackers/{id}")).await.body;
    assert_eq!(moving["status"], "in_transit");
    clock.advance(5 * 60_000);
    let done = get(&router, &format!("/v2/trackers/{id}")).await.body;
    assert!(["delivered", "return_to_sender", "failure", "available_for_pickup"]
        .contains(&done["status"].as_str().unwrap()));
    assert_eq!(done["finalized"], true);
    let details = done["tracking_details"].as_array().unwrap();
    assert_eq!(details.len(), 7);
    assert!(details.iter().all(|d| d["tracking_location"]["city"].is_string()));
    // The same code again is the same tracker.
    let again = post(
        &router,
        "/v2/trackers",
        json!({"tracker": {"tracking_code": "9400111111111111111111", "carrier": "usps"}}),
    )
    .await;
    assert_eq!(again.body["id"], id.as_str());
    let test =
        post(&router, "/v2/trackers", json!({"tracker": {"tracking_code": "EZ3000000003", "carrier": "USPS"}})).await;
    assert_eq!(test.body["status"], "out_for_delivery");
    clock.advance(60 * 60_000);
    let still = get(&router, &format!("/v2/trackers/{}", test.body["id"].as_str().unwrap())).await.body;
    assert_eq!(still["status"], "out_for_delivery");
    let listed = get(&router, "/v2/trackers?tracking_code=EZ3000000003").await.body;
    assert_eq!(listed["trackers"].as_array().unwrap().len(), 1);
}

/// EasyPost does not make a caller wait for a batch's state (its SDKs' recorded tests): a batch
/// still creating is bought, and one still buying is labelled, each answered 200 with the
/// state the work reached; a shipment bought on its own joins as `postage_purchased`. What has
/// nothing to act on is still refused.
#[tokio::test]
async fn batches_move_through_their_states_and_report_each_shipment() {
    let (sim, clock) = simulator(5);
    let router = sim.router();
    let a = new_shipment(&router).await;
    let b = new_shipment(&router).await;
    let c = new_shipment(&router).await;
    let bought_elsewhere = c["id"].as_str().unwrap();
    post(&router, &format!("/v2/shipments/{bought_elsewhere}/buy"), json!({"rate": {"id": cheapest(&c)["id"]}})).await;
    let ids = json!([{"id": a["id"]}, {"id": b["id"]}]);
    let batch = post(&router, "/v2/batches", json!({"batch": {"shipments": ids}})).await;
    assert_eq!(batch.status, 200);
    // Creating: its shipments counted, none listed yet (as recorded).
    assert_eq!(batch.body["state"], "creating");
    assert_eq!((&batch.body["num_shipments"], &batch.body["shipments"]), (&json!(2), &json!([])));
    assert_eq!(batch.body["status"]["created"], 0);
    let id = batch.body["id"].as_str().unwrap().to_owned();
    // Bought while creating: created, its shipments queued.
    let buying = post(&router, &format!("/v2/batches/{id}/buy"), json!({})).await;
    assert_eq!((buying.status, buying.body["state"].as_str()), (200, Some("created")), "{}", buying.body);
    let statuses: Vec<&Value> =
        buying.body["shipments"].as_array().unwrap().iter().map(|s| &s["batch_status"]).collect();
    assert_eq!(statuses, [&json!("queued_for_purchase"), &json!("queued_for_purchase")]);
    assert!(buying.body["shipments"][0]["tracking_code"].is_null());
    // Labelled while buying: the purchase is finished, the label on its way.
    let labelling = post(&router, &format!("/v2/batches/{id}/label"), json!({"file_format": "ZPL"})).await;
    assert_eq!((labelling.status, labelling.body["state"].as_str()), (200, Some("label_generating")));
    assert_eq!(labelling.body["status"]["postage_purchased"], 2, "{}", labelling.body);
    assert!(labelling.body["shipments"].as_array().unwrap().iter().all(|s| s["tracking_code"].is_string()));
    assert!(labelling.body["label_url"].is_null());
    // A shipment bought on its own joins as bought.
    let added =
        post(&router, &format!("/v2/batches/{id}/add_shipments"), json!({"shipments": [{"id": bought_elsewhere}]}))
            .await;
    assert_eq!((added.status, &added.body["num_shipments"]), (200, &json!(3)), "{}", added.body);
    let joined = added.body["shipments"].as_array().unwrap().iter().find(|s| s["id"] == bought_elsewhere).unwrap();
    assert_eq!(
        (joined["batch_status"].as_str(), joined["tracking_code"].is_string()),
        (Some("postage_purchased"), true)
    );
    clock.advance(2_000);
    let labelled = get(&router, &format!("/v2/batches/{id}")).await.body;
    assert_eq!(labelled["state"], "label_generated");
    let merged =
        get(&router, labelled["label_url"].as_str().unwrap().trim_start_matches("http://127.0.0.1:7708")).await;
    assert_eq!(String::from_utf8_lossy(&merged.bytes).matches("^XA").count(), 3);
    let form = post(&router, &format!("/v2/batches/{id}/scan_form"), json!({})).await;
    assert_eq!((form.status, form.body["scan_form"]["status"].as_str()), (200, Some("creating")));
    clock.advance(2_000);
    let scanned = get(&router, &format!("/v2/batches/{id}")).await.body;
    assert_eq!(scanned["scan_form"]["status"], "created");
    assert_eq!(scanned["scan_form"]["tracking_codes"].as_array().unwrap().len(), 3);
    let pdf =
        get(&router, scanned["scan_form"]["form_url"].as_str().unwrap().trim_start_matches("http://127.0.0.1:7708"))
            .await;
    assert!(pdf.bytes.starts_with(b"%PDF"));
    let twice = post(&router, &format!("/v2/batches/{id}/scan_form"), json!({})).await;
    assert_eq!((twice.status, twice.body["error"]["code"].as_str()), (422, Some("SCAN_FORM.EXISTS")));

    // Nothing to act on: an empty batch is not bought, a batch of unbought shipments has no
    // labels nor scan form, an unknown batch is not found.
    let empty = post(&router, "/v2/batches", json!({"batch": {}})).await.body;
    assert_eq!(empty["state"], "created");
    let empty_id = empty["id"].as_str().unwrap();
    let refused = post(&router, &format!("/v2/batches/{empty_id}/buy"), json!({})).await;
    assert_eq!((refused.status, refused.body["error"]["code"].as_str()), (422, Some("BATCH.EMPTY")));
    let d = new_shipment(&router).await;
    post(&router, &format!("/v2/batches/{empty_id}/add_shipments"), json!({"shipments": [{"id": d["id"]}]})).await;
    let no_label = post(&router, &format!("/v2/batches/{empty_id}/label"), json!({"file_format": "PDF"})).await;
    assert_eq!((no_label.status, no_label.body["error"]["code"].as_str()), (422, Some("BATCH.STATE.INVALID")));
    let no_form = post(&router, &format!("/v2/batches/{empty_id}/scan_form"), json!({})).await;
    assert_eq!((no_form.status, no_form.body["error"]["code"].as_str()), (422, Some("SCAN_FORM.NO_SHIPMENTS")));
    assert_eq!(post(&router, "/v2/batches/batch_nope/buy", json!({})).await.status, 404);
}

/// easypost-ruby lists the shipments to add or remove under `shipment` (recorded, answered 200);
/// a batch given only bought shipments is `purchased` next, and shipments leave it in that state.
#[tokio::test]
async fn batch_shipments_are_added_and_removed_under_either_key() {
    let (sim, clock) = simulator(12);
    let router = sim.router();
    let shipment = bought_shipment(&router).await;
    let sid = shipment["id"].as_str().unwrap();
    let batch = post(&router, "/v2/batches", json!({"batch": {}})).await.body;
    let id = batch["id"].as_str().unwrap();
    let added = post(&router, &format!("/v2/batches/{id}/add_shipments"), json!({"shipment": [{"id": sid}]})).await;
    assert_eq!((added.status, added.body["state"].as_str()), (200, Some("created")), "{}", added.body);
    assert_eq!(added.body["shipments"][0]["batch_status"], "postage_purchased");
    assert_eq!(added.body["shipments"][0]["tracking_code"], shipment["tracking_code"]);
    clock.advance(2_000);
    assert_eq!(get(&router, &format!("/v2/batches/{id}")).await.body["state"], "purchased");
    let removed =
        post(&router, &format!("/v2/batches/{id}/remove_shipments"), json!({"shipment": [{"id": sid}]})).await;
    assert_eq!((removed.status, &removed.body["num_shipments"]), (200, &json!(0)), "{}", removed.body);
    assert_eq!(removed.body["shipments"], json!([]));
    assert!(get(&router, &format!("/v2/shipments/{sid}")).await.body["batch_id"].is_null());
    let nothing = post(&router, &format!("/v2/batches/{id}/add_shipments"), json!({})).await;
    assert_eq!((nothing.status, nothing.body["error"]["code"].as_str()), (422, Some("PARAMETER.REQUIRED")));
    let stranger =
        post(&router, &format!("/v2/batches/{id}/remove_shipments"), json!({"shipments": [{"id": sid}]})).await;
    assert_eq!((stranger.status, stranger.body["error"]["code"].as_str()), (422, Some("PARAMETER.INVALID")));
}

/// EasyPost's own SDK tests (recorded `POST /v2/batches` with full shipments naming `carrier` and
/// `service`): those shipments are created unbought (`tracking_code` null when the batch is
/// bought) and the batch buys the rate they name.
#[tokio::test]
async fn a_batch_buys_the_service_its_new_shipments_name_when_it_is_bought() {
    let (sim, clock) = simulator(8);
    let router = sim.router();
    // The dearest rate on offer for the route, so that the batch cannot buy it by picking the lowest.
    let probe = new_shipment(&router).await;
    let mut rates = probe["rates"].as_array().unwrap().clone();
    rates.sort_by(|a, b| {
        let price = |r: &Value| r["rate"].as_str().unwrap().parse::<f64>().unwrap();
        price(b).total_cmp(&price(a))
    });
    let (carrier, service) = (rates[0]["carrier"].clone(), rates[0]["service"].clone());
    assert_ne!(rates[0]["id"], cheapest(&probe)["id"]);
    let shipment = json!({"to_address": to(), "from_address": from(), "carrier": carrier, "service": service,
                          "parcel": {"length": 10, "width": 8, "height": 4, "weight": 15.4}});
    let batch = post(&router, "/v2/batches", json!({"batch": {"shipments": [shipment]}})).await;
    assert_eq!(batch.status, 200, "{}", batch.body);
    assert!(batch.body.get("chosen_rates").is_none());
    let id = batch.body["id"].as_str().unwrap().to_owned();
    clock.advance(2_000);
    let created = get(&router, &format!("/v2/batches/{id}")).await.body;
    let member = created["shipments"][0]["id"].as_str().unwrap().to_owned();
    let unbought = get(&router, &format!("/v2/shipments/{member}")).await.body;
    assert!(unbought["selected_rate"].is_null() && unbought["tracking_code"].is_null(), "{unbought}");
    let buying = post(&router, &format!("/v2/batches/{id}/buy"), json!({})).await;
    assert_eq!(buying.status, 200, "{}", buying.body);
    clock.advance(10_000);
    let bought = get(&router, &format!("/v2/batches/{id}")).await.body;
    assert_eq!((bought["state"].as_str(), &bought["status"]["postage_purchased"]), (Some("purchased"), &json!(1)));
    let shipment = get(&router, &format!("/v2/shipments/{member}")).await.body;
    assert_eq!((&shipment["selected_rate"]["carrier"], &shipment["selected_rate"]["service"]), (&carrier, &service));
}

#[tokio::test]
async fn scan_forms_need_one_from_address() {
    let (sim, clock) = simulator(6);
    let router = sim.router();
    let a = new_shipment(&router).await;
    let other_origin = post(
        &router,
        "/v2/shipments",
        json!({"shipment": {"to_address": to(), "from_address": {"street1": "600 Congress Ave", "city": "Austin", "state": "TX", "zip": "78701"}, "parcel": {"weight": 10}}}),
    )
    .await
    .body;
    let batch =
        post(&router, "/v2/batches", json!({"batch": {"shipments": [{"id": a["id"]}, {"id": other_origin["id"]}]}}))
            .await
            .body;
    let id = batch["id"].as_str().unwrap();
    clock.advance(2_000);
    post(&router, &format!("/v2/batches/{id}/buy"), json!({})).await;
    clock.advance(10_000);
    let form = post(&router, &format!("/v2/batches/{id}/scan_form"), json!({})).await;
    assert_eq!((form.status, form.body["error"]["code"].as_str()), (422, Some("SCAN_FORM.ADDRESS.MISMATCH")));
}

#[tokio::test]
async fn refunds_and_insurance_follow_their_eligibility() {
    let (sim, clock) = simulator(7);
    let router = sim.router();
    let shipment = new_shipment(&router).await;
    let id = shipment["id"].as_str().unwrap();
    let bought = post(&router, &format!("/v2/shipments/{id}/buy"), json!({"rate": {"id": cheapest(&shipment)["id"]}}))
        .await
        .body;
    let code = bought["tracking_code"].as_str().unwrap();
    let carrier = bought["selected_rate"]["carrier"].as_str().unwrap();
    // A code of no shipment of the account is a rejected refund of none; the shipment is untouched.
    let unknown = post(
        &router,
        "/v2/refunds",
        json!({"refund": {"carrier": carrier, "tracking_codes": ["9400000000000000000000"]}}),
    )
    .await;
    assert_eq!((unknown.status, unknown.body[0]["status"].as_str()), (201, Some("rejected")));
    assert!(get(&router, &format!("/v2/shipments/{id}")).await.body["refund_status"].is_null(), "nothing changed");
    let refunds = post(&router, "/v2/refunds", json!({"refund": {"carrier": carrier, "tracking_codes": [code]}})).await;
    assert_eq!(refunds.status, 201);
    assert_eq!(refunds.body[0]["status"], "submitted");
    let again = post(&router, "/v2/refunds", json!({"refund": {"carrier": carrier, "tracking_codes": [code]}})).await;
    assert_eq!((again.status, again.body["error"]["code"].as_str()), (422, Some("SHIPMENT.REFUND.EXISTS")));
    clock.advance(6 * 60_000);
    let settled = get(&router, &format!("/v2/refunds/{}", refunds.body[0]["id"].as_str().unwrap())).await.body;
    assert_eq!(settled["status"], "refunded");
    let shipment = get(&router, &format!("/v2/shipments/{id}")).await.body;
    assert_eq!(shipment["refund_status"], "refunded");
    assert_eq!(shipment["tracker"]["status"], "pre_transit", "a refunded label does not travel");
    // Insurance: pending, purchased, refundable until the package is scanned.
    let insurance = json!({"insurance": {"tracking_code": "9400222222222222222222", "carrier": "USPS", "amount": "100",
        "to_address": to(), "from_address": from()}});
    let created = post(&router, "/v2/insurances", insurance.clone()).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        (created.body["status"].as_str(), created.body["fee"]["amount"].as_str()),
        (Some("pending"), Some("1.00000"))
    );
    assert_eq!(created.body["to_address"]["city"], "REDONDO BEACH");
    let ins = created.body["id"].as_str().unwrap().to_owned();
    clock.advance(5_000);
    assert_eq!(get(&router, &format!("/v2/insurances/{ins}")).await.body["status"], "purchased");
    let refunded = post(&router, &format!("/v2/insurances/{ins}/refund"), json!({})).await;
    assert_eq!(refunded.body["status"], "cancelled");
    let twice = post(&router, &format!("/v2/insurances/{ins}/refund"), json!({})).await;
    assert_eq!(twice.status, 404);
    assert_eq!(twice.body["error"]["errors"][0], "No eligible insurance found with provided tracking code.");
    let moving = post(&router, "/v2/insurances", insurance.clone()).await.body;
    clock.advance(60_000);
    let late = post(&router, &format!("/v2/insurances/{}/refund", moving["id"].as_str().unwrap()), json!({})).await;
    assert_eq!(late.status, 404, "in transit: no longer refundable");
    let too_much = post(&router, "/v2/insurances", json!({"insurance": {"tracking_code": "X1", "carrier": "USPS", "amount": "5000.01", "to_address": to(), "from_address": from()}})).await;
    assert_eq!(too_much.status, 422);
}

#[tokio::test]
async fn lists_page_newest_first_with_before_id() {
    let (sim, _) = simulator(8);
    let router = sim.router();
    for _ in 0..5 {
        post(&router, "/v2/parcels", json!({"parcel": {"weight": 5}})).await;
        post(&router, "/v2/addresses", json!({"address": to()})).await;
    }
    let mut seen = Vec::new();
    let mut url = "/v2/addresses?page_size=4".to_owned();
    loop {
        let page = get(&router, &url).await.body;
        let items = page["addresses"].as_array().unwrap();
        seen.extend(items.iter().map(|a| a["id"].as_str().unwrap().to_owned()));
        if page["has_more"] != true {
            break;
        }
        url = format!("/v2/addresses?page_size=4&before_id={}", seen.last().unwrap());
    }
    let unique: std::collections::HashSet<_> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len());
    assert!(seen.len() >= 7, "{}", seen.len());
    let first = get(&router, "/v2/addresses?page_size=1").await.body;
    assert_eq!(first["addresses"][0]["id"], seen[0].as_str());
}

#[tokio::test]
async fn the_seed_is_a_lively_account_and_reset_restores_it() {
    let (sim, clock) = simulator(42);
    let router = sim.router();
    let shipments = get(&router, "/v2/shipments?page_size=100&purchased=false").await.body;
    let list = shipments["shipments"].as_array().unwrap();
    assert!(list.len() >= 12, "{}", list.len());
    let statuses: std::collections::BTreeSet<&str> = list.iter().map(|s| s["status"].as_str().unwrap()).collect();
    assert!(statuses.contains("delivered") && statuses.contains("unknown"), "{statuses:?}");
    assert!(list.iter().any(|s| s["refund_status"] == "refunded"));
    let batches = get(&router, "/v2/batches").await.body;
    assert_eq!(batches["batches"][0]["state"], "label_generated");
    assert_eq!(batches["batches"][0]["scan_form"]["status"], "created");
    let moving = list.iter().filter(|s| matches!(s["status"].as_str(), Some("in_transit" | "pre_transit"))).count();
    assert!(moving >= 1, "{statuses:?}");
    post(&router, "/v2/parcels", json!({"parcel": {"weight": 5}})).await;
    clock.advance(1_000);
    sim.reset();
    let again = get(&router, "/v2/shipments?page_size=100&purchased=false").await.body;
    assert_eq!(again["shipments"].as_array().unwrap().len(), list.len());
    assert_eq!(again["shipments"][0]["id"], list[0]["id"]);
}

#[tokio::test]
async fn seeded_label_urls_use_the_address_the_first_request_came_in_on() {
    let (sim, _) = simulator(9);
    let router = sim.router();
    let request = Request::get("/v2/shipments?page_size=1")
        .header("authorization", format!("Bearer {}", credentials::EASYPOST_KEY))
        .header("host", "127.0.0.1:45123")
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let page: Value = serde_json::from_slice(&to_bytes(response.into_body(), usize::MAX).await.unwrap()).unwrap();
    let url = page["shipments"][0]["postage_label"]["label_url"].as_str().unwrap();
    assert!(url.starts_with("http://127.0.0.1:45123/files/postage_label/"), "{url}");
    let file = get(&router, url.trim_start_matches("http://127.0.0.1:45123")).await;
    assert!(file.bytes.starts_with(b"\x89PNG"));
}

/// The ids a list names (`GET path` with `page_size=100`), newest first.
async fn listed(router: &Router, path: &str, plural: &str) -> Vec<String> {
    let separator = if path.contains('?') { '&' } else { '?' };
    let page = get(router, &format!("{path}{separator}page_size=100")).await.body;
    page[plural].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_owned()).collect()
}

/// Ids of records created in order (oldest first); checks only the newest `cap` are listed and
/// fetched, and that the older ones are each a 404.
async fn check_cap(router: &Router, created: &[String], list: Option<(&str, &str)>, get_path: &str, cap: usize) {
    assert!(created.len() > cap, "fill past the cap");
    let (gone, kept) = created.split_at(created.len() - cap);
    if let Some((path, plural)) = list {
        let ids = listed(router, path, plural).await;
        for id in gone {
            assert!(!ids.contains(id), "{plural}: {id} was evicted but is listed");
        }
        for id in kept {
            assert!(ids.contains(id), "{plural}: {id} is kept but not listed");
        }
    }
    for id in gone {
        let sent = get(router, &format!("{get_path}/{id}")).await;
        assert_eq!((sent.status, sent.body["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{get_path}/{id}");
    }
    for id in kept {
        assert_eq!(get(router, &format!("{get_path}/{id}")).await.status, 200, "{get_path}/{id}");
    }
}

#[tokio::test]
async fn every_kind_keeps_its_cap_and_forgets_the_oldest_cleanly() {
    const CAP: usize = 3;
    let (sim, clock) = simulator(11);
    *sim.shared.state.lock().unwrap() = Some(State::capped(11, "http://127.0.0.1:7708".into(), CAP, CAP, CAP));
    let router = sim.router();
    // Addresses and parcels.
    let mut addresses = Vec::new();
    let mut parcels = Vec::new();
    for _ in 0..CAP + 2 {
        addresses.push(
            post(&router, "/v2/addresses", json!({"address": to()})).await.body["id"].as_str().unwrap().to_owned(),
        );
        parcels.push(
            post(&router, "/v2/parcels", json!({"parcel": {"weight": 5}})).await.body["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    check_cap(&router, &addresses, Some(("/v2/addresses", "addresses")), "/v2/addresses", CAP).await;
    check_cap(&router, &parcels, None, "/v2/parcels", CAP).await;
    // Shipments, bought: trackers, events and label files with them; refunds of each.
    let (mut shipments, mut trackers, mut labels, mut refunds, mut rates) = (vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..CAP + 2 {
        let shipment = new_shipment(&router).await;
        let id = shipment["id"].as_str().unwrap().to_owned();
        rates.push(cheapest(&shipment)["id"].as_str().unwrap().to_owned());
        let bought = post(&router, &format!("/v2/shipments/{id}/buy"), json!({"rate": {"id": rates.last().unwrap()}}))
            .await
            .body;
        trackers.push(bought["tracker"]["id"].as_str().unwrap().to_owned());
        labels.push(bought["postage_label"]["label_url"].as_str().unwrap().replace("http://127.0.0.1:7708", ""));
        let refunded = post(
            &router,
            "/v2/refunds",
            json!({"refund": {"carrier": bought["selected_rate"]["carrier"], "tracking_codes": [bought["tracking_code"]]}}),
        )
        .await;
        assert_eq!(refunded.status, 201, "{}", refunded.body);
        refunds.push(refunded.body[0]["id"].as_str().unwrap().to_owned());
        shipments.push(id);
    }
    check_cap(&router, &shipments, Some(("/v2/shipments", "shipments")), "/v2/shipments", CAP).await;
    check_cap(&router, &trackers, Some(("/v2/trackers", "trackers")), "/v2/trackers", CAP).await;
    check_cap(&router, &refunds, Some(("/v2/refunds", "refunds")), "/v2/refunds", CAP).await;
    // An evicted shipment's rates, label file and planned scans go with it.
    let buy = post(&router, &format!("/v2/shipments/{}/buy", shipments[0]), json!({"rate": {"id": rates[0]}})).await;
    assert_eq!(buy.status, 404);
    assert_eq!(get(&router, &labels[0]).await.status, 404);
    assert_eq!(get(&router, labels.last().unwrap()).await.status, 200);
    {
        let guard = sim.shared.state.lock().unwrap();
        let state = guard.as_ref().unwrap();
        assert!(state.rate_owner(&rates[0]).is_none());
        assert_eq!(state.rate_owner(rates.last().unwrap()).as_deref(), Some(shipments.last().unwrap().as_str()));
        assert!(state.plans.keys().all(|t| trackers[CAP - 1..].contains(t)), "{:?}", state.plans.keys());
        assert_eq!(state.files.len(), CAP);
    }
    // Events: only the newest are listed; an evicted one is a 404.
    let events = listed(&router, "/v2/events", "events").await;
    assert_eq!(events.len(), CAP);
    clock.advance(600_000);
    let later = listed(&router, "/v2/events", "events").await;
    assert_eq!(later.len(), CAP);
    assert_eq!(get(&router, &format!("/v2/events/{}", events[0])).await.status, 404);
    // Batches, insurances, webhooks (their secrets go with them), scan forms.
    let mut batches = Vec::new();
    let mut insurances = Vec::new();
    let mut webhooks = Vec::new();
    for i in 0..CAP + 2 {
        batches.push(post(&router, "/v2/batches", json!({"batch": {}})).await.body["id"].as_str().unwrap().to_owned());
        let insurance = json!({"insurance": {"tracking_code": format!("94002222222222222222{i:02}"), "carrier": "USPS",
            "amount": "100", "to_address": to(), "from_address": from()}});
        insurances.push(post(&router, "/v2/insurances", insurance).await.body["id"].as_str().unwrap().to_owned());
        let hook = json!({"webhook": {"url": "http://127.0.0.1:9/hook", "webhook_secret": "s3cret"}});
        webhooks.push(post(&router, "/v2/webhooks", hook).await.body["id"].as_str().unwrap().to_owned());
    }
    check_cap(&router, &batches, Some(("/v2/batches", "batches")), "/v2/batches", CAP).await;
    check_cap(&router, &insurances, Some(("/v2/insurances", "insurances")), "/v2/insurances", CAP).await;
    check_cap(&router, &webhooks, Some(("/v2/webhooks", "webhooks")), "/v2/webhooks", CAP).await;
    assert!(!sim.shared.state.lock().unwrap().as_ref().unwrap().secrets.contains_key(&webhooks[0]));
    let mut forms = Vec::new();
    {
        let mut guard = sim.shared.state.lock().unwrap();
        let state = guard.as_mut().unwrap();
        for _ in 0..CAP + 2 {
            let form = state.base("sf", "ScanForm", START_MS);
            let id = state::text(&form, "id").to_owned();
            state.keep(|s| &mut s.scan_forms, id.clone(), START_MS, &form);
            forms.push(id);
        }
    }
    check_cap(&router, &forms, Some(("/v2/scan_forms", "scan_forms")), "/v2/scan_forms", CAP).await;
}

// ---- issue 22: as lenient as the real service -----------------------------------------------

async fn bought_shipment(router: &Router) -> Value {
    let shipment = new_shipment(router).await;
    let id = shipment["id"].as_str().unwrap();
    let bought =
        post(router, &format!("/v2/shipments/{id}/buy"), json!({"rate": {"id": cheapest(&shipment)["id"]}})).await;
    assert_eq!(bought.status, 200, "{}", bought.body);
    bought.body
}

#[tokio::test]
async fn not_found_bodies_hold_no_strings_and_unserved_paths_are_404() {
    let (sim, _) = simulator(22);
    let router = sim.router();
    let missing = get(&router, "/v2/shipments/shp_00000000000000000000000000000000").await;
    assert_eq!(missing.status, 404);
    // Recorded: {"error":{"code":"NOT_FOUND","message":"The requested resource could not be found.","errors":[]}}
    assert_eq!(
        missing.body,
        json!({"error": {"code": "NOT_FOUND", "message": "The requested resource could not be found.", "errors": []}})
    );
    for (method, path) in
        [("PUT", "/v2/addresses"), ("GET", "/v2/users/me/nothing"), ("POST", "/v2/reports/x/y/z"), ("GET", "/v3/x")]
    {
        let sent = send(&router, method, path, None).await;
        assert_eq!(sent.status, 404, "{method} {path}");
        let error = &sent.body["error"]["errors"][0];
        assert!(
            error["field"].is_string() && error["message"].as_str().unwrap().contains("not simulated"),
            "{}",
            sent.body
        );
    }
}

#[tokio::test]
async fn smartrates_and_standalone_scan_forms_are_served() {
    let (sim, _) = simulator(22);
    let router = sim.router();
    let shipment = new_shipment(&router).await;
    let id = shipment["id"].as_str().unwrap();
    let smart = get(&router, &format!("/v2/shipments/{id}/smartrate")).await;
    assert_eq!(smart.status, 200, "{}", smart.body);
    let result = smart.body["result"].as_array().unwrap();
    assert_eq!(result.len(), shipment["rates"].as_array().unwrap().len());
    let first = &result[0];
    assert!(first["rate"].is_f64() && first["list_rate"].is_f64() && first["retail_rate"].is_f64(), "{first}");
    assert!(first.get("billing_type").is_none());
    for p in [
        "percentile_50",
        "percentile_75",
        "percentile_85",
        "percentile_90",
        "percentile_95",
        "percentile_97",
        "percentile_99",
    ] {
        assert!(first["time_in_transit"][p].is_i64(), "{p}");
    }
    let rate_id = first["id"].as_str().unwrap();
    let rate = get(&router, &format!("/v2/rates/{rate_id}")).await;
    assert_eq!(
        (rate.status, rate.body["object"].as_str(), rate.body["shipment_id"].as_str()),
        (200, Some("Rate"), Some(id))
    );
    assert!(rate.body["rate"].is_string());
    assert_eq!(get(&router, "/v2/rates/rate_00000000000000000000000000000000").await.status, 404);

    let bought = bought_shipment(&router).await;
    let sid = bought["id"].as_str().unwrap();
    let not_bought = post(&router, "/v2/scan_forms", json!({"scan_form": {"shipments": [{"id": id}]}})).await;
    assert_eq!(not_bought.status, 422);
    // The Ruby SDK sends the list unwrapped; EasyPost answers 200 with the form ready.
    let form = post(&router, "/v2/scan_forms", json!({"shipments": [{"id": sid}]})).await;
    assert_eq!(form.status, 200, "{}", form.body);
    assert_eq!(form.body["object"], "ScanForm");
    assert_eq!(form.body["status"], "created");
    assert_eq!(form.body["tracking_codes"], json!([bought["tracking_code"]]));
    assert!(form.body["form_url"].as_str().unwrap().ends_with(".pdf"));
    let batch = form.body["batch_id"].as_str().unwrap();
    assert_eq!(get(&router, &format!("/v2/batches/{batch}")).await.body["scan_form"]["id"], form.body["id"]);
    let listed = get(&router, "/v2/scan_forms").await;
    assert_eq!(listed.body["scan_forms"][0]["id"], form.body["id"]);
}

#[tokio::test]
async fn customs_infos_are_records_with_items() {
    let (sim, _) = simulator(22);
    let router = sim.router();
    let info = json!({"eel_pfc": "NOEEI 30.37(a)", "customs_certify": true, "customs_signer": "Steve Brule",
        "contents_type": "merchandise", "contents_explanation": "", "restriction_type": "none",
        "non_delivery_option": "return",
        "customs_items": [{"description": "Sweet shirts", "quantity": 2, "weight": 11, "value": 23.25,
                           "hs_tariff_number": "654321", "origin_country": "US"}]});
    let created = post(&router, "/v2/customs_infos", json!({"customs_info": info})).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let body = &created.body;
    assert!(body["id"].as_str().unwrap().starts_with("cstinfo_"));
    assert_eq!((body["object"].as_str(), body["restriction_comments"].is_null()), (Some("CustomsInfo"), true));
    let item = &body["customs_items"][0];
    assert!(item["id"].as_str().unwrap().starts_with("cstitem_"));
    assert_eq!(
        (item["object"].as_str(), item["value"].as_str(), item["weight"].as_f64()),
        (Some("CustomsItem"), Some("23.25"), Some(11.0))
    );
    assert_eq!(item["quantity"], 2);
    for key in ["code", "manufacturer", "currency", "eccn", "printed_commodity_identifier"] {
        assert!(item[key].is_null(), "{key}");
    }
    let again = get(&router, &format!("/v2/customs_infos/{}", body["id"].as_str().unwrap())).await;
    assert_eq!(again.body, created.body);
    let item_id = item["id"].as_str().unwrap();
    assert_eq!(get(&router, &format!("/v2/customs_items/{item_id}")).await.body["value"], "23.25");
    let alone =
        post(&router, "/v2/customs_items", json!({"description": "Mug", "quantity": 1, "weight": 8, "value": "10"}))
            .await;
    assert_eq!((alone.status, alone.body["value"].as_str()), (201, Some("10.00")));

    // A shipment's customs info given as fields becomes a record too.
    let mut abroad = to();
    abroad["country"] = json!("CA");
    abroad["zip"] = json!("M5V 2T6");
    abroad["city"] = json!("Toronto");
    abroad["state"] = json!("ON");
    let shipment = post(
        &router,
        "/v2/shipments",
        json!({"shipment": {"to_address": abroad, "from_address": from(),
        "parcel": {"weight": 10}, "customs_info": info}}),
    )
    .await;
    assert_eq!(shipment.status, 201, "{}", shipment.body);
    let customs = &shipment.body["customs_info"];
    assert!(customs["id"].as_str().unwrap().starts_with("cstinfo_"), "{customs}");
    assert_eq!(customs["customs_items"][0]["value"], "23.25");
    let by_id = post(
        &router,
        "/v2/shipments",
        json!({"shipment": {"to_address": to(), "from_address": from(),
        "parcel": {"weight": 10}, "customs_info": {"id": body["id"]}}}),
    )
    .await;
    assert_eq!(by_id.body["customs_info"]["id"], body["id"]);
}

#[tokio::test]
async fn buying_verifies_the_destination_and_trackers_carry_every_carrier_detail_key() {
    let (sim, clock) = simulator(22);
    let router = sim.router();
    let bought = bought_shipment(&router).await;
    let to = &bought["to_address"];
    assert_eq!(to["verifications"]["zip4"]["success"], true, "{to}");
    let details = &to["verifications"]["delivery"]["details"];
    assert!(details["latitude"].is_f64() && details["longitude"].is_f64(), "{details}");
    assert_eq!(details["time_zone"], "America/Los_Angeles");
    assert!(to["residential"].is_boolean());
    assert_eq!(to["city"], "REDONDO BEACH");
    assert_eq!(bought["buyer_address"], bought["to_address"]);
    // The from-address stays as given (recorded).
    assert_eq!(bought["from_address"]["verifications"], json!({}));
    let stored = get(&router, &format!("/v2/addresses/{}", to["id"].as_str().unwrap())).await;
    assert_eq!(stored.body["verifications"], to["verifications"]);
    // A label's new tracker has no scan yet and no carrier detail (recorded: null); its first
    // scan brings one with every key.
    assert!(bought["tracker"]["carrier_detail"].is_null(), "{}", bought["tracker"]);
    assert!(bought["tracker"]["tracking_details"].as_array().unwrap().is_empty());
    // Inside a shipment a tracker has no `finalized` nor `is_return`; the Tracker itself has both.
    assert!(bought["tracker"].get("finalized").is_none() && bought["tracker"].get("is_return").is_none());
    let own = get(&router, &format!("/v2/trackers/{}", bought["tracker"]["id"].as_str().unwrap())).await.body;
    assert!(own["finalized"].is_boolean() && own["is_return"].is_boolean(), "{own}");
    clock.advance(60_000);
    let shipment = get(&router, &format!("/v2/shipments/{}", bought["id"].as_str().unwrap())).await.body;
    assert!(!shipment["tracker"]["tracking_details"].as_array().unwrap().is_empty(), "{}", shipment["tracker"]);
    let detail = &shipment["tracker"]["carrier_detail"];
    assert!(detail["origin_location"].is_string() && detail["destination_location"].is_string(), "{detail}");
    for key in [
        "est_delivery_date_local",
        "est_delivery_time_local",
        "container_type",
        "destination_tracking_location",
        "alternate_identifier",
        "initial_delivery_attempt",
    ] {
        assert!(detail.get(key).is_some(), "{key} missing from {detail}");
    }
    let tracker =
        post(&router, "/v2/trackers", json!({"tracker": {"tracking_code": "EZ1000000001", "carrier": "USPS"}})).await;
    assert!(tracker.body["carrier_detail"].get("est_delivery_date_local").is_some(), "{}", tracker.body);
}

#[tokio::test]
async fn addresses_take_verify_lists_unwrapped_fields_and_verify_carrier() {
    let (sim, _) = simulator(22);
    let router = sim.router();
    let bad = json!({"company": "EasyPost", "street1": "000 unknown street", "city": "Not A City", "state": "ZZ", "zip": "00001", "country": "US"});
    let mut listed = bad.clone();
    listed["verify"] = json!([true]);
    // Recorded: the Ruby SDK sends the fields unwrapped with `verify: [true]`; 201 with both checks failed.
    let created = post(&router, "/v2/addresses", listed).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["verifications"]["zip4"]["success"], false);
    assert_eq!(created.body["verifications"]["delivery"]["success"], false);
    let plain = post(&router, "/v2/addresses", bad.clone()).await;
    assert_eq!((plain.status, &plain.body["verifications"]), (201, &json!({})));
    let checked =
        post(&router, "/v2/addresses/create_and_verify", json!({"address": bad, "verify_carrier": "UPS"})).await;
    assert_eq!(checked.status, 200, "{}", checked.body);
    let address = &checked.body["address"];
    assert_eq!(address["verifications"]["verify_carrier"], "ups");
    assert_eq!(address["verifications"]["delivery"]["success"], true);
    assert!(address["verifications"]["delivery"]["errors"].as_array().is_some_and(|e| !e.is_empty()));
    assert_eq!(address["street1"], "000 UNKNOWN STREET");
    let without = post(&router, "/v2/addresses/create_and_verify", json!({"address": bad})).await;
    assert_eq!(without.status, 422);
}

#[tokio::test]
async fn webhooks_to_any_url_are_kept_and_never_sent_off_loopback() {
    let (sim, clock) = simulator(22);
    let router = sim.router();
    let hook = post(&router, "/v2/webhooks", json!({"webhook": {"url": "https://example.com/easypost"}})).await;
    assert_eq!(hook.status, 201, "{}", hook.body);
    assert_eq!(hook.body["url"], "https://example.com/easypost");
    let id = hook.body["id"].as_str().unwrap();
    assert_eq!(get(&router, &format!("/v2/webhooks/{id}")).await.body["url"], "https://example.com/easypost");
    post(&router, "/v2/trackers", json!({"tracker": {"tracking_code": "EZ2000000002", "carrier": "USPS"}})).await;
    clock.advance(1_000);
    let control = sim.control_router().unwrap();
    let log = control.oneshot(Request::builder().uri("/webhooks").body(Body::empty()).unwrap()).await.unwrap();
    let log: Value = serde_json::from_slice(&to_bytes(log.into_body(), usize::MAX).await.unwrap()).unwrap();
    let attempt =
        log["attempts"].as_array().unwrap().iter().find(|a| a["url"] == "https://example.com/easypost").cloned();
    let attempt = attempt.unwrap_or_else(|| panic!("no attempt logged: {log}"));
    assert_eq!(attempt["outcome"], "not sent", "{attempt}");
    assert!(attempt["why"].is_string(), "{attempt}");
}

#[tokio::test]
async fn carrier_accounts_orders_and_pickups_follow_the_main_flows() {
    let (sim, _) = simulator(22);
    let router = sim.router();
    let accounts = get(&router, "/v2/carrier_accounts").await;
    assert_eq!(accounts.status, 200);
    let list = accounts.body.as_array().expect("a bare array, as EasyPost lists carrier accounts");
    assert!(list.iter().any(|a| a["type"] == "UspsAccount" && a["readable"] == "USPS"));
    let usps = list[0]["id"].as_str().unwrap();
    let one = get(&router, &format!("/v2/carrier_accounts/{usps}")).await;
    assert_eq!((one.status, one.body["object"].as_str()), (200, Some("CarrierAccount")));
    assert_eq!(get(&router, "/v2/carrier_accounts/ca_nope").await.status, 404);

    let order = post(
        &router,
        "/v2/orders",
        json!({"order": {"to_address": to(), "from_address": from(),
        "shipments": [{"parcel": {"weight": 10.2}}, {"parcel": {"weight": 17.5}}]}}),
    )
    .await;
    assert_eq!(order.status, 201, "{}", order.body);
    let order = order.body;
    let oid = order["id"].as_str().unwrap();
    assert!(oid.starts_with("order_"));
    assert_eq!(order["object"], "Order");
    let shipments = order["shipments"].as_array().unwrap();
    assert_eq!(shipments.len(), 2);
    assert_eq!(shipments[0]["to_address"]["id"], shipments[1]["to_address"]["id"]);
    assert!(shipments.iter().all(|s| s["order_id"] == oid));
    let ground =
        order["rates"].as_array().unwrap().iter().find(|r| r["service"] == "GroundAdvantage").cloned().unwrap();
    let sum: f64 = shipments
        .iter()
        .map(|s| {
            s["rates"].as_array().unwrap().iter().find(|r| r["service"] == "GroundAdvantage").unwrap()["rate"]
                .as_str()
                .unwrap()
                .parse::<f64>()
                .unwrap()
        })
        .sum();
    assert_eq!(ground["rate"], format!("{sum:.2}"));
    let rates = get(&router, &format!("/v2/orders/{oid}/rates")).await;
    assert_eq!(rates.body["rates"], order["rates"]);
    let bought =
        post(&router, &format!("/v2/orders/{oid}/buy"), json!({"carrier": "USPS", "service": "GroundAdvantage"})).await;
    assert_eq!(bought.status, 200, "{}", bought.body);
    for shipment in bought.body["shipments"].as_array().unwrap() {
        assert_eq!(shipment["selected_rate"]["service"], "GroundAdvantage");
        assert!(shipment["tracking_code"].is_string());
    }
    assert_eq!(
        post(&router, &format!("/v2/orders/{oid}/buy"), json!({"carrier": "USPS", "service": "GroundAdvantage"}))
            .await
            .status,
        422
    );
    assert_eq!(
        get(&router, &format!("/v2/orders/{oid}")).await.body["shipments"][1]["selected_rate"]["service"],
        "GroundAdvantage"
    );

    let shipment = bought.body["shipments"][0]["id"].clone();
    let pickup = post(
        &router,
        "/v2/pickups",
        json!({"pickup": {"address": from(), "min_datetime": "2026-01-03",
        "max_datetime": "2026-01-03", "instructions": "Pickup at front door", "shipment": {"id": shipment}}}),
    )
    .await;
    assert_eq!(pickup.status, 200, "{}", pickup.body);
    let pid = pickup.body["id"].as_str().unwrap();
    assert_eq!((pickup.body["object"].as_str(), pickup.body["status"].as_str()), (Some("Pickup"), Some("unknown")));
    assert_eq!(pickup.body["min_datetime"], "2026-01-03T00:00:00Z");
    let rate = &pickup.body["pickup_rates"][0];
    assert_eq!(
        (rate["carrier"].as_str(), rate["service"].as_str(), rate["object"].as_str()),
        (Some("USPS"), Some("NextDay"), Some("PickupRate"))
    );
    let scheduled =
        post(&router, &format!("/v2/pickups/{pid}/buy"), json!({"carrier": "USPS", "service": "NextDay"})).await;
    assert_eq!((scheduled.status, scheduled.body["status"].as_str()), (200, Some("scheduled")), "{}", scheduled.body);
    assert!(scheduled.body["confirmation"].as_str().unwrap().starts_with("WTC"));
    let canceled = post(&router, &format!("/v2/pickups/{pid}/cancel"), json!({})).await;
    assert_eq!((canceled.status, canceled.body["status"].as_str()), (200, Some("canceled")));
    assert_eq!(get(&router, &format!("/v2/pickups/{pid}")).await.body["status"], "canceled");
}

/// easypost-go sends `null` as the body of an action with nothing to say (a refund), easypost-php
/// `[]`, and EasyPost answers both as an empty object.
#[tokio::test]
async fn a_null_body_is_an_empty_one() {
    let (sim, _) = simulator(2);
    let router = sim.router();
    let shipment = new_shipment(&router).await;
    let id = shipment["id"].as_str().unwrap();
    let bought =
        post(&router, &format!("/v2/shipments/{id}/buy"), json!({"rate": {"id": cheapest(&shipment)["id"]}})).await;
    assert_eq!(bought.status, 200, "{}", bought.body);
    let array = send(&router, "POST", &format!("/v2/shipments/{id}/refund"), Some(json!([1]))).await;
    assert_eq!(array.status, 400, "an array is still not an object: {}", array.body);
    let refunded = send(&router, "POST", &format!("/v2/shipments/{id}/refund"), Some(Value::Null)).await;
    assert_eq!(refunded.status, 200, "{}", refunded.body);
    let batch = send(&router, "POST", "/v2/batches", Some(json!([]))).await;
    assert_eq!((batch.status, &batch.body["object"]), (200, &json!("Batch")), "{}", batch.body);
}

/// Recorded webhook updates (easypost-go, easypost-ruby) are answered 201, and a list page whose
/// cursor names a record this account does not have is an empty 200.
#[tokio::test]
async fn a_webhook_update_is_201_and_an_unknown_cursor_an_empty_page() {
    let (sim, _) = simulator(2);
    let router = sim.router();
    let hook = post(&router, "/v2/webhooks", json!({"webhook": {"url": "http://127.0.0.1:9/hook"}})).await;
    assert_eq!(hook.status, 201, "{}", hook.body);
    let id = hook.body["id"].as_str().unwrap();
    let updated = send(&router, "PATCH", &format!("/v2/webhooks/{id}"), Some(json!({}))).await;
    assert_eq!(updated.status, 201, "{}", updated.body);
    let page = get(&router, "/v2/shipments?before_id=shp_0000000000000000000000000000dead").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(
        (page.body["shipments"].as_array().map(Vec::len), page.body["has_more"].as_bool()),
        (Some(0), Some(false))
    );
}

/// Carrier accounts are records of their own (shapes as recorded by EasyPost's SDK tests): added
/// (`type` and write-only credentials, or an OAuth registration), read, updated, deleted. An
/// added account cannot rate and says so on shipments; a deleted one of the three rates no more.
#[tokio::test]
async fn carrier_accounts_are_added_read_updated_and_deleted() {
    let (sim, _) = simulator(23);
    let router = sim.router();
    let made = post(
        &router,
        "/v2/carrier_accounts",
        json!({"carrier_account": {"type": "DhlEcsAccount", "credentials": {"client_id": "123456"}, "test_credentials": {}}}),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let keys: Vec<&String> = made.body.as_object().unwrap().keys().collect();
    let mut want = [
        "billing_type",
        "clone",
        "created_at",
        "credentials",
        "description",
        "fields",
        "id",
        "logo",
        "object",
        "readable",
        "reference",
        "test_credentials",
        "type",
        "updated_at",
    ];
    want.sort_unstable();
    let mut keys: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, want);
    assert_eq!(
        (&made.body["type"], &made.body["readable"], &made.body["description"], &made.body["billing_type"]),
        (&json!("DhlEcsAccount"), &json!("DHL eCommerce"), &json!("DHL eCommerce Account"), &json!("carrier"))
    );
    // Credentials are taken, never shown.
    assert_eq!(made.body["credentials"], json!({}));
    let id = made.body["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("ca_"));
    assert_eq!(get(&router, &format!("/v2/carrier_accounts/{id}")).await.body, made.body);

    let patched = send(
        &router,
        "PATCH",
        &format!("/v2/carrier_accounts/{id}"),
        Some(json!({"carrier_account": {"description": "My custom description", "id": id}})),
    )
    .await;
    assert_eq!((patched.status, patched.body["description"].as_str()), (200, Some("My custom description")));
    assert_eq!(get(&router, &format!("/v2/carrier_accounts/{id}")).await.body["description"], "My custom description");

    let ups = post(
        &router,
        "/v2/carrier_accounts/register_oauth",
        json!({"carrier_account_oauth_registrations": {"type": "UpsAccount", "account_number": "123456789"}}),
    )
    .await;
    assert_eq!((ups.status, &ups.body["readable"], &ups.body["description"]), (201, &json!("UPS"), &Value::Null));
    let ups_id = ups.body["id"].as_str().unwrap().to_owned();
    let put = send(
        &router,
        "PUT",
        &format!("/v2/carrier_accounts/{ups_id}"),
        Some(json!({"carrier_account_oauth_registrations": {"account_number": "987654321"}})),
    )
    .await;
    assert_eq!((put.status, &put.body["id"]), (200, &json!(ups_id)));
    let listed = get(&router, "/v2/carrier_accounts").await.body;
    assert_eq!(listed.as_array().unwrap().len(), 5, "{listed}");

    // An added account takes part in rating and reports that it cannot rate.
    let shipment = new_shipment(&router).await;
    let messages = shipment["messages"].as_array().unwrap();
    let dhl = messages.iter().find(|m| m["carrier_account_id"] == id.as_str()).expect("a message of the DHL account");
    assert_eq!((&dhl["carrier"], &dhl["type"]), (&json!("DhlEcs"), &json!("rate_error")));
    assert!(!shipment["rates"].as_array().unwrap().is_empty());

    let deleted = send(&router, "DELETE", &format!("/v2/carrier_accounts/{id}"), None).await;
    assert_eq!((deleted.status, &deleted.body), (200, &json!({})));
    let gone = get(&router, &format!("/v2/carrier_accounts/{id}")).await;
    assert_eq!((gone.status, gone.body["error"]["code"].as_str()), (404, Some("NOT_FOUND")));
    assert_eq!(send(&router, "DELETE", &format!("/v2/carrier_accounts/{id}"), None).await.status, 404);
    let patch_gone = send(&router, "PATCH", &format!("/v2/carrier_accounts/{id}"), Some(json!({}))).await;
    assert_eq!(patch_gone.status, 404);

    // The seeded USPS account deleted: no USPS rates any more, nor a shipment naming it.
    let usps = listed.as_array().unwrap().iter().find(|a| a["type"] == "UspsAccount").unwrap()["id"].clone();
    let usps = usps.as_str().unwrap();
    assert_eq!(send(&router, "DELETE", &format!("/v2/carrier_accounts/{usps}"), None).await.status, 200);
    let after = new_shipment(&router).await;
    let rates = after["rates"].as_array().unwrap();
    assert!(!rates.is_empty() && rates.iter().all(|r| r["carrier"] != "USPS"), "{after}");
    let naming = post(
        &router,
        "/v2/shipments",
        json!({"shipment": {"to_address": to(), "from_address": from(), "parcel": {"weight": 10}, "carrier_accounts": [usps]}}),
    )
    .await;
    assert_eq!((naming.status, naming.body["error"]["code"].as_str()), (422, Some("PARAMETER.INVALID")));

    // A type is required, and a type is a name.
    let untyped = post(&router, "/v2/carrier_accounts", json!({"carrier_account": {"credentials": {}}})).await;
    assert_eq!((untyped.status, untyped.body["error"]["code"].as_str()), (422, Some("PARAMETER.REQUIRED")));
    let odd = post(&router, "/v2/carrier_accounts", json!({"carrier_account": {"type": "Ups Account!"}})).await;
    assert_eq!((odd.status, odd.body["error"]["code"].as_str()), (422, Some("PARAMETER.INVALID")));
    let bad_credentials =
        post(&router, "/v2/carrier_accounts", json!({"carrier_account": {"type": "UpsAccount", "credentials": "x"}}))
            .await;
    assert_eq!(bad_credentials.status, 422);
}

/// A refund by tracking code (201, a list): a bought shipment's is submitted; a code of no
/// shipment of the account is a rejected refund of no shipment (EasyPost's answer there is not
/// known, so it is taken, not refused).
#[tokio::test]
async fn refunds_by_tracking_code_are_created_even_for_unknown_codes() {
    let (sim, _) = simulator(24);
    let router = sim.router();
    let shipment = bought_shipment(&router).await;
    let code = shipment["tracking_code"].as_str().unwrap();
    let carrier = shipment["selected_rate"]["carrier"].as_str().unwrap();
    let made = post(
        &router,
        "/v2/refunds",
        json!({"refund": {"carrier": carrier, "tracking_codes": [code, "9400100110368070372154"]}}),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let refunds = made.body.as_array().unwrap();
    assert_eq!(refunds.len(), 2);
    assert_eq!((&refunds[0]["status"], &refunds[0]["shipment_id"]), (&json!("submitted"), &shipment["id"]));
    assert_eq!(
        (&refunds[1]["status"], &refunds[1]["shipment_id"], &refunds[1]["tracking_code"]),
        (&json!("rejected"), &Value::Null, &json!("9400100110368070372154"))
    );
    let rid = refunds[1]["id"].as_str().unwrap();
    assert_eq!(get(&router, &format!("/v2/refunds/{rid}")).await.body["status"], "rejected");
    let listed = get(&router, "/v2/refunds?page_size=5").await.body;
    assert!(listed["refunds"].as_array().unwrap().iter().any(|r| r["id"] == rid));
    let garbage =
        post(&router, "/v2/refunds", json!({"refund": {"carrier": "USPS", "tracking_codes": ["not a code!"]}})).await;
    assert_eq!((garbage.status, garbage.body["error"]["code"].as_str()), (422, Some("PARAMETER.INVALID")));
    let again = post(&router, "/v2/refunds", json!({"refund": {"carrier": carrier, "tracking_codes": [code]}})).await;
    assert_eq!(again.status, 422, "{}", again.body);
}

/// A tracker made by the create is 201; the create of a code already tracked answers that
/// tracker with 200 (as the recorded creates of EZ1000000001 show).
#[tokio::test]
async fn a_new_tracker_is_201_and_a_known_code_200() {
    let (sim, _) = simulator(25);
    let router = sim.router();
    let first = post(&router, "/v2/trackers", json!({"tracker": {"tracking_code": "EZ2000000002"}})).await;
    assert_eq!((first.status, first.body["object"].as_str()), (201, Some("Tracker")), "{}", first.body);
    let again = post(&router, "/v2/trackers", json!({"tracker": {"tracking_code": "EZ2000000002"}})).await;
    assert_eq!((again.status, &again.body["id"]), (200, &first.body["id"]));
    // EasyPost's first test code is tracked in the seed.
    assert_eq!(post(&router, "/v2/trackers", json!({"tracker": {"tracking_code": "EZ1000000001"}})).await.status, 200);
}

/// Empty objects and lists are no value (recorded: `customs_info: {}` from easypost-go, `[]` and
/// `reference: ""` from easypost-ruby, each answered 201 with nulls); options carry no
/// `label_format` unless one is given.
#[tokio::test]
async fn shipments_take_empty_objects_and_lists_as_none() {
    let (sim, _) = simulator(26);
    let router = sim.router();
    let parcel = json!({"length": 10, "width": 8, "height": 4, "weight": 15.4});
    for extra in [json!({"customs_info": {}}), json!({"customs_info": [], "reference": ""})] {
        let mut shipment = json!({"to_address": to(), "from_address": from(), "parcel": parcel});
        for (k, v) in extra.as_object().unwrap() {
            shipment[k] = v.clone();
        }
        let made = post(&router, "/v2/shipments", json!({"shipment": shipment})).await;
        assert_eq!(made.status, 201, "{extra}: {}", made.body);
        assert!(made.body["customs_info"].is_null() && made.body["reference"].is_null(), "{}", made.body);
        assert!(made.body["options"].get("label_format").is_none(), "{}", made.body["options"]);
    }
    let pdf = post(
        &router,
        "/v2/shipments",
        json!({"shipment": {"to_address": to(), "from_address": from(), "parcel": parcel, "options": {"label_format": "pdf"}}}),
    )
    .await;
    assert_eq!(pdf.body["options"]["label_format"], "PDF");
}

/// A path outside the v2 API is not simulated, whatever its body: 404 in EasyPost's shape, never
/// a 415 for a form body (easypost-go and -ruby post card tokens to `/v1/tokens`).
#[tokio::test]
async fn paths_outside_v2_are_not_simulated_whatever_the_body() {
    let (sim, _) = simulator(27);
    let router = sim.router();
    let request = Request::post("/v1/tokens")
        .header("authorization", format!("Bearer {}", credentials::EASYPOST_KEY))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from("card%5Bnumber%5D=4536410136126170&card%5Bexp_month%5D=05"))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = serde_json::from_slice(&to_bytes(response.into_body(), 4096).await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "NOT_FOUND");
    assert!(body["error"]["errors"][0]["message"].as_str().unwrap().contains("POST /v1/tokens is not simulated"));
    let beta = post(&router, "/beta/referral_customers/refunds", json!({"refund_amount": 2000})).await;
    assert_eq!(beta.status, 404);
}

/// End shippers (as EasyPost's SDK tests record them): created from `{"address": ...}` (201),
/// verified and normalized, read, listed, replaced with `PUT`; an unknown one is not found.
#[tokio::test]
async fn end_shippers_are_verified_addresses_of_their_own() {
    let (sim, _) = simulator(28);
    let router = sim.router();
    let address = json!({"name": "Jack Sparrow", "street1": "388 Townsend St", "street2": "Apt 20",
                         "city": "San Francisco", "state": "CA", "zip": "94107", "country": "US",
                         "email": "test@example.com", "phone": "5555555555"});
    let made = post(&router, "/v2/end_shippers", json!({"address": address})).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let mut keys: Vec<&str> = made.body.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "city",
            "company",
            "country",
            "created_at",
            "email",
            "id",
            "mode",
            "name",
            "object",
            "phone",
            "state",
            "street1",
            "street2",
            "updated_at",
            "zip"
        ]
    );
    assert_eq!(
        (&made.body["object"], &made.body["name"], &made.body["street1"], &made.body["city"]),
        (&json!("EndShipper"), &json!("JACK SPARROW"), &json!("388 TOWNSEND ST APT 20"), &json!("SAN FRANCISCO"))
    );
    assert!(made.body["zip"].as_str().unwrap().starts_with("94107-"));
    assert!(made.body["created_at"].as_str().unwrap().ends_with("+00:00"));
    let id = made.body["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("es_"));
    assert_eq!(get(&router, &format!("/v2/end_shippers/{id}")).await.body, made.body);
    let listed = get(&router, "/v2/end_shippers?page_size=5").await.body;
    assert_eq!((listed["end_shippers"][0]["id"].as_str(), &listed["has_more"]), (Some(id.as_str()), &json!(false)));
    let mut renamed = address.clone();
    renamed["name"] = json!("Captain Sparrow");
    renamed["company"] = json!("EasyPost");
    let put = send(&router, "PUT", &format!("/v2/end_shippers/{id}"), Some(json!({"address": renamed}))).await;
    assert_eq!(
        (put.status, &put.body["name"], &put.body["company"]),
        (200, &json!("CAPTAIN SPARROW"), &json!("EASYPOST"))
    );
    assert_eq!(get(&router, &format!("/v2/end_shippers/{id}")).await.body["name"], "CAPTAIN SPARROW");
    let missing = post(&router, "/v2/end_shippers", json!({})).await;
    assert_eq!((missing.status, missing.body["error"]["code"].as_str()), (422, Some("PARAMETER.REQUIRED")));
    let bad = post(&router, "/v2/end_shippers", json!({"address": {"street1": 5, "name": ["x"]}})).await;
    assert_eq!(bad.status, 422);
    assert_eq!(get(&router, "/v2/end_shippers/es_nope").await.status, 404);
    let put_gone = send(&router, "PUT", "/v2/end_shippers/es_nope", Some(json!({"address": address}))).await;
    assert_eq!(put_gone.status, 404);
}

/// The sandbox user (shapes as recorded): `GET /v2/users` and by its id, updated with `PUT` or
/// `PATCH` (wrapped or not); it has no children (making one is not simulated), and another
/// user id is not found.
#[tokio::test]
async fn the_sandbox_user_is_read_and_updated_and_has_no_children() {
    let (sim, _) = simulator(29);
    let router = sim.router();
    let me = get(&router, "/v2/users").await;
    assert_eq!(me.status, 200);
    let mut keys: Vec<&str> = me.body.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "balance",
            "cc_fee_rate",
            "children",
            "created_at",
            "default_carbon_offset",
            "default_insurance_amount",
            "email",
            "has_billing_method",
            "has_elevate_access",
            "id",
            "insurance_fee_minimum",
            "insurance_fee_rate",
            "name",
            "object",
            "parent_id",
            "phone_number",
            "price_per_shipment",
            "recharge_amount",
            "recharge_threshold",
            "secondary_recharge_amount",
            "verified"
        ]
    );
    let id = me.body["id"].as_str().unwrap().to_owned();
    assert_eq!((&me.body["object"], &me.body["parent_id"]), (&json!("User"), &Value::Null));
    assert_eq!(get(&router, &format!("/v2/users/{id}")).await.body, me.body);
    let patched =
        send(&router, "PATCH", &format!("/v2/users/{id}"), Some(json!({"user": {"name": "Test User"}}))).await;
    assert_eq!((patched.status, patched.body["name"].as_str()), (200, Some("Test User")));
    let put = send(
        &router,
        "PUT",
        &format!("/v2/users/{id}"),
        Some(json!({"name": "New Test Name", "recharge_amount": 250})),
    )
    .await;
    assert_eq!(
        (put.status, &put.body["name"], &put.body["recharge_amount"]),
        (200, &json!("New Test Name"), &json!("250.00"))
    );
    assert_eq!(get(&router, "/v2/users").await.body["name"], "New Test Name");
    let bad = send(&router, "PUT", &format!("/v2/users/{id}"), Some(json!({"recharge_amount": "-5"}))).await;
    assert_eq!((bad.status, bad.body["error"]["code"].as_str()), (422, Some("PARAMETER.INVALID")));
    let children = get(&router, "/v2/users/children?page_size=5").await;
    assert_eq!((children.status, &children.body), (200, &json!({"children": [], "has_more": false})));
    let other = get(&router, "/v2/users/user_5f0c48e7a66b42398740b0149b1bb24c").await;
    assert_eq!((other.status, other.body["error"]["code"].as_str()), (404, Some("NOT_FOUND")));
    assert_eq!(send(&router, "PATCH", "/v2/users/user_nope", Some(json!({"name": "x"}))).await.status, 404);
    // Events name the sandbox user.
    new_shipment(&router).await;
    let batch = post(&router, "/v2/batches", json!({"batch": {}})).await;
    assert_eq!(batch.status, 200);
    let events = get(&router, "/v2/events?page_size=1").await.body;
    assert_eq!(events["events"][0]["user_id"], id.as_str());
}
