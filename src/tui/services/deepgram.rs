//! The Deepgram tab: the generic views until its simulator and its own views land.

use crate::tui::services::ServiceConsole;

pub struct Deepgram;

impl ServiceConsole for Deepgram {}
