//! The Ably simulator. Being written.

use axum::Router;

use super::Simulator;
use crate::catalog::Service;

pub struct AblySimulator;

impl AblySimulator {
    pub fn new(_seed: u64) -> AblySimulator {
        AblySimulator
    }
}

impl Simulator for AblySimulator {
    fn service(&self) -> Service {
        Service::Ably
    }
    fn router(&self) -> Router {
        Router::new()
    }
    fn reset(&self) {}
}
