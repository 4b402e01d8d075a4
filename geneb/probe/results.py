from geneb.results.table import read_results  # noqa: F401  kept for users of geneb.probe.results
