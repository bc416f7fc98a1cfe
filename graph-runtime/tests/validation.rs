//! Validation mode validates: a real validation error planted in a replay fails that replay, and only that
//! one; without the layer, validation mode refuses to start. This test binary turns validation mode on for
//! itself, so it runs under `cargo xtask test` as well as `--validation`; it needs the Khronos layer
//! installed (`vulkan-validationlayers`, which both install).

#![forbid(unsafe_code)]

mod common;

use graph_runtime::{Error, Gpu, graph, validation, wgpu};

graph! {
    /// A kernel, then a host task.
    graph Checked {
        buffers { x: [f32] = inout }
        kernel bump(x: read_write) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < arrayLength(&x)) { x[gid.x] = x[gid.x] + 1.0; }
            }
        }
        host look(x: read);
    }
}

/// A Vulkan device in validation mode (whatever `WGPU_BACKEND` says: the layer is Vulkan's), which only
/// comes up when the layer reports a planted error.
fn validated_gpu() -> Gpu {
    validation::enable();
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::VULKAN;
    desc.flags = wgpu::InstanceFlags::VALIDATION | wgpu::InstanceFlags::DEBUG;
    let instance = wgpu::Instance::new(desc);
    let device = pollster::block_on(instance.request_adapter(&Default::default()))
        .map_err(|e| Error::Gpu(e.to_string()))
        .and_then(|adapter| {
            pollster::block_on(adapter.request_device(&Default::default()))
                .map_err(|e| Error::Gpu(e.to_string()))
        })
        .and_then(|(device, queue)| Gpu::from_wgpu(device, queue));
    match device {
        Ok(gpu) => gpu,
        Err(e) => panic!(
            "validation mode could not start: {e}\nThis test needs a Vulkan driver and the Khronos validation \
             layer: `sudo apt-get install mesa-vulkan-drivers vulkan-validationlayers`, or `cargo xtask test`."
        ),
    }
}

#[test]
fn a_planted_validation_error_fails_the_replay_that_made_it_and_no_other() -> Result<(), Error> {
    let gpu = validated_gpu();
    let x = gpu.buffer_zeroed::<f32>(64)?;
    let mut faulty = Checked::bake(&gpu, CheckedBuffers { x: &x })?;
    let planter = gpu.clone();
    let mut plant = true;
    faulty.on_host(Checked::HOSTS.look, move |_| {
        if plant {
            assert!(validation::plant_error(planter.device()), "a Vulkan device");
            plant = false;
        }
        Ok(())
    })?;
    let y = gpu.buffer_zeroed::<f32>(64)?;
    let mut healthy = Checked::bake(&gpu, CheckedBuffers { x: &y })?;
    healthy.on_host(Checked::HOSTS.look, |_| Ok(()))?;

    let result = faulty.replay();
    assert!(
        matches!(&result, Err(e) if e.graph() == Some("Checked")
            && matches!(e.without_graph(), Error::Validation(message) if message.contains("VUID-VkBufferCreateInfo-usage"))),
        "{result:?}"
    );
    // Another graph on the same device, and the same graph without the fault, replay cleanly.
    healthy.replay_blocking()?;
    faulty.replay_blocking()?;
    gpu.check()?;
    assert_eq!(y.read_blocking()?, vec![1.0; 64]);
    Ok(())
}

#[test]
fn validation_mode_refuses_a_device_it_cannot_hear_the_layer_on() {
    validation::enable();
    // An application's device made without asking for validation: even where the environment forces the
    // layer on, wgpu then installs no messenger, so nothing would reach the runtime. Validation mode must say
    // so rather than pass.
    // (wgpu's default flags ask for validation in debug builds: ask for none.)
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.flags = wgpu::InstanceFlags::empty();
    desc.backends = wgpu::Backends::VULKAN;
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .expect("a GPU adapter (install mesa-vulkan-drivers for the software one)");
    let (device, queue) =
        pollster::block_on(adapter.request_device(&Default::default())).expect("a device");
    let result = Gpu::from_wgpu(device, queue);
    assert!(
        matches!(&result, Err(Error::ValidationUnavailable(why)) if why.contains("did not report a planted error")),
        "{result:?}"
    );
}
