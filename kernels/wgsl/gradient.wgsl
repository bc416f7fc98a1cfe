// output = the gradient magnitude of a width x height image (row-major), edges clamped, one pixel per
// invocation (bake gives a large image several per invocation, and fuses it with neighbourhood kernels
// before it: `GridShape`), with 3 x 3 derivative kernels whose outer and centre weights the library prepends
// as `const SIDE` and `const CENTRE`: 1 and 2 for Sobel, 3 and 10 for Scharr.
fn pixel(x: i32, y: i32) -> f32 {
    let cx = u32(clamp(x, 0, i32(width()) - 1));
    let cy = u32(clamp(y, 0, i32(height()) - 1));
    return input[cy * width() + cx];
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    let n = min(width() * height(), min(arrayLength(&input), arrayLength(&output)));
    if (i >= n) {
        return;
    }
    let x = i32(i % width());
    let y = i32(i / width());
    let gx = (SIDE * pixel(x + 1, y - 1) + CENTRE * pixel(x + 1, y) + SIDE * pixel(x + 1, y + 1))
           - (SIDE * pixel(x - 1, y - 1) + CENTRE * pixel(x - 1, y) + SIDE * pixel(x - 1, y + 1));
    let gy = (SIDE * pixel(x - 1, y + 1) + CENTRE * pixel(x, y + 1) + SIDE * pixel(x + 1, y + 1))
           - (SIDE * pixel(x - 1, y - 1) + CENTRE * pixel(x, y - 1) + SIDE * pixel(x + 1, y - 1));
    output[i] = sqrt(gx * gx + gy * gy);
}
