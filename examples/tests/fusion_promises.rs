//! Every graph of the examples keeps the promise of its `FUSED` constant: each group the macro lists runs as
//! one kernel at bake (alone or inside a larger one), or bake says why not (`fusion_declined`).

#![forbid(unsafe_code)]

use examples::edge_detect::{EdgeDetect, EdgeDetectBuffers};
use examples::edge_pipeline::{Blur, BlurBuffers, EdgePipeline, EdgePipelineBuffers};
use graph_runtime::example::{Saxpy, SaxpyBuffers};
use graph_runtime::{Baked, Buffer, Error, Gpu, TaskGraph};

/// Each group of `promised` lies within one group bake fused, and bake declined nothing.
fn assert_kept<G: TaskGraph>(baked: &Baked<G>, promised: &[&[G::Node]]) {
    let graph = baked.untyped();
    assert!(
        graph.fusion_declined().is_empty(),
        "{}: {:?}",
        graph.description().name,
        graph.fusion_declined()
    );
    for group in promised {
        let members: Vec<u32> = group.iter().map(|&n| G::node_index(n) as u32).collect();
        assert!(
            graph
                .fused()
                .iter()
                .any(|f| members.iter().all(|m| f.members.contains(m))),
            "{}: {group:?} promised, bake fused {:?}",
            graph.description().name,
            graph.fused()
        );
    }
}

fn zeros(gpu: &Gpu, n: usize) -> Result<Buffer<f32>, Error> {
    gpu.buffer_zeroed::<f32>(n)
}

#[test]
fn every_example_graph_fuses_at_bake_what_its_constant_lists() -> Result<(), Error> {
    let gpu = Gpu::new_blocking()?;
    let n = 64 * 48;
    let b: Vec<Buffer<f32>> = (0..5).map(|_| zeros(&gpu, n)).collect::<Result<_, _>>()?;

    let g = EdgeDetect::bake(
        &gpu,
        EdgeDetectBuffers {
            image: &b[0],
            blur_tmp: &b[1],
            blurred: &b[2],
            gradient: &b[3],
            edges: &b[4],
        },
    )?;
    assert_kept(&g, EdgeDetect::FUSED);

    let g = Blur::bake(
        &gpu,
        BlurBuffers {
            src: &b[0],
            rows: &b[1],
            dst: &b[2],
        },
    )?;
    assert_kept(&g, Blur::FUSED);

    let g = EdgePipeline::bake(
        &gpu,
        EdgePipelineBuffers {
            image: &b[0],
            blur_rows: &b[1],
            blurred: &b[2],
            gradient: &b[3],
            edges: &b[4],
        },
    )?;
    assert_kept(&g, EdgePipeline::FUSED);

    let g = Saxpy::bake(&gpu, SaxpyBuffers { x: &b[0], y: &b[1] })?;
    assert_kept(&g, Saxpy::FUSED);
    Ok(())
}
