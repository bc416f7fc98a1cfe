use graph_runtime::graph;

// A cycle through many nodes is one short message: its first and last steps and the count, the nodes in a
// note of a few lines.
graph! {
    graph G {
        host n0();
        host n1();
        host n2();
        host n3();
        host n4();
        host n5();
        host n6();
        host n7();
        host n8();
        host n9();
        host n10();
        host n11();
        host n12();
        host n13();
        host n14();
        host n15();
        host n16();
        host n17();
        host n18();
        host n19();
        n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> n6 -> n7 -> n8 -> n9 -> n10 -> n11 -> n12 -> n13 -> n14 -> n15 -> n16 -> n17 -> n18 -> n19 -> n0;
    }
}

fn main() {}
