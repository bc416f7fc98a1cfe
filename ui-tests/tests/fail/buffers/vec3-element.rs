use graph_runtime::graph;

graph! {
    graph G {
        buffers { points: [vec3<f32>] = inout }
        host show(points: read);
    }
}

fn main() {}
