//! Conway's Game of Life on textures, `Life`: one generation per replay, and its picture. The window example
//! (`src/bin/window.rs`) presents the picture every frame; `tests/window.rs` checks generations and the
//! presented pixels against [`cpu_step`] and [`cpu_paint`].
//!
//! ```text
//!   cells (r32uint, the app's) ─▶ step ─▶ next (owned) ─▶ copy advance ─▶ cells ─▶ paint ─▶ picture (rgba8unorm)
//! ```
//!
//! A cell holds its age: 0 dead, else the generations it has lived (up to 255). The board is a torus.

use graph_runtime::graph;

graph! {
    /// One generation of the Game of Life on a torus (a cell is born with three live neighbours and lives on
    /// with two or three), then the board painted: dead cells dark, live ones from yellow to red with age.
    pub graph Life {
        textures {
            /// The board: each cell's age (0 dead). Replaced by the next generation.
            cells: texture_2d<r32uint> = inout,
            /// The next generation, before it is copied over the board.
            next: texture_2d<r32uint; cells>,
            /// The board painted, one texel per cell.
            picture: texture_storage_2d<rgba8unorm, write; cells> = output,
        }
        kernel step(cells: read, next: write) threads(cells.width(), cells.height()) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let size = textureDimensions(cells);
                if (gid.x >= size.x || gid.y >= size.y) { return; }
                var alive = 0u;
                for (var dy = 0u; dy < 3u; dy++) {
                    for (var dx = 0u; dx < 3u; dx++) {
                        if (dx == 1u && dy == 1u) { continue; }
                        let at = (gid.xy + size + vec2<u32>(dx, dy) - vec2<u32>(1u)) % size;
                        alive += min(textureLoad(cells, at, 0).r, 1u);
                    }
                }
                let age = textureLoad(cells, gid.xy, 0).r;
                var next_age = 0u;
                if (age > 0u && (alive == 2u || alive == 3u)) {
                    next_age = min(age + 1u, 255u);
                } else if (age == 0u && alive == 3u) {
                    next_age = 1u;
                }
                textureStore(next, gid.xy, vec4<u32>(next_age, 0u, 0u, 0u));
            }
        }
        copy advance(next -> cells);
        kernel paint(cells: read, picture: write) threads(cells.width(), cells.height()) {
            @compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let size = textureDimensions(cells);
                if (gid.x >= size.x || gid.y >= size.y) { return; }
                let age = textureLoad(cells, gid.xy, 0).r;
                var rgb = vec3<u32>(12u, 16u, 32u);
                if (age > 0u) {
                    let a = min(age, 32u);
                    rgb = vec3<u32>(255u, 248u - a * 6u, 96u - a * 3u);
                }
                textureStore(picture, gid.xy, vec4<f32>(vec3<f32>(rgb) / 255.0, 1.0));
            }
        }
    }
}

/// The next generation of `cells` (ages, row by row, `width` wide), as `Life`'s `step` computes it.
pub fn cpu_step(cells: &[u32], width: usize, height: usize) -> Vec<u32> {
    let mut next = vec![0; cells.len()];
    for y in 0..height {
        for x in 0..width {
            let mut alive = 0;
            for dy in 0..3 {
                for dx in 0..3 {
                    if (dx, dy) == (1, 1) {
                        continue;
                    }
                    let (nx, ny) = ((x + width + dx - 1) % width, (y + height + dy - 1) % height);
                    alive += cells[ny * width + nx].min(1);
                }
            }
            let age = cells[y * width + x];
            next[y * width + x] = match (age, alive) {
                (1.., 2 | 3) => (age + 1).min(255),
                (0, 3) => 1,
                _ => 0,
            };
        }
    }
    next
}

/// The picture of `cells` as `Life`'s `paint` writes it: `rgba8unorm` bytes, four per cell.
pub fn cpu_paint(cells: &[u32]) -> Vec<u8> {
    cells
        .iter()
        .flat_map(|&age| match age {
            0 => [12, 16, 32, 255],
            _ => {
                let a = age.min(32) as u8;
                [255, 248 - a * 6, 96 - a * 3, 255]
            }
        })
        .collect()
}

/// A board of `width` x `height` cells, about a third alive, from `seed` (xorshift: the same seed, the same
/// board).
pub fn random_board(width: usize, height: usize, seed: u64) -> Vec<u32> {
    let mut state = seed | 1;
    (0..width * height)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            u32::from(state.is_multiple_of(3))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blinker_turns_and_a_glider_wraps_round_the_torus() {
        // A blinker: three in a row become three in a column, and back.
        let (w, h) = (5, 5);
        let mut board = vec![0; w * h];
        for x in 1..4 {
            board[2 * w + x] = 1;
        }
        let turned = cpu_step(&board, w, h);
        let alive: Vec<usize> = (0..w * h).filter(|&i| turned[i] > 0).collect();
        assert_eq!(alive, vec![7, 12, 17]);
        assert_eq!(turned[12], 2, "the centre cell lived on and aged");
        let back = cpu_step(&turned, w, h);
        let alive: Vec<usize> = (0..w * h).filter(|&i| back[i] > 0).collect();
        assert_eq!(alive, vec![11, 12, 13]);
        // A glider on a 6 x 6 torus comes back to its shape after 24 generations (6 cells diagonally).
        let (w, h) = (6, 6);
        let mut glider = vec![0; w * h];
        for (x, y) in [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)] {
            glider[y * w + x] = 1;
        }
        let mut board = glider.clone();
        for _ in 0..24 {
            board = cpu_step(&board, w, h);
        }
        let shape = |b: &[u32]| b.iter().map(|&a| a.min(1)).collect::<Vec<_>>();
        assert_eq!(shape(&board), shape(&glider));
    }

    #[test]
    fn paint_colours_by_age() {
        assert_eq!(
            cpu_paint(&[0, 1, 32, 200]),
            [
                12, 16, 32, 255, 255, 242, 93, 255, 255, 56, 0, 255, 255, 56, 0, 255
            ]
        );
    }
}
