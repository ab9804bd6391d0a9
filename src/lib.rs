//! opsdeck: a terminal operations console for seven SaaS APIs, with a stateful simulator of each.
//!
//! `catalog` describes every operation once; `client` turns an operation and values into a real
//! request and runs it on the task pool; `sandbox` serves the simulators; `config` finds profiles,
//! credentials and themes; `tui` is the console. Only `tui` knows about the terminal.

pub mod args;
pub mod catalog;
pub mod cli;
pub mod client;
pub mod clipboard;
pub mod commands;
pub mod config;
pub mod format;
pub mod history;
pub mod inert;
pub mod jq;
pub mod json_index;
pub mod log;
pub mod paths;
pub mod sandbox;
#[doc(hidden)]
pub mod shared_data;
pub mod table;
pub mod tui;
