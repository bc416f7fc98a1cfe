//! A graph declared here so that the documentation shows what `graph!` generates: [`Saxpy`] (with `bake`,
//! `NODE_COUNT`, `NODES`, `TOPOLOGICAL_ORDER`, `LEVELS`, `DESCRIPTION`), [`SaxpyParams`], [`SaxpyBuffers`] and
//! [`SaxpyNode`]. It is the README's quickstart graph.

crate::graph! {
    /// y = a*x + y over the first `n` elements, then y scaled by 2.
    pub graph Saxpy {
        params { a: f32, n: u32 }
        buffers {
            x: [f32] = input,
            y: [f32] = inout,
        }
        kernel axpy(x: read, y: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let i = gid.x;
                if (i < params.n) { y[i] = params.a * x[i] + y[i]; }
            }
        }
        kernel twice = kernels::scale(data: y, alpha: 2.0);
    }
}
