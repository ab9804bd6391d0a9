//! Orders: what a new order must be (increments, minimums, funds), the matching engine (price-
//! time priority, maker and taker fees at the order's tier, self-trade prevention), stop
//! orders triggered by the last trade, time in force, and cancels. Every fill moves funds
//! through the state's credit, debit and hold functions, so balances always add up.

use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::{Map, Value};

use super::book::Side;
use super::catalog::{ProductSpec, PRODUCTS};
use super::errors::CbError;
use super::events::EventKind;
use super::state::{caps, over_balance_cap, Details, Fill, Order, State, Status, StopKind, Stp, Tif, Trade};

/// How many stop orders one trade may set off in a row before the rest wait for the next trade.
const MAX_STOP_CASCADE: usize = 1_000;
/// The largest price (and stop price) an order may name: a trillion of the quote currency per
/// unit, far past any real price, and small enough that a price in ticks fits an `i64` and
/// price × size × (1 + fee) fits a decimal.
pub const MAX_PRICE: Decimal = rust_decimal_macros::dec!(1_000_000_000_000);
/// The largest size an order may name: as much as any balance may hold (past the supply of any
/// listed coin).
pub const MAX_SIZE: Decimal = super::state::caps::BALANCE;
/// The largest funds a market order may name: as much as any balance may hold.
pub const MAX_FUNDS: Decimal = super::state::caps::BALANCE;

/// A new order as asked, before it is checked against funds and the book.
#[derive(Clone, Debug)]
pub struct NewOrder {
    pub product: usize,
    pub side: Side,
    pub order_type: &'static str,
    pub price: Option<Decimal>,
    pub size: Option<Decimal>,
    pub funds: Option<Decimal>,
    pub tif: Tif,
    pub cancel_after: Option<&'static str>,
    pub post_only: bool,
    pub stp: Stp,
    pub stop: Option<(StopKind, Decimal)>,
    pub client_oid: Option<String>,
}

impl NewOrder {
    pub fn limit(product: usize, side: Side, price: Decimal, size: Decimal) -> NewOrder {
        NewOrder {
            product,
            side,
            order_type: "limit",
            price: Some(price),
            size: Some(size),
            funds: None,
            tif: Tif::Gtc,
            cancel_after: None,
            post_only: false,
            stp: Stp::DecreaseCancel,
            stop: None,
            client_oid: None,
        }
    }

    pub fn market(product: usize, side: Side, size: Option<Decimal>, funds: Option<Decimal>) -> NewOrder {
        NewOrder {
            order_type: "market",
            price: None,
            size,
            funds,
            ..NewOrder::limit(product, side, Decimal::ZERO, Decimal::ZERO)
        }
    }
}

/// A decimal field that may come as a JSON string (what the exchange documents) or a number
/// (what some SDKs send); `None` when absent or null or empty.
pub fn decimal_field(body: &Map<String, Value>, name: &str) -> Result<Option<Decimal>, CbError> {
    let text = match body.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err(CbError::bad_request(format!("Invalid {name}"))),
    };
    let parsed = text.parse::<Decimal>().or_else(|_| Decimal::from_scientific(&text));
    parsed.map(Some).map_err(|_| CbError::bad_request(format!("Invalid {name}")))
}

fn text_field<'a>(body: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, CbError> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim())),
        Some(_) => Err(CbError::bad_request(format!("Invalid {name}"))),
    }
}

fn bool_field(body: &Map<String, Value>, name: &str) -> Result<bool, CbError> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") || s.is_empty() => Ok(false),
        Some(_) => Err(CbError::bad_request(format!("Invalid {name}"))),
    }
}

/// Reads `POST /orders`' body.
pub fn parse(body: &Map<String, Value>) -> Result<NewOrder, CbError> {
    let product = text_field(body, "product_id")?.ok_or_else(|| CbError::bad_request("product_id is required"))?;
    let product = super::catalog::product_index(product).ok_or_else(|| CbError::bad_request("Product not found"))?;
    let side = match text_field(body, "side")? {
        Some("buy") => Side::Buy,
        Some("sell") => Side::Sell,
        Some(_) => return Err(CbError::bad_request("Invalid side")),
        None => return Err(CbError::bad_request("side is required")),
    };
    // A stop order is a limit order with `stop` and `stop_price`: the exchange refuses the type
    // `stop` (and a market order with a stop) as `Invalid order_type <type>`.
    let order_type = match text_field(body, "type")? {
        None | Some("limit") => "limit",
        Some("market") if body.get("stop").is_some_and(|v| !v.is_null()) => {
            return Err(CbError::bad_request("Invalid order_type market"))
        }
        Some("market") => "market",
        Some(other) => return Err(CbError::bad_request(format!("Invalid order_type {other}"))),
    };
    let tif = match text_field(body, "time_in_force")? {
        None | Some("GTC") => Tif::Gtc,
        Some("GTT") => Tif::Gtt,
        Some("IOC") => Tif::Ioc,
        Some("FOK") => Tif::Fok,
        Some(_) => return Err(CbError::bad_request("Invalid time_in_force")),
    };
    let cancel_after = match text_field(body, "cancel_after")? {
        None => None,
        Some("min") => Some("min"),
        Some("hour") => Some("hour"),
        Some("day") => Some("day"),
        Some(_) => return Err(CbError::bad_request("Invalid cancel_after")),
    };
    let stp = match text_field(body, "stp")? {
        None | Some("dc") => Stp::DecreaseCancel,
        Some("co") => Stp::CancelOldest,
        Some("cn") => Stp::CancelNewest,
        Some("cb") => Stp::CancelBoth,
        Some(_) => return Err(CbError::bad_request("Invalid stp")),
    };
    let stop = match (text_field(body, "stop")?, decimal_field(body, "stop_price")?) {
        (None, None) => None,
        (Some("loss"), Some(price)) => Some((StopKind::Loss, price)),
        (Some("entry"), Some(price)) => Some((StopKind::Entry, price)),
        (Some("loss" | "entry"), None) => return Err(CbError::bad_request("stop_price is required for stop orders")),
        (None, Some(_)) => return Err(CbError::bad_request("stop is required with stop_price")),
        (Some(_), _) => return Err(CbError::bad_request("Invalid stop")),
    };
    let client_oid = match text_field(body, "client_oid")? {
        None => None,
        Some(oid) => Some(super::state::normalize_uuid(oid).ok_or_else(|| CbError::bad_request("Invalid client_oid"))?),
    };
    Ok(NewOrder {
        product,
        side,
        order_type,
        price: decimal_field(body, "price")?,
        size: decimal_field(body, "size")?,
        funds: decimal_field(body, "funds")?,
        tif,
        cancel_after,
        post_only: bool_field(body, "post_only")?,
        stp,
        stop,
        client_oid,
    })
}

fn is_multiple(value: Decimal, increment: Decimal) -> bool {
    value.checked_rem(increment).is_some_and(|r| r.is_zero())
}

/// `value` rounded down to a multiple of `increment` (zero when that is past what a decimal
/// holds, which the bounds on prices and sizes rule out).
fn floor_to(value: Decimal, increment: Decimal) -> Decimal {
    if increment.is_zero() {
        return value;
    }
    value.checked_div(increment).and_then(|units| units.floor().checked_mul(increment)).unwrap_or(Decimal::ZERO)
}

fn eight(value: Decimal) -> String {
    super::fixed::fixed(value, 8)
}

/// Rounds a quote amount down to the 16 places the exchange keeps (a division's result).
fn quote_down(value: Decimal) -> Decimal {
    value.round_dp_with_strategy(16, RoundingStrategy::ToZero)
}

/// Checks an order's shape against its product: one error, the first the exchange reports.
fn check_shape(order: &NewOrder, spec: &ProductSpec) -> Result<(), CbError> {
    let is_market = order.order_type == "market";
    if order.cancel_after.is_some() && order.tif != Tif::Gtt {
        return Err(CbError::bad_request("cancel_after requires time_in_force GTT"));
    }
    if order.post_only && matches!(order.tif, Tif::Ioc | Tif::Fok) {
        return Err(CbError::bad_request("post_only is invalid with time_in_force IOC or FOK"));
    }
    match (order.size, order.funds) {
        (Some(_), Some(_)) => return Err(CbError::bad_request("only one of size or funds may be given")),
        (None, None) => return Err(CbError::bad_request("size or funds is required")),
        (None, Some(_)) if !is_market => return Err(CbError::bad_request("size is required for limit orders")),
        _ => {}
    }
    if is_market {
        if order.price.is_some() && order.stop.is_none() {
            // The exchange ignores a price on a market order; so does the simulator.
        }
    } else {
        let price = order.price.ok_or_else(|| CbError::bad_request("price is required for limit orders"))?;
        if price <= Decimal::ZERO {
            return Err(CbError::bad_request(format!(
                "price is too small. Minimum price is {}",
                eight(spec.quote_increment)
            )));
        }
        if price > MAX_PRICE {
            return Err(CbError::bad_request(format!("price is too large. Maximum price is {}", eight(MAX_PRICE))));
        }
        if !is_multiple(price, spec.quote_increment) {
            return Err(CbError::bad_request(format!(
                "price is too accurate. Smallest unit is {}",
                eight(spec.quote_increment)
            )));
        }
    }
    if let Some((_, stop_price)) = order.stop {
        if stop_price > MAX_PRICE {
            return Err(CbError::bad_request(format!(
                "stop_price is too large. Maximum stop_price is {}",
                eight(MAX_PRICE)
            )));
        }
        if stop_price <= Decimal::ZERO || !is_multiple(stop_price, spec.quote_increment) {
            return Err(CbError::bad_request(format!(
                "stop_price is too accurate. Smallest unit is {}",
                eight(spec.quote_increment)
            )));
        }
    }
    if let Some(size) = order.size {
        if size <= Decimal::ZERO {
            return Err(CbError::bad_request(format!(
                "size is too small. Minimum size is {}",
                eight(spec.base_increment)
            )));
        }
        if size > MAX_SIZE {
            return Err(CbError::bad_request(format!("size is too large. Maximum size is {}", eight(MAX_SIZE))));
        }
        if !is_multiple(size, spec.base_increment) {
            return Err(CbError::bad_request(format!(
                "size is too accurate. Smallest unit is {}",
                eight(spec.base_increment)
            )));
        }
        if let Some(price) = order.price.filter(|_| !is_market) {
            let notional = price.checked_mul(size);
            if notional.is_some_and(|n| n < spec.min_market_funds) {
                let least = (spec.min_market_funds / price / spec.base_increment).ceil() * spec.base_increment;
                return Err(CbError::bad_request(format!("size is too small. Minimum size is {}", eight(least))));
            }
        }
    }
    if let Some(funds) = order.funds {
        if funds < spec.min_market_funds {
            return Err(CbError::bad_request(format!(
                "funds is too small. Minimum funds is {}",
                eight(spec.min_market_funds)
            )));
        }
        if funds > MAX_FUNDS {
            return Err(CbError::bad_request(format!("funds is too large. Maximum funds is {}", eight(MAX_FUNDS))));
        }
        if !is_multiple(funds, spec.quote_increment) {
            return Err(CbError::bad_request(format!(
                "funds is too accurate. Smallest unit is {}",
                eight(spec.quote_increment)
            )));
        }
    }
    Ok(())
}

impl State {
    /// Places an order for `profile`: checked, held, matched, and rested or finished. Returns
    /// its key; a refused order changes nothing.
    pub fn place(&mut self, profile: usize, new: NewOrder, now_ms: i64) -> Result<u64, CbError> {
        let spec = &PRODUCTS[new.product];
        check_shape(&new, spec)?;
        let open_here = self.open_counts.get(&(profile, new.product)).copied().unwrap_or(0);
        if open_here >= caps::OPEN_ORDERS_PER_PRODUCT {
            return Err(CbError::bad_request("Too many open orders"));
        }
        self.slide_volume_windows(now_ms);
        let (maker_rate, taker_rate) = self.fee_rates(profile);
        let is_market = new.order_type == "market";
        let (quote, base) = (spec.quote, spec.base);
        let available = |state: &State, currency| state.account(profile, currency).available();
        // What the order reserves: the hold a resting order keeps, or what a market order may
        // spend while it matches.
        let reserve = match (new.side, is_market) {
            (Side::Buy, false) => {
                let cost = new.price.zip(new.size).and_then(|(p, s)| p.checked_mul(s));
                let held = cost.and_then(|c| c.checked_mul(Decimal::ONE + taker_rate));
                let held = held.ok_or_else(CbError::insufficient_funds)?;
                (held <= available(self, quote)).then_some(held)
            }
            (Side::Sell, false) => new.size.filter(|s| *s <= available(self, base)),
            (Side::Buy, true) => match (new.size, new.funds) {
                (_, Some(funds)) => (funds <= available(self, quote)).then_some(funds),
                (Some(size), None) => {
                    let cost = self.cost_to_take(new.product, Side::Buy, size, profile);
                    let needed = cost.and_then(|c| c.checked_mul(Decimal::ONE + taker_rate));
                    let have = available(self, quote);
                    needed.filter(|n| *n <= have).map(|_| have)
                }
                (None, None) => None,
            },
            (Side::Sell, true) => match (new.size, new.funds) {
                (Some(size), _) => (size <= available(self, base)).then_some(size),
                (None, Some(_)) => Some(available(self, base)).filter(|a| *a > Decimal::ZERO),
                (None, None) => None,
            },
        };
        let reserve = reserve.ok_or_else(CbError::insufficient_funds)?;
        // What the order may bring in, at worst, must fit under the balance cap.
        let credited = match new.side {
            Side::Buy => base,
            Side::Sell => quote,
        };
        let within_cap = self.worst_credit(&new).is_some_and(|c| self.fits(self.account_of(profile, credited), c));
        if !within_cap {
            return Err(over_balance_cap(credited));
        }
        let key = self.next_order_key;
        self.next_order_key += 1;
        let id = self.ids.uuid();
        let expire_ms = new.cancel_after.map(|after| {
            now_ms
                + match after {
                    "min" => 60_000,
                    "hour" => 3_600_000,
                    _ => 86_400_000,
                }
        });
        let funds = new.funds.map(|f| match new.side {
            Side::Buy => quote_down(f / (Decimal::ONE + taker_rate)).max(Decimal::ZERO),
            Side::Sell => f,
        });
        let order = Order {
            key,
            id: id.clone(),
            profile,
            product: new.product,
            side: new.side,
            order_type: new.order_type,
            price: if is_market { None } else { new.price },
            size: new.size,
            funds,
            specified_funds: new.funds,
            tif: new.tif,
            expire_ms,
            post_only: new.post_only,
            stp: new.stp,
            stop: new.stop,
            client_oid: new.client_oid.clone(),
            created_ms: now_ms,
            done_ms: None,
            done_reason: None,
            reject_reason: None,
            status: Status::Pending,
            filled_size: Decimal::ZERO,
            executed_value: Decimal::ZERO,
            fill_fees: Decimal::ZERO,
            maker_rate,
            taker_rate,
            hold: Decimal::ZERO,
            hold_id: None,
            hold_created_ms: now_ms,
            hold_updated_ms: now_ms,
            reserve: is_market.then_some(reserve),
        };
        self.orders.insert(key, order);
        self.order_ids.insert(id, key);
        if let Some(oid) = new.client_oid {
            self.client_oids.insert((profile, oid), key);
        }
        // Post-only: refused, holding nothing, if it would take.
        if new.post_only && self.would_take(key) {
            if let Some(order) = self.orders.get_mut(&key) {
                order.status = Status::Rejected;
                order.reject_reason = Some("post only");
                order.done_ms = Some(now_ms);
                order.done_reason = Some("rejected");
            }
            self.retire(key);
            return Ok(key);
        }
        self.open.insert(key);
        *self.open_counts.entry((profile, new.product)).or_default() += 1;
        self.set_hold(key, reserve, now_ms);
        if let Some((kind, stop_price)) = new.stop {
            if let Some(order) = self.orders.get_mut(&key) {
                order.status = Status::Active;
            }
            self.markets[new.product].stops.push(key);
            self.emit_private(new.product, now_ms, |state| {
                let order = state.order_ref(key)?;
                Some(EventKind::Activate {
                    order,
                    stop_type: kind.as_str(),
                    stop_price,
                    size: new.size,
                    funds: new.funds,
                })
            });
            return Ok(key);
        }
        self.emit_received(key, now_ms);
        if new.tif == Tif::Fok && !self.can_fill_whole(key) {
            self.finish(key, "canceled", now_ms);
            return Ok(key);
        }
        self.take(key, now_ms);
        self.trigger_stops(new.product, now_ms);
        Ok(key)
    }

    /// The most a new order can credit its owner if it trades as soon as it is placed: base for
    /// a buy, quote for a sell (at its price, or at better bids it would take); `None` past what
    /// a decimal holds. Fills that come later are checked one by one as they happen.
    fn worst_credit(&self, new: &NewOrder) -> Option<Decimal> {
        let book = &self.markets[new.product].book;
        match (new.side, new.size, new.funds) {
            (Side::Buy, Some(size), _) => Some(size),
            // Funds buy the most at the lowest ask; an empty book sells nothing.
            (Side::Buy, None, Some(funds)) => book.best_ask().map_or(Some(Decimal::ZERO), |ask| funds.checked_div(ask)),
            (Side::Sell, Some(size), _) => {
                let price = if new.order_type == "market" { None } else { new.price };
                let best = price.into_iter().chain(book.best_bid()).max().unwrap_or(Decimal::ZERO);
                size.checked_mul(best)
            }
            (Side::Sell, None, Some(funds)) => Some(funds),
            (_, None, None) => Some(Decimal::ZERO),
        }
    }

    /// Whether what `order` receives from trading `size` at `price` fits its account under the
    /// balance cap (quote before the fee comes off, so the balance never passes it even between
    /// the two ledger entries).
    fn credit_fits(&self, order: &Order, price: Decimal, size: Decimal) -> bool {
        let spec = &PRODUCTS[order.product];
        let (currency, amount) = match order.side {
            Side::Buy => (spec.base, Some(size)),
            Side::Sell => (spec.quote, price.checked_mul(size)),
        };
        amount.is_some_and(|a| self.fits(self.account_of(order.profile, currency), a))
    }

    /// The feed's `received` for an order the engine takes in.
    fn emit_received(&mut self, key: u64, now_ms: i64) {
        let Some(product) = self.orders.get(&key).map(|o| o.product) else { return };
        self.emit(product, now_ms, |state| {
            let order = state.orders.get(&key)?;
            Some(EventKind::Received {
                order: state.order_ref(key)?,
                order_type: order.order_type,
                size: order.size,
                funds: order.specified_funds,
                client_oid: order.client_oid.clone(),
            })
        });
    }

    /// Runs an order as a taker against the book, then rests or finishes it.
    fn take(&mut self, key: u64, now_ms: i64) {
        self.match_against_book(key, now_ms);
        let Some(order) = self.orders.get(&key) else { return };
        if order.status == Status::Done {
            return;
        }
        let is_market = order.order_type == "market";
        let remaining = order.remaining();
        if is_market {
            let reason = if order.filled_size.is_zero() { "canceled" } else { "filled" };
            self.finish(key, reason, now_ms);
        } else if remaining.is_zero() {
            self.finish(key, "filled", now_ms);
        } else if matches!(order.tif, Tif::Ioc | Tif::Fok) {
            self.finish(key, "canceled", now_ms);
        } else if let Some(price) = order.price {
            let (side, product) = (order.side, order.product);
            self.markets[product].book.insert(side, price, key);
            if let Some(order) = self.orders.get_mut(&key) {
                order.status = Status::Open;
            }
            self.emit(product, now_ms, |state| Some(EventKind::Open { order: state.order_ref(key)?, remaining }));
        }
    }

    /// Whether a limit order would trade at once against another user's order.
    fn would_take(&self, key: u64) -> bool {
        let Some(order) = self.orders.get(&key) else { return false };
        let Some(price) = order.price else { return true };
        let book = &self.markets[order.product].book;
        match order.side {
            Side::Buy => book.best_ask().is_some_and(|ask| price >= ask),
            Side::Sell => book.best_bid().is_some_and(|bid| price <= bid),
        }
    }

    /// Whether the book holds enough at acceptable prices, from other users, to fill a FOK
    /// order whole.
    fn can_fill_whole(&self, key: u64) -> bool {
        let Some(order) = self.orders.get(&key) else { return false };
        let user = self.user_of(order.profile);
        let mut left = order.remaining();
        for (price, queue) in self.markets[order.product].book.levels(order.side.opposite()) {
            let acceptable = order.price.is_none_or(|limit| match order.side {
                Side::Buy => price <= limit,
                Side::Sell => price >= limit,
            });
            if !acceptable {
                break;
            }
            for maker in queue.iter().filter_map(|k| self.orders.get(k)) {
                if self.user_of(maker.profile) != user {
                    left -= maker.remaining().min(left);
                }
            }
            if left.is_zero() {
                return true;
            }
        }
        left.is_zero()
    }

    /// What taking `size` from the book would cost in quote (a market buy by size), skipping
    /// `profile`'s user's own orders; `None` past what the numbers can hold.
    pub fn cost_to_take(&self, product: usize, side: Side, size: Decimal, profile: usize) -> Option<Decimal> {
        let user = self.user_of(profile);
        let mut left = size;
        let mut cost = Decimal::ZERO;
        for (price, queue) in self.markets[product].book.levels(side.opposite()) {
            for maker in queue.iter().filter_map(|k| self.orders.get(k)) {
                if self.user_of(maker.profile) == user || left.is_zero() {
                    continue;
                }
                let take = maker.remaining().min(left);
                cost = cost.checked_add(price.checked_mul(take)?)?;
                left -= take;
            }
        }
        Some(cost)
    }

    /// The base size the taker can take from `maker_left` at `price` now.
    fn taker_size(&self, taker: &Order, price: Decimal, maker_left: Decimal) -> Decimal {
        let spec = &PRODUCTS[taker.product];
        let mut size = maker_left;
        if taker.size.is_some() {
            size = size.min(taker.remaining());
        }
        if let (Some(funds), true) = (taker.funds, taker.order_type == "market") {
            let left = funds.saturating_sub(taker.executed_value).max(Decimal::ZERO);
            let units = left.checked_div(price).unwrap_or(Decimal::ZERO);
            size = size.min(floor_to(units, spec.base_increment));
        }
        if let Some(reserve) = taker.reserve {
            let left = reserve.saturating_sub(spent(taker)).max(Decimal::ZERO);
            let affordable = match taker.side {
                Side::Buy => {
                    let units = price
                        .checked_mul(Decimal::ONE + taker.taker_rate)
                        .and_then(|each| left.checked_div(each))
                        .unwrap_or(Decimal::ZERO);
                    floor_to(units, spec.base_increment)
                }
                Side::Sell => left,
            };
            size = size.min(affordable);
        }
        size.max(Decimal::ZERO)
    }

    fn match_against_book(&mut self, taker_key: u64, now_ms: i64) {
        loop {
            let Some(taker) = self.orders.get(&taker_key) else { return };
            if taker.status == Status::Done {
                return;
            }
            let product = taker.product;
            let Some((price, maker_key)) = self.markets[product].book.first_opposite(taker.side) else { return };
            if let Some(limit) = taker.price {
                let crosses = match taker.side {
                    Side::Buy => price <= limit,
                    Side::Sell => price >= limit,
                };
                if !crosses {
                    return;
                }
            }
            let Some(maker) = self.orders.get(&maker_key) else {
                // A key without its order cannot happen; drop it rather than loop.
                let side = taker.side.opposite();
                self.markets[product].book.remove(side, price, maker_key);
                continue;
            };
            if self.user_of(maker.profile) == self.user_of(taker.profile) {
                if self.prevent_self_trade(taker_key, maker_key, now_ms) {
                    continue;
                }
                return;
            }
            let size = self.taker_size(taker, price, maker.remaining());
            if size.is_zero() {
                return;
            }
            // A fill that would take a balance past the cap does not happen: the order it would
            // credit is cancelled instead (the taker stops; the book goes on past the maker).
            if !self.credit_fits(taker, price, size) {
                self.finish(taker_key, "canceled", now_ms);
                return;
            }
            if !self.credit_fits(maker, price, size) {
                self.finish(maker_key, "canceled", now_ms);
                continue;
            }
            if !self.trade(taker_key, maker_key, price, size, now_ms) {
                // Past what decimals hold: the taker stops rather than rest across the book.
                self.finish(taker_key, "canceled", now_ms);
                return;
            }
        }
    }

    /// Self-trade prevention as the taker's `stp` says; true when the taker goes on matching.
    fn prevent_self_trade(&mut self, taker_key: u64, maker_key: u64, now_ms: i64) -> bool {
        let (Some(taker), Some(maker)) = (self.orders.get(&taker_key), self.orders.get(&maker_key)) else {
            return false;
        };
        let by_funds = taker.size.is_none();
        match (taker.stp, by_funds) {
            (Stp::CancelOldest, _) => {
                self.finish(maker_key, "canceled", now_ms);
                true
            }
            (Stp::CancelNewest, _) | (Stp::DecreaseCancel, true) => {
                self.finish(taker_key, "canceled", now_ms);
                false
            }
            (Stp::CancelBoth, _) => {
                self.finish(maker_key, "canceled", now_ms);
                self.finish(taker_key, "canceled", now_ms);
                false
            }
            (Stp::DecreaseCancel, false) => {
                let (taker_left, maker_left) = (taker.remaining(), maker.remaining());
                if taker_left == maker_left {
                    self.finish(maker_key, "canceled", now_ms);
                    self.finish(taker_key, "canceled", now_ms);
                    false
                } else if taker_left < maker_left {
                    self.decrement(maker_key, taker_left, now_ms);
                    self.finish(taker_key, "canceled", now_ms);
                    false
                } else {
                    self.decrement(taker_key, maker_left, now_ms);
                    self.finish(maker_key, "canceled", now_ms);
                    true
                }
            }
        }
    }

    /// Lowers an order's size by `by` and its hold with it.
    fn decrement(&mut self, key: u64, by: Decimal, now_ms: i64) {
        let Some(order) = self.orders.get_mut(&key) else { return };
        let old_size = order.remaining();
        order.size = order.size.map(|s| s - by);
        let (product, new_size, on_book) = (order.product, order.remaining(), order.status == Status::Open);
        self.refresh_hold(key, now_ms);
        self.emit(product, now_ms, |state| {
            Some(EventKind::Change { order: state.order_ref(key)?, old_size, new_size, on_book })
        });
    }

    /// Sets an order's hold to what it needs now.
    fn refresh_hold(&mut self, key: u64, now_ms: i64) {
        if let Some(order) = self.orders.get(&key) {
            let needed = needed_hold(order);
            self.set_hold(key, needed, now_ms);
        }
    }

    /// One trade: `size` at `price` between a taker and a resting maker. False (nothing done)
    /// when the amounts are past what decimals hold.
    fn trade(&mut self, taker_key: u64, maker_key: u64, price: Decimal, size: Decimal, now_ms: i64) -> bool {
        let Some(value) = price.checked_mul(size) else { return false };
        let trade_id = self.next_trade_id;
        self.next_trade_id += 1;
        let Some(maker) = self.orders.get(&maker_key) else { return false };
        let (product, maker_side) = (maker.product, maker.side);
        for (key, liquidity) in [(maker_key, 'M'), (taker_key, 'T')] {
            self.apply_fill(key, liquidity, trade_id, price, size, value, now_ms);
        }
        self.record_candle(product, now_ms, price, size);
        // After the candles, so the ticker it makes counts this trade; the tape keeps its sequence.
        self.emit(product, now_ms, |state| {
            Some(EventKind::Match {
                trade_id,
                maker: state.order_ref(maker_key)?,
                taker: state.order_ref(taker_key)?,
                price,
                size,
                maker_rate: state.orders.get(&maker_key)?.maker_rate,
                taker_rate: state.orders.get(&taker_key)?.taker_rate,
                stats: Box::new(state.stats(product, now_ms)),
            })
        });
        let (maker_order_id, taker_order_id) = match (self.orders.get(&maker_key), self.orders.get(&taker_key)) {
            (Some(maker), Some(taker)) => (maker.id.clone(), taker.id.clone()),
            _ => (String::new(), String::new()),
        };
        let market = &mut self.markets[product];
        let sequence = market.sequence;
        market.trades.push_back(Trade {
            id: trade_id,
            at_ms: now_ms,
            price,
            size,
            side: maker_side,
            maker_order_id,
            taker_order_id,
            sequence,
        });
        if market.trades.len() > caps::TRADES {
            market.trades.pop_front();
        }
        if self.orders.get(&maker_key).is_some_and(|m| m.remaining().is_zero()) {
            self.finish(maker_key, "filled", now_ms);
        }
        true
    }

    /// One side of a trade: the order's fill, its funds moved, its hold lowered, its fill kept.
    #[expect(clippy::too_many_arguments, reason = "one trade's figures, each used once")]
    fn apply_fill(
        &mut self,
        key: u64,
        liquidity: char,
        trade_id: u64,
        price: Decimal,
        size: Decimal,
        value: Decimal,
        now_ms: i64,
    ) {
        let Some(order) = self.orders.get_mut(&key) else { return };
        let rate = if liquidity == 'M' { order.maker_rate } else { order.taker_rate };
        // Exact: prices, sizes and rates have few places, so no rounding can make a fill cost
        // more than its hold released.
        let fee = value.saturating_mul(rate);
        order.filled_size = order.filled_size.saturating_add(size);
        order.executed_value = order.executed_value.saturating_add(value);
        order.fill_fees = order.fill_fees.saturating_add(fee);
        let (profile, side, product, order_id) = (order.profile, order.side, order.product, order.id.clone());
        self.refresh_hold(key, now_ms);
        let spec = &PRODUCTS[product];
        let quote = self.account_of(profile, spec.quote);
        let base = self.account_of(profile, spec.base);
        let details = || Details::Match { order_id: order_id.clone(), trade_id, product };
        match side {
            Side::Buy => {
                self.debit(quote, value, now_ms, "match", details());
                self.credit(base, size, now_ms, "match", details());
            }
            Side::Sell => {
                self.debit(base, size, now_ms, "match", details());
                self.credit(quote, value, now_ms, "match", details());
            }
        }
        self.debit(quote, fee, now_ms, "fee", details());
        self.fees_collected[spec.quote] = self.fees_collected[spec.quote].saturating_add(fee);
        if self.keeps_records(profile) {
            let usd_volume = self.usd_value(spec.quote, value);
            self.profiles[profile].push_fill(Fill {
                trade_id,
                order_id,
                product,
                liquidity,
                price,
                size,
                fee,
                at_ms: now_ms,
                side,
                usd_volume,
            });
        }
    }

    /// An amount of `currency` in USD at the last trade price (for volumes and fee tiers).
    pub fn usd_value(&self, currency: usize, amount: Decimal) -> Decimal {
        if currency == super::catalog::USD {
            return amount;
        }
        let id = super::catalog::CURRENCIES[currency].id;
        PRODUCTS
            .iter()
            .position(|p| p.quote == super::catalog::USD && super::catalog::CURRENCIES[p.base].id == id)
            .and_then(|product| self.last_price(product))
            .and_then(|price| price.checked_mul(amount))
            .unwrap_or(Decimal::ZERO)
    }

    /// Ends an order: out of the book and the stops, its hold released. A cancelled order
    /// with no fills is forgotten, as the exchange purges it.
    pub fn finish(&mut self, key: u64, reason: &'static str, now_ms: i64) {
        let Some(order) = self.orders.get(&key) else { return };
        if order.status == Status::Done {
            return;
        }
        let (product, side, price, status, order_profile) =
            (order.product, order.side, order.price, order.status, order.profile);
        if status == Status::Open {
            if let Some(price) = price {
                self.markets[product].book.remove(side, price, key);
            }
        }
        if status == Status::Active {
            self.markets[product].stops.retain(|k| *k != key);
        }
        self.set_hold(key, Decimal::ZERO, now_ms);
        if self.open.remove(&key) {
            if let Some(count) = self.open_counts.get_mut(&(order_profile, product)) {
                *count = count.saturating_sub(1);
            }
        }
        if let Some(order) = self.orders.get_mut(&key) {
            order.status = Status::Done;
            order.done_reason = Some(reason);
            order.done_ms = Some(now_ms);
        }
        let done = |state: &State| {
            let order = state.orders.get(&key)?;
            Some(EventKind::Done {
                order: state.order_ref(key)?,
                reason,
                remaining: order.size.map(|_| order.remaining()),
                on_book: status == Status::Open,
            })
        };
        // A stop order that never triggered was never public: only its owner hears it go.
        if status == Status::Active {
            self.emit_private(product, now_ms, done);
        } else {
            self.emit(product, now_ms, done);
        }
        self.retire(key);
    }

    /// Keeps a done order for the lists, or forgets it (a simulated trader's, or one cancelled
    /// with nothing filled).
    fn retire(&mut self, key: u64) {
        let Some(order) = self.orders.get(&key) else { return };
        let purge = !self.keeps_records(order.profile)
            || (order.done_reason == Some("canceled") && order.filled_size.is_zero());
        if purge {
            self.forget_order(key);
        } else {
            self.done.push_back(key);
        }
    }

    /// Stop orders whose trigger the last trade reached become limit orders and trade.
    fn trigger_stops(&mut self, product: usize, now_ms: i64) {
        for _ in 0..MAX_STOP_CASCADE {
            let Some(last) = self.last_price(product) else { return };
            let due = self.markets[product].stops.iter().copied().find(|key| {
                self.orders.get(key).and_then(|o| o.stop).is_some_and(|(kind, at)| match kind {
                    StopKind::Loss => last <= at,
                    StopKind::Entry => last >= at,
                })
            });
            let Some(key) = due else { return };
            self.markets[product].stops.retain(|k| *k != key);
            if let Some(order) = self.orders.get_mut(&key) {
                order.status = Status::Pending;
            }
            self.emit_received(key, now_ms);
            self.take(key, now_ms);
        }
    }

    /// `DELETE /orders/{id}`: the order's id once it is cancelled.
    pub fn cancel(
        &mut self,
        profile: usize,
        reference: &str,
        product: Option<usize>,
        now_ms: i64,
    ) -> Result<String, CbError> {
        if !reference.starts_with("client:") && super::state::normalize_uuid(reference).is_none() {
            return Err(CbError::bad_request("Invalid order id"));
        }
        let key = self.order_by_ref(profile, reference).ok_or_else(CbError::not_found)?;
        let order = self.orders.get(&key).ok_or_else(CbError::not_found)?;
        if product.is_some_and(|p| p != order.product) {
            return Err(CbError::not_found());
        }
        if !order.is_open() {
            return Err(CbError::bad_request("Order already done"));
        }
        let id = order.id.clone();
        self.finish(key, "canceled", now_ms);
        Ok(id)
    }

    /// `DELETE /orders`: the ids of every open order of the profile (of one product) cancelled.
    pub fn cancel_all(&mut self, profile: usize, product: Option<usize>, now_ms: i64) -> Vec<String> {
        let keys: Vec<u64> = self
            .open
            .iter()
            .filter_map(|k| self.orders.get(k))
            .filter(|o| o.profile == profile && product.is_none_or(|p| p == o.product))
            .map(|o| o.key)
            .collect();
        let mut ids = Vec::with_capacity(keys.len());
        for key in keys {
            if let Some(order) = self.orders.get(&key) {
                ids.push(order.id.clone());
            }
            self.finish(key, "canceled", now_ms);
        }
        ids
    }

    /// GTT orders past their time are cancelled.
    pub fn expire_orders(&mut self, now_ms: i64) {
        let due: Vec<u64> = self
            .open
            .iter()
            .filter_map(|k| self.orders.get(k))
            .filter(|o| o.expire_ms.is_some_and(|at| at <= now_ms))
            .map(|o| o.key)
            .collect();
        for key in due {
            let at = self.orders.get(&key).and_then(|o| o.expire_ms).unwrap_or(now_ms);
            self.finish(key, "canceled", at);
        }
    }
}

/// What an order has spent of its reserve: quote with fees for a buy, base for a sell.
fn spent(order: &Order) -> Decimal {
    match order.side {
        Side::Buy => order.executed_value.saturating_add(order.fill_fees),
        Side::Sell => order.filled_size,
    }
}

/// The hold an order needs for what is left of it.
pub fn needed_hold(order: &Order) -> Decimal {
    if order.status == Status::Done || order.status == Status::Rejected {
        return Decimal::ZERO;
    }
    if let Some(reserve) = order.reserve {
        return reserve.saturating_sub(spent(order)).max(Decimal::ZERO);
    }
    match (order.side, order.price) {
        // Within the bounds on price and size, as placing the order checked.
        (Side::Buy, Some(price)) => {
            price.saturating_mul(order.remaining()).saturating_mul(Decimal::ONE + order.taker_rate)
        }
        (Side::Sell, _) => order.remaining(),
        (Side::Buy, None) => Decimal::ZERO,
    }
}
