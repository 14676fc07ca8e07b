"""Every setting of the synthetic-data audit, checked when built: :class:`AuditSyntheticConfig`.

What depends on the tables (that the secrets, the known columns and the linkability columns are columns,
that ``singling_out_cols`` does not exceed their number) is checked by
:func:`mipkit.workflows.audit_synthetic.run.audit_synthetic` before anything is computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_interval,
    check_positive_int,
    check_probability,
)
from mipkit.attacks.linkability import check_aux_columns
from mipkit.data.neighbors.blocks import DEFAULT_BLOCK_ROWS
from mipkit.metrics.nnaa import INTERVALS
from mipkit.workflows._shape import VerbConfig
from mipkit.workflows.audit_synthetic.verdict import VERDICT_METRICS

__all__ = ["ATTACKS", "BACKENDS", "CHECKS", "AuditSyntheticConfig"]

#: The parts of the audit (``checks``).
CHECKS = ("nnaa", "dcr", "inference")
#: The attribute-inference attacks (``attacks``).
ATTACKS = ("nearest", "model")
#: Where the exact neighbour searches run (``backend``).
BACKENDS = ("local", "ray")
_OWNER = "audit_synthetic"


def _names(name: str, value: Any, *, allowed: Sequence[str] | None = None, empty: bool = True) -> tuple:
    """A list of names as a tuple without repeats (``allowed``: each one of them; ``empty``: may be empty)."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise MipkitValueError(
            f"The {name!r} parameter of {_OWNER} must be a list of names. Got {value!r} instead."
        )
    items = tuple(dict.fromkeys(str(v) for v in value))
    bad = [v for v in items if allowed is not None and v not in allowed]
    if bad or (not empty and not items):
        some = f"some of {', '.join(allowed)}" if allowed is not None else "at least one name"
        raise MipkitValueError(f"The {name!r} parameter of {_OWNER} must list {some}. Got {value!r} instead.")
    return items


def _optional_count(name: str, value: Any) -> int | None:
    return None if value is None else check_positive_int(name, value, owner=_OWNER)


@dataclass(frozen=True)
class AuditSyntheticConfig(VerbConfig):
    """The settings of :func:`mipkit.workflows.audit_synthetic.run.audit_synthetic`.

    Parameters
    ----------
    secrets : sequence of str
        Columns to attack by attribute inference (none: no inference).
    known : sequence of str, optional
        Columns the attacker knows (default: all other columns).
    n_attacks : int
        Inference targets per secret (and linkability targets).
    tolerance : float
        Numeric secrets: a guess is right within ``tolerance`` times the targets' range (the most frequent
        value only where exact), in [0, 1].
    metric : {"mixed", "euclidean"}
        Distance for NNAA and DCR (attribute inference always uses the mixed distance).
    max_nnaa_rows : int, optional
        Cap on the size of each of the four NNAA sets (subsampled at random; ``None``: the whole tables).
        The results say when a set was subsampled.
    max_dcr_rows : int, optional
        Cap on the training and holdout records scored by DCR (subsampled at random; ``None``: all).
    max_protection_rows : int, optional
        Cap on the synthetic records of the SDMetrics-style baseline / overfitting protection scores
        (medians and shares: 10,000 records pin them down to about +-0.01; ``None``: all).
    n_bootstrap : int
        Replicates of the record bootstrap (``nnaa_interval="record-bootstrap"`` only).
    checks : sequence of {"nnaa", "dcr", "inference"}
        The parts of the audit to run (default: all three; the results say which were not requested).
    attacks : sequence of {"nearest", "model"}
        Attribute-inference attacks, each measured against the same analysis without the targets.
    non_member_baseline : bool
        Run the attacks' analyses on the original without the targets (default); ``False`` keeps only the
        most-frequent-value baseline (anonymeter's amount of work).
    n_refits : int
        Refits of the model attack and of its baseline on bootstrap resamples of the rows they learn from,
        >= 0 (default 20): the precision-improvement interval holds the fitted models' variability
        (:func:`mipkit.metrics.inference.pi_bootstrap`, ``docs/theory.md`` section 4). ``0``: the
        targets-only interval, which holds both fits fixed (too narrow where a fit's guesses sit at the
        tolerance's edge; faster).
    nnaa_interval : {"auto", "neighbourhood", "jackknife", "record-bootstrap"}
        Interval of the NNAA terms and the privacy loss: ``"auto"`` (default) is the neighbourhood interval
        from 1,000 records per set and the jackknife below (:func:`mipkit.metrics.nnaa.interval_method`);
        ``"neighbourhood"``, the covariances of neighbouring terms (tight at 1,000 records per set and more,
        short of 95% on small discrete tables); ``"jackknife"``, the delete-one jackknife with neighbours
        recomputed (conservative, 1.5-2 times too wide; both :mod:`mipkit.metrics.nnaa_intervals`);
        ``"record-bootstrap"``, the record bootstrap with the neighbour structure held fixed (too narrow;
        kept for comparison). ``results.json`` names the method used.
    fail_above : float, optional
        The policy, in [-1, 1]: a finding when the interval of ``fail_metric`` lies above this value, a pass
        when it lies at or below it, inconclusive otherwise (:mod:`mipkit.workflows.audit_synthetic.verdict`).
        ``None``: no verdict, measurements only.
    fail_metric : {"headline", "privacy_loss", "dcr_auc", "inference_pi"}
        The metric of the policy: ``"headline"`` (default) is the family of tests of
        :mod:`mipkit.workflows.audit_synthetic.headline` (NNAA, exact and near copies, attribute inference),
        corrected for multiplicity.
    confidence : float
        Level of the verdict's intervals (and of the inference intervals), in (0, 1).
    include_data_summary : bool
        Also record the original's minimum and range of each numeric column in ``inputs["columns"]``. Off
        by default: they are values of real records.
    random_state : int, optional
        Seed of every random step (splits, subsamples, bootstrap, target draws), >= 0.
    n_jobs : int
        Threads of the neighbour searches, >= 1 (with ``backend="ray"`` and no ``address``: the CPUs of the
        local Ray instance).
    backend : {"local", "ray"}
        Where the exact neighbour searches run: on this machine's threads (default), or on Ray in blocks of
        at most ``block_rows`` query rows x ``block_rows`` reference rows, one Ray task each, merged exactly
        (:mod:`mipkit.data.neighbors.grid`; the same neighbours, distances and results as local).
    address : str, optional
        The Ray cluster to join (``backend="ray"`` only); default: a local Ray instance on loopback.
    block_rows : int
        Rows of each side of a block (``backend="ray"``); the memory one task holds follows from it
        (:func:`mipkit.data.neighbors.blocks.task_bytes`, stated in the results).
    singling_out : int, optional
        Predicates per singling-out mode (univariate and multivariate), scored against the non-member set
        (:mod:`mipkit.metrics.singling_out`); ``None`` (default): not run.
    singling_out_cols : int
        Conditions per multivariate predicate.
    linkability : pair of column lists, optional
        The two disjoint column subsets of the linkability attack (:mod:`mipkit.metrics.linkability`), run
        on ``n_attacks`` training and as many non-member targets; ``None`` (default): not run.
    linkability_neighbors : int
        Nearest synthetic records per half that may link the two halves.
    quality_target : str, optional
        A two-class column: adds the utility report (:func:`mipkit.synthesizers.quality_report.quality_report`
        tested on the holdout or control table) to the result (``quality``) and ``quality.html`` to the run
        folder. ``None`` (default): no utility report.
    id_column : str, optional
        A column that names the records (an identifier): left out of every comparison, and may be absent
        from the synthetic table (a synthesizer never releases it).
    """

    secrets: Sequence[str] = ()
    known: Sequence[str] | None = None
    n_attacks: int = 500
    tolerance: float = 0.05
    metric: str = "mixed"
    max_nnaa_rows: int | None = 20_000
    max_dcr_rows: int | None = 50_000
    max_protection_rows: int | None = 10_000
    n_bootstrap: int = 1000
    checks: Sequence[str] = CHECKS
    attacks: Sequence[str] = ATTACKS
    non_member_baseline: bool = True
    n_refits: int = 20
    nnaa_interval: str = "auto"
    fail_above: float | None = None
    fail_metric: str = "headline"
    confidence: float = 0.95
    include_data_summary: bool = False
    random_state: int | None = 0
    n_jobs: int = 2
    singling_out: int | None = None
    singling_out_cols: int = 3
    linkability: Sequence[Sequence[str]] | None = None
    linkability_neighbors: int = 1
    quality_target: str | None = None
    id_column: str | None = None
    backend: str = "local"
    address: str | None = None
    block_rows: int = DEFAULT_BLOCK_ROWS

    def check(self) -> None:
        """Refuse a bad setting with one line; lists become tuples."""
        self._check_columns()
        self._check_sizes()
        check_choice("metric", self.metric, ("mixed", "euclidean"), owner=_OWNER)
        self._check_backend()
        check_choice("nnaa_interval", self.nnaa_interval, INTERVALS, owner=_OWNER)
        check_choice("fail_metric", self.fail_metric, VERDICT_METRICS, owner=_OWNER)
        set_ = object.__setattr__
        set_(self, "checks", _names("checks", self.checks, allowed=CHECKS, empty=False))
        set_(self, "attacks", _names("attacks", self.attacks, allowed=ATTACKS, empty=False))
        if self.fail_above is not None:
            set_(self, "fail_above", check_interval("fail_above", self.fail_above, -1.0, 1.0,
                                                     closed="both", owner=_OWNER))  # fmt: skip
        set_(self, "confidence", check_probability("confidence", self.confidence, closed="neither",
                                                   owner=_OWNER))  # fmt: skip
        set_(self, "tolerance", check_probability("tolerance", self.tolerance, owner=_OWNER))
        for name in ("non_member_baseline", "include_data_summary"):
            if not isinstance(getattr(self, name), bool):
                raise MipkitValueError(
                    f"The {name!r} parameter of {_OWNER} must be True or False. Got {getattr(self, name)!r}."
                )

    def _check_columns(self) -> None:
        """Secrets without repeats and not among the known columns; two disjoint linkability subsets."""
        secrets = _names("secrets", self.secrets)
        if len(secrets) != len(self.secrets):
            raise MipkitValueError(f"A secret column is given twice: {list(self.secrets)}.")
        object.__setattr__(self, "secrets", secrets)
        if self.known is not None:
            known = _names("known", self.known)
            both = [s for s in secrets if s in known]
            if both:
                raise MipkitValueError(f"The column {both[0]!r} cannot be both a secret and a known column.")
            object.__setattr__(self, "known", known)
        if self.linkability is not None:
            lists = [_names("linkability", half) for half in _two_lists(self.linkability)]
            object.__setattr__(self, "linkability", check_aux_columns(lists, [c for h in lists for c in h]))
        for name in ("quality_target", "id_column"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise MipkitValueError(
                    f"The {name!r} parameter of {_OWNER} must be a column name. Got {value!r}."
                )
        if self.id_column is not None and self.id_column in (*secrets, *(self.known or ())):
            raise MipkitValueError(
                f"The id column {self.id_column!r} names the records: it cannot be a secret or a known "
                "column."
            )

    def _check_backend(self) -> None:
        """A backend of :data:`BACKENDS`; an address only for Ray; a block of at least one row."""
        check_choice("backend", self.backend, BACKENDS, owner=_OWNER)
        if self.address is not None and (
            self.backend != "ray" or not isinstance(self.address, str) or not self.address.strip()
        ):
            raise MipkitValueError(
                f"The 'address' parameter of {_OWNER} names a Ray cluster: it needs backend='ray' and a "
                f"non-empty address. Got address={self.address!r} with backend={self.backend!r}."
            )
        rows = check_positive_int("block_rows", self.block_rows, owner=_OWNER)
        object.__setattr__(self, "block_rows", rows)

    def _check_sizes(self) -> None:
        """Counts >= 1 (caps may be None), refits and a seed >= 0."""
        set_ = object.__setattr__
        for name in ("n_attacks", "n_bootstrap", "singling_out_cols", "linkability_neighbors", "n_jobs"):
            set_(self, name, check_positive_int(name, getattr(self, name), owner=_OWNER))
        for name in ("max_nnaa_rows", "max_dcr_rows", "max_protection_rows", "singling_out"):
            set_(self, name, _optional_count(name, getattr(self, name)))
        set_(self, "n_refits", check_positive_int("n_refits", self.n_refits, minimum=0, owner=_OWNER))
        if self.random_state is not None:
            set_(self, "random_state", check_positive_int("random_state", self.random_state, minimum=0,
                                                          owner=_OWNER))  # fmt: skip


def _two_lists(value: Any) -> tuple:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise MipkitValueError(
            f"The 'linkability' parameter of {_OWNER} must be two column lists. Got {value!r} instead."
        )
    return tuple(value)
