//! Runs each example program to the end: each checks its GPU results against a CPU computation and exits
//! with an error when they differ, so a zero exit status means the example works on this machine.
//!
//! Under `cargo xtask test --validation` the programs inherit the validation environment, so their graphs
//! also run under the Khronos validation layer with synchronization validation, and any finding fails them.

#![forbid(unsafe_code)]

use std::process::Command;

/// Runs `exe` with `args`; fails the test with its output unless it exits successfully and prints `expect`.
fn run(exe: &str, args: &[&str], expect: &str) {
    let output = Command::new(exe)
        .args(args)
        .output()
        .expect("the example program starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains(expect),
        "{exe} {args:?} exited with {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status,
    );
}

#[test]
fn saxpy() {
    run(env!("CARGO_BIN_EXE_01_saxpy"), &[], "ok:");
}

#[test]
fn poisson() {
    run(env!("CARGO_BIN_EXE_05_poisson"), &[], "\nok\n");
}

#[test]
fn flagship() {
    run(env!("CARGO_BIN_EXE_flagship"), &[], "\nok\n");
}

/// Two flagship frames in one graph, on one GPU and across two (two devices of the adapter here), each frame
/// checked against the CPU by the program.
#[test]
fn multi_gpu_frames() {
    run(
        env!("CARGO_BIN_EXE_multi_gpu_frames"),
        &["--frames", "2", "--runs", "1"],
        "speed-up of two GPUs over one",
    );
}

#[test]
fn flagship_rejects_a_missing_input() {
    let output = Command::new(env!("CARGO_BIN_EXE_flagship"))
        .arg("no/such/picture.png")
        .output()
        .expect("the example program starts");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read no/such/picture.png"));
}

/// The window example, on a virtual X display: 30 frames presented, then the board read back and checked
/// against the CPU's 30 generations. `cargo xtask test` installs `xvfb-run` where it is missing.
#[test]
fn window() {
    let found = Command::new("xvfb-run").arg("--help").output().is_ok();
    assert!(
        found,
        "the window example's test runs it on a virtual X display: install one with `apt-get install xvfb \
         xauth` (`cargo xtask test` does, as root)"
    );
    run(
        "xvfb-run",
        &["-a", env!("CARGO_BIN_EXE_window"), "30"],
        "as on the CPU; the last picture in",
    );
}

#[test]
fn heat() {
    run(env!("CARGO_BIN_EXE_03_heat"), &[], "heat_frames.png");
}

#[test]
fn interop() {
    run(env!("CARGO_BIN_EXE_04_interop"), &[], "ok:");
}

#[test]
fn record() {
    run(
        env!("CARGO_BIN_EXE_07_record"),
        &["5000", "3"],
        "ok: the eager run and the replays computed what the CPU does",
    );
}

#[test]
fn pipeline() {
    run(
        env!("CARGO_BIN_EXE_06_pipeline"),
        &[],
        "ok: every bake computed what the CPU does",
    );
}
