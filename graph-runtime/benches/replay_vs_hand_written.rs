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

use graph_runtime::{
    BakedGraph, Buffer, Error, Gpu, GraphBuilder, KernelSpec, LIBRARY, NativeParamsIn, Submission,
    wgpu,
};

/// Elements per buffer.
const N: usize = 64 * 1024;

/// The kernels, with generic names: the same statements as the graphs'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `dst = dst * 0.999 + src`
    Step,
    /// `dst = src * 0.999 + 1`
    Scale,
    /// `dst = a + b`
    Add,
    /// `dst[i] = 0.25 src[i - 1] + 0.5 src[i] + 0.25 src[i + 1]`, zero past the ends
    Stencil,
    /// `dst = dst * params.c + src`, `c` a parameter (0.999 when checked)
    StepParam,
}

const KINDS: [Kind; 5] = [
    Kind::Step,
    Kind::Scale,
    Kind::Add,
    Kind::Stencil,
    Kind::StepParam,
];

impl Kind {
    /// The buffers it reads, by their generic names, then the one it writes.
    fn bindings(self) -> &'static [&'static str] {
        match self {
            Kind::Add => &["a", "b", "dst"],
            _ => &["src", "dst"],
        }
    }

    /// The entry point, over the buffers named in `names` (in the order of [`Kind::bindings`]).
    fn code(self, names: &[&str]) -> String {
        let body = match self {
            Kind::Step => "if (i < arrayLength(&DST)) { DST[i] = DST[i] * 0.999 + SRC[i]; }",
            Kind::StepParam => {
                "if (i < arrayLength(&DST)) { DST[i] = DST[i] * params.c + SRC[i]; }"
            }
            Kind::Scale => "if (i < arrayLength(&DST)) { DST[i] = SRC[i] * 0.999 + 1.0; }",
            Kind::Add => "if (i < arrayLength(&DST)) { DST[i] = A[i] + B[i]; }",
            Kind::Stencil => {
                "let n = arrayLength(&DST);
    if (i >= n) { return; }
    var l = 0.0;
    if (i > 0u) { l = SRC[i - 1u]; }
    var r = 0.0;
    if (i + 1u < n) { r = SRC[i + 1u]; }
    DST[i] = 0.25 * l + 0.5 * SRC[i] + 0.25 * r;"
            }
        };
        let mut body = body.to_string();
        for (generic, name) in self.bindings().iter().zip(names) {
            body = body.replace(&generic.to_uppercase(), name);
        }
        format!(
            "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let i = gid.x;
    {body}
}}"
        )
    }

    /// The whole module the hand-written side compiles.
    fn wgsl(self) -> String {
        let bindings = self.bindings();
        let declarations: String = bindings
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let access = if i + 1 == bindings.len() {
                    "read_write"
                } else {
                    "read"
                };
                format!("@group(0) @binding({i}) var<storage, {access}> {name}: array<f32>;\n")
            })
            .collect();
        let params = match self {
            Kind::StepParam => {
                "struct Params { c: f32 }\n@group(1) @binding(0) var<uniform> params: Params;\n"
            }
            _ => "",
        };
        format!("{declarations}{params}{}", self.code(bindings))
    }
}

/// One node: its kernel, the buffers it reads (besides its output for `Step`) and the one it writes.
struct Node {
    kind: Kind,
    inputs: Vec<usize>,
    output: usize,
}

/// A shape: buffer 0 is `x`; `state` buffers start from data and are updated in place; `outputs` are
/// overwritten; `checked` are compared with the reference.
struct Dag {
    name: &'static str,
    buffers: usize,
    state: Vec<usize>,
    checked: Vec<usize>,
    nodes: Vec<Node>,
    levels: usize,
}

fn chain_dag(name: &'static str, length: usize) -> Dag {
    Dag {
        name,
        buffers: 2,
        state: vec![1],
        checked: vec![1],
        nodes: (0..length)
            .map(|_| Node {
                kind: Kind::Step,
                inputs: vec![0],
                output: 1,
            })
            .collect(),
        levels: length,
    }
}

fn fan_dag() -> Dag {
    Dag {
        name: "fan",
        buffers: 101,
        state: vec![],
        checked: (1..=100).collect(),
        nodes: (1..=100)
            .map(|o| Node {
                kind: Kind::Scale,
                inputs: vec![0],
                output: o,
            })
            .collect(),
        levels: 1,
    }
}

/// `count` chains of `length` side by side, in declaration order chain by chain.
fn chains_dag(name: &'static str, count: usize, length: usize) -> Dag {
    Dag {
        name,
        buffers: count + 1,
        state: (1..=count).collect(),
        checked: (1..=count).collect(),
        nodes: (1..=count)
            .flat_map(|c| {
                (0..length).map(move |_| Node {
                    kind: Kind::Step,
                    inputs: vec![0],
                    output: c,
                })
            })
            .collect(),
        levels: length,
    }
}

/// `count` stencil chains of `length` (even), each between its own two buffers, ending where it started.
fn stencil_dag(name: &'static str, count: usize, length: usize) -> Dag {
    Dag {
        name,
        buffers: 2 * count + 1,
        state: (0..count).map(|c| 1 + 2 * c).collect(),
        checked: (0..count).map(|c| 1 + 2 * c).collect(),
        nodes: (0..count)
            .flat_map(|c| {
                let (a, b) = (1 + 2 * c, 2 + 2 * c);
                (0..length).map(move |k| Node {
                    kind: Kind::Stencil,
                    inputs: vec![if k % 2 == 0 { a } else { b }],
                    output: if k % 2 == 0 { b } else { a },
                })
            })
            .collect(),
        levels: length,
    }
}

/// Buffers 1..=64 the leaves, then each level's sums; the last buffer is the root.
fn tree_dag() -> Dag {
    let mut nodes: Vec<Node> = (1..=64)
        .map(|o| Node {
            kind: Kind::Scale,
            inputs: vec![0],
            output: o,
        })
        .collect();
    let (mut level_start, mut width, mut next) = (1, 64, 65);
    while width > 1 {
        for j in 0..width / 2 {
            nodes.push(Node {
                kind: Kind::Add,
                inputs: vec![level_start + 2 * j, level_start + 2 * j + 1],
                output: next + j,
            });
        }
        level_start = next;
        next += width / 2;
        width /= 2;
    }
    Dag {
        name: "tree",
        buffers: next,
        state: vec![],
        checked: vec![next - 1],
        nodes,
        levels: 7,
    }
}

/// Per-element reference in f64, and the most f32 may differ from it: each operation rounds once (or a
/// multiply-add once when fused), and earlier errors pass through scaled by the operation.
fn reference(dag: &Dag, x: &[f32], state: &[f32]) -> Expected {
    const U: f64 = f32::EPSILON as f64 / 2.0;
    let c = f64::from(0.999f32);
    let mut values: Vec<Vec<f64>> = vec![vec![0.0; N]; dag.buffers];
    let mut bounds: Vec<Vec<f64>> = vec![vec![0.0; N]; dag.buffers];
    values[0] = x.iter().map(|&v| f64::from(v)).collect();
    for &s in &dag.state {
        values[s] = state.iter().map(|&v| f64::from(v)).collect();
    }
    for node in &dag.nodes {
        for i in 0..N {
            let (value, bound) = match node.kind {
                Kind::Step | Kind::StepParam => {
                    let (d, s) = (values[node.output][i], values[node.inputs[0]][i]);
                    let v = d * c + s;
                    (
                        v,
                        c * bounds[node.output][i]
                            + bounds[node.inputs[0]][i]
                            + U * ((d * c).abs() + v.abs()),
                    )
                }
                Kind::Scale => {
                    let s = values[node.inputs[0]][i];
                    let v = s * c + 1.0;
                    (
                        v,
                        c * bounds[node.inputs[0]][i] + U * ((s * c).abs() + v.abs()),
                    )
                }
                Kind::Add => {
                    let (a, b) = (node.inputs[0], node.inputs[1]);
                    let v = values[a][i] + values[b][i];
                    (v, bounds[a][i] + bounds[b][i] + U * v.abs())
                }
                Kind::Stencil => {
                    let s = node.inputs[0];
                    let at = |k: Option<usize>| {
                        k.filter(|&k| k < N)
                            .map_or((0.0, 0.0), |k| (values[s][k], bounds[s][k]))
                    };
                    let (l, c, r) = (at(i.checked_sub(1)), at(Some(i)), at(Some(i + 1)));
                    let v = 0.25 * l.0 + 0.5 * c.0 + 0.25 * r.0;
                    let magnitude = 0.25 * l.0.abs() + 0.5 * c.0.abs() + 0.25 * r.0.abs();
                    (
                        v,
                        0.25 * l.1 + 0.5 * c.1 + 0.25 * r.1 + 3.0 * U * (magnitude + v.abs()),
                    )
                }
            };
            values[node.output][i] = value;
            bounds[node.output][i] = bound * 1.000_001;
        }
    }
    dag.checked
        .iter()
        .map(|&b| (values[b].clone(), bounds[b].clone()))
        .collect()
}

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
        if dag.state.contains(&b) {
            buffer.write(state)?;
        } else {
            buffer.write(&vec![f32::NAN; N])?;
        }
    }
    submit()?.wait(gpu)?;
    for (&b, (exact, bound)) in dag.checked.iter().zip(expected) {
        let got = buffers[b].read_blocking()?;
        for i in 0..N {
            let error = (f64::from(got[i]) - exact[i]).abs();
            if error.is_nan() || error > bound[i] {
                return Err(Error::Gpu(format!(
                    "{} / {side}: buffer {b}[{i}] is {}, the reference {} (bound {:e})",
                    dag.name, got[i], exact[i], bound[i]
                )));
            }
        }
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

/// Per checked buffer: the reference values and the most the GPU's may differ from them.
type Expected = Vec<(Vec<f64>, Vec<f64>)>;

/// The input `x`, the state buffers' starting values, and the reference outputs.
fn inputs(dag: &Dag) -> (Vec<f32>, Vec<f32>, Expected) {
    let x: Vec<f32> = (0..N).map(|i| (i % 97) as f32 * 0.01).collect();
    let state: Vec<f32> = (0..N).map(|i| (i % 13) as f32 * 0.1).collect();
    let expected = reference(dag, &x, &state);
    (x, state, expected)
}

/// The graphs' buffers: `x`, then the others zeroed.
fn buffers_of(gpu: &Gpu, dag: &Dag, x: &[f32]) -> Result<Vec<Buffer<f32>>, Error> {
    let mut buffers = vec![gpu.buffer_from_slice(x)?];
    for _ in 1..dag.buffers {
        buffers.push(gpu.buffer_zeroed::<f32>(N)?);
    }
    Ok(buffers)
}

/// The graph's buffer names: `x`, then `b1`...
fn names_of(dag: &Dag) -> Vec<String> {
    (0..dag.buffers)
        .map(|b| {
            if b == 0 {
                "x".to_string()
            } else {
                format!("b{b}")
            }
        })
        .collect()
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

/// The shape as a graph description: buffer 0 is the input `x`, the others `b1`.. bound from outside;
/// with `fusion` off, every kernel is marked `no_fusion`.
fn graph_of(dag: &Dag, fusion: bool) -> Result<graph_runtime::GraphDesc, Error> {
    let names = names_of(dag);
    let name = |b: usize| names[b].clone();
    let mut builder = GraphBuilder::new(dag.name.replace(' ', "_"));
    if dag.nodes.iter().any(|n| n.kind == Kind::StepParam) {
        builder.param("c", "f32");
    }
    builder.input("x", "f32");
    for b in 1..dag.buffers {
        builder.inout(&name(b), "f32");
    }
    for (k, node) in dag.nodes.iter().enumerate() {
        let names: Vec<String> = node
            .inputs
            .iter()
            .chain([&node.output])
            .map(|&b| name(b))
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut spec = KernelSpec::wgsl(node.kind.code(&refs));
        for input in &refs[..refs.len() - 1] {
            spec = spec.read(input);
        }
        spec = match node.kind {
            Kind::Step | Kind::StepParam => spec.read_write(refs[refs.len() - 1]),
            _ => spec.write(refs[refs.len() - 1]),
        };
        builder.kernel(&format!("n{k}"), spec);
        if !fusion {
            builder.no_fusion(&format!("n{k}"));
        }
    }
    builder
        .build(&LIBRARY)
        .map_err(|e| Error::Gpu(format!("{}: {e}", dag.name)))
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
    let shapes = [
        chain_dag("single", 1),
        chain_dag("chain", 100),
        fan_dag(),
        chains_dag("chains 10x10", 10, 10),
        chains_dag("chains 20x20", 20, 20),
        tree_dag(),
        stencil_dag("stencil chain", 1, 100),
        stencil_dag("stencil 10x10", 10, 10),
    ];
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
