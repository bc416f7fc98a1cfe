use graph_runtime::{Baked, Error, graph};

graph! {
    graph A {
        buffers { x: [f32] = inout }
        host look(x: read);
    }
}

graph! {
    graph B {
        buffers { y: [f32] = inout }
        host look(y: read);
    }
}

fn run(a: &mut Baked<A>) -> Result<(), Error> {
    a.on_host(B::HOSTS.look, |_| Ok(()))?;
    Ok(())
}

fn main() {
    let _ = run;
}
