//! Readback nodes in every position: before and after host tasks, in the first, a middle and the last
//! partition, several in one replay, the graph ending in a readback or in a host task, with one, two and
//! three replays in flight. Each waited replay holds its own data, on each recorder (the one the environment
//! picks, then the portable one).

#![forbid(unsafe_code)]

mod common;

use common::{assert_exact, gpu, native_expected, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::ir::AccessMode;
use graph_runtime::{AnyBuffer, BakedGraph, Error, GraphBuilder, KernelSpec, LIBRARY, graph};

graph! {
    /// `y = x * k`, read back, then a host task that adds one to `y`: the last two nodes are a readback and a
    /// host task (which must come after it, since it writes what the readback reads).
    graph Tail {
        params { k: f32 }
        buffers { x: [f32] = input, y: [f32] = output }
        kernel scale(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x] * params.k; }
            }
        }
        readback out(y);
        host bump(y: read_write);
    }
}

/// The recorders a test replays each graph with: the one bake picked (native where the environment and the
/// device allow it), then the portable one.
fn recorders(baked: &'static str) -> [&'static str; 2] {
    [baked, "portable"]
}

#[test]
fn a_readback_before_a_trailing_host_task_is_read_with_replays_in_flight() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 3000) as usize;
    let xs = random_f32s(&mut rng, len);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(len)?;
    let mut g = Tail::bake(&gpu, TailBuffers { x: &x, y: &y })?;
    g.on_host(Tail::HOSTS.bump, |h| {
        let y: Vec<f32> = h.y()?;
        h.write_y(&y.iter().map(|v| v + 1.0).collect::<Vec<_>>())
    })?;
    assert_eq!(g.untyped().recorder() == "native", native_expected(&gpu));
    for recorder in recorders(g.untyped().recorder()) {
        if recorder == "portable" {
            g.use_portable_recorder();
        }
        for in_flight in 1..=3 {
            poison_f32(&y);
            let mut submitted = Vec::new();
            for _ in 0..in_flight {
                let k = random_f32s(&mut rng, 1)[0];
                g.params_mut().k = k;
                submitted.push((k, g.replay()?));
            }
            let mut last_k = None;
            // Waited in reverse: a later replay's data must not stand in for an earlier one's.
            for (i, (k, submission)) in submitted.into_iter().enumerate().rev() {
                let want: Vec<f32> = xs.iter().map(|v| v * k).collect();
                let got = submission.wait()?.read(Tail::READBACKS.out)?;
                assert_exact(
                    &got,
                    &want,
                    &format!("{recorder}, replay {i} of {in_flight}"),
                );
                last_k = last_k.or(Some(k));
            }
            // The host task ran after the readback, on the last replay's `y`.
            let k = last_k.unwrap_or_default();
            let bumped: Vec<f32> = xs.iter().map(|v| v * k + 1.0).collect();
            assert_exact(
                &read(&y),
                &bumped,
                &format!("{recorder}: y after the host task"),
            );
        }
    }
    Ok(())
}

/// `a = x * k` (kernel), `first(a)`; host `reverse`: `b` = `a` reversed, `a` negated; `after_host(b)`;
/// `c = b + k` (kernel), `middle(c)`; host `square`: `d = c * c`, `c` zeroed; `last(d)`; with `tail`, a
/// host task that adds one to `d` ends the graph. The host tasks write what the readback before them read,
/// so each readback has its place: partitions `[a, first] | reverse | [c, after_host, middle] | square |
/// [last] (| tail)`.
fn relay(tail: bool, len: u64) -> graph_runtime::desc::GraphDesc {
    let mut b = GraphBuilder::new(if tail { "RelayTail" } else { "Relay" });
    b.param("k", "f32").input("x", "f32").output("a", "f32");
    for name in ["b", "c", "d"] {
        b.owned(name, "f32", len);
    }
    b.kernel(
        "scale",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                 if (gid.x < arrayLength(&a)) { a[gid.x] = x[gid.x] * params.k; }
             }",
        )
        .read("x")
        .write("a"),
    );
    b.readback("first", "a");
    b.host(
        "reverse",
        &[("a", AccessMode::ReadWrite), ("b", AccessMode::Write)],
    );
    b.readback("after_host", "b");
    b.kernel(
        "add",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                 if (gid.x < arrayLength(&c)) { c[gid.x] = b[gid.x] + params.k; }
             }",
        )
        .read("b")
        .write("c"),
    );
    b.readback("middle", "c");
    b.host(
        "square",
        &[("c", AccessMode::ReadWrite), ("d", AccessMode::Write)],
    );
    b.readback("last", "d");
    if tail {
        b.host("tail", &[("d", AccessMode::ReadWrite)]);
    }
    b.build(&LIBRARY).expect("a good graph")
}

/// `relay`'s graph, baked over `x` and `a` (its owned buffers of their length), with its host tasks.
fn bake_relay(
    gpu: &graph_runtime::Gpu,
    tail: bool,
    x: &AnyBuffer,
    a: &AnyBuffer,
) -> Result<BakedGraph, Error> {
    let desc = relay(tail, u64::from(a.len()));
    let mut g = BakedGraph::bake(gpu, desc, &[("x", x), ("a", a)])?;
    g.on_host("reverse", |ctx| {
        let a: Vec<f32> = ctx.read("a")?;
        ctx.write("b", &a.iter().rev().copied().collect::<Vec<_>>())?;
        ctx.write("a", &a.iter().map(|v| -v).collect::<Vec<_>>())
    })?;
    g.on_host("square", |ctx| {
        let c: Vec<f32> = ctx.read("c")?;
        ctx.write("d", &c.iter().map(|v| v * v).collect::<Vec<_>>())?;
        ctx.write("c", &vec![0.0f32; c.len()])
    })?;
    if tail {
        g.on_host("tail", |ctx| {
            let d: Vec<f32> = ctx.read("d")?;
            ctx.write("d", &d.iter().map(|v| v + 1.0).collect::<Vec<_>>())
        })?;
    }
    Ok(g)
}

/// `desc`'s plan over buffers of `len` elements, as its partitions' node names: `[a b] | h | [c]`.
fn partitions(desc: &graph_runtime::desc::GraphDesc, len: u32) -> String {
    use graph_core::plan::{PlanPartition, PlanStep, plan};
    let plan = plan(desc, &vec![len; desc.buffers.len()]).expect("a plan");
    let name = |n: u32| desc.nodes[n as usize].name.to_string();
    let parts: Vec<String> = plan
        .partitions
        .iter()
        .map(|p| match p {
            PlanPartition::Host { nodes } => nodes.iter().map(|&n| name(n)).collect(),
            PlanPartition::Gpu { levels } => {
                let steps = levels.iter().flat_map(|l| &l.steps).map(|s| match *s {
                    PlanStep::Dispatch { node } | PlanStep::Interop { node } => name(node),
                    PlanStep::Upload(t) | PlanStep::Readback(t) => name(t.node),
                    _ => "?".into(),
                });
                format!("[{}]", steps.collect::<Vec<_>>().join(" "))
            }
        })
        .collect();
    parts.join(" | ")
}

#[test]
fn the_relay_places_its_readbacks_in_every_partition() {
    assert_eq!(
        partitions(&relay(false, 8), 8),
        "[scale first] | reverse | [add after_host middle] | square | [last]"
    );
    assert_eq!(
        partitions(&relay(true, 8), 8),
        "[scale first] | reverse | [add after_host middle] | square | [last] | tail"
    );
}

/// What each readback of `relay` holds after a replay with `k`, by name.
fn relay_expected(xs: &[f32], k: f32) -> [(&'static str, Vec<f32>); 4] {
    let first: Vec<f32> = xs.iter().map(|v| v * k).collect();
    let after_host: Vec<f32> = first.iter().rev().copied().collect();
    let middle: Vec<f32> = after_host.iter().map(|v| v + k).collect();
    let last: Vec<f32> = middle.iter().map(|v| v * v).collect();
    [
        ("first", first),
        ("after_host", after_host),
        ("middle", middle),
        ("last", last),
    ]
}

#[test]
fn readbacks_in_every_partition_before_and_after_host_tasks_each_hold_their_replays_data()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for tail in [false, true] {
        let len = 1 + random_u32(&mut rng, 2000) as usize;
        let xs = random_f32s(&mut rng, len);
        let x = gpu.buffer_from_slice(&xs)?;
        let a = gpu.buffer_zeroed::<f32>(len)?;
        let mut g = bake_relay(&gpu, tail, x.as_any(), a.as_any())?;
        assert_eq!(g.recorder() == "native", native_expected(&gpu));
        for recorder in recorders(g.recorder()) {
            if recorder == "portable" {
                g.use_portable_recorder();
            }
            for in_flight in 1..=3 {
                poison_f32(&a);
                let mut submitted = Vec::new();
                for _ in 0..in_flight {
                    let k = random_f32s(&mut rng, 1)[0];
                    g.set_param("k", k)?;
                    submitted.push((k, g.replay()?));
                }
                for (i, (k, submission)) in submitted.into_iter().enumerate().rev() {
                    let finished = submission.wait()?;
                    for (node, want) in relay_expected(&xs, k) {
                        let what =
                            format!("{recorder}, tail {tail}, {node}, replay {i} of {in_flight}");
                        assert_exact(&finished.read_named::<f32>(node)?, &want, &what);
                    }
                }
                // `reverse` negated `a` after `first` read it.
                let k = g.param::<f32>("k")?;
                let negated: Vec<f32> = xs.iter().map(|v| -(v * k)).collect();
                assert_exact(&read(&a), &negated, &format!("{recorder}, tail {tail}: a"));
            }
        }
    }
    Ok(())
}
