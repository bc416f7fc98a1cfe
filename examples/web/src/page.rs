//! The page (wasm32): the flagship's `EdgePipeline` baked once on the browser's WebGPU device and replayed on
//! the built-in picture or one the user picks, the input and the edges drawn into canvases, the graph drawn as
//! SVG beside them with its DOT text, the replay's time, and Sobel or Scharr switched without a re-bake.
//!
//! For the end-to-end test (and anyone curious) the page leaves what it computed on `window.graphResult`
//! (size, filter, Otsu's level, the histogram, the times) and says where it is in `document.body.dataset.state`
//! (`running`, `done`, or `error`).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};

use examples::edge_pipeline::{
    EdgePipeline, EdgePipelineBuffers, EdgePipelineChoice, EdgePipelineParams, otsu, top,
};
use graph_runtime::pipeline::Detail;
use graph_runtime::{Baked, Buffer, Gpu, Texture};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{
    CanvasRenderingContext2d, Document, HtmlCanvasElement, HtmlInputElement, HtmlSelectElement,
    ImageData,
};

use crate::graph_svg::graph_svg;

/// The flagship's picture, used until the user picks one.
const BUILT_IN: &[u8] = include_bytes!("../../assets/shapes.png");
/// Replays timed after a first one (which also finishes setting the pipelines up).
const TIMED: usize = 20;

/// What went wrong, for the page: any error's words.
type PageResult<T> = Result<T, String>;

fn words(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The buffers and edge texture sized for one picture.
struct Sized {
    width: u32,
    height: u32,
    image: Buffer<f32>,
    blur_rows: Buffer<f32>,
    blurred: Buffer<f32>,
    gradient: Buffer<f32>,
    edges: Texture,
}

impl Sized {
    fn new(gpu: &Gpu, width: u32, height: u32) -> PageResult<Sized> {
        let len = (width * height) as usize;
        Ok(Sized {
            width,
            height,
            image: gpu.buffer_zeroed(len).map_err(words)?,
            blur_rows: gpu.buffer_zeroed(len).map_err(words)?,
            blurred: gpu.buffer_zeroed(len).map_err(words)?,
            gradient: gpu.buffer_zeroed(len).map_err(words)?,
            edges: gpu
                .texture("texture_2d<rgba8unorm>", [width, height, 1])
                .map_err(words)?,
        })
    }

    fn bindings(&self) -> EdgePipelineBuffers<'_> {
        EdgePipelineBuffers {
            image: &self.image,
            blur_rows: &self.blur_rows,
            blurred: &self.blurred,
            gradient: &self.gradient,
            edges: &self.edges,
        }
    }
}

/// What the host task shares with the page: the histogram's upper bound (set with the filter) and the level
/// it computed last.
#[derive(Debug, Default)]
struct Otsu {
    top: f32,
    level: f32,
}

/// The baked graph and what it runs on.
struct App {
    gpu: Gpu,
    graph: Baked<EdgePipeline>,
    sized: Sized,
    otsu: Arc<Mutex<Otsu>>,
    picture: image::RgbaImage,
    scharr: bool,
}

/// What the user asked for last: the filter, and a picture not yet run.
#[derive(Default)]
struct Wanted {
    scharr: bool,
    picture: Option<image::RgbaImage>,
}

/// The page's state: the app between runs (taken while one runs), and what is wanted. An event only says
/// what it wants and starts a run if none is going; a run goes on until what it drew is what is wanted.
#[derive(Default)]
struct PageState {
    app: RefCell<Option<App>>,
    wanted: RefCell<Wanted>,
}

type Shared = Rc<PageState>;

#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| fail(&format!("panic: {info}"))));
    spawn_local(async {
        if let Err(e) = open().await {
            fail(&e);
        }
    });
}

fn document() -> PageResult<Document> {
    web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| "no document".to_string())
}

fn element<T: JsCast>(id: &str) -> PageResult<T> {
    document()?
        .get_element_by_id(id)
        .and_then(|e| e.dyn_into::<T>().ok())
        .ok_or_else(|| format!("no element #{id} of the right kind"))
}

fn set_text(id: &str, text: &str) {
    if let Ok(e) = element::<web_sys::Element>(id) {
        e.set_text_content(Some(text));
    }
}

fn set_state(state: &str) {
    if let Some(body) = document().ok().and_then(|d| d.body()) {
        let _ = body.dataset().set("state", state);
    }
}

fn fail(e: &str) {
    web_sys::console::error_1(&e.into());
    set_text("status", &format!("Error: {e}"));
    set_state("error");
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// The GPU, the built-in picture, the graph baked once, the events wired; then the first run.
async fn open() -> PageResult<()> {
    set_state("running");
    set_text("status", "Asking the browser for a WebGPU adapter...");
    let gpu = Gpu::new()
        .await
        .map_err(|e| format!("{e} (Chrome needs WebGPU: on Linux, `--enable-unsafe-webgpu`)"))?;
    let picture = image::load_from_memory(BUILT_IN).map_err(words)?.to_rgba8();
    let sized = Sized::new(&gpu, picture.width(), picture.height())?;
    let start = now();
    let mut graph = EdgePipeline::bake(&gpu, sized.bindings()).map_err(words)?;
    let bake_ms = now() - start;
    let shared_otsu = Arc::new(Mutex::new(Otsu {
        top: top(false),
        level: 0.0,
    }));
    let task = shared_otsu.clone();
    graph
        .on_host(EdgePipeline::HOSTS.otsu, move |h| {
            let bins = h.bins()?;
            let mut state = task.lock().unwrap_or_else(PoisonError::into_inner);
            state.level = otsu(&bins, 0.0, state.top);
            h.write_level(&[state.level])
        })
        .map_err(words)?;
    set_text(
        "adapter",
        &format!("{}; baked in {bake_ms:.1} ms", gpu.summary()),
    );
    set_text("dot", &graph.untyped().to_dot(Detail::Plain));
    let page: Shared = Rc::default();
    *page.app.borrow_mut() = Some(App {
        gpu,
        graph,
        sized,
        otsu: shared_otsu,
        picture,
        scharr: false,
    });
    wire(&page)?;
    run(&page).await
}

/// The file picker and the filter switch: each says what it wants and runs the graph again.
fn wire(page: &Shared) -> PageResult<()> {
    let picker: HtmlInputElement = element("picture")?;
    let on_pick = {
        let page = page.clone();
        Closure::<dyn FnMut()>::new(move || {
            let page = page.clone();
            spawn_local(async move {
                if let Err(e) = pick(&page).await {
                    fail(&e);
                }
            });
        })
    };
    picker.set_onchange(Some(on_pick.as_ref().unchecked_ref()));
    on_pick.forget();

    let filter: HtmlSelectElement = element("filter")?;
    let on_filter = {
        let page = page.clone();
        Closure::<dyn FnMut()>::new(move || {
            let page = page.clone();
            spawn_local(async move {
                let scharr =
                    element::<HtmlSelectElement>("filter").is_ok_and(|f| f.value() == "scharr");
                page.wanted.borrow_mut().scharr = scharr;
                if let Err(e) = run(&page).await {
                    fail(&e);
                }
            });
        })
    };
    filter.set_onchange(Some(on_filter.as_ref().unchecked_ref()));
    on_filter.forget();
    Ok(())
}

/// The picked file, decoded, as the wanted picture.
async fn pick(page: &Shared) -> PageResult<()> {
    let picker: HtmlInputElement = element("picture")?;
    let Some(file) = picker.files().and_then(|files| files.get(0)) else {
        return Ok(());
    };
    let bytes = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| format!("cannot read the file: {e:?}"))?;
    let bytes = js_sys::Uint8Array::new(&bytes).to_vec();
    let picture = image::load_from_memory(&bytes)
        .map_err(|e| format!("{}: {e}", file.name()))?
        .to_rgba8();
    if picture.width() == 0 || picture.height() == 0 {
        return Err(format!("{} is empty", file.name()));
    }
    page.wanted.borrow_mut().picture = Some(picture);
    run(page).await
}

/// Runs the graph until what it drew is what is wanted (an event during a run is seen when it ends); returns
/// at once when another run is going, which will see what this one was started for.
async fn run(page: &Shared) -> PageResult<()> {
    let Some(mut a) = page.app.borrow_mut().take() else {
        return Ok(());
    };
    set_state("running");
    let result = run_until_wanted(page, &mut a).await;
    *page.app.borrow_mut() = Some(a);
    result?;
    set_state("done");
    Ok(())
}

async fn run_until_wanted(page: &Shared, a: &mut App) -> PageResult<()> {
    loop {
        let (picture, scharr) = {
            let mut wanted = page.wanted.borrow_mut();
            (wanted.picture.take(), wanted.scharr)
        };
        if let Some(picture) = picture {
            // Buffers of the new picture's size, bound in place of the old: no re-bake.
            if (picture.width(), picture.height()) != (a.sized.width, a.sized.height) {
                let sized = Sized::new(&a.gpu, picture.width(), picture.height())?;
                a.graph.rebind(sized.bindings()).map_err(words)?;
                a.sized = sized;
            }
            a.picture = picture;
        }
        a.scharr = scharr;
        replay_and_draw(a).await?;
        let wanted = page.wanted.borrow();
        if wanted.picture.is_none() && wanted.scharr == a.scharr {
            return Ok(());
        }
    }
}

async fn replay_and_draw(a: &mut App) -> PageResult<()> {
    let (w, h) = (a.sized.width, a.sized.height);
    let choice = if a.scharr {
        EdgePipelineChoice::Scharr
    } else {
        EdgePipelineChoice::Sobel
    };
    // The other alternative, and the histogram's range with it: no re-bake.
    a.graph.select(choice).map_err(words)?;
    a.otsu.lock().unwrap_or_else(PoisonError::into_inner).top = top(a.scharr);
    *a.graph.params_mut() = EdgePipelineParams::new(w, h, top(a.scharr));
    let name = if a.scharr { "Scharr" } else { "Sobel" };
    set_text("status", &format!("Running {name} on {w}x{h}..."));

    // A grey no edge pixel is: a texel the threshold fails to store shows.
    a.sized
        .edges
        .write(&vec![0x7f; (w * h * 4) as usize])
        .map_err(words)?;
    let start = now();
    a.graph
        .upload_image(EdgePipeline::UPLOADS.picture, &a.picture)
        .map_err(words)?;
    let finished = a
        .graph
        .replay_async()
        .await
        .map_err(words)?
        .await
        .map_err(words)?;
    let first_ms = now() - start;
    let hist = finished.read(EdgePipeline::READBACKS.hist).map_err(words)?;
    let edges = finished
        .read_image(EdgePipeline::READBACKS.result)
        .map_err(words)?;
    drop(finished);
    let level = a.otsu.lock().unwrap_or_else(PoisonError::into_inner).level;
    draw("input", &a.picture)?;
    draw("edges", &edges)?;
    let graph = a.graph.untyped();
    let active = graph.active_choice("edge_filter").unwrap_or("").to_string();
    let desc = graph.description();
    let svg = graph_svg(desc, |n| {
        let node = &*desc.nodes[n].name;
        !matches!(node, "sobel" | "scharr") || node == active
    });
    element::<web_sys::Element>("graph")?.set_inner_html(&svg);

    // The same replay timed: upload, the first partition, the host task, the second partition, readbacks.
    let mut times = Vec::with_capacity(TIMED);
    for _ in 0..TIMED {
        let start = now();
        a.graph
            .upload_image(EdgePipeline::UPLOADS.picture, &a.picture)
            .map_err(words)?;
        a.graph
            .replay_async()
            .await
            .map_err(words)?
            .await
            .map_err(words)?;
        times.push(now() - start);
    }
    times.sort_by(f64::total_cmp);
    let median = times[TIMED / 2];
    let edge_pixels = edges.as_raw().chunks(4).filter(|p| p[0] == 255).count();
    set_text(
        "timing",
        &format!(
            "{name}: Otsu's level {level:.4}, {edge_pixels} edge pixels of {}.\n\
             replay (upload, GPU, host task, GPU, readbacks, awaited): median {median:.2} ms of {TIMED} \
             (min {:.2}, max {:.2}); the first {first_ms:.2} ms",
            w * h,
            times[0],
            times[TIMED - 1],
        ),
    );
    set_text("status", &format!("{name} on {w}x{h}: done."));
    publish(&Published {
        width: w,
        height: h,
        filter: name,
        level,
        hist: &hist,
        median_ms: median,
        first_ms,
        times: &times,
    })
}

/// Draws an image into canvas `id`, at its size.
fn draw(id: &str, picture: &image::RgbaImage) -> PageResult<()> {
    let canvas: HtmlCanvasElement = element(id)?;
    canvas.set_width(picture.width());
    canvas.set_height(picture.height());
    let context = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
        .ok_or("no 2-D context")?;
    let data = ImageData::new_with_u8_clamped_array_and_sh(
        Clamped(picture.as_raw()),
        picture.width(),
        picture.height(),
    )
    .map_err(|e| format!("{e:?}"))?;
    context
        .put_image_data(&data, 0.0, 0.0)
        .map_err(|e| format!("{e:?}"))
}

/// What the page leaves on `window.graphResult`.
struct Published<'a> {
    width: u32,
    height: u32,
    filter: &'a str,
    level: f32,
    hist: &'a [u32],
    median_ms: f64,
    first_ms: f64,
    times: &'a [f64],
}

fn publish(p: &Published<'_>) -> PageResult<()> {
    let result = js_sys::Object::new();
    let set =
        |key: &str, value: JsValue| js_sys::Reflect::set(&result, &key.into(), &value).map(|_| ());
    let array = |values: Vec<f64>| -> JsValue {
        values
            .into_iter()
            .map(JsValue::from_f64)
            .collect::<js_sys::Array>()
            .into()
    };
    let set_all = || -> Result<(), JsValue> {
        set("width", p.width.into())?;
        set("height", p.height.into())?;
        set("filter", p.filter.into())?;
        set("level", JsValue::from_f64(f64::from(p.level)))?;
        set(
            "hist",
            array(p.hist.iter().map(|&c| f64::from(c)).collect()),
        )?;
        set("medianMs", JsValue::from_f64(p.median_ms))?;
        set("firstMs", JsValue::from_f64(p.first_ms))?;
        set("timesMs", array(p.times.to_vec()))?;
        let window = web_sys::window().ok_or(JsValue::NULL)?;
        js_sys::Reflect::set(&window, &"graphResult".into(), &result).map(|_| ())
    };
    set_all().map_err(|e| format!("cannot publish the result: {e:?}"))
}
