"""The package's own tests: the plugin, run by pytest in folders of its own (pytester), and the
command `parity`, with the package alone (no template, no generated repo)."""

pytest_plugins = ["pytester"]
