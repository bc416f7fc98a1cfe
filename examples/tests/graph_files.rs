//! The shipped graph files: each loads, checks, draws and runs; the one with a host task computes what the
//! CPU computes; and a file that is not a graph is an error that says why, never a panic.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use graph_runtime::file::{self, LoadError};
use graph_runtime::ir::AccessMode;
use graph_runtime::pipeline::{Detail, describe_graph, describe_graph_with};
use graph_runtime::{BakedGraph, Error, Gpu, LIBRARY};

fn graphs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs")
}

fn shipped() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(graphs_dir())
        .expect("examples/graphs exists")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_file_loads_and_checks() -> Result<(), Error> {
    let files = shipped();
    assert!(files.len() >= 3, "{files:?}");
    for path in files {
        let (graph, children) = file::load_with_children(&path, &LIBRARY)?;
        // Saving and loading again gives the same graph.
        assert_eq!(
            file::from_json(&file::to_json(&graph))?,
            graph,
            "{}",
            path.display()
        );
        describe_graph_with(graph, &LIBRARY, &children)?;
    }
    Ok(())
}

#[test]
fn a_subgraph_file_nests_another_file_and_runs_it_first() -> Result<(), Error> {
    let path = graphs_dir().join("blurred_edges.json");
    // Without its children, the subgraph node is an error that says how to load them.
    let alone = describe_graph(file::load(&path)?, &LIBRARY).expect_err("the child is not given");
    assert!(
        alone
            .to_string()
            .contains("load graph files with `file::load_with_children`"),
        "{alone}"
    );
    let (graph, children) = file::load_with_children(&path, &LIBRARY)?;
    assert_eq!(children.keys().collect::<Vec<_>>(), ["blur.json"]);
    let desc = describe_graph_with(graph, &LIBRARY, &children)?;
    let flat = graph_runtime::pipeline::flatten(&desc).map_err(|e| Error::InvalidDescription {
        graph: desc.name.to_string(),
        reason: e.0,
    })?;
    let order: Vec<&str> = flat
        .topological_order
        .iter()
        .map(|&n| &*flat.nodes[n as usize].name)
        .collect();
    assert_eq!(
        order,
        [
            "blur",
            "blur.along_rows",
            "blur.along_columns",
            "sobel",
            "threshold"
        ]
    );
    Ok(())
}

#[test]
fn a_graph_file_that_includes_itself_is_an_error() {
    let dir = std::env::temp_dir().join(format!("graph-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("self.json");
    let text = r#"{"format": 1, "graph": {"name": "Loop", "nodes": [
        {"name": "again", "subgraph": {"graph": "self.json", "accesses": []}}]}}"#;
    std::fs::write(&path, text).expect("written");
    match file::load_with_children(&path, &LIBRARY) {
        Err(e @ LoadError::Subgraph { .. }) => {
            assert!(e.to_string().contains("the file includes itself"), "{e}")
        }
        other => panic!("expected a subgraph error, got {other:?}"),
    }
}

#[test]
fn the_drawing_says_why_each_edge_exists() -> Result<(), Error> {
    let desc = describe_graph(
        file::load(&graphs_dir().join("edge_detect.json"))?,
        &LIBRARY,
    )?;
    let dot = desc.to_dot(Detail::Plain);
    assert!(dot.starts_with("digraph \"EdgeDetect\" {"), "{dot}");
    for edge in [
        "n0 -> n1 [label=\"read-after-write of blur_tmp\", style=dashed];",
        "n1 -> n2 [label=\"read-after-write of blurred\", style=dashed];",
        "n2 -> n3 [label=\"read-after-write of gradient\", style=dashed];",
        "{ rank=same; n0; }",
        "b0 [label=\"image: [f32]\\ninput\"",
    ] {
        assert!(dot.contains(edge), "{edge} missing from\n{dot}");
    }
    assert!(!dot.contains("threads("), "plain DOT has no dispatch sizes");
    let verbose = desc.to_dot(Detail::Verbose);
    for detail in [
        "threads(params.width, params.height)",
        "@workgroup_size(8, 8, 1)",
        "image: read",
        "params { width: u32, height: u32, threshold: f32 }",
    ] {
        assert!(verbose.contains(detail), "{detail} missing from\n{verbose}");
    }
    Ok(())
}

#[test]
fn an_explicit_edge_is_drawn_as_explicit() -> Result<(), Error> {
    let mut b = graph_runtime::GraphBuilder::new("Two");
    b.inout("x", "f32").inout("y", "f32");
    b.fill("a", "x", "1.0").fill("b", "y", "2.0").edge("a", "b");
    let dot = b.build(&LIBRARY)?.to_dot(Detail::Plain);
    assert!(
        dot.contains("n0 -> n1 [label=\"explicit\", style=solid];"),
        "{dot}"
    );
    Ok(())
}

/// `Normalize` with its real host task: the norm summed on the host between two GPU partitions.
#[test]
fn the_normalize_file_with_its_host_task_computes_what_the_cpu_does() -> Result<(), Error> {
    let desc = describe_graph(file::load(&graphs_dir().join("normalize.json"))?, &LIBRARY)?;
    let gpu = Gpu::new_blocking()?;
    let len = 3000;
    let x: Vec<f32> = (0..len)
        .map(|i| ((i * 7919) % 1000) as f32 / 997.0 - 0.5)
        .collect();
    let x_buf = gpu.buffer_from_slice(&x)?;
    let poisoned = || gpu.buffer_from_slice(&vec![f32::NAN; len]);
    let (squares, y, y_copy) = (poisoned()?, poisoned()?, poisoned()?);
    let norm = gpu.buffer_from_slice(&[f32::NAN])?;
    let mut g = BakedGraph::bake(
        &gpu,
        desc,
        &[
            ("x", x_buf.as_any()),
            ("squares", squares.as_any()),
            ("norm", norm.as_any()),
            ("y", y.as_any()),
            ("y_copy", y_copy.as_any()),
        ],
    )?;
    g.on_host("total", |ctx| {
        let sum: f64 = ctx
            .read::<f32>("squares")?
            .iter()
            .map(|&s| f64::from(s))
            .sum();
        ctx.write("norm", &[sum.sqrt() as f32])
    })?;
    g.replay()?.wait()?;
    let want_norm = x.iter().map(|&v| f64::from(v * v)).sum::<f64>().sqrt() as f32;
    let got_norm = norm.read_blocking()?[0];
    assert!(
        (got_norm - want_norm).abs() <= 1e-5 * want_norm,
        "{got_norm} vs {want_norm}"
    );
    let y = y.read_blocking()?;
    for (i, (&got, &xi)) in y.iter().zip(&x).enumerate() {
        // One division by the GPU's own norm: exact up to the division's rounding.
        let want = xi / got_norm;
        assert!(
            (got - want).abs() <= f32::EPSILON * want.abs(),
            "y[{i}] = {got}, want {want}"
        );
    }
    assert_eq!(y_copy.read_blocking()?, y);
    Ok(())
}

#[test]
fn a_host_task_of_a_file_graph_is_named_by_its_node() -> Result<(), Error> {
    let desc = describe_graph(file::load(&graphs_dir().join("normalize.json"))?, &LIBRARY)?;
    let host = desc.nodes.iter().find(|n| n.name == "total").map(|n| &n.op);
    assert!(
        matches!(host, Some(graph_runtime::desc::OpDesc::Host { accesses }) if accesses[0].mode == AccessMode::Read)
    );
    Ok(())
}

#[track_caller]
fn load_error(text: &str) -> String {
    match file::from_json(text) {
        Ok(graph) => panic!("loaded {graph:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn files_that_are_not_graphs_are_errors_that_say_why() {
    assert!(
        load_error("").contains("line 1, column 0"),
        "{}",
        load_error("")
    );
    assert!(load_error("not json").contains("line 1"));
    assert_eq!(
        load_error(r#"{"format": 7, "graph": {}}"#),
        "the file is format 7, but this version reads formats 1 and 2"
    );
    let missing = load_error(r#"{"format": 1}"#);
    assert!(missing.contains("missing field `graph`"), "{missing}");
    let typo = load_error(r#"{"format": 1, "graph": {"name": "G", "bufers": []}}"#);
    assert!(typo.contains("unknown field `bufers`"), "{typo}");
    let size = load_error(
        r#"{"format": 1, "graph": {"name": "G", "nodes": [{"name": "k", "kernel": {"accesses": [],
            "source": {"wgsl": {"text": ""}}, "dispatch": {"threads": ["params.n +"]}}}]}}"#,
    );
    assert!(size.contains("size `params.n +`"), "{size}");
    let misspelt = load_error(
        r#"{"format": 1, "graph": {"name": "G", "nodes": [{"name": "c", "nmae": "x",
            "copy": {"src": "a", "dst": "b"}}]}}"#,
    );
    assert_eq!(
        misspelt,
        "node 0 (`c`): unknown key `nmae`: a node has a `name` and one of `kernel`, `copy`, `fill`, `upload`, \
         `readback`, `host`, `interop`, `empty`, `barrier`, `subgraph`"
    );
    let two_kinds = load_error(
        r#"{"format": 1, "graph": {"name": "G", "nodes": [{"name": "c",
            "copy": {"src": "a", "dst": "b"}, "fill": {"dst": "a", "value": "0.0"}}]}}"#,
    );
    assert!(
        two_kinds.contains("a node is one kind, but this one has"),
        "{two_kinds}"
    );
    let wgsl_file = load_error(
        r#"{"format": 1, "graph": {"name": "G", "nodes": [{"name": "k", "kernel": {"accesses": [],
            "source": {"wgsl": {"file": "k.wgsl"}}}}]}}"#,
    );
    assert!(
        wgsl_file.contains("relative to a graph file"),
        "{wgsl_file}"
    );
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let path = graphs_dir().join("no_such_graph.json");
    match file::load(&path) {
        Err(LoadError::Read { path: p, .. }) => assert!(p.ends_with("no_such_graph.json")),
        other => panic!("{other:?}"),
    }
}

/// A kernel from a `.wgsl` file through the builder describes the same as through the graph file.
#[test]
fn a_builder_kernel_from_a_wgsl_file_matches_the_graph_file()
-> Result<(), Box<dyn std::error::Error>> {
    use graph_runtime::KernelSpec;
    let loaded = describe_graph(file::load(&graphs_dir().join("normalize.json"))?, &LIBRARY)?;
    let mut b = graph_runtime::GraphBuilder::new("Normalize");
    b.input("x", "f32").output("squares", "f32");
    b.buffer("norm", "f32", graph_runtime::ir::Role::Output, Some(1));
    b.output("y", "f32").output("y_copy", "f32");
    let square = KernelSpec::wgsl_file(graphs_dir().join("normalize_square.wgsl"))?;
    b.kernel("square", square.read("x").write("squares"));
    b.host(
        "total",
        &[("squares", AccessMode::Read), ("norm", AccessMode::Write)],
    );
    let divide = graph_runtime::desc::OpDesc::clone(&loaded.nodes[2].op);
    let graph_runtime::desc::OpDesc::Kernel(divide) = divide else {
        return Err("node 2 is the divide kernel".into());
    };
    let divide = KernelSpec::wgsl(divide.source.to_string())
        .read("x")
        .read("norm")
        .write("y");
    b.kernel("divide", divide);
    b.copy("keep", "y", "y_copy");
    assert_eq!(b.build(&LIBRARY)?, loaded);
    Ok(())
}

/// An interop task built at run time and saved in a file: the same description, bound by name.
#[test]
fn an_interop_task_through_the_builder_and_a_file() -> Result<(), Box<dyn std::error::Error>> {
    let mut b = graph_runtime::GraphBuilder::new("Mirror");
    b.input("x", "f32").output("y", "f32");
    b.interop(
        "mirror",
        &[("x", AccessMode::Read), ("y", AccessMode::Write)],
    );
    let built = b.build(&LIBRARY)?;
    let text = file::to_json(b.graph());
    assert!(text.contains("\"interop\""), "{text}");
    let loaded = describe_graph(file::from_json(&text)?, &LIBRARY)?;
    assert_eq!(loaded, built);

    let gpu = Gpu::new_blocking()?;
    let xs: Vec<f32> = (0..500).map(|i| i as f32 * 0.5).collect();
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_from_slice(&[f32::NAN; 500])?;
    let mut g = BakedGraph::bake(&gpu, loaded, &[("x", x.as_any()), ("y", y.as_any())])?;
    g.on_interop("mirror", |ctx| {
        let (from, to) = (ctx.buffer("x")?, ctx.buffer("y")?);
        ctx.encoder()
            .copy_buffer_to_buffer(&from, 0, &to, 0, from.size());
        Ok(())
    })?;
    g.replay()?.wait()?;
    assert_eq!(y.read_blocking()?, xs);
    Ok(())
}

#[test]
fn a_graph_file_names_a_library_subgraph() -> Result<(), Error> {
    let text = r#"{"format": 1, "graph": {"name": "Total",
        "buffers": [{"name": "x", "elem": "f32", "role": "input"},
                    {"name": "t", "elem": "f32", "len": 1, "role": "output"}],
        "nodes": [{"name": "sum", "subgraph": {"graph": "kernels::reduce::sum", "accesses": [
            {"binding": "input", "buffer": "x", "mode": "read"},
            {"binding": "output", "buffer": "t", "mode": "write"}]}}]}}"#;
    let desc = describe_graph(file::from_json(text)?, &LIBRARY)?;
    let gpu = Gpu::new_blocking()?;
    let xs: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let x = gpu.buffer_from_slice(&xs)?;
    let t = gpu.buffer_from_slice(&[f32::NAN])?;
    BakedGraph::bake(&gpu, desc, &[("x", x.as_any()), ("t", t.as_any())])?.replay_blocking()?;
    assert_eq!(t.read_blocking()?, [499_500.0]);
    // A library subgraph that does not exist is a diagnostic naming the library's.
    let wrong = text.replace("reduce::sum", "reduce::summ");
    let errors = describe_graph(file::from_json(&wrong)?, &LIBRARY).expect_err("unknown");
    assert!(
        errors.to_string().contains("did you mean `reduce::sum`?"),
        "{errors}"
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// A graph file is data someone may send: what it says must not reach a shader as written (issue 19).

/// The payload of issue 19: a fill value that closed the value's function and declared one that wrote
/// element 99 of the filled buffer, outside the fill's range and outside what edge inference knows.
const PAYLOAD: &str =
    "1.0 + w(); } fn w() -> f32 { dst[99] = 42.0; return 0.0; } fn unused() -> f32 { return 0.0";

/// A graph file that fills `x[..10]` with `value`, as JSON text.
fn fill_file(value: &str) -> String {
    serde_json::json!({"format": 1, "graph": {"name": "Hostile",
        "buffers": [{"name": "x", "elem": "f32", "role": "output"}],
        "nodes": [{"name": "f", "fill": {"dst": "x", "value": value, "range": {"end": "10"}}}]}})
    .to_string()
}

/// A file written to a fresh temporary directory.
fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("graph-files-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("the file is written");
    path
}

/// `graph check path`: its exit code and what it printed on stderr.
fn graph_check(path: &Path) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_graph"))
        .args(["check", path.to_str().expect("a UTF-8 path")])
        .output()
        .expect("the graph binary starts");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `x` (128 elements, poisoned) after one replay of `desc`.
fn replayed(gpu: &Gpu, desc: graph_runtime::desc::GraphDesc) -> Result<Vec<f32>, Error> {
    let x = gpu.buffer_from_slice(&[f32::NAN; 128])?;
    let mut g = BakedGraph::bake(gpu, desc, &[("x", x.as_any())])?;
    g.replay()?.wait()?;
    x.read_blocking()
}

/// The issue's payload in a graph file is refused by `graph check` and by the loader's checks, so it never
/// runs; the same file with an honest value runs and leaves element 99 as it was. (Were the payload
/// accepted, the test runs it and says what it wrote.)
#[test]
fn the_payload_that_wrote_element_99_is_refused_and_never_runs() -> Result<(), Error> {
    let gpu = Gpu::new_blocking()?;
    let path = temp_file("payload.json", &fill_file(PAYLOAD));
    let words = "is not one WGSL expression: `;` is no part of an expression";
    match describe_graph(file::load(&path)?, &LIBRARY) {
        Err(errors) => {
            assert_eq!(errors.diagnostics.len(), 1, "{errors}");
            assert!(errors.to_string().contains(words), "{errors}");
        }
        Ok(desc) => {
            let x = replayed(&gpu, desc)?;
            panic!(
                "the payload was accepted; its replay wrote x[99] = {} and x[..10] = {:?}",
                x[99],
                &x[..10]
            );
        }
    }
    let (code, stderr) = graph_check(&path);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(words), "{stderr}");
    // At the value's line and column in the file, named in words.
    assert!(stderr.contains("payload.json:1:"), "{stderr}");
    assert!(stderr.contains("the value of node `f`"), "{stderr}");

    // The positive control: an honest value fills its range and nothing else.
    let honest = temp_file("honest.json", &fill_file("1.0"));
    let x = replayed(&gpu, describe_graph(file::load(&honest)?, &LIBRARY)?)?;
    assert_eq!(&x[..10], &[1.0; 10]);
    assert!(x[10..].iter().all(|v| v.is_nan()), "{x:?}");
    Ok(())
}

/// The same goes for an endless loop, a comment that swallows the rest of the function, and a name that
/// would end a line of the fused module or break its SPIR-V (a NUL): each is one error, exit 1.
#[test]
fn hostile_values_and_names_in_a_file_are_each_one_error() {
    let named = |node: &str, binding: &str| {
        serde_json::json!({"format": 1, "graph": {"name": "Hostile",
            "buffers": [{"name": "x", "elem": "f32", "role": "inout"}],
            "nodes": [{"name": node, "kernel": {
                "accesses": [{"binding": binding, "buffer": "x", "mode": "read_write"}],
                "source": {"wgsl": {"text": "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }\n}\n"}}}}]}})
        .to_string()
    };
    for (name, text, words) in [
        (
            "loop.json",
            fill_file(
                "1.0 + w(); } fn w() -> f32 { loop {} return 0.0; } fn unused() -> f32 { return 0.0",
            ),
            "is not one WGSL expression: `;` is no part of an expression",
        ),
        (
            "comment.json",
            fill_file("1.0 // }"),
            "of fill `f` is not one WGSL expression: it holds a comment",
        ),
        (
            "nul.json",
            named("k\0", "x"),
            "error: `k\\0` cannot name a node: a name must be an identifier",
        ),
        (
            "binding.json",
            named("k", "x: array<f32>; fn evil() {}"),
            "error: `x: array<f32>; fn evil() {}` cannot name a binding: kernels see it by name, so it must \
             be an identifier",
        ),
    ] {
        let path = temp_file(name, &text);
        let refused = describe_graph(file::load(&path).expect("it loads"), &LIBRARY)
            .expect_err("the checks refuse it");
        assert_eq!(refused.diagnostics.len(), 1, "{refused}");
        let (code, stderr) = graph_check(&path);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(stderr.contains(words), "{name}: {stderr}");
        assert!(!stderr.contains('\0'), "{name}: {stderr:?}");
    }
}
