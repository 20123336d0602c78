"""`sear batch SWEEP.toml`: parameter sweeps and Monte-Carlo runs of one project, on a local process pool
or a Ray cluster, with one results table, a manifest and a summary report per batch (docs/batch.md).

- sear.batch.sweep: the sweep file (TOML) read and checked, and expanded into runs.
- sear.batch.worker: one run in a process of its own (`python -m sear.batch.worker`), its metrics.
- sear.batch.pool: the local pool of `-j N` workers, time-outs, retries, Ctrl+C, progress.
- sear.batch.results: results.jsonl (written as runs finish) -> results.csv and results.parquet, the manifest.
- sear.batch.report: report.html with its figures.
- sear.batch.rayrun: the same runs as Ray tasks (`--ray [ADDRESS]`, the optional extra sear[ray]).

Above sear.runtime (a run is a headless simulation), below sear.cli (which reads the arguments).
"""
