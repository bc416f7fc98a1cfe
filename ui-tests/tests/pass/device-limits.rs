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
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<G>(G::FUSED), Ok(()));
    let graph_runtime::desc::OpDesc::Kernel(k) = &G::DESCRIPTION.nodes[0].op else {
        panic!("a kernel");
    };
    assert_eq!(k.workgroup_size, [1024, 1, 1]);
}
