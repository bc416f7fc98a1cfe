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
