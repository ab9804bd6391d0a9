//! `opsdeck`: parses the command line and runs the console or a command.

use std::process::ExitCode;

use clap::Parser;
use opsdeck::cli::{self, Cli, Command, Failure};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("opsdeck: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let mut stdout = std::io::stdout().lock();
    let result = runtime.block_on(async {
        match &cli.command {
            None => opsdeck::tui::run(&cli.global).await.map_err(|e| Failure { code: 1, message: format!("{e:#}") }),
            Some(Command::Ops { service, operation, json }) => {
                cli::ops(service.as_deref(), operation.as_deref(), *json, &mut stdout)
            }
            Some(Command::Sandbox { port_base, seed }) => cli::sandbox(*port_base, *seed, &mut stdout).await,
            Some(Command::Call(args)) => cli::call(&cli.global, args, &mut stdout).await,
        }
    });
    // Background tasks (an embedded simulator, idle connections) must not delay the exit.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("opsdeck: {}", failure.message);
            ExitCode::from(u8::try_from(failure.code).unwrap_or(1))
        }
    }
}
