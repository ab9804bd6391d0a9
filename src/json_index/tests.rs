//! The index against serde_json and the grammar.

use std::collections::HashSet;

use bytes::Bytes;

use super::*;

fn doc(text: &str) -> JsonDoc {
    JsonDoc::parse(Bytes::from(text.to_owned())).unwrap()
}

fn err(text: &[u8]) -> JsonError {
    JsonDoc::parse(Bytes::copy_from_slice(text)).unwrap_err()
}

#[test]
fn parses_valid_documents() {
    for text in [
        "0",
        "-0.5e+10",
        "1E-2",
        "true",
        " null ",
        "\"\"",
        "\"a\\u00e9\\ud83d\\ude00\\n\\\"\"",
        "{}",
        "[]",
        "[[],{}]",
        "{\"a\":{\"b\":[1,2,{\"c\":null}]},\"d\":\"x\"}",
        "\n\t{ \"a\" : [ 1 , 2 ] }\r\n",
        "\"é ☃ 😀\"",
    ] {
        assert!(JsonDoc::parse(Bytes::from(text)).is_ok(), "{text}");
    }
}

#[test]
fn counts_and_links_nodes() {
    let d = doc(r#"{"a":{"b":[1,2,{"c":null}]},"d":"x"}"#);
    assert_eq!(d.node_count(), 8);
    assert_eq!(d.heap_bytes(), 8 * 16, "16 bytes per node, no slack after parsing");
    assert_eq!(d.child_count(NodeId::ROOT), 2);
    let kids: Vec<_> = d.children(NodeId::ROOT).collect();
    assert_eq!(kids, vec![NodeId(1), NodeId(7)]);
    assert_eq!(d.key(NodeId(7)).as_deref(), Some("d"));
    assert_eq!(d.kind(NodeId(3)), Kind::Number);
    assert_eq!(d.kind(NodeId(5)), Kind::Object);
    assert_eq!(d.kind(NodeId(6)), Kind::Null);
    assert_eq!(d.depth(NodeId(6)), 4);
    assert_eq!(d.text(NodeId(1)), br#"{"b":[1,2,{"c":null}]}"#);
    assert_eq!(d.text(NodeId(2)), br#"[1,2,{"c":null}]"#);
    assert_eq!(d.text(NodeId(7)), br#""x""#);
    assert_eq!(d.text(NodeId::ROOT), d.body().as_ref());
    assert_eq!(d.raw_key(NodeId(1)), Some(&b"a"[..]));
    assert_eq!(d.key(NodeId(3)), None);
}

#[test]
fn text_of_containers_with_whitespace() {
    let d = doc("[ { \"a\" : [ 1 , [ ] ] } , 2 ]");
    assert_eq!(d.text(NodeId(1)), b"{ \"a\" : [ 1 , [ ] ] }");
    assert_eq!(d.text(NodeId(2)), b"[ 1 , [ ] ]");
    assert_eq!(d.text(NodeId(4)), b"[ ]");
    assert_eq!(d.text(NodeId(5)), b"2");
}

#[test]
fn reports_error_positions() {
    let e = err(b"{\"a\":1,\n  \"b\" 2}");
    assert_eq!((e.offset, e.line, e.column), (14, 2, 7));
    assert_eq!(e.kind, JsonErrorKind::Unexpected { found: '2', expected: "':'" });
    assert!(e.to_string().contains("line 2, column 7"), "{e}");

    let cases: &[(&[u8], usize, JsonErrorKind)] = &[
        (b"", 0, JsonErrorKind::Empty),
        (b"  \n ", 4, JsonErrorKind::Empty),
        (b"[1,]", 3, JsonErrorKind::Unexpected { found: ']', expected: "a value" }),
        (b"{\"a\":1,}", 7, JsonErrorKind::Unexpected { found: '}', expected: "a string key" }),
        (b"[1 2]", 3, JsonErrorKind::Unexpected { found: '2', expected: "',' or ']'" }),
        (b"[1", 2, JsonErrorKind::UnexpectedEnd("',' or ']'")),
        (b"\"abc", 4, JsonErrorKind::UnexpectedEnd("'\"'")),
        (b"\"a\\x\"", 2, JsonErrorKind::InvalidEscape),
        (b"\"\\u12g4\"", 1, JsonErrorKind::InvalidEscape),
        (b"\"a\tb\"", 2, JsonErrorKind::ControlCharacter),
        (b"01", 1, JsonErrorKind::InvalidNumber),
        (b"-", 1, JsonErrorKind::InvalidNumber),
        (b"1.", 2, JsonErrorKind::InvalidNumber),
        (b"1e+", 3, JsonErrorKind::InvalidNumber),
        (b"[.5]", 1, JsonErrorKind::Unexpected { found: '.', expected: "a value" }),
        (b"tru", 3, JsonErrorKind::UnexpectedEnd("'true'")),
        (b"nul1", 3, JsonErrorKind::Unexpected { found: '1', expected: "'null'" }),
        (b"{} x", 3, JsonErrorKind::TrailingData('x')),
        (b"[1] [2]", 4, JsonErrorKind::TrailingData('[')),
        (b"\"\xff\"", 1, JsonErrorKind::InvalidUtf8),
        (b"[\"ok\", \"\xc3\"]", 8, JsonErrorKind::InvalidUtf8),
        (b"{'a':1}", 1, JsonErrorKind::Unexpected { found: '\'', expected: "a string key" }),
    ];
    for (text, offset, kind) in cases {
        let e = err(text);
        assert_eq!((e.offset, &e.kind), (*offset, kind), "{:?}", String::from_utf8_lossy(text));
    }
    // An earlier syntax error wins over later bad UTF-8, and the other way round.
    assert_eq!(err(b"[x, \"\xff\"]").kind, JsonErrorKind::Unexpected { found: 'x', expected: "a value" });
    assert_eq!(err(b"[\"\xff\", x]").kind, JsonErrorKind::InvalidUtf8);
    // Columns count characters, not bytes.
    assert_eq!(err("\"é\" x".as_bytes()).column, 5);
}

#[test]
fn limits_depth_without_recursion() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(JsonDoc::parse(Bytes::from(ok)).is_ok());
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    let e = err(deep.as_bytes());
    assert_eq!((e.kind, e.offset), (JsonErrorKind::TooDeep, MAX_DEPTH));
    // Far deeper than any call stack would survive.
    let e = err("[".repeat(1_000_000).as_bytes());
    assert_eq!(e.kind, JsonErrorKind::TooDeep);
}

#[test]
fn previews_long_strings_without_decoding_them_all() {
    let long = "x".repeat(1_000_000);
    let d = doc(&format!("[\"{long}\",\"ü{long}\"]"));
    let p = d.scalar_preview(NodeId(1), 10);
    assert_eq!(p, format!("\"{}…", "x".repeat(10)));
    let p = d.scalar_preview(NodeId(2), 3);
    assert_eq!(p, "\"üxx…");
    assert_eq!(d.text(NodeId(2)).len(), long.len() + 4);
}

#[test]
fn pretty_prints_small_nodes_in_order() {
    let d = doc(r#"{"z":1,"a":{"s":"x,{y}:\"","e":[],"o":{}},"l":[true,null]}"#);
    let pretty = d.pretty(NodeId::ROOT, 1000).unwrap();
    let expected = "{\n  \"z\": 1,\n  \"a\": {\n    \"s\": \"x,{y}:\\\"\",\n    \"e\": [],\n    \"o\": {}\n  },\n  \"l\": [\n    true,\n    null\n  ]\n}";
    assert_eq!(pretty, expected);
    let reparsed: serde_json::Value = serde_json::from_str(&pretty).unwrap();
    let original: serde_json::Value = serde_json::from_slice(d.body()).unwrap();
    assert_eq!(reparsed, original);
    assert_eq!(d.pretty(NodeId::ROOT, 10), None);
}

#[test]
fn maps_offsets_to_nodes() {
    let d = doc(r#"{"a":[1,22],"bb":"x"}"#);
    assert_eq!(d.node_at(0), NodeId::ROOT);
    assert_eq!(d.node_at(1), NodeId(1)); // the key "a"
    assert_eq!(d.node_at(8), NodeId(3)); // inside 22
    assert_eq!(d.node_at(13), NodeId(4)); // the key "bb"
    assert_eq!(d.node_at(1000), NodeId(4));
}

use crate::sandbox::rng::Rng;

fn gen_value(rng: &mut Rng, depth: usize, out: &mut String) {
    let ws = |rng: &mut Rng, out: &mut String| {
        if rng.below(4) == 0 {
            out.push_str([" ", "\n  ", "\t", "\r\n"][rng.below(4) as usize]);
        }
    };
    let pick = if depth > 6 { rng.below(4) } else { rng.below(6) };
    match pick {
        0 => out.push_str(["true", "false", "null"][rng.below(3) as usize]),
        1 => out.push_str(["0", "-1", "3.25", "1e5", "-0.5E-3", "123456789", "2E+2"][rng.below(7) as usize]),
        2 | 3 => {
            out.push('"');
            for _ in 0..rng.below(6) {
                out.push_str(
                    ["a", "\\n", "\\\"", "é", "\\u00e9", "\\ud83d\\ude00", " ", "\\\\", "☃"][rng.below(9) as usize],
                );
            }
            out.push('"');
        }
        4 => {
            out.push('[');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                gen_value(rng, depth + 1, out);
                ws(rng, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                out.push_str(&format!("\"k{}\"", rng.below(100)));
                ws(rng, out);
                out.push(':');
                ws(rng, out);
                gen_value(rng, depth + 1, out);
            }
            out.push('}');
        }
    }
}

/// serde_json keeps one value per key, so count members from the text's point of view by
/// generating unique keys: duplicates are counted by position here.
fn serde_count(v: &serde_json::Value) -> usize {
    1 + match v {
        serde_json::Value::Array(items) => items.iter().map(serde_count).sum(),
        serde_json::Value::Object(map) => map.values().map(serde_count).sum(),
        _ => 0,
    }
}

#[test]
fn node_counts_match_serde_json_on_generated_documents() {
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut checked = 0;
    for _ in 0..400 {
        let mut text = String::new();
        gen_value(&mut rng, 0, &mut text);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let d = doc(&text);
        let has_duplicate_keys = (0..d.node_count() as u32).any(|i| {
            let keys: Vec<_> = d.children(NodeId(i)).filter_map(|c| d.key(c)).collect();
            let unique: HashSet<_> = keys.iter().collect();
            unique.len() != keys.len()
        });
        if !has_duplicate_keys {
            assert_eq!(d.node_count(), serde_count(&value), "{text}");
            checked += 1;
        }
        // Every node's text is itself a JSON value equal to serde's view of it.
        let root_text: serde_json::Value = serde_json::from_slice(d.text(NodeId::ROOT)).unwrap();
        assert_eq!(root_text, value);
        for i in 0..d.node_count() as u32 {
            let id = NodeId(i);
            assert!(serde_json::from_slice::<serde_json::Value>(d.text(id)).is_ok(), "{text} node {i}");
            if let Some(key) = d.key(id) {
                let raw = d.raw_key(id).unwrap();
                let quoted = format!("\"{}\"", String::from_utf8_lossy(raw));
                assert_eq!(serde_json::from_str::<String>(&quoted).unwrap(), key);
            }
        }
    }
    assert!(checked > 200);
}

#[test]
fn accepts_and_rejects_like_serde_json_on_mutations() {
    let mut rng = Rng::new(42);
    let alphabet = b"{}[],:\"\\ 0-1.eEtrufalsn\x01xu";
    for _ in 0..3000 {
        let mut text = String::new();
        gen_value(&mut rng, 0, &mut text);
        let mut bytes = text.into_bytes();
        for _ in 0..=rng.below(2) {
            if bytes.is_empty() {
                break;
            }
            let at = rng.below(bytes.len() as u64) as usize;
            match rng.below(3) {
                0 => bytes[at] = alphabet[rng.below(alphabet.len() as u64) as usize],
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, alphabet[rng.below(alphabet.len() as u64) as usize]),
            }
        }
        let ours = JsonDoc::parse(Bytes::from(bytes.clone()));
        let theirs = serde_json::from_slice::<serde_json::Value>(&bytes);
        if let (Ok(_), Err(e)) = (&ours, &theirs) {
            // serde_json also rejects lone surrogates (reported as a surrogate or as an
            // unfinished `\u` escape after one) and out-of-range numbers, which the grammar
            // allows; the index only validates the grammar.
            let msg = e.to_string();
            if ["surrogate", "hex escape", "out of range"].iter().any(|m| msg.contains(m)) {
                continue;
            }
        }
        assert_eq!(ours.is_ok(), theirs.is_ok(), "{:?}: {ours:?} vs {theirs:?}", String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn finds_the_records_of_every_list_shape() {
    let at = |text: &str| {
        let d = doc(text);
        d.records_at().map(|r| (r.key, d.children(r.array).count()))
    };
    assert_eq!(at(r#"[{"a":1},{"a":2}]"#), Some((None, 2)));
    assert_eq!(at(r#"{"@recordsetCount":2,"value":[{"id":1},{"id":2}]}"#), Some((Some("value".into()), 2)));
    assert_eq!(at(r#"{"paging":{},"items":[{"id":1}]}"#), Some((Some("items".into()), 1)));
    // The first array of objects, by its own name (EasyPost's plural resource names).
    assert_eq!(
        at(r#"{"tags":["a","b"],"shipments":[{"id":"shp_1"}],"has_more":false}"#),
        Some((Some("shipments".into()), 1))
    );
    // A lone array of bare ids.
    assert_eq!(at(r#"{"orders":["123","456","789"]}"#), Some((Some("orders".into()), 3)));
    assert_eq!(at(r#"{"rate":{"zip":"90002"}}"#), None);
    assert_eq!(at(r#""text""#), None);
    assert_eq!(doc(r#"[1,{"a":2},"x"]"#).records().map(|r| r.len()), Some(3));
}

#[test]
fn reads_members_by_key_escaped_or_not() {
    let d =
        doc(r#"{"idx":1,"id":"ch_\"1\"","i\u0064d":"escaped","nested":{"deep":{"n":-2.5e1}},"ok":true,"":"empty"}"#);
    let root = d.root();
    assert_eq!(root.get("id").and_then(Item::as_str).as_deref(), Some("ch_\"1\""), "not `idx`, a longer key");
    assert_eq!(root.get("idd").and_then(Item::as_str).as_deref(), Some("escaped"), "a key written with escapes");
    assert!(root.get("i").is_none() && root.get("missing").is_none());
    assert_eq!(root.path(&["nested", "deep", "n"]).and_then(Item::as_f64), Some(-25.0));
    assert_eq!(root.path(&["nested", "deep", "n"]).and_then(|n| n.literal()).as_deref(), Some("-2.5e1"));
    assert_eq!(root.get("ok").and_then(Item::literal).as_deref(), Some("true"));
    assert_eq!(root.get("").and_then(Item::as_str).as_deref(), Some("empty"));
    assert_eq!(root.get("idx").and_then(Item::as_i64), Some(1));
    assert_eq!(root.get("nested").map(Item::to_value), Some(serde_json::json!({"deep": {"n": -25.0}})));
    assert!(root.get("id").is_some_and(|id| id.get("x").is_none()), "a string has no members");
    let long = doc(&format!("[\"{}\"]", "ü".repeat(100_000)));
    let (text, cut) = long.item(NodeId(1)).str_prefix(5).unwrap();
    assert_eq!((text.as_str(), cut), ("üüüüü", true));
}

/// A body of many small values, for the progress, cancel and budget checks.
fn dense(values: usize) -> Bytes {
    let mut text = String::from("[0");
    text.push_str(&",0".repeat(values - 1));
    text.push(']');
    Bytes::from(text)
}

#[test]
fn progress_is_reported_and_a_cancelled_build_stops() {
    let body = dense(300_000);
    let watch = Watch::default();
    assert!(JsonDoc::parse_watched(body.clone(), &watch).is_ok());
    assert_eq!(watch.done(), body.len(), "a finished build reports the whole body");
    let watch = Watch::default();
    watch.cancel();
    let error = JsonDoc::parse_watched(body, &watch).unwrap_err();
    assert_eq!(error.kind, JsonErrorKind::Cancelled);
    assert!(watch.done() < 200_000, "it stopped at the first check, {} bytes in", watch.done());
}

#[test]
fn a_body_whose_index_would_outgrow_its_budget_is_refused_saying_so() {
    let body = dense(300_000);
    let error = JsonDoc::parse_within(body.clone(), &Watch::default(), 1024 * 1024).unwrap_err();
    assert!(matches!(error.kind, JsonErrorKind::TooManyValues { .. }), "{error}");
    assert!(error.to_string().contains("their index would need over 1 MB"), "{error}");
    // The default budget (twice the body plus 64 MB) takes it.
    assert!(JsonDoc::parse(body).is_ok());
}

#[test]
fn utf8_is_checked_a_stretch_at_a_time_across_the_whole_body() {
    let items: Vec<String> = (0..200_000).map(|i| format!("\"é{i}☃\"")).collect();
    let text = format!("[{}]", items.join(","));
    assert_eq!(JsonDoc::parse(Bytes::from(text.clone())).unwrap().node_count(), 200_001);
    for at in [10, text.len() / 2, text.len() - 12] {
        let mut bytes = text.clone().into_bytes();
        // Inside a string, where the grammar takes any byte but a quote, a backslash or a control.
        let at = (at..).find(|&i| bytes[i].is_ascii_digit()).unwrap();
        bytes[at] = 0xff;
        let error = JsonDoc::parse(Bytes::from(bytes)).unwrap_err();
        assert_eq!((error.kind, error.offset), (JsonErrorKind::InvalidUtf8, at));
    }
}

#[test]
fn pretty_print_reindents_and_keeps_every_token_as_sent() {
    let body = br#"{"a":[1,2.50,{}],"b":{"c":"x, y: {z}","d":[]},"e":"q\"}","n":1e400}"#;
    assert_eq!(
        super::pretty_print(body),
        "{\n  \"a\": [\n    1,\n    2.50,\n    {}\n  ],\n  \"b\": {\n    \"c\": \"x, y: {z}\",\n    \"d\": []\n  },\n  \"e\": \"q\\\"}\",\n  \"n\": 1e400\n}"
    );
    assert_eq!(super::pretty_print(b"[ ]"), "[]");
    assert_eq!(super::pretty_print(b" 42 "), "42");
}

#[test]
fn a_hinted_lookup_finds_what_get_finds_whatever_order_the_records_write_their_keys() {
    let d = doc(r#"[{"a":1,"b":{"c":2,"d":3},"e":4},{"e":5,"a":6,"b":{"d":7,"c":8}},{"b":{"c":9}},{"a":10},
           {"\u0061":11,"b":{"c":12}},{"b":[1]},"text",{"":13,"a":14}]"#);
    let records: Vec<NodeId> = d.children(NodeId::ROOT).collect();
    let paths: [&[&str]; 5] = [&["a"], &["b", "c"], &["b", "d"], &["e"], &[""]];
    for path in paths {
        let mut hints = Vec::new();
        for &record in &records {
            let item = d.item(record);
            let plain = item.path(path).map(|v| v.id);
            assert_eq!(
                item.path_hinted(path, &mut hints).map(|v| v.id),
                plain,
                "{path:?} in {}",
                String::from_utf8_lossy(d.text(record))
            );
        }
    }
    // Members, and only members, have keys: the flag the parser sets agrees with the structure.
    for id in (0..d.node_count()).map(|i| NodeId(i as u32)) {
        let in_object = d.parent(id).is_some_and(|p| d.kind(p) == Kind::Object);
        assert_eq!(d.has_key(id), in_object, "node {id:?}");
    }
}
