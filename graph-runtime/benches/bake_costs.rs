//! What a bake costs for large graphs: a chain and a fan of pointwise kernels (each over buffers of its own,
//! as in `replay_vs_hand_written`), a fan whose kernels each have a constant of their own (no two alike), and
//! a chain of 3-point stencils (each over buffers of its own, so tiled in groups of 7 by the binding limit),
//! at several sizes, with fusion on and off. The first bake of a shape in a process is the cold one: a
//! driver may keep what it compiled for later bakes (NVIDIA does, in memory and on disk unless
//! `__GL_SHADER_DISK_CACHE=0`), so the first and the median of the rest are printed, with what fusion made
//! (groups, the largest, what it declined). Each baked graph's output is checked against a CPU reference
//! once, so a fast bake that replays wrong does not count.
//!
//! `cargo bench -p graph-runtime --bench bake_costs -- [--sizes 100,1000] [--runs 3]`

#![forbid(unsafe_code)]

#[path = "common/args.rs"]
mod args;
#[path = "common/span_times.rs"]
mod span_times;

use std::time::{Duration, Instant};

use graph_runtime::{BakedGraph, Buffer, Error, Gpu, GraphBuilder, KernelSpec, LIBRARY};

/// Elements per buffer: small, so that a bake's cost and not its memory is measured.
const N: usize = 4096;

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// `b[k] = b[k - 1] * 0.5 + 1` for k in 1..=n, `b[0]` the input.
    Chain,
    /// `b[k] = b[0] * 2` for k in 1..=n.
    Fan,
    /// `b[k] = b[0] * k` for k in 1..=n.
    FanDistinct,
    /// `b[k][i] = (b[k - 1][i - 1] + 2 b[k - 1][i] + b[k - 1][i + 1]) / 4`, the ends repeated: a chain of
    /// stencils, which fuses by overlapped tiling.
    Stencil,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Chain => "chain",
            Shape::Fan => "fan",
            Shape::FanDistinct => "fan, distinct",
            Shape::Stencil => "stencil chain",
        }
    }

    /// What node `k` (from 1) reads and computes from `v`, its input's element.
    fn input(self, k: usize) -> usize {
        match self {
            Shape::Chain | Shape::Stencil => k - 1,
            Shape::Fan | Shape::FanDistinct => 0,
        }
    }

    /// Node `k`'s output from its input `from`.
    fn apply(self, k: usize, from: &[f32]) -> Vec<f32> {
        let n = from.len();
        (0..n)
            .map(|i| {
                let v = from[i];
                match self {
                    Shape::Chain => v * 0.5 + 1.0,
                    Shape::Fan => v * 2.0,
                    Shape::FanDistinct => v * k as f32,
                    Shape::Stencil => {
                        (from[i.max(1) - 1] + 2.0 * v + from[(i + 1).min(n - 1)]) * 0.25
                    }
                }
            })
            .collect()
    }

    fn expression(self, k: usize, input: &str) -> String {
        match self {
            Shape::Chain => format!("{input}[i] * 0.5 + 1.0"),
            Shape::Fan => format!("{input}[i] * 2.0"),
            Shape::FanDistinct => format!("{input}[i] * {k}.0"),
            Shape::Stencil => format!(
                "({input}[max(i, 1u) - 1u] + 2.0 * {input}[i] + {input}[min(i + 1u, arrayLength(&{input}) - 1u)]) * 0.25"
            ),
        }
    }
}

fn description(
    shape: Shape,
    nodes: usize,
    fusion: bool,
) -> Result<graph_runtime::GraphDesc, Error> {
    let mut b = GraphBuilder::new(format!(
        "{}{nodes}",
        shape.name().replace(", ", "_").replace(' ', "_")
    ));
    b.input("b0", "f32");
    for k in 1..=nodes {
        b.inout(&format!("b{k}"), "f32");
    }
    for k in 1..=nodes {
        let (input, output) = (format!("b{}", shape.input(k)), format!("b{k}"));
        let code = format!(
            "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let i = gid.x;
    if (i < arrayLength(&{output})) {{ {output}[i] = {}; }}
}}",
            shape.expression(k, &input)
        );
        b.kernel(
            &format!("n{k}"),
            KernelSpec::wgsl(code).read(&input).write(&output),
        );
        if !fusion {
            b.no_fusion(&format!("n{k}"));
        }
    }
    b.build(&LIBRARY)
        .map_err(|e| Error::Gpu(format!("{}: {e}", shape.name())))
}

/// What [`bake`] measured: the first bake's time, the median of the others', the last baked graph, and
/// where the first bake's time went (by span).
struct Bakes {
    first: Duration,
    later: Option<Duration>,
    baked: BakedGraph,
    first_spans: Vec<(&'static str, Duration)>,
}

/// Bakes `desc` `runs` times over `buffers`.
fn bake(
    gpu: &Gpu,
    desc: &graph_runtime::GraphDesc,
    buffers: &[Buffer<f32>],
    runs: usize,
) -> Result<Bakes, Error> {
    let names: Vec<String> = (0..buffers.len()).map(|k| format!("b{k}")).collect();
    let bound: Vec<(&str, &graph_runtime::AnyBuffer)> = names
        .iter()
        .zip(buffers)
        .map(|(n, b)| (n.as_str(), b.as_any()))
        .collect();
    let mut times = Vec::new();
    let mut last = None;
    let mut spans = Vec::new();
    for run in 0..runs.max(1) {
        span_times::take();
        let start = Instant::now();
        let baked = BakedGraph::bake(gpu, desc.clone(), &bound)?;
        times.push(start.elapsed());
        if run == 0 {
            spans = span_times::take();
        }
        last = Some(baked);
    }
    let baked = last.ok_or_else(|| Error::Gpu("no bake".into()))?;
    let first = times.remove(0);
    times.sort();
    Ok(Bakes {
        first,
        later: times.get(times.len() / 2).copied(),
        baked,
        first_spans: spans,
    })
}

/// Replays `baked` once over poisoned outputs and compares every buffer with the CPU's.
fn check(shape: Shape, baked: &mut BakedGraph, buffers: &[Buffer<f32>]) -> Result<(), Error> {
    let input: Vec<f32> = (0..N).map(|i| (i % 97) as f32 * 0.25 - 3.0).collect();
    buffers[0].write(&input)?;
    for b in &buffers[1..] {
        b.write(&vec![f32::NAN; N])?;
    }
    baked.replay_blocking()?;
    let mut expected = vec![input];
    for k in 1..buffers.len() {
        let next = shape.apply(k, &expected[shape.input(k)]);
        expected.push(next);
    }
    for (k, (b, want)) in buffers.iter().zip(&expected).enumerate().skip(1) {
        let got = b.read_blocking()?;
        if let Some(i) = (0..N).find(|&i| (got[i] - want[i]).abs() > 1e-3 * want[i].abs().max(1.0))
        {
            return Err(Error::Gpu(format!(
                "{} of {}: b{k}[{i}] is {}, the CPU says {}",
                shape.name(),
                buffers.len() - 1,
                got[i],
                want[i]
            )));
        }
    }
    Ok(())
}

fn main() -> Result<(), Error> {
    let sizes = args::numbers("--sizes", "100,1000");
    let runs = args::number("--runs", 3).max(1);
    let spans = span_times::install();
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    println!(
        "{N}-element f32 buffers; {runs} bakes of each: the first, and the median of the others; each baked \
         graph's output checked once"
    );
    println!();
    println!(
        "| shape | nodes | fusion | first bake ms | later bakes ms | fused kernels | largest group | declined | checked |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---:|---|");
    let mut breakdowns = Vec::new();
    for shape in [Shape::Chain, Shape::Fan, Shape::FanDistinct, Shape::Stencil] {
        for &nodes in &sizes {
            let buffers: Vec<Buffer<f32>> = (0..=nodes)
                .map(|_| gpu.buffer_zeroed::<f32>(N))
                .collect::<Result<_, _>>()?;
            for fusion in [true, false] {
                let desc = description(shape, nodes, fusion)?;
                let Bakes {
                    first,
                    later,
                    mut baked,
                    first_spans,
                } = bake(&gpu, &desc, &buffers, runs)?;
                let groups = baked.fused().len();
                let largest = baked.fused().iter().map(|g| g.members.len()).max();
                let declined = baked.fusion_declined().len();
                check(shape, &mut baked, &buffers)?;
                let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
                println!(
                    "| {} | {nodes} | {} | {} | {} | {groups} | {} | {declined} | ok |",
                    shape.name(),
                    if fusion { "on" } else { "off" },
                    ms(first),
                    later.map_or("-".into(), ms),
                    largest.map_or("-".into(), |l| l.to_string()),
                );
                let parts: Vec<String> = first_spans
                    .iter()
                    .filter(|(name, _)| *name != "bake")
                    .map(|(name, d)| format!("{name} {}", ms(*d)))
                    .collect();
                breakdowns.push(format!(
                    "| {} | {nodes} | {} | {} | {} |",
                    shape.name(),
                    if fusion { "on" } else { "off" },
                    ms(first),
                    parts.join(", ")
                ));
            }
        }
    }
    if spans {
        println!();
        println!(
            "where each first bake's time went (ms in the runtime's tracing spans, longest first; spans nest):"
        );
        println!();
        println!("| shape | nodes | fusion | first bake ms | spans |");
        println!("|---|---:|---|---:|---|");
        for row in breakdowns {
            println!("{row}");
        }
    }
    Ok(())
}
