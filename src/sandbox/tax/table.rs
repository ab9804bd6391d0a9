//! The built-in rate table: three hand-written CSV files embedded in the binary, parsed once on
//! first use. A sandbox may add a user's ZIP5 tables to it ([`super::zip5`]).
//!
//! A mistake in a shipped file must not take the sandbox down: parsing returns an error, which
//! `tests::shipped_table_parses` fails on and which fails only the build of a taxing simulator
//! (its requests get a 500 saying why).

use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, LazyLock};

use rust_decimal::Decimal;

use crate::format::plural;

const US_STATES: &str = include_str!("data/us_states.csv");
const US_ZIPS: &str = include_str!("data/us_zips.csv");
const INTERNATIONAL: &str = include_str!("data/international.csv");

/// How a state treats clothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClothingRule {
    Taxable,
    Exempt,
    /// The state part is exempt when the unit price is below the threshold (New York).
    StateExemptUnder(Decimal),
    /// The first part of each unit's price is exempt, the excess taxable (Massachusetts).
    ExemptFirst(Decimal),
}

/// How a state treats groceries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroceryRule {
    Taxable,
    Exempt,
    /// The state part uses this rate; local parts apply in full.
    Reduced(Decimal),
}

/// Where an intrastate sale is taxed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sourcing {
    Origin,
    Destination,
}

/// One row of `us_states.csv`.
#[derive(Clone, Debug)]
pub struct StateRow {
    pub code: String,
    pub name: String,
    pub rate: Decimal,
    pub freight_taxable: bool,
    pub sourcing: Sourcing,
    /// Member of the Streamlined Sales Tax agreement (TaxJar adds country fields for these).
    pub sst: bool,
    pub clothing: ClothingRule,
    pub grocery: GroceryRule,
    pub digital_taxable: bool,
    pub saas_taxable: bool,
    pub services_taxable: bool,
    /// Inclusive ranges of 3-digit ZIP prefixes.
    pub zip_prefixes: Vec<(u16, u16)>,
    pub source: String,
    pub date: String,
}

/// One row of `us_zips.csv`.
#[derive(Clone, Debug)]
pub struct ZipRow {
    pub zip: String,
    pub state: String,
    pub county: String,
    pub city: String,
    pub state_rate: Decimal,
    pub county_rate: Decimal,
    pub city_rate: Decimal,
    pub specials: Vec<(String, Decimal)>,
    pub source: String,
    pub date: String,
}

/// One row of `international.csv`: a Canadian province or a country.
#[derive(Clone, Debug)]
pub struct InternationalRow {
    pub country: String,
    /// Province code for Canada, empty for a country-wide row.
    pub region: String,
    pub name: String,
    /// GST for Canada and Australia, standard VAT elsewhere.
    pub country_rate: Decimal,
    /// PST, or the provincial part of HST.
    pub provincial_rate: Decimal,
    pub qst_rate: Decimal,
    pub reduced_rate: Decimal,
    pub super_reduced_rate: Decimal,
    pub parking_rate: Decimal,
    pub source: String,
    pub date: String,
}

/// What a user's tables added: for the sandbox's banner and its control port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zip5Summary {
    /// What the user named: a file or a folder.
    pub path: PathBuf,
    /// The files read, in the order read (a folder's in name order).
    pub files: Vec<PathBuf>,
    pub zips: usize,
    /// The months the file names carry (`2026-02`), each once; empty when no name carries one.
    pub months: Vec<String>,
}

impl Zip5Summary {
    /// `Avalara ZIP5 tables 2026-02: 51 files, 40,677 ZIPs (../shared/data/tax/avalara-zip5)`.
    pub fn describe(&self) -> String {
        let months = if self.months.is_empty() { String::new() } else { format!(" {}", self.months.join(", ")) };
        format!(
            "Avalara ZIP5 tables{months}: {}, {} ({})",
            plural(self.files.len(), "file"),
            plural(self.zips, "ZIP"),
            self.path.display()
        )
    }
}

/// The whole table, indexed.
#[derive(Clone, Debug)]
pub struct Table {
    pub states: Vec<StateRow>,
    pub zips: Vec<ZipRow>,
    pub international: Vec<InternationalRow>,
    /// The ZIP5 tables a user loaded into this one, if any.
    pub zip5: Option<Zip5Summary>,
    state_index: HashMap<String, usize>,
    zip_index: HashMap<String, usize>,
}

impl Table {
    pub fn state(&self, code: &str) -> Option<&StateRow> {
        self.state_index.get(code).map(|&i| &self.states[i])
    }

    pub fn zip(&self, zip5: &str) -> Option<&ZipRow> {
        self.zip_index.get(zip5).map(|&i| &self.zips[i])
    }

    /// The state whose ZIP prefixes include this 5-digit ZIP.
    pub fn state_of_zip(&self, zip5: &str) -> Option<&StateRow> {
        let prefix: u16 = zip5.get(0..3)?.parse().ok()?;
        self.states.iter().find(|s| s.zip_prefixes.iter().any(|&(lo, hi)| (lo..=hi).contains(&prefix)))
    }

    /// A Canadian province or a country-wide row.
    pub fn international(&self, country: &str, region: &str) -> Option<&InternationalRow> {
        self.international.iter().find(|r| r.country == country && (r.region.is_empty() || r.region == region))
    }
}

static TABLE: LazyLock<Result<Arc<Table>, String>> =
    LazyLock::new(|| parse(US_STATES, US_ZIPS, INTERNATIONAL).map(Arc::new));

/// The shipped table, or the reason it could not be read.
pub fn shipped() -> Result<&'static Arc<Table>, String> {
    TABLE.as_ref().map_err(Clone::clone)
}

/// Rows of one CSV file: comments and blank lines skipped, the header checked, fields split.
fn rows<'a>(file: &'static str, text: &'a str, header: &str) -> Result<Vec<(usize, Vec<&'a str>)>, String> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    match lines.next() {
        Some((_, first)) if first.trim() == header => {}
        Some((n, first)) => return Err(format!("{file}:{}: header is `{first}`, expected `{header}`", n + 1)),
        None => return Err(format!("{file}: empty")),
    }
    let width = header.split(',').count();
    lines
        .map(|(n, line)| {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if fields.len() == width {
                Ok((n + 1, fields))
            } else {
                Err(format!("{file}:{}: {} fields, expected {width}", n + 1, fields.len()))
            }
        })
        .collect()
}

fn rate(file: &str, line: usize, field: &str, value: &str) -> Result<Decimal, String> {
    let parsed = Decimal::from_str(value).map_err(|_| format!("{file}:{line}: {field} `{value}` is not a number"))?;
    if parsed < Decimal::ZERO || parsed >= Decimal::ONE {
        return Err(format!("{file}:{line}: {field} {value} is not a rate between 0 and 1"));
    }
    Ok(parsed)
}

fn boolean(file: &str, line: usize, field: &str, value: &str) -> Result<bool, String> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("{file}:{line}: {field} `{value}` is not true or false")),
    }
}

fn taxable(file: &str, line: usize, field: &str, value: &str) -> Result<bool, String> {
    match value {
        "taxable" => Ok(true),
        "exempt" => Ok(false),
        _ => Err(format!("{file}:{line}: {field} `{value}` is not taxable or exempt")),
    }
}

/// Every row names where its numbers come from and when they were true.
fn provenance(file: &str, line: usize, source: &str, date: &str) -> Result<(String, String), String> {
    if source.is_empty() {
        return Err(format!("{file}:{line}: no source"));
    }
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(date, format).map_err(|_| format!("{file}:{line}: date `{date}` is not YYYY-MM-DD"))?;
    Ok((source.to_owned(), date.to_owned()))
}

fn threshold(file: &str, line: usize, value: &str) -> Result<Decimal, String> {
    let parsed = Decimal::from_str(value).map_err(|_| format!("{file}:{line}: threshold `{value}` is not a number"))?;
    if parsed <= Decimal::ZERO {
        return Err(format!("{file}:{line}: threshold {value} must be positive"));
    }
    Ok(parsed)
}

fn clothing(file: &str, line: usize, value: &str) -> Result<ClothingRule, String> {
    match value.split_once(':') {
        None if value == "taxable" => Ok(ClothingRule::Taxable),
        None if value == "exempt" => Ok(ClothingRule::Exempt),
        Some(("state_exempt_under", n)) => Ok(ClothingRule::StateExemptUnder(threshold(file, line, n)?)),
        Some(("exempt_first", n)) => Ok(ClothingRule::ExemptFirst(threshold(file, line, n)?)),
        _ => Err(format!("{file}:{line}: clothing rule `{value}` is unknown")),
    }
}

fn grocery(file: &str, line: usize, value: &str) -> Result<GroceryRule, String> {
    match value.split_once(':') {
        None if value == "taxable" => Ok(GroceryRule::Taxable),
        None if value == "exempt" => Ok(GroceryRule::Exempt),
        Some(("reduced", r)) => Ok(GroceryRule::Reduced(rate(file, line, "grocery", r)?)),
        _ => Err(format!("{file}:{line}: grocery rule `{value}` is unknown")),
    }
}

fn prefixes(file: &str, line: usize, value: &str) -> Result<Vec<(u16, u16)>, String> {
    let bad = || format!("{file}:{line}: zip_prefixes `{value}` is not a list of 3-digit prefixes or ranges");
    let prefix = |p: &str| if p.len() == 3 { p.parse::<u16>().map_err(|_| bad()) } else { Err(bad()) };
    value
        .split_whitespace()
        .map(|part| match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (prefix(lo)?, prefix(hi)?);
                if lo <= hi {
                    Ok((lo, hi))
                } else {
                    Err(bad())
                }
            }
            None => prefix(part).map(|p| (p, p)),
        })
        .collect()
}

fn upper_code(file: &str, line: usize, field: &str, value: &str, len: usize) -> Result<String, String> {
    if value.len() == len && value.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(value.to_owned())
    } else {
        Err(format!("{file}:{line}: {field} `{value}` is not {len} capital letters"))
    }
}

impl Table {
    /// This table with a user's ZIP rows added for every ZIP it does not have yet: the hand-kept
    /// rows of `us_zips.csv` (the vendors' documented examples) win.
    pub(super) fn with_zip5(&self, rows: Vec<ZipRow>, summary: Zip5Summary) -> Table {
        let mut table = self.clone();
        table.zips.reserve(rows.len());
        for row in rows {
            if !table.zip_index.contains_key(&row.zip) {
                table.zip_index.insert(row.zip.clone(), table.zips.len());
                table.zips.push(row);
            }
        }
        table.zip5 = Some(summary);
        table
    }
}

pub(super) fn parse(states_csv: &str, zips_csv: &str, international_csv: &str) -> Result<Table, String> {
    const S: &str = "us_states.csv";
    const Z: &str = "us_zips.csv";
    const I: &str = "international.csv";
    let mut states = Vec::new();
    for (n, f) in rows(
        S,
        states_csv,
        "state,name,rate,freight_taxable,sourcing,sst,clothing,grocery,digital,saas,services,zip_prefixes,source,date",
    )? {
        let (source, date) = provenance(S, n, f[12], f[13])?;
        states.push(StateRow {
            code: upper_code(S, n, "state", f[0], 2)?,
            name: f[1].to_owned(),
            rate: rate(S, n, "rate", f[2])?,
            freight_taxable: boolean(S, n, "freight_taxable", f[3])?,
            sourcing: match f[4] {
                "origin" => Sourcing::Origin,
                "destination" => Sourcing::Destination,
                other => return Err(format!("{S}:{n}: sourcing `{other}` is not origin or destination")),
            },
            sst: boolean(S, n, "sst", f[5])?,
            clothing: clothing(S, n, f[6])?,
            grocery: grocery(S, n, f[7])?,
            digital_taxable: taxable(S, n, "digital", f[8])?,
            saas_taxable: taxable(S, n, "saas", f[9])?,
            services_taxable: taxable(S, n, "services", f[10])?,
            zip_prefixes: prefixes(S, n, f[11])?,
            source,
            date,
        });
    }
    let mut zips = Vec::new();
    for (n, f) in rows(Z, zips_csv, "zip,state,county,city,state_rate,county_rate,city_rate,specials,source,date")? {
        if f[0].len() != 5 || !f[0].bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{Z}:{n}: zip `{}` is not 5 digits", f[0]));
        }
        let mut specials = Vec::new();
        for entry in f[7].split(';').filter(|e| !e.is_empty()) {
            let (name, value) =
                entry.split_once('=').ok_or_else(|| format!("{Z}:{n}: special `{entry}` is not NAME=RATE"))?;
            specials.push((name.trim().to_owned(), rate(Z, n, "special", value.trim())?));
        }
        let (source, date) = provenance(Z, n, f[8], f[9])?;
        zips.push(ZipRow {
            zip: f[0].to_owned(),
            state: upper_code(Z, n, "state", f[1], 2)?,
            county: f[2].to_owned(),
            city: f[3].to_owned(),
            state_rate: rate(Z, n, "state_rate", f[4])?,
            county_rate: rate(Z, n, "county_rate", f[5])?,
            city_rate: rate(Z, n, "city_rate", f[6])?,
            specials,
            source,
            date,
        });
    }
    let mut international = Vec::new();
    for (n, f) in rows(
        I,
        international_csv,
        "country,region,name,country_rate,provincial_rate,qst_rate,reduced_rate,super_reduced_rate,parking_rate,source,date",
    )? {
        let (source, date) = provenance(I, n, f[9], f[10])?;
        international.push(InternationalRow {
            country: upper_code(I, n, "country", f[0], 2)?,
            region: if f[1].is_empty() { String::new() } else { upper_code(I, n, "region", f[1], 2)? },
            name: f[2].to_owned(),
            country_rate: rate(I, n, "country_rate", f[3])?,
            provincial_rate: rate(I, n, "provincial_rate", f[4])?,
            qst_rate: rate(I, n, "qst_rate", f[5])?,
            reduced_rate: rate(I, n, "reduced_rate", f[6])?,
            super_reduced_rate: rate(I, n, "super_reduced_rate", f[7])?,
            parking_rate: rate(I, n, "parking_rate", f[8])?,
            source,
            date,
        });
    }
    let mut state_index = HashMap::new();
    for (i, s) in states.iter().enumerate() {
        if state_index.insert(s.code.clone(), i).is_some() {
            return Err(format!("{S}: state {} appears twice", s.code));
        }
    }
    let mut zip_index = HashMap::new();
    for (i, z) in zips.iter().enumerate() {
        if !state_index.contains_key(&z.state) {
            return Err(format!("{Z}: zip {} names unknown state {}", z.zip, z.state));
        }
        if zip_index.insert(z.zip.clone(), i).is_some() {
            return Err(format!("{Z}: zip {} appears twice", z.zip));
        }
    }
    let table = Table { states, zips, international, zip5: None, state_index, zip_index };
    for z in &table.zips {
        match table.state_of_zip(&z.zip) {
            Some(s) if s.code == z.state => {}
            _ => return Err(format!("{Z}: zip {} is not within the ZIP prefixes of {}", z.zip, z.state)),
        }
    }
    Ok(table)
}
