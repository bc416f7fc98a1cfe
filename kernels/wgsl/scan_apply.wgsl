// The last pass of a scan: each workgroup scans its chunk (as the first pass split input) in tiles of 256,
// starting from its chunk's offset. Preceded by `const INCLUSIVE: bool`.
var<workgroup> tile: array<f32, 256>;

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
    for (var base = start; base < end; base += 256u) {
        let i = base + lid.x;
        var own = 0.0;
        if (i < end) {
            own = input[i];
        }
        tile[lid.x] = own;
        workgroupBarrier();
        for (var offset = 1u; offset < 256u; offset = offset * 2u) {
            var add = 0.0;
            if (lid.x >= offset) {
                add = tile[lid.x - offset];
            }
            workgroupBarrier();
            tile[lid.x] += add;
            workgroupBarrier();
        }
        if (i < end && i < arrayLength(&output)) {
            // Exclusive: the inclusive prefix one place back, so both sum in the same order.
            let before = select(0.0, tile[max(lid.x, 1u) - 1u], lid.x > 0u);
            output[i] = carry + select(before, tile[lid.x], INCLUSIVE);
        }
        carry += tile[255];
        workgroupBarrier();
    }
}
