//! Workgroup memory sized at bake and at each update (SYCL's `dynamic_work_group_memory`): a kernel's
//! `var<workgroup>` array sized by a WGSL `override`, whose value is a size expression over buffer lengths,
//! evaluated when the graph is baked and again when a rebind changes a length; checked against the device's
//! workgroup memory; and the workgroup size itself through an override (`@workgroup_size(tile)`), known at
//! bake and checked against the device. From the macro, the builder and a graph file, on both recorders,
//! against the CPU.

#![forbid(unsafe_code)]

mod common;

use common::{assert_within, gpu, poison_f32, poison_u32, random_f32s, read, rng, use_recorder};
use graph_runtime::ir::AccessMode;
use graph_runtime::{BakedGraph, Buffer, Error, GraphBuilder, KernelSpec, LIBRARY, graph};

/// Sums 8 blocks of `tile` elements of `x`, each block loaded into workgroup memory of `tile` floats.
const BLOCK_SUMS: &str = "override tile: u32;
var<workgroup> cache: array<f32, tile>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    for (var i = lid; i < tile; i = i + 64u) { cache[i] = x[wid.x * tile + i]; }
    workgroupBarrier();
    if (lid == 0u) {
        var total = 0.0;
        for (var i = 0u; i < tile; i = i + 1u) { total = total + cache[i]; }
        sums[wid.x] = total;
    }
}";

graph! {
    /// The sums of `x`'s 8 blocks, each through workgroup memory as long as a block.
    graph Blocks {
        buffers { x: [f32] = input, sums: [f32; 8] = output }
        kernel block_sums(x: read, sums: write) workgroups(8) overrides(tile: x.len() / 8) {
            override tile: u32;
            var<workgroup> cache: array<f32, tile>;

            @compute @workgroup_size(64)
            fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
                for (var i = lid; i < tile; i = i + 64u) { cache[i] = x[wid.x * tile + i]; }
                workgroupBarrier();
                if (lid == 0u) {
                    var total = 0.0;
                    for (var i = 0u; i < tile; i = i + 1u) { total = total + cache[i]; }
                    sums[wid.x] = total;
                }
            }
        }
    }
}

/// The 8 block sums on the CPU, with bounds for `f32` sums of that many terms.
fn expected(xs: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let tile = xs.len() / 8;
    let sums: Vec<f64> = (0..8)
        .map(|b| {
            xs[b * tile..(b + 1) * tile]
                .iter()
                .map(|&v| f64::from(v))
                .sum()
        })
        .collect();
    let bound = (0..8)
        .map(|b| {
            let abs: f64 = xs[b * tile..(b + 1) * tile]
                .iter()
                .map(|&v| f64::from(v).abs())
                .sum();
            abs * tile as f64 * f64::from(f32::EPSILON)
        })
        .collect();
    (sums, bound)
}

/// Replays over fresh `x`s of `8 * tile` elements for each tile, rebinding `x` each time.
fn run(
    mut rebind_and_replay: impl FnMut(&Buffer<f32>) -> Result<&'static str, Error>,
    gpu: &graph_runtime::Gpu,
    sums: &Buffer<f32>,
    what: &str,
) -> Result<(), Error> {
    let mut rng = rng();
    for tile in [100, 1000, 64, 3] {
        let xs = random_f32s(&mut rng, 8 * tile);
        let x = gpu.buffer_from_slice(&xs)?;
        poison_f32(sums);
        let recorder = rebind_and_replay(&x)?;
        let (want, bound) = expected(&xs);
        assert_within(
            &read(sums),
            &want,
            &bound,
            &format!("{what} {recorder} tile {tile}"),
        );
    }
    // A block past the device's workgroup memory: an error at the rebind, naming it.
    let huge = gpu.buffer_zeroed::<f32>(8 * 100_000)?;
    let refused = rebind_and_replay(&huge).err().map(|e| e.to_string());
    assert!(
        refused
            .as_deref()
            .is_some_and(|t| t.contains("workgroup memory") && t.contains("tile = 100000")),
        "{refused:?}"
    );
    Ok(())
}

#[test]
fn workgroup_memory_is_sized_by_the_bound_lengths_at_bake_and_at_each_rebind() -> Result<(), Error>
{
    let gpu = gpu();
    let sums = gpu.buffer_zeroed::<f32>(8)?;
    let first = gpu.buffer_zeroed::<f32>(8 * 5)?;
    for native in [true, false] {
        let mut g = Blocks::bake(
            &gpu,
            BlocksBuffers {
                x: &first,
                sums: &sums,
            },
        )?;
        if !use_recorder(&mut g, &gpu, native) {
            continue;
        }
        let replay = |x: &Buffer<f32>| {
            g.rebind(BlocksBuffers { x, sums: &sums })?;
            g.replay()?.wait()?;
            Ok(g.untyped().recorder())
        };
        run(replay, &gpu, &sums, "macro")?;
    }
    Ok(())
}

/// `Blocks` through the builder, its override named `name` and valued `value`.
fn built(name: &str, value: &str) -> GraphBuilder {
    let mut b = GraphBuilder::new("Blocks");
    b.input("x", "f32")
        .buffer("sums", "f32", graph_runtime::ir::Role::Output, Some(8));
    b.kernel(
        "block_sums",
        KernelSpec::wgsl(BLOCK_SUMS)
            .bind("x", "x", AccessMode::Read)
            .bind("sums", "sums", AccessMode::Write)
            .workgroups(&["8"])
            .set_override(name, value),
    );
    b
}

#[test]
fn built_and_loaded_overrides_describe_the_same_and_compute_the_same()
-> Result<(), Box<dyn std::error::Error>> {
    let b = built("tile", "x.len() / 8");
    let desc = b.build(&LIBRARY)?;
    let overrides = |d: &graph_runtime::GraphDesc| match &d.nodes[0].op {
        graph_runtime::desc::OpDesc::Kernel(k) => k.overrides.to_vec(),
        _ => Vec::new(),
    };
    assert_eq!(overrides(&desc), overrides(Blocks::DESCRIPTION));
    assert_eq!(overrides(&desc).len(), 1);
    let text = graph_runtime::file::to_json(b.graph());
    assert!(text.contains("\"overrides\""), "{text}");
    let loaded = graph_runtime::file::from_json(&text)?;
    assert_eq!(
        graph_runtime::pipeline::describe_graph(loaded, &LIBRARY)?,
        desc
    );
    let gpu = gpu();
    let sums = gpu.buffer_zeroed::<f32>(8)?;
    let first = gpu.buffer_zeroed::<f32>(8 * 5)?;
    for native in [true, false] {
        let mut g = BakedGraph::bake(
            &gpu,
            desc.clone(),
            &[("x", first.as_any()), ("sums", sums.as_any())],
        )?;
        if !use_recorder(&mut g, &gpu, native) {
            continue;
        }
        let replay = |x: &Buffer<f32>| {
            g.rebind("x", x.as_any())?;
            g.replay()?.wait()?;
            Ok(g.recorder())
        };
        run(replay, &gpu, &sums, "built")?;
    }
    Ok(())
}

#[test]
fn an_override_of_a_built_graph_names_its_mistakes() -> Result<(), Box<dyn std::error::Error>> {
    let build = |name: &str, value: &str| {
        built(name, value)
            .build(&LIBRARY)
            .err()
            .map(|e| e.to_string())
    };
    let unknown = build("til", "x.len() / 8");
    assert!(
        unknown
            .as_deref()
            .is_some_and(|t| t.contains("no override `til`") && t.contains("`tile`")),
        "{unknown:?}"
    );
    let param = build("tile", "params.n");
    assert!(
        param
            .as_deref()
            .is_some_and(|t| t.contains("fixed when the graph is baked")),
        "{param:?}"
    );
    Ok(())
}

/// `BLOCK_SUMS` with one invocation per element of a block: the workgroup as wide as the block.
const WIDE_BLOCK_SUMS: &str = "override tile: u32;
var<workgroup> cache: array<f32, tile>;

@compute @workgroup_size(tile)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    if (lid == 0u && wid.x == 0u) { launched[0] = groups.x; }
    cache[lid] = x[wid.x * tile + lid];
    workgroupBarrier();
    if (lid == 0u) {
        var total = 0.0;
        for (var i = 0u; i < tile; i = i + 1u) { total = total + cache[i]; }
        sums[wid.x] = total;
    }
}";

graph! {
    /// `Blocks` with a workgroup of `tile` invocations, dispatched over `x`'s elements: bake divides them
    /// by the workgroup size it computed.
    graph WideBlocks {
        buffers { x: [f32] = input, sums: [f32; 8] = output, launched: [u32; 1] = output }
        kernel block_sums(x: read, sums: write, launched: write) threads(x.len())
            overrides(tile: x.len() / 8)
        {
            override tile: u32;
            var<workgroup> cache: array<f32, tile>;

            @compute @workgroup_size(tile)
            fn main(
                @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(local_invocation_index) lid: u32,
                @builtin(num_workgroups) groups: vec3<u32>,
            ) {
                if (lid == 0u && wid.x == 0u) { launched[0] = groups.x; }
                cache[lid] = x[wid.x * tile + lid];
                workgroupBarrier();
                if (lid == 0u) {
                    var total = 0.0;
                    for (var i = 0u; i < tile; i = i + 1u) { total = total + cache[i]; }
                    sums[wid.x] = total;
                }
            }
        }
    }
}

/// Replays over fresh `x`s of `8 * tile` elements for each tile (the workgroup `tile` wide), then one whose
/// workgroup is past the device's limit.
fn run_wide(
    mut rebind_and_replay: impl FnMut(&Buffer<f32>) -> Result<&'static str, Error>,
    gpu: &graph_runtime::Gpu,
    sums: &Buffer<f32>,
    launched: &Buffer<u32>,
    what: &str,
) -> Result<(), Error> {
    let mut rng = rng();
    for tile in [100, 1, 64, 256, 7] {
        let xs = random_f32s(&mut rng, 8 * tile);
        let x = gpu.buffer_from_slice(&xs)?;
        poison_f32(sums);
        poison_u32(launched);
        let recorder = rebind_and_replay(&x)?;
        let (want, bound) = expected(&xs);
        let what = format!("{what} {recorder} workgroup {tile}");
        assert_within(&read(sums), &want, &bound, &what);
        // `threads(x.len())` over a workgroup of `tile`: exactly one workgroup per block.
        assert_eq!(read(launched), [8], "{what}: workgroups launched");
    }
    // 2048 invocations: within workgroup memory (8 KiB), past every device's invocations per workgroup.
    let wide = gpu.buffer_zeroed::<f32>(8 * 2048)?;
    let refused = rebind_and_replay(&wide).err().map(|e| e.to_string());
    assert!(
        refused
            .as_deref()
            .is_some_and(|t| t.contains("workgroup size [2048, 1, 1]") && t.contains("limits")),
        "{refused:?}"
    );
    Ok(())
}

#[test]
fn a_workgroup_sized_by_an_override_is_computed_at_bake_and_at_each_rebind() -> Result<(), Error> {
    let gpu = gpu();
    let sums = gpu.buffer_zeroed::<f32>(8)?;
    let launched = gpu.buffer_zeroed::<u32>(1)?;
    let first = gpu.buffer_zeroed::<f32>(8 * 5)?;
    assert_eq!(
        match &WideBlocks::DESCRIPTION.nodes[0].op {
            graph_runtime::desc::OpDesc::Kernel(k) => k.workgroup_size,
            _ => [9; 3],
        },
        [0, 1, 1],
        "the description leaves the overridden axis to bake"
    );
    for native in [true, false] {
        let mut g = WideBlocks::bake(
            &gpu,
            WideBlocksBuffers {
                x: &first,
                sums: &sums,
                launched: &launched,
            },
        )?;
        if !use_recorder(&mut g, &gpu, native) {
            continue;
        }
        let replay = |x: &Buffer<f32>| {
            g.rebind(WideBlocksBuffers {
                x,
                sums: &sums,
                launched: &launched,
            })?;
            g.replay()?.wait()?;
            Ok(g.untyped().recorder())
        };
        run_wide(replay, &gpu, &sums, &launched, "macro")?;
    }
    Ok(())
}

#[test]
fn a_built_and_a_loaded_workgroup_override_compute_the_same()
-> Result<(), Box<dyn std::error::Error>> {
    let mut b = GraphBuilder::new("WideBlocks");
    b.input("x", "f32")
        .buffer("sums", "f32", graph_runtime::ir::Role::Output, Some(8))
        .buffer("launched", "u32", graph_runtime::ir::Role::Output, Some(1));
    b.kernel(
        "block_sums",
        KernelSpec::wgsl(WIDE_BLOCK_SUMS)
            .bind("x", "x", AccessMode::Read)
            .bind("sums", "sums", AccessMode::Write)
            .bind("launched", "launched", AccessMode::Write)
            .threads(&["x.len()"])
            .set_override("tile", "x.len() / 8"),
    );
    let built = b.build(&LIBRARY)?;
    let loaded = graph_runtime::pipeline::describe_graph(
        graph_runtime::file::from_json(&graph_runtime::file::to_json(b.graph()))?,
        &LIBRARY,
    )?;
    assert_eq!(loaded, built);
    let gpu = gpu();
    let sums = gpu.buffer_zeroed::<f32>(8)?;
    let launched = gpu.buffer_zeroed::<u32>(1)?;
    let first = gpu.buffer_zeroed::<f32>(8 * 5)?;
    for (door, desc) in [("built", &built), ("loaded", &loaded)] {
        for native in [true, false] {
            let mut g = BakedGraph::bake(
                &gpu,
                desc.clone(),
                &[
                    ("x", first.as_any()),
                    ("sums", sums.as_any()),
                    ("launched", launched.as_any()),
                ],
            )?;
            if !use_recorder(&mut g, &gpu, native) {
                continue;
            }
            let replay = |x: &Buffer<f32>| {
                g.rebind("x", x.as_any())?;
                g.replay()?.wait()?;
                Ok(g.recorder())
            };
            run_wide(replay, &gpu, &sums, &launched, door)?;
        }
    }
    Ok(())
}
