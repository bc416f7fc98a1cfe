//! Drawing a graph's output texture onto a render target: a window's surface texture each frame in
//! `src/bin/window.rs`, an offscreen texture in `tests/window.rs`. One full-screen triangle whose fragments
//! each load the texel under them (no filtering: pixel `(x, y)` of a `tw` x `th` target shows texel
//! `(x * w / tw, y * h / th)` of a `w` x `h` picture, exactly [`presented_texel`]), so the test can compare
//! the presented pixels with the CPU's.

use std::borrow::Cow;

/// The render pipeline that draws a `texture_2d<f32>` over a target of one format.
#[derive(Debug)]
pub struct Presenter {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::RenderPipeline,
    /// The target's size in pixels, which each draw writes first (`vec2<u32>`).
    target_size: wgpu::Buffer,
}

const PRESENT_WGSL: &str = "
@group(0) @binding(0) var picture: texture_2d<f32>;
@group(0) @binding(1) var<uniform> target_size: vec2<u32>;

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    // One triangle over the whole target: (-1, -1), (3, -1), (-1, 3).
    let corner = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(corner * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let size = textureDimensions(picture);
    let texel = vec2<u32>(position.xy) * size / target_size;
    return textureLoad(picture, min(texel, size - 1u), 0);
}
";

impl Presenter {
    /// The pipeline for targets of `format`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Self {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("present"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
            ],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("present"),
            source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(PRESENT_WGSL)),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("present"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("present"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            primitive: Default::default(),
            depth_stencil: None,
            multisample: Default::default(),
            multiview_mask: None,
            cache: None,
        });
        let target_size = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("present target size"),
            size: 8,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Presenter {
            layout,
            pipeline,
            target_size,
        }
    }

    /// Records the draw of `picture` over `target` (`size` pixels) into `encoder` (of `gpu`'s device), after
    /// queueing the size's write on `gpu`'s queue (which runs it before the encoder's commands once they are
    /// submitted there: through [`graph_runtime::Gpu::queue`], ordered after the graph's replays).
    pub fn draw(
        &self,
        gpu: &graph_runtime::Gpu,
        encoder: &mut wgpu::CommandEncoder,
        picture: &wgpu::Texture,
        target: &wgpu::TextureView,
        size: [u32; 2],
    ) {
        let device = gpu.device();
        gpu.queue()
            .write_buffer(&self.target_size, 0, bytemuck::cast_slice(&size));
        let view = picture.create_view(&Default::default());
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("present"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: self.target_size.as_entire_binding(),
                },
            ],
        });
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("present"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.draw(0..3, 0..1);
    }
}

/// The texel of a `picture` (`width` x `height`) that pixel `(x, y)` of a `target` shows, as the fragment
/// shader picks it.
pub fn presented_texel((x, y): (u32, u32), picture: [u32; 2], target: [u32; 2]) -> (u32, u32) {
    (
        (x * picture[0] / target[0]).min(picture[0] - 1),
        (y * picture[1] / target[1]).min(picture[1] - 1),
    )
}
