//! The fixed, public credentials every simulator accepts (printed by `opsdeck sandbox`).

pub const ABLY_KEY: &str = "opsdeck.sandbox:sandbox-secret";
pub const ABLY_KEY_NAME: &str = "opsdeck.sandbox";
pub const ABLY_KEY_SECRET: &str = "sandbox-secret";
pub const ABLY_APP_ID: &str = "opsdeck";
pub const DEEPGRAM_KEY: &str = "sandbox-deepgram-key";
pub const AVATAX_ACCOUNT_ID: &str = "1100000001";
pub const AVATAX_LICENSE_KEY: &str = "SANDBOXLICENSEKEY";
pub const TAXJAR_TOKEN: &str = "sandbox-taxjar-token";
pub const COINBASE_KEY: &str = "sandbox-key";
pub const COINBASE_SECRET: &str = "c2FuZGJveC1zZWNyZXQ=";
pub const COINBASE_PASSPHRASE: &str = "sandbox-passphrase";
/// A second Coinbase key on the same profile that may only view (same secret and passphrase).
pub const COINBASE_VIEW_KEY: &str = "sandbox-view-key";
/// A key of the second profile ("Trading bot"), which may view and trade (same secret and
/// passphrase).
pub const COINBASE_BOT_KEY: &str = "sandbox-bot-key";
pub const MAILGUN_KEY: &str = "sandbox-mailgun-key";
/// The key the Mailgun simulator signs webhook POSTs with (HMAC-SHA256 of timestamp + token).
pub const MAILGUN_WEBHOOK_SIGNING_KEY: &str = "sandbox-mailgun-signing-key";
pub const EASYPOST_KEY: &str = "EZTKsandbox";
