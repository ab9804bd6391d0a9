//! The console's EasyPost tab driven by keys, against a fake EasyPost whose bodies are shaped as
//! shared/api/easypost.md records them, and a second server on another origin standing for the
//! S3 bucket real labels live in: a shipment's rates with the cheapest and fastest marked, buying
//! one (asked first, the price and carrier restated), the label saved to disk without any
//! credential and never over an existing file, converted then saved; a tracker's timeline moving
//! while its view is open; a batch bought, labelled and scan-formed with its states going by;
//! addresses, insurance, refunds and webhooks in their columns.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use opsdeck::cli::GlobalArgs;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::harness::Harness;

/// What the fake EasyPost holds and what it and the file server saw.
#[derive(Default)]
struct Books {
    /// The file server's base URL (another origin than the API's).
    files: String,
    shipments: Vec<Value>,
    /// Buys that went through.
    bought: usize,
    /// `file_format` of each label conversion asked for.
    conversions: Vec<String>,
    /// How many times the tracker was asked for by id.
    tracker_asks: usize,
    batch: Value,
    /// The batch's states still to come, one per ask.
    batch_next: Vec<Value>,
    /// The `Authorization` header of every API request (`None`: it had none).
    api_auth: Vec<Option<String>>,
    /// Every header name the file server was sent, per request.
    file_headers: Vec<Vec<String>>,
}

type Shared = Arc<Mutex<Books>>;

fn rate(id: &str, carrier: &str, service: &str, price: &str, days: u64) -> Value {
    json!({"id": id, "object": "Rate", "created_at": "2025-03-07T16:46:17Z", "updated_at": "2025-03-07T16:46:17Z",
        "mode": "test", "service": service, "carrier": carrier, "rate": price, "currency": "USD", "retail_rate": price,
        "retail_currency": "USD", "list_rate": price, "list_currency": "USD", "billing_type": "easypost",
        "delivery_days": days, "delivery_date": null, "delivery_date_guaranteed": false, "est_delivery_days": days,
        "shipment_id": "shp_4f5381cd729d48c2adc4d2d801d655e2", "carrier_account_id": "ca_b25657e9896e4d63ac8151ac346ac41e"})
}

fn address(id: &str, name: &str, city: &str, state: &str, zip: &str, verifications: Value) -> Value {
    json!({"id": id, "object": "Address", "created_at": "2025-03-06T19:47:20+00:00", "updated_at": "2025-03-06T19:47:20+00:00",
        "name": name, "company": null, "street1": "388 TOWNSEND ST APT 20", "street2": "", "city": city, "state": state,
        "zip": zip, "country": "US", "phone": "5555555555", "email": "test@example.com", "mode": "test",
        "carrier_facility": null, "residential": true, "federal_tax_id": null, "state_tax_id": null,
        "verifications": verifications})
}

/// A shipment not bought yet, with five rates: two tied for the cheapest, two for the fastest.
fn new_shipment() -> Value {
    json!({"id": "shp_4f5381cd729d48c2adc4d2d801d655e2", "object": "Shipment", "mode": "test",
        "created_at": "2025-03-07T16:46:17Z", "updated_at": "2025-03-07T16:46:17Z", "is_return": false,
        "reference": "order-42", "status": "unknown", "tracking_code": null,
        "options": {"currency": "USD", "payment": {"type": "SENDER"}, "date_advance": 0},
        "messages": [{"carrier": "DHLExpress", "carrier_account_id": "ca_1", "type": "rate_error",
            "message": "no rates for this route\u{1b}[2J"}],
        "batch_id": null, "batch_status": null, "batch_message": null,
        "to_address": address("adr_to", "JACK SPARROW", "SAN FRANCISCO", "CA", "94107-1670", json!({})),
        "from_address": address("adr_from", "EASYPOST", "HOUSTON", "TX", "77063", json!({})),
        "parcel": {"id": "prcl_5d81cd2ad3644052943064bf570d753e", "object": "Parcel", "length": 10.0, "width": 8.0,
            "height": 4.0, "predefined_package": null, "weight": 15.4, "mode": "test"},
        "customs_info": null, "insurance": null,
        "rates": [
            rate("rate_express", "USPS", "Express", "34.15", 1),
            rate("rate_priority", "USPS", "Priority", "7.42", 2),
            rate("rate_ground", "USPS", "GroundAdvantage", "6.07", 3),
            rate("rate_ups", "UPS", "Ground", "6.07", 5),
            rate("rate_fedex", "FedEx", "FirstOvernight", "41.00", 1)],
        "selected_rate": null, "postage_label": null, "tracker": null, "refund_status": null,
        "scan_form": null, "forms": [], "fees": [], "order_id": null, "usps_zone": 8})
}

fn api_error(status: StatusCode, code: &str, message: &str) -> (StatusCode, Json<Value>) {
    (status, Json(json!({"error": {"code": code, "message": message, "errors": []}})))
}

fn seen(books: &Shared, headers: &HeaderMap) {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    books.lock().unwrap().api_auth.push(auth);
}

fn tracker(asks: usize) -> Value {
    let steps = [
        ("pre_transit", "Shipping Label Created", "2025-02-07T08:25:26Z"),
        ("in_transit", "Arrived at USPS Facility\u{1b}]0;pwned\u{7}", "2025-02-08T10:00:00Z"),
        ("out_for_delivery", "Out for Delivery", "2025-02-09T07:10:00Z"),
        ("delivered", "Delivered, In/At Mailbox", "2025-02-09T15:42:00Z"),
    ];
    let count = (asks + 1).min(steps.len());
    let details: Vec<Value> = steps[..count]
        .iter()
        .map(|(status, message, at)| {
            json!({"object": "TrackingDetail", "message": message, "description": "", "status": status,
                "status_detail": "status_update", "datetime": at, "source": "USPS", "carrier_code": "",
                "tracking_location": {"object": "TrackingLocation", "city": "CHARLESTON", "state": "SC", "country": null, "zip": "29401"}})
        })
        .collect();
    let (status, ..) = steps[count - 1];
    json!({"id": "trk_279431562ef84af89555e5c8a2029b2f", "object": "Tracker", "mode": "test",
        "tracking_code": "EZ2000000002", "status": status, "status_detail": "status_update",
        "created_at": "2025-02-07T08:25:26Z", "updated_at": steps[count - 1].2,
        "signed_by": if status == "delivered" { json!("J SPARROW") } else { json!(null) }, "weight": null,
        "est_delivery_date": "2025-02-10T00:00:00Z", "shipment_id": null, "carrier": "USPS",
        "tracking_details": details, "carrier_detail": {"object": "CarrierDetail", "service": "First-Class Package Service",
            "origin_location": "HOUSTON TX, 77001", "destination_location": "CHARLESTON SC, 29401"},
        "finalized": status == "delivered", "is_return": false, "public_url": "https://track.easypost.com/djE6dHJrXzI3OTQz", "fees": []})
}

fn batch(state: &str, statuses: [&str; 2], label_url: Option<&str>, scan_form: Value) -> Value {
    let shipments: Vec<Value> = statuses
        .iter()
        .enumerate()
        .map(|(i, status)| {
            let code = (*status == "postage_purchased").then(|| format!("940010020830310950572{i}"));
            json!({"id": format!("shp_batch{i}"), "reference": null, "tracking_code": code, "batch_status": status,
                "batch_message": null})
        })
        .collect();
    let count = |name: &str| statuses.iter().filter(|s| **s == name).count();
    json!({"id": "batch_714d7667a73f450eb169b20c1425c6a2", "object": "Batch", "mode": "test", "state": state,
        "num_shipments": 2, "reference": null, "created_at": "2025-03-06T19:47:23Z", "updated_at": "2025-03-06T19:47:23Z",
        "scan_form": scan_form, "shipments": shipments,
        "status": {"created": count("created"), "queued_for_purchase": count("queued_for_purchase"), "creation_failed": 0,
            "postage_purchased": count("postage_purchased"), "postage_purchase_failed": 0},
        "pickup": null, "label_url": label_url})
}

fn fake_easypost(books: Shared) -> Router {
    Router::new()
        .route(
            "/v2/shipments",
            get(|State(books): State<Shared>, headers: HeaderMap| async move {
                seen(&books, &headers);
                let shipments = books.lock().unwrap().shipments.clone();
                Json(json!({"shipments": shipments, "has_more": false}))
            }),
        )
        .route(
            "/v2/shipments/{id}/buy",
            post(|State(books): State<Shared>, Path(id): Path<String>, headers: HeaderMap, Json(body): Json<Value>| async move {
                seen(&books, &headers);
                let mut books = books.lock().unwrap();
                let files = books.files.clone();
                let Some(shipment) = books.shipments.iter_mut().find(|s| s["id"] == id.as_str()) else {
                    return Err(api_error(StatusCode::NOT_FOUND, "NOT_FOUND", "The requested resource could not be found."));
                };
                if !shipment["postage_label"].is_null() {
                    return Err(api_error(StatusCode::UNPROCESSABLE_ENTITY, "SHIPMENT.POSTAGE.EXISTS", "The shipment has already been purchased."));
                }
                let rate_id = body["rate"]["id"].as_str().unwrap_or_default().to_owned();
                let Some(chosen) = shipment["rates"].as_array().unwrap().iter().find(|r| r["id"] == rate_id.as_str()).cloned() else {
                    return Err(api_error(StatusCode::UNPROCESSABLE_ENTITY, "SHIPMENT.RATE.INVALID", "Rate not found."));
                };
                shipment["selected_rate"] = chosen.clone();
                shipment["tracking_code"] = json!("9400100208303109505657");
                shipment["postage_label"] = json!({"object": "PostageLabel", "id": "pl_6b404afa1ac543c3a447abdcb6e5ccbb",
                    "date_advance": 0, "integrated_form": "none", "label_date": "2025-03-07T16:46:20Z", "label_resolution": 300,
                    "label_size": "4x6", "label_type": "default", "label_file_type": "image/png",
                    "label_url": format!("{files}/files/postage_label/20250307/e8a1.png"),
                    "label_pdf_url": null, "label_zpl_url": null, "label_epl2_url": null, "label_file": null});
                shipment["tracker"] = json!({"id": "trk_279431562ef84af89555e5c8a2029b2f", "object": "Tracker", "mode": "test",
                    "tracking_code": "9400100208303109505657", "status": "unknown", "status_detail": "unknown",
                    "tracking_details": [], "carrier": chosen["carrier"], "public_url": "https://track.easypost.com/x"});
                shipment["fees"] = json!([{"object": "Fee", "type": "LabelFee", "amount": "0.00000", "charged": true, "refunded": false},
                    {"object": "Fee", "type": "PostageFee", "amount": chosen["rate"], "charged": true, "refunded": false}]);
                let answer = shipment.clone();
                books.bought += 1;
                Ok(Json(answer))
            }),
        )
        .route(
            "/v2/shipments/{id}/label",
            get(|State(books): State<Shared>, Path(id): Path<String>, Query(query): Query<std::collections::HashMap<String, String>>, headers: HeaderMap| async move {
                seen(&books, &headers);
                let mut books = books.lock().unwrap();
                let files = books.files.clone();
                let format = query.get("file_format").cloned().unwrap_or_default();
                books.conversions.push(format.clone());
                let Some(shipment) = books.shipments.iter_mut().find(|s| s["id"] == id.as_str()) else {
                    return Err(api_error(StatusCode::NOT_FOUND, "NOT_FOUND", "The requested resource could not be found."));
                };
                let field = match format.as_str() {
                    "PDF" => "label_pdf_url",
                    "ZPL" => "label_zpl_url",
                    "EPL2" => "label_epl2_url",
                    _ => return Err(api_error(StatusCode::UNPROCESSABLE_ENTITY, "PARAMETER.INVALID", "Invalid file format.")),
                };
                let ext = format.to_ascii_lowercase();
                shipment["postage_label"][field] = json!(format!("{files}/files/postage_label/20250307/e8a1.{ext}"));
                Ok(Json(shipment.clone()))
            }),
        )
        .route(
            "/v2/trackers",
            get(|State(books): State<Shared>, headers: HeaderMap| async move {
                seen(&books, &headers);
                Json(json!({"trackers": [tracker(0)], "has_more": false}))
            }),
        )
        .route(
            "/v2/trackers/{id}",
            get(|State(books): State<Shared>, headers: HeaderMap| async move {
                seen(&books, &headers);
                let mut books = books.lock().unwrap();
                books.tracker_asks += 1;
                Json(tracker(books.tracker_asks))
            }),
        )
        .route(
            "/v2/batches",
            get(|State(books): State<Shared>, headers: HeaderMap| async move {
                seen(&books, &headers);
                let batch = books.lock().unwrap().batch.clone();
                Json(json!({"batches": [batch], "has_more": false}))
            }),
        )
        .route(
            "/v2/batches/{id}",
            get(|State(books): State<Shared>, headers: HeaderMap| async move {
                seen(&books, &headers);
                let mut books = books.lock().unwrap();
                if !books.batch_next.is_empty() {
                    books.batch = books.batch_next.remove(0);
                }
                Json(books.batch.clone())
            }),
        )
        .route(
            "/v2/batches/{id}/{action}",
            post(|State(books): State<Shared>, Path((_, action)): Path<(String, String)>, headers: HeaderMap, Json(body): Json<Value>| async move {
                seen(&books, &headers);
                let mut books = books.lock().unwrap();
                let files = books.files.clone();
                let label = format!("{files}/files/batch_label/b714.pdf");
                let bought = ["postage_purchased", "postage_purchased"];
                let form = |status: &str, url: Option<String>| {
                    json!({"id": "sf_8eeeea1e23b44a8388cbb85b12595f46", "object": "ScanForm", "status": status, "message": null,
                        "form_url": url, "form_file_type": null, "batch_id": "batch_714d7667a73f450eb169b20c1425c6a2",
                        "tracking_codes": ["94001002083031095057200", "94001002083031095057201"]})
                };
                let (now, next) = match action.as_str() {
                    "buy" => (
                        batch("purchasing", ["queued_for_purchase", "queued_for_purchase"], None, Value::Null),
                        vec![
                            batch("purchasing", ["postage_purchased", "queued_for_purchase"], None, Value::Null),
                            batch("purchased", bought, None, Value::Null),
                        ],
                    ),
                    "label" => {
                        assert_eq!(body["file_format"], "PDF", "the format asked for");
                        (
                            batch("label_generating", bought, None, Value::Null),
                            vec![batch("label_generated", bought, Some(&label), Value::Null)],
                        )
                    }
                    "scan_form" => (
                        batch("label_generated", bought, Some(&label), form("creating", None)),
                        vec![batch("label_generated", bought, Some(&label), form("created", Some(format!("{files}/files/scan_form/sf.pdf"))))],
                    ),
                    _ => return Err(api_error(StatusCode::NOT_FOUND, "NOT_FOUND", "The requested resource could not be found.")),
                };
                books.batch = now.clone();
                books.batch_next = next;
                Ok(Json(now))
            }),
        )
        .route(
            "/v2/addresses",
            get(|State(books): State<Shared>, headers: HeaderMap| async move {
                seen(&books, &headers);
                let verified = json!({"zip4": {"success": true, "errors": [], "details": null},
                    "delivery": {"success": true, "errors": [], "details": {"latitude": 37.77551, "longitude": -122.39697, "time_zone": "America/Los_Angeles"}}});
                let failed = json!({"zip4": {"success": false, "errors": [{"code": "E.ADDRESS.NOT_FOUND", "field": "address", "message": "Address not found", "suggestion": null}], "details": null},
                    "delivery": {"success": false, "errors": [{"code": "E.HOUSE_NUMBER.MISSING", "field": "street1", "message": "House number is missing", "suggestion": null}], "details": {}}});
                Json(json!({"addresses": [
                    address("adr_ok", "JACK SPARROW", "SAN FRANCISCO", "CA", "94107-1670", verified),
                    address("adr_bad", "NOBODY", "NOWHERE", "CA", "00000", failed),
                    address("adr_raw", "plain", "Houston", "TX", "77063", json!({}))], "has_more": false}))
            }),
        )
        .route(
            "/v2/insurances",
            get(|State(books): State<Shared>, headers: HeaderMap| async move {
                seen(&books, &headers);
                Json(json!({"insurances": [{"id": "ins_dcf565145ccf4f04a8d820d810590ad5", "object": "Insurance", "mode": "test",
                    "reference": null, "status": "pending", "amount": "100.00000", "provider": "easypost", "provider_id": null,
                    "shipment_id": null, "tracking_code": "9400100208303109500690",
                    "fee": {"object": "Fee", "type": "InsuranceFee", "amount": "1.00000", "charged": true, "refunded": false},
                    "messages": [], "created_at": "2025-03-06T19:48:00Z", "updated_at": "2025-03-06T19:48:00Z"}], "has_more": false}))
            }),
        )
        .route(
            "/v2/refunds",
            get(|State(books): State<Shared>, headers: HeaderMap| async move {
                seen(&books, &headers);
                Json(json!({"refunds": [{"id": "rfnd_36f1ce2418c34aee8c253bc785e4ddae", "object": "Refund",
                    "created_at": "2025-03-06T19:48:10Z", "updated_at": "2025-03-06T19:48:10Z", "tracking_code": "9400100208303109500775",
                    "confirmation_number": "CONF-77", "status": "submitted", "carrier": "USPS",
                    "shipment_id": "shp_82abbe8e8a1f4746bfbe7c943906c52c"}], "has_more": false}))
            }),
        )
        .route(
            "/v2/webhooks",
            get(|State(books): State<Shared>, headers: HeaderMap| async move {
                seen(&books, &headers);
                Json(json!({"webhooks": [{"id": "hook_0dfff13cfac411ef87a6010e985f89d4", "object": "Webhook", "mode": "test",
                    "url": "http://example.com/easypost", "created_at": "2025-03-06T19:49:03Z", "disabled_at": null,
                    "custom_headers": [{"name": "X-Shop-Key", "value": "hunter2-secret"}]}]}))
            }),
        )
        .with_state(books)
}

/// The S3 bucket of real labels, on its own origin: what it serves, and every header it is sent.
fn fake_files(books: Shared) -> Router {
    Router::new()
        .route(
            "/files/{kind}/{day}/{name}",
            get(
                |State(books): State<Shared>,
                 Path((_, _, name)): Path<(String, String, String)>,
                 headers: HeaderMap| async move {
                    books.lock().unwrap().file_headers.push(headers.keys().map(|k| k.as_str().to_owned()).collect());
                    file_bytes(&name)
                },
            ),
        )
        .route(
            "/files/{kind}/{name}",
            get(
                |State(books): State<Shared>, Path((_, name)): Path<(String, String)>, headers: HeaderMap| async move {
                    books.lock().unwrap().file_headers.push(headers.keys().map(|k| k.as_str().to_owned()).collect());
                    file_bytes(&name)
                },
            ),
        )
        .with_state(books)
}

fn file_bytes(name: &str) -> Vec<u8> {
    match name.rsplit('.').next() {
        Some("png") => b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR opsdeck label".to_vec(),
        Some("zpl") => b"^XA^FO50,50^ADN,36,20^FDopsdeck^FS^XZ".to_vec(),
        _ => b"%PDF-1.4\n% opsdeck\n".to_vec(),
    }
}

/// The EasyPost tab pointed at the fake, with its shipments listed, the browser focused.
async fn easypost(shipments: Vec<Value>) -> (Harness, Shared) {
    let books: Shared = Arc::default();
    let files = opsdeck::sandbox::serve_loopback(fake_files(books.clone())).await.unwrap();
    {
        let mut b = books.lock().unwrap();
        b.files = files;
        b.shipments = shipments;
        b.batch = batch("created", ["created", "created"], None, Value::Null);
    }
    let url = opsdeck::sandbox::serve_loopback(fake_easypost(books.clone())).await.unwrap();
    let mut h = Harness::with_env(GlobalArgs::default(), &move |name| match name {
        "OPSDECK_EASYPOST_URL" => Some(url.clone()),
        "COLORTERM" => Some("truecolor".into()),
        _ => None,
    })
    .await;
    h.keys("7");
    h.settle().await;
    h.console.app.focus = Focus::Browser;
    (h, books)
}

fn popup_title(h: &Harness) -> String {
    match &h.console.app.popup {
        Some(Popup::Detail(detail)) => detail.title.clone(),
        Some(Popup::Form(form)) => format!("form {}", form.op.name),
        Some(Popup::Confirm(confirm)) => format!("confirm {}", confirm.op.name),
        Some(Popup::Save(prompt, _)) => format!("save {}", prompt.path.text()),
        Some(_) => "another popup".into(),
        None => "no popup".into(),
    }
}

/// A folder of its own under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("opsdeck-tui-easypost-{}-{nanos}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Types `path` into the open save prompt over what it offered, and presses Enter.
fn save_as(h: &mut Harness, path: &std::path::Path) {
    assert!(matches!(h.console.app.popup, Some(Popup::Save(..))), "a save prompt:\n{}", h.screen());
    h.keys("<C-u>");
    h.paste(&path.display().to_string());
    h.keys("<Enter>");
}

/// Lets the open view ask again: the first tick notes the view, the next one (an interval
/// later) asks; then the answer is applied.
async fn time_passes(h: &mut Harness, at: &mut Instant) {
    for _ in 0..2 {
        *at += Duration::from_secs(3);
        h.console.app.on_tick(*at);
    }
    h.settle().await;
}

/// Buys the rate of the row `row` of the rates view open, confirming with `y`.
async fn buy_row(h: &mut Harness, row: usize) {
    h.keys(&format!("{}b", "j".repeat(row)));
    assert_eq!(popup_title(h), "form shipments_buy", "{}", h.screen());
    h.keys("<C-s>");
    assert_eq!(popup_title(h), "confirm shipments_buy", "buying asks first:\n{}", h.screen());
    h.keys("y");
    h.settle().await;
}

#[tokio::test]
async fn the_rates_view_marks_the_cheapest_and_the_fastest_and_buying_asks_first_restating_the_price() {
    let (mut h, books) = easypost(vec![new_shipment()]).await;
    let screen = h.screen();
    assert!(screen.contains("shipments page 1"), "{screen}");
    assert!(screen.contains("SAN FRANCISCO, CA"), "where it goes, in the list:\n{screen}");
    h.keys("<Enter>");
    assert_eq!(popup_title(&h), "shipment shp_4f5381cd729d48c2adc4d2d801d655e2 · not bought");
    let screen = h.screen();
    let line_of = |needle: &str| screen.lines().find(|l| l.contains(needle)).unwrap_or_default().to_owned();
    assert!(line_of("GroundAdvantage").contains("cheapest"), "{screen}");
    assert!(line_of("UPS").contains("cheapest"), "a tie on price marks both:\n{screen}");
    assert!(line_of(" Express ").contains("fastest") && line_of("FirstOvernight").contains("fastest"), "{screen}");
    assert!(!line_of("Priority").contains("cheapest") && !line_of("Priority").contains("fastest"), "{screen}");
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains(" USD")).collect();
    let order: Vec<usize> = ["6.07 USD", "7.42 USD", "34.15 USD", "41.00 USD"]
        .iter()
        .map(|price| rows.iter().position(|l| l.contains(price)).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "cheapest first:\n{screen}");
    assert!(screen.contains("b buy this rate"), "{screen}");
    assert!(screen.contains("no rates for this route␛[2J"), "carrier messages shown, inert:\n{screen}");

    // The third row is USPS Priority: the form has it, and the confirmation says what it costs.
    h.keys("jjb");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form:\n{}", h.screen()) };
    assert_eq!(form.values().get("rate").map(String::as_str), Some(r#"{"id":"rate_priority"}"#));
    assert_eq!(form.values().get("id").map(String::as_str), Some("shp_4f5381cd729d48c2adc4d2d801d655e2"));
    h.keys("<C-s>");
    assert_eq!(popup_title(&h), "confirm shipments_buy");
    let screen = h.screen();
    assert!(screen.contains("buys USPS Priority for 7.42 USD, 2 days"), "{screen}");
    let target = screen.lines().find(|l| l.contains("EasyPost · profile")).unwrap_or_default();
    assert!(target.contains("URL 127.0.0.1:"), "the confirmation names where it goes: {screen}");
    h.keys("n");
    h.settle().await;
    assert_eq!(books.lock().unwrap().bought, 0, "no means nothing is bought");

    // Again, and yes: the shipment is bought; its view shows the tracking code, rate and label.
    h.keys("b");
    h.keys("jjb");
    h.keys("<C-s>y");
    h.settle().await;
    assert_eq!(books.lock().unwrap().bought, 1);
    assert_eq!(popup_title(&h), "shipment shp_4f5381cd729d48c2adc4d2d801d655e2 · bought · unknown", "{}", h.screen());
    let screen = h.screen();
    for text in
        ["9400100208303109505657", "USPS Priority · 7.42 USD", "label files", "e8a1.png", "s save label", "c convert"]
    {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    assert!(screen.lines().any(|l| l.contains("Priority") && l.contains("bought")), "{screen}");
    assert!(books.lock().unwrap().api_auth.iter().all(Option::is_some), "API calls carry the key");

    // Buying twice gets EasyPost's error, said clearly; nothing changes.
    h.keys("<Esc>");
    h.keys(":easypost shipments_buy<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form:\n{}", h.screen()) };
    form.set_value("id", "shp_4f5381cd729d48c2adc4d2d801d655e2");
    form.set_value("rate", r#"{"id":"rate_ground"}"#);
    h.keys("<C-s>");
    assert!(h.screen().contains("buys USPS GroundAdvantage for 6.07 USD"), "{}", h.screen());
    h.keys("y");
    h.settle().await;
    assert!(h.screen().contains("already been purchased"), "{}", h.screen());
    assert_eq!(books.lock().unwrap().bought, 1);
}

#[tokio::test]
async fn the_label_is_saved_without_credentials_and_never_over_an_existing_file() {
    let (mut h, books) = easypost(vec![new_shipment()]).await;
    h.keys("<Enter>");
    buy_row(&mut h, 0).await;
    assert!(popup_title(&h).contains("· bought ·"), "{}", h.screen());
    let dir = scratch("save");
    let path = dir.join("label.png");

    h.keys("s");
    assert_eq!(popup_title(&h), "save ./9400100208303109505657.png", "the tracking code names the file");
    let screen = h.screen();
    assert!(screen.contains("/files/postage_label/20250307/e8a1.png"), "where it comes from:\n{screen}");
    save_as(&mut h, &path);
    assert!(popup_title(&h).contains("· bought ·"), "the view comes back:\n{}", h.screen());
    h.settle().await;
    assert_eq!(std::fs::read(&path).unwrap(), file_bytes("e8a1.png"), "the bytes served");
    let said = format!("saved {} B to {}", file_bytes("e8a1.png").len(), path.display());
    assert!(h.screen().contains(&said), "{said} in:\n{}", h.screen());
    let sent = books.lock().unwrap().file_headers.clone();
    assert_eq!(sent.len(), 1);
    for forbidden in ["authorization", "cookie", "proxy-authorization", "referer"] {
        assert!(!sent[0].iter().any(|h| h == forbidden), "{forbidden} sent to the file's origin: {sent:?}");
    }

    // The same name again is refused in the prompt, and the file keeps its bytes.
    std::fs::write(&path, b"mine").unwrap();
    h.keys("s");
    save_as(&mut h, &path);
    assert!(matches!(h.console.app.popup, Some(Popup::Save(..))), "the prompt stays:\n{}", h.screen());
    assert!(h.screen().contains("exists and is never"), "{}", h.screen());
    h.keys("<Esc>");
    assert!(popup_title(&h).contains("· bought ·"));
    assert_eq!(std::fs::read(&path).unwrap(), b"mine");
    assert_eq!(books.lock().unwrap().file_headers.len(), 1, "nothing downloaded");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_label_converted_to_zpl_is_then_saved() {
    let (mut h, books) = easypost(vec![new_shipment()]).await;
    h.keys("<Enter>");
    buy_row(&mut h, 1).await;
    h.keys("c");
    let screen = h.screen();
    assert!(screen.contains("save the label as: p PDF · z ZPL · e EPL2 · n PNG · Esc back"), "{screen}");
    h.keys("z");
    h.settle().await;
    assert_eq!(books.lock().unwrap().conversions, ["ZPL"]);
    assert_eq!(popup_title(&h), "save ./9400100208303109505657.zpl", "{}", h.screen());
    assert!(h.screen().contains("e8a1.zpl"), "{}", h.screen());
    let dir = scratch("convert");
    let path = dir.join("label.zpl");
    save_as(&mut h, &path);
    h.settle().await;
    assert_eq!(std::fs::read(&path).unwrap(), file_bytes("x.zpl"));
    // Once converted, the view lists the ZPL file and saving it again asks nothing of EasyPost.
    let screen = h.screen();
    assert!(screen.lines().any(|l| l.contains("ZPL") && l.contains("converted")), "{screen}");
    h.keys("cz");
    assert_eq!(popup_title(&h), "save ./9400100208303109505657.zpl");
    assert_eq!(books.lock().unwrap().conversions.len(), 1);
    h.keys("<Esc>");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_tracker_view_shows_its_timeline_and_follows_it_while_open() {
    let (mut h, books) = easypost(Vec::new()).await;
    h.browse("trackers").await;
    let screen = h.screen();
    assert!(screen.contains("EZ2000000002") && screen.contains("pre_transit"), "{screen}");
    h.keys("<Enter>");
    assert_eq!(popup_title(&h), "tracker EZ2000000002 · pre_transit");
    let screen = h.screen();
    for text in ["timeline (1 events, newest first)", "Shipping Label Created", "CHARLESTON, SC 29401", "● live"] {
        assert!(screen.contains(text), "{text} in:\n{screen}");
    }
    assert!(h.console.app.next_deadline().is_some(), "the open view will ask again");

    let mut at = Instant::now();
    time_passes(&mut h, &mut at).await;
    assert_eq!(popup_title(&h), "tracker EZ2000000002 · in_transit", "{}", h.screen());
    let screen = h.screen();
    assert!(screen.contains("timeline (2 events, newest first)"), "{screen}");
    let arrived = screen.lines().position(|l| l.contains("Arrived at USPS Facility")).unwrap();
    let created = screen.lines().position(|l| l.contains("Shipping Label Created")).unwrap();
    assert!(arrived < created, "newest first:\n{screen}");
    assert!(screen.contains("␛]0;pwned␇"), "server text is inert:\n{screen}");
    assert!(!screen.contains('\u{1b}'), "{screen}");

    // An ask cancelled with Ctrl-x after closing the view (it may or may not have reached
    // EasyPost) does not keep the view from asking again once it is back (b).
    at += Duration::from_secs(3);
    h.console.app.on_tick(at);
    assert_eq!(h.console.app.executor.active_count(), 1, "an ask is out");
    h.keys("<Esc><C-x>");
    assert_eq!(h.console.app.executor.active_count(), 0);
    h.keys("b");
    assert!(popup_title(&h).starts_with("tracker EZ2000000002"), "{}", h.screen());
    for _ in 0..3 {
        if popup_title(&h).ends_with("delivered") {
            break;
        }
        time_passes(&mut h, &mut at).await;
    }
    assert_eq!(popup_title(&h), "tracker EZ2000000002 · delivered", "{}", h.screen());
    let screen = h.screen();
    assert!(screen.contains("J SPARROW") && screen.contains("no longer asks again"), "{screen}");
    assert_eq!(h.console.app.next_deadline(), None, "a delivered package is not asked about again");
    let asks = books.lock().unwrap().tracker_asks;
    assert!(asks >= 3, "{asks}");

    h.keys("<Esc><Enter>");
    assert_eq!(popup_title(&h), "tracker EZ2000000002 · pre_transit", "the row as listed");
    h.keys("<Esc>");
    assert!(h.console.app.popup.is_none());
    assert_eq!(h.console.app.next_deadline(), None, "no view open: nothing to wake up for");
    time_passes(&mut h, &mut at).await;
    assert_eq!(books.lock().unwrap().tracker_asks, asks, "nothing asked once closed");
}

#[tokio::test]
async fn a_batch_is_bought_labelled_and_scan_formed_with_its_states_going_by() {
    let (mut h, books) = easypost(Vec::new()).await;
    h.browse("batches").await;
    let screen = h.screen();
    assert!(screen.contains("created") && screen.contains("2 created"), "state and counts:\n{screen}");
    h.keys("<Enter>");
    assert_eq!(popup_title(&h), "batch batch_714d7667a73f450eb169b20c1425c6a2 · created");
    assert!(h.screen().contains("b buy · l label · f scan form"), "{}", h.screen());
    assert_eq!(h.console.app.next_deadline(), None, "a batch at rest is not asked about");

    let mut seen_states = Vec::new();
    let note = |h: &Harness, states: &mut Vec<String>| {
        let title = popup_title(h);
        let state = title.rsplit(" · ").next().unwrap_or_default().to_owned();
        if states.last() != Some(&state) {
            states.push(state);
        }
    };
    h.keys("b");
    assert_eq!(popup_title(&h), "confirm batches_buy", "buying a batch asks first");
    assert!(h.screen().contains("buys postage for the batch's 2 shipment(s)"), "{}", h.screen());
    h.keys("y");
    h.settle().await;
    note(&h, &mut seen_states);
    assert!(h.screen().contains("queued_for_purchase"), "{}", h.screen());
    let mut at = Instant::now();
    for _ in 0..2 {
        time_passes(&mut h, &mut at).await;
        note(&h, &mut seen_states);
    }
    assert!(h.screen().contains("2 postage_purchased"), "{}", h.screen());

    h.keys("l");
    assert!(h.screen().contains("one label file for the batch, as: p PDF · z ZPL · e EPL2"), "{}", h.screen());
    h.keys("p");
    h.settle().await;
    note(&h, &mut seen_states);
    time_passes(&mut h, &mut at).await;
    note(&h, &mut seen_states);
    assert!(
        h.screen().contains("/files/batch_label/b714.pdf") && h.screen().contains("s save label"),
        "{}",
        h.screen()
    );

    h.keys("f");
    h.settle().await;
    assert!(h.screen().contains("scan form creating"), "{}", h.screen());
    time_passes(&mut h, &mut at).await;
    assert!(h.screen().contains("scan form created") && h.screen().contains("d save scan form"), "{}", h.screen());
    assert_eq!(seen_states, ["purchasing", "purchased", "label_generating", "label_generated"]);

    // The batch's label file is saved like a shipment's.
    let dir = scratch("batch");
    h.keys("s");
    assert_eq!(popup_title(&h), "save ./batch_714d7667a73f450eb169b20c1425c6a2-label.pdf");
    save_as(&mut h, &dir.join("batch.pdf"));
    h.settle().await;
    assert_eq!(std::fs::read(dir.join("batch.pdf")).unwrap(), file_bytes("b714.pdf"));
    // The "saved" notice fades; after that nothing moves any more.
    let fades_at = h.console.app.tab().status_fades_at.expect("saved is a passing notice");
    h.console.app.on_tick(fades_at);
    assert_eq!(h.console.app.next_deadline(), None, "done: nothing moves any more");
    let _ = std::fs::remove_dir_all(dir);
    assert!(books.lock().unwrap().file_headers.iter().all(|h| !h.iter().any(|n| n == "authorization")));
}

#[tokio::test]
async fn addresses_insurance_refunds_and_webhooks_read_in_their_columns() {
    let (mut h, _) = easypost(Vec::new()).await;
    h.browse("addresses").await;
    let screen = h.screen();
    assert!(screen.contains("verified"), "{screen}");
    assert!(screen.lines().any(|l| l.contains("JACK SPARROW") && l.contains('✓')), "{screen}");
    assert!(screen.lines().any(|l| l.contains("NOBODY") && l.contains('✗')), "{screen}");
    h.keys("j<Enter>");
    assert_eq!(popup_title(&h), "address NOBODY · verification failed ✗");
    let screen = h.screen();
    assert!(screen.contains("E.HOUSE_NUMBER.MISSING") && screen.contains("House number is missing"), "{screen}");
    h.keys("<Esc>k<Enter>");
    assert!(h.screen().contains("America/Los_Angeles"), "{}", h.screen());
    h.keys("<Esc>");

    h.browse("insurances").await;
    let screen = h.screen();
    assert!(screen.contains("pending") && screen.contains("100.00") && screen.contains("1.00"), "{screen}");
    h.keys(":easypost insurance_refund<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_ref() else { panic!("form") };
    assert_eq!(form.values().get("id").map(String::as_str), Some("ins_dcf565145ccf4f04a8d820d810590ad5"));
    h.keys("<Esc>");

    h.browse("refunds").await;
    let screen = h.screen();
    assert!(screen.contains("submitted") && screen.contains("CONF-77"), "{screen}");

    h.browse("webhooks").await;
    h.keys("z");
    let screen = h.screen();
    assert!(screen.contains("http://example.com/easypost") && screen.contains("X-Shop-Key"), "{screen}");
    assert!(!screen.contains("hunter2-secret"), "a header's value is not listed:\n{screen}");
}

#[tokio::test]
async fn the_tab_reads_at_80x24() {
    let (mut h, _) = easypost(vec![new_shipment()]).await;
    h.resize(80, 24);
    let screen = h.screen();
    assert!(screen.contains("shipments") && screen.contains("status"), "{screen}");
    h.keys("<Enter>");
    let screen = h.screen();
    assert!(screen.contains("cheapest") && screen.contains("GroundAdvantage"), "{screen}");
    assert!(screen.contains("b buy"), "the keys are named:\n{screen}");
    h.keys("?");
    assert!(h.screen().contains("help"), "{}", h.screen());
}

#[tokio::test]
async fn the_shipments_list_at_80x24_shows_carrier_and_a_whole_tracking_code() {
    let mut h = simulator().await;
    h.resize(80, 24);
    let screen = h.screen();
    let rows: Vec<&str> =
        screen.lines().filter(|l| l.contains("USPS") || l.contains("UPS") || l.contains("FedEx")).collect();
    assert!(!rows.is_empty(), "{screen}");
    let mut least_blank = usize::MAX;
    for row in rows {
        // The list's own cells: between its borders, after the resources pane.
        let cells = row.split('│').nth(3).unwrap_or_default();
        let words: Vec<&str> = cells.split_whitespace().collect();
        assert!(words.len() >= 2, "carrier and tracking code: {cells:?}\n{screen}");
        let code = words[1];
        assert!(code.len() >= 10 && !code.ends_with('…'), "a whole tracking code: {cells:?}\n{screen}");
        least_blank = least_blank.min(cells.len() - cells.trim_end().len());
    }
    assert!(least_blank <= 6, "no wide empty column after the longest row:\n{screen}");
}

// Against the embedded EasyPost simulator and its seed, on its sandbox clock.

/// The EasyPost tab on the embedded simulator, its shipments listed, the browser focused.
async fn simulator() -> Harness {
    let mut h = Harness::new().await;
    h.keys("7");
    h.settle().await;
    h.console.app.focus = Focus::Browser;
    h
}

/// A shipment from the demo warehouse to New York, with every carrier's rates.
const NEW_SHIPMENT: &str = r#"{"to_address": {"name": "Ada Lovelace", "street1": "350 Fifth Ave", "city": "New York",
  "state": "NY", "zip": "10118", "country": "US"},
 "from_address": {"name": "Opsdeck Demo", "street1": "417 Montgomery St", "city": "San Francisco", "state": "CA",
  "zip": "94104", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "weight": 15.4}}"#;

/// Creates a shipment through its form; its rates view opens.
async fn create_shipment(h: &mut Harness) {
    h.keys(":easypost shipments_create<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form:\n{}", h.screen()) };
    form.set_value("shipment", NEW_SHIPMENT);
    h.keys("<C-s>");
    h.settle().await;
    assert!(popup_title(h).ends_with("· not bought"), "{}", h.screen());
}

fn open_detail(h: &Harness) -> &opsdeck::tui::components::detail::Detail {
    match &h.console.app.popup {
        Some(Popup::Detail(detail)) => detail,
        _ => panic!("a view is open"),
    }
}

/// The bytes at `url`, fetched as the console would (no credentials).
async fn served(url: &str) -> Vec<u8> {
    reqwest::get(url).await.unwrap().bytes().await.unwrap().to_vec()
}

#[tokio::test]
async fn with_the_simulator_a_rate_is_bought_after_its_price_is_restated_and_its_label_saved_and_converted() {
    let mut h = simulator().await;
    create_shipment(&mut h).await;
    let rates = &open_detail(&h).tables[0];
    assert!(rates.rows.len() >= 3, "rates from several carriers: {:?}", rates.rows);
    let carriers: std::collections::HashSet<&str> = rates.rows.iter().map(|r| r[1].as_str()).collect();
    assert!(carriers.len() >= 3, "{carriers:?}");
    assert!(rates.rows[0][0].contains("cheapest"), "{:?}", rates.rows);
    assert!(rates.rows.iter().any(|r| r[0].contains("fastest")), "{:?}", rates.rows);
    // The third cheapest, to be sure the one chosen is the one bought.
    let chosen = rates.rows[2].clone();
    h.keys("jjb<C-s>");
    assert_eq!(popup_title(&h), "confirm shipments_buy", "{}", h.screen());
    let said = format!("buys {} {} for {}", chosen[1], chosen[2], chosen[3]);
    assert!(h.screen().contains(&said), "{said} in:\n{}", h.screen());
    h.keys("y");
    h.settle().await;
    assert!(popup_title(&h).contains("· bought ·"), "{}", h.screen());
    let shipment = open_detail(&h).record.clone().unwrap();
    let tracking = shipment["tracking_code"].as_str().unwrap().to_owned();
    assert!(!tracking.is_empty());
    let screen = h.screen();
    assert!(screen.contains(&tracking), "{screen}");
    assert!(screen.contains(&format!("{} {} · {}", chosen[1], chosen[2], chosen[3])), "the rate bought:\n{screen}");
    let label_url = shipment["postage_label"]["label_url"].as_str().unwrap().to_owned();
    assert!(label_url.contains("/files/postage_label/"), "{label_url}");

    let dir = scratch("simulator");
    h.keys("s");
    save_as(&mut h, &dir.join("label.png"));
    h.settle().await;
    let saved = std::fs::read(dir.join("label.png")).unwrap();
    assert!(saved.starts_with(b"\x89PNG"), "a PNG");
    assert_eq!(saved, served(&label_url).await, "the bytes the simulator serves");

    h.keys("cp");
    h.settle().await;
    assert_eq!(popup_title(&h), format!("save ./{tracking}.pdf"), "{}", h.screen());
    save_as(&mut h, &dir.join("label.pdf"));
    h.settle().await;
    assert!(std::fs::read(dir.join("label.pdf")).unwrap().starts_with(b"%PDF"), "{}", h.screen());
    assert!(h.screen().lines().any(|l| l.contains("PDF") && l.contains("converted")), "{}", h.screen());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn with_the_simulator_a_bought_shipments_tracker_moves_while_its_view_is_open() {
    let mut h = simulator().await;
    create_shipment(&mut h).await;
    h.keys("b<C-s>y");
    h.settle().await;
    assert!(popup_title(&h).contains("· bought ·"), "{}", h.screen());
    let tracking = open_detail(&h).record.as_ref().unwrap()["tracking_code"].as_str().unwrap().to_owned();
    h.keys("t");
    h.settle().await;
    assert_eq!(popup_title(&h), format!("tracker {tracking} · pre_transit"), "{}", h.screen());
    let events = |h: &Harness| open_detail(h).tables[0].rows.len();
    let before = events(&h);
    assert!(h.screen().contains("● live"), "{}", h.screen());

    // Simulated time passes while the view is open: it asks again and shows the new scans.
    let mut at = Instant::now();
    h.console.sandbox.clock().advance(30_000);
    time_passes(&mut h, &mut at).await;
    assert_eq!(popup_title(&h), format!("tracker {tracking} · in_transit"), "{}", h.screen());
    assert!(events(&h) > before, "{}", h.screen());
    let rows = &open_detail(&h).tables[0].rows;
    assert_eq!(rows[0][1], "in_transit", "newest on top: {rows:?}");

    h.console.sandbox.clock().advance(300_000);
    time_passes(&mut h, &mut at).await;
    let title = popup_title(&h);
    let status = title.rsplit(" · ").next().unwrap();
    assert!(
        ["delivered", "return_to_sender", "failure", "available_for_pickup"].contains(&status),
        "the end of the trip: {}",
        h.screen()
    );
    if status != "available_for_pickup" {
        assert_eq!(h.console.app.next_deadline(), None, "a finished trip is asked about no more");
    }
}

#[tokio::test]
async fn with_the_simulator_a_batch_goes_from_creating_to_label_generated_in_its_view() {
    let mut h = simulator().await;
    // Two shipments to batch, made through the API as a script would.
    let base = h.console.app.tab().target.base_url.clone();
    let client = reqwest::Client::new();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let body: Value = serde_json::from_str(&format!(r#"{{"shipment": {NEW_SHIPMENT}}}"#)).unwrap();
        let answer = client
            .post(format!("{base}/v2/shipments"))
            .basic_auth("EZTKsandbox", Some(""))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let answer: Value = serde_json::from_slice(&answer).unwrap();
        ids.push(json!({"id": answer["id"]}));
    }
    h.keys(":easypost batches_create<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form:\n{}", h.screen()) };
    form.set_value("batch", &json!({"shipments": ids, "reference": "tui-check"}).to_string());
    h.keys("<C-s>");
    h.settle().await;
    let mut states = Vec::new();
    let mut note = |h: &Harness| {
        let title = popup_title(h);
        let state = title.rsplit(" · ").next().unwrap_or_default().to_owned();
        if states.last() != Some(&state) {
            states.push(state);
        }
    };
    note(&h);
    let mut at = Instant::now();
    let mut wait_for = async |h: &mut Harness, state: &str, note: &mut dyn FnMut(&Harness)| {
        // Small steps of simulated time, so no state goes by unseen (a batch buys one shipment
        // every 300 ms).
        for _ in 0..60 {
            if popup_title(h).ends_with(state) {
                return;
            }
            h.console.sandbox.clock().advance(250);
            time_passes(h, &mut at).await;
            note(h);
        }
        panic!("{state} never came:\n{}", h.screen());
    };
    wait_for(&mut h, "· created", &mut note).await;
    h.keys("b");
    assert!(h.screen().contains("buys postage for the batch's 2 shipment(s)"), "{}", h.screen());
    h.keys("y");
    h.settle().await;
    note(&h);
    wait_for(&mut h, "· purchased", &mut note).await;
    assert!(h.screen().contains("2 postage_purchased"), "{}", h.screen());
    h.keys("lp");
    h.settle().await;
    note(&h);
    wait_for(&mut h, "· label_generated", &mut note).await;
    h.keys("f");
    h.settle().await;
    let done = |h: &Harness| open_detail(h).facts.iter().any(|(l, v, _)| l == "scan form" && v == "created");
    for _ in 0..20 {
        if done(&h) {
            break;
        }
        h.console.sandbox.clock().advance(5_000);
        time_passes(&mut h, &mut at).await;
    }
    assert!(done(&h) && h.screen().contains("d save scan form"), "{}", h.screen());
    for state in ["creating", "created", "purchasing", "purchased", "label_generating", "label_generated"] {
        assert!(states.iter().any(|s| s == state), "{state} seen in {states:?}");
    }
    let dir = scratch("sim-batch");
    h.keys("s");
    save_as(&mut h, &dir.join("batch.pdf"));
    h.settle().await;
    assert!(std::fs::read(dir.join("batch.pdf")).unwrap().starts_with(b"%PDF"), "{}", h.screen());
    let _ = std::fs::remove_dir_all(dir);
}

/// A shipment created with a carrier and a service is bought in the same call: the console asks
/// first and says what it buys, as for any purchase; without them it is only created.
#[tokio::test]
async fn a_shipment_bought_in_its_create_call_is_asked_first() {
    let mut h = simulator().await;
    let bought = NEW_SHIPMENT.replacen('{', r#"{"carrier": "USPS", "service": "Priority", "#, 1);
    h.keys(":easypost shipments_create<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form:\n{}", h.screen()) };
    form.set_value("shipment", &bought);
    h.keys("<C-s>");
    assert_eq!(popup_title(&h), "confirm shipments_create", "{}", h.screen());
    assert!(h.screen().contains("buys postage in the same call: USPS Priority"), "{}", h.screen());
    assert_eq!(h.console.app.executor.active_count(), 0, "nothing sent before the answer");
    h.keys("n");
    assert!(h.console.app.popup.is_none());
    assert_eq!(h.console.app.executor.active_count(), 0, "n sends nothing");
    // Without a carrier and a service it buys nothing, and goes at once.
    create_shipment(&mut h).await;
}
