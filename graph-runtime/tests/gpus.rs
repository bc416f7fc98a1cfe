//! One graph across several GPUs (`Gpus`, `GpusGraph`): two `Gpu`s on this machine's adapter are two devices,
//! between which buffers move as between two GPUs. Each result is checked against the CPU on fresh inputs,
//! outputs poisoned first, and against the same graph baked on one GPU.

#![forbid(unsafe_code)]

mod common;

use common::{assert_exact, gpu, poison_f32, random_small_ints, read, rng};
use graph_runtime::ir::{AccessMode, Role};
use graph_runtime::{
    BakedGraph, Buffer, Error, GpuTransfer, Gpus, GpusGraph, GraphBuilder, KernelSpec, LIBRARY,
    TransferPath, graph,
};

const N: usize = 4096;

graph! {
    /// `t = 2x + a` on GPU 0, `u = t * t` on GPU 1, `y = u - x` on GPU 0: two transfers each way.
    graph Relay {
        params { a: f32 }
        buffers { x: [f32] = input, y: [f32] = output, t: [f32; 4096], u: [f32; 4096] }
        #[on(0)]
        kernel first(x: read, t: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&t)) { t[gid.x] = 2.0 * x[gid.x] + params.a; }
            }
        }
        #[on(1)]
        kernel second(t: read, u: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&u)) { u[gid.x] = t[gid.x] * t[gid.x]; }
            }
        }
        #[on(0)]
        kernel third(u: read, x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = u[gid.x] - x[gid.x]; }
            }
        }
    }
}

/// Two devices on the adapter.
fn two_gpus() -> Gpus {
    Gpus::from_gpus(vec![gpu(), gpu()]).expect("a set of two")
}

/// Two devices on the adapter, their transfers on each path the set has: host memory both import (Vulkan),
/// then staged through the host.
fn two_gpus_on_each_path() -> Vec<Gpus> {
    let shared = two_gpus();
    let mut staged = shared.clone();
    staged
        .set_transfer_path(TransferPath::Staged)
        .expect("this step works");
    match shared.transfer_path() {
        TransferPath::SharedHostMemory => vec![shared, staged],
        TransferPath::Staged => vec![staged],
    }
}

/// `Relay` on the CPU: every value a small integer, so both sides are exact.
fn relay(x: &[f32], a: f32) -> Vec<f32> {
    x.iter()
        .map(|&x| {
            let t = 2.0 * x + a;
            t * t - x
        })
        .collect()
}

#[test]
fn a_chain_across_two_gpus_gives_the_cpus_and_one_gpus_results() {
    for gpus in two_gpus_on_each_path() {
        a_chain_across(&gpus);
    }
}

fn a_chain_across(gpus: &Gpus) {
    let path = gpus.transfer_path();
    let mut rng = rng();
    let x = gpus[0].buffer_zeroed::<f32>(N).expect("this step works");
    let y = gpus[0].buffer_zeroed::<f32>(N).expect("this step works");
    let desc = Relay::DESCRIPTION;
    let mut g = GpusGraph::bake(gpus, desc, &[("x", x.as_any()), ("y", y.as_any())])
        .expect("this step works");
    assert_eq!(g.transfer_path(), path);
    let node = |name: &str| g.gpu_of(name).expect("this step works");
    assert_eq!([node("first"), node("second"), node("third")], [0, 1, 0]);
    let t = desc
        .buffers
        .iter()
        .position(|b| b.name == "t")
        .expect("this step works") as u32;
    let u = desc
        .buffers
        .iter()
        .position(|b| b.name == "u")
        .expect("this step works") as u32;
    let moved: Vec<(u32, u32, Vec<u32>)> = g
        .transfers()
        .iter()
        .map(|t: &GpuTransfer| (t.from, t.to, t.buffers.clone()))
        .collect();
    assert_eq!(moved, [(0, 1, vec![t]), (1, 0, vec![u])]);
    assert_eq!(g.transfer_bytes(), 2 * (N * 4) as u64);

    let one_x = gpus[1].buffer_zeroed::<f32>(N).expect("this step works");
    let one_y = gpus[1].buffer_zeroed::<f32>(N).expect("this step works");
    let mut one = BakedGraph::bake(
        &gpus[1],
        desc,
        &[("x", one_x.as_any()), ("y", one_y.as_any())],
    )
    .expect("this step works");
    // Several replays with fresh inputs: the copies on each GPU follow every one.
    for round in 0..3 {
        let input = random_small_ints(&mut rng, N);
        let a = round as f32 + 1.0;
        x.write(&input).expect("this step works");
        one_x.write(&input).expect("this step works");
        poison_f32(&y);
        poison_f32(&one_y);
        g.set_param("a", a).expect("this step works");
        one.set_param("a", a).expect("this step works");
        g.replay_blocking().expect("this step works");
        one.replay_blocking().expect("this step works");
        let want = relay(&input, a);
        assert_exact(
            &read(&y),
            &want,
            &format!("two GPUs ({path:?}), round {round}"),
        );
        assert_exact(&read(&one_y), &want, &format!("one GPU, round {round}"));
    }
}

/// Vulkan devices that import host memory (`Gpu::new` enables `VK_EXT_external_memory_host` where the driver
/// can import it into a transfer buffer: llvmpipe's and NVIDIA's can) share it, so the tests above run both
/// paths there; elsewhere the shared path is refused with the reason.
#[test]
fn vulkan_devices_share_host_memory_and_other_sets_are_staged() {
    let mut gpus = two_gpus();
    let vulkan = gpus
        .iter()
        .all(|g| g.backend() == Some(wgpu::Backend::Vulkan));
    let report = gpus.external_memory_report().unwrap_or_default();
    let enabled = report
        .matches("VK_EXT_external_memory_host offered, enabled")
        .count();
    if gpus[0].name().contains("llvmpipe") && vulkan {
        // CI's driver: the shared path must be what the tests run.
        assert_eq!(enabled, gpus.len(), "{report}");
    }
    if vulkan && enabled == gpus.len() {
        assert_eq!(gpus.transfer_path(), TransferPath::SharedHostMemory);
    } else {
        assert_eq!(gpus.transfer_path(), TransferPath::Staged);
        let refused = gpus
            .set_transfer_path(TransferPath::SharedHostMemory)
            .expect_err("this step fails");
        assert!(
            refused.to_string().contains("VK_EXT_external_memory_host"),
            "{refused}"
        );
    }
    gpus.set_transfer_path(TransferPath::Staged)
        .expect("this step works");
    assert_eq!(gpus.transfer_path(), TransferPath::Staged);
}

/// Positive control: the comparison the tests use catches one wrong element.
#[test]
#[should_panic(expected = "GPU 1, CPU 2")]
fn the_comparison_catches_one_wrong_element() {
    assert_exact(&[0.0, 1.0], &[0.0, 2.0], "control");
}

/// `out_i = 3 in_i + i` for four independent chains of two kernels over buffers of `lens[i]` elements.
fn branches(lens: &[usize]) -> graph_runtime::GraphDesc {
    let mut b = GraphBuilder::new("Branches");
    for (i, _) in lens.iter().enumerate() {
        b.input(&format!("in{i}"), "f32")
            .output(&format!("out{i}"), "f32")
            .buffer(&format!("mid{i}"), "f32", Role::Output, None);
        let triple = format!(
            "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                 if (gid.x < arrayLength(&mid{i})) {{ mid{i}[gid.x] = 3.0 * in{i}[gid.x]; }} }}"
        );
        let add = format!(
            "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                 if (gid.x < arrayLength(&out{i})) {{ out{i}[gid.x] = mid{i}[gid.x] + {i}.0; }} }}"
        );
        b.kernel(
            &format!("triple{i}"),
            KernelSpec::wgsl(triple)
                .read(&format!("in{i}"))
                .write(&format!("mid{i}")),
        )
        .kernel(
            &format!("add{i}"),
            KernelSpec::wgsl(add)
                .read(&format!("mid{i}"))
                .write(&format!("out{i}")),
        )
        .no_fusion(&format!("triple{i}"))
        .no_fusion(&format!("add{i}"));
    }
    b.build(&LIBRARY).expect("this step works")
}

#[test]
fn the_placement_pass_spreads_independent_branches_by_cost() {
    let gpus = two_gpus();
    let mut rng = rng();
    let lens = [8192, 4096, 4096, 2048];
    let desc = branches(&lens);
    // Every buffer on GPU 0: what the pass places on GPU 1 moves there and back.
    let make = |len: usize| gpus[0].buffer_zeroed::<f32>(len).expect("this step works");
    let ins: Vec<Buffer<f32>> = lens.iter().map(|&n| make(n)).collect();
    let mids: Vec<Buffer<f32>> = lens.iter().map(|&n| make(n)).collect();
    let outs: Vec<Buffer<f32>> = lens.iter().map(|&n| make(n)).collect();
    let names: Vec<[String; 3]> = (0..lens.len())
        .map(|i| [format!("in{i}"), format!("mid{i}"), format!("out{i}")])
        .collect();
    let mut bound = Vec::new();
    for (i, [a, m, o]) in names.iter().enumerate() {
        bound.push((a.as_str(), ins[i].as_any()));
        bound.push((m.as_str(), mids[i].as_any()));
        bound.push((o.as_str(), outs[i].as_any()));
    }
    let mut g = GpusGraph::bake(&gpus, desc, &bound).expect("this step works");
    // Largest first onto the least loaded: 8192 on 0, 4096 on 1, 4096 on 1 (4096 < 8192), 2048 on 0 (a tie
    // goes to the lower index).
    let placed: Vec<[usize; 2]> = (0..lens.len())
        .map(|i| {
            let on = |name: String| g.gpu_of(&name).expect("this step works");
            [on(format!("triple{i}")), on(format!("add{i}"))]
        })
        .collect();
    assert_eq!(placed, [[0, 0], [1, 1], [1, 1], [0, 0]]);
    for round in 0..2 {
        let inputs: Vec<Vec<f32>> = lens
            .iter()
            .map(|&n| random_small_ints(&mut rng, n))
            .collect();
        for (i, input) in inputs.iter().enumerate() {
            ins[i].write(input).expect("this step works");
            poison_f32(&outs[i]);
            poison_f32(&mids[i]);
        }
        g.replay_blocking().expect("this step works");
        for (i, input) in inputs.iter().enumerate() {
            let want: Vec<f32> = input.iter().map(|&x| 3.0 * x + i as f32).collect();
            let what = format!("branch {i} on GPU {}, round {round}", placed[i][0]);
            assert_exact(&read(&outs[i]), &want, &what);
        }
    }
}

#[test]
fn a_buffer_made_on_the_other_gpu_moves_there_and_home_again() {
    let gpus = two_gpus();
    let mut rng = rng();
    let mut b = GraphBuilder::new("Away");
    b.inout("v", "f32").kernel(
        "triple",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                 if (gid.x < arrayLength(&v)) { v[gid.x] = 3.0 * v[gid.x]; } }",
        )
        .read_write("v"),
    );
    b.on("triple", 0);
    let desc = b.build(&LIBRARY).expect("this step works");
    let v = gpus[1].buffer_zeroed::<f32>(N).expect("this step works");
    let mut g = GpusGraph::bake(&gpus, desc, &[("v", v.as_any())]).expect("this step works");
    assert_eq!(g.gpu_of("triple").expect("this step works"), 0);
    assert_eq!(g.transfers().len(), 2, "{:?}", g.transfers());
    let start = random_small_ints(&mut rng, N);
    v.write(&start).expect("this step works");
    // Each replay starts from what the one before left at home.
    for (round, factor) in [3.0f32, 9.0, 27.0].into_iter().enumerate() {
        g.replay_blocking().expect("this step works");
        let want: Vec<f32> = start.iter().map(|&s| s * factor).collect();
        assert_exact(&read(&v), &want, &format!("round {round}"));
    }
}

#[test]
fn uploads_host_tasks_and_readbacks_run_on_their_gpus() {
    let gpus = two_gpus();
    let mut rng = rng();
    let mut b = GraphBuilder::new("Mixed");
    b.owned("a", "f32", N as u64)
        .owned("b", "f32", N as u64)
        .owned("c", "f32", N as u64)
        .owned("d", "f32", N as u64)
        .upload("load", "a")
        .kernel(
            "inc",
            KernelSpec::wgsl(
                "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                     if (gid.x < arrayLength(&b)) { b[gid.x] = a[gid.x] + 1.0; } }",
            )
            .read("a")
            .write("b"),
        )
        .host("double", &[("b", AccessMode::Read), ("c", AccessMode::Write)])
        .kernel(
            "neg",
            KernelSpec::wgsl(
                "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                     if (gid.x < arrayLength(&d)) { d[gid.x] = -c[gid.x]; } }",
            )
            .read("c")
            .write("d"),
        )
        .readback("out", "d")
        .readback("mid", "b");
    b.on("load", 1).on("inc", 1).on("double", 0).on("neg", 0);
    b.on("out", 0).on("mid", 1);
    let desc = b.build(&LIBRARY).expect("this step works");
    let mut g = GpusGraph::bake(&gpus, desc, &[]).expect("this step works");
    g.on_host("double", |ctx| {
        let b: Vec<f32> = ctx.read("b")?;
        ctx.write("c", &b.iter().map(|v| 2.0 * v).collect::<Vec<_>>())
    })
    .expect("this step works");
    for round in 0..2 {
        let input = random_small_ints(&mut rng, N);
        g.upload("load", &input).expect("this step works");
        let done = g.replay_blocking().expect("this step works");
        let mid: Vec<f32> = input.iter().map(|a| a + 1.0).collect();
        let out: Vec<f32> = mid.iter().map(|b| -2.0 * b).collect();
        assert_exact(
            &done.read_named::<f32>("mid").expect("this step works"),
            &mid,
            &format!("mid, {round}"),
        );
        assert_exact(
            &done.read_named::<f32>("out").expect("this step works"),
            &out,
            &format!("out, {round}"),
        );
    }
    g.upload("load", &vec![0.0f32; N]).expect("this step works");
    let unknown = g
        .replay_blocking()
        .expect("this step works")
        .read_named::<f32>("nothing");
    assert!(
        matches!(&unknown, Err(Error::UnknownName { name, .. }) if name == "nothing"),
        "{unknown:?}"
    );
}

#[test]
fn a_failing_gpu_fails_the_replay_naming_it_and_the_graph_until_baked_again() {
    let gpus = two_gpus();
    let x = gpus[0].buffer_zeroed::<f32>(N).expect("this step works");
    let y = gpus[0].buffer_zeroed::<f32>(N).expect("this step works");
    let bound = [("x", x.as_any()), ("y", y.as_any())];
    let mut g = GpusGraph::bake(&gpus, Relay::DESCRIPTION, &bound).expect("this step works");
    g.replay_blocking().expect("this step works");
    gpus[1].device().destroy();
    let failed = g.replay().and_then(|s| s.wait());
    match &failed {
        Err(Error::OnGpu { gpu: 1, source, .. }) => {
            assert!(source.is_device_failure(), "{source}")
        }
        other => panic!("expected GPU 1's failure, got {other:?}"),
    }
    let text = failed.expect_err("this step fails").to_string();
    assert!(text.starts_with("GPU 1 of the set"), "{text}");
    let again = g
        .replay()
        .map(|_| ())
        .expect_err("this step fails")
        .to_string();
    assert!(
        again.contains("GPU 1") && again.contains("bake the graph again"),
        "{again}"
    );
    // Baked again on the GPU that works, the graph runs (on one GPU, placements are ignored).
    let mut rng = rng();
    let input = random_small_ints(&mut rng, N);
    x.write(&input).expect("this step works");
    poison_f32(&y);
    let mut alone =
        BakedGraph::bake(&gpus[0], Relay::DESCRIPTION, &bound).expect("this step works");
    alone.set_param("a", 2.0f32).expect("this step works");
    alone.replay_blocking().expect("this step works");
    assert_exact(&read(&y), &relay(&input, 2.0), "GPU 0 alone");
}

#[test]
fn bake_refuses_a_gpu_the_set_lacks_and_a_buffer_of_another_gpu() {
    let gpus = two_gpus();
    let one = Gpus::from_gpus(vec![gpus[0].clone()]).expect("this step works");
    let x = gpus[0].buffer_zeroed::<f32>(N).expect("this step works");
    let y = gpus[0].buffer_zeroed::<f32>(N).expect("this step works");
    let bound = [("x", x.as_any()), ("y", y.as_any())];
    let err = GpusGraph::bake(&one, Relay::DESCRIPTION, &bound)
        .expect_err("this step fails")
        .to_string();
    assert!(
        err.contains("`second` is placed on GPU 1, and the set has 1"),
        "{err}"
    );
    let elsewhere = gpu().buffer_zeroed::<f32>(N).expect("this step works");
    let bound = [("x", elsewhere.as_any()), ("y", y.as_any())];
    let err = GpusGraph::bake(&gpus, Relay::DESCRIPTION, &bound)
        .expect_err("this step fails")
        .to_string();
    assert!(
        err.contains("`x` was made on a `Gpu` that is not in the set"),
        "{err}"
    );
    let twice =
        Gpus::from_gpus(vec![gpus[0].clone(), gpus[0].clone()]).expect_err("this step fails");
    assert!(twice.to_string().contains("are one `Gpu`"), "{twice}");
}
