//! Profiles, credentials, paths and themes.
