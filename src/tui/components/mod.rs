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
pub mod menu;
pub mod sandbox_view;
pub mod save_file;

use ratatui::layout::Rect;

/// A popup of `width` x `height` in the middle of `area` (cut to the area when larger).
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let (width, height) = (width.min(area.width), height.min(area.height));
    Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height }
}
