"""The yardstick for `replay_vs_hand_written`: the same DAG shapes as CUDA Graphs, through PyTorch.

Each node is one CUDA kernel over 64K-element float32 tensors, as in the Rust benchmark:

- chain: 100 x `y = x + 0.999 * y` (`torch.add(x, y, alpha=0.999, out=y)`);
- fan: 100 x `o_i = 1 + 0.999 * x` (`torch.add(ones, x, alpha=0.999, out=o_i)`);
- chains 10x10, chains 20x20: independent chains of chain steps side by side;
- tree: 64 leaves `1 + 0.999 * x`, then pairwise sums down to one root (127 nodes);
- stencil chain, stencil 10x10: `q = conv1d(p, [0.25, 0.5, 0.25], padding=1)` (each element from its
  neighbours, zero past the ends) between two buffers per chain. `conv1d` has no `out=`: each node's result is
  a tensor of the graph's own memory, which the next node reads (one kernel per node, no copy).

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


def chains(count, length):
    nodes = [("step", [0], c) for c in range(1, count + 1) for _ in range(length)]
    ids = list(range(1, count + 1))
    return f"chains {count}x{length}", count + 1, ids, ids, nodes, length


def stencils(name, count, length):
    nodes = []
    for c in range(count):
        a, b = 1 + 2 * c, 2 + 2 * c
        nodes += [("stencil", [a], b) if k % 2 == 0 else ("stencil", [b], a) for k in range(length)]
    starts = [1 + 2 * c for c in range(count)]
    return name, 2 * count + 1, starts, starts, nodes, length


def tree():
    nodes = [("scale", [0], o) for o in range(1, 65)]
    start, width, nxt = 1, 64, 65
    while width > 1:
        for j in range(width // 2):
            nodes.append(("add", [start + 2 * j, start + 2 * j + 1], nxt + j))
        start, nxt, width = nxt, nxt + width // 2, width // 2
    return "tree", nxt, [], [nxt - 1], nodes, 7


def stencil_weight(like):
    """The stencil's weights, made before capture (a capture may not copy from the host)."""
    return torch.tensor([[[0.25, 0.5, 0.25]]], dtype=like.dtype, device=like.device)


def stencil(p, weight):
    return torch.nn.functional.conv1d(p.view(1, 1, N), weight, padding=1).view(N)


def run(op, inputs, output, buffers, ones, weight, keep):
    if op == "stencil":
        buffers[output] = stencil(buffers[inputs[0]], weight)
        # Kept alive through the capture: a tensor freed while another stream may still read it would be
        # handed out again by the caching allocator.
        keep.append(buffers[output])
    elif op == "step":
        torch.add(buffers[inputs[0]], buffers[output], alpha=0.999, out=buffers[output])
    elif op == "scale":
        torch.add(ones, buffers[inputs[0]], alpha=0.999, out=buffers[output])
    else:
        torch.add(buffers[inputs[0]], buffers[inputs[1]], out=buffers[output])


def reference(count, state_ids, nodes, x, state):
    values = [None] * count
    values[0] = x.double()
    weight = stencil_weight(values[0])
    for s in state_ids:
        values[s] = state.double()
    c = float(torch.tensor(0.999, dtype=torch.float32))
    for op, inputs, output in nodes:
        if op == "step":
            values[output] = values[inputs[0]] + c * values[output]
        elif op == "scale":
            values[output] = 1.0 + c * values[inputs[0]]
        elif op == "stencil":
            values[output] = stencil(values[inputs[0]], weight)
        else:
            values[output] = values[inputs[0]] + values[inputs[1]]
    return values


def shape(runs, name, count, state_ids, checked, nodes, levels):
    x = (torch.arange(N, device="cuda") % 97).float() * 0.01
    state = (torch.arange(N, device="cuda") % 13).float() * 0.1
    ones = torch.ones(N, device="cuda")
    weight = stencil_weight(ones)
    keep = []
    # The tensors the graph starts from; a stencil node puts a new tensor in its output's place.
    originals = [x] + [torch.zeros(N, device="cuda") for _ in range(count - 1)]
    buffers = list(originals)
    streams = [torch.cuda.Stream() for _ in range(STREAMS)]

    def reset():
        for b in range(1, count):
            if b in state_ids:
                originals[b].copy_(state)
            else:
                originals[b].fill_(float("nan"))

    # Warm the kernels up outside the capture, as PyTorch asks.
    reset()
    for op, inputs, output in nodes:
        run(op, inputs, output, buffers, ones, weight, keep)
    torch.cuda.synchronize()
    buffers[:] = originals

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
                run(op, inputs, output, buffers, ones, weight, keep)
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
        f"| {name:<14} | {n:>5} | {levels:>6} | {'CUDA Graph':<14} | {wall:>9.1f} | {wall / n:>7.2f} "
        f"| {cpu:>9.1f} | {cpu / n:>7.2f} |"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    runs = parser.parse_args().runs
    print(f"device: {torch.cuda.get_device_name()} (PyTorch {torch.__version__})")
    print(f"{N}-element float32 tensors; medians of {runs} replays after 3 warm-up ones; outputs checked first")
    print()
    print("| shape          | nodes | levels | side           |   wall us | us/node |    CPU us | us/node |")
    print("|----------------|------:|-------:|----------------|----------:|--------:|----------:|--------:|")
    for made in (chain(), fan(), chains(10, 10), chains(20, 20), tree(), stencils("stencil chain", 1, 100),
                 stencils("stencil 10x10", 10, 10)):
        shape(runs, *made)


if __name__ == "__main__":
    main()
