//! The Coinbase Exchange simulator (wire facts: `shared/api/coinbase-exchange.md`): every
//! operation of the catalog and the related routes the SDKs call (`/time`, `/currencies/{id}`,
//! `/conversions`, `/coinbase-accounts`, `/payment-methods`, the other deposit and withdrawal
//! variants), over a matching engine per product and a background market that moves on the
//! sandbox clock.
//!
//! Layout: `catalog` (products, currencies, fee tiers, address forms), `book` (one product's
//! book), `state` (accounts, holds, ledgers, orders, and the funds primitives), `orders` (order
//! rules and matching), `market` (candles, stats, the simulated traders), `transfers`
//! (deposits, withdrawals, conversions), `auth` (signatures and permissions), `wire` (JSON),
//! `seed`, `errors`. This file reads each request once, signs it off, routes it and pages it.

mod auth;
mod book;
mod catalog;
mod errors;
mod events;
mod feed;
mod feed_wire;
mod fixed;
mod hub;
mod journal;
mod market;
mod orders;
mod seed;
mod state;
mod transfers;
mod wire;

#[cfg(test)]
mod tests;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::to_bytes;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use rust_decimal::Decimal;
use serde_json::{json, Map, Value};

pub use self::auth::sign;
use self::auth::{Caller, Permission};
use self::book::Side;
use self::catalog::{CURRENCIES, PRODUCTS};
pub use self::errors::CbError;
use self::state::{MarketSettings, State, Status};
use self::transfers::Endpoint;
use super::request::Query;
use super::timeline::{self, Due, Engine, Timeline};
use super::ws::Sockets;
use super::{clock, errors as sandbox_errors, Platform, Simulator};
use crate::catalog::Service;

/// Bodies larger than this are refused with 413; an order is a few hundred bytes.
const MAX_BODY: usize = 64 * 1024;
/// Default and largest page of a cursor-paged list.
const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 1000;

/// The Coinbase Exchange simulator.
pub struct CoinbaseSimulator {
    shared: Arc<Shared>,
}

struct Shared {
    seed: u64,
    /// Seeded times are relative to this moment, so a reset gives back what start-up showed.
    anchor_ms: i64,
    state: Mutex<State>,
    engine: Engine,
    feed: Feed,
}

/// The WebSocket feed's sockets and its hub's inbox.
struct Feed {
    sockets: Sockets,
    hub: std::sync::mpsc::Sender<events::Inbox>,
    next_conn: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state with every due step made to happen.
    fn current(&self) -> MutexGuard<'_, State> {
        let mut state = self.lock();
        state.run_due(self.engine.clock.now_ms());
        state
    }
}

impl CoinbaseSimulator {
    pub fn new(platform: &Platform) -> CoinbaseSimulator {
        let anchor_ms = platform.clock.now_ms();
        let settings = MarketSettings { paused: false, rate: 1.0 };
        let shared = Arc::new_cyclic(|weak| Shared {
            seed: platform.seed,
            anchor_ms,
            state: Mutex::new(seed::seeded(platform.seed, anchor_ms, settings)),
            engine: Engine::new(platform),
            feed: Feed {
                sockets: Sockets::new(feed::LIMITS, platform.stop.clone()),
                hub: hub::spawn(weak.clone()),
                next_conn: AtomicU64::new(1),
            },
        });
        timeline::spawn(&shared);
        CoinbaseSimulator { shared }
    }
}

impl Drop for CoinbaseSimulator {
    fn drop(&mut self) {
        self.shared.engine.stop.cancel();
    }
}

impl Timeline for Shared {
    type Origin = ();

    fn engine(&self) -> &Engine {
        &self.engine
    }

    fn due(&self, now_ms: i64) -> Due<()> {
        let mut state = self.lock();
        state.run_due(now_ms);
        Due { posts: Vec::new(), next_ms: state.next_due() }
    }

    fn answered(&self, _answers: Vec<((), super::outbox::Delivery, u16)>, _at_ms: i64) {}
}

impl Simulator for CoinbaseSimulator {
    fn service(&self) -> Service {
        Service::Coinbase
    }

    fn router(&self) -> Router {
        let shared = Arc::clone(&self.shared);
        Router::new().fallback(move |request: Request| {
            let shared = Arc::clone(&shared);
            async move {
                if feed::is_feed(&request) {
                    return feed::connect(shared, request).await;
                }
                entry(&shared, request).await
            }
        })
    }

    /// `GET /coinbase/market` (the background market's settings) and `POST /coinbase/market`
    /// with `{"paused": bool, "rate": steps per sandbox second}`.
    fn control_router(&self) -> Option<Router> {
        let read = Arc::clone(&self.shared);
        let write = Arc::clone(&self.shared);
        Some(
            Router::new().route(
                "/market",
                get(move || {
                    let shared = Arc::clone(&read);
                    async move { market_settings(&shared.current()) }
                })
                .post(move |body: axum::body::Bytes| {
                    let shared = Arc::clone(&write);
                    async move { set_market(&shared, &body) }
                }),
            ),
        )
    }

    /// The exchange as seeded, with the products' sequences going on from where they were (a
    /// feed client never sees one go back); the feed's sockets end, their books gone.
    fn reset(&self) {
        let mut state = self.shared.lock();
        let mut fresh = seed::seeded(self.shared.seed, self.shared.anchor_ms, state.settings);
        for (market, old) in fresh.markets.iter_mut().zip(&state.markets) {
            market.sequence = old.sequence;
        }
        *state = fresh;
        let _ = self.shared.feed.hub.send(events::Inbox::Reset);
        drop(state);
        self.shared.engine.ring();
    }

    fn error_response(&self, status: StatusCode, message: &str) -> Response {
        sandbox_errors::render_status::<CbError>(status, message)
    }
}

/// The market's settings, and the funds audit: per currency, what every account holds against
/// what came in and went out (deposits less withdrawals, conversions, fees taken).
fn market_settings(state: &State) -> Response {
    let totals = state.totals();
    let funds: Vec<Value> = CURRENCIES
        .iter()
        .enumerate()
        .map(|(c, spec)| {
            let expected =
                state.net_deposits[c].saturating_add(state.net_conversions[c]).saturating_sub(state.fees_collected[c]);
            json!({
                "currency": spec.id,
                "in_accounts": totals[c].to_string(),
                "net_deposits": state.net_deposits[c].to_string(),
                "net_conversions": state.net_conversions[c].to_string(),
                "fees": state.fees_collected[c].to_string(),
                "balanced": totals[c] == expected,
            })
        })
        .collect();
    Json(json!({
        "paused": state.settings.paused,
        "rate": state.settings.rate,
        "interval_ms": state.step_interval_ms(),
        "steps": state.steps,
        "funds": funds,
    }))
    .into_response()
}

fn set_market(shared: &Shared, body: &[u8]) -> Response {
    let bad = |message: &str| sandbox_errors::sandbox_error(StatusCode::BAD_REQUEST, "invalid_market", message);
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body) else {
        return bad("send a JSON object: {\"paused\": true|false, \"rate\": steps per sandbox second}");
    };
    if let Some(unknown) = fields.keys().find(|k| !matches!(k.as_str(), "paused" | "rate")) {
        return bad(&format!("unknown field {unknown:?}; the fields are paused and rate"));
    }
    let paused = match fields.get("paused") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return bad("paused must be true or false"),
    };
    let rate = match fields.get("rate") {
        None => None,
        Some(v) => match v.as_f64() {
            Some(r) if (0.001..=1000.0).contains(&r) => Some(r),
            _ => return bad("rate must be a number of steps per sandbox second from 0.001 to 1000"),
        },
    };
    let mut state = shared.current();
    if let Some(paused) = paused {
        state.settings.paused = paused;
    }
    if let Some(rate) = rate {
        state.settings.rate = rate;
        // The next step comes one new interval from now, not at the old pace.
        state.next_step_ms = shared.engine.clock.now_ms() + state.step_interval_ms();
    }
    let answer = market_settings(&state);
    drop(state);
    shared.engine.ring();
    answer
}

/// One request as the handlers see it.
struct Call {
    method: Method,
    segments: Vec<String>,
    query: Query,
    body: Map<String, Value>,
    caller: Option<Caller>,
}

/// A handler's answer: a body and the paging headers of a list.
struct Answer {
    body: Value,
    before: Option<String>,
    after: Option<String>,
}

impl From<Value> for Answer {
    fn from(body: Value) -> Answer {
        Answer { body, before: None, after: None }
    }
}

async fn entry(shared: &Shared, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(_) => return CbError::new(StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response(),
    };
    let path_and_query =
        parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_owned(), |pq| pq.as_str().to_owned());
    match read_call(&parts.headers, parts.method, parts.uri.path(), parts.uri.query(), &path_and_query, &bytes)
        .and_then(|call| handle(shared, &call))
    {
        Ok(answer) => respond(answer),
        Err(e) => e.into_response(),
    }
}

fn respond(answer: Answer) -> Response {
    let mut response = Json(answer.body).into_response();
    let headers = response.headers_mut();
    for (name, value) in [("cb-before", answer.before), ("cb-after", answer.after)] {
        if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
            headers.insert(name, value);
        }
    }
    response
}

/// Whether a route is market data, which needs no key.
fn is_public(method: &Method, segments: &[String]) -> bool {
    *method == Method::GET && matches!(segments.first().map(String::as_str), Some("products" | "currencies" | "time"))
}

fn read_call(
    headers: &HeaderMap,
    method: Method,
    path: &str,
    query: Option<&str>,
    path_and_query: &str,
    body: &[u8],
) -> Result<Call, CbError> {
    let segments = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| super::request::decode_component(s, false).map_err(|_| CbError::not_found()))
        .collect::<Result<Vec<String>, CbError>>()?;
    let caller = if is_public(&method, &segments) {
        None
    } else {
        #[expect(clippy::cast_precision_loss, reason = "ms since the epoch fit an f64 exactly until the year 287,396")]
        let now_s = clock::wall_ms() as f64 / 1000.0;
        Some(auth::authenticate(headers, method.as_str(), path_and_query, body, now_s)?)
    };
    let query = Query::parse(query.unwrap_or("")).map_err(|_| CbError::bad_request("the query is not valid UTF-8"))?;
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        Map::new()
    } else {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(CbError::bad_request("the body must be a JSON object")),
            Err(_) => return Err(CbError::bad_request("Invalid JSON")),
        }
    };
    Ok(Call { method, segments, query, body, caller })
}

/// The caller's profile. Every `profile_id` a request names (in the query, even repeated, and in
/// the body) must be the key's own (`default` means the key's, and a UUID may come with or
/// without dashes): one the key cannot use is 403, and two naming different profiles are a
/// conflict, refused with 400 before anything happens, whichever of them is the key's.
fn profile_of(state: &State, call: &Call) -> Result<usize, CbError> {
    let caller = call.caller.ok_or_else(CbError::forbidden)?;
    let own = &state.profiles[caller.profile].id;
    // What a named profile is: `None` for the key's own, else the id as written.
    let which = |id: &str| -> Option<String> {
        let id = state::normalize_uuid(id).unwrap_or_else(|| id.to_ascii_lowercase());
        (id != "default" && id != *own).then_some(id)
    };
    let body = call.body.get("profile_id").and_then(Value::as_str);
    let mut named = call.query.all("profile_id").chain(body).map(str::trim).filter(|id| !id.is_empty()).map(which);
    let Some(first) = named.next() else { return Ok(caller.profile) };
    if named.any(|other| other != first) {
        return Err(CbError::bad_request("profile_id conflict: the query string and the body name different profiles"));
    }
    match first {
        None => Ok(caller.profile),
        Some(_) => Err(CbError::forbidden()),
    }
}

fn need(call: &Call, permission: Permission) -> Result<(), CbError> {
    call.caller.map_or(Ok(()), |c| c.may(permission))
}

fn handle(shared: &Shared, call: &Call) -> Result<Answer, CbError> {
    let segs: Vec<&str> = call.segments.iter().map(String::as_str).collect();
    let now = shared.engine.clock.now_ms();
    let method = &call.method;
    if *method == Method::GET {
        need(call, Permission::View)?;
    }
    let mut guard = shared.current();
    let state = &mut *guard;
    let answer: Answer = match (method.as_str(), segs.as_slice()) {
        ("GET", ["time"]) => {
            #[expect(clippy::cast_precision_loss, reason = "seconds with their milliseconds")]
            let epoch = now as f64 / 1000.0;
            json!({"iso": clock::rfc3339_ms(now), "epoch": epoch}).into()
        }
        ("GET", ["products"]) => {
            let kind = call.query.get("type");
            let list: Vec<Value> = PRODUCTS
                .iter()
                .filter(|_| kind.is_none_or(|k| k.eq_ignore_ascii_case("spot")))
                .map(wire::product)
                .collect();
            Value::Array(list).into()
        }
        // Undocumented, but what ccxt's `fetch_tickers` reads: each product's last 24 hours as
        // hourly `[time, low, high, open, close]`, newest first.
        ("GET", ["products", "spark-lines"]) => {
            let now_s = now.div_euclid(1000);
            let mut lines = Map::new();
            for (product, spec) in PRODUCTS.iter().enumerate() {
                let candles = state.candles(product, 3600, now_s - 86_400, now_s)?;
                let rows = candles.iter().map(|c| {
                    let mut row = wire::candle(spec, c);
                    if let Some(cells) = row.as_array_mut() {
                        cells.truncate(5);
                    }
                    row
                });
                lines.insert(spec.id.to_owned(), Value::Array(rows.collect()));
            }
            Value::Object(lines).into()
        }
        ("GET", ["products", id, rest @ ..]) => {
            let product = catalog::product_index(id).ok_or_else(CbError::not_found)?;
            product_route(state, product, rest, &call.query, now)?
        }
        ("GET", ["currencies"]) => {
            Value::Array(CURRENCIES.iter().enumerate().map(|(i, c)| wire::currency(c, i)).collect()).into()
        }
        ("GET", ["currencies", id]) => {
            let index = catalog::currency_index(id).ok_or_else(CbError::not_found)?;
            wire::currency(&CURRENCIES[index], index).into()
        }
        ("GET", ["accounts"]) => {
            let profile = profile_of(state, call)?;
            let list =
                state.profiles[profile].accounts.iter().map(|a| wire::account(state, &state.accounts[*a])).collect();
            Value::Array(list).into()
        }
        ("GET", ["accounts", id, rest @ ..]) => {
            let profile = profile_of(state, call)?;
            let account = find_account(state, profile, id)?;
            account_route(state, account, rest, &call.query, now)?
        }
        ("GET", ["orders"]) => list_orders(state, profile_of(state, call)?, &call.query)?,
        ("GET", ["orders", reference]) => {
            let profile = profile_of(state, call)?;
            valid_reference(reference)?;
            let key = state.order_by_ref(profile, reference).ok_or_else(CbError::not_found)?;
            let order = state.orders.get(&key).ok_or_else(CbError::not_found)?;
            wire::order(state, order).into()
        }
        ("POST", ["orders"]) => {
            need(call, Permission::Trade)?;
            let profile = profile_of(state, call)?;
            let new = orders::parse(&call.body)?;
            let key = state.place(profile, new, now)?;
            let forgotten = state.last_forgotten.as_ref().filter(|o| o.key == key);
            let order = state.orders.get(&key).or(forgotten).ok_or_else(CbError::not_found)?;
            wire::order_received(state, order).into()
        }
        ("DELETE", ["orders"]) => {
            need(call, Permission::Trade)?;
            let profile = profile_of(state, call)?;
            let product = product_filter(&call.query)?;
            let ids = state.cancel_all(profile, product, now);
            json!(ids).into()
        }
        ("DELETE", ["orders", reference]) => {
            need(call, Permission::Trade)?;
            let profile = profile_of(state, call)?;
            let product = product_filter(&call.query)?;
            json!(state.cancel(profile, reference, product, now)?).into()
        }
        ("GET", ["fills"]) => list_fills(state, profile_of(state, call)?, &call.query)?,
        ("GET", ["fees"]) => {
            let profile = profile_of(state, call)?;
            state.slide_volume_windows(now);
            let (maker, taker) = state.fee_rates(profile);
            json!({
                "maker_fee_rate": wire::fixed(maker, 4),
                "taker_fee_rate": wire::fixed(taker, 4),
                "usd_volume": wire::fixed(state.usd_volume(profile), 2),
            })
            .into()
        }
        ("GET", ["profiles"]) => {
            let caller = call.caller.ok_or_else(CbError::forbidden)?;
            let user = state.user_of(caller.profile);
            let active = match call.query.get("active") {
                None | Some("") => None,
                Some("true") => Some(true),
                Some("false") => Some(false),
                Some(_) => return Err(CbError::bad_request("Invalid active")),
            };
            let list = (0..state.profiles.len())
                .filter(|p| state.profiles[*p].user == user)
                .filter(|p| active.is_none_or(|a| state.profiles[*p].active == a))
                .map(|p| profile_json(state, p))
                .collect();
            Value::Array(list).into()
        }
        ("GET", ["profiles", id]) => {
            let caller = call.caller.ok_or_else(CbError::forbidden)?;
            let user = state.user_of(caller.profile);
            let p = (0..state.profiles.len())
                .find(|p| state.profiles[*p].user == user && state.profiles[*p].id.eq_ignore_ascii_case(id))
                .ok_or_else(CbError::not_found)?;
            profile_json(state, p).into()
        }
        ("GET", ["transfers"]) => list_transfers(state, profile_of(state, call)?, None, &call.query)?,
        ("GET", ["transfers", id]) => {
            let profile = profile_of(state, call)?;
            let t = state
                .transfers
                .iter()
                .find(|t| t.profile == profile && t.id.eq_ignore_ascii_case(id))
                .ok_or_else(CbError::not_found)?;
            wire::transfer(state, t).into()
        }
        ("GET", ["conversions"]) => {
            let profile = profile_of(state, call)?;
            let items = state.conversions.iter().rev().filter(|c| c.profile == profile).map(|c| (c.key, c)).collect();
            page(items, &call.query, |c| wire::conversion(state, c))?
        }
        ("GET", ["conversions", id]) => {
            let profile = profile_of(state, call)?;
            let c = state
                .conversions
                .iter()
                .find(|c| c.profile == profile && c.id.eq_ignore_ascii_case(id))
                .ok_or_else(CbError::not_found)?;
            wire::conversion(state, c).into()
        }
        ("POST", ["conversions"]) => {
            need(call, Permission::Trade)?;
            let profile = profile_of(state, call)?;
            let from = currency_field(&call.body, "from")?;
            let to = currency_field(&call.body, "to")?;
            let amount = orders::decimal_field(&call.body, "amount")?
                .ok_or_else(|| CbError::bad_request("amount is required"))?;
            let nonce = call.body.get("nonce").map(|n| n.as_str().map_or_else(|| n.to_string(), str::to_owned));
            let key = state.convert(profile, from, to, amount, nonce.as_deref(), now)?;
            let c = state.conversions.iter().find(|c| c.key == key).ok_or_else(CbError::not_found)?;
            wire::conversion(state, c).into()
        }
        ("GET", ["coinbase-accounts"]) => {
            let list = state
                .wallets
                .iter()
                .map(|w| {
                    let spec = &CURRENCIES[w.currency];
                    json!({
                        "id": w.id,
                        "name": format!("{} Wallet", spec.id),
                        "balance": wire::d8(w.balance),
                        "currency": spec.id,
                        "type": if spec.fiat { "fiat" } else { "wallet" },
                        "primary": w.currency == catalog::BTC,
                        "active": true,
                        "available_on_consumer": true,
                        "hold_balance": wire::d8(Decimal::ZERO),
                    })
                })
                .collect();
            Value::Array(list).into()
        }
        ("POST", ["coinbase-accounts", id, "addresses"]) => {
            let wallet = state.wallets.iter().find(|w| w.id.eq_ignore_ascii_case(id)).ok_or_else(CbError::not_found)?;
            let spec = &CURRENCIES[wallet.currency];
            if spec.fiat {
                return Err(CbError::bad_request(format!("{} has no deposit address", spec.id)));
            }
            let network = spec.network;
            let address = deposit_address(network, &mut state.ids);
            let address_id = state.ids.uuid();
            let at = wire::time(now);
            json!({
                "id": address_id,
                "address": address,
                "address_info": {"address": address},
                "name": format!("{} deposit address", spec.id),
                "created_at": at,
                "updated_at": at,
                "network": network,
                "uri_scheme": network,
                "resource": "address",
                "resource_path": format!("/v2/accounts/{id}/addresses/{address_id}"),
                "warnings": [],
                "deposit_uri": format!("{network}:{address}"),
                "exchange_deposit_address": true,
            })
            .into()
        }
        ("GET", ["payment-methods"]) => json!([{
            "id": state.payment_method_id,
            "type": "ach_bank_account",
            "name": "Sandbox Bank ******1234",
            "currency": "USD",
            "primary_buy": true,
            "primary_sell": true,
            "allow_buy": true,
            "allow_sell": true,
            "allow_deposit": true,
            "allow_withdraw": true,
            "verified": true,
        }])
        .into(),
        ("GET", ["withdrawals", "fee-estimate"]) => {
            let currency = call.query.get("currency").ok_or_else(|| CbError::bad_request("currency is required"))?;
            let index = catalog::currency_index(currency).ok_or_else(|| CbError::bad_request("Invalid currency"))?;
            json!({"fee": wire::d8(CURRENCIES[index].network_fee), "fee_before_subsidy": wire::d8(CURRENCIES[index].network_fee)}).into()
        }
        ("POST", ["deposits" | "withdrawals", variant]) => {
            need(call, Permission::Transfer)?;
            let profile = profile_of(state, call)?;
            transfer_route(state, profile, segs[0] == "deposits", variant, &call.body, now)?
        }
        _ => return Err(CbError::not_found()),
    };
    drop(guard);
    shared.engine.ring();
    Ok(answer)
}

/// A fresh address in the form `network` uses (the form withdrawals are checked against).
fn deposit_address(network: &str, ids: &mut super::ids::Ids) -> String {
    const BECH32: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    const BASE58: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut from = |alphabet: &[u8], len: usize| -> String {
        ids.hex(len * 2)
            .as_bytes()
            .chunks(2)
            .map(|pair| {
                let n = u8::from_str_radix(std::str::from_utf8(pair).unwrap_or("0"), 16).unwrap_or(0);
                char::from(alphabet[usize::from(n) % alphabet.len()])
            })
            .collect()
    };
    match network {
        "bitcoin" => format!("bc1q{}", from(BECH32, 38)),
        "litecoin" => format!("ltc1q{}", from(BECH32, 38)),
        "dogecoin" => format!("D{}", from(BASE58, 33)),
        "solana" => from(BASE58, 44),
        _ => format!("0x{}", ids.hex(40)),
    }
}

fn profile_json(state: &State, p: usize) -> Value {
    let profile = &state.profiles[p];
    json!({
        "id": profile.id,
        "user_id": state.users[profile.user].id,
        "name": profile.name,
        "active": profile.active,
        "is_default": profile.is_default,
        "has_margin": false,
        "created_at": wire::time(profile.created_ms),
    })
}

fn valid_reference(reference: &str) -> Result<(), CbError> {
    if reference.starts_with("client:") || state::normalize_uuid(reference).is_some() {
        Ok(())
    } else {
        Err(CbError::bad_request("Invalid order id"))
    }
}

fn product_filter(query: &Query) -> Result<Option<usize>, CbError> {
    match query.get("product_id").map(str::trim).filter(|p| !p.is_empty()) {
        None => Ok(None),
        Some(id) => {
            catalog::product_index(id).map(Some).ok_or_else(|| CbError::new(StatusCode::NOT_FOUND, "ProductNotFound"))
        }
    }
}

fn currency_field(body: &Map<String, Value>, name: &str) -> Result<usize, CbError> {
    let text =
        body.get(name).and_then(Value::as_str).ok_or_else(|| CbError::bad_request(format!("{name} is required")))?;
    catalog::currency_index(text).ok_or_else(|| CbError::bad_request(format!("Invalid {name} currency")))
}

fn find_account(state: &State, profile: usize, id: &str) -> Result<usize, CbError> {
    let wanted = state::normalize_uuid(id).ok_or_else(CbError::not_found)?;
    state.profiles[profile]
        .accounts
        .iter()
        .copied()
        .find(|a| state.accounts[*a].id == wanted)
        .ok_or_else(CbError::not_found)
}

fn product_route(state: &State, product: usize, rest: &[&str], query: &Query, now: i64) -> Result<Answer, CbError> {
    let spec = &PRODUCTS[product];
    let market = &state.markets[product];
    Ok(match rest {
        [] => wire::product(spec).into(),
        ["book"] => {
            let level = match query.get("level").map(str::trim) {
                None | Some("" | "1") => 1,
                Some("2") => 2,
                Some("3") => 3,
                Some(_) => return Err(CbError::bad_request("Invalid level")),
            };
            book_json(state, product, level, now).into()
        }
        ["ticker"] => {
            let stats = state.stats(product, now);
            let last = market.trades.back();
            json!({
                "ask": market.book.best_ask().map(|p| wire::price(p, spec)),
                "bid": market.book.best_bid().map(|p| wire::price(p, spec)),
                "volume": wire::d8(stats.volume),
                "trade_id": last.map(|t| t.id),
                "price": state.last_price(product).map(|p| wire::price(p, spec)),
                "size": last.map(|t| wire::d8(t.size)),
                "time": last.map_or_else(|| wire::time(now), |t| wire::time(t.at_ms)),
                "rfq_volume": wire::d8(Decimal::ZERO),
                "conversions_volume": wire::d8(Decimal::ZERO),
            })
            .into()
        }
        ["stats"] => wire::stats(spec, &state.stats(product, now)).into(),
        ["trades"] => {
            let items = market.trades.iter().rev().map(|t| (t.id, t)).collect();
            page(items, query, |t| wire::trade(spec, t))?
        }
        ["candles"] => {
            let granularity = match query.get("granularity").map(str::trim) {
                None | Some("") => 60,
                Some(g) => g.parse::<i64>().map_err(|_| CbError::bad_request("Unsupported granularity"))?,
            };
            let now_s = now.div_euclid(1000);
            let (start, end) =
                match (query.get("start").filter(|s| !s.is_empty()), query.get("end").filter(|s| !s.is_empty())) {
                    (Some(start), Some(end)) => (parse_time(start, "start")?, parse_time(end, "end")?),
                    // With one or neither, both are ignored, as the exchange documents.
                    _ => (now_s - granularity.saturating_mul(market::MAX_BUCKETS), now_s),
                };
            let candles = state.candles(product, granularity, start, end)?;
            Value::Array(candles.iter().map(|c| wire::candle(spec, c)).collect()).into()
        }
        _ => return Err(CbError::not_found()),
    })
}

/// A time query value: ISO 8601 / RFC 3339, a date, or epoch seconds.
fn parse_time(text: &str, name: &str) -> Result<i64, CbError> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        if seconds.is_finite() && seconds.abs() < 1e11 {
            #[expect(clippy::cast_possible_truncation, reason = "bounded above")]
            return Ok(seconds.floor() as i64);
        }
    }
    if let Some(ms) = clock::parse_rfc3339(text) {
        return Ok(ms.div_euclid(1000));
    }
    if let Some(ms) = clock::parse_rfc3339(&format!("{text}T00:00:00Z")) {
        return Ok(ms.div_euclid(1000));
    }
    // An ISO time without a zone is read as UTC.
    if let Some(ms) = clock::parse_rfc3339(&format!("{text}Z")) {
        return Ok(ms.div_euclid(1000));
    }
    Err(CbError::bad_request(format!("Invalid {name}")))
}

fn book_json(state: &State, product: usize, level: u8, now: i64) -> Value {
    let spec = &PRODUCTS[product];
    let book = &state.markets[product].book;
    let side = |side: Side| -> Vec<Value> {
        let mut rows = Vec::new();
        for (price, queue) in book.levels(side) {
            let orders: Vec<_> = queue.iter().filter_map(|k| state.orders.get(k)).collect();
            if level == 3 {
                rows.extend(orders.iter().map(|o| json!([wire::price(price, spec), wire::d8(o.remaining()), o.id])));
            } else {
                let size = orders.iter().fold(Decimal::ZERO, |sum, o| sum.saturating_add(o.remaining()));
                rows.push(json!([wire::price(price, spec), wire::d8(size), orders.len()]));
                if level == 1 {
                    break;
                }
            }
        }
        rows
    };
    json!({
        "bids": side(Side::Buy),
        "asks": side(Side::Sell),
        "sequence": state.markets[product].sequence,
        "auction_mode": false,
        "auction": null,
        "time": wire::time(now),
    })
}

fn account_route(state: &State, account: usize, rest: &[&str], query: &Query, now: i64) -> Result<Answer, CbError> {
    let acct = &state.accounts[account];
    Ok(match rest {
        [] => wire::account(state, acct).into(),
        ["holds"] => {
            let mut items: Vec<(u64, Value)> = state
                .open
                .iter()
                .rev()
                .filter_map(|k| state.orders.get(k))
                .filter(|o| !o.hold.is_zero() && state.hold_account(o) == account)
                .map(|o| {
                    (
                        o.key,
                        json!({
                            "id": o.hold_id,
                            "account_id": acct.id,
                            "created_at": wire::time(o.hold_created_ms),
                            "updated_at": wire::time(o.hold_updated_ms),
                            "amount": wire::d16(o.hold),
                            "type": "order",
                            "ref": o.id,
                        }),
                    )
                })
                .collect();
            // Withdrawals still pending hold their funds too; their keys are placed after
            // every order's so the cursor stays one number.
            let transfer_holds = state
                .pending_transfers
                .iter()
                .rev()
                .filter_map(|k| state.transfer(*k))
                .filter(|t| t.hold_id.is_some() && state.account_of(t.profile, t.currency) == account)
                .map(|t| {
                    (
                        u64::MAX / 2 + t.key,
                        json!({
                            "id": t.hold_id,
                            "account_id": acct.id,
                            "created_at": wire::time(t.created_ms),
                            "updated_at": wire::time(t.created_ms),
                            "amount": wire::d16(t.amount),
                            "type": "transfer",
                            "ref": t.id,
                        }),
                    )
                });
            let mut all: Vec<(u64, Value)> = transfer_holds.collect();
            all.append(&mut items);
            page(all, query, Value::clone)?
        }
        ["ledger"] => {
            let (start, end) = date_range(query, now)?;
            let items =
                acct.ledger.iter().rev().filter(|e| e.at_ms >= start && e.at_ms <= end).map(|e| (e.id, e)).collect();
            page(items, query, |e| wire::ledger(state, e))?
        }
        ["transfers"] => {
            return list_transfers(state, acct.profile, Some(acct.currency), query);
        }
        _ => return Err(CbError::not_found()),
    })
}

/// `start_date` and `end_date` (inclusive); with neither, the last day, as the ledger does.
fn date_range(query: &Query, now: i64) -> Result<(i64, i64), CbError> {
    let read = |name: &str| -> Result<Option<i64>, CbError> {
        query.get(name).filter(|v| !v.is_empty()).map(|v| parse_time(v, name).map(|s| s * 1000)).transpose()
    };
    Ok(match (read("start_date")?, read("end_date")?) {
        (None, None) => (now - 86_400_000, i64::MAX),
        (start, end) => (start.unwrap_or(i64::MIN), end.map_or(i64::MAX, |e| e + 999)),
    })
}

fn list_orders(state: &State, profile: usize, query: &Query) -> Result<Answer, CbError> {
    let statuses: Vec<&str> =
        query.all("status").flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()).collect();
    for s in &statuses {
        if !matches!(*s, "open" | "pending" | "rejected" | "done" | "active" | "received" | "all") {
            return Err(CbError::bad_request("Invalid status"));
        }
    }
    let wants = |status: Status| {
        if statuses.is_empty() {
            return matches!(status, Status::Open | Status::Pending | Status::Active);
        }
        statuses.iter().any(|s| *s == "all" || *s == status.as_str() || (*s == "received" && status == Status::Pending))
    };
    let product = product_filter(query)?;
    let (start, end) = match (query.get("start_date"), query.get("end_date")) {
        (None, None) => (i64::MIN, i64::MAX),
        _ => date_range(query, 0)?,
    };
    let mut orders: Vec<&state::Order> = state
        .orders
        .values()
        .filter(|o| o.profile == profile && wants(o.status))
        .filter(|o| product.is_none_or(|p| p == o.product))
        .filter(|o| o.created_ms >= start && o.created_ms <= end)
        .collect();
    let sorted_by = query.get("sortedBy").unwrap_or("created_at");
    let ascending = match query.get("sorting").unwrap_or("desc") {
        "asc" => true,
        "desc" => false,
        _ => return Err(CbError::bad_request("Invalid sorting")),
    };
    let zero = Decimal::ZERO;
    match sorted_by {
        "created_at" | "order_id" => orders.sort_by_key(|o| o.key),
        "price" => orders.sort_by(|a, b| a.price.unwrap_or(zero).cmp(&b.price.unwrap_or(zero)).then(a.key.cmp(&b.key))),
        "size" => orders.sort_by(|a, b| a.size.unwrap_or(zero).cmp(&b.size.unwrap_or(zero)).then(a.key.cmp(&b.key))),
        "side" => orders.sort_by_key(|o| (o.side.as_str(), o.key)),
        "type" => orders.sort_by_key(|o| (o.order_type, o.key)),
        _ => return Err(CbError::bad_request("Invalid sortedBy")),
    }
    if !ascending {
        orders.reverse();
    }
    page(orders.into_iter().map(|o| (o.key, o)).collect(), query, |o| wire::order(state, o))
}

fn list_fills(state: &State, profile: usize, query: &Query) -> Result<Answer, CbError> {
    let order = query.get("order_id").map(str::trim).filter(|s| !s.is_empty());
    let product = query.get("product_id").map(str::trim).filter(|s| !s.is_empty());
    if order.is_none() && product.is_none() {
        return Err(CbError::bad_request("product_id or order_id is required"));
    }
    let product = match product {
        Some(id) => {
            Some(catalog::product_index(id).ok_or_else(|| CbError::new(StatusCode::NOT_FOUND, "ProductNotFound"))?)
        }
        None => None,
    };
    let order = match order {
        Some(reference) => {
            valid_reference(reference)?;
            // An order not (or no longer) known has no fills: an empty list, as the exchange answers.
            Some(
                state
                    .order_by_ref(profile, reference)
                    .and_then(|k| state.orders.get(&k))
                    .map(|o| o.id.clone())
                    .unwrap_or_default(),
            )
        }
        None => None,
    };
    let (start, end) = match (query.get("start_date"), query.get("end_date")) {
        (None, None) => (i64::MIN, i64::MAX),
        _ => date_range(query, 0)?,
    };
    let items = state.profiles[profile]
        .fills
        .iter()
        .rev()
        .filter(|f| product.is_none_or(|p| p == f.product))
        .filter(|f| order.as_ref().is_none_or(|id| *id == f.order_id))
        .filter(|f| f.at_ms >= start && f.at_ms <= end)
        .map(|f| (f.trade_id, f))
        .collect();
    page(items, query, |f| wire::fill(state, profile, f))
}

fn list_transfers(state: &State, profile: usize, currency: Option<usize>, query: &Query) -> Result<Answer, CbError> {
    let kind = query.get("type").map(str::trim).filter(|s| !s.is_empty());
    if kind.is_some_and(|k| !matches!(k, "deposit" | "withdraw" | "internal_deposit" | "internal_withdraw")) {
        return Err(CbError::bad_request("Invalid type"));
    }
    let currency = match query.get("currency").map(str::trim).filter(|s| !s.is_empty()) {
        Some(c) => Some(catalog::currency_index(c).ok_or_else(|| CbError::bad_request("Invalid currency"))?),
        None => currency,
    };
    let class = query.get("currency_type").map(str::trim).filter(|s| !s.is_empty());
    if class.is_some_and(|c| !matches!(c, "crypto" | "fiat")) {
        return Err(CbError::bad_request("Invalid currency_type"));
    }
    let reason = query.get("transfer_reason").filter(|s| !s.is_empty());
    let items = state
        .transfers
        .iter()
        .rev()
        .filter(|t| t.profile == profile)
        .filter(|t| {
            kind.is_none_or(|k| match t.kind {
                state::TransferKind::Deposit => k == "deposit",
                state::TransferKind::Withdraw => k == "withdraw",
            })
        })
        .filter(|t| currency.is_none_or(|c| c == t.currency))
        .filter(|t| class.is_none_or(|c| (c == "fiat") == CURRENCIES[t.currency].fiat))
        // No sandbox transfer has a reason (rewards are not simulated).
        .filter(|_| reason.is_none())
        .map(|t| (t.key, t))
        .collect();
    page(items, query, |t| wire::transfer(state, t))
}

fn transfer_route(
    state: &mut State,
    profile: usize,
    deposit: bool,
    variant: &str,
    body: &Map<String, Value>,
    now: i64,
) -> Result<Answer, CbError> {
    let amount = orders::decimal_field(body, "amount")?.ok_or_else(|| CbError::bad_request("amount is required"))?;
    let currency = currency_field(body, "currency")?;
    let text = |name: &str| body.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let required = |name: &str| text(name).ok_or_else(|| CbError::bad_request(format!("{name} is required")));
    let flag = |name: &str| matches!(body.get(name), Some(Value::Bool(true))) || text(name) == Some("true");
    let endpoint = match variant {
        "coinbase-account" => Endpoint::Wallet(required("coinbase_account_id")?),
        "payment-method" => Endpoint::Bank(required("payment_method_id")?),
        "crypto" if !deposit => Endpoint::Crypto {
            address: required("crypto_address")?,
            destination_tag: text("destination_tag"),
            network: text("network"),
            add_fee_to_total: flag("add_network_fee_to_total"),
        },
        _ => return Err(CbError::not_found()),
    };
    let nonce = body.get("nonce").map(|n| n.as_str().map_or_else(|| n.to_string(), str::to_owned));
    let key = if deposit {
        state.deposit(profile, amount, currency, &endpoint, now)?
    } else {
        state.withdraw(profile, amount, currency, &endpoint, nonce.as_deref(), now)?
    };
    let t = state.transfer(key).ok_or_else(CbError::not_found)?;
    Ok(wire::transfer_receipt(t).into())
}

/// One page of a newest-first list of `(cursor, record)`: `before` (newer than the cursor),
/// `after` (older), `limit` (default 100, at most 1000). `CB-BEFORE` names the page's first
/// record and `CB-AFTER` its last, only when older records remain. Only the page's records are
/// rendered (`render`): a tape of 10,000 trades costs one page of JSON per ask.
fn page<T>(items: Vec<(u64, T)>, query: &Query, render: impl Fn(&T) -> Value) -> Result<Answer, CbError> {
    let limit = match query.get("limit").map(str::trim).filter(|s| !s.is_empty()) {
        None => DEFAULT_LIMIT,
        Some(text) => {
            text.parse::<i64>().map_err(|_| CbError::bad_request("Invalid limit"))?.clamp(1, MAX_LIMIT as i64) as usize
        }
    };
    let cursor = |name: &str| -> Result<Option<u64>, CbError> {
        query
            .get(name)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<u64>().map_err(|_| CbError::bad_request(format!("Invalid {name}"))))
            .transpose()
    };
    // The position of a cursor: where its record is, or (gone from the list) where it would be
    // in a list ordered by cursor, newest (largest) first.
    let position = |c: u64| items.iter().position(|(k, _)| *k == c);
    let (from, to) = match (cursor("after")?, cursor("before")?) {
        (Some(after), _) => {
            let start = position(after)
                .map_or_else(|| items.iter().position(|(k, _)| *k < after).unwrap_or(items.len()), |i| i + 1);
            (start, (start + limit).min(items.len()))
        }
        (None, Some(before)) => {
            let end =
                position(before).unwrap_or_else(|| items.iter().position(|(k, _)| *k <= before).unwrap_or(items.len()));
            (end.saturating_sub(limit), end)
        }
        (None, None) => (0, limit.min(items.len())),
    };
    let more = to < items.len();
    let slice = &items[from..to];
    let before = slice.first().map(|(k, _)| k.to_string());
    let after = if more { slice.last().map(|(k, _)| k.to_string()) } else { None };
    let body = Value::Array(slice.iter().map(|(_, item)| render(item)).collect());
    Ok(Answer { body, before, after })
}
