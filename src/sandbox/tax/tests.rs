#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use super::*;

fn table() -> Arc<Table> {
    builtin().unwrap()
}

fn rates(address: &Address) -> Result<Rates, TaxError> {
    table().rates(address)
}

fn calculate(request: &Request) -> Result<Calculation, TaxError> {
    table().calculate(request)
}

fn request(to: Address, lines: Vec<Line>, freight: Decimal, nexus: &[(&str, &str)]) -> Request {
    Request {
        from: None,
        to,
        lines,
        freight,
        nexus: nexus.iter().map(|(c, r)| Region::new(c, r)).collect(),
        exemption: Exemption::default(),
        rounding: Rounding::Document,
        trust_region: false,
    }
}

fn detail(line: &LineTax, level: Level) -> (Decimal, Decimal, Decimal) {
    let parts: Vec<_> = line.details.iter().filter(|d| d.jurisdiction.level == level).collect();
    (
        parts.iter().map(|d| d.taxable).max().unwrap_or_default(),
        parts.iter().map(|d| d.rate).sum(),
        parts.iter().map(|d| d.tax).sum(),
    )
}

#[test]
fn shipped_table_parses_and_covers_what_the_vendors_need() {
    let table = table();
    assert_eq!(table.states.len(), 51, "50 states and DC");
    assert!(table.zips.len() >= 40, "only {} ZIPs", table.zips.len());
    for country in [
        "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT", "LU",
        "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "GB", "AU",
    ] {
        assert!(table.international(country, "").is_some(), "{country} missing");
    }
    for province in ["AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT"] {
        assert!(table.international.iter().any(|r| r.country == "CA" && r.region == province), "{province}");
    }
    assert!(table.zips.iter().all(|z| !z.source.is_empty() && !z.date.is_empty()));
}

#[test]
fn broken_table_files_are_reported_with_file_and_line() {
    let states = include_str!("data/us_states.csv");
    let zips = include_str!("data/us_zips.csv");
    let intl = include_str!("data/international.csv");
    let bad_rate = zips.replace("90404,CA,LOS ANGELES,SANTA MONICA,0.0625", "90404,CA,LOS ANGELES,SANTA MONICA,six");
    let error = table::parse(states, &bad_rate, intl).unwrap_err();
    assert!(error.starts_with("us_zips.csv:") && error.contains("`six` is not a number"), "{error}");
    let wrong_state = zips.replace("90404,CA,", "90404,NY,");
    assert!(table::parse(states, &wrong_state, intl).unwrap_err().contains("not within the ZIP prefixes of NY"));
    let no_date = intl.replace("Australian Taxation Office GST,2024-01-01", "Australian Taxation Office GST,soon");
    assert!(table::parse(states, zips, &no_date).unwrap_err().contains("is not YYYY-MM-DD"));
    let bad_rule = states.replace("exempt_first:175", "exempt_over:175");
    assert!(table::parse(&bad_rule, zips, intl).unwrap_err().contains("clothing rule `exempt_over:175`"));
    let short = states.replace("AK,Alaska,0,", "AK,Alaska,");
    assert!(table::parse(&short, zips, intl).unwrap_err().contains("13 fields, expected 14"));
}

#[test]
fn rates_of_a_listed_zip_break_down_by_jurisdiction() {
    let rates = rates(&Address { city: "Santa Monica".into(), ..Address::us("CA", "90404") }).unwrap();
    assert_eq!(rates.rate_at(Level::State), dec!(0.0625));
    assert_eq!(rates.rate_at(Level::County), dec!(0.01));
    assert_eq!(rates.rate_at(Level::City), dec!(0));
    assert_eq!(rates.rate_at(Level::Special), dec!(0.025));
    assert_eq!(rates.combined_rate, dec!(0.0975));
    assert_eq!((rates.county.as_str(), rates.city.as_str()), ("LOS ANGELES", "SANTA MONICA"));
    assert!(!rates.freight_taxable && !rates.state_fallback && !rates.sst);
    // ZIP+4 and a missing state are fine; the table knows the state.
    let vermont = table().rates(&Address::us("", "05495-2086")).unwrap();
    assert_eq!((vermont.region.as_str(), vermont.combined_rate, vermont.sst), ("VT", dec!(0.07), true));
    assert!(vermont.freight_taxable);
}

#[test]
fn an_unknown_zip_falls_back_to_the_state_rate_and_says_so() {
    let rates = rates(&Address::us("CA", "90000")).unwrap();
    assert!(rates.state_fallback);
    assert_eq!(rates.combined_rate, dec!(0.0725));
    assert_eq!(rates.jurisdictions.len(), 1);
    assert_eq!(rates.county, "");
    // The ZIP prefix tells the state when none is given.
    assert_eq!(table().rates(&Address::us("", "76102")).unwrap().region, "TX");
}

#[test]
fn bad_addresses_are_refused_with_the_reason() {
    let mismatch = rates(&Address::us("NY", "90002")).unwrap_err();
    assert_eq!(mismatch.to_string(), "postal code 90002 is in CA, not NY");
    let unlisted_mismatch = rates(&Address::us("TX", "90210")).unwrap_err();
    assert!(matches!(unlisted_mismatch, TaxError::PostalCodeRegionMismatch { .. }));
    assert!(matches!(rates(&Address::us("CA", "9000")), Err(TaxError::InvalidPostalCode { .. })));
    assert!(matches!(rates(&Address::us("CA", "")), Err(TaxError::Missing { .. })));
    assert!(matches!(rates(&Address::us("ZZ", "90002")), Err(TaxError::UnknownRegion { .. })));
    assert_eq!(rates(&Address::default()).unwrap_err(), TaxError::MissingCountry);
    let atlantis = Address { country: "Atlantis".into(), ..Address::default() };
    assert!(matches!(rates(&atlantis), Err(TaxError::UnknownCountry(_))));
    // A country code the table has no rates for is taxed at nothing, not refused (recorded AvaTax
    // answers for Costa Rica are 201).
    let costa_rica = rates(&Address { country: "CR".into(), ..Address::default() }).unwrap();
    assert!(costa_rica.jurisdictions.is_empty() && costa_rica.combined_rate.is_zero());
    let canada =
        Address { country: "CA".into(), region: "BC".into(), postal_code: "M5V 2T6".into(), ..Address::default() };
    assert!(matches!(rates(&canada), Err(TaxError::PostalCodeRegionMismatch { .. })));
}

#[test]
fn international_rates() {
    let vancouver =
        rates(&Address { country: "CA".into(), postal_code: "v5k0a1".into(), ..Address::default() }).unwrap();
    assert_eq!((vancouver.region.as_str(), vancouver.postal_code.as_str()), ("BC", "V5K 0A1"));
    assert_eq!(vancouver.combined_rate, dec!(0.12));
    assert_eq!(vancouver.rate_of(TaxKind::Gst), dec!(0.05));
    let quebec = rates(&Address { country: "CA".into(), region: "QC".into(), ..Address::default() }).unwrap();
    assert_eq!(quebec.rate_of(TaxKind::Qst), dec!(0.09975));
    let finland = rates(&Address { country: "FI".into(), ..Address::default() }).unwrap();
    assert_eq!(finland.vat.unwrap().standard, dec!(0.24));
    let uk = rates(&Address { country: "UK".into(), ..Address::default() }).unwrap();
    assert_eq!((uk.country.as_str(), uk.combined_rate), ("GB", dec!(0.20)));
    let australia = rates(&Address { country: "AU".into(), postal_code: "2060".into(), ..Address::default() }).unwrap();
    assert_eq!((australia.combined_rate, australia.vat), (dec!(0.10), None));
}

/// TaxJar's docs: La Jolla → Los Angeles, 15 + 1.5 shipping at 9%.
#[test]
fn taxjar_docs_example_los_angeles() {
    let mut req = request(
        Address::us("CA", "90002"),
        vec![Line::new("1", dec!(1), dec!(15)).with_code("20010")],
        dec!(1.5),
        &[("US", "CA")],
    );
    req.from = Some(Address::us("CA", "92093"));
    let calc = calculate(&req).unwrap();
    assert!(calc.has_nexus && !calc.freight_taxable);
    assert_eq!(calc.sourcing, Sourcing::Destination);
    assert_eq!(calc.total_tax, dec!(1.35));
    assert_eq!(calc.total_taxable, dec!(15));
    assert_eq!(calc.total_amount, dec!(16.5));
    let line = &calc.lines[0];
    assert_eq!((line.tax, line.rate), (dec!(1.35), dec!(0.09)));
    assert_eq!(detail(line, Level::State), (dec!(15), dec!(0.0625), dec!(0.94)));
    assert_eq!(detail(line, Level::County), (dec!(15), dec!(0.0025), dec!(0.04)));
    assert_eq!(detail(line, Level::Special), (dec!(15), dec!(0.025), dec!(0.38)));
    let freight = calc.freight.as_ref().unwrap();
    assert_eq!((freight.taxable, freight.tax), (dec!(0), dec!(0)));
}

/// TaxJar's Ruby fixture: Avenel → Ramsey NJ, 7%, freight taxable.
#[test]
fn taxjar_fixture_new_jersey_taxes_freight() {
    let mut req =
        request(Address::us("NJ", "07446"), vec![Line::new("1", dec!(1), dec!(15))], dec!(1.5), &[("US", "NJ")]);
    req.from = Some(Address::us("NJ", "07001"));
    let calc = calculate(&req).unwrap();
    assert!(calc.freight_taxable);
    assert_eq!((calc.total_taxable, calc.total_tax), (dec!(16.5), dec!(1.16)));
    assert_eq!(calc.lines[0].tax, dec!(1.05));
    assert_eq!(calc.freight.as_ref().unwrap().tax, dec!(0.11));
}

/// AvaTax's SDK fixture: 100 of yarn in Irvine, four jurisdictions, 7.75.
#[test]
fn avatax_fixture_irvine_rounds_each_jurisdiction() {
    let mut req = request(
        Address::us("CA", "92615"),
        vec![Line::new("1", dec!(1), dec!(100)).with_code("PS081282")],
        dec!(0),
        &[("US", "CA")],
    );
    req.rounding = Rounding::EachJurisdiction;
    let calc = calculate(&req).unwrap();
    assert_eq!(calc.total_tax, dec!(7.75));
    let taxes: Vec<_> = calc.lines[0].details.iter().map(|d| (d.jurisdiction.name.as_str(), d.tax)).collect();
    assert_eq!(
        taxes,
        [
            ("CALIFORNIA", dec!(6.00)),
            ("ORANGE", dec!(0.25)),
            ("ORANGE COUNTY DISTRICT TAX SP", dec!(0.50)),
            ("ORANGE CO LOCAL TAX SL", dec!(1.00))
        ]
    );
    assert!(calc.freight.is_none());
}

/// AvaTax dev guide 5.1.1: 100 in Bainbridge Island WA is 9.00.
#[test]
fn avatax_dev_guide_bainbridge_island() {
    let mut req = request(
        Address::us("WA", "98110"),
        vec![Line::new("1", dec!(1), dec!(100)).with_code("PH405370")],
        dec!(0),
        &[("US", "WA")],
    );
    req.rounding = Rounding::EachJurisdiction;
    assert_eq!(calculate(&req).unwrap().total_tax, dec!(9.00));
}

#[test]
fn rounding_choice_changes_totals_the_documented_way() {
    // Three lines of 0.10 at 9%: AvaTax rounds every jurisdiction of every line, TaxJar once.
    let lines: Vec<Line> = (1..=3).map(|i| Line::new(&i.to_string(), dec!(1), dec!(0.10))).collect();
    let mut req = request(Address::us("CA", "90002"), lines, dec!(0), &[("US", "CA")]);
    let document = calculate(&req).unwrap();
    assert_eq!(document.total_tax, dec!(0.03)); // 0.027
    req.rounding = Rounding::EachJurisdiction;
    let each = calculate(&req).unwrap();
    // State 0.00625 → 0.01, county 0.00025 → 0, special 0.0025 → 0 per line.
    assert_eq!(each.total_tax, dec!(0.03));
    assert_eq!(each.lines[0].tax, dec!(0.01));
    assert_eq!(document.lines[0].tax, dec!(0.01));
    let single = Line::new("1", dec!(1), dec!(0.50));
    let mut req = request(Address::us("CA", "92615"), vec![single], dec!(0), &[("US", "CA")]);
    // 0.50 × 7.75% = 0.03875: once → 0.04; per jurisdiction 0.03 + 0.00 + 0.00 + 0.01 = 0.04.
    assert_eq!(calculate(&req).unwrap().total_tax, dec!(0.04));
    req.lines[0].amount = dec!(0.30); // 0.02325 → 0.02; per jurisdiction 0.02 + 0 + 0 + 0 = 0.02
    req.rounding = Rounding::EachJurisdiction;
    req.lines.push(Line::new("2", dec!(1), dec!(0.30)));
    let each = calculate(&req).unwrap();
    req.rounding = Rounding::Document;
    let once = calculate(&req).unwrap();
    // Two lines of 0.02325: 0.02 + 0.02 per jurisdiction rounding, 0.0465 → 0.05 once.
    assert_eq!((each.total_tax, once.total_tax), (dec!(0.04), dec!(0.05)));
}

#[test]
fn origin_sourced_intrastate_sale_uses_the_origin_rate() {
    let mut req =
        request(Address::us("TX", "75201"), vec![Line::new("1", dec!(1), dec!(100))], dec!(10), &[("US", "TX")]);
    req.from = Some(Address::us("TX", "78701"));
    let calc = calculate(&req).unwrap();
    assert_eq!(calc.sourcing, Sourcing::Origin);
    assert_eq!(calc.rates.city, "AUSTIN");
    assert!(calc.freight_taxable);
    assert_eq!(calc.total_tax, dec!(9.08)); // 110 × 8.25% = 9.075
                                            // An interstate sale into Texas is sourced at the destination.
    req.from = Some(Address::us("CA", "90002"));
    let calc = calculate(&req).unwrap();
    assert_eq!((calc.sourcing, calc.rates.city.as_str()), (Sourcing::Destination, "DALLAS"));
}

#[test]
fn without_nexus_nothing_is_collected() {
    let mut req =
        request(Address::us("OR", "97035"), vec![Line::new("1", dec!(1), dec!(15))], dec!(1.5), &[("US", "CA")]);
    req.from = Some(Address::us("FL", "33101"));
    let calc = calculate(&req).unwrap();
    assert!(!calc.has_nexus && !calc.freight_taxable);
    assert_eq!((calc.total_tax, calc.total_taxable), (dec!(0), dec!(0)));
    assert_eq!(calc.lines[0].non_taxable, dec!(15));
    // Nexus elsewhere in a state with tax: still nothing.
    let calc =
        calculate(&request(Address::us("TX", "77002"), vec![Line::new("1", dec!(1), dec!(15))], dec!(0), &[])).unwrap();
    assert!(!calc.has_nexus);
    assert_eq!(calc.total_tax, dec!(0));
}

#[test]
fn clothing_depends_on_the_state() {
    let shirt = |price: Decimal| vec![Line::new("1", dec!(2), price * dec!(2)).with_code("20010")];
    let tax = |to: Address, lines, state| calculate(&request(to, lines, dec!(0), &[("US", state)])).unwrap();
    for (state, zip) in [("PA", "19103"), ("NJ", "08608"), ("MN", "55401")] {
        let calc = tax(Address::us(state, zip), shirt(dec!(20)), state);
        assert_eq!((calc.total_tax, calc.total_taxable), (dec!(0), dec!(0)), "{state}");
        assert_eq!(calc.lines[0].non_taxable, dec!(40));
    }
    // New York: under 110 a unit, the state part is exempt and local parts apply.
    let calc = tax(Address::us("NY", "10541"), shirt(dec!(20)), "NY");
    assert_eq!(detail(&calc.lines[0], Level::State).0, dec!(0));
    assert_eq!(detail(&calc.lines[0], Level::County), (dec!(40), dec!(0.04), dec!(1.60)));
    assert_eq!(calc.total_tax, dec!(1.75)); // 40 × (0.04 + 0.00375)
    assert_eq!(calc.lines[0].rate, dec!(0.04375));
    let calc = tax(Address::us("NY", "10541"), shirt(dec!(120)), "NY");
    assert_eq!(calc.total_tax, dec!(20.10)); // 240 × 8.375%
                                             // Massachusetts: the first 175 of each unit is exempt.
    let calc = tax(Address::us("MA", "01608"), shirt(dec!(200)), "MA");
    assert_eq!((calc.lines[0].taxable, calc.total_tax), (dec!(50), dec!(3.13)));
    // California taxes clothing in full.
    assert_eq!(tax(Address::us("CA", "90002"), shirt(dec!(20)), "CA").total_tax, dec!(3.60));
}

#[test]
fn groceries_are_exempt_reduced_or_taxable_by_state() {
    let food = || vec![Line::new("1", dec!(1), dec!(100)).with_code("40030")];
    let tax = |to: Address, state| calculate(&request(to, food(), dec!(0), &[("US", state)])).unwrap();
    let california = tax(Address::us("CA", "90071"), "CA");
    assert_eq!((california.total_tax, california.lines[0].rate), (dec!(0), dec!(0)));
    // Illinois: 1% state instead of 6.25%, Cook County, Chicago and the RTA in full.
    let chicago = tax(Address::us("IL", "60601"), "IL");
    assert_eq!(detail(&chicago.lines[0], Level::State), (dec!(100), dec!(0.01), dec!(1.00)));
    assert_eq!(chicago.total_tax, dec!(5.00)); // 1 + 1.75 + 1.25 + 1
                                               // Mississippi taxes groceries in full: its 7% state rate (Jackson's 1% comes with Avalara's
                                               // ZIP5 tables, which these built-in ones lack).
    assert_eq!(tax(Address::us("MS", "39201"), "MS").total_tax, dec!(7.00));
    // AvaTax's grocery code family maps the same way; carbonated drinks are taxed.
    let mut req = request(
        Address::us("CA", "90071"),
        vec![
            Line::new("1", dec!(1), dec!(100)).with_code("PF050100"),
            Line::new("2", dec!(1), dec!(100)).with_code("PF050101"),
        ],
        dec!(0),
        &[("US", "CA")],
    );
    req.rounding = Rounding::EachJurisdiction;
    let calc = calculate(&req).unwrap();
    assert_eq!((calc.lines[0].tax, calc.lines[1].tax), (dec!(0), dec!(9.00)));
}

#[test]
fn digital_goods_saas_and_freight_differ_by_state() {
    let line = |code: &str| vec![Line::new("1", dec!(1), dec!(100)).with_code(code)];
    let tax = |to: Address, lines, freight, state| calculate(&request(to, lines, freight, &[("US", state)])).unwrap();
    assert_eq!(tax(Address::us("WA", "98122"), line("31000"), dec!(0), "WA").total_tax, dec!(10.25));
    assert_eq!(tax(Address::us("CA", "94105"), line("31000"), dec!(0), "CA").total_tax, dec!(0));
    assert_eq!(tax(Address::us("NY", "10001"), line("30070"), dec!(0), "NY").total_tax, dec!(8.88));
    assert_eq!(tax(Address::us("FL", "33101"), line("30070"), dec!(0), "FL").total_tax, dec!(0));
    // Freight: taxable in Texas, not in California or Massachusetts.
    let texas = tax(Address::us("TX", "77002"), line("20010"), dec!(10), "TX");
    assert!(texas.freight_taxable);
    assert_eq!(texas.freight.as_ref().unwrap().tax, dec!(0.83));
    let california = tax(Address::us("CA", "90002"), vec![], dec!(10), "CA");
    assert!(!california.freight_taxable);
    assert_eq!(california.total_tax, dec!(0));
    // An AvaTax freight line follows the same rule.
    assert_eq!(tax(Address::us("NJ", "07446"), line("FR020100"), dec!(0), "NJ").total_tax, dec!(7.00));
    assert_eq!(tax(Address::us("MA", "02108"), line("FR020100"), dec!(0), "MA").total_tax, dec!(0));
    // Never taxed, anywhere.
    assert_eq!(tax(Address::us("TX", "77002"), line("NT"), dec!(0), "TX").total_tax, dec!(0));
    assert_eq!(tax(Address::us("TX", "77002"), line("51020"), dec!(0), "TX").total_tax, dec!(0));
    assert_eq!(tax(Address::us("TX", "77002"), line("99999"), dec!(0), "TX").total_tax, dec!(0));
}

#[test]
fn exemptions_remove_the_tax_where_they_apply() {
    let base =
        || request(Address::us("PA", "18504"), vec![Line::new("1", dec!(1), dec!(100))], dec!(10), &[("US", "PA")]);
    for kind in [ExemptionKind::Wholesale, ExemptionKind::Government, ExemptionKind::Other] {
        let mut req = base();
        req.exemption = Exemption::everywhere(kind.clone());
        let calc = calculate(&req).unwrap();
        assert!(calc.exempt, "{kind:?}");
        assert_eq!((calc.total_tax, calc.total_exempt, calc.total_taxable), (dec!(0), dec!(110), dec!(0)));
    }
    for kind in [ExemptionKind::NonExempt, ExemptionKind::Marketplace] {
        let mut req = base();
        req.exemption = Exemption::everywhere(kind);
        assert_eq!(calculate(&req).unwrap().total_tax, dec!(6.60));
    }
    // Exempt in FL and PA only (TaxJar's customer example): a sale into Pennsylvania is exempt,
    // into New Jersey it is not.
    let regions = vec![Region::new("US", "FL"), Region::new("US", "PA")];
    let mut req = base();
    req.exemption = Exemption { kind: ExemptionKind::Wholesale, regions: regions.clone() };
    assert_eq!(calculate(&req).unwrap().total_tax, dec!(0));
    req.to = Address::us("NJ", "08608");
    req.nexus = vec![Region::new("US", "NJ")];
    assert_eq!(calculate(&req).unwrap().total_tax, dec!(7.29)); // 110 × 6.625%
                                                                // AvaTax: entity use code G (resale) and an exemption certificate; a line may override.
    let mut req = base();
    req.rounding = Rounding::EachJurisdiction;
    req.exemption = Exemption::everywhere(ExemptionKind::EntityUse("g".into()));
    assert_eq!(calculate(&req).unwrap().total_tax, dec!(0));
    req.exemption = Exemption::everywhere(ExemptionKind::Certificate("GTX1080".into()));
    assert_eq!(calculate(&req).unwrap().total_exempt, dec!(110));
    req.exemption = Exemption::default();
    req.lines[0].exemption = Some(Exemption::everywhere(ExemptionKind::EntityUse("A".into())));
    let calc = calculate(&req).unwrap();
    assert_eq!((calc.lines[0].tax, calc.total_tax), (dec!(0), dec!(0.60)));
    req.lines[0].exemption = Some(Exemption::everywhere(ExemptionKind::EntityUse("Z".into())));
    assert_eq!(calculate(&req).unwrap_err(), TaxError::UnknownEntityUseCode("Z".into()));
}

#[test]
fn international_calculations() {
    let tax = |to: Address, nexus: &[(&str, &str)]| {
        calculate(&request(to, vec![Line::new("1", dec!(1), dec!(15))], dec!(1.5), nexus)).unwrap()
    };
    let toronto =
        Address { country: "CA".into(), region: "ON".into(), postal_code: "M5V 2T6".into(), ..Address::default() };
    let calc = tax(toronto, &[("CA", "ON")]);
    assert!(calc.freight_taxable);
    assert_eq!(calc.total_tax, dec!(2.15)); // 16.5 × 13% = 2.145
    assert_eq!(calc.rates.rate_of(TaxKind::Pst), dec!(0.08));
    let marseille =
        Address { country: "FR".into(), postal_code: "13281".into(), city: "Marseille".into(), ..Address::default() };
    assert_eq!(tax(marseille.clone(), &[("FR", "")]).total_tax, dec!(3.30));
    assert!(!tax(marseille, &[("DE", "")]).has_nexus);
    let richmond =
        Address { country: "AU".into(), region: "VIC".into(), postal_code: "3002".into(), ..Address::default() };
    assert_eq!(tax(richmond, &[("AU", "")]).total_tax, dec!(1.65));
}

#[test]
fn bad_lines_are_refused() {
    let with = |line: Line| calculate(&request(Address::us("CA", "90002"), vec![line], dec!(0), &[("US", "CA")]));
    assert!(matches!(with(Line::new("1", dec!(-1), dec!(10))), Err(TaxError::NegativeQuantity { .. })));
    let mut discounted = Line::new("1", dec!(1), dec!(10));
    discounted.discount = dec!(-1);
    assert!(matches!(with(discounted.clone()), Err(TaxError::NegativeDiscount { .. })));
    discounted.discount = dec!(11);
    assert!(matches!(with(discounted.clone()), Err(TaxError::DiscountExceedsAmount { .. })));
    discounted.discount = dec!(4);
    assert_eq!(with(discounted).unwrap().total_tax, dec!(0.54));
    // A code neither vendor defines is taxed as general merchandise, as both services do.
    let general = with(Line::new("7", dec!(1), dec!(10))).unwrap().total_tax;
    assert_eq!(with(Line::new("7", dec!(1), dec!(10)).with_code("12345")).unwrap().total_tax, general);
    assert_eq!(with(Line::new("1", dec!(1), dec!(10)).with_code("TaxCode - 410790")).unwrap().total_tax, general);
    let mut negative_freight = request(Address::us("CA", "90002"), vec![], dec!(-1), &[]);
    assert!(matches!(calculate(&negative_freight), Err(TaxError::NegativeFreight(_))));
    negative_freight.freight = dec!(0);
    negative_freight.to = Address::us("NY", "90002");
    assert!(matches!(calculate(&negative_freight), Err(TaxError::PostalCodeRegionMismatch { .. })));
}

#[test]
fn returns_with_negative_amounts_get_negative_tax() {
    let mut req =
        request(Address::us("CA", "92615"), vec![Line::new("1", dec!(1), dec!(-100))], dec!(0), &[("US", "CA")]);
    req.rounding = Rounding::EachJurisdiction;
    let calc = calculate(&req).unwrap();
    assert_eq!((calc.total_tax, calc.total_taxable, calc.total_amount), (dec!(-7.75), dec!(-100), dec!(-100)));
}

/// Avalara's ZIP5 tables, loaded, cover the ZIPs users try: New York City's airport ZIP at the
/// city's 8.875 %, and the largest cities of other states with their parts; without them the
/// same ZIP is New York's state rate, and says so.
#[test]
fn avalara_zip5_tables_cover_large_cities_with_their_parts() {
    let builtin = rates(&Address::us("NY", "11430")).unwrap();
    assert!(builtin.state_fallback);
    assert_eq!(builtin.combined_rate, dec!(0.04));
    let Some(dir) = crate::shared_data::ZIP5_TABLES.for_test("avalara_zip5_tables_cover_large_cities") else {
        return;
    };
    let loaded = load_zip5(&dir).unwrap();
    let summary = loaded.zip5.clone().unwrap();
    assert_eq!(
        (summary.files.len(), summary.zips, summary.months.as_slice()),
        (51, 40_677, ["2026-02".to_owned()].as_slice())
    );
    let jfk = loaded.rates(&Address::us("NY", "11430")).unwrap();
    assert!(!jfk.state_fallback);
    assert_eq!(jfk.combined_rate, dec!(0.08875));
    let parts: Vec<(Level, Decimal)> = jfk.jurisdictions.iter().map(|j| (j.level, j.rate)).collect();
    assert_eq!(parts, [(Level::State, dec!(0.04)), (Level::City, dec!(0.045)), (Level::Special, dec!(0.00375))]);
    for (state, zip, combined) in
        [("AZ", "85001", dec!(0.091)), ("TX", "77001", dec!(0.0825)), ("WA", "98101", dec!(0.1055))]
    {
        let r = loaded.rates(&Address::us(state, zip)).unwrap();
        assert_eq!((r.combined_rate, r.state_fallback, r.as_of.as_str()), (combined, false, "2026-02-01"), "{zip}");
    }
    // The hand-kept rows (the vendors' documented examples) keep their rates.
    assert_eq!(loaded.rates(&Address::us("CA", "90002")).unwrap(), rates(&Address::us("CA", "90002")).unwrap());
    for s in &loaded.states {
        assert!(loaded.zips.iter().any(|z| z.state == s.code), "{} has no ZIP rows", s.code);
    }
}
