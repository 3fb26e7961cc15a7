"""Speed measurements of the template and the repos it generates: `python -m benchmarks.run --help`."""
