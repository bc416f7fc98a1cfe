//! A profile drawn as an SVG timeline: one row per dispatch, a bar from its start to its end on the GPU, its
//! name and time beside it (what Perfetto shows for the trace JSON, as a picture the README can hold).

use std::fmt::Write;

use graph_runtime::Profile;

const ROW: f64 = 22.0;
const LABELS: f64 = 260.0;
const WIDTH: f64 = 900.0;

/// The SVG text of `profile`'s timeline.
pub fn trace_svg(profile: &Profile, title: &str) -> String {
    let end = profile
        .dispatches
        .iter()
        .map(|d| d.end_ns)
        .fold(1.0, f64::max);
    let scale = (WIDTH - LABELS - 90.0) / end;
    let height = 50.0 + ROW * profile.dispatches.len() as f64 + 30.0;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(svg, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        svg,
        "<text x=\"10\" y=\"24\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        escape(title)
    );
    for (row, d) in profile.dispatches.iter().enumerate() {
        let y = 40.0 + ROW * row as f64;
        let x = LABELS + d.start_ns * scale;
        let w = (d.duration_ns() * scale).max(1.0);
        let fill = if d.nodes.len() > 1 {
            "#e07b39"
        } else {
            "#4a7fb5"
        };
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LABELS - 8.0,
            y + 14.0,
            escape(&shorten(&d.label(), 40))
        );
        let _ = writeln!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{fill}\"/>",
            ROW - 6.0
        );
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#333\">{:.1} us</text>",
            x + w + 4.0,
            y + 14.0,
            d.duration_ns() / 1000.0
        );
    }
    let axis = 40.0 + ROW * profile.dispatches.len() as f64 + 16.0;
    let _ = writeln!(
        svg,
        "<text x=\"{LABELS}\" y=\"{axis:.1}\" fill=\"#555\">0 us</text>\
         <text x=\"{:.1}\" y=\"{axis:.1}\" fill=\"#555\" text-anchor=\"end\">{:.1} us \
         (orange: a fused kernel)</text>",
        WIDTH - 10.0,
        end / 1000.0
    );
    svg.push_str("</svg>\n");
    svg
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
