"""DP-SGD to a risk target: :class:`DPSGDClassifier`, a scikit-learn classifier that carries its certificate.

The network and the training loop are :class:`~mipkit.trainers.TorchMLPClassifier`'s DP-SGD (Abadi et al.
2016, as Opacus implements it and tested step for step against Opacus): Poisson sampling at rate
``q = batch_size / N``, per-sample clipping to ``max_grad_norm``, Gaussian noise of standard deviation
``noise_multiplier * max_grad_norm`` on the clipped sum, ``T = epochs * ceil(N / batch_size)`` steps, with
``N`` the number of training rows (or the public ``dataset_size``). Privacy is given either as the noise
multiplier or as a risk target (MIP eta, advantage, TPR at FPR, success, precision or epsilon;
:mod:`mipkit.accounting.targets`), which :func:`mipkit.accounting.calibrate_noise` turns into the least noise
multiplier for *that* ``q`` and ``T`` on mipkit's pessimistic PLD (docs/theory.md section 3), before any
gradient is computed. After training, the ``q`` and ``T`` that ran are checked against the ones accounted
for, and the fitted estimator holds a :class:`DPSGDCertificate`.

**Which neighbours.** ``SubsampledGaussian`` is accounted for add-or-remove-one neighbours (the usual DP
convention, and what Opacus reports). The membership game that ``mipkit audit`` plays trains every model on
a random half of *fixed* size: a member is replaced by a non-member, i.e. replace-one neighbours, whose
curve is lower (riskier). ``neighbours="replace_one"`` (the default) calibrates and certifies for that
game; ``"add_remove"`` for the add/remove convention. :meth:`DPSGDCertificate.curve` gives either.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sklearn.base import clone

from mipkit._defaults import DEFAULT_FPRS
from mipkit._progress import Progress
from mipkit._random import OS_ENTROPY, noise_source
from mipkit._validation import MipkitValueError, check_choice, check_delta, check_positive, check_positive_int
from mipkit.accounting.mechanisms import dpsgd_schedule
from mipkit.game.trainers import register_trainer
from mipkit.trainers._params import store_params
from mipkit.trainers.torch_mlp import TorchMLPClassifier

__all__ = ["NEIGHBOURS", "DPSGDCertificate", "DPSGDClassifier", "dpsgd_record"]

#: The neighbouring relations a certificate can be stated for (module docstring).
NEIGHBOURS: tuple[str, ...] = ("replace_one", "add_remove")

_PREMISE = {
    "replace_one": (
        "one training record replaced by another, the number of rows fixed: the membership game of "
        "mipkit audit, whose models train on random halves of fixed size"
    ),
    "add_remove": "one training record added or removed: the usual DP convention, as Opacus reports it",
}


def dpsgd_record(
    noise_multiplier: float, sample_rate: float, steps: int, neighbours: str = "add_remove"
) -> Any:
    """The accounting record of a DP-SGD run: ``SubsampledGaussian(z, q, T)`` for the given neighbours.

    Parameters
    ----------
    noise_multiplier, sample_rate, steps
        What ran: noise standard deviation over the clipping norm, Poisson rate, number of steps.
    neighbours : {"add_remove", "replace_one"}
        The neighbouring relation to account for.
    """
    from mipkit.accounting import SubsampledGaussian

    rel = check_choice("neighbours", neighbours, NEIGHBOURS, owner="dpsgd_record")
    return SubsampledGaussian(
        noise_multiplier=float(noise_multiplier),
        sample_rate=float(sample_rate),
        steps=int(steps),
        neighbours=rel,
    )


def _target(risk_target: Any, delta: float, owner: str) -> Any:
    """A :class:`~mipkit.accounting.targets.RiskTarget` from a target or its dict (``to_dict`` form)."""
    from mipkit.accounting import RiskTarget, target_from_dict

    if isinstance(risk_target, RiskTarget):
        return risk_target
    if isinstance(risk_target, Mapping):
        d = dict(risk_target)
        if d.get("name") == "epsilon" and d.get("delta") is None:
            d["delta"] = delta  # an epsilon target without its own delta uses the certificate's
        return target_from_dict(d)
    raise MipkitValueError(
        f"The 'risk_target' parameter of {owner} must be a risk target (TprAtFprTarget, ...) or its dict, "
        f"e.g. {{'name': 'tpr-at-fpr', 'fpr': 0.01, 'value': 0.05}}. Got {risk_target!r} instead."
    )


@functools.lru_cache(maxsize=64)
def _calibrated(target_key: str, sample_rate: float, steps: int, neighbours: str) -> Any:
    """The calibration of a target (JSON key) for one ``(q, T, relation)``; cached per process, so the
    fits of an audit calibrate once per worker."""
    import json

    from mipkit.accounting import calibrate_noise, dpsgd_family, target_from_dict

    target = target_from_dict(json.loads(target_key))
    return calibrate_noise(dpsgd_family(sample_rate=sample_rate, steps=steps, neighbours=neighbours), target)


@functools.lru_cache(maxsize=64)
def _risks(
    record_key: str, neighbours: str, delta: float, fprs: tuple[float, ...], grid: float | None
) -> dict:
    """Certified MIP eta (replace-one), and advantage, TPR at each FPR and epsilon at ``delta`` for
    ``neighbours``, of a DP-SGD record (cached)."""
    import json

    from mipkit.accounting import eta_from_curve, tradeoff_curve

    d = json.loads(record_key)
    curve = tradeoff_curve(
        dpsgd_record(d["noise_multiplier"], d["sample_rate"], d["steps"], neighbours),
        value_discretization_interval=grid,
    )
    return {
        "eta": float(eta_from_curve(curve)),
        "advantage": float(curve.advantage()),
        "tpr_at_fpr": {f"{f:g}": float(curve.tpr_at_fpr(f)) for f in fprs},
        "epsilon": float(curve.epsilon_for_delta(delta)),
        "delta": float(delta),
    }


@dataclass(frozen=True)
class DPSGDCertificate:
    """What a fitted :class:`DPSGDClassifier` guarantees: the DP-SGD record that ran and its certified risks.

    The protocol every certified trainer offers the audit: :attr:`eta`, :meth:`to_dict` and, as an f-DP
    guarantee, :attr:`tradeoff_curve` (the replace-one curve; :meth:`curve` gives either relation). Risks
    are upper bounds from a pessimistic PLD (docs/theory.md section 3); the premise is the neighbouring
    relation.

    Attributes
    ----------
    noise_multiplier, sample_rate, steps
        What ran (``sigma``, ``q``, ``T``).
    max_grad_norm : float
        Clipping norm ``c`` (the noise standard deviation is ``sigma c``).
    n_train : int
        Rows trained on; ``dataset_size`` the ``N`` of ``q = batch_size / N``.
    neighbours : str
        Relation of :attr:`certified` (``"replace_one"`` or ``"add_remove"``).
    delta : float
        Delta of the certified epsilon.
    certified : dict
        ``{"eta", "advantage", "tpr_at_fpr": {fpr: bound}, "epsilon", "delta"}``: advantage, TPR bounds and
        epsilon for :attr:`neighbours`; ``eta`` is MIP eta, half the advantage of the replace-one curve
        (the MIP game's relation, whatever :attr:`neighbours`; :func:`mipkit.accounting.eta_from_curve`).
    calibration : dict or None
        ``Calibration.to_dict()`` when the noise came from a risk target, else None.
    grid : float or None
        PLD grid of the certified risks (the calibration's re-check grid when calibrated).
    noise_source : str
        Where the batches and the noise came from: ``"os-entropy"`` (the premise of the guarantee: the
        attacker cannot replay them) or ``"seeded: ..."`` (an explicit ``noise_seed``: not private against
        anyone who holds it).
    """

    noise_multiplier: float
    sample_rate: float
    steps: int
    max_grad_norm: float
    n_train: int
    dataset_size: int
    neighbours: str
    delta: float
    certified: dict
    calibration: dict | None = None
    grid: float | None = None
    fprs: tuple[float, ...] = field(default=DEFAULT_FPRS)
    noise_source: str = OS_ENTROPY

    exact = True
    """The guarantee holds for the training that ran (nothing estimated)."""

    @property
    def eta(self) -> float:
        """Certified MIP eta: half the advantage of the replace-one curve (docs/theory.md section 1)."""
        return float(self.certified["eta"])

    @property
    def epsilon(self) -> float:
        """Certified epsilon at :attr:`delta` for :attr:`neighbours`."""
        return float(self.certified["epsilon"])

    def record(self, neighbours: str | None = None) -> Any:
        """The mechanism record (``SubsampledGaussian``) for ``neighbours`` (default: the certificate's)."""
        rel = self.neighbours if neighbours is None else neighbours
        return dpsgd_record(self.noise_multiplier, self.sample_rate, self.steps, rel)

    def curve(self, neighbours: str = "replace_one") -> Any:
        """The certified trade-off curve for ``neighbours`` (a :class:`~mipkit.accounting.TradeoffCurve`)."""
        from mipkit.accounting import tradeoff_curve

        return tradeoff_curve(self.record(neighbours), value_discretization_interval=self.grid)

    @property
    def tradeoff_curve(self) -> Any:
        """The protocol's f-DP curve: the replace-one curve, the relation of the audit's fixed-size halves
        (computed on each access: a PLD is not kept in the fitted model)."""
        return self.curve("replace_one")

    def risks(self, neighbours: str | None = None, fprs: tuple[float, ...] | None = None) -> dict:
        """The certified risks (shape of :attr:`certified`) for another relation or other FPRs."""
        rel = check_choice("neighbours", self.neighbours if neighbours is None else neighbours, NEIGHBOURS)
        return _risks(self._record_key(), rel, self.delta, tuple(fprs or self.fprs), self.grid)

    def _record_key(self) -> str:
        import json

        return json.dumps(
            {"noise_multiplier": self.noise_multiplier, "sample_rate": self.sample_rate, "steps": self.steps}
        )

    def to_dict(self) -> dict:
        """JSON-ready: the record, the premise, the certified risks and the calibration."""
        return {
            "kind": "f-DP (DP-SGD)",
            "source": "DPSGDClassifier",
            "exact": True,
            "mechanism": self.record().to_dict(),
            "noise_multiplier": self.noise_multiplier,
            "sample_rate": self.sample_rate,
            "steps": self.steps,
            "max_grad_norm": self.max_grad_norm,
            "n_train": self.n_train,
            "dataset_size": self.dataset_size,
            "neighbours": self.neighbours,
            "relation": self.neighbours,
            "premise": _PREMISE[self.neighbours],
            "delta": self.delta,
            "eta": self.eta,
            "epsilon": self.epsilon,
            "certified": self.certified,
            "pld_grid": self.grid,
            "calibration": self.calibration,
            "noise_source": self.noise_source,
        }


@register_trainer  # may be named by import path in an audit (mipkit.game.trainers)
class DPSGDClassifier(TorchMLPClassifier):
    """A ReLU network (or logistic regression) trained with DP-SGD to a noise multiplier or a risk target.

    Parameters
    ----------
    hidden_layer_sizes : sequence of int, default=(64,)
        Hidden widths; ``()`` is multinomial logistic regression.
    noise_multiplier : float, optional
        ``sigma > 0``: noise standard deviation ``sigma c``. Give this or ``risk_target``.
    risk_target : RiskTarget or dict, optional
        E.g. ``{"name": "tpr-at-fpr", "fpr": 0.01, "value": 0.05}`` (``target_from_dict`` form; an epsilon
        target without ``delta`` uses ``delta``): the noise multiplier is calibrated to it for this run's
        ``q`` and ``T`` and ``neighbours``.
    delta : float, default=1e-5
        Delta of the certified epsilon.
    neighbours : {"replace_one", "add_remove"}, default="replace_one"
        Relation the target and the certified risks refer to (module docstring).
    max_grad_norm : float, default=1.0
        Per-sample clipping norm ``c``.
    certify_fprs : sequence of float, default=(0.001, 0.01, 0.1)
        FPRs at which the certificate states the largest TPR (a TPR-at-FPR target's FPR is added).
    dataset_size : int, optional
        Public row count ``N`` for ``q``, ``T`` and the gradient divisor ``q N``; default the rows given to
        ``fit``. Set it when the number of rows itself depends on who is in the data (one-run auditing).
    epochs : int, default=5
        ``T = epochs * ceil(N / batch_size)`` steps.
    learning_rate : float, default=0.5
        SGD step on the noisy mean gradient.
    batch_size : int, default=256
        Expected batch size; Poisson rate ``q = batch_size / N`` (at most the number of rows).
    weight_decay, random_state, n_threads, max_models
        As :class:`~mipkit.trainers.TorchMLPClassifier`: ``random_state`` seeds the initial weights only.
    noise_seed : int, optional
        The Poisson batches and the noise come from OS entropy unless this is given; with it, the same
        ``random_state`` and ``noise_seed`` give the same model, which then is not private against anyone
        who holds ``noise_seed`` (the certificate's ``noise_source`` says so).

    Attributes
    ----------
    certificate_ : DPSGDCertificate
        The record that ran and its certified risks.
    noise_multiplier_, sample_rate_, steps_, max_grad_norm_
        What ran (equal to the certificate's).
    coefs_, intercepts_, classes_, n_features_in_
        As :class:`~mipkit.trainers.TorchMLPClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> from mipkit.trainers import DPSGDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] > 0).astype(int)
    >>> clf = DPSGDClassifier((), epochs=2, batch_size=40, noise_multiplier=2.0, random_state=0).fit(X, y)
    >>> clf.certificate_.steps, clf.certificate_.sample_rate
    (20, 0.1)
    """

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        *,
        noise_multiplier: float | None = None,
        risk_target: Any = None,
        delta: float = 1e-5,
        neighbours: str = "replace_one",
        max_grad_norm: float = 1.0,
        certify_fprs=DEFAULT_FPRS,
        dataset_size: int | None = None,
        epochs: int = 5,
        learning_rate: float = 0.5,
        batch_size: int = 256,
        weight_decay: float = 0.0,
        random_state=None,
        noise_seed: int | None = None,
        n_threads: int | None = 1,
        max_models: int = 32,
    ):
        store_params(self, locals())  # the privacy first: what sets the guarantee, then the training

    # ------------------------------------------------------------------------------------- the plan
    def _privacy(self) -> tuple[Any, float, str, tuple[float, ...]]:
        """(target or None, delta, neighbours, fprs) after validation."""
        owner = type(self).__name__
        if (self.noise_multiplier is None) == (self.risk_target is None):
            raise MipkitValueError(
                f"{owner} needs exactly one of 'noise_multiplier' and 'risk_target'. Got "
                f"{'both' if self.noise_multiplier is not None else 'neither'}."
            )
        if self.noise_multiplier is not None:
            check_positive("noise_multiplier", self.noise_multiplier, owner=owner)
        check_positive("max_grad_norm", self.max_grad_norm, owner=owner)
        delta = check_delta(self.delta, owner=owner)
        rel = check_choice("neighbours", self.neighbours, NEIGHBOURS, owner=owner)
        try:
            fprs = [float(f) for f in self.certify_fprs]
        except (TypeError, ValueError):
            fprs = [math.nan]
        if not fprs or not all(0.0 < f < 1.0 for f in fprs):
            raise MipkitValueError(
                f"The 'certify_fprs' parameter of {owner} must be a list of FPRs in (0, 1). "
                f"Got {self.certify_fprs!r} instead."
            )
        target = None if self.risk_target is None else _target(self.risk_target, delta, owner)
        if target is not None and target.name == "tpr-at-fpr":
            fprs.append(float(target.fpr))
        return target, delta, rel, tuple(sorted(set(fprs)))

    def plan(self, n_rows: int) -> dict:
        """What training on ``n_rows`` rows will run, before any gradient: ``sample_rate``, ``steps``,
        ``noise_multiplier`` (calibrated when a risk target is given) and the calibration record.

        ``q = batch_size / N`` and ``T = epochs * ceil(N / batch_size)`` with ``N = dataset_size`` or
        ``n_rows``: the trainer's own formulas (checked against what ran after each fit).
        """
        owner = type(self).__name__
        target, _, rel, _ = self._privacy()
        n = check_positive_int("n_rows", n_rows, owner=owner)
        size = (
            n
            if self.dataset_size is None
            else check_positive_int("dataset_size", self.dataset_size, owner=owner)
        )
        q, steps = dpsgd_schedule(self.batch_size, self.epochs, size, owner=owner, records="training rows")
        if target is None:
            return {"noise_multiplier": float(self.noise_multiplier), "sample_rate": q, "steps": steps,
                    "dataset_size": size, "calibration": None}  # fmt: skip
        import json

        cal = _calibrated(json.dumps(target.to_dict(), sort_keys=True), q, steps, rel)
        return {"noise_multiplier": float(cal.noise), "sample_rate": q, "steps": steps, "dataset_size": size,
                "calibration": cal.to_dict()}  # fmt: skip

    # ------------------------------------------------------------------------------------- training
    def _fit_stack(
        self, Xs: list[np.ndarray], Ys: list[np.ndarray], seeds: list, progress: Progress | None = None
    ) -> list:
        """Train one clone per ``(Xs[m], Ys[m], seeds[m])``: models with the same number of rows share a
        plan (and a calibration) and train in vectorised stacks of ``max_models``;
        ``progress(stage, done, total)`` counts the DP-SGD steps of each stack in turn."""
        from mipkit.trainers._torch_train import train_stack

        _, delta, rel, fprs = self._privacy()
        out: list[Any] = [None] * len(Xs)
        groups: dict[int, list[int]] = {}
        for m, x in enumerate(Xs):
            groups.setdefault(int(x.shape[0]), []).append(m)
        chunk = check_positive_int("max_models", self.max_models, owner=type(self).__name__)
        for n_rows, members in groups.items():
            plan = self.plan(n_rows)
            engine = TorchMLPClassifier(
                **{k: v for k, v in self.get_params(deep=False).items() if k in _ENGINE_PARAMS},
                noise_multiplier=plan["noise_multiplier"],
            )
            settings = replace(engine._settings(), dataset_size=plan["dataset_size"])
            grid = None  # the PLD grid the calibration checked its answer on, so that the certified
            if plan["calibration"] is not None:  # risk is the calibration's (at most the target)
                details = plan["calibration"]["details"]
                grid = details.get("fine_discretization_interval") or details.get(
                    "value_discretization_interval"
                )

            cert = DPSGDCertificate(
                noise_multiplier=plan["noise_multiplier"],
                sample_rate=plan["sample_rate"],
                steps=plan["steps"],
                max_grad_norm=float(self.max_grad_norm),
                n_train=n_rows,
                dataset_size=plan["dataset_size"],
                neighbours=rel,
                delta=delta,
                certified={},
                calibration=plan["calibration"],
                grid=grid,
                fprs=fprs,
                noise_source=noise_source(self._noise_seeds(1)[0]),
            )
            cert = replace(cert, certified=cert.risks())
            for start in range(0, len(members), chunk):
                part = members[start : start + chunk]
                res = train_stack([Xs[m] for m in part], [Ys[m] for m in part],
                                  [self._seed(seeds[m]) for m in part], settings,
                                  self._noise_seeds(len(part)), progress)  # fmt: skip
                for j, m in enumerate(part):
                    if res.steps[j] != plan["steps"] or not math.isclose(
                        res.sample_rate[j], plan["sample_rate"]
                    ):
                        raise AssertionError(  # pragma: no cover - the accounting must describe the run
                            f"DP-SGD ran q={res.sample_rate[j]}, T={res.steps[j]} but accounted for "
                            f"q={plan['sample_rate']}, T={plan['steps']}."
                        )
                    est = clone(self).set_params(random_state=seeds[m])
                    weights = res.params[j]
                    est.coefs_ = [np.ascontiguousarray(w.T) for w in weights[0::2]]
                    est.intercepts_ = [b.copy() for b in weights[1::2]]
                    est.classes_ = np.arange(Ys[m].shape[1])
                    est.n_features_in_ = int(Xs[m].shape[1])
                    est.steps_ = int(res.steps[j])
                    est.sample_rate_ = float(res.sample_rate[j])
                    est.noise_multiplier_ = float(settings.noise_multiplier)
                    est.max_grad_norm_ = float(settings.max_grad_norm)
                    est.expected_batch_size_ = float(res.expected_batch_size[j])
                    est.certificate_ = cert
                    out[m] = est
        return out


#: Parameters of DPSGDClassifier handed to the TorchMLPClassifier that trains (the rest are its own).
_ENGINE_PARAMS = frozenset(
    {"hidden_layer_sizes", "epochs", "learning_rate", "batch_size", "weight_decay", "max_grad_norm",
     "random_state", "noise_seed", "n_threads", "max_models"}
)  # fmt: skip
