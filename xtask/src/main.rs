//! `cargo xtask`: the project's automation, std only.
//!
//! `demo` and `test` first make sure a Vulkan driver is installed (Mesa's software driver llvmpipe on
//! machines without a GPU), installing it with apt-get when running as root, then run cargo and exit
//! with its exit code.

/// Prints an `xtask:` line; a closed stdout (`cargo xtask doctor | head -1`) is no reason to panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), "xtask: {}", format_args!($($arg)*));
    }};
}

mod run;
mod vulkan;

use std::io::Write as _;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  demo [ARGS]                  cargo run --release -p examples --bin flagship -- ARGS
  test [ARGS]                  cargo test --workspace ARGS
  test --validation [ARGS]     cargo test -p graph-runtime -p examples ARGS, under the Khronos
                               validation layer (synchronization validation on)
  doctor                       show the Vulkan drivers, loader and validation layer found

demo and test install what is missing (mesa-vulkan-drivers, libvulkan1, vulkan-validationlayers)
with apt-get when running as root; otherwise they print the command to run.";

fn main() -> ExitCode {
    match args().and_then(|args| dispatch(&args)) {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "xtask: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn args() -> Result<Vec<String>, String> {
    std::env::args_os()
        .skip(1)
        .map(|arg| {
            arg.into_string()
                .map_err(|arg| format!("argument {arg:?} is not valid UTF-8"))
        })
        .collect()
}

fn dispatch(args: &[String]) -> Result<ExitCode, String> {
    let Some((command, rest)) = args.split_first() else {
        return Err(format!("no command given\n\n{USAGE}"));
    };
    match command.as_str() {
        "demo" => demo(rest),
        "test" => test(rest),
        "doctor" => {
            vulkan::doctor();
            Ok(ExitCode::SUCCESS)
        }
        "help" | "-h" | "--help" => {
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => Err(format!("unknown command `{other}`\n\n{USAGE}")),
    }
}

/// All arguments go to the flagship program; a leading `--` is accepted and dropped.
fn demo(args: &[String]) -> Result<ExitCode, String> {
    vulkan::ensure(false)?;
    let program_args = match args.split_first() {
        Some((first, rest)) if first == "--" => rest,
        _ => args,
    };
    let mut cargo_args = strings(&[
        "run",
        "--release",
        "-p",
        "examples",
        "--bin",
        "flagship",
        "--",
    ]);
    cargo_args.extend_from_slice(program_args);
    run::cargo(&cargo_args, &[])
}

/// Arguments other than `--validation` go to `cargo test` as given (so `-- --nocapture` works).
fn test(args: &[String]) -> Result<ExitCode, String> {
    let (validation, args) = take_flag(args, "--validation");
    vulkan::ensure(validation)?;
    if validation {
        let mut cargo_args = strings(&["test", "-p", "graph-runtime", "-p", "examples"]);
        cargo_args.extend(args);
        run::cargo(&cargo_args, &vulkan::validation_env())
    } else {
        let mut cargo_args = strings(&["test", "--workspace"]);
        cargo_args.extend(args);
        run::cargo(&cargo_args, &[])
    }
}

/// Removes `flag` where it appears before any `--` (what follows `--` belongs to the test binaries).
fn take_flag(args: &[String], flag: &str) -> (bool, Vec<String>) {
    let end = args
        .iter()
        .position(|arg| arg == "--")
        .unwrap_or(args.len());
    let found = args[..end].iter().any(|arg| arg == flag);
    let rest = args[..end]
        .iter()
        .filter(|arg| *arg != flag)
        .chain(&args[end..])
        .cloned()
        .collect();
    (found, rest)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}
