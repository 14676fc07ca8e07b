"""The subgroups' table on the terminal fits 100 columns: each estimate above its interval, the kind under
the subgroup's name and the trials under its records, with no interval cut or truncated."""

from __future__ import annotations

import io

from rich.console import Console

from mipkit.report.audit_console import print_slices


def _row(column: str, group: str, eta_ci: list[float], flag: bool | None) -> dict:
    fprs = {"0.001": 0.002, "0.01": 0.015, "0.1": 0.108}
    return {"column": column, "group": group, "n_records": 4000, "member_trials": 2000,
            "nonmember_trials": 2000,
            "auc": 0.497, "auc_ci": [0.479, 0.515], "tpr_at_fpr": fprs,
            "tpr_at_fpr_ci": {"0.001": [0.001, 0.003], "0.01": [0.010, 0.021], "0.1": [0.095, 0.121]},
            "eta": -0.015, "eta_ci": eta_ci, "more_exposed": flag,
            "more_exposed_by": ["eta", "auc"] if flag else []}  # fmt: skip


def _results() -> dict:
    groups = [_row("income", "<=50K", [-0.035, 0.002], False), _row("native_country", "United-States",
              [0.012, 0.048], True)]  # fmt: skip
    columns = {"income": {"kind": "true class"}, "native_country": {"is_feature": True}}
    overall = _row("(all records)", "all", [-0.031, 0.001], None)
    return {"slices": {"attack": "lira-offline", "confidence": 0.95, "rule": "more exposed: ...",
                       "columns": columns, "overall": overall, "groups": groups}}  # fmt: skip


def _check(text: str) -> None:
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    assert "…" not in text
    for interval in ("[0.479, 0.515]", "[-0.031, 0.001]", "[0.012, 0.048]", "[9.5, 12.1]", "[0.1, 0.3]"):
        assert interval in text  # whole, on one line
    assert "2000/2000" in text and "(target)" in text and "(feature)" in text


def test_the_subgroups_table_fits_100_columns_on_a_terminal():
    console = Console(width=100, force_terminal=True, color_system=None, file=io.StringIO())
    print_slices(console, _results())
    _check(console.file.getvalue())


def test_the_subgroups_table_fits_100_columns_in_a_pipe(capsys):
    print_slices(Console(file=None, force_terminal=False), _results())
    _check(capsys.readouterr().out)
