//! A description drawn as Graphviz DOT (SYCL's `print_graph`): nodes with their kind and name, edges solid
//! when written by the user and dashed when inferred (labelled with the hazard and the buffer), one rank per
//! topological level, and the external buffers as notes beside the nodes that touch them.

use std::fmt::Write;

use crate::deps::Hazard;
use crate::desc::{DispatchDesc, EdgeOriginDesc, GraphDesc, OpDesc, SizeDesc};
use crate::ir::AccessMode;

/// How much of the graph to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// Nodes, edges with their reasons, levels, external buffers.
    #[default]
    Plain,
    /// Also each node's accesses and dispatch size, and the parameters.
    Verbose,
}

impl GraphDesc {
    /// The graph in DOT; `dot -Tsvg` draws it.
    pub fn to_dot(&self, detail: Detail) -> String {
        self.to_dot_annotated(detail, &|_| None)
    }

    /// The graph in DOT with a line of `note` under the label of each node it has one for (by the node's
    /// name as drawn: a flattened child's `node.child`), such as a profile's GPU times.
    pub fn to_dot_annotated(
        &self,
        detail: Detail,
        note: &dyn Fn(&str) -> Option<String>,
    ) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write_dot(&mut out, detail, note);
        out
    }

    fn write_dot(
        &self,
        out: &mut String,
        detail: Detail,
        note: &dyn Fn(&str) -> Option<String>,
    ) -> std::fmt::Result {
        // Subgraphs are drawn flattened, as the replay runs them, each child in a cluster.
        match crate::flatten::flatten(self) {
            Ok(flat) if matches!(flat, std::borrow::Cow::Owned(_)) => {
                flat.write_flat_dot(out, detail, Some(self), note)
            }
            _ => self.write_flat_dot(out, detail, None, note),
        }
    }

    /// Draws `self`; `unflattened` is the description it was flattened from, if it was.
    fn write_flat_dot(
        &self,
        out: &mut String,
        detail: Detail,
        unflattened: Option<&GraphDesc>,
        note: &dyn Fn(&str) -> Option<String>,
    ) -> std::fmt::Result {
        writeln!(out, "digraph {} {{", quote(&self.name))?;
        writeln!(out, "  rankdir=TB;")?;
        writeln!(
            out,
            "  node [fontname=\"Helvetica\", fontsize=11]; edge [fontname=\"Helvetica\", fontsize=9];"
        )?;
        writeln!(out, "  label={};", quote(&self.title(detail)))?;
        for (n, node) in self.nodes.iter().enumerate() {
            // A flattened subgraph node is its child's entry: drawn as the subgraph it was.
            let op = unflattened
                .and_then(|u| u.nodes.get(n))
                .map_or(&node.op, |u| &u.op);
            let (shape, color) = match op {
                OpDesc::Kernel(_) => ("box", "#dbe9f6"),
                OpDesc::Copy { .. } => ("cds", "#e8f3dc"),
                OpDesc::Upload { .. } => ("invhouse", "#f3e8dc"),
                OpDesc::Readback { .. } => ("house", "#f3e8dc"),
                OpDesc::Host { .. } => ("ellipse", "#fbe6c8"),
                OpDesc::Interop { .. } => ("component", "#f3e1f7"),
                OpDesc::Empty => ("diamond", "#ffffff"),
                OpDesc::Subgraph { .. } => ("box3d", "#ffffff"),
            };
            let mut label = format!("{}\n{}", op.kind(), node.name);
            if let OpDesc::Kernel(k) = &node.op
                && let Some(a) = &k.alternative
            {
                label.push_str(&format!("\nchoice {} of {}", a.choice, a.group));
            }
            if detail == Detail::Verbose {
                label.push_str(&self.node_details(&node.op));
            }
            if let Some(note) = note(&node.name) {
                label.push_str(&format!("\n{note}"));
            }
            writeln!(
                out,
                "  n{n} [label={}, shape={shape}, style=filled, fillcolor=\"{color}\"];",
                quote(&label)
            )?;
        }
        let clustered = match unflattened {
            Some(unflattened) => self.write_clusters(out, unflattened)?,
            None => Vec::new(),
        };
        // Levels as ranks, but for nodes in a cluster: dot draws no cluster around a node a rank also holds.
        for level in self.levels.iter() {
            let members: Vec<String> = level
                .iter()
                .filter(|n| !clustered.contains(n))
                .map(|n| format!("n{n};"))
                .collect();
            if !members.is_empty() {
                writeln!(out, "  {{ rank=same; {} }}", members.join(" "))?;
            }
        }
        for edge in self.edges.iter() {
            let attrs = match edge.origin {
                EdgeOriginDesc::Explicit
                    if unflattened
                        .and_then(|u| u.nodes.get(edge.from as usize))
                        .is_some_and(|u| matches!(u.op, OpDesc::Subgraph { .. })) =>
                {
                    "label=\"into the subgraph\", style=solid".to_string()
                }
                EdgeOriginDesc::Explicit => "label=\"explicit\", style=solid".to_string(),
                EdgeOriginDesc::Leaf => "label=\"leaf before barrier\", style=dotted".to_string(),
                EdgeOriginDesc::Inferred { buffer, hazard } => format!(
                    "label={}, style=dashed",
                    quote(&format!(
                        "{} of {}",
                        hazard_words(hazard),
                        self.buffer_name(buffer)
                    ))
                ),
            };
            writeln!(out, "  n{} -> n{} [{attrs}];", edge.from, edge.to)?;
        }
        for (b, buffer) in self.buffers.iter().enumerate() {
            if !buffer.role.is_external() {
                continue;
            }
            let ty = match (&buffer.texture, buffer.len) {
                (Some(texture), _) => texture.to_string(),
                (None, Some(n)) => format!("[{}; {n}]", buffer.elem),
                (None, None) => format!("[{}]", buffer.elem),
            };
            writeln!(
                out,
                "  b{b} [label={}, shape=note, style=filled, fillcolor=\"#eeeeee\"];",
                quote(&format!("{}: {ty}\n{}", buffer.name, buffer.role.keyword()))
            )?;
            for (n, node) in self.nodes.iter().enumerate() {
                for mode in self.modes_of(&node.op, b as u32) {
                    if mode.writes() {
                        writeln!(out, "  n{n} -> b{b} [style=dotted, arrowhead=empty];")?;
                    }
                    if mode.reads() {
                        writeln!(out, "  b{b} -> n{n} [style=dotted, arrowhead=empty];")?;
                    }
                }
            }
        }
        writeln!(out, "}}")
    }

    /// One cluster per subgraph, holding its entry node and its child's nodes (named `subgraph.node`); returns
    /// the nodes drawn in one.
    fn write_clusters(
        &self,
        out: &mut String,
        unflattened: &GraphDesc,
    ) -> Result<Vec<u32>, std::fmt::Error> {
        let mut clusters: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
        for (n, node) in self.nodes.iter().enumerate() {
            let cluster = match unflattened.nodes.get(n) {
                Some(u) if matches!(u.op, OpDesc::Subgraph { .. }) => Some(&*node.name),
                Some(_) => None,
                None => node.name.rsplit_once('.').map(|(prefix, _)| prefix),
            };
            if let Some(cluster) = cluster {
                clusters.entry(cluster).or_default().push(n);
            }
        }
        for (c, (name, members)) in clusters.iter().enumerate() {
            let members: Vec<String> = members.iter().map(|n| format!("n{n};")).collect();
            writeln!(
                out,
                "  subgraph cluster_{c} {{ label={}; style=rounded; {} }}",
                quote(&format!("subgraph {name}")),
                members.join(" ")
            )?;
        }
        Ok(clusters.values().flatten().map(|&n| n as u32).collect())
    }

    fn title(&self, detail: Detail) -> String {
        let mut title = format!("graph {}", self.name);
        if detail == Detail::Verbose && !self.params.fields.is_empty() {
            let params: Vec<String> = self
                .params
                .fields
                .iter()
                .map(|f| format!("{}: {}", f.name, f.ty))
                .collect();
            let _ = write!(title, "\nparams {{ {} }}", params.join(", "));
        }
        // Which graph-owned buffers share memory, as bake plans it on a device of WebGPU's defaults.
        if detail == Detail::Verbose
            && let Some((plan, names)) = crate::memory::declared_plan(self)
            && plan.unaliased_bytes > 0
        {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            for line in plan.summary(&names) {
                let _ = write!(title, "\n{}", line.trim_start());
            }
        }
        title
    }

    fn node_details(&self, op: &OpDesc) -> String {
        let mut text = String::new();
        let accesses: Vec<(u32, AccessMode)> = match op {
            OpDesc::Kernel(k) => k.bindings.iter().map(|a| (a.buffer, a.mode)).collect(),
            OpDesc::Copy { src, dst, .. } => {
                vec![(*src, AccessMode::Read), (*dst, AccessMode::Write)]
            }
            OpDesc::Upload { buffer, .. } => vec![(*buffer, AccessMode::Write)],
            OpDesc::Readback { buffer, .. } => vec![(*buffer, AccessMode::Read)],
            OpDesc::Host { accesses } | OpDesc::Interop { accesses } => {
                accesses.iter().map(|a| (a.buffer, a.mode)).collect()
            }
            OpDesc::Subgraph { bindings, .. } => {
                bindings.iter().map(|b| (b.buffer, b.mode)).collect()
            }
            OpDesc::Empty => Vec::new(),
        };
        for (buffer, mode) in accesses {
            let _ = write!(text, "\n{}: {}", self.buffer_name(buffer), mode.keyword());
        }
        let range = |b: u32, r: &crate::desc::RangeDesc| {
            format!("{}[{}..{}]", self.buffer_name(b), r.start.text, r.end.text)
        };
        match op {
            OpDesc::Copy {
                src,
                dst,
                src_range,
                dst_range,
            } => {
                let (from, into) = (range(*src, src_range), range(*dst, dst_range));
                let _ = write!(text, "\n{from} -> {into}");
            }
            OpDesc::Upload { buffer, range: r } | OpDesc::Readback { buffer, range: r } => {
                let _ = write!(text, "\n{}", range(*buffer, r));
            }
            OpDesc::Kernel(k) => {
                if let (Some(r), Some(target)) = (&k.range, k.bindings.first()) {
                    let _ = write!(text, "\nfills {}", range(target.buffer, r));
                }
            }
            _ => {}
        }
        if let OpDesc::Kernel(k) = op {
            let size = match &k.dispatch {
                DispatchDesc::BufferLen(b) => {
                    format!("one per element of {}", self.buffer_name(*b))
                }
                DispatchDesc::Threads(dims) => format!("threads({})", dims_text(dims)),
                DispatchDesc::Workgroups(dims) => format!("workgroups({})", dims_text(dims)),
                DispatchDesc::Indirect(b) => {
                    format!("workgroups(indirect: {})", self.buffer_name(*b))
                }
            };
            // 0: an axis an `override` sizes, known at bake.
            let [x, y, z] = k.workgroup_size.map(|d| {
                if d == 0 {
                    "override".to_string()
                } else {
                    d.to_string()
                }
            });
            let _ = write!(text, "\n{size}\n@workgroup_size({x}, {y}, {z})");
        }
        text
    }

    /// How `op` touches buffer `b`, once per access.
    fn modes_of(&self, op: &OpDesc, b: u32) -> Vec<AccessMode> {
        match op {
            OpDesc::Kernel(k) => k
                .bindings
                .iter()
                .filter(|a| a.buffer == b)
                .map(|a| a.mode)
                .collect(),
            OpDesc::Upload { buffer, .. } if *buffer == b => vec![AccessMode::Write],
            OpDesc::Readback { buffer, .. } if *buffer == b => vec![AccessMode::Read],
            OpDesc::Upload { .. } | OpDesc::Readback { .. } => Vec::new(),
            OpDesc::Copy { src, dst, .. } => {
                let mut modes = Vec::new();
                if *src == b {
                    modes.push(AccessMode::Read);
                }
                if *dst == b {
                    modes.push(AccessMode::Write);
                }
                modes
            }
            OpDesc::Host { accesses } | OpDesc::Interop { accesses } => accesses
                .iter()
                .filter(|a| a.buffer == b)
                .map(|a| a.mode)
                .collect(),
            OpDesc::Subgraph { bindings, .. } => bindings
                .iter()
                .filter(|a| a.buffer == b)
                .map(|a| a.mode)
                .collect(),
            OpDesc::Empty => Vec::new(),
        }
    }

    fn buffer_name(&self, b: u32) -> String {
        self.buffers
            .get(b as usize)
            .map_or_else(|| format!("buffer {b}"), |buffer| buffer.name.to_string())
    }
}

/// The dimensions given, leaving out trailing ones the user did not write.
fn dims_text(dims: &[SizeDesc; 3]) -> String {
    let mut given: Vec<&str> = dims.iter().map(|d| &*d.text).collect();
    while given.len() > 1 && given.last().is_some_and(|t| *t == SizeDesc::ONE.text) {
        given.pop();
    }
    given.join(", ")
}

fn hazard_words(hazard: Hazard) -> &'static str {
    match hazard {
        Hazard::ReadAfterWrite => "read-after-write",
        Hazard::WriteAfterRead => "write-after-read",
        Hazard::WriteAfterWrite => "write-after-write",
    }
}

/// A DOT string literal.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
