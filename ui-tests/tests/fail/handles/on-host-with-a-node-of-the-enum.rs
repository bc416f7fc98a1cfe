use graph_runtime::{Baked, Error, graph};

graph! {
    graph G {
        buffers { x: [f32] = inout }
        host look(x: read);
    }
}

// `on_host` takes a host task's handle (`G::HOSTS.look`) or its name, not a variant of the node enum.
fn run(g: &mut Baked<G>) -> Result<(), Error> {
    g.on_host(GNode::Look, |_| Ok(()))?;
    Ok(())
}

fn main() {
    let _ = run;
}
