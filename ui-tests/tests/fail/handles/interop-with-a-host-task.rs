use graph_runtime::{Baked, Error, graph};

graph! {
    graph G {
        buffers { x: [f32] = inout }
        host look(x: read);
        interop mirror(x: read_write);
    }
}

fn run(g: &mut Baked<G>) -> Result<(), Error> {
    g.on_interop(GNode::Look, |_| Ok(()))?;
    Ok(())
}

fn main() {
    let _ = run;
}
