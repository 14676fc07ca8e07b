"""The result object of a model audit: ``to_dict`` is results.json, ``to_frame`` one row per attack with its
intervals, a readable ``repr`` and ``_repr_html_`` for notebooks, ``write`` a run folder."""

from __future__ import annotations

import dataclasses
import html
import json
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.datasets import make_classification

import mipkit
from mipkit.data.io import Dataset
from mipkit.report import read_results
from mipkit.stats import clopper_pearson
from mipkit.workflows.audit import AuditConfig, AuditResult

HEADER = {"schema_version", "kind", "mipkit_version", "created"}


def _table_cells(page: str) -> list[list[str]]:
    """The text of every row of the (single) HTML table, read with the standard library's parser."""

    class Rows(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th"):
                self.cell = ""

        def handle_endtag(self, tag):
            if tag in ("td", "th"):
                self.rows[-1].append(self.cell.strip())
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

    parser = Rows()
    parser.feed(page)
    return parser.rows


@pytest.fixture(scope="module")
def audit(tmp_path_factory):
    X, y = make_classification(100, 5, n_informative=3, random_state=3)
    ds = Dataset(X=X, y=y, feature_names=[f"x{i}" for i in range(5)], classes=np.array([0, 1]))
    cfg = AuditConfig(
        model="sklearn.ensemble.RandomForestClassifier",
        params={"n_estimators": 8},
        attacks=("loss", "rmia", "ltu"),
        n_models=4,
        seed=2,
        n_jobs=1,
        fprs=(0.01, 0.1),
    )
    out = tmp_path_factory.mktemp("audit")
    return out, mipkit.audit(ds, cfg, run_dir=out, report=False)


def test_to_dict_is_results_json_and_object_is_frozen(audit):
    out, res = audit
    assert isinstance(res, AuditResult) and res.run_dir == out
    stored = read_results(out)
    assert {k: v for k, v in stored.items() if k not in HEADER} == res.to_dict()
    assert list(res.to_dict()) == [k for k in stored if k not in HEADER]  # the schema's order
    assert "_frames" not in stored
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.run_dir = None
    # headline numbers are the strongest attack's; auc and TPR the largest over the score rows
    best = res.summaries[res.strongest_attack]
    assert res.eta == max(s.eta.eta for s in res.summaries.values()) == best.eta.eta
    # the headline interval is the cluster bootstrap's, simultaneous over the attacks; each attack keeps its
    # Clopper-Pearson interval (trials as independent) beside its cluster intervals
    assert res.eta_ci == res.headline["headline"]["eta_ci"] == stored["eta_ci"]
    cp = [e - 0.5 for e in clopper_pearson(best.eta.correct, best.eta.trials)]
    assert stored["attacks"][res.strongest_attack]["eta_ci"] == cp
    assert res.eta_ci[0] < cp[0] and res.eta_ci[1] > cp[1]  # wider: dependence and the choice of attack
    assert res.auc == max(s.auc for s in res.summaries.values())
    # the per-record table is an attribute (scores.parquet), not a private key
    pd.testing.assert_frame_equal(res.scores, pd.read_parquet(out / "scores.parquet"))
    assert set(res.trial_scores) == {"loss", "rmia-online", "rmia-offline"}
    assert res.trial_scores["loss"].shape == (4, 100)


def test_to_frame_one_row_per_attack_with_intervals(audit):
    _, res = audit
    frame = res.to_frame()
    assert list(frame.index) == ["loss", "rmia-online", "rmia-offline", "ltu"]
    stored = res.to_dict()["attacks"]
    for name in ("loss", "rmia-online", "rmia-offline"):
        row, a = frame.loc[name], stored[name]
        assert row["family"] == "score"
        assert row["auc"] == a["auc"] and [row["auc_low"], row["auc_high"]] == a["auc_ci"]
        assert row["eta"] == a["eta"] and [row["eta_low"], row["eta_high"]] == a["eta_ci"]
        for fpr in ("0.01", "0.1"):
            detail = a["tpr_at_fpr_detail"][fpr]
            assert row[f"tpr@{fpr}"] == detail["tpr"]
            # independent: the exact binomial interval on the true positives at that threshold
            lo, hi = clopper_pearson(detail["true_positives"], detail["members"])
            assert row[f"tpr@{fpr}_low"] == pytest.approx(lo) and row[f"tpr@{fpr}_high"] == pytest.approx(hi)
        # Hanley & McNeil by hand
        auc, n1, n0 = a["auc"], a["members"], a["nonmembers"]
        q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
        se = np.sqrt((auc * (1 - auc) + (n1 - 1) * (q1 - auc**2) + (n0 - 1) * (q2 - auc**2)) / (n1 * n0))
        assert row["auc_low"] == pytest.approx(max(0.0, auc - stats.norm.ppf(0.975) * se))
        assert row["trials"] == 400
    ltu = frame.loc["ltu"]
    assert ltu["family"] == "game" and np.isnan(ltu["auc"]) and np.isnan(ltu["eta"])
    assert ltu["accuracy"] == stored["ltu"]["accuracy"]
    assert [ltu["accuracy_low"], ltu["accuracy_high"]] == stored["ltu"]["accuracy_ci"]
    assert ltu["privacy"] == stored["ltu"]["privacy"]


def test_repr_and_html(audit):
    _, res = audit
    text = repr(res)
    assert text.startswith("AuditResult(") and res.strongest_attack in text
    assert f"{res.eta:.4f}" in text and "RandomForestClassifier" in text
    for name in ("loss", "rmia-online", "rmia-offline", "ltu"):
        assert name in text
    page = res._repr_html_()
    assert page.startswith("<div>") and page.count("<table") == 1
    assert html.escape(res._headline()) in page
    cells = _table_cells(page)
    header, body = cells[0], cells[2:]  # pandas writes the index name on a second header row
    assert [row[0] for row in body] == ["loss", "rmia-online", "rmia-offline", "ltu"]
    auc = body[0][header.index("auc")]
    assert float(auc) == pytest.approx(res.summaries["loss"].auc, abs=1e-4)


def test_html_escapes_names(audit):
    _, res = audit
    odd = dataclasses.replace(res, trainer={**res.trainer, "import_path": "pkg.<Evil&Model>"})
    page = odd._repr_html_()
    assert "<Evil&Model>" not in page and "&lt;Evil&amp;Model&gt;" in page


def test_write_reproduces_the_run_folder(audit, tmp_path):
    out, res = audit
    copy = res.write(tmp_path / "copy")
    assert json.loads((copy / "config.json").read_text()) == json.loads((out / "config.json").read_text())
    a, b = read_results(copy), read_results(out)
    assert {k: v for k, v in a.items() if k != "created"} == {k: v for k, v in b.items() if k != "created"}
    pd.testing.assert_frame_equal(pd.read_parquet(copy / "scores.parquet"), res.scores)
    assert (copy / "report.html").is_file() and not (out / "report.html").exists()
