//! Executable-graph updates without re-baking: rebinding, dispatch sizes, ranges, whole-graph update; what each
//! rebuilt, that a refused one leaves the graph as it was, and that replays in flight keep what they were
//! submitted with.

mod common;

use common::{assert_exact, gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{
    AccessMode, BakedGraph, Dispatch, Error, GraphBuilder, KernelSpec, LIBRARY, UpdateReport, graph,
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
            bind_groups_built: 1
        },
        "only `double` binds `x`"
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

    let report = g.set_copy_ranges(RangesCopy::Move, 10..16, 10..16)?;
    assert_eq!(report.pipelines_built, 0);
    // A fill's range is a pipeline constant: one pipeline, for that node.
    let report = g.set_range(RangesRanged::Ones, 4..12)?;
    assert_eq!(report.pipelines_built, 1);
    let report = g.set_range(RangesRanged::Tail, 8..16)?;
    assert_eq!(report.pipelines_built, 0);
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
    let report = g.update(scaled(3.0, false)?)?;
    assert_eq!(report.pipelines_built, 1);
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
    // Updating back compiles that one pipeline again: the cache keeps only the pipelines in use.
    assert_eq!(g.update(scaled(2.0, false)?)?.pipelines_built, 1);
    poison_f32(&y);
    g.replay_blocking()?;
    assert_exact(&read(&y), &doubled(&xs), "after updating back");
    Ok(())
}
