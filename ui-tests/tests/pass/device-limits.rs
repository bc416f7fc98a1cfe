use graph_runtime::graph;

// `#[device_limits]` checks workgroup sizes against the device at bake instead of the portable limits.
graph! {
    #[device_limits]
    graph G {
        buffers { x: [f32] = inout }
        kernel k(x: read_write) {
            @compute @workgroup_size(1024)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = 2.0 * x[gid.x]; }
            }
        }
    }
}

fn main() {
    let graph_runtime::desc::OpDesc::Kernel(k) = &G::DESCRIPTION.nodes[0].op else {
        panic!("a kernel");
    };
    assert_eq!(k.workgroup_size, [1024, 1, 1]);
}
