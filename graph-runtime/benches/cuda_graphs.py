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

A second side, `inductor+cudagraph`, is the strongest anchor a PyTorch user can pick: each shape written as
ordinary PyTorch code (a Python function over tensors that runs the node list, so the chain is
`for _ in range(100): y = x + 0.999 * y`), compiled by `torch.compile` (default mode, `fullgraph=True`, no
"reduce-overhead"; Inductor's caches of compiled graphs off, so each shape is compiled in this run), called
three times on a side stream to warm up (compiling and autotuning there), then captured into a
`torch.cuda.CUDAGraph` with `with torch.cuda.graph(g): outs = compiled(*inputs)` and replayed. Inductor fuses
the pointwise nodes into one or two Triton kernels. On this side the stencil is written with shifted slices of
the input padded with zeros (`0.25 * pad(p)[:-2] + 0.5 * p + 0.25 * pad(p)[2:]`), not `conv1d`, which Inductor
leaves a library call per node: slices it fuses, within a step and across steps by recomputing neighbours. Its
inputs are static tensors that the captured graph reads: warmed up and captured over other values, then the
checked data copied in, as a CUDA Graph's user feeds it. The function takes `x` and the state buffers (the
chain's `y`, each chain's start) and returns every buffer the Rust graph binds and writes
(`replay_vs_hand_written` binds each of its buffers from outside, as `inout`: the fan's 100 outputs, the
tree's 127 nodes, both buffers of each stencil chain, each state's new value); the tree is also run returning
its root alone (`inductor+cudagraph (root)`), as if its inner nodes were the graph's own. Every returned
tensor is poisoned with NaN, the graph replayed once, and each compared with the same float64 reference and
tolerance as the other side, before and after the timing; returned tensors that share memory (with each other
or the inputs) fail the check. Its rows follow each shape's CUDA Graph row, in the same format; after the
table, the Triton kernels Inductor generated for each shape and each side's wall time against the CUDA
Graph's. A shape whose compilation, capture or check fails on this side gets a line saying so, and the run
goes on.

Run: `python3 graph-runtime/benches/cuda_graphs.py [--runs N]` (default 100).
"""

import argparse
import importlib
import statistics
import time

import torch

N = 64 * 1024
STREAMS = 16
# The label of the torch.compile + CUDA Graph side's rows.
INDUCTOR = "inductor+cudagraph"


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


def shifted_stencil(p):
    """The stencil as ordinary tensor code, which Inductor can fuse (and fuse across steps by recomputing
    neighbours): the neighbours are slices of `p` padded with a zero at each end."""
    padded = torch.nn.functional.pad(p, (1, 1))
    return 0.25 * padded[:-2] + 0.5 * p + 0.25 * padded[2:]


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


def data():
    """The input `x` and the state buffers' starting values, as in the Rust benchmark."""
    x = (torch.arange(N, device="cuda") % 97).float() * 0.01
    state = (torch.arange(N, device="cuda") % 13).float() * 0.1
    return x, state


def off_by(got, exact):
    """`None` when `got` is within a relative 1e-5 of the float64 reference, else what is wrong."""
    if got.shape != exact.shape or got.dtype != torch.float32:
        return f"is {tuple(got.shape)} {got.dtype}, not {tuple(exact.shape)} float32"
    error = (got.double() - exact).abs().max().item()
    scale = exact.abs().max().item()
    if not error <= 1e-5 * max(scale, 1.0):
        return f"is off by {error} (scale {scale})"
    return None


def timed(graph, runs):
    """Median wall time of one replay (replay to synchronize) and median CPU time of `replay()`, in us,
    over `runs` replays after 3 warm-up ones."""
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
    return statistics.median(walls) * 1e6, statistics.median(cpus) * 1e6


def row(name, n, levels, side, wall, cpu):
    print(
        f"| {name:<14} | {n:>5} | {levels:>6} | {side:<14} | {wall:>9.1f} | {wall / n:>7.2f} "
        f"| {cpu:>9.1f} | {cpu / n:>7.2f} |"
    )


def shape(runs, name, count, state_ids, checked, nodes, levels):
    """The CUDA Graph of separate kernels: checks it, prints its row, returns its median wall time."""
    x, state = data()
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
        wrong = off_by(buffers[b], expected[b])
        if wrong:
            raise SystemExit(f"{name}: buffer {b} {wrong}")

    wall, cpu = timed(graph, runs)
    row(name, len(nodes), levels, "CUDA Graph", wall, cpu)
    return wall


def written(nodes):
    """The buffers the nodes write: each one the Rust graph binds from outside (`inout`) and writes."""
    return sorted({output for _, _, output in nodes})


def program(count, state_ids, nodes, returned):
    """The shape as ordinary PyTorch code: a fresh function over tensors that runs the node list (Dynamo
    unrolls the loop into the same operations a hand-written function has) and returns the buffers
    `returned`. `x` and `weight` come first, then one tensor per state buffer."""

    def shape_program(x, weight, *states):
        values = [x] + [None] * (count - 1)
        for b, start in zip(state_ids, states):
            values[b] = start
        for op, inputs, output in nodes:
            if op == "step":
                values[output] = values[inputs[0]] + 0.999 * values[output]
            elif op == "scale":
                values[output] = 1.0 + 0.999 * values[inputs[0]]
            elif op == "stencil":
                values[output] = shifted_stencil(values[inputs[0]])
            else:
                values[output] = values[inputs[0]] + values[inputs[1]]
        return [values[b] for b in returned]

    return shape_program


def first_line(error):
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:300]


def overlapping(tensors):
    """Whether any two of `tensors` share memory (each a whole buffer, compared by address range)."""
    spans = sorted((t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in tensors)
    return any(start < end for (_, end), (start, _) in zip(spans, spans[1:]))


def triton_kernels_generated():
    """The Triton kernels Inductor generated since its metrics were reset (each launched once per call)."""
    try:
        from torch._inductor import metrics

        return metrics.generated_kernel_count
    except Exception:
        return None


def compile_every_time():
    """Turns off Inductor's and AOTAutograd's caches of compiled graphs in this process, so that every shape is
    compiled here (and its generated kernels counted) even where an earlier run left a cache behind."""
    for module, flag in (("torch._inductor.config", "fx_graph_cache"),
                         ("torch._functorch.config", "enable_autograd_cache")):
        try:
            config = importlib.import_module(module)
            if hasattr(config, flag):
                setattr(config, flag, False)
        except Exception:
            pass


def inductor_side(runs, name, count, state_ids, nodes, levels, returned, side, notes):
    """The shape compiled by `torch.compile` (default mode) and captured into a CUDA Graph: checks it against
    the float64 reference, prints its row (or a line saying why not) and returns its median wall time."""
    x, state = data()
    # A fresh start per shape: Dynamo's caches (every shape's function shares one code object) hold nothing
    # of the shapes before, so no recompilation limit is reached. The graphs captured before are not
    # replayed again.
    torch._dynamo.reset()
    try:
        from torch._inductor import metrics

        metrics.reset()
    except Exception:
        pass
    # The static tensors the captured graph reads: warmed up and captured over other values, then the
    # checked data copied in before the replay, as a CUDA Graph's user feeds it.
    static_x = torch.rand(N, device="cuda")
    static_states = [torch.rand(N, device="cuda") for _ in state_ids]
    weight = stencil_weight(static_x)
    inputs = (static_x, weight, *static_states)
    stage = "compilation"
    try:
        compiled = torch.compile(program(count, state_ids, nodes, returned), fullgraph=True)
        # Warm-up on a side stream, as PyTorch asks before a capture: the first call compiles, the first
        # calls autotune, none of which may happen inside a capture.
        warm = torch.cuda.Stream()
        warm.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(warm):
            for _ in range(3):
                compiled(*inputs)
        torch.cuda.current_stream().wait_stream(warm)
        torch.cuda.synchronize()
        generated = triton_kernels_generated()
        stage = "capture"
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = compiled(*inputs)
        torch.cuda.synchronize()
    except Exception as error:
        line = f"{side} failed for {name} ({stage}): {first_line(error)}"
        print(line, flush=True)
        notes.append(f"  {name:<14} {side}: failed ({stage}): {first_line(error)}")
        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        return None

    def fail(why):
        print(f"{side} failed for {name}: {why}", flush=True)
        notes.append(f"  {name:<14} {side}: failed: {why}")

    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    if len(outs) != len(returned):
        fail(f"{len(outs)} outputs returned, not {len(returned)}")
        return None
    if overlapping(outs + list(inputs)):
        fail("returned tensors share memory (with each other or the inputs)")
        return None

    # Check: fresh data into the static inputs, outputs poisoned, one replay, each returned buffer compared
    # with float64 within a relative 1e-5 (as the other side).
    expected = reference(count, state_ids, nodes, x, state)

    def check(when):
        static_x.copy_(x)
        for start in static_states:
            start.copy_(state)
        for out in outs:
            out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        for b, out in zip(returned, outs):
            wrong = off_by(out, expected[b])
            if wrong:
                fail(f"buffer {b} {wrong} ({when})")
                return False
        return True

    if not check("first replay"):
        return None
    wall, cpu = timed(graph, runs)
    if not check("after the timed replays"):
        return None
    row(name, len(nodes), levels, side, wall, cpu)
    stencil_nodes = sum(op == "stencil" for op, _, _ in nodes)
    notes.append(
        f"  {name:<14} {side}: {len(returned)} output(s), "
        f"{'?' if generated is None else generated} Triton kernel(s) generated"
        + (f" for {stencil_nodes} stencil steps written with shifted slices" if stencil_nodes else "")
    )
    return wall


def triton_version():
    try:
        import triton

        return triton.__version__
    except Exception as error:
        return f"not importable ({first_line(error)})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    runs = parser.parse_args().runs
    print(f"device: {torch.cuda.get_device_name()} (PyTorch {torch.__version__})")
    print(f"{N}-element float32 tensors; medians of {runs} replays after 3 warm-up ones; outputs checked first")
    print(
        f"{INDUCTOR}: torch {torch.__version__}, Triton {triton_version()}, GPU {torch.cuda.get_device_name()}; "
        "torch.compile (default mode, fullgraph) of the shape as PyTorch code, captured in a CUDA Graph"
    )
    print()
    print("| shape          | nodes | levels | side           |   wall us | us/node |    CPU us | us/node |")
    print("|----------------|------:|-------:|----------------|----------:|--------:|----------:|--------:|")
    compile_every_time()
    notes, ratios = [], []
    for made in (chain(), fan(), chains(10, 10), chains(20, 20), tree(), stencils("stencil chain", 1, 100),
                 stencils("stencil 10x10", 10, 10)):
        name, count, state_ids, checked, nodes, levels = made
        wall = shape(runs, *made)
        sides = [(written(nodes), INDUCTOR)]
        if name == "tree":
            # Also with the root alone returned, as if the inner nodes were the graph's own.
            sides.append((checked, f"{INDUCTOR} (root)"))
        for returned, side in sides:
            compiled_wall = inductor_side(runs, name, count, state_ids, nodes, levels, returned, side, notes)
            if compiled_wall is not None:
                ratios.append(f"  {name:<14} {side}: wall {compiled_wall / wall:.2f}x the CUDA Graph's")

    print()
    print(f"{INDUCTOR} (torch.compile, default mode, then captured in a CUDA Graph):")
    for line in notes:
        print(line)
    print()
    print(f"{INDUCTOR} against the CUDA Graph of separate kernels (below 1: faster):")
    for line in ratios:
        print(line)


if __name__ == "__main__":
    main()
