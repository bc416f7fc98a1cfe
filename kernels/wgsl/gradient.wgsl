// output = the gradient magnitude of a width x height image (row-major), edges clamped, each invocation
// striding over the pixels (any dispatch covers the image), with 3 x 3 derivative kernels whose outer and centre weights the library prepends as `const SIDE`
// and `const CENTRE`: 1 and 2 for Sobel, 3 and 10 for Scharr.
fn pixel(x: i32, y: i32) -> f32 {
    let cx = u32(clamp(x, 0, i32(width()) - 1));
    let cy = u32(clamp(y, 0, i32(height()) - 1));
    return input[cy * width() + cx];
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = min(width() * height(), min(arrayLength(&input), arrayLength(&output)));
    // Pixels a grid apart (the default dispatch gives each invocation 4): more loads in flight per invocation.
    for (var i = gid.x + gid.y * groups.x * 256u; i < n; i += groups.x * groups.y * 256u) {
        let x = i32(i % width());
        let y = i32(i / width());
        let gx = (SIDE * pixel(x + 1, y - 1) + CENTRE * pixel(x + 1, y) + SIDE * pixel(x + 1, y + 1))
               - (SIDE * pixel(x - 1, y - 1) + CENTRE * pixel(x - 1, y) + SIDE * pixel(x - 1, y + 1));
        let gy = (SIDE * pixel(x - 1, y + 1) + CENTRE * pixel(x, y + 1) + SIDE * pixel(x + 1, y + 1))
               - (SIDE * pixel(x - 1, y - 1) + CENTRE * pixel(x, y - 1) + SIDE * pixel(x + 1, y - 1));
        output[i] = sqrt(gx * gx + gy * gy);
    }
}
