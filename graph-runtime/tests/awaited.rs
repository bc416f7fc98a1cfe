//! Awaited replays on native targets: `replay_async` runs host tasks between partitions without blocking,
//! over copies of what they read fetched once the GPU work before them finished, with the results of a
//! blocking replay. (The web, where this is the only way, runs the same graph in `tests/web.rs`.)

#![forbid(unsafe_code)]

mod common;
mod host_chain;

use common::{assert_exact, gpu, poison_f32, random_f32s, random_u32, read, rng, use_recorder};
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use graph_runtime::Error;
use host_chain::{Chain, HostChain, expected};

#[test]
fn an_awaited_replay_runs_host_tasks_over_what_the_gpu_wrote_on_both_recorders() -> Result<(), Error>
{
    let gpu = gpu();
    let mut rng = rng();
    for native in [false, true] {
        let len = 1 + random_u32(&mut rng, 3000) as usize;
        let xs = random_f32s(&mut rng, len);
        let Chain { mut graph, a, out } = host_chain::bake(&gpu, &xs, 0.5)?;
        if !use_recorder(&mut graph, &gpu, native) {
            continue;
        }
        let want = expected(&xs, 0.5);
        let finished = pollster::block_on(async { graph.replay_async().await?.await })?;
        assert_exact(
            &finished.read(HostChain::READBACKS.result)?,
            &want,
            "awaited readback",
        );
        assert_exact(&read(&out), &want, "out after an awaited replay");

        // A blocking replay after it, over new data, agrees.
        let ys = random_f32s(&mut rng, len);
        a.write(&ys)?;
        poison_f32(&out);
        let finished = graph.replay_blocking()?;
        assert_exact(
            &finished.read(HostChain::READBACKS.result)?,
            &expected(&ys, 0.5),
            "blocking readback",
        );
    }
    Ok(())
}

#[test]
fn an_awaited_replay_reports_a_host_task_error_and_submits_nothing_after_it() -> Result<(), Error> {
    let gpu = gpu();
    let Chain { mut graph, out, .. } = host_chain::bake(&gpu, &[1.0, 2.0, 3.0], 0.5)?;
    graph.on_host(HostChain::HOSTS.reverse, |_| {
        Err(Error::task(std::io::Error::other("planted")))
    })?;
    let result = pollster::block_on(graph.replay_async());
    assert!(
        matches!(&result, Err(Error::HostTask { graph, node, .. }) if graph == "HostChain" && node == "reverse"),
        "{result:?}"
    );
    // `finish` never ran: `out` is still poisoned.
    assert!(read(&out).iter().all(|v| v.is_nan()));
    Ok(())
}

/// Polls two futures on this thread in turn until both are ready, parking between rounds: an executor's
/// `join`, so that their awaits interleave.
fn join_both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut done_a, mut done_b) = (None, None);
    loop {
        if done_a.is_none()
            && let Poll::Ready(v) = a.as_mut().poll(&mut cx)
        {
            done_a = Some(v);
        }
        if done_b.is_none()
            && let Poll::Ready(v) = b.as_mut().poll(&mut cx)
        {
            done_b = Some(v);
        }
        if let (Some(_), Some(_)) = (&done_a, &done_b) {
            break;
        }
        std::thread::park_timeout(Duration::from_millis(50));
    }
    match (done_a, done_b) {
        (Some(a), Some(b)) => (a, b),
        _ => unreachable!("the loop ends when both are ready"),
    }
}

#[test]
fn two_awaited_replays_interleave_on_one_thread() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let (xs, ys) = (random_f32s(&mut rng, 700), random_f32s(&mut rng, 900));
    let Chain {
        graph: mut first, ..
    } = host_chain::bake(&gpu, &xs, 0.25)?;
    let Chain {
        graph: mut second, ..
    } = host_chain::bake(&gpu, &ys, 0.75)?;
    // Each awaits the GPU before its host phase while the other runs: their scopes must not cross.
    let (one, two) = join_both(async { first.replay_async().await?.await }, async {
        second.replay_async().await?.await
    });
    assert_exact(
        &one?.read(HostChain::READBACKS.result)?,
        &expected(&xs, 0.25),
        "first",
    );
    assert_exact(
        &two?.read(HostChain::READBACKS.result)?,
        &expected(&ys, 0.75),
        "second",
    );
    Ok(())
}
