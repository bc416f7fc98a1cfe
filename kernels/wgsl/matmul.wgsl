// c (m x n) = a (m x k) * b (k x n), all row-major, in 64 x 64 tiles of c. A workgroup of 256 stages 64 x 16
// of a and 16 x 64 of b in workgroup memory at a time, and each invocation adds up a 4 x 4 block of the
// tile in registers: 16 products for 8 reads of workgroup memory, where one element per invocation read 2
// per product. Each workgroup strides over the tiles, so any dispatch of at least one workgroup computes all
// of c (the default, one invocation per 16 elements of c, gives about one tile per workgroup). Each element
// adds its products in increasing k.
var<workgroup> tile_a: array<f32, 1024>; // 64 rows of 16
var<workgroup> tile_b: array<f32, 1024>; // 16 rows of 64

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tiles_x = (n() + 63u) / 64u;
    let tiles = tiles_x * ((m() + 63u) / 64u);
    // This invocation's block: rows ty, ty + 16, ty + 32, ty + 48 and the same columns from tx.
    let tx = lid % 16u;
    let ty = lid / 16u;
    for (var t = wg.x + wg.y * groups.x; t < tiles; t += groups.x * groups.y) {
        let row0 = (t / tiles_x) * 64u;
        let col0 = (t % tiles_x) * 64u;
        // accY: the block's row ty + 16 Y, at its columns tx, tx + 16, tx + 32 and tx + 48.
        var acc0 = vec4<f32>();
        var acc1 = vec4<f32>();
        var acc2 = vec4<f32>();
        var acc3 = vec4<f32>();
        for (var k0 = 0u; k0 < k(); k0 += 16u) {
            // Each invocation stages 4 elements of each tile, zero outside the matrices.
            for (var e = 0u; e < 4u; e++) {
                let s = lid + e * 256u;
                let ar = row0 + s / 16u;
                let ak = k0 + s % 16u;
                var va = 0.0;
                if (ar < m() && ak < k()) {
                    va = a[ar * k() + ak];
                }
                tile_a[s] = va;
                let bk = k0 + s / 64u;
                let bc = col0 + s % 64u;
                var vb = 0.0;
                if (bk < k() && bc < n()) {
                    vb = b[bk * n() + bc];
                }
                tile_b[s] = vb;
            }
            workgroupBarrier();
            for (var j = 0u; j < 16u; j++) {
                let at = j * 64u + tx;
                let bv = vec4<f32>(tile_b[at], tile_b[at + 16u], tile_b[at + 32u], tile_b[at + 48u]);
                acc0 += tile_a[ty * 16u + j] * bv;
                acc1 += tile_a[(ty + 16u) * 16u + j] * bv;
                acc2 += tile_a[(ty + 32u) * 16u + j] * bv;
                acc3 += tile_a[(ty + 48u) * 16u + j] * bv;
            }
            workgroupBarrier();
        }
        store_row(row0 + ty, col0 + tx, acc0);
        store_row(row0 + ty + 16u, col0 + tx, acc1);
        store_row(row0 + ty + 32u, col0 + tx, acc2);
        store_row(row0 + ty + 48u, col0 + tx, acc3);
    }
}

// c[row][col + 16 x] = v[x], for each x whose element is in c.
fn store_row(row: u32, col: u32, v: vec4<f32>) {
    store(row, col, v.x);
    store(row, col + 16u, v.y);
    store(row, col + 32u, v.z);
    store(row, col + 48u, v.w);
}

fn store(row: u32, col: u32, v: f32) {
    if (row < m() && col < n() && row * n() + col < arrayLength(&c)) {
        c[row * n() + col] = v;
    }
}
