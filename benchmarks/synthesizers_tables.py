"""The synthesizer tables of docs/synthesize.md, from the saved results of the synthesizer benchmarks.

One table per dataset, one row per (method, epsilon) cell over its seeds (``synthesizers_adult.py
--seeds 0 1 2``): utility AUC and TVDs as the mean over seeds with the half-width of its two-sided 95%
t-interval (n - 1 degrees of freedom; a cell of one seed shows its value alone), the other columns as means
(violations: summed; largest PI: over every seed), every column the issue asks for: utility AUC,
fidelity (1- and 2-way TVD, correlation difference, share of categories never generated), the privacy
measured by ``mipkit audit-synthetic`` (NNAA privacy loss, DCR attack AUC and TPR at 1% FPR beside the
certified TPR, the largest attribute-inference precision improvement over the non-member baseline), the
violations of certified bounds and the wall time of fit + sample. Cells are read from the final results
(``synthesizers_<dataset>[_tag].json``) and, for a run still going or killed, from its
``.partial.json``; a cell found in several files is taken from the first. ``_small`` runs
(``--quick``), ``_speed`` runs (one run timing every method, ``--jobs``) and ``_rerun`` runs (tags naming
reruns that check a cell's reproducibility) are left out.

Run: ``.venv/bin/python benchmarks/synthesizers_tables.py adult bankchurners`` (prints Markdown);
``--docs`` writes both tables into docs/synthesize.md in place of the ones there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from mipkit.synthesizers.quality import ONE_CLASS
from synthesizers_adult import RESULTS, _violations

HEAD = (
    "| method | epsilon | seeds | utility AUC | TVD 1-way / 2-way | corr. diff | "
    "categories never generated | NNAA privacy loss | DCR AUC | DCR TPR@1% (certified) | largest PI | "
    "violations | fit + sample s |"
)
ORDER = ["dpwgan-gp", "dpwgan-gp-scaled", "mst", "aim", "aim-target", "ctgan", "dpctgan", "patectgan"]
EPS = (1.0, 3.0, 10.0)
#: The interval beside a mean over seeds: the two-sided 95% t-interval, n - 1 degrees of freedom.
LEVEL = 0.95


def cells(dataset: str, results: Path = RESULTS) -> list[dict]:
    """Every finished (method, epsilon, seed) cell of ``dataset`` in the result files, in the order of
    :data:`ORDER`, then epsilon, then seed (a row without a seed has its file's, or 0). AIM's cells with a
    ``max_rounds`` option (64 rounds and 100 refit iterations, not the published AIM) are left out."""
    files = sorted(results.glob(f"synthesizers_{dataset}*.json"))
    skip = ("_small", "_speed", "_rerun")  # speed: times only; rerun: reruns of a cell
    files = [f for f in files if not any(k in f.name for k in skip)]
    found: dict[tuple, dict] = {}
    for f in files:
        doc = json.loads(f.read_text())
        seed = (doc.get("meta") or {}).get("seed", 0)
        for r in doc["rows"]:
            if "max_rounds" in (r.get("options") or {}):  # AIM before it ran as published: superseded
                continue
            r = {"seed": seed, **r}
            found.setdefault((r["method"], r["epsilon"], r["seed"]), r)
    rank = {m: i for i, m in enumerate(ORDER)}
    return sorted(found.values(), key=lambda r: (rank.get(r["method"], 99), r["epsilon"] or 0.0, r["seed"]))


def _f(x: float | None, nd: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def mean_interval(values: list[float], level: float = LEVEL) -> tuple[float, float | None]:
    """``(mean, half-width)`` of the two-sided ``level`` t-interval over ``values``; no half-width for one."""
    from scipy import stats

    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return float(x.mean()), None
    half = stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return float(x.mean()), float(half)


def _pm(values: list, nd: int = 3) -> str:
    """Mean with its t-interval's half-width (``0.812 ± 0.031``); ``n/a`` when no seed has a value."""
    vals = [v for v in values if v is not None]
    if not vals:
        return "n/a"
    mean, half = mean_interval(vals)
    return _f(mean, nd) if half is None else f"{_f(mean, nd)} ± {_f(half, nd)}"


def _mean(values: list) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def row(rs: list[dict]) -> str:
    """One Markdown row of a (method, epsilon) cell over its seeds: utility and fidelity as mean ± the
    t-interval's half-width, the rest as means (a cell whose every seed failed says why)."""
    first = rs[0]
    eps = "-" if first["epsilon"] is None else f"{first['epsilon']:g}"
    ok = [r for r in rs if "error" not in r and "skipped" not in r]
    if not ok:
        why = (first.get("error") or first.get("skipped")).splitlines()[-1][:80]
        return f"| {first['method']} | {eps} | 0 | failed: {why} |" + " |" * 9
    cert = ok[0]["certificate"]
    tpr_cert = cert["tpr_at_fpr"].get("0.01") if cert["certified"] else None
    pis = [v.get("precision_improvement") for r in ok for v in r["inference"].values()]
    pis = [p for p in pis if p is not None]
    utility = [r["utility_auc"] for r in ok]
    cells_ = [
        first["method"],
        eps,
        f"{len(ok)}" + (f" ({len(rs) - len(ok)} failed)" if len(ok) < len(rs) else ""),
        _pm(utility) if any(u is not None for u in utility) else ONE_CLASS,
        f"{_pm([r['tvd_1way'] for r in ok])} / {_pm([r['tvd_2way'] for r in ok])}",
        _f(_mean([r["correlation_difference"] for r in ok])),
        f"{100 * _mean([r['mode_collapse_share'] for r in ok]):.0f}%",
        _f(_mean([r["nnaa_privacy_loss"] for r in ok])),
        _f(_mean([r["dcr_auc"] for r in ok])),
        f"{_f(_mean([r['dcr_tpr_at_1pct'] for r in ok]))} ({'-' if tpr_cert is None else _f(tpr_cert)})",
        f"{max(pis):+.2f}" if pis else "n/a",
        str(sum(_violations(r["certified_vs_measured"]) for r in ok)),
        f"{_mean([r['seconds'] for r in ok]):.0f}",
    ]
    return "| " + " | ".join(cells_) + " |"


def table(dataset: str, results: Path = RESULTS) -> str:
    """The Markdown table of ``dataset``, one row per (method, epsilon) over its seeds; a cell of the grid
    without results says so."""
    found: dict[tuple, list[dict]] = {}
    for r in cells(dataset, results):
        found.setdefault((r["method"], r["epsilon"]), []).append(r)
    grid = [(m, None) if m == "ctgan" else (m, e) for m in ORDER for e in ((None,) if m == "ctgan" else EPS)]
    lines = [HEAD, "|" + " --- |" * 13]
    for method, eps in grid:
        if (method, eps) in found:
            lines.append(row(found[(method, eps)]))
        else:
            lines.append(f"| {method} | {'-' if eps is None else f'{eps:g}'} | 0 | not run yet |" + " |" * 9)
    return "\n".join(lines)


#: The line of docs/synthesize.md each table follows (its first row is the next line starting "| method |").
DOC_ANCHORS = {"adult": "Adult (32,561 training rows", "bankchurners": "BankChurners (7,088 training rows"}


def write_docs(page: Path = RESULTS.parents[1] / "docs" / "synthesize.md") -> None:
    """Replace each dataset's table in ``page`` (the Markdown table after its anchor line)."""
    lines = page.read_text().split("\n")
    for name, anchor in DOC_ANCHORS.items():
        at = next(k for k, line in enumerate(lines) if line.startswith(anchor))
        start = next(k for k in range(at, len(lines)) if lines[k].startswith("| method |"))
        end = start
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        lines[start:end] = table(name).split("\n")
    page.write_text("\n".join(lines))


if __name__ == "__main__":
    if "--docs" in sys.argv[1:]:
        write_docs()
    else:
        for name in sys.argv[1:] or ["adult", "bankchurners"]:
            print(f"{name}\n\n{table(name)}\n")
