"""A real multi-node Ray cluster on this machine, started as a user starts one (``ray start``), for tests.

:func:`start_cluster` runs ``ray start --head --node-ip-address=127.0.0.1 --port=<free port> ...`` and then
``ray start --address=127.0.0.1:<port> ...`` for each worker node, every one of them with ``--num-cpus=1``,
its own ``--temp-dir`` and its own free ports, in a session (process group) of its own, with ``PYTHONPATH``
naming this checkout's ``src`` so that Ray's workers import this checkout's mipkit. :meth:`Cluster.stop`
kills exactly those process groups and the processes that descend from them: never ``ray stop``, which ends
every Ray process of the machine (other test runs' included).

Ray and loopback: on Linux, ``ray start`` replaces a loopback ``--node-ip-address`` (and a loopback
``--address``) with the machine's network address, and its GCS and raylets listen on every interface; only
Ray's "no cluster" mode (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``) keeps a node on ``127.0.0.1`` - and in that
mode ``ray start --address`` refuses to add a worker node. A multi-node cluster on one machine therefore runs
on the machine's address; its processes require Ray's authentication token (``RAY_AUTH_MODE=token``, the
token of ``~/.ray/auth_token``, made by ``ray get-auth-token --generate`` when absent), and the driver
connects with ``RAY_AUTH_MODE=token`` too (the ``ray_cluster`` fixture of ``conftest.py`` sets it).

Process finding reads ``/proc`` (Linux only; the fixture skips elsewhere).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
START_TIMEOUT = 180.0  # seconds for one `ray start` on a busy machine


def free_port() -> int:
    """A TCP port nobody listens on now (the OS's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def _ray_executable() -> str:
    found = Path(sys.executable).with_name("ray")
    return str(found) if found.exists() else (shutil.which("ray") or "ray")


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids of every process (from ``/proc``)."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, grandchildren, ...)."""
    tree, out, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def process_group(pgid: int) -> list[int]:
    """The pids of the live processes in process group ``pgid``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            pids.append(int(entry))
    return pids


def command_line(pid: int) -> str:
    """What ``ps`` shows for ``pid`` (Ray's workers retitle themselves ``ray::<task>``); "" if gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


@dataclass
class Node:
    """One ``ray start``: its process group (the id of the session it was started in) and temp dir."""

    pgid: int
    temp_dir: Path
    raylet: int | None = None  # the pid of its raylet, once it runs

    def find_raylet(self) -> int | None:
        """The pid of the node's raylet (the parent of its worker processes), or None."""
        found = [pid for pid in process_group(self.pgid) if "/raylet " in command_line(pid) + " "]
        self.raylet = found[0] if found else None
        return self.raylet

    def workers_running(self, task_name: str) -> list[int]:
        """Worker processes of this node executing a task named ``task_name`` now (title ``ray::name``)."""
        if self.raylet is None:
            return []
        title = f"ray::{task_name}"
        return [pid for pid in descendants(self.raylet) if command_line(pid).split(" ")[0] == title]

    def kill(self) -> None:
        """SIGKILL the node's process group and whatever descends from it."""
        pids = set(process_group(self.pgid))
        for pid in list(pids):
            pids.update(descendants(pid))
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@dataclass
class Cluster:
    """A started cluster: ``address`` (``127.0.0.1:<port>``, what ``--address`` takes), its nodes."""

    address: str
    head: Node
    workers: list[Node] = field(default_factory=list)
    root: Path | None = None

    def stop(self) -> None:
        """Kill this cluster's nodes (worker nodes first), and only them; remove its temp dirs."""
        for node in [*self.workers, self.head]:
            node.kill()
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)


def cluster_env() -> dict[str, str]:
    """The environment of the cluster's ``ray start`` commands (and so of Ray's workers)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("RAY_AUTH_MODE", "token")
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    # the GCS marks a lost node dead after 5 missed health checks of 1 s (Ray's default: 3 s each)
    env.setdefault("RAY_health_check_period_ms", "1000")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    return env


def _ensure_token(env: dict[str, str]) -> None:
    """Ray's authentication token in its default place (``ray get-auth-token --generate``), if needed."""
    if env.get("RAY_AUTH_MODE", "").lower() != "token" or env.get("RAY_AUTH_TOKEN"):
        return
    if env.get("RAY_AUTH_TOKEN_PATH") or (Path.home() / ".ray" / "auth_token").is_file():
        return
    subprocess.run(
        [_ray_executable(), "get-auth-token", "--generate"],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )


def _spawn(args: list[str], temp_dir: Path, env: dict[str, str]) -> tuple[subprocess.Popen, Node, Path]:
    """Start one ``ray start`` in a session of its own (its process group: the node's processes)."""
    temp_dir.mkdir(parents=True)
    ports = [f"--{name}={free_port()}" for name in ("dashboard-agent-listen-port", "metrics-export-port")]
    argv = [
        _ray_executable(),
        "start",
        *args,
        "--num-cpus=1",
        "--object-store-memory=80000000",
        "--disable-usage-stats",
        f"--temp-dir={temp_dir}",
        *ports,
    ]
    log = temp_dir.with_suffix(".log")
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, Node(proc.pid, temp_dir), log


def _await(started: list[tuple[subprocess.Popen, Node, Path]]) -> list[Node]:
    """Wait for ``ray start`` commands to return; their nodes, or RuntimeError (the nodes killed)."""
    deadline = time.monotonic() + START_TIMEOUT
    failed = []
    for proc, _, log in started:
        try:
            code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            code = "timeout"
        if code != 0:
            failed.append(f"`{' '.join(map(str, proc.args))}` ended with {code}: {log.read_text()[-1500:]}")
    if failed:
        for _, node, _ in started:
            node.kill()
        raise RuntimeError("\n".join(failed))
    return [node for _, node, _ in started]


def start_cluster(n_worker_nodes: int = 1) -> Cluster:
    """Start a head node and ``n_worker_nodes`` worker nodes of one CPU each; the running cluster.

    Raises RuntimeError (after stopping what it started) when a node does not start.
    """
    env = cluster_env()
    _ensure_token(env)
    root = Path(tempfile.mkdtemp(prefix="mipkit-ray-"))
    port = free_port()
    address = f"127.0.0.1:{port}"
    head_args = [
        "--head",
        "--node-ip-address=127.0.0.1",
        f"--port={port}",
        "--include-dashboard=false",
        f"--dashboard-port={free_port()}",
    ]
    try:
        (head,) = _await([_spawn(head_args, root / "head", env)])
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    cluster = Cluster(address, head, root=root)
    worker_args = [f"--address={address}", "--node-ip-address=127.0.0.1"]
    try:
        spawned = [_spawn(worker_args, root / f"worker{i}", env) for i in range(n_worker_nodes)]
        cluster.workers = _await(spawned)
        _wait_for_raylets(cluster)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _wait_for_raylets(cluster: Cluster) -> None:
    """Wait until every node's raylet runs."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if all(node.raylet or node.find_raylet() for node in [cluster.head, *cluster.workers]):
            return
        time.sleep(0.2)
    raise RuntimeError(f"the raylets of the Ray cluster at {cluster.address} did not start")
