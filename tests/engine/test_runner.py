"""run_fits on the local backend: outputs equal direct scikit-learn fits, order, validation."""

from __future__ import annotations

import numpy as np
import pytest
from engine_problem import problem
from sklearn.linear_model import LogisticRegression, SGDClassifier

from mipkit._validation import MipkitValueError
from mipkit.engine import FitTask, run_fits
from mipkit.game import resolve_trainer


def _direct(X, y, tasks, query):
    """Independent computation: fit scikit-learn's LogisticRegression by hand for each task."""
    return np.stack(
        [
            LogisticRegression(C=1.0, max_iter=500, random_state=t.seed)
            .fit(X[t.train_idx], y[t.train_idx])
            .predict_proba(query)
            for t in tasks
        ]
    )


def test_outputs_equal_direct_fits_and_do_not_depend_on_workers():
    trainer, X, y, tasks = problem()
    tasks = tasks[:6]
    expected = _direct(X, y, tasks, X)
    one = run_fits(trainer, X, y, tasks, n_jobs=1)
    assert one.shape == (6, len(y), 3) and one.dtype == np.float64
    np.testing.assert_allclose(one, expected, rtol=1e-10, atol=1e-12)
    two = run_fits(trainer, X, y, tasks, n_jobs=2)
    np.testing.assert_array_equal(one, two)
    # results follow the order of the task list, not the completion order
    rev = run_fits(trainer, X, y, tasks[::-1], n_jobs=2)
    np.testing.assert_array_equal(rev, one[::-1])


def test_query_rows_and_a_quiet_engine(capsys):
    """The engine prints nothing: progress goes to the caller's callback, nothing to stdout or stderr."""
    trainer, X, y, tasks = problem()
    query = X[:17] + 0.1
    calls = []
    out = run_fits(
        trainer, X, y, tasks[:2], query_X=query, n_jobs=1, progress=lambda s, d, t: calls.append((s, d, t))
    )
    np.testing.assert_allclose(out, _direct(X, y, tasks[:2], query), rtol=1e-10, atol=1e-12)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert calls == [("model fits", 0, 2), ("model fits", 1, 2), ("model fits", 2, 2)]


def test_progress_counts_resumed_fits_and_is_silent_when_nothing_is_left(tmp_path):
    from mipkit.engine import Ledger

    trainer, X, y, tasks = problem()
    tasks = tasks[:4]
    with Ledger(tmp_path, "k") as ledger:
        run_fits(trainer, X, y, tasks[:3], ledger=ledger, n_jobs=1)
        calls = []
        record = lambda s, d, t: calls.append((s, d, t))  # noqa: E731
        run_fits(trainer, X, y, tasks, ledger=ledger, n_jobs=1, progress=record)
        assert calls == [("model fits", 3, 4), ("model fits", 4, 4)]
        calls.clear()
        run_fits(trainer, X, y, tasks, ledger=ledger, n_jobs=1, progress=record)
        assert calls == []  # every fit read back: nothing to report


def test_progress_argument_is_checked():
    trainer, X, y, tasks = problem()
    with pytest.raises(MipkitValueError, match="progress"):
        run_fits(trainer, X, y, tasks[:1], n_jobs=1, progress="yes")
    with pytest.raises(MipkitValueError, match="progress"):
        run_fits(trainer, X, y, tasks[:1], n_jobs=1, progress=True)


def test_a_fit_missing_a_class_still_gives_all_class_columns():
    trainer, X, y, _ = problem()
    idx = np.flatnonzero(y != 2)
    out = run_fits(trainer, X, y, [FitTask(0, idx, 3)], n_jobs=1)
    assert out.shape == (1, len(y), 3)
    np.testing.assert_array_equal(out[0, :, 2], 0.0)
    expected = LogisticRegression(max_iter=500, random_state=3).fit(X[idx], y[idx]).predict_proba(X)
    np.testing.assert_allclose(out[0, :, :2], expected, rtol=1e-10, atol=1e-12)


def test_training_order_is_used_as_given():
    """SGD without shuffling depends on the row order: run_fits must not sort train_idx."""
    _, X, y, _ = problem()
    spec = resolve_trainer("sklearn.linear_model.SGDClassifier", {"loss": "log_loss", "shuffle": False})
    idx = np.arange(0, 200)
    perm = np.random.default_rng(0).permutation(idx)
    out = run_fits(spec, X, y, [FitTask(0, idx, 1), FitTask(1, perm, 1)], n_jobs=1)
    for j, order in enumerate((idx, perm)):
        direct = SGDClassifier(loss="log_loss", shuffle=False, random_state=1).fit(X[order], y[order])
        np.testing.assert_allclose(out[j], direct.predict_proba(X), rtol=1e-10, atol=1e-12)
    assert not np.allclose(out[0], out[1])


def test_bad_inputs_are_refused():
    trainer, X, y, tasks = problem()
    with pytest.raises(MipkitValueError, match="backend"):
        run_fits(trainer, X, y, tasks, backend="spark")
    with pytest.raises(MipkitValueError, match="address"):
        run_fits(trainer, X, y, tasks, address="auto")
    with pytest.raises(MipkitValueError, match="twice"):
        run_fits(trainer, X, y, [tasks[0], tasks[0]])
    with pytest.raises(MipkitValueError, match="outside"):
        run_fits(trainer, X, y, [FitTask(0, np.array([0, len(y)]), 1)])
    with pytest.raises(MipkitValueError, match="integer class codes"):
        run_fits(trainer, X, y.astype(str), tasks)
    with pytest.raises(MipkitValueError, match="TrainerSpec"):
        run_fits(LogisticRegression(), X, y, tasks)
    with pytest.raises(MipkitValueError, match="n_jobs"):
        run_fits(trainer, X, y, tasks, n_jobs=0)
    with pytest.raises(MipkitValueError, match="boolean mask"):
        FitTask(0, y > 0, 1)


def test_a_failing_fit_is_reported_as_a_user_error():
    _, X, y, _ = problem()
    spec = resolve_trainer("sklearn.linear_model.LogisticRegression")
    one_class = np.flatnonzero(y == 0)
    with pytest.raises(MipkitValueError, match="task 5 failed"):
        run_fits(spec, X, y, [FitTask(5, one_class, 1)], n_jobs=1)


def test_ray_missing_gives_the_install_hint(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` raise ImportError
    trainer, X, y, tasks = problem()
    with pytest.raises(MipkitValueError, match=r"pip install mipkit\[distributed\]"):
        run_fits(trainer, X, y, tasks[:1], backend="ray")


def test_warnings_inside_fits_are_summarised_once(tmp_path):
    from mipkit.engine import FitWarning, Ledger

    _, X, y, _ = problem()
    spec = resolve_trainer("sklearn.neural_network.MLPClassifier", {"hidden_layer_sizes": [4], "max_iter": 1})
    tasks = [FitTask(0, np.arange(100), 1), FitTask(1, np.arange(100, 200), 2)]
    with Ledger(tmp_path, "k") as ledger:
        with pytest.warns(FitWarning, match="2 of 2 fits warned: ConvergenceWarning"):
            run_fits(spec, X, y, tasks, ledger=ledger, n_jobs=1)
        assert any("ConvergenceWarning" in w for w in ledger.meta(0)["warnings"])
