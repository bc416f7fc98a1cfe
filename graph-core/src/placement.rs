//! Where each node of a graph baked on a set of GPUs runs: the placement pass.
//!
//! The user decides where they say so: a node placed with `#[on(1)]` (or `GraphBuilder::on`, or a graph file's
//! `on` list) runs on that GPU of the set, by its index. The pass places every other node, as a documented
//! heuristic:
//!
//! 1. Nodes that must run together are one unit: a block's members (its flag decides on one GPU) and a group
//!    of alternatives' choices.
//! 2. A connected part of the graph (units joined by edges, whatever their reason) with a placed node keeps
//!    its other units near those: each takes the GPU of a placed predecessor, else of a placed successor,
//!    repeated until nothing changes, so an unplaced node follows the work it depends on.
//! 3. The connected parts with no placed node (independent branches: a batch of frames, a model's heads) are
//!    spread by their cost, largest first, each onto the GPU with the least cost so far (longest processing
//!    time first), counting what the user placed. A node's cost is the bytes of the buffers it touches
//!    ([`node_cost`]): most graph work is memory-bound, and those lengths are known at bake.
//!
//! A part is never cut by the pass: edges between GPUs become transfers ([`crate::split`]), which the user
//! asks for by placing the ends.

use crate::desc::{GraphDesc, InvalidDescription, OpDesc};

/// The most GPUs a set holds: a placement names one below it.
pub const MAX_GPUS: u32 = 16;

/// Node `n`'s cost for the pass: the bytes of each buffer it touches (`buffer_bytes`, by buffer index), once
/// per access.
pub fn node_cost(desc: &GraphDesc, n: u32, buffer_bytes: &[u64]) -> u64 {
    crate::memory::node_accesses(desc, n)
        .iter()
        .map(|&(b, _)| buffer_bytes.get(b as usize).copied().unwrap_or(0))
        .sum()
}

/// A GPU for every node of `desc` (flattened: no subgraph nodes) on a set of `gpus`, each node's `cost` given
/// ([`node_cost`]): the nodes placed by the user where they are, the rest by the pass (see the module). An
/// error for a node placed on a GPU the set lacks, or units placed apart.
pub fn place(desc: &GraphDesc, gpus: u32, cost: &[u64]) -> Result<Vec<u32>, InvalidDescription> {
    let count = desc.nodes.len();
    if gpus == 0 || gpus > MAX_GPUS {
        return Err(InvalidDescription(format!(
            "a set holds 1 to {MAX_GPUS} GPUs, not {gpus}"
        )));
    }
    let in_range = |n: u32| (n as usize) < count;
    if !desc
        .edges
        .iter()
        .all(|e| in_range(e.from) && in_range(e.to))
        || !desc.topological_order.iter().all(|&n| in_range(n))
    {
        return Err(InvalidDescription(format!(
            "graph `{}` has an edge or an order past its {count} nodes",
            desc.name
        )));
    }
    let mut units = UnionFind::new(count);
    for group in together(desc) {
        for pair in group.windows(2) {
            units.join(pair[0], pair[1]);
        }
    }
    // Each unit's GPU as the user placed it.
    let mut placed: Vec<Option<(u32, usize)>> = vec![None; count];
    for (n, node) in desc.nodes.iter().enumerate() {
        let Some(gpu) = node.on else { continue };
        if gpu >= gpus {
            return Err(InvalidDescription(format!(
                "node `{}` is placed on GPU {gpu}, and the set has {gpus} (numbered from 0)",
                node.name
            )));
        }
        let unit = units.root(n);
        match placed[unit] {
            Some((other, by)) if other != gpu => {
                return Err(InvalidDescription(format!(
                    "nodes `{}` and `{}` run on one GPU (a block's members, or a group's alternatives), but \
                     are placed on GPUs {other} and {gpu}",
                    desc.nodes[by].name, node.name
                )));
            }
            _ => placed[unit] = Some((gpu, n)),
        }
    }
    let mut gpu_of: Vec<Option<u32>> = (0..count)
        .map(|n| placed[units.root(n)].map(|(g, _)| g))
        .collect();

    let mut parts = units.clone();
    for e in desc.edges.iter() {
        parts.join(e.from as usize, e.to as usize);
    }
    // Per connected part (by its root): whether it holds a placed node.
    let mut anchored = vec![false; count];
    for (n, gpu) in gpu_of.iter().enumerate() {
        if gpu.is_some() {
            anchored[parts.root(n)] = true;
        }
    }

    // Step 2: near what is placed, over edges, until nothing changes.
    let mut changed = true;
    while changed {
        changed = false;
        for forward in [true, false] {
            let order: Vec<usize> = match forward {
                true => desc.topological_order.iter().map(|&n| n as usize).collect(),
                false => desc
                    .topological_order
                    .iter()
                    .rev()
                    .map(|&n| n as usize)
                    .collect(),
            };
            for n in order {
                if gpu_of[n].is_some() || !anchored[parts.root(n)] {
                    continue;
                }
                let near = desc.edges.iter().find_map(|e| {
                    let (this, other) = match forward {
                        true => (e.to, e.from),
                        false => (e.from, e.to),
                    };
                    (this as usize == n)
                        .then(|| gpu_of[other as usize])
                        .flatten()
                });
                if let Some(gpu) = near {
                    let unit = units.root(n);
                    for (m, slot) in gpu_of.iter_mut().enumerate() {
                        if units.root(m) == unit {
                            *slot = Some(gpu);
                        }
                    }
                    changed = true;
                }
            }
        }
    }

    // Step 3: the parts with nothing placed, largest first onto the least loaded GPU.
    let mut load = vec![0u64; gpus as usize];
    for (n, gpu) in gpu_of.iter().enumerate() {
        if let Some(g) = gpu {
            load[*g as usize] += cost.get(n).copied().unwrap_or(0);
        }
    }
    let mut free: Vec<(u64, usize, Vec<usize>)> = Vec::new();
    for (n, gpu) in gpu_of.iter().enumerate() {
        if gpu.is_some() {
            continue;
        }
        let root = parts.root(n);
        let c = cost.get(n).copied().unwrap_or(0);
        match free.iter_mut().find(|(_, r, _)| *r == root) {
            Some(part) => {
                part.0 += c;
                part.2.push(n);
            }
            None => free.push((c, root, vec![n])),
        }
    }
    // Largest first; ties in the order the parts begin, so the result depends on the graph alone.
    free.sort_by(|a, b| b.0.cmp(&a.0).then(a.2[0].cmp(&b.2[0])));
    for (c, _, members) in free {
        let (gpu, _) = load
            .iter()
            .enumerate()
            .min_by_key(|&(g, &l)| (l, g))
            .expect("a set holds at least one GPU");
        load[gpu] += c;
        for m in members {
            gpu_of[m] = Some(gpu as u32);
        }
    }
    Ok(gpu_of.into_iter().map(|g| g.unwrap_or(0)).collect())
}

/// `desc` with every unplaced node that touches an external texture placed on the texture's GPU (`home`, by
/// buffer index): textures do not move between GPUs, so their users go where they are.
pub fn near_textures<'a>(
    desc: &'a GraphDesc,
    home: &[Option<u32>],
) -> std::borrow::Cow<'a, GraphDesc> {
    let mut placed = std::borrow::Cow::Borrowed(desc);
    for n in 0..desc.nodes.len() {
        if desc.nodes[n].on.is_some() {
            continue;
        }
        let texture_home = crate::memory::node_accesses(desc, n as u32)
            .iter()
            .filter(|&&(b, _)| {
                desc.buffers
                    .get(b as usize)
                    .is_some_and(|b| b.texture.is_some() && b.role.is_external())
            })
            .find_map(|&(b, _)| home.get(b as usize).copied().flatten());
        if let Some(gpu) = texture_home {
            placed.to_mut().nodes.to_mut()[n].on = Some(gpu);
        }
    }
    placed
}

/// The groups of nodes that run on one GPU: each block's members, each group of alternatives' choices.
pub fn together(desc: &GraphDesc) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = desc
        .blocks
        .iter()
        .map(|b| b.nodes.iter().map(|&n| n as usize).collect())
        .collect();
    let mut alternatives: Vec<(&str, Vec<usize>)> = Vec::new();
    for (n, node) in desc.nodes.iter().enumerate() {
        if let OpDesc::Kernel(k) = &node.op
            && let Some(alt) = &k.alternative
        {
            match alternatives.iter_mut().find(|(g, _)| *g == alt.group) {
                Some((_, members)) => members.push(n),
                None => alternatives.push((&alt.group, vec![n])),
            }
        }
    }
    groups.extend(alternatives.into_iter().map(|(_, m)| m));
    groups
}

/// Disjoint sets of node indices.
#[derive(Clone)]
struct UnionFind(Vec<usize>);

impl UnionFind {
    fn new(count: usize) -> Self {
        UnionFind((0..count).collect())
    }

    fn root(&mut self, mut n: usize) -> usize {
        while self.0[n] != n {
            self.0[n] = self.0[self.0[n]];
            n = self.0[n];
        }
        n
    }

    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.root(a), self.root(b));
        if a != b {
            self.0[a.max(b)] = a.min(b);
        }
    }
}
