//! The native path where there is no Vulkan: on the web (wasm32) the runtime has neither the native recorder
//! nor direct submission. This module stands in for `native` and `native_recorder` there, with the names the
//! rest of the runtime uses and nothing behind them: every type that would hold native state is uninhabited
//! (it holds a [`Never`]), so no value of it exists, every method on it is unreachable by construction (the
//! compiler checks the empty `match`es), and what would make one says there is none (`None`, `Ok(None)`).
//! The portable recorder runs every graph.

#![forbid(unsafe_code)]

use std::sync::Arc;

use graph_core::desc::GraphDesc;
use graph_core::ir::ParamsStorage;
use graph_core::plan::Transfer;

use crate::bake::BoundBuffers;
use crate::error::Error;
use crate::gate::Gates;
use crate::gpu::Gpu;
use crate::profile::TimedDispatch;
use crate::program::{Program, Segment};
use crate::queue::{DirectOn, OrderingFault};
use crate::recorder::{Choice, NativeBuilt, NativeParamsIn, Recorder};
use crate::transfer::TransferBuffers;
use crate::wait::Work;

/// A type with no values: what every native object here holds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Never {}

/// Not a Vulkan device: validation mode's planted error has nowhere to go (and validation mode reads an
/// environment the web does not have).
pub(crate) const PLANTED_VUID: &str = "";

pub(crate) fn plant_invalid_buffer(_device: &wgpu::Device) -> bool {
    false
}

/// wgpu opens the device: there is no Vulkan device to open with a second queue.
pub(crate) fn open_device(
    _adapter: &wgpu::Adapter,
    _desc: &wgpu::DeviceDescriptor<'_>,
    _second_queue: bool,
) -> Option<Result<(wgpu::Device, wgpu::Queue, bool), String>> {
    None
}

#[derive(Debug)]
pub(crate) struct Marker(Never);

impl Marker {
    pub(crate) fn wait(&self, _value: u32) -> bool {
        match self.0 {}
    }
}

#[derive(Debug)]
pub(crate) struct DirectQueue(Never);

impl DirectQueue {
    /// No direct submission without Vulkan.
    pub(crate) fn new(_device: &wgpu::Device, _on: DirectOn) -> Option<Result<Self, String>> {
        None
    }

    pub(crate) fn on(&self) -> DirectOn {
        match self.0 {}
    }

    pub(crate) fn plant(&self, _fault: OrderingFault) {
        match self.0 {}
    }

    pub(crate) fn lock(&self) -> DirectGuard<'_> {
        match self.0 {}
    }

    pub(crate) fn last(&self) -> u64 {
        match self.0 {}
    }

    pub(crate) fn wait(&self, _value: u64) -> Result<(), String> {
        match self.0 {}
    }
}

pub(crate) struct DirectGuard<'a>(Never, std::marker::PhantomData<&'a ()>);

impl DirectGuard<'_> {
    pub(crate) fn finished(&self) -> bool {
        match self.0 {}
    }

    pub(crate) fn submit_wgpu(
        &mut self,
        _queue: &wgpu::Queue,
        _buffers: impl IntoIterator<Item = wgpu::CommandBuffer>,
    ) -> wgpu::SubmissionIndex {
        match self.0 {}
    }
}

#[derive(Debug)]
pub(crate) struct NativeReplay {
    pub(crate) built: NativeBuilt,
    never: Never,
}

impl NativeReplay {
    /// The portable recorder, always; an error where the native one is required.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        _gpu: &Gpu,
        desc: &GraphDesc,
        _program: &Program,
        _bound: &BoundBuffers,
        _gates: Option<&Gates>,
        _storage: ParamsStorage,
        wanted: Choice,
        _params_in: NativeParamsIn,
        _previous: Option<&NativeReplay>,
    ) -> Result<Option<Self>, Error> {
        match wanted {
            Choice::Require => Err(Error::Unsupported {
                graph: desc.name.to_string(),
                what: "the native recorder was asked for, but this target has no Vulkan".into(),
            }),
            Choice::Portable | Choice::Prefer => Ok(None),
        }
    }

    pub(crate) fn calls_no_wgpu(&self, _gpu: &Gpu) -> bool {
        match self.never {}
    }

    pub(crate) fn prepare(
        &mut self,
        _gpu: &Gpu,
        _program: &Program,
        _workgroups: &[[u32; 3]],
        _params: &[u8],
    ) -> Result<(), Error> {
        match self.never {}
    }

    pub(crate) fn prepare_profiled(
        &mut self,
        _gpu: &Gpu,
        _program: &Program,
        _workgroups: &[[u32; 3]],
        _params: &[u8],
    ) -> Result<Vec<TimedDispatch>, Error> {
        match self.never {}
    }

    pub(crate) fn read_timestamps(&self, _count: u32) -> Result<Vec<u64>, Error> {
        match self.never {}
    }

    pub(crate) fn recorder<'a>(
        &'a mut self,
        _gpu: &'a Gpu,
        _transfers: TransferBuffers<'a>,
    ) -> NativeRecorder<'a> {
        match self.never {}
    }
}

pub(crate) struct NativeRecorder<'a>(Never, std::marker::PhantomData<&'a ()>);

impl NativeRecorder<'_> {
    pub(crate) fn last_wgpu(&self) -> Option<wgpu::SubmissionIndex> {
        match self.0 {}
    }

    pub(crate) fn marked(&self) -> Option<(Arc<Marker>, u32)> {
        match self.0 {}
    }
}

impl Recorder for NativeRecorder<'_> {
    type Submitted = Work;

    fn begin(&mut self) {
        match self.0 {}
    }

    fn segment(&mut self, _index: usize, _segment: &Segment, _workgroups: &[[u32; 3]]) {
        match self.0 {}
    }

    fn copy(&mut self, _src: u32, _src_offset: u64, _dst: u32, _dst_offset: u64, _bytes: u64) {
        match self.0 {}
    }

    fn upload(&mut self, _t: Transfer) {
        match self.0 {}
    }

    fn readback(&mut self, _t: Transfer) {
        match self.0 {}
    }

    fn submit(&mut self) -> Result<Work, Error> {
        match self.0 {}
    }

    fn wait(&mut self, _submitted: Work) -> Result<(), Error> {
        match self.0 {}
    }

    fn to_await(&mut self, _submitted: Work) -> Option<Work> {
        match self.0 {}
    }

    fn with_encoder(
        &mut self,
        _record: &mut dyn FnMut(&mut wgpu::CommandEncoder) -> Result<(), Error>,
    ) -> Result<(), Error> {
        match self.0 {}
    }
}
