// y[i] = a() * x[i] + y[i] over the shorter of the two.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < min(arrayLength(&x), arrayLength(&y))) {
        y[i] = a() * x[i] + y[i];
    }
}
