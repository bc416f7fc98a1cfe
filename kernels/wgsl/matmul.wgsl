// c (m x n) = a (m x k) * b (k x n), all row-major, in 8 x 8 tiles staged through workgroup memory. Each
// workgroup of 64 computes one tile of c at a time and strides over the tiles, so any dispatch of at least
// one workgroup computes all of c (one invocation per element of c, the default, gives about one tile per
// workgroup).
var<workgroup> tile_a: array<f32, 64>;
var<workgroup> tile_b: array<f32, 64>;

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tiles_x = (n() + 7u) / 8u;
    let tiles = tiles_x * ((m() + 7u) / 8u);
    let lx = lid % 8u;
    let ly = lid / 8u;
    for (var t = wg.x + wg.y * groups.x; t < tiles; t += groups.x * groups.y) {
        let row = (t / tiles_x) * 8u + ly;
        let col = (t % tiles_x) * 8u + lx;
        var sum = 0.0;
        for (var k0 = 0u; k0 < k(); k0 += 8u) {
            // This invocation stages a[row][k0 + lx] and b[k0 + ly][col], zero outside the matrices.
            var va = 0.0;
            if (row < m() && k0 + lx < k()) {
                va = a[row * k() + k0 + lx];
            }
            var vb = 0.0;
            if (k0 + ly < k() && col < n()) {
                vb = b[(k0 + ly) * n() + col];
            }
            tile_a[lid] = va;
            tile_b[lid] = vb;
            workgroupBarrier();
            for (var j = 0u; j < 8u; j++) {
                sum += tile_a[ly * 8u + j] * tile_b[j * 8u + lx];
            }
            workgroupBarrier();
        }
        if (row < m() && col < n() && row * n() + col < arrayLength(&c)) {
            c[row * n() + col] = sum;
        }
    }
}
