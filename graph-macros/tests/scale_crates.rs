//! Writes the crates that measure the macro at scale (issue 19, point 16); ignored, as it measures nothing
//! by itself. Run it, then time `cargo check` of each crate:
//!
//! ```text
//! SCALE_DIR=/tmp/scale cargo test -p graph-macros --test scale_crates -- --ignored
//! cd /tmp/scale/chain5000 && touch src/lib.rs && time cargo check
//! ```
//!
//! `chain5000`: 5000 library kernels in a chain over four buffers of declared length, so pointwise neighbours
//! are fusion candidates. `chain2000`: the same with 2000. Each crate depends on this workspace's
//! `graph-runtime` by path, with this workspace's lock file and its profile settings for the macro.

#![forbid(unsafe_code)]

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The graph `Chain`: `kernels` axpy kernels, each reading one of four buffers and updating the next.
fn chain(kernels: usize) -> String {
    let mut text = String::from(
        "graph_runtime::graph! {\n    pub graph Chain {\n        buffers {\n            \
         b0: [f32; 4096] = inout,\n            b1: [f32; 4096] = inout,\n            \
         b2: [f32; 4096] = inout,\n            b3: [f32; 4096] = inout,\n        }\n",
    );
    for i in 0..kernels {
        let (x, y) = (i % 4, (i + 1) % 4);
        let _ = writeln!(
            text,
            "        kernel k{i} = kernels::axpy(x: b{x}, y: b{y}, a: 1.0);"
        );
    }
    text.push_str("    }\n}\n");
    text
}

fn write_crate(dir: &Path, name: &str, graph: &str, workspace: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("src"))?;
    let runtime = workspace.join("graph-runtime");
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\ngraph-runtime = {{ path = {runtime:?} }}\n\n[workspace]\n\n\
         [profile.dev.package.naga]\nopt-level = 2\n[profile.dev.package.wgpu-core]\nopt-level = 2\n\
         [profile.dev.build-override]\nopt-level = 2\n"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest)?;
    std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock"))?;
    std::fs::write(dir.join("src/lib.rs"), graph)
}

#[test]
#[ignore = "writes the scale crates; run by hand to measure `cargo check`"]
fn write_scale_crates() -> std::io::Result<()> {
    let out = PathBuf::from(std::env::var("SCALE_DIR").unwrap_or_else(|_| "/tmp/scale".into()));
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf();
    for n in [5000, 2000] {
        let name = format!("chain{n}");
        write_crate(&out.join(&name), &name, &chain(n), &workspace)?;
    }
    println!("wrote {}", out.display());
    Ok(())
}
