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

impl Gpu {
    /// Blocks until `submission` (or, with `None`, all work on the device, other graphs' included) finished;
    /// reports what the device reported meanwhile.
    pub fn wait_for(&self, submission: Option<wgpu::SubmissionIndex>) -> Result<(), Error> {
        self.check_lost()?;
        let scope = OpScope::enter(self);
        let polled = self.device().poll(wgpu::PollType::Wait {
            submission_index: submission,
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
    pub(crate) index: Option<wgpu::SubmissionIndex>,
    /// The graph's readbacks, and the replay's readback buffers, mapped once it finishes (`None` for a
    /// graph without readbacks).
    pub(crate) readbacks: (Readbacks, Option<ReadbackSet>),
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
            marker,
            graph: PhantomData,
        } = self;
        Submission {
            gpu,
            index,
            readbacks,
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
    /// word the GPU writes when the replay's work finished, in a loop of up to a millisecond (yielding the
    /// thread between looks on a CPU device), then blocks in wgpu.
    pub fn wait(self) -> Result<Finished<G>, Error> {
        let early = || match (&self.marker, &self.readbacks.1) {
            (Some((marker, value)), None) => marker.wait(*value),
            _ => false,
        };
        match &self.index {
            Some(_) if early() => self.gpu.check_lost()?,
            Some(index) => self.gpu.wait_for(Some(index.clone()))?,
            // The replay had no GPU work.
            None => self.gpu.check_lost()?,
        }
        let (readbacks, set) = self.readbacks;
        Ok(readbacks.finished(set))
    }

    /// The wgpu submission of the replay's last GPU work, for waiting on it together with other work through
    /// [`Gpu::wait_for`] (finished already when host tasks end the replay). `None` when the replay had no GPU
    /// work.
    pub fn into_index(self) -> Option<wgpu::SubmissionIndex> {
        self.index
    }
}
