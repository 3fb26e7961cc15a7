"""A real two-node Slurm cluster on this machine, for the tests that submit jobs to it.

It needs Debian's `slurm-wlm` and `munge` packages (`.ci/run` installs them), `iproute2`, and root.
It starts a private `munged` (its own key and socket) and `slurmctld` in this machine's network
namespace, and one `slurmd` per node, each in a network namespace of its own with its own address
and host name (tests/slurm_network.py), with a configuration in a given folder (no cgroups:
`proctrack/linuxproc`, `task/none`). It stops every daemon it started, by process id, and removes
the namespaces, also when the test fails.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.slurm_network import Node, node_network, why_no_namespaces

SLURM_PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue", "scancel", "scontrol")
SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
NODES = ["n1", "n2"]
CPUS_PER_NODE = 2
PARTITION = "templatetest"
# A job in one of these states has ended (squeue --states=all lists them a while).
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def slurm_conf(folder: Path, controller: str, nodes: list[Node]) -> str:
    """The controller on this machine (its host name, the bridge's address), a node per namespace."""
    node_lines = [f"NodeName={node.name} NodeAddr={node.address} CPUs={CPUS_PER_NODE}" for node in nodes]
    return f"""\
ClusterName=templatetest
SlurmctldHost={controller}
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
SlurmdSpoolDir={folder}/spool-%n
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd-%n.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd-%n.log
{chr(10).join(node_lines)}
PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


class Daemons:
    """The daemons this test started, stopped by their process ids (and their process groups)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, command: list[str]) -> None:
        """Start `command` (its log in `folder/name.out`); its program is looked up in the sbin folders too."""
        log = (self.folder / f"{name}.out").open("wb")
        program = shutil.which(command[0], path=SBIN_PATH)
        assert program is not None
        self.started.append(
            subprocess.Popen([program, *command[1:]], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        )
        log.close()

    def logs(self) -> str:
        paths = [*self.folder.glob("*.out"), *self.folder.glob("*.log")]
        return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}" for path in paths)

    def wait_for(self, ready: Callable[[], object], what: str, timeout: float = 60) -> None:
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


@dataclass(frozen=True)
class Cluster:
    """A running cluster: the environment its commands need (SLURM_CONF), its nodes, its folder."""

    env: dict[str, str]
    nodes: list[Node]
    folder: Path

    def run(self, *command: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
        """A Slurm command (sbatch, squeue, scontrol...) with this cluster's configuration."""
        full_env = {**os.environ, **self.env, **env}
        return subprocess.run(command, cwd=cwd, env=full_env, capture_output=True, text=True, check=False)

    def submit(self, *command: str, cwd: Path, **env: str) -> str:
        """`sbatch --parsable ...` in `cwd`: the job id."""
        submitted = self.run("sbatch", "--parsable", *command, cwd=cwd, **env)
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        return submitted.stdout.strip().split(";")[0]

    def job(self, job: str) -> dict[str, str]:
        """`scontrol show job` as a dictionary (an array job: its first task's)."""
        shown = self.run("scontrol", "show", "job", "--oneliner", job).stdout
        assert shown.startswith("JobId="), f"scontrol show job {job}: {shown}"
        return dict(re.findall(r"(\w+(?::\w+)?)=(\S*)", shown.splitlines()[0]))

    def queued(self, job: str = "") -> list[str]:
        """The jobs (or an array's tasks) not ended yet: `JOBID STATE` lines. Every state counts,
        as a requeued job passes through some (REQUEUED) that squeue leaves out by default."""
        command = ["squeue", "-h", "-r", "--states=all", "-o", "%i %T", *(["-j", job] if job else [])]
        lines = self.run(*command).stdout.split("\n")[:-1]
        return [line for line in lines if line.split()[1] not in ENDED]

    def wait(self, job: str, timeout: float = 300, poll: float = 0.25, requeued_now: bool = False) -> float:
        """Wait until every task of `job` has ended; the seconds waited. Slurm holds a requeued
        job for about 2 minutes (reason BeginTime): `requeued_now` starts it after 2 s instead.
        Not sooner: a node refuses a job whose credential it revoked in the same second, when
        the job's last start ended ("Job credential revoked"), and the job then fails."""
        start = time.monotonic()
        held: dict[str, float] = {}  # task -> when it was first seen held
        while queued := self.queued(job):
            if time.monotonic() - start > timeout:
                pytest.fail(f"job {job} still queued after {timeout} s: {queued}")
            for line in queued if requeued_now else []:
                task, state = line.split()
                if state != "PENDING" or self.job(task).get("Reason") != "BeginTime":
                    continue
                if time.monotonic() - held.setdefault(task, time.monotonic()) >= 2:
                    self.run("scontrol", "update", f"JobId={task}", "StartTime=now")
                    del held[task]
            time.sleep(poll)
        return time.monotonic() - start


def why_no_cluster() -> str | None:
    """Why this machine cannot run a private cluster, or None when it can."""
    missing = [name for name in SLURM_PROGRAMS if shutil.which(name, path=SBIN_PATH) is None]
    if missing:
        return (
            f"Slurm is not installed ({', '.join(missing)} not found): install Debian's packages with "
            "`sudo apt-get install slurm-wlm munge iproute2` to run this test"
        )
    if os.geteuid() != 0:
        return "a private Slurm cluster needs root (slurmd runs jobs as their user): run as root, as CI does"
    reason = why_no_namespaces()
    return f"the test cluster's nodes need network namespaces: {reason}" if reason else None


@contextlib.contextmanager
def two_node_cluster(folder: Path) -> Iterator[Cluster]:
    """A cluster whose state, logs and configuration live in `folder`. Jobs left at the end are
    cancelled, then the daemons stopped and the nodes' namespaces removed."""
    (folder / "state").mkdir()
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    host = socket.gethostname().split(".")[0]  # slurmctld finds itself by the short host name
    with node_network(folder, NODES) as (address, nodes, hosts):
        conf = folder / "slurm.conf"
        conf.write_text(slurm_conf(folder, f"{host}({address})", nodes), encoding="utf-8")
        cluster = Cluster({"SLURM_CONF": str(conf)}, nodes, folder)
        daemons = Daemons(folder)
        try:
            # --force: the socket's folder is private to root (munged would want it open to all users).
            files = [f"--{name}={folder}/munged.{name.split('-')[0]}" for name in ("pid-file", "log-file", "seed-file")]
            munged = ["munged", "--foreground", "--force", f"--socket={folder}/munge.socket", f"--key-file={key}"]
            daemons.start("munged", [*munged, *files])
            daemons.wait_for((folder / "munge.socket").exists, "munged's socket")
            daemons.start("slurmctld", ["slurmctld", "-D", "-f", str(conf)])
            slurmd = shutil.which("slurmd", path=SBIN_PATH)
            assert slurmd is not None
            for node in nodes:
                slurmd_command = node.command(hosts, slurmd, "-D", "-f", str(conf), "-N", node.name)
                daemons.start(f"slurmd-{node.name}", slurmd_command)

            def nodes_idle() -> bool:
                return cluster.run("sinfo", "-h", "-N", "-o", "%T").stdout.split() == ["idle"] * len(nodes)

            daemons.wait_for(nodes_idle, f"nodes {', '.join(NODES)} idle in sinfo")
            yield cluster
            # Cancel what a failed test left running, so that no job outlives the cluster.
            cluster.run("scancel", f"--partition={PARTITION}")
            daemons.wait_for(lambda: not cluster.queued(), "the end of every job")
        finally:
            daemons.stop()
