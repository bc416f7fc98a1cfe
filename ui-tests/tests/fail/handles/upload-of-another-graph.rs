use graph_runtime::{Baked, Error, graph};

graph! {
    graph A {
        buffers { frame: [f32; 4] = inout }
        upload load(frame);
    }
}

graph! {
    graph B {
        buffers { weights: [f32; 4] = inout }
        upload load(weights);
    }
}

// `B`'s handle names the node at `A`'s index, of `A`'s element type: only its graph tells them apart.
fn run(a: &mut Baked<A>) -> Result<(), Error> {
    a.upload(B::UPLOADS.load, &[1.0; 4])
}

fn main() {
    let _ = run;
}
