//! The graph's shape: cycles, data races in explicit-only mode, and reads of graph-owned buffers that no
//! earlier node wrote.

use super::{Checker, verb};
use crate::deps::{Edge, EdgeOrigin, Hazard};
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::{AccessMode, EdgeMode, NodeKind, Role};
use crate::schedule::{Reachability, Schedule, schedule};

/// Cycles with more steps than this are shown by their ends, so a cycle through thousands of nodes stays one
/// short message.
const LONG_CYCLE: usize = 6;

/// How much of a long cycle's node list the note shows: about three lines.
const NOTE_CHARS: usize = 300;

impl Checker<'_> {
    /// The graph is acyclic; each cycle is reported once, at its last explicit edge, with its path: whole when
    /// short, else its first and last steps, the count, and the nodes in a note a few lines long.
    pub(super) fn check_cycles(&mut self, edges: &[Edge]) {
        for cycle in crate::cycles::find_cycles(self.graph.nodes.len(), edges) {
            let name = |n: usize| self.graph.nodes[n].name.as_str();
            let step = |e: usize| {
                format!(
                    " -> `{}` ({})",
                    name(edges[e].to),
                    self.edge_reason(&edges[e])
                )
            };
            let mut path = format!("`{}`", name(edges[cycle[0]].from));
            let mut note = None;
            if cycle.len() <= LONG_CYCLE {
                cycle.iter().for_each(|&e| path.push_str(&step(e)));
            } else {
                path.push_str(&step(cycle[0]));
                path.push_str(&format!(" -> .. {} more nodes ..", cycle.len() - 2));
                let last = cycle[cycle.len() - 1];
                path.push_str(&format!(" -> `{}`", name(edges[last].from)));
                path.push_str(&step(last));
                let nodes = cycle.iter().map(|&e| name(edges[e].from));
                note = Some(format!(
                    "the cycle's nodes: {}",
                    wrap_names(nodes, cycle.len())
                ));
            }
            let closing = cycle.iter().filter_map(|&e| match edges[e].origin {
                EdgeOrigin::Explicit(i) => Some(i),
                EdgeOrigin::Inferred { .. } | EdgeOrigin::Leaf => None,
            });
            let loc = closing
                .max()
                .map_or(Loc::Node(edges[cycle[0]].from), Loc::Edge);
            let what = if cycle.len() <= LONG_CYCLE {
                "a cycle".to_string()
            } else {
                format!("a cycle through {} nodes", cycle.len())
            };
            let mut d = Diagnostic::new(loc, format!("this edge closes {what}: {path}"))
                .with_help("a graph must be acyclic: remove an explicit edge of this cycle");
            if let Some(note) = note {
                d = d.with_note(note);
            }
            self.diags.push(d);
        }
    }

    /// Why an edge exists, in words: "explicit edge", or the hazard on the buffer it orders.
    fn edge_reason(&self, edge: &Edge) -> String {
        let from = &self.graph.nodes[edge.from].name;
        match edge.origin {
            EdgeOrigin::Explicit(_) => "explicit edge".to_string(),
            EdgeOrigin::Leaf => format!("`{from}` was a leaf when the barrier was declared"),
            EdgeOrigin::Inferred { buffer, hazard } => {
                let b = &self.graph.buffers[buffer].name;
                match hazard {
                    Hazard::ReadAfterWrite => format!("reads `{b}` after `{from}` writes it"),
                    Hazard::WriteAfterRead => format!("writes `{b}` after `{from}` reads it"),
                    Hazard::WriteAfterWrite => format!("writes `{b}` after `{from}` does"),
                }
            }
        }
    }

    /// With no cycle: conflicting accesses are ordered (explicit-only mode), and graph-owned buffers are
    /// written before they are read.
    pub(super) fn check_schedule(&mut self, edges: &[Edge]) -> Option<Schedule> {
        let pairs: Vec<(usize, usize)> = edges.iter().map(|e| (e.from, e.to)).collect();
        let is_host: Vec<bool> = self.graph.nodes.iter().map(|n| n.is_host()).collect();
        let schedule = schedule(self.graph.nodes.len(), &pairs, &is_host)?;
        let reach = Reachability::new(self.graph.nodes.len(), &pairs, &schedule.order);
        if self.graph.edge_mode == EdgeMode::ExplicitOnly {
            self.check_races(&reach);
        }
        self.check_owned_reads_follow_a_write(&reach);
        self.check_indirect_counts_are_written(&reach);
        self.check_flags_are_set(&reach);
        Some(schedule)
    }

    /// Whether a node other than the `skip`ped ones writes `buffer` and has a path to `node`.
    pub(super) fn written_before(
        &self,
        buffer: usize,
        node: usize,
        reach: &Reachability,
        skip: impl Fn(usize) -> bool,
    ) -> bool {
        self.accesses.iter().enumerate().any(|(w, list)| {
            !skip(w)
                && list
                    .iter()
                    .flatten()
                    .any(|a| a.buffer == buffer && a.mode.writes())
                && reach.reaches(w, node)
        })
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
                    if n1 != n2
                        && (m1.writes() || m2.writes())
                        && !reach.ordered(n1, n2)
                        && !self.alternatives_of_one_group(n1, n2)
                    {
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

    /// A read of a graph-owned buffer, and a readback of any buffer, needs a node that wrote it earlier (a path
    /// from that writer): a readback returns what the graph computed. A sampler is made whole at bake, and
    /// only read.
    fn check_owned_reads_follow_a_write(&mut self, reach: &Reachability) {
        for (n, list) in self.accesses.iter().enumerate() {
            let is_readback = matches!(self.graph.nodes[n].kind, NodeKind::Readback { .. });
            for (i, access) in list.iter().enumerate() {
                let Some(access) = access else { continue };
                // Even one whose type was refused: it is still no buffer.
                let declared = &self.graph.buffers[access.buffer].elem;
                if crate::texture::SamplerType::is_sampler_text(declared) {
                    continue;
                }
                let buffer = &self.graph.buffers[access.buffer];
                if (buffer.role != Role::Owned && !is_readback) || !access.mode.reads() {
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
                if !written_before && is_readback && buffer.role != Role::Owned {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::Access { node: n, index: i },
                            format!(
                                "readback `{}` reads `{}`, but no node writes it before",
                                self.graph.nodes[n].name, buffer.name
                            ),
                        )
                        .with_help(format!(
                            "a readback returns what the graph computed: write `{}` in an earlier node, or \
                             read it with `Buffer::read`",
                            buffer.name
                        )),
                    );
                } else if !written_before {
                    self.diags.push(
                        Diagnostic::new(
                            Loc::Access { node: n, index: i },
                            format!(
                                "`{}` reads graph-owned {} `{}`, but no node writes it before",
                                self.graph.nodes[n].name,
                                match self.textures[access.buffer] {
                                    Some(_) => "texture",
                                    None => "buffer",
                                },
                                buffer.name
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
}

/// `a`, `b`, .. as one text of at most about [`NOTE_CHARS`] characters, ending with how many were left out.
fn wrap_names<'a>(names: impl Iterator<Item = &'a str>, count: usize) -> String {
    let mut text = String::new();
    for (shown, name) in names.enumerate() {
        let item = format!("`{name}`");
        if text.len() + item.len() > NOTE_CHARS {
            text.push_str(&format!(" .. and {} more", count - shown));
            return text;
        }
        if shown > 0 {
            text.push_str(" -> ");
        }
        text.push_str(&item);
    }
    text
}
