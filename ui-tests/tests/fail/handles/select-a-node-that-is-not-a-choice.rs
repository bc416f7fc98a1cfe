use graph_runtime::{Baked, Error, graph};

graph! {
    graph G {
        params { width: u32, height: u32 }
        buffers { image: [f32] = input, gradient: [f32] = output }
        alternatives edges {
            kernel sobel = kernels::sobel(input: image, output: gradient, width: params.width, height: params.height);
            kernel scharr = kernels::scharr(input: image, output: gradient, width: params.width, height: params.height);
        }
        kernel twice = kernels::scale(data: gradient, alpha: 2.0);
    }
}

fn run(g: &mut Baked<G>) -> Result<(), Error> {
    g.select(GNode::Twice)?;
    Ok(())
}

fn main() {
    let _ = run;
}
