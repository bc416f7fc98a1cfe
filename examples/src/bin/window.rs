//! The Game of Life in a window: each frame, one replay of `Life` (`examples/src/life.rs`: a generation
//! into a texture the graph owns, copied over the board, then painted into an `rgba8unorm` storage texture),
//! and the picture drawn onto the window's surface (`examples/src/present.rs`). The device is the
//! application's own, made for the surface and handed to the graph runtime (`Gpu::from_wgpu`).
//!
//! ```text
//! cargo run --release -p examples --bin window            # until the window closes (or Escape)
//! cargo run --release -p examples --bin window -- 300     # 300 frames, the frame rate, the board checked
//! ```
//!
//! Given a number of frames, it ends by reading the board back and checking it against that many
//! generations on the CPU from the same start, and prints `ok`.
//!
//! It needs a display (X11 or Wayland). `tests/window.rs` checks the same frames offscreen against the CPU.

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use examples::life::{Life, LifeBuffers, cpu_step, random_board};
use examples::present::Presenter;
use examples::{Result, median};
use graph_runtime::{Baked, Gpu, Texture};
use winit::application::ApplicationHandler;
use winit::event::{ElementState, KeyEvent, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

/// Cells across and down; each shown as a few pixels.
const BOARD: [u32; 2] = [320, 200];

fn main() -> Result<()> {
    let frames = match std::env::args().nth(1) {
        None => None,
        Some(n) => Some(
            n.parse::<u64>()
                .map_err(|_| format!("usage: window [FRAMES] (got `{n}`)"))?,
        ),
    };
    let event_loop = EventLoop::new().map_err(|e| {
        format!("no display to open a window on ({e}); `cargo test -p examples --test window` checks the frames offscreen")
    })?;
    let mut app = App {
        frames,
        running: None,
        failed: None,
    };
    event_loop.run_app(&mut app)?;
    if let Some(e) = app.failed {
        return Err(e);
    }
    Ok(())
}

/// The event loop's handler: the window and everything drawn in it, made when the loop resumes.
struct App {
    /// How many frames to draw before closing, if given.
    frames: Option<u64>,
    running: Option<Running>,
    failed: Option<examples::Error>,
}

/// The window, its surface, the graph and what it draws with.
struct Running {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    gpu: Gpu,
    life: Baked<Life>,
    cells: Texture,
    picture: Texture,
    /// The board the first replay started from, and how many replays ran since.
    start: Vec<u32>,
    generations: u64,
    presenter: Presenter,
    /// The queue the runtime submits to, which presents the frames.
    present: wgpu::Queue,
    /// Per frame drawn: the replay (waited) and the whole frame.
    replays: Vec<Duration>,
    frames: Vec<Duration>,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.running.is_none() {
            match Running::new(event_loop) {
                Ok(running) => self.running = Some(running),
                Err(e) => {
                    self.failed = Some(e);
                    event_loop.exit();
                }
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        let Some(running) = &mut self.running else {
            return;
        };
        match event {
            WindowEvent::CloseRequested
            | WindowEvent::KeyboardInput {
                event:
                    KeyEvent {
                        logical_key: Key::Named(NamedKey::Escape),
                        state: ElementState::Pressed,
                        ..
                    },
                ..
            } => event_loop.exit(),
            WindowEvent::Resized(size) => running.resize(size.width, size.height),
            WindowEvent::RedrawRequested => {
                if let Err(e) = running.frame() {
                    self.failed = Some(e);
                    event_loop.exit();
                    return;
                }
                if self.frames.is_some_and(|n| running.generations >= n) {
                    if let Err(e) = running.report() {
                        self.failed = Some(e);
                    }
                    event_loop.exit();
                } else {
                    running.window.request_redraw();
                }
            }
            _ => {}
        }
    }
}

impl Running {
    fn new(event_loop: &ActiveEventLoop) -> Result<Self> {
        let attributes = Window::default_attributes()
            .with_title("graph-runtime: the Game of Life, one replay per frame")
            .with_inner_size(winit::dpi::LogicalSize::new(BOARD[0] * 3, BOARD[1] * 3));
        let window = Arc::new(event_loop.create_window(attributes)?);
        // The display given at creation: wgpu's GL backend needs it to present.
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(
                Box::new(event_loop.owned_display_handle()),
            ));
        let surface = instance.create_surface(window.clone())?;
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            compatible_surface: Some(&surface),
            ..Default::default()
        }))?;
        // Push constants where the adapter has them (the graph's parameters then travel in them).
        let features = adapter.features() & wgpu::Features::IMMEDIATES;
        let limits = wgpu::Limits {
            max_immediate_size: adapter.limits().max_immediate_size,
            ..wgpu::Limits::default()
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("window"),
                required_features: features,
                required_limits: limits,
                ..Default::default()
            }))?;
        let size = window.inner_size();
        let caps = surface.get_capabilities(&adapter);
        // A plain (not sRGB) format where there is one: the picture's bytes reach the screen unchanged.
        let format = caps
            .formats
            .iter()
            .copied()
            .find(|f| !f.is_srgb())
            .or_else(|| caps.formats.first().copied())
            .ok_or("the surface offers no format")?;
        let config = wgpu::SurfaceConfiguration {
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            format,
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode: wgpu::PresentMode::AutoVsync,
            desired_maximum_frame_latency: 2,
            alpha_mode: caps.alpha_modes.first().copied().unwrap_or_default(),
            view_formats: Vec::new(),
            color_space: wgpu::SurfaceColorSpace::Auto,
        };
        surface.configure(&device, &config);
        // wgpu presents through the queue; the runtime submits replays to the same queue (an application's
        // device: never a queue of its own), so a frame is presented after its replay and draw.
        let present = queue.clone();
        let gpu = Gpu::from_wgpu(device, queue)?;
        let cells = gpu.texture("texture_2d<r32uint>", [BOARD[0], BOARD[1], 1])?;
        let picture = gpu.texture(
            "texture_storage_2d<rgba8unorm, write>",
            [BOARD[0], BOARD[1], 1],
        )?;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        let board = random_board(BOARD[0] as usize, BOARD[1] as usize, seed);
        cells.write(bytemuck::cast_slice(&board))?;
        let life = Life::bake(
            &gpu,
            LifeBuffers {
                cells: &cells,
                picture: &picture,
            },
        )?;
        println!("adapter:  {}", gpu.summary());
        println!(
            "board:    {} x {} cells, {} recorder, drawn on a {} x {} {format:?} surface",
            BOARD[0],
            BOARD[1],
            life.untyped().recorder(),
            config.width,
            config.height
        );
        let presenter = Presenter::new(gpu.device(), format);
        window.request_redraw();
        Ok(Running {
            window,
            surface,
            config,
            gpu,
            life,
            cells,
            picture,
            start: board,
            generations: 0,
            presenter,
            present,
            replays: Vec::new(),
            frames: Vec::new(),
        })
    }

    fn resize(&mut self, width: u32, height: u32) {
        if width > 0 && height > 0 {
            self.config.width = width;
            self.config.height = height;
            self.surface.configure(self.gpu.device(), &self.config);
        }
    }

    /// One generation, drawn.
    fn frame(&mut self) -> Result<()> {
        let start = Instant::now();
        self.life.replay()?.wait()?;
        self.generations += 1;
        self.replays.push(start.elapsed());
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(frame)
            | wgpu::CurrentSurfaceTexture::Suboptimal(frame) => frame,
            // Resized or lost under us: configured again, drawn next frame.
            _ => {
                self.surface.configure(self.gpu.device(), &self.config);
                return Ok(());
            }
        };
        let view = frame.texture.create_view(&Default::default());
        let mut encoder = self
            .gpu
            .device()
            .create_command_encoder(&Default::default());
        self.presenter.draw(
            &self.gpu,
            &mut encoder,
            self.picture.wgpu(),
            &view,
            [self.config.width, self.config.height],
        );
        self.gpu.queue().submit([encoder.finish()]);
        self.window.pre_present_notify();
        self.present.present(frame);
        self.frames.push(start.elapsed());
        Ok(())
    }

    /// The frame rate, and the board checked against the CPU's as many generations on.
    fn report(&self) -> Result<()> {
        println!(
            "frames:   {} drawn of {} generations; replay median {} (a generation, waited), frame median {} \
             (replay, draw, present at the display's pace)",
            self.frames.len(),
            self.generations,
            examples::ms(median(&self.replays)),
            examples::ms(median(&self.frames)),
        );
        let [width, height] = BOARD.map(|n| n as usize);
        let mut want = self.start.clone();
        for _ in 0..self.generations {
            want = cpu_step(&want, width, height);
        }
        let got: Vec<u32> = bytemuck::cast_slice(&self.cells.read_blocking()?).to_vec();
        let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        if differ > 0 {
            return Err(format!(
                "after {} generations {differ} cells differ from the CPU's",
                self.generations
            )
            .into());
        }
        let alive = got.iter().filter(|&&a| a > 0).count();
        // The last frame's picture, as the graph painted it (three pixels per cell, as the window opens).
        let painted = self.picture.read_blocking()?;
        let picture = image::RgbaImage::from_raw(BOARD[0], BOARD[1], painted)
            .ok_or("the picture is not the board's size")?;
        let path = examples::out_dir()?.join("window.png");
        image::imageops::resize(
            &picture,
            BOARD[0] * 3,
            BOARD[1] * 3,
            image::imageops::FilterType::Nearest,
        )
        .save(&path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!(
            "board:    {alive} cells alive after {} generations, as on the CPU; the last picture in {}\nok",
            self.generations,
            path.display()
        );
        Ok(())
    }
}
