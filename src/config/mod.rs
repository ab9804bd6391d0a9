//! Profiles, credentials and settings: where each service's calls go and as whom.
//!
//! Live credentials come from the environment first, then the config file's profile; a service
//! with neither runs against the embedded simulator. Every error names where the bad value came
//! from (an environment variable, or `profiles.NAME.SERVICE.field` in which file) and never
//! repeats a secret; what is allowed but risky (a readable file holding a secret, a live key over
//! plain `http://`) becomes a warning for the CLI's stderr and the console's status line.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use reqwest::Url;
use serde::Deserialize;

use crate::catalog::Service;
use crate::client::{credential_variables, url_variable, Credentials, HttpSettings, Secret, Target};
use crate::inert::inert;
use crate::sandbox::{self, credentials as sandbox_creds};

/// The built-in profile: every service at the `opsdeck sandbox` default ports.
pub const LOCAL_PROFILE: &str = "local";

/// How long a secret command (`api_key_cmd`, ...) may run: a hung `pass` or a prompt nobody
/// sees must not hang opsdeck.
pub const SECRET_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// `config.toml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Theme name (built-in `dark` or `light`, or a file in the themes folder).
    pub theme: Option<String>,
    /// Profile used when `--profile` is not given.
    pub default_profile: Option<String>,
    /// Calls running at once (default 8).
    pub max_concurrent_calls: Option<usize>,
    /// Seconds between auto-refreshes (default 2).
    pub auto_refresh_secs: Option<u64>,
    /// Seconds before a call times out (default 30).
    pub request_timeout_secs: Option<u64>,
    /// The largest response held in memory, in MB (default 512): a bigger one is refused with a
    /// message rather than read.
    pub max_response_mb: Option<u64>,
    /// Mouse clicks and the wheel in the console (default off, so the terminal keeps selection).
    pub mouse: Option<bool>,
    /// A command that takes copied text on stdin (`wl-copy`, `xclip -selection clipboard`), tried
    /// when the terminal cannot take OSC 52.
    pub clipboard_cmd: Option<String>,
    #[serde(default)]
    pub history: HistorySettings,
    /// `[sandbox]`: the embedded simulators (and `opsdeck sandbox`).
    #[serde(default)]
    pub sandbox: SandboxSettings,
    /// Console actions rebound: `quit = "Q"` or `down = ["j", "down"]`.
    #[serde(default)]
    pub keys: BTreeMap<String, KeyList>,
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    /// The file this was read from, so errors can say where to fix a value.
    #[serde(skip)]
    pub source: Option<PathBuf>,
    /// What is allowed but risky about the file itself (a readable file holding a secret), for
    /// the CLI's stderr and the console's status line: see [`startup_warnings`].
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// The most `max_response_mb` may be: the JSON index addresses a body with 32-bit offsets.
pub const MAX_RESPONSE_MB: u64 = 4095;

/// `[history]`: what the local call history keeps.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySettings {
    /// Record calls at all (default true).
    pub enabled: Option<bool>,
    /// Days a call is kept (default 90).
    pub retention_days: Option<u32>,
    /// Response bytes kept per call (default 256 KiB); longer bodies are cut and marked.
    pub max_body_bytes: Option<usize>,
}

/// One key or several for an action in `[keys]`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum KeyList {
    One(String),
    Many(Vec<String>),
}

impl KeyList {
    pub fn keys(&self) -> Vec<&str> {
        match self {
            KeyList::One(key) => vec![key.as_str()],
            KeyList::Many(keys) => keys.iter().map(String::as_str).collect(),
        }
    }
}

/// `[sandbox]`: what the simulators are started with.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSettings {
    /// Avalara's ZIP5 rate tables: one CSV, or a folder of `TAXRATES_ZIP5_*.csv`. A relative path
    /// is taken from the config file's folder.
    pub tax_rates: Option<PathBuf>,
    /// Host names the simulators answer besides 127.0.0.1, localhost and [::1] (a name in
    /// /etc/hosts pointing at this machine).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Web origins (`http://localhost:3000`) whose pages may call the simulators; none by default.
    #[serde(default)]
    pub origins: Vec<String>,
}

/// Who besides this machine's own programs may reach the simulators, from `[sandbox] hosts` and
/// `origins`: a host is a bare name, an origin a scheme, a name and maybe a port.
pub fn sandbox_access(config: &Config) -> Result<crate::sandbox::access::Access, String> {
    let settings = &config.sandbox;
    for host in &settings.hosts {
        let name = host.trim();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') {
            return Err(format!("[sandbox] hosts: {host:?} is no host name (give a bare name such as sandbox.test)"));
        }
    }
    for origin in &settings.origins {
        let rest = origin.trim().strip_prefix("http://").or_else(|| origin.trim().strip_prefix("https://"));
        if rest.is_none_or(|rest| rest.is_empty() || rest.trim_end_matches('/').contains('/')) {
            return Err(format!(
                "[sandbox] origins: {origin:?} is no web origin (give a scheme, a name and maybe a port, such as http://localhost:3000)"
            ));
        }
    }
    Ok(crate::sandbox::access::Access { hosts: settings.hosts.clone(), origins: settings.origins.clone() })
}

/// The variable naming Avalara's ZIP5 rate tables for the simulators (after `--tax-rates`,
/// before the config's `[sandbox] tax_rates`).
pub const TAX_RATES_VAR: &str = "OPSDECK_TAX_RATES";

/// The tax rate tables the simulators calculate with: Avalara's ZIP5 tables named by `flag`
/// (`opsdeck sandbox --tax-rates`), else [`TAX_RATES_VAR`], else the config's
/// `[sandbox] tax_rates`, loaded whole; `None` when none names any (the built-in tables).
/// An error names the setting the path came from and the file, line and reason.
pub fn tax_tables(
    flag: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
    config: &Config,
) -> Result<Option<Arc<crate::sandbox::tax::Table>>, String> {
    let named = match (flag, env(TAX_RATES_VAR).filter(|v| !v.trim().is_empty())) {
        (Some(path), _) => Some((path.to_owned(), "--tax-rates".to_owned())),
        (None, Some(path)) => Some((PathBuf::from(path), TAX_RATES_VAR.to_owned())),
        (None, None) => config.sandbox.tax_rates.as_ref().map(|path| {
            let folder = config.source.as_deref().and_then(Path::parent).unwrap_or(Path::new(""));
            let file = config.source.as_ref().map_or_else(|| "the config".to_owned(), |f| f.display().to_string());
            (folder.join(path), format!("[sandbox] tax_rates in {file}"))
        }),
    };
    let Some((path, from)) = named else { return Ok(None) };
    crate::sandbox::tax::load_zip5(&path)
        .map(|table| Some(Arc::new(table)))
        .map_err(|why| format!("the tax rate tables of {from} cannot be loaded: {why}"))
}

/// One profile: per service, where and as whom.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Refuse every operation that changes something, as `--read-only` does.
    pub read_only: Option<bool>,
    pub ably: Option<ServiceProfile>,
    pub deepgram: Option<ServiceProfile>,
    pub avatax: Option<ServiceProfile>,
    pub taxjar: Option<ServiceProfile>,
    pub coinbase: Option<ServiceProfile>,
    pub mailgun: Option<ServiceProfile>,
    pub easypost: Option<ServiceProfile>,
}

impl Profile {
    fn service(&self, service: Service) -> Option<&ServiceProfile> {
        match service {
            Service::Ably => self.ably.as_ref(),
            Service::Deepgram => self.deepgram.as_ref(),
            Service::Avatax => self.avatax.as_ref(),
            Service::Taxjar => self.taxjar.as_ref(),
            Service::Coinbase => self.coinbase.as_ref(),
            Service::Mailgun => self.mailgun.as_ref(),
            Service::Easypost => self.easypost.as_ref(),
        }
    }
}

/// A service's settings in a profile. Each secret may be given as a command whose output is the
/// secret (`api_key_cmd = "pass show ably"`), so none need be stored in plain text.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceProfile {
    pub url: Option<String>,
    pub api_key: Option<String>,
    pub api_key_cmd: Option<String>,
    pub api_secret: Option<String>,
    pub api_secret_cmd: Option<String>,
    pub passphrase: Option<String>,
    pub passphrase_cmd: Option<String>,
    pub account_id: Option<String>,
    pub license_key: Option<String>,
    pub license_key_cmd: Option<String>,
    /// Mailgun only: `us` (default) or `eu`.
    pub region: Option<String>,
}

impl ServiceProfile {
    /// Every secret field with its command twin: (field, value in plain text, command).
    fn secret_pairs(&self) -> [(&'static str, Option<&str>, Option<&str>); 4] {
        [
            ("api_key", self.api_key.as_deref(), self.api_key_cmd.as_deref()),
            ("api_secret", self.api_secret.as_deref(), self.api_secret_cmd.as_deref()),
            ("passphrase", self.passphrase.as_deref(), self.passphrase_cmd.as_deref()),
            ("license_key", self.license_key.as_deref(), self.license_key_cmd.as_deref()),
        ]
    }

    /// The fields `service` reads, in [`credential_variables`] order: (field, value, command).
    fn credential_fields(&self, service: Service) -> Vec<(&'static str, Option<&str>, Option<&str>)> {
        let [api_key, api_secret, passphrase, license_key] = self.secret_pairs();
        match service {
            Service::Avatax => vec![("account_id", self.account_id.as_deref(), None), license_key],
            Service::Coinbase => vec![api_key, api_secret, passphrase],
            _ => vec![api_key],
        }
    }
}

/// Where a service's calls go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The real service.
    Live,
    /// The simulator started inside this process.
    Embedded,
    /// A simulator elsewhere (`opsdeck sandbox`, `--profile local`, or an `OPSDECK_*_URL`).
    External,
}

/// A service ready to call.
#[derive(Clone, Debug)]
pub struct ResolvedService {
    pub target: Target,
    pub mode: Mode,
    /// Which simulator listener serves it when it is not live: `Some("eu")` for Mailgun's EU
    /// region.
    pub region: Option<&'static str>,
    /// What is risky about how this service is set up (a live key over plain `http://`, half of
    /// its environment variables set): shown once, by the CLI when it calls this service and by
    /// the console at start (see [`startup_warnings`]).
    pub warnings: Vec<String>,
}

/// Every warning about the config file and the resolved services, each once, for the console's
/// status line at start.
pub fn startup_warnings(config: &Config, resolved: &[ResolvedService]) -> Vec<String> {
    let mut warnings = config.warnings.clone();
    for warning in resolved.iter().flat_map(|r| &r.warnings) {
        if !warnings.contains(warning) {
            warnings.push(warning.clone());
        }
    }
    warnings
}

impl Config {
    /// Reads `path`, or `config.toml` in the config dir when none is given. A missing default
    /// file is an empty config; a missing explicit file or a bad one is an error.
    pub fn load(path: Option<&Path>) -> anyhow::Result<Config> {
        let (path, explicit) = match path {
            Some(p) => (p.to_owned(), true),
            None => match crate::paths::Paths::current(None).config_file {
                Some(file) => (file, false),
                None => return Ok(Config::default()),
            },
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => return Ok(Config::default()),
            Err(e) => anyhow::bail!("cannot read config {}: {e}", path.display()),
        };
        let mut config = Config::parse(&text, &path)?;
        if let Some(warning) = readable_secret_warning(&config, &path) {
            config.warnings.push(warning);
        }
        Ok(config)
    }

    /// The text of a config file read from `path` (named in errors).
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Config> {
        let mut config: Config = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("config {} is invalid: {}", path.display(), toml_error(text, &e)))?;
        anyhow::ensure!(
            config.request_timeout_secs != Some(0),
            "config {}: request_timeout_secs must be at least 1 (seconds)",
            path.display()
        );
        // The index addresses bodies with 32-bit offsets.
        anyhow::ensure!(
            config.max_response_mb.is_none_or(|mb| (1..=MAX_RESPONSE_MB).contains(&mb)),
            "config {}: max_response_mb must be from 1 to {MAX_RESPONSE_MB} (MB)",
            path.display()
        );
        config.source = Some(path.to_owned());
        Ok(config)
    }

    /// Whether the profile in effect (`profile`, else `default_profile`) says `read_only = true`,
    /// which acts as `--read-only` does.
    pub fn profile_read_only(&self, profile: Option<&str>) -> bool {
        let name = profile.or(self.default_profile.as_deref());
        name.and_then(|name| self.profiles.get(name)).and_then(|p| p.read_only).unwrap_or(false)
    }

    pub fn max_concurrent_calls(&self) -> usize {
        self.max_concurrent_calls.unwrap_or(8).clamp(1, 256)
    }

    /// The HTTP client's settings this config asks for, for the console and `opsdeck call` alike.
    pub fn http_settings(&self) -> HttpSettings {
        let defaults = HttpSettings::default();
        let request_timeout =
            self.request_timeout_secs.map_or(defaults.request_timeout, |seconds| Duration::from_secs(seconds.max(1)));
        // A longer per-attempt timeout must not be cut short by the default budget of the whole call.
        let total_timeout = defaults.total_timeout.max(request_timeout * defaults.attempts);
        let max_body_bytes = self.max_response_mb.map_or(defaults.max_body_bytes, |mb| mb * 1024 * 1024);
        HttpSettings { request_timeout, total_timeout, max_body_bytes, ..defaults }
    }

    /// The file named in errors.
    fn file(&self) -> String {
        self.source.as_ref().map_or_else(|| "the config".to_owned(), |p| p.display().to_string())
    }

    /// Resolves every service: environment, then the profile, else the embedded simulator at
    /// `embedded_url(service, region)` (region `Some("eu")` for a Mailgun set to the EU region).
    pub fn resolve(
        &self,
        profile: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
        embedded_url: &dyn Fn(Service, Option<&'static str>) -> String,
    ) -> anyhow::Result<Vec<ResolvedService>> {
        let profile_name = profile.or(self.default_profile.as_deref());
        if profile_name == Some(LOCAL_PROFILE) {
            // The `opsdeck sandbox` the user started, at the port base `opsdeck call` looks at
            // too (`off` there only stops the look-up: the default ports).
            let port_base = sandbox::port_base_from_var(env(sandbox::PORT_BASE_VAR).as_deref())
                .map_err(anyhow::Error::msg)?
                .unwrap_or(sandbox::DEFAULT_PORT_BASE);
            return Service::ALL
                .into_iter()
                .map(|service| {
                    let region = env("MAILGUN_REGION").and_then(|r| sandbox_region(service, &r));
                    let base_url = match url_override(service, env)? {
                        Some(url) => url,
                        None => format!("http://127.0.0.1:{}", port_base + sandbox::port_offset(service, region)),
                    };
                    Ok(ResolvedService {
                        target: sandbox_target(service, base_url),
                        mode: Mode::External,
                        region,
                        warnings: vec![],
                    })
                })
                .collect();
        }
        let profile = match profile_name {
            Some(name) => Some((
                name,
                self.profiles.get(name).ok_or_else(|| {
                    let known: Vec<&str> = self.profiles.keys().map(String::as_str).chain([LOCAL_PROFILE]).collect();
                    anyhow::anyhow!("no profile named '{}'; known profiles: {}", inert(name), known.join(", "))
                })?,
            )),
            None => None,
        };
        let file = self.file();
        Service::ALL
            .into_iter()
            .map(|service| {
                let place = profile.and_then(|(name, p)| {
                    p.service(service).map(|settings| ProfilePlace { name, service, settings, file: &file })
                });
                resolve_service(service, place.as_ref(), env, embedded_url)
            })
            .collect()
    }
}

/// A service's section of the chosen profile, and where it is written, for error messages.
struct ProfilePlace<'a> {
    name: &'a str,
    service: Service,
    settings: &'a ServiceProfile,
    file: &'a str,
}

impl ProfilePlace<'_> {
    /// `profiles.work.ably.api_key in /path/config.toml`.
    fn key(&self, field: &str) -> String {
        format!("profiles.{}.{}.{field} in {}", self.name, self.service, self.file)
    }
}

/// A value with where it came from, so an error about it can say where to fix it.
struct Given {
    value: String,
    source: String,
}

/// A target on a simulator, with the sandbox credentials.
pub fn sandbox_target(service: Service, base_url: String) -> Target {
    let credentials = match service {
        Service::Ably => Credentials::AblyKey(Secret::new(sandbox_creds::ABLY_KEY)),
        Service::Deepgram => Credentials::Deepgram(Secret::new(sandbox_creds::DEEPGRAM_KEY)),
        Service::Avatax => Credentials::Avatax {
            account_id: sandbox_creds::AVATAX_ACCOUNT_ID.into(),
            license_key: Secret::new(sandbox_creds::AVATAX_LICENSE_KEY),
        },
        Service::Taxjar => Credentials::Taxjar(Secret::new(sandbox_creds::TAXJAR_TOKEN)),
        Service::Coinbase => Credentials::Coinbase {
            key: sandbox_creds::COINBASE_KEY.into(),
            secret: Secret::new(sandbox_creds::COINBASE_SECRET),
            passphrase: Secret::new(sandbox_creds::COINBASE_PASSPHRASE),
        },
        Service::Mailgun => Credentials::Mailgun(Secret::new(sandbox_creds::MAILGUN_KEY)),
        Service::Easypost => Credentials::Easypost(Secret::new(sandbox_creds::EASYPOST_KEY)),
    };
    Target { service, base_url, credentials, live: false }
}

/// What to add to an error of a call to `target` when nothing listened there and the target is
/// an `opsdeck sandbox` (the simulators' own credentials, on this machine): how to start it, at
/// the port base its port belongs to.
pub fn sandbox_unreachable_hint(target: &Target, error: &crate::client::CallError) -> Option<String> {
    if !matches!(error, crate::client::CallError::Connect { .. }) {
        return None;
    }
    if target.credentials != sandbox_target(target.service, String::new()).credentials {
        return None;
    }
    let url = Url::parse(&target.base_url).ok()?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    let port = url.port()?;
    if !loopback {
        return None;
    }
    // Mailgun's EU listener is one past its US one: the base that is the default, if either is.
    let bases: Vec<u16> = [None, Some("eu")]
        .into_iter()
        .filter_map(|region| port.checked_sub(sandbox::port_offset(target.service, region)))
        .collect();
    let base = bases.iter().copied().find(|b| *b == sandbox::DEFAULT_PORT_BASE).or(bases.first().copied())?;
    let command = match base {
        sandbox::DEFAULT_PORT_BASE => "`opsdeck sandbox`".to_owned(),
        other => format!("`opsdeck sandbox --port-base {other}`"),
    };
    Some(format!(
        "no opsdeck sandbox answers on port {port}: start one with {command} in another terminal (it serves {} there)",
        target.service.title()
    ))
}

/// The simulator listener a region setting picks: `Some("eu")` for Mailgun's EU region, else
/// the one listener (`None`).
pub fn sandbox_region(service: Service, region: &str) -> Option<&'static str> {
    (service == Service::Mailgun && region == "eu").then_some("eu")
}

/// The real service's base URL.
pub fn live_url(service: Service, region: Option<&str>) -> &'static str {
    match service {
        Service::Ably => "https://main.realtime.ably.net",
        Service::Deepgram => "https://api.deepgram.com",
        Service::Avatax => "https://rest.avatax.com",
        Service::Taxjar => "https://api.taxjar.com",
        Service::Coinbase => "https://api.exchange.coinbase.com",
        Service::Mailgun if region == Some("eu") => "https://api.eu.mailgun.net",
        Service::Mailgun => "https://api.mailgun.net",
        Service::Easypost => "https://api.easypost.com",
    }
}

/// `OPSDECK_<SERVICE>_URL`, checked, when set.
fn url_override(service: Service, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<Option<String>> {
    let variable = url_variable(service);
    env(&variable).filter(|u| !u.is_empty()).map(|url| checked_base_url(service, &url, &variable)).transpose()
}

/// `url` as `service`'s base URL (no trailing slash, no version prefix: see
/// [`without_version_prefix`]), or an error naming `source`, the variable or config key it came
/// from. Credentials in the URL are refused: they would bypass the redaction that every other
/// secret gets.
pub fn checked_base_url(service: Service, url: &str, source: &str) -> anyhow::Result<String> {
    let example = "e.g. https://api.example.com or http://127.0.0.1:7701";
    let parsed = Url::parse(url).map_err(|e| {
        anyhow::anyhow!("{source} is not a valid base URL ('{}': {e}); give scheme and host, {example}", inert(url))
    })?;
    anyhow::ensure!(
        matches!(parsed.scheme(), "http" | "https"),
        "{source} must be an http:// or https:// URL, not '{}'; {example}",
        inert(url)
    );
    anyhow::ensure!(
        parsed.host_str().is_some_and(|h| !h.is_empty()),
        "{source} has no host: '{}'; {example}",
        inert(url)
    );
    anyhow::ensure!(
        parsed.username().is_empty() && parsed.password().is_none(),
        "{source} must not carry a user name or password; put credentials in their own settings"
    );
    anyhow::ensure!(
        parsed.query().is_none() && parsed.fragment().is_none(),
        "{source} must not have a query or fragment: '{}'; {example}",
        inert(url)
    );
    Ok(without_version_prefix(service, url.trim_end_matches('/')).to_owned())
}

/// The version prefixes `service`'s catalog paths start with: `/v2` (EasyPost, TaxJar), `/v1`
/// (Deepgram), `/api/v2` (AvaTax), `/v3` and `/v4` (Mailgun); none for Ably and Coinbase, whose
/// paths start at the root. Read from the catalog, so they cannot drift from the paths the
/// client joins to the base URL.
pub fn version_prefixes(service: Service) -> Vec<String> {
    let mut prefixes: Vec<String> = Vec::new();
    for op in service.operations() {
        let segments: Vec<&str> = op.path.split('/').skip(1).take(2).collect();
        // `v` and a number, as the first or second segment (`/v2/...`, `/api/v2/...`).
        let is_version = |s: &&str| s.len() > 1 && s.starts_with('v') && s[1..].bytes().all(|b| b.is_ascii_digit());
        if let Some(at) = segments.iter().position(is_version) {
            let prefix = format!("/{}", segments[..=at].join("/"));
            if !prefixes.contains(&prefix) {
                prefixes.push(prefix);
            }
        }
    }
    prefixes
}

/// `base` without the version prefix `service`'s paths already carry, so both forms of a base
/// URL work: the one SDKs and docs give (`http://127.0.0.1:7708/v2`, `https://api.easypost.com/v2`)
/// and the bare one. The client joins the catalog path (`/v2/shipments`) to the base, which
/// would otherwise make `/v2/v2/shipments`. Only a prefix at the very end is taken off: a
/// gateway's own path (`https://gw.example.com/easypost/v2`) stays.
fn without_version_prefix(service: Service, base: &str) -> &str {
    // The path starts after `scheme://host[:port]`; a prefix inside the host is no prefix.
    let path_start = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[path_start..].find('/').map_or(base.len(), |i| path_start + i);
    for prefix in version_prefixes(service) {
        if base[path_start..].ends_with(prefix.as_str()) {
            return &base[..base.len() - prefix.len()];
        }
    }
    base
}

/// Whether `url` stays on this machine (loopback address or `localhost`).
fn is_loopback(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let address = host.trim_start_matches('[').trim_end_matches(']');
    match address.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost") || host.to_ascii_lowercase().ends_with(".localhost"),
    }
}

/// A warning when live credentials would cross the network unencrypted.
fn plain_http_warning(service: Service, base_url: &str, source: &str) -> Option<String> {
    let parsed = Url::parse(base_url).ok()?;
    (parsed.scheme() == "http" && !is_loopback(&parsed)).then(|| {
        format!(
            "{service}: the live key goes over plain http:// to {} ({source}); anyone on the way can read it; \
             use https://",
            inert(parsed.host_str().unwrap_or_default())
        )
    })
}

fn resolve_service(
    service: Service,
    profile: Option<&ProfilePlace<'_>>,
    env: &dyn Fn(&str) -> Option<String>,
    embedded_url: &dyn Fn(Service, Option<&'static str>) -> String,
) -> anyhow::Result<ResolvedService> {
    let mut warnings = Vec::new();
    let url_variable = url_variable(service);
    let url = match (url_override(service, env)?, profile.and_then(|p| p.settings.url.as_deref())) {
        (Some(url), _) => Some(Given { value: url, source: url_variable }),
        (None, Some(url)) => {
            let source = profile.map(|p| p.key("url")).unwrap_or_default();
            Some(Given { value: checked_base_url(service, url, &source)?, source })
        }
        (None, None) => None,
    };
    if let Some(p) = profile {
        for (field, value, command) in p.settings.secret_pairs() {
            anyhow::ensure!(
                value.is_none() || command.is_none(),
                "profiles.{}.{service} in {} sets both {field} and {field}_cmd; keep one ({field}_cmd keeps the \
                 secret out of the file)",
                p.name,
                p.file
            );
        }
    }
    let variables = credential_variables(service);
    let from_env: Vec<Option<String>> = variables.iter().map(|n| env(n).filter(|v| !v.is_empty())).collect();
    let secrets = if from_env.iter().all(Option::is_some) {
        Some(
            from_env
                .into_iter()
                .flatten()
                .zip(variables)
                .map(|(value, variable)| Given { value, source: (*variable).to_owned() })
                .collect::<Vec<_>>(),
        )
    } else {
        if from_env.iter().any(Option::is_some) {
            let (set, unset): (Vec<_>, Vec<_>) = variables.iter().zip(&from_env).partition(|(_, v)| v.is_some());
            let names =
                |list: Vec<(&&str, &Option<String>)>| list.iter().map(|(n, _)| **n).collect::<Vec<_>>().join(", ");
            warnings.push(format!(
                "{service}: {} set but not {}; the environment is ignored for {service}",
                names(set),
                names(unset)
            ));
        }
        profile.map(profile_secrets).transpose()?.flatten()
    };
    let region =
        match (env("MAILGUN_REGION").filter(|r| !r.is_empty()), profile.and_then(|p| p.settings.region.clone())) {
            (Some(region), _) => Some(Given { value: region, source: "MAILGUN_REGION".into() }),
            (None, Some(region)) => {
                Some(Given { value: region, source: profile.map(|p| p.key("region")).unwrap_or_default() })
            }
            (None, None) => None,
        };
    if let Some(region) = region.as_ref().filter(|_| service == Service::Mailgun) {
        anyhow::ensure!(
            matches!(region.value.as_str(), "us" | "eu"),
            "{} must be us or eu, not '{}'",
            region.source,
            inert(&region.value)
        );
    }
    let listener = region.as_ref().and_then(|r| sandbox_region(service, &r.value));
    match secrets {
        Some(secrets) => {
            let (base_url, url_source) = match url {
                Some(url) => (url.value, url.source),
                None => (
                    live_url(service, region.as_ref().map(|r| r.value.as_str())).to_owned(),
                    "the built-in URL".to_owned(),
                ),
            };
            warnings.extend(plain_http_warning(service, &base_url, &url_source));
            let credentials = credentials(service, secrets)?;
            Ok(ResolvedService {
                target: Target { service, base_url, credentials, live: true },
                mode: Mode::Live,
                region: listener,
                warnings,
            })
        }
        None => match url {
            Some(url) => Ok(ResolvedService {
                target: sandbox_target(service, url.value),
                mode: Mode::External,
                region: listener,
                warnings,
            }),
            None => Ok(ResolvedService {
                target: sandbox_target(service, embedded_url(service, listener)),
                mode: Mode::Embedded,
                region: listener,
                warnings,
            }),
        },
    }
}

/// The profile's secrets in [`credential_variables`] order, or `None` when the profile sets none.
fn profile_secrets(place: &ProfilePlace<'_>) -> anyhow::Result<Option<Vec<Given>>> {
    let service = place.service;
    let fields = place.settings.credential_fields(service);
    if fields.iter().all(|(_, v, c)| v.is_none() && c.is_none()) {
        return Ok(None);
    }
    fields
        .into_iter()
        .map(|(field, value, command)| match (value, command) {
            (Some(value), _) => {
                let source = place.key(field);
                anyhow::ensure!(!value.trim().is_empty(), "{source} is empty");
                Ok(Given { value: value.trim().to_owned(), source })
            }
            (None, Some(command)) => {
                let source = format!("the output of {}", place.key(&format!("{field}_cmd")));
                let value = run_secret_command(command, SECRET_COMMAND_TIMEOUT)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", place.key(&format!("{field}_cmd"))))?;
                Ok(Given { value, source })
            }
            (None, None) => {
                let missing = if field == "account_id" { field.to_owned() } else { format!("{field} or {field}_cmd") };
                anyhow::bail!(
                    "profiles.{}.{service} in {} sets some {service} credentials but not {missing}",
                    place.name,
                    place.file
                )
            }
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map(Some)
}

/// The most a secret command may print before its first line ends: a secret is far shorter, and
/// a command like `yes` must not fill memory.
pub const SECRET_COMMAND_MAX_OUTPUT: usize = 64 * 1024;

/// Runs `sh -c command` in a process group of its own and returns the secret: its first line,
/// trimmed, as soon as that line has ended (the rest, and the command's exit, are not waited for),
/// or its whole trimmed output when it ends without a newline. A command still running after
/// `timeout`, or printing more than [`SECRET_COMMAND_MAX_OUTPUT`] before its first line ends, is
/// killed with everything it started (the whole group) and is an error. Its standard error is never
/// read: a failure says only its exit status, since that text may hold a secret.
fn run_secret_command(command: &str, timeout: Duration) -> anyhow::Result<String> {
    use std::os::unix::process::CommandExt as _;
    let shown = inert(command);
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot run `{shown}`: {e}"))?;
    let group = ProcessGroup(child.id());
    // The reader reports through a channel, so a grandchild keeping the pipe open cannot hold
    // opsdeck past the deadline.
    let chunks = read_in_background(child.stdout.take());
    let deadline = Instant::now() + timeout;
    let mut output = Vec::new();
    let stopped = |child: &mut std::process::Child, why: String| {
        group.kill();
        let _ = child.kill();
        let _ = child.wait();
        anyhow::anyhow!(why)
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match chunks.recv_timeout(left) {
            Ok(chunk) => {
                output.extend_from_slice(&chunk);
                if let Some(line) = first_line(&output) {
                    let line = line.to_vec();
                    // The secret is in: whatever the command still does is not waited for.
                    group.kill();
                    let _ = child.kill();
                    let _ = child.wait();
                    return secret_text(&shown, line);
                }
                if output.len() > SECRET_COMMAND_MAX_OUTPUT {
                    let kb = SECRET_COMMAND_MAX_OUTPUT / 1024;
                    return Err(stopped(
                        &mut child,
                        format!("`{shown}` printed more than {kb} KB without ending a line, and was stopped"),
                    ));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let seconds = timeout.as_secs_f32();
                return Err(stopped(
                    &mut child,
                    format!("`{shown}` gave no answer within {seconds} s and was stopped"),
                ));
            }
        }
    }
    // The output ended without a finished line: the command's exit says whether it is the secret.
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let seconds = timeout.as_secs_f32();
            return Err(stopped(&mut child, format!("`{shown}` gave no answer within {seconds} s and was stopped")));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    group.kill();
    anyhow::ensure!(status.success(), "`{shown}` failed ({status})");
    secret_text(&shown, output)
}

/// The first line of `output` with something in it, once that line has ended.
fn first_line(output: &[u8]) -> Option<&[u8]> {
    let mut rest = output;
    while let Some(end) = memchr::memchr(b'\n', rest) {
        let line = &rest[..end];
        if !line.trim_ascii().is_empty() {
            return Some(line);
        }
        rest = &rest[end + 1..];
    }
    None
}

fn secret_text(shown: &str, bytes: Vec<u8>) -> anyhow::Result<String> {
    let secret =
        String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("`{shown}` printed something that is not UTF-8"))?;
    let secret = secret.trim().to_owned();
    anyhow::ensure!(!secret.is_empty(), "`{shown}` printed nothing");
    Ok(secret)
}

/// The process group a secret command runs in (its id is the `sh`'s pid).
struct ProcessGroup(u32);

impl ProcessGroup {
    /// Kills every process of the group, the command's children with it. Through `sh`'s `kill`
    /// builtin, so no foreign-function binding is needed; a group already gone is no error.
    fn kill(&self) {
        let _ = Command::new("sh")
            .args(["-c", "kill -s KILL -- -\"$1\" 2>/dev/null", "sh", &self.0.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// The pipe's bytes as they come, in chunks, then the channel closes at its end.
fn read_in_background(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let Some(mut pipe) = pipe else { return };
        let mut buffer = vec![0; 8192];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if sender.send(buffer[..n].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    receiver
}

fn credentials(service: Service, secrets: Vec<Given>) -> anyhow::Result<Credentials> {
    let mut secrets = secrets.into_iter();
    let mut take = || {
        secrets.next().ok_or_else(|| anyhow::anyhow!("{service}: a credential is missing")).map(|g| (g.value, g.source))
    };
    Ok(match service {
        Service::Ably => {
            let (key, source) = take()?;
            anyhow::ensure!(key.contains(':'), "{source} must look like <appId>.<keyId>:<secret>");
            Credentials::AblyKey(Secret::new(key))
        }
        Service::Deepgram => Credentials::Deepgram(Secret::new(take()?.0)),
        Service::Avatax => Credentials::Avatax { account_id: take()?.0, license_key: Secret::new(take()?.0) },
        Service::Taxjar => Credentials::Taxjar(Secret::new(take()?.0)),
        Service::Coinbase => {
            Credentials::Coinbase { key: take()?.0, secret: Secret::new(take()?.0), passphrase: Secret::new(take()?.0) }
        }
        Service::Mailgun => Credentials::Mailgun(Secret::new(take()?.0)),
        Service::Easypost => Credentials::Easypost(Secret::new(take()?.0)),
    })
}

/// A warning when the file holds a secret in plain text and others on the machine can read it.
#[cfg(unix)]
fn readable_secret_warning(config: &Config, path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    if mode & 0o044 == 0 {
        return None;
    }
    let (profile, service, field) = config.profiles.iter().find_map(|(name, profile)| {
        Service::ALL.into_iter().find_map(|service| {
            let settings = profile.service(service)?;
            let (field, _, _) = settings.secret_pairs().into_iter().find(|(_, value, _)| value.is_some())?;
            Some((name, service, field))
        })
    })?;
    Some(format!(
        "config {} holds a plaintext secret (profiles.{profile}.{service}.{field}) and others can read it \
         (mode {mode:o}); run chmod 600 {}, or use {field}_cmd",
        path.display(),
        path.display()
    ))
}

#[cfg(not(unix))]
fn readable_secret_warning(_config: &Config, _path: &Path) -> Option<String> {
    None
}

/// A TOML error without the source line toml quotes, which may hold a secret: the line, column,
/// key and message, with quoted values in the message left out.
fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let message = without_quoted_values(error.message().trim());
    let Some(start) = error.span().map(|span| span.start) else {
        return message;
    };
    let before = text.get(..start).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_number = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    let line = text[line_start..].lines().next().unwrap_or_default();
    // The key is safe to show, and says which setting is wrong; anything that does not look like
    // a plain key might be a pasted secret.
    let key = line.split_once('=').map(|(key, _)| key.trim()).filter(|key| {
        !key.is_empty() && key.len() <= 40 && key.chars().all(|c| c.is_ascii_alphanumeric() || "_-.\"".contains(c))
    });
    match key {
        Some(key) => format!("line {line_number}, column {column} ({key}): {message}"),
        None => format!("line {line_number}, column {column}: {message}"),
    }
}

/// `invalid type: string "s3cr3t", expected u64` → `invalid type: string "…", expected u64`.
fn without_quoted_values(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut parts = message.split('"');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (i, part) in parts.enumerate() {
        if i % 2 == 0 {
            out.push_str("\"…\"");
        } else {
            out.push_str(part);
        }
    }
    inert(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedded(service: Service, region: Option<&str>) -> String {
        match region {
            Some(region) => format!("http://embedded/{service}-{region}"),
            None => format!("http://embedded/{service}"),
        }
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    fn config(text: &str) -> Config {
        Config::parse(text, Path::new("/home/me/.config/opsdeck/config.toml")).unwrap()
    }

    #[test]
    fn no_credentials_means_embedded_sandbox() {
        let resolved = Config::default().resolve(None, &|_| None, &embedded).unwrap();
        assert_eq!(resolved.len(), 7);
        assert!(resolved.iter().all(|r| r.mode == Mode::Embedded && !r.target.live));
        assert_eq!(resolved[0].target.base_url, "http://embedded/ably");
    }

    #[test]
    fn environment_makes_a_service_live() {
        let env = env_of(&[
            ("ABLY_API_KEY", "app.key:secret"),
            ("MAILGUN_API_KEY", "key-1"),
            ("MAILGUN_REGION", "eu"),
            ("OPSDECK_DEEPGRAM_URL", "http://127.0.0.1:9"),
        ]);
        let resolved = Config::default().resolve(None, &env, &embedded).unwrap();
        assert_eq!(resolved[0].mode, Mode::Live);
        assert_eq!(resolved[0].target.base_url, "https://main.realtime.ably.net");
        assert_eq!(resolved[1].mode, Mode::External);
        assert_eq!(resolved[1].target.base_url, "http://127.0.0.1:9");
        assert_eq!(resolved[5].target.base_url, "https://api.eu.mailgun.net");
        assert_eq!(resolved[4].mode, Mode::Embedded, "coinbase needs all three variables");
        assert!(resolved.iter().all(|r| r.warnings.is_empty()), "{resolved:?}");
    }

    #[test]
    fn profiles_with_secret_commands_and_the_local_profile() {
        let config = config(
            r#"
            [profiles.work.taxjar]
            api_key_cmd = "echo from-command"
            [profiles.broken.easypost]
            api_key_cmd = "exit 3"
            "#,
        );
        let resolved = config.resolve(Some("work"), &|_| None, &embedded).unwrap();
        assert_eq!(resolved[3].target.credentials, Credentials::Taxjar(Secret::new("from-command")));
        assert_eq!(resolved[3].mode, Mode::Live);
        let err = config.resolve(Some("broken"), &|_| None, &embedded).unwrap_err().to_string();
        assert!(
            err.contains(
                "profiles.broken.easypost.api_key_cmd in /home/me/.config/opsdeck/config.toml: `exit 3` failed"
            ),
            "{err}"
        );
        let err = config.resolve(Some("nope"), &|_| None, &embedded).unwrap_err().to_string();
        assert!(err.contains("known profiles: broken, work, local"), "{err}");
        let local = config.resolve(Some("local"), &|_| None, &embedded).unwrap();
        assert_eq!(local[0].target.base_url, "http://127.0.0.1:7701");
        assert_eq!(local[6].target.base_url, "http://127.0.0.1:7708");
    }

    #[test]
    fn the_local_profile_points_at_the_sandbox_port_base_opsdeck_call_looks_at() {
        let at = |value: &'static str| {
            let env = move |name: &str| (name == "OPSDECK_SANDBOX_PORT_BASE").then(|| value.to_owned());
            Config::default().resolve(Some("local"), &env, &embedded)
        };
        let moved = at("17700").unwrap();
        assert_eq!(moved[0].target.base_url, "http://127.0.0.1:17701");
        assert_eq!(moved[6].target.base_url, "http://127.0.0.1:17708");
        assert_eq!(at("off").unwrap()[0].target.base_url, "http://127.0.0.1:7701", "off only stops the look-up");
        let err = at("seventy").unwrap_err().to_string();
        assert!(err.contains("OPSDECK_SANDBOX_PORT_BASE must be the --port-base"), "{err}");
        // A call that found nothing listening there says how to start that sandbox.
        let refused = crate::client::CallError::Connect { url: "x".into(), reason: "refused".into() };
        let hint = sandbox_unreachable_hint(&moved[0].target, &refused).unwrap();
        assert_eq!(
            hint,
            "no opsdeck sandbox answers on port 17701: start one with `opsdeck sandbox --port-base 17700` in \
             another terminal (it serves Ably there)"
        );
        let eu = Config::default().resolve(Some("local"), &env_of(&[("MAILGUN_REGION", "eu")]), &embedded).unwrap();
        assert!(sandbox_unreachable_hint(&eu[5].target, &refused).unwrap().contains("with `opsdeck sandbox` in"));
        // Not for live credentials, nor for another error.
        let live = Target { credentials: Credentials::AblyKey(Secret::new("a.b:c")), ..moved[0].target.clone() };
        assert_eq!(sandbox_unreachable_hint(&live, &refused), None);
        let other = crate::client::CallError::Network { url: "x".into(), reason: "reset".into() };
        assert_eq!(sandbox_unreachable_hint(&moved[0].target, &other), None);
    }

    #[test]
    fn a_mailgun_region_picks_the_simulator_listener_of_that_region() {
        let eu = Config::default().resolve(None, &env_of(&[("MAILGUN_REGION", "eu")]), &embedded).unwrap();
        assert_eq!(eu[5].target.base_url, "http://embedded/mailgun-eu");
        assert_eq!(eu[5].region, Some("eu"));
        assert_eq!(eu[0].target.base_url, "http://embedded/ably", "only Mailgun has regions");
        let profile = config("[profiles.work.mailgun]\nregion = \"eu\"\n");
        let by_profile = profile.resolve(Some("work"), &|_| None, &embedded).unwrap();
        assert_eq!(by_profile[5].target.base_url, "http://embedded/mailgun-eu");
        let us = profile.resolve(Some("work"), &env_of(&[("MAILGUN_REGION", "us")]), &embedded).unwrap();
        assert_eq!(us[5].target.base_url, "http://embedded/mailgun", "the environment wins over the profile");
        let local = Config::default().resolve(Some("local"), &env_of(&[("MAILGUN_REGION", "eu")]), &embedded).unwrap();
        assert_eq!(local[5].target.base_url, "http://127.0.0.1:7707");
    }

    #[test]
    fn the_local_profile_honours_url_variables() {
        let env = env_of(&[("OPSDECK_ABLY_URL", "http://127.0.0.1:9999/")]);
        let local = Config::default().resolve(Some("local"), &env, &embedded).unwrap();
        assert_eq!(local[0].target.base_url, "http://127.0.0.1:9999");
        assert_eq!(local[1].target.base_url, "http://127.0.0.1:7702");
        let env = env_of(&[("OPSDECK_TAXJAR_URL", "127.0.0.1:7704")]);
        let err = Config::default().resolve(Some("local"), &env, &embedded).unwrap_err().to_string();
        assert!(err.contains("OPSDECK_TAXJAR_URL"), "{err}");
    }

    #[test]
    fn version_prefixes_come_from_the_catalog() {
        let prefixes = |service| version_prefixes(service);
        assert_eq!(prefixes(Service::Ably), Vec::<String>::new());
        assert_eq!(prefixes(Service::Coinbase), Vec::<String>::new());
        assert_eq!(prefixes(Service::Deepgram), ["/v1"]);
        assert_eq!(prefixes(Service::Avatax), ["/api/v2"]);
        assert_eq!(prefixes(Service::Taxjar), ["/v2"]);
        assert_eq!(prefixes(Service::Mailgun), ["/v3", "/v4"]);
        assert_eq!(prefixes(Service::Easypost), ["/v2"]);
    }

    /// Defect 7 of issue 18: `OPSDECK_EASYPOST_URL=http://127.0.0.1:17708/v2` (what the sandbox
    /// printed) called `/v2/v2/...`. Every service takes its base with or without the version.
    #[test]
    fn a_base_url_is_taken_with_or_without_the_version_prefix() {
        for service in Service::ALL {
            let variable = url_variable(service);
            let mut forms = vec!["http://127.0.0.1:9".to_owned(), "http://127.0.0.1:9/".to_owned()];
            for prefix in version_prefixes(service) {
                forms.push(format!("http://127.0.0.1:9{prefix}"));
                forms.push(format!("http://127.0.0.1:9{prefix}/"));
            }
            for url in forms {
                let env = |name: &str| (name == variable).then(|| url.clone());
                let resolved = Config::default().resolve(None, &env, &embedded).unwrap();
                let base = &resolved.iter().find(|r| r.target.service == service).unwrap().target.base_url;
                assert_eq!(base, "http://127.0.0.1:9", "{service}: {url}");
                let local = Config::default().resolve(Some(LOCAL_PROFILE), &env, &embedded).unwrap();
                let base = &local.iter().find(|r| r.target.service == service).unwrap().target.base_url;
                assert_eq!(base, "http://127.0.0.1:9", "--profile local, {service}: {url}");
            }
        }
        let config = config("[profiles.work.avatax]\nurl = \"https://sandbox-rest.avatax.com/api/v2/\"\n");
        let resolved = config.resolve(Some("work"), &|_| None, &embedded).unwrap();
        assert_eq!(resolved[2].target.base_url, "https://sandbox-rest.avatax.com");
        // Only the service's own prefix, only at the end of the path, never in the host.
        let base = |service, url| checked_base_url(service, url, "X").unwrap();
        assert_eq!(base(Service::Easypost, "https://gw.example.com/easypost/v2"), "https://gw.example.com/easypost");
        assert_eq!(base(Service::Easypost, "https://gw.example.com/v2/easypost"), "https://gw.example.com/v2/easypost");
        assert_eq!(base(Service::Ably, "https://gw.example.com/v2"), "https://gw.example.com/v2");
        assert_eq!(base(Service::Avatax, "https://gw.example.com/v2"), "https://gw.example.com/v2");
        assert_eq!(base(Service::Mailgun, "https://api.eu.mailgun.net/v3"), "https://api.eu.mailgun.net");
        assert_eq!(base(Service::Deepgram, "http://v1"), "http://v1");
    }

    #[test]
    fn invalid_base_urls_name_the_variable_or_the_key() {
        for (url, expected) in [
            ("not a url", "is not a valid base URL"),
            ("ftp://files.example.com", "must be an http:// or https:// URL"),
            ("https://user:pw@api.example.com", "must not carry a user name or password"),
            ("https://api.example.com/?x=1", "must not have a query"),
        ] {
            let env = move |name: &str| (name == "OPSDECK_ABLY_URL").then(|| url.to_owned());
            let err = Config::default().resolve(None, &env, &embedded).unwrap_err().to_string();
            assert!(err.contains("OPSDECK_ABLY_URL") && err.contains(expected), "{url}: {err}");
            assert!(!err.contains("pw@"), "{err}");
        }
        let config = config("[profiles.work.ably]\nurl = \"ably.example.com\"\n");
        let err = config.resolve(Some("work"), &|_| None, &embedded).unwrap_err().to_string();
        assert!(err.starts_with("profiles.work.ably.url in /home/me/.config/opsdeck/config.toml is not"), "{err}");
    }

    #[test]
    fn secret_errors_name_their_source_and_never_the_secret() {
        let env = env_of(&[("ABLY_API_KEY", "s3cr3t-without-colon")]);
        let err = Config::default().resolve(None, &env, &embedded).unwrap_err().to_string();
        assert!(err.starts_with("ABLY_API_KEY must look like"), "{err}");
        assert!(!err.contains("s3cr3t"), "{err}");

        let config = config("[profiles.work.ably]\napi_key = \"s3cr3t-without-colon\"\n");
        let err = config.resolve(Some("work"), &|_| None, &embedded).unwrap_err().to_string();
        assert!(
            err.starts_with("profiles.work.ably.api_key in /home/me/.config/opsdeck/config.toml must look like"),
            "{err}"
        );
        assert!(!err.contains("s3cr3t"), "{err}");

        let config = config_with_region("moon");
        let err = config.resolve(Some("work"), &|_| None, &embedded).unwrap_err().to_string();
        assert!(err.starts_with("profiles.work.mailgun.region in"), "{err}");
        let err = config.resolve(Some("work"), &env_of(&[("MAILGUN_REGION", "mars")]), &embedded).unwrap_err();
        assert!(err.to_string().starts_with("MAILGUN_REGION must be us or eu, not 'mars'"), "{err}");

        let half = config_text_coinbase_half();
        let err = half.resolve(Some("work"), &|_| None, &embedded).unwrap_err().to_string();
        assert!(err.contains("profiles.work.coinbase in") && err.contains("not api_secret or api_secret_cmd"), "{err}");
    }

    fn config_with_region(region: &str) -> Config {
        config(&format!("[profiles.work.mailgun]\napi_key = \"k\"\nregion = \"{region}\"\n"))
    }

    fn config_text_coinbase_half() -> Config {
        config("[profiles.work.coinbase]\napi_key = \"k\"\npassphrase_cmd = \"echo p\"\n")
    }

    #[test]
    fn a_secret_and_its_command_together_are_refused() {
        let config = config("[profiles.work.ably]\napi_key = \"a.b:c\"\napi_key_cmd = \"echo a.b:d\"\n");
        let err = config.resolve(Some("work"), &|_| None, &embedded).unwrap_err().to_string();
        assert!(err.contains("profiles.work.ably in"), "{err}");
        assert!(err.contains("sets both api_key and api_key_cmd; keep one"), "{err}");
        assert!(!err.contains("a.b:c"), "{err}");
    }

    #[test]
    fn a_hung_secret_command_is_stopped() {
        let started = Instant::now();
        let err = run_secret_command("sleep 5; echo late", Duration::from_millis(300)).unwrap_err().to_string();
        assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
        assert!(err.contains("gave no answer within 0.3 s and was stopped"), "{err}");
        assert_eq!(run_secret_command("printf ' s3 \\n'", SECRET_COMMAND_TIMEOUT).unwrap(), "s3");
    }

    /// Whether process `pid` is gone (or only a zombie waiting to be reaped by init).
    fn gone(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
    }

    #[test]
    fn a_secret_command_is_stopped_with_its_children_and_answers_at_its_first_line() {
        let dir = std::env::temp_dir().join(format!("opsdeck-secret-cmd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("pid");
        // A timeout kills what the command started, not only `sh`.
        let command = format!("sleep 37 & echo $! > '{}'; wait", pid_file.display());
        let err = run_secret_command(&command, Duration::from_millis(500)).unwrap_err().to_string();
        assert!(err.contains("was stopped"), "{err}");
        let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_owned();
        let started = Instant::now();
        while !gone(&pid) && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(&pid), "the command's child {pid} outlived its timeout");

        // A finished first line is the secret: neither the rest nor the exit is waited for.
        let started = Instant::now();
        assert_eq!(run_secret_command("sleep 30 & echo key-1234", SECRET_COMMAND_TIMEOUT).unwrap(), "key-1234");
        assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
        assert_eq!(run_secret_command("printf 'pw-1\\nlogin: me\\n'", SECRET_COMMAND_TIMEOUT).unwrap(), "pw-1");

        // Endless output without a line end stops at the cap, at once.
        let started = Instant::now();
        let err = run_secret_command("cat /dev/zero", SECRET_COMMAND_TIMEOUT).unwrap_err().to_string();
        assert!(err.contains("printed more than 64 KB without ending a line"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());

        // A failure says its exit status, never what the command wrote to stderr.
        let err = run_secret_command("printf 'bad token TOP%s' SECRET-1 >&2; exit 3", SECRET_COMMAND_TIMEOUT)
            .unwrap_err()
            .to_string();
        assert!(err.contains("failed (exit status: 3)"), "{err}");
        assert!(!err.contains("TOPSECRET-1"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn half_the_environment_is_a_warning() {
        let env = env_of(&[("COINBASE_API_KEY", "k")]);
        let resolved = Config::default().resolve(None, &env, &embedded).unwrap();
        assert_eq!(resolved[4].mode, Mode::Embedded);
        assert_eq!(
            resolved[4].warnings,
            ["coinbase: COINBASE_API_KEY set but not COINBASE_API_SECRET, COINBASE_API_PASSPHRASE; \
              the environment is ignored for coinbase"]
        );
    }

    #[test]
    fn a_live_key_over_plain_http_to_another_host_warns() {
        let env = env_of(&[("ABLY_API_KEY", "a.b:c"), ("OPSDECK_ABLY_URL", "http://ably.example.com")]);
        let resolved = Config::default().resolve(None, &env, &embedded).unwrap();
        assert_eq!(resolved[0].warnings.len(), 1, "{:?}", resolved[0].warnings);
        assert!(resolved[0].warnings[0].contains("plain http:// to ably.example.com (OPSDECK_ABLY_URL)"));
        let warnings = startup_warnings(&Config::default(), &resolved);
        assert_eq!(warnings.len(), 1);
        for url in ["https://ably.example.com", "http://127.0.0.1:7701", "http://localhost:1", "http://[::1]:80"] {
            let env = move |name: &str| match name {
                "ABLY_API_KEY" => Some("a.b:c".to_owned()),
                "OPSDECK_ABLY_URL" => Some(url.to_owned()),
                _ => None,
            };
            let resolved = Config::default().resolve(None, &env, &embedded).unwrap();
            assert!(resolved[0].warnings.is_empty(), "{url}: {:?}", resolved[0].warnings);
        }
        let sandboxed = env_of(&[("OPSDECK_ABLY_URL", "http://ably.example.com")]);
        assert!(Config::default().resolve(None, &sandboxed, &embedded).unwrap()[0].warnings.is_empty());
    }

    #[test]
    fn toml_errors_never_show_the_offending_line() {
        for text in [
            "[profiles.a.ably]\napi_kye = \"s3cr3t-value\"\n",
            "[profiles.a.ably]\napi_key = \"s3cr3t-value\n",
            "[profiles.a.ably]\napi_key = 's3cr3t-value' 'x'\n",
            "request_timeout_secs = \"s3cr3t-value\"\n",
            "[profiles.a.ably]\napi_key = \"s3cr3t\"\napi_key = \"s3cr3t-value\"\n",
        ] {
            let err = Config::parse(text, Path::new("c.toml")).unwrap_err().to_string();
            assert!(!err.contains("s3cr3t"), "{text:?}: {err}");
            assert!(err.starts_with("config c.toml is invalid: line "), "{err}");
        }
        let err = Config::parse("[profiles.a.ably]\napi_kye = \"x\"\n", Path::new("c.toml")).unwrap_err().to_string();
        assert!(err.contains("line 2, column 1 (api_kye): unknown field `api_kye`"), "{err}");
        let err = Config::parse("request_timeout_secs = 0\n", Path::new("c.toml")).unwrap_err().to_string();
        assert!(err.contains("request_timeout_secs must be at least 1"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_readable_file_holding_a_secret_warns() {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!("opsdeck-config-test-{}.toml", std::process::id()));
        std::fs::write(&path, "[profiles.work.ably]\napi_key = \"a.b:s3cr3t\"\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let config = Config::load(Some(&path)).unwrap();
        assert_eq!(config.warnings.len(), 1, "{:?}", config.warnings);
        assert!(config.warnings[0].contains("plaintext secret (profiles.work.ably.api_key)"), "{:?}", config.warnings);
        assert!(config.warnings[0].contains("mode 644") && config.warnings[0].contains("chmod 600"));
        assert!(!config.warnings[0].contains("s3cr3t"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(Config::load(Some(&path)).unwrap().warnings.is_empty());
        std::fs::write(&path, "[profiles.work.ably]\napi_key_cmd = \"pass show ably\"\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(Config::load(Some(&path)).unwrap().warnings.is_empty(), "a command is no secret");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn the_request_timeout_reaches_the_http_settings() {
        assert_eq!(config("request_timeout_secs = 3\n").http_settings().request_timeout, Duration::from_secs(3));
        assert_eq!(config("max_response_mb = 40\n").http_settings().max_body_bytes, 40 * 1024 * 1024);
        assert_eq!(Config::default().http_settings().max_body_bytes, 512 * 1024 * 1024);
        for bad in ["max_response_mb = 0\n", "max_response_mb = 5000\n"] {
            let err = Config::parse(bad, Path::new("c.toml")).unwrap_err().to_string();
            assert!(err.contains("max_response_mb must be from 1 to 4095"), "{err}");
        }
        assert_eq!(Config::default().http_settings().request_timeout, HttpSettings::default().request_timeout);
    }
}
