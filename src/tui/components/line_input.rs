//! One behaviour for every place text is typed: the row filter, the inspector's search and jq
//! prompts, the menus' filters, the palette, form fields, the save path and the confirmation.
//!
//! While an input has focus every printable key is text; only keys that cannot be text (Enter,
//! Esc, Tab, arrows, Ctrl- and Alt- chords) edit or act. [`edit_for`] says which edit a key
//! asks for, so the multi-line form fields (a `tui-textarea`) follow the same keys as
//! [`LineInput`].

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

use crate::inert::is_unsafe;

/// What a key asks of a line of text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    Insert(char),
    /// Backspace, Ctrl-h.
    DeleteBack,
    /// Delete, Ctrl-d.
    DeleteForward,
    /// Ctrl-w, Alt-Backspace.
    DeleteWordBack,
    /// Alt-d.
    DeleteWordForward,
    /// Ctrl-u.
    DeleteToStart,
    /// Ctrl-k.
    DeleteToEnd,
    /// Left, Ctrl-b.
    Left,
    /// Right, Ctrl-f.
    Right,
    /// Alt-b, Ctrl-Left.
    WordLeft,
    /// Alt-f, Ctrl-Right.
    WordRight,
    /// Home, Ctrl-a.
    Start,
    /// End, Ctrl-e.
    End,
}

/// The keys every input shares, for the help overlays.
pub const HELP: &[(&str, &str)] = &[
    ("← → ^b ^f", "move by a character"),
    ("M-b M-f ^← ^→", "move by a word"),
    ("Home End ^a ^e", "start and end of the line"),
    ("^u ^k", "delete to the start, to the end"),
    ("^w M-Backspace M-d", "delete a word"),
];

/// Whether `key` is text: a character with no Ctrl or Alt (Shift is part of the character), and
/// one that can be shown.
pub fn is_text(key: &KeyEvent) -> bool {
    matches!(key.code, KeyCode::Char(c) if !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) && !is_unsafe(c))
}

/// The edit `key` asks for, or `None` when it is no editing key (Enter, Esc, Tab, Up, Down and
/// chords of their own are left to the input's owner).
pub fn edit_for(key: &KeyEvent) -> Option<Edit> {
    if is_text(key) {
        let KeyCode::Char(c) = key.code else { return None };
        return Some(Edit::Insert(c));
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    Some(match key.code {
        KeyCode::Backspace if alt || ctrl => Edit::DeleteWordBack,
        KeyCode::Backspace => Edit::DeleteBack,
        KeyCode::Delete => Edit::DeleteForward,
        KeyCode::Left if ctrl || alt => Edit::WordLeft,
        KeyCode::Right if ctrl || alt => Edit::WordRight,
        KeyCode::Left => Edit::Left,
        KeyCode::Right => Edit::Right,
        KeyCode::Home => Edit::Start,
        KeyCode::End => Edit::End,
        KeyCode::Char(c) if ctrl && !alt => match c {
            'h' => Edit::DeleteBack,
            'd' => Edit::DeleteForward,
            'w' => Edit::DeleteWordBack,
            'u' => Edit::DeleteToStart,
            'k' => Edit::DeleteToEnd,
            'b' => Edit::Left,
            'f' => Edit::Right,
            'a' => Edit::Start,
            'e' => Edit::End,
            _ => return None,
        },
        KeyCode::Char(c) if alt && !ctrl => match c {
            'b' => Edit::WordLeft,
            'f' => Edit::WordRight,
            'd' => Edit::DeleteWordForward,
            _ => return None,
        },
        _ => return None,
    })
}

/// A line of text being typed and the cursor in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineInput {
    text: String,
    /// A byte offset on a character boundary.
    cursor: usize,
}

impl LineInput {
    /// `text` (made typeable: unsafe characters and newlines dropped) with the cursor at its end.
    pub fn new(text: &str) -> LineInput {
        let mut input = LineInput::default();
        input.insert_str(text);
        input
    }

    /// `text` as it is, with the cursor before its `column`th character (at the end when past it):
    /// a line of a larger editor, edited with these keys.
    pub fn at(text: &str, column: usize) -> LineInput {
        let cursor = text.char_indices().nth(column).map_or(text.len(), |(i, _)| i);
        LineInput { text: text.to_owned(), cursor }
    }

    /// The cursor as a count of characters before it.
    pub fn column(&self) -> usize {
        self.text[..self.cursor].chars().count()
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text; the cursor goes to its end.
    pub fn set(&mut self, text: &str) {
        *self = LineInput::new(text);
    }

    pub fn clear(&mut self) {
        *self = LineInput::default();
    }

    /// The text, leaving the input empty.
    pub fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    /// Pasted or given text at the cursor: characters that cannot be shown are dropped, and a
    /// line break becomes a space (a single line has none).
    pub fn insert_str(&mut self, text: &str) {
        for c in text.chars() {
            match c {
                '\n' | '\r' | '\t' => self.insert(' '),
                c if is_unsafe(c) => {}
                c => self.insert(c),
            }
        }
    }

    fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Applies the edit `key` asks for; false when `key` is no editing key, so its owner handles it.
    /// A key that edits nothing here (Backspace at the start) is still taken.
    pub fn handle_key(&mut self, key: &KeyEvent) -> bool {
        match edit_for(key) {
            Some(edit) => {
                self.apply(edit);
                true
            }
            None => false,
        }
    }

    pub fn apply(&mut self, edit: Edit) {
        match edit {
            Edit::Insert(c) => self.insert(c),
            Edit::DeleteBack => {
                let start = self.char_left();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            Edit::DeleteForward => {
                let end = self.char_right();
                self.text.replace_range(self.cursor..end, "");
            }
            Edit::DeleteWordBack => {
                let start = self.word_left();
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            Edit::DeleteWordForward => {
                let end = self.word_right();
                self.text.replace_range(self.cursor..end, "");
            }
            Edit::DeleteToStart => {
                self.text.replace_range(..self.cursor, "");
                self.cursor = 0;
            }
            Edit::DeleteToEnd => self.text.truncate(self.cursor),
            Edit::Left => self.cursor = self.char_left(),
            Edit::Right => self.cursor = self.char_right(),
            Edit::WordLeft => self.cursor = self.word_left(),
            Edit::WordRight => self.cursor = self.word_right(),
            Edit::Start => self.cursor = 0,
            Edit::End => self.cursor = self.text.len(),
        }
    }

    fn char_left(&self) -> usize {
        self.text[..self.cursor].char_indices().next_back().map_or(0, |(i, _)| i)
    }

    fn char_right(&self) -> usize {
        self.text[self.cursor..].chars().next().map_or(self.cursor, |c| self.cursor + c.len_utf8())
    }

    /// The start of the word before the cursor (spaces before it skipped), as shells do.
    fn word_left(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches(|c: char| !is_word(c));
        trimmed.rfind(|c: char| !is_word(c)).map_or(0, |i| i + trimmed[i..].chars().next().map_or(1, char::len_utf8))
    }

    /// The end of the word after the cursor.
    fn word_right(&self) -> usize {
        let after = &self.text[self.cursor..];
        let skipped = after.len() - after.trim_start_matches(|c: char| !is_word(c)).len();
        let rest = &after[skipped..];
        self.cursor + skipped + rest.find(|c: char| !is_word(c)).unwrap_or(rest.len())
    }

    /// The text as spans fitting `width` columns, the cursor drawn on the character under it (a
    /// block after the end): text scrolls left so the cursor is always in view.
    pub fn spans(&self, width: usize, style: Style, cursor: Style) -> Vec<Span<'static>> {
        let width = width.max(1);
        let (before, after) = self.text.split_at(self.cursor);
        let mut under = after.chars();
        let at = under.next();
        let at_text = at.map_or(" ".to_owned(), String::from);
        let at_width = at.and_then(UnicodeWidthChar::width).unwrap_or(1).max(1);
        // Keep as much of the text before the cursor as fits with the cursor itself.
        let room = width.saturating_sub(at_width);
        let (reversed, used) = super::fit_chars(before.chars().rev(), room);
        let shown_before: String = reversed.chars().rev().collect();
        let (shown_after, _) = super::fit_chars(under, width.saturating_sub(used + at_width));
        vec![Span::styled(shown_before, style), Span::styled(at_text, cursor), Span::styled(shown_after, style)]
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn typed(text: &str) -> LineInput {
        let mut input = LineInput::default();
        for c in text.chars() {
            assert!(input.handle_key(&key(KeyCode::Char(c), KeyModifiers::NONE)), "{c:?} is text");
        }
        input
    }

    #[test]
    fn every_printable_ascii_character_is_text() {
        let all: String = (' '..='~').collect();
        assert_eq!(typed(&all).text(), all);
        // Shift is part of the character: crossterm reports `A` with SHIFT.
        let mut input = LineInput::default();
        input.handle_key(&key(KeyCode::Char('A'), KeyModifiers::SHIFT));
        assert_eq!(input.text(), "A");
    }

    #[test]
    fn line_editing_keys() {
        let ctrl = |c| key(KeyCode::Char(c), KeyModifiers::CONTROL);
        let alt = |c| key(KeyCode::Char(c), KeyModifiers::ALT);
        let mut input = typed(".status.occupancy | keys");
        input.handle_key(&ctrl('w'));
        assert_eq!(input.text(), ".status.occupancy | ");
        input.handle_key(&alt('b'));
        input.handle_key(&alt('b'));
        input.handle_key(&typed_key('x'));
        assert_eq!(input.text(), ".xstatus.occupancy | ");
        input.handle_key(&ctrl('e'));
        input.handle_key(&typed_key('k'));
        assert_eq!(input.text(), ".xstatus.occupancy | k");
        input.handle_key(&ctrl('a'));
        input.handle_key(&key(KeyCode::Delete, KeyModifiers::NONE));
        assert_eq!(input.text(), "xstatus.occupancy | k");
        input.handle_key(&alt('f'));
        input.handle_key(&ctrl('k'));
        assert_eq!(input.text(), "xstatus");
        input.handle_key(&key(KeyCode::Left, KeyModifiers::NONE));
        input.handle_key(&ctrl('u'));
        assert_eq!(input.text(), "s");
        input.handle_key(&key(KeyCode::End, KeyModifiers::NONE));
        input.handle_key(&key(KeyCode::Backspace, KeyModifiers::NONE));
        assert!(input.is_empty());
        // Backspace at the start is taken and does nothing.
        assert!(input.handle_key(&key(KeyCode::Backspace, KeyModifiers::NONE)));
        // Keys that are no edit are left to the owner.
        assert!(!input.handle_key(&key(KeyCode::Enter, KeyModifiers::NONE)));
        assert!(!input.handle_key(&ctrl('s')));
    }

    fn typed_key(c: char) -> KeyEvent {
        key(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn multibyte_text_edits_by_character() {
        let mut input = typed("día ✓");
        input.handle_key(&key(KeyCode::Backspace, KeyModifiers::NONE));
        input.handle_key(&key(KeyCode::Left, KeyModifiers::NONE));
        input.handle_key(&key(KeyCode::Left, KeyModifiers::NONE));
        input.handle_key(&key(KeyCode::Backspace, KeyModifiers::NONE));
        assert_eq!(input.text(), "da ");
    }

    #[test]
    fn pasted_text_is_one_line_of_showable_characters() {
        let mut input = LineInput::new("a");
        input.insert_str("b\nc\u{1b}[31md\u{202e}");
        assert_eq!(input.text(), "ab c[31md");
    }

    #[test]
    fn a_long_line_scrolls_to_keep_the_cursor_in_view() {
        let input = typed("abcdefghij");
        let text: String =
            input.spans(5, Style::default(), Style::default()).iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "ghij ");
        let mut input = input;
        input.apply(Edit::Start);
        let text: String =
            input.spans(5, Style::default(), Style::default()).iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "abcde");
    }
}
