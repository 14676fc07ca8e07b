"""Fixtures of the engine tests: a real multi-node Ray cluster on this machine (:mod:`ray_cluster`)."""

from __future__ import annotations

import os
import sys

import pytest


def _refresh_ray_config() -> None:
    """Make an already imported Ray read ``RAY_AUTH_MODE`` again (as Ray does when it turns tokens on)."""
    if "ray" not in sys.modules:
        return
    try:
        from ray._raylet import AuthenticationTokenLoader, Config
    except ImportError:  # pragma: no cover - a Ray without token authentication
        return
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


@pytest.fixture(scope="module")
def ray_cluster():
    """A Ray cluster of a head node and two worker nodes (one CPU each) started with ``ray start``, for one
    test module; yields the :class:`ray_cluster.Cluster` (``.address``: what ``--address`` takes).

    The cluster requires Ray's authentication token, so this process connects with ``RAY_AUTH_MODE=token``
    while the module runs (an explicit ``address`` never turns tokens on by itself). Teardown kills this
    cluster's processes only.
    """
    pytest.importorskip("ray", reason="ray is not installed (pip install mipkit[distributed])")
    if not sys.platform.startswith("linux"):
        pytest.skip("the Ray cluster fixture finds its processes in /proc (Linux only)")
    from ray_cluster import start_cluster

    with pytest.MonkeyPatch.context() as patch:
        if os.environ.get("RAY_AUTH_MODE", "").lower() != "disabled":
            patch.setenv("RAY_AUTH_MODE", "token")
        _refresh_ray_config()
        cluster = start_cluster(n_worker_nodes=2)
        try:
            yield cluster
        finally:
            cluster.stop()
    _refresh_ray_config()
