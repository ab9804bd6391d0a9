//! The tax arithmetic behind transactions and rate lookups: jurisdictions of an address, then
//! per line the taxable, exempt and non-taxable parts and the tax of each jurisdiction, rounded
//! per jurisdiction to the cent (AvaTax's `roundingLevelId` `Line`).

use rust_decimal::{Decimal, RoundingStrategy};

use super::errors::AvaError;
use super::reference::{self, TaxCode};

/// AvaTax's jurisdiction levels: `jurisType` codes in line details, names in summaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[expect(dead_code, reason = "country and city levels come with the shared engine's rate table")]
pub enum JurisLevel {
    Country,
    State,
    County,
    City,
    Special,
}

impl JurisLevel {
    pub fn type_id(self) -> &'static str {
        match self {
            JurisLevel::Country => "CNT",
            JurisLevel::State => "STA",
            JurisLevel::County => "CTY",
            JurisLevel::City => "CIT",
            JurisLevel::Special => "STJ",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            JurisLevel::Country => "Country",
            JurisLevel::State => "State",
            JurisLevel::County => "County",
            JurisLevel::City => "City",
            JurisLevel::Special => "Special",
        }
    }
}

/// One taxing jurisdiction at an address.
#[derive(Clone, Debug, PartialEq)]
pub struct Jurisdiction {
    pub level: JurisLevel,
    pub code: String,
    pub name: String,
    pub tax_name: String,
    pub rate: Decimal,
    pub signature: String,
    pub state_assigned_no: String,
    pub id: i64,
}

/// A place to tax, as far as rates go.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    pub country: String,
    pub region: String,
    pub postal_code: String,
    pub city: String,
}

/// The jurisdictions of a place; `fallback` when only the state is known for its postal code.
#[derive(Clone, Debug, PartialEq)]
pub struct Rates {
    pub jurisdictions: Vec<Jurisdiction>,
    pub fallback: bool,
}

impl Rates {
    pub fn total(&self) -> Decimal {
        self.jurisdictions.iter().map(|j| j.rate).sum()
    }
}

/// Jurisdictions and rates of a place.
pub fn rates_for(place: &Place) -> Result<Rates, AvaError> {
    interim_rates::lookup(place)
}

/// Why a line is not (fully) taxed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Relief {
    /// Taxed in full.
    None,
    /// An exemption: entity use code, exemption number or certificate (`exempt_cert_id`).
    Exempt { cert_id: i64 },
    /// The company has no nexus in the state: not collected.
    NoNexus,
    /// The product is not taxable (tax code `NT`, or a product the state does not tax).
    NonTaxable,
}

/// One jurisdiction's part of a line.
#[derive(Clone, Debug, PartialEq)]
pub struct DetailTax {
    pub jurisdiction: Jurisdiction,
    pub taxable: Decimal,
    pub exempt: Decimal,
    pub non_taxable: Decimal,
    pub tax: Decimal,
    /// `RateRule`, `NexusRule`, `BaseRule` or empty: why part of the amount was not taxed.
    pub non_taxable_type: &'static str,
}

/// A line's tax.
#[derive(Clone, Debug, PartialEq)]
pub struct LineTax {
    pub taxable: Decimal,
    pub exempt: Decimal,
    pub non_taxable: Decimal,
    pub tax: Decimal,
    pub details: Vec<DetailTax>,
}

pub fn cents(amount: Decimal) -> Decimal {
    amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// The tax of one line of `amount` (already net of discount; negative on returns).
pub fn tax_line(amount: Decimal, tax_code: &TaxCode, rates: &Rates, relief: &Relief) -> LineTax {
    let relief = if tax_code.code == "NT" { &Relief::NonTaxable } else { relief };
    let (taxable, exempt, non_taxable, kind) = match relief {
        Relief::None => (amount, Decimal::ZERO, Decimal::ZERO, ""),
        Relief::Exempt { .. } => (Decimal::ZERO, amount, Decimal::ZERO, ""),
        Relief::NoNexus => (Decimal::ZERO, Decimal::ZERO, amount, "NexusRule"),
        Relief::NonTaxable => (Decimal::ZERO, Decimal::ZERO, amount, "BaseRule"),
    };
    let details: Vec<DetailTax> = rates
        .jurisdictions
        .iter()
        .map(|j| DetailTax {
            jurisdiction: j.clone(),
            taxable,
            exempt,
            non_taxable,
            tax: cents(taxable * j.rate),
            non_taxable_type: kind,
        })
        .collect();
    let tax = details.iter().map(|d| d.tax).sum();
    LineTax { taxable, exempt, non_taxable, tax, details }
}

/// Until the shared engine (`crate::sandbox::tax`) is on main: the rate breakdowns quoted in
/// api/avatax.md §7 and, elsewhere in the US, the state rate alone. Replaced by the engine.
mod interim_rates {
    use rust_decimal::Decimal;
    use rust_decimal_macros::dec;

    use super::{JurisLevel, Jurisdiction, Place, Rates};
    use crate::sandbox::avatax::errors::AvaError;
    use crate::sandbox::avatax::reference;

    fn juris(
        level: JurisLevel,
        code: &str,
        name: &str,
        tax_name: &str,
        rate: Decimal,
        sig: &str,
        id: i64,
    ) -> Jurisdiction {
        Jurisdiction {
            level,
            code: code.to_owned(),
            name: name.to_owned(),
            tax_name: tax_name.to_owned(),
            rate,
            signature: sig.to_owned(),
            state_assigned_no: String::new(),
            id,
        }
    }

    /// State base rates (2024, state level only).
    const STATE_RATES: &[(&str, Decimal)] = &[
        ("AL", dec!(0.04)),
        ("AK", dec!(0)),
        ("AZ", dec!(0.056)),
        ("AR", dec!(0.065)),
        ("CA", dec!(0.0725)),
        ("CO", dec!(0.029)),
        ("CT", dec!(0.0635)),
        ("DE", dec!(0)),
        ("DC", dec!(0.06)),
        ("FL", dec!(0.06)),
        ("GA", dec!(0.04)),
        ("HI", dec!(0.04)),
        ("ID", dec!(0.06)),
        ("IL", dec!(0.0625)),
        ("IN", dec!(0.07)),
        ("IA", dec!(0.06)),
        ("KS", dec!(0.065)),
        ("KY", dec!(0.06)),
        ("LA", dec!(0.0445)),
        ("ME", dec!(0.055)),
        ("MD", dec!(0.06)),
        ("MA", dec!(0.0625)),
        ("MI", dec!(0.06)),
        ("MN", dec!(0.06875)),
        ("MS", dec!(0.07)),
        ("MO", dec!(0.04225)),
        ("MT", dec!(0)),
        ("NE", dec!(0.055)),
        ("NV", dec!(0.0685)),
        ("NH", dec!(0)),
        ("NJ", dec!(0.06625)),
        ("NM", dec!(0.04875)),
        ("NY", dec!(0.04)),
        ("NC", dec!(0.0475)),
        ("ND", dec!(0.05)),
        ("OH", dec!(0.0575)),
        ("OK", dec!(0.045)),
        ("OR", dec!(0)),
        ("PA", dec!(0.06)),
        ("RI", dec!(0.07)),
        ("SC", dec!(0.06)),
        ("SD", dec!(0.042)),
        ("TN", dec!(0.07)),
        ("TX", dec!(0.0625)),
        ("UT", dec!(0.0485)),
        ("VT", dec!(0.06)),
        ("VA", dec!(0.043)),
        ("WA", dec!(0.065)),
        ("WV", dec!(0.06)),
        ("WI", dec!(0.05)),
        ("WY", dec!(0.04)),
        ("PR", dec!(0.105)),
    ];

    pub(super) fn lookup(place: &Place) -> Result<Rates, AvaError> {
        if !place.country.eq_ignore_ascii_case("US") {
            return Err(AvaError::new(400, "InvalidAddress", 309, "The address value was incomplete.")
                .describe(format!("The simulator has no rates for country '{}' yet.", place.country))
                .refers_to("country"));
        }
        let Some((code, name, fips)) = reference::us_state(&place.region) else {
            return Err(AvaError::new(
                400,
                "InvalidCountryRegion",
                126,
                format!("'{}' is not a US state.", place.region),
            )
            .refers_to("region"));
        };
        let zip5 = place.postal_code.get(..5).unwrap_or(&place.postal_code);
        if matches!(zip5, "92614" | "92615") {
            return Ok(Rates {
                jurisdictions: vec![
                    juris(JurisLevel::State, "06", "CALIFORNIA", "CA STATE TAX", dec!(0.06), "AGAM", 5_000_531),
                    juris(JurisLevel::County, "059", "ORANGE", "CA COUNTY TAX", dec!(0.0025), "AHXU", 267),
                    Jurisdiction {
                        state_assigned_no: "037".to_owned(),
                        ..juris(
                            JurisLevel::Special,
                            "EMAZ0",
                            "ORANGE COUNTY DISTRICT TAX SP",
                            "CA SPECIAL TAX",
                            dec!(0.005),
                            "EMAZ",
                            2_001_061_425,
                        )
                    },
                    Jurisdiction {
                        state_assigned_no: "30".to_owned(),
                        ..juris(
                            JurisLevel::Special,
                            "EMTN0",
                            "ORANGE CO LOCAL TAX SL",
                            "CA SPECIAL TAX",
                            dec!(0.01),
                            "EMTN",
                            2_001_061_784,
                        )
                    },
                ],
                fallback: false,
            });
        }
        let rate = STATE_RATES.iter().find(|(c, _)| *c == code).map_or(Decimal::ZERO, |(_, r)| *r);
        Ok(Rates {
            jurisdictions: vec![juris(JurisLevel::State, fips, name, &format!("{code} STATE TAX"), rate, "", 0)],
            fallback: true,
        })
    }
}

/// The tax code of a line: empty means general tangible personal property.
pub fn line_tax_code(code: &str) -> Option<&'static TaxCode> {
    if code.trim().is_empty() {
        reference::tax_code("P0000000")
    } else {
        reference::tax_code(code)
    }
}
