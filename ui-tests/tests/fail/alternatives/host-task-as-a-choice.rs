use graph_runtime::graph;

// A host task runs on the CPU: it cannot be one of the kernels of a group of alternatives. The group keeps
// its kernels, so `y` is still written.
graph! {
    graph G {
        buffers { x: [f32] = input, y: [f32] = output }
        alternatives pick {
            kernel plain = kernels::copy(input: x, output: y);
            host look(x: read);
            kernel again = kernels::copy(input: x, output: y);
        }
    }
}

fn main() {}
