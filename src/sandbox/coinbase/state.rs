//! The exchange's state: users and profiles, accounts with their holds and ledgers, orders and
//! books, fills, public trades, candles, transfers and conversions, and the background market.
//! Every move of funds goes through [`State::credit`], [`State::debit`] and
//! [`State::set_hold`], which keep `balance = available + hold` and write the ledger entry with
//! the balance after it; `orders.rs`, `market.rs` and `transfers.rs` add the rules as
//! `impl State` blocks.

use std::collections::{BTreeSet, HashMap, VecDeque};

use rust_decimal::Decimal;

use super::book::{Book, Side};
use super::catalog::{self, CURRENCIES, PRODUCTS};
use super::errors::CbError;
use crate::sandbox::ids::Ids;
use crate::sandbox::rng::Rng;

/// Caps on what is kept, so a sandbox left running keeps bounded memory (README lists them).
pub mod caps {
    /// Done orders kept (oldest go first); an open order is never dropped.
    pub const DONE_ORDERS: usize = 50_000;
    /// Done orders older than this (sandbox ms) go: 30 days.
    pub const DONE_ORDER_AGE_MS: i64 = 30 * 86_400_000;
    /// Fills kept per profile.
    pub const FILLS: usize = 50_000;
    /// Ledger entries kept per account.
    pub const LEDGER: usize = 20_000;
    /// Public trades kept per product.
    pub const TRADES: usize = 10_000;
    /// One-minute candles kept per product: 7 days.
    pub const MINUTE_CANDLES: usize = 7 * 1440;
    /// One-hour candles kept per product: 300 days.
    pub const HOUR_CANDLES: usize = 300 * 24;
    /// Transfers and conversions kept (each).
    pub const TRANSFERS: usize = 10_000;
    /// Open orders one profile may have on one product (the exchange's limit).
    pub const OPEN_ORDERS_PER_PRODUCT: usize = 500;
    /// The most any balance may hold, in its currency's units: a hundred trillion, far past any
    /// real account. A decimal keeps 28 digits, so this is what still keeps every cent-fraction
    /// of a balance exact (a quote amount has up to 14 places: price, size and fee rate), with
    /// room for the sums of every profile's balances in the funds audit, and no product or sum
    /// can overflow. A deposit, conversion or order that would take a balance past it is refused.
    pub const BALANCE: rust_decimal::Decimal = rust_decimal_macros::dec!(100_000_000_000_000);
}

pub struct User {
    /// 24 hex digits, as the exchange's `user_id`.
    pub id: String,
    /// A simulated trader of the background market: no ledger or fills are kept for it.
    pub simulated: bool,
}

pub struct Profile {
    pub id: String,
    pub user: usize,
    pub name: String,
    pub is_default: bool,
    pub active: bool,
    pub created_ms: i64,
    /// Index into `State::accounts` per currency.
    pub accounts: Vec<usize>,
    pub fills: VecDeque<Fill>,
    /// USD volume of the fills from `window_start` on: those of the last 30 days once
    /// [`State::slide_volume_windows`] has run, so a fee tier costs no pass over the fills.
    pub volume_30d: Decimal,
    pub window_start: usize,
}

impl Profile {
    /// Keeps a fill (the oldest goes past the cap) and counts it in the 30-day volume.
    pub fn push_fill(&mut self, fill: Fill) {
        self.volume_30d = self.volume_30d.saturating_add(fill.usd_volume);
        self.fills.push_back(fill);
        if self.fills.len() > caps::FILLS {
            if let Some(gone) = self.fills.pop_front() {
                if self.window_start > 0 {
                    self.window_start -= 1;
                } else {
                    self.volume_30d = self.volume_30d.saturating_sub(gone.usd_volume);
                }
            }
        }
    }

    /// Moves the 30-day window's start to `since`, taking older fills out of its volume.
    fn slide_window(&mut self, since: i64) {
        while let Some(fill) = self.fills.get(self.window_start).filter(|f| f.at_ms < since) {
            self.volume_30d = self.volume_30d.saturating_sub(fill.usd_volume);
            self.window_start += 1;
        }
    }
}

pub struct Account {
    pub id: String,
    pub profile: usize,
    pub currency: usize,
    pub balance: Decimal,
    pub hold: Decimal,
    pub ledger: VecDeque<LedgerEntry>,
}

impl Account {
    pub fn available(&self) -> Decimal {
        self.balance - self.hold
    }
}

pub struct LedgerEntry {
    pub id: u64,
    pub at_ms: i64,
    pub amount: Decimal,
    pub balance: Decimal,
    pub kind: &'static str,
    pub details: Details,
}

/// What a ledger entry refers to.
#[derive(Clone, Debug)]
pub enum Details {
    Match { order_id: String, trade_id: u64, product: usize },
    Transfer { transfer_id: String, transfer_type: &'static str },
    Conversion { conversion_id: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Pending,
    Open,
    /// A stop order waiting for its trigger.
    Active,
    Done,
    Rejected,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Open => "open",
            Status::Active => "active",
            Status::Done => "done",
            Status::Rejected => "rejected",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tif {
    Gtc,
    Gtt,
    Ioc,
    Fok,
}

impl Tif {
    pub fn as_str(self) -> &'static str {
        match self {
            Tif::Gtc => "GTC",
            Tif::Gtt => "GTT",
            Tif::Ioc => "IOC",
            Tif::Fok => "FOK",
        }
    }
}

/// Self-trade prevention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stp {
    DecreaseCancel,
    CancelOldest,
    CancelNewest,
    CancelBoth,
}

impl Stp {
    pub fn as_str(self) -> &'static str {
        match self {
            Stp::DecreaseCancel => "dc",
            Stp::CancelOldest => "co",
            Stp::CancelNewest => "cn",
            Stp::CancelBoth => "cb",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopKind {
    Loss,
    Entry,
}

impl StopKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StopKind::Loss => "loss",
            StopKind::Entry => "entry",
        }
    }
}

pub struct Order {
    /// Internal, increasing in creation order: the list cursor.
    pub key: u64,
    pub id: String,
    pub profile: usize,
    pub product: usize,
    pub side: Side,
    /// `limit`, `market` or `stop`, as asked.
    pub order_type: &'static str,
    pub price: Option<Decimal>,
    /// Base size; lowered when self-trade prevention decrements the order.
    pub size: Option<Decimal>,
    /// Market orders by funds: what may be spent on the base (net of fees), and what was asked.
    pub funds: Option<Decimal>,
    pub specified_funds: Option<Decimal>,
    pub tif: Tif,
    pub expire_ms: Option<i64>,
    pub post_only: bool,
    pub stp: Stp,
    pub stop: Option<(StopKind, Decimal)>,
    pub client_oid: Option<String>,
    pub created_ms: i64,
    pub done_ms: Option<i64>,
    pub done_reason: Option<&'static str>,
    pub reject_reason: Option<&'static str>,
    pub status: Status,
    pub filled_size: Decimal,
    pub executed_value: Decimal,
    pub fill_fees: Decimal,
    /// The rates of the fee tier when the order was placed; fills are charged at these.
    pub maker_rate: Decimal,
    pub taker_rate: Decimal,
    /// What the order holds now (quote for a buy, base for a sell) and that hold's id.
    pub hold: Decimal,
    pub hold_id: Option<String>,
    pub hold_created_ms: i64,
    pub hold_updated_ms: i64,
    /// Market orders: what they may spend while they match (quote with fees for a buy, base
    /// for a sell); held until they finish.
    pub reserve: Option<Decimal>,
}

impl Order {
    /// Base still to fill (limit and stop orders, market orders by size).
    pub fn remaining(&self) -> Decimal {
        self.size.map_or(Decimal::ZERO, |size| (size - self.filled_size).max(Decimal::ZERO))
    }

    pub fn is_open(&self) -> bool {
        matches!(self.status, Status::Open | Status::Active | Status::Pending)
    }
}

pub struct Fill {
    pub trade_id: u64,
    pub order_id: String,
    pub product: usize,
    pub liquidity: char,
    pub price: Decimal,
    pub size: Decimal,
    pub fee: Decimal,
    pub at_ms: i64,
    pub side: Side,
    pub usd_volume: Decimal,
}

pub struct Trade {
    pub id: u64,
    pub at_ms: i64,
    pub price: Decimal,
    pub size: Decimal,
    /// The maker's side, as the exchange reports it.
    pub side: Side,
    pub maker_order_id: String,
    pub taker_order_id: String,
    /// The product's sequence at the trade (the feed's `match`).
    pub sequence: u64,
}

/// One candle, prices in the product's ticks and volume in base increments, so 48 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candle {
    pub start_s: i64,
    pub low: i64,
    pub high: i64,
    pub open: i64,
    pub close: i64,
    pub volume: i64,
}

pub struct Market {
    pub book: Book,
    pub trades: VecDeque<Trade>,
    pub minutes: VecDeque<Candle>,
    pub hours: VecDeque<Candle>,
    /// Where the simulated traders think the price is, in ticks.
    pub fair_ticks: i64,
    /// Stop orders waiting for their trigger, by key.
    pub stops: Vec<u64>,
    /// The simulated traders' resting orders, oldest first (the oldest go as new ones come).
    pub makers: VecDeque<u64>,
    /// The last event's sequence number (`journal.rs`): the feed's and the REST book's.
    pub sequence: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferKind {
    Deposit,
    Withdraw,
}

pub struct Transfer {
    pub key: u64,
    pub id: String,
    pub profile: usize,
    pub kind: TransferKind,
    pub currency: usize,
    pub amount: Decimal,
    pub fee: Decimal,
    pub created_ms: i64,
    /// When it completes (funds credited for a deposit, sent for a withdrawal).
    pub payout_ms: i64,
    pub completed: bool,
    /// `coinbase_account_id`, `payment_method_id` or `crypto_address` and what it names.
    pub via: Via,
    pub nonce: Option<String>,
    pub hold_id: Option<String>,
}

#[derive(Clone, Debug)]
pub enum Via {
    CoinbaseAccount(String),
    PaymentMethod(String),
    Crypto { address: String, destination_tag: Option<String>, network: &'static str, hash: String },
}

pub struct Conversion {
    pub key: u64,
    pub id: String,
    pub profile: usize,
    pub from: usize,
    pub to: usize,
    pub amount: Decimal,
    pub at_ms: i64,
    pub nonce: Option<String>,
}

/// A Coinbase (retail) wallet the exchange account deposits from and withdraws to: outside
/// the exchange, so moving funds to or from it is a deposit or a withdrawal.
pub struct Wallet {
    pub id: String,
    pub currency: usize,
    pub balance: Decimal,
}

/// The background market's settings (the control port changes them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MarketSettings {
    pub paused: bool,
    /// Steps of every product's market per sandbox second.
    pub rate: f64,
}

pub struct State {
    pub users: Vec<User>,
    pub profiles: Vec<Profile>,
    pub accounts: Vec<Account>,
    pub orders: HashMap<u64, Order>,
    /// Keys of the orders not done (pending, open, or stops waiting), in placement order.
    pub open: BTreeSet<u64>,
    /// How many orders each `(profile, product)` has open, for the exchange's limit.
    pub open_counts: HashMap<(usize, usize), usize>,
    pub order_ids: HashMap<String, u64>,
    /// `(profile, client_oid)` → order key.
    pub client_oids: HashMap<(usize, String), u64>,
    /// Done orders of real users in the order they finished, for retention.
    pub done: VecDeque<u64>,
    pub markets: Vec<Market>,
    pub transfers: VecDeque<Transfer>,
    /// Keys of transfers still pending (few: they complete within minutes).
    pub pending_transfers: Vec<u64>,
    pub conversions: VecDeque<Conversion>,
    pub wallets: Vec<Wallet>,
    pub payment_method_id: String,
    pub ids: Ids,
    pub rng: Rng,
    pub next_order_key: u64,
    pub next_trade_id: u64,
    pub next_ledger_id: u64,
    pub next_transfer_key: u64,
    /// Fees taken by the exchange per currency: where funds go that leave every account.
    pub fees_collected: Vec<Decimal>,
    /// Deposited minus withdrawn per currency, so funds conservation can be checked.
    pub net_deposits: Vec<Decimal>,
    /// Converted in minus converted out per currency (USD↔USDC with the exchange).
    pub net_conversions: Vec<Decimal>,
    pub settings: MarketSettings,
    /// When the background market steps next (sandbox ms).
    pub next_step_ms: i64,
    pub steps: u64,
    /// The feed's inbox while it listens to the engine's events.
    pub tap: Option<super::events::Tap>,
    /// The order forgotten last: a market order that filled nothing is gone before its own
    /// `POST /orders` answers, and that answer is still the order.
    pub last_forgotten: Option<Order>,
}

impl State {
    pub fn new(seed: u64, settings: MarketSettings) -> State {
        State {
            users: Vec::new(),
            profiles: Vec::new(),
            accounts: Vec::new(),
            orders: HashMap::new(),
            open: BTreeSet::new(),
            open_counts: HashMap::new(),
            order_ids: HashMap::new(),
            client_oids: HashMap::new(),
            done: VecDeque::new(),
            markets: Vec::new(),
            transfers: VecDeque::new(),
            pending_transfers: Vec::new(),
            conversions: VecDeque::new(),
            wallets: Vec::new(),
            payment_method_id: String::new(),
            ids: Ids::new(seed, 0xC0B),
            rng: Rng::new(seed ^ 0x00C0_FFEE),
            next_order_key: 1,
            next_trade_id: 1,
            next_ledger_id: 1,
            next_transfer_key: 1,
            fees_collected: vec![Decimal::ZERO; CURRENCIES.len()],
            net_deposits: vec![Decimal::ZERO; CURRENCIES.len()],
            net_conversions: vec![Decimal::ZERO; CURRENCIES.len()],
            settings,
            next_step_ms: 0,
            steps: 0,
            tap: None,
            last_forgotten: None,
        }
    }

    pub fn add_user(&mut self, simulated: bool) -> usize {
        let id = self.ids.hex(24);
        self.users.push(User { id, simulated });
        self.users.len() - 1
    }

    /// A profile with an account in every currency, holding `balances` (by currency index).
    pub fn add_profile(&mut self, user: usize, name: &str, is_default: bool, created_ms: i64) -> usize {
        let profile = self.profiles.len();
        let mut accounts = Vec::with_capacity(CURRENCIES.len());
        for currency in 0..CURRENCIES.len() {
            let id = self.ids.uuid();
            self.accounts.push(Account {
                id,
                profile,
                currency,
                balance: Decimal::ZERO,
                hold: Decimal::ZERO,
                ledger: VecDeque::new(),
            });
            accounts.push(self.accounts.len() - 1);
        }
        let id = self.ids.uuid();
        self.profiles.push(Profile {
            id,
            user,
            name: name.to_owned(),
            is_default,
            active: true,
            created_ms,
            accounts,
            fills: VecDeque::new(),
            volume_30d: Decimal::ZERO,
            window_start: 0,
        });
        profile
    }

    pub fn account_of(&self, profile: usize, currency: usize) -> usize {
        self.profiles[profile].accounts[currency]
    }

    pub fn account(&self, profile: usize, currency: usize) -> &Account {
        &self.accounts[self.account_of(profile, currency)]
    }

    pub fn keeps_records(&self, profile: usize) -> bool {
        !self.users[self.profiles[profile].user].simulated
    }

    pub fn user_of(&self, profile: usize) -> usize {
        self.profiles[profile].user
    }

    fn ledger(&mut self, account: usize, at_ms: i64, amount: Decimal, kind: &'static str, details: Details) {
        let profile = self.accounts[account].profile;
        if !self.keeps_records(profile) {
            return;
        }
        let id = self.next_ledger_id;
        self.next_ledger_id += 1;
        let entry = &mut self.accounts[account];
        entry.ledger.push_back(LedgerEntry { id, at_ms, amount, balance: entry.balance, kind, details });
        if entry.ledger.len() > caps::LEDGER {
            entry.ledger.pop_front();
        }
    }

    /// Adds `amount` (≥ 0) to an account's balance, with its ledger entry. The caller has
    /// checked it [`fits`](State::fits); the sum saturates rather than panic all the same.
    pub fn credit(&mut self, account: usize, amount: Decimal, at_ms: i64, kind: &'static str, details: Details) {
        if amount.is_zero() {
            return;
        }
        let balance = &mut self.accounts[account].balance;
        *balance = balance.saturating_add(amount);
        self.ledger(account, at_ms, amount, kind, details);
    }

    /// Takes `amount` (≥ 0) from an account's balance, with its ledger entry. The caller has
    /// checked it is there (released from a hold or available).
    pub fn debit(&mut self, account: usize, amount: Decimal, at_ms: i64, kind: &'static str, details: Details) {
        if amount.is_zero() {
            return;
        }
        let balance = &mut self.accounts[account].balance;
        *balance = balance.saturating_sub(amount);
        self.ledger(account, at_ms, -amount, kind, details);
    }

    /// Moves an account's hold by `delta` (the difference between what a hold was and is).
    pub fn adjust_hold(&mut self, account: usize, delta: Decimal) {
        let hold = &mut self.accounts[account].hold;
        *hold = hold.saturating_add(delta);
    }

    /// What deposits still pending will bring into an account when they complete.
    pub fn incoming(&self, account: usize) -> Decimal {
        self.pending_transfers
            .iter()
            .filter_map(|k| self.transfer(*k))
            .filter(|t| t.kind == TransferKind::Deposit && self.account_of(t.profile, t.currency) == account)
            .fold(Decimal::ZERO, |sum, t| sum.saturating_add(t.amount))
    }

    /// Whether crediting `amount` to an account keeps it (with the deposits it awaits) within
    /// [`caps::BALANCE`].
    pub fn fits(&self, account: usize, amount: Decimal) -> bool {
        self.accounts[account]
            .balance
            .checked_add(self.incoming(account))
            .and_then(|b| b.checked_add(amount))
            .is_some_and(|after| after <= caps::BALANCE)
    }

    /// The account an order's hold sits on: quote for a buy, base for a sell.
    pub fn hold_account(&self, order: &Order) -> usize {
        let product = &PRODUCTS[order.product];
        let currency = match order.side {
            Side::Buy => product.quote,
            Side::Sell => product.base,
        };
        self.account_of(order.profile, currency)
    }

    /// Sets an order's hold to `amount`, moving its account's hold by the difference.
    pub fn set_hold(&mut self, key: u64, amount: Decimal, now_ms: i64) {
        let Some(order) = self.orders.get(&key) else { return };
        let account = self.hold_account(order);
        let delta = amount - order.hold;
        if delta.is_zero() {
            return;
        }
        let new_id = (order.hold_id.is_none() && !amount.is_zero()).then(|| self.ids.uuid());
        self.adjust_hold(account, delta);
        if let Some(order) = self.orders.get_mut(&key) {
            order.hold = amount;
            if let Some(id) = new_id {
                order.hold_id = Some(id);
                order.hold_created_ms = now_ms;
            }
            order.hold_updated_ms = now_ms;
        }
    }

    /// Brings every profile's 30-day volume up to `now_ms`.
    pub fn slide_volume_windows(&mut self, now_ms: i64) {
        let since = now_ms - 30 * 86_400_000;
        for profile in &mut self.profiles {
            profile.slide_window(since);
        }
    }

    /// The 30-day USD volume of a profile's user (every profile of it), as of the last
    /// [`State::slide_volume_windows`].
    pub fn usd_volume(&self, profile: usize) -> Decimal {
        let user = self.user_of(profile);
        self.profiles.iter().filter(|p| p.user == user).fold(Decimal::ZERO, |sum, p| sum.saturating_add(p.volume_30d))
    }

    pub fn fee_rates(&self, profile: usize) -> (Decimal, Decimal) {
        if !self.keeps_records(profile) {
            // The simulated market makers trade on the top tier.
            return (Decimal::ZERO, Decimal::ZERO);
        }
        catalog::fee_rates(self.usd_volume(profile))
    }

    /// Sum of every account's balance per currency: with the fees taken and the net deposits,
    /// what funds conservation is checked against.
    pub fn totals(&self) -> Vec<Decimal> {
        let mut totals = vec![Decimal::ZERO; CURRENCIES.len()];
        for account in &self.accounts {
            let total = &mut totals[account.currency];
            *total = total.saturating_add(account.balance);
        }
        totals
    }

    /// Makes everything due by `now_ms` happen: market steps, GTT expiries, transfers
    /// completing, done orders ageing out.
    pub fn run_due(&mut self, now_ms: i64) {
        self.expire_orders(now_ms);
        self.complete_transfers(now_ms);
        self.step_market_until(now_ms);
        self.forget_old_orders(now_ms);
    }

    /// When something is due next, for the background task.
    pub fn next_due(&self) -> Option<i64> {
        let steps = (!self.settings.paused).then_some(self.next_step_ms);
        let expiries = self.open.iter().filter_map(|k| self.orders.get(k)?.expire_ms).min();
        let transfers = self.pending_transfers.iter().filter_map(|k| self.transfer(*k)).map(|t| t.payout_ms).min();
        [steps, expiries, transfers].into_iter().flatten().min()
    }

    /// Drops done orders past their age or the count cap (with their client_oid).
    fn forget_old_orders(&mut self, now_ms: i64) {
        while let Some(&key) = self.done.front() {
            let expired = self
                .orders
                .get(&key)
                .is_none_or(|o| o.done_ms.is_some_and(|done| now_ms - done > caps::DONE_ORDER_AGE_MS));
            if !expired && self.done.len() <= caps::DONE_ORDERS {
                break;
            }
            self.done.pop_front();
            self.forget_order(key);
        }
    }

    pub fn forget_order(&mut self, key: u64) {
        if let Some(order) = self.orders.remove(&key) {
            self.order_ids.remove(&order.id);
            if let Some(oid) = &order.client_oid {
                self.client_oids.remove(&(order.profile, oid.clone()));
            }
            self.last_forgotten = Some(order);
        }
    }

    pub fn order_by_ref(&self, profile: usize, reference: &str) -> Option<u64> {
        match reference.strip_prefix("client:") {
            Some(oid) => self.client_oids.get(&(profile, oid.to_ascii_lowercase())).copied(),
            None => self.order_ids.get(&normalize_uuid(reference)?).copied(),
        }
        .filter(|key| self.orders.get(key).is_some_and(|o| o.profile == profile))
    }
}

/// The refusal of what would take a balance of `currency` past [`caps::BALANCE`].
pub fn over_balance_cap(currency: usize) -> CbError {
    CbError::bad_request(format!(
        "balance is too large. Maximum balance is {} {}",
        caps::BALANCE,
        CURRENCIES[currency].id
    ))
}

/// A UUID in its dashed lower-case form; the exchange accepts one with or without dashes.
pub fn normalize_uuid(text: &str) -> Option<String> {
    let hex: String = text.trim().chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let h = hex.to_ascii_lowercase();
    Some(format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32]))
}
