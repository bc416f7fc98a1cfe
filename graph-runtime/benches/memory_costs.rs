//! What transient memory saves and costs: a pipeline of stages through graph-owned buffers, baked with the
//! memory plan (buffers that never live at one step share heaps) and with every graph-owned buffer marked
//! `no_alias` (each its own memory, as before the plan), in one process on one device: the bytes each
//! allocates for its own buffers, and the median wall time of replays (submitted and waited for), the two
//! interleaved in rounds. Each stage is its own kernel (`no_fusion`: fused, the intermediates would live in
//! registers and take no memory at all), and each side's output is checked exactly against the CPU before
//! it is timed. Then the time to plan a pipeline of 5000 stages (lifetimes, placement, barriers) on the CPU.
//!
//! `cargo bench -p graph-runtime --bench memory_costs -- [--stages 100] [--lens 65536,1048576] [--runs 200]
//! [--rounds 2] [--plan-stages 5000]`

#![forbid(unsafe_code)]

#[path = "common/args.rs"]
mod args;

use std::time::Instant;

use graph_runtime::desc::GraphDesc;
use graph_runtime::memory::{add_alias_hazards, plan_memory};
use graph_runtime::{BakedGraph, Error, GraphBuilder, KernelSpec, LIBRARY};

/// `dst[i] = src[min(i + 1, n - 1)] + 1`: exact in `f32` for the small integers the input holds.
fn stage(src: &str, dst: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(256)
         fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{
             let i = gid.x + gid.y * groups.x * 256u;
             let n = arrayLength(&{dst});
             if (i < n) {{ {dst}[i] = {src}[min(i + 1u, n - 1u)] + 1.0; }}
         }}"
    ))
    .read(src)
    .write(dst)
    .threads(&[&format!("{dst}.len()")])
}

/// `input -> t1 -> .. -> t{stages - 1} -> output`, the `t`s graph-owned of `len` elements.
fn pipeline(stages: usize, len: usize, apart: bool) -> Result<GraphDesc, Error> {
    let mut b = GraphBuilder::new("Pipeline");
    b.input("input", "f32").output("output", "f32");
    let name = |i: usize| match i {
        0 => "input".to_string(),
        i if i == stages => "output".to_string(),
        i => format!("t{i}"),
    };
    for i in 1..stages {
        b.owned(&name(i), "f32", len as u64);
        if apart {
            b.no_alias(&name(i));
        }
    }
    for i in 1..=stages {
        let node = format!("k{i}");
        b.kernel(&node, stage(&name(i - 1), &name(i)));
        b.no_fusion(&node);
    }
    b.build(&LIBRARY).map_err(|e| Error::Gpu(e.to_string()))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Error> {
    let stages = args::number("--stages", 100);
    let lens = args::numbers("--lens", "65536,1048576");
    let runs = args::number("--runs", 200);
    let rounds = args::number("--rounds", 2);
    let plan_stages = args::number("--plan-stages", 5000);
    let gpu = graph_runtime::Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    println!(
        "a pipeline of {stages} stages, each its own kernel; wall time of a replay submitted and waited for, \
         median of {runs}"
    );
    println!();
    println!("| elements a buffer | side | graph-owned bytes | heaps | round | replay wall, us |");
    println!("|---:|---|---:|---:|---:|---:|");
    for len in lens {
        measure(&gpu, stages, len, runs, rounds)?;
    }

    // Planning alone, on the CPU: what bake adds for the plan of a long pipeline.
    let desc = pipeline(plan_stages, 1024, false)?;
    let lens = vec![1024u32; desc.buffers.len()];
    let bytes = vec![4096u64; desc.buffers.len()];
    let mut times = Vec::new();
    let mut heap = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let mut plan = graph_runtime::pipeline::plan(&desc, &lens)
            .map_err(|e| Error::Gpu(format!("{e:?}")))?;
        let memory = plan_memory(&desc, &plan, &bytes, &[], 256, true);
        add_alias_hazards(&mut plan, &desc, &memory);
        times.push(start.elapsed().as_secs_f64() * 1e3);
        heap = memory.heap_bytes;
    }
    println!();
    println!(
        "planning {plan_stages} stages ({} graph-owned buffers): the plan, lifetimes, placement and barriers in \
         {:.1} ms (median of 5); heaps of {heap} bytes",
        plan_stages - 1,
        median(times)
    );
    Ok(())
}

/// Both sides over buffers of `len` elements: checked, then timed in `rounds` interleaved rounds.
fn measure(
    gpu: &graph_runtime::Gpu,
    stages: usize,
    len: usize,
    runs: usize,
    rounds: usize,
) -> Result<(), Error> {
    let values: Vec<f32> = (0..len).map(|i| (i % 1000) as f32).collect();
    let want: Vec<f32> = (0..len)
        .map(|i| values[(i + stages).min(len - 1)] + stages as f32)
        .collect();
    let input = gpu.buffer_from_slice(&values)?;
    let output = gpu.buffer_from_slice(&vec![0.0f32; len])?;
    let mut sides = Vec::new();
    for apart in [false, true] {
        let desc = pipeline(stages, len, apart)?;
        let graph = BakedGraph::bake(
            gpu,
            desc,
            &[("input", input.as_any()), ("output", output.as_any())],
        )?;
        let label = if apart {
            "each buffer apart (no_alias)"
        } else {
            "memory plan"
        };
        sides.push((label, graph));
    }
    for (label, graph) in &mut sides {
        output.write(&vec![f32::NAN; len])?;
        graph.replay_blocking()?;
        let got = output.read_blocking()?;
        if let Some(i) = (0..len).find(|&i| got[i] != want[i]) {
            return Err(Error::Gpu(format!(
                "{label}: output[{i}] is {}, the CPU says {}",
                got[i], want[i]
            )));
        }
    }
    for round in 0..rounds {
        for (label, graph) in &mut sides {
            for _ in 0..20 {
                graph.replay_blocking()?;
            }
            let mut walls = Vec::with_capacity(runs);
            for _ in 0..runs {
                let start = Instant::now();
                graph.replay_blocking()?;
                walls.push(start.elapsed().as_secs_f64() * 1e6);
            }
            println!(
                "| {len} | {label} | {} | {} | {round} | {:.1} |",
                graph.owned_bytes(),
                graph.memory_plan().heaps.len(),
                median(walls)
            );
        }
    }

    Ok(())
}
