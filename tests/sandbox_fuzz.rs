//! Fuzzing every simulator's parsers over loopback (issue 19: nothing a request can send takes
//! down the sandbox). Each case starts from a valid request (a seed) and mutates it: bytes
//! flipped, inserted, deleted, duplicated, and adversarial tokens spliced in (deep nesting, huge
//! numbers, invalid UTF-8, broken percent-encoding, garbled boundaries, NUL bytes, folded
//! headers, long runs of operators). Hand-made hostile requests run alongside.
//!
//! What must hold for every request: the answer is a vendor's 2xx or 4xx, never a 500 (a
//! panic in a handler becomes one) and never a dropped connection; a JSON answer is JSON; and
//! the process survives (a stack overflow would abort it). The generator is a small
//! deterministic PRNG seeded per case, so a failure names a case that can be replayed
//! (`FUZZ_ONLY=<target>:<iteration>`); `FUZZ_ITERATIONS` raises the count for a longer run.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use std::time::Duration;

use opsdeck::catalog::Service;
use opsdeck::sandbox::{self, credentials, Sandbox};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod common;

/// Mutated requests per target. Sized so the whole file stays well under a minute in a debug
/// build on two cores.
fn iterations() -> u64 {
    std::env::var("FUZZ_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(300)
}

/// xorshift64*: enough randomness for mutation, no crate needed.
struct Rng(u64);

impl Rng {
    fn new(target: &str, iteration: u64) -> Rng {
        // FNV-1a of the target's name, mixed with the iteration.
        let mut h = 0xcbf2_9ce4_8422_2325_u64;
        for b in target.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        Rng((h ^ iteration.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap()
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Tokens that have broken parsers before: structure, numbers, encodings, boundaries.
const TOKENS: &[&[u8]] = &[
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":",
    b"]]]]]]]]}}}}}}}}",
    b"1e999999",
    b"-1e-999999",
    b"79228162514264337593543950336",
    b"79228162514264337593543950335",
    b"9999999999999999999999999999.9999999999999999999999999999",
    b"\"79228162514264337593543950335\"",
    b"1100000000000000",
    b"-79228162514264337593543950336",
    b"18446744073709551616",
    b"99999999999999999999999999999999999999999999999999.5",
    b"0.00000000000000000000000000000000000001",
    b"NaN",
    b"-0",
    b"\"\\ud800\"",
    b"\"\\u0000\"",
    b"\\",
    b"\"",
    b"%",
    b"%F",
    b"%FF",
    b"%00",
    b"%C3",
    b"%E2%82",
    b"%25%32%35",
    b"%2B",
    b"+",
    b"&&&&&&&&",
    b"====",
    b"&=&=",
    b"\0",
    b"\0\0\0\0",
    b"\xff\xfe\xfd",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\r\n",
    b"\r\n ",
    b"\r\n\t",
    b"\n",
    b"\r",
    b"\r\n\r\n",
    b"--",
    b"--B0UND",
    b"--B0UND--",
    b"\r\n--B0UND\r\n",
    b"--MIX\r\n",
    b"--MIX--",
    b"Content-Type: multipart/mixed; boundary=\"MIX\"\r\n",
    b"Content-Type: multipart/mixed\r\n",
    b"Content-Disposition: form-data; name=\"x\"; filename=\"a;b\\\".txt\"\r\n",
    b"Content-Transfer-Encoding: base64\r\n",
    b"Content-Transfer-Encoding: quoted-printable\r\n",
    b"=?utf-8?b?",
    b"=?utf-8?q?=C3?=",
    b"=?iso-8859-1?B?/w==?=",
    b"?=",
    b"=?",
    b"=\r\n",
    b"=Z",
    b" eq ",
    b" and ",
    b" or not ",
    b"((((((((((((((((",
    b"))))))))))",
    b"not not not not not not not not ",
    b"''''''''",
    b"'it''s'",
    b"$filter=",
    b"$top=-1",
    b"$skip=99999999999999999999",
    b"$orderby=id desc,",
    b"$include=Lines,Details,",
    b"datetime'",
    b"\xc0\x80",
    b"\x91\x91\x91\x91\x91\x91\x91\x91",
    b"\xdd\xff\xff\xff\xff",
    b"\xdb\xff\xff\xff\xff",
    b"\xc6\x7f\xff\xff\xff",
];

/// One to four mutations of `seed`.
fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut out = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(8) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 => out.insert(at, u8::try_from(rng.below(256)).unwrap()),
            2 if at < out.len() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                out.drain(at..end);
            }
            3 if at < out.len() => {
                let end = (at + 1 + rng.below(32)).min(out.len());
                let chunk = out[at..end].to_vec();
                for _ in 0..=rng.below(8) {
                    out.splice(at..at, chunk.iter().copied());
                }
            }
            4 => out.truncate(at),
            5 => {
                // A long run of one token: operators, brackets, boundaries.
                let token = rng.pick(TOKENS);
                let run: Vec<u8> = token.iter().copied().cycle().take(token.len() * (1 + rng.below(200))).collect();
                out.splice(at..at, run);
            }
            _ => {
                let token = rng.pick(TOKENS);
                out.splice(at..at, token.iter().copied());
            }
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Auth {
    Basic(&'static str, &'static str),
    Bearer(&'static str),
    /// Deepgram's `Token KEY`.
    Token(&'static str),
    /// Coinbase's signed `CB-ACCESS-*` headers, added by [`Raw::signed`] once the body is set.
    Coinbase,
}

/// A request as bytes on the wire; sent over its own connection so nothing a client library
/// would correct (encoding, header checks) is corrected.
struct Raw<'a> {
    method: &'a str,
    target: Vec<u8>,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

impl<'a> Raw<'a> {
    fn new(method: &'a str, target: impl Into<Vec<u8>>, auth: Auth) -> Raw<'a> {
        let authorization = match auth {
            Auth::Basic(user, password) => {
                use base64::Engine;
                format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
            }
            Auth::Bearer(token) => format!("Bearer {token}"),
            Auth::Token(token) => format!("Token {token}"),
            Auth::Coinbase => String::new(),
        };
        let headers = if authorization.is_empty() {
            Vec::new()
        } else {
            vec![("Authorization".into(), authorization.into_bytes())]
        };
        Raw { method, target: target.into(), headers, body: Vec::new() }
    }

    /// Signs the request as a Coinbase client does, over its exact target and body, so a
    /// mutation reaches the parsers behind the signature check.
    fn signed(self) -> Raw<'a> {
        let timestamp =
            format!("{:.3}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64());
        let target = String::from_utf8_lossy(&self.target).into_owned();
        let sign = sandbox::coinbase::sign(credentials::COINBASE_SECRET, &timestamp, self.method, &target, &self.body)
            .unwrap();
        self.header("CB-ACCESS-KEY", credentials::COINBASE_KEY)
            .header("CB-ACCESS-SIGN", sign)
            .header("CB-ACCESS-TIMESTAMP", timestamp)
            .header("CB-ACCESS-PASSPHRASE", credentials::COINBASE_PASSPHRASE)
    }

    fn header(mut self, name: &str, value: impl Into<Vec<u8>>) -> Raw<'a> {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    fn body(mut self, content_type: &str, body: Vec<u8>) -> Raw<'a> {
        self.body = body;
        self.header("Content-Type", content_type.as_bytes())
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len() + 256);
        out.extend_from_slice(self.method.as_bytes());
        out.push(b' ');
        out.extend_from_slice(&self.target);
        out.extend_from_slice(b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
        for (name, value) in &self.headers {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", self.body.len()).as_bytes());
        out.extend_from_slice(&self.body);
        out
    }
}

/// The status and body of an answer, or why there was none.
async fn exchange(addr: &str, request: &[u8]) -> Result<(u16, String, Vec<u8>), String> {
    let work = async {
        let mut stream = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
        // The server may answer (and close) before reading a body it refuses.
        let _ = stream.write_all(request).await;
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        let head_end = memchr::memmem::find(&answer, b"\r\n\r\n").ok_or_else(|| {
            format!("no complete answer ({} bytes: {:?})", answer.len(), String::from_utf8_lossy(&answer))
        })?;
        let head = String::from_utf8_lossy(&answer[..head_end]).into_owned();
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| format!("no status line: {head:?}"))?;
        let content_type = head
            .lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-type")))
            .map(|(_, v)| v.trim().to_ascii_lowercase())
            .unwrap_or_default();
        let mut body = answer[head_end + 4..].to_vec();
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            body = dechunk(&body);
        }
        Ok((status, content_type, body))
    };
    tokio::time::timeout(Duration::from_secs(20), work).await.map_err(|_| "no answer within 20 s".to_owned())?
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = memchr::memmem::find(raw, b"\r\n") {
        let size = std::str::from_utf8(&raw[..line_end]).ok().and_then(|s| usize::from_str_radix(s.trim(), 16).ok());
        let Some(size) = size.filter(|s| *s > 0) else {
            break;
        };
        let start = line_end + 2;
        let end = (start + size).min(raw.len());
        out.extend_from_slice(&raw[start..end]);
        raw = raw.get(end + 2..).unwrap_or_default();
    }
    out
}

fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(600)]).into_owned();
    if bytes.len() > 600 {
        format!("{text:?}... ({} bytes)", bytes.len())
    } else {
        format!("{text:?}")
    }
}

/// Sends `request` and checks the answer: 2xx or 4xx, and JSON when it says JSON.
async fn check(addr: &str, case: &str, request: &Raw<'_>) -> u16 {
    let wire = request.bytes();
    let (status, content_type, body) = match exchange(addr, &wire).await {
        Ok(answer) => answer,
        Err(e) => panic!("{case}: {e}\nrequest: {}", shown(&wire)),
    };
    assert!(
        (200..300).contains(&status) || (400..500).contains(&status),
        "{case}: status {status}, body {}\nrequest: {}",
        shown(&body),
        shown(&wire)
    );
    if content_type.contains("json") && !body.is_empty() {
        assert!(
            serde_json::from_slice::<serde_json::Value>(&body).is_ok(),
            "{case}: a {content_type} answer that is not JSON: {}\nrequest: {}",
            shown(&body),
            shown(&wire)
        );
    }
    status
}

/// A fuzz target: a name, and how to turn a mutated seed into a request.
struct Target {
    name: &'static str,
    seeds: &'static [&'static [u8]],
    build: fn(Vec<u8>) -> Raw<'static>,
}

async fn fuzz(sandbox: &Sandbox, service: Service, targets: &[Target]) {
    let base = sandbox.base_url(service);
    let addr = base.trim_start_matches("http://").to_owned();
    let only = std::env::var("FUZZ_ONLY").ok();
    for target in targets {
        let started = std::time::Instant::now();
        let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
        for iteration in 0..iterations() {
            let case = format!("{}:{iteration}", target.name);
            if only.as_deref().is_some_and(|o| o != case && o != target.name) {
                continue;
            }
            let mut rng = Rng::new(target.name, iteration);
            let seed = rng.pick(target.seeds);
            // Every tenth case sends a seed unchanged, so the seeds stay valid requests.
            let input = if iteration % 10 == 0 { seed.to_vec() } else { mutate(&mut rng, seed) };
            *statuses.entry(check(&addr, &case, &(target.build)(input)).await).or_default() += 1;
        }
        // Which answers the mutations reached, to see that they get past the first check.
        eprintln!("{}: {statuses:?} in {:?}", target.name, started.elapsed());
    }
}

/// `a%20b` for the bytes of a query that a request line may not carry as they are (space,
/// controls, non-ASCII), so the rest reaches the parser unchanged.
fn query_safe(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    for &b in raw {
        if b.is_ascii_graphic() && b != b'#' {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    out
}

fn with_query(path: &str, raw: &[u8]) -> Vec<u8> {
    let mut target = format!("{path}?").into_bytes();
    target.extend_from_slice(&query_safe(raw));
    target
}

const ABLY: Auth = Auth::Basic(credentials::ABLY_KEY_NAME, credentials::ABLY_KEY_SECRET);
const AVATAX: Auth = Auth::Basic(credentials::AVATAX_ACCOUNT_ID, credentials::AVATAX_LICENSE_KEY);
const TAXJAR: Auth = Auth::Bearer(credentials::TAXJAR_TOKEN);
const MAILGUN: Auth = Auth::Basic("api", credentials::MAILGUN_KEY);
const EASYPOST: Auth = Auth::Basic(credentials::EASYPOST_KEY, "");

async fn start() -> Sandbox {
    sandbox::start(0, 19).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ably_survives_mutated_queries_json_and_msgpack() {
    let sandbox = start().await;
    let msgpack_seed: &'static [u8] = Box::leak(
        rmp_serde::to_vec_named(
            &serde_json::json!({"name": "greeting", "data": "hello", "extras": {"headers": {"a": "b"}}}),
        )
        .unwrap()
        .into_boxed_slice(),
    );
    let msgpack_seeds: &'static [&'static [u8]] =
        Box::leak(Box::new([msgpack_seed, b"\x92\x82\xa4name\xa1a\xa4data\xa1b\x81\xa4name\xa1c"]));
    let targets = [
        Target {
            name: "ably_history_query",
            seeds: &[
                b"limit=10&direction=forwards&start=0&end=9999999999999",
                b"limit=1000&direction=backwards&format=json",
            ],
            build: |q| Raw::new("GET", with_query("/channels/fuzz/messages", &q), ABLY),
        },
        Target {
            name: "ably_stats_query",
            seeds: &[
                b"unit=hour&limit=5&start=1700000000000&end=1800000000000&direction=forwards",
                b"unit=month&by=hour",
            ],
            build: |q| Raw::new("GET", with_query("/stats", &q), ABLY),
        },
        Target {
            name: "ably_publish_json",
            seeds: &[
                br#"{"name":"greeting","data":"hello","extras":{"headers":{"a":"b"}}}"#,
                br#"[{"name":"a","data":{"n":1.5,"list":[1,2,3]}},{"name":"b","data":"aGk=","encoding":"base64"}]"#,
                br#"{"id":"idem:0","name":"x","data":"y","clientId":"c","connectionKey":"k"}"#,
            ],
            build: |b| Raw::new("POST", "/channels/fuzz/messages", ABLY).body("application/json", b),
        },
        Target {
            name: "ably_publish_msgpack",
            seeds: msgpack_seeds,
            build: |b| {
                Raw::new("POST", "/channels/fuzz/messages", ABLY)
                    .header("Accept", "application/x-msgpack")
                    .body("application/x-msgpack", b)
            },
        },
        Target {
            name: "ably_batch_publish",
            seeds: &[
                br#"{"channels":["a","b"],"messages":{"name":"n","data":"d"}}"#,
                br#"[{"channels":"a","messages":[{"data":"x"}]}]"#,
            ],
            build: |b| Raw::new("POST", "/messages", ABLY).body("application/json", b),
        },
        Target {
            name: "ably_publish_form",
            seeds: &[b"name=greeting&data=hello", b"name=a+b&data=%7B%22x%22%3A1%7D&encoding=json"],
            build: |b| Raw::new("POST", "/channels/fuzz/messages", ABLY).body("application/x-www-form-urlencoded", b),
        },
    ];
    fuzz(&sandbox, Service::Ably, &targets).await;
    let addr = sandbox.base_url(Service::Ably).trim_start_matches("http://").to_owned();
    // Nesting far past any limit, in both encodings.
    let deep_json = [b"[".repeat(100_000), b"]".repeat(100_000)].concat();
    check(
        &addr,
        "ably deep json",
        &Raw::new("POST", "/channels/fuzz/messages", ABLY).body("application/json", deep_json),
    )
    .await;
    let deep_msgpack = [vec![0x91; 200_000], vec![0xc0]].concat();
    let deep = Raw::new("POST", "/channels/fuzz/messages", ABLY).body("application/x-msgpack", deep_msgpack.clone());
    check(&addr, "ably deep msgpack", &deep).await;
    let deep_map = [[0x81, 0xa1, b'a'].repeat(100_000), vec![0xc0]].concat();
    let deep = Raw::new("POST", "/channels/fuzz/messages", ABLY).body("application/x-msgpack", deep_map);
    check(&addr, "ably deep msgpack map", &deep).await;
    let untyped = Raw::new("POST", "/channels/fuzz/messages", ABLY).body("", deep_msgpack);
    check(&addr, "ably deep msgpack without a type", &untyped).await;
    // A length prefix promising 4 GB.
    let liar = Raw::new("POST", "/channels/fuzz/messages", ABLY)
        .body("application/x-msgpack", b"\xdb\xff\xff\xff\xffab".to_vec());
    check(&addr, "ably msgpack length liar", &liar).await;
    sandbox.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn avatax_survives_mutated_odata_and_documents() {
    let sandbox = start().await;
    let targets = [
        Target {
            name: "avatax_odata",
            seeds: &[
                b"$filter=status+eq+%27Committed%27+and+totalAmount+gt+10&$orderby=date+desc,code&$top=5&$skip=2&$include=Lines,Details",
                b"$filter=(date ge '2024-01-01' or not (code eq 'A''B')) and totalTax le 1.5&$top=1000",
                b"$filter=contains(customerCode,'AB')&$orderby=totalAmount asc&$include=Summary,Addresses",
                b"%24filter=companyId+eq+1&%24top=0&%24skip=0",
            ],
            build: |q| Raw::new("GET", with_query("/api/v2/companies/DEFAULT/transactions", &q), AVATAX),
        },
        Target {
            name: "avatax_companies_odata",
            seeds: &[b"$filter=companyCode eq 'DEFAULT'&$orderby=id&$top=10", b"$include=Nexus,TaxCodes&$skip=1"],
            build: |q| Raw::new("GET", with_query("/api/v2/companies", &q), AVATAX),
        },
        Target {
            name: "avatax_create",
            seeds: &[
                br#"{"type":"SalesInvoice","code":"FZ1","companyCode":"DEFAULT","date":"2024-06-14","customerCode":"ABC","addresses":{"SingleLocation":{"line1":"123 Main Street","city":"Irvine","region":"CA","country":"US","postalCode":"92615"}},"lines":[{"number":"1","quantity":1,"amount":100,"taxCode":"PS081282"}],"commit":false}"#,
                br#"{"type":"SalesOrder","date":"2024-02-29","customerCode":"A","addresses":{"shipFrom":{"line1":"1 A St","city":"Seattle","region":"WA","country":"US","postalCode":"98101"},"shipTo":{"line1":"2 B St","city":"Irvine","region":"CA","country":"US","postalCode":"92615"}},"lines":[{"amount":-5.25,"quantity":2.5},{"amount":"1e3","discounted":true}],"discount":1}"#,
            ],
            build: |b| Raw::new("POST", "/api/v2/transactions/create", AVATAX).body("application/json", b),
        },
    ];
    fuzz(&sandbox, Service::Avatax, &targets).await;
    sandbox.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taxjar_survives_mutated_json_and_queries() {
    let sandbox = start().await;
    let targets = [
        Target {
            name: "taxjar_taxes",
            seeds: &[
                br#"{"to_country":"US","to_zip":"90002","to_state":"CA","amount":15,"shipping":1.5,"line_items":[{"id":"1","quantity":1,"unit_price":15,"product_tax_code":"20010"}]}"#,
                br#"{"from_country":"US","from_zip":"92093","from_state":"CA","to_country":"CA","to_zip":"M5V 2T6","to_state":"ON","amount":15,"shipping":1.5,"nexus_addresses":[{"country":"CA","state":"ON"}]}"#,
            ],
            build: |b| Raw::new("POST", "/v2/taxes", TAXJAR).body("application/json", b),
        },
        Target {
            name: "taxjar_orders",
            seeds: &[
                br#"{"transaction_id":"fz-1","transaction_date":"2024-01-01T00:00:00Z","to_country":"US","to_zip":"90002","to_state":"CA","amount":16.5,"shipping":1.5,"sales_tax":0.95}"#,
            ],
            build: |b| Raw::new("POST", "/v2/transactions/orders", TAXJAR).body("application/json", b),
        },
        Target {
            name: "taxjar_rates_query",
            seeds: &[b"country=US&city=Los+Angeles&street=1+Main+St", b"country=CA&state=ON"],
            build: |q| Raw::new("GET", with_query("/v2/rates/90002", &q), TAXJAR),
        },
        Target {
            name: "taxjar_orders_query",
            seeds: &[b"transaction_date=2024/01/01&from_transaction_date=2023/01/01&to_transaction_date=2025/01/01&provider=api"],
            build: |q| Raw::new("GET", with_query("/v2/transactions/orders", &q), TAXJAR),
        },
    ];
    fuzz(&sandbox, Service::Taxjar, &targets).await;
    sandbox.shutdown();
}

const MAILGUN_FORM: &[u8] = b"from=Ops+%3Cops%40mg.example.com%3E&to=a%40example.com&to=b%40example.com&subject=Hi&text=hello&html=%3Cp%3Ehi%3C%2Fp%3E&o%3Atag=t&h%3AX-Ticket=42&v%3Avar=%7B%22a%22%3A1%7D&o:deliverytime=Fri,+14+Jun+2024+10:00:00++0000&recipient-variables=%7B%22a%40example.com%22%3A%7B%7D%7D";

const MAILGUN_MULTIPART: &[u8] = b"--B0UND\r\nContent-Disposition: form-data; name=\"from\"\r\n\r\nOps <ops@mg.example.com>\r\n--B0UND\r\n\
Content-Disposition: form-data; name=\"to\"\r\n\r\na@example.com\r\n--B0UND\r\nContent-Disposition: form-data; name=\"subject\"\r\n\r\nInvoice\r\n\
--B0UND\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nsee attached\r\n--B0UND\r\n\
Content-Disposition: form-data; name=\"attachment\"; filename=\"a.pdf\"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\x00\xff\r\n\
--B0UND\r\nContent-Disposition: form-data; name=\"inline\"; filename=\"logo.png\"\r\n\r\n\x89PNG\r\n--B0UND--\r\n";

const MIME_MESSAGE: &[u8] = b"From: Ops <ops@mg.example.com>\r\nTo: a@example.com\r\nSubject: =?UTF-8?B?SGVsbG8gd8O2cmxk?=\r\n again\r\n\
Content-Type: multipart/mixed; boundary=\"MIX\"\r\n\r\npreamble\r\n--MIX\r\nContent-Type: multipart/alternative; boundary=ALT\r\n\r\n\
--ALT\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nCaf=C3=A9 =\r\nau lait\r\n\
--ALT\r\nContent-Type: text/html\r\n\r\n<p>hi</p>\r\n--ALT--\r\n--MIX\r\nContent-Type: application/pdf; name=\"x.pdf\"\r\n\
Content-Disposition: attachment; filename=\"invoice.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0x\r\nLjQ=\r\n--MIX--\r\n";

const MIME_SIMPLE: &[u8] =
    b"From: =?iso-8859-1?q?Caf=E9?= <ops@mg.example.com>\nTo: a@example.com\nSubject: plain\n\thello\n\nbody\n";

/// A `messages.mime` upload around `message`, the outer multipart left intact so the MIME
/// reader sees the mutation.
fn mime_upload(message: &[u8]) -> Vec<u8> {
    let mut body = b"--OUTER\r\nContent-Disposition: form-data; name=\"to\"\r\n\r\na@example.com\r\n--OUTER\r\n\
Content-Disposition: form-data; name=\"message\"; filename=\"message.mime\"\r\nContent-Type: message/rfc822\r\n\r\n"
        .to_vec();
    body.extend_from_slice(message);
    body.extend_from_slice(b"\r\n--OUTER--\r\n");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mailgun_survives_mutated_forms_multiparts_and_mime() {
    let sandbox = start().await;
    let targets = [
        Target {
            name: "mailgun_form",
            seeds: &[MAILGUN_FORM],
            build: |b| {
                Raw::new("POST", "/v3/mg.example.com/messages", MAILGUN).body("application/x-www-form-urlencoded", b)
            },
        },
        Target {
            name: "mailgun_multipart",
            seeds: &[MAILGUN_MULTIPART],
            build: |b| {
                Raw::new("POST", "/v3/mg.example.com/messages", MAILGUN).body("multipart/form-data; boundary=B0UND", b)
            },
        },
        Target {
            name: "mailgun_multipart_header",
            // The Content-Type's own parameters garbled, the body kept.
            seeds: &[b"multipart/form-data; boundary=B0UND", b"multipart/form-data; charset=utf-8; boundary=\"B0UND\""],
            build: |h| {
                let mut raw = Raw::new("POST", "/v3/mg.example.com/messages", MAILGUN);
                raw.body = MAILGUN_MULTIPART.to_vec();
                raw.header("Content-Type", h.into_iter().filter(|b| *b != b'\r' && *b != b'\n').collect::<Vec<_>>())
            },
        },
        Target {
            name: "mailgun_mime",
            seeds: &[MIME_MESSAGE, MIME_SIMPLE],
            build: |m| {
                Raw::new("POST", "/v3/mg.example.com/messages.mime", MAILGUN)
                    .body("multipart/form-data; boundary=OUTER", mime_upload(&m))
            },
        },
        Target {
            name: "mailgun_events_query",
            seeds: &[
                b"event=delivered%20OR%20failed&limit=50&begin=Fri,+14+Jun+2024+10:00:00+-0000&ascending=yes",
                b"recipient=a%40example.com&subject=Hi&size=%3E1000&attachment=a.pdf&tags=NOT+t",
            ],
            build: |q| Raw::new("GET", with_query("/v3/mg.example.com/events", &q), MAILGUN),
        },
        Target {
            name: "mailgun_lists_form",
            seeds: &[b"address=list%40mg.example.com&name=L&access_level=readonly&reply_preference=list"],
            build: |b| Raw::new("POST", "/v3/lists", MAILGUN).body("application/x-www-form-urlencoded", b),
        },
    ];
    fuzz(&sandbox, Service::Mailgun, &targets).await;
    let addr = sandbox.base_url(Service::Mailgun).trim_start_matches("http://").to_owned();
    let send = |message: Vec<u8>| {
        Raw::new("POST", "/v3/mg.example.com/messages.mime", MAILGUN)
            .body("multipart/form-data; boundary=OUTER", mime_upload(&message))
    };
    // Multiparts nested far past the reader's limit, each level its own boundary.
    let mut deep = b"From: a@mg.example.com\r\nTo: b@example.com\r\n".to_vec();
    for level in 0..5000 {
        deep.extend_from_slice(
            format!("Content-Type: multipart/mixed; boundary=\"L{level}\"\r\n\r\n--L{level}\r\n").as_bytes(),
        );
    }
    deep.extend_from_slice(b"Content-Type: text/plain\r\n\r\nbottom\r\n");
    check(&addr, "mailgun deep mime", &send(deep)).await;
    // The same boundary at every level, and a thousand folded continuation lines.
    let same = [
        b"From: a@mg.example.com\r\n".to_vec(),
        b"Content-Type: multipart/mixed; boundary=X\r\n\r\n--X\r\n".repeat(3000),
    ]
    .concat();
    check(&addr, "mailgun same-boundary mime", &send(same)).await;
    let folded = [
        b"From: a@mg.example.com\r\nSubject: s".to_vec(),
        b"\r\n =?utf-8?b?w6k=?=".repeat(20_000),
        b"\r\n\r\nbody".to_vec(),
    ]
    .concat();
    check(&addr, "mailgun folded subject", &send(folded)).await;
    // Encoded-word openers that never close: one pass over the header, not one per opener.
    let openers =
        [b"From: a@mg.example.com\r\nSubject: ".to_vec(), b"=?u?B?x".repeat(200_000), b"\r\n\r\nbody".to_vec()]
            .concat();
    check(&addr, "mailgun unclosed encoded words", &send(openers)).await;
    // Many tiny parts, and a part header that never ends.
    let mut many = Vec::new();
    for i in 0..20_000 {
        many.extend_from_slice(
            format!("--B0UND\r\nContent-Disposition: form-data; name=\"v:k{i}\"\r\n\r\n{i}\r\n").as_bytes(),
        );
    }
    many.extend_from_slice(b"--B0UND--\r\n");
    let many =
        Raw::new("POST", "/v3/mg.example.com/messages", MAILGUN).body("multipart/form-data; boundary=B0UND", many);
    check(&addr, "mailgun 20000 parts", &many).await;
    let endless =
        [b"--B0UND\r\nContent-Disposition: form-data; name=\"a\"\r\nX: ".to_vec(), b"y".repeat(1_000_000)].concat();
    let endless =
        Raw::new("POST", "/v3/mg.example.com/messages", MAILGUN).body("multipart/form-data; boundary=B0UND", endless);
    check(&addr, "mailgun endless part header", &endless).await;
    sandbox.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn easypost_survives_mutated_json_forms_and_queries() {
    let sandbox = start().await;
    let targets = [
        Target {
            name: "easypost_shipment",
            seeds: &[
                br#"{"shipment":{"to_address":{"name":"Dr. Steve Brule","street1":"179 N Harbor Dr","city":"Redondo Beach","state":"CA","zip":"90277"},"from_address":{"name":"EasyPost","street1":"417 Montgomery St","street2":"5th Floor","city":"San Francisco","state":"CA","zip":"94104"},"parcel":{"length":10,"width":8,"height":4,"weight":15.4},"options":{"label_format":"PDF"}}}"#,
            ],
            build: |b| Raw::new("POST", "/v2/shipments", EASYPOST).body("application/json", b),
        },
        Target {
            name: "easypost_address",
            seeds: &[br#"{"address":{"street1":"Main St","zip":"94107"},"verify":true}"#, br#"{"address":{"street1":"417 Montgomery St","city":"San Francisco","state":"CA","zip":"94104","country":"US"},"verify_strict":[true]}"#],
            build: |b| Raw::new("POST", "/v2/addresses", EASYPOST).body("application/json", b),
        },
        Target {
            name: "easypost_form",
            seeds: &[b"address[street1]=417+Montgomery+St&address[zip]=94104&verify[]=delivery"],
            build: |b| Raw::new("POST", "/v2/addresses", EASYPOST).body("application/x-www-form-urlencoded", b),
        },
        Target {
            name: "easypost_list_query",
            seeds: &[
                b"page_size=20&before_id=shp_123&start_datetime=2024-01-01T00:00:00Z&purchased=false",
                b"page_size=100&after_id=adr_1&end_datetime=2030-01-01",
            ],
            build: |q| Raw::new("GET", with_query("/v2/shipments", &q), EASYPOST),
        },
    ];
    fuzz(&sandbox, Service::Easypost, &targets).await;
    sandbox.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coinbase_survives_mutated_orders_transfers_and_queries() {
    let sandbox = start().await;
    let targets = [
        Target {
            name: "coinbase_order",
            seeds: &[
                br#"{"product_id":"BTC-USD","side":"buy","type":"limit","price":"10.00","size":"0.01","client_oid":"496ffbba-7dae-4864-f7e8-a5bf52c6d0e2"}"#,
                br#"{"product_id":"ETH-USD","side":"sell","type":"market","size":"0.1","stp":"co"}"#,
                br#"{"product_id":"BTC-USD","side":"buy","type":"market","funds":"25.00"}"#,
                br#"{"product_id":"BTC-USD","side":"sell","type":"limit","price":"1000.00","size":"0.001","stop":"loss","stop_price":"1000.00","time_in_force":"GTT","cancel_after":"min"}"#,
            ],
            build: |b| Raw::new("POST", "/orders", Auth::Coinbase).body("application/json", b).signed(),
        },
        Target {
            name: "coinbase_withdrawal",
            seeds: &[
                br#"{"amount":"0.01","currency":"ETH","crypto_address":"0x52908400098527886E0F7030069857D2E4169EE7","add_network_fee_to_total":true,"nonce":7}"#,
                br#"{"amount":"1.00","currency":"USD","crypto_address":"x"}"#,
            ],
            build: |b| Raw::new("POST", "/withdrawals/crypto", Auth::Coinbase).body("application/json", b).signed(),
        },
        Target {
            name: "coinbase_conversion",
            seeds: &[br#"{"from":"USD","to":"USDC","amount":"10.00","nonce":"n1"}"#],
            build: |b| Raw::new("POST", "/conversions", Auth::Coinbase).body("application/Json", b).signed(),
        },
        Target {
            name: "coinbase_orders_query",
            seeds: &[
                b"status=open&status=pending&product_id=BTC-USD&sortedBy=price&sorting=asc&limit=5",
                b"status=all&after=17&limit=1000&start_date=2024-01-01T00:00:00Z&end_date=2030-01-01",
            ],
            build: |q| Raw::new("GET", with_query("/orders", &q), Auth::Coinbase).signed(),
        },
        Target {
            name: "coinbase_candles_query",
            seeds: &[
                b"granularity=3600&start=2026-01-01T00:00:00Z&end=2026-01-05T00:00:00Z",
                b"granularity=60&start=1700000000&end=1700003000",
            ],
            build: |q| Raw::new("GET", with_query("/products/BTC-USD/candles", &q), Auth::Coinbase),
        },
        Target {
            name: "coinbase_trades_query",
            seeds: &[b"limit=5&after=100", b"before=3&limit=1000"],
            build: |q| Raw::new("GET", with_query("/products/ETH-USD/trades", &q), Auth::Coinbase),
        },
    ];
    fuzz(&sandbox, Service::Coinbase, &targets).await;
    // Funds still add up after every mutated order and transfer.
    let http = reqwest::Client::new();
    let audit: serde_json::Value = serde_json::from_slice(
        &http.get(format!("{}/coinbase/market", sandbox.control_url())).send().await.unwrap().bytes().await.unwrap(),
    )
    .unwrap();
    assert!(audit["funds"].as_array().unwrap().iter().all(|f| f["balanced"] == true), "{audit}");
    sandbox.shutdown();
}

const DEEPGRAM: Auth = Auth::Token(credentials::DEEPGRAM_KEY);

/// A seeded project's path, found once the sandbox runs (fuzz targets are plain functions).
static DEEPGRAM_PROJECT: std::sync::OnceLock<String> = std::sync::OnceLock::new();

fn deepgram_project(rest: &str) -> String {
    format!("/v1/projects/{}{rest}", DEEPGRAM_PROJECT.get().map_or("none", String::as_str))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deepgram_survives_mutated_audio_json_and_queries() {
    let sandbox = start().await;
    let base = sandbox.base_url(Service::Deepgram);
    let http = reqwest::Client::new();
    let auth = format!("Token {}", credentials::DEEPGRAM_KEY);
    let projects = http.get(format!("{base}/v1/projects")).header("authorization", &auth).send().await.unwrap();
    let projects: serde_json::Value = serde_json::from_slice(&projects.bytes().await.unwrap()).unwrap();
    DEEPGRAM_PROJECT.get_or_init(|| projects["projects"][0]["project_id"].as_str().unwrap().to_owned());
    // Speech the simulator made: mutations reach the reading of the text carried in the tones.
    let spoken = http
        .post(format!("{base}/v1/speak?encoding=linear16&sample_rate=8000"))
        .header("authorization", &auth)
        .header("content-type", "application/json")
        .body(r#"{"text": "Hi."}"#)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let spoken: &'static [u8] = Box::leak(spoken.to_vec().into_boxed_slice());
    let wav: &'static [u8] = Box::leak(common::tone_wav(0.1, 8000, 1).into_boxed_slice());
    let audio: &'static [&'static [u8]] = Box::leak(vec![spoken, wav].into_boxed_slice());
    let targets = [
        Target {
            name: "deepgram_listen_audio",
            seeds: audio,
            build: |b| {
                Raw::new("POST", "/v1/listen?punctuate=true&diarize=true&paragraphs=true&utterances=true", DEEPGRAM)
                    .body("application/octet-stream", b)
            },
        },
        Target {
            name: "deepgram_listen_query",
            seeds: &[
                b"encoding=linear16&sample_rate=8000&channels=1&multichannel=true&sentiment=true",
                b"encoding=mulaw&sample_rate=16000&channels=2&language=es&smart_format=true&tag=a&extra=k:v",
            ],
            build: |q| Raw::new("POST", with_query("/v1/listen", &q), DEEPGRAM).body("audio/raw", vec![0x7f; 3200]),
        },
        Target {
            name: "deepgram_speak",
            seeds: &[br#"{"text":"Hello, world. How are you?"}"#, br#"{"text":"\u00e9t\u00e9 \ud83d\ude00"}"#],
            build: |b| {
                Raw::new("POST", "/v1/speak?encoding=alaw&container=none&sample_rate=8000", DEEPGRAM)
                    .body("application/json", b)
            },
        },
        Target {
            name: "deepgram_read",
            seeds: &[br#"{"text":"The service was great. I want to cancel my order, though it was not bad."}"#],
            build: |b| {
                Raw::new("POST", "/v1/read?sentiment=true&topics=true&intents=true&summarize=true", DEEPGRAM)
                    .body("application/json", b)
            },
        },
        Target {
            name: "deepgram_keys_create",
            seeds: &[
                br#"{"comment":"fz","scopes":["member"],"tags":["a"],"time_to_live_in_seconds":60}"#,
                br#"{"comment":"fz","scopes":["usage:read"],"expiration_date":"2099-01-01T00:00:00Z"}"#,
            ],
            build: |b| Raw::new("POST", deepgram_project("/keys"), DEEPGRAM).body("application/json", b),
        },
        Target {
            name: "deepgram_usage_query",
            seeds: &[b"start=2026-10-01&end=2026-11-01&endpoint=listen&diarize=true&tag=prod&accessor=x"],
            build: |q| Raw::new("GET", with_query(&deepgram_project("/usage"), &q), DEEPGRAM),
        },
    ];
    fuzz(&sandbox, Service::Deepgram, &targets).await;
    sandbox.shutdown();
}

/// Requests a client library would not send: folded and NUL-bearing headers, invalid UTF-8 in
/// the path and in header values, bodies that are not what their type says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_request_lines_and_headers_are_4xx() {
    let sandbox = start().await;
    let services: [(Service, Auth, &str); 6] = [
        (Service::Ably, ABLY, "/channels/x/messages"),
        (Service::Avatax, AVATAX, "/api/v2/transactions/create"),
        (Service::Taxjar, TAXJAR, "/v2/taxes"),
        (Service::Mailgun, MAILGUN, "/v3/mg.example.com/messages"),
        (Service::Easypost, EASYPOST, "/v2/shipments"),
        (Service::Coinbase, Auth::Coinbase, "/orders"),
    ];
    for (service, auth, path) in services {
        let addr = sandbox.base_url(service).trim_start_matches("http://").to_owned();
        let json = || Raw::new("POST", path, auth).body("application/json", br#"{"a":1}"#.to_vec());
        let cases: Vec<(&str, Raw<'_>)> = vec![
            ("folded content-type", json().header("X-Folded", b"a\r\n b".to_vec())),
            ("NUL in a header", json().header("X-Nul", b"a\0b".to_vec())),
            ("non-UTF-8 header", json().header("X-Latin", b"caf\xe9".to_vec())),
            (
                "non-UTF-8 authorization",
                Raw::new("POST", path, auth).header("Authorization", b"Basic \xff\xfe".to_vec()),
            ),
            ("non-UTF-8 path", Raw::new("GET", [path.as_bytes(), b"/%FF%FE/\xc3"].concat(), auth)),
            ("percent-encoded NUL in path", Raw::new("GET", format!("{path}/%00%2F..%2F"), auth)),
            (
                "boundary without a body",
                Raw::new("POST", path, auth).body("multipart/form-data; boundary=", b"--\r\n".to_vec()),
            ),
            (
                "boundary of 71",
                Raw::new("POST", path, auth)
                    .body(&format!("multipart/form-data; boundary={}", "b".repeat(71)), b"x".to_vec()),
            ),
            (
                "JSON called a form",
                Raw::new("POST", path, auth).body("application/x-www-form-urlencoded", br#"{"a":"%"}"#.to_vec()),
            ),
            ("form called JSON", Raw::new("POST", path, auth).body("application/json", b"a=1&b=%FF".to_vec())),
            ("NUL body", Raw::new("POST", path, auth).body("application/json", vec![0; 4096])),
            ("odd content type", Raw::new("POST", path, auth).body(";;;=\"\"; boundary", b"{}".to_vec())),
            ("huge query", Raw::new("GET", with_query(path, &b"a=%FF&".repeat(5000)), auth)),
            ("key with no value", Raw::new("GET", with_query(path, b"&&=&=&%&%%&+&=+"), auth)),
        ];
        for (name, request) in cases {
            check(&addr, &format!("{service:?} {name}"), &request).await;
        }
    }
    sandbox.shutdown();
}

/// Ably realtime frames, mutated: protocol messages in JSON and MessagePack (valid ones, with
/// wrong types, unknown actions, huge serials, before anything is attached), garbage, and
/// frames past the size limit. Whatever a socket is sent, the sandbox answers on its other
/// sockets and over HTTP, and never with a 5xx.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ably_realtime_survives_mutated_protocol_messages() {
    use tokio_tungstenite::tungstenite::Message;
    let sandbox = start().await;
    let base = sandbox.base_url(Service::Ably);
    let socket_url = format!("{}/?key={}&format=json", base.replace("http://", "ws://"), credentials::ABLY_KEY);
    let seeds: &[&[u8]] = &[
        br#"{"action":10,"channel":"fuzz","flags":458752,"params":{"rewind":"5"}}"#,
        br#"{"action":15,"channel":"fuzz","msgSerial":0,"messages":[{"name":"a","data":"b","extras":{"headers":{"x":"y"}}}]}"#,
        br#"{"action":14,"channel":"fuzz","msgSerial":1,"presence":[{"action":2,"clientId":"c","data":{"k":[1,2]}}]}"#,
        br#"{"action":17,"auth":{"accessToken":"opsdeck.x.y"}}"#,
        br#"{"action":0,"id":"ping"}"#,
        br#"{"action":10,"channel":"fuzz","channelSerial":"01700000000000-000@x:000"}"#,
        br#"{"action":12,"channel":"fuzz"}"#,
    ];
    let http = reqwest::Client::new();
    fuzz_socket("ably_realtime", &socket_url, &[], &|| http.get(format!("{base}/time")), |rng| {
        let seed = *rng.pick(seeds);
        match rng.below(5) {
            // MessagePack of the (unmutated) message.
            0 => {
                let value: serde_json::Value = serde_json::from_slice(seed).unwrap();
                Message::Binary(rmp_serde::to_vec_named(&value).unwrap().into())
            }
            1 => Message::Binary(mutate(rng, seed).into()),
            // Past the 256 KiB limit: the socket ends, the sandbox does not.
            2 if rng.below(10) == 0 => Message::Text("x".repeat(300 * 1024).into()),
            _ => Message::Text(String::from_utf8_lossy(&mutate(rng, seed)).into_owned().into()),
        }
    })
    .await;
}

/// Opens a socket to `socket_url` (with `headers`) for each iteration and sends it up to seven
/// frames that `frame` makes, reads what comes back until the socket ends or goes quiet (nothing
/// is checked but that the server keeps serving), then checks the service still answers the
/// request `alive` makes with a success.
async fn fuzz_socket(
    target: &str,
    socket_url: &str,
    headers: &[(&'static str, String)],
    alive: &dyn Fn() -> reqwest::RequestBuilder,
    mut frame: impl FnMut(&mut Rng) -> tokio_tungstenite::tungstenite::Message,
) {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    for iteration in 0..iterations() / 3 {
        let mut rng = Rng::new(target, iteration);
        let mut request = socket_url.into_client_request().unwrap();
        for (name, value) in headers {
            request.headers_mut().insert(*name, value.parse().unwrap());
        }
        let Ok((mut ws, _)) = tokio_tungstenite::connect_async(request).await else {
            panic!("iteration {iteration}: {target}'s socket stopped answering");
        };
        for _ in 0..=rng.below(6) {
            if ws.send(frame(&mut rng)).await.is_err() {
                break;
            }
        }
        while let Ok(Some(Ok(_))) = tokio::time::timeout(Duration::from_millis(50), ws.next()).await {}
        drop(ws);
        let answer = alive().send().await.unwrap();
        assert!(answer.status().is_success(), "iteration {iteration}: {target} answered {}", answer.status());
    }
}

/// Coinbase feed frames, mutated: subscribes and unsubscribes (strings and objects, aliases,
/// signed with a stale or good signature, huge product lists), garbage, binary frames, and
/// frames past the 64 KiB limit, while the market moves. Whatever a socket is sent, the feed
/// keeps serving the next socket, REST keeps answering, and no socket is kept open by what it
/// sent (each ends when its client goes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coinbase_feed_survives_mutated_subscriptions() {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    let sandbox = start().await;
    let base = sandbox.base_url(Service::Coinbase);
    let socket_url = base.replace("http://", "ws://");
    let timestamp =
        format!("{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs());
    let signature =
        opsdeck::sandbox::coinbase::sign(credentials::COINBASE_SECRET, &timestamp, "GET", "/users/self/verify", b"")
            .unwrap();
    let signed = format!(
        r#"{{"type":"subscribe","product_ids":["BTC-USD","ETH-USD"],"channels":["full","user","level2"],"key":"{}","passphrase":"{}","timestamp":"{timestamp}","signature":"{signature}"}}"#,
        credentials::COINBASE_KEY,
        credentials::COINBASE_PASSPHRASE
    );
    let many = format!(
        r#"{{"type":"subscribe","product_ids":[{}],"channels":["ticker","heartbeat"]}}"#,
        ["\"BTC-USD\"", "\"X\""].repeat(1500).join(",")
    );
    let seeds: Vec<&[u8]> = vec![
        br#"{"type":"subscribe","product_ids":["BTC-USD"],"channels":["heartbeat","ticker",{"name":"matches","product_ids":["ETH-USD"]}]}"#,
        br#"{"type":"subscribe","channels":[{"name":"level2_batch","product_ids":["SOL-USD"]},{"name":"status"},"ticker_1000"]}"#,
        br#"{"type":"unsubscribe","channels":["heartbeat",{"name":"ticker","product_ids":["BTC-USD"]}]}"#,
        br#"{"type":"subscribe","product_ids":["NOPE-USD",""],"channels":["level2_50","matches"]}"#,
        br#"{"type":"subscribe","product_ids":["BTC-USD"],"channels":["full"],"key":"k","signature":"s","passphrase":"p","timestamp":1}"#,
        signed.as_bytes(),
        many.as_bytes(),
    ];
    let http = reqwest::Client::new();
    fuzz_socket("coinbase_feed", &socket_url, &[], &|| http.get(format!("{base}/time")), |rng| {
        let seed = *rng.pick(&seeds);
        match rng.below(5) {
            0 => Message::Binary(seed.to_vec().into()),
            1 => Message::Binary(mutate(rng, seed).into()),
            // Past the 64 KiB limit: the socket ends, the feed does not.
            2 if rng.below(10) == 0 => Message::Text("[".repeat(70 * 1024).into()),
            _ => Message::Text(String::from_utf8_lossy(&mutate(rng, seed)).into_owned().into()),
        }
    })
    .await;
    // A plain subscriber after all that is answered as the first one was.
    let (mut ws, _) = tokio_tungstenite::connect_async(socket_url.as_str()).await.unwrap();
    let subscribe = r#"{"type":"subscribe","product_ids":["BTC-USD"],"channels":["heartbeat"]}"#;
    ws.send(Message::Text(subscribe.into())).await.unwrap();
    let Some(Ok(Message::Text(answer))) = ws.next().await else { panic!("the feed answers a subscribe") };
    assert!(answer.contains(r#""type":"subscriptions""#), "{answer}");
}

/// Deepgram live streams, mutated: audio frames (the simulator's own speech, a tone WAV, their
/// bytes mutated or cut anywhere, frames past the 4 MiB limit), control messages (valid, bad
/// JSON, unknown types, deep nesting, `Configure` with odd keyterms), in any order (audio after
/// `CloseStream`, `Finalize` before any audio), on raw and container streams. Whatever a stream
/// is sent, the next stream is served, and REST answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deepgram_live_survives_mutated_streams() {
    use tokio_tungstenite::tungstenite::Message;
    let sandbox = start().await;
    let base = sandbox.base_url(Service::Deepgram);
    let http = reqwest::Client::new();
    let speech = http
        .post(format!("{base}/v1/speak?encoding=linear16&sample_rate=8000"))
        .header("Authorization", format!("Token {}", credentials::DEEPGRAM_KEY))
        .header("Content-Type", "application/json")
        .body(r#"{"text":"fuzzing the live listener"}"#)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
        .to_vec();
    let tone = common::tone_wav(0.5, 8000, 2);
    let controls: &[&[u8]] = &[
        br#"{"type":"KeepAlive"}"#,
        br#"{"type":"Finalize"}"#,
        br#"{"type":"CloseStream"}"#,
        br#"{"type":"Configure","keyterms":["opsdeck","live"],"features":{"punctuate":true,"diarize":true}}"#,
        br#"{"type":"Configure","keyterms":[1,null,{"a":[]}]}"#,
    ];
    let headers = [("Authorization", format!("Token {}", credentials::DEEPGRAM_KEY))];
    let alive = || {
        http.get(format!("{base}/v1/models")).header("Authorization", format!("Token {}", credentials::DEEPGRAM_KEY))
    };
    let socket = base.replace("http://", "ws://");
    for (target, query) in [
        ("deepgram_live_container", "interim_results=true&vad_events=true&utterance_end_ms=1000"),
        ("deepgram_live_raw", "encoding=linear16&sample_rate=8000&channels=2&interim_results=true&endpointing=5"),
    ] {
        let url = format!("{socket}/v1/listen?{query}");
        fuzz_socket(target, &url, &headers, &alive, |rng| match rng.below(7) {
            0 => Message::Binary(speech.clone().into()),
            1 => Message::Binary(mutate(rng, &speech[..speech.len().min(2048)]).into()),
            2 => {
                let cut = rng.below(tone.len());
                Message::Binary(tone[..cut].to_vec().into())
            }
            // Past the 4 MiB limit: the stream ends, the service does not.
            3 if rng.below(10) == 0 => Message::Binary(vec![0u8; (4 << 20) + 1].into()),
            4 if rng.below(4) == 0 => Message::Text(format!("{}{}", "[".repeat(5000), "]".repeat(5000)).into()),
            _ => {
                let seed = *rng.pick(controls);
                Message::Text(String::from_utf8_lossy(&mutate(rng, seed)).into_owned().into())
            }
        })
        .await;
    }
}
