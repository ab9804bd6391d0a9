//! The middle pane: the rows of one resource as a table. A page's rows are read from the same
//! index the inspector shows the page with, and their cells are formatted once, off the UI
//! thread ([`RowSpec::table`]); a frame draws only the rows that fit, so drawing costs the same
//! for 10 rows or 100,000, and no `serde_json::Value` of a page is ever made.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, Wrap};
use ratatui::Frame;
use serde_json::Value;
use unicode_width::UnicodeWidthStr;

use crate::format::is_time_column;
use crate::inert::inert;
use crate::json_index::{Item, JsonDoc, Kind};
use crate::table::{fit_widths, Column, ColumnNeed, RowSpec, CELL_SEPARATOR};
pub use crate::table::{truncate_to_width, Layout};
use crate::tui::components::detail::Tone;
use crate::tui::components::line_input::LineInput;
use crate::tui::theme::Theme;

/// What a row that arrived while tailing starts with.
pub const NEW_MARK: &str = "● ";

/// A cell's tone by its column header and text, as a service tones its lists.
pub type ToneFn = fn(&str, &str) -> Option<Tone>;

/// What a key did in the browser, for the app to act on.
#[derive(Debug, PartialEq, Eq)]
pub enum BrowserAction {
    None,
    /// Enter on a row: show this record (index into the rows).
    Open(usize),
    /// The selected row changed.
    Selected(usize),
}

/// A row shown: the page its record is in (tailed rows come from several pages), the record
/// and its cells.
#[derive(Clone, Debug)]
struct Shown {
    doc: Arc<JsonDoc>,
    row: crate::table::Row,
    /// Arrived while tailing (shown with [`NEW_MARK`]).
    new: bool,
}

impl Shown {
    fn item(&self) -> Item<'_> {
        self.doc.item(self.row.record)
    }

    /// The record's id as written in the page (`"ch_1"`, `17`), or a bare value's own text.
    fn id(&self, id_field: Option<&str>) -> Option<&[u8]> {
        let item = self.item();
        match (item.kind(), id_field) {
            (Kind::Object, Some(field)) => item.get(field).map(|id| self.doc.text(id.id)),
            (Kind::Object, None) => None,
            _ => Some(self.doc.text(item.id)),
        }
    }
}

/// The browser's state.
#[derive(Default)]
pub struct Browser {
    pub title: String,
    /// How a cell is toned by its column and text (a document's status, an email event): the
    /// tab's service says.
    pub tone: Option<ToneFn>,
    columns: Vec<Column>,
    rows: Vec<Shown>,
    id_field: Option<&'static str>,
    /// The columns and cells of this kind of record, when not the generic ones.
    layout: Option<Layout>,
    /// Shown in the title while the list is tailed (`tail 2 s · 3 new`).
    pub tail_note: Option<String>,
    /// Lower-cased row text for the filter, built when a filter is first typed (empty until
    /// then, and after the rows change).
    haystacks: Vec<Box<str>>,
    /// Indices of the rows that match the filter, in order.
    visible: Vec<usize>,
    selected: usize,
    offset: usize,
    pub filter: LineInput,
    filter_editing: bool,
    /// "page 2 · 40,000 rows", shown in the title.
    pub page_label: String,
    /// The filters the list was asked with, shown in the title so a short list is never a
    /// mystery (`only deviceId=dev-1 (c clears)`).
    pub filter_note: Option<String>,
    /// Shown instead of rows: loading, errors, "not simulated yet".
    pub notice: Option<(String, bool)>,
    height: usize,
    /// How many of `columns`, at the end, were added by [`Browser::set_extra`].
    extra_columns: usize,
}

impl Browser {
    /// Replaces the rows with records built in code (tests, benchmarks): they are written out
    /// and indexed like a page that arrived. `id_field` names the column shown first.
    pub fn set_records(&mut self, records: Vec<Value>, id_field: Option<&'static str>) {
        self.set_records_as(records, id_field, None);
    }

    /// [`Browser::set_records`] with the columns and cells of `layout` (`None`: the generic ones).
    pub fn set_records_as(&mut self, records: Vec<Value>, id_field: Option<&'static str>, layout: Option<Layout>) {
        match JsonDoc::from_values(&records) {
            Ok((doc, nodes)) => {
                let table = RowSpec::new(id_field, layout.clone()).table(&doc, &nodes);
                self.set_page(Arc::new(doc), table, id_field, layout);
            }
            Err(e) => self.notice = Some((format!("these records cannot be shown: {e}"), true)),
        }
    }

    /// Replaces the rows with a page's table, built from `doc` by [`RowSpec::table`] (off the
    /// UI thread: see the app's indexing).
    pub fn set_page(
        &mut self,
        doc: Arc<JsonDoc>,
        table: crate::table::Table,
        id_field: Option<&'static str>,
        layout: Option<Layout>,
    ) {
        // A reload keeps the cursor on the same record (by id), so an action on it and the
        // refresh that follows do not move the user to another row.
        let kept = self.selected_shown().and_then(|r| r.id(self.id_field)).map(<[u8]>::to_vec);
        self.layout = layout;
        self.id_field = id_field;
        self.columns = table.columns;
        self.extra_columns = 0;
        self.rows = table.rows.into_iter().map(|row| Shown { doc: doc.clone(), row, new: false }).collect();
        self.haystacks.clear();
        self.notice = None;
        self.apply_filter();
        let rows = &self.rows;
        self.selected = kept
            .and_then(|id| self.visible.iter().position(|i| rows[*i].id(id_field) == Some(id.as_slice())))
            .unwrap_or(0);
        self.offset = 0;
    }

    /// Adds columns right after the first (the record's id), with cells from elsewhere than the
    /// page (a product's live price, asked for separately), found by each row's `field`; a row
    /// with none yet shows `…`. Called again, it replaces the cells it added; the page's records
    /// are untouched, so the inspector shows only what the server sent for them.
    pub fn set_extra(&mut self, field: &str, headers: &[&str], cells: &dyn Fn(&str) -> Option<Vec<String>>) {
        let at = usize::from(!self.columns.is_empty());
        let old = self.extra_columns.min(self.columns.len().saturating_sub(at));
        let added = headers.iter().map(|header| {
            let mut column = Column::new(vec![(*header).to_owned()]);
            // Numbers from elsewhere: right-aligned like amounts.
            column.money = true;
            column
        });
        self.columns.splice(at..at + old, added);
        self.extra_columns = headers.len();
        for shown in &mut self.rows {
            let id = shown.item().get(field).and_then(Item::as_str);
            let extra = id.and_then(|id| cells(&id)).unwrap_or_default();
            let own: Vec<&str> = shown.row.cells().collect();
            let mut text = String::new();
            let mut parts: Vec<String> = Vec::with_capacity(own.len() + headers.len());
            parts.extend(own.iter().take(at).map(|c| (*c).to_owned()));
            for index in 0..headers.len() {
                let mut cell = String::new();
                crate::table::push_clean(&mut cell, extra.get(index).map_or("…", String::as_str));
                parts.push(cell);
            }
            parts.extend(own.iter().skip(at + old).map(|c| (*c).to_owned()));
            for (index, part) in parts.iter().enumerate() {
                if index > 0 {
                    text.push(CELL_SEPARATOR);
                }
                text.push_str(part);
            }
            shown.row.cells = text.into();
        }
        // The cursor stays on its row, whatever a filter now matches.
        let kept = self.visible.get(self.selected).copied();
        self.haystacks.clear();
        self.apply_filter();
        if let Some(at) = kept.and_then(|row| self.visible.iter().position(|i| *i == row)) {
            self.selected = at;
        }
    }

    /// The values of `field` of the rows in view (the first `most` of them when nothing has
    /// been drawn yet), at most `most`: what a list asks about row by row.
    pub fn ids_in_view(&self, field: &str, most: usize) -> Vec<String> {
        let rows = if self.height == 0 { most } else { self.height.min(most) };
        let start = if self.height == 0 { 0 } else { self.offset };
        self.visible
            .iter()
            .skip(start)
            .take(rows)
            .filter_map(|i| self.rows.get(*i)?.item().get(field)?.as_str())
            .collect()
    }

    /// How rows of a later page of this list are made to join these ([`Browser::merge_rows`]):
    /// under the columns shown, or the columns of their own records when nothing is shown.
    pub fn spec_for_more(&self, id_field: Option<&'static str>) -> RowSpec {
        if self.rows.is_empty() {
            return RowSpec::new(id_field, self.layout.clone());
        }
        RowSpec { id_field, columns: Some(self.columns.clone()), cell: self.layout.as_ref().map(|l| l.cell) }
    }

    /// Tail mode with records built in code (tests): see [`Browser::merge_rows`].
    pub fn merge_new(&mut self, fresh: Vec<Value>, id_field: Option<&'static str>, cap: usize) -> usize {
        let Ok((doc, nodes)) = JsonDoc::from_values(&fresh) else { return 0 };
        let table = self.spec_for_more(id_field).table(&doc, &nodes);
        self.merge_rows(Arc::new(doc), table, id_field, cap)
    }

    /// Tail mode: puts the rows of a fresh first page that are not shown yet on top, marked
    /// as new, keeping the cursor on the record it was on and the row filter as typed. At most
    /// `cap` rows are kept (the oldest go). `table` was made by [`Browser::spec_for_more`].
    /// Returns how many arrived.
    pub fn merge_rows(
        &mut self,
        doc: Arc<JsonDoc>,
        table: crate::table::Table,
        id_field: Option<&'static str>,
        cap: usize,
    ) -> usize {
        if self.rows.is_empty() {
            // Nothing to keep: the columns come from the records that arrived.
            let count = table.rows.len();
            let layout = self.layout.clone();
            self.set_page(doc, table, id_field, layout);
            self.mark_new(0..count);
            return count;
        }
        let known: std::collections::HashSet<&[u8]> = self.rows.iter().filter_map(|r| r.id(id_field)).collect();
        let mut seen = std::collections::HashSet::new();
        let new: Vec<Shown> = table
            .rows
            .into_iter()
            .map(|row| Shown { doc: doc.clone(), row, new: true })
            .filter(|shown| shown.id(id_field).is_some_and(|id| !known.contains(id) && seen.insert(id.to_vec())))
            .collect();
        let count = new.len();
        if count == 0 {
            return 0;
        }
        let kept = self.selected_index().map(|i| i + count);
        self.rows.splice(0..0, new);
        self.mark_new(0..count);
        self.rows.truncate(cap);
        self.haystacks.clear();
        self.apply_filter();
        self.selected = kept.and_then(|index| self.visible.iter().position(|i| *i == index)).unwrap_or(0);
        count
    }

    /// Takes a newer page of the same list: each of its rows replaces the row shown with the
    /// same id, where it is (an order whose status changed); rows not shown yet go on top,
    /// marked as arrived; rows of records `done` that the page no longer has go (an open
    /// order filled). The selection stays on the record it was on. How many were new.
    pub fn replace_rows(
        &mut self,
        doc: Arc<JsonDoc>,
        table: crate::table::Table,
        id_field: Option<&'static str>,
        cap: usize,
        done: &std::collections::BTreeSet<String>,
    ) -> usize {
        if self.rows.is_empty() {
            return self.merge_rows(doc, table, id_field, cap);
        }
        let incoming: Vec<Shown> =
            table.rows.into_iter().map(|row| Shown { doc: doc.clone(), row, new: false }).collect();
        let listed: std::collections::HashSet<Vec<u8>> =
            incoming.iter().filter_map(|shown| shown.id(id_field).map(<[u8]>::to_vec)).collect();
        let selected_id = self.selected_shown().and_then(|s| s.id(id_field)).map(<[u8]>::to_vec);
        // An id as written is JSON: a string's has its quotes.
        let is_done = |id: &[u8]| {
            let text = std::str::from_utf8(id).unwrap_or_default();
            let bare = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
            done.contains(bare)
        };
        self.rows.retain(|shown| shown.id(id_field).is_none_or(|id| listed.contains(id) || !is_done(id)));
        let mut at: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
        for (index, shown) in self.rows.iter().enumerate() {
            if let Some(id) = shown.id(id_field) {
                at.entry(id.to_vec()).or_insert(index);
            }
        }
        let mut new = Vec::new();
        for shown in incoming {
            let Some(id) = shown.id(id_field).map(<[u8]>::to_vec) else { continue };
            match at.get(&id) {
                Some(&index) => {
                    let was_new = self.rows[index].new;
                    self.rows[index] = shown;
                    if was_new {
                        self.mark_new(index..index + 1);
                    }
                }
                None => {
                    at.insert(id, usize::MAX);
                    new.push(Shown { new: true, ..shown });
                }
            }
        }
        let count = new.len();
        self.rows.splice(0..0, new);
        self.mark_new(0..count);
        self.rows.truncate(cap);
        self.haystacks.clear();
        self.apply_filter();
        let kept = selected_id.and_then(|id| self.rows.iter().position(|s| s.id(id_field) == Some(id.as_slice())));
        self.selected = kept.and_then(|index| self.visible.iter().position(|i| *i == index)).unwrap_or(0);
        count
    }

    /// Marks rows as arrived while tailing: [`NEW_MARK`] before their first cell.
    fn mark_new(&mut self, rows: std::ops::Range<usize>) {
        for shown in self.rows.get_mut(rows).unwrap_or_default() {
            shown.new = true;
            if !shown.row.cells.starts_with(NEW_MARK) {
                shown.row.cells = format!("{NEW_MARK}{}", shown.row.cells).into();
            }
        }
    }

    /// How many rows are marked as arrived while tailing.
    pub fn new_count(&self) -> usize {
        self.rows.iter().filter(|r| r.new).count()
    }

    /// Whether the row of `index` arrived while tailing.
    pub fn is_new(&self, index: usize) -> bool {
        self.rows.get(index).is_some_and(|r| r.new)
    }

    pub fn clear(&mut self) {
        self.set_records(Vec::new(), None);
        // The page label too: "page 1 · 3 rows" over a resource with no list would be a lie.
        self.page_label.clear();
        self.filter_note = None;
        self.tail_note = None;
    }

    /// Every record, as values: for tests and small lists only (a page's records are read
    /// through the index everywhere else).
    pub fn records(&self) -> Vec<Value> {
        self.rows.iter().map(|r| r.item().to_value()).collect()
    }

    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    fn selected_shown(&self) -> Option<&Shown> {
        self.visible.get(self.selected).and_then(|i| self.rows.get(*i))
    }

    /// The record under the cursor, as a value (one record is cheap to decode).
    pub fn selected_record(&self) -> Option<Value> {
        self.selected_shown().map(|r| r.item().to_value())
    }

    /// The headers of the page's columns, in order: what `opsdeck call -o table` shows for the
    /// same page. Columns added from other calls ([`Browser::set_extra`]: a product's live
    /// price) are not the page's; [`Browser::shown_labels`] has every column on screen.
    pub fn column_labels(&self) -> Vec<String> {
        let at = usize::from(!self.columns.is_empty());
        let extra = at..at + self.extra_columns.min(self.columns.len().saturating_sub(at));
        self.columns.iter().enumerate().filter(|(i, _)| !extra.contains(i)).map(|(_, c)| c.label()).collect()
    }

    /// The headers of every column shown, in order, those added from other calls included.
    pub fn shown_labels(&self) -> Vec<String> {
        self.columns.iter().map(Column::label).collect()
    }

    /// What the record under the cursor is, without decoding it.
    pub fn selected_kind(&self) -> Option<Kind> {
        self.selected_shown().map(|r| r.item().kind())
    }

    /// The record under the cursor as JSON text for the inspector: re-indented when small
    /// enough to read that way, else its bytes in the page as they are.
    pub fn selected_json(&self) -> Option<bytes::Bytes> {
        const PRETTY_LIMIT: usize = 1024 * 1024;
        let shown = self.selected_shown()?;
        let (doc, id) = (&shown.doc, shown.row.record);
        Some(match doc.pretty(id, PRETTY_LIMIT) {
            Some(text) => text.into(),
            None => doc.body().slice(doc.value_start(id)..doc.value_end(id)),
        })
    }

    /// The first record whose `field` is the string `value`.
    pub fn find_record(&self, field: &str, value: &str) -> Option<Value> {
        self.rows
            .iter()
            .find(|r| r.item().get(field).and_then(Item::as_str).as_deref() == Some(value))
            .map(|r| r.item().to_value())
    }

    pub fn selected_index(&self) -> Option<usize> {
        self.visible.get(self.selected).copied()
    }

    pub fn is_typing(&self) -> bool {
        self.filter_editing
    }

    fn apply_filter(&mut self) {
        let needle = self.filter.text().to_lowercase();
        if needle.is_empty() {
            self.visible = (0..self.rows.len()).collect();
        } else {
            if self.haystacks.len() != self.rows.len() {
                self.haystacks =
                    self.rows.iter().map(|r| r.row.cells.replace(CELL_SEPARATOR, " ").to_lowercase().into()).collect();
            }
            self.visible = (0..self.rows.len()).filter(|i| self.haystacks[*i].contains(&needle)).collect();
        }
        self.selected = self.selected.min(self.visible.len().saturating_sub(1));
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> BrowserAction {
        if self.filter_editing {
            match key.code {
                KeyCode::Esc => {
                    self.filter.clear();
                    self.filter_editing = false;
                }
                KeyCode::Enter => self.filter_editing = false,
                _ if self.filter.handle_key(&key) => {}
                _ => return BrowserAction::None,
            }
            self.apply_filter();
            return self.selection_action();
        }
        let page = self.height.max(1);
        let last = self.visible.len().saturating_sub(1);
        let before = self.selected;
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::PageDown => self.selected = (self.selected + page).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(page),
            KeyCode::Char('d') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.selected = (self.selected + page / 2).min(last);
            }
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.selected = self.selected.saturating_sub(page / 2);
            }
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = last,
            KeyCode::Char('/') => {
                self.filter_editing = true;
                return BrowserAction::None;
            }
            KeyCode::Enter => return self.selected_index().map_or(BrowserAction::None, BrowserAction::Open),
            _ => return BrowserAction::None,
        }
        if self.selected == before {
            BrowserAction::None
        } else {
            self.selection_action()
        }
    }

    /// A click `row` lines below the pane's top edge: selects the row drawn there, or opens it
    /// when it was already selected (as Enter would).
    pub fn click(&mut self, row: u16) -> BrowserAction {
        // The border and the header line come first.
        let Some(line) = usize::from(row).checked_sub(2) else { return BrowserAction::None };
        let index = self.offset + line;
        if self.notice.is_some() || line >= self.height || index >= self.visible.len() {
            return BrowserAction::None;
        }
        if index == self.selected {
            return self.selected_index().map_or(BrowserAction::None, BrowserAction::Open);
        }
        self.selected = index;
        self.selection_action()
    }

    /// Pasted text goes into the row filter, which opens if it was closed.
    pub fn paste(&mut self, text: &str) {
        self.filter_editing = true;
        self.filter.insert_str(text);
        self.apply_filter();
    }

    fn selection_action(&self) -> BrowserAction {
        self.selected_index().map_or(BrowserAction::None, BrowserAction::Selected)
    }

    /// The keys of this pane, for `?`.
    pub fn help() -> &'static [(&'static str, &'static str)] {
        &[
            ("j k ↑ ↓", "move"),
            ("PgUp PgDn ^u ^d", "page through rows"),
            ("g G", "first / last row"),
            ("Enter", "open the record (AvaTax: a company's transactions, a transaction's view)"),
            ("Enter", "EasyPost: rates or label, timeline, batch, address"),
            ("/", "filter rows (Esc clears)"),
            ("c", "list again without the filters in the title"),
            ("n p", "next / previous page from the API"),
            ("r", "refresh"),
            ("a", "toggle auto-refresh"),
            ("o", "operations on the selected record"),
            ("Esc h ←", "back to resources (cancels a load)"),
        ]
    }

    pub fn render(&mut self, frame: &mut Frame, area: Rect, theme: &Theme, focused: bool) {
        let mut title = Vec::new();
        if !self.page_label.is_empty() {
            title.push(Span::styled(format!("{} ", self.page_label), theme.muted));
        }
        // Before the filter note, which can be long: a list being tailed must always say so.
        if let Some(note) = &self.tail_note {
            title.push(Span::styled(format!("{} ", inert(note)), theme.success));
        }
        if let Some(note) = &self.filter_note {
            title.push(Span::styled(format!("{} ", inert(note)), theme.warning));
        }
        if !self.filter.is_empty() || self.filter_editing {
            title.push(Span::styled("/", theme.accent));
            if self.filter_editing {
                let room = usize::from(area.width / 2).max(8);
                title.extend(self.filter.spans(room, theme.accent, theme.selection));
                title.push(Span::raw(" "));
            } else {
                title.push(Span::styled(format!("{} ", self.filter.text()), theme.accent));
            }
            title.push(Span::styled(format!("{} of {} ", self.visible.len(), self.rows.len()), theme.muted));
        }
        // The name gives way to what follows it (the row count, a tail, the filters): a long name
        // (`holds of 0f8fad5b-…`) ends in `…` rather than push the count off the border.
        let border = usize::from(area.width.saturating_sub(2));
        let after: usize = title.iter().map(Span::width).sum();
        let room = border.saturating_sub(after + 2).max(1);
        title.insert(0, Span::styled(format!(" {} ", truncate_to_width(&inert(&self.title), room)), theme.title));
        let title = crate::tui::components::fit_line(Line::from(title), border);
        let block = Block::default().borders(Borders::ALL).border_style(theme.border(focused)).title(title);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        if let Some((text, is_error)) = &self.notice {
            let style = if *is_error { theme.error } else { theme.muted };
            let text = crate::inert::inert_lines(text);
            frame.render_widget(Paragraph::new(text.as_ref()).style(style).wrap(Wrap { trim: false }), inner);
            return;
        }
        if self.visible.is_empty() {
            let text = if self.rows.is_empty() { "no records" } else { "no row matches the filter" };
            frame.render_widget(Paragraph::new(text).style(theme.muted), inner);
            return;
        }
        // One line for the header.
        self.height = usize::from(inner.height.saturating_sub(1));
        // Fewer rows than before (a filter typed): no empty screen below the last one.
        self.offset = self.offset.min(self.visible.len().saturating_sub(self.height));
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.height > 0 && self.selected >= self.offset + self.height {
            self.offset = self.selected + 1 - self.height;
        }
        let end = (self.offset + self.height).min(self.visible.len());
        // The cells of the rows on screen, split once for the widths and the drawing.
        let on_screen: Vec<(usize, Vec<&str>)> =
            self.visible[self.offset..end].iter().map(|&row| (row, self.rows[row].row.cells().collect())).collect();
        let widths = self.column_widths(&on_screen, inner.width);
        // A cell wider than its column ends in `…`: clipped at the column's edge, an id one
        // character short or `ada@opsdeck.exam` reads as another value.
        let cut = |text: &str, index: usize| -> String {
            let room = widths.get(index).map_or(0, |w| usize::from(*w));
            truncate_to_width(text, room)
        };
        let constraints: Vec<Constraint> = widths.iter().map(|w| Constraint::Length(*w)).collect();
        let tone = self.tone;
        let rows: Vec<Row> = on_screen
            .iter()
            .enumerate()
            .map(|(i, (row, cells))| {
                let style = if self.offset + i == self.selected { theme.selected(focused) } else { theme.text };
                let marked = self.is_new(*row);
                let cells = cells.iter().zip(&self.columns).enumerate().map(|(index, (text, column))| {
                    let shown = cut(text, index);
                    let line = if column.money { Line::from(shown).right_aligned() } else { Line::from(shown) };
                    match tone.and_then(|tone| tone(column.header(), text)) {
                        Some(tone) => Cell::from(line).style(tone.style(theme)),
                        None if marked && index == 0 => Cell::from(line).style(theme.success),
                        None => Cell::from(line),
                    }
                });
                Row::new(cells).style(style)
            })
            .collect();
        let header = Row::new(self.columns.iter().enumerate().map(|(index, c)| {
            let name = Line::from(cut(&inert(&c.label()), index));
            Cell::from(if c.money { name.right_aligned() } else { name })
        }))
        .style(theme.title);
        frame.render_widget(Table::new(rows, constraints).header(header).column_spacing(1), inner);
    }

    /// Each column's width for the rows on screen, as [`fit_widths`] shares `total` out: the
    /// id and dates whole, columns empty on screen giving their room up first, cut columns
    /// given the spare room in proportion to what they lack.
    fn column_widths(&self, on_screen: &[(usize, Vec<&str>)], total: u16) -> Vec<u16> {
        fn cell<'a>(row: &[&'a str], c: usize) -> &'a str {
            row.get(c).copied().unwrap_or_default()
        }
        let needs: Vec<ColumnNeed> = self
            .columns
            .iter()
            .enumerate()
            .map(|(c, column)| {
                let widest = on_screen.iter().map(|(_, row)| cell(row, c).width()).max().unwrap_or(0);
                ColumnNeed {
                    need: u16::try_from(widest.max(column.label().width())).unwrap_or(u16::MAX),
                    whole: c == 0 || is_time_column(column.header()),
                    empty: on_screen.iter().all(|(_, row)| cell(row, c).is_empty()),
                }
            })
            .collect();
        fit_widths(&needs, total, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Service;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    use serde_json::json;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn screen(browser: &mut Browser, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|f| browser.render(f, f.area(), &Theme::dark(), true)).unwrap();
        let buffer = terminal.backend().buffer();
        (0..height)
            .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn extra_columns_join_after_the_id_are_replaced_when_set_again_and_shown_inert() {
        let mut browser = Browser::default();
        let records = vec![json!({"id": "A-B", "status": "online"}), json!({"id": "C-D", "status": "offline"})];
        browser.set_records(records.clone(), Some("id"));
        browser.selected = 1;
        browser.set_extra("id", &["price"], &|id| (id == "A-B").then(|| vec!["1.00\x1b[2J".to_owned()]));
        let text = screen(&mut browser, 60, 6);
        assert!(text.contains("A-B 1.00␛[2J online"), "{text}");
        assert!(text.contains("C-D        … offline"), "not known yet:\n{text}");
        browser.set_extra("id", &["price"], &|_| Some(vec!["2.00".to_owned()]));
        let text = screen(&mut browser, 60, 6);
        assert!(text.contains("A-B  2.00 online") && !text.contains("1.00"), "{text}");
        assert_eq!(browser.shown_labels(), ["id", "price", "status"]);
        assert_eq!(browser.column_labels(), ["id", "status"], "the page's own columns");
        assert_eq!(browser.selected_index(), Some(1), "the cursor stays on its row");
        assert_eq!(browser.records(), records, "the records are the server's");
        assert_eq!(browser.ids_in_view("id", 1), ["A-B"]);
    }

    #[test]
    fn rows_columns_filter_and_selection() {
        let mut b = Browser { title: "channels".into(), ..Browser::default() };
        b.set_records(
            vec![
                json!({"channelId": "orders:eu", "status": {"isActive": true}}),
                json!({"channelId": "chat:lobby", "status": {"isActive": false}}),
                json!({"channelId": "orders:us", "status": {"isActive": true}}),
            ],
            Some("channelId"),
        );
        let text = screen(&mut b, 50, 6);
        assert!(text.contains("channelId"));
        assert!(text.contains("chat:lobby"));
        assert_eq!(b.handle_key(key(KeyCode::Char('j'))), BrowserAction::Selected(1));
        assert_eq!(b.handle_key(key(KeyCode::Enter)), BrowserAction::Open(1));
        b.handle_key(key(KeyCode::Char('/')));
        assert!(b.is_typing());
        for c in "orders".chars() {
            b.handle_key(key(KeyCode::Char(c)));
        }
        b.handle_key(key(KeyCode::Enter));
        assert!(!b.is_typing());
        let text = screen(&mut b, 50, 6);
        assert!(!text.contains("chat:lobby"));
        assert!(text.contains("2 of 3"));
        b.handle_key(key(KeyCode::Char('G')));
        assert_eq!(b.selected_record().unwrap()["channelId"], "orders:us");
    }

    #[test]
    fn millisecond_timestamps_read_as_dates() {
        let mut b = Browser::default();
        b.set_records(
            vec![json!({"id": "m1", "timestamp": 1_700_000_000_000_i64, "count": 1_700_000_000_000_i64})],
            Some("id"),
        );
        let text = screen(&mut b, 80, 4);
        assert!(text.contains("2023-11-14 22:13:20"), "{text}");
        assert!(text.contains("1700000000000"), "other columns keep their numbers: {text}");
    }

    #[test]
    fn amounts_in_money_format_right_aligned_and_statuses_coloured() {
        let mut b = Browser { tone: Some(crate::tui::services::tones(Service::Avatax)), ..Browser::default() };
        b.set_records(
            vec![
                json!({"code": "INV-1", "status": "Committed", "totalAmount": 1234.5, "totalTax": "95.67"}),
                json!({"code": "INV-2", "status": "Cancelled", "totalAmount": 7, "totalTax": 0}),
                json!({"code": "INV-3", "status": "Saved", "totalAmount": "n/a", "totalTax": 0.5}),
            ],
            Some("code"),
        );
        let mut terminal = Terminal::new(TestBackend::new(70, 6)).unwrap();
        let theme = Theme::dark();
        terminal.draw(|f| b.render(f, f.area(), &theme, false)).unwrap();
        let buffer = terminal.backend().buffer();
        let lines: Vec<String> = (0..6).map(|y| (0..70).map(|x| buffer[(x, y)].symbol()).collect()).collect();
        let text = lines.join("\n");
        assert!(text.contains("1,234.50") && text.contains("95.67") && text.contains("7.00"), "{text}");
        assert!(text.contains("n/a"), "a value that is no number is shown as it is: {text}");
        let end_of = |needle: &str| lines.iter().find_map(|l| l.find(needle).map(|i| i + needle.len())).unwrap();
        assert_eq!(end_of("1,234.50"), end_of("7.00"), "right-aligned:\n{text}");
        let cell_style = |needle: &str| {
            let (y, line) = lines.iter().enumerate().find(|(_, l)| l.contains(needle)).unwrap();
            let x = u16::try_from(line.find(needle).unwrap()).unwrap();
            buffer[(x, u16::try_from(y).unwrap())].fg
        };
        assert_eq!(cell_style("Committed"), theme.success.fg.unwrap());
        assert_eq!(cell_style("Cancelled"), theme.error.fg.unwrap());
        assert_ne!(cell_style("Committed"), cell_style("Cancelled"));
    }

    #[test]
    fn columns_alike_by_last_key_are_named_by_their_parent_too() {
        let mut b = Browser::default();
        b.set_records(
            vec![json!({"region_code": "CA", "minimum_rate": {"rate": 0.065}, "average_rate": {"rate": 0.0827}})],
            Some("region_code"),
        );
        let text = screen(&mut b, 80, 4);
        assert!(text.contains("minimum_rate.rate") && text.contains("average_rate.rate"), "{text}");
    }

    #[test]
    fn bare_values_and_tiny_areas() {
        let mut b = Browser::default();
        b.set_records(vec![json!("a"), json!("b")], Some("channelId"));
        assert!(screen(&mut b, 20, 5).contains('b'));
        for (w, h) in [(1, 1), (2, 2), (5, 3)] {
            screen(&mut b, w, h);
        }
    }

    #[test]
    fn short_of_room_a_column_empty_on_screen_gives_its_room_to_the_others() {
        let mut browser = Browser::default();
        let row = |id: &str, note: &str| json!({"id": id, "recipient": format!("someone.{id}@example.com"), "note": note, "subject": format!("Quarterly report {id}")});
        // Only a row below the screen has a note (a page's constant columns are not shown).
        browser.set_records(vec![row("a", ""), row("b", ""), row("c", "late")], Some("id"));
        let narrow = screen(&mut browser, 46, 5);
        assert!(narrow.contains("someone.a@example.com"), "{narrow}");
        assert!(!narrow.contains("note"), "{narrow}");
        let wide = screen(&mut browser, 120, 5);
        assert!(wide.contains("note"), "with room the empty column stays:\n{wide}");
    }

    #[test]
    fn clearing_forgets_the_page_label_and_notes() {
        let mut browser = Browser::default();
        browser.set_records(vec![json!({"id": "a"})], Some("id"));
        browser.page_label = "page 1 · 1 rows".into();
        browser.tail_note = Some("● tail 2 s · 0 new".into());
        browser.clear();
        assert!(browser.page_label.is_empty() && browser.tail_note.is_none() && browser.row_count() == 0);
        assert!(!screen(&mut browser, 60, 5).contains("page 1"));
    }

    #[test]
    fn tail_puts_new_rows_on_top_marked_keeping_selection_and_filter() {
        let mut b = Browser::default();
        let event = |id: &str, kind: &str, to: &str| json!({"id": id, "event": kind, "recipient": to});
        b.set_records(
            vec![event("e2", "accepted", "ops@example.com"), event("e1", "delivered", "dev@example.com")],
            Some("id"),
        );
        b.handle_key(key(KeyCode::Char('j')));
        assert_eq!(b.selected_record().unwrap()["id"], "e1");
        b.handle_key(key(KeyCode::Char('/')));
        for c in "example".chars() {
            b.handle_key(key(KeyCode::Char(c)));
        }
        b.handle_key(key(KeyCode::Enter));
        // The poll's page overlaps what is shown: only e3 and e4 are new.
        let page = vec![
            event("e4", "failed", "gone@example.org"),
            event("e3", "delivered", "ops@example.com"),
            event("e2", "accepted", "ops@example.com"),
        ];
        assert_eq!(b.merge_new(page.clone(), Some("id"), 100), 2);
        assert_eq!(b.merge_new(page, Some("id"), 100), 0, "nothing twice");
        assert_eq!(b.row_count(), 4);
        assert_eq!(b.selected_record().unwrap()["id"], "e1", "the cursor stays on its record");
        assert_eq!(b.filter.text(), "example", "the row filter stays");
        assert_eq!(b.new_count(), 2);
        let text = screen(&mut b, 70, 8);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].contains("● e4") && lines[3].contains("● e3"), "new rows on top, marked:\n{text}");
        assert!(lines[4].contains("e2") && !lines[4].contains('●'), "{text}");
        // The cap drops the oldest.
        assert_eq!(b.merge_new(vec![event("e5", "opened", "x@example.com")], Some("id"), 3), 1);
        assert_eq!(b.row_count(), 3);
        assert_eq!(b.records()[0]["id"], "e5");
        // A fresh page clears the marks.
        b.set_records(vec![event("e9", "clicked", "y@example.com")], Some("id"));
        assert_eq!(b.new_count(), 0);
        // An empty list takes its columns from what arrives.
        let mut empty = Browser::default();
        empty.set_records(Vec::new(), Some("id"));
        assert_eq!(empty.merge_new(vec![event("e1", "accepted", "a@example.com")], Some("id"), 10), 1);
        assert!(screen(&mut empty, 60, 5).contains("recipient"));
    }

    #[test]
    fn event_types_severities_and_domain_states_are_toned() {
        let mut b = Browser { tone: Some(crate::tui::services::tones(Service::Mailgun)), ..Browser::default() };
        b.set_records(
            vec![
                json!({"id": "1", "event": "delivered", "severity": null, "state": "active"}),
                json!({"id": "2", "event": "failed", "severity": "permanent", "state": "unverified"}),
                json!({"id": "3", "event": "opened", "severity": "temporary", "state": "CA"}),
            ],
            Some("id"),
        );
        let theme = Theme::dark();
        let mut terminal = Terminal::new(TestBackend::new(60, 6)).unwrap();
        terminal.draw(|f| b.render(f, f.area(), &theme, false)).unwrap();
        let buffer = terminal.backend().buffer();
        let lines: Vec<String> = (0..6).map(|y| (0..60).map(|x| buffer[(x, y)].symbol()).collect()).collect();
        let style = |needle: &str| {
            let (y, line) = lines.iter().enumerate().find(|(_, l)| l.contains(needle)).unwrap();
            let x = u16::try_from(line[..line.find(needle).unwrap()].chars().count()).unwrap();
            buffer[(x, u16::try_from(y).unwrap())].fg
        };
        assert_eq!(Some(style("delivered")), theme.success.fg);
        assert_eq!(Some(style("failed")), theme.error.fg);
        assert_eq!(Some(style("permanent")), theme.error.fg);
        assert_eq!(Some(style("temporary")), theme.warning.fg);
        assert_eq!(Some(style("opened")), theme.accent.fg);
        assert_eq!(Some(style("unverified")), theme.accent.fg);
        for tone in [theme.success, theme.error, theme.accent, theme.warning] {
            assert_ne!(Some(style("CA")), tone.fg, "a US state is no domain state");
        }
    }

    #[test]
    fn a_layout_chooses_columns_and_cells() {
        let mut b = Browser::default();
        let layout = crate::tui::services::layout(Service::Mailgun.operation("events_list").unwrap()).unwrap();
        b.set_records_as(
            vec![json!({"id": "x", "event": "failed", "timestamp": 1_529_692_199.6, "recipient": "a@example.com",
                "severity": "permanent", "reason": "bounce", "delivery-status": {"code": 550, "description": "No such mailbox"},
                "envelope": {"sending-ip": "1.2.3.4"}, "flags": {"is-test-mode": false}})],
            Some("id"),
            Some(layout),
        );
        let text = screen(&mut b, 150, 4);
        for cell in ["timestamp", "2018-06-22 18:29:59", "failed", "a@example.com", "bounce: No such mailbox", "550"] {
            assert!(text.contains(cell), "{cell} in {text}");
        }
        assert!(!text.contains("sending-ip") && !text.contains("1.2.3.4"), "{text}");
    }

    #[test]
    fn a_filter_typed_at_the_end_of_a_long_list_shows_every_match() {
        let mut b = Browser::default();
        b.set_records((0..1000).map(|i| json!({"id": format!("r{i:04}")})).collect(), Some("id"));
        b.handle_key(key(KeyCode::Char('G')));
        screen(&mut b, 40, 10);
        b.handle_key(key(KeyCode::Char('/')));
        b.handle_key(key(KeyCode::Char('9')));
        b.handle_key(key(KeyCode::Char('9')));
        let text = screen(&mut b, 40, 10);
        // 19 rows match; the cursor stays on the last, with the screen full of matches above it.
        assert!(text.contains("19 of 1000"), "{text}");
        assert_eq!(text.lines().filter(|l| l.contains("│r")).count(), 7, "a full screen:\n{text}");
        assert!(text.contains("r0999") && text.contains("r0993"), "{text}");
    }

    #[test]
    fn only_visible_rows_are_drawn() {
        let mut b = Browser::default();
        b.set_records((0..100_000).map(|i| json!({"id": i, "name": format!("row {i}")})).collect(), Some("id"));
        b.handle_key(key(KeyCode::Char('G')));
        let text = screen(&mut b, 40, 10);
        assert!(text.contains("row 99999"));
        assert!(!text.contains("row 0 "));
    }
}
