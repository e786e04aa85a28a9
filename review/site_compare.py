"""Compare every run configuration the PR touches or adds with the same site in base.

For a site that exists on both sides, each canonical setting is compared base vs head with
the rules of :mod:`review.rules` (a key removed from the site compares with what applies
without it: FP32 for a removed precision flag, off for a removed feature switch). For a new
site (a recipe or launcher the PR adds), each value it sets is compared with the repository's
prevailing value for that setting in base (the most common value among sites of the same
kind) and with the seed's thresholds (checkpoint every >= 50 steps, >= 10 for adapters;
logging every >= 10 steps). Costs use the model this site trains (:func:`review.sites.model_of`).

Each change is placed on the diff line that holds it: RIGHT on the added line that sets
the head value, else LEFT on the removed line that set the base value; a change whose
line is not in the diff is left unplaced (check run only).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from checks.engine import Audit
from checks.facts import as_number

from .attribute import Placement
from .diff import LEFT, RIGHT, DiffIndex
from .model import Change
from .rules import RULES, Env, Verdict, _flag, fmt
from .sites import CANON_CHECK, Site, SiteValue, gpus_of, model_of, seq_of, sites_of

__all__ = ["SiteComparison", "compare_sites"]

_FEATURES = ("torch_compile", "gradient_checkpointing", "use_liger_kernel", "fused_optimizer", "offload_optimizer", "offload_param",
             "comm_overlap")
_SAVE_THRESHOLD, _SAVE_THRESHOLD_SMALL, _LOG_THRESHOLD = 50, 10, 10
#: settings a new site is compared on with the repository's prevailing value
_PREVAILING = ("save_steps", "logging_steps", "eval_steps", "num_workers", "prefetch_factor", "pin_memory", "precision",
               "attn_implementation", "torch_compile", "use_liger_kernel", "fused_optimizer", "kernel_fusion")

_EXTRA_RULES = {
    "use_liger_kernel": _flag(
        "Liger kernels switched off: RMSNorm, RoPE, SwiGLU and the fused linear cross-entropy run as separate PyTorch ops again "
        "(Liger reports ~20% higher throughput and ~60% less memory on Llama-class training)",
        "关闭了 Liger Kernel：RMSNorm、RoPE、SwiGLU 与融合交叉熵重新以多个 PyTorch 算子执行（Liger 报告 Llama 类训练吞吐约 +20%、显存约 -60%）",
        "Liger kernels fuse RMSNorm, RoPE, SwiGLU and the cross-entropy", "Liger Kernel 融合 RMSNorm、RoPE、SwiGLU 与交叉熵"),
    "fused_optimizer": _flag(
        "fused optimizer replaced by an unfused one: the optimizer step launches one kernel per parameter tensor and operation",
        "融合优化器被换成非融合实现：优化器每一步对每个参数张量、每个操作各启动一次内核",
        "the optimizer step runs as a few fused kernels", "优化器步以少量融合内核执行"),
    "comm_overlap": _flag(
        "gradient/parameter communication no longer overlaps with compute: each step waits for its all-reduce or all-gather "
        "after the backward pass",
        "梯度/参数通信不再与计算重叠：每一步都要在反向之后等待 all-reduce 或 all-gather 完成",
        "gradient reduction (or parameter gathering) overlaps with the backward/forward compute",
        "梯度归约（或参数收集）与前向/反向计算重叠"),
    "kernel_fusion": _flag(
        "a fused kernel was switched off (`--no-*-fusion`): the fused ops run as separate kernels with extra memory traffic",
        "关闭了融合内核（`--no-*-fusion`）：原本融合的算子分开执行，显存读写增加",
        "fused kernels switched back on", "重新启用融合内核"),
}


@dataclass(slots=True)
class SiteComparison:
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    placements: list[Placement] = field(default_factory=list)  # the placed regressions, in the order of ``regressions``
    unplaced: list[Change] = field(default_factory=list)
    suppressed: list[Change] = field(default_factory=list)  # regressions on lines the PR itself marked ``accel-ignore``
    sites: int = 0  # sites compared


_MEGATRON_HINTS = ("tensor_model_parallel_size", "num_layers", "micro_batch_size", "global_batch_size", "data_path", "seq_length")


def _megatron(site: Site) -> bool:
    return site.kind == "launch" and sum(k in site.raw for k in _MEGATRON_HINTS) >= 2


def _absent(canon: str, other: SiteValue, site: Site | None = None) -> Any:
    """What applies when a site does not set ``canon`` (None: unknown, nothing is compared)."""
    if canon == "num_workers" and site is not None and _megatron(site):
        return 2  # Megatron-LM's --num-workers default
    if canon == "precision":
        return "fp32"
    if canon in _FEATURES or canon == "kernel_fusion":
        return False
    if canon == "attn_implementation" and other.value == "flash_attention_2" and other.key.lstrip("-").replace("-", "_") in (
            "use_flash_attn", "use_flash_attention_2", "flash_attn"):
        return "sdpa"  # the switch off: the framework's default attention (not eager: unknown which)
    if canon == "num_workers" and ("(" in other.key or not other.key.startswith("-")):
        return 0  # DataLoader / HF TrainingArguments default
    return None


def _model_note(site: Site, lang: str) -> tuple[str, str]:
    name, params, lora, rank = model_of(site)
    if lora:
        r = f" rank {rank}" if rank else ""
        en = (f" (this recipe trains LoRA{r} adapters" + (f" of `{name}`" if name else "") +
              ": each save writes only the adapter weights and their optimizer state, not the full model)")
        zh = f"（本配置训练 LoRA{r} 适配器" + (f"（`{name}`）" if name else "") + "：每次只保存适配器权重及其优化器状态，而非完整模型）"
        return en, zh
    if params:
        size = 14 * params
        gb = f"{size:.0f} GB" if size >= 10 else f"{size:.1f} GB"
        en = f" (about {gb} per full checkpoint with Adam state for the {params:.3g}B-parameter model `{name}` this site trains)"
        zh = f"（本配置训练的 {params:.3g}B 参数模型 `{name}`，含 Adam 状态的完整检查点约 {gb}）"
        return en, zh
    if name:
        return (f" (checkpoint size unknown: the parameter count of `{name}` is not stated in this site)",
                f"（检查点大小未知：本配置未给出 `{name}` 的参数量）")
    return " (checkpoint size unknown: the model this site trains is not named in it)", "（检查点大小未知：本配置未写明所训练的模型）"


def _env(site: Site) -> Env:
    _, params, lora, _ = model_of(site)
    return Env(params_b=None if lora else params, gpus=gpus_of(site), seq=seq_of(site))


def _judge(canon: str, name: str, before: Any, after: Any, site: Site) -> Verdict | None:
    env = _env(site)
    if canon in ("save_steps",):
        v = RULES["save_steps"](name, before, after, Env(gpus=env.gpus, seq=env.seq))
        if v is not None and v.direction < 0:
            en, zh = _model_note(site, "en")
            v = Verdict(v.direction, v.what, v.why[:-1] + en + ".", v.what_zh, v.why_zh[:-1] + zh + "。")
        return v
    if canon in RULES:
        return RULES[canon](name, before, after, env)
    if canon in _EXTRA_RULES:
        return _EXTRA_RULES[canon](name, before, after, env)
    return None


def _batch(site: Site) -> tuple[float, float, float | None]:
    v = site.values
    gas = as_number(v["gradient_accumulation_steps"].value) if "gradient_accumulation_steps" in v else 1.0
    mb = as_number(v["micro_batch_size"].value) if "micro_batch_size" in v else 1.0
    gb = as_number(v["global_batch_size"].value) if "global_batch_size" in v else None
    return gas or 1.0, mb or 1.0, gb


def _batch_change(b: Site, h: Site) -> tuple[str, Verdict] | None:
    if "gradient_accumulation_steps" not in b.values and "gradient_accumulation_steps" not in h.values:
        return None
    names = ("gradient_accumulation_steps", "micro_batch_size", "global_batch_size")
    if any(n in b.unknown or n in h.unknown for n in names):
        return None
    if not (b.absence_known and h.absence_known) and any((n in b.values) != (n in h.values) for n in names):
        return None  # a missing value may be inherited from code (nanoGPT's train.py globals): unknown
    gas_b, mb_b, gb_b = _batch(b)
    gas_h, mb_h, gb_h = _batch(h)
    if gb_b is not None and gb_b == gb_h:
        return None  # the global batch is pinned: accumulation is derived from it
    if (gas_b, mb_b) == (gas_h, mb_h) or gas_b * mb_b == gas_h * mb_h:
        return None
    eb, eh = gas_b * mb_b, gas_h * mb_h
    what = f"`gradient_accumulation_steps` {fmt(gas_b)} → {fmt(gas_h)} (micro batch {fmt(mb_b)} → {fmt(mb_h)})"
    why = (f"the effective batch per GPU moves {fmt(eb)} → {fmt(eh)} samples per optimizer step: the learning rate and schedule were "
           "tuned for the old batch, and " + ("each step now all-reduces gradients for fewer samples" if eh < eb else
                                               "the run takes fewer optimizer steps per epoch"))
    why_zh = f"每卡有效 batch 由 {fmt(eb)} 变为 {fmt(eh)}：学习率与调度是按原 batch 调好的，" + ("每次梯度 all-reduce 对应的样本更少" if eh < eb else "每个 epoch 的优化步变少")
    return "gradient_accumulation_steps", Verdict(-1, what, why + ".", what, why_zh + "。")


def _place(diff: DiffIndex, hv: SiteValue | None, bv: SiteValue | None) -> tuple[str, int, str, str] | None:
    """(path, line, side, text) of the diff line that holds the change."""
    if hv is not None:
        fd = diff.head(hv.path)
        if fd is not None and hv.line in fd.added and diff.valid_target(fd.path, hv.line, RIGHT):
            return fd.path, hv.line, RIGHT, fd.added[hv.line]
    if bv is not None:
        fd = diff.base(bv.path)
        if fd is not None and bv.line in fd.removed and diff.valid_target(fd.path, bv.line, LEFT):
            return fd.path, bv.line, LEFT, fd.removed[bv.line]
    return None


def _spelled(text: str, key: str) -> str:
    """The flag as the line spells it (``--num-workers`` for the key ``--num_workers``)."""
    if not key.startswith("-"):
        return key
    import re

    bare = key.lstrip("-")
    pat = "".join("[-_]" if ch in "-_" else re.escape(ch) for ch in bare)
    m = re.search(r"(?<![\w-])(--?" + pat + r")(?![\w-])", text)
    return m.group(1) if m else key


@dataclass(slots=True)
class _Raw:
    check: str
    canon: str
    verdict: Verdict
    site: Site
    hv: SiteValue | None
    bv: SiteValue | None
    before: Any
    after: Any
    new_site: bool = False
    note: str = ""


def _prevailing(base_sites: list[Site], kind: str, canon: str) -> tuple[SiteValue, int, int] | None:
    vals = [s.values[canon] for s in base_sites if s.kind == kind and canon in s.values]
    if not vals:
        return None
    counts = Counter(fmt(v.value) for v in vals)
    top, n = counts.most_common(1)[0]
    first = next(v for v in vals if fmt(v.value) == top)
    return first, n, len(vals)


def compare_sites(base: Audit | None, head: Audit, diff: DiffIndex, ignored: set[str] | frozenset[str] = frozenset()) -> SiteComparison:
    """Per-site regressions and improvements of the PR (see the module docstring)."""
    out = SiteComparison()
    head_files = head.facts.files
    touched_head = {f.target_path for f in diff.files if f.target_path and not f.binary}
    renamed = {f.target_path: f.source_path for f in diff.files if f.target_path and f.source_path and f.target_path != f.source_path}
    h_sites = sites_of(head_files, touched_head)
    b_files = base.facts.files if base is not None else {}
    touched_base = {f.source_path for f in diff.files if f.source_path}
    b_sites = sites_of(b_files, touched_base | set(touched_head)) if base is not None else {}
    all_base: list[Site] | None = None
    raws: list[_Raw] = []
    for sid, hs in h_sites.items():
        bid = sid
        if hs.path in renamed:
            bid = renamed[hs.path] + sid[len(hs.path):]
        bs = b_sites.get(bid)
        out.sites += 1
        if bs is None:
            if base is None:
                continue
            if all_base is None:
                all_base = list(sites_of(b_files).values())
            raws += _new_site(hs, all_base)
            continue
        for canon in sorted(set(hs.values) | set(bs.values)):
            if canon in ("gradient_accumulation_steps", "micro_batch_size", "global_batch_size") or canon in hs.unknown | bs.unknown:
                continue
            hv, bv = hs.values.get(canon), bs.values.get(canon)
            if (hv is None or bv is None) and not (hs.absence_known and bs.absence_known):
                continue  # missing on one side may be an expression the facts do not hold: unknown, not removed
            if hv is not None and bv is not None and fmt(hv.value) == fmt(bv.value):
                continue
            before = bv.value if bv is not None else _absent(canon, hv, bs)  # type: ignore[arg-type]
            after = hv.value if hv is not None else _absent(canon, bv, hs)  # type: ignore[arg-type]
            if before is None or after is None:
                continue
            key = (hv or bv).key  # type: ignore[union-attr]
            v = _judge(canon, _label(key), before, after, hs)
            if v is not None:
                if hv is None:
                    v = Verdict(v.direction, f"`{_label(key)}` removed ({fmt(before)} → {fmt(after)}, the default)", v.why,
                                f"删除了 `{_label(key)}`（{fmt(before)} → 默认值 {fmt(after)}）", v.why_zh)
                raws.append(_Raw(CANON_CHECK.get(canon, "?"), canon, v, hs, hv, bv, before, after))
        bc = _batch_change(bs, hs)
        if bc is not None:
            canon, v = bc
            hv, bv = hs.values.get(canon), bs.values.get(canon)
            raws.append(_Raw("C5", canon, v, hs, hv, bv, bv.value if bv else 1, hv.value if hv else 1))
    _emit(raws, base, head, diff, ignored, out)
    for ch in out.regressions + out.improvements:
        if len(ch.sites) > 1:  # a shared file: say which run configurations it changes
            n = len(ch.sites) - (ch.path in ch.sites)
            ch.what += f" (inherited by {n} other site(s))"
            ch.what_zh += f"（被另外 {n} 个配置继承）"
    return out


def _label(key: str) -> str:
    """A key as a comment names it: a call keyword as ``num_workers=`` (the call is named by the site), others as written."""
    if key.endswith("=)") and "(" in key:
        return key[key.index("(") + 1 : -1]
    return key


def _config_module(path: str) -> bool:
    parts = path.lower().split("/")
    return any(p in ("config", "configs", "recipes") for p in parts[:-1]) or "config" in parts[-1]


def _new_site(hs: Site, base_sites: list[Site]) -> list[_Raw]:
    raws: list[_Raw] = []
    if hs.kind == "globals" and not _config_module(hs.path):
        return raws  # constants of a new module are not a run configuration unless it is a config module
    _, params, lora, _ = model_of(hs)
    for canon, hv in hs.own.items():
        if canon not in _PREVAILING:
            continue  # ZeRO stage, offload, checkpointing, batch: chosen per model and hardware, not a house style
        prev = _prevailing(base_sites, hs.kind, canon)
        verdict: Verdict | None = None
        before: Any = None
        note = ""
        if prev is not None:
            pv, n, total = prev
            v = _judge(canon, _label(hv.key), pv.value, hv.value, hs)
            if v is not None and v.direction < 0:
                kind = {"recipe": "recipes", "launch": "launch commands", "call": "calls", "globals": "config modules"}[hs.kind]
                verdict = Verdict(-1, f"`{_label(hv.key)}` {fmt(hv.value)} in a new {hs.kind} (the repository's other {kind}: {fmt(pv.value)} in {n} of {total})",
                                  v.why, f"新增的配置中 `{_label(hv.key)}` 为 {fmt(hv.value)}（仓库中其他配置：{total} 个中 {n} 个为 {fmt(pv.value)}）", v.why_zh)
                before = pv.value
                note = f"prevailing in {n} of {total}"
        n_after = as_number(hv.value)
        threshold = None
        if canon == "save_steps" and n_after is not None and n_after >= 1:
            threshold = _SAVE_THRESHOLD_SMALL if lora or (params is not None and params < 1) else _SAVE_THRESHOLD
        elif canon == "logging_steps" and n_after is not None and n_after >= 1:
            threshold = _LOG_THRESHOLD
        if threshold is not None and n_after is not None and n_after < threshold:
            tv = _judge(canon, _label(hv.key), threshold, n_after, hs)
            if verdict is None and tv is not None:
                what = f"`{_label(hv.key)}` {fmt(hv.value)} in a new {hs.kind} (threshold: every {threshold} steps or more)"
                why = f"Against the threshold of every {threshold} steps: {tv.why}"
                verdict = Verdict(-1, what, why, f"新增配置中 `{_label(hv.key)}` 为 {fmt(hv.value)}（阈值：至少每 {threshold} 步）",
                                  f"与阈值（每 {threshold} 步）相比：{tv.why_zh}")
                before = threshold
                note = f"threshold {threshold}"
        if verdict is not None:
            raws.append(_Raw(CANON_CHECK.get(canon, "?"), canon, verdict, hs, hv, None, before, hv.value, True, note))
    return raws


def _suppressed(audit: Audit | None, path: str, line: int, check: str) -> bool:
    if audit is None:
        return False
    ff = audit.facts.files.get(path)
    ids = ff.suppressed.get(line) if ff is not None else None
    return bool(ids) and (check in ids or "*" in ids)


def _emit(raws: list[_Raw], base: Audit | None, head: Audit, diff: DiffIndex, ignored: set[str] | frozenset[str],
          out: SiteComparison) -> None:
    taken: dict[tuple[str, int, str, str, str], Change] = {}
    for r in raws:
        if r.check in ignored:
            continue
        kind = "regression" if r.verdict.direction < 0 else "improvement"
        place = _place(diff, r.hv, r.bv)
        src = r.hv or r.bv
        assert src is not None
        path, line, side = (place[0], place[1], place[2]) if place else (src.path, src.line, RIGHT if r.hv else LEFT)
        sig = (r.check, path, line, side, r.canon)
        if sig in taken:  # a shared defaults file: one change, every site that inherits it listed
            taken[sig].sites.append(r.site.id)
            continue
        key = _spelled(place[3], src.key) if place else src.key
        what, what_zh = r.verdict.what, r.verdict.what_zh
        if key != src.key:
            what, what_zh = what.replace(f"`{src.key}`", f"`{key}`"), what_zh.replace(f"`{src.key}`", f"`{key}`")
        ch = Change(check=r.check, kind=kind, what=what + f" in {r.site.label}", why=r.verdict.why, path=path, line=line, side=side,
                    key=key, before=r.before, after=r.after, finding=r.canon, what_zh=what_zh + f"（{r.site.label}）",
                    why_zh=r.verdict.why_zh)
        ch.site = r.site.id
        ch.sites = [r.site.id]
        ch.new_site = r.new_site
        if r.bv is not None:
            ch.base_path, ch.base_line, ch.base_key, ch.base_raw = r.bv.path, r.bv.line, r.bv.key, r.bv.raw
        if r.hv is not None:
            ch.head_path, ch.head_line, ch.head_raw = r.hv.path, r.hv.line, r.hv.raw
        ch.placed = place is not None
        taken[sig] = ch
        if kind == "improvement":
            out.improvements.append(ch)
            continue
        if side == RIGHT and _suppressed(head, path, line, r.check):
            pre = r.bv is not None and _suppressed(base, r.bv.path, r.bv.line, r.check) and place is None
            if pre:
                continue  # suppressed before this PR: the repository's own decision
            ch.suppressed_by_pr = True
            out.suppressed.append(ch)
        out.regressions.append(ch)
        if place is not None:
            base_value = r.bv.raw if (r.bv is not None and side == RIGHT) else None
            base_text = None
            if side == LEFT:
                base_text = place[3]
            else:
                fd = diff.base(r.bv.path) if r.bv is not None else None
                base_text = fd.removed.get(r.bv.line) if (fd is not None and r.bv is not None) else None
            fd = diff.by_comment_path(path)
            out.placements.append(Placement(ch, path, line, side, place[3], key, r.hv.raw if (r.hv and side == RIGHT) else r.bv.raw if r.bv else None,
                                            base_value, base_text, bool(fd and fd.crlf)))
        else:
            out.unplaced.append(ch)
