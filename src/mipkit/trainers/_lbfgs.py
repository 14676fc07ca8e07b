"""L-BFGS for many independent problems at once, each with exactly the iterates it would have alone.

Every quantity of model ``m`` (its iterate, gradient, curvature pairs, line-search step, stopping test) is
computed from model ``m``'s own numbers only, by row-wise NumPy operations, so the path of one model does not
depend on which other models share the batch (see :func:`batched_lbfgs`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["batched_lbfgs"]

ARMIJO = 1e-4
MAX_LINE_SEARCH = 50
CURVATURE_EPS = 1e-10

STATUS = {
    0: "running",
    1: "gradient below tol",
    2: "no progress (ftol)",
    3: "line search failed",
    4: "max_iter reached",
}


def batched_lbfgs(
    fun: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    theta0: np.ndarray,
    *,
    max_iter: int = 500,
    tol: float = 1e-6,
    ftol: float = 1e-12,
    history: int = 10,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Minimise ``M`` smooth functions ``f_m`` with limited-memory BFGS (Nocedal & Wright, Alg. 7.4/7.5).

    Each iteration takes the two-loop recursion direction ``d = -H_m g`` (initial Hessian
    ``gamma I`` with ``gamma = s'y / y'y`` of the newest accepted pair), and a backtracking line search from
    ``t = 1`` (``t = min(1, 1 / max|g|)`` at the first iteration) halving ``t`` until Armijo's condition
    ``f(x + t d) <= f(x) + 1e-4 t g'd`` holds. Pairs with ``s'y <= 1e-10 |s| |y|`` are stored with weight 0
    (skipped). A model stops when ``max|g| <= tol``, when ``f`` decreases by at most
    ``ftol * max(|f|, 1)``, when the line search fails, or at ``max_iter``.

    Parameters
    ----------
    fun : callable
        ``fun(theta, rows) -> (f, g)``: the objectives (shape ``(k,)``) and gradients (``(k, p)``) of the
        models ``rows`` (int array of length ``k``) at ``theta`` (``(k, p)``). Row ``j`` of the output must
        depend only on row ``j`` of the input and on model ``rows[j]``.
    theta0 : array of shape (M, p)
        Starting points.
    max_iter, tol, ftol, history
        See above.

    Returns
    -------
    theta : ndarray (M, p)
    n_iter : ndarray of int (M,)
    status : ndarray of int (M,)
        ``1`` gradient below ``tol``, ``2`` no progress, ``3`` line search failed, ``4`` ``max_iter``
        reached (see :data:`STATUS`).
    """
    theta = np.array(theta0, dtype=np.float64, copy=True)
    M, p = theta.shape
    f, g = fun(theta, np.arange(M))
    f = np.array(f, dtype=np.float64)
    g = np.array(g, dtype=np.float64)
    memory = _Memory(M, history, p)
    n_iter = np.zeros(M, dtype=np.int64)
    status = np.zeros(M, dtype=np.int64)
    status[np.max(np.abs(g), axis=1) <= tol] = 1
    for it in range(max_iter):
        A = np.flatnonzero(status == 0)
        if A.size == 0:
            break
        d, gd = memory.direction(g[A], A, it)
        t = np.minimum(1.0, 1.0 / np.max(np.abs(g[A]), axis=1)) if it == 0 else np.ones(A.size)
        f_new, g_new, accepted = _line_search(fun, theta, f, A, d, gd, t)
        status[A[~accepted]] = 3
        if not np.any(accepted):
            continue
        acc = A[accepted]
        s = t[accepted, None] * d[accepted]
        memory.store(acc, it, s, g_new[accepted] - g[acc])
        f_old = f[acc]
        theta[acc] = theta[acc] + s
        f[acc] = f_new[accepted]
        g[acc] = g_new[accepted]
        n_iter[acc] += 1
        small_grad = np.max(np.abs(g[acc]), axis=1) <= tol
        stalled = (f_old - f[acc]) <= ftol * np.maximum(np.maximum(np.abs(f_old), np.abs(f[acc])), 1.0)
        status[acc[small_grad]] = 1
        status[acc[~small_grad & stalled]] = 2
    status[status == 0] = 4
    return theta, n_iter, status


class _Memory:
    """The curvature pairs of every model: the newest ``history`` steps ``s`` and gradient changes ``y`` (in
    a ring, slot ``it % history``), their weights ``rho = 1 / s'y`` (0: skipped) and ``gamma = s'y / y'y``."""

    def __init__(self, M: int, history: int, p: int) -> None:
        self.history = history
        self.S = np.zeros((M, history, p))
        self.Yh = np.zeros((M, history, p))
        self.rho = np.zeros((M, history))
        self.gamma = np.ones(M)

    def direction(self, gA: np.ndarray, A: np.ndarray, it: int) -> tuple[np.ndarray, np.ndarray]:
        """``(d, g'd)`` of the models ``A``: the two-loop recursion's ``-H g``, or ``-g`` where that is not
        a descent direction."""
        S, Yh, rho, history = self.S, self.Yh, self.rho, self.history
        q = gA.copy()
        stored = min(it, history)
        alphas = np.zeros((A.size, stored))
        for j in range(stored):  # newest -> oldest
            slot = (it - 1 - j) % history
            a = rho[A, slot] * np.sum(S[A, slot] * q, axis=1)
            alphas[:, j] = a
            q -= a[:, None] * Yh[A, slot]
        r = self.gamma[A][:, None] * q
        for j in reversed(range(stored)):  # oldest -> newest
            slot = (it - 1 - j) % history
            b = rho[A, slot] * np.sum(Yh[A, slot] * r, axis=1)
            r += (alphas[:, j] - b)[:, None] * S[A, slot]
        d = -r
        gd = np.sum(gA * d, axis=1)
        uphill = ~(gd < 0)
        if np.any(uphill):
            d[uphill] = -gA[uphill]
            gd[uphill] = -np.sum(gA[uphill] * gA[uphill], axis=1)
        return d, gd

    def store(self, acc: np.ndarray, it: int, s: np.ndarray, yv: np.ndarray) -> None:
        """Keep the pair ``(s, y)`` of the models ``acc`` at iteration ``it`` (weight 0 without curvature)."""
        sy = np.sum(s * yv, axis=1)
        yy = np.sum(yv * yv, axis=1)
        ss = np.sum(s * s, axis=1)
        good = sy > CURVATURE_EPS * np.sqrt(ss * yy)
        slot = it % self.history
        self.S[acc, slot] = s
        self.Yh[acc, slot] = yv
        self.rho[acc, slot] = np.where(good, 1.0 / np.where(good, sy, 1.0), 0.0)
        self.gamma[acc] = np.where(good, sy / np.where(good, yy, 1.0), self.gamma[acc])


def _line_search(
    fun: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    theta: np.ndarray,
    f: np.ndarray,
    A: np.ndarray,
    d: np.ndarray,
    gd: np.ndarray,
    t: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backtracking from the steps ``t`` (halved in place until Armijo's condition holds) for the models
    ``A``: ``(f, g, accepted)`` at the accepted points."""
    f_new = np.empty(A.size)
    g_new = np.empty((A.size, theta.shape[1]))
    searching = np.ones(A.size, dtype=bool)
    for _ in range(MAX_LINE_SEARCH):
        idx = np.flatnonzero(searching)
        if idx.size == 0:
            break
        f_try, g_try = fun(theta[A[idx]] + t[idx, None] * d[idx], A[idx])
        ok = f_try <= f[A[idx]] + ARMIJO * t[idx] * gd[idx]
        f_new[idx[ok]] = f_try[ok]
        g_new[idx[ok]] = g_try[ok]
        searching[idx[ok]] = False
        t[idx[~ok]] *= 0.5
    return f_new, g_new, ~searching
