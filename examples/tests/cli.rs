//! The `graph` binary on every shipped file, and on files it must refuse: exit 0 for a good graph, 1 for a
//! graph with mistakes (each printed with its location), 2 for a file that is not a graph.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn graph(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_graph"))
        .args(args)
        .output()
        .expect("the graph binary starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn shipped() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("examples/graphs exists")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

/// A graph file written to a fresh temporary directory.
fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("graph-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("the file is written");
    path
}

/// `FILE:LINE:COLUMN` of the first `needle` in `text` (1-based, columns in characters), as a diagnostic's
/// header gives it: `--> FILE:LINE:COLUMN`.
fn position(file: &Path, text: &str, needle: &str) -> String {
    let start = text.find(needle).expect("the needle is in the fixture");
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    format!("--> {}:{line}:{column}\n", file.display())
}

#[test]
fn check_dot_and_run_work_on_every_shipped_file() {
    for path in shipped() {
        let file = path.to_str().expect("a UTF-8 path");
        let check = graph(&["check", file]);
        assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
        assert!(text(&check.stdout).contains("is well-formed"));
        assert!(
            text(&check.stdout).contains("memory: "),
            "{}",
            text(&check.stdout)
        );

        let dot = graph(&["dot", file, "--verbose"]);
        assert_eq!(dot.status.code(), Some(0), "{}", text(&dot.stderr));
        assert!(text(&dot.stdout).starts_with("digraph"));

        // Run-time lengths default to 65536 elements, parameters to zero.
        let run = graph(&["run", file, "--replays", "2"]);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
        assert!(text(&run.stdout).contains("2 replays: median"));
    }
}

#[test]
fn run_takes_parameters_by_name_and_type() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs/edge_detect.json");
    let file = file.to_str().expect("a UTF-8 path");
    let run = graph(&[
        "run",
        file,
        "--replays",
        "1",
        "--len",
        "image=4096",
        "--len",
        "blur_tmp=4096",
        "--len",
        "blurred=4096",
        "--len",
        "gradient=4096",
        "--len",
        "edges=4096",
        "--param",
        "width=64",
        "--param",
        "height=64",
        "--param",
        "threshold=0.25",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert!(text(&run.stdout).contains("edges: 4096 elements of f32"));
    let wrong = graph(&["run", file, "--param", "width=0.5"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(
        text(&wrong.stderr).contains("not a `u32`"),
        "{}",
        text(&wrong.stderr)
    );
    let empty = graph(&["run", file, "--len", "image=0"]);
    assert_eq!(empty.status.code(), Some(1));
    assert!(
        text(&empty.stderr).contains("`0` is not a length"),
        "{}",
        text(&empty.stderr)
    );
    let normalize = Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs/normalize.json");
    let fixed = graph(&[
        "run",
        normalize.to_str().expect("a UTF-8 path"),
        "--len",
        "norm=5",
    ]);
    assert_eq!(fixed.status.code(), Some(1));
    assert!(
        text(&fixed.stderr).contains("`norm` has a fixed length"),
        "{}",
        text(&fixed.stderr)
    );
    let unknown = graph(&["run", file, "--param", "widht=5"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        text(&unknown.stderr).contains("has no parameter `widht`"),
        "{}",
        text(&unknown.stderr)
    );
}

const MISTAKES: &str = r#"{"format": 1, "graph": {"name": "Bad",
            "buffers": [{"name": "x", "elem": "f32", "role": "input"}],
            "nodes": [
              {"name": "k", "kernel": {"accesses": [{"buffer": "y", "mode": "read"}],
                "source": {"wgsl": {"text": "@compute @workgroup_size(64)\nfn main() {\n  let a = q;\n}"}}}},
              {"name": "k", "fill": {"dst": "x", "value": "0.0"}}
            ]}}"#;

#[test]
fn a_graph_with_mistakes_exits_1_with_each_mistake_located() {
    let path = temp_file("mistakes.json", MISTAKES);
    let check = graph(&["check", path.to_str().expect("a UTF-8 path")]);
    assert_eq!(check.status.code(), Some(1));
    let stderr = text(&check.stderr);
    for expected in [
        "error: unknown buffer `y`",
        "^^^ access `y` of node `k`",
        "error: duplicate node `k`",
        "which is an `input` of the graph",
    ] {
        assert!(
            stderr.contains(expected),
            "{expected:?} missing from\n{stderr}"
        );
    }
    // `dot` and `run` refuse it the same way.
    for command in ["dot", "run"] {
        let out = graph(&[command, path.to_str().expect("a UTF-8 path")]);
        assert_eq!(out.status.code(), Some(1), "{command}");
    }
}

#[test]
fn a_mistake_is_shown_at_its_line_and_column_of_the_file() {
    let path = temp_file("located.json", MISTAKES);
    let check = graph(&["check", path.to_str().expect("a UTF-8 path")]);
    let stderr = text(&check.stderr);
    // The unknown buffer where the access names it; the second `k` where the second node is named.
    for (message, needle) in [
        ("error: unknown buffer `y`", r#""y""#),
        ("error: duplicate node `k`", r#""k", "fill""#),
    ] {
        let located = format!("{message}\n  {}", position(&path, MISTAKES, needle));
        assert!(
            stderr.contains(&located),
            "{located:?} missing from\n{stderr}"
        );
    }
}

#[test]
fn a_wgsl_mistake_is_shown_at_its_line_and_column() {
    let json = r#"{"format": 1, "graph": {"name": "Bad",
            "buffers": [{"name": "x", "elem": "f32", "role": "inout"}],
            "nodes": [{"name": "k", "kernel": {"accesses": [{"buffer": "x", "mode": "read_write"}],
              "source": {"wgsl": {"text": "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    x[g.x] = q;\n}"}}}}]}}"#;
    let path = temp_file("wgsl.json", json);
    let check = graph(&["check", path.to_str().expect("a UTF-8 path")]);
    assert_eq!(check.status.code(), Some(1));
    let stderr = text(&check.stderr);
    // In the file, through the string's escapes; then the kernel's own line, unescaped.
    assert!(
        stderr.contains(&position(&path, json, "q;")),
        "{}{stderr}",
        position(&path, json, "q;")
    );
    assert!(
        stderr.contains("^ line 3, column 14 of the WGSL of node `k`"),
        "{stderr}"
    );
    assert!(stderr.contains("--> the WGSL of node `k`:3:14"), "{stderr}");
    assert!(stderr.contains("3 |     x[g.x] = q;"), "{stderr}");
}

#[test]
fn a_mistake_in_a_wgsl_file_is_shown_at_its_line_and_column() {
    let path = temp_file(
        "wgsl-file.json",
        r#"{"format": 1, "graph": {"name": "Bad",
            "buffers": [{"name": "x", "elem": "f32", "role": "inout"}],
            "nodes": [{"name": "k", "kernel": {"accesses": [{"buffer": "x", "mode": "read_write"}],
              "source": {"wgsl": {"file": "bad.wgsl"}}}}]}}"#,
    );
    let wgsl = "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    x[g.x] = q;\n}\n";
    let wgsl_path = path.with_file_name("bad.wgsl");
    std::fs::write(&wgsl_path, wgsl).expect("the file is written");
    let check = graph(&["check", path.to_str().expect("a UTF-8 path")]);
    assert_eq!(check.status.code(), Some(1));
    let stderr = text(&check.stderr);
    let located = format!(
        "error: WGSL error in kernel `k`: no definition in scope for identifier: `q` (unknown identifier)\n  {}",
        position(&wgsl_path, wgsl, "q;")
    );
    assert!(
        stderr.contains(&located),
        "{located:?} missing from\n{stderr}"
    );
    assert!(stderr.contains("3 |     x[g.x] = q;"), "{stderr}");
    // Once: the note the checks add for the macro, which cannot show the `.wgsl` file, is not repeated.
    assert_eq!(stderr.matches("x[g.x] = q;").count(), 1, "{stderr}");
}

#[test]
fn a_wgsl_source_written_as_an_array_is_shown_in_the_graph_file() {
    // serde reads a struct from an array of its fields too: `["text", "file"]`. The text is the graph
    // file's own, so a mistake in it is shown there, never under the name of a `.wgsl` file nobody read.
    let json = r#"{"format": 1, "graph": {"name": "Bad",
            "buffers": [{"name": "x", "elem": "f32", "role": "inout"}],
            "nodes": [{"name": "k", "kernel": {"accesses": [{"buffer": "x", "mode": "read_write"}],
              "source": {"wgsl": ["@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n    x[g.x] = q;\n}", "never-read.wgsl"]}}}]}}"#;
    let path = temp_file("wgsl-array.json", json);
    let check = graph(&["check", path.to_str().expect("a UTF-8 path")]);
    assert_eq!(check.status.code(), Some(1));
    let stderr = text(&check.stderr);
    assert!(
        stderr.contains(&position(&path, json, "q;")),
        "{}{stderr}",
        position(&path, json, "q;")
    );
    // As for `{"text": .., "file": ..}`, which `to_json` writes: the file is named, the text shown is this.
    assert!(!stderr.contains("--> never-read.wgsl"), "{stderr}");
}

#[test]
fn a_file_that_is_not_a_graph_exits_2() {
    let not_json = temp_file("not.json", "this is not json");
    let old = temp_file("old.json", r#"{"format": 0, "graph": {"name": "G"}}"#);
    for (path, words) in [
        (not_json, "line 1, column 2"),
        (old, "format 0, but this version reads formats 1 and 2"),
        (
            PathBuf::from("no/such/file.json"),
            "cannot read `no/such/file.json`",
        ),
    ] {
        let out = graph(&["check", path.to_str().expect("a UTF-8 path")]);
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        assert!(text(&out.stderr).contains(words), "{}", text(&out.stderr));
    }
}
