//! One test per check of `graph_core::check`: each builds a small `ir::Graph` by hand and asserts on the
//! diagnostic's exact location and the key words of its message and help.

#![forbid(unsafe_code)]

use graph_core::check::{CheckedDispatch, CheckedNode, SizeProgram};
use graph_core::deps::{Edge, EdgeOrigin, Hazard};
use graph_core::ir::{
    Access, AccessMode, Buffer, DispatchSpec, EdgeMode, ExplicitEdge, Graph, Kernel, KernelArg,
    KernelSource, Node, NodeKind, Param, ParamsStorage, Role,
};
use graph_core::library::{Library, LibraryArg, LibraryBinding, LibraryKernel};
use graph_core::schedule::Partition;
use graph_core::size::{SizeExpr, SizeStep};
use graph_core::types::ValueType;
use graph_core::{CheckedGraph, Diagnostic, Loc, check};

use AccessMode::{Read, ReadWrite, Write};

// ---------------------------------------------------------------------------------------------------------
// A tiny library for the library-kernel checks.

const SCALE_WGSL: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&output)) {
        output[gid.x] = alpha() * input[gid.x];
    }
}
";

static SCALE_BINDINGS: [LibraryBinding; 2] = [
    LibraryBinding {
        name: "input",
        mode: Read,
        elem: "f32",
        atomic: false,
    },
    LibraryBinding {
        name: "output",
        mode: Write,
        elem: "f32",
        atomic: false,
    },
];

static SCALE_ARGS: [LibraryArg; 1] = [LibraryArg {
    name: "alpha",
    ty: "f32",
}];

static MIX_ARGS: [LibraryArg; 2] = [
    LibraryArg {
        name: "wa",
        ty: "f32",
    },
    LibraryArg {
        name: "wb",
        ty: "f32",
    },
];

static KERNELS: [LibraryKernel; 3] = [
    LibraryKernel {
        path: "scale",
        summary: "output[i] = alpha * input[i]",
        bindings: &SCALE_BINDINGS,
        args: &SCALE_ARGS,
        source: SCALE_WGSL,
        pointwise: true,
        dispatch: "one invocation per element of the output",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "reduce::sum",
        summary: "output[0] = sum(input)",
        bindings: &SCALE_BINDINGS,
        args: &[],
        source: "@compute @workgroup_size(1)
fn main() {
    var total = 0.0;
    for (var i = 0u; i < arrayLength(&input); i++) { total += input[i]; }
    output[0] = total;
}
",
        pointwise: false,
        dispatch: "one invocation per element of the output",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "mix",
        summary: "output[i] = wa * input[i] + wb",
        bindings: &SCALE_BINDINGS,
        args: &MIX_ARGS,
        source: "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&output)) {
        output[gid.x] = wa() * input[gid.x] + wb();
    }
}
",
        pointwise: true,
        dispatch: "one invocation per element of the output",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
];

const LIB: Library = Library {
    kernels: &KERNELS,
    subgraphs: &[],
};

// ---------------------------------------------------------------------------------------------------------
// Builders.

fn param(name: &str, ty: &str) -> Param {
    Param {
        name: name.into(),
        ty: ty.into(),
    }
}

fn buffer(name: &str, elem: &str, len: Option<u64>, role: Role) -> Buffer {
    Buffer {
        name: name.into(),
        elem: elem.into(),
        len,
        role,
    }
}

fn input(name: &str) -> Buffer {
    buffer(name, "f32", None, Role::Input)
}

fn output(name: &str) -> Buffer {
    buffer(name, "f32", None, Role::Output)
}

fn inout(name: &str) -> Buffer {
    buffer(name, "f32", None, Role::InOut)
}

fn owned(name: &str, len: u64) -> Buffer {
    buffer(name, "f32", Some(len), Role::Owned)
}

fn accesses(list: &[(&str, AccessMode)]) -> Vec<Access> {
    list.iter()
        .map(|&(name, mode)| Access {
            binding: name.into(),
            buffer: name.into(),
            mode,
        })
        .collect()
}

fn kernel_with(
    name: &str,
    list: &[(&str, AccessMode)],
    text: &str,
    entry: Option<&str>,
    dispatch: DispatchSpec,
) -> Node {
    Node {
        name: name.into(),
        kind: NodeKind::Kernel(Kernel {
            accesses: accesses(list),
            source: KernelSource::Wgsl {
                text: text.into(),
                file: None,
            },
            entry: entry.map(Into::into),
            dispatch,
            args: Vec::new(),
            overrides: Vec::new(),
        }),
    }
}

/// An inline WGSL kernel, one invocation per element of the first buffer it writes.
fn kernel(name: &str, list: &[(&str, AccessMode)], text: &str) -> Node {
    kernel_with(name, list, text, None, DispatchSpec::Auto)
}

/// A library kernel; `bindings` are `(binding, buffer)`, `args` are `(name, wgsl)`.
fn lib_kernel(name: &str, path: &str, bindings: &[(&str, &str)], args: &[(&str, &str)]) -> Node {
    Node {
        name: name.into(),
        kind: NodeKind::Kernel(Kernel {
            accesses: bindings
                .iter()
                .map(|&(binding, buffer)| Access {
                    binding: binding.into(),
                    buffer: buffer.into(),
                    // Ignored for library kernels: the library fixes the mode.
                    mode: Read,
                })
                .collect(),
            source: KernelSource::Library(path.into()),
            entry: None,
            dispatch: DispatchSpec::Auto,
            args: args
                .iter()
                .map(|&(name, wgsl)| KernelArg {
                    name: name.into(),
                    wgsl: wgsl.into(),
                })
                .collect(),
            overrides: Vec::new(),
        }),
    }
}

fn host(name: &str, list: &[(&str, AccessMode)]) -> Node {
    Node {
        name: name.into(),
        kind: NodeKind::Host {
            accesses: accesses(list),
        },
    }
}

fn copy(name: &str, src: &str, dst: &str) -> Node {
    Node {
        name: name.into(),
        kind: NodeKind::Copy {
            src: src.into(),
            dst: dst.into(),
            src_range: None,
            dst_range: None,
        },
    }
}

fn edge(from: &str, to: &str) -> ExplicitEdge {
    ExplicitEdge {
        from: from.into(),
        to: to.into(),
    }
}

fn graph(params: Vec<Param>, buffers: Vec<Buffer>, nodes: Vec<Node>) -> Graph {
    Graph {
        name: "test".into(),
        params,
        buffers,
        nodes,
        ..Graph::default()
    }
}

fn errors(g: Graph) -> Vec<Diagnostic> {
    match check(g, &LIB) {
        Ok(_) => panic!("expected the graph to be refused"),
        Err(list) => list,
    }
}

/// The one diagnostic the graph gets.
fn single_error(g: Graph) -> Diagnostic {
    let list = errors(g);
    assert_eq!(list.len(), 1, "expected one diagnostic, got {list:#?}");
    list.into_iter().next().expect("one diagnostic")
}

fn checked(g: Graph) -> CheckedGraph {
    match check(g, &LIB) {
        Ok(c) => c,
        Err(list) => panic!("expected the graph to pass, got {list:#?}"),
    }
}

#[track_caller]
fn assert_message(d: &Diagnostic, words: &[&str]) {
    for w in words {
        assert!(d.message.contains(w), "message lacks {w:?}: {d:#?}");
    }
}

#[track_caller]
fn assert_help(d: &Diagnostic, words: &[&str]) {
    let help = d
        .help
        .as_deref()
        .unwrap_or_else(|| panic!("no help: {d:#?}"));
    for w in words {
        assert!(help.contains(w), "help lacks {w:?}: {d:#?}");
    }
}

/// `if (gid.x < params.n) { y[gid.x] = params.a * x[gid.x]; }`
const SCALE_XY: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.n) { y[gid.x] = params.a * x[gid.x]; }
}
";

/// Parameters `n: u32, a: f32`, input `x`, output `y`, and one kernel `scale` reading `x` and writing `y`
/// with `text`.
fn scale_graph(text: &str) -> Graph {
    graph(
        vec![param("n", "u32"), param("a", "f32")],
        vec![input("x"), output("y")],
        vec![kernel("scale", &[("x", Read), ("y", Write)], text)],
    )
}

/// The byte range of the first match of `needle` in `text`.
fn range_of(text: &str, needle: &str) -> std::ops::Range<usize> {
    let start = text.find(needle).expect("needle in text");
    start..start + needle.len()
}

// ---------------------------------------------------------------------------------------------------------
// Success.

#[test]
fn a_valid_graph_checks_with_edges_levels_workgroup_size_and_dispatch() {
    let mut g = graph(
        vec![param("n", "u32"), param("a", "f32")],
        vec![input("x"), owned("tmp", 256), output("y"), output("z")],
        vec![
            // 0: x -> tmp
            kernel(
                "first",
                &[("x", Read), ("tmp", Write)],
                "@compute @workgroup_size(8, 4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.n) { tmp[gid.x] = params.a * x[gid.x]; }
}
",
            ),
            // 1: tmp -> y
            lib_kernel(
                "second",
                "scale",
                &[("input", "tmp"), ("output", "y")],
                &[("alpha", "params.a")],
            ),
            // 2: reads y on the host
            host("inspect", &[("y", Read)]),
            // 3: independent of the rest
            copy("mirror", "x", "z"),
        ],
    );
    if let NodeKind::Kernel(k) = &mut g.nodes[1].kind {
        k.dispatch = DispatchSpec::Threads(vec![SizeExpr::param("n")]);
    }
    let c = checked(g);

    let tmp = 1;
    let y = 2;
    assert_eq!(
        c.edges,
        vec![
            Edge {
                from: 0,
                to: 1,
                origin: EdgeOrigin::Inferred {
                    buffer: tmp,
                    hazard: Hazard::ReadAfterWrite
                }
            },
            Edge {
                from: 1,
                to: 2,
                origin: EdgeOrigin::Inferred {
                    buffer: y,
                    hazard: Hazard::ReadAfterWrite
                }
            },
        ]
    );
    assert_eq!(c.schedule.order, vec![0, 1, 2, 3]);
    assert_eq!(c.schedule.levels, vec![vec![0, 3], vec![1], vec![2]]);
    assert_eq!(
        c.schedule.partitions,
        vec![
            Partition::Gpu {
                levels: vec![vec![0, 3], vec![1]]
            },
            Partition::Host { nodes: vec![2] },
        ]
    );
    assert_eq!(c.params.size, 8);
    assert_eq!(c.buffer_types, vec![ValueType::F32; 4]);

    let CheckedNode::Kernel(first) = &c.nodes[0] else {
        panic!("node 0 is a kernel: {:?}", c.nodes[0]);
    };
    assert_eq!(first.entry, "main");
    assert_eq!(first.workgroup_size, [8, 4, 1]);
    assert_eq!(first.dispatch, CheckedDispatch::BufferLen(tmp));
    assert!(!first.pointwise);
    assert_eq!(
        first.declarations,
        "@group(0) @binding(0) var<storage, read> x: array<f32>;\n\
         @group(0) @binding(1) var<storage, read_write> tmp: array<f32>;\n"
    );

    let CheckedNode::Kernel(second) = &c.nodes[1] else {
        panic!("node 1 is a kernel: {:?}", c.nodes[1]);
    };
    assert_eq!(second.workgroup_size, [64, 1, 1]);
    assert_eq!(
        second.dispatch,
        CheckedDispatch::Threads(vec![SizeProgram {
            text: "params.n".into(),
            steps: vec![SizeStep::Param(0)],
        }])
    );
    assert!(second.pointwise);
    assert_eq!(
        second.args,
        vec![("alpha".into(), "f32".into(), "params.a".into())]
    );
    let modes: Vec<AccessMode> = second.bindings.iter().map(|b| b.mode).collect();
    assert_eq!(
        modes,
        vec![Read, Write],
        "library modes replace the graph's"
    );

    assert!(matches!(&c.nodes[2], CheckedNode::Host { accesses } if accesses.len() == 1));
    assert!(
        matches!(&c.nodes[3], CheckedNode::Copy { src_range, dst_range } if src_range.buffer == 0 && dst_range.buffer == 3)
    );
}

#[test]
fn an_empty_graph_checks() {
    let c = checked(graph(vec![], vec![], vec![]));
    assert!(c.schedule.order.is_empty() && c.schedule.levels.is_empty() && c.edges.is_empty());
}

// ---------------------------------------------------------------------------------------------------------
// Names.

#[test]
fn duplicate_node_is_reported_at_the_second() {
    let d = single_error(graph(
        vec![],
        vec![],
        vec![host("a", &[]), host("b", &[]), host("a", &[])],
    ));
    assert_eq!(d.loc, Loc::Node(2));
    assert_message(&d, &["duplicate node `a`"]);
    assert_help(&d, &["declared earlier"]);
}

#[test]
fn duplicate_buffer_is_reported_at_the_second() {
    let d = single_error(graph(vec![], vec![input("x"), input("x")], vec![]));
    assert_eq!(d.loc, Loc::Buffer(1));
    assert_message(&d, &["duplicate buffer `x`"]);
}

#[test]
fn duplicate_param_is_reported_at_the_second() {
    let d = single_error(graph(
        vec![param("a", "f32"), param("b", "f32"), param("a", "u32")],
        vec![],
        vec![],
    ));
    assert_eq!(d.loc, Loc::Param(2));
    assert_message(&d, &["duplicate parameter `a`"]);
}

#[test]
fn unknown_buffer_in_an_access_suggests_the_close_one() {
    let d = single_error(graph(
        vec![],
        vec![input("input"), inout("output")],
        vec![host("h", &[("input", Read), ("ouput", Write)])],
    ));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 1 });
    assert_message(&d, &["unknown buffer `ouput`"]);
    assert_help(&d, &["did you mean `output`?"]);
}

#[test]
fn unknown_buffer_with_nothing_close_lists_the_buffers() {
    let list = errors(graph(
        vec![],
        vec![input("alpha"), inout("beta")],
        vec![host("h", &[("zzz", Read)])],
    ));
    let d = &list[0];
    assert_eq!(d.loc, Loc::Access { node: 0, index: 0 });
    assert_message(d, &["unknown buffer `zzz`"]);
    assert_help(d, &["the declared buffers are `alpha`, `beta`"]);
}

#[test]
fn a_node_naming_one_buffer_twice_is_refused() {
    let d = single_error(graph(
        vec![],
        vec![inout("x")],
        vec![host("h", &[("x", Read), ("x", Write)])],
    ));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 1 });
    assert_message(&d, &["node `h` names buffer `x` twice"]);
    assert_help(&d, &["widest access"]);
}

#[test]
fn unknown_node_in_an_explicit_edge() {
    let mut g = graph(
        vec![],
        vec![],
        vec![host("produce", &[]), host("consume", &[])],
    );
    g.edges = vec![edge("produce", "consme"), edge("nobody", "consume")];
    let list = errors(g);
    assert_eq!(list.len(), 2, "{list:#?}");
    assert_eq!(list[0].loc, Loc::EdgeTo(0));
    assert_message(&list[0], &["unknown node `consme`"]);
    assert_help(&list[0], &["did you mean `consume`?"]);
    assert_eq!(list[1].loc, Loc::EdgeFrom(1));
    assert_message(&list[1], &["unknown node `nobody`"]);
    assert_help(&list[1], &["`produce`, `consume`"]);
}

// ---------------------------------------------------------------------------------------------------------
// Types.

#[test]
fn bool_parameter_is_refused() {
    let d = single_error(graph(
        vec![param("n", "u32"), param("flag", "bool")],
        vec![],
        vec![],
    ));
    assert_eq!(d.loc, Loc::ParamType(1));
    assert_message(&d, &["parameter `flag`", "`bool`", "host-shareable", "u32"]);
}

#[test]
fn parameter_block_over_128_bytes_is_refused_for_push_constants() {
    let params: Vec<Param> = (0..9)
        .map(|i| param(&format!("p{i}"), "vec4<f32>"))
        .collect();
    let d = single_error(graph(params.clone(), vec![], vec![]));
    assert_eq!(d.loc, Loc::ParamsBlock);
    assert_message(&d, &["144 bytes", "128-byte", "`p8` ends at byte 144"]);
    assert_help(&d, &["uniform"]);

    // A uniform buffer has no such budget, and the kernel sees `params` through it.
    let mut g = graph(
        params,
        vec![output("y")],
        vec![kernel(
            "k",
            &[("y", Write)],
            "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) { y[gid.x] = params.p8.w; }
",
        )],
    );
    g.params_storage = ParamsStorage::Uniform;
    let c = checked(g);
    assert_eq!(c.params.size, 144);
}

#[test]
fn parameter_block_of_exactly_128_bytes_fits() {
    let params: Vec<Param> = (0..8)
        .map(|i| param(&format!("p{i}"), "vec4<f32>"))
        .collect();
    assert_eq!(checked(graph(params, vec![], vec![])).params.size, 128);
}

#[test]
fn vec3_buffer_element_is_refused() {
    let d = single_error(graph(
        vec![],
        vec![input("x"), buffer("points", "vec3<f32>", None, Role::Input)],
        vec![],
    ));
    assert_eq!(d.loc, Loc::BufferType(1));
    assert_message(
        &d,
        &["buffer `points`", "`vec3<f32>`", "padding", "vec4<f32>"],
    );
}

#[test]
fn unknown_buffer_element_is_refused() {
    let d = single_error(graph(
        vec![],
        vec![buffer("x", "f64", None, Role::Input)],
        vec![],
    ));
    assert_eq!(d.loc, Loc::BufferType(0));
    assert_message(&d, &["`f64` cannot be a buffer element"]);
}

#[test]
fn copy_between_element_types_is_refused() {
    let d = single_error(graph(
        vec![],
        vec![input("x"), buffer("y", "u32", None, Role::Output)],
        vec![copy("c", "x", "y")],
    ));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 1 });
    assert_message(
        &d,
        &["copy `c` moves `f32` elements from `x` into `y`, which holds `u32`"],
    );
}

// ---------------------------------------------------------------------------------------------------------
// Buffers and roles.

#[test]
fn graph_owned_buffer_needs_a_length() {
    let d = single_error(graph(
        vec![],
        vec![buffer("tmp", "f32", None, Role::Owned)],
        vec![],
    ));
    assert_eq!(d.loc, Loc::Buffer(0));
    assert_message(&d, &["graph-owned buffer `tmp` needs a length"]);
    assert_help(&d, &["`tmp: [f32; N]`", "= input"]);
}

#[test]
fn zero_length_buffer_is_refused() {
    let d = single_error(graph(vec![], vec![owned("tmp", 0)], vec![]));
    assert_eq!(d.loc, Loc::Buffer(0));
    assert_message(&d, &["buffer `tmp` has length 0"]);
}

#[test]
fn writing_an_input_is_refused() {
    let d = single_error(graph(
        vec![],
        vec![input("x")],
        vec![host("h", &[("x", ReadWrite)])],
    ));
    assert_eq!(d.loc, Loc::AccessMode { node: 0, index: 0 });
    assert_message(&d, &["node `h` writes `x`", "`input`"]);
    assert_help(&d, &["`inout`"]);

    // A copy has no mode to point at: the destination itself.
    let d = single_error(graph(
        vec![],
        vec![input("x"), input("y")],
        vec![copy("c", "x", "y")],
    ));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 1 });
    assert_message(&d, &["node `c` writes `y`"]);
}

#[test]
fn output_never_written_is_refused() {
    let d = single_error(graph(
        vec![],
        vec![input("x"), output("y")],
        vec![host("h", &[("x", Read), ("y", Read)])],
    ));
    assert_eq!(d.loc, Loc::Buffer(1));
    assert_message(&d, &["output `y` is never written"]);
    assert_help(&d, &["`input`"]);
}

// ---------------------------------------------------------------------------------------------------------
// Topology.

#[test]
fn cycle_through_explicit_edges_lists_its_path_at_the_closing_edge() {
    let mut g = graph(
        vec![],
        vec![],
        vec![host("a", &[]), host("b", &[]), host("c", &[])],
    );
    g.edges = vec![edge("a", "b"), edge("c", "a"), edge("b", "c")];
    let d = single_error(g);
    assert_eq!(d.loc, Loc::Edge(2));
    assert_eq!(
        d.message,
        "this edge closes a cycle: `a` -> `b` (explicit edge) -> `c` (explicit edge) -> `a` (explicit edge)"
    );
    assert_help(&d, &["acyclic"]);
}

#[test]
fn explicit_self_edge_is_a_cycle() {
    let mut g = graph(vec![], vec![], vec![host("a", &[])]);
    g.edges = vec![edge("a", "a")];
    let d = single_error(g);
    assert_eq!(d.loc, Loc::Edge(0));
    assert_message(&d, &["`a` -> `a` (explicit edge)"]);
}

#[test]
fn cycle_mixing_an_explicit_edge_with_inferred_ones() {
    // `w` writes `buf`, `m` reads it and writes `out`, `r` reads `out`: inferred w -> m -> r; `r -> w`
    // closes the loop.
    let mut g = graph(
        vec![],
        vec![inout("buf"), inout("out")],
        vec![
            host("w", &[("buf", Write)]),
            host("m", &[("buf", Read), ("out", Write)]),
            host("r", &[("out", Read)]),
        ],
    );
    g.edges = vec![edge("r", "w")];
    let d = single_error(g);
    assert_eq!(d.loc, Loc::Edge(0));
    assert_eq!(
        d.message,
        "this edge closes a cycle: `w` -> `m` (reads `buf` after `w` writes it) -> `r` (reads `out` after `m` \
         writes it) -> `w` (explicit edge)"
    );
}

#[test]
fn cycle_through_write_after_read_and_write_after_write() {
    // r reads b (0), w1 writes b: WAR r -> w1; w2 writes b: WAW w1 -> w2; w2 -> r closes it.
    let mut g = graph(
        vec![],
        vec![inout("b")],
        vec![
            host("r", &[("b", Read)]),
            host("w1", &[("b", Write)]),
            host("w2", &[("b", Write)]),
        ],
    );
    g.edges = vec![edge("w2", "r")];
    let d = single_error(g);
    assert_eq!(d.loc, Loc::Edge(0));
    assert_message(
        &d,
        &[
            "`r` -> `w1` (writes `b` after `r` reads it)",
            "-> `w2` (writes `b` after `w1` does)",
            "-> `r` (explicit edge)",
        ],
    );
}

#[test]
fn explicit_only_mode_reports_races_and_an_edge_orders_them() {
    let race = |edges: Vec<ExplicitEdge>| {
        let mut g = graph(
            vec![],
            vec![inout("buf")],
            vec![host("a", &[("buf", Write)]), host("b", &[("buf", Read)])],
        );
        g.edge_mode = EdgeMode::ExplicitOnly;
        g.edges = edges;
        g
    };
    let d = single_error(race(vec![]));
    assert_eq!(d.loc, Loc::Access { node: 1, index: 0 });
    assert_eq!(
        d.message,
        "data race on `buf`: `a` writes it and `b` reads it, and no path of edges orders them"
    );
    assert_help(&d, &["add `a -> b;`"]);

    let c = checked(race(vec![edge("a", "b")]));
    assert_eq!(c.edges.len(), 1);
    assert_eq!(c.edges[0].origin, EdgeOrigin::Explicit(0));

    // The other direction orders them too.
    checked(race(vec![edge("b", "a")]));
}

#[test]
fn explicit_only_mode_lets_readers_run_unordered() {
    let mut g = graph(
        vec![],
        vec![input("buf")],
        vec![host("a", &[("buf", Read)]), host("b", &[("buf", Read)])],
    );
    g.edge_mode = EdgeMode::ExplicitOnly;
    let c = checked(g);
    assert_eq!(c.schedule.levels, vec![vec![0, 1]]);
}

#[test]
fn explicit_only_mode_accepts_an_order_through_a_third_node() {
    let mut g = graph(
        vec![],
        vec![inout("buf")],
        vec![
            host("a", &[("buf", Write)]),
            host("mid", &[]),
            host("b", &[("buf", Write)]),
        ],
    );
    g.edge_mode = EdgeMode::ExplicitOnly;
    g.edges = vec![edge("a", "mid"), edge("mid", "b")];
    checked(g);
}

#[test]
fn reading_a_graph_owned_buffer_nothing_wrote_is_refused() {
    let d = single_error(graph(
        vec![],
        vec![owned("tmp", 16)],
        vec![host("r", &[("tmp", Read)])],
    ));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 0 });
    assert_eq!(
        d.message,
        "`r` reads graph-owned buffer `tmp`, but no node writes it before"
    );
    assert_help(&d, &["earlier node"]);

    // Written only after the read (in declaration order, so the inferred edge is r -> w): still refused.
    let d = single_error(graph(
        vec![],
        vec![owned("tmp", 16)],
        vec![host("r", &[("tmp", Read)]), host("w", &[("tmp", Write)])],
    ));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 0 });

    // Written before: fine.
    checked(graph(
        vec![],
        vec![owned("tmp", 16)],
        vec![host("w", &[("tmp", Write)]), host("r", &[("tmp", Read)])],
    ));
}

// ---------------------------------------------------------------------------------------------------------
// WGSL.

#[test]
fn the_scale_kernel_checks() {
    let c = checked(scale_graph(SCALE_XY));
    let CheckedNode::Kernel(k) = &c.nodes[0] else {
        panic!("a kernel");
    };
    assert_eq!(k.workgroup_size, [64, 1, 1]);
    assert_eq!(k.dispatch, CheckedDispatch::BufferLen(1));
    assert_eq!(k.source, SCALE_XY);
}

#[test]
fn unknown_param_in_wgsl_points_at_the_name() {
    let text = SCALE_XY.replace("params.a", "params.alhpa");
    let d = single_error(scale_graph(&text));
    assert_eq!(
        d.loc,
        Loc::Wgsl {
            node: 0,
            range: range_of(&text, "alhpa")
        }
    );
    assert_message(&d, &["unknown parameter `alhpa`"]);
    assert_help(&d, &["the declared parameters are `n`, `a`"]);

    let text = SCALE_XY.replace("params.n", "params.nn");
    let d = single_error(scale_graph(&text));
    assert_eq!(
        d.loc,
        Loc::Wgsl {
            node: 0,
            range: range_of(&text, "nn")
        }
    );
    assert_help(&d, &["did you mean `n`?"]);
}

#[test]
fn wgsl_syntax_error_points_into_the_kernel() {
    let text = SCALE_XY.replace("if (gid.x", "let v = ;\n    if (gid.x");
    let d = single_error(scale_graph(&text));
    let Loc::Wgsl { node: 0, range } = &d.loc else {
        panic!("expected a WGSL location: {d:#?}");
    };
    assert_eq!(&text[range.clone()], ";", "{d:#?}");
    assert_message(&d, &["WGSL error in kernel `scale`"]);
}

#[test]
fn wgsl_type_error_points_into_the_kernel() {
    let text = SCALE_XY.replace("if (gid.x", "let v: u32 = 1.5;\n    if (gid.x");
    let d = single_error(scale_graph(&text));
    let Loc::Wgsl { node: 0, range } = &d.loc else {
        panic!("expected a WGSL location: {d:#?}");
    };
    // naga points at the binding whose type does not match.
    assert_eq!(&text[range.clone()], "v", "{d:#?}");
    assert_message(&d, &["WGSL error in kernel `scale`", "`u32`"]);
}

#[test]
fn storing_to_a_buffer_declared_read_is_a_wgsl_error() {
    let text = SCALE_XY.replace("y[gid.x] = params.a * x[gid.x];", "x[gid.x] = params.a;");
    let g = graph(
        vec![param("n", "u32"), param("a", "f32")],
        vec![inout("x")],
        vec![kernel_with(
            "scale",
            &[("x", Read)],
            &text,
            None,
            DispatchSpec::Threads(vec![SizeExpr::param("n")]),
        )],
    );
    let d = single_error(g);
    let Loc::Wgsl { node: 0, range } = &d.loc else {
        panic!("expected a WGSL location: {d:#?}");
    };
    assert_eq!(&text[range.clone()], "x[gid.x]", "{d:#?}");
    assert_message(&d, &["kernel `scale` writes `x`, which it declares `read`"]);
}

#[test]
fn kernel_without_a_compute_entry_point() {
    let text = "fn helper(i: u32) { y[i] = params.a * x[i]; }\n";
    let d = single_error(scale_graph(text));
    assert_eq!(d.loc, Loc::KernelSource(0));
    assert_message(&d, &["kernel `scale` has no `@compute` entry point"]);
    assert_help(&d, &["@compute @workgroup_size(64)"]);
}

const TWO_ENTRIES: &str = "@compute @workgroup_size(64)
fn first(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.n) { y[gid.x] = params.a * x[gid.x]; }
}
@compute @workgroup_size(32)
fn second(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.n) { y[gid.x] = x[gid.x]; }
}
";

#[test]
fn several_entry_points_and_none_chosen() {
    let d = single_error(scale_graph(TWO_ENTRIES));
    assert_eq!(d.loc, Loc::KernelSource(0));
    assert_message(&d, &["several compute entry points (`first`, `second`)"]);
    assert_help(&d, &["entry(first)"]);
}

#[test]
fn choosing_one_of_several_entry_points() {
    let mut g = scale_graph(TWO_ENTRIES);
    if let NodeKind::Kernel(k) = &mut g.nodes[0].kind {
        k.entry = Some("second".into());
    }
    let c = checked(g);
    let CheckedNode::Kernel(k) = &c.nodes[0] else {
        panic!("a kernel");
    };
    assert_eq!((k.entry.as_str(), k.workgroup_size), ("second", [32, 1, 1]));
}

#[test]
fn entry_naming_a_missing_entry_point() {
    let mut g = scale_graph(TWO_ENTRIES);
    if let NodeKind::Kernel(k) = &mut g.nodes[0].kind {
        k.entry = Some("secnod".into());
    }
    let d = single_error(g);
    assert_eq!(d.loc, Loc::KernelEntry(0));
    assert_message(&d, &["kernel `scale` has no compute entry point `secnod`"]);
    assert_help(&d, &["did you mean `second`?"]);
}

#[test]
fn declared_write_but_the_kernel_reads() {
    let text = SCALE_XY.replace("params.a * x[gid.x]", "y[gid.x] + x[gid.x]");
    let d = single_error(scale_graph(&text));
    assert_eq!(d.loc, Loc::AccessMode { node: 0, index: 1 });
    assert_message(&d, &["kernel `scale` reads `y`, which it declares `write`"]);
    assert_help(&d, &["`read_write`"]);
}

#[test]
fn declared_read_write_but_never_written() {
    let text = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.n) { x[gid.x] = params.a * y[gid.x]; }
}
";
    let g = graph(
        vec![param("n", "u32"), param("a", "f32")],
        vec![inout("x"), inout("y")],
        vec![kernel("k", &[("x", Write), ("y", ReadWrite)], text)],
    );
    let d = single_error(g);
    assert_eq!(d.loc, Loc::AccessMode { node: 0, index: 1 });
    assert_message(
        &d,
        &["kernel `k` never writes `y`, which it declares `read_write`"],
    );
    assert_help(&d, &["declare it `read`"]);
}

#[test]
fn declared_but_unused() {
    let g = graph(
        vec![param("n", "u32"), param("a", "f32")],
        vec![input("x"), output("y"), input("spare")],
        vec![kernel(
            "scale",
            &[("x", Read), ("y", Write), ("spare", Read)],
            SCALE_XY,
        )],
    );
    let d = single_error(g);
    assert_eq!(d.loc, Loc::AccessMode { node: 0, index: 2 });
    assert_message(&d, &["declares `spare` but its entry point never uses it"]);
    assert_help(&d, &["remove `spare`"]);
}

#[test]
fn array_length_alone_counts_as_a_use() {
    let g = graph(
        vec![param("a", "f32")],
        vec![input("x"), output("y")],
        vec![kernel(
            "k",
            &[("x", Read), ("y", Write)],
            "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&x)) { y[gid.x] = params.a; }
}
",
        )],
    );
    checked(g);
}

#[test]
fn kernel_writing_nothing_needs_an_explicit_dispatch() {
    let text = "@compute @workgroup_size(1)
fn main() { let v = x[0]; }
";
    let d = single_error(graph(
        vec![],
        vec![input("x")],
        vec![kernel("k", &[("x", Read)], text)],
    ));
    assert_eq!(d.loc, Loc::Node(0));
    assert_message(&d, &["kernel `k` writes no buffer"]);
    assert_help(&d, &["threads(..)"]);

    checked(graph(
        vec![],
        vec![input("x")],
        vec![kernel_with(
            "k",
            &[("x", Read)],
            text,
            None,
            DispatchSpec::Workgroups(vec![SizeExpr::Literal(1)]),
        )],
    ));
}

// ---------------------------------------------------------------------------------------------------------
// Library kernels.

fn library_graph(node: Node) -> Graph {
    graph(
        vec![param("a", "f32"), param("v", "vec2<f32>")],
        vec![
            input("x"),
            output("y"),
            buffer("ints", "u32", None, Role::Input),
        ],
        vec![node],
    )
}

#[test]
fn library_kernel_checks() {
    let c = checked(library_graph(lib_kernel(
        "s",
        "scale",
        &[("output", "y"), ("input", "x")],
        &[("alpha", "2.0")],
    )));
    let CheckedNode::Kernel(k) = &c.nodes[0] else {
        panic!("a kernel");
    };
    // The graph's order of bindings is kept; the modes come from the library.
    let bound: Vec<(usize, AccessMode)> = k.bindings.iter().map(|b| (b.buffer, b.mode)).collect();
    assert_eq!(bound, vec![(1, Write), (0, Read)]);
    assert_eq!(k.dispatch, CheckedDispatch::BufferLen(1));
}

/// The diagnostics at `loc`, for tests about one of several.
fn at(list: &[Diagnostic], loc: &Loc) -> Vec<Diagnostic> {
    list.iter().filter(|d| d.loc == *loc).cloned().collect()
}

#[test]
fn unknown_library_path() {
    let list = errors(library_graph(lib_kernel(
        "s",
        "scal",
        &[("input", "x"), ("output", "y")],
        &[("alpha", "2.0")],
    )));
    let d = &list[0];
    assert_eq!(d.loc, Loc::KernelSource(0));
    assert_eq!(d.message, "unknown library kernel `kernels::scal`");
    assert_help(d, &["did you mean `kernels::scale`?"]);

    let list = errors(library_graph(lib_kernel(
        "s",
        "nothing_like_it",
        &[("input", "x"), ("output", "y")],
        &[],
    )));
    assert_eq!(list[0].loc, Loc::KernelSource(0));
    assert_help(
        &list[0],
        &["the library has `kernels::scale`, `kernels::reduce::sum`, `kernels::mix`"],
    );
}

#[test]
fn unknown_library_binding() {
    let list = errors(library_graph(lib_kernel(
        "s",
        "scale",
        &[("inpt", "x"), ("output", "y")],
        &[("alpha", "2.0")],
    )));
    // One typo, one error: the suggested `input` is not also reported missing.
    assert_eq!(list.len(), 1, "{list:#?}");
    assert_eq!(list[0].loc, Loc::AccessMode { node: 0, index: 0 });
    assert_eq!(list[0].message, "`kernels::scale` has no binding `inpt`");
    assert_help(&list[0], &["did you mean `input`?"]);
}

#[test]
fn missing_library_binding() {
    let mut g = library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "x")],
        &[("alpha", "2.0")],
    ));
    g.buffers[1].role = Role::InOut;
    let list = errors(g);
    let found = at(&list, &Loc::KernelSource(0));
    assert_eq!(found.len(), 1, "{list:#?}");
    assert_eq!(
        found[0].message,
        "`kernels::scale` needs a buffer for binding `output`"
    );
    assert_help(
        &found[0],
        &["`output: BUFFER`", "`f32` elements", "overwrite"],
    );
}

#[test]
fn library_binding_of_the_wrong_element_type() {
    let list = errors(library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "ints"), ("output", "y")],
        &[("alpha", "2.0")],
    )));
    let found = at(&list, &Loc::Access { node: 0, index: 0 });
    assert_eq!(found.len(), 1, "{list:#?}");
    assert_eq!(
        found[0].message,
        "`kernels::scale` binding `input` takes `array<f32>`, but buffer `ints` holds `u32`"
    );
}

#[test]
fn library_modes_apply_to_the_role_checks() {
    // `x`, an input, is bound to the library's `output` (write); `y`, an output, to its `input` (read).
    let list = errors(library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "y"), ("output", "x")],
        &[("alpha", "2.0")],
    )));
    assert_eq!(list.len(), 2, "{list:#?}");
    assert_eq!(list[0].loc, Loc::Access { node: 0, index: 1 });
    assert_eq!(
        list[0].message,
        "node `s` writes `x`, which is an `input` of the graph"
    );
    assert_eq!(list[1].loc, Loc::Buffer(1));
    assert_message(&list[1], &["output `y` is never written"]);
}

#[test]
fn unknown_library_argument() {
    let list = errors(library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "x"), ("output", "y")],
        &[("alph", "2.0")],
    )));
    let unknown = at(&list, &Loc::KernelArg { node: 0, index: 0 });
    assert_eq!(unknown.len(), 1, "{list:#?}");
    assert_eq!(
        unknown[0].message,
        "`kernels::scale` has no argument `alph`"
    );
    assert_help(&unknown[0], &["did you mean `alpha`?"]);
    // One typo, one error: the suggested `alpha` is not also reported missing.
    assert_eq!(list.len(), 1, "{list:#?}");
}

#[test]
fn missing_library_argument() {
    let list = errors(library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "x"), ("output", "y")],
        &[],
    )));
    let found = at(&list, &Loc::KernelSource(0));
    assert_eq!(found.len(), 1, "{list:#?}");
    assert_eq!(found[0].message, "`kernels::scale` needs argument `alpha`");
    assert_help(&found[0], &["`alpha:", "f32"]);
}

#[test]
fn library_argument_of_the_wrong_type() {
    let d = single_error(library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "x"), ("output", "y")],
        &[("alpha", "params.v")],
    )));
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_eq!(
        d.message,
        "argument `alpha` of `kernels::scale` takes a `f32`, but `params.v` is a `vec2<f32>`"
    );
}

#[test]
fn library_arguments_are_not_converted() {
    // A `u32` parameter where an `f32` is wanted used to be converted silently.
    let mut g = library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "x"), ("output", "y")],
        &[("alpha", "params.n")],
    ));
    g.params.push(param("n", "u32"));
    let d = single_error(g);
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_message(&d, &["takes a `f32`, but `params.n` is a `u32`"]);
    // An abstract literal takes the argument's type, as WGSL says.
    checked(library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "x"), ("output", "y")],
        &[("alpha", "2")],
    )));
}

#[test]
fn library_argument_error_points_at_the_argument_as_the_graph_orders_them() {
    // `wb` is the library's second argument but the graph's first.
    let d = single_error(library_graph(lib_kernel(
        "m",
        "mix",
        &[("input", "x"), ("output", "y")],
        &[("wb", "params.v"), ("wa", "params.a")],
    )));
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_message(&d, &["argument `wb`", "`params.v` is a `vec2<f32>`"]);
}

#[test]
fn library_argument_naming_an_unknown_parameter() {
    let d = single_error(library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "x"), ("output", "y")],
        &[("alpha", "params.b")],
    )));
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_message(&d, &["unknown parameter `b`"]);
}

// ---------------------------------------------------------------------------------------------------------
// Kernels read from a `.wgsl` file get a snippet of the file in their note.

fn file_kernel(text: &str) -> Graph {
    graph(
        vec![param("n", "u32")],
        vec![output("y")],
        vec![Node {
            name: "k".into(),
            kind: NodeKind::Kernel(Kernel {
                accesses: accesses(&[("y", Write)]),
                source: KernelSource::Wgsl {
                    text: text.into(),
                    file: Some("shaders/k.wgsl".into()),
                },
                entry: None,
                dispatch: DispatchSpec::Auto,
                args: vec![],
                overrides: Vec::new(),
            }),
        }],
    )
}

#[test]
fn file_kernel_errors_carry_a_snippet() {
    let text = "@compute @workgroup_size(1)\nfn main() { y[0] = f32(params.m); }\n";
    let d = single_error(file_kernel(text));
    let m = range_of(text, "params.m").end - 1;
    assert_eq!(
        d.loc,
        Loc::Wgsl {
            node: 0,
            range: m..m + 1
        }
    );
    assert_eq!(
        d.note.as_deref(),
        Some(
            "shaders/k.wgsl:2:31\n  | fn main() { y[0] = f32(params.m); }\n  |                               ^"
        )
    );

    let text = "@compute @workgroup_size(1)\nfn main() { y[0] = ; }\n";
    let d = single_error(file_kernel(text));
    assert_message(&d, &["WGSL error in kernel `k`"]);
    assert_eq!(
        d.note.as_deref(),
        Some("shaders/k.wgsl:2:20\n  | fn main() { y[0] = ; }\n  |                    ^")
    );
}

// ---------------------------------------------------------------------------------------------------------
// Problems found by these tests and since fixed: library bindings, arguments and paths.

#[test]
fn library_binding_problems_do_not_cascade_into_naga_errors() {
    let cases: Vec<(&str, Graph)> = vec![
        ("missing binding", {
            let mut g = library_graph(lib_kernel(
                "s",
                "scale",
                &[("input", "x")],
                &[("alpha", "2.0")],
            ));
            g.buffers[1].role = Role::InOut;
            g
        }),
        (
            "wrong element type",
            library_graph(lib_kernel(
                "s",
                "scale",
                &[("input", "ints"), ("output", "y")],
                &[("alpha", "2.0")],
            )),
        ),
        (
            "missing argument",
            library_graph(lib_kernel(
                "s",
                "scale",
                &[("input", "x"), ("output", "y")],
                &[],
            )),
        ),
    ];
    let extra: Vec<(&str, Vec<Diagnostic>)> = cases
        .into_iter()
        .map(|(what, g)| (what, errors(g)))
        .filter(|(_, list)| list.len() != 1)
        .collect();
    assert!(extra.is_empty(), "more than one diagnostic: {extra:#?}");
}

#[test]
fn unknown_library_path_does_not_report_its_outputs_unwritten() {
    let list = errors(library_graph(lib_kernel(
        "s",
        "scal",
        &[("input", "x"), ("output", "y")],
        &[("alpha", "2.0")],
    )));
    assert_eq!(list.len(), 1, "{list:#?}");
}

#[test]
fn library_argument_given_twice_is_refused() {
    let list = errors(library_graph(lib_kernel(
        "s",
        "scale",
        &[("input", "x"), ("output", "y")],
        &[("alpha", "2.0"), ("alpha", "3.0")],
    )));
    assert_eq!(list.len(), 1, "{list:#?}");
    assert_eq!(list[0].loc, Loc::KernelArg { node: 0, index: 1 });
}

#[test]
fn library_binding_bound_twice_is_refused_by_the_graph_check() {
    let g = graph(
        vec![],
        vec![input("x"), input("x2"), output("y")],
        vec![lib_kernel(
            "s",
            "scale",
            &[("input", "x"), ("input", "x2"), ("output", "y")],
            &[("alpha", "2.0")],
        )],
    );
    let d = single_error(g);
    assert_eq!(d.loc, Loc::Access { node: 0, index: 1 });
}

#[test]
fn wgsl_reserved_words_cannot_name_buffers_or_parameters() {
    let g = graph(
        vec![param("target", "u32")],
        vec![
            buffer("params", "f32", Some(4), Role::Input),
            buffer("loop", "f32", Some(4), Role::Input),
        ],
        vec![],
    );
    let list = errors(g);
    let locs: Vec<&Loc> = list.iter().map(|d| &d.loc).collect();
    assert_eq!(
        locs,
        vec![&Loc::Buffer(0), &Loc::Buffer(1), &Loc::Param(0)],
        "{list:#?}"
    );
    assert!(
        list[0].message.contains("`params` cannot name a buffer"),
        "{list:#?}"
    );
}

#[test]
fn a_kernel_declaring_its_own_resource_is_refused_at_the_declaration() {
    let text = "@group(0) @binding(7) var<storage, read_write> extra: array<f32>;\n\
                @compute @workgroup_size(64)\n\
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) { y[gid.x] = x[gid.x] + extra[gid.x]; }\n";
    let d = single_error(scale_graph(text));
    let Loc::Wgsl { node: 0, range } = &d.loc else {
        panic!("expected a WGSL location: {d:#?}")
    };
    assert!(text[range.clone()].contains("extra"), "{d:#?}");
    assert_message(&d, &["declares its own resource `extra`"]);
}

#[test]
fn a_workgroup_size_from_an_override_is_left_to_bake_and_one_from_an_expression_is_refused() {
    let named = "override WG: u32 = 64;\n\
                 @compute @workgroup_size(WG)\n\
                 fn main(@builtin(global_invocation_id) gid: vec3<u32>) { y[gid.x] = x[gid.x]; }\n";
    let c = checked(scale_graph(named));
    let CheckedNode::Kernel(k) = &c.nodes[0] else {
        panic!("a kernel")
    };
    // Bake computes the axis the override sizes; the kernel is not fused (it is not pointwise now).
    assert_eq!((k.workgroup_size, k.pointwise), ([0, 1, 1], false));
    let product = named.replace("workgroup_size(WG)", "workgroup_size(WG * 2)");
    let d = single_error(scale_graph(&product));
    assert_eq!(d.loc, Loc::Node(0));
    assert_message(&d, &["an expression of `override`s"]);
}

#[test]
fn lengths_past_u32_and_double_underscore_names_are_refused() {
    let g = graph(
        vec![param("__pad0", "f32")],
        vec![buffer("big", "f32", Some(1 << 33), Role::Input)],
        vec![],
    );
    let list = errors(g);
    let locs: Vec<&Loc> = list.iter().map(|d| &d.loc).collect();
    assert_eq!(locs, vec![&Loc::Param(0), &Loc::Buffer(0)], "{list:#?}");
}

// ---------------------------------------------------------------------------------------------------------
// Dispatch sizes.

/// `scale_graph` with a `threads(..)` clause of `dims`, and the extra parameters `extra`.
fn sized(dims: Vec<SizeExpr>, extra: &[(&str, &str)]) -> Graph {
    let mut g = scale_graph(SCALE_XY);
    g.params.extend(extra.iter().map(|&(n, t)| param(n, t)));
    if let NodeKind::Kernel(k) = &mut g.nodes[0].kind {
        k.dispatch = DispatchSpec::Threads(dims);
    }
    g
}

fn term(dim: usize, term: usize) -> Loc {
    Loc::SizeTerm { node: 0, dim, term }
}

fn dispatch_of(c: &CheckedGraph) -> CheckedDispatch {
    match &c.nodes[0] {
        CheckedNode::Kernel(k) => k.dispatch.clone(),
        other => panic!("node 0 is a kernel: {other:?}"),
    }
}

#[test]
fn sizes_resolve_to_postfix_programs_over_parameter_offsets_and_buffer_indices() {
    use graph_core::size::SizeOp;
    // params: n: u32 @0, a: f32 @4, wh: vec2<u32> @8.
    let e = SizeExpr::binary(
        SizeOp::DivCeil,
        SizeExpr::binary(
            SizeOp::Mul,
            SizeExpr::Param {
                name: "wh".into(),
                component: Some(1),
            },
            SizeExpr::Len("x".into()),
        ),
        SizeExpr::Literal(4),
    );
    let c = checked(sized(vec![e, SizeExpr::param("n")], &[("wh", "vec2<u32>")]));
    let CheckedDispatch::Threads(dims) = dispatch_of(&c) else {
        panic!("threads");
    };
    assert_eq!(dims[0].text, "(params.wh.y * x.len()).div_ceil(4)");
    assert_eq!(
        dims[0].steps,
        vec![
            SizeStep::Param(12),
            SizeStep::Len(0),
            SizeStep::Op(SizeOp::Mul),
            SizeStep::Literal(4),
            SizeStep::Op(SizeOp::DivCeil),
        ]
    );
    assert_eq!(dims[1].steps, vec![SizeStep::Param(0)]);
}

#[test]
fn a_size_of_an_unknown_parameter_suggests_the_close_one() {
    let d = single_error(sized(vec![SizeExpr::param("nn")], &[]));
    assert_eq!(d.loc, term(0, 0));
    assert_message(&d, &["unknown parameter `nn`"]);
    assert_help(&d, &["`n`"]);
}

#[test]
fn a_size_reads_only_u32_parameters() {
    use graph_core::size::SizeOp;
    let d = single_error(sized(
        vec![SizeExpr::binary(
            SizeOp::Mul,
            SizeExpr::param("n"),
            SizeExpr::param("a"),
        )],
        &[],
    ));
    assert_eq!(d.loc, term(0, 2));
    assert_eq!(
        d.message,
        "dispatch sizes are `u32`, but `params.a` is `f32`"
    );
    let vector = single_error(sized(vec![SizeExpr::param("wh")], &[("wh", "vec2<u32>")]));
    assert_message(&vector, &["`params.wh` is a `vec2<u32>`, not one size"]);
    assert_help(&vector, &["`params.wh.x`"]);
    let component = single_error(sized(
        vec![SizeExpr::Param {
            name: "wh".into(),
            component: Some(2),
        }],
        &[("wh", "vec2<u32>")],
    ));
    assert_message(&component, &["`vec2<u32>` has no component `z`"]);
}

#[test]
fn a_size_naming_a_buffer_as_a_parameter_says_so() {
    let d = single_error(sized(vec![SizeExpr::param("x")], &[]));
    assert_eq!(d.message, "`x` is a buffer, not a parameter");
    assert_help(&d, &["`x.len()`"]);
    let len = single_error(sized(vec![SizeExpr::Len("n".into())], &[]));
    assert_eq!(len.message, "`n` is a parameter, not a buffer");
}

#[test]
fn constant_sizes_that_overflow_are_compile_errors() {
    use graph_core::size::SizeOp;
    let d = single_error(sized(
        vec![SizeExpr::binary(
            SizeOp::Mul,
            SizeExpr::Literal(70_000),
            SizeExpr::Literal(70_000),
        )],
        &[],
    ));
    assert_eq!(d.loc, term(0, 0));
    assert_eq!(
        d.message,
        "this size is always an error: `70000 * 70000` overflows u32"
    );
    let big = single_error(sized(vec![SizeExpr::Literal(1 << 33)], &[]));
    assert_message(&big, &["does not fit in `u32`"]);
    let zero = single_error(sized(
        vec![SizeExpr::binary(
            SizeOp::Div,
            SizeExpr::param("n"),
            SizeExpr::binary(SizeOp::Sub, SizeExpr::Literal(2), SizeExpr::Literal(2)),
        )],
        &[],
    ));
    assert_eq!(zero.loc, term(0, 0));
    assert_eq!(
        zero.message,
        "this size always divides by zero: `params.n / (2 - 2)`"
    );
}

#[test]
fn a_size_takes_one_to_three_dimensions() {
    let none = single_error(sized(vec![], &[]));
    assert_eq!(none.loc, Loc::Dispatch(0));
    assert_message(&none, &["`threads` takes 1 to 3 sizes (x, y, z), not 0"]);
    let four = single_error(sized(vec![SizeExpr::Literal(1); 4], &[]));
    assert_message(&four, &["not 4"]);
}

// ---------------------------------------------------------------------------------------------------------
// Fills.

fn fill(name: &str, dst: &str, value: &str) -> Node {
    Node {
        name: name.into(),
        kind: NodeKind::Fill {
            dst: dst.into(),
            value: value.into(),
            range: None,
        },
    }
}

fn fill_graph(elem: &str, value: &str) -> Graph {
    graph(
        vec![
            param("n", "u32"),
            param("a", "f32"),
            param("v", "vec4<f32>"),
        ],
        vec![buffer("out", elem, None, Role::Output)],
        vec![fill("clear", "out", value)],
    )
}

#[test]
fn fill_works_for_every_element_type() {
    for (elem, value) in [
        ("f32", "0.5"),
        ("f32", "params.a"),
        ("f32", "0"),
        ("u32", "params.n"),
        ("u32", "7u"),
        ("i32", "-3"),
        ("vec4<f32>", "params.v"),
        ("vec2<u32>", "vec2<u32>(1u, 2u)"),
        ("vec4<i32>", "vec4<i32>(-1)"),
    ] {
        let c = checked(fill_graph(elem, value));
        let CheckedNode::Kernel(k) = &c.nodes[0] else {
            panic!("a fill is a kernel");
        };
        assert_eq!(
            k.dispatch,
            CheckedDispatch::BufferLen(0),
            "{elem} = {value}"
        );
        assert!(k.pointwise && k.foldable);
        assert_eq!(k.bindings[0].mode, Write);
    }
}

#[test]
fn a_fill_value_of_another_type_is_refused_in_words_about_fill() {
    let d = single_error(fill_graph("f32", "params.n"));
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_eq!(
        d.message,
        "fill `clear` writes `f32` elements into `out`, but its value `params.n` is a `u32`"
    );
    assert_help(&d, &["`0.0`", "declared `f32`"]);
    assert!(!d.message.contains("kernels::"), "{d:?}");
    let negative = single_error(fill_graph("u32", "-1"));
    assert_message(&negative, &["value `-1` is"]);
    let vector = single_error(fill_graph("vec4<f32>", "params.a"));
    assert_message(&vector, &["writes `vec4<f32>` elements", "is a `f32`"]);
}

#[test]
fn a_fill_value_naming_an_unknown_parameter() {
    let d = single_error(fill_graph("f32", "params.b"));
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_message(&d, &["unknown parameter `b`"]);
}

// ---------------------------------------------------------------------------------------------------------
// Workgroup sizes.

fn workgroup_graph(size: &str) -> Graph {
    scale_graph(&SCALE_XY.replace("@workgroup_size(64)", &format!("@workgroup_size({size})")))
}

#[test]
fn workgroups_over_the_portable_limits_are_refused_at_the_attribute() {
    let text = SCALE_XY.replace("@workgroup_size(64)", "@workgroup_size(512)");
    let d = single_error(scale_graph(&text));
    assert_eq!(
        d.loc,
        Loc::Wgsl {
            node: 0,
            range: range_of(&text, "@workgroup_size(512)")
        }
    );
    assert_eq!(
        d.message,
        "kernel `scale` has workgroup size (512, 1, 1): 512 invocations in x, over the portable limit of 256"
    );
    assert_help(&d, &["#[device_limits]"]);
    let z = single_error(workgroup_graph("1, 1, 128"));
    assert_message(&z, &["128 invocations in z, over the portable limit of 64"]);
    let total = single_error(workgroup_graph("16, 16, 2"));
    assert_message(
        &total,
        &["512 invocations in all, over the portable limit of 256"],
    );
    checked(workgroup_graph("16, 16, 1"));
}

#[test]
fn device_limits_lift_the_portable_workgroup_check() {
    let mut g = workgroup_graph("1024");
    g.workgroup_limits = graph_core::ir::WorkgroupLimits::Device;
    let CheckedNode::Kernel(k) = &checked(g).nodes[0] else {
        panic!("kernel");
    };
    assert_eq!(k.workgroup_size, [1024, 1, 1]);
}

// ---------------------------------------------------------------------------------------------------------
// Copies.

#[test]
fn a_copy_between_declared_lengths_that_differ_is_refused() {
    let d = single_error(graph(
        vec![],
        vec![
            buffer("a", "f32", Some(64), Role::Input),
            buffer("b", "f32", Some(32), Role::Output),
        ],
        vec![copy("c", "a", "b")],
    ));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 1 });
    assert_eq!(
        d.message,
        "copy `c` copies all 64 elements of `a` into `b`, which has 32"
    );
    // A run-time length is checked at bake.
    checked(graph(
        vec![],
        vec![buffer("a", "f32", Some(64), Role::Input), output("b")],
        vec![copy("c", "a", "b")],
    ));
}

// ---------------------------------------------------------------------------------------------------------
// Names of one kind where another belongs.

#[test]
fn an_edge_naming_a_buffer_says_it_is_a_buffer() {
    let mut g = graph(
        vec![],
        vec![inout("x")],
        vec![host("a", &[("x", ReadWrite)]), host("b", &[])],
    );
    g.edges = vec![edge("x", "b")];
    let d = single_error(g);
    assert_eq!(d.loc, Loc::EdgeFrom(0));
    assert_eq!(d.message, "`x` is a buffer, not a node");
    assert_help(&d, &["already ordered by their accesses"]);
}

#[test]
fn an_access_naming_a_parameter_says_it_is_a_parameter() {
    let d = single_error(graph(
        vec![param("k", "f32")],
        vec![],
        vec![host("h", &[("k", Read)])],
    ));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 0 });
    assert_eq!(d.message, "`k` is a parameter, not a buffer");
    assert_help(&d, &["`params.k`"]);
}

#[test]
fn params_naming_a_buffer_in_wgsl_says_it_is_a_buffer() {
    let text = SCALE_XY.replace("params.a * x[gid.x]", "params.x[gid.x]");
    let d = single_error(scale_graph(&text));
    let at = range_of(&text, "params.x").start + "params.".len();
    assert_eq!(
        d.loc,
        Loc::Wgsl {
            node: 0,
            range: at..at + 1
        }
    );
    assert_eq!(d.message, "`x` is a buffer, not a parameter");
    assert_help(&d, &["by its own name"]);
}

// ---------------------------------------------------------------------------------------------------------
// Long messages.

#[test]
fn a_cycle_through_thousands_of_nodes_is_one_short_message() {
    let count = 3000;
    let nodes: Vec<Node> = (0..count).map(|i| host(&format!("n{i}"), &[])).collect();
    let mut g = graph(vec![], vec![], nodes);
    g.edges = (0..count)
        .map(|i| edge(&format!("n{i}"), &format!("n{}", (i + 1) % count)))
        .collect();
    let d = single_error(g);
    assert_eq!(d.loc, Loc::Edge(count - 1));
    assert_eq!(
        d.message,
        "this edge closes a cycle through 3000 nodes: `n0` -> `n1` (explicit edge) -> .. 2998 more nodes .. -> \
         `n2999` -> `n0` (explicit edge)"
    );
    let note = d.note.as_deref().expect("the nodes in a note");
    assert!(note.len() < 400, "{} characters: {note}", note.len());
    assert!(
        note.starts_with("the cycle's nodes: `n0` -> `n1` -> `n2`"),
        "{note}"
    );
    assert!(note.ends_with("more"), "{note}");
}

// Ranges.

/// Every range mistake the checks can see with declared lengths, one diagnostic each, at the right place.
#[test]
fn range_mistakes_are_reported_where_the_bound_is_written() {
    use graph_core::builder::GraphBuilder;
    let built = |fill_dst: &str| {
        let mut b = GraphBuilder::new("G");
        b.buffer("b", "f32", Role::Output, Some(64));
        b.fill("f", fill_dst, "0.0");
        b.build(&graph_core::library::Library::EMPTY)
    };
    let cases = [
        (
            "b[80..]",
            "the range of `b` in fill `f` starts at 80, past its end (64 elements)",
            Loc::SizeTerm {
                node: 0,
                dim: 0,
                term: 0,
            },
        ),
        (
            "b[..65]",
            "the range of `b` in fill `f` ends at 65, past the end of `b` (64 elements)",
            Loc::SizeTerm {
                node: 0,
                dim: 1,
                term: 0,
            },
        ),
        (
            "b[9..b.len() - 60]",
            "the range `9..4` of `b` in fill `f` starts after it ends",
            Loc::SizeTerm {
                node: 0,
                dim: 0,
                term: 0,
            },
        ),
    ];
    for (slice, message, loc) in cases {
        let errors = built(slice).expect_err(slice).diagnostics;
        assert_eq!(errors.len(), 1, "{slice}: {errors:?}");
        assert_eq!(errors[0].message, message, "{slice}");
        assert_eq!(errors[0].loc, loc, "{slice}");
    }
    // The positive control: a range within the buffer.
    assert!(built("b[1..b.len() - 1]").is_ok());
}

/// A mistake after a read of an `f16` parameter, in a kernel from a `.wgsl` file: the note shows the file's
/// own text at the mistake (the module converts the read, `f16(params.h)`, which the user never wrote),
/// also past text that is not ASCII.
#[test]
fn a_mistake_after_an_f16_parameter_read_is_shown_in_the_files_own_text() {
    use graph_core::builder::{GraphBuilder, KernelSpec};
    let text = "@compute @workgroup_size(1)\nfn main() { let a = params.h; let ééé = 1.0; y[0] = ééé + bad; }\n";
    let mut b = GraphBuilder::new("G");
    b.param("h", "f16").output("y", "f16").kernel(
        "k",
        KernelSpec::wgsl(text)
            .in_file("k.wgsl")
            .write("y")
            .workgroups(&["1"]),
    );
    let message = b
        .build(&LIB)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(message.contains("bad"), "{message}");
    assert!(
        !message.contains("f16(params.h)"),
        "the converted text is shown: {message}"
    );
}
