//! Running child processes: cargo for the work itself, apt-get and ldconfig for the Vulkan setup.

use std::path::Path;
use std::process::{Command, ExitStatus};

/// Runs `cargo ARGS` with `env` added, and returns its exit code (0 on success) for xtask to exit with.
pub fn cargo(args: &[String], env: &[(&str, &str)]) -> Result<u8, String> {
    // Cargo sets CARGO for `cargo run`: the same toolchain then runs the work.
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(program);
    command.args(args);
    for (name, value) in env {
        say!("{name}={value}");
        command.env(name, value);
    }
    let status = run(&mut command)?;
    if !status.success() {
        say!("{} failed ({status})", describe(&command));
    }
    // A child killed by a signal has no code: report a plain failure.
    Ok(status
        .code()
        .map_or(1, |code| u8::try_from(code).unwrap_or(1)))
}

/// Prints the command line, runs it with the terminal inherited and waits for it.
pub fn run(command: &mut Command) -> Result<ExitStatus, String> {
    say!("running `{}`", describe(command));
    command
        .status()
        .map_err(|error| format!("cannot run `{}`: {error}", describe(command)))
}

/// Like [`run`], but an exit other than success is an error.
pub fn run_ok(command: &mut Command) -> Result<(), String> {
    let status = run(command)?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", describe(command)))
    }
}

/// What `program ARGS` prints, or `None` when it cannot be run or fails.
pub fn output(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    output.status.success().then_some(stdout)
}

/// Whether `program` is an executable file in one of the PATH folders.
pub fn in_path(program: &str) -> bool {
    which(program).is_some()
}

/// `program`'s path in the first PATH folder that has it.
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// `program ARGS`, with the program's file name only (CARGO is a long toolchain path).
fn describe(command: &Command) -> String {
    let program = Path::new(command.get_program());
    let name = program.file_name().unwrap_or(program.as_os_str());
    let mut line = name.to_string_lossy().into_owned();
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}
