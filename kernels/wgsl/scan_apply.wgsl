// The last pass of a scan: each workgroup scans its chunk (as the first pass split input) in tiles of 2048,
// starting from its chunk's offset. A tile is 8 rows of 256 elements. Invocation i loads element i of each
// row (neighbouring invocations touch neighbouring elements) and stages it in workgroup memory; then each
// invocation scans its share, 8 neighbouring elements, in registers; the workgroup scans the 256 shares'
// totals; each element's prefix goes back through workgroup memory to the invocation that loaded it, which
// stores it. Preceded by `const INCLUSIVE: bool`.
//
// On the H100, 16M elements: 53 us. Before, the tile was 4 rows scanned at once as one vec4 per invocation,
// Hillis-Steele over 256 vec4s (eight times the input's bytes through workgroup memory): 86-87 us. Shares of
// 4 or 16 elements took 61 and 72 us; the 256 totals added up in blocks by loops, not by Hillis-Steele, 86-125.
const TILE: u32 = 2048u;
// The tile, with a padding word after every 32: invocation i's 8 neighbouring words, and the 256 words of a
// row, fall in different banks.
var<workgroup> staged: array<f32, 2112>;
var<workgroup> totals: array<f32, 256>;

fn at(i: u32) -> u32 {
    return i + (i >> 5u);
}

fn load(i: u32, end: u32) -> f32 {
    if (i < end) {
        return input[i];
    }
    return 0.0;
}

fn store(i: u32, end: u32, value: f32) {
    if (i < end && i < arrayLength(&output)) {
        output[i] = value;
    }
}

// Element `row * 256 + lid` of the tile at `base`: its scanned value from `staged` (the tile's own prefix),
// after the chunk's `carry`; `loaded` is the element itself, taken off for an exclusive scan.
fn put(base: u32, row: u32, lid: u32, end: u32, carry: f32, loaded: f32) {
    let scanned = staged[at(row * 256u + lid)];
    store(base + row * 256u + lid, end, carry + select(scanned - loaded, scanned, INCLUSIVE));
}

// One Hillis-Steele step over the shares' totals: afterwards totals[i] sums the 2 * offset totals ending at
// i. Called once per offset, not from a loop (which naga bounds with a counter of its own): about 1 us less.
fn hillis_steele_step(lid: u32, offset: u32) {
    var add = 0.0;
    if (lid >= offset) {
        add = totals[lid - offset];
    }
    workgroupBarrier();
    totals[lid] += add;
    workgroupBarrier();
}

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_id) lid3: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let lid = lid3.x;
    let n = arrayLength(&input);
    let chunk = (n + groups.x - 1u) / groups.x;
    let start = wid.x * chunk;
    let end = min(start + chunk, n);
    var carry = 0.0;
    if (wid.x < arrayLength(&offsets)) {
        carry = offsets[wid.x];
    }
    let share = lid * 8u;
    for (var base = start; base < end; base += TILE) {
        // Eight loads in flight, written out: a private array indexed by a loop's counter is slower.
        let rows_lo = vec4<f32>(
            load(base + lid, end),
            load(base + 256u + lid, end),
            load(base + 512u + lid, end),
            load(base + 768u + lid, end),
        );
        let rows_hi = vec4<f32>(
            load(base + 1024u + lid, end),
            load(base + 1280u + lid, end),
            load(base + 1536u + lid, end),
            load(base + 1792u + lid, end),
        );
        staged[at(lid)] = rows_lo.x;
        staged[at(256u + lid)] = rows_lo.y;
        staged[at(512u + lid)] = rows_lo.z;
        staged[at(768u + lid)] = rows_lo.w;
        staged[at(1024u + lid)] = rows_hi.x;
        staged[at(1280u + lid)] = rows_hi.y;
        staged[at(1536u + lid)] = rows_hi.z;
        staged[at(1792u + lid)] = rows_hi.w;
        workgroupBarrier();
        // This invocation's share, scanned in order.
        var lo = vec4<f32>(staged[at(share)], staged[at(share + 1u)], staged[at(share + 2u)], staged[at(share + 3u)]);
        var hi = vec4<f32>(staged[at(share + 4u)], staged[at(share + 5u)], staged[at(share + 6u)], staged[at(share + 7u)]);
        lo.y += lo.x;
        lo.z += lo.y;
        lo.w += lo.z;
        hi.x += lo.w;
        hi.y += hi.x;
        hi.z += hi.y;
        hi.w += hi.z;
        let own = hi.w;
        totals[lid] = own;
        workgroupBarrier();
        hillis_steele_step(lid, 1u);
        hillis_steele_step(lid, 2u);
        hillis_steele_step(lid, 4u);
        hillis_steele_step(lid, 8u);
        hillis_steele_step(lid, 16u);
        hillis_steele_step(lid, 32u);
        hillis_steele_step(lid, 64u);
        hillis_steele_step(lid, 128u);
        // The shares before this one, small beside the carry: added to the element first and the carry last,
        // so that the element's own digits are not lost to the carry's size.
        let before = totals[lid] - own;
        let tile = totals[255];
        staged[at(share)] = before + lo.x;
        staged[at(share + 1u)] = before + lo.y;
        staged[at(share + 2u)] = before + lo.z;
        staged[at(share + 3u)] = before + lo.w;
        staged[at(share + 4u)] = before + hi.x;
        staged[at(share + 5u)] = before + hi.y;
        staged[at(share + 6u)] = before + hi.z;
        staged[at(share + 7u)] = before + hi.w;
        workgroupBarrier();
        put(base, 0u, lid, end, carry, rows_lo.x);
        put(base, 1u, lid, end, carry, rows_lo.y);
        put(base, 2u, lid, end, carry, rows_lo.z);
        put(base, 3u, lid, end, carry, rows_lo.w);
        put(base, 4u, lid, end, carry, rows_hi.x);
        put(base, 5u, lid, end, carry, rows_hi.y);
        put(base, 6u, lid, end, carry, rows_hi.z);
        put(base, 7u, lid, end, carry, rows_hi.w);
        carry += tile;
        // The next tile overwrites `staged` and `totals`.
        workgroupBarrier();
    }
}
