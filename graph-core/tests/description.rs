//! A description that did not come from the checks is validated before the runtime trusts it: every index and
//! every ordering invariant, each broken once here and reported as an error, never a panic.

use graph_core::desc::{
    AccessDesc, BufferDesc, DispatchDesc, GraphDesc, KernelDesc, NodeDesc, OpDesc, ParamFieldDesc,
    ParamsDesc, PartitionDesc, SizeDesc,
};
use graph_core::ir::{AccessMode, ParamsStorage, Role};
use graph_core::size::{SizeOp, SizeStep};
use graph_core::types::ValueType;

const KERNEL: KernelDesc = KernelDesc {
    declarations: "",
    args: &[],
    source: "",
    entry: "main",
    workgroup_size: [64, 1, 1],
    bindings: &[AccessDesc {
        buffer: 0,
        mode: AccessMode::ReadWrite,
    }],
    dispatch: DispatchDesc::Threads([
        SizeDesc {
            text: "params.n * 2",
            steps: &[
                SizeStep::Param(0),
                SizeStep::Literal(2),
                SizeStep::Op(SizeOp::Mul),
            ],
        },
        SizeDesc::ONE,
        SizeDesc::ONE,
    ]),
    foldable: false,
};

/// `k` (a kernel over `x`) -> `h` (a host task reading `x`).
const VALID: GraphDesc = GraphDesc {
    name: "hand",
    params: ParamsDesc {
        size: 8,
        storage: ParamsStorage::Immediates,
        fields: &[
            ParamFieldDesc {
                name: "n",
                ty: ValueType::U32,
                offset: 0,
            },
            ParamFieldDesc {
                name: "a",
                ty: ValueType::F32,
                offset: 4,
            },
        ],
        wgsl_struct: "",
    },
    buffers: &[BufferDesc {
        name: "x",
        elem: ValueType::F32,
        len: None,
        role: Role::InOut,
    }],
    nodes: &[
        NodeDesc {
            name: "k",
            op: OpDesc::Kernel(KERNEL),
        },
        NodeDesc {
            name: "h",
            op: OpDesc::Host {
                accesses: &[AccessDesc {
                    buffer: 0,
                    mode: AccessMode::Read,
                }],
            },
        },
    ],
    edges: &[[0, 1]],
    topological_order: &[0, 1],
    levels: &[&[0], &[1]],
    partitions: &[
        PartitionDesc::Gpu { levels: &[&[0]] },
        PartitionDesc::Host { nodes: &[1] },
    ],
};

/// A `'static` slice for a description made at run time (descriptions hold `'static` data).
fn leak<T>(items: Vec<T>) -> &'static [T] {
    items.leak()
}

#[track_caller]
fn refused(desc: GraphDesc, words: &str) {
    match desc.validate(8) {
        Ok(()) => panic!("expected {words:?} to be refused"),
        Err(e) => assert!(e.0.contains(words), "{e} lacks {words:?}"),
    }
}

#[test]
fn a_consistent_description_validates() {
    assert_eq!(VALID.validate(8), Ok(()));
}

#[test]
fn a_parameter_block_of_another_size_is_refused() {
    let e = VALID.validate(4).expect_err("4 bytes is not 8");
    assert_eq!(
        e.0,
        "the parameter block is 8 bytes, but its Rust type is 4"
    );
}

#[test]
fn out_of_range_indices_are_refused() {
    let mut d = VALID;
    d.edges = &[[0, 7]];
    refused(d, "edge 0 -> 7");
    let mut d = VALID;
    d.nodes = leak(vec![
        NodeDesc {
            name: "k",
            op: OpDesc::Kernel(KernelDesc {
                bindings: &[AccessDesc {
                    buffer: 3,
                    mode: AccessMode::Read,
                }],
                ..KERNEL
            }),
        },
        VALID.nodes[1],
    ]);
    refused(d, "kernel `k` binds buffer 3 of 1");
    let mut d = VALID;
    d.nodes = leak(vec![
        VALID.nodes[0],
        NodeDesc {
            name: "c",
            op: OpDesc::Copy { src: 0, dst: 0 },
        },
    ]);
    refused(d, "copy `c`");
}

#[test]
fn malformed_sizes_are_refused() {
    let with_size = |steps: &'static [SizeStep]| {
        let mut kernel = KERNEL;
        kernel.dispatch = DispatchDesc::Workgroups([
            SizeDesc { text: "bad", steps },
            SizeDesc::ONE,
            SizeDesc::ONE,
        ]);
        kernel
    };
    for (steps, words) in [
        (
            &[SizeStep::Op(SizeOp::Add)][..],
            "not a well-formed expression",
        ),
        (
            &[SizeStep::Param(4)][..],
            "byte 4 of the parameters, which is no `u32`",
        ),
        (&[SizeStep::Param(8)][..], "byte 8"),
        (&[SizeStep::Len(1)][..], "length of buffer 1 of 1"),
    ] {
        let mut d = VALID;
        d.nodes = leak(vec![
            NodeDesc {
                name: "k",
                op: OpDesc::Kernel(with_size(steps)),
            },
            VALID.nodes[1],
        ]);
        refused(d, words);
    }
}

#[test]
fn schedules_that_break_an_edge_are_refused() {
    let mut d = VALID;
    d.topological_order = &[1, 0];
    refused(d, "topological order puts node 1 before node 0");
    let mut d = VALID;
    d.topological_order = &[0, 0];
    refused(d, "node 0 is repeated");
    let mut d = VALID;
    d.levels = &[&[0, 1]];
    refused(d, "not in a later level");
    let mut d = VALID;
    d.levels = &[&[0]];
    refused(d, "leave out node 1");
    let mut d = VALID;
    d.partitions = &[
        PartitionDesc::Host { nodes: &[1] },
        PartitionDesc::Gpu { levels: &[&[0]] },
    ];
    refused(d, "the partitions run node 1 before node 0");
    let mut d = VALID;
    d.partitions = &[PartitionDesc::Gpu {
        levels: &[&[0], &[1]],
    }];
    refused(d, "partition of the other kind");
    let mut d = VALID;
    d.partitions = &[PartitionDesc::Gpu { levels: &[&[0]] }];
    refused(d, "node 1 is in no partition");
}
