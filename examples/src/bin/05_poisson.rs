//! # 05_poisson: an iterative solver that decides on the GPU when to stop
//!
//! Solves the Poisson problem `-Δu = 1` on the unit square (`u = 0` on the boundary) on an `n x n` grid by
//! Jacobi iteration, in one replay and one submission: a `repeat .. while` block of two Jacobi sweeps, the
//! largest change of the second sweep (reduced on the GPU), and a one-invocation kernel that clears the
//! block's flag once that change is below the tolerance. No iteration goes back to the host: after the flag
//! clears, the remaining runs of the block are skipped on the GPU (each is the block's gate and empty
//! indirect dispatches). The result is checked against the same iteration on the CPU, and drawn into
//! `out/poisson.png`. It also measures what a skipped run costs.
//!
//! ```text
//! cargo run --release -p examples --bin 05_poisson
//! ```

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use examples::{Result, inferno, median, out_dir, save_rgb_png};
use graph_runtime::{BakedGraph, Gpu, GraphBuilder, KernelSpec, LIBRARY, graph};

/// Grid points per side.
const N: usize = 32;
/// Stop when a sweep changes no point by this much.
const TOLERANCE: f32 = 1e-7;
/// The most runs of the block (two sweeps each) one replay makes.
const MAX_RUNS: u32 = 3000;

graph! {
    /// Jacobi sweeps for `-Δu = f` with `u = 0` outside the `n x n` grid, until a sweep changes no point by
    /// `params.tol` or more, at most 3000 times two sweeps.
    graph Poisson {
        params { n: u32, tol: f32 }
        buffers {
            f: [f32] = input,
            u: [f32] = inout,
            v: [f32] = output,       // the other half of each pair of sweeps
            sweeps: [u32; 1] = output,
            changes: [f32; 256],     // the largest change, per workgroup
            going: [u32; 1],         // the block's flag: 0 once converged
        }
        fill start(going = 1u);
        fill zero(sweeps = 0u);
        repeat solve(3000, while: going) {
            // Two sweeps of one WGSL: an inline kernel's bindings are its buffers' names, so `u -> v` and
            // `v -> u` are two kernels.
            kernel sweep_uv(u: read, f: read, v: write) threads(params.n, params.n) {
                fn at(x: i32, y: i32) -> f32 {
                    let n = i32(params.n);
                    if (x < 0 || y < 0 || x >= n || y >= n) { return 0.0; }
                    return u[u32(y * n + x)];
                }
                @compute @workgroup_size(8, 8)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x >= params.n || gid.y >= params.n) { return; }
                    let x = i32(gid.x);
                    let y = i32(gid.y);
                    let h = 1.0 / f32(params.n + 1u);
                    let i = gid.y * params.n + gid.x;
                    v[i] = (at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1) + h * h * f[i]) * 0.25;
                }
            }
            kernel sweep_vu(v: read, f: read, u: write) threads(params.n, params.n) {
                fn at(x: i32, y: i32) -> f32 {
                    let n = i32(params.n);
                    if (x < 0 || y < 0 || x >= n || y >= n) { return 0.0; }
                    return v[u32(y * n + x)];
                }
                @compute @workgroup_size(8, 8)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x >= params.n || gid.y >= params.n) { return; }
                    let x = i32(gid.x);
                    let y = i32(gid.y);
                    let h = 1.0 / f32(params.n + 1u);
                    let i = gid.y * params.n + gid.x;
                    u[i] = (at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1) + h * h * f[i]) * 0.25;
                }
            }
            kernel change(u: read, v: read, changes: write) workgroups(256) {
                var<workgroup> largest: array<f32, 64>;
                @compute @workgroup_size(64)
                fn main(
                    @builtin(local_invocation_id) lid: vec3<u32>,
                    @builtin(workgroup_id) wid: vec3<u32>,
                ) {
                    var m = 0.0;
                    for (var i = wid.x * 64u + lid.x; i < arrayLength(&u); i += 256u * 64u) {
                        m = max(m, abs(u[i] - v[i]));
                    }
                    largest[lid.x] = m;
                    workgroupBarrier();
                    for (var half = 32u; half > 0u; half = half / 2u) {
                        if (lid.x < half) { largest[lid.x] = max(largest[lid.x], largest[lid.x + half]); }
                        workgroupBarrier();
                    }
                    if (lid.x == 0u) { changes[wid.x] = largest[0]; }
                }
            }
            kernel decide(changes: read, going: write, sweeps: read_write) workgroups(1) {
                @compute @workgroup_size(1)
                fn main() {
                    var m = 0.0;
                    for (var i = 0u; i < 256u; i++) { m = max(m, changes[i]); }
                    going[0] = select(0u, 1u, m >= params.tol);
                    sweeps[0] = sweeps[0] + 2u;
                }
            }
        }
    }
}

fn main() -> Result<()> {
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    let f_host = vec![1.0f32; N * N];
    let f = gpu.buffer_from_slice(&f_host)?;
    let u = gpu.buffer_zeroed::<f32>(N * N)?;
    let v = gpu.buffer_from_slice(&vec![f32::NAN; N * N])?;
    let sweeps = gpu.buffer_from_slice(&[u32::MAX])?;
    let mut g = Poisson::bake(
        &gpu,
        PoissonBuffers {
            f: &f,
            u: &u,
            v: &v,
            sweeps: &sweeps,
        },
    )?;
    g.check_fused(Poisson::FUSED)?;
    *g.params_mut() = PoissonParams::new(N as u32, TOLERANCE);
    let start = Instant::now();
    g.replay_blocking()?;
    let took = start.elapsed();
    let gpu_sweeps = sweeps.read_blocking()?[0];
    let gpu_u = u.read_blocking()?;

    let (cpu_sweeps, cpu_u) = cpu_solve(&f_host);
    let diff = gpu_u
        .iter()
        .zip(&cpu_u)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, |m, d| if d.is_nan() { f32::NAN } else { m.max(d) });
    let peak = cpu_u.iter().copied().fold(0.0f32, f32::max);
    println!(
        "solve:   {N} x {N}, tolerance {TOLERANCE:e}: the GPU stopped after {gpu_sweeps} sweeps ({} of {MAX_RUNS} \
         runs, the rest skipped), the CPU after {cpu_sweeps}; one replay, one submission, {:.1} ms ({} recorder)",
        gpu_sweeps / 2,
        took.as_secs_f64() * 1e3,
        g.untyped().recorder(),
    );
    println!("check:   max |gpu - cpu| = {diff:.2e} (peak u = {peak:.5})");
    // The GPU may fuse a multiply-add the CPU rounds twice: the stopping sweep may differ by a pair or two,
    // and the solutions by that many sweeps' changes.
    if gpu_sweeps.abs_diff(cpu_sweeps) > 4 || diff.is_nan() || diff > 20.0 * TOLERANCE {
        return Err("the GPU's solution differs from the CPU's".into());
    }
    if gpu_sweeps == 2 * MAX_RUNS {
        return Err("the solve did not converge within its bound".into());
    }

    // Each grid point drawn as a SCALE x SCALE square.
    const SCALE: usize = 8;
    let side = N * SCALE;
    let pixels: Vec<[u8; 3]> = (0..side * side)
        .map(|p| inferno(gpu_u[(p / side / SCALE) * N + (p % side) / SCALE] / peak))
        .collect();
    let path = out_dir()?.join("poisson.png");
    save_rgb_png(&path, side as u32, side as u32, &pixels)?;
    println!("wrote:   {}", path.display());

    let skipped = skipped_run_cost(&gpu)?;
    println!(
        "skipped: a run of a block whose flag is 0 costs {:.2} us (the gate and one empty indirect dispatch; \
         median of 5 replays of 2001 runs against 1)",
        skipped.as_secs_f64() * 1e6
    );
    println!("ok");
    Ok(())
}

/// The same Jacobi sweeps on the CPU, in the kernels' order of operations, with the same stopping rule.
fn cpu_solve(f: &[f32]) -> (u32, Vec<f32>) {
    let h = 1.0 / (N as f32 + 1.0);
    let sweep = |src: &[f32], dst: &mut [f32]| {
        let at = |x: isize, y: isize| {
            if x < 0 || y < 0 || x >= N as isize || y >= N as isize {
                0.0
            } else {
                src[y as usize * N + x as usize]
            }
        };
        for y in 0..N as isize {
            for x in 0..N as isize {
                let i = y as usize * N + x as usize;
                dst[i] = (at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1) + h * h * f[i])
                    * 0.25;
            }
        }
    };
    let (mut u, mut v) = (vec![0.0f32; N * N], vec![0.0f32; N * N]);
    let mut sweeps = 0;
    for _ in 0..MAX_RUNS {
        sweep(&u, &mut v);
        sweep(&v, &mut u);
        sweeps += 2;
        let change = u
            .iter()
            .zip(&v)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        if change < TOLERANCE {
            break;
        }
    }
    (sweeps, u)
}

/// What one skipped run of a block costs: replays of `repeat(2001, while: flag)` and `repeat(1, ..)` over a
/// one-invocation kernel, with the flag 0 from the start.
fn skipped_run_cost(gpu: &Gpu) -> Result<Duration> {
    let time = |runs: u32| -> Result<Duration> {
        let mut b = GraphBuilder::new("Skipped");
        b.output("x", "u32").owned("flag", "u32", 1);
        b.fill("off", "flag", "0u");
        b.kernel(
            "k",
            KernelSpec::wgsl("@compute @workgroup_size(1) fn main() { x[0] = x[0] + 1u; }")
                .read_write("x")
                .workgroups(&["1"]),
        );
        b.repeat("skipped", runs, Some("flag"), &["k"]);
        let x = gpu.buffer_zeroed::<u32>(1)?;
        let mut g = BakedGraph::bake(gpu, b.build(&LIBRARY)?, &[("x", x.as_any())])?;
        let mut times = Vec::new();
        for _ in 0..6 {
            let start = Instant::now();
            g.replay_blocking()?;
            times.push(start.elapsed());
        }
        if x.read_blocking()? != [0] {
            return Err("a skipped run ran".into());
        }
        Ok(median(&times[1..]))
    };
    let (many, one) = (time(2001)?, time(1)?);
    Ok(many.saturating_sub(one) / 2000)
}
