//! Console conventions as the user meets them: `[keys]` rebinding (and what a bad one says),
//! help and footer showing the keys in effect, the tab bar at 80x24, zoom, the mouse, the
//! operations menu, the palette's profiles, themes and read-only, and read-only profiles.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::path::Path;

use opsdeck::cli::GlobalArgs;
use opsdeck::config::Config;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::harness::Harness;

fn args(profile: Option<&str>) -> GlobalArgs {
    GlobalArgs { profile: profile.map(str::to_owned), ..GlobalArgs::default() }
}

fn truecolor(name: &str) -> Option<String> {
    (name == "COLORTERM").then(|| "truecolor".to_owned())
}

async fn console(config: &str, profile: Option<&str>) -> Harness {
    let config = Config::parse(config, Path::new("/tmp/opsdeck-test/config.toml")).expect("config parses");
    Harness::with_config(config, args(profile), &truecolor).await
}

const PROFILES: &str = r#"
[profiles.prod]
read_only = true

[profiles.staging]
"#;

#[tokio::test]
async fn keys_from_config_replace_the_defaults_and_help_and_footer_show_them() {
    let mut h = console("[keys]\nquit = \"Q\"\nhelp = [\"f1\", \"?\"]\nzoom = \"ctrl-z\"\n", None).await;
    let screen = h.screen();
    let footer = screen.lines().last().unwrap();
    assert!(footer.contains("F1 help") && footer.contains("Q quit"), "footer shows the keys in effect: {footer}");
    h.keys("q");
    assert!(!h.console.app.quit, "q no longer quits");
    h.keys("<F1>");
    let help = h.screen();
    assert!(help.contains("F1 ?"), "help lists both help keys:\n{help}");
    assert!(help.contains("Ctrl-z") && help.contains("maximise the focused pane"), "{help}");
    assert!(help.contains(": read only"), "an action without a key says where to find it:\n{help}");
    let quit_line = help.lines().find(|l| l.contains("quit (Ctrl-c always quits)")).unwrap();
    assert!(quit_line.contains(" Q "), "{quit_line}");
    h.keys("<Esc><C-z>");
    assert!(h.console.app.zoomed, "ctrl-z zooms");
    h.keys("Q");
    assert!(h.console.app.quit, "Q quits");
}

#[tokio::test]
async fn a_bad_key_config_is_reported_on_the_status_line_and_the_rest_works() {
    let mut h = console("[keys]\nqiut = \"x\"\nrefresh = [\"ctrl-\", \"R\"]\nzoom = \"o\"\n", None).await;
    let status = h.screen().lines().last().unwrap().to_owned();
    assert!(status.contains("no action named 'qiut'"), "{status}");
    h.resize(240, 40);
    let status = h.screen().lines().last().unwrap().to_owned();
    assert!(status.contains("[keys] refresh: 'ctrl-' is not a key"), "{status}");
    assert!(status.contains("zoom takes o from operations, which now has no key"), "{status}");
    h.keys("o");
    assert!(h.console.app.zoomed && h.console.app.popup.is_none(), "o zooms now");
    h.keys("R");
    assert!(h.console.app.executor.active_count() > 0, "R refreshes");
    h.settle().await;
}

#[tokio::test]
async fn a_rebinding_is_not_shadowed_by_the_browser() {
    let mut h = console("[keys]\nzoom = \"j\"\nnext_page = \"ctrl-n\"\n", None).await;
    assert_eq!(h.console.app.focus, Focus::Browser);
    let before = h.console.app.tab().browser.selected_index();
    h.keys("j");
    assert!(h.console.app.zoomed, "j zooms instead of moving down");
    assert_eq!(h.console.app.tab().browser.selected_index(), before);
    h.keys("<Down>");
    assert_ne!(h.console.app.tab().browser.selected_index(), before, "the arrow still moves");
    h.keys("n");
    assert!(!h.screen().contains("this is the last page"), "n is no longer next page");
    h.keys("<C-n>");
    let screen = h.screen();
    assert!(screen.contains("this is the last page") || h.console.app.executor.active_count() > 0, "{screen}");
    h.settle().await;
}

#[tokio::test]
async fn the_tab_bar_at_80x24_keeps_the_active_tab_its_badge_and_the_profile() {
    let mut h = console(PROFILES, Some("prod")).await;
    h.resize(80, 24);
    let titles = ["Ably", "Deepgram", "AvaTax", "TaxJar", "Coinbase", "Mailgun", "EasyPost"];
    for (index, title) in titles.iter().enumerate() {
        h.keys(&(index + 1).to_string());
        let screen = h.screen();
        let header = screen.lines().next().unwrap();
        assert!(header.contains(&format!("{} {title} SBX", index + 1)), "tab {title}: {header}");
        assert!(header.contains("profile prod · read-only"), "{header}");
        for other in 1..=7 {
            assert!(header.contains(&other.to_string()), "every tab's number stays: {header}");
        }
    }
    h.settle().await;
    // Wide enough, every tab is named.
    h.resize(160, 40);
    let screen = h.screen();
    let header = screen.lines().next().unwrap();
    assert!(
        header.contains("1 Ably SANDBOX")
            && header.contains("7 EasyPost SANDBOX")
            && header.contains("2 Deepgram SANDBOX"),
        "{header}"
    );
}

#[tokio::test]
async fn zoom_maximises_the_focused_pane_and_restores_it() {
    let mut h = console("", None).await;
    h.resize(80, 24);
    let normal = h.screen();
    assert!(normal.contains("┌ Ably"), "the resources pane:\n{normal}");
    h.keys("z");
    let zoomed = h.screen();
    assert!(!zoomed.contains("┌ Ably"), "only the browser is drawn:\n{zoomed}");
    assert!(zoomed.lines().nth(1).unwrap().starts_with("┌ channels"), "{zoomed}");
    assert!(zoomed.contains("zoomed (z restores)"), "{zoomed}");
    h.keys("l");
    let inspector = h.screen();
    assert!(
        inspector.lines().nth(1).unwrap().starts_with("┌ channels_list"),
        "focus moves, zoom follows:\n{inspector}"
    );
    h.keys("z");
    assert_eq!(h.screen(), normal, "restored (the same text; the inspector keeps the focus)");
}

#[tokio::test]
async fn mouse_clicks_switch_tabs_select_resources_rows_and_nodes() {
    let mut h = console("mouse = true\n", None).await;
    let (x, y) = h.find("3 AvaTax").unwrap();
    h.click(x + 2, y);
    assert_eq!(h.console.app.active, 2, "the tab under the pointer");
    h.settle().await;
    let (x, y) = h.find("1 Ably").unwrap();
    h.click(x, y);
    assert_eq!(h.console.app.active, 0);
    // A resource: selected and opened.
    let (x, y) = h.find("│presence").or_else(|| h.find("presence")).unwrap();
    h.click(x + 1, y);
    assert_eq!(h.console.app.tab().resource_name(), "presence");
    assert_eq!(h.console.app.focus, Focus::Browser);
    h.settle().await;
    let (x, y) = h.find("│channels").unwrap();
    h.click(x + 1, y);
    h.settle().await;
    // A row: the first click selects it, a second opens it.
    let third = h.console.app.tab().browser.records()[2].clone();
    let id = third["channelId"].as_str().unwrap().to_owned();
    let (x, y) = h.find(&id).unwrap();
    h.click(x, y);
    assert_eq!(h.console.app.tab().browser.selected_index(), Some(2));
    assert_eq!(h.console.app.focus, Focus::Browser);
    h.click(x, y);
    h.settle().await;
    assert_eq!(h.console.app.focus, Focus::Inspector, "the second click opened the record");
    // A node of the inspector's tree.
    let inspector = h.console.app.areas.inspector;
    let screen = h.screen();
    let (x, y) = screen
        .lines()
        .enumerate()
        .find_map(|(y, line)| {
            let cells: Vec<char> = line.chars().collect();
            let from = usize::from(inspector.x);
            let text: String = cells.get(from..).unwrap_or_default().iter().collect();
            text.find("channelId").map(|at| (inspector.x + u16::try_from(at).unwrap(), u16::try_from(y).unwrap()))
        })
        .unwrap();
    h.click(x, y);
    assert_eq!(h.console.app.tab().inspector.selected_json(), Some(serde_json::json!(id)));
    // The wheel moves the pane under the pointer, whatever has the focus.
    let browser = h.console.app.areas.browser;
    let rows = h.console.app.tab().browser.row_count();
    h.wheel(true, browser.x + 2, browser.y + 3);
    assert_eq!(h.console.app.tab().browser.selected_index(), Some(5.min(rows - 1)));
    assert_eq!(h.console.app.focus, Focus::Inspector);
}

#[tokio::test]
async fn without_mouse_in_the_config_clicks_do_nothing() {
    let mut h = console("", None).await;
    let (x, y) = h.find("3 AvaTax").unwrap();
    h.click(x + 2, y);
    assert_eq!(h.console.app.active, 0);
}

#[tokio::test]
async fn o_lists_the_selected_resources_operations_first() {
    let mut h = console("", None).await;
    h.keys("o");
    let screen = h.screen();
    let lines: Vec<&str> = screen.lines().collect();
    let heading = lines.iter().position(|l| l.contains("── channels")).expect("a heading for the resource");
    let others = lines.iter().position(|l| l.contains("── other operations")).expect("then the rest");
    let get = lines.iter().position(|l| l.contains("channels_get")).unwrap();
    let publish = lines.iter().position(|l| l.contains("messages_publish")).unwrap();
    assert!(heading < get && get < others && others < publish, "{screen}");
    // The first line selectable is the resource's first operation, not the heading.
    let Some(Popup::Menu(_)) = &h.console.app.popup else { panic!("menu") };
    h.keys("<Up><Enter>");
    let Some(Popup::Form(form)) = &h.console.app.popup else { panic!("a form opened:\n{}", h.screen()) };
    assert_eq!(form.op.resource, "channels");
}

#[tokio::test]
async fn the_operations_menu_moves_with_j_and_k_and_filters_after_slash_as_lazygit_does() {
    let mut h = console("", None).await;
    h.keys("o");
    let selected = |h: &mut Harness| {
        let screen = h.screen();
        let Some(Popup::Menu(menu)) = &h.console.app.popup else { panic!("menu:\n{screen}") };
        (menu.query().to_owned(), menu.is_typing())
    };
    h.keys("jjk");
    assert_eq!(selected(&mut h), (String::new(), false), "j and k move; nothing is typed");
    h.keys("G<Enter>");
    let Some(Popup::Form(form)) = &h.console.app.popup else { panic!("G then Enter picks the last") };
    let last = form.op.name;
    h.keys("<Esc>og");
    h.keys("<Enter>");
    let Some(Popup::Form(form)) = &h.console.app.popup else { panic!("g then Enter picks the first") };
    assert_eq!(form.op.resource, "channels", "the selected resource's operations come first");
    assert_ne!(form.op.name, last);
    h.keys("<Esc>o/jj");
    assert_eq!(selected(&mut h), ("jj".to_owned(), true), "after / the keys are the filter");
    h.keys("<Esc>");
    assert_eq!(selected(&mut h), (String::new(), false), "Esc leaves the filter, not the menu");
    h.keys("/time<Enter>");
    let Some(Popup::Form(form)) = &h.console.app.popup else { panic!("Enter picks while filtering") };
    assert_eq!(form.op.name, "time_get");
    let help = {
        h.resize(200, 90);
        h.keys("<Esc>?");
        h.screen()
    };
    assert!(help.contains("filter by name (Esc: the whole list again)"), "{help}");
}

#[tokio::test]
async fn g_and_shift_g_go_to_the_top_and_bottom_of_the_resource_list() {
    let mut h = console("", None).await;
    h.console.app.focus = Focus::Resources;
    h.keys("G");
    let tab = h.console.app.tab();
    assert_eq!(tab.resource, tab.resources.len() - 1);
    h.keys("g");
    assert_eq!(h.console.app.tab().resource, 0);
}

#[tokio::test]
async fn esc_leaves_the_inspector_from_any_depth() {
    let mut h = console("", None).await;
    h.settle().await;
    h.console.app.focus = Focus::Inspector;
    h.keys("jjjlljjll");
    h.keys("<Esc>");
    assert_eq!(h.console.app.focus, Focus::Browser);
}

#[tokio::test]
async fn the_palette_switches_profile_theme_and_read_only_without_a_restart() {
    let mut h = console(PROFILES, None).await;
    assert!(h.screen().lines().next().unwrap().contains("profile default"));
    h.keys(":profile prod<Enter>");
    h.settle().await;
    let screen = h.screen();
    assert!(screen.lines().next().unwrap().contains("profile prod · read-only"), "{screen}");
    assert!(screen.contains("profile prod: 0 LIVE, 7 SANDBOX, read-only"), "{screen}");
    assert!(h.console.app.tab().browser.row_count() > 0, "the tab loaded again");
    h.keys(":messages_publish<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("form") };
    form.set_value("channelId", "x");
    h.keys("<C-s>");
    assert!(h.screen().contains("profile prod is read-only"), "{}", h.screen());
    assert_eq!(h.console.app.executor.active_count(), 0, "nothing sent");
    // Read-only off from the palette.
    h.keys(":read only<Enter>");
    assert!(!h.console.app.read_only);
    assert!(!h.screen().lines().next().unwrap().contains("read-only"));
    h.keys(":profile staging<Enter>");
    h.settle().await;
    assert!(h.screen().lines().next().unwrap().contains("profile staging"));
    assert!(!h.console.app.read_only);
    h.keys(":theme light<Enter>");
    assert_eq!(h.console.app.theme.name, "light");
    h.keys(":profile nosuch");
    assert!(h.screen().contains("> profile nosuch"));
}

#[tokio::test]
async fn a_read_only_profile_refuses_changes_in_call() {
    let dir = std::env::temp_dir().join(format!("opsdeck-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.toml");
    std::fs::write(&file, PROFILES).unwrap();
    let run = |profile: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_opsdeck"))
            .args(["--config", file.to_str().unwrap(), "--profile", profile, "call", "ably", "messages_publish"])
            .args(["channelId=a", "name=x", "--dry-run"])
            .output()
            .unwrap()
    };
    let refused = run("prod");
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("profile prod is read-only (read_only = true in"));
    let sent = run("staging");
    assert_eq!(sent.status.code(), Some(0), "{}", String::from_utf8_lossy(&sent.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

/// Popups are as wide as their content up to the screen (issue 18): the palette's longest
/// summary is whole at 200 columns, and the help's right column is not cut.
#[tokio::test]
async fn popups_are_sized_to_their_content() {
    let mut h = console("", None).await;
    h.resize(200, 50);
    let longest = opsdeck::catalog::all_operations().max_by_key(|op| op.summary.len()).unwrap();
    h.keys(":");
    h.type_text(&format!("{} {}", longest.service.name(), longest.name));
    let screen = h.screen();
    assert!(screen.contains(longest.summary), "{} in:\n{screen}", longest.summary);
    h.resize(200, 120);
    h.keys("<Esc>?");
    let screen = h.screen();
    let line = screen.lines().find(|l| l.contains("EasyPost rates: choose one")).unwrap_or_default();
    assert!(line.contains("buy it (asks first"), "the line is whole: {screen}");
}

/// The tab of `number` (1 Ably ... 7 EasyPost) on the embedded simulators, its first list shown.
async fn tab(number: &str) -> Harness {
    let mut h = Harness::with_args(args(None)).await;
    h.keys(number);
    h.settle().await;
    h
}

fn notice(h: &Harness) -> String {
    h.console.app.tab().browser.notice.clone().map(|(text, _)| text).unwrap_or_default()
}

#[tokio::test]
async fn a_resource_without_a_list_leaves_every_navigation_key_working() {
    let mut h = tab("7").await;
    h.browse("parcels").await;
    assert!(h.console.app.popup.is_none(), "nothing opens by itself to catch the next keys");
    assert_eq!(notice(&h), "parcels has no list; press o for its operations");
    assert_eq!(h.console.app.focus, Focus::Browser);
    // j, k and Enter in the empty browser open nothing; h and Esc leave it, as in a full one.
    h.keys("jk<Enter>");
    assert!(h.console.app.popup.is_none() && h.console.app.executor.active_count() == 0);
    h.keys("h");
    assert_eq!(h.console.app.focus, Focus::Resources, "h goes back to the resources");
    h.keys("<Enter>");
    assert_eq!(h.console.app.focus, Focus::Browser);
    h.keys("<Esc>");
    assert_eq!(h.console.app.focus, Focus::Resources, "Esc goes back too");
    h.keys("j");
    assert_eq!(h.console.app.tab().resource_name(), "batches", "and j moves down the resources");
    h.keys("k<Right>o");
    assert!(matches!(h.console.app.popup, Some(Popup::Menu(_))), "o still lists its operations");
}

#[tokio::test]
async fn a_read_with_nothing_to_ask_is_sent_on_enter() {
    let mut h = tab("5").await;
    h.browse("fees").await;
    assert!(
        !matches!(h.console.app.popup, Some(Popup::Form(_) | Popup::Menu(_))),
        "no form for a read that asks nothing: {}",
        h.screen()
    );
    let screen = h.screen();
    assert!(screen.contains("fee rates") && screen.contains("maker 0.25 %"), "its view opens: {screen}");
    assert_eq!(notice(&h), "fees has no list: fees_get was sent (r sends it again)");

    let mut h = tab("1").await;
    h.browse("time").await;
    assert!(!matches!(h.console.app.popup, Some(Popup::Form(_) | Popup::Menu(_))), "{}", h.screen());
    assert!(h.screen().contains("Ably server time"), "its view opens: {}", h.screen());
}

#[tokio::test]
async fn a_list_that_needs_an_id_says_where_to_pick_one_and_sends_nothing() {
    let mut h = tab("5").await;
    let url = |h: &Harness| h.console.app.tab().sent.as_ref().map(|r| r.url.clone()).unwrap_or_default();
    let before = url(&h);
    h.open_resource("fills");
    assert_eq!(h.console.app.executor.active_count(), 0, "nothing is sent");
    assert_eq!(url(&h), before);
    assert_eq!(
        notice(&h),
        "fills lists by order_id (pick one in orders) or product_id (pick one in products): nothing was sent \
         (or press o for the form)"
    );
    // With a product picked, its fills are listed.
    h.browse("products").await;
    h.keys("<Enter>");
    h.settle().await;
    h.console.app.popup = None;
    h.browse("fills").await;
    let sent = url(&h);
    assert!(sent.contains("/fills?") && sent.contains("product_id="), "{sent}");

    let mut h = tab("2").await;
    let active = h.console.app.active;
    h.console.app.tabs[active].context.clear();
    h.open_resource("usage");
    assert_eq!(h.console.app.executor.active_count(), 0);
    assert!(notice(&h).starts_with("usage_get reads by project_id"), "{}", notice(&h));
}

#[tokio::test]
async fn q_closes_a_view_and_says_so_and_quits_only_from_the_main_screen() {
    let mut h = tab("7").await;
    h.console.app.focus = Focus::Browser;
    h.keys("<Enter>");
    h.settle().await;
    assert!(matches!(h.console.app.popup, Some(Popup::Detail(_))), "a shipment's view opens");
    h.keys("q");
    assert!(h.console.app.popup.is_none() && !h.console.app.quit, "q closed the view, not the console");
    let status = h.screen().lines().last().unwrap().to_owned();
    assert!(status.contains("closed the shipment view · q again quits"), "{status}");
    h.keys("?q");
    assert!(!h.console.app.quit);
    assert!(h.screen().lines().last().unwrap().contains("closed the help · q again quits"));
    h.keys("q");
    assert!(h.console.app.quit, "from the main screen q quits");
}

#[tokio::test]
async fn the_palette_lists_the_current_tabs_operations_first() {
    let mut h = tab("7").await;
    let chosen = |h: &Harness| match &h.console.app.popup {
        Some(Popup::Form(form)) => form.op.service,
        _ => panic!("a form opens"),
    };
    h.keys(":<Enter>");
    assert_eq!(chosen(&h), opsdeck::catalog::Service::Easypost, "the first entry is the tab's");
    h.keys("<Esc>");
    h.keys(":");
    // Mailgun has a webhooks_list too.
    h.type_text("webhooks_list");
    h.keys("<Enter>");
    assert_eq!(chosen(&h), opsdeck::catalog::Service::Easypost, "and the first of equal matches");
}

#[tokio::test]
async fn esc_from_a_list_a_record_led_to_goes_back_to_the_list_it_came_from() {
    let mut h = tab("5").await;
    h.browse("accounts").await;
    h.console.app.focus = Focus::Browser;
    let list = |h: &Harness| h.console.app.tab().page.as_ref().map(|p| p.op.name).unwrap_or_default();
    assert_eq!(list(&h), "accounts_list");
    h.keys("<Enter>");
    assert!(matches!(h.console.app.popup, Some(Popup::Detail(_))), "the account's view");
    h.keys("l");
    h.settle().await;
    assert_eq!(list(&h), "accounts_get_ledger");
    let title = h.console.app.tab().browser.title.clone();
    assert!(title.starts_with("ledger of ") && title.len() <= "ledger of USDC".len(), "named by its currency: {title}");
    h.console.app.focus = Focus::Browser;
    h.keys("<Esc>");
    h.settle().await;
    assert_eq!(list(&h), "accounts_list", "back to the accounts, not past them");
    assert_eq!(h.console.app.focus, Focus::Browser);
    assert_eq!(h.console.app.tab().resource_name(), "accounts");
    h.keys("<Esc>");
    assert_eq!(h.console.app.focus, Focus::Resources, "from the first list, Esc leaves the browser");
}

#[tokio::test]
async fn the_local_profile_says_how_to_start_a_sandbox_that_is_not_running() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = (free - 1).to_string();
    let mut h = Harness::with_env(args(Some("local")), &move |name| {
        (name == "OPSDECK_SANDBOX_PORT_BASE").then(|| base.clone())
    })
    .await;
    h.keys("1");
    h.settle().await;
    h.resize(240, 40);
    let screen = h.screen();
    assert!(
        screen.contains(&format!(
            "no opsdeck sandbox answers on port {free}: start one with `opsdeck sandbox --port-base"
        )),
        "{screen}"
    );
}

#[tokio::test]
async fn c_on_an_open_order_row_cancels_it_after_asking() {
    let mut h = tab("5").await;
    h.browse("orders").await;
    h.console.app.focus = Focus::Browser;
    let records = h.console.app.tab().browser.records().clone();
    let open = records.iter().position(|r| r["status"] == "open").expect("the seed has an open order");
    let id = records[open]["id"].as_str().unwrap().to_owned();
    h.keys("g");
    h.keys(&"j".repeat(open));
    h.keys("c");
    let Some(Popup::Confirm(confirm)) = &h.console.app.popup else { panic!("a confirmation:\n{}", h.screen()) };
    assert_eq!(confirm.op.name, "orders_cancel");
    assert_eq!(confirm.values.get("order_id"), Some(&id));
    assert!(confirm.effects.iter().any(|e| e.starts_with("cancels the ")), "{:?}", confirm.effects);
    h.keys("y");
    h.settle().await;
    h.keys("r");
    h.settle().await;
    let still_open =
        h.console.app.tab().browser.records().iter().any(|r| r["id"] == id.as_str() && r["status"] == "open");
    assert!(!still_open, "the order is cancelled");
}

#[tokio::test]
async fn placing_an_order_asks_with_what_it_does_not_that_it_cannot_be_undone() {
    let mut h = tab("5").await;
    h.keys(":");
    h.type_text("orders_create");
    h.keys("<Enter>");
    let Some(Popup::Form(form)) = h.console.app.popup.as_mut() else { panic!("the order form") };
    for (name, value) in [("product_id", "BTC-USD"), ("side", "buy"), ("price", "100"), ("size", "0.05")] {
        form.set_value(name, value);
    }
    // The product's increments are asked for first, then the send asks.
    for _ in 0..3 {
        if matches!(h.console.app.popup, Some(Popup::Confirm(_))) {
            break;
        }
        h.keys("<C-s>");
        h.settle().await;
    }
    assert!(matches!(h.console.app.popup, Some(Popup::Confirm(_))), "{}", h.screen());
    let screen = h.screen();
    assert!(screen.contains("This places an order: an open one can be cancelled"), "{screen}");
    assert!(!screen.contains("cannot be undone"), "{screen}");
}

#[tokio::test]
async fn at_80x24_the_coinbase_accounts_keep_available_and_hold_with_dollars_to_the_cent() {
    let mut h = tab("5").await;
    h.resize(80, 24);
    let screen = h.screen();
    let header = screen.lines().find(|l| l.contains("currency")).unwrap_or_default().to_owned();
    assert!(header.contains("available") && header.contains("hold"), "{screen}");
    let usd = screen.lines().find(|l| l.contains("USD ")).unwrap_or_default().to_owned();
    // Available and hold (the balance is their sum), to the cent: 89,895.24 and 9,182.62.
    assert!(usd.contains("89,895.24 ") && usd.contains("9,182.62 ") && !usd.contains("9,182.617"), "{usd}");
}
