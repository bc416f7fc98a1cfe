use graph_runtime::graph;

// `fill` writes any element type, with a value of exactly that type.
graph! {
    graph G {
        params { k: f32, n: u32, v: vec4<f32> }
        buffers {
            a: [f32] = output,
            b: [u32] = output,
            c: [i32] = output,
            d: [vec4<f32>] = output,
            e: [vec2<i32>] = output,
        }
        fill fa(a = params.k);
        fill fb(b = params.n);
        fill fc(c = -1);
        fill fd(d = params.v);
        fill fe(e = vec2<i32>(1, -2));
    }
}

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<G>(G::FUSED), Ok(()));
    assert_eq!(G::NODE_COUNT, 5);
}
