//! # 06_pipeline: a 100-stage image pipeline, and the memory its intermediates take
//!
//! A 256 x 256 image goes through 100 blur passes, along rows and along columns in turn (the library's
//! `blur_h` and `blur_v`), each pass writing a graph-owned image of its own, the last the caller's. It is
//! baked three ways and each replay is checked against the CPU:
//!
//! - as written: the fusion pass tiles the chain (2-D overlapped tiling), so most intermediates live in
//!   workgroup memory or registers and take no memory at all;
//! - every pass its own kernel (`no_fusion`): 99 intermediates, which the memory plan packs into heaps, since
//!   no more than two live at one step;
//! - the same, every intermediate `no_alias`: each in memory of its own, as before the plan.
//!
//! It prints the bytes each bake allocated for the graph's own buffers, the plan in words, and a median
//! replay time.
//!
//! ```text
//! cargo run --release -p examples --bin 06_pipeline
//! ```

#![forbid(unsafe_code)]

use std::time::Instant;

use examples::{Result, max_abs_diff, median, ms};
use graph_runtime::kernels::cpu;
use graph_runtime::{BakedGraph, Gpu, GraphBuilder, LIBRARY};

/// Image side, in pixels.
const SIDE: usize = 256;
/// Blur passes.
const STAGES: usize = 100;
/// Each pass's radius and sigma.
const RADIUS: usize = 1;
const SIGMA: f32 = 1.0;

/// The pipeline: `image -> p1 -> .. -> p99 -> out`, pass `i` along rows when `i` is odd.
fn pipeline(fused: bool, alias: bool) -> Result<graph_runtime::desc::GraphDesc> {
    let mut b = GraphBuilder::new("Pipeline");
    b.input("image", "f32").output("out", "f32");
    let name = |i: usize| match i {
        0 => "image".to_string(),
        i if i == STAGES => "out".to_string(),
        i => format!("p{i}"),
    };
    let side = format!("{SIDE}u");
    let (radius, sigma) = (format!("{RADIUS}u"), format!("{SIGMA:?}"));
    for i in 1..STAGES {
        b.owned(&name(i), "f32", (SIDE * SIDE) as u64);
        if !alias {
            b.no_alias(&name(i));
        }
    }
    for i in 1..=STAGES {
        let pass = format!("pass{i}");
        let kernel = if i % 2 == 1 { "blur_h" } else { "blur_v" };
        b.library(
            &pass,
            kernel,
            &[("input", &name(i - 1)), ("output", &name(i))],
            &[
                ("width", &side),
                ("height", &side),
                ("radius", &radius),
                ("sigma", &sigma),
            ],
        );
        if !fused {
            b.no_fusion(&pass);
        }
    }
    Ok(b.build(&LIBRARY)?)
}

fn main() -> Result<()> {
    let gpu = Gpu::new_blocking()?;
    println!("adapter:   {}", gpu.summary());
    // Waves over a checkerboard of 32-pixel squares: edges and smooth parts for the blur.
    let image: Vec<f32> = (0..SIDE * SIDE)
        .map(|i| {
            let (x, y) = (i % SIDE, i / SIDE);
            let square = if (x / 32 + y / 32).is_multiple_of(2) {
                1.0
            } else {
                0.0
            };
            (x as f32 * 0.11).sin() * (y as f32 * 0.07).cos() + square
        })
        .collect();
    let mut want = image.clone();
    let mut next = vec![0.0; want.len()];
    for i in 1..=STAGES {
        cpu::blur(&want, &mut next, (SIDE, SIDE), (RADIUS, SIGMA), i % 2 == 1);
        std::mem::swap(&mut want, &mut next);
    }
    let input = gpu.buffer_from_slice(&image)?;
    let out = gpu.buffer_from_slice(&vec![0.0f32; SIDE * SIDE])?;
    println!(
        "pipeline:  {STAGES} blur passes over a {SIDE} x {SIDE} image, each writing an image of its own"
    );
    for (label, fused, alias) in [
        ("fused (as written)", true, true),
        ("each pass its own kernel", false, true),
        (
            "each pass its own kernel, every image no_alias",
            false,
            false,
        ),
    ] {
        let mut graph = BakedGraph::bake(
            &gpu,
            pipeline(fused, alias)?,
            &[("image", input.as_any()), ("out", out.as_any())],
        )?;
        out.write(&vec![f32::NAN; SIDE * SIDE])?;
        graph.replay_blocking()?;
        let (diff, at) = max_abs_diff(&out.read_blocking()?, &want)?;
        if diff > 1e-4 {
            return Err(format!("{label}: pixel {at} is {diff} off the CPU's").into());
        }
        let mut times = Vec::new();
        for _ in 0..20 {
            let start = Instant::now();
            graph.replay_blocking()?;
            times.push(start.elapsed());
        }
        let plan = graph.memory_plan();
        println!();
        println!(
            "{label}: {} bytes for the graph's own images, median replay {}, max |gpu - cpu| = {diff:.1e}",
            graph.owned_bytes(),
            ms(median(&times))
        );
        let names: Vec<&str> = graph
            .description()
            .buffers
            .iter()
            .map(|b| &*b.name)
            .collect();
        for line in plan.summary(&names).iter().take(3) {
            // The heaps' lines list every image; the first few words say enough.
            let short: String = line.chars().take(110).collect();
            let more = if short.len() < line.len() { " .." } else { "" };
            println!("  {short}{more}");
        }
    }
    println!();
    println!("ok: every bake computed what the CPU does");
    Ok(())
}
