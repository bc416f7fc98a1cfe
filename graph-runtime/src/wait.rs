//! Waiting: for a replay's own work (`Submission`), or for a submission index of the device.

#![forbid(unsafe_code)]

use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::completion::{Completion, Countdown};
use crate::error::Error;
use crate::gpu::Gpu;
use crate::native::Marker;
use crate::scope::OpScope;
use crate::task_graph::AnyGraph;
use crate::transfer::{Finished, ReadbackSet, Readbacks};

/// Work submitted to a [`Gpu`], to wait for with [`Gpu::wait_for`]: a wgpu submission (`From` its
/// index), or a replay the runtime submitted to Vulkan itself.
#[derive(Debug, Clone)]
pub struct Work(pub(crate) WorkOf);

#[derive(Debug, Clone)]
pub(crate) enum WorkOf {
    Wgpu(wgpu::SubmissionIndex),
    /// The value the `Gpu`'s timeline reaches when the submission finished.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Direct(u64),
    /// Command buffers kept back on the `Gpu`'s queue ([`crate::GpuQueue::pending`]): waiting submits them
    /// and waits for all work.
    Deferred,
}

impl Work {
    /// Whether the runtime submitted it to Vulkan itself (a replay's partition with direct submission).
    pub fn is_direct(&self) -> bool {
        matches!(self.0, WorkOf::Direct(_))
    }
}

impl From<wgpu::SubmissionIndex> for Work {
    fn from(index: wgpu::SubmissionIndex) -> Self {
        Work(WorkOf::Wgpu(index))
    }
}

impl Gpu {
    /// Blocks until `work` (or, with `None`, all work on the device, other graphs' included) finished;
    /// reports what the device reported meanwhile.
    ///
    /// On the web nothing may block (the browser finishes work in its event loop, which a blocked call
    /// would stop): there this, and every blocking call made of it ([`Submission::wait`],
    /// [`Buffer::read_blocking`](crate::Buffer::read_blocking), a replay of a graph with host tasks), is an
    /// [`Error::Wait`] naming what to await instead.
    pub fn wait_for(&self, work: Option<Work>) -> Result<(), Error> {
        self.check_lost()?;
        if cfg!(target_arch = "wasm32") {
            return Err(Error::Wait(CANNOT_BLOCK.into()));
        }
        let scope = OpScope::enter(self);
        let direct = self.queue().direct();
        let index = match work {
            Some(Work(WorkOf::Wgpu(index))) => Some(index),
            Some(Work(WorkOf::Direct(value))) => {
                let Some(direct) = direct else {
                    return scope.finish(Err(Error::Wait(
                        "a direct submission of another Gpu".into(),
                    )));
                };
                let waited = direct.wait(value).map_err(Error::Wait);
                // wgpu's maintenance, which reports a device the application destroyed (its only sign:
                // Vulkan itself runs on until the device is dropped).
                let _ = self.device().poll(wgpu::PollType::Poll);
                return scope.finish(waited);
            }
            // Everything (work kept back is waited for with everything): what is kept back, and the runtime's
            // own submissions (wgpu's fence does not see them).
            Some(Work(WorkOf::Deferred)) | None => {
                self.queue().flush();
                if let Some(direct) = direct
                    && let Err(e) = direct.wait(direct.last())
                {
                    let _ = self.device().poll(wgpu::PollType::Poll);
                    return scope.finish(Err(Error::Wait(e)));
                }
                None
            }
        };
        let polled = self.device().poll(wgpu::PollType::Wait {
            submission_index: index,
            timeout: None,
        });
        if polled.is_err() {
            // A wait that fails returns before wgpu's maintenance, which is where a lost device is reported:
            // run it, so the loss rather than its symptom is the error.
            let _ = self.device().poll(wgpu::PollType::Poll);
        }
        // A failed wait usually has a cause the device reported (lost, out of memory): the scope says it first.
        scope.finish(polled.map(|_| ()).map_err(|e| Error::Wait(e.to_string())))
    }
}

/// A replay of graph `G` on its way: wait for it, or drop it and let it finish on its own. A `Baked<G>`'s
/// replay is a `Submission<G>`, whose [`Finished<G>`] takes only `G`'s readback handles; a
/// [`BakedGraph`](crate::BakedGraph)'s is a `Submission` (of [`AnyGraph`]).
#[derive(Debug)]
#[must_use = "a replay runs without waiting; call `wait` to know when it finished and whether it failed"]
pub struct Submission<G = AnyGraph> {
    pub(crate) gpu: Gpu,
    /// The replay's last submission, also when a host phase after it waited for it: its readbacks are
    /// mapped by the poll that waiting for it makes. `None` for a replay without GPU work.
    pub(crate) index: Option<Work>,
    /// The graph's readbacks, and the replay's readback buffers, mapped once it finishes (`None` for a
    /// graph without readbacks).
    pub(crate) readbacks: (Readbacks, Option<ReadbackSet>),
    /// When the replay's last submission was direct, and an earlier one through wgpu copied its readbacks:
    /// that one, whose wait maps them.
    pub(crate) maps: Option<wgpu::SubmissionIndex>,
    /// With the native recorder: the marker and the value the last submission writes to it once the
    /// replay's work finished. Seen tens of microseconds before wgpu's fence says so.
    pub(crate) marker: Option<(Arc<Marker>, u32)>,
    /// The maps of the replay's readback buffers (with the set), each counted when its callback ran.
    pub(crate) mapped: Option<Arc<Countdown>>,
    pub(crate) graph: PhantomData<fn() -> G>,
}

impl Submission {
    /// The same replay, as one of graph `G` (what `Baked<G>` returns).
    pub(crate) fn of<G>(self) -> Submission<G> {
        let Submission {
            gpu,
            index,
            readbacks,
            maps,
            marker,
            mapped,
            graph: PhantomData,
        } = self;
        Submission {
            gpu,
            index,
            readbacks,
            maps,
            marker,
            mapped,
            graph: PhantomData,
        }
    }
}

impl<G> Submission<G> {
    /// Blocks until this replay's own work finished on the GPU (not other graphs'); reports what the device
    /// reported meanwhile. What the replay's readback nodes copied out is in the result.
    ///
    /// With the native recorder, and no readbacks (which wgpu maps once its fence signals), it first reads a
    /// word the GPU writes when the replay's work finished (or, for a replay the runtime submitted to Vulkan
    /// itself, the timeline semaphore's value), in a loop of up to a millisecond (yielding the thread between
    /// looks on a CPU device), then blocks.
    pub fn wait(self) -> Result<Finished<G>, Error> {
        let graph = self.readbacks.0.graph().to_string();
        self.wait_unnamed().map_err(|e| e.in_graph(&graph))
    }

    /// [`Submission::wait`], its errors as the device gives them.
    fn wait_unnamed(self) -> Result<Finished<G>, Error> {
        let early = || match (&self.marker, &self.readbacks.1) {
            (Some((marker, value)), None) => marker.wait(*value),
            _ => false,
        };
        match &self.index {
            Some(Work(WorkOf::Wgpu(_))) if early() => self.gpu.check_lost()?,
            Some(work) => self.gpu.wait_for(Some(work.clone()))?,
            // The replay had no GPU work.
            None => self.gpu.check_lost()?,
        }
        if let Some(maps) = &self.maps {
            // Finished already (before the direct submission that ended the replay): the poll maps them.
            self.gpu.wait_for(Some(maps.clone().into()))?;
        }
        // A map that failed says so. One whose callback has not arrived is mapped all the same: wgpu marks a
        // buffer mapped before it runs the callbacks, which another thread's poll may be running still.
        if let Some(Err(reason)) = self.mapped.as_ref().and_then(|m| m.done.take()) {
            return Err(Error::Readback(reason));
        }
        Ok(self.finished())
    }

    /// What the finished replay's readbacks hold.
    fn finished(self) -> Finished<G> {
        let (readbacks, set) = self.readbacks;
        readbacks.finished(set)
    }

    /// The replay's last GPU work, for waiting on it together with other work through [`Gpu::wait_for`]
    /// (finished already when host tasks end the replay). `None` when the replay had no GPU work.
    pub fn into_work(self) -> Option<Work> {
        self.index
    }
}

/// Why a blocking call fails on the web, and what to await instead.
const CANNOT_BLOCK: &str = "the web cannot block on the GPU: await the replay (`g.replay()?.await`) or the read \
     (`buffer.read().await`) instead of `wait`/`read_blocking`, and replay a graph with host tasks with \
     `g.replay_async().await`";

impl<G: 'static> IntoFuture for Submission<G> {
    type Output = Result<Finished<G>, Error>;
    type IntoFuture = Replaying<G>;

    /// The replay as a future: `g.replay()?.await?` is [`Submission::wait`] without blocking, and the primary
    /// way on the web. It is woken once, when the replay's work finished and its readbacks are mapped: by the
    /// browser on the web; on native targets by the `Gpu`'s driver thread, which runs the blocking wait.
    fn into_future(self) -> Replaying<G> {
        Replaying {
            graph: self.readbacks.0.graph().to_string(),
            submission: Some(self),
            #[cfg(not(target_arch = "wasm32"))]
            result: Arc::default(),
            #[cfg(target_arch = "wasm32")]
            done: None,
        }
    }
}

/// A replay being awaited ([`Submission`]'s future).
#[derive(Debug)]
#[must_use = "a future does nothing until awaited"]
pub struct Replaying<G = AnyGraph> {
    graph: String,
    /// The replay: until the first poll hands it to the driver thread (native), or until its work is done
    /// (web).
    submission: Option<Submission<G>>,
    /// What the driver thread hands over.
    #[cfg(not(target_arch = "wasm32"))]
    result: Arc<Completion<Result<Finished<G>, Error>>>,
    /// Counts the browser's callbacks that say the replay's work is done: its readback maps, or, without
    /// readbacks, its queue's work done. Made by the first poll.
    #[cfg(target_arch = "wasm32")]
    done: Option<Arc<Countdown>>,
}

#[cfg(not(target_arch = "wasm32"))]
impl<G: 'static> Future for Replaying<G> {
    type Output = Result<Finished<G>, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(result) = self.result.poll(cx) {
            return Poll::Ready(result.map_err(|e| e.in_graph(&self.graph)));
        }
        if let Some(submission) = self.submission.take() {
            let gpu = submission.gpu.clone();
            gpu.driver().run(
                self.result.clone(),
                move || submission.wait_unnamed(),
                |why| Err(Error::Wait(format!("the wait panicked: {why}"))),
            );
        }
        Poll::Pending
    }
}

#[cfg(target_arch = "wasm32")]
impl<G: 'static> Future for Replaying<G> {
    type Output = Result<Finished<G>, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let Some(submission) = &this.submission else {
            return Poll::Ready(Err(Error::Wait(
                "the replay's future was polled again after it finished".into(),
            )));
        };
        let done = this.done.get_or_insert_with(|| match &submission.mapped {
            Some(mapped) => mapped.clone(),
            None => {
                let done = Arc::new(Countdown::new(1));
                let arrived = done.clone();
                submission
                    .gpu
                    .queue()
                    .on_submitted_work_done(move || arrived.arrive(Ok(())));
                done
            }
        });
        let Poll::Ready(outcome) = done.done.poll(cx) else {
            return Poll::Pending;
        };
        let Some(submission) = this.submission.take() else {
            return Poll::Pending;
        };
        let finished = outcome
            .map_err(Error::Readback)
            .and_then(|()| submission.gpu.check_settled())
            .map(|()| submission.finished());
        Poll::Ready(finished.map_err(|e| e.in_graph(&this.graph)))
    }
}

impl Gpu {
    /// A future of `work` finished: [`Gpu::wait_for`] without blocking. Woken once: natively by the driver
    /// thread, which runs that wait; on the web when the browser says the queue's work is done.
    pub(crate) fn work_done(&self, work: Work) -> WorkDone {
        WorkDone {
            gpu: self.clone(),
            work: Some(work),
            done: Arc::default(),
        }
    }
}

/// [`Gpu::work_done`]'s future.
#[derive(Debug)]
pub(crate) struct WorkDone {
    gpu: Gpu,
    /// The work, until the first poll starts waiting for it.
    work: Option<Work>,
    done: Arc<Completion<Result<(), Error>>>,
}

impl Future for WorkDone {
    type Output = Result<(), Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(result) = self.done.poll(cx) {
            return Poll::Ready(result.and_then(|()| self.gpu.check_settled()));
        }
        if let Some(work) = self.work.take() {
            let done = self.done.clone();
            #[cfg(not(target_arch = "wasm32"))]
            {
                let gpu = self.gpu.clone();
                self.gpu.driver().run(
                    done,
                    move || gpu.wait_for(Some(work)),
                    |why| Err(Error::Wait(format!("the wait panicked: {why}"))),
                );
            }
            #[cfg(target_arch = "wasm32")]
            {
                // Every submission so far, this one included (the browser has no per-submission wait).
                let _ = work;
                self.gpu
                    .queue()
                    .on_submitted_work_done(move || done.complete(Ok(())));
            }
        }
        Poll::Pending
    }
}
