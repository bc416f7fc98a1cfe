use graph_runtime::{Error, Gpu, graph};

graph! {
    graph G {
        buffers { x: [f32] = input, y: [f32] = output, z: [f32] = output }
        copy c(x -> y);
        copy d(x -> z);
        host show(y: read);
    }
}

fn run(gpu: &Gpu, x: &graph_runtime::Buffer<f32>, y: &graph_runtime::Buffer<f32>, z: &graph_runtime::Buffer<f32>) -> Result<(), Error> {
    let mut g = G::bake(gpu, GBuffers { x, y, z })?;
    // `show` declared only `y`: its typed context has no `z`.
    g.on_host(G::HOSTS.show, |h| {
        let _ = h.z()?;
        Ok(())
    })?;
    Ok(())
}

fn main() {
    let _ = run;
}
