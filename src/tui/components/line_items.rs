//! Edits a TaxJar `line_items` field as a table: a row per item with its id, quantity, unit
//! price, discount and product tax code (and the sales tax collected, for orders and refunds).
//! It writes the JSON array back to the form only when every row is valid; Esc leaves the field
//! as it was.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use serde_json::{Map, Value};
use unicode_width::UnicodeWidthStr;

use crate::inert::inert;
use crate::tui::components::line_input::LineInput;
use crate::tui::theme::Theme;

/// What a cell holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CellKind {
    Text,
    /// A whole number, zero or more.
    Count,
    /// A decimal amount, zero or more.
    Money,
}

/// A column: the JSON key, its kind, and whether a row needs it.
#[derive(Clone, Copy, Debug)]
struct ItemColumn {
    key: &'static str,
    kind: CellKind,
    required: bool,
}

const ID: ItemColumn = ItemColumn { key: "id", kind: CellKind::Text, required: false };
const QUANTITY: ItemColumn = ItemColumn { key: "quantity", kind: CellKind::Count, required: true };
const UNIT_PRICE: ItemColumn = ItemColumn { key: "unit_price", kind: CellKind::Money, required: true };
const DISCOUNT: ItemColumn = ItemColumn { key: "discount", kind: CellKind::Money, required: false };
const TAX_CODE: ItemColumn = ItemColumn { key: "product_tax_code", kind: CellKind::Text, required: false };
const SALES_TAX: ItemColumn = ItemColumn { key: "sales_tax", kind: CellKind::Money, required: false };

/// What a key did in the editor.
#[derive(Debug, PartialEq, Eq)]
pub enum LineItemsAction {
    None,
    /// The rows as the field's JSON text.
    Done(String),
    Cancel,
}

pub struct LineItemsEditor {
    columns: Vec<ItemColumn>,
    rows: Vec<Vec<String>>,
    row: usize,
    column: usize,
    /// Why Enter did not write the rows back.
    pub error: Option<String>,
    /// Keys of the items read from the field that this editor has no column for, kept as they
    /// were so editing the table loses nothing (`description`, `product_identifier`).
    extra: Vec<Map<String, Value>>,
}

impl LineItemsEditor {
    /// An editor over the field's current JSON (`text`); `with_sales_tax` adds the column that
    /// order and refund items need. An error when the text is not a list of objects: the field
    /// keeps it, and nothing typed is lost.
    pub fn open(text: &str, with_sales_tax: bool) -> Result<LineItemsEditor, String> {
        let mut columns = vec![ID, QUANTITY, UNIT_PRICE, DISCOUNT, TAX_CODE];
        if with_sales_tax {
            columns.push(SALES_TAX);
        }
        let items: Vec<Value> = if text.trim().is_empty() {
            Vec::new()
        } else {
            match serde_json::from_str(text) {
                Ok(Value::Array(items)) if items.iter().all(Value::is_object) => items,
                _ => {
                    return Err("line_items is not a JSON list of objects; fix or clear it to edit it as a table".into())
                }
            }
        };
        let mut rows = Vec::new();
        let mut extra = Vec::new();
        for item in items {
            let Value::Object(mut map) = item else { continue };
            rows.push(
                columns
                    .iter()
                    .map(|c| match map.remove(c.key) {
                        None | Some(Value::Null) => String::new(),
                        Some(Value::String(s)) => s,
                        Some(other) => other.to_string(),
                    })
                    .collect(),
            );
            extra.push(map);
        }
        let mut editor = LineItemsEditor { columns, rows, row: 0, column: 0, error: None, extra };
        if editor.rows.is_empty() {
            editor.add_row();
        }
        Ok(editor)
    }

    fn add_row(&mut self) {
        let number = self.rows.len() + 1;
        let mut row = vec![String::new(); self.columns.len()];
        row[0] = number.to_string();
        if let Some(quantity) = self.columns.iter().position(|c| c.key == "quantity") {
            row[quantity] = "1".into();
        }
        self.rows.push(row);
        self.extra.push(Map::new());
        self.row = self.rows.len() - 1;
        self.column = 1.min(self.columns.len() - 1);
    }

    fn remove_row(&mut self) {
        if self.row < self.rows.len() {
            self.rows.remove(self.row);
            self.extra.remove(self.row);
        }
        self.row = self.row.min(self.rows.len().saturating_sub(1));
    }

    /// The rows as a JSON array, or what is wrong with the first bad cell.
    pub fn to_json(&self) -> Result<String, String> {
        let mut items = Vec::new();
        for (index, row) in self.rows.iter().enumerate() {
            if row.iter().all(|c| c.trim().is_empty()) {
                continue;
            }
            let mut item = self.extra.get(index).cloned().unwrap_or_default();
            for (column, cell) in self.columns.iter().zip(row) {
                let cell = cell.trim();
                let place = format!("row {} {}", index + 1, column.key);
                if cell.is_empty() {
                    if column.required {
                        return Err(format!("{place} is required"));
                    }
                    continue;
                }
                let value = match column.kind {
                    CellKind::Text => Value::String(cell.to_owned()),
                    CellKind::Count => match cell.parse::<u64>() {
                        Ok(n) => Value::from(n),
                        Err(_) => return Err(format!("{place}: {cell:?} is not a whole number of zero or more")),
                    },
                    CellKind::Money => {
                        let number = cell
                            .parse::<rust_decimal::Decimal>()
                            .ok()
                            .filter(|d| !d.is_sign_negative())
                            .and_then(|d| serde_json::from_str::<serde_json::Number>(&d.to_string()).ok());
                        match number {
                            Some(n) => Value::Number(n),
                            None => return Err(format!("{place}: {cell:?} is not an amount of zero or more")),
                        }
                    }
                };
                item.insert(column.key.to_owned(), value);
            }
            items.push(Value::Object(item));
        }
        serde_json::to_string(&items).map_err(|e| e.to_string())
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> LineItemsAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let last_column = self.columns.len() - 1;
        match key.code {
            KeyCode::Esc => return LineItemsAction::Cancel,
            KeyCode::Enter | KeyCode::Char('s') if key.code == KeyCode::Enter || ctrl => match self.to_json() {
                Ok(json) => return LineItemsAction::Done(json),
                Err(e) => self.error = Some(e),
            },
            KeyCode::Char('n') if ctrl => self.add_row(),
            KeyCode::Char('d') if ctrl => self.remove_row(),
            KeyCode::Tab | KeyCode::Right => {
                if self.column < last_column {
                    self.column += 1;
                } else if self.row + 1 < self.rows.len() {
                    (self.row, self.column) = (self.row + 1, 0);
                }
            }
            KeyCode::BackTab | KeyCode::Left => {
                if self.column > 0 {
                    self.column -= 1;
                } else if self.row > 0 {
                    (self.row, self.column) = (self.row - 1, last_column);
                }
            }
            KeyCode::Down => self.row = (self.row + 1).min(self.rows.len().saturating_sub(1)),
            KeyCode::Up => self.row = self.row.saturating_sub(1),
            // The cell is typed at its end (arrows move between cells): the text keys of every
            // input, and deleting back by character, word or all.
            _ => {
                if let Some(cell) = self.cell_mut() {
                    let mut input = LineInput::new(cell);
                    if input.handle_key(&key) {
                        *cell = input.take();
                        self.error = None;
                    }
                }
            }
        }
        LineItemsAction::None
    }

    /// Pasted text goes into the cell, on one line.
    pub fn paste(&mut self, text: &str) {
        if let Some(cell) = self.cell_mut() {
            let mut input = LineInput::new(cell);
            input.insert_str(text);
            *cell = input.take();
        }
    }

    fn cell_mut(&mut self) -> Option<&mut String> {
        self.rows.get_mut(self.row).and_then(|r| r.get_mut(self.column))
    }

    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[
            ("Ctrl-e", "edit line_items as a table (in its field)"),
            ("Tab → / S-Tab ←", "next / previous cell"),
            ("Ctrl-n / Ctrl-d", "add / delete a row"),
            ("Enter", "write the rows to the field"),
        ]
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let width = area.width.saturating_sub(8).clamp(20, 96).min(area.width);
        let wanted = u16::try_from(self.rows.len()).unwrap_or(u16::MAX).saturating_add(6);
        let height = wanted.min(area.height);
        let popup = super::centered(area, width, height);
        frame.render_widget(Clear, popup);
        let footer = match &self.error {
            Some(error) => Span::styled(format!(" ✗ {} ", inert(error)), theme.error),
            None => Span::styled(" Enter done · Ctrl-n add · Ctrl-d delete · Tab next · Esc cancel ", theme.muted),
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border_focused)
            .title(Span::styled(" line_items ", theme.title))
            .title_bottom(Line::from(footer));
        let inner = block.inner(popup);
        frame.render_widget(block, popup);
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let header = c.key.width() + usize::from(c.required);
                self.rows.iter().map(|r| r[i].width() + 1).chain([header, 6]).max().unwrap_or(6)
            })
            .collect();
        let mut lines = vec![Line::from(
            self.columns
                .iter()
                .zip(&widths)
                .map(|(c, w)| {
                    let mark = if c.required { "*" } else { "" };
                    Span::styled(format!("{:<w$}  ", format!("{}{mark}", c.key), w = *w), theme.muted)
                })
                .collect::<Vec<_>>(),
        )];
        for (r, row) in self.rows.iter().enumerate() {
            let spans: Vec<Span> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(c, (cell, w))| {
                    let here = r == self.row && c == self.column;
                    let shown = format!("{}{}", inert(cell), if here { "▏" } else { "" });
                    let style = if here { theme.selection } else { theme.text };
                    Span::styled(format!("{shown:<w$}  ", w = *w), style)
                })
                .collect();
            lines.push(Line::from(spans));
        }
        frame.render_widget(Paragraph::new(lines), inner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn typed(editor: &mut LineItemsEditor, text: &str) {
        for c in text.chars() {
            editor.handle_key(key(KeyCode::Char(c)));
        }
    }

    #[test]
    fn rows_become_the_line_items_array() {
        let mut editor = LineItemsEditor::open("", false).unwrap();
        // A new row starts with its number as id and a quantity of 1, on the quantity cell.
        editor.handle_key(key(KeyCode::Backspace));
        typed(&mut editor, "2");
        editor.handle_key(key(KeyCode::Tab));
        typed(&mut editor, "15.00");
        editor.handle_key(key(KeyCode::Tab));
        editor.handle_key(key(KeyCode::Tab));
        typed(&mut editor, "20010");
        editor.handle_key(ctrl('n'));
        editor.handle_key(key(KeyCode::Tab));
        typed(&mut editor, "3.5");
        let LineItemsAction::Done(json) = editor.handle_key(key(KeyCode::Enter)) else { panic!("{:?}", editor.error) };
        let items: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            items,
            serde_json::json!([
                {"id": "1", "quantity": 2, "unit_price": 15.0, "product_tax_code": "20010"},
                {"id": "2", "quantity": 1, "unit_price": 3.5}
            ])
        );
    }

    #[test]
    fn bad_cells_are_named_and_nothing_is_written() {
        let mut editor = LineItemsEditor::open(r#"[{"id":"1","quantity":1,"unit_price":10}]"#, true).unwrap();
        editor.handle_key(key(KeyCode::Tab));
        editor.handle_key(key(KeyCode::Backspace));
        typed(&mut editor, "-3");
        assert_eq!(editor.handle_key(key(KeyCode::Enter)), LineItemsAction::None);
        assert!(editor.error.as_deref().unwrap().contains("row 1 quantity"), "{:?}", editor.error);
        assert_eq!(editor.handle_key(key(KeyCode::Esc)), LineItemsAction::Cancel);
    }

    #[test]
    fn fields_without_a_column_are_kept_and_rows_can_be_deleted() {
        let text = r#"[{"id":"a","quantity":1,"unit_price":"2.50","description":"Fuzzy Widget"},{"id":"b","quantity":1,"unit_price":1}]"#;
        let mut editor = LineItemsEditor::open(text, true).unwrap();
        editor.handle_key(key(KeyCode::Down));
        editor.handle_key(ctrl('d'));
        let LineItemsAction::Done(json) = editor.handle_key(key(KeyCode::Enter)) else { panic!() };
        let items: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            items,
            serde_json::json!([{"description": "Fuzzy Widget", "id": "a", "quantity": 1, "unit_price": 2.5}])
        );
        assert!(LineItemsEditor::open("{not json", false).is_err(), "a broken field is not replaced");
    }
}
