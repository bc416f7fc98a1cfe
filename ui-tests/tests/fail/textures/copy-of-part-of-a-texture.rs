use graph_runtime::graph;

graph! {
    graph G {
        textures { frame: texture_2d<r32float> = input }
        buffers { out: [f32] = output }
        copy take(frame -> out[..4]);
    }
}

fn main() {}
