"""Nodes of a test cluster on one machine: each its own network namespace, address and host name.

A bridge in this machine's namespace holds one address of a private /24 subnet (the controller's);
each node is a network namespace (`ip netns add`) joined to the bridge by a veth pair, with its own
address. A node's daemon runs in its namespace (`nsenter --net`, not `ip netns exec`, which remounts
/sys and makes slurmd fail "Unable to initialize cgroup plugin"), in its own UTS namespace with the
node's host name, and in its own mount namespace where a private hosts file, which names every
node, is mounted over /etc/hosts: the names resolve on every node and this machine's /etc/hosts is
never written. Host names must differ from node to node: each torch.distributed process
advertises the address its host name resolves to.

Everything made here (namespaces, veth pairs, the bridge) is deleted on exit, also after a failure.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SUBNETS = "10.200"  # 10.200.X.0/24: the first X that no interface of this machine uses
LOCK = Path("/run/lock/template-test-netns.lock")  # held while a subnet is chosen and taken


@dataclass(frozen=True)
class Node:
    name: str
    address: str
    namespace: str

    def command(self, hosts: Path, *command: str) -> list[str]:
        """`command` run on this node: in its namespaces, with its host name and hosts file."""
        inside = f'mount --bind "$0" /etc/hosts && hostname {self.name} && exec "$@"'
        return [
            *("nsenter", f"--net=/run/netns/{self.namespace}", "unshare", "--uts", "--mount"),
            *("sh", "-c", inside, str(hosts), *command),
        ]


def why_no_namespaces() -> str | None:
    """Why this machine cannot give nodes their own network, or None when it can."""
    missing = [name for name in ("ip", "nsenter", "unshare", "mount") if shutil.which(name) is None]
    if missing:
        return f"{', '.join(missing)} not found: install Debian's `iproute2` and `util-linux`"
    probe = f"probe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        return f"`ip netns add` failed ({made.stderr.strip()}): network namespaces need root with CAP_NET_ADMIN"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True, check=False)
    return None


def ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"`ip {' '.join(args)}` failed: {result.stderr.strip()}")


def free_subnet() -> str:
    """The first 10.200.X (X in 1..254) that no address of this machine is in."""
    used = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True, check=True).stdout
    for third in range(1, 255):
        if f" {SUBNETS}.{third}." not in used:
            return f"{SUBNETS}.{third}"
    raise RuntimeError(f"every {SUBNETS}.X.0/24 subnet is in use on this machine")


@contextlib.contextmanager
def node_network(folder: Path, names: list[str]) -> Iterator[tuple[str, list[Node], Path]]:
    """A bridge and one namespace per name: (the bridge's address, the nodes, their hosts file)."""
    tag = str(os.getpid())[-6:]  # interface names are at most 15 characters
    bridge = f"tbr{tag}"
    cleanup = contextlib.ExitStack()
    with cleanup:
        LOCK.parent.mkdir(parents=True, exist_ok=True)
        with LOCK.open("w") as lock:  # two test runs at once must not take the same subnet
            fcntl.flock(lock, fcntl.LOCK_EX)
            subnet = free_subnet()
            ip("link", "add", bridge, "type", "bridge")
            cleanup.callback(subprocess.run, ["ip", "link", "delete", bridge], capture_output=True, check=False)
            ip("addr", "add", f"{subnet}.1/24", "dev", bridge)
            ip("link", "set", bridge, "up")
        nodes = [Node(name, f"{subnet}.{11 + index}", f"t{tag}{name}") for index, name in enumerate(names)]
        for index, node in enumerate(nodes):
            ip("netns", "add", node.namespace)
            delete = ["ip", "netns", "delete", node.namespace]
            cleanup.callback(subprocess.run, delete, capture_output=True, check=False)
            outside = f"tve{tag}{index}"  # deleted with the namespace, which holds its peer
            ip("link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", node.namespace)
            ip("link", "set", outside, "master", bridge)
            ip("link", "set", outside, "up")
            ip("-n", node.namespace, "addr", "add", f"{node.address}/24", "dev", "eth0")
            ip("-n", node.namespace, "link", "set", "eth0", "up")
            ip("-n", node.namespace, "link", "set", "lo", "up")
        hosts = folder / "hosts"
        lines = ["127.0.0.1 localhost", *(f"{node.address} {node.name}" for node in nodes)]
        hosts.write_text("\n".join(lines) + "\n", encoding="utf-8")
        yield f"{subnet}.1", nodes, hosts
