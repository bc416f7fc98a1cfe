//! End to end: the web example's page, built by `cargo xtask test --web` (or `cargo xtask web`), loaded in
//! headless Chromium on WebGPU, waited for, and its edge image (the canvas the user sees) compared pixel by
//! pixel with the CPU's edges of the same picture; then the filter switched to Scharr in the page (no
//! re-bake) and compared again. A screenshot of each goes to `out/`.

#![cfg(not(target_arch = "wasm32"))]
#![forbid(unsafe_code)]

mod webdriver;

use std::path::{Path, PathBuf};
use std::time::Duration;

use examples::edge_pipeline::{BINS, cpu_stages, grey_image, otsu, top};
use examples::texture_edges::mismatched_edges;
use serde_json::Value;
use webdriver::{Driver, Fallible, Session, base64};

/// The picture the page uses until the user picks one.
const BUILT_IN: &[u8] = include_bytes!("../../assets/shapes.png");
/// A gradient within this (relative) of Otsu's level may fall either side on the GPU, as in the flagship.
const GRADIENT_TOLERANCE: f32 = 1e-5;

#[test]
#[ignore = "needs the built page and Chromium: `cargo xtask test --web` builds the page and runs this"]
fn the_page_draws_the_edges_the_cpu_finds_for_sobel_then_scharr() -> Fallible<()> {
    let dir = PathBuf::from(std::env::var("WEB_PAGE_DIR").map_err(|_| {
        "WEB_PAGE_DIR is not set: run `cargo xtask test --web`, which builds the page and sets it"
    })?);
    let chromedriver =
        PathBuf::from(std::env::var("CHROMEDRIVER").unwrap_or("chromedriver".into()));
    let address = web_example::serve::serve(dir, "127.0.0.1:0".parse()?)?;
    let driver = Driver::start(&chromedriver)?;
    let session = driver.session(capabilities()?)?;
    session.navigate(&format!("http://{address}/"))?;

    let picture = image::load_from_memory(BUILT_IN)?.to_rgba8();
    check(&session, &picture, false)?;
    // The switch, as the user makes it: the select's value and its change event.
    session.execute(
        "document.body.dataset.state = 'switching';
         const filter = document.getElementById('filter');
         filter.value = 'scharr';
         filter.dispatchEvent(new Event('change'));
         return null;",
    )?;
    check(&session, &picture, true)
}

/// The browser's options from `xtask/web/webdriver.json` (headless, WebGPU), and a window the page fits.
fn capabilities() -> Fallible<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../xtask/web/webdriver.json");
    let mut capabilities: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    if let Some(args) = capabilities["goog:chromeOptions"]["args"].as_array_mut() {
        args.push("--window-size=1600,1150".into());
    }
    Ok(capabilities)
}

/// Waits for the page to finish with `scharr` (or Sobel), then checks its edges against the CPU's.
fn check(session: &Session<'_>, picture: &image::RgbaImage, scharr: bool) -> Fallible<()> {
    let name = if scharr { "Scharr" } else { "Sobel" };
    // Done with this filter, or failed: the page's own words then.
    let state = session.wait_for(
        &format!(
            "const state = document.body.dataset.state;
             if (state === 'error') return 'error: ' + document.getElementById('status').textContent;
             if (state === 'done' && window.graphResult && window.graphResult.filter === '{name}') return 'done';
             return null;"
        ),
        Duration::from_secs(240),
    )?;
    assert_eq!(state, "done", "the page: {state}");
    let result = session.execute("return window.graphResult;")?;
    let (w, h) = (picture.width() as usize, picture.height() as usize);
    assert_eq!(
        (result["width"].as_u64(), result["height"].as_u64()),
        (Some(w as u64), Some(h as u64))
    );

    // The edges as the canvas holds them, through a PNG of it (lossless; every pixel opaque).
    let url = session.execute("return document.getElementById('edges').toDataURL('image/png');")?;
    let url = url.as_str().ok_or("no data URL")?;
    let png = base64(
        url.strip_prefix("data:image/png;base64,")
            .ok_or("not a PNG data URL")?,
    )?;
    let edges = image::load_from_memory(&png)?.to_rgba8();
    assert_eq!(edges.dimensions(), picture.dimensions());

    // The CPU: grey, blur, gradient and histogram of the same picture.
    let cpu = cpu_stages(&grey_image(picture.as_raw()), (w, h), scharr);
    let hist: Vec<u32> = result["hist"]
        .as_array()
        .ok_or("no histogram")?
        .iter()
        .map(|v| {
            v.as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or("a bad count")
        })
        .collect::<Result<_, _>>()?;
    assert_eq!(hist.len(), BINS);
    assert_eq!(
        hist.iter().sum::<u32>() as usize,
        w * h,
        "{name}: every pixel counted once"
    );
    // Values on a bin boundary may land in the next bin on the GPU: a few, as in the flagship.
    let moved: u32 = hist
        .iter()
        .zip(&cpu.bins)
        .map(|(g, c)| g.abs_diff(*c))
        .sum();
    assert!(
        moved as usize <= w * h / 1000,
        "{name}: {moved} counts moved"
    );
    // The host task's level is Otsu's of the GPU's histogram, exactly.
    let level = result["level"].as_f64().ok_or("no level")? as f32;
    assert_eq!(level, otsu(&hist, 0.0, top(scharr)), "{name}: the level");
    // Every pixel white or black as the CPU's gradient against that level says.
    let mismatched = mismatched_edges(
        edges.as_raw(),
        &cpu.gradient,
        level,
        GRADIENT_TOLERANCE * (1.0 + level.abs()),
    );
    let edge_pixels = edges.as_raw().chunks(4).filter(|p| p[0] == 255).count();
    println!(
        "{name}: {edge_pixels} edge pixels of {}, {mismatched} differ from the CPU; level {level}; replay median \
         {} ms (first {} ms)",
        w * h,
        result["medianMs"],
        result["firstMs"]
    );
    assert_eq!(
        mismatched, 0,
        "{name}: edge pixels that differ from the CPU"
    );
    // The check's positive control: one pixel flipped where the gradient is clear of the level is seen.
    let clear = cpu
        .gradient
        .iter()
        .position(|g| (g - level).abs() > 0.1)
        .ok_or("no pixel clear of the level")?;
    let mut flipped = edges.as_raw().clone();
    for channel in &mut flipped[clear * 4..clear * 4 + 3] {
        *channel = 255 - *channel;
    }
    assert_eq!(
        mismatched_edges(&flipped, &cpu.gradient, level, GRADIENT_TOLERANCE),
        1
    );
    assert!(
        edge_pixels > 0 && edge_pixels < w * h,
        "{name}: an edge image with edges"
    );

    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../out");
    std::fs::create_dir_all(&out)?;
    let shot = out.join(format!("web_example_{}.png", name.to_lowercase()));
    std::fs::write(&shot, session.screenshot()?)?;
    println!("screenshot: {}", shot.display());
    Ok(())
}
