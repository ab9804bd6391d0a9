//! The form of one operation, built from its catalog entry: a text area per parameter, checked
//! against the parameter's rules before anything is sent.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use tui_textarea::{CursorMove, TextArea};
use unicode_width::UnicodeWidthStr;

use crate::catalog::{items, join_items, validate, Kind, Location, Operation, Param, ITEM_SEPARATOR};
use crate::client::Values;
use crate::inert::{inert, inert_lines};
use crate::tui::components::line_input::{edit_for, Edit, LineInput};
use crate::tui::components::line_items::{LineItemsAction, LineItemsEditor};
use crate::tui::theme::Theme;

/// The field TaxJar's item lists travel in, which Ctrl-e edits as a table.
const LINE_ITEMS: &str = "line_items";

/// What a key did in the form.
#[derive(Debug, PartialEq, Eq)]
pub enum FormAction {
    None,
    /// Every value is valid: send the operation with these values.
    Submit(Values),
    Cancel,
    /// Edit a JSON field in `$VISUAL`/`$EDITOR`: the event loop leaves the screen, runs it on
    /// this text and gives the result back with [`Form::apply_edit`].
    Edit(EditRequest),
}

/// A field's text to edit outside the console.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditRequest {
    /// The parameter's name, where the edited text goes back.
    pub field: String,
    pub text: String,
}

/// The editor to run: `$VISUAL`, else `$EDITOR`, else `vi` (as git and crontab choose).
pub fn editor_command(env: &dyn Fn(&str) -> Option<String>) -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| env(name))
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".to_owned())
}

/// Runs `editor` on a private temporary file holding `text` and returns what the file holds
/// when it exits 0. The editor may carry arguments (`code --wait`); it gets the terminal. The
/// file is removed whatever happens. An error says why the old text stays.
pub fn run_editor(editor: &str, text: &str) -> Result<String, String> {
    use std::io::Write as _;
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("opsdeck-field-{}-{n}.json", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let written = options.open(&path).and_then(|mut file| file.write_all(text.as_bytes()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&path);
        return Err(format!("could not write a temporary file for the editor: {e}"));
    }
    // `sh -c '$EDITOR "$1"'`: the editor's own words split as the shell splits them, the path
    // passed as one argument whatever it holds.
    let status =
        std::process::Command::new("sh").arg("-c").arg(format!("{editor} \"$1\"")).arg("sh").arg(&path).status();
    let result = match status {
        Ok(status) if status.success() => {
            std::fs::read_to_string(&path).map_err(|e| format!("could not read the edited file back: {e}"))
        }
        Ok(status) => Err(format!("the editor `{editor}` failed ({status})")),
        Err(e) => Err(format!("the editor `{editor}` did not start: {e}")),
    };
    let _ = std::fs::remove_file(&path);
    result
}

struct Field {
    param: &'static Param,
    /// A text field typed over several lines (its service says so): Enter starts a new line.
    text_lines: bool,
    input: TextArea<'static>,
    error: Option<String>,
    /// A pre-filled value that holds control characters is shown inert (`␛` for ESC); this is
    /// the value as it was, sent as long as the shown text is left as it is.
    prefilled: Option<Prefilled>,
    /// The catalog's shape the field started from (pretty-printed): left as it is, it is no
    /// value the user chose, so it is never sent.
    template: Option<String>,
    /// For a parameter with a fixed set of values (a side, a time in force): the one chosen, a
    /// `‹ ›` selector moved with ← →; the text typed finds one (`input` holds it).
    chosen: Option<usize>,
}

struct Prefilled {
    shown: String,
    value: String,
}

/// Whether a parameter's field holds JSON: JSON and data, and a family (`h:`), edited as one
/// object of names and values.
fn is_json(param: &Param) -> bool {
    matches!(param.kind, Kind::Json | Kind::Data) || param.family.is_some()
}

/// Whether a field keeps line breaks: JSON, and files (one path per line).
fn takes_lines(param: &Param) -> bool {
    is_json(param) || param.kind == Kind::File
}

/// Whether a parameter is a choice among fixed (or suggested) values, shown as a `‹ ›` selector.
fn is_choice(param: &Param) -> bool {
    !param.choices().is_empty() && !param.repeatable()
}

/// The value of `choices` that `typed` finds: the first that starts with it, else the first that
/// holds it, ignoring case; none for empty text.
fn find_choice(choices: &[&str], typed: &str) -> Option<usize> {
    let typed = typed.trim().to_lowercase();
    if typed.is_empty() {
        return None;
    }
    let lower: Vec<String> = choices.iter().map(|c| c.to_lowercase()).collect();
    lower.iter().position(|c| c.starts_with(&typed)).or_else(|| lower.iter().position(|c| c.contains(&typed)))
}

impl Field {
    /// The typed text found a choice again (after a key edited it).
    fn refind_choice(&mut self) {
        if is_choice(self.param) {
            self.chosen = find_choice(self.param.choices(), &self.input.lines().join(""));
        }
    }

    /// ← → on a selector: the next or previous value, the typed text cleared; from none, the
    /// first or last.
    fn step_choice(&mut self, forward: bool) {
        let count = self.param.choices().len();
        self.chosen = Some(match (self.chosen, forward) {
            (None, true) => 0,
            (None, false) => count - 1,
            (Some(i), true) => (i + 1) % count,
            (Some(i), false) => (i + count - 1) % count,
        });
        self.input = TextArea::default();
        self.prefilled = None;
        self.error = None;
    }

    /// Whether the field keeps line breaks: JSON, files, and text its service types over lines.
    fn takes_lines(&self) -> bool {
        takes_lines(self.param) || self.text_lines
    }

    /// Whether the arrows move in the field's text rather than between fields.
    fn moves_in_text(&self) -> bool {
        is_json(self.param) || self.text_lines
    }

    /// The field's value as [`Values`] hold it: the text, with a file field's lines as the items
    /// of one value (a family's JSON is expanded by [`Form::values`]).
    fn value(&self) -> String {
        if let Some(chosen) = self.chosen {
            return self.param.choices()[chosen].to_owned();
        }
        let text = self.input.lines().join("\n");
        if self.template.as_ref() == Some(&text) {
            return String::new();
        }
        if let Some(prefilled) = self.prefilled.as_ref().filter(|p| p.shown == text) {
            return prefilled.value.clone();
        }
        if is_json(self.param) {
            text.trim().to_owned()
        } else if self.param.kind == Kind::File {
            let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            join_items(lines.iter().copied()).unwrap_or_else(|_| lines.join(" "))
        } else {
            text
        }
    }

    /// What is wrong with the field's value, if anything: a family's object is expanded and
    /// each name and value checked; a file field names the path that cannot be read.
    fn problem(&self) -> Option<String> {
        if self.template.as_ref().is_some_and(|t| *t == self.input.lines().join("\n")) {
            return Some("fill in the template's values (it is only the shape)".into());
        }
        let value = self.value();
        if self.param.family.is_none() || value.is_empty() {
            return validate::check_value(self.param, &value).err();
        }
        let parsed: serde_json::Value = match serde_json::from_str(&value) {
            Ok(parsed) => parsed,
            Err(e) => return Some(format!("invalid JSON: {e}")),
        };
        validate::expand_family(self.param, &parsed).err()
    }

    /// Rows the input takes: JSON gets room to breathe, files a row per path.
    fn input_height(&self) -> u16 {
        if is_json(self.param) {
            u16::try_from(self.input.lines().len().clamp(2, 12)).unwrap_or(12)
        } else if self.text_lines {
            u16::try_from(self.input.lines().len().clamp(3, 8)).unwrap_or(8)
        } else if self.param.kind == Kind::File {
            u16::try_from(self.input.lines().len().clamp(1, 4)).unwrap_or(4)
        } else {
            1
        }
    }
}

/// The text a field shows for a pre-filled value: a family's values (`h:X-Ticket=42`, from a
/// draft or a recorded call) collapsed into one JSON object, a file's paths one per line, a
/// list's items comma-separated. `None` when nothing is pre-filled.
fn prefill_text(op: &Operation, param: &Param, prefill: &Values) -> Option<String> {
    if param.family.is_some() {
        let pairs = prefill.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        // A draft whose object did not parse kept its text under the prefix itself.
        return validate::family_object(op, param, pairs).or_else(|| prefill.get(param.name).cloned());
    }
    let value = prefill.get(param.name)?;
    Some(match param.kind {
        Kind::File => items(param, value).join("\n"),
        Kind::List if value.contains(ITEM_SEPARATOR) => items(param, value).join(", "),
        _ => value.clone(),
    })
}

/// Applies what `key` asks of a field's text, with the keys of every single-line input
/// ([`edit_for`]) and, in a field of several lines, Enter for a new line. False when the key
/// edits nothing.
fn edit_text(input: &mut TextArea<'static>, key: &KeyEvent, lines: bool) -> bool {
    let Some(edit) = edit_for(key) else {
        if lines && key.code == KeyCode::Enter && key.modifiers.is_empty() {
            input.insert_newline();
            return true;
        }
        return false;
    };
    let (row, column) = input.cursor();
    let line = input.lines().get(row).cloned().unwrap_or_default();
    let (at_start, at_end) = (column == 0, column >= line.chars().count());
    match edit {
        // Across a line break: the text area's own moves and deletes join or cross lines.
        Edit::DeleteBack if at_start => {
            input.delete_char();
        }
        Edit::DeleteForward if at_end => {
            input.delete_next_char();
        }
        Edit::Left if at_start => input.move_cursor(CursorMove::Back),
        Edit::Right if at_end => input.move_cursor(CursorMove::Forward),
        // Within the line: exactly as in every single-line input.
        _ => {
            let mut edited = LineInput::at(&line, column);
            edited.apply(edit);
            if edited.text() != line {
                input.move_cursor(CursorMove::Head);
                if !line.is_empty() {
                    input.delete_line_by_end();
                }
                input.insert_str(edited.text());
            }
            let to = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
            input.move_cursor(CursorMove::Jump(to(row), to(edited.column())));
        }
    }
    true
}

/// An open form.
pub struct Form {
    pub op: &'static Operation,
    fields: Vec<Field>,
    focused: usize,
    /// `LIVE` or `SANDBOX` and the base URL, shown in the title so the target is never in doubt.
    target_label: String,
    /// Set after a failed submit, so the user sees why nothing was sent.
    pub message: Option<String>,
    /// The table editor of a `line_items` field, while open.
    line_items: Option<LineItemsEditor>,
    /// What the service says of the values so far (an order's estimated cost and hold), shown
    /// under the summary and kept current by the app as the user types.
    pub notes: Vec<String>,
    /// What the last Tab in a file field found (the names a path could go on with), shown in
    /// the bottom border until the next key.
    pub hint: Option<String>,
}

impl Form {
    /// A form for `op`, with fields pre-filled from `prefill` (the selected record and context).
    pub fn new(op: &'static Operation, prefill: &Values, target_label: String) -> Form {
        Form::with_text_lines(op, prefill, target_label, &[])
    }

    /// A form for `op` whose text fields named in `text_lines` are typed over several lines
    /// (a text to analyze), as its service says.
    pub fn with_text_lines(
        op: &'static Operation,
        prefill: &Values,
        target_label: String,
        text_lines: &[&str],
    ) -> Form {
        let fields = op
            .params
            .iter()
            .map(|param| {
                let given = prefill_text(op, param, prefill);
                // A required JSON field nobody filled starts from its shape, over several lines.
                let template = match (&given, param.template) {
                    (None, Some(shape)) if param.required => Some(crate::json_index::pretty_print(shape.as_bytes())),
                    _ => None,
                };
                let text = given.or_else(|| template.clone()).unwrap_or_default();
                // The value the untouched text stands for: what was given, items and all.
                let value = match prefill.get(param.name) {
                    Some(given) if param.family.is_none() => given.clone(),
                    _ => text.clone(),
                };
                let lines = text_lines.contains(&param.name);
                let shown = if takes_lines(param) || lines { inert_lines(&text) } else { inert(&text) };
                let mut input = TextArea::new(shown.lines().map(str::to_owned).collect());
                if input.lines().is_empty() {
                    input = TextArea::default();
                }
                let shown = input.lines().join("\n");
                let prefilled = (shown != value).then_some(Prefilled { shown, value });
                // In a shape, the cursor waits in its first empty value; elsewhere at the end.
                let first_blank = template
                    .as_ref()
                    .and(input.lines().iter().enumerate().find_map(|(row, line)| Some((row, line.find("\"\"")?))));
                match first_blank {
                    Some((row, at)) => {
                        let column = input.lines()[row][..at].chars().count() + 1;
                        let to = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
                        input.move_cursor(CursorMove::Jump(to(row), to(column)));
                    }
                    // A value over several lines opens at its start, as an editor opens a file; a
                    // one-line value waits at its end, where typing adds to it.
                    None if takes_lines(param) || lines => input.move_cursor(CursorMove::Top),
                    None => {
                        input.move_cursor(CursorMove::Bottom);
                        input.move_cursor(CursorMove::End);
                    }
                }
                input.set_cursor_line_style(ratatui::style::Style::default());
                let mut hint = param.default.map(|d| format!("default {d}")).unwrap_or_default();
                if !param.allowed.is_empty() {
                    hint = format!("one of {}", param.allowed.join(" | "));
                }
                if let Some(family) = param.family {
                    hint = format!("{{\"{}\": \"…\"}} sent as {}{}=…", family.example(), param.name, family.example());
                } else if param.kind == Kind::File {
                    hint = "a file path (Tab completes); Enter for another line, one path per line".to_owned();
                } else if lines {
                    hint = "text over several lines: Enter starts a new line, Tab goes to the next field".to_owned();
                }
                input.set_placeholder_text(hint);
                // A pre-filled choice is chosen; a value outside the set stays as text, marked
                // when checked, never dropped.
                let chosen = is_choice(param).then(|| param.choices().iter().position(|c| *c == text)).flatten();
                if chosen.is_some() {
                    input = TextArea::default();
                }
                Field { param, text_lines: lines, input, error: None, prefilled, template, chosen }
            })
            .collect();
        Form { op, fields, focused: 0, target_label, message: None, line_items: None, notes: Vec::new(), hint: None }
    }

    /// The values typed so far, non-empty ones only, as the client takes them: a family's JSON
    /// object expanded to one value per name (`{"X-Ticket":"42"}` → `h:X-Ticket=42`). An object
    /// that does not expand stays as text under the prefix, so a draft keeps it and sending it
    /// is refused with the reason.
    pub fn values(&self) -> Values {
        let mut values = Values::new();
        for field in &self.fields {
            let value = field.value();
            if value.is_empty() {
                continue;
            }
            let expanded = field
                .param
                .family
                .and_then(|_| serde_json::from_str(&value).ok())
                .and_then(|object| validate::expand_family(field.param, &object).ok());
            match expanded {
                Some(pairs) => values.extend(pairs),
                None => {
                    values.insert(field.param.name.to_owned(), value);
                }
            }
        }
        values
    }

    /// Checks every field, marking each bad one; true when all are valid. The files of all
    /// fields together are checked against the operation's limit too.
    pub fn validate(&mut self) -> bool {
        let mut ok = true;
        for field in &mut self.fields {
            field.error = field.problem();
            ok &= field.error.is_none();
        }
        if let (true, Some(limit)) = (ok, self.op.max_file_bytes) {
            let values = self.values();
            let given: Vec<(&str, &str)> = values.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            if let Some((name, problem)) = validate::check_file_total(self.op, &given, limit) {
                if let Some(field) = self.fields.iter_mut().find(|f| f.param.name == name) {
                    field.error = Some(problem);
                    ok = false;
                }
            }
        }
        self.message = (!ok).then(|| "fix the marked fields; nothing was sent".to_owned());
        ok
    }

    /// Sets the text of a field (used by tests and by the app for pre-filling).
    pub fn set_value(&mut self, name: &str, value: &str) {
        if let Some(field) = self.fields.iter_mut().find(|f| f.param.name == name) {
            field.input = TextArea::new(value.lines().map(str::to_owned).collect());
            field.input.move_cursor(CursorMove::End);
            field.prefilled = None;
            field.chosen =
                is_choice(field.param).then(|| field.param.choices().iter().position(|c| *c == value)).flatten();
            if field.chosen.is_some() {
                field.input = TextArea::default();
            }
        }
    }

    /// Whether the focused field keeps line breaks (JSON and data, and files: a path per line).
    pub fn focused_takes_lines(&self) -> bool {
        self.fields.get(self.focused).is_some_and(Field::takes_lines)
    }

    /// Pasted text goes into the focused field at the cursor; a one-line field gets it on one
    /// line. The caller has already taken out what a terminal would act on.
    pub fn paste(&mut self, text: &str) {
        if let Some(editor) = self.line_items.as_mut() {
            return editor.paste(&text.replace('\n', " "));
        }
        let Some(field) = self.fields.get_mut(self.focused) else { return };
        // A whole value pasted over the untouched shape replaces it.
        if field.template.as_ref().is_some_and(|t| *t == field.input.lines().join("\n")) {
            field.input.select_all();
            field.input.cut();
        }
        if field.takes_lines() {
            field.input.insert_str(text);
        } else {
            field.input.insert_str(text.replace('\n', " "));
        }
        field.refind_choice();
        field.error = None;
    }

    /// Marks a field with a problem found beyond its own rules (by its service), shown beside it.
    pub fn mark(&mut self, name: &str, problem: String) {
        if let Some(field) = self.fields.iter_mut().find(|f| f.param.name == name) {
            field.error = Some(problem);
        }
    }

    pub fn error_of(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|f| f.param.name == name).and_then(|f| f.error.as_deref())
    }

    /// The edited text of `request` comes back: it replaces the field (checked at once, so
    /// JSON that does not parse is marked as a submit would); a failed editor leaves it as it was.
    pub fn apply_edit(&mut self, request: &EditRequest, result: Result<String, String>) {
        let Some(index) = self.fields.iter().position(|f| f.param.name == request.field) else { return };
        match result {
            Ok(text) => {
                let text = text.trim_end_matches(['\n', '\r']);
                self.set_value(&request.field, text);
                let field = &mut self.fields[index];
                field.error = if field.value().is_empty() { None } else { field.problem() };
                self.focused = index;
                self.message =
                    field.error.as_ref().map(|_| format!("{} was edited; fix the marked JSON", request.field));
            }
            Err(why) => self.message = Some(format!("{why}; {} keeps its text", request.field)),
        }
    }

    /// The focused field, when it holds JSON (or data that may be JSON).
    fn focused_json(&self) -> Option<&Field> {
        self.fields.get(self.focused).filter(|f| is_json(f.param))
    }

    fn edit_request(&self) -> Option<EditRequest> {
        let field = self.focused_json()?;
        Some(EditRequest { field: field.param.name.to_owned(), text: field.input.lines().join("\n") })
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> FormAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        if let Some(editor) = self.line_items.as_mut() {
            match editor.handle_key(key) {
                LineItemsAction::Done(json) => {
                    self.line_items = None;
                    self.set_value(LINE_ITEMS, &json);
                    if let Some(field) = self.fields.iter_mut().find(|f| f.param.name == LINE_ITEMS) {
                        field.error = None;
                    }
                }
                LineItemsAction::Cancel => self.line_items = None,
                LineItemsAction::None => {}
            }
            return FormAction::None;
        }
        let on_line_items = self.focused_json().is_some_and(|f| f.param.name == LINE_ITEMS);
        self.hint = None;
        let on_file = self.fields.get(self.focused).is_some_and(|f| f.param.kind == Kind::File);
        match key.code {
            // In a file field, Tab completes the path of the line being typed; with nothing to
            // complete it goes to the next field, as everywhere.
            KeyCode::Tab if on_file && key.modifiers.is_empty() => {
                if !self.complete_path() {
                    self.move_focus(1);
                }
            }
            // Alt-e: any JSON field in $EDITOR, line_items included.
            KeyCode::Char('e') if alt => match self.edit_request() {
                Some(request) => return FormAction::Edit(request),
                None => self.message = Some("Alt-e edits a JSON field in $EDITOR; Tab to one first".into()),
            },
            // Ctrl-e: a JSON field in $EDITOR, except line_items, which is edited as a table.
            KeyCode::Char('e') if ctrl && !on_line_items && self.focused_json().is_some() => {
                if let Some(request) = self.edit_request() {
                    return FormAction::Edit(request);
                }
            }
            KeyCode::Char('e') if ctrl => {
                // From any other field: the table editor of the form's line_items field.
                match self.fields.iter().position(|f| f.param.name == LINE_ITEMS && f.param.kind == Kind::Json) {
                    Some(index) => {
                        self.focused = index;
                        self.open_line_items();
                    }
                    None => {
                        self.message = Some("Ctrl-e edits the focused JSON field in $EDITOR; Tab to one first".into());
                    }
                }
            }
            KeyCode::Char('s') if ctrl => {
                if self.validate() {
                    return FormAction::Submit(self.values());
                }
                if let Some(first_bad) = self.fields.iter().position(|f| f.error.is_some()) {
                    self.focused = first_bad;
                }
            }
            KeyCode::Esc => return FormAction::Cancel,
            // In JSON the arrows move in the text; Tab and Shift-Tab still move between fields.
            KeyCode::Down | KeyCode::Up if self.fields.get(self.focused).is_some_and(Field::moves_in_text) => {
                if let Some(field) = self.fields.get_mut(self.focused) {
                    let up = key.code == KeyCode::Up;
                    field.input.move_cursor(if up { CursorMove::Up } else { CursorMove::Down });
                }
            }
            KeyCode::Left | KeyCode::Right
                if key.modifiers.is_empty() && self.fields.get(self.focused).is_some_and(|f| is_choice(f.param)) =>
            {
                if let Some(field) = self.fields.get_mut(self.focused) {
                    field.step_choice(key.code == KeyCode::Right);
                }
            }
            KeyCode::Tab | KeyCode::Down => self.move_focus(1),
            KeyCode::BackTab | KeyCode::Up => self.move_focus(-1),
            KeyCode::Enter if self.fields.get(self.focused).is_none_or(|f| !f.takes_lines()) => {
                self.move_focus(1);
            }
            _ => {
                if let Some(field) = self.fields.get_mut(self.focused) {
                    let lines = field.takes_lines();
                    // On a selector, Backspace with nothing typed clears the choice.
                    let typed_nothing = field.input.lines().iter().all(String::is_empty);
                    let clears = field.chosen.is_some() && typed_nothing && key.code == KeyCode::Backspace;
                    if clears {
                        field.chosen = None;
                        field.error = None;
                    } else if edit_text(&mut field.input, &key, lines) {
                        field.refind_choice();
                        field.error = None;
                    }
                }
            }
        }
        FormAction::None
    }

    /// Tab in a file field: completes the path on the cursor's line as a shell would (to the one
    /// name it can be, or as far as the names it can be agree, listing them in the bottom
    /// border). False when there is nothing to complete (an empty line, a whole file name, no
    /// such name: leaving the field then says what is wrong with it).
    fn complete_path(&mut self) -> bool {
        let Some(field) = self.fields.get_mut(self.focused) else { return false };
        let (row, _) = field.input.cursor();
        let line = field.input.lines().get(row).cloned().unwrap_or_default();
        if line.trim().is_empty() {
            return false;
        }
        let home = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf());
        let completion = complete_path(&line, home.as_deref());
        match completion {
            Some(Completion { text, candidates }) => {
                let changed = text != line;
                if changed {
                    replace_line(&mut field.input, row, &text);
                    field.error = None;
                }
                if candidates.len() > 1 {
                    let shown: Vec<&str> = candidates.iter().take(8).map(String::as_str).collect();
                    let more = candidates.len().saturating_sub(shown.len());
                    let more = if more > 0 { format!(" (+{more} more)") } else { String::new() };
                    self.hint = Some(format!("{} match: {}{more}", candidates.len(), shown.join("  ")));
                    return true;
                }
                changed
            }
            None => false,
        }
    }

    /// Whether the table editor is open.
    pub fn editing_line_items(&self) -> bool {
        self.line_items.is_some()
    }

    /// Opens the table editor over the `line_items` field; a field that is no list of items
    /// stays as it is, with a message saying why.
    fn open_line_items(&mut self) {
        let Some(field) = self.fields.get(self.focused) else { return };
        let with_sales_tax = self.op.param("sales_tax").is_some();
        match LineItemsEditor::open(&field.value(), with_sales_tax) {
            Ok(editor) => self.line_items = Some(editor),
            Err(e) => self.message = Some(e),
        }
    }

    fn move_focus(&mut self, delta: isize) {
        if self.fields.is_empty() {
            return;
        }
        // Leaving a field checks it, so mistakes show up as they are made.
        if let Some(field) = self.fields.get_mut(self.focused) {
            field.error = if field.value().is_empty() { None } else { field.problem() };
        }
        let len = isize::try_from(self.fields.len()).unwrap_or(1);
        let next = (isize::try_from(self.focused).unwrap_or(0) + delta).rem_euclid(len);
        self.focused = usize::try_from(next).unwrap_or(0);
    }

    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[
            ("Tab ↓ / S-Tab ↑", "next / previous field (↑↓ move in JSON text)"),
            ("Enter", "next field (a new line in JSON fields, another path in file fields)"),
            ("Ctrl-s", "check every field and send"),
            ("Ctrl-e", "JSON field in $EDITOR; line_items as a table"),
            ("Alt-e", "any JSON field in $EDITOR, line_items too"),
            ("Alt-y", "copy the form's request as curl / HTTPie"),
            ("Esc", "close without sending"),
        ]
    }

    pub fn render(&mut self, frame: &mut Frame, area: Rect, theme: &Theme) {
        self.render_fields(frame, area, theme);
        if let Some(editor) = &self.line_items {
            editor.render(frame, area, theme);
        }
    }

    fn render_fields(&mut self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let width = area.width.saturating_sub(4).clamp(20, 100).min(area.width);
        let notes = u16::try_from(self.notes.len()).unwrap_or(u16::MAX);
        let wanted: u16 = self.fields.iter().map(|f| 1 + f.input_height()).sum::<u16>() + 4 + notes;
        let height = wanted.max(5).min(area.height);
        let popup = super::centered(area, width, height);
        frame.render_widget(Clear, popup);
        // The name and the target always show; the method and path give way, from their middle.
        let name = format!(" {} ", self.op.full_name());
        let target = format!("→ {} ", inert(&self.target_label));
        let room = usize::from(width.saturating_sub(2)).saturating_sub(name.width() + target.width() + 1);
        let title = Line::from(vec![
            Span::styled(name, theme.title),
            Span::styled(
                format!("{} ", super::cut_middle(&format!("{} {}", self.op.method, self.op.path), room)),
                theme.muted,
            ),
            Span::styled(target, theme.accent),
        ]);
        let footer = match (&self.message, &self.hint) {
            (Some(message), _) => Span::styled(format!(" {} ", inert(message)), theme.error),
            (None, Some(hint)) => Span::styled(format!(" {} ", inert(hint)), theme.accent),
            (None, None) => Span::styled(" Ctrl-s send · Tab next · Esc close ", theme.muted),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(title)
            .title_bottom(Line::from(footer));
        let inner = block.inner(popup);
        frame.render_widget(block, popup);
        if inner.height == 0 || inner.width < 4 {
            return;
        }
        let summary = Paragraph::new(self.op.summary).style(theme.muted);
        frame.render_widget(summary, Rect { height: 1, ..inner });
        let notes = notes.min(inner.height.saturating_sub(2));
        for (row, note) in (0..notes).zip(&self.notes) {
            let line = Paragraph::new(format!("» {}", inert(note))).style(theme.accent);
            frame.render_widget(line, Rect { y: inner.y + 1 + row, height: 1, ..inner });
        }
        let inner = Rect { y: inner.y + notes, height: inner.height - notes, ..inner };
        if self.fields.is_empty() {
            let text = Paragraph::new("This operation takes no parameters. Ctrl-s sends it.").style(theme.text);
            frame.render_widget(text, Rect { y: inner.y + 2, height: inner.height.saturating_sub(2), ..inner });
            return;
        }
        // Scroll so the focused field is visible: start from the first field that lets it fit.
        let body = Rect { y: inner.y + 2, height: inner.height.saturating_sub(2), ..inner };
        let heights: Vec<u16> = self.fields.iter().map(|f| 1 + f.input_height()).collect();
        let mut first = 0;
        while first < self.focused && heights[first..=self.focused].iter().sum::<u16>() > body.height {
            first += 1;
        }
        let mut y = body.y;
        for (index, field) in self.fields.iter_mut().enumerate().skip(first) {
            let needed = 1 + field.input_height();
            if y + needed > body.y + body.height {
                break;
            }
            let focused = index == self.focused;
            let param = field.param;
            let kind = match param.family {
                Some(family) => format!("json {{{}: value}}", family.label()),
                None if param.repeatable() => format!("{}, repeatable", param.kind.label()),
                None => param.kind.label().to_owned(),
            };
            let mut label = vec![
                Span::styled(param.display_name(), if focused { theme.accent } else { theme.text }),
                Span::styled(if param.required { "* " } else { "  " }, theme.error),
                Span::styled(format!("{} · {kind}  ", location_label(param)), theme.muted),
                Span::styled(param.help, theme.muted),
            ];
            if param.name == LINE_ITEMS && param.kind == Kind::Json {
                label.insert(3, Span::styled("Ctrl-e: edit as a table · Alt-e: $EDITOR  ", theme.accent));
            } else if focused && is_json(param) {
                label.insert(3, Span::styled("Ctrl-e: $EDITOR  ", theme.accent));
            }
            if let Some(error) = &field.error {
                label
                    .insert(3, Span::styled(format!("✗ {}  ", inert(error)), theme.error.add_modifier(Modifier::BOLD)));
            }
            frame.render_widget(Paragraph::new(Line::from(label)), Rect { x: body.x, y, width: body.width, height: 1 });
            let input_area = Rect { x: body.x + 2, y: y + 1, width: body.width.saturating_sub(2), height: needed - 1 };
            if is_choice(param) {
                frame.render_widget(choice_line(field, focused, theme), input_area);
            } else if !focused {
                // A field not being typed in shows its value from the start (the text area
                // would show it from where its cursor last was: the end of a long value).
                let lines: Vec<Line> = match field.input.is_empty() {
                    true => vec![Line::styled(field.input.placeholder_text().to_owned(), theme.muted)],
                    false => field.input.lines().iter().map(|l| Line::styled(l.clone(), theme.text)).collect(),
                };
                frame.render_widget(Paragraph::new(lines), input_area);
            } else {
                field.input.set_style(theme.text);
                field.input.set_placeholder_style(theme.muted);
                field.input.set_cursor_style(if focused { theme.selection } else { theme.text });
                frame.render_widget(&field.input, input_area);
            }
            if focused {
                // Where typing goes, even in an empty field.
                let marker = Rect { x: body.x, y: y + 1, width: 1, height: 1 };
                frame.render_widget(Paragraph::new("›").style(theme.accent), marker);
            }
            y += needed;
        }
    }
}

/// A selector's line: `‹ buy ›`, what was typed to find it, and the other values.
fn choice_line(field: &Field, focused: bool, theme: &Theme) -> Paragraph<'static> {
    let typed = field.input.lines().join("");
    let shown = match (field.chosen, typed.is_empty()) {
        (Some(i), _) => field.param.choices()[i].to_owned(),
        (None, false) => inert(&typed).into_owned(),
        (None, true) => match field.param.default {
            Some(default) => format!("— (not sent: {default})"),
            None => "—".to_owned(),
        },
    };
    let mut spans = vec![Span::styled(format!("‹ {shown} ›"), if focused { theme.selection } else { theme.text })];
    if focused {
        let found = if typed.is_empty() || field.chosen.is_none() {
            String::new()
        } else {
            format!("  typed {}", inert(&typed))
        };
        spans.push(Span::styled(found, theme.accent));
        spans.push(Span::styled(format!("  ← → {}", field.param.choices().join(" · ")), theme.muted));
    }
    Paragraph::new(Line::from(spans))
}

/// What completing a path found: the line's new text, and the names it could go on with.
#[derive(Debug, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    /// Every name the typed part could be (folders end in `/`), sorted; one when it was whole.
    pub candidates: Vec<String>,
}

/// Completes `line` (a path, maybe after curl's `@`, maybe `~/…`) against what is on disk:
/// to the one name it can be (a folder gets its `/`), or to the longest start the names it can
/// be share. `None` when no name fits, or the folder cannot be read. Hidden names are offered
/// only when the typed part starts with a dot.
pub fn complete_path(line: &str, home: Option<&std::path::Path>) -> Option<Completion> {
    let (at, path) = match line.strip_prefix('@') {
        Some(rest) => ("@", rest),
        None => ("", line),
    };
    let (folder, typed) = match path.rfind('/') {
        Some(i) => (&path[..=i], &path[i + 1..]),
        None => ("", path),
    };
    let on_disk = match (folder.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if folder.is_empty() => std::path::PathBuf::from("."),
        _ => std::path::PathBuf::from(folder),
    };
    let mut names: Vec<String> = std::fs::read_dir(&on_disk)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if !name.starts_with(typed) || (name.starts_with('.') && !typed.starts_with('.')) {
                return None;
            }
            let dir = entry.file_type().is_ok_and(|t| t.is_dir())
                || (entry.file_type().is_ok_and(|t| t.is_symlink()) && entry.path().is_dir());
            Some(if dir { format!("{name}/") } else { name })
        })
        .collect();
    if names.is_empty() {
        return None;
    }
    names.sort();
    let common = names.iter().skip(1).fold(names[0].clone(), |common, name| {
        let shared: usize =
            common.chars().zip(name.chars()).take_while(|(a, b)| a == b).map(|(a, _)| a.len_utf8()).sum();
        common[..shared].to_owned()
    });
    let common = if common.len() >= typed.len() { common } else { typed.to_owned() };
    Some(Completion { text: format!("{at}{folder}{common}"), candidates: names })
}

/// Replaces line `row` of a text area with `text`, the cursor at its end.
fn replace_line(input: &mut TextArea<'static>, row: usize, text: &str) {
    let to = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    input.move_cursor(CursorMove::Jump(to(row), 0));
    if !input.lines().get(row).is_none_or(String::is_empty) {
        input.delete_line_by_end();
    }
    input.insert_str(text);
}

fn location_label(param: &Param) -> &'static str {
    match param.location {
        Location::WholeBody => "whole body",
        other => other.label(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Service;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    impl Form {
        /// The text a field shows.
        fn fields_value(&self, name: &str) -> String {
            self.fields.iter().find(|f| f.param.name == name).map(|f| f.input.lines().join("\n")).unwrap_or_default()
        }
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl_s() -> KeyEvent {
        KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL)
    }

    #[test]
    fn bad_values_are_caught_before_sending_and_shown_beside_the_field() {
        let op = Service::Ably.operation("messages_list").unwrap();
        let mut prefill = Values::new();
        prefill.insert("channelId".into(), "orders:eu".into());
        let mut form = Form::new(op, &prefill, "SANDBOX".into());
        form.set_value("limit", "5000");
        form.set_value("direction", "sideways");
        assert_eq!(form.handle_key(ctrl_s()), FormAction::None);
        assert_eq!(form.error_of("limit"), Some("must be at most 1000"));
        assert!(form.error_of("direction").unwrap().contains("not one of forwards, backwards"));
        let mut terminal = Terminal::new(TestBackend::new(100, 20)).unwrap();
        terminal.draw(|f| form.render(f, f.area(), &Theme::dark())).unwrap();
        let text: String = terminal.backend().buffer().content.iter().map(|c| c.symbol()).collect();
        assert!(text.contains("✗ must be at most 1000"));
        assert!(text.contains("nothing was sent"));
        form.set_value("limit", "10");
        form.set_value("direction", "forwards");
        let FormAction::Submit(values) = form.handle_key(ctrl_s()) else { panic!("should submit") };
        assert_eq!(values.get("channelId").map(String::as_str), Some("orders:eu"));
        assert_eq!(values.get("limit").map(String::as_str), Some("10"));
    }

    #[test]
    fn a_fixed_set_of_values_is_a_selector_moved_with_arrows_or_found_by_typing() {
        let op = Service::Coinbase.operation("orders_create").unwrap();
        let mut prefill = Values::new();
        prefill.insert("product_id".into(), "BTC-USD".into());
        let mut form = Form::new(op, &prefill, "SANDBOX".into());
        let side = |form: &Form| form.values().get("side").cloned().unwrap_or_default();
        form.handle_key(key(KeyCode::Tab));
        assert_eq!(side(&form), "", "nothing is chosen for the user");
        form.handle_key(key(KeyCode::Right));
        assert_eq!(side(&form), "buy");
        form.handle_key(key(KeyCode::Right));
        assert_eq!(side(&form), "sell");
        form.handle_key(key(KeyCode::Right));
        assert_eq!(side(&form), "buy", "← → go round");
        form.handle_key(key(KeyCode::Left));
        assert_eq!(side(&form), "sell");
        let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
        terminal.draw(|f| form.render(f, f.area(), &Theme::dark())).unwrap();
        let text: String = terminal.backend().buffer().content.iter().map(|c| c.symbol()).collect();
        assert!(text.contains("‹ sell ›") && text.contains("← → buy · sell"), "{text}");
        form.handle_key(key(KeyCode::Backspace));
        assert_eq!(side(&form), "", "Backspace clears the choice");
        // Typing finds a value (every printable key types), and Backspace edits what was typed.
        form.handle_key(key(KeyCode::Char('S')));
        assert_eq!(side(&form), "sell");
        form.handle_key(key(KeyCode::Backspace));
        assert_eq!(side(&form), "");
        for c in "xyz".chars() {
            form.handle_key(key(KeyCode::Char(c)));
        }
        assert_eq!(side(&form), "xyz", "text that finds nothing stays, to be marked");
        assert_eq!(form.handle_key(ctrl_s()), FormAction::None);
        assert!(form.error_of("side").unwrap().contains("not one of buy, sell"));
        // A time in force not chosen is not sent: the exchange's default applies, as the field says.
        form.set_value("side", "buy");
        form.set_value("size", "0.01");
        form.set_value("price", "100");
        terminal.draw(|f| form.render(f, f.area(), &Theme::dark())).unwrap();
        let text: String = terminal.backend().buffer().content.iter().map(|c| c.symbol()).collect();
        assert!(text.contains("‹ — (not sent: GTC) ›"), "{text}");
        let FormAction::Submit(values) = form.handle_key(ctrl_s()) else { panic!("sends") };
        assert_eq!(values.get("side").map(String::as_str), Some("buy"));
        assert!(!values.contains_key("time_in_force"));
    }

    #[test]
    fn suggested_values_are_offered_and_another_is_taken() {
        let op = Service::Deepgram.operation("transcription_transcribe").unwrap();
        let mut form = Form::new(op, &Values::new(), "SANDBOX".into());
        focus(&mut form, "model");
        let model = |form: &Form| form.values().get("model").cloned().unwrap_or_default();
        form.handle_key(key(KeyCode::Right));
        assert_eq!(model(&form), "nova-3");
        form.handle_key(key(KeyCode::Backspace));
        for c in "whisper".chars() {
            form.handle_key(key(KeyCode::Char(c)));
        }
        assert_eq!(model(&form), "whisper-large", "typing finds a model");
        for _ in 0.."whisper".len() {
            form.handle_key(key(KeyCode::Backspace));
        }
        for c in "9f1c-custom".chars() {
            form.handle_key(key(KeyCode::Char(c)));
        }
        assert_eq!(model(&form), "9f1c-custom", "a custom model's id is taken as typed");
        form.set_value("url", "https://example.com/a.wav");
        let FormAction::Submit(values) = form.handle_key(ctrl_s()) else { panic!("sends: {:?}", form.message) };
        assert_eq!(values.get("model").map(String::as_str), Some("9f1c-custom"));
    }

    #[test]
    fn fields_show_the_start_of_their_values() {
        let op = Service::Ably.operation("messages_publish").unwrap();
        let mut prefill = Values::new();
        let channel = format!("orders:start-{}-end", "x".repeat(150));
        prefill.insert("channelId".into(), channel);
        let json: Vec<String> = (0..40).map(|i| format!("  \"field{i}\": {i},")).collect();
        prefill.insert("extras".into(), format!("{{\n  \"first\": true,\n{}\n  \"last\": 0\n}}", json.join("\n")));
        let mut form = Form::new(op, &prefill, "SANDBOX".into());
        let screen = |form: &mut Form| {
            let mut terminal = Terminal::new(TestBackend::new(100, 40)).unwrap();
            terminal.draw(|f| form.render(f, f.area(), &Theme::dark())).unwrap();
            let buffer = terminal.backend().buffer().clone();
            (0..buffer.area.height)
                .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect::<String>())
                .collect::<Vec<_>>()
                .join("\n")
        };
        // Leaving the long channel shows it from its start again.
        form.handle_key(key(KeyCode::Tab));
        assert!(screen(&mut form).contains("orders:start-xxx"), "{}", screen(&mut form));
        // The JSON opens at its start when its field is reached.
        while form.fields[form.focused].param.name != "extras" {
            form.handle_key(key(KeyCode::Tab));
        }
        let shown = screen(&mut form);
        assert!(shown.contains("\"first\": true") && !shown.contains("\"last\": 0"), "{shown}");
    }

    #[test]
    fn typing_goes_to_the_focused_field_and_tab_moves() {
        let op = Service::Ably.operation("messages_publish").unwrap();
        let mut form = Form::new(op, &Values::new(), "SANDBOX".into());
        for c in "ch1".chars() {
            form.handle_key(key(KeyCode::Char(c)));
        }
        form.handle_key(key(KeyCode::Tab));
        for c in "greeting".chars() {
            form.handle_key(key(KeyCode::Char(c)));
        }
        let values = form.values();
        assert_eq!(values["channelId"], "ch1");
        assert_eq!(values["name"], "greeting");
        assert_eq!(form.handle_key(key(KeyCode::Esc)), FormAction::Cancel);
    }

    fn screen(form: &mut Form) -> String {
        let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
        terminal.draw(|f| form.render(f, f.area(), &Theme::dark())).unwrap();
        let buffer = terminal.backend().buffer();
        (0..24).map(|y| (0..100).map(|x| buffer[(x, y)].symbol()).collect::<String>() + "\n").collect()
    }

    #[test]
    fn the_editor_is_visual_then_editor_then_vi() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        assert_eq!(editor_command(&env(&[("VISUAL", "code --wait"), ("EDITOR", "nano")])), "code --wait");
        assert_eq!(editor_command(&env(&[("VISUAL", " "), ("EDITOR", "nano")])), "nano");
        assert_eq!(editor_command(&env(&[])), "vi");
    }

    #[cfg(unix)]
    #[test]
    fn a_field_goes_through_a_temporary_file_and_back() {
        // A fake editor that appends to the file it is given, and one that fails.
        let append = r#"f() { printf '%s, "b": 2}' "$(sed 's/}$//' "$1")" > "$1"; }; f"#;
        assert_eq!(run_editor(append, r#"{"a": 1}"#), Ok(r#"{"a": 1, "b": 2}"#.to_owned()));
        let failed = run_editor("false", "[]").unwrap_err();
        assert!(failed.contains("the editor `false` failed"), "{failed}");
        // The file is private while it exists, and gone afterwards.
        #[cfg(unix)]
        {
            let probe = r#"f() { stat -c %a "$1" > "$1.mode"; cp "$1.mode" /dev/null; printf '%s' "$1" > "$1"; }; f"#;
            let path = run_editor(probe, "").unwrap();
            assert!(!std::path::Path::new(&path).exists(), "{path} removed");
            let mode = std::fs::read_to_string(format!("{path}.mode")).unwrap_or_default();
            let _ = std::fs::remove_file(format!("{path}.mode"));
            assert_eq!(mode.trim(), "600");
        }
    }

    #[test]
    fn json_fields_keep_the_arrows_and_go_to_the_editor() {
        let op = Service::Ably.operation("push_publish").unwrap();
        let mut form = Form::new(op, &Values::new(), "SANDBOX".into());
        assert_eq!(form.fields[form.focused].param.name, "recipient");
        form.paste("{\n  \"clientId\": \"a\"\n}");
        form.handle_key(key(KeyCode::Up));
        form.handle_key(key(KeyCode::Char('x')));
        assert_eq!(form.focused, 0, "↑ moved in the text, not to another field");
        assert_eq!(form.values()["recipient"], "{\n x \"clientId\": \"a\"\n}");
        assert!(screen(&mut form).contains("Ctrl-e: $EDITOR"));
        let ctrl_e = KeyEvent::new(KeyCode::Char('e'), KeyModifiers::CONTROL);
        let FormAction::Edit(request) = form.handle_key(ctrl_e) else { panic!("an editor request") };
        assert_eq!(request.field, "recipient");
        assert_eq!(request.text, "{\n x \"clientId\": \"a\"\n}");

        // Invalid JSON comes back kept, and marked.
        form.apply_edit(&request, Ok("{\"clientId\": \n".into()));
        assert_eq!(form.values()["recipient"], "{\"clientId\":");
        assert!(form.error_of("recipient").is_some());
        assert!(screen(&mut form).contains("recipient was edited; fix the marked JSON"));
        form.apply_edit(&request, Ok("{\"clientId\": \"b\"}\n".into()));
        assert_eq!(form.values()["recipient"], "{\"clientId\": \"b\"}");
        assert_eq!(form.error_of("recipient"), None);
        // A failed editor leaves the text as it was and says so.
        form.apply_edit(&request, Err("the editor `vi` failed (exit status: 1)".into()));
        assert_eq!(form.values()["recipient"], "{\"clientId\": \"b\"}");
        assert!(screen(&mut form).contains("the editor `vi` failed (exit status: 1); recipient keeps its text"));
        // Tab still leaves the field.
        form.handle_key(key(KeyCode::Tab));
        assert_eq!(form.focused, 1);
    }

    fn mailgun_send_form(prefill: &[(&str, &str)]) -> Form {
        let op = Service::Mailgun.operation("messages_send").unwrap();
        let prefill: Values = prefill.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Form::new(op, &prefill, "SANDBOX".into())
    }

    fn focus(form: &mut Form, name: &str) {
        form.focused = form.fields.iter().position(|f| f.param.name == name).unwrap();
    }

    #[test]
    fn a_family_field_is_one_json_object_expanded_on_submit_and_collapsed_on_reopen() {
        let base = [("domain", "mg.example.com"), ("from", "a@mg.example.com"), ("to", "b@x.com"), ("subject", "s")];
        let mut form = mailgun_send_form(&base);
        form.set_value("h:", "{\"X-Ticket\": \"42\", \"X-Team\": 7}");
        form.set_value("v:", "{\"order-id\": \"1234\"}");
        form.set_value("h:Reply-To", "help@mg.example.com");
        let FormAction::Submit(values) = form.handle_key(ctrl_s()) else { panic!("should submit: {:?}", form.message) };
        assert_eq!(values.get("h:X-Ticket").map(String::as_str), Some("42"));
        assert_eq!(values.get("h:X-Team").map(String::as_str), Some("7"));
        assert_eq!(values.get("v:order-id").map(String::as_str), Some("1234"));
        assert_eq!(values.get("h:Reply-To").map(String::as_str), Some("help@mg.example.com"));
        assert!(!values.contains_key("h:") && !values.contains_key("v:"), "{values:?}");

        // Re-opened from the history or a draft: the names go back into the one object.
        let mut again = Form::new(form.op, &values, "SANDBOX".into());
        let shown: serde_json::Value = serde_json::from_str(&again.fields_value("h:")).unwrap();
        assert_eq!(shown, serde_json::json!({"X-Team": "7", "X-Ticket": "42"}));
        assert_eq!(again.fields_value("h:Reply-To"), "help@mg.example.com", "a listed header keeps its own field");
        assert_eq!(again.values(), values, "re-opened, it sends what it sent");
        focus(&mut again, "h:");
        let screen = screen(&mut again);
        assert!(screen.contains("h:NAME") && screen.contains("json {header name: value}"), "{screen}");

        // A bad name is marked on the field and nothing is sent; a draft keeps the text.
        again.set_value("h:", "{\"X Ticket\": \"1\"}");
        assert_eq!(again.handle_key(ctrl_s()), FormAction::None);
        assert!(
            again.error_of("h:").unwrap().contains("'X Ticket' is not a header name"),
            "{:?}",
            again.error_of("h:")
        );
        let draft = again.values();
        assert_eq!(draft.get("h:").map(String::as_str), Some("{\"X Ticket\": \"1\"}"));
        assert_eq!(Form::new(again.op, &draft, String::new()).fields_value("h:"), "{\"X Ticket\": \"1\"}");
        again.set_value("h:", "[1]");
        again.handle_key(ctrl_s());
        assert!(again.error_of("h:").unwrap().starts_with("must be a JSON object of header names"));
    }

    #[test]
    fn a_file_field_takes_a_path_per_line_and_marks_the_missing_one() {
        let dir = std::env::temp_dir().join(format!("opsdeck-form-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let invoice = dir.join("invoice.pdf").to_string_lossy().into_owned();
        std::fs::write(&invoice, b"%PDF").unwrap();
        let missing = dir.join("terms.pdf").to_string_lossy().into_owned();
        let base = [("domain", "mg.example.com"), ("from", "a@mg.example.com"), ("to", "b@x.com"), ("subject", "s")];
        let mut form = mailgun_send_form(&base);
        focus(&mut form, "attachment");
        form.paste(&format!("@{invoice}"));
        form.handle_key(key(KeyCode::Enter));
        assert_eq!(form.fields[form.focused].param.name, "attachment", "Enter starts another path");
        form.paste(&missing);
        assert_eq!(form.handle_key(ctrl_s()), FormAction::None, "nothing is sent");
        assert_eq!(form.error_of("attachment"), Some(format!("no file at {missing}").as_str()));
        assert!(screen(&mut form).contains("✗ no file at"), "shown on the field");

        form.set_value("attachment", &format!("@{invoice}\n{invoice}"));
        form.set_value("to", "b@x.com, c@y.com");
        let FormAction::Submit(values) = form.handle_key(ctrl_s()) else { panic!("should submit: {:?}", form.message) };
        let attachment = form.op.param("attachment").unwrap();
        assert_eq!(crate::catalog::items(attachment, &values["attachment"]), [format!("@{invoice}"), invoice.clone()]);

        // Re-opened: one path per line, two recipients given as two values shown with a comma.
        let mut recorded = values.clone();
        recorded.insert("to".into(), crate::catalog::join_items(["b@x.com", "c@y.com"]).unwrap());
        let again = Form::new(form.op, &recorded, String::new());
        assert_eq!(again.fields_value("attachment"), format!("@{invoice}\n{invoice}"));
        assert_eq!(again.fields_value("to"), "b@x.com, c@y.com");
        assert_eq!(again.values(), recorded, "untouched, the same values go out");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_required_json_field_starts_from_its_shape_and_is_never_sent_untouched() {
        let op = Service::Easypost.operation("shipments_create").unwrap();
        let mut form = Form::new(op, &Values::new(), "SANDBOX".into());
        let shown = form.fields[0].input.lines().to_vec();
        assert!(shown.len() > 10, "over several lines: {shown:?}");
        assert_eq!(shown[0], "{");
        assert_eq!(shown[1], "  \"to_address\": {");
        assert!(shown.iter().any(|l| l.trim() == "\"street1\": \"\","), "{shown:?}");
        // Sent as it is, it would be values nobody chose: refused, with the reason.
        assert_eq!(form.handle_key(ctrl_s()), FormAction::None);
        assert_eq!(form.fields[0].error.as_deref(), Some("fill in the template's values (it is only the shape)"));
        assert!(form.values().is_empty());
        // The cursor waits in the first empty value: typing fills it, and it is the user's value.
        form.handle_key(key(KeyCode::Char('x')));
        assert_eq!(form.fields[0].problem(), None);
        let sent: serde_json::Value = serde_json::from_str(&form.values()["shipment"]).unwrap();
        assert_eq!(sent["to_address"]["name"], "x");
        // A field given a value does not start from the shape; an optional one starts empty.
        let mut values = Values::new();
        values.insert("shipment".into(), r#"{"to_address":{"id":"adr_1"}}"#.into());
        let given = Form::new(op, &values, "SANDBOX".into());
        assert_eq!(given.values().get("shipment").map(String::as_str), Some(r#"{"to_address":{"id":"adr_1"}}"#));
        let publish = Service::Ably.operation("messages_publish").unwrap();
        let form = Form::new(publish, &Values::new(), "SANDBOX".into());
        assert!(form.fields.iter().filter(|f| f.param.kind == Kind::Json).all(|f| f.input.is_empty()));
    }

    #[test]
    fn paths_complete_as_far_as_the_names_agree() {
        let dir = std::env::temp_dir().join(format!("opsdeck-complete-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("audio")).unwrap();
        for name in ["call-1.wav", "call-2.wav", ".hidden.wav"] {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        let d = dir.display().to_string();
        let found = complete_path(&format!("{d}/ca"), None).unwrap();
        assert_eq!(found.text, format!("{d}/call-"));
        assert_eq!(found.candidates, ["call-1.wav", "call-2.wav"]);
        let one = complete_path(&format!("@{d}/call-2"), None).unwrap();
        assert_eq!(one.text, format!("@{d}/call-2.wav"), "curl's @ is kept");
        assert_eq!(complete_path(&format!("{d}/au"), None).unwrap().text, format!("{d}/audio/"));
        assert_eq!(complete_path(&format!("{d}/zz"), None), None);
        assert_eq!(complete_path(&format!("{d}/.h"), None).unwrap().text, format!("{d}/.hidden.wav"));
        let home = complete_path("~/ca", Some(&dir)).unwrap();
        assert_eq!(home.text, "~/call-", "a home path stays written as typed");

        // In a form: Tab completes, lists the names, and goes on when the name is whole.
        let op = Service::Deepgram.operation("transcription_transcribe").unwrap();
        let mut form = Form::new(op, &Values::new(), "SANDBOX".into());
        focus(&mut form, "file");
        form.paste(&format!("{d}/ca"));
        form.handle_key(key(KeyCode::Tab));
        assert_eq!(form.values()["file"], format!("{d}/call-"));
        assert!(screen(&mut form).contains("2 match: call-1.wav  call-2.wav"));
        form.handle_key(key(KeyCode::Char('1')));
        form.handle_key(key(KeyCode::Tab));
        assert_eq!(form.values()["file"], format!("{d}/call-1.wav"));
        assert_eq!(form.fields[form.focused].param.name, "file");
        form.handle_key(key(KeyCode::Tab));
        assert_ne!(form.fields[form.focused].param.name, "file", "a whole name: Tab moves on");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_text_field_its_service_names_takes_lines() {
        let op = Service::Deepgram.operation("text_analyze").unwrap();
        let mut prefill = Values::new();
        prefill.insert("text".into(), "one\ntwo".into());
        let mut form = Form::with_text_lines(op, &prefill, "SANDBOX".into(), &["text"]);
        focus(&mut form, "text");
        assert!(form.focused_takes_lines());
        assert_eq!(form.values()["text"], "one\ntwo", "a draft keeps its lines");
        // It opens at its start; the arrows reach its end.
        form.handle_key(key(KeyCode::Down));
        form.handle_key(key(KeyCode::End));
        form.handle_key(key(KeyCode::Enter));
        form.handle_key(key(KeyCode::Char('3')));
        assert_eq!(form.values()["text"], "one\ntwo\n3");
        assert_eq!(form.fields[form.focused].param.name, "text", "Enter stayed in the field");
        let plain = Form::new(op, &Values::new(), String::new());
        assert!(!plain.fields.iter().any(|f| f.text_lines));
    }

    #[test]
    fn renders_in_small_areas_without_panicking() {
        let op = Service::Ably.operation("push_device_register").unwrap();
        let mut form = Form::new(op, &Values::new(), "SANDBOX".into());
        for (w, h) in [(1, 1), (10, 3), (60, 15)] {
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            terminal.draw(|f| form.render(f, f.area(), &Theme::dark())).unwrap();
        }
    }
}
