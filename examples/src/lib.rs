//! What the example programs share: their graphs (the flagship's edge pipeline, its detector on textures, the
//! Game of Life) with their CPU references, the window example's presenter, and small helpers: where
//! outputs go, turning `f32` images into PNGs, and timing statistics. Each program in `src/bin/` is meant to
//! be read on its own; this crate keeps the bookkeeping out of their way.

#![forbid(unsafe_code)]

pub mod edge_detect;
pub mod edge_pipeline;
pub mod life;
pub mod present;
pub mod texture_edges;
pub mod trace_svg;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Any error, boxed: what the helpers below produce and what [`Error`] wraps.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The error type of every example's `main`: anything that converts into a boxed `std::error::Error`
/// (including [`graph_runtime::Error`], I/O and image errors, and plain `String`s and `&str`s) converts into
/// it with `?`.
///
/// It exists for one reason: when `main` returns `Err(e)`, Rust prints `Error: {e:?}`. The `Debug` of an error
/// enum or a boxed `String` is meant for programmers (`"quoted"`, or `Variant { field: .. }`), so this type's
/// `Debug` prints the readable message instead, followed by the chain of causes.
pub struct Error(BoxError);

impl<E: Into<BoxError>> From<E> for Error {
    fn from(e: E) -> Self {
        Error(e.into())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, "\n  caused by: {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The workspace's `out/` directory (git-ignored), created if missing.
///
/// It is found from this crate's manifest directory rather than the current directory, so the outputs land in
/// the same place whichever directory `cargo run` is started from.
pub fn out_dir() -> Result<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest);
    let dir = root.join("out");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Writes a grayscale image of `f32` values to a PNG, mapping `lo..=hi` to black..white (values outside are
/// clamped).
pub fn save_gray_png(
    path: &Path,
    width: u32,
    height: u32,
    pixels: &[f32],
    lo: f32,
    hi: f32,
) -> Result<()> {
    let span = if hi > lo { hi - lo } else { 1.0 };
    let bytes: Vec<u8> = pixels
        .iter()
        .map(|&v| (((v - lo) / span).clamp(0.0, 1.0) * 255.0).round() as u8)
        .collect();
    let img = image::GrayImage::from_raw(width, height, bytes).ok_or_else(|| {
        format!(
            "{} pixels do not make a {width}x{height} image",
            pixels.len()
        )
    })?;
    img.save(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// Writes an RGB image (one `[r, g, b]` per pixel) to a PNG.
pub fn save_rgb_png(path: &Path, width: u32, height: u32, pixels: &[[u8; 3]]) -> Result<()> {
    let bytes: Vec<u8> = pixels.iter().flatten().copied().collect();
    let img = image::RgbImage::from_raw(width, height, bytes).ok_or_else(|| {
        format!(
            "{} pixels do not make a {width}x{height} image",
            pixels.len()
        )
    })?;
    img.save(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// A false-colour map for `t` in `0..=1` (clamped): black, deep purple, red, orange, yellow, white; an
/// approximation of the "inferno" palette by linear interpolation between a few stops.
pub fn inferno(t: f32) -> [u8; 3] {
    const STOPS: [[f32; 3]; 6] = [
        [0.0, 0.0, 0.02],
        [0.26, 0.04, 0.41],
        [0.58, 0.15, 0.40],
        [0.87, 0.32, 0.23],
        [0.99, 0.65, 0.04],
        [0.99, 1.0, 0.64],
    ];
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (STOPS.len() - 1) as f32;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f32;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |k: usize| ((a[k] + (b[k] - a[k]) * f) * 255.0).round() as u8;
    [mix(0), mix(1), mix(2)]
}

/// The median of some durations (the mean of the middle two for an even count); zero for none.
pub fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    match sorted.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
    }
}

/// The largest `|a[i] - b[i]|` and where it is; `(0.0, 0)` for empty slices. Lengths must match.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> Result<(f32, usize)> {
    if a.len() != b.len() {
        return Err(format!("comparing {} values with {}", a.len(), b.len()).into());
    }
    Ok(a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .enumerate()
        .fold((0.0f32, 0usize), |(best, at), (i, d)| {
            // NaN anywhere counts as the worst possible difference.
            if d > best || d.is_nan() && !best.is_nan() {
                (d, i)
            } else {
                (best, at)
            }
        }))
}

/// Milliseconds with three decimals, for printing.
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let d = Duration::from_millis;
        assert_eq!(median(&[d(3), d(1), d(2)]), d(2));
        assert_eq!(
            median(&[d(4), d(1), d(3), d(2)]),
            Duration::from_micros(2500)
        );
        assert_eq!(median(&[]), Duration::ZERO);
    }

    #[test]
    fn max_abs_diff_finds_the_worst_and_nan() {
        assert_eq!(
            max_abs_diff(&[1.0, 2.0, 3.0], &[1.0, 2.5, 3.1]).ok(),
            Some((0.5, 1))
        );
        let (d, at) = max_abs_diff(&[0.0, f32::NAN], &[0.0, 0.0]).unwrap_or((0.0, 0));
        assert!(d.is_nan() && at == 1);
        assert!(max_abs_diff(&[1.0], &[]).is_err());
    }

    #[test]
    fn inferno_ends() {
        assert_eq!(inferno(0.0), [0, 0, 5]);
        assert_eq!(inferno(1.0), [252, 255, 163]);
        assert_eq!(inferno(f32::NAN), inferno(0.0));
    }
}
