// Keeps the GPU busy: `params.spins` rounds of xorshift on every element of `x`.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&x)) {
        var v = x[i] + i + 1u;
        for (var k = 0u; k < params.spins; k++) {
            v = v ^ (v << 13u);
            v = v ^ (v >> 17u);
            v = v ^ (v << 5u);
        }
        x[i] = v;
    }
}
