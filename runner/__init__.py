"""The runner: send each benchmark request to a model over raw HTTP and keep a complete trace.

Providers are tiny modules in `runner.providers`; `runner.run` drives them with
bounded concurrency and bounded retries; `runner.traces` owns the trace file
(append, resume, torn-tail detection) and `final_rows`, through which every
later stage reads a trace. See docs/RUNNER.md.
"""

# Recorded in every trace row; bump it whenever what the runner sends or records changes.
RUNNER_VERSION = "1"
