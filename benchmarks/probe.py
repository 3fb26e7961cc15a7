"""Measurements inside one generated package, run in a subprocess with its src/ on PYTHONPATH:

    python benchmarks/probe.py dispatch --package my_research_project [--jax] [--calls N] [--rounds R]
    python benchmarks/probe.py compile --package my_research_project [--jax] [--calls N]

Each prints one JSON object. `dispatch` isolates the cost of a public function's dispatch: it
replaces the private implementation by a stub that returns its first operand, wherever the public
function looks it up, then times `public(x)` against `stub(x, -1)` called directly, in alternating
rounds of many calls; the dispatch cost is the median over rounds of the difference. The stub
takes ~30 ns, so both totals are small and steady, unlike a real tensor operation whose own
run-to-run noise (hundreds of ns) would swamp the dispatch. Rounds are short (a fraction of a
millisecond) and many, so that the rounds in which the process was preempted by other work on
the machine are outliers the median ignores.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

# Public function -> how many array operands it takes.
FUNCTIONS = {"softmax": 1, "cross_entropy": 2, "log_softmax": 1}
# Backend -> the suffix of its private implementation's name (`_softmax_pytorch`); an Array API
# function (log_softmax) sends every array but NumPy's to `_<name>_array_api`.
SUFFIXES = {"numpy": "numpy", "torch": "pytorch", "jax": "jax"}
SHARED = frozenset({"log_softmax"})
SHAPE = (8, 10)  # a small batch: 8 rows of 10 classes

AnyFunction = Callable[..., Any]


def operands(backend: str, count: int, seed: int = 0) -> tuple[Any, ...]:
    """`count` small operands on `backend`: float32 logits of shape SHAPE, then integer labels."""
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal(SHAPE).astype(np.float32)
    labels = rng.integers(0, SHAPE[-1], size=SHAPE[:-1]).astype(np.int32 if backend == "jax" else np.int64)
    arrays = (logits, labels)[:count]
    if backend == "torch":
        import torch

        return tuple(torch.from_numpy(array) for array in arrays)
    if backend == "jax":
        import jax.numpy as jnp

        return tuple(jnp.asarray(array) for array in arrays)
    return arrays


def package_modules(package: str) -> list[ModuleType]:
    """The package and every submodule of it that has been imported."""
    return [module for name, module in list(sys.modules.items()) if name == package or name.startswith(package + ".")]


@contextmanager
def replaced(package: str, name: str, replacement: AnyFunction) -> Iterator[AnyFunction]:
    """Replace `name` by `replacement` in every imported module of `package` that holds it (where
    the public function looks it up, in either layout); yield the original."""
    holders = [module for module in package_modules(package) if hasattr(module, name)]
    if not holders:
        raise LookupError(f"no module of {package} holds {name}")
    original: AnyFunction = getattr(holders[0], name)
    for module in holders:
        setattr(module, name, replacement)
    try:
        yield original
    finally:
        for module in holders:
            setattr(module, name, original)


def stub(first: object, second: object) -> object:
    """Stands in for a private implementation: returns its first operand, does nothing else."""
    return first


def per_call_ns(timer: timeit.Timer, number: int) -> float:
    return timer.timeit(number) / number * 1e9


def paired(public: timeit.Timer, direct: timeit.Timer, number: int, rounds: int) -> dict[str, float]:
    """Median ns per call of `public`, of `direct`, and of their difference in the same round;
    rounds alternate which of the two runs first."""
    per_call_ns(public, number)  # warm-up
    per_call_ns(direct, number)
    publics, directs, differences = [], [], []
    for round_ in range(rounds):
        if round_ % 2:
            public_ns, direct_ns = per_call_ns(public, number), per_call_ns(direct, number)
        else:
            direct_ns, public_ns = per_call_ns(direct, number), per_call_ns(public, number)
        publics.append(public_ns)
        directs.append(direct_ns)
        differences.append(public_ns - direct_ns)
    return {
        "public_ns": statistics.median(publics),
        "direct_ns": statistics.median(directs),
        "difference_ns": statistics.median(differences),
        "difference_min_ns": min(differences),
        "difference_max_ns": max(differences),
        "calls_per_round": number,
        "rounds": rounds,
    }


def timers(public: AnyFunction, private: AnyFunction, arguments: tuple[Any, ...]) -> tuple[timeit.Timer, timeit.Timer]:
    """Timers of `public(*arguments)` and of the private call it makes, `private(x, -1)` (the
    default axis) for one operand or `private(a, b)` for two."""
    direct_call = "private(a, -1)" if len(arguments) == 1 else "private(a, b)"
    public_call = "public(a)" if len(arguments) == 1 else "public(a, b)"
    names = {"public": public, "private": private, "a": arguments[0], "b": arguments[-1]}
    return timeit.Timer(public_call, globals=names), timeit.Timer(direct_call, globals=names)


def calls_for(function: AnyFunction, arguments: tuple[Any, ...], budget_ns: float) -> int:
    """How many calls of `function` fit in `budget_ns` (at least one)."""
    one_ns = min(timeit.repeat(lambda: function(*arguments), number=1, repeat=5)) * 1e9
    return max(1, round(budget_ns / one_ns))


def measure_dispatch(package: str, function: str, backend: str, calls: int, rounds: int) -> dict[str, Any]:
    """Dispatch cost of `function` on `backend` (stubbed implementation), and for context the
    real public function against its private implementation."""
    public: AnyFunction = getattr(importlib.import_module(package), function)
    arguments = operands(backend, FUNCTIONS[function])
    public(*arguments)  # imports what the backend's first call imports (JAX's implementation)
    suffix = "array_api" if function in SHARED and backend != "numpy" else SUFFIXES[backend]
    with replaced(package, f"_{function}_{suffix}", stub) as private:
        if public(*arguments) is not arguments[0]:
            raise AssertionError(f"{function} did not call the stub: the measurement would be wrong")
        dispatch = paired(*timers(public, stub, arguments), number=calls, rounds=rounds)
    real_calls = calls_for(public, arguments, budget_ns=calls * 100.0)
    real = paired(*timers(public, private, arguments), number=real_calls, rounds=rounds)
    return {"dispatch": dispatch, "real": real}


def dispatch_report(package: str, jax: bool, calls: int, rounds: int) -> dict[str, Any]:
    """Dispatch costs of every public function on every backend the package supports."""
    backends = ["numpy", "torch", "jax"] if jax else ["numpy", "torch"]
    return {
        function: {backend: measure_dispatch(package, function, backend, calls, rounds) for backend in backends}
        for function in FUNCTIONS
    }


def torch_compile_report(public: AnyFunction, count: int, calls: int) -> dict[str, Any]:
    """Graph breaks (`torch._dynamo.explain`) of `public` on small tensors, and recompilations in
    `calls` calls of `torch.compile(public)` with new tensors of the same shape and dtype."""
    import torch
    import torch._dynamo

    torch._dynamo.reset()
    explanation = torch._dynamo.explain(public)(*operands("torch", count))
    torch._dynamo.reset()
    graphs = 0

    def counting_backend(graph: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> AnyFunction:
        nonlocal graphs
        graphs += 1
        return graph.forward  # run the captured graph as it is: no code generation

    compiled = torch.compile(public, backend=counting_backend)
    graphs_per_call = []
    for seed in range(calls):
        arguments = operands("torch", count, seed=seed)
        torch.testing.assert_close(compiled(*arguments), public(*arguments))
        graphs_per_call.append(graphs)
    return {
        "graph_breaks": explanation.graph_break_count,
        "graphs": explanation.graph_count,
        "break_reasons": [str(reason.reason) for reason in explanation.break_reasons],
        "compiled_on_first_call": graphs_per_call[0],
        "recompilations": graphs - graphs_per_call[0],
        "calls": calls,
    }


def jax_jit_report(public: AnyFunction, count: int, calls: int) -> dict[str, Any]:
    """How many times `jax.jit(public)` traces the function in `calls` calls with new arrays of
    the same shape and dtype (once is the target)."""
    import jax

    traces = 0

    def traced(*arguments: Any) -> Any:
        nonlocal traces
        traces += 1
        return public(*arguments)

    jitted = jax.jit(traced)
    for seed in range(calls):
        jitted(*operands("jax", count, seed=seed)).block_until_ready()
    return {"traces": traces, "calls": calls}


def compile_report(package: str, jax: bool, calls: int) -> dict[str, Any]:
    """torch.compile (and jax.jit) behaviour of every public function."""
    module = importlib.import_module(package)
    report = {}
    for function, count in FUNCTIONS.items():
        public = getattr(module, function)
        report[function] = {"torch_compile": torch_compile_report(public, count, calls)}
        if jax:
            report[function]["jax_jit"] = jax_jit_report(public, count, calls)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["dispatch", "compile"])
    parser.add_argument("--package", required=True, help="import name of the generated package")
    parser.add_argument("--jax", action="store_true", help="the package has JAX implementations")
    parser.add_argument("--calls", type=int, default=2000, help="calls per round (dispatch) or in all (compile)")
    parser.add_argument("--rounds", type=int, default=1001, help="rounds of timing (dispatch)")
    args = parser.parse_args()
    if args.what == "dispatch":
        report = dispatch_report(args.package, args.jax, args.calls, args.rounds)
    else:
        report = compile_report(args.package, args.jax, args.calls)
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
