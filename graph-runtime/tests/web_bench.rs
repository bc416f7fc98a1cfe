//! The benchmark's shapes in a browser: `cargo xtask web-bench` builds this in release for wasm32 and runs it
//! in headless Chromium on WebGPU (SwiftShader), printing a table like `benches/replay_vs_hand_written.rs`'s
//! for the sides the web has: the fused and the unfused graph, both through the portable recorder (the only
//! one there), parameters in the uniform buffer. Each side's output is checked against the f64 reference
//! first, its outputs poisoned. The wall time of a run is an awaited replay, the clock (`performance.now()`) read before
//! `replay()` and after its future: what an application on the page sees, including the browser's delay
//! in telling it the work is done. A benchmark, not a test: ignored unless asked for (`--include-ignored`).

#![cfg(target_arch = "wasm32")]
#![forbid(unsafe_code)]

#[path = "../benches/shapes/mod.rs"]
mod shapes;

use graph_runtime::{BakedGraph, Buffer, Error, Gpu};
use shapes::{Dag, N, all_shapes, graph_of, inputs, names_of};
use wasm_bindgen_test::{Instant, console_log, wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// Timed runs per side, after 3 warm-up runs.
const RUNS: usize = 30;

/// Checks `graph`'s checked buffers against the reference after one run from fresh state, outputs poisoned.
async fn check_once(
    graph: &mut BakedGraph,
    dag: &Dag,
    buffers: &[Buffer<f32>],
    state: &[f32],
    expected: &shapes::Expected,
) -> Result<(), String> {
    for (b, buffer) in buffers.iter().enumerate().skip(1) {
        buffer
            .write(&shapes::fresh(dag, b, state))
            .map_err(|e| e.to_string())?;
    }
    graph
        .replay()
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| e.to_string())?;
    for (&b, reference) in dag.checked.iter().zip(expected) {
        let got = buffers[b].read().await.map_err(|e| e.to_string())?;
        shapes::compare(dag, "web", b, &got, reference)?;
    }
    Ok(())
}

/// The median wall time of `RUNS` awaited replays, in microseconds.
async fn measure(graph: &mut BakedGraph) -> Result<f64, Error> {
    for _ in 0..3 {
        graph.replay()?.await?;
    }
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        graph.replay()?.await?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[RUNS / 2])
}

#[wasm_bindgen_test]
#[ignore = "a benchmark: `cargo xtask web-bench`"]
async fn shapes_in_the_browser() {
    let gpu = Gpu::new().await.expect("a WebGPU adapter");
    console_log!("adapter: {}", gpu.summary());
    // What the browser's clock resolves: 5 us on a cross-origin isolated page in Chromium, else 100 us.
    let isolated = js_sys::Reflect::get(&js_sys::global(), &"crossOriginIsolated".into())
        .ok()
        .and_then(|v| v.as_bool());
    console_log!("cross-origin isolated: {isolated:?}");
    let limits = gpu.device().limits();
    console_log!(
        "storage buffers per shader stage: {}, workgroup memory: {} bytes",
        limits.max_storage_buffers_per_shader_stage,
        limits.max_compute_workgroup_storage_size
    );
    console_log!(
        "{N}-element f32 buffers; medians of {RUNS} awaited replays after 3 warm-up runs; each side's output \
         checked against an f64 reference first"
    );
    console_log!("| shape          | nodes | levels | side            |   wall us | us/node |");
    console_log!("|----------------|------:|-------:|-----------------|----------:|--------:|");
    let shapes = all_shapes();
    for dag in &shapes {
        let (x, state, expected) = inputs(dag);
        let mut buffers = vec![gpu.buffer_from_slice(&x).expect("x")];
        for _ in 1..dag.buffers {
            buffers.push(gpu.buffer_zeroed::<f32>(N).expect("a buffer"));
        }
        let names = names_of(dag);
        let bindings: Vec<(&str, &graph_runtime::AnyBuffer)> = names
            .iter()
            .zip(&buffers)
            .map(|(n, b)| (n.as_str(), b.as_any()))
            .collect();
        for fusion in [true, false] {
            let desc = graph_of(dag, fusion).expect("the shape's graph");
            let mut graph = BakedGraph::bake(&gpu, desc, &bindings).expect("bake");
            check_once(&mut graph, dag, &buffers, &state, &expected)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let wall = measure(&mut graph).await.expect("the runs");
            let kernels = dag.nodes.len()
                - graph
                    .fused()
                    .iter()
                    .map(|g| g.members.len() - 1)
                    .sum::<usize>();
            let side = if fusion {
                format!("fused ({kernels} k)")
            } else {
                "unfused".to_string()
            };
            console_log!(
                "| {:<14} | {:>5} | {:>6} | {:<15} | {:>9.1} | {:>7.2} |",
                dag.name,
                dag.nodes.len(),
                dag.levels,
                side,
                wall,
                wall / dag.nodes.len() as f64
            );
        }
    }
}
