use graph_runtime::graph;

graph! {
    graph G {
        textures {
            frame: texture_2d<rgba8unorm> = input,
            wide: texture_2d<rgba16float> = output,
        }
        copy widen(frame -> wide);
    }
}

fn main() {}
