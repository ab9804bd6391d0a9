//! The panes of a tab and the popups over them, one file each.

pub mod browser;
pub mod chart;
pub mod confirm;
pub mod copy_menu;
pub mod detail;
pub mod form;
pub mod history_view;
pub mod inspector;
pub mod line_input;
pub mod line_items;
pub mod market;
pub mod menu;
pub mod sandbox_view;
pub mod save_file;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// A popup of `width` x `height` in the middle of `area` (cut to the area when larger).
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let (width, height) = (width.min(area.width), height.min(area.height));
    Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height }
}

/// `text` in at most `width` columns, cut in its middle (`/v3/domains/…/webhooks`) when longer:
/// both ends of a path or a title say more than either alone.
pub fn cut_middle(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let room = width - 1;
    let (head, _) = fit_chars(text.chars(), room - room / 2);
    let (tail, _) = fit_chars(text.chars().rev(), room / 2);
    format!("{head}…{}", tail.chars().rev().collect::<String>())
}

/// The characters of `chars`, in order, while they fit in `room` columns, and the columns they
/// take.
pub fn fit_chars(chars: impl Iterator<Item = char>, room: usize) -> (String, usize) {
    let mut taken = String::new();
    let mut used = 0;
    for c in chars {
        let w = c.width().unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        taken.push(c);
    }
    (taken, used)
}

/// `line` in at most `width` columns, its styles kept, ending in `…` when something that is not
/// blank had to go: the terminal would otherwise clip it at the edge without a mark, and a value
/// cut silently reads as another value (an id one character short).
pub fn fit_line(line: Line<'static>, width: usize) -> Line<'static> {
    let shown = line.spans.iter().map(|s| s.content.width()).sum::<usize>();
    let trailing_blank =
        line.spans.iter().rev().flat_map(|s| s.content.chars().rev()).take_while(|c| *c == ' ').count();
    if shown.saturating_sub(trailing_blank) <= width {
        return line;
    }
    let mut room = width.saturating_sub(1);
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut last_style = line.style;
    for span in line.spans {
        if room == 0 {
            break;
        }
        let (taken, used) = fit_chars(span.content.chars(), room);
        room -= used;
        last_style = span.style;
        let whole = taken.len() == span.content.len();
        spans.push(Span::styled(taken, span.style));
        if !whole {
            break;
        }
    }
    spans.push(Span::styled("…", last_style));
    Line { spans, ..line }
}

#[cfg(test)]
mod tests {
    use super::{cut_middle, fit_line};
    use ratatui::text::{Line, Span};
    use unicode_width::UnicodeWidthStr;

    #[test]
    fn cut_middle_keeps_both_ends_within_the_width() {
        assert_eq!(cut_middle("short", 10), "short");
        let cut = cut_middle("GET /v3/domains/{domain}/webhooks/{id}", 20);
        assert_eq!(cut.width(), 20);
        assert!(cut.starts_with("GET /v3/d") && cut.ends_with("ks/{id}") && cut.contains('…'), "{cut}");
        assert_eq!(cut_middle("abc", 0), "");
        assert_eq!(cut_middle("abc", 1), "…");
    }

    #[test]
    fn a_line_too_wide_ends_in_an_ellipsis_and_trailing_blanks_do_not_count() {
        let text = |line: &Line| line.spans.iter().map(|s| s.content.as_ref()).collect::<String>();
        let line = Line::from(vec![Span::raw("id "), Span::raw("0f8fad5b-d9cb-469f-a165-70867728950e")]);
        let cut = fit_line(line.clone(), 20);
        assert_eq!(text(&cut), "id 0f8fad5b-d9cb-46…");
        assert_eq!(cut.width(), 20);
        assert_eq!(text(&fit_line(line.clone(), 39)), text(&line), "it fits");
        let padded = Line::from(vec![Span::raw("ada@opsdeck.example"), Span::raw("      ")]);
        assert_eq!(text(&fit_line(padded.clone(), 19)), text(&padded), "only blanks go: nothing is cut");
        assert_eq!(text(&fit_line(Line::from("注文注文"), 5)), "注文…");
    }
}
