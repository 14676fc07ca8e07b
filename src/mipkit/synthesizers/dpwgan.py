"""DP-WGAN-GP (Pedersen, thesis ch. 3.2, Algorithm 1) with the bounds of ch. 3.1 and exact accounting.

What runs, per critic step (docs/synthesize.md; docs/theory.md sections 3, 8 and 10):

1. bound every component of one record's gradient over the whole input domain ``[0, 1]^d`` from the critic's
   current weights (:func:`~mipkit.synthesizers.bounds.critic_bounds`; no clipping, no per-sample gradients);
2. draw the batch by Poisson sampling at rate ``q`` (what the subsampled-Gaussian accounting assumes), a
   fake record and a mixing weight ``u ~ U[0, 1]`` per real record for the penalty, and ``m = q N`` fake
   records for the generator's term of the loss (no data: no noise needed);
3. release the centred sum of the real records' contributions plus Gaussian noise with standard deviation
   ``z_t`` times the step's sensitivity (:func:`~mipkit.synthesizers.noise.step_noise`), divide by ``m`` and
   take an Adam step. Algorithm 1 as printed draws noise of a fixed scale whatever the sensitivity (line 14),
   so the ratio of each step would depend on the run; here the ratios ``z_t`` are fixed before training (a
   constant, or a geometric schedule) and the noise follows the sensitivity.

The run is the composition of ``n_generator x n_critic`` Poisson-subsampled Gaussian steps with ratios
``z_t``: :class:`~mipkit.accounting.heterogeneous.HeterogeneousSubsampledGaussian`, accounted exactly by PLD.
The scale of the ratios is calibrated with :func:`mipkit.accounting.calibrate_noise` to ``(epsilon,
delta)`` or to any mipkit risk target, for the planned steps; the certificate composes the steps that ran.
"""

from __future__ import annotations

import io
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._progress import Progress, report
from mipkit._random import check_noise_seed, check_random_state, noise_generator, noise_source, spawn_seed
from mipkit._validation import (
    MipkitValueError,
    check_choice,
    check_delta,
    check_interval,
    check_positive,
    check_positive_int,
)
from mipkit.synthesizers._torch import require_torch
from mipkit.synthesizers.certificate import SynthesisCertificate, certificate_from_record, uncertified
from mipkit.synthesizers.checkpoint import read_checkpoint_bytes, run_key, run_params
from mipkit.synthesizers.dpwgan_training import Training, block_output
from mipkit.synthesizers.plan import RunPlan, Schedule, fixed_plan, plan_run
from mipkit.synthesizers.preprocess import TabularEncoder

__all__ = ["DPWGANGP"]

STAGE = "DP-WGAN-GP generator steps"


def _check_budget(
    epsilon: float | None, delta: float, target: Any, owner: str = "DPWGANGP"
) -> tuple[float | None, float]:
    """``(epsilon, delta)`` of a DP-WGAN: epsilon (default 3) unless a risk ``target`` replaces it, delta in
    (0, 1)."""
    if target is None:
        epsilon = check_positive("epsilon", 3.0 if epsilon is None else epsilon, owner=owner)
    elif epsilon is not None:
        raise MipkitValueError(f"Give either 'epsilon' or 'target' to {owner}, not both.")
    checked = check_delta(delta, owner=owner)
    if checked <= 0.0:
        raise MipkitValueError(f"The 'delta' parameter of {owner} must be in (0, 1). Got {delta!r} instead.")
    return epsilon, checked


class DPWGANGP:
    """Differentially private WGAN-GP for tables (Pedersen, thesis ch. 3), certified by PLD accounting.

    Parameters
    ----------
    epsilon : float, optional
        Target epsilon (with ``delta``) for the headline relation ``neighbours``; default 3 unless ``target``.
    delta : float, default=1e-5
    target : RiskTarget, optional
        Any mipkit risk target instead of ``epsilon`` (:mod:`mipkit.accounting.targets`); an ``EtaTarget`` is
        met for replace-one neighbours (the MIP game).
    neighbours : {"add_remove", "replace_one"}, default="add_remove"
        The relation of the headline epsilon. The certificate holds both (docs/synthesize.md).
    noise_shape : {"spherical", "scaled"}, default="spherical"
        Algorithm 1's spherical noise, or the centre-and-scale mechanism (thesis Thm 3.1.2).
    centre : bool, default=True
        Release centred sums (sensitivity: half the range of the bounds) or raw sums (largest absolute value).
    n_generator, n_critic : int, default=1000, 5
        Generator iterations and critic steps per generator iteration. The thesis runs 200,000 and the
        authors' HealthGAN code 100,000 generator iterations; on Adult (32,561 records) one iteration takes
        about 0.45 s on 2 cores (the bounds of five critic steps), so the sources' counts take 12-25 hours:
        1,000 (about 8 minutes) is the default, and docs/synthesize.md gives the sources' counts.
    sample_rate : float, default=0.1
        Poisson rate ``q`` (thesis: batch size ``N / 10``).
    gp_weight : float, default=10.0
        ``lambda``.
    critic_hidden : tuple of int, default=(64, 128, 256)
        The critic of ch. 3.3, LeakyReLU(``slope``) hidden layers.
    generator_hidden : tuple of float, default=(2.0, 1.5)
        Generator hidden widths as multiples of ``d`` (ch. 3.3: ``2d``, ``1.5d``), ReLU, sigmoid output.
    latent_dim : int, default=100
        Generator input, standard normal (the authors' HealthGAN code; ch. 3.3 prints ``U(0, 1)``).
    slope : float, default=0.2
    learning_rate : float, default=1e-4
        Adam's, for both networks (the authors' HealthGAN code).
    betas : tuple of float, default=(0.5, 0.9)
    noise_decay : float, default=1.0
        Ratio schedule: ``z_t`` falls geometrically from ``z`` to ``noise_decay * z`` over the run, in
        ``schedule_groups`` steps (1: one ratio for every step).
    schedule_groups : int, default=8
    noise_multiplier : float, optional
        Fix the scale ``z`` of the ratios instead of calibrating it (the certificate then says what it gives);
        0 trains without noise: the plain WGAN-GP of the thesis's comparison (the real records' terms
        averaged over the batch, no centring, no noise; nothing is certified).
    categorical_output : {"softmax", "sigmoid"}, default="softmax"
        Generator output of a categorical column's one-hot block: a softmax, so fake records lie on the
        simplex like the real ones and the first-layer bounds use it (much tighter), or the thesis's
        sigmoid (bounds over the whole box).
    domain : dict, optional
        Public domain of the columns (:class:`~mipkit.synthesizers.preprocess.TabularEncoder`).
    n_threads : int, optional, default=1
        Torch and BLAS threads during :meth:`fit` (one is fastest on a shared 2-core machine; None: leave).
    random_state : int, optional
        Seeds the initial weights, the fake records and the penalty's mixing weights.
    noise_seed : int, optional
        The Poisson batches and the Gaussian noise, which the accounting treats as unknown to the attacker,
        come from OS entropy unless this is given; with it the same ``random_state`` and ``noise_seed`` give
        the same generator, which then is not private against anyone who holds ``noise_seed``.
    progress : Progress, optional
        ``progress("DP-WGAN-GP generator steps", done, total)`` after each generator iteration (the library
        prints nothing).
    checkpoint : path, optional
        A file that keeps the training state (networks, optimisers, random generators, step, history) every
        ``checkpoint_every`` generator iterations. A :meth:`fit` killed part-way and started again with the
        same data and parameters continues from it, and ends with exactly the networks of an uninterrupted
        run; a checkpoint of other data or parameters is ignored and replaced. Removed when :meth:`fit`
        ends. It holds the secret noise generator's state, from which the batches and noise still to come
        follow: it is as sensitive as the data, keep it where the data are.
    checkpoint_every : int, default=10
    """

    method = "dpwgan-gp"

    def __init__(
        self,
        *,
        epsilon: float | None = None,
        delta: float = 1e-5,
        target: Any = None,
        neighbours: str = "add_remove",
        noise_shape: str = "spherical",
        centre: bool = True,
        n_generator: int = 1000,
        n_critic: int = 5,
        sample_rate: float = 0.1,
        gp_weight: float = 10.0,
        critic_hidden: tuple[int, ...] = (64, 128, 256),
        generator_hidden: tuple[float, ...] = (2.0, 1.5),
        latent_dim: int = 100,
        slope: float = 0.2,
        learning_rate: float = 1e-4,
        betas: tuple[float, float] = (0.5, 0.9),
        noise_decay: float = 1.0,
        schedule_groups: int = 8,
        noise_multiplier: float | None = None,
        categorical_output: str = "softmax",
        domain: dict | None = None,
        n_threads: int | None = 1,
        random_state: int | None = 0,
        noise_seed: int | None = None,
        progress: Progress | None = None,
        checkpoint: str | Path | None = None,
        checkpoint_every: int = 10,
    ) -> None:
        owner = "DPWGANGP"
        self.epsilon, self.delta = _check_budget(epsilon, delta, target)
        self.target = target
        self.neighbours = check_choice("neighbours", neighbours, ("add_remove", "replace_one"), owner=owner)
        self.noise_shape = check_choice("noise_shape", noise_shape, ("spherical", "scaled"), owner=owner)
        self.centre = bool(centre)
        self.n_generator = check_positive_int("n_generator", n_generator, owner=owner)
        self.n_critic = check_positive_int("n_critic", n_critic, owner=owner)
        self.sample_rate = check_interval("sample_rate", sample_rate, 0.0, 1.0, closed="right", owner=owner)
        self.gp_weight = check_interval("gp_weight", gp_weight, 0.0, math.inf, closed="left", owner=owner)
        self.critic_hidden = tuple(check_positive_int("critic_hidden", h, owner=owner) for h in critic_hidden)
        self.generator_hidden = tuple(
            float(check_positive("generator_hidden", h, owner=owner)) for h in generator_hidden
        )
        self.latent_dim = check_positive_int("latent_dim", latent_dim, owner=owner)
        self.slope = check_interval("slope", slope, 0.0, 1.0, closed="both", owner=owner)
        self.learning_rate = check_positive("learning_rate", learning_rate, owner=owner)
        self.betas = (float(betas[0]), float(betas[1]))
        self.noise_decay = check_interval("noise_decay", noise_decay, 0.0, 1.0, closed="right", owner=owner)
        self.schedule_groups = check_positive_int("schedule_groups", schedule_groups, owner=owner)
        self.noise_multiplier = (
            None
            if noise_multiplier is None
            else check_interval(
                "noise_multiplier", noise_multiplier, 0.0, math.inf, closed="left", owner=owner
            )
        )
        self.categorical_output = check_choice(
            "categorical_output", categorical_output, ("softmax", "sigmoid"), owner=owner
        )
        self.domain = domain
        self.n_threads = (
            None if n_threads is None else check_positive_int("n_threads", n_threads, owner=owner)
        )
        self.random_state = random_state
        self.noise_seed = check_noise_seed(noise_seed, owner=owner)
        self.progress = progress
        self.checkpoint = None if checkpoint is None else Path(checkpoint)
        self.checkpoint_every = check_positive_int("checkpoint_every", checkpoint_every, owner=owner)
        self.certificate_: SynthesisCertificate | None = None

    # ------------------------------------------------------------------------------------------------
    def _networks(self, d: int, simplices: list[slice] | None = None) -> tuple[Any, Any]:
        torch = require_torch()
        nn = torch.nn
        layers: list[Any] = []
        width = d
        for h in self.critic_hidden:
            layers += [nn.Linear(width, h), nn.LeakyReLU(self.slope)]
            width = h
        layers.append(nn.Linear(width, 1))
        critic = nn.Sequential(*layers)
        gen: list[Any] = []
        width = self.latent_dim
        for mult in self.generator_hidden:
            h = max(int(mult * d), 1)
            gen += [nn.Linear(width, h), nn.ReLU()]
            width = h
        gen += [nn.Linear(width, d), block_output(torch, d, simplices or [])]
        return critic, nn.Sequential(*gen)

    def plan(self, n_records: int) -> RunPlan:
        """The calibrated plan for ``n_records`` training records (noise multipliers of every step)."""
        schedule = Schedule(
            delta=self.delta,
            neighbours=self.neighbours,
            sample_rate=self.sample_rate,
            steps=self.n_generator * self.n_critic,
            noise_decay=self.noise_decay,
            groups=self.schedule_groups,
        )
        if self.noise_multiplier is not None:
            return fixed_plan(self.noise_multiplier, schedule)
        return plan_run(schedule, epsilon=self.epsilon, target=self.target, n_records=n_records)

    def fit(self, data: pd.DataFrame) -> DPWGANGP:
        """Train on a table.

        Sets ``encoder_``, ``critic_``, ``generator_``, ``certificate_`` (the steps that ran) and ``history_``
        (per step: sensitivity, its critic and penalty parts, noise, batch size).
        """
        torch = require_torch()
        from threadpoolctl import threadpool_limits

        clock = time.perf_counter()
        self.encoder_ = TabularEncoder(domain=self.domain).fit(data)
        x_np = self.encoder_.transform(data)
        n, d = x_np.shape
        plan = self.plan(n)
        before = torch.get_num_threads()
        try:
            if self.n_threads is not None:
                torch.set_num_threads(self.n_threads)
            with threadpool_limits(limits=self.n_threads):
                steps = self._train(torch, x_np, plan)
        finally:
            torch.set_num_threads(before)
        seconds = time.perf_counter() - clock + self.resumed_seconds_  # a resumed fit: the killed run's too
        h = self.history_
        method = "dpwgan-gp-scaled" if self.noise_shape == "scaled" else "dpwgan-gp"
        if self.noise_multiplier == 0.0:
            self.certificate_ = uncertified(method, details={"noise_multiplier": 0.0, "fit_seconds": seconds})
            return self
        self.certificate_ = certificate_from_record(
            method=method,
            noise_source=noise_source(self.noise_seed),
            record=plan.record_for(steps),
            delta=self.delta,
            neighbours=plan.neighbours,
            calibration=plan.calibration,
            details={
                "n_records": n,
                "dim": d,
                "sample_rate": self.sample_rate,
                "expected_batch": max(int(round(self.sample_rate * n)), 1),
                "steps_planned": plan.steps,
                "steps_run": steps,
                "n_generator": self.n_generator,
                "n_critic": self.n_critic,
                "noise_shape": self.noise_shape,
                "centred": self.centre,
                "gp_weight": self.gp_weight,
                "categorical_output": self.categorical_output,
                "sensitivity": _summary(h["sensitivity"]),
                "critic_range": _summary(h["critic_range"]),
                "penalty_radius": _summary(h["penalty_radius"]),
                "noise_std_rms": _summary(h["noise_std_rms"]),
                "domain_source": self.encoder_.domain_source,
                "fit_seconds": seconds,
            },
        )
        return self

    def _train(self, torch: Any, x_np: np.ndarray, plan: RunPlan) -> int:
        """Algorithm 1 with Poisson batches and calibrated noise; returns the number of critic steps run."""
        rng = check_random_state(self.random_state)
        gen = torch.Generator().manual_seed(spawn_seed(rng))
        torch.manual_seed(spawn_seed(rng))
        secret = noise_generator(self.noise_seed)  # the Poisson batches and the noise
        simplices = self.encoder_.simplices() if self.categorical_output == "softmax" else []
        self.critic_, self.generator_ = self._networks(x_np.shape[1], simplices)
        run = Training(torch, self, x_np, (gen, secret), simplices)
        began = time.perf_counter()
        key = self._run_key(x_np, plan)
        saved = self._load_checkpoint(torch, key)
        start = 0
        if saved is not None:  # a killed fit: continue where its last checkpoint left off
            start = run.restore(saved)
            self.resumed_from_, self.resumed_seconds_ = start, float(saved.get("seconds", 0.0))
            report(self.progress, STAGE, start, self.n_generator)
        for it in range(start, self.n_generator):
            for _ in range(self.n_critic):
                run.critic_step(float(plan.noise_multipliers[run.step]))
            run.generator_step()
            if self.checkpoint is not None and (it + 1) % self.checkpoint_every == 0:
                seconds = self.resumed_seconds_ + time.perf_counter() - began
                self._save_checkpoint(torch, run.state(key, it + 1, seconds))
            report(self.progress, STAGE, it + 1, self.n_generator)
        if self.checkpoint is not None:
            self.checkpoint.unlink(missing_ok=True)
        self.history_ = {k: np.asarray(v) for k, v in run.hist.items()}
        return run.step

    # ------------------------------------------------------------------------------------------------
    def _run_key(self, x_np: np.ndarray, plan: RunPlan) -> str:
        """Hash of what the run depends on: the data (encoded, and its domain), the parameters, the ratios."""
        params = run_params(self, ("progress", "checkpoint", "checkpoint_every", "n_threads"))
        domain = {"domain": self.encoder_.domain, "columns": self.encoder_.columns}
        return run_key([params, domain], [x_np, np.asarray(plan.noise_multipliers, dtype=float)])

    def _load_checkpoint(self, torch: Any, key: str) -> dict | None:
        """The saved state of an unfinished fit with this ``key``, or None (no file, or another run's)."""
        self.resumed_from_, self.resumed_seconds_ = 0, 0.0
        raw = None if self.checkpoint is None else read_checkpoint_bytes(self.checkpoint)  # no symlink
        if raw is None:
            return None
        try:
            saved = torch.load(io.BytesIO(raw), weights_only=True)  # tensors and plain values only
        except Exception:  # a file that is not a checkpoint: replaced by this run's
            return None
        return saved if isinstance(saved, dict) and saved.get("key") == key else None

    def _save_checkpoint(self, torch: Any, state: dict) -> None:
        """Write the training state whole or not at all (a kill mid-write keeps the previous one)."""
        from mipkit._runfolder import atomic_write

        atomic_write(self.checkpoint, lambda f: torch.save(state, f))

    def sample(self, n_rows: int, *, random_state: int | None = None) -> pd.DataFrame:
        """``n_rows`` synthetic records (post-processing of the trained generator: no privacy cost)."""
        torch = require_torch()
        if not hasattr(self, "generator_"):
            raise MipkitValueError("This DPWGANGP is not fitted yet; call fit(data) first.")
        n_rows = check_positive_int("n_rows", n_rows, owner="DPWGANGP.sample")
        seed = spawn_seed(self.random_state if random_state is None else random_state)
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            out = self.generator_(torch.randn(n_rows, self.latent_dim, generator=gen)).numpy()
        return self.encoder_.inverse_transform(out, rng=np.random.default_rng(spawn_seed(seed)))


def _summary(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=float)
    return {"min": float(a.min()), "median": float(np.median(a)), "max": float(a.max())} if a.size else {}
