//! `#[no_fusion]` on a kernel or a fill keeps it out of every group; on the graph, it turns the pass off.
use graph_runtime::graph;

graph! {
    graph On {
        buffers { x: [f32; 64] = output }
        fill a(x = 1.0);
        kernel b(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { x[gid.x] = x[gid.x] * 2.0; }
        }
    }
}

graph! {
    graph Marked {
        buffers { x: [f32; 64] = output }
        fill a(x = 1.0);
        #[no_fusion]
        kernel b(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { x[gid.x] = x[gid.x] * 2.0; }
        }
    }
}

graph! {
    #[no_fusion]
    graph Off {
        buffers { x: [f32; 64] = output }
        fill a(x = 1.0);
        fill b(x = 2.0);
    }
}

fn main() {
    assert_eq!(On::FUSED, &[&[OnNode::A, OnNode::B][..]]);
    assert!(Marked::FUSED.is_empty());
    assert!(Off::FUSED.is_empty());
}
