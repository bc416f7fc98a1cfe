//! # 03 — heat: a time-stepping simulation with a moving parameter
//!
//! Heat diffusing over a 256x256 plate with cold edges, warmed by a small heat source that moves along a
//! Lissajous curve. Each time step is the explicit 5-point stencil
//!
//! ```text
//!   u'[x,y] = u + alpha * (u[x-1,y] + u[x+1,y] + u[x,y-1] + u[x,y+1] - 4u) + source(x, y)
//! ```
//!
//! which needs the old field intact while the new one is written, so it *ping-pongs* between two buffers.
//! The graph holds two steps: `step_a` reads `temp` and writes `scratch`, `step_b` reads `scratch` and writes
//! `temp` back. After each replay the newest field is in `temp` again, so the graph can simply be replayed:
//! 500 replays make 1000 steps. Between replays the source's position changes through the parameters (push
//! constants): no re-bake, no buffer upload.
//!
//! `scratch` is owned by the graph: created at bake time and invisible to the caller, who only binds `temp`.
//!
//! Writes `out/heat.png` (the final field, false colour) and `out/heat_frames.png` (four moments of the run),
//! and checks the final field against the same simulation on the CPU.
//!
//! Run it with `cargo run --release -p examples --bin 03_heat`.

#![forbid(unsafe_code)]

use std::f32::consts::TAU;
use std::time::Instant;

use examples::{Result, inferno, max_abs_diff, median, ms, out_dir, save_rgb_png};
use graph_runtime::{Gpu, graph};

/// The plate is `GRID` x `GRID` cells. The graph-owned `scratch` buffer below has `GRID * GRID` = 65536
/// elements: a graph-owned buffer's length is a literal, fixed at compile time.
const GRID: u32 = 256;
/// Replays of the two-step graph: 1000 time steps.
const REPLAYS: u32 = 500;
/// Diffusion rate per step; the explicit scheme is stable up to 0.25.
const ALPHA: f32 = 0.2;
/// Heat the source adds per step at its centre, and its radius (standard deviation, in cells).
const STRENGTH: f32 = 0.05;
const RADIUS: f32 = 4.0;

graph! {
    /// Two explicit heat-equation steps, temp -> scratch -> temp, with a Gaussian heat source.
    pub graph HeatSteps {
        // `source` is a WGSL `vec2<f32>`, a `[f32; 2]` on the Rust side. The macro lays the block out as WGSL
        // does (a vec2 is 8-byte aligned) and generates a matching `#[repr(C)]` struct.
        params {
            source: vec2<f32>,
            width: u32,
            height: u32,
            alpha: f32,
            strength: f32,
            radius: f32,
        }

        buffers {
            temp: [f32] = inout,   // the field, bound by the caller; holds the newest state after a replay
            scratch: [f32; 65536], // the field between the two steps; owned by the graph
        }

        // temp -> scratch. Cells outside the plate count as 0 (the edges are held cold).
        kernel step_a(temp: read, scratch: write) threads(params.width, params.height) {
            fn u(x: i32, y: i32) -> f32 {
                if (x < 0 || y < 0 || x >= i32(params.width) || y >= i32(params.height)) {
                    return 0.0;
                }
                return temp[u32(y) * params.width + u32(x)];
            }

            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) {
                    return;
                }
                let x = i32(gid.x);
                let y = i32(gid.y);
                let c = u(x, y);
                let laplacian = u(x - 1, y) + u(x + 1, y) + u(x, y - 1) + u(x, y + 1) - 4.0 * c;
                // The source: a small Gaussian around `params.source`.
                let d = vec2<f32>(f32(x), f32(y)) - params.source;
                let heat = params.strength * exp(-dot(d, d) / (2.0 * params.radius * params.radius));
                scratch[gid.y * params.width + gid.x] = c + params.alpha * laplacian + heat;
            }
        }

        // scratch -> temp: the same step the other way. It reads what `step_a` wrote and overwrites what
        // `step_a` read, so the macro orders it after `step_a` (two inferred dependencies, one edge).
        kernel step_b(scratch: read, temp: write) threads(params.width, params.height) {
            fn u(x: i32, y: i32) -> f32 {
                if (x < 0 || y < 0 || x >= i32(params.width) || y >= i32(params.height)) {
                    return 0.0;
                }
                return scratch[u32(y) * params.width + u32(x)];
            }

            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) {
                    return;
                }
                let x = i32(gid.x);
                let y = i32(gid.y);
                let c = u(x, y);
                let laplacian = u(x - 1, y) + u(x + 1, y) + u(x, y - 1) + u(x, y + 1) - 4.0 * c;
                let d = vec2<f32>(f32(x), f32(y)) - params.source;
                let heat = params.strength * exp(-dot(d, d) / (2.0 * params.radius * params.radius));
                temp[gid.y * params.width + gid.x] = c + params.alpha * laplacian + heat;
            }
        }
    }
}

/// Where the source is during replay `k` of `REPLAYS`: a Lissajous curve (3 by 2 loops) around the centre.
fn source_at(k: u32) -> [f32; 2] {
    let t = k as f32 / REPLAYS as f32;
    let c = GRID as f32 / 2.0;
    [
        c + 0.35 * GRID as f32 * (TAU * 3.0 * t).sin(),
        c + 0.35 * GRID as f32 * (TAU * 2.0 * t + 0.6).sin(),
    ]
}

fn main() -> Result<()> {
    let gpu = Gpu::new_blocking()?;
    println!("adapter:  {}", gpu.summary());

    // The plate starts cold. Its buffer is the only one the caller binds.
    let cells = (GRID * GRID) as usize;
    let temp = gpu.buffer_zeroed::<f32>(cells)?;

    let start = Instant::now();
    let mut heat = HeatSteps::bake(&gpu, HeatStepsBuffers { temp: &temp })?;
    heat.check_fused(HeatSteps::FUSED)?;
    println!(
        "bake:     {} (grid {GRID}x{GRID}; nodes {:?}, one time step each)",
        ms(start.elapsed()),
        HeatSteps::TOPOLOGICAL_ORDER.map(|n| n.name()),
    );

    // Everything but the source position stays the same for the whole run.
    // `new` takes the parameters in declaration order and zeroes the padding the WGSL layout needs.
    *heat.params_mut() = HeatStepsParams::new(source_at(0), GRID, GRID, ALPHA, STRENGTH, RADIUS);

    // Snapshots of the field at four moments, for the strip of frames.
    let snapshot_at = [REPLAYS / 4, REPLAYS / 2, 3 * REPLAYS / 4, REPLAYS];
    let mut frames = Vec::new();

    // The first half: each replay waited for, to time one replay (two steps) on its own.
    // The second half: replays submitted back to back, waiting only when a snapshot is due: the GPU queue
    // stays full and the CPU records the next replay while the GPU runs the previous one. (On a software
    // device such as llvmpipe the "GPU" runs on the same CPU cores, so overlapping gains little there.)
    let half = REPLAYS / 2;
    let mut waited = Vec::new();
    let run = Instant::now();
    let mut second_half_start = run;
    for k in 0..REPLAYS {
        // The one parameter that changes: move the source. It applies to both steps of this replay.
        heat.params_mut().source = source_at(k);
        if k == half {
            second_half_start = Instant::now();
        }
        let replay_start = Instant::now();
        let submission = heat.replay()?;
        if k < half {
            submission.wait()?;
            waited.push(replay_start.elapsed());
        }
        if snapshot_at.contains(&(k + 1)) {
            // Reading waits for everything submitted before.
            frames.push(temp.read_blocking()?);
        }
    }
    let back_to_back = second_half_start.elapsed() / (REPLAYS - half);
    let total = run.elapsed();
    println!(
        "replay:   {REPLAYS} replays ({} steps) in {:.2} s; per replay: \
         median {} waited one by one, {} back to back",
        2 * REPLAYS,
        total.as_secs_f64(),
        ms(median(&waited)),
        ms(back_to_back),
    );

    // ---------------------------------------------------------------------------------- check -------------
    let gpu_final = frames.last().cloned().ok_or("no final frame")?;
    let start = Instant::now();
    let cpu_final = cpu_simulation();
    let (diff, at) = max_abs_diff(&gpu_final, &cpu_final)?;
    let peak = cpu_final.iter().fold(0.0f32, |m, &v| m.max(v));
    let total_heat: f32 = gpu_final.iter().sum();
    println!(
        "check:    CPU reference in {:.2} s; max |gpu - cpu| = {diff:.1e} at ({}, {}); \
         peak temperature {peak:.4}, total heat {total_heat:.1}",
        start.elapsed().as_secs_f64(),
        at % GRID as usize,
        at / GRID as usize,
    );
    // `exp` on a GPU is not bit-exact (a few ULPs are allowed) and the steps may fuse multiply-adds; the
    // stencil damps errors rather than growing them, so the two stay within a small fraction of the peak.
    let tolerance = 1e-4 * peak.max(1e-3);
    if diff.is_nan() || diff > tolerance {
        return Err(
            format!("GPU and CPU differ by {diff:e}, over the tolerance {tolerance:e}").into(),
        );
    }

    // ---------------------------------------------------------------------------------- pictures ----------
    // False colour, each picture scaled to the final peak; the square root lifts the faint trail.
    let color = |v: f32| inferno((v / peak).max(0.0).sqrt());
    let dir = out_dir()?;
    let path = dir.join("heat.png");
    let rgb: Vec<[u8; 3]> = gpu_final.iter().map(|&v| color(v)).collect();
    save_rgb_png(&path, GRID, GRID, &rgb)?;
    println!("wrote:    {}", path.display());

    // The four snapshots side by side, separated by a 4-pixel gap.
    let gap = 4;
    let strip_width = 4 * GRID + 3 * gap;
    let mut strip = vec![[255u8; 3]; (strip_width * GRID) as usize];
    for (f, frame) in frames.iter().enumerate() {
        for y in 0..GRID {
            for x in 0..GRID {
                let to = (y * strip_width + f as u32 * (GRID + gap) + x) as usize;
                strip[to] = color(frame[(y * GRID + x) as usize]);
            }
        }
    }
    let path = dir.join("heat_frames.png");
    save_rgb_png(&path, strip_width, GRID, &strip)?;
    println!(
        "wrote:    {} (after {} steps)",
        path.display(),
        snapshot_at.map(|k| (2 * k).to_string()).join(", ")
    );
    Ok(())
}

/// The same 1000 steps on the CPU, in the same order of operations as the kernels.
fn cpu_simulation() -> Vec<f32> {
    let n = GRID as usize;
    let mut temp = vec![0.0f32; n * n];
    let mut scratch = vec![0.0f32; n * n];
    for k in 0..REPLAYS {
        let [sx, sy] = source_at(k);
        for _ in 0..2 {
            for y in 0..n {
                for x in 0..n {
                    let u = |x: isize, y: isize| {
                        if x < 0 || y < 0 || x >= n as isize || y >= n as isize {
                            0.0
                        } else {
                            temp[y as usize * n + x as usize]
                        }
                    };
                    let (xi, yi) = (x as isize, y as isize);
                    let c = u(xi, yi);
                    let laplacian =
                        u(xi - 1, yi) + u(xi + 1, yi) + u(xi, yi - 1) + u(xi, yi + 1) - 4.0 * c;
                    let (dx, dy) = (x as f32 - sx, y as f32 - sy);
                    let heat = STRENGTH * (-(dx * dx + dy * dy) / (2.0 * RADIUS * RADIUS)).exp();
                    scratch[y * n + x] = c + ALPHA * laplacian + heat;
                }
            }
            std::mem::swap(&mut temp, &mut scratch);
        }
    }
    temp
}
