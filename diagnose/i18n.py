"""Chinese wording of the verdict's reasons and the recommendations (the JSON keeps English ``text`` plus ``key``/``params``)."""

from __future__ import annotations

from typing import Any

REASONS_ZH = {
    "idle_dataloader": "{where} 上 GPU 空闲占跨度的 {idle:.1f}%（阈值 {thr:g}%）；其中 {share:.1f}% 的空闲时间主机正在 DataLoader.__next__ 里等数据",
    "idle_sync": "{where} 上 GPU 空闲占跨度的 {idle:.1f}%（阈值 {thr:g}%）；其中 {share:.1f}% 紧跟在阻塞式 CUDA 同步之后（主机先等 GPU 排空，再重新喂数据）",
    "idle_host": "{where} 上 GPU 空闲占跨度的 {idle:.1f}%（阈值 {thr:g}%）；其中 {share:.1f}% 的时间下一个 Kernel 还没被发射（主机喂不饱 GPU）",
    "idle": "{where} 上 GPU 空闲占跨度的 {idle:.1f}%（阈值 {thr:g}%）",
    "comm_low_overlap": "rank {rank} 上通信 Kernel 占 Kernel 时间的 {comm:.1f}%，只有 {overlap:.1f}% 与计算重叠（阈值 {thr:g}% / {othr:g}%）",
    "comm_high": "rank {rank} 上通信 Kernel 占 Kernel 时间的 {comm:.1f}%（阈值 {thr:g}%），重叠 {overlap:.1f}%",
    "compute_bound": "即使最空闲的 rank，计算 Kernel 也占 GPU 跨度的 {compute:.1f}%（阈值 {thr:g}%）",
    "nsys_comm": "Nsight 汇总中通信 Kernel 占 Kernel 总时间的 {comm:.1f}%（阈值 {thr:g}%；汇总表看不出重叠）",
    "sawtooth": "GPU {gpu} 利用率呈锯齿：{drops} 次从 ≥{high:g}% 掉到 ≤{low:g}%，周期约 {period} 秒（平均 {mean:.1f}%）",
    "fragmentation": "分配器保留 {reserved:.0f} MiB，张量峰值只有 {allocated:.0f} MiB：碎片率 {frag:.1f}%（阈值 {thr:g}%）",
    "retries": "cudaMalloc 重试 {n} 次：缓存被清空后重新分配（每次都是一次全设备同步）",
    "ooms": "记录到 {n} 次显存不足（OOM）",
    "churn": "{n} 个显存段被归还给驱动（empty_cache 或重试）：分配抖动（阈值 {thr}）",
    "scaling": "从 {g1} 卡到 {gn} 卡的扩展效率为 {eff:.1f}%（TN/(N×T1)，{unit}；阈值 {thr:g}%）",
    "straggler": "rank {rank} 的计算 Kernel 时间比中位数多 {over:.1f}%（{c:.1f} vs {med:.1f} ms；阈值 {thr:g}%）：其他 rank 都在等它",
    "nccl.nccl-socket": "NCCL：{nodes} 机任务的跨机流量走 TCP socket（NET/Socket），而不是 InfiniBand/RoCE",
    "nccl.gdr-off": "NCCL：{nodes} 机任务关闭了 GPUDirect RDMA，每次跨机传输都要经主机内存中转",
    "nccl.gdr-unknown": "NCCL：IB 通道没有 GDRDMA 标记，GPUDirect RDMA 看起来没开",
    "nccl.tp-spans-nodes": "NCCL：一个 {nranks} 卡的通信组跨了 {nnodes} 台机器（每台 {local} 卡），而单机有 {node_gpus} 卡：若是张量并行组，每层的 AllReduce 都要走网络",
    "nccl.env-disable": "NCCL：设置了 {var}=1，NCCL 被禁止使用该传输方式",
}

ADVICE_ZH = {
    "F1": "调大 DataLoader 的 num_workers（从每卡可用 CPU 核数起步），让 batch 在 GPU 需要前就准备好",
    "F2": "设置 prefetch_factor（2–4）并开启 persistent_workers=True，让每个 worker 预先排好 batch",
    "F3": "pin_memory=True，主机到显存的拷贝才能异步进行",
    "F11": "用 .to(device, non_blocking=True) 从锁页内存拷贝，放到单独的 CUDA 流上提前一个 batch 预取",
    "F6": "把分词/解码等预处理移出训练循环（离线预处理）",
    "E2": "让梯度通信与反向计算重叠（DDP 分桶 / FSDP 预取 / ZeRO overlap_comm）",
    "E4": "按网络调优 NCCL（NCCL_IB_HCA / NCCL_SOCKET_IFNAME、算法/协议、通道数）",
    "E1": "跨机通信开启 GPUDirect RDMA（nvidia-peermem、NCCL_NET_GDR_LEVEL）",
    "A4": "张量并行组放在单机内（NVLink），跨机用流水并行/数据并行",
    "E3": "带宽是瓶颈时压缩梯度（PowerSGD / FP16、BF16 AllReduce hook）",
    "D4": "用 CUDA Graph 捕获整个 step，把成百上千次小 Kernel 发射合成一次",
    "D2": "torch.compile 模型：Kernel 更少、更融合，每步的 Python 开销更小",
    "D6": "使用融合优化器和融合算子（AdamW fused=True、融合 LayerNorm/RMSNorm）",
    "I4": "降低日志频率：每次 loss.item() / .cpu() 都会让主机阻塞到 GPU 排空",
    "C6": "设置 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True，并尽量固定张量形状以减少碎片",
    "C3": "激活检查点（activation checkpointing），用计算换激活显存",
    "C5": "梯度累积：更小的 micro-batch，相同的全局 batch",
    "C4": "模型放不下时卸载优化器状态（ZeRO-Offload）",
    "F7": "平衡各 rank 的工作量：按固定 token 预算打包序列，让每个 rank 每步处理相同的 token 数（若输入已均衡，检查慢 rank 的 GPU 频率与温度）",
    "C1": "用 BF16（autocast）训练，让矩阵乘跑在 Tensor Core 上",
    "D1": "注意力使用 Flash Attention / SDPA",
    "D7": "隐藏维度和 batch×序列长度取 8/64 的倍数，以用满 Tensor Core",
    "C2": "Hopper/Blackwell 上使用 FP8（Transformer Engine）",
}


def reason_text(reason: dict[str, Any], lang: str) -> str:
    if lang == "zh":
        tpl = REASONS_ZH.get(reason.get("key", ""))
        if tpl is not None:
            params = dict(reason.get("params") or {})
            if "where" in params:
                params["where"] = params["where"].replace("the GPU", "GPU")
            try:
                return tpl.format(**params)
            except (KeyError, ValueError, IndexError):
                pass
    return str(reason["text"])


def advice_text(rec: dict[str, Any], lang: str) -> str:
    if lang == "zh" and rec.get("check") in ADVICE_ZH:
        return ADVICE_ZH[rec["check"]]
    return str(rec["text"])
