use graph_runtime::graph;

graph! {
    graph G {
        textures { t: texture_2d<r32float> = input }
        host look(t: read);
    }
}

fn main() {}
