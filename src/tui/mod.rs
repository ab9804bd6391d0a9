//! The console.
