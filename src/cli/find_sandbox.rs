//! `opsdeck call` with no credentials and no `OPSDECK_*_URL` for its service: is an `opsdeck
//! sandbox` running on this machine? Then the call goes there, and its state (a message
//! published, a shipment bought) is still there for the next call. Otherwise the call goes to a
//! throwaway simulator inside this process, and the user is told so.
//!
//! The question is asked once per call, so it must be cheap: one loopback connect to the
//! sandbox's control port (refused at once when nothing listens) and, when something answers,
//! one short `GET /` with a small timeout. It sends no credential: the call itself goes only to
//! a base URL that an answer shaped like the control port's gave, on loopback, and with the
//! simulator's fixed demo credentials (a service with credentials of its own is never looked up
//! here).

use std::time::Duration;

use reqwest::Url;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::catalog::Service;
use crate::sandbox;

/// The variable that says where to look: the `--port-base` the sandbox was started with
/// (default 7700), or `off` to never look.
pub use crate::sandbox::PORT_BASE_VAR;

/// The whole look-up at most: connect, ask, read. Only a program that accepts and then says
/// nothing costs this long; a sandbox answers in well under a millisecond, and a free port
/// refuses the connection at once.
const TIMEOUT: Duration = Duration::from_millis(500);

/// The most read of an answer: the control port's index is a few kilobytes.
const MAX_ANSWER: u64 = 256 * 1024;

/// Where to look for a sandbox, from [`PORT_BASE_VAR`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Look {
    /// At this port base (its control port).
    At(u16),
    /// Nowhere: calls without credentials go to the in-process simulator, without a note.
    Off,
}

impl Look {
    /// [`PORT_BASE_VAR`]'s value (`None`: unset, the default port base), or why it is wrong.
    pub fn from_var(value: Option<&str>) -> Result<Look, String> {
        Ok(sandbox::port_base_from_var(value)?.map_or(Look::Off, Look::At))
    }

    /// The port base calls would use: the one looked at, else the default.
    pub fn port_base(self) -> u16 {
        match self {
            Look::At(base) => base,
            Look::Off => sandbox::DEFAULT_PORT_BASE,
        }
    }
}

/// A running sandbox's listener for one service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The base URL to call (normalised: no version prefix).
    pub base_url: String,
    /// Whether the sandbox simulates the service. Every service is simulated now; a sandbox of an
    /// older opsdeck, still running, may say `"simulated": false` (it answers 501 there).
    pub simulated: bool,
}

/// Why no sandbox was found, as a clause for the note the user gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotFound {
    /// Nothing listens on the control port.
    NothingListens,
    /// Something answers there, but not as an opsdeck sandbox's control port does.
    SomethingElse(String),
}

/// Asks the control port at `port_base` where `service`'s listener (in `region`: Mailgun's
/// `Some("eu")`) is.
pub async fn find(port_base: u16, service: Service, region: Option<&str>) -> Result<Found, NotFound> {
    let ask = async {
        let mut stream = match TcpStream::connect(("127.0.0.1", port_base)).await {
            Ok(stream) => stream,
            Err(_) => return Err(NotFound::NothingListens),
        };
        let other = |e: std::io::Error| NotFound::SomethingElse(format!("it broke off the connection: {e}"));
        // HTTP/1.0: the answer is never chunked and the connection closes after it.
        let request = format!("GET / HTTP/1.0\r\nHost: 127.0.0.1:{port_base}\r\nAccept: application/json\r\n\r\n");
        stream.write_all(request.as_bytes()).await.map_err(other)?;
        let mut answer = Vec::new();
        stream.take(MAX_ANSWER).read_to_end(&mut answer).await.map_err(other)?;
        Ok(answer)
    };
    let answer = match tokio::time::timeout(TIMEOUT, ask).await {
        Ok(answer) => answer?,
        Err(_) => return Err(NotFound::SomethingElse(format!("it gave no answer within {} ms", TIMEOUT.as_millis()))),
    };
    read_answer(&answer, service, region).map_err(NotFound::SomethingElse)
}

/// The listener of `service` in the control port's answer to `GET /`; an error says why the
/// answer is not an opsdeck sandbox's.
fn read_answer(answer: &[u8], service: Service, region: Option<&str>) -> Result<Found, String> {
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n").ok_or("its answer is not HTTP")?;
    let head = String::from_utf8_lossy(&answer[..split]);
    let status = head.lines().next().unwrap_or_default();
    let mut words = status.split_whitespace();
    if !words.next().is_some_and(|v| v.starts_with("HTTP/1.")) {
        return Err("its answer is not HTTP".into());
    }
    if words.next() != Some("200") {
        return Err(format!("GET / answered {}", crate::inert::inert(status)));
    }
    let body: Value = serde_json::from_slice(&answer[split + 4..]).map_err(|_| "GET / did not answer JSON")?;
    let name = match region {
        Some(region) => format!("{service}-{region}"),
        None => service.name().to_owned(),
    };
    let not_ours = || format!("GET / does not list {name} as an opsdeck sandbox does");
    let entry = body["services"].as_array().and_then(|all| all.iter().find(|s| s["service"] == name.as_str()));
    let entry = entry.ok_or_else(not_ours)?;
    let (Some(base_url), Some(_ready)) = (entry["base_url"].as_str(), entry["ready"].as_bool()) else {
        return Err(not_ours());
    };
    let simulated = entry["simulated"].as_bool().unwrap_or(true);
    // Calls go only to this machine, wherever an answer says: the control port could be anyone's.
    let parsed = Url::parse(base_url).map_err(|_| not_ours())?;
    let host = parsed.host_str().unwrap_or_default();
    let loopback = match host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    };
    if parsed.scheme() != "http" || !loopback {
        return Err(format!("it names {} for {name}, which is not on this machine", crate::inert::inert(base_url)));
    }
    let base_url = crate::config::checked_base_url(service, base_url, "the sandbox's control port")
        .map_err(|e| format!("{e:#}"))?;
    Ok(Found { base_url, simulated })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(body: &str) -> Vec<u8> {
        format!("HTTP/1.0 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len())
            .into_bytes()
    }

    const INDEX: &str = r#"{"services": [
        {"service": "ably", "base_url": "http://127.0.0.1:7701", "ready": true},
        {"service": "deepgram", "base_url": "http://127.0.0.1:7702", "simulated": false, "ready": false},
        {"service": "mailgun", "base_url": "http://127.0.0.1:7706", "simulated": true, "ready": false},
        {"service": "mailgun-eu", "base_url": "http://127.0.0.1:7707", "simulated": true, "ready": false},
        {"service": "easypost", "base_url": "http://127.0.0.1:7708/v2", "simulated": true, "ready": true}
    ], "speed": 1.0}"#;

    #[test]
    fn the_control_port_names_each_listener() {
        let found = |service, region| read_answer(&http(INDEX), service, region);
        let ably = found(Service::Ably, None).unwrap();
        assert_eq!(ably, Found { base_url: "http://127.0.0.1:7701".into(), simulated: true });
        assert!(!found(Service::Deepgram, None).unwrap().simulated);
        assert_eq!(found(Service::Mailgun, Some("eu")).unwrap().base_url, "http://127.0.0.1:7707");
        assert_eq!(found(Service::Mailgun, None).unwrap().base_url, "http://127.0.0.1:7706");
        assert_eq!(found(Service::Easypost, None).unwrap().base_url, "http://127.0.0.1:7708", "without /v2");
        let err = found(Service::Taxjar, None).unwrap_err();
        assert_eq!(err, "GET / does not list taxjar as an opsdeck sandbox does");
    }

    #[test]
    fn anything_else_is_not_a_sandbox() {
        let not = |answer: &[u8]| read_answer(answer, Service::Ably, None).unwrap_err();
        assert_eq!(not(b"SSH-2.0-OpenSSH_9.6\r\n"), "its answer is not HTTP");
        assert_eq!(not(b"HTTP/1.1 404 Not Found\r\n\r\n"), "GET / answered HTTP/1.1 404 Not Found");
        assert_eq!(not(&http("<html>hello</html>")), "GET / did not answer JSON");
        assert!(not(&http(r#"{"services": [{"service": "ably"}]}"#)).contains("does not list ably"));
        let elsewhere = r#"{"services": [{"service": "ably", "base_url": "http://ably.example.com", "simulated": true, "ready": true}]}"#;
        assert_eq!(not(&http(elsewhere)), "it names http://ably.example.com for ably, which is not on this machine");
        let tls = r#"{"services": [{"service": "ably", "base_url": "https://127.0.0.1:1", "simulated": true, "ready": true}]}"#;
        assert!(not(&http(tls)).contains("not on this machine"));
    }

    #[test]
    fn the_variable_is_a_port_base_or_off() {
        assert_eq!(Look::from_var(None), Ok(Look::At(7700)));
        assert_eq!(Look::from_var(Some("")), Ok(Look::At(7700)));
        assert_eq!(Look::from_var(Some("17700")), Ok(Look::At(17700)));
        assert_eq!(Look::from_var(Some("OFF")), Ok(Look::Off));
        for bad in ["0", "65530", "x", "-1"] {
            let err = Look::from_var(Some(bad)).unwrap_err();
            assert!(err.starts_with("OPSDECK_SANDBOX_PORT_BASE must be the --port-base"), "{bad}: {err}");
        }
    }
}
