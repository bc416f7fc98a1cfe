// output (cols x rows) = the transpose of input (rows x cols), both row-major: one invocation per element of
// output, which reads the element it needs.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 256u;
    let n = rows() * cols();
    if (i < min(n, min(arrayLength(&input), arrayLength(&output)))) {
        // Output row `r` is input column `r`.
        let r = i / rows();
        let c = i % rows();
        output[i] = input[c * cols() + r];
    }
}
