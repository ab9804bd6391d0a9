//! A list over a big store costs what its page holds, not what is stored: AvaTax's
//! `$orderBy` with `$top=10` and `$filter` over `LISTS_DOCUMENTS` documents (default 100,000,
//! the simulator's cap), and EasyPost pages of 100 over `LISTS_SHIPMENTS` bought shipments
//! (default 10,000). Prints p50 and p99 of `LISTS_SAMPLES` requests each (default 30), one
//! after another on an otherwise idle sandbox.
//!
//! `cargo bench --bench sandbox_lists` (plain `main`, `harness = false`).

#![allow(clippy::unwrap_used, reason = "a benchmark panics on failure")]

use std::time::{Duration, Instant};

use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials};
use serde_json::{json, Value};

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// Times `samples` GETs of `url` one after another; checks each answers 200 and returns the
/// last answer.
async fn time_get(http: &reqwest::Client, what: &str, url: &str, auth: &str, samples: usize) -> Value {
    let mut took = Vec::with_capacity(samples);
    let mut last = Value::Null;
    for _ in 0..samples {
        let started = Instant::now();
        let response = http.get(url).header("authorization", auth).send().await.unwrap();
        assert!(response.status().is_success(), "{what}: {}", response.status());
        let body = response.bytes().await.unwrap();
        took.push(started.elapsed());
        last = serde_json::from_slice(&body).unwrap();
    }
    took.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("{what:<52} p50 {:>8.2} ms  p99 {:>8.2} ms", ms(percentile(&took, 0.5)), ms(percentile(&took, 0.99)));
    last
}

/// Runs `count` requests made by `make(index)` on 8 clients at once.
async fn seed(
    count: usize,
    make: impl Fn(&reqwest::Client, usize) -> reqwest::RequestBuilder + Clone + Send + 'static,
) {
    let http = reqwest::Client::new();
    let clients: Vec<_> = (0..8)
        .map(|client| {
            let (http, make) = (http.clone(), make.clone());
            tokio::spawn(async move {
                for index in (client..count).step_by(8) {
                    let response = make(&http, index).send().await.unwrap();
                    assert!(response.status().is_success(), "{}", response.status());
                }
            })
        })
        .collect();
    for client in clients {
        client.await.unwrap();
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(run());
}

async fn run() {
    let (documents, shipments) = (knob("LISTS_DOCUMENTS", 100_000), knob("LISTS_SHIPMENTS", 10_000));
    let samples = knob("LISTS_SAMPLES", 30);
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let http = reqwest::Client::new();
    let (avatax, easypost) = (sandbox.base_url(Service::Avatax), sandbox.base_url(Service::Easypost));
    let avatax_auth = format!(
        "Basic {}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("{}:{}", credentials::AVATAX_ACCOUNT_ID, credentials::AVATAX_LICENSE_KEY)
        )
    );
    let easypost_auth = format!("Bearer {}", credentials::EASYPOST_KEY);

    eprintln!("seeding {documents} AvaTax documents…");
    let (url, auth) = (format!("{avatax}/api/v2/transactions/create"), avatax_auth.clone());
    seed(documents, move |http, index| {
        let document = json!({
            "type": "SalesInvoice", "companyCode": "DEFAULT", "code": format!("LIST-{index}"),
            "date": "2026-11-20", "customerCode": format!("C{}", index % 97),
            "addresses": {"singleLocation": {"line1": "123 Main Street", "city": "Irvine", "region": "CA",
                "country": "US", "postalCode": "92615"}},
            "lines": [{"number": "1", "amount": 100 + index % 1000, "taxCode": "P0000000"}],
        });
        http.post(&url)
            .header("authorization", &auth)
            .header("content-type", "application/json")
            .body(document.to_string())
    })
    .await;
    let transactions = format!("{avatax}/api/v2/companies/DEFAULT/transactions");
    // One of the newest: past the cap the simulator forgets the oldest tenth.
    let code = format!("$filter=code%20eq%20%27LIST-{}%27", documents.saturating_sub(42));
    for (what, query) in [
        ("AvaTax $orderBy=totalAmount desc&$top=10", "$orderBy=totalAmount%20desc&$top=10"),
        ("AvaTax $orderBy=date desc&$top=10", "$orderBy=date%20desc&$top=10"),
        ("AvaTax $orderBy=customerCode,date desc&$top=10", "$orderBy=customerCode,date%20desc&$top=10"),
        ("AvaTax $filter=code eq (indexed)", code.as_str()),
        ("AvaTax $filter=customerCode eq &$top=10", "$filter=customerCode%20eq%20%27C5%27&$top=10"),
        ("AvaTax first page, no filter ($top=10)", "$top=10"),
    ] {
        let answer = time_get(
            &http,
            &format!("{what} ({documents})"),
            &format!("{transactions}?{query}"),
            &avatax_auth,
            samples,
        )
        .await;
        assert!(answer["@recordsetCount"].as_u64().unwrap() > 0, "{what}: {answer}");
    }

    eprintln!("seeding {shipments} bought EasyPost shipments…");
    let (url, auth) = (format!("{easypost}/v2/shipments"), easypost_auth.clone());
    seed(shipments, move |http, index| {
        const ZIPS: [&str; 4] = ["10001", "60606", "78701", "98109"];
        let shipment = json!({"shipment": {
            "to_address": {"name": "List", "street1": "1 Main St", "zip": ZIPS[index % ZIPS.len()], "country": "US"},
            "from_address": {"name": "Warehouse", "street1": "417 Montgomery St", "zip": "94104", "country": "US"},
            "parcel": {"length": 10, "width": 8, "height": 4, "weight": 10 + index % 50},
            "carrier": "USPS", "service": "Priority", "reference": format!("list-{index}")}});
        http.post(&url)
            .header("authorization", &auth)
            .header("content-type", "application/json")
            .body(shipment.to_string())
    })
    .await;
    let first = time_get(
        &http,
        &format!("EasyPost first page of 100 ({shipments})"),
        &format!("{easypost}/v2/shipments?page_size=100"),
        &easypost_auth,
        samples,
    )
    .await;
    assert_eq!(first["shipments"].as_array().unwrap().len(), 100, "the seeded shipments are bought");
    // A page from the middle of the list, after walking half of it by its cursor.
    let mut cursor = first["shipments"][99]["id"].as_str().unwrap().to_owned();
    for _ in 1..shipments / 200 {
        let url = format!("{easypost}/v2/shipments?page_size=100&before_id={cursor}");
        let body = http.get(url).header("authorization", &easypost_auth).send().await.unwrap().bytes().await.unwrap();
        let page: Value = serde_json::from_slice(&body).unwrap();
        cursor = page["shipments"][99]["id"].as_str().unwrap().to_owned();
    }
    let middle = time_get(
        &http,
        &format!("EasyPost page of 100 halfway down ({shipments})"),
        &format!("{easypost}/v2/shipments?page_size=100&before_id={cursor}"),
        &easypost_auth,
        samples,
    )
    .await;
    assert_eq!(middle["shipments"].as_array().unwrap().len(), 100);
}
