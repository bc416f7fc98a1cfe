// c (m x n) = a (m x k) * b (k x n), all row-major, in 128 x 128 tiles of c. Each invocation of a workgroup
// of 256 adds up an 8 x 8 block of its tile in registers (64 products for every 4 reads of workgroup memory),
// the rows ty * 4 .. + 4 and 64 + ty * 4 .. + 4 at the columns tx * 4 .. + 4 and 64 + tx * 4 .. + 4.
// The workgroup goes through k 8 at a time: 128 x 8 of a and 8 x 128 of b staged in workgroup memory, in two
// stages, so that it computes from one while the next is loaded into registers and stored into the other (one
// barrier per step). Each invocation loads 4 rows of a at one k and 4 columns of b at one k, which it stores
// as one vec4 each. Each workgroup strides over the tiles, so any dispatch of at least one workgroup computes
// all of c (the default, one invocation per 64 elements of c, gives one tile per workgroup). Each element adds
// its products in increasing k.
//
// On the H100 (4096^3) this took 3.5 ms, 39 TFLOPS (4.2 ms when the 8 k of a step were a loop); the 64 x 64
// tiles with 4 x 4 per invocation before it took 9.7 ms, and cuBLAS's FP32 product without TF32 2.68 ms
// (51.4 TFLOPS).
var<workgroup> tile_a: array<vec4<f32>, 512>; // two stages of [8 k][32 x 4 rows]
var<workgroup> tile_b: array<vec4<f32>, 512>; // two stages of [8 k][32 x 4 columns]

// The invocation's 8 x 8 block of c: rows 0-3 and 64-67 (from ty * 4) by columns 0-3 and 64-67 (from tx * 4).
var<private> c00: vec4<f32>;
var<private> c01: vec4<f32>;
var<private> c10: vec4<f32>;
var<private> c11: vec4<f32>;
var<private> c20: vec4<f32>;
var<private> c21: vec4<f32>;
var<private> c30: vec4<f32>;
var<private> c31: vec4<f32>;
var<private> c40: vec4<f32>;
var<private> c41: vec4<f32>;
var<private> c50: vec4<f32>;
var<private> c51: vec4<f32>;
var<private> c60: vec4<f32>;
var<private> c61: vec4<f32>;
var<private> c70: vec4<f32>;
var<private> c71: vec4<f32>;

// Adds the products of one k (row `at` of both tiles' stage) to the block. Called 8 times with constant rows
// rather than from a loop: as a loop (which naga also bounds with a counter of its own, for the driver to keep)
// it took 4.24 ms against 3.56 written out (H100, 4096^3, one build).
fn multiply(at: u32, tx: u32, ty: u32) {
    let a0 = tile_a[at + ty];
    let a1 = tile_a[at + 16u + ty];
    let b0 = tile_b[at + tx];
    let b1 = tile_b[at + 16u + tx];
    c00 += a0.x * b0;
    c01 += a0.x * b1;
    c10 += a0.y * b0;
    c11 += a0.y * b1;
    c20 += a0.z * b0;
    c21 += a0.z * b1;
    c30 += a0.w * b0;
    c31 += a0.w * b1;
    c40 += a1.x * b0;
    c41 += a1.x * b1;
    c50 += a1.y * b0;
    c51 += a1.y * b1;
    c60 += a1.z * b0;
    c61 += a1.z * b1;
    c70 += a1.w * b0;
    c71 += a1.w * b1;
}

fn load_a(row: u32, col: u32) -> f32 {
    if (row < m() && col < k()) {
        return a[row * k() + col];
    }
    return 0.0;
}

fn load_b(row: u32, col: u32) -> f32 {
    if (row < k() && col < n()) {
        return b[row * n() + col];
    }
    return 0.0;
}

// The 4 rows of a from `row` at `col`.
fn column_of_a(row: u32, col: u32) -> vec4<f32> {
    return vec4<f32>(load_a(row, col), load_a(row + 1u, col), load_a(row + 2u, col), load_a(row + 3u, col));
}

// The 4 columns of b from `col` at `row`.
fn row_of_b(row: u32, col: u32) -> vec4<f32> {
    return vec4<f32>(load_b(row, col), load_b(row, col + 1u), load_b(row, col + 2u), load_b(row, col + 3u));
}

fn store(row: u32, col: u32, v: f32) {
    if (row < m() && col < n() && row * n() + col < arrayLength(&c)) {
        c[row * n() + col] = v;
    }
}

// c[row][col .. col + 4] = v, each element that is in c.
fn store4(row: u32, col: u32, v: vec4<f32>) {
    store(row, col, v.x);
    store(row, col + 1u, v.y);
    store(row, col + 2u, v.z);
    store(row, col + 3u, v.w);
}

@compute @workgroup_size(256)
fn main(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tiles_x = (n() + 127u) / 128u;
    let tiles = tiles_x * ((m() + 127u) / 128u);
    let tx = lid % 16u;
    let ty = lid / 16u;
    // What this invocation stages: rows 4 (lid / 8) .. + 4 of a at k0 + lid % 8, and columns 4 (lid % 32) .. + 4
    // of b at k0 + lid / 32.
    let a_row = (lid / 8u) * 4u;
    let a_col = lid % 8u;
    let b_row = lid / 32u;
    let b_col = (lid % 32u) * 4u;
    for (var t = wg.x + wg.y * groups.x; t < tiles; t += groups.x * groups.y) {
        let row0 = (t / tiles_x) * 128u;
        let col0 = (t % tiles_x) * 128u;
        c00 = vec4<f32>();
        c01 = vec4<f32>();
        c10 = vec4<f32>();
        c11 = vec4<f32>();
        c20 = vec4<f32>();
        c21 = vec4<f32>();
        c30 = vec4<f32>();
        c31 = vec4<f32>();
        c40 = vec4<f32>();
        c41 = vec4<f32>();
        c50 = vec4<f32>();
        c51 = vec4<f32>();
        c60 = vec4<f32>();
        c61 = vec4<f32>();
        c70 = vec4<f32>();
        c71 = vec4<f32>();
        tile_a[a_col * 32u + a_row / 4u] = column_of_a(row0 + a_row, a_col);
        tile_b[b_row * 32u + b_col / 4u] = row_of_b(b_row, col0 + b_col);
        workgroupBarrier();
        var stage = 0u;
        for (var k0 = 0u; k0 < k(); k0 += 8u) {
            let more = k0 + 8u < k();
            var next_a = vec4<f32>();
            var next_b = vec4<f32>();
            if (more) {
                next_a = column_of_a(row0 + a_row, k0 + 8u + a_col);
                next_b = row_of_b(k0 + 8u + b_row, col0 + b_col);
            }
            multiply(stage + 0u, tx, ty);
            multiply(stage + 32u, tx, ty);
            multiply(stage + 64u, tx, ty);
            multiply(stage + 96u, tx, ty);
            multiply(stage + 128u, tx, ty);
            multiply(stage + 160u, tx, ty);
            multiply(stage + 192u, tx, ty);
            multiply(stage + 224u, tx, ty);
            stage = 256u - stage;
            if (more) {
                tile_a[stage + a_col * 32u + a_row / 4u] = next_a;
                tile_b[stage + b_row * 32u + b_col / 4u] = next_b;
            }
            workgroupBarrier();
        }
        store4(row0 + ty * 4u + 0u, col0 + tx * 4u, c00);
        store4(row0 + ty * 4u + 0u, col0 + 64u + tx * 4u, c01);
        store4(row0 + ty * 4u + 1u, col0 + tx * 4u, c10);
        store4(row0 + ty * 4u + 1u, col0 + 64u + tx * 4u, c11);
        store4(row0 + ty * 4u + 2u, col0 + tx * 4u, c20);
        store4(row0 + ty * 4u + 2u, col0 + 64u + tx * 4u, c21);
        store4(row0 + ty * 4u + 3u, col0 + tx * 4u, c30);
        store4(row0 + ty * 4u + 3u, col0 + 64u + tx * 4u, c31);
        store4(row0 + 64u + ty * 4u + 0u, col0 + tx * 4u, c40);
        store4(row0 + 64u + ty * 4u + 0u, col0 + 64u + tx * 4u, c41);
        store4(row0 + 64u + ty * 4u + 1u, col0 + tx * 4u, c50);
        store4(row0 + 64u + ty * 4u + 1u, col0 + 64u + tx * 4u, c51);
        store4(row0 + 64u + ty * 4u + 2u, col0 + tx * 4u, c60);
        store4(row0 + 64u + ty * 4u + 2u, col0 + 64u + tx * 4u, c61);
        store4(row0 + 64u + ty * 4u + 3u, col0 + tx * 4u, c70);
        store4(row0 + 64u + ty * 4u + 3u, col0 + 64u + tx * 4u, c71);
    }
}
