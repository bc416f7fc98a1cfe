//! # 04 — interop: a wgpu library inside a graph
//!
//! An interop task (Codeplay's `interop_task`) is a node whose work is recorded by your own wgpu code: at each
//! replay its closure gets the device, the queue, the command encoder of its GPU partition and the wgpu
//! buffers it declared, and records into that encoder, in order with the graph's own kernels (ordered, like
//! every node, by the accesses it declares). This is how a wgpu library the graph knows nothing about
//! joins it.
//!
//! Here the "library" is [`Softsign`], a small wgpu component with its own pipeline, bind groups and
//! dispatch: `y = x / (1 + |x|)`. The graph scales the input, hands it to the library, and adds a bias to the
//! library's output, in one submission per replay. The result is checked against the CPU.
//!
//! Run it with `cargo run --release -p examples --bin 04_interop`.

#![forbid(unsafe_code)]

use examples::Result;
use graph_runtime::{Gpu, graph, wgpu};

graph! {
    /// scaled = a * x; softsign by the library; out = softsign + b.
    pub graph WithLibrary {
        params { a: f32, b: f32, n: u32 }
        buffers {
            x: [f32] = input,
            scaled: [f32] = output,
            squashed: [f32] = output,
            out: [f32] = output,
        }
        kernel scale(x: read, scaled: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { scaled[gid.x] = params.a * x[gid.x]; }
            }
        }
        // The library's node: it reads `scaled` and writes `squashed`, which orders it after `scale` and
        // before `bias`.
        interop softsign(scaled: read, squashed: write);
        kernel bias(squashed: read, out: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { out[gid.x] = squashed[gid.x] + params.b; }
            }
        }
    }
}

/// A wgpu component written without any knowledge of graphs: `output[i] = input[i] / (1 + |input[i]|)`.
struct Softsign {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl Softsign {
    fn new(device: &wgpu::Device) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("softsign"),
            source: wgpu::ShaderSource::Wgsl(
                "@group(0) @binding(0) var<storage, read> input: array<f32>;
                 @group(0) @binding(1) var<storage, read_write> output: array<f32>;
                 @compute @workgroup_size(64)
                 fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                     let i = gid.x;
                     if (i < arrayLength(&output)) { output[i] = input[i] / (1.0 + abs(input[i])); }
                 }"
                .into(),
            ),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("softsign"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        Softsign { pipeline, layout }
    }

    /// Records the component's work into `encoder`.
    fn record(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        input: &wgpu::Buffer,
        output: &wgpu::Buffer,
    ) {
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("softsign"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: input.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: output.as_entire_binding(),
                },
            ],
        });
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &group, &[]);
        let elements = (output.size() / 4) as u32;
        pass.dispatch_workgroups(elements.div_ceil(64), 1, 1);
    }
}

const N: usize = 10_000;

fn main() -> Result<()> {
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    let xs: Vec<f32> = (0..N)
        .map(|i| ((i * 7919) % 2001) as f32 / 100.0 - 10.0)
        .collect();
    let x = gpu.buffer_from_slice(&xs)?;
    let [scaled, squashed, out] = [
        gpu.buffer_from_slice(&[f32::NAN; N])?,
        gpu.buffer_from_slice(&[f32::NAN; N])?,
        gpu.buffer_from_slice(&[f32::NAN; N])?,
    ];
    let mut graph = WithLibrary::bake(
        &gpu,
        WithLibraryBuffers {
            x: &x,
            scaled: &scaled,
            squashed: &squashed,
            out: &out,
        },
    )?;
    graph.check_fused(WithLibrary::FUSED)?;
    let library = Softsign::new(gpu.device());
    graph.on_interop(WithLibraryInterop::Softsign, move |ctx| {
        let (input, output) = (ctx.buffer("scaled")?, ctx.buffer("squashed")?);
        let device = ctx.device().clone();
        library.record(&device, ctx.encoder(), &input, &output);
        Ok(())
    })?;
    for (a, b) in [(0.5f32, 1.0f32), (2.0, -0.25)] {
        *graph.params_mut() = WithLibraryParams::new(a, b, N as u32);
        graph.replay()?.wait()?;
        let got = out.read_blocking()?;
        // Each step rounds as the CPU does (the GPU's division may be off by a little more: 2.5 ulp in WGSL).
        for (i, (&g, &x)) in got.iter().zip(&xs).enumerate() {
            let s = a * x;
            let want = s / (1.0 + s.abs()) + b;
            let bound = 4.0 * f32::EPSILON * (want.abs() + b.abs() + 1.0);
            if (g - want).abs() > bound || g.is_nan() {
                return Err(
                    format!("out[{i}] = {g}, the CPU says {want} (a = {a}, b = {b})").into(),
                );
            }
        }
        println!(
            "a = {a}, b = {b}: {N} elements match the CPU (scale -> softsign by the library -> bias)"
        );
    }
    println!("ok: the library's work ran inside the graph's replay, in order with its kernels");
    Ok(())
}
