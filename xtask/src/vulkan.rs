//! Finding a Vulkan driver, the Vulkan loader, the Khronos validation layer and Mesa's EGL (for wgpu's GL
//! backend), and installing what is missing with apt-get (Debian, Ubuntu) when running as root.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run;

/// Where the Vulkan loader looks for driver (ICD) manifests on Linux.
const ICD_DIRS: [&str; 3] = [
    "/usr/share/vulkan/icd.d",
    "/etc/vulkan/icd.d",
    "/usr/local/share/vulkan/icd.d",
];
/// Environment variables that name driver manifests explicitly (the second is the older name).
const ICD_ENV: [&str; 2] = ["VK_DRIVER_FILES", "VK_ICD_FILENAMES"];
const LAYER_DIRS: [&str; 3] = [
    "/usr/share/vulkan/explicit_layer.d",
    "/etc/vulkan/explicit_layer.d",
    "/usr/local/share/vulkan/explicit_layer.d",
];
const LAYER_MANIFEST: &str = "VkLayer_khronos_validation.json";
const LOADER: &str = "libvulkan.so.1";
/// Mesa's EGL, which wgpu's GL backend loads through libglvnd's `libEGL.so.1` (surfaceless, no display).
const EGL_LIBRARIES: [&str; 2] = ["libEGL.so.1", "libEGL_mesa.so.0"];
/// Mesa's software OpenGL driver, which EGL loads without a GPU.
const GL_DRIVER: &str = "dri/swrast_dri.so";
/// Where to look for the loader when `ldconfig` cannot be run.
const LIB_DIRS: [&str; 5] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
];

/// The environment of `cargo xtask test --validation`: the loader enables the Khronos layer, with
/// synchronization validation on, and our runtime turns on wgpu's validation and debug flags and fails
/// on any validation message.
pub fn validation_env() -> [(&'static str, &'static str); 3] {
    [
        ("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation"),
        sync_validation_env(),
        ("GRAPH_RUNTIME_VALIDATION", "1"),
    ]
}

/// Layers whose manifest lists the `validate_sync` setting read VK_KHRONOS_VALIDATION_VALIDATE_SYNC.
/// Older ones (1.3.239 in Debian 12) ignore it and take the feature in VK_LAYER_ENABLES, a name newer
/// layers deprecate: set only the one the installed layer reads.
fn sync_validation_env() -> (&'static str, &'static str) {
    let manifest = validation_layer().and_then(|path| fs::read_to_string(path).ok());
    if manifest.is_none_or(|text| text.contains("validate_sync")) {
        ("VK_KHRONOS_VALIDATION_VALIDATE_SYNC", "true")
    } else {
        (
            "VK_LAYER_ENABLES",
            "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT",
        )
    }
}

/// Something missing, and the Debian packages that provide it.
struct Missing {
    what: &'static str,
    packages: &'static [&'static str],
}

/// What a command needs beyond a Vulkan driver and the loader.
#[derive(Debug, Clone, Copy, Default)]
pub struct Needs {
    /// The Khronos validation layer.
    pub validation_layer: bool,
    /// Mesa's EGL and software OpenGL driver, for wgpu's GL backend.
    pub gl: bool,
    /// A virtual X display (`xvfb-run`), for the window example's test.
    pub display: bool,
}

/// Makes sure a Vulkan driver and the loader, and what `needs` names, are installed: installs them with
/// apt-get as root, or fails with the command to run.
pub fn ensure(needs: Needs) -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        say!("not Linux: using the system's graphics drivers as they are");
        return Ok(());
    }
    let missing = find_missing(needs);
    if missing.is_empty() {
        return Ok(());
    }
    for item in &missing {
        say!("not found: {}", item.what);
    }
    install(&packages(&missing))?;
    let still: Vec<&str> = find_missing(needs).iter().map(|item| item.what).collect();
    if still.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "still not found after installing: {}",
            still.join(", ")
        ))
    }
}

fn find_missing(needs: Needs) -> Vec<Missing> {
    let mut missing = Vec::new();
    if driver_manifests().is_empty() {
        missing.push(Missing {
            what: "a Vulkan driver (ICD manifest)",
            packages: &["mesa-vulkan-drivers", "libvulkan1"],
        });
    }
    if loader().is_none() {
        missing.push(Missing {
            what: "the Vulkan loader libvulkan.so.1",
            packages: &["libvulkan1"],
        });
    }
    if needs.validation_layer && validation_layer().is_none() {
        missing.push(Missing {
            what: "the Khronos validation layer",
            packages: &["vulkan-validationlayers"],
        });
    }
    if needs.display && !run::in_path("xvfb-run") {
        missing.push(Missing {
            what: "a virtual X display (xvfb-run)",
            packages: &["xvfb", "xauth"],
        });
    }
    if needs.gl && !gl_found() {
        missing.push(Missing {
            what: "Mesa's EGL and software OpenGL driver",
            packages: &["libegl1", "libegl-mesa0", "libgl1-mesa-dri"],
        });
    }
    missing
}

/// Whether libglvnd's EGL, Mesa's EGL vendor library and Mesa's software GL driver are installed.
fn gl_found() -> bool {
    EGL_LIBRARIES
        .iter()
        .all(|library| find_library(library).is_some())
        && LIB_DIRS
            .iter()
            .any(|dir| Path::new(dir).join(GL_DRIVER).is_file())
}

/// The packages that provide `missing`, each once.
fn packages(missing: &[Missing]) -> Vec<&'static str> {
    let mut packages = Vec::new();
    for package in missing.iter().flat_map(|item| item.packages) {
        if !packages.contains(package) {
            packages.push(*package);
        }
    }
    packages
}

/// Installs Debian packages with apt-get as root; otherwise fails with the command to run.
pub fn install(packages: &[&str]) -> Result<(), String> {
    let list = packages.join(" ");
    if !is_root() || !run::in_path("apt-get") {
        return Err(format!(
            "install them, on Debian or Ubuntu with: sudo apt-get install {list}"
        ));
    }
    say!("installing {list} with apt-get (running as root)");
    let apt = || {
        let mut command = Command::new("apt-get");
        command.env("DEBIAN_FRONTEND", "noninteractive");
        command
    };
    run::run_ok(apt().arg("update"))?;
    run::run_ok(
        apt()
            .args(["install", "-y", "--no-install-recommends"])
            .args(packages),
    )
}

/// Prints what was found, for `cargo xtask doctor`.
pub fn doctor() {
    let drivers = driver_manifests();
    if drivers.is_empty() {
        say!(
            "Vulkan drivers: none found (looked in {})",
            ICD_DIRS.join(", ")
        );
    } else {
        say!("Vulkan drivers:");
        for manifest in &drivers {
            say!("  {}", manifest.display());
        }
    }
    for name in ICD_ENV {
        if let Some(value) = std::env::var_os(name) {
            say!("{name}={}", value.to_string_lossy());
        }
    }
    let found =
        |path: Option<PathBuf>| path.map_or("not found".into(), |p| p.display().to_string());
    say!("Vulkan loader: {}", found(loader()));
    say!(
        "EGL and Mesa's GL driver (for `--backend gl`): {}",
        if gl_found() { "found" } else { "not found" }
    );
    say!("validation layer: {}", found(validation_layer()));
    say!(
        "virtual X display (xvfb-run, for the window example's test): {}",
        if run::in_path("xvfb-run") {
            "found"
        } else {
            "not found"
        }
    );
    let (name, value) = sync_validation_env();
    say!("synchronization validation through: {name}={value}");
    say!("running as root: {}", if is_root() { "yes" } else { "no" });
    let apt = if run::in_path("apt-get") {
        "found"
    } else {
        "not found"
    };
    say!("apt-get: {apt}");
    let missing = find_missing(Needs {
        validation_layer: true,
        gl: true,
        display: true,
    });
    if missing.is_empty() {
        say!("ready for `cargo xtask test`, `--validation` and `--backend gl`");
    } else {
        say!(
            "to install what is missing: sudo apt-get install {}",
            packages(&missing).join(" ")
        );
    }
}

/// Driver manifests in the loader's folders, or named by VK_DRIVER_FILES / VK_ICD_FILENAMES.
fn driver_manifests() -> Vec<PathBuf> {
    let mut manifests: Vec<PathBuf> = ICD_DIRS
        .iter()
        .flat_map(|dir| json_files(Path::new(dir)))
        .collect();
    for name in ICD_ENV {
        let Some(value) = std::env::var_os(name) else {
            continue;
        };
        for path in std::env::split_paths(&value) {
            if path.is_file() {
                manifests.push(path);
            } else {
                manifests.extend(json_files(&path));
            }
        }
    }
    manifests
}

fn validation_layer() -> Option<PathBuf> {
    let from_env = ["VK_LAYER_PATH", "VK_ADD_LAYER_PATH"]
        .into_iter()
        .filter_map(std::env::var_os)
        .flat_map(|value| std::env::split_paths(&value).collect::<Vec<_>>());
    LAYER_DIRS
        .into_iter()
        .map(PathBuf::from)
        .chain(from_env)
        .map(|dir| dir.join(LAYER_MANIFEST))
        .find(|manifest| manifest.is_file())
}

/// The loader's path.
fn loader() -> Option<PathBuf> {
    find_library(LOADER)
}

/// A shared library's path, from `ldconfig -p` (`\tlibvulkan.so.1 (libc6,x86-64) => /lib/.../libvulkan.so.1`).
fn find_library(wanted: &str) -> Option<PathBuf> {
    // ldconfig lives in /sbin, which is not on every user's PATH.
    let listing = ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"]
        .into_iter()
        .find_map(|program| run::output(program, &["-p"]));
    match listing {
        Some(listing) => listing.lines().find_map(|line| {
            let (name, path) = line.split_once("=>")?;
            let library = name.split_whitespace().next()?;
            (library == wanted).then(|| PathBuf::from(path.trim()))
        }),
        None => LIB_DIRS
            .iter()
            .map(|dir| Path::new(dir).join(wanted))
            .find(|path| path.exists()),
    }
}

/// Whether the effective user is root: from /proc/self/status (`Uid: real effective ...`), else `id -u`.
fn is_root() -> bool {
    let from_proc = fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|line| line.starts_with("Uid:"))?;
            line.split_whitespace().nth(2).map(|uid| uid == "0")
        });
    from_proc.unwrap_or_else(|| run::output("id", &["-u"]).is_some_and(|uid| uid.trim() == "0"))
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_file() && path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}
