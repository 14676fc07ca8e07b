"""DP-WGAN with per-record clipping (``dpwgan-clip``): a conditional WGAN-GP whose critic trains with DP-SGD.

What runs (docs/theory.md, "DP-WGAN with per-record clipping"; docs/synthesize.md):

1. the records are encoded onto ``[0, 1]^d`` from the public (or privately estimated) column domain
   (:class:`~mipkit.synthesizers.preprocess.TabularEncoder`: numeric columns scaled by the domain's ranges,
   one one-hot block per categorical column);
2. the count of every category is released once with Gaussian noise (``count_noise`` times the counts'
   sensitivity ``sqrt(k)`` for ``k`` categorical columns): the category frequencies that the generator
   trains and samples with;
3. ``steps`` critic steps of DP-SGD: a Poisson batch at rate ``q``, per record a conditional vector taken
   from the record itself, its fake partner and the gradient of its whole loss, penalty included,
   clipped to ``C`` (:func:`~mipkit.synthesizers.clip_step.clipped_sum`), the sum plus
   ``N(0, sigma^2 C^2 I)`` over ``q N``, an Adam step; after every ``n_critic`` of them a generator step,
   which reads only the critic and the released counts (post-processing);
4. sampling, from the moving average of the generator's weights (``ema``): a categorical column and one of
   its categories (from the released frequencies, mixed with a ``uniform_share`` of the uniform
   distribution so that rare categories are generated), the generator's record with that category, and a
   category of every other block drawn from its softmax; with ``match_marginals``, ``n`` distinct rows of a
   pool of ``4 n`` drawn so that every categorical column's frequencies are the released ones
   (:mod:`mipkit.synthesizers.clip_sample`).

The release is the composition of the counts' Gaussian mechanism and ``steps`` Poisson-subsampled Gaussian
steps: ``Composed([GaussianMechanism, SubsampledGaussian(sigma, q, steps)])``, accounted by PLD; ``sigma``
is the smallest that meets ``(epsilon, delta)`` or a risk target (:func:`mipkit.accounting.calibrate_noise`
on :func:`mipkit.accounting.dpsgd_family`), fixed before training.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from mipkit._progress import Progress, report
from mipkit._random import check_noise_seed, check_random_state, noise_generator, noise_source, spawn_seed
from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_interval,
    check_positive,
    check_positive_int,
)
from mipkit.synthesizers._torch import require_torch
from mipkit.synthesizers.certificate import SynthesisCertificate, certificate_from_record, uncertified
from mipkit.synthesizers.clip_step import Blocks, head
from mipkit.synthesizers.dpwgan import _check_budget
from mipkit.synthesizers.preprocess import TabularEncoder

__all__ = ["DPWGANClip"]

STAGE = "DP-WGAN-clip critic steps"
#: Candidate rows generated per sampled row when ``match_marginals``.
POOL = 4


class DPWGANClip:
    """Conditional WGAN-GP for tables whose critic trains with DP-SGD (module docstring).

    Parameters
    ----------
    epsilon : float, optional
        Target epsilon (with ``delta``); default 3 unless ``target``.
    delta : float, default=1e-5
    target : RiskTarget, optional
        Any mipkit risk target instead of ``epsilon`` (an ``EtaTarget`` is met for replace-one neighbours).
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
    steps : int, default=3000
        Critic steps (the DP-SGD steps accounted for).
    n_critic : int, default=1
        Critic steps per generator step.
    batch_size : int, default=500
        Expected Poisson batch: ``q = min(1, batch_size / N)``.
    max_grad_norm : float, default=1.0
        ``C``: each record's gradient is clipped to this norm.
    gp_weight : float, default=10.0
    critic_hidden, generator_hidden : tuple of int, default=(256, 256)
    latent_dim : int, default=64
        Standard normal generator input.
    learning_rate : float, default=2e-4
        Adam's, for both networks (``betas``).
    betas : tuple of float, default=(0.5, 0.9)
    tau : float, default=0.2
        Gumbel-softmax temperature of the generator's categorical blocks in training.
    count_noise : float, default=10.0
        Noise standard deviation of the released category counts over their sensitivity.
    uniform_share : float, default=0.05
        Share of the uniform distribution in the category frequencies of sampling.
    ema : float, default=0.9995
        Decay of the exponential moving average of the generator's weights that sampling uses (0: the
        last weights).
    match_marginals : bool, default=True
        Sample from a pool of ``4 n_rows`` generated rows, weighted so that every categorical column's
        frequencies equal the sampling frequencies (:mod:`mipkit.synthesizers.clip_sample`).
    noise_multiplier : float, optional
        Fix ``sigma`` instead of calibrating it; 0 adds no noise anywhere (nothing is certified).
    domain : dict, optional
        Public column domain (:class:`~mipkit.synthesizers.preprocess.TabularEncoder`).
    device : str, default="cpu"
        Torch device of the networks (``"cuda"``); the protective noise is drawn on the CPU.
    n_threads : int, optional, default=1
    random_state : int, optional
        Seeds the weights, the conditional columns, the latent inputs, the Gumbel noise, the mixing weights
        and the sampling.
    noise_seed : int, optional
        The Poisson batches, the gradient noise and the counts' noise come from OS entropy unless this is
        given (then the fit is reproducible, and not private against anyone who holds it).
    progress : Progress, optional
        ``progress("DP-WGAN-clip critic steps", done, total)`` every 50 steps.
    """

    method = "dpwgan-clip"

    def __init__(
        self,
        *,
        epsilon: float | None = None,
        delta: float = 1e-5,
        target: Any = None,
        neighbours: str = "add_remove",
        steps: int = 3000,
        n_critic: int = 1,
        batch_size: int = 500,
        max_grad_norm: float = 1.0,
        gp_weight: float = 10.0,
        critic_hidden: tuple[int, ...] = (256, 256),
        generator_hidden: tuple[int, ...] = (256, 256),
        latent_dim: int = 64,
        learning_rate: float = 2e-4,
        betas: tuple[float, float] = (0.5, 0.9),
        tau: float = 0.2,
        count_noise: float = 10.0,
        uniform_share: float = 0.05,
        ema: float = 0.9995,
        match_marginals: bool = True,
        noise_multiplier: float | None = None,
        domain: dict | None = None,
        device: str = "cpu",
        n_threads: int | None = 1,
        random_state: int | None = 0,
        noise_seed: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        owner = "DPWGANClip"
        self.epsilon, self.delta = _check_budget(epsilon, delta, target, owner)
        self.target = target
        self.neighbours = check_choice("neighbours", neighbours, ("add_remove", "replace_one"), owner=owner)
        self.steps = check_positive_int("steps", steps, owner=owner)
        self.n_critic = check_positive_int("n_critic", n_critic, owner=owner)
        self.batch_size = check_positive_int("batch_size", batch_size, owner=owner)
        self.max_grad_norm = check_positive("max_grad_norm", max_grad_norm, owner=owner)
        self.gp_weight = check_interval("gp_weight", gp_weight, 0.0, math.inf, closed="left", owner=owner)
        self.critic_hidden = tuple(check_positive_int("critic_hidden", h, owner=owner) for h in critic_hidden)
        self.generator_hidden = tuple(
            check_positive_int("generator_hidden", h, owner=owner) for h in generator_hidden
        )
        self.latent_dim = check_positive_int("latent_dim", latent_dim, owner=owner)
        self.learning_rate = check_positive("learning_rate", learning_rate, owner=owner)
        self.betas = (float(betas[0]), float(betas[1]))
        self.tau = check_positive("tau", tau, owner=owner)
        self.count_noise = check_positive("count_noise", count_noise, owner=owner)
        self.uniform_share = check_interval(
            "uniform_share", uniform_share, 0.0, 1.0, closed="both", owner=owner
        )
        self.ema = check_interval("ema", ema, 0.0, 1.0, closed="left", owner=owner)
        self.match_marginals = bool(match_marginals)
        self.noise_multiplier = (
            None
            if noise_multiplier is None
            else check_interval(
                "noise_multiplier", noise_multiplier, 0.0, math.inf, closed="left", owner=owner
            )
        )
        self.domain = domain
        self.device = str(device)
        self.n_threads = (
            None if n_threads is None else check_positive_int("n_threads", n_threads, owner=owner)
        )
        self.random_state = random_state
        self.noise_seed = check_noise_seed(noise_seed, owner=owner)
        self.progress = progress
        self.certificate_: SynthesisCertificate | None = None

    # ------------------------------------------------------------------------------------------------
    def sample_rate(self, n_records: int) -> float:
        """``q = min(1, batch_size / N)``."""
        return min(1.0, self.batch_size / int(n_records))

    def _relation(self) -> str:
        from mipkit.accounting import EtaTarget

        return "replace_one" if isinstance(self.target, EtaTarget) else self.neighbours

    def record(self, sigma: float, n_records: int, n_blocks: int, steps: int | None = None) -> Any:
        """The mechanism record of a run: the counts' Gaussian mechanism (when there are categorical
        columns) composed with ``steps`` DP-SGD steps (:func:`mipkit.trainers.dpsgd.dpsgd_record`)."""
        from mipkit.accounting import Composed, GaussianMechanism
        from mipkit.trainers.dpsgd import dpsgd_record

        rel = self._relation()
        sgd = dpsgd_record(sigma, self.sample_rate(n_records), self.steps if steps is None else steps, rel)
        if n_blocks == 0:
            return sgd
        sens = math.sqrt(n_blocks * (2.0 if rel == "replace_one" else 1.0))
        counts = GaussianMechanism(sigma=self.count_noise * sens, sensitivity=sens, neighbours=rel)
        return Composed([counts, sgd])

    def calibrate(self, n_records: int, n_blocks: int) -> tuple[float, dict]:
        """``(sigma, calibration dict)``: the smallest noise multiplier whose run meets the target."""
        from mipkit.accounting import EpsilonTarget, calibrate_noise, dpsgd_family

        if self.noise_multiplier is not None:
            return self.noise_multiplier, {"noise": self.noise_multiplier, "method": "given", "target": None}
        risk_target = (
            EpsilonTarget(delta=self.delta, value=self.epsilon) if self.target is None else self.target
        )
        family = dpsgd_family(self.sample_rate(n_records), self.steps, neighbours=self._relation())
        family = replace(family, build=lambda z: self.record(z, n_records, n_blocks), label="DP-WGAN-clip")
        cal = calibrate_noise(family, risk_target)
        out = cal.to_dict()
        out["target_record"] = risk_target.to_dict()
        out["neighbours"] = self._relation()
        return float(cal.noise), out

    # ------------------------------------------------------------------------------------------------
    def fit(self, data: pd.DataFrame) -> DPWGANClip:
        """Train on a table. Sets ``encoder_``, ``critic_``, ``generator_``, ``category_counts_`` (the
        released noisy counts), ``noise_multiplier_``, ``certificate_`` and ``history_`` (per step: batch
        size, median per-record norm, share of records clipped)."""
        torch = require_torch()
        from threadpoolctl import threadpool_limits

        try:
            torch.empty(0, device=self.device)
        except (RuntimeError, AssertionError):
            raise MipkitValueError(
                f"The 'device' parameter of DPWGANClip: torch cannot use {self.device!r} here; use 'cpu'."
            ) from None
        clock = time.perf_counter()
        self.encoder_ = TabularEncoder(domain=self.domain).fit(data)
        x_np = self.encoder_.transform(data)
        n, d = x_np.shape
        self.blocks_ = Blocks(self.encoder_.simplices(), d)
        sigma, calibration = self.calibrate(n, len(self.blocks_))
        self.noise_multiplier_ = sigma
        before = torch.get_num_threads()
        try:
            if self.n_threads is not None:
                torch.set_num_threads(self.n_threads)
            with threadpool_limits(limits=self.n_threads):
                self._train(torch, x_np, sigma)
        finally:
            torch.set_num_threads(before)
        seconds = time.perf_counter() - clock
        q = self.sample_rate(n)
        details = {
            "n_records": n, "dim": d, "sample_rate": q, "noise_multiplier": sigma,
            "max_grad_norm": self.max_grad_norm, "steps": self.steps, "steps_run": self.steps,
            "n_critic": self.n_critic, "expected_batch": q * n, "gp_weight": self.gp_weight,
            "count_noise": self.count_noise, "categorical_columns": len(self.blocks_), "ema": self.ema,
            "match_marginals": self.match_marginals,
            "clipped_share": _summary(self.history_["clipped_share"]),
            "domain_source": self.encoder_.domain_source, "fit_seconds": seconds,
        }  # fmt: skip
        if sigma == 0.0:
            self.certificate_ = uncertified(self.method, details=details)
            return self
        self.certificate_ = certificate_from_record(
            method=self.method,
            noise_source=noise_source(self.noise_seed),
            record=self.record(sigma, n, len(self.blocks_)),
            delta=self.delta,
            neighbours=self._relation(),
            calibration=calibration,
            details=details,
        )
        return self

    def _train(self, torch: Any, x_np: np.ndarray, sigma: float) -> None:
        """The counts, then ``steps`` DP-SGD critic steps with a generator step after every ``n_critic``."""
        from mipkit.synthesizers.clip_train import ClipTraining

        rng = check_random_state(self.random_state)
        torch.manual_seed(spawn_seed(rng))
        secret = noise_generator(self.noise_seed)  # the Poisson batches, the counts' and the gradients' noise
        run = ClipTraining(torch, self, x_np, rng, secret, sigma)
        for t in range(self.steps):
            run.critic_step()
            if (t + 1) % self.n_critic == 0:
                run.generator_step()
            if (t + 1) % 50 == 0 or t + 1 == self.steps:
                report(self.progress, STAGE, t + 1, self.steps)
        self.critic_, self.generator_ = run.critic.cpu(), run.averaged_generator().cpu()
        self.category_counts_ = run.counts
        self.history_ = {k: np.asarray(v) for k, v in run.hist.items()}

    def category_frequencies(self) -> list[np.ndarray]:
        """Per categorical column, the frequencies that sampling draws the conditioned category from: the
        released counts (clipped at 0, normalised) mixed with ``uniform_share`` of the uniform."""
        out = []
        for c in self.category_counts_:
            w = np.clip(c, 0.0, None)
            p = w / w.sum() if w.sum() > 0 else np.full(c.size, 1.0 / c.size)
            out.append((1.0 - self.uniform_share) * p + self.uniform_share / c.size)
        return out

    def sample(self, n_rows: int, *, random_state: int | None = None) -> pd.DataFrame:
        """``n_rows`` synthetic records (post-processing of the generator and the released counts): with
        ``match_marginals``, ``n_rows`` distinct rows of a pool of ``4 n_rows`` drawn with probabilities
        that make each categorical column's frequencies those of :meth:`category_frequencies`."""
        if not hasattr(self, "generator_"):
            raise MipkitValueError("This DPWGANClip is not fitted yet; call fit(data) first.")
        n_rows = check_positive_int("n_rows", n_rows, owner="DPWGANClip.sample")
        rng = np.random.default_rng(spawn_seed(self.random_state if random_state is None else random_state))
        if not (self.match_marginals and len(self.blocks_)):
            return self.encoder_.inverse_transform(self._generate(n_rows, rng)[0])
        from mipkit.synthesizers.clip_sample import inclusion_probabilities, rake, systematic_sample

        out, codes = self._generate(POOL * n_rows, rng)
        weights = rake(codes, self.category_frequencies())
        keep = systematic_sample(inclusion_probabilities(weights, n_rows), rng)
        if keep.size < n_rows:  # fewer pooled rows with weight than asked for: repeat some
            p = weights / weights.sum() if weights.sum() > 0 else None
            keep = np.concatenate([keep, rng.choice(weights.size, n_rows - keep.size, p=p)])
        return self.encoder_.inverse_transform(out[keep])

    def _generate(self, n_rows: int, rng: np.random.Generator) -> tuple[np.ndarray, list[np.ndarray]]:
        """``n_rows`` encoded records, one category chosen per block (one-hot), and per block the chosen
        category indices: a conditioned column and category per row (:meth:`category_frequencies`), the
        generator's record, the other blocks' categories drawn from its softmax."""
        torch = require_torch()
        from mipkit.synthesizers.preprocess import _choose

        gen = torch.Generator().manual_seed(spawn_seed(rng))
        blocks = self.blocks_
        z = torch.randn(n_rows, self.latent_dim, generator=gen)
        cols = rng.integers(0, max(len(blocks), 1), n_rows)
        cats = np.zeros(n_rows, dtype=int)
        if len(blocks):
            for j, p in enumerate(self.category_frequencies()):
                rows = np.flatnonzero(cols == j)
                cats[rows] = rng.choice(p.size, size=rows.size, p=p)
            c = blocks.cond_of_choices(torch, cols, cats)
        else:
            c = torch.zeros(n_rows, 0)
        self.generator_.eval()
        with torch.no_grad():
            out = head(torch, self.generator_(torch.cat([z, c], dim=1)), blocks, None).numpy().copy()
        codes = []
        for j, sl in enumerate(blocks.slices):
            pick = np.where(cols == j, cats, _choose(out[:, sl], rng))  # the conditioned category, as asked
            out[:, sl] = 0.0
            out[np.arange(n_rows), sl.start + pick] = 1.0
            codes.append(pick)
        return out, codes


def _summary(values: Any) -> dict[str, float]:
    a = np.asarray(values, dtype=float)
    return {"min": float(a.min()), "median": float(np.median(a)), "max": float(a.max())} if a.size else {}
