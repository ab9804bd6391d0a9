//! The Ably tab: a token request is signed with the key the tab is configured with, so its form
//! starts from that key's name. Lists and records use the generic views (stats get a chart);
//! the server's time, a bare epoch in milliseconds, is shown as a time.

use serde_json::{Map, Value};

use crate::catalog::Operation;
use crate::client::{Credentials, Target, Values};
use crate::format::epoch_text;
use crate::tui::components::detail::{fact, Detail};
use crate::tui::services::ServiceConsole;

pub struct Ably;

impl ServiceConsole for Ably {
    fn detail(&self, op: &Operation, body: &Value) -> Option<Detail> {
        if op.name != "time_get" {
            return None;
        }
        // Ably answers `[1764160000000]`: a number only the inspector should have to show.
        let ms = body.as_array()?.first()?.as_f64()?;
        Some(Detail {
            title: "Ably server time".into(),
            facts: vec![fact("server time (UTC)", epoch_text(ms)?)],
            record: Some(body.clone()),
            ..Detail::default()
        })
    }

    fn suggest(&self, op: &Operation, _record: &Map<String, Value>, target: &Target, values: &mut Values) {
        if op.name == "tokens_request" {
            if let Credentials::AblyKey(key) = &target.credentials {
                let name = key.expose().split(':').next().unwrap_or_default();
                values.insert("keyName".into(), name.to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::Service;

    #[test]
    fn the_server_time_reads_as_a_time() {
        let op = Service::Ably.operation("time_get").unwrap();
        let view = Ably.detail(op, &json!([1_704_103_500_000_i64])).unwrap();
        assert_eq!(view.facts[0].1, "2024-01-01 10:05:00");
        assert!(Ably.detail(op, &json!({"error": 1})).is_none());
    }
}
