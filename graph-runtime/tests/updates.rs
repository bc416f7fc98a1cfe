//! Executable-graph updates without re-baking: rebinding, dispatch sizes, ranges, whole-graph update; what each
//! rebuilt, that a refused one leaves the graph as it was, and that replays in flight keep what they were
//! submitted with.

#![forbid(unsafe_code)]

mod common;

use common::{assert_exact, gpu, native_expected, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::ir::AccessMode;
use graph_runtime::{
    BakedGraph, Dispatch, Error, GraphBuilder, KernelSpec, LIBRARY, UpdateReport, graph,
};

graph! {
    /// `y = 2x` over `params.n` elements, read back; `w = w + 1`, which does not touch `x`.
    graph Twice {
        params { n: u32 }
        buffers { x: [f32] = input, y: [f32] = output, w: [f32] = inout }
        kernel double(x: read, y: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { y[gid.x] = 2.0 * x[gid.x]; }
            }
        }
        kernel bump(w: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&w)) { w[gid.x] = w[gid.x] + 1.0; }
            }
        }
        readback out(y);
    }
}

fn doubled(xs: &[f32]) -> Vec<f32> {
    xs.iter().map(|x| 2.0 * x).collect()
}

#[test]
fn a_rebind_rebuilds_only_the_bind_groups_of_its_buffer_and_in_flight_replays_keep_theirs()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 3000) as usize;
    let (a, b) = (random_f32s(&mut rng, len), random_f32s(&mut rng, len));
    let (xa, xb) = (gpu.buffer_from_slice(&a)?, gpu.buffer_from_slice(&b)?);
    let y = gpu.buffer_zeroed::<f32>(len)?;
    let w = gpu.buffer_zeroed::<f32>(7)?;
    let mut g = Twice::bake(
        &gpu,
        TwiceBuffers {
            x: &xa,
            y: &y,
            w: &w,
        },
    )?;
    g.params_mut().n = len as u32;
    let native = g.untyped().recorder() == "native";
    let first = g.replay()?;
    let report = g.rebind(TwiceBuffers {
        x: &xb,
        y: &y,
        w: &w,
    })?;
    assert_eq!(
        report,
        UpdateReport {
            pipelines_built: 0,
            bind_groups_built: usize::from(!native),
            native_pipelines_built: 0,
            native_sets_built: usize::from(native),
        },
        "only `double` binds `x`, through the recorder that replays"
    );
    let second = g.replay()?;
    // Waited in reverse: the first replay read the buffer it was submitted with.
    assert_exact(
        &second.wait()?.read(Twice::READBACKS.out)?,
        &doubled(&b),
        "after the rebind",
    );
    assert_exact(
        &first.wait()?.read(Twice::READBACKS.out)?,
        &doubled(&a),
        "in flight before it",
    );
    // `bump` ran in both replays over `w`, which the rebind did not touch.
    assert_exact(&read(&w), &[2.0; 7], "w");
    Ok(())
}

#[test]
fn a_refused_rebind_leaves_the_graph_as_it_was() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let xs = random_f32s(&mut rng, 100);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(100)?;
    let w = gpu.buffer_zeroed::<f32>(1)?;
    let mut g = BakedGraph::bake(
        &gpu,
        Twice::DESCRIPTION,
        &[("x", x.as_any()), ("y", y.as_any()), ("w", w.as_any())],
    )?;
    g.set_param("n", 100u32)?;
    let ints = gpu.buffer_zeroed::<u32>(100)?;
    assert!(matches!(
        g.rebind("x", ints.as_any()),
        Err(Error::BufferType { .. })
    ));
    assert!(g.rebind("nope", x.as_any()).is_err());
    // `y` aliased with `x`, which the graph writes: refused as bake refuses it.
    assert!(matches!(
        g.rebind("y", x.as_any()),
        Err(Error::AliasedBuffers { .. })
    ));
    poison_f32(&y);
    g.replay_blocking()?;
    assert_exact(&read(&y), &doubled(&xs), "y after refused rebinds");
    Ok(())
}

graph! {
    /// A copy of a range, a fill of a range, an upload and a readback of ranges.
    graph Ranges {
        buffers { a: [f32; 16] = input, b: [f32; 16] = inout, c: [f32; 16] = output }
        copy move_(a[0..4] -> b[0..4]);
        fill ones(c[0..8] = 1.0);
        readback tail(b[12..]);
    }
}

#[test]
fn ranges_and_dispatch_sizes_change_without_a_bake() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let xs = random_f32s(&mut rng, 16);
    let a = gpu.buffer_from_slice(&xs)?;
    let b = gpu.buffer_zeroed::<f32>(16)?;
    let c = gpu.buffer_zeroed::<f32>(16)?;
    let mut g = Ranges::bake(
        &gpu,
        RangesBuffers {
            a: &a,
            b: &b,
            c: &c,
        },
    )?;

    let native = usize::from(g.untyped().recorder() == "native");
    let report = g.set_copy_ranges(RangesCopy::Move, 10..16, 10..16)?;
    assert_eq!(report.pipelines_built + report.native_pipelines_built, 0);
    // A fill's range is a pipeline constant: one pipeline, for that node, by the recorder that replays.
    let report = g.set_range(RangesRanged::Ones, 4..12)?;
    assert_eq!(report.pipelines_built, 1 - native);
    assert_eq!(report.native_pipelines_built, native);
    let report = g.set_range(RangesRanged::Tail, 8..16)?;
    assert_eq!(report.pipelines_built + report.native_pipelines_built, 0);
    poison_f32(&b);
    poison_f32(&c);
    let finished = g.replay()?.wait()?;
    let bs = read(&b);
    assert_exact(&bs[10..], &xs[10..], "the copy's new range");
    assert!(
        bs[..10].iter().all(|v| v.is_nan()),
        "outside it, untouched: {bs:?}"
    );
    let cs = read(&c);
    assert!(
        cs[..4].iter().chain(&cs[12..]).all(|v| v.is_nan()),
        "{cs:?}"
    );
    assert_exact(&cs[4..12], &[1.0; 8], "the fill's new range");
    let tail = finished.read(Ranges::READBACKS.tail)?;
    assert_eq!(tail.len(), 8, "the readback's new range");
    assert_exact(&tail[2..], &xs[10..], "read back");

    // Out of bounds, or of two lengths: refused, and the graph keeps its ranges.
    assert!(g.set_copy_ranges(RangesCopy::Move, 10..17, 10..17).is_err());
    assert!(g.set_copy_ranges(RangesCopy::Move, 0..4, 0..5).is_err());
    #[allow(clippy::reversed_empty_ranges)] // what is tested: a range that starts after it ends
    let backwards = 9..4;
    assert!(g.set_range(RangesRanged::Ones, backwards).is_err());
    // The typed API takes a copy only as a `RangesCopy`; the untyped one refuses it at run time.
    let mut untyped = BakedGraph::bake(
        &gpu,
        Ranges::DESCRIPTION,
        &[("a", a.as_any()), ("b", b.as_any()), ("c", c.as_any())],
    )?;
    assert!(
        untyped.set_range("move_", 0..1).is_err(),
        "a copy has two ranges"
    );
    poison_f32(&b);
    g.replay_blocking()?;
    assert_exact(
        &read(&b)[10..],
        &xs[10..],
        "unchanged after refused updates",
    );

    // A dispatch size in place of the declared one.
    let n = 40 + random_u32(&mut rng, 50) as usize;
    let x = gpu.buffer_from_slice(&random_f32s(&mut rng, 100))?;
    let (y, w) = (gpu.buffer_zeroed::<f32>(100)?, gpu.buffer_zeroed::<f32>(1)?);
    let mut t = Twice::bake(
        &gpu,
        TwiceBuffers {
            x: &x,
            y: &y,
            w: &w,
        },
    )?;
    t.params_mut().n = 100;
    let report = t.set_dispatch(TwiceKernel::Double, Dispatch::Workgroups([1, 1, 1]))?;
    assert_eq!(report, UpdateReport::default(), "nothing to create");
    poison_f32(&y);
    t.replay_blocking()?;
    let ys = read(&y);
    assert!(ys[..64].iter().all(|v| !v.is_nan()) && ys[64..].iter().all(|v| v.is_nan()));
    t.set_dispatch(TwiceKernel::Double, Dispatch::Threads([n as u32, 1, 1]))?;
    poison_f32(&y);
    t.replay_blocking()?;
    let ys = read(&y);
    let written = ys.iter().filter(|v| !v.is_nan()).count();
    // Whole workgroups over `n` threads, within the 100 elements the kernel guards (`params.n`).
    assert_eq!(written, (n.div_ceil(64) * 64).min(100), "{n} threads");
    Ok(())
}

/// `y = k * x` with `k` written into the WGSL, as a builder graph.
fn scaled(
    k: f32,
    extra_node: bool,
) -> Result<graph_runtime::GraphDesc, graph_runtime::GraphErrors> {
    let mut b = GraphBuilder::new("Scaled");
    b.input("x", "f32").output("y", "f32");
    b.kernel(
        "scale",
        KernelSpec::wgsl(format!(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                 if (gid.x < arrayLength(&y)) {{ y[gid.x] = {k:?} * x[gid.x]; }}
             }}"
        ))
        .read("x")
        .write("y"),
    );
    if extra_node {
        b.host("look", &[("y", AccessMode::Read)]);
    }
    b.build(&LIBRARY)
}

#[test]
fn a_whole_graph_update_of_one_topology_compiles_only_what_changed()
-> Result<(), Box<dyn std::error::Error>> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 2000) as usize;
    let xs = random_f32s(&mut rng, len);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(xs.len())?;
    let mut g = BakedGraph::bake(
        &gpu,
        scaled(2.0, false)?,
        &[("x", x.as_any()), ("y", y.as_any())],
    )?;
    let native = usize::from(g.recorder() == "native");
    let report = g.update(scaled(3.0, false)?)?;
    assert_eq!(report.pipelines_built, 1 - native);
    assert_eq!(report.native_pipelines_built, native);
    assert_eq!(report.bind_groups_built, 0, "the same buffers");
    poison_f32(&y);
    g.replay_blocking()?;
    let tripled: Vec<f32> = xs.iter().map(|x| 3.0 * x).collect();
    assert_exact(&read(&y), &tripled, "after the update");

    // Another topology: refused with the first difference, and the graph runs as before.
    let refused = g.update(scaled(5.0, true)?).expect_err("a node more");
    let message = refused.to_string();
    assert!(
        message.contains("the baked graph has 1 nodes, the update 2"),
        "{message}"
    );
    assert!(message.contains("unchanged"), "{message}");
    // Updating back compiles that one pipeline again: the caches keep only the pipelines in use.
    let report = g.update(scaled(2.0, false)?)?;
    assert_eq!(report.pipelines_built + report.native_pipelines_built, 1);
    poison_f32(&y);
    g.replay_blocking()?;
    assert_exact(&read(&y), &doubled(&xs), "after updating back");
    Ok(())
}

graph! {
    /// Nodes whose extent is not a dispatch size: a fill of a whole buffer and one of a range, a copy, an
    /// upload, a readback, host and interop tasks, an empty node.
    graph Extents {
        buffers {
            big: [f32] = output,
            part: [f32; 256] = output,
            src: [f32; 16] = input,
            dst: [f32; 16] = output
        }
        fill whole(big = 3.0);
        fill band(part[64..200] = 2.0);
        copy mirror(src -> dst);
        upload give(dst[0..4]);
        host look(dst: read_write);
        interop record(dst: read);
        readback take(dst);
        empty join;
    }
}

#[test]
fn only_a_kernel_has_a_dispatch_size_and_a_refused_one_leaves_fills_whole() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 100_000 + random_u32(&mut rng, 1000) as usize;
    let (xs, given) = (random_f32s(&mut rng, 16), random_f32s(&mut rng, 4));
    let big = gpu.buffer_zeroed::<f32>(len)?;
    let part = gpu.buffer_zeroed::<f32>(256)?;
    let src = gpu.buffer_from_slice(&xs)?;
    let dst = gpu.buffer_zeroed::<f32>(16)?;
    let buffers = ExtentsBuffers {
        big: &big,
        part: &part,
        src: &src,
        dst: &dst,
    };
    let mut g = Extents::bake(&gpu, buffers)?;
    g.on_host(Extents::HOSTS.look, |_| Ok(()))?;
    g.on_interop(ExtentsInterop::Record, |_| Ok(()))?;
    // The typed API takes only kernels (`ExtentsKernel`, which has none here: a node of another kind does not
    // compile, `ui-tests/tests/fail/handles/`); by name, each is refused at run time, in words that say what
    // to call instead.
    let mut untyped = BakedGraph::bake(
        &gpu,
        Extents::DESCRIPTION,
        &[
            ("big", big.as_any()),
            ("part", part.as_any()),
            ("src", src.as_any()),
            ("dst", dst.as_any()),
        ],
    )?;
    untyped.on_host("look", |_| Ok(()))?;
    untyped.on_interop("record", |_| Ok(()))?;
    let refused = [
        ("whole", "`whole` is a fill", "set_range"),
        ("band", "`band` is a fill", "set_range"),
        ("mirror", "`mirror` is a copy", "set_copy_ranges"),
        ("give", "`give` is a transfer", "set_range"),
        ("take", "`take` is a transfer", "set_range"),
        ("look", "`look` is a host task", "dispatches nothing"),
        (
            "record",
            "`record` is an interop task",
            "records its own work",
        ),
        ("join", "`join` dispatches nothing", "only a kernel"),
    ];
    for (node, what, instead) in refused {
        for dispatch in [
            Dispatch::Threads([1, 1, 1]),
            Dispatch::Workgroups([1, 1, 1]),
        ] {
            let refused = untyped.set_dispatch(node, dispatch);
            assert!(
                matches!(&refused, Err(Error::Update { graph, reason }) if graph == "Extents" && reason.contains(node)),
                "{refused:?}"
            );
            let message = refused.expect_err("no dispatch size to set").to_string();
            assert!(
                message.contains("graph `Extents`")
                    && message.contains(what)
                    && message.contains(instead),
                "{message}"
            );
        }
    }

    // Every element of both fills is written, and the copy, the upload and the readback move theirs.
    let mut expected_dst = xs.clone();
    expected_dst[..4].copy_from_slice(&given);
    let check = |taken: Vec<f32>, graph: &str| {
        assert_exact(&read(&big), &vec![3.0; len], &format!("{graph}: big"));
        let parts = read(&part);
        assert_exact(&parts[64..200], &[2.0; 136], &format!("{graph}: band"));
        assert!(
            parts[..64].iter().chain(&parts[200..]).all(|v| v.is_nan()),
            "{graph}: outside the band"
        );
        assert_exact(&read(&dst), &expected_dst, &format!("{graph}: dst"));
        assert_exact(&taken, &expected_dst, &format!("{graph}: read back"));
    };
    let poison = || {
        poison_f32(&big);
        poison_f32(&part);
        poison_f32(&dst);
    };
    poison();
    g.upload(Extents::UPLOADS.give, &given)?;
    check(g.replay()?.wait()?.read(Extents::READBACKS.take)?, "typed");
    poison();
    untyped.upload("give", &given)?;
    check(untyped.replay()?.wait()?.read_named("take")?, "untyped");
    Ok(())
}

#[test]
fn a_dispatch_size_past_the_device_limit_is_refused_when_set() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 3000) as usize;
    let xs = random_f32s(&mut rng, len);
    let x = gpu.buffer_from_slice(&xs)?;
    let (y, w) = (gpu.buffer_zeroed::<f32>(len)?, gpu.buffer_zeroed::<f32>(1)?);
    let mut g = Twice::bake(
        &gpu,
        TwiceBuffers {
            x: &x,
            y: &y,
            w: &w,
        },
    )?;
    g.params_mut().n = len as u32;
    let limit = gpu.device().limits().max_compute_workgroups_per_dimension;
    let mut too_large = vec![Dispatch::Threads([u32::MAX; 3])];
    if let Some(over) = limit.checked_add(1) {
        too_large.push(Dispatch::Workgroups([over, 1, 1]));
        too_large.push(Dispatch::Workgroups([1, 1, over]));
    }
    for dispatch in too_large {
        let refused = g.set_dispatch(TwiceKernel::Double, dispatch);
        assert!(
            matches!(&refused, Err(Error::DispatchTooLarge { graph, node, .. }) if graph == "Twice" && node == "double"),
            "{dispatch:?}: {refused:?}"
        );
    }
    // The graph keeps its declared size.
    poison_f32(&y);
    g.replay_blocking()?;
    assert_exact(&read(&y), &doubled(&xs), "after refused sizes");
    Ok(())
}

/// `x_new = x * k + rhs` (`step`), then `delta` from `x_new` and `x` by `change` (WGSL over `d` and `v`,
/// `x_new[i]` and `x[i]`): a Jacobi-like pair of kernels, as a builder graph.
fn relax(change: &str) -> Result<graph_runtime::GraphDesc, graph_runtime::GraphErrors> {
    let mut b = GraphBuilder::new("Relax");
    b.param("k", "f32");
    b.input("x", "f32")
        .input("rhs", "f32")
        .output("x_new", "f32")
        .output("delta", "f32");
    b.kernel(
        "step",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                 if (gid.x < arrayLength(&x_new)) { x_new[gid.x] = x[gid.x] * params.k + rhs[gid.x]; }
             }",
        )
        .read("x")
        .read("rhs")
        .write("x_new"),
    );
    b.kernel(
        "change",
        KernelSpec::wgsl(format!(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                 let i = gid.x;
                 if (i >= arrayLength(&delta)) {{ return; }}
                 let d = x_new[i];
                 let v = x[i];
                 delta[i] = {change};
             }}"
        ))
        .read("x_new")
        .read("x")
        .write("delta"),
    );
    // Two kernels, whatever the fusion pass would make of them: what an update builds is counted per kernel.
    b.no_fusion("step").no_fusion("change");
    b.build(&LIBRARY)
}

#[test]
fn updates_through_either_recorder_build_only_what_changed_and_compute_right()
-> Result<(), Box<dyn std::error::Error>> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1 + random_u32(&mut rng, 3000) as usize;
    let (xs, rhs) = (random_f32s(&mut rng, len), random_f32s(&mut rng, len));
    let x = gpu.buffer_from_slice(&xs)?;
    let rhs_buffer = gpu.buffer_from_slice(&rhs)?;
    let (x_new, other, delta) = (
        gpu.buffer_zeroed::<f32>(len)?,
        gpu.buffer_zeroed::<f32>(len)?,
        gpu.buffer_zeroed::<f32>(len)?,
    );
    let mut g = BakedGraph::bake(
        &gpu,
        relax("d - v")?,
        &[
            ("x", x.as_any()),
            ("rhs", rhs_buffer.as_any()),
            ("x_new", x_new.as_any()),
            ("delta", delta.as_any()),
        ],
    )?;
    let native = g.recorder() == "native";
    assert_eq!(native, native_expected(&gpu));
    // A replay with a fresh `k`, outputs poisoned, checked against the CPU: `out` is the bound `x_new`.
    let mut check = |g: &mut BakedGraph,
                     out: &graph_runtime::Buffer<f32>,
                     change: fn(f32, f32) -> f32,
                     what: &str|
     -> Result<(), Error> {
        let k = random_f32s(&mut rng, 1)[0];
        g.set_param("k", k)?;
        poison_f32(out);
        poison_f32(&delta);
        g.replay_blocking()?;
        let want: Vec<f32> = xs.iter().zip(&rhs).map(|(x, r)| x * k + r).collect();
        assert_exact(&read(out), &want, &format!("x_new, {what}"));
        let changes: Vec<f32> = want.iter().zip(&xs).map(|(&d, &v)| change(d, v)).collect();
        assert_exact(&read(&delta), &changes, &format!("delta, {what}"));
        Ok(())
    };
    let minus: fn(f32, f32) -> f32 = |d, v| d - v;
    check(&mut g, &x_new, minus, "as baked")?;

    // Nothing changes: nothing is built, by either recorder.
    let report = g.rebind("x_new", x_new.as_any())?;
    assert_eq!(
        report,
        UpdateReport::default(),
        "a rebind of the same buffer"
    );
    check(&mut g, &x_new, minus, "after a rebind of the same buffer")?;
    let report = g.set_dispatch("change", Dispatch::Threads([len as u32, 1, 1]))?;
    assert_eq!(report, UpdateReport::default(), "set_dispatch");
    check(&mut g, &x_new, minus, "after set_dispatch")?;

    // Another buffer for `x_new`: the sets of the two kernels that bind it, no pipeline.
    let report = g.rebind("x_new", other.as_any())?;
    let sets = if native { 2 } else { 0 };
    assert_eq!(
        report,
        UpdateReport {
            pipelines_built: 0,
            bind_groups_built: 2 - sets,
            native_pipelines_built: 0,
            native_sets_built: sets,
        },
        "a rebind of another buffer"
    );
    check(&mut g, &other, minus, "after a rebind of another buffer")?;

    // `change`'s code changes: its pipeline, by the recorder that replays, and nothing else.
    let report = g.update(relax("v - d")?)?;
    assert_eq!(
        report,
        UpdateReport {
            pipelines_built: usize::from(!native),
            bind_groups_built: 0,
            native_pipelines_built: usize::from(native),
            native_sets_built: 0,
        },
        "an update of one kernel's code"
    );
    check(&mut g, &other, |d, v| v - d, "after the update")?;
    Ok(())
}
