//! Reference data the AvaTax simulator needs besides rates: US states (codes, names, FIPS
//! codes, as nexus records carry them), the tax codes it knows, the entity use codes, and
//! coordinates of the postal codes the address resolver can place.

/// (postal abbreviation, name as AvaTax writes it, FIPS state code).
pub const US_STATES: &[(&str, &str, &str)] = &[
    ("AL", "ALABAMA", "01"),
    ("AK", "ALASKA", "02"),
    ("AZ", "ARIZONA", "04"),
    ("AR", "ARKANSAS", "05"),
    ("CA", "CALIFORNIA", "06"),
    ("CO", "COLORADO", "08"),
    ("CT", "CONNECTICUT", "09"),
    ("DE", "DELAWARE", "10"),
    ("DC", "DISTRICT OF COLUMBIA", "11"),
    ("FL", "FLORIDA", "12"),
    ("GA", "GEORGIA", "13"),
    ("HI", "HAWAII", "15"),
    ("ID", "IDAHO", "16"),
    ("IL", "ILLINOIS", "17"),
    ("IN", "INDIANA", "18"),
    ("IA", "IOWA", "19"),
    ("KS", "KANSAS", "20"),
    ("KY", "KENTUCKY", "21"),
    ("LA", "LOUISIANA", "22"),
    ("ME", "MAINE", "23"),
    ("MD", "MARYLAND", "24"),
    ("MA", "MASSACHUSETTS", "25"),
    ("MI", "MICHIGAN", "26"),
    ("MN", "MINNESOTA", "27"),
    ("MS", "MISSISSIPPI", "28"),
    ("MO", "MISSOURI", "29"),
    ("MT", "MONTANA", "30"),
    ("NE", "NEBRASKA", "31"),
    ("NV", "NEVADA", "32"),
    ("NH", "NEW HAMPSHIRE", "33"),
    ("NJ", "NEW JERSEY", "34"),
    ("NM", "NEW MEXICO", "35"),
    ("NY", "NEW YORK", "36"),
    ("NC", "NORTH CAROLINA", "37"),
    ("ND", "NORTH DAKOTA", "38"),
    ("OH", "OHIO", "39"),
    ("OK", "OKLAHOMA", "40"),
    ("OR", "OREGON", "41"),
    ("PA", "PENNSYLVANIA", "42"),
    ("RI", "RHODE ISLAND", "44"),
    ("SC", "SOUTH CAROLINA", "45"),
    ("SD", "SOUTH DAKOTA", "46"),
    ("TN", "TENNESSEE", "47"),
    ("TX", "TEXAS", "48"),
    ("UT", "UTAH", "49"),
    ("VT", "VERMONT", "50"),
    ("VA", "VIRGINIA", "51"),
    ("WA", "WASHINGTON", "53"),
    ("WV", "WEST VIRGINIA", "54"),
    ("WI", "WISCONSIN", "55"),
    ("WY", "WYOMING", "56"),
    ("PR", "PUERTO RICO", "72"),
];

/// The state for a code (`CA`) or a name (`California`), case-insensitively.
pub fn us_state(code_or_name: &str) -> Option<(&'static str, &'static str, &'static str)> {
    let wanted = code_or_name.trim();
    US_STATES
        .iter()
        .copied()
        .find(|(code, name, _)| code.eq_ignore_ascii_case(wanted) || name.eq_ignore_ascii_case(wanted))
}

/// Canadian provinces and territories (the resolver and nexus accept them).
pub const CA_PROVINCES: &[(&str, &str)] = &[
    ("AB", "ALBERTA"),
    ("BC", "BRITISH COLUMBIA"),
    ("MB", "MANITOBA"),
    ("NB", "NEW BRUNSWICK"),
    ("NL", "NEWFOUNDLAND AND LABRADOR"),
    ("NS", "NOVA SCOTIA"),
    ("NT", "NORTHWEST TERRITORIES"),
    ("NU", "NUNAVUT"),
    ("ON", "ONTARIO"),
    ("PE", "PRINCE EDWARD ISLAND"),
    ("QC", "QUEBEC"),
    ("SK", "SASKATCHEWAN"),
    ("YT", "YUKON"),
];

/// One tax code of `/api/v2/definitions/taxcodes`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TaxCode {
    pub id: i64,
    pub code: &'static str,
    pub type_id: &'static str,
    pub description: &'static str,
    pub parent: &'static str,
    pub physical: bool,
}

/// The tax codes the simulator knows; a line with any other code is refused. Codes and
/// descriptions seen in api/avatax.md, plus the category heads of clothing, food, digital
/// goods and freight that the taxability rules key on.
pub const TAX_CODES: &[TaxCode] = &[
    TaxCode {
        id: 1,
        code: "P0000000",
        type_id: "P",
        description: "Tangible personal property",
        parent: "",
        physical: true,
    },
    TaxCode {
        id: 2,
        code: "NT",
        type_id: "N",
        description: "Non-taxable product or service",
        parent: "",
        physical: false,
    },
    TaxCode { id: 38007, code: "PS081282", type_id: "P", description: "Yarn", parent: "P0000000", physical: true },
    TaxCode {
        id: 3,
        code: "PC040100",
        type_id: "P",
        description: "Clothing and related products (B2C)",
        parent: "P0000000",
        physical: true,
    },
    TaxCode {
        id: 4,
        code: "PF050001",
        type_id: "P",
        description: "Food and beverages",
        parent: "P0000000",
        physical: true,
    },
    TaxCode {
        id: 56789,
        code: "PF050101",
        type_id: "P",
        description: "Carbonated beverages",
        parent: "PF050001",
        physical: true,
    },
    TaxCode {
        id: 5,
        code: "PF052500",
        type_id: "P",
        description: "Grocery food for home consumption",
        parent: "PF050001",
        physical: true,
    },
    TaxCode { id: 6, code: "PH405370", type_id: "P", description: "Gift items", parent: "P0000000", physical: true },
    TaxCode { id: 7, code: "D0000000", type_id: "D", description: "Digital goods", parent: "", physical: false },
    TaxCode {
        id: 8,
        code: "SW054000",
        type_id: "D",
        description: "Prewritten software delivered electronically",
        parent: "D0000000",
        physical: false,
    },
    TaxCode {
        id: 9,
        code: "FR000000",
        type_id: "F",
        description: "Freight and shipping charges",
        parent: "",
        physical: false,
    },
    TaxCode {
        id: 10,
        code: "FR020100",
        type_id: "F",
        description: "Shipping via common carrier FOB destination",
        parent: "FR000000",
        physical: false,
    },
    // The short freight code most integrations send for a shipping line.
    TaxCode {
        id: 12,
        code: "FR",
        type_id: "F",
        description: "Shipping only - common carrier - FOB destination",
        parent: "FR000000",
        physical: false,
    },
    TaxCode {
        id: 11,
        code: "S0000000",
        type_id: "S",
        description: "Services (not otherwise classified)",
        parent: "",
        physical: false,
    },
];

pub fn tax_code(code: &str) -> Option<&'static TaxCode> {
    TAX_CODES.iter().find(|t| t.code.eq_ignore_ascii_case(code.trim()))
}

/// Where the address resolver can place a postal code: (ZIP, city, state, latitude,
/// longitude). The first rows are the coordinates quoted in api/avatax.md; the others are the
/// approximate centroids of the ZIPs the seeded data uses; the last ones, the places the real
/// service gave for addresses in the conformance recordings.
pub const POSTAL_PLACES: &[(&str, &str, &str, f64, f64)] = &[
    ("92615", "IRVINE", "CA", 33.657808, -117.968489),
    ("92614", "IRVINE", "CA", 33.691385, -117.867524),
    ("98110", "BAINBRIDGE ISLAND", "WA", 47.640445, -122.53178),
    ("60102", "ALGONQUIN", "IL", 42.144482, -88.320204),
    ("98101", "SEATTLE", "WA", 47.61067, -122.33438),
    ("94105", "SAN FRANCISCO", "CA", 37.78983, -122.39581),
    ("90001", "LOS ANGELES", "CA", 33.97398, -118.24955),
    ("10001", "NEW YORK", "NY", 40.75065, -73.99718),
    ("78701", "AUSTIN", "TX", 30.27049, -97.74235),
    ("60601", "CHICAGO", "IL", 41.88531, -87.62213),
    ("33101", "MIAMI", "FL", 25.77916, -80.19636),
    ("80202", "DENVER", "CO", 39.75172, -104.99856),
    ("97201", "PORTLAND", "OR", 45.50761, -122.69034),
    ("19103", "PHILADELPHIA", "PA", 39.95234, -75.17436),
    ("02108", "BOSTON", "MA", 42.35717, -71.06448),
    ("36104", "MONTGOMERY", "AL", 32.365575, -86.296051),
    ("10011", "NEW YORK", "NY", 40.736333, -73.996328),
    ("20500", "WASHINGTON", "DC", 38.898664, -77.036543),
];

pub fn postal_place(postal_code: &str) -> Option<(&'static str, &'static str, &'static str, f64, f64)> {
    let zip5 = postal_code.trim().get(..5).unwrap_or(postal_code.trim());
    POSTAL_PLACES.iter().copied().find(|p| p.0 == zip5)
}
