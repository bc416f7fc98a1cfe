"""The yardstick for `replay_vs_hand_written`: the same four DAG shapes as CUDA Graphs, through PyTorch.

Each node is one CUDA kernel over 64K-element float32 tensors, as in the Rust benchmark:

- chain: 100 x `y = x + 0.999 * y` (`torch.add(x, y, alpha=0.999, out=y)`);
- fan: 100 x `o_i = 1 + 0.999 * x` (`torch.add(ones, x, alpha=0.999, out=o_i)`);
- chains 10x10: ten independent chains of ten chain steps;
- tree: 64 leaves `1 + 0.999 * x`, then pairwise sums down to one root (127 nodes).

The graph is captured from several streams, one node per stream in turn, each node waiting on the events of
the nodes that wrote what it reads (and of the last writer of what it overwrites): the captured graph has the
DAG's edges and nothing more, so independent branches may run concurrently. Printed like the Rust benchmark:
median wall time of one replay (replay to synchronize) and median CPU time of `replay()`, whole and per node,
after each graph's output was checked against a float64 reference.

Run: `python3 graph-runtime/benches/cuda_graphs.py [--runs N]` (default 100).
"""

import argparse
import statistics
import time

import torch

N = 64 * 1024
STREAMS = 16


def chain():
    return "chain", 2, [1], [1], [("step", [0], 1)] * 100, 100


def fan():
    return "fan", 101, [], list(range(1, 101)), [("scale", [0], o) for o in range(1, 101)], 1


def chains():
    nodes = [("step", [0], c) for c in range(1, 11) for _ in range(10)]
    return "chains 10x10", 11, list(range(1, 11)), list(range(1, 11)), nodes, 10


def tree():
    nodes = [("scale", [0], o) for o in range(1, 65)]
    start, width, nxt = 1, 64, 65
    while width > 1:
        for j in range(width // 2):
            nodes.append(("add", [start + 2 * j, start + 2 * j + 1], nxt + j))
        start, nxt, width = nxt, nxt + width // 2, width // 2
    return "tree", nxt, [], [nxt - 1], nodes, 7


def run(op, inputs, output, buffers, ones):
    if op == "step":
        torch.add(buffers[inputs[0]], buffers[output], alpha=0.999, out=buffers[output])
    elif op == "scale":
        torch.add(ones, buffers[inputs[0]], alpha=0.999, out=buffers[output])
    else:
        torch.add(buffers[inputs[0]], buffers[inputs[1]], out=buffers[output])


def reference(count, state_ids, nodes, x, state):
    values = [None] * count
    values[0] = x.double()
    for s in state_ids:
        values[s] = state.double()
    c = float(torch.tensor(0.999, dtype=torch.float32))
    for op, inputs, output in nodes:
        if op == "step":
            values[output] = values[inputs[0]] + c * values[output]
        elif op == "scale":
            values[output] = 1.0 + c * values[inputs[0]]
        else:
            values[output] = values[inputs[0]] + values[inputs[1]]
    return values


def shape(runs, name, count, state_ids, checked, nodes, levels):
    x = (torch.arange(N, device="cuda") % 97).float() * 0.01
    state = (torch.arange(N, device="cuda") % 13).float() * 0.1
    ones = torch.ones(N, device="cuda")
    buffers = [x] + [torch.zeros(N, device="cuda") for _ in range(count - 1)]
    streams = [torch.cuda.Stream() for _ in range(STREAMS)]

    def reset():
        for b in range(1, count):
            if b in state_ids:
                buffers[b].copy_(state)
            else:
                buffers[b].fill_(float("nan"))

    # Warm the kernels up outside the capture, as PyTorch asks.
    reset()
    for op, inputs, output in nodes:
        run(op, inputs, output, buffers, ones)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        # The stream PyTorch captures on: the other streams fork from it and join it again.
        capture = torch.cuda.current_stream()
        start = torch.cuda.Event()
        start.record()
        writer = {}
        readers = {}
        for i, (op, inputs, output) in enumerate(nodes):
            stream = streams[i % STREAMS]
            # Wait for what this node reads, and for whoever touched what it overwrites.
            waits = [writer[b] for b in inputs if b in writer]
            waits += [writer[output]] if output in writer else []
            waits += readers.get(output, [])
            stream.wait_event(start)
            for event in waits:
                stream.wait_event(event)
            with torch.cuda.stream(stream):
                run(op, inputs, output, buffers, ones)
                done = torch.cuda.Event()
                done.record()
            for b in inputs:
                readers.setdefault(b, []).append(done)
            writer[output] = done
            readers[output] = []
        for stream in streams:
            capture.wait_stream(stream)

    # Check: state back, outputs poisoned, one replay, compared with float64 within a relative 1e-5.
    reset()
    graph.replay()
    torch.cuda.synchronize()
    expected = reference(count, state_ids, nodes, x, state)
    for b in checked:
        error = (buffers[b].double() - expected[b]).abs().max().item()
        scale = expected[b].abs().max().item()
        if not error <= 1e-5 * max(scale, 1.0):
            raise SystemExit(f"{name}: buffer {b} is off by {error} (scale {scale})")

    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    walls, cpus = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        graph.replay()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        cpus.append(t1 - t0)
        walls.append(t2 - t0)
    wall, cpu = statistics.median(walls) * 1e6, statistics.median(cpus) * 1e6
    n = len(nodes)
    print(
        f"| {name:<12} | {n:>5} | {levels:>6} | {'CUDA Graph':<12} | {wall:>9.1f} | {wall / n:>7.2f} "
        f"| {cpu:>9.1f} | {cpu / n:>7.2f} |"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    runs = parser.parse_args().runs
    print(f"device: {torch.cuda.get_device_name()} (PyTorch {torch.__version__})")
    print(f"{N}-element float32 tensors; medians of {runs} replays after 3 warm-up ones; outputs checked first")
    print()
    print("| shape        | nodes | levels | side         |   wall us | us/node |    CPU us | us/node |")
    print("|--------------|------:|-------:|--------------|----------:|--------:|----------:|--------:|")
    for make in (chain, fan, chains, tree):
        shape(runs, *make())


if __name__ == "__main__":
    main()
