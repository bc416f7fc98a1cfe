//! Fuzzing of the front doors that take input from outside: graph files (`file::from_json`), declared graphs
//! (`ir::Graph` values, through their files) and the run-time builder, and hostile text (statements, braces,
//! comments, NUL, line breaks, very long strings) in every field that reaches a kernel's WGSL. Whatever the
//! input, the answer is a value (a `LoadError`, `GraphErrors` whose every diagnostic renders, or a
//! description), never a panic; and what is accepted is consistent: the description validates, its kernels
//! compose into modules naga accepts with nothing injected (names are identifiers, values one expression),
//! its sizes evaluate, it draws and survives serde, and the graph survives its file.
//!
//! Each test runs `GRAPH_FUZZ_CASES` cases when that variable is set (to crank it up or down), else its own
//! default; the four defaults add up to 105,000. Seeds are random: `PROPTEST_RNG_SEED=N` fixes one.

#![forbid(unsafe_code)]

mod common;

use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::desc::{DispatchDesc, GraphDesc, OpDesc};
use graph_core::dot::Detail;
use graph_core::file::{self, FORMATS_READ, LoadError};
use graph_core::ir::{
    Access, AccessMode, BlockKind, Buffer, DispatchSpec, EdgeMode, ElementRange, ExplicitEdge,
    Graph, Kernel, KernelArg, KernelSource, Node, NodeKind, Param, ParamsStorage, Role, SizeExpr,
    SizeOp, WorkgroupLimits,
};
use graph_core::library::Library;
use graph_core::names::is_identifier;
use graph_core::size::{SizeError, evaluate};
use graph_core::size_parse::parse_size;

use common::LIBRARY;
use graph_core::{GraphErrors, describe_graph};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------------------
// Running and counting.

/// The number of cases for a test: `GRAPH_FUZZ_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("GRAPH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// Runs `property` on `cases(default)` inputs from `strategy`, counting and printing the cases run. A failure
/// (a panic included, which proptest catches and shrinks) fails the test with the minimal input, shown both as
/// generated and by `show` (as the graph file it stands for).
fn fuzz<S: Strategy>(
    name: &str,
    default: u32,
    strategy: S,
    show: impl Fn(&S::Value) -> String,
    property: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let config = Config {
        cases: cases(default),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let count = AtomicUsize::new(0);
    let start = Instant::now();
    let result = runner.run(&strategy, |input| {
        count.fetch_add(1, Ordering::Relaxed);
        property(input)
    });
    println!(
        "{name}: {} cases in {:.1?}",
        count.load(Ordering::Relaxed),
        start.elapsed()
    );
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, input)) => {
            panic!(
                "{name}: {why}\nminimal input: {input:#?}\nas a graph file:\n{}",
                show(&input)
            )
        }
        Err(e) => panic!("{name}: {e}"),
    }
}

fn fail(message: impl Into<String>) -> TestCaseError {
    TestCaseError::fail(message.into())
}

fn library(with_scale: bool) -> &'static Library {
    if with_scale {
        &LIBRARY
    } else {
        &Library::EMPTY
    }
}

// ---------------------------------------------------------------------------------------------------------
// The pipeline every accepted input goes down, with its consistency checks.

/// A kernel that names a `.wgsl` file without holding its text: `from_json` refuses it, by design.
fn names_unread_file(graph: &Graph) -> bool {
    graph.nodes.iter().any(|n| {
        matches!(&n.kind, NodeKind::Kernel(Kernel {
            source: KernelSource::Wgsl { text, file: Some(_) }, ..
        }) if text.is_empty())
    })
}

/// The graph survives its own file: `from_json(to_json(g)) == g`.
fn check_file_round_trip(graph: &Graph) -> Result<(), TestCaseError> {
    let text = file::to_json(graph);
    match file::from_json(&text) {
        Ok(back) => {
            if &back != graph {
                return Err(fail(format!(
                    "the graph changed through its file:\n{graph:#?}\nbecame\n{back:#?}"
                )));
            }
        }
        Err(LoadError::NoBaseForWgslFile { .. }) if names_unread_file(graph) => {}
        Err(e) => {
            return Err(fail(format!(
                "`to_json` wrote a file that `from_json` refuses: {e}\n{text}"
            )));
        }
    }
    Ok(())
}

/// What a description must be: valid, as long as the graph, drawable, and the same after serde.
fn check_description(desc: &GraphDesc, graph: &Graph) -> Result<(), TestCaseError> {
    if let Err(e) = desc.validate(desc.params.size as usize) {
        return Err(fail(format!(
            "an accepted graph's description does not validate: {e}\n{graph:#?}"
        )));
    }
    prop_assert_eq!(desc.nodes.len(), graph.nodes.len());
    prop_assert_eq!(desc.buffers.len(), graph.buffers.len());
    for (d, n) in desc.nodes.iter().zip(&graph.nodes) {
        prop_assert_eq!(&*d.name, n.name.as_str());
    }
    for detail in [Detail::Plain, Detail::Verbose] {
        let dot = desc.to_dot(detail);
        prop_assert!(
            dot.starts_with("digraph ") && dot.ends_with("}\n"),
            "{}",
            dot
        );
    }
    // What the runtime does with it: compose each kernel's module (which naga accepts, as the checks did)
    // and evaluate its sizes (which may overflow, but are never malformed).
    let params = vec![1u8; desc.params.size as usize];
    let lens = vec![7u32; desc.buffers.len()];
    for node in desc.nodes.iter() {
        let OpDesc::Kernel(k) = &node.op else {
            continue;
        };
        let module = k.compose(&desc.params, desc.params.storage);
        if let Err(e) = graph_core::wgsl::validate(&module) {
            return Err(fail(format!(
                "kernel `{}` of an accepted graph does not validate: {}\n{module}",
                node.name, e.message
            )));
        }
        if let DispatchDesc::Threads(dims) | DispatchDesc::Workgroups(dims) = &k.dispatch {
            for dim in dims {
                let value = evaluate(&dim.steps, &params, &lens);
                prop_assert!(
                    value != Err(SizeError::Malformed),
                    "the size `{}` of `{}` is malformed",
                    dim.text,
                    node.name
                );
            }
        }
    }
    check_nothing_injected(desc)?;
    let json = serde_json::to_string(desc).map_err(|e| fail(format!("serialize: {e}")))?;
    let back: GraphDesc = serde_json::from_str(&json)
        .map_err(|e| fail(format!("the description does not read back: {e}\n{json}")))?;
    prop_assert_eq!(&back, desc);
    Ok(())
}

/// What an accepted graph puts into its kernels' modules is what it declares, and nothing more: every name is
/// an identifier, each binding declaration one buffer, and each value one expression: its function returns
/// it and does nothing else, and the module has the functions, variables and entry points it has with the
/// value replaced by a zero of its type.
fn check_nothing_injected(desc: &GraphDesc) -> Result<(), TestCaseError> {
    let names = std::iter::once(&*desc.name)
        .chain(desc.nodes.iter().map(|n| &*n.name))
        .chain(desc.buffers.iter().map(|b| &*b.name))
        .chain(desc.params.fields.iter().map(|f| &*f.name));
    for name in names {
        prop_assert!(is_identifier(name), "accepted the name {:?}", name);
    }
    let parse = |module: &str| {
        naga::front::wgsl::parse_str(module).map_err(|e| fail(format!("{}\n{module}", e.message())))
    };
    for node in desc.nodes.iter() {
        let OpDesc::Kernel(k) = &node.op else {
            continue;
        };
        let bindings = graph_core::wgsl::binding_names(&k.declarations);
        prop_assert_eq!(bindings.len(), k.bindings.len(), "{}", k.declarations);
        for b in &bindings {
            prop_assert!(is_identifier(b), "the binding {:?}", b);
        }
        let module = parse(&k.compose(&desc.params, desc.params.storage))?;
        let mut zeroed = k.clone();
        for arg in zeroed.args.to_mut() {
            let read = graph_core::wgsl::value_expression(&arg.value);
            prop_assert_eq!(
                read.as_deref(),
                Ok(&*arg.value),
                "the value of `{}` went in as written",
                node.name
            );
            arg.value = format!("{}()", arg.ty).into();
        }
        let reference = parse(&zeroed.compose(&desc.params, desc.params.storage))?;
        prop_assert_eq!(
            (
                module.functions.len(),
                module.global_variables.len(),
                module.constants.len(),
                module.overrides.len(),
                module.entry_points.len()
            ),
            (
                reference.functions.len(),
                reference.global_variables.len(),
                reference.constants.len(),
                reference.overrides.len(),
                reference.entry_points.len()
            ),
            "kernel `{}` declares more than its values' zeros would",
            node.name
        );
        for arg in k.args.iter() {
            let (_, function) = module
                .functions
                .iter()
                .find(|(_, f)| f.name.as_deref() == Some(&*arg.name))
                .ok_or_else(|| fail(format!("no function for `{}`", arg.name)))?;
            let mut returns = 0;
            for statement in function.body.iter() {
                match statement {
                    naga::Statement::Emit(_) => {}
                    naga::Statement::Return { value: Some(_) } => returns += 1,
                    other => {
                        return Err(fail(format!(
                            "the value of `{}` does more than return: {other:?}",
                            arg.name
                        )));
                    }
                }
            }
            prop_assert_eq!(returns, 1, "the value of `{}` returns once", arg.name);
        }
    }
    Ok(())
}

/// Every diagnostic renders, once each, with its message.
fn check_errors(errors: &GraphErrors) -> Result<(), TestCaseError> {
    prop_assert!(
        !errors.diagnostics.is_empty(),
        "an error with no diagnostic"
    );
    let rendered = errors.rendered();
    prop_assert_eq!(rendered.len(), errors.diagnostics.len());
    // What a terminal would not show as written is escaped in our words (a snippet shows the user's text).
    for d in &errors.diagnostics {
        for words in std::iter::once(&d.message).chain(&d.help) {
            prop_assert!(!words.contains(['\0', '\n', '\r']), "{:?}", words);
        }
    }
    for (text, d) in rendered.iter().zip(&errors.diagnostics) {
        prop_assert!(
            text.starts_with("error: ") && text.contains(&d.message),
            "{}",
            text
        );
    }
    let whole = errors.to_string();
    prop_assert!(whole.starts_with("graph `"), "{}", whole);
    Ok(())
}

/// Every diagnostic of a file's graph renders pointing into the file, whatever the file holds.
fn check_errors_in_file(errors: &GraphErrors, text: &str) -> Result<(), TestCaseError> {
    let source = file::SourceFile::new(std::path::Path::new("fuzz.json"), text);
    let rendered = errors.rendered_in(&source);
    prop_assert_eq!(rendered.len(), errors.diagnostics.len());
    for (text, d) in rendered.iter().zip(&errors.diagnostics) {
        let head = format!("error: {}\n", d.message);
        prop_assert!(
            text.starts_with(&head) && text.contains("--> fuzz.json:"),
            "{}",
            text
        );
    }
    Ok(())
}

/// Checks and describes `graph` (loaded from `text`, if from a file), then holds the answer to its promises.
/// Returns whether it was accepted.
fn check_graph(
    graph: &Graph,
    library: &Library,
    text: Option<&str>,
) -> Result<bool, TestCaseError> {
    check_file_round_trip(graph)?;
    match describe_graph(graph.clone(), library) {
        Ok(desc) => {
            check_description(&desc, graph)?;
            Ok(true)
        }
        Err(errors) => {
            prop_assert_eq!(&*errors.graph, graph);
            check_errors(&errors)?;
            if let Some(text) = text {
                check_errors_in_file(&errors, text)?;
            }
            Ok(false)
        }
    }
}

/// A file's text down the whole pipeline: a `LoadError`, or a graph through `check_graph`. Returns `None`
/// when it did not load, else whether the graph was accepted.
fn check_text(text: &str, library: &Library) -> Result<Option<bool>, TestCaseError> {
    match file::from_json(text) {
        Ok(graph) => check_graph(&graph, library, Some(text)).map(Some),
        Err(e) => {
            let message = e.to_string();
            prop_assert!(!message.is_empty());
            match e {
                LoadError::Read { .. } | LoadError::Subgraph { .. } => {
                    return Err(fail(format!("`from_json` read a file: {message}")));
                }
                LoadError::Format { found } => prop_assert!(!FORMATS_READ.contains(&found)),
                LoadError::Json { .. }
                | LoadError::Node { .. }
                | LoadError::NoBaseForWgslFile { .. } => {}
            }
            Ok(None)
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Shared pools: names, types, WGSL, sizes.

/// Names that are WGSL identifiers (and so can stand in a size expression), some reserved by WGSL or the
/// graph (`fn`, `params`, `__pad`, `GraphParams`), some the names of standard buffers, parameters and nodes.
const IDENTS: &[&str] = &[
    "x",
    "y",
    "tmp",
    "out",
    "v",
    "n",
    "a",
    "m",
    "n0",
    "n1",
    "main",
    "fn",
    "params",
    "__pad",
    "GraphParams",
    "len",
    "dst",
    "data",
    "nope",
];

/// Names that are not identifiers at all.
const ODD_NAMES: &[&str] = &[
    "",
    "a b",
    "1x",
    "ŷ",
    "x.len()",
    "params.n",
    "\"",
    "日本",
    // Hostile: text that would change a module or a message were it pasted (see `HOSTILE`).
    "x\0",
    "x\n",
    "x: array<f32>; fn evil() {}",
    "x // }",
    "x\u{2028}",
    "x\u{202e}",
];

fn any_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(IDENTS),
        1 => prop::sample::select(ODD_NAMES),
    ]
    .prop_map(String::from)
}

const TYPES: &[&str] = &[
    "f32",
    "i32",
    "u32",
    "vec2<f32>",
    "vec4<u32>",
    "vec4f",
    "vec2 < i32 >",
    "vec3<f32>",
    "vec3u",
    "f64",
    "bool",
    "f16",
    "u64",
    "",
    "vec5<f32>",
    "array<f32>",
    "vec4<vec4<f32>>",
    "ŷ",
];

fn any_type() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(&TYPES[..5]),
        2 => prop::sample::select(TYPES),
    ]
    .prop_map(String::from)
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![
        Just(Role::Input),
        Just(Role::Output),
        Just(Role::InOut),
        Just(Role::Owned)
    ]
}

fn mode() -> impl Strategy<Value = AccessMode> {
    prop_oneof![
        Just(AccessMode::Read),
        Just(AccessMode::Write),
        Just(AccessMode::ReadWrite)
    ]
}

fn length() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        3 => Just(None),
        3 => Just(Some(1024)),
        1 => Just(Some(0)),
        1 => Just(Some(1)),
        1 => Just(Some(u64::from(u32::MAX))),
        1 => Just(Some(u64::from(u32::MAX) + 1)),
        1 => Just(Some(u64::MAX)),
        1 => any::<u64>().prop_map(Some),
    ]
}

/// Standard declarations that the WGSL pool is written against: with them, many graphs are accepted.
fn standard_params() -> Vec<Param> {
    [("n", "u32"), ("a", "f32"), ("m", "vec2<u32>")]
        .into_iter()
        .map(|(name, ty)| Param {
            name: name.into(),
            ty: ty.into(),
        })
        .collect()
}

fn standard_buffers() -> Vec<Buffer> {
    [
        ("x", "f32", Role::Input, None),
        ("y", "f32", Role::InOut, None),
        ("tmp", "f32", Role::Owned, Some(1024)),
        ("out", "f32", Role::Output, None),
        ("v", "vec4<f32>", Role::InOut, None),
    ]
    .into_iter()
    .map(|(name, elem, role, len)| Buffer {
        name: name.into(),
        elem: elem.into(),
        len,
        role,
    })
    .collect()
}

/// One kernel of the pool: its WGSL and the accesses that go with it.
struct Snippet {
    text: &'static str,
    accesses: &'static [(&'static str, AccessMode)],
    /// The snippet validates (with the standard declarations and its accesses).
    valid: bool,
}

use AccessMode::{Read, ReadWrite, Write};

const SNIPPETS: &[Snippet] = &[
    Snippet {
        text: "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    let i = gid.x;\n    if (i < arrayLength(&y)) {\n        y[i] = 2.0 * x[i];\n    }\n}\n",
        accesses: &[("x", Read), ("y", Write)],
        valid: true,
    },
    Snippet {
        text: "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\nlet i = gid.x;\nif (i < params.n) { y[i] = params.a * x[i] + y[i]; }\n}",
        accesses: &[("x", Read), ("y", ReadWrite)],
        valid: true,
    },
    Snippet {
        text: "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    if (gid.x < arrayLength(&tmp)) { tmp[gid.x] = x[gid.x] + 1.0; }\n}\n",
        accesses: &[("x", Read), ("tmp", Write)],
        valid: true,
    },
    Snippet {
        text: "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    if (gid.x < arrayLength(&out)) { out[gid.x] = tmp[gid.x] * tmp[gid.x]; }\n}\n",
        accesses: &[("tmp", Read), ("out", Write)],
        valid: true,
    },
    Snippet {
        text: "@compute @workgroup_size(8, 8)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    let i = gid.x + gid.y * params.m.x;\n    if (i < arrayLength(&v)) { v[i] = v[i] * vec4<f32>(params.a); }\n}\n",
        accesses: &[("v", ReadWrite)],
        valid: true,
    },
    Snippet {
        text: "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    out[gid.x] = 0.0;\n}\n@compute @workgroup_size(8, 8)\nfn other(@builtin(global_invocation_id) gid: vec3<u32>) {\n    out[gid.x] = 1.0;\n}\n",
        accesses: &[("out", Write)],
        valid: false,
    },
    Snippet {
        text: "@compute @workgroup_size(1024)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    out[gid.x] = 0.0;\n}\n",
        accesses: &[("out", Write)],
        valid: false,
    },
    Snippet {
        text: "override W: u32 = 64;\n@compute @workgroup_size(W)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    out[gid.x] = 0.0;\n}\n",
        accesses: &[("out", Write)],
        valid: false,
    },
    Snippet {
        text: "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    x[gid.x] = 1.0;\n    out[gid.x] = x[gid.x];\n}\n",
        accesses: &[("x", Read), ("out", Write)],
        valid: false,
    },
    Snippet {
        text: "@group(0) @binding(5) var<storage, read_write> z: array<f32>;\n@compute @workgroup_size(64)\nfn main() {\n    z[0] = 1.0;\n    out[0] = 0.0;\n}\n",
        accesses: &[("out", Write)],
        valid: false,
    },
    Snippet {
        text: "// ŷ ← ½ · x\n@compute @workgroup_size(64)\nfn main() {\n\tlet ŷ = 1.0 +;\n}",
        accesses: &[],
        valid: false,
    },
    Snippet {
        text: "fn main( {",
        accesses: &[],
        valid: false,
    },
    Snippet {
        text: "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    out[gid.x] = f32(params.nope);\n}\n",
        accesses: &[("out", Write)],
        valid: false,
    },
    Snippet {
        text: "@compute @workgroup_size(0)\nfn main() {}\n",
        accesses: &[],
        valid: false,
    },
    Snippet {
        text: "@compute @workgroup_size(64)\r\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\r\n    out[gid.x] = undefined;\r\n}\r\n",
        accesses: &[("out", Write)],
        valid: false,
    },
    Snippet {
        text: "@vertex\nfn vs() -> @builtin(position) vec4<f32> {\n    return vec4<f32>();\n}\n",
        accesses: &[],
        valid: false,
    },
    Snippet {
        text: "",
        accesses: &[],
        valid: false,
    },
    Snippet {
        text: "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    out[gid.x] = 1i;\n}\n",
        accesses: &[("out", Write)],
        valid: false,
    },
    Snippet {
        text: "@compute @workgroup_size(1)\nfn main() {}\n",
        accesses: &[],
        valid: false,
    },
    Snippet {
        text: "@compute @workgroup_size(4, 4, 4)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n\tlet i = gid.x + gid.y * 4u + gid.z * 16u;\n\tif (i < arrayLength(&y)) { y[i] = f32(params.m.y) + x[i]; }\n}\n",
        accesses: &[("x", Read), ("y", Write)],
        valid: true,
    },
    Snippet {
        text: "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    if (gid.x < arrayLength(&y)) { y[gid.x] = y[gid.x] + 1.0; }\n}\n@compute @workgroup_size(32)\nfn second(@builtin(global_invocation_id) gid: vec3<u32>) {\n    if (gid.x < arrayLength(&y)) { y[gid.x] = 0.0; }\n}\n",
        accesses: &[("y", ReadWrite)],
        valid: true,
    },
];

/// Snippets by validity: naga on a valid module is the slow part of a case, so valid ones are rarer.
fn snippet_index() -> impl Strategy<Value = usize> {
    let valid: Vec<usize> = (0..SNIPPETS.len()).filter(|&i| SNIPPETS[i].valid).collect();
    let invalid: Vec<usize> = (0..SNIPPETS.len())
        .filter(|&i| !SNIPPETS[i].valid)
        .collect();
    prop_oneof![
        2 => prop::sample::select(valid),
        3 => prop::sample::select(invalid),
    ]
}

/// A cut out of a text, to break it anywhere: `(start, length)` as fractions of the text, in characters.
fn cut(text: &str, start: Index, len: u8) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = start.index(chars.len() + 1);
    let end = (at + usize::from(len)).min(chars.len());
    chars[..at].iter().chain(&chars[end..]).collect()
}

const FILL_VALUES: &[&str] = &[
    "0.0",
    "0u",
    "0i",
    "1",
    "params.a",
    "params.n",
    "params.nope",
    "vec4<f32>(0.0)",
    "vec2<f32>(0.0)",
    "1.0 +",
    "params.",
    "}",
    "ŷ",
    "",
    "0.0; } fn evil() {",
    PAYLOAD,
    "0.0 // }",
    "0.0 /* } */",
    "0.0\0",
    "loop {}",
    "arrayLength(&dst)",
    "max(params.a,\n 1.0)",
];

const LIBRARY_PATHS: &[&str] = &[
    "scale",
    "scale",
    "scale",
    "sclae",
    "nope",
    "",
    "kernels::scale",
];
const LIBRARY_BINDINGS: &[&str] = &["data", "data", "data", "dat", "x", ""];
const LIBRARY_ARGS: &[(&str, &str)] = &[
    ("alpha", "2.0"),
    ("alpha", "2.0"),
    ("alpha", "params.a"),
    ("alpha", "params.n"),
    ("alpha", "1u"),
    ("alpha", "params.nope"),
    ("beta", "1.0"),
    ("alpha", "}"),
    ("alpha", ""),
    ("alpha", "1.0; } fn alpha2() -> f32 { return 1.0;"),
    ("alpha", PAYLOAD),
    ("alpha", "alpha()"),
    ("alpha", "1.0 /* */"),
    ("alpha", "-params.a\r\n"),
];

const ENTRIES: &[&str] = &[
    "main", "other", "second", "nope", "", "vs", "main\0", "main\n", "main()",
];

fn entry() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        4 => Just(None),
        1 => prop::sample::select(ENTRIES).prop_map(|e| Some(e.to_string())),
    ]
}

fn size_op() -> impl Strategy<Value = SizeOp> {
    prop_oneof![
        Just(SizeOp::Add),
        Just(SizeOp::Sub),
        Just(SizeOp::Mul),
        Just(SizeOp::Div),
        Just(SizeOp::DivCeil),
        Just(SizeOp::Min),
        Just(SizeOp::Max),
    ]
}

fn literal() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0),
        Just(1),
        Just(2),
        Just(63),
        Just(64),
        Just(u64::from(u32::MAX)),
        Just(u64::from(u32::MAX) + 1),
        Just(u64::MAX),
        any::<u64>(),
        0..100_000u64,
    ]
}

/// Size names that print and parse back: identifiers; components `x` to `w`. (Other names do not survive a
/// file, even in an accepted graph: see the ignored tests at the end.)
fn size_leaf() -> impl Strategy<Value = SizeExpr> {
    let name = || prop::sample::select(IDENTS).prop_map(String::from);
    prop_oneof![
        2 => literal().prop_map(SizeExpr::Literal),
        2 => (name(), prop::option::of(0..4u8))
            .prop_map(|(name, component)| SizeExpr::Param { name, component }),
        1 => name().prop_map(SizeExpr::Len),
    ]
}

/// Size trees of moderate depth, and long left-leaning chains (deep trees with a shallow stack).
fn size_expr() -> impl Strategy<Value = SizeExpr> {
    let tree = size_leaf().prop_recursive(6, 24, 2, |inner| {
        (size_op(), inner.clone(), inner).prop_map(|(op, l, r)| SizeExpr::binary(op, l, r))
    });
    prop_oneof![
        8 => tree,
        // Under 64 links: deeper chains do not survive a file (see the ignored test at the end).
        1 => (prop::collection::vec((size_op(), size_leaf()), 1..60), size_leaf()).prop_map(
            |(links, first)| {
                links
                    .into_iter()
                    .fold(first, |acc, (op, leaf)| SizeExpr::binary(op, acc, leaf))
            }
        ),
    ]
}

fn dispatch() -> impl Strategy<Value = DispatchSpec> {
    let dims = || prop::collection::vec(size_expr(), 0..5);
    prop_oneof![
        3 => Just(DispatchSpec::Auto),
        2 => dims().prop_map(DispatchSpec::Threads),
        1 => dims().prop_map(DispatchSpec::Workgroups),
    ]
}

// ---------------------------------------------------------------------------------------------------------
// 1. Loader fuzz: the shipped graph files (and a few written here), mutated as JSON values and as text.

const EDGE_DETECT: &str = include_str!("../../examples/graphs/edge_detect.json");
const NORMALIZE: &str = include_str!("../../examples/graphs/normalize.json");
const SAXPY: &str = include_str!("../../examples/graphs/saxpy.json");

/// Every node kind, every graph-level option, a `.wgsl` file name with its text, workgroups and an entry.
const EVERYTHING: &str = r#"{ "format": 1, "graph": {
  "name": "Everything",
  "params": [{ "name": "n", "type": "u32" }, { "name": "a", "type": "f32" }, { "name": "m", "type": "vec2<u32>" }],
  "buffers": [
    { "name": "x", "elem": "f32", "role": "input" },
    { "name": "y", "elem": "f32", "role": "inout" },
    { "name": "tmp", "elem": "f32", "len": 1024, "role": "owned" },
    { "name": "out", "elem": "f32", "role": "output" },
    { "name": "v", "elem": "vec4<f32>", "role": "inout" }
  ],
  "nodes": [
    { "name": "clear", "fill": { "dst": "tmp", "value": "0.0" } },
    { "name": "first", "kernel": {
        "accesses": [{ "buffer": "x", "mode": "read" }, { "buffer": "tmp", "mode": "read_write" }],
        "source": { "wgsl": { "file": "first.wgsl", "text": "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    if (gid.x < arrayLength(&tmp)) { tmp[gid.x] = tmp[gid.x] + x[gid.x]; }\n}\n@compute @workgroup_size(8, 8)\nfn other(@builtin(global_invocation_id) gid: vec3<u32>) {\n    tmp[gid.x] = 0.0;\n}\n" } },
        "entry": "main",
        "dispatch": { "workgroups": ["params.n.div_ceil(64)", "1"] } } },
    { "name": "keep", "copy": { "src": "tmp", "dst": "out" } },
    { "name": "look", "host": { "accesses": [{ "buffer": "out", "mode": "read" }, { "binding": "v", "buffer": "v", "mode": "read_write" }] } },
    { "name": "twice", "kernel": {
        "accesses": [{ "binding": "data", "buffer": "y", "mode": "read" }],
        "source": { "library": "scale" },
        "args": [{ "name": "alpha", "value": "params.a" }] } },
    { "name": "wide", "kernel": {
        "accesses": [{ "buffer": "v", "mode": "read_write" }],
        "source": { "wgsl": { "text": "@compute @workgroup_size(8, 8)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    let i = gid.x + gid.y * params.m.x;\n    if (i < arrayLength(&v)) { v[i] = v[i] * vec4<f32>(params.a); }\n}\n" } },
        "dispatch": { "threads": ["params.m.x", "params.m.y", "(v.len() - 1) / 64 + 1"] } } }
  ],
  "edges": [{ "from": "keep", "to": "look" }, { "from": "clear", "to": "twice" }],
  "edge_mode": "inferred",
  "params_storage": "uniform",
  "workgroup_limits": "device"
} }"#;

/// Explicit edges only, sized by lengths, with a race and a cycle for the mutations to mend or keep.
const EXPLICIT: &str = r#"{"format":1,"graph":{"name":"Explicit","buffers":[{"name":"a","elem":"u32","len":16,"role":"owned"},{"name":"b","elem":"u32","role":"output"}],"nodes":[{"name":"init","fill":{"dst":"a","value":"7u"}},{"name":"move","copy":{"src":"a","dst":"b"}},{"name":"bump","kernel":{"accesses":[{"buffer":"b","mode":"read_write"}],"source":{"wgsl":{"text":"@compute @workgroup_size(16)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    if (gid.x < arrayLength(&b)) { b[gid.x] += 1u; }\n}\n"}},"dispatch":{"threads":["b.len().min(4294967295)"]}}}],"edges":[{"from":"init","to":"move"},{"from":"move","to":"bump"},{"from":"bump","to":"bump"}],"edge_mode":"explicit_only"}}"#;

const SEEDS: &[&str] = &[EDGE_DETECT, NORMALIZE, SAXPY, EVERYTHING, EXPLICIT];

/// Values to put anywhere in a file.
static VALUES: LazyLock<Vec<Value>> = LazyLock::new(|| {
    let deep = |depth: usize| (0..depth).fold(json!(1), |inner, _| Value::Array(vec![inner]));
    let mut values = vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(2),
        json!(-1),
        json!(4_294_967_295u64),
        json!(4_294_967_296u64),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1.5),
        json!(1e300),
        json!([]),
        json!({}),
        json!([1, 2, 3, 4]),
        json!({ "wgsl": { "text": "" } }),
        json!({ "wgsl": { "file": "k.wgsl" } }),
        json!({ "wgsl": { "file": "k.wgsl", "text": "@compute @workgroup_size(1) fn main() {}" } }),
        json!({ "library": "scale" }),
        json!({ "library": "nope" }),
        json!({ "threads": ["params.n", "1", "1", "1"] }),
        json!({ "workgroups": [] }),
        json!({ "threads": "params.n" }),
        json!(["params.n.div_ceil(0)"]),
        json!({ "buffer": "x", "mode": "read" }),
        json!({ "binding": "", "buffer": "y", "mode": "write" }),
        json!({ "name": "extra", "copy": { "src": "x", "dst": "y" } }),
        json!({ "name": "extra", "fill": { "dst": "y", "value": "0.0" } }),
        json!({ "name": "extra", "host": { "accesses": [] } }),
        json!({ "name": "extra", "copy": { "src": "x", "dst": "y" }, "fill": { "dst": "y", "value": "0.0" } }),
        json!({ "from": "x", "to": "x" }),
        json!({ "name": "z", "elem": "f32", "role": "owned" }),
        json!({ "name": "p", "type": "bool" }),
        deep(20),
        deep(200),
        json!("a".repeat(5000)),
        json!("ŷ ← ½ · 日本語 \u{1F600}"),
        json!(
            "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
        ),
        json!(format!("params.n{}", " + 1".repeat(70))),
    ];
    values.extend(
        [
            "",
            "f32",
            "i32",
            "u32",
            "vec2<f32>",
            "vec3<f32>",
            "vec4<f32>",
            "vec4u",
            "f64",
            "bool",
            "read",
            "write",
            "read_write",
            "input",
            "output",
            "inout",
            "owned",
            "inferred",
            "explicit_only",
            "immediates",
            "uniform",
            "portable",
            "device",
            "params.n",
            "params.n.div_ceil(0)",
            "params.m.x",
            "params.m.q",
            "params.a",
            "x.len()",
            "params.width * params.height",
            "4294967296",
            "18446744073709551616",
            "0",
            "params.",
            "1 +",
            ")",
            "x",
            "y",
            "image",
            "edges",
            "squares",
            "norm",
            "main",
            "other",
            "scale",
            "data",
            "alpha",
            "kernels::scale",
            "params",
            "fn",
            "__pad",
            "GraphParams",
            "0.0",
            "7u",
            "}",
            "@compute @workgroup_size(64) fn main() {}",
        ]
        .into_iter()
        .map(|s| json!(s)),
    );
    values
});

const KEYS: &[&str] = &[
    "format",
    "graph",
    "name",
    "params",
    "buffers",
    "nodes",
    "edges",
    "edge_mode",
    "params_storage",
    "workgroup_limits",
    "type",
    "elem",
    "len",
    "role",
    "kernel",
    "copy",
    "fill",
    "host",
    "accesses",
    "binding",
    "buffer",
    "mode",
    "source",
    "wgsl",
    "text",
    "file",
    "library",
    "entry",
    "dispatch",
    "threads",
    "workgroups",
    "args",
    "value",
    "src",
    "dst",
    "from",
    "to",
    "unknown",
];

/// Pieces of text to put into strings (WGSL, sizes, names) and into the file's text.
const STRING_TOKENS: &[&str] = &[
    "}",
    "{",
    "(",
    ")",
    ";",
    ",",
    ".",
    "ŷ",
    "日本",
    "\t",
    "\r\n",
    "\n",
    "\u{0}",
    "params.n",
    "params.nope",
    "params.",
    "@workgroup_size(1024)",
    "@workgroup_size(0)",
    "@compute",
    "fn ",
    "x",
    "y[0] = 1.0;",
    "override",
    "/*",
    "//",
    "\"",
    "\\",
    "+ 1",
    ".div_ceil(0)",
    ".len()",
    "0",
    "4294967296",
    "u32",
    "f32",
    "vec3<f32>",
];

const TEXT_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    ":",
    "null",
    "-1",
    "4294967296",
    "18446744073709551616",
    "1e999",
    "true",
    "\"f32\"",
    "\"vec3<f32>\"",
    "\"read_write\"",
    "\"params.n.div_ceil(0)\"",
    "\"ŷ←½\"",
    "\\",
    "\"format\": 2,",
    "\u{FEFF}",
    "\u{0}",
];

static TEXT_TOKENS_LONG: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut tokens: Vec<String> = TEXT_TOKENS.iter().map(|t| t.to_string()).collect();
    tokens.push(format!("\"{}\"", "long".repeat(2000)));
    tokens.push("[".repeat(300));
    tokens.push(format!("{}1{}", "[".repeat(100), "]".repeat(100)));
    tokens.push(format!("{}1{}", "[".repeat(130), "]".repeat(130)));
    tokens
});

/// A change to the file as a JSON value. Places are picked by preorder index among the document's values.
#[derive(Debug, Clone)]
enum ValueMutation {
    Replace(Index, Index),
    /// Replace one value with a copy of another of the same document (a node where a buffer goes..).
    Transplant(Index, Index),
    /// An object loses a key; an array an element.
    Remove(Index, Index),
    /// An object gains a key; an array an element.
    Insert(Index, Index, Index),
    /// An array's element is repeated (duplicate names).
    Repeat(Index, Index),
    /// A string is edited: characters cut out and a token put in.
    EditString(Index, Index, u8, Option<Index>),
}

fn value_mutation() -> impl Strategy<Value = ValueMutation> {
    let i = any::<Index>;
    prop_oneof![
        3 => (i(), i()).prop_map(|(a, b)| ValueMutation::Replace(a, b)),
        1 => (i(), i()).prop_map(|(a, b)| ValueMutation::Transplant(a, b)),
        2 => (i(), i()).prop_map(|(a, b)| ValueMutation::Remove(a, b)),
        2 => (i(), i(), i()).prop_map(|(a, b, c)| ValueMutation::Insert(a, b, c)),
        1 => (i(), i()).prop_map(|(a, b)| ValueMutation::Repeat(a, b)),
        3 => (i(), i(), 0..12u8, prop::option::of(i()))
            .prop_map(|(a, b, c, d)| ValueMutation::EditString(a, b, c, d)),
    ]
}

/// A change to the file's bytes.
#[derive(Debug, Clone)]
enum TextMutation {
    Delete(Index, u16),
    Duplicate(Index, u16, Index),
    Insert(Index, Index),
}

fn text_mutation() -> impl Strategy<Value = TextMutation> {
    let i = any::<Index>;
    prop_oneof![
        (i(), 1..64u16).prop_map(|(a, n)| TextMutation::Delete(a, n)),
        (i(), 1..256u16, i()).prop_map(|(a, n, b)| TextMutation::Duplicate(a, n, b)),
        (i(), i()).prop_map(|(a, b)| TextMutation::Insert(a, b)),
    ]
}

fn count_values(v: &Value) -> usize {
    1 + match v {
        Value::Array(items) => items.iter().map(count_values).sum(),
        Value::Object(map) => map.values().map(count_values).sum(),
        _ => 0,
    }
}

/// The `k`th value of `v` in preorder.
fn nth_value<'a>(v: &'a mut Value, k: &mut usize) -> Option<&'a mut Value> {
    if *k == 0 {
        return Some(v);
    }
    *k -= 1;
    match v {
        Value::Array(items) => items.iter_mut().find_map(|item| nth_value(item, k)),
        Value::Object(map) => map.values_mut().find_map(|item| nth_value(item, k)),
        _ => None,
    }
}

fn value_at(doc: &mut Value, at: Index) -> Option<&mut Value> {
    let mut k = at.index(count_values(doc));
    nth_value(doc, &mut k)
}

fn edit_string(text: &str, at: Index, cut_len: u8, token: Option<Index>) -> String {
    let chars: Vec<char> = text.chars().collect();
    let start = at.index(chars.len() + 1);
    let end = (start + usize::from(cut_len)).min(chars.len());
    let mut out: String = chars[..start].iter().collect();
    if let Some(t) = token {
        let token: &&str = t.get(STRING_TOKENS);
        out.push_str(token);
    }
    out.extend(&chars[end..]);
    out
}

fn mutate_value(doc: &mut Value, mutation: &ValueMutation) {
    match mutation {
        ValueMutation::Replace(at, with) => {
            if let Some(v) = value_at(doc, *at) {
                *v = with.get(&VALUES).clone();
            }
        }
        ValueMutation::Transplant(from, to) => {
            let copy = value_at(doc, *from).map(|v| v.clone());
            if let (Some(copy), Some(v)) = (copy, value_at(doc, *to)) {
                *v = copy;
            }
        }
        ValueMutation::Remove(at, which) => match value_at(doc, *at) {
            Some(Value::Object(map)) if !map.is_empty() => {
                let key = map.keys().nth(which.index(map.len())).cloned();
                if let Some(key) = key {
                    map.remove(&key);
                }
            }
            Some(Value::Array(items)) if !items.is_empty() => {
                items.remove(which.index(items.len()));
            }
            _ => {}
        },
        ValueMutation::Insert(at, key, with) => match value_at(doc, *at) {
            Some(Value::Object(map)) => {
                map.insert(key.get(KEYS).to_string(), with.get(&VALUES).clone());
            }
            Some(Value::Array(items)) => {
                items.insert(key.index(items.len() + 1), with.get(&VALUES).clone());
            }
            _ => {}
        },
        ValueMutation::Repeat(at, which) => {
            if let Some(Value::Array(items)) = value_at(doc, *at)
                && !items.is_empty()
            {
                let item = items[which.index(items.len())].clone();
                items.push(item);
            }
        }
        ValueMutation::EditString(at, pos, cut_len, token) => {
            if let Some(Value::String(s)) = value_at(doc, *at) {
                *s = edit_string(s, *pos, *cut_len, *token);
            }
        }
    }
}

fn mutate_text(text: &mut Vec<u8>, mutation: &TextMutation) {
    match mutation {
        TextMutation::Delete(at, len) => {
            let start = at.index(text.len() + 1);
            let end = (start + usize::from(*len)).min(text.len());
            text.drain(start..end);
        }
        TextMutation::Duplicate(at, len, to) => {
            let start = at.index(text.len() + 1);
            let end = (start + usize::from(*len)).min(text.len());
            let piece = text[start..end].to_vec();
            let to = to.index(text.len() + 1);
            text.splice(to..to, piece);
        }
        TextMutation::Insert(at, token) => {
            let at = at.index(text.len() + 1);
            text.splice(at..at, token.get(&TEXT_TOKENS_LONG).bytes());
        }
    }
}

#[derive(Debug, Clone)]
struct FileCase {
    seed: usize,
    values: Vec<ValueMutation>,
    pretty: bool,
    texts: Vec<TextMutation>,
    with_scale: bool,
}

fn file_case() -> impl Strategy<Value = FileCase> {
    (
        0..SEEDS.len(),
        prop::collection::vec(value_mutation(), 0..4),
        any::<bool>(),
        prop_oneof![
            3 => Just(Vec::new()),
            2 => prop::collection::vec(text_mutation(), 1..4),
        ],
        prop::bool::weighted(0.8),
    )
        .prop_map(|(seed, values, pretty, texts, with_scale)| FileCase {
            seed,
            values,
            pretty,
            texts,
            with_scale,
        })
}

fn file_text(case: &FileCase) -> String {
    let seed = SEEDS[case.seed];
    let mut doc: Value = serde_json::from_str(seed).expect("the seeds are JSON");
    for m in &case.values {
        mutate_value(&mut doc, m);
    }
    let text = if case.values.is_empty() {
        seed.to_string()
    } else if case.pretty {
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    } else {
        serde_json::to_string(&doc).unwrap_or_default()
    };
    let mut bytes = text.into_bytes();
    for m in &case.texts {
        mutate_text(&mut bytes, m);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn the_seeds_load_as_expected() {
    for (i, seed) in SEEDS.iter().enumerate() {
        let loaded = file::from_json(seed);
        if i == 1 {
            // `normalize.json` names a `.wgsl` file, which only `file::load` can read.
            assert!(
                matches!(loaded, Err(LoadError::NoBaseForWgslFile { .. })),
                "{loaded:?}"
            );
            continue;
        }
        let graph = loaded.unwrap_or_else(|e| panic!("seed {i}: {e}"));
        let checked = describe_graph(graph, &LIBRARY);
        if i == 4 {
            // The explicit-only seed has a self-edge.
            assert!(checked.is_err());
        } else if let Err(e) = checked {
            panic!("seed {i}: {e}");
        }
    }
}

#[test]
fn mutated_files_load_or_fail_cleanly() {
    let loaded = AtomicUsize::new(0);
    let accepted = AtomicUsize::new(0);
    fuzz("files", 40_000, file_case(), file_text, |case| {
        let outcome = check_text(&file_text(&case), library(case.with_scale))?;
        if let Some(ok) = outcome {
            loaded.fetch_add(1, Ordering::Relaxed);
            if ok {
                accepted.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    });
    println!(
        "files: {} loaded, {} accepted",
        loaded.load(Ordering::Relaxed),
        accepted.load(Ordering::Relaxed)
    );
}

// ---------------------------------------------------------------------------------------------------------
// 2. Structured fuzz: random `ir::Graph` values.

/// A buffer reference: an index into the graph's buffers when in range, else a name from the pools.
#[derive(Debug, Clone)]
enum Ref {
    Index(u8),
    Name(String),
}

fn buffer_ref() -> impl Strategy<Value = Ref> {
    prop_oneof![
        6 => (0..7u8).prop_map(Ref::Index),
        1 => any_name().prop_map(Ref::Name),
    ]
}

fn resolve(r: &Ref, names: &[String]) -> String {
    match r {
        Ref::Index(i) => names
            .get(usize::from(*i))
            .cloned()
            .unwrap_or_else(|| format!("ghost{i}")),
        Ref::Name(name) => name.clone(),
    }
}

#[derive(Debug, Clone)]
enum RawNode {
    Inline {
        snippet: usize,
        /// Use the snippet's own accesses (else `accesses`).
        natural: bool,
        accesses: Vec<(Ref, AccessMode)>,
        /// Bind one access by another name than its buffer's.
        rebind: Option<(Index, String)>,
        cut: Option<(Index, u8)>,
        file: Option<&'static str>,
        entry: Option<String>,
        dispatch: DispatchSpec,
        args: Vec<(&'static str, &'static str)>,
    },
    Library {
        path: &'static str,
        bindings: Vec<(&'static str, Ref)>,
        args: Vec<(&'static str, &'static str)>,
        entry: Option<String>,
        dispatch: DispatchSpec,
    },
    Copy(Ref, Ref, Option<ElementRange>, Option<ElementRange>),
    Fill(Ref, &'static str, Option<ElementRange>),
    Upload(Ref, Option<ElementRange>),
    Readback(Ref, Option<ElementRange>),
    Host(Vec<(Ref, AccessMode)>),
}

/// A range with any bounds the size language writes, or none. Boxed: the unboxed strategy's type is so deep
/// that generating a value overflowed the test thread's stack.
fn range() -> BoxedStrategy<Option<ElementRange>> {
    prop::option::of(
        (prop::option::of(size_expr()), prop::option::of(size_expr()))
            .prop_map(|(start, end)| ElementRange::new(start, end)),
    )
    .boxed()
}

fn raw_node() -> impl Strategy<Value = RawNode> {
    let accesses = || prop::collection::vec((buffer_ref(), mode()), 0..4);
    let args = || prop::collection::vec(prop::sample::select(LIBRARY_ARGS), 0..3);
    let inline = (
        snippet_index(),
        prop::bool::weighted(0.7),
        accesses(),
        prop::option::weighted(0.1, (any::<Index>(), any_name())),
        prop::option::weighted(0.15, (any::<Index>(), 1..20u8)),
        prop::option::weighted(0.1, prop::sample::select(&["k.wgsl", "", "dir/ŷ.wgsl"][..])),
        entry(),
        dispatch(),
        prop::option::weighted(0.1, args()),
    )
        .prop_map(
            |(snippet, natural, accesses, rebind, cut, file, entry, dispatch, args)| {
                RawNode::Inline {
                    snippet,
                    natural,
                    accesses,
                    rebind,
                    cut,
                    file,
                    entry,
                    dispatch,
                    args: args.unwrap_or_default(),
                }
            },
        );
    let library = (
        prop::sample::select(LIBRARY_PATHS),
        prop::collection::vec((prop::sample::select(LIBRARY_BINDINGS), buffer_ref()), 0..3),
        args(),
        prop::option::weighted(0.1, prop::sample::select(ENTRIES).prop_map(String::from)),
        prop_oneof![4 => Just(DispatchSpec::Auto), 1 => dispatch()],
    )
        .prop_map(|(path, bindings, args, entry, dispatch)| RawNode::Library {
            path,
            bindings,
            args,
            entry,
            dispatch,
        });
    prop_oneof![
        5 => inline,
        2 => library,
        1 => (buffer_ref(), buffer_ref(), range(), range())
            .prop_map(|(s, d, sr, dr)| RawNode::Copy(s, d, sr, dr)),
        1 => (buffer_ref(), prop::sample::select(FILL_VALUES), range())
            .prop_map(|(d, v, r)| RawNode::Fill(d, v, r)),
        1 => (buffer_ref(), range()).prop_map(|(b, r)| RawNode::Upload(b, r)),
        1 => (buffer_ref(), range()).prop_map(|(b, r)| RawNode::Readback(b, r)),
        1 => accesses().prop_map(RawNode::Host),
    ]
}

/// Nodes that fit the standard declarations, so that many graphs are accepted and the accepted path is
/// exercised as much as the refusals.
fn coherent_node() -> impl Strategy<Value = RawNode> {
    let valid: Vec<usize> = (0..SNIPPETS.len()).filter(|&i| SNIPPETS[i].valid).collect();
    let small_dispatch = prop_oneof![
        4 => Just(DispatchSpec::Auto),
        1 => Just(DispatchSpec::Threads(vec![SizeExpr::param("n")])),
        1 => Just(DispatchSpec::Threads(vec![SizeExpr::Len("y".into()), SizeExpr::Literal(1)])),
        1 => Just(DispatchSpec::Workgroups(vec![SizeExpr::binary(
            SizeOp::DivCeil,
            SizeExpr::param("n"),
            SizeExpr::Literal(64),
        )])),
    ];
    let inline = (prop::sample::select(valid), small_dispatch, any::<bool>()).prop_map(
        |(snippet, dispatch, first)| {
            // A module of two entry points needs one chosen.
            let entry = SNIPPETS[snippet]
                .text
                .contains("fn second")
                .then(|| if first { "main" } else { "second" }.to_string());
            RawNode::Inline {
                snippet,
                natural: true,
                accesses: Vec::new(),
                rebind: None,
                cut: None,
                file: None,
                entry,
                dispatch,
                args: Vec::new(),
            }
        },
    );
    // Standard buffers by index: 0 x, 1 y, 2 tmp, 3 out, 4 v.
    let library =
        prop::sample::select(&[("alpha", "2.0"), ("alpha", "params.a")][..]).prop_map(|arg| {
            RawNode::Library {
                path: "scale",
                bindings: vec![("data", Ref::Index(1))],
                args: vec![arg],
                entry: None,
                dispatch: DispatchSpec::Auto,
            }
        });
    prop_oneof![
        5 => inline,
        1 => library,
        1 => prop::sample::select(&[(0u8, 1u8), (1, 3), (0, 3), (2, 3)][..])
            .prop_map(|(s, d)| RawNode::Copy(Ref::Index(s), Ref::Index(d), None, None)),
        // A range of the graph-owned `tmp` (1024 elements), within it.
        1 => (0u64..32, 32u64..=64).prop_map(|(start, end)| RawNode::Copy(
            Ref::Index(0),
            Ref::Index(2),
            Some(ElementRange::new(Some(SizeExpr::Literal(start)), Some(SizeExpr::Literal(end)))),
            Some(ElementRange::new(Some(SizeExpr::Literal(start)), Some(SizeExpr::Literal(end)))),
        )),
        1 => prop::sample::select(&[(1u8, "0.0"), (4, "vec4<f32>(0.0)"), (3, "params.a"), (2, "1.0")][..])
            .prop_map(|(d, v)| RawNode::Fill(Ref::Index(d), v, None)),
        1 => Just(RawNode::Upload(Ref::Index(2), None)),
        1 => Just(RawNode::Readback(Ref::Index(1), None)),
        1 => (0u64..64).prop_map(|start| RawNode::Fill(
            Ref::Index(2),
            "2.0",
            Some(ElementRange::new(Some(SizeExpr::Literal(start)), None)),
        )),
        1 => prop::sample::select(&[(1u8, ReadWrite), (3, Write), (0, Read)][..])
            .prop_map(|(b, m)| RawNode::Host(vec![(Ref::Index(b), m)])),
    ]
}

fn build_node(raw: RawNode, buffers: &[String]) -> NodeKind {
    let access = |(r, mode): &(Ref, AccessMode)| {
        let buffer = resolve(r, buffers);
        Access {
            binding: buffer.clone(),
            buffer,
            mode: *mode,
        }
    };
    let args = |list: Vec<(&str, &str)>| {
        list.into_iter()
            .map(|(name, value)| KernelArg {
                name: name.into(),
                wgsl: value.into(),
            })
            .collect()
    };
    match raw {
        RawNode::Inline {
            snippet,
            natural,
            accesses,
            rebind,
            cut: cut_at,
            file,
            entry,
            dispatch,
            args: kernel_args,
        } => {
            let s = &SNIPPETS[snippet];
            let mut accesses: Vec<Access> = if natural {
                s.accesses
                    .iter()
                    .map(|&(buffer, mode)| Access {
                        binding: buffer.into(),
                        buffer: buffer.into(),
                        mode,
                    })
                    .collect()
            } else {
                accesses.iter().map(access).collect()
            };
            // A binding is never empty: the file would restore it as the buffer's name.
            if let Some((i, name)) = rebind
                && !accesses.is_empty()
                && !name.is_empty()
            {
                let k = i.index(accesses.len());
                accesses[k].binding = name;
            }
            let text = match cut_at {
                Some((start, len)) => cut(s.text, start, len),
                None => s.text.to_string(),
            };
            NodeKind::Kernel(Kernel {
                accesses,
                source: KernelSource::Wgsl {
                    text,
                    file: file.map(String::from),
                },
                entry,
                dispatch,
                args: args(kernel_args),
                overrides: Vec::new(),
            })
        }
        RawNode::Library {
            path,
            bindings,
            args: kernel_args,
            entry,
            dispatch,
        } => NodeKind::Kernel(Kernel {
            accesses: bindings
                .iter()
                .map(|(binding, r)| {
                    let buffer = resolve(r, buffers);
                    // An empty binding is the buffer's name in a file: generate it as such.
                    let binding = if binding.is_empty() {
                        buffer.clone()
                    } else {
                        binding.to_string()
                    };
                    Access {
                        binding,
                        buffer,
                        mode: AccessMode::Read,
                    }
                })
                .collect(),
            source: KernelSource::Library(path.into()),
            entry,
            dispatch,
            args: args(kernel_args),
            overrides: Vec::new(),
        }),
        RawNode::Copy(src, dst, src_range, dst_range) => NodeKind::Copy {
            src: resolve(&src, buffers),
            dst: resolve(&dst, buffers),
            src_range,
            dst_range,
        },
        RawNode::Fill(dst, value, range) => NodeKind::Fill {
            dst: resolve(&dst, buffers),
            value: value.into(),
            range,
        },
        RawNode::Upload(dst, range) => NodeKind::Upload {
            dst: resolve(&dst, buffers),
            range,
        },
        RawNode::Readback(src, range) => NodeKind::Readback {
            src: resolve(&src, buffers),
            range,
        },
        RawNode::Host(accesses) => NodeKind::Host {
            accesses: accesses.iter().map(access).collect(),
        },
    }
}

#[derive(Debug, Clone)]
struct RawGraph {
    name: String,
    params: Vec<Param>,
    buffers: Vec<Buffer>,
    /// Name each node `n0`, `n1`.. (else from the pools, collisions included).
    unique_node_names: bool,
    node_names: Vec<String>,
    nodes: Vec<RawNode>,
    /// Explicit edges between node indices (out of range: a name that is no node's).
    edges: Vec<(u8, u8)>,
    /// Take edges modulo the node count and forward in declaration order (no cycle, no unknown node).
    forward_edges: bool,
    edge_mode: EdgeMode,
    params_storage: ParamsStorage,
    workgroup_limits: WorkgroupLimits,
}

fn params() -> impl Strategy<Value = Vec<Param>> {
    let random = prop::collection::vec(
        (any_name(), any_type()).prop_map(|(name, ty)| Param { name, ty }),
        0..5,
    );
    prop_oneof![
        3 => Just(standard_params()),
        1 => Just(Vec::new()),
        2 => random,
        // Over the 128-byte push-constant budget.
        1 => Just((0..9).map(|i| Param { name: format!("p{i}"), ty: "vec4<f32>".into() }).collect()),
    ]
}

fn buffers() -> impl Strategy<Value = Vec<Buffer>> {
    let buffer = || {
        (any_name(), any_type(), length(), role()).prop_map(|(name, elem, len, role)| Buffer {
            name,
            elem,
            len,
            role,
        })
    };
    prop_oneof![
        // `out` as an output must be written; as inout it need not.
        4 => prop_oneof![Just(Role::Output), Just(Role::InOut)].prop_map(|role| {
            let mut all = standard_buffers();
            all[3].role = role;
            all
        }),
        2 => prop::collection::vec(buffer(), 0..6),
        2 => prop::collection::vec(buffer(), 0..3).prop_map(|extra| {
            let mut all = standard_buffers();
            all.extend(extra);
            all
        }),
    ]
}

fn raw_graph() -> impl Strategy<Value = RawGraph> {
    (
        (
            prop::sample::select(&["G", "", "ŷ graph", "digraph \"x\" {", "G\0", "G\n// x"][..])
                .prop_map(String::from),
            params(),
            buffers(),
            prop::bool::weighted(0.7),
            prop::collection::vec(any_name(), 6),
        ),
        (
            prop_oneof![
                2 => prop::collection::vec(raw_node(), 0..6),
                2 => prop::collection::vec(coherent_node(), 0..6),
                1 => (prop::collection::vec(coherent_node(), 0..5), raw_node()).prop_map(|(mut nodes, odd)| {
                    nodes.push(odd);
                    nodes
                }),
            ],
            prop::collection::vec((0..7u8, 0..7u8), 0..4),
            prop_oneof![3 => Just(EdgeMode::Inferred), 1 => Just(EdgeMode::ExplicitOnly)],
            prop_oneof![3 => Just(ParamsStorage::Immediates), 1 => Just(ParamsStorage::Uniform)],
            prop_oneof![3 => Just(WorkgroupLimits::Portable), 1 => Just(WorkgroupLimits::Device)],
        ),
    )
        .prop_map(
            |(
                (name, params, buffers, unique_node_names, node_names),
                (nodes, edges, edge_mode, params_storage, workgroup_limits),
            )| RawGraph {
                name,
                params,
                buffers,
                unique_node_names,
                node_names,
                nodes,
                edges,
                forward_edges: false,
                edge_mode,
                params_storage,
                workgroup_limits,
            },
        )
}

/// A graph of the standard declarations and coherent nodes, with forward edges: mostly accepted.
fn coherent_graph() -> impl Strategy<Value = RawGraph> {
    (
        prop_oneof![1 => Just(Role::Output), 3 => Just(Role::InOut)],
        prop::collection::vec(coherent_node(), 0..7),
        prop::collection::vec((0..7u8, 0..7u8), 0..4),
        prop_oneof![5 => Just(EdgeMode::Inferred), 1 => Just(EdgeMode::ExplicitOnly)],
        prop_oneof![
            Just(ParamsStorage::Immediates),
            Just(ParamsStorage::Uniform)
        ],
        prop_oneof![
            Just(WorkgroupLimits::Portable),
            Just(WorkgroupLimits::Device)
        ],
    )
        .prop_map(
            |(out_role, nodes, edges, edge_mode, params_storage, workgroup_limits)| {
                let mut buffers = standard_buffers();
                buffers[3].role = out_role;
                RawGraph {
                    name: "Coherent".into(),
                    params: standard_params(),
                    buffers,
                    unique_node_names: true,
                    node_names: Vec::new(),
                    nodes,
                    edges,
                    forward_edges: true,
                    edge_mode,
                    params_storage,
                    workgroup_limits,
                }
            },
        )
}

fn any_graph() -> impl Strategy<Value = RawGraph> {
    prop_oneof![3 => raw_graph(), 2 => coherent_graph()]
}

fn build_graph(raw: RawGraph) -> Graph {
    let buffer_names: Vec<String> = raw.buffers.iter().map(|b| b.name.clone()).collect();
    let nodes: Vec<Node> = raw
        .nodes
        .into_iter()
        .enumerate()
        .map(|(i, kind)| Node {
            name: if raw.unique_node_names {
                format!("n{i}")
            } else {
                raw.node_names[i].clone()
            },
            kind: build_node(kind, &buffer_names),
        })
        .collect();
    let node_name = |i: u8| {
        nodes.get(usize::from(i)).map_or_else(
            || ["x", "nope", "", "n9"][usize::from(i) % 4].to_string(),
            |n| n.name.clone(),
        )
    };
    let count = nodes.len() as u8;
    let edges = raw
        .edges
        .iter()
        .filter_map(|&(from, to)| {
            if !raw.forward_edges {
                return Some((from, to));
            }
            let (a, b) = (from % count.max(1), to % count.max(1));
            (a != b).then(|| (a.min(b), a.max(b)))
        })
        .map(|(from, to)| ExplicitEdge {
            from: node_name(from),
            to: node_name(to),
        })
        .collect();
    Graph {
        name: raw.name,
        params: raw.params,
        buffers: raw.buffers,
        nodes,
        edges,
        edge_mode: raw.edge_mode,
        params_storage: raw.params_storage,
        workgroup_limits: raw.workgroup_limits,
        no_fusion: Vec::new(),
        no_alias: Vec::new(),
        on: Vec::new(),
        alternatives: Vec::new(),
        blocks: Vec::new(),
    }
}

#[test]
fn structured_graphs_are_checked_without_panics() {
    on_a_big_stack(structured_graphs);
}

/// Runs `test` on a thread with a 256 MiB stack: generating one of these graphs goes through proptest
/// strategies whose debug-build frames outgrew the test thread's 2 MiB (a stack overflow inside proptest,
/// not in the code under test, which keeps its own limits).
fn on_a_big_stack(test: fn()) {
    let thread = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(test)
        .expect("a test thread");
    if let Err(panic) = thread.join() {
        std::panic::resume_unwind(panic);
    }
}

fn structured_graphs() {
    let accepted = AtomicUsize::new(0);
    fuzz(
        "structured",
        30_000,
        (any_graph(), prop::bool::weighted(0.8)),
        |(raw, _)| file::to_json(&build_graph(raw.clone())),
        |(raw, with_scale)| {
            let graph = build_graph(raw);
            if check_graph(&graph, library(with_scale), None)? {
                accepted.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        },
    );
    println!("structured: {} accepted", accepted.load(Ordering::Relaxed));
}

// ---------------------------------------------------------------------------------------------------------
// 3. Builder fuzz: random sequences of `GraphBuilder` calls.

/// Sizes as text: good ones, ones that name nothing, and ones that do not parse.
const SIZE_TEXTS: &[&str] = &[
    "params.n",
    "params.n",
    "y.len()",
    "x.len()",
    "(params.n + 63) / 64",
    "params.n.div_ceil(64)",
    "y.len().div_ceil(params.m.x)",
    "params.m.y",
    "64",
    "1",
    "0",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "1_000u32",
    "params.a",
    "params.m",
    "params.m.w",
    "nope.len()",
    "params.n - 1",
    "params.n / 0",
    "params.n.div_ceil(0)",
    "params.n * params.n * params.n",
    "params.",
    "1 +",
    ")",
    "",
    "(",
    "params.n)",
    "x.len(",
    "ŷ",
    "1 2",
    "params..n",
    "x.len().min()",
    "params.m.q",
    "-1",
    "1.5",
];

static LONG_SIZE_TEXTS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut texts: Vec<String> = SIZE_TEXTS.iter().map(|t| t.to_string()).collect();
    texts.push(format!("{}1{}", "(".repeat(70), ")".repeat(70)));
    texts.push(format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000)));
    texts.push(format!("params.n{}", " + 1".repeat(80)));
    texts.push(format!("params.n{}", " + 1".repeat(40)));
    texts.push(format!("1{}", ".max(2)".repeat(20)));
    texts
});

fn size_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => any::<Index>().prop_map(|i| i.get(&LONG_SIZE_TEXTS).clone()),
        1 => size_expr().prop_map(|e| e.to_string()),
    ]
}

#[derive(Debug, Clone)]
enum Sizes {
    None,
    Threads(Vec<String>),
    Workgroups(Vec<String>),
    Expr(DispatchSpec),
}

fn sizes() -> impl Strategy<Value = Sizes> {
    let texts = || prop::collection::vec(size_text(), 0..5);
    prop_oneof![
        3 => Just(Sizes::None),
        2 => texts().prop_map(Sizes::Threads),
        1 => texts().prop_map(Sizes::Workgroups),
        1 => dispatch().prop_map(Sizes::Expr),
    ]
}

#[derive(Debug, Clone)]
enum Call {
    Param(String, String),
    Buffer(String, String, Role, Option<u64>),
    Input(String, String),
    Output(String, String),
    InOut(String, String),
    Owned(String, String, u64),
    Kernel {
        name: String,
        snippet: usize,
        natural: bool,
        accesses: Vec<(String, AccessMode)>,
        entry: Option<String>,
        sizes: Sizes,
    },
    Library {
        name: String,
        path: &'static str,
        bindings: Vec<(&'static str, String)>,
        args: Vec<(&'static str, &'static str)>,
    },
    Copy(String, String, String),
    Fill(String, String, &'static str),
    Host(String, Vec<(String, AccessMode)>),
    Edge(String, String),
    ExplicitEdgesOnly,
    UniformParams,
    DeviceLimits,
}

/// Buffer names for calls: mostly the standard ones.
fn buffer_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(&["x", "y", "tmp", "out", "v"][..]).prop_map(String::from),
        1 => any_name(),
    ]
}

fn node_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(&["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"][..]).prop_map(String::from),
        1 => any_name(),
    ]
}

fn call() -> impl Strategy<Value = Call> {
    let accesses = || prop::collection::vec((buffer_name(), mode()), 0..4);
    let kernel = (
        node_name(),
        snippet_index(),
        prop::bool::weighted(0.7),
        accesses(),
        entry(),
        sizes(),
    )
        .prop_map(
            |(name, snippet, natural, accesses, entry, sizes)| Call::Kernel {
                name,
                snippet,
                natural,
                accesses,
                entry,
                sizes,
            },
        );
    let library = (
        node_name(),
        prop::sample::select(LIBRARY_PATHS),
        prop::collection::vec(
            (prop::sample::select(LIBRARY_BINDINGS), buffer_name()),
            0..3,
        ),
        prop::collection::vec(prop::sample::select(LIBRARY_ARGS), 0..3),
    )
        .prop_map(|(name, path, bindings, args)| Call::Library {
            name,
            path,
            bindings,
            args,
        });
    prop_oneof![
        1 => (any_name(), any_type()).prop_map(|(n, t)| Call::Param(n, t)),
        1 => (any_name(), any_type(), role(), length()).prop_map(|(n, t, r, l)| Call::Buffer(n, t, r, l)),
        1 => (buffer_name(), any_type()).prop_map(|(n, t)| Call::Input(n, t)),
        1 => (buffer_name(), any_type()).prop_map(|(n, t)| Call::Output(n, t)),
        1 => (buffer_name(), any_type()).prop_map(|(n, t)| Call::InOut(n, t)),
        1 => (buffer_name(), any_type(), length().prop_map(|l| l.unwrap_or(0)))
            .prop_map(|(n, t, l)| Call::Owned(n, t, l)),
        8 => kernel,
        2 => library,
        1 => (node_name(), buffer_name(), buffer_name()).prop_map(|(n, s, d)| Call::Copy(n, s, d)),
        1 => (node_name(), buffer_name(), prop::sample::select(FILL_VALUES))
            .prop_map(|(n, d, v)| Call::Fill(n, d, v)),
        1 => (node_name(), accesses()).prop_map(|(n, a)| Call::Host(n, a)),
        2 => (node_name(), node_name()).prop_map(|(a, b)| Call::Edge(a, b)),
        1 => Just(Call::ExplicitEdgesOnly),
        1 => Just(Call::UniformParams),
        1 => Just(Call::DeviceLimits),
    ]
}

#[derive(Debug, Clone)]
struct BuilderCase {
    /// Start with the standard parameters and buffers (with `out` as inout, so it need not be written).
    standard: bool,
    calls: Vec<Call>,
    with_scale: bool,
}

fn builder_case() -> impl Strategy<Value = BuilderCase> {
    (
        prop::bool::weighted(0.7),
        prop::collection::vec(call(), 0..10),
        prop::bool::weighted(0.8),
    )
        .prop_map(|(standard, calls, with_scale)| BuilderCase {
            standard,
            calls,
            with_scale,
        })
}

/// Makes the calls; returns the builder and whether any size text failed to parse.
fn make_builder(case: &BuilderCase) -> (GraphBuilder, bool) {
    let mut b = GraphBuilder::new("Built");
    if case.standard {
        b.param("n", "u32")
            .param("a", "f32")
            .param("m", "vec2<u32>");
        b.input("x", "f32")
            .inout("y", "f32")
            .owned("tmp", "f32", 1024)
            .inout("out", "f32")
            .inout("v", "vec4<f32>");
    }
    let mut unreadable = false;
    for call in &case.calls {
        match call {
            Call::Param(n, t) => {
                b.param(n, t);
            }
            Call::Buffer(n, t, r, l) => {
                b.buffer(n, t, *r, *l);
            }
            Call::Input(n, t) => {
                b.input(n, t);
            }
            Call::Output(n, t) => {
                b.output(n, t);
            }
            Call::InOut(n, t) => {
                b.inout(n, t);
            }
            Call::Owned(n, t, l) => {
                b.owned(n, t, *l);
            }
            Call::Kernel {
                name,
                snippet,
                natural,
                accesses,
                entry,
                sizes,
            } => {
                let s = &SNIPPETS[*snippet];
                let mut spec = KernelSpec::wgsl(s.text);
                let natural_accesses: Vec<(String, AccessMode)> = s
                    .accesses
                    .iter()
                    .map(|&(b, m)| (b.to_string(), m))
                    .collect();
                for (buffer, mode) in if *natural {
                    &natural_accesses
                } else {
                    accesses
                } {
                    spec = match mode {
                        Read => spec.read(buffer),
                        Write => spec.write(buffer),
                        ReadWrite => spec.read_write(buffer),
                    };
                }
                if let Some(e) = entry {
                    spec = spec.entry(e);
                }
                spec = match sizes {
                    Sizes::None => spec,
                    Sizes::Threads(texts) | Sizes::Workgroups(texts) => {
                        unreadable |= texts.iter().any(|t| parse_size(t).is_err());
                        let dims: Vec<&str> = texts.iter().map(String::as_str).collect();
                        if matches!(sizes, Sizes::Threads(_)) {
                            spec.threads(&dims)
                        } else {
                            spec.workgroups(&dims)
                        }
                    }
                    Sizes::Expr(d) => spec.dispatch(d.clone()),
                };
                b.kernel(name, spec);
            }
            Call::Library {
                name,
                path,
                bindings,
                args,
            } => {
                let bindings: Vec<(&str, &str)> =
                    bindings.iter().map(|(k, v)| (*k, v.as_str())).collect();
                b.library(name, path, &bindings, args);
            }
            Call::Copy(n, s, d) => {
                b.copy(n, s, d);
            }
            Call::Fill(n, d, v) => {
                b.fill(n, d, v);
            }
            Call::Host(n, accesses) => {
                let accesses: Vec<(&str, AccessMode)> =
                    accesses.iter().map(|(b, m)| (b.as_str(), *m)).collect();
                b.host(n, &accesses);
            }
            Call::Edge(from, to) => {
                b.edge(from, to);
            }
            Call::ExplicitEdgesOnly => {
                b.explicit_edges_only();
            }
            Call::UniformParams => {
                b.uniform_params();
            }
            Call::DeviceLimits => {
                b.device_limits();
            }
        }
    }
    (b, unreadable)
}

#[test]
fn builder_calls_build_or_fail_cleanly() {
    let accepted = AtomicUsize::new(0);
    let show = |case: &BuilderCase| file::to_json(make_builder(case).0.graph());
    fuzz("builder", 30_000, builder_case(), show, |case| {
        let (b, unreadable) = make_builder(&case);
        let library = library(case.with_scale);
        let built = b.build(library);
        // The builder adds only its own early errors to the checks' verdict on the same graph.
        let checked = describe_graph(b.graph().clone(), library);
        match built {
            Ok(desc) => {
                prop_assert!(!unreadable, "a size that does not parse was accepted");
                prop_assert_eq!(Some(&desc), checked.as_ref().ok());
                check_description(&desc, b.graph())?;
                check_file_round_trip(b.graph())?;
                accepted.fetch_add(1, Ordering::Relaxed);
            }
            Err(errors) => {
                check_errors(&errors)?;
                prop_assert_eq!(&*errors.graph, b.graph());
                match checked {
                    Ok(_) => {
                        prop_assert!(unreadable, "the builder refused a graph the checks accept")
                    }
                    Err(c) => {
                        prop_assert!(errors.diagnostics.ends_with(&c.diagnostics));
                        prop_assert_eq!(errors.diagnostics.len() > c.diagnostics.len(), unreadable);
                    }
                }
            }
        }
        Ok(())
    });
    println!("builder: {} accepted", accepted.load(Ordering::Relaxed));
}

// ---------------------------------------------------------------------------------------------------------
// 4. Hostile text in every field that reaches a kernel's WGSL (or a message about one): a good graph with one
// field replaced. It is refused with diagnostics that render, or accepted with nothing injected.

/// The payload of issue 19: a fill value that closed its function and declared one writing element 99.
const PAYLOAD: &str =
    "1.0 + w(); } fn w() -> f32 { dst[99] = 42.0; return 0.0; } fn unused() -> f32 { return 0.0";

/// Pieces of text that end a function, a statement, a line or a comment, open one, declare something, or
/// hide (NUL, line separators, bidi overrides); glued together by [`hostile_text`].
const HOSTILE: &[&str] = &[
    "}",
    "{",
    ";",
    "fn",
    " fn w() -> f32 { return 0.0; } ",
    "//",
    "/*",
    "*/",
    "\0",
    "\n",
    "\r\n",
    "\u{2028}",
    "\u{202e}",
    "ŷ",
    "loop {}",
    "@compute @workgroup_size(1)",
    "dst[99] = 42.0",
    "var<private> q: f32",
    "1.0",
    "params.a",
    "(",
    ")",
    "x",
    " ",
    PAYLOAD,
    "1.0 + w(); } fn w() -> f32 { loop {} return 0.0; } fn unused() -> f32 { return 0.0",
    "0.0)); } fn evil() -> f32 { return (1.0",
    "1.0 // }",
    "1.0 /* } fn w() {} */",
    "x: array<f32>; fn evil() {}",
    "main\0",
];

/// Hostile text: a piece, several glued, a very long one, or any string at all.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(HOSTILE).prop_map(String::from),
        4 => prop::collection::vec(prop::sample::select(HOSTILE), 2..6).prop_map(|pieces| pieces.concat()),
        1 => (prop::sample::select(HOSTILE), 100..20_000usize)
            .prop_map(|(piece, times)| piece.repeat(times.div_ceil(piece.len().max(1)))),
        1 => (0..3000usize).prop_map(|depth| format!("{}1.0{}", "(".repeat(depth), ")".repeat(depth))),
        2 => any::<String>(),
    ]
}

/// A good graph with a text field of every kind: parameters and buffers, a fill of part of a buffer, a
/// library kernel with an argument, a kernel with an entry point, a dispatch size and a file's own binding
/// name, a host task, a group of alternatives, a block, an edge and a node left out of fusion.
fn good_graph() -> Graph {
    let mut b = GraphBuilder::new("Good");
    b.param("n", "u32")
        .param("a", "f32")
        .inout("x", "f32")
        .buffer("y", "f32", Role::InOut, Some(256))
        .buffer("flag", "u32", Role::Input, Some(1))
        .fill("f", "y[1..y.len() - 1]", "params.a")
        .library("s", "scale", &[("data", "x")], &[("alpha", "2.0")])
        .kernel(
            "k",
            KernelSpec::wgsl(SNIPPETS[1].text)
                .read("x")
                .read_write("y")
                .entry("main")
                .threads(&["params.n"]),
        )
        .kernel(
            "other",
            KernelSpec::wgsl(SNIPPETS[1].text)
                .read("x")
                .read_write("y")
                .threads(&["params.n"]),
        )
        .alternatives("pick", &["k", "other"])
        .host("h", &[("y", Read)])
        .fill("g", "x", "0.0")
        .if_block("when", "flag", &["g"])
        .edge("s", "h")
        .no_fusion("s");
    let mut graph = b.graph().clone();
    // A file may bind a buffer by a name of its own, which the kernel's WGSL then uses.
    if let NodeKind::Kernel(k) = &mut graph.nodes[2].kind {
        k.accesses[0].binding = "xs".into();
        if let KernelSource::Wgsl { text, .. } = &mut k.source {
            *text = text.replace("x[", "xs[");
        }
    }
    graph
}

/// The fields of [`good_graph`] that take text, by number.
const TEXT_FIELDS: usize = 22;

/// `graph` with field `field` set to `text`. (A binding is never empty: its file would restore it as the
/// buffer's name.)
fn put(graph: &mut Graph, field: usize, text: String) {
    if text.is_empty() && [9, 11, 15].contains(&field) {
        return;
    }
    fn kernel(graph: &mut Graph, n: usize) -> Option<&mut Kernel> {
        match &mut graph.nodes[n].kind {
            NodeKind::Kernel(k) => Some(k),
            _ => None,
        }
    }
    match field {
        0 => graph.name = text,
        1 => graph.params[1].name = text,
        2 => graph.params[1].ty = text,
        3 => graph.buffers[0].name = text,
        4 => graph.buffers[1].elem = text,
        5 => graph.nodes[0].name = text,
        6 => {
            if let NodeKind::Fill { value, .. } = &mut graph.nodes[0].kind {
                *value = text;
            }
        }
        7 => {
            if let Some(k) = kernel(graph, 1) {
                k.args[0].wgsl = text;
            }
        }
        8 => {
            if let Some(k) = kernel(graph, 1) {
                k.args[0].name = text;
            }
        }
        9 => {
            if let Some(k) = kernel(graph, 1) {
                k.accesses[0].binding = text;
            }
        }
        10 => {
            if let Some(k) = kernel(graph, 1) {
                k.source = KernelSource::Library(text);
            }
        }
        11 => {
            if let Some(k) = kernel(graph, 2) {
                k.accesses[0].binding = text;
            }
        }
        12 => {
            if let Some(k) = kernel(graph, 2) {
                k.entry = Some(text);
            }
        }
        13 => {
            if let Some(k) = kernel(graph, 2)
                && let Ok(size) = parse_size(&text)
            {
                k.dispatch = DispatchSpec::Threads(vec![size]);
            }
        }
        14 => {
            graph.blocks[0].kind = BlockKind::If {
                flag: text,
                otherwise: Vec::new(),
            }
        }
        15 => {
            if let NodeKind::Host { accesses } = &mut graph.nodes[4].kind {
                accesses[0].binding = text;
            }
        }
        16 => graph.alternatives[0].name = text,
        17 => graph.blocks[0].name = text,
        18 => graph.nodes[5].name = text,
        19 => graph.edges[0].from = text,
        20 => graph.no_fusion[0] = text,
        _ => {
            if let Some(k) = kernel(graph, 2) {
                k.args.push(KernelArg {
                    name: "alpha".into(),
                    wgsl: text,
                });
            }
        }
    }
}

#[test]
fn the_good_graph_is_accepted() {
    let graph = good_graph();
    let desc = describe_graph(graph.clone(), library(true)).unwrap_or_else(|e| panic!("{e}"));
    check_description(&desc, &graph).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn hostile_text_in_any_field_is_refused_or_injects_nothing() {
    let accepted = AtomicUsize::new(0);
    let strategy = (0..TEXT_FIELDS, hostile_text());
    let graph = |(field, text): &(usize, String)| {
        let mut graph = good_graph();
        put(&mut graph, *field, text.clone());
        graph
    };
    fuzz(
        "hostile",
        5_000,
        strategy,
        |case| file::to_json(&graph(case)),
        |case| {
            let graph = graph(&case);
            // Through the graph's own file too: what a file carries is what reaches the checks.
            if check_graph(&graph, library(true), None)? {
                accepted.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        },
    );
    println!("hostile: {} accepted", accepted.load(Ordering::Relaxed));
}

// ---------------------------------------------------------------------------------------------------------
// Bugs found, minimized. Each is ignored until fixed; run with `-- --ignored`.

/// `params.n + 1 + 1 + .. + 1`, `links` additions deep on the left.
fn left_chain(links: usize) -> SizeExpr {
    (0..links).fold(SizeExpr::param("n"), |acc, _| {
        SizeExpr::binary(SizeOp::Add, acc, SizeExpr::Literal(1))
    })
}

/// The checks once bounded a size only by its evaluation stack (16 slots) and the file reader by its tree
/// depth (64), so a size of 64 left-nested terms was accepted and its own file refused (found by the fuzzer).
/// The checks now refuse what a file cannot hold, and what they accept survives its file.
#[test]
fn a_size_deeper_than_a_file_can_hold_is_refused_and_one_that_fits_survives_its_file() {
    let graph_with = |terms: usize| {
        let mut b = GraphBuilder::new("Chain");
        b.param("n", "u32").inout("y", "f32");
        b.kernel(
            "k",
            KernelSpec::wgsl(
                "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n    if (gid.x < arrayLength(&y)) { y[gid.x] = 1.0; }\n}\n",
            )
            .read_write("y")
            .dispatch(DispatchSpec::Threads(vec![left_chain(terms)])),
        );
        b
    };
    let deep = graph_with(64);
    let refused = deep
        .build(&Library::EMPTY)
        .expect_err("64 levels is too deep");
    assert!(
        refused.diagnostics[0]
            .message
            .contains("nests more than 64 levels"),
        "{refused}"
    );
    let fits = graph_with(63);
    fits.build(&Library::EMPTY).expect("63 levels fit");
    let back = file::from_json(&file::to_json(fits.graph())).expect("its file loads");
    assert_eq!(&back, fits.graph());
}

/// A buffer name was never required to be an identifier, so a buffer called `a b` could be sized by in an
/// accepted graph whose file then did not load (found by the fuzzer). Names are identifiers now; a Unicode
/// one is still a name, and survives its file.
#[test]
fn a_buffer_name_that_is_no_identifier_is_refused_and_a_unicode_one_survives_its_file() {
    let graph_named = |name: &str| Graph {
        name: "Odd".into(),
        buffers: vec![Buffer {
            name: name.into(),
            elem: "f32".into(),
            len: None,
            role: Role::InOut,
        }],
        nodes: vec![Node {
            name: "k".into(),
            kind: NodeKind::Kernel(Kernel {
                accesses: vec![Access {
                    binding: name.into(),
                    buffer: name.into(),
                    mode: AccessMode::ReadWrite,
                }],
                source: KernelSource::Wgsl {
                    text: format!(
                        "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    if (gid.x < arrayLength(&{name})) {{ {name}[gid.x] = 1.0; }}\n}}\n"
                    ),
                    file: None,
                },
                entry: None,
                dispatch: DispatchSpec::Threads(vec![SizeExpr::Len(name.into())]),
                args: Vec::new(),
                overrides: Vec::new(),
            }),
        }],
        ..Graph::default()
    };
    for bad in ["a b", "1x", "", "_"] {
        let refused = describe_graph(graph_named(bad), &Library::EMPTY).expect_err(bad);
        assert!(
            refused.diagnostics[0]
                .message
                .contains("must be an identifier"),
            "{bad:?}: {refused}"
        );
    }
    let unicode = graph_named("ŷ");
    describe_graph(unicode.clone(), &Library::EMPTY).expect("`ŷ` is an identifier");
    assert_eq!(
        file::from_json(&file::to_json(&unicode)).expect("its file loads"),
        unicode
    );
}

/// A graph file whose kernel is `y[gid.x] = 1.0 + 1.0 + .. + 1.0` with `terms` terms.
fn long_expression_file(terms: usize) -> String {
    let wgsl = format!(
        "@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n    y[gid.x] = 1.0{};\n}}\n",
        " + 1.0".repeat(terms - 1)
    );
    json!({ "format": 1, "graph": {
        "name": "Long",
        "buffers": [{ "name": "y", "elem": "f32", "role": "output" }],
        "nodes": [{ "name": "k", "kernel": {
            "accesses": [{ "buffer": "y", "mode": "write" }],
            "source": { "wgsl": { "text": wgsl } } } }] } })
    .to_string()
}

/// naga's WGSL front end recurses once per term of a flat chain (`a + b + ..`, `!!..x`, `v.xy.xy..`) or a
/// nesting (`((..))`), with no limit: about 4,200 terms overflowed a 2 MiB test thread and aborted the process
/// (in `naga::front::wgsl::lower::Lowerer::expression_for_reference`, naga 30.0.1). Validation now runs on a
/// thread with a large stack and refuses modules over `MAX_WGSL_BYTES`: the deepest forms that fit are each an
/// answer, never a crash, and one byte more is refused unread.
#[test]
fn the_deepest_wgsl_that_fits_is_an_answer_not_a_crash() {
    use graph_core::wgsl::{MAX_WGSL_BYTES, validate};
    let wrap = |body: String| format!("@compute @workgroup_size(1)\nfn main() {{\n{body}\n}}\n");
    let room = MAX_WGSL_BYTES - wrap(String::new()).len() - 64;
    let forms: Vec<(&str, String)> = vec![
        (
            "a sum",
            format!("let a = 1.0{};", " + 1.0".repeat(room / 6)),
        ),
        (
            "a negation chain",
            format!("let a = {}1.0;", "-".repeat(room)),
        ),
        ("a not chain", format!("let a = {}true;", "!".repeat(room))),
        (
            "nested parentheses",
            format!(
                "let a = {}1.0{};",
                "(".repeat(room / 2),
                ")".repeat(room / 2)
            ),
        ),
        (
            "a swizzle chain",
            format!(
                "let v = vec2<f32>(1.0); let a = v{};",
                ".xy".repeat(room / 3)
            ),
        ),
    ];
    for (what, body) in forms {
        let text = wrap(body);
        assert!(text.len() <= MAX_WGSL_BYTES, "{what}: {} bytes", text.len());
        // Valid or not, naga answers.
        let _ = validate(&text);
        println!("{what}: {} bytes answered", text.len());
    }
    let over = " ".repeat(MAX_WGSL_BYTES + 1);
    let refused = validate(&over).expect_err("over the limit");
    assert!(
        refused.message.contains("over the 262144 bytes"),
        "{}",
        refused.message
    );
}

#[test]
fn a_long_wgsl_expression_under_the_limit_is_checked() {
    let graph = file::from_json(&long_expression_file(1_000)).expect("the file is well-formed");
    assert!(describe_graph(graph, &Library::EMPTY).is_ok());
}
