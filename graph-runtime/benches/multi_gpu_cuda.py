"""The yardstick for `multi_gpu`: the same work on one GPU and on two through PyTorch, and moving a buffer
between the GPUs as CUDA moves it.

- chains 20x20: 20 independent chains of 20 steps `y = x + 0.999 * y` over 64K-element float32 tensors,
  written as ordinary PyTorch, compiled by `torch.compile` (Inductor fuses each chain into one kernel) and
  captured into a CUDA Graph per GPU (`inductor+cudagraph`). One GPU runs the 20 chains; two GPUs run 10 each,
  each with its own copy of `x` made beforehand (the Rust side moves `x`, 256 KiB, in each replay). A replay
  of two GPUs launches both graphs, then synchronizes both. Each side's output is poisoned with NaN and checked
  against a float64 reference before the timing.
- chains 20x20, own inputs, 2M (GPU-bound): 20 chains of 20 steps over 2M-element tensors, each step one
  kernel (`torch.add(x, y, alpha=0.999, out=y)`, unfused as on the Rust side), each chain with its own `x`,
  captured into a CUDA Graph per GPU: one GPU runs the 20 chains, two GPUs 10 each with their tensors there.
- transfer: a tensor of 64K to 16M float32 from GPU 0 to GPU 1, by `copy_` between the devices (peer to peer
  where the GPUs allow it: NVLink or PCIe), and through pinned host memory (device to host, then host to
  device: the path the Rust side takes, which wgpu allows), each checked, timed from the copy's start to
  both devices synchronized.

Printed: the median wall time of `--runs` runs after 3 warm-up ones.

Run: `python3 graph-runtime/benches/multi_gpu_cuda.py [--runs N]` (default 100).
"""

import argparse
import statistics
import time

import torch

N = 64 * 1024


def chains_fn(x, *ys):
    out = []
    for y in ys:
        for _ in range(20):
            y = x + 0.999 * y
        out.append(y)
    return out


def reference(x, ys):
    x = x.double()
    out = []
    for y in ys:
        y = y.double()
        for _ in range(20):
            y = x + 0.999 * y
        out.append(y)
    return out


def captured(device, chains):
    """A CUDA Graph of `chains` chains on `device`, with its static inputs and outputs."""
    x = torch.arange(N, device=device, dtype=torch.float32).remainder(97) * 0.01
    ys = [torch.arange(N, device=device, dtype=torch.float32).remainder(13) * 0.1 for _ in range(chains)]
    # Each side compiled afresh, its shapes static, so nothing compiles again while the graph is captured.
    torch._dynamo.reset()
    compiled = torch.compile(chains_fn, fullgraph=True, dynamic=False)
    stream = torch.cuda.Stream(device)
    with torch.cuda.device(device), torch.cuda.stream(stream):
        for _ in range(3):
            compiled(x, *ys)
    torch.cuda.synchronize(device)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.device(device), torch.cuda.graph(graph, stream=stream, capture_error_mode="thread_local"):
        outs = compiled(x, *ys)
    return graph, x, ys, outs


LONG = 2 * 1024 * 1024


def unfused(devices):
    """20 chains of 20 one-kernel steps, chain `c` on `devices[c]`, captured into a CUDA Graph per device, and
    checked: a function that replays every device's graph."""
    chains = []
    for device in devices:
        x = torch.arange(LONG, device=device, dtype=torch.float32).remainder(97) * 0.01
        y = torch.arange(LONG, device=device, dtype=torch.float32).remainder(13) * 0.1
        chains.append((x, y, y.clone()))
    graphs = {}
    for device in sorted(set(devices)):
        mine = [c for c, d in zip(chains, devices) if d == device]
        stream = torch.cuda.Stream(device)
        with torch.cuda.device(device), torch.cuda.stream(stream):
            for x, y, _ in mine:
                torch.add(x, y, alpha=0.999, out=y)
        torch.cuda.synchronize(device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.device(device), torch.cuda.graph(graph, stream=stream):
            for x, y, _ in mine:
                for _ in range(20):
                    torch.add(x, y, alpha=0.999, out=y)
        graphs[device] = graph
    for x, y, start in chains:
        y.copy_(start)
    for graph in graphs.values():
        graph.replay()
    for x, y, start in chains:
        want = start.double()
        for _ in range(20):
            want = x.double() + 0.999 * want
        error = ((y.double() - want).abs() / want.abs().clamp(min=1.0)).max().item()
        if not error <= 1e-5:
            raise SystemExit(f"unfused chains: off by {error} relative")

    def replay():
        for graph in graphs.values():
            graph.replay()

    return replay, chains


def check(side, graph, x, ys, outs):
    for o in outs:
        o.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize(x.device)
    for got, want in zip(outs, reference(x, ys)):
        error = (got.double() - want).abs().max().item()
        if not error <= 1e-4:
            raise SystemExit(f"{side}: off by {error}")


def median_us(runs, step, sync):
    for _ in range(3):
        step()
        sync()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    runs = parser.parse_args().runs
    count = torch.cuda.device_count()
    print(f"torch {torch.__version__}, {count} GPUs: {[torch.cuda.get_device_name(i) for i in range(count)]}")
    if count < 2:
        raise SystemExit("two GPUs are needed")
    print(f"peer access 0 -> 1: {torch.cuda.can_device_access_peer(0, 1)}")

    one = captured(torch.device("cuda:0"), 20)
    check("one GPU", *one)
    t_one = median_us(runs, one[0].replay, lambda: torch.cuda.synchronize(0))
    print(f"chains 20x20   one GPU, inductor+cudagraph            {t_one:10.1f}us")
    halves = [captured(torch.device(f"cuda:{d}"), 10) for d in (0, 1)]
    for d, half in enumerate(halves):
        check(f"GPU {d} of two", *half)

    def both():
        halves[0][0].replay()
        halves[1][0].replay()

    def sync_both():
        torch.cuda.synchronize(0)
        torch.cuda.synchronize(1)

    t_two = median_us(runs, both, sync_both)
    print(f"chains 20x20   two GPUs, inductor+cudagraph           {t_two:10.1f}us  speed-up {t_one / t_two:.2f}x")

    long_one = unfused(["cuda:0"] * 20)
    t_long_one = median_us(runs, long_one[0], lambda: torch.cuda.synchronize(0))
    long_two = unfused([f"cuda:{c % 2}" for c in range(20)])
    t_long_two = median_us(runs, long_two[0], sync_both)
    print(f"chains 20x20, own inputs, 2M, one GPU, cudagraph       {t_long_one:10.1f}us")
    print(
        f"chains 20x20, own inputs, 2M, two GPUs, cudagraph      {t_long_two:10.1f}us  "
        f"speed-up {t_long_one / t_long_two:.2f}x"
    )

    print(f"\n{'transfer':<16} {'peer copy_':>12} {'GB/s':>8} {'via pinned host':>16} {'GB/s':>8}")
    for elements in (64 * 1024, 1024 * 1024, 4 * 1024 * 1024, 16 * 1024 * 1024):
        src = torch.arange(elements, device="cuda:0", dtype=torch.float32)
        dst = torch.full((elements,), float("nan"), device="cuda:1")
        host = torch.empty(elements, dtype=torch.float32, pin_memory=True)
        dst.copy_(src)
        sync_both()
        if not torch.equal(dst.cpu(), src.cpu()):
            raise SystemExit("peer copy differs")
        t_peer = median_us(runs, lambda: dst.copy_(src), sync_both)
        dst.fill_(float("nan"))

        def staged():
            host.copy_(src)
            dst.copy_(host)

        staged()
        sync_both()
        if not torch.equal(dst.cpu(), src.cpu()):
            raise SystemExit("staged copy differs")
        t_staged = median_us(runs, staged, sync_both)
        size = elements * 4
        print(
            f"{size // 1024:>8} KiB     {t_peer:10.1f}us {size / t_peer / 1e3:8.2f} {t_staged:14.1f}us "
            f"{size / t_staged / 1e3:8.2f}"
        )


if __name__ == "__main__":
    main()
