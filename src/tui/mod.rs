//! The console: state, keys and drawing. The only module that knows about the terminal.

pub mod components;
pub mod json_tree;
pub mod theme;
