//! Stencil fusion on the GPU: a chain of neighbourhood kernels tiled into one dispatch gives, to the bit, what
//! the same graph gives unfused, and what the CPU gives, at lengths around and between tiles, at both ends of
//! the buffers, with the parameter changed between replays. Inputs are fresh and random, outputs poisoned.

#![forbid(unsafe_code)]

mod common;

use common::{gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{BakedGraph, Error, Gpu, GraphBuilder, KernelSpec, LIBRARY, graph};

/// How a step reads past the ends of the buffers.
#[derive(Debug, Clone, Copy)]
enum Edge {
    /// Zero past the ends, the reads guarded by `if`.
    Guarded,
    /// The end element repeated, the index clamped with `min` and `max`.
    Clamped,
    /// Zero past the ends at distance 2, the index picked with `select`.
    Selected,
}

const EDGES: [Edge; 3] = [Edge::Guarded, Edge::Clamped, Edge::Selected];

impl Edge {
    /// `dst[i] = src[i] + k (l - 2 src[i] + r)`, `l` and `r` the neighbours this form reads.
    fn wgsl(self, src: &str, dst: &str) -> String {
        let neighbours = match self {
            Edge::Guarded => format!(
                "var l = 0.0; if (i > 0u) {{ l = {src}[i - 1u]; }}
                 var r = 0.0; if (i + 1u < n) {{ r = {src}[i + 1u]; }}"
            ),
            Edge::Clamped => {
                format!("let l = {src}[max(i, 1u) - 1u]; let r = {src}[min(i + 1u, n - 1u)];")
            }
            Edge::Selected => format!(
                "let l = select({src}[select(i - 2u, 0u, i < 2u)], 0.0, i < 2u);
                 let r = select(0.0, {src}[select(n - 1u, i + 2u, i + 2u < n)], i + 2u < n);"
            ),
        };
        format!(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {{
                 let i = gid.x;
                 let n = arrayLength(&{dst});
                 if (i >= n) {{ return; }}
                 {neighbours}
                 {dst}[i] = {src}[i] + params.k * (l - 2.0 * {src}[i] + r);
             }}"
        )
    }

    /// The same step on the CPU, in the same `f32` operations.
    fn step(self, src: &[f32], k: f32) -> Vec<f32> {
        let n = src.len();
        let at = |j: Option<usize>| j.filter(|&j| j < n).map_or(0.0, |j| src[j]);
        (0..n)
            .map(|i| {
                let (l, r) = match self {
                    Edge::Guarded => (at(i.checked_sub(1)), at(Some(i + 1))),
                    Edge::Clamped => (src[i.max(1) - 1], src[(i + 1).min(n - 1)]),
                    Edge::Selected => (at(i.checked_sub(2)), at(Some(i + 2))),
                };
                src[i] + k * (l - 2.0 * src[i] + r)
            })
            .collect()
    }
}

/// Steps of the chain: `a -> b`, `b -> a`, .. cycling through the edge forms.
const STEPS: usize = 11;

/// The chain, tiled or (`fused: false`) every step marked `no_fusion`.
fn heat(fused: bool) -> GraphBuilder {
    let mut b = GraphBuilder::new(if fused { "Heat" } else { "HeatUnfused" });
    b.param("k", "f32").inout("a", "f32").inout("b", "f32");
    for s in 0..STEPS {
        let (src, dst) = if s % 2 == 0 { ("a", "b") } else { ("b", "a") };
        let name = format!("s{s}");
        b.kernel(
            &name,
            KernelSpec::wgsl(EDGES[s % 3].wgsl(src, dst))
                .read(src)
                .write(dst),
        );
        if !fused {
            b.no_fusion(&name);
        }
    }
    b
}

/// Both buffers after the chain on the CPU.
fn expected(a: &[f32], k: f32) -> (Vec<f32>, Vec<f32>) {
    let (mut a, mut b) = (a.to_vec(), vec![0.0; a.len()]);
    for s in 0..STEPS {
        if s % 2 == 0 {
            b = EDGES[s % 3].step(&a, k);
        } else {
            a = EDGES[s % 3].step(&b, k);
        }
    }
    (a, b)
}

/// What one bake of the chain gave.
struct Run {
    /// `a` then `b` after the replay with each `k`.
    buffers: Vec<Vec<f32>>,
    /// How many steps ran tiled, and on what tile.
    tiled: usize,
    tile: Option<u32>,
}

/// Bakes the chain and replays it on `a0` (with `b` poisoned) for each `k`.
fn run(gpu: &Gpu, fused: bool, a0: &[f32], ks: &[f32]) -> Result<Run, Error> {
    let desc = heat(fused).build(&LIBRARY).expect("a good graph");
    let a = gpu.buffer_from_slice(a0)?;
    let b = gpu.buffer_zeroed::<f32>(a0.len())?;
    let mut graph = BakedGraph::bake(gpu, desc, &[("a", a.as_any()), ("b", b.as_any())])?;
    let tiled: usize = graph
        .fused()
        .iter()
        .filter(|g| g.tiling.is_some())
        .map(|g| g.members.len())
        .sum();
    let tile = graph
        .fused()
        .iter()
        .find_map(|g| g.tiling)
        .map(|t| t.tile[0]);
    let mut out = Vec::new();
    for &k in ks {
        a.write(a0)?;
        poison_f32(&b);
        graph.set_param("k", k)?;
        graph.replay_blocking()?;
        out.push(read(&a));
        out.push(read(&b));
    }
    Ok(Run {
        buffers: out,
        tiled,
        tile,
    })
}

#[test]
fn a_tiled_stencil_chain_gives_what_the_unfused_chain_and_the_cpu_give() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let ks = [0.2f32, 0.45];
    // Lengths of one element, shorter than a tile, around the smallest tile (64, which buffers shorter than
    // 32K elements get), between tiles, and long enough for the largest tile (1024) and a partial last one.
    let lengths = [
        1,
        3,
        63,
        64,
        65,
        2048 + random_u32(&mut rng, 2048) as usize,
        (1 << 19) + 1 + random_u32(&mut rng, 1023) as usize,
    ];
    for len in lengths {
        let a0 = random_f32s(&mut rng, len);
        let fused = run(&gpu, true, &a0, &ks)?;
        let unfused = run(&gpu, false, &a0, &ks)?;
        // Nine steps tile: ten or eleven would write back `a`, which the first step reads past its tile.
        assert_eq!((fused.tiled, unfused.tiled), (9, 0), "length {len}");
        let tile = if len > 1 << 19 { 1024 } else { 64 };
        assert_eq!(fused.tile, Some(tile), "length {len}");
        for (i, k) in ks.iter().enumerate() {
            let (a, b) = expected(&a0, *k);
            for (which, cpu) in [(0, &a), (1, &b)] {
                let (f, u) = (
                    &fused.buffers[2 * i + which],
                    &unfused.buffers[2 * i + which],
                );
                let name = ["a", "b"][which];
                let differing = (0..len).find(|&e| f[e].to_bits() != u[e].to_bits());
                assert_eq!(
                    differing, None,
                    "length {len}, k = {k}: `{name}` tiled differs from unfused at that element"
                );
                for e in 0..len {
                    assert!(
                        (f[e] - cpu[e]).abs() <= 1e-5,
                        "length {len}, k = {k}: `{name}`[{e}] is {} on the GPU, {} on the CPU",
                        f[e],
                        cpu[e]
                    );
                }
            }
        }
    }
    Ok(())
}

graph! {
    /// Three smoothing steps from `x` through graph-owned buffers into `y`, all of one declared length: the
    /// macro lists them as one tiled group, and bake keeps it.
    graph Smooth3 {
        buffers { x: [f32; 3000] = input, t: [f32; 3000], u: [f32; 3000], y: [f32; 3000] = output }
        kernel first(x: read, t: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                let n = arrayLength(&t);
                if (i >= n) { return; }
                t[i] = (x[max(i, 1u) - 1u] + 2.0 * x[i] + x[min(i + 1u, n - 1u)]) * 0.25;
            }
        }
        kernel second(t: read, u: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                let n = arrayLength(&u);
                if (i >= n) { return; }
                u[i] = (t[max(i, 1u) - 1u] + 2.0 * t[i] + t[min(i + 1u, n - 1u)]) * 0.25;
            }
        }
        kernel third(u: read, y: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                let n = arrayLength(&y);
                if (i >= n) { return; }
                y[i] = (u[max(i, 1u) - 1u] + 2.0 * u[i] + u[min(i + 1u, n - 1u)]) * 0.25;
            }
        }
    }
}

#[test]
fn the_macro_promises_a_tiled_group_and_bake_keeps_it() -> Result<(), Error> {
    use Smooth3Node::{First, Second, Third};
    assert_eq!(Smooth3::FUSED, &[&[First, Second, Third][..]]);
    let gpu = gpu();
    let mut rng = rng();
    let xs = random_f32s(&mut rng, 3000);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_zeroed::<f32>(3000)?;
    poison_f32(&y);
    let mut g = Smooth3::bake(&gpu, Smooth3Buffers { x: &x, y: &y })?;
    g.check_fused(Smooth3::FUSED)?;
    let group = &g.untyped().fused()[0];
    assert_eq!(group.tiling.map(|t| t.halo), Some([2, 0]));
    // `t` and `u` stay in workgroup memory: the bake allocates a placeholder for each.
    assert_eq!(group.registers.len(), 2);
    assert!(
        g.untyped()
            .to_dot(graph_runtime::pipeline::Detail::Plain)
            .contains("tiled: 3 steps in one dispatch")
    );
    g.replay_blocking()?;
    let smooth = |v: &[f32]| -> Vec<f32> {
        let n = v.len();
        (0..n)
            .map(|i| (v[i.max(1) - 1] + 2.0 * v[i] + v[(i + 1).min(n - 1)]) * 0.25)
            .collect()
    };
    let expected = smooth(&smooth(&smooth(&xs)));
    let got = read(&y);
    for i in 0..3000 {
        assert!(
            (got[i] - expected[i]).abs() <= 1e-6,
            "y[{i}] is {} on the GPU, {} on the CPU",
            got[i],
            expected[i]
        );
    }
    Ok(())
}

/// The steps that run tiled, and on what tile.
fn tiling(graph: &BakedGraph) -> (usize, Option<u32>) {
    let tiled = graph.fused().iter().filter(|g| g.tiling.is_some());
    (
        tiled.clone().map(|g| g.members.len()).sum(),
        tiled.map(|g| g.tiling.map(|t| t.tile[0])).next().flatten(),
    )
}

#[test]
fn a_rebind_tiles_again_for_the_new_lengths() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let desc = heat(true).build(&LIBRARY).expect("a good graph");
    let short = random_f32s(&mut rng, 100);
    let (a, b) = (
        gpu.buffer_from_slice(&short)?,
        gpu.buffer_zeroed::<f32>(100)?,
    );
    let mut graph = BakedGraph::bake(&gpu, desc, &[("a", a.as_any()), ("b", b.as_any())])?;
    assert_eq!(tiling(&graph), (9, Some(64)));
    let len = (1 << 19) + 1 + random_u32(&mut rng, 1000) as usize;
    let long = random_f32s(&mut rng, len);
    let (a, b) = (
        gpu.buffer_from_slice(&long)?,
        gpu.buffer_zeroed::<f32>(len)?,
    );
    // Between the two rebinds the buffers differ in length: nothing tiles.
    graph.rebind("a", a.as_any())?;
    assert_eq!(tiling(&graph), (0, None));
    graph.rebind("b", b.as_any())?;
    assert_eq!(tiling(&graph), (9, Some(1024)));
    poison_f32(&b);
    graph.set_param("k", 0.3f32)?;
    graph.replay_blocking()?;
    let (want_a, want_b) = expected(&long, 0.3);
    for (name, got, want) in [("a", read(&a), want_a), ("b", read(&b), want_b)] {
        let off = (0..len).find(|&e| (got[e] - want[e]).abs() > 1e-5);
        assert_eq!(
            off, None,
            "`{name}` after the rebind differs from the CPU there"
        );
    }
    Ok(())
}
