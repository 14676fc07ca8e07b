"""The settings of MIP noise on a model's parameters: :class:`NoiseSettings` (what ``protect`` and
``audit_noise`` share) and :class:`ProtectConfig`, both frozen and checked when built.

The noise settings are those of :class:`~mipkit.mechanisms.MIPNoise` (checked by
:func:`~mipkit.mechanisms.mip_calibration.check_mip_params`); the model is an import path with JSON
parameters (checked by :func:`~mipkit.mechanisms.mip_noise.load_estimator`, the trainer allow-list
included) or an unfitted estimator. ``sigma`` and ``attributes`` also take the command line's
comma-separated text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mipkit._random import check_noise_seed
from mipkit._validation import MipkitValueError, check_positive_int
from mipkit.mechanisms.mip_calibration import check_mip_params
from mipkit.mechanisms.spread import DEFAULT_ATTRIBUTES
from mipkit.workflows._shape import VerbConfig

__all__ = ["DEFAULT_MODEL", "NoiseSettings", "ProtectConfig"]

DEFAULT_MODEL = "sklearn.linear_model.LogisticRegression"


def _sigma(value: Any, owner: str) -> float | tuple[float, ...] | None:
    """An a-priori sigma as one float or a tuple of floats (comma-separated text accepted)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            values = [float(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise MipkitValueError(
                f"The 'sigma' parameter of {owner} must be a number or comma-separated numbers. "
                f"Got {value!r}."
            ) from None
        if not values:
            raise MipkitValueError(
                f"The 'sigma' parameter of {owner} is empty; give a number or comma-separated numbers."
            )
        value = values[0] if len(values) == 1 else tuple(values)
    elif not isinstance(value, (int, float)):
        try:
            value = tuple(float(v) for v in value)
        except (TypeError, ValueError):
            raise MipkitValueError(f"The 'sigma' parameter of {owner} must be numeric.") from None
    return value if isinstance(value, tuple) else float(value)


def _attributes(value: Any, owner: str) -> tuple[str, ...]:
    """Fitted attribute names as a tuple (comma-separated text accepted)."""
    items = value.split(",") if isinstance(value, str) else list(value or ())
    if not all(isinstance(a, str) for a in items):
        raise MipkitValueError(f"The 'attributes' parameter of {owner} must be attribute names.")
    names = tuple(a.strip() for a in items if a.strip())
    if not names:
        raise MipkitValueError(
            f"The 'attributes' parameter of {owner} is empty; name the fitted attributes to release, e.g. "
            "coef_,intercept_."
        )
    return names


@dataclass(frozen=True)
class NoiseSettings(VerbConfig):
    """The settings ``protect`` and ``audit_noise`` share: the model and its MIP noise.

    Attributes
    ----------
    model : str or estimator
        Import path of the estimator (``"sklearn.linear_model.LogisticRegression"``), or an unfitted
        scikit-learn style estimator.
    params : dict
        Constructor arguments for an import path (empty for an estimator).
    eta : float in (0, 1/2)
        The MIP target: attack accuracy at most ``1/2 + eta``.
    calibration : {"mipkit-gaussian", "mipkit-laplace", "izzo2024"}
    sigma : float, tuple of float or None
        A-priori spread bound per coordinate (the guarantee is then exact); None estimates it from fits on
        random halves. Comma-separated text is read as numbers.
    confidence : float in (0, 1) or None
        Level of the bootstrap upper bound on an estimated sigma (None: the point estimate).
    moment : float >= 2
        ``M`` of izzo2024.
    norm_order : float >= 1
        ``p`` of the weighted norm of mipkit-laplace.
    attributes : tuple of str
        The fitted attributes released (noised); comma-separated text is split.
    seed : int >= 0 or None
        Seeds the estimator and the fits on random halves (never the protective noise).
    n_jobs : int or None
        joblib workers for the fits (-1: every core).
    include_estimates : bool
        Keep an estimated sigma and the noise values scaled by it in the result: statistics of the private
        data that no budget covers, withheld by default.
    """

    model: Any = DEFAULT_MODEL
    params: dict = field(default_factory=dict)
    eta: float = 0.05
    calibration: str = "mipkit-gaussian"
    sigma: float | tuple[float, ...] | None = None
    confidence: float | None = 0.95
    moment: float = 2.0
    norm_order: float = 2.0
    attributes: tuple[str, ...] = DEFAULT_ATTRIBUTES
    seed: int | None = None
    n_jobs: int | None = None
    include_estimates: bool = False

    owner = "protect"

    def mip_settings(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~mipkit.mechanisms.mip_calibration.check_mip_params`."""
        return {
            "eta": self.eta,
            "calibration": self.calibration,
            "sigma": self.sigma,
            "confidence": self.confidence,
            "moment": self.moment,
            "norm_order": self.norm_order,
        }

    def check(self) -> None:
        owner = self.owner
        object.__setattr__(self, "sigma", _sigma(self.sigma, owner))
        object.__setattr__(self, "attributes", _attributes(self.attributes, owner))
        params = check_mip_params(owner, **self.mip_settings())
        object.__setattr__(self, "eta", params.eta)
        if self.seed is not None:
            object.__setattr__(self, "seed", check_positive_int("seed", self.seed, minimum=0, owner=owner))
        n_jobs = self.n_jobs
        if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0):
            raise MipkitValueError(
                f"The 'n_jobs' parameter of {owner} must be None, an integer >= 1 or -1 (every core). "
                f"Got {n_jobs!r}."
            )
        if not isinstance(self.include_estimates, bool):
            raise MipkitValueError(f"The 'include_estimates' parameter of {owner} must be True or False.")
        self.estimator()  # the model imports, is allowed and takes its parameters

    def estimator(self) -> Any:
        """A fresh unfitted estimator: built from the import path, or a clone of the one given."""
        from mipkit.mechanisms.mip_noise import load_estimator

        if isinstance(self.model, str):
            if not isinstance(self.params, dict):
                raise MipkitValueError(
                    f"The 'params' parameter of {self.owner} must be a dict of constructor arguments."
                )
            return load_estimator(self.model, self.params)
        if not all(callable(getattr(self.model, m, None)) for m in ("fit", "get_params")):
            raise MipkitValueError(
                f"The 'model' parameter of {self.owner} must be an import path or a scikit-learn style "
                f"estimator (fit, get_params). Got {self.model!r}."
            )
        if self.params:
            raise MipkitValueError(
                f"The 'params' parameter of {self.owner} applies to an import path; set them on the "
                "estimator passed as 'model' instead."
            )
        from sklearn.base import clone

        return clone(self.model)

    @property
    def model_name(self) -> str:
        """The model as results name it: its import path, or the estimator's class path."""
        if isinstance(self.model, str):
            return self.model
        cls = type(self.model)
        return f"{cls.__module__}.{cls.__qualname__}"

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-able dict (an estimator given as ``model`` by its class path)."""
        out = super().to_dict()
        out["model"] = self.model_name
        if not isinstance(self.model, str):
            out["params"] = {k: repr(v) for k, v in self.model.get_params(deep=False).items()}
        return out


@dataclass(frozen=True)
class ProtectConfig(NoiseSettings):
    """Every setting of ``protect``: the model, its MIP noise and how the release is made.

    The fields of :class:`NoiseSettings`, and:

    Attributes
    ----------
    n_estimates : int >= 2
        Fits on random halves that estimate sigma (when none is given a priori).
    train_on : {"all", "half"}
        ``"all"``: the model is trained on all the rows, read as a random half of a pool twice as large;
        ``"half"``: the rows are the pool and the model is trained on a secret random half of them.
    sensitivity : float or None
        A sensitivity bound of the released vector, for the comparison with DP noise.
    sensitivity_norm : {"l2", "l1"}
    choose : {None, "smallest"}
        ``"smallest"``: add the least noise among the MIP calibration and the DP options (needs
        ``sensitivity``).
    noise_seed : int >= 0 or None
        Seeds the protective noise and the secret half (a reproducible release, not private against anyone
        who holds it); None draws them from OS entropy.
    """

    n_estimates: int = 100
    train_on: str = "all"
    sensitivity: float | None = None
    sensitivity_norm: str = "l2"
    choose: str | None = None
    noise_seed: int | None = None

    def mip_settings(self) -> dict[str, Any]:
        return {
            **super().mip_settings(),
            "n_estimates": self.n_estimates,
            "train_on": self.train_on,
            "sensitivity": self.sensitivity,
            "sensitivity_norm": self.sensitivity_norm,
            "choose": self.choose,
        }

    def check(self) -> None:
        super().check()
        object.__setattr__(self, "n_estimates", int(self.n_estimates))
        check_noise_seed(self.noise_seed, owner=self.owner)

    def mip_noise_params(self) -> dict[str, Any]:
        """The keyword arguments of :class:`~mipkit.mechanisms.MIPNoise` (all but the estimator)."""
        return {
            **self.mip_settings(),
            "attributes": self.attributes,
            "random_state": self.seed,
            "noise_seed": self.noise_seed,
            "n_jobs": self.n_jobs,
        }
