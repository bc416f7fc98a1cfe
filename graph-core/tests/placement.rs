//! A graph across several GPUs, without a device: where the placement pass puts each node
//! (`graph_core::placement`), and what the split makes of it (`graph_core::split`): one part per GPU, the
//! transfers that keep every buffer's copies coherent, and edges that order them.

#![forbid(unsafe_code)]

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::desc::{GraphDesc, OpDesc};
use graph_core::file;
use graph_core::library::Library;
use graph_core::placement::{near_textures, node_cost, place};
use graph_core::split::{Transfer, split};

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

/// `v = v + 1`.
fn grow(v: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
             if (gid.x < arrayLength(&{v})) {{ {v}[gid.x] = {v}[gid.x] + 1.0; }}
         }}"
    ))
    .read_write(v)
}

fn build(b: &GraphBuilder) -> GraphDesc {
    b.build(&Library::EMPTY).expect("the graph checks")
}

/// `x -> first -> t -> second -> u -> third -> y`, `x` and `y` external.
fn relay() -> GraphBuilder {
    let mut b = GraphBuilder::new("Relay");
    b.input("x", "f32")
        .output("y", "f32")
        .owned("t", "f32", 64)
        .owned("u", "f32", 64)
        .kernel("first", add_one("x", "t"))
        .kernel("second", add_one("t", "u"))
        .kernel("third", add_one("u", "y"));
    b
}

fn node(desc: &GraphDesc, name: &str) -> usize {
    desc.nodes
        .iter()
        .position(|n| n.name == name)
        .expect("a node of the graph")
}

fn buffer(desc: &GraphDesc, name: &str) -> u32 {
    desc.buffers
        .iter()
        .position(|b| b.name == name)
        .expect("a buffer of the graph") as u32
}

#[test]
fn unplaced_nodes_follow_the_placed_ones_they_depend_on() {
    let mut b = relay();
    b.on("second", 1);
    let desc = build(&b);
    let cost = vec![1; desc.nodes.len()];
    // `first` precedes what is placed (a successor's GPU), `third` follows it (a predecessor's).
    assert_eq!(place(&desc, 2, &cost).expect("placed"), [1, 1, 1]);
    let mut b = relay();
    b.on("first", 0).on("second", 1);
    assert_eq!(place(&build(&b), 2, &cost).expect("placed"), [0, 1, 1]);
}

#[test]
fn independent_parts_spread_largest_first_onto_the_least_loaded_gpu() {
    let mut b = GraphBuilder::new("Four");
    for (i, len) in [1024u64, 4096, 2048, 4096].into_iter().enumerate() {
        let (x, y) = (format!("x{i}"), format!("y{i}"));
        b.owned(&x, "f32", len)
            .output(&y, "f32")
            .fill(&format!("f{i}"), &x, "1.0")
            .kernel(&format!("k{i}"), add_one(&x, &y));
    }
    let desc = build(&b);
    let bytes: Vec<u64> = desc
        .buffers
        .iter()
        .map(|b| u64::from(b.len.unwrap_or(1024)) * 4)
        .collect();
    let cost: Vec<u64> = (0..desc.nodes.len() as u32)
        .map(|n| node_cost(&desc, n, &bytes))
        .collect();
    let gpu_of = place(&desc, 2, &cost).expect("placed");
    // Costs 4096-wide parts first: part 1 on GPU 0, part 3 on GPU 1, then 2048 on GPU 0 or 1 (a tie: GPU 0),
    // then 1024 on the least loaded.
    let part = |i: usize| {
        let (f, k) = (
            gpu_of[node(&desc, &format!("f{i}"))],
            gpu_of[node(&desc, &format!("k{i}"))],
        );
        assert_eq!(f, k, "part {i} is never cut");
        f
    };
    assert_eq!([part(1), part(3), part(2), part(0)], [0, 1, 0, 1]);
    // One GPU takes everything.
    assert!(
        place(&desc, 1, &cost)
            .expect("placed")
            .iter()
            .all(|&g| g == 0)
    );
}

#[test]
fn a_block_runs_on_one_gpu_and_is_never_placed_apart() {
    let mut b = GraphBuilder::new("Block");
    b.input("flag", "u32")
        .inout("a", "f32")
        .inout("c", "f32")
        .kernel("k1", grow("a"))
        .kernel("k2", grow("c"))
        .if_block("maybe", "flag", &["k1", "k2"])
        .on("k2", 1);
    let desc = build(&b);
    let gpu_of = place(&desc, 2, &vec![1; desc.nodes.len()]).expect("placed");
    assert_eq!(
        gpu_of[node(&desc, "k1")],
        1,
        "k1 goes with k2, its block's other member"
    );
    // A hand-made description that places them apart is refused.
    let mut apart = desc.clone();
    apart.nodes.to_mut()[node(&desc, "k1")].on = Some(0);
    let err = place(&apart, 2, &vec![1; desc.nodes.len()]).expect_err("apart");
    assert!(err.0.contains("`k1` and `k2` run on one GPU"), "{}", err.0);
    // A GPU the set lacks.
    let err = place(&desc, 1, &vec![1; desc.nodes.len()]).expect_err("one GPU");
    assert!(
        err.0.contains("placed on GPU 1, and the set has 1"),
        "{}",
        err.0
    );
}

#[test]
fn a_chain_across_two_gpus_moves_each_buffer_once_each_way() {
    let mut b = relay();
    b.on("first", 0).on("second", 1).on("third", 0);
    let desc = build(&b);
    let gpu_of: Vec<u32> = place(&desc, 2, &vec![1; desc.nodes.len()]).expect("placed");
    let home = [Some(0), Some(0), None, None];
    let s = split(&desc, 2, &gpu_of, &home, &[64; 4]).expect("split");
    let (t, u) = (buffer(&desc, "t"), buffer(&desc, "u"));
    let count = desc.nodes.len() as u32;
    assert_eq!(
        s.transfers,
        [
            Transfer {
                from: 0,
                to: 1,
                buffers: vec![t],
                send: count,
                recv: count,
            },
            Transfer {
                from: 1,
                to: 0,
                buffers: vec![u],
                send: count + 1,
                recv: count + 1,
            },
        ]
    );
    // Each part keeps the indices: its own nodes, the other's empty, a host task per transfer end.
    let (p0, p1) = (&s.parts[0], &s.parts[1]);
    assert!(matches!(
        p0.nodes[node(&desc, "first")].op,
        OpDesc::Kernel(_)
    ));
    assert!(matches!(p0.nodes[node(&desc, "second")].op, OpDesc::Empty));
    assert!(matches!(
        p1.nodes[node(&desc, "second")].op,
        OpDesc::Kernel(_)
    ));
    let host = |p: &GraphDesc, n: u32| matches!(p.nodes[n as usize].op, OpDesc::Host { .. });
    assert!(host(p0, count) && host(p1, count) && host(p0, count + 1) && host(p1, count + 1));
    // On GPU 0: first, then the send of `t`, then the receive of `u`, then third.
    let before = |p: &GraphDesc, a: u32, b: u32| {
        let at = |n: u32| p.topological_order.iter().position(|&o| o == n);
        at(a) < at(b)
    };
    let (first, third) = (node(&desc, "first") as u32, node(&desc, "third") as u32);
    assert!(
        before(p0, first, count) && before(p0, count, count + 1) && before(p0, count + 1, third)
    );
    let second = node(&desc, "second") as u32;
    assert!(before(p1, count, second) && before(p1, second, count + 1));
    // The owned copy of `x` on GPU 1, which nothing there touches, is one element.
    assert_eq!(p1.buffers[buffer(&desc, "x") as usize].len, Some(1));
}

#[test]
fn a_buffer_written_away_from_home_comes_back_and_an_explicit_edge_is_kept() {
    let mut b = GraphBuilder::new("Away");
    b.inout("v", "f32")
        .output("w", "f32")
        .kernel("grow", grow("v"))
        .kernel("other", grow("w"))
        .edge("grow", "other")
        .on("grow", 1)
        .on("other", 0);
    let desc = build(&b);
    let gpu_of = place(&desc, 2, &vec![1; desc.nodes.len()]).expect("placed");
    let (v, w) = (buffer(&desc, "v"), buffer(&desc, "w"));
    let mut home = vec![None; desc.buffers.len()];
    home[v as usize] = Some(0);
    home[w as usize] = Some(0);
    let s = split(&desc, 2, &gpu_of, &home, &vec![64; desc.buffers.len()]).expect("split");
    let moves: Vec<(u32, u32, Vec<u32>)> = s
        .transfers
        .iter()
        .map(|t| (t.from, t.to, t.buffers.clone()))
        .collect();
    // `v` to GPU 1 for `grow`, the explicit edge to `other` (no buffer), and `v` home again at the end.
    assert_eq!(moves, [(0, 1, vec![v]), (1, 0, vec![]), (1, 0, vec![v])]);
}

#[test]
fn a_texture_does_not_move_between_gpus() {
    let mut b = GraphBuilder::new("Textured");
    b.texture("t", "texture_2d<rgba8unorm>", graph_core::ir::Role::Input)
        .output("y", "f32")
        .kernel(
            "grey",
            KernelSpec::wgsl(
                "@compute @workgroup_size(8, 8)
                 fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                     if (gid.x < 4u && gid.y < 4u) {
                         y[gid.y * 4u + gid.x] = textureLoad(t, vec2<i32>(gid.xy), 0).r;
                     }
                 }",
            )
            .read("t")
            .write("y")
            .threads(&["4", "4"]),
        )
        .on("grey", 1);
    let desc = build(&b);
    let gpu_of = place(&desc, 2, &vec![1; desc.nodes.len()]).expect("placed");
    let home = vec![Some(0); desc.buffers.len()];
    let err =
        split(&desc, 2, &gpu_of, &home, &vec![16; desc.buffers.len()]).expect_err("a texture");
    assert!(
        err.0.contains("texture `t`") && err.0.contains("do not move"),
        "{}",
        err.0
    );
    // Left to the pass, the texture's user goes where the texture is.
    let mut unplaced = desc.clone();
    unplaced.nodes.to_mut()[node(&desc, "grey")].on = None;
    let mut home = vec![None; desc.buffers.len()];
    home[buffer(&desc, "t") as usize] = Some(1);
    home[buffer(&desc, "y") as usize] = Some(0);
    let near = near_textures(&unplaced, &home);
    let gpu_of = place(&near, 2, &vec![1; desc.nodes.len()]).expect("placed");
    assert_eq!(gpu_of[node(&desc, "grey")], 1);
    split(&near, 2, &gpu_of, &home, &vec![16; desc.buffers.len()]).expect("only `y` moves");
}

#[test]
fn placements_are_kept_in_a_graph_file() {
    let mut b = relay();
    b.on("second", 1);
    let text = file::to_json(b.graph());
    assert!(text.contains("\"on\""), "{text}");
    let loaded = file::from_json(&text).expect("loads");
    assert_eq!(loaded.on, b.graph().on);
    let desc = GraphBuilder::from_graph(loaded, Default::default())
        .build(&Library::EMPTY)
        .expect("checks");
    assert_eq!(desc.nodes[node(&desc, "second")].on, Some(1));
    assert_eq!(desc.nodes[node(&desc, "first")].on, None);
}

#[test]
fn a_graph_owned_buffer_kept_from_the_replay_before_moves_from_where_it_was_left() {
    // `w1` (under a flag, on GPU 0) may not run: `r` then reads what `w2` (GPU 1) left in the replay before.
    let mut b = GraphBuilder::new("Kept");
    b.input("flag", "u32")
        .owned("acc", "f32", 64)
        .output("out", "f32")
        .fill("w1", "acc", "5.0")
        .if_block("maybe", "flag", &["w1"])
        .kernel("r", add_one("acc", "out"))
        .kernel("w2", grow("acc"))
        .on("w1", 0)
        .on("r", 0)
        .on("w2", 1);
    let desc = build(&b);
    let gpu_of = place(&desc, 2, &vec![1; desc.nodes.len()]).expect("placed");
    let mut home = vec![None; desc.buffers.len()];
    home[buffer(&desc, "flag") as usize] = Some(0);
    home[buffer(&desc, "out") as usize] = Some(0);
    let s = split(&desc, 2, &gpu_of, &home, &vec![64; desc.buffers.len()]).expect("split");
    let acc = buffer(&desc, "acc");
    let moves: Vec<(u32, u32, Vec<u32>)> = s
        .transfers
        .iter()
        .map(|t| (t.from, t.to, t.buffers.clone()))
        .collect();
    assert_eq!(moves, [(1, 0, vec![acc]), (0, 1, vec![acc])], "{moves:?}");
    let p0 = &s.parts[0];
    let at = |n: u32| p0.topological_order.iter().position(|&o| o == n);
    let count = desc.nodes.len() as u32;
    assert!(
        at(count) < at(node(&desc, "w1") as u32),
        "acc arrives before the block"
    );
}

#[test]
fn a_part_submits_its_own_work_before_it_waits_for_another_gpu() {
    // Two independent branches, one on each GPU, every buffer made on GPU 0: GPU 1's result comes home at
    // the end, after GPU 0's own branch, which must not wait for it.
    let mut b = GraphBuilder::new("Two");
    for i in 0..2 {
        let (x, y) = (format!("x{i}"), format!("y{i}"));
        b.input(&x, "f32")
            .output(&y, "f32")
            .kernel(&format!("k{i}"), add_one(&x, &y))
            .on(&format!("k{i}"), i);
    }
    let desc = build(&b);
    let gpu_of = place(&desc, 2, &vec![1; desc.nodes.len()]).expect("placed");
    let home = vec![Some(0); desc.buffers.len()];
    let s = split(&desc, 2, &gpu_of, &home, &vec![64; desc.buffers.len()]).expect("split");
    let k0 = node(&desc, "k0") as u32;
    let p0 = &s.parts[0];
    let first_gpu = p0.partitions.iter().position(|p| {
        matches!(p, graph_core::desc::PartitionDesc::Gpu { levels } if levels.iter().any(|l| l.contains(&k0)))
    });
    let receive = s
        .transfers
        .iter()
        .find(|t| t.to == 0)
        .expect("a transfer home")
        .recv;
    let receiving = p0.partitions.iter().position(|p| {
        matches!(p, graph_core::desc::PartitionDesc::Host { nodes } if nodes.contains(&receive))
    });
    assert!(first_gpu < receiving, "{:?}", p0.partitions);
}
