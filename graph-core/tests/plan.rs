//! The planner without a GPU: for the shapes the benchmark measures, how many level boundaries need a
//! barrier and which hazards each carries.

#![forbid(unsafe_code)]

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::desc::GraphDesc;
use graph_core::library::Library;
use graph_core::plan::{BufferHazard, HazardKind, Plan, PlanError, PlanPartition, PlanStep, plan};

/// A kernel `dst = src + 1` over `n` elements.
fn add_one(src: &str, dst: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
             if (gid.x < arrayLength(&{dst})) {{ {dst}[gid.x] = {src}[gid.x] + 1.0; }}
         }}"
    ))
    .read(src)
    .write(dst)
}

fn built(b: &GraphBuilder) -> GraphDesc {
    match b.build(&Library::EMPTY) {
        Ok(desc) => desc,
        Err(e) => panic!("{e}"),
    }
}

fn planned(desc: &GraphDesc) -> Plan {
    plan(desc, &vec![1024; desc.buffers.len()]).expect("a plan")
}

/// Per level of the only GPU partition: the hazards before it.
fn hazards(plan: &Plan) -> Vec<Vec<BufferHazard>> {
    match &plan.partitions[..] {
        [PlanPartition::Gpu { levels }] => levels.iter().map(|l| l.hazards.clone()).collect(),
        other => panic!("expected one GPU partition, got {other:?}"),
    }
}

fn barriers(plan: &Plan) -> usize {
    hazards(plan).iter().filter(|h| !h.is_empty()).count()
}

fn raw(buffer: u32) -> BufferHazard {
    BufferHazard {
        buffer,
        hazard: HazardKind::ReadAfterWrite,
    }
}

/// `b0 -> k1 -> b1 -> .. -> k{n} -> b{n}`.
fn chain(n: usize) -> GraphBuilder {
    let mut b = GraphBuilder::new("Chain");
    b.input("b0", "f32");
    for i in 1..=n {
        b.output(&format!("b{i}"), "f32");
        b.kernel(
            &format!("k{i}"),
            add_one(&format!("b{}", i - 1), &format!("b{i}")),
        );
    }
    b
}

#[test]
fn a_chain_needs_a_barrier_at_every_boundary_each_for_one_buffer() {
    let plan = planned(&built(&chain(100)));
    let hazards = hazards(&plan);
    assert_eq!(hazards.len(), 100);
    assert!(hazards[0].is_empty(), "nothing before the first level");
    assert_eq!(barriers(&plan), 99);
    for (level, list) in hazards.iter().enumerate().skip(1) {
        assert_eq!(list, &vec![raw(level as u32)], "level {level}");
    }
    assert_eq!(plan.dispatches, 100);
}

#[test]
fn a_fan_needs_one_barrier_for_the_shared_buffer() {
    let mut b = GraphBuilder::new("Fan");
    b.input("x", "f32").output("mid", "f32");
    b.kernel("root", add_one("x", "mid"));
    for i in 0..99 {
        b.output(&format!("out{i}"), "f32");
        b.kernel(&format!("leaf{i}"), add_one("mid", &format!("out{i}")));
    }
    let plan = planned(&built(&b));
    assert_eq!(barriers(&plan), 1);
    assert_eq!(
        hazards(&plan)[1],
        vec![raw(1)],
        "the 99 readers share one hazard"
    );
}

#[test]
fn independent_chains_share_their_barriers() {
    let mut b = GraphBuilder::new("Chains");
    for c in 0..10 {
        b.input(&format!("c{c}_0"), "f32");
        for i in 1..=10 {
            b.output(&format!("c{c}_{i}"), "f32");
            b.kernel(
                &format!("k{c}_{i}"),
                add_one(&format!("c{c}_{}", i - 1), &format!("c{c}_{i}")),
            );
        }
    }
    let desc = built(&b);
    let plan = planned(&desc);
    // Ten levels of ten dispatches: nine barriers, each for the ten buffers the level before wrote.
    assert_eq!(hazards(&plan).len(), 10);
    assert_eq!(barriers(&plan), 9);
    for list in &hazards(&plan)[1..] {
        assert_eq!(list.len(), 10);
        assert!(list.iter().all(|h| h.hazard == HazardKind::ReadAfterWrite));
    }
}

#[test]
fn a_diamond_orders_both_branches_before_the_join() {
    let mut b = GraphBuilder::new("Diamond");
    b.input("x", "f32")
        .output("a", "f32")
        .output("l", "f32")
        .output("r", "f32");
    b.output("d", "f32");
    b.kernel("top", add_one("x", "a"));
    b.kernel("left", add_one("a", "l"));
    b.kernel("right", add_one("a", "r"));
    let join = KernelSpec::wgsl(
        "@compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
             if (gid.x < arrayLength(&d)) { d[gid.x] = l[gid.x] + r[gid.x]; }
         }",
    )
    .read("l")
    .read("r")
    .write("d");
    b.kernel("join", join);
    let plan = planned(&built(&b));
    let hazards = hazards(&plan);
    assert_eq!(barriers(&plan), 2);
    assert_eq!(hazards[1], vec![raw(1)]);
    assert_eq!(hazards[2], vec![raw(2), raw(3)]);
}

#[test]
fn a_level_without_conflicts_needs_no_barrier_and_the_next_one_still_sees_the_writes() {
    // `w` writes x; `unrelated` (forced a level later) touches nothing of it; `late` reads x after both.
    let mut b = GraphBuilder::new("Skip");
    b.input("i", "f32")
        .output("x", "f32")
        .output("y", "f32")
        .output("z", "f32");
    b.kernel("w", add_one("i", "x"));
    b.kernel("unrelated", add_one("i", "y"));
    b.edge("w", "unrelated");
    b.kernel("late", add_one("x", "z"));
    b.edge("unrelated", "late");
    let plan = planned(&built(&b));
    let hazards = hazards(&plan);
    assert_eq!(hazards.len(), 3);
    assert!(
        hazards[1].is_empty(),
        "`unrelated` touches nothing `w` touched"
    );
    assert_eq!(
        hazards[2],
        vec![raw(1)],
        "the write of x is still unordered"
    );
}

#[test]
fn host_tasks_split_the_plan_and_copies_follow_dispatches() {
    let mut b = GraphBuilder::new("Split");
    b.input("x", "f32")
        .output("y", "f32")
        .output("z", "f32")
        .output("w", "f32");
    b.kernel("k", add_one("x", "y"));
    b.copy("c", "x", "w");
    b.host("h", &[("y", graph_core::ir::AccessMode::Read)]);
    b.kernel("after", add_one("y", "z"));
    b.edge("h", "after");
    let desc = built(&b);
    let plan = planned(&desc);
    let [
        PlanPartition::Gpu { levels: first },
        PlanPartition::Host { nodes },
        PlanPartition::Gpu { levels: last },
    ] = &plan.partitions[..]
    else {
        panic!("{:?}", plan.partitions);
    };
    assert_eq!(
        first[0].steps,
        vec![
            PlanStep::Dispatch { node: 0 },
            PlanStep::Copy {
                node: 1,
                src: 0,
                dst: 3,
                src_offset: 0,
                dst_offset: 0,
                bytes: 4096
            }
        ]
    );
    assert_eq!(nodes, &vec![2]);
    assert_eq!(
        last[0].hazards,
        vec![],
        "a new partition starts after a wait"
    );
}

#[test]
fn lengths_are_checked_not_trusted() {
    let mut b = GraphBuilder::new("Copy");
    b.input("x", "f32").output("y", "f32");
    b.copy("c", "x", "y");
    let desc = built(&b);
    assert_eq!(
        plan(&desc, &[10]),
        Err(PlanError::Lengths {
            expected: 2,
            given: 1
        })
    );
    assert_eq!(
        plan(&desc, &[10, 11]),
        Err(PlanError::CopyLengths {
            node: 0,
            src_len: 10,
            dst_len: 11
        })
    );
}

#[test]
fn ranges_become_byte_offsets_and_are_checked_against_the_bound_lengths() {
    let mut b = GraphBuilder::new("Ranges");
    b.input("x", "vec2<f32>").output("y", "vec2<f32>");
    b.copy("c", "x[2..x.len() - 1]", "y[1..]");
    b.fill("f", "y[..1]", "vec2<f32>(0.0)");
    let desc = built(&b);
    let planned = plan(&desc, &[10, 8]).expect("a plan");
    let PlanPartition::Gpu { levels } = &planned.partitions[0] else {
        panic!("{:?}", planned.partitions);
    };
    let copy = levels
        .iter()
        .flat_map(|l| &l.steps)
        .find(|s| s.node() == Some(0));
    assert_eq!(
        copy,
        Some(&PlanStep::Copy {
            node: 0,
            src: 0,
            dst: 1,
            src_offset: 16,
            dst_offset: 8,
            bytes: 7 * 8
        })
    );
    // x[2..9] is 7 elements, y[1..] is len - 1.
    assert_eq!(
        plan(&desc, &[10, 9]),
        Err(PlanError::CopyLengths {
            node: 0,
            src_len: 7,
            dst_len: 8
        })
    );
    assert_eq!(
        plan(&desc, &[2, 8]),
        Err(PlanError::Range {
            node: 0,
            buffer: 0,
            start: 2,
            end: 1,
            len: 2
        })
    );
    assert!(matches!(
        plan(&desc, &[0, 8]),
        Err(PlanError::Bound { node: 0, .. })
    ));
}

/// A write two levels before its reader, past a barrier that carried another buffer, is carried by the
/// first barrier before the reader (found in review: a plan that forgot it would let a per-buffer barrier race).
#[test]
fn a_write_past_a_barrier_for_another_buffer_is_still_carried() {
    let mut b = GraphBuilder::new("Past");
    b.input("i", "f32");
    for out in ["p", "c", "r", "s"] {
        b.output(out, "f32");
    }
    b.kernel("wp", add_one("i", "p"));
    b.kernel("wc", add_one("i", "c"));
    b.kernel("rp", add_one("p", "r"));
    b.kernel("sc", add_one("c", "s"));
    b.edge("rp", "sc");
    let plan = planned(&built(&b));
    let hazards = hazards(&plan);
    assert_eq!(hazards.len(), 3);
    assert_eq!(hazards[1], vec![raw(1)], "`rp` reads p");
    assert_eq!(
        hazards[2],
        vec![raw(2)],
        "`sc` reads c, written two levels before"
    );
}

#[test]
fn a_graph_file_writes_ranges_as_text_and_means_what_the_builder_means() {
    let text = r#"{ "format": 1, "graph": {
        "name": "Ranges",
        "buffers": [
            { "name": "x", "elem": "vec2<f32>", "role": "input" },
            { "name": "y", "elem": "vec2<f32>", "role": "output" }
        ],
        "nodes": [
            { "name": "c", "copy": { "src": "x", "dst": "y",
                                     "src_range": { "start": "2", "end": "x.len() - 1" },
                                     "dst_range": { "start": "1" } } },
            { "name": "f", "fill": { "dst": "y", "value": "vec2<f32>(0.0)", "range": { "end": "1" } } }
        ]
    } }"#;
    let loaded = graph_core::file::from_json(text).expect("it loads");
    let mut b = GraphBuilder::new("Ranges");
    b.input("x", "vec2<f32>").output("y", "vec2<f32>");
    b.copy("c", "x[2..x.len() - 1]", "y[1..]");
    b.fill("f", "y[..1]", "vec2<f32>(0.0)");
    assert_eq!(&loaded, b.graph());
    let text = graph_core::file::to_json(&loaded);
    assert_eq!(
        graph_core::file::from_json(&text).expect("it loads again"),
        loaded
    );
}
