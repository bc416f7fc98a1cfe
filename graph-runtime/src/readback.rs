//! Reading a buffer back to the host.
//!
//! A read copies the buffer into a staging buffer, submits the copy and maps the staging buffer; the map's
//! callback hands the outcome to the read's [`Completion`]. Something must let that callback run:
//! - on the web, the browser, from its event loop: the future of [`crate::Buffer::read`] is woken by it;
//! - on native targets, a poll of the device. [`crate::Buffer::read_blocking`] waits on the device for the
//!   copy, on the calling thread; the future hands the same wait to the `Gpu`'s driver thread (`driver.rs`),
//!   whose poll runs the callback, which wakes the future. The future is woken once, when its data is
//!   there: it never spins.

#![forbid(unsafe_code)]

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::completion::Completion;
use crate::element::Element;
use crate::error::Error;
use crate::gpu::Gpu;

/// The future of [`crate::Buffer::read`].
#[derive(Debug)]
#[must_use = "a read does nothing until awaited"]
pub struct ReadFuture<T> {
    gpu: Gpu,
    staging: Option<wgpu::Buffer>,
    len: usize,
    /// The map's outcome.
    state: Arc<Completion<Result<(), String>>>,
    /// The copy's submission, until it is handed to the driver thread or waited for.
    submission: Option<wgpu::SubmissionIndex>,
    /// Why the read could not even start.
    failed: Option<Error>,
    /// `fn() -> T`: the future hands out `T`s and holds none, so it is `Unpin`, `Send` and `Sync` whatever `T`.
    _elem: PhantomData<fn() -> T>,
}

impl<T: Element> ReadFuture<T> {
    /// Copies `len` elements of `source` into a staging buffer and maps it.
    pub(crate) fn start(gpu: &Gpu, source: &wgpu::Buffer, len: usize) -> Self {
        let state: Arc<Completion<Result<(), String>>> = Arc::default();
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
        // Whole words: wgpu copies in multiples of 4 bytes (a `u8` buffer of 10 elements has 12).
        let size = T::TYPE.buffer_bytes(len as u64);
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
            state.complete(result.map_err(|e| e.to_string()));
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
            self.gpu.wait_for(Some(submission.into()))?;
        }
        // A map whose callback has not arrived is mapped all the same once the copy finished (another thread's
        // poll may be running the callback still): reading the mapped range is the judge.
        let result = self.state.take().unwrap_or(Ok(()));
        self.finish(result)
    }

    fn finish(&self, result: Result<(), String>) -> Result<Vec<T>, Error> {
        self.gpu.check_settled()?;
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
        if let Poll::Ready(result) = self.state.poll(cx) {
            return Poll::Ready(self.finish(result));
        }
        // Native: the driver thread waits for the copy; the poll of that wait runs the map's callback. (On the
        // web the browser runs it.)
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(submission) = self.submission.take() {
            // A failed wait ends the read. After a wait that succeeded the buffer is mapped, its callback run by
            // that poll or about to be by another thread's: what the callback says stands if it came first,
            // else reading the mapped range is the judge.
            let gpu = self.gpu.clone();
            let wait = move || {
                gpu.wait_for(Some(submission.into()))
                    .map_err(|e| e.to_string())
            };
            self.gpu.driver().run(self.state.clone(), wait, |why| {
                Err(format!("the wait panicked: {why}"))
            });
        }
        Poll::Pending
    }
}
