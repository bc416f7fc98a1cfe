//! # flagship — an edge detector as a task graph
//!
//! The program `cargo xtask demo` runs. It loads a grayscale PNG and runs a four-node image pipeline on the
//! GPU, baked once and replayed many times:
//!
//! ```text
//!   image ──blur_x──▶ blur_tmp ──blur_y──▶ blurred ──sobel──▶ gradient ──threshold──▶ edges
//!         (5 taps,              (5 taps,            (3x3 Sobel,          (gradient > params.threshold)
//!          horizontal)           vertical)           magnitude)
//! ```
//!
//! The blur is a 5x5 Gaussian (binomial weights 1 4 6 4 1 / 16) split into a horizontal and a vertical
//! pass, which is the same filter at 10 instead of 25 reads per pixel. Every node is an inline WGSL kernel
//! with one invocation per pixel: a 2D dispatch `threads(params.width, params.height)` over 8x8 workgroups.
//! The threshold is a parameter (a push constant): changing it between replays re-runs the graph with the
//! new value and no re-bake.
//!
//! It then checks the GPU's result against the same pipeline computed on the CPU, writes
//! `out/flagship.png` (the edges), `out/flagship_blurred.png` and `out/flagship_gradient.png`, and sweeps the
//! threshold to show a parameter changing between replays, checking each sweep step against the CPU too.
//! Before every checked replay the outputs are filled with NaN, so a pixel the GPU fails to write cannot pass
//! for a right one.
//!
//! ```text
//! cargo run --release -p examples --bin flagship [-- [INPUT.png] [--threshold T]]
//! ```
//!
//! Without `INPUT.png` it uses `examples/assets/shapes.png`, built into the program (any PNG works; colour
//! images are converted to grayscale).

use std::time::Instant;

use examples::edge_detect::{EdgeDetect, EdgeDetectBuffers, EdgeDetectParams, cpu_pipeline};
use examples::{Result, max_abs_diff, median, ms, out_dir, save_gray_png};
use graph_runtime::Gpu;

// The graph, `EdgeDetect`, is declared in `examples/src/edge_detect.rs`, beside its CPU reference: the same
// graph is saved as `examples/graphs/edge_detect.json`, and a test checks that both describe one graph.

/// The picture used without an argument, built into the program.
const DEFAULT_INPUT: &[u8] = include_bytes!("../../assets/shapes.png");
/// The default cut-off on the gradient magnitude (in units of brightness per pixel, times the Sobel gain).
const DEFAULT_THRESHOLD: f32 = 0.3;
/// Timed replays after the warm-up one.
const REPLAYS: usize = 20;

fn main() -> Result<()> {
    let args = Args::parse()?;

    // ---------------------------------------------------------------------------------- the input ---------
    // Decode the PNG on the CPU and convert it to one f32 per pixel in 0..=1, row by row.
    let (image, source) = match &args.input {
        Some(path) => (
            image::open(path).map_err(|e| format!("cannot read {path}: {e}"))?,
            path.as_str(),
        ),
        None => (
            image::load_from_memory(DEFAULT_INPUT)?,
            "examples/assets/shapes.png (built in)",
        ),
    };
    let luma = image.to_luma32f();
    let (width, height) = luma.dimensions();
    if width == 0 || height == 0 {
        return Err(format!("{source} is empty ({width}x{height})").into());
    }
    let pixels: Vec<f32> = luma.into_raw();
    let len = pixels.len();

    // ---------------------------------------------------------------------------------- the GPU -----------
    let gpu = Gpu::new_blocking()?;
    println!("adapter:   {}", gpu.summary());
    println!("image:     {source}, {width}x{height} ({len} pixels)");

    // One input buffer with the picture, four zeroed ones for the graph to fill.
    let input = gpu.buffer_from_slice(&pixels)?;
    let blur_tmp = gpu.buffer_zeroed::<f32>(len)?;
    let blurred = gpu.buffer_zeroed::<f32>(len)?;
    let gradient = gpu.buffer_zeroed::<f32>(len)?;
    let edges = gpu.buffer_zeroed::<f32>(len)?;

    // ---------------------------------------------------------------------------------- bake --------------
    // Creates the four pipelines (WGSL to SPIR-V, then the driver's compiler) and their bind groups: the
    // expensive part, done once. Drivers may cache compiled shaders on disk, or finish compiling at the first
    // dispatch, which moves some of this cost to the first replay.
    let start = Instant::now();
    let mut graph = EdgeDetect::bake(
        &gpu,
        EdgeDetectBuffers {
            image: &input,
            blur_tmp: &blur_tmp,
            blurred: &blurred,
            gradient: &gradient,
            edges: &edges,
        },
    )?;
    let bake_time = start.elapsed();
    println!(
        "bake:      {} ({} nodes: {:?}; parameters in {:?})",
        ms(bake_time),
        EdgeDetect::NODE_COUNT,
        EdgeDetect::TOPOLOGICAL_ORDER.map(|n| n.name()),
        graph.params_storage(),
    );

    // ---------------------------------------------------------------------------------- replay ------------
    // The parameters the next replay pushes. Nothing is sent to the GPU here.
    *graph.params_mut() = EdgeDetectParams {
        width,
        height,
        threshold: args.threshold,
    };

    // A first replay, timed on its own: drivers often finish setting a pipeline up on its first use.
    let start = Instant::now();
    graph.replay()?.wait()?;
    let first = start.elapsed();

    // Timed replays, each waited for, so each time covers one whole run of the graph on the device.
    let mut times = Vec::with_capacity(REPLAYS);
    for _ in 0..REPLAYS {
        let start = Instant::now();
        graph.replay()?.wait()?;
        times.push(start.elapsed());
    }
    let (fastest, slowest) = (
        times.iter().min().copied().unwrap_or_default(),
        times.iter().max().copied().unwrap_or_default(),
    );
    println!(
        "replay:    median {} over {REPLAYS} waited replays = {:.1} Mpixel/s \
         (min {}, max {}; first replay {})",
        ms(median(&times)),
        len as f64 / median(&times).as_secs_f64() / 1e6,
        ms(fastest),
        ms(slowest),
        ms(first),
    );

    // ---------------------------------------------------------------------------------- check -------------
    // Poison every output, replay once more, read every stage back and compare it with the CPU's version of
    // the same pipeline.
    for output in [&blur_tmp, &blurred, &gradient, &edges] {
        output.write(&vec![f32::NAN; len])?;
    }
    graph.replay()?.wait()?;
    let gpu_blurred = blurred.read_blocking()?;
    let gpu_gradient = gradient.read_blocking()?;
    let gpu_edges = edges.read_blocking()?;
    let cpu = cpu_pipeline(&pixels, width as usize, height as usize);

    let (d_blur, at_blur) = max_abs_diff(&gpu_blurred, &cpu.blurred)?;
    let (d_grad, at_grad) = max_abs_diff(&gpu_gradient, &cpu.gradient)?;
    let (mismatched, borderline) = compare_edges(&gpu_edges, &cpu.gradient, args.threshold);
    println!("check:     against the CPU, all {len} pixels:");
    println!(
        "             blurred   max |gpu - cpu| = {d_blur:.1e} (at {})",
        xy(at_blur, width)
    );
    println!(
        "             gradient  max |gpu - cpu| = {d_grad:.1e} (at {})",
        xy(at_grad, width)
    );
    println!(
        "             edges     {mismatched} pixels differ \
         ({borderline} within {GRADIENT_TOLERANCE:.0e} of the threshold not counted)"
    );
    if d_blur.is_nan() || d_blur > BLUR_TOLERANCE {
        return Err(format!(
            "blurred image differs from the CPU by {d_blur:e} (tolerance {BLUR_TOLERANCE:e})"
        )
        .into());
    }
    if d_grad.is_nan() || d_grad > GRADIENT_TOLERANCE {
        return Err(format!(
            "gradient differs from the CPU by {d_grad:e} (tolerance {GRADIENT_TOLERANCE:e})"
        )
        .into());
    }
    if mismatched > 0 {
        return Err(format!("{mismatched} edge pixels differ from the CPU").into());
    }

    // ---------------------------------------------------------------------------------- outputs -----------
    let dir = out_dir()?;
    let edge_count = gpu_edges.iter().filter(|&&e| e > 0.5).count();
    let out = dir.join("flagship.png");
    save_gray_png(&out, width, height, &gpu_edges, 0.0, 1.0)?;
    println!(
        "wrote:     {} (edges at threshold {}: {edge_count} pixels, {:.1}%)",
        out.display(),
        args.threshold,
        100.0 * edge_count as f64 / len as f64,
    );
    let out = dir.join("flagship_blurred.png");
    save_gray_png(&out, width, height, &gpu_blurred, 0.0, 1.0)?;
    println!("wrote:     {}", out.display());
    // The gradient is scaled so that its 99.5th percentile is white: a few very strong edges would
    // otherwise leave everything else dark.
    let mut sorted = gpu_gradient.clone();
    sorted.sort_unstable_by(f32::total_cmp);
    let bright = sorted
        .get(sorted.len() * 995 / 1000)
        .copied()
        .unwrap_or(1.0);
    let out = dir.join("flagship_gradient.png");
    save_gray_png(&out, width, height, &gpu_gradient, 0.0, bright)?;
    println!(
        "wrote:     {} (white = gradient {bright:.3})",
        out.display()
    );

    // ---------------------------------------------------------------------------------- sweep -------------
    // The same baked graph at other thresholds: one field changes, the next replay pushes it. (The whole
    // graph runs again; a graph holding only the threshold node would be cheaper, but this shows that
    // nothing needs re-baking.)
    // Each step is checked against the CPU's threshold of the CPU's gradient, with the edges poisoned first.
    let mut sweep = Vec::new();
    for threshold in [0.05, 0.1, 0.2, 0.4, 0.8, 1.6] {
        graph.params_mut().threshold = threshold;
        edges.write(&vec![f32::NAN; len])?;
        graph.replay()?.wait()?;
        let swept = edges.read_blocking()?;
        let (mismatched, _) = compare_edges(&swept, &cpu.gradient, threshold);
        if mismatched > 0 {
            return Err(format!(
                "at threshold {threshold}, {mismatched} edge pixels differ from the CPU"
            )
            .into());
        }
        let count = swept.iter().filter(|&&e| e > 0.5).count();
        sweep.push(format!("{threshold} -> {count}"));
    }
    println!(
        "sweep:     edge pixels per threshold, each matching the CPU: {}",
        sweep.join(", ")
    );
    println!("ok");
    Ok(())
}

/// How many pixels of `edges` differ from the CPU's verdict `gradient > threshold`, and how many pixels were
/// not judged: a gradient within a rounding error of the threshold may land on either side on different
/// hardware. A NaN (an unwritten pixel) is never an edge value, so it always counts as a difference.
fn compare_edges(edges: &[f32], gradient: &[f32], threshold: f32) -> (usize, usize) {
    let near = |i: usize| (gradient[i] - threshold).abs() <= GRADIENT_TOLERANCE;
    let expected = |i: usize| if gradient[i] > threshold { 1.0 } else { 0.0 };
    let mismatched = (0..edges.len())
        .filter(|&i| (edges[i] != expected(i) && !near(i)) || edges[i].is_nan())
        .count();
    let borderline = (0..edges.len()).filter(|&i| near(i)).count();
    (mismatched, borderline)
}

/// The blur's bound from its arithmetic: each pass rounds 6 times on values of at most 1 (the weights sum to
/// 1, so the first pass's error passes through the second unamplified), and the GPU may fuse some of those
/// multiply-adds: at most 12 unit roundoffs (2^-24) in all, 7.2e-7.
const BLUR_TOLERANCE: f32 = 12.0 * f32::EPSILON / 2.0;
/// The gradient's: each derivative weighs 8 blurred values by at most 2 (8 x 7.2e-7 passed on) and rounds 7
/// times on terms of at most 8; the magnitude adds a square, a sum and a square root: under 2e-5.
const GRADIENT_TOLERANCE: f32 = 2e-5;

/// `i` as `(x, y)`, for printing.
fn xy(i: usize, width: u32) -> String {
    let w = width as usize;
    format!("{},{}", i % w.max(1), i / w.max(1))
}

// ---------------------------------------------------------------------------------- arguments -------------

/// `[INPUT.png] [--threshold T]`.
struct Args {
    input: Option<String>,
    threshold: f32,
}

impl Args {
    fn parse() -> Result<Args> {
        let mut args = Args {
            input: None,
            threshold: DEFAULT_THRESHOLD,
        };
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--threshold" | "-t" => {
                    let value = it.next().ok_or("--threshold needs a value")?;
                    args.threshold = value
                        .parse()
                        .map_err(|e| format!("--threshold {value}: {e}"))?;
                }
                "--help" | "-h" => {
                    println!("usage: flagship [INPUT.png] [--threshold T]");
                    println!(
                        "  INPUT.png  any PNG (default: the built-in examples/assets/shapes.png)"
                    );
                    println!("  T          the gradient cut-off (default {DEFAULT_THRESHOLD})");
                    std::process::exit(0);
                }
                other if other.starts_with('-') => {
                    return Err(format!("unknown option {other} (try --help)").into());
                }
                path if args.input.is_none() => args.input = Some(path.to_string()),
                extra => return Err(format!("unexpected argument {extra} (try --help)").into()),
            }
        }
        Ok(args)
    }
}
