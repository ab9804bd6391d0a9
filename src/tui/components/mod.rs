//! The panes of a tab and the popups over them, one file each.

pub mod browser;
pub mod chart;
pub mod confirm;
pub mod copy_menu;
pub mod detail;
pub mod form;
pub mod history_view;
pub mod inspector;
pub mod line_items;
pub mod menu;
pub mod sandbox_view;
pub mod save_file;
