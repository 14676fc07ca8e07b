"""The synthesizer tables of docs/synthesize.md, from the saved results of the synthesizer benchmarks.

One table per dataset, one row per (method, epsilon) cell, every column the issue asks for: utility AUC,
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

from mipkit.synthesizers.quality import ONE_CLASS
from synthesizers_adult import RESULTS, _violations

HEAD = (
    "| method | epsilon | utility AUC | TVD 1-way / 2-way | corr. diff | categories never generated | "
    "NNAA privacy loss | DCR AUC | DCR TPR@1% (certified) | largest PI | violations | fit + sample s |"
)
ORDER = ["dpwgan-gp", "dpwgan-gp-scaled", "mst", "aim", "ctgan", "dpctgan", "patectgan"]
EPS = (1.0, 3.0, 10.0)


def cells(dataset: str, results: Path = RESULTS) -> list[dict]:
    """Every finished cell of ``dataset`` in the result files, in the order of :data:`ORDER`, then epsilon."""
    files = sorted(results.glob(f"synthesizers_{dataset}*.json"))
    skip = ("_small", "_speed", "_rerun")  # speed: times only; rerun: reruns of a cell
    files = [f for f in files if not any(k in f.name for k in skip)]
    found: dict[tuple, dict] = {}
    for f in files:
        for r in json.loads(f.read_text())["rows"]:
            found.setdefault((r["method"], r["epsilon"]), r)
    rank = {m: i for i, m in enumerate(ORDER)}
    return sorted(found.values(), key=lambda r: (rank.get(r["method"], 99), r["epsilon"] or 0.0))


def _f(x: float | None, nd: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def row(r: dict) -> str:
    """One Markdown row of a cell (a failed cell says why)."""
    eps = "-" if r["epsilon"] is None else f"{r['epsilon']:g}"
    if "error" in r or "skipped" in r:
        why = (r.get("error") or r.get("skipped")).splitlines()[-1][:80]
        return f"| {r['method']} | {eps} | failed: {why} |" + " |" * 9
    cert = r["certificate"]
    tpr_cert = cert["tpr_at_fpr"].get("0.01") if cert["certified"] else None
    pis = [v.get("precision_improvement") for v in r["inference"].values()]
    pis = [p for p in pis if p is not None]
    cells_ = [
        r["method"],
        eps,
        _f(r["utility_auc"]) if r["utility_auc"] is not None else ONE_CLASS,
        f"{_f(r['tvd_1way'])} / {_f(r['tvd_2way'])}",
        _f(r["correlation_difference"]),
        f"{100 * r['mode_collapse_share']:.0f}%",
        _f(r["nnaa_privacy_loss"]),
        _f(r["dcr_auc"]),
        f"{_f(r['dcr_tpr_at_1pct'])} ({'-' if tpr_cert is None else _f(tpr_cert)})",
        f"{max(pis):+.2f}" if pis else "n/a",
        str(_violations(r["certified_vs_measured"])),
        f"{r['seconds']:.0f}",
    ]
    return "| " + " | ".join(cells_) + " |"


def table(dataset: str, results: Path = RESULTS) -> str:
    """The Markdown table of ``dataset``; a cell of the grid without results says so."""
    found = {(r["method"], r["epsilon"]): r for r in cells(dataset, results)}
    grid = [(m, None) if m == "ctgan" else (m, e) for m in ORDER for e in ((None,) if m == "ctgan" else EPS)]
    lines = [HEAD, "|" + " --- |" * 12]
    for method, eps in grid:
        if (method, eps) in found:
            lines.append(row(found[(method, eps)]))
        else:
            lines.append(f"| {method} | {'-' if eps is None else f'{eps:g}'} | not run yet |" + " |" * 9)
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
