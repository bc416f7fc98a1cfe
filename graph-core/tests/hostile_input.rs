//! Text from outside (a graph file someone sent, a builder fed at run time) that would reach a kernel's WGSL:
//! a fill's value and a library argument must be exactly one expression, checked alone, and every name an
//! identifier. Each mistake is one diagnostic at its place, in the same words from every front door.

#![forbid(unsafe_code)]

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::desc::{GraphDesc, KernelArgDesc, OpDesc};
use graph_core::ir::{AccessMode, KernelArg, NodeKind};
use graph_core::library::{Library, LibraryArg, LibraryBinding, LibraryKernel};
use graph_core::subgraph::Subgraphs;
use graph_core::{Diagnostic, GraphErrors, Loc};

/// The payload: a fill value that closes the value's function and declares one that writes element
/// 99 of the filled buffer.
const PAYLOAD: &str =
    "1.0 + w(); } fn w() -> f32 { dst[99] = 42.0; return 0.0; } fn unused() -> f32 { return 0.0";

const SCALE_WGSL: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&data)) { data[gid.x] = alpha() * data[gid.x]; }
}
fn helper() -> f32 { data[0] = 7.0; return 1.0; }
";

static LIB: Library = Library {
    kernels: &[LibraryKernel {
        path: "scale",
        summary: "data[i] = alpha * data[i]",
        bindings: &[LibraryBinding {
            name: "data",
            mode: AccessMode::ReadWrite,
            elem: "f32",
            atomic: false,
        }],
        args: &[LibraryArg {
            name: "alpha",
            ty: "f32",
        }],
        source: SCALE_WGSL,
        pointwise: false,
        dispatch: "one invocation per element",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    }],
    subgraphs: &[],
};

const TWICE: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
}
";

/// A graph `G` with `n: u32, a: f32` and an output `x` of 128 `f32`s, filled by `f` with `value`.
fn fill_graph(value: &str) -> GraphBuilder {
    let mut b = GraphBuilder::new("G");
    b.param("n", "u32")
        .param("a", "f32")
        .buffer("x", "f32", graph_core::ir::Role::Output, Some(128))
        .fill("f", "x", value);
    b
}

/// The one diagnostic `b` gets.
#[track_caller]
fn single_error(b: &GraphBuilder) -> Diagnostic {
    let errors = refused(b);
    assert_eq!(
        errors.diagnostics.len(),
        1,
        "expected one diagnostic, got {errors}"
    );
    errors.diagnostics[0].clone()
}

#[track_caller]
fn refused(b: &GraphBuilder) -> GraphErrors {
    match b.build(&LIB) {
        Ok(desc) => panic!("accepted: {desc:#?}"),
        Err(errors) => errors,
    }
}

#[track_caller]
fn accepted(b: &GraphBuilder) -> GraphDesc {
    b.build(&LIB).unwrap_or_else(|e| panic!("refused: {e}"))
}

/// The value of fill node `n`'s kernel, as it goes into the module.
fn fill_expression(desc: &GraphDesc, n: usize) -> &KernelArgDesc {
    match &desc.nodes[n].op {
        OpDesc::Kernel(k) => &k.args[0],
        other => panic!("not a kernel: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Values.

#[test]
fn the_payload_that_wrote_element_99_is_refused_as_no_expression() {
    let d = single_error(&fill_graph(PAYLOAD));
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_eq!(
        d.message,
        "the value `1.0 + w(); } fn w() -> f32 { dst[99] = 42.0; return 0.0; } fn unused() -> f32 { …` of \
         fill `f` is not one WGSL expression: `;` is no part of an expression"
    );
    assert_eq!(
        d.help.as_deref(),
        Some("give a `f32`: a literal such as `0.0`, or a parameter declared `f32`")
    );
}

#[test]
fn statements_braces_comments_and_invisible_characters_are_no_part_of_a_value() {
    for (value, problem) in [
        ("loop {}", "`{` is no part of an expression"),
        ("1.0; 2.0", "`;` is no part of an expression"),
        ("1.0 // }", "it holds a comment"),
        ("1.0 /* } fn w() { */", "it holds a comment"),
        ("1.0\0", "`\\0` is no part of an expression"),
        ("1.0\u{2028}", "`\\u{2028}` is no part of an expression"),
        ("@must_use 1.0", "`@` is no part of an expression"),
        ("f32(1.0))", "its brackets do not match"),
        ("", "it is empty"),
    ] {
        let d = single_error(&fill_graph(value));
        assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 }, "{value:?}");
        assert!(
            d.message.ends_with(&format!(
                "of fill `f` is not one WGSL expression: {problem}"
            )),
            "{value:?}: {}",
            d.message
        );
    }
    let long = format!("1.0{}", " + 1.0".repeat(400));
    let d = single_error(&fill_graph(&long));
    assert_eq!(
        d.message,
        "the value of fill `f` is not one WGSL expression: it is 2403 bytes, over the 1024 a value may have"
    );
}

/// An expression that reads a buffer or calls a function of the kernel is valid WGSL in the kernel's module,
/// but a value is checked alone: it sees the parameters and WGSL's built-ins, nothing of the kernel's.
#[test]
fn a_value_cannot_reach_a_buffer_or_a_function_of_its_kernel() {
    let mut b = GraphBuilder::new("G");
    b.buffer("x", "u32", graph_core::ir::Role::Output, Some(128))
        .fill("f", "x", "arrayLength(&dst)");
    let d = single_error(&b);
    assert_eq!(
        d.message,
        "the value `arrayLength(&dst)` of fill `f` is not valid WGSL: no definition in scope for identifier: `dst`"
    );
    let mut b = GraphBuilder::new("G");
    b.inout("y", "f32")
        .library("s", "scale", &[("data", "y")], &[("alpha", "helper()")]);
    let d = single_error(&b);
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_eq!(
        d.message,
        "WGSL error in argument `alpha` of `kernels::scale`: no definition in scope for identifier: `helper`"
    );
}

#[test]
fn a_library_argument_is_one_expression_too() {
    let mut b = GraphBuilder::new("G");
    b.inout("y", "f32").library(
        "s",
        "scale",
        &[("data", "y")],
        &[("alpha", "1.0; } fn alpha2() -> f32 { return 1.0;")],
    );
    let d = single_error(&b);
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_eq!(
        d.message,
        "argument `alpha` of `kernels::scale` is not one WGSL expression: `;` is no part of an expression"
    );
    assert_eq!(
        d.help.as_deref(),
        Some(
            "argument `alpha` of `kernels::scale` takes a `f32`: a literal, or a parameter declared `f32`"
        )
    );
}

/// What reaches the module is the expression read from its tokens: every run of whitespace one space.
#[test]
fn an_expression_goes_into_the_module_as_read() {
    let desc = accepted(&fill_graph(" max(params.a,\n\t 1.0)\n"));
    assert_eq!(&*fill_expression(&desc, 0).value, "max(params.a, 1.0)");
    let mut b = GraphBuilder::new("G");
    b.param("a", "f32").inout("y", "f32").library(
        "s",
        "scale",
        &[("data", "y")],
        &[("alpha", "-params.a\r\n")],
    );
    let desc = accepted(&b);
    let OpDesc::Kernel(k) = &desc.nodes[0].op else {
        panic!("a kernel");
    };
    assert_eq!(&*k.args[0].value, "-params.a");
}

#[test]
fn a_parameter_without_its_prefix_is_named_in_the_help() {
    let d = single_error(&fill_graph("2.0 * a"));
    assert_eq!(
        d.message,
        "the value `2.0 * a` of fill `f` is not valid WGSL: no definition in scope for identifier: `a`"
    );
    assert_eq!(
        d.help.as_deref(),
        Some("parameters are fields of `params`: write `params.a`")
    );
}

/// A kernel of its own WGSL has no argument functions: arguments a file gives it were dropped unread.
#[test]
fn a_kernel_of_its_own_wgsl_takes_no_arguments() {
    let mut b = GraphBuilder::new("G");
    b.inout("x", "f32")
        .kernel("k", KernelSpec::wgsl(TWICE).read_write("x"));
    let mut graph = b.graph().clone();
    let NodeKind::Kernel(k) = &mut graph.nodes[0].kind else {
        panic!("a kernel");
    };
    k.args.push(KernelArg {
        name: "alpha".into(),
        wgsl: PAYLOAD.into(),
    });
    let d = single_error(&GraphBuilder::from_graph(graph, Subgraphs::new()));
    assert_eq!(d.loc, Loc::KernelArg { node: 0, index: 0 });
    assert_eq!(
        d.message,
        "kernel `k` is WGSL of its own and takes no arguments, but is given `alpha`"
    );
}

// ---------------------------------------------------------------------------------------------------------
// Names.

#[test]
fn every_declared_name_is_an_identifier() {
    let mut b = GraphBuilder::new("G");
    b.inout("x", "f32")
        .kernel("k", KernelSpec::wgsl(TWICE).read_write("x"));
    let good = b.graph().clone();
    accepted(&b);
    type Edit = fn(&mut graph_core::ir::Graph);
    let cases: [(Edit, Loc, &str); 6] = [
        (
            |g| g.name = String::new(),
            Loc::Graph,
            "an empty name cannot name a graph: a name must be an identifier",
        ),
        (
            |g| g.name = "G x".into(),
            Loc::Graph,
            "`G x` cannot name a graph: a name must be an identifier",
        ),
        (
            |g| g.nodes[0].name = "k\0".into(),
            Loc::Node(0),
            "`k\\0` cannot name a node: a name must be an identifier",
        ),
        (
            |g| g.nodes[0].name = "k\n@compute fn evil() {}".into(),
            Loc::Node(0),
            "`k\\n@compute fn evil() {}` cannot name a node: a name must be an identifier",
        ),
        (
            |g| {
                g.buffers[0].name = "x y".into();
                if let NodeKind::Kernel(k) = &mut g.nodes[0].kind {
                    k.accesses[0].buffer = "x y".into();
                    k.accesses[0].binding = "x y".into();
                }
            },
            Loc::Buffer(0),
            "`x y` cannot name a buffer: kernels see it by name, so it must be an identifier",
        ),
        (
            |g| {
                if let NodeKind::Kernel(k) = &mut g.nodes[0].kind {
                    k.entry = Some("main\0".into());
                }
            },
            Loc::KernelEntry(0),
            "`main\\0` cannot name an entry point: WGSL names its functions by identifiers",
        ),
    ];
    for (edit, loc, message) in cases {
        let mut graph = good.clone();
        edit(&mut graph);
        let errors = refused(&GraphBuilder::from_graph(graph, Subgraphs::new()));
        // One error: a kernel that sees a refused name is not validated after it.
        assert_eq!(errors.diagnostics.len(), 1, "{errors}");
        let d = &errors.diagnostics[0];
        assert_eq!((&d.loc, d.message.as_str()), (&loc, message));
        assert_eq!(
            d.help.as_deref(),
            Some("letters, digits and `_`, not starting with a digit: `blur_tmp`")
        );
        // The location is shown escaped, on one line.
        for text in errors.rendered() {
            assert!(!text.contains('\0'), "{text:?}");
        }
    }
}

/// A graph file may bind a buffer by another name than its own: the name its kernel's WGSL sees it by,
/// which goes into the binding's declaration.
#[test]
fn a_binding_name_from_a_file_is_an_identifier_wgsl_does_not_reserve() {
    let mut b = GraphBuilder::new("G");
    b.inout("x", "f32")
        .kernel("k", KernelSpec::wgsl(TWICE).read_write("x"));
    for (binding, message) in [
        (
            "x: array<f32>; fn evil() {} var<private> q",
            "`x: array<f32>; fn evil() {} var<private> q` cannot name a binding: kernels see it by name, so it \
             must be an identifier",
        ),
        (
            "target",
            "`target` cannot name a binding: kernels see buffers by name, and WGSL reserves it",
        ),
    ] {
        let mut graph = b.graph().clone();
        if let NodeKind::Kernel(k) = &mut graph.nodes[0].kind {
            k.accesses[0].binding = binding.into();
        }
        let d = single_error(&GraphBuilder::from_graph(graph, Subgraphs::new()));
        assert_eq!(d.loc, Loc::Access { node: 0, index: 0 });
        assert_eq!(d.message, message);
    }
}

#[test]
fn groups_blocks_tasks_and_subgraph_bindings_have_identifiers_for_names() {
    let mut b = GraphBuilder::new("G");
    b.inout("x", "f32")
        .buffer("flag", "u32", graph_core::ir::Role::Input, Some(1))
        .kernel("a", KernelSpec::wgsl(TWICE).read_write("x"))
        .kernel("b", KernelSpec::wgsl(TWICE).read_write("x"))
        .alternatives("pick one", &["a", "b"])
        .if_block("", "flag", &["b"]);
    let errors = refused(&b);
    let found: Vec<(&Loc, &str)> = errors
        .diagnostics
        .iter()
        .map(|d| (&d.loc, d.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                &Loc::Alternatives(0),
                "`pick one` cannot name a group of alternatives: a name must be an identifier"
            ),
            (
                &Loc::Block(0),
                "an empty name cannot name a block: a name must be an identifier"
            ),
        ]
    );

    let mut child = GraphBuilder::new("Child");
    child.inout("v", "f32").kernel(
        "k",
        KernelSpec::wgsl(TWICE.replace("&x", "&v").replace("x[", "v[")).read_write("v"),
    );
    let child = accepted(&child);
    let mut b = GraphBuilder::new("G");
    b.inout("x", "f32")
        .subgraph("sub", &child, &[("v w", "x", AccessMode::ReadWrite)])
        .host("h", &[("x", AccessMode::Read)]);
    let mut graph = b.graph().clone();
    if let NodeKind::Host { accesses } = &mut graph.nodes[1].kind {
        accesses[0].binding = "x\n".into();
    }
    let errors = refused(&GraphBuilder::from_graph(graph, b.subgraphs().clone()));
    let found: Vec<(&Loc, &str)> = errors
        .diagnostics
        .iter()
        .map(|d| (&d.loc, d.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                &Loc::Access { node: 0, index: 0 },
                "`v w` cannot name a binding: a name must be an identifier"
            ),
            (
                &Loc::Access { node: 1, index: 0 },
                "`x\\n` cannot name a binding: a name must be an identifier"
            ),
        ]
    );
}

/// naga takes a NUL in a comment, but the SPIR-V a validating device gets carries the source, and a NUL ends
/// its strings there.
#[test]
fn a_kernel_holds_no_nul() {
    let text = TWICE.replace("@compute", "// a\0b\n@compute");
    let mut b = GraphBuilder::new("G");
    b.inout("x", "f32")
        .kernel("k", KernelSpec::wgsl(&text).read_write("x"));
    let d = single_error(&b);
    assert_eq!(
        d.loc,
        Loc::Wgsl {
            node: 0,
            range: 4..5
        }
    );
    assert_eq!(
        d.message,
        "the WGSL of kernel `k` holds a NUL character, which ends a string in the SPIR-V it becomes"
    );
}

// ---------------------------------------------------------------------------------------------------------
// A fused module holds no member's name (groups of one shape make one module, compiled once).

/// A description is public data (a `TaskGraph` may be written by hand), and a member's name, whatever it holds,
/// does not reach the fused module's code.
#[test]
fn a_member_name_does_not_reach_a_fused_module() {
    let mut b = GraphBuilder::new("G");
    b.buffer("x", "f32", graph_core::ir::Role::Output, Some(64))
        .buffer("y", "f32", graph_core::ir::Role::Output, Some(64))
        .fill("a", "x", "1.0")
        .fill("b", "y", "2.0");
    let mut desc = accepted(&b);
    desc.nodes.to_mut()[0].name = "a\nfn evil() -> f32 { return 1.0; }".into();
    let lengths = graph_core::fusion::declared_lengths(&desc);
    let fusion = graph_core::fusion::fuse(&desc, &lengths, 8);
    assert_eq!(fusion.groups.len(), 1, "the two fills fuse");
    let OpDesc::Kernel(k) = &fusion.desc.nodes[0].op else {
        panic!("the fused kernel");
    };
    assert!(!k.source.contains("evil"), "{}", k.source);
}
