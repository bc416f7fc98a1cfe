// The second pass of a scan, one workgroup: sums (its first 4096 elements) replaced by their exclusive
// prefix sums, each chunk's offset. Each invocation adds up 16 neighbouring sums, the workgroup scans those
// 256 totals, and each invocation writes its 16 offsets on from its total's prefix.
const PER_INVOCATION: u32 = 16u;
var<workgroup> prefix: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let count = min(arrayLength(&sums), 256u * PER_INVOCATION);
    let first = lid.x * PER_INVOCATION;
    var own = 0.0;
    for (var k = 0u; k < PER_INVOCATION; k++) {
        if (first + k < count) {
            own += sums[first + k];
        }
    }
    prefix[lid.x] = own;
    workgroupBarrier();
    // Hillis-Steele: after the step of `offset`, prefix[i] sums the 2 * offset totals ending at i.
    for (var offset = 1u; offset < 256u; offset = offset * 2u) {
        var add = 0.0;
        if (lid.x >= offset) {
            add = prefix[lid.x - offset];
        }
        workgroupBarrier();
        prefix[lid.x] += add;
        workgroupBarrier();
    }
    var running = prefix[lid.x] - own;
    for (var k = 0u; k < PER_INVOCATION; k++) {
        if (first + k < count) {
            let sum = sums[first + k];
            sums[first + k] = running;
            running += sum;
        }
    }
}
