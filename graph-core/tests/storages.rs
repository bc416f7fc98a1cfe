//! Kernels are validated with their parameters in both places the runtime may put them.

#![forbid(unsafe_code)]

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::library::Library;

/// A positive control for checking both parameter storages: a kernel that names the push-constant address
/// space validates as written, and not in the uniform-buffer fallback, so it is refused at compile time.
#[test]
fn a_kernel_that_only_works_with_push_constants_is_refused() {
    let mut b = GraphBuilder::new("P");
    b.param("a", "f32").inout("x", "f32");
    b.kernel(
        "k",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
             fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                 let p: ptr<immediate, GraphParams> = &params;
                 if (gid.x < arrayLength(&x)) { x[gid.x] = (*p).a; }
             }",
        )
        .read_write("x"),
    );
    let errors = b.build(&Library::EMPTY).expect_err("refused");
    let message = &errors.diagnostics[0].message;
    assert!(
        message.starts_with("kernel `k` does not validate with its parameters in a uniform buffer"),
        "{errors}"
    );
    // The same kernel in a graph that always uses a uniform buffer is not checked with push constants.
    b.uniform_params();
    assert!(
        b.build(&Library::EMPTY).is_err(),
        "and with `ptr<immediate>` it fails as written"
    );
}

#[test]
fn a_uniform_parameter_block_over_64_kib_is_refused() {
    let mut b = GraphBuilder::new("Big");
    for i in 0..4097 {
        b.param(&format!("p{i}"), "vec4<f32>");
    }
    b.uniform_params().inout("x", "f32");
    b.fill("f", "x", "params.p0.x");
    let errors = b.build(&Library::EMPTY).expect_err("refused");
    assert_eq!(
        errors.diagnostics[0].message,
        "the parameter block is 65552 bytes, over the 65536 bytes of a uniform buffer binding every backend offers"
    );
}
