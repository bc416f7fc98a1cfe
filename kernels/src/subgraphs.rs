//! The library's multi-pass algorithms, as graphs of its own kernels: used as subgraph nodes
//! (`subgraph total = kernels::reduce::sum(input: x: read, output: t: write);`), flattened into the graph that
//! uses them like any child. Each runs a fixed number of passes over any length: the kernels stride, so the
//! passes' workgroup counts do not grow with the input.

use graph_core::ir::{
    Access, AccessMode, Buffer, DispatchSpec, Graph, Kernel, KernelSource, Node, NodeKind, Role,
    SizeExpr,
};
use graph_core::library::LibrarySubgraph;

/// Workgroups of a scan's first and last passes: the chunks, whose sums its one-workgroup middle pass scans
/// (up to 4096). With 256, each workgroup of the last pass scanned 64K of 16M elements in turn, a tile of 256
/// at a time, and the scan took 484 us on the H100.
const CHUNKS: u64 = 4096;

/// Workgroups of a reduction's first pass, each reducing a share of the input into one partial result:
/// enough, at four loads in flight per invocation, to keep the H100's memory busy (256 reduced 16M
/// elements in 113 us, a fifth of its bandwidth).
const PARTS: u64 = 1024;

pub const SUBGRAPHS: &[LibrarySubgraph] = &[
    LibrarySubgraph {
        path: "reduce::sum",
        summary: "output[0] = the sum of input, any length (two passes)",
        graph: || reduce("sum"),
    },
    LibrarySubgraph {
        path: "reduce::min",
        summary: "output[0] = the least element of input, any length (two passes)",
        graph: || reduce("min"),
    },
    LibrarySubgraph {
        path: "reduce::max",
        summary: "output[0] = the greatest element of input, any length (two passes)",
        graph: || reduce("max"),
    },
    LibrarySubgraph {
        path: "scan::inclusive",
        summary: "output[i] = input[0] + .. + input[i], any length (three passes)",
        graph: || scan("inclusive"),
    },
    LibrarySubgraph {
        path: "scan::exclusive",
        summary: "output[i] = input[0] + .. + input[i - 1], output[0] = 0, any length (three passes)",
        graph: || scan("exclusive"),
    },
];

/// `input` into `PARTS` partial results, then those into `output[0]`.
fn reduce(op: &str) -> Graph {
    let step = format!("reduce::{op}_step");
    graph(
        &format!("reduce_{op}"),
        PARTS,
        vec![
            kernel(
                "parts",
                &step,
                &[("input", "input"), ("output", "parts")],
                PARTS,
            ),
            kernel(
                "total",
                &step,
                &[("input", "parts"), ("output", "output")],
                1,
            ),
        ],
    )
}

/// Chunk sums, their exclusive scan (each chunk's offset), then each chunk scanned from its offset.
fn scan(kind: &str) -> Graph {
    graph(
        &format!("scan_{kind}"),
        CHUNKS,
        vec![
            kernel(
                "sums",
                "scan::chunk_sums",
                &[("input", "input"), ("output", "parts")],
                CHUNKS,
            ),
            kernel("offsets", "scan::offsets", &[("sums", "parts")], 1),
            kernel(
                "apply",
                &format!("scan::apply_{kind}"),
                &[
                    ("input", "input"),
                    ("offsets", "parts"),
                    ("output", "output"),
                ],
                CHUNKS,
            ),
        ],
    )
}

/// A graph over `input: [f32] = input`, `output: [f32] = output` and `parts: [f32; parts]`.
fn graph(name: &str, parts: u64, nodes: Vec<Node>) -> Graph {
    let buffer = |name: &str, role, len| Buffer {
        name: name.to_string(),
        elem: "f32".to_string(),
        len,
        role,
    };
    Graph {
        name: name.to_string(),
        buffers: vec![
            buffer("input", Role::Input, None),
            buffer("output", Role::Output, None),
            buffer("parts", Role::Owned, Some(parts)),
        ],
        nodes,
        ..Graph::default()
    }
}

/// Library kernel `path` with `bindings` (`(binding, buffer)`), in `workgroups` workgroups.
fn kernel(name: &str, path: &str, bindings: &[(&str, &str)], workgroups: u64) -> Node {
    Node {
        name: name.to_string(),
        kind: NodeKind::Kernel(Kernel {
            accesses: bindings
                .iter()
                .map(|&(binding, buffer)| Access {
                    binding: binding.to_string(),
                    buffer: buffer.to_string(),
                    // The library fixes the mode.
                    mode: AccessMode::Read,
                })
                .collect(),
            source: KernelSource::Library(path.to_string()),
            entry: None,
            dispatch: DispatchSpec::Workgroups(vec![SizeExpr::Literal(workgroups)]),
            args: Vec::new(),
            overrides: Vec::new(),
        }),
    }
}
