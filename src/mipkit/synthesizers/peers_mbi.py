"""AIM and MST on private-pgm's ``mbi`` (the ``synth`` extra): the marginal-based DP synthesizers.

Both measure noisy marginals with the Gaussian mechanism, fit a graphical model to them with ``mbi``'s
mirror descent, and sample from it; they are accounted in zero-concentrated DP (rho-zCDP) and stated as
``(epsilon, delta)``-DP for add/remove neighbours through the conversion of Canonne, Kamath & Steinke
(2020, Prop. 3; :func:`cdp_delta`), as their authors do.

* MST (McKenna, Miklau & Sheldon, "Winning the NIST Contest", JPC 2021): a third of rho on the 1-way
  marginals, a third on choosing a maximum spanning tree of 2-way marginals with the exponential mechanism,
  a third on measuring them.
* AIM (McKenna, Mullins, Sheldon & Miklau, "AIM: An Adaptive and Iterative Mechanism", VLDB 2022):
  :mod:`mipkit.synthesizers.aim` on the shared parts here, its refits in NumPy
  (:mod:`mipkit.synthesizers.aim_descent`).

The tables are discretised from the public domain (:class:`~mipkit.synthesizers.preprocess.TabularEncoder`'s
domain): numeric columns into ``bins`` equal-width bins of their range (decoded uniformly within the bin,
rounded for integer columns), categories as codes, missing values as a code of their own. MST's domain
compression and AIM's structural zeros are left out.

``mbi`` sees the columns by position (attributes ``0 .. d-1``), never by name: it orders attributes by
iterating Python sets (its sampler conditions each column on ``tuple(set(...))`` of the columns drawn
before), and a set of strings iterates in an order that changes with every process (string hashing is
salted per process), so with names the same seed gave different synthetic tables from one run to the next
(utility AUC 0.895 and 0.899 in two runs of AIM on Adult at epsilon 3). Integers hash to themselves: the
order, and the table, are the same in every process. Cliques are turned back into column names wherever
they are reported.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special

from mipkit._progress import Progress, Tally
from mipkit._random import check_noise_seed, check_random_state, noise_generator, noise_source, spawn_seed
from mipkit._validation import MipkitValueError
from mipkit.synthesizers._torch import require
from mipkit.synthesizers.preprocess import MISSING, check_domain, infer_domain

__all__ = ["MSTSynthesizer", "cdp_delta", "cdp_rho", "drop_compiled_programs_if_many"]


def cdp_delta(rho: float, epsilon: float) -> float:
    """delta of rho-zCDP at epsilon: ``inf_{a > 1} exp((a-1)(a rho - eps)) / (a-1) (1 - 1/a)^a``
    (Canonne, Kamath & Steinke 2020, Prop. 3)."""
    if rho <= 0.0:
        return 0.0

    def log_delta(a: float) -> float:
        return (a - 1.0) * (a * rho - epsilon) - math.log(a - 1.0) + a * math.log1p(-1.0 / a)

    amax = max(2.0, (epsilon + 1.0) / (2.0 * rho) + 2.0)
    res = optimize.minimize_scalar(
        log_delta, bounds=(1.0 + 1e-9, amax), method="bounded", options={"xatol": 1e-10}
    )
    return float(min(math.exp(min(res.fun, 0.0)), 1.0))


def cdp_rho(epsilon: float, delta: float) -> float:
    """Largest rho whose :func:`cdp_delta` at ``epsilon`` is at most ``delta`` (bisection)."""
    lo, hi = 0.0, max(epsilon, 1.0)
    while cdp_delta(hi, epsilon) <= delta:
        hi *= 2.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if cdp_delta(mid, epsilon) <= delta else (lo, mid)
    return lo


#: Share of the kernel's memory-map limit above which :func:`drop_compiled_programs_if_many` acts.
MAP_SHARE = 1 / 3


def memory_maps() -> tuple[int, int] | None:
    """``(maps in use, limit)`` of this process on Linux (``/proc``), None elsewhere."""
    try:
        with open("/proc/self/maps", "rb") as f:
            used = sum(1 for _ in f)
        with open("/proc/sys/vm/max_map_count") as f:
            return used, int(f.read())
    except (OSError, ValueError):
        return None


def drop_compiled_programs_if_many() -> bool:
    """Clear JAX's caches of compiled programs when they hold more than :data:`MAP_SHARE` of the maps.

    mbi compiles new XLA programs for every model structure and JAX keeps them all, each in memory maps of
    its own: about 9,000 maps a round of AIM on BankChurners, so a run reaches Linux's default limit of
    65,530 maps around its seventh round and dies with a segmentation fault. Below the threshold the
    programs are kept, so small fits, which reuse them, do not recompile them
    (``benchmarks/aim_memory_maps.py``). Returns whether it cleared.
    """
    maps = memory_maps()
    if maps is None or maps[0] <= MAP_SHARE * maps[1]:
        return False
    import jax

    jax.clear_caches()
    return True


class _Discretiser:
    """Columns <-> integer codes from the public domain (module docstring)."""

    def __init__(self, data: pd.DataFrame, domain: dict | None, bins: int) -> None:
        self.domain = infer_domain(data) if domain is None else check_domain(domain, data)
        self.domain_source = "data" if domain is None else "given"
        self.columns = [str(c) for c in data.columns]
        self.bins = bins
        self.sizes: dict[str, int] = {}
        for c in self.columns:
            spec = self.domain[c]
            base = self.bins if spec["type"] == "numeric" else len(spec["categories"])
            self.sizes[c] = base + int(bool(spec.get("missing", False)))

    @property
    def attributes(self) -> list[int]:
        """The columns as ``mbi`` sees them: their positions (module docstring)."""
        return list(range(len(self.columns)))

    def names(self, clique: tuple) -> list[str]:
        """The column names of a clique of positions."""
        return [self.columns[i] for i in clique]

    def encode_positions(self, data: pd.DataFrame) -> dict[int, np.ndarray]:
        """:meth:`encode`, keyed by column position (``mbi``'s attributes)."""
        codes = self.encode(data)
        return {i: codes[c] for i, c in enumerate(self.columns)}

    def encode(self, data: pd.DataFrame) -> dict[str, np.ndarray]:
        out = {}
        for c in self.columns:
            spec, s = self.domain[c], data[c]
            if spec["type"] == "numeric":
                lo, hi = float(spec["min"]), float(spec["max"])
                v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
                w = (hi - lo) / self.bins if hi > lo else 1.0
                code = np.clip(np.floor((np.nan_to_num(v, nan=lo) - lo) / w), 0, self.bins - 1).astype(int)
                out[c] = np.where(np.isnan(v), self.bins, code)
            else:
                index = {k: i for i, k in enumerate(spec["categories"])}
                miss = len(spec["categories"])
                out[c] = s.map(
                    lambda x, index=index, miss=miss: miss if pd.isna(x) else index.get(str(x), miss)
                )
                out[c] = out[c].to_numpy(dtype=int)
        return out

    def decode(self, codes: dict[int, np.ndarray], rng: np.random.Generator) -> pd.DataFrame:
        """Records from codes keyed by column position."""
        cols = {}
        for i, c in enumerate(self.columns):
            spec, k = self.domain[c], np.asarray(codes[i], dtype=int)
            if spec["type"] == "numeric":
                lo, hi = float(spec["min"]), float(spec["max"])
                w = (hi - lo) / self.bins
                v = lo + (np.minimum(k, self.bins - 1) + rng.random(k.size)) * w
                v = np.clip(v, lo, hi)
                if spec.get("integer", False):
                    v = np.rint(v)
                cols[c] = np.where(k >= self.bins, np.nan, v)
            else:
                cats = np.asarray(list(spec["categories"]) + [MISSING], dtype=object)
                pick = cats[np.minimum(k, len(cats) - 1)]
                cols[c] = np.where(pick == MISSING, None, pick)
        return pd.DataFrame(cols)


class _MarginalSynth:
    """Shared parts of AIM and MST: discretisation, Gaussian measurements, mirror-descent fits.

    ``rng_``, the generator of the measurement noise and of the exponential-mechanism selections, is
    :func:`mipkit._random.noise_generator` of ``noise_seed``: OS entropy unless a ``noise_seed`` is given
    (then the same fit is reproducible, and not private against anyone who holds ``noise_seed``).
    ``random_state`` seeds only the sampling of synthetic records from the fitted model.
    """

    method = ""

    def __init__(
        self,
        *,
        epsilon: float = 3.0,
        delta: float = 1e-5,
        bins: int = 16,
        iters: int = 1000,
        domain: dict | None = None,
        random_state: int | None = 0,
        noise_seed: int | None = None,
        progress: Progress | None = None,
    ) -> None:
        if not epsilon > 0 or not 0 < delta < 1:
            raise MipkitValueError(
                f"{self.method} needs epsilon > 0 and delta in (0, 1). Got {epsilon}, {delta}."
            )
        self.epsilon, self.delta, self.bins, self.iters = float(epsilon), float(delta), int(bins), int(iters)
        self.domain, self.random_state, self.progress = domain, random_state, progress
        self.noise_seed = check_noise_seed(noise_seed, owner=self.method.upper())

    def _setup(self, data: pd.DataFrame) -> tuple[Any, Any, dict]:
        import warnings

        with warnings.catch_warnings():  # mbi warns about JAX settings on import
            warnings.simplefilter("ignore")
            mbi = require("mbi", extra="synth", what=self.method.upper())
        self._mbi = mbi
        self.disc_ = _Discretiser(data, self.domain, self.bins)
        dom = mbi.Domain(self.disc_.attributes, [self.disc_.sizes[c] for c in self.disc_.columns])
        ds = mbi.Dataset(self.disc_.encode_positions(data), dom)
        self.rng_ = noise_generator(self.noise_seed)  # measurements and selections: protective
        self.rho_ = cdp_rho(self.epsilon, self.delta)
        return dom, ds, {}

    def _measure(self, ds: Any, clique: tuple, sigma: float) -> Any:
        x = np.asarray(ds.project(clique).datavector(), dtype=float)
        y = x + self.rng_.normal(0.0, sigma, x.size)
        return self._mbi.LinearMeasurement(y, clique, stddev=sigma)

    def _estimate(self, dom: Any, measurements: list, iters: int, warm: Any = None, steps: Any = None) -> Any:
        """Mirror descent on the measurements; ``steps.add(n)`` after each block of ``n`` steps is done."""
        from mbi.estimation import CALLBACK_EVERY, MirrorDescent

        drop_compiled_programs_if_many()
        callback = None
        if steps is not None:
            import jax

            def callback(value: Any) -> None:
                jax.block_until_ready(value)  # the steps run asynchronously: count them once done
                steps.add(CALLBACK_EVERY)

        return MirrorDescent().estimate(dom, measurements, iters=iters, warm_start=warm, callback_fn=callback)

    def _step_counter(self, total: int) -> Tally | None:
        """The :class:`Tally` of :meth:`_estimate` (``"MST optimisation steps"``); None without progress."""
        return None if self.progress is None else Tally(self.progress, "MST optimisation steps", total)

    def sample(self, n_rows: int, *, random_state: int | None = None) -> pd.DataFrame:
        """``n_rows`` records from the fitted model (post-processing)."""
        rng = check_random_state(self.random_state if random_state is None else random_state)
        # mbi samples with NumPy's global generator: seed it from ours for this call, then restore it
        saved = np.random.get_state()  # noqa: NPY002 (the generator mbi uses)
        try:
            np.random.seed(spawn_seed(rng))  # noqa: NPY002
            syn = self.model_.synthetic_data(rows=int(n_rows)).to_dict()
        finally:
            np.random.set_state(saved)  # noqa: NPY002
        return self.disc_.decode(syn, rng)

    def _certificate(self, details: dict) -> Any:
        from mipkit.synthesizers.certificate import certificate_from_dp

        return certificate_from_dp(
            method=self.method,
            epsilon=self.epsilon,
            delta=self.delta,
            calibration={"rho": self.rho_, "accounting": "zCDP, Canonne-Kamath-Steinke conversion"},
            details={"bins": self.bins, "domain_source": self.disc_.domain_source, **details},
            noise_source=noise_source(self.noise_seed),
        )


def _exp_mech(scores: np.ndarray, eps: float, sensitivity: float, rng: np.random.Generator) -> int:
    """Exponential mechanism: index ``i`` with probability proportional to ``exp(eps q_i / (2 sens))``."""
    logits = 0.5 * eps / sensitivity * scores
    p = np.exp(logits - special.logsumexp(logits))
    return int(rng.choice(scores.size, p=p / p.sum()))


class MSTSynthesizer(_MarginalSynth):
    """MST (module docstring): ``epsilon``, ``delta`` for add/remove neighbours."""

    method = "mst"

    def fit(self, data: pd.DataFrame) -> MSTSynthesizer:
        dom, ds, _ = self._setup(data)
        cols = self.disc_.attributes
        sigma = math.sqrt(3.0 / (2.0 * self.rho_))
        one = [self._measure(ds, (c,), sigma * math.sqrt(len(cols))) for c in cols]
        first = max(self.iters // 4, 50)
        from mbi.estimation import CALLBACK_EVERY as block  # the estimator runs whole blocks of steps

        steps = self._step_counter(block * (math.ceil(first / block) + math.ceil(self.iters / block)))
        est = self._estimate(dom, one, first, steps=steps)
        # fitted to 1-way marginals only, the model is a product distribution: its 2-way marginals are the
        # outer products of its 1-way ones (no inference per pair)
        ones = {c: np.asarray(est.project((c,)).datavector(), dtype=float) for c in cols}
        total = max(float(est.total), 1e-12)
        pairs = list(itertools.combinations(cols, 2))
        err = {}
        for a, b in pairs:
            xhat = np.outer(ones[a], ones[b]).ravel() / total
            err[(a, b)] = float(np.abs(np.asarray(ds.project((a, b)).datavector()) - xhat).sum())
        parent = {c: c for c in cols}

        def root(c: int) -> int:
            while parent[c] != c:
                parent[c] = parent[parent[c]]
                c = parent[c]
            return c

        eps_sel = math.sqrt(8.0 * (self.rho_ / 3.0) / max(len(cols) - 1, 1))
        chosen: list[tuple] = []
        for _ in range(len(cols) - 1):
            cand = [p for p in pairs if root(p[0]) != root(p[1])]
            pick = cand[_exp_mech(np.array([err[p] for p in cand]), eps_sel, 1.0, self.rng_)]
            parent[root(pick[0])] = root(pick[1])
            chosen.append(pick)
        two = [self._measure(ds, p, sigma * math.sqrt(len(chosen))) for p in chosen]
        self.model_ = self._estimate(dom, one + two, self.iters, steps=steps)
        self.certificate_ = self._certificate({"tree": [self.disc_.names(p) for p in chosen], "sigma": sigma})
        return self
