//! Property tests of the graph algorithms on random graphs: schedule, cycles, edge inference, reachability,
//! and the race and owned-buffer checks that rest on them.

#![forbid(unsafe_code)]

use std::collections::BTreeSet;

use graph_core::check;
use graph_core::cycles::find_cycles;
use graph_core::deps::{BufferAccess, Edge, EdgeOrigin, Hazard, infer_edges};
use graph_core::ir::{
    Access, AccessMode, Buffer, EdgeMode, ExplicitEdge, Graph, Node, NodeKind, Role,
};
use graph_core::library::Library;
use graph_core::schedule::{Partition, Reachability, schedule, topological_order};
use petgraph::algo::{is_cyclic_directed, kosaraju_scc};
use petgraph::graph::{DiGraph, NodeIndex};
use proptest::prelude::*;

const CASES: u32 = 256;

// ---------------------------------------------------------------------------------------------------------
// Strategies.

/// A random DAG: `n` nodes and edges that go forward in a random order of the nodes (so the declaration
/// order is not a topological order), duplicates included.
fn dag(max_nodes: usize) -> impl Strategy<Value = (usize, Vec<(usize, usize)>)> {
    (1..=max_nodes)
        .prop_flat_map(|n| {
            (
                Just(n),
                prop::collection::vec((0..n, 0..n), 0..=3 * n),
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
            )
        })
        .prop_map(|(n, pairs, rank)| {
            let edges = pairs
                .into_iter()
                .filter(|(a, b)| a != b)
                .map(|(a, b)| (rank[a.min(b)], rank[a.max(b)]))
                .collect();
            (n, edges)
        })
}

/// A random directed graph, self-loops and cycles included.
fn digraph(max_nodes: usize) -> impl Strategy<Value = (usize, Vec<(usize, usize)>)> {
    (1..=max_nodes).prop_flat_map(|n| (Just(n), prop::collection::vec((0..n, 0..n), 0..=2 * n)))
}

fn mode() -> impl Strategy<Value = AccessMode> {
    prop_oneof![
        Just(AccessMode::Read),
        Just(AccessMode::Write),
        Just(AccessMode::ReadWrite)
    ]
}

/// `(buffer_count, per node: its accesses)`; a node may name a buffer more than once.
fn node_accesses(
    max_nodes: usize,
    max_buffers: usize,
) -> impl Strategy<Value = (usize, Vec<Vec<BufferAccess>>)> {
    (1..=max_buffers).prop_flat_map(move |buffers| {
        let access = (0..buffers, mode()).prop_map(|(buffer, mode)| BufferAccess { buffer, mode });
        (
            Just(buffers),
            prop::collection::vec(prop::collection::vec(access, 0..=4), 1..=max_nodes),
        )
    })
}

/// Like [`node_accesses`], each buffer at most once per node (as the checks require).
fn distinct_node_accesses(
    max_nodes: usize,
    max_buffers: usize,
) -> impl Strategy<Value = (usize, Vec<Vec<BufferAccess>>)> {
    node_accesses(max_nodes, max_buffers).prop_map(|(buffers, nodes)| {
        let nodes = nodes
            .into_iter()
            .map(|list| {
                let mut seen = BTreeSet::new();
                list.into_iter().filter(|a| seen.insert(a.buffer)).collect()
            })
            .collect();
        (buffers, nodes)
    })
}

// ---------------------------------------------------------------------------------------------------------
// Oracles.

fn successors(n: usize, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut succs = vec![Vec::new(); n];
    for &(from, to) in edges {
        succs[from].push(to);
    }
    succs
}

/// `reach[a][b]`: a path of at least one edge leads from `a` to `b`, by depth-first search from each node.
fn naive_reachability(n: usize, edges: &[(usize, usize)]) -> Vec<Vec<bool>> {
    let succs = successors(n, edges);
    (0..n)
        .map(|start| {
            let mut seen = vec![false; n];
            let mut stack: Vec<usize> = succs[start].clone();
            while let Some(v) = stack.pop() {
                if !seen[v] {
                    seen[v] = true;
                    stack.extend(&succs[v]);
                }
            }
            seen
        })
        .collect()
}

fn petgraph_of(n: usize, edges: &[(usize, usize)]) -> DiGraph<(), ()> {
    let mut g = DiGraph::new();
    for _ in 0..n {
        g.add_node(());
    }
    for &(a, b) in edges {
        g.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
    }
    g
}

fn explicit_edges(pairs: &[(usize, usize)]) -> Vec<Edge> {
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

/// Per node and buffer: (reads, writes), merging every access of the node to the buffer.
fn touches(buffers: usize, nodes: &[Vec<BufferAccess>]) -> Vec<Vec<(bool, bool)>> {
    nodes
        .iter()
        .map(|list| {
            let mut t = vec![(false, false); buffers];
            for a in list {
                t[a.buffer].0 |= a.mode.reads();
                t[a.buffer].1 |= a.mode.writes();
            }
            t
        })
        .collect()
}

/// Every `(i, j, buffer)` with `i < j` where nodes `i` and `j` both touch `buffer` and at least one writes it.
fn conflicts(buffers: usize, nodes: &[Vec<BufferAccess>]) -> Vec<(usize, usize, usize)> {
    let t = touches(buffers, nodes);
    let mut out = Vec::new();
    for (i, ti) in t.iter().enumerate() {
        for (j, tj) in t.iter().enumerate().skip(i + 1) {
            for (b, (&(ri, wi), &(rj, wj))) in ti.iter().zip(tj).enumerate() {
                if (ri || wi) && (rj || wj) && (wi || wj) {
                    out.push((i, j, b));
                }
            }
        }
    }
    out
}

/// A graph of host nodes `n0, n1, ..` over buffers `b0, b1, ..` of `role`.
fn host_graph(
    buffers: usize,
    nodes: &[Vec<BufferAccess>],
    role: Role,
    edge_mode: EdgeMode,
    edges: &[(usize, usize)],
) -> Graph {
    Graph {
        name: "random".into(),
        params: vec![],
        buffers: (0..buffers)
            .map(|b| Buffer {
                name: format!("b{b}"),
                elem: "f32".into(),
                len: Some(64),
                role,
            })
            .collect(),
        nodes: nodes
            .iter()
            .enumerate()
            .map(|(n, list)| Node {
                name: format!("n{n}"),
                kind: NodeKind::Host {
                    accesses: list
                        .iter()
                        .map(|a| Access {
                            binding: format!("b{}", a.buffer),
                            buffer: format!("b{}", a.buffer),
                            mode: a.mode,
                        })
                        .collect(),
                },
            })
            .collect(),
        edges: edges
            .iter()
            .map(|&(a, b)| ExplicitEdge {
                from: format!("n{a}"),
                to: format!("n{b}"),
            })
            .collect(),
        edge_mode,
        params_storage: Default::default(),
        workgroup_limits: Default::default(),
        no_fusion: Vec::new(),
        no_alias: Vec::new(),
        on: Vec::new(),
        alternatives: Vec::new(),
        blocks: Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// The order holds every node once, after its predecessors; levels are longest-path depths, so every edge
    /// climbs at least one level and no path joins two nodes of one level.
    #[test]
    fn schedule_respects_every_edge(
        (n, edges) in dag(40),
        host_bits in prop::collection::vec(any::<bool>(), 40),
    ) {
        let is_host = &host_bits[..n];
        let s = schedule(n, &edges, is_host).expect("a DAG has a schedule");

        let mut sorted = s.order.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sorted, (0..n).collect::<Vec<_>>());
        prop_assert_eq!(Some(s.order.clone()), topological_order(n, &edges));
        let mut position = vec![0; n];
        for (i, &v) in s.order.iter().enumerate() {
            position[v] = i;
        }
        for &(a, b) in &edges {
            prop_assert!(position[a] < position[b], "order puts {b} before {a}");
        }

        let mut level = vec![usize::MAX; n];
        for (k, nodes) in s.levels.iter().enumerate() {
            prop_assert!(!nodes.is_empty(), "level {k} is empty");
            for &v in nodes {
                prop_assert_eq!(level[v], usize::MAX, "node {} is in two levels", v);
                level[v] = k;
            }
        }
        prop_assert!(level.iter().all(|&l| l != usize::MAX), "a node has no level");
        for &(a, b) in &edges {
            prop_assert!(level[a] < level[b], "edge {a} -> {b} does not climb: {:?}", s.levels);
        }
        // The level is the longest path from a source.
        let mut longest = vec![0usize; n];
        for &v in &s.order {
            for &(a, b) in &edges {
                if b == v {
                    longest[v] = longest[v].max(longest[a] + 1);
                }
            }
        }
        prop_assert_eq!(&level, &longest);
        let reach = naive_reachability(n, &edges);
        for nodes in &s.levels {
            for &u in nodes {
                for &v in nodes {
                    prop_assert!(!reach[u][v], "{u} reaches {v} within one level");
                }
            }
        }
    }

    /// Partitions hold each node once, alternate between GPU and host, hold only their kind of node, and keep
    /// every edge going forward (across partitions, or across levels / order within one).
    #[test]
    fn partitions_split_at_host_tasks_and_respect_every_edge(
        (n, edges) in dag(40),
        host_bits in prop::collection::vec(any::<bool>(), 40),
    ) {
        let is_host = &host_bits[..n];
        let s = schedule(n, &edges, is_host).expect("a DAG has a schedule");
        // (partition, position inside it: GPU level index or host order index)
        let mut place = vec![None; n];
        for (p, partition) in s.partitions.iter().enumerate() {
            match partition {
                Partition::Gpu { levels } => {
                    prop_assert!(!levels.is_empty());
                    for (k, nodes) in levels.iter().enumerate() {
                        prop_assert!(!nodes.is_empty());
                        for &v in nodes {
                            prop_assert!(!is_host[v], "host node {v} in a GPU partition");
                            prop_assert!(place[v].is_none(), "node {v} placed twice");
                            place[v] = Some((p, k));
                        }
                    }
                }
                Partition::Host { nodes } => {
                    prop_assert!(!nodes.is_empty());
                    for (k, &v) in nodes.iter().enumerate() {
                        prop_assert!(is_host[v], "GPU node {v} in a host partition");
                        prop_assert!(place[v].is_none(), "node {v} placed twice");
                        place[v] = Some((p, k));
                    }
                }
            }
        }
        for pair in s.partitions.windows(2) {
            prop_assert_ne!(
                matches!(pair[0], Partition::Gpu { .. }),
                matches!(pair[1], Partition::Gpu { .. }),
                "two partitions of one kind in a row"
            );
        }
        let place: Vec<(usize, usize)> = place
            .into_iter()
            .map(|p| p.expect("every node is placed"))
            .collect();
        for &(a, b) in &edges {
            prop_assert!(place[a] < place[b], "edge {a} -> {b} goes back: {:?}", s.partitions);
        }
    }

    /// `find_cycles` finds a cycle exactly when petgraph does; each one is a closed walk over the given edges
    /// that visits no node twice, one per strongly connected component that has a cycle.
    #[test]
    fn find_cycles_agrees_with_petgraph(
        (n, pairs) in prop_oneof![dag(30), digraph(30)],
    ) {
        let edges = explicit_edges(&pairs);
        let cycles = find_cycles(n, &edges);
        let g = petgraph_of(n, &pairs);
        prop_assert_eq!(!cycles.is_empty(), is_cyclic_directed(&g), "cycles: {:?}", cycles);
        prop_assert_eq!(cycles.is_empty(), topological_order(n, &pairs).is_some());

        let mut covered = BTreeSet::new();
        for cycle in &cycles {
            prop_assert!(!cycle.is_empty());
            let walk: Vec<Edge> = cycle.iter().map(|&e| edges[e]).collect();
            for (k, e) in walk.iter().enumerate() {
                let next = walk[(k + 1) % walk.len()];
                prop_assert_eq!(e.to, next.from, "cycle {:?} is not a walk", cycle);
            }
            let nodes: BTreeSet<usize> = walk.iter().map(|e| e.from).collect();
            prop_assert_eq!(nodes.len(), walk.len(), "cycle {:?} repeats a node", cycle);
            for v in nodes {
                prop_assert!(covered.insert(v), "node {v} is on two reported cycles");
            }
        }
        let cyclic_components = kosaraju_scc(&g)
            .into_iter()
            .filter(|c| c.len() > 1 || pairs.contains(&(c[0].index(), c[0].index())))
            .count();
        prop_assert_eq!(cycles.len(), cyclic_components);
    }

    /// Every pair of conflicting accesses (one buffer, two nodes, at least one write) is ordered by a path of
    /// inferred edges, in declaration order; every inferred edge goes forward and names a real hazard.
    #[test]
    fn inferred_edges_order_every_conflict((buffers, nodes) in node_accesses(40, 6)) {
        let edges = infer_edges(buffers, &nodes);
        let n = nodes.len();
        let t = touches(buffers, &nodes);
        for e in &edges {
            prop_assert!(e.from < e.to, "edge {e:?} goes backward");
            let EdgeOrigin::Inferred { buffer, hazard } = e.origin else {
                return Err(TestCaseError::fail(format!("{e:?} is not inferred")));
            };
            let ((from_reads, from_writes), (to_reads, to_writes)) = (t[e.from][buffer], t[e.to][buffer]);
            let justified = match hazard {
                Hazard::ReadAfterWrite => from_writes && to_reads,
                Hazard::WriteAfterRead => from_reads && to_writes,
                Hazard::WriteAfterWrite => from_writes && to_writes,
            };
            prop_assert!(justified, "{e:?} has no such hazard");
        }
        let pairs: Vec<(usize, usize)> = edges.iter().map(|e| (e.from, e.to)).collect();
        let reach = naive_reachability(n, &pairs);
        for (i, j, b) in conflicts(buffers, &nodes) {
            prop_assert!(reach[i][j], "n{i} and n{j} conflict on b{b} with no path: edges {pairs:?}");
        }
    }

    /// The bit-set reachability agrees with depth-first search, past one 64-bit word of nodes too.
    #[test]
    fn reachability_agrees_with_dfs((n, edges) in dag(140)) {
        let order = topological_order(n, &edges).expect("a DAG has an order");
        let r = Reachability::new(n, &edges, &order);
        let naive = naive_reachability(n, &edges);
        for (a, row) in naive.iter().enumerate() {
            for (b, &reaches) in row.iter().enumerate() {
                prop_assert_eq!(r.reaches(a, b), reaches, "reaches({}, {})", a, b);
                prop_assert_eq!(r.ordered(a, b), reaches || naive[b][a]);
            }
        }
    }

    /// Explicit-only mode reports one race per buffer and pair of conflicting nodes with no path between them,
    /// and none when the explicit edges are the inferred ones.
    #[test]
    fn races_are_exactly_the_unordered_conflicts(
        (buffers, nodes) in distinct_node_accesses(24, 4),
        edge_bits in prop::collection::vec(any::<bool>(), 24 * 24),
    ) {
        let n = nodes.len();
        let inferred: Vec<(usize, usize)> =
            infer_edges(buffers, &nodes).iter().map(|e| (e.from, e.to)).collect();
        let g = host_graph(buffers, &nodes, Role::InOut, EdgeMode::ExplicitOnly, &inferred);
        let checked = check(g, &Library::EMPTY);
        prop_assert!(checked.is_ok(), "inferred edges leave a race: {:?}", checked.err());

        // A random forward subset of edges.
        let explicit: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| edge_bits[i * 24 + j])
            .collect();
        let reach = naive_reachability(n, &explicit);
        let expected = conflicts(buffers, &nodes)
            .into_iter()
            .filter(|&(i, j, _)| !reach[i][j])
            .count();
        let g = host_graph(buffers, &nodes, Role::InOut, EdgeMode::ExplicitOnly, &explicit);
        let races = match check(g, &Library::EMPTY) {
            Ok(_) => 0,
            Err(list) => {
                prop_assert!(list.iter().all(|d| d.message.starts_with("data race")), "{list:#?}");
                list.len()
            }
        };
        prop_assert_eq!(races, expected);
    }

    /// With inferred edges, a read of a graph-owned buffer is refused exactly when no earlier node (in
    /// declaration order) writes it.
    #[test]
    fn owned_reads_need_an_earlier_writer((buffers, nodes) in distinct_node_accesses(24, 4)) {
        let mut expected = BTreeSet::new();
        for (n, list) in nodes.iter().enumerate() {
            for (i, a) in list.iter().enumerate() {
                let written_before = nodes[..n]
                    .iter()
                    .any(|l| l.iter().any(|w| w.buffer == a.buffer && w.mode.writes()));
                if a.mode.reads() && !written_before {
                    expected.insert((n, i));
                }
            }
        }
        let g = host_graph(buffers, &nodes, Role::Owned, EdgeMode::Inferred, &[]);
        let found: BTreeSet<(usize, usize)> = match check(g, &Library::EMPTY) {
            Ok(_) => BTreeSet::new(),
            Err(list) => list
                .iter()
                .map(|d| match d.loc {
                    graph_core::Loc::Access { node, index } if d.message.contains("graph-owned") => {
                        Ok((node, index))
                    }
                    _ => Err(TestCaseError::fail(format!("unexpected {d:?}"))),
                })
                .collect::<Result<_, _>>()?,
        };
        prop_assert_eq!(found, expected);
    }
}
