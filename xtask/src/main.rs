//! `cargo xtask`: the project's automation, std only.
//!
//! `demo` and `test` first make sure a Vulkan driver is installed (Mesa's software driver llvmpipe on
//! machines without a GPU), installing it with apt-get when running as root, then run cargo and exit
//! with its exit code.

#![forbid(unsafe_code)]

/// Prints an `xtask:` line; a closed stdout (`cargo xtask doctor | head -1`) is no reason to panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), "xtask: {}", format_args!($($arg)*));
    }};
}

mod run;
mod vulkan;
mod web;

use std::io::Write as _;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  demo [ARGS]                  cargo run --release -p examples --bin flagship -- ARGS
  test [ARGS]                  cargo test --workspace ARGS (as two runs: the GPU crates, then
                               the others, so that the GPU passes below reuse the first build),
                               then the web tests as `test --web` runs them (without ARGS)
  test --validation [ARGS]     cargo test -p graph-runtime -p examples ARGS, under the Khronos
                               validation layer (synchronization validation on)
  test --backend gl [ARGS]     cargo test -p graph-runtime -p examples ARGS on wgpu's GL backend
                               (Mesa's EGL, surfaceless)
  test --web [ARGS]            the web tests (graph-runtime/tests/web.rs) built for wasm32 and run
                               with wasm-bindgen-test in headless Chromium on WebGPU (SwiftShader)
  web [ADDRESS]                build the web example (examples/web) for wasm32 and serve it at
                               ADDRESS (127.0.0.1:8080); open it in a browser with WebGPU
  web-bench [ARGS]             the benchmark's shapes in headless Chromium (graph-runtime's
                               tests/web_bench.rs, release, prints a table)
  doctor                       show the Vulkan drivers, loader, validation layer and EGL found

demo and test install what is missing (mesa-vulkan-drivers, libvulkan1, vulkan-validationlayers,
xvfb and xauth for the window example, and for GL libegl1, libegl-mesa0, libgl1-mesa-dri) with apt-get
when running as root; otherwise they print the command to run. For the web: the wasm32 target (rustup),
wasm-bindgen-cli of Cargo.lock's version (cargo install) and chromium, chromium-driver (apt-get).";

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
        "web" => web_page(rest),
        "web-bench" => web_bench(rest),
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
    vulkan::ensure(vulkan::Needs::default())?;
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
    run::cargo(&cargo_args, &[]).map(ExitCode::from)
}

/// Arguments other than `--validation` and `--backend gl` go to `cargo test` as given (so `-- --nocapture`
/// works). Every run needs the validation layer: the runtime's own validation tests turn validation on.
fn test(args: &[String]) -> Result<ExitCode, String> {
    let (web, args) = take_flag(args, "--web");
    if web {
        return test_web(&args);
    }
    let (validation, args) = take_flag(&args, "--validation");
    let (backend, args) = take_option(&args, "--backend")?;
    let gl = match backend.as_deref() {
        None | Some("vulkan") => false,
        Some("gl") => true,
        Some(other) => return Err(format!("unknown backend `{other}`: `vulkan` or `gl`")),
    };
    vulkan::ensure(vulkan::Needs {
        validation_layer: true,
        gl,
        display: true,
    })?;
    let with_args = |command: &[&str]| {
        let mut cargo_args = strings(command);
        cargo_args.extend_from_slice(&args);
        cargo_args
    };
    let gpu_tests = with_args(&GPU_CRATES);
    let code = match (validation, gl) {
        (true, true) => {
            return Err(
                "the validation layer is Vulkan's: use `--validation` or `--backend gl`".into(),
            );
        }
        (true, false) => run::cargo(&gpu_tests, &vulkan::validation_env())?,
        (false, true) => run::cargo(&gpu_tests, &[("WGPU_BACKEND", "gl")])?,
        // Cargo unifies features over the packages one run selects: `--workspace` would build naga (and all
        // above it: wgpu, the runtime, every test binary) with the features graph-macros' own tests add, and
        // the GPU passes after it would build all of that a second time, doubling the target folder.
        // Then the web tests: every test means those too (without ARGS, which are native cargo test's).
        (false, false) => match run::cargo(&gpu_tests, &[])? {
            0 => match run::cargo(&with_args(&OTHER_CRATES), &[])? {
                0 => return test_web(&[]),
                failed => failed,
            },
            failed => failed,
        },
    };
    Ok(ExitCode::from(code))
}

/// The web tests, in headless Chromium: `cargo test --target wasm32-unknown-unknown` with wasm-bindgen's
/// runner, which drives the browser through its WebDriver; then the web example's page built and tested end
/// to end (`examples/web/tests/page.rs`, ignored by plain `cargo test` since it needs the built page).
fn test_web(args: &[String]) -> Result<ExitCode, String> {
    let browser = web::ensure()?;
    let env = web::test_env(&browser);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut cargo_args = strings(&[
        "test",
        "-p",
        "graph-runtime",
        "--target",
        "wasm32-unknown-unknown",
        "--test",
        "web",
    ]);
    cargo_args.extend_from_slice(args);
    let code = run::cargo(&cargo_args, &env)?;
    if code != 0 {
        return Ok(ExitCode::from(code));
    }
    let page = web::build_page()?;
    let page = page.display().to_string();
    let chromedriver = browser.chromedriver.display().to_string();
    let page_test = strings(&[
        "test",
        "-p",
        "web-example",
        "--test",
        "page",
        "--",
        "--ignored",
        "--nocapture",
    ]);
    let env = [
        ("WEB_PAGE_DIR", page.as_str()),
        ("CHROMEDRIVER", chromedriver.as_str()),
    ];
    run::cargo(&page_test, &env).map(ExitCode::from)
}

/// The benchmark's shapes in headless Chromium, in release: an ignored wasm test that prints figures.
fn web_bench(args: &[String]) -> Result<ExitCode, String> {
    let browser = web::ensure()?;
    let env = web::test_env(&browser);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut cargo_args = strings(&[
        "test",
        "--release",
        "-p",
        "graph-runtime",
        "--target",
        "wasm32-unknown-unknown",
        "--test",
        "web_bench",
    ]);
    // The user's arguments, with the runner's after one `--`.
    let (before, after) = match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => (args, &[][..]),
    };
    cargo_args.extend_from_slice(before);
    cargo_args.extend(strings(&["--", "--include-ignored", "--nocapture"]));
    cargo_args.extend_from_slice(after);
    run::cargo(&cargo_args, &env).map(ExitCode::from)
}

/// Builds the web example's page and serves it until stopped.
fn web_page(args: &[String]) -> Result<ExitCode, String> {
    web::ensure_build_tools()?;
    let page = web::build_page()?;
    let address = args.first().map_or("127.0.0.1:8080", String::as_str);
    say!("open http://{address}/ in a browser with WebGPU (Chrome or Edge; any other that has it)");
    let serve = vec![
        "run".to_string(),
        "-p".into(),
        "web-example".into(),
        "--bin".into(),
        "serve".into(),
        "--".into(),
        page.display().to_string(),
        address.to_string(),
    ];
    run::cargo(&serve, &[]).map(ExitCode::from)
}

/// The crates whose tests run on a GPU: every test pass selects exactly these, so they build once.
const GPU_CRATES: [&str; 5] = ["test", "-p", "graph-runtime", "-p", "examples"];
/// The rest of the workspace.
const OTHER_CRATES: [&str; 6] = [
    "test",
    "--workspace",
    "--exclude",
    "graph-runtime",
    "--exclude",
    "examples",
];

/// Removes `name VALUE` where it appears before any `--`; the value, if it was there.
fn take_option(args: &[String], name: &str) -> Result<(Option<String>, Vec<String>), String> {
    let end = args
        .iter()
        .position(|arg| arg == "--")
        .unwrap_or(args.len());
    let Some(at) = args[..end].iter().position(|arg| arg == name) else {
        return Ok((None, args.to_vec()));
    };
    let value = args
        .get(at + 1)
        .filter(|_| at + 1 < end)
        .ok_or_else(|| format!("{name} needs a value"))?;
    let mut rest = args.to_vec();
    rest.drain(at..=at + 1);
    Ok((Some(value.clone()), rest))
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
