//! Shared by the GPU tests: the devices (with push constants, and an application's device without them),
//! fresh random inputs, poisoned outputs, and comparisons as tight as the arithmetic allows.

#![allow(dead_code, reason = "each test file uses its own subset")]

use graph_runtime::ir::ParamsStorage;
use graph_runtime::{Buffer, Element, Error, Gpu, validation, wgpu};
use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// The GPU, or a failure that says how to get one: these tests never pass without running.
pub fn gpu() -> Gpu {
    match Gpu::new_blocking() {
        Ok(gpu) => {
            eprintln!("adapter: {}", gpu.summary());
            gpu
        }
        Err(e) => panic!("{}", no_gpu(&e)),
    }
}

fn no_gpu(e: &Error) -> String {
    format!(
        "GPU tests need a GPU adapter and found none: {e}\n\
         On Debian/Ubuntu without a GPU, install Mesa's software Vulkan driver: \
         `sudo apt-get install mesa-vulkan-drivers libvulkan1`, or run `cargo xtask test`, which does it."
    )
}

/// Whether a graph the native recorder can replay should replay through it here: a Vulkan adapter, and
/// `GRAPH_RUNTIME_RECORDER` not `portable`.
pub fn native_expected(gpu: &Gpu) -> bool {
    gpu.summary().contains("Vulkan")
        && std::env::var(graph_runtime::env::RECORDER_ENV).as_deref() != Ok("portable")
}

/// A baked graph whose recorder a test switches: typed or not.
pub trait Recorders {
    fn native(&mut self) -> Result<(), Error>;
    fn portable(&mut self);
}

impl Recorders for graph_runtime::BakedGraph {
    fn native(&mut self) -> Result<(), Error> {
        self.use_native_recorder(graph_runtime::NativeParamsIn::Buffer)
    }
    fn portable(&mut self) {
        self.use_portable_recorder();
    }
}

impl<G: graph_runtime::TaskGraph> Recorders for graph_runtime::Baked<G> {
    fn native(&mut self) -> Result<(), Error> {
        self.use_native_recorder(graph_runtime::NativeParamsIn::Buffer)
    }
    fn portable(&mut self) {
        self.use_portable_recorder();
    }
}

/// Switches `g` to the native recorder (`native`) or the portable one; `false` where the native one is
/// refused on a device that is not expected to have it (the test then skips that round), and a failure
/// where it is refused on one that is.
pub fn use_recorder(g: &mut impl Recorders, gpu: &Gpu, native: bool) -> bool {
    if !native {
        g.portable();
        return true;
    }
    match g.native() {
        Ok(()) => true,
        Err(e) => {
            assert!(!native_expected(gpu), "native recorder: {e}");
            false
        }
    }
}

/// An application's own device, created without `IMMEDIATES`, so parameters go through the uniform-buffer
/// fallback. It honours `WGPU_BACKEND` and validation mode like [`gpu`].
pub fn gpu_without_immediates() -> Gpu {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle().with_env();
    if validation::requested() {
        desc.flags |= wgpu::InstanceFlags::VALIDATION | wgpu::InstanceFlags::DEBUG;
    }
    let instance = wgpu::Instance::new(desc);
    let options = wgpu::RequestAdapterOptions::default();
    let adapter = pollster::block_on(instance.request_adapter(&options))
        .unwrap_or_else(|e| panic!("{}", no_gpu(&Error::Gpu(e.to_string()))));
    let (device, queue) =
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default()))
            .expect("a device");
    let gpu = Gpu::from_wgpu(device, queue).expect("wrap the device");
    assert_eq!(gpu.max_immediate_size(), 0);
    gpu
}

/// Both ways parameters travel: push constants on the default device, and a uniform buffer on an
/// application's device without `IMMEDIATES`. Each with the storage a graph of small parameters gets on it.
pub fn both_parameter_storages() -> [(Gpu, ParamsStorage); 2] {
    let with = gpu();
    let expected = if with.max_immediate_size() > 0 {
        ParamsStorage::Immediates
    } else {
        ParamsStorage::Uniform
    };
    [
        (with, expected),
        (gpu_without_immediates(), ParamsStorage::Uniform),
    ]
}

/// A generator seeded afresh each run; the seed is printed so a failure can be replayed with `TEST_SEED`.
pub fn rng() -> TestRng {
    let seed: u64 = std::env::var("TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    eprintln!("TEST_SEED={seed}");
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// `n` values in [-1, 1).
pub fn random_f32s(rng: &mut TestRng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| (rng.next_u32() >> 8) as f32 / (1u32 << 23) as f32 - 1.0)
        .collect()
}

/// `n` nonzero integers in [-8, 8], as `f32`: sums of a few hundred products of them stay exact.
pub fn random_small_ints(rng: &mut TestRng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let magnitude = 1 + rng.next_u32() % 8;
            let sign = if rng.next_u32().is_multiple_of(2) {
                1.0
            } else {
                -1.0
            };
            sign * magnitude as f32
        })
        .collect()
}

pub fn random_u32(rng: &mut TestRng, below: u32) -> u32 {
    rng.next_u32() % below
}

/// Fills a buffer with NaN, so an element the GPU fails to write cannot pass for a right one.
pub fn poison_f32(buffer: &Buffer<f32>) {
    buffer
        .write(&vec![f32::NAN; buffer.len()])
        .expect("poison write");
}

pub fn poison_u32(buffer: &Buffer<u32>) {
    buffer
        .write(&vec![0xDEAD_BEEF; buffer.len()])
        .expect("poison write");
}

/// The unit roundoff of `f32`: one correctly rounded operation is off by at most this much, relatively.
pub const U: f64 = f32::EPSILON as f64 / 2.0;

/// Element-wise: `|actual - expected| <= bound` (the bound, per element, from the arithmetic's rounding);
/// names the first bad index.
#[track_caller]
pub fn assert_within(actual: &[f32], expected: &[f64], bound: &[f64], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    for (i, ((a, e), b)) in actual.iter().zip(expected).zip(bound).enumerate() {
        let error = (f64::from(*a) - e).abs();
        assert!(
            error <= *b,
            "{what}[{i}]: GPU {a}, reference {e}, off by {error:e} (bound {b:e})"
        );
    }
}

/// Element-wise within `1e-5` relative (absolute below 1): for a few operations in `f32` on each side.
#[track_caller]
pub fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
            "{what}[{i}]: GPU {g}, CPU {w}"
        );
    }
}

/// Element-wise bit-for-bit equality, for results whose every operation is correctly rounded in the same
/// order on both sides.
#[track_caller]
pub fn assert_exact(actual: &[f32], expected: &[f32], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(a.to_bits() == e.to_bits(), "{what}[{i}]: GPU {a}, CPU {e}");
    }
}

pub fn read<T: Element>(buffer: &Buffer<T>) -> Vec<T> {
    buffer.read_blocking().expect("readback")
}
