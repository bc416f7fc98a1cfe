//! The fusion pass on built graphs: which kernels it groups, and that what it makes is a valid description
//! whose fused kernels validate. (The GPU tests in `graph-runtime/tests/fusion.rs` run fused against unfused
//! and against the CPU.)

#![forbid(unsafe_code)]

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::desc::{DispatchDesc, GraphDesc, OpDesc};
use graph_core::fusion::{Fusion, MAX_FUSED_BINDINGS, declared_lengths};
use graph_core::ir::{AccessMode, Role};
use graph_core::library::Library;

/// `dst[i] = f(src[i])`: pointwise.
fn pointwise(src: &str, dst: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
             let i = gid.x;\n\
             if (i >= arrayLength(&{dst})) {{ return; }}\n\
             {dst}[i] = {dst}[i] * 0.5 + {src}[i];\n\
         }}\n"
    ))
    .read(src)
    .read_write(dst)
}

/// `dst[i] = src[i - 1] + src[i + 1]`: reads its neighbours, so it is not pointwise.
fn stencil(src: &str, dst: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
             let i = gid.x;\n\
             let n = arrayLength(&{dst});\n\
             if (i >= n) {{ return; }}\n\
             {dst}[i] = {src}[max(i, 1u) - 1u] + {src}[min(i + 1u, n - 1u)];\n\
         }}\n"
    ))
    .read(src)
    .write(dst)
}

/// Fusion with every external buffer bound to one length, as a bake over equal buffers sees it.
fn fuse(desc: &GraphDesc) -> Fusion<'_> {
    let lengths: Vec<Option<u64>> = declared_lengths(desc)
        .into_iter()
        .map(|l| l.or(Some(1024)))
        .collect();
    graph_core::fusion::fuse(desc, &lengths, MAX_FUSED_BINDINGS)
}

fn built(b: &GraphBuilder) -> GraphDesc {
    b.build(&Library::EMPTY).expect("a good graph")
}

/// Each group by its members' names.
fn names(fusion: &Fusion<'_>) -> Vec<Vec<String>> {
    fusion.member_names()
}

/// The fused description is one a bake accepts, and each fused kernel is one the checks would accept.
fn assert_valid(fusion: &Fusion<'_>) {
    fusion
        .desc
        .validate(fusion.desc.params.size as usize)
        .expect("the fused description is valid");
    for g in &fusion.groups {
        let OpDesc::Kernel(k) = &fusion.desc.nodes[g.node as usize].op else {
            panic!("group node {} is not a kernel", g.node);
        };
        let module = k.compose(&fusion.desc.params, fusion.desc.params.storage);
        graph_core::wgsl::validate(&module).expect("the fused kernel validates");
        for &m in &g.members[1..] {
            assert!(matches!(fusion.desc.nodes[m as usize].op, OpDesc::Empty));
            assert!(fusion.absorbed(m));
        }
    }
}

#[test]
fn a_pointwise_chain_becomes_one_kernel_in_order() {
    let mut b = GraphBuilder::new("Chain");
    b.input("x", "f32").inout("y", "f32");
    for k in 0..5 {
        b.kernel(&format!("k{k}"), pointwise("x", "y"));
    }
    let desc = built(&b);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    assert_eq!(names(&fusion), vec![vec!["k0", "k1", "k2", "k3", "k4"]]);
    assert_eq!(fusion.desc.nodes[0].name, "k0 + k1 + k2 + k3 + k4");
    // One level of work, the absorbed nodes after it.
    assert_eq!(fusion.desc.levels.len(), 2);
    let OpDesc::Kernel(k) = &fusion.desc.nodes[0].op else {
        panic!("not a kernel")
    };
    let calls: Vec<usize> = (0..5)
        .map(|i| {
            k.source
                .find(&format!("fuse_k{i}_main(fuse_element"))
                .expect("a call")
        })
        .collect();
    assert!(calls.windows(2).all(|w| w[0] < w[1]), "calls out of order");
    // Dispatched one invocation per element of `y`, with members that take only their index: a wide kernel,
    // which folds its own index.
    assert_eq!(k.workgroup_size, [graph_core::fusion::WIDE_WORKGROUP, 1, 1]);
    assert!(k.foldable);
    assert!(
        matches!(&k.dispatch, DispatchDesc::Threads([x, ..]) if x.text.contains("y.len().div_ceil")),
        "{:?}",
        k.dispatch
    );
    assert_eq!(k.bindings.len(), 2);
    assert_eq!(k.bindings[0].mode, AccessMode::Read);
    assert_eq!(k.bindings[1].mode, AccessMode::ReadWrite);
    // Both buffers are read, so each is cached: loaded once before the calls (every element of the
    // invocation's first), `y` stored once after them, and no member touches memory.
    let (before, after) = (calls[0], calls[4]);
    for (b, load) in [
        ("x", "fuse_c0_0 = fuse_b0[fuse_at0]"),
        ("y", "fuse_c1_0 = fuse_b1[fuse_at0]"),
    ] {
        let at = k
            .source
            .find(load)
            .unwrap_or_else(|| panic!("{b} is not loaded: {}", k.source));
        assert!(at < before, "{b} is loaded after a call");
    }
    let store = k
        .source
        .find("fuse_b1[fuse_at0] = fuse_c1_0")
        .expect("y is stored back");
    assert!(store > after, "y is stored before the last call");
    assert!(
        !k.source.contains("fuse_b0[fuse_at0] ="),
        "x, only read, is stored"
    );
    assert_eq!(k.source.matches("fuse_b1[").count(), 2, "{}", k.source);
    assert_eq!(k.source.matches("fuse_b0[").count(), 1, "{}", k.source);
}

#[test]
fn a_fan_fuses_within_the_binding_limit() {
    let mut b = GraphBuilder::new("Fan");
    b.input("x", "f32");
    for k in 0..10 {
        b.output(&format!("o{k}"), "f32");
        b.kernel(&format!("k{k}"), pointwise("x", &format!("o{k}")));
    }
    let desc = built(&b);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    let sizes: Vec<usize> = fusion.groups.iter().map(|g| g.members.len()).collect();
    // `x` and seven outputs fill the first group's bindings.
    assert_eq!(
        sizes,
        vec![MAX_FUSED_BINDINGS - 1, 10 - (MAX_FUSED_BINDINGS - 1)]
    );
}

#[test]
fn a_stencil_splits_a_chain_and_is_not_fused() {
    let mut b = GraphBuilder::new("Split");
    b.input("x", "f32").inout("y", "f32").inout("z", "f32");
    b.kernel("a", pointwise("x", "y"))
        .kernel("b", pointwise("x", "y"))
        .kernel("s", stencil("y", "z"))
        .kernel("c", pointwise("z", "y"))
        .kernel("d", pointwise("z", "y"));
    let desc = built(&b);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    // `a + b + c + d` would have to run before and after `s`.
    assert_eq!(names(&fusion), vec![vec!["a", "b"], vec!["c", "d"]]);
    assert!(fusion.desc.nodes[2].name == "s");
}

#[test]
fn a_path_through_another_node_keeps_kernels_apart() {
    let mut b = GraphBuilder::new("Through");
    b.input("x", "f32").inout("y", "f32").inout("t", "f32");
    b.kernel("a", pointwise("x", "y"))
        .copy("c", "y", "t")
        .kernel("b", pointwise("t", "y"));
    let desc = built(&b);
    let fusion = fuse(&desc);
    assert!(fusion.groups.is_empty(), "{:?}", names(&fusion));
}

#[test]
fn a_kernel_alone_over_a_long_buffer_runs_several_elements_per_invocation() {
    use graph_core::fusion::{WIDE_WORKGROUP, wide_elements};
    // Elements per invocation by length: more only while a quarter of a million invocations remain.
    assert_eq!(wide_elements(None), 1);
    assert_eq!(wide_elements(Some((1 << 19) - 1)), 1);
    assert_eq!(wide_elements(Some(1 << 19)), 2);
    assert_eq!(wide_elements(Some((1 << 20) - 1)), 2);
    assert_eq!(wide_elements(Some(1 << 20)), 4);
    assert_eq!(wide_elements(Some(1 << 30)), 4);
    for (len, per) in [(1024u64, 1u32), (1 << 19, 2), ((1 << 20) + 3, 4)] {
        let mut b = GraphBuilder::new("Alone");
        b.input("x", "f32").inout("y", "f32");
        b.kernel("k", pointwise("x", "y"));
        let desc = built(&b);
        let lengths = vec![Some(len); desc.buffers.len()];
        let fused = graph_core::fusion::fuse(&desc, &lengths, MAX_FUSED_BINDINGS);
        assert!(fused.groups.is_empty(), "{len}: one kernel is no group");
        assert!(fused.widened.is_empty(), "{len}: `fuse` widens nothing");
        let fusion = graph_core::fusion::widen(fused, &lengths, MAX_FUSED_BINDINGS);
        if per == 1 {
            assert!(fusion.widened.is_empty(), "{len}: widened");
            assert_eq!(fusion.desc.nodes[0], desc.nodes[0], "{len}: changed");
            continue;
        }
        assert_eq!(fusion.widened, vec![0], "{len}");
        assert_eq!(fusion.desc.nodes[0].name, "k", "it keeps its name");
        let OpDesc::Kernel(k) = &fusion.desc.nodes[0].op else {
            panic!("not a kernel")
        };
        assert_eq!(k.workgroup_size, [WIDE_WORKGROUP, 1, 1]);
        // `y`, read and written, is cached: the `per` elements are written out one by one.
        let elements = (0..per + 1)
            .filter(|e| k.source.contains(&format!("let fuse_at{e} =")))
            .count();
        assert_eq!(elements, per as usize, "{len}: {}", k.source);
        assert!(
            matches!(&k.dispatch, DispatchDesc::Threads([x, ..]) if x.text == format!("y.len().div_ceil({per})")),
            "{len}: {:?}",
            k.dispatch
        );
        let module = k.compose(&fusion.desc.params, fusion.desc.params.storage);
        graph_core::wgsl::validate(&module).expect("the wide kernel validates");
    }
    // Beside a fused group (over buffers of another length), a kernel alone is made wide all the same.
    let mut b = GraphBuilder::new("Beside");
    b.input("x", "f32")
        .inout("y", "f32")
        .input("s", "f32")
        .inout("t", "f32");
    b.kernel("a", pointwise("x", "y"))
        .kernel("b", pointwise("x", "y"));
    b.kernel("alone", pointwise("s", "t"));
    let desc = built(&b);
    let lengths = [Some(1024), Some(1024), Some(1 << 20), Some(1 << 20)];
    let fusion = graph_core::fusion::widen(
        graph_core::fusion::fuse(&desc, &lengths, MAX_FUSED_BINDINGS),
        &lengths,
        MAX_FUSED_BINDINGS,
    );
    assert_valid(&fusion);
    assert_eq!(names(&fusion), vec![vec!["a", "b"]]);
    assert_eq!(fusion.widened, vec![2]);
    let OpDesc::Kernel(k) = &fusion.desc.nodes[2].op else {
        panic!("not a kernel")
    };
    assert!(
        k.source.contains("let fuse_at3 =") && !k.source.contains("let fuse_at4 ="),
        "{}",
        k.source
    );
    // A kernel that reads its workgroup's own index, or its neighbours, runs as it is written.
    let local = KernelSpec::wgsl(
        "@compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {\n\
             if (gid.x < arrayLength(&y)) { y[gid.x] = x[gid.x] + f32(lid.x); }\n\
         }\n",
    )
    .read("x")
    .read_write("y");
    for (name, spec) in [("local", local), ("stencil", stencil("x", "y"))] {
        let mut b = GraphBuilder::new("Alone");
        b.input("x", "f32").inout("y", "f32");
        b.kernel(name, spec);
        let desc = built(&b);
        let lengths = vec![Some(1u64 << 22); desc.buffers.len()];
        let fused = graph_core::fusion::fuse(&desc, &lengths, MAX_FUSED_BINDINGS);
        let fusion = graph_core::fusion::widen(fused, &lengths, MAX_FUSED_BINDINGS);
        assert!(fusion.widened.is_empty(), "{name} widened");
        assert_eq!(fusion.desc.nodes[0], desc.nodes[0], "{name} changed");
    }
}

#[test]
fn independent_branches_fuse_across_a_level() {
    let mut b = GraphBuilder::new("Chains");
    b.input("x", "f32");
    for c in 0..3 {
        b.inout(&format!("c{c}"), "f32");
    }
    for step in 0..4 {
        for c in 0..3 {
            b.kernel(&format!("c{c}_{step}"), pointwise("x", &format!("c{c}")));
        }
    }
    let desc = built(&b);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    assert_eq!(fusion.groups.len(), 1);
    assert_eq!(fusion.groups[0].members.len(), 12);
}

#[test]
fn no_fusion_extents_and_ineligible_kernels_stay_apart() {
    let mut b = GraphBuilder::new("Apart");
    b.input("x", "f32").inout("y", "f32");
    b.buffer("short", "f32", Role::Owned, Some(16));
    b.kernel("a", pointwise("x", "y"))
        .kernel("kept", pointwise("x", "y"))
        .kernel("b", pointwise("x", "y"))
        .fill("init", "short", "0.0")
        .kernel("other_extent", pointwise("x", "short"))
        .no_fusion("kept");
    let desc = built(&b);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    // `a` and `b` would need to run around `kept`; `other_extent` is dispatched over `short`, as its fill.
    assert_eq!(names(&fusion), vec![vec!["init", "other_extent"]]);

    // Lengths not known: dispatches over different buffers stay apart.
    let mut b = GraphBuilder::new("Unknown");
    b.input("x", "f32").output("p", "f32").output("q", "f32");
    b.kernel("a", pointwise("x", "p"))
        .kernel("b", pointwise("x", "q"));
    let desc = built(&b);
    assert!(
        graph_core::fusion::fuse(&desc, &declared_lengths(&desc), MAX_FUSED_BINDINGS)
            .groups
            .is_empty()
    );
    assert_eq!(fuse(&desc).groups.len(), 1);

    let mut b = GraphBuilder::new("Unmarked");
    b.input("x", "f32").inout("y", "f32");
    b.kernel("a", pointwise("x", "y"))
        .kernel("b", pointwise("x", "y"));
    assert_eq!(fuse(&built(&b)).groups.len(), 1);
    b.no_fusion("b");
    assert!(fuse(&built(&b)).groups.is_empty());
}

/// `#[no_fusion]` on a choice of alternatives and on a member of a block (both kernels) is kept in the
/// description, and neither joins a group with a kernel it could otherwise run beside.
#[test]
fn marked_choices_and_block_members_stay_unfused() {
    let mut b = GraphBuilder::new("Marked");
    b.input("x", "f32")
        .inout("y", "f32")
        .owned("flag", "u32", 1);
    b.fill("set", "flag", "1u")
        .kernel("before", pointwise("x", "y"))
        .kernel("one", pointwise("x", "y"))
        .kernel("other", pointwise("x", "y"))
        .kernel("member", pointwise("x", "y"))
        .kernel("after", pointwise("x", "y"))
        .alternatives("pick", &["one", "other"])
        .if_block("maybe", "flag", &["member"])
        .no_fusion("one")
        .no_fusion("member");
    let desc = built(&b);
    let marked = |name: &str| {
        desc.nodes
            .iter()
            .find(|n| n.name == name)
            .is_some_and(|n| matches!(&n.op, OpDesc::Kernel(k) if k.no_fusion))
    };
    assert!(marked("one") && marked("member"));
    assert!(!marked("other") && !marked("before"));
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    for group in names(&fusion) {
        assert!(
            !group.iter().any(|n| n == "one" || n == "member"),
            "a marked node was fused: {group:?}"
        );
    }
}

/// `dst[i] = 2 src[i]`, overwriting `dst`.
fn doubled(src: &str, dst: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
             if (gid.x < arrayLength(&{dst})) {{ {dst}[gid.x] = 2.0 * {src}[gid.x]; }}\n\
         }}\n"
    ))
    .read(src)
    .write(dst)
}

/// The kernel that kernels `a` and `b` of `b` fuse into, checked to be one valid group.
fn a_and_b_fused(b: &GraphBuilder) -> graph_core::desc::KernelDesc {
    let desc = built(b);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    assert_eq!(names(&fusion), vec![vec!["a", "b"]]);
    match &fusion.desc.nodes[0].op {
        OpDesc::Kernel(k) => k.clone(),
        _ => panic!("not a kernel"),
    }
}

#[test]
fn only_buffers_whose_first_member_reads_them_are_cached() {
    let mut b = GraphBuilder::new("Doubles");
    b.input("x", "f32").output("p", "f32").output("q", "f32");
    b.kernel("a", doubled("x", "p"))
        .kernel("b", doubled("x", "q"));
    let k = a_and_b_fused(&b);
    // `x` is loaded once; the outputs, which their first member only writes, are written directly (caching
    // them would load every element for nothing).
    assert!(
        k.source.contains("fuse_c0_0 = fuse_b0[fuse_at0]"),
        "{}",
        k.source
    );
    assert!(
        !k.source.contains("fuse_c1") && !k.source.contains("fuse_c2"),
        "{}",
        k.source
    );
    assert_eq!(
        k.source.matches("fuse_b1[gid.x] = 2.0 * fuse_c0").count(),
        1,
        "{}",
        k.source
    );

    // Written, then read by the next member: still not cached; `y`, read first, is.
    let mut b = GraphBuilder::new("Then");
    b.input("x", "f32").inout("t", "f32").inout("y", "f32");
    b.kernel("a", doubled("x", "t"))
        .kernel("b", pointwise("t", "y"));
    let k = a_and_b_fused(&b);
    assert!(!k.source.contains("fuse_c1"), "t is cached: {}", k.source);
    assert!(
        k.source.contains("fuse_c2_0 = fuse_b2[fuse_at0]"),
        "y is not cached: {}",
        k.source
    );
}

#[test]
fn a_graph_owned_intermediate_only_the_group_touches_goes_into_registers() {
    let with = |read_back: bool| {
        let mut b = GraphBuilder::new("Intermediate");
        b.input("x", "f32").inout("y", "f32");
        b.buffer("t", "f32", Role::Owned, Some(1024));
        b.kernel("a", doubled("x", "t"))
            .kernel("b", pointwise("t", "y"));
        if read_back {
            b.readback("peek", "t");
        }
        built(&b)
    };
    let desc = with(false);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    assert_eq!(names(&fusion), vec![vec!["a", "b"]]);
    let t = desc.buffers.iter().position(|b| b.name == "t").expect("t") as u32;
    assert_eq!(fusion.groups[0].registers, vec![t]);
    assert_eq!(fusion.registers(), vec![t]);
    let OpDesc::Kernel(k) = &fusion.desc.nodes[0].op else {
        panic!("not a kernel")
    };
    assert!(k.bindings.iter().all(|b| b.buffer != t), "t is still bound");
    assert!(k.source.contains("var<private> fuse_r"), "{}", k.source);
    assert!(
        k.source.contains("1024u"),
        "arrayLength(&t) is the length: {}",
        k.source
    );

    // Read by a node outside the group: a buffer again.
    let desc = with(true);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    assert_eq!(names(&fusion), vec![vec!["a", "b"]]);
    assert!(fusion.registers().is_empty());
}

#[test]
fn a_fused_kernel_holds_at_most_its_share_of_code() {
    use graph_core::fusion::MAX_FUSED_SOURCE_BYTES;
    // Five kernels of more than a third of the limit each: two fit in one kernel, not three; the fifth is
    // left alone.
    let padding = format!("// {}\n", "x".repeat(MAX_FUSED_SOURCE_BYTES / 3));
    let mut b = GraphBuilder::new("Long");
    b.input("x", "f32").inout("y", "f32");
    for k in 0..5 {
        b.kernel(&format!("k{k}"), padded(&padding));
    }
    let desc = built(&b);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    let sizes: Vec<usize> = fusion.groups.iter().map(|g| g.members.len()).collect();
    assert_eq!(sizes, vec![2, 2], "{:?}", names(&fusion));
}

/// [`pointwise`]`("x", "y")` with `padding` (a comment) before its entry point.
fn padded(padding: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "{padding}@compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
             let i = gid.x;\n\
             if (i >= arrayLength(&y)) {{ return; }}\n\
             y[i] = y[i] * 0.5 + x[i];\n\
         }}\n"
    ))
    .read("x")
    .read_write("y")
}

/// `dst[i] = 3 src[i]` through the second of two entry points.
fn second_entry(src: &str, dst: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
             if (gid.x < arrayLength(&{dst})) {{ {dst}[gid.x] = {src}[gid.x]; }}\n\
         }}\n\
         @compute @workgroup_size(64)\n\
         fn go(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {{\n\
             let i = g.x;\n\
             if (i < arrayLength(&{dst}) && l < 64u) {{ {dst}[i] = 3.0 * {src}[i]; }}\n\
         }}\n"
    ))
    .entry("go")
    .read(src)
    .write(dst)
}

#[test]
fn a_member_with_two_entry_points_fuses_through_the_one_it_names() {
    let mut b = GraphBuilder::new("Entries");
    b.input("x", "f32").inout("y", "f32").inout("z", "f32");
    b.kernel("a", pointwise("x", "y"));
    b.kernel("b", second_entry("y", "z"));
    b.kernel("c", pointwise("y", "z"));
    let desc = built(&b);
    let lengths: Vec<Option<u64>> = declared_lengths(&desc)
        .into_iter()
        .map(|l| l.or(Some(1024)))
        .collect();
    // What the grouping promises is what fusion makes.
    let groups = graph_core::fusion::groups(&desc, &lengths, MAX_FUSED_BINDINGS);
    let fusion = fuse(&desc);
    assert_eq!(groups, vec![vec![0, 1, 2]]);
    assert_eq!(names(&fusion), vec![vec!["a", "b", "c"]]);
    assert!(fusion.declined.is_empty(), "{:?}", fusion.declined);
    assert_valid(&fusion);
}

#[test]
fn a_group_whose_kernel_cannot_be_made_fuses_in_runs_and_says_why() {
    // A chain of five; the middle kernel is made unbuildable after the checks (a call to a function it
    // does not define), as a form the fused module cannot take would be.
    let mut b = GraphBuilder::new("Runs");
    b.input("x", "f32")
        .inout("p", "f32")
        .inout("q", "f32")
        .inout("r", "f32")
        .inout("s", "f32");
    b.kernel("a", pointwise("x", "p"));
    b.kernel("b", pointwise("p", "q"));
    b.kernel("c", pointwise("q", "r"));
    b.kernel("d", pointwise("r", "s"));
    b.kernel("e", pointwise("x", "s"));
    let mut desc = built(&b);
    let OpDesc::Kernel(k) = &mut desc.nodes.to_mut()[2].op else {
        panic!("c is a kernel");
    };
    k.source = k.source.replace("0.5", "missing()").into();
    let fusion = fuse(&desc);
    assert_eq!(
        names(&fusion),
        vec![vec!["a", "b"], vec!["d", "e"]],
        "the runs that can be made"
    );
    let declined: Vec<(Vec<String>, bool)> = fusion
        .declined
        .iter()
        .map(|d| (d.names.clone(), d.reason.contains("missing")))
        .collect();
    assert_eq!(
        declined,
        vec![
            (vec!["a".to_string(), "b".into(), "c".into()], true),
            (vec!["c".to_string(), "d".into()], true),
        ],
        "each break with naga's reason: {:?}",
        fusion.declined
    );
    assert_valid(&fusion);
}

#[test]
fn a_device_that_binds_more_joins_the_promised_groups_whole() {
    // A chain of 40 kernels, each over a buffer of its own: within WebGPU's 8 bindings the groups are of 7
    // kernels; a device of 32 bindings groups more, and each group of 7 stays inside one of them (greedy
    // groups of 31 kernels would cut the fifth group of 7, kernels 28 to 34, at kernel 31).
    let mut b = GraphBuilder::new("Long");
    b.input("b0", "f32");
    for k in 1..=40 {
        b.owned(&format!("b{k}"), "f32", 1024);
    }
    b.output("out", "f32");
    // `dst[i] = src[i] * 0.5 + 1.0`: pointwise, and it overwrites `dst` (graph-owned, written first).
    let overwrite = |src: &str, dst: &str| {
        KernelSpec::wgsl(format!(
            "@compute @workgroup_size(64)\n\
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
                 let i = gid.x;\n\
                 if (i >= arrayLength(&{dst})) {{ return; }}\n\
                 {dst}[i] = {src}[i] * 0.5 + 1.0;\n\
             }}\n"
        ))
        .read(src)
        .write(dst)
    };
    for k in 1..=40 {
        b.kernel(
            &format!("k{k}"),
            overwrite(&format!("b{}", k - 1), &format!("b{k}")),
        );
    }
    b.kernel("last", pointwise("b40", "out"));
    let desc = built(&b);
    let lengths: Vec<Option<u64>> = declared_lengths(&desc)
        .into_iter()
        .map(|l| l.or(Some(1024)))
        .collect();
    let promised = graph_core::fusion::groups(&desc, &declared_lengths(&desc), MAX_FUSED_BINDINGS);
    let larger = graph_core::fusion::groups(&desc, &lengths, 32);
    assert!(promised.len() >= 5, "{promised:?}");
    assert!(larger.len() < promised.len(), "{larger:?}");
    for group in &promised {
        assert!(
            larger.iter().any(|l| group.iter().all(|m| l.contains(m))),
            "{group:?} is cut by {larger:?}"
        );
    }
    // Each larger group within the limit, and every kernel in one group at most.
    let fused = graph_core::fusion::fuse(&desc, &lengths, 32);
    let mut seen = std::collections::HashSet::new();
    for group in &larger {
        for m in group {
            assert!(seen.insert(*m), "{m} in two groups");
        }
        let bound: std::collections::HashSet<u32> = group
            .iter()
            .filter_map(|&m| match &desc.nodes[m as usize].op {
                OpDesc::Kernel(k) => Some(k.bindings.iter().map(|b| b.buffer)),
                _ => None,
            })
            .flatten()
            .collect();
        assert!(bound.len() <= 32, "{group:?} binds {}", bound.len());
    }
    assert_valid(&fused);
}

/// `dst[i] = (src[i - 1] + 2 src[i] + src[i + 1]) / 4`, zero past the ends, the reads guarded.
fn smooth(src: &str, dst: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
             let i = gid.x;\n\
             let n = arrayLength(&{dst});\n\
             if (i >= n) {{ return; }}\n\
             var l = 0.0;\n\
             if (i > 0u) {{ l = {src}[i - 1u]; }}\n\
             var r = 0.0;\n\
             if (i + 1u < n) {{ r = {src}[i + 1u]; }}\n\
             {dst}[i] = 0.25 * l + 0.5 * {src}[i] + 0.25 * r;\n\
         }}\n"
    ))
    .read(src)
    .write(dst)
}

#[test]
fn a_ping_pong_stencil_chain_is_tiled_in_groups_of_odd_length() {
    let mut b = GraphBuilder::new("PingPong");
    b.inout("a", "f32").inout("b", "f32");
    for k in 0..6 {
        let (src, dst) = if k % 2 == 0 { ("a", "b") } else { ("b", "a") };
        b.kernel(&format!("s{k}"), smooth(src, dst));
    }
    let desc = built(&b);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    // Six would write `a` back while the first step reads it beyond its tile; five leave `a` to `s5`,
    // which overwrites it.
    assert_eq!(names(&fusion), vec![vec!["s0", "s1", "s2", "s3", "s4"]]);
    // Buffers of 1024 elements get the smallest tile (many workgroups for a short, latency-bound chain).
    let tiling = fusion.groups[0].tiling.expect("a tiled group");
    assert_eq!((tiling.tile, tiling.halo), ([64, 1], [4, 0]));
    let OpDesc::Kernel(k) = &fusion.desc.nodes[0].op else {
        panic!("not a kernel")
    };
    // `a` is read, `b` written back; one workgroup per tile.
    let bound: Vec<(&str, AccessMode)> = k
        .bindings
        .iter()
        .map(|a| (&*desc.buffers[a.buffer as usize].name, a.mode))
        .collect();
    assert_eq!(
        bound,
        vec![("a", AccessMode::Read), ("b", AccessMode::Write)]
    );
    let DispatchDesc::Workgroups([x, ..]) = &k.dispatch else {
        panic!("not a dispatch of workgroups: {:?}", k.dispatch)
    };
    assert_eq!(&*x.text, "b.len().div_ceil(64)");
    assert_eq!(fusion.desc.nodes[5].name, "s5");
    // Past 65535 tiles of 1024 the dispatch would not fit one dimension: left unfused.
    let longest = vec![Some(65535 * 1024); desc.buffers.len()];
    let tiled = graph_core::fusion::fuse(&desc, &longest, MAX_FUSED_BINDINGS);
    assert_eq!(tiled.groups.len(), 1);
    let longer = vec![Some(65535 * 1024 + 1); desc.buffers.len()];
    let unfused = graph_core::fusion::fuse(&desc, &longer, MAX_FUSED_BINDINGS);
    assert!(unfused.groups.is_empty(), "{:?}", names(&unfused));
}

#[test]
fn graph_owned_steps_of_a_stencil_chain_stay_in_workgroup_memory() {
    let mut b = GraphBuilder::new("Temporaries");
    b.input("x", "f32").output("y", "f32");
    for t in 0..3 {
        b.owned(&format!("t{t}"), "f32", 4096);
    }
    b.kernel("s0", smooth("x", "t0"))
        .kernel("s1", smooth("t0", "t1"))
        .kernel("s2", smooth("t1", "t2"))
        .kernel("s3", smooth("t2", "y"));
    let desc = built(&b);
    let lengths = vec![Some(4096); desc.buffers.len()];
    let fusion = graph_core::fusion::fuse(&desc, &lengths, MAX_FUSED_BINDINGS);
    assert_valid(&fusion);
    assert_eq!(names(&fusion), vec![vec!["s0", "s1", "s2", "s3"]]);
    let group = &fusion.groups[0];
    assert_eq!(group.tiling.map(|t| t.halo), Some([3, 0]));
    // Long buffers get the largest tile that fits: four tiles of 4-byte elements, 3 of halo on each side, in
    // 16 KiB leave 1018, whose largest multiple of 64 is 960.
    let long = vec![Some(1 << 24); desc.buffers.len()];
    let fused_long = graph_core::fusion::fuse(&desc, &long, MAX_FUSED_BINDINGS);
    assert_eq!(fused_long.groups[0].tiling.map(|t| t.tile), Some([960, 1]));
    let registers: Vec<&str> = group
        .registers
        .iter()
        .map(|&b| &*desc.buffers[b as usize].name)
        .collect();
    assert_eq!(registers, vec!["t0", "t1", "t2"]);
    // Over the declared lengths (what the macro promises) only the steps between graph-owned buffers tile,
    // and the bake above keeps that group inside its own.
    let declared = graph_core::fusion::fuse(&desc, &declared_lengths(&desc), MAX_FUSED_BINDINGS);
    assert_eq!(names(&declared), vec![vec!["s1", "s2"]]);
}

#[test]
fn a_single_stencil_is_not_tiled() {
    let mut b = GraphBuilder::new("One");
    b.input("x", "f32").inout("y", "f32").inout("z", "f32");
    b.kernel("s", smooth("x", "y"))
        .kernel("p", pointwise("y", "z"));
    let desc = built(&b);
    assert!(fuse(&desc).groups.iter().all(|g| g.tiling.is_none()));
}

#[test]
fn interleaved_chains_are_tiled_each_on_its_own() {
    let mut b = GraphBuilder::new("Lanes");
    for c in 0..3 {
        b.inout(&format!("a{c}"), "f32")
            .inout(&format!("b{c}"), "f32");
    }
    // Declared step by step, so the topological order interleaves the chains.
    for k in 0..4 {
        for c in 0..3 {
            let (a, bb) = (format!("a{c}"), format!("b{c}"));
            let (src, dst) = if k % 2 == 0 { (&a, &bb) } else { (&bb, &a) };
            b.kernel(&format!("c{c}s{k}"), smooth(src, dst));
        }
    }
    let desc = built(&b);
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    assert_eq!(
        names(&fusion),
        (0..3)
            .map(|c| (0..3).map(|k| format!("c{c}s{k}")).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_node_reading_a_step_between_two_others_splits_the_chain_there() {
    let mut b = GraphBuilder::new("Peek");
    b.input("x", "f32").output("y", "f32");
    b.owned("t", "f32", 4096).owned("u", "f32", 4096);
    b.kernel("s0", smooth("x", "t"))
        .readback("peek", "t")
        .kernel("s1", smooth("t", "u"))
        .kernel("s2", smooth("u", "t"))
        .kernel("s3", smooth("t", "y"));
    let desc = built(&b);
    let lengths = vec![Some(4096); desc.buffers.len()];
    let fusion = graph_core::fusion::fuse(&desc, &lengths, MAX_FUSED_BINDINGS);
    assert_valid(&fusion);
    // `peek` reads what `s0` wrote before `s2` overwrites it: all four cannot run as one node.
    assert_eq!(names(&fusion), vec![vec!["s0", "s1"], vec!["s2", "s3"]]);
    // `s0`'s `t` goes back to memory for `peek`.
    let OpDesc::Kernel(k) = &fusion.desc.nodes[0].op else {
        panic!("not a kernel")
    };
    let t = desc.buffers.iter().position(|b| b.name == "t").unwrap_or(0) as u32;
    assert!(
        k.bindings
            .iter()
            .any(|a| a.buffer == t && a.mode == AccessMode::Write)
    );
}

/// `dst = scale * src`, texel by texel at the invocation's own coordinate over a `w` x `h` launch of 8 x 8
/// workgroups (`dx` moves the load `dx` texels along: not pointwise unless 0).
fn texels(src: &str, dst: &str, scale: &str, dx: i32) -> KernelSpec {
    let at = match dx {
        0 => "vec2<i32>(gid.xy)".to_string(),
        _ => format!("vec2<i32>(gid.xy) + vec2<i32>({dx}, 0)"),
    };
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(8, 8)\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{\n\
             if (gid.x >= params.w || gid.y >= params.h) {{ return; }}\n\
             let v = textureLoad({src}, {at}, 0);\n\
             textureStore({dst}, gid.xy, v * {scale});\n\
         }}\n"
    ))
    .read(src)
    .write(dst)
    .threads(&["params.w", "params.h"])
}

/// A graph of `w` x `h` launches over `rgba8unorm` textures: `src` the input, the others outputs.
fn texel_graph(outputs: &[&str]) -> GraphBuilder {
    let mut b = GraphBuilder::new("Texels");
    b.param("w", "u32")
        .param("h", "u32")
        .texture("src", "texture_2d<rgba8unorm>", Role::Input);
    for o in outputs {
        b.texture(o, "texture_2d<rgba8unorm>", Role::Output);
    }
    b
}

#[test]
fn kernels_at_their_own_texels_fuse_unless_one_reads_a_texture_another_writes() {
    // Two kernels reading `src`, and a third reading `third_reads`.
    let graph = |third_reads: &str| {
        let mut b = texel_graph(&["a", "b", "c"]);
        b.kernel("half", texels("src", "a", "0.5", 0))
            .kernel("quarter", texels("src", "b", "0.25", 0))
            .kernel("again", texels(third_reads, "c", "2.0", 0));
        built(&b)
    };
    // Reading `a`, which `half` writes: one kernel would bind `a` for reading and writing at once.
    let desc = graph("a");
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    assert_eq!(names(&fusion), vec![vec!["half", "quarter"]]);
    // Kept apart by the grouping, not tried and declined (what `FUSED` lists is what a bake fuses).
    assert!(fusion.declined.is_empty(), "{:?}", fusion.declined);
    let OpDesc::Kernel(k) = &fusion.desc.nodes[0].op else {
        panic!("not a kernel")
    };
    // `src` bound once, sampled; `a` and `b` as storage written; the members' launch kept.
    assert_eq!(k.bindings.len(), 3, "{:?}", k.bindings);
    for declaration in [
        "var fuse_b0: texture_2d<f32>;",
        "var fuse_b1: texture_storage_2d<rgba8unorm, write>;",
        "var fuse_b2: texture_storage_2d<rgba8unorm, write>;",
    ] {
        assert!(k.declarations.contains(declaration), "{}", k.declarations);
    }
    assert_eq!(k.workgroup_size, [8, 8, 1]);
    assert!(
        matches!(&k.dispatch, DispatchDesc::Threads(d) if d[0].text == "params.w" && d[1].text == "params.h")
    );
    assert!(matches!(fusion.desc.nodes[2].op, OpDesc::Kernel(_)));

    // Positive control of the clash: the third reading `src` too joins the group.
    let desc = graph("src");
    let fusion = fuse(&desc);
    assert_valid(&fusion);
    assert_eq!(names(&fusion), vec![vec!["half", "quarter", "again"]]);
}

#[test]
fn texel_kernels_at_a_neighbour_or_of_another_launch_stay_apart() {
    // A load one texel along is no own coordinate.
    let mut b = texel_graph(&["a", "b"]);
    b.kernel("half", texels("src", "a", "0.5", 0))
        .kernel("shifted", texels("src", "b", "0.25", 1));
    let desc = built(&b);
    let OpDesc::Kernel(shifted) = &desc.nodes[1].op else {
        panic!("not a kernel")
    };
    assert!(!shifted.pointwise);
    assert!(fuse(&desc).groups.is_empty());

    // Another launch: `w` x `w`.
    let mut b = texel_graph(&["a", "b"]);
    b.kernel("half", texels("src", "a", "0.5", 0)).kernel(
        "square",
        texels("src", "b", "0.25", 0).threads(&["params.w", "params.w"]),
    );
    assert!(fuse(&built(&b)).groups.is_empty());

    // A kernel of two dimensions that binds a buffer indexes it by `gid.x` in no row of its own: not
    // pointwise, so not a candidate.
    let mut b = texel_graph(&["a"]);
    b.output("y", "f32");
    b.kernel("half", texels("src", "a", "0.5", 0)).kernel(
        "rows",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)\n\
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n\
                 if (gid.x < arrayLength(&y)) { y[gid.x] = textureLoad(src, gid.xy, 0).r; }\n\
             }\n",
        )
        .read("src")
        .write("y")
        .threads(&["params.w", "params.h"]),
    );
    let desc = built(&b);
    let OpDesc::Kernel(rows) = &desc.nodes[1].op else {
        panic!("not a kernel")
    };
    assert!(!rows.pointwise);
    assert!(fuse(&desc).groups.is_empty());
}
