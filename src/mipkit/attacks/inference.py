"""Attribute inference on released synthetic data: the attacks and the non-member baseline's guesses.

Threat model: the attacker knows some attributes of a target (``known``) and the synthetic table, and guesses
one ``secret`` attribute. Two attacks are run on the synthetic table:

* ``nearest``: the secret of the closest synthetic record on the known columns (mixed distance);
  confidence = minus that distance. This is anonymeter's ``InferenceEvaluator`` attack.
* ``model``: a model trained on the synthetic table (logistic regression for a categorical secret,
  ridge regression for a numeric one, on standardised + one-hot known columns); confidence = the largest
  class probability (categorical), none for numeric secrets.

An inference is a vulnerability only beyond what can be learned without the target's record. The
**non-member baseline** (Francis & Wagner, Sec. 4.3) runs the same analyses on the *original* table with the
targets removed, plus the most-frequent-value guess (the mode, numeric secrets too, as Francis & Wagner).
:func:`attribute_inference_guesses` draws the targets and returns every guess (:class:`InferenceGuesses`);
scoring them (precision, coverage, precision improvement, anonymeter's control-set risk) is the job of
:func:`mipkit.metrics.inference.measure_inference` (``docs/theory.md`` section 4), and
:func:`mipkit.workflows.audit_synthetic.measure.attribute_inference` does both.

Numeric secrets count as correct within ``tolerance`` times the range of the targets' values (default 5%;
Francis & Wagner's code), the same absolute error for attack and baseline; the most frequent value counts only
where exact (:func:`mipkit.metrics.inference.analysis_correct`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from mipkit._progress import Progress
from mipkit._random import RandomState, check_random_state
from mipkit._validation import MipkitValueError, check_positive_int, check_probability
from mipkit.data.attack_records import InferenceGuesses
from mipkit.data.neighbors import kneighbors
from mipkit.data.tables import TableSchema, encode_euclidean, encode_mixed

from .inference_refits import refit_guesses


# --------------------------------------------------------------------------------------------------
# analyses (each returns guesses and a confidence, higher = more confident)
# --------------------------------------------------------------------------------------------------
def nearest_neighbor_guesses(
    targets: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    secret: str,
    known: Sequence[str],
    schema: TableSchema,
    n_jobs: int = 2,
    progress: Progress | None = None,
    encoded: Callable[[pd.DataFrame], object] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Guess each target's secret as that of its nearest reference record on the known columns.

    ``encoded(df)``, if given, returns ``df``'s known columns encoded by :func:`encode_mixed` (a cache).
    """
    sub = schema.subset(known)
    enc = encoded or (lambda df: encode_mixed(df, sub))
    d, idx = kneighbors(
        enc(targets),
        enc(reference),
        k=1,
        metric="mixed",
        n_jobs=n_jobs,
        progress=progress,
    )
    return reference[secret].to_numpy()[idx[:, 0]], -d[:, 0]


def default_model(numeric: bool):
    """Logistic regression (categorical secret) or ridge regression (numeric secret)."""
    from sklearn.linear_model import LogisticRegression, Ridge

    return Ridge(alpha=1.0) if numeric else LogisticRegression(max_iter=300)


def model_guesses(
    targets: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    secret: str,
    known: Sequence[str],
    schema: TableSchema,
    numeric: bool,
    model_factory: Callable[[bool], object] = default_model,
    resamples: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit ``model_factory(numeric)`` on the reference table (known -> secret), predict for the targets.

    Features: :func:`mipkit.data.tables.encode_euclidean` of the known columns (standardised numerics with
    missing indicators, one-hot categories). Confidence: the largest predicted class probability, or 0 for
    every target (numeric secrets, or a model without ``predict_proba``). With ``resamples`` (shape
    ``(R, m)``, positions among the reference rows with a known secret), one fit per row of positions, on
    the features encoded once: guesses and confidences of shape ``(R, n_targets)``.
    """
    sub = schema.subset(known)
    keep = reference[secret].notna().to_numpy()
    X_ref = encode_euclidean(reference.loc[keep], sub)
    X_tgt = encode_euclidean(targets, sub)
    y = reference.loc[keep, secret].to_numpy()
    y = y.astype(float) if numeric else np.array([str(v) for v in y], dtype=object)
    if resamples is None:
        return _fit_predict(X_ref, y, X_tgt, numeric, model_factory)
    if _sparse_ok(model_factory(numeric)):  # the sparse features built once for every refit
        from scipy import sparse

        X_ref, X_tgt = sparse.csr_matrix(X_ref), sparse.csr_matrix(X_tgt)
    fits = [_fit_predict(X_ref, y, X_tgt, numeric, model_factory, rows=d) for d in resamples]
    return np.vstack([f[0] for f in fits]), np.vstack([f[1] for f in fits])


def _fit_predict(
    X_ref, y, X_tgt, numeric: bool, model_factory, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Guesses and confidences of ``model_factory(numeric)`` fitted on ``(X_ref, y)`` for ``X_tgt``.

    ``rows``: fit on these positions of the reference rows instead (a bootstrap resample, with repeats). A
    model of :func:`_weights_ok` is fitted on each distinct row once, weighted by its count: the same
    objective (a repeated row's loss counted as often as it repeats) on about 63% of the rows.
    """
    n, weight = X_tgt.shape[0], None
    model = model_factory(numeric)
    if rows is not None and _weights_ok(model):
        counts = np.bincount(rows, minlength=len(y))
        rows = np.flatnonzero(counts)
        weight = counts[rows].astype(float)
    if rows is not None:
        X_ref, y = X_ref[rows], y[rows]
    if not numeric:
        classes = np.unique(y)
        if classes.size == 1:
            return np.full(n, classes[0], dtype=object), np.ones(n)
    if _sparse_ok(model):  # one-hot columns are mostly zeros: the same fit, ~2.5x faster (audit-synthetic.md)
        from scipy import sparse

        X_ref, X_tgt = sparse.csr_matrix(X_ref), sparse.csr_matrix(X_tgt)
    # one BLAS thread: the products are small, and more threads on a busy machine cost 4x more than they save.
    # An attack's model need not converge: its guesses are what the attack guesses, and the precision
    # measured is that of this attack, so lbfgs stopping at max_iter is not worth a warning to the user.
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_ref, y) if weight is None else model.fit(X_ref, y, sample_weight=weight)
        guesses = model.predict(X_tgt)
        if not numeric and hasattr(model, "predict_proba"):
            conf = model.predict_proba(X_tgt).max(axis=1)
        else:
            conf = np.zeros(n)
    return guesses, conf


def _weights_ok(model: object) -> bool:
    """Whether ``model`` is scikit-learn's ``LogisticRegression`` or ``Ridge``, whose objective weighs each
    row's loss by its ``sample_weight`` (a row of weight ``k`` counts as ``k`` repeated rows)."""
    from sklearn.linear_model import LogisticRegression, Ridge

    return type(model) in (LogisticRegression, Ridge)


def _sparse_ok(model: object) -> bool:
    """Whether ``model`` is scikit-learn's ``LogisticRegression`` with the lbfgs solver, which fits sparse
    input with the same algorithm as dense input (other models may change solver or refuse it)."""
    from sklearn.linear_model import LogisticRegression

    return type(model) is LogisticRegression and model.get_params().get("solver", "lbfgs") == "lbfgs"


def most_frequent_guesses(reference: pd.DataFrame, *, secret: str, n: int, numeric: bool) -> np.ndarray:
    """The most frequent value of the secret (the mode, numeric secrets too), for every target.

    Francis & Wagner's protocol (their code's ``dfCol.mode()[0]``): among equally frequent numeric values the
    smallest. The same value for every target, it is scored as their code scores it: right only where it
    equals the truth (:func:`mipkit.metrics.inference.analysis_correct`; ``docs/audit-synthetic.md`` compares
    this with their published BankChurners figures).
    """
    col = reference[secret].dropna()
    if numeric:
        values, counts = np.unique(col.to_numpy(dtype=float), return_counts=True)
        return np.full(n, float(values[np.argmax(counts)]))
    text = col.map(str)
    return np.full(n, text.value_counts().index[0], dtype=object)


# --------------------------------------------------------------------------------------------------
# the attacks and the non-member baseline for one secret
# --------------------------------------------------------------------------------------------------
def _check_columns(secret: str, known: Sequence[str] | None, schema: TableSchema) -> list[str]:
    """The known columns (default: every other column), after checking both against the schema."""
    if secret not in schema.columns:
        raise MipkitValueError(
            f"The secret column {secret!r} is not in the table. Columns: {list(schema.columns)}."
        )
    known = [c for c in schema.columns if c != secret] if known is None else list(known)
    bad = [c for c in known if c not in schema.columns]
    if bad:
        raise MipkitValueError(f"Known column(s) {', '.join(map(repr, bad))} not in the table.")
    if secret in known:
        raise MipkitValueError(f"The secret column {secret!r} cannot also be a known column.")
    if not known:
        raise MipkitValueError("Attribute inference needs at least one known column.")
    return known


def _check_options(
    secret: str,
    known: Sequence[str] | None,
    schema: TableSchema,
    attacks: Sequence[str],
    n_attacks: int,
    tolerance: float,
) -> tuple[list[str], int, float]:
    """``(known, n_attacks, tolerance)`` after checking every option of attribute_inference_guesses."""
    known = _check_columns(secret, known, schema)
    unknown_attacks = [a for a in attacks if a not in ("nearest", "model")]
    if unknown_attacks or not attacks:
        raise MipkitValueError(
            f"The 'attacks' parameter must hold 'nearest' and/or 'model'. Got {list(attacks)}."
        )
    n_attacks = check_positive_int("n_attacks", n_attacks, owner="attribute_inference")
    return known, n_attacks, check_probability("tolerance", tolerance, owner="attribute_inference")


def _draw_targets(
    rng: np.random.Generator,
    original: pd.DataFrame,
    control: pd.DataFrame | None,
    secret: str,
    n_attacks: int,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Sorted row positions of the targets (at most all but one record with a known secret, so that the
    baseline has data) and of the control targets (None without a control record with a known secret)."""
    pool = np.flatnonzero(original[secret].notna().to_numpy())
    if pool.size < 2:
        raise MipkitValueError(f"The secret column {secret!r} has fewer than 2 non-missing values.")
    tgt_idx = np.sort(rng.choice(pool, size=min(n_attacks, pool.size - 1), replace=False))
    c_idx = None
    if control is not None:
        cpool = np.flatnonzero(control[secret].notna().to_numpy())
        if cpool.size:
            c_idx = np.sort(rng.choice(cpool, size=min(n_attacks, cpool.size), replace=False))
    return tgt_idx, c_idx


def _reference_tables(
    rng: np.random.Generator,
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    secret: str,
    tgt_idx: np.ndarray,
    match_size: bool,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows with a known secret the attacks learn from: the synthetic table's and the original's without
    the targets (the baseline's); with ``match_size``, a random subset of the synthetic rows no larger than
    the baseline's (like for like in size too)."""
    keep = np.ones(len(original), dtype=bool)
    keep[tgt_idx] = False
    rest = original.iloc[keep]
    syn = synthetic[synthetic[secret].notna()]
    rest_ok = rest[rest[secret].notna()]
    if match_size and len(syn) > len(rest_ok):
        syn = syn.iloc[np.sort(rng.choice(len(syn), size=len(rest_ok), replace=False))]
    return syn, rest_ok


class _Guesser:
    """``guesser(analysis, reference, targets)``: the guesses and confidences of ``"nearest"`` or
    ``"model"`` for one secret, each table's encoding of the known columns computed once."""

    def __init__(
        self, secret: str, known: list[str], schema: TableSchema, model_factory, n_jobs: int
    ) -> None:
        self.secret, self.known, self.schema = secret, known, schema
        self.model_factory, self.n_jobs = model_factory, n_jobs
        self.numeric = secret in schema.numeric
        self._sub = schema.subset(known)
        self._cache: dict[int, tuple[pd.DataFrame, object]] = {}

    def encoded(self, df: pd.DataFrame) -> object:
        if id(df) not in self._cache:
            self._cache[id(df)] = (df, encode_mixed(df, self._sub))  # keep df alive so its id stays unique
        return self._cache[id(df)][1]

    def __call__(
        self, analysis: str, reference: pd.DataFrame, targets: pd.DataFrame, resamples=None
    ) -> tuple[np.ndarray, np.ndarray]:
        common = {"secret": self.secret, "known": self.known, "schema": self.schema}
        if analysis == "nearest":
            return nearest_neighbor_guesses(
                targets, reference, **common, n_jobs=self.n_jobs, encoded=self.encoded
            )
        return model_guesses(
            targets, reference, **common, numeric=self.numeric, model_factory=self.model_factory,
            resamples=resamples,
        )  # fmt: skip


def _guesses(
    guess: _Guesser,
    original: pd.DataFrame,
    tables: tuple[pd.DataFrame, pd.DataFrame],
    control: pd.DataFrame | None,
    rows: tuple[np.ndarray, np.ndarray | None],
    attacks: Sequence[str],
    non_member_baseline: bool,
    tolerance: float,
    refits: tuple[int, np.random.Generator] = (0, None),
) -> InferenceGuesses:
    """Every attack on the targets (from the synthetic rows), its baseline (from the original's other
    rows), the most frequent value, the first attack on the control targets, and ``refits[0]`` refits of
    the model attack and its baseline on bootstrap resamples of their rows (drawn by ``refits[1]``)."""
    (syn, rest), (tgt_idx, c_idx), secret = tables, rows, guess.secret
    targets = original.iloc[tgt_idx]
    atk = {a: guess(a, syn, targets) for a in attacks}
    base = {a: guess(a, rest, targets)[0] for a in (attacks if non_member_baseline else ())}
    n_refits, rng = refits
    refit = {}
    for side, ref, names in (("attack", syn, atk), ("baseline", rest, base)):
        for a in [a for a in names if a == "model"] if n_refits else ():
            refit[f"{side}/{a}"] = refit_guesses(a, ref, targets, n_refits=n_refits, rng=rng, guess=guess)
    base["most_frequent"] = most_frequent_guesses(rest, secret=secret, n=tgt_idx.size, numeric=guess.numeric)
    c_truth = c_guess = None
    if c_idx is not None:
        c_t = control.iloc[c_idx]
        c_guess, _ = guess(attacks[0], syn, c_t)
        c_truth = c_t[secret].to_numpy()
    truth = targets[secret].to_numpy()
    targets_range = float(np.ptp(truth.astype(float))) if guess.numeric else 0.0
    return InferenceGuesses(
        secret=secret,
        known=tuple(guess.known),
        numeric=guess.numeric,
        tolerance=tolerance * targets_range,
        rows=tgt_idx,
        truth=truth,
        attacks=atk,
        baselines=base,
        control_rows=c_idx,
        control_truth=c_truth,
        control_guesses=c_guess,
        tolerance_share=tolerance if guess.numeric else None,
        refits=refit,
    )


def attribute_inference_guesses(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    secret: str,
    schema: TableSchema,
    known: Sequence[str] | None = None,
    control: pd.DataFrame | None = None,
    n_attacks: int = 500,
    tolerance: float = 0.05,
    attacks: Sequence[str] = ("nearest", "model"),
    model_factory: Callable[[bool], object] = default_model,
    random_state: RandomState = None,
    n_jobs: int = 2,
    non_member_baseline: bool = True,
    match_reference_size: bool = True,
    n_refits: int = 20,
) -> InferenceGuesses:
    """Run the attribute-inference attacks on ``secret`` and the non-member baseline; return the guesses.

    Targets: ``n_attacks`` records with a known secret drawn at random from the original (at most all but
    one, so that the baseline has data). Each attack guesses from the synthetic table; the baseline runs
    the same analyses on the original minus the targets, plus the most frequent value. With a control
    table, up to ``n_attacks`` control records are drawn and attacked by the first attack.

    Parameters
    ----------
    original, synthetic : DataFrame
        The training data of the generator and its synthetic output.
    secret : str
    schema : TableSchema
        From :func:`mipkit.data.tables.check_tables` on the tables of the audit.
    known : sequence of str, optional
        Default: every other column of the schema.
    control : DataFrame, optional
        Records from the population not used for training (for anonymeter's control-set risk).
    n_attacks : int
        Number of targets drawn from the original (and from the control table).
    tolerance : float
        Numeric secrets: a guess is right within ``tolerance`` times the range of the targets' values
        (Francis & Wagner's code; one extreme record elsewhere in the original does not widen it). The
        control targets are scored with the same absolute tolerance.
    attacks : sequence of {"nearest", "model"}
        Attacks to run; each is measured against the same analysis without the targets (like for like),
        and the first is also run on the control targets (anonymeter's control-set risk).
    model_factory : callable
        ``model_factory(numeric)`` returns the unfitted model of the ``"model"`` attack.
    random_state : None, int or Generator
        Seed of the target draws.
    non_member_baseline : bool
        Run each attack against the original minus the targets (the non-member baseline). ``False`` keeps
        only the most-frequent-value baseline: the work of anonymeter's ``InferenceEvaluator`` (attack
        on the synthetic data, control attack), e.g. for timing comparisons.
    match_reference_size : bool
        With the non-member baseline: when the synthetic table has more rows (with a known secret) than the
        original without the targets, the attacks use a random subset of that many synthetic rows, so that
        attack and baseline learn from equally many records. Otherwise a larger synthetic table (a generator
        can emit any number of rows) lets even a generator that copies nothing beat the baseline: on
        same-distribution tables with twice as many synthetic rows, 12.5% of audits found an "improvement"
        (``benchmarks/verdict_calibration_synthetic.py``).
    n_refits : int
        Refits of the model attack and of its baseline on bootstrap resamples of the rows they learn from
        (:func:`mipkit.attacks.inference_refits.refit_guesses`), whose spread the precision-improvement
        interval includes (``docs/theory.md`` section 4); 0: none, the interval resamples the targets only
        (too narrow: it holds each fitted analysis fixed).
    """
    known, n_attacks, tolerance = _check_options(secret, known, schema, attacks, n_attacks, tolerance)
    rng = check_random_state(random_state)
    rows = _draw_targets(rng, original, control, secret, n_attacks)
    match_size = non_member_baseline and match_reference_size
    tables = _reference_tables(rng, original, synthetic, secret, rows[0], match_size)
    guess = _Guesser(secret, known, schema, model_factory, n_jobs)
    refits = (check_positive_int("n_refits", n_refits, minimum=0, owner="attribute_inference"), rng)
    return _guesses(guess, original, tables, control, rows, attacks, non_member_baseline, tolerance, refits)
