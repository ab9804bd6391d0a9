//! Turns (operation, values, credentials) into a real HTTP request, runs it, pages it, and reads
//! the vendor's errors. No terminal code here.

pub mod error;
pub mod vendor;
