//! `#[on(..)]` placements: each names a node of the graph once, a GPU within [`MAX_GPUS`], and the nodes that
//! must run on one GPU (a block's members, a group's alternatives) are not placed apart.

use super::Checker;
use super::resolve::Space;
use crate::diagnostic::{Diagnostic, Loc};
use crate::placement::MAX_GPUS;

impl Checker<'_> {
    /// Each placement names a node, on a GPU a set can have, and places no node twice or a group apart.
    pub(super) fn check_placement(&mut self) {
        let mut gpu_of: Vec<Option<u32>> = vec![None; self.graph.nodes.len()];
        for placement in &self.graph.on {
            // A buffer's name, in the words the macro uses for `#[on(..)]` on a buffer.
            if self.table(Space::Node).get(&placement.node).is_none()
                && let Some(b) = self.table(Space::Buffer).get(&placement.node)
            {
                self.diags.push(Diagnostic::new(
                    Loc::Buffer(b),
                    "`#[on(..)]` places a node on a GPU; a buffer is not one: remove it",
                ));
                continue;
            }
            let Some(n) = self.resolve_name(Space::Node, &placement.node, Loc::Graph) else {
                continue;
            };
            if placement.gpu >= MAX_GPUS {
                self.diags.push(Diagnostic::new(
                    Loc::Node(n),
                    format!(
                        "`#[on({})]`: a set has at most {MAX_GPUS} GPUs, numbered from 0",
                        placement.gpu
                    ),
                ));
                continue;
            }
            match gpu_of[n] {
                Some(gpu) if gpu != placement.gpu => self.diags.push(Diagnostic::new(
                    Loc::Node(n),
                    format!(
                        "node `{}` is placed on GPU {gpu} and on GPU {}: place it once",
                        placement.node, placement.gpu
                    ),
                )),
                _ => gpu_of[n] = Some(placement.gpu),
            }
        }
        // What runs on one GPU: a block (its flag decides on that GPU) and a group of alternatives (one of
        // them runs in the same place).
        let mut together: Vec<(String, Vec<&str>)> = Vec::new();
        for block in &self.graph.blocks {
            let members = block.members().into_iter().map(|(_, n)| n).collect();
            together.push((format!("block `{}`", block.name), members));
        }
        for group in &self.graph.alternatives {
            let members = group.choices.iter().map(String::as_str).collect();
            together.push((format!("group `{}`", group.name), members));
        }
        for (what, members) in together {
            let placed: Vec<(usize, u32)> = members
                .iter()
                .filter_map(|m| self.table(Space::Node).get(m))
                .filter_map(|n| gpu_of[n].map(|gpu| (n, gpu)))
                .collect();
            if let Some(&(first, gpu)) = placed.first()
                && let Some(&(other, other_gpu)) = placed.iter().find(|(_, g)| *g != gpu)
            {
                self.diags.push(Diagnostic::new(
                    Loc::Node(other),
                    format!(
                        "{what} runs on one GPU, but `{}` is placed on GPU {gpu} and `{}` on GPU {other_gpu}",
                        self.graph.nodes[first].name, self.graph.nodes[other].name
                    ),
                ));
            }
        }
    }
}
