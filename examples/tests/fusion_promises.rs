//! Every graph of the examples keeps the promise of its `FUSED` constant: each group the macro lists runs as
//! one kernel at bake (alone or inside a larger one), or `Baked::check_fused` says which did not and why. The
//! library's graphs are checked here; each example program checks its own after bake.

#![forbid(unsafe_code)]

use examples::edge_detect::{EdgeDetect, EdgeDetectBuffers, EdgeDetectNode};
use examples::edge_pipeline::{Blur, BlurBuffers, EdgePipeline, EdgePipelineBuffers};
use graph_runtime::example::{Pipeline, PipelineBuffers, Saxpy, SaxpyBuffers};
use graph_runtime::{Baked, Buffer, Error, Gpu, TaskGraph, graph};

graph! {
    /// `acc` halved, then `step` added: two pointwise library kernels over one extent, a promise to keep.
    graph Pointwise {
        buffers { step: [f32] = input, acc: [f32] = inout }
        kernel halve = kernels::scale(data: acc, alpha: 0.5);
        kernel add = kernels::axpy(x: step, y: acc, a: 1.0);
    }
}

/// Bake kept every promise of `promised` and declined nothing.
fn kept<G: TaskGraph>(g: &Baked<G>, promised: &[&[G::Node]]) -> Result<(), Error> {
    g.check_fused(promised)?;
    let declined = g.untyped().fusion_declined();
    assert!(declined.is_empty(), "{declined:?}");
    Ok(())
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
    kept(&g, EdgeDetect::FUSED)?;
    // A positive control: a promise bake cannot keep (a stencil is no pointwise kernel) is refused, by name.
    let broken = g.check_fused(&[&[EdgeDetectNode::BlurX, EdgeDetectNode::BlurY]]);
    let message = broken
        .as_ref()
        .err()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        matches!(&broken, Err(Error::FusionNotKept { group, .. }) if group == "[`blur_x`, `blur_y`]"),
        "{broken:?}"
    );
    assert!(
        message.starts_with("graph `EdgeDetect`: `FUSED` lists [`blur_x`, `blur_y`]"),
        "{message}"
    );

    let g = Blur::bake(
        &gpu,
        BlurBuffers {
            src: &b[0],
            rows: &b[1],
            dst: &b[2],
        },
    )?;
    kept(&g, Blur::FUSED)?;

    let edges = gpu.texture("texture_2d<rgba8unorm>", [64, 48, 1])?;
    let g = EdgePipeline::bake(
        &gpu,
        EdgePipelineBuffers {
            image: &b[0],
            blur_rows: &b[1],
            blurred: &b[2],
            gradient: &b[3],
            edges: &edges,
        },
    )?;
    kept(&g, EdgePipeline::FUSED)?;

    let g = Saxpy::bake(&gpu, SaxpyBuffers { x: &b[0], y: &b[1] })?;
    kept(&g, Saxpy::FUSED)?;

    let g = Pipeline::bake(
        &gpu,
        PipelineBuffers {
            image: &b[0],
            edges: &b[1],
        },
    )?;
    kept(&g, Pipeline::FUSED)?;

    // The graphs above are stencils, which promise nothing; this one promises its two kernels as one.
    assert_eq!(
        Pointwise::FUSED,
        [[PointwiseNode::Halve, PointwiseNode::Add]]
    );
    let g = Pointwise::bake(
        &gpu,
        PointwiseBuffers {
            step: &b[0],
            acc: &b[1],
        },
    )?;
    kept(&g, Pointwise::FUSED)?;
    // The example programs check their own graphs the same way after each bake (`tests/programs.rs` runs
    // them): 01_saxpy, 03_heat, 04_interop, 05_poisson and the flagship.
    Ok(())
}
