// data[i] = 2 * data[i]; `data` is declared by the graph.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < arrayLength(&data)) {
        data[gid.x] = 2.0 * data[gid.x];
    }
}
