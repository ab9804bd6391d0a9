//! The tax arithmetic behind transactions and rate lookups, from the shared engine
//! (`crate::sandbox::tax`): jurisdictions of an address, then per line the taxable, exempt and
//! non-taxable parts and the tax of each jurisdiction, rounded per jurisdiction to the cent
//! (AvaTax's `roundingLevelId` `Line`), in AvaTax's names and identifiers.

use rust_decimal::Decimal;

use super::errors::AvaError;
use super::reference::{self, TaxCode};
use crate::sandbox::tax;

/// AvaTax's jurisdiction levels: `jurisType` codes in line details, names in summaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// Where it taxes: its country, and its state or province (the country again abroad, as
    /// AvaTax writes `region` for a European jurisdiction).
    pub country: String,
    pub region: String,
    /// `Sales` (US) or `Output` (VAT): AvaTax's `taxType` and, by its first letter, `taxSubTypeId`.
    pub tax_type: &'static str,
    /// A zero rate that applies by rule (an intra-EU supply to a business): `Zero Rate`, `rateType` `Zero`.
    pub zero_rated: bool,
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

/// Jurisdictions and rates of a place, from the shared engine's table.
pub fn rates_for(table: &tax::Table, place: &Place) -> Result<Rates, AvaError> {
    let rates = table.rates_trusting_region(&engine_address(place)).map_err(|e| engine_error(&e, "address"))?;
    Ok(Rates {
        jurisdictions: rates.jurisdictions.iter().map(|j| avatax_jurisdiction(&rates, j)).collect(),
        fallback: rates.state_fallback,
    })
}

fn engine_address(place: &Place) -> tax::Address {
    tax::Address {
        country: place.country.clone(),
        region: place.region.clone(),
        postal_code: place.postal_code.clone(),
        city: place.city.clone(),
        line1: String::new(),
    }
}

/// The engine's refusal in AvaTax's words; `field` is where the address sits in the request.
fn engine_error(error: &tax::TaxError, field: &str) -> AvaError {
    let text = error.to_string();
    match error {
        tax::TaxError::MissingCountry
        | tax::TaxError::Missing { .. }
        | tax::TaxError::PostalCodeRegionMismatch { .. } => {
            AvaError::new(400, "InvalidAddress", 309, "The address value was incomplete.")
                .describe(text)
                .refers_to(field)
        }
        tax::TaxError::UnknownCountry(_) => {
            AvaError::new(400, "InvalidCountry", 125, "The country is not supported.").describe(text).refers_to(field)
        }
        tax::TaxError::UnknownRegion { .. } => {
            AvaError::new(400, "InvalidCountryRegion", 126, "The region is not valid for the country.")
                .describe(text)
                .refers_to(format!("{field}.region"))
        }
        tax::TaxError::InvalidPostalCode { .. } => {
            AvaError::new(400, "InvalidPostalCode", 317, "The postal code is not valid.")
                .describe(text)
                .refers_to(format!("{field}.postalCode"))
        }
        tax::TaxError::NegativeQuantity { .. }
        | tax::TaxError::NegativeDiscount { .. }
        | tax::TaxError::DiscountExceedsAmount { .. }
        | tax::TaxError::NegativeFreight(_)
        | tax::TaxError::AmountTooLarge
        | tax::TaxError::UnitPriceTooLarge { .. } => {
            AvaError::new(400, "RangeError", 6, "A line value is out of range.").describe(text).refers_to("lines")
        }
        tax::TaxError::UnknownTaxCode { code, .. } => AvaError::unknown_reference("TaxCode", code, "lines"),
        tax::TaxError::UnknownEntityUseCode(code) => {
            AvaError::unknown_reference("EntityUseCode", code, "entityUseCode")
        }
    }
}

/// The AvaTax identifiers of the jurisdictions quoted in api/avatax.md (Irvine, CA), so the
/// worked example comes back as the SDK fixtures show it: (name, jurisCode, signature, id,
/// state-assigned number).
const KNOWN_JURISDICTIONS: &[(&str, &str, &str, i64, &str)] = &[
    ("CALIFORNIA", "06", "AGAM", 5_000_531, ""),
    ("ORANGE", "059", "AHXU", 267, ""),
    ("ORANGE COUNTY DISTRICT TAX SP", "EMAZ0", "EMAZ", 2_001_061_425, "037"),
    ("ORANGE CO LOCAL TAX SL", "EMTN0", "EMTN", 2_001_061_784, "30"),
];

/// A stable number from a name (FNV-1a), for the ids and codes of other jurisdictions.
fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn avatax_jurisdiction(rates: &tax::Rates, j: &tax::Jurisdiction) -> Jurisdiction {
    let level = match j.level {
        tax::Level::Country => JurisLevel::Country,
        tax::Level::State => JurisLevel::State,
        tax::Level::County => JurisLevel::County,
        tax::Level::City => JurisLevel::City,
        tax::Level::Special => JurisLevel::Special,
    };
    let kind = match j.kind {
        tax::TaxKind::Sales => "TAX",
        tax::TaxKind::Gst => "GST",
        tax::TaxKind::Pst => "PST",
        tax::TaxKind::Qst => "QST",
        tax::TaxKind::Vat => "VAT",
    };
    let prefix = if rates.region.is_empty() { rates.country.clone() } else { rates.region.clone() };
    let tax_name = match (rates.country.as_str(), level) {
        ("US", _) => format!("{prefix} {} TAX", level.name().to_ascii_uppercase()),
        // A European VAT is named by its rate band, as recorded ("Standard Rate").
        (_, JurisLevel::Country) if j.kind == tax::TaxKind::Vat => "Standard Rate".to_owned(),
        (_, JurisLevel::Country) => format!("{} {kind}", j.name),
        _ => format!("{prefix} {kind}"),
    };
    let hash = stable_hash(&format!("{}|{}|{}", rates.country, level.name(), j.name));
    let (code, signature, id, assigned) = match KNOWN_JURISDICTIONS.iter().find(|k| k.0 == j.name) {
        Some(&(_, code, signature, id, assigned)) => (code.to_owned(), signature.to_owned(), id, assigned.to_owned()),
        None => {
            let code = match level {
                JurisLevel::State => {
                    reference::us_state(&rates.region).map_or_else(|| rates.region.clone(), |s| s.2.to_owned())
                }
                JurisLevel::Country => rates.country.clone(),
                JurisLevel::County => format!("{:03}", hash % 1000),
                _ => format!("{:05X}", hash % 0xF_FFFF),
            };
            let letters: String =
                (0..4).map(|i| char::from(b'A' + u8::try_from((hash >> (i * 5)) % 26).unwrap_or(0))).collect();
            (code, letters, i64::try_from(hash % 9_000_000_000).unwrap_or(0) + 1_000_000, String::new())
        }
    };
    Jurisdiction {
        country: rates.country.clone(),
        region: if rates.region.is_empty() { rates.country.clone() } else { rates.region.clone() },
        tax_type: if j.kind == tax::TaxKind::Vat { "Output" } else { "Sales" },
        zero_rated: false,
        level,
        code,
        name: j.name.clone(),
        tax_name,
        rate: j.rate,
        signature,
        state_assigned_no: assigned,
        id,
    }
}

/// Why a line is not (fully) taxed, as far as the document says: an exemption the simulator
/// decided (entity use code, exemption number or certificate, with its id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Relief {
    None,
    Exempt { cert_id: i64, label: String },
}

/// One jurisdiction's part of a line.
#[derive(Clone, Debug, PartialEq)]
pub struct DetailTax {
    pub jurisdiction: Jurisdiction,
    /// The rate applied (a reduced grocery rate rather than the base rate).
    pub rate: Decimal,
    pub taxable: Decimal,
    pub exempt: Decimal,
    pub non_taxable: Decimal,
    pub tax: Decimal,
    /// `RateRule`, `NexusRule` or `BaseRule`: why part of the amount was not taxed.
    pub non_taxable_type: &'static str,
}

/// A line's tax.
#[derive(Clone, Debug, PartialEq)]
pub struct LineTax {
    /// The invoice message the line needs (AvaTax's `MessageCode`), for a zero-rated intra-EU supply.
    pub invoice_message: Option<InvoiceMessage>,
    pub taxable: Decimal,
    pub exempt: Decimal,
    pub non_taxable: Decimal,
    pub tax: Decimal,
    pub details: Vec<DetailTax>,
}

pub fn cents(amount: Decimal) -> Decimal {
    tax::cents(amount)
}

/// What one line needs to be taxed.
pub struct LineCalc<'a> {
    pub table: &'a tax::Table,
    pub number: &'a str,
    pub quantity: Decimal,
    /// Net of the document discount; negative on returns.
    pub amount: Decimal,
    pub tax_code: &'a TaxCode,
    pub origin: &'a Place,
    pub destination: &'a Place,
    /// Where the company collects (its nexus on the document date).
    pub nexus: Vec<tax::Region>,
    pub relief: &'a Relief,
}

/// Taxes one line with the shared engine, each jurisdiction rounded to the cent (AvaTax's
/// `roundingLevelId` Line).
pub fn tax_line(line: &LineCalc<'_>) -> Result<LineTax, AvaError> {
    let rates = rates_for(line.table, line.destination)?;
    let exemption = match line.relief {
        Relief::None => tax::Exemption::default(),
        Relief::Exempt { label, .. } => tax::Exemption::everywhere(tax::ExemptionKind::Certificate(label.clone())),
    };
    let request = tax::Request {
        from: Some(engine_address(line.origin)),
        to: engine_address(line.destination),
        lines: vec![tax::Line::new(line.number, line.quantity, line.amount).with_code(line.tax_code.code)],
        freight: Decimal::ZERO,
        nexus: line.nexus.clone(),
        exemption,
        rounding: tax::Rounding::EachJurisdiction,
        trust_region: true,
    };
    let calculation = line.table.calculate(&request).map_err(|e| engine_error(&e, "addresses"))?;
    let Some(result) = calculation.lines.first() else {
        return Err(AvaError::new(500, "InternalServerError", 209, "The tax engine returned no line.")
            .target("AvaTaxApiServer"));
    };
    let mut details: Vec<DetailTax> = result
        .details
        .iter()
        .map(|d| DetailTax {
            jurisdiction: avatax_jurisdiction(&calculation.rates, &d.jurisdiction),
            rate: d.rate,
            taxable: d.taxable,
            exempt: d.exempt,
            non_taxable: d.non_taxable,
            tax: d.tax,
            non_taxable_type: if d.non_taxable.is_zero() { "RateRule" } else { "BaseRule" },
        })
        .collect();
    if details.is_empty() && !calculation.has_nexus {
        // Without nexus nothing is collected; AvaTax still lists the jurisdictions, untaxed.
        details = rates
            .jurisdictions
            .iter()
            .map(|j| DetailTax {
                jurisdiction: j.clone(),
                rate: j.rate,
                taxable: Decimal::ZERO,
                exempt: Decimal::ZERO,
                non_taxable: result.amount,
                tax: Decimal::ZERO,
                non_taxable_type: "NexusRule",
            })
            .collect();
    }
    Ok(LineTax {
        invoice_message: None,
        taxable: result.taxable,
        exempt: result.exempt,
        non_taxable: result.non_taxable,
        tax: result.tax,
        details,
    })
}

/// The messages AvaTax prints on an invoice for a line, by its `MessageCode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvoiceMessage {
    NoneApplicable,
    IntraEuSupplyOfGoods,
}

impl InvoiceMessage {
    pub fn code(self) -> u8 {
        match self {
            InvoiceMessage::NoneApplicable => 0,
            InvoiceMessage::IntraEuSupplyOfGoods => 1,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            InvoiceMessage::NoneApplicable => "No applicable messaging for this line.",
            InvoiceMessage::IntraEuSupplyOfGoods => {
                "Intra-EU Supply of Goods as per Art. 138 EU VAT Directive 2006/112"
            }
        }
    }
}

/// Whether a sale is an intra-community supply: shipped from one EU member state to another, to
/// a buyer who gave a business identification (VAT) number. Such a supply is zero-rated where it
/// leaves (Art. 138 of the EU VAT Directive); the buyer accounts for the VAT where it arrives.
pub fn intra_eu_supply(origin: &Place, destination: &Place, business_identification_no: &str) -> bool {
    let (from, to) = (tax::canonical_country(&origin.country), tax::canonical_country(&destination.country));
    from != to && tax::eu_member(&from) && tax::eu_member(&to) && !business_identification_no.trim().is_empty()
}

/// A line of an intra-community supply: the origin country's VAT at a zero rate, the whole amount
/// taxable, and the invoice message of goods (freight has none, as recorded).
pub fn zero_rated_line(
    table: &tax::Table,
    origin: &Place,
    amount: Decimal,
    tax_code: &TaxCode,
) -> Result<LineTax, AvaError> {
    let rates = rates_for(table, origin)?;
    let details = rates
        .jurisdictions
        .into_iter()
        .filter(|j| j.level == JurisLevel::Country)
        .map(|j| DetailTax {
            jurisdiction: Jurisdiction { rate: Decimal::ZERO, tax_name: "Zero Rate".to_owned(), zero_rated: true, ..j },
            rate: Decimal::ZERO,
            taxable: amount,
            exempt: Decimal::ZERO,
            non_taxable: Decimal::ZERO,
            tax: Decimal::ZERO,
            non_taxable_type: "",
        })
        .collect();
    let message = if tax_code.code.starts_with("FR") {
        InvoiceMessage::NoneApplicable
    } else {
        InvoiceMessage::IntraEuSupplyOfGoods
    };
    Ok(LineTax {
        invoice_message: Some(message),
        taxable: amount,
        exempt: Decimal::ZERO,
        non_taxable: Decimal::ZERO,
        tax: Decimal::ZERO,
        details,
    })
}

/// The tax code of a line: empty means general tangible personal property. A code the
/// simulator does not list is taxed as the head of its family (`FR…` freight, `D…` digital, `S…`
/// services, `P…` and anything else tangible goods) and answered as sent: AvaTax's catalogue has
/// thousands of codes, and whether it refuses one it does not have is not known, so it is accepted.
pub fn line_tax_code(code: &str) -> &'static TaxCode {
    let code = code.trim().to_ascii_uppercase();
    if let Some(known) = reference::tax_code(&code) {
        return known;
    }
    let head = match code.as_bytes().first() {
        _ if code.starts_with("FR") => "FR000000",
        Some(b'D') => "D0000000",
        Some(b'S') => "S0000000",
        _ => "P0000000",
    };
    reference::tax_code(head).unwrap_or(&reference::TAX_CODES[0])
}
