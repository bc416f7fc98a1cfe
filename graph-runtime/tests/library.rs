//! The kernel library on the GPU: each kernel against its CPU reference on fresh random inputs (length 1, a
//! length that is no multiple of the workgroup size, and one past 65535 workgroups), and each kernel's
//! `pointwise` mark checked by what it means.

#![forbid(unsafe_code)]

mod common;

use common::{gpu, random_f32s, random_u32, rng};
use graph_runtime::ir::AccessMode;
use graph_runtime::kernels::GENERIC;
use graph_runtime::kernels::cpu;
use graph_runtime::{BakedGraph, Error, Gpu, GraphBuilder, LIBRARY};
use proptest::test_runner::TestRng;

/// 65535 workgroups of 64 cover 4,194,240 elements; 2050 x 2050 is past that.
const BIG_SIDE: usize = 2050;

/// Runs library kernel `path` once: each binding to a buffer (inputs with the given data, written ones
/// poisoned with NaN, `len` long), the arguments as WGSL text; returns each written buffer, by binding.
fn run(
    gpu: &Gpu,
    path: &str,
    inputs: &[(&str, &[f32])],
    len: usize,
    args: &[(&str, String)],
) -> Result<Vec<(String, Vec<f32>)>, Error> {
    let kernel = LIBRARY.get(path).expect("a library kernel");
    let mut b = GraphBuilder::new("One");
    let mut buffers = Vec::new();
    for binding in kernel.bindings {
        let given = inputs.iter().find(|(name, _)| *name == binding.name);
        // Generic bindings are run with `f32` here (`library_fill_and_copy_take_every_element_type` runs
        // them with other types).
        let elem = if binding.elem == GENERIC {
            "f32"
        } else {
            binding.elem
        };
        match binding.mode {
            AccessMode::Read => b.input(binding.name, elem),
            AccessMode::Write => b.output(binding.name, elem),
            AccessMode::ReadWrite => b.inout(binding.name, elem),
        };
        // `f32` buffers not given start as NaN; `u32` ones (histogram bins, which count up) as zero.
        let buffer = match elem {
            "u32" => {
                let words: Vec<u32> =
                    given.map_or(vec![0; len], |g| g.1.iter().map(|&v| v as u32).collect());
                Bound::U32(gpu.buffer_from_slice(&words)?)
            }
            _ => Bound::F32(
                gpu.buffer_from_slice(&given.map_or(vec![f32::NAN; len], |g| g.1.to_vec()))?,
            ),
        };
        buffers.push((binding.name, buffer));
    }
    let bindings: Vec<(&str, &str)> = kernel.bindings.iter().map(|b| (b.name, b.name)).collect();
    let args: Vec<(&str, &str)> = args.iter().map(|(n, v)| (*n, v.as_str())).collect();
    b.library("k", path, &bindings, &args);
    let desc = b.build(&LIBRARY).map_err(|e| Error::Bake {
        graph: "One".into(),
        reason: e.to_string(),
    })?;
    let bound: Vec<(&str, &graph_runtime::AnyBuffer)> =
        buffers.iter().map(|(n, buf)| (*n, buf.any())).collect();
    BakedGraph::bake(gpu, desc, &bound)?.replay_blocking()?;
    let mut written = Vec::new();
    for (binding, (name, buffer)) in kernel.bindings.iter().zip(&buffers) {
        if binding.mode.writes() {
            let values = match buffer {
                Bound::F32(b) => b.read_blocking()?,
                Bound::U32(b) => b.read_blocking()?.iter().map(|&v| v as f32).collect(),
            };
            written.push((name.to_string(), values));
        }
    }
    Ok(written)
}

/// A CPU reference of an image kernel: input, output, width, height.
type Reference = fn(&[f32], &mut [f32], usize, usize);

/// A bound buffer of the element type its binding takes.
enum Bound {
    F32(graph_runtime::Buffer<f32>),
    U32(graph_runtime::Buffer<u32>),
}

impl Bound {
    fn any(&self) -> &graph_runtime::AnyBuffer {
        match self {
            Bound::F32(b) => b.as_any(),
            Bound::U32(b) => b.as_any(),
        }
    }
}

/// Element-wise within `tolerance * (1 + |expected|)`, naming the first bad index.
#[track_caller]
fn assert_close(actual: &[f32], expected: &[f32], tolerance: f32, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a - e).abs() <= tolerance * (1.0 + e.abs()),
            "{what}[{i}]: GPU {a}, CPU {e}"
        );
    }
}

fn only(written: Vec<(String, Vec<f32>)>) -> Vec<f32> {
    written.into_iter().next().map(|w| w.1).unwrap_or_default()
}

/// Image sizes: one pixel, a random size that is no multiple of 64 pixels, and one past 65535 workgroups.
fn image_sizes(rng: &mut TestRng) -> [(usize, usize); 3] {
    let w = 2 + random_u32(rng, 60) as usize;
    let h = 2 + random_u32(rng, 60) as usize;
    let (w, h) = if (w * h).is_multiple_of(64) {
        (w + 1, h)
    } else {
        (w, h)
    };
    [(1, 1), (w, h), (BIG_SIDE, BIG_SIDE)]
}

#[test]
fn threshold_matches_the_cpu() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for n in [
        1,
        65 + random_u32(&mut rng, 3000) as usize,
        BIG_SIDE * BIG_SIDE,
    ] {
        let xs = random_f32s(&mut rng, n);
        let level = random_f32s(&mut rng, 1)[0];
        let got = only(run(
            &gpu,
            "threshold",
            &[("input", &xs)],
            n,
            &[("level", format!("{level:?}"))],
        )?);
        let mut want = vec![0.0; n];
        cpu::threshold(&xs, &mut want, level);
        assert_close(&got, &want, 0.0, &format!("threshold of {n}"));
    }
    Ok(())
}

#[test]
fn transpose_matches_the_cpu() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for (rows, cols) in image_sizes(&mut rng) {
        let n = rows * cols;
        let xs = random_f32s(&mut rng, n);
        let args = [("rows", format!("{rows}u")), ("cols", format!("{cols}u"))];
        let got = only(run(&gpu, "transpose", &[("input", &xs)], n, &args)?);
        let mut want = vec![0.0; n];
        cpu::transpose(&xs, &mut want, rows, cols);
        assert_close(&got, &want, 0.0, &format!("transpose of {rows}x{cols}"));
    }
    Ok(())
}

#[test]
fn image_filters_match_the_cpu() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for (w, h) in image_sizes(&mut rng) {
        let n = w * h;
        let xs = random_f32s(&mut rng, n);
        let size = [("width", format!("{w}u")), ("height", format!("{h}u"))];
        let what = |k: &str| format!("{k} of {w}x{h}");

        let mut want = vec![0.0; n];
        let gradients: [(&str, Reference); 2] = [("sobel", cpu::sobel), ("scharr", cpu::scharr)];
        for (path, reference) in gradients {
            let got = only(run(&gpu, path, &[("input", &xs)], n, &size)?);
            reference(&xs, &mut want, w, h);
            // Sums of six weighted pixels (weights up to 10), squared: relative rounding of a few ulp.
            assert_close(&got, &want, 1e-5, &what(path));
        }

        // conv2d writes out radii 1 and 2 tap by tap and loops over any other: each form at every size.
        for radius in [1, 2, 3] {
            conv2d_matches(&gpu, &mut rng, &xs, (w, h), radius, &what("conv2d"))?;
        }
        let radius = 1 + random_u32(&mut rng, 2) as usize;
        let sigma = 0.5 + random_f32s(&mut rng, 1)[0].abs() * 2.0;
        blurs_match(&gpu, &xs, (w, h), (radius, sigma), &what("blur"))?;
    }
    // Radii near and past the image's size: most taps clamped at an edge. (llvmpipe stops a loop after
    // 65535 iterations, which conv2d's two loops of 257 would pass.)
    let (w, h) = (40 + random_u32(&mut rng, 9) as usize, 37);
    let xs = random_f32s(&mut rng, w * h);
    conv2d_matches(&gpu, &mut rng, &xs, (w, h), 16, "conv2d of radius 16")?;
    blurs_match(&gpu, &xs, (w, h), (128, 40.0), "blur of radius 128")?;
    // Images narrower than the 5 x 5 taps: every one of them clamped.
    for (w, h) in [(1, 1), (2, 3), (3, 1)] {
        let xs = random_f32s(&mut rng, w * h);
        for radius in [1, 2] {
            conv2d_matches(
                &gpu,
                &mut rng,
                &xs,
                (w, h),
                radius,
                "conv2d of a tiny image",
            )?;
        }
    }
    Ok(())
}

/// The arguments of an image filter over `(w, h)` pixels of radius `radius`.
fn filter_args((w, h): (usize, usize), radius: usize) -> Vec<(&'static str, String)> {
    vec![
        ("width", format!("{w}u")),
        ("height", format!("{h}u")),
        ("radius", format!("{radius}u")),
    ]
}

/// conv2d with random weights over the image `xs` of `(w, h)`, against the CPU.
fn conv2d_matches(
    gpu: &Gpu,
    rng: &mut TestRng,
    xs: &[f32],
    (w, h): (usize, usize),
    radius: usize,
    what: &str,
) -> Result<(), Error> {
    let n = w * h;
    let side = 2 * radius + 1;
    let weights = random_f32s(rng, side * side);
    let args = filter_args((w, h), radius);
    let inputs = [("input", xs), ("weights", &weights[..])];
    let got = only(run(gpu, "conv2d", &inputs, n, &args)?);
    let mut want = vec![0.0; n];
    cpu::conv2d(xs, &weights, &mut want, (w, h), radius);
    // Sums of (2 radius + 1)^2 products of values in [-1, 1): rounding of each, in any order.
    let what = format!("{what}, radius {radius}");
    assert_close(&got, &want, 1e-5 * (side * side) as f32, &what);
    Ok(())
}

/// Both blur passes over the image `xs` of `(w, h)`, against the CPU.
fn blurs_match(
    gpu: &Gpu,
    xs: &[f32],
    (w, h): (usize, usize),
    (radius, sigma): (usize, f32),
    what: &str,
) -> Result<(), Error> {
    let n = w * h;
    let mut args = filter_args((w, h), radius);
    args.push(("sigma", format!("{sigma:?}")));
    let mut want = vec![0.0; n];
    for (path, along_rows) in [("blur_h", true), ("blur_v", false)] {
        let got = only(run(gpu, path, &[("input", xs)], n, &args)?);
        cpu::blur(xs, &mut want, (w, h), (radius, sigma), along_rows);
        assert_close(&got, &want, 1e-5, &format!("{what}: {path}"));
    }
    Ok(())
}

#[test]
fn softmax_rows_matches_the_cpu() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    // Rows of at most 64 are read by each invocation, longer ones by the workgroup together: both, at the
    // boundary, rows longer than a workgroup's chunk of 4096 elements and rows that straddle chunks.
    let shapes = [
        (1, 1),
        (7, 64),
        (7, 65),
        (
            3 + random_u32(&mut rng, 20) as usize,
            65 + random_u32(&mut rng, 100) as usize,
        ),
        (
            2 + random_u32(&mut rng, 4) as usize,
            4097 + random_u32(&mut rng, 5000) as usize,
        ),
        (BIG_SIDE * BIG_SIDE / 5, 5),
        (BIG_SIDE * BIG_SIDE / 1000, 1000),
    ];
    for (rows, cols) in shapes {
        let n = rows * cols;
        let xs: Vec<f32> = random_f32s(&mut rng, n).iter().map(|v| v * 20.0).collect();
        let got = only(run(
            &gpu,
            "softmax_rows",
            &[("input", &xs)],
            n,
            &[("cols", format!("{cols}u"))],
        )?);
        let mut want = vec![0.0; n];
        cpu::softmax_rows(&xs, &mut want, cols);
        assert_close(&got, &want, 1e-5, &format!("softmax of {rows}x{cols}"));
        let first_row: f32 = got[..cols].iter().sum();
        assert!((first_row - 1.0).abs() < 1e-4, "a row sums to {first_row}");
    }
    Ok(())
}

#[test]
fn matmul_matches_the_cpu() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let odd = |rng: &mut TestRng| 9 + 2 * random_u32(rng, 30) as usize;
    // One element; sizes inside one 128 x 128 tile, and past one, that are no multiple of it, with a `k` that is
    // no multiple of the 8 staged at a time; and a `c` of more tiles than the default dispatch has workgroups
    // (each strides on to the next).
    let past_a_tile = |rng: &mut TestRng| 129 + random_u32(rng, 120) as usize;
    let shapes = [
        (1, 1, 1),
        (odd(&mut rng), odd(&mut rng), odd(&mut rng)),
        (past_a_tile(&mut rng), past_a_tile(&mut rng), odd(&mut rng)),
        (BIG_SIDE, BIG_SIDE, 3),
    ];
    for (m, n, k) in shapes {
        let (a, b) = (random_f32s(&mut rng, m * k), random_f32s(&mut rng, k * n));
        let args = [
            ("m", format!("{m}u")),
            ("n", format!("{n}u")),
            ("k", format!("{k}u")),
        ];
        let got = only(run(&gpu, "matmul", &[("a", &a), ("b", &b)], m * n, &args)?);
        let mut want = vec![0.0; m * n];
        cpu::matmul(&a, &b, &mut want, (m, n, k));
        assert_close(
            &got,
            &want,
            1e-6 * k as f32,
            &format!("matmul {m}x{k} * {k}x{n}"),
        );
    }
    Ok(())
}

#[test]
fn the_histograms_default_dispatch_is_one_invocation_per_8_elements_up_to_1024_workgroups() {
    use graph_runtime::desc::{DispatchDesc, OpDesc};
    let mut b = GraphBuilder::new("Counts");
    b.input("x", "f32").inout("bins", "u32");
    b.library(
        "h",
        "histogram",
        &[("input", "x"), ("bins", "bins")],
        &[("lo", "0.0"), ("hi", "1.0")],
    );
    let desc = b.build(&LIBRARY).expect("a good graph");
    let OpDesc::Kernel(k) = &desc.nodes[0].op else {
        panic!("not a kernel")
    };
    let DispatchDesc::Threads(dims) = &k.dispatch else {
        panic!("{:?}", k.dispatch)
    };
    assert_eq!(&*dims[0].text, "min(x.len().div_ceil(8), 262144)");
    for (len, threads) in [
        (1, 1),
        (262_144, 32_768),
        (1 << 21, 1 << 18),
        (1 << 22, 1 << 18),
        (1 << 24, 1 << 18),
    ] {
        let got = graph_core::size::evaluate(&dims[0].steps, &[], &[len, 256]).ok();
        assert_eq!(got, Some(threads), "{len} elements");
    }
}

#[test]
fn histogram_matches_the_cpu() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    // Few bins and many: the kernel counts in workgroup memory up to 256 bins, and straight into memory past
    // that.
    let few = 1 + random_u32(&mut rng, 256) as usize;
    let many = 1025 + random_u32(&mut rng, 2000) as usize;
    let (lo, hi) = (-2.0f32, 3.0f32);
    for (n, bins) in [
        (1, few),
        (65 + random_u32(&mut rng, 3000) as usize, few),
        // Not a whole number of 4096-element tiles.
        (4096 * 3 + 1 + random_u32(&mut rng, 4000) as usize, few),
        (BIG_SIDE * BIG_SIDE, few),
        (BIG_SIDE * BIG_SIDE, 256),
        (BIG_SIDE * BIG_SIDE, 257),
        (BIG_SIDE * BIG_SIDE, 1024),
        (65 + random_u32(&mut rng, 30000) as usize, many),
    ] {
        // Values at bin centres give or take a quarter bin, so the GPU's division (WGSL allows 2.5 ulp)
        // cannot move one across a bin edge; a tenth of them fall outside [lo, hi).
        let xs: Vec<f32> = (0..n)
            .map(|_| {
                let bin = random_u32(&mut rng, bins as u32 + bins as u32 / 10 + 1) as f32;
                let jitter = random_f32s(&mut rng, 1)[0] * 0.25;
                lo + (bin + 0.5 + jitter) * (hi - lo) / bins as f32
            })
            .collect();
        let args = [("lo", format!("{lo:?}")), ("hi", format!("{hi:?}"))];
        let got = only(run(&gpu, "histogram", &[("input", &xs)], bins, &args)?);
        let mut want = vec![0u32; bins];
        cpu::histogram(&xs, &mut want, lo, hi);
        let want: Vec<f32> = want.iter().map(|&c| c as f32).collect();
        assert_close(&got, &want, 0.0, &format!("histogram of {n} into {bins}"));
        assert!(want.iter().sum::<f32>() <= n as f32);
    }
    Ok(())
}

/// A kernel marked pointwise gives the permuted output for a permuted input; one marked otherwise does not,
/// for a random permutation of random data. Every kernel of the library is checked, on 600 elements (an image
/// of 30 x 20).
#[test]
fn every_kernels_pointwise_mark_is_true() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 600;
    let mut permutation: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        permutation.swap(i, random_u32(&mut rng, i as u32 + 1) as usize);
    }
    let permute = |xs: &[f32]| -> Vec<f32> { permutation.iter().map(|&p| xs[p]).collect() };
    for kernel in LIBRARY.kernels {
        let args: Vec<(&str, String)> = kernel
            .args
            .iter()
            .map(|a| {
                let value = match a.name {
                    "width" | "cols" | "n" => "30u",
                    "height" | "rows" | "m" => "20u",
                    "k" => "20u",
                    "lo" => "-1.0",
                    "hi" => "1.0",
                    "radius" => "1u",
                    _ => "1.5",
                };
                (a.name, value.to_string())
            })
            .collect();
        let inputs: Vec<(&str, Vec<f32>)> = kernel
            .bindings
            .iter()
            .filter(|b| b.mode.reads())
            .map(|b| (b.name, random_f32s(&mut rng, n)))
            .collect();
        let permuted: Vec<(&str, Vec<f32>)> = inputs
            .iter()
            .map(|(name, xs)| (*name, permute(xs)))
            .collect();
        let plain = run(&gpu, kernel.path, &borrowed(&inputs), n, &args)?;
        let moved = run(&gpu, kernel.path, &borrowed(&permuted), n, &args)?;
        let commutes = plain.iter().zip(&moved).all(|((_, a), (_, b))| {
            permute(a)
                .iter()
                .zip(b)
                .all(|(x, y)| x.to_bits() == y.to_bits())
        });
        assert_eq!(
            commutes,
            kernel.pointwise,
            "`{}` is marked pointwise: {}, but permuting its input {} its output alike",
            kernel.path,
            kernel.pointwise,
            if commutes {
                "permutes"
            } else {
                "does not permute"
            }
        );
    }
    Ok(())
}

fn borrowed<'a>(list: &'a [(&'a str, Vec<f32>)]) -> Vec<(&'a str, &'a [f32])> {
    list.iter().map(|(n, v)| (*n, v.as_slice())).collect()
}

#[test]
fn library_fill_and_copy_take_every_element_type() -> Result<(), Error> {
    graph_runtime::graph! {
        graph Generic {
            params { v: vec4<f32>, k: u32 }
            buffers { a: [vec4<f32>] = output, b: [vec4<f32>] = output, c: [u32] = output, d: [i32] = input, e: [i32] = output }
            kernel fa = kernels::fill(output: a, value: params.v);
            kernel ca = kernels::copy(input: a, output: b);
            kernel fc = kernels::fill(output: c, value: params.k);
            kernel cd = kernels::copy(input: d, output: e);
        }
    }
    let gpu = gpu();
    let mut rng = rng();
    let n = 65 + random_u32(&mut rng, 2000) as usize;
    let v = [random_f32s(&mut rng, 1)[0], 2.0, -3.5, 0.25];
    let k = random_u32(&mut rng, 1 << 30);
    let ds: Vec<i32> = (0..n)
        .map(|_| random_u32(&mut rng, 2000) as i32 - 1000)
        .collect();
    let a = gpu.buffer_from_slice(&vec![[f32::NAN; 4]; n])?;
    let b = gpu.buffer_from_slice(&vec![[f32::NAN; 4]; n])?;
    let c = gpu.buffer_from_slice(&vec![0xDEAD_BEEF_u32; n])?;
    let d = gpu.buffer_from_slice(&ds)?;
    let e = gpu.buffer_from_slice(&vec![i32::MIN; n])?;
    let mut g = Generic::bake(
        &gpu,
        GenericBuffers {
            a: &a,
            b: &b,
            c: &c,
            d: &d,
            e: &e,
        },
    )?;
    *g.params_mut() = GenericParams::new(v, k);
    g.replay_blocking()?;
    assert_eq!(a.read_blocking()?, vec![v; n], "a filled");
    assert_eq!(b.read_blocking()?, vec![v; n], "b, a copy of a");
    assert_eq!(c.read_blocking()?, vec![k; n], "c filled");
    assert_eq!(e.read_blocking()?, ds, "e, a copy of d");
    Ok(())
}

/// Runs library subgraph `path` once over `input` into an output of `out_len` elements poisoned with NaN, built
/// with the builder; returns the output.
fn run_subgraph(gpu: &Gpu, path: &str, input: &[f32], out_len: usize) -> Result<Vec<f32>, Error> {
    let mut b = GraphBuilder::new("One");
    b.input("x", "f32").output("y", "f32");
    b.library_subgraph(
        "s",
        path,
        &[
            ("input", "x", AccessMode::Read),
            ("output", "y", AccessMode::Write),
        ],
    );
    let desc = b.build(&LIBRARY).map_err(|e| Error::Bake {
        graph: "One".into(),
        reason: e.to_string(),
    })?;
    let x = gpu.buffer_from_slice(input)?;
    let y = gpu.buffer_from_slice(&vec![f32::NAN; out_len])?;
    BakedGraph::bake(gpu, desc, &[("x", x.as_any()), ("y", y.as_any())])?.replay_blocking()?;
    y.read_blocking()
}

/// Lengths for the multi-pass subgraphs: 1, one that is no multiple of 256, and one past 65535 workgroups of
/// 256 (whose data are 0s and 1s, so every sum up to 2^24 is exact in `f32`).
fn subgraph_inputs(rng: &mut TestRng) -> Vec<Vec<f32>> {
    let odd = 257 + random_u32(rng, 200_000) as usize;
    let big = 65_535 * 256 + 1;
    let bits: Vec<f32> = (0..big).map(|_| random_u32(rng, 2) as f32).collect();
    vec![random_f32s(rng, 1), random_f32s(rng, odd), bits]
}

#[test]
fn reduce_subgraphs_match_the_cpu_at_any_length() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for input in subgraph_inputs(&mut rng) {
        let n = input.len();
        let sum = run_subgraph(&gpu, "reduce::sum", &input, 1)?;
        let want = cpu::reduce_sum(&input);
        let bound = 1e-6 * input.iter().map(|v| f64::from(v.abs())).sum::<f64>() + 1e-6;
        assert!(
            (f64::from(sum[0]) - want).abs() <= bound,
            "sum of {n}: GPU {}, CPU {want}",
            sum[0]
        );
        let min = run_subgraph(&gpu, "reduce::min", &input, 1)?;
        assert_eq!(min[0], cpu::reduce_min(&input), "min of {n}");
        let max = run_subgraph(&gpu, "reduce::max", &input, 1)?;
        assert_eq!(max[0], cpu::reduce_max(&input), "max of {n}");
    }
    Ok(())
}

#[test]
fn scan_subgraphs_match_the_cpu_at_any_length() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for input in subgraph_inputs(&mut rng) {
        for (path, inclusive) in [("scan::inclusive", true), ("scan::exclusive", false)] {
            let got = run_subgraph(&gpu, path, &input, input.len())?;
            let want = cpu::scan(&input, inclusive);
            // Each prefix is added in another order on the GPU: bounded by the sum of magnitudes so far.
            let mut magnitude = 0.0;
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                magnitude += f64::from(input[i].abs());
                let bound = 1e-6 * magnitude + 1e-6;
                assert!(
                    (f64::from(g) - w).abs() <= bound,
                    "{path} of {}: [{i}] GPU {g}, CPU {w}",
                    input.len()
                );
            }
        }
    }
    Ok(())
}

graph_runtime::graph! {
    /// The mean of `x` through the library's `reduce::sum` subgraph, then a kernel.
    graph Mean {
        buffers { x: [f32] = input, mean: [f32; 1] = output, total: [f32; 1] }
        subgraph sum = kernels::reduce::sum(input: x: read, output: total: write);
        kernel divide(total: read, x: read, mean: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() { mean[0] = total[0] / f32(arrayLength(&x)); }
        }
    }
}

#[test]
fn a_library_subgraph_is_a_subgraph_in_graph() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 100_000) as usize;
    let xs = random_f32s(&mut rng, len);
    let x = gpu.buffer_from_slice(&xs)?;
    let mean = gpu.buffer_from_slice(&[f32::NAN])?;
    Mean::bake(&gpu, MeanBuffers { x: &x, mean: &mean })?.replay_blocking()?;
    let want = cpu::reduce_sum(&xs) / xs.len() as f64;
    let got = f64::from(mean.read_blocking()?[0]);
    assert!(
        (got - want).abs() <= 1e-5 * want.abs().max(1.0),
        "GPU {got}, CPU {want}"
    );
    Ok(())
}
