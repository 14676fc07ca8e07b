"""The settings of :func:`mipkit.audit_scores`: what is measured, and which columns of a predictions table
hold what.

:class:`MeasureConfig` holds the measurement settings that ``audit_scores`` and ``audit_fitted`` share (the
attacks, FPRs, base rates, intervals, seed and policy); :class:`AuditScoresConfig` adds the column mapping
of a vendor's predictions file (the ``--...-column`` flags of ``mipkit audit-scores``). Both are checked
when built: a config that exists is a valid one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from mipkit._validation import MipkitValueError
from mipkit.metrics.roc import DEFAULT_BASE_RATES, DEFAULT_FPRS
from mipkit.workflows._shape import VerbConfig
from mipkit.workflows.audit.config import check_measurement
from mipkit.workflows.audit.verdict import check_policy

__all__ = ["OFFERED_ATTACKS", "AuditScoresConfig", "MeasureConfig", "names"]

OFFERED_ATTACKS = ("loss", "lira", "rmia")
"""The attacks an audit of one model's outputs runs: LTU needs the training procedure, not one model."""


def names(value: Any) -> tuple[str, ...]:
    """A tuple of names from a sequence or a comma-separated string, stripped, empty ones dropped, each
    once."""
    items = [value] if isinstance(value, str) else list(value or ())
    return tuple(dict.fromkeys(n.strip() for item in items for n in str(item).split(",") if n.strip()))


@dataclass(frozen=True)
class MeasureConfig(VerbConfig):
    """The measurement settings of an audit of one model's outputs (``audit_scores``, ``audit_fitted``).

    Attributes
    ----------
    attacks : tuple of str
        One or more of :data:`OFFERED_ATTACKS`. Attacks the outputs do not allow (LiRA and RMIA without
        reference models) are skipped, with the reason, in the result; when none of them is left, the audit
        is refused.
    fprs : tuple of float
        False-positive rates in (0, 1) at which the TPR is measured.
    base_rates : tuple of float
        Membership base rates in (0, 1) for the precision.
    confidence : float
        Level of every interval, in (0, 1).
    n_boot : int
        Replicates of the record bootstrap, in [100, 100000].
    seed : int
        Seeds the cross-fitting, the bootstrap, the subgroups and (``audit_fitted``) the reference models.
    fail_above : float, optional
        A policy: the verdict is a finding when the metric's interval lies above it.
    fail_metric : str
        The policy's metric: ``eta``, ``auc`` or ``tpr@<fpr>`` (an FPR of ``fprs``).
    """

    attacks: tuple[str, ...] = ("loss", "lira", "rmia")
    fprs: tuple[float, ...] = DEFAULT_FPRS
    base_rates: tuple[float, ...] = DEFAULT_BASE_RATES
    confidence: float = 0.95
    n_boot: int = 1000
    seed: int = 0
    fail_above: float | None = None
    fail_metric: str = "eta"

    owner: ClassVar[str] = "audit_scores"

    def check(self) -> None:
        check_measurement(
            fprs=tuple(self.fprs),
            base_rates=self.base_rates,
            confidence=self.confidence,
            n_boot=self.n_boot,
            seed=self.seed,
            owner=self.owner,
        )
        attacks = tuple(a.lower() for a in names(self.attacks))
        if not attacks or any(a not in OFFERED_ATTACKS for a in attacks):
            raise MipkitValueError(
                f"The 'attacks' parameter of {self.owner} must be one or more of "
                f"{', '.join(OFFERED_ATTACKS)}. Got {', '.join(attacks) or 'nothing'} instead."
            )
        fprs = tuple(float(f) for f in self.fprs)
        metric = check_policy(self.fail_metric, self.fail_above, fprs) or "eta"
        object.__setattr__(self, "attacks", attacks)
        object.__setattr__(self, "fprs", fprs)
        object.__setattr__(self, "base_rates", tuple(float(b) for b in self.base_rates))
        object.__setattr__(self, "confidence", float(self.confidence))
        object.__setattr__(self, "n_boot", int(self.n_boot))
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(self, "fail_above", None if self.fail_above is None else float(self.fail_above))
        object.__setattr__(self, "fail_metric", metric)

    def measure_settings(self) -> dict[str, Any]:
        """The measurement settings alone, JSON-able (``settings`` of ``results.json``, ``config.json``)."""
        values = self.to_dict()
        return {f.name: values[f.name] for f in fields(MeasureConfig)}


@dataclass(frozen=True)
class AuditScoresConfig(MeasureConfig):
    """Every setting of :func:`mipkit.audit_scores`: the measurement (:class:`MeasureConfig`) and which
    columns of a predictions table hold what (unused when the predictions are given as arrays).

    Attributes
    ----------
    id_column, label_column, member_column : str
        The record's id (unique, non-missing), its true class and its membership.
    member_value : str, optional
        The members' value of ``member_column`` (its one other value marks the non-members); default 1/0.
    score_column : str, optional
        One score per record: the probability of the positive class of a binary model.
    positive_class : str, optional
        The label value ``score_column`` is the probability of (default: ``1``, ``true`` or ``yes`` when the
        labels are such a pair).
    proba_columns : tuple of str
        Probability columns, one per class: ``class=column``, or a column whose name ends with its class.
    slice_by : tuple of str
        Columns whose subgroups are measured (the true class always is).
    """

    id_column: str = "id"
    label_column: str = "label"
    member_column: str = "member"
    member_value: str | None = None
    score_column: str | None = None
    positive_class: str | None = None
    proba_columns: tuple[str, ...] = ()
    slice_by: tuple[str, ...] = ()

    def check(self) -> None:
        super().check()
        for name in ("id_column", "label_column", "member_column"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise MipkitValueError(
                    f"The {name!r} parameter of audit_scores must name a column. Got {value!r} instead."
                )
            object.__setattr__(self, name, value.strip())
        for name in ("member_value", "score_column", "positive_class"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, str(value).strip())
        object.__setattr__(self, "proba_columns", names(self.proba_columns))
        object.__setattr__(self, "slice_by", names(self.slice_by))
        if self.score_column is not None and self.proba_columns:
            raise MipkitValueError(
                "Give the model's outputs as one score column or as probability columns, not both."
            )
