//! Records as a table: which columns a list of JSON records shows and what each cell says. The
//! console's browser and `opsdeck call -o table` share it, so both show the same columns. No
//! terminal code here; every cell is already [inert](crate::inert::inert).

use std::borrow::Cow;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::format::{self as money, epoch_text, is_time_column, timestamp_text};
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
    /// The currency of its amounts when the records do not say (a ledger's, named by the
    /// account it was asked for): a fiat amount is then written to its minor unit.
    pub unit: Option<String>,
}

impl Column {
    pub fn new(path: Vec<String>) -> Column {
        let money = path.last().is_some_and(|name| money::is_money_field(name));
        Column { path, money, qualified: false, unit: None }
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

    /// The same rows with the amounts of its money columns in `unit` (a currency) where the
    /// records do not say theirs.
    pub fn with_unit(mut self, unit: Option<String>) -> RowSpec {
        if let (Some(unit), Some(columns)) = (unit, self.columns.as_mut()) {
            for column in columns.iter_mut().filter(|c| c.money && c.unit.is_none()) {
                column.unit = Some(unit.clone());
            }
        }
        self
    }

    /// The table of `records` of `doc`: each cell formatted once, inert and cut to
    /// [`MAX_CELL`]. A long page is shared out among the cores: this runs off the UI thread,
    /// which is idle until the rows are there.
    pub fn table(&self, doc: &JsonDoc, records: &[NodeId]) -> Table {
        if let Some(columns) = &self.columns {
            let (rows, _) = self.all_rows(doc, records, columns, &[]);
            return Table { columns: columns.clone(), rows };
        }
        // Which fields are the same in every record is judged on a sample here, and confirmed
        // for every record while its row is made, when its bytes are at hand: a page read twice
        // would cost a second pass over a body larger than the caches. A field the sample got
        // wrong (the same in 200 records, not in all) sends the page through again, judged whole.
        let sampled = sample(records, COLUMN_SAMPLE);
        let (columns, left_out) =
            columns_judged(doc, records, self.id_field, &|path| same_everywhere(doc, &sampled, path));
        let first = records.first().map(|&record| doc.item(record));
        let checks: Vec<(Vec<String>, Option<&[u8]>)> = left_out
            .into_iter()
            .map(|path| {
                let value = first.and_then(|item| value_text(item, &path, &mut Vec::new()));
                (path, value)
            })
            .collect();
        let (rows, confirmed) = self.all_rows(doc, records, &columns, &checks);
        if confirmed {
            return Table { columns, rows };
        }
        let columns = columns_of(doc, records, self.id_field);
        let (rows, _) = self.all_rows(doc, records, &columns, &[]);
        Table { columns, rows }
    }

    /// The rows of `records`, a long page shared out among the cores; and whether every record
    /// has the value each of `checks` says at its path.
    fn all_rows(&self, doc: &JsonDoc, records: &[NodeId], columns: &[Column], checks: &Checks<'_>) -> (Vec<Row>, bool) {
        let threads = threads_for(records.len());
        if threads < 2 {
            return self.rows(doc, records, columns, checks);
        }
        let chunk = records.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> =
                records.chunks(chunk).map(|part| scope.spawn(|| self.rows(doc, part, columns, checks))).collect();
            let mut rows = Vec::with_capacity(records.len());
            let mut confirmed = true;
            for part in parts {
                // A part whose thread panicked yields no rows rather than taking the console down.
                let (part_rows, part_confirmed) = part.join().unwrap_or_default();
                rows.extend(part_rows);
                confirmed &= part_confirmed;
            }
            (rows, confirmed)
        })
    }

    fn rows(&self, doc: &JsonDoc, records: &[NodeId], columns: &[Column], checks: &Checks<'_>) -> (Vec<Row>, bool) {
        // Both buffers are reused for every cell: a page of 40,000 rows allocates its rows'
        // text and little else.
        let (mut line, mut scratch) = (String::new(), String::new());
        // Where each column's keys were in the last record: most records write them alike.
        let mut hints: Vec<Vec<usize>> = vec![Vec::new(); columns.len()];
        let mut check_hints: Vec<Vec<usize>> = vec![Vec::new(); checks.len()];
        let mut confirmed = true;
        let rows = records
            .iter()
            .map(|&record| {
                line.clear();
                let item = doc.item(record);
                for (index, (column, hints)) in columns.iter().zip(hints.iter_mut()).enumerate() {
                    if index > 0 {
                        line.push(CELL_SEPARATOR);
                    }
                    match self.cell.and_then(|cell| cell(item, column)) {
                        Some(text) => push_clean(&mut line, &text),
                        None => push_cell(&mut line, &mut scratch, item, column, self.id_field, hints),
                    }
                }
                if confirmed {
                    confirmed = checks
                        .iter()
                        .zip(check_hints.iter_mut())
                        .all(|((path, value), hints)| value_text(item, path, hints) == *value);
                }
                Row { record, cells: line.as_str().into() }
            })
            .collect();
        (rows, confirmed)
    }
}

/// Fields expected to be the same in every record: each path, and its value in the first.
type Checks<'a> = [(Vec<String>, Option<&'a [u8]>)];

/// Pages with fewer records than this are made into rows on one thread: starting threads would
/// cost more than it saves.
const PARALLEL_ROWS_FROM: usize = 4_000;

/// Records a page's columns are chosen from at most: a sample spread evenly over the whole page
/// (its first records included), so a page of 40,000 rows costs no more than one of 200 and an
/// odd first record (a plain-text message among objects) does not decide for the rest.
const COLUMN_SAMPLE: usize = 200;

/// A candidate column while a page is read: its path and in how many sampled records it is.
struct Candidate {
    path: Vec<String>,
    seen: usize,
}

/// The columns of a page: `id_field` first, then the scalar leaves of its records (nested
/// objects flattened), in the order the records write them.
///
/// Every record counts, not only the first: the keys of all sampled records are merged in
/// their order (a field one record has and another lacks goes where it was met), and a field
/// that fewer than half the records have gives way to those most have. A column whose value is
/// the same in every record of a page of more than one says nothing about any row (Ably's stats
/// `schema`), so it is left out: the inspector still has it. A status and the main amounts
/// ([`column_rank`] 0) are kept all the same, being what a row is read for.
pub fn columns_of(doc: &JsonDoc, records: &[NodeId], id_field: Option<&str>) -> Vec<Column> {
    columns_judged(doc, records, id_field, &|path| same_everywhere(doc, records, path)).0
}

/// [`columns_of`], a field's being the same in every record judged by `same` (over the whole
/// page, or a sample of it); and the paths left out as the same everywhere.
fn columns_judged(
    doc: &JsonDoc,
    records: &[NodeId],
    id_field: Option<&str>,
    same: &dyn Fn(&[String]) -> bool,
) -> (Vec<Column>, Vec<Vec<String>>) {
    fn walk(value: Item<'_>, path: &mut Vec<String>, found: &mut Vec<Candidate>, cursor: &mut Option<usize>) {
        if value.kind() != Kind::Object {
            return;
        }
        for child in value.children() {
            path.push(child.doc.key(child.id).unwrap_or_default());
            match child.kind() {
                Kind::Object if path.len() < MAX_DEPTH => walk(child, path, found, cursor),
                _ => {
                    if let Some(index) = found.iter().position(|c| c.path == *path) {
                        found[index].seen += 1;
                        *cursor = Some(index);
                    } else if found.len() < CANDIDATE_COLUMNS {
                        // A field not met before goes right after the one this record wrote
                        // before it, so the columns keep the order the records use.
                        let at = cursor.map_or(0, |c| c + 1);
                        found.insert(at, Candidate { path: path.clone(), seen: 1 });
                        *cursor = Some(at);
                    }
                }
            }
            path.pop();
        }
    }
    let sample = sample(records, COLUMN_SAMPLE);
    let mut found: Vec<Candidate> = Vec::new();
    for &record in &sample {
        walk(doc.item(record), &mut Vec::new(), &mut found, &mut None);
    }
    let id_path: Option<Vec<String>> = id_field.map(|id| vec![id.to_owned()]);
    found.retain(|c| Some(&c.path) != id_path.as_ref());
    let mut left_out = Vec::new();
    if records.len() > 1 {
        // A document's status and main amounts stay: `Committed` in every row still answers
        // the question the row is read for.
        let varies: Vec<bool> = found
            .iter()
            .map(|c| {
                let header = c.path.last().map_or("", String::as_str);
                column_rank(header) == 0 || !same(&c.path)
            })
            .collect();
        // Only when something is left: a page whose every field is the same still shows them.
        if id_field.is_some() || varies.contains(&true) {
            let (kept, gone): (Vec<_>, Vec<_>) = found.into_iter().zip(varies).partition(|(_, varies)| *varies);
            found = kept.into_iter().map(|(c, _)| c).collect();
            left_out = gone.into_iter().map(|(c, _)| c.path).collect();
        }
    }
    let mut columns: Vec<Column> = id_path.into_iter().map(Column::new).collect();
    let first = columns.len();
    let mut rest: Vec<(bool, Column)> =
        found.into_iter().map(|c| (c.seen * 2 < sample.len(), Column::new(c.path))).collect();
    if first == 0 && rest.is_empty() {
        rest.push((false, Column::new(vec!["value".into()])));
    }
    let headers: Vec<String> =
        columns.iter().chain(rest.iter().map(|(_, c)| c)).map(|c| c.header().to_owned()).collect();
    let alike = |column: &Column| headers.iter().filter(|h| *h == column.header()).count() > 1;
    for column in columns.iter_mut().chain(rest.iter_mut().map(|(_, c)| c)) {
        column.qualified = alike(column);
    }
    // Which columns make the cut: fields most records have before the rare ones; then a
    // document's status and main amounts before other fields, other records' ids after them;
    // otherwise the records' own order.
    rest.sort_by_key(|(rare, c)| (*rare, column_rank(c.header())));
    columns.extend(rest.into_iter().map(|(_, c)| c));
    columns.truncate(MAX_COLUMNS);
    // When is usually the second question after which: time columns come right after the id.
    columns[first..].sort_by_key(|c| !is_time_column(c.header()));
    (columns, left_out)
}

/// Up to `most` of `records`, spread evenly from the first to the last.
fn sample(records: &[NodeId], most: usize) -> Vec<NodeId> {
    if records.len() <= most {
        return records.to_vec();
    }
    (0..most).map(|i| records[i * (records.len() - 1) / (most - 1)]).collect()
}

/// Whether the value at `path` is written the same in every record (absent and `null` alike).
/// Stops at the first record that differs, which for most columns is the second.
fn same_everywhere(doc: &JsonDoc, records: &[NodeId], path: &[String]) -> bool {
    let mut hints = Vec::new();
    let Some((&head, rest)) = records.split_first() else { return true };
    let first = value_text(doc.item(head), path, &mut hints);
    rest.iter().all(|&record| value_text(doc.item(record), path, &mut hints) == first)
}

/// The value at `path` in `record` as written, `None` when absent or `null`.
fn value_text<'d>(record: Item<'d>, path: &[String], hints: &mut Vec<usize>) -> Option<&'d [u8]> {
    let value = record.path_hinted(path, hints).filter(|v| v.kind() != Kind::Null)?;
    Some(value.doc.text(value.id))
}

/// How many threads read `records` records: one below [`PARALLEL_ROWS_FROM`], else up to four.
fn threads_for(records: usize) -> usize {
    if records < PARALLEL_ROWS_FROM {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, usize::from).min(4)
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
/// written, containers as their size; money in money format, and in a time column any time
/// (epoch seconds or milliseconds, RFC 3339, RFC 2822) in the console's one format.
/// `scratch` is a buffer to decode into.
/// A money cell's text: in its column's currency when known.
fn amount_in(text: &str, column: &Column) -> Option<String> {
    match &column.unit {
        Some(unit) => money::amount_text(text, unit),
        None => money::money_text(text),
    }
}

fn push_cell(
    out: &mut String,
    scratch: &mut String,
    record: Item<'_>,
    column: &Column,
    id_field: Option<&str>,
    hints: &mut Vec<usize>,
) {
    let value = match record.kind() {
        Kind::Object => record.path_hinted(&column.path, hints),
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
            let formatted = match () {
                () if cut => None,
                () if column.money => amount_in(scratch, column),
                // RFC 2822 beside RFC 3339 on one screen reads as two kinds of time: every
                // time a table shows is written one way.
                () if is_time_column(column.header()) => timestamp_text(scratch),
                () => None,
            };
            match formatted {
                Some(text) => push_clean(out, &text),
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
                () if column.money => amount_in(&literal, column),
                () if is_time_column(column.header()) => value.as_f64().and_then(epoch_text),
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

/// What the width of a column on screen is chosen from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnNeed {
    /// Its header's width or its widest cell's, whichever is wider: what it needs to be whole.
    pub need: u16,
    /// Never cut: the id, which says which row it is, and times, where a cut one reads as a
    /// different time.
    pub whole: bool,
    /// No cell has a value: when room is short, it gives its room up first (a failure's reason
    /// among deliveries), and has it back when rows with values are shown.
    pub empty: bool,
}

/// Narrowest the last column shown is cut to, in the room the others leave.
const NARROWEST: u16 = 12;
/// A value this long or shorter (an address, an id, a name, a status) is shown whole or not at
/// all: cut, it says something else, and cutting it saves little room.
const SHORT: u16 = 24;
/// Narrowest a long value (a subject, a URL) is cut to among other columns.
const FLOOR: u16 = 20;

/// The width of each column shown in `total` terminal columns, `gap` between two: the columns
/// left out (trailing ones that do not fit) have none, so the result may be shorter.
///
/// When everything fits, each column is as wide as it needs. Else the columns empty on screen
/// give up their room, and a time or id that cannot be whole is not shown (width 0). Of the
/// rest, as many leading columns are shown as can be with every short value ([`SHORT`]) whole
/// and every long one cut to no fewer than [`FLOOR`] columns; the room they leave goes to the
/// columns cut, the most to those that need the most (each is cut to one level, the widest
/// first), so spare width never sits beside a cut value. Rather than every column cut to a
/// dozen characters (an e-mail address to 13 at 200 terminal columns), fewer columns are
/// shown and read whole; the inspector has the others. The first column left out still takes
/// what room remains when that is at least [`NARROWEST`].
pub fn fit_widths(columns: &[ColumnNeed], total: u16, gap: u16) -> Vec<u16> {
    let count = columns.len();
    let gaps = |k: usize| u32::from(gap) * u32::try_from(k.saturating_sub(1)).unwrap_or(u32::MAX);
    let total32 = u32::from(total);
    let fits = |needs: &[u32]| needs.iter().sum::<u32>() + gaps(needs.len()) <= total32;
    let mut needs: Vec<u32> = columns.iter().map(|c| u32::from(c.need)).collect();
    if fits(&needs) {
        return columns.iter().map(|c| c.need).collect();
    }
    for (need, column) in needs.iter_mut().zip(columns).skip(1) {
        if column.empty {
            *need = 0;
        }
    }
    if fits(&needs) {
        return needs.iter().map(|n| u16::try_from(*n).unwrap_or(u16::MAX)).collect();
    }
    let whole = |i: usize| i == 0 || columns[i].whole;
    // A time or id that cannot be whole beside the ones before it is not shown at all.
    let mut fixed = 0;
    for (i, need) in needs.iter_mut().enumerate().filter(|(i, _)| whole(*i)) {
        if i > 0 && fixed + *need + gaps(i + 1) > total32 {
            *need = 0;
        } else {
            fixed += *need;
        }
    }
    // The longest run of leading columns that can be shown well, and the level cut ones get.
    let mut shown = 1;
    let mut level = None;
    for k in (2..=count).rev() {
        let cells = total32.checked_sub(gaps(k) + (0..k).filter(|i| whole(*i)).map(|i| needs[i]).sum::<u32>());
        let cut: Vec<u32> = (0..k).filter(|i| !whole(*i)).map(|i| needs[i]).collect();
        let Some(cells) = cells else { continue };
        let found = water_level(&cut, cells);
        let good = match found {
            None => true,
            Some(l) => l >= u32::from(FLOOR) && cut.iter().all(|n| *n <= l || *n > u32::from(SHORT)),
        };
        if good {
            (shown, level) = (k, found);
            break;
        }
    }
    let mut widths: Vec<u32> = (0..shown)
        .map(|i| match level {
            Some(l) if !whole(i) => needs[i].min(l),
            _ => needs[i],
        })
        .collect();
    widths[0] = widths[0].min(total32);
    // What the level's rounding left, a column at a time to those still cut.
    let mut left = total32.saturating_sub(widths.iter().sum::<u32>() + gaps(shown));
    for (i, width) in widths.iter_mut().enumerate() {
        if left > 0 && *width < needs[i] {
            *width += 1;
            left -= 1;
        }
    }
    // The first column left out takes what remains, when that is enough to read.
    if let Some(next) = (shown < count).then_some(shown).filter(|i| !whole(*i) && needs[*i] > 0) {
        let room = total32.saturating_sub(widths.iter().sum::<u32>() + gaps(shown + 1));
        if room >= needs[next].min(u32::from(NARROWEST)) {
            widths.push(room.min(needs[next]));
        }
    }
    while widths.len() > 1 && widths.last() == Some(&0) {
        widths.pop();
    }
    widths.into_iter().map(|w| u16::try_from(w).unwrap_or(u16::MAX)).collect()
}

/// The widest level `needs` can all be cut to (each `min(need, level)`) in `cells` columns;
/// `None` when they fit whole.
fn water_level(needs: &[u32], cells: u32) -> Option<u32> {
    if needs.iter().sum::<u32>() <= cells {
        return None;
    }
    let mut sorted = needs.to_vec();
    sorted.sort_unstable();
    let mut remaining = cells;
    for (j, need) in sorted.iter().enumerate() {
        let rest = u32::try_from(sorted.len() - j).unwrap_or(u32::MAX);
        if need * rest > remaining {
            return Some(remaining / rest);
        }
        remaining -= need;
    }
    None
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

    fn labels(records: &[serde_json::Value], id_field: Option<&'static str>) -> Vec<String> {
        let (doc, nodes) = JsonDoc::from_values(records).unwrap();
        columns_of(&doc, &nodes, id_field).iter().map(Column::label).collect()
    }

    #[test]
    fn columns_come_from_every_record_not_the_first() {
        // One plain-text message published on a channel of alerts: it is the newest, so first.
        let alert = |n: u32| {
            json!({"id": format!("m:{n}"), "name": "alert.firing", "data": {"service": "billing", "severity": "warning",
                "summary": format!("queue depth {n}"), "runbook": format!("https://runbooks.example.com/{n}")},
                "clientId": "alertmanager", "connectionId": format!("c{n}"), "timestamp": 1_795_713_297_688_i64 + i64::from(n),
                "serial": format!("s{n}"), "action": 0})
        };
        let mut page = vec![json!({"id": "m:0", "name": "greeting", "data": "hello plain text", "clientId": "me",
            "connectionId": "c0", "timestamp": 1_795_713_297_999_i64, "serial": "s0", "action": 0})];
        page.extend((1..=5).map(alert));
        let columns = labels(&page, Some("id"));
        assert_eq!(columns[..6], ["id", "timestamp", "name", "service", "severity", "summary"], "{columns:?}");
        assert!(
            !columns.contains(&"data".to_owned()),
            "one plain message does not make a column of {{…4}}: {columns:?}"
        );
        let text = render_values(&page, Some("id"), None).unwrap();
        assert!(!text.contains("{…"), "{text}");
    }

    #[test]
    fn a_field_the_sample_finds_the_same_but_one_record_does_not_is_still_a_column() {
        // Long pages judge on a sample of 200 records and confirm while the rows are made, on
        // one thread (1,000 records) and on several (5,000): record 1 is in no sample.
        for count in [1_000, 5_000] {
            let page: Vec<serde_json::Value> = (0..count)
                .map(|n| json!({"id": n, "kind": if n == 1 { "odd" } else { "even" }, "unit": "u", "n": n * 7}))
                .collect();
            let (doc, nodes) = JsonDoc::from_values(&page).unwrap();
            let table = RowSpec::new(Some("id"), None).table(&doc, &nodes);
            let shown: Vec<String> = table.columns.iter().map(Column::label).collect();
            assert_eq!(shown, ["id", "kind", "n"], "{count} records");
            assert_eq!(table.columns, columns_of(&doc, &nodes, Some("id")));
            assert_eq!(table.rows.len(), count);
            assert_eq!(table.rows[1].cells().collect::<Vec<_>>(), ["1", "odd", "7"]);
            // Truly the same everywhere: left out, with no second pass needed to say so.
            let same: Vec<serde_json::Value> = (0..count).map(|n| json!({"id": n, "unit": "u", "n": n})).collect();
            let (doc, nodes) = JsonDoc::from_values(&same).unwrap();
            let table = RowSpec::new(Some("id"), None).table(&doc, &nodes);
            assert_eq!(table.columns.iter().map(Column::label).collect::<Vec<_>>(), ["id", "n"]);
        }
    }

    #[test]
    fn a_column_the_same_in_every_row_is_left_out() {
        let stat = |minute: u32, count: u32| {
            json!({"intervalId": format!("2026-11-26:17:{minute:02}"), "unit": "minute",
                "schema": "https://schemas.ably.com/json/app-stats-0.0.5.json", "count": count, "peak": null})
        };
        let columns = labels(&[stat(21, 3), stat(20, 125), stat(19, 149)], Some("intervalId"));
        assert_eq!(columns, ["intervalId", "count"], "schema, unit and an all-null peak say nothing");
        // One row: nothing to compare with, everything is shown.
        assert_eq!(labels(&[stat(21, 3)], Some("intervalId")), ["intervalId", "unit", "schema", "count", "peak"]);
        // A status and a main amount stay, the same or not: they are what a row is read for.
        let transaction = |code: &str| json!({"code": code, "status": "Committed", "totalAmount": 10, "version": 1});
        assert_eq!(labels(&[transaction("A"), transaction("B")], Some("code")), ["code", "status", "totalAmount"]);
        // The id stays even when every row has the same; so do the columns of a page of copies.
        assert_eq!(labels(&[json!({"id": 1, "a": 2}), json!({"id": 1, "a": 2})], Some("id")), ["id"]);
        assert_eq!(labels(&[json!({"a": 1, "b": 2}), json!({"a": 1, "b": 2})], None), ["a", "b"]);
    }

    #[test]
    fn times_read_one_way_whatever_their_shape() {
        let records = vec![
            json!({"name": "a", "created_at": "Mon, 01 Jan 2024 10:05:00 GMT", "updated_at": "2024-01-01T11:05:00+01:00",
                "timestamp": 1_704_103_500.25, "note": "Mon, 01 Jan 2024 10:05:00 GMT", "expires": 3600}),
            json!({"name": "b", "created_at": "not a time", "updated_at": "2024-01-01T10:05:00Z",
                "timestamp": 1_704_103_500_000_i64, "note": "x", "expires": 60}),
        ];
        let text = render_values(&records, Some("name"), None).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1].matches("2024-01-01 10:05:00").count(), 3, "{text}");
        assert!(
            lines[1].contains("Mon, 01 Jan 2024 10:05:00 GMT"),
            "a column that is no time is left as it is: {text}"
        );
        assert!(lines[1].contains("3600") && lines[2].contains("60"), "a count in a time column stays a count: {text}");
        assert!(lines[2].contains("not a time") && lines[2].matches("2024-01-01 10:05:00").count() == 2, "{text}");
    }

    fn need(need: u16) -> ColumnNeed {
        ColumnNeed { need, whole: false, empty: false }
    }

    #[test]
    fn widths_show_fewer_columns_whole_rather_than_all_cut() {
        // Everything fits: as wide as needed, wider than any old cap.
        assert_eq!(fit_widths(&[need(10), need(55)], 80, 1), [10, 55]);
        // Mailgun failures in the 88 columns the browser has at 200: time, event, recipient,
        // subject, severity, reason, code, from. The address stays whole (it was cut to 13),
        // the subject is cut, and the failure columns wait for the inspector.
        let time = ColumnNeed { need: 19, whole: true, empty: false };
        let widths = fit_widths(&[time, need(6), need(18), need(34), need(9), need(23), need(4), need(48)], 88, 1);
        assert_eq!(widths, [19, 6, 18, 32, 9], "{widths:?}");
        // Ably messages: id, time, name, service, severity whole, the summary in what is left.
        let id = ColumnNeed { whole: true, ..need(16) };
        let widths = fit_widths(&[id, time, need(14), need(13), need(8), need(25), need(40), need(12)], 88, 1);
        assert_eq!(widths, [16, 19, 14, 13, 8, 13], "{widths:?}");
        // Spare room goes to the columns cut, the widest first, to one level.
        assert_eq!(fit_widths(&[need(10), need(30), need(60)], 70, 1), [10, 29, 29]);
        assert_eq!(fit_widths(&[need(10), need(22), need(60)], 70, 1), [10, 22, 36]);
        // The first column left out takes what room is left, when enough to read.
        assert_eq!(
            fit_widths(&[ColumnNeed { whole: true, ..need(36) }, time, need(4), need(60)], 88, 1),
            [36, 19, 4, 26]
        );
        // Empty columns give their room up; a time that cannot be whole is skipped; a lone
        // first column is cut to the room.
        let empty = ColumnNeed { empty: true, ..need(30) };
        assert_eq!(fit_widths(&[need(10), empty, need(19)], 30, 1), [10, 0, 18]);
        assert_eq!(fit_widths(&[id, time, need(14), need(13)], 34, 1), [16, 0, 14]);
        assert_eq!(fit_widths(&[ColumnNeed { whole: true, ..need(50) }, need(5)], 20, 1), [20]);
        assert_eq!(fit_widths(&[], 20, 1), Vec::<u16>::new());
        assert_eq!(fit_widths(&[need(5)], 0, 1), [0]);
        // Whatever the room, what is returned fits in it.
        let page = [id, time, need(30), need(8), need(60), need(23), need(4), need(48)];
        for total in 0..200 {
            let widths = fit_widths(&page, total, 1);
            let used: u32 = widths.iter().map(|w| u32::from(*w)).sum::<u32>() + widths.len().saturating_sub(1) as u32;
            assert!(used <= u32::from(total) || widths.len() == 1, "{total}: {widths:?}");
        }
    }
}
