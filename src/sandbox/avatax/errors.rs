//! AvaTax's error shape (api/avatax.md §5): `{"error": {"code", "message", "target", "details":
//! [{"code", "number", "message", "description", "faultCode", "helpLink", "refersTo",
//! "severity"}]}}`, with the real `ErrorCodeId` names and numbers.

use serde_json::{json, Value};

/// One AvaTax error: what a handler returns and what the simulator renders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AvaError {
    pub status: u16,
    pub code: &'static str,
    pub number: u32,
    pub message: String,
    pub description: String,
    pub target: &'static str,
    pub refers_to: Option<String>,
    /// `faultCode` `Server` rather than `Client` (the caller's mistakes).
    pub server_fault: bool,
    /// `severity` `Exception` rather than `Error`.
    pub exception: bool,
    /// Only `code` and `message`, no target or details (AvaTax's answer to empty credentials).
    pub bare: bool,
}

impl AvaError {
    /// A caller mistake in the request data (target `IncorrectData`).
    pub fn new(status: u16, code: &'static str, number: u32, message: impl Into<String>) -> AvaError {
        let message = message.into();
        AvaError {
            status,
            code,
            number,
            description: message.clone(),
            message,
            target: "IncorrectData",
            refers_to: None,
            server_fault: false,
            exception: false,
            bare: false,
        }
    }

    pub fn describe(mut self, description: impl Into<String>) -> AvaError {
        self.description = description.into();
        self
    }

    pub fn refers_to(mut self, field: impl Into<String>) -> AvaError {
        self.refers_to = Some(field.into());
        self
    }

    pub fn target(mut self, target: &'static str) -> AvaError {
        self.target = target;
        self
    }

    /// `EntityNotFoundError` (4): an unknown company, transaction or other record in the path.
    pub fn not_found(entity: &str, key: &str) -> AvaError {
        AvaError::new(404, "EntityNotFoundError", 4, format!("{entity} not found."))
            .describe(format!("The {entity} with code '{key}' was not found."))
            .target("HttpRequest")
    }

    /// `EntityNotFoundError` for a record named in the body (a tax code, a customer): the
    /// request is wrong, so 400 rather than 404.
    pub fn unknown_reference(entity: &str, key: &str, field: &str) -> AvaError {
        AvaError::new(400, "EntityNotFoundError", 4, format!("{entity} not found."))
            .describe(format!("The {entity} with code '{key}' was not found."))
            .refers_to(field)
    }

    /// `ValueRequiredError` (5).
    pub fn required(field: &str) -> AvaError {
        AvaError::new(400, "ValueRequiredError", 5, format!("Field {field} is required."))
            .describe(format!("Please provide a value for the field {field}."))
            .refers_to(field)
    }

    /// `InvalidParameterValue` (306) for a value of the wrong type or outside its set.
    pub fn invalid_value(field: &str, why: impl Into<String>) -> AvaError {
        AvaError::new(400, "InvalidParameterValue", 306, format!("The value of {field} is invalid."))
            .describe(why)
            .refers_to(field)
    }

    /// `InvalidEnumValue` (164).
    pub fn invalid_enum(field: &str, value: &str, allowed: &[&str]) -> AvaError {
        AvaError::new(400, "InvalidEnumValue", 164, format!("'{value}' is not a valid value for {field}."))
            .describe(format!("Expected one of: {}.", allowed.join(", ")))
            .refers_to(field)
    }

    /// `DateFormatError` (26).
    pub fn date_format(field: &str, value: &str) -> AvaError {
        AvaError::new(400, "DateFormatError", 26, format!("The date '{value}' in {field} is not a valid date."))
            .describe("Dates are written yyyy-MM-dd, e.g. 2024-05-31.")
            .refers_to(field)
    }

    /// `RangeError` (6).
    pub fn range(field: &str, why: impl Into<String>) -> AvaError {
        AvaError::new(400, "RangeError", 6, format!("Field {field} is out of range.")).describe(why).refers_to(field)
    }

    /// `ModelRequiredException` (38): no body, or a body that is not the expected JSON (message
    /// and target as recorded).
    pub fn model_required(why: impl Into<String>) -> AvaError {
        AvaError::new(400, "ModelRequiredException", 38, "A required model was not provided.").describe(why)
    }

    /// `StringLengthError` (13): a text longer than the model allows, named by its key as
    /// recorded (`Field 'taxCode' must be between 0 and 25 characters in length.`).
    pub fn string_length(key: &str, max: usize) -> AvaError {
        AvaError::new(400, "StringLengthError", 13, format!("Field '{key}' has an invalid length."))
            .describe(format!("Field '{key}' must be between 0 and {max} characters in length."))
    }

    /// `JsonFormatError` (47).
    pub fn json_format(why: impl Into<String>) -> AvaError {
        AvaError::new(400, "JsonFormatError", 47, "The JSON in your request could not be read.")
            .describe(why)
            .target("HttpRequest")
    }

    /// `AuthenticationException` (30): wrong credentials.
    pub fn authentication_failed() -> AvaError {
        AvaError {
            exception: true,
            ..AvaError::new(401, "AuthenticationException", 30, "Authentication failed.")
                .describe("Unable to authenticate the user or the account.")
                .target("HttpRequestHeaders")
        }
    }

    /// Basic credentials with an empty account and key: AvaTax's bare 401, as recorded (saleor's
    /// cassettes, `Authorization: Basic Og==`): `{"error": {"code": "AuthenticationException",
    /// "message": "BadRequest"}}`.
    pub fn empty_credentials() -> AvaError {
        AvaError { bare: true, ..AvaError::new(401, "AuthenticationException", 30, "BadRequest") }
    }

    /// `AuthenticationIncomplete` (34): no `Authorization` header.
    pub fn authentication_incomplete() -> AvaError {
        AvaError {
            exception: true,
            ..AvaError::new(401, "AuthenticationIncomplete", 34, "Authentication Incomplete.")
                .describe(
                    "You must provide an Authorization header of the type Basic or Bearer to authenticate correctly.",
                )
                .target("HttpRequestHeaders")
        }
    }

    /// `IncorrectPathError` (139): a path the API does not have.
    pub fn no_such_path(method: &str, path: &str) -> AvaError {
        AvaError::new(404, "IncorrectPathError", 139, format!("The path {method} {path} does not exist."))
            .describe("Check the URL against the AvaTax REST v2 reference.")
            .target("HttpRequest")
    }

    /// `GetTaxError` (300) for an operation the document's status forbids.
    pub fn doc_status(status: &str, expected: &str) -> AvaError {
        AvaError::new(400, "GetTaxError", 300, "DocStatus is invalid for this operation.")
            .describe(format!("Expected {expected}; the document is {status}."))
            .refers_to("DocStatus")
    }

    /// Renders the body.
    pub fn body(&self) -> Value {
        if self.bare {
            return json!({"error": {"code": self.code, "message": self.message}});
        }
        let mut detail = json!({
            "code": self.code,
            "number": self.number,
            "message": self.message,
            "description": self.description,
            "faultCode": if self.server_fault { "Server" } else { "Client" },
            "helpLink": format!("http://developer.avalara.com/avatax/errors/{}", self.code),
        });
        if let (Some(field), Some(map)) = (&self.refers_to, detail.as_object_mut()) {
            map.insert("refersTo".to_owned(), Value::String(field.clone()));
        }
        if let Some(map) = detail.as_object_mut() {
            map.insert("severity".to_owned(), Value::from(if self.exception { "Exception" } else { "Error" }));
        }
        json!({"error": {"code": self.code, "message": self.message, "target": self.target, "details": [detail]}})
    }
}
