// The last pass of a scan: each workgroup scans its chunk (as the first pass split input) in tiles of 1024,
// starting from its chunk's offset. Each invocation scans 4 neighbouring elements of a tile in turn, the
// workgroup scans those 256 totals, and each invocation adds the total before its own: a quarter of the
// barriers of one element per invocation. Preceded by `const INCLUSIVE: bool`.
const PER_INVOCATION: u32 = 4u;
var<workgroup> totals: array<f32, 256>;

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
    var carry = 0.0;
    if (wid.x < arrayLength(&offsets)) {
        carry = offsets[wid.x];
    }
    for (var base = start; base < end; base += 256u * PER_INVOCATION) {
        let first = base + lid.x * PER_INVOCATION;
        // This invocation's elements, and the sums within them: before[k] of those before element k.
        var own = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
        var before = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
        var sum = 0.0;
        for (var k = 0u; k < PER_INVOCATION; k++) {
            if (first + k < end) {
                own[k] = input[first + k];
            }
            before[k] = sum;
            sum += own[k];
        }
        totals[lid.x] = sum;
        workgroupBarrier();
        // Hillis-Steele: after the step of `offset`, totals[i] sums the 2 * offset totals ending at i.
        for (var offset = 1u; offset < 256u; offset = offset * 2u) {
            var add = 0.0;
            if (lid.x >= offset) {
                add = totals[lid.x - offset];
            }
            workgroupBarrier();
            totals[lid.x] += add;
            workgroupBarrier();
        }
        // What the invocations before this one hold: the inclusive total one place back.
        let prefix = carry + select(0.0, totals[max(lid.x, 1u) - 1u], lid.x > 0u);
        for (var k = 0u; k < PER_INVOCATION; k++) {
            let i = first + k;
            if (i < end && i < arrayLength(&output)) {
                output[i] = prefix + select(before[k], before[k] + own[k], INCLUSIVE);
            }
        }
        carry += totals[255];
        workgroupBarrier();
    }
}
