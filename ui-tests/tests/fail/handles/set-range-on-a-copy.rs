use graph_runtime::{Baked, Error, graph};

graph! {
    graph G {
        buffers { x: [f32; 16] = input, y: [f32; 16] = output }
        copy shift(x -> y);
    }
}

// A copy has two ranges, set with `set_copy_ranges`.
fn run(g: &mut Baked<G>) -> Result<(), Error> {
    g.set_range(GNode::Shift, 0..4)?;
    Ok(())
}

fn main() {
    let _ = run;
}
