use graph_runtime::graph;

// Forty graphs, each the only subgraph of the one before: deeper than the compile-time checks follow.
graph! {
    graph G1 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G2(x: x: read_write);
    }
}

graph! {
    graph G2 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G3(x: x: read_write);
    }
}

graph! {
    graph G3 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G4(x: x: read_write);
    }
}

graph! {
    graph G4 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G5(x: x: read_write);
    }
}

graph! {
    graph G5 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G6(x: x: read_write);
    }
}

graph! {
    graph G6 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G7(x: x: read_write);
    }
}

graph! {
    graph G7 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G8(x: x: read_write);
    }
}

graph! {
    graph G8 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G9(x: x: read_write);
    }
}

graph! {
    graph G9 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G10(x: x: read_write);
    }
}

graph! {
    graph G10 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G11(x: x: read_write);
    }
}

graph! {
    graph G11 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G12(x: x: read_write);
    }
}

graph! {
    graph G12 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G13(x: x: read_write);
    }
}

graph! {
    graph G13 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G14(x: x: read_write);
    }
}

graph! {
    graph G14 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G15(x: x: read_write);
    }
}

graph! {
    graph G15 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G16(x: x: read_write);
    }
}

graph! {
    graph G16 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G17(x: x: read_write);
    }
}

graph! {
    graph G17 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G18(x: x: read_write);
    }
}

graph! {
    graph G18 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G19(x: x: read_write);
    }
}

graph! {
    graph G19 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G20(x: x: read_write);
    }
}

graph! {
    graph G20 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G21(x: x: read_write);
    }
}

graph! {
    graph G21 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G22(x: x: read_write);
    }
}

graph! {
    graph G22 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G23(x: x: read_write);
    }
}

graph! {
    graph G23 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G24(x: x: read_write);
    }
}

graph! {
    graph G24 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G25(x: x: read_write);
    }
}

graph! {
    graph G25 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G26(x: x: read_write);
    }
}

graph! {
    graph G26 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G27(x: x: read_write);
    }
}

graph! {
    graph G27 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G28(x: x: read_write);
    }
}

graph! {
    graph G28 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G29(x: x: read_write);
    }
}

graph! {
    graph G29 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G30(x: x: read_write);
    }
}

graph! {
    graph G30 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G31(x: x: read_write);
    }
}

graph! {
    graph G31 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G32(x: x: read_write);
    }
}

graph! {
    graph G32 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G33(x: x: read_write);
    }
}

graph! {
    graph G33 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G34(x: x: read_write);
    }
}

graph! {
    graph G34 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G35(x: x: read_write);
    }
}

graph! {
    graph G35 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G36(x: x: read_write);
    }
}

graph! {
    graph G36 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G37(x: x: read_write);
    }
}

graph! {
    graph G37 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G38(x: x: read_write);
    }
}

graph! {
    graph G38 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G39(x: x: read_write);
    }
}

graph! {
    graph G39 {
        buffers { x: [f32; 4] = inout }
        subgraph inner = G40(x: x: read_write);
    }
}

graph! {
    graph G40 {
        buffers { x: [f32; 4] = inout }
        kernel k(x: read_write) {
            @compute @workgroup_size(4)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { x[gid.x] = x[gid.x] + 1.0; }
        }
    }
}

fn main() {}
