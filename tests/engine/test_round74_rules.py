"""Round 74 (issue #9): claims of six more public repositories (Chinese-Llama-2-7b, DISC-LawLLM, DoctorGLM, YuLan-Chat,
lawyer-llama, Infini-Megrez), read claim by claim. Each test is one false claim of those reports, made from the shape of the
real code, with a control that keeps the rule honest."""

from __future__ import annotations

from reports.advice import build_plan
from reports.json_report import recommendations

from .claims import audit as _audit
from .claims import check as _check

# --- Chinese-Llama-2-7b: the README's torchrun command is the run; the Dockerfile only starts the chat demo --------------------

_ALPACA_TRAIN = (
    "from dataclasses import dataclass, field\n\nimport transformers\nfrom transformers import Trainer\n\n\n"
    "@dataclass\nclass ModelArguments:\n    model_name_or_path: str = field(default='facebook/opt-125m')\n\n\n"
    "@dataclass\nclass TrainingArguments(transformers.TrainingArguments):\n    model_max_length: int = field(default=512)\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)\n"
    "    trainer = Trainer(model=model, args=training_args)\n    trainer.train()\n\n\nif __name__ == '__main__':\n    train()\n")
_CL2_README = (
    "# Chinese Llama 2 7B\n\n## 如何训练\n\n```bash\nDATASET=\"LinkSoul/instruction_merge_set\"\n\n"
    "torchrun --nnodes=1 --node_rank=0 --nproc_per_node=8 \\\n    --master_port=25003 \\\n        train.py \\\n"
    "        --model_name_or_path ${MODEL_PATH} \\\n        --data_path ${DATASET} \\\n        --bf16 True \\\n"
    "        --per_device_train_batch_size 4 \\\n        --gradient_accumulation_steps 1 \\\n        --save_steps 1200 \\\n"
    "        --warmup_ratio 0.03 \\\n        --lr_scheduler_type cosine \\\n        --logging_steps 1 \\\n"
    "        --fsdp 'full_shard auto_wrap' \\\n        --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \\\n"
    "        --model_max_length 4096 \\\n        --gradient_checkpointing True\n```\n")
_CL2_DOCKER = ("FROM python:3.10\nRUN pip config set global.index-url https://pypi.tuna.tsinghua.edu.cn/simple && \\\n"
               "    pip install transformers==4.31.0 gradio==3.37.0\nWORKDIR /app\n"
               "COPY example/basic-chat/* ./\nCMD [\"python\", \"{script}\"]\n")
_CL2_APP = ("import gradio as gr\nfrom transformers import AutoModelForCausalLM\n\n"
            "model = AutoModelForCausalLM.from_pretrained('LinkSoul/Chinese-Llama-2-7b')\n\n\n"
            "def chat(msg):\n    return model.generate(msg, max_new_tokens=256)\n\n\ngr.ChatInterface(chat).launch()\n")


def _chinese_llama2(script: str = "app.py") -> dict[str, str]:
    return {"train.py": _ALPACA_TRAIN, "README.md": _CL2_README, "Dockerfile": _CL2_DOCKER.format(script=script),
            "example/basic-chat/app.py": _CL2_APP}


def test_a_readme_training_command_is_the_run_when_the_only_shipped_launch_starts_a_demo() -> None:
    result = _audit(_chinese_llama2())
    c1, a2, c3, g1 = (_check(result, c) for c in ("C1", "A2", "C3", "G1"))
    assert c1.status.value == "used" and any(e.path == "README.md" for e in c1.evidence), c1
    assert a2.status.value == "used" and "FULL_SHARD" in (a2.detail or ""), a2
    assert c3.status.value == "used" and g1.status.value == "used", (c3, g1)
    assert result.project.max_seq_len == 4096, result.project.max_seq_len
    # control: a shipped launch that trains (``python finetune.py`` in the image) keeps the rule that a README is not use
    result = _audit({**_chinese_llama2("finetune.py"), "finetune.py": _ALPACA_TRAIN})
    assert _check(result, "C1").status.value != "used", _check(result, "C1")


def test_a_dockerfile_pin_is_cited_at_its_line_and_gates_static_cache_advice() -> None:
    files = _chinese_llama2()
    result = _audit(files)
    assert [(d.path, d.line) for d in result.facts.deps("transformers")] == [("Dockerfile", 3)]
    rec = next(r for r in build_plan(result).recommendations if r.check == "J1")
    assert rec.text.startswith("`cache_implementation` needs transformers 4.38+ (Dockerfile:3 pins `transformers==4.31.0`"), rec.text
    # control: a release that has the static cache gets the advice as it is
    files["Dockerfile"] = files["Dockerfile"].replace("4.31.0", "4.40.0")
    rec = next(r for r in build_plan(_audit(files)).recommendations if r.check == "J1")
    assert "needs transformers" not in rec.text, rec.text


# --- YuLan-Chat / lawyer-llama: a console chat whose 8-bit loading is an opt-in flag ---------------------------------------------

_YULAN_INFERENCE = (
    "import argparse\n\nimport torch\nimport transformers\nfrom accelerate import init_empty_weights, load_checkpoint_and_dispatch\n\n\n"
    "def load(args):\n    if args.load_in_8bit:\n"
    "        model = transformers.AutoModelForCausalLM.from_pretrained(args.model_path, device_map='auto', load_in_8bit=True)\n"
    "    else:\n        with init_empty_weights():\n            model = transformers.AutoModelForCausalLM.from_pretrained(args.model_path)\n"
    "        model = load_checkpoint_and_dispatch(model, args.model_path, device_map='auto', dtype=torch.float16)\n"
    "    tokenizer = transformers.AutoTokenizer.from_pretrained(args.model_path)\n    return model, tokenizer\n\n\n"
    "def main(args):\n    model, tokenizer = load(args)\n    while True:\n        input_text = input('[|Human|]:')\n"
    "        ids = tokenizer(input_text, return_tensors='pt').input_ids.cuda()\n"
    "        outputs = model.generate(ids, max_new_tokens=2048, repetition_penalty=1.1)\n"
    "        print(tokenizer.decode(outputs[0]))\n\n\nif __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--model_path', type=str, default='')\n"
    "    parser.add_argument('--load_in_8bit', default=False, action='store_true')\n    args, _ = parser.parse_known_args()\n"
    "    main(args)\n")
_APPLY_DELTA = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\ndef apply_diff(path_raw, path_diff):\n"
    "    model_raw = AutoModelForCausalLM.from_pretrained(path_raw, torch_dtype=torch.bfloat16)\n"
    "    model_diff = AutoModelForCausalLM.from_pretrained(path_diff, torch_dtype=torch.bfloat16)\n"
    "    for k, v in model_diff.state_dict().items():\n        v.add_(model_raw.state_dict()[k])\n"
    "    model_diff.save_pretrained(path_diff + '-merged')\n")
_WEB_DEMO = ("import gradio as gr\n\n" + _YULAN_INFERENCE.split("\n\n\ndef main")[0].split("\n\n\n", 1)[1]
             + "\n\n\ndef answer(text):\n    model, tokenizer = load(ARGS)\n"
             "    return model.generate(tokenizer(text, return_tensors='pt').input_ids, max_new_tokens=400)\n\n\n"
             "gr.Interface(fn=answer, inputs='text', outputs='text').launch()\n")


def test_an_opt_in_load_in_8bit_flag_of_a_chat_script_is_offered_quantization() -> None:
    files = {"inference.py": _YULAN_INFERENCE, "apply_delta.py": _APPLY_DELTA}
    j4 = _check(_audit(files), "J4")
    assert j4.status.value == "unused" and "option no launch turns on (load_in_8bit, inference.py:" in (j4.detail or ""), j4
    # control: the same flag where the script loads nothing in 8 bit is no offer of quantized inference
    files["inference.py"] = _YULAN_INFERENCE.replace(", load_in_8bit=True)", ")")
    j4 = _check(_audit(files), "J4")
    assert "load_in_8bit" not in (j4.detail or ""), j4


def test_a_console_chat_that_reads_one_prompt_at_a_time_has_no_requests_to_batch() -> None:
    files = {"inference.py": _YULAN_INFERENCE, "apply_delta.py": _APPLY_DELTA}
    result = _audit(files)
    j2, j3 = _check(result, "J2"), _check(result, "J3")
    assert j2.status.value == "n/a" and "one interactive user" in (j2.detail or ""), j2
    assert j3.status.value == "n/a" and [e.path for e in j3.evidence] == ["inference.py"], j3
    # control: a Gradio demo beside it can take many users at once: batching is judged
    files["demo_web.py"] = _WEB_DEMO
    j2 = _check(_audit(files), "J2")
    assert j2.status.value == "unused", j2


def test_engine_snippets_of_an_inference_project_go_into_its_generation_script() -> None:
    files = {"inference.py": _YULAN_INFERENCE, "apply_delta.py": _APPLY_DELTA}
    recs = [r for r in recommendations(_audit(files)) if r["check"].startswith("J") and r.get("snippet_where")]
    assert recs and all(r["snippet_where"] == "inference.py" for r in recs), [(r["check"], r["snippet_where"]) for r in recs]
    # control: without a generation script the first Python file by name is still where a snippet goes
    files["inference.py"] = _YULAN_INFERENCE.replace("model.generate(", "model(")
    where = {r.get("snippet_where") for r in recommendations(_audit(files)) if r.get("snippet_where")}
    assert "inference.py" not in where, where


# --- DoctorGLM / Chinese-Llama-2: ChatGLM's own quantize(bits), a bnb switch on a quantized checkpoint name ------------------------

_GLM_LOAD = (
    "import torch\nfrom transformers import AutoModel, AutoTokenizer\n\n\ndef load_int(path, q=8):\n"
    "    tokenizer = AutoTokenizer.from_pretrained('THUDM/chatglm-6b', trust_remote_code=True)\n"
    "    model = AutoModel.from_pretrained('THUDM/chatglm-6b', trust_remote_code=True)\n    model.{call}\n"
    "    model.load_state_dict(torch.load(path))\n    model.half().cuda()\n    return tokenizer, model.eval()\n\n\n"
    "tokenizer, model = load_int('DoctorGLM-6B-INT4.pt', 4)\nresponse, history = model.chat(tokenizer, 'hi', history=[])\n")


def test_a_chatglm_model_quantized_to_a_bit_width_at_load_is_quantized_inference() -> None:
    j4 = _check(_audit({"chat_quant.py": _GLM_LOAD.format(call="quantize(q)")}), "J4")
    assert j4.status.value == "used" and "model.quantize" in (j4.detail or ""), j4
    # control: a codebook's quantize of a tensor (VQ-VAE) is not weight quantization
    j4 = _check(_audit({"chat_quant.py": _GLM_LOAD.format(call="quantize(q, codebook)")}), "J4")
    assert j4.status.value != "used", j4


def test_a_quantized_checkpoint_name_cites_the_model_load_not_the_tokenizer() -> None:
    infer = ("import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n\n"
             "model_path = 'LinkSoul/Chinese-Llama-2-7b-4bit'\ntokenizer = AutoTokenizer.from_pretrained('LinkSoul/Chinese-Llama-2-7b-4bit')\n"
             "model = AutoModelForCausalLM.from_pretrained(\n    'LinkSoul/Chinese-Llama-2-7b-4bit',\n    load_in_4bit=model_path.endswith('4bit'),\n"
             "    torch_dtype=torch.float16,\n)\nprint(model.generate(tokenizer('hi', return_tensors='pt').input_ids))\n")
    j4 = _check(_audit({"infer.py": infer}), "J4")
    assert j4.status.value == "used" and "bnb-4bit" in (j4.detail or ""), j4
    assert [e.line for e in j4.evidence] == [6], j4.evidence
    # control: a checkpoint loaded without the switch is a prequantized one
    j4 = _check(_audit({"infer.py": infer.replace("    load_in_4bit=model_path.endswith('4bit'),\n", "")}), "J4")
    assert "prequantized" in (j4.detail or ""), j4


# --- Infini-Megrez: a vLLM model class of the project's own that vLLM compiles ------------------------------------------------------

_MEGREZ_MODEL = (
    "import torch\nfrom torch import nn\nfrom vllm.compilation.decorators import support_torch_compile\n"
    "from vllm.model_executor.layers.fused_moe import FusedMoE\n\n\n@support_torch_compile\nclass MegrezMoeModel(nn.Module):\n"
    "    def forward(self, input_ids, positions):\n        return self.layers(input_ids, positions)\n")
_MEGREZ_INFER = (
    "from vllm import LLM, ModelRegistry, SamplingParams\n\nfrom megrez_moe import MegrezMoeModel\n\n"
    "ModelRegistry.register_model('MegrezMoeForCausalLM', MegrezMoeModel)\n"
    "llm = LLM(model='Infinigence/Megrez2-3x7B-A3B', trust_remote_code=True, tensor_parallel_size=1{eager})\n"
    "outputs = llm.generate(['hello'], SamplingParams(max_tokens=4096))\n")


def test_a_vllm_model_class_decorated_for_compilation_is_compiled_by_the_engine() -> None:
    files = {"demo/vllm/megrez_moe.py": _MEGREZ_MODEL, "demo/vllm/infer_vllm_offline.py": _MEGREZ_INFER.format(eager="")}
    d2 = _check(_audit(files), "D2")
    assert d2.status.value == "used" and "@support_torch_compile on MegrezMoeModel" in (d2.detail or ""), d2
    # control: the engine run eagerly compiles nothing
    files["demo/vllm/infer_vllm_offline.py"] = _MEGREZ_INFER.format(eager=", enforce_eager=True")
    d2 = _check(_audit(files), "D2")
    assert d2.status.value != "used", d2


# --- DISC-LawLLM: two LLaMA-Factory recipes that discard the tokenization cache and checkpoint 20x apart --------------------------

_DISC_RECIPE = ("### model\nmodel_name_or_path: ShengbinYue/LawLLM-7B\n\n### method\nstage: sft\ndo_train: true\n"
                "finetuning_type: {ft}\ndeepspeed: examples/deepspeed/ds_z3_config.json\n\n### dataset\ndataset: lawllm\n"
                "template: qwen\ncutoff_len: 4096\noverwrite_cache: {cache}\npreprocessing_num_workers: 16\n\n### output\n"
                "output_dir: saves/{ft}\nlogging_steps: 10\nsave_steps: {save}\n\n### train\nper_device_train_batch_size: 2\n"
                "gradient_accumulation_steps: 4\nlearning_rate: 1.0e-5\nnum_train_epochs: 2.0\nbf16: true\n")
_DISC_README = ("# DISC-LawLLM\n\n```bash\nllamafactory-cli train lawllm_full_sft.yaml\n```\n\n"
                "```bash\nllamafactory-cli train lawllm_lora_sft.yaml\n```\n")


def _disc(cache: str = "true", full_save: int = 10000) -> dict[str, str]:
    return {"README.md": _DISC_README, "lawllm_full_sft.yaml": _DISC_RECIPE.format(ft="full", cache=cache, save=full_save),
            "lawllm_lora_sft.yaml": _DISC_RECIPE.format(ft="lora", cache=cache, save=500)}


def test_overwrite_cache_in_a_recipe_retokenizes_at_every_launch() -> None:
    result = _audit(_disc())
    f6 = _check(result, "F6")
    assert f6.status.value == "partial" and "overwrite_cache: true (lawllm_full_sft.yaml:" in (f6.detail or ""), f6
    rec = next(r for r in build_plan(result).recommendations if r.check == "F6")
    assert "drop `overwrite_cache`" in rec.text and "every launch" in rec.benefit, rec
    # control: recipes that keep the cache get the framework's reading
    f6 = _check(_audit(_disc(cache="false")), "F6")
    assert "overwrite_cache" not in (f6.detail or ""), f6


def test_two_recipes_that_checkpoint_at_different_intervals_are_both_named() -> None:
    i3 = _check(_audit(_disc()), "I3")
    assert i3.status.value == "used" and "save_steps differs by recipe: 500 in lawllm_lora_sft.yaml:" in (i3.detail or ""), i3
    assert "10000 in lawllm_full_sft.yaml:" in (i3.detail or ""), i3
    # control: recipes that agree say nothing more
    i3 = _check(_audit(_disc(full_save=500)), "I3")
    assert "differs by recipe" not in (i3.detail or ""), i3
