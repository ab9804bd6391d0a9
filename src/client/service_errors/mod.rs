//! Per-service error parsing: each service words its error bodies its own way, and this reads them
//! all into one [`ApiError`]. One file per service (our code, not vendored);
//! `shared/api/<vendor>.md` is the reference for each.

mod ably;
mod avatax;
mod coinbase;
mod deepgram;
mod easypost;
mod mailgun;
mod taxjar;

use super::error::ApiError;
use crate::catalog::Service;

/// Reads a vendor's error response into an [`ApiError`]; never fails (falls back to the status).
pub fn parse_error(service: Service, status: u16, body: &[u8]) -> ApiError {
    let parsed = match service {
        Service::Ably => ably::parse_error(status, body),
        Service::Deepgram => deepgram::parse_error(status, body),
        Service::Avatax => avatax::parse_error(status, body),
        Service::Taxjar => taxjar::parse_error(status, body),
        Service::Coinbase => coinbase::parse_error(status, body),
        Service::Mailgun => mailgun::parse_error(status, body),
        Service::Easypost => easypost::parse_error(status, body),
    };
    let mut error = parsed.unwrap_or_else(|| ApiError::from_status(status, body));
    error.body = bytes::Bytes::copy_from_slice(body);
    error
}
