//! Profiles, credentials and settings: where each service's calls go and as whom.
//!
//! Live credentials come from the environment first, then the config file's profile; a service
//! with neither runs against the embedded simulator.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::catalog::Service;
use crate::client::{Credentials, Secret, Target};
use crate::sandbox::{self, credentials as sandbox_creds};

/// The built-in profile: every service at the `opsdeck sandbox` default ports.
pub const LOCAL_PROFILE: &str = "local";

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
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// One profile: per service, where and as whom.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
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
}

/// The platform config dir (`~/.config/opsdeck` on Linux).
pub fn config_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "opsdeck").map(|d| d.config_dir().to_owned())
}

impl Config {
    /// Reads `path`, or `config.toml` in the config dir when none is given. A missing default
    /// file is an empty config; a missing explicit file or a bad one is an error.
    pub fn load(path: Option<&Path>) -> anyhow::Result<Config> {
        let (path, explicit) = match path {
            Some(p) => (p.to_owned(), true),
            None => match config_dir() {
                Some(dir) => (dir.join("config.toml"), false),
                None => return Ok(Config::default()),
            },
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => return Ok(Config::default()),
            Err(e) => anyhow::bail!("cannot read config {}: {e}", path.display()),
        };
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("config {} is invalid: {e}", path.display()))
    }

    pub fn max_concurrent_calls(&self) -> usize {
        self.max_concurrent_calls.unwrap_or(8).clamp(1, 256)
    }

    /// Resolves every service: environment, then the profile, else the embedded simulator at
    /// `embedded_url(service)`.
    pub fn resolve(
        &self,
        profile: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
        embedded_url: &dyn Fn(Service) -> String,
    ) -> anyhow::Result<Vec<ResolvedService>> {
        let profile_name = profile.or(self.default_profile.as_deref());
        if profile_name == Some(LOCAL_PROFILE) {
            return Ok(Service::ALL
                .into_iter()
                .map(|service| ResolvedService {
                    target: sandbox_target(
                        service,
                        format!(
                            "http://127.0.0.1:{}",
                            sandbox::DEFAULT_PORT_BASE + sandbox::port_offset(service, None)
                        ),
                    ),
                    mode: Mode::External,
                })
                .collect());
        }
        let profile = match profile_name {
            Some(name) => Some(self.profiles.get(name).ok_or_else(|| {
                let known: Vec<&str> = self.profiles.keys().map(String::as_str).chain([LOCAL_PROFILE]).collect();
                anyhow::anyhow!("no profile named '{name}'; known profiles: {}", known.join(", "))
            })?),
            None => None,
        };
        Service::ALL
            .into_iter()
            .map(|service| resolve_service(service, profile.and_then(|p| p.service(service)), env, embedded_url))
            .collect()
    }
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

/// The environment variables that make a service live, in the order [`credentials`] reads them.
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

fn resolve_service(
    service: Service,
    profile: Option<&ServiceProfile>,
    env: &dyn Fn(&str) -> Option<String>,
    embedded_url: &dyn Fn(Service) -> String,
) -> anyhow::Result<ResolvedService> {
    let name = service.name().to_ascii_uppercase();
    let url_override = env(&format!("OPSDECK_{name}_URL")).filter(|u| !u.is_empty());
    let from_env: Vec<Option<String>> =
        credential_variables(service).iter().map(|n| env(n).filter(|v| !v.is_empty())).collect();
    let secrets = if from_env.iter().all(Option::is_some) {
        Some(from_env.into_iter().flatten().collect::<Vec<_>>())
    } else if let Some(p) = profile {
        profile_secrets(service, p)?
    } else {
        None
    };
    let region = env("MAILGUN_REGION").or_else(|| profile.and_then(|p| p.region.clone()));
    if let Some(region) = region.as_deref().filter(|_| service == Service::Mailgun) {
        anyhow::ensure!(matches!(region, "us" | "eu"), "MAILGUN_REGION must be us or eu, not '{region}'");
    }
    match secrets {
        Some(secrets) => {
            let base_url = url_override
                .or_else(|| profile.and_then(|p| p.url.clone()))
                .unwrap_or_else(|| live_url(service, region.as_deref()).to_owned());
            let credentials = credentials(service, secrets)?;
            Ok(ResolvedService { target: Target { service, base_url, credentials, live: true }, mode: Mode::Live })
        }
        None => match url_override.or_else(|| profile.and_then(|p| p.url.clone())) {
            Some(url) => Ok(ResolvedService { target: sandbox_target(service, url), mode: Mode::External }),
            None => {
                Ok(ResolvedService { target: sandbox_target(service, embedded_url(service)), mode: Mode::Embedded })
            }
        },
    }
}

/// The profile's secrets in [`credential_variables`] order, or `None` when the profile sets none.
fn profile_secrets(service: Service, p: &ServiceProfile) -> anyhow::Result<Option<Vec<String>>> {
    let fields: Vec<(&str, &Option<String>, &Option<String>)> = match service {
        Service::Avatax => {
            vec![("account_id", &p.account_id, &None), ("license_key", &p.license_key, &p.license_key_cmd)]
        }
        Service::Coinbase => vec![
            ("api_key", &p.api_key, &p.api_key_cmd),
            ("api_secret", &p.api_secret, &p.api_secret_cmd),
            ("passphrase", &p.passphrase, &p.passphrase_cmd),
        ],
        _ => vec![("api_key", &p.api_key, &p.api_key_cmd)],
    };
    if fields.iter().all(|(_, v, c)| v.is_none() && c.is_none()) {
        return Ok(None);
    }
    fields
        .into_iter()
        .map(|(field, value, command)| match (value, command) {
            (Some(v), _) => Ok(v.clone()),
            (None, Some(cmd)) => run_secret_command(cmd).map_err(|e| anyhow::anyhow!("{service} {field}_cmd: {e}")),
            (None, None) => {
                anyhow::bail!("profile sets some {service} credentials but not {field}")
            }
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map(Some)
}

/// Runs `sh -c command` and returns its trimmed output: the secret.
fn run_secret_command(command: &str) -> anyhow::Result<String> {
    let output = Command::new("sh").arg("-c").arg(command).output()?;
    anyhow::ensure!(
        output.status.success(),
        "`{command}` failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    let secret = String::from_utf8(output.stdout)?.trim().to_owned();
    anyhow::ensure!(!secret.is_empty(), "`{command}` printed nothing");
    Ok(secret)
}

fn credentials(service: Service, mut s: Vec<String>) -> anyhow::Result<Credentials> {
    let mut take = || Secret::new(s.remove(0));
    Ok(match service {
        Service::Ably => {
            let key = take();
            anyhow::ensure!(key.expose().contains(':'), "ABLY_API_KEY must look like <appId>.<keyId>:<secret>");
            Credentials::AblyKey(key)
        }
        Service::Deepgram => Credentials::Deepgram(take()),
        Service::Avatax => Credentials::Avatax { account_id: take().expose().to_owned(), license_key: take() },
        Service::Taxjar => Credentials::Taxjar(take()),
        Service::Coinbase => {
            Credentials::Coinbase { key: take().expose().to_owned(), secret: take(), passphrase: take() }
        }
        Service::Mailgun => Credentials::Mailgun(take()),
        Service::Easypost => Credentials::Easypost(take()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedded(service: Service) -> String {
        format!("http://embedded/{service}")
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
        let env = |name: &str| match name {
            "ABLY_API_KEY" => Some("app.key:secret".to_owned()),
            "MAILGUN_API_KEY" => Some("key-1".to_owned()),
            "MAILGUN_REGION" => Some("eu".to_owned()),
            "OPSDECK_DEEPGRAM_URL" => Some("http://127.0.0.1:9".to_owned()),
            _ => None,
        };
        let resolved = Config::default().resolve(None, &env, &embedded).unwrap();
        assert_eq!(resolved[0].mode, Mode::Live);
        assert_eq!(resolved[0].target.base_url, "https://main.realtime.ably.net");
        assert_eq!(resolved[1].mode, Mode::External);
        assert_eq!(resolved[1].target.base_url, "http://127.0.0.1:9");
        assert_eq!(resolved[5].target.base_url, "https://api.eu.mailgun.net");
        assert_eq!(resolved[4].mode, Mode::Embedded, "coinbase needs all three variables");
    }

    #[test]
    fn profiles_with_secret_commands_and_the_local_profile() {
        let config: Config = toml::from_str(
            r#"
            [profiles.work.taxjar]
            api_key_cmd = "echo from-command"
            [profiles.broken.easypost]
            api_key_cmd = "exit 3"
            "#,
        )
        .unwrap();
        let resolved = config.resolve(Some("work"), &|_| None, &embedded).unwrap();
        assert_eq!(resolved[3].target.credentials, Credentials::Taxjar(Secret::new("from-command")));
        assert_eq!(resolved[3].mode, Mode::Live);
        let err = config.resolve(Some("broken"), &|_| None, &embedded).unwrap_err().to_string();
        assert!(err.contains("easypost api_key_cmd"), "{err}");
        let err = config.resolve(Some("nope"), &|_| None, &embedded).unwrap_err().to_string();
        assert!(err.contains("known profiles: broken, work, local"), "{err}");
        let local = config.resolve(Some("local"), &|_| None, &embedded).unwrap();
        assert_eq!(local[0].target.base_url, "http://127.0.0.1:7701");
        assert_eq!(local[6].target.base_url, "http://127.0.0.1:7708");
    }

    #[test]
    fn typos_in_config_are_errors() {
        assert!(toml::from_str::<Config>("[profiles.a.ably]\napi_kye = \"x\"").is_err());
    }
}
