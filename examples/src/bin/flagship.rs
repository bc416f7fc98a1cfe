//! # flagship: an edge detector that picks its own threshold, as a task graph
//!
//! The program `cargo xtask demo` runs. It loads a PNG and runs `EdgePipeline`
//! (`examples/src/edge_pipeline.rs`) on the GPU, baked once and replayed many times; the graph uses the node
//! kinds together, from a picture in a texture to an edge image in another:
//!
//! ```text
//!   upload picture (an image) ─▶ frame (rgba8unorm texture) ─▶ grey ─▶ image
//!     ─▶ [subgraph blur: rows, then columns] ─▶ blurred
//!     ─▶ [alternatives edge_filter: sobel | scharr] ─▶ gradient
//!     ─▶ clear, histogram (library, atomics) ─▶ bins ─▶ readback hist
//!                                                  └─▶ host otsu ─▶ level (Otsu's threshold)
//!     ─▶ threshold (gradient > level) ─▶ edges (rgba8unorm storage texture) ─▶ readback result
//! ```
//!
//! Each replay uploads the picture as an image (as a video would upload each frame), runs the first GPU
//! partition, runs the host task (Otsu's threshold from the histogram, written to the GPU), then the
//! threshold: one submission per partition, no re-bake between replays. It runs Sobel, then switches the
//! alternatives to Scharr (and the histogram's range, a parameter) without re-baking, and checks every stage
//! of both against the same pipeline on the CPU, outputs poisoned first (NaN, and a grey no edge pixel has)
//! so a pixel the GPU fails to write cannot pass for a right one.
//!
//! Then it runs the detector on textures throughout (`TextureEdges`, `examples/src/texture_edges.rs`): the
//! blur and the gradient in textures the graph owns, the edges at the levels Otsu found above, read back as
//! an image and checked against the CPU pixel by pixel.
//!
//! It writes `out/flagship.png` (Sobel's edges, the edge texture read back), `out/flagship_scharr.png`,
//! `out/flagship_blurred.png`, `out/flagship_gradient.png`, `out/flagship_textures.png` (Sobel's edges on
//! textures throughout) and `out/flagship.dot` (the graph, flattened, the subgraph as a cluster).
//!
//! ```text
//! cargo run --release -p examples --bin flagship [-- [INPUT.png]]
//! ```
//!
//! Without `INPUT.png` it uses `examples/assets/shapes.png`, built into the program (any PNG works: it is
//! uploaded as `rgba8`, and the graph takes its luma).

#![forbid(unsafe_code)]

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use examples::edge_pipeline::{
    BINS, CpuStages, EdgePipeline, EdgePipelineBuffers, EdgePipelineChoice, EdgePipelineParams,
    cpu_stages, grey_image, otsu, top,
};
use examples::texture_edges::{
    TextureEdges, TextureEdgesBuffers, TextureEdgesChoice, TextureEdgesParams, cpu_texture_edges,
    mismatched_edges,
};
use examples::trace_svg::trace_svg;
use examples::{Result, max_abs_diff, median, ms, out_dir, save_gray_png};
use graph_runtime::pipeline::Detail;
use graph_runtime::{Baked, Buffer, Gpu, Texture, wgpu};

/// The picture used without an argument, built into the program.
const DEFAULT_INPUT: &[u8] = include_bytes!("../../assets/shapes.png");
/// Timed replays after the warm-up one.
const REPLAYS: usize = 20;

/// What the host task shares with the program: the histogram's upper bound it splits (set with the filter),
/// and the level it computed last.
#[derive(Debug, Default)]
struct Otsu {
    top: f32,
    level: f32,
}

/// The graph's external buffers, and the edge texture.
struct Buffers {
    image: Buffer<f32>,
    blur_rows: Buffer<f32>,
    blurred: Buffer<f32>,
    gradient: Buffer<f32>,
    edges: Texture,
}

fn main() -> Result<()> {
    let args = Args::parse()?;

    // ---------------------------------------------------------------------------------- the input ---------
    // Decode the PNG on the CPU into rgba8, as the graph uploads it; the CPU reference takes the same luma.
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
    let rgba = image.to_rgba8();
    let (width, height) = rgba.dimensions();
    if width == 0 || height == 0 {
        return Err(format!("{source} is empty ({width}x{height})").into());
    }
    let len = (width * height) as usize;

    // ---------------------------------------------------------------------------------- the GPU -----------
    let gpu = Gpu::new_blocking()?;
    println!("adapter:   {}", gpu.summary());
    println!("image:     {source}, {width}x{height} ({len} pixels)");
    let b = Buffers {
        image: gpu.buffer_zeroed::<f32>(len)?,
        blur_rows: gpu.buffer_zeroed::<f32>(len)?,
        blurred: gpu.buffer_zeroed::<f32>(len)?,
        gradient: gpu.buffer_zeroed::<f32>(len)?,
        edges: gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?,
    };

    // ---------------------------------------------------------------------------------- bake --------------
    // Every pipeline (both alternatives included) and bind group, the subgraph flattened into the graph: the
    // expensive part, done once.
    let start = Instant::now();
    let mut graph = EdgePipeline::bake(
        &gpu,
        EdgePipelineBuffers {
            image: &b.image,
            blur_rows: &b.blur_rows,
            blurred: &b.blurred,
            gradient: &b.gradient,
            edges: &b.edges,
        },
    )?;
    let bake_time = start.elapsed();
    graph.check_fused(EdgePipeline::FUSED)?;
    let flat = graph.untyped().description();
    println!(
        "bake:      {} ({} nodes once the subgraph is flattened, {} GPU partitions around the host task; \
         parameters in {:?}; {} recorder)",
        ms(bake_time),
        flat.nodes.len(),
        flat.partitions
            .iter()
            .filter(|p| matches!(p, graph_runtime::desc::PartitionDesc::Gpu { .. }))
            .count(),
        graph.params_storage(),
        graph.untyped().recorder(),
    );

    // Where bake put the graph-owned buffers: those the host task sees keep memory of their own.
    let memory = graph.untyped().memory_plan();
    println!(
        "memory:    {} bytes for graph-owned buffers ({} each in memory of its own, {} heaps)",
        graph.untyped().owned_bytes(),
        memory.unaliased_bytes,
        memory.heaps.len(),
    );

    // The host task: Otsu's level from this replay's histogram, written to `level` for the threshold kernel.
    let shared = Arc::new(Mutex::new(Otsu {
        top: top(false),
        level: 0.0,
    }));
    let task = shared.clone();
    graph.on_host(EdgePipeline::HOSTS.otsu, move |h| {
        let bins = h.bins()?;
        let mut otsu_state = task.lock().unwrap_or_else(PoisonError::into_inner);
        otsu_state.level = otsu(&bins, 0.0, otsu_state.top);
        h.write_level(&[otsu_state.level])
    })?;
    *graph.params_mut() = EdgePipelineParams::new(width, height, top(false));

    // ---------------------------------------------------------------------------------- replay ------------
    // Each replay takes the frame it uploads; a first replay is timed on its own (drivers often finish setting
    // a pipeline up on its first use).
    let start = Instant::now();
    graph.upload_image(EdgePipeline::UPLOADS.picture, &rgba)?;
    graph.replay()?.wait()?;
    let first = start.elapsed();
    let mut times = Vec::with_capacity(REPLAYS);
    for _ in 0..REPLAYS {
        let start = Instant::now();
        graph.upload_image(EdgePipeline::UPLOADS.picture, &rgba)?;
        graph.replay()?.wait()?;
        times.push(start.elapsed());
    }
    println!(
        "replay:    median {} over {REPLAYS} waited replays, each uploading the frame as an image = {:.1} \
         Mpixel/s \
         (first replay {})",
        ms(median(&times)),
        len as f64 / median(&times).as_secs_f64() / 1e6,
        ms(first),
    );

    // One more replay with each dispatch timed on the GPU, where the adapter has timestamp queries.
    let timestamps = wgpu::Features::TIMESTAMP_QUERY;
    if gpu.device().features().contains(timestamps) {
        graph.upload_image(EdgePipeline::UPLOADS.picture, &rgba)?;
        let profile = graph.profile()?;
        let dir = out_dir()?;
        std::fs::write(dir.join("flagship_trace.json"), profile.to_chrome_trace())?;
        let title = format!("EdgePipeline, one profiled replay on {}", gpu.summary());
        std::fs::write(dir.join("flagship_trace.svg"), trace_svg(&profile, &title))?;
        println!(
            "profile:   {:.1} us of GPU time in {} dispatches; out/flagship_trace.json (Perfetto) and \
                 out/flagship_trace.svg",
            profile.busy_ns() / 1000.0,
            profile.dispatches.len()
        );
        print!("{profile}");
    } else {
        println!("profile:   not taken: this adapter has no timestamp queries");
    }

    // ---------------------------------------------------------------------------------- check -------------
    let dir = out_dir()?;
    let size = (width as usize, height as usize);
    let (sobel, sobel_edges) = run_and_check(&mut graph, &b, &shared, &rgba, size, false)?;
    let sobel_level = shared.lock().unwrap_or_else(PoisonError::into_inner).level;
    sobel_edges.save(dir.join("flagship.png"))?;
    save_gray_png(
        &dir.join("flagship_blurred.png"),
        width,
        height,
        &b.blurred.read_blocking()?,
        0.0,
        1.0,
    )?;
    // The gradient is scaled so that its 99.5th percentile is white: a few very strong edges would
    // otherwise leave everything else dark.
    let mut sorted = sobel.gradient.clone();
    sorted.sort_unstable_by(f32::total_cmp);
    let bright = sorted
        .get(sorted.len() * 995 / 1000)
        .copied()
        .unwrap_or(1.0);
    save_gray_png(
        &dir.join("flagship_gradient.png"),
        width,
        height,
        &b.gradient.read_blocking()?,
        0.0,
        bright,
    )?;

    // The alternatives switched, and the histogram's range with them: no re-bake.
    graph.select(EdgePipelineChoice::Scharr)?;
    graph.params_mut().top = top(true);
    shared.lock().unwrap_or_else(PoisonError::into_inner).top = top(true);
    let (_, scharr_edges) = run_and_check(&mut graph, &b, &shared, &rgba, size, true)?;
    let scharr_level = shared.lock().unwrap_or_else(PoisonError::into_inner).level;
    scharr_edges.save(dir.join("flagship_scharr.png"))?;

    // ---------------------------------------------------------------------------------- on textures -------
    // The detector over textures throughout, the levels Otsu found above given as a parameter.
    let edges = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
    let start = Instant::now();
    let mut textured = TextureEdges::bake(&gpu, TextureEdgesBuffers { edges: &edges })?;
    let texture_bake = start.elapsed();
    *textured.params_mut() = TextureEdgesParams::new(width, height, sobel_level);
    let mut times = Vec::with_capacity(REPLAYS);
    for _ in 0..=REPLAYS {
        let start = Instant::now();
        textured.upload_image(TextureEdges::UPLOADS.picture, &rgba)?;
        textured.replay()?.wait()?;
        times.push(start.elapsed());
    }
    println!(
        "textures:  bake {}, {} recorder; replay median {} over {REPLAYS} waited replays, each uploading \
         the frame as an image",
        ms(texture_bake),
        textured.untyped().recorder(),
        ms(median(&times[1..]))
    );
    let on_textures = check_textures(&mut textured, &edges, &rgba, size, sobel_level, false)?;
    on_textures.save(dir.join("flagship_textures.png"))?;
    textured.select(TextureEdgesChoice::Scharr)?;
    textured.params_mut().level = scharr_level;
    check_textures(&mut textured, &edges, &rgba, size, scharr_level, true)?;

    let dot = dir.join("flagship.dot");
    std::fs::write(&dot, EdgePipeline::DESCRIPTION.to_dot(Detail::Plain))
        .map_err(|e| format!("cannot write {}: {e}", dot.display()))?;
    println!(
        "wrote:     {} (sobel's edges), flagship_scharr.png, flagship_blurred.png, flagship_gradient.png \
         (white = gradient {bright:.3}), flagship_textures.png (sobel's edges on textures throughout), \
         flagship.dot \
         (`dot -Tsvg`), in {}",
        dir.join("flagship.png").display(),
        dir.display()
    );
    println!("ok");
    Ok(())
}

/// One replay with the outputs poisoned, checked stage by stage against the CPU; returns the CPU's stages and
/// the edge image the replay read back.
fn run_and_check(
    graph: &mut Baked<EdgePipeline>,
    b: &Buffers,
    shared: &Mutex<Otsu>,
    rgba: &image::RgbaImage,
    (w, h): (usize, usize),
    scharr: bool,
) -> Result<(CpuStages, image::RgbaImage)> {
    let len = w * h;
    for output in [&b.image, &b.blur_rows, &b.blurred, &b.gradient] {
        output.write(&vec![f32::NAN; len])?;
    }
    // A grey no edge pixel is: a texel the threshold fails to store shows.
    b.edges.write(&vec![0x7f; len * 4])?;
    graph.upload_image(EdgePipeline::UPLOADS.picture, rgba)?;
    let finished = graph.replay()?.wait()?;
    let gpu_bins = finished.read(EdgePipeline::READBACKS.hist)?;
    let edges = finished.read_image(EdgePipeline::READBACKS.result)?;
    drop(finished);
    let level = shared.lock().unwrap_or_else(PoisonError::into_inner).level;
    let grey = grey_image(rgba.as_raw());
    let cpu = cpu_stages(&grey, (w, h), scharr);
    let name = if scharr { "scharr" } else { "sobel" };

    let (d_grey, at_grey) = max_abs_diff(&b.image.read_blocking()?, &grey)?;
    let (d_blur, at_blur) = max_abs_diff(&b.blurred.read_blocking()?, &cpu.blurred)?;
    let gpu_gradient = b.gradient.read_blocking()?;
    let (d_grad, at_grad) = max_abs_diff(&gpu_gradient, &cpu.gradient)?;
    // Relative to each value (Scharr's gradient reaches 22): the worst |gpu - cpu| / (1 + |cpu|), NaN for
    // an unwritten pixel.
    let relative = gpu_gradient
        .iter()
        .zip(&cpu.gradient)
        .map(|(&g, &c)| (g - c).abs() / (1.0 + c.abs()))
        .fold(0.0f32, |worst, d| {
            if d.is_nan() || worst.is_nan() {
                f32::NAN
            } else {
                worst.max(d)
            }
        });
    // The GPU's gradient may differ from the CPU's in the last bits, which can move a value across a bin
    // boundary: count those moves.
    let moved: u32 = gpu_bins
        .iter()
        .zip(&cpu.bins)
        .map(|(&g, &c)| g.abs_diff(c))
        .sum();
    let counted: u32 = gpu_bins.iter().sum();
    // The level is Otsu's of the histogram the GPU computed, exactly.
    let want_level = otsu(&gpu_bins, 0.0, top(scharr));
    // Every edge pixel white or black as the CPU's gradient against the level says, but for gradients
    // within the tolerance of the level; and the readback is the edge texture.
    let mismatched = mismatched_edges(
        edges.as_raw(),
        &cpu.gradient,
        level,
        GRADIENT_TOLERANCE * (1.0 + level.abs()),
    );
    let edge_count = edges.as_raw().chunks(4).filter(|p| p[0] == 255).count();
    println!("{name}:");
    println!("  grey      max |gpu - cpu| = {d_grey:.1e} (at pixel {at_grey})");
    println!("  blurred   max |gpu - cpu| = {d_blur:.1e} (at pixel {at_blur})");
    println!("  gradient  max |gpu - cpu| = {d_grad:.1e} (at pixel {at_grad})");
    println!(
        "  histogram {counted} of {len} pixels in {BINS} bins over [0, {:.2}); {moved} counts differ from the \
         CPU's (values on a bin boundary)",
        top(scharr)
    );
    println!(
        "  otsu      level {level:.4} (from the GPU's histogram: {want_level:.4}); edges: {edge_count} pixels \
         ({:.1}%), {mismatched} differ from the CPU",
        100.0 * edge_count as f64 / len as f64
    );
    if d_grey.is_nan() || d_grey > GREY_TOLERANCE {
        return Err(format!("{name}: grey differs from the CPU by {d_grey:e}").into());
    }
    if d_blur.is_nan() || d_blur > BLUR_TOLERANCE {
        return Err(format!("{name}: blurred differs from the CPU by {d_blur:e}").into());
    }
    if relative.is_nan() || relative > GRADIENT_TOLERANCE {
        return Err(
            format!("{name}: gradient differs from the CPU by {relative:e} relative").into(),
        );
    }
    if counted as usize != len || moved as usize > len / 1000 {
        return Err(
            format!("{name}: the histogram counts {counted} of {len}, {moved} moved").into(),
        );
    }
    if level != want_level {
        return Err(format!(
            "{name}: level {level}, but Otsu's of the GPU's histogram is {want_level}"
        )
        .into());
    }
    if mismatched > 0 {
        return Err(format!("{name}: {mismatched} edge pixels differ from the CPU").into());
    }
    if b.edges.read_blocking()? != *edges.as_raw() {
        return Err(format!("{name}: the readback differs from the edge texture").into());
    }
    Ok((cpu, edges))
}

/// One replay of the detector on textures, the edge texture poisoned first, its readback (an image) checked
/// against the CPU and against the texture itself; returns the image.
fn check_textures(
    graph: &mut Baked<TextureEdges>,
    edges: &Texture,
    rgba: &image::RgbaImage,
    (w, h): (usize, usize),
    level: f32,
    scharr: bool,
) -> Result<image::RgbaImage> {
    let poison = vec![0x7f; w * h * 4];
    edges.write(&poison)?;
    graph.upload_image(TextureEdges::UPLOADS.picture, rgba)?;
    let finished = graph.replay()?.wait()?;
    let read = finished.read_image(TextureEdges::READBACKS.result)?;
    drop(finished);
    let cpu = cpu_texture_edges(rgba.as_raw(), (w, h), scharr);
    let mismatched = mismatched_edges(
        read.as_raw(),
        &cpu.gradient,
        level,
        GRADIENT_TOLERANCE * (1.0 + level),
    );
    let white = read.as_raw().chunks(4).filter(|p| p[0] == 255).count();
    let name = if scharr { "scharr" } else { "sobel" };
    println!(
        "  {name} on textures: level {level:.4}, edges {white} pixels ({:.1}%), {mismatched} differ from the CPU",
        100.0 * white as f64 / (w * h) as f64
    );
    if mismatched > 0 {
        return Err(
            format!("{name} on textures: {mismatched} edge pixels differ from the CPU").into(),
        );
    }
    if edges.read_blocking()? != *read.as_raw() {
        return Err(
            format!("{name} on textures: the readback differs from the edge texture").into(),
        );
    }
    Ok(read)
}

/// The grey kernel's against the CPU's luma: three products of values in 0..=1, summed (an FMA or not).
const GREY_TOLERANCE: f32 = 1e-6;
/// The library blur's bound against its CPU reference (its library test's): Gaussian weights computed on
/// each side, five taps a pass, values in 0..=1.
const BLUR_TOLERANCE: f32 = 1e-5;
/// The gradient's, relative: sums of six weighted pixels (weights up to 10), squared, then a square root.
const GRADIENT_TOLERANCE: f32 = 1e-5;

// ---------------------------------------------------------------------------------- arguments -------------

/// `[INPUT.png]`.
struct Args {
    input: Option<String>,
}

impl Args {
    fn parse() -> Result<Args> {
        let mut args = Args { input: None };
        for arg in std::env::args().skip(1) {
            match arg.as_str() {
                "--help" | "-h" => {
                    println!("usage: flagship [INPUT.png]");
                    println!(
                        "  INPUT.png  any PNG (default: the built-in examples/assets/shapes.png)"
                    );
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
