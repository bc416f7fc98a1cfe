//! A library of WGSL compute kernels, usable by name inside `graph!` as `kernels::NAME(binding: buffer, arg:
//! value)`.
//!
//! Each kernel is WGSL plus metadata ([`graph_core::library::LibraryKernel`]): its bindings with their access and element type, and
//! its arguments, which the WGSL reads through functions of the same name (`alpha()`), in `src/table.rs`. The
//! build script validates every kernel with naga against its own metadata, so a bad kernel fails the build
//! (every kernel's errors at once), and the macro reads this crate at expansion time, so a library kernel is
//! also validated against the buffers bound to it at compile time, like an inline one. [`cpu`] holds a reference implementation of each kernel for tests, and
//! `graph-runtime/tests/library.rs` runs each on the GPU against it and checks its `pointwise` mark (a
//! pointwise kernel permutes its output as its input is permuted; any other does not).
//!
//! | kernel | bindings | arguments | dispatch |
//! |---|---|---|---|
//! | `fill` | `output: write` (any type `T`) | `value: T` | one per element of `output` |
//! | `copy` | `input: read`, `output: write` (one type `T`, any) | | one per element of `output` |
//! | `scale` | `data: read_write` | `alpha: f32` | one per element of `data` |
//! | `axpy` | `x: read`, `y: read_write` | `a: f32` | one per element of `y` |
//! | `threshold` | `input: read`, `output: write` | `level: f32` | one per element of `output` |
//! | `transpose` | `input: read`, `output: write` | `rows: u32`, `cols: u32` | any; 32 x 32 tiles, strided (default one per 4 elements of `output`) |
//! | `sobel`, `scharr` | `input: read`, `output: write` | `width: u32`, `height: u32` | one per pixel (made wide at bake); fuses with other image kernels |
//! | `conv2d` | `input: read`, `weights: read`, `output: write` | `width`, `height`, `radius: u32` | any, strided (default one per 4 pixels) |
//! | `blur_h`, `blur_v` | `input: read`, `output: write` | `width`, `height`, `radius: u32`, `sigma: f32` | one per pixel (made wide at bake); fuses with other image kernels when `radius` is a literal |
//! | `softmax_rows` | `input: read`, `output: write` | `cols: u32` | one per 16 elements of `output`, workgroups of 256 |
//! | `histogram` | `input: read`, `bins: read_write` (atomic `u32`) | `lo`, `hi: f32` | any, strided (default one per 8 elements of `input`, at most 1024 workgroups) |
//! | `matmul` | `a: read`, `b: read`, `c: write` | `m`, `n`, `k: u32` | any; 128 x 128 tiles, 8 x 8 per invocation, strided (default one per 64 elements of `c`) |
//! | `reduce::sum_step`, `min_step`, `max_step` | `input: read`, `output: write` | | workgroups of 256, any count; workgroup `w` writes `output[w]` |
//! | `scan::chunk_sums` | `input: read`, `output: write` | | workgroups of 256, one contiguous chunk each |
//! | `scan::offsets` | `sums: read_write` (its first 4096) | | one workgroup of 256 |
//! | `scan::apply_inclusive`, `apply_exclusive` | `input: read`, `offsets: read`, `output: write` | | as `chunk_sums` |
//!
//! Multi-pass algorithms are library *subgraphs* of those kernels, used as subgraph nodes
//! (`subgraph total = kernels::reduce::sum(input: x: read, output: total: write);`, the builder's
//! `library_subgraph`, a graph file's `"graph": "kernels::reduce::sum"`), each over `input: [f32] = input`
//! and `output: [f32] = output`, with graph-owned partial results (1024 for a reduction, 4096 chunk sums for
//! a scan), in a fixed number of passes for any length:
//!
//! | subgraph | computes | passes |
//! |---|---|---|
//! | `reduce::sum`, `reduce::min`, `reduce::max` | `output[0]` = the sum, least, greatest of `input` | 1024 workgroups into 1024 partials, then one |
//! | `scan::inclusive`, `scan::exclusive` | `output[i]` = the sum of `input[..=i]` (or `input[..i]`) | chunk sums, their exclusive scan, each chunk scanned from its offset |
//!
//! Elements are `f32` except where the table says `T` (any element type; histogram bins are `u32`); images are row-major, their edges clamped. Loops stay
//! short on purpose: Mesa's llvmpipe stops a loop after 65535 iterations, which a histogram striding over 4
//! million elements with one workgroup hit (its test found it), so `histogram` runs one invocation per 8
//! input elements by default, at most 1024 workgroups (`sized_by`, `per_invocation`, `most_invocations`):
//! enough to pay for each workgroup's bins in workgroup memory, few enough that a loop stays short (under
//! 65535 iterations for any buffer a device binds).

#![forbid(unsafe_code)]

use graph_core::library::Library;

pub mod cpu;
mod subgraphs;
mod table;

use subgraphs::SUBGRAPHS;
use table::KERNELS;

/// The element type of a generic binding or argument (`fill`, `copy`): any, one per kernel node.
pub use graph_core::library::GENERIC;

/// Every kernel of the library.
pub const LIBRARY: Library = Library {
    kernels: KERNELS,
    subgraphs: SUBGRAPHS,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every library kernel validates with naga against its own bindings (the build script runs the same
    /// check; this keeps it in the test run), and a bad one is refused with naga's error.
    #[test]
    fn every_kernel_validates_against_its_metadata() {
        for k in LIBRARY.kernels {
            if let Err(e) = graph_core::library::validate_kernel(k) {
                panic!("{e}");
            }
        }
        let broken = graph_core::library::LibraryKernel {
            source: "@compute @workgroup_size(64) fn main() { output[0] = undefined_name; }",
            ..LIBRARY.kernels[0]
        };
        let error = graph_core::library::validate_kernel(&broken).expect_err("refused");
        assert!(error.contains("undefined_name"), "{error}");
    }

    /// A pointwise mark the WGSL does not prove is refused, so the fusion pass never merges a kernel that
    /// reads another invocation's element.
    #[test]
    fn a_pointwise_mark_needs_the_proof() {
        let scale = LIBRARY
            .kernels
            .iter()
            .find(|k| k.path == "scale")
            .expect("the scale kernel");
        assert!(scale.pointwise);
        let neighbour = scale
            .source
            .replace("alpha() * data[i]", "alpha() * data[i + 1u]");
        assert_ne!(
            neighbour, scale.source,
            "the planted read must be in the source"
        );
        let planted = graph_core::library::LibraryKernel {
            source: Box::leak(neighbour.into_boxed_str()),
            ..*scale
        };
        let error = graph_core::library::validate_kernel(&planted).expect_err("refused");
        assert!(error.contains("marked pointwise"), "{error}");
    }

    /// Every library subgraph is a good graph of the library's kernels, and is described once its
    /// children are.
    #[test]
    fn every_subgraph_checks() {
        for sub in LIBRARY.subgraphs {
            let desc = graph_core::describe_graph((sub.graph)(), &LIBRARY)
                .unwrap_or_else(|e| panic!("{}: {e}", sub.path));
            assert!(!desc.nodes.is_empty(), "{}", sub.path);
        }
    }

    #[test]
    fn paths_are_unique() {
        let mut paths: Vec<&str> = LIBRARY.paths().collect();
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), LIBRARY.kernels.len());
    }
}
