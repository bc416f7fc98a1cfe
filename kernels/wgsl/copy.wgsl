// output[i] = input[i] over the shorter of the two.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < min(arrayLength(&input), arrayLength(&output))) {
        output[i] = input[i];
    }
}
