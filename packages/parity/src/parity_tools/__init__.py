"""The tools of a repo made by the research template, as one command with subcommands:
`parity new` (scaffold an algorithm), `parity bench` (time every port), `parity sweep` and
`parity results` (a sweep of training runs, and its tables), `parity update` and
`parity conflicts` (the template's later conventions). `parity --help` lists them.

A package of its own beside `parity`, the harness: a tool imports no more than it needs (neither
torch nor the harness to list conflicts or scaffold), so each starts in a fraction of a second.
"""
