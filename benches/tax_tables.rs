//! Loading Avalara's ZIP5 rate tables (issue 30): all 51 files of `../shared/data/tax/avalara-zip5`
//! (40,677 ZIPs, 2.7 MB) as `opsdeck sandbox --tax-rates` reads them, and the built-in tables a
//! sandbox that loads none uses (parsed once per process, so after the first call a clone of an
//! `Arc`). Goal: all 51 files in at most 150 ms. Run with `cargo bench --bench tax_tables`.

#![allow(clippy::unwrap_used, reason = "a benchmark panics on failure")]

use divan::black_box;
use opsdeck::sandbox::tax;

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 20)]
fn load_all_51_state_tables(bencher: divan::Bencher) {
    let Some(dir) = opsdeck::shared_data::ZIP5_TABLES.for_test("bench load_all_51_state_tables") else { return };
    bencher.bench(|| black_box(tax::load_zip5(&dir).unwrap()));
}

#[divan::bench]
fn builtin_tables_when_none_are_loaded() -> std::sync::Arc<tax::Table> {
    tax::builtin().unwrap()
}
