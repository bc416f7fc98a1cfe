//! The runtime's errors: values, never panics, each saying what to do.

#![forbid(unsafe_code)]

/// Everything that can go wrong at run time.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(
        "no GPU adapter found{filter}. Install a Vulkan driver; without a GPU, Mesa's software driver works: \
         `sudo apt-get install mesa-vulkan-drivers` (or run `cargo xtask test`, which installs it)"
    )]
    NoAdapter { filter: String },

    #[error("the GPU adapter `{adapter}` refused a device: {reason}")]
    RequestDevice { adapter: String, reason: String },

    #[error(
        "graph `{graph}`: buffer `{buffer}` holds `{actual}` elements, but the graph declares `{expected}`"
    )]
    BufferType {
        graph: String,
        buffer: String,
        expected: String,
        actual: String,
    },

    #[error(
        "graph `{graph}`: buffer `{buffer}` has {actual} elements, but the graph needs {expected}"
    )]
    BufferLength {
        graph: String,
        buffer: String,
        expected: String,
        actual: u64,
    },

    #[error(
        "graph `{graph}`: buffer `{buffer}` lacks the usage {missing}; create it with `BufferUsages::{missing}`"
    )]
    BufferUsage {
        graph: String,
        buffer: String,
        missing: String,
    },

    #[error(
        "graph `{graph}`: buffer `{buffer}` was made on another `Gpu` than the one baking the graph; make it on \
         the same `Gpu` (or a clone of it)"
    )]
    ForeignBuffer { graph: String, buffer: String },

    #[error("graph `{graph}`: no buffer was bound for `{buffer}`")]
    MissingBuffer { graph: String, buffer: String },

    /// A texture bound at bake is not what the graph declares or needs, or none was bound.
    #[error("graph `{graph}`: texture `{texture}`: {reason}")]
    TextureMismatch {
        graph: String,
        texture: String,
        reason: String,
    },

    /// A texture could not be made, written or read.
    #[error("texture `{texture}`: {reason}")]
    Texture { texture: String, reason: String },

    #[error("graph `{graph}`: buffer `{buffer}` is bound twice; bind each external buffer once")]
    BoundTwice { graph: String, buffer: String },

    #[error(
        "graph `{graph}`: buffers `{first}` and `{second}` are bound to one wgpu buffer, and the graph writes \
         one of them; the graph's ordering assumes distinct names are distinct memory"
    )]
    AliasedBuffers {
        graph: String,
        first: String,
        second: String,
    },

    #[error("graph `{graph}`: baking failed: {reason}")]
    Bake { graph: String, reason: String },

    #[error(
        "graph `{graph}`: its description is invalid ({reason}); descriptions come from `graph!`, the builder \
         or a graph file, all checked: do not write one by hand"
    )]
    InvalidDescription { graph: String, reason: String },

    #[error("graph `{graph}`: update refused, the baked graph is unchanged: {reason}")]
    Update { graph: String, reason: String },

    #[error(
        "graph `{graph}`: kernel `{node}` has workgroup size {size:?}, over this device's limits ({limit})"
    )]
    WorkgroupTooLarge {
        graph: String,
        node: String,
        size: [u32; 3],
        limit: String,
    },

    #[error(
        "graph `{graph}`: the size `{expression}` of node `{node}` cannot be computed: {reason}"
    )]
    DispatchSize {
        graph: String,
        node: String,
        expression: String,
        reason: String,
    },

    #[error(
        "graph `{graph}`: node `{node}` needs {workgroups:?} workgroups, over this device's limit of {limit} per \
         dimension; split the work or use a 2D/3D dispatch"
    )]
    DispatchTooLarge {
        graph: String,
        node: String,
        workgroups: [u32; 3],
        limit: u32,
    },

    #[error(
        "graph `{graph}`: upload `{node}` has no data for this replay; give it with `upload` before each replay"
    )]
    UploadMissing { graph: String, node: String },

    #[error("graph `{graph}`: node `{node}`: {reason}")]
    TransferData {
        graph: String,
        node: String,
        reason: String,
    },

    #[error(
        "graph `{graph}`: host task `{node}` has no closure; give it one with `on_host` before replaying"
    )]
    HostTaskMissing { graph: String, node: String },

    #[error("graph `{graph}`: host task `{node}` panicked: {message}")]
    HostTaskPanicked {
        graph: String,
        node: String,
        message: String,
    },

    #[error(
        "graph `{graph}`: interop task `{node}` has no closure; give it one with `on_interop` before replaying"
    )]
    InteropTaskMissing { graph: String, node: String },

    #[error("graph `{graph}`: interop task `{node}` panicked: {message}")]
    InteropTaskPanicked {
        graph: String,
        node: String,
        message: String,
    },

    /// A host task's closure returned an error (its own, made with [`Error::task`], or one of the runtime's
    /// that does not name the task): the replay's error, naming the graph and the task.
    #[error("graph `{graph}`: host task `{node}` failed: {source}")]
    HostTask {
        graph: String,
        node: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// An interop task's closure returned an error, as [`Error::HostTask`].
    #[error("graph `{graph}`: interop task `{node}` failed: {source}")]
    InteropTask {
        graph: String,
        node: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A task's own error, made with [`Error::task`] in its closure; the replay returns it as
    /// [`Error::HostTask`] or [`Error::InteropTask`], with the graph's and the task's names.
    #[error(transparent)]
    Task(Box<dyn std::error::Error + Send + Sync>),

    #[error("graph `{graph}`: node `{node}` is not {expected}")]
    NotANode {
        graph: String,
        node: String,
        /// What the call needs: `a host task`, `a choice of alternatives`...
        expected: &'static str,
    },

    #[error("graph `{graph}` has no {kind} `{name}`{known}")]
    UnknownName {
        graph: String,
        /// `parameter`, `buffer` or `node`.
        kind: &'static str,
        name: String,
        /// The names it does have, for the message.
        known: String,
    },

    #[error("graph `{graph}`: parameter `{name}` is a `{expected}`, but a `{actual}` was given")]
    ParamType {
        graph: String,
        name: String,
        expected: String,
        actual: String,
    },

    #[error("graph `{graph}`: the parameter block is {expected} bytes, but {actual} were given")]
    ParamsSize {
        graph: String,
        expected: usize,
        actual: usize,
    },

    #[error(
        "graph `{graph}`: {kind} task `{node}` may not {used} `{buffer}`: declare it in the task's list, as in \
         `{kind} {node}({buffer}: read_write);`"
    )]
    HostAccess {
        graph: String,
        node: String,
        /// `host` or `interop`.
        kind: &'static str,
        buffer: String,
        used: &'static str,
    },

    #[error("{what}: expected {expected} elements, got {actual}")]
    LengthMismatch {
        what: &'static str,
        expected: usize,
        actual: usize,
    },

    #[error("a buffer of {elements} `{elem}` elements is too large: {reason}")]
    BufferTooLarge {
        elements: u64,
        elem: String,
        reason: String,
    },

    /// A stream call that cannot be made in the stream's state: a host wait inside a recording, say.
    #[error("stream call `{call}`: {reason}")]
    Capture { call: String, reason: String },

    /// A stream's kernel whose WGSL file could not be read.
    #[error("stream call `{call}`: cannot read the WGSL file `{path}`: {reason}")]
    KernelFile {
        call: String,
        path: String,
        reason: String,
    },

    /// A built or loaded graph's mistakes, each with its location.
    #[error(transparent)]
    Graph(#[from] graph_core::GraphErrors),

    #[error("cannot load the graph file: {0}")]
    Load(#[from] graph_core::file::LoadError),

    #[error("graph `{graph}`: {what}")]
    Unsupported { graph: String, what: String },

    /// Bake did not run a group of kernels the graph's `FUSED` constant lists as one kernel (see
    /// [`crate::Baked::check_fused`]).
    #[error(
        "graph `{graph}`: `FUSED` lists {group} as one kernel, but bake fused {fused}; what it declined: {declined}"
    )]
    FusionNotKept {
        graph: String,
        /// The promised group, by node name.
        group: String,
        /// The groups bake fused, by node name.
        fused: String,
        /// What bake declined to fuse on this device, and why (`none` when it declined nothing).
        declined: String,
    },

    #[error("the GPU ran out of memory: {0}")]
    OutOfMemory(String),

    #[error("the GPU device was lost: {0}. Create a new `Gpu` and bake again")]
    DeviceLost(String),

    #[error("the GPU reported an error: {0}")]
    Gpu(String),

    #[error("Vulkan validation reported: {0}")]
    Validation(String),

    #[error(
        "validation mode (GRAPH_RUNTIME_VALIDATION) was asked for, but {0}. Install the Khronos layer \
         (`sudo apt-get install vulkan-validationlayers`) and run with \
         VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation, or run `cargo xtask test --validation`"
    )]
    ValidationUnavailable(String),

    #[error("reading a buffer back failed: {0}")]
    Readback(String),

    #[error("waiting for the GPU failed: {0}")]
    Wait(String),

    /// A transfer between two GPUs of a set ([`crate::Gpus`]) could not be made or run, or the path asked for
    /// ([`crate::TransferPath`]) is not there.
    #[error("moving buffers between GPUs: {0}")]
    BetweenGpus(String),

    /// An error of the device, the driver or the validation layer during an operation on a graph (a replay,
    /// a wait for one, a profile), which names no graph of its own: with the graph's name. Its `source` is
    /// the error as it came ([`Error::Gpu`], [`Error::Validation`], [`Error::Wait`]..., see
    /// [`Error::without_graph`]). A lost device is returned as it is: it is the device's state, not the
    /// graph's, and every graph on it fails alike.
    #[error("graph `{graph}`: {source}")]
    InGraph {
        graph: String,
        #[source]
        source: Box<Error>,
    },

    /// What failed on one GPU of a set ([`crate::Gpus`]): its index in the set, its adapter, and the error.
    /// A graph baked on the set refuses to replay after it: bake it again on the GPUs that work.
    #[error("GPU {gpu} of the set ({adapter}): {source}")]
    OnGpu {
        gpu: usize,
        adapter: String,
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// A host or interop task's own error, for its closure to return (`.map_err(Error::task)?`): the replay
    /// fails with [`Error::HostTask`] or [`Error::InteropTask`], naming the graph and the task, with `error`
    /// as its source.
    pub fn task(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Error::Task(error.into())
    }

    /// What a task's closure returned, as the replay's error: its own error ([`Error::Task`]) and the
    /// runtime's errors that do not name the task are wrapped with the graph's and the task's names; an error
    /// that already names them (its context's), and a lost device, which is the device's state and not the
    /// task's, are returned as they are.
    pub(crate) fn of_task(self, graph: &str, node: &str, kind: TaskKind) -> Self {
        let source = match self {
            Error::Task(source) => source,
            Error::DeviceLost(_) => return self,
            e if e.graph_and_node() == Some((graph, node)) => return e,
            e => Box::new(e),
        };
        let (graph, node) = (graph.to_string(), node.to_string());
        match kind {
            TaskKind::Host => Error::HostTask {
                graph,
                node,
                source,
            },
            TaskKind::Interop => Error::InteropTask {
                graph,
                node,
                source,
            },
        }
    }

    /// The graph this error names, if it names one.
    pub fn graph(&self) -> Option<&str> {
        match self {
            Error::BufferType { graph, .. }
            | Error::BufferLength { graph, .. }
            | Error::BufferUsage { graph, .. }
            | Error::ForeignBuffer { graph, .. }
            | Error::MissingBuffer { graph, .. }
            | Error::TextureMismatch { graph, .. }
            | Error::BoundTwice { graph, .. }
            | Error::AliasedBuffers { graph, .. }
            | Error::Bake { graph, .. }
            | Error::InvalidDescription { graph, .. }
            | Error::Update { graph, .. }
            | Error::UnknownName { graph, .. }
            | Error::ParamType { graph, .. }
            | Error::ParamsSize { graph, .. }
            | Error::Unsupported { graph, .. }
            | Error::FusionNotKept { graph, .. }
            | Error::InGraph { graph, .. } => Some(graph),
            Error::Graph(errors) => Some(&errors.graph.name),
            e => e.graph_and_node().map(|(graph, _)| graph),
        }
    }

    /// Whether this is the device's failure rather than the graph's or the caller's: its loss, running out of
    /// memory, or an error it (or the validation layer) reported.
    pub fn is_device_failure(&self) -> bool {
        match self.without_graph() {
            Error::DeviceLost(_) | Error::OutOfMemory(_) | Error::Gpu(_) | Error::Validation(_) => {
                true
            }
            // What the device said during a task, wrapped with the task's name.
            Error::HostTask { source, .. } | Error::InteropTask { source, .. } => source
                .downcast_ref::<Error>()
                .is_some_and(Error::is_device_failure),
            Error::OnGpu { source, .. } => source.is_device_failure(),
            _ => false,
        }
    }

    /// The error beneath the graph's name: the source of an [`Error::InGraph`], any other error itself.
    pub fn without_graph(&self) -> &Error {
        match self {
            Error::InGraph { source, .. } => source,
            e => e,
        }
    }

    /// This error as one of an operation on graph `graph`: an error that names no graph gets its name (see
    /// [`Error::InGraph`]); one that names a graph, and a lost device, are returned as they are.
    pub(crate) fn in_graph(self, graph: &str) -> Self {
        match self {
            Error::DeviceLost(_) => self,
            e if e.graph().is_some() => e,
            e => Error::InGraph {
                graph: graph.to_string(),
                source: Box::new(e),
            },
        }
    }

    /// The graph and the node this error names, where it names both.
    fn graph_and_node(&self) -> Option<(&str, &str)> {
        match self {
            Error::WorkgroupTooLarge { graph, node, .. }
            | Error::DispatchSize { graph, node, .. }
            | Error::DispatchTooLarge { graph, node, .. }
            | Error::UploadMissing { graph, node }
            | Error::TransferData { graph, node, .. }
            | Error::HostTaskMissing { graph, node }
            | Error::HostTaskPanicked { graph, node, .. }
            | Error::InteropTaskMissing { graph, node }
            | Error::InteropTaskPanicked { graph, node, .. }
            | Error::HostTask { graph, node, .. }
            | Error::InteropTask { graph, node, .. }
            | Error::NotANode { graph, node, .. }
            | Error::HostAccess { graph, node, .. } => Some((graph, node)),
            _ => None,
        }
    }
}

/// Which kind of task a closure's error came from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TaskKind {
    Host,
    Interop,
}

impl From<wgpu::Error> for Error {
    fn from(e: wgpu::Error) -> Self {
        match e {
            wgpu::Error::OutOfMemory { .. } => Error::OutOfMemory(e.to_string()),
            other => Error::Gpu(other.to_string()),
        }
    }
}

/// An unknown name, with the names the graph does have.
pub(crate) fn unknown(
    desc: &graph_core::desc::GraphDesc,
    kind: &'static str,
    name: &str,
    known: impl Iterator<Item = String>,
) -> Error {
    unknown_in(&desc.name, kind, name, known)
}

/// [`unknown`], in the graph (or the stream) named `graph`.
pub(crate) fn unknown_in(
    graph: &str,
    kind: &'static str,
    name: &str,
    known: impl Iterator<Item = String>,
) -> Error {
    let known: Vec<String> = known.collect();
    Error::UnknownName {
        graph: graph.to_string(),
        kind,
        name: name.to_string(),
        known: if known.is_empty() {
            format!(" (it has no {kind}s)")
        } else {
            format!(" (it has {})", known.join(", "))
        },
    }
}

/// The text a panic was raised with, when it has one.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_on_a_graph_names_it_where_its_error_does_not() {
        let named = Error::Gpu("a fault".into()).in_graph("G");
        assert!(matches!(&named, Error::InGraph { graph, .. } if graph == "G"));
        assert_eq!(
            named.to_string(),
            "graph `G`: the GPU reported an error: a fault"
        );
        assert_eq!(named.graph(), Some("G"));
        assert!(matches!(named.without_graph(), Error::Gpu(m) if m == "a fault"));
        // Named once, and an error that names its graph already (or another) keeps its own words.
        assert!(matches!(named.in_graph("H"), Error::InGraph { graph, .. } if graph == "G"));
        let own = Error::Wait("late".into()).in_graph("G").in_graph("G");
        assert_eq!(
            own.to_string(),
            "graph `G`: waiting for the GPU failed: late"
        );
        let task = Error::HostTaskMissing {
            graph: "G".into(),
            node: "h".into(),
        };
        assert!(matches!(task.in_graph("G"), Error::HostTaskMissing { .. }));
        // A lost device is the device's, not the graph's.
        assert!(matches!(
            Error::DeviceLost("gone".into()).in_graph("G"),
            Error::DeviceLost(_)
        ));
    }
}
