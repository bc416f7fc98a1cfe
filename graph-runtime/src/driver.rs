//! The thread that drives a native device for async work. Native wgpu runs its callbacks (a map completing, a
//! submission finishing) only from inside `Device::poll`, and a wait blocks: a future of this runtime hands
//! its blocking wait to this thread, which runs it and hands the result to the future's [`Completion`], waking
//! it. One thread per `Gpu`, started by the first future that needs it and ended when the `Gpu` is dropped.
//! The web has no such thread: the browser completes maps and submissions from its own event loop.

#![forbid(unsafe_code)]

use std::sync::mpsc;

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

    /// Runs `job` on the driver thread, after the jobs handed over before it.
    pub(crate) fn run(&self, job: impl FnOnce() + Send + 'static) {
        if let Err(mpsc::SendError(job)) = self.jobs.send(Box::new(job)) {
            job();
        }
    }
}
