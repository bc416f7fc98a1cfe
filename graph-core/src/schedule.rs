//! The schedule: a deterministic topological order, topological levels, and GPU partitions split at host tasks.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A run of the graph's work on one side of the PCIe bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Partition {
    /// GPU nodes, level by level: one command buffer at replay.
    Gpu { levels: Vec<Vec<usize>> },
    /// Host tasks, in topological order, run after the partition before and before the one after.
    Host { nodes: Vec<usize> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Every node once, each after all of its predecessors; ties go to declaration order.
    pub order: Vec<usize>,
    /// `levels[k]`: the nodes whose longest path from a source has `k` edges. No path joins two of them.
    pub levels: Vec<Vec<usize>>,
    pub partitions: Vec<Partition>,
}

/// Schedules an acyclic graph; `None` if it has a cycle.
pub fn schedule(node_count: usize, edges: &[(usize, usize)], is_host: &[bool]) -> Option<Schedule> {
    let order = topological_order(node_count, edges)?;
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); node_count];
    for &(from, to) in edges {
        preds[to].push(from);
    }

    let mut level = vec![0usize; node_count];
    // Stages alternate: even stages are GPU partitions, odd ones host phases. A node goes to the earliest
    // stage of its kind after all of its predecessors.
    let mut stage = vec![0usize; node_count];
    for &n in &order {
        level[n] = preds[n].iter().map(|&p| level[p] + 1).max().unwrap_or(0);
        let earliest = preds[n].iter().map(|&p| stage[p]).max().unwrap_or(0);
        let wanted_parity = usize::from(is_host[n]);
        stage[n] = if earliest % 2 == wanted_parity {
            earliest
        } else {
            earliest + 1
        };
    }

    let mut levels: Vec<Vec<usize>> = vec![Vec::new(); level.iter().max().map_or(0, |m| m + 1)];
    for &n in &order {
        levels[level[n]].push(n);
    }
    for l in &mut levels {
        l.sort_unstable();
    }

    let stage_count = stage.iter().max().map_or(0, |m| m + 1);
    let mut partitions = Vec::new();
    for s in 0..stage_count {
        if s % 2 == 1 {
            let nodes: Vec<usize> = order.iter().copied().filter(|&n| stage[n] == s).collect();
            if !nodes.is_empty() {
                partitions.push(Partition::Host { nodes });
            }
        } else {
            let part_levels: Vec<Vec<usize>> = levels
                .iter()
                .map(|l| {
                    l.iter()
                        .copied()
                        .filter(|&n| stage[n] == s)
                        .collect::<Vec<_>>()
                })
                .filter(|l| !l.is_empty())
                .collect();
            if !part_levels.is_empty() {
                partitions.push(Partition::Gpu {
                    levels: part_levels,
                });
            }
        }
    }
    Some(Schedule {
        order,
        levels,
        partitions,
    })
}

/// Kahn's algorithm, taking the lowest-numbered ready node first so the order is reproducible.
pub fn topological_order(node_count: usize, edges: &[(usize, usize)]) -> Option<Vec<usize>> {
    let mut indegree = vec![0usize; node_count];
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); node_count];
    for &(from, to) in edges {
        indegree[to] += 1;
        succs[from].push(to);
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..node_count)
        .filter(|&n| indegree[n] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(node_count);
    while let Some(Reverse(n)) = ready.pop() {
        order.push(n);
        for &s in &succs[n] {
            indegree[s] -= 1;
            if indegree[s] == 0 {
                ready.push(Reverse(s));
            }
        }
    }
    (order.len() == node_count).then_some(order)
}

/// Which node reaches which, as one bit set per node.
#[derive(Debug, Clone)]
pub struct Reachability {
    words: usize,
    bits: Vec<u64>,
}

impl Reachability {
    /// For an acyclic graph, given a topological order.
    pub fn new(node_count: usize, edges: &[(usize, usize)], order: &[usize]) -> Self {
        let words = node_count.div_ceil(64);
        let mut bits = vec![0u64; words * node_count];
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); node_count];
        for &(from, to) in edges {
            succs[from].push(to);
        }
        for &n in order.iter().rev() {
            for &s in &succs[n] {
                bits[n * words + s / 64] |= 1 << (s % 64);
                for w in 0..words {
                    let v = bits[s * words + w];
                    bits[n * words + w] |= v;
                }
            }
        }
        Reachability { words, bits }
    }

    /// Whether a path of at least one edge leads from `from` to `to`.
    pub fn reaches(&self, from: usize, to: usize) -> bool {
        self.bits[from * self.words + to / 64] & (1 << (to % 64)) != 0
    }

    pub fn ordered(&self, a: usize, b: usize) -> bool {
        self.reaches(a, b) || self.reaches(b, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_group_independent_nodes() {
        // 0 -> 2, 1 -> 2, 2 -> 3, 1 -> 3
        let s = schedule(4, &[(0, 2), (1, 2), (2, 3), (1, 3)], &[false; 4]).expect("acyclic");
        assert_eq!(s.levels, vec![vec![0, 1], vec![2], vec![3]]);
        assert_eq!(s.order, vec![0, 1, 2, 3]);
        assert_eq!(
            s.partitions,
            vec![Partition::Gpu {
                levels: s.levels.clone()
            }]
        );
    }

    #[test]
    fn host_tasks_split_gpu_partitions() {
        // gpu 0 -> host 1 -> gpu 2; gpu 3 independent of all.
        let s = schedule(4, &[(0, 1), (1, 2)], &[false, true, false, false]).expect("acyclic");
        assert_eq!(
            s.partitions,
            vec![
                Partition::Gpu {
                    levels: vec![vec![0, 3]]
                },
                Partition::Host { nodes: vec![1] },
                Partition::Gpu {
                    levels: vec![vec![2]]
                },
            ]
        );
    }

    #[test]
    fn cycles_have_no_order() {
        assert!(topological_order(2, &[(0, 1), (1, 0)]).is_none());
    }

    #[test]
    fn reachability_is_transitive() {
        let r = Reachability::new(3, &[(0, 1), (1, 2)], &[0, 1, 2]);
        assert!(r.reaches(0, 2) && !r.reaches(2, 0) && !r.reaches(0, 0));
    }
}
