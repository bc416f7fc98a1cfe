//! Replay against eager wgpu, in one run on one device: a 100-node dependent chain and a 100-node independent
//! fan over 64K-element f32 buffers.
//!
//! Eager is what a user writes by hand: pipelines and bind groups made once, then per node an encoder, a
//! compute pass, a dispatch and a submission. Replay is the baked graph: one command buffer, one submission.
//! Printed per shape: the median wall time of one run (submit to finished), the median CPU time to record and
//! submit it, and eager/replay ratios.
//!
//! Run: `cargo bench -p graph-runtime --bench replay_vs_eager` (`-- --runs N` to change the sample count).

use std::time::{Duration, Instant};

use graph_runtime::{Error, Gpu, graph, wgpu};

const N: usize = 64 * 1024;

/// One element-wise step; the same WGSL for both sides.
const STEP: &str = "
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&dst)) { dst[i] = src[i] * 0.999 + 1.0; }
}";

macro_rules! chain_graph {
    ($($k:ident)*) => {
        graph! {
            /// 100 kernels, each updating `y` from `x` and the old `y`: a dependent chain.
            graph Chain {
                buffers { x: [f32] = input, y: [f32] = inout }
                $(
                    kernel $k(x: read, y: read_write) {
                        @compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            let i = gid.x;
                            if (i < arrayLength(&y)) { y[i] = x[i] * 0.999 + y[i]; }
                        }
                    }
                )*
            }
        }
    };
}

macro_rules! fan_graph {
    ($(($k:ident, $o:ident))*) => {
        graph! {
            /// 100 kernels, each reading `x` and writing its own buffer: no edges at all.
            graph Fan {
                buffers { x: [f32] = input, $( $o: [f32; 65536], )* }
                $(
                    kernel $k(x: read, $o: write) {
                        @compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            let i = gid.x;
                            if (i < arrayLength(&$o)) { $o[i] = x[i] * 0.999 + 1.0; }
                        }
                    }
                )*
            }
        }
    };
}

chain_graph!(k0 k1 k2 k3 k4 k5 k6 k7 k8 k9 k10 k11 k12 k13 k14 k15 k16 k17 k18 k19 k20 k21 k22 k23 k24 k25 k26 k27 k28 k29 k30 k31 k32 k33 k34 k35 k36 k37 k38 k39 k40 k41 k42 k43 k44 k45 k46 k47 k48 k49 k50 k51 k52 k53 k54 k55 k56 k57 k58 k59 k60 k61 k62 k63 k64 k65 k66 k67 k68 k69 k70 k71 k72 k73 k74 k75 k76 k77 k78 k79 k80 k81 k82 k83 k84 k85 k86 k87 k88 k89 k90 k91 k92 k93 k94 k95 k96 k97 k98 k99);
fan_graph!((k0, o0)(k1, o1)(k2, o2)(k3, o3)(k4, o4)(k5, o5)(k6, o6)(
    k7, o7
)(k8, o8)(k9, o9)(k10, o10)(k11, o11)(k12, o12)(k13, o13)(
    k14, o14
)(k15, o15)(k16, o16)(k17, o17)(k18, o18)(k19, o19)(k20, o20)(
    k21, o21
)(k22, o22)(k23, o23)(k24, o24)(k25, o25)(k26, o26)(k27, o27)(
    k28, o28
)(k29, o29)(k30, o30)(k31, o31)(k32, o32)(k33, o33)(k34, o34)(
    k35, o35
)(k36, o36)(k37, o37)(k38, o38)(k39, o39)(k40, o40)(k41, o41)(
    k42, o42
)(k43, o43)(k44, o44)(k45, o45)(k46, o46)(k47, o47)(k48, o48)(
    k49, o49
)(k50, o50)(k51, o51)(k52, o52)(k53, o53)(k54, o54)(k55, o55)(
    k56, o56
)(k57, o57)(k58, o58)(k59, o59)(k60, o60)(k61, o61)(k62, o62)(
    k63, o63
)(k64, o64)(k65, o65)(k66, o66)(k67, o67)(k68, o68)(k69, o69)(
    k70, o70
)(k71, o71)(k72, o72)(k73, o73)(k74, o74)(k75, o75)(k76, o76)(
    k77, o77
)(k78, o78)(k79, o79)(k80, o80)(k81, o81)(k82, o82)(k83, o83)(
    k84, o84
)(k85, o85)(k86, o86)(k87, o87)(k88, o88)(k89, o89)(k90, o90)(
    k91, o91
)(k92, o92)(k93, o93)(k94, o94)(k95, o95)(k96, o96)(k97, o97)(
    k98, o98
)(k99, o99));

/// The hand-written eager version: `pairs[i]` is node i's (src, dst).
struct Eager {
    pipeline: wgpu::ComputePipeline,
    groups: Vec<wgpu::BindGroup>,
}

impl Eager {
    fn new(gpu: &Gpu, pairs: &[(&wgpu::Buffer, &wgpu::Buffer)]) -> Self {
        let device = gpu.device();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("step"),
            source: wgpu::ShaderSource::Wgsl(STEP.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("step"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        let groups = pairs
            .iter()
            .map(|(src, dst)| {
                device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: src.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: dst.as_entire_binding(),
                        },
                    ],
                })
            })
            .collect();
        Eager { pipeline, groups }
    }

    /// One submission per node; returns the last one.
    fn run(&self, gpu: &Gpu) -> wgpu::SubmissionIndex {
        let mut last = None;
        for group in &self.groups {
            let mut encoder = gpu.device().create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&self.pipeline);
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups((N as u32).div_ceil(64), 1, 1);
            }
            last = Some(gpu.queue().submit([encoder.finish()]));
        }
        last.expect("at least one node")
    }
}

struct Sample {
    wall: Duration,
    cpu: Duration,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs `submit` `runs` times after a warm-up; each sample is submit-to-finished wall time and the CPU time
/// of `submit` alone.
fn measure(
    gpu: &Gpu,
    runs: usize,
    mut submit: impl FnMut() -> Result<Option<wgpu::SubmissionIndex>, Error>,
) -> Result<(Duration, Duration), Error> {
    for _ in 0..3 {
        let s = submit()?;
        gpu.wait_for(s)?;
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let s = submit()?;
        let cpu = start.elapsed();
        gpu.wait_for(s)?;
        samples.push(Sample {
            wall: start.elapsed(),
            cpu,
        });
    }
    Ok((
        median(samples.iter().map(|s| s.wall).collect()),
        median(samples.iter().map(|s| s.cpu).collect()),
    ))
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn report(shape: &str, eager: (Duration, Duration), replay: (Duration, Duration)) {
    println!(
        "{shape:<6} eager {:>9.1} us wall {:>8.1} us cpu | replay {:>9.1} us wall {:>8.1} us cpu | eager/replay wall {:>5.2}x cpu {:>5.2}x",
        us(eager.0),
        us(eager.1),
        us(replay.0),
        us(replay.1),
        eager.0.as_secs_f64() / replay.0.as_secs_f64(),
        eager.1.as_secs_f64() / replay.1.as_secs_f64(),
    );
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(50);
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    println!(
        "100 nodes over {N}-element f32 buffers, median of {runs} runs (after 3 warm-up runs)"
    );

    let data: Vec<f32> = (0..N).map(|i| (i % 97) as f32 * 0.01).collect();
    let x = gpu.buffer_from_slice(&data)?;

    // Chain: every node updates y from x.
    let y = gpu.buffer_from_slice(&data)?;
    let eager_y = gpu.buffer_from_slice(&data)?;
    let chain_pairs: Vec<(&wgpu::Buffer, &wgpu::Buffer)> =
        (0..100).map(|_| (x.wgpu(), eager_y.wgpu())).collect();
    let eager = Eager::new(&gpu, &chain_pairs);
    let mut chain = Chain::bake(&gpu, ChainBuffers { x: &x, y: &y })?;
    let e = measure(&gpu, runs, || Ok(Some(eager.run(&gpu))))?;
    let r = measure(&gpu, runs, || Ok(chain.replay()?.into_index()))?;
    report("chain", e, r);

    // Fan: every node writes its own buffer from x.
    let outs: Vec<graph_runtime::Buffer<f32>> = (0..100)
        .map(|_| gpu.buffer_zeroed::<f32>(N))
        .collect::<Result<_, _>>()?;
    let fan_pairs: Vec<(&wgpu::Buffer, &wgpu::Buffer)> =
        outs.iter().map(|o| (x.wgpu(), o.wgpu())).collect();
    let eager = Eager::new(&gpu, &fan_pairs);
    let mut fan = Fan::bake(&gpu, FanBuffers { x: &x })?;
    let e = measure(&gpu, runs, || Ok(Some(eager.run(&gpu))))?;
    let r = measure(&gpu, runs, || Ok(fan.replay()?.into_index()))?;
    report("fan", e, r);
    Ok(())
}
