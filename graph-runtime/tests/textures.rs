//! Textures in a graph, through the builder: kernels sample, load and store textures of each format class
//! (normalized, 32-bit float, unsigned and signed integers) and dimension, edges are inferred through
//! them, results equal the CPU's on fresh inputs of odd sizes with the outputs poisoned first, and a bound
//! texture that is not what the graph declares is an error at bake.

#![forbid(unsafe_code)]

mod common;

use common::{gpu, poison_f32, poison_u32, random_u32, read, rng, use_recorder};
use graph_runtime::ir::Role;
use graph_runtime::{BakedGraph, Error, Gpu, GraphBuilder, KernelSpec, LIBRARY, Texture, graph};

/// Bytes of a texture filled with `byte`: what a kernel's output starts as, so a texel it failed to write
/// shows.
fn poison_texture(texture: &Texture, byte: u8) {
    let len = texture.read_blocking().expect("read").len();
    texture.write(&vec![byte; len]).expect("poison");
}

/// The words of the error `result` is, or nothing where it is `Ok`: what the assertions look for.
fn error_text<T>(result: Result<T, Error>) -> String {
    result.err().map(|e| e.to_string()).unwrap_or_default()
}

fn random_bytes(rng: &mut proptest::test_runner::TestRng, n: usize) -> Vec<u8> {
    (0..n).map(|_| random_u32(rng, 256) as u8).collect()
}

/// Luma of an `rgba8unorm` frame into an `r32float` texture, then each row's sum into a buffer: a texture
/// written by one kernel and read by the next (an edge inferred through it).
fn luma_graph() -> graph_runtime::GraphDesc {
    let mut b = GraphBuilder::new("Luma");
    b.param("width", "u32")
        .param("height", "u32")
        .texture("frame", "texture_2d<rgba8unorm>", Role::Input)
        .texture("luma", "texture_2d<r32float>", Role::Output)
        .output("rows", "f32");
    b.kernel(
        "weigh",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                let c = textureLoad(frame, vec2<i32>(gid.xy), 0);
                textureStore(luma, vec2<i32>(gid.xy), vec4<f32>(0.25 * c.r + 0.5 * c.g + 0.25 * c.b, 0.0, 0.0, 1.0));
            }",
        )
        .read("frame")
        .write("luma")
        .threads(&["params.width", "params.height"]),
    );
    b.kernel(
        "sum_rows",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.height) { return; }
                var total = 0.0;
                for (var x = 0u; x < params.width; x++) {
                    total += textureLoad(luma, vec2<u32>(x, gid.x), 0).r;
                }
                rows[gid.x] = total;
            }",
        )
        .read("luma")
        .write("rows")
        .threads(&["params.height"]),
    );
    b.build(&LIBRARY).expect("the luma graph checks")
}

/// The luma graph baked over a `width` x `height` frame, its textures and rows bound, its sizes set.
struct Luma {
    frame: Texture,
    luma: Texture,
    rows: graph_runtime::Buffer<f32>,
    g: BakedGraph,
}

fn bake_luma(
    gpu: &Gpu,
    desc: &graph_runtime::GraphDesc,
    (width, height): (u32, u32),
) -> Result<Luma, Error> {
    let frame = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
    let luma = gpu.texture("texture_2d<r32float>", [width, height, 1])?;
    let rows = gpu.buffer_zeroed::<f32>(height as usize)?;
    let mut g = BakedGraph::bake_with_textures(
        gpu,
        desc.clone(),
        &[("rows", rows.as_any())],
        &[("frame", &frame), ("luma", &luma)],
    )?;
    g.set_param("width", width)?;
    g.set_param("height", height)?;
    Ok(Luma {
        frame,
        luma,
        rows,
        g,
    })
}

/// The luma `weigh` computes of an `rgba8unorm` pixel: unorm8 reads as byte / 255, and the weights are
/// powers of two, so the CPU's f32 is the GPU's.
fn luma_of(p: &[u8]) -> f32 {
    let c = |k: usize| f32::from(p[k]) / 255.0;
    0.25 * c(0) + 0.5 * c(1) + 0.25 * c(2)
}

/// The `r32float` texture `luma` holds the luma of each of `pixels` (`what` names the replay in a failure);
/// returns what it holds.
fn assert_luma(luma: &Texture, pixels: &[u8], what: &str) -> Result<Vec<f32>, Error> {
    let got: Vec<f32> = bytemuck::cast_slice(&luma.read_blocking()?).to_vec();
    assert_eq!(got.len() * 4, pixels.len(), "{what}: texels");
    for (i, (got, p)) in got.iter().zip(pixels.chunks(4)).enumerate() {
        let want = luma_of(p);
        assert!(
            (got - want).abs() <= 1e-6,
            "{what} luma[{i}]: GPU {got}, CPU {want}"
        );
    }
    Ok(got)
}

#[test]
fn kernels_load_and_store_textures_and_order_through_them() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let desc = luma_graph();
    // The second kernel reads what the first wrote: an edge inferred on `luma`.
    let luma_index = desc
        .buffers
        .iter()
        .position(|b| b.name == "luma")
        .expect("luma") as u32;
    assert!(
        desc.edges.iter().any(|e| matches!(
            e.origin,
            graph_runtime::desc::EdgeOriginDesc::Inferred { buffer, .. } if buffer == luma_index
        )),
        "{:?}",
        desc.edges
    );
    for (width, height) in [(1, 1), (37, 23), (64, 3)] {
        let Luma {
            frame,
            luma,
            rows,
            mut g,
        } = bake_luma(&gpu, &desc, (width, height))?;
        // On Vulkan the native recorder binds the textures (in the layouts wgpu is told of before each run
        // of its command buffers); elsewhere, and when the portable one is asked for, wgpu's passes do.
        let want = if common::native_expected(&gpu) {
            "native"
        } else {
            "portable"
        };
        assert_eq!(g.recorder(), want);
        for _ in 0..2 {
            let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
            frame.write(&pixels)?;
            poison_texture(&luma, 0xff);
            poison_f32(&rows);
            g.replay()?.wait()?;
            assert_luma(&luma, &pixels, &format!("{width}x{height}"))?;
            // The CPU's f32 sums are the GPU's but for the order of the row's additions.
            let want: Vec<f32> = pixels.chunks(4).map(luma_of).collect();
            let sums = read(&rows);
            for y in 0..height as usize {
                let row = &want[y * width as usize..(y + 1) * width as usize];
                let w: f32 = row.iter().sum();
                let bound = 1e-5 * (1.0 + w.abs()) * width as f32;
                assert!(
                    (sums[y] - w).abs() <= bound,
                    "{width}x{height} rows[{y}]: GPU {}, CPU {w}",
                    sums[y]
                );
            }
        }
    }
    Ok(())
}

/// Integer formats, a 3-D texture and a 2-D array: each texel copied into a buffer, the layer or depth
/// index folded in, and a storage texture written as `rgba8uint` and read back whole.
#[test]
fn integer_formats_3d_textures_and_layers_load_and_store() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let mut b = GraphBuilder::new("Volumes");
    b.param("w", "u32")
        .param("h", "u32")
        .param("d", "u32")
        .texture("volume", "texture_3d<r32uint>", Role::Input)
        .texture("layers", "texture_2d_array<rgba8sint>", Role::Input)
        .texture(
            "marks",
            "texture_storage_2d_array<rgba8uint, write>",
            Role::Output,
        )
        .output("flat", "u32")
        .output("signed", "i32");
    b.kernel(
        "unroll",
        KernelSpec::wgsl(
            "@compute @workgroup_size(4, 4, 4)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.w || gid.y >= params.h || gid.z >= params.d) { return; }
                let i = gid.x + params.w * (gid.y + params.h * gid.z);
                flat[i] = textureLoad(volume, gid, 0).r * 4u + gid.z;
                let s = textureLoad(layers, gid.xy, gid.z, 0);
                signed[i] = s.x - 2 * s.w;
                textureStore(marks, gid.xy, gid.z, vec4<u32>(gid.x, gid.y, gid.z, 7u));
            }",
        )
        .read("volume")
        .read("layers")
        .write("marks")
        .write("flat")
        .write("signed")
        .threads(&["params.w", "params.h", "params.d"]),
    );
    let desc = b.build(&LIBRARY).expect("checks");
    let (w, h, d) = (5u32, 3u32, 2u32);
    let n = (w * h * d) as usize;
    let volume = gpu.texture("texture_3d<r32uint>", [w, h, d])?;
    let layers = gpu.texture("texture_2d_array<rgba8sint>", [w, h, d])?;
    let marks = gpu.texture("texture_2d_array<rgba8uint>", [w, h, d])?;
    let flat = gpu.buffer_zeroed::<u32>(n)?;
    let signed = gpu.buffer_zeroed::<i32>(n)?;
    let mut g = BakedGraph::bake_with_textures(
        &gpu,
        desc,
        &[("flat", flat.as_any()), ("signed", signed.as_any())],
        &[("volume", &volume), ("layers", &layers), ("marks", &marks)],
    )?;
    g.set_param("w", w)?;
    g.set_param("h", h)?;
    g.set_param("d", d)?;
    let texels: Vec<u32> = (0..n).map(|_| random_u32(&mut rng, 1 << 20)).collect();
    volume.write(bytemuck::cast_slice(&texels))?;
    let quads = random_bytes(&mut rng, n * 4);
    layers.write(&quads)?;
    flat.write(&vec![u32::MAX; n])?;
    signed.write(&vec![i32::MIN; n])?;
    poison_texture(&marks, 0xff);
    g.replay()?.wait()?;
    let layer = |i: usize| (i / (w * h) as usize) as u32;
    let want_flat: Vec<u32> = (0..n).map(|i| texels[i] * 4 + layer(i)).collect();
    assert_eq!(read(&flat), want_flat);
    let want_signed: Vec<i32> = (0..n)
        .map(|i| i32::from(quads[4 * i] as i8) - 2 * i32::from(quads[4 * i + 3] as i8))
        .collect();
    assert_eq!(read(&signed), want_signed);
    let want_marks: Vec<u8> = (0..n)
        .flat_map(|i| {
            let (x, y) = (i as u32 % w, i as u32 / w % h);
            [x as u8, y as u8, layer(i) as u8, 7]
        })
        .collect();
    assert_eq!(marks.read_blocking()?, want_marks);
    Ok(())
}

/// A one-kernel graph reading texture `t` of `ty` into buffer `out`.
fn reader(ty: &str) -> graph_runtime::GraphDesc {
    let mut b = GraphBuilder::new("Reader");
    b.texture("t", ty, Role::Input).output("out", "f32");
    b.kernel(
        "first",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main() { out[0] = textureLoad(t, vec2<u32>(0u, 0u), 0).r; }",
        )
        .read("t")
        .write("out")
        .threads(&["1"]),
    );
    b.build(&LIBRARY).expect("checks")
}

#[test]
fn a_bound_texture_unlike_the_declaration_is_an_error_at_bake() -> Result<(), Error> {
    let gpu = gpu();
    let out = gpu.buffer_zeroed::<f32>(1)?;
    let desc = reader("texture_2d<rgba8unorm>");
    let bake = |textures: &[(&str, &Texture)]| {
        BakedGraph::bake_with_textures(&gpu, desc.clone(), &[("out", out.as_any())], textures)
    };
    let message = |r: Result<BakedGraph, Error>| r.expect_err("refused").to_string();
    // The positive control: the declared texture bakes, and reads.
    let right = gpu.texture("texture_2d<rgba8unorm>", [2, 2, 1])?;
    right.write(&[51u8; 16])?;
    let mut g = bake(&[("t", &right)])?;
    poison_f32(&out);
    g.replay()?.wait()?;
    let first = read(&out)[0];
    assert!((first - 51.0 / 255.0).abs() <= 1e-6, "{first}");

    let m = message(bake(&[]));
    assert!(m.contains("texture `t`: no texture was bound"), "{m}");
    let float = gpu.texture("texture_2d<r32float>", [2, 2, 1])?;
    let m = message(bake(&[("t", &float)]));
    assert!(
        m.contains("R32Float") && m.contains("texture_2d<rgba8unorm>"),
        "{m}"
    );
    let volume = gpu.texture("texture_3d<rgba8unorm>", [2, 2, 2])?;
    let m = message(bake(&[("t", &volume)]));
    assert!(m.contains("D3 texture"), "{m}");
    let layered = gpu.texture("texture_2d_array<rgba8unorm>", [2, 2, 3])?;
    let m = message(bake(&[("t", &layered)]));
    assert!(m.contains("3 layers"), "{m}");
    let copy_only = Texture::from_wgpu(
        &gpu,
        gpu.device().create_texture(&wgpu::TextureDescriptor {
            label: None,
            size: wgpu::Extent3d {
                width: 2,
                height: 2,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        }),
    );
    let m = message(bake(&[("t", &copy_only)]));
    assert!(
        m.contains("lacks the usage") && m.contains("TEXTURE_BINDING"),
        "{m}"
    );
    let m = message(bake(&[("out", &right)]));
    assert!(m.contains("has no texture `out` (it has `t`)"), "{m}");
    let other = Gpu::new_blocking()?;
    let foreign = other.texture("texture_2d<rgba8unorm>", [2, 2, 1])?;
    let m = message(bake(&[("t", &foreign)]));
    assert!(m.contains("another `Gpu`"), "{m}");
    let m = message(BakedGraph::bake_with_textures(
        &gpu,
        desc.clone(),
        &[("out", out.as_any()), ("t", out.as_any())],
        &[("t", &right)],
    ));
    assert!(m.contains("has no external buffer `t`"), "{m}");
    // One texture under two names, one of them written: refused, as for buffers.
    let mut b = GraphBuilder::new("Copier");
    b.texture("src", "texture_2d<r32float>", Role::Input)
        .texture("dst", "texture_2d<r32float>", Role::Output);
    b.kernel(
        "copy_texels",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(dst, gid.xy, textureLoad(src, gid.xy, 0));
            }",
        )
        .read("src")
        .write("dst")
        .threads(&["2", "2"]),
    );
    let desc = b.build(&LIBRARY).expect("checks");
    let (one, other) = (
        gpu.texture("texture_2d<r32float>", [2, 2, 1])?,
        gpu.texture("texture_2d<r32float>", [2, 2, 1])?,
    );
    BakedGraph::bake_with_textures(&gpu, desc.clone(), &[], &[("src", &one), ("dst", &other)])?;
    let m = message(BakedGraph::bake_with_textures(
        &gpu,
        desc,
        &[],
        &[("src", &one), ("dst", &one)],
    ));
    assert!(m.contains("it is the texture bound to `src` too"), "{m}");
    Ok(())
}

#[test]
fn a_kernel_writing_a_texture_it_declares_read_is_refused_by_the_checks() {
    let mut b = GraphBuilder::new("Wrong");
    b.texture("t", "texture_2d<r32float>", Role::InOut);
    b.kernel(
        "store",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main() { textureStore(t, vec2<u32>(0u, 0u), vec4<f32>(1.0)); }",
        )
        .read("t")
        .threads(&["1"]),
    );
    let errors = b.build(&LIBRARY).expect_err("refused").to_string();
    assert!(
        errors.contains("kernel `store` writes `t`, which it declares `read`"),
        "{errors}"
    );
}

#[test]
fn rebinding_a_texture_takes_effect_and_a_wrong_one_changes_nothing() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let out = gpu.buffer_zeroed::<f32>(1)?;
    let desc = reader("texture_2d<r32float>");
    let first = gpu.texture("texture_2d<r32float>", [3, 2, 1])?;
    first.write(bytemuck::cast_slice(&[1.5f32; 6]))?;
    let mut g =
        BakedGraph::bake_with_textures(&gpu, desc, &[("out", out.as_any())], &[("t", &first)])?;
    g.replay()?.wait()?;
    assert_eq!(read(&out), vec![1.5]);
    let value = random_u32(&mut rng, 1000) as f32 + 0.25;
    let second = gpu.texture("texture_2d<r32float>", [1, 1, 1])?;
    second.write(bytemuck::cast_slice(&[value]))?;
    let report = g.rebind_texture("t", &second)?;
    // One set of bindings made again, by whichever recorder replays.
    assert_eq!(
        report.bind_groups_built + report.native_sets_built,
        1,
        "{report:?}"
    );
    poison_f32(&out);
    g.replay()?.wait()?;
    assert_eq!(read(&out), vec![value]);
    let wrong = gpu.texture("texture_2d<rgba8unorm>", [1, 1, 1])?;
    let m = g
        .rebind_texture("t", &wrong)
        .expect_err("refused")
        .to_string();
    assert!(m.contains("Rgba8Unorm"), "{m}");
    let m = g
        .rebind_texture("out", &second)
        .expect_err("refused")
        .to_string();
    assert!(m.contains("has no texture `out`"), "{m}");
    poison_f32(&out);
    g.replay()?.wait()?;
    assert_eq!(
        read(&out),
        vec![value],
        "the refused rebinds changed nothing"
    );
    Ok(())
}

#[test]
fn both_recorders_replay_a_textured_graph_between_the_applications_own_uses() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let desc = luma_graph();
    let (width, height) = (23u32, 11u32);
    let Luma {
        frame,
        luma,
        rows,
        mut g,
    } = bake_luma(&gpu, &desc, (width, height))?;
    // Native, portable, native again: each replay finds the textures where the application's writes and
    // reads (copies, which leave them in copy layouts) put them.
    for round in 0..3 {
        match round {
            1 => g.use_portable_recorder(),
            _ => {
                if let Err(e) = g.use_native_recorder(graph_runtime::NativeParamsIn::Buffer)
                    && common::native_expected(&gpu)
                {
                    panic!("the native recorder binds textures: {e}");
                }
            }
        }
        let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
        frame.write(&pixels)?;
        poison_texture(&luma, 0xff);
        poison_f32(&rows);
        g.replay()?.wait()?;
        let got = assert_luma(&luma, &pixels, &format!("round {round} ({})", g.recorder()))?;
        let sums = read(&rows);
        for y in 0..height as usize {
            let want: f32 = got[y * width as usize..(y + 1) * width as usize]
                .iter()
                .sum();
            assert!((sums[y] - want).abs() <= 1e-4, "round {round} rows[{y}]");
        }
    }
    Ok(())
}

/// Updates of a textured graph compile nothing: the native recorder keeps the pipelines that first bind each
/// texture (one per declared type and access), so an update, or a rebind to another texture of the type,
/// makes only bind groups for them; and the replay after gives the CPU's values.
#[test]
fn updates_of_a_textured_graph_compile_no_pipeline_again() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let desc = luma_graph();
    let (width, height) = (19u32, 7u32);
    let Luma {
        frame,
        luma,
        rows: _rows,
        mut g,
    } = bake_luma(&gpu, &desc, (width, height))?;
    let other = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
    for round in 0..4 {
        // Before any replay, after one, and alternating the frame between two textures.
        let report = match round % 2 {
            0 => g.update(desc.clone())?,
            _ => g.rebind_texture("frame", if round == 1 { &other } else { &frame })?,
        };
        assert_eq!(
            report.pipelines_built,
            0,
            "round {round} on the {} recorder: {report:?}",
            g.recorder()
        );
        assert_eq!(
            report.native_pipelines_built, 0,
            "round {round}: {report:?}"
        );
        let bound = if round == 1 || round == 2 {
            &other
        } else {
            &frame
        };
        let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
        bound.write(&pixels)?;
        poison_texture(&luma, 0xff);
        g.replay()?.wait()?;
        assert_luma(&luma, &pixels, &format!("round {round}"))?;
    }
    Ok(())
}

/// 1-D textures: a sampled `r32float` read with `textureLoad`, and an `r32uint` written as storage.
#[test]
fn one_dimensional_textures_load_and_store() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let mut b = GraphBuilder::new("Lines");
    b.param("n", "u32")
        .texture("line", "texture_1d<r32float>", Role::Input)
        .texture("marks", "texture_1d<r32uint>", Role::Output)
        .output("halves", "f32");
    b.kernel(
        "halve",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.n) { return; }
                halves[gid.x] = 0.5 * textureLoad(line, gid.x, 0).r;
                textureStore(marks, gid.x, vec4<u32>(gid.x * 3u + 1u));
            }",
        )
        .read("line")
        .write("marks")
        .write("halves")
        .threads(&["params.n"]),
    );
    let desc = b.build(&LIBRARY).expect("checks");
    let n = 70 + random_u32(&mut rng, 60);
    let line = gpu.texture("texture_1d<r32float>", [n, 1, 1])?;
    let marks = gpu.texture("texture_1d<r32uint>", [n, 1, 1])?;
    let halves = gpu.buffer_zeroed::<f32>(n as usize)?;
    let baked = BakedGraph::bake_with_textures(
        &gpu,
        desc,
        &[("halves", halves.as_any())],
        &[("line", &line), ("marks", &marks)],
    );
    // wgpu's GL backend reads 1-D textures as zeros: bake refuses them there.
    if gpu.summary().contains("(Gl,") {
        let m = baked.expect_err("refused on GL").to_string();
        assert!(m.contains("does not read 1-D textures right"), "{m}");
        return Ok(());
    }
    let mut g = baked?;
    g.set_param("n", n)?;
    let values = common::random_f32s(&mut rng, n as usize);
    line.write(bytemuck::cast_slice(&values))?;
    poison_f32(&halves);
    poison_texture(&marks, 0xff);
    g.replay()?.wait()?;
    let want: Vec<f32> = values.iter().map(|v| 0.5 * v).collect();
    assert_eq!(read(&halves), want);
    let got: Vec<u32> = bytemuck::cast_slice(&marks.read_blocking()?).to_vec();
    assert_eq!(got, (0..n).map(|i| i * 3 + 1).collect::<Vec<_>>());
    Ok(())
}

graph! {
    /// `luma_graph` through the macro: textures declared in `textures { .. }`, bound by the typed struct.
    graph LumaMacro {
        params { width: u32, height: u32 }
        textures {
            /// The frame, read.
            frame: texture_2d<rgba8unorm> = input,
            luma: texture_2d<r32float> = output,
        }
        buffers { rows: [f32] = output }
        kernel weigh(frame: read, luma: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                let c = textureLoad(frame, vec2<i32>(gid.xy), 0);
                textureStore(luma, vec2<i32>(gid.xy), vec4<f32>(0.25 * c.r + 0.5 * c.g + 0.25 * c.b, 0.0, 0.0, 1.0));
            }
        }
        kernel sum_rows(luma: read, rows: write) threads(params.height) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.height) { return; }
                var total = 0.0;
                for (var x = 0u; x < params.width; x++) {
                    total += textureLoad(luma, vec2<u32>(x, gid.x), 0).r;
                }
                rows[gid.x] = total;
            }
        }
    }
}

#[test]
fn a_graph_macro_declares_textures_and_its_typed_bake_binds_them() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    // The macro's graph has the builder's resources, edges and bindings.
    let built = luma_graph();
    let made = LumaMacro::DESCRIPTION;
    assert_eq!(made.buffers, built.buffers);
    assert_eq!(made.edges, built.edges);
    for (m, b) in made.nodes.iter().zip(built.nodes.iter()) {
        let (graph_runtime::desc::OpDesc::Kernel(m), graph_runtime::desc::OpDesc::Kernel(b)) =
            (&m.op, &b.op)
        else {
            panic!("kernels")
        };
        assert_eq!(m.declarations, b.declarations);
        assert_eq!(m.bindings, b.bindings);
    }
    let (width, height) = (19u32, 7u32);
    let frames = [
        gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?,
        gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?,
    ];
    let luma = gpu.texture("texture_2d<r32float>", [width, height, 1])?;
    let rows = gpu.buffer_zeroed::<f32>(height as usize)?;
    let mut g = LumaMacro::bake(
        &gpu,
        LumaMacroBuffers {
            frame: &frames[0],
            luma: &luma,
            rows: &rows,
        },
    )?;
    *g.params_mut() = LumaMacroParams::new(width, height);
    for (round, frame) in frames.iter().enumerate() {
        if round == 1 {
            // The typed rebind swaps the texture too.
            g.rebind(LumaMacroBuffers {
                frame,
                luma: &luma,
                rows: &rows,
            })?;
        }
        let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
        frame.write(&pixels)?;
        poison_texture(&luma, 0xff);
        poison_f32(&rows);
        g.replay()?.wait()?;
        let got: Vec<f32> = bytemuck::cast_slice(&luma.read_blocking()?).to_vec();
        for (i, (g, p)) in got.iter().zip(pixels.chunks(4)).enumerate() {
            let c = |k: usize| f32::from(p[k]) / 255.0;
            let want = 0.25 * c(0) + 0.5 * c(1) + 0.25 * c(2);
            assert!(
                (g - want).abs() <= 1e-6,
                "round {round} luma[{i}]: GPU {g}, CPU {want}"
            );
        }
        let sums = read(&rows);
        for y in 0..height as usize {
            let want: f32 = got[y * width as usize..(y + 1) * width as usize]
                .iter()
                .sum();
            assert!(
                (sums[y] - want).abs() <= 1e-4,
                "round {round} rows[{y}]: {} vs {want}",
                sums[y]
            );
        }
    }
    Ok(())
}

graph! {
    /// A 3x3 box sum in two passes through a texture the graph owns, sized like the frame: across each row
    /// into `across` (`rgba16float`), then down each column into `out`.
    graph BoxThroughOwned {
        params { width: u32, height: u32 }
        textures {
            frame: texture_2d<rgba8unorm> = input,
            across: texture_2d<rgba16float; frame>,
            out: texture_2d<r32float> = output,
        }
        kernel rows(frame: read, across: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                var sum = vec4<f32>();
                for (var dx = -1; dx <= 1; dx++) {
                    let x = clamp(i32(gid.x) + dx, 0, i32(params.width) - 1);
                    sum += textureLoad(frame, vec2<i32>(x, i32(gid.y)), 0);
                }
                textureStore(across, gid.xy, sum);
            }
        }
        kernel columns(across: read, out: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                var sum = 0.0;
                for (var dy = -1; dy <= 1; dy++) {
                    let y = clamp(i32(gid.y) + dy, 0, i32(params.height) - 1);
                    sum += textureLoad(across, vec2<i32>(i32(gid.x), y), 0).g;
                }
                textureStore(out, gid.xy, vec4<f32>(sum, 0.0, 0.0, 1.0));
            }
        }
    }
}

/// The box sum of the green channel of `pixels` (`rgba8unorm`, `width` x `height`), edges clamped.
fn box_sum_green(pixels: &[u8], width: usize, height: usize) -> Vec<f32> {
    let green = |x: usize, y: usize| f32::from(pixels[(y * width + x) * 4 + 1]) / 255.0;
    let across = |x: usize, y: usize| -> f32 {
        [x.saturating_sub(1), x, (x + 1).min(width - 1)]
            .into_iter()
            .map(|x| green(x, y))
            .sum()
    };
    let mut out = Vec::with_capacity(width * height);
    for y in 0..height {
        for x in 0..width {
            out.push(
                [y.saturating_sub(1), y, (y + 1).min(height - 1)]
                    .into_iter()
                    .map(|y| across(x, y))
                    .sum::<f32>(),
            );
        }
    }
    out
}

#[test]
fn a_graph_owned_texture_sized_like_the_frame_follows_it_through_a_rebind() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let desc = BoxThroughOwned::DESCRIPTION;
    assert_eq!(desc.buffers[1].role, Role::Owned);
    let mut baked: Option<graph_runtime::Baked<BoxThroughOwned>> = None;
    // A rebind to a frame of another size makes the owned texture again at that size.
    for (width, height) in [(13u32, 9u32), (40, 3), (1, 1)] {
        let frame = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
        let out = gpu.texture("texture_2d<r32float>", [width, height, 1])?;
        let buffers = BoxThroughOwnedBuffers {
            frame: &frame,
            out: &out,
        };
        let g = match baked.as_mut() {
            None => baked.insert(BoxThroughOwned::bake(&gpu, buffers)?),
            Some(g) => {
                g.rebind(buffers)?;
                g
            }
        };
        *g.params_mut() = BoxThroughOwnedParams::new(width, height);
        let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
        frame.write(&pixels)?;
        poison_texture(&out, 0xff);
        g.replay()?.wait()?;
        let got: Vec<f32> = bytemuck::cast_slice(&out.read_blocking()?).to_vec();
        let want = box_sum_green(&pixels, width as usize, height as usize);
        // Each of the three row sums (below 4) was stored as an `f16`, off by at most its step there,
        // 2^-9 (rounded or cut, as the device converts); one pixel's byte is worth 1/255.
        let bound = 3.0 * 2f32.powi(-9);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= bound,
                "{width}x{height} out[{i}]: GPU {g}, CPU {w}"
            );
        }
    }
    Ok(())
}

graph! {
    /// A frame the graph owns at the size its parameters give (a vector's components): uploaded, its luma
    /// (times `gain`) written over the frame's own size into a texture sized like it, read back.
    graph ParamSized {
        params { size: vec2<u32>, gain: f32 }
        textures {
            frame: texture_2d<rgba8unorm; params.size.x, params.size.y>,
            luma: texture_2d<r32float; frame>,
        }
        upload put(frame);
        kernel grey(frame: read, luma: write) threads(frame.width(), frame.height()) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.size.x || gid.y >= params.size.y) { return; }
                let c = textureLoad(frame, gid.xy, 0);
                let y = 0.25 * c.r + 0.5 * c.g + 0.25 * c.b;
                textureStore(luma, gid.xy, vec4<f32>(params.gain * y, 0.0, 0.0, 1.0));
            }
        }
        readback get(luma);
    }
}

#[test]
fn a_graph_owned_texture_sized_by_parameters_is_made_again_when_they_change() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let mut g = ParamSized::bake(&gpu, ParamSizedBuffers::default())?;
    // Parameters start zeroed: the frame has no size until they give it one.
    let message = error_text(g.replay());
    assert!(
        message.contains("texture `frame`")
            && message.contains("sized by `params.size.x, params.size.y` (0, 0)"),
        "{message}"
    );
    for native in [true, false] {
        if !use_recorder(&mut g, &gpu, native) {
            continue;
        }
        let recorder = g.untyped().recorder();
        // Each size makes both textures again (the second sized like the first); the same size again
        // keeps them, and their texels from the last replay are overwritten.
        for (width, height) in [(13u32, 9u32), (40, 3), (40, 3), (1, 1), (13, 9)] {
            let gain = 1.0 + random_u32(&mut rng, 4) as f32;
            *g.params_mut() = ParamSizedParams::new([width, height], gain);
            let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
            g.upload_texels(ParamSized::UPLOADS.put, &pixels)?;
            let finished = g.replay()?.wait()?;
            // The rebuild a new size makes keeps the recorder.
            assert_eq!(g.untyped().recorder(), recorder, "{width}x{height}");
            let texels = finished.read_texels(ParamSized::READBACKS.get)?;
            let got: &[f32] = bytemuck::cast_slice(&texels);
            let what = format!("{recorder} {width}x{height}");
            assert_eq!(got.len(), (width * height) as usize, "{what}: texels");
            for (i, (got, p)) in got.iter().zip(pixels.chunks(4)).enumerate() {
                let want = gain * luma_of(p);
                assert!(
                    (got - want).abs() <= 4e-6,
                    "{what} luma[{i}]: GPU {got}, CPU {want}"
                );
            }
        }
        // Data given for one size is not replayed at another: the upload slot is the new size's, empty.
        g.upload_texels(ParamSized::UPLOADS.put, &random_bytes(&mut rng, 13 * 9 * 4))?;
        g.params_mut().size = [7, 2];
        let message = error_text(g.replay());
        assert!(message.contains("`put`"), "{recorder}: {message}");
        // An upload fits the parameters it is given under: the 7 x 2 frame's rows, not the 13 x 9 one's.
        let message = error_text(g.upload_texels(ParamSized::UPLOADS.put, &[0; 13 * 9 * 4]));
        assert!(
            message.contains("it uploads 2 rows of 28 bytes, 56 bytes, not 468"),
            "{recorder}: {message}"
        );
        // A size of 0 along an axis is refused at the upload and the replay, and changes nothing: the data
        // given at the size before is replayed once the parameters give that size again.
        let pixels = random_bytes(&mut rng, 7 * 2 * 4);
        g.upload_texels(ParamSized::UPLOADS.put, &pixels)?;
        g.params_mut().size = [0, 4];
        for message in [
            error_text(g.upload_texels(ParamSized::UPLOADS.put, &[])),
            error_text(g.replay()),
        ] {
            assert!(
                message.contains("`params.size.x, params.size.y` (0, 4)"),
                "{recorder}: {message}"
            );
        }
        g.params_mut().size = [7, 2];
        let finished = g.replay()?.wait()?;
        let texels = finished.read_texels(ParamSized::READBACKS.get)?;
        assert_eq!(
            texels.len(),
            7 * 2 * 4,
            "{recorder}: after the refused size"
        );
    }
    Ok(())
}

/// A kernel writing `owned` (of `owned_ty`, graph-owned), then copying it into `out` (external, `out_ty`).
fn through(owned_ty: &str, out_ty: &str) -> graph_runtime::GraphDesc {
    let mut b = GraphBuilder::new("Through");
    b.texture("owned", owned_ty, Role::Owned)
        .texture("out", out_ty, Role::Output);
    b.kernel(
        "mark",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(owned, gid.xy, vec4<f32>(f32(gid.x * 100u + gid.y), 0.0, 0.0, 1.0));
            }",
        )
        .write("owned")
        // Workgroups of one: the 5 x 3 corner of an owned texture that may be larger (threads would be
        // compared with its declared size, and refused).
        .workgroups(&["5", "3"]),
    );
    b.kernel(
        "copy_out",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(out, gid.xy, textureLoad(owned, gid.xy, 0));
            }",
        )
        .read("owned")
        .write("out")
        .threads(&["5", "3"]),
    );
    b.build(&LIBRARY).expect("the graph checks")
}

#[test]
fn texture_sizes_are_checked_at_bake_against_the_bound_texture_and_the_device() -> Result<(), Error>
{
    let gpu = gpu();
    // Positive control: sized by texels, an output of the declared size.
    let desc = through("texture_2d<r32float; 5, 3>", "texture_2d<r32float; 5, 3>");
    let out = gpu.texture("texture_2d<r32float>", [5, 3, 1])?;
    poison_texture(&out, 0xff);
    let mut g = BakedGraph::bake_with_textures(&gpu, desc.clone(), &[], &[("out", &out)])?;
    g.replay()?.wait()?;
    let got: Vec<f32> = bytemuck::cast_slice(&out.read_blocking()?).to_vec();
    let want: Vec<f32> = (0..3)
        .flat_map(|y| (0..5).map(move |x| (x * 100 + y) as f32))
        .collect();
    assert_eq!(got, want);
    // An output of another size than declared.
    let wide = gpu.texture("texture_2d<r32float>", [6, 3, 1])?;
    let wrong = BakedGraph::bake_with_textures(&gpu, desc.clone(), &[], &[("out", &wide)]);
    let message = error_text(wrong);
    assert!(
        message.contains("texture `out`")
            && message
                .contains("it is 6 x 3 x 1 texels, and the graph declares 5 x 3 x 1 (`5 x 3 x 1`)"),
        "{message}"
    );
    // Nor may a rebind change it, and the graph keeps replaying what it had.
    assert!(g.rebind_texture("out", &wide).is_err());
    assert!(
        g.rebind_texture("owned", &out).is_err(),
        "the graph owns `owned`"
    );
    // An owned texture past the device's largest.
    let huge = through("texture_2d<r32float; 100000, 3>", "texture_2d<r32float>");
    let wrong = BakedGraph::bake_with_textures(&gpu, huge, &[], &[("out", &out)]);
    let message = error_text(wrong);
    assert!(
        message.contains("texture `owned`") && message.contains("a 2-D texture's side is at most"),
        "{message}"
    );
    Ok(())
}

graph! {
    /// An image through every texture transfer: uploaded into `frame` (graph-owned, sized like `out`),
    /// inverted by a kernel into `out`, copied into `kept` (texture to texture) and from there into `words`
    /// (texture to buffer), and read back from `kept`.
    graph ImageRoundTrip {
        params { width: u32, height: u32 }
        textures {
            out: texture_2d<rgba8unorm> = output,
            frame: texture_2d<rgba8unorm; out>,
            kept: texture_2d<rgba8unorm; out>,
        }
        buffers { words: [u32] = output }
        upload put(frame);
        kernel invert(frame: read, out: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                let c = textureLoad(frame, gid.xy, 0);
                textureStore(out, gid.xy, vec4<f32>(1.0 - c.rgb, c.a));
            }
        }
        copy keep(out -> kept);
        copy flatten(kept -> words);
        readback get(kept);
    }
}

#[test]
fn an_image_goes_through_upload_kernel_copies_and_readback() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    // 64 texels of 4 bytes: rows of 256 bytes, as a copy between a texture and a buffer asks.
    let (width, height) = (64u32, 5u32);
    let out = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
    let words = gpu.buffer_zeroed::<u32>((width * height) as usize)?;
    let mut g = ImageRoundTrip::bake(
        &gpu,
        ImageRoundTripBuffers {
            out: &out,
            words: &words,
        },
    )?;
    *g.params_mut() = ImageRoundTripParams::new(width, height);
    for _ in 0..2 {
        let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
        let image = image::RgbaImage::from_raw(width, height, pixels.clone()).expect("an image");
        let want: Vec<u8> = pixels
            .chunks(4)
            .flat_map(|p| [255 - p[0], 255 - p[1], 255 - p[2], p[3]])
            .collect();
        poison_texture(&out, 0x5a);
        poison_u32(&words);
        g.upload_image(ImageRoundTrip::UPLOADS.put, &image)?;
        let finished = g.replay()?.wait()?;
        assert_eq!(out.read_blocking()?, want, "the kernel's output");
        let got = finished.read_image(ImageRoundTrip::READBACKS.get)?;
        assert_eq!(got.dimensions(), (width, height));
        assert_eq!(got.into_raw(), want, "the readback of the copy");
        assert_eq!(finished.read_texels(ImageRoundTrip::READBACKS.get)?, want);
        let bytes: Vec<u8> = bytemuck::cast_slice(&read(&words)).to_vec();
        assert_eq!(bytes, want, "the copy into the buffer");
    }
    // Each replay needs its own upload, and the data must be the texture's size.
    assert!(g.replay().is_err(), "no upload given");
    let small = image::RgbaImage::new(width - 1, height);
    let message = error_text(g.upload_image(ImageRoundTrip::UPLOADS.put, &small));
    assert!(message.contains("the image is 63 x 5"), "{message}");
    let message = error_text(g.upload_texels(ImageRoundTrip::UPLOADS.put, &[0; 12]));
    assert!(
        message.contains("it uploads 5 rows of 256 bytes, 1280 bytes, not 12"),
        "{message}"
    );
    Ok(())
}

#[test]
fn a_copy_between_a_buffer_and_a_texture_needs_rows_wgpu_can_copy_and_equal_sizes()
-> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let mut b = GraphBuilder::new("Words");
    b.input("words", "u32")
        .texture("t", "texture_2d<r32uint>", Role::Output)
        .copy("into", "words", "t")
        .readback("back", "t");
    let desc = b.build(&LIBRARY).expect("checks");
    // 64 texels of 4 bytes a row, 3 rows: the buffer to the texture and back through the readback.
    let t = gpu.texture("texture_2d<r32uint>", [64, 3, 1])?;
    let words = gpu.buffer_zeroed::<u32>(64 * 3)?;
    let mut g = BakedGraph::bake_with_textures(
        &gpu,
        desc.clone(),
        &[("words", words.as_any())],
        &[("t", &t)],
    )?;
    let data: Vec<u32> = (0..64 * 3)
        .map(|_| random_u32(&mut rng, u32::MAX))
        .collect();
    words.write(&data)?;
    poison_texture(&t, 0xee);
    let finished = g.replay()?.wait()?;
    let back: Vec<u32> = bytemuck::pod_collect_to_vec(&finished.read_bytes_named("back")?);
    assert_eq!(back, data);
    let typed = error_text(finished.read_named::<u32>("back"));
    assert!(
        typed.contains("it reads back a texture's texels"),
        "{typed}"
    );
    drop(finished);
    // Rows of 40 bytes: no copy between a buffer and a texture moves them.
    let narrow = gpu.texture("texture_2d<r32uint>", [10, 3, 1])?;
    let short = gpu.buffer_zeroed::<u32>(30)?;
    let message = error_text(BakedGraph::bake_with_textures(
        &gpu,
        desc.clone(),
        &[("words", short.as_any())],
        &[("t", &narrow)],
    ));
    assert!(
        message.contains("copy `into`: its rows are 40 bytes, and a copy between a buffer and a texture moves rows of a multiple of 256 bytes"),
        "{message}"
    );
    // A buffer of another size than the texture's texels.
    let message = error_text(BakedGraph::bake_with_textures(
        &gpu,
        desc.clone(),
        &[("words", short.as_any())],
        &[("t", &t)],
    ));
    assert!(
        message.contains("its 3 rows of 256 bytes are 768 bytes, and buffer `words` holds 120"),
        "{message}"
    );
    // One row needs no alignment.
    let row = gpu.texture("texture_2d<r32uint>", [10, 1, 1])?;
    let ten = gpu.buffer_zeroed::<u32>(10)?;
    let data: Vec<u32> = (0..10).map(|_| random_u32(&mut rng, u32::MAX)).collect();
    ten.write(&data)?;
    let mut g =
        BakedGraph::bake_with_textures(&gpu, desc, &[("words", ten.as_any())], &[("t", &row)])?;
    let finished = g.replay()?.wait()?;
    let back: Vec<u32> = bytemuck::pod_collect_to_vec(&finished.read_bytes_named("back")?);
    assert_eq!(back, data);
    Ok(())
}

#[test]
fn a_copy_between_textures_of_other_sizes_is_an_error_at_bake() -> Result<(), Error> {
    let gpu = gpu();
    let mut b = GraphBuilder::new("Twins");
    b.texture("a", "texture_2d<rgba8unorm>", Role::Input)
        .texture("b", "texture_2d<rgba8unorm>", Role::Output)
        .copy("twin", "a", "b");
    let desc = b.build(&LIBRARY).expect("checks");
    let a = gpu.texture("texture_2d<rgba8unorm>", [7, 5, 1])?;
    let same = gpu.texture("texture_2d<rgba8unorm>", [7, 5, 1])?;
    let other = gpu.texture("texture_2d<rgba8unorm>", [5, 7, 1])?;
    let pixels = random_bytes(&mut rng(), 7 * 5 * 4);
    a.write(&pixels)?;
    poison_texture(&same, 0x11);
    BakedGraph::bake_with_textures(&gpu, desc.clone(), &[], &[("a", &a), ("b", &same)])?
        .replay()?
        .wait()?;
    assert_eq!(same.read_blocking()?, pixels);
    let message = error_text(BakedGraph::bake_with_textures(
        &gpu,
        desc,
        &[],
        &[("a", &a), ("b", &other)],
    ));
    assert!(
        message.contains("copy `twin`: it is 5 x 7 x 1 texels, and `a` is 7 x 5 x 1"),
        "{message}"
    );
    Ok(())
}

#[test]
fn an_interop_task_records_its_own_work_on_the_textures_it_declared() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let (width, height) = (13u32, 6u32);
    let mut b = GraphBuilder::new("Interop");
    b.param("width", "u32")
        .param("height", "u32")
        .texture("a", "texture_2d<r32float; b>", Role::Owned)
        .texture("b", "texture_2d<r32float>", Role::Input)
        .texture("c", "texture_2d<r32float; b>", Role::Owned)
        .output("out", "f32");
    b.kernel(
        "double",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                textureStore(a, gid.xy, 2.0 * textureLoad(b, gid.xy, 0));
            }",
        )
        .read("b")
        .write("a")
        .threads(&["params.width", "params.height"]),
    );
    b.interop(
        "twin",
        &[
            ("a", graph_runtime::ir::AccessMode::Read),
            ("c", graph_runtime::ir::AccessMode::Write),
        ],
    );
    b.kernel(
        "flatten",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                out[gid.y * params.width + gid.x] = textureLoad(c, gid.xy, 0).r + 1.0;
            }",
        )
        .read("c")
        .write("out")
        .threads(&["params.width", "params.height"]),
    );
    let desc = b.build(&LIBRARY).expect("checks");
    let input = gpu.texture("texture_2d<r32float>", [width, height, 1])?;
    let out = gpu.buffer_zeroed::<f32>((width * height) as usize)?;
    let mut g =
        BakedGraph::bake_with_textures(&gpu, desc, &[("out", out.as_any())], &[("b", &input)])?;
    g.set_param("width", width)?;
    g.set_param("height", height)?;
    // The task copies `a` into `c` with the encoder; asking for a texture as a buffer is an error.
    g.on_interop("twin", |ctx| {
        let (a, c) = (ctx.texture("a")?, ctx.texture("c")?);
        let message = error_text(ctx.buffer("a"));
        assert!(
            message.contains("it is a texture: interop task `twin` gets it with `texture`"),
            "{message}"
        );
        assert!(ctx.texture("b").is_err(), "`b` is not the task's");
        ctx.encoder()
            .copy_texture_to_texture(a.as_image_copy(), c.as_image_copy(), a.size());
        Ok(())
    })?;
    for _ in 0..2 {
        let values: Vec<f32> = (0..width * height)
            .map(|_| random_u32(&mut rng, 1000) as f32 / 8.0)
            .collect();
        input.write(bytemuck::cast_slice(&values))?;
        poison_f32(&out);
        g.replay()?.wait()?;
        let want: Vec<f32> = values.iter().map(|v| 2.0 * v + 1.0).collect();
        assert_eq!(read(&out), want);
    }
    Ok(())
}

graph! {
    /// A kernel dispatched over the size of the texture it writes: `threads(t.width(), t.height())`, no
    /// parameters.
    graph OverItsSize {
        textures { t: texture_2d<r32uint> = output }
        kernel mark(t: write) threads(t.width(), t.height()) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let size = textureDimensions(t);
                if (gid.x >= size.x || gid.y >= size.y) { return; }
                textureStore(t, gid.xy, vec4<u32>(gid.y * 1000u + gid.x, 0u, 0u, 1u));
            }
        }
    }
}

#[test]
fn a_dispatch_sized_by_a_texture_follows_the_bound_texture() -> Result<(), Error> {
    let gpu = gpu();
    let mut baked: Option<graph_runtime::Baked<OverItsSize>> = None;
    for (w, h) in [(9u32, 4u32), (70, 33), (1, 1)] {
        let t = gpu.texture("texture_2d<r32uint>", [w, h, 1])?;
        poison_texture(&t, 0xff);
        let g = match baked.as_mut() {
            None => baked.insert(OverItsSize::bake(&gpu, OverItsSizeBuffers { t: &t })?),
            Some(g) => {
                g.rebind(OverItsSizeBuffers { t: &t })?;
                g
            }
        };
        g.replay()?.wait()?;
        let got: Vec<u32> = bytemuck::cast_slice(&t.read_blocking()?).to_vec();
        let want: Vec<u32> = (0..h)
            .flat_map(|y| (0..w).map(move |x| y * 1000 + x))
            .collect();
        assert_eq!(got, want, "{w}x{h}");
    }
    // The builder reads the same words, and its description is the macro's.
    let mut b = GraphBuilder::new("OverItsSize");
    b.texture("t", "texture_2d<r32uint>", Role::Output);
    let wgsl = match &OverItsSize::DESCRIPTION.nodes[0].op {
        graph_runtime::desc::OpDesc::Kernel(k) => k.source.to_string(),
        _ => panic!("a kernel"),
    };
    b.kernel(
        "mark",
        KernelSpec::wgsl(wgsl)
            .write("t")
            .threads(&["t.width()", "t.height()"]),
    );
    let built = b.build(&LIBRARY).expect("checks");
    assert_eq!(built.nodes[0].op, OverItsSize::DESCRIPTION.nodes[0].op);
    Ok(())
}

#[test]
fn a_fill_sets_every_texel_of_each_dimension() -> Result<(), Error> {
    let gpu = gpu();
    let cases: [(&str, [u32; 3], &str, Vec<u8>); 4] = [
        (
            "texture_2d<rgba8unorm>",
            [37, 5, 1],
            "vec4<f32>(1.0, 0.5, 0.0, params.a)",
            vec![255, 128, 0, 64],
        ),
        (
            "texture_2d_array<r32uint>",
            [9, 3, 4],
            "vec4<u32>(7u + u32(params.a * 4.0), 0u, 0u, 0u)",
            8u32.to_ne_bytes().to_vec(),
        ),
        (
            "texture_3d<r32sint>",
            [5, 6, 7],
            "vec4<i32>(-3, 0, 0, 0)",
            (-3i32).to_ne_bytes().to_vec(),
        ),
        (
            "texture_2d<r32float>",
            [1, 1, 1],
            "vec4<f32>(params.a)",
            0.25f32.to_ne_bytes().to_vec(),
        ),
    ];
    for (ty, size, value, texel) in cases {
        let mut b = GraphBuilder::new("Fill");
        b.param("a", "f32")
            .texture("t", ty, Role::Output)
            .fill("clear", "t", value);
        let desc = b.build(&LIBRARY).unwrap_or_else(|e| panic!("{ty}: {e}"));
        let t = gpu.texture(ty, size)?;
        poison_texture(&t, 0x5a);
        let baked = BakedGraph::bake_with_textures(&gpu, desc, &[], &[("t", &t)]);
        // wgpu's GL backend writes a 3-D storage texture's first slice only: refused at bake there.
        if ty.starts_with("texture_3d") && gpu.backend() == Some(graph_runtime::wgpu::Backend::Gl) {
            let message = error_text(baked);
            assert!(message.contains("binds only the first slice"), "{message}");
            continue;
        }
        let mut g = baked?;
        g.set_param("a", 0.25f32)?;
        g.replay()?.wait()?;
        let want: Vec<u8> = texel
            .iter()
            .copied()
            .cycle()
            .take(texel.len() * (size[0] * size[1] * size[2]) as usize)
            .collect();
        assert_eq!(t.read_blocking()?, want, "{ty}");
    }
    Ok(())
}

/// A child graph over a texture: `frame` turned grey into `grey`, a texture the child owns sized like the
/// frame, whose rows are summed into `rows`.
fn grey_rows_child() -> graph_runtime::GraphDesc {
    let mut b = GraphBuilder::new("GreyRows");
    b.texture("frame", "texture_2d<rgba8unorm>", Role::Input)
        .texture("grey", "texture_2d<r32float; frame>", Role::Owned)
        .output("rows", "f32");
    b.kernel(
        "to_grey",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let size = textureDimensions(frame);
                if (gid.x >= size.x || gid.y >= size.y) { return; }
                let c = textureLoad(frame, gid.xy, 0);
                textureStore(grey, gid.xy, vec4<f32>(c.r + c.g + c.b, 0.0, 0.0, 1.0));
            }",
        )
        .read("frame")
        .write("grey")
        .threads(&["frame.width()", "frame.height()"]),
    );
    b.kernel(
        "sum_rows",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let size = textureDimensions(grey);
                if (gid.x >= size.y) { return; }
                var total = 0.0;
                for (var x = 0u; x < size.x; x++) { total += textureLoad(grey, vec2<u32>(x, gid.x), 0).r; }
                rows[gid.x] = total;
            }",
        )
        .read("grey")
        .write("rows")
        .threads(&["grey.height()"]),
    );
    b.build(&LIBRARY).expect("the child checks")
}

#[test]
fn a_subgraph_reads_the_parents_texture_through_its_binding() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let mut b = GraphBuilder::new("Parent");
    b.texture("picture", "texture_2d<rgba8unorm>", Role::Input)
        .output("result", "f32")
        .subgraph(
            "grey_rows",
            &grey_rows_child(),
            &[
                ("frame", "picture", graph_runtime::ir::AccessMode::Read),
                ("rows", "result", graph_runtime::ir::AccessMode::Write),
            ],
        );
    let desc = b.build(&LIBRARY).expect("the parent checks");
    // Two sizes: the child's own texture is made at each, sized like the parent's picture.
    for (width, height) in [(37u32, 23u32), (5, 64)] {
        let picture = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
        let result = gpu.buffer_zeroed::<f32>(height as usize)?;
        let mut g = BakedGraph::bake_with_textures(
            &gpu,
            desc.clone(),
            &[("result", result.as_any())],
            &[("picture", &picture)],
        )?;
        let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
        picture.write(&pixels)?;
        poison_f32(&result);
        g.replay()?.wait()?;
        let got = read(&result);
        for y in 0..height as usize {
            let want: f32 = pixels[y * width as usize * 4..(y + 1) * width as usize * 4]
                .chunks(4)
                .map(|p| (f32::from(p[0]) + f32::from(p[1]) + f32::from(p[2])) / 255.0)
                .sum();
            assert!(
                (got[y] - want).abs() <= 1e-4 * want.max(1.0),
                "{width}x{height} ({}) row {y}: GPU {}, CPU {want}",
                g.recorder(),
                got[y]
            );
        }
    }
    Ok(())
}

graph! {
    /// A frame's luma into a texture the graph owns, inverted by a host task between two GPU partitions, then
    /// marked where bright.
    graph HostTexels {
        params { width: u32, height: u32 }
        textures {
            frame: texture_2d<rgba8unorm> = input,
            bright: texture_2d<r32float; frame>,
            mask: texture_2d<r32uint> = output,
        }
        // How many texels the host task inverted.
        buffers { count: [u32] = output }
        kernel weigh(frame: read, bright: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                let c = textureLoad(frame, vec2<i32>(gid.xy), 0);
                textureStore(bright, gid.xy, vec4<f32>(0.25 * c.r + 0.5 * c.g + 0.25 * c.b, 0.0, 0.0, 1.0));
            }
        }
        host invert(bright: read_write, count: write);
        kernel mark(bright: read, mask: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                let on = textureLoad(bright, gid.xy, 0).r > 0.5;
                textureStore(mask, gid.xy, vec4<u32>(select(0u, 1u, on), 0u, 0u, 1u));
            }
        }
    }
}

/// A host task reads a texture's texels after the GPU wrote them and writes them back for the GPU after it
/// (typed: `h.bright()`, `h.write_bright(..)`), on each recorder, in a blocking replay and in an awaited one
/// (whose task reads the texels fetched before its phase); the mask equals the CPU's, poisoned first.
#[test]
fn a_host_task_reads_and_writes_the_texels_of_the_textures_it_declared() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let (width, height) = (29u32, 13u32);
    let frame = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
    let mask = gpu.texture("texture_2d<r32uint>", [width, height, 1])?;
    let count = gpu.buffer_zeroed::<u32>(1)?;
    let mut g = HostTexels::bake(
        &gpu,
        HostTexelsBuffers {
            frame: &frame,
            mask: &mask,
            count: &count,
        },
    )?;
    *g.params_mut() = HostTexelsParams::new(width, height);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<f32>::new()));
    let task_seen = seen.clone();
    g.on_host(HostTexels::HOSTS.invert, move |h| {
        let texels = h.bright()?;
        let values: Vec<f32> = bytemuck::cast_slice(&texels).to_vec();
        let inverted: Vec<f32> = values.iter().map(|v| 1.0 - v).collect();
        h.write_count(&[values.len() as u32])?;
        *task_seen.lock().expect("not poisoned") = values;
        h.write_bright(bytemuck::cast_slice(&inverted))
    })?;
    for (native, awaited) in [(true, false), (true, true), (false, false), (false, true)] {
        if !common::use_recorder(&mut g, &gpu, native) {
            continue;
        }
        let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
        frame.write(&pixels)?;
        poison_texture(&mask, 0xee);
        poison_u32(&count);
        if awaited {
            pollster::block_on(async { g.replay_async().await?.await })?;
        } else {
            g.replay()?.wait()?;
        }
        let what = format!("{}, awaited: {awaited}", g.untyped().recorder());
        assert_eq!(
            read(&count),
            [width * height],
            "{what}: texels the task counted"
        );
        // The task saw the luma the first kernel stored.
        let luma: Vec<f32> = pixels.chunks(4).map(luma_of).collect();
        let got = seen.lock().expect("not poisoned").clone();
        assert_eq!(got.len(), luma.len(), "{what}: texels the task read");
        for (i, (g, w)) in got.iter().zip(&luma).enumerate() {
            assert!(
                (g - w).abs() <= 1e-6,
                "{what}: the task read {g} at {i}, CPU {w}"
            );
        }
        // The second kernel saw what the task wrote: 1 - luma.
        let marks: Vec<u32> = bytemuck::cast_slice(&mask.read_blocking()?).to_vec();
        for (i, (m, l)) in marks.iter().zip(&got).enumerate() {
            assert_eq!(
                *m,
                u32::from(1.0 - l > 0.5),
                "{what}: mask[{i}] of luma {l}"
            );
        }
    }
    Ok(())
}

/// A host task that reads a texture as a buffer, a buffer as texels, or writes too few texels gets an `Err`
/// naming what it got wrong, and the replay fails with it.
#[test]
fn a_host_task_misusing_texels_gets_an_error() -> Result<(), Error> {
    let gpu = gpu();
    let (width, height) = (5u32, 3u32);
    let frame = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
    let mask = gpu.texture("texture_2d<r32uint>", [width, height, 1])?;
    let count = gpu.buffer_zeroed::<u32>(1)?;
    type Misuse = fn(&graph_runtime::HostContext<'_>) -> Result<(), Error>;
    let cases: [(Misuse, &str); 5] = [
        (
            |ctx| ctx.read::<[f32; 4]>("bright").map(drop),
            "`bright` is a texture (`texture_2d<r32float>`), not a buffer",
        ),
        (
            |ctx| ctx.write_texels("bright", &[0; 4]),
            "`bright` holds 60 bytes of texels, and 4 were written",
        ),
        (
            |ctx| ctx.write_texels("count", &[0; 4]),
            "`count` is a buffer, not a texture",
        ),
        (
            |ctx| ctx.read_texels("mask").map(drop),
            "host task `invert` may not read `mask`",
        ),
        (
            // The positive control: all the texels, as read.
            |ctx| {
                let texels = ctx.read_texels("bright")?;
                ctx.write_texels("bright", &texels)
            },
            "",
        ),
    ];
    for (misuse, words) in cases {
        let mut g = BakedGraph::bake_with_textures(
            &gpu,
            HostTexels::DESCRIPTION,
            &[("count", count.as_any())],
            &[("frame", &frame), ("mask", &mask)],
        )?;
        g.set_param("width", width)?;
        g.set_param("height", height)?;
        g.on_host("invert", misuse)?;
        let result = g.replay().and_then(|s| s.wait().map(drop));
        match (words, result) {
            ("", Ok(())) => {}
            ("", Err(e)) => panic!("the positive control failed: {e}"),
            (_, Ok(())) => panic!("no error for the misuse naming {words:?}"),
            (_, Err(e)) => assert!(e.to_string().contains(words), "{e}"),
        }
    }
    Ok(())
}

/// A part of a texture binds as the whole one would: mip level 1 of an `rgba8unorm` texture of three levels,
/// and layer 2 of a 2-D texture of three layers, each as the luma graph's frame (a `texture_2d`), on each
/// recorder; the other levels and layers hold other texels, so a read of the wrong part shows. A level or
/// run of layers the texture does not have is an `Err`.
#[test]
fn a_mip_level_or_a_layer_of_a_texture_binds_as_the_graph_declares() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let desc = luma_graph();
    let make = |size: [u32; 3], levels: u32, dimension: wgpu::TextureDimension| {
        Texture::from_wgpu(
            &gpu,
            gpu.device().create_texture(&wgpu::TextureDescriptor {
                label: Some("parts"),
                size: wgpu::Extent3d {
                    width: size[0],
                    height: size[1],
                    depth_or_array_layers: size[2],
                },
                mip_level_count: levels,
                sample_count: 1,
                dimension,
                format: wgpu::TextureFormat::Rgba8Unorm,
                usage: wgpu::TextureUsages::TEXTURE_BINDING
                    | wgpu::TextureUsages::COPY_SRC
                    | wgpu::TextureUsages::COPY_DST,
                view_formats: &[],
            }),
        )
    };
    let levels = make([37, 23, 1], 3, wgpu::TextureDimension::D2);
    let layers = make([11, 7, 3], 1, wgpu::TextureDimension::D2);
    // The parts not bound: level 0, layers 0 and 1, all white.
    let white = |t: &Texture| -> Result<(), Error> {
        let size = t.size();
        t.write(&vec![
            0xff;
            (size.width * size.height * size.depth_or_array_layers * 4)
                as usize
        ])
    };
    white(&levels)?;
    white(&layers.layers(0..2)?)?;
    for (frame, what) in [
        (levels.mip_level(1)?, "level 1"),
        (layers.layers(2..3)?, "layer 2"),
    ] {
        let size = frame.size();
        let (width, height) = (size.width, size.height);
        assert_eq!(
            (what, width, height),
            if what == "level 1" {
                ("level 1", 18, 11)
            } else {
                ("layer 2", 11, 7)
            }
        );
        let luma = gpu.texture("texture_2d<r32float>", [width, height, 1])?;
        let rows = gpu.buffer_zeroed::<f32>(height as usize)?;
        let baked = BakedGraph::bake_with_textures(
            &gpu,
            desc.clone(),
            &[("rows", rows.as_any())],
            &[("frame", &frame), ("luma", &luma)],
        );
        // wgpu's GL backend read nothing through a view of some layers: refused there.
        if what == "layer 2" && gpu.backend() == Some(wgpu::Backend::Gl) {
            let refusal = error_text(baked);
            assert!(
                refusal.contains("does not bind some of a texture's layers"),
                "{refusal}"
            );
            continue;
        }
        let mut g = baked?;
        g.set_param("width", width)?;
        g.set_param("height", height)?;
        for native in [true, false] {
            if !common::use_recorder(&mut g, &gpu, native) {
                continue;
            }
            let pixels = random_bytes(&mut rng, (width * height * 4) as usize);
            frame.write(&pixels)?;
            poison_texture(&luma, 0xff);
            g.replay()?.wait()?;
            assert_luma(&luma, &pixels, &format!("{what} ({})", g.recorder()))?;
            assert_eq!(
                frame.read_blocking()?,
                pixels,
                "{what}: the part reads back"
            );
        }
    }
    // The parts around are as they were.
    assert!(
        levels.read_blocking()?.iter().all(|&b| b == 0xff),
        "level 0"
    );
    assert!(
        layers
            .layers(0..2)?
            .read_blocking()?
            .iter()
            .all(|&b| b == 0xff),
        "layers 0 and 1"
    );
    // Parts the textures do not have.
    for (result, words) in [
        (
            levels.mip_level(3).map(drop),
            "it has 3 mip levels, so there is no level 3",
        ),
        (
            layers.layers(2..4).map(drop),
            "it has 3 layers, so layers 2..4 are not a run of them",
        ),
        (
            layers.layers(1..1).map(drop),
            "layers 1..1 are not a run of them",
        ),
        (
            make([4, 4, 4], 1, wgpu::TextureDimension::D3)
                .layers(0..1)
                .map(drop),
            "only a 2-D texture has layers to choose",
        ),
    ] {
        assert!(error_text(result).contains(words), "{words}");
    }
    Ok(())
}
