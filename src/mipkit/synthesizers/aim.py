"""AIM (McKenna, Mullins, Sheldon & Miklau, "AIM: An Adaptive and Iterative Mechanism for Differentially
Private Synthetic Data", VLDB 2022) as published in private-pgm's ``mechanisms/aim.py``.

The 1-way marginals first, then rounds that pick the worst-approximated marginal of the workload's downward
closure (exponential mechanism), measure it with Gaussian noise, refit the graphical model by mirror
descent from the last one's potentials, and halve the noise when a measurement barely moves the model; the
rounds end when the budget does (:mod:`mipkit.synthesizers.aim_plan`: the workload, with or without a
target column, and the budget rule). The model's size is capped at ``max_model_size`` MB times the share
of the budget spent, as published; discretisation, noise and accounting are those of
:mod:`mipkit.synthesizers.peers_mbi`. The refits are ``mbi``'s mirror descent run in NumPy
(:mod:`mipkit.synthesizers.aim_descent`: nothing compiled per model structure), the candidates' marginals
too (:mod:`mipkit.synthesizers.aim_marginals`).

Each round is recorded (``round_log_``, and ``round_log`` in the certificate's details): the clique
measured, its noise ``sigma``, the selection's ``epsilon`` (``epsilon^2 / 8``-zCDP), the rho spent so far,
whether the noise was halved after it, whether it was the last and whether it contains the target. They
are functions of the noisy measurements only (post-processing), as the model itself.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mipkit._progress import report
from mipkit._validation import MipkitValueError
from mipkit.synthesizers.aim_descent import mirror_descent
from mipkit.synthesizers.aim_marginals import model_marginals
from mipkit.synthesizers.aim_plan import (
    candidates,
    check_rounds,
    first_round,
    next_round,
    round_cost,
    workload,
)
from mipkit.synthesizers.checkpoint import load_checkpoint, run_key, run_params, save_checkpoint
from mipkit.synthesizers.peers_mbi import _exp_mech, _MarginalSynth

__all__ = ["AIMSynthesizer"]


class AIMSynthesizer(_MarginalSynth):
    """AIM (module docstring).

    Parameters
    ----------
    rounds : int, optional
        The horizon ``T`` that sets the starting noise (``16 d`` for ``d`` columns by default, as
        published); not a cap: the rounds end when the budget does.
    max_model_size : float
        The junction tree's size cap in MB (80, as published), scaled by the share of the budget spent.
    round_iters : int
        Mirror-descent iterations of the fit after each measurement, warm-started from the last model's
        potentials (1,000, as published); ``iters`` those of the final fit.
    target : str, optional
        A column the synthetic table will be used to predict: the workload becomes the 3-way marginals
        that contain it (:func:`mipkit.synthesizers.aim_plan.workload`).
    checkpoint : path, optional
        Keeps the state of the rounds (the noisy measurements, the model, the random generator, the budget
        spent, the round log) at most every ``checkpoint_seconds``: a fit killed part-way and started again
        with the same data and parameters continues from the last round saved and gives the result of an
        uninterrupted fit. The file holds the secret noise generator's state, from which the noise still
        to come follows: it is as sensitive as the data. It is removed when the fit ends.
    **kw
        ``epsilon``, ``delta``, ``bins``, ``iters``, ``domain``, ``random_state``, ``noise_seed``,
        ``progress`` (:mod:`mipkit.synthesizers.peers_mbi`).
    """

    method = "aim"

    def __init__(
        self,
        *,
        rounds: int | None = None,
        max_model_size: float = 80.0,
        round_iters: int = 1000,
        target: str | None = None,
        checkpoint: str | Path | None = None,
        checkpoint_seconds: float = 60.0,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        if target is not None and not isinstance(target, str):
            raise MipkitValueError(f"AIM's target must be a column name (text); got {target!r}.")
        self.rounds, self.max_model_size, self.round_iters = rounds, float(max_model_size), int(round_iters)
        self.target = target
        self.checkpoint = None if checkpoint is None else Path(checkpoint)
        self.checkpoint_seconds = float(checkpoint_seconds)

    def fit(self, data: pd.DataFrame) -> AIMSynthesizer:
        began = time.perf_counter()
        dom, ds, _ = self._setup(data)
        d = len(self.disc_.columns)
        self.horizon_ = check_rounds(16 * d if self.rounds is None else self.rounds, d)
        self.target_position_ = self._target_position()
        sizes = [self.disc_.sizes[c] for c in self.disc_.columns]
        self.workload_ = workload(sizes, self.target_position_)
        cand = candidates(self.workload_)
        answers = {cl: np.asarray(ds.project(cl).datavector(), dtype=float) for cl in cand}
        key = self._run_key(data)
        saved = self._load_checkpoint(key)
        self.resumed_from_ = 0 if saved is None else saved["t"]
        self.resumed_seconds_ = 0.0 if saved is None else float(saved["seconds"])
        if saved is None:
            sigma, eps, used = first_round(self.rho_, self.horizon_, d)
            state = {"t": 0, "done": False, "sigma": sigma, "eps": eps, "used": used, "log": []}
            meas = [self._measure(ds, (c,), sigma) for c in self.disc_.attributes]
            model = mirror_descent(dom, meas, self.round_iters)
        else:  # a killed fit: continue after the last round it saved
            state = {k: saved[k] for k in ("t", "done", "sigma", "eps", "used", "log")}
            meas, model = saved["meas"], saved["model"]
        clock = time.monotonic()
        while not state["done"]:
            model = self._round(state, dom, ds, cand, answers, meas, model)
            if self.checkpoint is not None and (
                state["done"] or time.monotonic() - clock >= self.checkpoint_seconds
            ):
                self._save_checkpoint(
                    key,
                    {**state, "seconds": self.resumed_seconds_ + time.perf_counter() - began},
                    meas,
                    model,
                )
                clock = time.monotonic()
            report(self.progress, "AIM rounds", min(state["t"], self.horizon_), self.horizon_)
        report(self.progress, "AIM rounds", self.horizon_, self.horizon_)  # the budget ends the rounds
        self.model_ = mirror_descent(dom, meas, self.iters, warm=model)
        if self.checkpoint is not None:
            self.checkpoint.unlink(missing_ok=True)
        self._record(state, meas)
        return self

    def _round(
        self, state: dict, dom: Any, ds: Any, cand: dict, answers: dict, meas: list, model: Any
    ) -> Any:
        """One round (module docstring); updates ``state`` and ``meas`` in place, returns the new model."""
        state["t"] += 1
        sigma, eps, last = next_round(self.rho_, state["used"], state["sigma"], state["eps"])
        state["used"] += round_cost(sigma, eps)
        cl = self._select(dom, model, cand, answers, sigma, eps, state["used"])
        before = model_marginals(model, [cl])[cl]
        meas.append(self._measure(ds, cl, sigma))
        model = mirror_descent(dom, meas, self.round_iters, warm=model)
        after = model_marginals(model, [cl])[cl]
        halve = not last and np.abs(after - before).sum() <= math.sqrt(2.0 / math.pi) * sigma * dom.size(cl)
        state["log"].append(
            {
                "round": state["t"], "clique": self.disc_.names(cl), "cells": int(dom.size(cl)),
                "sigma": sigma, "epsilon": eps, "rho_used": state["used"], "halved": bool(halve),
                "last": bool(last), "has_target": self.target_position_ in cl,
            }
        )  # fmt: skip
        state["sigma"], state["eps"] = (sigma / 2.0, eps * 2.0) if halve else (sigma, eps)
        state["done"] = last
        return model

    def _select(
        self, dom: Any, model: Any, cand: dict, answers: dict, sigma: float, eps: float, used: float
    ) -> tuple:
        """The exponential mechanism's pick among the candidates that keep the model within its size cap:
        score ``weight * (L1 error - sqrt(2 / pi) sigma cells)``, sensitivity the largest weight."""
        from mbi.clique_utils import downward_closure
        from mbi.junction_tree import hypothetical_model_size

        limit = self.max_model_size * used / self.rho_
        free = set(downward_closure(model.cliques))
        small = [
            cl for cl in cand if cl in free or hypothetical_model_size(dom, [*model.cliques, cl]) <= limit
        ]
        bias = math.sqrt(2.0 / math.pi) * sigma
        est = model_marginals(model, small)  # NumPy: no XLA program per candidate (aim_marginals)
        scores = np.array(
            [cand[cl] * (np.abs(answers[cl] - est[cl]).sum() - bias * dom.size(cl)) for cl in small]
        )
        return small[_exp_mech(scores, eps, max(cand[c] for c in small), self.rng_)]

    def _target_position(self) -> int | None:
        """The position of ``target`` among the columns; a name that is not one is refused."""
        if self.target is None:
            return None
        if self.target not in self.disc_.columns:
            cols = self.disc_.columns
            shown = ", ".join(map(repr, cols[:8])) + (", ..." if len(cols) > 8 else "")
            raise MipkitValueError(
                f"AIM's target {self.target!r} is not a column of the table; give one of {shown}."
            )
        return self.disc_.columns.index(self.target)

    def _record(self, state: dict, meas: list) -> None:
        """The fitted attributes and the certificate: rounds run, cliques measured, the round log."""
        self.rounds_, self.rho_used_, self.round_log_ = state["t"], state["used"], state["log"]
        self.measured_ = [self.disc_.names(m.clique) for m in meas]
        self.target_cliques_ = [r["clique"] for r in self.round_log_ if r["has_target"]]
        kind = "pairs" if self.target is None else "target triples"
        self.certificate_ = self._certificate(
            {
                "rounds": self.rounds_, "horizon": self.horizon_, "rho_used": self.rho_used_,
                "measured": self.measured_, "round_log": self.round_log_,
                "workload": {"kind": kind, "target": self.target, "marginals": len(self.workload_)},
                "target_cliques": self.target_cliques_, "round_iters": self.round_iters, "iters": self.iters,
                "max_model_size": self.max_model_size,
            }
        )  # fmt: skip

    # ------------------------------------------------------------------------------------------------
    def _run_key(self, data: pd.DataFrame) -> str:
        """Hash of what the fit depends on: the parameters, the public domain and the discretised data."""
        params = run_params(self, ("progress", "checkpoint", "checkpoint_seconds"))
        codes = self.disc_.encode(data)
        # "positions": mbi's attributes are column positions (peers_mbi); a checkpoint of a fit that named
        # them is another run's
        return run_key([params, self.disc_.domain, "positions"], [codes[c] for c in self.disc_.columns])

    def _save_checkpoint(self, key: str, state: dict, meas: list, model: Any) -> None:
        """The rounds so far: measurements (values, clique, noise), the model's potentials and marginals,
        the random generator and the loop's state, as one ``.npz`` (no pickles)."""
        arrays = {f"y{i}": np.asarray(m.noisy_measurement) for i, m in enumerate(meas)}
        meta = {
            **state,
            "rng": self.rng_.bit_generator.state,
            "cliques": [[int(a) for a in m.clique] for m in meas],
            "stddev": [float(m.stddev) for m in meas],
            "total": float(model.total),
        }
        for name in ("potentials", "marginals"):
            vec = getattr(model, name)
            meta[name] = {
                "attrs": [int(a) for a in vec.domain.attributes],
                "shape": [int(n) for n in vec.domain.shape],
                "cliques": [[int(a) for a in cl] for cl in vec.cliques],
            }
            arrays.update(
                {f"{name}{i}": np.asarray(vec.tables[cl].values) for i, cl in enumerate(vec.cliques)}
            )
        save_checkpoint(self.checkpoint, key, meta, arrays)

    def _load_checkpoint(self, key: str) -> dict | None:
        """The state saved by :meth:`_save_checkpoint` for this ``key``, rebuilt, or None."""
        if self.checkpoint is None:
            return None
        found = load_checkpoint(self.checkpoint, key)
        if found is None:
            return None
        meta, arrays = found
        from mbi.clique_vector import CliqueVector
        from mbi.factor import Factor
        from mbi.markov_random_field import MarkovRandomField

        def vector(name: str) -> Any:
            spec = meta[name]
            dom = self._mbi.Domain(spec["attrs"], spec["shape"])
            cliques = [tuple(cl) for cl in spec["cliques"]]
            tables = {
                cl: Factor(dom.project(cl), np.asarray(arrays[f"{name}{i}"], dtype=float))
                for i, cl in enumerate(cliques)
            }
            return CliqueVector(dom, cliques, tables)

        self.rng_.bit_generator.state = meta["rng"]
        meas = [
            self._mbi.LinearMeasurement(arrays[f"y{i}"], tuple(cl), stddev=sd)
            for i, (cl, sd) in enumerate(zip(meta["cliques"], meta["stddev"], strict=True))
        ]
        model = MarkovRandomField(
            potentials=vector("potentials"), marginals=vector("marginals"), total=meta["total"]
        )
        state = {k: meta[k] for k in ("t", "done", "sigma", "eps", "used", "log")}
        return {**state, "seconds": meta.get("seconds", 0.0), "meas": meas, "model": model}
