use super::*;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn view(body: &str) -> ResponseView {
    ResponseView {
        title: "list channels".into(),
        status: Some(200),
        duration: Duration::from_millis(42),
        request_line: "GET http://127.0.0.1:7701/channels?limit=100".into(),
        headers: vec![("content-type".into(), "application/json".into()), ("x-request-id".into(), "req_123".into())],
        body: Bytes::from(body.to_owned()),
        content_type: Some("application/json".into()),
    }
}

const BODY: &str =
    r#"{"items":[{"id":"ch_1","name":"alerts","members":3},{"id":"ch_2","name":"ops","members":12}],"next":null}"#;

fn draw(inspector: &mut Inspector, width: u16, height: u16) -> Vec<String> {
    inspector.wait_filter(std::time::Duration::from_secs(30));
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let theme = Theme::dark();
    terminal.draw(|frame| inspector.render(frame, frame.area(), &theme, true)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height).map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect::<String>()).collect()
}

fn key(inspector: &mut Inspector, keys: &str) {
    for c in keys.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\x1b' => KeyCode::Esc,
            '\x08' => KeyCode::Backspace,
            c => KeyCode::Char(c),
        };
        inspector.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    }
}

/// Opens the `|` line, clears what it holds, types `code` and applies it.
fn filter(inspector: &mut Inspector, code: &str) {
    key(inspector, "|");
    key(inspector, &"\x08".repeat(40));
    key(inspector, code);
    key(inspector, "\n");
}

fn contains(screen: &[String], text: &str) -> bool {
    screen.iter().any(|line| line.contains(text))
}

#[test]
fn renders_summary_request_and_tree() {
    let mut inspector = Inspector::new();
    inspector.show(view(BODY));
    let screen = draw(&mut inspector, 60, 16);
    assert!(screen[0].contains("list channels"), "{screen:#?}");
    assert!(screen[0].contains("tree·raw·headers"), "{screen:#?}");
    assert!(screen[1].contains("200 OK · 42 ms · 105 B · application/json"), "{screen:#?}");
    assert!(screen[2].contains("GET http://127.0.0.1:7701/channels?limit=100"));
    assert_eq!(screen[3].trim_end_matches([' ', '│']), "│▾ {");
    assert_eq!(screen[4].trim_end_matches([' ', '│']), "│  ▾ items: [");
    assert_eq!(screen[5].trim_end_matches([' ', '│']), "│    ▾ {");
    assert_eq!(screen[6].trim_end_matches([' ', '│']), "│        id: \"ch_1\"");
    assert!(contains(&screen, "members: 12"));
    assert!(contains(&screen, "next: null"));
    assert!(screen[15].contains(" 0% "), "{screen:#?}");
}

#[test]
fn styles_the_selected_line_and_values() {
    let mut inspector = Inspector::new();
    inspector.show(view(BODY));
    let mut terminal = Terminal::new(TestBackend::new(60, 16)).unwrap();
    let theme = Theme::dark();
    terminal.draw(|frame| inspector.render(frame, frame.area(), &theme, true)).unwrap();
    let buffer = terminal.backend().buffer();
    assert_eq!(buffer[(1, 3)].bg, theme.selection.bg.unwrap());
    assert_eq!(buffer[(58, 3)].bg, theme.selection.bg.unwrap(), "the whole row is selected");
    // `id: "ch_1"` on row 6: the key and the string value.
    assert_eq!(buffer[(9, 6)].fg, theme.json_key.fg.unwrap());
    assert_eq!(buffer[(13, 6)].fg, theme.json_string.fg.unwrap());
    assert_eq!(buffer[(1, 1)].fg, theme.success.fg.unwrap());
}

#[test]
fn keys_fold_and_unfold() {
    let mut inspector = Inspector::new();
    inspector.show(view(BODY));
    key(&mut inspector, "j\n");
    let screen = draw(&mut inspector, 60, 12);
    assert!(contains(&screen, "▸ items: […] 2 items"), "{screen:#?}");
    assert!(!contains(&screen, "ch_1"));
    key(&mut inspector, "l");
    assert!(contains(&draw(&mut inspector, 60, 12), "ch_1"));
    key(&mut inspector, "c");
    let screen = draw(&mut inspector, 60, 12);
    assert!(contains(&screen, "▸ items: […] 2 items"), "{screen:#?}");
    assert!(contains(&screen, "next: null"));
    key(&mut inspector, "e");
    assert!(contains(&draw(&mut inspector, 60, 16), "name: \"ops\""));
    // `h` folds, then goes to the parent, and at the root gives the key back to the app.
    key(&mut inspector, "h");
    assert!(!contains(&draw(&mut inspector, 60, 12), "ch_1"));
    key(&mut inspector, "hh");
    assert!(!inspector.handle_key(KeyEvent::new(KeyCode::Char('h'), KeyModifiers::NONE)));
    assert!(!inspector.handle_key(KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE)));
}

#[test]
fn search_reveals_and_reports_matches() {
    let mut inspector = Inspector::new();
    inspector.show(view(BODY));
    key(&mut inspector, "c/");
    assert!(inspector.is_typing());
    key(&mut inspector, "OPS");
    let screen = draw(&mut inspector, 60, 12);
    assert!(contains(&screen, "/OPS "), "{screen:#?}");
    key(&mut inspector, "\n");
    assert!(!inspector.is_typing());
    let screen = draw(&mut inspector, 60, 12);
    assert!(contains(&screen, "name: \"ops\""), "{screen:#?}");
    assert!(screen[11].contains("match 1/1 ↓"), "{screen:#?}");
    assert_eq!(inspector.selected_json(), Some(serde_json::json!("ops")));
    key(&mut inspector, "n");
    assert!(draw(&mut inspector, 60, 12)[11].contains("match 1/1 ↓ (wrapped)"));

    key(&mut inspector, "/members\n");
    assert!(draw(&mut inspector, 60, 12)[11].contains("match 2/2 ↓"));
    key(&mut inspector, "N");
    assert!(draw(&mut inspector, 60, 12)[11].contains("match 1/2 ↑"));
    assert_eq!(inspector.selected_json(), Some(serde_json::json!(3)));

    key(&mut inspector, "/zebra\n");
    assert!(draw(&mut inspector, 60, 12)[11].contains("no match for zebra"));
    // Esc closes the box without searching.
    key(&mut inspector, "/x\x1b");
    assert!(!inspector.is_typing());
    assert!(draw(&mut inspector, 60, 12)[11].contains("no match for zebra"));
}

#[test]
fn selected_json_is_the_record() {
    let mut inspector = Inspector::new();
    inspector.show(view(BODY));
    key(&mut inspector, "jj");
    assert_eq!(inspector.selected_json(), Some(serde_json::json!({"id": "ch_1", "name": "alerts", "members": 3})));
    let copied: serde_json::Value = serde_json::from_str(&inspector.copy_text().unwrap()).unwrap();
    assert_eq!(copied, serde_json::json!({"id": "ch_1", "name": "alerts", "members": 3}));
}

#[test]
fn invalid_json_shows_raw_text_with_a_note() {
    let mut inspector = Inspector::new();
    inspector.show(view("{\"a\": 1,\n oops}\n"));
    assert_eq!(inspector.mode(), InspectorMode::Raw);
    let screen = draw(&mut inspector, 70, 10);
    assert!(contains(&screen, "not valid JSON: unexpected 'o', expected a string key at line 2"), "{screen:#?}");
    assert!(contains(&screen, "│{\"a\": 1,"));
    assert!(contains(&screen, "│ oops}"));
    assert!(inspector.selected_json().is_none());
}

#[test]
fn plain_text_and_raw_mode() {
    let mut inspector = Inspector::new();
    let mut v = view("queued\tok\nsecond line\n");
    v.content_type = Some("text/plain".into());
    inspector.show(v);
    let screen = draw(&mut inspector, 40, 8);
    assert!(contains(&screen, "│queued ok"), "{screen:#?}");
    assert!(contains(&screen, "│second line"));
    assert!(screen[0].contains("raw·headers"));

    // JSON in raw mode: pretty-printed, and `p` shows the bytes as received, scrolled sideways.
    inspector.show(view(BODY));
    key(&mut inspector, "w");
    let screen = draw(&mut inspector, 30, 8);
    assert!(contains(&screen, "│  \"items\": ["), "{screen:#?}");
    assert!(contains(&screen, "│      \"id\": \"ch_1\","), "{screen:#?}");
    key(&mut inspector, "p");
    let screen = draw(&mut inspector, 30, 8);
    assert!(contains(&screen, "│{\"items\":[{\"id\":"), "{screen:#?}");
    assert!(contains(&screen, "as received"), "{screen:#?}");
    key(&mut inspector, "l");
    let screen = draw(&mut inspector, 30, 8);
    assert!(contains(&screen, "│:[{\"id\":\"ch_1\""), "{screen:#?}");
    key(&mut inspector, "t");
    assert_eq!(inspector.mode(), InspectorMode::Tree);
}

#[test]
fn binary_bodies_are_summarised() {
    let mut inspector = Inspector::new();
    let mut v = view("");
    v.body = Bytes::from_static(&[0xff, 0xfb, 0x90, 0x00, 0x12, 0x80]);
    v.content_type = Some("audio/mpeg".into());
    inspector.show(v);
    let screen = draw(&mut inspector, 40, 8);
    assert!(contains(&screen, "6 bytes of audio/mpeg"), "{screen:#?}");
    assert!(!inspector.handle_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE)));

    let mut v = view("");
    v.body = Bytes::from_static(b"\x00\x01binary");
    v.content_type = None;
    inspector.show(v);
    assert!(contains(&draw(&mut inspector, 40, 8), "8 bytes of binary data"));
}

#[test]
fn headers_mode() {
    let mut inspector = Inspector::new();
    inspector.show(view(BODY));
    key(&mut inspector, "H");
    let screen = draw(&mut inspector, 50, 8);
    assert!(contains(&screen, "│content-type: application/json"), "{screen:#?}");
    assert!(contains(&screen, "│x-request-id: req_123"));
    // The mode sticks for the next response.
    inspector.show(view("[1]"));
    assert_eq!(inspector.mode(), InspectorMode::Headers);

    // A long value wraps under itself: its end is on screen.
    let mut long = view(BODY);
    let link = format!("<https://api.example.com/items?page=2&{}>; rel=\"next\"", "q=x&".repeat(12));
    long.headers = vec![("link".into(), link), ("x-request-id".into(), "req_9".into())];
    inspector.show(long);
    let screen = draw(&mut inspector, 40, 10);
    assert!(contains(&screen, "│link: <https://api.example.com/items?p"), "{screen:#?}");
    assert!(contains(&screen, "rel=\"next\""), "the end of the value is shown: {screen:#?}");
    assert!(contains(&screen, "│x-request-id: req_9"), "{screen:#?}");
}

#[test]
fn empty_and_cleared() {
    let mut inspector = Inspector::new();
    assert!(contains(&draw(&mut inspector, 30, 5), "no response yet"));
    let mut v = view("");
    v.status = Some(204);
    inspector.show(v);
    let screen = draw(&mut inspector, 40, 6);
    assert!(contains(&screen, "204 No Content"), "{screen:#?}");
    assert!(contains(&screen, "empty body"));
    inspector.show(view(BODY));
    inspector.clear();
    assert!(inspector.view().is_none());
    assert!(contains(&draw(&mut inspector, 30, 5), "no response yet"));
}

#[test]
fn tiny_areas_do_not_panic() {
    let mut inspector = Inspector::new();
    inspector.show(view(BODY));
    for (w, h) in [(1, 1), (2, 2), (3, 3), (20, 5), (5, 20), (1, 40), (80, 1), (4, 4)] {
        let screen = draw(&mut inspector, w, h);
        assert_eq!(screen.len(), usize::from(h));
        key(&mut inspector, "jGwlHt/a");
        key(&mut inspector, "\n");
        draw(&mut inspector, w, h);
    }
    let screen = draw(&mut inspector, 20, 5);
    assert!(screen[0].starts_with('┌'));
    // On a 20x5 pane the search box takes the only body row.
    key(&mut inspector, "/x");
    let screen = draw(&mut inspector, 20, 5);
    assert!(screen[3].contains("/x"), "{screen:#?}");
}

#[test]
fn a_jq_filter_shows_its_result_as_the_tree_and_is_kept_per_view() {
    let mut inspector = Inspector::new();
    inspector.show(view(BODY));
    key(&mut inspector, "|");
    assert!(inspector.is_typing());
    key(&mut inspector, ".items[].id");
    let screen = draw(&mut inspector, 60, 14);
    assert!(screen[12].contains("| .items[].id "), "{screen:#?}");
    assert!(contains(&screen, "alerts"), "nothing runs before Enter");
    key(&mut inspector, "\n");
    assert!(!inspector.is_typing());
    let screen = draw(&mut inspector, 64, 14);
    assert!(screen[0].contains("list channels | .items[].id · 2 results"), "{screen:#?}");
    // Narrower, the title gives way from its middle and the modes stay whole.
    let narrow = draw(&mut inspector, 60, 14);
    assert!(narrow[0].contains("list channels | .i…") && narrow[0].contains("2 results"), "{narrow:#?}");
    assert!(narrow[0].contains("tree·raw·headers"), "{narrow:#?}");
    assert!(contains(&screen, "\"ch_1\"") && contains(&screen, "\"ch_2\""), "{screen:#?}");
    assert!(!contains(&screen, "alerts"), "{screen:#?}");
    assert_eq!(inspector.copy_text().as_deref(), Some("[\n  \"ch_1\",\n  \"ch_2\"\n]"));

    // The view refreshed: filtered again. Another view keeps its own (none).
    inspector.show(view(r#"{"items":[{"id":"ch_9","name":"new"}]}"#));
    let screen = draw(&mut inspector, 60, 14);
    assert!(screen[0].contains("| .items[].id ─"), "one result is itself: {screen:#?}");
    assert!(contains(&screen, "\"ch_9\"") && !contains(&screen, "new"), "{screen:#?}");
    let mut record = view(r#"{"id":"ch_9","name":"new"}"#);
    record.title = "channels record".into();
    inspector.show(record.clone());
    let screen = draw(&mut inspector, 60, 14);
    assert!(!screen[0].contains('|') && contains(&screen, "name: \"new\""), "{screen:#?}");
    filter(&mut inspector, ".name");
    assert!(draw(&mut inspector, 60, 14)[0].contains("channels record | .name"));
    inspector.show(view(BODY));
    assert_eq!(inspector.filter(), Some(".items[].id"));

    // `|` edits the filter; emptied, it shows the whole response again.
    key(&mut inspector, "|");
    key(&mut inspector, &"\x08".repeat(20));
    key(&mut inspector, "\n");
    let screen = draw(&mut inspector, 60, 14);
    assert!(!screen[0].contains('|') && contains(&screen, "alerts"), "{screen:#?}");
    assert_eq!(inspector.filter(), None);
}

#[test]
fn filter_errors_show_under_the_filter_and_are_inert() {
    let mut inspector = Inspector::new();
    inspector.show(view(BODY));
    key(&mut inspector, "|.items[\n");
    let screen = draw(&mut inspector, 70, 14);
    assert!(screen[11].contains("| .items[  (| edits)"), "{screen:#?}");
    assert!(screen[12].contains("✗ expected"), "{screen:#?}");
    assert!(contains(&screen, "alerts"), "the response stays in view: {screen:#?}");
    filter(&mut inspector, ".items.name");
    let screen = draw(&mut inspector, 70, 14);
    assert!(screen[12].contains("✗ jq: cannot index"), "{screen:#?}");
    // Server text in a result or an error is shown, never interpreted.
    inspector.show(view(r#"{"items":[{"id":"\u001b]52;c;ZXZpbA==\u0007"}]}"#));
    filter(&mut inspector, ".items[0].id");
    let screen = draw(&mut inspector, 70, 14);
    assert!(screen.iter().all(|l| !l.contains('\x1b') && !l.contains('\x07')), "{screen:#?}");
    assert!(contains(&screen, "52;c;ZXZpbA=="), "{screen:#?}");
    filter(&mut inspector, "error(.)");
    let screen = draw(&mut inspector, 70, 14);
    assert!(screen.iter().all(|l| !l.contains('\x1b')), "{screen:#?}");
    assert!(contains(&screen, "✗ jq:"), "{screen:#?}");
}

#[test]
fn filters_refuse_text_and_bodies_too_big_to_filter() {
    let body = Bytes::from_static(br#"[1,2,3]"#);
    let shown = Body::Json(Box::new(JsonTree::new(JsonDoc::parse(body.clone()).unwrap())));
    let error = filter_input(".[]", &shown, &body, 4).err().unwrap();
    assert!(error.contains("the body is 7 B, over the 4 B a filter runs on here"), "{error}");
    assert!(filter_input(".[] | . * 2", &shown, &body, 100).is_ok());
    let (tree, count) = result_tree(vec![2.into(), 4.into(), 6.into()]).unwrap();
    assert_eq!((tree.doc().body().as_ref(), count), (&b"[2,4,6]"[..], 3));
    let (tree, count) = result_tree(Vec::new()).unwrap();
    assert_eq!((tree.doc().body().as_ref(), count), (&b"[]"[..], 0));

    let mut inspector = Inspector::new();
    let mut text = view("queued ok");
    text.content_type = Some("text/plain".into());
    inspector.show(text);
    key(&mut inspector, "|.\n");
    assert!(contains(&draw(&mut inspector, 60, 10), "✗ the body is not JSON"));
}

#[test]
fn never_draws_more_lines_than_fit() {
    let items: Vec<String> = (0..5_000).map(|i| format!(r#"{{"n":{i}}}"#)).collect();
    let mut inspector = Inspector::new();
    inspector.show(view(&format!("[{}]", items.join(","))));
    let screen = draw(&mut inspector, 40, 10);
    assert!(screen[9].starts_with('└'));
    key(&mut inspector, "G");
    let screen = draw(&mut inspector, 40, 10);
    assert!(contains(&screen, "n: 4999"), "{screen:#?}");
    assert!(screen[9].contains("100%"));
}
