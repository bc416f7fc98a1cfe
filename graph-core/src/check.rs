//! Every check of a graph, as small `check_*` functions over one [`Checker`], and the checked result.
//!
//! The checks run in order, each on whatever the earlier ones could resolve: an unknown name drops only the
//! reference that used it, so every independent mistake is reported in one run.

use crate::deps::{BufferAccess, Edge, EdgeOrigin, Hazard, infer_edges, merge_edges};
use crate::diagnostic::{Diagnostic, Diagnostics, Loc};
use crate::ir::{
    AccessMode, DispatchSpec, EdgeMode, Graph, KernelSource, NodeKind, ParamsStorage, Role,
};
use crate::layout::{PORTABLE_IMMEDIATE_BYTES, ParamsLayout};
use crate::library::{Library, LibraryKernel};
use crate::names::{NameTable, did_you_mean, unknown};
use crate::schedule::{Reachability, Schedule, schedule};
use crate::types::{ValueType, element_type_problem, param_type_problem};
use crate::wgsl::{self, Composed, Segment, WgslError};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckedDispatch {
    /// One invocation per element of this buffer.
    BufferLen(usize),
    Threads {
        dims: u8,
    },
    Workgroups {
        dims: u8,
    },
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
    c.check_copy_types();
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
                let found =
                    self.buffers
                        .resolve("buffer", &access.buffer, loc.clone(), &mut self.diags);
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

    /// A library kernel exists, gets each of its bindings and arguments once, and gets buffers of its types;
    /// its accesses take the library's modes.
    fn check_library_bindings(&mut self) {
        for (n, node) in self.graph.nodes.iter().enumerate() {
            let NodeKind::Kernel(kernel) = &node.kind else {
                continue;
            };
            let KernelSource::Library(path) = &kernel.source else {
                continue;
            };
            let Some(lib) = self.library.get(path) else {
                let mut d = unknown(
                    Loc::KernelSource(n),
                    "library kernel",
                    &format!("kernels::{path}"),
                    [],
                );
                d.help = Some(match did_you_mean(path, self.library.paths()) {
                    Some(best) => format!("did you mean `kernels::{best}`?"),
                    None => format!(
                        "the library has {}",
                        self.library
                            .paths()
                            .map(|p| format!("`kernels::{p}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
                self.diags.push(d);
                // Without the library's modes the accesses mean nothing: drop them rather than guess.
                self.accesses[n].iter_mut().for_each(|a| *a = None);
                continue;
            };
            let errors_before = self.diags.len();
            // A misspelt name is suggested among the names not given yet.
            let unbound: Vec<&str> = lib
                .bindings
                .iter()
                .map(|b| b.name)
                .filter(|name| !kernel.accesses.iter().any(|a| a.binding == *name))
                .collect();
            // A name suggested for a misspelling is not reported missing as well: one typo, one error.
            let mut suggested: Vec<&str> = Vec::new();
            for (i, access) in kernel.accesses.iter().enumerate() {
                let loc = Loc::Access { node: n, index: i };
                let Some(binding) = lib.bindings.iter().find(|b| b.name == access.binding) else {
                    let all: Vec<&str> = lib.bindings.iter().map(|b| b.name).collect();
                    suggested.extend(did_you_mean(&access.binding, unbound.iter().copied()));
                    let d = misspelt(
                        Loc::AccessMode { node: n, index: i },
                        "binding",
                        format!("`kernels::{path}` has no binding `{}`", access.binding),
                        &access.binding,
                        &unbound,
                        &all,
                    );
                    self.diags.push(d);
                    self.accesses[n][i] = None;
                    continue;
                };
                if kernel.accesses[..i]
                    .iter()
                    .any(|a| a.binding == access.binding)
                {
                    self.diags.push(Diagnostic::new(
                        loc,
                        format!(
                            "`kernels::{path}` binding `{}` is bound twice",
                            access.binding
                        ),
                    ));
                    self.accesses[n][i] = None;
                    continue;
                }
                if let Some(a) = self.accesses[n][i].as_mut() {
                    a.mode = binding.mode;
                    let expected = ValueType::parse(binding.elem).ok();
                    let actual = self.buffer_types[a.buffer];
                    if let (Some(expected), Some(actual)) = (expected, actual)
                        && expected != actual
                    {
                        self.diags.push(Diagnostic::new(
                            loc,
                            format!(
                                "`kernels::{path}` binding `{}` takes `array<{expected}>`, but buffer `{}` holds `{actual}`",
                                binding.name, access.buffer
                            ),
                        ));
                    }
                }
            }
            for binding in lib.bindings {
                if !kernel.accesses.iter().any(|a| a.binding == binding.name)
                    && !suggested.contains(&binding.name)
                {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::KernelSource(n),
                            format!("`kernels::{path}` needs a buffer for binding `{}`", binding.name),
                        )
                        .with_help(format!(
                            "add `{}: BUFFER`, naming a buffer of `{}` elements that the kernel will {}",
                            binding.name,
                            binding.elem,
                            match binding.mode {
                                AccessMode::Read => "read",
                                AccessMode::Write => "overwrite",
                                AccessMode::ReadWrite => "read and write",
                            }
                        )),
                    );
                }
            }
            let ungiven: Vec<&str> = lib
                .args
                .iter()
                .map(|a| a.name)
                .filter(|name| !kernel.args.iter().any(|a| a.name == *name))
                .collect();
            for (i, arg) in kernel.args.iter().enumerate() {
                let loc = Loc::KernelArg { node: n, index: i };
                if !lib.args.iter().any(|a| a.name == arg.name) {
                    let all: Vec<&str> = lib.args.iter().map(|a| a.name).collect();
                    suggested.extend(did_you_mean(&arg.name, ungiven.iter().copied()));
                    let d = misspelt(
                        loc,
                        "argument",
                        format!("`kernels::{path}` has no argument `{}`", arg.name),
                        &arg.name,
                        &ungiven,
                        &all,
                    );
                    self.diags.push(d);
                } else if kernel.args[..i].iter().any(|a| a.name == arg.name) {
                    self.diags.push(Diagnostic::new(
                        loc,
                        format!("argument `{}` is given twice", arg.name),
                    ));
                }
            }
            for arg in lib.args {
                if !kernel.args.iter().any(|a| a.name == arg.name) && !suggested.contains(&arg.name)
                {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::KernelSource(n),
                            format!("`kernels::{path}` needs argument `{}`", arg.name),
                        )
                        .with_help(format!(
                            "add `{}: VALUE`, a `{}` such as a literal or `params.NAME`",
                            arg.name, arg.ty
                        )),
                    );
                }
            }
            // Only a library kernel bound without error is validated: its WGSL is not the user's to fix.
            if self.diags.len() == errors_before {
                self.library_kernels[n] = Some(lib);
            }
        }
    }

    /// A copy moves elements of one type.
    fn check_copy_types(&mut self) {
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
                    let loc = if is_library || matches!(node.kind, NodeKind::Copy { .. }) {
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
            let from = self
                .nodes
                .resolve("node", &e.from, Loc::EdgeFrom(i), &mut self.diags);
            let to = self
                .nodes
                .resolve("node", &e.to, Loc::EdgeTo(i), &mut self.diags);
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

    /// The graph is acyclic; each cycle is reported once, at its last explicit edge, with its whole path.
    fn check_cycles(&mut self, edges: &[Edge]) {
        for cycle in crate::cycles::find_cycles(self.graph.nodes.len(), edges) {
            let name = |n: usize| self.graph.nodes[n].name.as_str();
            let mut path = format!("`{}`", name(edges[cycle[0]].from));
            for &e in &cycle {
                let edge = edges[e];
                let why = match edge.origin {
                    EdgeOrigin::Explicit(_) => "explicit edge".to_string(),
                    EdgeOrigin::Inferred { buffer, hazard } => {
                        let b = &self.graph.buffers[buffer].name;
                        match hazard {
                            Hazard::ReadAfterWrite => {
                                format!("reads `{b}` after `{}` writes it", name(edge.from))
                            }
                            Hazard::WriteAfterRead => {
                                format!("writes `{b}` after `{}` reads it", name(edge.from))
                            }
                            Hazard::WriteAfterWrite => {
                                format!("writes `{b}` after `{}` does", name(edge.from))
                            }
                        }
                    }
                };
                path.push_str(&format!(" -> `{}` ({why})", name(edge.to)));
            }
            let closing = cycle.iter().filter_map(|&e| match edges[e].origin {
                EdgeOrigin::Explicit(i) => Some(i),
                EdgeOrigin::Inferred { .. } => None,
            });
            let loc = closing
                .max()
                .map_or(Loc::Node(edges[cycle[0]].from), Loc::Edge);
            self.diags.push(
                Diagnostic::new(loc, format!("this edge closes a cycle: {path}"))
                    .with_help("a graph must be acyclic: remove an explicit edge of this cycle"),
            );
        }
    }

    /// With no cycle: conflicting accesses are ordered (explicit-only mode), and graph-owned buffers are
    /// written before they are read.
    fn check_schedule(&mut self, edges: &[Edge]) -> Option<Schedule> {
        let pairs: Vec<(usize, usize)> = edges.iter().map(|e| (e.from, e.to)).collect();
        let is_host: Vec<bool> = self.graph.nodes.iter().map(|n| n.is_host()).collect();
        let schedule = schedule(self.graph.nodes.len(), &pairs, &is_host)?;
        let reach = Reachability::new(self.graph.nodes.len(), &pairs, &schedule.order);
        if self.graph.edge_mode == EdgeMode::ExplicitOnly {
            self.check_races(&reach);
        }
        self.check_owned_reads_follow_a_write(&reach);
        Some(schedule)
    }

    /// Explicit-only mode: two accesses to one buffer, at least one a write, need a path between their nodes.
    fn check_races(&mut self, reach: &Reachability) {
        for (b, buffer) in self.graph.buffers.iter().enumerate() {
            let users: Vec<(usize, usize, AccessMode)> = self
                .accesses
                .iter()
                .enumerate()
                .flat_map(|(n, list)| {
                    list.iter().enumerate().filter_map(move |(i, a)| {
                        a.filter(|a| a.buffer == b).map(|a| (n, i, a.mode))
                    })
                })
                .collect();
            for (x, &(n1, _, m1)) in users.iter().enumerate() {
                for &(n2, i2, m2) in &users[x + 1..] {
                    if n1 != n2 && (m1.writes() || m2.writes()) && !reach.ordered(n1, n2) {
                        let (a, b2) = (&self.graph.nodes[n1].name, &self.graph.nodes[n2].name);
                        self.diags.push(
                            Diagnostic::new(
                                Loc::Access { node: n2, index: i2 },
                                format!(
                                    "data race on `{}`: `{a}` {} it and `{b2}` {} it, and no path of edges orders them",
                                    buffer.name,
                                    verb(m1),
                                    verb(m2)
                                ),
                            )
                            .with_help(format!("add `{a} -> {b2};` (or `{b2} -> {a};`) to order them")),
                        );
                    }
                }
            }
        }
    }

    /// A read of a graph-owned buffer needs a node that wrote it earlier (a path from that writer).
    fn check_owned_reads_follow_a_write(&mut self, reach: &Reachability) {
        for (n, list) in self.accesses.iter().enumerate() {
            for (i, access) in list.iter().enumerate() {
                let Some(access) = access else { continue };
                let buffer = &self.graph.buffers[access.buffer];
                if buffer.role != Role::Owned || !access.mode.reads() {
                    continue;
                }
                let written_before = self.accesses.iter().enumerate().any(|(w, wl)| {
                    w != n
                        && wl
                            .iter()
                            .flatten()
                            .any(|a| a.buffer == access.buffer && a.mode.writes())
                        && reach.reaches(w, n)
                });
                if !written_before {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::Access { node: n, index: i },
                            format!(
                                "`{}` reads graph-owned buffer `{}`, but no node writes it before",
                                self.graph.nodes[n].name, buffer.name
                            ),
                        )
                        .with_help(format!(
                            "write `{}` in an earlier node, or bind it from outside (`= input` or `= inout`)",
                            buffer.name
                        )),
                    );
                }
            }
        }
    }

    /// Each kernel's WGSL, composed with its declarations, validates with naga and matches what the graph says
    /// of it: parameters it names exist, one compute entry point is chosen, and each binding is used as
    /// declared.
    fn check_kernels(&mut self) -> Vec<Option<CheckedKernel>> {
        let layout = self.params_layout();
        let params_struct = layout.wgsl_struct();
        let params_ok = self.param_types.iter().all(Option::is_some) && !self.badly_named_params;
        (0..self.graph.nodes.len())
            .map(|n| {
                let NodeKind::Kernel(kernel) = &self.graph.nodes[n].kind else { return None };
                let bindings: Option<Vec<BufferAccess>> = self.accesses[n].iter().copied().collect();
                let bindings = bindings?;
                if bindings.iter().any(|b| self.badly_named_buffers.contains(&b.buffer)) {
                    return None;
                }
                let names: Vec<&str> = kernel.accesses.iter().map(|a| a.binding.as_str()).collect();
                let types: Option<Vec<ValueType>> = bindings.iter().map(|b| self.buffer_types[b.buffer]).collect();
                let types = types?;
                let library = self.library_kernels[n];
                if matches!(kernel.source, KernelSource::Library(_)) && library.is_none() {
                    return None;
                }
                let (source, file) = match (&kernel.source, library) {
                    (KernelSource::Wgsl { text, file }, _) => (text.clone(), file.as_deref()),
                    (KernelSource::Library(_), Some(lib)) => (lib.source.to_string(), None),
                    (KernelSource::Library(_), None) => return None,
                };
                let mut unknown_params = self.check_param_uses(n, &source, file);
                for (i, arg) in kernel.args.iter().enumerate() {
                    for u in wgsl::param_uses(&arg.wgsl) {
                        if self.params.get(&u.name).is_none() {
                            unknown_params = true;
                            self.diags.push(unknown(Loc::KernelArg { node: n, index: i }, "parameter", &u.name, self.params.names()));
                        }
                    }
                }
                if unknown_params || !params_ok {
                    return None;
                }
                let declarations = wgsl::binding_declarations(
                    names.iter().zip(&bindings).zip(&types).map(|((name, b), t)| (*name, *t, b.mode)),
                );
                let args: Vec<(String, String, String)> = match library {
                    Some(lib) => lib
                        .args
                        .iter()
                        .filter_map(|a| {
                            let given = kernel.args.iter().find(|g| g.name == a.name)?;
                            Some((a.name.to_string(), a.ty.to_string(), given.wgsl.clone()))
                        })
                        .collect(),
                    None => Vec::new(),
                };
                let arg_refs: Vec<(&str, &str, &str)> =
                    args.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
                let composed =
                    wgsl::compose(&declarations, &params_struct, self.graph.params_storage, &arg_refs, &source);
                let reflection = match wgsl::validate(&composed.source) {
                    Ok(r) => r,
                    Err(e) => {
                        if library.is_none() && self.report_write_to_read(n, kernel, &names, &bindings, &types, &composed, &e, &params_struct, &source) {
                            return None;
                        }
                        self.report_wgsl_error(n, &composed, &e, file);
                        return None;
                    }
                };
                let entry_index = self.choose_entry_point(n, &reflection.entry_points, kernel.entry.as_deref())?;
                let detail = &reflection.details[entry_index];
                if self.check_kernel_resources(n, &composed, &reflection, &names) {
                    return None;
                }
                if detail.workgroup_size_overridden {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::Node(n),
                            format!(
                                "kernel `{}` takes its workgroup size from `override` constants, which the graph \
                                 needs to know at compile time to size its dispatches",
                                self.graph.nodes[n].name
                            ),
                        )
                        .with_help("write the sizes as literals or `const`s: `@workgroup_size(64)`"),
                    );
                    return None;
                }
                if library.is_none() {
                    self.check_binding_uses(n, &bindings, detail);
                }
                let dispatch = match kernel.dispatch {
                    DispatchSpec::Threads { dims } => CheckedDispatch::Threads { dims },
                    DispatchSpec::Workgroups { dims } => CheckedDispatch::Workgroups { dims },
                    DispatchSpec::Auto => match bindings.iter().find(|b| b.mode.writes()) {
                        Some(b) => CheckedDispatch::BufferLen(b.buffer),
                        None => {
                            self.diags.push(
                                Diagnostic::new(
                                    Loc::Node(n),
                                    format!("kernel `{}` writes no buffer, so its size cannot be inferred", self.graph.nodes[n].name),
                                )
                                .with_help("give it `threads(..)` or `workgroups(..)`"),
                            );
                            return None;
                        }
                    },
                };
                Some(CheckedKernel {
                    bindings,
                    declarations,
                    args,
                    source,
                    entry: reflection.entry_points[entry_index].clone(),
                    workgroup_size: detail.workgroup_size,
                    dispatch,
                    pointwise: library.is_some_and(|l| l.pointwise),
                    foldable: library.is_some(),
                })
            })
            .collect()
    }

    /// The graph provides every resource a kernel sees: its listed buffers and `params`. A kernel that
    /// declares its own `@group @binding` variable would bind something the graph knows nothing about.
    /// Returns whether one was found.
    fn check_kernel_resources(
        &mut self,
        n: usize,
        composed: &Composed,
        reflection: &wgsl::Reflection,
        generated: &[&str],
    ) -> bool {
        let mut found = false;
        for (name, range) in &reflection.resources {
            if generated.contains(&name.as_str()) || name == "params" {
                continue;
            }
            found = true;
            let loc = match range.as_ref().map(|r| composed.locate(r)) {
                Some((Segment::User, rel)) => Loc::Wgsl {
                    node: n,
                    range: rel,
                },
                _ => Loc::Node(n),
            };
            self.diags.push(
                Diagnostic::new(
                    loc,
                    format!("kernel `{}` declares its own resource `{name}`", self.graph.nodes[n].name),
                )
                .with_help(
                    "declare buffers in the graph's `buffers { .. }` and list them in the kernel's access list; \
                     the macro declares them for the kernel",
                ),
            );
        }
        found
    }

    /// `params.x` names a declared parameter. Returns whether an unknown one was found.
    fn check_param_uses(&mut self, n: usize, source: &str, file: Option<&str>) -> bool {
        let mut found = false;
        for u in wgsl::param_uses(source) {
            if self.params.get(&u.name).is_none() {
                found = true;
                let mut d = unknown(
                    Loc::Wgsl {
                        node: n,
                        range: u.range.clone(),
                    },
                    "parameter",
                    &u.name,
                    self.params.names(),
                );
                if let Some(path) = file {
                    d = d.with_note(snippet(source, &u.range, path));
                }
                self.diags.push(d);
            }
        }
        found
    }

    fn report_wgsl_error(
        &mut self,
        n: usize,
        composed: &Composed,
        e: &WgslError,
        file: Option<&str>,
    ) {
        let kernel = &self.graph.nodes[n].name;
        let (range, label) = e.labels.first().cloned().unwrap_or((0..0, String::new()));
        let (segment, rel) = composed.locate(&range);
        let loc = match segment {
            Segment::User => Loc::Wgsl {
                node: n,
                range: rel.clone(),
            },
            Segment::Arg(i) => self.arg_loc(n, i),
            Segment::Generated => Loc::KernelSource(n),
        };
        let mut message = format!("WGSL error in kernel `{kernel}`: {}", e.message);
        if !label.is_empty() && !e.message.contains(&label) {
            message.push_str(&format!(" ({label})"));
        }
        let mut d = Diagnostic::new(loc, message);
        if let Some(help) = self.undeclared_name_help(n, &e.message) {
            d = d.with_help(help);
        }
        if let (Segment::Arg(i), Some(lib)) = (&segment, self.library_kernels[n])
            && let Some(arg) = lib.args.get(*i)
        {
            d = d.with_help(format!(
                "argument `{}` of `kernels::{}` takes a `{}`",
                arg.name, lib.path, arg.ty
            ));
        }
        match (segment, file) {
            (Segment::User, Some(path)) => {
                d = d.with_note(snippet(&composed.source[composed.user_start..], &rel, path))
            }
            (Segment::Generated, _) => d = d.with_note(e.rendered.clone()),
            _ => {}
        }
        self.diags.push(d);
    }

    /// naga's "no definition in scope" for a name the graph declares: how to bring it into the kernel.
    fn undeclared_name_help(&self, n: usize, message: &str) -> Option<String> {
        let name = message
            .strip_prefix("no definition in scope for identifier: `")?
            .strip_suffix('`')?;
        let kernel = &self.graph.nodes[n].name;
        if self.buffers.get(name).is_some() {
            Some(format!(
                "`{name}` is a buffer of the graph, but a kernel sees only the buffers it lists: add `{name}: read` \
                 (or `write`, `read_write`) to `kernel {kernel}(..)`"
            ))
        } else if self.params.get(name).is_some() {
            Some(format!(
                "parameters are fields of `params`: write `params.{name}`"
            ))
        } else {
            None
        }
    }

    /// naga rejects a store to a `read` storage buffer with a message about pointers. When the kernel validates
    /// with its `read` buffers made writable and then writes one of them, say that instead, at the store.
    #[allow(
        clippy::too_many_arguments,
        reason = "one call site, all of it context for one message"
    )]
    fn report_write_to_read(
        &mut self,
        n: usize,
        kernel: &crate::ir::Kernel,
        names: &[&str],
        bindings: &[BufferAccess],
        types: &[ValueType],
        composed: &Composed,
        error: &WgslError,
        params_struct: &str,
        source: &str,
    ) -> bool {
        if !bindings.iter().any(|b| b.mode == AccessMode::Read) {
            return false;
        }
        let widened = wgsl::binding_declarations(
            names
                .iter()
                .zip(bindings)
                .zip(types)
                .map(|((name, _), t)| (*name, *t, AccessMode::ReadWrite)),
        );
        let retry = wgsl::compose(
            &widened,
            params_struct,
            self.graph.params_storage,
            &[],
            source,
        );
        let Ok(reflection) = wgsl::validate(&retry.source) else {
            return false;
        };
        let chosen = match &kernel.entry {
            Some(e) => reflection.entry_points.iter().position(|x| x == e),
            None => (reflection.entry_points.len() == 1).then_some(0),
        };
        let Some(detail) = chosen.map(|i| &reflection.details[i]) else {
            return false;
        };
        let written_reads: Vec<usize> = (0..bindings.len())
            .filter(|&i| bindings[i].mode == AccessMode::Read)
            .filter(|&i| {
                detail
                    .binding_uses
                    .iter()
                    .any(|(b, u)| *b as usize == i && u.write)
            })
            .collect();
        let Some(&first) = written_reads.first() else {
            return false;
        };
        let store = error.labels.first().map(|(r, _)| composed.locate(r));
        let loc = match store {
            Some((Segment::User, rel)) => Loc::Wgsl {
                node: n,
                range: rel,
            },
            _ => Loc::AccessMode {
                node: n,
                index: first,
            },
        };
        let name = names[first];
        self.diags.push(
            Diagnostic::new(
                loc,
                format!("kernel `{}` writes `{name}`, which it declares `read`", self.graph.nodes[n].name),
            )
            .with_help(format!("declare `{name}: read_write` (or `{name}: write` if the kernel overwrites it without reading)")),
        );
        true
    }

    /// The location of library argument `i` (in library order) as the user wrote it.
    fn arg_loc(&self, n: usize, i: usize) -> Loc {
        let NodeKind::Kernel(kernel) = &self.graph.nodes[n].kind else {
            return Loc::Node(n);
        };
        let name = self.library_kernels[n]
            .and_then(|l| l.args.get(i))
            .map(|a| a.name);
        kernel
            .args
            .iter()
            .position(|a| Some(a.name.as_str()) == name)
            .map_or(Loc::KernelSource(n), |index| Loc::KernelArg {
                node: n,
                index,
            })
    }

    /// Exactly one compute entry point, or the one `entry(..)` names.
    fn choose_entry_point(
        &mut self,
        n: usize,
        names: &[String],
        chosen: Option<&str>,
    ) -> Option<usize> {
        let kernel = &self.graph.nodes[n].name;
        match (chosen, names.len()) {
            (Some(name), _) => {
                let found = names.iter().position(|e| e == name);
                if found.is_none() {
                    let mut d = unknown(
                        Loc::KernelEntry(n),
                        "entry point",
                        name,
                        names.iter().map(String::as_str),
                    );
                    d.message = format!("kernel `{kernel}` has no compute entry point `{name}`");
                    self.diags.push(d);
                }
                found
            }
            (None, 1) => Some(0),
            (None, 0) => {
                self.diags.push(
                    Diagnostic::new(Loc::KernelSource(n), format!("kernel `{kernel}` has no `@compute` entry point"))
                        .with_help("add one, such as `@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) { .. }`"),
                );
                None
            }
            (None, _) => {
                let list = names
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.diags.push(
                    Diagnostic::new(
                        Loc::KernelSource(n),
                        format!("kernel `{kernel}` has several compute entry points ({list}) and does not say which to run"),
                    )
                    .with_help(format!("choose one with `entry({})`", names[0])),
                );
                None
            }
        }
    }

    /// The declared access matches the entry point's real use: edges are inferred from the declaration, so a
    /// declaration wider than the use orders nodes for nothing, and a narrower one hides a dependency.
    fn check_binding_uses(
        &mut self,
        n: usize,
        bindings: &[BufferAccess],
        detail: &wgsl::EntryPointDetail,
    ) {
        let kernel = &self.graph.nodes[n].name;
        for (i, b) in bindings.iter().enumerate() {
            let used = detail
                .binding_uses
                .iter()
                .find(|(index, _)| *index as usize == i)
                .map(|(_, u)| *u)
                .unwrap_or_default();
            let name = &self.graph.buffers[b.buffer].name;
            let loc = Loc::AccessMode { node: n, index: i };
            let problem = if !used.read && !used.write && !used.query {
                Some((
                    format!(
                        "kernel `{kernel}` declares `{name}` but its entry point never uses it"
                    ),
                    format!("remove `{name}` from the list"),
                ))
            } else if b.mode == AccessMode::Write && used.read {
                Some((
                    format!(
                        "kernel `{kernel}` reads `{name}`, which it declares `write` (overwrite without reading)"
                    ),
                    "declare it `read_write`".to_string(),
                ))
            } else if b.mode.writes() && !used.write {
                Some((
                    format!(
                        "kernel `{kernel}` never writes `{name}`, which it declares `{}`",
                        b.mode.keyword()
                    ),
                    "declare it `read`".to_string(),
                ))
            } else {
                None
            };
            if let Some((message, help)) = problem {
                self.diags
                    .push(Diagnostic::new(loc, message).with_help(help));
            }
        }
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
                NodeKind::Kernel(_) => kernel.map(CheckedNode::Kernel),
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

/// An unknown library binding or argument `name`: suggests the closest of the names not given yet (a name
/// already given is not what the user meant), else lists them all.
fn misspelt(
    loc: Loc,
    what: &str,
    message: String,
    name: &str,
    not_given: &[&str],
    all: &[&str],
) -> Diagnostic {
    let d = Diagnostic::new(loc, message);
    if let Some(best) = did_you_mean(name, not_given.iter().copied()) {
        return d.with_help(format!("did you mean `{best}`?"));
    }
    let list = |names: &[&str]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (all, not_given.is_empty()) {
        ([], _) => d.with_help(format!("it takes no {what}")),
        ([one], true) => d.with_help(format!("its only {what} is `{one}`, given already")),
        (_, true) => d.with_help(format!("its {what}s are {}, all given already", list(all))),
        (_, false) => d.with_help(format!(
            "its {what}s are {}; not given yet: {}",
            list(all),
            list(not_given)
        )),
    }
}

fn verb(mode: AccessMode) -> &'static str {
    match mode {
        AccessMode::Read => "reads",
        AccessMode::Write | AccessMode::ReadWrite => "writes",
    }
}

/// `path:line:column`, the line, and a caret under `range`: for WGSL that is not tokens in the user's file.
fn snippet(text: &str, range: &std::ops::Range<usize>, path: &str) -> String {
    let start = range.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line_no = text[..start].matches('\n').count() + 1;
    let column = text[line_start..start].chars().count() + 1;
    let width = text[start..range.end.clamp(start, line_end)]
        .chars()
        .count()
        .max(1);
    format!(
        "{path}:{line_no}:{column}\n  | {}\n  | {}{}",
        &text[line_start..line_end],
        " ".repeat(column - 1),
        "^".repeat(width)
    )
}
