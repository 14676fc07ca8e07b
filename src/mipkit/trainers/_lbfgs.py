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
    everyone = np.arange(M)
    f, g = fun(theta, everyone)
    f = np.array(f, dtype=np.float64)
    g = np.array(g, dtype=np.float64)
    S = np.zeros((M, history, p))
    Yh = np.zeros((M, history, p))
    rho = np.zeros((M, history))
    gamma = np.ones(M)
    n_iter = np.zeros(M, dtype=np.int64)
    status = np.zeros(M, dtype=np.int64)
    status[np.max(np.abs(g), axis=1) <= tol] = 1
    for it in range(max_iter):
        A = np.flatnonzero(status == 0)
        if A.size == 0:
            break
        gA = g[A]
        q = gA.copy()
        stored = min(it, history)
        alphas = np.zeros((A.size, stored))
        for j in range(stored):  # newest -> oldest
            slot = (it - 1 - j) % history
            a = rho[A, slot] * np.sum(S[A, slot] * q, axis=1)
            alphas[:, j] = a
            q -= a[:, None] * Yh[A, slot]
        r = gamma[A][:, None] * q
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
        t = np.ones(A.size)
        if it == 0:
            t = np.minimum(1.0, 1.0 / np.max(np.abs(gA), axis=1))
        f_new = np.empty(A.size)
        g_new = np.empty((A.size, p))
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
        accepted = ~searching
        status[A[searching]] = 3
        if not np.any(accepted):
            continue
        acc = A[accepted]
        s = t[accepted, None] * d[accepted]
        yv = g_new[accepted] - g[acc]
        sy = np.sum(s * yv, axis=1)
        yy = np.sum(yv * yv, axis=1)
        ss = np.sum(s * s, axis=1)
        good = sy > CURVATURE_EPS * np.sqrt(ss * yy)
        slot = it % history
        S[acc, slot] = s
        Yh[acc, slot] = yv
        rho[acc, slot] = np.where(good, 1.0 / np.where(good, sy, 1.0), 0.0)
        gamma[acc] = np.where(good, sy / np.where(good, yy, 1.0), gamma[acc])
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
