//! The `Gpu`'s queue: every submission to the device goes through it, so that the runtime's own submissions
//! of replays (direct submission on Vulkan) run in one order with wgpu's, and so that command buffers kept
//! back to be submitted together (an eager stream's calls) go ahead of whatever comes after them.

#![forbid(unsafe_code)]

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::native::DirectQueue;

/// The queue of a [`Gpu`](crate::Gpu): submit command buffers and write buffers through it.
///
/// On a Vulkan device made by [`Gpu::new`](crate::Gpu::new), the runtime submits replays to Vulkan itself
/// (no wgpu submission per replay), on wgpu's queue (or, with `GRAPH_RUNTIME_SUBMIT=second-queue`, on a
/// second queue of its own where the device has two). Work
/// submitted and written through this queue is ordered against those replays both ways: a replay sees
/// every write and submission made before it, and a submission made after it sees what the replay wrote.
/// On wgpu's queue this queue's lock is also what keeps two threads from submitting to it at once, which
/// Vulkan forbids: so submit through [`GpuQueue::submit`], never through a `wgpu::Queue` of the device
/// ([`GpuQueue::wgpu`] hands one out only where the runtime does not submit itself). wgpu submits by itself
/// in one case the runtime reaches: mapping a buffer that has queued writes; so a write into a mappable
/// buffer through [`GpuQueue::write_buffer`] is submitted at once.
///
/// An eager [`Stream`](crate::Stream) keeps its calls' command buffers back and submits them together
/// ([`GpuQueue::pending`]). Anything done through this queue submits them first: a submission, a write (which
/// would otherwise reach the GPU ahead of them), a wait, a replay. So work through the queue runs in the order
/// it was asked for, batched or not; [`GpuQueue::flush`] submits them with nothing after. A callback that
/// wgpu runs inside a submission (`on_submitted_work_done`'s) must not use this queue: the submission holds
/// its lock.
pub struct GpuQueue {
    queue: wgpu::Queue,
    direct: Option<Arc<DirectQueue>>,
    /// Whether a write was queued since the last submission: wgpu submits queued writes ahead of its next
    /// submission, so a direct replay first submits them through wgpu.
    written: AtomicBool,
    /// Command buffers kept back to be submitted together ([`GpuQueue::defer`]), in order. Its lock is taken
    /// before the direct queue's, and held through the submission that takes them, so that nothing submitted
    /// on another thread meanwhile goes ahead of them.
    deferred: Mutex<Vec<wgpu::CommandBuffer>>,
    /// Submissions made through this queue so far ([`GpuQueue::submissions`]).
    submitted: AtomicU64,
}

impl fmt::Debug for GpuQueue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuQueue")
            .field("direct", &self.direct.as_ref().map(|d| d.on()))
            .finish_non_exhaustive()
    }
}

impl GpuQueue {
    pub(crate) fn new(queue: wgpu::Queue, direct: Option<DirectQueue>) -> Self {
        GpuQueue {
            queue,
            direct: direct.map(Arc::new),
            written: AtomicBool::new(false),
            deferred: Mutex::new(Vec::new()),
            submitted: AtomicU64::new(0),
        }
    }

    /// The command buffers kept back. A panic while the lock was held left at worst a list that misses the
    /// buffer being pushed: still a list to submit.
    fn deferred(&self) -> MutexGuard<'_, Vec<wgpu::CommandBuffer>> {
        self.deferred
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `buffer` back, to be submitted after the ones kept before it, ahead of anything else done through
    /// this queue.
    pub(crate) fn defer(&self, buffer: wgpu::CommandBuffer) {
        self.deferred().push(buffer);
    }

    /// How many command buffers are kept back, not yet submitted.
    pub fn pending(&self) -> usize {
        self.deferred().len()
    }

    /// Submits the command buffers kept back (an eager stream's calls), if there are any; their submission.
    pub fn flush(&self) -> Option<wgpu::SubmissionIndex> {
        let mut deferred = self.deferred();
        if deferred.is_empty() {
            return None;
        }
        let buffers = std::mem::take(&mut *deferred);
        Some(self.submit_locked(buffers))
    }

    /// Submits command buffers, in order after every replay submitted before and the command buffers kept
    /// back (in the same submission).
    pub fn submit<I: IntoIterator<Item = wgpu::CommandBuffer>>(
        &self,
        buffers: I,
    ) -> wgpu::SubmissionIndex {
        let mut deferred = self.deferred();
        let kept = std::mem::take(&mut *deferred);
        self.submit_locked(kept.into_iter().chain(buffers))
    }

    /// How many submissions went to the device through this queue so far: wgpu's, and replays the runtime
    /// submitted to Vulkan itself. For seeing what batching saves; it counts what was asked of the device,
    /// not command buffers.
    pub fn submissions(&self) -> u64 {
        self.submitted.load(Ordering::Relaxed)
    }

    /// [`GpuQueue::submit`], with the deferred list's lock held by the caller.
    fn submit_locked<I: IntoIterator<Item = wgpu::CommandBuffer>>(
        &self,
        buffers: I,
    ) -> wgpu::SubmissionIndex {
        self.submitted.fetch_add(1, Ordering::Relaxed);
        match &self.direct {
            Some(direct) => {
                let mut guard = direct.lock();
                self.written.store(false, Ordering::Relaxed);
                guard.submit_wgpu(&self.queue, buffers)
            }
            None => self.queue.submit(buffers),
        }
    }

    /// Queues a write of `data` into `buffer` at byte `offset`, as [`wgpu::Queue::write_buffer`]: it reaches
    /// the GPU ahead of the next submission or replay.
    pub fn write_buffer(&self, buffer: &wgpu::Buffer, offset: wgpu::BufferAddress, data: &[u8]) {
        // wgpu puts a queued write ahead of its next submission: the buffers kept back go first.
        self.flush();
        self.queue.write_buffer(buffer, offset, data);
        // After the write is queued: a replay on this thread that sees the flag submits it first.
        self.written.store(true, Ordering::Release);
        // wgpu submits a mappable buffer's queued writes by itself when it is mapped, outside this queue's
        // lock: submit them now, so that no submission of wgpu's own can race a replay on another thread.
        if self.direct.is_some() && buffer.usage().contains(wgpu::BufferUsages::MAP_READ) {
            self.submit([]);
        }
    }

    /// Queues a write of `data` into `texture`, as [`wgpu::Queue::write_texture`]: it reaches the GPU ahead
    /// of the next submission or replay.
    pub fn write_texture(
        &self,
        texture: wgpu::TexelCopyTextureInfo<'_>,
        data: &[u8],
        layout: wgpu::TexelCopyBufferLayout,
        size: wgpu::Extent3d,
    ) {
        self.flush();
        self.queue.write_texture(texture, data, layout, size);
        self.written.store(true, Ordering::Release);
    }

    /// Calls `callback` once everything submitted so far, replays included, has finished (from a poll of the
    /// device, as [`wgpu::Queue::on_submitted_work_done`]).
    pub fn on_submitted_work_done(&self, callback: impl FnOnce() + Send + 'static) {
        self.flush();
        if let Some(direct) = &self.direct {
            // wgpu's callback sees wgpu's submissions only: unless every replay has finished, one more, which
            // waits for every replay before it.
            let mut guard = direct.lock();
            if !guard.finished() {
                self.submitted.fetch_add(1, Ordering::Relaxed);
                guard.submit_wgpu(&self.queue, []);
            }
        }
        self.queue.on_submitted_work_done(callback);
    }

    /// Nanoseconds per timestamp tick.
    pub fn get_timestamp_period(&self) -> f32 {
        self.queue.get_timestamp_period()
    }

    /// The wgpu queue, where the runtime does not submit replays itself (a device the application made, a
    /// backend other than Vulkan, or `GRAPH_RUNTIME_SUBMIT=wgpu`); `None` where it does, since submissions
    /// made past this queue would not be ordered against replays.
    pub fn wgpu(&self) -> Option<&wgpu::Queue> {
        // What is kept back goes first: work through the raw queue would otherwise run ahead of it.
        self.flush();
        self.direct.is_none().then_some(&self.queue)
    }

    /// Where the runtime submits replays itself: `"second queue"`, `"wgpu's queue"` or `"wgpu"` (no direct
    /// submission).
    pub fn submission_path(&self) -> &'static str {
        match self.direct.as_ref().map(|d| d.on()) {
            Some(DirectOn::SecondQueue) => "second queue",
            Some(DirectOn::WgpuQueue) => "wgpu's queue",
            None => "wgpu",
        }
    }

    /// Turns an ordering rule of direct submission off: for the tests that show each rule is needed, by
    /// catching what goes wrong without it. `false` where replays are not submitted directly.
    #[doc(hidden)]
    pub fn plant_ordering_fault(&self, fault: OrderingFault) -> bool {
        self.direct.as_ref().map(|d| d.plant(fault)).is_some()
    }

    /// Whether a write was queued since the last submission, or command buffers are kept back.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn has_queued_writes(&self) -> bool {
        self.written.load(Ordering::Acquire) || !self.deferred().is_empty()
    }

    /// The direct queue, if replays are submitted directly.
    pub(crate) fn direct(&self) -> Option<&Arc<DirectQueue>> {
        self.direct.as_ref()
    }

    /// Runs `submit` under the submission lock, after submitting through wgpu the command buffers kept back
    /// and the writes queued since the last submission; an error where replays are not submitted directly.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn submit_direct<R>(
        &self,
        submit: impl FnOnce(&mut crate::native::DirectGuard<'_>) -> Result<R, String>,
    ) -> Result<R, String> {
        let Some(direct) = &self.direct else {
            return Err("this device's replays are not submitted directly".into());
        };
        let mut deferred = self.deferred();
        let mut guard = direct.lock();
        // The planted fault skips the queued writes only: what is kept back is submitted whatever it plants.
        let skip = direct.planted(OrderingFault::ReplayBeforeQueuedWrites);
        let written = !skip && self.written.swap(false, Ordering::Acquire);
        if written || !deferred.is_empty() {
            self.submitted.fetch_add(1, Ordering::Relaxed);
            guard.submit_wgpu(&self.queue, std::mem::take(&mut *deferred));
        }
        drop(deferred);
        self.submitted.fetch_add(1, Ordering::Relaxed);
        submit(&mut guard)
    }
}

/// An ordering rule of direct submission turned off, for a test to see that it catches the fault.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum OrderingFault {
    /// A replay does not first submit the writes queued through the `GpuQueue`.
    ReplayBeforeQueuedWrites = 1,
    /// A replay does not wait for the wgpu submissions made before it (which then signal nothing).
    ReplayBeforeEarlierWork = 2,
    /// A wgpu submission does not wait for the replays submitted before it (and signals nothing).
    WorkBeforeEarlierReplays = 4,
}

/// Which Vulkan queue the runtime submits replays to itself (direct submission).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DirectOn {
    /// wgpu's own queue: the device has one queue, or a second was not asked for.
    WgpuQueue,
    /// A second queue of wgpu's queue family, which only the runtime submits to.
    SecondQueue,
}
