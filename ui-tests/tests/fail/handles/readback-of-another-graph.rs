use graph_runtime::{Baked, Error, graph};

graph! {
    graph A {
        buffers { frame: [f32; 4] = inout }
        fill clear(frame = 0.0);
        readback result(frame);
    }
}

graph! {
    graph B {
        buffers { weights: [f32; 4] = inout }
        fill clear(weights = 1.0);
        readback result(weights);
    }
}

fn run(a: &mut Baked<A>) -> Result<Vec<f32>, Error> {
    a.replay()?.wait()?.read(B::READBACKS.result)
}

fn main() {
    let _ = run;
}
