//! # 01 — saxpy: the quickstart
//!
//! `y = a*x + y` ("single-precision a times x plus y"), the "hello world" of GPU compute, written twice:
//!
//! 1. with an **inline kernel**: the WGSL is written right inside the `graph!` block, and
//! 2. with a **library kernel**: `kernels::axpy`, one line, WGSL shipped by the `kernels` crate.
//!
//! Each graph is *baked* once (pipelines and bind groups are created), then *replayed* several times with a
//! parameter changed between replays: parameters travel as push constants, so changing one costs nothing
//! but the few bytes the next replay sends. Every result is checked against the same computation on the CPU.
//!
//! Run it with `cargo run --release -p examples --bin 01_saxpy`.

#![forbid(unsafe_code)]

use examples::Result;
use graph_runtime::{Gpu, graph};

// ---------------------------------------------------------------------------------------------------------
// Graph 1: an inline kernel.
//
// `graph!` declares a task graph at compile time. The macro checks the WGSL with naga (the same compiler wgpu
// uses) while your crate compiles: a typo in the kernel is a compile error pointing at the typo, not a panic at
// run time.
// ---------------------------------------------------------------------------------------------------------
graph! {
    /// y = a*x + y over the first `n` elements, with the WGSL written inline.
    pub graph SaxpyInline {
        // Parameters: a small block of scalars (or vectors) every kernel sees as `params.a`, `params.n`.
        // The macro generates `SaxpyInlineParams { a: f32, n: u32 }` with the exact WGSL layout.
        params { a: f32, n: u32 }

        // Buffers: `[f32]` means a run-time length, bound by the caller at bake time. The role says what the
        // graph does with it: `input` is only read, `inout` is read and written (`output` is only written).
        buffers {
            x: [f32] = input,
            y: [f32] = inout,
        }

        // A kernel node. The list says how it uses each buffer; the macro declares them for the WGSL as
        // `var<storage, read> x: array<f32>` and `var<storage, read_write> y: array<f32>`, so the body uses
        // them by name. The macro also checks the declaration against the body: `y` is `read_write`, so the
        // body must write it; `x` is `read`, so writing it would be a compile error.
        //
        // `threads(params.n)` is a Rust expression evaluated at each replay: one invocation per element,
        // rounded up to whole workgroups of 64 (the `@workgroup_size` below), hence the `i < params.n` guard.
        kernel axpy(x: read, y: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < params.n) {
                    y[i] = params.a * x[i] + y[i];
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Graph 2: the same with the kernel library, followed by a second node.
//
// `kernels::axpy(x: .., y: .., a: ..)` binds the library kernel's buffers to this graph's buffers and its
// argument `a` to a WGSL expression, here the parameter `params.a`. Without `threads(..)`, a library kernel
// runs one invocation per element of the buffer it writes.
//
// `kernels::scale` then multiplies `y` in place. Nobody wrote an edge between the two nodes: the macro infers
// it from the buffer accesses (both touch `y`, and `axpy` is declared first), so `scale` runs after `axpy`.
// ---------------------------------------------------------------------------------------------------------
graph! {
    /// y = s * (a*x + y), with library kernels only.
    pub graph SaxpyLibrary {
        params { a: f32, s: f32 }
        buffers {
            x: [f32] = input,
            y: [f32] = inout,
        }
        kernel axpy = kernels::axpy(x: x, y: y, a: params.a);
        kernel rescale = kernels::scale(data: y, alpha: params.s);
    }
}

/// How many elements: deliberately not a multiple of the workgroup size, to exercise the bounds check.
const N: usize = 100_003;

fn main() -> Result<()> {
    // One `Gpu` per program: the best adapter wgpu finds (set GRAPH_RUNTIME_ADAPTER to pick another).
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());

    // Some input: x = 0, 0.001, 0.002, ..; y = a gentle wave.
    let x_host: Vec<f32> = (0..N).map(|i| i as f32 * 1e-3).collect();
    let y_host: Vec<f32> = (0..N).map(|i| (i as f32 * 0.01).sin()).collect();

    // ------------------------------------------------------------------------------ inline kernel --------
    // Buffers are created by the caller and bound at bake time; the graph keeps referring to them, so what
    // a replay writes to `y` is what `y.read_blocking()` sees afterwards.
    let x = gpu.buffer_from_slice(&x_host)?;
    let y = gpu.buffer_from_slice(&y_host)?;

    // Bake: compile the pipelines, create the bind groups. Done once; the generated `SaxpyInlineBuffers`
    // struct makes forgetting a buffer a compile error, and a wrong length or element type a bake error.
    let mut saxpy = SaxpyInline::bake(&gpu, SaxpyInlineBuffers { x: &x, y: &y })?;
    // The kernels the macro promised to fuse (`FUSED`) run as one kernel on this device too.
    saxpy.check_fused(SaxpyInline::FUSED)?;

    // The CPU mirror of `y`, in f64, updated as the GPU is asked to; and how far f32 may be from it.
    let mut expected: Vec<f64> = y_host.iter().map(|&v| f64::from(v)).collect();
    let mut bound = vec![0.0f64; N];

    // Three replays, each with different parameters. `params_mut()` changes what the *next* replay sends;
    // `replay()` returns a `Submission` at once, and `wait()` blocks until the GPU has finished it.
    for (a, n) in [(2.0f32, N as u32), (-0.5, N as u32), (10.0, 1000)] {
        saxpy.params_mut().a = a;
        saxpy.params_mut().n = n;
        saxpy.replay()?.wait()?;

        for i in 0..n as usize {
            let ax = f64::from(a) * f64::from(x_host[i]);
            expected[i] += ax;
            // `a*x + y` rounds twice, or once when the GPU fuses it; y's earlier error carries over as is.
            bound[i] += U * (ax.abs() + expected[i].abs());
        }
        let got = y.read_blocking()?;
        let (diff, at) = check(&got, &expected, &bound)?;
        // y[999] is always updated, y[1000] only when n > 1000.
        println!(
            "inline  a = {a:>4}, n = {n:>6}: y[1..4] = {:?}, y[999] = {:.4}, y[1000] = {:.4}; \
             max |gpu - cpu| = {diff:.1e} (at {at})",
            &got[1..4],
            got[999],
            got[1000],
        );
    }

    // ------------------------------------------------------------------------------ library kernels ------
    // A fresh `y`, a second graph over the same `x`: one `x` buffer can be bound into any number of graphs.
    let y2 = gpu.buffer_from_slice(&y_host)?;
    let mut library = SaxpyLibrary::bake(&gpu, SaxpyLibraryBuffers { x: &x, y: &y2 })?;
    library.check_fused(SaxpyLibrary::FUSED)?;

    let mut expected: Vec<f64> = y_host.iter().map(|&v| f64::from(v)).collect();
    let mut bound = vec![0.0f64; N];
    for (a, s) in [(1.0f32, 0.5f32), (3.0, 1.0), (-2.0, 2.0)] {
        // Setting the whole block at once works too.
        library.set_params(SaxpyLibraryParams { a, s });
        library.replay_blocking()?; // replay().wait() in one call

        let (a, s) = (f64::from(a), f64::from(s));
        for i in 0..N {
            let ax = a * f64::from(x_host[i]);
            let sum = ax + expected[i];
            expected[i] = s * sum;
            bound[i] = s.abs() * (bound[i] + U * (ax.abs() + sum.abs())) + U * expected[i].abs();
        }
        let got = y2.read_blocking()?;
        let (diff, at) = check(&got, &expected, &bound)?;
        println!(
            "library a = {a:>4}, s = {s:>4}: y[1..4] = {:?}, y[{}] = {:.4}; \
             max |gpu - cpu| = {diff:.1e} (at {at})",
            &got[1..4],
            N - 1,
            got[N - 1],
        );
    }

    // The generated constants describe the graph: here the inferred order of the library graph's nodes.
    println!(
        "ok: {N} elements, 6 replays of 2 graphs match the CPU; SaxpyLibrary runs {:?}",
        SaxpyLibrary::TOPOLOGICAL_ORDER.map(|n| n.name()),
    );
    Ok(())
}

/// The unit roundoff of `f32`: one correctly rounded operation is off by at most this much, relatively.
const U: f64 = f32::EPSILON as f64 / 2.0;

/// The largest difference between the GPU's `got` and the exact `expected`, and where; an error when any
/// element is further from it than its `bound` (the rounding its operations can add), or NaN.
fn check(got: &[f32], expected: &[f64], bound: &[f64]) -> Result<(f64, usize)> {
    let mut worst = (0.0f64, 0usize);
    for (i, ((&g, &e), &b)) in got.iter().zip(expected).zip(bound).enumerate() {
        let diff = (f64::from(g) - e).abs();
        if diff.is_nan() || diff > b * 1.000_001 {
            return Err(format!(
                "y[{i}]: GPU {g}, exact {e}: off by {diff:e}, over the bound {b:e}"
            )
            .into());
        }
        if diff > worst.0 {
            worst = (diff, i);
        }
    }
    Ok(worst)
}
