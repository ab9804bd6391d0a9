#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use time::macros::datetime;

use super::models::parse_datetime;
use super::seed::seeded_state;

#[test]
fn transaction_dates_in_every_documented_form() {
    assert_eq!(parse_datetime("2015-05-25"), Some(datetime!(2015-05-25 0:00 UTC)));
    assert_eq!(parse_datetime("2015/05/14"), Some(datetime!(2015-05-14 0:00 UTC)));
    assert_eq!(parse_datetime("2015-05-25T13:05:45"), Some(datetime!(2015-05-25 13:05:45 UTC)));
    assert_eq!(parse_datetime("2015-05-25T13:05:45-05:00"), Some(datetime!(2015-05-25 18:05:45 UTC)));
    assert_eq!(parse_datetime("2015-05-25T13:05:45Z"), Some(datetime!(2015-05-25 13:05:45 UTC)));
    // The layout TaxJar itself answers with, so an order read back can be sent again.
    assert_eq!(parse_datetime("2015-05-25T13:05:45.000Z"), Some(datetime!(2015-05-25 13:05:45 UTC)));
    for bad in ["2015-13-01", "yesterday", "2015-05-25T25:00:00", "2015-05-25X"] {
        assert_eq!(parse_datetime(bad), None, "{bad}");
    }
}

#[test]
fn seeding_is_deterministic_and_consistent() {
    let now = datetime!(2024-06-01 12:00 UTC);
    let a = seeded_state(7, now, builtin_tax());
    let b = seeded_state(7, now, builtin_tax());
    assert_eq!(a.transactions, b.transactions);
    assert_eq!(a.nexus, b.nexus);
    assert!(a.transactions.len() >= 12);
    // Every refund refers to a seeded order.
    for t in a.transactions.values().filter(|t| t.reference_id.is_some()) {
        let reference = t.reference_id.clone().unwrap();
        assert!(a.transactions.keys().any(|(_, id, _)| id == reference));
    }
    assert!(a.customers.contains(&"123".to_owned()));
}

#[test]
fn orders_past_the_cap_forget_the_oldest_created_first() {
    use super::models::{ApiVersion, Fields, Kind};
    let mut state = seeded_state(7, datetime!(2024-06-01 12:00 UTC), builtin_tax());
    let seeded = state.transactions.len();
    state.max_transactions = seeded + 10;
    for i in 0..50 {
        let body = serde_json::json!({"transaction_id": format!("cap-{i}"), "transaction_date": "2024-05-01",
            "to_country": "US", "to_zip": "90002", "to_state": "CA", "amount": 10, "shipping": 0, "sales_tax": 0.95});
        let map = body.as_object().unwrap();
        state.create(Kind::Order, &Fields::new(map), ApiVersion::V2012).unwrap();
        assert!(state.transactions.len() <= state.max_transactions, "{} kept", state.transactions.len());
        if i == 3 {
            // A deleted order does not count, and is skipped when its turn to be forgotten comes.
            state.delete(Kind::Order, "cap-1", "api").unwrap();
        }
    }
    let kept: Vec<&str> = state.transactions.keys().map(|(_, id, _)| id).collect();
    assert!(kept.contains(&"cap-49") && !kept.contains(&"cap-0"), "{kept:?}");
    assert_eq!(
        state.transactions.len(),
        state.max_transactions,
        "seeded orders stay; the newest API ones fill the rest"
    );
}

#[test]
fn amounts_past_what_the_simulator_can_multiply_or_add_are_a_400() {
    use super::models::{ApiVersion, Fields, Kind};
    let mut state = seeded_state(7, datetime!(2024-06-01 12:00 UTC), builtin_tax());
    let max = i64::MAX;
    let body = serde_json::json!({"to_country": "US", "to_zip": "90002", "to_state": "CA", "shipping": 0,
        "line_items": [{"quantity": max, "unit_price": max}]});
    let error = super::wire::calculate(&state, &Fields::new(body.as_object().unwrap())).unwrap_err();
    assert_eq!(error.status, 400, "{error:?}");
    let body = serde_json::json!({"to_country": "US", "to_zip": "90002", "to_state": "CA", "shipping": 1e28,
        "amount": 7e28, "line_items": [{"quantity": 1, "unit_price": 7e28}]});
    let error = super::wire::calculate(&state, &Fields::new(body.as_object().unwrap())).unwrap_err();
    assert_eq!(error.status, 400, "{error:?}");
    // An order whose lines cannot be added up is refused and not stored.
    let before = state.transactions.len();
    let body = serde_json::json!({"transaction_id": "huge", "transaction_date": "2024-05-01",
        "to_country": "US", "to_zip": "90002", "to_state": "CA", "amount": 10, "shipping": 0, "sales_tax": 0,
        "line_items": [{"quantity": max, "unit_price": max, "sales_tax": 0}]});
    let error = state.create(Kind::Order, &Fields::new(body.as_object().unwrap()), ApiVersion::V2020).unwrap_err();
    assert_eq!(error.status, 400, "{error:?}");
    assert_eq!(state.transactions.len(), before);
}

#[test]
fn every_collection_keeps_its_cap_and_lists_and_gets_agree() {
    use super::models::{ApiVersion, Fields, Kind};
    use crate::sandbox::retention::{Collection, RetentionPolicy};
    let mut state = seeded_state(7, datetime!(2024-06-01 12:00 UTC), builtin_tax());
    let seeded = state.transactions.len();
    state.max_transactions = seeded + 4;
    let mut created = Vec::new();
    for i in 0..10 {
        let day = format!("2024-07-{:02}", i + 1);
        let order = serde_json::json!({"transaction_id": format!("o-{i}"), "transaction_date": day,
            "to_country": "US", "to_zip": "90002", "to_state": "CA", "amount": 10, "shipping": 0, "sales_tax": 0.95});
        state.create(Kind::Order, &Fields::new(order.as_object().unwrap()), ApiVersion::V2012).unwrap();
        created.push((Kind::Order, format!("o-{i}")));
        let refund = serde_json::json!({"transaction_id": format!("r-{i}"), "transaction_reference_id": format!("o-{i}"),
            "transaction_date": day, "to_country": "US", "to_zip": "90002", "to_state": "CA", "amount": 10,
            "shipping": 0, "sales_tax": 0.95});
        state.create(Kind::Refund, &Fields::new(refund.as_object().unwrap()), ApiVersion::V2012).unwrap();
        created.push((Kind::Refund, format!("r-{i}")));
        assert!(state.transactions.len() <= state.max_transactions);
    }
    // The newest four created stay (with every seeded one); the rest are a 404 and never listed.
    let (gone, kept) = created.split_at(created.len() - 4);
    let july = |state: &super::models::State, kind| {
        let from = super::models::parse_day("from", "2024-07-01").unwrap();
        let to = super::models::parse_day("to", "2024-07-31").unwrap();
        state.list(kind, "api", Some(from), Some(to))
    };
    let (orders, refunds) = (july(&state, Kind::Order), july(&state, Kind::Refund));
    for (kind, id) in gone {
        assert_eq!(state.transaction(*kind, id, "api").unwrap_err().status, 404, "{id}");
        assert!(!orders.contains(id) && !refunds.contains(id), "{id} is listed");
        assert!(!state.list(*kind, "api", None, None).contains(id));
    }
    for (kind, id) in kept {
        assert!(state.transaction(*kind, id, "api").is_ok(), "{id}");
        assert!(orders.contains(id) || refunds.contains(id), "{id} is not listed");
    }
    assert_eq!(orders, ["o-8", "o-9"], "in date order");
    assert_eq!(state.transactions.len(), state.max_transactions);
    // Updating a kept order to another date moves it in the date lists.
    let moved = serde_json::json!({"transaction_date": "2024-08-15"});
    state.update(Kind::Order, "o-9", &Fields::new(moved.as_object().unwrap()), ApiVersion::V2012).unwrap();
    assert_eq!(july(&state, Kind::Order), ["o-8"]);
    let august = super::models::parse_day("on", "2024-08-15").unwrap();
    assert_eq!(state.list(Kind::Order, "api", Some(august), Some(august)), ["o-9"]);

    // Customers: the oldest created go past the cap.
    state.customers = Collection::new(RetentionPolicy::new(None, 3));
    for i in 0..5 {
        let customer = serde_json::json!({"customer_id": format!("c-{i}"), "exemption_type": "wholesale", "name": "C"});
        state.create_customer(&Fields::new(customer.as_object().unwrap())).unwrap();
    }
    let ids: Vec<&str> = state.customers.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["c-2", "c-3", "c-4"]);
    assert_eq!(state.customer("c-0").unwrap_err().status, 404);
}

/// Recorded integrations send `to_city: false` and leave `to_country` out when they have a US ZIP
/// and state; TaxJar answers both with 200.
#[test]
fn a_false_field_is_no_value_and_a_zip_and_state_without_country_are_us() {
    use super::models::Fields;
    let state = seeded_state(7, datetime!(2024-06-01 12:00 UTC), builtin_tax());
    let body = serde_json::json!({"to_zip": "90002", "to_state": "CA", "to_city": false, "amount": 30,
        "shipping": 0});
    let tax = super::wire::calculate(&state, &Fields::new(body.as_object().unwrap())).unwrap();
    assert!(tax["amount_to_collect"].as_f64().unwrap() > 0.0, "{tax}");
    let no_zip = serde_json::json!({"to_state": "TX", "amount": 30, "shipping": 0});
    let error = super::wire::calculate(&state, &Fields::new(no_zip.as_object().unwrap())).unwrap_err();
    assert_eq!(error.status, 406, "{error:?}");
}

fn builtin_tax() -> std::sync::Arc<crate::sandbox::tax::Table> {
    crate::sandbox::tax::builtin().unwrap()
}
