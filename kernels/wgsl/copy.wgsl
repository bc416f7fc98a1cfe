// output[i] = input[i] over the shorter of the two.
// The index folds a 2-D dispatch back into one line, so buffers past 65535 workgroups still work.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if (i < min(arrayLength(&input), arrayLength(&output))) {
        output[i] = input[i];
    }
}
