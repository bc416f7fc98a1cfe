//! Faults become errors, each reported by the operation that caused it: foreign buffers, panicking host tasks,
//! sizes that overflow, device errors of one graph seen by another, waits that wait for other graphs, a lost
//! device, async reads that spin, and descriptions that did not come from the checks.

#![forbid(unsafe_code)]

mod common;

use std::future::IntoFuture;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use common::{gpu, gpu_without_immediates, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{Baked, BakedGraph, Error, Gpu, Submission, graph, wgpu};

graph! {
    /// y = 2 x.
    graph Double {
        buffers { x: [f32] = input, y: [f32] = output }
        kernel k(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = 2.0 * x[gid.x]; }
            }
        }
    }
}

graph! {
    /// Keeps the GPU busy: `spins` rounds of xorshift on every element.
    graph Slow {
        params { spins: u32 }
        buffers { x: [u32] = inout }
        kernel spin(x: read_write) file("tests/wgsl/spin.wgsl");
    }
}

/// A baked [`Slow`] over a million elements, about a second of llvmpipe's time per replay.
fn slow(gpu: &Gpu) -> Result<(Baked<Slow>, graph_runtime::Buffer<u32>), Error> {
    let x = gpu.buffer_zeroed::<u32>(1 << 20)?;
    let mut g = Slow::bake(gpu, SlowBuffers { x: &x })?;
    g.params_mut().spins = 4096;
    Ok((g, x))
}

/// Set when all work submitted so far on `gpu` has finished (and the device was polled since).
fn done_flag(gpu: &Gpu) -> Arc<AtomicBool> {
    let done = Arc::new(AtomicBool::new(false));
    let set = done.clone();
    gpu.queue()
        .on_submitted_work_done(move || set.store(true, Ordering::SeqCst));
    done
}

#[test]
fn a_buffer_made_on_another_gpu_is_an_error_naming_it() -> Result<(), Error> {
    let (first, second) = (gpu(), gpu());
    let x = first.buffer_zeroed::<f32>(64)?;
    let foreign = second.buffer_zeroed::<f32>(64)?;
    let result = Double::bake(&first, DoubleBuffers { x: &x, y: &foreign });
    assert!(
        matches!(&result, Err(Error::ForeignBuffer { buffer, .. }) if buffer == "y"),
        "{result:?}"
    );
    // Clones of a `Gpu` are the same `Gpu`.
    let y = first.clone().buffer_zeroed::<f32>(64)?;
    Double::bake(&first, DoubleBuffers { x: &x, y: &y })?;
    Ok(())
}

graph! {
    /// A kernel, a host task, a kernel.
    graph Hosted {
        buffers { x: [f32] = inout, y: [f32] = output }
        kernel first(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] + 1.0; }
            }
        }
        host look(x: read);
        kernel second(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x]; }
            }
        }
    }
}

#[test]
fn a_panicking_host_task_is_an_error_and_the_graph_stays_usable() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    // Work of another graph in flight while the host task panics.
    let xs = random_f32s(&mut rng, 256);
    let (dx, dy) = (gpu.buffer_from_slice(&xs)?, gpu.buffer_zeroed::<f32>(256)?);
    poison_f32(&dy);
    let mut double = Double::bake(&gpu, DoubleBuffers { x: &dx, y: &dy })?;
    let in_flight = double.replay()?;

    let (x, y) = (gpu.buffer_zeroed::<f32>(64)?, gpu.buffer_zeroed::<f32>(64)?);
    let mut hosted = Hosted::bake(&gpu, HostedBuffers { x: &x, y: &y })?;
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    hosted.on_host(Hosted::HOSTS.look, move |_| {
        if counted.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("the first look fails");
        }
        Ok(())
    })?;
    let result = hosted.replay();
    match &result {
        Err(Error::HostTaskPanicked {
            graph,
            node,
            message,
        }) => {
            assert_eq!((graph.as_str(), node.as_str()), ("Hosted", "look"));
            assert_eq!(message, "the first look fails");
        }
        other => panic!("expected HostTaskPanicked, got {other:?}"),
    }
    // The other graph's submission is still waitable and right.
    in_flight.wait()?;
    let expected: Vec<f32> = xs.iter().map(|v| 2.0 * v).collect();
    assert_eq!(read(&dy), expected);
    // The next replay runs the task again and finishes the graph.
    poison_f32(&y);
    hosted.replay_blocking()?;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // `x` went up by one in each replay, the failed one included (its first partition had run).
    assert_eq!(read(&y), vec![2.0; 64]);
    Ok(())
}

graph! {
    /// Sized by a product, a difference and a quotient of parameters.
    graph Sized {
        params { w: u32, h: u32, d: u32 }
        buffers { y: [u32] = output }
        kernel k(y: write) threads(params.w * params.h, params.w - params.h + 1, params.h / params.d) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = gid.x; }
            }
        }
    }
}

#[test]
fn a_size_that_overflows_is_an_error_never_a_wrong_dispatch() -> Result<(), Error> {
    let gpu = gpu();
    let y = gpu.buffer_zeroed::<u32>(1024)?;
    let mut g = Sized::bake(&gpu, SizedBuffers { y: &y })?;
    let cases = [
        (
            SizedParams::new(70_000, 70_000, 1),
            "params.w * params.h",
            "`70000 * 70000` overflows u32",
        ),
        (
            SizedParams::new(3, 5, 1),
            "params.w - params.h + 1",
            "`3 - 5` is negative",
        ),
        (
            SizedParams::new(8, 4, 0),
            "params.h / params.d",
            "`4 / 0` divides by zero",
        ),
    ];
    for (params, expression, reason) in cases {
        *g.params_mut() = params;
        match g.replay() {
            Err(Error::DispatchSize {
                node,
                expression: e,
                reason: r,
                ..
            }) => {
                assert_eq!(node, "k");
                assert_eq!(e, expression, "the expression is the whole dimension");
                assert_eq!(r, reason);
            }
            other => panic!("expected a DispatchSize error for {expression}, got {other:?}"),
        }
    }
    // A good size after bad ones.
    *g.params_mut() = SizedParams::new(32, 32, 32);
    g.replay_blocking()?;
    assert!(read(&y).into_iter().eq(0..1024), "y[i] = i");
    Ok(())
}

#[test]
fn buffer_sizes_are_checked_never_wrapped_or_cut() -> Result<(), Error> {
    let gpu = gpu();
    // More elements than a kernel can index.
    let result = gpu.buffer_zeroed::<f32>(1 << 33);
    assert!(
        matches!(result, Err(Error::BufferTooLarge { elements, .. }) if elements == 1 << 33),
        "{result:?}"
    );
    // More bytes than the device allows in one buffer.
    let limit = gpu.device().limits().max_buffer_size;
    let len = (limit / 16 + 1) as usize;
    let result = gpu.buffer_zeroed::<[f32; 4]>(len);
    assert!(
        matches!(&result, Err(Error::BufferTooLarge { reason, .. }) if reason.contains("limit")),
        "{result:?}"
    );
    // A wgpu buffer whose length in elements does not fit in u32 is refused, not cut to u32::MAX.
    let wrapped = graph_runtime::AnyBuffer::from_wgpu(
        &gpu,
        gpu.buffer_zeroed::<f32>(4)?.wgpu().clone(),
        graph_runtime::ir::ValueType::F32,
    )?;
    assert_eq!(wrapped.len(), 4);
    Ok(())
}

/// A buffer of 16 bytes and a write past its end: a wgpu validation error, on purpose.
fn invalid_write(gpu: &Gpu, target: &wgpu::Buffer) {
    gpu.queue().write_buffer(target, 64, &[0u8; 16]);
}

#[test]
fn device_errors_go_to_the_graph_that_caused_them() -> Result<(), Error> {
    let gpu = gpu();
    let target = gpu.buffer_zeroed::<f32>(4)?;
    let (x, y) = (gpu.buffer_zeroed::<f32>(64)?, gpu.buffer_zeroed::<f32>(64)?);
    let mut faulty = Hosted::bake(&gpu, HostedBuffers { x: &x, y: &y })?;
    let (planter, raw) = (gpu.clone(), target.wgpu().clone());
    faulty.on_host(Hosted::HOSTS.look, move |_| {
        invalid_write(&planter, &raw);
        Ok(())
    })?;
    let (dx, dy) = (gpu.buffer_zeroed::<f32>(64)?, gpu.buffer_zeroed::<f32>(64)?);
    let mut healthy = Double::bake(&gpu, DoubleBuffers { x: &dx, y: &dy })?;

    // The faulty graph's replay reports its own error, under its name; the healthy one, before and after,
    // none.
    healthy.replay_blocking()?;
    let result = faulty.replay();
    assert!(
        matches!(&result, Err(Error::InGraph { graph, source }) if graph == "Hosted"
            && matches!(&**source, Error::Gpu(message) if message.contains("write_buffer") || message.contains("Write"))),
        "{result:?}"
    );
    let message = result.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.starts_with("graph `Hosted`: "), "{message}");
    healthy.replay_blocking()?;
    gpu.check()?;

    // On two threads at once: one graph's errors never reach the other's replays.
    let errors = std::thread::scope(|s| {
        let faulty_thread = s.spawn(|| {
            (0..10)
                .map(|_| faulty.replay().and_then(|r| r.wait()))
                .filter(Result::is_err)
                .count()
        });
        let healthy_thread = s.spawn(|| {
            (0..10)
                .map(|_| healthy.replay().and_then(|r| r.wait()))
                .collect::<Result<Vec<_>, Error>>()
        });
        let healthy = healthy_thread.join().expect("thread");
        (faulty_thread.join().expect("thread"), healthy)
    });
    assert_eq!(errors.0, 10, "every faulty replay reports its error");
    errors.1?;

    // An error of the application's own calls, outside any graph, is the `Gpu`'s: graphs do not report it,
    // `check` does, in order and once.
    invalid_write(&gpu, target.wgpu());
    invalid_write(&gpu, target.wgpu());
    healthy.replay_blocking()?;
    assert_eq!(gpu.take_errors().len(), 2);
    gpu.check()?;
    Ok(())
}

graph! {
    /// Starts with a host task, then a kernel.
    graph HostFirst {
        buffers { x: [f32] = inout }
        host prepare(x: write);
        kernel after(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] + 1.0; }
            }
        }
    }
}

graph! {
    /// Host work only.
    graph HostOnly {
        buffers { x: [f32] = inout }
        host touch(x: write);
    }
}

#[test]
fn a_replay_that_starts_on_the_host_does_not_wait_for_other_graphs_first() -> Result<(), Error> {
    let gpu = gpu();
    let (mut busy, _busy_data) = slow(&gpu)?;
    let busy_replay = busy.replay()?;
    let busy_done = done_flag(&gpu);
    let x = gpu.buffer_zeroed::<f32>(64)?;
    let mut first = HostFirst::bake(&gpu, HostFirstBuffers { x: &x })?;
    let seen_busy_done = Arc::new(AtomicBool::new(true));
    let seen = seen_busy_done.clone();
    first.on_host(HostFirst::HOSTS.prepare, move |h| {
        seen.store(busy_done.load(Ordering::SeqCst), Ordering::SeqCst);
        h.write_x(&[1.0f32; 64])
    })?;
    let first_replay = first.replay()?;
    assert!(
        !seen_busy_done.load(Ordering::SeqCst),
        "the host task waited for another graph's work"
    );
    busy_replay.wait()?;
    first_replay.wait()?;
    assert_eq!(read(&x), vec![2.0; 64]);
    Ok(())
}

#[test]
fn waiting_for_a_host_only_replay_does_not_wait_for_other_graphs() -> Result<(), Error> {
    let gpu = gpu();
    let (mut busy, _busy_data) = slow(&gpu)?;
    let y = gpu.buffer_zeroed::<f32>(64)?;
    let mut only = HostOnly::bake(&gpu, HostOnlyBuffers { x: &y })?;
    // (A task that reads a buffer waits for the queue's earlier work: its copy runs after it.)
    only.on_host(HostOnly::HOSTS.touch, |h| h.write_x(&[2.0f32; 64]))?;
    let busy_replay = busy.replay()?;
    let busy_done = done_flag(&gpu);
    let only_replay = only.replay()?;
    let finished_before = busy_done.load(Ordering::SeqCst);
    only_replay.wait()?;
    if finished_before {
        // wgpu's GL backend runs work as it is submitted: there is nothing left to wait for, or to observe.
        eprintln!(
            "the other graph's work had finished before the wait: nothing to observe on this backend"
        );
    } else {
        assert!(
            !busy_done.load(Ordering::SeqCst),
            "waiting for a host-only replay waited for another graph's work"
        );
    }
    busy_replay.wait()?;
    assert_eq!(read(&y), vec![2.0; 64]);
    Ok(())
}

#[test]
fn a_host_task_that_destroys_the_device_fails_the_replay_with_device_lost() -> Result<(), Error> {
    let gpu = gpu();
    let (x, y) = (gpu.buffer_zeroed::<f32>(64)?, gpu.buffer_zeroed::<f32>(64)?);
    let mut g = Hosted::bake(&gpu, HostedBuffers { x: &x, y: &y })?;
    let doomed = gpu.clone();
    g.on_host(Hosted::HOSTS.look, move |_| {
        doomed.device().destroy();
        Ok(())
    })?;
    let result = g.replay();
    assert!(
        matches!(&result, Err(Error::DeviceLost(why)) if why.contains("destroyed")),
        "{result:?}"
    );
    // Every later operation on the device says so too.
    assert!(matches!(g.replay(), Err(Error::DeviceLost(_))));
    assert!(matches!(y.read_blocking(), Err(Error::DeviceLost(_))));
    assert!(matches!(gpu.check(), Err(Error::DeviceLost(_))));
    Ok(())
}

/// Counts wakes and lets a test block until the next one.
#[derive(Default)]
struct CountingWaker {
    wakes: Mutex<usize>,
    woken: Condvar,
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        *self.wakes.lock().expect("lock") += 1;
        self.woken.notify_all();
    }
}

/// Polls `future` as an executor does, sleeping between polls until woken: its output, how many polls it
/// took and how many wakes it made. A future that wakes itself at once would show as many polls; one that is
/// never woken, as a failure after a minute.
fn poll_as_an_executor<F: std::future::Future>(future: F) -> (F::Output, usize, usize) {
    let mut future = Box::pin(future);
    let counter = Arc::new(CountingWaker::default());
    let waker = Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);
    let mut polls = 0;
    let output = loop {
        // The count of wakes before the poll: a wake that comes between the poll and the wait below (the
        // work finished early) is still seen, as an executor's queued wake is.
        let seen = *counter.wakes.lock().expect("lock");
        polls += 1;
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            break output;
        }
        let wakes = counter.wakes.lock().expect("lock");
        let (wakes, timeout) = counter
            .woken
            .wait_timeout_while(wakes, Duration::from_secs(60), |w| *w == seen)
            .expect("lock");
        assert!(!timeout.timed_out(), "the future was never woken");
        drop(wakes);
    };
    let wakes = *counter.wakes.lock().expect("lock");
    (output, polls, wakes)
}

/// A second of GPU work, submitted and kept alive by what this returns.
type Busy = (Baked<Slow>, graph_runtime::Buffer<u32>, Submission<Slow>);

/// Random data of a random length, and a second of GPU work submitted on `gpu` ahead of what comes next.
fn data_behind_busy_work(gpu: &Gpu) -> Result<(Vec<f32>, Busy), Error> {
    let mut rng = rng();
    let (mut busy, busy_data) = slow(gpu)?;
    let busy_replay = busy.replay()?;
    let len = 1 + random_u32(&mut rng, 5000) as usize;
    Ok((random_f32s(&mut rng, len), (busy, busy_data, busy_replay)))
}

#[test]
fn an_async_read_is_woken_once_when_its_data_is_there() -> Result<(), Error> {
    let gpu = gpu();
    // The read's copy waits behind a second of other work.
    let (data, _busy) = data_behind_busy_work(&gpu)?;
    let buffer = gpu.buffer_from_slice(&data)?;
    let (got, polls, wakes) = poll_as_an_executor(buffer.read());
    assert_eq!(got?, data);
    assert_eq!(
        polls, 2,
        "polled once to start, once when woken with the data"
    );
    assert_eq!(wakes, 1);
    Ok(())
}

graph! {
    /// x doubled in place, then read back.
    graph DoubleAndRead {
        buffers { x: [f32] = inout }
        kernel double(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }
        }
        readback out(x);
    }
}

#[test]
fn an_awaited_replay_is_woken_once_when_its_work_finished() -> Result<(), Error> {
    let gpu = gpu();
    // With readbacks, woken by their maps: behind a second of other work, so the first poll finds it
    // unfinished, and its data checked.
    let (data, _busy) = data_behind_busy_work(&gpu)?;
    let x = gpu.buffer_from_slice(&data)?;
    let want: Vec<f32> = data.iter().map(|v| 2.0 * v).collect();
    let mut g = DoubleAndRead::bake(&gpu, DoubleAndReadBuffers { x: &x })?;
    let (finished, polls, wakes) = poll_as_an_executor(g.replay()?.into_future());
    assert_eq!(finished?.read(DoubleAndRead::READBACKS.out)?, want);
    assert_eq!(
        (polls, wakes),
        (2, 1),
        "polled once to start, once when woken"
    );

    // Without readbacks, woken when its work finished: a replay that is itself a second of work. A poll after
    // the future is ready sees that work done; it may wait a tenth of a second, since the future may see it
    // finish a little before wgpu's fence does (the native recorder's marker), but not the second a future
    // ready too early would leave. On an application's device, whose replays go through wgpu: with direct
    // submission, registering the callback would itself wait for the replay on llvmpipe (see
    // `GpuQueue::on_submitted_work_done`).
    let gpu = gpu_without_immediates();
    let (mut slow, _slow_data) = slow(&gpu)?;
    let replay = slow.replay()?;
    let done = done_flag(&gpu);
    let (finished, polls, wakes) = poll_as_an_executor(replay.into_future());
    finished?;
    let _ = gpu.device().poll(wgpu::PollType::Wait {
        submission_index: None,
        timeout: Some(Duration::from_millis(100)),
    });
    assert!(
        done.load(Ordering::SeqCst),
        "ready before the work finished"
    );
    assert_eq!(
        (polls, wakes),
        (2, 1),
        "polled once to start, once when woken"
    );
    Ok(())
}

#[test]
fn a_description_that_breaks_an_invariant_is_an_error_at_bake() -> Result<(), Error> {
    let gpu = gpu();
    // A description edited by hand: its kernels bind buffers it no longer has.
    let mut desc = Double::DESCRIPTION.clone();
    desc.name = "hand-written".into();
    desc.buffers = Vec::new().into();
    let result = BakedGraph::bake(&gpu, desc, &[]);
    assert!(
        matches!(&result, Err(Error::InvalidDescription { graph, reason }) if graph == "hand-written" && reason.contains("binds buffer 0 of 0")),
        "{result:?}"
    );
    Ok(())
}

graph! {
    /// A second of GPU work, then a host task.
    graph SlowThenHost {
        params { spins: u32 }
        buffers { x: [u32] = inout }
        kernel spin(x: read_write) file("tests/wgsl/spin.wgsl");
        host after(x: read);
    }
}

#[test]
fn a_host_task_runs_once_the_gpu_work_before_it_has_finished() -> Result<(), Error> {
    let gpu = gpu();
    let x = gpu.buffer_zeroed::<u32>(1 << 20)?;
    let mut g = SlowThenHost::bake(&gpu, SlowThenHostBuffers { x: &x })?;
    g.params_mut().spins = 4096;
    let finished = Arc::new(AtomicBool::new(false));
    let seen = finished.clone();
    let device = gpu.clone();
    g.on_host(SlowThenHost::HOSTS.after, move |_| {
        // Without reading anything (a read would wait for the queue by itself): is the GPU done?
        let flag = done_flag(&device);
        let _ = device.device().poll(wgpu::PollType::Poll);
        seen.store(flag.load(Ordering::SeqCst), Ordering::SeqCst);
        Ok(())
    })?;
    g.replay_blocking()?;
    assert!(
        finished.load(Ordering::SeqCst),
        "the host task ran before the GPU work before it had finished"
    );
    Ok(())
}

graph! {
    /// A host task that writes `x`, an interop task, and a kernel after them.
    graph Tasks {
        buffers { x: [f32] = inout, y: [f32] = output }
        host prepare(x: read_write);
        interop record(x: read);
        kernel after(x: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x]; }
            }
        }
    }
}

/// The replay's error, which must name graph `Tasks` and `task`, in its message too.
#[track_caller]
fn task_error(g: &mut Baked<Tasks>, task: &str) -> Error {
    let error = g
        .replay()
        .and_then(|s| s.wait())
        .expect_err("the task fails");
    let message = error.to_string();
    assert!(
        message.starts_with("graph `Tasks`: ") && message.contains(&format!(" `{task}`")),
        "{message}"
    );
    error
}

#[test]
fn a_task_error_names_its_graph_and_task_and_keeps_its_cause() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let (x, y) = (gpu.buffer_zeroed::<f32>(64)?, gpu.buffer_zeroed::<f32>(64)?);
    let mut g = Tasks::bake(&gpu, TasksBuffers { x: &x, y: &y })?;
    g.on_interop(TasksInterop::Record, |_| Ok(()))?;

    // The task's own error, as the source of the replay's.
    g.on_host(Tasks::HOSTS.prepare, |_| {
        Err(Error::task(std::io::Error::other(
            "the sensor is unplugged",
        )))
    })?;
    let error = task_error(&mut g, "prepare");
    assert!(
        matches!(&error, Error::HostTask { graph, node, source }
            if graph == "Tasks" && node == "prepare" && source.downcast_ref::<std::io::Error>().is_some()),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .ends_with("failed: the sensor is unplugged")
    );
    let source = std::error::Error::source(&error).map(ToString::to_string);
    assert_eq!(source.as_deref(), Some("the sensor is unplugged"));

    // The context's errors name the graph and the task themselves, and are returned as they are. By name, a
    // task gets the untyped context, whose mistakes are found at run time.
    g.on_host("prepare", |ctx| ctx.write("x", &[1.0f32; 7]))?;
    let error = task_error(&mut g, "prepare");
    assert!(
        matches!(&error, Error::TransferData { reason, .. } if reason.contains("64") && reason.contains('7')),
        "{error:?}"
    );
    g.on_host("prepare", |ctx| ctx.read::<u32>("x").map(|_| ()))?;
    let error = task_error(&mut g, "prepare");
    assert!(
        error
            .to_string()
            .contains("`x` holds `f32` elements, not `u32`: read it as `f32`"),
        "{error}"
    );
    g.on_host("prepare", |ctx| ctx.read::<f32>("y").map(|_| ()))?;
    let error = task_error(&mut g, "prepare");
    assert!(
        matches!(&error, Error::HostAccess { kind: "host", buffer, .. } if buffer == "y"),
        "{error:?}"
    );

    // A runtime error that names neither (a write to the application's own buffer) is wrapped.
    let outside = gpu.buffer_zeroed::<f32>(4)?;
    g.on_host(Tasks::HOSTS.prepare, move |_| outside.write(&[0.0; 3]))?;
    let error = task_error(&mut g, "prepare");
    assert!(
        matches!(&error, Error::HostTask { source, .. }
            if matches!(source.downcast_ref::<Error>(), Some(Error::LengthMismatch { .. }))),
        "{error:?}"
    );

    // An interop task's, likewise.
    g.on_host(Tasks::HOSTS.prepare, |_| Ok(()))?;
    g.on_interop(TasksInterop::Record, |_| {
        Err(Error::task("the library failed"))
    })?;
    let error = task_error(&mut g, "record");
    assert!(
        matches!(&error, Error::InteropTask { node, .. } if node == "record"),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .ends_with("interop task `record` failed: the library failed"),
        "{error}"
    );
    g.on_interop(TasksInterop::Record, |ctx| ctx.buffer("y").map(|_| ()))?;
    let error = task_error(&mut g, "record");
    assert!(
        error
            .to_string()
            .contains("interop task `record` may not use `y`: declare it in the task's list, as in `interop record(y: read_write);`"),
        "{error}"
    );

    // A node of another kind, given a closure or selected by name (a handle of the typed API is of its node's
    // kind, so the mistake does not compile there): named, with its graph; a name the graph lacks, too.
    let refused = g.on_host("after", |_| Ok(())).map(|_| ());
    assert!(
        matches!(&refused, Err(e) if e.to_string() == "graph `Tasks`: node `after` is not a host task"),
        "{refused:?}"
    );
    let refused = g.on_host("preapre", |_| Ok(())).map(|_| ());
    assert!(
        matches!(&refused, Err(Error::UnknownName { kind: "host task", name, .. }) if name == "preapre"),
        "{refused:?}"
    );
    let mut untyped = BakedGraph::bake(
        &gpu,
        Tasks::DESCRIPTION,
        &[("x", x.as_any()), ("y", y.as_any())],
    )?;
    let refused = untyped.on_host("after", |_| Ok(())).map(|_| ());
    assert!(
        matches!(&refused, Err(e) if e.to_string() == "graph `Tasks`: node `after` is not a host task"),
        "{refused:?}"
    );
    let refused = untyped.select("after").map(|_| ());
    assert!(
        matches!(&refused, Err(e) if e.to_string() == "graph `Tasks`: node `after` is not a choice of alternatives"),
        "{refused:?}"
    );

    // The graph runs once its tasks succeed.
    let xs = random_f32s(&mut rng, 64);
    let written = xs.clone();
    g.on_interop(TasksInterop::Record, |_| Ok(()))?;
    g.on_host(Tasks::HOSTS.prepare, move |h| h.write_x(&written))?;
    poison_f32(&y);
    g.replay()?.wait()?;
    assert_eq!(read(&y), xs);
    Ok(())
}
