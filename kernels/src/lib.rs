//! A library of WGSL compute kernels, usable by name inside `graph!` as `kernels::NAME(binding: buffer, arg:
//! value)`.
//!
//! Each kernel is WGSL plus metadata ([`LibraryKernel`]): its bindings with their access and element type, and
//! its arguments, which the WGSL reads through functions of the same name (`alpha()`). The macro reads this
//! crate at expansion time, so a library kernel is validated against the buffers bound to it at compile
//! time, like an inline one. [`cpu`] holds a reference implementation of each kernel for tests.

use graph_core::ir::AccessMode::{Read, ReadWrite, Write};
use graph_core::library::{Library, LibraryArg, LibraryBinding, LibraryKernel};

pub mod cpu;

/// Every kernel of the library.
pub const LIBRARY: Library = Library { kernels: KERNELS };

const KERNELS: &[LibraryKernel] = &[
    LibraryKernel {
        path: "fill",
        summary: "output[i] = value",
        bindings: &[LibraryBinding {
            name: "output",
            mode: Write,
            elem: "f32",
        }],
        args: &[LibraryArg {
            name: "value",
            ty: "f32",
        }],
        source: include_str!("../wgsl/fill.wgsl"),
        pointwise: true,
    },
    LibraryKernel {
        path: "copy",
        summary: "output[i] = input[i]",
        bindings: &[
            LibraryBinding {
                name: "input",
                mode: Read,
                elem: "f32",
            },
            LibraryBinding {
                name: "output",
                mode: Write,
                elem: "f32",
            },
        ],
        args: &[],
        source: include_str!("../wgsl/copy.wgsl"),
        pointwise: true,
    },
    LibraryKernel {
        path: "scale",
        summary: "data[i] = alpha * data[i]",
        bindings: &[LibraryBinding {
            name: "data",
            mode: ReadWrite,
            elem: "f32",
        }],
        args: &[LibraryArg {
            name: "alpha",
            ty: "f32",
        }],
        source: include_str!("../wgsl/scale.wgsl"),
        pointwise: true,
    },
    LibraryKernel {
        path: "axpy",
        summary: "y[i] = a * x[i] + y[i]",
        bindings: &[
            LibraryBinding {
                name: "x",
                mode: Read,
                elem: "f32",
            },
            LibraryBinding {
                name: "y",
                mode: ReadWrite,
                elem: "f32",
            },
        ],
        args: &[LibraryArg {
            name: "a",
            ty: "f32",
        }],
        source: include_str!("../wgsl/axpy.wgsl"),
        pointwise: true,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use graph_core::ir::ParamsStorage;
    use graph_core::types::ValueType;
    use graph_core::wgsl;

    /// Every library kernel validates with naga against its own bindings, with constant arguments.
    #[test]
    fn every_kernel_validates_against_its_metadata() {
        for k in LIBRARY.kernels {
            let decls = wgsl::binding_declarations(k.bindings.iter().map(|b| {
                (
                    b.name,
                    ValueType::parse(b.elem).expect("library element type"),
                    b.mode,
                )
            }));
            let args: Vec<(&str, &str, &str)> =
                k.args.iter().map(|a| (a.name, a.ty, "1")).collect();
            let composed = wgsl::compose(&decls, "", ParamsStorage::Immediates, &args, k.source);
            let reflection = wgsl::validate(&composed.source)
                .unwrap_or_else(|e| panic!("{}: {}", k.path, e.rendered));
            assert_eq!(reflection.entry_points.len(), 1, "{}", k.path);
            for (i, b) in k.bindings.iter().enumerate() {
                let used = reflection.details[0].binding_uses[i].1;
                assert_eq!(used.write, b.mode.writes(), "{} binding {}", k.path, b.name);
            }
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
