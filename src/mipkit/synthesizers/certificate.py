"""The certificate a synthesizer carries: its guarantee as trade-off curves, and the risks they bound.

A :class:`SynthesisCertificate` states the mechanism record of the run (the steps that ran, for DP-WGAN-GP;
``ApproxDP(epsilon, delta)`` for AIM and MST, whose zCDP accounting their authors convert to it), the
neighbouring relation, and from the trade-off curves of both relations
(:func:`mipkit.accounting.tradeoff_curve` with ``neighbours=``; docs/theory.md section 3):

* ``epsilon``: the epsilon at ``delta`` for add/remove and for replace-one neighbours;
* ``eta``: MIP eta ``= adv / 2`` of the replace-one curve (the MIP game replaces a record);
* ``advantage``: the largest TPR - FPR of a membership test (add/remove: record in against record out);
* ``tpr_at_fpr``: ``1 - f(fpr)`` of the add/remove curve at a few FPRs.

An ``ApproxDP`` guarantee for add/remove gives replace-one by group privacy for two records (its epsilon is
stated at ``(1 + e^eps) delta``); a DP-WGAN-GP run is accounted for replace-one directly (its centred
release has the same noise multiplier under both relations; docs/synthesize.md). Non-private synthesizers
(CTGAN) get ``certified = False``. :func:`certificate_curve` rebuilds a curve from a certificate read back
from ``certificate.json``. :func:`with_domain` records where the column domain came from and composes a
domain estimated with differential privacy into the guarantee.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mipkit._random import OS_ENTROPY
from mipkit._validation import MipkitValueError

__all__ = [
    "CERTIFICATE_FPRS",
    "SynthesisCertificate",
    "certificate_curve",
    "certificate_from_dp",
    "certificate_from_record",
    "check_certificate_fields",
    "uncertified",
    "with_domain",
]

#: FPRs at which a certificate lists the certified TPR.
CERTIFICATE_FPRS: tuple[float, ...] = (0.001, 0.01, 0.05, 0.1)
RELATIONS = ("add_remove", "replace_one")


@dataclass(frozen=True)
class SynthesisCertificate:
    """What a synthesizer's privacy guarantee certifies (module docstring); JSON through :meth:`to_dict`.

    Attributes
    ----------
    method : str
    certified : bool
        False for a non-private synthesizer (every other field is then empty).
    delta : float or None
    neighbours : str or None
        The relation of the headline ``epsilon`` (the target's).
    mechanism : dict
        The record of the guarantee as stated (``tradeoff_curve(record, neighbours=...)`` gives both curves).
    epsilon : dict
        Relation -> epsilon at ``deltas[relation]``.
    deltas : dict
        Relation -> delta of that epsilon (``delta``, except for replace-one by group privacy).
    eta, advantage : float or None
    tpr_at_fpr : dict
        FPR (as text) -> certified TPR (add/remove).
    calibration : dict
        How the noise was calibrated (the target, the noise multiplier, the re-check).
    details : dict
        Run details (steps, sample rate, sensitivities, where the domain came from, ...).
    notes : list of str
    noise_source : str or None
        Where the protective randomness (noise, batches, private selections) came from: ``"os-entropy"``
        (the premise of the guarantee) or ``"seeded: ..."`` (an explicit noise seed: not private against
        anyone who holds it); None when nothing is certified.
    """

    method: str
    certified: bool
    delta: float | None = None
    neighbours: str | None = None
    mechanism: dict = field(default_factory=dict)
    epsilon: dict = field(default_factory=dict)
    deltas: dict = field(default_factory=dict)
    eta: float | None = None
    advantage: float | None = None
    tpr_at_fpr: dict = field(default_factory=dict)
    calibration: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    noise_source: str | None = None

    @property
    def headline_epsilon(self) -> float | None:
        """Epsilon at ``delta`` for the headline relation."""
        return self.epsilon.get(self.neighbours) if self.neighbours else None

    def summary(self) -> dict:
        """``{"eta", "advantage", "tpr_at_fpr"}``: the ``certified`` field of ``mipkit synthesize --json``."""
        if not self.certified:
            return {"eta": None, "advantage": None, "tpr_at_fpr": {}}
        return {"eta": self.eta, "advantage": self.advantage, "tpr_at_fpr": dict(self.tpr_at_fpr)}

    def to_dict(self) -> dict:
        from mipkit.report.results import to_jsonable

        return to_jsonable({"kind": "synthesis-certificate", **asdict(self)})

    @classmethod
    def from_dict(cls, d: dict) -> SynthesisCertificate:
        """The certificate ``d`` describes, checked whole (:func:`check_certificate_fields`; a certified one's
        trade-off curve is built from its mechanism record), or one :class:`MipkitValueError` line."""
        if not isinstance(d, dict) or "method" not in d or "certified" not in d:
            raise MipkitValueError(
                "This is not a synthesis certificate: it has no 'method' and 'certified' keys."
            )
        check_certificate_fields(d)
        keys = set(cls.__dataclass_fields__)
        cert = cls(**{k: v for k, v in d.items() if k in keys})
        if cert.certified:
            try:
                certificate_curve(cert, "add_remove")
            except MipkitValueError as err:
                raise MipkitValueError(f"The certificate's mechanism record is not valid: {err}") from None
            except (TypeError, ValueError, KeyError, AttributeError, OverflowError):
                raise MipkitValueError(
                    "The certificate's mechanism record is not one mipkit wrote; use the certificate.json "
                    "of `mipkit synthesize`."
                ) from None
        return cert

    def write(self, path: str | Path) -> Path:
        """Write ``certificate.json`` (atomic)."""
        from mipkit.report.results import write_json_atomic

        p = Path(path)
        write_json_atomic(p, self.to_dict())
        return p

    @classmethod
    def read(cls, path: str | Path) -> SynthesisCertificate:
        """Read a certificate written by :meth:`write`, checked whole (:meth:`from_dict`; one-line errors
        naming the file for a bad one)."""
        from mipkit.data.json_input import read_json_file

        try:
            return cls.from_dict(read_json_file(path, "certificate"))
        except MipkitValueError as err:
            raise MipkitValueError(f"{path}: {err}") from None


def _fail(field: str, want: str, value: Any) -> None:
    raise MipkitValueError(
        f"The certificate's {field!r} must be {want}. Got {value!r}; is it a synthesizer's certificate.json?"
    )


def _number(field: str, value: Any, low: float, high: float) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high
    if not ok:
        _fail(field, f"a number in [{low:g}, {high:g}]", value)


def check_certificate_fields(d: dict) -> None:
    """Refuse a certificate whose fields are missing, of the wrong type or out of range
    (``"certified": "no"``, a negative epsilon, a text eta, a delta of 0 or 1, an empty mechanism) or of
    another kind: what it states is what the audit checks the release against.
    :meth:`SynthesisCertificate.from_dict` then rebuilds the certified trade-off curve from the mechanism
    record."""
    kind = d.get("kind", "synthesis-certificate")
    if kind != "synthesis-certificate":
        raise MipkitValueError(
            f"This is a {kind!r} file, not a synthesis certificate (kind 'synthesis-certificate')."
        )
    if not isinstance(d["method"], str) or not d["method"]:
        _fail("method", "the synthesizer's name", d["method"])
    if not isinstance(d["certified"], bool):
        _fail("certified", "true or false", d["certified"])
    for name in ("mechanism", "epsilon", "deltas", "tpr_at_fpr", "calibration", "details"):
        if not isinstance(d.get(name, {}), dict):
            _fail(name, "an object", d[name])
    if not isinstance(d.get("notes", []), list):
        _fail("notes", "a list", d["notes"])
    if not d["certified"]:
        return
    missing = [k for k in ("delta", "neighbours", "mechanism", "epsilon") if k not in d]
    if missing:
        raise MipkitValueError(f"The certificate has no {', '.join(map(repr, missing))}; it is not complete.")
    _number("delta", d["delta"], 0.0, 1.0)
    if d["delta"] in (0, 1):
        _fail("delta", "in (0, 1)", d["delta"])
    if not d["mechanism"]:
        raise MipkitValueError("The certificate's 'mechanism' is empty: it certifies nothing.")
    if d.get("neighbours") not in (None, *RELATIONS):
        _fail("neighbours", f"one of {list(RELATIONS)}", d["neighbours"])
    for relation, eps in (d.get("epsilon") or {}).items():
        _number(f"epsilon[{relation}]", eps, 0.0, math.inf)
    for relation, delta in (d.get("deltas") or {}).items():
        _number(f"deltas[{relation}]", delta, 0.0, 1.0)
    _number("eta", d.get("eta"), 0.0, 0.5)
    _number("advantage", d.get("advantage"), 0.0, 1.0)
    for fpr, tpr in (d.get("tpr_at_fpr") or {}).items():
        _number(f"tpr_at_fpr[{fpr}]", tpr, 0.0, 1.0)


def _curve(record: Any, relation: str) -> Any:
    from mipkit.accounting import tradeoff_curve

    return tradeoff_curve(record, neighbours=relation)


@functools.lru_cache(maxsize=32)
def _cached_curve(record_json: str, relation: str) -> Any:
    from mipkit.accounting import mechanism_from_dict

    return _curve(mechanism_from_dict(json.loads(record_json)), relation)


def certificate_curve(certificate: SynthesisCertificate, relation: str = "add_remove") -> Any:
    """The trade-off curve that certifies ``relation`` (rebuilt from the stored record; cached)."""
    if not certificate.certified:
        raise MipkitValueError(f"The {certificate.method!r} synthesizer carries no privacy guarantee.")
    if relation not in RELATIONS:
        raise MipkitValueError(f"The relation must be one of {list(RELATIONS)}. Got {relation!r} instead.")
    return _cached_curve(json.dumps(certificate.mechanism, sort_keys=True), relation)


SEEDED_NOTE = (
    "The noise was drawn from a given noise seed (reproducible): the guarantee does not hold against anyone "
    "who holds that seed."
)
DOMAIN_FROM_DATA_NOTE = (
    "The column domain (numeric ranges, category lists) was read from the training data; the guarantee "
    "assumes it is public. Pass a domain to avoid this."
)


def _fill(
    method: str,
    record: Any,
    delta: float,
    neighbours: str,
    deltas: dict | None = None,
    *,
    calibration: dict | None,
    details: dict | None,
    notes: list[str],
    noise_source: str = OS_ENTROPY,
) -> SynthesisCertificate:
    """The certificate of ``record``'s guarantee, from its trade-off curves for both relations.

    Parameters
    ----------
    method : str
        The synthesizer.
    record : Mechanism
        The mechanism record of the guarantee (stored as its dict).
    delta : float
        The delta of the epsilons.
    neighbours : str
        The relation of the headline epsilon.
    deltas : dict, optional
        Relation -> delta of its epsilon where it is not ``delta``.
    calibration, details : dict or None
        Copied into the certificate (None: empty).
    notes : list of str
        The certificate's notes; one more where ``details["domain_source"]`` is ``"data"`` (the column
        domain was read from the training data, so the guarantee assumes it public), and one where
        ``noise_source`` is not ``"os-entropy"``.
    noise_source : str
        Where the protective randomness came from.

    Returns
    -------
    SynthesisCertificate
        A certified one.
    """
    from mipkit.accounting import eta_from_curve

    if (details or {}).get("domain_source") == "data":
        notes = [*notes, DOMAIN_FROM_DATA_NOTE]
    if noise_source != OS_ENTROPY:
        notes = [*notes, SEEDED_NOTE]
    curves = {r: _curve(record, r) for r in RELATIONS}
    deltas = dict.fromkeys(RELATIONS, delta) | dict(deltas or {})
    add, rep = curves["add_remove"], curves["replace_one"]
    return SynthesisCertificate(
        method=method,
        certified=True,
        delta=delta,
        neighbours=neighbours,
        mechanism=record.to_dict(),
        epsilon={r: float(curves[r].epsilon_for_delta(deltas[r])) for r in RELATIONS},
        deltas=deltas,
        eta=float(eta_from_curve(rep)),
        advantage=float(add.advantage()),
        tpr_at_fpr={f"{a:g}": float(add.tpr(a)) for a in CERTIFICATE_FPRS},
        calibration=dict(calibration or {}),
        details=dict(details or {}),
        notes=notes,
        noise_source=noise_source,
    )


def certificate_from_record(
    *,
    method: str,
    record: Any,
    delta: float,
    neighbours: str,
    calibration: dict | None = None,
    details: dict | None = None,
    notes: list[str] | None = None,
    noise_source: str = OS_ENTROPY,
) -> SynthesisCertificate:
    """Certificate of a run of heterogeneous subsampled Gaussian steps (both relations, one set of ratios)."""
    return _fill(
        method, record, delta, neighbours, calibration=calibration, details=details,
        notes=list(notes or []), noise_source=noise_source,
    )  # fmt: skip


def certificate_from_dp(
    *,
    method: str,
    epsilon: float,
    delta: float,
    calibration: dict | None = None,
    details: dict | None = None,
    noise_source: str = OS_ENTROPY,
) -> SynthesisCertificate:
    """Certificate of an add/remove ``(epsilon, delta)``-DP synthesizer; replace-one by group privacy."""
    from mipkit.accounting import ApproxDP

    add = ApproxDP(epsilon=epsilon, delta=delta)
    rep_delta = min((1.0 + math.exp(epsilon)) * delta, 1.0 - 1e-12)
    return _fill(
        method, add, delta, "add_remove", {"replace_one": rep_delta},
        calibration=calibration, details=details, notes=[], noise_source=noise_source,
    )  # fmt: skip


def uncertified(method: str, *, details: dict | None = None) -> SynthesisCertificate:
    """The certificate of a non-private synthesizer: nothing is certified."""
    return SynthesisCertificate(
        method=method,
        certified=False,
        details=dict(details or {}),
        notes=[f"{method} is not differentially private: no bound on any privacy risk is certified."],
    )


def with_domain(
    certificate: SynthesisCertificate, domain: dict, record: Any = None, notes: list[str] | None = None
) -> SynthesisCertificate:
    """``certificate`` with where its domain came from (``details["domain"]``) and, for a domain estimated
    with differential privacy (``record``: its ``PureDP`` / ``ApproxDP`` guarantee), the two releases
    composed: an ``ApproxDP`` synthesizer (AIM, MST) by basic composition (the epsilons and the deltas add
    up), any other (DP-WGAN-GP) through the PLD of ``Composed([record, synthesizer's record])``."""
    from dataclasses import replace

    from mipkit.accounting import ApproxDP, Composed, mechanism_from_dict

    details = {**certificate.details, "domain": dict(domain), "domain_source": domain.get("source")}
    notes = [*certificate.notes, *(notes or [])]
    if record is None or not certificate.certified:
        return replace(certificate, details=details, notes=notes)
    part = mechanism_from_dict(certificate.mechanism)
    extra = float(getattr(record, "delta", 0.0))
    details["domain"]["synthesizer"] = {"epsilon": certificate.headline_epsilon, "delta": certificate.delta}
    if isinstance(part, ApproxDP) and part.neighbours == "add_remove":
        cert = certificate_from_dp(
            method=certificate.method,
            epsilon=part.epsilon + record.epsilon,
            delta=part.delta + extra,
            calibration=certificate.calibration,
            details=details,
        )
        return replace(cert, notes=notes)
    total_delta = float(certificate.delta) + extra
    return _fill(
        certificate.method, Composed([record, part]), total_delta, certificate.neighbours,
        calibration=certificate.calibration, details=details, notes=notes,
    )  # fmt: skip
