//! The Coinbase Exchange tab: the generic views until its simulator and its own views land
//! (candles already chart through the generic time-series view).

use crate::tui::services::ServiceConsole;

pub struct Coinbase;

impl ServiceConsole for Coinbase {}
