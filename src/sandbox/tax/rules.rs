//! Product taxability: which vendor codes mean what, and how much of a line each jurisdiction
//! taxes under the state's rules.

use rust_decimal::Decimal;

use super::table::{ClothingRule, GroceryRule, StateRow};
use super::{Jurisdiction, Level, Rates, TaxError};

/// What a product is, for tax purposes. Both vendors' codes map onto these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// Tangible goods taxed everywhere that has a sales tax (TaxJar: no code; AvaTax `P0000000`).
    General,
    Clothing,
    /// Unprepared food (TaxJar 40030, 40060; AvaTax `PF05…`).
    Grocery,
    DigitalGoods,
    Saas,
    Services,
    /// Shipping; taxed where the state taxes freight.
    Freight,
    Prescription,
    /// Never taxed (TaxJar 99999, AvaTax `NT`).
    NonTaxable,
}

impl Category {
    /// The category of a line's tax code: TaxJar's 5-digit codes or AvaTax's letter codes. No
    /// code means general merchandise, and so does a code neither vendor defines: recorded TaxJar
    /// traffic shows `/v2/taxes` and `/v2/transactions/orders` answering 200/201 for codes such as
    /// `123` or `TaxCode - 410790` and taxing the line as general merchandise, and AvaTax taxes
    /// an unknown code of a known family as that family. (`line` names the line for callers that
    /// report what they did with it.)
    pub fn of(line: &str, code: Option<&str>) -> Result<Category, TaxError> {
        let _ = line;
        let code = code.map(str::trim).unwrap_or_default();
        if code.is_empty() {
            return Ok(Category::General);
        }
        if code.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(taxjar_category(code).unwrap_or(Category::General));
        }
        Ok(avatax_category(&code.to_ascii_uppercase()).unwrap_or(Category::General))
    }
}

/// TaxJar's documented categories (`GET /v2/categories`).
fn taxjar_category(code: &str) -> Option<Category> {
    Some(match code {
        "10040" | "19000" | "19001" | "19002" | "19003" | "19004" | "19005" | "19006" | "19007" | "19008" | "19009" => {
            Category::Services
        }
        "20010" | "20041" => Category::Clothing,
        "30070" => Category::Saas,
        "31000" => Category::DigitalGoods,
        "40030" | "40060" => Category::Grocery,
        // Candy, supplements, soft drinks and prepared food are taxed as general merchandise where
        // groceries are exempt; over-the-counter drugs carry no rule of their own in the table.
        "40010" | "40020" | "40050" | "41000" | "51010" | "81100" | "81110" | "81120" | "81300" | "81310" => {
            Category::General
        }
        "51020" => Category::Prescription,
        "99999" => Category::NonTaxable,
        _ => return None,
    })
}

/// AvaTax codes: a letter family and digits (`P0000000`, `PC040100`, `FR020100`), or `NT`.
fn avatax_category(code: &str) -> Option<Category> {
    if code == "NT" {
        return Some(Category::NonTaxable);
    }
    // AvaTax's short freight code, sent by most integrations for a shipping line.
    if code == "FR" {
        return Some(Category::Freight);
    }
    let letters = code.bytes().take_while(u8::is_ascii_uppercase).count();
    let digits = &code[letters..];
    if !(1..=2).contains(&letters) || code.len() != 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match &code[..letters] {
        "FR" => Category::Freight,
        "PC" if digits.starts_with("04") => Category::Clothing,
        // PF050101 carbonated beverages is taxed where groceries are not.
        "PF" if code == "PF050101" => Category::General,
        "PF" if digits.starts_with("05") => Category::Grocery,
        "PH" if digits.starts_with("0502") => Category::Prescription,
        "D" | "DC" | "DM" => Category::DigitalGoods,
        "SW" if digits.starts_with("054") => Category::Saas,
        "SW" => Category::DigitalGoods,
        "S" | "SA" | "SB" | "SC" | "SD" | "SE" | "SF" | "SH" | "SL" | "SP" | "SR" | "ST" => Category::Services,
        "P" | "PA" | "PB" | "PC" | "PE" | "PF" | "PH" | "PM" | "PN" | "PR" | "PS" | "PT" => Category::General,
        "ON" | "OF" | "OH" | "OM" | "OR" | "OS" => Category::NonTaxable,
        _ => return None,
    })
}

/// AvaTax's entity use codes; each one exempts the customer's purchases.
pub const ENTITY_USE_CODES: &[(&str, &str)] = &[
    ("A", "Federal government"),
    ("B", "State government"),
    ("C", "Tribe / Status Indian / Indian Band"),
    ("D", "Foreign diplomat"),
    ("E", "Charitable or benevolent organization"),
    ("F", "Religious organization"),
    ("G", "Resale"),
    ("H", "Commercial agricultural production"),
    ("I", "Industrial production / manufacturer"),
    ("J", "Direct pay permit"),
    ("K", "Direct mail"),
    ("L", "Other"),
    ("M", "Educational organization"),
    ("N", "Local government"),
    ("P", "Commercial aquaculture"),
    ("Q", "Commercial fishery"),
    ("R", "Non-resident"),
];

/// The description of an entity use code, or `None` when it is not one.
pub fn entity_use_code_description(code: &str) -> Option<&'static str> {
    let code = code.trim();
    ENTITY_USE_CODES.iter().find(|(c, _)| c.eq_ignore_ascii_case(code)).map(|(_, d)| *d)
}

/// How much of a line (`net`, `quantity` units of `unit` each) one jurisdiction taxes, and at
/// which rate. Outside the US every category but prescriptions and non-taxable goods is taxed.
pub(super) fn taxable_part(
    state: Option<&StateRow>,
    rates: &Rates,
    category: Category,
    jurisdiction: &Jurisdiction,
    unit: Decimal,
    quantity: Decimal,
    net: Decimal,
) -> (Decimal, Decimal) {
    let full = (net, jurisdiction.rate);
    let none = (Decimal::ZERO, jurisdiction.rate);
    let taxed_if = |taxable: bool| if taxable { full } else { none };
    let is_state = jurisdiction.level == Level::State;
    match category {
        Category::NonTaxable | Category::Prescription => none,
        Category::General => full,
        Category::Freight => taxed_if(rates.freight_taxable),
        _ => {
            let Some(state) = state else { return full };
            match category {
                Category::Clothing => match state.clothing {
                    ClothingRule::Taxable => full,
                    ClothingRule::Exempt => none,
                    ClothingRule::StateExemptUnder(limit) => taxed_if(!(is_state && unit.abs() < limit)),
                    ClothingRule::ExemptFirst(limit) => {
                        let excess = (unit.abs() - limit).max(Decimal::ZERO) * quantity;
                        (super::with_sign_of(excess, net), jurisdiction.rate)
                    }
                },
                Category::Grocery => match state.grocery {
                    GroceryRule::Taxable => full,
                    GroceryRule::Exempt => none,
                    GroceryRule::Reduced(rate) if is_state => (net, rate),
                    GroceryRule::Reduced(_) => full,
                },
                Category::DigitalGoods => taxed_if(state.digital_taxable),
                Category::Saas => taxed_if(state.saas_taxable),
                Category::Services => taxed_if(state.services_taxable),
                Category::General | Category::Freight | Category::Prescription | Category::NonTaxable => full,
            }
        }
    }
}
