//! Dependency edges: inferred from buffer access in declaration order (as SYCL accessors do), plus explicit.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::ir::AccessMode;

/// A buffer access resolved to indices: what edge inference and hazard checks work on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferAccess {
    pub buffer: usize,
    pub mode: AccessMode,
}

/// The data hazard an inferred edge prevents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hazard {
    ReadAfterWrite,
    WriteAfterRead,
    WriteAfterWrite,
}

/// Why an edge exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeOrigin {
    /// The user's `a -> b`, by its index in the graph's explicit edges.
    Explicit(usize),
    Inferred {
        buffer: usize,
        hazard: Hazard,
    },
    /// `from` was a leaf when the barrier `to` was declared.
    Leaf,
}

/// `from` must finish before `to` starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub origin: EdgeOrigin,
}

/// The edges that order conflicting accesses in declaration order: each read waits for the last write of its
/// buffer, each write waits for the reads since the last write (or, with none, for the last write itself).
/// Edges implied through an intermediate node are not repeated.
pub fn infer_edges(buffer_count: usize, accesses: &[Vec<BufferAccess>]) -> Vec<Edge> {
    let mut last_writer: Vec<Option<usize>> = vec![None; buffer_count];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); buffer_count];
    let mut edges = Vec::new();
    for (node, list) in accesses.iter().enumerate() {
        for access in merge_by_buffer(list) {
            let b = access.buffer;
            let inferred = |from, hazard| Edge {
                from,
                to: node,
                origin: EdgeOrigin::Inferred { buffer: b, hazard },
            };
            if access.mode.reads()
                && let Some(w) = last_writer[b]
            {
                edges.push(inferred(w, Hazard::ReadAfterWrite));
            }
            if access.mode.writes() {
                let earlier_readers: Vec<usize> =
                    readers[b].iter().copied().filter(|&r| r != node).collect();
                if earlier_readers.is_empty() {
                    if let Some(w) = last_writer[b].filter(|_| !access.mode.reads()) {
                        edges.push(inferred(w, Hazard::WriteAfterWrite));
                    }
                } else {
                    edges.extend(
                        earlier_readers
                            .into_iter()
                            .map(|r| inferred(r, Hazard::WriteAfterRead)),
                    );
                }
                last_writer[b] = Some(node);
                readers[b].clear();
            } else {
                readers[b].push(node);
            }
        }
    }
    edges
}

/// One access per buffer: a node that reads and writes the same buffer through two names does both.
fn merge_by_buffer(list: &[BufferAccess]) -> Vec<BufferAccess> {
    let mut merged: Vec<BufferAccess> = Vec::with_capacity(list.len());
    for a in list {
        match merged.iter_mut().find(|m| m.buffer == a.buffer) {
            Some(m) if m.mode != a.mode => m.mode = AccessMode::ReadWrite,
            Some(_) => {}
            None => merged.push(*a),
        }
    }
    merged
}

/// Explicit edges first (so a pair that is both keeps the user's edge as its reason), then inferred ones;
/// each ordered pair once.
pub fn merge_edges(explicit: &[(usize, usize, usize)], inferred: Vec<Edge>) -> Vec<Edge> {
    let mut seen = HashSet::new();
    explicit
        .iter()
        .map(|&(index, from, to)| Edge {
            from,
            to,
            origin: EdgeOrigin::Explicit(index),
        })
        .chain(inferred)
        .filter(|e| seen.insert((e.from, e.to)))
        .collect()
}

/// `edges` with, for each barrier (in declaration order), an edge from every node declared before it that no
/// node declared before it depends on: SYCL's `depends_on_all_leaves`. An edge already there is kept as is.
pub fn add_leaf_edges(is_barrier: &[bool], mut edges: Vec<Edge>) -> Vec<Edge> {
    for (barrier, _) in is_barrier.iter().enumerate().filter(|(_, b)| **b) {
        let has_earlier_successor = |n: usize| edges.iter().any(|e| e.from == n && e.to < barrier);
        let leaves: Vec<usize> = (0..barrier)
            .filter(|&n| !has_earlier_successor(n))
            .collect();
        for from in leaves {
            if !edges.iter().any(|e| e.from == from && e.to == barrier) {
                edges.push(Edge {
                    from,
                    to: barrier,
                    origin: EdgeOrigin::Leaf,
                });
            }
        }
    }
    edges
}

/// `edges` with each edge that enters or leaves a group of nodes (a group of alternatives, a block) made an
/// edge to or from every member, so the group orders as one node; each ordered pair once. An edge between two
/// members of one group is kept when `keep_inside` (a block's own order), else dropped (alternatives, of which
/// only one runs).
pub fn spread_over_groups(edges: Vec<Edge>, groups: &[Vec<usize>], keep_inside: bool) -> Vec<Edge> {
    if groups.is_empty() {
        return edges;
    }
    let group_of = |n: usize| groups.iter().position(|g| g.contains(&n));
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(edges.len());
    for e in edges {
        let (gf, gt) = (group_of(e.from), group_of(e.to));
        if gf.is_some() && gf == gt {
            if keep_inside && seen.insert((e.from, e.to)) {
                out.push(e);
            }
            continue;
        }
        let members = |g: Option<usize>, n: usize| g.map_or_else(|| vec![n], |g| groups[g].clone());
        for &from in &members(gf, e.from) {
            for &to in &members(gt, e.to) {
                if seen.insert((from, to)) {
                    out.push(Edge { from, to, ..e });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccessMode::*;

    fn acc(buffer: usize, mode: AccessMode) -> BufferAccess {
        BufferAccess { buffer, mode }
    }

    fn pairs(edges: &[Edge]) -> Vec<(usize, usize)> {
        edges.iter().map(|e| (e.from, e.to)).collect()
    }

    #[test]
    fn read_after_write_write_after_read_and_write_after_write() {
        let nodes = vec![
            vec![acc(0, Write)], // 0 writes b0
            vec![acc(0, Read)],  // 1 reads b0: RAW 0->1
            vec![acc(0, Read)],  // 2 reads b0: RAW 0->2
            vec![acc(0, Write)], // 3 overwrites: WAR 1->3, 2->3
            vec![acc(0, Write)], // 4 overwrites: WAW 3->4
        ];
        let edges = infer_edges(1, &nodes);
        assert_eq!(pairs(&edges), vec![(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)]);
        assert_eq!(
            edges[3].origin,
            EdgeOrigin::Inferred {
                buffer: 0,
                hazard: Hazard::WriteAfterRead
            }
        );
        assert_eq!(
            edges[4].origin,
            EdgeOrigin::Inferred {
                buffer: 0,
                hazard: Hazard::WriteAfterWrite
            }
        );
    }

    #[test]
    fn read_write_depends_on_the_last_writer_only_once() {
        let nodes = vec![
            vec![acc(0, Write)],
            vec![acc(0, ReadWrite)],
            vec![acc(0, ReadWrite)],
        ];
        assert_eq!(pairs(&infer_edges(1, &nodes)), vec![(0, 1), (1, 2)]);
    }

    #[test]
    fn independent_buffers_give_no_edges() {
        let nodes = vec![
            vec![acc(0, Write)],
            vec![acc(1, Write)],
            vec![acc(0, Read), acc(1, Read)],
        ];
        assert_eq!(pairs(&infer_edges(2, &nodes)), vec![(0, 2), (1, 2)]);
    }

    #[test]
    fn explicit_edges_win_over_inferred_duplicates() {
        let inferred = vec![Edge {
            from: 0,
            to: 1,
            origin: EdgeOrigin::Inferred {
                buffer: 0,
                hazard: Hazard::ReadAfterWrite,
            },
        }];
        let merged = merge_edges(&[(0, 0, 1)], inferred);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].origin, EdgeOrigin::Explicit(0));
    }
}
