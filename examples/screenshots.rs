//! Regenerates `screenshots/*.svg` from the real rendering: the console is driven by keys against
//! the embedded simulators and each frame is written as SVG. Run: `cargo run --example screenshots`.

#![allow(clippy::unwrap_used, reason = "a test panics on failure")]

use opsdeck::tui::app::Popup;
use opsdeck::tui::harness::Harness;
use opsdeck::tui::svg;

const BACKGROUND: &str = "#1e2127";
const FOREGROUND: &str = "#dcdfe4";

fn save(harness: &mut Harness, name: &str) -> std::io::Result<()> {
    harness.screen();
    let path = format!("{}/screenshots/{name}.svg", env!("CARGO_MANIFEST_DIR"));
    std::fs::write(&path, svg::render(harness.buffer(), BACKGROUND, FOREGROUND))?;
    println!("wrote {path}");
    Ok(())
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut h = Harness::new().await;
    h.resize(160, 40);
    h.keys("jj");
    save(&mut h, "ably-tab")?;

    // A form with a value the catalog's bounds reject.
    h.keys(":messages_list<Enter>");
    if let Some(Popup::Form(form)) = h.console.app.popup.as_mut() {
        form.set_value("limit", "5000");
        form.set_value("direction", "sideways");
    }
    h.keys("<C-s>");
    save(&mut h, "form-validation-error")?;
    h.keys("<Esc>");

    // The inspector on a page of message history, one record unfolded.
    h.browse("messages").await;
    h.keys("<Enter>");
    save(&mut h, "inspector")?;

    // TaxJar: a calculation whose line items are edited as a table, then its breakdown.
    h.keys("<Esc>4");
    h.settle().await;
    h.keys(":taxjar taxes_calculate<Enter>");
    if let Some(Popup::Form(form)) = h.console.app.popup.as_mut() {
        for (name, value) in [
            ("from_country", "US"),
            ("from_zip", "92093"),
            ("from_state", "CA"),
            ("to_country", "US"),
            ("to_zip", "90002"),
            ("to_state", "CA"),
            ("shipping", "1.5"),
        ] {
            form.set_value(name, value);
        }
    }
    h.keys("<C-e><Tab>15<Tab><Tab>20010<C-n><Tab>9.99");
    save(&mut h, "taxjar-line-items")?;
    h.keys("<Enter><C-s>");
    h.settle().await;
    save(&mut h, "taxjar-calculation")?;

    // The sandbox view of that tab: the requests just made.
    h.keys("<Esc>S");
    h.settle().await;
    save(&mut h, "sandbox-view")?;

    // AvaTax: a company's transactions, status coloured, then one with its tax by jurisdiction.
    h.keys("<Esc>3");
    h.settle().await;
    h.keys("<Enter>");
    h.settle().await;
    save(&mut h, "avatax-transactions")?;
    h.keys("jjjjj<Enter>");
    h.settle().await;
    save(&mut h, "avatax-transaction")?;

    // Ably stats: a chart of the time series under the table, the inspector filtered with jq.
    h.keys("<Esc><Esc>1");
    h.settle().await;
    h.browse("stats").await;
    h.keys("l|.[0:3] | map({intervalId, messages: .entries[\"messages.all.all.count\"]})<Enter>");
    save(&mut h, "ably-stats-chart")?;

    // An 80x24 terminal keeps the active tab, its badge and the profile in the header.
    h.keys("<Esc>h");
    h.resize(80, 24);
    save(&mut h, "small-terminal")?;
    Ok(())
}
