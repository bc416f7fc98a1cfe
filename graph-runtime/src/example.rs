//! Graphs declared here so that the documentation shows what `graph!` generates.
//!
//! [`Saxpy`] is the README's quickstart graph: [`Saxpy`] itself (with `bake`, `NODE_COUNT`, `NODES`,
//! `TOPOLOGICAL_ORDER`, `LEVELS`, `FUSED`, `DESCRIPTION`), [`SaxpyParams`], [`SaxpyBuffers`] and
//! [`SaxpyNode`], every node.
//!
//! [`Pipeline`] has a node of each role the typed API names, and shows the handles, each of its graph and
//! of one role, so that a handle of another graph or a node of the wrong kind is a compile error:
//! [`PipelineKernel`] (for `Baked::set_dispatch`), [`PipelineChoice`] (`Baked::select`),
//! [`PipelineRanged`] (`Baked::set_range`), [`PipelineCopy`] (`Baked::set_copy_ranges`),
//! [`PipelineInterop`] (`Baked::on_interop`), and the constants `Pipeline::UPLOADS` ([`PipelineUploads`],
//! of `Upload<Pipeline, T>`), `Pipeline::READBACKS` ([`PipelineReadbacks`], read from the
//! `Finished<Pipeline>` a replay's `wait` returns) and `Pipeline::HOSTS` ([`PipelineHosts`], with each host
//! task's typed context, [`PipelineLookHost`]). [`Saxpy`], which has no choice, has a [`SaxpyChoice`]
//! without variants: no `select` call can be written for it.

#![forbid(unsafe_code)]

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

crate::graph! {
    /// An image's edges by one of two filters, a frame uploaded and partly cleared, a copy a host task looks
    /// at, an interop task's own wgpu work, and the edges read back.
    pub graph Pipeline {
        params { width: u32, height: u32 }
        buffers {
            image: [f32] = input,
            edges: [f32] = output,
            frame: [f32; 256],
            kept: [f32; 256],
        }
        upload load(frame);
        fill clear(frame[..16] = 0.0);
        copy keep(frame -> kept);
        host look(kept: read);
        alternatives filter {
            kernel sobel = kernels::sobel(input: image, output: edges, width: params.width, height: params.height);
            kernel scharr = kernels::scharr(input: image, output: edges, width: params.width, height: params.height);
        }
        interop mirror(edges: read_write);
        readback result(edges);
    }
}
