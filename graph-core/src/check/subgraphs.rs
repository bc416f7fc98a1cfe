//! Subgraph nodes: each child buffer bound once and, where this front door has the child's description (the
//! builder, graph files), every binding and parameter checked against it. The macro cannot see a child's
//! declaration: it evaluates the same checks ([`crate::subgraph`]) as constants against the child's
//! generated description, so a mismatch is still a compile error at the binding.

use std::sync::Arc;

use super::Checker;
use crate::desc::{BufferDesc, GraphDesc, ParamFieldDesc, SubgraphBinding};
use crate::diagnostic::{Diagnostic, Loc};
use crate::ir::NodeKind;
use crate::subgraph::{SubgraphRef, Subgraphs, check_binding, check_node};

/// Where the checks find the child graphs of subgraph nodes.
#[derive(Debug, Clone, Copy)]
pub struct Children<'a> {
    /// By the name each subgraph node gives (library subgraphs included, see
    /// [`crate::pipeline::library_children`]).
    pub given: &'a Subgraphs,
    /// A child not given is a Rust type of the macro's, whose generated constants check each binding against
    /// the child's `DESCRIPTION`; otherwise it is an error.
    pub const_evaluated: bool,
}

impl Checker<'_> {
    /// The child of each subgraph node, where it is given and its bindings fit; `None` for other nodes.
    pub(super) fn check_subgraphs(
        &mut self,
        children: Children<'_>,
    ) -> Vec<Option<Arc<GraphDesc>>> {
        let graph = self.graph;
        let mut found = vec![None; graph.nodes.len()];
        for (n, node) in graph.nodes.iter().enumerate() {
            let NodeKind::Subgraph {
                graph: path,
                accesses,
            } = &node.kind
            else {
                continue;
            };
            let mut clean = true;
            for (i, access) in accesses.iter().enumerate() {
                if accesses[..i].iter().any(|a| a.binding == access.binding) {
                    clean = false;
                    self.diags.push(Diagnostic::new(
                        Loc::Access { node: n, index: i },
                        format!("subgraph `{}` binds `{}` twice", node.name, access.binding),
                    ));
                }
            }
            let library_path = path.strip_prefix(crate::library::SUBGRAPH_PREFIX);
            if children.const_evaluated
                && library_path.is_none()
                && !children.given.contains_key(path)
            {
                continue;
            }
            let Some(child) = children.given.get(path) else {
                let known: Vec<&str> = children.given.keys().map(String::as_str).collect();
                let diagnostic = if let Some(library_path) = library_path {
                    let paths = self.library.subgraphs.iter().map(|s| s.path);
                    crate::names::unknown(Loc::Node(n), "library subgraph", library_path, paths)
                } else if known.is_empty() {
                    Diagnostic::new(
                        Loc::Node(n),
                        format!(
                            "subgraph `{}` names `{path}`, but no child graphs were given",
                            node.name
                        ),
                    )
                    .with_help(
                        "add subgraphs with `GraphBuilder::subgraph`, and load graph files with \
                         `file::load_with_children`",
                    )
                } else {
                    crate::names::unknown(Loc::Node(n), "child graph", path, known)
                };
                self.diags.push(diagnostic);
                continue;
            };
            let sub = SubgraphRef {
                node: &node.name,
                path,
                child,
            };
            let mut bindings = Vec::new();
            for (i, access) in accesses.iter().enumerate() {
                // A name that is no identifier names no buffer of the child: reported as a name already.
                if !crate::names::is_identifier(&access.binding) {
                    clean = false;
                    continue;
                }
                let (Some(resolved), Some(Some(elem))) = (
                    self.accesses[n].get(i).copied().flatten(),
                    self.accesses[n]
                        .get(i)
                        .copied()
                        .flatten()
                        .map(|a| self.buffer_types.get(a.buffer).copied().flatten()),
                ) else {
                    clean = false;
                    continue;
                };
                let buffer = &graph.buffers[resolved.buffer];
                let parent = BufferDesc {
                    name: buffer.name.clone().into(),
                    elem,
                    len: buffer.len.and_then(|l| u32::try_from(l).ok()),
                    role: buffer.role,
                    no_alias: false,
                    texture: self.textures[resolved.buffer].map(|t| t.declared().into()),
                    texture_size: self.texture_sizes[resolved.buffer],
                    sampler: None,
                };
                let binding = SubgraphBinding {
                    name: access.binding.clone().into(),
                    buffer: resolved.buffer as u32,
                    mode: access.mode,
                };
                if let Err(message) = check_binding(sub, &binding, &parent) {
                    clean = false;
                    self.diags.push(Diagnostic::new(
                        Loc::Access { node: n, index: i },
                        message.to_string(),
                    ));
                }
                bindings.push(binding);
            }
            let params: Vec<ParamFieldDesc> = self
                .params_layout()
                .fields
                .iter()
                .map(|f| ParamFieldDesc {
                    name: f.name.clone().into(),
                    ty: f.ty,
                    offset: f.offset,
                })
                .collect();
            // With a binding dropped, the child would look unbound: say only what is certain.
            if clean && let Err(message) = check_node(sub, &bindings, &params) {
                clean = false;
                self.diags
                    .push(Diagnostic::new(Loc::Node(n), message.to_string()));
            }
            if clean {
                found[n] = Some(child.clone());
            }
        }
        found
    }
}
