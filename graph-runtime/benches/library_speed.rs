//! The kernel library against memory speed: each kernel alone in a graph over square images or vectors of
//! `n` `f32` elements, its GPU time by timestamps (the median of several profiled replays), the bytes it
//! must move at least (each input read once, each output written once), and what that is as a fraction of
//! the bandwidth a copy of the same size reaches on the same device (the `copy` row, itself a library
//! kernel). Each kernel's output is checked against its CPU reference (`kernels::cpu`) first, and each is
//! replayed for a second before it is timed, so that the GPU's clocks are up.
//!
//! Before them, copies written by hand (workgroup width, elements per invocation, the library's own source)
//! show what the library's form of kernel costs.
//!
//! `cargo bench -p graph-runtime --bench library_speed -- [--sides 1024,4096] [--runs 9]`

#![forbid(unsafe_code)]

#[path = "common/args.rs"]
mod args;

use graph_runtime::ir::{AccessMode, Role};
use graph_runtime::kernels::cpu;
use graph_runtime::{
    AnyBuffer, BakedGraph, Buffer, Error, Gpu, GraphBuilder, GraphDesc, KernelSpec, LIBRARY,
};

/// One kernel's case at one size.
struct Case {
    path: &'static str,
    /// Binding by binding: the buffer's data (inputs) or its length (outputs, poisoned), and its type.
    buffers: Vec<(&'static str, Data)>,
    args: Vec<(&'static str, String)>,
    /// The least it moves: each input read once, each output written once.
    bytes: u64,
    /// The arithmetic it must do, where that and not its bytes bounds it (a product's `2 m n k`); else 0.
    flops: u64,
    /// The output binding it writes, and what the CPU says it holds.
    expected: (&'static str, Expected),
}

enum Data {
    F32(Vec<f32>),
    Poisoned(usize),
    Zeros(usize),
}

enum Expected {
    /// Every element, within a tolerance relative to its size.
    F32(Vec<f32>, f32),
    /// Every element, each within its own bound (sums added in another order on the GPU).
    Within(Vec<f64>, Vec<f64>),
    /// Some elements (index, value), within a tolerance relative to each: where the CPU's answer of every
    /// element would take too long.
    Spots(Vec<(usize, f32)>, f32),
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
    cases.push(input_output("copy", &x, vec![], Expected::F32(copied, 0.0)));

    let mut scaled = x.clone();
    cpu::scale(&mut scaled, 1.5);
    cases.push(Case {
        path: "scale",
        buffers: vec![("data", Data::F32(x.clone()))],
        args: vec![("alpha", "1.5".into())],
        bytes: bytes(2 * n),
        flops: 0,
        expected: ("data", Expected::F32(scaled, 1e-6)),
    });

    let mut axpy = y.clone();
    cpu::axpy(0.75, &x, &mut axpy);
    cases.push(Case {
        path: "axpy",
        buffers: vec![("x", Data::F32(x.clone())), ("y", Data::F32(y.clone()))],
        args: vec![("a", "0.75".into())],
        bytes: bytes(3 * n),
        flops: 0,
        expected: ("y", Expected::F32(axpy, 1e-6)),
    });

    let mut thresholded = vec![0.0; n];
    cpu::threshold(&x, &mut thresholded, 0.25);
    cases.push(input_output(
        "threshold",
        &x,
        vec![("level", "0.25".into())],
        Expected::F32(thresholded, 0.0),
    ));

    let mut transposed = vec![0.0; n];
    cpu::transpose(&x, &mut transposed, side, side);
    let dims = vec![("rows", format!("{side}u")), ("cols", format!("{side}u"))];
    cases.push(input_output(
        "transpose",
        &x,
        dims,
        Expected::F32(transposed, 0.0),
    ));

    let image_args = || {
        vec![
            ("width", format!("{side}u")),
            ("height", format!("{side}u")),
        ]
    };
    let mut edges = vec![0.0; n];
    cpu::sobel(&x, &mut edges, side, side);
    cases.push(input_output(
        "sobel",
        &x,
        image_args(),
        Expected::F32(edges, 1e-4),
    ));

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
            flops: 0,
            expected: ("output", Expected::F32(blurred, 1e-4)),
        });
    }

    let weights: Vec<f32> = (0..9)
        .map(|i| [1.0, 2.0, 1.0][i % 3] * [0.5, 1.0, 0.5][i / 3] / 4.0)
        .collect();
    let mut convolved = vec![0.0; n];
    cpu::conv2d(&x, &weights, &mut convolved, (side, side), 1);
    let mut args = image_args();
    args.push(("radius", "1u".to_string()));
    cases.push(Case {
        path: "conv2d",
        buffers: vec![
            ("input", Data::F32(x.clone())),
            ("weights", Data::F32(weights)),
            ("output", Data::Poisoned(n)),
        ],
        args,
        bytes: bytes(2 * n),
        flops: 0,
        expected: ("output", Expected::F32(convolved, 1e-4)),
    });

    // A side x side product: its bound is arithmetic (2 side^3 operations), not bytes.
    let b_matrix: Vec<f32> = y.iter().map(|v| v * 0.5).collect();
    let spots: Vec<(usize, f32)> = (0..64)
        .map(|s| {
            let at = (s * 7919 + s * s * 104_729) % n;
            let (row, col) = (at / side, at % side);
            let sum = (0..side).fold(0.0f32, |sum, j| {
                sum + x[row * side + j] * b_matrix[j * side + col]
            });
            (at, sum)
        })
        .collect();
    cases.push(Case {
        path: "matmul",
        buffers: vec![
            ("a", Data::F32(x.clone())),
            ("b", Data::F32(b_matrix)),
            ("c", Data::Poisoned(n)),
        ],
        args: vec![
            ("m", format!("{side}u")),
            ("n", format!("{side}u")),
            ("k", format!("{side}u")),
        ],
        bytes: bytes(3 * n),
        flops: 2 * (side as u64).pow(3),
        expected: ("c", Expected::Spots(spots, 1e-3)),
    });

    let magnitudes: Vec<f64> = x
        .iter()
        .scan(0.0, |sum, v| {
            *sum += f64::from(v.abs());
            Some(*sum)
        })
        .collect();
    let total = magnitudes.last().copied().unwrap_or(0.0);
    cases.push(Case {
        path: "reduce::sum",
        buffers: vec![
            ("input", Data::F32(x.clone())),
            ("output", Data::Poisoned(1)),
        ],
        args: vec![],
        bytes: bytes(n),
        flops: 0,
        expected: (
            "output",
            Expected::Within(vec![cpu::reduce_sum(&x)], vec![1e-6 * total + 1e-6]),
        ),
    });
    let scanned = Expected::Within(
        cpu::scan(&x, true),
        magnitudes.iter().map(|m| 1e-6 * m + 1e-6).collect(),
    );
    cases.push(input_output("scan::inclusive", &x, vec![], scanned));

    let mut softmax = vec![0.0; n];
    cpu::softmax_rows(&x, &mut softmax, side);
    let cols = vec![("cols", format!("{side}u"))];
    cases.push(input_output(
        "softmax_rows",
        &x,
        cols,
        Expected::F32(softmax, 1e-4),
    ));

    let mut bins = vec![0u32; 256];
    cpu::histogram(&x, &mut bins, -1.0, 1.5);
    cases.push(Case {
        path: "histogram",
        buffers: vec![("input", Data::F32(x)), ("bins", Data::Zeros(256))],
        args: vec![("lo", "-1.0".into()), ("hi", "1.5".into())],
        bytes: bytes(n),
        flops: 0,
        expected: ("bins", Expected::U32(bins)),
    });
    cases
}

/// The case of a kernel that reads `input` and writes all of `output`, both of `x`'s length.
fn input_output(
    path: &'static str,
    x: &[f32],
    args: Vec<(&'static str, String)>,
    expected: Expected,
) -> Case {
    Case {
        path,
        buffers: vec![
            ("input", Data::F32(x.to_vec())),
            ("output", Data::Poisoned(x.len())),
        ],
        args,
        bytes: (8 * x.len()) as u64,
        flops: 0,
        expected: ("output", expected),
    }
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
    // A kernel's bindings, or a subgraph's external buffers: each name, element type and access.
    let bindings: Vec<(String, String, AccessMode)> =
        match (LIBRARY.get(case.path), LIBRARY.subgraph(case.path)) {
            (Some(kernel), _) => kernel
                .bindings
                .iter()
                .map(|b| (b.name.to_string(), b.elem.to_string(), b.mode))
                .collect(),
            (None, Some(subgraph)) => (subgraph.graph)()
                .buffers
                .into_iter()
                .filter_map(|b| {
                    let mode = match b.role {
                        Role::Input => AccessMode::Read,
                        Role::Output => AccessMode::Write,
                        Role::InOut => AccessMode::ReadWrite,
                        Role::Owned => return None,
                    };
                    Some((b.name, b.elem, mode))
                })
                .collect(),
            (None, None) => {
                return Err(Error::Gpu(format!("no library kernel `{}`", case.path)));
            }
        };
    let mut b = GraphBuilder::new("One");
    let mut bound = Vec::new();
    for (name, elem, mode) in &bindings {
        let Some((name, data)) = case.buffers.iter().find(|(n, _)| n == name) else {
            return Err(Error::Gpu(format!("{}: no data for `{name}`", case.path)));
        };
        let elem = if elem == "u32" { "u32" } else { "f32" };
        match mode {
            AccessMode::Read => b.input(name, elem),
            AccessMode::Write => b.output(name, elem),
            AccessMode::ReadWrite => b.inout(name, elem),
        };
        let buffer = match (data, elem) {
            (Data::Zeros(len), "u32") => Bound::U32(gpu.buffer_from_slice(&vec![0u32; *len])?),
            (Data::F32(v), _) => Bound::F32(gpu.buffer_from_slice(v)?),
            (Data::Poisoned(len), _) | (Data::Zeros(len), _) => {
                Bound::F32(gpu.buffer_from_slice(&vec![f32::NAN; *len])?)
            }
        };
        bound.push((*name, buffer));
    }
    let args: Vec<(&str, &str)> = case.args.iter().map(|(n, v)| (*n, v.as_str())).collect();
    if LIBRARY.get(case.path).is_some() {
        let names: Vec<(&str, &str)> = bindings
            .iter()
            .map(|(n, _, _)| (n.as_str(), n.as_str()))
            .collect();
        b.library("k", case.path, &names, &args);
    } else {
        let names: Vec<(&str, &str, AccessMode)> = bindings
            .iter()
            .map(|(n, _, mode)| (n.as_str(), n.as_str(), *mode))
            .collect();
        b.library_subgraph("k", case.path, &names);
    }
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
        (Bound::F32(buffer), Expected::Within(want, bounds)) => {
            let got = buffer.read_blocking()?;
            if let Some(i) =
                (0..want.len()).find(|&i| (f64::from(got[i]) - want[i]).abs() > bounds[i])
            {
                return Err(Error::Gpu(format!(
                    "{}: `{name}`[{i}] is {}, the CPU says {}",
                    case.path, got[i], want[i]
                )));
            }
        }
        (Bound::F32(buffer), Expected::Spots(spots, tolerance)) => {
            let got = buffer.read_blocking()?;
            if let Some(&(i, want)) = spots
                .iter()
                .find(|&&(i, want)| (got[i] - want).abs() > tolerance * (1.0 + want.abs()))
            {
                return Err(Error::Gpu(format!(
                    "{}: `{name}`[{i}] is {}, the CPU says {want}",
                    case.path, got[i]
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
    gpu_time(&mut graph, runs, || {
        // The histogram counts up: zero its bins, so each run counts the same.
        if let Some((_, Bound::U32(bins))) = bound.iter().find(|(n, _)| *n == "bins") {
            bins.write(&vec![0u32; bins.len()])?;
        }
        Ok(())
    })
}

/// How long `graph` keeps the GPU busy before it is timed. An idle H100 lowers its clocks within seconds
/// (the CPU references here take that long), and runs a 16M-element copy in 270-290 us instead of 104 until
/// about half a second of work brings them back.
const WARM_UP: std::time::Duration = std::time::Duration::from_secs(1);

/// The median over `runs` profiled replays of `graph`'s GPU time (its dispatches' timestamps), in
/// microseconds, each after `before`, once [`WARM_UP`] of replays has brought the clocks up.
fn gpu_time(
    graph: &mut BakedGraph,
    runs: usize,
    mut before: impl FnMut() -> Result<(), Error>,
) -> Result<f64, Error> {
    let start = std::time::Instant::now();
    while start.elapsed() < WARM_UP {
        graph.replay_blocking()?;
    }
    let mut times = Vec::new();
    for _ in 0..runs.max(1) {
        before()?;
        let profile = graph.profile()?;
        let ns: f64 = profile.dispatches.iter().map(|d| d.duration_ns()).sum();
        times.push(ns / 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Copies of `n` elements written by hand, to see what limits the library's one-element kernels: its label,
/// its WGSL (`input` to `output`), its workgroup width and how many invocations it runs. Besides the widths
/// and the elements per invocation (each invocation's elements a grid apart, so that neighbouring
/// invocations touch neighbouring elements), the library's own `copy` source dispatched as an inline kernel
/// tells whether it is the source or the way a library node is dispatched that costs.
fn copy_shapes(n: usize) -> Vec<(String, String, usize, usize)> {
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
    let mut shapes = vec![
        (
            "copy, 64 per workgroup".to_string(),
            guarded("if (t < n) { output[t] = input[t]; }", 64),
            64,
            n,
        ),
        (
            "copy, 64 per workgroup, bounded by both lengths".to_string(),
            guarded(
                "if (t < min(n, arrayLength(&input))) { output[t] = input[t]; }",
                64,
            ),
            64,
            n,
        ),
    ];
    for per in [1usize, 2, 4, 8] {
        let body = match per {
            1 => "if (t < n) { output[t] = input[t]; }".to_string(),
            _ => format!(
                "let q = (n + {m}u) / {per}u;
    for (var k = 0u; k < {per}u; k++) {{ let i = t + k * q; if (t < q && i < n) {{ output[i] = input[i]; }} }}",
                m = per - 1
            ),
        };
        shapes.push((
            format!("copy, 256 per workgroup, {per} per invocation"),
            guarded(&body, 256),
            256,
            n.div_ceil(per),
        ));
    }
    if let Some(copy) = LIBRARY.get("copy") {
        shapes.push((
            "the library's `copy` source as an inline kernel".to_string(),
            copy.source.to_string(),
            256,
            n,
        ));
    }
    shapes
}

/// Bakes a copy of `shape` over a `side` x `side` image, checks it, and profiles it as [`measure`] does.
fn measure_copy(
    gpu: &Gpu,
    side: usize,
    (label, wgsl, width, threads): &(String, String, usize, usize),
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
    gpu_time(&mut graph, runs, || Ok(()))
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
    println!(
        "copies written by hand (inline kernels, each checked), between two runs of the library's `copy` node:"
    );
    println!();
    println!("| copy | elements | GPU us | GB/s |");
    println!("|---|---:|---:|---:|");
    for &side in &sides {
        let n = side * side;
        let rate = |us: f64| (8 * n) as f64 / (us * 1e3);
        let library_copy = cases(side).into_iter().next();
        if let Some(case) = &library_copy {
            let us = measure(&gpu, case, runs)?;
            println!(
                "| the library's `copy` node | {n} | {us:.1} | {:.0} |",
                rate(us)
            );
        }
        for shape in copy_shapes(n) {
            let us = measure_copy(&gpu, side, &shape, runs)?;
            println!("| {} | {n} | {us:.1} | {:.0} |", shape.0, rate(us));
        }
        if let Some(case) = &library_copy {
            let us = measure(&gpu, case, runs)?;
            println!(
                "| the library's `copy` node, again | {n} | {us:.1} | {:.0} |",
                rate(us)
            );
        }
    }
    println!();
    println!("| kernel | elements | bytes | GPU us | GB/s | of copy | GFLOP/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for &side in &sides {
        let mut copy_rate = None;
        for case in cases(side) {
            let us = measure(&gpu, &case, runs)?;
            let rate = case.bytes as f64 / (us * 1e3);
            let copy = *copy_rate.get_or_insert(rate);
            let flops = match case.flops {
                0 => "-".to_string(),
                f => format!("{:.0}", f as f64 / (us * 1e3)),
            };
            println!(
                "| {} | {} | {} | {us:.1} | {rate:.1} | {:.2} | {flops} |",
                case.path,
                side * side,
                case.bytes,
                rate / copy
            );
        }
    }
    println!();
    println!(
        "the flagship's blur (along rows, then columns) and the blur then Sobel's gradient, every output \
         written: in one graph (tiled into one dispatch up to 512 x 512 pixels), and each step baked alone (as a graph that does not tile runs it: \
         made wide from 512K pixels), both checked against the CPU; bytes: the image read once and each \
         output written once"
    );
    println!();
    println!("| chain | pixels | how | bytes | GPU us | GB/s | of copy |");
    println!("|---|---:|---|---:|---:|---:|---:|");
    for &side in &args::numbers("--chain-sides", "512,1024,4096") {
        let copy_rate = match cases(side).into_iter().next() {
            Some(case) => (8 * side * side) as f64 / (measure(&gpu, &case, runs)? * 1e3),
            None => f64::NAN,
        };
        for steps in [2, 3] {
            for tiled in [true, false] {
                let (us, how) = measure_chain(&gpu, side, &CHAIN[..steps], tiled, runs)?;
                let bytes = 4 * (steps + 1) * side * side;
                let rate = bytes as f64 / (us * 1e3);
                println!(
                    "| {} | {} | {how} | {bytes} | {us:.1} | {rate:.1} | {:.2} |",
                    if steps == 2 { "blur" } else { "blur, Sobel" },
                    side * side,
                    rate / copy_rate
                );
            }
        }
        for tiled in [true, false] {
            let (us, wall, how) = measure_users_chain(&gpu, side, tiled, runs)?;
            let bytes = 4 * 3 * side * side;
            let rate = bytes as f64 / (us * 1e3);
            println!(
                "| your 3 x 3 mean, then your gradient (replay: {wall:.1} us wall) | {} | {how} | {bytes} | \
                 {us:.1} | {rate:.1} | {:.2} |",
                side * side,
                rate / copy_rate
            );
        }
    }
    Ok(())
}

/// A user's 3 x 3 mean of `image` into `boxed`, the image's sizes parameters, edges clamped.
const USERS_MEAN: &str = "@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let w = params.width;
    let h = params.height;
    if (i >= w * h) { return; }
    let x = i % w;
    let y = i / w;
    let l = max(x, 1u) - 1u;
    let r = min(x + 1u, w - 1u);
    let u = max(y, 1u) - 1u;
    let d = min(y + 1u, h - 1u);
    let top = image[u * w + l] + image[u * w + x] + image[u * w + r];
    let middle = image[y * w + l] + image[y * w + x] + image[y * w + r];
    let bottom = image[d * w + l] + image[d * w + x] + image[d * w + r];
    boxed[i] = (top + middle + bottom) / 9.0;
}";

/// A user's squared central-difference gradient of `boxed` into `gradient`.
const USERS_GRADIENT: &str = "@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let w = params.width;
    let h = params.height;
    if (i >= w * h) { return; }
    let x = i % w;
    let y = i / w;
    let gx = boxed[y * w + min(x + 1u, w - 1u)] - boxed[y * w + max(x, 1u) - 1u];
    let gy = boxed[min(y + 1u, h - 1u) * w + x] - boxed[(max(y, 1u) - 1u) * w + x];
    gradient[i] = gx * gx + gy * gy;
}";

/// The user's two image kernels over a `side` x `side` image, in one graph: tiled into one dispatch where
/// the fusion pass tiles it, or (`tiled: false`) each step `no_fusion`; both outputs checked against the CPU,
/// then the GPU time profiled as [`measure`] does, and the median wall time of [`WALL_RUNS`] replays, each
/// submitted and waited for. Also how it ran.
fn measure_users_chain(
    gpu: &Gpu,
    side: usize,
    tiled: bool,
    runs: usize,
) -> Result<(f64, f64, String), Error> {
    let n = side * side;
    let mut b = GraphBuilder::new("Users");
    b.param("width", "u32").param("height", "u32");
    b.input("image", "f32")
        .output("boxed", "f32")
        .output("gradient", "f32");
    b.kernel(
        "mean",
        KernelSpec::wgsl(USERS_MEAN).read("image").write("boxed"),
    );
    b.kernel(
        "gradient",
        KernelSpec::wgsl(USERS_GRADIENT)
            .read("boxed")
            .write("gradient"),
    );
    if !tiled {
        b.no_fusion("mean").no_fusion("gradient");
    }
    let desc = b
        .build(&LIBRARY)
        .map_err(|e| Error::Gpu(format!("users' chain: {e}")))?;
    let picture = image(side);
    let image_buffer = gpu.buffer_from_slice(&picture)?;
    let boxed = gpu.buffer_from_slice(&vec![f32::NAN; n])?;
    let gradient = gpu.buffer_from_slice(&vec![f32::NAN; n])?;
    let mut graph = BakedGraph::bake(
        gpu,
        desc,
        &[
            ("image", image_buffer.as_any()),
            ("boxed", boxed.as_any()),
            ("gradient", gradient.as_any()),
        ],
    )?;
    graph.set_param("width", side as u32)?;
    graph.set_param("height", side as u32)?;
    graph.replay_blocking()?;
    let at = |v: &[f32], x: usize, y: usize| v[y * side + x];
    let edge = |c: usize| (c.max(1) - 1, (c + 1).min(side - 1));
    let want_boxed: Vec<f32> = (0..n)
        .map(|i| {
            let (x, y) = (i % side, i / side);
            let ((l, r), (u, d)) = (edge(x), edge(y));
            let row = |y| at(&picture, l, y) + at(&picture, x, y) + at(&picture, r, y);
            (row(u) + row(y) + row(d)) / 9.0
        })
        .collect();
    let want_gradient: Vec<f32> = (0..n)
        .map(|i| {
            let (x, y) = (i % side, i / side);
            let ((l, r), (u, d)) = (edge(x), edge(y));
            let gx = at(&want_boxed, r, y) - at(&want_boxed, l, y);
            let gy = at(&want_boxed, x, d) - at(&want_boxed, x, u);
            gx * gx + gy * gy
        })
        .collect();
    for (name, buffer, want) in [
        ("boxed", &boxed, &want_boxed),
        ("gradient", &gradient, &want_gradient),
    ] {
        let got = buffer.read_blocking()?;
        if let Some(i) = (0..n).find(|&i| (got[i] - want[i]).abs() > 1e-4 * (1.0 + want[i].abs())) {
            return Err(Error::Gpu(format!(
                "users' chain: {name}[{i}] is {}, the CPU says {}",
                got[i], want[i]
            )));
        }
    }
    let how = match graph.fused().iter().find_map(|f| f.tiling) {
        Some(tiling) => format!("one dispatch, {tiling}"),
        None => "2 dispatches".to_string(),
    };
    let gpu_us = gpu_time(&mut graph, runs, || Ok(()))?;
    let mut walls = Vec::with_capacity(WALL_RUNS);
    for _ in 0..WALL_RUNS {
        let start = std::time::Instant::now();
        graph.replay_blocking()?;
        walls.push(start.elapsed().as_secs_f64() * 1e6);
    }
    walls.sort_by(f64::total_cmp);
    Ok((gpu_us, walls[walls.len() / 2], how))
}

/// Replays whose wall time [`measure_users_chain`] takes the median of.
const WALL_RUNS: usize = 200;

/// The flagship's image steps: node, library kernel, its input and output buffer.
const CHAIN: [(&str, &str, &str, &str); 3] = [
    ("along_rows", "blur_h", "image", "rows"),
    ("along_columns", "blur_v", "rows", "blurred"),
    ("sobel", "sobel", "blurred", "gradient"),
];

/// A graph of `steps` over a `side` x `side` image: each buffer an output where a step writes it, else an
/// input.
fn chain_graph(side: usize, steps: &[(&str, &str, &str, &str)]) -> Result<GraphDesc, Error> {
    let mut b = GraphBuilder::new("Chain");
    let mut declared: Vec<&str> = Vec::new();
    for &(_, _, input, output) in steps {
        if !declared.contains(&input) && !steps.iter().any(|s| s.3 == input) {
            b.input(input, "f32");
            declared.push(input);
        }
        if !declared.contains(&output) {
            b.output(output, "f32");
            declared.push(output);
        }
    }
    let size = format!("{side}u");
    for &(name, path, input, output) in steps {
        let mut args = vec![("width", size.as_str()), ("height", size.as_str())];
        if path.starts_with("blur") {
            args.extend([("radius", "2u"), ("sigma", "1.0")]);
        }
        b.library(name, path, &[("input", input), ("output", output)], &args);
    }
    b.build(&LIBRARY)
        .map_err(|e| Error::Gpu(format!("chain: {e}")))
}

/// `steps` of [`CHAIN`] over a `side` x `side` image, in one graph (`tiled`: tiled into one dispatch where
/// the fusion pass tiles it) or each step baked alone: the outputs checked against the CPU, then the GPU time profiled as [`measure`] does (the sum of
/// the steps' when alone). Also how it ran.
fn measure_chain(
    gpu: &Gpu,
    side: usize,
    steps: &[(&str, &str, &str, &str)],
    tiled: bool,
    runs: usize,
) -> Result<(f64, String), Error> {
    let n = side * side;
    let picture = image(side);
    let image_buffer = gpu.buffer_from_slice(&picture)?;
    let outputs: Vec<Buffer<f32>> = (0..steps.len())
        .map(|_| gpu.buffer_from_slice(&vec![f32::NAN; n]))
        .collect::<Result<_, _>>()?;
    let buffer = |name: &str| -> &AnyBuffer {
        match steps.iter().position(|s| s.3 == name) {
            Some(k) => outputs[k].as_any(),
            None => image_buffer.as_any(),
        }
    };
    let bake = |steps: &[(&str, &str, &str, &str)]| -> Result<BakedGraph, Error> {
        let mut names: Vec<&str> = Vec::new();
        for s in steps {
            for name in [s.2, s.3] {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        let bound: Vec<(&str, &AnyBuffer)> = names.iter().map(|&n| (n, buffer(n))).collect();
        BakedGraph::bake(gpu, chain_graph(side, steps)?, &bound)
    };
    let mut graphs: Vec<BakedGraph> = match tiled {
        true => vec![bake(steps)?],
        false => steps
            .iter()
            .map(|s| bake(std::slice::from_ref(s)))
            .collect::<Result<_, _>>()?,
    };
    let tilings: Vec<String> = graphs
        .iter()
        .flat_map(|g| {
            g.fused()
                .iter()
                .filter_map(|f| f.tiling.map(|t| t.to_string()))
        })
        .collect();
    let how = match (tiled, tilings.first()) {
        (_, Some(tiling)) => format!("one dispatch, {tiling}"),
        (true, None) => format!("one graph, not tiled: {} dispatches", steps.len()),
        (false, None) => format!("{} graphs of one kernel", steps.len()),
    };
    for graph in &mut graphs {
        graph.replay_blocking()?;
    }
    let mut want = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    let [rows, blurred, gradient] = &mut want;
    cpu::blur(&picture, rows, (side, side), (2, 1.0), true);
    cpu::blur(rows, blurred, (side, side), (2, 1.0), false);
    cpu::sobel(blurred, gradient, side, side);
    for (k, (buffer, want)) in outputs.iter().zip(&want).enumerate() {
        let got = buffer.read_blocking()?;
        if let Some(i) = (0..n).find(|&i| (got[i] - want[i]).abs() > 1e-4 * (1.0 + want[i].abs())) {
            return Err(Error::Gpu(format!(
                "chain: output {k}[{i}] is {}, the CPU says {}",
                got[i], want[i]
            )));
        }
    }
    let mut us = 0.0;
    for graph in &mut graphs {
        us += gpu_time(graph, runs, || Ok(()))?;
    }
    Ok((us, how))
}
