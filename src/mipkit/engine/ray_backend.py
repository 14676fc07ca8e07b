"""Ray backend of :func:`mipkit.engine.run_fits` (the ``distributed`` extra).

``X``, ``y`` and the query rows are put in Ray's object store once; each task is a Ray task with one CPU that
runs the same fit function as the local backend; the driver waits on the results one at a time
(``ray.wait``) and hands each to the caller - which commits it to the ledger - as soon as it arrives.

Fault tolerance: a fit is a pure function of its inputs (no side effect, same output on every run), so Ray
may run it again. A task whose worker process dies - killed, out of memory, its worker node lost - is
resubmitted up to :data:`MAX_RETRIES` times (Ray's ``max_retries``; an exception raised by the fit itself is
not retried). Each task's result reaches the caller once, from its one ``ObjectRef``, so a retried fit is
committed once. Not survived: the loss of the head node, or of the node this driver is attached to (it holds
the data put in the object store); the driver's own death is what the ledger's resume is for.

A run that stops early (a failed fit, Ctrl-C) cancels its pending fits with ``force=True``: a running fit's
worker process is ended, not interrupted - an interrupt (Ray raises ``KeyboardInterrupt`` in the task) that
lands in the middle of a worker's first imports leaves half-imported modules in a worker that the next run
of the same driver would reuse.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from mipkit._validation import MipkitValueError

__all__ = ["MAX_RETRIES", "import_ray", "ray_session", "run_ray"]

MAX_RETRIES = 3
"""Times Ray resubmits a fit whose worker process or node died (Ray's ``max_retries`` of the task)."""

RAY_MISSING = "The Ray backend needs the 'distributed' extra: pip install mipkit[distributed]"


def import_ray() -> Any:
    """Import ray, or raise :class:`MipkitValueError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise MipkitValueError(RAY_MISSING) from None
    return ray


@contextmanager
def _node_address_mode(ray: Any, *, loopback: bool) -> Iterator[None]:
    """Make Ray take ``127.0.0.1`` as this node's address (``loopback``) or its network address.

    Ray replaces a loopback ``_node_ip_address`` with the machine's network address unless its "no
    cluster" mode is on (``ray._private.ray_constants.ENABLE_RAY_CLUSTER``, from the environment variable
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``); with the node's address ``127.0.0.1`` its gRPC servers (GCS,
    raylet, workers) and agents listen on loopback only. The constant is set for the call of ``ray.init``
    and restored after it.
    """
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is None or not hasattr(constants, "ENABLE_RAY_CLUSTER"):  # pragma: no cover - other Ray
        yield
        return
    before = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = not loopback
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = before


@contextmanager
def ray_session(*, n_cpus: int, address: str | None) -> Iterator[Any]:
    """Yield the ``ray`` module with Ray initialised; shut it down at the end if it was started here.

    ``address`` given: connect to that cluster (``ray.init(address=address)``). Otherwise start a local
    instance with ``n_cpus`` CPUs bound to loopback (``127.0.0.1``: nothing of it listens on the network),
    no dashboard and worker logs not forwarded. Ray's own log messages below ERROR (its start-up notices,
    the token-authentication notice) are not shown. If Ray is already initialised in this process (for
    instance with a ``runtime_env`` of your own), that instance is used and left running.
    """
    ray = import_ray()
    started_here = False
    if not ray.is_initialized():
        quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
        try:
            if address is not None:
                with _node_address_mode(ray, loopback=False):
                    ray.init(address=address, **quiet)
            else:
                with _node_address_mode(ray, loopback=True):
                    ray.init(
                        num_cpus=int(n_cpus),
                        include_dashboard=False,
                        _node_ip_address="127.0.0.1",
                        **quiet,
                    )
        except ConnectionError as exc:
            raise MipkitValueError(f"Cannot connect to the Ray cluster at {address!r}: {exc}") from None
        except Exception as exc:  # Ray's own start-up failures (a node timing out on a busy machine, ...)
            where = f"the Ray cluster at {address!r}" if address is not None else "a local Ray instance"
            raise MipkitValueError(
                f"Could not start {where} ({type(exc).__name__}: {exc}). The local backend runs the "
                "same fits; a finished run folder resumes with either."
            ) from None
        started_here = True
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()


def run_ray(
    fit_fn: Callable,
    trainer: Any,
    X: np.ndarray,
    y: np.ndarray,
    query_X: np.ndarray | None,
    todo: list,
    n_classes: int,
    *,
    on_result: Callable[[int, np.ndarray, dict], None],
    max_in_flight: int | None = None,
) -> None:
    """Run ``fit_fn(trainer, X, y, query_X, task, n_classes)`` for every task on the initialised Ray.

    Parameters
    ----------
    on_result : callable
        Called in the driver as ``on_result(index, proba, meta)`` as soon as each task's result arrives.
    max_in_flight : int, optional
        At most this many tasks submitted at once (default 4 x the cluster's CPUs), so that a run of many
        fits does not flood the scheduler; results still stream back one by one.
    """
    ray = import_ray()
    if not ray.is_initialized():
        raise MipkitValueError("run_ray needs an initialised Ray (use ray_session).")
    pending: list = []
    try:
        cluster_cpus = int(ray.cluster_resources().get("CPU", 1) or 1)
        limit = max_in_flight or max(4, 4 * cluster_cpus)
        remote_fit = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(fit_fn)
        X_ref = ray.put(X)
        y_ref = ray.put(y)
        q_ref = None if query_X is None else ray.put(query_X)
        queue = list(todo)
        queue.reverse()
        while queue or pending:
            while queue and len(pending) < limit:
                task = queue.pop()
                pending.append(remote_fit.remote(trainer, X_ref, y_ref, q_ref, task, n_classes))
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                index, proba, meta = _result(ray, ref)
                on_result(index, np.asarray(proba), meta)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise


def _result(ray: Any, ref: Any) -> tuple[int, np.ndarray, dict]:
    """One fit's ``(index, proba, meta)`` (:func:`ray_get`)."""
    return ray_get(ray, ref, what="A fit", after="With a run folder the fits finished so far are kept: the "
                   "same command resumes from them.")  # fmt: skip


def ray_get(ray: Any, refs: Any, *, what: str, after: str = "") -> Any:
    """``ray.get(refs)``, with a task's own :class:`MipkitValueError` raised as itself and a task lost more
    often than :data:`MAX_RETRIES` allows (its worker or node died each time) as one
    :class:`MipkitValueError` naming ``what`` was lost, followed by ``after``."""
    lost = tuple(
        getattr(ray.exceptions, name)
        for name in ("WorkerCrashedError", "NodeDiedError", "ObjectLostError")
        if hasattr(ray.exceptions, name)
    )
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, MipkitValueError):
            raise MipkitValueError(str(cause.args[0]) if cause.args else str(cause)) from None
        raise
    except lost as exc:
        raise MipkitValueError(
            f"{what} on the Ray cluster was lost ({type(exc).__name__}: its worker process or node died) and "
            f"its {MAX_RETRIES} retries were lost too; check the cluster's nodes. {after}".rstrip()
        ) from None
