//! What a stored record costs (issue 19): each simulator, given a few thousand records through
//! its API, grows its heap by at most twice the JSON of one record as the service gives it back.
//! What one more record costs, that is: the heap is read after a first thousand records (which
//! fill the request log and the simulator's fixed structures) and again after the rest.
//! Counted by the allocator, not timed, on a sandbox whose clock all but stands still, so no
//! background task (trackers, deliveries, retries) allocates while it counts: the figures are
//! the same on a busy machine. One test in its own binary, so nothing else allocates either. `benches/sandbox_load.rs` measures
//! the same at 20,000 and 100,000 records.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use base64::Engine as _;
use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials as c, Sandbox};
use peak_alloc::PeakAlloc;
use serde_json::{json, Value};

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// Records made before the first count, and in all.
const WARM_UP: usize = 1_000;
const RECORDS: usize = 3_000;
const CLIENTS: usize = 8;

/// One request: method, path after the service's base URL, `Authorization`, and a JSON or form body.
struct Call {
    method: reqwest::Method,
    path: String,
    authorization: String,
    json: Option<Value>,
    form: Option<String>,
}

fn get(path: String, authorization: String) -> Call {
    Call { method: reqwest::Method::GET, path, authorization, json: None, form: None }
}

fn post(path: &str, authorization: String, json: Value) -> Call {
    Call { method: reqwest::Method::POST, path: path.to_owned(), authorization, json: Some(json), form: None }
}

async fn send(http: &reqwest::Client, base: &str, call: Call) -> Value {
    let (status, answer) = exchange(http, base, call).await;
    assert!(status.is_success(), "{status}: {answer}");
    answer
}

/// Sends one call: its status and JSON answer (the text as a string when not JSON).
async fn exchange(http: &reqwest::Client, base: &str, call: Call) -> (reqwest::StatusCode, Value) {
    let mut request =
        http.request(call.method, format!("{base}{}", call.path)).header("authorization", call.authorization);
    if let Some(body) = call.json {
        request = request.header("content-type", "application/json").body(body.to_string());
    } else if let Some(form) = call.form {
        request = request.header("content-type", "application/x-www-form-urlencoded").body(form);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn basic(pair: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
}

/// A service's records: how to make the `index`-th, what follows it (EasyPost's buy), and how to
/// read one back as the service shows it.
struct Kind {
    service: Service,
    create: fn(usize) -> Call,
    then: Option<fn(&Value) -> Call>,
    /// Run once every record is made (Mailgun: the clock moves on so each message is delivered).
    settle: fn(&Sandbox),
    read_back: fn() -> Call,
    pick: fn(&Value) -> Value,
}

fn no_settle(_: &Sandbox) {}

const KINDS: &[(&str, Kind)] = &[
    (
        "ably message",
        Kind {
            service: Service::Ably,
            create: |i| {
                post(
                    &format!("/channels/mem-{}/messages", i % CLIENTS),
                    basic(c::ABLY_KEY),
                    json!({"name": "m", "data": {"index": i}}),
                )
            },
            then: None,
            settle: no_settle,
            read_back: || get("/channels/mem-0/messages?limit=1".into(), basic(c::ABLY_KEY)),
            pick: |v| v[0].clone(),
        },
    ),
    (
        "avatax transaction",
        Kind {
            service: Service::Avatax,
            create: |i| {
                post(
                    "/api/v2/transactions/create",
                    basic(&format!("{}:{}", c::AVATAX_ACCOUNT_ID, c::AVATAX_LICENSE_KEY)),
                    json!({
                    "type": "SalesInvoice", "companyCode": "DEFAULT", "code": format!("MEM-{i}"), "date": "2026-11-20",
                    "customerCode": "MEM", "addresses": {"singleLocation": {"line1": "123 Main Street", "city": "Irvine",
                    "region": "CA", "country": "US", "postalCode": "92615"}},
                    "lines": [{"number": "1", "amount": 100, "taxCode": "P0000000"}]}),
                )
            },
            then: None,
            settle: no_settle,
            read_back: || {
                get(
                    format!("/api/v2/companies/DEFAULT/transactions/MEM-{}", RECORDS - 1),
                    basic(&format!("{}:{}", c::AVATAX_ACCOUNT_ID, c::AVATAX_LICENSE_KEY)),
                )
            },
            pick: Value::clone,
        },
    ),
    (
        "taxjar order",
        Kind {
            service: Service::Taxjar,
            create: |i| {
                post(
                    "/v2/transactions/orders",
                    format!("Bearer {}", c::TAXJAR_TOKEN),
                    json!({
                    "transaction_id": format!("mem-{i}"), "transaction_date": "2026-11-01", "to_country": "US",
                    "to_zip": "90002", "to_state": "CA", "amount": 16.5, "shipping": 1.5, "sales_tax": 1.35,
                    "line_items": [{"id": "1", "quantity": 1, "product_tax_code": "20010", "unit_price": 15, "sales_tax": 1.35}]}),
                )
            },
            then: None,
            settle: no_settle,
            read_back: || {
                get(format!("/v2/transactions/orders/mem-{}", RECORDS - 1), format!("Bearer {}", c::TAXJAR_TOKEN))
            },
            pick: Value::clone,
        },
    ),
    (
        "mailgun message with its events",
        Kind {
            service: Service::Mailgun,
            create: |i| Call {
                method: reqwest::Method::POST,
                path: "/v3/mg.example.com/messages".into(),
                authorization: basic(&format!("api:{}", c::MAILGUN_KEY)),
                json: None,
                form: Some(format!("from=ops%40mg.example.com&to=mem-{i}%40example.com&subject=mem&text=memory+{i}")),
            },
            then: None,
            settle: |sandbox| sandbox.clock().advance(10_000),
            read_back: || {
                get(
                    format!("/v3/mg.example.com/events?recipient=mem-{}%40example.com", RECORDS - 1),
                    basic(&format!("api:{}", c::MAILGUN_KEY)),
                )
            },
            pick: |v| v["items"].clone(),
        },
    ),
    (
        "easypost bought shipment",
        Kind {
            service: Service::Easypost,
            create: |i| {
                post(
                    "/v2/shipments",
                    format!("Bearer {}", c::EASYPOST_KEY),
                    json!({"shipment": {
                    "to_address": {"name": "Mem", "street1": "1 Main St", "zip": "10001", "country": "US"},
                    "from_address": {"name": "Warehouse", "street1": "417 Montgomery St", "zip": "94104", "country": "US"},
                    "parcel": {"length": 10, "width": 8, "height": 4, "weight": 10 + i % 50},
                    "reference": format!("mem-{i}")}}),
                )
            },
            then: Some(|shipment| {
                let rate = &shipment["rates"][0]["id"];
                post(
                    &format!("/v2/shipments/{}/buy", shipment["id"].as_str().unwrap()),
                    format!("Bearer {}", c::EASYPOST_KEY),
                    json!({"rate": {"id": rate}}),
                )
            }),
            settle: no_settle,
            read_back: || get("/v2/shipments?page_size=1".into(), format!("Bearer {}", c::EASYPOST_KEY)),
            pick: |v| v["shipments"][0].clone(),
        },
    ),
    (
        // Each request to Deepgram stores one usage record; the nearest JSON the service gives
        // back is a day of usage, so that is the comparison.
        "deepgram usage record",
        Kind {
            service: Service::Deepgram,
            create: |i| {
                post(
                    &format!("/v1/read?tag=mem-{}", i % CLIENTS),
                    format!("Token {}", c::DEEPGRAM_KEY),
                    json!({"text": "Good."}),
                )
            },
            then: None,
            settle: no_settle,
            // The first seeded project of seed 42, which the sandbox key's requests are billed to.
            read_back: || {
                get(
                    "/v1/projects/c04cd990-dfa6-4fb4-a72c-2e41f49fffdc/usage?tag=mem-0".into(),
                    format!("Token {}", c::DEEPGRAM_KEY),
                )
            },
            pick: |v| v["results"][0].clone(),
        },
    ),
];

/// Waits until the heap stops shrinking: a sandbox shut down is dropped by its own tasks as
/// they end, and what it frees must not count against the next one.
async fn settled_heap() {
    let mut last = HEAP.current_usage();
    let mut steady = 0;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let now = HEAP.current_usage();
        steady = if now >= last { steady + 1 } else { 0 };
        last = now;
        if steady == 4 {
            return;
        }
    }
}

/// Heap bytes per record and the JSON size of one, for one kind.
async fn measure(kind: &Kind) -> (f64, usize) {
    settled_heap().await;
    // A clock that all but stands still: no tracker scan, delivery or retry comes due by itself
    // while the records are counted, however long a busy machine takes to make them (an
    // EasyPost tracker's scans once made 2.14x of 1.9x); Mailgun's deliveries are moved on by
    // hand (`settle`).
    let still = sandbox::SandboxClock::new(1e-6).unwrap();
    let options = sandbox::SandboxOptions { clock: still, ..sandbox::SandboxOptions::new(0, 42) };
    let sandbox = sandbox::start_options(options).await.unwrap();
    let base = sandbox.base_url(kind.service);
    let http = reqwest::Client::new();
    // The simulator seeds itself on its first request (found or not): that is not what the
    // records cost.
    exchange(&http, &base, (kind.read_back)()).await;
    make(kind, &http, &base, 0..WARM_UP).await;
    (kind.settle)(&sandbox);
    exchange(&http, &base, (kind.read_back)()).await;
    let before = HEAP.current_usage();
    make(kind, &http, &base, WARM_UP..RECORDS).await;
    (kind.settle)(&sandbox);
    let record = send(&http, &base, (kind.read_back)()).await;
    let after = HEAP.current_usage();
    let json = serde_json::to_string(&(kind.pick)(&record)).unwrap().len();
    sandbox.shutdown();
    drop(sandbox);
    (after.saturating_sub(before) as f64 / (RECORDS - WARM_UP) as f64, json)
}

/// Makes the records numbered `range`, by several clients at once.
async fn make(kind: &Kind, http: &reqwest::Client, base: &str, range: std::ops::Range<usize>) {
    let mut clients = Vec::new();
    for client in 0..CLIENTS {
        let (http, base, range) = (http.clone(), base.to_owned(), range.clone());
        let (create, then) = (kind.create, kind.then);
        clients.push(tokio::spawn(async move {
            for index in range.skip(client).step_by(CLIENTS) {
                let answer = send(&http, &base, create(index)).await;
                if let Some(then) = then {
                    send(&http, &base, then(&answer)).await;
                }
            }
        }));
    }
    for client in clients {
        client.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_record_costs_at_most_twice_its_json() {
    let mut report = Vec::new();
    for (name, kind) in KINDS {
        let (per_record, json) = measure(kind).await;
        report.push((*name, per_record, json, per_record / json as f64));
    }
    let lines: Vec<String> = report
        .iter()
        .map(|(name, bytes, json, ratio)| format!("{name}: {bytes:.0} B a record, JSON {json} B, {ratio:.2}x"))
        .collect();
    for (name, _, json, ratio) in &report {
        assert!(*json > 50, "{name}: the record read back is {json} bytes of JSON\n{}", lines.join("\n"));
        assert!(*ratio <= 2.0, "{name} costs more than twice its JSON:\n{}", lines.join("\n"));
    }
    println!("{}", lines.join("\n"));
}
