//! Upload and readback nodes: host data into a replay and results out of it, in the replay's own submission,
//! each replay with its own data, several in flight.

#![forbid(unsafe_code)]

mod common;

use common::{assert_exact, gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{Error, graph};

graph! {
    /// `y = x * k + t[i % 4]`, `t` uploaded each replay; `y` from its second element and `t` read back.
    graph Transfers {
        params { k: f32 }
        buffers { x: [f32] = input, y: [f32] = output, t: [f32; 4] }
        upload bias(t);
        kernel add(x: read, t: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < arrayLength(&y)) { y[i] = x[i] * params.k + t[i % 4u]; }
            }
        }
        readback out(y[1..]);
        readback head(t);
    }
}

fn expected(xs: &[f32], k: f32, t: &[f32]) -> Vec<f32> {
    xs.iter()
        .enumerate()
        .map(|(i, &x)| x * k + t[i % 4])
        .collect()
}

#[test]
fn each_replay_uploads_its_data_and_reads_back_its_results() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for len in [1, 2 + random_u32(&mut rng, 5000) as usize] {
        let xs = random_f32s(&mut rng, len);
        let x = gpu.buffer_from_slice(&xs)?;
        let y = gpu.buffer_zeroed::<f32>(len)?;
        let mut g = Transfers::bake(&gpu, TransfersBuffers { x: &x, y: &y })?;
        for _ in 0..3 {
            poison_f32(&y);
            let t = random_f32s(&mut rng, 4);
            let k = random_f32s(&mut rng, 1)[0];
            g.params_mut().k = k;
            g.upload(Transfers::UPLOADS.bias, &t)?;
            let finished = g.replay()?.wait()?;
            let want = expected(&xs, k, &t);
            assert_exact(&finished.read(Transfers::READBACKS.out)?, &want[1..], "out");
            assert_exact(&finished.read(Transfers::READBACKS.head)?, &t, "head");
            assert_exact(&read(&y), &want, "y");
        }
    }
    Ok(())
}

#[test]
fn replays_in_flight_each_keep_their_own_upload_and_readback() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let len = 1000 + random_u32(&mut rng, 1000) as usize;
    let xs = random_f32s(&mut rng, len);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(len)?;
    let mut g = Transfers::bake(&gpu, TransfersBuffers { x: &x, y: &y })?;
    g.params_mut().k = 2.0;
    let mut in_flight = Vec::new();
    for _ in 0..4 {
        let t = random_f32s(&mut rng, 4);
        g.upload(Transfers::UPLOADS.bias, &t)?;
        in_flight.push((t, g.replay()?));
    }
    // Waited for in reverse: the last replay's data must not have overwritten the first's.
    for (t, submission) in in_flight.into_iter().rev() {
        let finished = submission.wait()?;
        assert_exact(&finished.read(Transfers::READBACKS.head)?, &t, "head");
        assert_exact(
            &finished.read(Transfers::READBACKS.out)?,
            &expected(&xs, 2.0, &t)[1..],
            "out",
        );
    }
    Ok(())
}

#[test]
fn a_replay_without_its_upload_is_an_error_never_stale_data() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_from_slice(&[1.0f32; 8])?;
    let y = gpu.buffer_zeroed::<f32>(8)?;
    let mut g = Transfers::bake(&gpu, TransfersBuffers { x: &x, y: &y })?;
    let missing = g.replay().expect_err("no data yet");
    assert!(
        matches!(&missing, Error::UploadMissing { node, .. } if node == "bias"),
        "{missing}"
    );
    g.upload(Transfers::UPLOADS.bias, &[1.0; 4])?;
    g.replay_blocking()?;
    // The replay took the data: the next one needs its own.
    assert!(matches!(g.replay(), Err(Error::UploadMissing { .. })));
    // Wrong lengths are refused at once, and the graph stays usable.
    let short = g
        .upload(Transfers::UPLOADS.bias, &[1.0; 3])
        .expect_err("short");
    assert!(
        short.to_string().contains("uploads 4 elements, not 3"),
        "{short}"
    );
    g.upload(Transfers::UPLOADS.bias, &[0.5; 4])?;
    let finished = g.replay_blocking()?;
    assert_exact(
        &finished.read(Transfers::READBACKS.head)?,
        &[0.5; 4],
        "head",
    );
    Ok(())
}

#[test]
fn untyped_uploads_and_readbacks_are_checked_by_name_and_type() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_from_slice(&[1.0f32; 8])?;
    let y = gpu.buffer_zeroed::<f32>(8)?;
    let g = Transfers::bake(&gpu, TransfersBuffers { x: &x, y: &y })?;
    let mut untyped = graph_runtime::BakedGraph::bake(
        &gpu,
        g.untyped().description().clone(),
        &[("x", x.as_any()), ("y", y.as_any())],
    )?;
    let wrong_type = untyped
        .upload("bias", &[1u32; 4])
        .expect_err("u32 into f32");
    assert!(
        wrong_type
            .to_string()
            .contains("uploads `f32` elements, not `u32`"),
        "{wrong_type}"
    );
    let unknown = untyped.upload("bais", &[1.0f32; 4]).expect_err("unknown");
    assert!(unknown.to_string().contains("`bias`"), "{unknown}");
    untyped.upload("bias", &[3.0f32; 4])?;
    let finished = untyped.replay_blocking()?;
    assert_eq!(finished.read_named::<f32>("head")?, vec![3.0; 4]);
    let wrong = finished.read_named::<u32>("head").expect_err("f32 as u32");
    assert!(
        wrong
            .to_string()
            .contains("reads back `f32` elements, not `u32`"),
        "{wrong}"
    );
    assert!(
        finished.read_named::<f32>("add").is_err(),
        "a kernel is no readback"
    );
    Ok(())
}

graph! {
    /// A graph whose readback `result` has the index and element type of `Transfers`'s `head`: only its graph
    /// tells the two handles apart.
    graph Other {
        buffers { a: [f32; 4] = inout }
        upload weights(a);
        empty first;
        empty second;
        readback result(a);
    }
}

#[test]
fn an_untyped_replay_refuses_another_graphs_readback_handle() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_from_slice(&[1.0f32; 8])?;
    let y = gpu.buffer_zeroed::<f32>(8)?;
    let mut untyped = graph_runtime::BakedGraph::bake(
        &gpu,
        Transfers::DESCRIPTION,
        &[("x", x.as_any()), ("y", y.as_any())],
    )?;
    untyped.upload("bias", &[3.0f32; 4])?;
    let finished = untyped.replay_blocking()?;
    // A handle of this graph is checked and read.
    assert_eq!(finished.read(Transfers::READBACKS.head)?, vec![3.0; 4]);
    assert_eq!(
        Other::READBACKS.result.node(),
        Transfers::READBACKS.head.node()
    );
    let foreign = finished
        .read(Other::READBACKS.result)
        .expect_err("a readback of graph `Other`");
    let message = foreign.to_string();
    assert!(
        message.contains("graph `Transfers`") && message.contains("graph `Other`"),
        "{message}"
    );
    Ok(())
}

graph! {
    /// `y = x + 1` on the GPU, then a host task turns `y` into its running sum in `z` (typed: `h.y()`,
    /// `h.write_z(..)`), then `w = z * 2` on the GPU.
    graph Prefix {
        buffers { x: [f32; 1024] = input, y: [f32; 1024], z: [f32; 1024], w: [f32; 1024] = output }
        kernel inc(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x] + 1.0; }
            }
        }
        host scan(y: read, z: write);
        kernel double(z: read, w: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&w)) { w[gid.x] = z[gid.x] * 2.0; }
            }
        }
    }
}

#[test]
fn a_typed_host_task_reads_and_writes_its_declared_buffers() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    // Small integers: every sum is exact in `f32`, whatever the order.
    let xs = common::random_small_ints(&mut rng, 1024);
    let x = gpu.buffer_from_slice(&xs)?;
    let w = gpu.buffer_zeroed::<f32>(1024)?;
    poison_f32(&w);
    let mut g = Prefix::bake(&gpu, PrefixBuffers { x: &x, w: &w })?;
    g.on_host(Prefix::HOSTS.scan, |h| {
        let y: Vec<f32> = h.y()?;
        let mut sum = 0.0;
        let running: Vec<f32> = y
            .iter()
            .map(|v| {
                sum += v;
                sum
            })
            .collect();
        h.write_z(&running)
    })?;
    g.replay_blocking()?;
    let mut sum = 0.0;
    let want: Vec<f32> = xs
        .iter()
        .map(|x| {
            sum += x + 1.0;
            sum * 2.0
        })
        .collect();
    assert_exact(&read(&w), &want, "w");
    // A write of the wrong length is the replay's error, not a panic, and the graph stays usable.
    g.on_host(Prefix::HOSTS.scan, |h| h.write_z(&[1.0; 3]))?;
    let short = g.replay_blocking().expect_err("3 of 1024");
    assert!(short.to_string().contains("1024"), "{short}");
    Ok(())
}

graph! {
    /// A graph without readback nodes.
    graph NoReadbacks {
        buffers { a: [f32; 4] = inout }
        fill zero(a = 0.0);
    }
}

/// A replay of a graph without readbacks still knows its graph: what is asked of it is refused in words
/// naming the graph and the node.
#[test]
fn a_replay_without_readbacks_names_its_graph_when_refusing() -> Result<(), Error> {
    let gpu = gpu();
    let a = gpu.buffer_zeroed::<f32>(4)?;
    let mut untyped =
        graph_runtime::BakedGraph::bake(&gpu, NoReadbacks::DESCRIPTION, &[("a", a.as_any())])?;
    let finished = untyped.replay_blocking()?;
    let by_name = finished.read_named::<f32>("zero").expect_err("a fill");
    assert!(
        by_name.to_string().contains("`NoReadbacks`") && by_name.to_string().contains("`zero`"),
        "{by_name}"
    );
    let handle = finished
        .read(Other::READBACKS.result)
        .expect_err("another graph's handle");
    assert!(
        handle.to_string().contains("`NoReadbacks`") && handle.to_string().contains("`Other`"),
        "{handle}"
    );
    Ok(())
}
