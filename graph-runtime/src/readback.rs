//! Reading a buffer back to the host.
//!
//! A read copies the buffer into a staging buffer, submits the copy and maps the staging buffer. Native wgpu
//! runs the map's callback only from inside `Device::poll`, so something must poll the device:
//! - [`crate::Buffer::read_blocking`] waits on the device for the copy, on the calling thread;
//! - the future of [`crate::Buffer::read`] hands its copy to the `Gpu`'s readback thread, which blocks in
//!   `poll` until that copy finished; the map callback, run inside that poll, wakes the future. The future is
//!   woken once, when its data is there: it never spins.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::gpu::lock;
use crate::{Element, Error, Gpu};

/// What the map callback (or the readback thread, when the device fails) leaves for the future.
#[derive(Debug, Default)]
pub(crate) struct MapState {
    result: Option<Result<(), String>>,
    waker: Option<Waker>,
}

impl MapState {
    /// Records the outcome, once, and wakes the future waiting for it.
    fn complete(state: &Mutex<MapState>, result: Result<(), String>) {
        let waker = {
            let mut s = lock(state);
            if s.result.is_some() {
                return;
            }
            s.result = Some(result);
            s.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// One copy to wait for, and where its map's outcome goes.
struct Request {
    submission: wgpu::SubmissionIndex,
    state: Arc<Mutex<MapState>>,
}

/// The thread that drives a device for async readbacks: it waits, blocking, for each read's copy, which
/// runs the map callbacks. It ends when its `Gpu` is dropped.
pub(crate) struct Driver {
    requests: mpsc::Sender<Request>,
}

impl Driver {
    pub(crate) fn start(device: wgpu::Device) -> Driver {
        let (requests, incoming) = mpsc::channel::<Request>();
        // If the thread cannot start, the receiver goes with it and every request fails at once (see
        // `request`) rather than waiting forever.
        let _ = std::thread::Builder::new()
            .name("graph-runtime readback".into())
            .spawn(move || {
                for request in incoming {
                    drive(&device, &request);
                }
            });
        Driver { requests }
    }

    fn request(&self, submission: wgpu::SubmissionIndex, state: Arc<Mutex<MapState>>) {
        let request = Request { submission, state };
        if let Err(mpsc::SendError(request)) = self.requests.send(request) {
            MapState::complete(
                &request.state,
                Err("the readback thread has stopped".into()),
            );
        }
    }
}

/// Waits for one copy. The map callback fires inside the poll that sees the copy finish; a device that fails
/// instead completes the read with the failure, so no future waits forever.
fn drive(device: &wgpu::Device, request: &Request) {
    loop {
        let polled = device.poll(wgpu::PollType::Wait {
            submission_index: Some(request.submission.clone()),
            timeout: Some(Duration::from_secs(1)),
        });
        match polled {
            Ok(_) => break,
            // A long copy: keep waiting, unless the map already completed another way.
            Err(wgpu::PollError::Timeout) if lock(&request.state).result.is_none() => continue,
            Err(wgpu::PollError::Timeout) => return,
            Err(e) => {
                MapState::complete(&request.state, Err(e.to_string()));
                return;
            }
        }
    }
    // The copy finished, so its map's callback ran in that poll; this only guards against a wgpu that did not.
    MapState::complete(
        &request.state,
        Err("the copy finished but the staging buffer was not mapped".into()),
    );
}

/// The future of [`crate::Buffer::read`].
#[derive(Debug)]
#[must_use = "a read does nothing until awaited"]
pub struct ReadFuture<T> {
    gpu: Gpu,
    staging: Option<wgpu::Buffer>,
    len: usize,
    state: Arc<Mutex<MapState>>,
    /// The copy's submission, until it is handed to the readback thread or waited for.
    submission: Option<wgpu::SubmissionIndex>,
    /// Why the read could not even start.
    failed: Option<Error>,
    /// `fn() -> T`: the future hands out `T`s and holds none, so it is `Unpin`, `Send` and `Sync` whatever `T`.
    _elem: PhantomData<fn() -> T>,
}

impl<T: Element> ReadFuture<T> {
    /// Copies `len` elements of `source` into a staging buffer and maps it.
    pub(crate) fn start(gpu: &Gpu, source: &wgpu::Buffer, len: usize) -> Self {
        let state: Arc<Mutex<MapState>> = Arc::default();
        let mut read = ReadFuture {
            gpu: gpu.clone(),
            staging: None,
            len,
            state: state.clone(),
            submission: None,
            failed: None,
            _elem: PhantomData,
        };
        let scope = crate::scope::OpScope::enter(gpu);
        let size = (len as u64) * (size_of::<T>() as u64);
        let staging = gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: size.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        if size > 0 {
            encoder.copy_buffer_to_buffer(source, 0, &staging, 0, size);
        }
        let submission = gpu.queue().submit([encoder.finish()]);
        staging.map_async(wgpu::MapMode::Read, .., move |result| {
            MapState::complete(&state, result.map_err(|e| e.to_string()));
        });
        match scope.finish(Ok(())) {
            Ok(()) => {
                read.staging = Some(staging);
                read.submission = Some(submission);
            }
            Err(e) => read.failed = Some(e),
        }
        read
    }

    /// Waits for the copy on this thread, then takes the data.
    pub(crate) fn wait(mut self) -> Result<Vec<T>, Error> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if let Some(submission) = self.submission.take() {
            self.gpu.wait_for(Some(submission))?;
        }
        let result = lock(&self.state).result.take();
        match result {
            Some(result) => self.finish(result),
            None => Err(Error::Readback(
                "the copy finished but the staging buffer was not mapped".into(),
            )),
        }
    }

    fn finish(&self, result: Result<(), String>) -> Result<Vec<T>, Error> {
        self.gpu.check_lost()?;
        result.map_err(Error::Readback)?;
        let staging = self
            .staging
            .as_ref()
            .ok_or_else(|| Error::Readback("no staging buffer".into()))?;
        let view = staging
            .get_mapped_range(..)
            .map_err(|e| Error::Readback(e.to_string()))?;
        let bytes = view
            .get(..self.len * size_of::<T>())
            .ok_or_else(|| Error::Readback("the staging buffer is short".into()))?;
        let data = bytemuck::pod_collect_to_vec(bytes);
        drop(view);
        staging.unmap();
        Ok(data)
    }
}

impl<T: Element> Future for ReadFuture<T> {
    type Output = Result<Vec<T>, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(e) = self.failed.take() {
            return Poll::Ready(Err(e));
        }
        {
            let mut state = lock(&self.state);
            if let Some(result) = state.result.take() {
                drop(state);
                return Poll::Ready(self.finish(result));
            }
            // Stored under the lock the callback takes, so a completion after this point wakes this waker.
            state.waker = Some(cx.waker().clone());
        }
        if let Some(submission) = self.submission.take() {
            let state = self.state.clone();
            self.gpu.driver().request(submission, state);
        }
        Poll::Pending
    }
}
