//! Empty nodes and barriers: no work, only ordering. A barrier comes after every node declared before it that
//! nothing declared before it depends on (SYCL's `depends_on_all_leaves`).

#![forbid(unsafe_code)]

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::desc::{EdgeOriginDesc, GraphDesc, OpDesc};
use graph_core::file;
use graph_core::library::Library;
use graph_core::plan::{PlanPartition, plan};

/// `dst = src + 1`.
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

/// `z = x + y`.
fn sum() -> KernelSpec {
    KernelSpec::wgsl(
        "@compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
             if (gid.x < arrayLength(&z)) { z[gid.x] = x[gid.x] + y[gid.x]; }
         }",
    )
    .read("x")
    .read("y")
    .write("z")
}

/// Two chains `i -> a1 -> x` and `i -> b1 -> y` (through `ta`, `tb`), a barrier, then `z = x + y`, which
/// follows the barrier through an explicit edge unless `unjoined`.
fn two_chains_and_a_barrier(explicit_only: bool) -> GraphBuilder {
    chains(explicit_only, false)
}

fn chains(explicit_only: bool, unjoined: bool) -> GraphBuilder {
    let mut b = GraphBuilder::new("Joined");
    b.input("i", "f32");
    for out in ["ta", "tb", "x", "y", "z"] {
        b.output(out, "f32");
    }
    b.kernel("a1", add_one("i", "ta"))
        .kernel("a2", add_one("ta", "x"));
    b.kernel("b1", add_one("i", "tb"))
        .kernel("b2", add_one("tb", "y"));
    if explicit_only {
        b.explicit_edges_only().edge("a1", "a2").edge("b1", "b2");
    }
    b.barrier("sync");
    b.kernel("join", sum());
    if !unjoined {
        b.edge("sync", "join");
    }
    b
}

fn built(b: &GraphBuilder) -> GraphDesc {
    match b.build(&Library::EMPTY) {
        Ok(desc) => desc,
        Err(e) => panic!("{e}"),
    }
}

fn leaf_edges(desc: &GraphDesc) -> Vec<(u32, u32)> {
    desc.edges
        .iter()
        .filter(|e| e.origin == EdgeOriginDesc::Leaf)
        .map(|e| (e.from, e.to))
        .collect()
}

#[test]
fn a_barrier_follows_the_leaves_declared_before_it() {
    let desc = built(&two_chains_and_a_barrier(false));
    // a1 = 0, a2 = 1, b1 = 2, b2 = 3, sync = 4, join = 5: the leaves before `sync` are a2 and b2.
    assert_eq!(leaf_edges(&desc), vec![(1, 4), (3, 4)]);
    assert_eq!(desc.nodes[4].op, OpDesc::Empty);
}

#[test]
fn in_explicit_only_mode_a_barrier_orders_what_would_race() {
    built(&two_chains_and_a_barrier(true));
    // Without the barrier's edge, `join` reads x and y with no path from their writers: two races.
    let b = chains(true, true);
    let errors = b.build(&Library::EMPTY).expect_err("races");
    assert_eq!(errors.diagnostics.len(), 2, "{errors}");
    assert!(
        errors
            .diagnostics
            .iter()
            .all(|d| d.message.contains("race")),
        "{errors}"
    );
}

#[test]
fn an_empty_node_joins_what_its_edges_say() {
    let mut b = GraphBuilder::new("Join");
    b.input("i", "f32")
        .output("x", "f32")
        .output("y", "f32")
        .output("z", "f32");
    b.explicit_edges_only();
    b.kernel("a", add_one("i", "x"))
        .kernel("b", add_one("i", "y"));
    b.empty("both").edge("a", "both").edge("b", "both");
    b.kernel("join", sum()).edge("both", "join");
    let desc = built(&b);
    assert!(
        leaf_edges(&desc).is_empty(),
        "an empty node adds no edges of its own"
    );
    let plan = plan(&desc, &vec![64; desc.buffers.len()]).expect("a plan");
    let [PlanPartition::Gpu { levels }] = &plan.partitions[..] else {
        panic!("{:?}", plan.partitions);
    };
    // a, b | both (no step) | join: the empty level records nothing and needs no barrier.
    assert_eq!(levels.len(), 3);
    assert!(levels[1].steps.is_empty() && levels[1].hazards.is_empty());
    assert_eq!(
        levels[2].hazards.len(),
        2,
        "x and y, written two levels before"
    );
    assert_eq!(plan.dispatches, 3);
}

#[test]
fn a_cycle_through_a_barrier_names_the_leaf_edge() {
    let mut b = two_chains_and_a_barrier(false);
    b.edge("sync", "a1");
    let errors = b.build(&Library::EMPTY).expect_err("a cycle");
    let message = &errors.diagnostics[0].message;
    assert!(
        message.contains("was a leaf when the barrier was declared"),
        "{message}"
    );
}

#[test]
fn empty_nodes_and_barriers_survive_a_graph_file() {
    let b = two_chains_and_a_barrier(true);
    let text = file::to_json(b.graph());
    assert!(text.contains("\"barrier\": {}"), "{text}");
    assert_eq!(&file::from_json(&text).expect("it loads"), b.graph());
}
