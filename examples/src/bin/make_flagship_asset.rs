//! Draws `examples/assets/shapes.png`, the input of the `flagship` example, and is kept so the picture can be
//! reproduced or changed: `cargo run --release -p examples --bin make_flagship_asset`.
//!
//! It is a 512x512 grayscale picture made for an edge detector: a smooth background gradient (which must *not*
//! produce edges), hard-edged shapes of several contrasts (a disk, a ring, a triangle, a diamond, a
//! checkerboard), strokes of varying width (a title in a blocky 5x7 font, a spiral, a wavy line) and a band of
//! soft sine stripes (gradual edges, which a threshold keeps or drops depending on its value). Every pixel
//! averages 4x4 sub-samples, so edges are anti-aliased. No randomness: the output is the same on every run.
//! This runs on the CPU only.

#![forbid(unsafe_code)]

use std::f32::consts::{PI, TAU};
use std::path::Path;

use examples::{Result, save_gray_png};

const SIZE: u32 = 512;
/// Sub-samples per pixel along each axis.
const AA: u32 = 4;

fn main() -> Result<()> {
    let mut pixels = Vec::with_capacity((SIZE * SIZE) as usize);
    for py in 0..SIZE {
        for px in 0..SIZE {
            let mut sum = 0.0;
            for sy in 0..AA {
                for sx in 0..AA {
                    let x = px as f32 + (sx as f32 + 0.5) / AA as f32;
                    let y = py as f32 + (sy as f32 + 0.5) / AA as f32;
                    sum += scene(x, y);
                }
            }
            pixels.push(sum / (AA * AA) as f32);
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/shapes.png");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    save_gray_png(&path, SIZE, SIZE, &pixels, 0.0, 1.0)?;
    println!("wrote {} ({SIZE}x{SIZE})", path.display());
    Ok(())
}

/// The picture's brightness (0 = black, 1 = white) at a point, painted back to front.
fn scene(x: f32, y: f32) -> f32 {
    let s = SIZE as f32;
    // Background: a diagonal ramp with a soft glow at the top left. Smooth everywhere, so after the blur its
    // gradient is tiny and the threshold removes it.
    let glow = (-((x - 60.0).powi(2) + (y - 60.0).powi(2)) / (2.0 * 140.0f32.powi(2))).exp();
    let mut v = 0.30 + 0.25 * (x + y) / (2.0 * s) + 0.15 * glow;

    // The title, in white strokes.
    if in_text("GPU GRAPH", 97.0, 22.0, 6.0, x, y) {
        v = 0.95;
    }

    // Row 1: a bright disk, a dark triangle, a dark ring.
    if dist(x, y, 128.0, 170.0) < 70.0 {
        v = 0.85;
    }
    if in_triangle(x, y, [(256.0, 120.0), (300.0, 215.0), (212.0, 215.0)]) {
        v = 0.08;
    }
    let r = dist(x, y, 384.0, 170.0);
    if (48.0..70.0).contains(&r) {
        v = 0.10;
    }

    // Row 2: a diamond (a square turned 45 degrees), a checkerboard, a spiral stroke.
    if (x - 128.0).abs() + (y - 330.0).abs() < 65.0 {
        v = 0.70;
    }
    if (208.0..304.0).contains(&x) && (282.0..378.0).contains(&y) {
        let cell = ((x - 208.0) / 12.0) as u32 + ((y - 282.0) / 12.0) as u32;
        v = if cell.is_multiple_of(2) { 0.92 } else { 0.15 };
    }
    if spiral_distance(x - 384.0, y - 330.0, 60.0, 3.0) < 2.5 {
        v = 0.95;
    }

    // Row 3: soft sine stripes (no hard edge at all), crossed by a wavy dark stroke whose width grows from
    // 1 to 7 pixels left to right.
    if (420.0..500.0).contains(&y) && (24.0..488.0).contains(&x) {
        v = 0.5 + 0.35 * (x / 9.0).sin();
    }
    let (wave, slope) = (
        460.0 + 22.0 * (x / 30.0).sin(),
        22.0 / 30.0 * (x / 30.0).cos(),
    );
    let width = 1.0 + 6.0 * (x - 24.0) / (488.0 - 24.0);
    if (24.0..488.0).contains(&x) && (y - wave).abs() / (1.0 + slope * slope).sqrt() < width / 2.0 {
        v = 0.05;
    }
    v
}

fn dist(x: f32, y: f32, cx: f32, cy: f32) -> f32 {
    ((x - cx).powi(2) + (y - cy).powi(2)).sqrt()
}

/// Inside a triangle: on the same side of all three edges.
fn in_triangle(x: f32, y: f32, t: [(f32, f32); 3]) -> bool {
    let side =
        |(ax, ay): (f32, f32), (bx, by): (f32, f32)| (bx - ax) * (y - ay) - (by - ay) * (x - ax);
    let (d0, d1, d2) = (side(t[0], t[1]), side(t[1], t[2]), side(t[2], t[0]));
    (d0 >= 0.0 && d1 >= 0.0 && d2 >= 0.0) || (d0 <= 0.0 && d1 <= 0.0 && d2 <= 0.0)
}

/// Distance (along the radius) from `(x, y)` to an Archimedean spiral `r = b*theta` that reaches `radius`
/// after `turns` turns.
fn spiral_distance(x: f32, y: f32, radius: f32, turns: f32) -> f32 {
    let b = radius / (turns * TAU);
    let r = (x * x + y * y).sqrt();
    let theta = y.atan2(x).rem_euclid(TAU);
    let mut best = f32::MAX;
    for k in 0..=turns.ceil() as u32 {
        let arm_angle = theta + k as f32 * TAU;
        if arm_angle <= turns * TAU + PI / 8.0 {
            best = best.min((r - b * arm_angle).abs());
        }
    }
    best
}

/// Inside `text` drawn in a 5x7 pixel font with cells of `scale` pixels, its top left at `(left, top)`.
fn in_text(text: &str, left: f32, top: f32, scale: f32, x: f32, y: f32) -> bool {
    // Each character takes 6 columns: 5 of glyph and one of spacing.
    let (col, row) = ((x - left) / scale, (y - top) / scale);
    if col < 0.0 || !(0.0..7.0).contains(&row) {
        return false;
    }
    let (index, col_in) = ((col / 6.0) as usize, (col % 6.0) as usize);
    let Some(glyph) = text.chars().nth(index).and_then(glyph) else {
        return false;
    };
    col_in < 5 && glyph[row as usize].as_bytes()[col_in] == b'#'
}

/// The few glyphs the title needs.
fn glyph(c: char) -> Option<[&'static str; 7]> {
    Some(match c {
        'G' => [
            ".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".###.",
        ],
        'P' => [
            "####.", "#...#", "#...#", "####.", "#....", "#....", "#....",
        ],
        'U' => [
            "#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###.",
        ],
        'R' => [
            "####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#",
        ],
        'A' => [
            ".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#",
        ],
        'H' => [
            "#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#",
        ],
        _ => return None,
    })
}
