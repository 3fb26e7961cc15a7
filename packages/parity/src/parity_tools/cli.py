"""`parity SUBCOMMAND [ARGS]`: each subcommand is a module of parity_tools with a `main(argv)`,
imported only when it runs."""

from __future__ import annotations

import importlib
import os
import sys

#: Subcommand: (module, what it does).
COMMANDS = {
    "new": ("new", "start a new algorithm from its signature: its module, tests and docs page"),
    "bench": ("bench", "time every public function on every backend, eager and compiled"),
    "sweep": ("sweep", "run a sweep of training runs here, or submit it as a Slurm job array"),
    "results": ("results", "a sweep's table (Markdown, CSV, LaTeX) and its figures"),
    "update": ("update", "bring the template's latest conventions in (copier update)"),
    "conflicts": ("conflicts", "list every file with unresolved conflicts, and fail if any"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {about}" for name, (_, about) in COMMANDS.items()]
    return "usage: parity SUBCOMMAND [ARGS]   (parity SUBCOMMAND --help for its options)\n\n" + (
        "\n".join(lines) + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help"}:
        print(usage(), end="")
        return 0 if args else 2
    if args[0] not in COMMANDS:
        sys.stderr.write(f"parity: unknown subcommand {args[0]!r}\n{usage()}")
        return 2
    module = importlib.import_module(f"parity_tools.{COMMANDS[args[0]][0]}")
    sys.argv[0] = f"parity {args[0]}"  # argparse's prog in each subcommand's usage and errors
    try:
        return module.main(args[1:]) or 0
    except BrokenPipeError:
        # The reader has gone (`| head`, a closed terminal): end quietly, as Python's
        # documentation on SIGPIPE suggests.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
