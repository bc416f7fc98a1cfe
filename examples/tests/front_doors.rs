//! One graph through every front door: written with `graph!`, built with the builder, loaded from the file
//! shipped in `examples/graphs/`. All three must give equal descriptions, and equal results on the GPU.
//!
//! The builder's graph takes its kernels' WGSL from the macro's description (the text the macro read from
//! the tokens); everything else (parameters, buffers, accesses, sizes) is built by calls here, and the
//! file is read as shipped. To rewrite the shipped files from the builder's graphs after changing a graph:
//! `cargo test -p examples --test front_doors -- --ignored write_the_shipped_files`.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use examples::edge_detect::{EdgeDetect, EdgeDetectBuffers, EdgeDetectParams, cpu_pipeline};
use graph_runtime::desc::OpDesc;
use graph_runtime::example::{Saxpy, SaxpyBuffers, SaxpyParams};
use graph_runtime::pipeline::describe_graph;
use graph_runtime::{
    BakedGraph, Buffer, Error, GraphBuilder, GraphDesc, KernelSpec, LIBRARY, file,
};

fn graphs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("graphs")
}

/// The WGSL of kernel `node` as the macro read it.
fn source_of(desc: &GraphDesc, node: &str) -> String {
    desc.nodes
        .iter()
        .find(|n| n.name == node)
        .and_then(|n| match &n.op {
            OpDesc::Kernel(k) => Some(k.source.to_string()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{} has no kernel `{node}`", desc.name))
}

fn edge_detect_builder() -> GraphBuilder {
    let desc = EdgeDetect::DESCRIPTION;
    let mut b = GraphBuilder::new("EdgeDetect");
    b.param("width", "u32")
        .param("height", "u32")
        .param("threshold", "f32");
    b.input("image", "f32");
    for output in ["blur_tmp", "blurred", "gradient", "edges"] {
        b.output(output, "f32");
    }
    for (node, read, written) in [
        ("blur_x", "image", "blur_tmp"),
        ("blur_y", "blur_tmp", "blurred"),
        ("sobel", "blurred", "gradient"),
        ("threshold", "gradient", "edges"),
    ] {
        let kernel = KernelSpec::wgsl(source_of(desc, node))
            .read(read)
            .write(written)
            .threads(&["params.width", "params.height"]);
        b.kernel(node, kernel);
    }
    b
}

fn saxpy_builder() -> GraphBuilder {
    let mut b = GraphBuilder::new("Saxpy");
    b.param("a", "f32").param("n", "u32");
    b.input("x", "f32").inout("y", "f32");
    let axpy = KernelSpec::wgsl(source_of(Saxpy::DESCRIPTION, "axpy"))
        .read("x")
        .read_write("y")
        .threads(&["params.n"]);
    b.kernel("axpy", axpy);
    b.library("twice", "scale", &[("data", "y")], &[("alpha", "2.0")]);
    b
}

fn load(name: &str) -> Result<GraphDesc, Error> {
    let graph = file::load(&graphs_dir().join(name))?;
    Ok(describe_graph(graph, &LIBRARY)?)
}

#[test]
fn the_macro_the_builder_and_the_file_describe_one_edge_detector() -> Result<(), Error> {
    let built = edge_detect_builder().build(&LIBRARY)?;
    assert_eq!(&built, EdgeDetect::DESCRIPTION);
    assert_eq!(&load("edge_detect.json")?, EdgeDetect::DESCRIPTION);
    Ok(())
}

#[test]
fn the_macro_the_builder_and_the_file_describe_one_saxpy() -> Result<(), Error> {
    let built = saxpy_builder().build(&LIBRARY)?;
    assert_eq!(&built, Saxpy::DESCRIPTION);
    assert_eq!(&load("saxpy.json")?, Saxpy::DESCRIPTION);
    Ok(())
}

/// A positive control for the comparison: a graph that differs in one dispatch size is a different description.
#[test]
fn a_graph_that_differs_in_one_size_is_not_equal() -> Result<(), Error> {
    let mut b = GraphBuilder::new("Saxpy");
    b.param("a", "f32").param("n", "u32");
    b.input("x", "f32").inout("y", "f32");
    let axpy = KernelSpec::wgsl(source_of(Saxpy::DESCRIPTION, "axpy"))
        .read("x")
        .read_write("y")
        .threads(&["params.n + 0"]);
    b.kernel("axpy", axpy);
    b.library("twice", "scale", &[("data", "y")], &[("alpha", "2.0")]);
    assert_ne!(&b.build(&LIBRARY)?, Saxpy::DESCRIPTION);
    Ok(())
}

/// Small deterministic pseudo-random numbers in `0..1`, seeded per run from the clock.
fn random_f32s(len: usize) -> Vec<f32> {
    let mut state = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

fn poisoned(gpu: &graph_runtime::Gpu, len: usize) -> Result<Buffer<f32>, Error> {
    gpu.buffer_from_slice(&vec![f32::NAN; len])
}

#[test]
fn the_three_edge_detectors_compute_the_same_pixels() -> Result<(), Error> {
    let gpu = graph_runtime::Gpu::new_blocking()?;
    let (width, height) = (67u32, 45u32);
    let len = (width * height) as usize;
    let pixels = random_f32s(len);
    let image = gpu.buffer_from_slice(&pixels)?;
    let threshold = 0.3f32;
    let mut results = Vec::new();
    for door in ["macro", "builder", "file"] {
        let outs: Vec<Buffer<f32>> = (0..4)
            .map(|_| poisoned(&gpu, len))
            .collect::<Result<_, _>>()?;
        let [blur_tmp, blurred, gradient, edges] = &outs[..] else {
            unreachable!("four outputs")
        };
        match door {
            "macro" => {
                let mut g = EdgeDetect::bake(
                    &gpu,
                    EdgeDetectBuffers {
                        image: &image,
                        blur_tmp,
                        blurred,
                        gradient,
                        edges,
                    },
                )?;
                g.set_params(EdgeDetectParams::new(width, height, threshold));
                g.replay()?.wait()?;
            }
            _ => {
                let desc = if door == "builder" {
                    edge_detect_builder().build(&LIBRARY)?
                } else {
                    load("edge_detect.json")?
                };
                let mut g = BakedGraph::bake(
                    &gpu,
                    desc,
                    &[
                        ("image", image.as_any()),
                        ("blur_tmp", blur_tmp.as_any()),
                        ("blurred", blurred.as_any()),
                        ("gradient", gradient.as_any()),
                        ("edges", edges.as_any()),
                    ],
                )?;
                g.set_param("width", width)?;
                g.set_param("height", height)?;
                g.set_param("threshold", threshold)?;
                g.replay()?.wait()?;
            }
        }
        results.push((door, blurred.read_blocking()?, gradient.read_blocking()?));
    }
    let cpu = cpu_pipeline(&pixels, width as usize, height as usize);
    for (door, blurred, gradient) in &results {
        // The flagship's tolerances: the GPU may fuse multiply-adds the CPU rounds twice.
        for (got, want) in blurred.iter().zip(&cpu.blurred) {
            assert!(
                (got - want).abs() <= 12.0 * f32::EPSILON / 2.0,
                "{door}: {got} vs {want}"
            );
        }
        for (got, want) in gradient.iter().zip(&cpu.gradient) {
            assert!((got - want).abs() <= 2e-5, "{door}: {got} vs {want}");
        }
    }
    // One description, one set of pipelines: the same bits, not only close.
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (door, blurred, gradient) in &results[1..] {
        assert_eq!(bits(blurred), bits(&results[0].1), "{door} blurred");
        assert_eq!(bits(gradient), bits(&results[0].2), "{door} gradient");
    }
    Ok(())
}

#[test]
fn the_three_saxpys_compute_the_same_numbers() -> Result<(), Error> {
    let gpu = graph_runtime::Gpu::new_blocking()?;
    let len = 1000;
    let (x, y0) = (random_f32s(len), random_f32s(len));
    let (a, n) = (1.5f32, 900u32);
    let x_buf = gpu.buffer_from_slice(&x)?;
    let mut outputs = Vec::new();
    for door in ["macro", "builder", "file"] {
        let y = gpu.buffer_from_slice(&y0)?;
        if door == "macro" {
            let mut g = Saxpy::bake(&gpu, SaxpyBuffers { x: &x_buf, y: &y })?;
            g.set_params(SaxpyParams::new(a, n));
            g.replay()?.wait()?;
        } else {
            let desc = if door == "builder" {
                saxpy_builder().build(&LIBRARY)?
            } else {
                load("saxpy.json")?
            };
            let mut g = BakedGraph::bake(&gpu, desc, &[("x", x_buf.as_any()), ("y", y.as_any())])?;
            g.set_param("a", a)?;
            g.set_param("n", n)?;
            g.replay()?.wait()?;
        }
        outputs.push(y.read_blocking()?);
    }
    for (i, got) in outputs[0].iter().enumerate() {
        // `a * x + y` may be one fused multiply-add on the GPU: within one rounding of each way.
        let want = if i < n as usize {
            (a * x[i] + y0[i]) * 2.0
        } else {
            y0[i] * 2.0
        };
        assert!(
            (got - want).abs() <= 4.0 * f32::EPSILON * want.abs().max(1.0),
            "y[{i}] = {got}, want {want}"
        );
    }
    assert_eq!(outputs[1], outputs[0], "builder");
    assert_eq!(outputs[2], outputs[0], "file");
    Ok(())
}

/// Rewrites the shipped files of these two graphs from the builder's graphs (run by hand, see the top).
#[test]
#[ignore = "writes examples/graphs/; run by hand after changing a graph"]
fn write_the_shipped_files() -> Result<(), Box<dyn std::error::Error>> {
    for (name, builder) in [
        ("edge_detect.json", edge_detect_builder()),
        ("saxpy.json", saxpy_builder()),
    ] {
        let path = graphs_dir().join(name);
        std::fs::write(&path, file::to_json(builder.graph()) + "\n")?;
    }
    Ok(())
}
