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

/// Moves the browser's cursor to the first row whose record holds `text` (`g`, then `j`s).
fn select_row(harness: &mut Harness, text: &str) {
    let records = harness.console.app.tab().browser.records().to_vec();
    let index = records.iter().position(|r| r.to_string().contains(text)).unwrap_or(0);
    harness.keys(&format!("g{}", "j".repeat(index)));
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

    // Mailgun: the DNS view of a domain waiting for its records (verify finds them missing),
    // then the event log tailed, new rows marked on top.
    h.resize(160, 40);
    h.keys("6");
    h.settle().await;
    h.console.app.focus = opsdeck::tui::app::Focus::Browser;
    select_row(&mut h, "news.example.com");
    h.keys("<Enter>");
    h.settle().await;
    h.keys("v");
    h.settle().await;
    save(&mut h, "mailgun-dns")?;
    h.keys("<Esc>");
    select_row(&mut h, "mg.example.com");
    h.browse("events").await;
    h.keys("T");
    h.keys(":compose email<Enter>");
    if let Some(Popup::Form(form)) = h.console.app.popup.as_mut() {
        form.set_value("to", "ops@example.com");
        form.set_value("subject", "Deploy finished");
        form.set_value("text", "All green.");
    }
    // Sending mail asks first; `y` confirms in the sandbox.
    h.keys("<C-s>y");
    h.settle().await;
    h.console.sandbox.clock().advance(10_000);
    h.console.app.on_tick(std::time::Instant::now() + std::time::Duration::from_secs(3));
    h.settle().await;
    h.console.app.focus = opsdeck::tui::app::Focus::Browser;
    save(&mut h, "mailgun-events-tail")?;
    h.keys("T");

    // EasyPost: the order still to buy, its rates with the cheapest and fastest marked, the
    // purchase asked first with its price; then the bought package's tracker on its way.
    h.keys("<Esc>7");
    h.settle().await;
    h.console.app.focus = opsdeck::tui::app::Focus::Browser;
    select_row(&mut h, "order-1103");
    h.keys("<Enter>");
    h.settle().await;
    h.keys("jb<C-s>");
    save(&mut h, "easypost-buy")?;
    h.keys("y");
    h.settle().await;
    h.keys("t");
    h.settle().await;
    h.console.sandbox.clock().advance(110_000);
    let mut at = std::time::Instant::now();
    for _ in 0..2 {
        at += std::time::Duration::from_secs(3);
        h.console.app.on_tick(at);
        h.settle().await;
    }
    save(&mut h, "easypost-tracker")?;

    // Coinbase: the products with their live price, then BTC-USD's market (ladder, candles,
    // tape) after the simulated traders have moved it, and an order form's estimate.
    h.keys("<Esc>5");
    h.settle().await;
    h.keys(":coinbase products_list<Enter><C-s>");
    h.settle().await;
    h.console.app.focus = opsdeck::tui::app::Focus::Browser;
    for _ in 0..2 {
        at += std::time::Duration::from_secs(3);
        h.console.app.on_tick(at);
        h.settle().await;
    }
    save(&mut h, "coinbase-products")?;
    select_row(&mut h, "BTC-USD");
    h.keys("<Enter>");
    h.console.sandbox.clock().advance(120_000);
    for _ in 0..2 {
        at += std::time::Duration::from_secs(3);
        h.console.app.on_tick(at);
        h.settle().await;
    }
    // Then its feed serves it: the book, trades and ticker pushed as they happen.
    let serving = |h: &Harness| {
        let live = h.console.app.tab().live_market.as_ref().is_some_and(|l| l.serving);
        let pushed = matches!(&h.console.app.popup, Some(Popup::Detail(d)) if d.market.as_ref().is_some_and(|m| m.depth.is_some()));
        live && pushed
    };
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while !serving(&h) && tokio::time::Instant::now() < deadline {
        let next = tokio::time::timeout_at(deadline, h.console.background.recv()).await;
        if let Ok(Some(report)) = next {
            h.console.app.on_background(report);
        }
    }
    save(&mut h, "coinbase-market")?;
    h.keys("b");
    h.settle().await;
    if let Some(Popup::Form(form)) = h.console.app.popup.as_mut() {
        form.set_value("price", "90000.005");
        form.set_value("size", "0.01");
    }
    h.keys("<C-s>");
    h.settle().await;
    save(&mut h, "coinbase-order-form")?;

    // Deepgram: a project as the hub of its keys, members, balances and usage; its usage by day
    // and as daily bars; a new key's secret shown once; speech saved to a file (its format and
    // duration), then transcribed back as paragraphs with speakers and times.
    h.keys("<Esc><Esc>2");
    h.settle().await;
    h.console.app.focus = opsdeck::tui::app::Focus::Browser;
    select_row(&mut h, "Support calls");
    h.keys("<Enter>");
    h.settle().await;
    save(&mut h, "deepgram-project")?;
    h.keys("u");
    h.settle().await;
    save(&mut h, "deepgram-usage")?;
    h.keys("c");
    save(&mut h, "deepgram-usage-chart")?;
    h.keys(":deepgram keys_create<Enter>");
    if let Some(Popup::Form(form)) = h.console.app.popup.as_mut() {
        form.set_value("comment", "nightly batch transcription");
        form.set_value("scopes", "member");
    }
    h.keys("<C-s>");
    h.settle().await;
    save(&mut h, "deepgram-new-key")?;
    let dir = std::env::temp_dir().join(format!("opsdeck-screenshots-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let speech = dir.join("welcome.wav");
    h.keys("<Esc>:deepgram speech_speak<Enter>");
    if let Some(Popup::Form(form)) = h.console.app.popup.as_mut() {
        form.set_value("text", "Thanks for calling. Your order ships today.");
    }
    h.keys("<C-s>");
    h.settle().await;
    h.keys("<C-u>");
    h.paste(&speech.display().to_string());
    h.keys("<Enter>");
    h.settle().await;
    save(&mut h, "deepgram-speech-saved")?;
    h.keys("<Esc>:deepgram transcription_transcribe<Enter>");
    if let Some(Popup::Form(form)) = h.console.app.popup.as_mut() {
        form.set_value("file", &speech.display().to_string());
        form.set_value("paragraphs", "true");
        form.set_value("diarize", "true");
    }
    h.keys("<C-s>");
    h.settle().await;
    save(&mut h, "deepgram-transcript")?;
    // The same speech streamed live: caught while a final part and words not final yet show.
    h.keys("<Esc>:transcribe live<Enter>");
    if let Some(Popup::Form(form)) = h.console.app.popup.as_mut() {
        form.set_value("file", &speech.display().to_string());
        form.set_value("punctuate", "true");
    }
    h.keys("<C-s>");
    let texts = |h: &Harness| match &h.console.app.popup {
        Some(Popup::Detail(d)) => (d.texts.len(), d.title.ends_with("done") || d.title.ends_with("ended")),
        _ => (0, true),
    };
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (sections, over) = texts(&h);
        let has_final = matches!(&h.console.app.popup, Some(Popup::Detail(d)) if d.texts.first().is_some_and(|(_, t)| !t.is_empty()));
        if over || (sections == 2 && has_final) {
            break;
        }
        tokio::select! {
            Some(report) = h.console.background.recv() => h.console.app.on_background(report),
            () = tokio::time::sleep_until(deadline) => break,
        }
    }
    save(&mut h, "deepgram-live-transcript")?;
    h.keys("<Esc>");
    let _ = std::fs::remove_dir_all(dir);

    Ok(())
}
