//! # 07 — record: an eager program becomes a graph without being rewritten
//!
//! A small numerical routine is written once against an eager [`Stream`] (`gpu.stream()`): two inline WGSL
//! kernels and three calls of the kernel library, the last one a two-pass reduction. Each call runs at once,
//! as on an in-order queue, checked as the builder checks a node.
//!
//! Then the same routine runs between `begin_recording` and `end`: nothing runs, each call becomes a node of
//! a `GraphBuilder`, with edges from the order of the calls' accesses (independent calls stay parallel).
//! The recording is an ordinary checked description, baked once (its four element-wise kernels, inline and
//! library alike, fused into one) and replayed: the program prints the
//! median time of one eager run and of one replay (each followed by reading the sum back, so both include a
//! wait for the GPU), and checks both results against the CPU.
//!
//! Run it with `cargo run --release -p examples --bin 07_record -- [ELEMENTS] [ROUNDS]`.

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use examples::{Result, max_abs_diff, median, ms};
use graph_runtime::{BakedGraph, Buffer, Error, Gpu, GraphBuilder, LIBRARY, Stream};

/// `y = x * x + b`.
const SQUARE_PLUS: &str = "@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&y)) { return; }
    y[gid.x] = x[gid.x] * x[gid.x] + params.b;
}";

/// `y = max(y - c, 0)`.
const SHIFT: &str = "@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&y)) { return; }
    y[gid.x] = max(y[gid.x] - params.c, 0.0);
}";

/// The routine, written against the stream: `y = x^2 + b`, `y += a x` (library `axpy`), `y *= 0.5`
/// (library `scale`), `y = max(y - c, 0)`, `total = sum(y)` (library `reduce::sum`).
fn routine(
    s: &mut Stream,
    x: &Buffer<f32>,
    y: &Buffer<f32>,
    total: &Buffer<f32>,
) -> Result<(), Error> {
    s.kernel("square_plus", SQUARE_PLUS)
        .read("x", x)
        .write("y", y)
        .run()?;
    s.library("axpy", "axpy")
        .bind("x", x)
        .bind("y", y)
        .arg("a", "params.a")
        .run()?;
    s.library("halve", "scale")
        .bind("data", y)
        .arg("alpha", "0.5")
        .run()?;
    s.kernel("shift", SHIFT).read_write("y", y).run()?;
    s.library("sum", "reduce::sum")
        .bind("input", y)
        .bind("output", total)
        .run()
}

/// The routine on the CPU: `y` and its sum.
fn on_cpu(xs: &[f32], (a, b, c): (f32, f32, f32)) -> (Vec<f32>, f64) {
    let y: Vec<f32> = xs
        .iter()
        .map(|&x| (0.5 * (x * x + b + a * x) - c).max(0.0))
        .collect();
    let total = y.iter().map(|&v| f64::from(v)).sum();
    (y, total)
}

/// Fails unless `y` and `total` are the CPU's.
fn check(what: &str, y: &[f32], total: f32, want: &(Vec<f32>, f64)) -> Result<()> {
    let (diff, at) = max_abs_diff(y, &want.0)?;
    if diff > 1e-4 {
        return Err(format!("{what}: y[{at}] is {}, the CPU's {}", y[at], want.0[at]).into());
    }
    let off = (f64::from(total) - want.1).abs();
    if off > 1e-4 * want.1.abs().max(1.0) {
        return Err(format!("{what}: the sum is {total}, the CPU's {}", want.1).into());
    }
    Ok(())
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(1 << 20), |a| a.parse())?;
    let rounds: usize = args.next().map_or(Ok(50), |a| a.parse())?;
    let gpu = Gpu::new_blocking()?;
    println!("{}", gpu.summary());
    let xs: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    let (a, b, c) = (0.75f32, 0.25f32, 0.125f32);
    let want = on_cpu(&xs, (a, b, c));
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    let total = gpu.buffer_zeroed::<f32>(1)?;

    // Eager: each call runs at once; the first run bakes each call's graph, the later ones only replay them.
    let mut s = gpu.stream();
    s.param("a", a)?.param("b", b)?.param("c", c)?;
    // Each call submitted at once, then the five calls batched (with the read's copy, one submission).
    let mut eager = Vec::new();
    for batch in [1, 8] {
        s.batch(batch);
        y.write(&vec![f32::NAN; n])?;
        let (mut times, mut submissions) = (Vec::new(), 0);
        for _ in 0..rounds.max(1) + 1 {
            let start = Instant::now();
            let before = gpu.queue().submissions();
            routine(&mut s, &x, &y, &total)?;
            s.read(&total)?;
            times.push(start.elapsed());
            submissions = gpu.queue().submissions() - before;
        }
        check("eager", &s.read(&y)?, s.read(&total)?[0], &want)?;
        eager.push((batch, times, submissions));
    }

    // Recorded: the same routine, unchanged, into a builder; then built, baked and replayed.
    let mut builder = GraphBuilder::new("Routine");
    let recorded = {
        let mut recording = s.begin_recording(&mut builder)?;
        routine(&mut recording, &x, &y, &total)?;
        recording.end()?
    };
    let desc = builder.build(&LIBRARY)?;
    let nodes = desc.nodes.len();
    let edges = desc.edges.len();
    let mut graph = BakedGraph::bake(&gpu, desc, &recorded.bindings())?;
    for (name, value) in [("a", a), ("b", b), ("c", c)] {
        graph.set_param(name, value)?;
    }
    let fused: Vec<String> = graph.fused().iter().map(|g| g.names.join(" + ")).collect();
    println!(
        "{n} elements, {rounds} rounds: the recorded graph has {nodes} nodes and {edges} edges; fused: [{}]",
        fused.join("], [")
    );
    // The first of each is the one that baked.
    let steady = |times: &[Duration]| median(&times[1..]);
    for (batch, times, submissions) in &eager {
        let how = match batch {
            1 => "each call submitted".to_string(),
            _ => format!("batch({batch})"),
        };
        let first = match batch {
            1 => format!(" (first, baking each call's graph: {})", ms(times[0])),
            _ => String::new(),
        };
        println!(
            "eager run ({how}, 5 calls and a read in {submissions} submissions): median {}{first}",
            ms(steady(times)),
        );
    }
    // The speed-ups are over the eager run that submits each call.
    let eager_median = steady(&eager[0].1);
    // The replay through the recorder bake chose (native, where Vulkan is), then through the portable one.
    let mut portable_done = false;
    while !portable_done {
        portable_done = graph.recorder() == "portable";
        y.write(&vec![f32::NAN; n])?;
        let mut replays = Vec::new();
        for _ in 0..rounds.max(1) + 1 {
            let start = Instant::now();
            graph.replay()?.wait()?;
            total.read_blocking()?;
            replays.push(start.elapsed());
        }
        let recorder = graph.recorder();
        check(
            recorder,
            &y.read_blocking()?,
            total.read_blocking()?[0],
            &want,
        )?;
        let replay_median = steady(&replays);
        println!(
            "replay ({recorder} recorder): median {} (first: {}); speed-up over the eager run {:.2}x",
            ms(replay_median),
            ms(replays[0]),
            eager_median.as_secs_f64() / replay_median.as_secs_f64()
        );
        graph.use_portable_recorder();
    }
    println!("ok: the eager run and the replays computed what the CPU does");
    Ok(())
}
