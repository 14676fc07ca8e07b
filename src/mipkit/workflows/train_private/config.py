"""The settings of a private training run: :class:`TrainPrivateConfig`, checked when built.

The privacy is a risk target (``risk_target``, calibrated to the least noise multiplier for the run's exact
sample rate and steps) or a ``noise_multiplier``; with neither, the run trains to
:data:`DEFAULT_RISK_TARGET`. :func:`privacy_from_parts` builds the target of a command line's separate
flags (a name, a value, its parameters) or refuses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mipkit._random import check_noise_seed
from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_interval,
    check_positive,
    check_positive_int,
)
from mipkit.metrics.roc import DEFAULT_FPRS
from mipkit.workflows._shape import VerbConfig
from mipkit.workflows.calibrate.target import check_target_parameters, risk_target_from

__all__ = ["DEFAULT_RISK_TARGET", "MAX_LAYERS", "TrainPrivateConfig", "privacy_from_parts"]

OWNER = "train_private"
#: The target of a run that states neither a target nor a noise multiplier: MIP eta at most 0.05 (an
#: attacker tells members from non-members at most 55% of the time).
DEFAULT_RISK_TARGET: dict[str, Any] = {"name": "eta", "value": 0.05}
#: Most hidden layers a run takes.
MAX_LAYERS = 32


def _hidden(widths: Any) -> tuple[int, ...]:
    """The hidden layer widths as a tuple of positive integers (``()``: logistic regression)."""
    items = (widths,) if isinstance(widths, (int, np.integer)) else tuple(widths)
    if len(items) > MAX_LAYERS:
        raise MipkitValueError(
            f"The 'hidden' parameter of {OWNER} must list at most {MAX_LAYERS} layers. Got {len(items)}."
        )
    for w in items:
        if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 1:
            raise MipkitValueError(
                f"The 'hidden' parameter of {OWNER} must list positive layer widths (none: logistic "
                f"regression). Got {widths!r}."
            )
    return tuple(int(w) for w in items)


@dataclass(frozen=True)
class TrainPrivateConfig(VerbConfig):
    """Every setting of a private training run (checked when built; the command line maps its flags here).

    Attributes
    ----------
    encode, dropna, drop
        How the table becomes arrays, as for ``mipkit audit``, except that a non-numeric feature needs the
        table's public domain.
    risk_target : dict or None
        ``{"name": ..., <parameters>, "value": ...}`` (``target_from_dict`` form), or None.
    noise_multiplier : float or None
        The DP-SGD noise multiplier instead of a target. With neither, :data:`DEFAULT_RISK_TARGET`.
    epochs, batch_size, max_grad_norm, learning_rate, hidden
        DP-SGD settings (``hidden=()``: logistic regression).
    delta : float
        Delta of the certified epsilon (and of an epsilon target without its own).
    neighbours : {"replace_one", "add_remove"}
        Relation of the target and the certificate.
    test_size : float
        Share of the rows held out (stratified by class, secret:
        :func:`~mipkit.workflows.train_private.run.held_out_generator`).
    scale : bool
        Standardise the features with the held-out rows' mean and standard deviation.
    seed : int
        Seeds the initial weights.
    fprs : tuple of float
        FPRs at which the certificate states the largest TPR.
    noise_seed : int or None
        None (default): the held-out split and DP-SGD's Poisson batches and noise come from OS entropy, so
        that ``seed`` (written to results.json) does not let anyone replay the training. An integer makes
        them reproducible; the model is then not private against anyone who holds it.
    record_split : bool
        Write ``split.parquet`` (which rows trained the model: as private as the data; off by default).
    audit : bool
        Audit the fitted model against its certificate (training rows versus the held-out rows).
    """

    encode: str = "none"
    dropna: bool = False
    drop: tuple[str, ...] = ()
    risk_target: dict | None = None
    noise_multiplier: float | None = None
    epochs: int = 5
    batch_size: int = 256
    max_grad_norm: float = 1.0
    learning_rate: float = 0.5
    hidden: tuple[int, ...] = (64,)
    delta: float = 1e-5
    neighbours: str = "replace_one"
    test_size: float = 0.2
    scale: bool = True
    seed: int = 0
    fprs: tuple[float, ...] = DEFAULT_FPRS
    noise_seed: int | None = None
    record_split: bool = False
    audit: bool = False

    def check(self) -> None:
        """Every setting in range; the privacy (target or noise multiplier) as the classifier checks it."""
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise MipkitValueError(f"The 'seed' parameter of {OWNER} must be an integer >= 0. Got {seed!r}.")
        check_noise_seed(self.noise_seed, owner=OWNER)
        check_interval("test_size", self.test_size, 0.0, 1.0, owner=OWNER)
        check_choice("neighbours", self.neighbours, ("replace_one", "add_remove"), owner=OWNER)
        check_choice("encode", self.encode, ("none", "onehot"), owner=OWNER)
        check_positive_int("epochs", self.epochs, owner=OWNER)
        check_positive_int("batch_size", self.batch_size, owner=OWNER)
        check_positive("learning_rate", self.learning_rate, owner=OWNER)
        drop = (self.drop,) if isinstance(self.drop, str) else tuple(self.drop or ())
        object.__setattr__(self, "drop", tuple(str(c) for c in drop))
        object.__setattr__(self, "hidden", _hidden(self.hidden))
        object.__setattr__(self, "fprs", tuple(float(f) for f in self.fprs))
        self.classifier()._privacy()  # noise multiplier or target, clipping norm, delta, FPRs

    def classifier(self) -> Any:
        """The unfitted :class:`~mipkit.trainers.DPSGDClassifier` these settings describe."""
        from mipkit.trainers import DPSGDClassifier

        target = self.risk_target
        if target is None and self.noise_multiplier is None:
            target = dict(DEFAULT_RISK_TARGET)
        return DPSGDClassifier(
            tuple(self.hidden),
            epochs=self.epochs,
            learning_rate=self.learning_rate,
            batch_size=self.batch_size,
            max_grad_norm=self.max_grad_norm,
            noise_multiplier=self.noise_multiplier,
            risk_target=target,
            delta=self.delta,
            neighbours=self.neighbours,
            certify_fprs=tuple(self.fprs),
            random_state=self.seed,
            noise_seed=self.noise_seed,
        )


def privacy_from_parts(
    target: str | None,
    value: float | None,
    params: Mapping[str, float | None],
    noise_multiplier: float | None,
    *,
    delta: float,
    names: Mapping[str, str] | None = None,
) -> dict | None:
    """The ``risk_target`` of a run whose privacy is given in parts: a target's name, value and parameters
    (``fpr``, ``baseline``, ``base_rate``, ``recall``), or a noise multiplier (then None). Exactly one of
    the two; a part that does not apply is refused. An epsilon target is stated at ``delta``.

    ``names`` says how the messages name ``target``, ``value``, ``noise_multiplier`` and each parameter
    (a command line's flags).
    """
    say = dict(names or {})
    if (target is None) == (noise_multiplier is None):
        raise MipkitValueError(
            f"Give the privacy either as a risk target ({say.get('target', 'target')} NAME "
            f"{say.get('value', 'value')} V) or as {say.get('noise_multiplier', 'noise_multiplier')}; got "
            f"{'both' if target is not None else 'neither'}."
        )
    if target is None:
        check_target_parameters(None, params, names)
        if value is not None:
            raise MipkitValueError(
                f"{say.get('value', 'value')} applies only with {say.get('target', 'target')}."
            )
        return None
    given = {**params, "delta": delta if target == "epsilon" else None}
    return risk_target_from(target, value, given, owner=OWNER, names=names).to_dict()
