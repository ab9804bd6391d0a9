//! Being written.

use crate::client::error::ApiError;

pub(super) fn parse_error(_status: u16, _body: &[u8]) -> Option<ApiError> {
    None
}
