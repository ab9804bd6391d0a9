//! Every Coinbase Exchange operation through opsdeck's client against the in-process simulator:
//! market data without a key, accounts with their holds and ledgers, orders placed, filled,
//! listed and cancelled, fills with fees, transfers, conversions, profiles and fees; signing,
//! timestamp and permission errors in the exchange's own words; cursor paging walked with the
//! client's pagination; and no state changed by a refused request.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use opsdeck::catalog::Service;
use opsdeck::client::{self, pagination, CallError, Credentials, HttpSettings, Response, Secret, Target, Values};
use opsdeck::sandbox::credentials;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

mod common;

struct Coinbase(common::Simulated);

impl std::ops::Deref for Coinbase {
    type Target = common::Simulated;
    fn deref(&self) -> &common::Simulated {
        &self.0
    }
}

fn with_key(target: &Target, key: &str, secret: &str, passphrase: &str) -> Target {
    Target {
        credentials: Credentials::Coinbase {
            key: key.into(),
            secret: Secret::new(secret),
            passphrase: Secret::new(passphrase),
        },
        ..target.clone()
    }
}

fn api_error(result: Result<Response, CallError>) -> client::ApiError {
    match result {
        Err(CallError::Api(e)) => e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn dec(value: &Value) -> f64 {
    value.as_str().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("a decimal string: {value}"))
}

impl Coinbase {
    async fn start() -> Coinbase {
        Coinbase(common::Simulated::start(Service::Coinbase).await)
    }

    async fn call(&self, op: &str, params: &[(&str, &str)]) -> Result<Response, CallError> {
        self.0.send(&self.target, op, params, None).await
    }

    async fn json(&self, op: &str, params: &[(&str, &str)]) -> Value {
        let response = self.call(op, params).await.unwrap_or_else(|e| panic!("{op}: {e}"));
        serde_json::from_slice(&response.body).expect("JSON body")
    }

    async fn account(&self, currency: &str) -> Value {
        let accounts = self.json("accounts_list", &[]).await;
        accounts.as_array().unwrap().iter().find(|a| a["currency"] == currency).unwrap().clone()
    }

    /// A raw request with hand-made headers, for what the client would never send.
    async fn raw(&self, method: reqwest::Method, path: &str, headers: &[(&str, String)]) -> (u16, Value) {
        let url = format!("{}{path}", self.sandbox.base_url(Service::Coinbase));
        let mut request = self.http.request(method, url);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, serde_json::from_slice(&response.bytes().await.unwrap()).unwrap())
    }
}

fn now_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64()
}

#[tokio::test]
async fn market_data_needs_no_key_and_has_the_exchange_shapes() {
    let cb = Coinbase::start().await;
    let products = cb.json("products_list", &[]).await;
    let btc = products.as_array().unwrap().iter().find(|p| p["id"] == "BTC-USD").unwrap();
    assert_eq!(
        (btc["quote_increment"].as_str(), btc["base_increment"].as_str()),
        (Some("0.01000000"), Some("0.00000001"))
    );
    assert_eq!(cb.json("products_get", &[("product_id", "btc-usd")]).await["id"], "BTC-USD", "ids match in any case");

    // Without any credentials at all, as the exchange serves market data.
    let (status, ticker) = cb.raw(reqwest::Method::GET, "/products/BTC-USD/ticker", &[]).await;
    assert_eq!(status, 200);
    assert!(dec(&ticker["bid"]) < dec(&ticker["ask"]), "{ticker}");
    assert!(ticker["trade_id"].is_u64());

    let book = cb.json("products_get_order_book", &[("product_id", "BTC-USD"), ("level", "2")]).await;
    let bids = book["bids"].as_array().unwrap();
    let asks = book["asks"].as_array().unwrap();
    assert!(bids.len() > 5 && asks.len() > 5);
    assert!(bids.windows(2).all(|w| dec(&w[0][0]) > dec(&w[1][0])), "bids high to low");
    assert!(asks.windows(2).all(|w| dec(&w[0][0]) < dec(&w[1][0])), "asks low to high");
    assert!(dec(&bids[0][0]) < dec(&asks[0][0]), "not crossed");
    let level1 = cb.json("products_get_order_book", &[("product_id", "BTC-USD"), ("level", "1")]).await;
    assert_eq!(level1["bids"].as_array().unwrap().len(), 1);
    let level3 = cb.json("products_get_order_book", &[("product_id", "BTC-USD"), ("level", "3")]).await;
    assert!(level3["asks"][0][2].as_str().is_some_and(|id| id.len() == 36), "level 3 names each order");

    let stats = cb.json("products_get_stats", &[("product_id", "ETH-USD")]).await;
    assert!(dec(&stats["low"]) <= dec(&stats["last"]) && dec(&stats["last"]) <= dec(&stats["high"]), "{stats}");
    let candles = cb.json("products_get_candles", &[("product_id", "ETH-USD"), ("granularity", "3600")]).await;
    let rows = candles.as_array().unwrap();
    assert!(rows.len() >= 250, "{} hourly candles", rows.len());
    assert!(rows.windows(2).all(|w| w[0][0].as_i64() > w[1][0].as_i64()), "newest first");
    assert!(rows.iter().all(|r| r.as_array().unwrap().len() == 6 && r[1].as_f64() <= r[2].as_f64()));
    let too_many = api_error(
        cb.call(
            "products_get_candles",
            &[
                ("product_id", "ETH-USD"),
                ("granularity", "60"),
                ("start", "2026-01-01T00:00:00Z"),
                ("end", "2026-01-02T00:00:00Z"),
            ],
        )
        .await,
    );
    assert_eq!(too_many.status, 400);
    assert!(too_many.message.contains("exceeds 300"), "{}", too_many.message);
    let currencies = cb.json("currencies_list", &[]).await;
    assert!(currencies.as_array().unwrap().iter().any(|c| c["id"] == "USDC" && c["details"]["type"] == "crypto"));
    // opsdeck sends market data without the key: no credential goes where none is needed.
    for (op, params) in [("products_get_ticker", vec![("product_id", "BTC-USD")]), ("accounts_list", vec![])] {
        let values: Values = params.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let mut request = client::build(Service::Coinbase.operation(op).unwrap(), &values, None, &cb.target).unwrap();
        client::auth::authorize(&mut request, &cb.target.credentials).unwrap();
        let signed = request.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("cb-access-key"));
        assert_eq!(signed, op == "accounts_list", "{op}");
    }
    // What ccxt's fetch_tickers reads: every product's day in hourly [time, low, high, open, close].
    let (status, sparks) = cb.raw(reqwest::Method::GET, "/products/spark-lines", &[]).await;
    assert_eq!(status, 200);
    let btc_day = sparks["BTC-USD"].as_array().unwrap();
    assert!(btc_day.len() >= 24 && btc_day.iter().all(|r| r.as_array().unwrap().len() == 5), "{btc_day:?}");
    assert_eq!(sparks.as_object().unwrap().len(), products.as_array().unwrap().len());
    let unknown = api_error(cb.call("products_get", &[("product_id", "FOO-BAR")]).await);
    assert_eq!((unknown.status, unknown.message.as_str()), (404, "NotFound"));
}

#[tokio::test]
async fn the_market_moves_while_you_watch() {
    let cb = Coinbase::start().await;
    let first = cb.json("products_get_trades", &[("product_id", "BTC-USD"), ("limit", "1")]).await;
    let first_id = first[0]["trade_id"].as_u64().unwrap();
    // The sandbox clock moves a minute: sixty market steps.
    cb.sandbox.clock().advance(60_000);
    let later = cb.json("products_get_trades", &[("product_id", "BTC-USD"), ("limit", "1")]).await;
    assert!(later[0]["trade_id"].as_u64().unwrap() > first_id, "new trades on the tape");
}

#[tokio::test]
async fn an_order_holds_funds_fills_and_releases_the_rest() {
    let cb = Coinbase::start().await;
    let usd = cb.account("USD").await;
    let (balance, hold, available) = (dec(&usd["balance"]), dec(&usd["hold"]), dec(&usd["available"]));
    assert!((balance - hold - available).abs() < 1e-9, "balance = available + hold");

    // A limit buy far under the market rests and holds price × size × (1 + taker fee).
    let fees = cb.json("fees_get", &[]).await;
    let taker = dec(&fees["taker_fee_rate"]);
    let oid = "3b7c0e1a-0d1e-4f7a-9a2b-6c1d2e3f4a5b";
    let placed = cb
        .json(
            "orders_create",
            &[
                ("product_id", "BTC-USD"),
                ("side", "buy"),
                ("type", "limit"),
                ("price", "10000.00"),
                ("size", "0.01"),
                ("client_oid", oid),
            ],
        )
        .await;
    assert_eq!(placed["status"], "pending", "the exchange answers before matching");
    let id = placed["id"].as_str().unwrap().to_owned();
    let open = cb.json("orders_get", &[("order_id", &id)]).await;
    assert_eq!(open["status"], "open");
    assert_eq!(cb.json("orders_get", &[("order_id", &format!("client:{oid}"))]).await["id"], id.as_str());
    let held = dec(&cb.account("USD").await["hold"]) - hold;
    assert!((held - 100.0 * (1.0 + taker)).abs() < 1e-6, "held {held}");
    let account_id = usd["id"].as_str().unwrap();
    assert_eq!(cb.json("accounts_get", &[("account_id", account_id)]).await["currency"], "USD");
    let missing = api_error(cb.call("accounts_get", &[("account_id", "6f1ee6a4-8c3a-4d8c-9e51-4a3b7e0d2c11")]).await);
    assert_eq!((missing.status, missing.message.as_str()), (404, "NotFound"));
    let holds = cb.json("accounts_get_holds", &[("account_id", account_id)]).await;
    assert!(holds.as_array().unwrap().iter().any(|h| h["ref"] == id.as_str() && h["type"] == "order"));
    let listed = cb.json("orders_list", &[("product_id", "BTC-USD")]).await;
    assert!(listed.as_array().unwrap().iter().any(|o| o["id"] == id.as_str()));

    // Cancelled: the hold goes; a second cancel finds nothing (purged with no fills).
    assert_eq!(cb.json("orders_cancel", &[("order_id", &id)]).await, json!(id));
    assert!((dec(&cb.account("USD").await["hold"]) - hold).abs() < 1e-9);
    let again = api_error(cb.call("orders_cancel", &[("order_id", &id)]).await);
    assert_eq!((again.status, again.message.as_str()), (404, "NotFound"));

    // A market buy by funds fills at once, as taker: the fill's fee, and the balances moved by
    // exactly what the fills say.
    let btc_before = dec(&cb.account("BTC").await["balance"]);
    let usd_before = dec(&cb.account("USD").await["balance"]);
    let market = cb
        .json("orders_create", &[("product_id", "BTC-USD"), ("side", "buy"), ("type", "market"), ("funds", "1000.00")])
        .await;
    let market_id = market["id"].as_str().unwrap();
    let done = cb.json("orders_get", &[("order_id", market_id)]).await;
    assert_eq!((done["status"].as_str(), done["done_reason"].as_str()), (Some("done"), Some("filled")));
    let fills = cb.json("fills_list", &[("order_id", market_id)]).await;
    let fills = fills.as_array().unwrap();
    assert!(!fills.is_empty() && fills.iter().all(|f| f["liquidity"] == "T" && dec(&f["fee"]) > 0.0));
    let size: f64 = fills.iter().map(|f| dec(&f["size"])).sum();
    let cost: f64 = fills.iter().map(|f| dec(&f["price"]) * dec(&f["size"]) + dec(&f["fee"])).sum();
    assert!((dec(&cb.account("BTC").await["balance"]) - btc_before - size).abs() < 1e-8);
    assert!((usd_before - dec(&cb.account("USD").await["balance"]) - cost).abs() < 1e-6);
    assert!(cost <= 1000.0 + 1e-9, "funds include the fee: {cost}");
    let filled_again = api_error(cb.call("orders_cancel", &[("order_id", market_id)]).await);
    assert_eq!((filled_again.status, filled_again.message.as_str()), (400, "Order already done"));

    // The ledger has the match and the fee with the balance after each.
    let ledger = cb.json("accounts_get_ledger", &[("account_id", account_id)]).await;
    let entries = ledger.as_array().unwrap();
    assert!(entries.iter().any(|e| e["type"] == "fee" && e["details"]["order_id"] == market_id));
    assert!(entries.iter().any(|e| e["type"] == "match" && e["details"]["product_id"] == "BTC-USD"));
    assert_eq!(
        dec(&entries[0]["balance"]),
        dec(&cb.account("USD").await["balance"]),
        "the newest entry's balance is the balance"
    );
}

#[tokio::test]
async fn refused_orders_use_the_exchange_messages_and_change_nothing() {
    let cb = Coinbase::start().await;
    let before = cb.json("accounts_list", &[]).await;
    let open_before = cb.json("orders_list", &[]).await;
    for (params, status, message) in [
        (vec![("price", "100.001"), ("size", "0.1")], 400, "price is too accurate. Smallest unit is 0.01000000"),
        (vec![("price", "100.00"), ("size", "0.000000001")], 400, "size is too accurate. Smallest unit is 0.00000001"),
        (vec![("price", "90000.00"), ("size", "100")], 400, "Insufficient funds"),
    ] {
        let mut all = vec![("product_id", "BTC-USD"), ("side", "buy")];
        all.extend(params);
        let e = api_error(cb.call("orders_create", &all).await);
        assert_eq!((e.status, e.message.as_str()), (status, message));
    }
    let unknown = api_error(
        cb.call("orders_create", &[("product_id", "FOO-BAR"), ("side", "buy"), ("price", "1.00"), ("size", "1")]).await,
    );
    assert_eq!(unknown.status, 400);
    let after = cb.json("accounts_list", &[]).await;
    let holds = |v: &Value| {
        v.as_array().unwrap().iter().map(|a| (a["currency"].clone(), a["hold"].clone())).collect::<Vec<_>>()
    };
    assert_eq!(holds(&before), holds(&after), "no hold placed by a refused order");
    assert_eq!(open_before.as_array().unwrap().len(), cb.json("orders_list", &[]).await.as_array().unwrap().len());
    let bad_id = api_error(cb.call("orders_get", &[("order_id", "not-an-id")]).await);
    assert_eq!((bad_id.status, bad_id.message.as_str()), (400, "Invalid order id"));
}

#[tokio::test]
async fn cancel_all_cancels_one_product_or_every_product() {
    let cb = Coinbase::start().await;
    for price in ["1000.00", "1001.00"] {
        cb.json("orders_create", &[("product_id", "ETH-USD"), ("side", "buy"), ("price", price), ("size", "0.1")])
            .await;
    }
    let open = cb.json("orders_list", &[("product_id", "ETH-USD")]).await;
    let eth_open = open.as_array().unwrap().len();
    let cancelled = cb.json("orders_cancel_all", &[("product_id", "ETH-USD")]).await;
    assert_eq!(cancelled.as_array().unwrap().len(), eth_open);
    assert!(cb.json("orders_list", &[("product_id", "ETH-USD")]).await.as_array().unwrap().is_empty());
    assert!(!cb.json("orders_list", &[]).await.as_array().unwrap().is_empty(), "other products' orders stay");
    cb.json("orders_cancel_all", &[]).await;
    assert_eq!(
        cb.json("orders_cancel_all", &[]).await,
        json!([]),
        "nothing left: an empty list, as the Node SDK loops on"
    );
    let usd = cb.account("USD").await;
    assert_eq!(dec(&usd["hold"]), 0.0, "every order hold released");
}

#[tokio::test]
async fn transfers_conversions_profiles_and_fees() {
    let cb = Coinbase::start().await;
    let (status, wallets) = {
        let r = cb.raw(reqwest::Method::GET, "/coinbase-accounts", &[]).await;
        (r.0, r.1)
    };
    assert_eq!(status, 400, "private routes need the key headers: {wallets}");
    let profiles = cb.json("profiles_list", &[]).await;
    let profiles = profiles.as_array().unwrap();
    assert_eq!(profiles.len(), 2);
    assert!(profiles.iter().any(|p| p["name"] == "default" && p["is_default"] == true));

    // A deposit from the Coinbase USDC wallet arrives at once.
    let wallets = signed_get(&cb, "/coinbase-accounts").await;
    let usdc_wallet = wallets.as_array().unwrap().iter().find(|w| w["currency"] == "USDC").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let usdc_before = dec(&cb.account("USDC").await["balance"]);
    let deposit = cb
        .json("transfers_deposit", &[("amount", "250.00"), ("currency", "USDC"), ("coinbase_account_id", &usdc_wallet)])
        .await;
    assert_eq!(deposit["currency"], "USDC");
    assert!((dec(&cb.account("USDC").await["balance"]) - usdc_before - 250.0).abs() < 1e-9);

    // A crypto withdrawal holds its funds until the network confirms it.
    let malformed = api_error(
        cb.call("transfers_withdraw", &[("amount", "0.1"), ("currency", "ETH"), ("crypto_address", "0x12")]).await,
    );
    assert_eq!((malformed.status, malformed.message.as_str()), (400, "invalid crypto_address"));
    let eth = cb.account("ETH").await;
    let withdrawal = cb
        .json(
            "transfers_withdraw",
            &[("amount", "0.1"), ("currency", "ETH"), ("crypto_address", "0x52908400098527886E0F7030069857D2E4169EE7")],
        )
        .await;
    let held = dec(&cb.account("ETH").await["hold"]) - dec(&eth["hold"]);
    assert!((held - 0.1).abs() < 1e-9, "held {held}");
    let transfers = cb.json("transfers_list", &[("type", "withdraw")]).await;
    let listed = transfers.as_array().unwrap().iter().find(|t| t["id"] == withdrawal["id"]).unwrap().clone();
    assert_eq!(listed["completed_at"], Value::Null, "pending until confirmed");
    cb.sandbox.clock().advance(6 * 60_000);
    let transfers = cb.json("transfers_list", &[("type", "withdraw")]).await;
    let listed = transfers.as_array().unwrap().iter().find(|t| t["id"] == withdrawal["id"]).unwrap().clone();
    assert!(listed["completed_at"].is_string(), "{listed}");
    assert!(listed["details"]["crypto_transaction_hash"].is_string());

    let conversion = cb.json("conversions_create", &[("from", "USD"), ("to", "USDC"), ("amount", "100.00")]).await;
    assert_eq!((conversion["from"].as_str(), conversion["to"].as_str()), (Some("USD"), Some("USDC")));
    let odd = api_error(cb.call("conversions_create", &[("from", "USD"), ("to", "BTC"), ("amount", "1.00")]).await);
    assert_eq!(odd.status, 400);
    let fees = cb.json("fees_get", &[]).await;
    assert!(dec(&fees["maker_fee_rate"]) <= dec(&fees["taker_fee_rate"]));
    assert!(fees["usd_volume"].is_string());
}

async fn signed_get(cb: &Coinbase, path: &str) -> Value {
    let timestamp = format!("{:.3}", now_s());
    let sign = client::auth::coinbase_signature(credentials::COINBASE_SECRET, &timestamp, "GET", path, b"").unwrap();
    let (status, body) = cb
        .raw(
            reqwest::Method::GET,
            path,
            &[
                ("cb-access-key", credentials::COINBASE_KEY.to_owned()),
                ("cb-access-sign", sign),
                ("cb-access-timestamp", timestamp),
                ("cb-access-passphrase", credentials::COINBASE_PASSPHRASE.to_owned()),
            ],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn signatures_passphrases_timestamps_and_permissions() {
    let cb = Coinbase::start().await;
    let secret = credentials::COINBASE_SECRET;
    let pass = credentials::COINBASE_PASSPHRASE;
    for (target, message) in [
        (with_key(&cb.target, "nobody", secret, pass), "Invalid API Key"),
        (with_key(&cb.target, credentials::COINBASE_KEY, secret, "wrong"), "Invalid Passphrase"),
        (with_key(&cb.target, credentials::COINBASE_KEY, "d3Jvbmc=", pass), "invalid signature"),
    ] {
        let e = api_error(cb.0.send(&target, "accounts_list", &[], None).await);
        assert_eq!((e.status, e.message.as_str()), (401, message));
    }
    // A timestamp 31 s old is expired; 29 s is not.
    for (age, status) in [(31.0, 401), (29.0, 200)] {
        let timestamp = format!("{:.3}", now_s() - age);
        let sign = client::auth::coinbase_signature(secret, &timestamp, "GET", "/accounts", b"").unwrap();
        let (got, body) = cb
            .raw(
                reqwest::Method::GET,
                "/accounts",
                &[
                    ("CB-ACCESS-KEY", credentials::COINBASE_KEY.to_owned()),
                    ("CB-ACCESS-SIGN", sign),
                    ("CB-ACCESS-TIMESTAMP", timestamp),
                    ("CB-ACCESS-PASSPHRASE", pass.to_owned()),
                ],
            )
            .await;
        assert_eq!(got, status, "{age} s: {body}");
        if status == 401 {
            assert_eq!(body, json!({"message": "request timestamp expired"}));
        }
    }
    // The view-only key reads but cannot trade; the second profile's key cannot move funds.
    let viewer = with_key(&cb.target, credentials::COINBASE_VIEW_KEY, secret, pass);
    assert!(cb.0.send(&viewer, "accounts_list", &[], None).await.is_ok());
    let trade = api_error(
        cb.0.send(
            &viewer,
            "orders_create",
            &[("product_id", "BTC-USD"), ("side", "buy"), ("price", "100.00"), ("size", "0.1")],
            None,
        )
        .await,
    );
    assert_eq!((trade.status, trade.message.as_str()), (403, "Forbidden"));
    let bot = with_key(&cb.target, credentials::COINBASE_BOT_KEY, secret, pass);
    let move_funds = api_error(
        cb.0.send(&bot, "transfers_withdraw", &[("amount", "1"), ("currency", "USD"), ("crypto_address", "x")], None)
            .await,
    );
    assert_eq!(move_funds.status, 403);
    // A key sees its own profile only: the bot's accounts are not the default profile's.
    let mine = cb.json("accounts_list", &[]).await;
    let bots: Value = serde_json::from_slice(&cb.0.send(&bot, "accounts_list", &[], None).await.unwrap().body).unwrap();
    assert_ne!(mine[0]["profile_id"], bots[0]["profile_id"]);
    let other_profile = bots[0]["profile_id"].as_str().unwrap();
    let denied = api_error(cb.call("orders_list", &[("profile_id", other_profile)]).await);
    assert_eq!((denied.status, denied.message.as_str()), (403, "Forbidden"));
    // The key's own profile in the query and another in the body: refused, not placed in the
    // key's profile.
    let mine_id = mine[0]["profile_id"].as_str().unwrap();
    let op = Service::Coinbase.operation("orders_create").unwrap();
    let values: Values = [
        ("product_id", "BTC-USD"),
        ("side", "buy"),
        ("price", "100.00"),
        ("size", "0.1"),
        ("profile_id", other_profile),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    let mut request = client::build(op, &values, None, &cb.target).unwrap();
    request.url = format!("{}?profile_id={mine_id}", request.url);
    let open_before = cb.json("orders_list", &[]).await.as_array().unwrap().len();
    let mixed = client::request::execute(
        &cb.http,
        &request,
        &cb.target.credentials,
        &HttpSettings::default(),
        &CancellationToken::new(),
    )
    .await;
    let conflict = api_error(mixed);
    assert_eq!(conflict.status, 400);
    assert!(conflict.message.contains("profile_id"), "{}", conflict.message);
    assert_eq!(cb.json("orders_list", &[]).await.as_array().unwrap().len(), open_before, "nothing was placed");
}

#[tokio::test]
async fn cursor_paging_walks_the_tape_with_the_clients_pagination() {
    let cb = Coinbase::start().await;
    cb.json("products_get_trades", &[("product_id", "BTC-USD")]).await;
    let op = Service::Coinbase.operation("products_get_trades").unwrap();
    let values: Values =
        [("product_id", "BTC-USD"), ("limit", "50")].iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let mut request = client::build(op, &values, None, &cb.target).unwrap();
    let mut ids = Vec::new();
    for _ in 0..4 {
        let response = client::request::execute(
            &cb.http,
            &request,
            &cb.target.credentials,
            &HttpSettings::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        let page: Value = serde_json::from_slice(&response.body).unwrap();
        let page_ids: Vec<u64> = page.as_array().unwrap().iter().map(|t| t["trade_id"].as_u64().unwrap()).collect();
        assert_eq!(page_ids.len(), 50);
        assert_eq!(response.header("cb-before").unwrap(), page_ids[0].to_string());
        ids.extend(page_ids);
        request = pagination::next_page(op.paging, &request, &response).unwrap().expect("a next page");
    }
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first, no repeats across pages");

    // The last page carries no CB-AFTER: the fills of one order fit one page.
    let fills = cb.call("fills_list", &[("product_id", "BTC-USD")]).await.unwrap();
    assert!(fills.header("cb-after").is_none());
    // before= asks for newer records than the cursor.
    let newest = ids[0];
    let older = ids[150];
    assert!(older < newest);
    let newer: Value = cb
        .json("products_get_trades", &[("product_id", "BTC-USD"), ("before", &older.to_string()), ("limit", "10")])
        .await;
    let newer_ids: Vec<u64> = newer.as_array().unwrap().iter().map(|t| t["trade_id"].as_u64().unwrap()).collect();
    assert_eq!(newer_ids.len(), 10);
    assert!(newer_ids.iter().all(|id| *id > older && *id <= newest + 1000));
    assert_eq!(newer_ids, ids[140..150], "the ten just newer than the cursor, newest first");
}

#[tokio::test]
async fn the_control_port_pauses_and_speeds_the_market_and_audits_funds() {
    let cb = Coinbase::start().await;
    let control = format!("{}/coinbase/market", cb.sandbox.control_url());
    let post = |body: &'static str| cb.http.post(control.clone()).body(body).send();
    let read = |response: reqwest::Response| async move {
        let status = response.status().as_u16();
        (status, serde_json::from_slice::<Value>(&response.bytes().await.unwrap()).unwrap())
    };
    cb.json("products_get_ticker", &[("product_id", "BTC-USD")]).await;
    let (status, paused) = read(post(r#"{"paused": true}"#).await.unwrap()).await;
    assert_eq!((status, paused["paused"].as_bool()), (200, Some(true)));
    let tape = |v: &Value| v[0]["trade_id"].as_u64().unwrap();
    let before = tape(&cb.json("products_get_trades", &[("product_id", "BTC-USD"), ("limit", "1")]).await);
    cb.sandbox.clock().advance(120_000);
    let still = tape(&cb.json("products_get_trades", &[("product_id", "BTC-USD"), ("limit", "1")]).await);
    assert_eq!(still, before, "a paused market trades nothing, whatever the clock does");
    let (_, resumed) = read(post(r#"{"paused": false, "rate": 10}"#).await.unwrap()).await;
    assert_eq!((resumed["paused"].as_bool(), resumed["interval_ms"].as_i64()), (Some(false), Some(100)));
    cb.sandbox.clock().advance(5_000);
    let (_, after) = read(cb.http.get(control.clone()).send().await.unwrap()).await;
    assert!(after["steps"].as_u64().unwrap() >= resumed["steps"].as_u64().unwrap() + 45, "ten steps a second: {after}");
    assert!(after["funds"].as_array().unwrap().iter().all(|f| f["balanced"] == true), "{after}");
    for bad in [r#"{"rate": 0}"#, r#"{"paused": "yes"}"#, r#"{"speed": 2}"#, "not json"] {
        let (status, body) = read(post(bad).await.unwrap()).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    }
}

#[tokio::test]
async fn a_market_order_that_fills_nothing_is_still_answered_with_the_order() {
    let cb = Coinbase::start().await;
    let paused = cb.http.post(format!("{}/coinbase/market", cb.sandbox.control_url())).body(r#"{"paused": true}"#);
    assert!(paused.send().await.unwrap().status().is_success());
    // Our own sell under the best ask: a market buy of ours meets it first, and self-trade
    // prevention (cancel newest) cancels the buy with nothing filled.
    let book = cb.json("products_get_order_book", &[("product_id", "BTC-USD")]).await;
    let ask: f64 = dec(&book["asks"][0][0]);
    let bid: f64 = dec(&book["bids"][0][0]);
    let price = format!("{:.2}", (ask + bid) / 2.0);
    let sell = json!({"product_id": "BTC-USD", "side": "sell", "type": "limit", "price": price, "size": "0.001"});
    cb.0.send(&cb.target, "orders_create", &[], Some(sell)).await.unwrap();
    let buy = json!({"product_id": "BTC-USD", "side": "buy", "type": "market", "size": "0.001", "stp": "cn"});
    let answer = cb.0.send(&cb.target, "orders_create", &[], Some(buy)).await.expect("the order, not 404");
    let order: Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!((order["type"].as_str(), order["side"].as_str()), (Some("market"), Some("buy")), "{order}");
    let id = order["id"].as_str().unwrap();
    // Cancelled with nothing filled, it is gone afterwards, as on the exchange.
    let gone = api_error(cb.call("orders_get", &[("order_id", id)]).await);
    assert_eq!(gone.status, 404);
}
