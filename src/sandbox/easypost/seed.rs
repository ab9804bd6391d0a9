//! The demo account: a warehouse in San Francisco shipping to customers across the US over the
//! last day — delivered packages, a few on their way at start-up, shipments waiting to be bought,
//! a labelled batch with its scan form, a refund, standalone insurance, EasyPost's test
//! trackers, and an address that does not verify. Made through the same rules as requests, at
//! times relative to the sandbox's start, so the same seed gives the same account.

use serde_json::{json, Value};

use super::state::{text, State};

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;

const WAREHOUSE: (&str, &str, &str, &str, &str, &str) =
    ("Opsdeck Demo Warehouse", "417 Montgomery St", "Floor 5", "San Francisco", "CA", "94104");

/// Customers: name, street, city, state, ZIP.
const CUSTOMERS: [(&str, &str, &str, &str, &str); 10] = [
    ("Ada Lovelace", "350 Fifth Ave", "New York", "NY", "10118"),
    ("Grace Hopper", "1600 Pennsylvania Ave NW", "Washington", "DC", "20500"),
    ("Linus Pauling", "233 S Wacker Dr", "Chicago", "IL", "60606"),
    ("Katherine Johnson", "600 Congress Ave", "Austin", "TX", "78701"),
    ("Alan Kay", "400 Broad St", "Seattle", "WA", "98109"),
    ("Hedy Lamarr", "1 Microsoft Way", "Redmond", "WA", "98052"),
    ("Edsger Dijkstra", "2 Copley Pl", "Boston", "MA", "02116"),
    ("Barbara Liskov", "1000 Brickell Ave", "Miami", "FL", "33131"),
    ("Claude Shannon", "191 Peachtree St NE", "Atlanta", "GA", "30303"),
    ("Frances Allen", "1701 Wynkoop St", "Denver", "CO", "80202"),
];

/// Parcels: length, width, height (in), weight (oz).
const PARCELS: [(f64, f64, f64, f64); 4] =
    [(10.0, 8.0, 4.0, 15.4), (12.0, 12.0, 6.0, 42.0), (6.0, 4.0, 2.0, 6.5), (18.0, 14.0, 10.0, 120.0)];

fn customer(i: usize) -> Value {
    let (name, street, city, state, zip) = CUSTOMERS[i % CUSTOMERS.len()];
    json!({"name": name, "street1": street, "city": city, "state": state, "zip": zip, "country": "US",
           "email": format!("{}@example.com", name.split(' ').next().unwrap_or("customer").to_lowercase())})
}

fn parcel(i: usize) -> Value {
    let (length, width, height, weight) = PARCELS[i % PARCELS.len()];
    json!({"length": length, "width": width, "height": height, "weight": weight})
}

/// A shipment from the warehouse to customer `i`, created at `at`; its id.
fn shipment(state: &mut State, warehouse: &str, i: usize, at: i64, reference: &str) -> Option<String> {
    state.run_due(at);
    let body = json!({"shipment": {"from_address": {"id": warehouse}, "to_address": customer(i), "parcel": parcel(i),
                                   "reference": reference}});
    state.create_shipment(&body, at).ok().and_then(|s| s["id"].as_str().map(str::to_owned))
}

/// Buys a shipment with its cheapest rate of `carrier`.
fn buy(state: &mut State, id: &str, carrier: &str, at: i64) {
    state.run_due(at);
    let rate = state.rate_of(id, |r| text(r, "carrier") == carrier);
    if let Some(rate) = rate {
        let _ = state.buy_shipment(id, &json!({"rate": {"id": rate}}), at);
    }
}

/// The seeded state as of `anchor_ms`.
pub fn seeded(seed: u64, anchor_ms: i64, base_url: String) -> State {
    let mut state = State::new(seed, base_url);
    let start = anchor_ms - 26 * HOUR;
    let (name, street1, street2, city, region, zip) = WAREHOUSE;
    let warehouse = json!({"address": {"name": name, "company": "Opsdeck Demo", "street1": street1, "street2": street2,
        "city": city, "state": region, "zip": zip, "phone": "4155550100", "email": "shipping@example.com"},
        "verify": ["delivery", "zip4"]});
    let Ok(warehouse) = state.create_address(&warehouse, start) else { return state };
    let warehouse = text(&warehouse, "id").to_owned();
    let undeliverable = json!({"address": {"name": "Nobody", "street1": "Nowhere Lane", "city": "Springfield", "zip": "00000"},
                               "verify": true});
    let _ = state.create_address(&undeliverable, start + MINUTE);
    // A day of orders, bought within minutes, long delivered (or returned) by now.
    let carriers = ["USPS", "UPS", "FedEx"];
    for i in 0..8 {
        let at = start + i64::try_from(i).unwrap_or(0) * 2 * HOUR;
        if let Some(id) = shipment(&mut state, &warehouse, i, at, &format!("order-{}", 1001 + i)) {
            buy(&mut state, &id, carriers[i % 3], at + 3 * MINUTE);
        }
    }
    // A batch of three, bought, labelled and scanned.
    let batch_at = anchor_ms - 5 * HOUR;
    let members: Vec<Value> = (0..3)
        .filter_map(|i| shipment(&mut state, &warehouse, 3 + i, batch_at, &format!("wholesale-{}", 501 + i)))
        .map(|id| json!({"id": id}))
        .collect();
    state.run_due(batch_at);
    if let Ok(batch) =
        state.create_batch(&json!({"batch": {"shipments": members, "reference": "wholesale-morning"}}), batch_at)
    {
        let id = batch["id"].as_str().unwrap_or("").to_owned();
        state.run_due(batch_at + MINUTE);
        let _ = state.buy_batch(&id, batch_at + MINUTE);
        state.run_due(batch_at + 2 * MINUTE);
        let _ = state.label_batch(&id, &json!({"file_format": "PDF"}), batch_at + 2 * MINUTE);
        state.run_due(batch_at + 3 * MINUTE);
        let _ = state.scan_form_batch(&id, batch_at + 3 * MINUTE);
    }
    // An order cancelled before pickup: its label refunded.
    if let Some(id) = shipment(&mut state, &warehouse, 8, anchor_ms - 3 * HOUR, "order-1090") {
        buy(&mut state, &id, "USPS", anchor_ms - 3 * HOUR);
        state.run_due(anchor_ms - 3 * HOUR + 5_000);
        let _ = state.refund_shipment(&id, anchor_ms - 3 * HOUR + 5_000);
    }
    // Standalone insurance of a package shipped by another system.
    state.run_due(anchor_ms - 2 * HOUR);
    let insurance = json!({"insurance": {"tracking_code": "1Z0SANDBOX0000042", "carrier": "UPS", "amount": "249.99",
        "reference": "marketplace-77", "to_address": customer(9), "from_address": {"id": warehouse}}});
    let _ = state.create_insurance(&insurance, anchor_ms - 2 * HOUR);
    // EasyPost's test trackers.
    for code in ["EZ1000000001", "EZ4000000004", "EZ6000000006"] {
        let _ = state.create_tracker(&json!({"tracker": {"tracking_code": code, "carrier": "USPS"}}), anchor_ms - HOUR);
    }
    // Orders of the last minutes: two on their way at start-up, one still to buy.
    if let Some(id) = shipment(&mut state, &warehouse, 0, anchor_ms - 90_000, "order-1101") {
        buy(&mut state, &id, "UPS", anchor_ms - 80_000);
    }
    if let Some(id) = shipment(&mut state, &warehouse, 4, anchor_ms - 30_000, "order-1102") {
        buy(&mut state, &id, "USPS", anchor_ms - 25_000);
    }
    let _ = shipment(&mut state, &warehouse, 6, anchor_ms - 10_000, "order-1103");
    state.run_due(anchor_ms);
    state
}
