use graph_runtime::{Baked, Error, graph};

graph! {
    graph G {
        buffers { x: [f32; 16] = output }
        fill ones(x[..8] = 1.0);
    }
}

fn run(g: &mut Baked<G>) -> Result<(), Error> {
    g.set_copy_ranges(GRanged::Ones, 0..4, 4..8)?;
    Ok(())
}

fn main() {
    let _ = run;
}
