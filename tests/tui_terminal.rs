//! The console binary where there is no terminal to draw on.

use std::process::{Command, Stdio};

#[test]
fn without_a_terminal_the_console_says_to_use_call() {
    let home = std::env::temp_dir().join(format!("opsdeck-tui-no-tty-{}", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_opsdeck"))
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", &home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("opsdeck runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the console needs a terminal; use `opsdeck call`"), "{stderr}");
    assert!(output.stdout.is_empty(), "no escape codes on a pipe: {:?}", String::from_utf8_lossy(&output.stdout));
}
