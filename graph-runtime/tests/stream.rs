//! The eager stream: calls run at once, in order, with the builder's checks; recorded, the same calls give
//! the builder's description for the same work, whose replays compute what the eager run computed.

#![forbid(unsafe_code)]

mod common;

use common::{assert_close, gpu, poison_f32, random_f32s, read, rng};
use graph_runtime::ir::{AccessMode, Role};
use graph_runtime::{BakedGraph, Buffer, Error, Gpu, GraphBuilder, KernelSpec, LIBRARY, Stream};

/// `y = a * x + y`, over the bindings `x` and `y`.
const AXPY: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&y)) { return; }
    y[gid.x] = params.a * x[gid.x] + y[gid.x];
}";

/// `w = v * v`.
const SQUARE: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&w)) { return; }
    w[gid.x] = v[gid.x] * v[gid.x];
}";

/// A small eager program, written once against the stream: `x` loaded with `data`, `y` set to 1, then
/// `y = a x + y`, `t = y^2` into a scratch buffer, `out = a t + out`, and `y` copied into `kept`.
fn program(
    s: &mut Stream,
    x: &Buffer<f32>,
    y: &Buffer<f32>,
    out: &Buffer<f32>,
    kept: &Buffer<f32>,
    data: &[f32],
) -> Result<(), Error> {
    let t = s.scratch::<f32>(x.len())?;
    s.upload("load", x, data)?;
    s.fill("ones", y, "1.0")?;
    s.kernel("axpy", AXPY)
        .read("x", x)
        .read_write("y", y)
        .threads(&["y.len()"])
        .run()?;
    s.kernel("square", SQUARE)
        .read("v", y)
        .write("w", &t)
        .threads(&["w.len()"])
        .run()?;
    s.kernel("axpy", AXPY)
        .read("x", &t)
        .read_write("y", out)
        .threads(&["y.len()"])
        .run()?;
    s.copy("keep", y, kept)?;
    Ok(())
}

/// What [`program`] leaves in `out` (which held `out0`) and `kept`, on the CPU.
fn expected(a: f32, data: &[f32], out0: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let y: Vec<f32> = data.iter().map(|x| a * x + 1.0).collect();
    let out = y.iter().zip(out0).map(|(y, o)| a * (y * y) + o).collect();
    (out, y)
}

struct Buffers {
    x: Buffer<f32>,
    y: Buffer<f32>,
    out: Buffer<f32>,
    kept: Buffer<f32>,
}

fn buffers(gpu: &Gpu, n: usize) -> Result<Buffers, Error> {
    Ok(Buffers {
        x: gpu.buffer_zeroed(n)?,
        y: gpu.buffer_zeroed(n)?,
        out: gpu.buffer_zeroed(n)?,
        kept: gpu.buffer_zeroed(n)?,
    })
}

#[test]
fn an_eager_stream_runs_each_call_at_once_in_order() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let mut s = gpu.stream();
    // Two rounds over other buffers and sizes: the second rebinds the graphs the first baked.
    for (n, a) in [(1000usize, 0.5f32), (77, -2.0)] {
        let b = buffers(&gpu, n)?;
        let data = random_f32s(&mut rng, n);
        let out0 = random_f32s(&mut rng, n);
        b.out.write(&out0)?;
        poison_f32(&b.kept);
        poison_f32(&b.y);
        s.param("a", a)?;
        program(&mut s, &b.x, &b.y, &b.out, &b.kept, &data)?;
        let (want_out, want_kept) = expected(a, &data, &out0);
        assert_close(&s.read(&b.out)?, &want_out, &format!("n={n} out"));
        assert_close(&s.read(&b.kept)?, &want_kept, &format!("n={n} kept"));
    }
    // The builder's checks, at the call: a kernel writing a buffer it declared read.
    let x = gpu.buffer_zeroed::<f32>(4)?;
    let y = gpu.buffer_zeroed::<f32>(4)?;
    let wrong = s
        .kernel("axpy", AXPY)
        .read("x", &x)
        .read("y", &y)
        .threads(&["y.len()"])
        .run()
        .expect_err("y is written");
    assert!(wrong.to_string().contains("`y`"), "{wrong}");
    // A parameter keeps its type.
    let typed = s.param("a", 1u32).err().map(|e| e.to_string());
    assert!(
        typed.as_deref().is_some_and(|t| t.contains("f32")),
        "{typed:?}"
    );
    Ok(())
}

/// The builder's graph for [`program`] recorded over external `x`, `y`, `out` and `kept`: what a recording
/// must give.
fn by_hand() -> GraphBuilder {
    let mut b = GraphBuilder::new("Program");
    b.upload("load", "x")
        .fill("ones", "y", "1.0")
        .kernel(
            "axpy",
            KernelSpec::wgsl(AXPY)
                .bind("x", "x", AccessMode::Read)
                .bind("y", "y", AccessMode::ReadWrite)
                .threads(&["y.len()"]),
        )
        .kernel(
            "square",
            KernelSpec::wgsl(SQUARE)
                .bind("v", "y", AccessMode::Read)
                .bind("w", "w", AccessMode::Write)
                .threads(&["w.len()"]),
        )
        .kernel(
            "axpy_2",
            KernelSpec::wgsl(AXPY)
                .bind("x", "w", AccessMode::Read)
                .bind("y", "out", AccessMode::ReadWrite)
                .threads(&["out.len()"]),
        )
        .copy("keep", "y", "kept");
    b.param("a", "f32")
        .buffer("x", "f32", Role::Output, None)
        .buffer("y", "f32", Role::Output, None)
        .owned("w", "f32", 256)
        .buffer("out", "f32", Role::InOut, None)
        .buffer("kept", "f32", Role::Output, None);
    b
}

#[test]
fn a_recording_gives_the_builders_description_and_replays_what_the_eager_run_computed()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 256;
    let b = buffers(&gpu, n)?;
    let mut s = gpu.stream();
    s.param("a", 1.5f32)?;
    s.name(&b.out, "out").name(&b.kept, "kept");
    let mut builder = GraphBuilder::new("Program");
    let recording = {
        let mut rec = s.begin_recording(&mut builder)?;
        assert!(rec.is_recording());
        // Recorded, nothing runs: `out` keeps its poison.
        program(&mut rec, &b.x, &b.y, &b.out, &b.kept, &[0.0; 256])?;
        rec.end()?
    };
    assert!(!s.is_recording());
    let desc = builder.build(&LIBRARY)?;
    assert_eq!(
        desc,
        by_hand().build(&LIBRARY)?,
        "the builder's description"
    );
    // Edges from the order of the accesses: `square` after the `axpy` that wrote `y`, `keep` after it too,
    // and the first `axpy` after the upload and the fill.
    let edge = |from: &str, to: &str| {
        let index = |name: &str| desc.nodes.iter().position(|n| n.name == name);
        desc.edges
            .iter()
            .any(|e| Some(e.from as usize) == index(from) && Some(e.to as usize) == index(to))
    };
    assert!(edge("load", "axpy") && edge("ones", "axpy") && edge("axpy", "square"));
    assert!(edge("square", "axpy_2") && edge("axpy", "keep"));
    for (a, b) in [("load", "ones"), ("keep", "axpy_2"), ("square", "keep")] {
        assert!(!edge(a, b) && !edge(b, a), "{a} and {b} are independent");
    }
    // The recorded graph replays the program: its parameters and upload given per replay.
    let mut g = BakedGraph::bake(&gpu, desc, &recording.bindings())?;
    for a in [1.5f32, -0.25] {
        let data = random_f32s(&mut rng, n);
        let out0 = random_f32s(&mut rng, n);
        b.out.write(&out0)?;
        poison_f32(&b.kept);
        g.set_param("a", a)?;
        g.upload("load", &data)?;
        g.replay()?.wait()?;
        let (want_out, want_kept) = expected(a, &data, &out0);
        assert_close(&read(&b.out), &want_out, &format!("a={a} out"));
        assert_close(&read(&b.kept), &want_kept, &format!("a={a} kept"));
        // The same program run at once computes the same.
        b.out.write(&out0)?;
        s.param("a", a)?;
        program(&mut s, &b.x, &b.y, &b.out, &b.kept, &data)?;
        assert_close(&s.read(&b.out)?, &want_out, &format!("a={a} eager out"));
    }
    Ok(())
}

#[test]
fn a_host_wait_inside_a_recording_is_an_error_naming_the_call() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_zeroed::<f32>(8)?;
    let mut s = gpu.stream();
    let mut builder = GraphBuilder::new("Waits");
    let mut rec = s.begin_recording(&mut builder)?;
    rec.fill("zero", &x, "0.0")?;
    let read = rec.read(&x).expect_err("a host read");
    assert_eq!(
        read.to_string(),
        "stream call `read`: it reads a buffer on the host, which waits for the GPU, inside a recording: \
         end the recording first"
    );
    let wait = rec.wait().expect_err("a host wait");
    assert!(wait.to_string().starts_with("stream call `wait`"), "{wait}");
    let mut other = GraphBuilder::new("Other");
    let twice = rec.begin_recording(&mut other).err().map(|e| e.to_string());
    assert_eq!(
        twice.as_deref(),
        Some("stream call `begin_recording`: the stream is recording already")
    );
    // Dropped, the recording ends: the builder has the fill, and the stream runs calls at once again.
    drop(rec);
    assert!(!s.is_recording());
    assert_eq!(builder.graph().nodes.len(), 1);
    x.write(&[5.0; 8])?;
    s.fill("zero", &x, "2.0")?;
    assert_eq!(s.read(&x)?, vec![2.0; 8]);
    Ok(())
}

/// A routine over the library: `y = a x + y` (kernel `axpy`), `y *= 0.5` (kernel `scale`), then the sum of
/// `y` into `total` (the two-pass `reduce::sum`).
fn library_routine(
    s: &mut Stream,
    x: &Buffer<f32>,
    y: &Buffer<f32>,
    total: &Buffer<f32>,
) -> Result<(), Error> {
    s.library("axpy", "axpy")
        .bind("x", x)
        .bind("y", y)
        .arg("a", "params.a")
        .run()?;
    s.library("halve", "scale")
        .bind("data", y)
        .arg("alpha", "0.5")
        .run()?;
    s.library("sum", "reduce::sum")
        .bind("input", y)
        .bind("output", total)
        .run()
}

#[test]
fn the_librarys_kernels_and_algorithms_run_eagerly_and_record_unchanged() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 3000;
    let x = gpu.buffer_zeroed::<f32>(n)?;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    let total = gpu.buffer_zeroed::<f32>(1)?;
    let xs = random_f32s(&mut rng, n);
    let ys = random_f32s(&mut rng, n);
    let a = 2.0f32;
    let want_y: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| 0.5 * (a * x + y)).collect();
    let want_total: f64 = want_y.iter().map(|&v| f64::from(v)).sum();
    let check = |got_y: &[f32], got_total: f32, what: &str| {
        assert_close(got_y, &want_y, what);
        assert!(
            (f64::from(got_total) - want_total).abs() <= 1e-3 * want_total.abs().max(1.0),
            "{what} total: GPU {got_total}, CPU {want_total}"
        );
    };
    let mut s = gpu.stream();
    s.param("a", a)?;
    x.write(&xs)?;
    y.write(&ys)?;
    poison_f32(&total);
    library_routine(&mut s, &x, &y, &total)?;
    check(&s.read(&y)?, s.read(&total)?[0], "eager");
    // The same routine recorded: the builder's graph of the same library calls.
    let mut builder = GraphBuilder::new("Library");
    let recorded = {
        let mut rec = s.begin_recording(&mut builder)?;
        library_routine(&mut rec, &x, &y, &total)?;
        rec.end()?
    };
    let mut by_hand = GraphBuilder::new("Library");
    by_hand
        .library(
            "axpy",
            "axpy",
            &[("x", "x"), ("y", "y")],
            &[("a", "params.a")],
        )
        .library("halve", "scale", &[("data", "y")], &[("alpha", "0.5")])
        .subgraph(
            "sum",
            &GraphBuilder::from_graph(
                (LIBRARY.subgraph("reduce::sum").expect("reduce::sum").graph)(),
                Default::default(),
            )
            .build(&LIBRARY)?,
            &[
                ("input", "y", AccessMode::Read),
                ("output", "output", AccessMode::Write),
            ],
        )
        .param("a", "f32")
        .input("x", "f32")
        .inout("y", "f32")
        .output("output", "f32");
    let desc = builder.build(&LIBRARY)?;
    assert_eq!(desc, by_hand.build(&LIBRARY)?);
    let mut g = BakedGraph::bake(&gpu, desc, &recorded.bindings())?;
    g.set_param("a", a)?;
    y.write(&ys)?;
    poison_f32(&total);
    g.replay()?.wait()?;
    check(&read(&y), read(&total)[0], "recorded");
    Ok(())
}

#[test]
fn a_buffer_dropped_before_the_recording_ends_is_an_error_naming_it_and_its_call()
-> Result<(), Error> {
    let gpu = gpu();
    let kept = gpu.buffer_zeroed::<f32>(8)?;
    let mut s = gpu.stream();
    // Used eagerly first: the stream's kept graph holds the buffer too, which does not count as a holder.
    let gone = gpu.buffer_zeroed::<f32>(8)?;
    s.fill("zero", &gone, "0.0")?;
    let mut builder = GraphBuilder::new("Dropped");
    let mut rec = s.begin_recording(&mut builder)?;
    rec.fill("clear", &kept, "1.0")?;
    rec.copy("copy", &kept, &gone)?;
    let scratch = rec.scratch::<f32>(8)?;
    rec.copy("keep", &kept, &scratch)?;
    // A scratch buffer is the graph's own: dropping the stand-in is no mistake.
    drop(scratch);
    drop(gone);
    let error = rec.end().expect_err("`gone` was dropped");
    assert_eq!(
        error.to_string(),
        "stream call `copy`: its buffer `buffer1` was dropped before the recording ended, so nothing outside \
         the graph can read it: keep a handle until the end, or make it with `Stream::scratch` for the graph \
         to own"
    );
    // The builder has the recording all the same.
    let desc = builder.build(&LIBRARY)?;
    assert_eq!(desc.nodes.len(), 3);
    // An input dropped is no mistake: the recording reads it, and holds it for that.
    let input = gpu.buffer_from_slice(&[3.0f32; 8])?;
    let mut builder = GraphBuilder::new("Input");
    let mut rec = s.begin_recording(&mut builder)?;
    rec.copy("copy", &input, &kept)?;
    drop(input);
    assert_eq!(rec.end()?.bindings().len(), 2);
    // With every handle kept, the same recording ends well.
    let gone = gpu.buffer_zeroed::<f32>(8)?;
    let mut builder = GraphBuilder::new("Kept");
    let mut rec = s.begin_recording(&mut builder)?;
    rec.copy("copy", &kept, &gone)?;
    assert_eq!(rec.end()?.bindings().len(), 2);
    Ok(())
}

/// `y -= m[0]` over the bindings `y` and `m`.
const CENTRE: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&y)) { return; }
    y[gid.x] = y[gid.x] - m[0];
}";

/// `y = a x + y` on the GPU, the mean of `y` on the host into `mean`, then `y -= mean` on the GPU.
fn centre(
    s: &mut Stream,
    x: &Buffer<f32>,
    y: &Buffer<f32>,
    mean: &Buffer<f32>,
) -> Result<(), Error> {
    s.kernel("axpy", AXPY)
        .read("x", x)
        .read_write("y", y)
        .run()?;
    s.host("mean")
        .read("values", y)
        .write("mean", mean)
        .run(|h| {
            let values = h.read::<f32>("values")?;
            let sum: f64 = values.iter().map(|&v| f64::from(v)).sum();
            h.write("mean", &[(sum / values.len() as f64) as f32])
        })?;
    s.kernel("centre", CENTRE)
        .read("m", mean)
        .read_write("y", y)
        .run()
}

#[test]
fn a_host_task_runs_between_the_calls_at_once_and_at_every_replay_of_the_recording()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 500;
    let x = gpu.buffer_zeroed::<f32>(n)?;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    let mean = gpu.buffer_zeroed::<f32>(1)?;
    let a = 3.0f32;
    let want = |xs: &[f32], ys: &[f32]| -> Vec<f32> {
        let y: Vec<f32> = xs.iter().zip(ys).map(|(x, y)| a * x + y).collect();
        let m = (y.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64) as f32;
        y.iter().map(|v| v - m).collect()
    };
    let mut s = gpu.stream();
    s.param("a", a)?;
    let (xs, ys) = (random_f32s(&mut rng, n), random_f32s(&mut rng, n));
    x.write(&xs)?;
    y.write(&ys)?;
    centre(&mut s, &x, &y, &mean)?;
    assert_close(&s.read(&y)?, &want(&xs, &ys), "eager");
    // A name the call did not give is an error naming those it did.
    let wrong = s
        .host("peek")
        .read("values", &y)
        .run(|h| h.read::<f32>("vals").map(drop))
        .expect_err("no buffer `vals`");
    assert!(wrong.to_string().contains("`values`"), "{wrong}");
    // Recorded: a host node between the kernels, its closure running at every replay.
    let mut builder = GraphBuilder::new("Centre");
    let recorded = {
        let mut rec = s.begin_recording(&mut builder)?;
        centre(&mut rec, &x, &y, &mean)?;
        rec.end()?
    };
    let desc = builder.build(&LIBRARY)?;
    assert_eq!(
        desc.partitions.len(),
        3,
        "GPU, host, GPU: {:?}",
        desc.partitions
    );
    let mut g = recorded.bake(&gpu, desc)?;
    g.set_param("a", a)?;
    for round in 0..2 {
        let (xs, ys) = (random_f32s(&mut rng, n), random_f32s(&mut rng, n));
        x.write(&xs)?;
        y.write(&ys)?;
        g.replay()?.wait()?;
        assert_close(&read(&y), &want(&xs, &ys), &format!("replay {round}"));
    }
    Ok(())
}

/// `w = x * x` on the GPU, a copy of `w` into `z` recorded by an interop task with wgpu's own encoder, then
/// `z = a x + z`.
fn square_copy_axpy(
    s: &mut Stream,
    x: &Buffer<f32>,
    w: &Buffer<f32>,
    z: &Buffer<f32>,
) -> Result<(), Error> {
    s.kernel("square", SQUARE)
        .read("v", x)
        .write("w", w)
        .run()?;
    s.interop("copy")
        .read("from", w)
        .write("to", z)
        .run(|ctx| {
            let (from, to) = (ctx.buffer("from")?, ctx.buffer("to")?);
            ctx.encoder()
                .copy_buffer_to_buffer(&from, 0, &to, 0, Some(from.size()));
            Ok(())
        })?;
    s.kernel("axpy", AXPY).read("x", x).read_write("y", z).run()
}

#[test]
fn an_interop_task_records_its_work_in_order_at_once_and_at_every_replay() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 300;
    let x = gpu.buffer_zeroed::<f32>(n)?;
    let w = gpu.buffer_zeroed::<f32>(n)?;
    let z = gpu.buffer_zeroed::<f32>(n)?;
    let a = -1.5f32;
    let want = |xs: &[f32]| -> Vec<f32> { xs.iter().map(|x| a * x + x * x).collect() };
    let mut s = gpu.stream();
    s.param("a", a)?;
    let xs = random_f32s(&mut rng, n);
    x.write(&xs)?;
    poison_f32(&z);
    square_copy_axpy(&mut s, &x, &w, &z)?;
    assert_close(&s.read(&z)?, &want(&xs), "eager");
    let mut builder = GraphBuilder::new("Interop");
    let recorded = {
        let mut rec = s.begin_recording(&mut builder)?;
        square_copy_axpy(&mut rec, &x, &w, &z)?;
        rec.end()?
    };
    // The stream's value of `a` when the recording ended is the baked graph's.
    let mut g = recorded.bake(&gpu, builder.build(&LIBRARY)?)?;
    assert_eq!(g.param::<f32>("a")?, a);
    for round in 0..2 {
        let xs = random_f32s(&mut rng, n);
        x.write(&xs)?;
        poison_f32(&z);
        g.replay()?.wait()?;
        assert_close(&read(&z), &want(&xs), &format!("replay {round}"));
    }
    Ok(())
}

/// `y = 2` then `y = a x + y`, read back as `got`.
fn axpy_read_back(s: &mut Stream, x: &Buffer<f32>, y: &Buffer<f32>) -> Result<(), Error> {
    s.fill("twos", y, "2.0")?;
    s.kernel("axpy", AXPY)
        .read("x", x)
        .read_write("y", y)
        .run()?;
    s.readback("got", y)
}

#[test]
fn a_readback_is_kept_for_the_app_at_once_and_is_a_node_when_recorded() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = 200;
    let x = gpu.buffer_zeroed::<f32>(n)?;
    let y = gpu.buffer_zeroed::<f32>(n)?;
    let a = 0.25f32;
    let want = |xs: &[f32]| -> Vec<f32> { xs.iter().map(|x| a * x + 2.0).collect() };
    let mut s = gpu.stream();
    s.param("a", a)?;
    let xs = random_f32s(&mut rng, n);
    x.write(&xs)?;
    axpy_read_back(&mut s, &x, &y)?;
    // Overwritten after the readback: what it kept is what `y` held then.
    s.fill("later", &y, "7.0")?;
    let wrong = s.take_readback::<u32>("got").expect_err("of f32s");
    assert!(
        wrong.to_string().contains("it read `f32`s, not `u32`s"),
        "{wrong}"
    );
    assert_close(
        &s.take_readback::<f32>("got")?,
        &want(&xs),
        "after a wrong take",
    );
    let again = s.take_readback::<f32>("got").expect_err("taken");
    assert!(again.to_string().contains("`got`"), "{again}");
    let mut builder = GraphBuilder::new("ReadBack");
    let recorded = {
        let mut rec = s.begin_recording(&mut builder)?;
        axpy_read_back(&mut rec, &x, &y)?;
        rec.end()?
    };
    let mut g = recorded.bake(&gpu, builder.build(&LIBRARY)?)?;
    g.set_param("a", a)?;
    let xs = random_f32s(&mut rng, n);
    x.write(&xs)?;
    let finished = g.replay()?.wait()?;
    assert_close(&finished.read_named::<f32>("got")?, &want(&xs), "replay");
    Ok(())
}

/// The square of `v` into `w`, as a graph of its own.
fn square_graph(gpu: &Gpu, v: &Buffer<f32>, w: &Buffer<f32>) -> Result<BakedGraph, Error> {
    let mut b = GraphBuilder::new("Square");
    b.kernel(
        "square",
        KernelSpec::wgsl(SQUARE)
            .bind("v", "v", AccessMode::Read)
            .bind("w", "w", AccessMode::Write)
            .threads(&["w.len()"]),
    );
    b.buffer("v", "f32", Role::Input, None)
        .buffer("w", "f32", Role::Output, None);
    BakedGraph::bake(
        gpu,
        b.build(&LIBRARY)?,
        &[("v", v.as_any()), ("w", w.as_any())],
    )
}

#[test]
fn eager_calls_are_submitted_together_and_in_order_with_the_rest_of_the_queue() -> Result<(), Error>
{
    for (gpu, storage) in common::both_parameter_storages() {
        let mut rng = rng();
        let n = 300;
        let (x0, x1, y0) = (
            random_f32s(&mut rng, n),
            random_f32s(&mut rng, n),
            random_f32s(&mut rng, n),
        );
        let x = gpu.buffer_from_slice(&x0)?;
        let y = gpu.buffer_from_slice(&y0)?;
        let w = gpu.buffer_zeroed::<f32>(n)?;
        poison_f32(&w);
        let a = 0.5f32;
        let mut want: Vec<f32> = y0.clone();
        // Replayed once first: its first replay's init pass goes through wgpu, a later one may not.
        let mut square = square_graph(&gpu, &y, &w)?;
        square.replay()?.wait()?;
        let batch = 16;
        let mut s = gpu.stream();
        s.param("a", a)?.batch(batch);
        let axpy = |s: &mut Stream| {
            s.kernel("axpy", AXPY)
                .read("x", &x)
                .read_write("y", &y)
                .run()
        };
        axpy(&mut s)?;
        assert_eq!(
            gpu.queue().pending(),
            1,
            "{storage:?}: the call is kept back"
        );
        // The application's write reaches the GPU after the call made before it.
        x.write(&x1)?;
        assert_eq!(
            gpu.queue().pending(),
            0,
            "{storage:?}: the write submits it first"
        );
        for (w, x) in want.iter_mut().zip(&x0) {
            *w += a * x;
        }
        assert_close(&read(&y), &want, &format!("{storage:?} y before the write"));
        // (That read's submission also took the write: the replay below has no queued write to go with.)
        axpy(&mut s)?;
        for (w, x) in want.iter_mut().zip(&x1) {
            *w += a * x;
        }
        // Another graph's replay, reading `y`, runs after the call too (submitted to Vulkan by the runtime
        // where it can be). `w` holds the squares of `y0` from the first replay.
        square.replay()?.wait()?;
        assert_eq!(
            gpu.queue().pending(),
            0,
            "{storage:?}: the replay submits it"
        );
        let squares: Vec<f32> = want.iter().map(|v| v * v).collect();
        assert_close(&read(&w), &squares, &format!("{storage:?} squares"));
        // A run of calls goes in submissions of `batch` calls; the rest waits for the next submission.
        let submissions = gpu.queue().submissions();
        for call in 1..=batch + 3 {
            axpy(&mut s)?;
            let kept = call % batch;
            assert_eq!(
                gpu.queue().pending(),
                kept,
                "{storage:?}: after call {call}"
            );
            for (w, x) in want.iter_mut().zip(&x1) {
                *w += a * x;
            }
        }
        // Dropping the stream submits what it kept back: two submissions for the run.
        drop(s);
        assert_eq!(gpu.queue().pending(), 0, "{storage:?}: dropped");
        assert_eq!(
            gpu.queue().submissions() - submissions,
            2,
            "{storage:?}: submissions"
        );
        assert_close(&read(&y), &want, &format!("{storage:?} y"));
        // Unbatched (the default), a call is submitted at once.
        let mut plain = gpu.stream();
        plain.param("a", a)?;
        axpy(&mut plain)?;
        assert_eq!(gpu.queue().pending(), 0, "{storage:?}: unbatched");
    }
    Ok(())
}

#[test]
fn a_kernel_read_from_a_file_runs_at_once_records_as_the_builders_and_its_mistakes_name_the_file()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let dir = std::env::temp_dir().join(format!("stream-kernel-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let good = dir.join("axpy.wgsl");
    std::fs::write(&good, AXPY).expect("written");
    // A mistake on its fourth line: `y` is read, but the WGSL writes it.
    let bad = dir.join("bad_axpy.wgsl");
    std::fs::write(&bad, AXPY).expect("written");
    let n = 150;
    let (xs, ys) = (random_f32s(&mut rng, n), random_f32s(&mut rng, n));
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_from_slice(&ys)?;
    let a = 1.5f32;
    let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| a * x + y).collect();
    let mut s = gpu.stream();
    s.param("a", a)?;
    s.kernel_file("axpy", &good)?
        .read("x", &x)
        .read_write("y", &y)
        .run()?;
    assert_close(&s.read(&y)?, &want, "at once");
    let wrong = s
        .kernel_file("bad", &bad)?
        .read("x", &x)
        .read("y", &y)
        .run()
        .expect_err("y is written");
    let text = wrong.to_string();
    assert!(text.contains("bad_axpy.wgsl"), "{text}");
    let missing = s
        .kernel_file("missing", dir.join("missing.wgsl"))
        .err()
        .map(|e| e.to_string());
    assert!(
        missing
            .as_deref()
            .is_some_and(|t| t.contains("`missing`") && t.contains("missing.wgsl")),
        "{missing:?}"
    );
    // Recorded, it is the builder's kernel read from the same file.
    let mut builder = GraphBuilder::new("FromFile");
    {
        let mut rec = s.begin_recording(&mut builder)?;
        rec.kernel_file("axpy", &good)?
            .read("x", &x)
            .read_write("y", &y)
            .run()?;
        rec.end()?;
    }
    let mut by_hand = GraphBuilder::new("FromFile");
    by_hand
        .kernel(
            "axpy",
            KernelSpec::wgsl_file(&good)
                .expect("read")
                .bind("x", "x", AccessMode::Read)
                .bind("y", "y", AccessMode::ReadWrite),
        )
        .param("a", "f32")
        .buffer("x", "f32", Role::Input, None)
        .buffer("y", "f32", Role::InOut, None);
    assert_eq!(builder.build(&LIBRARY)?, by_hand.build(&LIBRARY)?);
    std::fs::remove_dir_all(&dir).expect("removed");
    Ok(())
}
