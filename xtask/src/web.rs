//! The web: the wasm32 target, `wasm-bindgen-cli` of the version in Cargo.lock (its test runner drives the
//! browser), and Chromium with its WebDriver (Debian's `chromium`, `chromium-driver`), installed when missing:
//! rustup and cargo install as anyone, apt-get only as root; otherwise the command to run.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run;

const TARGET: &str = "wasm32-unknown-unknown";
/// Where Debian puts the browser and its driver; PATH is searched first.
const CHROMIUM: [&str; 2] = ["chromium", "chromium-browser"];
const CHROMEDRIVER: &str = "chromedriver";

/// What `cargo test --target wasm32-unknown-unknown` needs to run tests in headless Chromium.
pub struct Browser {
    pub chromedriver: PathBuf,
}

/// Makes sure the target, `wasm-bindgen-cli` and Chromium are there, installing what is missing.
pub fn ensure() -> Result<Browser, String> {
    ensure_build_tools()?;
    ensure_chromium()
}

/// Makes sure the target and `wasm-bindgen-cli` are there: what building the page needs.
pub fn ensure_build_tools() -> Result<(), String> {
    ensure_target()?;
    ensure_wasm_bindgen()
}

/// The environment `cargo test --target wasm32-unknown-unknown` runs the web tests in: wasm-bindgen's runner,
/// the WebDriver, and the capabilities that give headless Chromium WebGPU (xtask/web/webdriver.json).
pub fn test_env(browser: &Browser) -> Vec<(&'static str, String)> {
    vec![
        (
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER",
            "wasm-bindgen-test-runner".into(),
        ),
        ("CHROMEDRIVER", browser.chromedriver.display().to_string()),
        (
            "WASM_BINDGEN_TEST_WEBDRIVER_JSON",
            webdriver_json().display().to_string(),
        ),
        // SwiftShader is slow: the runner's default of 20 s per test run is short for a debug build.
        ("WASM_BINDGEN_TEST_TIMEOUT", "300".into()),
    ]
}

/// The browser's capabilities: headless (the new mode), no sandbox (CI runs as root) and WebGPU, which
/// Chromium on Linux offers only behind `--enable-unsafe-webgpu` (SwiftShader's adapter, on the CPU).
fn webdriver_json() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("web/webdriver.json")
}

fn ensure_target() -> Result<(), String> {
    let installed = run::output("rustup", &["target", "list", "--installed"]);
    match installed {
        Some(list) if list.lines().any(|line| line.trim() == TARGET) => Ok(()),
        Some(_) => run::run_ok(Command::new("rustup").args(["target", "add", TARGET])),
        // No rustup: the toolchain may still have the target's standard library.
        None => {
            say!(
                "no rustup: assuming the toolchain has {TARGET} (else: install its standard library)"
            );
            Ok(())
        }
    }
}

/// `wasm-bindgen-cli` must be the version of the `wasm-bindgen` crate in Cargo.lock, exactly.
fn ensure_wasm_bindgen() -> Result<(), String> {
    let wanted = locked_wasm_bindgen()?;
    let found = run::output("wasm-bindgen", &["--version"]);
    if found
        .as_deref()
        .is_some_and(|v| v.split_whitespace().nth(1) == Some(wanted.as_str()))
    {
        return Ok(());
    }
    say!(
        "wasm-bindgen-cli {wanted} not found ({}): installing it with cargo (several minutes)",
        found.as_deref().map_or("none", str::trim)
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run::run_ok(Command::new(cargo).args(["install", "wasm-bindgen-cli", "--version", &wanted]))
}

/// The `wasm-bindgen` version in the workspace's Cargo.lock.
fn locked_wasm_bindgen() -> Result<String, String> {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    let text = std::fs::read_to_string(&lock)
        .map_err(|e| format!("cannot read {}: {e}", lock.display()))?;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasm-bindgen\"" {
            let version = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = \""));
            if let Some(version) = version.and_then(|v| v.strip_suffix('"')) {
                return Ok(version.to_string());
            }
        }
    }
    Err(format!("no wasm-bindgen in {}", lock.display()))
}

fn ensure_chromium() -> Result<Browser, String> {
    let found = || {
        let browser = CHROMIUM.iter().any(|b| run::in_path(b));
        run::which(CHROMEDRIVER).filter(|_| browser)
    };
    if let Some(chromedriver) = found() {
        return Ok(Browser { chromedriver });
    }
    say!("not found: Chromium and its WebDriver (chromium, chromedriver)");
    crate::vulkan::install(&["chromium", "chromium-driver"])?;
    found()
        .map(|chromedriver| Browser { chromedriver })
        .ok_or_else(|| "still not found after installing: chromium, chromedriver".into())
}

/// The web example's page, built: the crate for wasm32 (release), wasm-bindgen's JavaScript for it, and
/// `index.html`, all in `examples/web/pkg/`, which this returns.
pub fn build_page() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run::run_ok(Command::new(&cargo).args([
        "build",
        "--release",
        "-p",
        "web-example",
        "--lib",
        "--target",
        TARGET,
    ]))?;
    let target_dir = target_directory(&cargo)?;
    let wasm = target_dir.join(TARGET).join("release/web_example.wasm");
    let pkg = root.join("examples/web/pkg");
    run::run_ok(
        Command::new("wasm-bindgen")
            .args(["--target", "web", "--no-typescript", "--out-dir"])
            .arg(&pkg)
            .arg(&wasm),
    )?;
    std::fs::copy(root.join("examples/web/index.html"), pkg.join("index.html"))
        .map_err(|e| format!("cannot copy index.html into {}: {e}", pkg.display()))?;
    Ok(pkg)
}

/// Cargo's target directory, as `cargo metadata` says (it honours `CARGO_TARGET_DIR` and the config files).
fn target_directory(cargo: &std::ffi::OsStr) -> Result<PathBuf, String> {
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    // `"target_directory":"PATH"`: a JSON string, whose escapes a path on Linux does not need but `\\`.
    let start = text
        .find("\"target_directory\":\"")
        .ok_or("cargo metadata names no target directory")?
        + "\"target_directory\":\"".len();
    let end = text[start..]
        .find('"')
        .ok_or("cargo metadata's target directory does not end")?;
    Ok(PathBuf::from(
        text[start..start + end].replace("\\\\", "\\"),
    ))
}
