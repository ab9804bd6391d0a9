//! The Mailgun simulator (issue 8). This file only declares the modules of the lists, routes and
//! validation part so they compile and test on their own; the simulator core replaces it.

pub mod lists;
pub mod refusal;
pub mod routes;
pub mod validation;
