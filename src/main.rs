//! `opsdeck`: parses the command line and runs the console or a command.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use opsdeck::cli::{self, CallIo, Cli, Command, Failure};
use opsdeck::inert::inert_lines;

fn main() -> ExitCode {
    // A jq worker of a console or a call (see `opsdeck::jq::run_budgeted`): nothing else runs.
    if std::env::args_os().nth(1).is_some_and(|arg| arg == opsdeck::jq::WORKER_ARG) {
        let code = std::env::args().nth(2).unwrap_or_default();
        let each = std::env::args().nth(3).is_some_and(|arg| arg == "each");
        let status = opsdeck::jq::worker_main(&code, each);
        return ExitCode::from(u8::try_from(status).unwrap_or(1));
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help, the version, or a usage error: clap's text on stdout or stderr. A reader that
        // went away ends it quietly, as for every other output (`opsdeck --help | head -3`).
        Err(error) => {
            return match error.print() {
                Err(e) if cli::is_reader_gone(&e) => ExitCode::SUCCESS,
                _ => ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2)),
            }
        }
    };
    let paths = opsdeck::paths::Paths::current(cli.global.config.as_deref());
    // Before anything runs, so every call is logged; a log that cannot be written only warns (the
    // console says so in its status line too, since this line is behind its screen).
    let log_warning = opsdeck::log::init(cli.global.debug, paths.log_file.as_deref()).err();
    if let Some(warning) = &log_warning {
        // Not `eprintln!`, which panics when stderr is a closed pipe; a warning nobody can read
        // stops nothing.
        let _ = writeln!(std::io::stderr(), "opsdeck: warning: {}", inert_lines(warning));
    }
    // The console and `opsdeck sandbox` serve and draw at once: they get a thread per core. A
    // one-shot command does one thing at a time, so it starts no worker threads (a call is
    // measured in milliseconds, and starting threads is a good part of them).
    let serves = matches!(cli.command, None | Some(Command::Sandbox { .. }));
    let mut builder = if serves {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "opsdeck: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let stdout = std::io::stdout();
    let out_is_terminal = stdout.is_terminal();
    let mut stdout = stdout.lock();
    let mut stderr = std::io::stderr();
    let stdin = std::io::stdin();
    // A question needs someone to read it (stderr) and to answer it (stdin).
    let can_ask = stdin.is_terminal() && stderr.is_terminal();
    let result = runtime.block_on(async {
        cli::check_global_flags(&cli.global, cli.command.as_ref())?;
        match &cli.command {
            None => opsdeck::tui::run(&cli.global, log_warning)
                .await
                .map_err(|e| Failure { code: 1, message: format!("{e:#}") }),
            Some(Command::Ops { service, operation, json }) => {
                cli::ops(service.as_deref(), operation.as_deref(), *json, &mut stdout)
            }
            Some(Command::Sandbox { port_base, seed, speed, dns_delay, tax_rates }) => {
                let args = cli::SandboxArgs {
                    port_base: *port_base,
                    seed: *seed,
                    speed: *speed,
                    dns_delay: *dns_delay,
                    tax_rates: tax_rates.as_deref(),
                };
                cli::sandbox(&cli.global, args, &mut stdout).await
            }
            Some(Command::Call(args)) => {
                // Locked here only: the console reads the terminal its own way.
                let mut stdin = stdin.lock();
                let mut io = CallIo {
                    out: &mut stdout,
                    out_is_terminal,
                    err: &mut stderr,
                    answers: if can_ask { Some(&mut stdin as &mut dyn BufRead) } else { None },
                    history: paths.history_file.clone(),
                };
                cli::call(&cli.global, args, &mut io).await
            }
            Some(Command::Completions { shell }) => {
                cli::write_output(&mut stdout, cli::complete::script(*shell).as_bytes())
            }
            Some(Command::Complete { words }) => {
                let lines: String = cli::complete::candidates(words).into_iter().map(|c| c + "\n").collect();
                cli::write_output(&mut stdout, lines.as_bytes())
            }
            Some(Command::Man { dir }) => cli::docs::man(dir.as_deref(), &mut stdout),
            Some(Command::Help { topic }) => cli::docs::help(topic, &mut stdout),
            Some(Command::History(args)) => {
                opsdeck::commands::history(&cli.global, args, &mut stdout, out_is_terminal, &mut stderr)
            }
            Some(Command::Paths { json }) => opsdeck::commands::paths(&cli.global, *json, &mut stdout),
        }
    });
    // Background tasks (an embedded simulator, idle connections) must not delay the exit.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of the output went away: nothing to say, and nothing went wrong.
        Err(failure) if failure.is_reader_gone() => ExitCode::SUCCESS,
        Err(failure) => {
            // Failures quote servers and config values: shown, never acted on by the terminal.
            // A reader of stderr that went away (`2>&1 | head -2`) ends the command quietly too.
            match writeln!(stderr, "opsdeck: {}", inert_lines(&failure.message)) {
                Err(e) if cli::is_reader_gone(&e) => ExitCode::SUCCESS,
                _ => ExitCode::from(u8::try_from(failure.code).unwrap_or(1)),
            }
        }
    }
}
