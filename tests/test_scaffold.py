"""The scaffold, `parity new`, in every combination of options (the one with the most files in the
default `nox`, the others in `nox -s proofs`).

It refuses bad names, specs and constraints with a message that says what is wrong (a keyword,
the character of the axes) and what to type, writing nothing; it
writes algorithms of any signature in the repo's layout, with the worked examples' shape, that
pass the repo's own ruff and mypy; their tests report the stubs as not implemented yet, and
pass once the stubs are written. That they never fail correct code, under any seed, is the
zoo's part (tests/test_zoo.py).
"""

from __future__ import annotations

import ast
import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.render import BIN, TOOLS, Combination, Render, most_files_first, run, tree
from tests.scaffolded import COMMANDS, PACKAGE, implement, scaffold

SPLIT_JAX = Combination("split", jax=True)


def environment(repo: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in {"REQUIRE_DEVICE", "HYPOTHESIS_PROFILE"}}
    return {**env, "PYTHONPATH": str(repo / "src")}


def new_algorithm(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [*TOOLS, "new", *args]
    return subprocess.run(command, cwd=repo, env=environment(repo), capture_output=True, text=True, check=False)


def pytest_in(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=repo, env=environment(repo), capture_output=True, text=True, check=False)


REFUSED = [
    (["Layer-Norm"], "not a valid name: use a lower-case Python identifier"),
    (["lambda"], "the algorithm 'lambda' is a Python keyword: choose another name, such as 'lambda_'"),
    (["attention", "class"], "operand 'class' is a Python keyword"),
    (["attention", "x", "--param", "lambda: float = 1.0"], "parameter 'lambda' is a Python keyword"),
    (["softmax"], "already exists: src/"),
    *[
        ([name], "would shadow a name the generated module or test uses")
        for name in ("parity", "given", "st", "pytest")
    ],
    (["test"], "starts with 'test', so pytest would take it for a test"),
    (["attention", "np"], "operand 'np' would shadow"),
    (["attention", "q", "q"], "'q' is used twice"),
    (["attention", "x", "--param", "x: int = 1"], "'x' is used twice"),
    (["attention", "x", "--param", "scale: float ="], "is not valid Python: write it as 'NAME: TYPE = DEFAULT'"),
    (["attention", "x", "--param", "scale = 1.0"], "needs a type and a default"),
    (["attention", "x", "--param", "a: int = 1, b: int = 2"], "is not one parameter"),
    (["attention", "x", "--param", "scale: Tensor = 1.0"], "does not import Tensor"),
    (["attention", "x", "--param", "scale: float = math.pi"], "the default must be a Python literal"),
    (["attention", "x", "--param", "torch: int = 1"], "parameter 'torch' would shadow"),
    (["attention", "x", "--param", "data: int = 1"], "parameter 'data' would shadow"),
    (["rms_norm", "x:..d"], "operand 'x:..d': the '.' at position 0 of '..d' is not '...' at the start"),
    (["rms_norm", "x:...dd"], "the letter 'd' appears twice in '...dd'; write NAME:AXES"),
    (["rms_norm", "x:...dD"], "'D' at position 4 of '...dD' is not a letter a-z"),
    (["nll", "logits:...c", "labels:int"], "operand 'labels:int': write its axes before ':int'"),
    (["nll", "logits:...c", "labels:...:float"], "only ':int' may follow the axes"),
    (["nll", "logits:...c", "labels:...:int<C"], "'C' is not a bound"),
    (["nll", "logits:...c", "labels:...:int<k"], "'k' is neither a letter of the operands' axes (c) nor a parameter"),
    (["nll", "labels:...:int<5"], "every operand is of integers"),
    (["nll", "logits:...c", "labels:...:int<c", "--array-api"], "--array-api takes floating-point operands only"),
    (["rotary", "x:...d", "--size", "d even"], "--size 'd even': write --size 'LETTER: RULE'"),
    (["rotary", "x:...d", "--size", "e: even"], "no operand has an axis 'e'"),
    (["rotary", "x:...d", "--size", "d: multiple of 0"], "'0' is not a bound"),
    (["rotary", "x:...d", "--size", "d: multiple of g", "--param", "g: float = 2.0"], "'g' is neither a letter"),
    (["rotary", "x:...d", "--size", "d: even", "--size", "d: multiple of 4"], "'d' has such a rule already"),
    (["floor_div", "x", "--no-gradient", " "], "--no-gradient needs the reason the ports have no derivative"),
]


@pytest.mark.parametrize(("args", "message"), REFUSED, ids=[" ".join(args) for args, _ in REFUSED])
def test_refuses_bad_signatures_writing_nothing(
    rendered: Render, tmp_path: Path, args: list[str], message: str
) -> None:
    repo = Path(shutil.copytree(rendered("cookiecutter", SPLIT_JAX), tmp_path / "repo"))
    before = tree(repo)
    refused = new_algorithm(repo, *args)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert message in refused.stderr
    assert tree(repo) == before


def test_writes_defaults_as_typed_where_ruff_keeps_them(rendered: Render, tmp_path: Path) -> None:
    repo = Path(shutil.copytree(rendered("cookiecutter", SPLIT_JAX), tmp_path / "repo"))
    params = ["--param", "eps: float = 1e-6", "--param", "gain: float = 1E3"]  # ruff would lower 1E3
    assert new_algorithm(repo, "rms_norm", "x:...d", "weight:d", *params).returncode == 0
    tests = (repo / "tests" / "test_rms_norm.py").read_text(encoding="utf-8")
    assert 'DEFAULTS: dict[str, Any] = {"eps": 1e-6, "gain": 1000.0}' in tests
    run([BIN / "ruff", "format", "--check", "--no-cache", "."], cwd=repo)


def test_output_cut_short_leaves_the_algorithm_whole(rendered: Render, tmp_path: Path) -> None:
    """Its output read by `head -1`, say: the files are all written, exported and formatted
    before the first line is printed."""
    repo = Path(shutil.copytree(rendered("cookiecutter", SPLIT_JAX), tmp_path / "repo"))
    command = [*TOOLS, "new", "huber", "prediction", "target"]
    unbuffered = {**environment(repo), "PYTHONUNBUFFERED": "1"}  # each line written as printed
    with subprocess.Popen(command, cwd=repo, env=unbuffered, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as cut:
        assert cut.stdout is not None
        cut.stdout.close()  # the reader has gone: the first line printed fails (BrokenPipeError)
        cut.wait(timeout=60)
        assert cut.stderr is not None
        assert b"Traceback" not in cut.stderr.read()  # ends quietly, as `head` expects
    assert (repo / "tests" / "test_huber.py").is_file()
    assert '"huber"' in (repo / "src" / PACKAGE / "__init__.py").read_text(encoding="utf-8")
    run([BIN / "ruff", "format", "--check", "--no-cache", "."], cwd=repo)


@pytest.mark.parametrize(
    ("exports", "edited"),
    [
        ('__all__ = [\n    "cross_entropy",\n    "log_softmax",\n    "softmax",  # the worked example\n]\n', False),
        ('__all__ = [\n    "cross_entropy",\n    "log_softmax",\n    "softmax",\n]\n', True),
    ],
    ids=["commented", "one-per-line"],
)
def test_export_keeps_every_line_of_the_user_s_init(
    rendered: Render, tmp_path: Path, exports: str, edited: bool
) -> None:
    """The scaffold rewrites `__all__` to add the new name; where that would drop a comment it
    leaves `__init__.py` as it is and says what to add by hand."""
    repo = Path(shutil.copytree(rendered("cookiecutter", SPLIT_JAX), tmp_path / "repo"))
    init = repo / "src" / PACKAGE / "__init__.py"
    text = init.read_text(encoding="utf-8").replace('__all__ = ["cross_entropy", "log_softmax", "softmax"]\n', exports)
    init.write_text(text, encoding="utf-8")
    result = new_algorithm(repo, "huber", "prediction", "target")

    assert result.returncode == 0, result.stderr
    assert (repo / "tests" / "test_huber.py").is_file()
    if edited:
        assert '__all__ = ["cross_entropy", "huber", "log_softmax", "softmax"]\n' in init.read_text(encoding="utf-8")
    else:
        assert init.read_text(encoding="utf-8") == text
        assert 'add `from .huber import huber` and "huber" to its __all__ yourself' in result.stderr


def test_help_shows_a_complete_example(rendered: Render) -> None:
    shown = new_algorithm(rendered("cookiecutter", SPLIT_JAX), "--help").stdout
    assert "parity new attention q:...ld k:...sd v:...se --param 'scale: float | None = None'" in shown


NO_GRADIENT = [
    "torch.floor_divide returns no graph",
    # Quotes, a backslash, a dollar (the skeleton is a string.Template), letters beyond ASCII, and
    # more than fits on a line: written in pieces, each within ruff's line length.
    'torch.special.bessel_j0 "returns" no graph \\ (costs $0); Bessel\'s J₀ ' + "is smooth, " * 12,
]


@pytest.mark.parametrize("reason", NO_GRADIENT, ids=["short", "long-and-quoted"])
def test_no_gradient_writes_the_reason_into_the_spec(rendered: Render, tmp_path: Path, reason: str) -> None:
    repo = Path(shutil.copytree(rendered("cookiecutter", SPLIT_JAX), tmp_path / "repo"))
    result = new_algorithm(repo, "bessel_j0", "x", "--no-gradient", reason)
    assert result.returncode == 0, result.stderr
    test = repo / "tests" / "test_bessel_j0.py"
    spec = next(
        node.value
        for node in ast.walk(ast.parse(test.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["SPEC"]
    )
    assert isinstance(spec, ast.Call)
    declared = {keyword.arg: keyword.value for keyword in spec.keywords}
    assert ast.literal_eval(declared["no_gradient"]) == reason.strip()
    run([BIN / "ruff", "check", "--no-cache", "."], cwd=repo)
    run([BIN / "ruff", "format", "--check", "--no-cache", "."], cwd=repo)
    # The module imports (its Spec accepts the field), and its tests are collected.
    collected = pytest_in(repo, "--collect-only", "-q", "tests/test_bessel_j0.py")
    assert collected.returncode == 0, collected.stdout + collected.stderr
    # Without the option, no such field.
    assert new_algorithm(repo, "bessel_j1", "x").returncode == 0
    assert "    no_gradient=" not in (repo / "tests" / "test_bessel_j1.py").read_text(encoding="utf-8")


def test_help_documents_no_gradient(rendered: Render) -> None:
    shown = " ".join(new_algorithm(rendered("cookiecutter", SPLIT_JAX), "--help").stdout.split())
    assert "--no-gradient REASON" in shown
    assert 'written into the SPEC as no_gradient="REASON"; its gradient tests then skip with it' in shown


def defined_functions(paths: list[Path]) -> list[str]:
    """The names of the functions the files define, overloads included, sorted."""
    return sorted(
        node.name
        for path in paths
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef)
    )


def shared(algorithm: str) -> bool:
    """Whether the scaffolded `algorithm` has one shared (Array API) implementation."""
    return "--array-api" in COMMANDS[algorithm]


def operands(algorithm: str) -> list[str]:
    """The scaffolded `algorithm`'s operands: the words of its command before the options."""
    words = itertools.takewhile(lambda word: not word.startswith("-"), COMMANDS[algorithm][1:])
    return [word.partition(":")[0] for word in words]


def implementations(algorithm: str, backends: list[str]) -> list[str]:
    """The private functions of `algorithm` after ``_<name>_``: the reference first."""
    return ["numpy", "array_api"] if shared(algorithm) else backends


def module_files(repo: Path, combination: Combination, algorithm: str) -> list[Path]:
    source = repo / "src" / PACKAGE
    if combination.layout == "single":
        return [source / f"{algorithm}.py"]
    return sorted((source / algorithm).glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("combination", most_files_first())
def test_scaffolds_any_signature(repo: Path, combination: Combination, mypy_cache: Path) -> None:
    for algorithm in COMMANDS:
        created = scaffold(repo, algorithm).stdout
        assert f"created tests/test_{algorithm}.py" in created
        assert f"exported {algorithm} from src/{PACKAGE}/__init__.py" in created

    # The shape of the worked examples: the same files, the same functions (one overload per
    # backend), a floating-point array of one backend in each branch of the dispatch; with
    # --array-api, log_softmax's: the reference and the shared implementation.
    backends = ["numpy", "pytorch", *(["jax"] if combination.jax else [])]
    for algorithm in COMMANDS:
        ports = implementations(algorithm, backends)
        files = module_files(repo, combination, algorithm)
        model = "log_softmax" if shared(algorithm) else "softmax"
        # Not softmax's Triton files: `parity new` writes no kernel (docs/guide/dispatch.md).
        example = [path for path in module_files(repo, combination, model) if "triton" not in path.name]
        assert [path.name.replace(algorithm, model) for path in files] == [path.name for path in example]
        expected = [algorithm] * (len(backends) + 1) + [f"_{algorithm}_{backend}" for backend in ports]
        assert defined_functions(files) == sorted(expected)
        text = "".join(path.read_text(encoding="utf-8") for path in files)
        first, *others = operands(algorithm)
        assert f'isinstance({first}, ndarray) and {first}.dtype.kind == "f"' in " ".join(text.split())
        if shared(algorithm):
            assert f"if array_api_floats({', '.join([first, *others])}):" in text
        assert f"raise dispatch_error({algorithm}, " in text
    api = "".join(path.read_text(encoding="utf-8") for path in module_files(repo, combination, "attention"))
    assert "def attention(q: Array, k: Array, v: Array, scale: float | None = None) -> Array:" in api
    assert "return _attention_pytorch(q, k, v, scale)" in api

    # The README's example, two operands and an optional axis, is as clean.
    readme = (repo / "README.md").read_text(encoding="utf-8")
    command = re.search(r"^parity new (.+)$", readme, re.MULTILINE)
    assert command is not None, readme
    run([*TOOLS, "new", *shlex.split(command[1])], cwd=repo)

    # The longest names allowed still give lines ruff accepts, in both styles.
    long = ["queries", "keys", "values_of_the_attention_heads", "--param", "dropout_rate_of_the_weights: float = 0.0"]
    for name, style in [("scaled_dot_product_attention_xyz", ""), ("scaled_dot_product_attention_abc", "--array-api")]:
        run([*TOOLS, "new", name, *long, *style.split()], cwd=repo)

    run([BIN / "ruff", "check", "--no-cache", "."], cwd=repo)
    run([BIN / "ruff", "format", "--check", "--no-cache", "."], cwd=repo)
    run([BIN / "mypy", "--cache-dir", mypy_cache], cwd=repo, env=environment(repo))

    # The stubs: expected failures that say what to write, the reference first; nothing fails.
    tests = [f"tests/test_{algorithm}.py" for algorithm in COMMANDS]
    for written, still_stubs in [((), ["numpy"]), (("numpy",), backends[1:])]:
        for algorithm in COMMANDS:
            implement(repo, combination, algorithm, written)
        result = pytest_in(repo, *tests)
        summary = result.stdout.strip().splitlines()[-1]
        assert "xfailed" in summary, result.stdout
        assert not re.search(r"\d+ (failed|error)", summary), result.stdout
        for algorithm in COMMANDS:
            for backend in still_stubs if still_stubs == ["numpy"] else implementations(algorithm, backends)[1:]:
                assert f"not implemented yet: write _{algorithm}_{backend}, the " in result.stdout

    # Written: the same tests compare every port with the reference, and pass; the code, written
    # as the math (no casts around NumPy's results), passes mypy.
    for algorithm in COMMANDS:
        implement(repo, combination, algorithm)
    run([BIN / "mypy", "--cache-dir", mypy_cache], cwd=repo, env=environment(repo))
    result = pytest_in(repo, *tests)
    summary = result.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary), result.stdout
    assert not re.search(r"failed|error|xfail|xpass", summary), result.stdout
