//! A description that did not come from the checks is validated before the runtime trusts it: every index and
//! every ordering invariant, each broken once here and reported as an error, never a panic.

#![forbid(unsafe_code)]

use graph_core::deps::Hazard;
use graph_core::desc::{
    AccessDesc, BufferDesc, DispatchDesc, EdgeDesc, EdgeOriginDesc, GraphDesc, KernelDesc, List,
    NodeDesc, OpDesc, ParamFieldDesc, ParamsDesc, PartitionDesc, RangeDesc, SizeDesc,
};
use graph_core::ir::{AccessMode, ParamsStorage, Role};
use graph_core::size::{SizeOp, SizeStep};
use graph_core::types::ValueType;

/// An owned list, as a description made at run time holds.
fn list<T: Clone>(items: Vec<T>) -> List<T> {
    items.into()
}

fn kernel_with(bindings: Vec<AccessDesc>, dispatch: DispatchDesc) -> KernelDesc {
    KernelDesc {
        declarations: "".into(),
        args: list(vec![]),
        source: "".into(),
        entry: "main".into(),
        workgroup_size: [64, 1, 1],
        bindings: list(bindings),
        dispatch,
        foldable: false,
        range: None,
        alternative: None,
        pointwise: false,
        reach: None,
        grid: None,
        no_fusion: false,
        overrides: list(vec![]),
    }
}

fn sized(steps: Vec<SizeStep>) -> DispatchDesc {
    DispatchDesc::Workgroups([
        SizeDesc {
            text: "bad".into(),
            steps: list(steps),
        },
        SizeDesc::ONE,
        SizeDesc::ONE,
    ])
}

fn edge(from: u32, to: u32) -> EdgeDesc {
    EdgeDesc {
        from,
        to,
        origin: EdgeOriginDesc::Inferred {
            buffer: 0,
            hazard: Hazard::ReadAfterWrite,
        },
    }
}

fn node(name: &str, op: OpDesc) -> NodeDesc {
    NodeDesc {
        name: name.to_string().into(),
        op,
        on: None,
    }
}

fn read_write_x() -> AccessDesc {
    AccessDesc {
        buffer: 0,
        mode: AccessMode::ReadWrite,
    }
}

fn host_reading_x() -> NodeDesc {
    node(
        "h",
        OpDesc::Host {
            accesses: list(vec![AccessDesc {
                buffer: 0,
                mode: AccessMode::Read,
            }]),
        },
    )
}

/// `k` (a kernel over `x`, sized `params.n * 2`) -> `h` (a host task reading `x`).
fn valid() -> GraphDesc {
    let size = sized(vec![
        SizeStep::Param(0),
        SizeStep::Literal(2),
        SizeStep::Op(SizeOp::Mul),
    ]);
    GraphDesc {
        name: "hand".into(),
        params: ParamsDesc {
            size: 8,
            storage: ParamsStorage::Immediates,
            fields: list(vec![
                ParamFieldDesc {
                    name: "n".into(),
                    ty: ValueType::U32,
                    offset: 0,
                },
                ParamFieldDesc {
                    name: "a".into(),
                    ty: ValueType::F32,
                    offset: 4,
                },
            ]),
            wgsl_struct: "".into(),
        },
        buffers: list(vec![BufferDesc {
            name: "x".into(),
            elem: ValueType::F32,
            len: None,
            role: Role::InOut,
            no_alias: false,
            texture: None,
            texture_size: None,
            sampler: None,
        }]),
        nodes: list(vec![
            node("k", OpDesc::Kernel(kernel_with(vec![read_write_x()], size))),
            host_reading_x(),
        ]),
        edges: list(vec![edge(0, 1)]),
        topological_order: list(vec![0, 1]),
        levels: list(vec![list(vec![0]), list(vec![1])]),
        partitions: list(vec![
            PartitionDesc::Gpu {
                levels: list(vec![list(vec![0])]),
            },
            PartitionDesc::Host {
                nodes: list(vec![1]),
            },
        ]),
        blocks: list(vec![]),
    }
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
    assert_eq!(valid().validate(8), Ok(()));
}

#[test]
fn a_description_survives_json_unchanged() {
    let d = valid();
    let text = serde_json::to_string(&d).expect("a description serializes");
    let back: GraphDesc = serde_json::from_str(&text).expect("and reads back");
    assert_eq!(back, d);
}

#[test]
fn a_parameter_block_of_another_size_is_refused() {
    let e = valid().validate(4).expect_err("4 bytes is not 8");
    assert_eq!(
        e.0,
        "the parameter block is 8 bytes, but its Rust type is 4"
    );
}

#[test]
fn a_parameter_block_too_large_to_bind_is_refused() {
    // Found in review: a block of `u32::MAX` bytes once passed and overflowed at bake.
    let mut d = valid();
    d.params.size = u32::MAX;
    d.params.fields = list(vec![]);
    let e = d.validate(u32::MAX as usize).expect_err("too large");
    assert!(e.0.contains("at most 65536"), "{e}");
}

#[test]
fn out_of_range_indices_are_refused() {
    let mut d = valid();
    d.edges = list(vec![edge(0, 7)]);
    refused(d, "edge 0 -> 7");
    let mut d = valid();
    d.edges = list(vec![EdgeDesc {
        origin: EdgeOriginDesc::Inferred {
            buffer: 5,
            hazard: Hazard::WriteAfterRead,
        },
        ..edge(0, 1)
    }]);
    refused(d, "inferred from buffer 5 of 1");
    let mut d = valid();
    let read_3 = AccessDesc {
        buffer: 3,
        mode: AccessMode::Read,
    };
    d.nodes = list(vec![
        node(
            "k",
            OpDesc::Kernel(kernel_with(vec![read_3], sized(vec![SizeStep::Literal(1)]))),
        ),
        host_reading_x(),
    ]);
    refused(d, "kernel `k` binds buffer 3 of 1");
    let mut d = valid();
    d.nodes = list(vec![
        valid().nodes[0].clone(),
        node("c", copy(0, 0, whole(0))),
    ]);
    refused(d, "copy `c`");
}

fn whole(buffer: u32) -> RangeDesc {
    RangeDesc {
        start: SizeDesc {
            text: "0".into(),
            steps: list(vec![SizeStep::Literal(0)]),
        },
        end: SizeDesc {
            text: "len".into(),
            steps: list(vec![SizeStep::Len(buffer)]),
        },
    }
}

fn copy(src: u32, dst: u32, dst_range: RangeDesc) -> OpDesc {
    OpDesc::Copy {
        src,
        dst,
        src_range: whole(src),
        dst_range,
    }
}

#[test]
fn a_range_that_reads_a_parameter_or_a_missing_buffer_is_refused() {
    let mut d = valid();
    d.buffers = list(vec![d.buffers[0].clone(), d.buffers[0].clone()]);
    let mut by_param = whole(1);
    by_param.end.steps = list(vec![SizeStep::Param(0)]);
    let mut past = whole(1);
    past.start.steps = list(vec![SizeStep::Len(7)]);
    let with = |range: RangeDesc| {
        let mut d = d.clone();
        d.nodes = list(vec![node("c", copy(0, 1, range)), host_reading_x()]);
        d
    };
    assert_eq!(with(whole(1)).validate(8), Ok(()), "the positive control");
    for (range, why) in [
        (by_param, "reads a parameter"),
        (past, "length of buffer 7"),
    ] {
        refused(with(range), why);
    }
}

#[test]
fn malformed_sizes_are_refused() {
    for (steps, words) in [
        (
            vec![SizeStep::Op(SizeOp::Add)],
            "not a well-formed expression",
        ),
        (
            vec![SizeStep::Param(4)],
            "byte 4 of the parameters, which is no `u32`",
        ),
        (vec![SizeStep::Param(8)], "byte 8"),
        (vec![SizeStep::Len(1)], "length of buffer 1 of 1"),
    ] {
        let mut d = valid();
        d.nodes = list(vec![
            node(
                "k",
                OpDesc::Kernel(kernel_with(vec![read_write_x()], sized(steps))),
            ),
            host_reading_x(),
        ]);
        refused(d, words);
    }
}

#[test]
fn schedules_that_break_an_edge_are_refused() {
    let gpu = |levels: Vec<Vec<u32>>| PartitionDesc::Gpu {
        levels: list(levels.into_iter().map(list).collect()),
    };
    let host = |nodes: Vec<u32>| PartitionDesc::Host { nodes: list(nodes) };
    let mut d = valid();
    d.topological_order = list(vec![1, 0]);
    refused(d, "topological order puts node 1 before node 0");
    let mut d = valid();
    d.topological_order = list(vec![0, 0]);
    refused(d, "node 0 is repeated");
    let mut d = valid();
    d.levels = list(vec![list(vec![0, 1])]);
    refused(d, "not in a later level");
    let mut d = valid();
    d.levels = list(vec![list(vec![0])]);
    refused(d, "leave out node 1");
    let mut d = valid();
    d.partitions = list(vec![host(vec![1]), gpu(vec![vec![0]])]);
    refused(d, "the partitions run node 1 before node 0");
    let mut d = valid();
    d.partitions = list(vec![gpu(vec![vec![0], vec![1]])]);
    refused(d, "partition of the other kind");
    let mut d = valid();
    d.partitions = list(vec![gpu(vec![vec![0]])]);
    refused(d, "node 1 is in no partition");
}

/// An `if .. else` and a `switch` over fills, built and checked.
fn branched() -> GraphDesc {
    let mut b = graph_core::builder::GraphBuilder::new("Branched");
    b.output("y", "f32")
        .owned("flag", "u32", 1)
        .fill("set", "flag", "1u")
        .fill("one", "y", "1.0")
        .fill("two", "y", "2.0")
        .fill("three", "y", "3.0")
        .fill("four", "y", "4.0")
        .if_else("maybe", "flag", &["one"], &["two"])
        .switch("pick", "flag", &[(Some(5), &["three"]), (None, &["four"])]);
    b.build(&graph_core::library::Library::EMPTY)
        .expect("a good graph")
}

#[test]
fn branches_and_arm_values_that_do_not_fit_their_block_are_refused() {
    let desc = branched();
    desc.validate(0).expect("valid as built");
    assert_eq!(&*desc.blocks[0].branches, &[0, 1]);
    assert_eq!(desc.blocks[1].cases.as_deref(), Some(&[5][..]));
    let with = |change: &dyn Fn(&mut graph_core::desc::BlockDesc)| {
        let mut d = desc.clone();
        let mut blocks = d.blocks.to_vec();
        change(&mut blocks[1]);
        d.blocks = blocks.into();
        d
    };
    let refused = |d: GraphDesc, words: &str| match d.validate(0) {
        Ok(()) => panic!("expected {words:?} to be refused"),
        Err(e) => assert!(e.0.contains(words), "{e} lacks {words:?}"),
    };
    refused(
        with(&|b| b.branches = list(vec![0])),
        "branches for 2 nodes",
    );
    refused(with(&|b| b.branches = list(vec![0, 2])), "past its last");
    refused(
        with(&|b| b.cases = Some(list(vec![5, 5]))),
        "two arms for 5",
    );
    refused(
        with(&|b| {
            b.cases = None;
            b.count = 3;
        }),
        "no `if` or `switch`",
    );
    refused(with(&|b| b.flag = None), "no `if` or `switch`");
}
