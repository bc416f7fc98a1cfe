use graph_runtime::{Buffer, HalfParam, Readback, Upload, f16, graph};

// `u8` and `u16` buffers (packed words in WGSL) and `f16` buffers and parameters: their typed bindings,
// fills, uploads and readbacks have the host's element types; an `f16` parameter is a `HalfParam` (the
// `f32` the block holds) in `GParams`.
graph! {
    graph G {
        params { gain: f16, shift: vec2<f16>, n: u32 }
        buffers {
            pixels: [u8] = input,
            samples: [u16; 3] = output,
            halves: [f16] = inout,
            pairs: [vec2<f16>] = output,
            staged: [u8; 10],
        }
        kernel widen(pixels: read, samples: write) workgroups(1) {
            @compute @workgroup_size(1)
            fn main() {
                let p = unpack4xU8(pixels[0]);
                samples[0] = pack2xU16(p.xy);
                samples[1] = with_u16_at(0u, 1u, u8_at(pixels[0], 2u));
            }
        }
        fill halve(halves = 0.5h * params.gain);
        fill pair(pairs = vec2<f16>(1.0h, 2.0h));
        upload stage(staged);
        readback out(staged);
    }
}

fn bind<'a>(pixels: &'a Buffer<u8>, samples: &'a Buffer<u16>, halves: &'a Buffer<f16>, pairs: &'a Buffer<[f16; 2]>) -> GBuffers<'a> {
    GBuffers { pixels, samples, halves, pairs }
}

fn main() {
    let _ = bind;
    let mut params = GParams::default();
    params.gain = f16::from_f32(0.5).into();
    params.shift = [HalfParam::new(f16::ONE), HalfParam::new(f16::NEG_ONE)];
    assert_eq!(params.gain.get(), f16::from_f32(0.5));
    // As the block holds them: `gain` an `f32` at 0, `shift` a `vec2<f32>` at 8, `n` at 16.
    assert_eq!(size_of::<GParams>(), 24);
    let _: Upload<G, u8> = G::UPLOADS.stage;
    let _: Readback<G, u8> = G::READBACKS.out;
    assert_eq!(G::DESCRIPTION.needs_f16().as_deref(), Some("buffer `halves` holds `f16`"));
    // Kernels and fills over `f16` or packed elements run alone.
    assert!(G::FUSED.is_empty());
}
