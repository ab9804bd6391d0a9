//! The options every command shares (`--profile`, `--read-only`, `--theme`, `--config`,
//! `--debug`), parsed by clap in `main` and read by the console and `opsdeck call` alike. Below
//! both, so neither imports the other for them.

use std::path::PathBuf;

use clap::Args;

/// The console's options. `opsdeck call` takes `--profile`, `--read-only` and `--config` after
/// `call` as well ([`TargetArgs`]); given before a subcommand that does not use them they are
/// an error rather than silently ignored (see `cli::check_global_flags`).
#[derive(Clone, Debug, Default, Args)]
pub struct GlobalArgs {
    /// Profile from config.toml; `local` = every service at the `opsdeck sandbox` default ports.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Refuse to send any operation that changes something.
    #[arg(long)]
    pub read_only: bool,
    /// Theme: `dark`, `light`, `plain` (no colour), or a file NAME.toml in the config dir's themes folder.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// Config file to use instead of config.toml in the platform config dir.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Write a debug log (`opsdeck paths` says where); `OPSDECK_LOG=FILTER` chooses what is logged.
    #[arg(long, global = true)]
    pub debug: bool,
}

/// Where and as whom `opsdeck call` sends: the console's options without the theme.
#[derive(Clone, Debug, Default, Args)]
pub struct TargetArgs {
    /// Profile from config.toml; `local` = every service at the `opsdeck sandbox` default ports.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Refuse to send an operation that changes something.
    #[arg(long)]
    pub read_only: bool,
    /// Config file to use instead of config.toml in the platform config dir.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

impl GlobalArgs {
    /// These options with the ones given after the subcommand: those win, `--read-only` adds up.
    pub fn with(&self, target: &TargetArgs) -> GlobalArgs {
        GlobalArgs {
            profile: target.profile.clone().or_else(|| self.profile.clone()),
            read_only: self.read_only || target.read_only,
            config: target.config.clone().or_else(|| self.config.clone()),
            ..self.clone()
        }
    }

    /// The flags given, as typed, for messages.
    pub fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.profile.is_some() {
            given.push("--profile");
        }
        if self.read_only {
            given.push("--read-only");
        }
        if self.theme.is_some() {
            given.push("--theme");
        }
        if self.config.is_some() {
            given.push("--config");
        }
        given
    }
}
