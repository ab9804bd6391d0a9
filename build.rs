//! Writes the US ZIP table the EasyPost simulator verifies addresses against: one line per active
//! ZIP of the `zipcodes` crate (USPS's list with GeoNames coordinates) — zip, city, state,
//! latitude, longitude, time zone, other accepted city names — so the simulator reads it with
//! `include_str!` and borrows every string instead of parsing 40,000 JSON records at run time.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut table = String::new();
    let mut rows: Vec<&zipcodes::Zipcode> = zipcodes::database().iter().filter(|z| z.active).collect();
    rows.sort_by(|a, b| a.zip_code.cmp(&b.zip_code));
    for z in rows {
        let (Ok(latitude), Ok(longitude)) = (z.lat.parse::<f64>(), z.long.parse::<f64>()) else { continue };
        let clean = |text: &str| text.replace(['\t', '\n', '|'], " ");
        let acceptable: Vec<String> = z.acceptable_cities.iter().map(|c| clean(c)).collect();
        let _ = writeln!(
            table,
            "{}\t{}\t{}\t{latitude}\t{longitude}\t{}\t{}",
            z.zip_code,
            clean(&z.city),
            z.state,
            clean(&z.timezone),
            acceptable.join("|")
        );
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("us_zips.tsv");
    std::fs::write(&out, table).expect("OUT_DIR is writable");
}
