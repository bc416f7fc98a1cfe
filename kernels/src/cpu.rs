//! CPU references for the library kernels, element for element what the WGSL computes.

pub fn fill(output: &mut [f32], value: f32) {
    output.fill(value);
}

pub fn copy(input: &[f32], output: &mut [f32]) {
    let n = input.len().min(output.len());
    output[..n].copy_from_slice(&input[..n]);
}

pub fn scale(data: &mut [f32], alpha: f32) {
    data.iter_mut().for_each(|v| *v *= alpha);
}

pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    y.iter_mut().zip(x).for_each(|(y, x)| *y += a * x);
}

pub fn threshold(input: &[f32], output: &mut [f32], level: f32) {
    output
        .iter_mut()
        .zip(input)
        .for_each(|(o, &i)| *o = if i > level { 1.0 } else { 0.0 });
}

/// `input` is `rows x cols`, row-major; `output` is its transpose, `cols x rows`.
pub fn transpose(input: &[f32], output: &mut [f32], rows: usize, cols: usize) {
    for r in 0..rows {
        for c in 0..cols {
            output[c * rows + r] = input[r * cols + c];
        }
    }
}

/// Pixel `(x, y)` of a `width x height` image, coordinates clamped to the edges.
fn pixel(image: &[f32], width: usize, height: usize, x: i64, y: i64) -> f32 {
    let cx = x.clamp(0, width as i64 - 1) as usize;
    let cy = y.clamp(0, height as i64 - 1) as usize;
    image[cy * width + cx]
}

pub fn sobel(input: &[f32], output: &mut [f32], width: usize, height: usize) {
    gradient(input, output, (width, height), (1.0, 2.0));
}

pub fn scharr(input: &[f32], output: &mut [f32], width: usize, height: usize) {
    gradient(input, output, (width, height), (3.0, 10.0));
}

/// The gradient magnitude with 3 x 3 derivative kernels of outer weight `side` and centre weight `centre`.
fn gradient(
    input: &[f32],
    output: &mut [f32],
    (width, height): (usize, usize),
    (side, centre): (f32, f32),
) {
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            let p = |dx: i64, dy: i64| pixel(input, width, height, x + dx, y + dy);
            let gx = (side * p(1, -1) + centre * p(1, 0) + side * p(1, 1))
                - (side * p(-1, -1) + centre * p(-1, 0) + side * p(-1, 1));
            let gy = (side * p(-1, 1) + centre * p(0, 1) + side * p(1, 1))
                - (side * p(-1, -1) + centre * p(0, -1) + side * p(1, -1));
            output[y as usize * width + x as usize] = (gx * gx + gy * gy).sqrt();
        }
    }
}

/// `weights` is `(2 radius + 1)^2`, row-major, applied as written.
pub fn conv2d(
    input: &[f32],
    weights: &[f32],
    output: &mut [f32],
    (width, height): (usize, usize),
    radius: usize,
) {
    let (r, side) = (radius as i64, 2 * radius + 1);
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            let mut sum = 0.0;
            for dy in -r..=r {
                for dx in -r..=r {
                    let w = weights[(dy + r) as usize * side + (dx + r) as usize];
                    sum += w * pixel(input, width, height, x + dx, y + dy);
                }
            }
            output[y as usize * width + x as usize] = sum;
        }
    }
}

/// One Gaussian pass along rows (`along_rows`) or columns, weights normalised to sum to 1.
pub fn blur(
    input: &[f32],
    output: &mut [f32],
    (width, height): (usize, usize),
    (radius, sigma): (usize, f32),
    along_rows: bool,
) {
    let r = radius as i64;
    let s = sigma.max(1e-6);
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            let (mut sum, mut total) = (0.0f32, 0.0f32);
            for d in -r..=r {
                let w = (-((d * d) as f32) / (2.0 * s * s)).exp();
                let (px, py) = if along_rows { (x + d, y) } else { (x, y + d) };
                sum += w * pixel(input, width, height, px, py);
                total += w;
            }
            output[y as usize * width + x as usize] = sum / total;
        }
    }
}

/// Softmax of each row of `cols` elements (the last row may be shorter), the row's maximum subtracted first.
pub fn softmax_rows(input: &[f32], output: &mut [f32], cols: usize) {
    for (row_in, row_out) in input.chunks(cols).zip(output.chunks_mut(cols)) {
        let top = row_in.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let total: f32 = row_in.iter().map(|v| (v - top).exp()).sum();
        for (o, v) in row_out.iter_mut().zip(row_in) {
            *o = (v - top).exp() / total;
        }
    }
}

/// `c (m x n) = a (m x k) * b (k x n)`, row-major, each sum in increasing `k` as the GPU adds it.
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], (m, n, k): (usize, usize, usize)) {
    for row in 0..m {
        for col in 0..n {
            let mut sum = 0.0f32;
            for j in 0..k {
                sum += a[row * k + j] * b[j * n + col];
            }
            c[row * n + col] = sum;
        }
    }
}

/// Adds to `bins[b]` the number of `input` elements in bin `b` of `[lo, hi)`, split evenly; others are not
/// counted.
pub fn histogram(input: &[f32], bins: &mut [u32], lo: f32, hi: f32) {
    let count = bins.len();
    // NaN bounds, or `hi <= lo`, count nothing, as in the WGSL.
    if count == 0 || hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return;
    }
    for &v in input {
        if v >= lo && v < hi {
            let b = (((v - lo) / (hi - lo) * count as f32) as usize).min(count - 1);
            bins[b] += 1;
        }
    }
}

/// The sum of `input`, added in `f64` (the GPU adds in `f32`, in another order).
pub fn reduce_sum(input: &[f32]) -> f64 {
    input.iter().map(|&v| f64::from(v)).sum()
}

pub fn reduce_min(input: &[f32]) -> f32 {
    input.iter().copied().fold(f32::INFINITY, f32::min)
}

pub fn reduce_max(input: &[f32]) -> f32 {
    input.iter().copied().fold(f32::NEG_INFINITY, f32::max)
}

/// `output[i] = input[0] + .. + input[i]` (`inclusive`) or `.. + input[i - 1]`, added in `f64`.
pub fn scan(input: &[f32], inclusive: bool) -> Vec<f64> {
    let mut sum = 0.0;
    input
        .iter()
        .map(|&v| {
            let before = sum;
            sum += f64::from(v);
            if inclusive { sum } else { before }
        })
        .collect()
}
