// bins[b] += how many elements of input fall in bin b, the bins splitting [lo, hi) evenly; elements outside
// [lo, hi) are not counted. The bins are atomics, so invocations add concurrently; zero them first (a fill).
//
// With at most LOCAL_BINS bins, each workgroup counts its share in workgroup memory first and then adds each
// of its nonzero counts to `bins` once: one atomic on memory per bin per workgroup, not one per element
// (the elements of an image crowd into few bins, and their atomics on memory queued behind each other).
// Each invocation strides over input, so any dispatch counts every element. The workgroup keeps COPIES
// copies of its bins, invocation `i` counting in copy `i % COPIES`: neighbouring elements of an image fall in
// one bin, and the neighbouring invocations that read them would otherwise queue on one atomic.
//
// Each invocation loads four elements a stride apart before it counts any, so that four loads are in flight.
// The default dispatch is one invocation per 8 elements, at most 1024 workgroups: each workgroup zeroes its
// bins and adds them up once. On the H100, 16M elements took 50-51 us loading one element at a time and 41-42
// loading four, both at 2048 workgroups; four at 1024 workgroups 35-36 (at 512 and 768 about the same). Eight
// copies of the bins took 41 us at 1024 workgroups, sixteen (all the workgroup memory WebGPU promises) 54 at
// 2048.
const LOCAL_BINS: u32 = 256u;
const COPIES: u32 = 4u;
var<workgroup> local_bins: array<atomic<u32>, 1024>;

// Counts `v` in the workgroup's copy at `copy` (or straight into `bins` when there are too many to keep).
fn count(v: f32, bin_count: u32, copy: u32, local: bool) {
    if (v >= lo() && v < hi()) {
        let b = min(u32((v - lo()) / (hi() - lo()) * f32(bin_count)), bin_count - 1u);
        if (local) {
            atomicAdd(&local_bins[copy + b], 1u);
        } else {
            atomicAdd(&bins[b], 1u);
        }
    }
}

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let bin_count = arrayLength(&bins);
    let n = arrayLength(&input);
    let stride = groups.x * groups.y * 256u;
    let counting = bin_count > 0u && hi() > lo();
    let local = bin_count <= LOCAL_BINS;
    for (var b = lid; b < LOCAL_BINS * COPIES; b += 256u) {
        atomicStore(&local_bins[b], 0u);
    }
    let copy = (lid % COPIES) * LOCAL_BINS;
    workgroupBarrier();
    if (counting) {
        for (var i = gid.x + gid.y * groups.x * 256u; i < n; i += 4u * stride) {
            // Indices past the end read the last element again, which is then not counted: every load is
            // in range and unconditional, so all four are issued before the first count.
            let last = n - 1u;
            let v0 = input[i];
            let v1 = input[min(i + stride, last)];
            let v2 = input[min(i + 2u * stride, last)];
            let v3 = input[min(i + 3u * stride, last)];
            count(v0, bin_count, copy, local);
            if (i + stride < n) {
                count(v1, bin_count, copy, local);
            }
            if (i + 2u * stride < n) {
                count(v2, bin_count, copy, local);
            }
            if (i + 3u * stride < n) {
                count(v3, bin_count, copy, local);
            }
        }
    }
    workgroupBarrier();
    if (local) {
        for (var b = lid; b < bin_count; b += 256u) {
            var c = 0u;
            for (var k = 0u; k < COPIES; k++) {
                c += atomicLoad(&local_bins[k * LOCAL_BINS + b]);
            }
            if (c > 0u) {
                atomicAdd(&bins[b], c);
            }
        }
    }
}
