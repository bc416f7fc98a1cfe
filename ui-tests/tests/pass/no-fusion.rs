//! `#[no_fusion]` on a kernel or a fill keeps it out of every group; on the graph, it turns the pass off. A
//! choice of alternatives and a member of a block are kernels too, and take it.
use graph_runtime::desc::OpDesc;
use graph_runtime::{TaskGraph, graph};

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

graph! {
    graph Nested {
        buffers { x: [f32; 64] = output, flag: [u32; 1] }
        fill a(x = 1.0);
        fill set(flag = 1u);
        alternatives pick {
            #[no_fusion]
            kernel one = kernels::scale(data: x, alpha: 2.0);
            kernel other = kernels::scale(data: x, alpha: 3.0);
        }
        if maybe(flag) {
            #[no_fusion]
            fill again(x = 4.0);
            fill more(x = 5.0);
        }
    }
}

/// Whether the description keeps node `name` out of fusion.
fn marked<G: TaskGraph>(name: &str) -> bool {
    G::DESCRIPTION
        .nodes
        .iter()
        .find(|n| n.name == name)
        .is_some_and(|n| matches!(&n.op, OpDesc::Kernel(k) if k.no_fusion))
}

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<On>(On::FUSED), Ok(()));
    assert_eq!(ui_tests::fused_as_promised::<Marked>(Marked::FUSED), Ok(()));
    assert_eq!(ui_tests::fused_as_promised::<Off>(Off::FUSED), Ok(()));
    assert_eq!(ui_tests::fused_as_promised::<Nested>(Nested::FUSED), Ok(()));
    assert!(marked::<Nested>("one") && marked::<Nested>("again"));
    assert!(!marked::<Nested>("other") && !marked::<Nested>("more"));
    assert_eq!(On::FUSED, &[&[OnNode::A, OnNode::B][..]]);
    assert!(Marked::FUSED.is_empty());
    assert!(Off::FUSED.is_empty());
}
