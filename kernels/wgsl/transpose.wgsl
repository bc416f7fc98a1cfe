// output (cols x rows) = the transpose of input (rows x cols), both row-major, in 32 x 32 tiles staged
// through workgroup memory: a workgroup reads a tile's rows from input and writes its columns as rows of
// output, so that both its reads and its writes are of neighbouring elements. Each workgroup of 256 strides
// over the tiles, so any dispatch of at least one workgroup transposes the whole matrix (the default, one
// invocation per 4 elements, gives about one tile per workgroup). Elements past either buffer's end are
// neither read nor written.
var<workgroup> tile: array<f32, 1056>; // 32 rows of 33: the padding keeps a column's 32 reads on 32 banks

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tiles_x = (cols() + 31u) / 32u;
    let tiles = tiles_x * ((rows() + 31u) / 32u);
    let lx = lid % 32u;
    let ly = lid / 32u;
    for (var t = wg.x + wg.y * groups.x; t < tiles; t += groups.x * groups.y) {
        let r0 = (t / tiles_x) * 32u;
        let c0 = (t % tiles_x) * 32u;
        // Input rows r0 + ly, r0 + ly + 8, ..: each a run of 32 neighbours.
        for (var k = 0u; k < 32u; k += 8u) {
            let r = r0 + ly + k;
            let c = c0 + lx;
            let at = r * cols() + c;
            var v = 0.0;
            if (r < rows() && c < cols() && at < arrayLength(&input)) {
                v = input[at];
            }
            tile[(ly + k) * 33u + lx] = v;
        }
        workgroupBarrier();
        // Output row c0 + ly + k is input column c0 + ly + k, from row r0 on: the tile's column ly + k.
        for (var k = 0u; k < 32u; k += 8u) {
            let r = c0 + ly + k;
            let c = r0 + lx;
            let at = r * rows() + c;
            if (r < cols() && c < rows() && at < arrayLength(&output)) {
                output[at] = tile[lx * 33u + ly + k];
            }
        }
        workgroupBarrier();
    }
}
