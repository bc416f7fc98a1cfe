//! The memory plan without a GPU: lifetimes from the plan, placement by both heuristics (no two buffers that
//! live at one step share a byte), the buffers kept apart and why, and the barriers reuse needs.

#![forbid(unsafe_code)]

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::desc::GraphDesc;
use graph_core::ir::AccessMode;
use graph_core::library::Library;
use graph_core::memory::{
    Apart, HEURISTIC, Heuristic, Lifetime, MemoryPlan, Placement, add_alias_hazards, lifetimes,
    place, plan_memory,
};
use graph_core::plan::{Plan, PlanPartition, plan};
use proptest::prelude::*;

const ALIGNMENT: u64 = 256;

/// A kernel `dst = src + 1`.
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

/// The description's plan and memory plan, each buffer 1024 `f32`s.
fn planned(desc: &GraphDesc) -> (Plan, MemoryPlan) {
    let lens = vec![1024; desc.buffers.len()];
    let plan = plan(desc, &lens).expect("a plan");
    let bytes = vec![4096; desc.buffers.len()];
    let memory = plan_memory(desc, &plan, &bytes, &[], ALIGNMENT, true);
    (plan, memory)
}

fn index(desc: &GraphDesc, name: &str) -> usize {
    desc.buffers
        .iter()
        .position(|b| b.name == name)
        .unwrap_or_else(|| panic!("no buffer `{name}`"))
}

/// `input -> t1 -> .. -> t{n-1} -> output`, the `t`s graph-owned.
fn pipeline(n: usize) -> GraphBuilder {
    let mut b = GraphBuilder::new("Pipeline");
    b.input("input", "f32").output("output", "f32");
    let name = |i: usize| match i {
        0 => "input".to_string(),
        i if i == n => "output".to_string(),
        i => format!("t{i}"),
    };
    for i in 1..n {
        b.owned(&format!("t{i}"), "f32", 1024);
    }
    for i in 1..=n {
        b.kernel(&format!("k{i}"), add_one(&name(i - 1), &name(i)));
    }
    b
}

#[test]
fn a_pipeline_of_100_stages_needs_two_intermediates_of_memory() {
    let desc = built(&pipeline(100));
    let (_, memory) = planned(&desc);
    assert_eq!(memory.conflict(), None);
    assert_eq!(memory.unaliased_bytes, 99 * 4096);
    // Each stage reads one intermediate and writes the next: two live at each step, in two heaps (a kernel
    // binds a heap read-only or writable, not both), each intermediate after the one before.
    assert_eq!(memory.heaps, vec![4096, 4096]);
    assert_eq!(memory.heap_bytes, 2 * 4096);
    for i in 2..100 {
        let (a, b) = (
            index(&desc, &format!("t{}", i - 1)),
            index(&desc, &format!("t{i}")),
        );
        let heap = |b: usize| memory.placements[b].expect("placed").heap;
        assert_ne!(heap(a), heap(b), "t{} and t{i}", i - 1);
    }
    let t1 = index(&desc, "t1");
    let t3 = index(&desc, "t3");
    assert!(memory.sharing_with(t1 as u32).contains(&(t3 as u32)));
    let input = index(&desc, "input");
    assert_eq!(
        memory.placements[input], None,
        "external buffers are bound, not placed"
    );
    assert_eq!(memory.apart[input], None);
}

#[test]
fn lifetimes_run_from_the_first_level_that_touches_a_buffer_to_the_last() {
    let desc = built(&pipeline(4));
    let lens = vec![1024; desc.buffers.len()];
    let spans = lifetimes(&desc, &plan(&desc, &lens).expect("a plan"));
    assert_eq!(spans[index(&desc, "input")], Some((0, 0)));
    assert_eq!(spans[index(&desc, "t1")], Some((0, 1)));
    assert_eq!(spans[index(&desc, "t2")], Some((1, 2)));
    assert_eq!(spans[index(&desc, "t3")], Some((2, 3)));
    assert_eq!(spans[index(&desc, "output")], Some((3, 3)));
}

#[test]
fn without_aliasing_nothing_is_placed() {
    let desc = built(&pipeline(10));
    let lens = vec![1024; desc.buffers.len()];
    let plan = plan(&desc, &lens).expect("a plan");
    let memory = plan_memory(&desc, &plan, &vec![4096; lens.len()], &[], ALIGNMENT, false);
    assert_eq!(memory.heap_bytes, 0);
    assert!(memory.placements.iter().all(Option::is_none));
    assert_eq!(memory.unaliased_bytes, 9 * 4096);
}

#[test]
fn what_the_application_sees_or_the_runtime_reads_keeps_memory_of_its_own() {
    let mut b = pipeline(6);
    b.owned("flag", "u32", 1).owned("gated", "f32", 1024);
    b.kernel(
        "set",
        KernelSpec::wgsl("@compute @workgroup_size(1) fn main() { flag[0] = 1u; }".to_string())
            .write("flag"),
    );
    b.kernel("maybe", add_one("t1", "gated"));
    b.if_block("when", "flag", &["maybe"]);
    b.kernel("after", add_one("gated", "t5"));
    b.edge("k5", "after");
    b.owned("copied", "f32", 1024);
    b.copy("duplicate", "t4", "copied");
    b.kernel("use_copy", add_one("copied", "z"));
    b.output("z", "f32");
    b.readback("show", "t2");
    b.host("look", &[("t3", AccessMode::Read)]);
    let desc = built(&b);
    let (_, memory) = planned(&desc);
    assert_eq!(memory.conflict(), None);
    let apart = |name: &str| memory.apart[index(&desc, name)];
    assert_eq!(apart("t2"), Some(Apart::Readback));
    assert_eq!(apart("t3"), Some(Apart::Task));
    assert_eq!(apart("gated"), Some(Apart::Gated));
    assert_eq!(apart("flag"), Some(Apart::Control));
    // A copy runs between two buffers: its source and destination are in different heaps.
    let (t4, copied) = (index(&desc, "t4"), index(&desc, "copied"));
    let heap = |b: usize| memory.placements[b].map(|p| p.heap);
    assert!(heap(t4).is_some() && heap(copied).is_some());
    assert_ne!(heap(t4), heap(copied));
    for name in ["t2", "t3", "gated", "flag"] {
        assert_eq!(memory.placements[index(&desc, name)], None, "{name}");
    }
    assert!(memory.placements[index(&desc, "t4")].is_some());
    // Kept in registers by fusion: no memory at all.
    let lens = vec![1024; desc.buffers.len()];
    let plan = plan(&desc, &lens).expect("a plan");
    let t4 = index(&desc, "t4") as u32;
    let memory = plan_memory(
        &desc,
        &plan,
        &vec![4096; lens.len()],
        &[t4],
        ALIGNMENT,
        true,
    );
    assert_eq!(memory.apart[t4 as usize], Some(Apart::Registers));
    assert_eq!(memory.placements[t4 as usize], None);
}

#[test]
fn a_buffer_that_reuses_memory_gets_the_barrier_its_edge_did_not_need() {
    // `a` writes t1, `b` reads it; `c` comes after `b` by an edge alone and writes t2, which `d` reads.
    // Nothing `c` touches was touched before, so the plan puts no barrier before it; sharing t1's memory,
    // t2 needs one.
    let mut g = GraphBuilder::new("Reuse");
    g.input("x", "f32").output("y", "f32").output("z", "f32");
    g.owned("t1", "f32", 1024).owned("t2", "f32", 1024);
    g.kernel("a", add_one("x", "t1"));
    g.kernel("b", add_one("t1", "y"));
    g.kernel("c", add_one("x", "t2"));
    g.kernel("d", add_one("t2", "z"));
    g.edge("b", "c");
    let desc = built(&g);
    let (mut plan, memory) = planned(&desc);
    let (t1, t2) = (index(&desc, "t1"), index(&desc, "t2"));
    let (p1, p2) = (
        memory.placements[t1].expect("t1 placed"),
        memory.placements[t2].expect("t2 placed"),
    );
    assert!(p1.shares_memory(&p2), "{p1:?} {p2:?}");
    let levels = |plan: &Plan| match &plan.partitions[..] {
        [PlanPartition::Gpu { levels }] => levels.clone(),
        other => panic!("one GPU partition expected, got {other:?}"),
    };
    assert!(
        levels(&plan)[2].hazards.is_empty(),
        "no barrier before `c` without aliasing"
    );
    add_alias_hazards(&mut plan, &desc, &memory);
    let after = levels(&plan);
    assert_eq!(after[2].hazards.len(), 1, "{:?}", after[2].hazards);
    assert_eq!(after[2].hazards[0].buffer, t2 as u32);
    // The barriers that were there stay, and no other is added.
    assert_eq!(after[1].hazards.len(), 1);
    assert_eq!(after[3].hazards.len(), 1);
}

#[test]
fn the_conflict_check_finds_two_live_buffers_in_one_place() {
    let at = |offset, first, last| {
        Some(Placement {
            heap: 0,
            offset,
            bytes: 256,
            first,
            last,
        })
    };
    let mut memory = MemoryPlan {
        heaps: vec![512],
        heap_bytes: 512,
        placements: vec![at(0, 0, 2), at(0, 3, 4), at(256, 1, 3)],
        apart: vec![None; 3],
        apart_bytes: 0,
        unaliased_bytes: 768,
    };
    assert_eq!(memory.conflict(), None);
    memory.placements[1] = at(0, 2, 4);
    assert_eq!(memory.conflict(), Some((0, 1)));
    // In another heap, the same offset is other memory.
    memory.placements[1] = memory.placements[1].map(|p| Placement { heap: 1, ..p });
    assert_eq!(memory.conflict(), None);
}

/// Random lifetimes: up to 40 buffers over up to 30 steps, 1 byte to 64 KiB each.
fn lives() -> impl Strategy<Value = Vec<Lifetime>> {
    prop::collection::vec((0u32..30, 0u32..8, 1u64..65_536), 0..40).prop_map(|v| {
        v.into_iter()
            .map(|(first, length, bytes)| Lifetime {
                first,
                last: first + length,
                bytes,
            })
            .collect()
    })
}

/// The most bytes live at one step: no placement can use less.
fn lower_bound(lives: &[Lifetime]) -> u64 {
    let end = lives.iter().map(|l| l.last + 1).max().unwrap_or(0);
    (0..end)
        .map(|step| {
            lives
                .iter()
                .filter(|l| l.first <= step && step <= l.last)
                .map(|l| l.bytes)
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0)
}

fn heap(lives: &[Lifetime], offsets: &[u64]) -> u64 {
    lives
        .iter()
        .zip(offsets)
        .map(|(l, o)| o + l.bytes)
        .max()
        .unwrap_or(0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn no_two_buffers_that_live_at_one_step_share_a_byte(lives in lives()) {
        for heuristic in [Heuristic::LargestFirst, Heuristic::EarliestFirst] {
            let offsets = place(&lives, ALIGNMENT, heuristic);
            prop_assert_eq!(offsets.len(), lives.len());
            for (i, (a, oa)) in lives.iter().zip(&offsets).enumerate() {
                prop_assert_eq!(oa % ALIGNMENT, 0);
                for (b, ob) in lives.iter().zip(&offsets).skip(i + 1) {
                    let meet = a.first <= b.last && b.first <= a.last;
                    let share = *oa < ob + b.bytes && *ob < oa + a.bytes;
                    prop_assert!(!(meet && share), "{:?} at {} and {:?} at {} ({:?})", a, oa, b, ob, heuristic);
                }
            }
            let used = heap(&lives, &offsets);
            prop_assert!(used >= lower_bound(&lives));
            let apart: u64 = lives.iter().map(|l| l.bytes.next_multiple_of(ALIGNMENT)).sum();
            prop_assert!(used <= apart, "{} over {} each apart", used, apart);
        }
    }
}

/// A fixed stream of pseudo-random numbers (an LCG), so that the comparison below is the same every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[test]
fn the_default_heuristic_is_the_better_of_the_two_on_random_lifetimes_and_graphs() {
    let mut rng = Lcg(22);
    let mut totals = [0u64; 2];
    let mut wins = [0usize; 2];
    for case in 0..400 {
        let count = 1 + rng.below(60) as usize;
        let lives: Vec<Lifetime> = (0..count)
            .map(|i| {
                // Half the cases are pipelines (each buffer lives for a few steps after the one before),
                // half scattered.
                let first = if case % 2 == 0 {
                    i as u32 + rng.below(3) as u32
                } else {
                    rng.below(40) as u32
                };
                Lifetime {
                    first,
                    last: first + rng.below(6) as u32,
                    bytes: 256 * (1 + rng.below(64)),
                }
            })
            .collect();
        let heaps = [Heuristic::LargestFirst, Heuristic::EarliestFirst]
            .map(|h| heap(&lives, &place(&lives, ALIGNMENT, h)));
        totals[0] += heaps[0];
        totals[1] += heaps[1];
        if heaps[0] < heaps[1] {
            wins[0] += 1;
        } else if heaps[1] < heaps[0] {
            wins[1] += 1;
        }
    }
    println!(
        "largest first: {} bytes in all, smaller in {} cases; earliest first (best fit): {} bytes, smaller in {}",
        totals[0], wins[0], totals[1], wins[1]
    );
    // And on graphs: random ones (as the property test below draws them, from fixed numbers here), fused and
    // not, and the 100-stage pipeline.
    let mut graphs: Vec<GraphDesc> = Vec::new();
    for case in 0..120 {
        let n = 2 + rng.below(22) as usize;
        let reads: Vec<Vec<usize>> = (0..n)
            .map(|k| {
                (0..rng.below(3))
                    .map(|_| rng.below(k as u64 + 1) as usize)
                    .collect()
            })
            .collect();
        graphs.extend(build_random(&reads, case % 2 == 0));
    }
    graphs.push(built(&pipeline(100)));
    let mut graph_totals = [0u64; 2];
    for desc in &graphs {
        let lens = vec![1024; desc.buffers.len()];
        let plan = plan(desc, &lens).expect("a plan");
        let bytes: Vec<u64> = (0..desc.buffers.len())
            .map(|b| 4000 + 24 * b as u64)
            .collect();
        for (i, h) in [Heuristic::LargestFirst, Heuristic::EarliestFirst]
            .into_iter()
            .enumerate()
        {
            let memory =
                graph_core::memory::plan_memory_by(desc, &plan, &bytes, &[], ALIGNMENT, true, h);
            graph_totals[i] += memory.heap_bytes;
        }
    }
    println!(
        "on {} graphs: largest first {} bytes of heaps in all, earliest first {}",
        graphs.len(),
        graph_totals[0],
        graph_totals[1]
    );
    totals[0] += graph_totals[0];
    totals[1] += graph_totals[1];
    let best = if totals[0] <= totals[1] {
        Heuristic::LargestFirst
    } else {
        Heuristic::EarliestFirst
    };
    assert_eq!(HEURISTIC, best, "totals {totals:?}");
}

#[test]
fn five_thousand_buffers_of_a_long_pipeline_are_placed_without_conflict() {
    let mut rng = Lcg(5000);
    let lives: Vec<Lifetime> = (0..5000u32)
        .map(|i| Lifetime {
            first: i,
            last: i + rng.below(4) as u32,
            bytes: 4 * (1 + rng.below(1 << 20)),
        })
        .collect();
    let offsets = place(&lives, ALIGNMENT, HEURISTIC);
    for (i, (a, oa)) in lives.iter().zip(&offsets).enumerate() {
        // Sorted by first step: only the next few can meet this one.
        for (b, ob) in lives.iter().zip(&offsets).skip(i + 1).take(8) {
            let meet = a.first <= b.last && b.first <= a.last;
            assert!(
                !(meet && *oa < ob + b.bytes && *ob < oa + a.bytes),
                "{a:?} at {oa}, {b:?} at {ob}"
            );
        }
    }
    let used = heap(&lives, &offsets);
    let sum: u64 = lives.iter().map(|l| l.bytes).sum();
    assert!(used >= lower_bound(&lives));
    assert!(
        used * 100 < sum,
        "{used} of {sum}: a pipeline's few live buffers should set the heap"
    );
}

#[test]
fn the_declared_plan_is_bakes_at_webgpus_alignment_and_is_drawn_and_summarised() {
    // Kernels apart, as bake runs them with `#[no_fusion]`.
    let mut b = pipeline(10);
    for i in 1..=10 {
        b.no_fusion(&format!("k{i}"));
    }
    let desc = built(&b);
    let (declared, names) = graph_core::memory::declared_plan(&desc).expect("sizes are declared");
    let (_, planned) = planned(&desc);
    assert_eq!(declared.heaps, planned.heaps);
    assert_eq!(declared.placements, planned.placements);
    assert_eq!(declared.owned_bytes(), 2 * 4096);
    assert_eq!(declared.unaliased_bytes, 9 * 4096);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let summary = declared.summary(&names).join("\n");
    assert!(
        summary.starts_with(
            "memory: 8192 bytes for graph-owned buffers (36864 each in memory of its own), 2 heaps"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("t1 @0 (steps 0-1), t3 @0 (steps 2-3)"),
        "{summary}"
    );
    let dot = desc.to_dot(graph_core::dot::Detail::Verbose);
    assert!(dot.contains("\\nmemory: 8192 bytes"), "{dot}");
    assert!(
        !desc
            .to_dot(graph_core::dot::Detail::Plain)
            .contains("memory:")
    );

    // Fused (in groups of at most 8 buffers), the pointwise steps keep most intermediates in registers,
    // which take no memory at all; the ones between groups are placed.
    let fused = built(&pipeline(10));
    let (declared, _) = graph_core::memory::declared_plan(&fused).expect("sizes are declared");
    let mut in_registers = 0;
    for i in 1..10 {
        let t = index(&fused, &format!("t{i}"));
        match declared.apart[t] {
            Some(Apart::Registers) => in_registers += 1,
            None => assert!(declared.placements[t].is_some(), "t{i}"),
            Some(other) => panic!("t{i} apart: {other:?}"),
        }
    }
    assert!(in_registers >= 7, "{:?}", declared.apart);
    assert_eq!(declared.apart_bytes, 0);
    assert_eq!(declared.unaliased_bytes, (9 - in_registers) * 4096);
    assert_eq!(declared.owned_bytes(), declared.heap_bytes);
}

/// A random graph of kernels over graph-owned buffers: kernel `k` writes buffer `k` (the last one the output)
/// and reads up to two buffers written before it (or the input), so every buffer has one writer and every
/// read follows its write.
fn random_graph() -> impl Strategy<Value = Vec<Vec<usize>>> {
    (2usize..24).prop_flat_map(|n| {
        (0..n)
            .map(|k| prop::collection::vec(0..=k, 0..3))
            .collect::<Vec<_>>()
    })
}

/// Buffer `i` of the random graph: `x` (input, 0), `b{k}` written by kernel `k - 1`, the last `y` (output).
fn random_buffer(i: usize, kernels: usize) -> String {
    match i {
        0 => "x".to_string(),
        i if i == kernels => "y".to_string(),
        i => format!("b{i}"),
    }
}

fn build_random(reads: &[Vec<usize>], fusion: bool) -> Option<GraphDesc> {
    let n = reads.len();
    let mut b = GraphBuilder::new("Random");
    b.input("x", "f32").output("y", "f32");
    for i in 1..n {
        b.owned(&random_buffer(i, n), "f32", 1000 + 24 * i as u64);
    }
    for (k, list) in reads.iter().enumerate() {
        let dst = random_buffer(k + 1, n);
        let mut sources: Vec<String> = list.iter().map(|&i| random_buffer(i, n)).collect();
        sources.sort();
        sources.dedup();
        let sum = match sources.is_empty() {
            true => "1.0".to_string(),
            false => sources
                .iter()
                .map(|s| format!("{s}[min(gid.x, arrayLength(&{s}) - 1u)]"))
                .collect::<Vec<_>>()
                .join(" + "),
        };
        let mut spec = KernelSpec::wgsl(format!(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                 if (gid.x < arrayLength(&{dst})) {{ {dst}[gid.x] = {sum}; }}
             }}"
        ))
        .write(&dst);
        for s in &sources {
            spec = spec.read(s);
        }
        let node = format!("k{k}");
        b.kernel(&node, spec);
        if !fusion {
            b.no_fusion(&node);
        }
    }
    match b.build(&Library::EMPTY) {
        Ok(d) => Some(d),
        Err(e) => panic!("{e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// On random graphs, fused or not, as `declared_plan` plans them: two buffers that share a byte are
    /// touched at disjoint spans of levels (found here from the plan's steps, not from the plan's own
    /// lifetimes), and no kernel binds one heap both read-only and writable.
    #[test]
    fn random_graphs_never_share_live_memory_nor_bind_a_heap_two_ways(
        reads in random_graph(),
        fusion in any::<bool>(),
    ) {
        let Some(desc) = build_random(&reads, fusion) else {
            return Ok(());
        };
        let (memory, _) = graph_core::memory::declared_plan(&desc).expect("declared lengths");
        prop_assert_eq!(memory.conflict(), None);
        // The fused description the plan was made of, made again the same way.
        let flat = graph_core::flatten::flatten(&desc).expect("flat");
        let lengths = graph_core::fusion::declared_lengths(&flat);
        let fused = graph_core::fusion::fuse(&flat, &lengths, graph_core::fusion::MAX_FUSED_BINDINGS);
        let fused = &*fused.desc;
        let lens: Vec<u32> = graph_core::fusion::declared_lengths(fused)
            .iter()
            .map(|l| l.map_or(1, |l| l as u32))
            .collect();
        let plan = plan(fused, &lens).expect("a plan");
        let mut spans: Vec<Option<(usize, usize)>> = vec![None; fused.buffers.len()];
        let mut step = 0;
        for partition in &plan.partitions {
            if let PlanPartition::Gpu { levels } = partition {
                for level in levels {
                    for s in &level.steps {
                        let Some(node) = s.node() else { continue };
                        if let graph_core::desc::OpDesc::Kernel(k) = &fused.nodes[node as usize].op {
                            for a in k.bindings.iter() {
                                let span = &mut spans[a.buffer as usize];
                                *span = Some(span.map_or((step, step), |(f, _)| (f, step)));
                            }
                        }
                    }
                    step += 1;
                }
            }
        }
        let placed: Vec<(usize, Placement)> = memory.placements.iter().enumerate()
            .filter_map(|(b, p)| p.map(|p| (b, p))).collect();
        for (i, (a, pa)) in placed.iter().enumerate() {
            for (b, pb) in &placed[i + 1..] {
                if pa.shares_memory(pb) {
                    let (sa, sb) = (spans[*a].expect("touched"), spans[*b].expect("touched"));
                    prop_assert!(sa.1 < sb.0 || sb.1 < sa.0, "buffers {} {:?} and {} {:?} share memory", a, sa, b, sb);
                }
            }
        }
        for node in fused.nodes.iter() {
            if let graph_core::desc::OpDesc::Kernel(k) = &node.op {
                let heap = |b: u32| memory.placements[b as usize].map(|p| p.heap);
                for r in k.bindings.iter().filter(|a| !a.mode.writes()) {
                    for w in k.bindings.iter().filter(|a| a.mode.writes()) {
                        if let (Some(hr), Some(hw)) = (heap(r.buffer), heap(w.buffer)) {
                            prop_assert_ne!(hr, hw, "kernel `{}` binds heap {} both ways", node.name, hr);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_buffer_only_some_choices_of_alternatives_write_keeps_memory_of_its_own() {
    let mut b = pipeline(3);
    b.owned("only_a", "f32", 1024).owned("both", "f32", 1024);
    b.kernel("a", add_one("t1", "only_a"))
        .kernel(
            "b",
            KernelSpec::wgsl(
                "@compute @workgroup_size(64)
                 fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                     if (gid.x < arrayLength(&both)) { both[gid.x] = t1[gid.x]; }
                 }"
                .to_string(),
            )
            .read("t1")
            .write("both"),
        )
        .alternatives("pick", &["a", "b"]);
    b.kernel("c", add_one("t1", "both"));
    b.edge("b", "c");
    b.kernel("use_a", add_one("only_a", "z"))
        .kernel("use_both", add_one("both", "w"));
    b.output("z", "f32").output("w", "f32");
    let desc = built(&b);
    let (_, memory) = planned(&desc);
    assert_eq!(memory.conflict(), None);
    // `only_a` is written only when `a` runs: when `b` does, it keeps what it held.
    assert_eq!(memory.apart[index(&desc, "only_a")], Some(Apart::Chosen));
    assert_eq!(memory.placements[index(&desc, "only_a")], None);
}
