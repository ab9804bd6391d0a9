//! The reference lookups: product categories, VAT number validation (format and checksum per
//! country where one is defined) and US address validation against a small address book.

use serde_json::{json, Value};

use super::errors::TaxjarError;
use crate::sandbox::tax;

/// TaxJar's documented categories (api/taxjar.md §3.7), with the fixtures' descriptions.
pub const CATEGORIES: &[(&str, &str, &str)] = &[
    ("10040", "Installation Services", "Installation services separately stated from sales of tangible personal property."),
    ("19000", "General Services", "Miscellaneous services which are not subject to a service-specific tax levy."),
    ("19001", "Advertising Services", "Services rendered for advertising which do not include the exchange of tangible personal property."),
    ("19002", "Parking Services", "Service of providing usage of a parking space."),
    ("19003", "Admission Services", "Admission charges associated with entry to an event."),
    ("19004", "Training Services", "Services provided to educate users on the proper use of a product."),
    ("19005", "Professional Services", "Professional services which are not subject to a service-specific tax levy."),
    ("19006", "Dry Cleaning Services", "Services provided in the cleaning of clothing and fabrics."),
    ("19007", "Repair Services", "Services provided to restore tangible personal property to working order."),
    ("19008", "Hairdressing Services", "Services provided to cut and style human hair."),
    ("19009", "Printing Services", "Services provided to apply graphics and/or text to paper or other substrates."),
    ("20010", "Clothing", "All human wearing apparel suitable for general use"),
    ("20041", "Clothing - Swimwear", "Bathing suits and swim suits"),
    ("30070", "Software as a Service", "Pre-written software, delivered electronically, but access remotely."),
    ("31000", "Digital Goods", "Digital products transferred electronically, meaning obtained by the purchaser by means other than tangible storage media."),
    ("40010", "Candy", "Candy and similar confectionery."),
    ("40020", "Supplements", "Non-food dietary supplements."),
    ("40030", "Food & Groceries", "Food for humans consumption, unprepared"),
    ("40050", "Soft Drinks", "Soft drinks, sweetened and non-alcoholic."),
    ("40060", "Bottled Water", "Bottled, drinkable water for human consumption."),
    ("41000", "Prepared Foods", "Foods intended for on-site consumption."),
    ("51010", "Non-Prescription", "Drugs for human use without a prescription"),
    ("51020", "Prescription", "Drugs for human use with a prescription"),
    ("81100", "Books", "Books, printed."),
    ("81110", "Textbook", "Textbooks, printed."),
    ("81120", "Religious Books", "Religious books and manuals, printed."),
    ("81300", "Magazines & Subscriptions", "Periodicals, printed, sold by subscription."),
    ("81310", "Magazine", "Periodicals, printed, sold individually."),
    ("99999", "Other Exempt", "Item is exempt"),
];

pub fn categories() -> Value {
    Value::Array(
        CATEGORIES
            .iter()
            .map(
                |(code, name, description)| json!({"name": name, "product_tax_code": code, "description": description}),
            )
            .collect(),
    )
}

fn digits(s: &str) -> Option<Vec<u32>> {
    s.chars().map(|c| c.to_digit(10)).collect()
}

fn weighted(d: &[u32], weights: &[u32]) -> u32 {
    d.iter().zip(weights).map(|(a, b)| a * b).sum()
}

fn luhn(d: &[u32]) -> bool {
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &x)| {
            if i % 2 == 1 {
                if x * 2 > 9 {
                    x * 2 - 9
                } else {
                    x * 2
                }
            } else {
                x
            }
        })
        .sum();
    sum % 10 == 0
}

/// ISO 7064 MOD 11,10 (Germany, Croatia).
fn mod11_10(d: &[u32]) -> bool {
    let Some((&check, body)) = d.split_last() else { return false };
    let mut product = 10;
    for &x in body {
        let mut sum = (x + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (2 * sum) % 11;
    }
    (11 - product) % 10 == check
}

fn number(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// Whether `number` (without its country prefix) has the country's format and, where the country
/// defines one, a correct check digit. `None`: no rule for that prefix.
fn vat_number_valid(country: &str, n: &str) -> Option<bool> {
    let all_digits = |len: usize| n.len() == len && n.bytes().all(|b| b.is_ascii_digit());
    let ok = match country {
        "FR" => {
            n.len() == 11
                && n[2..].bytes().all(|b| b.is_ascii_digit())
                && match (number(&n[..2]), number(&n[2..])) {
                    (Some(key), Some(siren)) => key == (12 + 3 * (siren % 97)) % 97,
                    _ => false,
                }
        }
        "DE" | "HR" => all_digits(if country == "DE" { 9 } else { 11 }) && digits(n).is_some_and(|d| mod11_10(&d)),
        "IT" => all_digits(11) && digits(n).is_some_and(|d| luhn(&d)),
        "BE" => {
            all_digits(10)
                && matches!(n.as_bytes()[0], b'0' | b'1')
                && matches!((number(&n[..8]), number(&n[8..])), (Some(a), Some(c)) if 97 - a % 97 == c)
        }
        "NL" => {
            n.len() == 12
                && n.as_bytes()[9] == b'B'
                && digits(&n[..9]).is_some_and(|d| {
                    let sum = weighted(&d[..8], &[9, 8, 7, 6, 5, 4, 3, 2]) % 11;
                    sum == d[8] || nl_mod97(n)
                })
                && n[10..].bytes().all(|b| b.is_ascii_digit())
        }
        "AT" => {
            n.len() == 9
                && n.starts_with('U')
                && digits(&n[1..]).is_some_and(|d| {
                    let sum: u32 = d[..7]
                        .iter()
                        .enumerate()
                        .map(|(i, &x)| if i % 2 == 1 { (x * 2) / 10 + (x * 2) % 10 } else { x })
                        .sum();
                    (10 - (sum + 4) % 10) % 10 == d[7]
                })
        }
        "DK" => all_digits(8) && digits(n).is_some_and(|d| weighted(&d, &[2, 7, 6, 5, 4, 3, 2, 1]) % 11 == 0),
        "FI" => {
            all_digits(8)
                && digits(n).is_some_and(|d| match weighted(&d[..7], &[7, 9, 10, 5, 8, 4, 2]) % 11 {
                    0 => d[7] == 0,
                    1 => false,
                    r => d[7] == 11 - r,
                })
        }
        "PL" => {
            all_digits(10) && digits(n).is_some_and(|d| weighted(&d[..9], &[6, 5, 7, 2, 3, 4, 5, 6, 7]) % 11 == d[9])
        }
        "PT" => {
            all_digits(9)
                && digits(n).is_some_and(|d| {
                    let check = 11 - weighted(&d[..8], &[9, 8, 7, 6, 5, 4, 3, 2]) % 11;
                    (if check >= 10 { 0 } else { check }) == d[8]
                })
        }
        "SE" => all_digits(12) && n.ends_with("01") && digits(&n[..10]).is_some_and(|d| luhn(&d)),
        "LU" => all_digits(8) && matches!((number(&n[..6]), number(&n[6..])), (Some(a), Some(c)) if a % 89 == c),
        "GB" | "XI" => {
            (all_digits(9) || all_digits(12))
                && digits(&n[..9]).is_some_and(|d| {
                    let sum = weighted(&d[..7], &[8, 7, 6, 5, 4, 3, 2]) + d[7] * 10 + d[8];
                    sum % 97 == 0 || (sum + 55) % 97 == 0
                })
        }
        "AU" => {
            all_digits(11)
                && digits(n).is_some_and(|mut d| {
                    d[0] = d[0].wrapping_sub(1);
                    d[0] < 10 && weighted(&d, &[10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19]) % 89 == 0
                })
        }
        // Format only: these countries' check digits are not modelled.
        "ES" => {
            n.len() == 9 && n.bytes().all(|b| b.is_ascii_alphanumeric()) && n[1..8].bytes().all(|b| b.is_ascii_digit())
        }
        "IE" => {
            (8..=9).contains(&n.len())
                && n.bytes().all(|b| b.is_ascii_alphanumeric())
                && n.as_bytes()[0].is_ascii_digit()
        }
        "EL" | "GR" => all_digits(9),
        "HU" | "SI" | "MT" => all_digits(8),
        "CZ" => (8..=10).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()),
        "SK" => all_digits(10),
        "RO" => (2..=10).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()),
        "BG" => (9..=10).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()),
        "CY" => n.len() == 9 && n[..8].bytes().all(|b| b.is_ascii_digit()) && n.as_bytes()[8].is_ascii_uppercase(),
        "EE" => all_digits(9),
        "LV" => all_digits(11),
        "LT" => all_digits(9) || all_digits(12),
        _ => return None,
    };
    Some(ok)
}

/// The Dutch sole-proprietor numbers since 2020: `NL` + number, letters as 10.., mod 97 == 1.
fn nl_mod97(n: &str) -> bool {
    let text: String = format!("NL{n}")
        .chars()
        .map(|c| if c.is_ascii_digit() { c.to_string() } else { (u32::from(c) - u32::from('A') + 10).to_string() })
        .collect();
    text.chars().filter_map(|c| c.to_digit(10)).fold(0u64, |acc, d| (acc * 10 + u64::from(d)) % 97) == 1
}

/// Companies the sandbox's VIES knows by name (from TaxJar's docs); other valid numbers answer
/// `---`, as VIES does for member states that do not disclose names.
const VIES_NAMES: &[(&str, &str, &str)] = &[("FR40303265045", "SA SODIMAS", "11 RUE AMPERE\n26600 PONT DE L ISERE")];

const EU_PREFIXES: &[&str] = &[
    "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "EL", "HU", "IE", "IT", "LV", "LT", "LU", "MT",
    "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "XI",
];

/// `GET /v2/validation?vat=…`.
pub fn validate_vat(vat: &str, today: &str) -> Result<Value, TaxjarError> {
    let compact: String =
        vat.chars().filter(|c| !c.is_whitespace() && !matches!(c, '.' | '-')).map(|c| c.to_ascii_uppercase()).collect();
    let (prefix, rest) = compact.split_at(compact.len().min(2));
    if prefix.len() < 2 || !prefix.bytes().all(|b| b.is_ascii_uppercase()) || rest.is_empty() {
        return Err(TaxjarError::bad_request(format!(
            "vat {vat} must start with a two-letter country code, e.g. FR40303265045"
        )));
    }
    let valid = vat_number_valid(prefix, rest).unwrap_or(false);
    let in_vies = EU_PREFIXES.contains(&prefix);
    let response = if in_vies {
        let (name, address) = VIES_NAMES
            .iter()
            .find(|(number, _, _)| *number == compact)
            .map_or(("---", "---"), |(_, name, address)| (*name, *address));
        json!({"country_code": prefix, "vat_number": rest, "request_date": today, "valid": valid,
               "name": if valid { name } else { "---" }, "address": if valid { address } else { "---" }})
    } else {
        Value::Null
    };
    Ok(json!({"valid": valid, "exists": in_vies && valid, "vies_available": in_vies, "vies_response": response}))
}

/// Street addresses the sandbox's postal database knows (TaxJar's docs' examples and the
/// seeded data's addresses): street, city, state, ZIP+4.
const ADDRESS_BOOK: &[(&str, &str, &str, &str)] = &[
    ("3301 S Greenfield Rd", "Gilbert", "AZ", "85297-2176"),
    ("1109 S 9th Ave", "Phoenix", "AZ", "85007-3646"),
    ("1109 N 9th St", "Phoenix", "AZ", "85006-2734"),
    ("9500 Gilman Dr", "La Jolla", "CA", "92093-0005"),
    ("1335 E 103rd St", "Los Angeles", "CA", "90002-3439"),
    ("123 Palm Grove Ln", "Los Angeles", "CA", "90002-1234"),
    ("123 Main St", "Irvine", "CA", "92615-1234"),
    ("1281 State St", "Santa Barbara", "CA", "93107-1211"),
    ("1725 Slough Ave", "Scranton", "PA", "18504-1234"),
    ("350 5th Ave", "New York", "NY", "10001-0001"),
    ("100 Ravine Ln NE", "Bainbridge Island", "WA", "98110-2687"),
    ("1510 Foster Cir", "Algonquin", "IL", "60102-6659"),
];

/// Upper case, single spaces, common words abbreviated as USPS does.
fn normalise_street(street: &str) -> String {
    street
        .split_whitespace()
        .map(|w| {
            let w = w.trim_end_matches(['.', ',']).to_ascii_uppercase();
            match w.as_str() {
                "STREET" => "ST".into(),
                "AVENUE" => "AVE".into(),
                "ROAD" => "RD".into(),
                "DRIVE" => "DR".into(),
                "LANE" => "LN".into(),
                "CIRCLE" => "CIR".into(),
                "SOUTH" => "S".into(),
                "NORTH" => "N".into(),
                "EAST" => "E".into(),
                "WEST" => "W".into(),
                "NORTHEAST" => "NE".into(),
                _ => w,
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn title_case(upper: &str) -> String {
    upper
        .split(' ')
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map(|c| c.to_string() + &chars.as_str().to_lowercase()).unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `POST /v2/addresses/validate`: the matches, or 404 when nothing matches.
pub fn validate_address(
    table: &tax::Table,
    country: Option<&str>,
    state: Option<&str>,
    zip: Option<&str>,
    city: Option<&str>,
    street: Option<&str>,
) -> Result<Value, TaxjarError> {
    if let Some(country) = country.filter(|c| !c.eq_ignore_ascii_case("US")) {
        return Err(TaxjarError::bad_request(format!(
            "country {country} is not supported; only US addresses validate"
        )));
    }
    if state.is_none() && zip.is_none() && city.is_none() && street.is_none() {
        return Err(TaxjarError::missing("street, zip, city or state"));
    }
    let zip5 = match zip {
        // Short ZIPs lose their leading zeros in spreadsheets: `501` is `00501`.
        Some(z) if z.len() < 5 && z.bytes().all(|b| b.is_ascii_digit()) => Some(format!("{z:0>5}")),
        Some(z) => Some(
            tax::zip5(z)
                .ok_or_else(|| TaxjarError::bad_request(format!("zip {z} is not a valid US ZIP code")))?
                .to_owned(),
        ),
        None => None,
    };
    let state = state.map(str::to_ascii_uppercase);
    let not_found = || TaxjarError::not_found("Resource can't be found");
    let Some(street) = street else {
        // ZIP only (or with city and state): the ZIP's place, no street.
        let zip5 = zip5.ok_or_else(|| TaxjarError::missing("zip"))?;
        let rates =
            table.rates(&tax::Address::us(state.as_deref().unwrap_or_default(), &zip5)).map_err(|_| not_found())?;
        if rates.state_fallback {
            return Err(not_found());
        }
        return Ok(json!([{"zip": zip5, "state": rates.region, "country": "US", "city": title_case(&rates.city)}]));
    };
    let wanted = normalise_street(street);
    let matches: Vec<Value> = ADDRESS_BOOK
        .iter()
        .filter(|(s, c, st, z)| {
            let known = normalise_street(s);
            // A street without a direction (`1109 9th`) matches every direction of it.
            let loose: String =
                known.split(' ').filter(|w| !matches!(*w, "N" | "S" | "E" | "W" | "NE")).collect::<Vec<_>>().join(" ");
            (known == wanted || known.starts_with(&format!("{wanted} ")) || loose.starts_with(&wanted))
                && state.as_deref().is_none_or(|x| x == *st)
                && city.is_none_or(|x| x.eq_ignore_ascii_case(c))
                && zip5.as_deref().is_none_or(|x| z.starts_with(x))
        })
        .map(|(s, c, st, z)| json!({"zip": z, "street": s, "state": st, "country": "US", "city": c}))
        .collect();
    if matches.is_empty() {
        return Err(not_found());
    }
    Ok(Value::Array(matches))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vat_checksums() {
        for good in [
            "FR40303265045",
            "DE136695976",
            "IT00743110157",
            "BE0417497106",
            "NL004495445B01",
            "ATU13585627",
            "DK13585628",
            "FI20774740",
            "PL5260250995",
            "PT501964843",
            "GB980780684",
            "AU51824753556",
            "LU15027442",
            "SE556188840401",
        ] {
            let (p, n) = good.split_at(2);
            assert_eq!(vat_number_valid(p, n), Some(true), "{good}");
        }
        for bad in ["FR41303265045", "DE136695977", "IT00743110158", "BE0417497107", "DK13585627", "AU51824753557"] {
            let (p, n) = bad.split_at(2);
            assert_eq!(vat_number_valid(p, n), Some(false), "{bad}");
        }
        assert_eq!(vat_number_valid("ZZ", "123"), None);
    }

    #[test]
    fn addresses() {
        let table = crate::sandbox::tax::builtin().unwrap();
        let phoenix =
            validate_address(&table, None, Some("AZ"), None, Some("Phoenix"), Some("1109 9th")).unwrap_or_default();
        assert_eq!(phoenix.as_array().map(Vec::len), Some(2));
        let seattle = validate_address(&table, None, None, Some("98122"), None, None).unwrap_or_default();
        assert_eq!(seattle[0]["city"], "Seattle");
        assert_eq!(
            validate_address(&table, None, None, Some("501"), None, None).unwrap_or_default()[0]["zip"],
            "00501"
        );
        assert_eq!(
            validate_address(&table, None, None, None, None, Some("1 Nowhere Rd")).map_err(|e| e.status.as_u16()),
            Err(404)
        );
    }
}
