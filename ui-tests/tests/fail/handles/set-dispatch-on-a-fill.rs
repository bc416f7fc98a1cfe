use graph_runtime::{Baked, Dispatch, Error, graph};

graph! {
    graph G {
        buffers { x: [f32] = output }
        fill clear(x = 0.0);
        kernel twice = kernels::scale(data: x, alpha: 2.0);
    }
}

// A fill's extent is its range: it has no dispatch size to set.
fn run(g: &mut Baked<G>) -> Result<(), Error> {
    g.set_dispatch(GNode::Clear, Dispatch::Threads([1, 1, 1]))?;
    Ok(())
}

fn main() {
    let _ = run;
}
