//! Cycle detection: every strongly connected component with more than one node (or a self-loop) is a cycle,
//! reported with one concrete path through it.

use std::collections::VecDeque;

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::deps::Edge;

/// Each cycle as the indices (into `edges`) of the edges that walk it, in order.
pub fn find_cycles(node_count: usize, edges: &[Edge]) -> Vec<Vec<usize>> {
    let mut g = DiGraph::<(), usize>::with_capacity(node_count, edges.len());
    for _ in 0..node_count {
        g.add_node(());
    }
    for (i, e) in edges.iter().enumerate() {
        g.add_edge(NodeIndex::new(e.from), NodeIndex::new(e.to), i);
    }
    let mut cycles = Vec::new();
    for component in tarjan_scc(&g) {
        let start = component.iter().copied().min_by_key(|n| n.index());
        let Some(start) = start else { continue };
        let self_loop = g.edges_connecting(start, start).next().map(|e| *e.weight());
        if component.len() == 1 {
            cycles.extend(self_loop.map(|e| vec![e]));
            continue;
        }
        let mut in_component = vec![false; node_count];
        component
            .iter()
            .for_each(|n| in_component[n.index()] = true);
        cycles.extend(shortest_cycle_through(&g, start, &in_component));
    }
    cycles.sort();
    cycles
}

/// Breadth-first search from `start` back to itself inside one component: the shortest such walk.
fn shortest_cycle_through(
    g: &DiGraph<(), usize>,
    start: NodeIndex,
    in_component: &[bool],
) -> Option<Vec<usize>> {
    let mut came_by: Vec<Option<(NodeIndex, usize)>> = vec![None; g.node_count()];
    let mut queue = VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for e in g.edges(n) {
            use petgraph::visit::EdgeRef;
            let next = e.target();
            if next == start {
                let mut path = vec![*e.weight()];
                let mut at = n;
                while at != start {
                    let (prev, edge) = came_by[at.index()]?;
                    path.push(edge);
                    at = prev;
                }
                path.reverse();
                return Some(path);
            }
            if in_component[next.index()] && came_by[next.index()].is_none() {
                came_by[next.index()] = Some((n, *e.weight()));
                queue.push_back(next);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deps::EdgeOrigin;

    fn edges(pairs: &[(usize, usize)]) -> Vec<Edge> {
        pairs
            .iter()
            .enumerate()
            .map(|(i, &(from, to))| Edge {
                from,
                to,
                origin: EdgeOrigin::Explicit(i),
            })
            .collect()
    }

    #[test]
    fn reports_each_cycle_with_its_path() {
        // 0 -> 1 -> 2 -> 0 and, separately, 3 -> 4 -> 3.
        let e = edges(&[(0, 1), (1, 2), (2, 0), (3, 4), (4, 3), (2, 3)]);
        let cycles = find_cycles(5, &e);
        assert_eq!(cycles, vec![vec![0, 1, 2], vec![3, 4]]);
    }

    #[test]
    fn self_loops_are_cycles_and_dags_have_none() {
        assert_eq!(find_cycles(2, &edges(&[(0, 1), (1, 1)])), vec![vec![1]]);
        assert!(find_cycles(3, &edges(&[(0, 1), (1, 2), (0, 2)])).is_empty());
    }
}
