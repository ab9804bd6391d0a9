//! A market at a glance: an order-book ladder with depth bars and the spread, a candle chart
//! (each candle drawn as a wick and a body, not a line), and the tape of the latest trades.
//! Generic: a service turns its answers into [`Market`] parts, and a view merges each newer part
//! into the one open ([`Market::merge`]), so a book, candles and trades asked for separately
//! fill one picture. Every text from a server goes through [`inert`] before it is drawn.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use rust_decimal::Decimal;

use crate::format::{money_text, price_at_step, quantity_text};
use crate::inert::inert;
use crate::table::truncate_to_width;
use crate::tui::theme::Theme;

/// One price level of a book: the price and size as the server wrote them (the view writes
/// them at the product's steps), and as numbers for the bars.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    pub price: f64,
    pub size: f64,
    pub price_text: String,
    pub size_text: String,
    /// How many orders rest at the level, when the server says.
    pub orders: Option<u64>,
}

/// Which way something went, coloured by the theme: up (a buy taking, a price risen) or down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    Up,
    Down,
}

impl Move {
    fn style(self, theme: &Theme) -> Style {
        match self {
            Move::Up => theme.success,
            Move::Down => theme.error,
        }
    }
}

/// One bucket of prices over a time span.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candle {
    /// Start of the bucket, seconds since the epoch.
    pub time: i64,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
    pub volume: f64,
}

/// One trade of the tape: its time and mark already said the way they read (the service knows
/// which side took), its price and size as the server wrote them.
#[derive(Clone, Debug, PartialEq)]
pub struct Print {
    pub time: String,
    pub price: String,
    pub size: String,
    /// `▲ buy` or `▼ sell`: who took, as the service reads its wire.
    pub mark: String,
    pub tone: Option<Move>,
}

/// What a market view shows. Each part is `None` until an answer gives it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Market {
    /// Live facts (last price, 24-hour change, bid and ask), merged by label.
    pub facts: Vec<(String, String, Option<Move>)>,
    /// Best bid first.
    pub bids: Option<Vec<Level>>,
    /// Best ask first.
    pub asks: Option<Vec<Level>>,
    /// In any order; drawn oldest on the left.
    pub candles: Option<Vec<Candle>>,
    /// What a candle spans (`1 min`), for the chart's title.
    pub candle_span: String,
    /// Newest first.
    pub tape: Option<Vec<Print>>,
    /// How many answers the view has taken in, so a person sees it move.
    pub updates: u64,
    /// The instrument the view is about (`BTC-USD`): a board answer about it also fills the
    /// facts.
    pub focus: String,
    /// Every instrument of the market with its last price and change, in the order listed.
    pub board: Vec<BoardRow>,
    /// The operation and parameter that ask for one board row (a product's 24-hour stats by
    /// its id), asked for each row but the focus while the view is open.
    pub board_ask: Option<(&'static str, &'static str)>,
    /// The operation that lists the board's instruments, asked while the board is empty.
    pub board_list: Option<&'static str>,
    /// This part is about this board row: its facts fill the view only when it is the focus.
    pub about: Option<BoardRow>,
    /// The focus's price step (its quote increment), when known: the ladder, the tape and the
    /// chart write every price with its decimals, so they line up and read alike.
    pub price_step: Option<Decimal>,
    /// The whole book while a push socket keeps it (its updates change single levels); the
    /// ladder shows its best [`LIVE_DEPTH`] levels a side.
    pub depth: Option<Depth>,
    /// Where the view is pushed from while a socket serves it (`● live` in its titles).
    pub live: Option<String>,
}

/// Levels a side the ladder keeps from a pushed book.
pub const LIVE_DEPTH: usize = 50;
/// Trades the tape keeps as they are pushed.
const LIVE_TAPE: usize = 50;

/// A whole book by price: each level's price and size as the server wrote them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Depth {
    bids: std::collections::BTreeMap<Decimal, (String, String)>,
    asks: std::collections::BTreeMap<Decimal, (String, String)>,
}

/// Which side of a book a level is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BookSide {
    Bid,
    Ask,
}

/// What a market's push socket says, as the view takes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Push {
    /// A part as a polled answer gives it (the ticker's facts).
    Part(Box<Market>),
    /// The whole book: (price, size) per level, best first.
    Book { bids: Vec<(String, String)>, asks: Vec<(String, String)> },
    /// Levels with their new size (zero: gone).
    Changes(Vec<(BookSide, String, String)>),
    /// A trade: on top of the tape, and into the candle of its minute (its time in seconds,
    /// price and size).
    Trade(Print, Option<(i64, f64, f64)>),
}

/// One instrument of the board: its id, last price and change (empty until known).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoardRow {
    pub id: String,
    pub last: String,
    pub change: String,
    pub tone: Option<Move>,
}

/// How many other instruments a board asks about on each refresh (each is one request).
pub const BOARD_ASKS: usize = 6;

/// One line of the ladder: asks above the spread (highest first), bids below (best first).
#[derive(Clone, Debug, PartialEq)]
pub enum LadderRow {
    Ask { price: String, size: String, total: f64, bar: usize },
    Spread(String),
    Bid { price: String, size: String, total: f64, bar: usize },
}

impl Market {
    /// Takes in a newer answer: each part it has replaces the one shown; facts replace those of
    /// the same label and the others stay.
    pub fn merge(&mut self, newer: Market) {
        if !newer.board.is_empty() {
            // A new listing keeps the prices already known of the rows it lists again.
            // The focus first, then the first few others as listed: each is asked about.
            let old = std::mem::take(&mut self.board);
            let (focus, others): (Vec<BoardRow>, Vec<BoardRow>) =
                newer.board.into_iter().partition(|row| row.id == self.focus);
            self.board = focus
                .into_iter()
                .chain(others.into_iter().take(BOARD_ASKS))
                .map(|row| old.iter().find(|o| o.id == row.id).cloned().unwrap_or(row))
                .collect();
        }
        if let Some(about) = &newer.about {
            match self.board.iter_mut().find(|r| r.id == about.id) {
                Some(row) => *row = about.clone(),
                None => self.board.push(about.clone()),
            }
            if about.id != self.focus {
                self.updates += 1;
                return;
            }
        }
        for (label, value, tone) in newer.facts {
            match self.facts.iter_mut().find(|(l, ..)| *l == label) {
                Some(fact) => *fact = (label, value, tone),
                None => self.facts.push((label, value, tone)),
            }
        }
        if newer.bids.is_some() || newer.asks.is_some() {
            self.bids = newer.bids;
            self.asks = newer.asks;
        }
        if newer.candles.is_some() {
            self.candles = newer.candles;
            if !newer.candle_span.is_empty() {
                self.candle_span = newer.candle_span;
            }
        }
        if newer.tape.is_some() {
            self.tape = newer.tape;
        }
        if newer.price_step.is_some() {
            self.price_step = newer.price_step;
        }
        self.updates += 1;
    }

    /// Takes in what the push socket said.
    pub fn apply(&mut self, push: Push) {
        match push {
            Push::Part(part) => return self.merge(*part),
            Push::Book { bids, asks } => {
                let read = |levels: Vec<(String, String)>| {
                    levels.into_iter().filter_map(|(p, s)| Some((p.parse::<Decimal>().ok()?, (p, s)))).collect()
                };
                self.depth = Some(Depth { bids: read(bids), asks: read(asks) });
                self.show_depth();
            }
            Push::Changes(changes) => {
                let Some(depth) = self.depth.as_mut() else { return };
                for (side, price, size) in changes {
                    let Ok(at) = price.parse::<Decimal>() else { continue };
                    let levels = match side {
                        BookSide::Bid => &mut depth.bids,
                        BookSide::Ask => &mut depth.asks,
                    };
                    if size.parse::<Decimal>().is_ok_and(|s| s.is_zero()) {
                        levels.remove(&at);
                    } else {
                        levels.insert(at, (price, size));
                    }
                }
                self.show_depth();
            }
            Push::Trade(print, bucket) => {
                let tape = self.tape.get_or_insert_with(Vec::new);
                tape.insert(0, print);
                tape.truncate(LIVE_TAPE);
                if let (Some((start, price, size)), Some(candles)) = (bucket, self.candles.as_mut()) {
                    let newest = candles.iter().map(|c| c.time).max();
                    match candles.iter_mut().find(|c| c.time == start) {
                        Some(candle) => {
                            candle.high = candle.high.max(price);
                            candle.low = candle.low.min(price);
                            candle.close = price;
                            candle.volume += size;
                        }
                        None if newest.is_none_or(|t| t < start) => {
                            candles.push(Candle {
                                time: start,
                                open: price,
                                high: price,
                                low: price,
                                close: price,
                                volume: size,
                            });
                        }
                        // A trade older than the chart's newest candle has nowhere to go.
                        None => {}
                    }
                }
            }
        }
        self.updates += 1;
    }

    /// The ladder's levels from the pushed book: its best [`LIVE_DEPTH`] a side.
    fn show_depth(&mut self) {
        if let Some(depth) = &self.depth {
            let shown = |levels: &mut dyn Iterator<Item = &(String, String)>| -> Vec<Level> {
                levels
                    .take(LIVE_DEPTH)
                    .filter_map(|(p, s)| {
                        Some(Level {
                            price: p.parse().ok()?,
                            size: s.parse().ok()?,
                            price_text: p.clone(),
                            size_text: s.clone(),
                            orders: None,
                        })
                    })
                    .collect()
            };
            self.bids = Some(shown(&mut depth.bids.values().rev()));
            self.asks = Some(shown(&mut depth.asks.values()));
        }
    }

    /// The asks of the board: one per row but the focus, at most [`BOARD_ASKS`].
    pub fn board_asks(&self) -> Vec<(&'static str, Vec<(String, String)>)> {
        if let (Some(list), true) = (self.board_list, self.board.iter().all(|row| row.id == self.focus)) {
            return vec![(list, Vec::new())];
        }
        let Some((op, param)) = self.board_ask else { return Vec::new() };
        self.board
            .iter()
            .filter(|row| row.id != self.focus)
            .take(BOARD_ASKS)
            .map(|row| (op, vec![(param.to_owned(), row.id.clone())]))
            .collect()
    }

    /// What the ladder's title says of where the book comes from: `● live` while pushed, `●`
    /// once an answer came.
    fn mark(&self) -> &'static str {
        match (&self.live, self.updates) {
            (Some(_), _) => " ● live",
            (None, 0) => "",
            (None, _) => " ●",
        }
    }

    /// The best ask less the best bid, with the text of each, when both sides have a level.
    pub fn spread(&self) -> Option<f64> {
        let bid = self.bids.as_ref()?.first()?;
        let ask = self.asks.as_ref()?.first()?;
        Some(ask.price - bid.price)
    }

    /// A price as the view writes it: at the step when known, else as money (grouped, every
    /// digit kept); text that is no number stays as it is.
    pub fn price_text(&self, raw: &str) -> String {
        let written = match self.price_step.filter(|step| !step.is_zero()) {
            Some(step) => price_at_step(raw, step),
            None => money_text(raw),
        };
        written.unwrap_or_else(|| raw.to_owned())
    }

    /// A size as the view writes it: the digits it has, grouped.
    pub fn size_text(raw: &str) -> String {
        quantity_text(raw).unwrap_or_else(|| raw.to_owned())
    }

    /// `levels` with their price and size as the view writes them.
    fn written(&self, levels: &[Level]) -> Vec<Level> {
        levels
            .iter()
            .map(|l| Level {
                price_text: self.price_text(&l.price_text),
                size_text: Self::size_text(&l.size_text),
                ..l.clone()
            })
            .collect()
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        if area.width < 4 || area.height < 3 {
            return;
        }
        // The live facts flow left to right, onto a second line when they do not fit.
        let mut lines: Vec<Line<'static>> = Vec::new();
        let mut line: Vec<Span<'static>> = Vec::new();
        let mut used = 0;
        for (label, value, tone) in &self.facts {
            let value = truncate_to_width(&inert(value), 40);
            let label = inert(label).into_owned();
            let cost = label.width() + value.width() + 4;
            if used > 0 && used + cost > usize::from(area.width) && lines.is_empty() {
                lines.push(Line::from(std::mem::take(&mut line)));
                used = 0;
            }
            line.push(Span::styled(format!("{label} "), theme.muted));
            line.push(Span::styled(value, tone.map_or(theme.text, |t| t.style(theme))));
            line.push(Span::raw("   "));
            used += cost;
        }
        lines.push(Line::from(line));
        let head_height = u16::try_from(lines.len()).unwrap_or(1).min(area.height / 3).max(1);
        frame.render_widget(Paragraph::new(lines), Rect { height: head_height, ..area });
        let mut body = Rect { y: area.y + head_height, height: area.height - head_height, ..area };
        if !self.board.is_empty() && body.height > 6 {
            frame.render_widget(Paragraph::new(self.board_line(theme)), Rect { height: 1, ..body });
            body = Rect { y: body.y + 1, height: body.height - 1, ..body };
        }
        // The ladder on the left, candles over the tape on the right.
        let ladder_width = (body.width * 2 / 5).clamp(body.width.min(24), body.width.min(48));
        let ladder = Rect { width: ladder_width, ..body };
        let right = Rect { x: body.x + ladder_width, width: body.width - ladder_width, ..body };
        let chart_height = (right.height * 3 / 5).max(right.height.min(6));
        let chart = Rect { height: chart_height, ..right };
        let tape = Rect { y: right.y + chart_height, height: right.height - chart_height, ..right };
        self.render_ladder(frame, ladder, theme);
        self.render_candles(frame, chart, theme);
        self.render_tape(frame, tape, theme);
    }

    /// The board on one line: each instrument, its last price and change; the focus marked.
    fn board_line(&self, theme: &Theme) -> Line<'static> {
        let mut spans = vec![Span::styled("markets ", theme.muted)];
        for row in &self.board {
            let id_style = if row.id == self.focus { theme.selection } else { theme.title };
            spans.push(Span::styled(format!("{} ", truncate_to_width(&inert(&row.id), 16)), id_style));
            let last = if row.last.is_empty() { "…" } else { row.last.as_str() };
            spans.push(Span::styled(format!("{} ", truncate_to_width(&inert(last), 16)), theme.text));
            spans.push(Span::styled(
                truncate_to_width(&inert(&row.change), 12),
                row.tone.map_or(theme.muted, |t| t.style(theme)),
            ));
            spans.push(Span::raw("   "));
        }
        Line::from(spans)
    }

    fn render_ladder(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border)
            .title(Span::styled(format!(" order book{} ", self.mark()), theme.title));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let (Some(bids), Some(asks)) = (&self.bids, &self.asks) else {
            frame.render_widget(Paragraph::new(Span::styled("waiting for the book…", theme.muted)), inner);
            return;
        };
        let (bids, asks) = (&self.written(bids), &self.written(asks));
        // Price and size take what they need up to 14 columns each; the depth bars the rest.
        let width = usize::from(inner.width);
        let cell = (width.saturating_sub(4) * 3 / 8).clamp(6, 14);
        let header = Line::from(Span::styled(
            format!("{:>cell$} {:>cell$}  depth", "price", "size"),
            theme.muted.add_modifier(ratatui::style::Modifier::BOLD),
        ));
        let mut lines = vec![header];
        let depth = usize::from(inner.height.saturating_sub(2) / 2);
        let bar_room = width.saturating_sub(2 * cell + 3);
        let spread = self.spread().map_or_else(|| "spread —".to_owned(), |s| spread_text(s, bids, asks));
        for row in ladder_rows(bids, asks, depth, bar_room, &spread) {
            lines.push(match row {
                LadderRow::Ask { price, size, bar, .. } => level_line(&price, &size, cell, bar, theme.error),
                LadderRow::Bid { price, size, bar, .. } => level_line(&price, &size, cell, bar, theme.success),
                LadderRow::Spread(text) => {
                    Line::from(Span::styled(format!("{text:^w$}", w = 2 * cell + 3), theme.accent))
                }
            });
        }
        frame.render_widget(Paragraph::new(lines), inner);
    }

    fn render_candles(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let span = if self.candle_span.is_empty() { String::new() } else { format!(" {}", inert(&self.candle_span)) };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border)
            .title(Span::styled(format!(" candles{span} "), theme.title));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let Some(candles) = self.candles.as_ref().filter(|c| !c.is_empty()) else {
            let text = if self.candles.is_some() { "no trades in the range" } else { "waiting for candles…" };
            frame.render_widget(Paragraph::new(Span::styled(text, theme.muted)), inner);
            return;
        };
        if inner.height < 2 || inner.width < 12 {
            return;
        }
        // A price axis on the left, then one column per candle with a gap between them.
        let axis = 11u16;
        let plot = Rect { x: inner.x + axis, width: inner.width - axis, ..inner };
        let fit = usize::from(plot.width.div_ceil(2));
        let mut ordered: Vec<Candle> = candles.clone();
        ordered.sort_by_key(|c| c.time);
        let shown = &ordered[ordered.len().saturating_sub(fit)..];
        let Some(layout) = candle_layout(shown, plot.height) else { return };
        let buffer = frame.buffer_mut();
        put(buffer, inner.x, inner.y, &format!("{:>10}", self.axis_price(layout.high)), theme.muted);
        put(buffer, inner.x, inner.y + inner.height - 1, &format!("{:>10}", self.axis_price(layout.low)), theme.muted);
        for (index, column) in layout.columns.iter().enumerate() {
            let Ok(offset) = u16::try_from(index * 2) else { break };
            let x = plot.x + offset;
            if x >= plot.x + plot.width {
                break;
            }
            let style = if column.up { theme.success } else { theme.error };
            for row in column.wick.0..=column.wick.1 {
                let body = (column.body.0..=column.body.1).contains(&row);
                put(buffer, x, plot.y + row, if body { "█" } else { "│" }, style);
            }
        }
    }

    fn render_tape(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        if area.height < 3 {
            return;
        }
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.border)
            .title(Span::styled(format!(" trades{} ", if self.live.is_some() { " ● live" } else { "" }), theme.title));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let Some(tape) = &self.tape else {
            frame.render_widget(Paragraph::new(Span::styled("waiting for trades…", theme.muted)), inner);
            return;
        };
        let shown: Vec<(&Print, String, String)> = tape
            .iter()
            .take(usize::from(inner.height))
            .map(|print| {
                (
                    print,
                    inert(&self.price_text(&print.price)).into_owned(),
                    inert(&Self::size_text(&print.size)).into_owned(),
                )
            })
            .collect();
        let price_width = shown.iter().map(|p| p.1.width()).max().unwrap_or(0).min(14);
        let size_width = shown.iter().map(|p| p.2.width()).max().unwrap_or(0).min(14);
        // Time, price and size always; who took (also told by the colour) when there is room.
        let width = usize::from(inner.width);
        let with_mark = width >= 9 + 8 + price_width + 1 + size_width;
        let lines: Vec<Line<'static>> = shown
            .iter()
            .map(|(print, price, size)| {
                let mark = if with_mark {
                    format!("{:<7} ", truncate_to_width(&inert(&print.mark), 7))
                } else {
                    String::new()
                };
                let text = format!(
                    "{:<8} {mark}{:>price_width$} {:>size_width$}",
                    truncate_to_width(&inert(&print.time), 8),
                    truncate_to_width(price, price_width),
                    truncate_to_width(size, size_width)
                );
                Line::from(Span::styled(text, print.tone.map_or(theme.text, |t| t.style(theme))))
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), inner);
    }
}

/// The spread as it reads under the asks: its size and its share of the mid price, in the
/// precision of the book's own prices.
fn spread_text(spread: f64, bids: &[Level], asks: &[Level]) -> String {
    let places = bids.iter().chain(asks).map(|l| l.price_text.split_once('.').map_or(0, |(_, f)| f.len())).max();
    let places = places.unwrap_or(2).min(8);
    let mid = match (bids.first(), asks.first()) {
        (Some(b), Some(a)) => (a.price + b.price) / 2.0,
        _ => 0.0,
    };
    let share = if mid > 0.0 { format!(" ({:.3} %)", spread / mid * 100.0) } else { String::new() };
    format!("spread {spread:.places$}{share}")
}

fn level_line(price: &str, size: &str, cell: usize, bar: usize, style: Style) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            format!(
                "{:>cell$} {:>cell$}  ",
                truncate_to_width(&inert(price), cell),
                truncate_to_width(&inert(size), cell)
            ),
            style,
        ),
        Span::styled("▇".repeat(bar), style),
    ])
}

/// The ladder's lines: `depth` asks from the farthest down to the best, the spread, then
/// `depth` bids from the best down. Each level's bar is its cumulative size from the best price,
/// scaled so the deepest total of either side fills `bar_room` columns.
pub fn ladder_rows(bids: &[Level], asks: &[Level], depth: usize, bar_room: usize, spread: &str) -> Vec<LadderRow> {
    let totals = |levels: &[Level]| -> Vec<f64> {
        levels
            .iter()
            .take(depth)
            .scan(0.0, |sum, l| {
                *sum += l.size.max(0.0);
                Some(*sum)
            })
            .collect()
    };
    let (bid_totals, ask_totals) = (totals(bids), totals(asks));
    let deepest = bid_totals.iter().chain(&ask_totals).copied().fold(0.0_f64, f64::max);
    let bar = |total: f64| {
        if deepest <= 0.0 {
            return 0;
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "a bar of a few columns"
        )]
        let columns = (total / deepest * bar_room as f64).round() as usize;
        columns.max(usize::from(total > 0.0)).min(bar_room)
    };
    let mut rows: Vec<LadderRow> = asks
        .iter()
        .zip(&ask_totals)
        .rev()
        .map(|(l, total)| LadderRow::Ask {
            price: l.price_text.clone(),
            size: l.size_text.clone(),
            total: *total,
            bar: bar(*total),
        })
        .collect();
    rows.push(LadderRow::Spread(spread.to_owned()));
    rows.extend(bids.iter().zip(&bid_totals).map(|(l, total)| LadderRow::Bid {
        price: l.price_text.clone(),
        size: l.size_text.clone(),
        total: *total,
        bar: bar(*total),
    }));
    rows
}

/// Where each candle is drawn in a plot `height` rows tall: rows counted from the top, the
/// wick from the high to the low and the body from the higher of open and close to the lower.
#[derive(Clone, Debug, PartialEq)]
pub struct CandleLayout {
    /// The price at the top row and at the bottom row.
    pub high: f64,
    pub low: f64,
    pub columns: Vec<CandleColumn>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CandleColumn {
    /// Top and bottom row of the wick (inclusive).
    pub wick: (u16, u16),
    /// Top and bottom row of the body (inclusive), always within the wick.
    pub body: (u16, u16),
    /// Closed at or above its open.
    pub up: bool,
}

/// The rows of each candle of `candles` (in the order given) in a plot `height` rows tall,
/// scaled between the lowest low and the highest high. `None` when there is nothing to draw.
pub fn candle_layout(candles: &[Candle], height: u16) -> Option<CandleLayout> {
    if candles.is_empty() || height == 0 {
        return None;
    }
    let high = candles.iter().map(|c| c.high.max(c.open).max(c.close)).fold(f64::MIN, f64::max);
    let low = candles.iter().map(|c| c.low.min(c.open).min(c.close)).fold(f64::MAX, f64::min);
    if !high.is_finite() || !low.is_finite() {
        return None;
    }
    let range = high - low;
    let bottom = f64::from(height - 1);
    let row = |price: f64| -> u16 {
        if range <= 0.0 {
            return height / 2;
        }
        #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "clamped to the plot")]
        let at = ((high - price) / range * bottom).round().clamp(0.0, bottom) as u16;
        at
    };
    let columns = candles
        .iter()
        .map(|c| {
            let top = row(c.high.max(c.open).max(c.close));
            let foot = row(c.low.min(c.open).min(c.close));
            let body = (row(c.open.max(c.close)), row(c.open.min(c.close)));
            CandleColumn { wick: (top, foot), body, up: c.close >= c.open }
        })
        .collect();
    Some(CandleLayout { high, low, columns })
}

impl Market {
    /// A price for the chart's axis as the ladder writes prices, in at most ten columns: its
    /// decimals go first when it is wider.
    fn axis_price(&self, price: f64) -> String {
        let places = if price.abs() >= 1000.0 { 2 } else { 4 };
        let text = self.price_text(&format!("{price:.places$}"));
        if text.width() <= 10 {
            return text;
        }
        let whole = text.split('.').next().unwrap_or_default().to_owned();
        truncate_to_width(&whole, 10)
    }
}

fn put(buffer: &mut Buffer, x: u16, y: u16, text: &str, style: Style) {
    let area = buffer.area;
    if y < area.y + area.height && x < area.x + area.width {
        let room = usize::from(area.x + area.width - x);
        buffer.set_stringn(x, y, text, room.min(text.width()), style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn level(price: f64, size: f64) -> Level {
        Level { price, size, price_text: format!("{price:.2}"), size_text: format!("{size}"), orders: Some(1) }
    }

    #[test]
    fn the_ladder_puts_asks_above_the_spread_and_bars_grow_with_depth() {
        let bids = [level(99.0, 1.0), level(98.0, 3.0)];
        let asks = [level(101.0, 2.0), level(102.0, 2.0), level(103.0, 9.0)];
        let rows = ladder_rows(&bids, &asks, 2, 10, "spread 2.00");
        let prices: Vec<String> = rows
            .iter()
            .map(|r| match r {
                LadderRow::Ask { price, .. } | LadderRow::Bid { price, .. } => price.clone(),
                LadderRow::Spread(s) => s.clone(),
            })
            .collect();
        assert_eq!(prices, ["102.00", "101.00", "spread 2.00", "99.00", "98.00"], "depth 2 cuts the 103 ask");
        let bars: Vec<usize> = rows
            .iter()
            .filter_map(|r| match r {
                LadderRow::Ask { bar, .. } | LadderRow::Bid { bar, .. } => Some(*bar),
                LadderRow::Spread(_) => None,
            })
            .collect();
        // Cumulative: asks 2 then 4, bids 1 then 4; the deepest (4) fills the 10 columns.
        assert_eq!(bars, [10, 5, 3, 10]);
        assert!(ladder_rows(&[], &[], 5, 10, "spread —").len() == 1);
    }

    #[test]
    fn candles_scale_between_the_lowest_low_and_the_highest_high() {
        let up = Candle { time: 60, open: 10.0, high: 14.0, low: 9.0, close: 12.0, volume: 1.0 };
        let down = Candle { time: 120, open: 12.0, high: 12.0, low: 6.0, close: 8.0, volume: 1.0 };
        let layout = candle_layout(&[up, down], 9).unwrap();
        assert!((layout.high - 14.0).abs() < f64::EPSILON && (layout.low - 6.0).abs() < f64::EPSILON);
        // 8 price units over 8 rows: one row per unit from 14 at the top.
        assert_eq!(layout.columns[0], CandleColumn { wick: (0, 5), body: (2, 4), up: true });
        assert_eq!(layout.columns[1], CandleColumn { wick: (2, 8), body: (2, 6), up: false });
        let flat = Candle { time: 1, open: 5.0, high: 5.0, low: 5.0, close: 5.0, volume: 0.0 };
        assert_eq!(candle_layout(&[flat], 5).unwrap().columns[0].wick, (2, 2));
        assert!(candle_layout(&[], 5).is_none());
    }

    #[test]
    fn merging_keeps_what_the_newer_part_lacks() {
        let mut market = Market { facts: vec![("price".into(), "1".into(), None)], ..Market::default() };
        market.merge(Market { bids: Some(vec![level(1.0, 1.0)]), asks: Some(vec![]), ..Market::default() });
        market.merge(Market {
            facts: vec![("price".into(), "2".into(), None), ("24h".into(), "+1 %".into(), None)],
            ..Market::default()
        });
        assert_eq!(market.facts.len(), 2);
        assert_eq!(market.facts[0].1, "2");
        assert!(market.bids.is_some(), "the book stays when the ticker answers");
        assert_eq!(market.updates, 2);
    }

    #[test]
    fn the_board_lists_the_focus_first_asks_about_the_others_and_fills_facts_only_for_the_focus() {
        let row = |id: &str| BoardRow { id: id.into(), ..BoardRow::default() };
        let mut market = Market {
            focus: "B".into(),
            board: vec![row("B")],
            board_ask: Some(("stats", "id")),
            board_list: Some("list"),
            ..Market::default()
        };
        assert_eq!(market.board_asks(), vec![("list", vec![])], "an empty board asks for the list");
        let many: Vec<BoardRow> = ["A", "B", "C", "D", "E", "F", "G", "H", "I"].iter().map(|id| row(id)).collect();
        market.merge(Market { board: many, ..Market::default() });
        let ids: Vec<&str> = market.board.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["B", "A", "C", "D", "E", "F", "G"]);
        assert_eq!(market.board_asks().len(), BOARD_ASKS);
        assert!(market.board_asks().iter().all(|(op, values)| *op == "stats" && values[0].1 != "B"));
        let about =
            |id: &str| BoardRow { id: id.into(), last: "1".into(), change: "+1 %".into(), tone: Some(Move::Up) };
        let fact = || vec![("24h".to_owned(), "+1 %".to_owned(), Some(Move::Up))];
        market.merge(Market { about: Some(about("C")), facts: fact(), ..Market::default() });
        assert!(market.facts.is_empty(), "another product's stats are no facts of the focus");
        assert_eq!(market.board[2].last, "1");
        market.merge(Market { about: Some(about("B")), facts: fact(), ..Market::default() });
        assert_eq!(market.facts.len(), 1);
    }

    #[test]
    fn a_market_draws_candles_as_wicks_and_bodies_and_server_text_inert() {
        let candles = vec![
            Candle { time: 60, open: 10.0, high: 14.0, low: 9.0, close: 12.0, volume: 1.0 },
            Candle { time: 120, open: 12.0, high: 12.5, low: 6.0, close: 8.0, volume: 1.0 },
        ];
        let market = Market {
            facts: vec![("last".into(), "12\x1b[2J".into(), None)],
            bids: Some(vec![level(99.0, 1.0)]),
            asks: Some(vec![level(101.0, 2.0)]),
            candles: Some(candles),
            tape: Some(vec![Print {
                time: "12:00:01".into(),
                price: "100.00".into(),
                size: "0.5".into(),
                mark: "▲ buy".into(),
                tone: None,
            }]),
            ..Market::default()
        };
        let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
        terminal.draw(|f| market.render(f, f.area(), &Theme::dark())).unwrap();
        let buffer = terminal.backend().buffer();
        let text: String =
            (0..24).map(|y| (0..100).map(|x| buffer[(x, y)].symbol()).collect::<String>() + "\n").collect();
        assert!(text.contains('█') && text.contains('│'), "candles:\n{text}");
        assert!(text.contains("spread 2.00"), "{text}");
        assert!(text.contains("12␛[2J") && !text.contains('\x1b'), "{text}");
        assert!(text.contains("▲ buy"), "{text}");
        for (w, h) in [(1, 1), (10, 3), (30, 8)] {
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            terminal.draw(|f| market.render(f, f.area(), &Theme::dark())).unwrap();
        }
    }

    #[test]
    fn pushes_keep_the_whole_book_the_tape_and_the_candle_of_the_minute() {
        let mut market = Market {
            candles: Some(vec![Candle { time: 60, open: 1.0, high: 2.0, low: 1.0, close: 2.0, volume: 1.0 }]),
            ..Market::default()
        };
        let pair = |p: &str, s: &str| (p.to_owned(), s.to_owned());
        market.apply(Push::Changes(vec![(BookSide::Bid, "9".into(), "1".into())]));
        assert_eq!(market.bids, None, "changes before a book have nothing to change");
        market
            .apply(Push::Book { bids: vec![pair("99.00", "1"), pair("98.00", "2")], asks: vec![pair("101.00", "3")] });
        market.apply(Push::Changes(vec![
            (BookSide::Bid, "99.50".into(), "4".into()),
            (BookSide::Bid, "98.00".into(), "0.000".into()),
            (BookSide::Ask, "100.50".into(), "5".into()),
        ]));
        let prices = |levels: &Option<Vec<Level>>| {
            levels.as_ref().unwrap().iter().map(|l| l.price_text.clone()).collect::<Vec<_>>()
        };
        assert_eq!(prices(&market.bids), ["99.50", "99.00"], "best first; a zero size is gone");
        assert_eq!(prices(&market.asks), ["100.50", "101.00"]);
        let print = |price: &str| Print {
            time: "00:01:30".into(),
            price: price.into(),
            size: "1".into(),
            mark: String::new(),
            tone: None,
        };
        market.apply(Push::Trade(print("3"), Some((60, 3.0, 0.5))));
        market.apply(Push::Trade(print("0.5"), Some((120, 0.5, 2.0))));
        market.apply(Push::Trade(print("9"), Some((0, 9.0, 1.0))));
        let tape: Vec<&str> = market.tape.as_ref().unwrap().iter().map(|p| p.price.as_str()).collect();
        assert_eq!(tape, ["9", "0.5", "3"], "newest on top");
        let candles = market.candles.as_ref().unwrap();
        assert_eq!(candles[0], Candle { time: 60, open: 1.0, high: 3.0, low: 1.0, close: 3.0, volume: 1.5 });
        assert_eq!(candles[1], Candle { time: 120, open: 0.5, high: 0.5, low: 0.5, close: 0.5, volume: 2.0 });
        assert_eq!(candles.len(), 2, "a trade older than the chart has no candle to go in");
    }
}
