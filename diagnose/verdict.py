"""From measured figures to the seed's bottleneck types, each reason citing its number, its threshold and its file.

The bottleneck names are the audit report's ``project.bottleneck`` values. Recommendations name static checks
(check IDs of ``shared/spec/check-ids.md``); with a static audit report at hand (``--audit``), a check that the
audit found unused or partial is put first and said so ("sawtooth + F1 unused: raise num_workers first").
"""

from __future__ import annotations

import statistics
from typing import Any

TYPES = ("data-io-bound", "communication-bound", "launch-bound", "memory-bound", "compute-bound")

# What each finding suggests, in the order to try them: (check, text)
ADVICE: dict[str, list[tuple[str, str]]] = {
    "data-io-bound": [
        ("F1", "raise DataLoader num_workers (start near the CPU cores per GPU) so batches are ready before the GPU asks"),
        ("F2", "set prefetch_factor (2-4) with persistent_workers=True so each worker keeps batches queued"),
        ("F3", "pin_memory=True, so host-to-device copies can run asynchronously"),
        ("F11", "copy batches with .to(device, non_blocking=True) from pinned memory, on a side stream, one batch ahead"),
        ("F6", "move tokenisation/decoding out of the training loop (preprocess offline)"),
    ],
    "communication-bound": [
        ("E2", "overlap gradient communication with backward (DDP bucketing / FSDP prefetch / ZeRO overlap_comm)"),
        ("E4", "tune NCCL for the fabric (NCCL_IB_HCA / NCCL_SOCKET_IFNAME, algorithm/protocol, channels)"),
        ("E1", "enable GPUDirect RDMA for inter-node traffic (nvidia-peermem, NCCL_NET_GDR_LEVEL)"),
        ("A4", "keep tensor-parallel groups inside one node (NVLink) and use pipeline/data parallel across nodes"),
        ("E3", "compress gradients (PowerSGD / FP16 or BF16 all-reduce hooks) when bandwidth is the limit"),
    ],
    "launch-bound": [
        ("D4", "capture the step with CUDA Graphs so hundreds of small launches become one"),
        ("D2", "torch.compile the model: fewer, fused kernels and less Python per step"),
        ("D6", "use fused optimizers and ops (fused=True AdamW, fused LayerNorm/RMSNorm)"),
        ("I4", "log less often: every loss.item() / .cpu() blocks the host until the GPU drains"),
    ],
    "memory-bound": [
        ("C6", "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True and keep tensor shapes steady to stop fragmentation"),
        ("C3", "activation checkpointing to trade compute for activation memory"),
        ("C5", "gradient accumulation: smaller micro-batches, same global batch"),
        ("C4", "offload optimizer states (ZeRO-Offload) when the model does not fit"),
    ],
    "imbalance": [
        ("F7", "balance the work per rank: pack sequences to a fixed token budget so every rank gets the same tokens per step "
               "(if the inputs are balanced, check the slow rank's GPU clocks and temperature)"),
    ],
    "compute-bound": [
        ("C1", "train in BF16 (autocast) so matmuls run on Tensor Cores"),
        ("D1", "use Flash Attention / SDPA for attention"),
        ("D6", "fuse elementwise ops and use fused optimizers"),
        ("D7", "keep hidden sizes and batch x sequence multiples of 8/64 for Tensor Cores"),
        ("C2", "FP8 on Hopper/Blackwell (Transformer Engine)"),
    ],
}


def _reason(kind: str, text: str, path: str | None, metric: str, value: Any, threshold: Any = None, weight: float = 1.0,
            key: str = "", **params: Any) -> dict[str, Any]:
    """A reason: English ``text``; ``key`` and ``params`` let a renderer say it in another language (diagnose/i18n.py)."""
    ev: dict[str, Any] = {"metric": metric, "value": value}
    if path:
        ev["path"] = path
    if threshold is not None:
        ev["threshold"] = threshold
    out = {"type": kind, "text": text, "evidence": ev, "weight": weight}
    if key:
        out["key"] = key
        out["params"] = params
    return out


def _worst(ranks: list[dict[str, Any]], key: str, high: bool = True) -> dict[str, Any] | None:
    have = [r for r in ranks if key in r]
    if not have:
        return None
    return max(have, key=lambda r: r[key]) if high else min(have, key=lambda r: r[key])


def trace_reasons(ranks: list[dict[str, Any]], s: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not ranks:
        return out
    r = _worst(ranks, "idle_pct")
    if r is not None and r["idle_pct"] >= s["idle_high_pct"]:
        split = r.get("idle_split", {})
        dl = split.get("dataloader_pct_of_idle", 0.0)
        sync = split.get("sync_pct_of_idle", 0.0)
        host = split.get("host_wait_pct_of_idle", 0.0)
        where = f"rank {r.get('rank')}" if r.get("rank") is not None else "the GPU"
        base = f"GPU idle {r['idle_pct']:.1f}% of the span on {where} (threshold {s['idle_high_pct']:g}%)"
        if dl >= s["dataloader_idle_pct"]:
            out.append(_reason("data-io-bound", f"{base}; {dl:.1f}% of that idle time the host was inside DataLoader.__next__",
                               r.get("path"), "idle_split.dataloader_pct_of_idle", dl, s["dataloader_idle_pct"], 2.0,
                               "idle_dataloader", where=where, idle=r["idle_pct"], thr=s["idle_high_pct"], share=dl))
        elif sync >= 30.0:
            out.append(_reason("launch-bound", f"{base}; {sync:.1f}% of it follows blocking CUDA syncs (the host waited, then refilled the GPU)",
                               r.get("path"), "idle_split.sync_pct_of_idle", sync, 30.0, 1.5,
                               "idle_sync", where=where, idle=r["idle_pct"], thr=s["idle_high_pct"], share=sync))
        elif host >= 30.0:
            short = r.get("median_kernel_us")
            text = f"{base}; {host:.1f}% of it the next kernel had not been launched yet (the host is too slow to feed the GPU)"
            if short is not None:
                text += f"; median kernel {short:.1f} us"
            out.append(_reason("launch-bound", text, r.get("path"), "idle_split.host_wait_pct_of_idle", host, 30.0, 1.5,
                               "idle_host", where=where, idle=r["idle_pct"], thr=s["idle_high_pct"], share=host))
        else:
            out.append(_reason("data-io-bound" if dl else "launch-bound", base, r.get("path"), "idle_pct", r["idle_pct"], s["idle_high_pct"], 0.5,
                               "idle", where=where, idle=r["idle_pct"], thr=s["idle_high_pct"]))
    r = _worst(ranks, "comm_share_pct")
    if r is not None and r["comm_share_pct"] >= s["comm_high_pct"]:
        ov = r.get("comm_comp_overlap_pct")
        if ov is not None and ov < s["overlap_low_pct"]:
            out.append(_reason("communication-bound",
                               f"communication kernels take {r['comm_share_pct']:.1f}% of kernel time on rank {r.get('rank')} and only "
                               f"{ov:.1f}% of it overlaps computation (thresholds {s['comm_high_pct']:g}% / {s['overlap_low_pct']:g}%)",
                               r.get("path"), "comm_comp_overlap_pct", ov, s["overlap_low_pct"], 2.0,
                               "comm_low_overlap", rank=r.get("rank"), comm=r["comm_share_pct"], overlap=ov, thr=s["comm_high_pct"],
                               othr=s["overlap_low_pct"]))
        else:
            out.append(_reason("communication-bound",
                               f"communication kernels take {r['comm_share_pct']:.1f}% of kernel time on rank {r.get('rank')} "
                               f"(threshold {s['comm_high_pct']:g}%), {ov if ov is not None else 0:.1f}% overlapped",
                               r.get("path"), "kernel_types.communication", r["comm_share_pct"], s["comm_high_pct"], 0.75,
                               "comm_high", rank=r.get("rank"), comm=r["comm_share_pct"], overlap=ov or 0.0, thr=s["comm_high_pct"]))
    r = _worst(ranks, "compute_pct", high=False)
    if r is not None and all(x.get("compute_pct", 0) >= s["compute_bound_pct"] for x in ranks if "compute_pct" in x):
        out.append(_reason("compute-bound", f"computation kernels run {r['compute_pct']:.1f}% of the GPU span even on the least busy rank "
                                            f"(threshold {s['compute_bound_pct']:g}%)",
                           r.get("path"), "compute_pct", r["compute_pct"], s["compute_bound_pct"], 1.5,
                           "compute_bound", compute=r["compute_pct"], thr=s["compute_bound_pct"]))
    return out


def stragglers(ranks: list[dict[str, Any]], s: dict[str, Any]) -> list[dict[str, Any]]:
    have = [r for r in ranks if r.get("kernel_time_ms", {}).get("computation")]
    if len(have) < 2:
        return []
    comp = [r["kernel_time_ms"]["computation"] for r in have]
    med = statistics.median(comp)
    out = []
    for r, c in zip(have, comp):
        if med and 100 * (c - med) / med > s["straggler_pct"]:
            out.append({"rank": r.get("rank"), "path": r.get("path"), "compute_ms": c, "median_ms": round(med, 3),
                        "over_pct": round(100 * (c - med) / med, 1)})
    return out


def build(report: dict[str, Any], s: dict[str, Any], audit: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    reasons = trace_reasons(report.get("ranks", []), s)
    for t in report.get("nsys", []):
        comm = (t.get("kernel_types") or {}).get("communication", 0.0)
        if comm >= s["comm_high_pct"]:
            reasons.append(_reason("communication-bound", f"communication kernels are {comm:.1f}% of the summed kernel time in the Nsight "
                                                          f"summary (threshold {s['comm_high_pct']:g}%; a summary cannot show overlap)",
                                   t.get("path"), "nsys.kernel_types.communication", comm, s["comm_high_pct"], 0.75,
                                   "nsys_comm", comm=comm, thr=s["comm_high_pct"]))
    util = report.get("utilization") or {}
    for g in util.get("gpus", []):
        if g.get("sawtooth"):
            reasons.append(_reason("data-io-bound",
                                   f"GPU {g['index']} utilisation saws: {g['drops']} drops from >= {s['sawtooth_high_pct']:g}% to <= "
                                   f"{s['sawtooth_low_pct']:g}% every {g.get('period_s', '?')} s (mean {g['mean_pct']:.1f}%)",
                                   g.get("path"), "utilization.sawtooth_drops", g["drops"], s["sawtooth_min_drops"], 2.0,
                                   "sawtooth", gpu=g["index"], drops=g["drops"], high=s["sawtooth_high_pct"], low=s["sawtooth_low_pct"],
                                   period=g.get("period_s", "?"), mean=g["mean_pct"]))
            break
    mem = report.get("memory") or {}
    if mem.get("fragmentation_pct", 0) >= s["fragmentation_high_pct"]:
        reasons.append(_reason("memory-bound", f"the allocator holds {mem['peak_reserved_mb']:.0f} MiB for a {mem['peak_allocated_mb']:.0f} MiB "
                                               f"peak of tensors: {mem['fragmentation_pct']:.1f}% fragmentation (threshold {s['fragmentation_high_pct']:g}%)",
                               mem.get("path"), "memory.fragmentation_pct", mem["fragmentation_pct"], s["fragmentation_high_pct"], 1.0,
                               "fragmentation", reserved=mem["peak_reserved_mb"], allocated=mem["peak_allocated_mb"],
                               frag=mem["fragmentation_pct"], thr=s["fragmentation_high_pct"]))
    if mem.get("alloc_retries"):
        reasons.append(_reason("memory-bound", f"{mem['alloc_retries']} cudaMalloc retries: the cache was flushed and allocations retried "
                                               "(each one a device-wide sync)", mem.get("path"), "memory.alloc_retries", mem["alloc_retries"], 0, 1.5,
                               "retries", n=mem["alloc_retries"]))
    if mem.get("ooms"):
        reasons.append(_reason("memory-bound", f"{mem['ooms']} out-of-memory errors recorded", mem.get("path"), "memory.ooms", mem["ooms"], 0, 2.0, "ooms", n=mem["ooms"]))
    churn = mem.get("segments_freed") or 0
    if churn >= s["empty_cache_churn"]:
        reasons.append(_reason("memory-bound", f"{churn} segments given back to the driver (empty_cache or retries): allocation churn "
                                               f"(threshold {s['empty_cache_churn']})", mem.get("path"), "memory.segments_freed", churn,
                               s["empty_cache_churn"], 0.75, "churn", n=churn, thr=s["empty_cache_churn"]))
    nccl = report.get("nccl") or {}
    for f in nccl.get("findings", []):
        reasons.append(_reason("communication-bound", f"NCCL: {f['text']}", nccl.get("path") + (f":{f['line']}" if f.get("line") else "")
                               if nccl.get("path") else None, f"nccl.{f['id']}", True, None, 1.5, "nccl." + f["id"], **f.get("params", {})))
    sc = (report.get("steps") or {}).get("scaling")
    if sc and sc["efficiency_pct"] < s["scaling_low_pct"]:
        reasons.append(_reason("communication-bound",
                               f"scaling efficiency {sc['efficiency_pct']:.1f}% from {sc['gpus'][0]} to {sc['gpus'][1]} GPUs "
                               f"(TN/(N x T1), {sc['unit']}; threshold {s['scaling_low_pct']:g}%)",
                               sc["paths"][1], "steps.scaling.efficiency_pct", sc["efficiency_pct"], s["scaling_low_pct"], 2.0,
                               "scaling", eff=sc["efficiency_pct"], g1=sc["gpus"][0], gn=sc["gpus"][1], unit=sc["unit"], thr=s["scaling_low_pct"]))
    for st in report.get("stragglers", []):
        reasons.append(_reason("imbalance", f"rank {st['rank']} spends {st['over_pct']:.1f}% more time in computation kernels than the "
                                            f"median rank ({st['compute_ms']:.1f} vs {st['median_ms']:.1f} ms; threshold {s['straggler_pct']:g}%): "
                                            "a straggler the other ranks wait for", st.get("path"), "compute_time_ms", st["compute_ms"],
                               st["median_ms"], 0.0, "straggler", rank=st["rank"], over=st["over_pct"], c=st["compute_ms"],
                               med=st["median_ms"], thr=s["straggler_pct"]))
    weight: dict[str, float] = {}
    for r in reasons:
        weight[r["type"]] = weight.get(r["type"], 0.0) + r["weight"]
    if weight:
        bottleneck = max(TYPES, key=lambda t: (weight.get(t, 0.0), -TYPES.index(t)))
        if weight.get(bottleneck, 0) == 0:
            bottleneck = "needs-profiling"
    else:
        bottleneck = "needs-profiling"
    ordered = sorted(reasons, key=lambda r: (r["type"] != bottleneck, -r["weight"]))
    verdict: dict[str, Any] = {"bottleneck": bottleneck,
                               "reasons": [{k: v for k, v in r.items() if k != "weight"} for r in ordered]}
    if bottleneck == "needs-profiling":
        verdict["note"] = ("no threshold was crossed by the inputs given: add a profiler trace with a few steps "
                           "(and nvidia-smi or a training log) to see where the time goes")
    named = [f["check"] for f in (report.get("nccl") or {}).get("findings", []) if f.get("check")]
    return verdict, recommendations(verdict, audit, named)


def _audit_status(audit: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    if not audit:
        return {}
    return {c.get("id"): c for c in audit.get("checks", []) if isinstance(c, dict)}


def recommendations(verdict: dict[str, Any], audit: dict[str, Any] | None, named: list[str] | None = None) -> list[dict[str, Any]]:
    """Advice per bottleneck type, the verdict's type first; checks a finding named (``named``) lead their type's list."""
    status = _audit_status(audit)
    first = {c: i for i, c in enumerate(named or [])}
    types = [verdict["bottleneck"]] + [r["type"] for r in verdict["reasons"] if r["type"] != verdict["bottleneck"]]
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for n, t in enumerate(dict.fromkeys(types)):
        advice = sorted(ADVICE.get(t, []), key=lambda ct: first.get(ct[0], len(first)))
        for check, text in advice:
            if check in seen:
                continue
            seen.add(check)
            rec: dict[str, Any] = {"check": check, "for": t, "priority": "high" if n == 0 else "medium", "text": text}
            st = status.get(check)
            if st is not None:
                rec["static_status"] = st.get("status")
                ev = (st.get("evidence") or [{}])[0]
                if ev.get("path"):
                    rec["static_evidence"] = f"{ev['path']}:{ev.get('line', '')}".rstrip(":")
                if st.get("status") in ("used", "n/a"):
                    rec["priority"] = "low"
            out.append(rec)
    rank = {"high": 0, "medium": 1, "low": 2}
    # A check the static audit found unused (or partial) comes first within its priority: fix what is missing first.
    out.sort(key=lambda r: (rank[r["priority"]], {"unused": 0, "partial": 1}.get(r.get("static_status", ""), 2)))
    return out
