// output = input (width x height, row-major) convolved with weights ((2 radius + 1)^2, row-major, applied as
// written: output[y][x] = sum weights[dy + r][dx + r] * input[y + dy][x + dx]), edges clamped. Each invocation
// strides over the pixels, so any dispatch covers the image.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = min(width() * height(), min(arrayLength(&input), arrayLength(&output)));
    let r = i32(radius());
    let side = 2u * radius() + 1u;
    if (side * side > arrayLength(&weights)) {
        return;
    }
    // Pixels a grid apart (the default dispatch gives each invocation 4): more loads in flight per invocation.
    for (var i = gid.x + gid.y * groups.x * 256u; i < n; i += groups.x * groups.y * 256u) {
        let x = i32(i % width());
        let y = i32(i / width());
        var sum = 0.0;
        for (var dy = -r; dy <= r; dy++) {
            for (var dx = -r; dx <= r; dx++) {
                let cx = u32(clamp(x + dx, 0, i32(width()) - 1));
                let cy = u32(clamp(y + dy, 0, i32(height()) - 1));
                sum += weights[u32(dy + r) * side + u32(dx + r)] * input[cy * width() + cx];
            }
        }
        output[i] = sum;
    }
}
