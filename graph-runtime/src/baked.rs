//! A `graph!` graph baked onto a device: the typed layer over [`BakedGraph`], with its parameter struct,
//! its buffer struct, its node sets and its transfer handles in place of names. Every node and handle a
//! method takes is of graph `G` and of the role the method needs (a kernel for `set_dispatch`, a choice for
//! `select`..), so a node of another graph or of another kind is a compile error, not an `Err`.

#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::ops::Range;

use graph_core::ir::ParamsStorage;

use crate::baked_graph::BakedGraph;
use crate::baked_state::UpdateReport;
use crate::buffer::AnyBuffer;
use crate::element::Element;
use crate::error::Error;
use crate::gpu::Gpu;
use crate::host::{ContextKey, HostContext, HostNode, HostTask};
use crate::interop::InteropContext;
use crate::profile::Profile;
use crate::recorder::NativeParamsIn;
use crate::task_graph::{GraphNode, TaskGraph};
use crate::texture::Texture;
use crate::transfer::{Finished, Texels, Upload};
use crate::update::Dispatch;
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
        Self::with_resources(gpu, &G::bind(buffers), &G::bind_textures(buffers))
    }

    /// Bakes with buffers given by declaration index, untyped: each is checked for element type, length and
    /// usage. The description is validated first, so one that did not come from the checks is an error
    /// rather than a panic.
    pub fn with_buffers(gpu: &Gpu, buffers: &[(u32, &AnyBuffer)]) -> Result<Self, Error> {
        Self::with_resources(gpu, buffers, &[])
    }

    /// [`Baked::with_buffers`] with textures too, by declaration index.
    pub fn with_resources(
        gpu: &Gpu,
        buffers: &[(u32, &AnyBuffer)],
        textures: &[(u32, &Texture)],
    ) -> Result<Self, Error> {
        let graph = BakedGraph::bake_indexed(
            gpu,
            Cow::Borrowed(G::DESCRIPTION),
            buffers,
            textures,
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

    /// Checks the promise of the graph's `FUSED` constant, which the macro made over the declared lengths
    /// (`baked.check_fused(Graph::FUSED)?`): each group of `promised` runs inside one kernel bake fused over
    /// the bound buffers on this device. An `Err` ([`Error::FusionNotKept`]) names the first group it did
    /// not, what bake fused instead, and what it declined and why ([`BakedGraph::fusion_declined`]); a group
    /// may also run inside a larger one, which bound lengths the macro did not know can allow.
    pub fn check_fused(&self, promised: &[&[G::Node]]) -> Result<(), Error> {
        let desc = self.graph.description();
        let name = |n: u32| {
            desc.nodes
                .get(n as usize)
                .map_or_else(|| format!("#{n}"), |node| format!("`{}`", node.name))
        };
        let names = |nodes: &mut dyn Iterator<Item = u32>| {
            let names: Vec<String> = nodes.map(name).collect();
            format!("[{}]", names.join(", "))
        };
        let fused = self.graph.fused();
        for group in promised {
            let members: Vec<u32> = group.iter().map(|&n| G::node_index(n) as u32).collect();
            if fused
                .iter()
                .any(|f| members.iter().all(|m| f.members.contains(m)))
            {
                continue;
            }
            let declined: Vec<String> = self
                .graph
                .fusion_declined()
                .iter()
                .map(|d| d.to_string())
                .collect();
            return Err(Error::FusionNotKept {
                graph: desc.name.to_string(),
                group: names(&mut members.iter().copied()),
                fused: if fused.is_empty() {
                    "nothing".into()
                } else {
                    let groups: Vec<String> = fused
                        .iter()
                        .map(|f| names(&mut f.members.iter().copied()))
                        .collect();
                    groups.join(", ")
                },
                declined: if declined.is_empty() {
                    "none".into()
                } else {
                    declined.join("; ")
                },
            });
        }
        Ok(())
    }

    /// See [`BakedGraph::use_portable_recorder`].
    pub fn use_portable_recorder(&mut self) {
        self.graph.use_portable_recorder();
    }

    /// See [`BakedGraph::use_native_recorder`].
    pub fn use_native_recorder(&mut self, params_in: NativeParamsIn) -> Result<(), Error> {
        self.graph.use_native_recorder(params_in)
    }

    /// Binds the external buffers to `buffers` from the next replay on, checked as bake checks them; only the
    /// bind groups over a buffer that changed are created again, and a replay already submitted keeps the
    /// buffers it was submitted with. The buffers' types come from the graph, so a rebind cannot change its
    /// shape.
    pub fn rebind(&mut self, buffers: G::Buffers<'_>) -> Result<UpdateReport, Error> {
        self.graph
            .rebind_resources_indexed(&G::bind(&buffers), &G::bind_textures(&buffers))
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

    /// Turns `node` (`NameToggle::node`: a kernel, a fill, a copy or a subgraph) off, or on again, from the
    /// next replay on, without a re-bake: see [`BakedGraph::set_enabled`] (a kernel bake fused with others
    /// is split out of its group the first time). A subgraph holding a host or interop task, an upload or a
    /// readback is an error here.
    pub fn set_enabled(&mut self, node: G::ToggleNode, on: bool) -> Result<&mut Self, Error> {
        self.graph.set_enabled_at(node.index(), on)?;
        Ok(self)
    }

    /// Whether `node` runs (see [`Baked::set_enabled`]).
    pub fn is_enabled(&self, node: G::ToggleNode) -> bool {
        self.graph
            .enabled
            .get(node.index())
            .copied()
            .unwrap_or(true)
    }

    /// Gives a host task its closure, run at the task's place in each replay once the GPU work before it has
    /// finished. `node` says which task, and so what the closure receives (see [`HostTarget`]):
    ///
    /// - `G::HOSTS.name`, the generated handle: the task's typed context, a method per buffer it declared
    ///   (`h.grid()?` reads `grid` as its element type if declared `read` or `read_write`,
    ///   `h.write_grid(&data)?` replaces it if declared `write` or `read_write`);
    /// - a name, `"name"`, or `"subgraph.name"` for a host task of a subgraph: the untyped [`HostContext`],
    ///   buffers by name, checked at run time. Names are the flattened graph's: a subgraph's external buffers
    ///   are this graph's buffers bound to them, its own are `subgraph.buffer`.
    ///
    /// A task given a closure again keeps the last one. An error the closure returns fails the replay
    /// ([`Error::HostTask`], naming the graph and the task; the closure's own errors go in with
    /// [`Error::task`]), and so does a panic in it ([`Error::HostTaskPanicked`]).
    ///
    /// ```
    /// use graph_runtime::{graph, Error, Gpu};
    ///
    /// graph! {
    ///     /// Looks at `v`.
    ///     graph Look {
    ///         buffers { v: [f32] = input }
    ///         host look(v: read);
    ///     }
    /// }
    ///
    /// graph! {
    ///     /// Doubles `x`, lets a host task add one to it, then looks at it through a subgraph.
    ///     graph Steps {
    ///         buffers { x: [f32] = inout }
    ///         kernel twice = kernels::scale(data: x, alpha: 2.0);
    ///         host bump(x: read_write);
    ///         subgraph seen = Look(v: x: read);
    ///     }
    /// }
    ///
    /// # fn main() -> Result<(), Error> {
    /// let gpu = Gpu::new_blocking()?;
    /// let x = gpu.buffer_from_slice(&[1.0f32; 64])?;
    /// let mut g = Steps::bake(&gpu, StepsBuffers { x: &x })?;
    /// // By handle: the typed context, a reader and a writer of `x` as `[f32]`.
    /// g.on_host(Steps::HOSTS.bump, |h| {
    ///     let x: Vec<f32> = h.x()?.iter().map(|v| v + 1.0).collect();
    ///     h.write_x(&x)
    /// })?;
    /// // By name, the subgraph's task: the untyped context. Its `v` is this graph's `x`, bound to it.
    /// g.on_host("seen.look", |ctx| {
    ///     assert_eq!(ctx.read::<f32>("x")?, [3.0; 64]);
    ///     Ok(())
    /// })?;
    /// g.replay()?.wait()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn on_host<T: HostTarget<G>>(
        &mut self,
        node: T,
        mut task: impl for<'a> FnMut(T::Context<'a>) -> Result<(), Error> + Send + 'static,
    ) -> Result<&mut Self, Error> {
        let task = move |ctx: &HostContext<'_>| task(T::context(ctx, ContextKey(())));
        node.place(&mut self.graph, Box::new(task))?;
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
        self.sync_params()?;
        Ok(self.graph.replay()?.of())
    }

    /// [`Baked::replay`], awaiting the GPU before each host phase instead of blocking (see
    /// [`BakedGraph::replay_async`]): how a graph with host tasks replays on the web.
    pub async fn replay_async(&mut self) -> Result<Submission<G>, Error> {
        self.sync_params()?;
        Ok(self.graph.replay_async().await?.of())
    }

    /// [`Baked::replay`], then waits for it.
    pub fn replay_blocking(&mut self) -> Result<Finished<G>, Error> {
        self.replay()?.wait()
    }

    /// One replay with each dispatch timed on the GPU (see [`BakedGraph::profile`]).
    pub fn profile(&mut self) -> Result<Profile, Error> {
        self.sync_params()?;
        self.graph.profile()
    }

    /// The typed parameters into the untyped graph's block: what a replay uses, and what sizes the textures
    /// an upload fills.
    fn sync_params(&mut self) -> Result<(), Error> {
        self.graph
            .set_params_bytes(bytemuck::bytes_of(&self.params))
    }

    /// Gives an upload node of this graph (`Graph::UPLOADS.name`) the data of the next replay, of its range's
    /// length. The replay takes it; each replay needs its own.
    pub fn upload<T: Element>(&mut self, node: Upload<G, T>, data: &[T]) -> Result<(), Error> {
        self.sync_params()?;
        self.graph.upload_at(node.node() as usize, data)
    }

    /// Gives an upload node of a texture the texels of the next replay: their bytes, rows packed one after
    /// another (layer after layer), every texel of the bound texture.
    pub fn upload_texels(&mut self, node: Upload<G, Texels>, bytes: &[u8]) -> Result<(), Error> {
        self.sync_params()?;
        self.graph.upload_bytes_at(node.node() as usize, bytes)
    }

    /// Gives an upload node of an `rgba8unorm` texture an image of the texture's size for the next replay.
    pub fn upload_image(
        &mut self,
        node: Upload<G, Texels>,
        image: &image::RgbaImage,
    ) -> Result<(), Error> {
        self.sync_params()?;
        self.graph.upload_image_at(node.node() as usize, image)
    }
}

/// Which host task of graph `G` [`Baked::on_host`] gives a closure to, and so what the closure
/// receives (`T::Context<'a>` in `on_host`'s signature):
///
/// - a handle, `G::HOSTS.name` (a [`HostNode`] of `G`): the task's generated typed context, a method per
///   buffer it declared, so that a buffer it did not declare, or a host task of another graph, does not
///   compile;
/// - a name, `&str`: the task of that name in the flattened graph (`"look"`, or `"child.look"` for host
///   task `look` of subgraph node `child`), which receives the untyped [`HostContext`] (buffers by their
///   names in the flattened graph, checked at run time); an unknown name, or one of a node that is no host
///   task, is an `Err`.
///
/// Implemented for those two alone.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a host task of graph `{G}`",
    label = "not a host task of `{G}`",
    note = "give `on_host` a host task of this graph (`{G}::HOSTS.name`) or a task's name (`\"name\"`, `\"subgraph.name\"`)"
)]
pub trait HostTarget<G: TaskGraph>: sealed::Target {}

/// A generated handle: of its own graph alone.
impl<N: HostNode> HostTarget<N::Graph> for N {}

/// A name: of any graph, checked at run time.
impl<G: TaskGraph> HostTarget<G> for &str {}

/// What a [`HostTarget`] does, apart from its graph (so that the closure's type is known even for a handle
/// of another graph, whose one error is then the graph's). Nothing outside the crate can name it, so the two
/// targets above are the only ones.
mod sealed {
    use super::{BakedGraph, ContextKey, Error, HostContext, HostNode, HostTask};

    pub trait Target {
        /// What the task's closure receives.
        type Context<'a>;
        /// Gives the task its closure (made by `Baked::on_host`).
        fn place(self, graph: &mut BakedGraph, task: HostTask) -> Result<(), Error>;
        /// The closure's view of the task's context.
        fn context<'a>(ctx: &'a HostContext<'a>, key: ContextKey) -> Self::Context<'a>;
    }

    /// A generated handle: the typed context, the task found by its declaration index.
    impl<N: HostNode> Target for N {
        type Context<'a> = N::Context<'a>;
        fn place(self, graph: &mut BakedGraph, task: HostTask) -> Result<(), Error> {
            graph.on_host_at(self.index(), task).map(drop)
        }
        fn context<'a>(ctx: &'a HostContext<'a>, key: ContextKey) -> N::Context<'a> {
            N::context(ctx, key)
        }
    }

    /// A name: the untyped context, the task found by its name in the flattened graph.
    impl Target for &str {
        type Context<'a> = &'a HostContext<'a>;
        fn place(self, graph: &mut BakedGraph, task: HostTask) -> Result<(), Error> {
            graph.on_host(self, task).map(drop)
        }
        fn context<'a>(ctx: &'a HostContext<'a>, _: ContextKey) -> &'a HostContext<'a> {
            ctx
        }
    }
}
