//! The flagship's graph, `EdgeDetect` (Gaussian blur, Sobel magnitude, threshold), and the same pipeline on
//! the CPU. It lives in the library so that the flagship program, the saved graph
//! `examples/graphs/edge_detect.json` and the tests that compare them all see one declaration.

use graph_runtime::graph;

// ---------------------------------------------------------------------------------------------------------
// The graph.
//
// Every buffer is external (`[f32]`, bound at bake time): the caller picks the image size at run time, and
// can read the intermediates back (the blurred image and the gradient are worth looking at). A buffer can also
// be owned by the graph (`name: [f32; 262144]`, no role), but its length is then fixed at compile time.
//
// No edges are written: the macro infers them from who writes and who reads each buffer, and checks that
// the result is acyclic and race-free. Here that gives the chain blur_x -> blur_y -> sobel -> threshold.
// ---------------------------------------------------------------------------------------------------------
graph! {
    /// Gaussian blur, Sobel gradient magnitude, threshold: an edge detector over a grayscale f32 image
    /// stored row by row, one f32 per pixel.
    pub graph EdgeDetect {
        // `width`/`height` size the dispatches and the indexing; `threshold` is the cut-off on the gradient.
        params { width: u32, height: u32, threshold: f32 }

        buffers {
            image: [f32] = input,     // the picture, 0 = black .. 1 = white
            blur_tmp: [f32] = output, // after the horizontal pass
            blurred: [f32] = output,  // after both passes
            gradient: [f32] = output, // Sobel gradient magnitude
            edges: [f32] = output,    // 1 where gradient > threshold, else 0
        }

        // Horizontal pass. `image: read` makes `image` a read-only storage array in the WGSL; `blur_tmp: write`
        // says the kernel overwrites it without reading it (the macro rejects a read of a `write` buffer).
        //
        // Pixels outside the image repeat the nearest border pixel (clamp to edge). The 2D dispatch is rounded
        // up to whole 8x8 workgroups, so invocations past the right or bottom border return at once.
        kernel blur_x(image: read, blur_tmp: write) threads(params.width, params.height) {
            // The neighbour `dx` pixels to the right of (x, y), clamped to the row.
            fn at(x: u32, y: u32, dx: i32) -> f32 {
                let cx = clamp(i32(x) + dx, 0, i32(params.width) - 1);
                return image[y * params.width + u32(cx)];
            }

            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let x = gid.x;
                let y = gid.y;
                if (x >= params.width || y >= params.height) {
                    return;
                }
                // Binomial weights 1 4 6 4 1, divided by 16; symmetric pairs summed first.
                let sum = 0.0625 * (at(x, y, -2) + at(x, y, 2))
                        + 0.25 * (at(x, y, -1) + at(x, y, 1))
                        + 0.375 * at(x, y, 0);
                blur_tmp[y * params.width + x] = sum;
            }
        }

        // Vertical pass: the same weights down the columns. It reads what `blur_x` wrote, so it runs after it.
        kernel blur_y(blur_tmp: read, blurred: write) threads(params.width, params.height) {
            fn at(x: u32, y: u32, dy: i32) -> f32 {
                let cy = clamp(i32(y) + dy, 0, i32(params.height) - 1);
                return blur_tmp[u32(cy) * params.width + x];
            }

            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let x = gid.x;
                let y = gid.y;
                if (x >= params.width || y >= params.height) {
                    return;
                }
                let sum = 0.0625 * (at(x, y, -2) + at(x, y, 2))
                        + 0.25 * (at(x, y, -1) + at(x, y, 1))
                        + 0.375 * at(x, y, 0);
                blurred[y * params.width + x] = sum;
            }
        }

        // Sobel: horizontal and vertical derivatives from a 3x3 neighbourhood, then their length.
        //
        //        -1 0 +1            -1 -2 -1
        //   gx = -2 0 +2       gy =  0  0  0
        //        -1 0 +1            +1 +2 +1
        kernel sobel(blurred: read, gradient: write) threads(params.width, params.height) {
            fn at(x: u32, y: u32, dx: i32, dy: i32) -> f32 {
                let cx = clamp(i32(x) + dx, 0, i32(params.width) - 1);
                let cy = clamp(i32(y) + dy, 0, i32(params.height) - 1);
                return blurred[u32(cy) * params.width + u32(cx)];
            }

            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let x = gid.x;
                let y = gid.y;
                if (x >= params.width || y >= params.height) {
                    return;
                }
                let gx = (at(x, y, 1, -1) + 2.0 * at(x, y, 1, 0) + at(x, y, 1, 1))
                       - (at(x, y, -1, -1) + 2.0 * at(x, y, -1, 0) + at(x, y, -1, 1));
                let gy = (at(x, y, -1, 1) + 2.0 * at(x, y, 0, 1) + at(x, y, 1, 1))
                       - (at(x, y, -1, -1) + 2.0 * at(x, y, 0, -1) + at(x, y, 1, -1));
                gradient[y * params.width + x] = sqrt(gx * gx + gy * gy);
            }
        }

        // Threshold: a pixel is an edge when its gradient exceeds `params.threshold`. This is the parameter
        // the program changes between replays.
        kernel threshold(gradient: read, edges: write) threads(params.width, params.height) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x >= params.width || gid.y >= params.height) {
                    return;
                }
                let i = gid.y * params.width + gid.x;
                edges[i] = select(0.0, 1.0, gradient[i] > params.threshold);
            }
        }
    }
}

// ---------------------------------------------------------------------------------- CPU reference ---------

/// The stages of the pipeline before the threshold, computed on the CPU (the threshold is applied to
/// `gradient` by the caller).
#[derive(Debug)]
pub struct CpuResult {
    pub blurred: Vec<f32>,
    pub gradient: Vec<f32>,
}

/// The same pipeline as the graph, pixel for pixel and in the same order of operations.
pub fn cpu_pipeline(image: &[f32], w: usize, h: usize) -> CpuResult {
    // Clamp-to-edge reads, as in the kernels.
    let at = |buf: &[f32], x: usize, y: usize, dx: isize, dy: isize| -> f32 {
        let cx = (x as isize + dx).clamp(0, w as isize - 1) as usize;
        let cy = (y as isize + dy).clamp(0, h as isize - 1) as usize;
        buf[cy * w + cx]
    };
    let blur = |src: &[f32], horizontal: bool| -> Vec<f32> {
        let mut out = vec![0.0; w * h];
        for y in 0..h {
            for x in 0..w {
                let tap = |d: isize| {
                    if horizontal {
                        at(src, x, y, d, 0)
                    } else {
                        at(src, x, y, 0, d)
                    }
                };
                out[y * w + x] =
                    0.0625 * (tap(-2) + tap(2)) + 0.25 * (tap(-1) + tap(1)) + 0.375 * tap(0);
            }
        }
        out
    };
    let blurred = blur(&blur(image, true), false);
    let mut gradient = vec![0.0; w * h];
    for y in 0..h {
        for x in 0..w {
            let p = |dx, dy| at(&blurred, x, y, dx, dy);
            let gx = (p(1, -1) + 2.0 * p(1, 0) + p(1, 1)) - (p(-1, -1) + 2.0 * p(-1, 0) + p(-1, 1));
            let gy = (p(-1, 1) + 2.0 * p(0, 1) + p(1, 1)) - (p(-1, -1) + 2.0 * p(0, -1) + p(1, -1));
            gradient[y * w + x] = (gx * gx + gy * gy).sqrt();
        }
    }
    CpuResult { blurred, gradient }
}
