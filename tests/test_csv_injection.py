"""CSV files mipkit writes are safe to open in a spreadsheet: formula cells get a leading ``'`` (OWASP).

The attack: a released table holds ``=HYPERLINK("http://x")``; opened in a spreadsheet, the cell runs. Every
CSV writer goes through :func:`mipkit.data.csv_out.to_safe_csv`; ``--raw-csv`` (``raw=True``) opts out.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

import mipkit.workflows.synthesize as wf
from mipkit.cli import main
from mipkit.data.csv_out import neutralise_formulas, to_safe_csv
from mipkit.synthesizers.certificate import uncertified

FORMULA = '=HYPERLINK("http://x")'


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "text": [FORMULA, "+1+cmd", "-x", "@SUM(A1)", "\tTAB", "\rCR", "plain", "-3.5", None],
            "number": [-1.5, -2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, np.nan],
            "count": [-1, 2, 3, 4, 5, 6, 7, 8, 9],
        }
    )


def _read(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


def test_formula_cells_get_a_quote_and_numbers_stay_numbers():
    cells = neutralise_formulas(_table())["text"].tolist()
    assert cells[:6] == ["'" + FORMULA, "'+1+cmd", "'-x", "'@SUM(A1)", "'\tTAB", "'\rCR"]
    got = _read(to_safe_csv(_table().drop(index=5)))  # (a bare carriage return splits a CSV row)
    assert got["text"].tolist()[:5] == ["'" + FORMULA, "'+1+cmd", "'-x", "'@SUM(A1)", "'\tTAB"]
    assert got["text"].tolist()[5:7] == ["plain", "-3.5"]  # text that is a plain number is a number
    assert got["number"].iloc[0] == -1.5 and got["count"].iloc[0] == -1  # negative numbers untouched
    assert pd.api.types.is_integer_dtype(got["count"])


def test_raw_csv_writes_the_cells_as_they_are():
    got = _read(to_safe_csv(_table(), raw=True))
    assert got["text"].iloc[0] == FORMULA and got["text"].iloc[2] == "-x"


def test_synthesize_neutralises_synthetic_csv_unless_raw(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}).to_csv(data, index=False)

    def fake_synthesize(data, config, **kwargs):  # the synthesizer is not what this test is about
        return wf.SynthesizeResult(config.method, _table(), uncertified(config.method), 0.0, 0.0, None)

    monkeypatch.setattr(wf, "synthesize", fake_synthesize)
    out = tmp_path / "syn"
    argv = ["synthesize", "--data", str(data), "--method", "ctgan", "--out", str(out), "--json"]
    assert main(argv) == 0
    safe = _read((out / "synthetic.csv").read_text())
    assert safe["text"].iloc[0] == "'" + FORMULA and safe["number"].iloc[0] == -1.5
    assert main([*argv, "--raw-csv"]) == 0
    capsys.readouterr()
    assert _read((out / "synthetic.csv").read_text())["text"].iloc[0] == FORMULA


def test_mipkit_reads_its_neutralised_cells_back_as_they_were(tmp_path):
    """A released synthetic.csv audited against the original compares cell for cell: read_table undoes
    the writer's quote, in cells and column names, and leaves other quotes alone."""
    from mipkit.data.io import read_table

    table = _table().drop(index=5).rename(columns={"count": "-count"})
    table.loc[8, "text"] = "'quoted"
    path = tmp_path / "safe.csv"
    path.write_text(to_safe_csv(table))
    assert "'=HYPERLINK" in path.read_text() and "'-count" in path.read_text()
    back = read_table(path)
    assert list(back.columns) == ["text", "number", "-count"]
    assert back["text"].tolist()[:4] == [FORMULA, "+1+cmd", "-x", "@SUM(A1)"]
    assert back["text"].iloc[7] == "'quoted"
