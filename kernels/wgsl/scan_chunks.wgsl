// The first pass of a scan: input split into one contiguous chunk per workgroup (ceil(n / workgroups)
// elements each), output[w] = the sum of chunk w.
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
    var acc = 0.0;
    for (var i = start + lid.x; i < end; i += 256u) {
        acc += input[i];
    }
    partial[lid.x] = acc;
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
