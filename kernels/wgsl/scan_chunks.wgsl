// The first pass of a scan: input split into one contiguous chunk per workgroup (ceil(n / workgroups)
// elements each), output[w] = the sum of chunk w. Each invocation keeps four sums, so that four loads are in
// flight (one sum: 48.9 us for 16M elements on the H100; four: 36.1).
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
    var sums = vec4<f32>();
    var i = start + lid.x;
    for (; i + 768u < end; i += 1024u) {
        sums += vec4<f32>(input[i], input[i + 256u], input[i + 512u], input[i + 768u]);
    }
    for (; i < end; i += 256u) {
        sums.x += input[i];
    }
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
