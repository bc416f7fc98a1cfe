//! A `graph!` graph baked onto a device: the typed layer over [`BakedGraph`], with its parameter struct,
//! its buffer struct, its node sets and its transfer handles in place of names. Every node and handle a
//! method takes is of graph `G` and of the role the method needs (a kernel for `set_dispatch`, a choice for
//! `select`..), so a node of another graph or of another kind is a compile error, not an `Err`.

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::ops::Range;

use graph_core::ir::ParamsStorage;

use crate::baked_graph::BakedGraph;
use crate::buffer::AnyBuffer;
use crate::element::Element;
use crate::error::Error;
use crate::gpu::Gpu;
use crate::host::{ContextKey, HostContext, HostNode};
use crate::interop::InteropContext;
use crate::native_recorder::NativeParamsIn;
use crate::profile::Profile;
use crate::task_graph::{GraphNode, TaskGraph};
use crate::transfer::{Finished, Upload};
use crate::update::{Dispatch, UpdateReport};
use crate::wait::Submission;

/// A graph baked onto a device: replay it as often as needed.
pub struct Baked<G: TaskGraph> {
    graph: BakedGraph,
    params: G::Params,
}

impl<G: TaskGraph> std::fmt::Debug for Baked<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Baked")
            .field("graph", &self.graph)
            .field("params", &self.params)
            .finish()
    }
}

impl<G: TaskGraph> Baked<G> {
    /// Bakes the graph with the caller's buffers. The generated `bake` calls this.
    pub fn new(gpu: &Gpu, buffers: &G::Buffers<'_>) -> Result<Self, Error> {
        Self::with_buffers(gpu, &G::bind(buffers))
    }

    /// Bakes with buffers given by declaration index, untyped: each is checked for element type, length and
    /// usage. The description is validated first, so one that did not come from the checks is an error
    /// rather than a panic.
    pub fn with_buffers(gpu: &Gpu, buffers: &[(u32, &AnyBuffer)]) -> Result<Self, Error> {
        let graph = BakedGraph::bake_indexed(
            gpu,
            Cow::Borrowed(G::DESCRIPTION),
            buffers,
            size_of::<G::Params>(),
        )?;
        Ok(Baked {
            graph,
            params: G::Params::default(),
        })
    }

    /// The parameters the next replay uses.
    pub fn params(&self) -> &G::Params {
        &self.params
    }

    /// Changes parameters for the next replays: a push-constant write, no re-bake.
    pub fn params_mut(&mut self) -> &mut G::Params {
        &mut self.params
    }

    pub fn set_params(&mut self, params: G::Params) {
        self.params = params;
    }

    /// Where the parameters go on this device: push constants, or the uniform-buffer fallback.
    pub fn params_storage(&self) -> ParamsStorage {
        self.graph.params_storage()
    }

    /// The untyped baked graph underneath.
    pub fn untyped(&self) -> &BakedGraph {
        &self.graph
    }

    /// See [`BakedGraph::use_portable_recorder`].
    pub fn use_portable_recorder(&mut self) {
        self.graph.use_portable_recorder();
    }

    /// See [`BakedGraph::use_native_recorder`].
    pub fn use_native_recorder(&mut self, params_in: NativeParamsIn) -> Result<(), Error> {
        self.graph.use_native_recorder(params_in)
    }

    /// Gives host task `node` (`Graph::HOSTS.name`) its closure, which receives the untyped
    /// [`HostContext`] (buffers by name, checked at run time); [`Baked::on_host_typed`] gives the typed one.
    pub fn on_host<N: HostNode<Graph = G>>(
        &mut self,
        node: N,
        task: impl FnMut(&HostContext<'_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        self.graph.on_host_at(node.index(), Box::new(task))?;
        Ok(self)
    }

    /// Binds the external buffers to `buffers` from the next replay on, checked as bake checks them; only the
    /// bind groups over a buffer that changed are created again, and a replay already submitted keeps the
    /// buffers it was submitted with. The buffers' types come from the graph, so a rebind cannot change its
    /// shape.
    pub fn rebind(&mut self, buffers: G::Buffers<'_>) -> Result<UpdateReport, Error> {
        self.graph.rebind_indexed(&G::bind(&buffers))
    }

    /// Sets kernel `node`'s dispatch size (`NameKernel::node`) from the next replay on, in place of its
    /// declared one.
    pub fn set_dispatch(
        &mut self,
        node: G::KernelNode,
        dispatch: Dispatch,
    ) -> Result<UpdateReport, Error> {
        self.graph.set_dispatch_at(node.index(), dispatch)
    }

    /// Sets the range of a fill declared with a range, an upload or a readback (`NameRanged::node`) from the
    /// next replay on (see [`BakedGraph::set_range`]).
    pub fn set_range(
        &mut self,
        node: G::RangedNode,
        range: Range<u32>,
    ) -> Result<UpdateReport, Error> {
        self.graph.set_range_at(node.index(), range)
    }

    /// Sets copy `node`'s (`NameCopy::node`) source and destination ranges from the next replay on.
    pub fn set_copy_ranges(
        &mut self,
        node: G::CopyNode,
        src: Range<u32>,
        dst: Range<u32>,
    ) -> Result<UpdateReport, Error> {
        self.graph.set_copy_ranges_at(node.index(), src, dst)
    }

    /// Makes kernel `choice` (`NameChoice::node`) the active one of its group of alternatives: from the next
    /// replay on it runs in place of the group's other choices, with no re-bake; replays already submitted
    /// are not affected.
    pub fn select(&mut self, choice: G::ChoiceNode) -> Result<&mut Self, Error> {
        self.graph.select_at(choice.index())?;
        Ok(self)
    }

    /// The active choice of group of alternatives `group`, by name.
    pub fn active_choice(&self, group: &str) -> Option<&str> {
        self.graph.active_choice(group)
    }

    /// Gives a host task of a subgraph its closure, by its name in the flattened graph (`subgraph.task`; the
    /// child's buffers are the ones bound to them here, and the typed context's access order is the child's).
    pub fn on_host_named(
        &mut self,
        node: &str,
        task: impl FnMut(&HostContext<'_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        self.graph.on_host(node, task)?;
        Ok(self)
    }

    /// Gives a host task (`Graph::HOSTS.name`) its closure, which receives the node's typed context: a
    /// method per declared buffer (`ctx.grid()` reads it as its element type, `ctx.write_grid(&data)`
    /// replaces it), readable or writable as declared.
    pub fn on_host_typed<N: HostNode<Graph = G>>(
        &mut self,
        node: N,
        mut task: impl for<'a> FnMut(N::Context<'a>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        let index = node.index();
        self.graph.on_host_at(
            index,
            Box::new(move |ctx: &HostContext<'_>| task(N::context(ctx, ContextKey(())))),
        )?;
        Ok(self)
    }

    /// Gives interop task `node` (`NameInterop::node`) its closure.
    pub fn on_interop(
        &mut self,
        node: G::InteropNode,
        task: impl FnMut(&mut InteropContext<'_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        self.graph.on_interop_at(node.index(), Box::new(task))?;
        Ok(self)
    }

    /// Runs the graph once: one submission per GPU partition; returns without
    /// waiting unless the graph has host tasks, which wait for the partition before them. What the device
    /// reports while the replay records and submits is this replay's error. Its [`Finished`] (what `wait`
    /// returns) reads `G`'s readbacks: `g.replay()?.wait()?.read(G::READBACKS.x)?`.
    pub fn replay(&mut self) -> Result<Submission<G>, Error> {
        self.graph
            .set_params_bytes(bytemuck::bytes_of(&self.params))?;
        Ok(self.graph.replay()?.of())
    }

    /// [`Baked::replay`], then waits for it.
    pub fn replay_blocking(&mut self) -> Result<Finished<G>, Error> {
        self.replay()?.wait()
    }

    /// One replay with each dispatch timed on the GPU (see [`BakedGraph::profile`]).
    pub fn profile(&mut self) -> Result<Profile, Error> {
        self.graph
            .set_params_bytes(bytemuck::bytes_of(&self.params))?;
        self.graph.profile()
    }

    /// Gives an upload node of this graph (`Graph::UPLOADS.name`) the data of the next replay, of its range's
    /// length. The replay takes it; each replay needs its own.
    pub fn upload<T: Element>(&mut self, node: Upload<G, T>, data: &[T]) -> Result<(), Error> {
        self.graph.upload_at(node.node() as usize, data)
    }
}
