// output[i] = 1.0 where input[i] > level(), else 0.0, over the shorter of the two.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    if (i < min(arrayLength(&input), arrayLength(&output))) {
        output[i] = select(0.0, 1.0, input[i] > level());
    }
}
