use graph_runtime::{Error, Gpu, GraphBuilder};

// A recording holds the builder it records into: adding to the builder by hand meanwhile does not compile.
fn record(gpu: &Gpu) -> Result<(), Error> {
    let mut stream = gpu.stream();
    let mut builder = GraphBuilder::new("G");
    let recording = stream.begin_recording(&mut builder)?;
    builder.param("a", "f32");
    recording.end()?;
    Ok(())
}

fn main() {
    let _ = record;
}
