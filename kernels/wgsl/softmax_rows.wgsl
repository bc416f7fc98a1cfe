// output = softmax of each row of input (rows of cols elements, row-major), computed stably (the row's
// maximum subtracted first).
//
// Each workgroup owns one contiguous chunk of the elements (the dispatch's workgroups split them evenly; the
// default gives each invocation PER_INVOCATION of them). A row longer than SHORT_ROW is reduced by the whole
// workgroup at once, in workgroup memory: its maximum, then its sum of exponentials, each read once per
// workgroup that has some of the row, then the workgroup writes its chunk's part of the row. A short row is
// cheaper read by each invocation on its own, as it is for each of its elements.
const WORKGROUP: u32 = 256u;
const SHORT_ROW: u32 = 64u;
var<workgroup> partial: array<f32, 256>;

// The maximum (`largest`) or the sum of every invocation's `value`, the same in all of them.
fn combine(value: f32, lid: u32, largest: bool) -> f32 {
    partial[lid] = value;
    workgroupBarrier();
    for (var step = WORKGROUP / 2u; step > 0u; step = step / 2u) {
        if (lid < step) {
            let other = partial[lid + step];
            partial[lid] = select(partial[lid] + other, max(partial[lid], other), largest);
        }
        workgroupBarrier();
    }
    let result = partial[0];
    workgroupBarrier();
    return result;
}

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let n = min(arrayLength(&input), arrayLength(&output));
    let c = cols();
    let workgroups = groups.x * groups.y;
    let chunk = (n + workgroups - 1u) / workgroups;
    let start = (wid.x + wid.y * groups.x) * chunk;
    let end = min(start + chunk, n);
    if (c == 0u || start >= end) {
        return;
    }
    if (c <= SHORT_ROW) {
        for (var i = start + lid; i < end; i += WORKGROUP) {
            let row = (i / c) * c;
            let row_end = min(row + c, n);
            var top = input[row];
            for (var j = row + 1u; j < row_end; j++) {
                top = max(top, input[j]);
            }
            var total = 0.0;
            for (var j = row; j < row_end; j++) {
                total += exp(input[j] - top);
            }
            output[i] = exp(input[i] - top) / total;
        }
        return;
    }
    for (var row = (start / c) * c; row < end; row += c) {
        let row_end = min(row + c, n);
        var top = -3.40282347e38;
        for (var j = row + lid; j < row_end; j += WORKGROUP) {
            top = max(top, input[j]);
        }
        top = combine(top, lid, true);
        var total = 0.0;
        for (var j = row + lid; j < row_end; j += WORKGROUP) {
            total += exp(input[j] - top);
        }
        total = combine(total, lid, false);
        for (var j = max(row, start) + lid; j < min(row_end, end); j += WORKGROUP) {
            output[j] = exp(input[j] - top) / total;
        }
    }
}
