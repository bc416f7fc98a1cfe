//! The one function that turns a checked graph into its description, whatever front door it came through.

use std::borrow::Cow;

use crate::check::{CheckedDispatch, CheckedGraph, CheckedNode, CheckedRange, SizeProgram};
use crate::deps::{BufferAccess, EdgeOrigin};
use crate::desc::{
    AccessDesc, AlternativeDesc, BlockDesc, BufferDesc, DispatchDesc, EdgeDesc, EdgeOriginDesc,
    GraphDesc, KernelArgDesc, KernelDesc, List, NodeDesc, OpDesc, OverrideDesc, ParamFieldDesc,
    ParamsDesc, PartitionDesc, RangeDesc, SizeDesc, SubgraphBinding,
};
use crate::schedule::Partition;

/// The description of `checked`: plain owned data, everything the runtime needs and nothing it must re-check
/// (it still validates a description it did not get from here, see [`GraphDesc::validate`]).
///
/// Indices fit `u32`: the checks refuse longer buffers, and a graph has far fewer nodes than that.
pub fn describe(checked: &CheckedGraph) -> GraphDesc {
    let g = &checked.graph;
    let layout = &checked.params;
    GraphDesc {
        name: g.name.clone().into(),
        params: ParamsDesc {
            size: layout.size,
            storage: g.params_storage,
            fields: layout
                .fields
                .iter()
                .map(|f| ParamFieldDesc {
                    name: f.name.clone().into(),
                    ty: f.ty,
                    offset: f.offset,
                })
                .collect(),
            wgsl_struct: layout.wgsl_struct().into(),
        },
        buffers: g
            .buffers
            .iter()
            .zip(&checked.buffer_types)
            .zip(checked.textures.iter().zip(&checked.texture_sizes))
            .zip(&checked.samplers)
            .map(
                |(((b, &elem), (texture, &texture_size)), sampler)| BufferDesc {
                    name: b.name.clone().into(),
                    elem,
                    len: b.len.map(index),
                    role: b.role,
                    no_alias: g.no_alias.contains(&b.name),
                    texture: texture.map(|t| t.declared().into()),
                    texture_size,
                    sampler: sampler.map(|s| s.declared().into()),
                },
            )
            .collect(),
        nodes: g
            .nodes
            .iter()
            .zip(&checked.nodes)
            .map(|(node, op)| NodeDesc {
                name: node.name.clone().into(),
                op: match describe_op(op) {
                    OpDesc::Kernel(k) => OpDesc::Kernel(KernelDesc {
                        alternative: alternative(g, &node.name),
                        no_fusion: g.no_fusion.contains(&node.name),
                        ..k
                    }),
                    op => op,
                },
                on: g.on.iter().find(|p| p.node == node.name).map(|p| p.gpu),
            })
            .collect(),
        edges: checked
            .edges
            .iter()
            .map(|e| EdgeDesc {
                from: index(e.from),
                to: index(e.to),
                origin: match e.origin {
                    EdgeOrigin::Explicit(_) => EdgeOriginDesc::Explicit,
                    EdgeOrigin::Inferred { buffer, hazard } => EdgeOriginDesc::Inferred {
                        buffer: index(buffer),
                        hazard,
                    },
                    EdgeOrigin::Leaf => EdgeOriginDesc::Leaf,
                },
            })
            .collect(),
        topological_order: indices(&checked.schedule.order),
        levels: checked.schedule.levels.iter().map(|l| indices(l)).collect(),
        partitions: checked
            .schedule
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
        blocks: checked
            .blocks
            .iter()
            .map(|b| {
                // Members in the schedule's order: how the plan runs them; each keeps its branch.
                let mut members: Vec<(usize, u32)> = b
                    .nodes
                    .iter()
                    .copied()
                    .zip(b.branches.iter().copied())
                    .collect();
                members.sort_by_key(|(n, _)| checked.schedule.order.iter().position(|o| o == n));
                let nodes: Vec<usize> = members.iter().map(|&(n, _)| n).collect();
                let branched = members.iter().any(|&(_, branch)| branch != 0);
                BlockDesc {
                    name: b.name.clone().into(),
                    count: b.count,
                    flag: b.flag.map(index),
                    nodes: indices(&nodes),
                    branches: match branched || b.cases.is_some() {
                        true => members.iter().map(|&(_, branch)| branch).collect(),
                        false => List::default(),
                    },
                    cases: b.cases.clone().map(List::from),
                }
            })
            .collect(),
    }
}

/// Node `name`'s group of alternatives and place in it, if it is a choice.
fn alternative(graph: &crate::ir::Graph, name: &str) -> Option<AlternativeDesc> {
    graph.alternatives.iter().find_map(|group| {
        let choice = group.choices.iter().position(|c| c == name)?;
        Some(AlternativeDesc {
            group: group.name.clone().into(),
            choice: index(choice),
        })
    })
}

fn describe_op(op: &CheckedNode) -> OpDesc {
    match op {
        CheckedNode::Kernel(k) => OpDesc::Kernel(KernelDesc {
            declarations: k.declarations.clone().into(),
            args: k
                .args
                .iter()
                .map(|(name, ty, value)| KernelArgDesc {
                    name: name.clone().into(),
                    ty: ty.clone().into(),
                    value: value.clone().into(),
                })
                .collect(),
            source: k.source.clone().into(),
            entry: k.entry.clone().into(),
            workgroup_size: k.workgroup_size,
            bindings: accesses(&k.bindings),
            dispatch: match &k.dispatch {
                CheckedDispatch::BufferLen(b) => DispatchDesc::BufferLen(index(*b)),
                CheckedDispatch::Threads(dims) => DispatchDesc::Threads(sizes(dims)),
                CheckedDispatch::Workgroups(dims) => DispatchDesc::Workgroups(sizes(dims)),
                CheckedDispatch::Indirect(b) => DispatchDesc::Indirect(index(*b)),
            },
            foldable: k.foldable,
            range: k.range.as_ref().map(range),
            alternative: None,
            pointwise: k.pointwise,
            reach: k.reach,
            grid: k.grid.clone(),
            no_fusion: false,
            overrides: k
                .overrides
                .iter()
                .map(|(key, program)| OverrideDesc {
                    key: key.clone().into(),
                    value: size(program),
                })
                .collect(),
        }),
        CheckedNode::Copy {
            src_range,
            dst_range,
        } => OpDesc::Copy {
            src: index(src_range.buffer),
            dst: index(dst_range.buffer),
            src_range: range(src_range),
            dst_range: range(dst_range),
        },
        CheckedNode::Upload { range: r } => OpDesc::Upload {
            buffer: index(r.buffer),
            range: range(r),
        },
        CheckedNode::Readback { range: r } => OpDesc::Readback {
            buffer: index(r.buffer),
            range: range(r),
        },
        CheckedNode::Host { accesses: list } => OpDesc::Host {
            accesses: accesses(list),
        },
        CheckedNode::Interop { accesses: list } => OpDesc::Interop {
            accesses: accesses(list),
        },
        CheckedNode::Empty => OpDesc::Empty,
        CheckedNode::Subgraph {
            path,
            child,
            bindings,
        } => OpDesc::Subgraph {
            path: path.clone().into(),
            graph: match child {
                Some(child) => Cow::Owned(GraphDesc::clone(child)),
                None => Cow::Borrowed(&crate::desc::UNRESOLVED),
            },
            bindings: bindings
                .iter()
                .map(|(name, a)| SubgraphBinding {
                    name: name.clone().into(),
                    buffer: index(a.buffer),
                    mode: a.mode,
                })
                .collect(),
        },
    }
}

fn accesses(list: &[BufferAccess]) -> List<AccessDesc> {
    list.iter()
        .map(|a| AccessDesc {
            buffer: index(a.buffer),
            mode: a.mode,
        })
        .collect()
}

/// The dimensions given, the missing ones 1.
fn sizes(dims: &[SizeProgram]) -> [SizeDesc; 3] {
    let dim = |d: usize| dims.get(d).map_or(SizeDesc::ONE, size);
    [dim(0), dim(1), dim(2)]
}

fn size(program: &SizeProgram) -> SizeDesc {
    SizeDesc {
        text: program.text.clone().into(),
        steps: Cow::Owned(program.steps.clone()),
    }
}

fn range(range: &CheckedRange) -> RangeDesc {
    RangeDesc {
        start: size(&range.start),
        end: size(&range.end),
    }
}

fn indices(list: &[usize]) -> List<u32> {
    list.iter().map(|&i| index(i)).collect()
}

/// An index or length the checks have bounded: buffers are at most `u32::MAX` elements long, and node and
/// buffer counts are far below it.
fn index<T: TryInto<u32>>(i: T) -> u32 {
    i.try_into().unwrap_or(u32::MAX)
}
