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

graph! {
    /// Choices over other buffers and another number of them: `u = 2x`, or `v = x + u`; then `out = u + v`,
    /// and `kept = v` (which only the second choice writes), after whichever ran.
    graph Either {
        buffers { x: [f32] = input, u: [f32] = inout, v: [f32] = inout, out: [f32] = output, kept: [f32] = output }
        alternatives pick {
            kernel double(x: read, u: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&u)) { u[gid.x] = 2.0 * x[gid.x]; }
                }
            }
            kernel shift(x: read, u: read, v: write) {
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x < arrayLength(&v)) { v[gid.x] = x[gid.x] + u[gid.x]; }
                }
            }
        }
        kernel sum(u: read, v: read, out: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&out)) { out[gid.x] = u[gid.x] + v[gid.x]; }
            }
        }
        copy keep(v -> kept);
    }
}

#[test]
fn choices_of_different_bindings_order_as_one_node_and_each_runs_alone() -> Result<(), Error> {
    // The group orders as one node accessing `x`, `u` and `v`: `sum` after either choice.
    let edges: Vec<(u32, u32)> = Either::DESCRIPTION
        .edges
        .iter()
        .map(|e| (e.from, e.to))
        .collect();
    assert!(
        edges.contains(&(0, 2)) && edges.contains(&(1, 2)),
        "{edges:?}"
    );
    // `keep` reads only what the second choice writes: after the group too.
    assert!(
        edges.contains(&(0, 3)) && edges.contains(&(1, 3)),
        "{edges:?}"
    );
    let gpu = gpu();
    let mut rng = rng();
    let n = 300;
    let xs = random_f32s(&mut rng, n);
    let x = gpu.buffer_from_slice(&xs)?;
    let u = gpu.buffer_zeroed::<f32>(n)?;
    let v = gpu.buffer_zeroed::<f32>(n)?;
    let out = gpu.buffer_zeroed::<f32>(n)?;
    let kept = gpu.buffer_zeroed::<f32>(n)?;
    for native in [true, false] {
        let mut g = Either::bake(
            &gpu,
            EitherBuffers {
                x: &x,
                u: &u,
                v: &v,
                out: &out,
                kept: &kept,
            },
        )?;
        if !common::use_recorder(&mut g, &gpu, native) {
            continue;
        }
        for choice in [
            EitherChoice::Double,
            EitherChoice::Shift,
            EitherChoice::Double,
        ] {
            g.select(choice)?;
            let (u0, v0) = (random_f32s(&mut rng, n), random_f32s(&mut rng, n));
            u.write(&u0)?;
            v.write(&v0)?;
            poison_f32(&out);
            poison_f32(&kept);
            g.replay()?.wait()?;
            let (want_u, want_v): (Vec<f32>, Vec<f32>) = match choice {
                EitherChoice::Double => (xs.iter().map(|x| 2.0 * x).collect(), v0.clone()),
                EitherChoice::Shift => {
                    (u0.clone(), xs.iter().zip(&u0).map(|(x, u)| x + u).collect())
                }
            };
            let want_out: Vec<f32> = want_u.iter().zip(&want_v).map(|(u, v)| u + v).collect();
            let what = format!("{} {choice:?}", g.untyped().recorder());
            common::assert_close(&read(&u), &want_u, &format!("{what}: u"));
            common::assert_close(&read(&v), &want_v, &format!("{what}: v"));
            common::assert_close(&read(&out), &want_out, &format!("{what}: out"));
            common::assert_close(&read(&kept), &want_v, &format!("{what}: kept"));
        }
    }
    Ok(())
}
