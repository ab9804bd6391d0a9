//! `opsdeck call -o table` shows a list with exactly the columns the console's browser shows
//! it with, for every list operation of the catalog: both ask the service's console module
//! (`src/tui/services/`) for its layout, and neither names a service itself.

use std::process::Command;
use std::sync::{Arc, Mutex};

use axum::response::IntoResponse;
use opsdeck::args::GlobalArgs;
use opsdeck::catalog::{all_operations, Kind, Operation, ResponseFormat, Service};
use opsdeck::tui::harness::Harness;
use serde_json::{json, Value};

/// Records with the fields the generic columns and every service's layout read: statuses,
/// events, nested rates, times, amounts.
fn page() -> Value {
    let record = |n: u32| {
        json!({
            "id": format!("rec_{n}"), "name": format!("name {n}"), "status": "delivered", "event": "failed",
            "severity": "permanent", "state": "created", "recipient": "a@example.com", "timestamp": 1_700_000_000.5,
            "created_at": "2026-11-26T10:00:00Z", "updated_at": "2026-11-26T11:00:00Z", "totalAmount": 12.5,
            "code": format!("INV-{n}"), "tracking_code": "9400", "carrier": "USPS", "amount": "10.00",
            "selected_rate": {"carrier": "USPS", "service": "Priority", "rate": "7.10"},
            "to_address": {"city": "SAN FRANCISCO", "state": "CA", "zip": "94107"},
            "num_shipments": 2, "counts": {"total": 2}, "verified": true, "url": "http://127.0.0.1/hook"
        })
    };
    json!({"items": [record(1), record(2)]})
}

/// A value each required parameter accepts, so the form sends and the CLI does not refuse.
fn required_values(op: &Operation) -> Vec<(String, String)> {
    op.params
        .iter()
        // A list that needs one of several ids (fills of an order or a product) gets the first.
        .filter(|p| p.required || op.at_least_one.first() == Some(&p.name))
        .map(|p| {
            let value = match (p.allowed.first(), p.kind) {
                (Some(first), _) => (*first).to_owned(),
                (None, Kind::Int | Kind::Num) => p.min.map_or_else(|| "1".to_owned(), |m| m.max(1.0).to_string()),
                (None, Kind::Bool) => "true".into(),
                (None, Kind::Json) => "{}".into(),
                _ => "x".repeat(p.min.map_or(1, |m| m.max(1.0) as usize)),
            };
            (p.name.to_owned(), value)
        })
        .collect()
}

fn list_operations() -> Vec<&'static Operation> {
    all_operations()
        .filter(|op| op.is_list() && op.response == ResponseFormat::Json)
        .filter(|op| op.params.iter().all(|p| !p.required || p.kind != Kind::File))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_o_table_shows_the_browsers_columns_for_every_list_operation() {
    let body = Arc::new(Mutex::new(page().to_string()));
    let served = body.clone();
    let upstream = opsdeck::sandbox::serve_loopback(axum::Router::new().fallback(move || {
        let text = served.lock().expect("body").clone();
        async move { ([("content-type", "application/json")], text).into_response() }
    }))
    .await
    .expect("a loopback upstream");
    let urls: Vec<(String, String)> = Service::ALL
        .iter()
        .map(|s| (format!("OPSDECK_{}_URL", s.name().to_ascii_uppercase()), upstream.clone()))
        .collect();
    let env_urls = urls.clone();
    let mut h = Harness::with_env(GlobalArgs::default(), &move |name| {
        env_urls.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    })
    .await;
    let scratch = std::env::temp_dir().join(format!("opsdeck-table-parity-{}", std::process::id()));
    let operations = list_operations();
    assert!(operations.len() > 40, "the catalog's lists were found: {}", operations.len());
    let mut differences = Vec::new();
    for op in operations {
        let values = required_values(op);
        // The console: the operation's form, filled with these values, sent with Ctrl-s.
        let index = h.console.app.tabs.iter().position(|t| t.service == op.service).expect("a tab per service");
        h.keys(&(index + 1).to_string());
        h.settle().await;
        h.console.app.tabs[index].drafts.insert(op.name, values.iter().cloned().collect());
        h.console.app.open_form(op);
        h.keys("<C-s>");
        h.settle().await;
        let shown = h.console.app.tabs[index].page.as_ref().map(|p| p.op.name);
        if shown != Some(op.name) {
            differences.push(format!("{}: the console did not list it (showing {shown:?})", op.full_name()));
            h.keys("<Esc>");
            continue;
        }
        let browser = h.console.app.tabs[index].browser.column_labels();
        // The CLI, off the runtime so the upstream on it can answer.
        let mut args =
            vec!["call".to_owned(), op.service.name().to_owned(), op.name.to_owned(), "-o".into(), "table".into()];
        args.extend(values.iter().map(|(k, v)| format!("{k}={v}")));
        let (env, scratch) = (urls.clone(), scratch.clone());
        let output = tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_opsdeck"))
                .args(&args)
                .env_clear()
                .env("OPSDECK_DATA_DIR", &scratch)
                .env("OPSDECK_STATE_DIR", &scratch)
                .envs(env)
                .output()
                .expect("opsdeck runs")
        })
        .await
        .expect("joined");
        let text = String::from_utf8_lossy(&output.stdout);
        let cli: Vec<String> = text.lines().next().unwrap_or_default().split_whitespace().map(str::to_owned).collect();
        if !output.status.success() || cli != browser {
            differences.push(format!(
                "{}: browser {browser:?}, -o table {cli:?} ({})",
                op.full_name(),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    assert!(differences.is_empty(), "{} differ:\n{}", differences.len(), differences.join("\n"));
}
