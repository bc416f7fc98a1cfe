use graph_runtime::{Baked, Error, HostContext, graph};

graph! {
    graph G {
        buffers { x: [f32] = inout }
        host look(x: read);
    }
}

// A handle gives the typed context; the untyped one comes with the task's name (`g.on_host("look", ..)`).
fn run(g: &mut Baked<G>) -> Result<(), Error> {
    g.on_host(G::HOSTS.look, |ctx: &HostContext<'_>| ctx.read::<f32>("x").map(drop))?;
    Ok(())
}

fn main() {
    let _ = run;
}
