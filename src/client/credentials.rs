//! A service's credentials, and the environment variables they (and the base URL) are read from.
//! What removes them from anything stored or logged is [`super::redact`].

use std::fmt;

use crate::catalog::Service;

/// A secret string: never printed by `Debug` or `Display`, so it cannot leak into logs or screens.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }
    /// The secret itself, for signing and auth headers only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// How a service authenticates, with the secrets it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credentials {
    /// An Ably API key `<appId>.<keyId>:<secret>` (Basic auth, and signing of token requests).
    AblyKey(Secret),
    /// An Ably token (sent as `Bearer base64(token)`).
    AblyToken(Secret),
    /// `Authorization: Token <key>`.
    Deepgram(Secret),
    /// Basic with the account id and license key.
    Avatax { account_id: String, license_key: Secret },
    /// `Authorization: Bearer <token>`.
    Taxjar(Secret),
    /// `CB-ACCESS-*` headers, HMAC-signed with the base64 secret.
    Coinbase { key: String, secret: Secret, passphrase: Secret },
    /// Basic `api:<key>`.
    Mailgun(Secret),
    /// Basic `<key>:` (empty password).
    Easypost(Secret),
}

/// The environment variables that make a service live, in the order a [`Credentials`] value holds its secrets (the config reads them in this order).
pub fn credential_variables(service: Service) -> &'static [&'static str] {
    match service {
        Service::Ably => &["ABLY_API_KEY"],
        Service::Deepgram => &["DEEPGRAM_API_KEY"],
        Service::Avatax => &["AVATAX_ACCOUNT_ID", "AVATAX_LICENSE_KEY"],
        Service::Taxjar => &["TAXJAR_API_KEY"],
        Service::Coinbase => &["COINBASE_API_KEY", "COINBASE_API_SECRET", "COINBASE_API_PASSPHRASE"],
        Service::Mailgun => &["MAILGUN_API_KEY"],
        Service::Easypost => &["EASYPOST_API_KEY"],
    }
}

/// The variable that points a service at another base URL: `OPSDECK_ABLY_URL`.
pub fn url_variable(service: Service) -> String {
    format!("OPSDECK_{}_URL", service.name().to_ascii_uppercase())
}
