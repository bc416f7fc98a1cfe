//! A graph baked onto a device, untyped: what every front door's graph becomes. Built graphs and graph files
//! use it directly, by names; `graph!` graphs through the typed [`crate::Baked`], a thin layer over it.

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;

use graph_core::desc::{GraphDesc, OpDesc};
use graph_core::dot::Detail;
use graph_core::flatten::flatten;
use graph_core::fusion::{Declined, FusedGroup};
use graph_core::ir::ParamsStorage;

use crate::bake::BoundBuffers;
use crate::baked_state::BakedState;
use crate::buffer::AnyBuffer;
use crate::element::{Element, ParamValue};
use crate::error::{Error, TaskKind, panic_message, unknown};
use crate::gpu::Gpu;
use crate::host::{HostContext, HostTask, Prefetched};
use crate::interop::{InteropContext, InteropTask};
use crate::native_recorder::NativeReplay;
use crate::params::ParamsTransport;
use crate::profile::TimedDispatch;
use crate::profile::{self, Profile, Timestamps};
use crate::program::resolve_dispatches;
use crate::program::{Partition, Step};
use crate::recorder::{self, NativeParamsIn};
use crate::recorder::{Recorder, Waiting, now, replay_partitions};
use crate::scope::OpScope;
use crate::texture::Texture;
use crate::transfer::{Finished, TransferBuffers};
use crate::wait::{Submission, Work};
use crate::wgpu_recorder::WgpuRecorder;

/// A graph baked onto a device: set parameters by name, give host tasks their closures, replay.
pub struct BakedGraph {
    pub(crate) gpu: Gpu,
    /// The parameter block the next replay uses, laid out as the WGSL struct.
    pub(crate) params: Vec<u8>,
    pub(crate) transport: ParamsTransport,
    host_tasks: Vec<Option<HostTask>>,
    interop_tasks: Vec<Option<InteropTask>>,
    /// Workgroup counts of each kernel node for the current replay, rewritten in place (no allocation).
    workgroups: Vec<[u32; 3]>,
    /// Per node: whether it runs. `false` only for the choices of a group of alternatives that are not its
    /// active one.
    active: Vec<bool>,
    /// Per node: `false` where the application turned it off ([`BakedGraph::set_enabled`]).
    pub(crate) enabled: Vec<bool>,
    /// Per node: whether it was ever turned off, so that every rebuild keeps it out of fusion and the buffers
    /// it writes in memory of their own.
    pub(crate) ever_off: Vec<bool>,
    /// A deferred replay's command buffers, until its error scope says they recorded cleanly.
    held: Vec<wgpu::CommandBuffer>,
    /// What bake built and each update builds again (see [`BakedState::build`]), replaced whole.
    pub(crate) state: BakedState,
}

/// How a replay is submitted: at once, kept back, or profiled (by which recorder's timestamps).
enum Timing<'a> {
    None,
    /// The portable recorder's command buffers kept back on the queue ([`crate::GpuQueue::defer`]), to go
    /// with the next submission; submitted at once where it reads back (its readbacks map after it).
    Deferred,
    /// Through wgpu's passes, one per dispatch, into these queries.
    Portable(&'a mut Timestamps),
    /// Through the native command buffers, recorded with timestamps: which queries time each dispatch.
    Native(&'a mut Vec<TimedDispatch>),
}

impl std::fmt::Debug for BakedGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BakedGraph")
            .field("graph", &self.state.desc.name)
            .field("storage", &self.transport.storage())
            .field("kernels", &self.state.program.kernels.len())
            .finish_non_exhaustive()
    }
}

impl BakedGraph {
    /// Bakes a description (from the builder, a graph file or a `graph!` graph's `DESCRIPTION`) with the
    /// caller's buffers by name. Every external buffer must be bound, each to a buffer of its element type,
    /// length and usage; parameters start zeroed.
    pub fn bake(
        gpu: &Gpu,
        desc: impl Into<Cow<'static, GraphDesc>>,
        buffers: &[(&str, &AnyBuffer)],
    ) -> Result<Self, Error> {
        Self::bake_with_textures(gpu, desc, buffers, &[])
    }

    /// [`BakedGraph::bake`] for a graph that holds textures: each of its textures bound by name to a
    /// [`Texture`] of the declared format and dimension, with the usages its kernels need.
    pub fn bake_with_textures(
        gpu: &Gpu,
        desc: impl Into<Cow<'static, GraphDesc>>,
        buffers: &[(&str, &AnyBuffer)],
        textures: &[(&str, &Texture)],
    ) -> Result<Self, Error> {
        let desc = desc.into();
        let _span = tracing::info_span!("bake", graph = %desc.name).entered();
        let external = |is_texture: bool, name: &str| {
            let index = desc.buffers.iter().position(|b| b.name == name);
            match index {
                Some(i)
                    if desc.buffers[i].role.is_external()
                        && desc.buffers[i].texture.is_some() == is_texture =>
                {
                    Ok(i as u32)
                }
                _ => {
                    let known = desc
                        .buffers
                        .iter()
                        .filter(|b| b.role.is_external() && b.texture.is_some() == is_texture)
                        .map(|b| format!("`{}`", b.name));
                    let what = match is_texture {
                        true => "texture",
                        false => "external buffer",
                    };
                    Err(unknown(&desc, what, name, known))
                }
            }
        };
        let mut indexed = Vec::with_capacity(buffers.len());
        for &(name, buffer) in buffers {
            indexed.push((external(false, name)?, buffer));
        }
        let mut indexed_textures = Vec::with_capacity(textures.len());
        for &(name, texture) in textures {
            let index = external(true, name)?;
            if indexed_textures.iter().any(|&(i, _)| i == index) {
                return Err(Error::BoundTwice {
                    graph: desc.name.to_string(),
                    buffer: name.to_string(),
                });
            }
            indexed_textures.push((index, texture));
        }
        let size = desc.params.size as usize;
        Self::bake_indexed(gpu, desc, &indexed, &indexed_textures, size)
    }

    /// Bakes with buffers given by declaration index. The description is validated first, so one that did
    /// not come from the checks is an error rather than a panic; `params_size` is the size of the caller's
    /// parameter block, which must match the description's.
    pub(crate) fn bake_indexed(
        gpu: &Gpu,
        desc: Cow<'static, GraphDesc>,
        buffers: &[(u32, &AnyBuffer)],
        textures: &[(u32, &Texture)],
        params_size: usize,
    ) -> Result<Self, Error> {
        let invalid = |e: graph_core::desc::InvalidDescription| Error::InvalidDescription {
            graph: desc.name.to_string(),
            reason: e.0,
        };
        desc.validate(params_size).map_err(invalid)?;
        // Subgraphs are replayed as part of their parent: the plan is made of the flattened graph, whose
        // parent indices are the description's own (see `graph_core::flatten`).
        let flat = match flatten(&desc).map_err(invalid)? {
            Cow::Owned(flat) => {
                flat.validate(params_size).map_err(invalid)?;
                Some(flat)
            }
            Cow::Borrowed(_) => None,
        };
        let mut desc = flat.map_or(desc, Cow::Owned);
        // On one GPU a placement means nothing: the nodes fuse as if none were placed.
        if desc.nodes.iter().any(|n| n.on.is_some()) {
            for node in desc.to_mut().nodes.to_mut() {
                node.on = None;
            }
        }
        crate::bake::check_bindings(&desc, buffers)?;
        gpu.check_lost()?;
        let mut externals = vec![None; desc.buffers.len()];
        for &(index, buffer) in buffers {
            if let Some(slot) = externals.get_mut(index as usize) {
                *slot = Some(buffer.clone());
            }
        }
        let mut bound_textures = vec![None; desc.buffers.len()];
        for &(index, texture) in textures {
            if let Some(slot) = bound_textures.get_mut(index as usize) {
                *slot = Some(texture.clone());
            }
        }
        let scope = OpScope::enter(gpu);
        let transport = ParamsTransport::new(gpu, &desc);
        let name = desc.name.to_string();
        // Parameters start zeroed: a texture they size is unsized until a replay's parameters size it.
        let params = vec![0; desc.params.size as usize];
        let built = BakedState::build(
            gpu,
            desc,
            externals,
            bound_textures,
            &transport,
            &params,
            None,
            &[],
        );
        let (state, _) = scope.finish_with(built, |reason| Error::Bake {
            graph: name,
            reason,
        })?;
        let desc = &state.desc;
        let mut host_tasks = Vec::new();
        host_tasks.resize_with(desc.nodes.len(), || None);
        let mut interop_tasks = Vec::new();
        interop_tasks.resize_with(desc.nodes.len(), || None);
        let active = desc
            .nodes
            .iter()
            .map(|n| match &n.op {
                OpDesc::Kernel(k) => k.alternative.as_ref().is_none_or(|a| a.choice == 0),
                _ => true,
            })
            .collect();
        Ok(BakedGraph {
            gpu: gpu.clone(),
            params,
            transport,
            workgroups: vec![[0; 3]; desc.nodes.len()],
            host_tasks,
            interop_tasks,
            active,
            enabled: vec![true; desc.nodes.len()],
            ever_off: vec![false; desc.nodes.len()],
            held: Vec::new(),
            state,
        })
    }

    /// The kernels this graph replays as one kernel each, by node index in [`Self::description`]: pointwise
    /// kernels over the same extent, and chains of neighbourhood kernels (stencils) run by overlapped tiling
    /// ([`FusedGroup::tiling`]), fused at bake over the bound buffers' lengths (the graph's `FUSED` constant
    /// lists what fuses whatever is bound). Empty when nothing fused or fusion is off (`#[no_fusion]`).
    pub fn fused(&self) -> &[FusedGroup] {
        &self.state.fused.groups
    }

    /// Kernels the fusion pass grouped whose fused kernel could not be made on this device, each with the
    /// reason (naga's message, or the form of code it could not rename): they replay in the largest runs
    /// that could be made, or one by one. Empty when every group fused, which is what the graph's `FUSED`
    /// constant promises; bake also logs each at `warn` level through `tracing`.
    pub fn fusion_declined(&self) -> &[Declined] {
        &self.state.fused.declined
    }

    /// The kernels that run alone but several elements per invocation, by node index: pointwise kernels
    /// over buffers long enough (half a million elements and more) that one invocation per element would
    /// leave each waiting on its loads alone ([`crate::pipeline::fusion::wide_elements`]), made wide by bake
    /// as the fusion pass makes a fused kernel ([`crate::pipeline::fusion::widen`]).
    pub fn widened(&self) -> &[u32] {
        &self.state.fused.widened
    }

    /// Replays through the portable recorder from now on, whatever [`crate::env::RECORDER_ENV`] says (to compare
    /// the two, say), updates included.
    pub fn use_portable_recorder(&mut self) {
        self.state.native = None;
        self.state.recorder = (recorder::Choice::Portable, NativeParamsIn::default());
    }

    /// Replays through the native recorder from now on, its kernels reading the parameters as `params_in`
    /// says (to compare the two ways, say): an error when the graph or the device cannot (see
    /// [`crate::env::RECORDER_ENV`]), and the graph replays as it did. Updates keep the choice.
    pub fn use_native_recorder(&mut self, params_in: NativeParamsIn) -> Result<(), Error> {
        let gpu = self.gpu.clone();
        let scope = OpScope::enter(&gpu);
        let built = NativeReplay::new(
            &gpu,
            &self.state.replayed,
            &self.state.program,
            &self.state.bound,
            self.state.gates.as_ref(),
            self.transport.storage(),
            recorder::Choice::Require,
            params_in,
            None,
        );
        let native = scope.finish_with(built, |reason| Error::Bake {
            graph: self.state.desc.name.to_string(),
            reason,
        })?;
        // Replays through the old command buffers finish before they are freed (its `Drop` waits).
        self.state.native = native;
        self.state.recorder = (recorder::Choice::Require, params_in);
        Ok(())
    }

    /// Which recorder replays this graph: `"native"` (Vulkan command buffers recorded once, see
    /// [`crate::env::RECORDER_ENV`]) or `"portable"` (wgpu's compute passes, encoded at each replay).
    pub fn recorder(&self) -> &'static str {
        match self.state.native {
            Some(_) => "native",
            None => "portable",
        }
    }

    /// The baked graph in DOT (subgraphs flattened, as replayed), each member of a fused kernel marked with
    /// the kernel it runs in (a tiled stencil group also with its steps, tile and halo), and a kernel whose
    /// fusion was declined with the reason.
    pub fn to_dot(&self, detail: Detail) -> String {
        self.state.desc.to_dot_annotated(detail, &|name: &str| {
            let named = |names: &[String]| names.iter().any(|n| n == name);
            let fused = self.state.fused.groups.iter().find(|g| named(&g.names));
            let declined = self.state.fused.declined.iter().rfind(|d| named(&d.names));
            match (fused, declined) {
                (Some(g), _) => Some(match g.tiling {
                    Some(t) => format!(
                        "tiled: {} steps in one dispatch, {t}: {}",
                        g.members.len(),
                        g.names.join(" + ")
                    ),
                    None => format!("fused: {}", g.names.join(" + ")),
                }),
                (None, Some(d)) => Some(format!("not fused: {d}")),
                (None, None) => None,
            }
        })
    }

    /// Bytes of GPU memory this graph allocated for its own buffers: the transient heaps the graph-owned
    /// buffers that may share memory are ranges of, and those kept apart (a buffer fusion keeps in registers
    /// takes none; the 16-byte placeholder they are bound to is not counted). Equal to the memory plan's
    /// `owned_bytes()`.
    pub fn owned_bytes(&self) -> u64 {
        let bound = &self.state.bound;
        let apart: u64 = self
            .state
            .desc
            .buffers
            .iter()
            .zip(&bound.buffers)
            .filter(|(b, slice)| {
                b.role == graph_core::ir::Role::Owned
                    && !bound.heaps.contains(&slice.buffer)
                    && bound.placeholder.as_ref() != Some(&slice.buffer)
            })
            .map(|(_, slice)| slice.buffer.size())
            .sum();
        apart + bound.heaps.iter().map(wgpu::Buffer::size).sum::<u64>()
    }

    /// Where bake placed each graph-owned buffer: the buffers that never live at one step of a replay share
    /// one heap ([`graph_core::memory`]); the rest, and why, apart. [`BakedGraph::owned_bytes`] is what it
    /// allocated.
    pub fn memory_plan(&self) -> &graph_core::memory::MemoryPlan {
        &self.state.program.memory
    }

    /// The description this graph was baked from.
    pub fn description(&self) -> &GraphDesc {
        &self.state.desc
    }

    /// Where the parameters go on this device: push constants, or the uniform-buffer fallback.
    pub fn params_storage(&self) -> ParamsStorage {
        self.transport.storage()
    }

    /// The parameter block the next replay uses, as bytes in the WGSL layout.
    pub fn params_bytes(&self) -> &[u8] {
        &self.params
    }

    /// Replaces the whole parameter block; its length must be the block's.
    pub fn set_params_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if bytes.len() != self.params.len() {
            return Err(Error::ParamsSize {
                graph: self.state.desc.name.to_string(),
                expected: self.params.len(),
                actual: bytes.len(),
            });
        }
        self.params.copy_from_slice(bytes);
        Ok(())
    }

    /// Sets parameter `name` for the next replays (no re-bake); `T` must be its declared type.
    pub fn set_param<T: ParamValue>(&mut self, name: &str, value: T) -> Result<(), Error> {
        let offset = self.param_offset::<T>(name)?;
        let bytes = crate::element::param_bytes(&value);
        self.params[offset..offset + bytes.len()].copy_from_slice(&bytes);
        Ok(())
    }

    /// The value of parameter `name` for the next replay; `T` must be its declared type.
    pub fn param<T: ParamValue>(&self, name: &str) -> Result<T, Error> {
        let offset = self.param_offset::<T>(name)?;
        Ok(crate::element::param_from_bytes(&self.params[offset..]))
    }

    /// The byte offset of parameter `name`, checked to hold a `T` within the block.
    fn param_offset<T: ParamValue>(&self, name: &str) -> Result<usize, Error> {
        let fields = &self.state.desc.params.fields;
        let Some(field) = fields.iter().find(|f| f.name == name) else {
            let known = fields.iter().map(|f| format!("`{}`", f.name));
            return Err(unknown(&self.state.desc, "parameter", name, known));
        };
        if field.ty != T::TYPE {
            return Err(Error::ParamType {
                graph: self.state.desc.name.to_string(),
                name: name.to_string(),
                expected: field.ty.wgsl(),
                actual: T::TYPE.wgsl(),
            });
        }
        // Validated at bake: every field fits the block.
        Ok(field.offset as usize)
    }

    /// Gives upload node `node` the data of the next replay: `[T]` of its element type and range length.
    /// The replay takes it; each replay needs its own.
    pub fn upload<T: Element>(&mut self, node: &str, data: &[T]) -> Result<(), Error> {
        let is_upload = |op: &OpDesc| matches!(op, OpDesc::Upload { .. });
        let index = self.node_named(node, "upload", is_upload)?;
        self.upload_at(index, data)
    }

    /// [`BakedGraph::upload`] by declaration index.
    pub(crate) fn upload_at<T: Element>(&mut self, node: usize, data: &[T]) -> Result<(), Error> {
        self.fit_upload(node)?;
        self.state.uploads.give(
            &self.state.desc,
            node,
            Some(T::TYPE),
            bytemuck::cast_slice(data),
        )
    }

    /// [`BakedGraph::upload`] as bytes of the node's element type (for tools that handle every element type
    /// alike); the length must be the range's.
    pub fn upload_bytes(&mut self, node: &str, bytes: &[u8]) -> Result<(), Error> {
        let is_upload = |op: &OpDesc| matches!(op, OpDesc::Upload { .. });
        let index = self.node_named(node, "upload", is_upload)?;
        self.upload_bytes_at(index, bytes)
    }

    /// [`BakedGraph::upload_bytes`] by declaration index.
    pub(crate) fn upload_bytes_at(&mut self, node: usize, bytes: &[u8]) -> Result<(), Error> {
        self.fit_upload(node)?;
        self.state.uploads.give(&self.state.desc, node, None, bytes)
    }

    /// Before upload node `node` takes data: the textures sized by parameters at the current ones, and its
    /// own texture, if it uploads one, with a size to take data of.
    fn fit_upload(&mut self, node: usize) -> Result<(), Error> {
        self.fit_textures_to_params()?;
        match self.state.desc.nodes.get(node).map(|n| &n.op) {
            Some(&OpDesc::Upload { buffer, .. }) => self.check_sized(Some(buffer as usize)),
            _ => Ok(()),
        }
    }

    /// Gives upload node `node`, of an `rgba8unorm` 2-D texture, an image of the texture's size.
    pub fn upload_image(&mut self, node: &str, image: &image::RgbaImage) -> Result<(), Error> {
        let is_upload = |op: &OpDesc| matches!(op, OpDesc::Upload { .. });
        let index = self.node_named(node, "upload", is_upload)?;
        self.upload_image_at(index, image)
    }

    /// [`BakedGraph::upload_image`] by declaration index.
    pub(crate) fn upload_image_at(
        &mut self,
        node: usize,
        image: &image::RgbaImage,
    ) -> Result<(), Error> {
        self.fit_upload(node)?;
        self.state.uploads.give_image(&self.state.desc, node, image)
    }

    /// The index of the node named `name`; an unknown name is an error listing the nodes `fits` accepts.
    fn node_named(
        &self,
        name: &str,
        kind: &'static str,
        fits: impl Fn(&OpDesc) -> bool,
    ) -> Result<usize, Error> {
        self.state
            .desc
            .nodes
            .iter()
            .position(|n| n.name == name)
            .ok_or_else(|| {
                let nodes = self.state.desc.nodes.iter();
                let known = nodes
                    .filter(|n| fits(&n.op))
                    .map(|n| format!("`{}`", n.name));
                unknown(&self.state.desc, kind, name, known)
            })
    }

    /// Whether a replay runs host tasks between its GPU partitions (and so waits for the GPU before them).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn has_host_phase(&self) -> bool {
        self.state.program.has_host_phase()
    }

    /// Gives host task `node` its closure.
    pub fn on_host(
        &mut self,
        node: &str,
        task: impl FnMut(&HostContext<'_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        let is_host = |op: &OpDesc| matches!(op, OpDesc::Host { .. });
        let index = self.node_named(node, "host task", is_host)?;
        self.on_host_at(index, Box::new(task))
    }

    /// Gives interop task `node` its closure.
    pub fn on_interop(
        &mut self,
        node: &str,
        task: impl FnMut(&mut InteropContext<'_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        let is_interop = |op: &OpDesc| matches!(op, OpDesc::Interop { .. });
        let index = self.node_named(node, "interop task", is_interop)?;
        self.on_interop_at(index, Box::new(task))
    }

    /// Gives the interop task at declaration index `index` its closure.
    pub(crate) fn on_interop_at(
        &mut self,
        index: usize,
        task: InteropTask,
    ) -> Result<&mut Self, Error> {
        let is_interop = |op: &OpDesc| matches!(op, OpDesc::Interop { .. });
        place_task(
            &self.state.desc,
            &mut self.interop_tasks,
            index,
            task,
            is_interop,
            "an interop task",
        )?;
        Ok(self)
    }

    /// Makes kernel `choice` the active one of its group of alternatives (SYCL's dynamic command group): from
    /// the next replay on it runs, and the group's other choices do not. Nothing is re-baked (every choice's
    /// pipeline and bind group were made at bake), and a replay already submitted keeps what it was submitted
    /// with.
    pub fn select(&mut self, choice: &str) -> Result<&mut Self, Error> {
        let is_choice = |op: &OpDesc| matches!(op, OpDesc::Kernel(k) if k.alternative.is_some());
        let index = self.node_named(choice, "choice of alternatives", is_choice)?;
        self.select_at(index)
    }

    /// [`BakedGraph::select`] by declaration index.
    pub(crate) fn select_at(&mut self, index: usize) -> Result<&mut Self, Error> {
        let group = match self.state.desc.nodes.get(index).map(|n| &n.op) {
            Some(OpDesc::Kernel(k)) => k.alternative.as_ref().map(|a| a.group.clone()),
            _ => None,
        };
        let Some(group) = group else {
            return Err(not_a(&self.state.desc, index, "a choice of alternatives"));
        };
        for (n, node) in self.state.desc.nodes.iter().enumerate() {
            if let OpDesc::Kernel(k) = &node.op
                && let Some(a) = &k.alternative
                && a.group == group
            {
                self.active[n] = n == index;
            }
        }
        Ok(self)
    }

    /// Turns node `node` (a kernel, a fill, a copy, or a subgraph with everything in it) off, or on again, from
    /// the next replay on (CUDA's `cudaGraphNodeSetEnabled`): a node turned off dispatches no workgroups (a
    /// copy is left out), and its edges still order the nodes around it. Nothing is re-baked; the native
    /// recorder records its command buffers again at the next replay, as for a change of dispatch size. A
    /// replay already submitted keeps what it was submitted with.
    ///
    /// A buffer a node turned off writes keeps what it held. Two things need a rebuild for that, made the
    /// first time a node is turned off (an update: what is bound stays, pending uploads too): a kernel bake
    /// fused with others runs inside their kernel, and a graph-owned buffer it writes may share memory with
    /// another buffer. Built again, the node gets a dispatch of its own and what it writes memory of its own,
    /// for good (every later rebuild keeps a node ever turned off apart), so turning it on and off again is
    /// free. A buffer made again by that rebuild starts zeroed: until the node runs, that is what it holds. To
    /// pay it at bake instead, keep the node out of fusion and its buffers apart (`#[no_fusion]`,
    /// `#[no_alias]`). An error, changing nothing, for other nodes (host and interop tasks, uploads,
    /// readbacks, or a subgraph holding one).
    pub fn set_enabled(&mut self, node: &str, on: bool) -> Result<&mut Self, Error> {
        let index = self.node_named(node, "node that can be turned off", switchable)?;
        self.set_enabled_at(index, on)
    }

    /// Whether node `node` runs (see [`BakedGraph::set_enabled`]): an error for a name the graph lacks.
    pub fn is_enabled(&self, node: &str) -> Result<bool, Error> {
        let index = self.node_named(node, "node", |_| true)?;
        Ok(self.enabled.get(index).copied().unwrap_or(true))
    }

    /// [`BakedGraph::set_enabled`] by declaration index.
    pub(crate) fn set_enabled_at(&mut self, index: usize, on: bool) -> Result<&mut Self, Error> {
        let targets = enable_targets(&self.state.desc, index)?;
        let (was, was_off) = (self.enabled.clone(), self.ever_off.clone());
        // Turned off for the first time: a kernel fused with others has no dispatch of its own to skip, and a
        // graph-owned buffer it writes may share memory with another buffer, whose bytes it would then hold
        // when the node does not run. Built again, such a node gets a dispatch of its own and what it writes
        // memory of its own, from then on (every rebuild keeps what was ever turned off apart).
        let desc = &self.state.desc;
        let fused = |t: usize| {
            let groups = &self.state.fused.groups;
            groups.iter().any(|g| g.members.contains(&(t as u32)))
        };
        let rebuild = !on
            && targets.iter().any(|&t| {
                !self.ever_off.get(t).copied().unwrap_or(true)
                    && (fused(t) || writes_owned(desc, t))
            });
        for &t in &targets {
            if let Some(flag) = self.enabled.get_mut(t) {
                *flag = on;
            }
            if let Some(off) = self.ever_off.get_mut(t) {
                *off |= !on;
            }
        }
        if rebuild {
            let (desc, externals) = (self.state.desc.clone(), self.state.externals.clone());
            if let Err(e) = self.rebuild(desc, externals) {
                self.enabled = was;
                self.ever_off = was_off;
                return Err(e);
            }
        }
        Ok(self)
    }

    /// The active choice of group of alternatives `group`, by name.
    pub fn active_choice(&self, group: &str) -> Option<&str> {
        self.state
            .desc
            .nodes
            .iter()
            .zip(&self.active)
            .find_map(|(node, &on)| match &node.op {
                OpDesc::Kernel(k)
                    if on && k.alternative.as_ref().is_some_and(|a| a.group == group) =>
                {
                    Some(&*node.name)
                }
                _ => None,
            })
    }

    /// Gives the host task at declaration index `index` its closure.
    pub(crate) fn on_host_at(&mut self, index: usize, task: HostTask) -> Result<&mut Self, Error> {
        let is_host = |op: &OpDesc| matches!(op, OpDesc::Host { .. });
        place_task(
            &self.state.desc,
            &mut self.host_tasks,
            index,
            task,
            is_host,
            "a host task",
        )?;
        Ok(self)
    }

    /// Runs the graph once: one submission per GPU partition; returns without
    /// waiting unless the graph has host tasks, which wait for the partition before them. What the device
    /// reports while the replay records and submits is this replay's error, with the graph's name
    /// ([`Error::InGraph`]).
    pub fn replay(&mut self) -> Result<Submission, Error> {
        let _span = tracing::debug_span!("replay", graph = %self.state.desc.name).entered();
        self.gpu.check_lost()?;
        let gpu = self.gpu.clone();
        // Gates write their counts through the queue before each replay.
        let quiet = self.state.gates.is_none()
            && self
                .state
                .native
                .as_ref()
                .is_some_and(|native| native.calls_no_wgpu(&gpu));
        let scope = if quiet {
            OpScope::without_wgpu(&gpu)
        } else {
            OpScope::enter(&gpu)
        };
        let submitted = self.submit(Timing::None);
        scope
            .finish(submitted)
            .map_err(|e| e.in_graph(&self.state.desc.name))
    }

    /// [`BakedGraph::replay`], awaiting the GPU before each host phase instead of blocking: how a graph with
    /// host tasks replays on the web (where `replay` refuses a graph with host tasks), and
    /// on any target under an executor. Before a phase, the buffers and textures its tasks declared `read` or
    /// `read_write` are fetched (awaited too), and the tasks read those copies. Resolves to the replay's
    /// [`Submission`], awaited in turn for its end and readbacks: `g.replay_async().await?.await?`.
    ///
    /// What the device reports while the replay records, submits and runs host tasks is this replay's error, as
    /// for `replay`: its scope is open between awaits only (never while other work on the thread runs), so
    /// several awaited replays may interleave on one thread. The future is not `Send`: those scopes belong
    /// to the thread it runs on. Natively, a replay that must record the native recorder's command buffers
    /// again (after a change of dispatch sizes) still waits for the graph's last replay on this thread.
    pub async fn replay_async(&mut self) -> Result<Submission, Error> {
        self.gpu.check_lost()?;
        let gpu = self.gpu.clone();
        let mut scope = Some(OpScope::enter(&gpu));
        let submitted = self
            .submit_with(Timing::None, Waiting::Async(&gpu, &mut scope))
            .await;
        let submitted = match scope.take() {
            Some(scope) => scope.finish(submitted),
            None => submitted,
        };
        submitted.map_err(|e| e.in_graph(&self.state.desc.name))
    }

    /// Runs the graph once with each dispatch timed on the GPU (timestamp queries), waits for it, and returns
    /// the times: a fused kernel is one dispatch, named after its members. The portable recorder times each
    /// dispatch in a compute pass of its own; the native recorder records its command buffers once more with
    /// a timestamp when each level may start and one after each dispatch (the replay after records them
    /// again without). Timestamps hold the dispatches after them back: see [`Profile::recorder`]. Export with
    /// [`Profile::to_chrome_trace`] and [`Profile::to_dot`]. An error when the adapter offers no timestamp
    /// queries.
    pub fn profile(&mut self) -> Result<Profile, Error> {
        let _span = tracing::info_span!("profile", graph = %self.state.desc.name).entered();
        let mut profile = self
            .profile_unnamed()
            .map_err(|e| e.in_graph(&self.state.desc.name))?;
        // The plan's buffer indices are the baked description's (fusion keeps them).
        let names: Vec<&str> = self.state.desc.buffers.iter().map(|b| &*b.name).collect();
        profile.memory = self.state.program.memory.summary(&names);
        Ok(profile)
    }

    /// [`BakedGraph::profile`], its errors as the device gives them.
    fn profile_unnamed(&mut self) -> Result<Profile, Error> {
        self.gpu.check_lost()?;
        profile::check_timestamps(&self.gpu, &self.state.desc.name)?;
        let gpu = self.gpu.clone();
        if self.state.native.is_some() {
            let mut timed = Vec::new();
            let scope = OpScope::enter(&gpu);
            let submitted = self.submit(Timing::Native(&mut timed));
            scope.finish(submitted)?.wait()?;
            let queries = timed.iter().map(|t| t.end_query + 1).max().unwrap_or(0);
            let scope = OpScope::enter(&gpu);
            let ticks = match &self.state.native {
                Some(native) => native.read_timestamps(queries),
                None => Err(Error::Gpu(
                    "the native recorder went away while profiling".into(),
                )),
            };
            let ticks = scope.finish(ticks)?;
            let spans = timed.iter().map(|t| {
                let tick = |q: u32| ticks.get(q as usize).copied().unwrap_or(0);
                (t.node, tick(t.start_query), tick(t.end_query))
            });
            return Ok(profile::profile_of(
                &gpu,
                &self.state.desc,
                &self.state.fused.groups,
                "native",
                spans,
            ));
        }
        let dispatches = self.state.program.dispatches();
        let mut timestamps = Timestamps::new(&gpu, &self.state.desc.name, dispatches)?;
        let scope = OpScope::enter(&gpu);
        let submitted = self.submit(Timing::Portable(&mut timestamps));
        scope.finish(submitted)?.wait()?;
        let scope = OpScope::enter(&gpu);
        let profile = timestamps.read(&gpu, &self.state.desc, &self.state.fused.groups);
        scope.finish(profile)
    }

    /// [`BakedGraph::replay`], its command buffers kept back on the `Gpu`'s queue to be submitted with
    /// whatever goes through the queue next (an eager stream's calls, batched). The portable recorder only:
    /// the native one submits as [`BakedGraph::replay`] does.
    pub(crate) fn replay_deferred(&mut self) -> Result<(), Error> {
        self.gpu.check_lost()?;
        let gpu = self.gpu.clone();
        let scope = OpScope::enter(&gpu);
        let submitted = self.submit(Timing::Deferred);
        // Handed to the queue only once they recorded cleanly: an invalid command buffer would fail whatever
        // submission took it, another graph's included.
        let held = std::mem::take(&mut self.held);
        drop(
            scope
                .finish(submitted)
                .map_err(|e| e.in_graph(&self.state.desc.name))?,
        );
        for buffer in held {
            gpu.queue().defer(buffer);
        }
        Ok(())
    }

    /// [`BakedGraph::replay`], then waits for it.
    pub fn replay_blocking(&mut self) -> Result<Finished, Error> {
        self.replay()?.wait()
    }

    /// Records and submits a replay, blocking before its host phases.
    fn submit(&mut self, timing: Timing<'_>) -> Result<Submission, Error> {
        now(self.submit_with(timing, Waiting::Blocking))?
    }

    /// Records and submits a replay, waiting before its host phases as `waiting` says.
    async fn submit_with(
        &mut self,
        timing: Timing<'_>,
        waiting: Waiting<'_, '_>,
    ) -> Result<Submission, Error> {
        // The web cannot block: a replay with host tasks (which wait for the GPU work before them, and read
        // buffers) is refused before it submits anything (a replay fails whole or not at all).
        if cfg!(target_arch = "wasm32")
            && matches!(waiting, Waiting::Blocking)
            && self.state.program.has_host_phase()
        {
            return Err(Error::Wait(format!(
                "graph `{}` has host tasks, which wait for the GPU and read buffers; the web cannot block: \
                 replay it with `replay_async().await`",
                self.state.desc.name
            )));
        }
        self.fit_textures_to_params()?;
        self.check_sized(None)?;
        // The portable recorder's pipelines, made at its first replay where bake made the native one's.
        if self.state.native.is_none() || matches!(timing, Timing::Portable(_)) {
            self.state.portable_kernels(&self.gpu, &self.transport)?;
        }
        let desc: &GraphDesc = &self.state.desc;
        let node_name = |n: usize| desc.nodes[n].name.to_string();
        let (active, enabled) = (&self.active, &self.enabled);
        let on = |flags: &[bool], n: usize| flags.get(n).copied().unwrap_or(true);
        let runs = |n: usize| on(active, n) && on(enabled, n);
        resolve_dispatches(
            &self.state.program,
            &self.params,
            &self.state.bound.lens,
            runs,
            &mut self.workgroups,
        )
        .map_err(|(node, problem)| {
            problem.into_error(desc, node, self.state.program.max_workgroups)
        })?;
        // Every task has its closure before any work is submitted: a replay fails whole or not at all.
        if let Some(missing) = self.missing_task() {
            let (graph, node) = (desc.name.to_string(), node_name(missing));
            return Err(match desc.nodes[missing].op {
                OpDesc::Interop { .. } => Error::InteropTaskMissing { graph, node },
                _ => Error::HostTaskMissing { graph, node },
            });
        }
        if let Some(missing) = self.state.uploads.missing() {
            return Err(Error::UploadMissing {
                graph: desc.name.to_string(),
                node: node_name(missing),
            });
        }
        // The native command buffers, unless this replay is profiled through wgpu's passes.
        let native = match timing {
            Timing::Portable(_) => None,
            _ => self.state.native.as_mut(),
        };
        // Readbacks are mapped after their submission, so a replay that reads back is submitted now.
        let defer = matches!(timing, Timing::Deferred) && !self.state.readbacks.any();
        if native.is_none() {
            self.transport.before_replay(self.gpu.queue(), &self.params);
        }
        if let Some(gates) = &mut self.state.gates {
            gates.before_replay(self.gpu.queue(), &self.workgroups);
        }
        self.state.uploads.before_replay(self.gpu.queue());
        let readback_set = self
            .state
            .readbacks
            .any()
            .then(|| self.state.readbacks.take_set(&self.gpu));
        let (gpu, bound) = (&self.gpu, &self.state.bound);
        let (host_tasks, interop_tasks) = (&mut self.host_tasks, &mut self.interop_tasks);
        let host = |nodes: &[u32], prefetched: Option<&Prefetched>| {
            for &n in nodes {
                run_host_task(desc, gpu, bound, host_tasks, n as usize, prefetched)?;
            }
            // A task may have lost the device (or destroyed it): stop before submitting to it.
            gpu.poll_lost()
        };
        // Node `node`'s interop task, recording into `encoder` (either recorder gives one at the task's place).
        let mut interop = |node: u32, encoder: &mut wgpu::CommandEncoder| {
            let n = node as usize;
            let (Some(task), Some(OpDesc::Interop { accesses })) = (
                interop_tasks.get_mut(n).and_then(Option::as_mut),
                desc.nodes.get(n).map(|d| &d.op),
            ) else {
                return Ok(());
            };
            let mut context = InteropContext {
                device: gpu.device(),
                queue: gpu.queue(),
                encoder,
                buffers: &bound.buffers,
                textures: &bound.textures,
                desc,
                node: n,
                accesses,
            };
            match std::panic::catch_unwind(AssertUnwindSafe(|| task(&mut context))) {
                Ok(result) => result
                    .map_err(|e| e.of_task(&desc.name, &desc.nodes[n].name, TaskKind::Interop)),
                Err(payload) => Err(Error::InteropTaskPanicked {
                    graph: desc.name.to_string(),
                    node: desc.nodes[n].name.to_string(),
                    message: panic_message(payload.as_ref()),
                }),
            }
        };
        let transfers = TransferBuffers {
            buffers: &bound.buffers,
            textures: &bound.textures,
            uploads: &self.state.uploads,
            readbacks: readback_set.as_deref().unwrap_or(&[]),
        };
        let (mut native_recorder, mut portable_recorder) = (None, None);
        let recorder: &mut dyn Recorder<Submitted = Work> = match (native, timing) {
            (Some(native), timing) => {
                match timing {
                    Timing::Native(timed) => {
                        *timed = native.prepare_profiled(
                            gpu,
                            &self.state.program,
                            &self.workgroups,
                            &self.params,
                        )?;
                    }
                    _ => {
                        native.prepare(gpu, &self.state.program, &self.workgroups, &self.params)?
                    }
                }
                native_recorder.insert(native.recorder(gpu, transfers))
            }
            (None, timing) => {
                let timestamps = match timing {
                    Timing::Portable(timestamps) => Some(timestamps),
                    _ => None,
                };
                let Some(kernels) = self.state.kernels.as_ref() else {
                    return Err(Error::Gpu(
                        "the portable recorder's kernels were not made".into(),
                    ));
                };
                portable_recorder.insert(WgpuRecorder::new(
                    gpu,
                    (&self.state.program, kernels),
                    &self.transport,
                    &self.params,
                    transfers,
                    (self.state.gates.as_ref(), timestamps),
                    defer,
                ))
            }
        };
        let fetched = (&bound.buffers[..], &bound.lens[..], &bound.textures[..]);
        let prefetch = |nodes: &[u32]| Prefetched::fetch(gpu, desc, fetched, nodes.to_vec());
        let last = replay_partitions(
            (&self.state.program, &self.workgroups, &self.enabled),
            recorder,
            waiting,
            prefetch,
            host,
            |node, recorder| recorder.with_encoder(&mut |encoder| interop(node, encoder)),
        )
        .await;
        if let Some(recorder) = portable_recorder.as_mut() {
            self.held.append(&mut recorder.held);
        }
        let last = last?;
        // What trailing host tasks wrote is queued, not submitted: it goes to the GPU ahead of the next
        // submission (a replay, a read), which is all that can see it. Submitting it here would make waiting
        // for this replay wait for every other graph's work before it on the queue.
        let mapped = readback_set
            .as_ref()
            .map(|set| self.state.readbacks.map(set));
        // The marker of the last submission, unless a host phase after it already waited for it.
        let marker = native_recorder
            .as_ref()
            .and_then(|r| r.marked())
            .filter(|_| last.is_some());
        // With readbacks and a direct last submission, the wgpu one the readbacks map after.
        let maps = native_recorder
            .as_ref()
            .and_then(|r| r.last_wgpu())
            .filter(|_| readback_set.is_some() && last.as_ref().is_some_and(Work::is_direct));
        Ok(Submission {
            gpu: self.gpu.clone(),
            index: last,
            readbacks: (self.state.readbacks.clone(), readback_set),
            maps,
            marker,
            mapped,
            graph: std::marker::PhantomData,
        })
    }

    /// The first host or interop task without its closure.
    fn missing_task(&self) -> Option<usize> {
        fn unset<T>(tasks: &[Option<T>], n: u32) -> bool {
            tasks.get(n as usize).is_none_or(Option::is_none)
        }
        let first = self.state.program.partitions.iter().find_map(|p| match p {
            Partition::Host(nodes) => nodes.iter().find(|&&n| unset(&self.host_tasks, n)).copied(),
            Partition::Gpu(steps) => steps.iter().find_map(|step| match *step {
                Step::Interop(node) if unset(&self.interop_tasks, node) => Some(node),
                _ => None,
            }),
        });
        first.map(|n| n as usize)
    }
}

/// Whether node `n` writes a graph-owned buffer.
fn writes_owned(desc: &GraphDesc, n: usize) -> bool {
    let owned = |b: u32| {
        desc.buffers
            .get(b as usize)
            .is_some_and(|b| b.role == graph_core::ir::Role::Owned)
    };
    match desc.nodes.get(n).map(|node| &node.op) {
        Some(OpDesc::Kernel(k)) => k
            .bindings
            .iter()
            .any(|a| a.mode.writes() && owned(a.buffer)),
        Some(OpDesc::Copy { dst, .. }) => owned(*dst),
        _ => false,
    }
}

/// Whether a node of this kind can be turned off by itself: a kernel (fills are kernels), or a copy. A
/// subgraph's node (an empty node once flattened) is checked by [`enable_targets`].
fn switchable(op: &OpDesc) -> bool {
    matches!(op, OpDesc::Kernel(_) | OpDesc::Copy { .. } | OpDesc::Empty)
}

/// The nodes turning node `index` off turns off: itself, or for a subgraph (flattened: an empty node whose
/// nodes are named `index's name.child`), every node of its child at any depth. An error for a node of
/// another kind, an empty node that is no subgraph, or a subgraph holding a node that cannot be turned off.
fn enable_targets(desc: &GraphDesc, index: usize) -> Result<Vec<usize>, Error> {
    let node = desc
        .nodes
        .get(index)
        .ok_or_else(|| not_a(desc, index, "a kernel, fill, copy or subgraph"))?;
    match node.op {
        OpDesc::Kernel(_) | OpDesc::Copy { .. } => return Ok(vec![index]),
        OpDesc::Empty => {}
        _ => return Err(not_a(desc, index, "a kernel, fill, copy or subgraph")),
    }
    let prefix = format!("{}.", node.name);
    let members: Vec<usize> = (0..desc.nodes.len())
        .filter(|&n| desc.nodes[n].name.starts_with(&prefix))
        .collect();
    if members.is_empty() {
        return Err(not_a(desc, index, "a kernel, fill, copy or subgraph"));
    }
    if let Some(&held) = members.iter().find(|&&n| !switchable(&desc.nodes[n].op)) {
        return Err(Error::Unsupported {
            graph: desc.name.to_string(),
            what: format!(
                "subgraph `{}` cannot be turned off: it holds {} `{}`, which runs on the host or moves data \
                 between host and GPU",
                node.name,
                desc.nodes[held].op.kind(),
                desc.nodes[held].name
            ),
        });
    }
    Ok(members.into_iter().chain([index]).collect())
}

/// Puts `task` in `slot[index]` when node `index` is of the kind `fits` accepts.
fn place_task<T>(
    desc: &GraphDesc,
    slots: &mut [Option<T>],
    index: usize,
    task: T,
    fits: impl Fn(&OpDesc) -> bool,
    kind: &'static str,
) -> Result<(), Error> {
    let node = desc.nodes.get(index);
    match slots.get_mut(index) {
        Some(slot) if node.is_some_and(|n| fits(&n.op)) => {
            *slot = Some(task);
            Ok(())
        }
        _ => Err(not_a(desc, index, kind)),
    }
}

/// Node `index` is not what the call needs (`expected`).
fn not_a(desc: &GraphDesc, index: usize, expected: &'static str) -> Error {
    Error::NotANode {
        graph: desc.name.to_string(),
        node: desc
            .nodes
            .get(index)
            .map_or_else(|| format!("#{index}"), |n| n.name.to_string()),
        expected,
    }
}

/// Runs host task `n`. A panic in it is caught and becomes this replay's error; the baked graph stays
/// usable, and the next replay runs the task again.
fn run_host_task(
    desc: &GraphDesc,
    gpu: &Gpu,
    bound: &BoundBuffers,
    host_tasks: &mut [Option<HostTask>],
    n: usize,
    prefetched: Option<&Prefetched>,
) -> Result<(), Error> {
    let OpDesc::Host { accesses } = &desc.nodes[n].op else {
        return Ok(());
    };
    let context = HostContext {
        gpu,
        buffers: &bound.buffers,
        lens: &bound.lens,
        textures: &bound.textures,
        desc,
        node: n,
        accesses,
        prefetched,
    };
    let Some(task) = host_tasks.get_mut(n).and_then(Option::as_mut) else {
        return Ok(());
    };
    match std::panic::catch_unwind(AssertUnwindSafe(|| task(&context))) {
        Ok(result) => {
            result.map_err(|e| e.of_task(&desc.name, &desc.nodes[n].name, TaskKind::Host))
        }
        Err(payload) => Err(Error::HostTaskPanicked {
            graph: desc.name.to_string(),
            node: desc.nodes[n].name.to_string(),
            message: panic_message(payload.as_ref()),
        }),
    }
}
