//! The Ably tab: a token request is signed with the key the tab is configured with, so its form
//! starts from that key's name. Lists and records use the generic views (stats get a chart).

use serde_json::{Map, Value};

use crate::catalog::Operation;
use crate::client::{Credentials, Target, Values};
use crate::tui::services::ServiceConsole;

pub struct Ably;

impl ServiceConsole for Ably {
    fn suggest(&self, op: &Operation, _record: &Map<String, Value>, target: &Target, values: &mut Values) {
        if op.name == "tokens_request" {
            if let Credentials::AblyKey(key) = &target.credentials {
                let name = key.expose().split(':').next().unwrap_or_default();
                values.insert("keyName".into(), name.to_owned());
            }
        }
    }
}
