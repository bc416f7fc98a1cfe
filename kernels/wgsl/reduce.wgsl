// One step of a reduction: workgroup w combines a strided share of input into output[w]. Preceded by
// `fn combine(a: f32, b: f32) -> f32` and `const IDENTITY: f32` (sum, min or max). Every invocation strides over
// input by the whole dispatch, so any number of workgroups covers any length; a second step with one
// workgroup over the first's outputs finishes the reduction (the library subgraphs `reduce::sum`, ..).
var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let n = arrayLength(&input);
    let stride = groups.x * 256u;
    // Four loads in flight per invocation, into four partial results: one load at a time would leave the
    // memory waiting on each load's latency.
    var a0 = IDENTITY;
    var a1 = IDENTITY;
    var a2 = IDENTITY;
    var a3 = IDENTITY;
    var i = wid.x * 256u + lid.x;
    for (; i + 3u * stride < n; i += 4u * stride) {
        a0 = combine(a0, input[i]);
        a1 = combine(a1, input[i + stride]);
        a2 = combine(a2, input[i + 2u * stride]);
        a3 = combine(a3, input[i + 3u * stride]);
    }
    for (; i < n; i += stride) {
        a0 = combine(a0, input[i]);
    }
    partial[lid.x] = combine(combine(a0, a1), combine(a2, a3));
    workgroupBarrier();
    for (var half = 128u; half > 0u; half = half / 2u) {
        if (lid.x < half) {
            partial[lid.x] = combine(partial[lid.x], partial[lid.x + half]);
        }
        workgroupBarrier();
    }
    if (lid.x == 0u && wid.x < arrayLength(&output)) {
        output[wid.x] = partial[0];
    }
}
