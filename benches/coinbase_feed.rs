//! Placeholder replaced by the benchmark of the Coinbase feed (being written).
fn main() {}
