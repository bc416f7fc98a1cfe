//! An eager stream of GPU work (`gpu.stream()`): kernels, copies, fills and uploads over the application's
//! buffers that run at once, in call order, as an in-order queue runs them; or, between
//! [`Stream::begin_recording`] and [`Recording::end`], nodes of a [`GraphBuilder`], whose checks infer their
//! edges from the order of their accesses (SYCL's queue recording, CUDA's stream capture). What a recording
//! gives is an ordinary builder: build it, bake it, draw it, save it as a graph file.
//!
//! One function makes a call into a node in both states ([`Call::add_to`]). Run at once, the node is a graph
//! of its own, checked by the builder's checks and baked the first time a call of its shape comes (its
//! buffers named after their bindings, so the same kernel over other buffers is the same graph), then kept:
//! a later call of that shape rebinds the buffers that changed and replays. Eager graphs replay through the
//! portable recorder, each submitted at once, or, with [`Stream::batch`], kept back on the `Gpu`'s queue and
//! submitted together ([`crate::GpuQueue::pending`]): at a host wait, when the batch is full, when the
//! stream is dropped, or ahead of anything else done through the queue (a write, another graph's replay), so
//! the order is the order of the calls whether batched or not. Recorded, the calls are kept until the
//! recording ends, when every use of each buffer is known: its name, its role, whether the graph owns it.

#![forbid(unsafe_code)]

use std::sync::{Arc, Weak};

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::desc::GraphDesc;
use graph_core::ir::{AccessMode, Graph, Role};
use graph_core::library::LibrarySubgraph;
use graph_core::size::SizeExpr;
use graph_core::size_parse::parse_size;
use graph_core::types::ValueType;

use crate::baked_graph::BakedGraph;
use crate::buffer::{AnyBuffer, Buffer};
use crate::element::{Element, ParamValue};
use crate::error::Error;
use crate::gpu::Gpu;
use crate::host::{HostContext, HostTask};
use crate::interop::{InteropContext, InteropTask};

/// The most graphs an eager stream keeps baked, one per shape of call; past it the oldest goes.
const EAGER_GRAPHS: usize = 64;

/// A buffer a stream call takes: a typed [`Buffer`] or an [`AnyBuffer`].
pub trait StreamBuffer {
    fn any_buffer(&self) -> &AnyBuffer;
}

impl StreamBuffer for AnyBuffer {
    fn any_buffer(&self) -> &AnyBuffer {
        self
    }
}

impl<T: Element> StreamBuffer for Buffer<T> {
    fn any_buffer(&self) -> &AnyBuffer {
        self.as_any()
    }
}

/// An in-order stream of GPU work on a [`Gpu`] (`gpu.stream()`): its calls run at once, in order, each
/// checked as the builder checks a node; between [`Stream::begin_recording`] and [`Recording::end`] they
/// become the nodes of a [`GraphBuilder`] instead, with edges from the order of their accesses.
///
/// Each call that runs at once is submitted at once, unless [`Stream::batch`] lets calls wait to go to the
/// GPU together: see there.
pub struct Stream {
    gpu: Gpu,
    params: Vec<StreamParam>,
    /// Names given to buffers ([`Stream::name`]), which a recording declares them by.
    names: Vec<(wgpu::Buffer, String)>,
    /// What eager readbacks read, by node name, with their element type, until taken.
    readbacks: Vec<(String, ValueType, Vec<u8>)>,
    /// The library's multi-pass algorithms used so far, checked, by path.
    subgraphs: Vec<(&'static str, Arc<GraphDesc>)>,
    eager: Vec<EagerGraph>,
    recording: Option<RecordingState>,
    /// The most calls submitted together ([`Stream::batch`]).
    batch: usize,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("params", &self.params.len())
            .field("eager_graphs", &self.eager.len())
            .field("recording", &self.recording.is_some())
            .finish_non_exhaustive()
    }
}

/// A parameter the stream's kernels see as `params.NAME`.
#[derive(Debug, Clone)]
struct StreamParam {
    name: String,
    ty: ValueType,
    bytes: Vec<u8>,
}

/// A one-node graph an eager call of its shape replays, and the buffers bound to it now, by position.
struct EagerGraph {
    shape: Graph,
    baked: BakedGraph,
    bound: Vec<wgpu::Buffer>,
}

/// What a recording has gathered: the builder it records into (taken from the caller until it ends), each
/// buffer its calls used in the order of first use, and the calls, named apart. Buffers are named when it
/// ends, knowing every use (a buffer first filled may be a kernel's `x` later).
struct RecordingState {
    builder: GraphBuilder,
    buffers: Vec<RecordedBuffer>,
    calls: Vec<Call>,
    /// The host and interop tasks' closures, by node name.
    tasks: Vec<(String, Task)>,
    /// Buffers the stream made while recording (`Stream::scratch`): graph-owned in the recording.
    scratch: Vec<wgpu::Buffer>,
}

/// A buffer a recording used, and how.
struct RecordedBuffer {
    /// The recording's own handle ([`AnyBuffer::detached`]).
    buffer: AnyBuffer,
    /// Whether the application still holds the buffer.
    holder: Weak<()>,
    /// The first call that used it.
    first_call: String,
    access: Access,
}

/// A buffer one call uses, how, and the name its kernel's WGSL sees it by (`None` for copies, fills and
/// uploads, which name no binding).
#[derive(Clone)]
struct Use {
    binding: Option<String>,
    buffer: AnyBuffer,
    mode: AccessMode,
}

/// What a call does; its buffers are its [`Use`]s, in this order: a kernel's bindings, a copy's source and
/// destination, a fill's or an upload's destination. An upload's data is given beside it (a recording
/// keeps none).
enum Op {
    /// A kernel of WGSL; `dispatch` is its size, `(workgroups, sizes)`, or `None` for the builder's default
    /// (an invocation per element of the first buffer it writes).
    Kernel {
        wgsl: String,
        /// The file the WGSL was read from, which messages name.
        file: Option<String>,
        dispatch: Option<(bool, Vec<String>)>,
    },
    /// A kernel of the library, by path, with its arguments (WGSL of each argument's type).
    Library {
        path: String,
        args: Vec<(String, String)>,
    },
    /// One of the library's multi-pass algorithms (`reduce::sum`, `scan::inclusive`), checked once: a
    /// subgraph node.
    Subgraph {
        child: Arc<GraphDesc>,
    },
    Copy,
    Fill {
        value: String,
    },
    Upload,
    /// Recorded only: at once, a readback is a read ([`Stream::readback`]).
    Readback,
    /// A host task over its buffers; its closure is given beside it.
    Host,
    /// An interop task over its buffers; its closure is given beside it.
    Interop,
}

impl Op {
    /// Whether the call's binding names may name its buffers: a kernel's and a library call's (WGSL names
    /// that sizes read), not a host or interop task's (names only its closure reads, which may be any
    /// text).
    fn names_buffers(&self) -> bool {
        matches!(
            self,
            Op::Kernel { .. } | Op::Library { .. } | Op::Subgraph { .. }
        )
    }
}

/// A host or interop task's closure, given with its call.
enum Task {
    Host(HostTask),
    Interop(InteropTask),
}

/// One call: a node named `name`.
struct Call {
    name: String,
    op: Op,
    uses: Vec<Use>,
}

impl Call {
    /// Adds the call to `builder` as one node, each of its buffers by the name `names` gives it. Both states
    /// make their nodes here.
    fn add_to(&self, builder: &mut GraphBuilder, names: &[String]) {
        let name = |i: usize| names[i].as_str();
        let node = self.name.as_str();
        match &self.op {
            Op::Kernel {
                wgsl,
                file,
                dispatch,
            } => {
                let mut spec = KernelSpec::wgsl(wgsl.as_str());
                if let Some(file) = file {
                    spec = spec.in_file(file.as_str());
                }
                for (i, u) in self.uses.iter().enumerate() {
                    spec = spec.bind(u.binding.as_deref().unwrap_or(name(i)), name(i), u.mode);
                }
                // The caller's sizes name bindings (`x.len()`); the graph's name its buffers.
                let buffer_of = |binding: &str| {
                    let at = self
                        .uses
                        .iter()
                        .position(|u| u.binding.as_deref() == Some(binding));
                    at.map(|i| names[i].clone())
                };
                if let Some((workgroups, sizes)) = dispatch {
                    let sizes: Vec<String> = sizes.iter().map(|s| renamed(s, &buffer_of)).collect();
                    let sizes: Vec<&str> = sizes.iter().map(String::as_str).collect();
                    spec = match workgroups {
                        true => spec.workgroups(&sizes),
                        false => spec.threads(&sizes),
                    };
                }
                builder.kernel(node, spec);
            }
            Op::Library { path, args } => {
                let bindings: Vec<(&str, &str)> = self
                    .uses
                    .iter()
                    .enumerate()
                    .map(|(i, u)| (u.binding.as_deref().unwrap_or(name(i)), name(i)))
                    .collect();
                let args: Vec<(&str, &str)> =
                    args.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
                builder.library(node, path, &bindings, &args);
            }
            Op::Subgraph { child } => {
                let bindings: Vec<(&str, &str, AccessMode)> = self
                    .uses
                    .iter()
                    .enumerate()
                    .map(|(i, u)| (u.binding.as_deref().unwrap_or(name(i)), name(i), u.mode))
                    .collect();
                builder.subgraph(node, child, &bindings);
            }
            Op::Copy => {
                builder.copy(node, name(0), name(1));
            }
            Op::Fill { value } => {
                builder.fill(node, name(0), value);
            }
            Op::Upload => {
                builder.upload(node, name(0));
            }
            Op::Readback => {
                builder.readback(node, name(0));
            }
            Op::Host => {
                let accesses: Vec<(&str, AccessMode)> = self
                    .uses
                    .iter()
                    .enumerate()
                    .map(|(i, u)| (name(i), u.mode))
                    .collect();
                builder.host(node, &accesses);
            }
            Op::Interop => {
                let accesses: Vec<(&str, AccessMode)> = self
                    .uses
                    .iter()
                    .enumerate()
                    .map(|(i, u)| (name(i), u.mode))
                    .collect();
                builder.interop(node, &accesses);
            }
        }
    }
}

impl Gpu {
    /// An eager stream of work on this device: see [`Stream`].
    pub fn stream(&self) -> Stream {
        Stream {
            gpu: self.clone(),
            params: Vec::new(),
            names: Vec::new(),
            subgraphs: Vec::new(),
            readbacks: Vec::new(),
            eager: Vec::new(),
            recording: None,
            batch: 1,
        }
    }
}

impl Stream {
    /// Sets parameter `name`, which kernels read as `params.NAME`, declaring it at its first use; a later
    /// value must be of the same type. A recording records it as a parameter of the graph (its value is
    /// not baked in: the replay's parameters give it).
    pub fn param<T: ParamValue>(&mut self, name: &str, value: T) -> Result<&mut Self, Error> {
        // As the parameter block holds it (an `f16` as an `f32`).
        let bytes = crate::element::param_bytes(&value);
        match self.params.iter_mut().find(|p| p.name == name) {
            Some(p) if p.ty != T::TYPE => {
                return Err(Error::ParamType {
                    graph: "stream".into(),
                    name: name.to_string(),
                    expected: p.ty.wgsl(),
                    actual: T::TYPE.wgsl(),
                });
            }
            Some(p) => p.bytes = bytes,
            None => self.params.push(StreamParam {
                name: name.to_string(),
                ty: T::TYPE,
                bytes,
            }),
        }
        Ok(self)
    }

    /// Names `buffer` `name` in what a recording gives (where no buffer recorded before took the name);
    /// without one, a buffer is named after the binding it is first used as, or `buffer0`, `buffer1`..
    pub fn name(&mut self, buffer: &impl StreamBuffer, name: &str) -> &mut Self {
        let buffer = buffer.any_buffer().wgpu();
        self.names.retain(|(b, _)| b != buffer);
        self.names.push((buffer.clone(), name.to_string()));
        self
    }

    /// A kernel of WGSL named `name`: give it its buffers (under the names its WGSL uses) and its size
    /// (without one, an invocation per element of the first buffer it writes), then
    /// [`run`](KernelCall::run) it.
    pub fn kernel(&mut self, name: &str, wgsl: &str) -> KernelCall<'_> {
        KernelCall {
            stream: self,
            name: name.to_string(),
            wgsl: wgsl.to_string(),
            file: None,
            uses: Vec::new(),
            dispatch: None,
        }
    }

    /// [`Stream::kernel`], its WGSL read from the file at `path` now (the builder's
    /// [`KernelSpec::wgsl_file`]): messages about it name the file. An error when it cannot be read.
    pub fn kernel_file(
        &mut self,
        name: &str,
        path: impl AsRef<std::path::Path>,
    ) -> Result<KernelCall<'_>, Error> {
        let path = path.as_ref();
        let wgsl = std::fs::read_to_string(path).map_err(|e| Error::KernelFile {
            call: name.to_string(),
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Ok(KernelCall {
            stream: self,
            name: name.to_string(),
            wgsl,
            file: Some(path.display().to_string()),
            uses: Vec::new(),
            dispatch: None,
        })
    }

    /// A kernel of the library (`scale`, `sobel`) or one of its multi-pass algorithms (`reduce::sum`,
    /// `scan::inclusive`), by path: bind its buffers by the names the library gives them and its arguments,
    /// then [`run`](LibraryCall::run) it. The library says how each binding is used.
    pub fn library(&mut self, name: &str, path: &str) -> LibraryCall<'_> {
        LibraryCall {
            stream: self,
            name: name.to_string(),
            path: path.to_string(),
            uses: Vec::new(),
            args: Vec::new(),
        }
    }

    /// A host task named `name`: give it its buffers (under names of its own, which its closure reads them
    /// by), then [`run`](HostCall::run) it with its closure. Run at once, it runs after the calls before it
    /// (it waits for them: a host wait, which a recording does not make) and what it writes is in place for
    /// the calls after it; recorded, it is a host node whose closure runs at every replay.
    pub fn host(&mut self, name: &str) -> HostCall<'_> {
        HostCall {
            stream: self,
            name: name.to_string(),
            uses: Vec::new(),
        }
    }

    /// An interop task named `name`: give it its buffers (under names of its own), then
    /// [`run`](InteropCall::run) it with a closure that records its own wgpu work with the stream's command
    /// encoder, in order with the calls around it; recorded, it is an interop node whose closure records at
    /// every replay.
    pub fn interop(&mut self, name: &str) -> InteropCall<'_> {
        InteropCall {
            stream: self,
            name: name.to_string(),
            uses: Vec::new(),
        }
    }

    /// Copies all of `src` into `dst`, of one element type and length.
    pub fn copy(
        &mut self,
        name: &str,
        src: &impl StreamBuffer,
        dst: &impl StreamBuffer,
    ) -> Result<(), Error> {
        let uses = vec![
            plain(src.any_buffer(), AccessMode::Read),
            plain(dst.any_buffer(), AccessMode::Write),
        ];
        self.call(call(name, Op::Copy, uses), &[])
    }

    /// Sets every element of `dst` to `value`, WGSL of its element type (`0.0`, `params.k`).
    pub fn fill(&mut self, name: &str, dst: &impl StreamBuffer, value: &str) -> Result<(), Error> {
        let uses = vec![plain(dst.any_buffer(), AccessMode::Write)];
        let op = Op::Fill {
            value: value.to_string(),
        };
        self.call(call(name, op, uses), &[])
    }

    /// Writes `data` into `dst`, in order with the calls around it. Recorded, it is an upload node, whose
    /// data each replay takes ([`BakedGraph::upload`]): the data given here is not kept in the graph (a
    /// captured host pointer going stale is what CUDA's stream capture is known for).
    pub fn upload<T: Element>(
        &mut self,
        name: &str,
        dst: &Buffer<T>,
        data: &[T],
    ) -> Result<(), Error> {
        let uses = vec![plain(dst.as_any(), AccessMode::Write)];
        self.call(call(name, Op::Upload, uses), bytemuck::cast_slice(data))
    }

    /// Copies all of `src` to the host: run at once, it waits for the calls before it and keeps what it read
    /// under `name` until [`Stream::take_readback`] takes it; recorded, it is a readback node, which each
    /// replay fills (`Finished::read_named(name)`).
    pub fn readback<T: Element>(&mut self, name: &str, src: &Buffer<T>) -> Result<(), Error> {
        if self.recording.is_none() {
            // A graph of one readback would read what no node of it wrote, which the checks refuse: at
            // once, it is a read.
            let bytes = bytemuck::cast_slice(&src.read_blocking()?).to_vec();
            self.readbacks.retain(|(n, _, _)| n != name);
            self.readbacks.push((name.to_string(), T::TYPE, bytes));
            return Ok(());
        }
        let uses = vec![plain(src.as_any(), AccessMode::Read)];
        self.call(call(name, Op::Readback, uses), &[])
    }

    /// What the eager readback `name` read, as `T`s (its element type); the stream keeps it no longer. An
    /// error when no eager readback of that name ran since it was last taken.
    pub fn take_readback<T: Element>(&mut self, name: &str) -> Result<Vec<T>, Error> {
        let at = self.readbacks.iter().position(|(n, _, _)| n == name);
        let Some(at) = at else {
            let known = self.readbacks.iter().map(|(n, _, _)| format!("`{n}`"));
            return Err(crate::error::unknown_in(
                "stream",
                "eager readback",
                name,
                known,
            ));
        };
        let elem = self.readbacks[at].1;
        if elem != T::TYPE {
            return Err(Error::TransferData {
                graph: "stream".into(),
                node: name.to_string(),
                reason: format!("it read `{elem}`s, not `{}`s", T::TYPE),
            });
        }
        let (_, _, bytes) = self.readbacks.remove(at);
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// A zeroed buffer of `len` elements for the stream's work. Made while recording, it is graph-owned in
    /// the recorded graph (the graph makes its own at bake; this one only stands for it).
    pub fn scratch<T: Element>(&mut self, len: usize) -> Result<Buffer<T>, Error> {
        let buffer = self.gpu.buffer_zeroed::<T>(len)?;
        if let Some(recording) = &mut self.recording {
            recording.scratch.push(buffer.wgpu().clone());
        }
        Ok(buffer)
    }

    /// Waits for the calls so far and reads `buffer`: a host wait, so an error while recording (a recorded
    /// graph has no host in the middle of it; read the buffer after a replay, or record a host task).
    pub fn read<T: Element>(&mut self, buffer: &Buffer<T>) -> Result<Vec<T>, Error> {
        self.refuse_while_recording(
            "read",
            "reads a buffer on the host, which waits for the GPU",
        )?;
        buffer.read_blocking()
    }

    /// Waits until every call so far has run; an error while recording, as [`Stream::read`].
    pub fn wait(&mut self) -> Result<(), Error> {
        self.refuse_while_recording("wait", "waits for the GPU on the host")?;
        self.gpu.wait_for(None)
    }

    /// Lets up to `calls` calls that run at once go to the GPU in one submission (1, the default, submits each
    /// call at once). A batch is submitted when it is full, at a host wait ([`Stream::read`],
    /// [`Stream::wait`], an eager readback, a host task that reads or writes a buffer), by [`Stream::flush`],
    /// when the stream is dropped, or first thing when anything else goes through the `Gpu`'s queue (a
    /// buffer's write or read, a replay), so work still runs in the order it was asked for. An error the
    /// device reports at that submission is the error of whatever made it; a call whose recording failed is
    /// never kept back. The count is of every command buffer kept back on the `Gpu`'s queue, other streams'
    /// included, so a stream that submits at once also submits theirs.
    ///
    /// Batching saves submissions, but the GPU starts on a batch only once it is submitted, where calls
    /// submitted one by one run while the next ones are recorded: on the H100, `07_record`'s five calls ran
    /// slower batched (see the README). Worth it where submissions cost more than the calls' GPU work.
    pub fn batch(&mut self, calls: usize) -> &mut Self {
        self.batch = calls.max(1);
        self
    }

    /// Submits the calls kept back to be batched ([`Stream::batch`]), without waiting for them.
    pub fn flush(&mut self) {
        self.gpu.queue().flush();
    }

    /// Whether the stream is recording.
    pub fn is_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// Records the calls from now on into `builder` instead of running them, until the returned
    /// [`Recording`] ends (or is dropped). The builder cannot be used meanwhile: the recording holds it.
    /// The stream's calls are made through the recording, which is the stream (`Deref`), so a routine taking
    /// `&mut Stream` records unchanged.
    pub fn begin_recording<'s, 'b>(
        &'s mut self,
        builder: &'b mut GraphBuilder,
    ) -> Result<Recording<'s, 'b>, Error> {
        if self.recording.is_some() {
            return Err(capture(
                "begin_recording",
                "the stream is recording already",
            ));
        }
        self.recording = Some(RecordingState {
            builder: std::mem::take(builder),
            buffers: Vec::new(),
            calls: Vec::new(),
            tasks: Vec::new(),
            scratch: Vec::new(),
        });
        Ok(Recording {
            stream: self,
            builder,
        })
    }

    fn refuse_while_recording(&self, call: &str, what: &str) -> Result<(), Error> {
        match self.recording {
            Some(_) => Err(capture(
                call,
                &format!("it {what}, inside a recording: end the recording first"),
            )),
            None => Ok(()),
        }
    }

    /// The library subgraph's description, checked the first time the stream uses it.
    fn library_subgraph(&mut self, subgraph: &LibrarySubgraph) -> Result<Arc<GraphDesc>, Error> {
        if let Some((_, desc)) = self.subgraphs.iter().find(|(p, _)| *p == subgraph.path) {
            return Ok(desc.clone());
        }
        let builder = GraphBuilder::from_graph((subgraph.graph)(), Default::default());
        let desc = Arc::new(builder.build(&crate::LIBRARY)?);
        self.subgraphs.push((subgraph.path, desc.clone()));
        Ok(desc)
    }

    /// Records `call`, or runs it at once (`upload`: an upload's data).
    fn call(&mut self, call: Call, upload: &[u8]) -> Result<(), Error> {
        self.call_with(call, upload, None)
    }

    /// [`Stream::call`], with a host or interop task's closure.
    fn call_with(&mut self, call: Call, upload: &[u8], task: Option<Task>) -> Result<(), Error> {
        match &mut self.recording {
            Some(recording) => {
                recording.record(call, task);
                Ok(())
            }
            None => self.run_now(&call, upload, task),
        }
    }

    /// Runs `call` at once: its one-node graph, baked the first time its shape comes, rebound and replayed.
    fn run_now(&mut self, call: &Call, upload: &[u8], task: Option<Task>) -> Result<(), Error> {
        // One name per distinct buffer (a kernel may bind one twice): its first binding's, so that sizes read
        // as written, or its place among the call's buffers.
        let mut distinct: Vec<(&AnyBuffer, Access)> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut names_of_uses = Vec::new();
        for u in &call.uses {
            let at = match distinct
                .iter()
                .position(|(b, _)| b.wgpu() == u.buffer.wgpu())
            {
                Some(at) => at,
                None => {
                    distinct.push((&u.buffer, Access::first(u.mode)));
                    let at = distinct.len() - 1;
                    let binding = u.binding.clone().filter(|_| call.op.names_buffers());
                    names.push(binding.unwrap_or_else(|| format!("b{at}")));
                    at
                }
            };
            distinct[at].1.add(u.mode);
            names_of_uses.push(names[at].clone());
        }
        let mut builder = GraphBuilder::new("stream");
        for p in &self.params {
            builder.param(&p.name, &p.ty.wgsl());
        }
        for (name, (buffer, access)) in names.iter().zip(&distinct) {
            builder.buffer(name, &buffer.elem().wgsl(), access.role(), None);
        }
        call.add_to(&mut builder, &names_of_uses);
        // The graphs kept hold their own handles: the application's buffers stay theirs to drop.
        let buffers: Vec<AnyBuffer> = distinct.iter().map(|(b, _)| b.detached()).collect();
        let index = match self.eager.iter().position(|e| e.shape == *builder.graph()) {
            Some(index) => index,
            None => self.bake_eager(builder, &names, &buffers)?,
        };
        let eager = &mut self.eager[index];
        // Every changed buffer in one rebind: a copy's two ends change length together.
        let changed: Vec<(u32, &AnyBuffer)> = (0..buffers.len())
            .filter(|&at| eager.bound[at] != *buffers[at].wgpu())
            .map(|at| (at as u32, &buffers[at]))
            .collect();
        if !changed.is_empty() {
            eager.baked.rebind_indexed(&changed)?;
            eager.bound = buffers.iter().map(|b| b.wgpu().clone()).collect();
        }
        set_params(&mut eager.baked, &self.params)?;
        if let Op::Upload = call.op {
            eager.baked.upload_bytes(&call.name, upload)?;
        }
        match task {
            Some(Task::Host(task)) => {
                eager.baked.on_host_at(0, task)?;
            }
            Some(Task::Interop(task)) => {
                eager.baked.on_interop_at(0, task)?;
            }
            None => {}
        }
        // Kept back until the batch is full: the queue submits it ahead of anything after it, and a host wait
        // (`read`, `wait`) waits for it.
        eager.baked.replay_deferred()?;
        if self.gpu.queue().pending() >= self.batch {
            self.flush();
        }
        Ok(())
    }

    /// Checks and bakes the one-node graph `builder` holds over `buffers` (by `names`, declared in this
    /// order, so that a buffer's place is its index in the graph), keeps it, and returns its index among the
    /// kept ones.
    fn bake_eager(
        &mut self,
        builder: GraphBuilder,
        names: &[String],
        buffers: &[AnyBuffer],
    ) -> Result<usize, Error> {
        let desc = builder.build(&crate::LIBRARY)?;
        let bindings: Vec<(&str, &AnyBuffer)> =
            names.iter().map(String::as_str).zip(buffers).collect();
        let mut baked = BakedGraph::bake(&self.gpu, desc, &bindings)?;
        baked.use_portable_recorder();
        if self.eager.len() == EAGER_GRAPHS {
            self.eager.remove(0);
        }
        self.eager.push(EagerGraph {
            shape: builder.graph().clone(),
            baked,
            bound: buffers.iter().map(|b| b.wgpu().clone()).collect(),
        });
        Ok(self.eager.len() - 1)
    }
}

/// Size expression `text` with each binding it names (`x.len()`, `t.width()`) renamed to the buffer
/// `buffer_of` gives; as written where it does not parse (the builder then says why).
fn renamed(text: &str, buffer_of: &impl Fn(&str) -> Option<String>) -> String {
    fn walk(expr: &mut SizeExpr, buffer_of: &impl Fn(&str) -> Option<String>) {
        match expr {
            SizeExpr::Len(name) | SizeExpr::Extent { texture: name, .. } => {
                if let Some(buffer) = buffer_of(name) {
                    *name = buffer;
                }
            }
            SizeExpr::Binary { lhs, rhs, .. } => {
                walk(lhs, buffer_of);
                walk(rhs, buffer_of);
            }
            SizeExpr::Literal(_) | SizeExpr::Param { .. } => {}
        }
    }
    match parse_size(text) {
        Ok(mut expr) => {
            walk(&mut expr, buffer_of);
            expr.to_string()
        }
        Err(_) => text.to_string(),
    }
}

/// Sets each of `baked`'s parameters that the stream has to the stream's value.
fn set_params(baked: &mut BakedGraph, params: &[StreamParam]) -> Result<(), Error> {
    let mut block = baked.params_bytes().to_vec();
    for field in baked.description().params.fields.iter() {
        let value = params.iter().find(|p| *p.name == *field.name);
        let at = field.offset as usize;
        if let Some((p, slot)) =
            value.zip(block.get_mut(at..at + field.ty.in_params().size() as usize))
        {
            slot.copy_from_slice(&p.bytes);
        }
    }
    baked.set_params_bytes(&block)
}

/// A buffer used by a call without a binding name.
fn plain(buffer: &AnyBuffer, mode: AccessMode) -> Use {
    Use {
        binding: None,
        buffer: buffer.clone(),
        mode,
    }
}

fn call(name: &str, op: Op, uses: Vec<Use>) -> Call {
    Call {
        name: name.to_string(),
        op,
        uses,
    }
}

/// How a graph uses one of its buffers, in the order of its nodes: which decides its role.
#[derive(Debug, Clone, Copy)]
struct Access {
    first: AccessMode,
    read: bool,
    written: bool,
}

impl Access {
    fn first(mode: AccessMode) -> Self {
        Access {
            first: mode,
            read: false,
            written: false,
        }
    }

    fn add(&mut self, mode: AccessMode) {
        self.read |= mode != AccessMode::Write;
        self.written |= mode != AccessMode::Read;
    }

    /// An external buffer the graph only reads is an input; one it overwrites before anything reads it,
    /// an output; any other, read and written, `inout` (the caller's contents are read).
    fn role(self) -> Role {
        match (self.written, self.first) {
            (false, _) => Role::Input,
            (true, AccessMode::Write) => Role::Output,
            (true, _) => Role::InOut,
        }
    }
}

fn capture(call: &str, reason: &str) -> Error {
    Error::Capture {
        call: call.to_string(),
        reason: reason.to_string(),
    }
}

impl RecordingState {
    /// Keeps `call` as the builder's next node (its node name made unique: `scale`, `scale_2`), and its
    /// buffers among those recorded.
    fn record(&mut self, mut call: Call, task: Option<Task>) {
        let nodes = &self.builder.graph().nodes;
        let calls = &self.calls;
        call.name = unique_node_name(&call.name, |n| {
            nodes.iter().any(|m| m.name == n) || calls.iter().any(|c| c.name == n)
        });
        for u in &mut call.uses {
            let known = self
                .buffers
                .iter()
                .position(|b| b.buffer.wgpu() == u.buffer.wgpu());
            let at = known.unwrap_or_else(|| {
                self.buffers.push(RecordedBuffer {
                    buffer: u.buffer.detached(),
                    holder: u.buffer.holder(),
                    first_call: call.name.clone(),
                    access: Access::first(u.mode),
                });
                self.buffers.len() - 1
            });
            self.buffers[at].access.add(u.mode);
            // The recording keeps its own handle: the application's may go, which `end` reports.
            u.buffer = self.buffers[at].buffer.clone();
        }
        if let Some(task) = task {
            self.tasks.push((call.name.clone(), task));
        }
        self.calls.push(call);
    }

    /// Each recorded buffer's name: the one `given` it, else its first binding's, where free, else
    /// `buffer{N}`.
    fn names(&self, given: &[(wgpu::Buffer, String)]) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        // The builder's own buffers keep their names: a recording into a builder that has some adds others.
        let declared = &self.builder.graph().buffers;
        for b in &self.buffers {
            let taken =
                |n: &str| names.iter().any(|m| m == n) || declared.iter().any(|d| d.name == n);
            let named = given
                .iter()
                .find(|(g, _)| g == b.buffer.wgpu())
                .map(|(_, n)| n.clone());
            let binding = self
                .calls
                .iter()
                .filter(|c| c.op.names_buffers())
                .flat_map(|c| &c.uses)
                .find(|u| u.buffer.wgpu() == b.buffer.wgpu() && u.binding.is_some())
                .and_then(|u| u.binding.clone());
            let name = [named, binding]
                .into_iter()
                .flatten()
                .find(|n| !taken(n))
                .unwrap_or_else(|| fresh_buffer_name(taken));
            names.push(name);
        }
        names
    }
}

/// `buffer0`, `buffer1`..: the first that `taken` says is free.
fn fresh_buffer_name(taken: impl Fn(&str) -> bool) -> String {
    (0..)
        .map(|n| format!("buffer{n}"))
        .find(|n| !taken(n))
        .unwrap_or_default()
}

/// `base` where `taken` says it is free, else `base_2`, `base_3`.. (the first free).
fn unique_node_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|n| !taken(n))
        .unwrap_or_default()
}

/// A call's `read`, `write` and `read_write`: each gives it a buffer under a name (`$named` says what the
/// name is), kept in its `uses`.
macro_rules! buffer_methods {
    ($call:ident, $named:literal) => {
        impl $call<'_> {
            fn access(mut self, name: &str, buffer: &impl StreamBuffer, mode: AccessMode) -> Self {
                self.uses
                    .push((name.to_string(), buffer.any_buffer().clone(), mode));
                self
            }

            #[doc = concat!("Gives `buffer` as `name` (", $named, "), read.")]
            pub fn read(self, name: &str, buffer: &impl StreamBuffer) -> Self {
                self.access(name, buffer, AccessMode::Read)
            }

            #[doc = concat!("Gives `buffer` as `name` (", $named, "), overwritten without being read.")]
            pub fn write(self, name: &str, buffer: &impl StreamBuffer) -> Self {
                self.access(name, buffer, AccessMode::Write)
            }

            #[doc = concat!("Gives `buffer` as `name` (", $named, "), read and written.")]
            pub fn read_write(self, name: &str, buffer: &impl StreamBuffer) -> Self {
                self.access(name, buffer, AccessMode::ReadWrite)
            }
        }
    };
}

buffer_methods!(KernelCall, "the name its WGSL reads it by");
buffer_methods!(HostCall, "the name its closure reads it by");
buffer_methods!(InteropCall, "the name its closure gets it by");

/// A [`Stream::kernel`] call being given its buffers and size.
pub struct KernelCall<'s> {
    stream: &'s mut Stream,
    name: String,
    wgsl: String,
    file: Option<String>,
    uses: Vec<(String, AnyBuffer, AccessMode)>,
    dispatch: Option<(bool, Vec<String>)>,
}

impl std::fmt::Debug for KernelCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelCall")
            .field("name", &self.name)
            .field("dispatch", &self.dispatch)
            .finish_non_exhaustive()
    }
}

impl KernelCall<'_> {
    /// Invocations per dimension, as size expressions over the bindings' names and `params`
    /// (`"x.len()"`, `"params.n"`).
    pub fn threads(mut self, sizes: &[&str]) -> Self {
        self.dispatch = Some((false, sizes.iter().map(|s| s.to_string()).collect()));
        self
    }

    /// Workgroups per dimension, as size expressions.
    pub fn workgroups(mut self, sizes: &[&str]) -> Self {
        self.dispatch = Some((true, sizes.iter().map(|s| s.to_string()).collect()));
        self
    }

    /// Runs the kernel now, or records it; checked as the builder checks a kernel.
    pub fn run(self) -> Result<(), Error> {
        let uses = self
            .uses
            .into_iter()
            .map(|(binding, buffer, mode)| Use {
                binding: Some(binding),
                buffer,
                mode,
            })
            .collect();
        let op = Op::Kernel {
            wgsl: self.wgsl,
            file: self.file,
            dispatch: self.dispatch,
        };
        self.stream.call(call(&self.name, op, uses), &[])
    }
}

/// A [`Stream::host`] call being given its buffers.
pub struct HostCall<'s> {
    stream: &'s mut Stream,
    name: String,
    uses: Vec<(String, AnyBuffer, AccessMode)>,
}

impl std::fmt::Debug for HostCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCall")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl HostCall<'_> {
    /// Runs `task` now (after the calls before it), or records it with the task.
    pub fn run(
        self,
        mut task: impl FnMut(&StreamHostContext<'_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<(), Error> {
        let names: Vec<String> = self.uses.iter().map(|(n, _, _)| n.clone()).collect();
        let boxed: HostTask =
            Box::new(move |ctx: &HostContext<'_>| task(&StreamHostContext { ctx, names: &names }));
        let uses = self
            .uses
            .into_iter()
            .map(|(binding, buffer, mode)| Use {
                binding: Some(binding),
                buffer,
                mode,
            })
            .collect();
        self.stream.call_with(
            call(&self.name, Op::Host, uses),
            &[],
            Some(Task::Host(boxed)),
        )
    }
}

/// What a stream's host task sees: its buffers, by the names its call gave them.
#[derive(Debug)]
pub struct StreamHostContext<'a> {
    ctx: &'a HostContext<'a>,
    names: &'a [String],
}

impl StreamHostContext<'_> {
    fn access(&self, name: &str) -> Result<usize, Error> {
        self.names.iter().position(|n| n == name).ok_or_else(|| {
            let known = self.names.iter().map(|n| format!("`{n}`"));
            crate::error::unknown(self.ctx.desc, "buffer of this host task", name, known)
        })
    }

    /// Reads the buffer the call gave as `name` (to read, or to read and write).
    pub fn read<T: Element>(&self, name: &str) -> Result<Vec<T>, Error> {
        self.ctx.read_access(self.access(name)?)
    }

    /// Replaces the contents of the buffer the call gave as `name` (to write, or to read and write).
    pub fn write<T: Element>(&self, name: &str, data: &[T]) -> Result<(), Error> {
        self.ctx.write_access(self.access(name)?, data)
    }
}

/// A [`Stream::interop`] call being given its buffers.
pub struct InteropCall<'s> {
    stream: &'s mut Stream,
    name: String,
    uses: Vec<(String, AnyBuffer, AccessMode)>,
}

impl std::fmt::Debug for InteropCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteropCall")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl InteropCall<'_> {
    /// Records `task`'s work now (in order with the calls around it), or records the task.
    pub fn run(
        self,
        mut task: impl FnMut(&mut StreamInteropContext<'_, '_>) -> Result<(), Error> + Send + 'static,
    ) -> Result<(), Error> {
        let names: Vec<String> = self.uses.iter().map(|(n, _, _)| n.clone()).collect();
        let boxed: InteropTask = Box::new(move |ctx: &mut InteropContext<'_>| {
            task(&mut StreamInteropContext { ctx, names: &names })
        });
        let uses = self
            .uses
            .into_iter()
            .map(|(binding, buffer, mode)| Use {
                binding: Some(binding),
                buffer,
                mode,
            })
            .collect();
        let call = call(&self.name, Op::Interop, uses);
        self.stream.call_with(call, &[], Some(Task::Interop(boxed)))
    }
}

/// What a stream's interop task sees: the device, the queue, the command encoder its work goes in, and its
/// buffers by the names its call gave them.
#[derive(Debug)]
pub struct StreamInteropContext<'a, 'b> {
    ctx: &'a mut InteropContext<'b>,
    names: &'a [String],
}

impl StreamInteropContext<'_, '_> {
    pub fn device(&self) -> &wgpu::Device {
        self.ctx.device()
    }

    pub fn queue(&self) -> &crate::queue::GpuQueue {
        self.ctx.queue()
    }

    /// The command encoder the task's work goes in, submitted in order with the stream's calls (or the
    /// replay's nodes).
    pub fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.ctx.encoder()
    }

    /// The wgpu buffer the call gave as `name`.
    pub fn buffer(&self, name: &str) -> Result<wgpu::Buffer, Error> {
        let (graph, node) = self.ctx.names();
        let Some(access) = self.names.iter().position(|n| n == name) else {
            let known = self.names.iter().map(|n| format!("`{n}`"));
            return Err(crate::error::unknown_in(
                graph,
                "buffer of this interop task",
                name,
                known,
            ));
        };
        self.ctx.buffer_at(access).ok_or_else(|| {
            Error::Gpu(format!(
                "interop task `{node}` of graph `{graph}`: its access {access} is no buffer"
            ))
        })
    }
}

/// A [`Stream::library`] call being given its buffers and arguments.
pub struct LibraryCall<'s> {
    stream: &'s mut Stream,
    name: String,
    path: String,
    uses: Vec<(String, AnyBuffer)>,
    args: Vec<(String, String)>,
}

impl std::fmt::Debug for LibraryCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibraryCall")
            .field("name", &self.name)
            .field("path", &self.path)
            .field("args", &self.args)
            .finish_non_exhaustive()
    }
}

impl LibraryCall<'_> {
    /// Binds `buffer` as the library's binding `binding` (`input`, `output`).
    pub fn bind(mut self, binding: &str, buffer: &impl StreamBuffer) -> Self {
        self.uses
            .push((binding.to_string(), buffer.any_buffer().clone()));
        self
    }

    /// Gives argument `name` its value, WGSL of its type (`2.0`, `params.a`).
    pub fn arg(mut self, name: &str, wgsl: &str) -> Self {
        self.args.push((name.to_string(), wgsl.to_string()));
        self
    }

    /// Runs the kernel or the algorithm now, or records it; checked as the builder checks it. A path the
    /// library lacks is an error naming the nearest one.
    pub fn run(self) -> Result<(), Error> {
        let library = &crate::LIBRARY;
        // Each binding's use, as the library declares it (an unknown binding or path: read, which the
        // checks then refuse by name, with the nearest one).
        let bindings = self.uses.iter().map(|(binding, _)| binding.as_str());
        let (op, modes): (Op, Vec<AccessMode>) = match library.get(&self.path) {
            Some(kernel) => {
                let mode = |name: &str| {
                    let found = kernel.bindings.iter().find(|b| b.name == name);
                    found.map_or(AccessMode::Read, |b| b.mode)
                };
                let modes = bindings.map(mode).collect();
                let op = Op::Library {
                    path: self.path.clone(),
                    args: self.args,
                };
                (op, modes)
            }
            None => match library.subgraph(&self.path) {
                Some(subgraph) => {
                    let child = self.stream.library_subgraph(subgraph)?;
                    let mode = |name: &str| {
                        let found = child.buffers.iter().find(|b| b.name == name);
                        match found.map(|b| b.role) {
                            Some(Role::Output) => AccessMode::Write,
                            Some(Role::InOut) => AccessMode::ReadWrite,
                            _ => AccessMode::Read,
                        }
                    };
                    let modes = bindings.map(mode).collect();
                    (Op::Subgraph { child }, modes)
                }
                None => {
                    let modes = bindings.map(|_| AccessMode::Read).collect();
                    let op = Op::Library {
                        path: self.path.clone(),
                        args: self.args,
                    };
                    (op, modes)
                }
            },
        };
        let uses = self
            .uses
            .into_iter()
            .zip(modes)
            .map(|((binding, buffer), mode)| Use {
                binding: Some(binding),
                buffer,
                mode,
            })
            .collect();
        self.stream.call(call(&self.name, op, uses), &[])
    }
}

/// A stream recording into a builder ([`Stream::begin_recording`]): the stream itself (`Deref`), whose calls
/// become nodes. [`Recording::end`] ends it; dropping it ends it too, its buffers' bindings dropped.
pub struct Recording<'s, 'b> {
    stream: &'s mut Stream,
    builder: &'b mut GraphBuilder,
}

impl std::fmt::Debug for Recording<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for Recording<'_, '_> {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        self.stream
    }
}

impl std::ops::DerefMut for Recording<'_, '_> {
    fn deref_mut(&mut self) -> &mut Stream {
        self.stream
    }
}

/// What a recording used from outside: each external buffer of the recorded graph, by its name there, and
/// each host task's closure; [`Recorded::bake`] bakes the recorded graph with them.
pub struct Recorded {
    buffers: Vec<(String, AnyBuffer)>,
    tasks: Vec<(String, Task)>,
    /// The stream's parameters when the recording ended: the baked graph's first values.
    params: Vec<StreamParam>,
}

impl std::fmt::Debug for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tasks: Vec<&str> = self.tasks.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Recorded")
            .field("buffers", &self.buffers)
            .field("tasks", &tasks)
            .finish()
    }
}

impl Recorded {
    /// The recorded graph's external buffers by name, as [`BakedGraph::bake`] takes them.
    pub fn bindings(&self) -> Vec<(&str, &AnyBuffer)> {
        self.buffers.iter().map(|(n, b)| (n.as_str(), b)).collect()
    }

    /// Bakes `desc` (the recording's builder, built) with the recorded buffers, gives each recorded host or
    /// interop task the closure it was recorded with (it runs at every replay, where its node is), and sets
    /// the graph's parameters to the stream's values when the recording ended (the last value given: a
    /// recording keeps one value per parameter, which replays may change).
    pub fn bake(
        self,
        gpu: &Gpu,
        desc: impl Into<std::borrow::Cow<'static, GraphDesc>>,
    ) -> Result<BakedGraph, Error> {
        let mut baked = BakedGraph::bake(gpu, desc, &self.bindings())?;
        set_params(&mut baked, &self.params)?;
        for (node, task) in self.tasks {
            match task {
                Task::Host(task) => baked.on_host(&node, task)?,
                Task::Interop(task) => baked.on_interop(&node, task)?,
            };
        }
        Ok(baked)
    }
}

impl Recording<'_, '_> {
    /// Ends the recording: the builder gets the calls as nodes, the stream's parameters it lacks and the
    /// buffers the calls used (in the order of first use; those made by [`Stream::scratch`] while recording
    /// graph-owned, the others external: `input` where nothing writes them, `output` where the first call
    /// overwrites them, `inout` otherwise), and the stream runs its calls at once again.
    ///
    /// A buffer the calls write whose every handle the application dropped before the end is an error
    /// naming it and the call that first used it (what the graph writes to it nothing outside could read);
    /// the builder has the recording all the same.
    pub fn end(mut self) -> Result<Recorded, Error> {
        self.finish()
    }

    fn finish(&mut self) -> Result<Recorded, Error> {
        let Some(state) = self.stream.recording.take() else {
            return Ok(Recorded {
                buffers: Vec::new(),
                tasks: Vec::new(),
                params: Vec::new(),
            });
        };
        let names = state.names(&self.stream.names);
        let mut builder = state.builder;
        for call in &state.calls {
            let of_uses: Vec<String> = call
                .uses
                .iter()
                .map(|u| {
                    let at = state
                        .buffers
                        .iter()
                        .position(|b| b.buffer.wgpu() == u.buffer.wgpu());
                    names[at.unwrap_or(0)].clone()
                })
                .collect();
            call.add_to(&mut builder, &of_uses);
        }
        for p in &self.stream.params {
            if !builder.graph().params.iter().any(|q| q.name == p.name) {
                builder.param(&p.name, &p.ty.wgsl());
            }
        }
        let mut external = Vec::new();
        let mut dropped = None;
        for (name, b) in names.iter().zip(&state.buffers) {
            let elem = b.buffer.elem().wgsl();
            if state.scratch.contains(b.buffer.wgpu()) {
                builder.owned(name, &elem, u64::from(b.buffer.len()));
            } else {
                builder.buffer(name, &elem, b.access.role(), None);
                external.push((name.clone(), b.buffer.clone()));
                // An input the application dropped is still the recording's to read; an output nothing
                // outside could read is the mistake.
                if b.access.written && b.holder.strong_count() == 0 {
                    dropped.get_or_insert((name, &b.first_call));
                }
            }
        }
        *self.builder = builder;
        match dropped {
            Some((name, call)) => Err(capture(
                call,
                &format!(
                    "its buffer `{name}` was dropped before the recording ended, so nothing outside the graph \
                     can read it: keep a handle until the end, or make it with `Stream::scratch` for the \
                     graph to own"
                ),
            )),
            None => Ok(Recorded {
                buffers: external,
                tasks: state.tasks,
                params: self.stream.params.clone(),
            }),
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // What was called runs, as if each call had been submitted at once.
        self.flush();
    }
}

impl Drop for Recording<'_, '_> {
    fn drop(&mut self) {
        // Ended without `end`: the builder gets the recording; a dropped buffer has no one to tell.
        let _ = self.finish();
    }
}
