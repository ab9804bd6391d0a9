use bytes::Bytes;

use super::*;

fn doc(text: &str) -> JsonDoc {
    JsonDoc::parse(Bytes::from(text.to_owned())).unwrap()
}

fn tree(text: &str) -> JsonTree {
    JsonTree::new(doc(text))
}

/// The drawn lines as `depth key: preview` strings.
fn shown(tree: &mut JsonTree, height: usize) -> Vec<String> {
    tree.lines(height)
        .into_iter()
        .map(|l| {
            let key = l.key.map(|k| format!("{k}: ")).unwrap_or_default();
            format!("{}{key}{}", "  ".repeat(l.depth), l.preview)
        })
        .collect()
}

fn find_key(doc: &JsonDoc, key: &str) -> NodeId {
    (0..doc.node_count() as u32).map(NodeId).find(|&id| doc.key(id).as_deref() == Some(key)).unwrap()
}

#[test]
fn unescapes_keys_and_previews() {
    let d = doc(r#"{"a\"b\\c\u00e9\ud83d\ude00\n":"line\nnext\t\u0001","lone\ud800":1}"#);
    let first = NodeId(1);
    assert_eq!(d.key(first).as_deref(), Some("a\"b\\cé😀\n"));
    assert_eq!(d.scalar_preview(first, 100), "\"line\\nnext\\t\\u0001\"");
    assert_eq!(d.key(NodeId(2)).as_deref(), Some("lone\u{fffd}"));
    assert_eq!(d.scalar_preview(first, 4), "\"line…");
    let mut t = JsonTree::new(d);
    let lines = t.lines(10);
    assert_eq!(lines[1].key.as_deref(), Some("a\"b\\cé😀\\n"));
}

const SAMPLE: &str = r#"{"id":"ord_1","customer":{"name":"Ada","address":{"city":"London","zip":"N1"}},"items":[{"sku":"A","qty":2},{"sku":"B","qty":1}],"paid":true}"#;

#[test]
fn small_documents_open_expanded() {
    let mut t = tree(SAMPLE);
    assert_eq!(
        shown(&mut t, 100),
        vec![
            "{",
            "  id: \"ord_1\"",
            "  customer: {",
            "    name: \"Ada\"",
            "    address: {",
            "      city: \"London\"",
            "      zip: \"N1\"",
            "  items: [",
            "    {",
            "      sku: \"A\"",
            "      qty: 2",
            "    {",
            "      sku: \"B\"",
            "      qty: 1",
            "  paid: true",
        ]
    );
}

#[test]
fn collapse_expand_and_all() {
    let mut t = tree(SAMPLE);
    let customer = find_key(t.doc(), "customer");
    t.select(customer);
    t.toggle();
    assert!(!t.is_expanded(customer));
    let lines = shown(&mut t, 100);
    assert_eq!(lines[2], "  customer: {…} 2 keys");
    assert_eq!(lines[3], "  items: [");
    t.toggle();
    assert!(t.is_expanded(customer));

    t.collapse_all();
    assert_eq!(
        shown(&mut t, 100),
        vec!["{", "  id: \"ord_1\"", "  customer: {…} 2 keys", "  items: […] 2 items", "  paid: true"]
    );
    // The cursor was on a now-visible node and stays there.
    assert_eq!(t.cursor(), customer);

    t.expand_all();
    assert_eq!(shown(&mut t, 100).len(), 15);

    // Collapsing all while deep inside pulls the cursor out to a visible ancestor.
    let zip = find_key(t.doc(), "zip");
    t.select(zip);
    t.collapse_all();
    assert_eq!(t.cursor(), customer);

    // Expanding one node under collapse-all, then its child.
    t.expand();
    let lines = shown(&mut t, 100);
    assert_eq!(lines[3], "    name: \"Ada\"");
    assert_eq!(lines[4], "    address: {…} 2 keys");
    t.down();
    t.down();
    t.expand();
    assert_eq!(shown(&mut t, 100)[5], "      city: \"London\"");
    t.collapse();
    assert_eq!(shown(&mut t, 100).len(), 7);
    // Scalars and empty containers neither fold nor unfold.
    let mut t = tree("[1,[]]");
    t.down();
    t.toggle();
    t.down();
    t.toggle();
    assert_eq!(shown(&mut t, 10), vec!["[", "  1", "  []"]);
}

#[test]
fn large_documents_open_two_levels_deep() {
    let records: Vec<String> = (0..500).map(|i| format!(r#"{{"id":{i},"tags":["a","b"]}}"#)).collect();
    let mut t = tree(&format!("[{}]", records.join(",")));
    assert!(t.doc().node_count() >= EXPAND_ALL_BELOW);
    assert_eq!(shown(&mut t, 4), vec!["[", "  {", "    id: 0", "    tags: […] 2 items"]);
    t.collapse_all();
    assert_eq!(shown(&mut t, 3), vec!["[", "  {…} 2 keys", "  {…} 2 keys"]);
}

#[test]
fn moves_up_down_home_end_and_parent() {
    let mut t = tree(SAMPLE);
    t.up();
    assert_eq!(t.cursor(), NodeId::ROOT);
    t.down();
    t.down();
    t.down();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("name"));
    t.to_parent();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("customer"));
    t.collapse();
    t.down();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("items"));
    t.up();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("customer"));
    t.end();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("paid"));
    assert_eq!(t.percent(), 100);
    t.up();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("qty"));
    t.up();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("sku"));
    t.home();
    assert_eq!(t.cursor(), NodeId::ROOT);
    assert_eq!(t.percent(), 0);
}

#[test]
fn up_lands_on_last_visible_descendant() {
    let mut t = tree(r#"[{"a":{"b":{"c":1}}},2]"#);
    t.end();
    t.up();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("c"));
    t.home();
    t.down();
    t.down();
    t.collapse(); // "a"
    t.end();
    t.up();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("a"));
}

#[test]
fn pages_through_a_long_array() {
    let items: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    let mut t = tree(&format!("[{}]", items.join(",")));
    let first = shown(&mut t, 10);
    assert_eq!(first[0], "[");
    assert_eq!(first[9], "  8");
    t.page_down(10);
    let page = shown(&mut t, 10);
    assert_eq!(page[0], "  9");
    assert_eq!(t.doc().scalar_preview(t.cursor(), 10), "9");
    for _ in 0..20 {
        t.page_down(10);
    }
    let last = shown(&mut t, 10);
    assert_eq!(last.len(), 10, "the last page stays full");
    assert_eq!(last[9], "  99");
    assert_eq!(t.percent(), 100);
    t.page_up(10);
    let page = shown(&mut t, 10);
    assert_eq!(page[0], "  80");
    assert_eq!(t.doc().scalar_preview(t.cursor(), 10), "89");
    for _ in 0..20 {
        t.page_up(10);
    }
    assert_eq!(t.cursor(), NodeId::ROOT);
    // Moving the cursor past the bottom scrolls by one line.
    t.home();
    for _ in 0..10 {
        t.down();
    }
    assert_eq!(shown(&mut t, 10)[0], "  0");
}

#[test]
fn search_reveals_a_nested_value() {
    let mut t = tree(SAMPLE);
    t.collapse_all();
    let mut s = Searcher::new("LONDON");
    let hit = t.find_next(&mut s, 0).unwrap();
    assert_eq!(&t.doc().body()[hit..hit + 6], b"London");
    let city = find_key(t.doc(), "city");
    assert_eq!(t.cursor(), city);
    let lines = shown(&mut t, 100);
    assert!(lines.contains(&"      city: \"London\"".to_owned()), "{lines:?}");
    assert!(t.find_next(&mut s, hit + 1).is_none());
    // Searching backwards from the end, and hits in keys.
    let mut s = Searcher::new("sku");
    let last = t.find_prev(&mut s, t.doc().body().len()).unwrap();
    assert_eq!(t.doc().key(t.cursor()).as_deref(), Some("sku"));
    let first = t.find_prev(&mut s, last).unwrap();
    assert!(first < last);
    assert_eq!(s.count(t.doc().body(), last), (1, 2));
    assert!(t.find_prev(&mut s, first).is_none());
}

#[test]
fn searcher_crosses_chunk_boundaries() {
    let mut hay = vec![b'.'; SEARCH_CHUNK * 3];
    let at = SEARCH_CHUNK - 2;
    hay[at..at + 5].copy_from_slice(b"NeEdL");
    hay[2 * SEARCH_CHUNK + 7..2 * SEARCH_CHUNK + 12].copy_from_slice(b"needl");
    let mut s = Searcher::new("needl");
    assert_eq!(s.find(&hay, 0), Some(at));
    assert_eq!(s.find(&hay, at + 1), Some(2 * SEARCH_CHUNK + 7));
    assert_eq!(s.rfind(&hay, hay.len()), Some(2 * SEARCH_CHUNK + 7));
    assert_eq!(s.rfind(&hay, 2 * SEARCH_CHUNK + 7), Some(at));
    assert_eq!(s.rfind(&hay, at + 4), Some(at));
    assert_eq!(s.rfind(&hay, at), None);
    assert_eq!(s.count(&hay, usize::MAX), (2, 2));
    assert_eq!(s.count(&hay, at + 1), (1, 2));
    let mut s = Searcher::new("..");
    assert_eq!(s.count(b"....", 4), (3, 3));
    assert_eq!(Searcher::new("").find(&hay, 0), None);
}

#[test]
fn raw_lines() {
    let text = b"one\r\ntwo\n\nfour\n";
    let idx = LineIndex::new(text);
    assert_eq!(idx.len(), 4);
    assert_eq!(idx.line(text, 0), b"one");
    assert_eq!(idx.line(text, 2), b"");
    assert_eq!(idx.line(text, 3), b"four");
    assert_eq!(idx.line(text, 9), b"");
    assert_eq!(idx.line_of(6), 1);
    assert_eq!(LineIndex::new(b"").len(), 1);
    assert_eq!(visible_text("aé\tb\u{1}c".as_bytes(), 0, 4), "aé b");
    assert_eq!(visible_text("aé\tb\u{1}c".as_bytes(), 2, 10), " b·c");
    assert_eq!(visible_text(&[b'x'; 100_000], 5, 3), "xxx");
}
