//! Load benchmark of the simulators: C concurrent clients over loopback send N requests of one
//! operation in total; prints throughput and p50/p99 latency, then checks that every accepted
//! request left exactly one stored record (nothing lost, nothing duplicated; past a collection's
//! cap, the oldest gone and the rest once each). Then, with the N records stored:
//! - memory per record: the heap the simulator grew by (counted by the allocator, every
//!   allocation of the process) divided by the records stored, beside the size of one record's
//!   JSON as the service gives it back (compact), and their ratio;
//! - list latency: a first page of 10 in the list's own order, read 200 times one after another
//!   (p50, p99; `LOAD_LIST_READS` times when set).
//!
//! `cargo bench --bench sandbox_load` (plain `main`, `harness = false`). Knobs, by environment:
//! `LOAD_CASE` (a case name, or `all`), `LOAD_REQUESTS` (default 20000), `LOAD_CLIENTS`
//! (default 16). `benches/sandbox_load.sh` runs it here and at the commit before issue 19, side
//! by side.
//!
//! The Deepgram case uploads a 30 s WAV for transcription while a quarter as many clients read
//! usage, then checks that usage counts every transcription once, with its 30 s of audio.
//!
//! The Coinbase case places an order and cancels it (every tenth a market buy that fills) while
//! the background market steps 50 times a second, then checks with the control port's audit that
//! funds were conserved across every account.
//!
//! Adding a case: one `Case` value in `CASES` with the request a client sends (`request`) and
//! how to count what the simulator stored (`stored`; `None` for an operation that stores nothing,
//! such as a tax calculation), optionally a second request made from the first one's answer and
//! timed with it (`then`: EasyPost's buy of the shipment just created, with its cheapest rate),
//! and optionally reads made by other clients at the same time (`reads`: Mailgun's event queries
//! while messages are sent), plus the record read back for its JSON size (`record`, `pick`) and
//! the list read for latency (`list`).

#![allow(clippy::unwrap_used, reason = "a benchmark panics on failure")]

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials, Sandbox};
use peak_alloc::PeakAlloc;
use serde_json::{json, Value};

#[path = "common/coinbase.rs"]
mod coinbase_orders;

/// One request to send: method, path (after the service's base URL), body and auth header.
struct Call {
    method: reqwest::Method,
    path: String,
    body: Option<Value>,
    /// A body other than JSON, with its content type: Mailgun's form sends, Deepgram's audio.
    raw: Option<(&'static str, bytes::Bytes)>,
    authorization: String,
    /// Further headers: Coinbase's four signed `CB-ACCESS-*` ones.
    headers: Vec<(&'static str, String)>,
}

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

type Counted<'a> = Pin<Box<dyn Future<Output = Result<usize, String>> + Send + 'a>>;

/// A benchmarked operation.
struct Case {
    name: &'static str,
    service: Service,
    /// The request client `client` sends as its `index`-th.
    request: fn(client: usize, index: usize) -> Call,
    /// Records the simulator holds after the run for `clients` clients: compared with the
    /// number of successful requests.
    stored: Option<for<'a> fn(&'a Sandbox, &'a reqwest::Client, usize) -> Counted<'a>>,
    /// Reads other clients make at the same time as the writes (reader `client`, its
    /// `index`-th), reported on their own line.
    reads: Option<fn(client: usize, index: usize) -> Call>,
    /// A second request built from the first one's answer; the pair is one timed operation.
    then: Option<fn(answer: &Value) -> Call>,
    /// Reads back a stored record: the `last`-th request of client 0.
    record: fn(last: usize) -> Call,
    /// The record in `record`'s answer, measured as compact JSON.
    pick: fn(&Value) -> Value,
    /// A first page of 10 records in the list's own order.
    list: fn() -> Call,
    /// The most records of this kind the simulator keeps (its documented cap).
    cap: usize,
    /// A check of the simulator's books after the run, reported on its own line (Coinbase: funds
    /// conserved across every account).
    audit: Option<for<'a> fn(&'a Sandbox, &'a reqwest::Client) -> Audited<'a>>,
    /// Set up before the run (Coinbase: the background market stepping 50 times a second, so
    /// the run meets a moving book).
    prepare: Option<for<'a> fn(&'a Sandbox, &'a reqwest::Client) -> Audited<'a>>,
}

type Audited<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

const CASES: &[Case] = &[
    Case {
        name: "ably messages_publish",
        service: Service::Ably,
        request: ably_publish,
        stored: Some(ably_stored),
        reads: None,
        then: None,
        record: ably_record,
        pick: first_item,
        list: ably_list,
        cap: 10_000 * 2_000,
        audit: None,
        prepare: None,
    },
    Case {
        name: "avatax transactions_create",
        service: Service::Avatax,
        request: avatax_create,
        stored: Some(avatax_stored),
        reads: None,
        then: None,
        record: avatax_record,
        pick: whole,
        list: avatax_list,
        cap: 100_000,
        audit: None,
        prepare: None,
    },
    Case {
        name: "taxjar taxes_calculate",
        service: Service::Taxjar,
        request: taxjar_calculate,
        stored: None,
        reads: None,
        then: None,
        record: taxjar_record,
        pick: whole,
        list: taxjar_list,
        cap: usize::MAX,
        audit: None,
        prepare: None,
    },
    Case {
        name: "taxjar transactions_create_order",
        service: Service::Taxjar,
        request: taxjar_order,
        stored: Some(taxjar_orders_stored),
        reads: None,
        then: None,
        record: taxjar_record,
        pick: whole,
        list: taxjar_list,
        cap: 100_000,
        audit: None,
        prepare: None,
    },
    Case {
        name: "mailgun messages_send",
        service: Service::Mailgun,
        request: mailgun_send,
        stored: Some(mailgun_stored),
        reads: Some(mailgun_events),
        then: None,
        record: mailgun_record,
        pick: every_item,
        list: mailgun_list,
        cap: 100_000,
        audit: None,
        prepare: None,
    },
    Case {
        name: "easypost shipments_create + shipments_buy",
        service: Service::Easypost,
        request: easypost_create,
        stored: Some(easypost_stored),
        reads: None,
        then: Some(easypost_buy),
        record: easypost_record,
        pick: first_shipment,
        list: easypost_list,
        cap: 50_000,
        audit: None,
        prepare: None,
    },
    Case {
        name: "coinbase orders_create + orders_cancel",
        service: Service::Coinbase,
        request: coinbase_order,
        stored: None,
        reads: None,
        then: Some(coinbase_cancel),
        record: coinbase_record,
        pick: whole,
        list: coinbase_list,
        cap: usize::MAX,
        audit: Some(coinbase_audit),
        prepare: Some(coinbase_fast_market),
    },
    Case {
        name: "deepgram transcription_transcribe",
        service: Service::Deepgram,
        request: deepgram_transcribe,
        stored: Some(deepgram_stored),
        reads: Some(deepgram_usage_read),
        then: None,
        record: deepgram_record,
        pick: deepgram_day,
        list: deepgram_usage,
        cap: 100_000,
        audit: None,
        prepare: Some(deepgram_project),
    },
];

/// 30 s of a tone, 16 kHz mono 16-bit PCM in a WAV (960 kB): every client sends the same bytes.
fn thirty_second_wav() -> bytes::Bytes {
    static WAV: std::sync::OnceLock<bytes::Bytes> = std::sync::OnceLock::new();
    WAV.get_or_init(|| {
        let (rate, frames) = (16_000u32, 16_000u32 * 30);
        let mut out = Vec::with_capacity(44 + frames as usize * 2);
        out.extend_from_slice(b"RIFF");
        out.extend_from_slice(&(36 + frames * 2).to_le_bytes());
        out.extend_from_slice(b"WAVEfmt ");
        for field in [16u32.to_le_bytes(), [1, 0, 1, 0], rate.to_le_bytes(), (rate * 2).to_le_bytes(), [2, 0, 16, 0]] {
            out.extend_from_slice(&field);
        }
        out.extend_from_slice(b"data");
        out.extend_from_slice(&(frames * 2).to_le_bytes());
        for i in 0..frames {
            let sample = ((f64::from(i) * 440.0 * std::f64::consts::TAU / f64::from(rate)).sin() * 6000.0) as i16;
            out.extend_from_slice(&sample.to_le_bytes());
        }
        out.into()
    })
    .clone()
}

fn deepgram_auth() -> String {
    format!("Token {}", credentials::DEEPGRAM_KEY)
}

/// The project whose usage is read, found before the run.
static DEEPGRAM_PROJECT: std::sync::OnceLock<String> = std::sync::OnceLock::new();

fn deepgram_project<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client) -> Audited<'a> {
    Box::pin(async move {
        let base = sandbox.base_url(Service::Deepgram);
        let projects = send(http, &base, get("/v1/projects".into(), deepgram_auth())).await?;
        let id = projects["projects"][0]["project_id"].as_str().ok_or("no project")?.to_owned();
        let said = format!("usage read from project {id}");
        DEEPGRAM_PROJECT.get_or_init(|| id);
        Ok(said)
    })
}

fn deepgram_usage_path(query: &str) -> String {
    let project = DEEPGRAM_PROJECT.get().map_or("", String::as_str);
    format!("/v1/projects/{project}/usage{query}")
}

/// Each transcription tagged with its client, so usage can be counted per client afterwards.
fn deepgram_transcribe(client: usize, _index: usize) -> Call {
    Call {
        method: reqwest::Method::POST,
        path: format!("/v1/listen?punctuate=true&tag=load-{client}"),
        body: None,
        raw: Some(("application/octet-stream", thirty_second_wav())),
        authorization: deepgram_auth(),
        headers: Vec::new(),
    }
}

fn deepgram_usage() -> Call {
    get(deepgram_usage_path(""), deepgram_auth())
}

fn deepgram_usage_read(_client: usize, _index: usize) -> Call {
    get(deepgram_usage_path("?endpoint=listen"), deepgram_auth())
}

/// Client 0's usage: one day's bucket, the JSON nearest to what one stored usage record holds.
fn deepgram_record(_last: usize) -> Call {
    get(deepgram_usage_path("?tag=load-0"), deepgram_auth())
}

fn deepgram_day(answer: &Value) -> Value {
    answer["results"].as_array().and_then(|days| days.last()).cloned().unwrap_or(Value::Null)
}

/// Requests counted in usage under the clients' tags, with their hours: each transcription
/// must be counted once, as 30 s of audio.
fn deepgram_stored<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client, clients: usize) -> Counted<'a> {
    Box::pin(async move {
        let base = sandbox.base_url(Service::Deepgram);
        let (mut requests, mut hours) = (0u64, 0f64);
        for client in 0..clients {
            let path = deepgram_usage_path(&format!("?tag=load-{client}"));
            let usage = send(http, &base, get(path, deepgram_auth())).await?;
            for day in usage["results"].as_array().ok_or("no usage results")? {
                requests += day["requests"].as_u64().unwrap_or(0);
                hours += day["hours"].as_f64().unwrap_or(0.0);
            }
        }
        let expected = requests as f64 * 30.0 / 3600.0;
        if (hours - expected).abs() > 0.01 + expected * 1e-6 {
            return Err(format!("{requests} requests counted with {hours:.4} hours of audio, not {expected:.4}"));
        }
        usize::try_from(requests).map_err(|e| e.to_string())
    })
}

/// A signed Coinbase request (signed now: the exchange allows 30 s of skew).
fn coinbase_call(method: reqwest::Method, path: String, body: Option<Value>) -> Call {
    let timestamp =
        format!("{:.3}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64());
    let text = body.as_ref().map(Value::to_string).unwrap_or_default();
    let sign = opsdeck::sandbox::coinbase::sign(
        credentials::COINBASE_SECRET,
        &timestamp,
        method.as_str(),
        &path,
        text.as_bytes(),
    )
    .unwrap();
    Call {
        method,
        path,
        body,
        raw: None,
        authorization: String::new(),
        headers: vec![
            ("cb-access-key", credentials::COINBASE_KEY.to_owned()),
            ("cb-access-sign", sign),
            ("cb-access-timestamp", timestamp),
            ("cb-access-passphrase", credentials::COINBASE_PASSPHRASE.to_owned()),
        ],
    }
}

/// The load case's order (`common/coinbase.rs`).
fn coinbase_order(client: usize, index: usize) -> Call {
    coinbase_call(reqwest::Method::POST, "/orders".into(), Some(coinbase_orders::load_case_order(client, index)))
}

/// The order just placed cancelled (a market order, done at once, has its fills read instead:
/// one that self-trade prevention cancelled unfilled is gone, as on the exchange).
fn coinbase_cancel(answer: &Value) -> Call {
    let id = answer["id"].as_str().unwrap_or_default();
    if answer["type"] == "market" {
        return coinbase_call(reqwest::Method::GET, format!("/fills?order_id={id}"), None);
    }
    coinbase_call(reqwest::Method::DELETE, format!("/orders/{id}"), None)
}

fn coinbase_record(_last: usize) -> Call {
    coinbase_call(reqwest::Method::GET, "/accounts".into(), None)
}

fn coinbase_list() -> Call {
    coinbase_call(reqwest::Method::GET, "/fills?product_id=BTC-USD&limit=10".into(), None)
}

fn coinbase_fast_market<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client) -> Audited<'a> {
    Box::pin(async move {
        let answer = http
            .post(format!("{}/coinbase/market", sandbox.control_url()))
            .body(r#"{"rate": 50}"#)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !answer.status().is_success() {
            return Err(format!("the market's rate was not set: {}", answer.status()));
        }
        Ok("the market steps 50 times a second".into())
    })
}

/// The control port's funds audit: every currency's accounts against deposits, conversions and
/// fees.
fn coinbase_audit<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client) -> Audited<'a> {
    Box::pin(async move {
        let audit: Value = http
            .get(format!("{}/coinbase/market", sandbox.control_url()))
            .send()
            .await
            .map_err(|e| e.to_string())?
            .bytes()
            .await
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))?;
        let funds = audit["funds"].as_array().ok_or("no funds audit")?;
        let unbalanced: Vec<&str> =
            funds.iter().filter(|f| f["balanced"] != true).filter_map(|f| f["currency"].as_str()).collect();
        if !unbalanced.is_empty() {
            return Err(format!("funds not conserved in {unbalanced:?}: {audit}"));
        }
        Ok(format!("funds conserved in all {} currencies after {} market steps", funds.len(), audit["steps"]))
    })
}

fn mailgun_auth() -> String {
    use base64::Engine;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("api:{}", credentials::MAILGUN_KEY)))
}

/// A message per request to its own recipient, so a lost or duplicated event shows.
fn mailgun_send(client: usize, index: usize) -> Call {
    Call {
        method: reqwest::Method::POST,
        path: "/v3/mg.example.com/messages".into(),
        body: None,
        raw: Some((
            "application/x-www-form-urlencoded",
            format!(
                "from=ops%40mg.example.com&to=load-{client}-{index}%40example.com&subject=loadtest&text=load+{index}&o%3Atag=load"
            )
            .into(),
        )),
        authorization: mailgun_auth(),
        headers: Vec::new(),
    }
}

/// The event log read while the sends go on: the newest accepted events, then the failures.
fn mailgun_events(_client: usize, index: usize) -> Call {
    let event = if index % 2 == 0 { "accepted" } else { "delivered%20OR%20failed" };
    Call {
        method: reqwest::Method::GET,
        path: format!("/v3/mg.example.com/events?event={event}&limit=100"),
        body: None,
        raw: None,
        authorization: mailgun_auth(),
        headers: Vec::new(),
    }
}

/// Every send has exactly one `accepted` and, once the clock has moved past the delivery
/// delay, exactly one `delivered` event, paged through with the event log's own page URLs.
fn mailgun_stored<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client, _clients: usize) -> Counted<'a> {
    Box::pin(async move {
        sandbox.clock().advance(10_000);
        let base = sandbox.base_url(Service::Mailgun);
        let mut counts = Vec::new();
        for event in ["accepted", "delivered"] {
            let mut url =
                format!("{base}/v3/mg.example.com/events?event={event}&subject=loadtest&limit=300&ascending=yes");
            let mut seen = HashSet::new();
            loop {
                let response =
                    http.get(&url).header("authorization", mailgun_auth()).send().await.map_err(|e| e.to_string())?;
                let page: Value = serde_json::from_slice(&response.bytes().await.map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?;
                let items = page["items"].as_array().ok_or_else(|| format!("no `items` array: {page}"))?;
                if items.is_empty() {
                    break;
                }
                for recipient in items.iter().filter_map(|e| e["recipient"].as_str()) {
                    if !seen.insert(recipient.to_owned()) {
                        return Err(format!("{event} for {recipient} is logged twice"));
                    }
                }
                url = page["paging"]["next"].as_str().ok_or("no next page URL")?.to_owned();
            }
            counts.push(seen.len());
        }
        if counts[0] != counts[1] {
            return Err(format!("{} messages accepted but {} delivered", counts[0], counts[1]));
        }
        Ok(counts[0])
    })
}

fn avatax_auth() -> String {
    use base64::Engine;
    let pair = format!("{}:{}", credentials::AVATAX_ACCOUNT_ID, credentials::AVATAX_LICENSE_KEY);
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
}

/// A saved invoice per request, each with its own code, so a lost or duplicated document shows.
fn avatax_create(client: usize, index: usize) -> Call {
    Call {
        method: reqwest::Method::POST,
        path: "/api/v2/transactions/create".into(),
        body: Some(json!({
            "type": "SalesInvoice", "companyCode": "DEFAULT", "code": format!("LOAD-{client}-{index}"),
            "date": "2026-11-20", "customerCode": "LOAD",
            "addresses": {"singleLocation": {"line1": "123 Main Street", "city": "Irvine", "region": "CA",
                "country": "US", "postalCode": "92615"}},
            "lines": [{"number": "1", "amount": 100, "taxCode": "P0000000"}],
        })),
        raw: None,
        authorization: avatax_auth(),
        headers: Vec::new(),
    }
}

fn avatax_stored<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client, _clients: usize) -> Counted<'a> {
    Box::pin(async move {
        let base = sandbox.base_url(Service::Avatax);
        let mut url =
            format!("{base}/api/v2/companies/DEFAULT/transactions?$filter=code%20startswith%20%27LOAD-%27&$top=1000");
        let mut seen = HashSet::new();
        loop {
            let response =
                http.get(&url).header("authorization", avatax_auth()).send().await.map_err(|e| e.to_string())?;
            let page: Value = serde_json::from_slice(&response.bytes().await.map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            let rows = page["value"].as_array().ok_or_else(|| format!("no `value` array: {page}"))?;
            for code in rows.iter().filter_map(|t| t["code"].as_str()) {
                if !seen.insert(code.to_owned()) {
                    return Err(format!("document {code} is listed twice"));
                }
            }
            match page["@nextLink"].as_str() {
                Some(next) if next.starts_with("http") => url = next.to_owned(),
                Some(next) => url = format!("{base}{next}"),
                None => break,
            }
        }
        Ok(seen.len())
    })
}

fn taxjar_auth() -> String {
    format!("Bearer {}", credentials::TAXJAR_TOKEN)
}

/// The calculation of TaxJar's documentation (Los Angeles), with the quantity varied per request.
fn taxjar_calculate(client: usize, index: usize) -> Call {
    let quantity = 1 + (client + index) % 5;
    Call {
        method: reqwest::Method::POST,
        path: "/v2/taxes".into(),
        body: Some(json!({
            "from_country": "US", "from_zip": "92093", "from_state": "CA",
            "to_country": "US", "to_zip": "90002", "to_state": "CA",
            "amount": 15 * quantity, "shipping": 1.5,
            "nexus_addresses": [{"country": "US", "state": "CA"}],
            "line_items": [{"id": "1", "quantity": quantity, "product_tax_code": "20010", "unit_price": 15}],
        })),
        raw: None,
        authorization: taxjar_auth(),
        headers: Vec::new(),
    }
}

/// An order per request, each with its own `transaction_id`, so a lost or duplicated one shows.
fn taxjar_order(client: usize, index: usize) -> Call {
    Call {
        method: reqwest::Method::POST,
        path: "/v2/transactions/orders".into(),
        body: Some(json!({
            "transaction_id": format!("load-{client}-{index}"), "transaction_date": "2026-11-01",
            "to_country": "US", "to_zip": "90002", "to_state": "CA",
            "amount": 16.5, "shipping": 1.5, "sales_tax": 1.35,
            "line_items": [{"id": "1", "quantity": 1, "product_tax_code": "20010", "unit_price": 15, "sales_tax": 1.35}],
        })),
        raw: None,
        authorization: taxjar_auth(),
        headers: Vec::new(),
    }
}

fn taxjar_orders_stored<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client, _clients: usize) -> Counted<'a> {
    Box::pin(async move {
        let url = format!("{}/v2/transactions/orders", sandbox.base_url(Service::Taxjar));
        let response = http.get(&url).header("authorization", taxjar_auth()).send().await.map_err(|e| e.to_string())?;
        let page: Value =
            serde_json::from_slice(&response.bytes().await.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        let ids = page["orders"].as_array().ok_or("the order list has no `orders` array")?;
        let mut seen = HashSet::new();
        for id in ids.iter().filter_map(Value::as_str).filter(|id| id.starts_with("load-")) {
            if !seen.insert(id) {
                return Err(format!("order {id} is listed twice"));
            }
        }
        Ok(seen.len())
    })
}

fn ably_auth() -> String {
    use base64::Engine;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials::ABLY_KEY))
}

/// Each client publishes to its own channel, so its messages can be counted apart and stay
/// under the per-channel history cap.
fn ably_publish(client: usize, index: usize) -> Call {
    Call {
        method: reqwest::Method::POST,
        path: format!("/channels/load-{client}/messages"),
        body: Some(json!({"name": "load", "data": {"client": client, "index": index}})),
        raw: None,
        authorization: ably_auth(),
        headers: Vec::new(),
    }
}

fn ably_stored<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client, clients: usize) -> Counted<'a> {
    Box::pin(async move {
        let base = sandbox.base_url(Service::Ably);
        let mut seen = HashSet::new();
        for client in 0..clients {
            let mut url = format!("{base}/channels/load-{client}/messages?limit=1000&direction=forwards");
            loop {
                let response =
                    http.get(&url).header("authorization", ably_auth()).send().await.map_err(|e| e.to_string())?;
                let next = response
                    .headers()
                    .get("link")
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| l.split(", ").find(|p| p.ends_with("rel=\"next\"")))
                    .and_then(|p| {
                        p.split_once('?')
                            .map(|(_, q)| q.trim_end_matches("; rel=\"next\"").trim_end_matches('>').to_owned())
                    });
                let page: Value = serde_json::from_slice(&response.bytes().await.map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?;
                let items = page.as_array().ok_or("history is not an array")?;
                // Each message carries (client, index): a duplicate is an error, not a count.
                for item in items {
                    let key = (item["data"]["client"].as_u64(), item["data"]["index"].as_u64());
                    if !seen.insert(key) {
                        return Err(format!("message {key:?} is stored twice"));
                    }
                }
                match next {
                    Some(query) => url = format!("{base}/channels/load-{client}/messages?{query}"),
                    None => break,
                }
            }
        }
        Ok(seen.len())
    })
}

fn easypost_auth() -> String {
    format!("Bearer {}", credentials::EASYPOST_KEY)
}

/// A shipment to one of a few real ZIPs, its reference naming the client and index.
fn easypost_create(client: usize, index: usize) -> Call {
    const ZIPS: [&str; 4] = ["10001", "60606", "78701", "98109"];
    Call {
        method: reqwest::Method::POST,
        path: "/v2/shipments".to_owned(),
        body: Some(json!({"shipment": {
            "to_address": {"name": "Load", "street1": "1 Main St", "zip": ZIPS[index % ZIPS.len()], "country": "US"},
            "from_address": {"name": "Warehouse", "street1": "417 Montgomery St", "zip": "94104", "country": "US"},
            "parcel": {"length": 10, "width": 8, "height": 4, "weight": 10 + index % 50},
            "reference": format!("load-{client}-{index}")}})),
        raw: None,
        authorization: easypost_auth(),
        headers: Vec::new(),
    }
}

/// Buys the shipment just created with its cheapest rate.
fn easypost_buy(shipment: &Value) -> Call {
    let rates = shipment["rates"].as_array().map(Vec::as_slice).unwrap_or_default();
    let price = |r: &Value| r["rate"].as_str().and_then(|p| p.parse::<f64>().ok()).unwrap_or(f64::MAX);
    let cheapest = rates.iter().min_by(|a, b| price(a).total_cmp(&price(b)));
    Call {
        method: reqwest::Method::POST,
        path: format!("/v2/shipments/{}/buy", shipment["id"].as_str().unwrap_or("")),
        body: Some(json!({"rate": {"id": cheapest.map(|r| r["id"].clone())}})),
        raw: None,
        authorization: easypost_auth(),
        headers: Vec::new(),
    }
}

/// Bought shipments of the run, paged with `before_id`: each reference and tracking code once.
fn easypost_stored<'a>(sandbox: &'a Sandbox, http: &'a reqwest::Client, _clients: usize) -> Counted<'a> {
    Box::pin(async move {
        let base = sandbox.base_url(Service::Easypost);
        let (mut references, mut codes) = (HashSet::new(), HashSet::new());
        let mut url = format!("{base}/v2/shipments?page_size=100");
        loop {
            let response =
                http.get(&url).header("authorization", easypost_auth()).send().await.map_err(|e| e.to_string())?;
            let page: Value = serde_json::from_slice(&response.bytes().await.map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            let items = page["shipments"].as_array().ok_or("no shipments in the page")?;
            for item in items {
                let reference = item["reference"].as_str().unwrap_or("");
                if !reference.starts_with("load-") {
                    continue;
                }
                let code = item["tracking_code"].as_str().ok_or("a bought shipment has no tracking code")?;
                if !references.insert(reference.to_owned()) || !codes.insert(code.to_owned()) {
                    return Err(format!("shipment {reference} ({code}) is listed twice"));
                }
            }
            match items.last().and_then(|s| s["id"].as_str()) {
                Some(last) if page["has_more"] == true => {
                    url = format!("{base}/v2/shipments?page_size=100&before_id={last}")
                }
                _ => break,
            }
        }
        Ok(references.len())
    })
}

/// The answer itself is the record.
fn whole(answer: &Value) -> Value {
    answer.clone()
}

/// A list answer (Ably history): its first item.
fn first_item(answer: &Value) -> Value {
    answer[0].clone()
}

/// Mailgun's event page for one message: its events together (accepted, delivered).
fn every_item(answer: &Value) -> Value {
    answer["items"].clone()
}

fn first_shipment(answer: &Value) -> Value {
    answer["shipments"][0].clone()
}

fn get(path: String, authorization: String) -> Call {
    Call { method: reqwest::Method::GET, path, body: None, raw: None, authorization, headers: Vec::new() }
}

fn ably_record(_last: usize) -> Call {
    get("/channels/load-0/messages?limit=1".into(), ably_auth())
}

fn ably_list() -> Call {
    get("/channels/load-0/messages?limit=10".into(), ably_auth())
}

fn avatax_record(last: usize) -> Call {
    get(format!("/api/v2/companies/DEFAULT/transactions/LOAD-0-{last}"), avatax_auth())
}

fn avatax_list() -> Call {
    get("/api/v2/companies/DEFAULT/transactions?$top=10".into(), avatax_auth())
}

fn taxjar_record(last: usize) -> Call {
    get(format!("/v2/transactions/orders/load-0-{last}"), taxjar_auth())
}

/// TaxJar lists every order id in a date range, unpaged: a range holding none of the run's
/// orders (dated 2026-11-01) costs what the range holds, if the list is indexed by date.
fn taxjar_list() -> Call {
    get("/v2/transactions/orders?from_transaction_date=2026-11-02&to_transaction_date=2026-11-30".into(), taxjar_auth())
}

fn mailgun_record(last: usize) -> Call {
    get(format!("/v3/mg.example.com/events?recipient=load-0-{last}%40example.com"), mailgun_auth())
}

fn mailgun_list() -> Call {
    get("/v3/mg.example.com/events?limit=10".into(), mailgun_auth())
}

fn easypost_record(_last: usize) -> Call {
    get("/v2/shipments?page_size=1".into(), easypost_auth())
}

fn easypost_list() -> Call {
    get("/v2/shipments?page_size=10".into(), easypost_auth())
}

/// Sends one call; its JSON answer (`Null` when not JSON), or `Err` naming what went wrong.
async fn send(http: &reqwest::Client, base: &str, call: Call) -> Result<Value, String> {
    let mut builder = http.request(call.method, format!("{base}{}", call.path));
    if !call.authorization.is_empty() {
        builder = builder.header("authorization", call.authorization);
    }
    for (name, value) in call.headers {
        builder = builder.header(name, value);
    }
    if let Some(body) = call.body {
        builder = builder.header("content-type", "application/json").body(body.to_string());
    } else if let Some((content_type, bytes)) = call.raw {
        builder = builder.header("content-type", content_type).body(bytes);
    }
    match builder.send().await {
        Ok(response) if response.status().is_success() => {
            let bytes = response.bytes().await.map_err(|e| e.to_string())?;
            Ok(serde_json::from_slice(&bytes).unwrap_or(Value::Null))
        }
        Ok(response) => Err(format!("status {}", response.status())),
        Err(e) => Err(e.to_string()),
    }
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "an index into a slice")]
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

async fn run(case: &Case, requests: usize, clients: usize) {
    let sandbox = sandbox::start(0, 42).await.expect("sandbox starts");
    let base = sandbox.base_url(case.service);
    let http = reqwest::Client::builder().pool_max_idle_per_host(clients).build().unwrap();
    let per_client = requests.div_ceil(clients);
    if let Some(prepare) = case.prepare {
        let said = prepare(&sandbox, &http).await.unwrap_or_else(|e| panic!("{}: {e}", case.name));
        println!("{:<32} {said}", case.name);
    }
    // The simulator seeds itself on its first request: that is not the run's memory.
    send(&http, &base, (case.list)()).await.unwrap();
    let heap_before = HEAP.current_usage();
    let started = Instant::now();
    let writing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let mut readers = Vec::new();
    if let Some(read) = case.reads {
        for client in 0..clients.div_ceil(4) {
            let (http, base, writing) = (http.clone(), base.clone(), std::sync::Arc::clone(&writing));
            readers.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut failures = 0usize;
                let mut index = 0;
                while writing.load(std::sync::atomic::Ordering::Relaxed) {
                    let call = read(client, index);
                    index += 1;
                    let sent = Instant::now();
                    match send(&http, &base, call).await {
                        Ok(_) => latencies.push(sent.elapsed()),
                        Err(_) => failures += 1,
                    }
                }
                (latencies, failures)
            }));
        }
    }
    let mut tasks = Vec::new();
    for client in 0..clients {
        let http = http.clone();
        let base = base.clone();
        let (request, then) = (case.request, case.then);
        let count = per_client.min(requests.saturating_sub(client * per_client));
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(count);
            let mut failures = Vec::new();
            for index in 0..count {
                let call = request(client, index);
                let sent = Instant::now();
                let mut result = send(&http, &base, call).await;
                if let (Ok(answer), Some(then)) = (&result, then) {
                    result = send(&http, &base, then(answer)).await;
                }
                match result {
                    Ok(_) => latencies.push(sent.elapsed()),
                    Err(e) => failures.push(e),
                }
            }
            (latencies, failures)
        }));
    }
    let mut latencies = Vec::with_capacity(requests);
    let mut failures = Vec::new();
    for task in tasks {
        let (l, f) = task.await.unwrap();
        latencies.extend(l);
        failures.extend(f);
    }
    let elapsed = started.elapsed();
    writing.store(false, std::sync::atomic::Ordering::Relaxed);
    let mut read_latencies = Vec::new();
    let mut read_failures = 0;
    for reader in readers {
        let (l, f) = reader.await.unwrap();
        read_latencies.extend(l);
        read_failures += f;
    }
    latencies.sort_unstable();
    let ok = latencies.len();
    let stored = match case.stored {
        Some(count) => count(&sandbox, &http, clients).await.unwrap(),
        None => ok,
    };
    println!(
        "{:<32} {requests} requests, {clients} clients: {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  ok {ok}  failed {}  stored {stored}",
        case.name,
        ok as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
        failures.len(),
    );
    if let Some(first) = failures.first() {
        println!("  first failure: {first}");
    }
    if case.reads.is_some() {
        read_latencies.sort_unstable();
        println!(
            "{:<32} concurrent reads, {} clients:   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  ok {}  failed {read_failures}",
            "  + concurrent reads",
            clients.div_ceil(4),
            read_latencies.len() as f64 / elapsed.as_secs_f64(),
            percentile(&read_latencies, 0.50).as_secs_f64() * 1000.0,
            percentile(&read_latencies, 0.99).as_secs_f64() * 1000.0,
            read_latencies.len(),
        );
        assert_eq!(read_failures, 0, "{}: concurrent reads failed", case.name);
    }
    assert!(failures.is_empty(), "{}: {} requests failed", case.name, failures.len());
    if let Some(audit) = case.audit {
        let said = audit(&sandbox, &http).await.unwrap_or_else(|e| panic!("{}: {e}", case.name));
        println!("{:<32} {said}", "  + audit");
    }
    if case.stored.is_none() {
        return sandbox.shutdown();
    }
    // Past half the cap the seeded records and the cap's eviction step decide what is kept.
    if ok <= case.cap / 2 {
        assert_eq!(stored, ok, "{}: every accepted request is stored exactly once", case.name);
    } else {
        assert!(stored <= ok && stored >= case.cap / 2, "{}: {stored} of {ok} kept, cap {}", case.name, case.cap);
    }
    let heap_after = HEAP.current_usage();
    let record = send(&http, &base, (case.record)(per_client - 1)).await.unwrap();
    let record_json = serde_json::to_string(&(case.pick)(&record)).unwrap().len();
    let per_record = heap_after.saturating_sub(heap_before) as f64 / stored.max(1) as f64;
    println!(
        "{:<32} memory: {:>8.0} B a record (heap +{:.1} MB for {stored})  JSON {record_json} B  ratio {:.2}",
        "  + stored records",
        per_record,
        heap_after.saturating_sub(heap_before) as f64 / 1e6,
        per_record / record_json.max(1) as f64,
    );
    let reads = env_number("LOAD_LIST_READS", 200);
    let mut list_latencies = Vec::with_capacity(reads);
    for _ in 0..reads {
        let sent = Instant::now();
        send(&http, &base, (case.list)()).await.unwrap();
        list_latencies.push(sent.elapsed());
    }
    list_latencies.sort_unstable();
    println!(
        "{:<32} list latency at {stored} records: p50 {:>8.3} ms  p99 {:>8.3} ms",
        "  + first page of 10",
        percentile(&list_latencies, 0.50).as_secs_f64() * 1000.0,
        percentile(&list_latencies, 0.99).as_secs_f64() * 1000.0,
    );
    sandbox.shutdown();
}

fn main() {
    let requests = env_number("LOAD_REQUESTS", 20_000);
    let clients = env_number("LOAD_CLIENTS", 16);
    let wanted = std::env::var("LOAD_CASE").unwrap_or_else(|_| "all".to_owned());
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let selected: Vec<&Case> = CASES.iter().filter(|c| wanted == "all" || c.name.contains(wanted.as_str())).collect();
    assert!(!selected.is_empty(), "no case matches LOAD_CASE={wanted}");
    for case in selected {
        runtime.block_on(run(case, requests, clients));
    }
}
