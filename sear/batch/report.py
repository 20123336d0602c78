"""The batch's summary report: one self-contained HTML page (report.html, its figures embedded as PNG)
that shows at a glance which parameter values fail, how the metrics spread, and where the robots ended.
With several robots, each metric's histogram and the end positions hold every robot's values (the table
has them robot by robot).

Figures are drawn with matplotlib's Agg canvas (no window, no global pyplot state); each is also saved as
report-NAME.png beside the page, for documents and e-mails.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections import Counter
from pathlib import Path
from typing import Any

from sear.batch.sweep import Sweep

OK_COLOUR, FAIL_COLOUR = "#3b8b4b", "#c8452c"
MAX_CATEGORIES = 12
"""More distinct values of a parameter than this are grouped into bins of equal counts."""
ROBOT_METRICS = (("distance_m", "distance driven (m)"), ("displacement_m", "end distance from start (m)"),
                 ("collisions", "collisions"), ("min_range_m", "minimum range seen (m)"))
"""A robot's metrics drawn, by their column names in a one-robot table (sear.batch.results.ROBOT_COLUMNS)."""
RUN_METRICS = (("wall_time_s", "wall time (s)"),)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    return None


def _groups(values: list[Any]) -> tuple[list[str], list[int]]:
    """Labels of a parameter's values and each row's group index: each value its own group, or bins of
    equal counts when there are many numbers."""
    distinct = sorted({v for v in values if v is not None}, key=lambda v: (str(type(v)), v))
    numbers = [_number(v) for v in values]
    if len(distinct) <= MAX_CATEGORIES or any(n is None for n in numbers):
        labels = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in distinct]
        index = {v: i for i, v in enumerate(distinct)}
        return labels, [index[v] for v in values]
    ordered = sorted(n for n in numbers if n is not None)
    bins = 8
    edges = [ordered[min(len(ordered) - 1, round(i * (len(ordered) - 1) / bins))] for i in range(bins + 1)]
    labels = [f"{edges[i]:.3g}–{edges[i + 1]:.3g}" for i in range(bins)]
    groups = []
    for n in numbers:
        assert n is not None
        groups.append(min(bins - 1, max(0, next((i for i in range(bins) if n <= edges[i + 1]), bins - 1))))
    return labels, groups


def _png(figure: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


def success_figure(rows: list[dict[str, Any]], params: list[str]) -> Any:
    """Success rate per value of each varied parameter (bars; the number of runs above each)."""
    from matplotlib.figure import Figure

    count = max(1, len(params))
    columns = min(3, count)
    lines = math.ceil(count / columns)
    figure = Figure(figsize=(4.2 * columns, 3.0 * lines), layout="constrained")
    figure.suptitle("Success rate per parameter value", fontweight="bold")
    for k, name in enumerate(params or [""]):
        axes = figure.add_subplot(lines, columns, k + 1)
        if not name:
            ok = sum(r["status"] == "ok" for r in rows)
            axes.bar(["all runs"], [ok / max(1, len(rows))], color=OK_COLOUR)
            axes.set_ylim(0, 1.1)
            continue
        labels, groups = _groups([r.get(name) for r in rows])
        totals = [0] * len(labels)
        oks = [0] * len(labels)
        for row, group in zip(rows, groups, strict=True):
            totals[group] += 1
            oks[group] += row["status"] == "ok"
        rates = [o / t if t else 0.0 for o, t in zip(oks, totals, strict=True)]
        colours = [OK_COLOUR if r == 1.0 else FAIL_COLOUR if r < 0.5 else "#d9a13b" for r in rates]
        bars = axes.bar(range(len(labels)), rates, color=colours)
        for bar, ok, total in zip(bars, oks, totals, strict=True):
            axes.annotate(f"{ok}/{total}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                          ha="center", va="bottom", fontsize=8)
        axes.set_xticks(range(len(labels)), labels, rotation=30 if len(labels) > 4 else 0, fontsize=8)
        axes.set_ylim(0, 1.15)
        axes.set_ylabel("runs ok")
        axes.set_title(name.removeprefix("param."), fontsize=10)
    return figure


def _values(rows: list[dict[str, Any]], key: str, prefixes: list[str], ok: bool) -> list[float]:
    """The numbers of column `key` of every robot (`prefixes`: sear.batch.results.robot_prefixes) of the
    rows whose run was ok (or failed)."""
    return [n for r in rows if (r["status"] == "ok") == ok for prefix in prefixes
            if (n := _number(r.get(prefix + key))) is not None]


def metrics_figure(rows: list[dict[str, Any]], prefixes: list[str]) -> Any:
    """The distribution of each metric over the runs (and robots): histograms, runs that failed stacked in
    red."""
    from matplotlib.figure import Figure

    several = len(prefixes) > 1
    extra = sorted({k.removeprefix(prefix) for r in rows for k, v in r.items() for prefix in prefixes
                    if k.startswith(prefix + "result.") and _number(v) is not None})
    metrics = [*((k, f"{label}, every robot" if several else label, prefixes) for k, label in ROBOT_METRICS),
               *((k, label, [""]) for k, label in RUN_METRICS),
               *((k, f"{k}, every robot" if several else k, prefixes) for k in extra)]
    present = [(k, label, owners) for k, label, owners in metrics
               if _values(rows, k, owners, True) or _values(rows, k, owners, False)]
    columns = min(3, max(1, len(present)))
    lines = max(1, math.ceil(len(present) / columns))
    figure = Figure(figsize=(4.2 * columns, 2.8 * lines), layout="constrained")
    figure.suptitle("Metric distributions (failed runs in red)", fontweight="bold")
    for k, (key, label, owners) in enumerate(present):
        axes = figure.add_subplot(lines, columns, k + 1)
        ok, bad = _values(rows, key, owners, True), _values(rows, key, owners, False)
        values = ok + bad
        if all(v.is_integer() for v in values) and max(values) - min(values) <= 40:  # counts: a bar per count
            bins: Any = [v - 0.5 for v in range(int(min(values)), int(max(values)) + 2)]
            axes.set_xticks(range(int(min(values)), int(max(values)) + 1, max(1, int(max(values) - min(values)) // 8)))
        else:
            bins = min(20, max(3, len(values)))
        axes.hist([ok, bad], bins=bins, stacked=True, color=[OK_COLOUR, FAIL_COLOUR], label=["ok", "failed"])
        axes.set_title(label, fontsize=10)
        axes.set_ylabel("runs")
    return figure


def positions_figure(rows: list[dict[str, Any]], prefixes: list[str]) -> Any:
    """Where each run's robots ended (x east, y north, m), failed runs' as red crosses."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4.6, 4.2), layout="constrained")
    axes = figure.add_subplot(1, 1, 1)
    for ok, colour, marker, label in ((True, OK_COLOUR, "o", "ok"), (False, FAIL_COLOUR, "x", "failed")):
        points = [(r[p + "final_x"], r[p + "final_y"]) for r in rows if (r["status"] == "ok") == ok for p in prefixes
                  if _number(r.get(p + "final_x")) is not None and _number(r.get(p + "final_y")) is not None]
        if points:
            axes.scatter([x for x, _ in points], [y for _, y in points], c=colour, marker=marker, s=22,
                         label=label, alpha=0.8)
    axes.set_xlabel("final x, east (m)")
    axes.set_ylabel("final y, north (m)")
    axes.set_title("Where the runs ended", fontweight="bold")
    axes.set_aspect("equal", adjustable="datalim")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return figure


def write_report(folder: Path, rows: list[dict[str, Any]], sweep: Sweep, prefixes: list[str]) -> Path:
    """report.html (and its figures as report-*.png) in `folder` from the batch's rows; `prefixes`: the
    robots' column prefixes (sear.batch.results.robot_prefixes)."""
    params = [k for k in dict.fromkeys(k for r in rows for k in r) if k.startswith("param.")
              and len({str(r.get(k)) for r in rows}) > 1]
    figures = {"success": success_figure(rows, params), "metrics": metrics_figure(rows, prefixes),
               "positions": positions_figure(rows, prefixes)}
    images = {}
    for name, figure in figures.items():
        data = _png(figure)
        (folder / f"report-{name}.png").write_bytes(data)
        images[name] = base64.b64encode(data).decode()
    statuses = Counter(r["status"] for r in rows)
    ok = statuses.get("ok", 0)
    title = f"SEAR batch: {sweep.path.name}"
    failed = [r for r in rows if r["status"] != "ok"]
    esc = html.escape

    def parameters(row: dict[str, Any]) -> str:
        return esc(", ".join(f"{k.removeprefix('param.')}={row[k]}" for k in row if k.startswith("param.")))

    failed_rows = "".join(
        f"<tr><td>{esc(r['run_id'])}</td><td>{r['seed']}</td><td>{parameters(r)}</td>"
        f"<td class=bad>{esc(r['status'])}</td><td>{r.get('attempts', 1)}</td>"
        f"<td><pre>{esc(str(r.get('error', ''))[:600])}</pre></td></tr>" for r in failed[:200])
    failed_table = ("<p>None.</p>" if not failed else
                    "<table><tr><th>run</th><th>seed</th><th>parameters</th><th>status</th><th>attempts</th>"
                    f"<th>error</th></tr>{failed_rows}</table>")
    status_cells = "".join(f"<li><b>{esc(k)}</b>: {v}</li>" for k, v in sorted(statuses.items()))
    project = esc(sweep.project.name)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em auto; max-width: 1300px; color: #222; }}
h1 {{ font-size: 1.5em; }} .bad {{ color: {FAIL_COLOUR}; font-weight: bold; }}
.summary {{ font-size: 1.2em; }} img {{ max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }}
table {{ border-collapse: collapse; font-size: 0.9em; }} td, th {{ border: 1px solid #ccc; padding: 3px 6px;
vertical-align: top; }} pre {{ margin: 0; white-space: pre-wrap; max-width: 60em; }}
</style></head><body>
<h1>{esc(title)}</h1>
<p class="summary">{len(rows)} runs of <b>{project}</b>: <b>{ok}</b> ok ({ok / max(1, len(rows)):.0%}),
<span class="{'bad' if failed else ''}">{len(failed)} failed</span>.</p>
<ul>{status_cells}</ul>
<p>The whole table: <a href="results.csv">results.csv</a> (also results.parquet); what ran with what:
<a href="manifest.json">manifest.json</a>.</p>
<h2>Which parameter values fail</h2>
<img alt="success rate per parameter value" src="data:image/png;base64,{images['success']}">
<h2>Metrics</h2>
<img alt="metric distributions" src="data:image/png;base64,{images['metrics']}">
<h2>Where the runs ended</h2>
<img alt="final positions" src="data:image/png;base64,{images['positions']}">
<h2>Failed runs</h2>
{failed_table}
{f'<p>… and {len(failed) - 200} more in results.csv.</p>' if len(failed) > 200 else ''}
</body></html>
"""
    path = folder / "report.html"
    path.write_text(page, encoding="utf-8")
    return path
