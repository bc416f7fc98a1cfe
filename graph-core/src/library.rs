//! The shape of a library kernel, as the `kernels` crate describes its kernels and the checks consume them.

use crate::ir::AccessMode;

/// One storage buffer a library kernel expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryBinding {
    /// The name the kernel's WGSL uses and the graph binds by (`input: y`).
    pub name: &'static str,
    pub mode: AccessMode,
    /// The element type the WGSL uses, such as `f32`; [`GENERIC`] for any element type, the same for every
    /// generic binding and argument of the kernel.
    pub elem: &'static str,
    /// The WGSL sees the elements as `atomic<elem>` (`elem` is `u32` or `i32`); the graph's buffer holds
    /// plain `elem`.
    pub atomic: bool,
}

/// The element type of a generic binding or argument: whatever the graph binds, one type per kernel node.
pub const GENERIC: &str = "T";

/// One value a library kernel takes, read in its WGSL through a function of the same name (`alpha()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryArg {
    pub name: &'static str,
    pub ty: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibraryKernel {
    /// The path after `kernels::`, such as `scale` or `reduce::sum_partials`.
    pub path: &'static str,
    pub summary: &'static str,
    pub bindings: &'static [LibraryBinding],
    pub args: &'static [LibraryArg],
    /// WGSL with one `@compute` entry point; the bindings and argument functions are declared for it. An
    /// element-wise kernel (workgroup size 256) computes its index as `gid.x + gid.y * num_workgroups.x * 256`,
    /// so the runtime may fold a long one-dimensional dispatch into two dimensions; the reduce and scan
    /// passes (256) are dispatched in a fixed number of workgroups and stride.
    pub source: &'static str,
    /// Each invocation reads and writes only its own element (a candidate for fusion).
    pub pointwise: bool,
    /// How many invocations it needs, in words, for its documentation.
    pub dispatch: &'static str,
    /// With no `threads`/`workgroups` clause, one invocation runs per element of this binding; `None`: of
    /// the first binding it writes.
    pub sized_by: Option<&'static str>,
    /// Elements each invocation of the default dispatch handles: `sized_by.len().div_ceil(per_invocation)`
    /// invocations (1: one per element). For kernels that stride over their input, so that work done once
    /// per workgroup (the histogram's bins in workgroup memory) is paid for by enough elements.
    pub per_invocation: u32,
    /// The most invocations of the default dispatch (0: no cap), for kernels that stride: past it each
    /// invocation handles more elements, so that work done once per workgroup stays small beside the rest
    /// (the histogram's bins, zeroed and added up by every workgroup).
    pub most_invocations: u32,
    /// A kernel over a `width` x `height` image (row-major, its arguments of those names) that is a
    /// neighbourhood kernel on it, so that a chain of them fuses by 2-D overlapped tiling
    /// ([`crate::stencil`]). `None` for every other kernel.
    pub grid: Option<GridShape>,
}

/// How far a library image kernel reads (see [`LibraryKernel::grid`]). Its entry point computes one pixel,
/// `i = gid.x + gid.y * num_workgroups.x * 256`, and, for every `i < min(width * height, the lengths of its
/// buffers)`, writes `output[i]` whatever the data, reading its inputs only at pixels at most `x` columns and
/// `y` rows from its own, clamped into the image; past that extent it writes nothing. It computes the pixel
/// from those values alone, not from where the pixel is, and uses `width()` and `height()` only to find and
/// clamp pixels: a tiled group runs it in the coordinates of its workgroup array ([`crate::stencil_kernel`]).
/// Its invocations share nothing (no workgroup memory, barriers or atomics), so bake may also run several of
/// them in one. The library is ours: this is stated, not proved from the IR as a user kernel's reach is, and
/// the GPU tests compare every fused form with the unfused kernels and the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridShape {
    pub x: GridReach,
    pub y: GridReach,
}

/// A reach along one axis of a [`GridShape`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridReach {
    Fixed(u32),
    /// The value of this `u32` argument, when the graph gives it as a literal (a parameter's value is not
    /// known when the graph is fused, so such a kernel does not fuse).
    Arg(&'static str),
}

/// A multi-pass library algorithm (reduce, scan): a graph of library kernels, used as a subgraph node
/// (`subgraph total = kernels::reduce_sum(input: x: read, output: t: write);`). The front doors describe it
/// with the library it belongs to and give it to the checks as the child ([`crate::pipeline::library_children`]).
#[derive(Debug, Clone, Copy)]
pub struct LibrarySubgraph {
    /// The path after `kernels::`.
    pub path: &'static str,
    pub summary: &'static str,
    /// The graph, as declared.
    pub graph: fn() -> crate::ir::Graph,
}

/// A set of library kernels and subgraphs, searched by path.
#[derive(Debug, Clone, Copy)]
pub struct Library {
    pub kernels: &'static [LibraryKernel],
    pub subgraphs: &'static [LibrarySubgraph],
}

/// How a subgraph node names a library subgraph: `kernels::` and its path.
pub const SUBGRAPH_PREFIX: &str = "kernels::";

impl Library {
    pub const EMPTY: Library = Library {
        kernels: &[],
        subgraphs: &[],
    };

    pub fn subgraph(&self, path: &str) -> Option<&'static LibrarySubgraph> {
        self.subgraphs.iter().find(|s| s.path == path)
    }

    pub fn get(&self, path: &str) -> Option<&'static LibraryKernel> {
        self.kernels.iter().find(|k| k.path == path)
    }

    pub fn paths(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.kernels.iter().map(|k| k.path)
    }
}

/// Validates `kernel`'s WGSL with naga against its own metadata: composed with its binding declarations and
/// constant arguments (generic ones as `vec2<u32>`, a type no other kernel uses), one compute entry point,
/// each binding written exactly when its mode writes. `Err` holds naga's whole message, naming the kernel.
pub fn validate_kernel(kernel: &LibraryKernel) -> Result<(), String> {
    use crate::types::ValueType;
    let generic = |ty: &'static str| if ty == GENERIC { "vec2<u32>" } else { ty };
    let mut bindings = Vec::new();
    for b in kernel.bindings {
        let ty = ValueType::parse(generic(b.elem)).map_err(|_| {
            format!(
                "`{}`: binding `{}` has no element type",
                kernel.path, b.name
            )
        })?;
        bindings.push((b.name, ty, b.mode));
    }
    let atomic: Vec<&str> = kernel
        .bindings
        .iter()
        .filter(|b| b.atomic)
        .map(|b| b.name)
        .collect();
    let declarations = crate::wgsl::binding_declarations(bindings, &atomic);
    let args: Vec<(&str, &str, &str)> = kernel
        .args
        .iter()
        .map(|a| match a.ty {
            GENERIC => (a.name, "vec2<u32>", "vec2<u32>(1u)"),
            ty => (a.name, ty, "1"),
        })
        .collect();
    let composed = crate::wgsl::compose(
        &declarations,
        "",
        &[],
        Some(crate::ir::ParamsStorage::Immediates),
        &args,
        kernel.source,
    );
    let reflection = crate::wgsl::validate(&composed.source)
        .map_err(|e| format!("`{}`: {}", kernel.path, e.rendered))?;
    if reflection.entry_points.len() != 1 {
        return Err(format!(
            "`{}` has {} entry points; a library kernel has one",
            kernel.path,
            reflection.entry_points.len()
        ));
    }
    for (i, b) in kernel.bindings.iter().enumerate() {
        let written = reflection.details[0]
            .binding_uses
            .get(i)
            .is_some_and(|u| u.1.write);
        if written != b.mode.writes() {
            return Err(format!(
                "`{}` binding `{}` is declared {} but the WGSL {} it",
                kernel.path,
                b.name,
                b.mode.keyword(),
                if written { "writes" } else { "does not write" }
            ));
        }
    }
    // The mark lets the fusion pass merge the kernel: it is accepted only where naga's IR proves it.
    if kernel.pointwise && reflection.details[0].pointwise.is_none() {
        return Err(format!(
            "`{}` is marked pointwise, but its WGSL does not show it: every storage access must be indexed by \
             the invocation's own index (`gid.x`, or `gid.x + gid.y * groups.x * W`)",
            kernel.path
        ));
    }
    Ok(())
}
