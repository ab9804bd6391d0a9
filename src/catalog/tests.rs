use super::*;
use std::collections::{HashMap, HashSet};

/// Operation names per spec part, read from the spec tables (`| name | METHOD | path | ... |`).
fn spec_operations() -> HashMap<char, Vec<String>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spec");
    let mut parts: HashMap<char, Vec<String>> = HashMap::new();
    for file in ["messaging-and-speech.md", "tax.md", "exchange-email-shipping.md"] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).expect("spec file");
        let mut part = None;
        let mut in_endpoints = false;
        for line in text.lines() {
            if line.starts_with("## ") {
                in_endpoints = line == "## Endpoints";
                continue;
            }
            if let Some(rest) = line.strip_prefix("### ") {
                part = rest.chars().next();
                continue;
            }
            if !in_endpoints {
                continue;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            // Operation rows have the method (or a dash) in the second cell.
            if cells.len() >= 5
                && ["GET", "POST", "PUT", "PATCH", "DELETE", "-"].contains(&cells[2])
                && cells[1] != "Operation"
            {
                parts.entry(part.expect("part heading")).or_default().push(cells[1].to_owned());
            }
        }
    }
    parts
}

fn part_of(service: Service) -> char {
    match service {
        Service::Ably => 'A',
        Service::Deepgram => 'B',
        Service::Avatax => 'C',
        Service::Taxjar => 'D',
        Service::Coinbase => 'E',
        Service::Mailgun => 'F',
        Service::Easypost => 'G',
    }
}

#[test]
fn every_spec_operation_appears_exactly_once() {
    let spec = spec_operations();
    let total: usize = spec.values().map(Vec::len).sum();
    assert_eq!(total, 174, "the three specs name 174 operations");
    for service in Service::ALL {
        let expected: HashSet<&str> = spec[&part_of(service)].iter().map(String::as_str).collect();
        let mut seen = HashSet::new();
        for op in service.operations() {
            assert_eq!(op.service, service, "{} is filed under the wrong service", op.name);
            assert!(seen.insert(op.name), "{service} {} is described twice", op.name);
            assert!(expected.contains(op.name), "{service} {} is not in the spec", op.name);
        }
        for name in &expected {
            assert!(seen.contains(name), "{service} {name} is missing from the catalog");
        }
    }
    assert_eq!(all_operations().count(), 174);
}

#[test]
fn spec_paths_and_methods_match_the_catalog() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/spec");
    for file in ["messaging-and-speech.md", "tax.md", "exchange-email-shipping.md"] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).expect("spec file");
        for line in text.lines() {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if cells.len() < 5 || !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&cells[2]) {
                continue;
            }
            let ops: Vec<_> = all_operations().filter(|op| op.name == cells[1]).collect();
            // A name shared by two services (customers_list) must match one of them.
            assert!(
                ops.iter().any(|op| op.method.as_str() == cells[2] && (cells[3] == "-" || op.path == cells[3])),
                "{} should be {} {}",
                cells[1],
                cells[2],
                cells[3]
            );
        }
    }
}

#[test]
fn no_two_operations_share_method_and_path() {
    for service in Service::ALL {
        let mut seen = HashMap::new();
        for op in service.operations() {
            if let Some(other) = seen.insert((op.method, op.path), op.name) {
                panic!("{service}: {} and {other} are both {} {}", op.name, op.method, op.path);
            }
        }
    }
}

#[test]
fn every_path_parameter_is_declared_and_every_declared_one_is_in_the_path() {
    for op in all_operations() {
        for name in op.path_params() {
            let param =
                op.param(name).unwrap_or_else(|| panic!("{}: path parameter {name} is not declared", op.full_name()));
            assert_eq!(param.location, Location::Path, "{}: {name}", op.full_name());
            assert!(param.required, "{}: path parameter {name} must be required", op.full_name());
        }
        for param in op.params.iter().filter(|p| p.location == Location::Path) {
            assert!(
                op.path_params().contains(&param.name),
                "{}: {} is declared as a path parameter but not in {}",
                op.full_name(),
                param.name,
                op.path
            );
        }
    }
}

#[test]
fn parameters_are_consistent_with_the_body_encoding() {
    for op in all_operations() {
        let mut names = HashSet::new();
        for p in op.params {
            assert!(names.insert(p.name), "{}: {} declared twice", op.full_name(), p.name);
            assert!(!p.help.is_empty(), "{}: {} has no help", op.full_name(), p.name);
            if matches!(p.location, Location::Body | Location::WholeBody) {
                assert_ne!(op.body, BodyEncoding::None, "{}: {} has nowhere to go", op.full_name(), p.name);
            }
            if let (Some(min), Some(max)) = (p.min, p.max) {
                assert!(min <= max, "{}: {} bounds", op.full_name(), p.name);
            }
            if let Some(default) = p.default {
                if !p.allowed.is_empty() {
                    assert!(p.allowed.contains(&default), "{}: {} default", op.full_name(), p.name);
                }
            }
        }
        let whole = op.params.iter().filter(|p| p.location == Location::WholeBody).count();
        assert!(whole <= 1, "{}: more than one whole-body parameter", op.full_name());
        if let BodyEncoding::Raw(_) = op.body {
            assert_eq!(whole, 1, "{}: a raw body needs its whole-body parameter", op.full_name());
        }
        if op.destructive {
            assert!(op.mutates, "{}: destructive but not mutating", op.full_name());
        }
        if op.method == Method::Delete {
            assert!(op.destructive, "{}: a DELETE is destructive", op.full_name());
        }
        assert!(op.path.starts_with('/'), "{}: path {}", op.full_name(), op.path);
        assert!(!op.summary.is_empty());
    }
}

#[test]
fn destructive_verbs_are_marked_destructive() {
    for op in all_operations() {
        let verb_says_so = ["delete", "void", "cancel", "refund", "withdraw", "clear", "remove"]
            .iter()
            .any(|v| op.name.split('_').any(|w| w == *v));
        if verb_says_so {
            assert!(op.destructive, "{} must ask before it runs", op.full_name());
        }
    }
}

#[test]
fn templates_are_json_shapes_of_json_fields() {
    let mut count = 0;
    for op in crate::catalog::all_operations() {
        for param in op.params.iter().filter(|p| p.template.is_some()) {
            let shape = param.template.unwrap_or_default();
            assert_eq!(param.kind, crate::catalog::Kind::Json, "{} {}", op.name, param.name);
            assert!(serde_json::from_str::<serde_json::Value>(shape).is_ok(), "{} {}: {shape}", op.name, param.name);
            count += 1;
        }
    }
    // Every required JSON field of the shipping and tax catalogs starts from one.
    assert!(count >= 19, "{count}");
}

#[test]
fn calls_that_spend_are_known_by_what_they_send() {
    use crate::catalog::Service;
    let values = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    };
    let create = Service::Easypost.operation("shipments_create").unwrap();
    assert!(!create.asks_first(&values(&[("shipment", r#"{"to_address":{"id":"adr_1"}}"#)])));
    let buying = values(&[("shipment", r#"{"carrier":"UPS","service":"Ground","to_address":{"id":"adr_1"}}"#)]);
    assert_eq!(create.spending(&buying).as_deref(), Some("buys postage in the same call: UPS Ground"));
    let order = Service::Coinbase.operation("orders_create").unwrap();
    let limit = values(&[("side", "sell"), ("product_id", "BTC-USD"), ("size", "0.5"), ("price", "60000")]);
    assert_eq!(order.spending(&limit).as_deref(), Some("places an order: sell 0.5 BTC at 60,000.00 USD"));
    // Written as the wire writes them, they read as money all the same.
    let padded =
        values(&[("side", "buy"), ("product_id", "BTC-USD"), ("size", "0.00100000"), ("price", "90000.12000000")]);
    assert_eq!(order.spending(&padded).as_deref(), Some("places an order: buy 0.001 BTC at 90,000.12 USD"));
    let market =
        values(&[("side", "buy"), ("product_id", "BTC-USD"), ("type", "market"), ("funds", "250"), ("price", "1")]);
    assert_eq!(order.spending(&market).as_deref(), Some("places an order: buy BTC for 250.00 USD at market"));
    assert!(order.asks_first(&values(&[])), "every order spends");
    let list = Service::Coinbase.operation("orders_list").unwrap();
    assert!(!list.asks_first(&values(&[])));
}

#[test]
fn a_list_is_titled_by_what_it_holds() {
    let noun = |service: Service, name: &str| service.operation(name).unwrap().list_noun();
    assert_eq!(noun(Service::Coinbase, "accounts_get_holds"), "holds");
    assert_eq!(noun(Service::Coinbase, "accounts_get_ledger"), "ledger");
    assert_eq!(noun(Service::Coinbase, "orders_list"), "orders");
    assert_eq!(noun(Service::Ably, "presence_history"), "presence history");
    assert_eq!(noun(Service::Ably, "stats_get"), "stats");
}
