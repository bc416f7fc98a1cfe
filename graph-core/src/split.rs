//! A graph placed on a set of GPUs, split into one graph per GPU with the transfers between them.
//!
//! Each GPU's part keeps every index of the graph: its own nodes as they are, the others' as empty nodes
//! without edges, every buffer. Walking the nodes in topological order, the split keeps, per buffer, the GPUs
//! whose copy holds its current contents: an external buffer's starts on its home (the GPU it was made on), a
//! graph-owned one's where the replay before left it (found by walking the replay once first: a writer under
//! a block's flag, or one of a group's alternatives, may not run, and the buffer keeps what it held). A node
//! whose GPU's copy of a buffer it
//! touches is not current gets a transfer of it first, from the GPU that wrote it last: a host task in the
//! sending part that reads the buffer (after its last writer there) and one in the receiving part that
//! writes it (before the node). A node that writes a buffer makes its own GPU's copy the only current one.
//! An edge between nodes of two GPUs (an explicit one, or a barrier's) is kept by a transfer too, with no
//! buffers when none moves; an inferred one needs none of its own (a read after a write moves the data, a
//! write moves the buffer first, and a write after a read on another GPU writes another copy). At the end, an external buffer whose home does not hold its current contents
//! gets them back, so every replay starts as the first: the copies are coherent across replays.
//!
//! A write is taken to leave the rest of the buffer as it was, so the buffer moves before it too. Each part's
//! transfers are ordered in the one order they were made in, so the parts, replayed side by side, never wait
//! for each other in a circle, and a part's work that comes before a receive in topological order goes
//! before it, so its GPU runs that work while the receive waits. A block's members move together: what any
//! of them needs arrives before the first, and edges into or out of one of them reach them all.

use std::collections::BTreeSet;

use crate::deps::{BufferAccess, EdgeOrigin, infer_edges};
use crate::desc::{
    AccessDesc, DispatchDesc, EdgeDesc, EdgeOriginDesc, GraphDesc, InvalidDescription, List,
    NodeDesc, OpDesc, SizeDesc, TextureSizeDesc,
};
use crate::ir::{AccessMode, Role};
use crate::placement::MAX_GPUS;
use crate::size::SizeStep;

/// A graph split over a set of GPUs.
#[derive(Debug, Clone)]
pub struct Split {
    /// Per GPU: its part, with the graph's nodes and buffers at their indices, the transfers' host tasks
    /// after them. A GPU without nodes has a part of empty nodes only.
    pub parts: Vec<GraphDesc>,
    pub transfers: Vec<Transfer>,
}

/// Buffers moved from one GPU to another in a replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    pub from: u32,
    pub to: u32,
    /// The buffers moved, by index; none for a transfer that only orders.
    pub buffers: Vec<u32>,
    /// The host task of `parts[from]` that reads them.
    pub send: u32,
    /// The host task of `parts[to]` that writes them.
    pub recv: u32,
}

/// What a part holds at a point of its order.
#[derive(Debug, Clone, Copy)]
enum Event {
    Node(u32),
    Send(usize),
    Recv(usize),
}

/// Splits `desc` (flattened) over `gpus` GPUs, node `n` on `gpu_of[n]`; `home[b]` is the GPU of external
/// buffer `b` (`None` for a graph-owned one), `lens[b]` its bound length in elements. A texture that would
/// move between GPUs is an error: textures do not move yet.
pub fn split(
    desc: &GraphDesc,
    gpus: u32,
    gpu_of: &[u32],
    home: &[Option<u32>],
    lens: &[u32],
) -> Result<Split, InvalidDescription> {
    if gpus == 0 || gpus > MAX_GPUS {
        return Err(InvalidDescription(format!(
            "a set holds 1 to {MAX_GPUS} GPUs, not {gpus}"
        )));
    }
    if gpu_of.len() != desc.nodes.len() || gpu_of.iter().any(|&g| g >= gpus) {
        return Err(InvalidDescription(format!(
            "a placement of {} nodes on GPUs below {gpus} was expected",
            desc.nodes.len()
        )));
    }
    if home.iter().flatten().any(|&h| h >= gpus) {
        return Err(InvalidDescription(format!(
            "a buffer's home is past the set of {gpus} GPUs"
        )));
    }
    // Graph-owned buffers may keep their contents from one replay to the next (written under a block's flag,
    // by one of a group's alternatives, by a node turned off later): the walk starts where one replay leaves
    // them. A replay may leave more copies current than the walk assumes, never fewer, so none is read stale.
    let left = walk(desc, gpus, gpu_of, home, None)?;
    let walked = walk(desc, gpus, gpu_of, home, Some(&left.end))?;
    let Walk {
        events,
        transfers,
        added,
        ..
    } = walked;
    let block_of = blocks_of(desc);
    let parts = (0..gpus)
        .map(|g| {
            part(
                desc,
                g,
                gpu_of,
                home,
                lens,
                &events[g as usize],
                &transfers,
                &added[g as usize],
                &block_of,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Split { parts, transfers })
}

/// Where each buffer's current contents are: per buffer, the GPUs holding them (a bit each) and the one
/// that wrote them last.
#[derive(Debug, Clone)]
struct State {
    current: Vec<u32>,
    writer: Vec<Option<u32>>,
}

/// One replay walked in topological order: each part's order of nodes and transfer ends, the transfers, the
/// edges added to each part, and where the replay leaves each buffer's contents.
struct Walk {
    events: Vec<Vec<Event>>,
    transfers: Vec<Transfer>,
    added: Vec<Vec<(u32, u32)>>,
    end: State,
}

/// The walk of one replay that starts with graph-owned buffers as `start` leaves them (else nowhere).
fn walk(
    desc: &GraphDesc,
    gpus: u32,
    gpu_of: &[u32],
    home: &[Option<u32>],
    start: Option<&State>,
) -> Result<Walk, InvalidDescription> {
    let (count, buffers) = (desc.nodes.len(), desc.buffers.len());
    let bit = |g: u32| 1u32 << g;
    // Where each buffer's contents are as a replay starts: an external one's at home, a graph-owned one's
    // where the replay before left them (`start`), else nowhere.
    let mut current: Vec<u32> = (0..buffers)
        .map(|b| match home.get(b).copied().flatten() {
            Some(h) => bit(h),
            None => start.map_or(0, |s| s.current[b]),
        })
        .collect();
    let mut writer: Vec<Option<u32>> = (0..buffers)
        .map(|b| match home.get(b).copied().flatten() {
            Some(h) => Some(h),
            None => start.and_then(|s| s.writer[b]),
        })
        .collect();
    let mut events: Vec<Vec<Event>> = vec![Vec::new(); gpus as usize];
    let mut transfers: Vec<Transfer> = Vec::new();
    // Edges of each part that the split adds: (from, to) in the part's indices (transfers after the nodes).
    let mut added: Vec<Vec<(u32, u32)>> = vec![Vec::new(); gpus as usize];
    let block_of = blocks_of(desc);
    let mut block_done = vec![false; desc.blocks.len()];
    let transfer_index = |t: usize| (count + t) as u32;

    for &n in desc.topological_order.iter() {
        let g = gpu_of[n as usize];
        // What moves before this node: for a block's first member, what the whole block needs.
        let step: Vec<u32> = match block_of[n as usize] {
            Some(b) if block_done[b] => Vec::new(),
            Some(b) => {
                block_done[b] = true;
                desc.blocks[b].nodes.to_vec()
            }
            None => vec![n],
        };
        let mut needs: Vec<(u32, u32)> = Vec::new();
        let mut preds: Vec<(u32, u32)> = Vec::new();
        for &m in &step {
            for (b, _) in coherence_accesses(desc, m) {
                let buffer = &desc.buffers[b as usize];
                if buffer.sampler.is_some()
                    || current[b as usize] == 0
                    || current[b as usize] & bit(g) != 0
                {
                    continue;
                }
                if buffer.texture.is_some() {
                    return Err(InvalidDescription(format!(
                        "texture `{}` is needed on GPU {g} (by `{}`), and textures do not move between GPUs \
                         yet: place the nodes that use it on one GPU",
                        buffer.name, desc.nodes[m as usize].name
                    )));
                }
                let from = writer[b as usize]
                    .filter(|&w| current[b as usize] & bit(w) != 0)
                    .unwrap_or(current[b as usize].trailing_zeros());
                if !needs.contains(&(from, b)) {
                    needs.push((from, b));
                }
            }
            // An edge of data is kept by the data's transfer (a write moves the buffer first too); one
            // that only orders (explicit, a barrier's) by a transfer of its own. Each GPU holds a copy of its
            // own, so a write after a read on another GPU needs no order.
            let orders =
                |e: &&EdgeDesc| e.to == m && !matches!(e.origin, EdgeOriginDesc::Inferred { .. });
            for e in desc.edges.iter().filter(orders) {
                let s = gpu_of[e.from as usize];
                if s != g && !step.contains(&e.from) {
                    preds.push((s, e.from));
                }
            }
        }
        let sources: BTreeSet<u32> = needs
            .iter()
            .map(|&(s, _)| s)
            .chain(preds.iter().map(|&(s, _)| s))
            .collect();
        for s in sources {
            let t = transfers.len();
            let moved: Vec<u32> = needs
                .iter()
                .filter(|&&(f, _)| f == s)
                .map(|&(_, b)| b)
                .collect();
            for &b in &moved {
                current[b as usize] |= bit(g);
            }
            transfers.push(Transfer {
                from: s,
                to: g,
                buffers: moved,
                send: transfer_index(t),
                recv: transfer_index(t),
            });
            events[s as usize].push(Event::Send(t));
            events[g as usize].push(Event::Recv(t));
            for &(p_gpu, p) in &preds {
                if p_gpu == s {
                    for q in members(desc, &block_of, p) {
                        added[s as usize].push((q, transfer_index(t)));
                    }
                }
            }
            for &m in &step {
                added[g as usize].push((transfer_index(t), m));
            }
        }
        events[g as usize].push(Event::Node(n));
        for (b, writes) in coherence_accesses(desc, n) {
            if writes {
                current[b as usize] = bit(g);
                writer[b as usize] = Some(g);
            }
        }
    }
    // External buffers home again.
    let mut back: Vec<(u32, u32, Vec<u32>)> = Vec::new();
    for b in 0..buffers {
        let Some(h) = home.get(b).copied().flatten() else {
            continue;
        };
        if current[b] == 0 || current[b] & bit(h) != 0 {
            continue;
        }
        if desc.buffers[b].texture.is_some() {
            return Err(InvalidDescription(format!(
                "texture `{}` is written away from its GPU {h}, and textures do not move between GPUs yet",
                desc.buffers[b].name
            )));
        }
        let from = writer[b].unwrap_or(current[b].trailing_zeros());
        match back.iter_mut().find(|(f, to, _)| *f == from && *to == h) {
            Some((_, _, moved)) => moved.push(b as u32),
            None => back.push((from, h, vec![b as u32])),
        }
    }
    for (from, to, moved) in back {
        let t = transfers.len();
        transfers.push(Transfer {
            from,
            to,
            buffers: moved,
            send: transfer_index(t),
            recv: transfer_index(t),
        });
        events[from as usize].push(Event::Send(t));
        events[to as usize].push(Event::Recv(t));
    }

    Ok(Walk {
        events,
        transfers,
        added,
        end: State { current, writer },
    })
}

/// GPU `g`'s part: its nodes, the other GPUs' empty, a host task per transfer (the sends and receives of
/// `g` with their buffers, the rest empty), edges kept and added, buffers of other homes held as graph-owned
/// copies.
#[allow(clippy::too_many_arguments)]
fn part(
    desc: &GraphDesc,
    g: u32,
    gpu_of: &[u32],
    home: &[Option<u32>],
    lens: &[u32],
    events: &[Event],
    transfers: &[Transfer],
    added: &[(u32, u32)],
    block_of: &[Option<usize>],
) -> Result<GraphDesc, InvalidDescription> {
    let count = desc.nodes.len();
    let mine = |n: usize| gpu_of[n] == g;
    let mut nodes: Vec<NodeDesc> = desc
        .nodes
        .iter()
        .enumerate()
        // A part runs on one GPU: nothing in it is placed (so its kernels fuse as one GPU's).
        .map(|(n, node)| NodeDesc {
            name: node.name.clone(),
            op: match mine(n) {
                true => node.op.clone(),
                false => OpDesc::Empty,
            },
            on: None,
        })
        .collect();
    for (t, transfer) in transfers.iter().enumerate() {
        let accesses = |mode: AccessMode| -> List<AccessDesc> {
            transfer
                .buffers
                .iter()
                .map(|&buffer| AccessDesc { buffer, mode })
                .collect()
        };
        let (name, op) = if transfer.from == g {
            (
                format!("transfer {t}: send to GPU {}", transfer.to),
                OpDesc::Host {
                    accesses: accesses(AccessMode::Read),
                },
            )
        } else if transfer.to == g {
            (
                format!("transfer {t}: receive from GPU {}", transfer.from),
                OpDesc::Host {
                    accesses: accesses(AccessMode::Write),
                },
            )
        } else {
            (format!("transfer {t}"), OpDesc::Empty)
        };
        nodes.push(NodeDesc {
            name: name.into(),
            op,
            on: None,
        });
    }

    let mut seen: BTreeSet<(u32, u32)> = BTreeSet::new();
    let mut edges: Vec<EdgeDesc> = Vec::new();
    let mut push = |edges: &mut Vec<EdgeDesc>, from: u32, to: u32, origin: EdgeOriginDesc| {
        if from != to && seen.insert((from, to)) {
            edges.push(EdgeDesc { from, to, origin });
        }
    };
    for e in desc.edges.iter() {
        if mine(e.from as usize) && mine(e.to as usize) {
            push(&mut edges, e.from, e.to, e.origin);
        }
    }
    for &(from, to) in added {
        push(&mut edges, from, to, EdgeOriginDesc::Explicit);
    }
    // The transfers' hazards with the part's own nodes, over the part's order.
    let index = |e: &Event| match *e {
        Event::Node(n) => n,
        Event::Send(t) | Event::Recv(t) => (count + t) as u32,
    };
    let accesses: Vec<Vec<BufferAccess>> = events
        .iter()
        .map(|e| match *e {
            Event::Node(n) => coherence_accesses(desc, n)
                .into_iter()
                .map(|(b, writes)| BufferAccess {
                    buffer: b as usize,
                    mode: if writes {
                        AccessMode::ReadWrite
                    } else {
                        AccessMode::Read
                    },
                })
                .collect(),
            Event::Send(t) | Event::Recv(t) => {
                let mode = match matches!(e, Event::Send(_)) {
                    true => AccessMode::Read,
                    false => AccessMode::Write,
                };
                transfers[t]
                    .buffers
                    .iter()
                    .map(|&b| BufferAccess {
                        buffer: b as usize,
                        mode,
                    })
                    .collect()
            }
        })
        .collect();
    for edge in infer_edges(desc.buffers.len(), &accesses) {
        let (from, to) = (index(&events[edge.from]), index(&events[edge.to]));
        if (from as usize) < count && (to as usize) < count {
            continue;
        }
        let origin = match edge.origin {
            EdgeOrigin::Inferred { buffer, hazard } => EdgeOriginDesc::Inferred {
                buffer: buffer as u32,
                hazard,
            },
            _ => EdgeOriginDesc::Explicit,
        };
        for f in members(desc, block_of, from) {
            for t in members(desc, block_of, to) {
                push(&mut edges, f, t, origin);
            }
        }
    }
    // The transfers in the one order they were made in, so no two parts wait for each other in a circle.
    let ends: Vec<u32> = events
        .iter()
        .filter(|e| !matches!(e, Event::Node(_)))
        .map(index)
        .collect();
    for pair in ends.windows(2) {
        push(&mut edges, pair[0], pair[1], EdgeOriginDesc::Explicit);
    }
    // A receive waits on the host for the other GPU: the part's work before it in topological order is
    // submitted first, so this GPU runs what does not need the transfer meanwhile (a receive is a host task,
    // which would otherwise go in the earliest host phase its edges allow, ahead of that work).
    for (at, event) in events.iter().enumerate() {
        if let Event::Recv(t) = *event {
            for before in &events[..at] {
                if let Event::Node(n) = *before {
                    for m in members(desc, block_of, n) {
                        push(&mut edges, m, (count + t) as u32, EdgeOriginDesc::Explicit);
                    }
                }
            }
        }
    }
    // A send that waits for nothing of its part (an input, as the replay starts) goes first: the part's own
    // work after it, so the other GPU gets its words at once rather than behind work they do not need (the
    // sending GPU's queue would run that work before the copy out).
    let waits_for_nothing =
        |edges: &[EdgeDesc], t: u32| !edges.iter().any(|e| e.to == t && (e.from as usize) < count);
    let leading: Vec<u32> = events
        .iter()
        .filter(|e| !matches!(e, Event::Node(_)))
        .map_while(|e| match *e {
            Event::Send(t) => Some((count + t) as u32),
            _ => None,
        })
        .take_while(|&t| waits_for_nothing(&edges, t))
        .collect();
    if !leading.is_empty() {
        let roots: Vec<u32> = (0..count as u32)
            .filter(|&n| mine(n as usize) && !edges.iter().any(|e| e.to == n))
            .collect();
        for &send in &leading {
            for &n in &roots {
                push(&mut edges, send, n, EdgeOriginDesc::Explicit);
            }
        }
    }

    let mut touched = touched_buffers(desc, &nodes);
    // A texture sized like another needs that one as it is.
    for b in 0..desc.buffers.len() {
        let mut at = b;
        while touched[at]
            && let Some(TextureSizeDesc::Like(like)) = desc.buffers[at].texture_size
            && !touched[like as usize]
        {
            touched[like as usize] = true;
            at = like as usize;
        }
    }
    let buffers: Vec<_> = desc
        .buffers
        .iter()
        .enumerate()
        .map(|(b, buffer)| {
            let mut buffer = buffer.clone();
            let elsewhere = buffer.role.is_external() && home.get(b).copied().flatten() != Some(g);
            if elsewhere {
                if buffer.texture.is_some() && touched[b] {
                    return Err(InvalidDescription(format!(
                        "texture `{}` is bound on another GPU than its users' ({g}): textures do not move \
                         between GPUs yet",
                        buffer.name
                    )));
                }
                buffer.role = Role::Owned;
                if buffer.is_buffer() {
                    buffer.len = Some(lens.get(b).copied().unwrap_or(1).max(1));
                }
            }
            // What this part never touches nor measures: one element or texel, not a copy of it.
            if buffer.role == Role::Owned && !touched[b] {
                if buffer.is_buffer() {
                    buffer.len = Some(1);
                } else if buffer.texture.is_some() {
                    buffer.texture_size = Some(TextureSizeDesc::Texels([1, 1, 1]));
                }
            }
            Ok(buffer)
        })
        .collect::<Result<_, _>>()?;
    let blocks: Vec<_> = desc
        .blocks
        .iter()
        .filter(|b| b.nodes.first().is_some_and(|&n| mine(n as usize)))
        .cloned()
        .collect();
    crate::flatten::with_schedule(desc, buffers, nodes, edges, blocks).ok_or_else(|| {
        InvalidDescription(format!(
            "graph `{}`'s part on GPU {g} has a cycle once its transfers are placed",
            desc.name
        ))
    })
}

/// What node `n` reads or writes for coherence, each with whether it writes: its accesses, an indirect
/// dispatch's counts and its block's flag (read).
fn coherence_accesses(desc: &GraphDesc, n: u32) -> Vec<(u32, bool)> {
    let mut accesses = crate::memory::node_accesses(desc, n);
    if let Some(OpDesc::Kernel(k)) = desc.nodes.get(n as usize).map(|n| &n.op)
        && let DispatchDesc::Indirect(b) = k.dispatch
    {
        accesses.push((b, false));
    }
    for block in desc.blocks.iter().filter(|b| b.nodes.contains(&n)) {
        if let Some(flag) = block.flag {
            accesses.push((flag, false));
        }
    }
    accesses
}

/// Per node, the block it is a member of.
fn blocks_of(desc: &GraphDesc) -> Vec<Option<usize>> {
    let mut of = vec![None; desc.nodes.len()];
    for (b, block) in desc.blocks.iter().enumerate() {
        for &n in block.nodes.iter() {
            of[n as usize] = Some(b);
        }
    }
    of
}

/// Node `n` and, for a block's member, the block's other members: what an edge into or out of it reaches.
/// A transfer (past the graph's nodes) is itself.
fn members(desc: &GraphDesc, block_of: &[Option<usize>], n: u32) -> Vec<u32> {
    match block_of.get(n as usize).copied().flatten() {
        Some(b) => desc.blocks[b].nodes.to_vec(),
        None => vec![n],
    }
}

/// Per buffer: whether a node of `nodes` touches it or reads its length.
fn touched_buffers(desc: &GraphDesc, nodes: &[NodeDesc]) -> Vec<bool> {
    let mut touched = vec![false; desc.buffers.len()];
    let mut mark = |b: u32| {
        if let Some(t) = touched.get_mut(b as usize) {
            *t = true;
        }
    };
    let sizes = |size: &SizeDesc, mark: &mut dyn FnMut(u32)| {
        for step in size.steps.iter() {
            if let SizeStep::Len(b) | SizeStep::Extent { texture: b, .. } = *step {
                mark(b);
            }
        }
    };
    for node in nodes {
        match &node.op {
            OpDesc::Kernel(k) => {
                for a in k.bindings.iter() {
                    mark(a.buffer);
                }
                match &k.dispatch {
                    DispatchDesc::BufferLen(b) | DispatchDesc::Indirect(b) => mark(*b),
                    DispatchDesc::Threads(axes) | DispatchDesc::Workgroups(axes) => {
                        for size in axes {
                            sizes(size, &mut mark);
                        }
                    }
                }
                if let Some(range) = &k.range {
                    sizes(&range.start, &mut mark);
                    sizes(&range.end, &mut mark);
                }
                for o in k.overrides.iter() {
                    sizes(&o.value, &mut mark);
                }
            }
            OpDesc::Copy {
                src,
                dst,
                src_range,
                dst_range,
            } => {
                mark(*src);
                mark(*dst);
                for range in [src_range, dst_range] {
                    sizes(&range.start, &mut mark);
                    sizes(&range.end, &mut mark);
                }
            }
            OpDesc::Upload { buffer, range } | OpDesc::Readback { buffer, range } => {
                mark(*buffer);
                sizes(&range.start, &mut mark);
                sizes(&range.end, &mut mark);
            }
            OpDesc::Host { accesses } | OpDesc::Interop { accesses } => {
                for a in accesses.iter() {
                    mark(a.buffer);
                }
            }
            OpDesc::Empty | OpDesc::Subgraph { .. } => {}
        }
    }
    for block in desc.blocks.iter() {
        if let Some(flag) = block.flag
            && block
                .nodes
                .iter()
                .any(|&n| !matches!(nodes[n as usize].op, OpDesc::Empty))
        {
            mark(flag);
        }
    }
    touched
}
