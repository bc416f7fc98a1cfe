//! A host task between two GPU partitions, and the closure API that runs it.

use graph_runtime::{Baked, Error, HostContext, graph};

graph! {
    graph WithHost {
        buffers { data: [f32] = inout }
        kernel square(data: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&data)) { data[gid.x] = data[gid.x] * data[gid.x]; }
            }
        }
        host inspect(data: read);
        // Overwrites what `inspect` reads: after it, in a second GPU partition.
        kernel halve(data: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&data)) { data[gid.x] = 0.5 * data[gid.x]; }
            }
        }
    }
}

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<WithHost>(WithHost::FUSED), Ok(()));
    use WithHostNode::{Halve, Inspect, Square};
    assert_eq!(WithHost::TOPOLOGICAL_ORDER, [Square, Inspect, Halve]);
    // Three partitions: GPU, host, GPU.
    assert_eq!(WithHost::DESCRIPTION.partitions.len(), 3);
    // Not run (no GPU needed to compile).
    let _attach = |baked: &mut Baked<WithHost>| -> Result<(), Error> {
        // By handle: the typed context, its closure's type inferred.
        baked.on_host(WithHost::HOSTS.inspect, |host| {
            let values: Vec<f32> = host.data()?;
            assert!(values.iter().all(|v| *v >= 0.0));
            Ok(())
        })?;
        // By name: the untyped context, written out or inferred.
        baked.on_host("inspect", |host: &HostContext<'_>| {
            let values: Vec<f32> = host.read("data")?;
            assert!(values.iter().all(|v| *v >= 0.0));
            Ok(())
        })?;
        baked.on_host("inspect", |host| host.read::<f32>("data").map(drop))?;
        Ok(())
    };
}
