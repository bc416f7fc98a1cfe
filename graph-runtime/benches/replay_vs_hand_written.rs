//! The baked graph against hand-written wgpu, in one run on one device, over 64K-element f32 buffers, for
//! these DAG shapes:
//!
//! - **single**: one kernel, the fixed cost of a replay (submit, wait) with nothing to fuse or order;
//! - **chain**: 100 kernels, each updating `y` from `x` and the old `y` (100 levels);
//! - **fan**: 100 independent kernels, each writing its own buffer from `x` (1 level);
//! - **chains 10x10**, **chains 20x20**: independent chains side by side, each updating its own buffer;
//! - **tree**: a reduction tree, 64 leaves from `x` then pairwise sums down to one root (127 nodes, 7 levels);
//! - **stencil chain**, **stencil 10x10**: the chain shapes with a 3-point stencil (each element from its
//!   neighbours, between two buffers per chain), which the fusion pass runs by overlapped tiling
//!   (`graph_core::stencil`).
//!
//! `cuda_graphs.py` beside this file builds the same shapes with PyTorch and replays them as CUDA Graphs, for
//! the comparison on an NVIDIA GPU.
//!
//! Five sides run each shape, every one with the same WGSL statements (the graph's kernels name their
//! buffers, the hand-written ones bind generic `src`/`a`/`b`/`dst`):
//!
//! - **fused native**: the baked graph's replay, with the fusion pass (pointwise kernels of one extent
//!   merged), through the native recorder (Vulkan command buffers recorded once) where it applies;
//! - **fused portable**: the same through the portable recorder (wgpu passes encoded at each replay);
//! - **native** and **portable**: the same description with every kernel marked `no_fusion`, one dispatch per
//!   node, through each recorder;
//! - **one encoder**: what a careful user writes by hand: pipelines (one per kind of kernel) and bind groups
//!   made once, then per run one encoder, one compute pass with every dispatch in topological order, one
//!   submission (wgpu places its barriers).
//!
//! The graphs are made by the run-time builder from the same node list as the hand-written side (a `graph!`
//! block gives the same description: `examples/tests/front_doors.rs`). Printed per shape and side: the median
//! wall time of one run (submit to finished, by each side's own wait: a replay's `Submission::wait`, which the
//! native recorder ends on a word the GPU writes last, the one encoder's wgpu wait for its submission) and
//! the median CPU time to record and submit it. Before the
//! timing, each side's output is checked once against an f64 reference within the rounding its arithmetic
//! allows, its outputs poisoned first.
//!
//! A second table times the chain with its factor a parameter (`dst = dst * params.c + src`) that changes
//! before every run, and the same with it unchanged, for the two ways the native recorder passes
//! parameters (a uniform buffer written before the replay, or push constants recorded again), against the
//! portable recorder and the one encoder (which writes a uniform buffer before each run).
//!
//! With `--profile DIR`, each shape's fused and unfused graphs are also profiled once (GPU timestamps per
//! dispatch, through the recorder each replays with): the GPU time from the first dispatch's start to the
//! last one's end is printed, and the traces written to `DIR` as Chrome trace JSON.
//!
//! Run: `cargo bench -p graph-runtime --bench replay_vs_hand_written [-- --runs N] [--profile DIR]
//! [--only TEXT]` (default 100 runs; `--only`: the shapes whose name contains TEXT, without the tables after).

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use graph_runtime::{BakedGraph, Buffer, Error, Gpu, NativeParamsIn, Submission, wgpu};

mod shapes;

use shapes::{
    Dag, Expected, KINDS, Kind, N, all_shapes, chain_dag, compare, fresh, graph_of, inputs,
    names_of,
};

/// The hand-written program: buffers, one pipeline per kind, one bind group per node, and a uniform buffer
/// for the parameter with its bind group (group 1 of `StepParam`).
struct HandWritten {
    buffers: Vec<Buffer<f32>>,
    pipelines: Vec<wgpu::ComputePipeline>,
    nodes: Vec<(usize, wgpu::BindGroup)>,
    params: (wgpu::Buffer, wgpu::BindGroup),
}

impl HandWritten {
    fn new(gpu: &Gpu, dag: &Dag, x: &[f32]) -> Result<Self, Error> {
        let device = gpu.device();
        let mut buffers = vec![gpu.buffer_from_slice(x)?];
        for _ in 1..dag.buffers {
            buffers.push(gpu.buffer_zeroed::<f32>(N)?);
        }
        let pipelines: Vec<wgpu::ComputePipeline> = KINDS
            .iter()
            .map(|kind| {
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: None,
                    source: wgpu::ShaderSource::Wgsl(kind.wgsl().into()),
                });
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: None,
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                })
            })
            .collect();
        let nodes = dag
            .nodes
            .iter()
            .map(|node| {
                let p = KINDS.iter().position(|k| *k == node.kind).unwrap_or(0);
                let mut bound: Vec<usize> = node.inputs.clone();
                bound.push(node.output);
                let entries: Vec<wgpu::BindGroupEntry<'_>> = bound
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: buffers[b].wgpu().as_entire_binding(),
                    })
                    .collect();
                let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipelines[p].get_bind_group_layout(0),
                    entries: &entries,
                });
                (p, group)
            })
            .collect();
        let param_pipeline = KINDS
            .iter()
            .position(|k| *k == Kind::StepParam)
            .unwrap_or(0);
        let params = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let params_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipelines[param_pipeline].get_bind_group_layout(1),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: params.as_entire_binding(),
            }],
        });
        Ok(HandWritten {
            buffers,
            pipelines,
            nodes,
            params: (params, params_group),
        })
    }

    /// Every dispatch in one compute pass of one encoder, one submission; the parameter `c`, if given, written
    /// to the uniform buffer first.
    fn one_encoder(&self, gpu: &Gpu, c: Option<f32>) -> wgpu::SubmissionIndex {
        if let Some(c) = c {
            gpu.queue()
                .write_buffer(&self.params.0, 0, bytemuck::bytes_of(&c));
        }
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            let mut current = None;
            for (p, group) in &self.nodes {
                if current != Some(*p) {
                    pass.set_pipeline(&self.pipelines[*p]);
                    if KINDS[*p] == Kind::StepParam {
                        pass.set_bind_group(1, &self.params.1, &[]);
                    }
                    current = Some(*p);
                }
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups((N as u32).div_ceil(64), 1, 1);
            }
        }
        gpu.queue().submit([encoder.finish()])
    }
}

// ---------------------------------------------------------------------------------------------------------
// Measuring and checking.

struct Timing {
    wall: Duration,
    cpu: Duration,
}

/// One run of a side, to wait for: a replay (its own wait, which the native recorder ends by reading a word
/// the GPU writes last) or the hand-written encoder's submission (wgpu's wait).
enum Run {
    Replay(Submission),
    Submitted(wgpu::SubmissionIndex),
}

impl Run {
    fn wait(self, gpu: &Gpu) -> Result<(), Error> {
        match self {
            Run::Replay(submission) => submission.wait().map(drop),
            Run::Submitted(index) => gpu.wait_for(Some(index.into())),
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `runs` runs after 3 warm-up ones; each sample is submit-to-finished wall time and the CPU time of `submit`
/// alone.
fn measure(
    gpu: &Gpu,
    runs: usize,
    mut submit: impl FnMut() -> Result<Run, Error>,
) -> Result<Timing, Error> {
    for _ in 0..3 {
        submit()?.wait(gpu)?;
    }
    let (mut walls, mut cpus) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let start = Instant::now();
        let run = submit()?;
        cpus.push(start.elapsed());
        run.wait(gpu)?;
        walls.push(start.elapsed());
    }
    Ok(Timing {
        wall: median(walls),
        cpu: median(cpus),
    })
}

/// Puts `state` back in the state buffers and NaN in the others (but `x`), then runs `submit` once and
/// compares the checked buffers with the reference.
fn check_once(
    gpu: &Gpu,
    dag: &Dag,
    side: &str,
    buffers: &[&Buffer<f32>],
    state: &[f32],
    expected: &Expected,
    submit: impl FnOnce() -> Result<Run, Error>,
) -> Result<(), Error> {
    for (b, buffer) in buffers.iter().enumerate().skip(1) {
        buffer.write(&fresh(dag, b, state))?;
    }
    submit()?.wait(gpu)?;
    for (&b, reference) in dag.checked.iter().zip(expected) {
        compare(dag, side, b, &buffers[b].read_blocking()?, reference).map_err(Error::Gpu)?;
    }
    Ok(())
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn row(dag: &Dag, side: &str, t: &Timing) {
    let n = dag.nodes.len() as f64;
    println!(
        "| {:<14} | {:>5} | {:>6} | {:<14} | {:>9.1} | {:>7.2} | {:>9.1} | {:>7.2} |",
        dag.name,
        dag.nodes.len(),
        dag.levels,
        side,
        us(t.wall),
        us(t.wall) / n,
        us(t.cpu),
        us(t.cpu) / n,
    );
}

/// The graphs' buffers: `x`, then the others zeroed.
fn buffers_of(gpu: &Gpu, dag: &Dag, x: &[f32]) -> Result<Vec<Buffer<f32>>, Error> {
    let mut buffers = vec![gpu.buffer_from_slice(x)?];
    for _ in 1..dag.buffers {
        buffers.push(gpu.buffer_zeroed::<f32>(N)?);
    }
    Ok(buffers)
}

fn bindings_of<'a>(
    names: &'a [String],
    buffers: &'a [Buffer<f32>],
) -> Vec<(&'a str, &'a graph_runtime::AnyBuffer)> {
    names
        .iter()
        .zip(buffers)
        .map(|(n, b)| (n.as_str(), b.as_any()))
        .collect()
}

/// Runs one shape on every side: checks each, then times each; profiles the graphs into `traces`, if given.
fn shape(gpu: &Gpu, runs: usize, dag: &Dag, traces: Option<&str>) -> Result<[Timing; 5], Error> {
    let (x, state, expected) = inputs(dag);
    let graph_buffers = buffers_of(gpu, dag, &x)?;
    let names = names_of(dag);
    let bindings = bindings_of(&names, &graph_buffers);
    let mut fused = BakedGraph::bake(gpu, graph_of(dag, true)?, &bindings)?;
    let mut unfused = BakedGraph::bake(gpu, graph_of(dag, false)?, &bindings)?;
    let mut fused_portable = BakedGraph::bake(gpu, graph_of(dag, true)?, &bindings)?;
    fused_portable.use_portable_recorder();
    let mut portable = BakedGraph::bake(gpu, graph_of(dag, false)?, &bindings)?;
    portable.use_portable_recorder();
    let hand = HandWritten::new(gpu, dag, &x)?;

    let graph_refs: Vec<&Buffer<f32>> = graph_buffers.iter().collect();
    let hand_refs: Vec<&Buffer<f32>> = hand.buffers.iter().collect();
    let sides = [
        ("fused", &mut fused),
        ("fused portable", &mut fused_portable),
        ("graph", &mut unfused),
        ("portable", &mut portable),
    ];
    for (side, graph) in sides {
        check_once(gpu, dag, side, &graph_refs, &state, &expected, || {
            Ok(Run::Replay(graph.replay()?))
        })?;
    }
    check_once(
        gpu,
        dag,
        "one encoder",
        &hand_refs,
        &state,
        &expected,
        || Ok(Run::Submitted(hand.one_encoder(gpu, None))),
    )?;

    let f = measure(gpu, runs, || Ok(Run::Replay(fused.replay()?)))?;
    let fp = measure(gpu, runs, || Ok(Run::Replay(fused_portable.replay()?)))?;
    let g = measure(gpu, runs, || Ok(Run::Replay(unfused.replay()?)))?;
    let p = measure(gpu, runs, || Ok(Run::Replay(portable.replay()?)))?;
    let o = measure(gpu, runs, || {
        Ok(Run::Submitted(hand.one_encoder(gpu, None)))
    })?;
    let kernels = dag.nodes.len()
        - fused
            .fused()
            .iter()
            .map(|g| g.members.len() - 1)
            .sum::<usize>();
    row(
        dag,
        &format!("fused {} ({kernels} k)", fused.recorder()),
        &f,
    );
    row(dag, "fused portable", &fp);
    row(dag, unfused.recorder(), &g);
    row(dag, "portable", &p);
    row(dag, "one encoder", &o);
    if let Some(dir) = traces {
        let bytes = least_bytes(dag);
        for (side, graph) in [("fused", &mut fused), ("unfused", &mut unfused)] {
            let profile = graph.profile()?;
            // The span, not the sum: natively, the dispatches of one level overlap, and each one's time
            // runs from its level's start.
            let span_ns = profile
                .dispatches
                .iter()
                .map(|d| d.end_ns)
                .fold(0.0, f64::max);
            println!(
                "|   profile: {side} ({}) {:.1} us from the first start to the last end, {} dispatches, \
                 the longest {:.1} us; {bytes} bytes at least, {:.0} GB/s over the span",
                profile.recorder,
                span_ns / 1000.0,
                profile.dispatches.len(),
                profile
                    .dispatches
                    .iter()
                    .map(|d| d.duration_ns())
                    .fold(0.0, f64::max)
                    / 1000.0,
                bytes as f64 / span_ns,
            );
            let file = format!("{dir}/{}-{side}.json", dag.name.replace(' ', "_"));
            std::fs::write(&file, profile.to_chrome_trace())
                .map_err(|e| Error::Gpu(format!("cannot write {file}: {e}")))?;
        }
    }
    Ok([f, fp, g, p, o])
}

/// The least bytes a replay of `dag` moves: each buffer read before anything writes it (the input, and the
/// state a `Step` updates) read once, and each buffer written, written once (every buffer is bound by the
/// caller, so every one written must reach memory).
fn least_bytes(dag: &Dag) -> usize {
    let (mut read, mut written) = (vec![false; dag.buffers], vec![false; dag.buffers]);
    for node in &dag.nodes {
        let in_place = matches!(node.kind, Kind::Step | Kind::StepParam);
        for &b in node.inputs.iter().chain(in_place.then_some(&node.output)) {
            read[b] |= !written[b];
        }
        written[node.output] = true;
    }
    let buffers = read.iter().filter(|&&r| r).count() + written.iter().filter(|&&w| w).count();
    buffers * N * 4
}

/// The chain of `StepParam` (one dispatch per node, no fusion) with `c` changed before every run, then left
/// unchanged: the native recorder with each way of passing parameters, the portable recorder, the one
/// encoder. Each side's output is checked first, with `c` = 0.999.
fn params_chain(gpu: &Gpu, runs: usize) -> Result<(), Error> {
    let mut dag = chain_dag("param chain", 100);
    for node in &mut dag.nodes {
        node.kind = Kind::StepParam;
    }
    let (x, state, expected) = inputs(&dag);
    let graph_buffers = buffers_of(gpu, &dag, &x)?;
    let names = names_of(&dag);
    let bindings = bindings_of(&names, &graph_buffers);
    let graph_refs: Vec<&Buffer<f32>> = graph_buffers.iter().collect();
    let hand = HandWritten::new(gpu, &dag, &x)?;
    let hand_refs: Vec<&Buffer<f32>> = hand.buffers.iter().collect();
    let c = |run: usize| {
        if run.is_multiple_of(2) {
            0.999f32
        } else {
            0.998
        }
    };

    let ways = [
        ("native, buffer", Some(NativeParamsIn::Buffer)),
        ("native, push", Some(NativeParamsIn::PushConstants)),
        ("portable", None),
    ];
    for (side, way) in ways {
        let mut graph = BakedGraph::bake(gpu, graph_of(&dag, false)?, &bindings)?;
        match way {
            Some(params_in) => {
                if let Err(e) = graph.use_native_recorder(params_in) {
                    println!("| {:<14} | {side}: no native recorder here: {e}", dag.name);
                    continue;
                }
            }
            None => graph.use_portable_recorder(),
        }
        graph.set_param("c", c(0))?;
        check_once(gpu, &dag, side, &graph_refs, &state, &expected, || {
            Ok(Run::Replay(graph.replay()?))
        })?;
        let mut run = 0;
        let changing = measure(gpu, runs, || {
            run += 1;
            graph.set_param("c", c(run))?;
            Ok(Run::Replay(graph.replay()?))
        })?;
        let unchanged = measure(gpu, runs, || Ok(Run::Replay(graph.replay()?)))?;
        row(&dag, &format!("{side}, new c"), &changing);
        row(&dag, &format!("{side}, same c"), &unchanged);
    }
    check_once(
        gpu,
        &dag,
        "one encoder",
        &hand_refs,
        &state,
        &expected,
        || Ok(Run::Submitted(hand.one_encoder(gpu, Some(c(0))))),
    )?;
    let mut run = 0;
    let changing = measure(gpu, runs, || {
        run += 1;
        Ok(Run::Submitted(hand.one_encoder(gpu, Some(c(run)))))
    })?;
    row(&dag, "one encoder, new c", &changing);
    Ok(())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(100);
    let traces = args
        .iter()
        .position(|a| a == "--profile")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    println!(
        "{N}-element f32 buffers; medians of {runs} runs after 3 warm-up runs; every side's output checked \
         against an f64 reference first; `fused (k)`: the kernels the fused graph dispatches"
    );
    println!();
    println!(
        "| shape          | nodes | levels | side           |   wall us | us/node |    CPU us | us/node |"
    );
    println!(
        "|----------------|------:|-------:|----------------|----------:|--------:|----------:|--------:|"
    );
    let shapes = all_shapes();
    // `--only TEXT`: the shapes whose name contains it, and nothing else.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let mut summary = Vec::new();
    for dag in shapes
        .iter()
        .filter(|d| only.is_none_or(|o| d.name.contains(o)))
    {
        summary.push((dag.name, shape(&gpu, runs, dag, traces)?));
    }
    if only.is_some() {
        return Ok(());
    }

    println!();
    println!("a parameter changed before every run, or not:");
    println!();
    println!(
        "| shape          | nodes | levels | side           |   wall us | us/node |    CPU us | us/node |"
    );
    println!(
        "|----------------|------:|-------:|----------------|----------:|--------:|----------:|--------:|"
    );
    params_chain(&gpu, runs)?;

    println!();
    println!("against one encoder (below 1: faster than the hand-written encoder):");
    for (name, [f, fp, g, p, o]) in summary {
        let wall = |a: &Timing| a.wall.as_secs_f64() / o.wall.as_secs_f64();
        println!(
            "  {name:<14} wall: fused native {:.2}x, fused portable {:.2}x, native {:.2}x, portable {:.2}x",
            wall(&f),
            wall(&fp),
            wall(&g),
            wall(&p)
        );
    }
    Ok(())
}
