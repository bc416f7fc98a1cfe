use graph_runtime::{Baked, Error, HostNode, graph};

graph! {
    graph G {
        buffers { x: [f32] = inout, y: [u32] = inout }
        host first(x: read);
        host second(y: read);
    }
}

// A typed context reads its accesses by position: made over another node's context, it would read that
// node's buffers. Only the runtime makes one.
fn run(g: &mut Baked<G>) -> Result<(), Error> {
    g.on_host("first", |ctx| {
        let second = <GSecondTask as HostNode>::context(ctx);
        second.y().map(drop)
    })?;
    Ok(())
}

fn main() {
    let _ = run;
}
