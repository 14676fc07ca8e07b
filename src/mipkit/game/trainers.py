"""The trainer protocol: what the game fits, named by an import path plus JSON parameters.

A *trainer* is a class whose instances have ``fit(X, y)`` and ``predict_proba(X)`` (or, failing that,
``decision_function(X)``): any scikit-learn classifier, or a PyTorch module behind
:class:`mipkit.game.torch_adapter.TorchClassifier`. It is described as data - an import path and a dict of
constructor parameters - so that the same description can be shipped to worker processes or Ray nodes,
written to ``results.json`` and hashed into the run ledger's key.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import json
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import expit, softmax

from mipkit._validation import MipkitValueError

__all__ = [
    "TrainerSpec",
    "is_trainer",
    "predict_full_proba",
    "resolve_trainer",
]


def _split_import_path(import_path: str) -> tuple[str, str]:
    """``"pkg.mod.Class"`` or ``"pkg.mod:Class"`` (``"pkg.mod:Outer.Inner"``) -> (module, qualname)."""
    if not isinstance(import_path, str) or not import_path.strip():
        raise MipkitValueError(
            "The trainer must be given as an import path such as "
            f"'sklearn.linear_model.LogisticRegression'. Got {import_path!r} instead."
        )
    path = import_path.strip()
    if ":" in path:
        module, _, qualname = path.partition(":")
    else:
        module, _, qualname = path.rpartition(".")
    if not module or not qualname:
        raise MipkitValueError(
            f"Trainer {import_path!r} is not an import path of the form 'package.module.Class' "
            "(or 'package.module:Class')."
        )
    return module, qualname


@functools.lru_cache(maxsize=64)
def _import_object(import_path: str) -> Any:
    module_name, qualname = _split_import_path(import_path)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise MipkitValueError(
            f"Trainer {import_path!r} cannot be imported: {exc}. Check the spelling, or install the package "
            "that provides it."
        ) from None
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise MipkitValueError(
                f"Trainer {import_path!r} cannot be imported: module {module_name!r} has no attribute "
                f"{qualname!r}."
            ) from None
    return obj


def is_trainer(obj: Any) -> bool:
    """True iff ``obj`` has a callable ``fit`` and a callable ``predict_proba`` or ``decision_function``."""
    if not callable(getattr(obj, "fit", None)):
        return False
    return callable(getattr(obj, "predict_proba", None)) or callable(getattr(obj, "decision_function", None))


def _package_version(module_name: str) -> str | None:
    top = sys.modules.get(module_name.split(".")[0])
    version = getattr(top, "__version__", None)
    return str(version) if version is not None else None


@dataclass(frozen=True)
class TrainerSpec:
    """A trainer described as data: an import path and JSON-able constructor parameters.

    Parameters
    ----------
    import_path : str
        ``"package.module.Class"`` or ``"package.module:Class"``, e.g.
        ``"sklearn.neural_network.MLPClassifier"``.
    params : dict
        Constructor keyword arguments (JSON-able).

    Notes
    -----
    Build specs with :func:`resolve_trainer`, which imports and validates the class once; constructing a
    ``TrainerSpec`` directly skips that validation.
    """

    import_path: str
    params: dict = field(default_factory=dict)

    @property
    def trainer_class(self) -> type:
        """The imported class."""
        return _import_object(self.import_path)

    def build(self, seed: int | None) -> Any:
        """A fresh, unfitted estimator.

        When ``seed`` is not None, every ``random_state`` parameter of the estimator is set to it (for a
        scikit-learn meta-estimator such as a Pipeline, the nested ``<step>__random_state`` ones too),
        overriding any ``random_state`` in :attr:`params`. With ``seed=None`` the estimator keeps its own
        default (for scikit-learn, fresh randomness on every fit: the "no seed" scenario).
        """
        cls = self.trainer_class
        try:
            estimator = cls(**self.params)
        except TypeError as exc:
            raise MipkitValueError(f"Trainer {self.import_path!r} rejected its parameters: {exc}.") from None
        if seed is not None:
            _set_random_state(estimator, int(seed))
        return estimator

    def fingerprint(self) -> str:
        """Stable SHA-256 hex digest of the resolved class, its package version and the parameters.

        ``"a.b.C"`` and ``"a.b:C"`` naming the same class give the same fingerprint; so do parameter dicts
        that differ only in key order. A new version of the trainer's package changes it (its fits may
        differ), so a run ledger never reuses fits made by another version.
        """
        cls = self.trainer_class
        module = getattr(cls, "__module__", "")
        payload = {
            "class": f"{module}:{getattr(cls, '__qualname__', repr(cls))}",
            "version": _package_version(module),
            "params": self.params,
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=repr)
        return hashlib.sha256(text.encode()).hexdigest()

    def describe(self) -> dict:
        """JSON-able description (for results.json)."""
        return {"import_path": self.import_path, "params": dict(self.params)}


def _set_random_state(estimator: Any, seed: int) -> None:
    get_params = getattr(estimator, "get_params", None)
    if callable(get_params):
        keys = [k for k in get_params(deep=True) if k == "random_state" or k.endswith("__random_state")]
        if keys:
            estimator.set_params(**dict.fromkeys(keys, seed))
        return
    if hasattr(estimator, "random_state"):
        estimator.random_state = seed


def resolve_trainer(import_path: str, params: dict | None = None) -> TrainerSpec:
    """Import a trainer class, check its parameters and that it is a trainer; return its :class:`TrainerSpec`.

    Parameters
    ----------
    import_path : str
        ``"package.module.Class"`` or ``"package.module:Class"``.
    params : dict, optional
        JSON-able constructor keyword arguments, e.g. ``{"C": 0.1}``.

    Raises
    ------
    MipkitValueError
        If the path cannot be imported, does not name a class, the parameters are not JSON-able or are
        rejected by the constructor, or instances lack ``fit`` and ``predict_proba``/``decision_function``.
    """
    params = {} if params is None else params
    if not isinstance(params, dict):
        raise MipkitValueError(
            f"The trainer parameters must be a JSON object (a dict). Got {type(params).__name__} instead."
        )
    try:
        params = json.loads(json.dumps(params))
    except (TypeError, ValueError) as exc:
        raise MipkitValueError(f"The trainer parameters must be JSON-able: {exc}.") from None
    obj = _import_object(import_path)
    if not inspect.isclass(obj):
        raise MipkitValueError(
            f"Trainer {import_path!r} is not a trainer: it names a {type(obj).__name__}, not a class. Give "
            "the class of an estimator with fit(X, y) and predict_proba(X), e.g. "
            "'sklearn.linear_model.LogisticRegression'."
        )
    spec = TrainerSpec(import_path.strip(), params)
    instance = spec.build(None)
    if not is_trainer(instance):
        raise MipkitValueError(
            f"Trainer {import_path!r} is not a trainer: its instances need fit(X, y) and predict_proba(X) "
            "(or decision_function(X))."
        )
    return spec


def predict_full_proba(estimator: Any, X: Any, n_classes: int) -> np.ndarray:
    """Class probabilities of a fitted estimator over all global classes ``0..n_classes-1``.

    Uses ``predict_proba`` when available. Otherwise ``decision_function`` is turned into probabilities:
    a 1-D score ``d`` (binary) becomes ``p(classes_[1]) = sigmoid(d)``, ``p(classes_[0]) = 1 - sigmoid(d)``;
    a 2-D score matrix becomes ``softmax(d)`` row-wise. These are monotone transforms of the scores, not
    calibrated probabilities, which is enough for the loss / confidence signals of the attacks.

    The estimator's columns follow its ``classes_``; they are placed in the global columns they name, and a
    class the fit never saw gets probability 0.

    Returns
    -------
    proba : ndarray of float64, shape (n_query, n_classes)
    """
    if callable(getattr(estimator, "predict_proba", None)):
        proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    else:
        scores = np.asarray(estimator.decision_function(X), dtype=np.float64)
        if scores.ndim == 1 or scores.shape[1] == 1:
            p1 = expit(scores.reshape(-1))
            proba = np.column_stack([1.0 - p1, p1])
        else:
            proba = softmax(scores, axis=1)
    if proba.ndim == 1:
        proba = proba[:, None]
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        if proba.shape[1] != n_classes:
            raise MipkitValueError(
                f"The trainer returned {proba.shape[1]} probability columns for {n_classes} classes "
                "and has no classes_ attribute saying which classes they are."
            )
        full = proba
    else:
        classes = np.asarray(classes)
        integral = classes.dtype.kind in "iu" or (
            classes.dtype.kind == "f"
            and bool(np.all(np.isfinite(classes)))
            and bool(np.all(classes % 1 == 0))
        )
        if not integral:
            raise MipkitValueError(
                f"The trainer's classes_ must be integer class codes 0..{n_classes - 1}. Got {classes!r}."
            )
        codes = classes.astype(np.int64)
        if codes.size != proba.shape[1]:
            # Binary decision_function with a single fitted class cannot happen in scikit-learn; be explicit.
            raise MipkitValueError(
                f"The trainer returned {proba.shape[1]} probability columns for classes_ {classes.tolist()}."
            )
        if codes.min() < 0 or codes.max() >= n_classes:
            raise MipkitValueError(
                f"The trainer's classes_ {classes.tolist()} fall outside the class codes 0..{n_classes - 1}."
            )
        full = np.zeros((proba.shape[0], n_classes), dtype=np.float64)
        full[:, codes] = proba
    if not np.all(np.isfinite(full)):
        raise MipkitValueError("The trainer returned non-finite probabilities (a diverged fit?).")
    return full
