//! coinbase — being written.

use super::Operation;

pub(super) static OPERATIONS: &[Operation] = &[];
