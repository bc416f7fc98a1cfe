//! The thread that drives a device for async work. Native wgpu runs its callbacks (a map completing, say) only
//! from inside `Device::poll`; an async read hands its submission to this thread, which blocks in `poll` until
//! that submission finished, so the read's callback runs and wakes it. One thread per `Gpu`, started by the
//! first request and ended when the `Gpu` is dropped.

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

/// What waits on a submission: told when the device fails instead of finishing it.
pub(crate) trait Waiter: Send + Sync {
    /// Whether the wait is over (the callback ran, or it failed).
    fn done(&self) -> bool;
    /// Ends the wait with a failure (unless it is over already).
    fn fail(&self, reason: String);
}

/// One submission to wait for, and who waits.
struct Request {
    submission: wgpu::SubmissionIndex,
    waiter: Arc<dyn Waiter>,
}

pub(crate) struct Driver {
    requests: mpsc::Sender<Request>,
}

impl Driver {
    pub(crate) fn start(device: wgpu::Device) -> Driver {
        let (requests, incoming) = mpsc::channel::<Request>();
        // If the thread cannot start, the receiver goes with it and every request fails at once (see
        // `request`) rather than waiting forever.
        let _ = std::thread::Builder::new()
            .name("graph-runtime device driver".into())
            .spawn(move || {
                for request in incoming {
                    drive(&device, &request);
                }
            });
        Driver { requests }
    }

    /// Has the thread wait for `submission`, then tell `waiter` if the wait did not end it.
    pub(crate) fn request(&self, submission: wgpu::SubmissionIndex, waiter: Arc<dyn Waiter>) {
        let request = Request { submission, waiter };
        if let Err(mpsc::SendError(request)) = self.requests.send(request) {
            request
                .waiter
                .fail("the thread that drives the device has stopped".into());
        }
    }
}

/// Waits for one submission. Callbacks of work that finished run inside the poll that sees it finish; a
/// device that fails instead ends the wait with the failure, so no waiter waits forever.
fn drive(device: &wgpu::Device, request: &Request) {
    loop {
        let polled = device.poll(wgpu::PollType::Wait {
            submission_index: Some(request.submission.clone()),
            timeout: Some(Duration::from_secs(1)),
        });
        match polled {
            Ok(_) => break,
            // Long work: keep waiting, unless the wait already ended another way.
            Err(wgpu::PollError::Timeout) if !request.waiter.done() => continue,
            Err(wgpu::PollError::Timeout) => return,
            Err(e) => {
                request.waiter.fail(e.to_string());
                return;
            }
        }
    }
    // The submission finished, so its callbacks ran in that poll; this only guards against a wgpu that did not.
    request
        .waiter
        .fail("the work finished but its callback did not run".into());
}
