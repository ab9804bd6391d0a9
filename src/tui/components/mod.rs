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

#[cfg(test)]
mod tests {
    use super::cut_middle;
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
}
