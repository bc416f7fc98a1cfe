//! Generated: 200 inline kernels, 50 rounds of a step on `a` fanned out to `b`, `c` and `d`.
//! Each step must wait for the previous round's readers of `a`, so the graph has 100 levels.

use graph_runtime::graph;

graph! {
    graph G {
        params { n: u32 }
        buffers {
            a: [f32] = inout,
            b: [f32] = inout,
            c: [f32] = inout,
            d: [f32] = inout,
        }
        kernel step_00(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 1.0; }
            }
        }
        kernel fan_00_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_00_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_00_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_01(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 2.0; }
            }
        }
        kernel fan_01_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_01_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_01_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_02(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 3.0; }
            }
        }
        kernel fan_02_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_02_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_02_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_03(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 4.0; }
            }
        }
        kernel fan_03_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_03_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_03_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_04(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 5.0; }
            }
        }
        kernel fan_04_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_04_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_04_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_05(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 6.0; }
            }
        }
        kernel fan_05_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_05_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_05_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_06(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 7.0; }
            }
        }
        kernel fan_06_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_06_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_06_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_07(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 8.0; }
            }
        }
        kernel fan_07_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_07_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_07_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_08(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 9.0; }
            }
        }
        kernel fan_08_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_08_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_08_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_09(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 10.0; }
            }
        }
        kernel fan_09_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_09_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_09_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_10(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 11.0; }
            }
        }
        kernel fan_10_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_10_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_10_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_11(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 12.0; }
            }
        }
        kernel fan_11_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_11_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_11_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_12(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 13.0; }
            }
        }
        kernel fan_12_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_12_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_12_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_13(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 14.0; }
            }
        }
        kernel fan_13_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_13_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_13_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_14(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 15.0; }
            }
        }
        kernel fan_14_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_14_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_14_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_15(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 16.0; }
            }
        }
        kernel fan_15_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_15_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_15_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_16(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 17.0; }
            }
        }
        kernel fan_16_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_16_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_16_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_17(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 18.0; }
            }
        }
        kernel fan_17_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_17_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_17_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_18(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 19.0; }
            }
        }
        kernel fan_18_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_18_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_18_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_19(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 20.0; }
            }
        }
        kernel fan_19_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_19_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_19_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_20(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 21.0; }
            }
        }
        kernel fan_20_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_20_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_20_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_21(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 22.0; }
            }
        }
        kernel fan_21_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_21_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_21_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_22(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 23.0; }
            }
        }
        kernel fan_22_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_22_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_22_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_23(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 24.0; }
            }
        }
        kernel fan_23_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_23_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_23_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_24(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 25.0; }
            }
        }
        kernel fan_24_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_24_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_24_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_25(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 26.0; }
            }
        }
        kernel fan_25_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_25_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_25_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_26(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 27.0; }
            }
        }
        kernel fan_26_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_26_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_26_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_27(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 28.0; }
            }
        }
        kernel fan_27_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_27_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_27_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_28(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 29.0; }
            }
        }
        kernel fan_28_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_28_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_28_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_29(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 30.0; }
            }
        }
        kernel fan_29_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_29_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_29_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_30(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 31.0; }
            }
        }
        kernel fan_30_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_30_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_30_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_31(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 32.0; }
            }
        }
        kernel fan_31_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_31_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_31_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_32(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 33.0; }
            }
        }
        kernel fan_32_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_32_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_32_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_33(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 34.0; }
            }
        }
        kernel fan_33_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_33_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_33_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_34(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 35.0; }
            }
        }
        kernel fan_34_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_34_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_34_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_35(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 36.0; }
            }
        }
        kernel fan_35_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_35_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_35_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_36(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 37.0; }
            }
        }
        kernel fan_36_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_36_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_36_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_37(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 38.0; }
            }
        }
        kernel fan_37_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_37_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_37_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_38(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 39.0; }
            }
        }
        kernel fan_38_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_38_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_38_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_39(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 40.0; }
            }
        }
        kernel fan_39_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_39_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_39_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_40(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 41.0; }
            }
        }
        kernel fan_40_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_40_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_40_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_41(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 42.0; }
            }
        }
        kernel fan_41_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_41_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_41_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_42(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 43.0; }
            }
        }
        kernel fan_42_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_42_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_42_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_43(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 44.0; }
            }
        }
        kernel fan_43_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_43_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_43_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_44(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 45.0; }
            }
        }
        kernel fan_44_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_44_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_44_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_45(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 46.0; }
            }
        }
        kernel fan_45_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_45_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_45_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_46(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 47.0; }
            }
        }
        kernel fan_46_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_46_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_46_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_47(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 48.0; }
            }
        }
        kernel fan_47_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_47_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_47_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_48(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 49.0; }
            }
        }
        kernel fan_48_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_48_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_48_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
        kernel step_49(a: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { a[gid.x] = a[gid.x] + 50.0; }
            }
        }
        kernel fan_49_b(a: read, b: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { b[gid.x] = b[gid.x] + a[gid.x]; }
            }
        }
        kernel fan_49_c(a: read, c: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { c[gid.x] = c[gid.x] - a[gid.x]; }
            }
        }
        kernel fan_49_d(a: read, d: read_write) threads(params.n) {
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
                if (gid.x < params.n) { d[gid.x] = d[gid.x] * a[gid.x]; }
            }
        }
    }
}

const _: () = assert!(G::NODE_COUNT == 200);
const _: () = assert!(G::LEVELS.len() == 100);

fn main() {
    // Bake keeps the promise of `FUSED` on this machine's adapter (`ui_tests::fused_as_promised`).
    assert_eq!(ui_tests::fused_as_promised::<G>(G::FUSED), Ok(()));
    assert_eq!(G::LEVELS[1], &[GNode::Fan00B, GNode::Fan00C, GNode::Fan00D]);
    assert_eq!(G::TOPOLOGICAL_ORDER[199], GNode::Fan49D);
}
