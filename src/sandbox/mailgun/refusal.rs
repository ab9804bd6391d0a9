//! Mailgun's error answer, shared by every part of the Mailgun simulator: a status and the JSON
//! body Mailgun sends, `{"message": "..."}` for nearly everything (api/mailgun.md §6). The few
//! endpoints that answer `{"Reason": "..."}` build the body themselves with [`Refusal`]'s public
//! fields, so one type carries both shapes to the renderer.

use serde_json::json;

/// A Mailgun error answer: status and the JSON body (`{"message": ...}`, or `{"Reason": ...}`).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub status: u16,
    pub body: serde_json::Value,
}

impl Refusal {
    /// `{"message": message}` with `status`: Mailgun's usual error body.
    pub fn new(status: u16, message: impl Into<String>) -> Refusal {
        Refusal { status, body: json!({ "message": message.into() }) }
    }

    /// 400: a parameter is missing or malformed.
    pub fn bad_request(message: impl Into<String>) -> Refusal {
        Refusal::new(400, message)
    }

    /// 404: no such list, member, route or path.
    pub fn not_found(message: impl Into<String>) -> Refusal {
        Refusal::new(404, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_bodies_carry_the_message() {
        assert_eq!(Refusal::bad_request("x").status, 400);
        assert_eq!(Refusal::not_found("Not Found").body, json!({"message": "Not Found"}));
        assert_eq!(
            Refusal::new(429, "Too Many Requests"),
            Refusal { status: 429, body: json!({"message": "Too Many Requests"}) }
        );
    }
}
