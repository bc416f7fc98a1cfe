//! The thread that drives a native device for async work. Native wgpu runs its callbacks (a map completing, a
//! submission finishing) only from inside `Device::poll`, and a wait blocks: a future of this runtime hands
//! its blocking wait to this thread, which runs it and hands the result to the future's [`Completion`], waking
//! it. One thread per `Gpu`, started by the first future that needs it and ended when the `Gpu` is dropped.
//! The web has no such thread: the browser completes maps and submissions from its own event loop.

#![forbid(unsafe_code)]

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, mpsc};

use crate::completion::Completion;
use crate::error::panic_message;

/// A blocking wait, and what it hands its result to.
type Job = Box<dyn FnOnce() + Send>;

pub(crate) struct Driver {
    jobs: mpsc::Sender<Job>,
}

impl Driver {
    pub(crate) fn start() -> Driver {
        let (jobs, incoming) = mpsc::channel::<Job>();
        // If the thread cannot start, the receiver goes with it and every job runs on the caller's thread
        // instead (see `run`): slower, never lost.
        let _ = std::thread::Builder::new()
            .name("graph-runtime device driver".into())
            .spawn(move || {
                for job in incoming {
                    job();
                }
            });
        Driver { jobs }
    }

    /// Runs `job` on the driver thread, after the jobs handed over before it, and hands its result to `done`;
    /// a panic in it hands over `panicked(its message)` instead, so the future waiting is never left waiting.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        done: Arc<Completion<T>>,
        job: impl FnOnce() -> T + Send + 'static,
        panicked: fn(String) -> T,
    ) {
        let task: Job = Box::new(move || {
            let value = std::panic::catch_unwind(AssertUnwindSafe(job))
                .unwrap_or_else(|payload| panicked(panic_message(payload.as_ref())));
            done.complete(value);
        });
        if let Err(mpsc::SendError(task)) = self.jobs.send(task) {
            task();
        }
    }
}
