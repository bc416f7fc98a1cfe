// The second pass of a scan, one workgroup: sums (the first 256 elements) replaced by their exclusive prefix
// sums, each chunk's offset.
var<workgroup> prefix: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let count = min(arrayLength(&sums), 256u);
    var own = 0.0;
    if (lid.x < count) {
        own = sums[lid.x];
    }
    prefix[lid.x] = own;
    workgroupBarrier();
    // Hillis-Steele: after the step of `offset`, prefix[i] sums the 2 * offset elements ending at i.
    for (var offset = 1u; offset < 256u; offset = offset * 2u) {
        var add = 0.0;
        if (lid.x >= offset) {
            add = prefix[lid.x - offset];
        }
        workgroupBarrier();
        prefix[lid.x] += add;
        workgroupBarrier();
    }
    if (lid.x < count) {
        sums[lid.x] = prefix[lid.x] - own;
    }
}
