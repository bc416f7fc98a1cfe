//! The flagship's graph, `EdgePipeline`: the node kinds working together on a picture in a texture, and the
//! same pipeline on the CPU.
//!
//! ```text
//!   upload picture ─▶ frame (rgba8unorm texture) ─▶ grey ─▶ image
//!     ─▶ [subgraph blur: rows, then columns] ─▶ blurred
//!     ─▶ [alternatives edge_filter: sobel | scharr] ─▶ gradient
//!     ─▶ clear, histogram (atomics) ─▶ bins ─▶ readback hist (the app's copy)
//!                                          └─▶ host otsu: Otsu's level from the histogram ─▶ level
//!     ─▶ threshold (gradient > level) ─▶ edges (rgba8unorm storage texture) ─▶ readback result (an image)
//! ```
//!
//! The picture is uploaded as an image by the replay into a texture the graph owns, sized like the edge
//! texture the app binds (a new frame each replay costs no extra submission); the grey kernel loads its
//! texels; the blur is a graph of its own used as a subgraph; Sobel and Scharr are alternatives, switched
//! after bake without re-baking; the histogram is the library's atomic kernel; the host task runs between
//! the two GPU partitions, reads the histogram, and writes Otsu's level into `level`, which the threshold
//! kernel reads in the same replay to store white or black into the edge texture. The readbacks give the app
//! that replay's histogram and edge image.

use graph_runtime::graph;
use graph_runtime::kernels::cpu;

graph! {
    /// A separable Gaussian blur (radius 2, sigma 1): rows, then columns.
    pub graph Blur {
        params { width: u32, height: u32 }
        buffers { src: [f32] = input, rows: [f32] = output, dst: [f32] = output }
        kernel along_rows = kernels::blur_h(
            input: src, output: rows, width: params.width, height: params.height, radius: 2u, sigma: 1.0
        );
        kernel along_columns = kernels::blur_v(
            input: rows, output: dst, width: params.width, height: params.height, radius: 2u, sigma: 1.0
        );
    }
}

/// Bins of the gradient's histogram.
pub const BINS: usize = 256;

graph! {
    /// Grey, blur, gradient (Sobel or Scharr), histogram, Otsu's threshold on the host, threshold: an edge
    /// detector that picks its own cut-off, from an `rgba8unorm` picture to an `rgba8unorm` edge image.
    pub graph EdgePipeline {
        // `top` is the histogram's upper bound: the largest gradient the active filter can give.
        params { width: u32, height: u32, top: f32 }

        textures {
            /// The edge image: white where the gradient is above Otsu's level, black elsewhere.
            edges: texture_2d<rgba8unorm> = output,
            /// The picture, uploaded as an image by each replay; the graph's own, sized like `edges`.
            frame: texture_2d<rgba8unorm; edges>,
        }

        buffers {
            image: [f32] = output,     // the picture in grey, row by row
            blur_rows: [f32] = output, // the blur's first pass
            blurred: [f32] = output,
            gradient: [f32] = output,  // gradient magnitude
            bins: [u32; 256],          // graph-owned
            level: [f32; 1],           // graph-owned: Otsu's threshold, written by the host task
        }

        upload picture(frame);
        kernel grey(frame: read, image: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) {
                    return;
                }
                let c = textureLoad(frame, vec2<i32>(gid.xy), 0);
                image[gid.y * params.width + gid.x] = dot(c.rgb, vec3<f32>(0.2126, 0.7152, 0.0722));
            }
        }
        subgraph blur = Blur(src: image: read, rows: blur_rows: write, dst: blurred: write);
        alternatives edge_filter {
            kernel sobel = kernels::sobel(input: blurred, output: gradient, width: params.width, height: params.height);
            kernel scharr = kernels::scharr(input: blurred, output: gradient, width: params.width, height: params.height);
        }
        fill clear(bins = 0u);
        kernel histogram = kernels::histogram(input: gradient, bins: bins, lo: 0.0, hi: params.top);
        readback hist(bins);
        host otsu(bins: read, level: write);
        kernel threshold(gradient: read, level: read, edges: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) {
                    return;
                }
                let white = select(0.0, 1.0, gradient[gid.y * params.width + gid.x] > level[0]);
                textureStore(edges, gid.xy, vec4<f32>(white, white, white, 1.0));
            }
        }
        readback result(edges);
    }
}

/// The picture in grey as the `grey` kernel computes it: Rec. 709 luma of each `rgba8unorm` pixel's stored
/// values, row by row.
pub fn grey_image(rgba: &[u8]) -> Vec<f32> {
    rgba.chunks(4).map(crate::texture_edges::grey).collect()
}

/// The largest gradient magnitude of an image in `0..=1` for Sobel (`scharr: false`) or Scharr: the
/// derivative kernels' positive weights sum to 4 and 16, so each derivative is at most that, and the
/// magnitude at most `sqrt(2)` times it.
pub fn top(scharr: bool) -> f32 {
    let gain = if scharr { 16.0 } else { 4.0 };
    gain * std::f32::consts::SQRT_2
}

/// Otsu's threshold of a histogram of `bins.len()` equal bins over `[lo, hi)`: the bin boundary that
/// maximises the variance between the two classes it splits the values into (the upper edge of the last
/// bin of the lower class). `lo` when the histogram is empty or has one class only.
pub fn otsu(bins: &[u32], lo: f32, hi: f32) -> f32 {
    let total: f64 = bins.iter().map(|&c| f64::from(c)).sum();
    let weighted: f64 = bins
        .iter()
        .enumerate()
        .map(|(i, &c)| i as f64 * f64::from(c))
        .sum();
    let (mut below, mut below_weighted) = (0.0, 0.0);
    let (mut best, mut best_bin) = (-1.0, None);
    for (i, &c) in bins.iter().enumerate() {
        below += f64::from(c);
        below_weighted += i as f64 * f64::from(c);
        let above = total - below;
        if below == 0.0 || above == 0.0 {
            continue;
        }
        let gap = below_weighted / below - (weighted - below_weighted) / above;
        let between = below * above * gap * gap;
        if between > best {
            (best, best_bin) = (between, Some(i));
        }
    }
    let width = (hi - lo) / bins.len() as f32;
    best_bin.map_or(lo, |i| lo + (i + 1) as f32 * width)
}

/// The pipeline's stages on the CPU, with the library's CPU references.
#[derive(Debug)]
pub struct CpuStages {
    pub blurred: Vec<f32>,
    pub gradient: Vec<f32>,
    pub bins: Vec<u32>,
}

/// Blur, gradient (Sobel or Scharr) and histogram of `image`, as the graph computes them.
pub fn cpu_stages(image: &[f32], (w, h): (usize, usize), scharr: bool) -> CpuStages {
    let mut rows = vec![0.0; w * h];
    let mut blurred = vec![0.0; w * h];
    cpu::blur(image, &mut rows, (w, h), (2, 1.0), true);
    cpu::blur(&rows, &mut blurred, (w, h), (2, 1.0), false);
    let mut gradient = vec![0.0; w * h];
    let filter = if scharr { cpu::scharr } else { cpu::sobel };
    filter(&blurred, &mut gradient, w, h);
    let mut bins = vec![0; BINS];
    cpu::histogram(&gradient, &mut bins, 0.0, top(scharr));
    CpuStages {
        blurred,
        gradient,
        bins,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn otsu_splits_two_clusters_between_them() {
        let mut bins = vec![0; 10];
        bins[2] = 50;
        bins[7] = 30;
        let level = otsu(&bins, 0.0, 10.0);
        assert!((3.0..=7.0).contains(&level), "{level}");
        // Positive control: one cluster has no split.
        assert_eq!(otsu(&[0, 5, 0, 0], 0.0, 4.0), 0.0);
    }

    #[test]
    fn the_bound_of_the_histogram_holds_the_largest_gradient() {
        // A black/white step under a corner: the steepest gradient each filter can give.
        let (w, h) = (4, 4);
        let image: Vec<f32> = (0..w * h)
            .map(|i| if i % w >= 2 && i / w >= 2 { 1.0 } else { 0.0 })
            .collect();
        for scharr in [false, true] {
            let mut gradient = vec![0.0; w * h];
            let filter = if scharr { cpu::scharr } else { cpu::sobel };
            filter(&image, &mut gradient, w, h);
            let peak = gradient.iter().copied().fold(0.0, f32::max);
            assert!(
                peak > 0.0 && peak <= top(scharr),
                "{peak} > {}",
                top(scharr)
            );
        }
    }
}
