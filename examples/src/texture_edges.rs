//! The flagship's edge detector on textures, `TextureEdges`: the picture an `rgba8unorm` texture uploaded by
//! an image upload node, the blur and the gradient in textures the graph owns, the edges written into an
//! `rgba8unorm` storage texture and read back as an image; and the same on the CPU.
//!
//! ```text
//!   upload picture ─▶ frame (rgba8unorm) ─▶ blur_rows: grey, Gaussian along rows ─▶ rows (r32float)
//!     ─▶ blur_columns ─▶ blurred (r32float)
//!     ─▶ [alternatives edge_filter: sobel | scharr] (gradient > params.level) ─▶ edges (rgba8unorm)
//!     ─▶ readback result
//! ```
//!
//! Every texture but the edges is the graph's own, sized like the edges texture the app binds: a frame of
//! another size is a rebind of that one texture.

use graph_runtime::graph;
use graph_runtime::kernels::cpu;

graph! {
    /// An edge detector over textures: grey and blurred (radius 2, sigma 1) in two passes, the gradient's
    /// magnitude (Sobel or Scharr) against `params.level`, white where above.
    pub graph TextureEdges {
        params { width: u32, height: u32, level: f32 }
        textures {
            /// The edge image: white where the gradient is above the level, black elsewhere.
            edges: texture_2d<rgba8unorm> = output,
            /// The picture, uploaded by each replay.
            frame: texture_2d<rgba8unorm; edges>,
            rows: texture_2d<r32float; edges>,
            blurred: texture_2d<r32float; edges>,
        }
        upload picture(frame);
        kernel blur_rows(frame: read, rows: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                var sum = 0.0;
                var total = 0.0;
                for (var d = -2; d <= 2; d++) {
                    let x = clamp(i32(gid.x) + d, 0, i32(params.width) - 1);
                    let c = textureLoad(frame, vec2<i32>(x, i32(gid.y)), 0);
                    let w = exp(-f32(d * d) / 2.0);
                    sum += w * dot(c.rgb, vec3<f32>(0.2126, 0.7152, 0.0722));
                    total += w;
                }
                textureStore(rows, gid.xy, vec4<f32>(sum / total, 0.0, 0.0, 1.0));
            }
        }
        kernel blur_columns(rows: read, blurred: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) { return; }
                var sum = 0.0;
                var total = 0.0;
                for (var d = -2; d <= 2; d++) {
                    let y = clamp(i32(gid.y) + d, 0, i32(params.height) - 1);
                    let w = exp(-f32(d * d) / 2.0);
                    sum += w * textureLoad(rows, vec2<i32>(i32(gid.x), y), 0).r;
                    total += w;
                }
                textureStore(blurred, gid.xy, vec4<f32>(sum / total, 0.0, 0.0, 1.0));
            }
        }
        alternatives edge_filter {
            kernel sobel(blurred: read, edges: write) threads(params.width, params.height) {
                @compute @workgroup_size(8, 8)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x >= params.width || gid.y >= params.height) { return; }
                    let m = gradient(vec2<i32>(gid.xy), 1.0, 2.0);
                    let white = select(0.0, 1.0, m > params.level);
                    textureStore(edges, gid.xy, vec4<f32>(white, white, white, 1.0));
                }

                fn at(x: i32, y: i32) -> f32 {
                    let cx = clamp(x, 0, i32(params.width) - 1);
                    let cy = clamp(y, 0, i32(params.height) - 1);
                    return textureLoad(blurred, vec2<i32>(cx, cy), 0).r;
                }

                fn gradient(p: vec2<i32>, side: f32, centre: f32) -> f32 {
                    let gx = (side * at(p.x + 1, p.y - 1) + centre * at(p.x + 1, p.y) + side * at(p.x + 1, p.y + 1))
                        - (side * at(p.x - 1, p.y - 1) + centre * at(p.x - 1, p.y) + side * at(p.x - 1, p.y + 1));
                    let gy = (side * at(p.x - 1, p.y + 1) + centre * at(p.x, p.y + 1) + side * at(p.x + 1, p.y + 1))
                        - (side * at(p.x - 1, p.y - 1) + centre * at(p.x, p.y - 1) + side * at(p.x + 1, p.y - 1));
                    return sqrt(gx * gx + gy * gy);
                }
            }
            kernel scharr(blurred: read, edges: write) threads(params.width, params.height) {
                @compute @workgroup_size(8, 8)
                fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                    if (gid.x >= params.width || gid.y >= params.height) { return; }
                    let m = gradient(vec2<i32>(gid.xy), 3.0, 10.0);
                    let white = select(0.0, 1.0, m > params.level);
                    textureStore(edges, gid.xy, vec4<f32>(white, white, white, 1.0));
                }

                fn at(x: i32, y: i32) -> f32 {
                    let cx = clamp(x, 0, i32(params.width) - 1);
                    let cy = clamp(y, 0, i32(params.height) - 1);
                    return textureLoad(blurred, vec2<i32>(cx, cy), 0).r;
                }

                fn gradient(p: vec2<i32>, side: f32, centre: f32) -> f32 {
                    let gx = (side * at(p.x + 1, p.y - 1) + centre * at(p.x + 1, p.y) + side * at(p.x + 1, p.y + 1))
                        - (side * at(p.x - 1, p.y - 1) + centre * at(p.x - 1, p.y) + side * at(p.x - 1, p.y + 1));
                    let gy = (side * at(p.x - 1, p.y + 1) + centre * at(p.x, p.y + 1) + side * at(p.x + 1, p.y + 1))
                        - (side * at(p.x - 1, p.y - 1) + centre * at(p.x, p.y - 1) + side * at(p.x + 1, p.y - 1));
                    return sqrt(gx * gx + gy * gy);
                }
            }
        }
        readback result(edges);
    }
}

/// Grey of an `rgba8unorm` pixel, as `blur_rows` weighs it (Rec. 709 luma of the stored values).
pub fn grey(pixel: &[u8]) -> f32 {
    let c = |i: usize| f32::from(pixel[i]) / 255.0;
    0.2126 * c(0) + 0.7152 * c(1) + 0.0722 * c(2)
}

/// What `TextureEdges` computes on the CPU: the blurred grey image and the gradient's magnitude, each pixel
/// row by row.
#[derive(Debug)]
pub struct CpuTextureEdges {
    pub blurred: Vec<f32>,
    pub gradient: Vec<f32>,
}

/// The blur and gradient of an `rgba8unorm` picture (`width` x `height`), as the graph computes them.
pub fn cpu_texture_edges(rgba: &[u8], (w, h): (usize, usize), scharr: bool) -> CpuTextureEdges {
    let grey: Vec<f32> = rgba.chunks(4).map(grey).collect();
    let mut rows = vec![0.0; w * h];
    let mut blurred = vec![0.0; w * h];
    cpu::blur(&grey, &mut rows, (w, h), (2, 1.0), true);
    cpu::blur(&rows, &mut blurred, (w, h), (2, 1.0), false);
    let mut gradient = vec![0.0; w * h];
    let filter = if scharr { cpu::scharr } else { cpu::sobel };
    filter(&blurred, &mut gradient, w, h);
    CpuTextureEdges { blurred, gradient }
}

/// How many pixels of `edges` (an `rgba8unorm` edge image) differ from the CPU's edges of `gradient` at
/// `level`, not counting those whose gradient is within `tolerance` of the level (where the GPU's last bits
/// may fall either side), nor any pixel that is not pure black or pure white (a poisoned one counts).
pub fn mismatched_edges(edges: &[u8], gradient: &[f32], level: f32, tolerance: f32) -> usize {
    edges
        .chunks(4)
        .zip(gradient)
        .filter(|(pixel, g)| {
            let want: [u8; 4] = if **g > level {
                [255; 4]
            } else {
                [0, 0, 0, 255]
            };
            **pixel != want
                && ((**g - level).abs() > tolerance
                    || !matches!(pixel, [0, 0, 0, 255] | [255, 255, 255, 255]))
        })
        .count()
}
