"""The trainer protocol: what the game fits, named by an import path plus JSON parameters.

A *trainer* is a class whose instances have ``fit(X, y)`` and ``predict_proba(X)`` (or, failing that,
``decision_function(X)``): any scikit-learn classifier, or a PyTorch module behind
:class:`mipkit.game.torch_adapter.TorchClassifier`. It is described as data - an import path and a dict of
constructor parameters - so that the same description can be shipped to worker processes or Ray nodes,
written to ``results.json`` and hashed into the run ledger's key.

Because the description may come from a shared configuration file, naming a class is not allowed to run
code. :func:`resolve_trainer` accepts only *estimator classes*, and decides before anything is imported
(beyond scikit-learn and mipkit themselves) or instantiated:

* a scikit-learn estimator: a subclass of ``sklearn.base.BaseEstimator`` named under ``sklearn``;
* a registered trainer: a class passed to :func:`register_trainer` (mipkit's own trainers and defences
  register themselves; other packages may do the same);
* a class the user allows: :func:`allow_trainers` (the command line's allow-list) or the environment
  variable ``MIPKIT_ALLOWED_MODELS`` (comma-separated import paths; ``pkg.*`` allows a whole package). Only
  allowed paths are imported from outside scikit-learn and mipkit, and only they are looked for in the
  working folder (``mymodule.MyClass`` with ``mymodule.py`` in the current folder).

In every case the class must have ``fit`` and ``predict_proba`` (or ``decision_function``); anything else
(``subprocess.Popen``, a function) is refused with :class:`UntrustedTrainerError` before it is called.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import json
import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mipkit._validation import MipkitValueError
from mipkit.game.probabilities import predict_full_proba

__all__ = [
    "ALLOWED_MODELS_ENV",
    "TrainerSpec",
    "UntrustedTrainerError",
    "allow_trainers",
    "allowed_callable",
    "allowed_trainers",
    "is_trainer",
    "predict_full_proba",
    "register_trainer",
    "registered_trainers",
    "resolve_trainer",
    "seed_noise",
    "trainer_class",
]

ALLOWED_MODELS_ENV = "MIPKIT_ALLOWED_MODELS"
"""Environment variable: comma-separated import paths of trainer classes the user allows (``pkg.*``: all of
a package)."""
TRUSTED_PACKAGES = ("sklearn", "mipkit")
"""Top-level packages whose modules may be imported to look a trainer up without an allow-list."""

_REGISTRY: dict[str, type] = {}
_ALLOWED: list[str] = []
_STATE_LOCK = threading.Lock()


class UntrustedTrainerError(MipkitValueError):
    """A trainer path that names no estimator class mipkit may build (see the module docstring).

    Attributes
    ----------
    import_path : str
        The path that was refused.
    reason : str
        Why, without the remedy.
    allowable : bool
        True when adding the path to the allow-list would accept it (the message then says how).
    """

    def __init__(self, import_path: str, reason: str, *, allowable: bool = False) -> None:
        self.import_path = import_path
        self.reason = reason
        self.allowable = allowable
        remedy = (
            " To use it, add it to the allow-list (mipkit.game.allow_trainers, or the environment variable "
            f"{ALLOWED_MODELS_ENV}={import_path})."
            if allowable
            else ""
        )
        super().__init__(reason + remedy)


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
            f"Trainer {import_path!r} cannot be imported: {exc}. Check the spelling; for a module of your "
            f"own ({module_name.split('.')[0]}.py), run from the folder that holds it or add that folder to "
            "PYTHONPATH."
        ) from None
    return _attribute(obj, qualname, import_path, module_name)


def _attribute(module: Any, qualname: str, import_path: str, module_name: str) -> Any:
    """The object ``qualname`` (``"Outer.Inner"``) names inside the imported ``module``.

    Parameters
    ----------
    module : module
        The imported module ``module_name``.
    qualname : str
        Dotted attribute path inside it.
    import_path : str
        The trainer's import path as the user wrote it (for the message).
    module_name : str
        The module's name (for the message).

    Raises
    ------
    MipkitValueError
        If an attribute on the path is missing.
    """
    obj = module
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


def _canonical(import_path: str) -> tuple[str, str]:
    module, qualname = _split_import_path(import_path)
    return module.strip(), qualname.strip()


def register_trainer(cls: type) -> type:
    """Register an estimator class as a trainer that may be named by import path; returns ``cls``.

    Use it as a class decorator (``@register_trainer``) in the module that defines the class. The class
    must have ``fit`` and ``predict_proba`` (or ``decision_function``).
    """
    if not inspect.isclass(cls) or not is_trainer(cls):
        raise MipkitValueError(
            "register_trainer takes a class with fit(X, y) and predict_proba(X) (or decision_function(X)). "
            f"Got {cls!r} instead."
        )
    with _STATE_LOCK:
        _REGISTRY[f"{cls.__module__}:{cls.__qualname__}"] = cls
    return cls


def registered_trainers() -> dict[str, type]:
    """``{"module:QualName": class}`` of every registered trainer (mipkit's own register on import)."""
    with _STATE_LOCK:
        return dict(_REGISTRY)


def allow_trainers(paths: Iterable[str]) -> None:
    """Allow the trainer classes at these import paths for this process (``pkg.*``: every class of ``pkg``).

    The command line's allow-list ends up here. The class must still have ``fit`` and ``predict_proba``
    (or ``decision_function``).
    """
    new = []
    for path in paths:
        text = str(path).strip()
        if not text:
            continue
        if not text.endswith(".*"):
            _split_import_path(text)  # a clear error for a malformed entry
        new.append(text)
    with _STATE_LOCK:
        _ALLOWED.extend(p for p in new if p not in _ALLOWED)


def allowed_trainers() -> tuple[str, ...]:
    """The allow-list: :func:`allow_trainers` entries, then those of ``MIPKIT_ALLOWED_MODELS``."""
    env = [p.strip() for p in os.environ.get(ALLOWED_MODELS_ENV, "").split(",") if p.strip()]
    with _STATE_LOCK:
        return tuple(dict.fromkeys([*_ALLOWED, *env]))


def _is_allowed(module: str, qualname: str) -> bool:
    for entry in allowed_trainers():
        if entry.endswith(".*"):
            package = entry[:-2].strip()
            if module == package or module.startswith(package + "."):
                return True
            continue
        try:
            if _canonical(entry) == (module, qualname):
                return True
        except MipkitValueError:
            continue
    return False


def _import_module(import_path: str, module: str, *, from_working_folder: bool) -> Any:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or module
        here = os.getcwd()
        if from_working_folder and module.split(".")[0] == missing and here not in sys.path:
            # an allowed module may live in the working folder (mymodule.py next to the data); the folder
            # stays on sys.path so that worker processes started later find it too
            sys.path.insert(0, here)
            importlib.invalidate_caches()
            try:
                return importlib.import_module(module)
            except ModuleNotFoundError:
                pass
        where = f" or in the working folder {here}" if from_working_folder else ""
        raise MipkitValueError(
            f"Trainer {import_path!r} cannot be imported: no module named {missing!r} among the installed "
            f"packages{where}. Check the spelling; for a module of your own, run from the folder that holds "
            f"{missing.split('.')[0]}.py or add that folder to PYTHONPATH."
        ) from None
    except Exception as exc:  # the module itself failed to import
        raise MipkitValueError(
            f"Trainer {import_path!r} cannot be imported: {type(exc).__name__}: {exc}."
        ) from None


def trainer_class(import_path: str, *, classifier: bool = True) -> type:
    """The estimator class an import path names, checked before anything is built (see the module docstring).

    ``classifier=False`` accepts estimators with ``fit`` alone (a regressor whose parameters
    :class:`mipkit.mechanisms.MIPNoise` perturbs, say).

    Raises
    ------
    UntrustedTrainerError
        If the path is outside scikit-learn and mipkit and not allowed (nothing is imported then), or names
        something that is not an estimator class allowed by the rules above.
    MipkitValueError
        If an allowed path cannot be imported.
    """
    module, qualname = _canonical(import_path)
    path = import_path.strip()
    allowed = _is_allowed(module, qualname)
    top = module.split(".")[0]
    if module in sys.modules and not allowed and top not in TRUSTED_PACKAGES:
        obj: Any = sys.modules[module]  # already imported by the caller's own code: registered classes only
    elif allowed or top in TRUSTED_PACKAGES:
        obj = _import_module(path, module, from_working_folder=allowed)
    else:
        raise UntrustedTrainerError(
            path,
            f"Trainer {path!r} is not a scikit-learn estimator or a registered mipkit trainer, so it was not "
            "imported.",
            allowable=True,
        )
    obj = _attribute(obj, qualname, path, module)
    if not inspect.isclass(obj):
        raise UntrustedTrainerError(
            path,
            f"Trainer {path!r} is not a trainer: it names a {type(obj).__name__}, not a class. Give the "
            "class of an estimator with fit(X, y) and predict_proba(X), e.g. "
            "'sklearn.linear_model.LogisticRegression'.",
        )
    if not (is_trainer(obj) if classifier else callable(getattr(obj, "fit", None))):
        needs = "fit(X, y) and predict_proba(X) (or decision_function(X))" if classifier else "fit(X, y)"
        reason = f"Trainer {path!r} is not a trainer: the model class needs {needs}."
        raise UntrustedTrainerError(path, reason)
    registered = obj in registered_trainers().values()
    if registered or allowed:
        return obj
    if top == "sklearn":
        from sklearn.base import BaseEstimator

        if issubclass(obj, BaseEstimator) and str(getattr(obj, "__module__", "")).split(".")[0] == "sklearn":
            return obj
    raise UntrustedTrainerError(
        path,
        f"Trainer {path!r} is not a scikit-learn estimator or a registered mipkit trainer.",
        allowable=True,
    )


def allowed_callable(import_path: str, *, what: str) -> Any:
    """The object at an import path that a trainer's parameters name (a network factory, say), imported
    only when it lives in mipkit or is on the allow-list; ``what`` names it in the messages."""
    try:
        module, qualname = _canonical(import_path)
    except MipkitValueError:
        raise MipkitValueError(
            f"The {what} {import_path!r} is not an import path of the form 'package.module:name'."
        ) from None
    allowed = _is_allowed(module, qualname)
    if not allowed and module.split(".")[0] != "mipkit":
        raise UntrustedTrainerError(
            import_path,
            f"The {what} {import_path!r} is outside mipkit and not on the allow-list, so it was not "
            "imported.",
            allowable=True,
        )
    obj = _import_module(import_path, module, from_working_folder=allowed)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not callable(obj):
        raise MipkitValueError(f"The {what} {import_path!r} does not name a callable.")
    return obj


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
        overriding any ``random_state`` in :attr:`params`, and every ``noise_seed`` left None is set to it
        too (:func:`seed_noise`: an audit's fits are reproducible, protective noise included). With
        ``seed=None`` the estimator keeps its own default (for scikit-learn, fresh randomness on every fit:
        the "no seed" scenario).
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
    """Seed one fit of an audit: every ``random_state`` (nested ones too) to ``seed``, and every
    ``noise_seed`` left None to ``seed`` as well (:func:`seed_noise`)."""
    get_params = getattr(estimator, "get_params", None)
    if callable(get_params):
        keys = [k for k in get_params(deep=True) if k == "random_state" or k.endswith("__random_state")]
        if keys:
            estimator.set_params(**dict.fromkeys(keys, seed))
        seed_noise(estimator, seed)
        return
    if hasattr(estimator, "random_state"):
        estimator.random_state = seed
    if hasattr(estimator, "noise_seed") and estimator.noise_seed is None:
        estimator.noise_seed = seed


def seed_noise(estimator: Any, seed: int) -> Any:
    """Set every ``noise_seed`` parameter of ``estimator`` that is None (nested ones too) to ``seed``.

    Audits are measurements, not releases: the many models an audit trains must be reproducible from its
    seed, protective noise included, so each fit's noise seed is its own seed (a trainer keys its noise
    stream apart from its ``random_state`` stream; :func:`mipkit._random.noise_generator`). A noise seed the
    user set is kept. Returns ``estimator``.
    """
    get_params = getattr(estimator, "get_params", None)
    if callable(get_params):
        params = get_params(deep=True)
        names = [k for k in params if k == "noise_seed" or k.endswith("__noise_seed")]
        keys = [k for k in names if params[k] is None]
        if keys:
            estimator.set_params(**dict.fromkeys(keys, int(seed)))
    return estimator


def resolve_trainer(import_path: str, params: dict | None = None) -> TrainerSpec:
    """Check a trainer class (:func:`trainer_class`) and its parameters; return its :class:`TrainerSpec`.

    Only estimator classes are accepted (a scikit-learn estimator, a registered trainer, or a class the
    user allows; see the module docstring), and that is decided before the class is imported from outside
    scikit-learn and mipkit or instantiated.

    Parameters
    ----------
    import_path : str
        ``"package.module.Class"`` or ``"package.module:Class"``.
    params : dict, optional
        JSON-able constructor keyword arguments, e.g. ``{"C": 0.1}``.

    Raises
    ------
    UntrustedTrainerError
        If the path names no estimator class that may be built (nothing is imported or instantiated then).
    MipkitValueError
        If the path cannot be imported, the parameters are not JSON-able or are rejected by the constructor,
        or instances lack ``fit`` and ``predict_proba``/``decision_function``.
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
    trainer_class(import_path)  # refuses anything but an estimator class before it is imported or built
    spec = TrainerSpec(import_path.strip(), params)
    instance = spec.build(None)
    if not is_trainer(instance):
        raise MipkitValueError(
            f"Trainer {import_path!r} is not a trainer: its instances need fit(X, y) and predict_proba(X) "
            "(or decision_function(X))."
        )
    return spec
