//! Samplers in a graph: a kernel samples a texture with a sampler the graph makes from its declaration
//! (`sampler<linear, clamp>`), through the builder and `graph!`, on both recorders. Every filter and address mode is compared
//! with the CPU on fresh frames of odd sizes, outputs poisoned first, at coordinates where the result does
//! not depend on the device's filtering precision: halfway between texels for `linear` (weights of one
//! half), a quarter into a texel for `nearest`, each reaching one texel past the right and bottom edges, so
//! the address mode decides that texel.

#![forbid(unsafe_code)]

mod common;

use common::{gpu, poison_f32, random_u32, read, rng};
use graph_runtime::ir::Role;
use graph_runtime::{BakedGraph, Error, GraphBuilder, KernelSpec, LIBRARY, graph};

/// `sample` reads `frame` through `bilinear` at one coordinate per texel into `out` (four floats per texel):
/// for a `linear` sampler the corner between texels (x, y) and (x + 1, y + 1), for a `nearest` one a
/// quarter into texel (x + 1, y + 1).
fn sampling_graph(frame: &str, sampler: &str) -> graph_runtime::GraphDesc {
    let mut b = GraphBuilder::new("Sampling");
    b.param("width", "u32")
        .param("height", "u32")
        .param("offset", "f32")
        .texture("frame", frame, Role::Input)
        .sampler("bilinear", sampler)
        .output("out", "f32");
    b.kernel(
        "sample",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                let size = vec2<f32>(f32(params.width), f32(params.height));
                let uv = (vec2<f32>(gid.xy) + vec2<f32>(params.offset)) / size;
                let c = textureSampleLevel(frame, bilinear, uv, 0.0);
                let i = (gid.y * params.width + gid.x) * 4u;
                out[i] = c.r;
                out[i + 1u] = c.g;
                out[i + 2u] = c.b;
                out[i + 3u] = c.a;
            }",
        )
        .read("frame")
        .read("bilinear")
        .write("out")
        .threads(&["params.width", "params.height"]),
    );
    b.build(&LIBRARY).expect("the sampling graph checks")
}

/// Texel `i` of a row or column of `n` (`i` at most `n`, one past the edge) as the address mode finds it.
fn address(mode: &str, i: usize, n: usize) -> usize {
    match (mode, i < n) {
        (_, true) => i,
        ("repeat", false) => i - n,
        // Mirrored at the edge: texel n is texel n - 1, as clamped.
        (_, false) => n - 1,
    }
}

/// What a sampler of `filter` and `mode` gives at texel (x, y) of `sampling_graph`, channel by channel,
/// from texels of `channels` floats each.
fn cpu_sample(
    texels: &[f32],
    channels: usize,
    (width, height): (usize, usize),
    filter: &str,
    mode: &str,
) -> Vec<f32> {
    let texel = |x: usize, y: usize, c: usize| -> f32 {
        let (x, y) = (address(mode, x, width), address(mode, y, height));
        // Channels a format lacks read as 0, alpha as 1.
        match c < channels {
            true => texels[(y * width + x) * channels + c],
            false if c == 3 => 1.0,
            false => 0.0,
        }
    };
    let mut out = Vec::with_capacity(width * height * 4);
    for y in 0..height {
        for x in 0..width {
            for c in 0..4 {
                out.push(match filter {
                    "linear" => {
                        (texel(x, y, c)
                            + texel(x + 1, y, c)
                            + texel(x, y + 1, c)
                            + texel(x + 1, y + 1, c))
                            / 4.0
                    }
                    _ => texel(x + 1, y + 1, c),
                });
            }
        }
    }
    out
}

#[test]
fn every_filter_and_address_mode_samples_as_the_cpu_does() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    for filter in ["linear", "nearest"] {
        for mode in ["clamp", "repeat", "mirror"] {
            let desc = sampling_graph(
                "texture_2d<rgba8unorm>",
                &format!("sampler<{filter}, {mode}>"),
            );
            for (width, height) in [(1u32, 1u32), (37, 23), (64, 3)] {
                let frame = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
                let out = gpu.buffer_zeroed::<f32>((width * height * 4) as usize)?;
                let mut g = BakedGraph::bake_with_textures(
                    &gpu,
                    desc.clone(),
                    &[("out", out.as_any())],
                    &[("frame", &frame)],
                )?;
                g.set_param("width", width)?;
                g.set_param("height", height)?;
                // The corner after each texel for `linear`; a quarter into the next texel for `nearest`.
                g.set_param("offset", if filter == "linear" { 1.0f32 } else { 1.25 })?;
                // The native recorder where the device has it (its own Vulkan sampler), then wgpu's.
                for portable in [false, true] {
                    if portable {
                        g.use_portable_recorder();
                    } else if common::native_expected(&gpu) {
                        assert_eq!(g.recorder(), "native");
                    }
                    let bytes: Vec<u8> = (0..width * height * 4)
                        .map(|_| random_u32(&mut rng, 256) as u8)
                        .collect();
                    frame.write(&bytes)?;
                    poison_f32(&out);
                    g.replay()?.wait()?;
                    let texels: Vec<f32> = bytes.iter().map(|&b| f32::from(b) / 255.0).collect();
                    let want =
                        cpu_sample(&texels, 4, (width as usize, height as usize), filter, mode);
                    // Weights of one half or one are exact at any filtering precision, but the device may
                    // blend 8-bit texels in 8-bit fixed point: llvmpipe was seen one step (1/255) off the exact
                    // mean. A wrong texel (filter, address mode or coordinate) is off by a random byte's share.
                    for (i, (got, want)) in read(&out).iter().zip(&want).enumerate() {
                        assert!(
                            (got - want).abs() <= 1.01 / 255.0,
                            "{filter} {mode} {width}x{height} ({}), texel {} channel {}: GPU {got}, CPU {want}",
                            g.recorder(),
                            i / 4,
                            i % 4
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn a_nearest_sampler_reads_a_32_bit_float_texture_exactly() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let desc = sampling_graph("texture_2d<r32float>", "sampler<nearest, repeat>");
    let (width, height) = (29u32, 17u32);
    let frame = gpu.texture("texture_2d<r32float>", [width, height, 1])?;
    let out = gpu.buffer_zeroed::<f32>((width * height * 4) as usize)?;
    let mut g =
        BakedGraph::bake_with_textures(&gpu, desc, &[("out", out.as_any())], &[("frame", &frame)])?;
    g.set_param("width", width)?;
    g.set_param("height", height)?;
    g.set_param("offset", 1.25f32)?;
    for _ in 0..2 {
        let texels: Vec<f32> = (0..width * height)
            .map(|_| random_u32(&mut rng, 1 << 20) as f32 / 7.0)
            .collect();
        frame.write(bytemuck::cast_slice(&texels))?;
        poison_f32(&out);
        g.replay()?.wait()?;
        let want = cpu_sample(
            &texels,
            1,
            (width as usize, height as usize),
            "nearest",
            "repeat",
        );
        assert_eq!(read(&out), want);
    }
    Ok(())
}

#[test]
fn a_filtering_sampler_over_a_32_bit_float_texture_is_refused_by_the_checks() {
    let mut b = GraphBuilder::new("Unfilterable");
    b.texture("frame", "texture_2d<r32float>", Role::Input)
        .sampler("bilinear", "sampler<linear, clamp>")
        .output("out", "f32");
    b.kernel(
        "sample",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main() { out[0] = textureSampleLevel(frame, bilinear, vec2<f32>(0.5), 0.0).r; }",
        )
        .read("frame")
        .read("bilinear")
        .write("out")
        .threads(&["1"]),
    );
    let message = b.build(&LIBRARY).expect_err("refused").to_string();
    assert!(
        message.contains(
            "kernel `sample` samples `frame` (r32float) with `bilinear` (`sampler<linear, clamp>`)"
        ) && message.contains("FLOAT32_FILTERABLE"),
        "{message}"
    );
}

graph! {
    /// Each texel of `frame` and its right, lower and diagonal neighbours blended by one bilinear sample at
    /// their shared corner, into a texture of the same size.
    graph CornerBlend {
        params { width: u32, height: u32 }
        textures {
            frame: texture_2d<rgba8unorm> = input,
            bilinear: sampler<linear, clamp>,
            blended: texture_storage_2d<rgba8unorm, write> = output,
        }
        kernel blend(frame: read, bilinear: read, blended: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                let uv = (vec2<f32>(gid.xy) + 1.0) / vec2<f32>(f32(params.width), f32(params.height));
                textureStore(blended, gid.xy, textureSampleLevel(frame, bilinear, uv, 0.0));
            }
        }
    }
}

#[test]
fn a_graph_macro_declares_a_sampler_and_its_kernel_samples_with_it() -> Result<(), Error> {
    let gpu = gpu();
    let mut rng = rng();
    let sampler = CornerBlend::DESCRIPTION
        .buffers
        .iter()
        .find(|b| b.name == "bilinear")
        .and_then(|b| b.sampler.as_deref().map(str::to_string));
    assert_eq!(sampler.as_deref(), Some("sampler<linear, clamp>"));
    let (width, height) = (21u32, 13u32);
    let frame = gpu.texture("texture_2d<rgba8unorm>", [width, height, 1])?;
    let blended = gpu.texture("texture_storage_2d<rgba8unorm, write>", [width, height, 1])?;
    let mut g = CornerBlend::bake(
        &gpu,
        CornerBlendBuffers {
            frame: &frame,
            blended: &blended,
        },
    )?;
    *g.params_mut() = CornerBlendParams::new(width, height);
    let bytes: Vec<u8> = (0..width * height * 4)
        .map(|_| random_u32(&mut rng, 256) as u8)
        .collect();
    frame.write(&bytes)?;
    blended.write(&vec![0xAB; bytes.len()])?;
    g.replay()?.wait()?;
    let texels: Vec<f32> = bytes.iter().map(|&b| f32::from(b) / 255.0).collect();
    let want = cpu_sample(
        &texels,
        4,
        (width as usize, height as usize),
        "linear",
        "clamp",
    );
    // Stored back as 8 bits: the mean, blended in 8 bits (one step off, as above) and rounded.
    for (i, (&got, want)) in blended.read_blocking()?.iter().zip(&want).enumerate() {
        let want = want * 255.0;
        assert!(
            (f32::from(got) - want).abs() <= 1.51,
            "texel {} channel {}: GPU {got}, CPU {want}",
            i / 4,
            i % 4
        );
    }
    Ok(())
}
