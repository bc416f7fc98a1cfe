use graph_runtime::{Baked, Error, graph};

graph! {
    graph G {
        buffers { x: [f32] = inout }
        kernel twice = kernels::scale(data: x, alpha: 2.0);
        readback out(x);
    }
}

fn run(g: &mut Baked<G>) -> Result<(), Error> {
    g.set_enabled(GToggle::Twice, false)?;
    // A readback cannot be turned off: `GToggle` has no variant for it.
    g.set_enabled(GToggle::Out, false)?;
    Ok(())
}

fn main() {
    let _ = run;
}
