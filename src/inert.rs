//! Text from a server made safe to show on a terminal.
//!
//! A server is untrusted: a record named `\e]52;c;…\a` would set the user's clipboard and `\e[2J`
//! would clear the screen if printed as it is. Every string that reaches the terminal (the
//! console's cells, tree, raw view, status line, forms and dialogs; `opsdeck call`'s stderr and
//! terminal output) goes through [`inert`] first, which shows such characters instead of letting
//! the terminal act on them.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether the terminal would act on `c` rather than draw it: C0 controls (newline and tab
/// included: they break a cell or a line's layout), DEL, C1 controls, and the invisible
/// characters that reorder or split text (bidi overrides, embeddings and isolates, line and
/// paragraph separators).
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}'
    )
}

/// `text` with every [unsafe](is_unsafe) character made visible: a C0 control or DEL as its
/// Unicode control picture (`␛` for ESC, `␊` for a newline: one column, like the character a
/// well-behaved terminal would have drawn), anything else as `\u{…}`. Borrows when nothing needs
/// changing, which is the common case.
pub fn inert(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(is_unsafe) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        push_inert(&mut out, c);
    }
    Cow::Owned(out)
}

/// Like [`inert`], but keeps newlines (and makes a `\r\n` a plain newline): for multi-line text
/// such as an error body on stderr, where the lines are meant to be lines.
pub fn inert_lines(text: &str) -> Cow<'_, str> {
    if !text.contains(|c| is_unsafe(c) && c != '\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&inert(line.strip_suffix('\r').unwrap_or(line)));
    }
    Cow::Owned(out)
}

fn push_inert(out: &mut String, c: char) {
    match c {
        '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
        '\u{7f}' => out.push('\u{2421}'),
        c if is_unsafe(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// JSON text (as `serde_json` writes it) with the characters it leaves raw but a terminal would
/// act on (C1 controls, bidi overrides) written as `\uXXXX` escapes: the same JSON value, still
/// valid JSON, but inert. `serde_json` already escapes C0 controls.
pub fn inert_json(json: &str) -> Cow<'_, str> {
    if !json.contains(is_unsafe_outside_c0) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe_outside_c0(c) {
            // Every such character is in the BMP, so one \u escape spells it.
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Unsafe characters other than C0 controls: those `serde_json` leaves as they are. (Pretty
/// output's own newlines and indentation are C0 and must stay.)
fn is_unsafe_outside_c0(c: char) -> bool {
    is_unsafe(c) && c > '\u{1f}'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_interpreted() {
        assert_eq!(inert("\u{1b}]52;c;aGk=\u{7}"), "␛]52;c;aGk=␇");
        assert_eq!(inert("\u{1b}[2Jgone"), "␛[2Jgone");
        assert_eq!(inert("a\nb\tc\rd"), "a␊b␉c␍d");
        assert_eq!(inert("del\u{7f}"), "del␡");
    }

    #[test]
    fn c1_and_bidi_are_spelled_out() {
        assert_eq!(inert("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(inert("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(inert("\u{2067}x\u{2069}"), "\\u{2067}x\\u{2069}");
    }

    #[test]
    fn ordinary_text_is_borrowed_untouched() {
        for text in ["orders:eu", "注文.作成", "émoji 🎉", ""] {
            assert!(matches!(inert(text), Cow::Borrowed(t) if t == text));
        }
    }

    #[test]
    fn lines_keep_their_newlines_only() {
        assert_eq!(inert_lines("one\r\ntwo\u{1b}[31m\nthree"), "one\ntwo␛[31m\nthree");
        assert!(matches!(inert_lines("a\nb"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_stays_the_same_valid_json() {
        let value = serde_json::json!({"name": "\u{1b}]52;c;x\u{7}\u{9b}\u{202e}ok", "n": 1});
        let text = serde_json::to_string_pretty(&value).unwrap();
        let safe = inert_json(&text);
        assert!(!safe.contains(is_unsafe_outside_c0), "{safe}");
        assert!(!safe.chars().any(|c| is_unsafe(c) && c != '\n'), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn random_text_never_keeps_an_unsafe_character() {
        let mut rng = crate::sandbox::rng::Rng::new(7);
        for _ in 0..2000 {
            let text: String = (0..rng.below(40))
                .filter_map(|_| char::from_u32(u32::try_from(rng.below(0x2100)).unwrap_or(0)))
                .collect();
            let shown = inert(&text);
            assert!(!shown.chars().any(is_unsafe), "{text:?} -> {shown:?}");
        }
    }
}
