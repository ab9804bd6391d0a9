//! The panes of a tab and the popups over them.

pub mod inspector;
