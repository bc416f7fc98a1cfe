//! Alternatives (SYCL's dynamic command group): kernels of one signature, one active per replay, switched
//! after bake without re-baking; replays already submitted keep their choice.

#![forbid(unsafe_code)]

mod common;

use common::{assert_within, gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::{BakedGraph, Error, GraphBuilder, LIBRARY, graph};

graph! {
    /// The gradient of an image by Sobel's or Scharr's weights, read back by each replay.
    graph Edges {
        params { width: u32, height: u32 }
        buffers { image: [f32] = input, gradient: [f32] = output }
        alternatives edges {
            kernel sobel = kernels::sobel(input: image, output: gradient, width: params.width, height: params.height);
            kernel scharr = kernels::scharr(input: image, output: gradient, width: params.width, height: params.height);
        }
        readback out(gradient);
    }
}

type Filter = fn(&[f32], &mut [f32], usize, usize);

fn expected(filter: Filter, image: &[f32], (w, h): (usize, usize)) -> Vec<f32> {
    let mut out = vec![0.0; w * h];
    filter(image, &mut out, w, h);
    out
}

fn assert_close(actual: &[f32], expected: &[f32], what: &str) {
    let want: Vec<f64> = expected.iter().map(|&v| f64::from(v)).collect();
    let bound: Vec<f64> = want.iter().map(|v| 1e-4 * (1.0 + v.abs())).collect();
    assert_within(actual, &want, &bound, what);
}

#[test]
fn the_active_choice_runs_and_switching_needs_no_bake() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let (w, h) = (
        1 + random_u32(&mut rng, 90) as usize,
        1 + random_u32(&mut rng, 70) as usize,
    );
    let pixels = random_f32s(&mut rng, w * h);
    let image = gpu.buffer_from_slice(&pixels)?;
    let gradient = gpu.buffer_zeroed::<f32>(w * h)?;
    let mut g = Edges::bake(
        &gpu,
        EdgesBuffers {
            image: &image,
            gradient: &gradient,
        },
    )?;
    *g.params_mut() = EdgesParams::new(w as u32, h as u32);
    let sobel = expected(kernels::cpu::sobel, &pixels, (w, h));
    let scharr = expected(kernels::cpu::scharr, &pixels, (w, h));
    assert_ne!(
        sobel, scharr,
        "the two filters must differ for the test to see a switch"
    );

    // The first choice is active after bake.
    assert_eq!(g.active_choice("edges"), Some("sobel"));
    poison_f32(&gradient);
    g.replay()?.wait()?;
    assert_close(&read(&gradient), &sobel, "sobel after bake");

    // Switched with replays in flight: each keeps the choice it was submitted with.
    let first = g.replay()?;
    g.select(EdgesChoice::Scharr)?;
    let second = g.replay()?;
    assert_close(
        &first.wait()?.read(Edges::READBACKS.out)?,
        &sobel,
        "in flight before the switch",
    );
    assert_close(
        &second.wait()?.read(Edges::READBACKS.out)?,
        &scharr,
        "after the switch",
    );
    assert_eq!(g.active_choice("edges"), Some("scharr"));

    g.select(EdgesChoice::Sobel)?;
    assert_close(
        &g.replay()?.wait()?.read(Edges::READBACKS.out)?,
        &sobel,
        "switched back",
    );

    // Only choices can be selected: the typed API takes an `EdgesChoice` (a node that is no choice does not
    // compile); the untyped one checks at run time.
    let mut untyped = BakedGraph::bake(
        &gpu,
        Edges::DESCRIPTION,
        &[("image", image.as_any()), ("gradient", gradient.as_any())],
    )?;
    assert!(matches!(untyped.select("out"), Err(Error::NotANode { .. })));
    Ok(())
}

#[test]
fn alternatives_order_as_one_node() {
    let d = Edges::DESCRIPTION;
    // Both choices are in one level, each before the readback, and no edge joins them.
    assert_eq!(d.levels.len(), 2);
    assert_eq!(&*d.levels[0], &[0, 1]);
    let edges: Vec<(u32, u32)> = d.edges.iter().map(|e| (e.from, e.to)).collect();
    assert_eq!(edges, [(0, 2), (1, 2)]);
}

#[test]
fn built_alternatives_switch_by_name() -> Result<(), Box<dyn std::error::Error>> {
    let bindings = [("input", "image"), ("output", "gradient")];
    let args = [("width", "params.width"), ("height", "params.height")];
    let mut b = GraphBuilder::new("Edges");
    b.param("width", "u32")
        .param("height", "u32")
        .input("image", "f32")
        .output("gradient", "f32");
    b.library("sobel", "sobel", &bindings, &args)
        .library("scharr", "scharr", &bindings, &args)
        .alternatives("edges", &["sobel", "scharr"]);
    let desc = b.build(&LIBRARY)?;
    // A graph file holds the group too, and describes the same.
    let text = graph_runtime::file::to_json(b.graph());
    assert!(text.contains("\"alternatives\""), "{text}");
    let loaded = graph_runtime::file::from_json(&text)?;
    assert_eq!(
        graph_runtime::pipeline::describe_graph(loaded, &LIBRARY)?,
        desc
    );
    let gpu = gpu();
    let mut rng = rng();
    let (w, h) = (17, 9);
    let pixels = random_f32s(&mut rng, w * h);
    let image = gpu.buffer_from_slice(&pixels)?;
    let gradient = gpu.buffer_zeroed::<f32>(w * h)?;
    let mut g = BakedGraph::bake(
        &gpu,
        desc,
        &[("image", image.as_any()), ("gradient", gradient.as_any())],
    )?;
    g.set_param("width", w as u32)?;
    g.set_param("height", h as u32)?;
    g.select("scharr")?;
    poison_f32(&gradient);
    g.replay()?.wait()?;
    assert_close(
        &read(&gradient),
        &expected(kernels::cpu::scharr, &pixels, (w, h)),
        "scharr",
    );
    assert!(g.select("edges").is_err(), "a group is not a choice");
    Ok(())
}
