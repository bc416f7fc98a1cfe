//! The window example's frames, offscreen: `Life` advances a random board a generation per replay (on the
//! native recorder where the device has it: a texture copy between its command buffers every replay), each
//! generation and its picture equal to the CPU's, and the picture is presented with the example's own
//! `Presenter` into an offscreen target of another size, whose every pixel is the texel the CPU says it shows.

#![forbid(unsafe_code)]

use examples::life::{Life, LifeBuffers, cpu_paint, cpu_step, random_board};
use examples::present::{Presenter, presented_texel};
use graph_runtime::{Gpu, Texture};

fn gpu() -> Gpu {
    Gpu::new_blocking().unwrap_or_else(|e| {
        panic!(
            "{e}\nthe tests need a GPU adapter: `cargo xtask test` installs Mesa's software Vulkan driver \
             (llvmpipe) where none is found"
        )
    })
}

/// The bytes of an `rgba8unorm` target read back, four per pixel.
fn read_target(gpu: &Gpu, target: &wgpu::Texture) -> Vec<u8> {
    Texture::from_wgpu(gpu, target.clone())
        .read_blocking()
        .expect("read the presented target")
}

#[test]
fn generations_and_their_presented_pixels_match_the_cpu() -> Result<(), graph_runtime::Error> {
    let gpu = gpu();
    let (width, height) = (37usize, 23usize);
    let cells = gpu.texture("texture_2d<r32uint>", [width as u32, height as u32, 1])?;
    let picture = gpu.texture(
        "texture_storage_2d<rgba8unorm, write>",
        [width as u32, height as u32, 1],
    )?;
    let mut board = random_board(width, height, 0x5eed);
    cells.write(bytemuck::cast_slice(&board))?;
    let mut life = Life::bake(
        &gpu,
        LifeBuffers {
            cells: &cells,
            picture: &picture,
        },
    )?;
    // The presented target: not a multiple of the board, so the texel each pixel shows varies in step.
    let target_size = [width as u32 * 5 / 2, height as u32 * 3 / 2];
    let target = gpu.device().create_texture(&wgpu::TextureDescriptor {
        label: Some("offscreen frame"),
        size: wgpu::Extent3d {
            width: target_size[0],
            height: target_size[1],
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let presenter = Presenter::new(gpu.device(), wgpu::TextureFormat::Rgba8Unorm);
    let mut live_counts = Vec::new();
    for generation in 1..=12 {
        picture.write(&vec![0xAB; width * height * 4])?;
        life.replay()?.wait()?;
        board = cpu_step(&board, width, height);
        let got: Vec<u32> = bytemuck::cast_slice(&cells.read_blocking()?).to_vec();
        assert_eq!(
            got,
            board,
            "generation {generation} ({})",
            life.untyped().recorder()
        );
        let painted = cpu_paint(&board);
        assert_eq!(picture.read_blocking()?, painted, "picture {generation}");
        live_counts.push(board.iter().filter(|&&a| a > 0).count());
        // The frame as the window shows it.
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        let view = target.create_view(&Default::default());
        presenter.draw(&gpu, &mut encoder, picture.wgpu(), &view, target_size);
        gpu.queue().submit([encoder.finish()]);
        let shown = read_target(&gpu, &target);
        for y in 0..target_size[1] {
            for x in 0..target_size[0] {
                let (tx, ty) = presented_texel((x, y), [width as u32, height as u32], target_size);
                let at = |row: u32, col: u32, w: u32| ((row * w + col) * 4) as usize;
                let pixel = &shown[at(y, x, target_size[0])..][..4];
                let texel = &painted[at(ty, tx, width as u32)..][..4];
                assert_eq!(pixel, texel, "generation {generation}, pixel ({x}, {y})");
            }
        }
    }
    // The board lived: not all dead, not all the same from one generation to the next.
    assert!(live_counts.iter().all(|&n| n > 0), "{live_counts:?}");
    assert!(
        live_counts.windows(2).any(|w| w[0] != w[1]),
        "{live_counts:?}"
    );
    Ok(())
}
