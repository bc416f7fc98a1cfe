//! The native recorder (Vulkan command buffers recorded once, one barrier per level): the graphs it can
//! replay give what the CPU gives, after parameter changes (which record again), dispatch-size changes and
//! rebinding; `GRAPH_RUNTIME_RECORDER` picks it. On a device that is not Vulkan, or with
//! `GRAPH_RUNTIME_RECORDER=portable`, the same tests run through the portable recorder and say so.

mod common;

use common::{assert_within, gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{BakedGraph, Dispatch, Error, RECORDER_ENV, graph};

graph! {
    /// Two stencil steps between `a` and `b` (levels with hazards: a barrier each), then a pointwise scale.
    graph Smooth {
        params { k: f32 }
        buffers { a: [f32] = inout, b: [f32] = inout }
        kernel there(a: read, b: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                let n = arrayLength(&b);
                if (i >= n) { return; }
                b[i] = 0.5 * a[i] + 0.25 * (a[max(i, 1u) - 1u] + a[min(i + 1u, n - 1u)]);
            }
        }
        kernel back(b: read, a: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                let n = arrayLength(&a);
                if (i >= n) { return; }
                a[i] = 0.5 * b[i] + 0.25 * (b[max(i, 1u) - 1u] + b[min(i + 1u, n - 1u)]);
            }
        }
        kernel scale(a: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&a)) { a[gid.x] = a[gid.x] * params.k; }
            }
        }
    }
}

fn stencil(v: &[f64]) -> Vec<f64> {
    let n = v.len();
    (0..n)
        .map(|i| 0.5 * v[i] + 0.25 * (v[i.max(1) - 1] + v[(i + 1).min(n - 1)]))
        .collect()
}

/// `a` after one replay, on the CPU, for the first `len` elements (the rest untouched).
fn expected(a: &[f32], k: f32, len: usize) -> Vec<f64> {
    let v: Vec<f64> = a[..len].iter().map(|&x| f64::from(x)).collect();
    let mut out: Vec<f64> = stencil(&stencil(&v))
        .into_iter()
        .map(|x| x * f64::from(k))
        .collect();
    out.extend(a[len..].iter().map(|&x| f64::from(x)));
    out
}

fn close(v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| 1e-5 * (1.0 + x.abs())).collect()
}

/// Whether this run should replay through the native recorder: a Vulkan adapter, not turned off.
fn native_expected(gpu: &graph_runtime::Gpu) -> bool {
    gpu.summary().contains("Vulkan") && std::env::var(RECORDER_ENV).as_deref() != Ok("portable")
}

#[test]
fn parameters_sizes_and_rebinding_take_effect_through_the_recorded_command_buffers()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 400 + random_u32(&mut rng, 3000) as usize;
    let start = random_f32s(&mut rng, n);
    let a = gpu.buffer_from_slice(&start)?;
    let b = gpu.buffer_zeroed::<f32>(n)?;
    let mut g = Smooth::bake(&gpu, SmoothBuffers { a: &a, b: &b })?;
    let native = g.untyped().recorder() == "native";
    assert_eq!(
        native,
        native_expected(&gpu),
        "recorder {}",
        g.untyped().recorder()
    );

    let mut current = start.clone();
    for k in [2.0f32, 2.0, 0.5] {
        // The second replay records nothing again; the third records with the new parameter.
        poison_f32(&b);
        g.params_mut().k = k;
        g.replay()?.wait()?;
        let want = expected(&current, k, n);
        let got = read(&a);
        assert_within(&got, &want, &close(&want), &format!("k = {k}"));
        current = got;
    }

    // A dispatch size changed after bake: the stencils then cover the first half only (their guards use
    // the buffers' lengths, so the sizes say how many invocations run).
    let half = (n / 2) as u32;
    for node in [SmoothNode::There, SmoothNode::Back, SmoothNode::Scale] {
        g.set_dispatch(node, Dispatch::Threads([half, 1, 1]))?;
    }
    assert_eq!(
        g.untyped().recorder(),
        if native { "native" } else { "portable" }
    );
    g.replay()?.wait()?;
    let got = read(&a);
    // Whole workgroups of 64 run: past them nothing did, and those elements keep their values (the ones
    // before are a stencil of old and new elements; the test reads the untouched part).
    let ran = half.div_ceil(64) as usize * 64;
    assert!(
        ran < n,
        "the smaller dispatch must leave elements untouched"
    );
    assert_eq!(&got[ran..], &current[ran..], "past the dispatch");
    assert_ne!(&got[..ran], &current[..ran], "the dispatch ran");

    // Rebound to other buffers of another length: the command buffers name the new ones.
    let m = 2 * n;
    let start2 = random_f32s(&mut rng, m);
    let a2 = gpu.buffer_from_slice(&start2)?;
    let b2 = gpu.buffer_zeroed::<f32>(m)?;
    g.rebind(SmoothBuffers { a: &a2, b: &b2 })?;
    for node in [SmoothNode::There, SmoothNode::Back, SmoothNode::Scale] {
        g.set_dispatch(node, Dispatch::Threads([m as u32, 1, 1]))?;
    }
    g.params_mut().k = 3.0;
    g.replay()?.wait()?;
    let want = expected(&start2, 3.0, m);
    assert_within(&read(&a2), &want, &close(&want), "rebound");
    assert_eq!(read(&a), got, "the old buffer is left alone");
    Ok(())
}

#[test]
fn a_graph_the_native_recorder_cannot_replay_uses_the_portable_one() -> Result<(), Error> {
    graph! {
        graph WithCopy {
            buffers { x: [f32] = input, y: [f32] = output }
            copy c(x -> y);
        }
    }
    let gpu = gpu();
    let xs = random_f32s(&mut rng(), 100);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(100)?;
    let desc = WithCopy::DESCRIPTION;
    let mut g = BakedGraph::bake(&gpu, desc, &[("x", x.as_any()), ("y", y.as_any())]);
    if std::env::var(RECORDER_ENV).as_deref() == Ok("native") {
        let refused = g.expect_err("a copy cannot be replayed natively");
        assert!(refused.to_string().contains("copies"), "{refused}");
        return Ok(());
    }
    let g = g.as_mut().map_err(|e| Error::Gpu(e.to_string()))?;
    assert_eq!(g.recorder(), "portable");
    g.replay()?.wait()?;
    assert_eq!(read(&y), xs);
    Ok(())
}
