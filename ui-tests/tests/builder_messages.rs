//! The run-time builder reports the same mistakes with the same words as `graph!`.
//!
//! Every compile-fail fixture under `tests/fail` is either in [`CASES`], rebuilt with [`GraphBuilder`] (same
//! names, same WGSL, same mistake) and checked against the fixture's `.stderr`, or in [`INEXPRESSIBLE`], with
//! the reason the builder cannot make that mistake. A new fixture must join one of the two lists.
//!
//! A diagnostic's whole text (its message, then `help:` and `note:` lines) is compared with the whole of one
//! `error: ..` block of the `.stderr`: rustc prints the message after `error: ` and indents its further lines
//! by seven spaces.

#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use graph_runtime::ir::{AccessMode, DispatchSpec, Role, SizeExpr, SizeOp};
use graph_runtime::{GraphBuilder, KernelSpec, LIBRARY};

/// One fixture rebuilt with the builder.
struct Case {
    /// The fixture's path under `tests/fail`, without `.rs`.
    fixture: &'static str,
    /// The same graph, with the same mistake.
    build: fn() -> GraphBuilder,
    /// The messages of `error:` blocks of the `.stderr` that rustc reports, not the graph checks (errors about
    /// using a generated item, say); the builder gives the others.
    rustc_errors: &'static [&'static str],
}

/// Fixtures whose builder message differs from the compile error: each is a finding to fix in the checks, and
/// a `// DIFFERS:` comment at its entry in [`CASES`] says how. They are printed, and must still differ.
const KNOWN_DIFFERENCES: &[&str] = &[];

/// Fixtures the builder cannot express, each with the reason.
const INEXPRESSIBLE: &[(&str, &str)] = &[
    (
        "placement/on-without-a-gpu",
        "`GraphBuilder::on` takes the GPU as a `u32`, so it cannot be anything but an index",
    ),
    (
        "stream/builder-used-while-recording",
        "a borrow error of Rust's: an eager stream's recording holds the builder mutably, so no builder call \
         can be made meanwhile",
    ),
    (
        "stream/stream-from-two-threads",
        "a borrow error of Rust's: a recording holds its stream mutably, so no other thread can call it",
    ),
    (
        "textures/sampler-with-a-role",
        "the builder's `sampler` takes no role: the graph makes every sampler (a graph file's may have one, \
         and gets the macro's error)",
    ),
    (
        "textures/texture-role-unknown",
        "a texture's role is a word the macro reads; the builder's `texture` takes a `Role`",
    ),
    (
        "buffers/no-alias-on-a-kernel",
        "`#[no_alias]` above a kernel is refused by the macro's parser; the builder's `no_alias` takes a \
         buffer's name, and a node's name there is an unknown buffer",
    ),
    (
        "dispatch/unsupported-size-syntax",
        "`params.n << 2` is outside the macro's size grammar, reported by its Rust-expression parser; the builder \
         reads size text with its own parser, which reports `the size .. cannot be read: at byte N: ..` instead",
    ),
    (
        "handles/host-task-of-another-graph",
        "a typed handle's graph is a Rust type; a built graph's host tasks are given closures by name \
         (`BakedGraph::on_host`), and a name the graph lacks is `Err(UnknownName)`",
    ),
    (
        "handles/interop-with-a-host-task",
        "the typed API takes a node set per role; a built graph's `on_interop` takes a name, and a node of \
         another kind is `Err(NotANode)` (graph-runtime/tests/graphs.rs)",
    ),
    (
        "handles/on-host-with-a-node-of-the-enum",
        "the typed API takes a host task's handle or its name; a built graph's `on_host` takes a name, and a \
         node that is no host task is `Err(NotANode)` (graph-runtime/tests/faults.rs)",
    ),
    (
        "handles/readback-of-another-graph",
        "a typed handle's graph is a Rust type; a built graph's replay is an untyped `Finished`, which reads \
         by name, or checks a typed handle at run time: `Err(TransferData)` naming both graphs \
         (graph-runtime/tests/transfers.rs)",
    ),
    (
        "handles/select-a-node-that-is-not-a-choice",
        "the typed API takes a node set per role; a built graph's `select` takes a name, and a node that is no \
         choice is `Err(NotANode)` (graph-runtime/tests/alternatives.rs)",
    ),
    (
        "handles/set-copy-ranges-on-a-fill",
        "the typed API takes a node set per role; a built graph's `set_copy_ranges` takes a name, and a node \
         that is no copy is `Err(Update)`",
    ),
    (
        "handles/set-dispatch-on-a-fill",
        "the typed API takes a node set per role; a built graph's `set_dispatch` takes a name, checked at run \
         time",
    ),
    (
        "handles/set-enabled-on-a-readback",
        "the typed API takes a node set per role; a built graph's `set_enabled` takes a name, and a node that \
         cannot be turned off is `Err(NotANode)` (graph-runtime/tests/enable.rs)",
    ),
    (
        "handles/set-range-on-a-copy",
        "the typed API takes a node set per role; a built graph's `set_range` takes a name, and a copy is \
         `Err(Update)` (graph-runtime/tests/updates.rs)",
    ),
    (
        "handles/typed-context-of-another-node",
        "typed host contexts are generated by the macro; a built graph's host tasks see the untyped \
         `HostContext` of their own node",
    ),
    (
        "handles/upload-of-another-graph",
        "a typed handle's graph is a Rust type; a built graph's uploads are given by name \
         (`BakedGraph::upload`), and a name the graph lacks is `Err(UnknownName)`",
    ),
    (
        "host/reads-undeclared-buffer",
        "a host task's typed context has a method per declared buffer, so reading another is rustc's \
         \"no method\" error; the builder's host tasks read by name, and an undeclared one is the replay's \
         `Err(HostAccess)` (graph-runtime/tests/faults.rs)",
    ),
    (
        "host/untyped-closure-for-a-handle",
        "a typed handle's closure receives the generated context, a Rust type; a built graph's host tasks \
         all receive the untyped `HostContext`",
    ),
    (
        "names/two-graphs-of-one-name",
        "two graphs of one name clash as Rust modules (E0428); a builder makes one graph and no Rust items",
    ),
    (
        "recovery/missing-comma-in-accesses",
        "a missing `,` is a syntax error of the macro language; the builder takes accesses as method calls",
    ),
    (
        "recovery/missing-comma-in-buffers",
        "a missing `,` is a syntax error of the macro language; the builder declares buffers by method calls",
    ),
    (
        "recovery/missing-semicolon",
        "a missing `;` is a syntax error of the macro language; the builder adds nodes by method calls",
    ),
    (
        "recovery/misspelt-buffers-keyword",
        "a misspelt item keyword is a syntax error of the macro language; the builder has no keywords",
    ),
    (
        "recovery/misspelt-kernels-path",
        "the `kernels::` prefix is macro syntax; the builder's `library` takes the path without it",
    ),
    (
        "recovery/unknown-access-word",
        "access modes are words of the macro language; the builder takes `read`/`write`/`read_write` methods \
         or the `AccessMode` enum",
    ),
    (
        "subgraph/child-is-not-a-graph",
        "a `graph!` child is a Rust type, which may be no graph; the builder's children are descriptions given by \
         name, and an unknown name is the builder's own error",
    ),
    (
        "subgraph/child-type-misspelt",
        "a misspelt child type is rustc's error (E0425, with its suggestion); the builder names children by \
         string, and an unknown one is its own error",
    ),
    (
        "subgraph/child-with-an-error-of-its-own",
        "a `graph!` child with errors still has a (stub) type; a builder's child is a built description, which \
         exists only once its checks pass",
    ),
    (
        "subgraph/graph-contains-itself",
        "a `graph!` child is named by its type, which may be the graph's own; a builder's child is a description \
         already built, which cannot hold the graph being built",
    ),
    (
        "subgraph/graphs-contain-each-other",
        "`graph!` graphs name each other's types, so two may contain each other; a built description holds \
         only descriptions built before it",
    ),
    (
        "subgraph/graphs-nested-too-deep",
        "the depth is the limit of the macro's compile-time walk over child types; built descriptions nest as \
         deep as they are built",
    ),
    (
        "syntax/bad-param-keeps-the-rest",
        "a parameter without a type is a syntax error of the macro language; `param` always takes a type",
    ),
    (
        "syntax/kernel-without-body",
        "a kernel without a body is a syntax error of the macro language; `KernelSpec::wgsl` always takes WGSL",
    ),
    (
        "syntax/two-graphs",
        "two graphs in one `graph!` block is macro syntax; one builder is one graph",
    ),
    (
        "syntax/unknown-access-mode",
        "access modes are words of the macro language; the builder takes the `AccessMode` enum",
    ),
    (
        "syntax/unknown-buffer-role",
        "buffer roles are words of the macro language; the builder takes the `Role` enum or a method per role",
    ),
    (
        "syntax/unknown-graph-attribute",
        "graph attributes are macro syntax; the builder sets them with methods",
    ),
    (
        "syntax/unknown-item",
        "a misspelt item keyword is a syntax error of the macro language; the builder has no keywords",
    ),
    (
        "buffers/array-type-with-comma",
        "a buffer's type is macro syntax; the builder takes the element type and the length apart",
    ),
    (
        "buffers/vec-as-buffer-type",
        "a buffer's type is macro syntax; the builder takes the element type and the length apart",
    ),
    (
        "control/if-flag-is-a-parameter",
        "the macro reads the flag as written (`params.go`); the builder's `if_block` takes a buffer's name, \
         and reports any other text as an unknown buffer",
    ),
    (
        "control/switch-arm-without-a-value",
        "a switch's arms are syntax of the macro language; the builder takes each arm's value as an \
         `Option<u32>`, so an arm without a value cannot be written",
    ),
    (
        "control/repeat-count-a-parameter",
        "the builder's `repeat` takes its count as a `u32`, which cannot be a parameter",
    ),
    (
        "names/keyword-as-node-name",
        "Rust keywords matter only to the Rust items the macro generates; the builder generates none, and \
         `loop` is a good node name there",
    ),
    (
        "names/self-as-node-name",
        "Rust keywords matter only to the Rust items the macro generates; the builder generates none, and \
         `Self` is a good node name there",
    ),
    (
        "recovery/semicolon-between-params",
        "a separator is a syntax error of the macro language; the builder declares parameters by method calls",
    ),
    (
        "wgsl/missing-file",
        "the macro reads `file(..)` kernels from disk; the builder has no file kernels, only WGSL text",
    ),
];

fn graph_g() -> GraphBuilder {
    GraphBuilder::new("G")
}

/// The graph of two `textures/` fixtures: kernel `zero` stores zeros into texture `t`, sized by `threads`
/// where given.
fn texture_zeroer(threads: Option<&str>) -> GraphBuilder {
    let mut b = graph_g();
    let spec = KernelSpec::wgsl(
        "@compute @workgroup_size(1)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            textureStore(t, gid.xy, vec4<f32>());
        }",
    )
    .write("t");
    let spec = match threads {
        Some(size) => spec.threads(&[size]),
        None => spec,
    };
    b.texture("t", "texture_2d<r32float>", Role::Output)
        .kernel("zero", spec);
    b
}

/// The graph of the `textures/` fixtures of an owned texture: kernel `copy` stores `frame` into graph-owned
/// `tmp`, of type `tmp_ty`.
fn texture_into_owned(tmp_ty: &str) -> GraphBuilder {
    frame_into_owned("texture_2d<rgba8unorm>", tmp_ty)
}

/// [`texture_into_owned`] with `frame` of `frame_ty`.
fn frame_into_owned(frame_ty: &str, tmp_ty: &str) -> GraphBuilder {
    let mut b = graph_g();
    b.texture("frame", frame_ty, Role::Input)
        .texture("tmp", tmp_ty, Role::Owned)
        .kernel(
            "copy",
            KernelSpec::wgsl(
                "@compute @workgroup_size(1)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    textureStore(tmp, gid.xy, textureLoad(frame, gid.xy, 0));
                }",
            )
            .read("frame")
            .write("tmp")
            .threads(&["4", "4"]),
        );
    b
}

/// The graph of the sampler fixtures in `textures/`: kernel `first` samples `frame` (of `frame_ty`, called
/// `frame_name`) with `bilinear` (of `sampler_ty`, declared `mode`) into `out`.
fn sampling(frame_name: &str, frame_ty: &str, sampler_ty: &str, mode: &str) -> GraphBuilder {
    let mut b = graph_g();
    let spec = KernelSpec::wgsl(format!(
        "@compute @workgroup_size(1)
            fn main() {{ out[0] = textureSampleLevel({frame_name}, bilinear, vec2<f32>(0.5), 0.0).r; }}"
    ))
    .read(frame_name);
    let spec = match mode {
        "write" => spec.write("bilinear"),
        _ => spec.read("bilinear"),
    };
    b.texture(frame_name, frame_ty, Role::Input)
        .sampler("bilinear", sampler_ty)
        .output("out", "f32")
        .kernel("first", spec.write("out").threads(&["1"]));
    b
}

/// The child graph of the `subgraph/` fixtures: `dst = src * 2` over 256 elements.
fn double() -> graph_runtime::GraphDesc {
    let mut b = GraphBuilder::new("Double");
    b.param("n", "u32")
        .buffer("src", "f32", Role::Input, Some(256))
        .buffer("dst", "f32", Role::Output, Some(256));
    b.kernel(
        "twice",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { dst[gid.x] = 2.0 * src[gid.x]; }
            }",
        )
        .read("src")
        .write("dst")
        .threads(&["params.n"]),
    );
    b.build(&LIBRARY)
        .expect("the child of the subgraph fixtures is a good graph")
}

/// The parent of the `subgraph/` fixtures: parameter `param: u32`, buffers `a` and `b` (`a: [a_elem; a_len]`,
/// of role `a_role`; `b: [f32; 256] = output`), and subgraph `d` of [`double`] with `bindings`.
fn parent(
    param: &str,
    (a_elem, a_len, a_role): (&str, u64, Role),
    bindings: &[(&str, &str, AccessMode)],
) -> GraphBuilder {
    let mut b = GraphBuilder::new("Parent");
    b.param(param, "u32")
        .buffer("a", a_elem, a_role, Some(a_len))
        .buffer("b", "f32", Role::Output, Some(256));
    b.subgraph("d", &double(), bindings);
    b
}

const A: (&str, u64, Role) = ("f32", 256, Role::Input);
const READ_A_WRITE_B: &[(&str, &str, AccessMode)] = &[
    ("src", "a", AccessMode::Read),
    ("dst", "b", AccessMode::Write),
];

/// The `dispatch/*override*` fixtures' graph: block sums through workgroup memory, the kernel's `override tile`
/// of type `ty`, given `value` (by name), with a parameter `n` when `params`.
fn block_sums(ty: &str, value: Option<(&str, &str)>, params: bool) -> GraphBuilder {
    let mut b = graph_g();
    if params {
        b.param("n", "u32");
    }
    let wgsl = format!(
        "override tile: {ty};
            var<workgroup> cache: array<f32, 64>;

            @compute @workgroup_size(64)
            fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{
                cache[lid] = x[wid.x * 64u + lid] * f32(tile);
                workgroupBarrier();
                if (lid == 0u) {{ sums[wid.x] = cache[0]; }}
            }}"
    );
    let mut spec = KernelSpec::wgsl(wgsl)
        .read("x")
        .write("sums")
        .workgroups(&["8"]);
    if let Some((name, value)) = value {
        spec = spec.set_override(name, value);
    }
    b.input("x", "f32")
        .buffer("sums", "f32", Role::Output, Some(8))
        .kernel("block_sums", spec);
    b
}

/// The graph of the `alternatives/` fixtures: Sobel and Scharr of `image`, into `gradient` and `second`.
fn sobel_or_scharr(second: &str) -> GraphBuilder {
    let mut b = graph_g();
    b.param("width", "u32")
        .param("height", "u32")
        .input("image", "f32")
        .output("gradient", "f32");
    let args = [("width", "params.width"), ("height", "params.height")];
    b.library(
        "sobel",
        "sobel",
        &[("input", "image"), ("output", "gradient")],
        &args,
    )
    .library(
        "scharr",
        "scharr",
        &[("input", "image"), ("output", second)],
        &args,
    )
    .alternatives("edges", &["sobel", "scharr"]);
    b
}

const CASES: &[Case] = &[
    Case {
        fixture: "dispatch/indirect-counts-not-u32",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32")
                .buffer("args", "f32", Role::Input, Some(3))
                .kernel(
                    "k",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }",
                    )
                    .read_write("x")
                    .indirect("args"),
                );
            b
        },
        rustc_errors: &[],
    },
    // fusion/
    Case {
        fixture: "fusion/no-fusion-on-a-copy",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32")
                .output("y", "f32")
                .copy("c", "x", "y")
                .no_fusion("c");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "placement/gpu-past-the-set-limit",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32")
                .kernel(
                    "k",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }",
                    )
                    .read_write("x"),
                )
                .on("k", 16);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "placement/on-a-buffer",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32")
                .kernel(
                    "k",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }",
                    )
                    .read_write("x"),
                )
                .on("x", 1);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "placement/block-members-placed-apart",
        build: || {
            let mut b = graph_g();
            let double = |name: &str| {
                KernelSpec::wgsl(format!(
                    "@compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                    if (gid.x < arrayLength(&{name})) {{ {name}[gid.x] = 2.0 * {name}[gid.x]; }}
                }}"
                ))
                .read_write(name)
            };
            b.inout("x", "f32")
                .inout("y", "f32")
                .input("flag", "u32")
                .kernel("a", double("x"))
                .kernel("b", double("y"))
                .if_block("maybe", "flag", &["a", "b"])
                .on("a", 0)
                .on("b", 1);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "fusion/no-fusion-on-a-buffer",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32")
                .kernel(
                    "k",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }",
                    )
                    .read_write("x"),
                )
                .no_fusion("x");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/no-alias-on-an-input",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32")
                .output("y", "f32")
                .kernel(
                    "k",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
            }",
                    )
                    .read("x")
                    .write("y"),
                )
                .no_alias("x");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/unknown-override",
        build: || block_sums("u32", Some(("til", "x.len() / 8")), false),
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/override-without-a-value",
        build: || block_sums("u32", None, false),
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/override-from-a-parameter",
        build: || block_sums("u32", Some(("tile", "params.n")), true),
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/override-of-a-float",
        build: || block_sums("f32", Some(("tile", "x.len() / 8")), false),
        rustc_errors: &[],
    },
    // control/
    Case {
        fixture: "control/empty-if-block",
        build: || {
            let mut b = graph_g();
            b.output("y", "f32")
                .owned("flag", "u32", 1)
                .fill("set", "flag", "1u")
                .if_block("maybe", "flag", &[])
                .fill("clear", "y", "0.0");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "control/switch-with-two-arms-for-one-value",
        build: || {
            let mut b = graph_g();
            b.output("y", "f32")
                .owned("pick", "u32", 1)
                .fill("set", "pick", "1u")
                .fill("zero", "y", "0.0")
                .fill("one", "y", "1.0")
                .fill("two", "y", "2.0")
                .switch(
                    "choose",
                    "pick",
                    &[
                        (Some(0), &["zero"]),
                        (Some(1), &["one"]),
                        (Some(1), &["two"]),
                    ],
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "control/switch-by-a-float",
        build: || {
            let mut b = graph_g();
            b.output("y", "f32")
                .owned("pick", "f32", 1)
                .fill("set", "pick", "1.0")
                .fill("zero", "y", "0.0")
                .fill("other", "y", "1.0")
                .switch(
                    "choose",
                    "pick",
                    &[(Some(0), &["zero"]), (None, &["other"])],
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "control/host-task-in-an-else",
        build: || {
            let mut b = graph_g();
            b.inout("y", "f32")
                .owned("flag", "u32", 1)
                .fill("set", "flag", "0u")
                .fill("one", "y", "1.0")
                .host("look", &[("y", AccessMode::Read)])
                .if_else("maybe", "flag", &["one"], &["look"]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "control/host-task-in-a-loop",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").host("look", &[("x", AccessMode::Read)]);
            b.repeat("twice", 2, None, &["look"]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "control/flag-never-set",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").owned("flag", "u32", 1).kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
                }",
                )
                .read_write("x"),
            );
            b.if_block("maybe", "flag", &["double"]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "control/flag-not-u32",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32")
                .owned("going", "f32", 1)
                .fill("start", "going", "1.0")
                .kernel(
                    "step",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&x)) { x[gid.x] = 0.5 * x[gid.x]; }
                }",
                    )
                    .read_write("x"),
                );
            b.repeat("halve", 10, Some("going"), &["step"]);
            b
        },
        rustc_errors: &[],
    },
    // alternatives/
    Case {
        fixture: "alternatives/a-choice-writes-an-input",
        build: || {
            let mut b = graph_g();
            let copy = [("input", "x"), ("output", "y")];
            b.input("x", "f32")
                .output("y", "f32")
                .library("copy_it", "copy", &copy, &[])
                .kernel(
                    "clear_x",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&x)) { x[gid.x] = 0.0; }
                }",
                    )
                    .write("x"),
                )
                .alternatives("pick", &["copy_it", "clear_x"]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "alternatives/host-task-as-a-choice",
        build: || {
            let mut b = graph_g();
            let copy = [("input", "x"), ("output", "y")];
            b.input("x", "f32")
                .output("y", "f32")
                .library("plain", "copy", &copy, &[])
                .host("look", &[("x", AccessMode::Read)])
                .library("again", "copy", &copy, &[])
                .alternatives("pick", &["plain", "look", "again"]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "alternatives/edge-between-choices",
        build: || {
            let mut b = sobel_or_scharr("gradient");
            b.edge("sobel", "scharr");
            b
        },
        rustc_errors: &[],
    },
    // buffers/
    Case {
        fixture: "buffers/copy-length-mismatch",
        build: || {
            let mut b = graph_g();
            b.buffer("a", "f32", Role::Input, Some(64))
                .buffer("b", "f32", Role::Output, Some(32))
                .copy("c", "a", "b");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/copy-range-out-of-bounds",
        build: || {
            let mut b = graph_g();
            b.buffer("a", "f32", Role::Input, Some(64))
                .buffer("b", "f32", Role::Output, Some(32))
                .copy("c", "a[40..72]", "b");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/copy-range-lengths-differ",
        build: || {
            let mut b = graph_g();
            b.buffer("a", "f32", Role::Input, Some(64))
                .buffer("b", "f32", Role::Output, Some(32))
                .copy("c", "a[..16]", "b[8..]");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/copy-into-itself",
        build: || {
            let mut b = graph_g();
            b.inout("a", "f32").copy("c", "a[..8]", "a[8..16]");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/range-uses-a-parameter",
        build: || {
            let mut b = graph_g();
            b.param("n", "u32")
                .output("b", "f32")
                .fill("f", "b[1..params.n]", "0.0");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/range-end-underflows",
        build: || {
            let mut b = graph_g();
            b.buffer("a", "f32", Role::Output, Some(16))
                .fill("f", "a[..a.len() - 20]", "0.0");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/range-start-underflows",
        build: || {
            let mut b = graph_g();
            b.buffer("b", "f32", Role::Output, Some(16))
                .fill("f", "b[b.len() - 20..]", "0.0");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/fill-range-starts-after-it-ends",
        build: || {
            let mut b = graph_g();
            b.output("b", "u32").fill("f", "b[8..4]", "1u");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/upload-into-input",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32")
                .output("y", "f32")
                .upload("u", "x")
                .copy("c", "x", "y");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/readback-of-unwritten-buffer",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32")
                .output("y", "f32")
                .copy("c", "x", "y")
                .readback("r", "x[..4]");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/copy-type-mismatch",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32").output("y", "u32").copy("out", "x", "y");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/fill-value-with-a-statement",
        build: || {
            let mut b = graph_g();
            b.output("x", "f32").fill("clear", "x", "1.0; x[99] = 42.0");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/fill-value-of-another-type",
        build: || {
            let mut b = graph_g();
            b.param("n", "u32")
                .output("x", "f32")
                .fill("clear", "x", "params.n");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/fill-of-u8-with-a-float",
        build: || {
            let mut b = graph_g();
            b.output("mask", "u8").fill("clear", "mask", "0.5");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/input-written",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        x[gid.x] = 2.0 * x[gid.x];
                    }",
                )
                .read_write("x"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/named-twice-in-node",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").host(
                "show",
                &[("x", AccessMode::Read), ("x", AccessMode::ReadWrite)],
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/output-never-written",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").output("y", "f32").library(
                "scale",
                "scale",
                &[("data", "x")],
                &[("alpha", "2.0")],
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/owned-without-length",
        build: || {
            let mut b = graph_g();
            b.buffer("tmp", "f32", Role::Owned, None)
                .output("y", "f32")
                .fill("zero", "tmp", "0.0")
                .copy("out", "tmp", "y");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/read-before-write",
        build: || {
            let mut b = graph_g();
            b.owned("tmp", "f32", 256)
                .output("y", "f32")
                .copy("out", "tmp", "y");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/too-long",
        build: || {
            let mut b = graph_g();
            b.output("y", "f32")
                .owned("huge", "f32", 5_000_000_000)
                .kernel(
                    "k",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) { huge[gid.x] = 1.0; y[gid.x] = 1.0; }",
                    )
                    .write("huge")
                    .write("y"),
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/vec3-element",
        build: || {
            let mut b = graph_g();
            b.inout("points", "vec3<f32>")
                .host("show", &[("points", AccessMode::Read)]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/range-of-a-u8-buffer",
        build: || {
            let mut b = graph_g();
            b.buffer("x", "u8", Role::Input, Some(10))
                .buffer("y", "u8", Role::Output, Some(10))
                .copy("head", "x[0..3]", "y[0..3]")
                .fill("rest", "y[3..]", "0u");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/u8-vector-element",
        build: || {
            let mut b = graph_g();
            b.inout("pixels", "vec4<u8>")
                .host("show", &[("pixels", AccessMode::Read)]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "buffers/zero-length",
        build: || {
            let mut b = graph_g();
            b.owned("tmp", "f32", 0)
                .output("y", "f32")
                .fill("zero", "tmp", "0.0")
                .copy("out", "tmp", "y");
            b
        },
        rustc_errors: &[],
    },
    // textures/
    Case {
        fixture: "textures/unknown-format",
        build: || {
            let mut b = graph_g();
            b.texture("frame", "texture_2d<rgba8unorn>", Role::Input)
                .output("out", "f32")
                .kernel(
                    "first",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(1)
                        fn main() { out[0] = textureLoad(frame, vec2<u32>(0u, 0u), 0).r; }",
                    )
                    .read("frame")
                    .write("out")
                    .threads(&["1"]),
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/storage-not-portable",
        build: || {
            let mut b = graph_g();
            b.texture("image", "texture_2d<rgba8unorm>", Role::InOut)
                .kernel(
                    "brighten",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(8, 8)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            textureStore(image, gid.xy, 2.0 * textureLoad(image, gid.xy));
                        }",
                    )
                    .read_write("image")
                    .threads(&["8", "8"]),
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/copy-of-part-of-a-texture",
        build: || {
            let mut b = graph_g();
            b.texture("frame", "texture_2d<r32float>", Role::Input)
                .output("out", "f32")
                .copy("take", "frame", "out[..4]");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/copy-between-texture-formats",
        build: || {
            let mut b = graph_g();
            b.texture("frame", "texture_2d<rgba8unorm>", Role::Input)
                .texture("wide", "texture_2d<rgba16float>", Role::Output)
                .copy("widen", "frame", "wide");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/dispatch-short-of-a-texture",
        build: || {
            let mut b = graph_g();
            b.texture("frame", "texture_2d<rgba8unorm>", Role::Input)
                .texture("tmp", "texture_2d<rgba16float; 64, 32>", Role::Owned)
                .output("out", "f32")
                .kernel(
                    "copy",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(8, 8)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            textureStore(tmp, gid.xy, textureLoad(frame, gid.xy, 0));
                        }",
                    )
                    .read("frame")
                    .write("tmp")
                    .threads(&["32", "32"]),
                )
                .kernel(
                    "take",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(1)
                        fn main() { out[0] = textureLoad(tmp, vec2<u32>(0u), 0).r; }",
                    )
                    .read("tmp")
                    .write("out")
                    .threads(&["1"]),
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/unknown-sampler-filter",
        build: || {
            sampling(
                "frame",
                "texture_2d<rgba8unorm>",
                "sampler<bilinear, clamp>",
                "read",
            )
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/sampler-declared-write",
        build: || {
            sampling(
                "frame",
                "texture_2d<rgba8unorm>",
                "sampler<linear, clamp>",
                "write",
            )
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/filtering-a-32-bit-float-texture",
        build: || {
            sampling(
                "depth",
                "texture_2d<r32float>",
                "sampler<linear, clamp>",
                "read",
            )
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/sampler-in-a-copy",
        build: || {
            let mut b = graph_g();
            b.sampler("nearest", "sampler<nearest, repeat>")
                .output("out", "u32")
                .copy("take", "nearest", "out");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/fill-of-part-of-a-texture",
        build: || {
            let mut b = graph_g();
            b.texture("t", "texture_2d<r32float>", Role::Output).fill(
                "clear",
                "t[..4]",
                "vec4<f32>()",
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/storage-declared-write-bound-read-write",
        build: || {
            let mut b = graph_g();
            b.texture("edges", "texture_storage_2d<r32float, write>", Role::Output)
                .kernel(
                    "mark",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(8, 8)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            textureStore(edges, gid.xy, vec4<f32>(1.0));
                        }",
                    )
                    .read_write("edges")
                    .threads(&["8", "8"]),
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/length-of-a-texture",
        build: || texture_zeroer(Some("t.len()")),
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/depth-of-a-2d-texture",
        build: || {
            let mut b = graph_g();
            b.texture("t", "texture_2d<r32float>", Role::Output).kernel(
                "zero",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(1)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        textureStore(t, gid.xy, vec4<f32>());
                    }",
                )
                .write("t")
                .threads(&["t.width()", "t.height()", "t.depth()"]),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/writes-a-texture-without-a-size",
        build: || texture_zeroer(None),
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/store-into-a-texture-declared-read",
        build: || {
            let mut b = graph_g();
            b.texture("t", "texture_2d<r32float>", Role::InOut).kernel(
                "store",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(1)
                    fn main() { textureStore(t, vec2<u32>(0u, 0u), vec4<f32>(1.0)); }",
                )
                .read("t")
                .threads(&["1"]),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/owned-texture-without-a-size",
        build: || texture_into_owned("texture_2d<rgba16float>"),
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/sized-like-an-unknown-texture",
        build: || texture_into_owned("texture_2d<rgba16float; fram>"),
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/sized-by-a-float-parameter",
        build: || {
            let mut b = texture_into_owned("texture_2d<rgba16float; params.scale, 4>");
            b.param("scale", "f32");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "textures/external-texture-sized-by-parameters",
        build: || {
            let mut b = frame_into_owned(
                "texture_2d<rgba8unorm; params.w, params.h>",
                "texture_2d<rgba16float; frame>",
            );
            b.param("w", "u32").param("h", "u32");
            b
        },
        rustc_errors: &[],
    },
    // cycles/
    Case {
        fixture: "cycles/explicit-and-inferred-cycle",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32")
                .output("y", "f32")
                .copy("first", "x", "y")
                .kernel(
                    "second",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            y[gid.x] = 2.0 * y[gid.x];
                        }",
                    )
                    .read_write("y"),
                )
                .edge("second", "first");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "cycles/explicit-edge-cycle",
        build: || {
            let mut b = graph_g();
            b.output("x", "f32")
                .output("y", "f32")
                .fill("a", "x", "1.0")
                .fill("b", "y", "2.0")
                .fill("c", "x", "3.0")
                .edge("b", "c")
                .edge("c", "b");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "cycles/long-cycle",
        build: || {
            let mut b = graph_g();
            let names: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
            for name in &names {
                b.host(name, &[]);
            }
            for i in 0..names.len() {
                b.edge(&names[i], &names[(i + 1) % names.len()]);
            }
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "cycles/self-edge",
        build: || {
            let mut b = graph_g();
            b.output("x", "f32").fill("a", "x", "1.0").edge("a", "a");
            b
        },
        rustc_errors: &[],
    },
    // dispatch/
    Case {
        fixture: "dispatch/constant-size-overflow",
        build: || {
            let mut b = graph_g();
            b.param("n", "u32").inout("x", "f32").kernel(
                "k",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
                    }",
                )
                .read_write("x")
                .threads(&["params.n", "70000 * 70000"]),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/nothing-written-no-size",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32").kernel(
                "check",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        let v = x[gid.x];
                    }",
                )
                .read("x"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/size-nested-too-deep",
        build: || {
            // As text the builder's parser refuses it first (with its own words); as an expression it reaches
            // the checks, like the macro's.
            let deep = (0..64).fold(SizeExpr::param("n"), |acc, _| {
                SizeExpr::binary(SizeOp::Add, acc, SizeExpr::Literal(1))
            });
            let mut b = graph_g();
            b.param("n", "u32").inout("x", "f32").kernel(
                "k",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
                    }",
                )
                .read_write("x")
                .dispatch(DispatchSpec::Threads(vec![deep])),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/too-many-dimensions",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        x[gid.x] = 2.0 * x[gid.x];
                    }",
                )
                .read_write("x")
                .threads(&["1", "1", "1", "1"]),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/unknown-buffer-in-size",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        x[gid.x] = 2.0 * x[gid.x];
                    }",
                )
                .read_write("x")
                .threads(&["y.len()"]),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/vector-without-component",
        build: || {
            let mut b = graph_g();
            b.param("size", "vec2<u32>").inout("x", "f32").kernel(
                "k",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
                    }",
                )
                .read_write("x")
                .threads(&["params.size"]),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "dispatch/wrong-expression-type",
        build: || {
            let mut b = graph_g();
            b.param("a", "f32").inout("x", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        x[gid.x] = 2.0 * x[gid.x];
                    }",
                )
                .read_write("x")
                .threads(&["params.a"]),
            );
            b
        },
        rustc_errors: &[],
    },
    // library/
    Case {
        fixture: "library/argument-type-error",
        build: || {
            let mut b = graph_g();
            b.param("factors", "vec2<f32>").inout("x", "f32").library(
                "twice",
                "scale",
                &[("data", "x")],
                &[("alpha", "params.factors")],
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "library/missing-argument",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32")
                .library("twice", "scale", &[("data", "x")], &[]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "library/misspelt-argument",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32")
                .library("twice", "scale", &[("data", "x")], &[("alhpa", "2.0")]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "library/unknown-argument",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").library(
                "twice",
                "scale",
                &[("data", "x")],
                &[("alpha", "2.0"), ("beta", "1.0")],
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "library/unknown-binding",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32").inout("y", "f32").library(
                "axpy",
                "axpy",
                &[("x", "x"), ("z", "y")],
                &[("a", "2.0")],
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "library/unknown-kernel",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32")
                .library("twice", "scal", &[("data", "x")], &[("alpha", "2.0")]);
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "library/fill-of-a-u8-buffer",
        build: || {
            let mut b = graph_g();
            b.output("mask", "u8").library(
                "clear",
                "fill",
                &[("output", "mask")],
                &[("value", "0u")],
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "library/generic-types-differ",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32").output("y", "u32").library(
                "c",
                "copy",
                &[("input", "x"), ("output", "y")],
                &[],
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "library/wrong-element-type",
        build: || {
            let mut b = graph_g();
            b.inout("x", "u32")
                .library("twice", "scale", &[("data", "x")], &[("alpha", "2.0")]);
            b
        },
        rustc_errors: &[],
    },
    // names/
    Case {
        fixture: "names/buffer-as-a-parameter",
        build: || {
            let mut b = graph_g();
            b.param("a", "f32")
                .input("x", "f32")
                .output("y", "f32")
                .kernel(
                    "k",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            if (gid.x < arrayLength(&y)) { y[gid.x] = params.x[gid.x]; }
                        }",
                    )
                    .read("x")
                    .write("y"),
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/buffer-in-an-edge",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32")
                .fill("a", "x", "1.0")
                .host("b", &[("x", AccessMode::Read)])
                .edge("x", "b");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/duplicate-buffer",
        build: || {
            let mut b = graph_g();
            b.output("x", "f32")
                .output("x", "f32")
                .fill("zero", "x", "0.0");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/duplicate-node",
        build: || {
            let mut b = graph_g();
            b.output("x", "f32")
                .output("y", "f32")
                .fill("zero", "x", "0.0")
                .fill("zero", "y", "0.0");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/duplicate-param",
        build: || {
            let mut b = graph_g();
            b.param("a", "f32")
                .param("a", "u32")
                .output("x", "f32")
                .fill("set", "x", "params.a");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/param-named-like-padding",
        build: || {
            let mut b = graph_g();
            b.param("a", "f32")
                .param("__pad0", "vec4<f32>")
                .output("x", "f32")
                .fill("f", "x", "params.a");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/param-named-pad1",
        build: || {
            let mut b = graph_g();
            b.param("a", "f32")
                .param("__pad1", "vec2<f32>")
                .output("x", "f32")
                .fill("f", "x", "params.a");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/parameter-as-a-buffer",
        build: || {
            let mut b = graph_g();
            b.param("k", "f32")
                .output("y", "f32")
                .library("twice", "scale", &[("data", "k")], &[("alpha", "2.0")])
                .fill("f", "y", "params.k");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/reserved-buffer-name",
        build: || {
            let mut b = graph_g();
            b.output("target", "f32").kernel(
                "k",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {}",
                )
                .write("target"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/unknown-buffer-in-kernel",
        build: || {
            let mut b = graph_g();
            b.inout("data", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        data[gid.x] = 2.0 * data[gid.x];
                    }",
                )
                .read_write("dat"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/unknown-node-in-edge",
        build: || {
            let mut b = graph_g();
            b.output("x", "f32")
                .output("y", "f32")
                .fill("zero_x", "x", "0.0")
                .fill("zero_y", "y", "0.0")
                .edge("zero_x", "zero_z");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "names/unknown-param-in-wgsl",
        build: || {
            let mut b = graph_g();
            b.param("n", "u32").inout("data", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < params.nn) { data[gid.x] = 2.0 * data[gid.x]; }
                    }",
                )
                .read_write("data"),
            );
            b
        },
        rustc_errors: &[],
    },
    // params/
    Case {
        fixture: "params/uniform-over-64-kib",
        build: || {
            let mut b = graph_g();
            for i in 0..4097 {
                b.param(&format!("p{i}"), "vec4<f32>");
            }
            b.uniform_params()
                .inout("x", "f32")
                .fill("f", "x", "params.p0.x");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "params/bool-param",
        build: || {
            let mut b = graph_g();
            b.param("enabled", "bool")
                .output("x", "f32")
                .fill("zero", "x", "0.0");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "params/u16-param",
        build: || {
            let mut b = graph_g();
            b.param("level", "u16")
                .output("x", "u16")
                .fill("clear", "x", "params.level");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "params/f64-param",
        build: || {
            let mut b = graph_g();
            b.param("scale", "f64")
                .output("x", "f32")
                .fill("zero", "x", "0.0");
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "params/over-128-bytes",
        build: || {
            let mut b = graph_g();
            for name in ["a", "b", "c", "d", "e", "f", "g", "h"] {
                b.param(name, "vec4<f32>");
            }
            b.param("i", "f32")
                .output("x", "f32")
                .fill("zero", "x", "params.i");
            b
        },
        rustc_errors: &[],
    },
    // races/
    Case {
        fixture: "races/explicit-edges-race",
        build: || {
            let mut b = graph_g();
            b.explicit_edges_only()
                .input("x", "f32")
                .output("y", "f32")
                .copy("first", "x", "y")
                .kernel(
                    "second",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            y[gid.x] = 2.0 * y[gid.x];
                        }",
                    )
                    .read_write("y"),
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "races/explicit-edges-write-write",
        build: || {
            let mut b = graph_g();
            b.explicit_edges_only()
                .output("x", "f32")
                .fill("a", "x", "1.0")
                .fill("b", "x", "2.0");
            b
        },
        rustc_errors: &[],
    },
    // recovery/
    Case {
        fixture: "recovery/stub-has-every-item",
        build: || {
            let mut b = graph_g();
            b.param("a", "f32")
                .param("n", "u32")
                .input("x", "f32")
                .output("y", "f32")
                .kernel(
                    "scale",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            if (gid.x < params.n) { y[gid.x] = params.alpha * x[gid.x]; }
                        }",
                    )
                    .read("x")
                    .write("y")
                    .threads(&["params.n"]),
                )
                .host("show", &[("y", AccessMode::Read)]);
            b
        },
        rustc_errors: &[],
    },
    // wgsl/
    Case {
        fixture: "wgsl/error-after-an-f16-parameter-read",
        build: || {
            let mut b = graph_g();
            b.param("gain", "f16").inout("x", "f16").kernel(
                "scale",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] * params.gain + params.gain * 1u; }
            }",
                )
                .read_write("x"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/f16-without-an-f16-buffer",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").kernel(
                "halve",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = f32(f16(x[gid.x]) * 0.5h); }
            }",
                )
                .read_write("x"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/no-entry-point",
        build: || {
            let mut b = graph_g();
            b.inout("data", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "fn main(i: u32) {
                        data[i] = 2.0 * data[i];
                    }",
                )
                .read_write("data"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/workgroup-size-of-an-override-expression",
        build: || {
            let mut b = graph_g();
            b.output("y", "f32").kernel(
                "k",
                KernelSpec::wgsl(
                    "override WIDTH: u32 = 64;
                    @compute @workgroup_size(WIDTH * 2)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        y[gid.x] = 1.0;
                    }",
                )
                .write("y"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/only-with-push-constants",
        build: || {
            let mut b = graph_g();
            b.param("a", "f32").inout("x", "f32").kernel(
                "k",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        let p: ptr<immediate, GraphParams> = &params;
                        if (gid.x < arrayLength(&x)) { x[gid.x] = (*p).a; }
                    }",
                )
                .read_write("x"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/own-resource",
        build: || {
            let mut b = graph_g();
            b.output("y", "f32").kernel(
                "k",
                KernelSpec::wgsl(
                    "@group(0) @binding(5) var<storage, read> extra: array<f32>;
                    @compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        y[gid.x] = extra[gid.x];
                    }",
                )
                .write("y"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/param-without-prefix",
        build: || {
            let mut b = graph_g();
            b.param("scale", "f32").inout("y", "f32").kernel(
                "apply",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        y[gid.x] = scale * y[gid.x];
                    }",
                )
                .read_write("y"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/read-write-never-written",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").output("y", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        y[gid.x] = 2.0 * x[gid.x];
                    }",
                )
                .read_write("x")
                .write("y"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/several-entry-points",
        build: || {
            let mut b = graph_g();
            b.inout("data", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn double(@builtin(global_invocation_id) gid: vec3<u32>) {
                        data[gid.x] = 2.0 * data[gid.x];
                    }
                    @compute @workgroup_size(64)
                    fn halve(@builtin(global_invocation_id) gid: vec3<u32>) {
                        data[gid.x] = 0.5 * data[gid.x];
                    }",
                )
                .read_write("data"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/store-to-read-buffer",
        build: || {
            let mut b = graph_g();
            b.inout("data", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        data[gid.x] = 2.0 * data[gid.x];
                    }",
                )
                .read("data"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/syntax-error",
        build: || {
            let mut b = graph_g();
            b.inout("data", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        let i = gid.x;
                        data[i] = 2.0 * ;
                    }",
                )
                .read_write("data"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/type-error",
        build: || {
            let mut b = graph_g();
            b.inout("data", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        let i = gid.x;
                        data[i] = 2u * data[i];
                    }",
                )
                .read_write("data"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/undeclared-buffer",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32").output("y", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        y[gid.x] = 2.0 * x[gid.x];
                    }",
                )
                .write("y"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/unknown-entry-point",
        build: || {
            let mut b = graph_g();
            b.inout("data", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn double(@builtin(global_invocation_id) gid: vec3<u32>) {
                        data[gid.x] = 2.0 * data[gid.x];
                    }
                    @compute @workgroup_size(64)
                    fn halve(@builtin(global_invocation_id) gid: vec3<u32>) {
                        data[gid.x] = 0.5 * data[gid.x];
                    }",
                )
                .read_write("data")
                .entry("dobule"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/unknown-function",
        build: || {
            let mut b = graph_g();
            b.inout("y", "f32").kernel(
                "apply",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        y[gid.x] = sqr(y[gid.x]);
                    }",
                )
                .read_write("y"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/unused-binding",
        build: || {
            let mut b = graph_g();
            b.input("x", "f32").output("y", "f32").kernel(
                "ones",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        y[gid.x] = 1.0;
                    }",
                )
                .read("x")
                .write("y"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/workgroup-over-portable-limit",
        build: || {
            let mut b = graph_g();
            b.inout("x", "f32").kernel(
                "k",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(512)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
                    }",
                )
                .read_write("x"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "wgsl/write-but-reads",
        build: || {
            let mut b = graph_g();
            b.inout("data", "f32").kernel(
                "double",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                        data[gid.x] = 2.0 * data[gid.x];
                    }",
                )
                .write("data"),
            );
            b
        },
        rustc_errors: &[],
    },
    // subgraph/
    Case {
        fixture: "subgraph/access-the-child-does-not-allow",
        build: || {
            let a = ("f32", 256, Role::InOut);
            let bindings = [
                ("src", "a", AccessMode::ReadWrite),
                ("dst", "b", AccessMode::Write),
            ];
            parent("n", a, &bindings)
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "subgraph/binding-names-no-buffer-of-the-child",
        build: || {
            let bindings = [
                ("source", "a", AccessMode::Read),
                ("dst", "b", AccessMode::Write),
            ];
            parent("n", A, &bindings)
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "subgraph/binding-of-another-element-type",
        build: || parent("n", ("u32", 256, Role::Input), READ_A_WRITE_B),
        rustc_errors: &[],
    },
    Case {
        fixture: "subgraph/binding-of-another-texture-type",
        build: || {
            let mut child = GraphBuilder::new("Reds");
            child
                .texture("frame", "texture_2d<rgba8unorm>", Role::Input)
                .output("red", "f32")
                .kernel(
                    "take",
                    KernelSpec::wgsl(
                        "@compute @workgroup_size(8, 8)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            let size = textureDimensions(frame);
                            if (gid.x >= size.x || gid.y >= size.y) { return; }
                            red[gid.y * size.x + gid.x] = textureLoad(frame, gid.xy, 0).r;
                        }",
                    )
                    .read("frame")
                    .write("red")
                    .threads(&["frame.width()", "frame.height()"]),
                );
            let child = child.build(&LIBRARY).expect("the child checks");
            let mut b = GraphBuilder::new("Parent");
            b.texture("picture", "texture_2d<rgba16float>", Role::Input)
                .output("out", "f32")
                .subgraph(
                    "r",
                    &child,
                    &[
                        ("frame", "picture", AccessMode::Read),
                        ("red", "out", AccessMode::Write),
                    ],
                );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "subgraph/binding-of-another-length",
        build: || parent("n", ("f32", 100, Role::Input), READ_A_WRITE_B),
        rustc_errors: &[],
    },
    Case {
        fixture: "subgraph/child-buffer-bound-twice",
        build: || {
            let mut b = parent(
                "n",
                A,
                &[
                    ("src", "a", AccessMode::Read),
                    ("dst", "b", AccessMode::Write),
                    ("dst", "c", AccessMode::Write),
                ],
            );
            b.buffer("c", "f32", Role::Output, Some(256));
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "subgraph/child-buffer-left-unbound",
        build: || {
            let mut b = parent("n", A, &[("src", "a", AccessMode::Read)]);
            b.kernel(
                "k",
                KernelSpec::wgsl(
                    "@compute @workgroup_size(64)
                    fn main(@builtin(global_invocation_id) gid: vec3<u32>) { b[gid.x] = 0.0; }",
                )
                .write("b"),
            );
            b
        },
        rustc_errors: &[],
    },
    Case {
        fixture: "subgraph/child-parameter-not-declared",
        build: || parent("count", A, READ_A_WRITE_B),
        rustc_errors: &[],
    },
];

fn fail_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fail")
}

fn read_stderr(fixture: &str) -> String {
    let path = fail_dir().join(format!("{fixture}.stderr"));
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The errors of a trybuild `.stderr`, each as the whole text rustc printed after `error: `: the message's
/// first line, then each further line without rustc's seven-space indent. Errors with a code
/// (`error[E0428]: ..`) are kept too, so that a rustc error is counted.
fn stderr_errors(stderr: &str) -> Vec<String> {
    const INDENT: &str = "       ";
    let mut errors = Vec::new();
    let mut current: Option<String> = None;
    for line in stderr.lines() {
        // Subgraph bindings are checked by const evaluation: rustc prints the message after its own words.
        let start = line.strip_prefix("error: ").or_else(|| {
            line.strip_prefix("error[")
                .and_then(|rest| rest.split_once("]: ").map(|(_, message)| message))
                .map(|message| {
                    message
                        .strip_prefix("evaluation panicked: ")
                        .unwrap_or(message)
                })
        });
        if let Some(first) = start {
            errors.extend(current.take());
            current = Some(first.to_string());
        } else if let Some(text) = current.as_mut() {
            match line.strip_prefix(INDENT) {
                // The location line (` --> file:line:col`) ends the message.
                Some(more) if !line.trim_start().starts_with("-->") => {
                    text.push('\n');
                    text.push_str(more);
                }
                _ => errors.extend(current.take()),
            }
        }
    }
    errors.extend(current);
    errors
}

/// Checks the builder's diagnostics (whole texts: message, help, note) against a fixture's `.stderr`: each must
/// be one of its errors, and together they must be all of its errors but `rustc_errors`, one for one.
fn compare(builder: &[String], stderr: &str, rustc_errors: &[&str]) -> Result<(), String> {
    let mut expected = stderr_errors(stderr);
    for rustc in rustc_errors {
        match expected
            .iter()
            .position(|e| e.lines().next() == Some(*rustc))
        {
            Some(i) => {
                expected.remove(i);
            }
            None => return Err(format!("the .stderr has no rustc error `{rustc}`")),
        }
    }
    let mut problems = Vec::new();
    let mut unmatched = expected.clone();
    for text in builder {
        match unmatched.iter().position(|e| e == text) {
            Some(i) => {
                unmatched.remove(i);
            }
            None => {
                let message = text.lines().next().unwrap_or_default();
                let same_message = expected
                    .iter()
                    .any(|e| e.lines().next().unwrap_or_default() == message);
                problems.push(if same_message {
                    format!("the builder's help or note differs:\n  builder: {text:?}")
                } else {
                    format!("the builder's message is not in the .stderr:\n  builder: {text:?}")
                });
            }
        }
    }
    if builder.len() != expected.len() {
        problems.push(format!(
            "the builder gives {} diagnostics, the checks {} errors",
            builder.len(),
            expected.len()
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        for text in &unmatched {
            problems.push(format!("  expected: {text:?}"));
        }
        Err(problems.join("\n"))
    }
}

/// The builder's diagnostics for a case, as whole texts; `Err` when the builder accepts the graph.
fn builder_texts(case: &Case) -> Result<Vec<String>, String> {
    match (case.build)().build(&LIBRARY) {
        Ok(_) => Err("the builder accepts the graph".to_string()),
        Err(errors) => Ok(errors
            .diagnostics
            .iter()
            .map(|d| d.full_message())
            .collect()),
    }
}

fn check_case(case: &Case) -> Result<(), String> {
    let texts = builder_texts(case)?;
    compare(&texts, &read_stderr(case.fixture), case.rustc_errors)
}

#[test]
fn the_builder_reports_each_fixtures_compile_error() {
    println!("KNOWN_DIFFERENCES (not compared): {KNOWN_DIFFERENCES:?}");
    let mut failures = Vec::new();
    for case in CASES {
        let result = check_case(case);
        if KNOWN_DIFFERENCES.contains(&case.fixture) {
            match result {
                Ok(()) => failures.push(format!(
                    "{}: listed in KNOWN_DIFFERENCES but now agrees; remove it from the list",
                    case.fixture
                )),
                Err(e) => println!("{} (known difference):\n{e}", case.fixture),
            }
        } else if let Err(e) = result {
            failures.push(format!("{}: {e}", case.fixture));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

fn fixtures_on_disk() -> BTreeSet<String> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeSet<String>) {
        let entries =
            fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path
                    .strip_prefix(root)
                    .expect("under the root")
                    .with_extension("");
                let parts: Vec<_> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.insert(parts.join("/"));
            }
        }
    }
    let root = fail_dir();
    let mut out = BTreeSet::new();
    walk(&root, &root, &mut out);
    out
}

#[test]
fn every_fixture_is_in_one_list() {
    let on_disk = fixtures_on_disk();
    let mut listed = BTreeSet::new();
    let mut problems = Vec::new();
    let names = CASES
        .iter()
        .map(|c| c.fixture)
        .chain(INEXPRESSIBLE.iter().map(|&(f, _)| f));
    for name in names {
        if !listed.insert(name.to_string()) {
            problems.push(format!("{name} is listed twice"));
        }
        if !on_disk.contains(name) {
            problems.push(format!(
                "{name} is listed but tests/fail/{name}.rs does not exist"
            ));
        }
    }
    for name in on_disk.difference(&listed) {
        problems.push(format!(
            "tests/fail/{name}.rs is in neither CASES nor INEXPRESSIBLE"
        ));
    }
    for name in KNOWN_DIFFERENCES {
        if !CASES.iter().any(|c| c.fixture == *name) {
            problems.push(format!("{name} is in KNOWN_DIFFERENCES but not in CASES"));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    assert!(!on_disk.is_empty(), "no fixtures found under tests/fail");
}

/// The comparison catches a wrong message: `names/duplicate-node`'s `.stderr` against a graph whose mistake is
/// a duplicate buffer instead.
#[test]
fn a_planted_wrong_message_is_reported() {
    let wrong = CASES
        .iter()
        .find(|c| c.fixture == "names/duplicate-buffer")
        .expect("the duplicate-buffer case");
    let texts = builder_texts(wrong).expect("the builder rejects a duplicate buffer");
    let stderr = read_stderr("names/duplicate-node");
    let error =
        compare(&texts, &stderr, &[]).expect_err("a different mistake must not compare equal");
    assert!(error.contains("not in the .stderr"), "{error}");

    // The right message with the wrong help is caught too.
    let right = CASES
        .iter()
        .find(|c| c.fixture == "names/duplicate-node")
        .expect("the duplicate-node case");
    let mut texts = builder_texts(right).expect("the builder rejects a duplicate node");
    assert!(compare(&texts, &stderr, &[]).is_ok());
    texts[0].push_str(" (planted)");
    let error = compare(&texts, &stderr, &[]).expect_err("a changed help must not compare equal");
    assert!(error.contains("help or note differs"), "{error}");

    // One diagnostic too many, or one missing, is caught.
    let mut doubled = builder_texts(right).expect("the builder rejects a duplicate node");
    doubled.push(doubled[0].clone());
    assert!(compare(&doubled, &stderr, &[]).is_err());
    assert!(compare(&[], &stderr, &[]).is_err());
}

/// The size-syntax fixture is inexpressible because the builder reads size text with its own parser; it still
/// rejects the size.
#[test]
fn the_builder_rejects_size_syntax_outside_the_grammar() {
    let mut b = graph_g();
    b.param("n", "u32").inout("x", "f32").kernel(
        "k",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }",
        )
        .read_write("x")
        .threads(&["params.n << 2"]),
    );
    let errors = b
        .build(&LIBRARY)
        .expect_err("`<<` is not in the size grammar");
    let messages: Vec<&str> = errors
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("the size `params.n << 2` cannot be read"),
        "{messages:?}"
    );
}

/// The `.stderr` reader splits errors where rustc does, keeps their help and note lines, and counts rustc's own
/// coded errors.
#[test]
fn the_stderr_reader_splits_errors() {
    assert_eq!(
        stderr_errors(&read_stderr("recovery/unknown-access-word")),
        [
            "unknown access `reed`; did you mean `read`?",
            "unknown access `raed`; did you mean `read`?",
        ]
    );
    assert_eq!(
        stderr_errors(&read_stderr("names/two-graphs-of-one-name")),
        ["the name `__graph_Twice` is defined multiple times"]
    );
    let long = stderr_errors(&read_stderr("cycles/long-cycle"));
    assert_eq!(long.len(), 1);
    assert_eq!(long[0].lines().count(), 3, "{long:?}");
    assert!(
        long[0]
            .lines()
            .nth(2)
            .is_some_and(|l| l.starts_with("note: "))
    );
}
