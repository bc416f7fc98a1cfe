//! Waiting: for a replay's own work (`Submission`), or for a submission index of the device.

#![forbid(unsafe_code)]

use std::marker::PhantomData;
use std::sync::Arc;

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
    pub fn wait_for(&self, work: Option<Work>) -> Result<(), Error> {
        self.check_lost()?;
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
            graph: PhantomData,
        } = self;
        Submission {
            gpu,
            index,
            readbacks,
            maps,
            marker,
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
        let (readbacks, set) = self.readbacks;
        Ok(readbacks.finished(set))
    }

    /// The replay's last GPU work, for waiting on it together with other work through [`Gpu::wait_for`]
    /// (finished already when host tasks end the replay). `None` when the replay had no GPU work.
    pub fn into_work(self) -> Option<Work> {
        self.index
    }
}
