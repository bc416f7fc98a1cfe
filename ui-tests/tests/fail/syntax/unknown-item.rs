use graph_runtime::graph;

// A misspelt item keyword is one error; the item is read as the keyword it most likely is.
graph! {
    graph G {
        buffers { x: [f32] = inout }
        kernal double(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }
        }
        double -> double2;
        fill double2(x = 1.0);
    }
}

fn main() {
    let _ = GNode::Double;
}
