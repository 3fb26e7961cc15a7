"""A real one-node Slurm cluster on this machine, for the tests that submit jobs to it.

It needs Debian's `slurm-wlm` and `munge` packages (`.ci/run` installs them) and root. It starts a
private `munged` (its own key and socket), `slurmctld` and `slurmd` on the loopback address with a
configuration in a given folder (no cgroups: `proctrack/linuxproc`, `task/none`), and stops every
daemon it started, also when the test fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SLURM_PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scancel")
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def slurm_conf(folder: Path, node: str) -> str:
    """One node (this machine, by its host name) and one partition, everything on the loopback address."""
    return f"""\
ClusterName=templatetest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={folder}/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
NodeName={node} NodeAddr=127.0.0.1 CPUs={max(2, os.cpu_count() or 1)} State=UNKNOWN
PartitionName=templatetest Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


class Daemons:
    """The daemons this test started, stopped by their process ids (and their process groups)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, *command: str) -> None:
        log = (self.folder / f"{command[0]}.out").open("wb")
        path = shutil.which(command[0], path=SBIN_PATH)
        assert path is not None
        self.started.append(
            subprocess.Popen([path, *command[1:]], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        )
        log.close()

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}" for path in self.folder.glob("*.out")
        )

    def wait_for(self, ready: Any, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            dead = [process.args for process in self.started if process.poll() is not None]
            if dead or time.monotonic() > deadline:
                pytest.fail(f"Slurm: {what} did not happen (exited: {dead})\n{self.logs()}")
            time.sleep(0.2)

    def stop(self) -> None:
        for process in reversed(self.started):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:  # slurmd ignores SIGTERM while it retries a registration
                    process.kill()
                    process.wait(timeout=15)
            with contextlib.suppress(ProcessLookupError):  # anything it left in its process group
                os.killpg(process.pid, signal.SIGKILL)
        self.started.clear()


def squeue(env: dict[str, str]) -> str:
    """The jobs in the queue, one a line (empty when there are none)."""
    return subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True, check=False).stdout.strip()


def why_no_cluster() -> str | None:
    """Why this machine cannot run a private cluster, or None when it can."""
    missing = [name for name in SLURM_PROGRAMS if shutil.which(name, path=SBIN_PATH) is None]
    if missing:
        return (
            f"Slurm is not installed ({', '.join(missing)} not found): install Debian's packages with "
            "`sudo apt-get install slurm-wlm munge` to run this test"
        )
    if os.geteuid() != 0:
        return "a private Slurm cluster needs root (slurmd runs jobs as their user): run as root, as CI does"
    return None


@contextlib.contextmanager
def one_node_cluster(folder: Path) -> Iterator[dict[str, str]]:
    """A cluster whose state, logs and configuration live in `folder`: the variable its commands
    need, SLURM_CONF. Jobs left at the end are cancelled, then the daemons stopped."""
    (folder / "state").mkdir()
    (folder / "spool").mkdir()
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    node = socket.gethostname().split(".")[0]  # slurmd finds its NodeName by the short host name
    conf = folder / "slurm.conf"
    conf.write_text(slurm_conf(folder, node), encoding="utf-8")
    env = {**os.environ, "SLURM_CONF": str(conf)}

    daemons = Daemons(folder)
    try:
        # --force: the socket's folder is private to root (munged would want it open to all users).
        files = [f"--{name}={folder}/munged.{name.split('-')[0]}" for name in ("pid-file", "log-file", "seed-file")]
        daemons.start(
            "munged", "--foreground", "--force", f"--socket={folder}/munge.socket", f"--key-file={key}", *files
        )
        daemons.wait_for((folder / "munge.socket").exists, "munged's socket")
        daemons.start("slurmctld", "-D", "-f", str(conf))
        daemons.start("slurmd", "-D", "-f", str(conf), "-N", node)

        def node_idle() -> bool:
            sinfo = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True, check=False)
            return sinfo.stdout.strip() == "idle"

        daemons.wait_for(node_idle, f"node {node} idle in sinfo")
        yield {"SLURM_CONF": str(conf)}
        # Cancel what a failed test left running, so that no job outlives the cluster.
        subprocess.run(["scancel", "--partition=templatetest"], env=env, capture_output=True, check=False)
        daemons.wait_for(lambda: not squeue(env), "the end of every job")
    finally:
        daemons.stop()
