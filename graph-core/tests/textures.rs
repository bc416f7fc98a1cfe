//! The checks of textures, through the builder: each mistake at its place with the words that explain it,
//! with a positive control beside it (the same graph, mistake removed, checks), and what a checked texture
//! kernel becomes (declarations written from the parsed type, edges through the texture, pointwise where
//! it touches only its own texels).

#![forbid(unsafe_code)]

mod common;

use graph_core::builder::{GraphBuilder, KernelSpec};
use graph_core::deps::Hazard;
use graph_core::desc::{EdgeOriginDesc, OpDesc};
use graph_core::ir::{AccessMode, Role};
use graph_core::{Diagnostic, Loc};

use common::LIBRARY;

/// A copy of each texel of `src` into `dst` at the same coordinate.
const COPY_TEXELS: &str = "@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    textureStore(dst, gid.xy, textureLoad(src, gid.xy, 0));
}";

/// `src` (of `src_ty`) copied texel by texel into `dst` (of `dst_ty`, bound with `dst_mode`).
fn copier(src_ty: &str, dst_ty: &str, dst_mode: AccessMode) -> GraphBuilder {
    let mut b = GraphBuilder::new("Copier");
    b.param("w", "u32")
        .texture("src", src_ty, Role::Input)
        .texture("dst", dst_ty, Role::Output);
    let spec = KernelSpec::wgsl(COPY_TEXELS).read("src");
    let spec = match dst_mode {
        AccessMode::Read => spec.read("dst"),
        AccessMode::Write => spec.write("dst"),
        AccessMode::ReadWrite => spec.read_write("dst"),
    };
    b.kernel("copy_texels", spec.threads(&["params.w", "params.w"]));
    b
}

fn errors(b: &GraphBuilder) -> Vec<Diagnostic> {
    match b.build(&LIBRARY) {
        Ok(_) => panic!("the graph checked"),
        Err(e) => e.diagnostics,
    }
}

fn only_error(b: &GraphBuilder) -> Diagnostic {
    let mut list = errors(b);
    assert_eq!(list.len(), 1, "{list:#?}");
    list.remove(0)
}

#[test]
fn a_checked_texture_kernel_binds_what_its_declaration_says_and_is_pointwise_at_its_own_texel() {
    let desc = copier(
        "texture_2d<rgba8unorm>",
        "texture_2d<rgba8unorm>",
        AccessMode::Write,
    )
    .build(&LIBRARY)
    .expect("checks");
    let OpDesc::Kernel(k) = &desc.nodes[0].op else {
        panic!("a kernel")
    };
    assert!(
        k.declarations
            .contains("@group(0) @binding(0) var src: texture_2d<f32>;"),
        "{}",
        k.declarations
    );
    assert!(
        k.declarations
            .contains("@group(0) @binding(1) var dst: texture_storage_2d<rgba8unorm, write>;"),
        "{}",
        k.declarations
    );
    // Each invocation loads and stores the texel at its own coordinate, over a launch of one invocation
    // per coordinate: pointwise. The neighbourhood proofs look at buffers only.
    assert!(k.pointwise && k.reach.is_none() && k.grid.is_none());
    assert_eq!(
        desc.buffers[0].texture.as_deref(),
        Some("texture_2d<rgba8unorm>")
    );
    assert_eq!(desc.buffers[0].elem.wgsl(), "vec4<f32>");
    desc.validate(desc.params.size as usize)
        .expect("a checked description validates");
}

#[test]
fn edges_are_inferred_through_textures() {
    let mut b = copier(
        "texture_2d<r32float>",
        "texture_2d<r32float>",
        AccessMode::Write,
    );
    b.output("out", "f32");
    b.kernel(
        "first_texel",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main() { out[0] = textureLoad(dst, vec2<u32>(0u, 0u), 0).r; }",
        )
        .read("dst")
        .write("out")
        .threads(&["1"]),
    );
    let desc = b.build(&LIBRARY).expect("checks");
    assert!(
        desc.edges.iter().any(|e| e.from == 0
            && e.to == 1
            && e.origin
                == EdgeOriginDesc::Inferred {
                    buffer: 1,
                    hazard: Hazard::ReadAfterWrite
                }),
        "{:?}",
        desc.edges
    );
}

#[test]
fn an_unknown_texel_format_is_refused_at_its_type_with_a_suggestion() {
    let d = only_error(&copier(
        "texture_2d<rgba8unorn>",
        "texture_2d<rgba8unorm>",
        AccessMode::Write,
    ));
    assert_eq!(d.loc, Loc::BufferType(0));
    assert!(
        d.message
            .contains("texture `src` cannot be `texture_2d<rgba8unorn>`")
            && d.message.contains("did you mean `rgba8unorm`?"),
        "{}",
        d.message
    );
}

#[test]
fn text_past_a_texture_type_never_reaches_wgsl() {
    let hostile =
        "texture_2d<rgba8unorm>; @group(0) @binding(7) var<storage, read_write> x: array<f32>";
    let d = only_error(&copier(
        hostile,
        "texture_2d<rgba8unorm>",
        AccessMode::Write,
    ));
    assert_eq!(d.loc, Loc::BufferType(0));
    assert!(d.message.contains("a texture type is"), "{}", d.message);
}

#[test]
fn storage_that_not_every_device_allows_names_the_feature() {
    // Positive control: r32float is read-write storage everywhere.
    copier(
        "texture_2d<r32float>",
        "texture_2d<r32float>",
        AccessMode::ReadWrite,
    )
    .build(&LIBRARY)
    .expect("r32float read_write checks");
    let d = only_error(&copier(
        "texture_2d<rgba8unorm>",
        "texture_2d<rgba8unorm>",
        AccessMode::ReadWrite,
    ));
    assert_eq!(d.loc, Loc::AccessMode { node: 0, index: 1 });
    assert!(
        d.message
            .contains("binds `dst` (rgba8unorm) as `read_write` storage")
            && d.message
                .contains("TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES"),
        "{}",
        d.message
    );
    assert!(d.help.as_deref().unwrap_or_default().contains("r32float"));
    let d = only_error(&copier(
        "texture_2d<rgba8unorm>",
        "texture_2d<bgra8unorm>",
        AccessMode::Write,
    ));
    assert!(d.message.contains("BGRA8UNORM_STORAGE"), "{}", d.message);
}

#[test]
fn a_storage_declaration_allows_its_own_access_only() {
    copier(
        "texture_2d<r32float>",
        "texture_storage_2d<r32float, write>",
        AccessMode::Write,
    )
    .build(&LIBRARY)
    .expect("the declared access checks");
    let d = only_error(&copier(
        "texture_2d<r32float>",
        "texture_storage_2d<r32float, write>",
        AccessMode::ReadWrite,
    ));
    assert_eq!(d.loc, Loc::AccessMode { node: 0, index: 1 });
    assert!(
        d.message.contains(
            "binds `dst` `read_write`, but it is declared `texture_storage_2d<r32float, write>`"
        ),
        "{}",
        d.message
    );
}

#[test]
fn kernels_fills_copies_transfers_and_host_tasks_use_textures_whole_and_library_kernels_do_not() {
    let mut b = GraphBuilder::new("Moves");
    b.texture("t", "texture_2d<r32float>", Role::InOut)
        .texture("u", "texture_2d<r32float>", Role::Output)
        .inout("x", "f32")
        .inout("y", "f32");
    // Whole textures are filled, and move through copies (buffer to texture, texture to texture, texture
    // to buffer), uploads and readbacks.
    b.fill("clear", "u", "vec4<f32>(0.5)")
        .copy("into_texture", "x", "t")
        .copy("twin", "t", "u")
        .copy("out_of_texture", "u", "y")
        .upload("put", "t")
        .readback("get", "u");
    let base = b.clone();
    let desc = base.build(&LIBRARY).expect("whole moves check");
    assert!(
        matches!(desc.nodes[0].op, OpDesc::Kernel(_)),
        "a fill is a kernel"
    );
    assert!(matches!(
        desc.nodes[2].op,
        OpDesc::Copy { src: 0, dst: 1, .. }
    ));
    // A host task reads and writes a texture's texels.
    b.host("look", &[("t", AccessMode::Read)]);
    b.build(&LIBRARY).expect("a host task of a texture checks");
    b.library("scaled", "scale", &[("data", "t")], &[("alpha", "2.0")])
        .fill("clear_part", "t[..4]", "vec4<f32>()");
    let list = errors(&b);
    let at = |node| {
        list.iter()
            .find(|d| matches!(d.loc, Loc::Access { node: n, .. } if n == node))
            .unwrap_or_else(|| panic!("no error at node {node}: {list:#?}"))
    };
    assert!(
        list.iter()
            .all(|d| !matches!(d.loc, Loc::Access { node: 6, .. })),
        "{list:#?}"
    );
    assert!(
        at(7)
            .message
            .contains("library kernel `scale` binds arrays, so `scaled` cannot bind texture `t`")
    );
    assert_eq!(
        at(8).message,
        "fill `clear_part` of texture `t` takes a range, and a texture is filled, copied, uploaded and read \
         back whole"
    );
    assert_eq!(list.len(), 2, "{list:#?}");
}

#[test]
fn a_texture_moves_whole_outside_blocks_between_textures_of_one_format() {
    let moves = |edit: &dyn Fn(&mut GraphBuilder)| {
        let mut b = GraphBuilder::new("Moves");
        b.texture("t", "texture_2d<r32float>", Role::InOut)
            .texture("u", "texture_2d<rgba8unorm>", Role::InOut)
            .inout("x", "f32")
            .inout("flag", "u32");
        edit(&mut b);
        b
    };
    let d = only_error(&moves(&|b| {
        b.copy("part", "x[..4]", "t");
    }));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 1 });
    assert_eq!(
        d.message,
        "copy `part` of texture `t` takes a range, and a texture is filled, copied, uploaded and read back whole"
    );
    let d = only_error(&moves(&|b| {
        b.copy("across", "t", "u");
    }));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 1 });
    assert_eq!(
        d.message,
        "copy `across` moves texels of `t` (`texture_2d<r32float>`) into `u` (`texture_2d<rgba8unorm>`), of \
         another format"
    );
    let d = only_error(&moves(&|b| {
        b.copy("into", "x", "t")
            .if_block("maybe", "flag", &["into"]);
    }));
    assert!(
        d.message
            .starts_with("copy `into` of texture `t` is under GPU control"),
        "{}",
        d.message
    );
}

/// A kernel storing zeros into texture `t`, sized by `threads` where given.
fn zeroer(threads: Option<&str>) -> GraphBuilder {
    let mut b = GraphBuilder::new("Zeroer");
    b.texture("t", "texture_2d<r32float>", Role::Output);
    let spec = KernelSpec::wgsl(
        "@compute @workgroup_size(1)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) { textureStore(t, gid.xy, vec4<f32>()); }",
    )
    .write("t");
    b.kernel(
        "zero",
        match threads {
            Some(size) => spec.threads(&[size]),
            None => spec,
        },
    );
    b
}

#[test]
fn a_kernel_sized_by_the_texture_it_writes_is_told_to_give_its_size() {
    zeroer(Some("4")).build(&LIBRARY).expect("sized, it checks");
    let d = only_error(&zeroer(None));
    assert_eq!(d.loc, Loc::Node(0));
    assert!(
        d.message.contains("writes texture `t` first"),
        "{}",
        d.message
    );
}

/// `src` (external, of `src_ty`) copied into `dst`, graph-owned, of `dst_ty`, then into `out` (external).
fn through_owned(src_ty: &str, dst_ty: &str) -> GraphBuilder {
    let mut b = GraphBuilder::new("Owned");
    b.param("w", "u32")
        .texture("src", src_ty, Role::Input)
        .texture("dst", dst_ty, Role::Owned)
        .texture("out", "texture_2d<r32float>", Role::Output);
    b.kernel(
        "copy_texels",
        KernelSpec::wgsl(COPY_TEXELS)
            .read("src")
            .write("dst")
            .threads(&["params.w", "params.w"]),
    );
    b.kernel(
        "copy_out",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(out, gid.xy, textureLoad(dst, gid.xy, 0));
            }",
        )
        .read("dst")
        .write("out")
        .threads(&["params.w", "params.w"]),
    );
    b
}

#[test]
fn a_graph_owned_texture_is_sized_by_texels_or_like_another_texture() {
    use graph_core::desc::TextureSizeDesc;
    let sized = through_owned("texture_2d<r32float>", "texture_2d<r32float; 64, 32>")
        .build(&LIBRARY)
        .expect("sized by texels, it checks");
    assert_eq!(sized.buffers[1].role, Role::Owned);
    assert_eq!(
        sized.buffers[1].texture.as_deref(),
        Some("texture_2d<r32float>")
    );
    assert_eq!(
        sized.buffers[1].texture_size,
        Some(TextureSizeDesc::Texels([64, 32, 1]))
    );
    assert_eq!(sized.buffers[0].texture_size, None);
    let like = through_owned("texture_2d<r32float>", "texture_2d<r32float; src>")
        .build(&LIBRARY)
        .expect("sized like src, it checks");
    assert_eq!(like.buffers[1].texture_size, Some(TextureSizeDesc::Like(0)));
    // The desc's own check refuses a size that leads nowhere.
    let mut broken = like.clone();
    broken.buffers.to_mut()[1].texture_size = Some(TextureSizeDesc::Like(1));
    let why = broken
        .validate(like.params.size as usize)
        .expect_err("sized by itself");
    assert!(why.0.contains("sized by itself"), "{why}");
    broken.buffers.to_mut()[1].texture_size = None;
    let why = broken
        .validate(like.params.size as usize)
        .expect_err("owned, no size");
    assert!(why.0.contains("has no size"), "{why}");
}

#[test]
fn a_graph_owned_texture_is_sized_by_parameters_through_every_front_door() {
    use graph_core::desc::{AxisSizeDesc, TextureSizeDesc};
    let mut b = through_owned("texture_2d<r32float>", "texture_2d<r32float; params.w, 32>");
    b.param("size", "vec2<u32>");
    let sized = b.build(&LIBRARY).expect("sized by a parameter, it checks");
    let w = sized.params.fields[0].offset;
    assert_eq!(
        sized.buffers[1].texture_size,
        Some(TextureSizeDesc::Params([
            AxisSizeDesc::Param(w),
            AxisSizeDesc::Texels(32),
            AxisSizeDesc::Texels(1)
        ]))
    );
    // A component of a vector parameter is one `u32`: its own offset.
    let mut b = through_owned(
        "texture_2d<r32float>",
        "texture_2d<r32float; params.size.y, params.size.x>",
    );
    b.param("size", "vec2<u32>");
    let components = b.build(&LIBRARY).expect("components, it checks");
    let size = components.params.fields[1].offset;
    assert_eq!(
        components.buffers[1].texture_size,
        Some(TextureSizeDesc::Params([
            AxisSizeDesc::Param(size + 4),
            AxisSizeDesc::Param(size),
            AxisSizeDesc::Texels(1)
        ]))
    );
    // A graph file keeps the size as written, and reads back the same graph.
    let text = graph_core::file::to_json(b.graph());
    assert!(text.contains("params.size.y, params.size.x"), "{text}");
    let loaded = graph_core::file::from_json(&text).expect("the file loads");
    assert_eq!(&loaded, b.graph());
    // The description's own check refuses a parameter that is no `u32`, and parameters sizing a texture
    // bound from outside.
    let mut broken = components.clone();
    broken.buffers.to_mut()[1].texture_size = Some(TextureSizeDesc::Params([
        AxisSizeDesc::Param(size + 2),
        AxisSizeDesc::Texels(4),
        AxisSizeDesc::Texels(1),
    ]));
    let why = broken
        .validate(components.params.size as usize)
        .expect_err("a misaligned parameter");
    assert!(why.0.contains("which is no `u32`"), "{why}");
    let mut broken = components.clone();
    broken.buffers.to_mut()[0].texture_size = components.buffers[1].texture_size;
    let why = broken
        .validate(components.params.size as usize)
        .expect_err("an external texture sized by parameters");
    assert!(
        why.0
            .contains("is bound from outside, and sized by parameters"),
        "{why}"
    );
}

#[test]
fn a_texture_sized_by_a_parameter_it_cannot_read_is_refused_at_the_type() {
    let cases = [
        (
            "texture_2d<r32float; params.gain, 4>",
            "texture sizes are `u32`, but `params.gain` is `f32`",
        ),
        (
            "texture_2d<r32float; params.size, 4>",
            "`params.size` is a `vec2<u32>`, not one size",
        ),
        (
            "texture_2d<r32float; params.size.z, 4>",
            "`vec2<u32>` has no component `z`",
        ),
        ("texture_2d<r32float; params.v, 4>", "unknown parameter `v`"),
        (
            "texture_2d<r32float; params.w.q, 4>",
            "texture `dst` cannot be `texture_2d<r32float;params.w.q,4>`: `params.w.q,4` is no texture size",
        ),
        (
            "texture_2d<r32float; params.w>",
            "texture `dst` cannot be `texture_2d<r32float;params.w>`: a `texture_2d` is sized by 2 texel \
             counts",
        ),
    ];
    for (ty, message) in cases {
        let mut b = through_owned("texture_2d<r32float>", ty);
        b.param("gain", "f32").param("size", "vec2<u32>");
        let d = errors(&b)
            .into_iter()
            .find(|d| d.loc == Loc::BufferType(1))
            .unwrap_or_else(|| panic!("{ty}: no error at the type"));
        assert!(d.message.starts_with(message), "{ty}: {}", d.message);
    }
    // A texture bound from outside has the bound texture's size: parameters would only repeat it.
    let d = only_error(&through_owned(
        "texture_2d<r32float; params.w, params.w>",
        "texture_2d<r32float; src>",
    ));
    assert_eq!(d.loc, Loc::BufferType(0));
    assert_eq!(
        d.message,
        "texture `src` is bound from outside, so its size is the bound texture's, not parameters"
    );
    let help = d.help.as_deref().unwrap_or_default();
    assert!(help.contains("`src.width()`"), "{help}");
}

#[test]
fn a_graph_owned_texture_without_a_size_is_told_how_to_give_one() {
    let d = only_error(&through_owned(
        "texture_2d<r32float>",
        "texture_2d<r32float>",
    ));
    assert_eq!(d.loc, Loc::Buffer(1));
    assert_eq!(d.message, "graph-owned texture `dst` needs a size");
    let help = d.help.as_deref().unwrap_or_default();
    assert!(
        help.contains("`dst: texture_2d<r32float; 256, 256>`")
            && help.contains("`dst: texture_2d<r32float; frame>`"),
        "{help}"
    );
}

#[test]
fn a_texture_size_that_names_no_texture_or_the_wrong_one_is_refused_at_the_type() {
    let cases = [
        ("texture_2d<r32float; srx>", "unknown texture `srx`"),
        ("texture_2d<r32float; w>", "unknown texture `w`"),
        (
            "texture_2d<r32float; dst>",
            "texture `dst` is sized like itself",
        ),
        (
            "texture_3d<r32float; src>",
            "texture `dst` (`texture_3d<r32float>`) cannot have the size of `src` (`texture_2d<r32float>`): \
             their dimensions differ",
        ),
        (
            "texture_2d<r32float; 64>",
            "texture `dst` cannot be `texture_2d<r32float;64>`: a `texture_2d` is sized by 2 texel counts \
             (width and height), not 1",
        ),
        (
            "texture_2d<r32float; 64, 0>",
            "texture `dst` cannot be `texture_2d<r32float;64,0>`: a texture has at least one texel along each \
             dimension",
        ),
        (
            "texture_2d<r32float; 6x4>",
            "texture `dst` cannot be `texture_2d<r32float;6x4>`: `6x4` is no texture size",
        ),
    ];
    for (ty, message) in cases {
        // The 3-D one's kernels are wrong for it too: naga says so at each.
        let d = errors(&through_owned("texture_2d<r32float>", ty))
            .into_iter()
            .find(|d| d.loc == Loc::BufferType(1))
            .unwrap_or_else(|| panic!("{ty}: no error at the type"));
        assert!(d.message.starts_with(message), "{ty}: {}", d.message);
    }
    let typo = only_error(&through_owned(
        "texture_2d<r32float>",
        "texture_2d<r32float; srx>",
    ));
    assert_eq!(typo.help.as_deref(), Some("did you mean `src`?"));
}

#[test]
fn textures_sized_like_each_other_round_a_loop_are_reported_once() {
    let mut b = GraphBuilder::new("Round");
    b.texture("a", "texture_2d<r32float; b>", Role::Owned)
        .texture("b", "texture_2d<r32float; a>", Role::Owned)
        .texture("out", "texture_2d<r32float>", Role::Output);
    b.kernel(
        "fill",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(a, gid.xy, vec4<f32>());
                textureStore(b, gid.xy, vec4<f32>());
                textureStore(out, gid.xy, vec4<f32>());
            }",
        )
        .write("a")
        .write("b")
        .write("out")
        .threads(&["1"]),
    );
    let d = only_error(&b);
    assert_eq!(d.loc, Loc::BufferType(0));
    assert_eq!(
        d.message,
        "texture `a` is sized by itself: a is sized like b is sized like a"
    );
}

#[test]
fn a_texture_has_no_length_to_size_a_dispatch_by() {
    let d = only_error(&zeroer(Some("t.len()")));
    assert!(
        d.message.contains("`t` is a texture, which has no length"),
        "{}",
        d.message
    );
}

#[test]
fn a_graph_file_holds_textures_as_the_builder_makes_them() {
    let built = copier(
        "texture_2d<rgba8unorm>",
        "texture_storage_2d<rgba8unorm, write>",
        AccessMode::Write,
    );
    let text = graph_core::file::to_json(built.graph());
    // Format 2: a texture's type is its `texture`, a buffer's element type its `elem`.
    assert!(text.contains("\"format\": 2"), "{text}");
    assert!(
        text.contains("\"texture\": \"texture_storage_2d<rgba8unorm, write>\""),
        "{text}"
    );
    assert!(!text.contains("\"elem\": \"texture_"), "{text}");
    let loaded = graph_core::file::from_json(&text).expect("loads");
    assert_eq!(&loaded, built.graph());
    let from_file = GraphBuilder::from_graph(loaded, Default::default())
        .build(&LIBRARY)
        .expect("checks");
    let desc = built.build(&LIBRARY).expect("checks");
    assert_eq!(from_file, desc);
    // Format 1 wrote the type as the `elem`: it still reads, to the same graph.
    let format_1 = text
        .replace("\"format\": 2", "\"format\": 1")
        .replace("\"texture\": ", "\"elem\": ");
    let loaded = graph_core::file::from_json(&format_1).expect("format 1 loads");
    assert_eq!(&loaded, built.graph());
}

#[test]
fn a_graph_file_entry_is_a_buffer_a_texture_or_a_sampler_and_says_which() {
    let file = |entry: &str| {
        format!(r#"{{"format": 2, "graph": {{"name": "G", "buffers": [{entry}], "nodes": []}}}}"#)
    };
    let two = "`t` has more than one of `elem`, `texture` and `sampler`: a buffer has an `elem`, a texture a \
               `texture`, a sampler a `sampler`";
    let cases = [
        (
            r#"{"name": "t", "elem": "f32", "texture": "texture_2d<r32float>", "role": "input"}"#,
            two,
        ),
        (
            r#"{"name": "t", "texture": "texture_2d<r32float>", "sampler": "sampler<linear, clamp>", "role": "owned"}"#,
            two,
        ),
        (
            r#"{"name": "t", "role": "input"}"#,
            "`t` has neither an `elem` (a buffer's element type), a `texture` (a texture's type) nor a `sampler` \
             (a sampler's type)",
        ),
        (
            r#"{"name": "t", "texture": "f32", "role": "input"}"#,
            "the `texture` of `t` is `f32`, which is no texture type",
        ),
        (
            r#"{"name": "t", "sampler": "texture_2d<r32float>", "role": "owned"}"#,
            "the `sampler` of `t` is `texture_2d<r32float>`, which is no sampler type",
        ),
    ];
    for (entry, message) in cases {
        let error = graph_core::file::from_json(&file(entry))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains(message) && error.starts_with("line 1, column"),
            "{entry}: {error}"
        );
    }
    // Positive controls: the same entries, right.
    graph_core::file::from_json(&file(
        r#"{"name": "t", "texture": "texture_2d<r32float>", "role": "input"}"#,
    ))
    .expect("a texture entry loads");
    graph_core::file::from_json(&file(
        r#"{"name": "t", "sampler": "sampler<linear, clamp>", "role": "owned"}"#,
    ))
    .expect("a sampler entry loads");
}

#[test]
fn dot_draws_a_texture_with_its_type() {
    let desc = copier(
        "texture_2d<rgba8unorm>",
        "texture_2d<r32float>",
        AccessMode::Write,
    )
    .build(&LIBRARY)
    .expect("checks");
    let dot = desc.to_dot(graph_core::dot::Detail::default());
    assert!(
        dot.contains("texture_2d<rgba8unorm>") && dot.contains("texture_2d<r32float>"),
        "{dot}"
    );
}

#[test]
fn a_size_reads_a_texture_s_width_height_layers_or_depth_where_it_has_one() {
    let sized = |dims: &[&str]| {
        zeroer(None).clone().kernel(
        "again",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { textureStore(t, gid.xy, vec4<f32>()); }",
        )
        .write("t")
        .threads(dims),
    ).clone()
    };
    // Positive control: the zeroer itself is sized by the texture, and so is a second kernel.
    let mut fine = zeroer(Some("t.width()"));
    fine.kernel(
        "again",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { textureStore(t, gid.xy, vec4<f32>()); }",
        )
        .write("t")
        .threads(&["t.width()", "t.height().div_ceil(2)"]),
    );
    let desc = fine.build(&LIBRARY).expect("sizes over the texture check");
    let OpDesc::Kernel(k) = &desc.nodes[1].op else {
        panic!("a kernel")
    };
    assert!(
        format!("{:?}", k.dispatch).contains("Extent { texture: 0, axis: Height }"),
        "{:?}",
        k.dispatch
    );
    let cases: [(&[&str], &str, Option<&str>); 3] = [
        (
            &["t.depth()"],
            "texture `t` (`texture_2d<r32float>`) has no depth",
            Some("a `texture_2d` has `t.width()`, `t.height()`"),
        ),
        (
            &["t.width()", "t.layers()"],
            "texture `t` (`texture_2d<r32float>`) has no layers",
            None,
        ),
        (&["t.width(2)"], "`width()` takes no arguments", None),
    ];
    for (dims, message, help) in cases {
        let list = errors(&sized(dims));
        let d = list
            .iter()
            .find(|d| d.message.contains(message))
            .unwrap_or_else(|| panic!("{dims:?}: {list:#?}"));
        if let Some(help) = help {
            assert_eq!(d.help.as_deref(), Some(help), "{dims:?}");
        }
    }
    let mut b = GraphBuilder::new("Buffers");
    b.input("x", "f32")
        .output("y", "f32")
        .texture("t", "texture_2d<r32float>", Role::Input);
    b.copy("part", "x[..t.width()]", "y[..t.width()]");
    let list = errors(&b);
    assert!(
        list.iter().any(
            |d| d.message == "a range is in elements of a buffer, so it cannot use `t.width()`"
        ),
        "{list:#?}"
    );
    let mut b = GraphBuilder::new("Buffers");
    b.input("x", "f32").output("y", "f32");
    b.kernel(
        "copy",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) { y[gid.x] = x[gid.x]; }",
        )
        .read("x")
        .write("y")
        .threads(&["x.width()"]),
    );
    let d = only_error(&b);
    assert_eq!(d.message, "`x` is a buffer, which has no width");
    assert_eq!(
        d.help.as_deref(),
        Some("write `x.len()` for its length in elements")
    );
}

/// `frame` (of `frame_ty`) sampled through `s` (of `sampler_ty`) into `out`.
fn sampler_graph(frame_ty: &str, sampler_ty: &str) -> GraphBuilder {
    let mut b = GraphBuilder::new("Sampled");
    b.texture("frame", frame_ty, Role::Input)
        .sampler("s", sampler_ty)
        .output("out", "f32");
    b.kernel(
        "take",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main() { out[0] = textureSampleLevel(frame, s, vec2<f32>(0.5), 0.0).r; }",
        )
        .read("frame")
        .read("s")
        .write("out")
        .threads(&["1"]),
    );
    b
}

#[test]
fn a_sampler_is_declared_bound_as_wgsl_sampler_and_saved_in_graph_files() {
    let built = sampler_graph("texture_2d<rgba8unorm>", "sampler<linear, mirror>");
    let desc = built.build(&LIBRARY).expect("checks");
    let s = &desc.buffers[1];
    assert_eq!(s.sampler.as_deref(), Some("sampler<linear, mirror>"));
    assert!(s.texture.is_none() && s.len.is_none() && !s.is_buffer());
    let OpDesc::Kernel(k) = &desc.nodes[0].op else {
        panic!("a kernel")
    };
    assert!(
        k.declarations
            .contains("@group(0) @binding(1) var s: sampler;"),
        "{}",
        k.declarations
    );
    // Read only: no edge, no hazard; and sampling reads neighbours, so the kernel is not pointwise.
    assert!(desc.edges.is_empty(), "{:?}", desc.edges);
    assert!(!k.pointwise);
    // A graph file writes its type as its `sampler`, and reads back the same graph.
    let text = graph_core::file::to_json(built.graph());
    assert!(
        text.contains("\"sampler\": \"sampler<linear, mirror>\""),
        "{text}"
    );
    let loaded = graph_core::file::from_json(&text).expect("loads");
    assert_eq!(&loaded, built.graph());
    let from_file = GraphBuilder::from_graph(loaded, Default::default())
        .build(&LIBRARY)
        .expect("checks");
    assert_eq!(from_file, desc);
}

#[test]
fn a_filtering_sampler_needs_a_filterable_format_and_a_nearest_one_does_not() {
    let d = only_error(&sampler_graph(
        "texture_2d<rg32float>",
        "sampler<linear, clamp>",
    ));
    assert_eq!(d.loc, Loc::Access { node: 0, index: 0 });
    assert!(
        d.message.contains(
            "kernel `take` samples `frame` (rg32float) with `s` (`sampler<linear, clamp>`)"
        ),
        "{}",
        d.message
    );
    // Positive controls: a filterable format under the same sampler, the same format under a nearest one.
    for (frame, sampler) in [
        ("texture_2d<rgba16float>", "sampler<linear, clamp>"),
        ("texture_2d<rg32float>", "sampler<nearest, clamp>"),
    ] {
        sampler_graph(frame, sampler)
            .build(&LIBRARY)
            .unwrap_or_else(|e| panic!("{frame} {sampler}: {e}"));
    }
}

#[test]
fn a_sampler_is_only_read_by_kernels_and_made_by_the_graph() {
    // Written by a kernel.
    let mut b = sampler_graph("texture_2d<rgba8unorm>", "sampler<nearest, clamp>");
    let mut graph = b.graph().clone();
    if let graph_core::ir::NodeKind::Kernel(k) = &mut graph.nodes[0].kind {
        k.accesses[1].mode = AccessMode::ReadWrite;
    }
    b = GraphBuilder::from_graph(graph, Default::default());
    let d = only_error(&b);
    assert_eq!(d.loc, Loc::AccessMode { node: 0, index: 1 });
    assert!(
        d.message
            .contains("kernel `take` binds sampler `s` `read_write`, and a sampler is only read"),
        "{}",
        d.message
    );
    // Bound from outside.
    let mut graph = sampler_graph("texture_2d<rgba8unorm>", "sampler<nearest, clamp>")
        .graph()
        .clone();
    graph.buffers[1].role = Role::Input;
    let d = only_error(&GraphBuilder::from_graph(graph, Default::default()));
    assert_eq!(d.loc, Loc::Buffer(1));
    assert!(
        d.message
            .contains("sampler `s` is declared `= input`, but the graph makes its samplers"),
        "{}",
        d.message
    );
    // Filled.
    let mut b = sampler_graph("texture_2d<rgba8unorm>", "sampler<nearest, clamp>");
    b.fill("clear", "s", "0u");
    let d = only_error(&b);
    assert!(
        d.message.contains(
            "fill `clear` cannot use sampler `s`: kernels written in WGSL sample textures"
        ),
        "{}",
        d.message
    );
    // An unknown address mode.
    let d = only_error(&sampler_graph(
        "texture_2d<rgba8unorm>",
        "sampler<nearest, wrap>",
    ));
    assert_eq!(d.loc, Loc::BufferType(1));
    assert!(
        d.message
            .contains("sampler `s` cannot be `sampler<nearest,wrap>`: `wrap` is no address mode"),
        "{}",
        d.message
    );
}

/// A child graph over a texture: `frame` (of `frame_ty`, bound from outside) turned grey into `grey`, a
/// texture it owns sized like the frame, then each row of it summed into `rows`.
fn grey_rows_child(frame_ty: &str) -> graph_core::desc::GraphDesc {
    let mut b = GraphBuilder::new("GreyRows");
    b.texture("frame", frame_ty, Role::Input)
        .texture("grey", "texture_2d<r32float; frame>", Role::Owned)
        .output("rows", "f32");
    b.kernel(
        "to_grey",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let size = textureDimensions(frame);
                if (gid.x >= size.x || gid.y >= size.y) { return; }
                let c = textureLoad(frame, gid.xy, 0);
                textureStore(grey, gid.xy, vec4<f32>((c.r + c.g + c.b) / 3.0, 0.0, 0.0, 1.0));
            }",
        )
        .read("frame")
        .write("grey")
        .threads(&["frame.width()", "frame.height()"]),
    );
    b.kernel(
        "sum_rows",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                let size = textureDimensions(grey);
                if (gid.x >= size.y) { return; }
                var total = 0.0;
                for (var x = 0u; x < size.x; x++) { total += textureLoad(grey, vec2<u32>(x, gid.x), 0).r; }
                rows[gid.x] = total;
            }",
        )
        .read("grey")
        .write("rows")
        .threads(&["grey.height()"]),
    );
    b.build(&LIBRARY).expect("the child checks")
}

/// A parent binding `picture` (of `picture_ty`, a texture, or a buffer of `f32` when `None`) to the child's
/// `frame`.
fn grey_rows_parent(picture_ty: Option<&str>) -> GraphBuilder {
    let mut b = GraphBuilder::new("Parent");
    match picture_ty {
        Some(ty) => b.texture("picture", ty, Role::Input),
        None => b.input("picture", "f32"),
    };
    b.output("result", "f32").subgraph(
        "grey_rows",
        &grey_rows_child("texture_2d<rgba8unorm>"),
        &[
            ("frame", "picture", AccessMode::Read),
            ("rows", "result", AccessMode::Write),
        ],
    );
    b
}

#[test]
fn a_subgraph_binds_a_texture_of_its_childs_type_and_its_owned_textures_follow_it() {
    let desc = grey_rows_parent(Some("texture_2d<rgba8unorm>"))
        .build(&LIBRARY)
        .expect("checks");
    let flat = graph_core::flatten::flatten(&desc).expect("flattens");
    flat.validate(0).expect("the flattened graph is valid");
    // The child's graph-owned texture, sized like the child's frame, is sized like the parent's picture.
    let picture = flat
        .buffers
        .iter()
        .position(|b| b.name == "picture")
        .expect("picture") as u32;
    let grey = flat
        .buffers
        .iter()
        .find(|b| b.name == "grey_rows.grey")
        .expect("the child's texture");
    assert_eq!(
        grey.texture_size,
        Some(graph_core::desc::TextureSizeDesc::Like(picture))
    );
    // The child's dispatch sizes read the parent's picture.
    let OpDesc::Kernel(to_grey) = &flat
        .nodes
        .iter()
        .find(|n| n.name == "grey_rows.to_grey")
        .expect("to_grey")
        .op
    else {
        panic!("a kernel")
    };
    let graph_core::desc::DispatchDesc::Threads(sizes) = &to_grey.dispatch else {
        panic!("threads")
    };
    assert!(
        sizes[0].steps.iter().any(|s| matches!(
            s,
            graph_core::size::SizeStep::Extent { texture, .. } if *texture == picture
        )),
        "{sizes:?}"
    );
}

#[test]
fn a_subgraph_binding_of_another_texture_type_or_of_a_buffer_is_refused() {
    for (picture, message) in [
        (
            Some("texture_2d<rgba8snorm>"),
            "subgraph `grey_rows` binds texture `picture` (`texture_2d<rgba8snorm>`) to `GreyRows`'s `frame`, \
             which is `texture_2d<rgba8unorm>`",
        ),
        (
            None,
            "subgraph `grey_rows` binds buffer `picture` to `GreyRows`'s texture `frame` \
             (`texture_2d<rgba8unorm>`)",
        ),
    ] {
        let d = only_error(&grey_rows_parent(picture));
        assert_eq!(d.loc, Loc::Access { node: 0, index: 0 });
        assert!(d.message.contains(message), "{}", d.message);
    }
}

/// A child with a graph-owned texture sized by its parameters (`params.w, params.h`, declared `h` first).
fn scaled_child(frame_ty: &str) -> graph_core::desc::GraphDesc {
    let mut b = GraphBuilder::new("Scaled");
    b.param("h", "u32")
        .param("w", "u32")
        .texture("frame", frame_ty, Role::Input)
        .texture(
            "tmp",
            "texture_2d<r32float; params.w, params.h>",
            Role::Owned,
        )
        .output("rows", "f32");
    b.kernel(
        "grey",
        KernelSpec::wgsl(
            "@compute @workgroup_size(8, 8)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                textureStore(tmp, gid.xy, textureLoad(frame, gid.xy, 0));
            }",
        )
        .read("frame")
        .write("tmp")
        .threads(&["params.w", "params.h"]),
    );
    b.kernel(
        "sum_rows",
        KernelSpec::wgsl(
            "@compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                rows[gid.x] = textureLoad(tmp, vec2<u32>(0u, gid.x), 0).r;
            }",
        )
        .read("tmp")
        .write("rows")
        .threads(&["params.h"]),
    );
    b.build(&LIBRARY).expect("the child checks")
}

#[test]
fn a_subgraphs_texture_sized_by_its_parameters_reads_the_parents_and_promises_no_texels() {
    use graph_core::desc::{AxisSizeDesc, TextureSizeDesc};
    let parent = |picture_ty: &str, role: Role, frame_ty: &str| {
        let mut b = GraphBuilder::new("Parent");
        b.param("w", "u32")
            .param("h", "u32")
            .texture("picture", picture_ty, role)
            .output("result", "f32")
            .subgraph(
                "scaled",
                &scaled_child(frame_ty),
                &[
                    ("frame", "picture", AccessMode::Read),
                    ("rows", "result", AccessMode::Write),
                ],
            );
        b
    };
    let desc = parent(
        "texture_2d<rgba8unorm>",
        Role::Input,
        "texture_2d<rgba8unorm>",
    )
    .build(&LIBRARY)
    .expect("checks");
    let flat = graph_core::flatten::flatten(&desc).expect("flattens");
    flat.validate(desc.params.size as usize)
        .expect("the flattened graph is valid");
    let offset = |name: &str| {
        let field = flat.params.fields.iter().find(|f| f.name == name);
        field.expect("a parameter").offset
    };
    let tmp = flat
        .buffers
        .iter()
        .find(|b| b.name == "scaled.tmp")
        .expect("the child's texture");
    assert_eq!(
        tmp.texture_size,
        Some(TextureSizeDesc::Params([
            AxisSizeDesc::Param(offset("w")),
            AxisSizeDesc::Param(offset("h")),
            AxisSizeDesc::Texels(1)
        ])),
        "the parent's offsets of the child's parameters"
    );
    assert_ne!(
        offset("w"),
        scaled_child("texture_2d<rgba8unorm>").params.fields[1].offset
    );
    // A texture the parent sizes by parameters may be any size: not the texels the child declares. (Nothing
    // writes the parent's texture here, which is reported too.)
    let d = errors(&parent(
        "texture_2d<rgba8unorm; params.w, params.h>",
        Role::Owned,
        "texture_2d<rgba8unorm; 8, 4>",
    ))
    .into_iter()
    .find(|d| d.loc == Loc::Access { node: 0, index: 0 })
    .expect("an error at the binding");
    assert!(
        d.message.contains(
            "subgraph `scaled` binds texture `picture`, sized by parameters, to `Scaled`'s `frame`, which \
             is declared a size in texels"
        ),
        "{}",
        d.message
    );
}

/// `frame` copied into graph-owned `tmp` (of `tmp_ty`) by a kernel dispatched as `dispatch` says (`threads`
/// or `workgroups`, over `sizes`).
fn into_owned(tmp_ty: &str, workgroups: bool, sizes: &[&str]) -> GraphBuilder {
    let mut b = GraphBuilder::new("IntoOwned");
    b.texture("frame", "texture_2d<rgba8unorm>", Role::Input)
        .texture("tmp", tmp_ty, Role::Owned)
        .output("out", "f32");
    let spec = KernelSpec::wgsl(
        "@compute @workgroup_size(8, 8)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            textureStore(tmp, gid.xy, textureLoad(frame, gid.xy, 0));
        }",
    )
    .read("frame")
    .write("tmp");
    let spec = match workgroups {
        true => spec.workgroups(sizes),
        false => spec.threads(sizes),
    };
    b.kernel("copy", spec);
    b.kernel(
        "take",
        KernelSpec::wgsl(
            "@compute @workgroup_size(1)
            fn main() { out[0] = textureLoad(tmp, vec2<u32>(0u), 0).r; }",
        )
        .read("tmp")
        .write("out")
        .threads(&["1"]),
    );
    b
}

#[test]
fn a_dispatch_short_of_a_texture_of_known_size_is_refused() {
    let d = only_error(&into_owned(
        "texture_2d<rgba16float; 64, 32>",
        false,
        &["32", "32"],
    ));
    assert_eq!(d.loc, Loc::Dispatch(0));
    assert!(
        d.message.contains(
            "kernel `copy` writes texture `tmp` (64 x 32 texels) over threads(32, 32): the texels past 32 \
             along its width are never written"
        ),
        "{}",
        d.message
    );
    assert!(
        d.help
            .as_deref()
            .is_some_and(|h| h.contains("threads(tmp.width(), tmp.height())")),
        "{:?}",
        d.help
    );
    // Through another texture's size: the owned texture sized like one of known texels.
    let mut b = into_owned("texture_2d<rgba16float; other>", false, &["64", "16"]);
    b.texture("other", "texture_2d<r32float; 64, 32>", Role::Owned);
    let d = only_error(&b);
    assert!(
        d.message.contains("past 16 along its height"),
        "{}",
        d.message
    );
    // Positive controls: threads that cover it (or more), sizes read from the texture, workgroups, and a
    // texture of no known size.
    for (ty, workgroups, sizes) in [
        ("texture_2d<rgba16float; 64, 32>", false, &["64", "32"][..]),
        ("texture_2d<rgba16float; 64, 32>", false, &["100", "40"][..]),
        (
            "texture_2d<rgba16float; 64, 32>",
            false,
            &["tmp.width()", "tmp.height()"][..],
        ),
        ("texture_2d<rgba16float; 64, 32>", true, &["4", "4"][..]),
        ("texture_2d<rgba16float; frame>", false, &["8", "8"][..]),
    ] {
        into_owned(ty, workgroups, sizes)
            .build(&LIBRARY)
            .unwrap_or_else(|e| panic!("{ty} {sizes:?}: {e}"));
    }
}
