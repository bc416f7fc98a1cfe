//! Subgraph nodes replaced by their children's nodes: the one-level description the plan and the recorders
//! work on.
//!
//! Flattening keeps every index of the parent: its buffers and nodes stay where they are (so the typed
//! handles a `graph!` parent generated still point at the right nodes), a subgraph node stays as an empty
//! node (the join after its predecessors), and the child's nodes and graph-owned buffers are appended, named
//! `node.child_name`. The child's external buffers become the parent's buffers they are bound to, and its
//! parameter offsets the parent's offsets of the same names. Edges follow SYCL's rule: the child's roots run
//! after the subgraph node (so after its predecessors), and the node's successors after the child's leaves.
//! The schedule is then computed again over the whole graph.

use std::borrow::Cow;

use crate::desc::{
    AxisSizeDesc, BlockDesc, BufferDesc, DispatchDesc, EdgeDesc, EdgeOriginDesc, GraphDesc,
    InvalidDescription, KernelDesc, List, NodeDesc, OpDesc, PartitionDesc, RangeDesc, SizeDesc,
    TextureSizeDesc,
};
use crate::ir::Role;
use crate::schedule::{Partition, schedule};
use crate::size::SizeStep;

/// `desc` with every subgraph node (at any depth) replaced by its child's nodes; borrowed when it has none.
/// `desc` must be valid ([`GraphDesc::validate`]), which checks every binding against its child.
pub fn flatten(desc: &GraphDesc) -> Result<Cow<'_, GraphDesc>, InvalidDescription> {
    if !desc
        .nodes
        .iter()
        .any(|n| matches!(n.op, OpDesc::Subgraph { .. }))
    {
        return Ok(Cow::Borrowed(desc));
    }
    let mut buffers = desc.buffers.to_vec();
    let mut nodes = desc.nodes.to_vec();
    let mut edges = Vec::new();
    let mut blocks = desc.blocks.to_vec();
    // Per subgraph node, the child's nodes in the flattened graph: they take its place in a block.
    let mut expanded: Vec<Option<Vec<u32>>> = vec![None; desc.nodes.len()];
    // Per node of the parent, the nodes its out-edges leave from once it is flattened.
    let mut exits: Vec<Vec<u32>> = (0..desc.nodes.len() as u32).map(|n| vec![n]).collect();
    for (index, node) in desc.nodes.iter().enumerate() {
        let OpDesc::Subgraph {
            graph, bindings, ..
        } = &node.op
        else {
            continue;
        };
        let child = flatten(graph)?;
        let prefix = |name: &str| format!("{}.{name}", node.name);
        let buffer_map: Vec<u32> = child
            .buffers
            .iter()
            .map(|b| match b.role {
                Role::Owned => {
                    buffers.push(BufferDesc {
                        name: prefix(&b.name).into(),
                        ..b.clone()
                    });
                    Ok(buffers.len() as u32 - 1)
                }
                _ => {
                    let bound = bindings
                        .iter()
                        .find(|binding| binding.name == b.name)
                        .map(|binding| binding.buffer)
                        .ok_or_else(|| {
                            InvalidDescription(format!(
                                "subgraph `{}` does not bind `{}`",
                                node.name, b.name
                            ))
                        })?;
                    // A length the child requires becomes the parent's requirement (validation refused
                    // two different ones); so does a texture's size in texels (another texture's is
                    // carried over below, once every index is known).
                    let parent = &mut buffers[bound as usize];
                    parent.len = parent.len.or(b.len);
                    if let Some(TextureSizeDesc::Texels(_)) = b.texture_size {
                        parent.texture_size = parent.texture_size.or(b.texture_size);
                    }
                    Ok(bound)
                }
            })
            .collect::<Result<_, _>>()?;
        // A texture sized like another names the child's index of it: the parent's now.
        for (i, b) in child.buffers.iter().enumerate() {
            let Some(TextureSizeDesc::Like(like)) = b.texture_size else {
                continue;
            };
            let like = *buffer_map.get(like as usize).ok_or_else(|| {
                InvalidDescription(format!(
                    "texture `{}` of subgraph `{}` is sized like no texture of its graph",
                    b.name, node.name
                ))
            })?;
            let at = &mut buffers[buffer_map[i] as usize];
            if b.role == Role::Owned || at.texture_size.is_none() {
                at.texture_size = Some(TextureSizeDesc::Like(like));
            }
        }
        let remap = Remap {
            prefix: &node.name,
            buffers: &buffer_map,
            parent: desc,
            child: &child,
        };
        // A graph-owned texture sized by the child's parameters reads the parent's of the same names.
        for (i, b) in child.buffers.iter().enumerate() {
            let Some(TextureSizeDesc::Params(axes)) = b.texture_size else {
                continue;
            };
            let mut parent_axes = axes;
            for axis in parent_axes.iter_mut() {
                if let AxisSizeDesc::Param(offset) = *axis {
                    *axis = AxisSizeDesc::Param(remap.param(offset, &b.name)?);
                }
            }
            buffers[buffer_map[i] as usize].texture_size =
                Some(TextureSizeDesc::Params(parent_axes));
        }
        let offset = nodes.len() as u32;
        for n in child.nodes.iter() {
            nodes.push(NodeDesc {
                name: prefix(&n.name).into(),
                op: remap.op(&n.op, &n.name)?,
                // A child's node placed nowhere of its own runs where its subgraph node was placed.
                on: n.on.or(desc.nodes[index].on),
            });
        }
        for e in child.edges.iter() {
            edges.push(EdgeDesc {
                from: e.from + offset,
                to: e.to + offset,
                origin: remap.origin(e.origin),
            });
        }
        for block in child.blocks.iter() {
            blocks.push(crate::desc::BlockDesc {
                name: prefix(&block.name).into(),
                count: block.count,
                flag: block.flag.map(|f| remap.buffer(f)),
                nodes: block.nodes.iter().map(|&n| n + offset).collect(),
                branches: block.branches.clone(),
                cases: block.cases.clone(),
            });
        }
        let count = child.nodes.len() as u32;
        expanded[index] = Some((offset..offset + count).collect());
        let has_in = |n: u32| child.edges.iter().any(|e| e.to == n);
        let has_out = |n: u32| child.edges.iter().any(|e| e.from == n);
        for root in (0..count).filter(|&n| !has_in(n)) {
            edges.push(EdgeDesc {
                from: index as u32,
                to: root + offset,
                origin: EdgeOriginDesc::Explicit,
            });
        }
        // A child without nodes leaves the join node itself as the exit.
        if count > 0 {
            exits[index] = (0..count)
                .filter(|&n| !has_out(n))
                .map(|n| n + offset)
                .collect();
        }
        nodes[index].op = OpDesc::Empty;
    }
    for e in desc.edges.iter() {
        for &from in &exits[e.from as usize] {
            edges.push(EdgeDesc { from, ..*e });
        }
    }
    let mut flat = with_schedule(desc, buffers, nodes, edges, blocks).ok_or_else(|| {
        InvalidDescription(format!(
            "graph `{}` has a cycle once its subgraphs are flattened",
            desc.name
        ))
    })?;
    // A subgraph in a block: its child's nodes are the members, in the flattened graph's order.
    let position = |m: &u32| flat.topological_order.iter().position(|o| o == m);
    let blocks: Vec<BlockDesc> = flat
        .blocks
        .iter()
        .map(|block| {
            // Each child node runs in the branch of the subgraph node it replaces.
            let mut members: Vec<(u32, u32)> = block
                .nodes
                .iter()
                .enumerate()
                .flat_map(|(at, &n)| {
                    let branch = block.branch(at);
                    match expanded.get(n as usize) {
                        Some(Some(children)) => children.iter().map(|&c| (c, branch)).collect(),
                        _ => vec![(n, branch)],
                    }
                })
                .collect();
            members.sort_by_key(|(n, _)| position(n));
            let branches = match block.branches.is_empty() {
                true => List::default(),
                false => members.iter().map(|&(_, b)| b).collect(),
            };
            BlockDesc {
                nodes: members.iter().map(|&(n, _)| n).collect(),
                branches,
                ..block.clone()
            }
        })
        .collect();
    flat.blocks = blocks.into();
    Ok(Cow::Owned(flat))
}

/// A description of `template`'s name and parameters over these buffers, nodes, edges and blocks, its
/// topological order, levels and partitions computed from the edges; `None` if they have a cycle.
pub(crate) fn with_schedule(
    template: &GraphDesc,
    buffers: impl Into<List<BufferDesc>>,
    nodes: impl Into<List<NodeDesc>>,
    edges: Vec<EdgeDesc>,
    blocks: impl Into<List<BlockDesc>>,
) -> Option<GraphDesc> {
    let nodes = nodes.into();
    let pairs: Vec<(usize, usize)> = edges
        .iter()
        .map(|e| (e.from as usize, e.to as usize))
        .collect();
    let is_host: Vec<bool> = nodes
        .iter()
        .map(|n| matches!(n.op, OpDesc::Host { .. }))
        .collect();
    let schedule = schedule(nodes.len(), &pairs, &is_host)?;
    let indices = |list: &[usize]| list.iter().map(|&n| n as u32).collect();
    Some(GraphDesc {
        name: template.name.clone(),
        params: template.params.clone(),
        buffers: buffers.into(),
        nodes,
        edges: edges.into(),
        topological_order: indices(&schedule.order),
        levels: schedule.levels.iter().map(|l| indices(l)).collect(),
        partitions: schedule
            .partitions
            .iter()
            .map(|p| match p {
                Partition::Gpu { levels } => PartitionDesc::Gpu {
                    levels: levels.iter().map(|l| indices(l)).collect(),
                },
                Partition::Host { nodes } => PartitionDesc::Host {
                    nodes: indices(nodes),
                },
            })
            .collect(),
        blocks: blocks.into(),
    })
}

/// A child's indices and parameter offsets in its parent.
struct Remap<'a> {
    /// The subgraph node's name, which prefixes the child's names.
    prefix: &'a str,
    buffers: &'a [u32],
    parent: &'a GraphDesc,
    child: &'a GraphDesc,
}

impl Remap<'_> {
    fn buffer(&self, b: u32) -> u32 {
        self.buffers[b as usize]
    }

    fn op(&self, op: &OpDesc, node: &str) -> Result<OpDesc, InvalidDescription> {
        let access = |list: &[crate::desc::AccessDesc]| {
            list.iter()
                .map(|a| crate::desc::AccessDesc {
                    buffer: self.buffer(a.buffer),
                    mode: a.mode,
                })
                .collect()
        };
        Ok(match op {
            OpDesc::Kernel(k) => OpDesc::Kernel(KernelDesc {
                bindings: access(&k.bindings),
                dispatch: match &k.dispatch {
                    DispatchDesc::BufferLen(b) => DispatchDesc::BufferLen(self.buffer(*b)),
                    DispatchDesc::Indirect(b) => DispatchDesc::Indirect(self.buffer(*b)),
                    DispatchDesc::Threads(dims) => DispatchDesc::Threads(self.dims(dims, node)?),
                    DispatchDesc::Workgroups(dims) => {
                        DispatchDesc::Workgroups(self.dims(dims, node)?)
                    }
                },
                range: k.range.as_ref().map(|r| self.range(r, node)).transpose()?,
                overrides: k
                    .overrides
                    .iter()
                    .map(|o| {
                        Ok(crate::desc::OverrideDesc {
                            key: o.key.clone(),
                            value: self.size(&o.value, node)?,
                        })
                    })
                    .collect::<Result<Vec<_>, InvalidDescription>>()?
                    .into(),
                alternative: k
                    .alternative
                    .as_ref()
                    .map(|a| crate::desc::AlternativeDesc {
                        group: format!("{}.{}", self.prefix, a.group).into(),
                        choice: a.choice,
                    }),
                ..k.clone()
            }),
            OpDesc::Copy {
                src,
                dst,
                src_range,
                dst_range,
            } => OpDesc::Copy {
                src: self.buffer(*src),
                dst: self.buffer(*dst),
                src_range: self.range(src_range, node)?,
                dst_range: self.range(dst_range, node)?,
            },
            OpDesc::Upload { buffer, range } => OpDesc::Upload {
                buffer: self.buffer(*buffer),
                range: self.range(range, node)?,
            },
            OpDesc::Readback { buffer, range } => OpDesc::Readback {
                buffer: self.buffer(*buffer),
                range: self.range(range, node)?,
            },
            OpDesc::Host { accesses } => OpDesc::Host {
                accesses: access(accesses),
            },
            OpDesc::Interop { accesses } => OpDesc::Interop {
                accesses: access(accesses),
            },
            OpDesc::Empty => OpDesc::Empty,
            OpDesc::Subgraph { .. } => {
                return Err(InvalidDescription(format!(
                    "subgraph node `{node}` was left after flattening"
                )));
            }
        })
    }

    fn origin(&self, origin: EdgeOriginDesc) -> EdgeOriginDesc {
        match origin {
            EdgeOriginDesc::Inferred { buffer, hazard } => EdgeOriginDesc::Inferred {
                buffer: self.buffer(buffer),
                hazard,
            },
            other => other,
        }
    }

    fn dims(&self, dims: &[SizeDesc; 3], node: &str) -> Result<[SizeDesc; 3], InvalidDescription> {
        Ok([
            self.size(&dims[0], node)?,
            self.size(&dims[1], node)?,
            self.size(&dims[2], node)?,
        ])
    }

    fn range(&self, range: &RangeDesc, node: &str) -> Result<RangeDesc, InvalidDescription> {
        Ok(RangeDesc {
            start: self.size(&range.start, node)?,
            end: self.size(&range.end, node)?,
        })
    }

    fn size(&self, size: &SizeDesc, node: &str) -> Result<SizeDesc, InvalidDescription> {
        let steps = size
            .steps
            .iter()
            .map(|&step| match step {
                SizeStep::Len(b) => Ok(SizeStep::Len(self.buffer(b))),
                SizeStep::Extent { texture, axis } => Ok(SizeStep::Extent {
                    texture: self.buffer(texture),
                    axis,
                }),
                SizeStep::Param(offset) => self.param(offset, node).map(SizeStep::Param),
                other => Ok(other),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SizeDesc {
            text: size.text.clone(),
            steps: steps.into(),
        })
    }

    /// The parent's offset of the child's parameter byte `offset`: the same field by name.
    fn param(&self, offset: u32, node: &str) -> Result<u32, InvalidDescription> {
        let field = self
            .child
            .params
            .fields
            .iter()
            .find(|f| offset >= f.offset && offset < f.offset + f.ty.in_params().size());
        let parent = field.and_then(|f| {
            self.parent
                .params
                .fields
                .iter()
                .find(|p| p.name == f.name && p.ty == f.ty)
                .map(|p| p.offset + (offset - f.offset))
        });
        parent.ok_or_else(|| {
            InvalidDescription(format!(
                "`{node}` of graph `{}` reads parameter byte {offset}, which its parent `{}` does not declare",
                self.child.name, self.parent.name
            ))
        })
    }
}
