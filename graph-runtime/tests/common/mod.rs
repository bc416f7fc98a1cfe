//! Shared by the GPU tests: the device, fresh random inputs, poisoned outputs, comparisons.

#![allow(dead_code, reason = "each test file uses its own subset")]

use graph_runtime::{Buffer, Element, Gpu};
use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// The GPU, or a failure that says how to get one: these tests never pass without running.
pub fn gpu() -> Gpu {
    match Gpu::new_blocking() {
        Ok(gpu) => {
            eprintln!("adapter: {}", gpu.summary());
            gpu
        }
        Err(e) => panic!(
            "GPU tests need a GPU adapter and found none: {e}\n\
             On Debian/Ubuntu without a GPU, install Mesa's software Vulkan driver: \
             `sudo apt-get install mesa-vulkan-drivers libvulkan1`, or run `cargo xtask test`, which does it."
        ),
    }
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

/// Element-wise comparison with a relative tolerance; names the first bad index.
pub fn assert_close(actual: &[f32], expected: &[f32], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        let tolerance = 1e-5 * e.abs().max(1.0);
        assert!((a - e).abs() <= tolerance, "{what}[{i}]: GPU {a}, CPU {e}");
    }
}

pub fn read<T: Element>(buffer: &Buffer<T>) -> Vec<T> {
    buffer.read_blocking().expect("readback")
}
