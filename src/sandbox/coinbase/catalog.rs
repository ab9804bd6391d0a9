//! What the simulated exchange lists: its products, currencies and fee tiers. Figures are those
//! the real exchange publishes for these pairs (increments, minimum funds); prices are where
//! the seeded market starts.

use rust_decimal::Decimal;
use rust_decimal_macros::dec;

pub struct ProductSpec {
    pub id: &'static str,
    pub base: usize,
    pub quote: usize,
    pub quote_increment: Decimal,
    pub base_increment: Decimal,
    /// The least an order may be worth in quote (limit orders' notional and market funds).
    pub min_market_funds: Decimal,
    /// Where the seeded history ends: the price at start-up.
    pub start_price: Decimal,
    /// Typical size of one simulated trade, in base.
    pub lot: Decimal,
}

pub struct CurrencySpec {
    pub id: &'static str,
    pub name: &'static str,
    pub fiat: bool,
    pub min_size: Decimal,
    pub max_precision: Decimal,
    pub symbol: &'static str,
    /// What a crypto withdrawal costs (the network fee), in the currency.
    pub network_fee: Decimal,
    /// The network a withdrawal goes over, for its address format.
    pub network: &'static str,
    /// Sandbox minutes a crypto withdrawal takes to complete.
    pub confirm_minutes: i64,
}

pub const USD: usize = 0;
pub const USDC: usize = 1;
pub const BTC: usize = 2;
pub const ETH: usize = 3;
pub const SOL: usize = 4;
pub const LTC: usize = 5;
pub const DOGE: usize = 6;
pub const USDT: usize = 7;

pub static CURRENCIES: [CurrencySpec; 8] = [
    CurrencySpec {
        id: "USD",
        name: "United States Dollar",
        fiat: true,
        min_size: dec!(0.01),
        max_precision: dec!(0.01),
        symbol: "$",
        network_fee: dec!(0),
        network: "",
        confirm_minutes: 0,
    },
    CurrencySpec {
        id: "USDC",
        name: "USD Coin",
        fiat: false,
        min_size: dec!(0.000001),
        max_precision: dec!(0.000001),
        symbol: "$",
        network_fee: dec!(0),
        network: "ethereum",
        confirm_minutes: 5,
    },
    CurrencySpec {
        id: "BTC",
        name: "Bitcoin",
        fiat: false,
        min_size: dec!(0.00000001),
        max_precision: dec!(0.00000001),
        symbol: "₿",
        network_fee: dec!(0.00001),
        network: "bitcoin",
        confirm_minutes: 30,
    },
    CurrencySpec {
        id: "ETH",
        name: "Ether",
        fiat: false,
        min_size: dec!(0.00000001),
        max_precision: dec!(0.00000001),
        symbol: "Ξ",
        network_fee: dec!(0.0002),
        network: "ethereum",
        confirm_minutes: 5,
    },
    CurrencySpec {
        id: "SOL",
        name: "Solana",
        fiat: false,
        min_size: dec!(0.00000001),
        max_precision: dec!(0.00000001),
        symbol: "◎",
        network_fee: dec!(0.000005),
        network: "solana",
        confirm_minutes: 1,
    },
    CurrencySpec {
        id: "LTC",
        name: "Litecoin",
        fiat: false,
        min_size: dec!(0.00000001),
        max_precision: dec!(0.00000001),
        symbol: "Ł",
        network_fee: dec!(0.0001),
        network: "litecoin",
        confirm_minutes: 15,
    },
    CurrencySpec {
        id: "DOGE",
        name: "Dogecoin",
        fiat: false,
        min_size: dec!(0.1),
        max_precision: dec!(0.1),
        symbol: "Ð",
        network_fee: dec!(1),
        network: "dogecoin",
        confirm_minutes: 10,
    },
    CurrencySpec {
        id: "USDT",
        name: "Tether",
        fiat: false,
        min_size: dec!(0.000001),
        max_precision: dec!(0.000001),
        symbol: "₮",
        network_fee: dec!(0),
        network: "ethereum",
        confirm_minutes: 5,
    },
];

pub static PRODUCTS: [ProductSpec; 7] = [
    ProductSpec {
        id: "BTC-USD",
        base: BTC,
        quote: USD,
        quote_increment: dec!(0.01),
        base_increment: dec!(0.00000001),
        min_market_funds: dec!(1),
        start_price: dec!(97000.00),
        lot: dec!(0.02),
    },
    ProductSpec {
        id: "ETH-USD",
        base: ETH,
        quote: USD,
        quote_increment: dec!(0.01),
        base_increment: dec!(0.00000001),
        min_market_funds: dec!(1),
        start_price: dec!(3400.00),
        lot: dec!(0.5),
    },
    ProductSpec {
        id: "SOL-USD",
        base: SOL,
        quote: USD,
        quote_increment: dec!(0.01),
        base_increment: dec!(0.00000001),
        min_market_funds: dec!(1),
        start_price: dec!(240.00),
        lot: dec!(5),
    },
    ProductSpec {
        id: "ETH-BTC",
        base: ETH,
        quote: BTC,
        quote_increment: dec!(0.00001),
        base_increment: dec!(0.00000001),
        min_market_funds: dec!(0.00001),
        start_price: dec!(0.03500),
        lot: dec!(0.5),
    },
    ProductSpec {
        id: "LTC-USD",
        base: LTC,
        quote: USD,
        quote_increment: dec!(0.01),
        base_increment: dec!(0.00000001),
        min_market_funds: dec!(1),
        start_price: dec!(95.00),
        lot: dec!(10),
    },
    ProductSpec {
        id: "DOGE-USD",
        base: DOGE,
        quote: USD,
        quote_increment: dec!(0.00001),
        base_increment: dec!(0.1),
        min_market_funds: dec!(1),
        start_price: dec!(0.40000),
        lot: dec!(2000),
    },
    ProductSpec {
        id: "USDT-USD",
        base: USDT,
        quote: USD,
        quote_increment: dec!(0.00001),
        base_increment: dec!(0.01),
        min_market_funds: dec!(1),
        start_price: dec!(1.00010),
        lot: dec!(500),
    },
];

/// The fee tiers by trailing 30-day USD volume (Coinbase Exchange's published schedule):
/// (volume from, maker rate, taker rate).
pub const FEE_TIERS: [(Decimal, Decimal, Decimal); 9] = [
    (dec!(0), dec!(0.0040), dec!(0.0060)),
    (dec!(10000), dec!(0.0025), dec!(0.0040)),
    (dec!(50000), dec!(0.0015), dec!(0.0025)),
    (dec!(100000), dec!(0.0010), dec!(0.0020)),
    (dec!(1000000), dec!(0.0008), dec!(0.0018)),
    (dec!(15000000), dec!(0.0006), dec!(0.0016)),
    (dec!(75000000), dec!(0.0003), dec!(0.0012)),
    (dec!(250000000), dec!(0.0000), dec!(0.0008)),
    (dec!(400000000), dec!(0.0000), dec!(0.0005)),
];

/// The maker and taker rates for a 30-day USD volume.
pub fn fee_rates(usd_volume: Decimal) -> (Decimal, Decimal) {
    let tier = FEE_TIERS.iter().rev().find(|(from, _, _)| usd_volume >= *from).unwrap_or(&FEE_TIERS[0]);
    (tier.1, tier.2)
}

pub fn product_index(id: &str) -> Option<usize> {
    PRODUCTS.iter().position(|p| p.id.eq_ignore_ascii_case(id.trim()))
}

pub fn currency_index(id: &str) -> Option<usize> {
    CURRENCIES.iter().position(|c| c.id.eq_ignore_ascii_case(id.trim()))
}

/// Whether `address` has the form of an address on `network` (bech32, base58 or hex, by
/// length and alphabet; no checksum, as the exchange's first check does not tell checksum from
/// form either).
pub fn address_fits(network: &str, address: &str) -> bool {
    const BASE58: &str = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let base58 = |s: &str, lo: usize, hi: usize| (lo..=hi).contains(&s.len()) && s.chars().all(|c| BASE58.contains(c));
    let bech32 = |s: &str, hrp: &str| {
        s.strip_prefix(hrp).is_some_and(|rest| {
            (8..=87).contains(&rest.len())
                && rest.chars().all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
                && !rest.contains(['b', 'i', 'o', '1'])
        })
    };
    match network {
        "bitcoin" => {
            bech32(address, "bc1")
                || ((address.starts_with('1') || address.starts_with('3')) && base58(address, 26, 35))
        }
        "ethereum" => {
            address.len() == 42 && address.starts_with("0x") && address[2..].chars().all(|c| c.is_ascii_hexdigit())
        }
        "solana" => base58(address, 32, 44),
        "litecoin" => bech32(address, "ltc1") || (address.starts_with(['L', 'M', '3']) && base58(address, 26, 35)),
        "dogecoin" => address.starts_with(['D', 'A', '9']) && base58(address, 33, 34),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_rise_with_volume_and_addresses_are_checked_per_network() {
        assert_eq!(fee_rates(dec!(0)), (dec!(0.0040), dec!(0.0060)));
        assert_eq!(fee_rates(dec!(12000)), (dec!(0.0025), dec!(0.0040)));
        assert_eq!(fee_rates(dec!(500000000)), (dec!(0), dec!(0.0005)));
        assert!(address_fits("bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"));
        assert!(address_fits("bitcoin", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"));
        assert!(!address_fits("bitcoin", "0x52908400098527886E0F7030069857D2E4169EE7"));
        assert!(address_fits("ethereum", "0x52908400098527886E0F7030069857D2E4169EE7"));
        assert!(!address_fits("ethereum", "0x5290"));
        assert!(address_fits("solana", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"));
        assert!(!address_fits("solana", "not an address"));
        assert!(address_fits("dogecoin", "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L"));
        assert_eq!(product_index("btc-usd"), Some(0));
        assert_eq!(currency_index("FOO"), None);
    }
}
