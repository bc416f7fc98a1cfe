// output[i] = value() for every element.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&output)) {
        output[i] = value();
    }
}
