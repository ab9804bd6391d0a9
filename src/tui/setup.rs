//! What the console was started with, kept so that a profile or a theme can be switched from
//! the palette without a restart: the config, the environment the config reads, the embedded
//! simulators' addresses and the themes folder.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

use crate::catalog::Service;
use crate::client::{credential_variables, url_variable};
use crate::config::{self, Config, LOCAL_PROFILE};
use crate::sandbox::Sandbox;
use crate::tui::tab::Tab;
use crate::tui::theme::{self, Theme};

/// The name shown for the profile when none is chosen (environment, else the simulators).
pub const NO_PROFILE: &str = "default";

pub struct Setup {
    pub config: Config,
    /// `--read-only` on the command line: stays on whatever profile is chosen.
    pub read_only_flag: bool,
    /// The environment variables the config and themes read, as they were at start.
    env: HashMap<String, String>,
    /// Each embedded simulator listener: service, region (Mailgun's EU), base URL and whether
    /// it is built.
    embedded: Vec<(Service, Option<&'static str>, String)>,
    pub themes_dir: Option<PathBuf>,
}

/// Variables worth keeping although nothing read them at start: a profile chosen later may.
fn variables() -> Vec<String> {
    let mut names: Vec<String> = Service::ALL
        .into_iter()
        .flat_map(|service| {
            credential_variables(service).iter().map(|v| (*v).to_owned()).chain([url_variable(service)])
        })
        .collect();
    names.extend(["MAILGUN_REGION", "NO_COLOR", "COLORTERM", "TERM", crate::sandbox::PORT_BASE_VAR].map(str::to_owned));
    names
}

impl Setup {
    pub fn new(
        config: Config,
        env: &dyn Fn(&str) -> Option<String>,
        sandbox: &Sandbox,
        read_only_flag: bool,
        themes_dir: Option<PathBuf>,
    ) -> Setup {
        let env = variables().into_iter().filter_map(|name| env(&name).map(|value| (name, value))).collect();
        let embedded = sandbox.endpoints.iter().map(|e| (e.service, e.region, e.base_url())).collect();
        Setup { config, read_only_flag, env, embedded, themes_dir }
    }

    /// Remembers what `read` reads from now on, for what may read it again later.
    pub fn recording<'a>(
        env: &'a dyn Fn(&str) -> Option<String>,
        seen: &'a RefCell<HashMap<String, String>>,
    ) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            let value = env(name);
            if let Some(value) = &value {
                seen.borrow_mut().insert(name.to_owned(), value.clone());
            }
            value
        }
    }

    /// Adds variables read at start (through [`Setup::recording`]) to those kept.
    pub fn remember(&mut self, seen: HashMap<String, String>) {
        self.env.extend(seen);
    }

    pub fn env(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }

    /// The control port of the `opsdeck sandbox` that `--profile local` points at.
    pub fn local_control(&self) -> String {
        let base = crate::sandbox::port_base_from_var(self.env(crate::sandbox::PORT_BASE_VAR).as_deref());
        format!("http://127.0.0.1:{}", base.ok().flatten().unwrap_or(crate::sandbox::DEFAULT_PORT_BASE))
    }

    /// The profile's name as the header shows it.
    pub fn profile_name(&self, asked: Option<&str>) -> String {
        asked.or(self.config.default_profile.as_deref()).unwrap_or(NO_PROFILE).to_owned()
    }

    /// Whether nothing may be sent that changes state: `--read-only`, or the profile says so.
    pub fn read_only(&self, profile: &str) -> bool {
        self.read_only_flag || self.config.profile_read_only(Some(profile))
    }

    /// The profiles one can switch to: the config's, `local`, and `default` (no profile) when
    /// the config names no default.
    pub fn profiles(&self) -> Vec<String> {
        let mut names: Vec<String> = self.config.profiles.keys().cloned().collect();
        if self.config.default_profile.is_none() && !names.iter().any(|n| n == NO_PROFILE) {
            names.insert(0, NO_PROFILE.to_owned());
        }
        if !names.iter().any(|n| n == LOCAL_PROFILE) {
            names.push(LOCAL_PROFILE.to_owned());
        }
        names
    }

    /// A fresh tab per service for `profile`, and what is risky about them; an error (an
    /// unknown profile, a secret command that failed) changes nothing.
    pub fn tabs(&self, profile: &str) -> anyhow::Result<(Vec<Tab>, Vec<String>)> {
        let asked = (profile != NO_PROFILE || self.config.profiles.contains_key(profile)).then_some(profile);
        let env = |name: &str| self.env(name);
        let embedded_url = |service: Service, region: Option<&'static str>| {
            self.embedded
                .iter()
                .find(|(s, r, ..)| *s == service && *r == region)
                .map(|(_, _, url)| url.clone())
                .unwrap_or_default()
        };
        let resolved = self.config.resolve(asked, &env, &embedded_url)?;
        let warnings = config::startup_warnings(&self.config, &resolved);
        let tabs = resolved.into_iter().map(|r| Tab::new(r.target.service, r.target, r.mode)).collect();
        Ok((tabs, warnings))
    }

    /// The theme `name` fitted to this terminal, and what was wrong with it.
    pub fn theme(&self, name: &str) -> (Theme, Option<String>) {
        Theme::for_terminal(name, self.themes_dir.as_deref(), &|variable| self.env(variable))
    }

    /// Every theme one can switch to: the built-in ones, then the files in the themes folder.
    pub fn themes(&self) -> Vec<String> {
        let mut names: Vec<String> =
            theme::file::BUILT_IN.iter().map(|(name, _)| (*name).to_owned()).chain(["plain".to_owned()]).collect();
        let files = self.themes_dir.as_deref().and_then(|dir| std::fs::read_dir(dir).ok());
        let mut user: Vec<String> = files
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                (path.extension()? == "toml").then(|| path.file_stem()?.to_str().map(str::to_owned)).flatten()
            })
            .filter(|name| !names.contains(name))
            .collect();
        user.sort();
        names.extend(user);
        names
    }
}
