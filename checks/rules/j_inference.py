"""J. Inference (推理优化): J1-J7, n/a for a project that does no inference.

What J means for a training repository (see ``checks.project._does_inference``): J applies when
inference is a workload of the project: an inference engine, a generation/serving script
(``inference.py``, ``serve/``, ``chat.py``, ``generate_*.py``), or online RL (GRPO/PPO/RLOO...),
whose rollouts are generation. ``model.generate`` for a few samples inside a training or eval
loop does not make J applicable.

Engine defaults this module relies on (documented by the engines):

* vLLM: PagedAttention KV cache, continuous batching, CUDA graphs unless ``enforce_eager``;
  V1 (the default engine from vLLM 0.8) always enables chunked prefill and prefix caching, so
  a vLLM pinned below 0.8 (or ``VLLM_USE_V1=0``) needs ``enable_chunked_prefill`` explicitly.
* SGLang: paged (radix) KV cache, continuous batching, chunked prefill and CUDA graphs by
  default (``--disable-cuda-graph``, ``--chunked-prefill-size -1``, ``--disable-radix-cache``).
* TGI: paged KV cache, continuous batching, prefix caching/chunking and CUDA graphs by default.
* TensorRT-LLM: paged KV cache; in-flight batching through its LLM API / ``trtllm-serve`` /
  Triton backend; chunked context, CUDA graphs and speculative decoding only when configured.
* HF ``generate``: a contiguous (dynamic) KV cache, one static batch: J1 partial, J2 unused.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from ..base import Check, Context, register
from ..facts import Call, Expr, Facts, as_number, truthy
from ..lazyre import lazy_compile
from ..model import Bottleneck, Example, FixSafety, Outcome, Priority, Status
from ..project import _MODEL_CHAT, _inference_file, checkpoint_tool_file
from ._helpers import evs, guard_off, imports_hf, inputs_replaced, jax_only_file, model_load, value_on

_OWN_TEST = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$")

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED

#: lingua ``apps/main/generate.py``: the packed-sequence generator compiles its decode step with CUDA graphs only when
#: its config asks for it
_LINGUA_GENERATOR = (
    "from dataclasses import dataclass\n\nimport torch\n\n\n@dataclass\nclass PackedCausalTransformerGeneratorArgs:\n"
    "    max_gen_len: int = 512\n    compile_prefilling: bool = False\n    reduce_generation_overhead: bool = {default}\n\n\n"
    "class PackedCausalTransformerGenerator:\n    def __init__(self, cfg, model, tokenizer):\n        self.model = model\n"
    "        self.prefill = torch.compile(self.prefill, disable=not cfg.compile_prefilling)\n"
    "        self.generate_next_token = torch.compile(\n            self.generate_next_token,\n            mode=\"reduce-overhead\",\n"
    "            disable=not cfg.reduce_generation_overhead,\n        )\n\n"
    "    def generate(self, prompts):\n        return [self.generate_next_token(p) for p in prompts]\n\n\n"
    "def main():\n    model = load_consolidated_model_and_tokenizer(ckpt)\n"
    "    generator = PackedCausalTransformerGenerator(PackedCausalTransformerGeneratorArgs(), model, tokenizer)\n"
    "    print(generator.generate(['hello']))\n"
)

# engine -> dotted prefixes of its Python API
_ENGINE_API: dict[str, tuple[str, ...]] = {
    "vllm": ("vllm.*",),
    "sglang": ("sglang.*",),
    "tensorrt-llm": ("tensorrt_llm.*",),
    "tgi": ("text_generation.Client", "text_generation.AsyncClient"),
    "lmdeploy": ("lmdeploy.*",),
    "deepspeed-mii": ("mii.*",),
    "deepspeed-inference": ("deepspeed.init_inference",),
    "onnxruntime": ("onnxruntime.InferenceSession", "optimum.onnxruntime.*"),
    "triton-server": ("tritonclient.*",),
    "llama.cpp": ("llama_cpp.*",),
    "ctranslate2": ("ctranslate2.*",),
    "exllamav2": ("exllamav2.*",),
    "mlc-llm": ("mlc_llm.*",),
    "tensorrt": ("torch_tensorrt.*", "tensorrt.Builder", "tensorrt.Runtime"),
}
#: runtimes that run any model, not an LLM engine by themselves
_GENERIC_RUNTIMES = frozenset({"onnxruntime", "tensorrt"})
#: a site of such a runtime that serves a speech, vision or detection side model
_AUX_MODEL_SITE = lazy_compile(r"(?i)(^|[/_.\s])(vad|silero|whisper|asr|tts|speech|audio|wav|ocr|detector|detection|yolo|sam)([/_.\s(]|$)")
_ENGINE_MODULES = {"vllm": "vllm", "sglang": "sglang", "tensorrt_llm": "tensorrt-llm", "lmdeploy": "lmdeploy"}
_CLI_ENGINES = {"vllm": "vllm", "sglang": "sglang", "lmdeploy": "lmdeploy", "trtllm-serve": "tensorrt-llm",
                "trtllm-build": "tensorrt-llm", "text-generation-launcher": "tgi", "tritonserver": "triton-server"}
_IMAGES = (("vllm/vllm-openai", "vllm"), ("lmsysorg/sglang", "sglang"), ("text-generation-inference", "tgi"),
           ("tritonserver", "triton-server"), ("openmmlab/lmdeploy", "lmdeploy"), ("tensorrt-llm", "tensorrt-llm"))
_BACKEND_KEYS = ("infer_backend", "inference_backend", "backend", "engine", "inference_engine", "generation_backend",
                 "rollout_backend", "serving_backend", "infer_engine")
_BACKEND_VALUES = {"vllm": "vllm", "sglang": "sglang", "lmdeploy": "lmdeploy", "tensorrt_llm": "tensorrt-llm", "trtllm": "tensorrt-llm",
                   "tensorrt-llm": "tensorrt-llm", "tgi": "tgi"}
_PAGED = {"vllm", "sglang", "tgi", "tensorrt-llm", "lmdeploy", "deepspeed-mii", "megatron-core"}
#: engines that batch continuously, in a fixed order (a set would order the evidence by the hash seed)
_CB = ("vllm", "sglang", "tgi", "lmdeploy", "deepspeed-mii", "megatron-core")
_ONLINE_RL = ("GRPOTrainer", "PPOTrainer", "RLOOTrainer", "OnlineDPOTrainer", "NashMDTrainer", "XPOTrainer")
_TRAIN_CALLS = {"backward", "get_peft_model", "prepare_model_for_kbit_training", "LoraConfig", "TrainingArguments", "SFTConfig",
                "DPOConfig", "GRPOConfig", "Trainer", "SFTTrainer", "DPOTrainer", "GRPOTrainer", "Seq2SeqTrainer", "fit",
                "zero_grad", "train"}


class _InferenceOnly(Check):
    def not_applicable(self, ctx: Context) -> str | None:
        if not ctx.project.does_inference:
            # (not "the project does no inference": a README's demo app or an evaluation harness may well generate; they
            # are not the serving workload J is about, and saying nothing generates would be false for GLM, metaseq,
            # Chat-UniVi and PLLaVA)
            # (Open-Sora's diffusion sampling script generates videos, not tokens: "was recognised", not "there is no script")
            return ("no inference workload in scope: no serving engine, token-generation script or RL rollout was recognised; "
                    "generation in evaluation loops, demos and web apps is not judged here")
        return None


def _live(f: Facts, calls: list[Call]) -> list[Call]:
    """Calls whose enclosing ``if`` flag is not switched off."""
    return [c for c in calls if not guard_off(f, c)]


#: a branch taken only for an engine object of that type (``isinstance(model, vllm.LLM)``)
_HANDED_ENGINE = lazy_compile(r"isinstance\(\s*[\w.]+\s*,\s*(vllm\.)?(LLM|LLMEngine|AsyncLLMEngine)\s*\)")


def engines(f: Facts) -> dict[str, list[Any]]:
    """Inference engines the repository runs, with the facts that prove it (imports alone do not count)."""
    out: dict[str, list[Any]] = defaultdict(list)
    trains = bool(f.calls("backward"))
    for name, patterns in _ENGINE_API.items():
        roots = {p.split(".")[0] for p in patterns}
        if not f.imports(*roots):
            continue  # an engine's API is only reachable through an import
        calls = _live(f, f.calls(*patterns))
        # the engine's API in a branch for an engine object the caller hands in (LLM-Blender ``if is_vllm_imported and
        # isinstance(model, vllm.LLM): sampling_params = vllm.SamplingParams(...)``) where the project builds none: an
        # adapter for the user's engine, not one the project runs
        handed = [c for c in calls if _HANDED_ENGINE.search(c.guard or "")]
        if handed and not any(c.short in _ENGINE_BUILDERS for c in calls if c not in handed):
            calls = [c for c in calls if c not in handed]
        for c in calls:
            if name in _GENERIC_RUNTIMES and _AUX_MODEL_SITE.search(f"{c.path} {c.func or ''} {c.text}"):
                continue  # a general runtime serving an auxiliary model (MiniCPM-o's silero VAD ``onnxruntime.InferenceSession``)
            if name == "triton-server" and trains:
                # a Triton client in a project that trains sends requests to a model served elsewhere (trlx's PPO scores its
                # samples with a reward model behind ``TRITON_HOST``); a ``tritonserver`` launch or image is still counted
                continue

            if any(c.name == p or c.name.startswith(p.removesuffix(".*") + ".") for p in patterns):
                out[name].append(c)
    # Megatron Core's dynamic inference engine: in-flight (continuous) batching over a paged KV cache of fixed-size
    # blocks (``megatron.core.inference.contexts.DynamicInferenceContext``); its static engine wraps it in recent releases
    for c in _live(f, f.calls("DynamicInferenceEngine", "DynamicInferenceContext")):
        if c.name.startswith("megatron.core.inference."):
            out["megatron-core"].append(c)
    for launch in f.launches():
        script = launch.script or ""
        if launch.launcher in _CLI_ENGINES:
            out[_CLI_ENGINES[launch.launcher]].append(launch)
        elif launch.launcher == "python" and script.split(".")[0] in _ENGINE_MODULES:
            out[_ENGINE_MODULES[script.split(".")[0]]].append(launch)
    for e in f.config("image"):
        if isinstance(e.value, str):
            for needle, name in _IMAGES:
                if needle in e.value:
                    out[name].append(e)
    for s in f.effective(*_BACKEND_KEYS):
        if isinstance(s.value, str) and s.value.strip().lower() in _BACKEND_VALUES:
            out[_BACKEND_VALUES[s.value.strip().lower()]].append(s)
    for s in f.effective("use_vllm", "vllm_enable", "enable_vllm"):
        if truthy(s.value):
            out["vllm"].append(s)
    for s in f.effective("vllm_num_engines"):
        if (as_number(s.value) or 0) > 0:
            out["vllm"].append(s)
    for e in f.config("rollout.name"):
        if isinstance(e.value, str) and e.value.lower() in ("vllm", "sglang"):
            out[e.value.lower()].append(e)
    # the engine itself first (``LLM(``, ``LLMEngine.from_engine_args(``), then launches and settings that select it,
    # then any other call into its API (``CompilationConfig(``, ``init_logger(``): evidence a reader recognises
    return {k: sorted(v, key=_engine_rank) for k, v in out.items() if v}


#: an engine's own constructor: the call that makes generation run in it
_ENGINE_BUILDERS = frozenset({"LLM", "LLMEngine", "AsyncLLMEngine", "Engine", "pipeline", "Llama", "Generator", "InferenceSession"})


def switched_engines(f: Facts) -> list[Call]:
    """Engine constructors the project has behind a switch that is off (Chinese-LLaMA-Alpaca-3 ``inference_hf.py``: ``if
    args.use_vllm: model = LLM(model=args.base_model, ...)`` with ``--use_vllm`` a ``store_true`` no shipped command
    passes): an option of the inference code, one flag away, not what runs by default."""
    out: list[Call] = []
    for patterns in _ENGINE_API.values():
        roots = {p.split(".")[0] for p in patterns}
        if not f.imports(*roots):
            continue
        # (not a converter checking its export: llm-foundry ``convert_hf_to_onnx.py``'s ``InferenceSession`` under ``verify_export``)
        out += [c for c in f.calls(*patterns) if c.short in _ENGINE_BUILDERS and guard_off(f, c)
                and not checkpoint_tool_file(c.path)]
    return out


def _engine_rank(x: Any) -> int:
    if isinstance(x, Call):
        return 0 if _constructs(x) else 2
    return 1


#: a method that evicts entries from a KV cache (StreamingLLM ``evict_for_space``, ``evict_range``)
_EVICT = lazy_compile(r"evict(_\w+)?$")


def _hf_generate(f: Facts) -> list[Call]:
    """``model.generate(...)`` calls that are HF PyTorch (not a vLLM ``llm.generate(prompts, sampling_params)``, nor a Flax
    model's ``generate`` in a JAX file, which XLA compiles)."""
    out = []
    for c in _live(f, f.calls("generate")):
        if jax_only_file(f, c.path):
            continue
        text = " ".join(a.text for a in c.args if isinstance(a, Expr)) + " " + " ".join(c.kwargs)
        if "sampling_params" in text or c.name.startswith(("vllm.", "sglang.")):
            continue
        out.append(c)
    # a remote-code model's own chat methods in a serving or demo script (ChatGLM2-6B ``api.py``: ``model.chat(tokenizer,
    # prompt, history=history)``, ``openai_api.py``: ``model.stream_chat(...)``): HF ``generate`` inside; cited first, as the
    # generation the project serves, before a trainer's evaluation ``generate``
    chats = [c for c in _live(f, f.calls("chat", "stream_chat")) if _MODEL_CHAT.match(c.name) and _inference_file(c.path)]
    return chats + out if chats else out


#: a web or RPC framework: a script that imports one can take requests from many users at once (a Gradio demo)
_SERVER_MODULES = frozenset({"gradio", "fastapi", "flask", "streamlit", "uvicorn", "aiohttp", "tornado", "sanic", "starlette",
                             "http", "socketserver", "grpc", "mosec", "ray", "litserve", "bentoml", "openai"})

ONE_USER_CONSOLE = ("one interactive user: every generation script reads its prompt from the console with input() and generates "
                    "for that one prompt")


def one_user_console(f: Facts, generation: list[Call]) -> Call | None:
    """The ``input()`` call of an inference-only project whose every HF generation sits in a console script that reads its
    prompt from the keyboard (YuLan-Chat ``inference.py``: ``input('[|Human|]:')`` in a ``while True`` loop, then
    ``generate`` for that one prompt) and imports no web or RPC framework: one request at a time, by construction. None
    otherwise (a Gradio demo beside it, lawyer-llama's ``demo_web.py``, can take many users at once)."""
    if not generation:
        return None
    first: Call | None = None
    for path in dict.fromkeys(c.path for c in generation):
        ff = f.files.get(path)
        asks = [c for c in f.calls("input") if c.path == path and c.name == "input"]
        if ff is None or not asks or any(i.module.split(".", 1)[0] in _SERVER_MODULES for i in ff.imports):
            return None
        first = first or asks[0]
    return first


#: YuLan-Chat's ``inference.py`` in short: a ``while True`` loop that reads one prompt and generates for it
_CONSOLE_CHAT = ("from transformers import AutoModelForCausalLM, AutoTokenizer\n\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "tok = AutoTokenizer.from_pretrained(p)\nwhile True:\n    text = input('[|Human|]:')\n"
                 "    out = model.generate(tok(text, return_tensors='pt').input_ids, max_new_tokens=512)\n"
                 "    print(tok.decode(out[0]))\n")


_HF_GEN_KW = {"do_sample", "num_beams", "attention_mask", "generation_config", "pad_token_id", "eos_token_id", "streamer",
              "return_dict_in_generate", "output_scores", "repetition_penalty", "use_cache", "past_key_values", "top_p",
              "max_length", "min_new_tokens", "num_return_sequences", "cache_implementation", "assistant_model", "stopping_criteria"}


#: the model's own forward, called by a decode loop; handed the position to write keys and values at (lit-llama and gpt-fast
#: ``model(x, max_seq_length, input_pos)``), it keeps a KV cache indexed by it
_MODEL_CALL = lazy_compile(r"(^|\.)(model|forward)$")
#: the position argument of such a call, or the slice of new tokens it is handed (lit-llama ``input_pos``, llama3
#: ``self.model.forward(tokens[:, prev_pos:cur_pos], prev_pos)``: only the new tokens go in, the earlier keys and values
#: come from the model's cache)
_POSITION = lazy_compile(r"^(input|start)_pos$|\[.*\b(prev|cur|start|input)_pos\s*:")


#: a path or function named for low-precision training (FP8/MX/QAT), not for quantizing a model to serve
_TRAIN_PRECISION = lazy_compile(r"(?i)(^|[/_.\s])(float8|fp8|mx|mxfp\d*|qat)([/_.\s]|$)")
_HANDS_TO_GENERATE = lazy_compile(r"\.generate\b(?!_)")
_OWN_DECODE = lazy_compile(r"generate_(batch|tokens|stream)|[a-z]\w*_generate")


def _custom_generate(f: Facts, gens: list[Call]) -> tuple[list[Call], bool]:
    """``generate`` calls that go to the repository's own ``def generate`` (nanoGPT style), and whether it keeps a cache.

    A repository that defines ``generate`` and calls it without any HF-only keyword runs its own decode loop.
    """
    # the project's own decode method under another name (OLMo-core ``TransformerGenerationModule.generate_batch``, called by
    # its ``generate/chat.py``): its calls are the decode loop's too
    # (not a wrapper that hands the work to HF ``generate``: LLaVA's ``model_worker.generate_stream`` starts
    # ``Thread(target=model.generate, ...)``)
    own = {c.func for c in f.records("calls") if c.func and c.func != "generate" and _OWN_DECODE.fullmatch(c.func)}
    own -= {c.func for c in f.records("calls") if c.func in own and _HANDS_TO_GENERATE.search(c.text)}
    # a ``def generate`` that only hands the work on to HF's (Prismatic's ``PrismaticVLM.generate``: ``return
    # super().generate(...)``) is no decode loop of the project's
    wrappers = {c.path for c in f.records("calls") if c.func == "generate" and _HANDS_TO_GENERATE.search(c.text)}
    body = [c for c in f.records("calls") if (c.func == "generate" and c.path not in wrappers) or c.func in own]
    if not body:
        return [], False
    # a call with ``**kwargs`` is the repository's own when its file does not use Hugging Face at all (nanochat engine.py)
    # a ``self.generate(...)`` beside the class's own ``def generate`` in a file without Hugging Face is that loop, whatever
    # its keywords (Meta's llama3 ``Llama.text_completion``: ``self.generate(prompt_tokens, ..., top_p=top_p)``)
    own_files = {c.path for c in body if c.func == "generate"}
    custom = [c for c in gens if not c.name.startswith("transformers.")
              and ((not (set(c.kwargs) & _HF_GEN_KW) and (not c.star_kwargs or not imports_hf(f, c.path)))
                   or (c.name == "self.generate" and c.path in own_files and not imports_hf(f, c.path)))
              ] if own_files else []
    custom += [c for c in f.calls(*sorted(own)) if c.short in own and c.func not in own] if own else []
    cached = any(k in ("past_key_values", "kv_cache", "use_cache", "cache", "past", "layer_past", "start_pos", "input_pos")
                 for c in body for k in c.kwargs) or any("cache" in c.text.lower() or "start_pos" in c.text for c in body) or any(
        _MODEL_CALL.search(c.name) and any(isinstance(a, Expr) and _POSITION.search(a.text) for a in c.args) for c in body)
    return custom, cached


def _training_file(f: Facts, path: str) -> bool:
    ff = f.files.get(path)
    return bool(ff and any(c.short in _TRAIN_CALLS for c in ff.calls))


def _online_rl_without_engine(f: Facts, eng: dict[str, list[Any]]) -> list[Call]:
    if eng:
        return []
    # a trainer whose input hook is replaced (``trainer._prepare_inputs = read_rows_from_queue``) trains on rollouts made
    # elsewhere (an external inference server): it generates nothing itself
    return [c for c in f.calls(*_ONLINE_RL) if not inputs_replaced(f, c)]


def _per_site(f: Facts, eng: dict[str, list[Any]], engine: str, keys: tuple[str, ...],
              training: frozenset[str] = frozenset()) -> tuple[list[Any], list[Any]]:
    """Sites of ``engine`` that set one of ``keys`` truthy, and sites that do not (keyword, flag, or same-file config).
    ``training``: the training path's files, whose engine a launch flag picks (see below)."""
    on: list[Any] = []
    off: list[Any] = []
    cfg_on = [s for s in f.effective(*keys) if truthy(s.value)]
    for site in eng.get(engine, []):
        if isinstance(site, Call):
            if site.short in {"SamplingParams", "LoRARequest"} or not _constructs(site):
                continue
            vals = [site.kwargs[k] for k in keys if k in site.kwargs]
            if vals:
                resolved = [truthy(v) if not isinstance(v, Expr) else _ref_on(f, v) for v in vals]
                (on if any(resolved) else off).append(site)
            elif site.star_kwargs and cfg_on:
                on.append(site)
            else:
                off.append(site)
        elif hasattr(site, "script_args"):
            args = {**site.launcher_args, **site.script_args}
            (on if any(truthy(args.get(k)) for k in keys) else off).append(site)
        else:
            (on if any(s.path == site.path for s in cfg_on) else off).append(site)
    built = [x for x in on + off if isinstance(x, Call) and _constructs(x)]
    # (the training path's engine, where it builds one: Video-R1's rollout ``LLM(..., enforce_eager=True)``, not its CoT
    # generation script's ``LLM(model=...)``)
    built = [x for x in built if x.path in training and not _inference_file(x.path)] or built
    if built and all(x in on for x in built):
        # a launch flag that only picks the engine the code builds (R1-V ``--use_vllm true``, the trainer's ``LLM(...,
        # enforce_eager=True)``) runs it as built
        moved = [x for x in off if hasattr(x, "script_args") or getattr(x, "source", None) == "launcher"]
        on += moved
        off = [x for x in off if x not in moved]
    return on, off


_ENGINE_CTORS = {"LLM", "AsyncLLMEngine", "LLMEngine", "AsyncEngineArgs", "EngineArgs", "from_engine_args", "Engine", "Runtime",
                 "launch_server", "ServerArgs", "pipeline", "serve", "TurbomindEngineConfig", "PytorchEngineConfig"}


def _constructs(c: Call) -> bool:
    return c.short in _ENGINE_CTORS


def _ref_on(f: Facts, v: Expr) -> bool:
    if not v.ref:
        return False
    return any(truthy(s.value) for s in f.effective(v.ref))


def _vllm_v0(f: Facts) -> bool:
    """vLLM pinned below 0.8 (V0 engine), or V1 switched off with ``VLLM_USE_V1=0``."""
    if any(e.value.strip() == "0" for e in f.envs("VLLM_USE_V1")):
        return True
    for d in f.deps("vllm"):
        m = re.search(r"(==|<=|<|~=)\s*0\.(\d+)", d.spec)
        if m and (int(m.group(2)) < 8 or (m.group(1) == "<" and int(m.group(2)) <= 8)):
            return True
    return False


# --------------------------------------------------------------------------------------
# J1 KV cache management
# --------------------------------------------------------------------------------------

_HF_CACHES = ("StaticCache", "OffloadedCache", "OffloadedStaticCache", "QuantizedCache", "QuantoQuantizedCache",
              "HQQQuantizedCache", "SinkCache", "HybridCache", "SlidingWindowCache")
_MANAGED_IMPL = {"static", "offloaded", "offloaded_static", "quantized", "sliding_window", "hybrid", "offloaded_hybrid"}


@register
class J1KVCache(_InferenceOnly):
    id = "J1"
    title = "KV cache management"
    title_zh = "KV Cache 管理"
    bottlenecks = (Bottleneck.MEMORY,)
    priority = Priority.HIGH
    benefit = "paged KV cache wastes <4 % of KV memory (vs 60-80 % for contiguous per-request buffers), so 2-4x more concurrent sequences"
    what = (
        "Whether the KV cache is managed rather than a contiguous per-request buffer: a paged engine (vLLM PagedAttention, "
        "SGLang, TGI, TensorRT-LLM, LMDeploy), or HF `cache_implementation=\"static\"|\"offloaded\"|\"quantized\"` / "
        "`StaticCache`. Plain HF `generate` (dynamic `past_key_values`) is partial; `use_cache=False` is unused."
    )
    why = (
        "Contiguous pre-allocation wastes 60-80 % of KV-cache memory to fragmentation and over-reservation; PagedAttention "
        "wastes under 4 % and raised throughput 2-4x over FasterTransformer/Orca at the same latency (Kwon et al., SOSP 2023). "
        "Without a cache at all (`use_cache=False`) every decode step recomputes the whole prefix."
    )
    fix = "Serve with a paged-KV engine (vLLM/SGLang/TensorRT-LLM); for HF `generate`, use `cache_implementation=\"static\"` (with torch.compile) or a quantized/offloaded cache for long contexts."
    fix_zh = "使用分页 KV Cache 的推理引擎（vLLM/SGLang/TensorRT-LLM）；若使用 HF `generate`，可设置 `cache_implementation=\"static\"`（配合 torch.compile），长上下文可用量化/卸载 Cache。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://arxiv.org/abs/2309.06180", "https://huggingface.co/docs/transformers/kv_cache")
    snippets = {
        "python": (
            "from vllm import LLM, SamplingParams\n\n"
            "llm = LLM(model=\"meta-llama/Llama-3.1-8B-Instruct\", gpu_memory_utilization=0.9)\n"
            "outputs = llm.generate(prompts, SamplingParams(max_tokens=256))\n"
        ),
        "shell": "vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9\n",
    }
    examples = (
        Example({"infer.py": "from vllm import LLM, SamplingParams\nllm = LLM(model='Qwen/Qwen2.5-7B-Instruct')\n"
                 "outs = llm.generate(prompts, SamplingParams(max_tokens=512))\n"}, U, "vllm"),
        Example({"serve.sh": "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --port 30000\n"}, U, "sglang"),
        Example({"generate.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "out = model.generate(**inputs, max_new_tokens=256, cache_implementation='static')\n"}, U, "hf static cache"),
        Example({"inference.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "out = model.generate(**inputs, max_new_tokens=256, do_sample=False)\n"}, P, "plain hf generate"),
        Example({"examples/inference/qwen3_lora_sft.yaml": (
            "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\nadapter_name_or_path: saves/qwen3-4b/lora/sft\ntemplate: qwen3_nothink\n"
            "infer_backend: huggingface  # choices: [huggingface, vllm, sglang]\n"),
                 "examples/train_lora/qwen3_lora_sft.yaml": "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\nstage: sft\nfinetuning_type: lora\n"},
                P, "llamafactory chat recipe on the huggingface backend"),
        Example({"examples/inference/qwen3_vllm.yaml": (
            "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\ntemplate: qwen3_nothink\ninfer_backend: vllm\n")}, U, "llamafactory chat recipe on vllm"),
        Example({"inference.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "out = model.generate(input_ids, max_new_tokens=64, use_cache=False)\n"}, N, "cache disabled"),
        Example({"model.py": "import torch\nimport torch.nn.functional as F\nclass GPT(torch.nn.Module):\n"
                 "    def generate(self, idx, max_new_tokens, temperature=1.0):\n        for _ in range(max_new_tokens):\n"
                 "            logits, _ = self(idx[:, -self.block_size:])\n"
                 "            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)\n"
                 "            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)\n        return idx\n",
                 "sample.py": "from model import GPT\nmodel = GPT(conf)\ny = model.generate(x, 500, temperature=0.8)\n"},
                N, "hand-written decode loop without a cache"),
        Example({"train.py": "from transformers import Trainer\ntrainer = Trainer(model=model)\ntrainer.train()\n"
                 "model.config.use_cache = False\n"}, Status.NA, "training only"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        eng = engines(f)
        used: list[Any] = [x for name in eng if name in _PAGED for x in eng[name]]  # in the order found (a set's order changes with the hash seed)
        used += _live(f, f.calls(*_HF_CACHES))
        for s in f.effective("cache_implementation"):
            if isinstance(s.value, str) and s.value.lower() in _MANAGED_IMPL:
                used.append(s)
        # an eviction policy applied to the cache in the decode loop (StreamingLLM: ``past_key_values =
        # kv_cache.evict_for_space(past_key_values, space_needed)``, attention sinks plus a recent window)
        evict = [c for c in _live(f, f.calls_where(_EVICT.match)) if "past_key_values" in c.text or "kv" in c.name.lower()]
        # (beside Hugging Face ``generate`` paths that keep the default cache, LongLoRA's ``inference.py`` next to its
        # StreamingLLM demo, the project's generation is judged by those)
        gens = _hf_generate(f)
        if evict and not used and not gens:
            return Outcome(U, evs(evict), "KV cache with an eviction policy (the decode loop evicts entries to bound it)",
                           {"kv_cache": "evicting"})
        if used:
            kind = "paged" if any(eng.get(n) for n in _PAGED) else "static/managed"
            return Outcome(U, evs(used), f"{kind} KV cache", {"kv_cache": kind})
        custom, cached = _custom_generate(f, gens)
        no_cache = [c for c in gens if "use_cache" in c.kwargs and truthy(c.kwargs["use_cache"]) is False]
        if not cached:
            no_cache += custom  # a hand-written decode loop that re-runs the whole prefix every token
        partial = [c for c in gens if c not in no_cache]
        partial += [c for c in custom if cached and c not in partial]  # the project's own cached decode method's calls
        partial += [x for name in eng for x in eng[name]]  # engines without paging (ONNX Runtime, llama.cpp, ...)
        partial += [c for c in f.calls_with_kw("past_key_values") if not _training_file(f, c.path)]
        partial += _online_rl_without_engine(f, eng)
        # LLaMA-Factory ``infer_backend: huggingface`` serves through HF ``generate`` (dynamic cache)
        partial += [s for s in f.effective("infer_backend") if isinstance(s.value, str) and s.value.strip().lower() in ("huggingface", "hf")]
        if partial:
            own = cached and custom and all(x in custom for x in partial)
            detail = ("the repository's own decode loop keeps a KV cache (contiguous per request), no paging" if own
                      else "contiguous (HF dynamic) KV cache, no paging")
            return Outcome(P, evs(partial), detail, {"kv_cache": "custom" if own else "dynamic"})
        return Outcome(N, evs(no_cache, key="generate(use_cache=)"), "no KV cache reuse during generation" if no_cache else
                       "no KV cache management found", {"kv_cache": "none"})


# --------------------------------------------------------------------------------------
# J2 continuous batching
# --------------------------------------------------------------------------------------


def _trt_inflight(f: Facts, eng: dict[str, list[Any]]) -> list[Any]:
    out: list[Any] = []
    for site in eng.get("tensorrt-llm", []):
        if isinstance(site, Call) and (site.short == "LLM" or ".executor." in site.name):
            out.append(site)
        elif getattr(site, "launcher", None) == "trtllm-serve":
            out.append(site)
    for s in f.effective("batching_strategy", "gpt_model_type"):
        if isinstance(s.value, str) and "inflight" in s.value.lower():
            out.append(s)
    return out


#: CoLLiE 1.0.7: transformers' ``generate`` runs the model's forward, which hands each step to the project's own DeepSpeed
#: pipeline engine method ``generate_batch`` (a static batch), in a module that imports transformers
_OWN_GENERATE_BATCH = {
    "mylib/utils/pipeline_engine.py": (
        "from deepspeed.runtime.pipe.engine import PipelineEngine\n\n\nclass LMPipelineEngine(PipelineEngine):\n"
        "    def generate_batch(self, batch):\n        self.module.eval()\n        logits = self.eval_batch(batch)\n        return logits\n"),
    "mylib/module.py": (
        "import torch\nfrom transformers.generation.utils import GenerationMixin\n\n\nclass PipelineGenerationMixin(GenerationMixin):\n"
        "    def set_engine(self, engine):\n        self.engine_container = [engine]\n\n"
        "    def generate(self, *args, **kwargs):\n        return super().generate(*args, **kwargs)\n\n"
        "    def forward(self, input_ids, attention_mask=None, **kwargs):\n        inputs = {'input_ids': input_ids}\n"
        "        outputs = self.engine_container[-1].generate_batch(inputs)\n        return outputs\n"),
    "mylib/server.py": (
        "class Server:\n    def __init__(self, model, tokenizer):\n        self.model = model\n        self.tokenizer = tokenizer\n\n"
        "    def chat(self, prompt):\n        ids = self.tokenizer(prompt, return_tensors='pt').input_ids\n"
        "        out = self.model.generate(ids, max_new_tokens=128)\n        return self.tokenizer.decode(out[0])\n"),
}


@register
class J2ContinuousBatching(_InferenceOnly):
    id = "J2"
    title = "Continuous batching"
    title_zh = "Continuous Batching"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.LATENCY)
    priority = Priority.HIGH
    benefit = "iteration-level scheduling keeps the batch full as sequences finish: several-fold throughput over static batches"
    what = (
        "Whether requests are scheduled per decode iteration (continuous / in-flight batching): vLLM (`LLM(...)`, "
        "`AsyncLLMEngine`, `vllm serve`), SGLang, TGI, LMDeploy, DeepSpeed-MII, TensorRT-LLM in-flight batching, HF "
        "`generate_batch`. A loop calling `model.generate` per request or on a fixed batch is unused; `max_num_seqs=1` is partial."
    )
    why = (
        "With static batching, finished short sequences wait for the longest one and new requests wait for the whole batch; "
        "Orca's iteration-level scheduling gave up to 36.9x throughput over FasterTransformer at the same latency (Yu et al., "
        "OSDI 2022), and continuous batching in vLLM/TGI is the main reason they reach 10-20x HF `generate` throughput."
    )
    fix = "Serve or batch-generate through an engine with continuous batching (vLLM `LLM.generate(prompts)` on the whole list, `vllm serve`, SGLang, TGI) instead of looping over `model.generate`."
    fix_zh = "通过支持 Continuous Batching 的引擎（vLLM 的 `LLM.generate(prompts)` 一次提交全部请求、`vllm serve`、SGLang、TGI）进行服务或批量生成，而不是循环调用 `model.generate`。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://www.usenix.org/conference/osdi22/presentation/yu", "https://docs.vllm.ai/en/latest/")
    snippets = {
        "python": (
            "from vllm import LLM, SamplingParams\n\n"
            "llm = LLM(model=\"Qwen/Qwen2.5-7B-Instruct\", max_num_seqs=256)\n"
            "outputs = llm.generate(all_prompts, SamplingParams(max_tokens=512))  # one call: the engine batches continuously\n"
        ),
        "shell": "vllm serve Qwen/Qwen2.5-7B-Instruct --max-num-seqs 256\n",
    }
    examples = (
        Example({"serve.sh": "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 --max-num-seqs 128\n"}, U, "vllm serve"),
        Example({"api.py": "from vllm import AsyncEngineArgs, AsyncLLMEngine\n"
                 "engine = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(model=path))\n"}, U, "vllm async engine"),
        Example({"docker-compose.yml": "services:\n  tgi:\n    image: ghcr.io/huggingface/text-generation-inference:2.4.0\n"
                 "    command: --model-id meta-llama/Llama-3.1-8B-Instruct\n"}, U, "tgi container"),
        Example({"megatron/inference/utils.py": (
            "from megatron.core.inference.contexts import DynamicInferenceContext\n"
            "from megatron.core.inference.engines import DynamicInferenceEngine\n\n\n"
            "def get_dynamic_inference_engine(args, model, inference_config, controller):\n"
            "    context = DynamicInferenceContext(model.config, inference_config)\n"
            "    return DynamicInferenceEngine(controller, context)\n")}, U, "megatron core dynamic engine (in-flight batching)"),
        Example({"inference.py": "from vllm import LLM\nllm = LLM(model=path, max_num_seqs=1)\nouts = llm.generate(prompts, sp)\n"},
                P, "vllm limited to one sequence"),
        Example({"myrl/actors/actor.py": "import vllm\n\nllm = vllm.LLM(model=path, gpu_memory_utilization=0.25)\n"
                                         "outputs = llm.generate(prompts, sampling_params=sp)\n",
                 "myrl/oracles/remote/server.py": "from mosec import Runtime, Server\n\nserver = Server()\n"
                                                  "runtime = Runtime(worker=RewardModel, num=8, max_batch_size=1, timeout=10)\n"
                                                  "server.register_runtime({'/get_feedback': [runtime]})\nserver.run()\n"}, U,
                "vllm rollouts; max_batch_size=1 of a reward-model server's mosec Runtime does not limit vllm"),
        Example({"inference.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "for prompt in prompts:\n    ids = tok(prompt, return_tensors='pt').input_ids\n"
                 "    out = model.generate(ids, max_new_tokens=256)\n"}, N, "generate loop"),
        Example({"inference.py": _CONSOLE_CHAT}, Status.NA, "a console chat: one prompt read with input(), generated alone"),
        Example({"inference.py": _CONSOLE_CHAT, "web_demo.py": "import gradio as gr\nfrom inference import model, tok\n\n\n"
                 "def answer(text):\n    return model.generate(tok(text, return_tensors='pt').input_ids)\n\n\n"
                 "gr.Interface(fn=answer, inputs='text', outputs='text').launch()\n"}, N,
                "the same console chat beside a Gradio demo that many users can reach"),
        Example({"chat.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "# from vllm import LLM\nout = model.generate(**batch, max_new_tokens=128)\n"}, N, "static batch, vllm commented out"),
        Example(_OWN_GENERATE_BATCH, N, "HF generate over the project's own pipeline engine method named generate_batch"),
        Example({k: v for k, v in _OWN_GENERATE_BATCH.items() if "pipeline_engine" not in k}, U,
                "the same call with no generate_batch of the repository's own: transformers' continuous batching"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        eng = engines(f)
        used: list[Any] = [x for name in _CB for x in eng.get(name, [])]
        used += _trt_inflight(f, eng)
        # HF's continuous batching (``model.generate_batch``): in a file that uses transformers, not a repository's own
        # ``Engine.generate_batch`` (nanochat)
        # ... nor a method of that name the repository defines itself (CoLLiE's pipeline engine ``generate_batch(batch)``,
        # called as ``self.engine_container[-1].generate_batch(inputs)`` in a module that imports transformers)
        own = {p for p in f._defining("generate_batch") if not _OWN_TEST.search(p)}
        used += [c for c in _live(f, f.calls("generate_batch", "init_continuous_batching", "ContinuousBatchingManager"))
                 if c.name.startswith("transformers.") or (imports_hf(f, c.path) and not (c.short == "generate_batch" and own))]
        used += _live(f, f.calls("ExLlamaV2DynamicGenerator"))
        if used:
            # a limit passed to another constructor (a reward-model server's ``Runtime(max_batch_size=1)``, mosec) does not
            # bound the engine that batches continuously; a config/launch key or the engine's own keyword does
            ctors = {x.short for x in used if isinstance(x, Call)}
            single = [s for s in f.effective("max_num_seqs", "max_running_requests", "max_batch_size", "max_concurrent_requests")
                      if as_number(s.value) == 1 and (s.source != "call" or s.key.split("(", 1)[0].rsplit(".", 1)[-1] in ctors)]
            cited = {id(x) for x in used}
            name = next((n for n in ("vllm", "sglang", "tgi", "lmdeploy", "deepspeed-mii", "tensorrt-llm", "megatron-core")
                         if any(id(x) in cited for x in eng.get(n, ()))), "hf")
            larger = [s for s in f.effective("max_num_seqs", "max_running_requests", "max_batch_size", "max_concurrent_requests")
                      if (as_number(s.value) or 0) > 1]
            if single and not larger:
                return Outcome(P, evs(single), "continuous batching engine limited to one running sequence",
                               {"continuous_batching": False, "max_num_seqs": 1})
            return Outcome(U, evs(used), f"continuous batching ({name})", {"continuous_batching": True, "engine": name})
        static = _hf_generate(f) + _online_rl_without_engine(f, eng)
        ask = one_user_console(f, static) if not ctx.project.does_training and not eng else None
        if ask is not None:
            return Outcome(Status.NA, evs([ask]), f"{ONE_USER_CONSOLE} ({ask.path}:{ask.line}): no concurrent requests to batch; "
                           "continuous batching pays off once the model serves many users (an engine server)")
        return Outcome(N, evs(static), "static batches through `generate`" if static else "no continuous batching",
                       {"continuous_batching": False})


# --------------------------------------------------------------------------------------
# J3 prefill/decode split
# --------------------------------------------------------------------------------------


@register
class J3PrefillDecode(_InferenceOnly):
    id = "J3"
    title = "Prefill/decode split"
    title_zh = "Prefill/Decode 分离"
    bottlenecks = (Bottleneck.COMPUTE, Bottleneck.LATENCY)
    priority = Priority.LOW
    benefit = "long prompts no longer stall running decodes: steadier inter-token latency and higher goodput"
    what = (
        "Whether prefill (compute-bound) and decode (memory-bound) are scheduled apart: chunked prefill "
        "(`enable_chunked_prefill`, vLLM V1 and SGLang default), prefill/decode disaggregation (`kv_transfer_config`, "
        "`--disaggregation-mode`), TensorRT-LLM `enable_chunked_context`. Prefix caching alone is partial. vLLM pinned "
        "below 0.8 without the flag, and HF `generate`, are unused."
    )
    why = (
        "Sarathi-Serve's chunked prefill raised serving capacity up to 2.6x for Mistral-7B on one A100 under latency SLOs "
        "(Agrawal et al., OSDI 2024); DistServe's disaggregation served 7.4x more requests within SLO (Zhong et al., OSDI 2024). "
        "vLLM V1 enables chunked prefill by default."
    )
    fix = "Use an engine version that chunks prefill (vLLM >= 0.8, SGLang) or set `enable_chunked_prefill=True`; for strict latency SLOs consider prefill/decode disaggregation."
    fix_zh = "使用会对 prefill 分块的引擎版本（vLLM >= 0.8、SGLang），或设置 `enable_chunked_prefill=True`；延迟 SLO 严格时考虑 Prefill/Decode 分离部署。"
    fix_safety = FixSafety.SAFE
    references = ("https://arxiv.org/abs/2403.02310", "https://arxiv.org/abs/2401.09670",
                  "https://docs.vllm.ai/en/latest/configuration/optimization.html")
    snippets = {
        "python": "from vllm import LLM\n\nllm = LLM(model=path, enable_chunked_prefill=True, enable_prefix_caching=True, max_num_batched_tokens=8192)\n",
        "shell": "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-chunked-prefill --enable-prefix-caching --max-num-batched-tokens 8192\n",
    }
    examples = (
        Example({"infer.py": "from vllm import LLM\nllm = LLM(model=path, enable_chunked_prefill=True, max_num_batched_tokens=4096)\n"},
                U, "explicit chunked prefill"),
        Example({"requirements.txt": "vllm>=0.8.5\n", "serve.sh": "vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000\n"}, U, "vllm v1 default"),
        Example({"serve.sh": "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --disaggregation-mode prefill\n"},
                U, "disaggregated prefill"),
        Example({"requirements.txt": "vllm==0.6.3\n", "infer.py": "from vllm import LLM\nllm = LLM(model=path, enable_prefix_caching=True)\n"},
                P, "v0 with prefix caching only"),
        Example({"requirements.txt": "vllm==0.5.4\n", "infer.py": "from vllm import LLM\nllm = LLM(model=path)\n"}, N, "vllm v0 defaults"),
        Example({"inference.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "out = model.generate(**inputs, max_new_tokens=256)\n"}, N, "hf generate"),
        Example({"infer.py": "from vllm import LLM\nllm = LLM(model=path, enable_chunked_prefill=False, enable_prefix_caching=False)\n"},
                N, "explicitly disabled"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        eng = engines(f)
        used: list[Any] = []
        off: list[Any] = []
        for s in f.effective("enable_chunked_prefill", "vllm_enable_chunked_prefill", "enable_chunked_context", "chunked_prefill"):
            (used if truthy(s.value) else off).append(s)
        for s in f.effective("chunked_prefill_size"):
            n = as_number(s.value)
            (used if n is not None and n > 0 else off).append(s)
        for s in f.effective("kv_transfer_config", "disaggregation_mode", "disaggregation_transfer_backend", "pd_disaggregation"):
            if s.value is not None and truthy(s.value) is not False and str(s.value).lower() != "null":
                used.append(s)
        explicit_off = bool(off) and not used
        by_default: list[str] = []
        if not used and not explicit_off:
            if eng.get("vllm") and not _vllm_v0(f):
                used += eng["vllm"][:3]
                by_default.append("vLLM's V1 engine")
            for name, label in (("sglang", "SGLang"), ("tgi", "TGI")):
                if eng.get(name):
                    used += eng[name][:3]
                    by_default.append(label)
        if used:
            detail = (f"prefill is chunked by the engine's default ({', '.join(by_default)}; no setting turns it off)" if by_default
                      else "prefill is chunked/disaggregated from decode")
            return Outcome(U, evs(used), detail, {"chunked_prefill": True})
        prefix = [s for s in f.effective("enable_prefix_caching", "vllm_enable_prefix_caching", "enable_kv_cache_reuse",
                                         "enable_block_reuse") if truthy(s.value)]
        if prefix:
            return Outcome(P, evs(prefix), "prefix caching, but prefill is not chunked", {"chunked_prefill": False, "prefix_caching": True})
        ask = one_user_console(f, _hf_generate(f)) if not off and not ctx.project.does_training and not eng else None
        if ask is not None:
            return Outcome(Status.NA, evs([ask]), f"{ONE_USER_CONSOLE} ({ask.path}:{ask.line}): no running decodes for a "
                           "prefill to stall")
        detail = "chunked prefill is disabled" if off else "prefill and decode are not scheduled apart"
        return Outcome(N, evs(off), detail, {"chunked_prefill": False})


# --------------------------------------------------------------------------------------
# J4 inference quantization
# --------------------------------------------------------------------------------------

_QUANT_NAME = lazy_compile(r"(?i)([-_.](awq|gptq|fp8|int4|int8|w4a16|w8a8|w4a8|nvfp4|mxfp4|exl2|gguf|q4_k_m|q8_0|bnb[-_]4bit|4bit|8bit)"
                         r"([-_.]|$)|\.gguf$)")
#: a model config's ``dtype`` that is a quantized weight format, not a half-precision one
_LOW_BIT_DTYPES = frozenset({"fp8", "float8", "float8_e4m3fn", "int8", "int4", "fp4", "nvfp4", "mxfp4"})
_QUANT_KEYS = ("quantization", "quantize", "vllm_quantization", "quant_method", "qformat", "quant_algo", "weight_only_precision",
               "model_format", "kv_cache_dtype", "kv_cache_quant_algo", "export_quantization_bit")
_QUANT_APIS = ("GPTQConfig", "AwqConfig", "HqqConfig", "QuantoConfig", "TorchAoConfig", "FbgemmFp8Config", "CompressedTensorsConfig",
               "FineGrainedFP8Config", "AutoAWQForCausalLM.from_quantized", "AutoGPTQForCausalLM.from_quantized", "GPTQModel.*",
               "torchao.quantization.quantize_", "torchao.quantize_", "modelopt.torch.quantization.quantize", "optimum.quanto.quantize", "torch.quantization.quantize_dynamic",
               "torch.ao.quantization.quantize_dynamic", "llmcompressor.oneshot", "llmcompressor.transformers.oneshot",
               "auto_round.*", "QuantConfig", "BaseQuantizeConfig")


#: the post-training quantization libraries whose model objects quantize themselves (AutoAWQ, AutoGPTQ, GPTQModel)
_PTQ_LIBS = {"awq": "awq", "auto_gptq": "gptq", "gptqmodel": "gptq"}
_W_BIT = lazy_compile(r"[\"']w_bit[\"']\s*:\s*(\d+)|\bbits\s*=\s*(\d+)")


def _ptq_kit(f: Facts) -> list[tuple[Call, str]]:
    """A project's own weight quantization run through AutoAWQ/AutoGPTQ: ``model.quantize(tokenizer,
    quant_config=...)`` then ``model.save_quantized(path)`` in a file importing the library (Orion's
    ``quantization/quant.py``: AWQ, 4-bit, group size 128). It writes the INT4 checkpoint the project serves; the
    4-bit base of a QLoRA run goes through bitsandbytes, not these."""
    out: list[tuple[Call, str]] = []
    for c in _live(f, f.calls("quantize", "save_quantized")):
        ff = f.files.get(c.path)
        if ff is None or _training_file(f, c.path) or (c.short == "quantize" and "quant_config" not in c.kwargs):
            continue
        lib = next((_PTQ_LIBS[i.module.split(".")[0]] for i in ff.imports if i.module.split(".")[0] in _PTQ_LIBS), None)
        if lib is not None:
            bits = next((m.group(1) or m.group(2) for a in ff.assigns if a.func == c.func
                         for m in [_W_BIT.search(a.text)] if m), None)
            out.append((c, f"{lib}-w{bits}" if bits else lib))
    return out


#: the bit width handed to a model's own ``quantize`` (``model.quantize(4)``, ``model.quantize(model_args.quantization_bit)``)
_BITS_ARG = lazy_compile(r"(?i)(^|[._])(q|bits?|n_?bits?|w_?bits?|quantization_bits?|quantize_bits?)$")


def _own_quantize(f: Facts) -> list[tuple[Call, str]]:
    """A remote-code model's own weight quantization at load: ChatGLM's ``model.quantize(bits)`` (DoctorGLM's
    ``load_quantization.py``: ``model.quantize(q)`` then ``.half().cuda()``, called with 8 and 4 by its chat notebooks)
    swaps the linears for INT8/INT4 weight-only kernels. A codebook's ``self.quantize(z)`` (VQ-VAE) is not this: the
    receiver is a model and the one argument a bit width."""
    out: list[tuple[Call, str]] = []
    for c in _live(f, f.calls("quantize")):
        recv = c.name.rsplit(".", 2)[-2] if c.name.count(".") else ""
        if not re.search(r"(?i)model$", recv) or len(c.args) != 1 or c.kwargs or _training_file(f, c.path):
            continue
        a = c.args[0]
        if isinstance(a, int) and not isinstance(a, bool) and a in (2, 3, 4, 8):
            out.append((c, f"int{a}"))
        elif isinstance(a, Expr) and _BITS_ARG.search(a.text):
            out.append((c, "weight-only, model.quantize"))
    return out


#: a project's own weight-only quantization handler (gpt-fast ``WeightOnlyInt8QuantHandler``, ``WeightOnlyInt4QuantHandler``)
_OWN_QUANT = lazy_compile(r"WeightOnly(Int|Fp|FP)\d+\w*|\w*Int[48]\w*Quant(Handler|izer)\w*")


def _quant_value(v: Any) -> str | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return f"int{int(v)}" if v in (2, 3, 4, 8) else None
    if isinstance(v, str):
        low = v.strip().lower()
        if low in {"", "none", "null", "auto", "fp16", "bf16", "float16", "bfloat16", "hf", "huggingface", "false", "no"}:
            return None
        return low
    return None


#: options that load the served model quantized (FastChat ``--load-8bit``, ``--gptq-wbits 4``, ``--awq-wbits 4``)
_QUANT_OPTIONS = ("load_8bit", "load_4bit", "gptq_wbits", "awq_wbits")  # (not HF's load_in_4bit: a QLoRA base in training)


@register
class J4InferenceQuant(_InferenceOnly):
    id = "J4"
    title = "Inference quantization"
    title_zh = "推理量化"
    bottlenecks = (Bottleneck.MEMORY,)
    priority = Priority.MEDIUM
    benefit = "2-4x less weight memory and bandwidth: faster memory-bound decode and room for a larger KV cache"
    what = (
        "Whether inference runs a quantized model: engine `quantization=\"awq\"|\"gptq\"|\"fp8\"`, `--quantize`, "
        "`kv_cache_dtype: fp8`, AWQ/GPTQ/FP8/GGUF checkpoints loaded for serving, HF `BitsAndBytesConfig`/`load_in_8bit` in "
        "inference code, torchao `quantize_`, llm-compressor, TensorRT-LLM `--qformat`. 4-bit loading for QLoRA training is G4, not this."
    )
    why = (
        "Decode is memory-bandwidth-bound: AWQ 4-bit weights gave 3x+ speed-ups over FP16 on consumer and server GPUs "
        "(Lin et al., MLSys 2024), GPTQ quantized 175B models to 3-4 bits with negligible perplexity loss (Frantar et al., 2023), "
        "and FP8 on H100 is near-lossless with up to ~1.6x throughput in vLLM/TensorRT-LLM."
    )
    fix = "Serve an AWQ/GPTQ (INT4) or FP8 checkpoint (`quantization=\"fp8\"` in vLLM on H100, `kv_cache_dtype=\"fp8\"` for long contexts) and validate accuracy on your eval set."
    fix_zh = "部署 AWQ/GPTQ（INT4）或 FP8 模型（H100 上 vLLM 设置 `quantization=\"fp8\"`，长上下文可设 `kv_cache_dtype=\"fp8\"`），并在评测集上验证精度。"
    fix_safety = FixSafety.UNSAFE
    references = ("https://arxiv.org/abs/2306.00978", "https://arxiv.org/abs/2210.17323", "https://docs.vllm.ai/en/latest/features/quantization/")
    snippets = {
        "python": "from vllm import LLM\n\nllm = LLM(model=\"Qwen/Qwen2.5-7B-Instruct-AWQ\", quantization=\"awq\")\n",
        "shell": "vllm serve Qwen/Qwen2.5-7B-Instruct --quantization fp8 --kv-cache-dtype fp8\n",
    }
    examples = (
        Example({"infer.py": "from vllm import LLM\nllm = LLM(model='TheBloke/Llama-2-13B-AWQ', quantization='awq')\n"}, U, "vllm awq"),
        Example({"serve.sh": "text-generation-launcher --model-id meta-llama/Llama-3.1-8B-Instruct --quantize eetq\n"}, U, "tgi quantize"),
        Example({"examples/post_training/modelopt/quantize.py": (
            "import modelopt.torch.quantization as mtq\nfrom megatron.core.inference.engines import DynamicInferenceEngine\n\n"
            "model = mtq.quantize(model, mtq.FP8_DEFAULT_CFG, forward_loop)\nengine = DynamicInferenceEngine(controller, context)\n")},
                U, "modelopt quantization before megatron inference"),
        Example({"megatron/core/resharding/execution.py": (
            "from megatron.core.inference.engines import DynamicInferenceEngine\n\n\n"
            "def copy_into(dst_param, full_bf16):\n    dst_param.quantize_(full_bf16)  # refit: FP8 storage of a training weight\n"),
            "serve.py": "from megatron.core.inference.engines import DynamicInferenceEngine\nengine = DynamicInferenceEngine(controller, context)\n"},
                N, "a tensor's quantize_ method in weight resharding is not inference quantization"),
        Example({"chat.py": "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"
                 "bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)\n"
                 "model = AutoModelForCausalLM.from_pretrained(path, quantization_config=bnb)\n"
                 "out = model.generate(**inputs)\n"}, U, "bnb at inference"),
        Example({"serve.sh": "vllm serve Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4 --tensor-parallel-size 2\n"}, U, "gptq checkpoint"),
        Example({"train_qlora.py": "from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer\n"
                 "from peft import get_peft_model, prepare_model_for_kbit_training\n"
                 "model = AutoModelForCausalLM.from_pretrained(p, quantization_config=BitsAndBytesConfig(load_in_4bit=True))\n"
                 "model = get_peft_model(prepare_model_for_kbit_training(model), cfg)\n",
                 "inference.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "out = model.generate(**inputs)\n"}, N, "qlora training is not inference quantization"),
        Example({"chat_quant.py": "from transformers import AutoModel\n\nmodel = AutoModel.from_pretrained('THUDM/chatglm-6b', "
                 "trust_remote_code=True)\nmodel = model.quantize(4).half().cuda()\nresponse, history = model.chat(tok, 'hi', history=[])\n"},
                U, "ChatGLM's own quantize(bits) at load"),
        Example({"chat_vq.py": "from transformers import AutoModel\n\nmodel = AutoModel.from_pretrained('THUDM/chatglm-6b', "
                 "trust_remote_code=True)\ncodes = model.quantize(q, codebook)\nresponse, history = model.chat(tok, 'hi', history=[])\n"},
                N, "a quantize call with a codebook is no bit width"),
        Example({"infer.py": "from vllm import LLM\nllm = LLM(model='meta-llama/Llama-3.1-8B-Instruct', quantization=None, dtype='bfloat16')\n"},
                N, "bf16 serving"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        eng = engines(f)
        used: list[Any] = []
        kinds: list[str] = []
        engine_lines = {(x.path, x.line) for sites in eng.values() for x in sites}
        for s in f.effective(*_QUANT_KEYS):
            q = _quant_value(s.value)
            if q is None:
                continue
            if s.name in ("quantization", "quantize", "quant_method") and s.source in ("launcher", "call") and \
                    (s.path, s.line) not in engine_lines and not (s.source == "call" and s.key.split("(")[0] in _ENGINE_CTORS):
                continue  # a training flag (``--quantization 4bit`` for QLoRA), not an engine's
            if s.name == "kv_cache_dtype" and not re.search(r"fp8|int8|int4|fp4", q):
                continue
            if s.name == "model_format" and q not in {"awq", "gptq", "fp8"}:
                continue
            if s.name in ("quantization", "quantize", "quant_method") and s.source == "config" and not _inference_config(f, s.path):
                continue
            used.append(s)
            kinds.append(q)
        if not ctx.project.does_training:
            # the model config of a project that only generates names its weights' format (DeepSeek-V3's
            # ``inference/configs/config_671B.json``: ``"dtype": "fp8"``, run through its FP8 GEMM kernels)
            for s in f.config("dtype"):
                if len(s.keys) == 1 and isinstance(s.value, str) and s.value.strip().lower() in _LOW_BIT_DTYPES:
                    used.append(s)
                    kinds.append(s.value.strip().lower())
        for s in f.effective("quant_policy"):
            if (as_number(s.value) or 0) > 0:
                used.append(s)
                kinds.append("kv-int" + str(int(as_number(s.value) or 0)))
        for s in f.effective("quantization_bit"):
            if (as_number(s.value) or 0) > 0 and _inference_config(f, s.path):
                used.append(s)
                kinds.append(f"int{int(as_number(s.value) or 0)}")
        train = ctx.project.training_files
        for c in _live(f, f.calls(*_QUANT_APIS)):
            if _training_file(f, c.path):
                continue  # quantization-aware training or a QLoRA base, not inference
            if c.path in train and not _inference_file(c.path) and _TRAIN_PRECISION.search(f"{c.path} {c.func or ''}"):
                # a low-precision training module the training path imports (OLMo-core ``float8/__init__.py``: torchao
                # ``quantize_(model, config=mx_linear_config)`` in ``apply_mx`` converts the linears for MX-format training);
                # not post-training quantization (Megatron ``post_training/modelopt``)
                continue
            used.append(c)
            kinds.append(c.short.lower())
        train_path = ctx.project.training_files
        for c in _live(f, f.calls("BitsAndBytesConfig", "from_pretrained")):
            if _training_file(f, c.path):
                continue
            if c.path in train_path and not _inference_file(c.path):
                # a model loader the training path imports (CareGPT's vendored ``llmtuner/tuner/core/loader.py``: a
                # ``BitsAndBytesConfig`` under ``if model_args.quantization_bit``, passed by its QLoRA runs) loads a
                # 4-bit base for training (G4); whether a chat demo passes the same flag is not seen here
                continue
            if truthy(c.kwargs.get("load_in_4bit")) or truthy(c.kwargs.get("load_in_8bit")):
                used.append(c)
                kinds.append("bnb-4bit" if truthy(c.kwargs.get("load_in_4bit")) else "bnb-8bit")
        for site in self._model_sites(f, eng):
            used.append(site)
            # a quantized checkpoint name whose load passes bitsandbytes' switch (Chinese-Llama-2 ``infer.py``:
            # ``load_in_4bit=model_path.endswith("4bit")``) is quantized on load, not shipped quantized
            on_load = next((k for k in ("load_in_4bit", "load_in_8bit") if isinstance(site, Call) and k in site.kwargs), None)
            kinds.append(f"bnb-{on_load[8:]}" if on_load else "prequantized")
        for c, kind in (*_ptq_kit(f), *_own_quantize(f)):
            used.append(c)
            kinds.append(kind)
        # the project's own weight-only quantization, applied when the launched checkpoint is a quantized one
        # (pytorch-labs/gpt-fast: ``WeightOnlyInt8QuantHandler(model).convert_for_runtime()`` in generate.py when
        # ``"int8" in str(checkpoint_path)``; its launches pass ``--checkpoint_path .../model_int4.g32.pth``)
        own = [c for c in _live(f, f.calls_where(_OWN_QUANT.fullmatch)) if not _training_file(f, c.path)] if not used else []
        if own:
            runs = [(x, k, v) for x in f.launches() for k, v in x.script_args.items()
                    if isinstance(v, str) and "checkpoint" in str(k) and _QUANT_NAME.search(v.rsplit("/", 1)[-1])]
            for x, _k, v in runs[:3]:
                used.append(x)
                kinds.append(next((q for q in ("int4", "int8", "fp8") if q in v), "own"))
            if runs:
                used.insert(0, own[0])
        if used:
            return Outcome(U, evs(used), f"quantized inference ({', '.join(dict.fromkeys(kinds))})",
                           {"quantization": kinds[0]})
        # quantized loading the project offers as an option, off unless a user passes it (FastChat ``--load-8bit``,
        # ``--gptq-wbits``, ``--awq-wbits`` on its serving and CLI entry points)
        offered = [s for s in f.settings(*_QUANT_OPTIONS) if s.source in ("argparse-default", "field-default")
                   and not _training_file(f, s.path) and not truthy(s.value) and (as_number(s.value) or 0) in (0, 16)]
        # (HF's own spelling, ``--load_in_8bit`` of an inference script whose load passes ``load_in_8bit=True`` under it:
        # YuLan-Chat's and lawyer-llama's chat CLIs; in a training script the same flag loads a QLoRA base, G4)
        offered += [s for s in f.settings("load_in_8bit", "load_in_4bit") if s.source == "argparse-default"
                    and not _training_file(f, s.path) and s.path not in ctx.project.training_files and not truthy(s.value)
                    and any(model_load(c) and (truthy(c.kwargs.get(s.name)) or isinstance(c.kwargs.get(s.name), Expr))
                            for c in f.calls("from_pretrained") if c.path == s.path)]
        # ... or as a parameter of the inference entry point (alpaca-lora ``def main(load_8bit: bool = False, ...)`` behind
        # ``fire.Fire``, handed to ``from_pretrained(load_in_8bit=load_8bit)``): which precision is served is the command's
        switch = [c for c in _live(f, f.calls("from_pretrained", "BitsAndBytesConfig")) if not _training_file(f, c.path)
                  and any(isinstance(c.kwargs.get(k), Expr) for k in ("load_in_8bit", "load_in_4bit"))]
        if switch and not offered:
            c = switch[0]
            k = next(k for k in ("load_in_8bit", "load_in_4bit") if isinstance(c.kwargs.get(k), Expr))
            return Outcome(N, evs(switch[:3]), f"quantized loading is a switch of the inference code ({k}={c.kwargs[k].text} at "
                           f"{c.path}:{c.kw_line(k)}); no shipped launch is seen to turn it on: check the command you serve with",
                           {"quantization": None})
        if offered:
            names = ", ".join(dict.fromkeys(s.name for s in offered))
            return Outcome(N, evs(offered[:3]), f"inference runs in full/half precision by default; quantized loading is an "
                           f"option no launch turns on ({names}, {offered[0].path}:{offered[0].line})", {"quantization": None})
        return Outcome(N, [], "inference runs in full/half precision", {"quantization": None})

    @staticmethod
    def _model_sites(f: Facts, eng: dict[str, list[Any]]) -> list[Any]:
        out: list[Any] = []
        for sites in eng.values():
            for site in sites:
                names: list[str] = []
                if isinstance(site, Call):
                    names += [a for a in site.args[:1] if isinstance(a, str)]
                    names += [v for k, v in site.kwargs.items() if k in ("model", "model_path", "model_name_or_path") and isinstance(v, str)]
                elif hasattr(site, "script_args"):
                    names += [site.script or ""]
                    names += [str(v) for k, v in {**site.launcher_args, **site.script_args}.items()
                              if k in ("model", "model_path", "model_id", "model_name_or_path")]
                if any(_QUANT_NAME.search(n.rsplit("/", 1)[-1]) for n in names if n):
                    out.append(site)
        for c in f.calls("from_pretrained"):
            if c.args and isinstance(c.args[0], str) and _QUANT_NAME.search(c.args[0].rsplit("/", 1)[-1]) and model_load(c) \
                    and not _training_file(f, c.path):
                out.append(c)
        return out


def _inference_config(f: Facts, path: str) -> bool:
    ff = f.files.get(path)
    if ff is None:
        return False
    keys = {str(e.keys[0]) for e in ff.configs if e.keys}
    return bool(keys & {"infer_backend", "max_model_len", "gpu_memory_utilization", "enforce_eager", "tensor_parallel_size"}) and \
        not keys & {"do_train", "stage", "learning_rate", "num_train_epochs"}


# --------------------------------------------------------------------------------------
# J5 inference engine
# --------------------------------------------------------------------------------------


@register
class J5InferenceEngine(_InferenceOnly):
    id = "J5"
    title = "Inference engine"
    title_zh = "推理引擎"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.LAUNCH, Bottleneck.LATENCY)
    priority = Priority.HIGH
    benefit = "graph optimisation, fused kernels, paged KV cache and batching: typically 2-5x (up to 10x+) over PyTorch eager `generate`"
    what = (
        "Whether inference runs on a serving/inference engine rather than PyTorch eager: vLLM, SGLang, TensorRT-LLM, TGI, "
        "LMDeploy, DeepSpeed-MII/Inference, ONNX Runtime, Triton Inference Server, llama.cpp, CTranslate2, ExLlamaV2, "
        "including vLLM rollouts in RL (`use_vllm: true`, verl `rollout.name: vllm`). An import or a requirement alone is not use."
    )
    why = (
        "vLLM reported 14-24x the throughput of HF Transformers on LLaMA-7B/13B (vLLM blog, 2023); engines combine fused "
        "attention kernels, paged KV cache, continuous batching and CUDA graphs that a hand-written `generate` loop lacks. "
        "In GRPO/PPO the rollout is most of the step time, which is why TRL, verl and OpenRLHF offload it to vLLM."
    )
    fix = "Run generation on an inference engine: vLLM (`LLM(...)` / `vllm serve`), SGLang or TensorRT-LLM; in TRL GRPO set `use_vllm: true`."
    fix_zh = "使用推理引擎执行生成：vLLM（`LLM(...)` / `vllm serve`）、SGLang 或 TensorRT-LLM；TRL GRPO 中设置 `use_vllm: true`。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://blog.vllm.ai/2023/06/20/vllm.html", "https://github.com/sgl-project/sglang",
                  "https://huggingface.co/docs/trl/vllm_integration")
    snippets = {
        "python": "from vllm import LLM, SamplingParams\n\nllm = LLM(model=path, tensor_parallel_size=1)\nouts = llm.generate(prompts, SamplingParams(max_tokens=512))\n",
        "hf-yaml": "use_vllm: true\nvllm_mode: colocate\n",
        "shell": "vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000\n",
    }
    examples = (
        Example({"examples/hh/ppo_hh.py": (  # trlx: PPO rollouts through HF generate; the reward model behind a Triton server
            "import os\nimport trlx\nimport tritonclient.grpc as client_util\n\n\ndef prepare_tensor(name, input):\n"
            "    t = client_util.InferInput(name, input.shape, 'FP32')\n    t.set_data_from_numpy(input)\n    return t\n\n\n"
            "def create_reward_fn():\n"
            "    triton_host = os.environ.get('TRITON_HOST')\n    if triton_host:\n"
            "        client = client_util.InferenceServerClient(url=triton_host, verbose=False)\n\n"
            "        def reward_fn(samples, **kwargs):\n            return client.infer('reward', inputs)\n\n"
            "        return reward_fn\n\n\ndef main():\n    trlx.train(reward_fn=create_reward_fn(), config=config)\n"),
                 "trlx/trainer/accelerate_base_trainer.py": (
                     "class AccelerateRLTrainer:\n    def generate(self, input_ids, **kwargs):\n"
                     "        return self.accelerator.unwrap_model(self.model).generate(input_ids=input_ids, **kwargs)\n\n"
                     "    def learn(self):\n        loss = self.loss(batch)\n        self.accelerator.backward(loss)\n"),
                 "examples/hh/chat_demo.py": "from transformers import pipeline\npipe = pipeline('text-generation', model='gpt2')\nprint(pipe('hi'))\n"},
                N, "a Triton client scoring samples with the reward model is not the project's inference engine"),
        Example({"web_demos/minicpm-o_2.6/vad_utils.py": (
                     "import numpy as np\nimport onnxruntime\n\n\nclass VoiceActivityDetector:\n    def __init__(self, path):\n"
                     "        self.session = onnxruntime.InferenceSession(path, providers=['CPUExecutionProvider'])\n"),
                 "web_demos/minicpm-o_2.6/model_server.py": (
                     "import torch\nfrom transformers import AutoModel\n\nmodel = AutoModel.from_pretrained('openbmb/MiniCPM-o-2_6')\n\n\n"
                     "def chat(msgs):\n    return model.generate(msgs, max_new_tokens=512)\n")},
                N, "MiniCPM-o: onnxruntime runs the silero VAD beside the LLM, which generates with HF generate"),
        Example({"serve/onnx_llm.py": ("import onnxruntime\n\n\ndef load(path):\n"
                                       "    return onnxruntime.InferenceSession(path + '/decoder_model_merged.onnx')\n")},
                U, "onnxruntime running the LLM's own decoder"),
        Example({"infer.py": "from vllm import LLM, SamplingParams\nllm = LLM(model=path)\nouts = llm.generate(prompts, SamplingParams())\n"},
                U, "vllm"),
        Example({"grpo.yaml": "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\nuse_vllm: true\nnum_generations: 8\n",
                 "grpo.py": "from trl import GRPOConfig, GRPOTrainer\ntrainer = GRPOTrainer(model=m, args=args, reward_funcs=r)\n"},
                U, "trl grpo with vllm rollouts"),
        Example({"serve.sh": "lmdeploy serve api_server internlm/internlm2_5-7b-chat --server-port 23333\n"}, U, "lmdeploy"),
        Example({"inference.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "out = model.generate(**inputs, max_new_tokens=256)\n"}, N, "hf eager generate"),
        Example({"requirements.txt": "vllm==0.6.3\n", "inference.py": "# from vllm import LLM\nimport vllm\n"
                 "from transformers import pipeline\npipe = pipeline('text-generation', model=p)\n"}, N, "vllm only imported"),
        Example({  # nanoGPT: sample.py calls the model's own decode loop (no KV cache, no engine)
            "model.py": (
                "import torch\nimport torch.nn as nn\n\nclass GPT(nn.Module):\n"
                "    @torch.no_grad()\n    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):\n"
                "        for _ in range(max_new_tokens):\n            logits, _ = self(idx[:, -self.config.block_size:])\n"
                "            idx_next = torch.multinomial(torch.softmax(logits[:, -1, :] / temperature, dim=-1), num_samples=1)\n"
                "            idx = torch.cat((idx, idx_next), dim=1)\n        return idx\n"),
            "sample.py": (
                "import torch\nfrom model import GPT\nmodel = GPT.from_pretrained('gpt2')\n"
                "y = model.generate(x, max_new_tokens, temperature=temperature, top_k=top_k)\n"),
        }, N, "own generate loop"),
    )

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        prio = super().recommendation_priority(ctx, outcome)
        if prio is Priority.HIGH and outcome.values.get("compiled_decode"):
            # its own decode loop already runs as compiled CUDA graphs: an engine adds paging and batching (J1, J2), not the
            # several-fold over eager PyTorch this advice is ranked for
            return Priority.MEDIUM
        return prio

    def detect(self, ctx: Context) -> Outcome:
        eng = engines(ctx.facts)
        if eng:
            names = sorted(eng)
            return Outcome(U, evs([x for n in names for x in eng[n]]), f"inference engine: {', '.join(names)}", {"engine": names[0]})
        gens = _hf_generate(ctx.facts)
        eager = gens + _online_rl_without_engine(ctx.facts, eng)
        # nanoGPT's ``model.generate(x, max_new_tokens, ...)`` is its own decode loop, not HF's: say which one runs
        custom, _ = _custom_generate(ctx.facts, gens)
        graphs = compiled_decode(ctx.facts)
        captured = captured_decode(ctx.facts)
        if eager and gens and len(custom) == len(gens) and len(eager) == len(gens) and (graphs or captured):
            # (pytorch-labs/gpt-fast: ``decode_one_token = torch.compile(decode_one_token, mode="reduce-overhead",
            # fullgraph=True)``: the loop's steps run as compiled CUDA graphs, not op by op; Chameleon captures its decode
            # forward with ``torch.cuda.graph`` itself)
            c = (graphs or captured)[0]
            how = (f"compiled into CUDA graphs (torch.compile mode={c.kwargs.get('mode')!r} at {c.path}:{c.line})" if graphs
                   else f"captured as a CUDA graph (`{c.name}` at {c.path}:{c.line})")
            return Outcome(N, evs([*(graphs or captured)[:2], *eager[:3]]), f"no inference engine: the project's own `generate` "
                           f"loop, its decode step {how}", {"engine": None, "compiled_decode": True})
        if eager and gens and len(custom) == len(gens) and len(eager) == len(gens):
            detail = "generation runs in PyTorch eager (the project's own `generate` loop)"
        elif eager:
            detail = "generation runs in PyTorch eager (HF `generate`)" if not custom else \
                "generation runs in PyTorch eager (HF `generate` and the project's own `generate` loop)"
        else:
            detail = "no inference engine"
        switched = switched_engines(ctx.facts) if eager else []
        if switched:
            # the engine is the inference code's own option: say so, and how to turn it on, rather than "eager only"
            c = switched[0]
            engine = c.name.split(".")[0]
            guard = " and ".join(g for g in (c.guard or "").split(" and ") if "__name__" not in g) or c.guard
            detail += (f" by default; {engine} is a switch of the inference code (`{c.short}(...)` at {c.path}:{c.line}, under "
                       f"`{guard}`), off unless the command turns it on")
            return Outcome(N, evs([c, *eager]), detail, {"engine": None, "engine_switch": engine})
        return Outcome(N, evs(eager), detail, {"engine": None})


# --------------------------------------------------------------------------------------
# J6 CUDA graph for decode
# --------------------------------------------------------------------------------------


def _graph_compiles(f: Facts) -> list[Call]:
    """``torch.compile(..., mode="reduce-overhead" | "max-autotune")`` outside training files: a step compiled into CUDA
    graphs, unless its ``disable=`` is on (see :func:`compiled_decode`)."""
    return [c for c in _live(f, f.calls("torch.compile")) if isinstance(c.kwargs.get("mode"), str)
            and c.kwargs["mode"] in ("reduce-overhead", "max-autotune") and not _training_file(f, c.path)]


def _compile_disabled(f: Facts, c: Call) -> bool:
    return value_on(f, c.kwargs.get("disable", False)) is True


def compiled_decode(f: Facts) -> list[Call]:
    """The decode step compiled into CUDA graphs and not switched off (what J6 reads; J5 and step zero read it too)."""
    return [c for c in _graph_compiles(f) if not _compile_disabled(f, c)]


_MODE_NAME = lazy_compile(r"^[A-Za-z][\w.-]*$")
_GENERATION = lazy_compile(r"infer|generat|decod|sampl|serv|chat", re.I)


def captured_decode(f: Facts) -> list[Call]:
    """A CUDA graph captured by hand where it serves generation (what J6 reads; J5 reads it too). Megatron's full-iteration
    training graphs (``megatron/core/full_cuda_graph.py``) and optimizer-step graphs are not decode."""
    return [c for c in _live(f, f.calls("torch.cuda.graph", "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables"))
            if not _training_file(f, c.path) and _GENERATION.search(f"{c.path} {c.func or ''}")]


@register
class J6DecodeCudaGraph(_InferenceOnly):
    id = "J6"
    title = "CUDA Graph for decode"
    title_zh = "推理 CUDA Graph"
    bottlenecks = (Bottleneck.LAUNCH, Bottleneck.LATENCY)
    priority = Priority.MEDIUM
    benefit = "replays the whole decode step as one graph: removes per-kernel launch overhead that dominates small-batch decode"
    what = (
        "Whether decode steps are captured as CUDA graphs: vLLM without `enforce_eager=True` (its default), SGLang without "
        "`--disable-cuda-graph`, TGI (default), TensorRT-LLM `cuda_graph_mode`/`cuda_graph_config`, `torch.compile(mode="
        "\"reduce-overhead\")` with a static cache, or `torch.cuda.graph` in inference code. `enforce_eager=True` is unused."
    )
    why = (
        "A decode step of a 7B model launches hundreds of small kernels; at batch 1 the CPU launch overhead can exceed GPU time. "
        "gpt-fast went from 25.5 to 107 tokens/s on LLaMA-7B (A100) with `torch.compile(mode=\"reduce-overhead\")` and a static "
        "KV cache alone, before quantization (PyTorch blog, 2023); vLLM captures decode graphs by default. Graphs fit decode "
        "because its shapes are fixed; prefill is not graphed."
    )
    fix = "Keep CUDA graphs on: drop `enforce_eager=True` in vLLM (`--enforce-eager` only for debugging or very tight memory), remove `--disable-cuda-graph` in SGLang; for HF use `cache_implementation=\"static\"` with `torch.compile(mode=\"reduce-overhead\")`."
    fix_zh = "保持 CUDA Graph 开启：vLLM 中去掉 `enforce_eager=True`（`--enforce-eager` 只用于调试或显存极紧张时），SGLang 去掉 `--disable-cuda-graph`；HF 推理使用 `cache_implementation=\"static\"` 并配合 `torch.compile(mode=\"reduce-overhead\")`。"
    fix_safety = FixSafety.SAFE
    references = ("https://pytorch.org/blog/accelerating-generative-ai-2/", "https://docs.vllm.ai/en/latest/design/cuda_graphs.html")
    snippets = {
        "python": (
            "import torch\n\n"
            "model.generation_config.cache_implementation = \"static\"\n"
            "model.forward = torch.compile(model.forward, mode=\"reduce-overhead\", fullgraph=True)\n"
        ),
        "shell": "vllm serve Qwen/Qwen2.5-7B-Instruct  # no --enforce-eager\n",
    }
    examples = (
        Example({"infer.py": "from vllm import LLM\nllm = LLM(model=path, gpu_memory_utilization=0.9)\n"}, U, "vllm default"),
        Example({"serve.sh": "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --cuda-graph-max-bs 64\n"}, U, "sglang"),
        Example({"generate.py": "import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "model.forward = torch.compile(model.forward, mode='reduce-overhead', fullgraph=True)\n"
                 "out = model.generate(**inputs, cache_implementation='static')\n"}, U, "hf compile reduce-overhead"),
        Example({"infer.py": "from vllm import LLM\nllm = LLM(model=path, enforce_eager=True)\n"}, N, "enforce_eager"),
        Example({"generate.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "out = model.generate(**inputs, max_new_tokens=64)\n",
                 "shard.py": "from megatron_fsdp import fully_shard_model\n\n\ndef shard(module, enable_cuda_graph=False):\n"
                 "    return fully_shard_model(module, enable_cuda_graph=enable_cuda_graph)\n\n\n"
                 "cuda_graph = {'training': None, 'validation': None}\n"},
                N, "a cuda-graph flag passed through, a dict of graph slots"),
        Example({"examples/inference/run_offline_inference.sh": (
            "torchrun --nproc-per-node 8 examples/inference/gpt/gpt_dynamic_inference.py \\\n    --load ${CHECKPOINT} \\\n"
            "    --cuda-graph-impl local \\\n    --decode-only-cuda-graphs \\\n    --inference-max-requests 256\n"),
            "examples/inference/gpt/gpt_dynamic_inference.py": (
                "from megatron.core.inference.contexts import DynamicInferenceContext\n"
                "from megatron.core.inference.engines import DynamicInferenceEngine\n\n"
                "context = DynamicInferenceContext(model.config, inference_config)\n"
                "engine = DynamicInferenceEngine(controller, context)\n")},
                U, "megatron inference launch with decode-only cuda graphs"),
        Example({"megatron/core/full_cuda_graph.py": "import torch\n\n\nclass FullCudaGraphWrapper:\n"
                 "    def capture(self, fn):\n        g = torch.cuda.CUDAGraph()\n        with torch.cuda.graph(g):\n            fn()\n",
                 "generate.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "out = model.generate(**inputs, max_new_tokens=64)\n"},
                N, "a training-step graph is not decode"),
        Example({"apps/main/generate.py": _LINGUA_GENERATOR.format(default=False)}, N,
                "lingua: decode compiled with reduce-overhead only under a generator flag that defaults to False"),
        Example({"apps/main/generate.py": _LINGUA_GENERATOR.format(default=True)}, U, "the same generator, the flag on by default"),
        Example({"config/ppo_trainer.yaml": "actor_rollout_ref:\n  rollout:\n    name: vllm\n    enforce_eager: True\n"
                 "    free_cache_engine: True\n", "requirements.txt": "vllm==0.8.3\n"}, N, "verl rollout eager"),
        Example({"inference.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(p)\n"
                 "out = model.generate(**inputs)\n"}, N, "hf eager"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        eng = engines(f)
        eager_on, graph_vllm = _per_site(f, eng, "vllm", ("enforce_eager", "vllm_enforce_eager"), ctx.project.training_files)
        sg_off, graph_sg = _per_site(f, eng, "sglang", ("disable_cuda_graph",))
        # a client of an SGLang server started elsewhere (VideoLLaMA2's ``serve/sglang_worker.py``: ``RuntimeEndpoint(url)``,
        # ``sgl.gen``), as J1-J3 read it: the server runs at its defaults, CUDA graphs on, unless a flag here turns them off
        client = [x for x in eng.get("sglang", []) if isinstance(x, Call) and x.short == "RuntimeEndpoint"]
        if client and not graph_sg and not [x for x in sg_off if isinstance(x, Call) and _constructs(x)] \
                and not [s for s in f.effective("disable_cuda_graph") if truthy(s.value)]:
            graph_sg = client
        used: list[Any] = graph_vllm + graph_sg
        tgi_off = [s for s in f.effective("cuda_graphs") if str(s.value).strip() in {"0", "[]", ""}]
        if not tgi_off:
            used += eng.get("tgi", [])
        for s in f.effective("cuda_graph_mode", "use_cuda_graph", "cuda_graph_config", "enable_cuda_graph", "cuda_graph"):
            # on: a true flag or a named mode ("full", "piecewise"); an expression passed through (``enable_cuda_graph=
            # args.x``), a mapping of buffers (``cuda_graph = {'training': None}``) or None proves nothing
            if truthy(s.value) is True or (isinstance(s.value, str) and truthy(s.value) is None and _MODE_NAME.match(s.value.strip())):
                used.append(s)
        switched_off: list[Any] = []  # ``disable=not cfg.reduce_generation_overhead`` with the flag off by default (lingua)
        for c in _graph_compiles(f):
            (switched_off if _compile_disabled(f, c) else used).append(c)
        # a graph captured by hand counts where it serves generation; Megatron's full-iteration training graphs
        # (``megatron/core/full_cuda_graph.py``) and optimizer-step graphs are not decode
        used += captured_decode(f)
        # Megatron's inference launches: ``--decode-only-cuda-graphs``, ``--inference-dynamic-batching-num-cuda-graphs``,
        # ``--cuda-graph-impl local`` on an inference/serving command
        for s in f.effective("decode_only_cuda_graphs", "inference_dynamic_batching_num_cuda_graphs", "cuda_graph_impl"):
            v = s.value
            on = (as_number(v) != 0) if s.name == "inference_dynamic_batching_num_cuda_graphs" else (
                truthy(v) is True or (isinstance(v, str) and v.strip().lower() in ("local", "transformer_engine")))
            if on and (s.name == "decode_only_cuda_graphs" or _GENERATION.search(s.path)):
                used.append(s)
        train = ctx.project.training_files
        # (an engine module of the training code that is no inference module: oumi's ``inference/vllm_inference_engine.py``
        # is its serving engine, not a trainer's rollout)
        rollout_eager = [x for x in eager_on if isinstance(x, Call) and x.path in train and not _inference_file(x.path)]
        if used and rollout_eager and not any(getattr(x, "path", None) in train for x in used):
            # Video-R1: its CoT-generation and inference scripts build ``LLM(model=...)`` with graphs on, while the GRPO
            # trainer's rollout engine is ``LLM(..., enforce_eager=True)``
            x0, e0 = used[0], rollout_eager[0]
            return Outcome(P, evs(used + rollout_eager), f"decode runs as CUDA graphs in scripts outside training ({x0.path}:{x0.line}"
                           f"{f', +{len(used) - 1}' if len(used) > 1 else ''}), but the training run's rollout engine is built "
                           f"eager ({e0.path}:{e0.line}: enforce_eager)", {"cuda_graph": "some"})
        graph_built = [x for x in used if isinstance(x, Call) and _constructs(x)]
        eager_built = [x for x in eager_on if isinstance(x, Call) and _constructs(x) and x not in rollout_eager]
        if graph_built and eager_built:
            # InternLM-Math: the Lean-Workbook scripts build ``LLM(model=...)`` (graphs on by default) while the four MiniF2F
            # proof-search scripts, the README's reproduction, build ``LLM(..., enforce_eager=True)``
            e0 = eager_built[0]
            more = f", +{len(eager_built) - 1}" if len(eager_built) > 1 else ""
            return Outcome(P, evs(graph_built + eager_built), f"decode runs as CUDA graphs in {len(graph_built)} of "
                           f"{len(graph_built) + len(eager_built)} engine builds; the others are built eager ({e0.path}:{e0.line}"
                           f"{more}: enforce_eager=True)", {"cuda_graph": "some"})
        if used:
            if all(x in client for x in used):
                eager = _hf_generate(f)
                if eager:
                    # LLaVA: a worker for an SGLang server beside the HF ``generate`` paths (serve/cli.py, model_worker.py)
                    e0 = eager[0]
                    return Outcome(P, evs(used + eager), "decode runs as CUDA graphs only through the SGLang server the worker "
                                   f"calls (its default; it is started elsewhere); the HF generate paths ({e0.path}:{e0.line}"
                                   f"{f', +{len(eager) - 1}' if len(eager) > 1 else ''}) decode eagerly", {"cuda_graph": "some"})
                return Outcome(U, evs(used), "decode runs as CUDA graphs (the default of the SGLang server this project's "
                               "client calls; it is started elsewhere)", {"cuda_graph": True})
            return Outcome(U, evs(used), "decode runs as CUDA graphs", {"cuda_graph": True})
        forced = [s for s in f.effective("enforce_eager", "vllm_enforce_eager", "disable_cuda_graph") if truthy(s.value)]
        off = forced + [x for x in eager_on + sg_off if isinstance(x, Call)] + tgi_off
        if off:
            return Outcome(N, evs(off), "the engine is forced to eager mode (no CUDA graphs)", {"cuda_graph": False})
        if switched_off:
            flag = str(getattr(switched_off[0].kwargs.get("disable"), "text", "")).removeprefix("not ").strip()
            return Outcome(N, evs(switched_off), f"decode is compiled with mode=\"reduce-overhead\" (CUDA graphs) only when "
                           f"`{flag}` is on, and no setting turns it on", {"cuda_graph": False})
        return Outcome(N, evs(_hf_generate(f)), "decode runs eagerly, kernel by kernel", {"cuda_graph": False})


# --------------------------------------------------------------------------------------
# J7 speculative decoding
# --------------------------------------------------------------------------------------

#: the engines' speculative-decoding config objects (vLLM ``SpeculativeConfig``), which engine code hands on as they come
_ENGINE_SPEC_CONFIGS = frozenset({"speculative_config", "vllm_speculative_config"})
_SPEC_KEYS = ("speculative_model", "speculative_config", "num_speculative_tokens", "speculative_algorithm",
              "speculative_draft_model_path", "speculative_num_steps", "speculative_decoding_mode", "max_draft_len",
              "speculate", "draft_model", "draft_model_name_or_path", "spec_decode", "vllm_speculative_config",
              "medusa_num_heads", "use_medusa", "use_eagle", "lookahead_config", "ngram_prompt_lookup_max")


#: Medusa 0.1 (FasterDecoding): heads trained on a frozen model; the package's chat CLI streams the model's own
#: speculative loop, ``model.medusa_generate(...)`` (no ``generate`` call anywhere)
_MEDUSA_FILES = {
    "medusa/model/medusa_model.py": (
        "import torch\nimport torch.nn as nn\n\n\nclass MedusaModel(nn.Module):\n"
        "    def __init__(self, base_model, medusa_num_heads=2):\n        super().__init__()\n        self.base_model = base_model\n"
        "        self.medusa_head = nn.ModuleList([nn.Linear(4096, 32000) for _ in range(medusa_num_heads)])\n\n"
        "    def medusa_generate(self, input_ids, temperature=0.0, max_steps=512):\n"
        "        for idx in range(max_steps):\n"
        "            candidates, tree_candidates = generate_candidates(medusa_logits, logits, medusa_topk, tree_indices, temperature)\n"
        "            medusa_logits, logits, outputs = tree_decoding(self, tree_candidates, past_key_values, input_ids)\n"
        "            best_candidate, accept_length = evaluate_posterior(logits, candidates, temperature)\n"
        "            yield {'text': self.tokenizer.decode(input_ids[0])}\n"),
    "medusa/train/train.py": (
        "import transformers\nfrom transformers import Trainer\nfrom medusa.model.medusa_model import MedusaModel\n\n"
        "def train():\n    model = transformers.AutoModelForCausalLM.from_pretrained('lmsys/vicuna-7b-v1.3')\n"
        "    for param in model.base_model.parameters():\n        param.requires_grad = False\n"
        "    medusa_lm_head = MedusaModel(model, medusa_num_heads=3)\n"
        "    trainer = Trainer(model=medusa_lm_head, args=transformers.TrainingArguments(output_dir='out'))\n"
        "    trainer.train()\n"),
    "medusa/inference/cli.py": (
        "import torch\nfrom medusa.model.medusa_model import MedusaModel\n\n"
        "def main(args):\n    model = MedusaModel.from_pretrained(args.model, torch_dtype=torch.float16)\n"
        "    input_ids = tokenizer.encode(prompt, return_tensors='pt').to(model.base_model.device)\n"
        "    outputs = chatio.stream_output(model.medusa_generate(input_ids, temperature=args.temperature, max_steps=args.max_steps))\n"),
}


#: the model classes of Medusa's and EAGLE's speculative decoding (SafeAILab/EAGLE ``EaModel``, FasterDecoding ``MedusaModel``)
_SPEC_MODEL_CLASS = lazy_compile(r"^(Medusa\w*Model|EaModel|EagleModel|\w*(Medusa|Eagle)Head)$")


@register
class J7SpeculativeDecoding(_InferenceOnly):
    id = "J7"
    title = "Speculative decoding"
    title_zh = "Speculative Decoding"
    bottlenecks = (Bottleneck.MEMORY, Bottleneck.LATENCY)
    priority = Priority.LOW
    benefit = "several tokens per target-model step when a draft model/heads guess right: 2-3x lower decode latency, same outputs"
    what = (
        "Whether generation verifies draft tokens: vLLM `speculative_config`/`speculative_model`, SGLang "
        "`--speculative-algorithm EAGLE`, TGI `--speculate`, TensorRT-LLM `speculative_decoding_mode`, HF `generate("
        "assistant_model=...)` or `prompt_lookup_num_tokens=`, Medusa/EAGLE heads."
    )
    why = (
        "Speculative sampling gave 2-2.5x decode speed-ups for Chinchilla 70B with identical output distribution (Chen et al., "
        "2023; Leviathan et al., 2023); EAGLE reported 2.7-3.5x on LLaMA2-Chat 70B. Gains need a large target model, a small "
        "same-family draft and spare compute (low batch); at high batch the benefit shrinks."
    )
    fix = "For latency-bound serving of a large model, add speculative decoding: vLLM `speculative_config={\"model\": draft, \"num_speculative_tokens\": 5}` (or EAGLE/ngram), HF `generate(assistant_model=draft)`."
    fix_zh = "对延迟敏感的大模型服务启用投机解码：vLLM 设置 `speculative_config={\"model\": draft, \"num_speculative_tokens\": 5}`（或 EAGLE/ngram），HF 使用 `generate(assistant_model=draft)`。"
    fix_safety = FixSafety.SAFE
    references = ("https://arxiv.org/abs/2211.17192", "https://arxiv.org/abs/2302.01318", "https://docs.vllm.ai/en/latest/features/spec_decode.html")
    snippets = {
        "python": (
            "from vllm import LLM\n\n"
            "llm = LLM(model=\"meta-llama/Llama-3.1-70B-Instruct\", tensor_parallel_size=4,\n"
            "          speculative_config={\"model\": \"meta-llama/Llama-3.2-1B-Instruct\", \"num_speculative_tokens\": 5})\n"
        ),
    }
    examples = (
        Example({"infer.py": "from vllm import LLM\nllm = LLM(model=big, speculative_config={'method': 'ngram', "
                 "'num_speculative_tokens': 4, 'prompt_lookup_max': 4})\n"}, U, "vllm ngram"),
        Example({"chat.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(big)\n"
                 "draft = AutoModelForCausalLM.from_pretrained(small)\nout = model.generate(**inputs, assistant_model=draft)\n"},
                U, "hf assisted generation"),
        Example({"serve.sh": "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
                 "--speculative-algorithm EAGLE --speculative-draft-model-path lmsys/sglang-EAGLE-LLaMA3-Instruct-8B\n"}, U, "sglang eagle"),
        Example({"chat.py": "from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(big)\n"
                 "out = model.generate(**inputs, assistant_model=None, max_new_tokens=256)\n"}, N, "assistant_model=None"),
        Example({"infer.py": "from vllm import LLM\nllm = LLM(model=big)\n# llm = LLM(model=big, speculative_model=small)\n"}, N, "commented out"),
        Example(_MEDUSA_FILES, U, "a chat CLI streaming the heads' own speculative loop (medusa_generate)"),
        Example({k: v for k, v in _MEDUSA_FILES.items() if k != "medusa/inference/cli.py"}, Status.NA,
                "the same heads trained, no inference entry: not an inference project"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        used: list[Any] = []
        for s in f.effective(*_SPEC_KEYS):
            v = s.value
            if v is None or truthy(v) is False or (isinstance(v, str) and v.strip().lower() in {"none", "null", ""}):
                continue
            if s.name in _ENGINE_SPEC_CONFIGS and isinstance(v, Expr) and (v.ref or v.text or "").rsplit(".", 1)[-1] == s.name:
                # an engine's config object handed on under its own name (LlamaGen's copy of vLLM's engine: ``executor_class(
                # ..., speculative_config=speculative_config)``): plumbing; a run that configures it builds the config
                # (``speculative_config={"model": ...}``), its own setting. (A draft model handed on, gpt-fast's
                # ``generate(..., draft_model=draft_model)``, is the project's own speculative loop: kept.)
                continue
            used.append(s)
        for c in _live(f, f.calls("generate")):
            a = c.kwargs.get("assistant_model")
            # (not a ``generate`` override forwarding its own ``assistant_model=None`` parameter to ``super().generate``:
            # mPLUG-Owl's vendored Qwen ``modeling_qwen.py``; a caller would have to pass a draft model)
            forwarded = isinstance(a, Expr) and a.ref == "assistant_model" and f.param_default(c.path, c.line, "assistant_model") is not None
            if a is not None and not (isinstance(a, str) and a.lower() == "none") and not forwarded:
                used.append(c)
            if (as_number(c.kwargs.get("prompt_lookup_num_tokens")) or 0) > 0:
                used.append(c)
        used += _live(f, f.calls("MedusaModel", "EaModel", "EagleModel"))
        # a package named ``medusa``/``eagle`` is the speculative heads' only where such a model class exists (Medusa's
        # ``MedusaModel``); NVIDIA's Eagle VLM calls its own ``eagle`` package (``eagle.mm_utils.tokenizer_image_token``)
        if any(_SPEC_MODEL_CLASS.match(c.name) for c in f.records("classes")):
            used += _live(f, f.calls("medusa.*", "eagle.*"))
        if used:
            return Outcome(U, evs(used), "speculative decoding is configured", {"speculative": True})
        # an option the engine has but leaves at 0 (Megatron ``--num-speculative-tokens``, default 0): cite where it is off
        off = [s for s in f.effective(*_SPEC_KEYS) if s.value is not None and (truthy(s.value) is False or as_number(s.value) == 0)]
        if off:
            first = off[0]
            return Outcome(N, evs(off), f"speculative decoding is available but off ({first.name}={first.value} at {first.path}:{first.line}): "
                           "tokens are generated one target-model step at a time", {"speculative": False})
        return Outcome(N, [], "tokens are generated one target-model step at a time", {"speculative": False})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        if outcome.status == U:
            return None
        b = ctx.project.params_billions
        if b is not None and b < 3:
            return None  # a small target model leaves little to win over a draft model
        return self.priority
