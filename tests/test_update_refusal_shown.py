"""Where `copier update` refuses an answer (here switching JAX off), copier 9.19.1 prints the
template's refusal as the last line of a traceback, which nothing in the template can change:
the generated updating guide says so and names the line to look for. (`parity update` prints
the refusal alone: packages/parity/tests/test_update_refusal.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.render import BIN, Combination, _run_unchecked, generate


@pytest.mark.slow
def test_the_guide_names_the_line_of_copier_s_traceback_that_refuses(template_v1: Path, tmp_path: Path) -> None:
    repo = generate(template_v1, "copier", tmp_path, Combination("single", jax=True))
    refused = _run_unchecked([BIN / "copier", "update", "--defaults", "--data", "jax=false"], cwd=repo)
    assert refused.returncode != 0
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: Validation error for question 'jax': This repo has JAX"), refused.stderr
    guide = (repo / "docs" / "guide" / "updating.md").read_text(encoding="utf-8")
    assert "`ValueError: Validation error for question '<name>': ...`" in guide
    assert "last line of a Python traceback" in guide
