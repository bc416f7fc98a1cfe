//! Transient memory on the GPU: graph-owned buffers that never live at one step of a replay share one heap,
//! and a pipeline still computes what the CPU does while kernels poison every region they may reuse.

#![forbid(unsafe_code)]

mod common;

use common::{gpu, poison_f32, random_u32, rng};
use graph_runtime::memory::Apart;
use graph_runtime::{BakedGraph, Error, GraphBuilder, KernelSpec, LIBRARY};

/// `dst[i] = src[min(i + 1, n - 1)] + 1`: one step of the pipeline, exact in `f32` for small integers.
fn shift_add_one(src: &str, dst: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
             let n = arrayLength(&{dst});
             if (gid.x < n) {{ {dst}[gid.x] = {src}[min(gid.x + 1u, n - 1u)] + 1.0; }}
         }}"
    ))
    .read(src)
    .write(dst)
}

/// Writes NaN over all of `scratch`: if a live buffer shared its memory, the pipeline would carry NaNs.
fn poison(scratch: &str) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
             if (gid.x < arrayLength(&{scratch})) {{ {scratch}[gid.x] = bitcast<f32>(0x7fc00000u); }}
         }}"
    ))
    .write(scratch)
}

const LEN: u64 = 1000;

/// The step that is a copy.
const COPIED: usize = 50;

/// `input -> t1 -> .. -> t{stages-1} -> output`, each step a kernel of its own (no fusion) but the middle
/// one, a copy (placed buffers are copied by their ranges too), and beside step
/// `i` (after step `i - 1`, by an edge) a kernel poisoning a scratch buffer `s{i}` that lives for that step
/// alone: the plan may put it anywhere but over the intermediates that step reads and writes.
fn pipeline(stages: usize) -> GraphBuilder {
    let mut b = GraphBuilder::new("Pipeline");
    b.input("input", "f32").output("output", "f32");
    let name = |i: usize| match i {
        0 => "input".to_string(),
        i if i == stages => "output".to_string(),
        i => format!("t{i}"),
    };
    for i in 1..stages {
        b.owned(&format!("t{i}"), "f32", LEN);
    }
    for i in 1..=stages {
        let (step, spoil, scratch) = (format!("k{i}"), format!("p{i}"), format!("s{i}"));
        b.owned(&scratch, "f32", LEN);
        if i == COPIED {
            b.copy(&step, &name(i - 1), &name(i));
        } else {
            b.kernel(&step, shift_add_one(&name(i - 1), &name(i)));
            b.no_fusion(&step);
        }
        b.kernel(&spoil, poison(&scratch));
        b.no_fusion(&spoil);
        if i > 1 {
            b.edge(&format!("k{}", i - 1), &spoil);
        }
    }
    b
}

#[test]
fn a_pipeline_shares_memory_between_stages_and_still_computes_what_the_cpu_does()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let stages = 100;
    let desc = pipeline(stages)
        .build(&LIBRARY)
        .map_err(|e| Error::Gpu(e.to_string()))?;
    let n = LEN as usize;
    let input = gpu.buffer_from_slice(&vec![0.0f32; n])?;
    let output = gpu.buffer_from_slice(&vec![0.0f32; n])?;
    let mut graph = BakedGraph::bake(
        &gpu,
        desc,
        &[("input", input.as_any()), ("output", output.as_any())],
    )?;
    let plan = graph.memory_plan().clone();
    assert_eq!(plan.conflict(), None);
    // 99 intermediates and 100 scratch buffers of 4000 bytes; at each step at most two intermediates and one
    // scratch buffer live, each in 4096 bytes at the usual 256-byte alignment (two heaps: a kernel binds a
    // heap read-only or writable, not both).
    assert_eq!(plan.unaliased_bytes, 199 * 4000);
    assert!(plan.apart.iter().all(Option::is_none), "{:?}", plan.apart);
    assert!(
        plan.heap_bytes <= 3 * 4096,
        "heaps of {:?} bytes",
        plan.heaps
    );
    assert_eq!(graph.owned_bytes(), plan.heap_bytes);
    assert_eq!(graph.owned_bytes(), plan.owned_bytes());
    for replay in 0..3 {
        let values: Vec<f32> = (0..n).map(|_| random_u32(&mut rng, 1000) as f32).collect();
        input.write(&values)?;
        poison_f32(&output);
        graph.replay_blocking()?;
        let got = output.read_blocking()?;
        for (i, &g) in got.iter().enumerate() {
            // Every step but the copy shifts by one and adds one.
            let want = values[(i + stages - 1).min(n - 1)] + (stages - 1) as f32;
            assert_eq!(g, want, "replay {replay}: output[{i}]");
        }
    }
    Ok(())
}

/// `dst[i] = src[i] * scale + add`.
fn affine(src: &str, dst: &str, scale: f32, add: f32) -> KernelSpec {
    KernelSpec::wgsl(format!(
        "@compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
             if (gid.x < arrayLength(&{dst})) {{ {dst}[gid.x] = {src}[gid.x] * {scale:?} + {add:?}; }}
         }}"
    ))
    .read(src)
    .write(dst)
}

#[test]
fn a_buffer_reusing_memory_after_an_edge_alone_is_ordered_by_a_barrier() -> Result<(), Error> {
    // `a` writes t1 and `b` reads it; `c` follows `b` by an edge alone and writes t2 into t1's memory. The
    // graph's own hazards put no barrier before `c`: the memory plan must (the validation runs' sync
    // validation reports the write after read without it).
    let gpu = gpu();
    let mut rng = rng();
    let mut b = GraphBuilder::new("Reuse");
    b.input("x", "f32").output("y", "f32").output("z", "f32");
    b.owned("t1", "f32", LEN).owned("t2", "f32", LEN);
    b.kernel("a", affine("x", "t1", 1.0, 1.0));
    b.kernel("b", affine("t1", "y", 1.0, 1.0));
    b.kernel("c", affine("x", "t2", 2.0, 0.0));
    b.kernel("d", affine("t2", "z", 1.0, 1.0));
    b.edge("b", "c");
    for node in ["a", "b", "c", "d"] {
        b.no_fusion(node);
    }
    let desc = b.build(&LIBRARY).map_err(|e| Error::Gpu(e.to_string()))?;
    let n = LEN as usize;
    let x = gpu.buffer_from_slice(&vec![0.0f32; n])?;
    let y = gpu.buffer_from_slice(&vec![0.0f32; n])?;
    let z = gpu.buffer_from_slice(&vec![0.0f32; n])?;
    let mut graph = BakedGraph::bake(
        &gpu,
        desc,
        &[("x", x.as_any()), ("y", y.as_any()), ("z", z.as_any())],
    )?;
    let plan = graph.memory_plan();
    let index = |name: &str| {
        graph
            .description()
            .buffers
            .iter()
            .position(|b| b.name == name)
    };
    let (t1, t2) = (index("t1").expect("t1"), index("t2").expect("t2"));
    let (p1, p2) = (
        plan.placements[t1].expect("t1 placed"),
        plan.placements[t2].expect("t2 placed"),
    );
    assert!(p1.shares_memory(&p2), "{p1:?} {p2:?}");
    for replay in 0..3 {
        let values: Vec<f32> = (0..n).map(|_| random_u32(&mut rng, 1000) as f32).collect();
        x.write(&values)?;
        poison_f32(&y);
        poison_f32(&z);
        graph.replay_blocking()?;
        let (got_y, got_z) = (y.read_blocking()?, z.read_blocking()?);
        for i in 0..n {
            assert_eq!(got_y[i], values[i] + 2.0, "replay {replay}: y[{i}]");
            assert_eq!(got_z[i], values[i] * 2.0 + 1.0, "replay {replay}: z[{i}]");
        }
    }
    Ok(())
}

graph_runtime::graph! {
    /// Three steps through two graph-owned buffers, `b` marked to keep memory of its own.
    graph Marked {
        buffers {
            x: [f32] = input,
            a: [f32; 1000],
            #[no_alias]
            b: [f32; 1000],
            c: [f32; 1000],
            y: [f32] = output,
        }
        #[no_fusion]
        kernel one(x: read, a: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&a)) { a[gid.x] = x[gid.x] + 1.0; }
            }
        }
        #[no_fusion]
        kernel two(a: read, b: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&b)) { b[gid.x] = a[gid.x] + 1.0; }
            }
        }
        #[no_fusion]
        kernel three(b: read, c: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&c)) { c[gid.x] = b[gid.x] + 1.0; }
            }
        }
        #[no_fusion]
        kernel four(c: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = c[gid.x] + 1.0; }
            }
        }
    }
}

graph_runtime::graph! {
    /// The same steps, the whole graph marked.
    #[no_alias]
    graph Unshared {
        buffers {
            x: [f32] = input,
            a: [f32; 1000],
            c: [f32; 1000],
            y: [f32] = output,
        }
        #[no_fusion]
        kernel one(x: read, a: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&a)) { a[gid.x] = x[gid.x] + 1.0; }
            }
        }
        #[no_fusion]
        kernel two(a: read, c: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&c)) { c[gid.x] = a[gid.x] + 1.0; }
            }
        }
        #[no_fusion]
        kernel three(c: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&y)) { y[gid.x] = c[gid.x] + 1.0; }
            }
        }
    }
}

#[test]
fn no_alias_keeps_a_buffer_or_a_whole_graph_out_of_the_heaps() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let n = LEN as usize;
    let values: Vec<f32> = (0..n).map(|_| random_u32(&mut rng, 1000) as f32).collect();
    let x = gpu.buffer_from_slice(&values)?;
    let y = gpu.buffer_from_slice(&vec![0.0f32; n])?;

    poison_f32(&y);
    let mut marked = Marked::bake(&gpu, MarkedBuffers { x: &x, y: &y })?;
    let plan = marked.untyped().memory_plan();
    let index = |name: &str| {
        Marked::DESCRIPTION
            .buffers
            .iter()
            .position(|b| b.name == name)
    };
    let (a, b, c) = (
        index("a").expect("a"),
        index("b").expect("b"),
        index("c").expect("c"),
    );
    assert_eq!(plan.apart[b], Some(Apart::NoAlias));
    assert_eq!(plan.placements[b], None);
    // a (steps 0-1) and c (steps 2-3) may share, and do.
    let (pa, pc) = (
        plan.placements[a].expect("a placed"),
        plan.placements[c].expect("c placed"),
    );
    assert!(pa.shares_memory(&pc), "{pa:?} {pc:?}");
    assert_eq!(marked.untyped().owned_bytes(), plan.heap_bytes + 4000);
    assert_eq!(marked.untyped().owned_bytes(), plan.owned_bytes());
    let names: Vec<&str> = Marked::DESCRIPTION
        .buffers
        .iter()
        .map(|b| &*b.name)
        .collect();
    let plan_lines = plan.summary(&names);
    // The constant `graph!` wrote (at WebGPU's 256-byte alignment; offsets are all 0 here, so it does not
    // matter): the same buffers in the same heaps, the same bytes.
    let declared = Marked::MEMORY.expect("every graph-owned buffer has a declared length");
    assert_eq!(declared.unaliased_bytes, plan.unaliased_bytes);
    assert_eq!(declared.placements.len(), 3);
    for (name, place) in declared.placements {
        let b = index(name).expect("a buffer of the graph");
        assert_eq!(
            place.map(|p| p.0),
            plan.placements[b].map(|p| p.heap),
            "{name}"
        );
    }
    assert_eq!(declared.owned_bytes, 8000);
    assert_eq!(declared.owned_bytes, marked.untyped().owned_bytes());
    marked.replay_blocking()?;
    let got = y.read_blocking()?;
    for i in 0..n {
        assert_eq!(got[i], values[i] + 4.0, "Marked: y[{i}]");
    }
    // The profile's trace carries the plan: which buffers share a heap, and why `b` is apart.
    let profile = marked.profile()?;
    assert_eq!(profile.memory, plan_lines);
    let trace: serde_json::Value =
        serde_json::from_str(&profile.to_chrome_trace()).expect("the trace is JSON");
    let events = trace["traceEvents"].as_array().expect("an event list");
    let memory = events
        .iter()
        .find(|e| e["name"] == "memory plan")
        .expect("a memory plan event");
    let lines = memory["args"]["plan"].as_array().expect("its lines");
    assert!(
        lines
            .iter()
            .any(|l| l.as_str().is_some_and(|l| l.contains("b (#[no_alias])"))),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l
            .as_str()
            .is_some_and(|l| l.contains("a @0") && l.contains("c @0"))),
        "{lines:?}"
    );

    poison_f32(&y);
    let mut unshared = Unshared::bake(&gpu, UnsharedBuffers { x: &x, y: &y })?;
    let plan = unshared.untyped().memory_plan();
    assert!(
        plan.placements.iter().all(Option::is_none),
        "{:?}",
        plan.placements
    );
    assert_eq!(plan.heap_bytes, 0);
    assert_eq!(unshared.untyped().owned_bytes(), 2 * 4000);
    let declared = Unshared::MEMORY.expect("every graph-owned buffer has a declared length");
    assert_eq!(declared.owned_bytes, 2 * 4000);
    assert!(declared.placements.iter().all(|(_, place)| place.is_none()));
    unshared.replay_blocking()?;
    let got = y.read_blocking()?;
    for i in 0..n {
        assert_eq!(got[i], values[i] + 3.0, "Unshared: y[{i}]");
    }
    Ok(())
}
