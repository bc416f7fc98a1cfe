//! Element types beyond 32 bits: 8-bit and 16-bit data (`[u8]` pixels, `[u16]` samples) as typed buffers
//! whose WGSL view is packed `u32` words, with WGSL's `unpack4xU8`/`pack4xU8Clamp` and the library's
//! `unpack2xU16`, `pack2xU16`, `u8_at`, `with_u8_at`; and `f16` buffers on a device with `SHADER_F16` (a
//! clear error at bake on one without). Every length odd, so the last word is partly padding; a fill, a
//! copy, an upload and a readback of `u8`; from the macro, the builder and a graph file, both recorders,
//! against the CPU, outputs poisoned first.

#![forbid(unsafe_code)]

mod common;

use common::{gpu, gpu_without_immediates, read, rng, use_recorder};
use graph_runtime::ir::{AccessMode, Role};
use graph_runtime::{BakedGraph, Buffer, Error, GraphBuilder, KernelSpec, LIBRARY, f16, graph};
use proptest::prelude::Rng;

const BRIGHTEN: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&bright)) {
        bright[gid.x] = pack4xU8Clamp(unpack4xU8(pixels[gid.x]) + vec4<u32>(params.gain));
    }
}";

const MIRROR: &str = "override count: u32;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= arrayLength(&mirrored)) { return; }
    var word = 0u;
    for (var lane = 0u; lane < 4u; lane = lane + 1u) {
        let i = gid.x * 4u + lane;
        if (i < count) {
            let at = count - 1u - i;
            word = with_u8_at(word, lane, u8_at(bright[at / 4u], at % 4u));
        }
    }
    mirrored[gid.x] = word;
}";

const TRIPLE: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&tripled)) {
        tripled[gid.x] = pack2xU16(min(unpack2xU16(samples[gid.x]) * 3u, vec2<u32>(65535u)));
    }
}";

graph! {
    /// An 8-bit image brightened (saturating) and mirrored byte by byte, 16-bit samples tripled
    /// (saturating), ten bytes filled from a parameter, ten more uploaded, copied and read back.
    graph Narrow {
        params { gain: u32 }
        buffers {
            pixels: [u8] = input,
            bright: [u8] = output,
            mirrored: [u8] = output,
            samples: [u16] = input,
            tripled: [u16] = output,
            marks: [u8; 10] = output,
            staged: [u8; 10],
            copied: [u8; 10] = output,
        }
        kernel brighten(pixels: read, bright: write) threads(pixels.len().div_ceil(4)) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&bright)) {
                    bright[gid.x] = pack4xU8Clamp(unpack4xU8(pixels[gid.x]) + vec4<u32>(params.gain));
                }
            }
        }
        kernel mirror(bright: read, mirrored: write) threads(bright.len().div_ceil(4))
            overrides(count: bright.len())
        {
            override count: u32;

            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= arrayLength(&mirrored)) { return; }
                var word = 0u;
                for (var lane = 0u; lane < 4u; lane = lane + 1u) {
                    let i = gid.x * 4u + lane;
                    if (i < count) {
                        let at = count - 1u - i;
                        word = with_u8_at(word, lane, u8_at(bright[at / 4u], at % 4u));
                    }
                }
                mirrored[gid.x] = word;
            }
        }
        readback mirror_out(mirrored);
        kernel triple(samples: read, tripled: write) threads(samples.len().div_ceil(2)) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&tripled)) {
                    tripled[gid.x] = pack2xU16(min(unpack2xU16(samples[gid.x]) * 3u, vec2<u32>(65535u)));
                }
            }
        }
        fill mark(marks = params.gain + 250u);
        upload stage(staged);
        copy keep(staged -> copied);
    }
}

/// `Narrow` through the builder.
fn narrow_built() -> GraphBuilder {
    let mut b = GraphBuilder::new("Narrow");
    b.param("gain", "u32")
        .input("pixels", "u8")
        .output("bright", "u8")
        .output("mirrored", "u8")
        .input("samples", "u16")
        .output("tripled", "u16")
        .buffer("marks", "u8", Role::Output, Some(10))
        .owned("staged", "u8", 10)
        .buffer("copied", "u8", Role::Output, Some(10));
    b.kernel(
        "brighten",
        KernelSpec::wgsl(BRIGHTEN)
            .read("pixels")
            .write("bright")
            .threads(&["pixels.len().div_ceil(4)"]),
    )
    .kernel(
        "mirror",
        KernelSpec::wgsl(MIRROR)
            .read("bright")
            .write("mirrored")
            .threads(&["bright.len().div_ceil(4)"])
            .set_override("count", "bright.len()"),
    )
    .readback("mirror_out", "mirrored")
    .kernel(
        "triple",
        KernelSpec::wgsl(TRIPLE)
            .bind("samples", "samples", AccessMode::Read)
            .bind("tripled", "tripled", AccessMode::Write)
            .threads(&["samples.len().div_ceil(2)"]),
    )
    .fill("mark", "marks", "params.gain + 250u")
    .upload("stage", "staged")
    .copy("keep", "staged", "copied");
    b
}

/// The buffers one round binds, poisoned outputs included.
struct Bound {
    pixels: Buffer<u8>,
    bright: Buffer<u8>,
    mirrored: Buffer<u8>,
    samples: Buffer<u16>,
    tripled: Buffer<u16>,
    marks: Buffer<u8>,
    copied: Buffer<u8>,
}

/// What one replay gave: the bound outputs, read after it finished, and the readback node's data.
struct NarrowResults {
    bright: Vec<u8>,
    mirrored: Vec<u8>,
    tripled: Vec<u16>,
    marks: Vec<u8>,
    copied: Vec<u8>,
    read_back: Vec<u8>,
}

/// Fresh inputs of `pixels` bytes and `samples` samples, outputs poisoned.
fn narrow_buffers(gpu: &graph_runtime::Gpu, pixels: usize, samples: usize) -> Bound {
    let mut rng = rng();
    let bytes: Vec<u8> = (0..pixels).map(|_| rng.next_u32() as u8).collect();
    let samples: Vec<u16> = (0..samples).map(|_| rng.next_u32() as u16).collect();
    let poisoned_u8 = |n: usize| gpu.buffer_from_slice(&vec![0xEEu8; n]).expect("buffer");
    Bound {
        // Written after it is made: a write of elements that end inside a word.
        pixels: {
            let pixels = gpu.buffer_zeroed::<u8>(bytes.len()).expect("buffer");
            pixels.write(&bytes).expect("write");
            pixels
        },
        bright: poisoned_u8(pixels),
        mirrored: poisoned_u8(pixels),
        tripled: gpu
            .buffer_from_slice(&vec![0xDEADu16; samples.len()])
            .expect("buffer"),
        samples: gpu.buffer_from_slice(&samples).expect("buffer"),
        marks: poisoned_u8(10),
        copied: poisoned_u8(10),
    }
}

/// Checks one replay against the CPU.
fn check_narrow(b: &Bound, got: &NarrowResults, gain: u32, staged: &[u8], what: &str) {
    let pixels = read(&b.pixels);
    let bright: Vec<u8> = pixels
        .iter()
        .map(|&p| (u32::from(p) + gain).min(255) as u8)
        .collect();
    assert_eq!(got.bright, bright, "{what}: bright");
    let mirrored: Vec<u8> = bright.iter().rev().copied().collect();
    assert_eq!(got.mirrored, mirrored, "{what}: mirrored");
    assert_eq!(got.read_back, mirrored, "{what}: the readback node");
    let tripled: Vec<u16> = read(&b.samples)
        .iter()
        .map(|&s| (u32::from(s) * 3).min(65535) as u16)
        .collect();
    assert_eq!(got.tripled, tripled, "{what}: tripled");
    assert_eq!(got.marks, vec![(gain + 250) as u8; 10], "{what}: marks");
    assert_eq!(got.copied, staged, "{what}: copied");
}

fn read_results(b: &Bound, read_back: Vec<u8>) -> NarrowResults {
    NarrowResults {
        bright: read(&b.bright),
        mirrored: read(&b.mirrored),
        tripled: read(&b.tripled),
        marks: read(&b.marks),
        copied: read(&b.copied),
        read_back,
    }
}

fn bake_narrow(gpu: &graph_runtime::Gpu, b: &Bound) -> Result<graph_runtime::Baked<Narrow>, Error> {
    Narrow::bake(
        gpu,
        NarrowBuffers {
            pixels: &b.pixels,
            bright: &b.bright,
            mirrored: &b.mirrored,
            samples: &b.samples,
            tripled: &b.tripled,
            marks: &b.marks,
            copied: &b.copied,
        },
    )
}

/// Lengths that end inside a word, and one word exactly.
const SHAPES: [(usize, usize); 4] = [(10, 7), (37, 1), (1, 3), (8, 4)];

#[test]
fn u8_and_u16_buffers_are_packed_words_with_helpers_through_the_macro() -> Result<(), Error> {
    let gpu = gpu();
    for native in [true, false] {
        for (round, &(pixels, samples)) in SHAPES.iter().enumerate() {
            let b = narrow_buffers(&gpu, pixels, samples);
            let mut g = bake_narrow(&gpu, &b)?;
            if !use_recorder(&mut g, &gpu, native) {
                break;
            }
            let gain = 3 + 40 * round as u32;
            g.params_mut().gain = gain;
            let staged: Vec<u8> = (0..10).map(|i| (i * 7 + round) as u8).collect();
            g.upload(Narrow::UPLOADS.stage, &staged)?;
            let finished = g.replay()?.wait()?;
            let read_back = finished.read(Narrow::READBACKS.mirror_out)?;
            let what = format!("macro {} {pixels}/{samples}", g.untyped().recorder());
            check_narrow(&b, &read_results(&b, read_back), gain, &staged, &what);
        }
    }
    Ok(())
}

#[test]
fn built_and_loaded_narrow_graphs_describe_and_compute_the_same()
-> Result<(), Box<dyn std::error::Error>> {
    let built = narrow_built().build(&LIBRARY)?;
    // The same buffers and nodes as the macro's, of the same types.
    let shape = |d: &graph_runtime::GraphDesc| {
        let buffers: Vec<_> = d
            .buffers
            .iter()
            .map(|b| (b.name.to_string(), b.elem, b.len))
            .collect();
        let nodes: Vec<_> = d.nodes.iter().map(|n| n.name.to_string()).collect();
        (buffers, nodes, d.edges.len())
    };
    assert_eq!(shape(&built), shape(Narrow::DESCRIPTION));
    let text = graph_runtime::file::to_json(narrow_built().graph());
    assert!(
        text.contains("\"u8\"") && text.contains("\"u16\""),
        "{text}"
    );
    let loaded =
        graph_runtime::pipeline::describe_graph(graph_runtime::file::from_json(&text)?, &LIBRARY)?;
    assert_eq!(loaded, built);
    let gpu = gpu();
    // A hand-made description whose copy takes part of a word is refused at bake, before any replay.
    let mut hostile = built.clone();
    for node in hostile.nodes.to_mut() {
        if let graph_runtime::desc::OpDesc::Copy { src_range, .. } = &mut node.op {
            src_range.end = src_range.start.clone();
        }
    }
    let refused = BakedGraph::bake(&gpu, hostile, &[])
        .err()
        .map(|e| e.to_string());
    assert!(
        refused
            .as_deref()
            .is_some_and(|m| m.contains("smaller than a word")),
        "{refused:?}"
    );
    for (door, desc) in [("built", &built), ("loaded", &loaded)] {
        for native in [true, false] {
            let (pixels, samples) = (13, 5);
            let b = narrow_buffers(&gpu, pixels, samples);
            let mut g = BakedGraph::bake(
                &gpu,
                desc.clone(),
                &[
                    ("pixels", b.pixels.as_any()),
                    ("bright", b.bright.as_any()),
                    ("mirrored", b.mirrored.as_any()),
                    ("samples", b.samples.as_any()),
                    ("tripled", b.tripled.as_any()),
                    ("marks", b.marks.as_any()),
                    ("copied", b.copied.as_any()),
                ],
            )?;
            if !use_recorder(&mut g, &gpu, native) {
                continue;
            }
            g.set_param("gain", 200u32)?;
            let staged: Vec<u8> = (0..10).map(|i| 255 - i).collect();
            // The upload takes the elements' own bytes, not the word they end in.
            let short = g
                .upload::<u8>("stage", &staged[..9])
                .err()
                .map(|e| e.to_string());
            assert!(
                short
                    .as_deref()
                    .is_some_and(|m| m.contains("10 elements, not 9")),
                "{short:?}"
            );
            g.upload("stage", &staged)?;
            let finished = g.replay()?.wait()?;
            let read_back = finished.read_named::<u8>("mirror_out")?;
            let what = format!("{door} {}", g.recorder());
            check_narrow(&b, &read_results(&b, read_back), 200, &staged, &what);
        }
    }
    Ok(())
}

const SCALE: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&x)) {
        y[i] = x[i] * params.gain - 1.0h;
        wide[i] = f32(x[i]);
    }
}";

const SWAP: &str = "@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&pairs)) { pairs[gid.x] = pairs[gid.x].yx + params.offset; }
}";

graph! {
    /// `f16` buffers and parameters: scaled by a parameter and widened to `f32`, pairs of `vec2<f16>`
    /// swapped and shifted by a vector parameter, and fills of `f16` (one from a parameter).
    graph Halves {
        params { gain: f16, offset: vec2<f16> }
        buffers {
            x: [f16] = input,
            y: [f16] = output,
            wide: [f32] = output,
            pairs: [vec2<f16>] = inout,
            ones: [f16; 7] = output,
            gains: [f16; 3] = output,
        }
        kernel scale(x: read, y: write, wide: write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < arrayLength(&x)) {
                    y[i] = x[i] * params.gain - 1.0h;
                    wide[i] = f32(x[i]);
                }
            }
        }
        kernel swap(pairs: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&pairs)) { pairs[gid.x] = pairs[gid.x].yx + params.offset; }
            }
        }
        fill one_and_a_half(ones = 1.5h);
        fill gain(gains = params.gain * 2.0h);
    }
}

/// `Halves` through the builder, its parameters in a uniform buffer when `uniform`.
fn halves_built(uniform: bool) -> GraphBuilder {
    let mut b = GraphBuilder::new("Halves");
    b.param("gain", "f16")
        .param("offset", "vec2<f16>")
        .input("x", "f16")
        .output("y", "f16")
        .output("wide", "f32")
        .inout("pairs", "vec2<f16>")
        .buffer("ones", "f16", Role::Output, Some(7))
        .buffer("gains", "f16", Role::Output, Some(3));
    if uniform {
        b.uniform_params();
    }
    b.kernel(
        "scale",
        KernelSpec::wgsl(SCALE).read("x").write("y").write("wide"),
    )
    .kernel("swap", KernelSpec::wgsl(SWAP).read_write("pairs"))
    .fill("one_and_a_half", "ones", "1.5h")
    .fill("gain", "gains", "params.gain * 2.0h");
    b
}

/// The buffers of one `Halves` replay over `n` fresh quarters, outputs poisoned.
struct HalfBuffers {
    xs: Vec<f16>,
    pairs_in: Vec<[f16; 2]>,
    x: Buffer<f16>,
    y: Buffer<f16>,
    wide: Buffer<f32>,
    pairs: Buffer<[f16; 2]>,
    ones: Buffer<f16>,
    gains: Buffer<f16>,
}

fn half_buffers(gpu: &graph_runtime::Gpu, n: usize) -> Result<HalfBuffers, Error> {
    let xs = quarters(n);
    let pairs_in: Vec<[f16; 2]> = xs.iter().map(|&v| [v, -v]).collect();
    Ok(HalfBuffers {
        x: gpu.buffer_from_slice(&xs)?,
        y: gpu.buffer_from_slice(&vec![f16::NAN; n])?,
        wide: gpu.buffer_from_slice(&vec![f32::NAN; n])?,
        pairs: gpu.buffer_from_slice(&pairs_in)?,
        ones: gpu.buffer_from_slice(&[f16::NAN; 7])?,
        gains: gpu.buffer_from_slice(&[f16::NAN; 3])?,
        xs,
        pairs_in,
    })
}

fn bake_halves(
    gpu: &graph_runtime::Gpu,
    b: &HalfBuffers,
) -> Result<graph_runtime::Baked<Halves>, Error> {
    Halves::bake(
        gpu,
        HalvesBuffers {
            x: &b.x,
            y: &b.y,
            wide: &b.wide,
            pairs: &b.pairs,
            ones: &b.ones,
            gains: &b.gains,
        },
    )
}

/// One replay's outputs against the CPU (every operation exact in `f16` on these inputs).
fn check_halves(b: &HalfBuffers, gain: f32, offset: [f32; 2], what: &str) {
    let h = f16::from_f32;
    let want: Vec<f16> = b.xs.iter().map(|v| h(v.to_f32() * gain - 1.0)).collect();
    assert_eq!(read(&b.y), want, "{what}: y");
    let widened: Vec<f32> = b.xs.iter().map(|v| v.to_f32()).collect();
    assert_eq!(read(&b.wide), widened, "{what}: wide");
    let swapped: Vec<[f16; 2]> = b
        .pairs_in
        .iter()
        .map(|&[a, c]| [h(c.to_f32() + offset[0]), h(a.to_f32() + offset[1])])
        .collect();
    assert_eq!(read(&b.pairs), swapped, "{what}: pairs");
    assert_eq!(read(&b.ones), vec![h(1.5); 7], "{what}: ones");
    assert_eq!(read(&b.gains), vec![h(gain * 2.0); 3], "{what}: gains");
}

/// Multiples of 0.25 in [-8, 8): `x * 2.5 - 1` is exact in `f16` for each.
fn quarters(n: usize) -> Vec<f16> {
    let mut rng = rng();
    (0..n)
        .map(|_| f16::from_f32((rng.next_u32() % 64) as f32 * 0.25 - 8.0))
        .collect()
}

#[test]
fn f16_buffers_and_parameters_compute_in_f16_where_the_device_has_it_and_are_refused_where_not()
-> Result<(), Error> {
    let gpu = gpu();
    let has_f16 = gpu
        .device()
        .features()
        .contains(graph_runtime::wgpu::Features::SHADER_F16);
    eprintln!("SHADER_F16: {has_f16}");
    for native in [true, false] {
        for (round, n) in [7, 64, 129].into_iter().enumerate() {
            let b = half_buffers(&gpu, n)?;
            let baked = bake_halves(&gpu, &b);
            let mut g = match (baked, has_f16) {
                (Ok(g), true) => g,
                (Err(e), false) => {
                    assert_f16_refused(&e.to_string());
                    return Ok(());
                }
                (Ok(_), false) => panic!("a graph of `f16` baked on a device without SHADER_F16"),
                (Err(e), true) => return Err(e),
            };
            if !use_recorder(&mut g, &gpu, native) {
                break;
            }
            let gain = [2.5, 0.75, -3.0][round];
            let offset = [0.5, -0.25];
            g.params_mut().gain = f16::from_f32(gain).into();
            g.params_mut().offset = offset.map(|v| f16::from_f32(v).into());
            g.replay()?.wait()?;
            check_halves(
                &b,
                gain,
                offset,
                &format!("{} n {n}", g.untyped().recorder()),
            );
        }
    }
    Ok(())
}

#[test]
fn built_and_loaded_f16_graphs_with_parameters_in_either_storage_compute_the_same()
-> Result<(), Box<dyn std::error::Error>> {
    let gpu = gpu();
    if !gpu
        .device()
        .features()
        .contains(graph_runtime::wgpu::Features::SHADER_F16)
    {
        // The refusal is tested on a device made without it, below.
        return Ok(());
    }
    for uniform in [false, true] {
        let built = halves_built(uniform).build(&LIBRARY)?;
        let text = graph_runtime::file::to_json(halves_built(uniform).graph());
        let loaded = graph_runtime::pipeline::describe_graph(
            graph_runtime::file::from_json(&text)?,
            &LIBRARY,
        )?;
        assert_eq!(loaded, built);
        for native in [true, false] {
            let b = half_buffers(&gpu, 33)?;
            let mut g = BakedGraph::bake(
                &gpu,
                loaded.clone(),
                &[
                    ("x", b.x.as_any()),
                    ("y", b.y.as_any()),
                    ("wide", b.wide.as_any()),
                    ("pairs", b.pairs.as_any()),
                    ("ones", b.ones.as_any()),
                    ("gains", b.gains.as_any()),
                ],
            )?;
            if !use_recorder(&mut g, &gpu, native) {
                continue;
            }
            g.set_param("gain", f16::from_f32(1.25))?;
            g.set_param("offset", [f16::from_f32(-1.0), f16::from_f32(2.0)])?;
            assert_eq!(g.param::<f16>("gain")?, f16::from_f32(1.25));
            // An `f16` parameter is set as one: an `f32` is refused.
            assert!(g.set_param("gain", 1.25f32).is_err());
            g.replay()?.wait()?;
            let what = format!("uniform {uniform} {}", g.recorder());
            check_halves(&b, 1.25, [-1.0, 2.0], &what);
        }
    }
    Ok(())
}

#[track_caller]
fn assert_f16_refused(message: &str) {
    assert!(
        message.contains("SHADER_F16") && message.contains("buffer `x` holds `f16`"),
        "{message}"
    );
}

/// An application's device made without `SHADER_F16` (whatever the adapter offers): bake says why.
#[test]
fn a_device_without_shader_f16_refuses_f16_at_bake_and_keeps_working() -> Result<(), Error> {
    let gpu = gpu_without_immediates();
    assert!(
        !gpu.device()
            .features()
            .contains(graph_runtime::wgpu::Features::SHADER_F16)
    );
    let h = half_buffers(&gpu, 5)?;
    let refused = bake_halves(&gpu, &h).err().map(|e| e.to_string());
    assert_f16_refused(refused.as_deref().unwrap_or("it baked"));
    // The same device bakes and runs a graph of bytes.
    let b = narrow_buffers(&gpu, 6, 3);
    let mut g = bake_narrow(&gpu, &b)?;
    g.params_mut().gain = 1;
    let staged = [9u8; 10];
    g.upload(Narrow::UPLOADS.stage, &staged)?;
    let read_back = g.replay()?.wait()?.read(Narrow::READBACKS.mirror_out)?;
    check_narrow(
        &b,
        &read_results(&b, read_back),
        1,
        &staged,
        "uniform parameters",
    );
    Ok(())
}

/// The eager stream over the same types: a `u8` buffer of 10 bytes, and where the device has `f16`, an
/// `f16` buffer scaled by an `f16` parameter.
#[test]
fn an_eager_stream_takes_u8_buffers_and_f16_parameters() -> Result<(), Error> {
    let gpu = gpu();
    let mut s = gpu.stream();
    let bytes: Vec<u8> = (0..10u8).map(|i| i.wrapping_mul(57)).collect();
    let a = gpu.buffer_from_slice(&bytes)?;
    let b = gpu.buffer_from_slice(&[0xEEu8; 10])?;
    s.kernel(
        "inc",
        "@compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            if (gid.x < arrayLength(&b)) { b[gid.x] = pack4xU8(unpack4xU8(a[gid.x]) + vec4<u32>(1u)); }
        }",
    )
    .read("a", &a)
    .write("b", &b)
    .threads(&["a.len().div_ceil(4)"])
    .run()?;
    let want: Vec<u8> = bytes.iter().map(|v| v.wrapping_add(1)).collect();
    assert_eq!(s.read(&b)?, want, "stream u8");
    if !gpu
        .device()
        .features()
        .contains(graph_runtime::wgpu::Features::SHADER_F16)
    {
        return Ok(());
    }
    let xs = quarters(9);
    let x = gpu.buffer_from_slice(&xs)?;
    let y = gpu.buffer_from_slice(&[f16::NAN; 9])?;
    for gain in [-1.5f32, 0.25] {
        s.param("gain", f16::from_f32(gain))?;
        s.kernel(
            "scale",
            "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { y[gid.x] = x[gid.x] * params.gain; }
            }",
        )
        .read("x", &x)
        .write("y", &y)
        .run()?;
        let want: Vec<f16> = xs
            .iter()
            .map(|v| f16::from_f32(v.to_f32() * gain))
            .collect();
        assert_eq!(s.read(&y)?, want, "stream f16 gain {gain}");
    }
    Ok(())
}
