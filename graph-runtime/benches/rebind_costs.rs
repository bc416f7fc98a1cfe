//! What an update costs through the recorder a graph replays with, on a small Jacobi-like graph (cuda-samples'
//! `jacobiCudaGraphs` rebinds its two iterates every iteration): `step` computes `x_new` from `x` over a
//! dense `n x n` system, `change` the element-wise change, `scale` a pointwise kernel after it. Each update
//! is timed alone (the replay after it is waited for outside the timing, so no GPU work is counted):
//!
//! - **rebind, swapped**: `x` and `x_new` exchanged, as the solver does every iteration;
//! - **rebind, the same buffers**: nothing changes;
//! - **set_dispatch**: `change`'s size set to its own value again;
//! - **update(), one kernel's code changed**: `scale`'s factor changed and back, by whole-graph updates.
//!
//! The recorder is the environment's (`GRAPH_RUNTIME_RECORDER=portable` for the portable one):
//!
//! ```text
//! cargo bench -p graph-runtime --bench rebind_costs [-- --runs N]
//! GRAPH_RUNTIME_RECORDER=portable cargo bench -p graph-runtime --bench rebind_costs [-- --runs N]
//! ```

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use graph_runtime::desc::OpDesc;
use graph_runtime::{AnyBuffer, BakedGraph, Dispatch, Error, Gpu, UpdateReport, graph};

/// The system's size.
const N: u32 = 256;

graph! {
    /// One Jacobi iteration of `a x = rhs`, the change it made, halved.
    graph Jacobi {
        params { n: u32 }
        buffers { a: [f32] = input, rhs: [f32] = input, x: [f32] = input, x_new: [f32] = output, delta: [f32] = output }
        kernel step(a: read, rhs: read, x: read, x_new: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                let n = params.n;
                if (i >= n) { return; }
                var sum = 0.0;
                for (var j = 0u; j < n; j++) {
                    if (j != i) { sum += a[i * n + j] * x[j]; }
                }
                x_new[i] = (rhs[i] - sum) / a[i * n + i];
            }
        }
        kernel change(x_new: read, x: read, delta: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { delta[gid.x] = abs(x_new[gid.x] - x[gid.x]); }
            }
        }
        kernel scale(delta: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&delta)) { delta[gid.x] = delta[gid.x] * 0.5; }
            }
        }
    }
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(50);
    let gpu = Gpu::new_blocking()?;
    let n = N as usize;
    // Diagonally dominant: the iteration converges.
    let a: Vec<f32> = (0..n * n)
        .map(|k| if k / n == k % n { 2.0 * N as f32 } else { 1.0 })
        .collect();
    let (a, rhs) = (
        gpu.buffer_from_slice(&a)?,
        gpu.buffer_from_slice(&vec![1.0f32; n])?,
    );
    let (x, x_new, delta) = (
        gpu.buffer_zeroed::<f32>(n)?,
        gpu.buffer_zeroed::<f32>(n)?,
        gpu.buffer_zeroed::<f32>(n)?,
    );
    let buffers = |x, x_new| JacobiBuffers {
        a: &a,
        rhs: &rhs,
        x,
        x_new,
        delta: &delta,
    };
    let mut g = Jacobi::bake(&gpu, buffers(&x, &x_new))?;
    g.params_mut().n = N;
    g.replay_blocking()?;
    println!("adapter: {}", gpu.summary());
    println!(
        "recorder: {}; medians (and means) of {runs} updates, each followed by a waited replay",
        g.untyped().recorder()
    );
    println!();
    println!("| update | median | mean | last report |");
    println!("|---|---:|---:|---|");
    row("rebind, swapped", runs, |i| {
        let (from, to) = if i.is_multiple_of(2) {
            (&x_new, &x)
        } else {
            (&x, &x_new)
        };
        let timed = time(|| g.rebind(buffers(from, to)))?;
        g.replay_blocking()?;
        Ok(timed)
    })?;
    // Bound as the last swap left them.
    let (x_now, x_new_now) = if runs.is_multiple_of(2) {
        (&x, &x_new)
    } else {
        (&x_new, &x)
    };
    row("rebind, the same buffers", runs, |_| {
        let timed = time(|| g.rebind(buffers(x_now, x_new_now)))?;
        g.replay_blocking()?;
        Ok(timed)
    })?;
    row("set_dispatch", runs, |_| {
        let timed = time(|| g.set_dispatch(JacobiKernel::Change, Dispatch::Threads([N, 1, 1])))?;
        g.replay_blocking()?;
        Ok(timed)
    })?;
    // `scale`'s factor changed, and back, by whole-graph updates (of the untyped graph).
    let halved = Jacobi::DESCRIPTION.clone();
    let mut quartered = halved.clone();
    for node in quartered.nodes.to_mut() {
        if let (OpDesc::Kernel(k), "scale") = (&mut node.op, &*node.name) {
            k.source = k.source.replace("* 0.5", "* 0.25").into();
        }
    }
    let bound: [(&str, &AnyBuffer); 5] = [
        ("a", a.as_any()),
        ("rhs", rhs.as_any()),
        ("x", x.as_any()),
        ("x_new", x_new.as_any()),
        ("delta", delta.as_any()),
    ];
    let mut untyped = BakedGraph::bake(&gpu, halved.clone(), &bound)?;
    untyped.set_param("n", N)?;
    row("update(), one kernel's code changed", runs, |i| {
        let desc = if i.is_multiple_of(2) {
            &quartered
        } else {
            &halved
        };
        let timed = time(|| untyped.update(desc.clone()))?;
        untyped.replay_blocking()?;
        Ok(timed)
    })?;
    Ok(())
}

/// The time `update` takes, and its report.
fn time(
    update: impl FnOnce() -> Result<UpdateReport, Error>,
) -> Result<(Duration, UpdateReport), Error> {
    let start = Instant::now();
    let report = update()?;
    Ok((start.elapsed(), report))
}

/// Runs `run` `runs` times (with the run's index; it returns an update's time and report) and prints a row.
fn row(
    name: &str,
    runs: usize,
    mut run: impl FnMut(usize) -> Result<(Duration, UpdateReport), Error>,
) -> Result<(), Error> {
    let mut times = Vec::with_capacity(runs);
    let mut last = UpdateReport::default();
    for i in 0..runs {
        let (time, report) = run(i)?;
        times.push(time);
        last = report;
    }
    let mean = times.iter().sum::<Duration>() / runs.max(1) as u32;
    times.sort();
    let median = times.get(runs / 2).copied().unwrap_or_default();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "| {name} | {:.1} us | {:.1} us | {last:?} |",
        us(median),
        us(mean)
    );
    Ok(())
}
