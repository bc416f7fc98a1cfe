// The first pass of a scan: input split into one contiguous chunk per workgroup (ceil(n / workgroups)
// elements each), output[w] = the sum of chunk w. Each invocation keeps eight sums, so that eight loads are in
// flight (one sum: 48.9 us for 16M elements on the H100; four: 36.1-36.8; eight: 34.3-34.9; sixteen: 34.8-35.3).
var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let n = arrayLength(&input);
    let chunk = (n + groups.x - 1u) / groups.x;
    let start = wid.x * chunk;
    let end = min(start + chunk, n);
    var lo = vec4<f32>();
    var hi = vec4<f32>();
    var i = start + lid.x;
    for (; i + 1792u < end; i += 2048u) {
        lo += vec4<f32>(input[i], input[i + 256u], input[i + 512u], input[i + 768u]);
        hi += vec4<f32>(input[i + 1024u], input[i + 1280u], input[i + 1536u], input[i + 1792u]);
    }
    for (; i < end; i += 256u) {
        lo.x += input[i];
    }
    let sums = lo + hi;
    partial[lid.x] = (sums.x + sums.y) + (sums.z + sums.w);
    workgroupBarrier();
    for (var half = 128u; half > 0u; half = half / 2u) {
        if (lid.x < half) {
            partial[lid.x] += partial[lid.x + half];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u && wid.x < arrayLength(&output)) {
        output[wid.x] = partial[0];
    }
}
