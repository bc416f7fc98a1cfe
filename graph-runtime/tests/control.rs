//! Control that stays on the GPU: a kernel whose workgroup counts an earlier node wrote (an indirect dispatch).

#![forbid(unsafe_code)]

mod common;

use common::{gpu, native_expected, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{BakedGraph, Error, GraphBuilder, KernelSpec, LIBRARY, UpdateReport, graph};

graph! {
    /// The GPU decides how much of `x` to double: the first `x.len() / 2` elements (rounded up to whole
    /// workgroups of 64), counted by a one-invocation kernel into `args`.
    graph FirstHalf {
        buffers { x: [f32] = input, y: [f32] = output, args: [u32; 3] }
        kernel size(x: read, args: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() {
                args[0] = (arrayLength(&x) / 2u + 63u) / 64u;
                args[1] = 1u;
                args[2] = 1u;
            }
        }
        kernel double(x: read, y: write) workgroups(indirect: args) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
            }
        }
    }
}

#[test]
fn an_indirect_dispatch_runs_the_workgroups_an_earlier_node_wrote() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for len in [1, 2 + random_u32(&mut rng, 5000) as usize] {
        let xs = random_f32s(&mut rng, len);
        let x = gpu.buffer_from_slice(&xs)?;
        let y = gpu.buffer_zeroed::<f32>(len)?;
        poison_f32(&y);
        // Natively on Vulkan too, its counts checked ahead of the dispatch (`tests/native.rs`).
        let mut g = FirstHalf::bake(&gpu, FirstHalfBuffers { x: &x, y: &y })?;
        assert_eq!(g.untyped().recorder() == "native", native_expected(&gpu));
        g.replay_blocking()?;
        let written = (len / 2).div_ceil(64) * 64;
        let ys = read(&y);
        for (i, (&got, &x)) in ys.iter().zip(&xs).enumerate() {
            if i < written {
                assert_eq!(got, 2.0 * x, "y[{i}] of {len}");
            } else {
                assert!(
                    got.is_nan(),
                    "y[{i}] of {len}: past the GPU's count, yet written"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn the_builder_dispatches_indirectly_too_and_orders_the_writer_first()
-> Result<(), Box<dyn std::error::Error>> {
    let mut b = GraphBuilder::new("FirstHalf");
    b.input("x", "f32")
        .output("y", "f32")
        .owned("args", "u32", 3);
    b.kernel(
        "double",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                 if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
             }",
        )
        .read("x")
        .write("y")
        .indirect("args"),
    );
    // The reader declared first: edges come from declaration order, so the counts are not written before.
    let refused = b.build(&LIBRARY).expect_err("args never written before");
    assert!(
        refused.to_string().contains(
            "reads its workgroup counts from graph-owned `args`, but no node writes it before"
        ),
        "{refused}"
    );
    let built = FirstHalf::DESCRIPTION;
    // The macro's: the size kernel before the indirect one, by the edge the counts make.
    assert!(
        built.edges.iter().any(|e| (e.from, e.to) == (0, 1)),
        "{:?}",
        built.edges
    );
    let gpu = gpu();
    let xs = random_f32s(&mut rng(), 300);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(300)?;
    poison_f32(&y);
    BakedGraph::bake(&gpu, built, &[("x", x.as_any()), ("y", y.as_any())])?.replay_blocking()?;
    assert_eq!(read(&y).iter().filter(|v| !v.is_nan()).count(), 192);
    Ok(())
}

graph! {
    /// Halves `x[0]` until it is below 1, at most `100` times, counting the halvings: a loop whose exit the
    /// GPU decides.
    graph Halve {
        buffers { x: [f32; 1] = inout, steps: [u32; 1] = output, going: [u32; 1] }
        fill start(going = 1u);
        fill zero(steps = 0u);
        repeat halving(100, while: going) {
            kernel step(x: read_write, steps: read_write, going: write) workgroups(1) {
                @compute @workgroup_size(1)
                fn main() {
                    x[0] = x[0] * 0.5;
                    steps[0] = steps[0] + 1u;
                    going[0] = select(1u, 0u, x[0] < 1.0);
                }
            }
        }
    }
}

/// `Halve` with a bound of 5, through the builder.
fn halve_five_times() -> Result<graph_runtime::GraphDesc, Error> {
    let mut b = GraphBuilder::new("HalveFiveTimes");
    b.inout("x", "f32")
        .output("steps", "u32")
        .owned("going", "u32", 1)
        .fill("start", "going", "1u")
        .fill("zero", "steps", "0u");
    b.kernel(
        "step",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
             fn main() {
                 x[0] = x[0] * 0.5;
                 steps[0] = steps[0] + 1u;
                 going[0] = select(1u, 0u, x[0] < 1.0);
             }",
        )
        .read_write("x")
        .read_write("steps")
        .write("going")
        .workgroups(&["1"]),
    );
    b.repeat("halving", 5, Some("going"), &["step"]);
    b.build(&LIBRARY).map_err(|e| Error::Bake {
        graph: "HalveFiveTimes".into(),
        reason: e.to_string(),
    })
}

/// How many halvings take `x` below 1, and what is left.
fn halvings(mut x: f32, bound: u32) -> (u32, f32) {
    let mut steps = 0;
    while steps < bound {
        x *= 0.5;
        steps += 1;
        if x < 1.0 {
            break;
        }
    }
    (steps, x)
}

#[test]
fn a_repeat_stops_on_the_gpu_when_its_flag_clears() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for x0 in [1.5f32, 1000.0, 1.0 + random_u32(&mut rng, 1_000_000) as f32] {
        let x = gpu.buffer_from_slice(&[x0])?;
        let steps = gpu.buffer_from_slice(&[u32::MAX])?;
        Halve::bake(
            &gpu,
            HalveBuffers {
                x: &x,
                steps: &steps,
            },
        )?
        .replay_blocking()?;
        let (want_steps, want_x) = halvings(x0, 100);
        assert_eq!(steps.read_blocking()?, [want_steps], "halvings of {x0}");
        assert_eq!(x.read_blocking()?, [want_x], "what is left of {x0}");

        // Positive control: a bound below the halvings needed stops the loop there (the same graph through the
        // builder, with 5 for 100).
        let x = gpu.buffer_from_slice(&[x0])?;
        let bound = [("x", x.as_any()), ("steps", steps.as_any())];
        BakedGraph::bake(&gpu, halve_five_times()?, &bound)?.replay_blocking()?;
        let (want_steps, want_x) = halvings(x0, 5);
        assert_eq!(
            steps.read_blocking()?,
            [want_steps],
            "halvings of {x0} within 5"
        );
        assert_eq!(x.read_blocking()?, [want_x]);
    }
    Ok(())
}

graph! {
    /// Doubles `y` only when `x[0]` is positive: the flag written by a kernel, the decision on the GPU.
    graph MaybeDouble {
        buffers { x: [f32] = input, y: [f32] = inout, positive: [u32; 1] }
        kernel test(x: read, positive: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() { positive[0] = select(0u, 1u, x[0] > 0.0); }
        }
        if when_positive(positive) {
            kernel double(y: read_write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * y[gid.x]; }
                }
            }
        }
    }
}

#[test]
fn an_if_runs_its_nodes_only_when_its_flag_is_set() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 3000) as usize;
    let ys = random_f32s(&mut rng, len);
    for sign in [1.0f32, -1.0] {
        let x = gpu.buffer_from_slice(&[sign, 0.0])?;
        let y = gpu.buffer_from_slice(&ys)?;
        let mut g = MaybeDouble::bake(&gpu, MaybeDoubleBuffers { x: &x, y: &y })?;
        // Blocks replay natively on Vulkan: the gate is recorded with its members.
        assert_eq!(g.untyped().recorder() == "native", native_expected(&gpu));
        g.replay_blocking()?;
        let want: Vec<f32> = ys
            .iter()
            .map(|v| if sign > 0.0 { 2.0 * v } else { *v })
            .collect();
        assert_eq!(read(&y), want, "x[0] = {sign}");
    }
    Ok(())
}

graph! {
    /// `Halve`, its start uploaded and its count read back by each replay.
    graph HalveEach {
        buffers { x: [f32; 1], steps: [u32; 1] = output, going: [u32; 1] }
        upload start_at(x);
        fill start(going = 1u);
        fill zero(steps = 0u);
        repeat halving(100, while: going) {
            kernel step(x: read_write, steps: read_write, going: write) workgroups(1) {
                @compute @workgroup_size(1)
                fn main() {
                    x[0] = x[0] * 0.5;
                    steps[0] = steps[0] + 1u;
                    going[0] = select(1u, 0u, x[0] < 1.0);
                }
            }
        }
        readback count(steps);
    }
}

#[test]
fn replays_in_flight_each_stop_their_own_loop() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let steps = gpu.buffer_zeroed::<u32>(1)?;
    let mut g = HalveEach::bake(&gpu, HalveEachBuffers { steps: &steps })?;
    let starts: Vec<f32> = (0..4)
        .map(|_| 1.0 + random_u32(&mut rng, 1 << 20) as f32)
        .collect();
    let mut in_flight = Vec::new();
    for &x0 in &starts {
        g.upload(HalveEach::UPLOADS.start_at, &[x0])?;
        in_flight.push((x0, g.replay()?));
    }
    // Waited in reverse: each replay's loop ran from its own start and stopped on its own.
    for (x0, submission) in in_flight.into_iter().rev() {
        let steps = submission.wait()?.read(HalveEach::READBACKS.count)?;
        assert_eq!(steps, [halvings(x0, 100).0], "halvings of {x0}");
    }
    Ok(())
}

graph! {
    /// A copy of a range and a fill under `if`: skipped on the GPU when the app's flag is 0.
    graph MaybeShift {
        buffers { x: [vec4<f32>] = input, y: [vec4<f32>] = inout, flag: [u32; 1] = input }
        if when(flag) {
            copy shift(x[1..] -> y[..y.len() - 1]);
            fill mark(y[0..1] = vec4<f32>(7.0));
        }
    }
}

#[test]
fn copies_and_fills_under_if_are_skipped_on_the_gpu() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 2 + random_u32(&mut rng, 2000) as usize;
    let xs: Vec<[f32; 4]> = random_f32s(&mut rng, 4 * len)
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    let ys: Vec<[f32; 4]> = random_f32s(&mut rng, 4 * len)
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    for on in [1u32, 0] {
        let x = gpu.buffer_from_slice(&xs)?;
        let y = gpu.buffer_from_slice(&ys)?;
        let flag = gpu.buffer_from_slice(&[on])?;
        MaybeShift::bake(
            &gpu,
            MaybeShiftBuffers {
                x: &x,
                y: &y,
                flag: &flag,
            },
        )?
        .replay_blocking()?;
        let mut want = ys.clone();
        if on == 1 {
            want[..len - 1].copy_from_slice(&xs[1..]);
            want[0] = [7.0; 4];
        }
        assert_eq!(y.read_blocking()?, want, "flag {on}");
    }
    Ok(())
}

graph! {
    /// `v = 2v`, as a graph of its own.
    graph Doubler {
        buffers { v: [f32] = inout }
        kernel double(v: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&v)) { v[gid.x] = 2.0 * v[gid.x]; }
            }
        }
    }
}

graph! {
    /// `MaybeDouble` with the doubling as a subgraph under `if`.
    graph MaybeDoubleSub {
        buffers { x: [f32] = input, y: [f32] = inout, positive: [u32; 1] }
        kernel test(x: read, positive: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() { positive[0] = select(0u, 1u, x[0] > 0.0); }
        }
        if when_positive(positive) {
            subgraph twice = Doubler(v: y: read_write);
        }
    }
}

#[test]
fn a_subgraph_under_if_is_skipped_on_the_gpu() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 3000) as usize;
    let ys = random_f32s(&mut rng, len);
    for sign in [1.0f32, -1.0] {
        let x = gpu.buffer_from_slice(&[sign])?;
        let y = gpu.buffer_from_slice(&ys)?;
        MaybeDoubleSub::bake(&gpu, MaybeDoubleSubBuffers { x: &x, y: &y })?.replay_blocking()?;
        let want: Vec<f32> = ys
            .iter()
            .map(|v| if sign > 0.0 { 2.0 * v } else { *v })
            .collect();
        assert_eq!(read(&y), want, "x[0] = {sign}");
    }
    Ok(())
}

graph! {
    /// `x = x + 1`, seven times in each replay, with no flag.
    graph AddSeven {
        buffers { x: [f32] = inout }
        repeat seven(7) {
            kernel add_one(x: read_write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] + 1.0; }
                }
            }
        }
    }
}

#[test]
fn a_repeat_without_a_flag_runs_its_count_every_replay() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 3000) as usize;
    let xs: Vec<f32> = (0..len).map(|_| random_u32(&mut rng, 100) as f32).collect();
    let x = gpu.buffer_from_slice(&xs)?;
    let mut g = AddSeven::bake(&gpu, AddSevenBuffers { x: &x })?;
    let _first = g.replay()?;
    g.replay_blocking()?;
    let want: Vec<f32> = xs.iter().map(|v| v + 14.0).collect();
    assert_eq!(read(&x), want, "two replays of seven");
    Ok(())
}

#[test]
fn a_graph_file_holds_blocks_and_indirect_dispatches() -> Result<(), Box<dyn std::error::Error>> {
    let mut b = GraphBuilder::new("G");
    b.inout("x", "f32")
        .owned("flag", "u32", 1)
        .owned("args", "u32", 3)
        .fill("on", "flag", "1u")
        .fill("size", "args", "1u");
    let body = "@compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] + 1.0; }
        }";
    b.kernel("k", KernelSpec::wgsl(body).read_write("x"))
        .kernel("again", KernelSpec::wgsl(body).read_write("x"))
        .kernel(
            "sized",
            KernelSpec::wgsl(body).read_write("x").indirect("args"),
        );
    b.if_block("maybe", "flag", &["k"])
        .repeat("thrice", 3, None, &["again"]);
    let text = graph_runtime::file::to_json(b.graph());
    assert!(
        text.contains("\"blocks\"") && text.contains("\"indirect\""),
        "{text}"
    );
    let loaded = graph_runtime::file::from_json(&text)?;
    assert_eq!(&loaded, b.graph());
    assert_eq!(
        graph_runtime::pipeline::describe_graph(loaded, &LIBRARY)?,
        b.build(&LIBRARY)?
    );
    Ok(())
}

graph! {
    /// `x += params.k` until a counter reaches 4, at most 10 times: parameters in a gated member, the block's
    /// only one (so after each gate the same pipeline is set again).
    graph AddK {
        params { k: f32 }
        buffers { x: [f32] = inout, going: [u32; 1], steps: [u32; 1] = output }
        fill start(going = 1u);
        fill zero(steps = 0u);
        repeat adds(10, while: going) {
            kernel add(x: read_write, steps: read_write, going: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] + params.k; }
                    if (gid.x == 0u) {
                        steps[0] = steps[0] + 1u;
                        going[0] = select(1u, 0u, steps[0] >= 4u);
                    }
                }
            }
        }
    }
}

#[test]
fn gated_members_read_parameters_in_both_storages() -> Result<(), Error> {
    // The gate replaces the kernels' pipeline and bind group: after it, push constants and the uniform
    // fallback's group must be set again.
    for (gpu, storage) in common::both_parameter_storages() {
        let x = gpu.buffer_from_slice(&[1.0f32; 100])?;
        let steps = gpu.buffer_zeroed::<u32>(1)?;
        let mut g = AddK::bake(
            &gpu,
            AddKBuffers {
                x: &x,
                steps: &steps,
            },
        )?;
        assert_eq!(g.params_storage(), storage);
        g.params_mut().k = 2.5;
        g.replay_blocking()?;
        assert_eq!(steps.read_blocking()?, [4], "{storage:?}");
        assert_eq!(x.read_blocking()?, vec![11.0f32; 100], "{storage:?}");
    }
    Ok(())
}

#[test]
fn updates_of_graphs_under_gpu_control_reuse_their_native_pipelines_and_still_decide_right()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let native = native_expected(&gpu);
    // An indirect dispatch (natively, behind the check of its counts): `x` rebound to another buffer.
    let len = 2 + random_u32(&mut rng, 5000) as usize;
    let (first, second) = (random_f32s(&mut rng, len), random_f32s(&mut rng, len));
    let (x1, x2) = (
        gpu.buffer_from_slice(&first)?,
        gpu.buffer_from_slice(&second)?,
    );
    let y = gpu.buffer_zeroed::<f32>(len)?;
    let mut g = FirstHalf::bake(&gpu, FirstHalfBuffers { x: &x1, y: &y })?;
    g.replay_blocking()?;
    let report = g.rebind(FirstHalfBuffers { x: &x2, y: &y })?;
    assert_eq!(report.native_pipelines_built, 0, "{report:?}");
    // `size` and `double` bind `x`; the check of the counts binds what it did.
    assert_eq!(
        report.native_sets_built,
        if native { 2 } else { 0 },
        "{report:?}"
    );
    poison_f32(&y);
    g.replay_blocking()?;
    let written = (len / 2).div_ceil(64) * 64;
    for (i, (&got, &x)) in read(&y).iter().zip(&second).enumerate() {
        if i < written {
            assert_eq!(got, 2.0 * x, "y[{i}] of {len}");
        } else {
            assert!(got.is_nan(), "y[{i}] of {len}: past the GPU's count");
        }
    }

    // A repeat under a gate: its gate and member, after a rebind of `x`, still stop where the CPU does.
    let x0 = 1.0 + random_u32(&mut rng, 1_000_000) as f32;
    let (xa, xb) = (gpu.buffer_from_slice(&[x0])?, gpu.buffer_from_slice(&[x0])?);
    let steps = gpu.buffer_from_slice(&[u32::MAX])?;
    let mut h = Halve::bake(
        &gpu,
        HalveBuffers {
            x: &xa,
            steps: &steps,
        },
    )?;
    h.replay_blocking()?;
    let report = h.rebind(HalveBuffers {
        x: &xb,
        steps: &steps,
    })?;
    assert_eq!(report.native_pipelines_built, 0, "{report:?}");
    h.replay_blocking()?;
    let (count, left) = halvings(x0, 100);
    assert_eq!(read(&steps), [count]);
    assert_eq!(read(&xb), [left]);
    assert_eq!(read(&xa), [left], "the replay before the rebind");
    Ok(())
}

/// An update keeps what a gate did not change: rebinding a buffer the gate does not read builds nothing for
/// it, and rebinding its flag builds the gate's bind group (and natively its descriptor set) alone, counted in
/// the report. The gate then reads the new flag.
#[test]
fn an_update_rebuilds_a_gate_only_where_its_flag_changed() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let native = native_expected(&gpu);
    let len = 2 + random_u32(&mut rng, 500) as usize;
    let vec4s = |rng: &mut _| -> Vec<[f32; 4]> {
        random_f32s(rng, 4 * len)
            .chunks(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect()
    };
    let (xs1, xs2, ys) = (vec4s(&mut rng), vec4s(&mut rng), vec4s(&mut rng));
    let (x1, x2) = (gpu.buffer_from_slice(&xs1)?, gpu.buffer_from_slice(&xs2)?);
    let y = gpu.buffer_from_slice(&ys)?;
    let (on, off) = (
        gpu.buffer_from_slice(&[1u32])?,
        gpu.buffer_from_slice(&[0u32])?,
    );
    let mut g = MaybeShift::bake(
        &gpu,
        MaybeShiftBuffers {
            x: &x1,
            y: &y,
            flag: &on,
        },
    )?;
    g.replay_blocking()?;
    let report = g.rebind(MaybeShiftBuffers {
        x: &x2,
        y: &y,
        flag: &on,
    })?;
    // The copy under the gate is a kernel (so that it can be skipped on the GPU): it binds `x`, through the
    // recorder that replays (the portable one's objects are made only where it does).
    let native_set = usize::from(native);
    assert_eq!(
        report,
        UpdateReport {
            bind_groups_built: usize::from(!native),
            native_sets_built: native_set,
            ..UpdateReport::default()
        },
        "`x` rebound"
    );
    let report = g.rebind(MaybeShiftBuffers {
        x: &x2,
        y: &y,
        flag: &off,
    })?;
    assert_eq!(
        report,
        UpdateReport {
            bind_groups_built: 1,
            native_sets_built: native_set,
            ..UpdateReport::default()
        },
        "`flag` rebound"
    );
    let before = y.read_blocking()?;
    g.replay_blocking()?;
    assert_eq!(y.read_blocking()?, before, "the new flag is 0: skipped");
    gpu.queue()
        .write_buffer(off.as_any().wgpu(), 0, bytemuck::bytes_of(&1u32));
    g.replay_blocking()?;
    let mut want = before;
    want[..len - 1].copy_from_slice(&xs2[1..]);
    want[0] = [7.0; 4];
    assert_eq!(
        y.read_blocking()?,
        want,
        "the new flag is 1: run on `x` rebound"
    );
    Ok(())
}
