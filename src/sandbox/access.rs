//! Who may reach a simulator's port. Only this machine's own programs: a request addressed to a
//! name other than a loopback one (DNS rebinding: a page on `rebind.example` whose name now
//! points at 127.0.0.1) or sent by a web page (a browser's `Origin`) is refused before it reaches
//! the simulator, unless the user named that host or origin (`[sandbox] hosts`, `origins`). A
//! page the user allows gets CORS answers naming its origin, never `*`.

use axum::extract::Request;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::StatusCode;
use axum::response::Response;

/// The hosts and origins a user adds to the loopback ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    /// Host names (without a port) requests may be addressed to besides `127.0.0.1`,
    /// `localhost` and `[::1]`.
    pub hosts: Vec<String>,
    /// Web origins (`http://localhost:3000`) whose pages may call the simulators.
    pub origins: Vec<String>,
}

/// Why a request is refused: its status and the message, said in the vendor's error shape.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused {
    pub status: StatusCode,
    pub message: String,
}

const LOOPBACK: &[&str] = &["127.0.0.1", "localhost", "[::1]"];

impl Access {
    /// Why `request` may not reach a simulator, if it may not.
    pub fn refuse(&self, request: &Request) -> Option<Refused> {
        let headers = request.headers();
        let hosts: Vec<&HeaderValue> = headers.get_all(header::HOST).iter().collect();
        if hosts.len() > 1 {
            return Some(Refused {
                status: StatusCode::BAD_REQUEST,
                message: "a request has one Host header, not several".to_owned(),
            });
        }
        if let Some(host) = hosts.first() {
            let host = String::from_utf8_lossy(host.as_bytes()).trim().to_ascii_lowercase();
            if !self.host_allowed(&host) {
                return Some(Refused {
                    status: StatusCode::FORBIDDEN,
                    message: format!(
                        "the opsdeck sandbox answers requests addressed to 127.0.0.1, localhost or [::1], not Host {:?} (add a name under [sandbox] hosts in the config to allow it)",
                        crate::inert::inert(&host)
                    ),
                });
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = String::from_utf8_lossy(origin.as_bytes()).trim().to_owned();
            if !self.origin_allowed(&origin) {
                return Some(Refused {
                    status: StatusCode::FORBIDDEN,
                    message: format!(
                        "the opsdeck sandbox takes no requests from web pages of {:?} (add the origin under [sandbox] origins in the config to allow it)",
                        crate::inert::inert(&origin)
                    ),
                });
            }
        }
        None
    }

    /// Whether `host` (`name` or `name:port`, lower case) names this machine or a name the user
    /// added.
    fn host_allowed(&self, host: &str) -> bool {
        let name = match host.rsplit_once(':') {
            // `[::1]:8080`, `localhost:8080`; a bare `[::1]` has colons only inside brackets.
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !name.ends_with(':') => name,
            _ => host,
        };
        let name = name.trim_end_matches('.');
        LOOPBACK.contains(&name) || self.hosts.iter().any(|allowed| allowed.trim().eq_ignore_ascii_case(name))
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        self.origins.iter().any(|allowed| allowed.trim().trim_end_matches('/').eq_ignore_ascii_case(origin))
    }

    /// The CORS headers of an answer to a request from `origin`: a simulator's own
    /// `Access-Control-*` headers stay only for an origin the user allows, whose name replaces
    /// any `*`; every other answer has none, so no page reads it.
    pub fn cors(&self, request_origin: Option<&str>, response: &mut Response) {
        let headers = response.headers_mut();
        match request_origin.filter(|origin| self.origin_allowed(origin)) {
            Some(origin) => {
                if let Ok(value) = HeaderValue::from_str(origin) {
                    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
                    headers.append(header::VARY, HeaderValue::from_static("Origin"));
                }
            }
            None => strip_cors(headers),
        }
    }
}

fn strip_cors(headers: &mut HeaderMap) {
    let names: Vec<_> = headers.keys().filter(|name| name.as_str().starts_with("access-control-")).cloned().collect();
    for name in names {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut request = Request::new(Body::empty());
        for (name, value) in headers {
            request.headers_mut().append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        request
    }

    #[test]
    fn loopback_hosts_with_or_without_a_port_and_the_users_names_only() {
        let access = Access { hosts: vec!["sandbox.test".into()], ..Access::default() };
        for host in ["127.0.0.1", "127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]", "[::1]:443", "sandbox.test:9"]
        {
            assert_eq!(access.refuse(&request(&[("host", host)])), None, "{host}");
        }
        for host in ["rebind.evil.example", "127.0.0.1.evil.example", "localhost.evil:80", "::1", "10.0.0.1"] {
            let refused = access.refuse(&request(&[("host", host)])).unwrap();
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{host}");
        }
        let two = access.refuse(&request(&[("host", "127.0.0.1"), ("host", "evil.example")])).unwrap();
        assert_eq!(two.status, StatusCode::BAD_REQUEST);
        assert_eq!(access.refuse(&request(&[])), None, "no Host (HTTP/1.0): a local program");
    }

    #[test]
    fn a_page_is_refused_unless_its_origin_is_allowed_and_then_named_not_starred() {
        let access = Access { origins: vec!["http://localhost:3000".into()], ..Access::default() };
        let page = access.refuse(&request(&[("host", "localhost"), ("origin", "https://evil.example")])).unwrap();
        assert_eq!(page.status, StatusCode::FORBIDDEN);
        assert_eq!(access.refuse(&request(&[("origin", "http://localhost:3000")])), None);
        let starred = || {
            let mut response = Response::new(Body::empty());
            response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
            response.headers_mut().insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("60"));
            response
        };
        let mut allowed = starred();
        access.cors(Some("http://localhost:3000"), &mut allowed);
        assert_eq!(allowed.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "http://localhost:3000");
        let mut script = starred();
        access.cors(None, &mut script);
        assert!(script.headers().keys().all(|name| !name.as_str().starts_with("access-control-")));
    }
}
