//! Money in and out of the exchange: deposits from a Coinbase wallet (at once) or a bank
//! (completing on the sandbox clock), withdrawals to a crypto address (held, then sent when the
//! network confirms), to a wallet or to a bank, and USD↔USDC conversions. A withdrawal holds
//! its funds until it completes; the network fee leaves the exchange with it.

use rust_decimal::Decimal;

use super::catalog::{self, CURRENCIES, USD, USDC};
use super::errors::CbError;
use super::state::{caps, over_balance_cap, Conversion, Details, State, Transfer, TransferKind, Via};

/// Sandbox minutes a bank deposit or withdrawal takes to complete.
const BANK_MINUTES: i64 = 5;
/// The most one deposit may bring (the sandbox's own limit, far above any real one): a bank
/// deposit draws on no balance, so without it a request could push an account past what a
/// decimal holds.
pub const MAX_DEPOSIT: Decimal = rust_decimal_macros::dec!(1_000_000_000_000);

/// Where a withdrawal goes or a deposit comes from, as asked.
pub enum Endpoint<'a> {
    Wallet(&'a str),
    Bank(&'a str),
    Crypto { address: &'a str, destination_tag: Option<&'a str>, network: Option<&'a str>, add_fee_to_total: bool },
}

fn check_amount(amount: Decimal, currency: usize) -> Result<(), CbError> {
    if amount <= Decimal::ZERO {
        return Err(CbError::bad_request("amount must be a positive number"));
    }
    let precision = CURRENCIES[currency].max_precision;
    if amount.checked_rem(precision).is_none_or(|rest| !rest.is_zero()) {
        return Err(CbError::bad_request(format!("amount is too accurate. Smallest unit is {precision}")));
    }
    Ok(())
}

impl State {
    pub fn transfer(&self, key: u64) -> Option<&Transfer> {
        // Keys increase along the deque, so the position is found by search.
        let at = self.transfers.binary_search_by_key(&key, |t| t.key).ok()?;
        self.transfers.get(at)
    }

    fn wallet_index(&self, id: &str, currency: usize) -> Result<usize, CbError> {
        let index = self.wallets.iter().position(|w| w.id == id).ok_or_else(CbError::not_found)?;
        if self.wallets[index].currency != currency {
            return Err(CbError::bad_request("currency does not match the Coinbase account's currency"));
        }
        Ok(index)
    }

    fn existing_by_nonce(&self, profile: usize, nonce: Option<&str>) -> Option<u64> {
        let nonce = nonce?;
        self.transfers.iter().rev().find(|t| t.profile == profile && t.nonce.as_deref() == Some(nonce)).map(|t| t.key)
    }

    fn push_transfer(&mut self, transfer: Transfer) -> u64 {
        let key = transfer.key;
        if !transfer.completed {
            self.pending_transfers.push(key);
        }
        self.transfers.push_back(transfer);
        while self.transfers.len() > caps::TRANSFERS && self.transfers.front().is_some_and(|t| t.completed) {
            self.transfers.pop_front();
        }
        key
    }

    fn next_transfer_key(&mut self) -> u64 {
        let key = self.next_transfer_key;
        self.next_transfer_key += 1;
        key
    }

    /// `POST /deposits/coinbase-account` and `/deposits/payment-method`.
    pub fn deposit(
        &mut self,
        profile: usize,
        amount: Decimal,
        currency: usize,
        from: &Endpoint<'_>,
        now_ms: i64,
    ) -> Result<u64, CbError> {
        check_amount(amount, currency)?;
        if amount > MAX_DEPOSIT {
            return Err(CbError::bad_request(format!("amount is over the sandbox's deposit limit of {MAX_DEPOSIT}")));
        }
        if self.pending_transfers.len() >= caps::TRANSFERS {
            return Err(CbError::bad_request("Too many pending transfers"));
        }
        // With the deposits still on their way, the balance may not pass the cap.
        if !self.fits(self.account_of(profile, currency), amount) {
            return Err(over_balance_cap(currency));
        }
        let (via, payout_ms) = match from {
            Endpoint::Wallet(id) => {
                let wallet = self.wallet_index(id, currency)?;
                if self.wallets[wallet].balance < amount {
                    return Err(CbError::insufficient_funds());
                }
                self.wallets[wallet].balance = self.wallets[wallet].balance.saturating_sub(amount);
                (Via::CoinbaseAccount((*id).to_owned()), now_ms)
            }
            Endpoint::Bank(id) => {
                if *id != self.payment_method_id {
                    return Err(CbError::not_found());
                }
                if currency != USD {
                    return Err(CbError::bad_request("this payment method only accepts USD"));
                }
                (Via::PaymentMethod((*id).to_owned()), now_ms + BANK_MINUTES * 60_000)
            }
            Endpoint::Crypto { .. } => {
                return Err(CbError::bad_request("a deposit comes from a Coinbase account or a payment method"))
            }
        };
        let key = self.next_transfer_key();
        let id = self.ids.uuid();
        self.push_transfer(Transfer {
            key,
            id,
            profile,
            kind: TransferKind::Deposit,
            currency,
            amount,
            fee: Decimal::ZERO,
            created_ms: now_ms,
            payout_ms,
            completed: false,
            via,
            nonce: None,
            hold_id: None,
        });
        self.complete_transfers(now_ms);
        Ok(key)
    }

    /// `POST /withdrawals/crypto`, `/withdrawals/coinbase-account`, `/withdrawals/payment-method`.
    pub fn withdraw(
        &mut self,
        profile: usize,
        amount: Decimal,
        currency: usize,
        to: &Endpoint<'_>,
        nonce: Option<&str>,
        now_ms: i64,
    ) -> Result<u64, CbError> {
        if let Some(key) = self.existing_by_nonce(profile, nonce) {
            return Ok(key);
        }
        check_amount(amount, currency)?;
        if self.pending_transfers.len() >= caps::TRANSFERS {
            return Err(CbError::bad_request("Too many pending transfers"));
        }
        let spec = &CURRENCIES[currency];
        let (via, payout_ms, debit, fee) = match to {
            Endpoint::Wallet(id) => {
                let wallet = self.wallet_index(id, currency)?;
                // The wallet is a balance too: it may not pass the cap either.
                if self.wallets[wallet].balance.checked_add(amount).is_none_or(|b| b > caps::BALANCE) {
                    return Err(over_balance_cap(currency));
                }
                (Via::CoinbaseAccount((*id).to_owned()), now_ms, amount, Decimal::ZERO)
            }
            Endpoint::Bank(id) => {
                if *id != self.payment_method_id {
                    return Err(CbError::not_found());
                }
                if currency != USD {
                    return Err(CbError::bad_request("this payment method only accepts USD"));
                }
                (Via::PaymentMethod((*id).to_owned()), now_ms + BANK_MINUTES * 60_000, amount, Decimal::ZERO)
            }
            Endpoint::Crypto { address, destination_tag, network, add_fee_to_total } => {
                if spec.fiat {
                    return Err(CbError::bad_request(format!("{} cannot be withdrawn to a crypto address", spec.id)));
                }
                if network.is_some_and(|n| !n.eq_ignore_ascii_case(spec.network)) {
                    return Err(CbError::bad_request("Invalid network"));
                }
                if !catalog::address_fits(spec.network, address) {
                    return Err(CbError::bad_request("invalid crypto_address"));
                }
                let fee = spec.network_fee;
                let debit = if *add_fee_to_total {
                    amount.checked_add(fee).ok_or_else(CbError::insufficient_funds)?
                } else {
                    amount
                };
                if debit <= fee {
                    return Err(CbError::bad_request("amount is too small to cover the network fee"));
                }
                let hash = self.ids.hex(64);
                let via = Via::Crypto {
                    address: (*address).to_owned(),
                    destination_tag: destination_tag.map(str::to_owned),
                    network: spec.network,
                    hash,
                };
                (via, now_ms + spec.confirm_minutes * 60_000, debit, fee)
            }
        };
        let account = self.account_of(profile, currency);
        if self.accounts[account].available() < debit {
            return Err(CbError::insufficient_funds());
        }
        self.adjust_hold(account, debit);
        let key = self.next_transfer_key();
        let id = self.ids.uuid();
        let hold_id = Some(self.ids.uuid());
        self.push_transfer(Transfer {
            key,
            id,
            profile,
            kind: TransferKind::Withdraw,
            currency,
            amount: debit,
            fee,
            created_ms: now_ms,
            payout_ms,
            completed: false,
            via,
            nonce: nonce.map(str::to_owned),
            hold_id,
        });
        self.complete_transfers(now_ms);
        Ok(key)
    }

    /// Completes the transfers due by `now_ms`: a deposit credits the account, a withdrawal
    /// releases its hold and takes the funds (and a wallet receives them).
    pub fn complete_transfers(&mut self, now_ms: i64) {
        let due: Vec<u64> = self
            .pending_transfers
            .iter()
            .copied()
            .filter(|k| self.transfer(*k).is_some_and(|t| t.payout_ms <= now_ms))
            .collect();
        for key in due {
            self.pending_transfers.retain(|k| *k != key);
            let Ok(at) = self.transfers.binary_search_by_key(&key, |t| t.key) else { continue };
            let t = &mut self.transfers[at];
            t.completed = true;
            let (profile, currency, amount, fee, kind, id, payout) =
                (t.profile, t.currency, t.amount, t.fee, t.kind, t.id.clone(), t.payout_ms);
            let wallet = match &t.via {
                Via::CoinbaseAccount(wallet) => self.wallets.iter().position(|w| &w.id == wallet),
                _ => None,
            };
            let account = self.account_of(profile, currency);
            match kind {
                TransferKind::Deposit => {
                    let details = Details::Transfer { transfer_id: id, transfer_type: "deposit" };
                    self.credit(account, amount, payout, "transfer", details);
                    self.net_deposits[currency] = self.net_deposits[currency].saturating_add(amount);
                }
                TransferKind::Withdraw => {
                    self.adjust_hold(account, -amount);
                    // What leaves for the address and the network fee are two entries, as the
                    // exchange's ledger shows them: each movement on its own line.
                    let details = || Details::Transfer { transfer_id: id.clone(), transfer_type: "withdraw" };
                    let sent = amount.saturating_sub(fee);
                    self.debit(account, sent, payout, "transfer", details());
                    self.debit(account, fee, payout, "fee", details());
                    self.net_deposits[currency] = self.net_deposits[currency].saturating_sub(sent);
                    self.fees_collected[currency] = self.fees_collected[currency].saturating_add(fee);
                    if let Some(wallet) = wallet {
                        self.wallets[wallet].balance = self.wallets[wallet].balance.saturating_add(sent);
                    }
                }
            }
        }
    }

    /// `POST /conversions`: USD and USDC, one for one, no fee.
    pub fn convert(
        &mut self,
        profile: usize,
        from: usize,
        to: usize,
        amount: Decimal,
        nonce: Option<&str>,
        now_ms: i64,
    ) -> Result<u64, CbError> {
        if let Some(existing) = nonce
            .and_then(|n| self.conversions.iter().rev().find(|c| c.profile == profile && c.nonce.as_deref() == Some(n)))
        {
            return Ok(existing.key);
        }
        if !matches!((from, to), (USD, USDC) | (USDC, USD)) {
            return Err(CbError::bad_request("Invalid conversion pair; conversions are between USD and USDC"));
        }
        check_amount(amount, USD)?;
        let source = self.account_of(profile, from);
        if self.accounts[source].available() < amount {
            return Err(CbError::insufficient_funds());
        }
        let target = self.account_of(profile, to);
        if !self.fits(target, amount) {
            return Err(over_balance_cap(to));
        }
        let key = self.next_transfer_key();
        let id = self.ids.uuid();
        let details = || Details::Conversion { conversion_id: id.clone() };
        self.debit(source, amount, now_ms, "conversion", details());
        self.credit(target, amount, now_ms, "conversion", details());
        self.net_conversions[from] = self.net_conversions[from].saturating_sub(amount);
        self.net_conversions[to] = self.net_conversions[to].saturating_add(amount);
        self.conversions.push_back(Conversion {
            key,
            id,
            profile,
            from,
            to,
            amount,
            at_ms: now_ms,
            nonce: nonce.map(str::to_owned),
        });
        if self.conversions.len() > caps::TRANSFERS {
            self.conversions.pop_front();
        }
        Ok(key)
    }
}
