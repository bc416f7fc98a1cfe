//! Every library kernel with its metadata: read by the crate (`LIBRARY`) and by its build script, which
//! validates each kernel's WGSL with naga against its metadata, so a bad kernel fails the build.

use graph_core::ir::AccessMode::{Read, ReadWrite, Write};
use graph_core::library::{
    GENERIC, GridReach, GridShape, LibraryArg, LibraryBinding, LibraryKernel,
};

/// The image kernels' dispatch: one pixel per invocation, made wide at bake where the image is large.
const PER_PIXEL: &str = "one invocation per pixel of `output` in workgroups of 256 (several pixels a grid \
                         apart per invocation at bake, from 512K pixels)";

/// Sobel's and Scharr's 3 x 3 neighbourhood.
const GRADIENT: GridShape = GridShape {
    x: GridReach::Fixed(1),
    y: GridReach::Fixed(1),
};

/// The blur along rows: `radius` columns either side.
const ALONG_ROWS: GridShape = GridShape {
    x: GridReach::Arg("radius"),
    y: GridReach::Fixed(0),
};

/// The blur along columns: `radius` rows either side.
const ALONG_COLUMNS: GridShape = GridShape {
    x: GridReach::Fixed(0),
    y: GridReach::Arg("radius"),
};

pub const KERNELS: &[LibraryKernel] = &[
    LibraryKernel {
        path: "fill",
        summary: "output[i] = value, for any element type",
        bindings: &[LibraryBinding {
            name: "output",
            mode: Write,
            elem: GENERIC,
            atomic: false,
        }],
        args: &[LibraryArg {
            name: "value",
            ty: GENERIC,
        }],
        source: include_str!("../wgsl/fill.wgsl"),
        pointwise: true,
        dispatch: "one invocation per element of the output",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "copy",
        summary: "output[i] = input[i], for any element type",
        bindings: &[
            LibraryBinding {
                name: "input",
                mode: Read,
                elem: GENERIC,
                atomic: false,
            },
            LibraryBinding {
                name: "output",
                mode: Write,
                elem: GENERIC,
                atomic: false,
            },
        ],
        args: &[],
        source: include_str!("../wgsl/copy.wgsl"),
        pointwise: true,
        dispatch: "one invocation per element of the output",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "scale",
        summary: "data[i] = alpha * data[i]",
        bindings: &[LibraryBinding {
            name: "data",
            mode: ReadWrite,
            elem: "f32",
            atomic: false,
        }],
        args: &[LibraryArg {
            name: "alpha",
            ty: "f32",
        }],
        source: include_str!("../wgsl/scale.wgsl"),
        pointwise: true,
        dispatch: "one invocation per element of `data`",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "axpy",
        summary: "y[i] = a * x[i] + y[i]",
        bindings: &[
            LibraryBinding {
                name: "x",
                mode: Read,
                elem: "f32",
                atomic: false,
            },
            LibraryBinding {
                name: "y",
                mode: ReadWrite,
                elem: "f32",
                atomic: false,
            },
        ],
        args: &[LibraryArg {
            name: "a",
            ty: "f32",
        }],
        source: include_str!("../wgsl/axpy.wgsl"),
        pointwise: true,
        dispatch: "one invocation per element of `y`",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "threshold",
        summary: "output[i] = 1.0 if input[i] > level, else 0.0",
        bindings: INPUT_OUTPUT,
        args: &[LibraryArg {
            name: "level",
            ty: "f32",
        }],
        source: include_str!("../wgsl/threshold.wgsl"),
        pointwise: true,
        dispatch: "one invocation per element of `output`",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "transpose",
        summary: "output (cols x rows) = the transpose of input (rows x cols), row-major",
        bindings: INPUT_OUTPUT,
        args: &[
            LibraryArg {
                name: "rows",
                ty: "u32",
            },
            LibraryArg {
                name: "cols",
                ty: "u32",
            },
        ],
        source: include_str!("../wgsl/transpose.wgsl"),
        pointwise: false,
        dispatch: "one invocation per 4 elements of `output` in workgroups of 256 (each strides over the \
                   32 x 32 tiles: any count of workgroups)",
        sized_by: None,
        per_invocation: 4,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "sobel",
        summary: "output = the Sobel gradient magnitude of a width x height image, edges clamped",
        bindings: INPUT_OUTPUT,
        args: IMAGE_SIZE,
        source: concat!(
            "const SIDE: f32 = 1.0;\nconst CENTRE: f32 = 2.0;\n",
            include_str!("../wgsl/gradient.wgsl")
        ),
        pointwise: false,
        dispatch: PER_PIXEL,
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: Some(GRADIENT),
    },
    LibraryKernel {
        path: "scharr",
        summary: "output = the Scharr gradient magnitude of a width x height image, edges clamped",
        bindings: INPUT_OUTPUT,
        args: IMAGE_SIZE,
        source: concat!(
            "const SIDE: f32 = 3.0;\nconst CENTRE: f32 = 10.0;\n",
            include_str!("../wgsl/gradient.wgsl")
        ),
        pointwise: false,
        dispatch: PER_PIXEL,
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: Some(GRADIENT),
    },
    LibraryKernel {
        path: "conv2d",
        summary: "output = input (width x height) convolved with weights ((2 radius + 1)^2), edges clamped",
        bindings: &[
            LibraryBinding {
                name: "input",
                mode: Read,
                elem: "f32",
                atomic: false,
            },
            LibraryBinding {
                name: "weights",
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
        ],
        args: &[
            LibraryArg {
                name: "width",
                ty: "u32",
            },
            LibraryArg {
                name: "height",
                ty: "u32",
            },
            LibraryArg {
                name: "radius",
                ty: "u32",
            },
        ],
        source: include_str!("../wgsl/conv2d.wgsl"),
        pointwise: false,
        dispatch: "one invocation per 4 pixels of `output` in workgroups of 256 (each strides over the \
                   pixels: any dispatch covers the image)",
        sized_by: None,
        per_invocation: 4,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "blur_h",
        summary: "a Gaussian blur along rows of a width x height image (the first pass of a separable blur)",
        bindings: INPUT_OUTPUT,
        args: BLUR_ARGS,
        source: concat!(
            "const ALONG_ROWS: bool = true;\n",
            include_str!("../wgsl/blur.wgsl")
        ),
        pointwise: false,
        dispatch: PER_PIXEL,
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: Some(ALONG_ROWS),
    },
    LibraryKernel {
        path: "blur_v",
        summary: "a Gaussian blur along columns of a width x height image (the second pass)",
        bindings: INPUT_OUTPUT,
        args: BLUR_ARGS,
        source: concat!(
            "const ALONG_ROWS: bool = false;\n",
            include_str!("../wgsl/blur.wgsl")
        ),
        pointwise: false,
        dispatch: PER_PIXEL,
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: Some(ALONG_COLUMNS),
    },
    LibraryKernel {
        path: "softmax_rows",
        summary: "output = the softmax of each row of input (rows of cols elements), computed stably",
        bindings: INPUT_OUTPUT,
        args: &[LibraryArg {
            name: "cols",
            ty: "u32",
        }],
        source: include_str!("../wgsl/softmax_rows.wgsl"),
        pointwise: false,
        dispatch: "one invocation per 16 elements of `output` in workgroups of 256; the workgroups split the \
                   elements evenly, so any dispatch computes every row",
        sized_by: None,
        per_invocation: 16,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "matmul",
        summary: "c (m x n) = a (m x k) * b (k x n), row-major, in 128 x 128 tiles through workgroup memory",
        bindings: &[
            LibraryBinding {
                name: "a",
                mode: Read,
                elem: "f32",
                atomic: false,
            },
            LibraryBinding {
                name: "b",
                mode: Read,
                elem: "f32",
                atomic: false,
            },
            LibraryBinding {
                name: "c",
                mode: Write,
                elem: "f32",
                atomic: false,
            },
        ],
        args: &[
            LibraryArg {
                name: "m",
                ty: "u32",
            },
            LibraryArg {
                name: "n",
                ty: "u32",
            },
            LibraryArg {
                name: "k",
                ty: "u32",
            },
        ],
        source: include_str!("../wgsl/matmul.wgsl"),
        pointwise: false,
        dispatch: "any number of workgroups of 256 (each strides over the 128 x 128 tiles of `c`); the \
                   default, one invocation per 64 elements of `c`, gives about one tile per workgroup",
        sized_by: None,
        per_invocation: 64,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "histogram",
        summary: "bins[b] += the number of input elements in bin b of [lo, hi) (atomics; zero bins first)",
        bindings: &[
            LibraryBinding {
                name: "input",
                mode: Read,
                elem: "f32",
                atomic: false,
            },
            LibraryBinding {
                name: "bins",
                mode: ReadWrite,
                elem: "u32",
                atomic: true,
            },
        ],
        args: &[
            LibraryArg {
                name: "lo",
                ty: "f32",
            },
            LibraryArg {
                name: "hi",
                ty: "f32",
            },
        ],
        source: include_str!("../wgsl/histogram.wgsl"),
        pointwise: false,
        dispatch: "one invocation per 8 elements of `input`, at most 262,144 (1024 workgroups of 256; each \
                   strides over `input`, so any dispatch counts every element)",
        sized_by: Some("input"),
        per_invocation: 8,
        most_invocations: 1 << 18,
        grid: None,
    },
    reduce_step(
        "reduce::sum_step",
        "output[w] = the sum of workgroup w's strided share of input (one step of `reduce::sum`)",
        concat!(
            "fn combine(a: f32, b: f32) -> f32 { return a + b; }\nconst IDENTITY: f32 = 0.0;\n",
            include_str!("../wgsl/reduce.wgsl")
        ),
    ),
    reduce_step(
        "reduce::min_step",
        "output[w] = the least of workgroup w's strided share of input (one step of `reduce::min`)",
        concat!(
            "fn combine(a: f32, b: f32) -> f32 { return min(a, b); }\nconst IDENTITY: f32 = 3.40282347e38;\n",
            include_str!("../wgsl/reduce.wgsl")
        ),
    ),
    reduce_step(
        "reduce::max_step",
        "output[w] = the greatest of workgroup w's strided share of input (one step of `reduce::max`)",
        concat!(
            "fn combine(a: f32, b: f32) -> f32 { return max(a, b); }\nconst IDENTITY: f32 = -3.40282347e38;\n",
            include_str!("../wgsl/reduce.wgsl")
        ),
    ),
    LibraryKernel {
        path: "scan::chunk_sums",
        summary: "output[w] = the sum of chunk w of input, one contiguous chunk per workgroup (a scan's first pass)",
        bindings: INPUT_OUTPUT,
        args: &[],
        source: include_str!("../wgsl/scan_chunks.wgsl"),
        pointwise: false,
        dispatch: "workgroups of 256, any count; workgroup w writes output[w]",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
    LibraryKernel {
        path: "scan::offsets",
        summary: "the first 4096 elements of sums replaced by their exclusive prefix sums (a scan's second pass)",
        bindings: &[LibraryBinding {
            name: "sums",
            mode: ReadWrite,
            elem: "f32",
            atomic: false,
        }],
        args: &[],
        source: include_str!("../wgsl/scan_offsets.wgsl"),
        pointwise: false,
        dispatch: "one workgroup of 256",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    },
    scan_apply(
        "scan::apply_inclusive",
        "output = the inclusive prefix sums of input, chunk by chunk from each chunk's offset (a scan's last pass)",
        concat!(
            "const INCLUSIVE: bool = true;\n",
            include_str!("../wgsl/scan_apply.wgsl")
        ),
    ),
    scan_apply(
        "scan::apply_exclusive",
        "output = the exclusive prefix sums of input, chunk by chunk from each chunk's offset (a scan's last pass)",
        concat!(
            "const INCLUSIVE: bool = false;\n",
            include_str!("../wgsl/scan_apply.wgsl")
        ),
    ),
];

/// `input` read, `output` written, both `f32`: most kernels' bindings.
/// A step of a reduction with `source` (the combining function and its identity prepended to `reduce.wgsl`).
const fn reduce_step(
    path: &'static str,
    summary: &'static str,
    source: &'static str,
) -> LibraryKernel {
    LibraryKernel {
        path,
        summary,
        bindings: INPUT_OUTPUT,
        args: &[],
        source,
        pointwise: false,
        dispatch: "workgroups of 256, any count; workgroup w writes output[w]",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    }
}

/// A scan's last pass with `source` (`scan_apply.wgsl`, inclusive or not).
const fn scan_apply(
    path: &'static str,
    summary: &'static str,
    source: &'static str,
) -> LibraryKernel {
    LibraryKernel {
        path,
        summary,
        bindings: SCAN_APPLY,
        args: &[],
        source,
        pointwise: false,
        dispatch: "as many workgroups of 256 as `scan::chunk_sums` had",
        sized_by: None,
        per_invocation: 1,
        most_invocations: 0,
        grid: None,
    }
}

/// A scan's last pass: the input, the chunks' offsets, the output.
const SCAN_APPLY: &[LibraryBinding] = &[
    LibraryBinding {
        name: "input",
        mode: Read,
        elem: "f32",
        atomic: false,
    },
    LibraryBinding {
        name: "offsets",
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

const INPUT_OUTPUT: &[LibraryBinding] = &[
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

/// An image's size in pixels.
const IMAGE_SIZE: &[LibraryArg] = &[
    LibraryArg {
        name: "width",
        ty: "u32",
    },
    LibraryArg {
        name: "height",
        ty: "u32",
    },
];

const BLUR_ARGS: &[LibraryArg] = &[
    LibraryArg {
        name: "width",
        ty: "u32",
    },
    LibraryArg {
        name: "height",
        ty: "u32",
    },
    LibraryArg {
        name: "radius",
        ty: "u32",
    },
    LibraryArg {
        name: "sigma",
        ty: "f32",
    },
];
