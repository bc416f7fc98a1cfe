use graph_runtime::{Error, Gpu, GraphBuilder};

// A recording borrows the stream mutably: a second thread cannot make calls on it meanwhile.
fn record(gpu: &Gpu) -> Result<(), Error> {
    let mut stream = gpu.stream();
    let mut builder = GraphBuilder::new("G");
    let recording = stream.begin_recording(&mut builder)?;
    std::thread::scope(|scope| {
        scope.spawn(|| stream.wait());
    });
    recording.end()?;
    Ok(())
}

fn main() {
    let _ = record;
}
