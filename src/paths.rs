//! Where opsdeck keeps things on disk: the config file and themes, the history database and the
//! debug log. Each folder follows the platform's convention and can be moved with a variable, so
//! tests, containers and people with opinions can put it elsewhere.

use std::path::{Path, PathBuf};

/// Moves the config folder (config.toml, themes/).
pub const CONFIG_DIR_VAR: &str = "OPSDECK_CONFIG_DIR";
/// Moves the data folder (history.sqlite).
pub const DATA_DIR_VAR: &str = "OPSDECK_DATA_DIR";
/// Moves the state folder (opsdeck.log).
pub const STATE_DIR_VAR: &str = "OPSDECK_STATE_DIR";

/// Every location opsdeck reads or writes; `None` where the platform has no home to offer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    pub config_file: Option<PathBuf>,
    pub themes_dir: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    pub history_file: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    pub log_file: Option<PathBuf>,
}

impl Paths {
    /// The locations for this process: `config_file` is `--config` when given.
    pub fn current(config_file: Option<&Path>) -> Paths {
        Paths::resolve(config_file, &|name| std::env::var(name).ok())
    }

    /// [`Paths::current`] with the environment given, for tests.
    pub fn resolve(config_file: Option<&Path>, env: &dyn Fn(&str) -> Option<String>) -> Paths {
        let project = directories::ProjectDirs::from("", "", "opsdeck");
        let from_env = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let config_dir = from_env(CONFIG_DIR_VAR).or_else(|| project.as_ref().map(|p| p.config_dir().to_owned()));
        let data_dir = from_env(DATA_DIR_VAR).or_else(|| project.as_ref().map(|p| p.data_dir().to_owned()));
        // Only Linux has a state folder; elsewhere logs live with the machine-local data.
        let state_dir = from_env(STATE_DIR_VAR).or_else(|| {
            project.as_ref().map(|p| p.state_dir().map_or_else(|| p.data_local_dir().join("logs"), Path::to_owned))
        });
        Paths {
            config_file: config_file.map(Path::to_owned).or_else(|| config_dir.as_ref().map(|d| d.join("config.toml"))),
            themes_dir: config_dir.map(|d| d.join("themes")),
            history_file: data_dir.as_ref().map(|d| d.join("history.sqlite")),
            data_dir,
            log_file: state_dir.as_ref().map(|d| d.join("opsdeck.log")),
            state_dir,
        }
    }

    /// `(what, where)` pairs, in the order `opsdeck paths` prints them.
    pub fn entries(&self) -> [(&'static str, Option<&Path>); 6] {
        [
            ("config", self.config_file.as_deref()),
            ("themes", self.themes_dir.as_deref()),
            ("data", self.data_dir.as_deref()),
            ("history", self.history_file.as_deref()),
            ("state", self.state_dir.as_deref()),
            ("log", self.log_file.as_deref()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_move_each_folder() {
        let env = |name: &str| match name {
            CONFIG_DIR_VAR => Some("/c".to_owned()),
            DATA_DIR_VAR => Some("/d".to_owned()),
            STATE_DIR_VAR => Some("/s".to_owned()),
            _ => None,
        };
        let paths = Paths::resolve(None, &env);
        assert_eq!(paths.config_file.as_deref(), Some(Path::new("/c/config.toml")));
        assert_eq!(paths.themes_dir.as_deref(), Some(Path::new("/c/themes")));
        assert_eq!(paths.history_file.as_deref(), Some(Path::new("/d/history.sqlite")));
        assert_eq!(paths.log_file.as_deref(), Some(Path::new("/s/opsdeck.log")));
    }

    #[test]
    fn an_explicit_config_file_wins_and_empty_variables_are_unset() {
        let env = |name: &str| (name == DATA_DIR_VAR).then(String::new);
        let paths = Paths::resolve(Some(Path::new("/etc/opsdeck.toml")), &env);
        assert_eq!(paths.config_file.as_deref(), Some(Path::new("/etc/opsdeck.toml")));
        assert_ne!(paths.data_dir.as_deref(), Some(Path::new("")));
    }
}
