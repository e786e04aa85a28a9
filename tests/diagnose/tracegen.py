"""Write GPU-shaped Kineto traces (the schema ``torch.profiler`` exports on a CUDA machine), one per rank.

Used by the tests and by ``benchmarks/diagnose_bench.py``. The layout follows real PyTorch 2.x exports:
``schemaVersion``, ``deviceProperties``, ``distributedInfo``, then ``traceEvents`` with ``cpu_op`` /
``user_annotation`` (``ProfilerStep#N``), ``cuda_runtime`` launches carrying ``args.correlation``, and
``kernel`` / ``gpu_memcpy`` / ``gpu_memset`` events on CUDA streams with the same correlation, then the
trailing ``traceName`` / ``displayTimeUnit`` / ``baseTimeNanoseconds`` keys. Events are written as they are
made (a 1 GB file needs no memory).

Knobs shape the bottleneck: ``loader_us`` (a DataLoader ``__next__`` at the start of each step while the GPU
waits), ``comm_us`` / ``overlap`` (NCCL all-reduce length and how much of it runs beside compute kernels),
``slow`` (this rank's kernels run longer: a straggler), ``sync_item`` (a ``.item()`` + cudaStreamSynchronize
at the end of each step).
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

COMPUTE = (
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
    "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(Flash_fwd_params)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
)
COMM = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
CPU_OPS = ("aten::linear", "aten::gelu", "aten::mm", "aten::layer_norm", "aten::scaled_dot_product_attention")


@dataclass
class RankSpec:
    rank: int = 0
    world: int = 1
    steps: int = 6
    kernels_per_step: int = 40
    kernel_us: float = 120.0
    launch_us: float = 6.0
    loader_us: float = 0.0
    comm_us: float = 0.0
    overlap: float = 0.5  # share of the all-reduce issued while compute kernels are still queued
    slow: float = 1.0
    sync_item: bool = False
    seed: int = 0
    pad_args: int = 0  # extra args per cpu_op (to make big files like real traces with shapes recorded)


class _Writer:
    def __init__(self, f: IO[str]) -> None:
        self.f = f
        self.first = True

    def ev(self, e: dict[str, Any]) -> None:
        self.f.write(("  " if self.first else ",\n  ") + json.dumps(e, indent=None))
        self.first = False


def write_trace(path: Path, spec: RankSpec, *, gz: bool = False) -> Path:
    opener = gzip.open if gz else open
    with opener(path, "wt", encoding="utf-8") as f:  # type: ignore[operator]
        _write(f, spec)
    return path


def _write(f: IO[str], s: RankSpec) -> None:
    rnd = random.Random(s.seed * 1000 + s.rank)
    pid, tid = 1000 + s.rank, 1000 + s.rank
    f.write('{\n  "schemaVersion": 1,\n')
    f.write('  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85031714816, '
            '"computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024, "numSms": 108}],\n')
    f.write(f'  "distributedInfo": {{"backend": "nccl", "rank": {s.rank}, "world_size": {s.world}, "pg_count": 1, '
            f'"pg_config": [{{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": {s.world}, '
            f'"ranks": {list(range(s.world))}}}], "nccl_version": "2.21.5"}},\n')
    f.write('  "cuda_runtime_version": 12040,\n  "traceEvents": [\n')
    w = _Writer(f)
    w.ev({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}})
    w.ev({"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}})
    corr = 1000
    cpu = 1_700_000_000_000.0 + 3.5  # microseconds, Kineto style (fractional: ns resolution)
    gpu_free = {7: cpu, 20: cpu}
    ext = 1
    pad = {f"Input Dims {k}": [[4096, 4096], [4096]] for k in range(s.pad_args)}
    for step in range(s.steps + 1):  # the last step is cut short, as the profiler leaves it
        step_start = cpu
        last = step == s.steps
        events_in_step: list[dict[str, Any]] = []
        if s.loader_us and not last:
            d = s.loader_us * rnd.uniform(0.9, 1.1)
            events_in_step.append({"ph": "X", "cat": "cpu_op", "name": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                                   "pid": pid, "tid": tid, "ts": round(cpu, 3), "dur": round(d, 3), "args": {"External id": ext}})
            ext += 1
            cpu += d
        # H2D copy of the batch
        corr += 1
        events_in_step.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": pid, "tid": tid, "ts": round(cpu, 3),
                               "dur": 4.0, "args": {"cbid": 41, "correlation": corr, "External id": ext}})
        gs = max(gpu_free[7], cpu + 2)
        gd = 35.0
        events_in_step.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7,
                               "ts": round(gs, 3), "dur": gd, "args": {"device": 0, "context": 1, "stream": 7, "correlation": corr,
                                                                       "bytes": 8388608, "memory bandwidth (GB/s)": 239.6}})
        gpu_free[7] = gs + gd
        cpu += 5
        n = s.kernels_per_step if not last else max(1, s.kernels_per_step // 4)
        for k in range(n):
            name = COMPUTE[k % len(COMPUTE)]
            op = CPU_OPS[k % len(CPU_OPS)]
            opd = s.launch_us + 4
            events_in_step.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": pid, "tid": tid, "ts": round(cpu, 3), "dur": opd,
                                   "args": {"External id": ext, "Record function id": 0, "Sequence number": ext, "Fwd thread id": 0,
                                            "Concrete Inputs": ["", ""], "Input type": ["c10::BFloat16", "c10::BFloat16"], **pad}})
            corr += 1
            lts = cpu + 2
            events_in_step.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid, "ts": round(lts, 3),
                                   "dur": s.launch_us, "args": {"cbid": 211, "correlation": corr, "External id": ext}})
            ext += 1
            gs = max(gpu_free[7], lts + s.launch_us)
            gd = s.kernel_us * s.slow * rnd.uniform(0.7, 1.3)
            events_in_step.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": round(gs, 3), "dur": round(gd, 3),
                                   "args": {"External id": ext - 1, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": corr,
                                            "registers per thread": 232, "shared memory": 98304, "blocks per SM": 2.3,
                                            "warps per SM": 9.2, "grid": [256, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 12}})
            gpu_free[7] = gs + gd
            cpu += opd + 1
        if s.comm_us:
            corr += 1
            events_in_step.append({"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": pid, "tid": tid, "ts": round(cpu, 3),
                                   "dur": 12.0, "args": {"External id": ext, "Collective name": "allreduce", "dtype": "BFloat16",
                                                         "In msg nelems": 1048576, "Group size": s.world}})
            events_in_step.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid,
                                   "ts": round(cpu + 3, 3), "dur": s.launch_us, "args": {"cbid": 211, "correlation": corr, "External id": ext}})
            ext += 1
            cd = s.comm_us * rnd.uniform(0.9, 1.1)
            # issued at the end of backward; ``overlap`` of it runs beside the compute kernels still queued
            cs = max(gpu_free[20], cpu + 3 + s.launch_us, gpu_free[7] - s.overlap * cd)
            events_in_step.append({"ph": "X", "cat": "kernel", "name": COMM, "pid": 0, "tid": 20, "ts": round(cs, 3), "dur": round(cd, 3),
                                   "args": {"External id": ext - 1, "device": 0, "context": 1, "stream": 20, "correlation": corr,
                                            "registers per thread": 96, "grid": [2, 1, 1], "block": [512, 1, 1]}})
            gpu_free[20] = cs + cd
            cpu += 15
        # the optimizer waits for the all-reduce: a cross-stream wait, then a memset
        gpu_free[7] = max(gpu_free[7], gpu_free[20])
        corr += 1
        events_in_step.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync", "pid": pid, "tid": tid, "ts": round(cpu, 3),
                               "dur": 3.0, "args": {"cbid": 51, "correlation": corr, "External id": ext}})
        gs = max(gpu_free[7], cpu + 3)
        events_in_step.append({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": round(gs, 3), "dur": 2.5,
                               "args": {"device": 0, "context": 1, "stream": 7, "correlation": corr, "bytes": 4096}})
        gpu_free[7] = gs + 2.5
        cpu += 4
        if s.sync_item and not last:
            wait = max(0.0, gpu_free[7] - cpu) + 3
            events_in_step.append({"ph": "X", "cat": "cpu_op", "name": "aten::item", "pid": pid, "tid": tid, "ts": round(cpu, 3),
                                   "dur": round(wait + 4, 3), "args": {"External id": ext}})
            events_in_step.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": pid, "tid": tid,
                                   "ts": round(cpu + 1, 3), "dur": round(wait, 3), "args": {"cbid": 131, "correlation": corr + 1, "External id": ext}})
            corr += 1
            ext += 1
            cpu += wait + 5
        step_end = cpu if not last else cpu + 2
        w.ev({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 3}", "pid": pid, "tid": tid,
              "ts": round(step_start, 3), "dur": round(step_end - step_start, 3), "args": {"External id": ext}})
        ext += 1
        for e in events_in_step:
            w.ev(e)
        cpu = step_end + 1
    f.write(f'\n  ],\n  "traceName": "rank{s.rank}.pt.trace.json",\n  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": 1700000000000000000\n}}\n')


def write_ranks(folder: Path, world: int, *, gz: bool = False, **kw: Any) -> list[Path]:
    """One trace per rank in ``folder`` (``rank-N.pt.trace.json[.gz]``); ``slow_rank`` makes one rank a straggler."""
    folder.mkdir(parents=True, exist_ok=True)
    slow_rank = kw.pop("slow_rank", None)
    slow = kw.pop("slow", 1.4)
    out = []
    for r in range(world):
        spec = RankSpec(rank=r, world=world, slow=slow if r == slow_rank else 1.0, **kw)
        out.append(write_trace(folder / f"rank-{r}.pt.trace.json{'.gz' if gz else ''}", spec, gz=gz))
    return out
