//! Saved graphs: a graph as declared (the IR), in JSON, with a format version.
//!
//! A file holds the IR, not the description. The IR is what a person writes and reads (names, not indices;
//! WGSL as written; sizes as expressions), and a loaded graph goes through the same checks as a macro or a
//! builder graph: a file cannot carry a description that skipped them, and its mistakes are reported as
//! diagnostics with their locations rather than as a refusal to bake. The description is then made from
//! it by the same function as for every other front door, so all three agree by construction.
//!
//! ```json
//! { "format": 2,
//!   "graph": {
//!     "name": "Scale",
//!     "params": [{ "name": "n", "type": "u32" }],
//!     "buffers": [{ "name": "x", "elem": "f32", "role": "inout" },
//!                 { "name": "frame", "texture": "texture_2d<rgba8unorm>", "role": "input" }],
//!     "nodes": [{ "name": "twice", "kernel": {
//!       "accesses": [{ "buffer": "x", "mode": "read_write" }],
//!       "source": { "wgsl": { "text": "@compute @workgroup_size(64) fn main(..) { .. }" } },
//!       "dispatch": { "threads": ["params.n"] } } }] } }
//! ```
//!
//! A kernel may name a `.wgsl` file instead of holding its text (`"source": {"wgsl": {"file": "k.wgsl"}}`),
//! read relative to the graph file by [`load`]. A subgraph node names another graph file
//! (`"subgraph": {"graph": "blur.json", "accesses": [..]}`), loaded by [`load_with_children`]. An access's `binding` may be left out when it is the
//! buffer's own name (inline kernels and host tasks).

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::file_spans::SourceFile;
use crate::ir::{Graph, KernelSource, Node, NodeKind};
use crate::library::Library;
use crate::names::escaped;
use crate::subgraph::Subgraphs;

/// The format this crate writes. Format 2 writes a texture's type as its `texture` (format 1 wrote it as
/// its `elem`).
pub const FORMAT_VERSION: u32 = 2;

/// The formats this crate reads. A file of another version is refused with the numbers.
pub const FORMATS_READ: [u32; 2] = [1, 2];

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphFile {
    format: u32,
    graph: Graph,
}

/// Only the version, read first so that a file of another version is refused as such, whatever its shape.
#[derive(Deserialize)]
struct Version {
    format: u32,
}

/// Why a graph file could not be loaded. (A file that loads may still have mistakes: the checks report
/// those as diagnostics.)
#[derive(Debug)]
pub enum LoadError {
    /// The file (or a `.wgsl` file it names) could not be read.
    Read { path: String, reason: String },
    /// Not JSON, or not the shape of a graph file.
    Json {
        line: usize,
        column: usize,
        reason: String,
    },
    /// Written for another version of the format.
    Format { found: u32 },
    /// A node with a key that is no part of a node, or with several kinds.
    Node {
        index: usize,
        name: String,
        reason: String,
    },
    /// A kernel names a `.wgsl` file, but the graph was not loaded from a file to find it relative to.
    NoBaseForWgslFile { node: String, file: String },
    /// The graph file a subgraph node names could not be loaded, or its graph has mistakes.
    Subgraph {
        node: String,
        file: String,
        reason: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Read { path, reason } => write!(f, "cannot read `{path}`: {reason}"),
            LoadError::Json {
                line,
                column,
                reason,
            } => write!(
                f,
                "line {line}, column {column}: {reason} (a graph file is JSON: {{\"format\": \
                 {FORMAT_VERSION}, \"graph\": {{..}}}})"
            ),
            LoadError::Format { found } => write!(
                f,
                "the file is format {found}, but this version reads formats {} and {}",
                FORMATS_READ[0], FORMATS_READ[1]
            ),
            LoadError::Node {
                index,
                name,
                reason,
            } => write!(f, "node {index} (`{}`): {reason}", escaped(name)),
            LoadError::NoBaseForWgslFile { node, file } => write!(
                f,
                "node `{}` names the WGSL file `{}`, which can only be found relative to a graph file: \
                 load the graph with `file::load(path)`",
                escaped(node),
                escaped(file)
            ),
            LoadError::Subgraph { node, file, reason } => {
                write!(
                    f,
                    "subgraph `{}` names `{}`: {reason}",
                    escaped(node),
                    escaped(file)
                )
            }
        }
    }
}

impl std::error::Error for LoadError {}

fn json_error(e: &serde_json::Error) -> LoadError {
    LoadError::Json {
        line: e.line(),
        column: e.column(),
        reason: strip_position(&e.to_string()),
    }
}

/// serde_json ends its messages with " at line L column C", which [`LoadError`] says already.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// A graph from the text of a graph file. Kernels must hold their WGSL text (see [`load`] for files).
pub fn from_json(text: &str) -> Result<Graph, LoadError> {
    let graph = parse(text)?;
    if let Some((node, file)) = unread_wgsl_files(&graph).next() {
        return Err(LoadError::NoBaseForWgslFile {
            node: node.to_string(),
            file: file.to_string(),
        });
    }
    Ok(graph)
}

/// A graph from the graph file at `path`, with the `.wgsl` files its kernels name read relative to it.
pub fn load(path: &Path) -> Result<Graph, LoadError> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| LoadError::Read {
            path: p.display().to_string(),
            reason: e.to_string(),
        })
    };
    let mut graph = parse(&read(path)?)?;
    let base = path.parent().unwrap_or(Path::new("."));
    for node in &mut graph.nodes {
        if let NodeKind::Kernel(kernel) = &mut node.kind
            && let KernelSource::Wgsl {
                text,
                file: Some(file),
            } = &mut kernel.source
            && text.is_empty()
        {
            *text = read(&base.join(&*file))?;
        }
    }
    Ok(graph)
}

/// A graph from the graph file at `path` (see [`load`]) and the children its subgraph nodes name: graph
/// files relative to it (`"subgraph": {"graph": "blur.json", ..}`), each loaded the same way and described
/// with `library`. Give both to [`crate::pipeline::describe_graph_with`].
pub fn load_with_children(path: &Path, library: &Library) -> Result<(Graph, Subgraphs), LoadError> {
    let mut children = Subgraphs::new();
    let graph = load_nested(path, library, &mut Vec::new(), &mut children)?;
    Ok((graph, children))
}

/// `path` loaded, its children described into `children`; `open` holds the files being loaded (canonical),
/// so that a file that names itself, directly or not, is an error rather than endless recursion.
fn load_nested(
    path: &Path,
    library: &Library,
    open: &mut Vec<std::path::PathBuf>,
    children: &mut Subgraphs,
) -> Result<Graph, LoadError> {
    let graph = load(path)?;
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    open.push(canonical);
    let base = path.parent().unwrap_or(Path::new("."));
    for node in &graph.nodes {
        let NodeKind::Subgraph { graph: file, .. } = &node.kind else {
            continue;
        };
        // A library subgraph is no file: describing the graph finds it in the library.
        if children.contains_key(file) || file.starts_with(crate::library::SUBGRAPH_PREFIX) {
            continue;
        }
        let error = |reason: String| LoadError::Subgraph {
            node: node.name.clone(),
            file: file.clone(),
            reason,
        };
        let child_path = base.join(file);
        let child_canonical = child_path
            .canonicalize()
            .unwrap_or_else(|_| child_path.clone());
        if open.contains(&child_canonical) {
            return Err(error("the file includes itself".to_string()));
        }
        let mut grandchildren = Subgraphs::new();
        let child = load_nested(&child_path, library, open, &mut grandchildren)
            .map_err(|e| error(e.to_string()))?;
        // The child's mistakes at their lines of its own file.
        let desc =
            crate::pipeline::describe_graph_with(child, library, &grandchildren).map_err(|e| {
                error(
                    SourceFile::read(&child_path)
                        .map_or_else(|_| e.to_string(), |s| e.report_in(&s)),
                )
            })?;
        children.insert(file.clone(), std::sync::Arc::new(desc));
    }
    open.pop();
    Ok(graph)
}

fn parse(text: &str) -> Result<Graph, LoadError> {
    let version: Version = serde_json::from_str(text).map_err(|e| json_error(&e))?;
    if !FORMATS_READ.contains(&version.format) {
        return Err(LoadError::Format {
            found: version.format,
        });
    }
    check_node_keys(text)?;
    let file: GraphFile = serde_json::from_str(text).map_err(|e| json_error(&e))?;
    let mut graph = file.graph;
    // An access written without its binding is bound by the buffer's own name.
    for accesses in graph.nodes.iter_mut().filter_map(Node::listed_accesses_mut) {
        for a in accesses {
            if a.binding.is_empty() {
                a.binding = a.buffer.clone();
            }
        }
    }
    Ok(graph)
}

/// The keys a node may have: its name and exactly one kind.
const NODE_KEYS: [&str; 11] = [
    "name", "kernel", "copy", "fill", "upload", "readback", "host", "interop", "empty", "barrier",
    "subgraph",
];

/// A node's kind is a key beside its name, which serde reads with `flatten`, and `flatten` cannot refuse
/// unknown keys: a misspelt key, or a second kind, would be dropped without a word. They are refused here.
fn check_node_keys(text: &str) -> Result<(), LoadError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| json_error(&e))?;
    let nodes = value
        .get("graph")
        .and_then(|g| g.get("nodes"))
        .and_then(|n| n.as_array());
    for (index, node) in nodes.into_iter().flatten().enumerate() {
        // Not an object: the typed reading says so, with the position.
        let Some(map) = node.as_object() else {
            continue;
        };
        let name = map.get("name").and_then(|v| v.as_str()).unwrap_or("?");
        let error = |reason: String| LoadError::Node {
            index,
            name: name.to_string(),
            reason,
        };
        if let Some(key) = map.keys().find(|k| !NODE_KEYS.contains(&k.as_str())) {
            let kinds: Vec<String> = NODE_KEYS[1..].iter().map(|k| format!("`{k}`")).collect();
            return Err(error(format!(
                "unknown key `{key}`: a node has a `name` and one of {}",
                kinds.join(", ")
            )));
        }
        let kinds: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "name")
            .collect();
        if kinds.len() > 1 {
            return Err(error(format!(
                "a node is one kind, but this one has {}",
                kinds.join(" and ")
            )));
        }
    }
    Ok(())
}

/// Kernels that name a `.wgsl` file and do not hold its text yet.
fn unread_wgsl_files(graph: &Graph) -> impl Iterator<Item = (&str, &str)> {
    graph.nodes.iter().filter_map(|node| match &node.kind {
        NodeKind::Kernel(k) => match &k.source {
            KernelSource::Wgsl {
                text,
                file: Some(file),
            } if text.is_empty() => Some((node.name.as_str(), file.as_str())),
            _ => None,
        },
        _ => None,
    })
}

/// The graph file of `graph`, pretty-printed. Bindings that repeat the buffer's name are left out, and kernel
/// text is kept even where it came from a `.wgsl` file, so the file stands alone.
pub fn to_json(graph: &Graph) -> String {
    let mut graph = graph.clone();
    for accesses in graph.nodes.iter_mut().filter_map(Node::listed_accesses_mut) {
        for a in accesses {
            if a.binding == a.buffer {
                a.binding.clear();
            }
        }
    }
    let file = GraphFile {
        format: FORMAT_VERSION,
        graph,
    };
    // A graph is strings, numbers and lists: serializing it cannot fail.
    serde_json::to_string_pretty(&file).unwrap_or_default()
}
