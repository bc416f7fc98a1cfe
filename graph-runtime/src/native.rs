//! The one place the runtime calls a native API directly, through wgpu's hal interop. Every `unsafe` block
//! of the crate is here, each with the invariant it relies on.

use ash::vk;

/// The validation-layer message ID of the error [`plant_invalid_buffer`] plants.
pub(crate) const PLANTED_VUID: &str = "VUID-VkBufferCreateInfo-usage";

/// Creates and destroys a Vulkan buffer with no usage flags: invalid usage by design
/// (`VUID-VkBufferCreateInfo-usage-requiredbitmask`), which the validation layer reports inside the call. It
/// proves that validation mode really validates. Returns `false`, doing nothing, when `device` is not a
/// Vulkan device.
pub(crate) fn plant_invalid_buffer(device: &wgpu::Device) -> bool {
    // SAFETY: `as_hal` lets us use the hal device as long as we keep wgpu's invariants: we create one buffer
    // of our own, which wgpu never sees, and destroy it before the guard is dropped; no handle outlives this
    // function.
    let Some(hal) = (unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }) else {
        return false;
    };
    let raw = hal.raw_device();
    let info = vk::BufferCreateInfo::default()
        .size(4)
        .usage(vk::BufferUsageFlags::empty())
        .sharing_mode(vk::SharingMode::EXCLUSIVE);
    // SAFETY: `raw` is the live VkDevice behind `hal`, which stays borrowed for both calls; `info` is fully
    // initialised with no extension chain. The empty usage is the planted mistake: the layer reports it, and
    // drivers create an ordinary buffer object, never bound to memory, which is destroyed at once and used by
    // nothing in between (so no queue can be using it).
    unsafe {
        if let Ok(buffer) = raw.create_buffer(&info, None) {
            raw.destroy_buffer(buffer, None);
        }
    }
    true
}
