// One pass of a separable Gaussian blur of a width x height image (row-major), edges clamped: weights
// exp(-d^2 / (2 sigma^2)) for d in -radius..=radius, normalised to sum to 1. The library prepends
// `const ALONG_ROWS: bool` (true for `blur_h`, false for `blur_v`); run blur_h then blur_v.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    let n = width() * height();
    if (i < min(n, min(arrayLength(&input), arrayLength(&output)))) {
        let x = i32(i % width());
        let y = i32(i / width());
        let r = i32(radius());
        let s = max(sigma(), 1e-6);
        var sum = 0.0;
        var total = 0.0;
        for (var d = -r; d <= r; d++) {
            let w = exp(-f32(d * d) / (2.0 * s * s));
            let px = u32(clamp(x + select(0, d, ALONG_ROWS), 0, i32(width()) - 1));
            let py = u32(clamp(y + select(d, 0, ALONG_ROWS), 0, i32(height()) - 1));
            sum += w * input[py * width() + px];
            total += w;
        }
        output[i] = sum / total;
    }
}
