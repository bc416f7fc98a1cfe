use graph_runtime::graph;

graph! {
    graph G {
        buffers { data: [f32] = inout }
        kernel double(data: read_write) {
            fn main(i: u32) {
                data[i] = 2.0 * data[i];
            }
        }
    }
}

fn main() {}
