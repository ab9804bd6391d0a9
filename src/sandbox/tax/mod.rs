//! The tax engine behind the AvaTax and TaxJar simulators: one rate table, one set of rules, two
//! APIs. HTTP-free; each simulator maps its wire format onto these types.
//!
//! The engine is the methods of a [`Table`]: the built-in one ([`builtin`]), or that with a user's
//! Avalara ZIP5 tables added ([`load_zip5`]); each sandbox taxes with the one it was started with.
//!
//! * [`Table::rates`]`(&Address)` gives the jurisdictions of an address and their rates. US
//!   addresses are found by ZIP (the hand-kept `data/us_zips.csv`, then the loaded ZIP5 tables); a
//!   ZIP not listed falls back to the state's base rate (`data/us_states.csv`) and
//!   [`Rates::state_fallback`] says so. Canada, Australia, the EU members and the UK come from
//!   `data/international.csv`.
//! * [`Table::calculate`]`(&Request)` taxes lines and freight for a destination (or, for an intrastate
//!   sale in an origin-sourced state, the origin):
//!   - no nexus in the taxing region: nothing is collected (`has_nexus` false);
//!   - an [`Exemption`] (TaxJar's `wholesale`/`government`/`other`, an AvaTax entity use code or
//!     exemption certificate), limited to its regions when it names any, exempts every line;
//!     `non_exempt` and `marketplace` still calculate;
//!   - the product tax code (TaxJar's numeric codes or AvaTax's letter codes, see [`Category`])
//!     applies the state's rule: clothing, groceries, digital goods, SaaS, services and freight
//!     differ by state; prescriptions and `NT`/`99999` are never taxed;
//!   - money is [`Decimal`]; [`Rounding`] chooses AvaTax's rounding (each jurisdiction's tax on
//!     each line rounded to cents and summed) or TaxJar's (the document total rounded once).
//!
//! ```text
//! let calc = tax::builtin()?.calculate(&Request {
//!     from: None, to: Address::us("CA", "90002"),
//!     lines: vec![Line::new("1", dec!(1), dec!(15))], freight: dec!(1.5),
//!     nexus: vec![Region::new("US", "CA")], exemption: Exemption::default(),
//!     rounding: Rounding::Document,
//! })?;
//! assert_eq!(calc.total_tax, dec!(1.35));
//! ```

mod rules;
mod table;
mod zip5;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;

use rust_decimal::{Decimal, RoundingStrategy};

pub use self::rules::{entity_use_code_description, Category, ENTITY_USE_CODES};
pub use self::table::{ClothingRule, GroceryRule, InternationalRow, Sourcing, StateRow, Table, Zip5Summary, ZipRow};
pub use self::zip5::{load as load_zip5, tables_in_force};

/// The built-in rate table (no user tables loaded), or why its shipped files could not be read.
pub fn builtin() -> Result<Arc<Table>, String> {
    table::shipped().cloned()
}

/// A postal address. Empty strings stand for absent parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Address {
    /// ISO 3166 alpha-2 (`UK` is taken for `GB`).
    pub country: String,
    /// State or province code.
    pub region: String,
    pub postal_code: String,
    pub city: String,
    pub line1: String,
}

impl Address {
    /// A US address by state and ZIP, the usual shape of a test.
    pub fn us(region: &str, postal_code: &str) -> Address {
        Address { country: "US".into(), region: region.into(), postal_code: postal_code.into(), ..Address::default() }
    }
}

/// A country and region (state, province); an empty region stands for the whole country.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub country: String,
    pub region: String,
}

impl Region {
    pub fn new(country: &str, region: &str) -> Region {
        Region { country: country.trim().to_ascii_uppercase(), region: region.trim().to_ascii_uppercase() }
    }

    /// Whether this entry covers `country`/`region`: a country-wide entry covers every region.
    pub fn covers(&self, country: &str, region: &str) -> bool {
        same_country(&self.country, country) && (self.region.is_empty() || self.region.eq_ignore_ascii_case(region))
    }
}

/// Level of a taxing jurisdiction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Country,
    State,
    County,
    City,
    Special,
}

/// What kind of tax a jurisdiction levies (Canada's provincial taxes differ in name only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaxKind {
    Sales,
    Gst,
    Pst,
    Qst,
    Vat,
}

/// One taxing jurisdiction of an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Jurisdiction {
    pub level: Level,
    pub kind: TaxKind,
    /// Upper case, as both vendors print it (`CALIFORNIA`, `LOS ANGELES`, `ORANGE CO LOCAL TAX SL`).
    pub name: String,
    pub rate: Decimal,
}

/// The VAT rates of a country beyond the standard one (TaxJar's EU rate fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VatRates {
    pub standard: Decimal,
    pub reduced: Decimal,
    pub super_reduced: Decimal,
    pub parking: Decimal,
}

/// The taxes of one address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rates {
    pub country: String,
    pub region: String,
    /// `California`, `Ontario`, `France`.
    pub region_name: String,
    /// The normalised postal code: 5 digits in the US, `A1A 1A1` in Canada, as given elsewhere.
    pub postal_code: String,
    /// Upper case; empty when unknown (a state fallback, or outside the US).
    pub county: String,
    pub city: String,
    /// Every jurisdiction with a non-zero rate, country first.
    pub jurisdictions: Vec<Jurisdiction>,
    pub combined_rate: Decimal,
    pub freight_taxable: bool,
    /// The ZIP is not in the table: only the state's base rate applies.
    pub state_fallback: bool,
    /// A Streamlined Sales Tax state.
    pub sst: bool,
    pub sourcing: Sourcing,
    /// For countries that levy VAT.
    pub vat: Option<VatRates>,
    /// Where the numbers come from and when they were true.
    pub source: String,
    pub as_of: String,
}

impl Rates {
    /// The summed rate of one level (0 when it levies nothing).
    pub fn rate_at(&self, level: Level) -> Decimal {
        self.jurisdictions.iter().filter(|j| j.level == level).map(|j| j.rate).sum()
    }

    /// The summed rate of one kind of tax.
    pub fn rate_of(&self, kind: TaxKind) -> Decimal {
        self.jurisdictions.iter().filter(|j| j.kind == kind).map(|j| j.rate).sum()
    }
}

/// Why an address or a calculation was refused. Messages name the bad value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TaxError {
    #[error("country is missing")]
    MissingCountry,
    #[error("country `{0}` is not one the tax table covers (US, CA, AU, the EU members, UK)")]
    UnknownCountry(String),
    #[error("{what} is missing for {country} addresses")]
    Missing { country: String, what: &'static str },
    #[error("`{region}` is not a {country} state or province")]
    UnknownRegion { country: String, region: String },
    #[error("`{postal_code}` is not a valid {country} postal code")]
    InvalidPostalCode { country: String, postal_code: String },
    #[error("postal code {postal_code} is in {actual}, not {region}")]
    PostalCodeRegionMismatch { postal_code: String, region: String, actual: String },
    #[error("line {line}: quantity {quantity} is negative")]
    NegativeQuantity { line: String, quantity: Decimal },
    #[error("line {line}: discount {discount} is negative")]
    NegativeDiscount { line: String, discount: Decimal },
    #[error("line {line}: discount {discount} is larger than the amount {amount}")]
    DiscountExceedsAmount { line: String, discount: Decimal, amount: Decimal },
    #[error("line {line}: `{code}` is not a known product tax code")]
    UnknownTaxCode { line: String, code: String },
    #[error("`{0}` is not an entity use code (A-R)")]
    UnknownEntityUseCode(String),
    #[error("freight {0} is negative")]
    NegativeFreight(Decimal),
    #[error("the amounts are too large: together they pass {MAX_DOCUMENT_MONEY}")]
    AmountTooLarge,
    #[error("line {line}: amount {amount} over quantity {quantity} is too large a unit price")]
    UnitPriceTooLarge { line: String, amount: Decimal, quantity: Decimal },
}

/// A customer's exemption, and where it applies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exemption {
    pub kind: ExemptionKind,
    /// The regions the exemption covers; empty means everywhere.
    pub regions: Vec<Region>,
}

impl Exemption {
    pub fn everywhere(kind: ExemptionKind) -> Exemption {
        Exemption { kind, regions: Vec::new() }
    }

    /// Whether this exemption removes the tax of a sale into `country`/`region`.
    fn applies(&self, country: &str, region: &str) -> Result<bool, TaxError> {
        if !self.kind.exempts()? {
            return Ok(false);
        }
        Ok(self.regions.is_empty() || self.regions.iter().any(|r| r.covers(country, region)))
    }
}

/// TaxJar's exemption types and AvaTax's entity use codes and certificates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ExemptionKind {
    #[default]
    NonExempt,
    /// Still taxed: TaxJar calculates marketplace orders like any other.
    Marketplace,
    Wholesale,
    Government,
    Other,
    /// AvaTax's one-letter entity use code (`A` federal government ... `R` non-resident).
    EntityUse(String),
    /// An exemption certificate number (AvaTax `exemptionNo`).
    Certificate(String),
}

impl ExemptionKind {
    /// TaxJar's wire name (`None` for AvaTax's kinds).
    pub fn taxjar_name(&self) -> Option<&'static str> {
        match self {
            ExemptionKind::NonExempt => Some("non_exempt"),
            ExemptionKind::Marketplace => Some("marketplace"),
            ExemptionKind::Wholesale => Some("wholesale"),
            ExemptionKind::Government => Some("government"),
            ExemptionKind::Other => Some("other"),
            ExemptionKind::EntityUse(_) | ExemptionKind::Certificate(_) => None,
        }
    }

    /// Parses TaxJar's `exemption_type`.
    pub fn from_taxjar(name: &str) -> Option<ExemptionKind> {
        match name {
            "non_exempt" => Some(ExemptionKind::NonExempt),
            "marketplace" => Some(ExemptionKind::Marketplace),
            "wholesale" => Some(ExemptionKind::Wholesale),
            "government" => Some(ExemptionKind::Government),
            "other" => Some(ExemptionKind::Other),
            _ => None,
        }
    }

    fn exempts(&self) -> Result<bool, TaxError> {
        Ok(match self {
            ExemptionKind::NonExempt | ExemptionKind::Marketplace => false,
            ExemptionKind::Wholesale | ExemptionKind::Government | ExemptionKind::Other => true,
            ExemptionKind::Certificate(number) => !number.trim().is_empty(),
            ExemptionKind::EntityUse(code) => {
                if code.trim().is_empty() {
                    false
                } else if entity_use_code_description(code).is_some() {
                    true
                } else {
                    return Err(TaxError::UnknownEntityUseCode(code.clone()));
                }
            }
        })
    }
}

/// How amounts are rounded to cents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// AvaTax (`roundingLevelId` Line): each jurisdiction's tax on each line is rounded; a line's
    /// tax is the sum of its details and the document's the sum of its lines.
    EachJurisdiction,
    /// TaxJar: a line's tax is its unrounded jurisdiction taxes summed, then rounded; the total is
    /// every unrounded tax of the document summed, then rounded once (so 15 at 9% in parts of
    /// 0.94 + 0.04 + 0.38 still totals 1.35, as TaxJar's docs show).
    Document,
}

/// One line of a sale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub id: String,
    pub quantity: Decimal,
    /// The extended amount (quantity × unit price), before the discount. Negative for returns.
    pub amount: Decimal,
    /// The discount on the whole line, not per unit.
    pub discount: Decimal,
    /// A TaxJar or AvaTax product tax code; none means general merchandise.
    pub tax_code: Option<String>,
    /// Overrides the request's exemption for this line (AvaTax line `entityUseCode`).
    pub exemption: Option<Exemption>,
}

impl Line {
    pub fn new(id: &str, quantity: Decimal, amount: Decimal) -> Line {
        Line { id: id.into(), quantity, amount, discount: Decimal::ZERO, tax_code: None, exemption: None }
    }

    pub fn with_code(mut self, code: &str) -> Line {
        self.tax_code = Some(code.into());
        self
    }
}

/// A sale to tax.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub from: Option<Address>,
    pub to: Address,
    pub lines: Vec<Line>,
    /// Shipping charged separately; taxed where the state taxes freight.
    pub freight: Decimal,
    /// The regions where the seller collects.
    pub nexus: Vec<Region>,
    pub exemption: Exemption,
    pub rounding: Rounding,
    /// A US ZIP of another state than `to.region` is taxed by the region's state (AvaTax answers
    /// 201) rather than refused (TaxJar's 400).
    pub trust_region: bool,
}

/// The tax one jurisdiction levies on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JurisdictionTax {
    pub jurisdiction: Jurisdiction,
    /// The rate applied (a state's reduced grocery rate, not its base rate).
    pub rate: Decimal,
    pub taxable: Decimal,
    /// Removed by a product rule (the amount this jurisdiction does not tax).
    pub non_taxable: Decimal,
    pub exempt: Decimal,
    /// Rounded to cents.
    pub tax: Decimal,
}

/// The result for one line (or the freight).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineTax {
    pub id: String,
    pub category: Category,
    /// Amount after discount.
    pub amount: Decimal,
    pub discount: Decimal,
    /// The part some jurisdiction taxes.
    pub taxable: Decimal,
    /// The part an exemption removed.
    pub exempt: Decimal,
    /// The part no jurisdiction taxes (product rules, no nexus).
    pub non_taxable: Decimal,
    pub tax: Decimal,
    /// The sum of the rates of the jurisdictions that tax this line.
    pub rate: Decimal,
    pub details: Vec<JurisdictionTax>,
}

/// The tax of a whole sale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Calculation {
    pub has_nexus: bool,
    /// Whether the rates are the origin's or the destination's.
    pub sourcing: Sourcing,
    /// Freight is taxed here (false without nexus).
    pub freight_taxable: bool,
    /// An exemption removed the tax.
    pub exempt: bool,
    /// The rates of the taxing address.
    pub rates: Rates,
    pub lines: Vec<LineTax>,
    /// The shipping, taxed like a line; `None` when there is none.
    pub freight: Option<LineTax>,
    /// Lines after discounts, plus freight.
    pub total_amount: Decimal,
    pub total_discount: Decimal,
    pub total_taxable: Decimal,
    pub total_exempt: Decimal,
    pub total_non_taxable: Decimal,
    pub total_tax: Decimal,
}

impl Calculation {
    /// Lines, then freight.
    pub fn all_lines(&self) -> impl Iterator<Item = &LineTax> + Clone {
        self.lines.iter().chain(self.freight.as_ref())
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Country => "Country",
            Level::State => "State",
            Level::County => "County",
            Level::City => "City",
            Level::Special => "Special",
        })
    }
}

/// The most money one document may carry: every amount, discount, freight and override on it,
/// counted unsigned, together. A quarter of what a [`Decimal`] holds (about 1.98e28), so every
/// net, tax, total and sum the simulators derive from them fits without overflow, while any sum
/// a real document could hold passes.
pub const MAX_DOCUMENT_MONEY: Decimal = Decimal::from_parts(u32::MAX, u32::MAX, u32::MAX >> 2, false, 0);

/// The unsigned sum of `amounts` if it stays within [`MAX_DOCUMENT_MONEY`]; `None` past it.
pub fn document_money(amounts: impl IntoIterator<Item = Decimal>) -> Option<Decimal> {
    amounts
        .into_iter()
        .try_fold(Decimal::ZERO, |sum, amount| sum.checked_add(amount.abs()))
        .filter(|sum| *sum <= MAX_DOCUMENT_MONEY)
}

/// `total × part / whole` (a share of `total` in proportion), `None` when it overflows or
/// `whole` is zero. Exact when the product fits; else through the ratio, which is as exact as
/// anything money needs.
pub fn proportion(total: Decimal, part: Decimal, whole: Decimal) -> Option<Decimal> {
    if whole.is_zero() {
        return None;
    }
    total
        .checked_mul(part)
        .and_then(|product| product.checked_div(whole))
        .or_else(|| part.checked_div(whole).and_then(|ratio| total.checked_mul(ratio)))
}

/// Rounds money to cents, half away from zero, as both vendors' examples do.
pub fn cents(amount: Decimal) -> Decimal {
    amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// `value` with the sign of `sign` (a discount on a return reduces a negative amount).
pub(crate) fn with_sign_of(value: Decimal, sign: Decimal) -> Decimal {
    if sign.is_sign_negative() {
        -value.abs()
    } else {
        value.abs()
    }
}

fn same_country(a: &str, b: &str) -> bool {
    canonical_country(a) == canonical_country(b)
}

/// ISO 3166 alpha-3 codes of the countries callers send most, with their alpha-2 codes: AvaTax
/// takes either form (recorded traffic: `CAN`, `GBR` answered 201).
const ALPHA3: &[(&str, &str)] = &[
    ("USA", "US"),
    ("CAN", "CA"),
    ("GBR", "GB"),
    ("AUS", "AU"),
    ("AUT", "AT"),
    ("BEL", "BE"),
    ("BGR", "BG"),
    ("HRV", "HR"),
    ("CYP", "CY"),
    ("CZE", "CZ"),
    ("DNK", "DK"),
    ("EST", "EE"),
    ("FIN", "FI"),
    ("FRA", "FR"),
    ("DEU", "DE"),
    ("GRC", "GR"),
    ("HUN", "HU"),
    ("IRL", "IE"),
    ("ITA", "IT"),
    ("LVA", "LV"),
    ("LTU", "LT"),
    ("LUX", "LU"),
    ("MLT", "MT"),
    ("NLD", "NL"),
    ("POL", "PL"),
    ("PRT", "PT"),
    ("ROU", "RO"),
    ("SVK", "SK"),
    ("SVN", "SI"),
    ("ESP", "ES"),
    ("SWE", "SE"),
    ("MEX", "MX"),
    ("NZL", "NZ"),
    ("JPN", "JP"),
    ("CHN", "CN"),
    ("IND", "IN"),
    ("BRA", "BR"),
    ("CHE", "CH"),
    ("NOR", "NO"),
    ("ISL", "IS"),
    ("SGP", "SG"),
    ("ZAF", "ZA"),
    ("KOR", "KR"),
    ("PRI", "PR"),
    ("ISR", "IL"),
    ("ARE", "AE"),
    ("SAU", "SA"),
    ("TUR", "TR"),
];

/// The alpha-2 code of a country given as alpha-2, alpha-3 or `UK`, upper case.
pub fn canonical_country(code: &str) -> String {
    let upper = code.trim().to_ascii_uppercase();
    if upper == "UK" {
        return "GB".to_owned();
    }
    ALPHA3.iter().find(|(three, _)| *three == upper).map_or(upper, |(_, two)| (*two).to_owned())
}

/// The member states of the European Union (ISO alpha-2; Greece is `GR` here, `EL` in VAT numbers).
const EU_MEMBERS: [&str; 27] = [
    "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT", "LU", "MT",
    "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE",
];

/// Whether a country (alpha-2 or alpha-3) is a member state of the European Union.
pub fn eu_member(country: &str) -> bool {
    EU_MEMBERS.contains(&canonical_country(country).as_str())
}

impl Table {
    /// Whether some US state's ZIP prefixes include this 5-digit ZIP (`00000` is in none).
    pub fn us_zip_has_state(&self, postal_code: &str) -> bool {
        zip5(postal_code.trim()).is_some_and(|zip| self.zip(zip).is_some() || self.state_of_zip(zip).is_some())
    }

    /// The state of a well-formed US ZIP, when the table knows it (`None` for `42` or `00000`).
    pub fn zip_state(&self, postal_code: &str) -> Option<String> {
        let zip = zip5(postal_code.trim())?;
        self.zip(zip).map(|row| row.state.clone()).or_else(|| self.state_of_zip(zip).map(|row| row.code.clone()))
    }

    /// Like [`Table::rates`], but a US ZIP of another state than the one given does not refuse
    /// the address: the given state's base rate applies (AvaTax places such an address by its
    /// state and answers 201; which local rates it then uses is not known).
    pub fn rates_trusting_region(&self, address: &Address) -> Result<Rates, TaxError> {
        match self.rates(address) {
            Err(TaxError::PostalCodeRegionMismatch { postal_code, region, .. }) => {
                us_rates_in(self, &region, &postal_code, None)
            }
            other => other,
        }
    }

    /// The jurisdictions and rates of an address.
    pub fn rates(&self, address: &Address) -> Result<Rates, TaxError> {
        rates_in(self, address)
    }

    /// Taxes a sale. See the module documentation for the rules.
    pub fn calculate(&self, request: &Request) -> Result<Calculation, TaxError> {
        calculate_in(self, request)
    }
}

fn rates_in(table: &Table, address: &Address) -> Result<Rates, TaxError> {
    let country = canonical_country(&address.country);
    let region = address.region.trim().to_ascii_uppercase();
    match country.as_str() {
        "" => Err(TaxError::MissingCountry),
        "US" => us_rates(table, &region, address.postal_code.trim()),
        "CA" => canada_rates(table, &region, address.postal_code.trim()),
        _ => {
            let row = table.international.iter().find(|r| r.country == country && r.region.is_empty());
            let Some(row) = row else {
                // A country code the table has no rates for (Costa Rica, Japan): the services
                // calculate there (recorded AvaTax answers are 201), so it is taxed at nothing
                // known rather than refused. Anything that is not a two-letter code still is.
                if country.len() == 2 && country.bytes().all(|b| b.is_ascii_uppercase()) {
                    return Ok(Rates {
                        country: country.clone(),
                        region,
                        region_name: country,
                        postal_code: address.postal_code.trim().to_owned(),
                        county: String::new(),
                        city: address.city.trim().to_ascii_uppercase(),
                        jurisdictions: Vec::new(),
                        combined_rate: Decimal::ZERO,
                        freight_taxable: false,
                        state_fallback: false,
                        sst: false,
                        sourcing: Sourcing::Destination,
                        vat: None,
                        source: "no rates are known for this country".to_owned(),
                        as_of: String::new(),
                    });
                }
                return Err(TaxError::UnknownCountry(address.country.trim().to_owned()));
            };
            let kind = if country == "AU" { TaxKind::Gst } else { TaxKind::Vat };
            let vat = (kind == TaxKind::Vat).then_some(VatRates {
                standard: row.country_rate,
                reduced: row.reduced_rate,
                super_reduced: row.super_reduced_rate,
                parking: row.parking_rate,
            });
            Ok(Rates {
                country,
                region,
                region_name: row.name.clone(),
                postal_code: address.postal_code.trim().to_owned(),
                county: String::new(),
                city: address.city.trim().to_ascii_uppercase(),
                jurisdictions: vec![Jurisdiction {
                    level: Level::Country,
                    kind,
                    name: row.name.to_ascii_uppercase(),
                    rate: row.country_rate,
                }],
                combined_rate: row.country_rate,
                freight_taxable: true,
                state_fallback: false,
                sst: false,
                sourcing: Sourcing::Destination,
                vat,
                source: row.source.clone(),
                as_of: row.date.clone(),
            })
        }
    }
}

/// The 5-digit form of a US ZIP (`90002`, `90002-1234`, `900021234`), or `None` when malformed.
pub fn zip5(postal_code: &str) -> Option<&str> {
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let (five, plus4) = match postal_code.split_once('-') {
        Some((five, four)) => (five, Some(four)),
        None if postal_code.len() == 9 => (postal_code.get(0..5)?, postal_code.get(5..)),
        None => (postal_code, None),
    };
    let ok = five.len() == 5 && digits(five) && plus4.is_none_or(|p| p.len() == 4 && digits(p));
    ok.then_some(five)
}

fn us_rates(table: &Table, region: &str, postal_code: &str) -> Result<Rates, TaxError> {
    if postal_code.is_empty() {
        return Err(TaxError::Missing { country: "US".into(), what: "postal code" });
    }
    let zip = zip5(postal_code)
        .ok_or_else(|| TaxError::InvalidPostalCode { country: "US".into(), postal_code: postal_code.into() })?;
    if !region.is_empty() && table.state(region).is_none() {
        return Err(TaxError::UnknownRegion { country: "US".into(), region: region.into() });
    }
    let home = table.state_of_zip(zip).map(|s| s.code.as_str());
    let row = table.zip(zip);
    let actual = row.map(|r| r.state.as_str()).or(home);
    let state_code = match (region, actual) {
        ("", Some(actual)) => actual,
        ("", None) => return Err(TaxError::InvalidPostalCode { country: "US".into(), postal_code: zip.into() }),
        (given, Some(actual)) if given != actual => {
            return Err(TaxError::PostalCodeRegionMismatch {
                postal_code: zip.into(),
                region: given.into(),
                actual: actual.into(),
            })
        }
        (given, _) => given,
    };
    us_rates_in(table, state_code, zip, row)
}

/// The rates of a ZIP in a state: its row's jurisdictions, or the state's base rate without one.
fn us_rates_in(table: &Table, state_code: &str, zip: &str, row: Option<&ZipRow>) -> Result<Rates, TaxError> {
    let state = table
        .state(state_code)
        .ok_or_else(|| TaxError::UnknownRegion { country: "US".into(), region: state_code.into() })?;
    let state_jurisdiction =
        |rate| Jurisdiction { level: Level::State, kind: TaxKind::Sales, name: state.name.to_ascii_uppercase(), rate };
    let (jurisdictions, county, city, source, as_of) = match row {
        Some(row) => {
            let mut list = vec![state_jurisdiction(row.state_rate)];
            let local = |level, name: &str, rate| Jurisdiction { level, kind: TaxKind::Sales, name: name.into(), rate };
            list.push(local(Level::County, &row.county, row.county_rate));
            list.push(local(Level::City, &row.city, row.city_rate));
            list.extend(row.specials.iter().map(|(name, rate)| local(Level::Special, name, *rate)));
            (list, row.county.clone(), row.city.clone(), row.source.clone(), row.date.clone())
        }
        None => (
            vec![state_jurisdiction(state.rate)],
            String::new(),
            String::new(),
            state.source.clone(),
            state.date.clone(),
        ),
    };
    let jurisdictions: Vec<Jurisdiction> = jurisdictions.into_iter().filter(|j| !j.rate.is_zero()).collect();
    Ok(Rates {
        country: "US".into(),
        region: state.code.clone(),
        region_name: state.name.clone(),
        postal_code: zip.into(),
        county,
        city,
        combined_rate: jurisdictions.iter().map(|j| j.rate).sum(),
        jurisdictions,
        freight_taxable: state.freight_taxable,
        state_fallback: row.is_none(),
        sst: state.sst,
        sourcing: state.sourcing,
        vat: None,
        source,
        as_of,
    })
}

/// The province of a Canadian postal code, from its first letter.
fn province_of_postal_code(postal_code: &str) -> Option<&'static str> {
    Some(match postal_code.chars().next()? {
        'A' => "NL",
        'B' => "NS",
        'C' => "PE",
        'E' => "NB",
        'G' | 'H' | 'J' => "QC",
        'K' | 'L' | 'M' | 'N' | 'P' => "ON",
        'R' => "MB",
        'S' => "SK",
        'T' => "AB",
        'V' => "BC",
        'X' => "NT",
        'Y' => "YT",
        _ => return None,
    })
}

/// `A1A 1A1` from `a1a1a1` or `A1A-1A1`, or `None` when it is not that shape.
fn canadian_postal_code(postal_code: &str) -> Option<String> {
    let compact: String =
        postal_code.chars().filter(|c| !matches!(c, ' ' | '-')).map(|c| c.to_ascii_uppercase()).collect();
    let ok = compact.len() == 6
        && compact
            .chars()
            .enumerate()
            .all(|(i, c)| if i % 2 == 0 { c.is_ascii_uppercase() } else { c.is_ascii_digit() });
    ok.then(|| format!("{} {}", &compact[0..3], &compact[3..6]))
}

fn canada_rates(table: &Table, region: &str, postal_code: &str) -> Result<Rates, TaxError> {
    let normalised = if postal_code.is_empty() {
        None
    } else {
        Some(
            canadian_postal_code(postal_code)
                .ok_or_else(|| TaxError::InvalidPostalCode { country: "CA".into(), postal_code: postal_code.into() })?,
        )
    };
    let from_postal = normalised.as_deref().and_then(province_of_postal_code);
    let province = match (region, from_postal) {
        ("", Some(p)) => p.to_owned(),
        ("", None) => return Err(TaxError::Missing { country: "CA".into(), what: "province" }),
        // X covers both territories.
        (given, Some(p)) if given != p && !(p == "NT" && given == "NU") => {
            return Err(TaxError::PostalCodeRegionMismatch {
                postal_code: normalised.unwrap_or_default(),
                region: given.into(),
                actual: p.into(),
            })
        }
        (given, _) => given.to_owned(),
    };
    let row = table
        .international
        .iter()
        .find(|r| r.country == "CA" && r.region == province)
        .ok_or_else(|| TaxError::UnknownRegion { country: "CA".into(), region: province.clone() })?;
    let mut jurisdictions =
        vec![Jurisdiction { level: Level::Country, kind: TaxKind::Gst, name: "CANADA".into(), rate: row.country_rate }];
    let provincial = |kind, rate| Jurisdiction { level: Level::State, kind, name: row.name.to_ascii_uppercase(), rate };
    jurisdictions.push(provincial(TaxKind::Pst, row.provincial_rate));
    jurisdictions.push(provincial(TaxKind::Qst, row.qst_rate));
    jurisdictions.retain(|j| !j.rate.is_zero());
    Ok(Rates {
        country: "CA".into(),
        region: province,
        region_name: row.name.clone(),
        postal_code: normalised.unwrap_or_default(),
        county: String::new(),
        city: String::new(),
        combined_rate: jurisdictions.iter().map(|j| j.rate).sum(),
        jurisdictions,
        freight_taxable: true,
        state_fallback: false,
        sst: false,
        sourcing: Sourcing::Destination,
        vat: None,
        source: row.source.clone(),
        as_of: row.date.clone(),
    })
}

fn calculate_in(table: &Table, request: &Request) -> Result<Calculation, TaxError> {
    if request.freight < Decimal::ZERO {
        return Err(TaxError::NegativeFreight(request.freight));
    }
    let place = |a: &Address| if request.trust_region { table.rates_trusting_region(a) } else { table.rates(a) };
    let destination = place(&request.to)?;
    let origin = request.from.as_ref().filter(|a| !a.country.trim().is_empty()).map(place).transpose()?;
    // An intrastate sale in an origin-sourced state is taxed at the seller's address.
    let (taxing, sourcing) = match origin {
        Some(origin)
            if origin.country == "US"
                && origin.region == destination.region
                && destination.sourcing == Sourcing::Origin =>
        {
            (origin, Sourcing::Origin)
        }
        _ => (destination, Sourcing::Destination),
    };
    let has_nexus = request.nexus.iter().any(|n| n.covers(&taxing.country, &taxing.region));
    let state = if taxing.country == "US" { table.state(&taxing.region) } else { None };
    // Within this bound no sum, net or tax below can overflow.
    let money = request.lines.iter().flat_map(|l| [l.amount, l.discount]).chain([request.freight]);
    if document_money(money).is_none() {
        return Err(TaxError::AmountTooLarge);
    }
    let mut lines = Vec::with_capacity(request.lines.len());
    let mut unrounded_total = Decimal::ZERO;
    for line in &request.lines {
        let category = Category::of(&line.id, line.tax_code.as_deref())?;
        if line.quantity < Decimal::ZERO {
            return Err(TaxError::NegativeQuantity { line: line.id.clone(), quantity: line.quantity });
        }
        if line.discount < Decimal::ZERO {
            return Err(TaxError::NegativeDiscount { line: line.id.clone(), discount: line.discount });
        }
        if line.discount > line.amount.abs() {
            return Err(TaxError::DiscountExceedsAmount {
                line: line.id.clone(),
                discount: line.discount,
                amount: line.amount,
            });
        }
        let exemption = line.exemption.as_ref().unwrap_or(&request.exemption);
        let exempt = exemption.applies(&taxing.country, &taxing.region)?;
        let net = line.amount - with_sign_of(line.discount, line.amount);
        let (tax, raw) = tax_line(
            &taxing,
            state,
            &line.id,
            category,
            line.quantity,
            net,
            line.discount,
            has_nexus,
            exempt,
            request.rounding,
        )?;
        unrounded_total += raw;
        lines.push(tax);
    }
    let freight_exempt = request.exemption.applies(&taxing.country, &taxing.region)?;
    let freight = if request.freight.is_zero() {
        None
    } else {
        let (tax, raw) = tax_line(
            &taxing,
            state,
            "freight",
            Category::Freight,
            Decimal::ONE,
            request.freight,
            Decimal::ZERO,
            has_nexus,
            freight_exempt,
            request.rounding,
        )?;
        unrounded_total += raw;
        Some(tax)
    };
    let all: Vec<&LineTax> = lines.iter().chain(freight.as_ref()).collect();
    let total_tax = match request.rounding {
        Rounding::EachJurisdiction => all.iter().map(|l| l.tax).sum(),
        Rounding::Document => cents(unrounded_total),
    };
    Ok(Calculation {
        has_nexus,
        sourcing,
        freight_taxable: has_nexus && taxing.freight_taxable,
        exempt: all.iter().any(|l| !l.exempt.is_zero()),
        total_amount: all.iter().map(|l| l.amount).sum(),
        total_discount: all.iter().map(|l| l.discount).sum(),
        total_taxable: all.iter().map(|l| l.taxable).sum(),
        total_exempt: all.iter().map(|l| l.exempt).sum(),
        total_non_taxable: all.iter().map(|l| l.non_taxable).sum(),
        total_tax,
        rates: taxing,
        lines,
        freight,
    })
}

/// Taxes one line; returns it and its unrounded tax (for document rounding).
#[expect(clippy::too_many_arguments, reason = "one private step of calculate, called twice")]
fn tax_line(
    rates: &Rates,
    state: Option<&StateRow>,
    id: &str,
    category: Category,
    quantity: Decimal,
    net: Decimal,
    discount: Decimal,
    has_nexus: bool,
    exempt: bool,
    rounding: Rounding,
) -> Result<(LineTax, Decimal), TaxError> {
    let mut details = Vec::with_capacity(rates.jurisdictions.len());
    let mut raw_total = Decimal::ZERO;
    let mut taxable_max = Decimal::ZERO;
    let mut rate = Decimal::ZERO;
    if has_nexus && !exempt {
        // A tiny quantity can make the unit price more than a Decimal holds.
        let unit = if quantity.is_zero() {
            net
        } else {
            net.checked_div(quantity).ok_or_else(|| TaxError::UnitPriceTooLarge {
                line: id.to_owned(),
                amount: net,
                quantity,
            })?
        };
        for jurisdiction in &rates.jurisdictions {
            let (taxable, applied_rate) =
                rules::taxable_part(state, rates, category, jurisdiction, unit, quantity, net);
            let raw = taxable * applied_rate;
            raw_total += raw;
            if !taxable.is_zero() && !applied_rate.is_zero() {
                rate += applied_rate;
            }
            if taxable.abs() > taxable_max.abs() {
                taxable_max = taxable;
            }
            details.push(JurisdictionTax {
                jurisdiction: jurisdiction.clone(),
                rate: applied_rate,
                taxable,
                non_taxable: net - taxable,
                exempt: Decimal::ZERO,
                tax: cents(raw),
            });
        }
    } else if has_nexus {
        details.extend(rates.jurisdictions.iter().map(|j| JurisdictionTax {
            jurisdiction: j.clone(),
            rate: j.rate,
            taxable: Decimal::ZERO,
            non_taxable: Decimal::ZERO,
            exempt: net,
            tax: Decimal::ZERO,
        }));
    }
    let tax = match rounding {
        Rounding::EachJurisdiction => details.iter().map(|d| d.tax).sum(),
        Rounding::Document => cents(raw_total),
    };
    let exempt_amount = if exempt && has_nexus { net } else { Decimal::ZERO };
    let line = LineTax {
        id: id.to_owned(),
        category,
        amount: net,
        discount,
        taxable: taxable_max,
        exempt: exempt_amount,
        non_taxable: net - taxable_max - exempt_amount,
        tax,
        rate,
        details,
    };
    Ok((line, raw_total))
}
