//! Every check of a graph, as small `check_*` functions over one [`Checker`], and the checked result.
//!
//! The checks run in order, each on whatever the earlier ones could resolve: an unknown name drops only the
//! reference that used it, so every independent mistake is reported in one run.

mod kernels;
mod library;
mod sizes;
mod topology;

use crate::deps::{BufferAccess, Edge, infer_edges, merge_edges};
use crate::diagnostic::{Diagnostic, Diagnostics, Loc};
use crate::ir::{AccessMode, EdgeMode, Graph, KernelSource, NodeKind, ParamsStorage, Role};
use crate::layout::{PORTABLE_IMMEDIATE_BYTES, ParamsLayout};
use crate::library::{Library, LibraryKernel};
use crate::names::{NameTable, unknown};
use crate::schedule::Schedule;
use crate::size::SizeStep;
use crate::types::{ValueType, element_type_problem, param_type_problem};

/// A graph that passed every check, with everything codegen and bake need.
#[derive(Debug, Clone)]
pub struct CheckedGraph {
    pub graph: Graph,
    pub params: ParamsLayout,
    /// Element type of each buffer.
    pub buffer_types: Vec<ValueType>,
    pub nodes: Vec<CheckedNode>,
    pub edges: Vec<Edge>,
    pub schedule: Schedule,
}

#[derive(Debug, Clone)]
pub enum CheckedNode {
    Kernel(CheckedKernel),
    Copy { src: usize, dst: usize },
    Host { accesses: Vec<BufferAccess> },
}

/// A kernel whose WGSL validated against its bindings and parameters.
#[derive(Debug, Clone)]
pub struct CheckedKernel {
    /// Binding `i` of group 0: the buffer and its declared access.
    pub bindings: Vec<BufferAccess>,
    /// Generated binding declarations (the parameter struct comes from the layout).
    pub declarations: String,
    /// Library arguments as `(name, WGSL type, WGSL value)`.
    pub args: Vec<(String, String, String)>,
    /// The kernel's own WGSL.
    pub source: String,
    pub entry: String,
    pub workgroup_size: [u32; 3],
    pub dispatch: CheckedDispatch,
    /// Each invocation touches only its own element (library metadata).
    pub pointwise: bool,
    /// The kernel indexes elements as `gid.x + gid.y * num_workgroups.x * workgroup_size.x` (library kernels),
    /// so a one-dimensional dispatch past the per-dimension limit may be folded into two dimensions.
    pub foldable: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckedDispatch {
    /// One invocation per element of this buffer.
    BufferLen(usize),
    /// Invocations per dimension given (1 to 3), rounded up to whole workgroups.
    Threads(Vec<SizeProgram>),
    /// Workgroups per dimension given (1 to 3).
    Workgroups(Vec<SizeProgram>),
}

/// One dimension of a dispatch size, resolved: its text for messages and its postfix program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeProgram {
    pub text: String,
    pub steps: Vec<SizeStep>,
}

/// Checks `graph` against `library`; every problem found, or the checked graph.
pub fn check(graph: Graph, library: &Library) -> Result<CheckedGraph, Vec<Diagnostic>> {
    let mut c = Checker::new(&graph, library);
    c.check_wgsl_names();
    c.check_param_types();
    c.check_params_budget();
    c.check_buffer_types();
    c.check_owned_buffers_have_a_length();
    c.resolve_accesses();
    c.check_library_bindings();
    c.check_copies();
    c.check_inputs_are_not_written();
    c.check_outputs_are_written();
    c.resolve_explicit_edges();
    let edges = c.dependency_edges();
    c.check_cycles(&edges);
    let schedule = c.check_schedule(&edges);
    let kernels = c.check_kernels();
    let (diags, result) = c.finish(edges, schedule, kernels);
    if diags.is_empty()
        && let Some(checked) = result
    {
        return Ok(checked);
    }
    let mut list = diags.into_vec();
    if list.is_empty() {
        list.push(Diagnostic::new(Loc::Graph, "graph could not be checked"));
    }
    Err(list)
}

struct Checker<'g> {
    graph: &'g Graph,
    library: &'g Library,
    diags: Diagnostics,
    params: NameTable<'g>,
    buffers: NameTable<'g>,
    nodes: NameTable<'g>,
    /// `None` where the type was refused.
    param_types: Vec<Option<ValueType>>,
    buffer_types: Vec<Option<ValueType>>,
    /// Per node, per access (in the node's order): the resolved access, `None` where the name was unknown.
    accesses: Vec<Vec<Option<BufferAccess>>>,
    /// The library kernel of each library node, once found and bound without error.
    library_kernels: Vec<Option<&'static LibraryKernel>>,
    explicit: Vec<(usize, usize, usize)>,
    /// Names refused for WGSL: kernels using them are not validated (naga would only repeat the error).
    badly_named_buffers: Vec<usize>,
    badly_named_params: bool,
}

impl<'g> Checker<'g> {
    fn new(graph: &'g Graph, library: &'g Library) -> Self {
        let mut diags = Diagnostics::default();
        // Names must be unique per kind; a repeat is reported where it is repeated.
        let params = NameTable::build(
            "parameter",
            graph.params.iter().map(|p| p.name.as_str()),
            Loc::Param,
            &mut diags,
        );
        let buffers = NameTable::build(
            "buffer",
            graph.buffers.iter().map(|b| b.name.as_str()),
            Loc::Buffer,
            &mut diags,
        );
        let nodes = NameTable::build(
            "node",
            graph.nodes.iter().map(|n| n.name.as_str()),
            Loc::Node,
            &mut diags,
        );
        Checker {
            graph,
            library,
            diags,
            params,
            buffers,
            nodes,
            param_types: Vec::new(),
            buffer_types: Vec::new(),
            accesses: Vec::new(),
            library_kernels: vec![None; graph.nodes.len()],
            explicit: Vec::new(),
            badly_named_buffers: Vec::new(),
            badly_named_params: false,
        }
    }

    fn table(&self, space: Space) -> &NameTable<'g> {
        match space {
            Space::Node => &self.nodes,
            Space::Buffer => &self.buffers,
            Space::Param => &self.params,
        }
    }

    /// Looks a name up in its namespace, reporting an unknown one at `loc`.
    fn resolve_name(&mut self, space: Space, name: &str, loc: Loc) -> Option<usize> {
        let found = self.table(space).get(name);
        if found.is_none() {
            let d = self.unknown_name(space, name, loc);
            self.diags.push(d);
        }
        found
    }

    /// An unknown name: when it names something of another kind, says so (the likelier mistake); else the
    /// closest name of the right kind.
    fn unknown_name(&self, space: Space, name: &str, loc: Loc) -> Diagnostic {
        let other = [Space::Node, Space::Buffer, Space::Param]
            .into_iter()
            .find(|&other| other != space && self.table(other).get(name).is_some());
        match other {
            Some(other) => Diagnostic::new(
                loc,
                format!("`{name}` is a {}, not a {}", other.what(), space.what()),
            )
            .with_help(wrong_namespace_help(space, other, name)),
            None => unknown(loc, space.what(), name, self.table(space).names()),
        }
    }

    /// Buffers and parameters become WGSL names: not a WGSL keyword or reserved word, and no buffer called
    /// `params` (the parameter block's name).
    fn check_wgsl_names(&mut self) {
        // WGSL also forbids names starting with `__`, which the generated Rust keeps for its padding fields.
        let reserved = |name: &str| {
            naga::keywords::wgsl::RESERVED.contains(&name)
                || name == crate::layout::WGSL_PARAMS_STRUCT
                || name.starts_with("__")
        };
        for (i, b) in self.graph.buffers.iter().enumerate() {
            if reserved(&b.name) || b.name == "params" {
                self.badly_named_buffers.push(i);
                self.diags.push(
                    Diagnostic::new(Loc::Buffer(i), format!("`{}` cannot name a buffer: kernels see buffers by name, and WGSL reserves it", b.name))
                        .with_help("choose another name"),
                );
            }
        }
        for (i, p) in self.graph.params.iter().enumerate() {
            if reserved(&p.name) {
                self.badly_named_params = true;
                self.diags.push(
                    Diagnostic::new(
                        Loc::Param(i),
                        format!("`{}` cannot name a parameter: WGSL reserves it", p.name),
                    )
                    .with_help("choose another name"),
                );
            }
        }
    }

    /// Parameters are 32-bit scalars or vectors, the host-shareable types push constants can hold.
    fn check_param_types(&mut self) {
        for (i, p) in self.graph.params.iter().enumerate() {
            match param_type_problem(&p.ty) {
                None => self.param_types.push(ValueType::parse(&p.ty).ok()),
                Some(problem) => {
                    self.diags.push(Diagnostic::new(
                        Loc::ParamType(i),
                        format!(
                            "parameter `{}` cannot have type `{}`: {problem}",
                            p.name,
                            p.ty.replace(' ', "")
                        ),
                    ));
                    self.param_types.push(None);
                }
            }
        }
    }

    /// The layout the kernels are checked against, whatever else is wrong with the parameters.
    fn params_layout(&self) -> ParamsLayout {
        ParamsLayout::of_valid_params(&self.graph.params)
    }

    /// The parameter block fits the 128 bytes of push constants every backend offers, unless the graph moved
    /// its parameters to a uniform buffer.
    fn check_params_budget(&mut self) {
        let layout = self.params_layout();
        if self.graph.params_storage == ParamsStorage::Immediates
            && layout.size > PORTABLE_IMMEDIATE_BYTES
        {
            // 128 is a multiple of every alignment, so some field itself ends past the budget.
            let end = |f: &crate::layout::ParamField| f.offset + f.ty.size();
            let over = layout
                .fields
                .iter()
                .find(|f| end(f) > PORTABLE_IMMEDIATE_BYTES);
            let (name, ends_at) = over.map_or(("", layout.size), |f| (f.name.as_str(), end(f)));
            self.diags.push(
                Diagnostic::new(
                    Loc::ParamsBlock,
                    format!(
                        "the parameter block is {} bytes, over the {PORTABLE_IMMEDIATE_BYTES}-byte push-constant \
                         budget every backend offers (`{name}` ends at byte {ends_at})",
                        layout.size,
                    ),
                )
                .with_help(
                    "move some values into a buffer, or mark the graph `#[uniform_params]` to pass parameters in a \
                     uniform buffer instead of push constants",
                ),
            );
        }
    }

    /// Buffer elements are 32-bit scalars or 2- and 4-vectors, whose Rust twins have no hidden padding.
    fn check_buffer_types(&mut self) {
        for (i, b) in self.graph.buffers.iter().enumerate() {
            match element_type_problem(&b.elem) {
                None => self.buffer_types.push(ValueType::parse(&b.elem).ok()),
                Some(problem) => {
                    self.diags.push(Diagnostic::new(
                        Loc::BufferType(i),
                        format!(
                            "buffer `{}` cannot hold `{}`: {problem}",
                            b.name,
                            b.elem.replace(' ', "")
                        ),
                    ));
                    self.buffer_types.push(None);
                }
            }
        }
    }

    /// The graph allocates its own buffers at bake time, so it must know their length.
    fn check_owned_buffers_have_a_length(&mut self) {
        for (i, b) in self.graph.buffers.iter().enumerate() {
            if b.role == Role::Owned && b.len.is_none() {
                self.diags.push(
                    Diagnostic::new(Loc::Buffer(i), format!("graph-owned buffer `{}` needs a length", b.name))
                        .with_help(format!(
                            "write `{}: [{}; N]`, or bind it from outside with `= input`, `= output` or `= inout`",
                            b.name, b.elem
                        )),
                );
            }
            if b.len == Some(0) {
                self.diags.push(Diagnostic::new(
                    Loc::Buffer(i),
                    format!("buffer `{}` has length 0", b.name),
                ));
            }
            // Lengths travel as u32 element counts, the most a storage binding can index.
            if b.len.is_some_and(|n| n > u64::from(u32::MAX)) {
                self.diags.push(Diagnostic::new(
                    Loc::Buffer(i),
                    format!(
                        "buffer `{}` is longer than {} elements, the most a kernel can index",
                        b.name,
                        u32::MAX
                    ),
                ));
            }
        }
    }

    /// Every buffer a node names exists, and no node names one buffer twice.
    fn resolve_accesses(&mut self) {
        for (n, node) in self.graph.nodes.iter().enumerate() {
            let mut resolved = Vec::new();
            for (i, access) in node.accesses().iter().enumerate() {
                let loc = Loc::Access { node: n, index: i };
                let found = self.resolve_name(Space::Buffer, &access.buffer, loc.clone());
                let repeated = found.is_some()
                    && resolved
                        .iter()
                        .flatten()
                        .any(|a: &BufferAccess| Some(a.buffer) == found);
                if repeated {
                    self.diags.push(
                        Diagnostic::new(
                            loc,
                            format!(
                                "node `{}` names buffer `{}` twice",
                                node.name, access.buffer
                            ),
                        )
                        .with_help("bind each buffer once, with the widest access the node needs"),
                    );
                }
                resolved.push(found.filter(|_| !repeated).map(|buffer| BufferAccess {
                    buffer,
                    mode: access.mode,
                }));
            }
            self.accesses.push(resolved);
        }
    }

    /// A copy moves elements of one type, between buffers of one length when both lengths are declared (a
    /// copy writes the whole of its destination).
    fn check_copies(&mut self) {
        for (n, node) in self.graph.nodes.iter().enumerate() {
            let NodeKind::Copy { src, dst } = &node.kind else {
                continue;
            };
            let (Some(Some(s)), Some(Some(d))) =
                (self.accesses[n].first(), self.accesses[n].get(1))
            else {
                continue;
            };
            if let (Some(st), Some(dt)) = (self.buffer_types[s.buffer], self.buffer_types[d.buffer])
                && st != dt
            {
                self.diags.push(Diagnostic::new(
                    Loc::Access { node: n, index: 1 },
                    format!("copy `{}` moves `{st}` elements from `{src}` into `{dst}`, which holds `{dt}`", node.name),
                ));
            }
            let (src_len, dst_len) = (
                self.graph.buffers[s.buffer].len,
                self.graph.buffers[d.buffer].len,
            );
            if let (Some(sl), Some(dl)) = (src_len, dst_len)
                && sl != dl
            {
                self.diags.push(
                    Diagnostic::new(
                        Loc::Access { node: n, index: 1 },
                        format!(
                            "copy `{}` copies all {sl} elements of `{src}` into `{dst}`, which has {dl}",
                            node.name
                        ),
                    )
                    .with_help("a copy moves a whole buffer into one of the same length"),
                );
            }
        }
    }

    /// The caller lends inputs for reading only.
    fn check_inputs_are_not_written(&mut self) {
        for (n, node) in self.graph.nodes.iter().enumerate() {
            for (i, access) in self.accesses[n].iter().enumerate() {
                let Some(access) = access else { continue };
                let buffer = &self.graph.buffers[access.buffer];
                if buffer.role == Role::Input && access.mode.writes() {
                    let is_library = matches!(&node.kind, NodeKind::Kernel(k) if matches!(k.source, KernelSource::Library(_)));
                    // Only inline and file kernels and host tasks write an access mode of their own.
                    let without_mode =
                        matches!(node.kind, NodeKind::Copy { .. } | NodeKind::Fill { .. });
                    let loc = if is_library || without_mode {
                        Loc::Access { node: n, index: i }
                    } else {
                        Loc::AccessMode { node: n, index: i }
                    };
                    self.diags.push(
                        Diagnostic::new(
                            loc,
                            format!(
                                "node `{}` writes `{}`, which is an `input` of the graph",
                                node.name, buffer.name
                            ),
                        )
                        .with_help(format!(
                            "declare `{}` as `inout` if the graph may change it",
                            buffer.name
                        )),
                    );
                }
            }
        }
    }

    /// Something must produce each output.
    fn check_outputs_are_written(&mut self) {
        for (b, buffer) in self.graph.buffers.iter().enumerate() {
            if buffer.role != Role::Output {
                continue;
            }
            let written = self
                .accesses
                .iter()
                .flatten()
                .flatten()
                .any(|a| a.buffer == b && a.mode.writes());
            // An access dropped for another error (an unknown library kernel) may be the writer: don't guess.
            let unknowable = self
                .graph
                .nodes
                .iter()
                .zip(&self.accesses)
                .any(|(node, resolved)| {
                    node.accesses()
                        .iter()
                        .zip(resolved)
                        .any(|(a, r)| r.is_none() && a.buffer == buffer.name)
                });
            if !written && !unknowable && self.buffers.get(&buffer.name) == Some(b) {
                self.diags.push(
                    Diagnostic::new(
                        Loc::Buffer(b),
                        format!("output `{}` is never written by any node", buffer.name),
                    )
                    .with_help(
                        "write it from a node, or declare it `input` if the graph only reads it",
                    ),
                );
            }
        }
    }

    /// Both ends of an explicit edge are nodes of this graph.
    fn resolve_explicit_edges(&mut self) {
        for (i, e) in self.graph.edges.iter().enumerate() {
            let from = self.resolve_name(Space::Node, &e.from, Loc::EdgeFrom(i));
            let to = self.resolve_name(Space::Node, &e.to, Loc::EdgeTo(i));
            if let (Some(from), Some(to)) = (from, to) {
                self.explicit.push((i, from, to));
            }
        }
    }

    fn dependency_edges(&self) -> Vec<Edge> {
        let inferred = match self.graph.edge_mode {
            EdgeMode::Inferred => infer_edges(self.graph.buffers.len(), &self.resolved_accesses()),
            EdgeMode::ExplicitOnly => Vec::new(),
        };
        merge_edges(&self.explicit, inferred)
    }

    fn resolved_accesses(&self) -> Vec<Vec<BufferAccess>> {
        self.accesses
            .iter()
            .map(|list| list.iter().flatten().copied().collect())
            .collect()
    }

    fn finish(
        self,
        edges: Vec<Edge>,
        schedule: Option<Schedule>,
        kernels: Vec<Option<CheckedKernel>>,
    ) -> (Diagnostics, Option<CheckedGraph>) {
        let params = self.params_layout();
        let buffer_types: Option<Vec<ValueType>> = self.buffer_types.iter().copied().collect();
        let nodes: Option<Vec<CheckedNode>> = self
            .graph
            .nodes
            .iter()
            .zip(kernels)
            .zip(&self.accesses)
            .map(|((node, kernel), accesses)| match &node.kind {
                NodeKind::Kernel(_) | NodeKind::Fill { .. } => kernel.map(CheckedNode::Kernel),
                NodeKind::Copy { .. } => Some(CheckedNode::Copy {
                    src: accesses.first().copied()??.buffer,
                    dst: accesses.get(1).copied()??.buffer,
                }),
                NodeKind::Host { .. } => accesses
                    .iter()
                    .copied()
                    .collect::<Option<Vec<_>>>()
                    .map(|accesses| CheckedNode::Host { accesses }),
            })
            .collect();
        let checked = match (buffer_types, nodes, schedule) {
            (Some(buffer_types), Some(nodes), Some(schedule)) => Some(CheckedGraph {
                graph: self.graph.clone(),
                params,
                buffer_types,
                nodes,
                edges,
                schedule,
            }),
            _ => None,
        };
        (self.diags, checked)
    }
}

/// The graph's three namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Space {
    Node,
    Buffer,
    Param,
}

impl Space {
    fn what(self) -> &'static str {
        match self {
            Space::Node => "node",
            Space::Buffer => "buffer",
            Space::Param => "parameter",
        }
    }
}

/// What to write instead, when a name of one kind stands where another kind belongs.
fn wrong_namespace_help(wanted: Space, found: Space, name: &str) -> String {
    match (wanted, found) {
        (Space::Node, Space::Buffer) => format!(
            "edges join nodes; the nodes that use buffer `{name}` are already ordered by their accesses"
        ),
        (Space::Node, _) => "edges join nodes: `a -> b;`".to_string(),
        (Space::Buffer, Space::Param) => format!(
            "parameters are not buffers: kernels read this one as `params.{name}`, and library kernels take it as \
             an argument (`alpha: params.{name}`)"
        ),
        (Space::Buffer, _) => "name a buffer declared in `buffers { .. }`".to_string(),
        (Space::Param, Space::Buffer) => format!(
            "a kernel sees buffer `{name}` by its own name once it lists it (`{name}: read`); in a dispatch size, \
             its length is `{name}.len()`"
        ),
        (Space::Param, _) => {
            "`params.NAME` names a parameter declared in `params { .. }`".to_string()
        }
    }
}

fn verb(mode: AccessMode) -> &'static str {
    match mode {
        AccessMode::Read => "reads",
        AccessMode::Write | AccessMode::ReadWrite => "writes",
    }
}
