"""Compare the base and head audits: regressions, improvements, score delta per category.

A regression is (a) a check whose status fell (used → partial/unused, partial → unused),
or (b) a value the check measured that got worse while the status held (see
:mod:`review.rules`), or (c) a new finding (a problem the check reports at a line, e.g.
a too-frequent interval). Values are the engine's *effective* settings, so moving a
setting from one file to another changes nothing here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from checks.base import Check, all_checks
from checks.engine import Audit
from checks.facts import as_number
from checks.model import CATEGORIES, CheckResult, Evidence, Priority, Status
from reports.scoring import category_scores, overall

from .model import Change
from .rules import RULES, Env, Verdict, fmt

__all__ = ["Comparison", "compare_audits", "env_of", "rank_key"]

_RANK = {Status.UNUSED: 0, Status.PARTIAL: 1, Status.USED: 2}
_STATUS_ZH = {Status.USED: "已使用", Status.PARTIAL: "部分使用", Status.UNUSED: "未使用", Status.NA: "不适用"}
_MICRO = ("per_device_train_batch_size", "train_micro_batch_size_per_gpu", "micro_batch_size", "micro_batch_size_per_gpu")
_GLOBAL = ("train_batch_size", "global_batch_size", "global_train_batch_size")
_NCCL_WHY: dict[str, tuple[str, str]] = {
    "NCCL_IB_HCA": ("it selects the InfiniBand adapters; without it NCCL may use the wrong HCAs or fewer rails",
                    "它指定 InfiniBand 网卡；缺少时 NCCL 可能选错网卡或少用通道"),
    "NCCL_SOCKET_IFNAME": ("it pins the network interface; without it NCCL may pick a slow or unreachable one (docker0, lo)",
                           "它指定网络接口；缺少时 NCCL 可能选到慢或不可达的接口（docker0、lo）"),
    "NCCL_NET_GDR_LEVEL": ("it enables GPUDirect RDMA up to a topology distance; without it GPU↔NIC traffic may bounce through host memory",
                           "它启用 GPUDirect RDMA；缺少时 GPU 与网卡的数据可能经主机内存中转"),
    "NCCL_IB_GID_INDEX": ("it selects the RoCE GID; a wrong default can make NCCL fail over to TCP sockets",
                          "它指定 RoCE GID；默认值不对时 NCCL 可能退回 TCP socket"),
}
_NCCL_DISABLERS = {"NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "NCCL_NET_GDR_DISABLE"}


@dataclass(slots=True)
class Comparison:
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    category_delta: dict[str, float] = field(default_factory=dict)  # only categories whose points moved
    category_scores: dict[str, tuple[tuple[float, int] | None, tuple[float, int]]] = field(default_factory=dict)  # id -> (base, head)
    total: tuple[tuple[float, int] | None, tuple[float, int]] | None = None
    base_missing: bool = False


def env_of(audit: Audit) -> Env:
    p = audit.project
    gpus = None
    if p.num_gpus:
        gpus = p.num_gpus * (p.num_nodes or 1)
    return Env(params_b=p.params_billions, gpus=gpus, seq=p.max_seq_len, multi_node=p.multi_node)


def _registry() -> dict[str, Check]:
    return {c.id: c for c in all_checks()}


def _rank_key(c: Change, results: dict[str, CheckResult], reg: dict[str, Check]) -> tuple[int, str, int]:
    check = reg.get(c.check)
    prio = check.priority if check else Priority.LOW
    r = results.get(c.check)
    if r is not None and r.priority is not None:
        prio = r.priority
    return prio.rank, c.check[:1], int(c.check[1:]) if c.check[1:].isdigit() else 0


def _value_number(audit: Audit | None, names: tuple[str, ...]) -> float | None:
    """A batch-size-like number: from any check's values, else the effective setting."""
    if audit is None:
        return None
    for r in audit.results:
        for n in names:
            v = as_number(r.values.get(n))
            if v is not None and v > 0:
                return v
    for s in audit.facts.effective(*names):
        v = as_number(s.value)
        if v is not None and v > 0:
            return v
    return None


def _gas(name: str, before: Any, after: Any, base: Audit, head: Audit, env: Env) -> Verdict | None:
    a, b = as_number(before), as_number(after)
    if a is None or b is None or a <= 0 or b <= 0 or a == b:
        return None
    g_a, g_b = _value_number(base, _GLOBAL), _value_number(head, _GLOBAL)
    m_a, m_b = _value_number(base, _MICRO), _value_number(head, _MICRO)
    what = f"`{name}` {fmt(a)} → {fmt(b)}"
    if g_a and g_b and g_a == g_b:
        return None  # the global batch is pinned (DeepSpeed train_batch_size): the micro batch absorbs the change
    if m_a and m_b:
        eff_a, eff_b = a * m_a, b * m_b
        note_en = f"effective batch per GPU {fmt(eff_a)} → {fmt(eff_b)} ({fmt(m_a)}×{fmt(a)} → {fmt(m_b)}×{fmt(b)})"
        note_zh = f"每卡有效 batch {fmt(eff_a)} → {fmt(eff_b)}（{fmt(m_a)}×{fmt(a)} → {fmt(m_b)}×{fmt(b)}）"
    else:
        eff_a, eff_b = a, b
        note_en = "effective batch falls with it (per-device batch size not found or unchanged)"
        note_zh = "有效 batch 随之变化（未找到或未改变每卡 batch）"
    if eff_b == eff_a:
        return None
    if env.gpus:
        note_en += f"; × {env.gpus} GPUs = {fmt(eff_a * env.gpus)} → {fmt(eff_b * env.gpus)} samples per optimizer step"
        note_zh += f"；× {env.gpus} 卡 = 每个优化步 {fmt(eff_a * env.gpus)} → {fmt(eff_b * env.gpus)} 条样本"
    if eff_b < eff_a:
        r = eff_a / eff_b
        why = (f"{note_en}: {r:g}× more optimizer steps and gradient all-reduces for the same data, and a learning rate "
               "tuned for the larger batch may no longer fit.")
        why_zh = f"{note_zh}：同样的数据要多做 {r:g} 倍优化步和梯度 all-reduce，为大 batch 调好的学习率可能不再合适。"
        return Verdict(-1, what, why, what, why_zh)
    return Verdict(1, what, f"{note_en}: fewer optimizer steps and gradient all-reduces per sample.", what, f"{note_zh}：每条样本的优化步与 all-reduce 更少。")


def _as_nccl(v: Any) -> dict[str, str] | None:
    if isinstance(v, dict):
        return {str(k): str(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return {str(k): "" for k in v}
    return None


def _nccl(check: str, before: Any, after: Any, env: Env, multi_node: bool) -> list[tuple[str, Verdict]]:
    a, b = _as_nccl(before), _as_nccl(after)
    if a is None or b is None:
        return []
    out: list[tuple[str, Verdict]] = []
    for var in sorted(set(a) - set(b)):
        if not multi_node or var in _NCCL_DISABLERS:
            continue
        en, zh = _NCCL_WHY.get(var, ("its tuning of inter-node collectives is lost", "它对跨节点集合通信的调优丢失"))
        what = f"`{var}` removed from the multi-node launch"
        out.append((var, Verdict(-1, what, f"{en}; on InfiniBand a fallback to TCP sockets can cut all-reduce bandwidth several-fold.",
                                 f"多节点启动中删除了 `{var}`", f"{zh}；在 InfiniBand 集群上退回 TCP socket 会让 all-reduce 带宽下降数倍。")))
    for var in sorted(set(b) - set(a)):
        if var in _NCCL_DISABLERS and b[var].strip() not in {"", "0"}:
            what = f"`{var}={b[var]}` added"
            out.append((var, Verdict(-1, what, "it disables a fast transport: NCCL falls back to a slower path (TCP sockets or host memory).",
                                     f"新增 `{var}={b[var]}`", "它关闭了高速传输通道：NCCL 退回更慢的路径（TCP socket 或主机内存）。")))
        elif var not in _NCCL_DISABLERS and multi_node:
            what = f"`{var}` set for the multi-node launch"
            out.append((var, Verdict(1, what, "inter-node collectives get explicit NCCL tuning.", f"多节点启动设置了 `{var}`", "跨节点集合通信获得显式 NCCL 调优。")))
    return out


def _change(check: str, v: Verdict, finding: str, before: Any, after: Any) -> Change:
    return Change(check=check, kind="regression" if v.direction < 0 else "improvement", what=v.what, why=v.why, key=finding,
                  before=before, after=after, finding=finding, what_zh=v.what_zh, why_zh=v.why_zh)


def _value_changes(rb: CheckResult, rh: CheckResult, base: Audit, head: Audit, env: Env) -> list[Change]:
    out: list[Change] = []
    names = [n for n in rh.values if n in rb.values] + [n for n in rb.values if n not in rh.values and n in ("nccl_vars", "rdma_vars")]
    for name in names:
        before, after = rb.values.get(name), rh.values.get(name)
        if name in ("nccl_vars", "rdma_vars"):
            multi = env.multi_node  # the head still launches on several nodes
            b_map, a_map = _as_nccl(before) or {}, _as_nccl(after) or {}
            out += [_change(rh.id, v, var, b_map.get(var), a_map.get(var)) for var, v in _nccl(rh.id, before, after or [], env, multi)]
            continue
        if name == "gradient_accumulation_steps":
            v = _gas(name, before, after, base, head, env)
        elif name in RULES:
            v = RULES[name](name, before, after, env)
        else:
            v = None
        if v is not None:
            out.append(_change(rh.id, v, name, before, after))
    return out


def _status_change(rb: CheckResult, rh: CheckResult, reg: dict[str, Check]) -> Change | None:
    if Status.NA in (rb.status, rh.status) or rb.status == rh.status:
        return None
    worse = _RANK[rh.status] < _RANK[rb.status]
    check = reg.get(rh.id)
    title_zh = getattr(check, "title_zh", rh.title) if check else rh.title
    what = f"{rh.title}: {rb.status.value} → {rh.status.value}"
    what_zh = f"{title_zh}：{_STATUS_ZH[rb.status]} → {_STATUS_ZH[rh.status]}"
    detail = f" Now: {rh.detail}." if rh.detail else ""
    if worse:
        benefit = (check.benefit if check and check.benefit else "").rstrip(".")
        why = (f"The practice is no longer in effect; expected benefit lost: {benefit}." if benefit else "The practice is no longer in effect.") + detail
        why_zh = "该实践不再生效" + (f"，失去的预期收益：{benefit}。" if benefit else "。") + (f" 现状：{rh.detail}。" if rh.detail else "")
    else:
        why = "The practice is now in effect." + detail
        why_zh = "该实践现已生效。" + (f" 现状：{rh.detail}。" if rh.detail else "")
    return Change(check=rh.id, kind="regression" if worse else "improvement", what=what, why=why, key="status",
                  before=rb.status.value, after=rh.status.value, finding="status", what_zh=what_zh, why_zh=why_zh)


def _finding_key(e: Evidence) -> str:
    return e.key or e.snippet.strip()[:80]


def _finding_sig(e: Evidence) -> tuple[str, str]:
    return _finding_key(e), fmt(e.value) if e.value is not None else e.snippet.strip()


def _finding_changes(rb: CheckResult | None, rh: CheckResult, reg: dict[str, Check]) -> list[Change]:
    base_sigs = {_finding_sig(e) for e in rb.findings} if rb else set()
    head_sigs = {_finding_sig(e) for e in rh.findings}
    check = reg.get(rh.id)
    why_base = (check.why.split(". ")[0].rstrip(".") + ".") if check and check.why else ""
    out: list[Change] = []
    seen: set[tuple[str, str]] = set()
    for e in rh.findings:
        sig = _finding_sig(e)
        if sig in base_sigs or sig in seen:
            continue
        seen.add(sig)
        what = f"{rh.title}: `{e.snippet.strip()[:120]}`"
        why = (f"{rh.detail}. " if rh.detail else "") + why_base
        out.append(Change(check=rh.id, kind="regression", what=what, why=why.strip(), key=e.key, before=None, after=e.value,
                          finding=f"finding:{_finding_key(e)}", what_zh=what, why_zh=why.strip()))
    if rb:
        for e in rb.findings:
            sig = _finding_sig(e)
            if sig in head_sigs or sig in seen:
                continue
            seen.add(sig)
            what = f"{rh.title}: `{e.snippet.strip()[:120]}` no longer reported"
            out.append(Change(check=rh.id, kind="improvement", what=what, why="The finding is gone.", key=e.key, before=e.value,
                              finding=f"finding:{_finding_key(e)}", what_zh=what, why_zh="该问题已消除。"))
    return out


def _scores(audit: Audit) -> dict[str, tuple[float, int]]:
    return {c.id: (c.points, c.max) for c in category_scores(audit.results) if c.applicable}


def rank_key(head: Audit) -> Callable[[Change], tuple[int, str, int]]:
    """Sort key of changes: the check's priority in ``head``, then its ID."""
    reg = _registry()
    by_id = {r.id: r for r in head.results}
    return lambda c: _rank_key(c, by_id, reg)


def compare_audits(base: Audit | None, head: Audit) -> Comparison:
    """Regressions and improvements of ``head`` against ``base`` (``None``: no base audit, only new findings count)."""
    reg = _registry()
    env = env_of(head)
    head_by_id = {r.id: r for r in head.results}
    base_by_id = {r.id: r for r in base.results} if base else {}
    changes: list[Change] = []
    seen_values: set[tuple[str, str, str]] = set()
    for rh in head.results:
        rb = base_by_id.get(rh.id)
        if base is None:
            changes += [c for c in _finding_changes(None, rh, reg) if c.kind == "regression"]
            continue
        if rb is None:
            continue
        values = []
        comparable = Status.NA not in (rb.status, rh.status)  # a check that stopped (or started) applying compares nothing
        for c in _value_changes(rb, rh, base, head, env) if comparable else []:
            sig = (c.finding, fmt(c.before), fmt(c.after))
            if sig not in seen_values:  # the same value measured by two checks gives one change
                seen_values.add(sig)
                values.append(c)
        status = _status_change(rb, rh, reg)
        if status is not None:
            same_way = [c for c in values if c.kind == status.kind]
            if same_way:
                first = same_way[0]
                first.what += f" ({rh.id} {rb.status.value} → {rh.status.value})"
                first.what_zh += f"（{rh.id} {_STATUS_ZH[rb.status]} → {_STATUS_ZH[rh.status]}）"
            else:
                values.insert(0, status)
        changes += values
        if not any(c.kind == "regression" for c in values):
            changes += _finding_changes(rb, rh, reg)
        elif rb is not None:
            changes += [c for c in _finding_changes(rb, rh, reg) if c.kind == "improvement"]
    cmp = Comparison(base_missing=base is None)
    cmp.regressions = sorted((c for c in changes if c.kind == "regression"), key=lambda c: _rank_key(c, head_by_id, reg))
    cmp.improvements = sorted((c for c in changes if c.kind == "improvement"), key=lambda c: _rank_key(c, head_by_id, reg))
    head_scores = _scores(head)
    s_head = overall(head.results)
    if base is not None:
        base_scores = _scores(base)
        s_base = overall(base.results)
        cmp.total = ((s_base.points, s_base.max), (s_head.points, s_head.max))
        for cat in CATEGORIES:
            b, h = base_scores.get(cat), head_scores.get(cat)
            if b is None and h is None:
                continue
            cmp.category_scores[cat] = (b, h if h is not None else (0.0, 0))
            delta = (h[0] if h else 0.0) - (b[0] if b else 0.0)
            if delta:
                cmp.category_delta[cat] = delta
    else:
        cmp.total = (None, (s_head.points, s_head.max))
        for cat, h in head_scores.items():
            cmp.category_scores[cat] = (None, h)
    return cmp
