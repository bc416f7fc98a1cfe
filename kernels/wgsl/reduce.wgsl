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
    var acc = IDENTITY;
    for (var i = wid.x * 256u + lid.x; i < n; i += groups.x * 256u) {
        acc = combine(acc, input[i]);
    }
    partial[lid.x] = acc;
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
