// bins[b] += how many elements of input fall in bin b, the bins splitting [lo, hi) evenly; elements outside
// [lo, hi) are not counted. The bins are atomics, so invocations add concurrently; zero them first (a fill).
//
// With at most LOCAL_BINS bins, each workgroup counts its share in workgroup memory first and then adds each
// of its nonzero counts to `bins` once: one atomic on memory per bin per workgroup, not one per element
// (the elements of an image crowd into few bins, and their atomics on memory queued behind each other).
// Each invocation strides over input, so any dispatch counts every element. The workgroup keeps COPIES
// copies of its bins, invocation `i` counting in copy `i % COPIES`: neighbouring elements of an image fall in
// one bin, and the neighbouring invocations that read them would otherwise queue on one atomic. The default
// dispatch is one invocation per 8 elements, at most 2048 workgroups: on the H100, 16M elements at 8 took
// 87 us (8192 workgroups, each zeroing and adding up its bins), at 16 57 and capped 50, and the flagship's
// 262,144 pixels 5.7 us at 8 but 7.8 at 16 (too few workgroups for them).
const LOCAL_BINS: u32 = 256u;
const COPIES: u32 = 4u;
var<workgroup> local_bins: array<atomic<u32>, 1024>;

@compute @workgroup_size(256)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let count = arrayLength(&bins);
    let n = arrayLength(&input);
    let stride = groups.x * groups.y * 256u;
    let counting = count > 0u && hi() > lo();
    let local = count <= LOCAL_BINS;
    for (var b = lid; b < LOCAL_BINS * COPIES; b += 256u) {
        atomicStore(&local_bins[b], 0u);
    }
    let copy = (lid % COPIES) * LOCAL_BINS;
    workgroupBarrier();
    if (counting) {
        for (var i = gid.x + gid.y * groups.x * 256u; i < n; i += stride) {
            let v = input[i];
            if (v >= lo() && v < hi()) {
                let b = min(u32((v - lo()) / (hi() - lo()) * f32(count)), count - 1u);
                if (local) {
                    atomicAdd(&local_bins[copy + b], 1u);
                } else {
                    atomicAdd(&bins[b], 1u);
                }
            }
        }
    }
    workgroupBarrier();
    if (local) {
        for (var b = lid; b < count; b += 256u) {
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
