"""The MIP certificate: what a release guarantees, and the step from a spread to a noise law and its record.

:func:`certify_noise` takes the spread of ``A`` over random halves (an a-priori ``sigma`` or the outputs of
fits on halves, :mod:`mipkit.mechanisms.spread`), calibrates the noise (:func:`calibrate_noise`,
docs/theory.md section 2), optionally compares it with DP noise for the same eta, and records all of it in a
frozen :class:`MIPCertificate` that says whether the guarantee is a theorem for this release (``exact``) or
rests on estimated sigma.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from mipkit._random import OS_ENTROPY, RandomState
from mipkit._validation import MipkitValueError
from mipkit.mechanisms.dp_noise import DPNoiseOption, dp_alternatives
from mipkit.mechanisms.mip_calibration import CALIBRATIONS, MIPParams, calibrate_noise
from mipkit.mechanisms.noise_samplers import NoiseLaw
from mipkit.mechanisms.spread import estimate_spread

__all__ = [
    "ESTIMATE_FIELDS",
    "CalibratedNoise",
    "MIPCertificate",
    "accuracy_bound",
    "certify_noise",
    "guarantee_text",
    "seed_of",
]


@dataclass(frozen=True)
class MIPCertificate:
    """What a MIP release guarantees and how much noise it took (frozen; ``to_dict`` for JSON).

    Attributes
    ----------
    eta : float
        The MIP target: attack accuracy ``<= 1/2 + eta``.
    calibration : str
        The MIP calibration asked for.
    released_with : str
        The noise actually added: the calibration, or a DP option when ``choose="smallest"`` picked one.
    sigma : list of float
        Per-coordinate spread (norm weights).
    sigma_1 : float
        Norm-level spread used (``E||theta - E theta||_{w,p}`` bound; 1 for a-priori weights and for
        izzo2024).
    sigma_source : str
        ``"a-priori"`` or ``"estimated: B fits, bootstrap upper CB at conf"``.
    exact : bool
        True when the guarantee is a theorem for this release (a-priori sigma with a proven
        calibration, or a DP option given a sensitivity bound); False when it rests on estimated sigma
        or on the published izzo2024 sampler in ``d > 1``.
    noise_scale : float
        The law's scale parameter (``s`` or the Laplace radius scale ``c``).
    noise_std : list of float
        Per-coordinate standard deviation of the added noise, from the law.
    noise_std_rms : float
        Root-mean-square of ``noise_std`` (the quantity ``choose="smallest"`` compares).
    seed : int or None
    n_fits : int
        Fits used to estimate sigma (0 with an a-priori sigma).
    train_on : str
    dim : int
    guarantee : str
        The statement in words.
    dp_alternatives : list of dict or None
        DP options for the same eta when a sensitivity was given.
    noise_source : str
        Where the noise (and a secret half) came from: ``"os-entropy"``, the premise of the guarantee, or
        ``"seeded: ..."`` (an explicit noise seed: not private against anyone who holds it).
    membership_probability : float
        ``p = k/n``, the game's probability that a given record of the pool is in the released half: 1/2
        for an even pool, ``(n - 1)/(2n)`` for an odd one with ``train_on="half"`` (1/2 with ``"all"``,
        whose pool holds twice the rows passed).
    accuracy_bound : float
        What the guarantee bounds every attacker's accuracy by: ``max(p, 1 - p) + eta`` (docs/theory.md
        sections 1 and 2b; ``1/2 + eta`` when ``p = 1/2``).
    estimates_withheld : bool
        True in a copy for publication (:meth:`redacted`) whose ``ESTIMATE_FIELDS`` and noise scale are None:
        with an estimated sigma they are statistics of the private data.
    """

    eta: float
    calibration: str
    released_with: str
    sigma: list[float]
    sigma_1: float
    sigma_source: str
    exact: bool
    noise_scale: float
    noise_std: list[float]
    noise_std_rms: float
    seed: int | None
    n_fits: int
    train_on: str
    dim: int
    guarantee: str
    noise_law: dict = field(default_factory=dict)
    dp_alternatives: list[dict] | None = None
    noise_source: str = OS_ENTROPY
    membership_probability: float = 0.5
    accuracy_bound: float | None = None
    estimates_withheld: bool = False

    def __post_init__(self) -> None:
        if self.accuracy_bound is None:
            object.__setattr__(self, "accuracy_bound", accuracy_bound(self.eta, self.membership_probability))

    @property
    def estimated(self) -> bool:
        """True when sigma was estimated from the data (its values are then statistics of the data)."""
        return self.sigma_source != "a-priori"

    def to_dict(self) -> dict:
        """All fields as a JSON-ready dict (:func:`dataclasses.asdict`)."""
        return asdict(self)

    def redacted(self, *, include_estimates: bool = False) -> MIPCertificate:
        """The certificate to publish: with an estimated sigma, its values and everything scaled by them
        (``ESTIMATE_FIELDS``, the noise law's scale) are statistics of the private data that no budget
        covers, so they are None (``estimates_withheld``) unless ``include_estimates``; with an a-priori
        sigma (public) nothing is withheld."""
        if not self.estimated or include_estimates:
            return self
        return replace(
            self,
            **dict.fromkeys(ESTIMATE_FIELDS),
            noise_law={**self.noise_law, "scale": None},
            estimates_withheld=True,
        )


def _rms(x: np.ndarray) -> float:
    """Root-mean-square ``sqrt(mean(x^2))``."""
    return float(np.sqrt(np.mean(np.square(x))))


ESTIMATE_FIELDS = ("sigma", "sigma_1", "noise_scale", "noise_std", "noise_std_rms")
"""Certificate fields that are statistics of the data when sigma was estimated (withheld by default)."""


def accuracy_bound(eta: float, membership_probability: float = 0.5) -> float:
    """``max(p, 1 - p) + eta``: the accuracy an eta-MIP release allows when a record is in with probability
    ``p`` (Izzo et al., TMLR 2024, Def. 1; docs/theory.md sections 1 and 2b)."""
    p = float(membership_probability)
    return max(p, 1.0 - p) + float(eta)


def _bound_words(eta: float, p: float) -> str:
    """``"0.55"`` for a balanced game; the prior spelled out for an unbalanced one."""
    acc = accuracy_bound(eta, p)
    if p == 0.5:
        return f"{acc:.4g}"
    return (
        f"{acc:.4g} = max(p, 1 - p) + eta, p = {p:.4g} the chance that a record is in the half (an odd "
        f"pool: always guessing 'out' is right {max(p, 1 - p):.4g} of the time)"
    )


def guarantee_text(
    eta: float,
    exact: bool,
    train_on: str,
    released_with: str,
    sigma_source: str,
    membership_probability: float = 0.5,
) -> str:
    """The certificate's statement in words, its data-dependent premises first.

    DP noise, exact MIP (a-priori sigma) or approximate MIP: an estimated sigma is a statistic of the private
    data, so the sentence opens with that (and, for ``train_on="all"``, with the fits on the training data
    itself, which make the calibration depend on the released half: a heuristic). The accuracy bound is
    ``max(p, 1 - p) + eta`` with ``p = membership_probability`` (Izzo et al., TMLR 2024, Def. 1).
    """
    p = float(membership_probability)
    acc = _bound_words(eta, p)
    if released_with not in CALIBRATIONS:
        return (
            f"DP noise ({released_with}): for every pool D and every record, no attacker guesses membership "
            f"in the released half with accuracy above {acc} (DP implies MIP), provided the sensitivity "
            "bound holds."
        )
    who = (
        "the pool D = the data passed to fit (released model trained on a random half of it)"
        if train_on == "half"
        else "a pool D of twice the rows, of which the data passed to fit is a uniformly random half"
    )
    if exact:
        return (
            f"Exact: eta-MIP with eta = {eta:g} w.r.t. {who}, given that sigma bounds the spread of the "
            f"output over random halves of D: attack accuracy <= {acc}."
        )
    if sigma_source == "a-priori":  # izzo2024's sampler in d > 1
        premise = "Approximate, because of the published sampler"
    else:
        premise = (
            f"Approximate, because sigma was estimated from the private data ({sigma_source}), not known a "
            "priori: the guarantee holds only if that estimate bounds the true spread"
        )
        if train_on == "all":
            premise += (
                ", and the fits ran on the training data itself, so the calibration depends on the released "
                "half (a heuristic; an a-priori sigma or train_on='half' removes this premise)"
            )
    if released_with == "izzo2024":
        return (
            f"{premise}. Cor. 10 of Izzo et al. as published: its proof assumes an exp-norm density, which "
            f"the Laplace radius gives only for d = 1. Target accuracy <= {acc} w.r.t. {who}."
        )
    return f"{premise}. Then eta-MIP with eta = {eta:g} w.r.t. {who}: attack accuracy <= {acc}."


@dataclass(frozen=True)
class CalibratedNoise:
    """The noise law to add and the certificate that describes it."""

    noise: NoiseLaw
    certificate: MIPCertificate


def seed_of(random_state: RandomState) -> int | None:
    """The seed recorded in a certificate: ``random_state`` when it is an int, else None."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return None


def _spread_weights(sigma: Any, dim: int, owner: str) -> np.ndarray:
    """An a-priori ``sigma`` (one number or ``dim`` numbers) as per-coordinate weights."""
    w = np.asarray(sigma, dtype=float).ravel()
    if w.size == 1:
        w = np.full(dim, float(w[0]))
    if w.size != dim:
        raise MipkitValueError(
            f"The 'sigma' parameter of {owner} has {w.size} entries but the output has {dim}."
        )
    if not np.all(np.isfinite(w)) or np.any(w < 0) or not np.any(w > 0):
        raise MipkitValueError(f"The 'sigma' parameter of {owner} must be finite, >= 0 and not all 0.")
    return w


def _spread(
    params: MIPParams, dim: int, sigma: Any, outputs: np.ndarray | None, random_state: RandomState, owner: str
) -> tuple[np.ndarray, float, int, str, bool]:
    """``(weights, sigma_1, number of fits, source, exact)``: from the a-priori ``sigma``, or estimated from
    ``outputs`` (then never exact)."""
    if outputs is None:
        w = _spread_weights(sigma, dim, owner)
        exact = params.calibration != "izzo2024" or int(np.sum(w > 0)) == 1
        return w, 1.0, 0, "a-priori", exact
    confidence = params.confidence
    est = estimate_spread(
        outputs,
        calibration=params.calibration,
        norm_order=params.norm_order,
        moment=params.moment,
        confidence=confidence,
        random_state=random_state,
    )
    source = (
        f"estimated: {est.n_fits} fits, bootstrap upper CB at {confidence:g}"
        if confidence is not None
        else f"estimated: {est.n_fits} fits, point estimate"
    )
    return est.weights, est.sigma_1_upper, est.n_fits, source, False


def _dp_choice(
    params: MIPParams, dim: int, noise: NoiseLaw
) -> tuple[NoiseLaw, str | None, list[dict] | None]:
    """``(noise released, the DP option chosen or None, the DP alternatives)``: with a ``sensitivity`` the DP
    options for the same eta are listed, and ``choose="smallest"`` takes one whose RMS standard deviation
    is smaller than the MIP noise's."""
    if params.sensitivity is None:
        return noise, None, None
    options = dp_alternatives(params.eta, params.sensitivity, dim, sensitivity_norm=params.sensitivity_norm)
    alternatives = [o.to_dict() for o in options]
    if params.choose == "smallest":
        best: DPNoiseOption = min(options, key=lambda o: o.coordinate_std)
        if best.coordinate_std < _rms(noise.coordinate_std()):
            return best.noise_law(), best.name, alternatives
    return noise, None, alternatives


def certify_noise(
    params: MIPParams,
    *,
    dim: int,
    sigma: Any,
    outputs: np.ndarray | None,
    seed: int | None,
    random_state: RandomState,
    owner: str = "MIPNoise",
    noise_source: str = OS_ENTROPY,
    membership_probability: float = 0.5,
) -> CalibratedNoise:
    """From an a-priori sigma or fitted outputs to a noise law and its certificate.

    With ``outputs`` (fits on random halves, shape ``(B, dim)``) the spread is estimated
    (:func:`~mipkit.mechanisms.spread.estimate_spread`, bootstrap seeded by ``random_state``) and the
    guarantee is approximate; otherwise ``sigma`` gives the weights with ``sigma_1 = 1`` and the guarantee is
    exact for the mipkit calibrations (and for izzo2024 only when one coordinate is active). With a
    ``sensitivity`` the DP options for the same eta are listed, and ``choose="smallest"`` adds whichever
    noise has the least RMS per-coordinate standard deviation.

    Parameters
    ----------
    params : MIPParams
        Validated settings (:func:`~mipkit.mechanisms.mip_calibration.check_mip_params`): eta, calibration,
        confidence, moment, norm order, sensitivity, choose, train_on.
    dim : int
        Length of the released vector.
    sigma : float or array (dim,) or None
        A-priori per-coordinate spread bounds (used when ``outputs`` is None).
    outputs : ndarray (B, dim) or None
        Outputs of fits on random halves (the spread is then estimated).
    seed : int or None
        The user's seed, recorded in the certificate.
    random_state : int, Generator or None
        Seeds the bootstrap of the spread estimate.
    owner : str
        The caller, named in errors.
    noise_source : str
        Where the added noise comes from (recorded in the certificate).
    membership_probability : float
        The game's ``P(record in the released half)`` (:func:`mipkit.game.splits.membership_probability`);
        the certified accuracy is ``max(p, 1 - p) + eta``.

    Returns
    -------
    CalibratedNoise
    """
    eta, calibration, train_on = params.eta, params.calibration, params.train_on
    w, sigma_1, n_fits, source, exact = _spread(params, dim, sigma, outputs, random_state, owner)
    noise = calibrate_noise(
        eta, calibration, w, sigma_1=sigma_1, moment=params.moment, norm_order=params.norm_order
    )
    noise, chosen, alternatives = _dp_choice(params, dim, noise)
    released_with, exact = (calibration, exact) if chosen is None else (chosen, True)
    std = noise.coordinate_std()
    cert = MIPCertificate(
        eta=eta,
        calibration=calibration,
        released_with=released_with,
        sigma=[float(v) for v in w],
        sigma_1=float(sigma_1),
        sigma_source=source,
        exact=bool(exact),
        noise_scale=float(noise.scale),
        noise_std=[float(v) for v in std],
        noise_std_rms=_rms(std),
        seed=seed,
        n_fits=int(n_fits),
        train_on=train_on,
        dim=int(dim),
        guarantee=guarantee_text(eta, bool(exact), train_on, released_with, source, membership_probability),
        noise_law=noise.to_dict(),
        dp_alternatives=alternatives,
        noise_source=noise_source,
        membership_probability=float(membership_probability),
    )
    return CalibratedNoise(noise, cert)
