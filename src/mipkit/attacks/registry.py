"""The attacks an audit can run, described as data: one frozen :class:`AttackSpec` per attack.

A spec says what the attack is called (the name ``attacks=`` accepts), its family, the result rows it
produces (``"lira"`` gives ``"lira-online"`` and ``"lira-offline"``), what it needs from the audit (the target
models' outputs, reference models, retraining) and its scoring function. Every scoring function has one
signature, ``score(inputs: AttackInputs) -> AttackOutput``: it receives the outputs of ``K`` trained models on
``n`` records, who trained on what and which models are the targets, and returns a ``(T, n)`` score array per
row (family ``"score"``) or the outcome of a pairwise game (family ``"game"``).

Protocol (leave-one-out over models, LiRA's evaluation; Carlini et al. 2022, Sec. 4.1): each target model
``t`` is attacked with the other ``K - 1`` models as its reference models. For RMIA the population ``z`` is
the whole record pool, which the attacker knows without knowing who is IN (Zarifzadeh et al. 2024, Sec. 3).
Adding an attack is adding a spec to :data:`ATTACKS`; the audit, its configuration and the command line
read the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError
from mipkit.attacks.lira import lira_offline, lira_online
from mipkit.attacks.loss import loss_attack
from mipkit.attacks.ltu import LTUResult, ltu_loss_game
from mipkit.attacks.rmia import rmia_scores, tune_rmia_a
from mipkit.attacks.signals import cross_entropy_loss, logit_confidence, true_class_probability

__all__ = [
    "ATTACKS",
    "FAMILIES",
    "NEEDS",
    "REFERENCE_MODELS",
    "RETRAINING",
    "TARGET_OUTPUTS",
    "AttackInputs",
    "AttackOutput",
    "AttackSpec",
    "attack_names",
    "attack_rows",
    "get_attack",
    "run_score_attacks",
]

TARGET_OUTPUTS = "target outputs"
"""The target model's ``predict_proba`` outputs on the records."""
REFERENCE_MODELS = "reference models"
"""Models trained like the target on other random halves, with known memberships."""
RETRAINING = "retraining"
"""Training new models with the target's trainer during the attack."""
NEEDS = (TARGET_OUTPUTS, REFERENCE_MODELS, RETRAINING)
FAMILIES = ("score", "game")
"""``"score"``: a membership score per (target model, record) trial, summarised by ROC metrics and eta.
``"game"``: a pairwise game (LTU) summarised by its accuracy and privacy."""


@dataclass(frozen=True, eq=False)
class AttackInputs:
    """What every scoring function receives: ``K`` models' outputs on ``n`` records and the game's layout.

    Attributes
    ----------
    probs : array of shape (K, n, C)
        ``predict_proba`` of every model on every record.
    y : int array of shape (n,)
        Labels in ``0..C-1``.
    in_mask : bool array of shape (K, n)
        ``in_mask[k, i]`` is True iff record ``i`` was in model ``k``'s training set.
    targets : int array of shape (T,)
        The models attacked in turn; the others are each target's reference models.
    random_state : int, Generator or None
        For attacks that draw at random (the LTU game's pairing and coins).

    The signals (:attr:`loss`, :attr:`confidence`, :attr:`true_probability`, each of shape ``(K, n)``) are
    computed once, when an attack first asks for them.
    """

    probs: np.ndarray
    y: np.ndarray
    in_mask: np.ndarray
    targets: np.ndarray
    random_state: Any = None

    def __post_init__(self) -> None:
        k, n = np.shape(self.in_mask)
        if np.shape(self.probs)[:2] != (k, n) or np.shape(self.y) != (n,):
            raise MipkitValueError(
                "AttackInputs needs probs (K, n, C), y (n,) and in_mask (K, n). Got "
                f"{np.shape(self.probs)}, {np.shape(self.y)} and {np.shape(self.in_mask)} instead."
            )
        t = np.asarray(self.targets)
        if t.ndim != 1 or t.size == 0 or t.min() < 0 or t.max() >= k:
            raise MipkitValueError(f"AttackInputs needs targets among the models 0..{k - 1}. Got {t!r}.")

    @property
    def n_models(self) -> int:
        return int(np.shape(self.in_mask)[0])

    def references(self, target: int) -> np.ndarray:
        """The reference models of ``target``: every other model (leave-one-out)."""
        return np.array([k for k in range(self.n_models) if k != target])

    @cached_property
    def loss(self) -> np.ndarray:
        """Cross-entropy loss ``-log p_y`` (LOSS's signal)."""
        return cross_entropy_loss(self.probs, self.y)

    @cached_property
    def confidence(self) -> np.ndarray:
        """Logit-scaled confidence ``log p_y - log sum_{c != y} p_c`` (LiRA's signal)."""
        return logit_confidence(self.probs, self.y)

    @cached_property
    def true_probability(self) -> np.ndarray:
        """True-class probability ``p_y`` (RMIA's signal)."""
        return true_class_probability(self.probs, self.y)


@dataclass(frozen=True, eq=False)
class AttackOutput:
    """What a scoring function returns.

    Attributes
    ----------
    scores : dict row -> array of shape (T, n)
        Membership scores (higher = more likely a member) of each row, one line per target (family
        ``"score"``; empty for a game).
    settings : dict
        What the attack chose on the way, JSON-able (e.g. RMIA's tuned ``a`` per target).
    game : LTUResult or None
        The outcome of a pairwise game (family ``"game"``).
    """

    scores: Mapping[str, np.ndarray] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    game: LTUResult | None = None


@dataclass(frozen=True)
class AttackSpec:
    """One attack of the registry.

    Attributes
    ----------
    name : str
        What ``attacks=`` accepts, e.g. ``"lira"``.
    family : {"score", "game"}
        How the audit summarises it (see :data:`FAMILIES`).
    rows : tuple of str
        The result rows it produces, e.g. ``("lira-online", "lira-offline")``.
    needs : frozenset of str
        Among :data:`NEEDS`.
    score : callable
        ``score(inputs: AttackInputs) -> AttackOutput``.
    citation : str
        Where the attack is published.
    """

    name: str
    family: str
    rows: tuple[str, ...]
    needs: frozenset[str]
    score: Callable[[AttackInputs], AttackOutput] = field(repr=False)
    citation: str = ""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise MipkitValueError(f"The 'family' of attack {self.name!r} must be one of {FAMILIES}.")
        if not self.rows or not set(self.needs) <= set(NEEDS):
            raise MipkitValueError(f"Attack {self.name!r} needs rows and needs among {NEEDS}.")


# ------------------------------------------------------------------------------------- scoring functions


def _per_target(inputs: AttackInputs, fn: Callable[[int, np.ndarray], np.ndarray]) -> np.ndarray:
    """Stack ``fn(target, references)`` over the targets into a ``(T, n)`` array."""
    return np.stack([fn(int(t), inputs.references(int(t))) for t in inputs.targets])


def _score_loss(inputs: AttackInputs) -> AttackOutput:
    """LOSS (Yeom et al. 2018): ``-loss`` of the target model; no reference model is used."""
    loss = inputs.loss
    return AttackOutput(scores={"loss": _per_target(inputs, lambda t, _: loss_attack(loss[t]))})


def _score_lira(inputs: AttackInputs) -> AttackOutput:
    """LiRA online and offline (Carlini et al. 2022, eq. (4) and Sec. IV-D) with per-record Gaussians."""
    conf, member = inputs.confidence, inputs.in_mask
    return AttackOutput(
        scores={
            "lira-online": _per_target(inputs, lambda t, r: lira_online(conf[t], conf[r], member[r])),
            "lira-offline": _per_target(inputs, lambda t, r: lira_offline(conf[t], conf[r], member[r])),
        }
    )


def _score_rmia(inputs: AttackInputs) -> AttackOutput:
    """RMIA online and offline (Zarifzadeh et al. 2024); the population is the whole record pool.

    The offline ``a`` is tuned for each target on that target's reference models only, one of them playing
    the target (the authors' procedure, Sec. 4): the target's own membership never enters.
    """
    p, member = inputs.true_probability, inputs.in_mask
    tuned: dict[str, float] = {}

    def online(t: int, r: np.ndarray) -> np.ndarray:
        return rmia_scores(p[t], p[r], member[r], p[t], p[r], online=True)

    def offline(t: int, r: np.ndarray) -> np.ndarray:
        a = float(tune_rmia_a(p[r], member[r], p[r], n_targets=1, random_state=t))
        tuned[str(t)] = a
        return rmia_scores(p[t], p[r], member[r], p[t], p[r], a=a, online=False)

    scores = {"rmia-online": _per_target(inputs, online), "rmia-offline": _per_target(inputs, offline)}
    settings = {
        "rmia_a": tuned,
        "rmia_population": "every record of the pool (the attacker does not know who is IN)",
    }
    return AttackOutput(scores=scores, settings=settings)


def _play_ltu(inputs: AttackInputs) -> AttackOutput:
    """The LTU game with the loss strategy (Pedersen Thm 4.2.1) on the target models' own fits."""
    t = np.asarray(inputs.targets)
    game = ltu_loss_game(inputs.loss[t], inputs.in_mask[t], random_state=inputs.random_state)
    return AttackOutput(game=game)


ATTACKS: Mapping[str, AttackSpec] = MappingProxyType(
    {
        "loss": AttackSpec(
            "loss",
            "score",
            ("loss",),
            frozenset({TARGET_OUTPUTS}),
            _score_loss,
            "Yeom et al., CSF 2018, Sec. 3.2",
        ),
        "lira": AttackSpec(
            "lira",
            "score",
            ("lira-online", "lira-offline"),
            frozenset({TARGET_OUTPUTS, REFERENCE_MODELS}),
            _score_lira,
            "Carlini et al., IEEE S&P 2022, Sec. IV",
        ),
        "rmia": AttackSpec(
            "rmia",
            "score",
            ("rmia-online", "rmia-offline"),
            frozenset({TARGET_OUTPUTS, REFERENCE_MODELS}),
            _score_rmia,
            "Zarifzadeh et al., ICML 2024, Sec. 3-4",
        ),
        "ltu": AttackSpec(
            "ltu",
            "game",
            ("ltu",),
            frozenset({TARGET_OUTPUTS}),
            _play_ltu,
            "Pedersen, PhD thesis 2022, ch. 4.2 (the retraining strategy also needs retraining)",
        ),
    }
)
"""Every attack the audit can run, in the canonical order of its result rows."""


def attack_names() -> tuple[str, ...]:
    """Names ``attacks=`` accepts, in canonical order."""
    return tuple(ATTACKS)


def get_attack(name: str) -> AttackSpec:
    """The spec called ``name``, with a clear error for an unknown name."""
    try:
        return ATTACKS[name]
    except KeyError:
        raise MipkitValueError(f"Unknown attack {name!r}. Known attacks: {', '.join(ATTACKS)}.") from None


def attack_rows(names) -> tuple[str, ...]:
    """The result rows of the attacks ``names``, in registry order."""
    chosen = {get_attack(n).name for n in names}
    return tuple(row for spec in ATTACKS.values() if spec.name in chosen for row in spec.rows)


def _finite(arr: np.ndarray) -> np.ndarray:
    """Attacks may return +-inf (or NaN) for certain records; keep the order and make the scores finite:
    +inf becomes the largest finite score + 1, -inf and NaN the smallest - 1."""
    if np.all(np.isfinite(arr)):
        return arr
    finite = arr[np.isfinite(arr)]
    hi = finite.max() + 1.0 if finite.size else 1.0
    lo = finite.min() - 1.0 if finite.size else -1.0
    return np.nan_to_num(arr, nan=lo, posinf=hi, neginf=lo)


def run_score_attacks(inputs: AttackInputs, names) -> tuple[dict[str, np.ndarray], dict]:
    """Run the ``"score"``-family attacks among ``names`` (registry order).

    Returns
    -------
    scores : dict row -> array of shape (T, n)
        Finite membership scores of every row.
    settings : dict
        The attacks' settings merged (e.g. ``rmia_a``).
    """
    chosen = {get_attack(n).name for n in names}
    scores: dict[str, np.ndarray] = {}
    settings: dict = {}
    shape = (np.size(inputs.targets), np.shape(inputs.in_mask)[1])
    for spec in ATTACKS.values():
        if spec.name not in chosen or spec.family != "score":
            continue
        out = spec.score(inputs)
        if tuple(out.scores) != spec.rows or any(np.shape(s) != shape for s in out.scores.values()):
            raise MipkitValueError(f"Attack {spec.name!r} must return rows {spec.rows} of shape {shape}.")
        scores.update({row: _finite(np.asarray(s, dtype=float)) for row, s in out.scores.items()})
        settings.update(out.settings)
    return scores, settings
