//! The baked graph against hand-written wgpu, in one run on one device, for four DAG shapes over 64K-element
//! f32 buffers:
//!
//! - **chain**: 100 kernels, each updating `y` from `x` and the old `y` (100 levels);
//! - **fan**: 100 independent kernels, each writing its own buffer from `x` (1 level);
//! - **chains**: 10 independent chains of 10 kernels side by side (10 levels of 10);
//! - **tree**: a reduction tree, 64 leaves from `x` then pairwise sums down to one root (127 nodes, 7 levels).
//!
//! Three sides run each shape, every one with the same WGSL statements (the graph's kernels name their
//! buffers, the hand-written ones bind generic `src`/`a`/`b`/`dst`):
//!
//! - **graph**: the baked graph's replay;
//! - **one encoder**: what a careful user writes by hand: pipelines (one per kind of kernel) and bind groups
//!   made once, then per run one encoder, one compute pass with every dispatch in topological order, one
//!   submission (wgpu places its barriers);
//! - **per node**: the naive hand-written version, one encoder, pass and submission per node.
//!
//! Printed per shape and side: the median wall time of one run (submit to finished) and the median CPU time
//! to record and submit it, whole and per node. Before the timing, each side's output is checked once
//! against an f64 reference within the rounding its arithmetic allows, its outputs poisoned first.
//!
//! Run: `cargo bench -p graph-runtime --bench replay_vs_hand_written [-- --runs N]` (default 100 runs).

use std::time::{Duration, Instant};

use graph_runtime::{Baked, Buffer, Error, Gpu, TaskGraph, graph, wgpu};

/// Elements per buffer.
const N: usize = 64 * 1024;

// ---------------------------------------------------------------------------------------------------------
// The graphs. Their kernels are the three below, with the buffers' own names.

macro_rules! chain_graph {
    ($($k:ident)*) => {
        graph! {
            /// 100 kernels, each updating `y` from `x` and the old `y`: a dependent chain.
            graph Chain {
                buffers { x: [f32] = input, y: [f32] = inout }
                $(
                    kernel $k(x: read, y: read_write) {
                        @compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            let i = gid.x;
                            if (i < arrayLength(&y)) { y[i] = y[i] * 0.999 + x[i]; }
                        }
                    }
                )*
            }
        }
    };
}

macro_rules! fan_graph {
    ($(($k:ident, $o:ident))*) => {
        graph! {
            /// 100 kernels, each reading `x` and writing its own buffer: no edges at all.
            graph Fan {
                buffers { x: [f32] = input, $( $o: [f32] = output, )* }
                $(
                    kernel $k(x: read, $o: write) {
                        @compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            let i = gid.x;
                            if (i < arrayLength(&$o)) { $o[i] = x[i] * 0.999 + 1.0; }
                        }
                    }
                )*
            }
        }
    };
}

macro_rules! chains_graph {
    ($($c:ident: $($k:ident)*;)*) => {
        graph! {
            /// Independent chains side by side, each updating its own buffer from `x`.
            graph Chains {
                buffers { x: [f32] = input, $( $c: [f32] = inout, )* }
                $($(
                    kernel $k(x: read, $c: read_write) {
                        @compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            let i = gid.x;
                            if (i < arrayLength(&$c)) { $c[i] = $c[i] * 0.999 + x[i]; }
                        }
                    }
                )*)*
            }
        }
    };
}

macro_rules! tree_graph {
    (
        leaves: $(($l:ident, $lo:ident))*;
        combines: $(($s:ident, $a:ident, $b:ident, $so:ident))*;
        owned: $($t:ident)*
    ) => {
        graph! {
            /// A reduction tree: leaves scale `x` into graph-owned buffers, pairwise sums meet at `root`.
            graph Tree {
                buffers { x: [f32] = input, root: [f32] = output, $( $t: [f32; 65536], )* }
                $(
                    kernel $l(x: read, $lo: write) {
                        @compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            let i = gid.x;
                            if (i < arrayLength(&$lo)) { $lo[i] = x[i] * 0.999 + 1.0; }
                        }
                    }
                )*
                $(
                    kernel $s($a: read, $b: read, $so: write) {
                        @compute @workgroup_size(64)
                        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                            let i = gid.x;
                            if (i < arrayLength(&$so)) { $so[i] = $a[i] + $b[i]; }
                        }
                    }
                )*
            }
        }
    };
}

chain_graph! {
    k0 k1 k2 k3 k4 k5 k6 k7 k8 k9 k10 k11 k12 k13 k14 k15 k16 k17 k18 k19 k20 k21 k22 k23 k24 k25 k26 k27 k28 k29
    k30 k31 k32 k33 k34 k35 k36 k37 k38 k39 k40 k41 k42 k43 k44 k45 k46 k47 k48 k49 k50 k51 k52 k53 k54 k55 k56 k57
    k58 k59 k60 k61 k62 k63 k64 k65 k66 k67 k68 k69 k70 k71 k72 k73 k74 k75 k76 k77 k78 k79 k80 k81 k82 k83 k84 k85
    k86 k87 k88 k89 k90 k91 k92 k93 k94 k95 k96 k97 k98 k99
}

fan_graph! {
    (f0, o0) (f1, o1) (f2, o2) (f3, o3) (f4, o4) (f5, o5) (f6, o6) (f7, o7) (f8, o8) (f9, o9) (f10, o10) (f11, o11)
    (f12, o12) (f13, o13) (f14, o14) (f15, o15) (f16, o16) (f17, o17) (f18, o18) (f19, o19) (f20, o20) (f21, o21)
    (f22, o22) (f23, o23) (f24, o24) (f25, o25) (f26, o26) (f27, o27) (f28, o28) (f29, o29) (f30, o30) (f31, o31)
    (f32, o32) (f33, o33) (f34, o34) (f35, o35) (f36, o36) (f37, o37) (f38, o38) (f39, o39) (f40, o40) (f41, o41)
    (f42, o42) (f43, o43) (f44, o44) (f45, o45) (f46, o46) (f47, o47) (f48, o48) (f49, o49) (f50, o50) (f51, o51)
    (f52, o52) (f53, o53) (f54, o54) (f55, o55) (f56, o56) (f57, o57) (f58, o58) (f59, o59) (f60, o60) (f61, o61)
    (f62, o62) (f63, o63) (f64, o64) (f65, o65) (f66, o66) (f67, o67) (f68, o68) (f69, o69) (f70, o70) (f71, o71)
    (f72, o72) (f73, o73) (f74, o74) (f75, o75) (f76, o76) (f77, o77) (f78, o78) (f79, o79) (f80, o80) (f81, o81)
    (f82, o82) (f83, o83) (f84, o84) (f85, o85) (f86, o86) (f87, o87) (f88, o88) (f89, o89) (f90, o90) (f91, o91)
    (f92, o92) (f93, o93) (f94, o94) (f95, o95) (f96, o96) (f97, o97) (f98, o98) (f99, o99)
}

chains_graph! {
    c0: c0_0 c0_1 c0_2 c0_3 c0_4 c0_5 c0_6 c0_7 c0_8 c0_9;
    c1: c1_0 c1_1 c1_2 c1_3 c1_4 c1_5 c1_6 c1_7 c1_8 c1_9;
    c2: c2_0 c2_1 c2_2 c2_3 c2_4 c2_5 c2_6 c2_7 c2_8 c2_9;
    c3: c3_0 c3_1 c3_2 c3_3 c3_4 c3_5 c3_6 c3_7 c3_8 c3_9;
    c4: c4_0 c4_1 c4_2 c4_3 c4_4 c4_5 c4_6 c4_7 c4_8 c4_9;
    c5: c5_0 c5_1 c5_2 c5_3 c5_4 c5_5 c5_6 c5_7 c5_8 c5_9;
    c6: c6_0 c6_1 c6_2 c6_3 c6_4 c6_5 c6_6 c6_7 c6_8 c6_9;
    c7: c7_0 c7_1 c7_2 c7_3 c7_4 c7_5 c7_6 c7_7 c7_8 c7_9;
    c8: c8_0 c8_1 c8_2 c8_3 c8_4 c8_5 c8_6 c8_7 c8_8 c8_9;
    c9: c9_0 c9_1 c9_2 c9_3 c9_4 c9_5 c9_6 c9_7 c9_8 c9_9;
}

tree_graph! {
    leaves:
        (leaf0, t0_0) (leaf1, t0_1) (leaf2, t0_2) (leaf3, t0_3) (leaf4, t0_4) (leaf5, t0_5) (leaf6, t0_6)
        (leaf7, t0_7) (leaf8, t0_8) (leaf9, t0_9) (leaf10, t0_10) (leaf11, t0_11) (leaf12, t0_12) (leaf13, t0_13)
        (leaf14, t0_14) (leaf15, t0_15) (leaf16, t0_16) (leaf17, t0_17) (leaf18, t0_18) (leaf19, t0_19)
        (leaf20, t0_20) (leaf21, t0_21) (leaf22, t0_22) (leaf23, t0_23) (leaf24, t0_24) (leaf25, t0_25)
        (leaf26, t0_26) (leaf27, t0_27) (leaf28, t0_28) (leaf29, t0_29) (leaf30, t0_30) (leaf31, t0_31)
        (leaf32, t0_32) (leaf33, t0_33) (leaf34, t0_34) (leaf35, t0_35) (leaf36, t0_36) (leaf37, t0_37)
        (leaf38, t0_38) (leaf39, t0_39) (leaf40, t0_40) (leaf41, t0_41) (leaf42, t0_42) (leaf43, t0_43)
        (leaf44, t0_44) (leaf45, t0_45) (leaf46, t0_46) (leaf47, t0_47) (leaf48, t0_48) (leaf49, t0_49)
        (leaf50, t0_50) (leaf51, t0_51) (leaf52, t0_52) (leaf53, t0_53) (leaf54, t0_54) (leaf55, t0_55)
        (leaf56, t0_56) (leaf57, t0_57) (leaf58, t0_58) (leaf59, t0_59) (leaf60, t0_60) (leaf61, t0_61)
        (leaf62, t0_62) (leaf63, t0_63);
    combines:
        (sum1_0, t0_0, t0_1, t1_0) (sum1_1, t0_2, t0_3, t1_1) (sum1_2, t0_4, t0_5, t1_2) (sum1_3, t0_6, t0_7, t1_3)
        (sum1_4, t0_8, t0_9, t1_4) (sum1_5, t0_10, t0_11, t1_5) (sum1_6, t0_12, t0_13, t1_6)
        (sum1_7, t0_14, t0_15, t1_7) (sum1_8, t0_16, t0_17, t1_8) (sum1_9, t0_18, t0_19, t1_9)
        (sum1_10, t0_20, t0_21, t1_10) (sum1_11, t0_22, t0_23, t1_11) (sum1_12, t0_24, t0_25, t1_12)
        (sum1_13, t0_26, t0_27, t1_13) (sum1_14, t0_28, t0_29, t1_14) (sum1_15, t0_30, t0_31, t1_15)
        (sum1_16, t0_32, t0_33, t1_16) (sum1_17, t0_34, t0_35, t1_17) (sum1_18, t0_36, t0_37, t1_18)
        (sum1_19, t0_38, t0_39, t1_19) (sum1_20, t0_40, t0_41, t1_20) (sum1_21, t0_42, t0_43, t1_21)
        (sum1_22, t0_44, t0_45, t1_22) (sum1_23, t0_46, t0_47, t1_23) (sum1_24, t0_48, t0_49, t1_24)
        (sum1_25, t0_50, t0_51, t1_25) (sum1_26, t0_52, t0_53, t1_26) (sum1_27, t0_54, t0_55, t1_27)
        (sum1_28, t0_56, t0_57, t1_28) (sum1_29, t0_58, t0_59, t1_29) (sum1_30, t0_60, t0_61, t1_30)
        (sum1_31, t0_62, t0_63, t1_31) (sum2_0, t1_0, t1_1, t2_0) (sum2_1, t1_2, t1_3, t2_1)
        (sum2_2, t1_4, t1_5, t2_2) (sum2_3, t1_6, t1_7, t2_3) (sum2_4, t1_8, t1_9, t2_4)
        (sum2_5, t1_10, t1_11, t2_5) (sum2_6, t1_12, t1_13, t2_6) (sum2_7, t1_14, t1_15, t2_7)
        (sum2_8, t1_16, t1_17, t2_8) (sum2_9, t1_18, t1_19, t2_9) (sum2_10, t1_20, t1_21, t2_10)
        (sum2_11, t1_22, t1_23, t2_11) (sum2_12, t1_24, t1_25, t2_12) (sum2_13, t1_26, t1_27, t2_13)
        (sum2_14, t1_28, t1_29, t2_14) (sum2_15, t1_30, t1_31, t2_15) (sum3_0, t2_0, t2_1, t3_0)
        (sum3_1, t2_2, t2_3, t3_1) (sum3_2, t2_4, t2_5, t3_2) (sum3_3, t2_6, t2_7, t3_3) (sum3_4, t2_8, t2_9, t3_4)
        (sum3_5, t2_10, t2_11, t3_5) (sum3_6, t2_12, t2_13, t3_6) (sum3_7, t2_14, t2_15, t3_7)
        (sum4_0, t3_0, t3_1, t4_0) (sum4_1, t3_2, t3_3, t4_1) (sum4_2, t3_4, t3_5, t4_2) (sum4_3, t3_6, t3_7, t4_3)
        (sum5_0, t4_0, t4_1, t5_0) (sum5_1, t4_2, t4_3, t5_1) (sum6_0, t5_0, t5_1, root);
    owned:
        t0_0 t0_1 t0_2 t0_3 t0_4 t0_5 t0_6 t0_7 t0_8 t0_9 t0_10 t0_11 t0_12 t0_13 t0_14 t0_15 t0_16 t0_17 t0_18
        t0_19 t0_20 t0_21 t0_22 t0_23 t0_24 t0_25 t0_26 t0_27 t0_28 t0_29 t0_30 t0_31 t0_32 t0_33 t0_34 t0_35 t0_36
        t0_37 t0_38 t0_39 t0_40 t0_41 t0_42 t0_43 t0_44 t0_45 t0_46 t0_47 t0_48 t0_49 t0_50 t0_51 t0_52 t0_53 t0_54
        t0_55 t0_56 t0_57 t0_58 t0_59 t0_60 t0_61 t0_62 t0_63 t1_0 t1_1 t1_2 t1_3 t1_4 t1_5 t1_6 t1_7 t1_8 t1_9
        t1_10 t1_11 t1_12 t1_13 t1_14 t1_15 t1_16 t1_17 t1_18 t1_19 t1_20 t1_21 t1_22 t1_23 t1_24 t1_25 t1_26 t1_27
        t1_28 t1_29 t1_30 t1_31 t2_0 t2_1 t2_2 t2_3 t2_4 t2_5 t2_6 t2_7 t2_8 t2_9 t2_10 t2_11 t2_12 t2_13 t2_14
        t2_15 t3_0 t3_1 t3_2 t3_3 t3_4 t3_5 t3_6 t3_7 t4_0 t4_1 t4_2 t4_3 t5_0 t5_1
}

/// The fan's buffers: `x`, then `o0`..`o99`.
fn fan_buffers(b: &[Buffer<f32>]) -> FanBuffers<'_> {
    FanBuffers {
        x: &b[0],
        o0: &b[1],
        o1: &b[2],
        o2: &b[3],
        o3: &b[4],
        o4: &b[5],
        o5: &b[6],
        o6: &b[7],
        o7: &b[8],
        o8: &b[9],
        o9: &b[10],
        o10: &b[11],
        o11: &b[12],
        o12: &b[13],
        o13: &b[14],
        o14: &b[15],
        o15: &b[16],
        o16: &b[17],
        o17: &b[18],
        o18: &b[19],
        o19: &b[20],
        o20: &b[21],
        o21: &b[22],
        o22: &b[23],
        o23: &b[24],
        o24: &b[25],
        o25: &b[26],
        o26: &b[27],
        o27: &b[28],
        o28: &b[29],
        o29: &b[30],
        o30: &b[31],
        o31: &b[32],
        o32: &b[33],
        o33: &b[34],
        o34: &b[35],
        o35: &b[36],
        o36: &b[37],
        o37: &b[38],
        o38: &b[39],
        o39: &b[40],
        o40: &b[41],
        o41: &b[42],
        o42: &b[43],
        o43: &b[44],
        o44: &b[45],
        o45: &b[46],
        o46: &b[47],
        o47: &b[48],
        o48: &b[49],
        o49: &b[50],
        o50: &b[51],
        o51: &b[52],
        o52: &b[53],
        o53: &b[54],
        o54: &b[55],
        o55: &b[56],
        o56: &b[57],
        o57: &b[58],
        o58: &b[59],
        o59: &b[60],
        o60: &b[61],
        o61: &b[62],
        o62: &b[63],
        o63: &b[64],
        o64: &b[65],
        o65: &b[66],
        o66: &b[67],
        o67: &b[68],
        o68: &b[69],
        o69: &b[70],
        o70: &b[71],
        o71: &b[72],
        o72: &b[73],
        o73: &b[74],
        o74: &b[75],
        o75: &b[76],
        o76: &b[77],
        o77: &b[78],
        o78: &b[79],
        o79: &b[80],
        o80: &b[81],
        o81: &b[82],
        o82: &b[83],
        o83: &b[84],
        o84: &b[85],
        o85: &b[86],
        o86: &b[87],
        o87: &b[88],
        o88: &b[89],
        o89: &b[90],
        o90: &b[91],
        o91: &b[92],
        o92: &b[93],
        o93: &b[94],
        o94: &b[95],
        o95: &b[96],
        o96: &b[97],
        o97: &b[98],
        o98: &b[99],
        o99: &b[100],
    }
}

/// The chains' buffers: `x`, then `c0`..`c9`.
fn chains_buffers(b: &[Buffer<f32>]) -> ChainsBuffers<'_> {
    ChainsBuffers {
        x: &b[0],
        c0: &b[1],
        c1: &b[2],
        c2: &b[3],
        c3: &b[4],
        c4: &b[5],
        c5: &b[6],
        c6: &b[7],
        c7: &b[8],
        c8: &b[9],
        c9: &b[10],
    }
}

// ---------------------------------------------------------------------------------------------------------
// The hand-written sides, and the DAGs they (and the CPU reference) follow.

/// The kernels, with generic names: the same statements as the graphs'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `dst = dst * 0.999 + src`
    Step,
    /// `dst = src * 0.999 + 1`
    Scale,
    /// `dst = a + b`
    Add,
}

const KINDS: [Kind; 3] = [Kind::Step, Kind::Scale, Kind::Add];

impl Kind {
    fn wgsl(self) -> &'static str {
        match self {
            Kind::Step => {
                "@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&dst)) { dst[i] = dst[i] * 0.999 + src[i]; }
}"
            }
            Kind::Scale => {
                "@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&dst)) { dst[i] = src[i] * 0.999 + 1.0; }
}"
            }
            Kind::Add => {
                "@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&dst)) { dst[i] = a[i] + b[i]; }
}"
            }
        }
    }
}

/// One node: its kernel, the buffers it reads (besides its output for `Step`) and the one it writes.
struct Node {
    kind: Kind,
    inputs: Vec<usize>,
    output: usize,
}

/// A shape: buffer 0 is `x`; `state` buffers start from data and are updated in place; `outputs` are
/// overwritten; `checked` are compared with the reference.
struct Dag {
    name: &'static str,
    buffers: usize,
    state: Vec<usize>,
    checked: Vec<usize>,
    nodes: Vec<Node>,
    levels: usize,
}

fn chain_dag() -> Dag {
    Dag {
        name: "chain",
        buffers: 2,
        state: vec![1],
        checked: vec![1],
        nodes: (0..100)
            .map(|_| Node {
                kind: Kind::Step,
                inputs: vec![0],
                output: 1,
            })
            .collect(),
        levels: 100,
    }
}

fn fan_dag() -> Dag {
    Dag {
        name: "fan",
        buffers: 101,
        state: vec![],
        checked: (1..=100).collect(),
        nodes: (1..=100)
            .map(|o| Node {
                kind: Kind::Scale,
                inputs: vec![0],
                output: o,
            })
            .collect(),
        levels: 1,
    }
}

/// Ten chains of ten, in the graph's declaration order (chain by chain).
fn chains_dag() -> Dag {
    Dag {
        name: "chains 10x10",
        buffers: 11,
        state: (1..=10).collect(),
        checked: (1..=10).collect(),
        nodes: (1..=10)
            .flat_map(|c| {
                (0..10).map(move |_| Node {
                    kind: Kind::Step,
                    inputs: vec![0],
                    output: c,
                })
            })
            .collect(),
        levels: 10,
    }
}

/// Buffers 1..=64 the leaves, then each level's sums; the last buffer is the root.
fn tree_dag() -> Dag {
    let mut nodes: Vec<Node> = (1..=64)
        .map(|o| Node {
            kind: Kind::Scale,
            inputs: vec![0],
            output: o,
        })
        .collect();
    let (mut level_start, mut width, mut next) = (1, 64, 65);
    while width > 1 {
        for j in 0..width / 2 {
            nodes.push(Node {
                kind: Kind::Add,
                inputs: vec![level_start + 2 * j, level_start + 2 * j + 1],
                output: next + j,
            });
        }
        level_start = next;
        next += width / 2;
        width /= 2;
    }
    Dag {
        name: "tree",
        buffers: next,
        state: vec![],
        checked: vec![next - 1],
        nodes,
        levels: 7,
    }
}

/// Per-element reference in f64, and the most f32 may differ from it: each operation rounds once (or a
/// multiply-add once when fused), and earlier errors pass through scaled by the operation.
fn reference(dag: &Dag, x: &[f32], state: &[f32]) -> Vec<(Vec<f64>, Vec<f64>)> {
    const U: f64 = f32::EPSILON as f64 / 2.0;
    let c = f64::from(0.999f32);
    let mut values: Vec<Vec<f64>> = vec![vec![0.0; N]; dag.buffers];
    let mut bounds: Vec<Vec<f64>> = vec![vec![0.0; N]; dag.buffers];
    values[0] = x.iter().map(|&v| f64::from(v)).collect();
    for &s in &dag.state {
        values[s] = state.iter().map(|&v| f64::from(v)).collect();
    }
    for node in &dag.nodes {
        for i in 0..N {
            let (value, bound) = match node.kind {
                Kind::Step => {
                    let (d, s) = (values[node.output][i], values[node.inputs[0]][i]);
                    let v = d * c + s;
                    (
                        v,
                        c * bounds[node.output][i]
                            + bounds[node.inputs[0]][i]
                            + U * ((d * c).abs() + v.abs()),
                    )
                }
                Kind::Scale => {
                    let s = values[node.inputs[0]][i];
                    let v = s * c + 1.0;
                    (
                        v,
                        c * bounds[node.inputs[0]][i] + U * ((s * c).abs() + v.abs()),
                    )
                }
                Kind::Add => {
                    let (a, b) = (node.inputs[0], node.inputs[1]);
                    let v = values[a][i] + values[b][i];
                    (v, bounds[a][i] + bounds[b][i] + U * v.abs())
                }
            };
            values[node.output][i] = value;
            bounds[node.output][i] = bound * 1.000_001;
        }
    }
    dag.checked
        .iter()
        .map(|&b| (values[b].clone(), bounds[b].clone()))
        .collect()
}

/// The hand-written program: buffers, one pipeline per kind, one bind group per node.
struct HandWritten {
    buffers: Vec<Buffer<f32>>,
    pipelines: Vec<wgpu::ComputePipeline>,
    nodes: Vec<(usize, wgpu::BindGroup)>,
}

impl HandWritten {
    fn new(gpu: &Gpu, dag: &Dag, x: &[f32]) -> Result<Self, Error> {
        let device = gpu.device();
        let mut buffers = vec![gpu.buffer_from_slice(x)?];
        for _ in 1..dag.buffers {
            buffers.push(gpu.buffer_zeroed::<f32>(N)?);
        }
        let pipelines: Vec<wgpu::ComputePipeline> = KINDS
            .iter()
            .map(|kind| {
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: None,
                    source: wgpu::ShaderSource::Wgsl(kind.wgsl().into()),
                });
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: None,
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                })
            })
            .collect();
        let nodes = dag
            .nodes
            .iter()
            .map(|node| {
                let p = KINDS.iter().position(|k| *k == node.kind).unwrap_or(0);
                let mut bound: Vec<usize> = node.inputs.clone();
                bound.push(node.output);
                let entries: Vec<wgpu::BindGroupEntry<'_>> = bound
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| wgpu::BindGroupEntry {
                        binding: i as u32,
                        resource: buffers[b].wgpu().as_entire_binding(),
                    })
                    .collect();
                let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipelines[p].get_bind_group_layout(0),
                    entries: &entries,
                });
                (p, group)
            })
            .collect();
        Ok(HandWritten {
            buffers,
            pipelines,
            nodes,
        })
    }

    /// Every dispatch in one compute pass of one encoder, one submission.
    fn one_encoder(&self, gpu: &Gpu) -> wgpu::SubmissionIndex {
        let mut encoder = gpu.device().create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            let mut current = None;
            for (p, group) in &self.nodes {
                if current != Some(*p) {
                    pass.set_pipeline(&self.pipelines[*p]);
                    current = Some(*p);
                }
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups((N as u32).div_ceil(64), 1, 1);
            }
        }
        gpu.queue().submit([encoder.finish()])
    }

    /// An encoder, a pass and a submission per node.
    fn per_node(&self, gpu: &Gpu) -> Option<wgpu::SubmissionIndex> {
        let mut last = None;
        for (p, group) in &self.nodes {
            let mut encoder = gpu.device().create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&self.pipelines[*p]);
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups((N as u32).div_ceil(64), 1, 1);
            }
            last = Some(gpu.queue().submit([encoder.finish()]));
        }
        last
    }
}

// ---------------------------------------------------------------------------------------------------------
// Measuring and checking.

struct Timing {
    wall: Duration,
    cpu: Duration,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `runs` runs after 3 warm-up ones; each sample is submit-to-finished wall time and the CPU time of `submit`
/// alone.
fn measure(
    gpu: &Gpu,
    runs: usize,
    mut submit: impl FnMut() -> Result<Option<wgpu::SubmissionIndex>, Error>,
) -> Result<Timing, Error> {
    for _ in 0..3 {
        let s = submit()?;
        gpu.wait_for(s)?;
    }
    let (mut walls, mut cpus) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let start = Instant::now();
        let s = submit()?;
        cpus.push(start.elapsed());
        gpu.wait_for(s)?;
        walls.push(start.elapsed());
    }
    Ok(Timing {
        wall: median(walls),
        cpu: median(cpus),
    })
}

/// Puts `state` back in the state buffers and NaN in the others (but `x`), then runs `submit` once and
/// compares the checked buffers with the reference.
fn check_once(
    gpu: &Gpu,
    dag: &Dag,
    side: &str,
    buffers: &[&Buffer<f32>],
    state: &[f32],
    expected: &[(Vec<f64>, Vec<f64>)],
    submit: impl FnOnce() -> Result<Option<wgpu::SubmissionIndex>, Error>,
) -> Result<(), Error> {
    for (b, buffer) in buffers.iter().enumerate().skip(1) {
        if dag.state.contains(&b) {
            buffer.write(state)?;
        } else {
            buffer.write(&vec![f32::NAN; N])?;
        }
    }
    let s = submit()?;
    gpu.wait_for(s)?;
    for (&b, (exact, bound)) in dag.checked.iter().zip(expected) {
        let got = buffers[b].read_blocking()?;
        for i in 0..N {
            let error = (f64::from(got[i]) - exact[i]).abs();
            if error.is_nan() || error > bound[i] {
                return Err(Error::Gpu(format!(
                    "{} / {side}: buffer {b}[{i}] is {}, the reference {} (bound {:e})",
                    dag.name, got[i], exact[i], bound[i]
                )));
            }
        }
    }
    Ok(())
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn row(dag: &Dag, side: &str, t: &Timing) {
    let n = dag.nodes.len() as f64;
    println!(
        "| {:<12} | {:>5} | {:>6} | {:<12} | {:>9.1} | {:>7.2} | {:>9.1} | {:>7.2} |",
        dag.name,
        dag.nodes.len(),
        dag.levels,
        side,
        us(t.wall),
        us(t.wall) / n,
        us(t.cpu),
        us(t.cpu) / n,
    );
}

/// Runs one shape on all three sides: checks each, then times each.
fn shape<G: TaskGraph>(
    gpu: &Gpu,
    runs: usize,
    dag: &Dag,
    bake: impl FnOnce(&[Buffer<f32>]) -> Result<Baked<G>, Error>,
) -> Result<[Timing; 3], Error> {
    let x: Vec<f32> = (0..N).map(|i| (i % 97) as f32 * 0.01).collect();
    let state: Vec<f32> = (0..N).map(|i| (i % 13) as f32 * 0.1).collect();
    let expected = reference(dag, &x, &state);

    let mut graph_buffers = vec![gpu.buffer_from_slice(&x)?];
    for _ in 1..dag.buffers {
        graph_buffers.push(gpu.buffer_zeroed::<f32>(N)?);
    }
    let mut graph = bake(&graph_buffers)?;
    let hand = HandWritten::new(gpu, dag, &x)?;

    let graph_refs: Vec<&Buffer<f32>> = graph_buffers.iter().collect();
    let hand_refs: Vec<&Buffer<f32>> = hand.buffers.iter().collect();
    check_once(gpu, dag, "graph", &graph_refs, &state, &expected, || {
        Ok(graph.replay()?.into_index())
    })?;
    check_once(
        gpu,
        dag,
        "one encoder",
        &hand_refs,
        &state,
        &expected,
        || Ok(Some(hand.one_encoder(gpu))),
    )?;
    check_once(gpu, dag, "per node", &hand_refs, &state, &expected, || {
        Ok(hand.per_node(gpu))
    })?;

    let g = measure(gpu, runs, || Ok(graph.replay()?.into_index()))?;
    let o = measure(gpu, runs, || Ok(Some(hand.one_encoder(gpu))))?;
    let p = measure(gpu, runs, || Ok(hand.per_node(gpu)))?;
    row(dag, "graph", &g);
    row(dag, "one encoder", &o);
    row(dag, "per node", &p);
    Ok([g, o, p])
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(100);
    let gpu = Gpu::new_blocking()?;
    println!("adapter: {}", gpu.summary());
    println!(
        "{N}-element f32 buffers; medians of {runs} runs after 3 warm-up runs; every side's output checked \
         against an f64 reference first"
    );
    println!();
    println!(
        "| shape        | nodes | levels | side         |   wall us | us/node |    CPU us | us/node |"
    );
    println!(
        "|--------------|------:|-------:|--------------|----------:|--------:|----------:|--------:|"
    );
    let mut summary = Vec::new();
    let dag = chain_dag();
    let t = shape(&gpu, runs, &dag, |b| {
        Chain::bake(&gpu, ChainBuffers { x: &b[0], y: &b[1] })
    })?;
    summary.push((dag.name, t));
    let dag = fan_dag();
    let t = shape(&gpu, runs, &dag, |b| Fan::bake(&gpu, fan_buffers(b)))?;
    summary.push((dag.name, t));
    let dag = chains_dag();
    let t = shape(&gpu, runs, &dag, |b| Chains::bake(&gpu, chains_buffers(b)))?;
    summary.push((dag.name, t));
    let dag = tree_dag();
    let t = shape(&gpu, runs, &dag, |b| {
        Tree::bake(
            &gpu,
            TreeBuffers {
                x: &b[0],
                root: &b[dag.buffers - 1],
            },
        )
    })?;
    summary.push((dag.name, t));

    println!();
    println!("graph against one encoder (below 1: the graph is faster) and against per node:");
    for (name, [g, o, p]) in summary {
        println!(
            "  {name:<12} wall {:.2}x, CPU {:.2}x | against per node: wall {:.3}x, CPU {:.3}x",
            g.wall.as_secs_f64() / o.wall.as_secs_f64(),
            g.cpu.as_secs_f64() / o.cpu.as_secs_f64(),
            g.wall.as_secs_f64() / p.wall.as_secs_f64(),
            g.cpu.as_secs_f64() / p.cpu.as_secs_f64(),
        );
    }
    Ok(())
}
