//! 2-D stencil fusion on the GPU: the library's image kernels (the flagship's blur passes and a gradient)
//! chained over one image run as one tiled dispatch, and give what the same graph gives unfused, to the last
//! bits, and what the CPU gives: on images narrower and shorter than a tile, of one row or one column, spanning
//! several tiles each way with partial tiles at the right and bottom edges, and with the image's sizes changed
//! between replays of one bake. Inputs are fresh and random, outputs poisoned.

#![forbid(unsafe_code)]

mod common;

use common::{gpu, poison_f32, random_f32s, random_u32, read, rng};
use graph_runtime::kernels::cpu;
use graph_runtime::{BakedGraph, Error, Gpu, graph};

/// The chain, fused or not: `$attr` is `no_fusion` for the unfused twin.
macro_rules! edges {
    ($name:ident $(#[$attr:ident])?) => {
        graph! {
            /// Blur along rows, then columns, then Sobel's gradient: three neighbourhood steps on one image.
            $(#[$attr])?
            graph $name {
                params { width: u32, height: u32 }
                buffers {
                    image: [f32] = input,
                    rows: [f32] = output,
                    blurred: [f32] = output,
                    gradient: [f32] = output,
                }
                kernel along_rows = kernels::blur_h(
                    input: image, output: rows, width: params.width, height: params.height, radius: 2u, sigma: 1.0
                );
                kernel along_columns = kernels::blur_v(
                    input: rows, output: blurred, width: params.width, height: params.height, radius: 2u, sigma: 1.0
                );
                kernel sobel = kernels::sobel(input: blurred, output: gradient, width: params.width, height: params.height);
            }
        }
    };
}

edges!(Tiled);
edges!(Unfused #[no_fusion]);

graph! {
    /// The same blur with its radius a parameter: how far it reads is not known when the graph is fused.
    graph RadiusParam {
        params { width: u32, height: u32, radius: u32 }
        buffers { image: [f32] = input, rows: [f32] = output, blurred: [f32] = output }
        kernel along_rows = kernels::blur_h(
            input: image, output: rows, width: params.width, height: params.height, radius: params.radius, sigma: 1.0
        );
        kernel along_columns = kernels::blur_v(
            input: rows, output: blurred, width: params.width, height: params.height, radius: params.radius, sigma: 1.0
        );
    }
}

graph! {
    /// Two image steps of the user's own, the image's sizes parameters: the macro lists them as one tiled
    /// group, and bake keeps it.
    graph Steps2d {
        params { w: u32, h: u32 }
        buffers { image: [f32; 3072] = input, down: [f32; 3072], across: [f32; 3072] = output }
        kernel down_step(image: read, down: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i >= params.w * params.h) { return; }
                let x = i % params.w;
                let y = i / params.w;
                down[i] = image[(max(y, 1u) - 1u) * params.w + x] + image[i]
                    + image[min(y + 1u, params.h - 1u) * params.w + x];
            }
        }
        kernel across_step(down: read, across: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i >= params.w * params.h) { return; }
                let x = i32(i % params.w);
                let row = (i / params.w) * params.w;
                let last = i32(params.w) - 1;
                across[i] = down[row + u32(clamp(x - 3, 0, last))] - down[row + u32(clamp(x + 3, 0, last))];
            }
        }
    }
}

graph! {
    /// The same two steps, the second adding its column to its value: it may not run in a tile's
    /// coordinates, so nothing tiles.
    graph Placed2d {
        params { w: u32, h: u32 }
        buffers { image: [f32; 3072] = input, down: [f32; 3072], across: [f32; 3072] = output }
        kernel down_step(image: read, down: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i >= params.w * params.h) { return; }
                let x = i % params.w;
                let y = i / params.w;
                down[i] = image[(max(y, 1u) - 1u) * params.w + x] + image[i]
                    + image[min(y + 1u, params.h - 1u) * params.w + x];
            }
        }
        kernel across_step(down: read, across: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i >= params.w * params.h) { return; }
                let x = i % params.w;
                let row = (i / params.w) * params.w;
                across[i] = down[row + min(x + 1u, params.w - 1u)] + f32(x);
            }
        }
    }
}

/// The three outputs after the chain on the CPU.
fn expected(image: &[f32], (w, h): (usize, usize)) -> Outputs {
    let n = w * h;
    let (mut rows, mut blurred, mut gradient) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    cpu::blur(image, &mut rows, (w, h), (2, 1.0), true);
    cpu::blur(&rows, &mut blurred, (w, h), (2, 1.0), false);
    cpu::sobel(&blurred, &mut gradient, w, h);
    [rows, blurred, gradient]
}

/// Each output within a few ulp of the CPU's, relative to `1 + |value|` (the GPU's `exp` and the order of the
/// sums differ from the CPU's).
#[track_caller]
fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_near(got, want, 1e-5, what);
}

/// Element-wise `|got - want| <= tolerance (1 + |want|)`, NaN (a poisoned element) never near; names the first
/// bad index.
#[track_caller]
fn assert_near(got: &[f32], want: &[f32], tolerance: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let near = (g - w).abs() <= tolerance * (1.0 + w.abs()) || (g.is_nan() && w.is_nan());
        assert!(
            near,
            "{what}[{i}]: {g} against {w}, off by {:e}",
            (g - w).abs()
        );
    }
}

/// `rows`, `blurred` and `gradient` after one replay.
type Outputs = [Vec<f32>; 3];

/// One bake of a chain over buffers of `len` elements, replayed on each image size of `sizes` with a fresh
/// picture: the outputs of each replay, and the tiled groups' member counts.
fn run(
    gpu: &Gpu,
    tiled: bool,
    len: usize,
    sizes: &[(usize, usize)],
    pictures: &[Vec<f32>],
) -> Result<(Vec<Outputs>, Vec<usize>), Error> {
    let image = gpu.buffer_zeroed::<f32>(len)?;
    let outputs = [(); 3].map(|_| gpu.buffer_zeroed::<f32>(len));
    let [rows, blurred, gradient] = outputs;
    let (rows, blurred, gradient) = (rows?, blurred?, gradient?);
    let buffers = [
        ("image", image.as_any()),
        ("rows", rows.as_any()),
        ("blurred", blurred.as_any()),
        ("gradient", gradient.as_any()),
    ];
    let mut graph = match tiled {
        true => BakedGraph::bake(gpu, Tiled::DESCRIPTION, &buffers)?,
        false => BakedGraph::bake(gpu, Unfused::DESCRIPTION, &buffers)?,
    };
    let groups = graph
        .fused()
        .iter()
        .filter(|g| g.tiling.is_some_and(|t| t.image))
        .map(|g| g.members.len())
        .collect();
    let mut results = Vec::new();
    for (&(w, h), picture) in sizes.iter().zip(pictures) {
        image.write(picture)?;
        for b in [&rows, &blurred, &gradient] {
            poison_f32(b);
        }
        graph.set_param("width", w as u32)?;
        graph.set_param("height", h as u32)?;
        graph.replay_blocking()?;
        results.push([read(&rows), read(&blurred), read(&gradient)]);
    }
    Ok((results, groups))
}

#[test]
fn an_image_chain_runs_as_one_tiled_dispatch_equal_to_the_unfused_graph_and_the_cpu()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    // One bake per buffer length, replayed on each size of pixels that fit it (the first fills it).
    let odd = 33 + random_u32(&mut rng, 30) as usize;
    let shapes: Vec<Vec<(usize, usize)>> = vec![
        vec![(1, 1)],
        vec![(1, 50), (50, 1), (5, 10)],
        vec![(odd, 70), (70, odd), (odd * 7, 10)],
        vec![(300, 130), (130, 300), (1000, 39)],
        // Past `MAX_TILED_PIXELS`: run step by step, each step wide.
        vec![(700, 400), (400, 700)],
    ];
    for sizes in shapes {
        let len = sizes[0].0 * sizes[0].1;
        let pictures: Vec<Vec<f32>> = sizes.iter().map(|_| random_f32s(&mut rng, len)).collect();
        let (tiled, groups) = run(&gpu, true, len, &sizes, &pictures)?;
        let (unfused, none) = run(&gpu, false, len, &sizes, &pictures)?;
        // The three steps in one dispatch up to `MAX_TILED_PIXELS`; none with `#[no_fusion]`.
        let promised = match len as u64 <= graph_runtime::pipeline::stencil::MAX_TILED_PIXELS {
            true => vec![3],
            false => vec![],
        };
        assert_eq!(groups, promised, "tiled groups over {len} pixels");
        assert!(none.is_empty(), "`#[no_fusion]` tiled {none:?}");
        for (i, &(w, h)) in sizes.iter().enumerate() {
            let n = w * h;
            let want = expected(&pictures[i][..n], (w, h));
            for (k, name) in ["rows", "blurred", "gradient"].iter().enumerate() {
                let what = format!("{name} of {w}x{h} (buffers of {len})");
                // The same code in both, but compiled into other modules: llvmpipe's results differ in the
                // last bit at some pixels (the driver may contract a product and a sum into one, or evaluate
                // the blur's `exp` of constants when it compiles, in one module and not the other).
                assert_near(
                    &tiled[i][k],
                    &unfused[i][k],
                    1e-6,
                    &format!("{what}: tiled vs unfused"),
                );
                assert_close(&tiled[i][k][..n], &want[k], &what);
                // Past the image, the buffers keep what they held: neither graph writes there.
                assert!(
                    tiled[i][k][n..].iter().all(|v| v.is_nan()),
                    "{what}: written past the image"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn a_blur_whose_radius_is_a_parameter_is_not_tiled_and_still_right() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let (w, h) = (40 + random_u32(&mut rng, 30) as usize, 23);
    let picture = random_f32s(&mut rng, w * h);
    let image = gpu.buffer_from_slice(&picture)?;
    let rows = gpu.buffer_zeroed::<f32>(w * h)?;
    let blurred = gpu.buffer_zeroed::<f32>(w * h)?;
    poison_f32(&blurred);
    let mut graph = BakedGraph::bake(
        &gpu,
        RadiusParam::DESCRIPTION,
        &[
            ("image", image.as_any()),
            ("rows", rows.as_any()),
            ("blurred", blurred.as_any()),
        ],
    )?;
    assert!(graph.fused().iter().all(|g| g.tiling.is_none()));
    graph.set_param("width", w as u32)?;
    graph.set_param("height", h as u32)?;
    graph.set_param("radius", 3u32)?;
    graph.replay_blocking()?;
    let mut want_rows = vec![0.0; w * h];
    let mut want = vec![0.0; w * h];
    cpu::blur(&picture, &mut want_rows, (w, h), (3, 1.0), true);
    cpu::blur(&want_rows, &mut want, (w, h), (3, 1.0), false);
    assert_close(&read(&blurred), &want, "blurred with a radius of 3");
    Ok(())
}

/// A 3 x 3 mean of the user's own, its edges clamped with `u32` `min` and `max`.
const BOX: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let w = params.width;
    let h = params.height;
    if (i >= w * h) { return; }
    let x = i % w;
    let y = i / w;
    let l = max(x, 1u) - 1u;
    let r = min(x + 1u, w - 1u);
    let u = max(y, 1u) - 1u;
    let d = min(y + 1u, h - 1u);
    let top = image[u * w + l] + image[u * w + x] + image[u * w + r];
    let middle = image[y * w + l] + image[y * w + x] + image[y * w + r];
    let bottom = image[d * w + l] + image[d * w + x] + image[d * w + r];
    boxed[i] = (top + middle + bottom) / 9.0;
}";

/// A central-difference gradient of the user's own, its edges clamped with `i32` `clamp`, two rows down.
const GRADIENT: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= params.width * params.height) { return; }
    let w = i32(params.width);
    let bottom = i32(params.height) - 1;
    let x = i32(i % params.width);
    let y = i32(i / params.width);
    let l = clamp(x - 1, 0, w - 1);
    let r = clamp(x + 1, 0, w - 1);
    let u = clamp(y - 2, 0, bottom);
    let d = clamp(y + 2, 0, bottom);
    let gx = rows[u32(y * w + r)] - rows[u32(y * w + l)];
    let gy = rows[u32(d * w + x)] - rows[u32(u * w + x)];
    gradient[i] = gx * gx + gy * gy;
}";

/// The user's box mean, the library's blur along rows, the user's gradient: one tiled dispatch unless
/// `unfused` (each step `no_fusion`).
fn users_chain(unfused: bool) -> Result<graph_runtime::GraphDesc, Error> {
    use graph_runtime::{GraphBuilder, KernelSpec, LIBRARY};
    let mut b = GraphBuilder::new(if unfused { "UsersUnfused" } else { "Users" });
    b.param("width", "u32").param("height", "u32");
    b.input("image", "f32")
        .output("boxed", "f32")
        .output("rows", "f32")
        .output("gradient", "f32");
    b.kernel("box", KernelSpec::wgsl(BOX).read("image").write("boxed"));
    b.library(
        "along_rows",
        "blur_h",
        &[("input", "boxed"), ("output", "rows")],
        &[
            ("width", "params.width"),
            ("height", "params.height"),
            ("radius", "1u"),
            ("sigma", "1.0"),
        ],
    );
    b.kernel(
        "gradient",
        KernelSpec::wgsl(GRADIENT).read("rows").write("gradient"),
    );
    if unfused {
        for node in ["box", "along_rows", "gradient"] {
            b.no_fusion(node);
        }
    }
    b.build(&LIBRARY).map_err(|e| Error::Bake {
        graph: "Users".into(),
        reason: e.to_string(),
    })
}

/// The user's chain on the CPU, in the GPU's `f32` operations.
fn users_expected(image: &[f32], (w, h): (usize, usize)) -> Outputs {
    let at = |v: &[f32], x: usize, y: usize| v[y * w + x];
    let boxed: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let (l, r, u, d) = (
                x.max(1) - 1,
                (x + 1).min(w - 1),
                y.max(1) - 1,
                (y + 1).min(h - 1),
            );
            let top = at(image, l, u) + at(image, x, u) + at(image, r, u);
            let middle = at(image, l, y) + at(image, x, y) + at(image, r, y);
            let bottom = at(image, l, d) + at(image, x, d) + at(image, r, d);
            (top + middle + bottom) / 9.0
        })
        .collect();
    let mut rows = vec![0.0; w * h];
    cpu::blur(&boxed, &mut rows, (w, h), (1, 1.0), true);
    let gradient = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let (l, r, u, d) = (
                x.max(1) - 1,
                (x + 1).min(w - 1),
                y.max(2) - 2,
                (y + 2).min(h - 1),
            );
            let gx = at(&rows, r, y) - at(&rows, l, y);
            let gy = at(&rows, x, d) - at(&rows, x, u);
            gx * gx + gy * gy
        })
        .collect();
    [boxed, rows, gradient]
}

#[test]
fn the_users_own_image_kernels_tile_with_the_librarys_and_equal_the_unfused_graph_and_the_cpu()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let odd = 33 + random_u32(&mut rng, 30) as usize;
    for sizes in [
        vec![(1, 1)],
        vec![(1, 40), (40, 1), (6, 6)],
        vec![(odd, 70), (70, odd)],
        vec![(300, 130), (130, 300)],
    ] {
        let len = sizes[0].0 * sizes[0].1;
        let image = gpu.buffer_zeroed::<f32>(len)?;
        let outputs = [(); 3].map(|_| gpu.buffer_zeroed::<f32>(len));
        let [boxed, rows, gradient] = outputs;
        let (boxed, rows, gradient) = (boxed?, rows?, gradient?);
        let buffers = [
            ("image", image.as_any()),
            ("boxed", boxed.as_any()),
            ("rows", rows.as_any()),
            ("gradient", gradient.as_any()),
        ];
        let mut tiled = BakedGraph::bake(&gpu, users_chain(false)?, &buffers)?;
        let mut unfused = BakedGraph::bake(&gpu, users_chain(true)?, &buffers)?;
        let groups: Vec<usize> = tiled
            .fused()
            .iter()
            .filter(|g| g.tiling.is_some_and(|t| t.image))
            .map(|g| g.members.len())
            .collect();
        assert_eq!(groups, vec![3], "the three steps in one tiled dispatch");
        assert!(unfused.fused().iter().all(|g| g.tiling.is_none()));
        for &(w, h) in &sizes {
            let n = w * h;
            let picture = random_f32s(&mut rng, len);
            image.write(&picture)?;
            let mut results = Vec::new();
            for graph in [&mut tiled, &mut unfused] {
                for b in [&boxed, &rows, &gradient] {
                    poison_f32(b);
                }
                graph.set_param("width", w as u32)?;
                graph.set_param("height", h as u32)?;
                graph.replay_blocking()?;
                results.push([read(&boxed), read(&rows), read(&gradient)]);
            }
            let want = users_expected(&picture[..n], (w, h));
            for (k, name) in ["boxed", "rows", "gradient"].iter().enumerate() {
                let what = format!("{name} of {w}x{h} (buffers of {len})");
                assert_near(
                    &results[0][k],
                    &results[1][k],
                    1e-6,
                    &format!("{what}: tiled vs unfused"),
                );
                assert_close(&results[0][k][..n], &want[k], &what);
                assert!(
                    results[0][k][n..].iter().all(|v| v.is_nan()),
                    "{what}: written past the image"
                );
            }
        }
    }
    Ok(())
}

graph! {
    /// Two steps over a 64 x 48 image whose sizes are literals in their code: a tile could not tell them its
    /// own sizes, so nothing tiles.
    graph Literal2d {
        buffers { image: [f32; 3072] = input, down: [f32; 3072], across: [f32; 3072] = output }
        kernel down_step(image: read, down: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i >= 3072u) { return; }
                let x = i % 64u;
                let y = i / 64u;
                down[i] = image[(max(y, 1u) - 1u) * 64u + x] + image[i] + image[min(y + 1u, 47u) * 64u + x];
            }
        }
        kernel across_step(down: read, across: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i >= 3072u) { return; }
                let x = i32(i % 64u);
                let row = (i / 64u) * 64u;
                across[i] = down[row + u32(clamp(x - 3, 0, 63))] - down[row + u32(clamp(x + 3, 0, 63))];
            }
        }
    }
}

/// `down` then `across` of [`Steps2d`] on the CPU, over a `w` x `h` image.
fn steps_2d(picture: &[f32], (w, h): (usize, usize)) -> Vec<f32> {
    let down: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            picture[(y.max(1) - 1) * w + x] + picture[i] + picture[(y + 1).min(h - 1) * w + x]
        })
        .collect();
    (0..w * h)
        .map(|i| {
            let (x, row) = (i % w, (i / w) * w);
            down[row + x.max(3) - 3] - down[row + (x + 3).min(w - 1)]
        })
        .collect()
}

#[test]
fn the_macro_promises_a_tiled_group_of_the_users_image_kernels_and_bake_keeps_it()
-> Result<(), Error> {
    use Steps2dNode::{AcrossStep, DownStep};
    assert_eq!(Steps2d::FUSED, &[&[DownStep, AcrossStep][..]]);
    let gpu = gpu();
    let mut rng = rng();
    let image = gpu.buffer_zeroed::<f32>(3072)?;
    let across = gpu.buffer_zeroed::<f32>(3072)?;
    let mut g = Steps2d::bake(
        &gpu,
        Steps2dBuffers {
            image: &image,
            across: &across,
        },
    )?;
    g.check_fused(Steps2d::FUSED)?;
    let group = &g.untyped().fused()[0];
    // Three columns and a row each side: the steps' reaches added up.
    assert_eq!(
        group.tiling.map(|t| (t.image, t.halo)),
        Some((true, [3, 1]))
    );
    for (w, h) in [(64, 48), (48, 64), (1, 3072), (3072, 1), (5, 7)] {
        let picture = random_f32s(&mut rng, 3072);
        image.write(&picture)?;
        poison_f32(&across);
        g.params_mut().w = w as u32;
        g.params_mut().h = h as u32;
        g.replay_blocking()?;
        let got = read(&across);
        let what = format!("across of {w}x{h}");
        assert_close(&got[..w * h], &steps_2d(&picture[..w * h], (w, h)), &what);
        assert!(
            got[w * h..].iter().all(|v| v.is_nan()),
            "{what}: written past the image"
        );
    }
    Ok(())
}

#[test]
fn a_users_kernel_with_literal_sizes_or_that_uses_its_place_is_not_tiled_and_still_right()
-> Result<(), Error> {
    assert!(Placed2d::FUSED.is_empty());
    assert!(Literal2d::FUSED.is_empty());
    let gpu = gpu();
    let mut rng = rng();
    let picture = random_f32s(&mut rng, 3072);
    let image = gpu.buffer_from_slice(&picture)?;
    let across = gpu.buffer_zeroed::<f32>(3072)?;
    poison_f32(&across);
    let mut g = Placed2d::bake(
        &gpu,
        Placed2dBuffers {
            image: &image,
            across: &across,
        },
    )?;
    assert!(g.untyped().fused().iter().all(|f| f.tiling.is_none()));
    g.params_mut().w = 64;
    g.params_mut().h = 48;
    g.replay_blocking()?;
    let (w, h) = (64, 48);
    let want: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let down = |x: usize| {
                picture[(y.max(1) - 1) * w + x]
                    + picture[y * w + x]
                    + picture[(y + 1).min(h - 1) * w + x]
            };
            down((x + 1).min(w - 1)) + x as f32
        })
        .collect();
    assert_close(&read(&across), &want, "across");
    Ok(())
}
