// output = softmax of each row of input (rows of cols elements, row-major), computed stably (the row's
// maximum subtracted first): one invocation per element, each reading its row.
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = gid.x + gid.y * groups.x * 64u;
    let n = min(arrayLength(&input), arrayLength(&output));
    if (i < n && cols() > 0u) {
        let start = (i / cols()) * cols();
        let end = min(start + cols(), n);
        var top = input[start];
        for (var j = start + 1u; j < end; j++) {
            top = max(top, input[j]);
        }
        var total = 0.0;
        for (var j = start; j < end; j++) {
            total += exp(input[j] - top);
        }
        output[i] = exp(input[i] - top) / total;
    }
}
