//! Every text input of the console takes every printable key as text, and all share the same
//! line-editing keys (issue 18): the row filter, the inspector's `/` and `|`, the operations menu's
//! filter, the palette, form fields, the history filter, the save path and the LIVE confirmation.
#![allow(clippy::unwrap_used, reason = "tests")]

use opsdeck::catalog::Service;
use opsdeck::client::Values;
use opsdeck::tui::app::{Focus, Popup};
use opsdeck::tui::components::confirm::Confirm;
use opsdeck::tui::components::save_file::SavePrompt;
use opsdeck::tui::harness::Harness;

/// Every printable ASCII character, space to tilde.
fn printable() -> String {
    (' '..='~').collect()
}

/// What the focused input holds, wherever it is.
fn typed(h: &Harness) -> String {
    let app = &h.console.app;
    match &app.popup {
        Some(Popup::Menu(menu)) => menu.query().to_owned(),
        Some(Popup::Form(form)) => form.values().into_values().next().unwrap_or_default(),
        Some(Popup::History(view)) => view.filter_text().to_owned(),
        Some(Popup::Save(prompt, _)) => prompt.path.text().to_owned(),
        Some(Popup::Confirm(confirm)) => confirm.typed().to_owned(),
        Some(_) => panic!("no text input in this popup"),
        None => match app.focus {
            Focus::Browser => app.tab().browser.filter.text().to_owned(),
            Focus::Inspector => app.tab().inspector.typed().expect("a prompt open").to_owned(),
            Focus::Resources => panic!("no input in the resource list"),
        },
    }
}

/// Types every printable character, then checks the line-editing keys on what was typed.
fn type_everything_and_edit(h: &mut Harness, place: &str) {
    let all = printable();
    // Whatever the input started with (a pre-filled field) goes first.
    h.keys("<C-u>");
    h.type_text(&all);
    assert_eq!(typed(h), all, "{place}: every printable character is text");
    assert!(!h.console.app.quit, "{place}: q did not quit");
    h.keys("<C-u>");
    assert_eq!(typed(h), "", "{place}: Ctrl-u clears the line");
    h.type_text(".status.occupancy");
    h.keys("<C-w>");
    assert_eq!(typed(h), ".status.", "{place}: Ctrl-w");
    h.keys("<C-a>x<End>y<Home><Del><A-f><C-k>");
    assert_eq!(typed(h), ".status", "{place}: Ctrl-a, End, Home, Delete, Alt-f, Ctrl-k");
    h.keys("<A-b><Right>z<Left><Left><BS>");
    assert_eq!(typed(h), "sztatus", "{place}: Alt-b, Right, Left, Backspace");
}

#[tokio::test]
async fn the_browser_filter_and_the_inspector_prompts_take_every_printable_key() {
    let mut h = Harness::new().await;
    h.browse("channels").await;
    h.console.app.focus = Focus::Browser;
    h.keys("/");
    type_everything_and_edit(&mut h, "row filter");
    h.keys("<Esc>");

    h.console.app.focus = Focus::Inspector;
    h.keys("/");
    type_everything_and_edit(&mut h, "inspector search");
    h.keys("<Esc>");

    h.keys("|");
    h.keys("<C-u>");
    h.type_text(".status.occupancy");
    assert_eq!(typed(&h), ".status.occupancy", "y is text in the jq prompt, not copy");
    assert!(h.console.app.clipboard.is_none(), "nothing was copied");
    let screen = h.screen();
    assert!(!screen.contains("could not copy"), "{screen}");
    type_everything_and_edit(&mut h, "inspector jq");
}

#[tokio::test]
async fn the_menus_take_every_printable_key_after_slash_and_in_the_palette() {
    let mut h = Harness::new().await;
    h.keys("o/");
    type_everything_and_edit(&mut h, "operations menu filter");
    h.keys("<Esc><Esc>");
    assert!(h.console.app.popup.is_none());

    h.keys(":");
    type_everything_and_edit(&mut h, "palette");
}

#[tokio::test]
async fn form_fields_history_save_path_and_live_confirmation_take_every_printable_key() {
    let mut h = Harness::new().await;
    h.keys(":channels_get<Enter>");
    assert!(matches!(h.console.app.popup, Some(Popup::Form(_))), "a form");
    type_everything_and_edit(&mut h, "form field");
    h.keys("<Esc>");

    h.keys("H/");
    assert!(matches!(h.console.app.popup, Some(Popup::History(_))), "the history");
    type_everything_and_edit(&mut h, "history filter");
    h.keys("<Esc><Esc>");

    h.console.app.popup = Some(Popup::Save(SavePrompt::new("http://127.0.0.1:9/label.png".into(), "label.png"), None));
    type_everything_and_edit(&mut h, "save path");
    h.keys("<Esc>");

    let delete = Service::Ably.operation("channels_get").unwrap();
    let mut values = Values::new();
    values.insert("channelId".into(), "orders".into());
    h.console.app.popup = Some(Popup::Confirm(Confirm::new(delete, values, true, "prod".into())));
    type_everything_and_edit(&mut h, "LIVE confirmation");
}

#[tokio::test]
async fn the_sandbox_views_fault_form_takes_every_printable_key() {
    let mut h = Harness::new().await;
    h.keys("S");
    assert!(matches!(h.console.app.popup, Some(Popup::Sandbox(_))), "the sandbox view");
    h.keys("a<Down>");
    let all = printable();
    h.keys("<C-u>");
    h.type_text(&all);
    let screen = h.screen();
    // The field scrolls to keep the cursor in view: its end is on screen, and nothing quit.
    assert!(screen.contains("xyz{|}~"), "{screen}");
    assert!(!h.console.app.quit);
    assert!(matches!(h.console.app.popup, Some(Popup::Sandbox(_))), "q was text, not close");
}
