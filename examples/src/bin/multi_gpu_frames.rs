//! # multi_gpu_frames: a batch of independent flagship frames, on one GPU and across two
//!
//! One graph holds `--frames` copies of the flagship's `EdgePipeline` (`examples/src/edge_pipeline.rs`) as
//! subgraphs, each with its own picture upload, buffers, edge texture, host task (Otsu's level) and
//! readbacks. It is baked on one GPU (`BakedGraph`), and across two (`GpusGraph`) with frame `f` placed on
//! GPU `f % 2` and its buffers and texture made there, so nothing moves between the GPUs: each replay drives
//! both GPUs' parts, each part on a thread of its own around its host phase.
//!
//! Each side's every frame is checked against the CPU once (Otsu's level exactly that of the GPU's
//! histogram, every edge pixel as the CPU's gradient says), outputs poisoned first; then the median wall time
//! of a replay (each frame's picture uploaded, until every GPU finished) over `--runs` replays.
//!
//! ```text
//! cargo run --release -p examples --bin multi_gpu_frames [-- --frames 8 --runs 20]
//! ```
//!
//! On a machine with one adapter the "two GPUs" are two devices of it.

#![forbid(unsafe_code)]

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use examples::edge_pipeline::{EdgePipeline, cpu_stages, grey_image, otsu, top};
use examples::texture_edges::mismatched_edges;
use examples::{Result, median, ms};
use graph_runtime::ir::{AccessMode, Role};
use graph_runtime::{
    BakedGraph, Buffer, Error, Gpu, Gpus, GpusGraph, GraphBuilder, GraphDesc, HostContext, LIBRARY,
    Texture,
};

/// The picture, built into the program.
const INPUT: &[u8] = include_bytes!("../../assets/shapes.png");
/// The flagship's tolerance on the gradient, relative to `1 + |value|`.
const GRADIENT_TOLERANCE: f32 = 1e-5;

/// One frame's external buffers and texture, made on its GPU.
struct Frame {
    image: Buffer<f32>,
    blur_rows: Buffer<f32>,
    blurred: Buffer<f32>,
    gradient: Buffer<f32>,
    edges: Texture,
}

fn main() -> Result<()> {
    let (frames, runs) = arguments()?;
    let rgba = image::load_from_memory(INPUT)?.to_rgba8();
    let (w, h) = rgba.dimensions();
    let mut gpus = Gpus::new_blocking()?;
    if gpus.len() < 2 {
        println!("one adapter: the second GPU is a second device of it");
        gpus = Gpus::from_gpus(vec![gpus[0].clone(), Gpu::new_blocking()?])?;
    }
    for (i, gpu) in gpus.iter().enumerate() {
        println!("GPU {i}: {}", gpu.summary());
    }
    println!(
        "{frames} frames of {w}x{h}, median of {runs} replays, each uploading every frame's picture\n"
    );
    let grey = grey_image(rgba.as_raw());
    let cpu = cpu_stages(&grey, (w as usize, h as usize), false);

    // One GPU.
    let one_gpu: Vec<Frame> = (0..frames)
        .map(|_| frame(&gpus[0], (w, h)))
        .collect::<Result<_>>()?;
    let one = BakedGraph::bake_with_textures(
        &gpus[0],
        batch(frames, None)?,
        &buffers(&one_gpu)
            .iter()
            .map(|(n, b)| (n.as_str(), *b))
            .collect::<Vec<_>>(),
        &textures(&one_gpu)
            .iter()
            .map(|(n, t)| (n.as_str(), *t))
            .collect::<Vec<_>>(),
    )?;
    let t_one = side("one GPU", one, &one_gpu, runs, &rgba, &cpu.gradient)?;

    // Two GPUs: frame f on GPU f % 2, its buffers and texture there.
    let two_gpus: Vec<Frame> = (0..frames)
        .map(|f| frame(&gpus[f % 2], (w, h)))
        .collect::<Result<_>>()?;
    let two = GpusGraph::bake_with_textures(
        &gpus,
        batch(frames, Some(2))?,
        &buffers(&two_gpus)
            .iter()
            .map(|(n, b)| (n.as_str(), *b))
            .collect::<Vec<_>>(),
        &textures(&two_gpus)
            .iter()
            .map(|(n, t)| (n.as_str(), *t))
            .collect::<Vec<_>>(),
    )?;
    println!(
        "two GPUs: {} transfers ({} bytes) per replay",
        two.transfers().len(),
        two.transfer_bytes()
    );
    let t_two = side("two GPUs", two, &two_gpus, runs, &rgba, &cpu.gradient)?;
    println!(
        "\nspeed-up of two GPUs over one: {:.2}x ({} against {})",
        t_one.as_secs_f64() / t_two.as_secs_f64(),
        ms(t_two),
        ms(t_one)
    );
    Ok(())
}

/// What the benchmark asks of either side: a graph on one GPU or on a set.
trait Batch {
    fn on_host(&mut self, node: &str, task: impl HostFn) -> Result<()>;
    fn set_param<T: graph_runtime::ParamValue>(&mut self, name: &str, value: T) -> Result<()>;
    fn upload_image(&mut self, node: &str, image: &image::RgbaImage) -> Result<()>;
    /// Replays and waits; with `read`, each frame's histogram and edge texels.
    fn replay_reading(&mut self, frames: usize, read: bool) -> Result<Outputs>;
}

/// A host task's closure.
trait HostFn: FnMut(&HostContext<'_>) -> std::result::Result<(), Error> + Send + 'static {}
impl<F: FnMut(&HostContext<'_>) -> std::result::Result<(), Error> + Send + 'static> HostFn for F {}

/// Each frame's readbacks by name, from what either side's finished replay gives.
fn outputs(
    frames: usize,
    read: bool,
    named: impl Fn(&str) -> std::result::Result<Vec<u8>, Error>,
) -> Result<Outputs> {
    (0..frames)
        .filter(|_| read)
        .map(|f| {
            let bins = named(&format!("frame{f}.hist"))?;
            let edges = named(&format!("frame{f}.result"))?;
            Ok((bytemuck::pod_collect_to_vec(&bins), edges))
        })
        .collect()
}

impl Batch for BakedGraph {
    fn on_host(&mut self, node: &str, task: impl HostFn) -> Result<()> {
        BakedGraph::on_host(self, node, task)?;
        Ok(())
    }
    fn set_param<T: graph_runtime::ParamValue>(&mut self, name: &str, value: T) -> Result<()> {
        Ok(BakedGraph::set_param(self, name, value)?)
    }
    fn upload_image(&mut self, node: &str, image: &image::RgbaImage) -> Result<()> {
        Ok(BakedGraph::upload_image(self, node, image)?)
    }
    fn replay_reading(&mut self, frames: usize, read: bool) -> Result<Outputs> {
        let done = self.replay_blocking()?;
        outputs(frames, read, |node| done.read_bytes_named(node))
    }
}

impl Batch for GpusGraph {
    fn on_host(&mut self, node: &str, task: impl HostFn) -> Result<()> {
        GpusGraph::on_host(self, node, task)?;
        Ok(())
    }
    fn set_param<T: graph_runtime::ParamValue>(&mut self, name: &str, value: T) -> Result<()> {
        Ok(GpusGraph::set_param(self, name, value)?)
    }
    fn upload_image(&mut self, node: &str, image: &image::RgbaImage) -> Result<()> {
        Ok(GpusGraph::upload_image(self, node, image)?)
    }
    fn replay_reading(&mut self, frames: usize, read: bool) -> Result<Outputs> {
        let done = self.replay_blocking()?;
        outputs(frames, read, |node| done.read_bytes_named(node))
    }
}

/// One side: its host tasks and parameters set, then [`run_side`].
fn side(
    name: &str,
    mut graph: impl Batch,
    frames: &[Frame],
    runs: usize,
    rgba: &image::RgbaImage,
    gradient: &[f32],
) -> Result<Duration> {
    let count = frames.len();
    let levels = Arc::new(Mutex::new(vec![0.0f32; count]));
    for f in 0..count {
        graph.on_host(&format!("frame{f}.otsu"), otsu_task(f, levels.clone()))?;
    }
    graph.set_param("width", rgba.width())?;
    graph.set_param("height", rgba.height())?;
    graph.set_param("top", top(false))?;
    run_side(
        name,
        frames,
        runs,
        rgba,
        gradient,
        &levels,
        |upload, read| {
            for f in 0..count {
                graph.upload_image(&format!("frame{f}.picture"), upload)?;
            }
            graph.replay_reading(count, read)
        },
    )
}

fn arguments() -> Result<(usize, usize)> {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str, default: usize| -> Result<usize> {
        match args.iter().position(|a| a == flag) {
            Some(i) => args
                .get(i + 1)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{flag} takes a number").into()),
            None => Ok(default),
        }
    };
    Ok((value("--frames", 8)?.max(1), value("--runs", 20)?.max(1)))
}

/// `frames` flagship frames side by side, frame `f` placed on GPU `f % gpus` when given.
fn batch(frames: usize, gpus: Option<u32>) -> Result<GraphDesc> {
    let mut b = GraphBuilder::new("Frames");
    b.param("width", "u32")
        .param("height", "u32")
        .param("top", "f32");
    for f in 0..frames {
        b.texture(&format!("edges{f}"), "texture_2d<rgba8unorm>", Role::Output);
        for name in ["image", "blur_rows", "blurred", "gradient"] {
            b.output(&format!("{name}{f}"), "f32");
        }
        let names: Vec<(String, String)> = ["edges", "image", "blur_rows", "blurred", "gradient"]
            .iter()
            .map(|n| (n.to_string(), format!("{n}{f}")))
            .collect();
        let bindings: Vec<(&str, &str, AccessMode)> = names
            .iter()
            .map(|(child, parent)| (child.as_str(), parent.as_str(), AccessMode::Write))
            .collect();
        b.subgraph(&format!("frame{f}"), EdgePipeline::DESCRIPTION, &bindings);
        if let Some(gpus) = gpus {
            b.on(&format!("frame{f}"), f as u32 % gpus);
        }
    }
    Ok(b.build(&LIBRARY)?)
}

fn frame(gpu: &Gpu, (w, h): (u32, u32)) -> Result<Frame> {
    let len = (w * h) as usize;
    Ok(Frame {
        image: gpu.buffer_zeroed(len)?,
        blur_rows: gpu.buffer_zeroed(len)?,
        blurred: gpu.buffer_zeroed(len)?,
        gradient: gpu.buffer_zeroed(len)?,
        edges: gpu.texture("texture_2d<rgba8unorm>", [w, h, 1])?,
    })
}

fn buffers(frames: &[Frame]) -> Vec<(String, &graph_runtime::AnyBuffer)> {
    frames
        .iter()
        .enumerate()
        .flat_map(|(f, fr)| {
            [
                (format!("image{f}"), fr.image.as_any()),
                (format!("blur_rows{f}"), fr.blur_rows.as_any()),
                (format!("blurred{f}"), fr.blurred.as_any()),
                (format!("gradient{f}"), fr.gradient.as_any()),
            ]
        })
        .collect()
}

fn textures(frames: &[Frame]) -> Vec<(String, &Texture)> {
    frames
        .iter()
        .enumerate()
        .map(|(f, fr)| (format!("edges{f}"), &fr.edges))
        .collect()
}

/// The host task of frame `f`: Otsu's level of its histogram, written for its threshold and kept in `levels`.
fn otsu_task(
    f: usize,
    levels: Arc<Mutex<Vec<f32>>>,
) -> impl FnMut(&HostContext<'_>) -> std::result::Result<(), Error> + Send + 'static {
    move |ctx| {
        let bins: Vec<u32> = ctx.read(&format!("frame{f}.bins"))?;
        let level = otsu(&bins, 0.0, top(false));
        ctx.write(&format!("frame{f}.level"), &[level])?;
        levels.lock().unwrap_or_else(PoisonError::into_inner)[f] = level;
        Ok(())
    }
}

/// Each frame's histogram and edge texels, from one replay.
type Outputs = Vec<(Vec<u32>, Vec<u8>)>;

/// One side: a replay checked frame by frame against the CPU's `gradient` (outputs poisoned first), then the
/// median of `runs` replays after 3 more.
#[allow(clippy::too_many_arguments)]
fn run_side(
    side: &str,
    frames: &[Frame],
    runs: usize,
    rgba: &image::RgbaImage,
    gradient: &[f32],
    levels: &Mutex<Vec<f32>>,
    mut replay: impl FnMut(&image::RgbaImage, bool) -> Result<Outputs>,
) -> Result<Duration> {
    let pixels = (rgba.width() * rgba.height()) as usize;
    for frame in frames {
        frame.gradient.write(&vec![f32::NAN; pixels])?;
        // A grey no edge pixel is: a texel the threshold fails to store shows.
        frame.edges.write(&vec![0x7f; pixels * 4])?;
    }
    let outputs = replay(rgba, true)?;
    let levels = levels
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    for (f, (bins, edges)) in outputs.iter().enumerate() {
        let level = levels[f];
        let want = otsu(bins, 0.0, top(false));
        let counted: u32 = bins.iter().sum();
        if counted as usize != pixels || level != want {
            return Err(format!(
                "{side}, frame {f}: {counted} of {pixels} pixels counted, level {level} (Otsu's of the GPU's \
                 histogram: {want})"
            )
            .into());
        }
        let mismatched = mismatched_edges(
            edges,
            gradient,
            level,
            GRADIENT_TOLERANCE * (1.0 + level.abs()),
        );
        if mismatched > 0 {
            return Err(
                format!("{side}, frame {f}: {mismatched} edge pixels differ from the CPU").into(),
            );
        }
    }
    let mut timed = |read: bool| -> Result<Duration> {
        for _ in 0..3 {
            replay(rgba, read)?;
        }
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            replay(rgba, read)?;
            times.push(start.elapsed());
        }
        Ok(median(&times))
    };
    let (t, unread) = (timed(true)?, timed(false)?);
    println!(
        "{side:<9} every frame as the CPU (levels {:.4}..{:.4}, 0 edge pixels differ); replay median {} \
         ({} without reading the readbacks out)",
        levels.iter().copied().fold(f32::INFINITY, f32::min),
        levels.iter().copied().fold(f32::NEG_INFINITY, f32::max),
        ms(t),
        ms(unread)
    );
    Ok(t)
}
