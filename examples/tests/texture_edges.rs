//! The flagship's detector on textures against the CPU on pictures of odd sizes, both alternatives, the edge
//! texture poisoned first; a rebind to a picture of another size remakes the textures the graph owns.

#![forbid(unsafe_code)]

use examples::texture_edges::{
    TextureEdges, TextureEdgesBuffers, TextureEdgesChoice, TextureEdgesParams, cpu_texture_edges,
    mismatched_edges,
};
use graph_runtime::{Baked, Error, Gpu};

/// A picture of `w` x `h` with soft shapes (a disc and a bar) over noise, from `seed`: edges to find, and
/// gradients near any level too.
fn picture(w: u32, h: u32, seed: u64) -> image::RgbaImage {
    let mut state = seed | 1;
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 40) as u8
    };
    image::RgbaImage::from_fn(w, h, |x, y| {
        let (fx, fy) = (x as f32 / w as f32 - 0.5, y as f32 / h as f32 - 0.5);
        let disc = fx * fx + fy * fy < 0.1;
        let bar = (0.2..0.3).contains(&fx);
        let base = if disc || bar { 200 } else { 30 };
        image::Rgba([
            base + noise(),
            base.saturating_sub(noise()),
            base / 2 + noise(),
            255,
        ])
    })
}

fn check(g: &mut Baked<TextureEdges>, image: &image::RgbaImage, scharr: bool) -> Result<(), Error> {
    let (w, h) = image.dimensions();
    let level = g.params().level;
    g.upload_image(TextureEdges::UPLOADS.picture, image)?;
    let finished = g.replay()?.wait()?;
    let edges = finished.read_image(TextureEdges::READBACKS.result)?;
    let cpu = cpu_texture_edges(image.as_raw(), (w as usize, h as usize), scharr);
    let white = edges.as_raw().chunks(4).filter(|p| p[0] == 255).count();
    assert!(
        white > 0 && white < (w * h) as usize,
        "{w}x{h}: {white} edge pixels"
    );
    let mismatched = mismatched_edges(edges.as_raw(), &cpu.gradient, level, 1e-5 * (1.0 + level));
    assert_eq!(
        mismatched, 0,
        "{w}x{h} scharr={scharr}: edge pixels differ from the CPU"
    );
    Ok(())
}

#[test]
fn edges_on_textures_match_the_cpu_at_odd_sizes_and_after_a_rebind() -> Result<(), Error> {
    let gpu = Gpu::new_blocking()?;
    let mut baked: Option<Baked<TextureEdges>> = None;
    for (i, (w, h)) in [(37u32, 23u32), (64, 5), (129, 70)].into_iter().enumerate() {
        let edges = gpu.texture("texture_2d<rgba8unorm>", [w, h, 1])?;
        edges.write(&vec![0x7f; (w * h * 4) as usize])?;
        let g = match baked.as_mut() {
            None => baked.insert(TextureEdges::bake(
                &gpu,
                TextureEdgesBuffers { edges: &edges },
            )?),
            Some(g) => {
                g.rebind(TextureEdgesBuffers { edges: &edges })?;
                g
            }
        };
        let image = picture(w, h, 7 + i as u64);
        g.select(TextureEdgesChoice::Sobel)?;
        *g.params_mut() = TextureEdgesParams::new(w, h, 0.25);
        check(g, &image, false)?;
        g.select(TextureEdgesChoice::Scharr)?;
        g.params_mut().level = 1.0;
        check(g, &image, true)?;
    }
    Ok(())
}
