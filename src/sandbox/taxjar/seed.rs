//! Seeded demo data: the account's nexus, customers, and a few weeks of orders and refunds whose
//! sales tax the engine computed, so reports add up. Deterministic per seed.

use std::sync::Arc;

use rust_decimal::Decimal;
use time::{Duration, OffsetDateTime};

use super::models::{Customer, Kind, Place, State, Transaction, TransactionLine};
use crate::sandbox::rng::Rng;
use crate::sandbox::tax::{self, Region};

/// (street, city, state, zip) the seeded orders ship to; every one is in the rate table.
const DESTINATIONS: &[(&str, &str, &str, &str)] = &[
    ("123 Palm Grove Ln", "Los Angeles", "CA", "90002"),
    ("350 5th Ave", "New York", "NY", "10001"),
    ("100 Ravine Ln NE", "Bainbridge Island", "WA", "98110"),
    ("1 Congress Ave", "Austin", "TX", "78701"),
    ("44 Main St", "Ramsey", "NJ", "07446"),
    ("1600 Market St", "Philadelphia", "PA", "19103"),
    ("200 Ocean Dr", "Miami", "FL", "33101"),
    ("50 Kercheval Ave", "Lake Oswego", "OR", "97035"),
];

/// (code, description, unit price in cents) of the products sold.
const PRODUCTS: &[(Option<&str>, &str, i64)] = &[
    (None, "Fuzzy Widget", 1500),
    (Some("20010"), "Organic Cotton T-Shirt", 2400),
    (Some("31000"), "E-book Bundle", 999),
    (Some("40030"), "Coffee Beans 1kg", 1850),
    (None, "Desk Lamp", 4599),
];

fn place(street: &str, city: &str, state: &str, zip: &str) -> Place {
    Place {
        country: Some("US".into()),
        zip: Some(zip.into()),
        state: Some(state.into()),
        city: Some(city.into()),
        street: Some(street.into()),
    }
}

pub fn seeded_state(seed: u64, now: OffsetDateTime, table: Arc<tax::Table>) -> State {
    let mut rng = Rng::new(seed ^ 0x7A1A);
    let mut nexus: Vec<Region> = ["CA", "NY", "WA"].iter().map(|s| Region::new("US", s)).collect();
    let extra = ["TX", "NJ", "PA", "FL", "IL", "MA", "CO"];
    for _ in 0..2 {
        let code: &str = rng.pick::<&str>(&extra);
        let pick = Region::new("US", code);
        if !nexus.contains(&pick) {
            nexus.push(pick);
        }
    }
    let name = |r: &Region| table.state(&r.region).map(|s| s.name.clone()).unwrap_or_default();
    nexus.sort_by_key(name);
    let origin = place("9500 Gilman Dr", "La Jolla", "CA", "92093");
    let mut state = State { nexus, address_on_file: origin.clone(), ..State::new(table) };

    let customers = [
        Customer {
            customer_id: "123".into(),
            exemption_type: "wholesale".into(),
            name: "Dunder Mifflin Paper Company".into(),
            exempt_regions: vec![Region::new("US", "FL"), Region::new("US", "PA")],
            place: place("1725 Slough Ave", "Scranton", "PA", "18504"),
        },
        Customer {
            customer_id: "gov-ca-001".into(),
            exemption_type: "government".into(),
            name: "City of La Jolla Public Library".into(),
            exempt_regions: vec![],
            place: place("7555 Draper Ave", "La Jolla", "CA", "92093"),
        },
        Customer {
            customer_id: format!("cus_{}", rng.alphanumeric(8)),
            exemption_type: "non_exempt".into(),
            name: "Acme Retail".into(),
            exempt_regions: vec![],
            place: place("350 5th Ave", "New York", "NY", "10001"),
        },
    ];
    for customer in customers {
        state.customers.insert(customer.customer_id.clone(), 0, customer);
    }

    let count = 12 + rng.below(6);
    let mut orders = Vec::new();
    for i in 0..count {
        let (street, city, region, zip) = *rng.pick(DESTINATIONS);
        let days_ago = i64::try_from(rng.below(60)).unwrap_or(0);
        let date = (now - Duration::days(days_ago)).replace_nanosecond(0).unwrap_or(now);
        let items = 1 + rng.below(3);
        let mut lines = Vec::new();
        for n in 0..items {
            let (code, description, cents) = *rng.pick(PRODUCTS);
            let quantity = rng.range(1, 3);
            lines.push(TransactionLine {
                id: Some((n + 1).to_string()),
                id_is_number: false,
                quantity,
                product_identifier: Some(format!("SKU-{}", rng.hex(6))),
                description: Some(description.into()),
                product_tax_code: code.map(str::to_owned),
                unit_price: Decimal::new(cents, 2),
                discount: Decimal::ZERO,
                sales_tax: Decimal::ZERO,
            });
        }
        let shipping = Decimal::new(rng.range(0, 2) * 500, 2);
        let to = place(street, city, region, zip);
        let request = tax::Request {
            from: Some(super::models::address(&origin)),
            to: super::models::address(&to),
            lines: lines
                .iter()
                .map(|l| tax::Line {
                    tax_code: l.product_tax_code.clone(),
                    ..tax::Line::new(
                        l.id.as_deref().unwrap_or("1"),
                        Decimal::from(l.quantity),
                        Decimal::from(l.quantity) * l.unit_price,
                    )
                })
                .collect(),
            freight: shipping,
            nexus: state.nexus.clone(),
            exemption: tax::Exemption::default(),
            rounding: tax::Rounding::Document,
            trust_region: false,
        };
        let sales_tax = match state.tax.calculate(&request) {
            Ok(calc) => {
                for (line, taxed) in lines.iter_mut().zip(&calc.lines) {
                    line.sales_tax = taxed.tax;
                }
                calc.total_tax
            }
            Err(_) => Decimal::ZERO,
        };
        let amount = lines.iter().map(|l| Decimal::from(l.quantity) * l.unit_price).sum::<Decimal>() + shipping;
        orders.push(Transaction {
            kind: Kind::Order,
            transaction_id: format!("{}", 1000 + i),
            reference_id: None,
            provider: "api".into(),
            date,
            exemption_type: Some("non_exempt".into()),
            customer_id: None,
            from: Some(Box::new(origin.clone())),
            to,
            amount,
            shipping,
            sales_tax,
            lines,
        });
    }
    // Refund the whole of a few orders, a few days after each.
    for order in orders.iter().step_by(5) {
        let refund = Transaction {
            kind: Kind::Refund,
            transaction_id: format!("{}-refund", order.transaction_id),
            reference_id: Some(order.transaction_id.clone()),
            date: (order.date + Duration::days(3)).min(now),
            ..order.clone()
        };
        state.transactions.insert((Kind::Refund, refund.transaction_id.clone(), "api".into()), refund);
    }
    orders.push(docs_order());
    for order in orders {
        state.transactions.insert((Kind::Order, order.transaction_id.clone(), "api".into()), order);
    }
    let refund = Transaction {
        kind: Kind::Refund,
        transaction_id: "321".into(),
        reference_id: Some("123".into()),
        ..docs_order()
    };
    state.transactions.insert((Kind::Refund, refund.transaction_id.clone(), "api".into()), refund);
    state
}

/// The order of TaxJar's documentation and SDK fixtures (`123`, a Fuzzy Widget shipped from Santa
/// Barbara to Los Angeles; its refund is `321`), so the documented examples and the calls of
/// recorded integrations that name them work against the sandbox as against a real account.
fn docs_order() -> Transaction {
    Transaction {
        kind: Kind::Order,
        transaction_id: "123".into(),
        reference_id: None,
        provider: "api".into(),
        date: time::macros::datetime!(2015-05-14 00:00 UTC),
        exemption_type: None,
        customer_id: None,
        from: Some(Box::new(place("1281 State St", "Santa Barbara", "CA", "93107"))),
        to: place("123 Palm Grove Ln", "Los Angeles", "CA", "90002"),
        amount: Decimal::new(1745, 2),
        shipping: Decimal::new(15, 1),
        sales_tax: Decimal::new(95, 2),
        lines: vec![TransactionLine {
            id: Some("1".into()),
            id_is_number: false,
            quantity: 1,
            product_identifier: Some("12-34243-9".into()),
            description: Some("Fuzzy Widget".into()),
            product_tax_code: Some("20010".into()),
            unit_price: Decimal::new(150, 1),
            discount: Decimal::ZERO,
            sales_tax: Decimal::new(95, 2),
        }],
    }
}
