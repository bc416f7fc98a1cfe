use graph_runtime::graph;

graph! {
    graph G {
        textures { nearest: sampler<nearest, repeat> }
        buffers { out: [u32] = output }
        copy take(nearest -> out);
    }
}

fn main() {}
