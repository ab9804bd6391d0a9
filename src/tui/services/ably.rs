//! The Ably tab: a token request is signed with the key the tab is configured with, so its form
//! starts from that key's name. Lists and records use the generic views (stats get a chart);
//! the server's time, a bare epoch in milliseconds, is shown as a time.

use serde_json::{json, Map, Value};

use crate::catalog::Operation;
use crate::client::{Credentials, Target, Values};
use crate::format::epoch_text;
use crate::tui::components::detail::{fact, Detail};
use crate::tui::services::{LiveFeed, LiveFrame, ServiceConsole};

/// The realtime protocol's actions the tail reads.
const CONNECTED: i64 = 4;
const DISCONNECTED: i64 = 6;
const ERROR: i64 = 9;
const ATTACH: i64 = 10;
const ATTACHED: i64 = 11;
const PRESENCE: i64 = 14;
const MESSAGE: i64 = 15;
const SYNC: i64 = 16;
/// Presence actions: present, enter, leave, update.
const PRESENT: i64 = 1;
const ENTER: i64 = 2;
const LEAVE: i64 = 3;
const UPDATE: i64 = 4;

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

    /// A channel's history is followed over the realtime connection: Ably's realtime host is
    /// the REST host's (the sandbox's port, `main.realtime.ably.net`), at its root.
    fn live_tail(&self, op: &Operation, values: &Values, target: &Target) -> Option<LiveFeed> {
        if op.name != "messages_list" {
            return None;
        }
        let channel = values.get("channelId").filter(|c| !c.is_empty())?;
        let base = target.base_url.trim_end_matches('/');
        let socket_base = match base.split_once("://") {
            Some(("https", rest)) => format!("wss://{rest}"),
            Some(("http", rest)) => format!("ws://{rest}"),
            _ => return None,
        };
        let credential = match &target.credentials {
            Credentials::AblyKey(key) => format!("key={}", encode(key.expose())),
            Credentials::AblyToken(token) => format!("access_token={}", encode(token.expose())),
            _ => return None,
        };
        Some(LiveFeed {
            url: format!("{socket_base}/?{credential}&format=json&v=3"),
            shown: format!("{socket_base}/ (channel {channel})"),
            // The channel is attached once the connection says it is connected.
            send: Vec::new(),
        })
    }

    fn live_frame(&self, _op: &Operation, values: &Values, frame: &str) -> LiveFrame {
        let mut out = LiveFrame::default();
        let Ok(message) = serde_json::from_str::<Value>(frame) else {
            out.ended = Some("the realtime connection sent a frame that is not JSON".to_owned());
            return out;
        };
        let channel = values.get("channelId").map(String::as_str).unwrap_or_default();
        let client = |p: &Value| p["clientId"].as_str().unwrap_or_default().to_owned();
        match message["action"].as_i64() {
            Some(CONNECTED) => out.send.push(json!({"action": ATTACH, "channel": channel}).to_string()),
            Some(ATTACHED) if message["channel"] == channel => out.attached = true,
            Some(MESSAGE) if message["channel"] == channel => {
                let messages = message["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
                // Oldest first on the wire; the list shows the newest first.
                out.records = messages.iter().enumerate().rev().map(|(i, m)| filled(m, &message, i)).collect();
            }
            Some(SYNC) if message["channel"] == channel => {
                let members = message["presence"].as_array().map(Vec::as_slice).unwrap_or_default();
                out.present = Some(members.iter().filter(|p| p["action"] == PRESENT).map(client).collect());
            }
            Some(PRESENCE) if message["channel"] == channel => {
                for event in message["presence"].as_array().map(Vec::as_slice).unwrap_or_default() {
                    match event["action"].as_i64() {
                        Some(ENTER | UPDATE | PRESENT) => out.entered.push(client(event)),
                        Some(LEAVE) => out.left.push(client(event)),
                        _ => {}
                    }
                }
            }
            Some(ERROR | DISCONNECTED) => {
                let error = &message["error"];
                out.ended = Some(match (error["code"].as_i64(), error["message"].as_str()) {
                    (Some(code), Some(text)) => format!("Ably error {code}: {text}"),
                    _ => "the realtime connection was refused".to_owned(),
                });
            }
            _ => {}
        }
        out
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

/// A pushed message with what its protocol message gives for all of them (id, connection,
/// time), as the REST history writes each.
fn filled(message: &Value, protocol: &Value, index: usize) -> Value {
    let mut record = message.as_object().cloned().unwrap_or_default();
    if !record.contains_key("id") {
        if let Some(id) = protocol["id"].as_str() {
            record.insert("id".into(), Value::String(format!("{id}:{index}")));
        }
    }
    for field in ["connectionId", "timestamp"] {
        if !record.contains_key(field) && !protocol[field].is_null() {
            record.insert(field.into(), protocol[field].clone());
        }
    }
    Value::Object(record)
}

/// A query value, percent-encoded (a key's `:` and a token's `.`, `+` and `/`).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
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
