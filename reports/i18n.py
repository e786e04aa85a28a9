"""Report wording in English and Chinese (the Chinese headings are the seed's, third step)."""

from __future__ import annotations

import re

from checks.lazyre import lazy_compile
from checks.model import CATEGORIES, Bottleneck, Priority, Status
from checks.workload import INFERENCE_ONLY_ZH

LANGS = ("en", "zh")

TEXT: dict[str, dict[str, str]] = {
    "en": {
        "title": "LLM/MLLM Training Acceleration Audit",
        "overview": "Project overview",
        "path": "Project path",
        "frameworks": "Frameworks detected",
        "none": "none detected",
        "plain_torch": "plain PyTorch (no training framework)",
        "model_type": "Model type",
        "scale": "Estimated scale",
        "seq_len": "Max sequence length",
        "seq_len_value": "{n} tokens",
        "seq_len_mixed": "{n} tokens (other settings: {others})",
        "seq_len_spread": "set per recipe, no majority: {dist} (tokens, with how many files set each)",
        "unknown": "unknown",
        "scale_range": "one run's size is not decided: {range} across its recipes ({where})",
        "bottleneck": "Primary bottleneck (preliminary)",
        "why": "Why",
        "hardware": "Target hardware",
        "nodes": "Nodes",
        "workload": "Workload",
        "inference_only": ("inference only: no training step on any path, so the training checks are n/a; the score covers the "
                           "inference checks (J) and those that speed up generation too ({ids})"),
        "nodes_configured": "{n} (configured at {where})",
        "nodes_unresolved": "several: a multi-node launch at {where} whose node count is set when the job starts ({value})",
        "nodes_documented": "multi-node training documented at {where}, not configured by a launch or config",
        "nodes_documented_inference": "multi-node inference documented at {where}, not configured by a launch or config",
        "nodes_standalone": ("one node as written: {where} asks torchrun for several nodes with `--standalone`, whose rendezvous"
                             " is local, so no other node can join (the launch waits for them); drop `--standalone` and pass"
                             " `--rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:29500` to run across nodes"),
        "summary": "Audit summary",
        "col_cat": "Category",
        "col_score": "Score",
        "col_bar": "At a glance",
        "col_details": "Details",
        "overall": "Overall score",
        "details": "Detailed results",
        "advice": "Prioritized recommendations",
        "benefit": "Expected benefit",
        "trigger": "Triggered by",
        "no_setting": "no setting found",
        "snippets": "Recommended config snippets",
        "snippet_for": "for",
        "snippet_where": "in",
        "snippet_unfitted": "no config of this kind was found in the repository; shown for",
        "no_advice": "Nothing to recommend: every applicable practice is in place or not worth it here.",
        "withheld": "Not recommended for this project",
        "withheld_here": "not recommended here",
        "more_evidence": "more",
        "folded_evidence": "Evidence beyond the first {n} location(s) per check is folded to fit GitHub's 65,535-character limit; the JSON report (`--format json`) has all of it.",
        "folded_used": "Details of practices already in use are folded to fit GitHub's 65,535-character limit.",
        "folded_details": "Detailed results are folded to fit GitHub's 65,535-character limit; see the JSON report (`--format json`).",
        "folded_advice": "{n} further recommendation(s) are folded to fit GitHub's 65,535-character limit; see the JSON report.",
        "folded_cut": "The rest of this report is folded to fit GitHub's 65,535-character limit; see the JSON report.",
        "partial": "partial",
        "na": "not applicable",
        "not_judged": "not judged (out of the score)",
        "not_judged_list": "not judged",
        "ignored_note": "Ignored by the repository configuration",
        "findings": "finding",
        "used_list": "used",
        "partial_list": "partial",
        "missing_list": "missing",
        "na_list": "n/a",
        "cat_na": "n/a",
        "parse_errors": "Files that could not be parsed",
        "skipped": "Files skipped",
        "submodules": "Submodules not in this checkout",
        "no_training_code": "No training code found: nothing to audit, no score.",
        "no_training_code_hint": "accel-audit judges the project's own training path (the scripts a launcher, recipe or console script runs, and what they import). If the training code is there but was not recognised, name it under `paths.training` in `.github/accel-audit.yml`.",
        "files_read": "Files read",
        "context_only": "Read as context only",
        "also_seen": "also seen in",
        "context_note": "not counted: outside the training path",
        "profile_hint": "A static estimate from code; confirm it with a profile (nsys: GPU kernel share of wall time, NCCL share; torch.profiler: DataLoader wait).",
        "profile_hint_jax": "A static estimate from code; confirm it with a profile (a `jax.profiler` trace in XProf or TensorBoard: device busy time, collective share, idle gaps waiting for input).",
    },
    "zh": {
        "title": "LLM/MLLM 训练加速审计报告",
        "overview": "项目概览",
        "path": "项目路径",
        "frameworks": "检测到的框架",
        "none": "未检测到",
        "plain_torch": "原生 PyTorch（未使用训练框架）",
        "model_type": "模型类型",
        "scale": "预估规模",
        "seq_len": "最大序列长度",
        "seq_len_value": "{n} 个 token",
        "seq_len_mixed": "{n} 个 token（其他配置：{others}）",
        "seq_len_spread": "按配方设置，无多数值：{dist} 个 token（括号内为设置该值的文件数）",
        "unknown": "未知",
        "scale_range": "未确定单次训练的规模：各配方 {range}（{where}）",
        "bottleneck": "初步瓶颈类型判断",
        "why": "判断依据",
        "hardware": "目标硬件",
        "nodes": "节点数",
        "workload": "工作负载",
        "inference_only": "仅推理：任何路径上都没有训练步，训练相关检查均不适用；评分只含推理检查（J）以及同样加速生成的检查（{ids}）",
        "nodes_configured": "{n}（配置于 {where}）",
        "nodes_unresolved": "多机：{where} 的多机启动命令，节点数在作业启动时给出（{value}）",
        "nodes_documented": "文档中描述了多机训练（{where}），但启动命令与配置中未设置",
        "nodes_documented_inference": "文档中描述了多机推理（{where}），但启动命令与配置中未设置",
        "nodes_standalone": ("按所写只有单机：{where} 以 `--standalone` 向 torchrun 请求多个节点，而 standalone 的 rendezvous 在本机，"
                             "其他节点无法加入（启动会一直等待）；如需多机，去掉 `--standalone` 并传 "
                             "`--rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:29500`"),
        "summary": "审计总览",
        "col_cat": "类别",
        "col_score": "得分",
        "col_bar": "概览",
        "col_details": "详情",
        "overall": "综合得分",
        "details": "详细审查结果",
        "advice": "优先级排序的优化建议",
        "benefit": "预期收益",
        "trigger": "触发依据",
        "no_setting": "未找到相关设置",
        "snippets": "推荐配置代码片段",
        "snippet_for": "对应",
        "snippet_where": "位置",
        "snippet_unfitted": "仓库中未找到此类配置；以下示例适用于",
        "no_advice": "暂无建议：所有适用的加速实践均已采用，或对本项目收益不大。",
        "withheld": "不推荐给本项目的优化项",
        "withheld_here": "不推荐",
        "more_evidence": "更多",
        "folded_evidence": "为满足 GitHub 65,535 字符限制，每个检查项仅保留前 {n} 处证据；完整内容见 JSON 报告（`--format json`）。",
        "folded_used": "为满足 GitHub 65,535 字符限制，已使用项的详情已折叠。",
        "folded_details": "为满足 GitHub 65,535 字符限制，详细审查结果已折叠；完整内容见 JSON 报告（`--format json`）。",
        "folded_advice": "为满足 GitHub 65,535 字符限制，另有 {n} 条建议已折叠；完整内容见 JSON 报告。",
        "folded_cut": "为满足 GitHub 65,535 字符限制，报告其余部分已折叠；完整内容见 JSON 报告。",
        "partial": "部分使用",
        "na": "不适用",
        "not_judged": "未作判断（不计分）",
        "not_judged_list": "未作判断",
        "ignored_note": "已被仓库配置忽略",
        "findings": "问题",
        "used_list": "已使用",
        "partial_list": "部分使用",
        "missing_list": "未使用",
        "na_list": "不适用",
        "cat_na": "不适用",
        "parse_errors": "无法解析的文件",
        "skipped": "跳过的文件",
        "submodules": "未检出的子模块",
        "no_training_code": "未找到训练代码：无可审计内容，不计分。",
        "no_training_code_hint": "accel-audit 只评估项目自身的训练路径（启动脚本、训练配方或命令行入口所运行的脚本及其导入的模块）。如果训练代码存在但未被识别，请在 `.github/accel-audit.yml` 的 `paths.training` 中指明。",
        "files_read": "读取的文件数",
        "context_only": "仅作为上下文读取",
        "also_seen": "另见于",
        "context_note": "不计入：不在训练路径上",
        "profile_hint": "以上为基于代码的静态推断；请用 Profiling 确认（nsys：GPU kernel 占墙钟时间比例、NCCL 占比；torch.profiler：DataLoader 等待时间）。",
        "profile_hint_jax": "以上为基于代码的静态推断；请用 Profiling 确认（在 XProf 或 TensorBoard 中查看 `jax.profiler` trace：设备忙碌时间、集合通信占比、等待输入的空闲）。",
    },
}

BOTTLENECK: dict[str, dict[Bottleneck, str]] = {
    "en": {
        Bottleneck.COMPUTE: "Compute-bound",
        Bottleneck.MEMORY: "Memory-bound",
        Bottleneck.LATENCY: "Latency-bound",
        Bottleneck.LAUNCH: "Launch-bound",
        Bottleneck.COMMUNICATION: "Communication-bound",
        Bottleneck.DATA_IO: "Data I/O-bound",
        Bottleneck.UNKNOWN: "Needs profiling",
    },
    "zh": {
        Bottleneck.COMPUTE: "Compute-bound",
        Bottleneck.MEMORY: "Memory-bound",
        Bottleneck.LATENCY: "Latency-bound",
        Bottleneck.LAUNCH: "Launch-bound",
        Bottleneck.COMMUNICATION: "Communication-bound",
        Bottleneck.DATA_IO: "Data I/O-bound",
        Bottleneck.UNKNOWN: "待 Profiling 确认",
    },
}

PRIORITY: dict[str, dict[Priority, str]] = {
    "en": {Priority.HIGH: "High", Priority.MEDIUM: "Medium", Priority.LOW: "Low"},
    "zh": {Priority.HIGH: "高", Priority.MEDIUM: "中", Priority.LOW: "低"},
}

STATUS: dict[str, dict[Status, str]] = {
    "en": {Status.USED: "used", Status.PARTIAL: "partial", Status.UNUSED: "unused", Status.NA: "n/a"},
    "zh": {Status.USED: "已使用", Status.PARTIAL: "部分使用", Status.UNUSED: "未使用", Status.NA: "不适用"},
}

MODEL_TYPE: dict[str, dict[str, str]] = {
    "en": {"LLM": "LLM", "MLLM": "MLLM", "unknown": "unknown"},
    "zh": {"LLM": "LLM", "MLLM": "MLLM", "unknown": "未知"},
}


def check_lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"unsupported language {lang!r}; use one of {', '.join(LANGS)}")
    return lang


def category_name(cat: str, lang: str) -> str:
    en, zh = CATEGORIES[cat]
    return zh if lang == "zh" else en


# Chinese for the reasons a check gives for ``n/a`` (the checks state them in English), by what they say
_NA_ZH: tuple[tuple[str, str], ...] = (
    ("the check failed on this repository", "该检查在本仓库上出错（accel-audit 规则自身的缺陷），未作判断；请向我们报告"),
    # E2-E4 of a run that is one process (before the words below: the reason names no medium or stage)
    ("no distributed training found (no multi-process launch", "未发现分布式训练（无多进程启动、分布式封装、分片或多卡配置）："
                                                          "单进程训练没有梯度通信可重叠、压缩或调优"),
    # J2/J3 of a console chat that reads one prompt at a time (before the words below)
    ("one interactive user", "仅服务一个交互用户：每个生成脚本都用 input() 从终端读取一条提示并只为它生成；没有并发请求可批处理，"
                             "也没有正在解码的请求会被 prefill 阻塞"),
    # A4/E4 of generation on one GPU, E4 of generation in one process over several (before the words below)
    ("no generation spans gpus", "仅做推理，且生成不跨 GPU（无多进程启动、模型并行设置或多卡 device_map）：没有可切分的层，也没有可调优的集合通信"),
    ("plain device copies", "仅做推理，且在单进程内运行（无多进程启动、进程组、DataParallel 或推理引擎的模型并行）：device_map "
                            "跨 GPU 时只用普通的设备间拷贝传递激活，不运行任何 NCCL 集合通信，无可调优之处"),
    # E2/E3 beside a multi-process run only the docs show (first: the quoted command may hold other words of this table)
    ("the docs' training command", "仓库未提供启动脚本；文档中的训练命令会启动多个进程，其通信设置（重叠、梯度压缩）在仓库之外决定：请确认该运行实际的设置"),
    # I1/I2 on data paths that name no place or medium (first: a path may contain other words of this table, "pretrain")
    ("data-path flag or config points", "仓库中看不到训练数据的位置：请确认运行的数据路径参数或配置指向何处，以及该目录是否与 GPU 同集群"),
    ("which file system holds the run's data", "仓库中看不到训练数据的位置：请在训练节点上用 `df -hT <目录>` 确认数据所在的是本地 NVMe/SSD 还是 NFS/FUSE/对象存储"),
    ("do not say where the data live", "训练数据路径未表明数据所在位置（相对路径或未命名路径）：请在训练节点上确认该目录与 GPU 同集群（`df -h <目录>`），或训练前拷贝到本地 NVMe"),
    ("do not name their storage medium", "数据路径未指明存储介质：请在训练节点上用 `df -hT <目录>` 确认是本地 NVMe/SSD 还是 NFS/FUSE/对象存储"),
    # D7 with no dimension in the repository (first: its English reason names "checkpoint")
    ("not judged: no model dimension", "仓库中看不到模型维度或词表填充设置（架构来自检查点或无法静态读取的参数）；请确认所训练模型的 hidden、FFN 与词表大小是否为 64 的倍数"),
    # I3-I5 with nothing seen: not judged (first: its English reason names other words of this table)
    ("not judged: no checkpoint", "训练路径上没有检查点保存间隔的设置，训练步循环中也没有保存调用；请确认启动命令实际的保存频率"),
    ("not judged: no logging", "训练路径上没有日志间隔的设置，训练步循环中也没有日志调用；请确认启动命令实际的日志频率"),
    ("not judged: no tracker", "训练路径上没有上报间隔的设置，训练步循环中也没有 W&B/TensorBoard/MLflow 等上报调用；请确认实际的上报频率"),
    # G4/G5 of a run that trains only parameters it adds to a frozen model (before "fine-tun", which its reason holds)
    ("every pretrained weight is frozen", "预训练模型的全部权重已冻结，只训练项目新增的参数：没有需要 LoRA 化的权重微调，也没有可再选择冻结的层"),
    ("ignored by the repository", "已被仓库配置忽略"),
    ("no inference", "项目不做推理（仅训练；评测中的生成不计入）"),
    ("no training step on any path", INFERENCE_ONLY_ZH),
    ("only runs inference", "项目仅做推理"),
    ("no multimodal llm training recognised", "未识别到多模态大模型训练：项目中定义的图像模型未见为语言模型提供输入"),
    ("no multimodal llm", "无多模态大模型：项目中的视觉模型不是为语言模型提供输入的视觉编码器"),
    ("text-only", "纯文本项目（无视觉编码器）"),
    ("uses torchrun --standalone", "按所写只有单机：请求多个节点的启动命令使用 torchrun --standalone，其 rendezvous 在本机；"
                                   "改为能跨节点加入之后，GPUDirect RDMA 才有意义"),
    ("single-node", "单机项目：GPUDirect RDMA 只影响节点间通信"),
    ("no alignment", "无对齐（DPO/ORPO/KTO/PPO/GRPO 等）或蒸馏训练"),
    ("dense", "稠密模型（非 MoE）"),
    ("moe", "稠密模型（非 MoE）"),
    ("pretrain", "仅从头预训练，没有微调路径"),
    ("from scratch", "仅从头预训练，没有微调路径"),
    ("fine-tun", "没有微调路径"),
    ("single gpu", "单卡训练"),
    ("single-gpu", "单卡训练"),
    ("single-process", "单进程训练"),
)


def na_reason_zh(detail: str | None) -> str:
    """The Chinese reason for an ``n/a`` status (empty when the English one says nothing we can render faithfully)."""
    low = (detail or "").lower()
    return next((zh for needle, zh in _NA_ZH if needle in low), "")


def status_detail_zh(status: Status, has_evidence: bool, fix_zh: str | None, detail: str | None = None) -> str:
    """The seed's Chinese wording of a check's state: ``已使用``, ``部分使用``, ``未启用``, ``未检测到。建议…``."""
    if status == Status.USED:
        return "已使用"
    if status == Status.PARTIAL:
        return "部分使用"
    if status == Status.UNUSED:
        head = "未启用" if has_evidence else "未检测到"
        advice = (fix_zh or "").split("。")[0].strip()
        if len(advice) > 100:
            advice = advice[:99]
            if advice.count("`") % 2:  # never cut inside a code span
                advice = advice[: advice.rindex("`")]
            advice = advice.rstrip("，、（( ") + "…"
        return f"{head}。建议：{advice}。" if advice else f"{head}。"
    return "不适用"


_SKIP_ZH: tuple[tuple[re.Pattern[str], str], ...] = (
    (lazy_compile(r"^(symlink|hardlink) \(not followed\)$"), "{kind}，未跟随"),
    (lazy_compile(r"^larger than (\d+) bytes$"), "大于 {0} 字节"),
    (lazy_compile(r"^total read limit reached$"), "已达读取总量上限"),
    (lazy_compile(r"^binary$"), "二进制文件"),
    (lazy_compile(r"^unreadable: (.*)$"), "无法读取：{0}"),
    (lazy_compile(r"^resolves outside the repository$"), "指向仓库之外"),
    (lazy_compile(r"^unsafe archive path \(absolute or '\.\.'\)$"), "不安全的归档路径（绝对路径或 '..'）"),
    (lazy_compile(r"^data: a top-level JSON array of records or values \(a dataset\)$"), "数据：顶层为记录或值的 JSON 数组（数据集）"),
    (lazy_compile(r"^data: (\d+) of the first (\d+) keys are step/row numbers \(golden values or metrics\)$"),
     "数据：前 {1} 个键中有 {0} 个是步数/行号（基准值或指标）"),
    (lazy_compile(r"^data: (\d+) numbers against (\d+) keys in the first (\d+) bytes \(numeric arrays\)$"),
     "数据：前 {2} 字节中有 {0} 个数值、{1} 个键（数值数组）"),
    (lazy_compile(r"^data: JSON Lines \(one record per line\)$"), "数据：JSON Lines（每行一条记录）"),
    (lazy_compile(r"^data: a tokenizer \(vocabulary and merges\)$"), "数据：分词器（词表与合并规则）"),
    (lazy_compile(r"^data: a vocabulary \((\d+) of the first (\d+) keys map to integer token ids\)$"),
     "数据：词表（前 {1} 个键中有 {0} 个映射到整数 token id）"),
)


def skip_reason(reason: str, lang: str) -> str:
    """Why a file was passed over, in the report's language (the reader's reasons are English; unknown ones stay so)."""
    if lang != "zh":
        return reason
    for pattern, template in _SKIP_ZH:
        m = pattern.match(reason)
        if m:
            groups = m.groups()
            if "{kind}" in template:
                return template.format(kind="符号链接" if groups[0] == "symlink" else "硬链接")
            return template.format(*groups)
    return reason
