"""PyTorch's own kernels for the operations the kernel library shares with it, on a CUDA card: the yardstick
beside `library_speed`'s table (run both in one session on one card).

    python3 graph-runtime/benches/torch_library.py

Copy (`x.clone()`), sum, inclusive scan (`torch.cumsum`) of 16M `f32`, and the 4096^3 `f32` product with TF32
off (cuBLAS's FP32 path). CUDA events around each call, median of 50 after 50 unmeasured (30 for the
product); every result checked against a float64 computation before its time is printed.
"""
import torch


def median_us(f, runs=50, warm=50):
    for _ in range(warm):
        out = f()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        out = f()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    times.sort()
    return times[len(times) // 2], out


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}")
    n = 4096 * 4096
    x = torch.rand(n, device="cuda")

    us, y = median_us(lambda: x.clone())
    assert torch.equal(y, x)
    print(f"copy (x.clone()) 16M f32: {us:.1f} us, {2 * 4 * n / us / 1e6:.2f} TB/s")

    us, total = median_us(lambda: x.sum())
    want = x.double().sum().item()
    assert abs(total.item() - want) < 1e-4 * want, (total.item(), want)
    print(f"sum (x.sum()) 16M f32: {us:.1f} us, {4 * n / us / 1e6:.2f} TB/s read")

    us, scanned = median_us(lambda: torch.cumsum(x, 0))
    want = torch.cumsum(x.double(), 0)
    err = ((scanned.double() - want).abs() / want.abs().clamp(min=1)).max().item()
    assert err < 1e-3, err
    print(f"inclusive scan (torch.cumsum) 16M f32: {us:.1f} us (max relative error {err:.1e})")

    side = 4096
    a = torch.randn(side, side, device="cuda")
    b = torch.randn(side, side, device="cuda")
    us, c = median_us(lambda: a @ b, runs=30)
    err = (c.double() - a.double() @ b.double()).abs().max().item()
    assert err < 1e-2, err
    flops = 2 * side**3
    print(f"matmul (a @ b, TF32 off) {side}^3 f32: {us:.1f} us, {flops / us / 1e6:.1f} TFLOPS (max error {err:.1e})")


if __name__ == "__main__":
    main()
