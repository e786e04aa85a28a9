"""``NCCL_DEBUG=INFO`` logs: version, transport per channel, GPUDirect RDMA, ring/tree, env overrides, topology.

Line shapes (NCCL 2.1x–2.2x)::

    node-a:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
    node-a:1234:1290 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>
    node-a:1234:1290 [0] NCCL INFO Using network IB
    node-a:1234:1290 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0
    node-a:1234:1290 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read
    node-a:1234:1290 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/IB/0/GDRDMA
    node-a:1234:1290 [0] NCCL INFO GPU Direct RDMA Disabled for HCA 0 'mlx5_0'
    node-a:1234:1290 [0] NCCL INFO comm 0x55d0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0
    node-a:1234:1290 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .sources import open_text

_PREFIX = re.compile(r"^(?P<host>[\w.\-]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] NCCL INFO ")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_CHANNEL = re.compile(r"Channel (\d+)(?:/\d+)? : (\d+)\[\d+\] -> (\d+)\[\d+\](?: \[(?:send|receive)\])? via (\S+)")
_NETWORK = re.compile(r"Using network (\S+)")
_ENV = re.compile(r"(NCCL_[A-Z0-9_]+) set by environment to (.*?)\.?$")
_GDR = re.compile(r"GPU Direct RDMA (Enabled|Disabled)", re.I)
_COMM = re.compile(r"comm (0x[0-9a-f]+) rank (\d+) nRanks (\d+) nNodes (\d+) localRanks (\d+)", re.I)
_INIT = re.compile(r"comm (0x[0-9a-f]+) rank (\d+) nranks (\d+) cudaDev (\d+).*?(?:commId (0x[0-9a-f]+))?.*Init COMPLETE", re.I)
_TREES = re.compile(r"Trees \[")
_RING = re.compile(r"Channel \d+/\d+ :(\s+\d+){2,}\s*$")
_ALGO = re.compile(r"NCCL_ALGO set by environment to (\S+)")
MAX_LINE = 4096


def transport_family(via: str) -> str:
    """``P2P/CUMEM/read`` -> ``P2P``; ``NET/IB/0/GDRDMA`` -> ``NET/IB``; ``SHM/direct/direct`` -> ``SHM``; ``NET/Socket/1`` -> ``NET/Socket``."""
    parts = via.split("/")
    if parts[0] == "NET" and len(parts) > 1:
        return f"NET/{parts[1]}"
    if parts[0] == "P2P" and "NVLS" in via:
        return "NVLS"
    return parts[0]


def read(path: Path, display: str) -> dict[str, Any]:
    hosts: set[str] = set()
    transports: dict[str, int] = {}
    first_line: dict[str, int] = {}
    env: dict[str, str] = {}
    comms: dict[str, dict[str, int]] = {}
    out: dict[str, Any] = {}
    gdr_on = gdr_off = 0
    gdr_line = None
    networks: set[str] = set()
    trees = rings = 0
    lines = 0
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            if "NCCL INFO" not in line and "NCCL WARN" not in line:
                continue
            line = line[:MAX_LINE].rstrip("\n")
            lines += 1
            m = _PREFIX.match(line)
            if m:
                hosts.add(m.group("host"))
            if "version" not in out and (m2 := _VERSION.search(line)):
                out["version"] = m2.group(1)
                out["version_line"] = lineno
            if (m2 := _CHANNEL.search(line)) is not None:
                fam = transport_family(m2.group(4))
                transports[fam] = transports.get(fam, 0) + 1
                first_line.setdefault(fam, lineno)
                if "GDRDMA" in m2.group(4):
                    gdr_on += 1
                    gdr_line = gdr_line or lineno
                continue
            if _RING.search(line):
                rings += 1
            if (m2 := _NETWORK.search(line)) is not None:
                networks.add(m2.group(1))
                first_line.setdefault(f"network:{m2.group(1)}", lineno)
            if (m2 := _ENV.search(line)) is not None:
                env[m2.group(1)] = m2.group(2).strip()
            if (m2 := _GDR.search(line)) is not None:
                if m2.group(1).lower() == "enabled":
                    gdr_on += 1
                else:
                    gdr_off += 1
                gdr_line = gdr_line or lineno
            if (m2 := _COMM.search(line)) is not None:
                comms.setdefault(m2.group(1), {"nranks": int(m2.group(3)), "nnodes": int(m2.group(4)), "local_ranks": int(m2.group(5)),
                                               "line": lineno})
            if _TREES.search(line):
                trees += 1
    if not lines:
        return {}
    out["lines"] = lines
    out["hosts"] = len(hosts)
    out["transports"] = sorted(transports)
    out["channels"] = transports
    out["first_line"] = first_line
    if networks:
        out["network"] = sorted(networks)
    if gdr_on or gdr_off:
        out["gdr"] = gdr_on > 0 and gdr_off == 0
        out["gdr_line"] = gdr_line
    if env:
        out["env"] = env
    if trees or rings:
        out["algorithms"] = [a for a, n in (("ring", rings), ("tree", trees)) if n]
    if "NCCL_ALGO" in env:
        out["algo_override"] = env["NCCL_ALGO"]
    if comms:
        out["communicators"] = list(comms.values())
        out["nodes"] = max(c["nnodes"] for c in comms.values())
    elif len(hosts) > 1:
        out["nodes"] = len(hosts)
    return out


def findings(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The NCCL problems the seed names, each with the line it rests on."""
    out: list[dict[str, Any]] = []
    nodes = int(info.get("nodes") or 1)
    fl = info.get("first_line", {})
    if nodes > 1 and "NET/Socket" in info.get("transports", []) and "NET/IB" not in info.get("transports", []):
        out.append({"id": "nccl-socket", "line": fl.get("NET/Socket"), "check": "E4",
                    "params": {"nodes": nodes},
                    "text": f"inter-node traffic goes over TCP sockets (NET/Socket) on a {nodes}-node job, not InfiniBand/RoCE"})
    if nodes > 1 and info.get("gdr") is False:
        out.append({"id": "gdr-off", "line": info.get("gdr_line"), "check": "E1",
                    "params": {"nodes": nodes},
                    "text": f"GPUDirect RDMA is off on a {nodes}-node job: every inter-node transfer is staged through host memory"})
    if nodes > 1 and "NET/IB" in info.get("transports", []) and not info.get("gdr") and "gdr" not in info:
        out.append({"id": "gdr-unknown", "line": fl.get("NET/IB"), "check": "E1",
                    "text": "IB channels without GDRDMA: GPUDirect RDMA looks off (no 'GPU Direct RDMA Enabled' line either)"})
    comms = info.get("communicators", [])
    node_gpus = max((c["local_ranks"] for c in comms if c["nnodes"] == 1), default=0) or max(
        (c["nranks"] // c["nnodes"] for c in comms if c["nnodes"] > 1), default=0)
    for c in comms:
        # A group that would fit in one node but has several ranks on each of several nodes: the shape of a
        # tensor-parallel group split across nodes (data/pipeline groups across nodes have one rank per node).
        if c["nnodes"] > 1 and c["local_ranks"] > 1 and c["nranks"] <= node_gpus:
            out.append({"id": "tp-spans-nodes", "line": c["line"], "check": "A4",
                        "params": {"nranks": c["nranks"], "nnodes": c["nnodes"], "local": c["local_ranks"], "node_gpus": node_gpus},
                        "text": f"a {c['nranks']}-rank communicator spans {c['nnodes']} nodes with {c['local_ranks']} ranks on each, though a "
                                f"node has {node_gpus} GPUs: if it is a tensor-parallel group, every layer's all-reduce crosses the network"})
            break
    for k in ("NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE"):
        if info.get("env", {}).get(k) == "1":
            out.append({"id": "env-disable", "line": None, "check": "E4", "params": {"var": k}, "text": f"{k}=1 is set: NCCL was told not to use that transport"})
    return out
