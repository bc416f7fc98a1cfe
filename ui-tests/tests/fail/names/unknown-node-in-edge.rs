use graph_runtime::graph;

graph! {
    graph G {
        buffers {
            x: [f32] = output,
            y: [f32] = output,
        }
        fill zero_x(x = 0.0);
        fill zero_y(y = 0.0);
        zero_x -> zero_z;
    }
}

fn main() {}
