"""The worked examples declare their operation counts (`benchmark_flops`, beside
`benchmark_inputs` in their test modules), so the bench's roofline places them: five operations
per element for softmax's and log_softmax's five elementwise steps and reductions, plus a log
per row for log_softmax, and for cross_entropy a log and a mean's term per row. Read as the
bench reads them (`parity_tools.bench.inputs_of`), in a generated repo."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

from tests.render import Combination, Render

READ = """
import json
from parity_tools import bench

found = {}
for name in ("softmax", "log_softmax", "cross_entropy"):
    inputs, _, flops = bench.inputs_of(name)
    operands, _ = inputs(4096)
    shapes = [list(operand.shape) for operand in operands]
    found[name] = {"flops": None if flops is None else flops(4096), "shapes": shapes}
print(json.dumps(found))
"""


def test_the_worked_examples_declare_their_operations(rendered: Render) -> None:
    repo = rendered("cookiecutter", Combination("single", jax=False))
    env = {**os.environ, "PYTHONPATH": str(repo / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    ran = subprocess.run([sys.executable, "-c", READ], cwd=repo, env=env, capture_output=True, text=True, check=True)
    found = json.loads(ran.stdout)
    (x,) = found["softmax"]["shapes"]
    assert found["softmax"]["flops"] == 5 * math.prod(x)
    (x,) = found["log_softmax"]["shapes"]
    assert found["log_softmax"]["flops"] == 5 * math.prod(x) + math.prod(x[:-1])
    logits, labels = found["cross_entropy"]["shapes"]
    assert found["cross_entropy"]["flops"] == 5 * math.prod(logits) + 2 * math.prod(labels)
