//! Records as a table: which columns a list of JSON records shows and what each cell says. The
//! console's browser and `opsdeck call -o table` share it, so both show the same columns. No
//! terminal code here; every cell is already [inert](crate::inert::inert).

use std::borrow::Cow;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::format::{self as money, epoch_ms_text, is_time_column};
use crate::inert::inert;
use crate::json_index::{Item, JsonDoc, JsonError, Kind, NodeId};

/// Columns shown at most; the inspector shows everything.
pub const MAX_COLUMNS: usize = 8;
/// Columns considered before the best [`MAX_COLUMNS`] are kept.
const CANDIDATE_COLUMNS: usize = 32;
/// Terminal columns of a cell kept; the inspector shows the whole value.
pub const MAX_CELL: usize = 60;

/// A column: the path of keys to a value in each record, and the header shown (the last key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub path: Vec<String>,
    /// Amounts are shown in money format and right-aligned.
    pub money: bool,
    /// The last two keys when the last alone would name two columns alike
    /// (`minimum_rate.rate`, `average_rate.rate`).
    pub qualified: bool,
}

impl Column {
    pub fn new(path: Vec<String>) -> Column {
        let money = path.last().is_some_and(|name| money::is_money_field(name));
        Column { path, money, qualified: false }
    }

    /// The field name: what decides how its values are shown.
    pub fn header(&self) -> &str {
        self.path.last().map_or("value", String::as_str)
    }

    /// What the header says.
    pub fn label(&self) -> String {
        match self.path.as_slice() {
            [.., parent, last] if self.qualified => format!("{parent}.{last}"),
            _ => self.header().to_owned(),
        }
    }
}

/// How deep nested objects are flattened into columns (`status.occupancy.metrics.connections`).
const MAX_DEPTH: usize = 4;

/// Columns chosen for a kind of record whose generic columns say little (Mailgun events, with
/// forty nested fields), and how their cells read where the generic text would not do.
#[derive(Clone, Debug)]
pub struct Layout {
    pub columns: Vec<Column>,
    /// A cell's text, or `None` for the generic one ([`push_cell`]).
    pub cell: CellFn,
}

/// A layout's own text for a cell, or `None` for the generic one.
pub type CellFn = fn(Item<'_>, &Column) -> Option<String>;

/// Separates the cells of a row in [`Row::cells`]: a C0 control, which [`inert`] never lets
/// into a cell, so it cannot clash with a cell's text.
pub const CELL_SEPARATOR: char = '\u{1f}';

/// One record as a table row: the record's node and its cells' text, formatted once.
#[derive(Clone, Debug)]
pub struct Row {
    pub record: NodeId,
    /// Every cell, joined by [`CELL_SEPARATOR`]: one allocation per row, so 40,000 rows of 8
    /// columns cost 40,000 strings rather than 320,000.
    pub cells: Box<str>,
}

impl Row {
    /// The text of each cell, in column order.
    pub fn cells(&self) -> impl Iterator<Item = &str> {
        self.cells.split(CELL_SEPARATOR)
    }
}

/// The records of a page as rows under their columns.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

/// How a page's rows are made: the id column, and the columns and cells of a layout (or, for
/// rows that join a table already shown, its columns).
#[derive(Clone, Debug, Default)]
pub struct RowSpec {
    pub id_field: Option<&'static str>,
    /// `None`: the columns come from the records ([`columns_of`]).
    pub columns: Option<Vec<Column>>,
    pub cell: Option<CellFn>,
}

impl RowSpec {
    pub fn new(id_field: Option<&'static str>, layout: Option<Layout>) -> RowSpec {
        match layout {
            Some(layout) => RowSpec { id_field, columns: Some(layout.columns), cell: Some(layout.cell) },
            None => RowSpec { id_field, columns: None, cell: None },
        }
    }

    /// The table of `records` of `doc`: each cell formatted once, inert and cut to
    /// [`MAX_CELL`]. A long page is shared out among the cores: this runs off the UI thread,
    /// which is idle until the rows are there.
    pub fn table(&self, doc: &JsonDoc, records: &[NodeId]) -> Table {
        let columns = self.columns.clone().unwrap_or_else(|| columns_of(doc, records, self.id_field));
        let threads = std::thread::available_parallelism().map_or(1, usize::from).min(4);
        let rows = if records.len() < PARALLEL_ROWS_FROM || threads < 2 {
            self.rows(doc, records, &columns)
        } else {
            let chunk = records.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let parts: Vec<_> =
                    records.chunks(chunk).map(|part| scope.spawn(|| self.rows(doc, part, &columns))).collect();
                // A part whose thread panicked yields no rows rather than taking the console down.
                parts.into_iter().flat_map(|part| part.join().unwrap_or_default()).collect()
            })
        };
        Table { columns, rows }
    }

    fn rows(&self, doc: &JsonDoc, records: &[NodeId], columns: &[Column]) -> Vec<Row> {
        // Both buffers are reused for every cell: a page of 40,000 rows allocates its rows'
        // text and little else.
        let (mut line, mut scratch) = (String::new(), String::new());
        records
            .iter()
            .map(|&record| {
                line.clear();
                let item = doc.item(record);
                for (index, column) in columns.iter().enumerate() {
                    if index > 0 {
                        line.push(CELL_SEPARATOR);
                    }
                    match self.cell.and_then(|cell| cell(item, column)) {
                        Some(text) => push_clean(&mut line, &text),
                        None => push_cell(&mut line, &mut scratch, item, column, self.id_field),
                    }
                }
                Row { record, cells: line.as_str().into() }
            })
            .collect()
    }
}

/// Pages with fewer records than this are made into rows on one thread: starting threads would
/// cost more than it saves.
const PARALLEL_ROWS_FROM: usize = 4_000;

/// The columns of a page: `id_field` first, then the scalar leaves of the first records in
/// order of appearance, nested objects flattened.
pub fn columns_of(doc: &JsonDoc, records: &[NodeId], id_field: Option<&str>) -> Vec<Column> {
    let mut columns: Vec<Column> = Vec::new();
    if let Some(id) = id_field {
        columns.push(Column::new(vec![id.to_owned()]));
    }
    fn walk(value: Item<'_>, path: &mut Vec<String>, columns: &mut Vec<Column>) {
        if value.kind() != Kind::Object {
            return;
        }
        for child in value.children() {
            if columns.len() >= CANDIDATE_COLUMNS {
                return;
            }
            path.push(child.doc.key(child.id).unwrap_or_default());
            match child.kind() {
                Kind::Object if path.len() < MAX_DEPTH => walk(child, path, columns),
                _ => {
                    if !columns.iter().any(|c| c.path == *path) {
                        columns.push(Column::new(path.clone()));
                    }
                }
            }
            path.pop();
        }
    }
    for &record in records.iter().take(50) {
        walk(doc.item(record), &mut Vec::new(), &mut columns);
    }
    if columns.is_empty() {
        columns.push(Column::new(vec!["value".into()]));
    }
    let headers: Vec<String> = columns.iter().map(|c| c.header().to_owned()).collect();
    for column in &mut columns {
        column.qualified = headers.iter().filter(|h| *h == column.header()).count() > 1;
    }
    // Which columns make the cut: a document's status and main amounts before other fields,
    // other records' ids after them; otherwise the records' own order.
    let first = usize::from(id_field.is_some()).min(columns.len());
    columns[first..].sort_by_key(|c| column_rank(c.header()));
    columns.truncate(MAX_COLUMNS);
    // When is usually the second question after which: time columns come right after the id.
    columns[first..].sort_by_key(|c| !is_time_column(c.header()));
    columns
}

/// Whether a column is kept before others when not all fit (lower first); equal ranks keep
/// the records' order.
pub fn column_rank(header: &str) -> u8 {
    if header == "status" || PRIMARY_AMOUNTS.contains(&header) {
        0
    } else if header == "id" || header.ends_with("Id") {
        2
    } else {
        1
    }
}

/// The amounts a row of orders or transactions is read for.
const PRIMARY_AMOUNTS: &[&str] =
    &["totalAmount", "totalTax", "amount", "sales_tax", "order_total_amount", "amount_to_collect"];

/// Appends the generic text of a record's cell to `out`: strings as they are, numbers as
/// written (money in money format, millisecond times as dates), containers as their size.
/// `scratch` is a buffer to decode into.
fn push_cell(out: &mut String, scratch: &mut String, record: Item<'_>, column: &Column, id_field: Option<&str>) {
    let value = match record.kind() {
        Kind::Object => record.path(&column.path),
        // A list of bare values (channel names): the value is the id column.
        _ if Some(column.header()) == id_field || column.header() == "value" => Some(record),
        _ => None,
    };
    let Some(value) = value else { return };
    match value.kind() {
        Kind::Null => {}
        Kind::Object => push_clean(out, &format!("{{…{}}}", value.len())),
        Kind::Array => push_clean(out, &format!("[…{}]", value.len())),
        Kind::String => {
            // Only what a cell can show is decoded: a string may be megabytes long.
            scratch.clear();
            let cut = value.push_str_prefix(scratch, MAX_CELL + 1).unwrap_or_default();
            match (column.money && !cut).then(|| money::money_text(scratch)).flatten() {
                Some(amount) => push_clean(out, &amount),
                None if cut => {
                    scratch.push('…');
                    push_clean(out, scratch);
                }
                None => push_clean(out, scratch),
            }
        }
        Kind::Number => {
            let literal = value.literal().unwrap_or_default();
            let formatted = match () {
                () if column.money => money::money_text(&literal),
                () if is_time_column(column.header()) => value.as_i64().and_then(epoch_ms_text),
                () => None,
            };
            push_clean(out, formatted.as_deref().unwrap_or(&literal));
        }
        Kind::Bool => push_clean(out, &value.literal().unwrap_or_default()),
    }
}

/// Appends a cell's text on one line, inert and cut to [`MAX_CELL`] columns; without a copy of
/// its own for the usual short, printable
/// ASCII cell.
pub fn push_clean(out: &mut String, text: &str) {
    if text.len() <= MAX_CELL && text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        out.push_str(text);
        return;
    }
    let one_line = if text.contains(['\n', '\r', '\t']) {
        Cow::Owned(text.replace(['\n', '\r', '\t'], " "))
    } else {
        Cow::Borrowed(text)
    };
    out.push_str(&truncate_to_width(&inert(&one_line), MAX_CELL));
}

/// `text` in at most `max` terminal columns, cut with `…` between characters, so a wide
/// character (`注`, two columns) is shown whole or not at all.
pub fn truncate_to_width(text: &str, max: usize) -> String {
    if text.width() <= max {
        return text.to_owned();
    }
    let mut cut = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max.saturating_sub(1) {
            break;
        }
        cut.push(c);
        used += w;
    }
    cut.push('…');
    cut
}

/// Records as plain aligned text, one line per record under a header line, with the columns the
/// console's browser shows (`id_field` first). Money is right-aligned; a trailing newline ends
/// every line. Every cell is inert, so the text is safe on a terminal.
pub fn render_text(
    doc: &JsonDoc,
    records: &[NodeId],
    id_field: Option<&'static str>,
    layout: Option<Layout>,
) -> String {
    let table = RowSpec::new(id_field, layout).table(doc, records);
    let columns = &table.columns;
    let header: Vec<String> = columns.iter().map(|c| inert(&c.label()).into_owned()).collect();
    let rows: Vec<Vec<&str>> = table.rows.iter().map(|row| row.cells().collect()).collect();
    let widths: Vec<usize> = (0..columns.len())
        .map(|i| rows.iter().map(|row| row[i].width()).chain([header[i].width()]).max().unwrap_or(0))
        .collect();
    let mut text = String::new();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, (cell, column)) in row.iter().zip(columns).enumerate() {
            let pad = " ".repeat(widths[i].saturating_sub(cell.width()));
            let last = i + 1 == columns.len();
            if i > 0 {
                line.push_str("  ");
            }
            if column.money {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if !last {
                    line.push_str(&pad);
                }
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// [`render_text`] of records that are values already (a jq filter's results): they are
/// written out once and indexed, so there is one way to make a table.
pub fn render_values(
    records: &[serde_json::Value],
    id_field: Option<&'static str>,
    layout: Option<Layout>,
) -> Result<String, JsonError> {
    let (doc, rows) = JsonDoc::from_values(records)?;
    Ok(render_text(&doc, &rows, id_field, layout))
}

/// The cells `spec` makes of one record, for tests of a layout's cells.
#[cfg(test)]
pub(crate) fn cells_of(record: &serde_json::Value, spec: &RowSpec) -> Vec<String> {
    let (doc, records) = JsonDoc::from_values(std::slice::from_ref(record)).unwrap_or_else(|e| panic!("{e}"));
    let table = spec.table(&doc, &records);
    table.rows[0].cells().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plain_table_has_the_browser_columns_aligned() {
        let records = vec![
            json!({"code": "INV-1", "status": "Committed", "totalAmount": 1234.5, "note": "a\u{1b}[2Jb"}),
            json!({"code": "INV-22", "status": "Saved", "totalAmount": 7, "note": "x"}),
        ];
        let text = render_values(&records, Some("code"), None).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("code    status"), "{text}");
        assert!(lines[1].contains("1,234.50") && lines[2].contains("7.00"), "{text}");
        let end = |line: &str, needle: &str| line.find(needle).map(|i| i + needle.len());
        assert_eq!(end(lines[1], "1,234.50"), end(lines[2], "7.00"), "money is right-aligned:\n{text}");
        assert!(text.contains("a␛[2Jb") && !text.contains('\u{1b}'), "cells are inert: {text}");
    }

    #[test]
    fn bare_values_are_one_column() {
        let text = render_values(&[json!("a"), json!("b")], Some("channelId"), None).unwrap();
        assert_eq!(text, "channelId\na\nb\n");
        assert_eq!(render_values(&[], None, None).unwrap(), "value\n");
    }

    #[test]
    fn cells_read_from_the_index() {
        let record = json!({"id": "a\"b", "note": format!("line\n{}", "ü".repeat(1_000_000)), "amount": "1234.5",
            "created": 1_700_000_000_000_i64, "meta": {"a": 1, "b": [1, 2]}, "tags": [1, 2, 3], "gone": null,
            "ok": false, "bidi": "a\u{202e}b"});
        let columns = ["id", "note", "amount", "created", "meta", "tags", "gone", "ok", "bidi"]
            .map(|name| Column::new(vec![name.to_owned()]))
            .to_vec();
        let spec = RowSpec { id_field: Some("id"), columns: Some(columns), cell: None };
        let cells = cells_of(&record, &spec);
        assert_eq!(cells[0], "a\"b");
        assert!(cells[1].starts_with("line üü") && cells[1].ends_with('…'), "one line, cut: {}", cells[1]);
        assert_eq!(cells[1].chars().count(), MAX_CELL);
        assert_eq!(&cells[2..8], ["1,234.50", "2023-11-14 22:13:20", "{…2}", "[…3]", "", "false"]);
        assert_eq!(cells[8], "a\\u{202e}b", "inert");
        let rows = vec![json!({"id": 1, "n": 2}), json!({"id": 2, "n": 3})];
        let doc = JsonDoc::parse(serde_json::to_vec(&rows).unwrap().into()).unwrap();
        let table = RowSpec::new(Some("id"), None).table(&doc, &doc.records().unwrap());
        let cells: Vec<Vec<&str>> = table.rows.iter().map(|r| r.cells().collect()).collect();
        assert_eq!(cells, [["1", "2"], ["2", "3"]]);
        assert_eq!(table.rows[1].cells().nth(1), Some("3"));
    }

    #[test]
    fn cells_are_cut_to_a_width_whole_characters_only() {
        assert_eq!(truncate_to_width("注文注文", 5), "注文…");
        assert_eq!(truncate_to_width("short", 60), "short");
    }
}
