//! Where the last frame drew what a click can land on: drawn by `draw`, read by the app's
//! mouse handling.

use ratatui::layout::Rect;

/// Where the last frame put what a click can land on.
#[derive(Clone, Debug, Default)]
pub struct Areas {
    /// Each tab's label in the header, with the tab's index.
    pub tabs: Vec<(Rect, usize)>,
    /// The panes, borders included; empty when not drawn (zoomed, or too small a terminal).
    pub resources: Rect,
    /// The first resource in view (the list scrolls when longer than its pane).
    pub resources_offset: usize,
    pub browser: Rect,
    pub inspector: Rect,
}
