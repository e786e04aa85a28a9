"""Round 72 (issue #9): claims of more public repositories (Luotuo-Chinese-LLM, UltraFeedback, LLMBox, Nanbeige,
InternLM-Math, Orion), read claim by claim. Each test is one false claim of those reports, made from the shape of the real
code, with a control that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit
from .claims import check as _check

# --- Luotuo: a LoRA config built for inference, only to load trained adapter weights into ---------------------------------

_LUOTUO_EVAL = (
    "import torch\nfrom peft import LoraConfig, TaskType, get_peft_model\nfrom transformers import AutoModel, AutoTokenizer\n\n"
    "model = AutoModel.from_pretrained('THUDM/chatglm-6b', trust_remote_code=True).half().cuda()\n"
    "peft_config = LoraConfig(task_type=TaskType.CAUSAL_LM, inference_mode={mode}, r=8, lora_alpha=32, lora_dropout=0.1)\n"
    "model = get_peft_model(model, peft_config)\nmodel.load_state_dict(torch.load('tuoling-lora.pt'), strict=False)\n"
    "tokenizer = AutoTokenizer.from_pretrained('THUDM/chatglm-6b', trust_remote_code=True)\n"
    "print(model.generate(**tokenizer('hi', return_tensors='pt'), max_new_tokens=64))\n")


def test_adapters_attached_in_inference_mode_are_no_fine_tuning() -> None:
    # (beside a launch of the Gradio demo, as Luotuo's notebooks start ``python app.py``)
    demo = {"notebook/run_demo.sh": "python app.py --port 7860\n"}
    a = _audit({"notebook/TuoLingC_evaluation_code.py": _LUOTUO_EVAL.format(mode="True"), **demo})
    assert not a.project.does_training, a.project
    # control: the same config for training makes the adapters a fine-tuning run
    a = _audit({"notebook/TuoLingC_evaluation_code.py": _LUOTUO_EVAL.format(mode="False"), **demo})
    assert a.project.does_training


# --- UltraFeedback: a debugging switch in a generation launch; TP over every visible GPU ----------------------------------

_ULTRA_MAIN = ("import os\n\nimport torch\nfrom vllm import LLM, SamplingParams\n\nos.environ['NCCL_IGNORE_DISABLED_P2P'] = '1'\n\n\n"
               "def main():\n    llm = LLM(model='openbmb/UltraLM-13b-v2.0', tensor_parallel_size={tp})\n"
               "    outs = llm.generate(prompts, SamplingParams(max_tokens=1024))\n\n\nif __name__ == '__main__':\n    main()\n")
_ULTRA_SH = "export CUDA_VISIBLE_DEVICES=0,1,2,3\n{blocking}python main_vllm.py --model_type ultralm\n"


def test_cuda_launch_blocking_in_a_generation_launch_is_the_bottleneck() -> None:
    files = {"src/main_vllm.py": _ULTRA_MAIN.format(tp="torch.cuda.device_count()"),
             "src/run_vllm.sh": _ULTRA_SH.format(blocking="export CUDA_LAUNCH_BLOCKING=1\n")}
    p = _audit(files).project
    assert p.bottleneck.value == "launch-bound" and any("CUDA_LAUNCH_BLOCKING=1" in r for r in p.bottleneck_reasons), p
    # control: without it, the engine's decode reads the weights per token (memory-bound)
    files["src/run_vllm.sh"] = _ULTRA_SH.format(blocking="")
    assert _audit(files).project.bottleneck.value == "memory-bound"


def test_tensor_parallel_over_every_visible_gpu_is_tensor_parallel() -> None:
    files = {"src/main_vllm.py": _ULTRA_MAIN.format(tp="torch.cuda.device_count()"), "src/run_vllm.sh": _ULTRA_SH.format(blocking="")}
    a4 = _check(_audit(files), "A4")
    assert a4.status.value == "used" and "every GPU the process sees" in (a4.detail or ""), a4
    # control: a size of one splits nothing
    files["src/main_vllm.py"] = _ULTRA_MAIN.format(tp="1")
    assert _check(_audit(files), "A4").status.value != "used"


# --- InternLM-Math: engines built eager in some scripts and with graphs in others ------------------------------------------

_PROVER = ("from vllm import LLM, SamplingParams\n\n\ndef main(args):\n"
           "    model = LLM(model=args.model_name, tensor_parallel_size=1, {eager}trust_remote_code=True)\n"
           "    out = model.generate([prompt], SamplingParams(max_tokens=256))\n\n\nif __name__ == '__main__':\n    main(parse())\n")


def test_decode_graphs_in_some_engine_builds_only_is_partial() -> None:
    files = {"leanworkbook/inference_nli.py": _PROVER.format(eager=""),
             "minif2f/proofsearch_internLM2.py": _PROVER.format(eager="enforce_eager=True, ")}
    j6 = _check(_audit(files), "J6")
    assert j6.status.value == "partial" and "1 of 2 engine builds" in (j6.detail or ""), j6
    # control: every build keeps its graphs
    files["minif2f/proofsearch_internLM2.py"] = _PROVER.format(eager="")
    assert _check(_audit(files), "J6").status.value == "used"
