//! Direct submission: on Vulkan a replay of kernels alone is submitted to Vulkan by the runtime, and each
//! rule that orders it against wgpu's work holds. Each rule's test runs fault-free (every round right) and
//! with the rule turned off (`plant_ordering_fault`), where it must catch the fault: the queued-writes rule
//! wherever replays are direct; the two timeline rules only where the runtime submits to a second queue (on
//! one queue, the replay's own first and last barriers order it too, so turning the wait off changes nothing
//! there, and the test says so).

#![forbid(unsafe_code)]

mod common;

use common::{gpu, native_expected, rng};
use graph_runtime::__private::OrderingFault;
use graph_runtime::{Baked, Buffer, Error, Gpu, Work, graph, wgpu};
use proptest::prelude::Rng;

graph! {
    /// `y = x + 1`, after `spins` rounds of busy work per element (a replay long enough for work around it to
    /// overlap it when nothing orders them).
    graph Inc {
        params { spins: u32 }
        buffers { x: [u32] = input, y: [u32] = output }
        kernel inc(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i >= arrayLength(&y)) { return; }
                var acc = x[i];
                for (var k = 0u; k < params.spins; k++) { acc = acc * 1664525u + 1013904223u; }
                // `spins` is never u32::MAX here: the busy work cannot be optimised away, and adds nothing.
                y[i] = x[i] + 1u + select(0u, acc, params.spins == 0xffffffffu);
            }
        }
    }
}

const LEN: usize = 1 << 21;
const ROUNDS: usize = 12;

fn fresh(len: usize) -> Vec<u32> {
    let mut rng = rng();
    (0..len).map(|_| rng.next_u32() >> 1).collect()
}

fn plus_one(x: &[u32]) -> Vec<u32> {
    x.iter().map(|v| v + 1).collect()
}

/// A baked `Inc` with its `x` and `y`.
type IncOver = (Baked<Inc>, Buffer<u32>, Buffer<u32>);

/// `Inc` baked over fresh buffers of `len` elements, replayed once (the first replay goes through wgpu,
/// with the pass that makes wgpu see the buffers initialised).
fn baked(gpu: &Gpu, len: usize, spins: u32) -> Result<IncOver, Error> {
    let x = gpu.buffer_zeroed::<u32>(len)?;
    let y = gpu.buffer_zeroed::<u32>(len)?;
    let mut g = Inc::bake(gpu, IncBuffers { x: &x, y: &y })?;
    g.params_mut().spins = spins;
    g.replay()?.wait()?;
    Ok((g, x, y))
}

/// Whether replays on `gpu` are expected to be direct: Vulkan, the native recorder, and not
/// `GRAPH_RUNTIME_SUBMIT=wgpu`.
fn direct_expected(gpu: &Gpu) -> bool {
    native_expected(gpu) && std::env::var(graph_runtime::env::SUBMIT_ENV).as_deref() != Ok("wgpu")
}

/// Replays `g` and waits; checks that it went the way `gpu` is expected to submit it.
fn replay(gpu: &Gpu, g: &mut Baked<Inc>) -> Result<(), Error> {
    let work = g.replay()?.into_work().expect("the replay has GPU work");
    assert_eq!(
        work.is_direct(),
        direct_expected(gpu),
        "submitted as expected ({})",
        gpu.queue().submission_path()
    );
    gpu.wait_for(Some(work))
}

#[test]
fn a_partition_of_kernels_alone_is_submitted_directly_and_one_with_readbacks_through_wgpu()
-> Result<(), Error> {
    let gpu = gpu();
    let data = fresh(1024);
    let x = gpu.buffer_from_slice(&data)?;
    let y = gpu.buffer_from_slice(&vec![u32::MAX; 1024])?;
    let mut g = Inc::bake(&gpu, IncBuffers { x: &x, y: &y })?;
    // The first replay goes through wgpu, with the pass that makes wgpu see the buffers initialised.
    let work = g.replay()?.into_work().expect("GPU work");
    assert!(!work.is_direct(), "the first replay carries the init pass");
    gpu.wait_for(Some(work))?;
    assert_eq!(y.read_blocking()?, plus_one(&data));
    let data = fresh(1024);
    x.write(&data)?;
    replay(&gpu, &mut g)?;
    assert_eq!(y.read_blocking()?, plus_one(&data));
    assert_eq!(
        gpu.queue().wgpu().is_none(),
        gpu.queue().submission_path() != "wgpu",
        "wgpu's queue is handed out only where replays do not go to Vulkan directly"
    );

    // A readback is mapped by wgpu after its submission: that replay goes through wgpu.
    graph! {
        graph Out {
            buffers { x: [u32] = input, y: [u32; 64] }
            kernel inc(x: read, y: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < 64u) { y[gid.x] = x[gid.x] + 1u; }
                }
            }
            readback out(y);
        }
    }
    let x = gpu.buffer_from_slice(&data[..64])?;
    let mut g = Out::bake(&gpu, OutBuffers { x: &x })?;
    for _ in 0..2 {
        let work = g.replay()?.into_work().expect("GPU work");
        assert!(
            !work.is_direct(),
            "a partition with a readback goes through wgpu"
        );
        gpu.wait_for(Some(work))?;
    }

    // A readback, then a host task, then kernels alone: the last partition is direct, and waiting for the
    // replay still maps what the first one read back.
    graph! {
        graph OutThenMore {
            buffers { x: [u32] = input, y: [u32; 64], z: [u32] = output }
            kernel inc(x: read, y: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < 64u) { y[gid.x] = x[gid.x] + 1u; }
                }
            }
            readback out(y);
            host look(y: read_write);
            kernel again(y: read, z: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < 64u) { z[gid.x] = y[gid.x] + 1u; }
                }
            }
        }
    }
    let z = gpu.buffer_zeroed::<u32>(64)?;
    let mut g = OutThenMore::bake(&gpu, OutThenMoreBuffers { x: &x, z: &z })?;
    g.on_host(OutThenMore::HOSTS.look, |_| Ok(()))?;
    for round in 0..3 {
        let fresh = fresh(64);
        x.write(&fresh)?;
        z.write(&[u32::MAX; 64])?;
        let finished = g.replay()?.wait()?;
        assert_eq!(
            finished.read(OutThenMore::READBACKS.out)?,
            plus_one(&fresh),
            "round {round}: the readback before the direct partition"
        );
        assert_eq!(
            z.read_blocking()?,
            plus_one(&plus_one(&fresh)),
            "round {round}"
        );
    }
    let work = g.replay()?.into_work().expect("GPU work");
    assert_eq!(
        work.is_direct(),
        direct_expected(&gpu),
        "the last partition"
    );
    gpu.wait_for(Some(work))?;
    Ok(())
}

/// Rounds of: fresh `x` written through the queue, a replay, `y` read. Returns the rounds whose `y` was
/// not `x + 1`.
fn writes_then_replays(gpu: &Gpu) -> Result<usize, Error> {
    let (mut g, x, y) = baked(gpu, 4096, 0)?;
    let mut wrong = 0;
    for _ in 0..ROUNDS {
        let data = fresh(4096);
        x.write(&data)?;
        replay(gpu, &mut g)?;
        wrong += usize::from(y.read_blocking()? != plus_one(&data));
    }
    Ok(wrong)
}

#[test]
fn a_replay_reads_what_was_written_through_the_queue_before_it() -> Result<(), Error> {
    assert_eq!(writes_then_replays(&gpu())?, 0, "every round right");
    let faulty = gpu();
    if direct_expected(&faulty)
        && faulty
            .queue()
            .plant_ordering_fault(OrderingFault::ReplayBeforeQueuedWrites)
    {
        let wrong = writes_then_replays(&faulty)?;
        assert_eq!(
            wrong, ROUNDS,
            "without the rule every replay reads stale data"
        );
    }
    Ok(())
}

/// A buffer of `len` words on `gpu`, of `usage`.
fn plain(gpu: &Gpu, len: usize, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    gpu.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some("test"),
        size: (len * 4) as u64,
        usage,
        mapped_at_creation: false,
    })
}

/// Copies all of `src` into `dst` in a submission of the test's own, through the `Gpu`'s queue, at once.
fn copy(gpu: &Gpu, src: &wgpu::Buffer, dst: &wgpu::Buffer) -> wgpu::SubmissionIndex {
    let mut encoder = gpu.device().create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
    gpu.queue().submit([encoder.finish()])
}

/// How much busy work makes a submission long enough for unordered work beside it to overlap it: on a GPU,
/// hundreds of microseconds; on a CPU device, where one queue orders everything, little.
fn long(gpu: &Gpu, on_gpu: u32) -> u32 {
    if gpu.summary().contains("Cpu") {
        1 << 4
    } else {
        on_gpu
    }
}

/// `dst = src` after `spins[0]` rounds of busy work per element: the test's own long submission.
const SLOW_COPY: &str = "
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<storage, read> spins: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&dst)) { return; }
    var acc = src[i];
    for (var k = 0u; k < spins[0]; k++) { acc = acc * 1664525u + 1013904223u; }
    dst[i] = src[i] + select(0u, acc, spins[0] == 0xffffffffu);
}
";

/// Rounds of: fresh data written into `x` by a long kernel of the test's own, submitted through the
/// queue, and a replay at once, `y` read. Returns the rounds whose `y` was not `x + 1`.
fn submissions_then_replays(gpu: &Gpu) -> Result<usize, Error> {
    let (mut g, x, y) = baked(gpu, LEN, 0)?;
    let source = plain(
        gpu,
        LEN,
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
    );
    let device = gpu.device();
    let spins = plain(
        gpu,
        1,
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
    );
    gpu.queue()
        .write_buffer(&spins, 0, bytemuck::bytes_of(&long(gpu, 1 << 12)));
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("slow copy"),
        source: wgpu::ShaderSource::Wgsl(SLOW_COPY.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("slow copy"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: source.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: x.wgpu().as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: spins.as_entire_binding(),
            },
        ],
    });
    let mut wrong = 0;
    for _ in 0..ROUNDS {
        let data = fresh(LEN);
        gpu.queue()
            .write_buffer(&source, 0, bytemuck::cast_slice(&data));
        gpu.queue().submit([]);
        gpu.wait_for(None)?;
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups((LEN as u32).div_ceil(64), 1, 1);
        }
        gpu.queue().submit([encoder.finish()]);
        replay(gpu, &mut g)?;
        wrong += usize::from(y.read_blocking()? != plus_one(&data));
    }
    Ok(wrong)
}

#[test]
fn a_replay_reads_what_a_submission_before_it_wrote() -> Result<(), Error> {
    assert_eq!(submissions_then_replays(&gpu())?, 0, "every round right");
    fault_caught(
        OrderingFault::ReplayBeforeEarlierWork,
        submissions_then_replays,
    )
}

/// Rounds of: `y` poisoned, a long replay, then at once a copy of `y` out by a submission of the test's
/// own, mapped and read. Returns the rounds whose copy was not `x + 1`.
fn replays_then_submissions(gpu: &Gpu) -> Result<usize, Error> {
    let len = 1 << 16;
    let (mut g, x, y) = baked(gpu, len, long(gpu, 1 << 18))?;
    let out = plain(
        gpu,
        len,
        wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
    );
    let mut wrong = 0;
    for _ in 0..ROUNDS {
        let data = fresh(len);
        x.write(&data)?;
        y.write(&vec![u32::MAX; len])?;
        let work = g.replay()?.into_work().expect("GPU work");
        assert_eq!(work.is_direct(), direct_expected(gpu));
        let index = copy(gpu, y.wgpu(), &out);
        out.slice(..)
            .map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
        gpu.wait_for(Some(index.into()))?;
        let view = out.slice(..).get_mapped_range().expect("the mapped copy");
        let got: Vec<u32> = bytemuck::cast_slice(&view).to_vec();
        drop(view);
        out.unmap();
        gpu.wait_for(Some(work))?;
        wrong += usize::from(got != plus_one(&data));
    }
    Ok(wrong)
}

#[test]
fn a_submission_after_a_replay_reads_what_it_wrote() -> Result<(), Error> {
    assert_eq!(replays_then_submissions(&gpu())?, 0, "every round right");
    fault_caught(
        OrderingFault::WorkBeforeEarlierReplays,
        replays_then_submissions,
    )
}

/// With `fault` planted on a fresh `Gpu`, `rounds` must find a wrong round where the runtime submits to a
/// second queue; elsewhere the rule is not what orders the work (see the file's comment), and the test says so.
fn fault_caught(
    fault: OrderingFault,
    rounds: impl Fn(&Gpu) -> Result<usize, Error>,
) -> Result<(), Error> {
    let faulty = gpu();
    let path = faulty.queue().submission_path();
    if !direct_expected(&faulty) || !faulty.queue().plant_ordering_fault(fault) {
        eprintln!("{fault:?}: replays go through wgpu here; nothing to plant");
        return Ok(());
    }
    let wrong = rounds(&faulty)?;
    if path == "second queue" {
        assert!(wrong > 0, "{fault:?} planted: some round must go wrong");
    } else {
        eprintln!(
            "{fault:?} planted on {path}: {wrong} of {ROUNDS} rounds wrong (one queue orders them)"
        );
    }
    Ok(())
}

#[test]
fn waiting_for_all_work_waits_for_direct_replays_too() -> Result<(), Error> {
    let gpu = gpu();
    // A replay of tens of milliseconds on llvmpipe, hundreds of microseconds on a GPU.
    let spins = if gpu.summary().contains("Cpu") {
        1 << 10
    } else {
        1 << 18
    };
    let (mut g, x, y) = baked(&gpu, 1 << 16, spins)?;
    for round in 0..3 {
        let data = fresh(1 << 16);
        x.write(&data)?;
        let work: Option<Work> = g.replay()?.into_work();
        assert!(work.is_some());
        gpu.wait_for(None)?;
        // Everything finished: a callback for all work so far runs at the first poll, with nothing new
        // submitted to wait for. Had the wait not waited for the replay, the queue would submit once more
        // to order the callback after it, and a poll at once would not see that finish.
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = done.clone();
        gpu.queue()
            .on_submitted_work_done(move || seen.store(true, std::sync::atomic::Ordering::SeqCst));
        let _ = gpu.device().poll(wgpu::PollType::Poll);
        assert!(
            done.load(std::sync::atomic::Ordering::SeqCst),
            "round {round}: the replay had not finished when the wait for all work returned"
        );
        assert_eq!(y.read_blocking()?, plus_one(&data), "round {round}");
    }
    Ok(())
}
