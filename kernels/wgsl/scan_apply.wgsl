// The last pass of a scan: each workgroup scans its chunk (as the first pass split input) in tiles of 1024,
// starting from its chunk's offset. A tile is 4 rows of 256 elements: invocation i loads and stores element
// i of each row (neighbouring invocations touch neighbouring elements), the workgroup scans the 4 rows at
// once, as one vec4 per invocation, and element i of row q is the offset, the rows before q and the scanned
// row up to i. Preceded by `const INCLUSIVE: bool`.
//
// On the H100, 16M elements: 104 us with each invocation scanning 4 neighbouring elements, 86-87 so. The rows
// are stored one by one, written out: the same code storing them in a loop, indexing the vec4 by the loop's
// counter, took 99-100.
const TILE: u32 = 1024u;
var<workgroup> totals: array<vec4<f32>, 256>;

// Element `lid` of each row of the tile at `base`, zero past `end`.
fn load_rows(base: u32, end: u32, lid: u32) -> vec4<f32> {
    var rows = vec4<f32>();
    for (var q = 0u; q < 4u; q++) {
        let i = base + q * 256u + lid;
        if (i < end) {
            rows[q] = input[i];
        }
    }
    return rows;
}

fn store(i: u32, end: u32, value: f32) {
    if (i < end && i < arrayLength(&output)) {
        output[i] = value;
    }
}

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
    for (var base = start; base < end; base += TILE) {
        let own = load_rows(base, end, lid.x);
        totals[lid.x] = own;
        workgroupBarrier();
        // Hillis-Steele: after the step of `offset`, totals[i] sums the 2 * offset elements of each row ending
        // at i.
        for (var offset = 1u; offset < 256u; offset = offset * 2u) {
            var add = vec4<f32>();
            if (lid.x >= offset) {
                add = totals[lid.x - offset];
            }
            workgroupBarrier();
            totals[lid.x] += add;
            workgroupBarrier();
        }
        let rows = totals[255];
        let scanned = select(totals[lid.x] - own, totals[lid.x], INCLUSIVE);
        // The rows before each row, small beside the carry: added to the element first and the carry last, so
        // that the element's own digits are not lost to the carry's size.
        let before = vec4<f32>(0.0, rows.x, rows.x + rows.y, rows.x + rows.y + rows.z);
        let at = base + lid.x;
        store(at, end, carry + (before.x + scanned.x));
        store(at + 256u, end, carry + (before.y + scanned.y));
        store(at + 512u, end, carry + (before.z + scanned.z));
        store(at + 768u, end, carry + (before.w + scanned.w));
        carry += before.w + rows.w;
        workgroupBarrier();
    }
}
