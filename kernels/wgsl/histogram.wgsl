// bins[b] += how many elements of input fall in bin b, the bins splitting [lo, hi) evenly; elements outside
// [lo, hi) are not counted. The bins are atomics, so invocations add concurrently; zero them first (a fill).
// Each invocation strides over input, so any dispatch counts every element.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let count = arrayLength(&bins);
    let n = arrayLength(&input);
    let stride = groups.x * groups.y * 64u;
    if (count == 0u || !(hi() > lo())) {
        return;
    }
    for (var i = gid.x + gid.y * groups.x * 64u; i < n; i += stride) {
        let v = input[i];
        if (v >= lo() && v < hi()) {
            let b = min(u32((v - lo()) / (hi() - lo()) * f32(count)), count - 1u);
            atomicAdd(&bins[b], 1u);
        }
    }
}
