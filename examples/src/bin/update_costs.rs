//! What each executable-graph update costs, against a fresh bake and a replay: the flagship's graph
//! (`EdgePipeline`, 13 nodes once flattened, 512 x 512, from a picture texture to an edge texture) and a
//! small graph of ranges, each update alternated between two states so that every one of them does its
//! work, medians of `--runs` (default 21).
//!
//! ```text
//! cargo run --release -p examples --bin update_costs [-- --runs N]
//! ```

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use examples::edge_pipeline::{EdgePipeline, otsu, top};
use examples::{Result, median};
use graph_runtime::desc::OpDesc;
use graph_runtime::{AnyBuffer, BakedGraph, Dispatch, Gpu, GraphBuilder, LIBRARY, UpdateReport};

fn main() -> Result<()> {
    let runs = runs()?;
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    let (w, h) = (512u32, 512u32);
    let len = (w * h) as usize;
    let picture = image::RgbaImage::from_fn(w, h, |x, y| {
        let v = ((x * 7919 + y * 104_729) % 256) as u8;
        image::Rgba([v, v / 2, 255 - v, 255])
    });
    let names = ["image", "blur_rows", "blurred", "gradient"];
    let buffers: Vec<AnyBuffer> = names
        .iter()
        .map(|_| gpu.buffer_zeroed::<f32>(len).map(|b| b.as_any().clone()))
        .collect::<std::result::Result<_, _>>()?;
    let spare = gpu.buffer_zeroed::<f32>(len)?;
    let bound: Vec<(&str, &AnyBuffer)> = names.iter().copied().zip(&buffers).collect();
    let edges = gpu.texture("texture_2d<rgba8unorm>", [w, h, 1])?;

    let bake = || -> Result<BakedGraph> {
        let mut g = BakedGraph::bake_with_textures(
            &gpu,
            EdgePipeline::DESCRIPTION,
            &bound,
            &[("edges", &edges)],
        )?;
        g.set_param("width", w)?;
        g.set_param("height", h)?;
        g.set_param("top", top(false))?;
        g.on_host("otsu", |ctx| {
            let bins: Vec<u32> = ctx.read("bins")?;
            ctx.write("level", &[otsu(&bins, 0.0, top(false))])
        })?;
        Ok(g)
    };
    let bakes = time(runs, |_| bake().map(|_| UpdateReport::default()))?;
    let mut g = bake()?;
    let replays = time(runs, |_| {
        g.upload_image("picture", &picture)?;
        g.replay()?.wait()?;
        Ok(UpdateReport::default())
    })?;

    // The threshold kernel with another constant: one pipeline to compile in a whole-graph update.
    let mut changed = EdgePipeline::DESCRIPTION.clone();
    for node in changed.nodes.to_mut() {
        if let (OpDesc::Kernel(k), "threshold") = (&mut node.op, &*node.name) {
            k.source = k
                .source
                .replace("select(0.0, 1.0,", "select(0.0, 2.0,")
                .into();
        }
    }
    let original = EdgePipeline::DESCRIPTION.clone();
    let gradient = buffers[3].clone();
    let rows: Vec<(&str, Vec<Duration>, UpdateReport)> = vec![
        row("rebind `gradient` (4 kernels bind it)", runs, |i| {
            g.rebind(
                "gradient",
                if i % 2 == 0 {
                    spare.as_any()
                } else {
                    &gradient
                },
            )
        })?,
        row("set_dispatch of `threshold`", runs, |i| {
            let side = if i % 2 == 0 { 256 } else { 512 };
            g.set_dispatch("threshold", Dispatch::Threads([side, side, 1]))
        })?,
        row("select an alternative", runs, |i| {
            g.select(if i % 2 == 0 { "scharr" } else { "sobel" })?;
            Ok(UpdateReport::default())
        })?,
        row(
            "update(): same topology, one kernel's code changed",
            runs,
            |i| {
                g.update(if i % 2 == 0 {
                    changed.clone()
                } else {
                    original.clone()
                })
            },
        )?,
        row("update(): the same description", runs, |_| {
            g.update(original.clone())
        })?,
    ];

    let mut ranges = ranges_graph(&gpu)?;
    let range_rows = vec![
        row("set_copy_ranges (small graph)", runs, |i| {
            let s = if i % 2 == 0 { 0..8 } else { 8..16 };
            ranges.set_copy_ranges("c", s.clone(), s)
        })?,
        row("set_range of a fill (a pipeline constant)", runs, |i| {
            ranges.set_range("f", if i % 2 == 0 { 0..8 } else { 8..16 })
        })?,
    ];

    println!(
        "\nmedians of {runs}: a fresh bake {}, a waited replay {}, through the {} recorder\n",
        us(median(&bakes)),
        us(median(&replays)),
        g.recorder()
    );
    println!(
        "| update | median | vs bake | vs replay | pipelines built | bind groups built | native pipelines built | native sets built |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, times, report) in rows.iter().chain(&range_rows) {
        let m = median(times);
        println!(
            "| {name} | {} | {:.4}x | {:.4}x | {} | {} | {} | {} |",
            us(m),
            m.as_secs_f64() / median(&bakes).as_secs_f64(),
            m.as_secs_f64() / median(&replays).as_secs_f64(),
            report.pipelines_built,
            report.bind_groups_built,
            report.native_pipelines_built,
            report.native_sets_built
        );
    }
    Ok(())
}

/// `copy c(a[0..8] -> b[0..8]); fill f(b[..8] = 1.0);` over 16 elements, baked.
fn ranges_graph(gpu: &Gpu) -> Result<BakedGraph> {
    let mut b = GraphBuilder::new("Ranges");
    b.input("a", "f32").output("b", "f32");
    b.copy("c", "a[0..8]", "b[0..8]")
        .fill("f", "b[8..16]", "1.0");
    let desc = b.build(&LIBRARY)?;
    let a = gpu.buffer_zeroed::<f32>(16)?;
    let out = gpu.buffer_zeroed::<f32>(16)?;
    Ok(BakedGraph::bake(
        gpu,
        desc,
        &[("a", a.as_any()), ("b", out.as_any())],
    )?)
}

/// Times `update` `runs` times (called with the run's index), and keeps the report of the last.
fn row(
    name: &str,
    runs: usize,
    mut update: impl FnMut(usize) -> std::result::Result<UpdateReport, graph_runtime::Error>,
) -> Result<(&str, Vec<Duration>, UpdateReport)> {
    let mut last = UpdateReport::default();
    let times = time(runs, |i| {
        last = update(i)?;
        Ok(last)
    })?;
    Ok((name, times, last))
}

fn time(runs: usize, mut f: impl FnMut(usize) -> Result<UpdateReport>) -> Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        let start = Instant::now();
        f(i)?;
        times.push(start.elapsed());
    }
    Ok(times)
}

/// Microseconds, with one decimal.
fn us(d: Duration) -> String {
    format!("{:.1} us", d.as_secs_f64() * 1e6)
}

fn runs() -> Result<usize> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(21),
        [flag, n] if flag == "--runs" => Ok(n.parse()?),
        _ => Err("usage: update_costs [--runs N]".into()),
    }
}
