// The square of each element of `x`: the host task `total` sums them into the norm.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&squares)) {
        squares[i] = x[i] * x[i];
    }
}
