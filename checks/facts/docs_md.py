"""Facts documented in prose (README, docs/*.md/.qmd/.rst): only what a check needs to know that the code cannot show.

Today one kind: a documented multi-node launch. Nothing here is evidence that a practice is used (the fixture rules:
a README is not use); a check may read these hints to decide whether it applies (E1: GPUDirect RDMA matters only
for multi-node training, and many projects document their multi-node launch only in Markdown).
"""

from __future__ import annotations

import re

from .types import DocHint, FileFacts

# a count of nodes > 1, or a variable that holds it
_NODES = r"(\d+|\$\{?\w+\}?|<[\w -]+>)"
_MULTI_NODE = (
    re.compile(rf"--nnodes[= ]+{_NODES}"),
    re.compile(rf"--num[-_]nodes[= ]+{_NODES}"),
    re.compile(rf"--num[-_]machines[= ]+{_NODES}"),
    re.compile(rf"\bnum_machines:\s*{_NODES}"),
    re.compile(rf"#SBATCH\s+(?:--nodes[= ]|-N\s*){_NODES}"),
    re.compile(rf"\bsrun\b.*\s(?:-N\s*|--nodes[= ]){_NODES}"),
    re.compile(r"\s--hostfile[= ]+\S+"),
)


def _many(token: str | None) -> bool:
    if token is None:
        return True  # --hostfile: a list of hosts
    if token.isdigit():
        return int(token) > 1
    return True  # $NNODES / <num_nodes>: the documented command is meant for several nodes


def extract_doc_hints(path: str, text: str, out: FileFacts) -> None:
    """Documented multi-node launches, one hint per line (the first matching form)."""
    if not any(k in text for k in ("nnodes", "nodes", "machines", "SBATCH", "hostfile", "srun")):
        return
    for i, line in enumerate(text.splitlines(), 1):
        for pat in _MULTI_NODE:
            m = pat.search(line)
            if m and _many(m.group(1) if m.groups() else None):
                out.doc_hints.append(DocHint(path, i, "multi_node", m.group(0).strip(), line.strip()[:300]))
                break
