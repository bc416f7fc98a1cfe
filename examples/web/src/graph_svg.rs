//! The graph drawn as SVG, for the page: a layered drawing of a description (one row per level of its
//! schedule, its edges as lines), with the node kinds told apart and the choices of a group of alternatives
//! that do not run greyed. A browser has no Graphviz: this is a small layout of our own, not `dot`'s (the
//! page shows the DOT text beside it).

use std::fmt::Write;

use graph_runtime::desc::{GraphDesc, OpDesc};

const NODE_WIDTH: f32 = 132.0;
const NODE_HEIGHT: f32 = 28.0;
const GAP_X: f32 = 16.0;
const GAP_Y: f32 = 34.0;
const MARGIN: f32 = 12.0;

/// How a node is drawn: its kind's word and fill colour.
fn kind(op: &OpDesc) -> (&'static str, &'static str) {
    match op {
        OpDesc::Kernel(_) => ("kernel", "#dbeafe"),
        OpDesc::Copy { .. } => ("copy", "#e0e7ff"),
        OpDesc::Upload { .. } => ("upload", "#dcfce7"),
        OpDesc::Readback { .. } => ("readback", "#fef9c3"),
        OpDesc::Host { .. } => ("host", "#fee2e2"),
        OpDesc::Interop { .. } => ("interop", "#f3e8ff"),
        _ => ("node", "#f1f5f9"),
    }
}

/// Escapes text for SVG.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `desc` as SVG, each level a row in schedule order; `runs(node)` is false for a node that does not run (a
/// choice of alternatives not selected), drawn dashed and grey.
pub fn graph_svg(desc: &GraphDesc, runs: impl Fn(usize) -> bool) -> String {
    let widest = desc
        .levels
        .iter()
        .map(|l| l.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let width = 2.0 * MARGIN + widest as f32 * (NODE_WIDTH + GAP_X) - GAP_X;
    let height = 2.0 * MARGIN + desc.levels.len() as f32 * (NODE_HEIGHT + GAP_Y) - GAP_Y;
    // Each node's top-left corner; nodes in no level (none, in a valid description) are not drawn.
    let mut at = vec![None; desc.nodes.len()];
    for (row, level) in desc.levels.iter().enumerate() {
        // A narrower row is centred.
        let offset = (widest - level.len()) as f32 * (NODE_WIDTH + GAP_X) / 2.0;
        for (column, &node) in level.iter().enumerate() {
            let x = MARGIN + offset + column as f32 * (NODE_WIDTH + GAP_X);
            let y = MARGIN + row as f32 * (NODE_HEIGHT + GAP_Y);
            if let Some(slot) = at.get_mut(node as usize) {
                *slot = Some((x, y));
            }
        }
    }
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0} {height:.0}" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(svg, "<title>{}</title>", escape(&desc.name));
    for edge in desc.edges.iter() {
        let (Some(Some((x0, y0))), Some(Some((x1, y1)))) =
            (at.get(edge.from as usize), at.get(edge.to as usize))
        else {
            continue;
        };
        let _ = write!(
            svg,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#64748b" stroke-width="1"/>"##,
            x0 + NODE_WIDTH / 2.0,
            y0 + NODE_HEIGHT,
            x1 + NODE_WIDTH / 2.0,
            y1
        );
    }
    for (index, node) in desc.nodes.iter().enumerate() {
        let Some(Some((x, y))) = at.get(index) else {
            continue;
        };
        let (word, fill) = kind(&node.op);
        let (fill, dash, ink) = if runs(index) {
            (fill, "", "#0f172a")
        } else {
            ("#f8fafc", r#" stroke-dasharray="4 3""#, "#94a3b8")
        };
        let _ = write!(
            svg,
            r##"<g class="{word}"><rect x="{x:.1}" y="{y:.1}" width="{NODE_WIDTH}" height="{NODE_HEIGHT}" rx="5" fill="{fill}" stroke="#475569"{dash}/><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{ink}">{}</text></g>"##,
            x + NODE_WIDTH / 2.0,
            y + NODE_HEIGHT / 2.0 + 4.0,
            escape(&node.name)
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use examples::edge_pipeline::EdgePipeline;
    use graph_runtime::pipeline::flatten;

    #[test]
    fn every_node_and_edge_is_drawn_and_choices_not_running_are_grey() {
        let desc = EdgePipeline::DESCRIPTION;
        let sobel = desc
            .nodes
            .iter()
            .position(|n| &*n.name == "sobel")
            .expect("sobel");
        let svg = graph_svg(desc, |n| n != sobel);
        assert_eq!(svg.matches("<rect").count(), desc.nodes.len());
        assert_eq!(svg.matches("<line").count(), desc.edges.len());
        assert_eq!(svg.matches("stroke-dasharray").count(), 1);
        assert!(svg.contains(">scharr</text>") && svg.contains(">otsu</text>"));
        // A flattened description too (the blur's nodes named `blur.along_rows`, ..).
        let flat = flatten(desc).expect("flattened");
        let svg = graph_svg(&flat, |_| true);
        assert_eq!(svg.matches("<rect").count(), flat.nodes.len());
        assert!(!svg.contains("stroke-dasharray"));
    }

    #[test]
    fn names_are_escaped() {
        assert_eq!(escape("a<b>&\"c\""), "a&lt;b&gt;&amp;&quot;c&quot;");
    }
}
