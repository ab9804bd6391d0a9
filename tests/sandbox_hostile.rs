//! Hostile requests against a running sandbox (issue 19): absurd filters, money past what can be
//! added up, and more request bodies at once than a listener holds. Each must be refused as the
//! vendor would refuse it, while the sandbox goes on serving.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::time::Duration;

use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials, ServeLimits};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The JSON body of the answer to `request`.
async fn json_of(request: reqwest::RequestBuilder) -> Value {
    serde_json::from_str(&request.send().await.unwrap().text().await.unwrap()).unwrap()
}

async fn avatax(http: &reqwest::Client, request: reqwest::RequestBuilder) -> (u16, Value) {
    let _ = http;
    let response =
        request.basic_auth(credentials::AVATAX_ACCOUNT_ID, Some(credentials::AVATAX_LICENSE_KEY)).send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

#[tokio::test]
async fn a_nested_filter_is_avataxs_400_and_the_sandbox_goes_on() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let base = sandbox.base_url(Service::Avatax);
    let http = reqwest::Client::new();
    let list = format!("{base}/api/v2/companies/DEFAULT/transactions");
    let parens = format!("{}totalAmount gt 0{}", "(".repeat(1500), ")".repeat(1500));
    let nots = format!("{}totalAmount gt 0", "not ".repeat(12_000));
    for filter in [parens, nots] {
        let (status, body) = avatax(&http, http.get(&list).query(&[("$filter", filter)])).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(body["error"]["code"], "SyntaxError", "{body}");
        assert_eq!(body["error"]["details"][0]["refersTo"], "$filter", "{body}");
    }
    let (status, body) = avatax(&http, http.get(&list)).await;
    assert_eq!(status, 200, "{body}");
    sandbox.shutdown();
}

#[tokio::test]
async fn money_past_what_can_be_added_up_is_a_400_and_stores_nothing() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let http = reqwest::Client::new();
    let base = sandbox.base_url(Service::Avatax);
    let max = "79228162514264337593543950335";
    let line = |n: &str| json!({"number": n, "quantity": 1, "amount": max, "taxCode": "PS081282"});
    let document = json!({
        "type": "SalesInvoice", "code": "HUGE", "companyCode": "DEFAULT", "date": "2024-06-14", "customerCode": "ABC",
        "addresses": {"SingleLocation": {"line1": "123 Main Street", "city": "Irvine", "region": "CA", "country": "US", "postalCode": "92615"}},
        "lines": [line("1"), line("2")],
    });
    let create = http
        .post(format!("{base}/api/v2/transactions/create"))
        .header("content-type", "application/json")
        .body(document.to_string());
    let (status, body) = avatax(&http, create).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "RangeError", "{body}");
    let (status, body) = avatax(&http, http.get(format!("{base}/api/v2/companies/DEFAULT/transactions"))).await;
    assert_eq!(status, 200, "the list still answers: {body}");
    let (status, body) = avatax(&http, http.get(format!("{base}/api/v2/companies/DEFAULT/transactions/HUGE"))).await;
    assert_eq!(status, 404, "nothing was stored: {body}");

    let taxjar = sandbox.base_url(Service::Taxjar);
    let order = json!({"to_country": "US", "to_zip": "90002", "to_state": "CA", "shipping": 0,
        "line_items": [{"quantity": i64::MAX, "unit_price": i64::MAX}]});
    let response = http
        .post(format!("{taxjar}/v2/taxes"))
        .bearer_auth(credentials::TAXJAR_TOKEN)
        .header("content-type", "application/json")
        .body(order.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["error"], "Bad Request", "TaxJar's shape: {body}");
    sandbox.shutdown();
}

/// Reads an answer's head (status line and headers) from a connection.
async fn head(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    while !received.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await.unwrap().unwrap();
        assert!(n > 0, "closed before an answer: {:?}", String::from_utf8_lossy(&received));
        received.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&received).into_owned()
}

#[tokio::test]
async fn bodies_past_a_listeners_budget_get_503_with_retry_after() {
    let limits = ServeLimits { max_bodies_in_flight: 4096, body_read: Duration::from_secs(20), ..ServeLimits::DEFAULT };
    let sandbox = sandbox::start_with(0, 42, limits).await.unwrap();
    let addr = sandbox.endpoint(Service::Ably).addr;
    let post = |length: usize| {
        format!("POST /channels/big/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n")
    };
    // One client holds 3,000 of the 4,096 bytes, sending its body slowly.
    // It asks to continue: the 100 comes once the server reads its body, its bytes counted.
    let mut holder = TcpStream::connect(addr).await.unwrap();
    let asking = post(3000).replace("\r\n\r\n", "\r\nExpect: 100-continue\r\n\r\n");
    holder.write_all(asking.as_bytes()).await.unwrap();
    let go_on = head(&mut holder).await;
    assert!(go_on.starts_with("HTTP/1.1 100"), "{go_on}");
    holder.write_all(&[b' '; 10]).await.unwrap();
    // A declared body past what is left is refused before it is sent.
    let mut second = TcpStream::connect(addr).await.unwrap();
    second.write_all(post(2000).as_bytes()).await.unwrap();
    let answer = head(&mut second).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 1"), "{answer}");
    // A chunked one, as it passes what is left.
    let mut chunked = TcpStream::connect(addr).await.unwrap();
    let chunk = format!("7d0\r\n{}\r\n0\r\n\r\n", " ".repeat(2000));
    let request = "POST /channels/big/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    chunked.write_all(format!("{request}{chunk}").as_bytes()).await.unwrap();
    let answer = head(&mut chunked).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    // The holder finishes and is answered; its bytes are given back.
    holder.write_all(&[b' '; 2990]).await.unwrap();
    let answer = head(&mut holder).await;
    assert!(!answer.starts_with("HTTP/1.1 503"), "{answer}");
    drop(holder);
    let mut third = TcpStream::connect(addr).await.unwrap();
    third.write_all(post(2000).as_bytes()).await.unwrap();
    third.write_all(&[b' '; 2000]).await.unwrap();
    let answer = head(&mut third).await;
    assert!(!answer.starts_with("HTTP/1.1 503"), "served once the bytes were given back: {answer}");
    sandbox.shutdown();
}

/// A raw request to `addr` with `headers`; the status line and body of the answer.
async fn raw_get(addr: std::net::SocketAddr, path: &str, headers: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_string(&mut answer)).await.unwrap().unwrap();
    answer
}

#[tokio::test]
async fn the_control_port_answers_only_loopback_hosts_and_no_web_page() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let control = sandbox.control;
    let port = control.port();
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("LOCALHOST:{port}")] {
        let answer = raw_get(control, "/", &format!("Host: {host}\r\n")).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{host}: {answer}");
    }
    let other = port.wrapping_add(1);
    for host in ["evil.example".to_owned(), format!("evil.example:{port}"), format!("127.0.0.1:{other}")] {
        let answer = raw_get(control, "/reset", &format!("Host: {host}\r\n")).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{host}: {answer}");
        assert!(answer.contains("\"error\":\"forbidden_host\""), "{answer}");
    }
    let answer = raw_get(control, "/", "").await;
    assert!(answer.starts_with("HTTP/1.1 403"), "no Host: {answer}");
    let headers = format!("Host: 127.0.0.1:{port}\r\nOrigin: http://evil.example\r\n");
    let answer = raw_get(control, "/faults", &headers).await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(answer.contains("\"error\":\"forbidden_origin\""), "{answer}");
    // A cross-origin text/plain POST, as a web page sends one, resets nothing.
    let http = reqwest::Client::new();
    let response = http
        .post(format!("{}/reset", sandbox.control_url()))
        .header("origin", "http://evil.example")
        .header("content-type", "text/plain")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    sandbox.shutdown();
}

/// A webhook may name one of the sandbox's own ports (the real services take any URL), but nothing
/// is ever sent there: a POST to the control port's `/reset` would reset every simulator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_never_target_the_sandboxs_own_ports() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let http = reqwest::Client::new();
    let (easypost, mailgun) = (sandbox.base_url(Service::Easypost), sandbox.base_url(Service::Mailgun));
    let own = [sandbox.control_url(), easypost.clone(), mailgun.clone()];
    for base in &own {
        let url = format!("{base}/reset");
        let response = http
            .post(format!("{easypost}/v2/webhooks"))
            .basic_auth(credentials::EASYPOST_KEY, Some(""))
            .header("content-type", "application/json")
            .body(json!({"webhook": {"url": url}}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 201, "{url}: kept, as EasyPost keeps it");
    }
    let url = format!("{}/reset", sandbox.control_url());
    let response = http
        .post(format!("{mailgun}/v3/domains/mg.example.com/webhooks"))
        .basic_auth("api", Some(credentials::MAILGUN_KEY))
        .form(&[("id", "delivered"), ("url", url.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "kept, as Mailgun keeps it");
    // Events for both: a tracker, and a message delivered a few sandbox seconds later.
    let tracker = http
        .post(format!("{easypost}/v2/trackers"))
        .basic_auth(credentials::EASYPOST_KEY, Some(""))
        .header("content-type", "application/json")
        .body(json!({"tracker": {"tracking_code": "EZ2000000002"}}).to_string())
        .send()
        .await
        .unwrap();
    assert!(tracker.status().is_success());
    let sent = http
        .post(format!("{mailgun}/v3/mg.example.com/messages"))
        .basic_auth("api", Some(credentials::MAILGUN_KEY))
        .form(&[("from", "ops@mg.example.com"), ("to", "a@example.com"), ("subject", "s"), ("text", "t")])
        .send()
        .await
        .unwrap();
    assert!(sent.status().is_success());
    sandbox.clock().advance(10_000);
    let control = sandbox.control_url();
    let mut outcomes: Vec<(String, String)> = Vec::new();
    for _ in 0..100 {
        let easypost_log: Value = json_of(http.get(format!("{control}/easypost/webhooks"))).await;
        let mailgun_log: Value = json_of(http.get(format!("{control}/mailgun/webhooks"))).await;
        let attempts = easypost_log["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .chain(mailgun_log["us"]["attempts"].as_array().unwrap());
        outcomes = attempts
            .map(|a| {
                (a["outcome"].as_str().unwrap_or_default().to_owned(), a["why"].as_str().unwrap_or_default().to_owned())
            })
            .collect();
        if outcomes.len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(outcomes.len() >= 4, "one attempt a webhook: {outcomes:?}");
    assert!(
        outcomes.iter().all(|(outcome, why)| outcome == "not sent" && why == "a port of the sandbox itself"),
        "{outcomes:?}"
    );
    // Nothing reached `/reset`: the webhooks made above are all still there.
    let hooks: Value =
        json_of(http.get(format!("{easypost}/v2/webhooks")).basic_auth(credentials::EASYPOST_KEY, Some(""))).await;
    let kept =
        hooks["webhooks"].as_array().unwrap().iter().filter(|h| h["url"].as_str().unwrap().ends_with("/reset")).count();
    assert_eq!(kept, 3);
    sandbox.shutdown();
}

/// A header the simulator builds from what a request sent (Ably repeats its error message in
/// `X-Ably-ErrorMessage`) is bounded: a 100 KB invalid capability is no 100 KB header line, which
/// Python's client refuses as `LineTooLong`. The body keeps the whole message.
#[tokio::test]
async fn a_header_built_from_input_is_bounded() {
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let base = sandbox.base_url(Service::Ably);
    let capability = format!("{{\"{}\":[\"publish\"", "c".repeat(100_000));
    let response = reqwest::Client::new()
        .post(format!("{base}/keys/{}/requestToken", credentials::ABLY_KEY_NAME))
        .basic_auth(credentials::ABLY_KEY_NAME, Some(credentials::ABLY_KEY_SECRET))
        .header("content-type", "application/json")
        .body(json!({"keyName": credentials::ABLY_KEY_NAME, "capability": capability}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let header = response.headers().get("x-ably-errormessage").expect("Ably repeats its error in a header").clone();
    assert!(header.len() <= sandbox::errors::HEADER_TEXT_LIMIT, "{} bytes", header.len());
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert!(body["error"]["message"].as_str().unwrap().len() > header.len(), "{body}");
    sandbox.shutdown();
}

/// A simulator's port answers this machine's programs only: a request addressed to another name
/// (DNS rebinding) or sent by a web page is refused in the vendor's shape and changes nothing;
/// a page the user allows gets CORS answers naming its origin, never `*`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_ports_answer_loopback_hosts_and_the_pages_the_user_allows_only() {
    let access = sandbox::access::Access { hosts: vec![], origins: vec!["http://localhost:3000".into()] };
    let sandbox = sandbox::start_options(sandbox::SandboxOptions { access, ..sandbox::SandboxOptions::new(0, 42) })
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let easypost = sandbox.base_url(Service::Easypost);
    let webhook = |host: Option<&str>| {
        let mut request = http
            .post(format!("{easypost}/v2/webhooks"))
            .basic_auth(credentials::EASYPOST_KEY, Some(""))
            .header("content-type", "application/json")
            .body(json!({"webhook": {"url": "http://127.0.0.1:9/hook"}}).to_string());
        if let Some(host) = host {
            request = request.header("host", host);
        }
        request.send()
    };
    let rebound = webhook(Some("rebind.evil.example")).await.unwrap();
    assert_eq!(rebound.status().as_u16(), 403);
    let body: Value = serde_json::from_str(&rebound.text().await.unwrap()).unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("rebind.evil.example"), "EasyPost's shape: {body}");
    let listed: Value =
        json_of(http.get(format!("{easypost}/v2/webhooks")).basic_auth(credentials::EASYPOST_KEY, Some(""))).await;
    assert!(
        listed["webhooks"].as_array().unwrap().iter().all(|w| w["url"] != "http://127.0.0.1:9/hook"),
        "nothing was created: {listed}"
    );
    assert_eq!(webhook(Some("localhost")).await.unwrap().status().as_u16(), 201);

    // A page's form POST with the key in the query publishes nothing.
    let ably = sandbox.base_url(Service::Ably);
    let publish = |origin: &'static str| {
        http.post(format!("{ably}/channels/rebind/messages?key={}", credentials::ABLY_KEY))
            .header("origin", origin)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("name=evil&data=x")
            .send()
    };
    let page = publish("https://evil.example").await.unwrap();
    assert_eq!(page.status().as_u16(), 403);
    assert!(page.headers().get("access-control-allow-origin").is_none());
    let history: Value = json_of(
        http.get(format!("{ably}/channels/rebind/messages"))
            .basic_auth(credentials::ABLY_KEY_NAME, Some(credentials::ABLY_KEY_SECRET)),
    )
    .await;
    assert_eq!(history, json!([]), "nothing was published");
    // The page the user allows: its preflight and answers name it.
    let preflight = http
        .request(reqwest::Method::OPTIONS, format!("{ably}/time"))
        .header("origin", "http://localhost:3000")
        .header("access-control-request-method", "GET")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.headers()["access-control-allow-origin"], "http://localhost:3000");
    let time = http.get(format!("{ably}/time")).send().await.unwrap();
    assert!(time.headers().get("access-control-allow-origin").is_none(), "a script gets no CORS headers");

    // Two Host headers are one too many, even when the first is this machine.
    let answer = raw_get(sandbox.endpoints[0].addr, "/", "Host: 127.0.0.1\r\nHost: evil.example\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let port = sandbox.control.port();
    let answer = raw_get(sandbox.control, "/", &format!("Host: 127.0.0.1:{port}\r\nHost: evil.example\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    sandbox.shutdown();
}

/// Another opsdeck process's control port is no webhook receiver: a delivery aimed at its
/// `/reset` carries the outbox's marker, is refused there and resets nothing, and the port is not
/// sent to again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_never_resets_another_opsdecks_sandbox() {
    use std::io::Read as _;
    struct Stopped(std::process::Child);
    impl Drop for Stopped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut other = Stopped(
        std::process::Command::new(env!("CARGO_BIN_EXE_opsdeck"))
            .args(["sandbox", "--port-base", "0"])
            .env_clear()
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut out = other.0.stdout.take().unwrap();
    let banner = tokio::task::spawn_blocking(move || {
        let (mut banner, mut chunk) = (String::new(), [0u8; 4096]);
        while !banner.contains("SDKs take the same base URLs") {
            match out.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => banner.push_str(&String::from_utf8_lossy(&chunk[..n])),
            }
        }
        banner
    })
    .await
    .unwrap();
    let url_after = |marker: &str| {
        let at = banner.find(marker).unwrap_or_else(|| panic!("{marker} in {banner}")) + marker.len();
        banner[at..].split_whitespace().next().unwrap().to_owned()
    };
    let (other_control, other_ably) = (url_after("control "), url_after("OPSDECK_ABLY_URL="));
    let http = reqwest::Client::new();
    let history = |http: reqwest::Client| {
        let url = format!("{other_ably}/channels/kept/messages");
        async move {
            let text = http
                .get(url)
                .basic_auth(credentials::ABLY_KEY_NAME, Some(credentials::ABLY_KEY_SECRET))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            serde_json::from_str::<Value>(&text).unwrap().as_array().map_or(0, Vec::len)
        }
    };
    let published = http
        .post(format!("{other_ably}/channels/kept/messages"))
        .basic_auth(credentials::ABLY_KEY_NAME, Some(credentials::ABLY_KEY_SECRET))
        .header("content-type", "application/json")
        .body(json!({"name": "kept", "data": "x"}).to_string())
        .send()
        .await
        .unwrap();
    assert!(published.status().is_success());
    assert_eq!(history(http.clone()).await, 1);

    // This process's sandbox sends EasyPost events to the other one's /reset.
    let sandbox = sandbox::start(0, 42).await.unwrap();
    let easypost = sandbox.base_url(Service::Easypost);
    let hook = http
        .post(format!("{easypost}/v2/webhooks"))
        .basic_auth(credentials::EASYPOST_KEY, Some(""))
        .header("content-type", "application/json")
        .body(json!({"webhook": {"url": format!("{other_control}/reset")}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(hook.status().as_u16(), 201);
    let tracker = http
        .post(format!("{easypost}/v2/trackers"))
        .basic_auth(credentials::EASYPOST_KEY, Some(""))
        .header("content-type", "application/json")
        .body(json!({"tracker": {"tracking_code": "EZ2000000002"}}).to_string())
        .send()
        .await
        .unwrap();
    assert!(tracker.status().is_success());
    sandbox.clock().advance(10_000);
    let control = sandbox.control_url();
    let mut statuses = Vec::new();
    for _ in 0..200 {
        let log: Value = json_of(http.get(format!("{control}/easypost/webhooks"))).await;
        statuses = log["attempts"].as_array().unwrap().iter().map(|a| a["status"].as_u64().unwrap_or(0)).collect();
        if !statuses.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!statuses.is_empty(), "the event was delivered");
    assert!(statuses.iter().all(|s| *s != 200), "refused there: {statuses:?}");
    assert_eq!(history(http.clone()).await, 1, "the other sandbox was not reset");
    sandbox.shutdown();
}
