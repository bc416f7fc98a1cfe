// data[i] = alpha() * data[i].
// The index folds a 2-D dispatch back into one line, so buffers past 65535 workgroups still work.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if (i < arrayLength(&data)) {
        data[i] = alpha() * data[i];
    }
}
