//! The native recorder (Vulkan command buffers recorded once, one barrier per level): the graphs it can
//! replay give what the CPU gives, after parameter changes (a buffer write, or push constants recorded
//! again: each way is tested), dispatch-size changes and rebinding, and replays in flight each read their
//! own parameters; copies and readbacks between kernels; per-dispatch profiles;
//! `GRAPH_RUNTIME_RECORDER` picks it. On a device that is not Vulkan, or with
//! `GRAPH_RUNTIME_RECORDER=portable`, the same tests run through the portable recorder and say so.

#![forbid(unsafe_code)]

mod common;

use common::{
    assert_exact, assert_within, gpu, native_expected, poison_f32, random_f32s, random_u32, read,
    rng,
};
use graph_runtime::{Dispatch, Error, NativeParamsIn, graph};

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

/// The ways a test replays `Smooth`: as baked (the recorder the environment picks), then, where the native
/// recorder applies, with each way of passing the parameters.
fn ways(gpu: &graph_runtime::Gpu) -> Vec<Option<NativeParamsIn>> {
    let mut ways = vec![None];
    if native_expected(gpu) {
        ways.extend([
            Some(NativeParamsIn::Buffer),
            Some(NativeParamsIn::PushConstants),
        ]);
    }
    ways
}

/// `Smooth` baked over `a` and `b`, replaying as `way` says.
fn bake_smooth(
    gpu: &graph_runtime::Gpu,
    a: &graph_runtime::Buffer<f32>,
    b: &graph_runtime::Buffer<f32>,
    way: Option<NativeParamsIn>,
) -> Result<graph_runtime::Baked<Smooth>, Error> {
    let mut g = Smooth::bake(gpu, SmoothBuffers { a, b })?;
    replay_as(&mut g, gpu, way)?;
    Ok(g)
}

/// Random values, of a random length from 400, in `a`, `b` zeroed, and `Smooth` baked over them.
struct Smoothing {
    n: usize,
    start: Vec<f32>,
    a: graph_runtime::Buffer<f32>,
    b: graph_runtime::Buffer<f32>,
    g: graph_runtime::Baked<Smooth>,
}

fn random_smooth(
    gpu: &graph_runtime::Gpu,
    rng: &mut proptest::test_runner::TestRng,
    way: Option<NativeParamsIn>,
) -> Result<Smoothing, Error> {
    let n = 400 + random_u32(rng, 3000) as usize;
    let start = random_f32s(rng, n);
    let a = gpu.buffer_from_slice(&start)?;
    let b = gpu.buffer_zeroed::<f32>(n)?;
    let g = bake_smooth(gpu, &a, &b, way)?;
    Ok(Smoothing { n, start, a, b, g })
}

/// Checks that `g` replays natively where that is expected, then switches it to `way`, if given.
fn replay_as<G: graph_runtime::TaskGraph>(
    g: &mut graph_runtime::Baked<G>,
    gpu: &graph_runtime::Gpu,
    way: Option<NativeParamsIn>,
) -> Result<(), Error> {
    assert_eq!(
        g.untyped().recorder() == "native",
        native_expected(gpu),
        "{way:?}"
    );
    if let Some(params_in) = way {
        g.use_native_recorder(params_in)?;
        assert_eq!(g.untyped().recorder(), "native");
    }
    Ok(())
}

#[test]
fn parameters_sizes_and_rebinding_take_effect_through_the_recorded_command_buffers()
-> Result<(), Error> {
    let gpu = gpu();
    for way in ways(&gpu) {
        parameters_sizes_and_rebinding(&gpu, way)?;
    }
    Ok(())
}

fn parameters_sizes_and_rebinding(
    gpu: &graph_runtime::Gpu,
    way: Option<NativeParamsIn>,
) -> Result<(), Error> {
    let mut rng = rng();
    let Smoothing {
        n,
        start,
        a,
        b,
        mut g,
    } = random_smooth(gpu, &mut rng, way)?;
    let native = g.untyped().recorder() == "native";

    let mut current = start.clone();
    for k in [2.0f32, 2.0, 0.5] {
        // The second replay records nothing again; the third records with the new parameter.
        poison_f32(&b);
        g.params_mut().k = k;
        g.replay()?.wait()?;
        let want = expected(&current, k, n);
        let got = read(&a);
        assert_within(&got, &want, &close(&want), &format!("{way:?}, k = {k}"));
        current = got;
    }

    // A dispatch size changed after bake: the stencils then cover the first half only (their guards use
    // the buffers' lengths, so the sizes say how many invocations run).
    let half = (n / 2) as u32;
    for node in [SmoothKernel::There, SmoothKernel::Back, SmoothKernel::Scale] {
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
    for node in [SmoothKernel::There, SmoothKernel::Back, SmoothKernel::Scale] {
        g.set_dispatch(node, Dispatch::Threads([m as u32, 1, 1]))?;
    }
    g.params_mut().k = 3.0;
    g.replay()?.wait()?;
    let want = expected(&start2, 3.0, m);
    assert_within(
        &read(&a2),
        &want,
        &close(&want),
        &format!("{way:?}, rebound"),
    );
    assert_eq!(read(&a), got, "the old buffer is left alone");
    Ok(())
}

#[test]
fn replays_in_flight_each_read_their_own_parameters() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for way in ways(&gpu) {
        let Smoothing {
            start, a, mut g, ..
        } = random_smooth(&gpu, &mut rng, way)?;
        // Each replay submitted without waiting for the one before, with a new `k`: with a parameter buffer,
        // the write for one replay must wait for the replay before to have read its value.
        let ks: Vec<f32> = (0..6).map(|r| 0.5 + 0.25 * r as f32).collect();
        let mut want: Vec<f64> = start.iter().map(|&x| f64::from(x)).collect();
        let mut last = None;
        for &k in &ks {
            g.params_mut().k = k;
            last = Some(g.replay()?);
            want = stencil(&stencil(&want))
                .into_iter()
                .map(|x| x * f64::from(k))
                .collect();
        }
        if let Some(last) = last {
            last.wait()?;
        }
        let bound: Vec<f64> = want.iter().map(|x| 1e-4 * (1.0 + x.abs())).collect();
        assert_within(&read(&a), &want, &bound, &format!("{way:?}, k = {ks:?}"));
    }
    Ok(())
}

#[test]
fn the_native_recorder_refuses_push_constants_where_the_parameters_are_in_a_buffer()
-> Result<(), Error> {
    graph! {
        #[uniform_params]
        graph InBuffer {
            params { k: f32 }
            buffers { v: [f32] = inout }
            kernel scale(v: read_write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&v)) { v[gid.x] = v[gid.x] * params.k; }
                }
            }
        }
    }
    let gpu = gpu();
    let mut rng = rng();
    let xs = random_f32s(&mut rng, 300);
    let v = gpu.buffer_from_slice(&xs)?;
    let mut g = InBuffer::bake(&gpu, InBufferBuffers { v: &v })?;
    let before = g.untyped().recorder();
    if native_expected(&gpu) {
        assert_eq!(
            before, "native",
            "a uniform block replays natively from its buffer"
        );
        let refused = g
            .use_native_recorder(NativeParamsIn::PushConstants)
            .expect_err("push constants for a #[uniform_params] graph");
        assert!(refused.to_string().contains("push constants"), "{refused}");
    }
    // Refused or not, the graph replays as before.
    assert_eq!(g.untyped().recorder(), before);
    g.params_mut().k = 0.5;
    g.replay()?.wait()?;
    let want: Vec<f32> = xs.iter().map(|x| x * 0.5).collect();
    assert_eq!(read(&v), want, "halving is exact");
    Ok(())
}

graph! {
    /// Counts a kernel wrote, far past any device's limit when `big` is set: wgpu's portable recorder and the
    /// native recorder's check both make that dispatch nothing.
    graph WithIndirect {
        params { big: u32 }
        buffers { y: [f32] = inout, args: [u32; 3] }
        kernel size(args: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() { args[0] = select(1u, 0xffffffffu, params.big != 0u); args[1] = 1u; args[2] = 1u; }
        }
        kernel step(y: read_write) workgroups(indirect: args) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = y[gid.x] + 2.0; }
            }
        }
    }
}

#[test]
fn counts_a_kernel_wrote_past_the_device_limit_dispatch_nothing() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for way in ways(&gpu) {
        let n = 1 + random_u32(&mut rng, 60) as usize;
        let ys = random_f32s(&mut rng, n);
        let y = gpu.buffer_from_slice(&ys)?;
        let mut g = WithIndirect::bake(&gpu, WithIndirectBuffers { y: &y })?;
        replay_as(&mut g, &gpu, way)?;
        // Within the limit, the step runs: one workgroup of 64 covers `y`.
        g.params_mut().big = 0;
        g.replay()?.wait()?;
        let plus: Vec<f32> = ys.iter().map(|v| v + 2.0).collect();
        assert_exact(&read(&y), &plus, &format!("{way:?}, counts of 1"));
        // Past it, nothing runs, and the replay after runs again.
        g.params_mut().big = 1;
        g.replay()?.wait()?;
        assert_exact(&read(&y), &plus, &format!("{way:?}, counts past the limit"));
        g.params_mut().big = 0;
        g.replay()?.wait()?;
        let twice: Vec<f32> = plus.iter().map(|v| v + 2.0).collect();
        assert_exact(&read(&y), &twice, &format!("{way:?}, counts of 1 again"));
    }
    Ok(())
}

graph! {
    /// A readback and a copy between two kernels, the second overwriting what they read: the native
    /// recorder's command buffers around the steps wgpu records between them.
    graph Staged {
        buffers { x: [f32] = input, y: [f32] = output, z: [f32] = output }
        kernel twice(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
            }
        }
        readback first(y);
        copy keep(y -> z);
        kernel plus(x: read, y: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = y[gid.x] + x[gid.x]; }
            }
        }
        readback second(y);
    }
}

#[test]
fn copies_and_readbacks_between_kernels_see_what_the_kernels_wrote() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for way in ways(&gpu) {
        let n = 100 + random_u32(&mut rng, 5000) as usize;
        let xs = random_f32s(&mut rng, n);
        let x = gpu.buffer_from_slice(&xs)?;
        let (y, z) = (gpu.buffer_zeroed::<f32>(n)?, gpu.buffer_zeroed::<f32>(n)?);
        let mut g = Staged::bake(
            &gpu,
            StagedBuffers {
                x: &x,
                y: &y,
                z: &z,
            },
        )?;
        replay_as(&mut g, &gpu, way)?;
        let doubled: Vec<f32> = xs.iter().map(|&v| 2.0 * v).collect();
        let tripled: Vec<f32> = xs.iter().map(|&v| 2.0 * v + v).collect();
        for run in 0..2 {
            poison_f32(&y);
            poison_f32(&z);
            let finished = g.replay()?.wait()?;
            let what = format!("{way:?}, run {run}");
            assert_exact(&finished.read(Staged::READBACKS.first)?, &doubled, &what);
            assert_exact(&read(&z), &doubled, &what);
            assert_exact(&finished.read(Staged::READBACKS.second)?, &tripled, &what);
            assert_exact(&read(&y), &tripled, &what);
        }
    }
    Ok(())
}

graph! {
    /// Two stencils of one input side by side (one level, no hazard between them), then a stencil of their
    /// sum: a level of two dispatches that overlap, and a level after a barrier. Not fused: tiled, the three
    /// would be one dispatch (`tests/stencils.rs`).
    #[no_fusion]
    graph Sides {
        buffers { x: [f32] = input, l: [f32; 2048], r: [f32; 2048], y: [f32] = output }
        kernel left(x: read, l: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < arrayLength(&l)) { l[i] = x[i] - x[max(i, 1u) - 1u]; }
            }
        }
        kernel right(x: read, r: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                let n = arrayLength(&r);
                if (i < n) { r[i] = x[min(i + 1u, n - 1u)] - x[i]; }
            }
        }
        kernel join(l: read, r: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                let n = arrayLength(&y);
                if (i < n) { y[i] = l[min(i + 1u, n - 1u)] + r[max(i, 1u) - 1u]; }
            }
        }
    }
}

/// `Sides`' output on the CPU.
fn sides(x: &[f32]) -> Vec<f64> {
    let n = x.len();
    let x: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let l: Vec<f64> = (0..n).map(|i| x[i] - x[i.max(1) - 1]).collect();
    let r: Vec<f64> = (0..n).map(|i| x[(i + 1).min(n - 1)] - x[i]).collect();
    (0..n)
        .map(|i| l[(i + 1).min(n - 1)] + r[i.max(1) - 1])
        .collect()
}

/// Whether `gpu` has timestamp queries, which a profile needs; says so where it has none (`tests/fusion.rs`
/// checks the refusal, and there is nothing to time).
fn times_dispatches(gpu: &graph_runtime::Gpu) -> bool {
    let has = gpu
        .device()
        .features()
        .contains(graph_runtime::wgpu::Features::TIMESTAMP_QUERY);
    if !has {
        eprintln!("no timestamp queries on {}: no profile", gpu.summary());
    }
    has
}

#[test]
fn a_profile_times_each_dispatch_of_the_recorder_that_replays() -> Result<(), Error> {
    let gpu = gpu();
    if !times_dispatches(&gpu) {
        return Ok(());
    }
    let mut rng = rng();
    for way in ways(&gpu) {
        // A chain of levels with hazards, timed; the replay after it computes as any replay does.
        let Smoothing {
            n,
            start,
            a,
            b,
            mut g,
        } = random_smooth(&gpu, &mut rng, way)?;
        let recorder = g.untyped().recorder();
        g.params_mut().k = 1.5;
        poison_f32(&b);
        let profile = g.profile()?;
        assert_eq!(profile.recorder, recorder, "{way:?}");
        let labels: Vec<String> = profile.dispatches.iter().map(|d| d.label()).collect();
        assert_eq!(labels, ["there", "back", "scale"], "{way:?}");
        for d in &profile.dispatches {
            assert!(
                d.end_ns >= d.start_ns,
                "{way:?}: {d:?} ends before it starts"
            );
        }
        if recorder == "native" {
            // Each level starts after the barrier that waits for the level before.
            for pair in profile.dispatches.windows(2) {
                assert!(
                    pair[1].start_ns >= pair[0].end_ns,
                    "{way:?}: {:?} starts before {:?} ends",
                    pair[1],
                    pair[0]
                );
            }
        }
        let last = profile.dispatches.last().map_or(0.0, |d| d.end_ns);
        assert!(last > 0.0, "{way:?}: no time passed in {profile}");
        let trace = profile.to_chrome_trace();
        assert!(trace.contains(&format!("{recorder} recorder")), "{trace}");
        let want = expected(&start, 1.5, n);
        let got = read(&a);
        assert_within(&got, &want, &close(&want), &format!("{way:?}, profiled"));
        g.params_mut().k = 0.5;
        g.replay()?.wait()?;
        let want = expected(&got, 0.5, n);
        assert_within(&read(&a), &want, &close(&want), &format!("{way:?}, after"));
    }

    // A level of two dispatches: natively, both start when the level does, and the second's time ends once
    // both have finished; the level after starts after both.
    let xs = random_f32s(&mut rng, 2048);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(2048)?;
    let mut g = Sides::bake(&gpu, SidesBuffers { x: &x, y: &y })?;
    poison_f32(&y);
    let profile = g.profile()?;
    let want = sides(&xs);
    assert_within(&read(&y), &want, &close(&want), "sides, profiled");
    let labels: Vec<String> = profile.dispatches.iter().map(|d| d.label()).collect();
    assert_eq!(labels, ["left", "right", "join"]);
    let [left, right, join] = &profile.dispatches[..] else {
        panic!("three dispatches: {profile}");
    };
    if profile.recorder == "native" {
        assert_eq!(left.start_ns, right.start_ns, "one level, one start");
        assert!(
            right.end_ns >= left.end_ns,
            "{right:?} ends before {left:?}"
        );
        assert!(
            join.start_ns >= right.end_ns,
            "{join:?} starts before {right:?} ends"
        );
        // In the trace, the level's two dispatches are on tracks side by side, and the next level is back
        // on the first.
        let trace: serde_json::Value =
            serde_json::from_str(&profile.to_chrome_trace()).expect("the trace is JSON");
        let tracks: Vec<(&str, u64)> = trace["traceEvents"]
            .as_array()
            .expect("an event list")
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| {
                (
                    e["name"].as_str().unwrap_or(""),
                    e["tid"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        assert_eq!(tracks, [("left", 1), ("right", 2), ("join", 1)]);
    }
    Ok(())
}

graph! {
    /// Long work per element: `rounds` of a recurrence (a wait that returns early has time to be seen).
    graph Slow {
        params { rounds: u32 }
        buffers { x: [f32] = input, y: [f32] = output }
        kernel churn(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i >= arrayLength(&y)) { return; }
                var v = x[i];
                for (var r = 0u; r < params.rounds; r = r + 1u) { v = fract(v * 1.5 + 0.25); }
                y[i] = v;
            }
        }
    }
}

/// `x` after `rounds` of the kernel's recurrence, on the CPU in f32 like the GPU.
fn churned(x: &[f32], rounds: u32) -> Vec<f32> {
    x.iter()
        .map(|&v| {
            let mut v = v;
            for _ in 0..rounds {
                v = (v.mul_add(1.5, 0.25)).fract();
            }
            v
        })
        .collect()
}

#[test]
fn waiting_for_a_replay_returns_only_once_its_work_finished() -> Result<(), Error> {
    use graph_runtime::wgpu;
    let gpu = gpu();
    let mut rng = rng();
    let n = 4096 + random_u32(&mut rng, 1024) as usize;
    let x: Vec<f32> = random_f32s(&mut rng, n)
        .iter()
        .map(|v| v.abs().fract())
        .collect();
    let xs = gpu.buffer_from_slice(&x)?;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    for way in ways(&gpu) {
        poison_f32(&y);
        let mut g = Slow::bake(&gpu, SlowBuffers { x: &xs, y: &y })?;
        replay_as(&mut g, &gpu, way)?;
        // A short replay first, so that the long one's start costs nothing (llvmpipe compiles at first use).
        g.params_mut().rounds = 1;
        g.replay()?.wait()?;
        // About 0.2 s of GPU work on llvmpipe (the CI's device).
        g.params_mut().rounds = 400_000;
        g.replay()?.wait()?;
        // Once the wait returned, wgpu's own fence follows at once: a wait that returned while the kernel ran
        // (a marker written too early) leaves the rest of the kernel's time to wait for here.
        let finished = gpu.device().poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(std::time::Duration::from_millis(50)),
        });
        assert!(
            finished.is_ok(),
            "{way:?}: the GPU was still working: {finished:?}"
        );
        // f32 recurrences agree bit for bit only while both sides round alike: compare a short run exactly.
        g.params_mut().rounds = 3;
        g.replay()?.wait()?;
        assert_exact(&read(&y), &churned(&x, 3), &format!("{way:?}"));
    }
    Ok(())
}

graph! {
    /// Reads workgroup memory it never writes, which WGSL zeroes at the start of every workgroup: the native
    /// recorder leaves that to the driver where the device offers it, and has naga's SPIR-V store the zeros
    /// where not.
    graph Untouched {
        buffers { out: [f32] = output, dirt: [f32] = output }
        // Leaves sevens in its workgroup memory, where a driver may hand the next kernel the same memory.
        kernel dirty(dirt: write) {
            var<workgroup> junk: array<f32, 1024>;
            @compute @workgroup_size(256)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
                for (var i = lid; i < 1024u; i += 256u) {
                    junk[i] = 7.0;
                }
                workgroupBarrier();
                if (gid.x < arrayLength(&dirt)) {
                    dirt[gid.x] = junk[1023u - lid];
                }
            }
        }
        kernel read_untouched(dirt: read, out: write) {
            var<workgroup> scratch: array<f32, 1024>;
            @compute @workgroup_size(256)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
                if (gid.x < arrayLength(&out)) {
                    out[gid.x] = scratch[lid] + scratch[lid + 768u] + 1.0 + 0.0 * dirt[gid.x];
                }
            }
        }
    }
}

#[test]
fn workgroup_memory_starts_zeroed_through_either_recorder() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 1000 + random_u32(&mut rng, 5000) as usize;
    let (out, dirt) = (gpu.buffer_zeroed::<f32>(n)?, gpu.buffer_zeroed::<f32>(n)?);
    let mut g = Untouched::bake(
        &gpu,
        UntouchedBuffers {
            out: &out,
            dirt: &dirt,
        },
    )?;
    for way in ways(&gpu) {
        replay_as(&mut g, &gpu, way)?;
        poison_f32(&out);
        g.replay()?.wait()?;
        let got = read(&out);
        let wrong = got.iter().position(|&v| v != 1.0);
        assert_eq!(wrong, None, "{way:?}: {:?}", wrong.map(|i| got[i]));
        assert!(read(&dirt).iter().all(|&v| v == 7.0), "{way:?}: no dirt");
    }
    Ok(())
}

graph! {
    /// Reads and writes past the ends of its bindings: where the device bounds buffer accesses itself
    /// (`robustBufferAccess2`), such a read gives zero and such a write is dropped; where not, naga clamps the
    /// index to the binding's last element. Either way, the same on both recorders, as wgpu-hal compiles it.
    graph Overreach {
        buffers { x: [f32] = input, out: [f32] = output, spill: [f32] = output }
        kernel reach(x: read, out: write, spill: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < arrayLength(&out)) {
                    out[i] = x[i + arrayLength(&x)];
                    spill[i + arrayLength(&spill)] = 5.0;
                }
            }
        }
    }
}

#[test]
fn reads_and_writes_past_a_binding_behave_alike_on_either_recorder() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 100 + random_u32(&mut rng, 1000) as usize;
    let values = random_f32s(&mut rng, n);
    let x = gpu.buffer_from_slice(&values)?;
    let (out, spill) = (gpu.buffer_zeroed::<f32>(n)?, gpu.buffer_zeroed::<f32>(n)?);
    let mut g = Overreach::bake(
        &gpu,
        OverreachBuffers {
            x: &x,
            out: &out,
            spill: &spill,
        },
    )?;
    let mut seen = Vec::new();
    let mut recorders = vec![None];
    if native_expected(&gpu) {
        recorders.push(Some(NativeParamsIn::Buffer));
    }
    for recorder in recorders {
        match recorder {
            None => g.use_portable_recorder(),
            Some(params_in) => g.use_native_recorder(params_in)?,
        }
        poison_f32(&out);
        poison_f32(&spill);
        g.replay()?.wait()?;
        let (got, spilled) = (read(&out), read(&spill));
        // Bounded by the device: zeros read, nothing written. Clamped by naga: the last element read, and
        // every write landing on the last element.
        let bounded = got.iter().all(|&v| v == 0.0) && spilled.iter().all(|v| v.is_nan());
        let clamped = got.iter().all(|&v| v == values[n - 1])
            && spilled[..n - 1].iter().all(|v| v.is_nan())
            && spilled[n - 1] == 5.0;
        assert!(
            bounded || clamped,
            "{}: read {:?}, spilled {:?}",
            g.untyped().recorder(),
            &got[..4],
            &spilled[n - 4..]
        );
        seen.push((g.untyped().recorder(), bounded));
    }
    assert!(
        seen.windows(2).all(|w| w[0].1 == w[1].1),
        "the recorders disagree (recorder, bounded by the device): {seen:?}"
    );
    Ok(())
}

graph! {
    /// A kernel, then a readback of what it wrote: the replay's last segment has no dispatch.
    graph DoubledThenRead {
        buffers { x: [f32] = input, y: [f32] = output }
        kernel double(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
            }
        }
        readback out(y);
    }
}

/// A profiled replay whose last segment has no dispatch (a readback after the last kernel) times its kernel
/// and resets no query past the pool's end: the validation layer refused the flagship's profile for that, in
/// CI's run with the native recorder submitted through wgpu, before empty segments stopped resetting.
#[test]
fn a_profile_of_a_graph_ending_in_a_readback_times_its_kernel() -> Result<(), Error> {
    let gpu = gpu();
    if !times_dispatches(&gpu) {
        return Ok(());
    }
    let mut rng = rng();
    let xs = random_f32s(&mut rng, 1000);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(xs.len())?;
    let mut g = DoubledThenRead::bake(&gpu, DoubledThenReadBuffers { x: &x, y: &y })?;
    poison_f32(&y);
    let profile = g.profile()?;
    let labels: Vec<String> = profile.dispatches.iter().map(|d| d.label()).collect();
    assert_eq!(labels, ["double"], "{profile}");
    let want: Vec<f32> = xs.iter().map(|v| 2.0 * v).collect();
    assert_eq!(read(&y), want);
    Ok(())
}
