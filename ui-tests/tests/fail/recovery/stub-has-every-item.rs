use graph_runtime::{Baked, Error, Gpu, graph};

// With one error in the graph, code that uses every generated item sees that one error only.
graph! {
    pub graph G {
        params { a: f32, n: u32 }
        buffers { x: [f32] = input, y: [f32] = output }
        kernel scale(x: read, y: write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { y[gid.x] = params.alpha * x[gid.x]; }
            }
        }
        host show(y: read);
    }
}

fn run(gpu: &Gpu, x: &graph_runtime::Buffer<f32>, y: &graph_runtime::Buffer<f32>) -> Result<(), Error> {
    let _: usize = G::NODE_COUNT;
    let _: [GNode; 2] = G::NODES;
    let _: [GNode; 2] = G::TOPOLOGICAL_ORDER;
    let _: &[&[GNode]] = G::LEVELS;
    let _ = G::DESCRIPTION.name;
    let _: (&str, usize) = (GNode::Scale.name(), GNode::Show.index());
    let mut g: Baked<G> = G::bake(gpu, GBuffers { x, y })?;
    *g.params_mut() = GParams::new(2.0, 16);
    g.params_mut().a = 3.0;
    g.on_host(G::HOSTS.show, |_| Ok(()))?;
    g.set_dispatch(GKernel::Scale, graph_runtime::Dispatch::Threads([1, 1, 1]))?;
    let _ = (G::UPLOADS, G::READBACKS, GKernel::Scale.node());
    let _: Option<(GChoice, GRanged, GCopy, GInterop)> = None;
    let _finished: graph_runtime::Finished<G> = g.replay()?.wait()?;
    Ok(())
}

fn main() {
    let _ = run;
}
