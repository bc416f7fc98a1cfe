//! A `file("..")` kernel, compiled as an ordinary test of this crate: under trybuild `CARGO_MANIFEST_DIR` is
//! trybuild's generated project (`target/tests/trybuild/ui-tests`), where no relative `.wgsl` path resolves.

#![forbid(unsafe_code)]

use graph_runtime::desc::OpDesc;
use graph_runtime::graph;

graph! {
    graph FromFile {
        buffers { data: [f32] = inout }
        kernel double(data: read_write) file("wgsl/double.wgsl");
    }
}

#[test]
fn a_file_kernel_compiles_with_the_file_as_its_source() {
    assert_eq!(FromFile::NODE_COUNT, 1);
    let OpDesc::Kernel(kernel) = &FromFile::DESCRIPTION.nodes[0].op else {
        panic!("`double` is a kernel");
    };
    assert_eq!(kernel.source, include_str!("../wgsl/double.wgsl"));
    assert_eq!(kernel.entry, "main");
    assert_eq!(kernel.workgroup_size, [64, 1, 1]);
}
