//! The kernel library against memory speed: each kernel alone in a graph over square images or vectors of
//! `n` `f32` elements, its GPU time by timestamps (the median of several profiled replays), the bytes it
//! must move at least (each input read once, each output written once), and what that is as a fraction of
//! the bandwidth a copy of the same size reaches on the same device (the `copy` row, itself a library
//! kernel). Each kernel's output is checked against its CPU reference (`kernels::cpu`) first.
//!
//! After them, copies written by hand four ways (workgroup width, elements per invocation) show what the
//! library's form of kernel costs.
//!
//! `cargo bench -p graph-runtime --bench library_speed -- [--sides 1024,4096] [--runs 9]`

#![forbid(unsafe_code)]

#[path = "common/args.rs"]
mod args;

use graph_runtime::kernels::cpu;
use graph_runtime::{AnyBuffer, BakedGraph, Buffer, Error, Gpu, GraphBuilder, KernelSpec, LIBRARY};

/// One kernel's case at one size.
struct Case {
    path: &'static str,
    /// Binding by binding: the buffer's data (inputs) or its length (outputs, poisoned), and its type.
    buffers: Vec<(&'static str, Data)>,
    args: Vec<(&'static str, String)>,
    /// The least it moves: each input read once, each output written once.
    bytes: u64,
    /// The output binding it writes, and what the CPU says it holds.
    expected: (&'static str, Expected),
}

enum Data {
    F32(Vec<f32>),
    Poisoned(usize),
    Zeros(usize),
}

enum Expected {
    F32(Vec<f32>, f32),
    U32(Vec<u32>),
}

fn image(side: usize) -> Vec<f32> {
    (0..side * side)
        .map(|i| {
            let (x, y) = ((i % side) as f32, (i / side) as f32);
            ((x * 0.013).sin() + (y * 0.021).cos()) * 0.5 + ((i % 7) as f32) * 0.01
        })
        .collect()
}

fn cases(side: usize) -> Vec<Case> {
    let n = side * side;
    let bytes = |elements: usize| (elements * 4) as u64;
    let x = image(side);
    let y: Vec<f32> = x.iter().map(|v| 1.0 - v).collect();
    let mut cases = Vec::new();

    let mut copied = vec![0.0; n];
    cpu::copy(&x, &mut copied);
    cases.push(Case {
        path: "copy",
        buffers: vec![
            ("input", Data::F32(x.clone())),
            ("output", Data::Poisoned(n)),
        ],
        args: vec![],
        bytes: bytes(2 * n),
        expected: ("output", Expected::F32(copied, 0.0)),
    });

    let mut scaled = x.clone();
    cpu::scale(&mut scaled, 1.5);
    cases.push(Case {
        path: "scale",
        buffers: vec![("data", Data::F32(x.clone()))],
        args: vec![("alpha", "1.5".into())],
        bytes: bytes(2 * n),
        expected: ("data", Expected::F32(scaled, 1e-6)),
    });

    let mut axpy = y.clone();
    cpu::axpy(0.75, &x, &mut axpy);
    cases.push(Case {
        path: "axpy",
        buffers: vec![("x", Data::F32(x.clone())), ("y", Data::F32(y.clone()))],
        args: vec![("a", "0.75".into())],
        bytes: bytes(3 * n),
        expected: ("y", Expected::F32(axpy, 1e-6)),
    });

    let mut thresholded = vec![0.0; n];
    cpu::threshold(&x, &mut thresholded, 0.25);
    cases.push(Case {
        path: "threshold",
        buffers: vec![
            ("input", Data::F32(x.clone())),
            ("output", Data::Poisoned(n)),
        ],
        args: vec![("level", "0.25".into())],
        bytes: bytes(2 * n),
        expected: ("output", Expected::F32(thresholded, 0.0)),
    });

    let mut transposed = vec![0.0; n];
    cpu::transpose(&x, &mut transposed, side, side);
    let dims = vec![("rows", format!("{side}u")), ("cols", format!("{side}u"))];
    cases.push(Case {
        path: "transpose",
        buffers: vec![
            ("input", Data::F32(x.clone())),
            ("output", Data::Poisoned(n)),
        ],
        args: dims,
        bytes: bytes(2 * n),
        expected: ("output", Expected::F32(transposed, 0.0)),
    });

    let image_args = || {
        vec![
            ("width", format!("{side}u")),
            ("height", format!("{side}u")),
        ]
    };
    let mut edges = vec![0.0; n];
    cpu::sobel(&x, &mut edges, side, side);
    cases.push(Case {
        path: "sobel",
        buffers: vec![
            ("input", Data::F32(x.clone())),
            ("output", Data::Poisoned(n)),
        ],
        args: image_args(),
        bytes: bytes(2 * n),
        expected: ("output", Expected::F32(edges, 1e-4)),
    });

    for (path, along_rows) in [("blur_h", true), ("blur_v", false)] {
        let mut blurred = vec![0.0; n];
        cpu::blur(&x, &mut blurred, (side, side), (2, 1.0), along_rows);
        let mut args = image_args();
        args.extend([("radius", "2u".to_string()), ("sigma", "1.0".to_string())]);
        cases.push(Case {
            path,
            buffers: vec![
                ("input", Data::F32(x.clone())),
                ("output", Data::Poisoned(n)),
            ],
            args,
            bytes: bytes(2 * n),
            expected: ("output", Expected::F32(blurred, 1e-4)),
        });
    }

    let mut softmax = vec![0.0; n];
    cpu::softmax_rows(&x, &mut softmax, side);
    cases.push(Case {
        path: "softmax_rows",
        buffers: vec![
            ("input", Data::F32(x.clone())),
            ("output", Data::Poisoned(n)),
        ],
        args: vec![("cols", format!("{side}u"))],
        bytes: bytes(2 * n),
        expected: ("output", Expected::F32(softmax, 1e-4)),
    });

    let mut bins = vec![0u32; 256];
    cpu::histogram(&x, &mut bins, -1.0, 1.5);
    cases.push(Case {
        path: "histogram",
        buffers: vec![("input", Data::F32(x)), ("bins", Data::Zeros(256))],
        args: vec![("lo", "-1.0".into()), ("hi", "1.5".into())],
        bytes: bytes(n),
        expected: ("bins", Expected::U32(bins)),
    });
    cases
}

/// A bound buffer of the element type its binding takes.
enum Bound {
    F32(Buffer<f32>),
    U32(Buffer<u32>),
}

impl Bound {
    fn any(&self) -> &AnyBuffer {
        match self {
            Bound::F32(b) => b.as_any(),
            Bound::U32(b) => b.as_any(),
        }
    }
}

/// Bakes `case` alone, checks one replay's output against the CPU, then profiles `runs` replays: the
/// median GPU time of the kernel's dispatch, in microseconds.
fn measure(gpu: &Gpu, case: &Case, runs: usize) -> Result<f64, Error> {
    let kernel = LIBRARY
        .get(case.path)
        .ok_or_else(|| Error::Gpu(format!("no library kernel `{}`", case.path)))?;
    let mut b = GraphBuilder::new("One");
    let mut bound = Vec::new();
    for binding in kernel.bindings {
        let Some((_, data)) = case.buffers.iter().find(|(n, _)| *n == binding.name) else {
            return Err(Error::Gpu(format!(
                "{}: no data for `{}`",
                case.path, binding.name
            )));
        };
        let elem = if binding.elem == "u32" { "u32" } else { "f32" };
        match binding.mode {
            graph_runtime::ir::AccessMode::Read => b.input(binding.name, elem),
            graph_runtime::ir::AccessMode::Write => b.output(binding.name, elem),
            graph_runtime::ir::AccessMode::ReadWrite => b.inout(binding.name, elem),
        };
        let buffer = match (data, elem) {
            (Data::Zeros(len), "u32") => Bound::U32(gpu.buffer_from_slice(&vec![0u32; *len])?),
            (Data::F32(v), _) => Bound::F32(gpu.buffer_from_slice(v)?),
            (Data::Poisoned(len), _) | (Data::Zeros(len), _) => {
                Bound::F32(gpu.buffer_from_slice(&vec![f32::NAN; *len])?)
            }
        };
        bound.push((binding.name, buffer));
    }
    let bindings: Vec<(&str, &str)> = kernel.bindings.iter().map(|b| (b.name, b.name)).collect();
    let args: Vec<(&str, &str)> = case.args.iter().map(|(n, v)| (*n, v.as_str())).collect();
    b.library("k", case.path, &bindings, &args);
    let desc = b
        .build(&LIBRARY)
        .map_err(|e| Error::Gpu(format!("{}: {e}", case.path)))?;
    let any: Vec<(&str, &AnyBuffer)> = bound.iter().map(|(n, b)| (*n, b.any())).collect();
    let mut graph = BakedGraph::bake(gpu, desc, &any)?;
    graph.replay_blocking()?;
    let (name, expected) = &case.expected;
    let Some((_, written)) = bound.iter().find(|(n, _)| n == name) else {
        return Err(Error::Gpu(format!("{}: no binding `{name}`", case.path)));
    };
    match (written, expected) {
        (Bound::F32(buffer), Expected::F32(want, tolerance)) => {
            let got = buffer.read_blocking()?;
            if let Some(i) = (0..want.len())
                .find(|&i| (got[i] - want[i]).abs() > tolerance * (1.0 + want[i].abs()))
            {
                return Err(Error::Gpu(format!(
                    "{}: `{name}`[{i}] is {}, the CPU says {}",
                    case.path, got[i], want[i]
                )));
            }
        }
        (Bound::U32(buffer), Expected::U32(want)) => {
            let got = buffer.read_blocking()?;
            // Values on a bin boundary may fall either way on the GPU: the counts may differ by those.
            let moved: u64 = got
                .iter()
                .zip(want)
                .map(|(&g, &w)| u64::from(g.abs_diff(w)))
                .sum();
            let total: u64 = want.iter().map(|&w| u64::from(w)).sum();
            if moved > total / 1000 || got.iter().map(|&g| u64::from(g)).sum::<u64>() != total {
                return Err(Error::Gpu(format!(
                    "{}: {moved} counts differ from the CPU's of {total}",
                    case.path
                )));
            }
        }
        _ => {
            return Err(Error::Gpu(format!(
                "{}: `{name}` of another type",
                case.path
            )));
        }
    }
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        // The histogram counts up: zero its bins, so each run counts the same.
        if let Some((_, Bound::U32(bins))) = bound.iter().find(|(n, _)| *n == "bins") {
            bins.write(&vec![0u32; bins.len()])?;
        }
        let profile = graph.profile()?;
        let ns: f64 = profile.dispatches.iter().map(|d| d.duration_ns()).sum();
        times.push(ns / 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Copies of `n` elements written four ways, to see what limits the library's one-element kernels: its
/// label, its WGSL (`input` to `output`), its workgroup width and how many invocations it runs.
fn copy_shapes(n: usize) -> Vec<(&'static str, String, usize, usize)> {
    let guarded = |body: &str, width: u32| {
        format!(
            "@compute @workgroup_size({width})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{
    let t = gid.x + gid.y * groups.x * {width}u;
    let n = arrayLength(&output);
    {body}
}}"
        )
    };
    vec![
        (
            "copy, 64 per workgroup",
            guarded("if (t < n) { output[t] = input[t]; }", 64),
            64,
            n,
        ),
        (
            "copy, 64 per workgroup, bounded by both lengths",
            guarded(
                "if (t < min(n, arrayLength(&input))) { output[t] = input[t]; }",
                64,
            ),
            64,
            n,
        ),
        (
            "copy, 256 per workgroup",
            guarded("if (t < n) { output[t] = input[t]; }", 256),
            256,
            n,
        ),
        (
            "copy, 256 per workgroup, 4 per invocation",
            guarded(
                "let q = (n + 3u) / 4u;
    for (var k = 0u; k < 4u; k++) { let i = t + k * q; if (t < q && i < n) { output[i] = input[i]; } }",
                256,
            ),
            256,
            n.div_ceil(4),
        ),
    ]
}

/// Bakes a copy of `shape` over a `side` x `side` image, checks it, and profiles it as [`measure`] does.
fn measure_copy(
    gpu: &Gpu,
    side: usize,
    (label, wgsl, width, threads): &(&str, String, usize, usize),
    runs: usize,
) -> Result<f64, Error> {
    let n = side * side;
    let xs: Vec<f32> = image(side);
    let (x, y) = (
        gpu.buffer_from_slice(&xs)?,
        gpu.buffer_from_slice(&vec![f32::NAN; n])?,
    );
    let mut b = GraphBuilder::new("Copy");
    b.input("input", "f32").output("output", "f32");
    // Rows of at most 65535 workgroups, as many rows as it takes (the kernel indexes by `num_workgroups`).
    let row = width * threads.div_ceil(*width).min(65535);
    let (x_size, y_size) = (row.to_string(), threads.div_ceil(row).to_string());
    b.kernel(
        "copy",
        KernelSpec::wgsl(wgsl.clone())
            .read("input")
            .write("output")
            .threads(&[&x_size, &y_size]),
    );
    let desc = b
        .build(&LIBRARY)
        .map_err(|e| Error::Gpu(format!("{label}: {e}")))?;
    let mut graph = BakedGraph::bake(gpu, desc, &[("input", x.as_any()), ("output", y.as_any())])?;
    graph.replay_blocking()?;
    if y.read_blocking()? != xs {
        return Err(Error::Gpu(format!(
            "{label}: the copy differs from its input"
        )));
    }
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        let profile = graph.profile()?;
        times.push(
            profile
                .dispatches
                .iter()
                .map(|d| d.duration_ns())
                .sum::<f64>()
                / 1e3,
        );
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

fn main() -> Result<(), Error> {
    let sides = args::numbers("--sides", "1024,4096");
    let runs = args::number("--runs", 9);
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    println!(
        "each kernel alone, its output checked against the CPU first; GPU time by timestamps, median of {runs} \
         profiled replays; bytes: each input read once, each output written once; of copy: the bandwidth \
         as a fraction of the `copy` row's at the same size"
    );
    println!();
    println!("copies written four ways (inline kernels, each checked):");
    println!();
    println!("| copy | elements | GPU us | GB/s |");
    println!("|---|---:|---:|---:|");
    for &side in &sides {
        let n = side * side;
        for shape in copy_shapes(n) {
            let us = measure_copy(&gpu, side, &shape, runs)?;
            println!(
                "| {} | {n} | {us:.1} | {:.0} |",
                shape.0,
                (8 * n) as f64 / (us * 1e3)
            );
        }
    }
    println!();
    println!("| kernel | elements | bytes | GPU us | GB/s | of copy |");
    println!("|---|---:|---:|---:|---:|---:|");
    for &side in &sides {
        let mut copy_rate = None;
        for case in cases(side) {
            let us = measure(&gpu, &case, runs)?;
            let rate = case.bytes as f64 / (us * 1e3);
            let copy = *copy_rate.get_or_insert(rate);
            println!(
                "| {} | {} | {} | {us:.1} | {rate:.1} | {:.2} |",
                case.path,
                side * side,
                case.bytes,
                rate / copy
            );
        }
    }
    Ok(())
}
