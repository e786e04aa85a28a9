"""Round 32 (issue #9): lingua, Qwen, qlora, alpaca-lora, DeepSpeedExamples, MiniGPT-4, Bunny and trlx at HEAD, read as
a new user would. Each test is one false claim of those reports, made from the shape of the real code, with a control
that keeps the rule honest."""

from __future__ import annotations

from .claims import audit as _audit

# --- scale --------------------------------------------------------------------------------------------------------------

_NEMO_CFG = ("trainer:\n  num_nodes: {nodes}\nmodel:\n  encoder_seq_length: 2048\n  num_layers: {layers}\n  hidden_size: {hidden}\n"
             "  ffn_hidden_size: {ffn}\n  num_attention_heads: 32\n  tokenizer:\n    library: sentencepiece\n"
             "    model: 2053796188904e679f7e2754a2a1f280_mt_nlg_plus_multilingual_ja_zh_the_stack_frac_015_256k.model\n")
_TOY = ("import trlx\nfrom transformers import GPT2Config\n\n\ndef main():\n"
        "    trlx.train(model_path=GPT2Config(n_layer=6, n_embd=144, vocab_size=23), samples=walks, rewards=rewards)\n")


def test_a_toy_model_beside_real_recipes_does_not_size_the_project():
    # trlx: examples/randomwalks builds a 1M-parameter GPT-2 (vocabulary 23) for a synthetic task; its NeMo configs train
    # 2B-65B models. The report said "Estimated scale: 1M" and step zero "launch-bound: a small model".
    files = {"examples/randomwalks/ilql_randomwalks.py": _TOY,
             "trlx/__init__.py": "from .trainer import train\n",
             "trlx/trainer.py": "def train(model_path, samples, rewards):\n    loss = step(model_path)\n    loss.backward()\n",
             "scripts/run_examples.sh": "python examples/randomwalks/ilql_randomwalks.py\npython examples/hh/ppo_hh.py\n",
             "configs/nemo_configs/megatron_2b.yaml": _NEMO_CFG.format(nodes=1, layers=24, hidden=2048, ffn=5440),
             "configs/nemo_configs/megatron_20b.yaml": _NEMO_CFG.format(nodes=4, layers=44, hidden=6144, ffn=16384)}
    p = _audit(files).project
    assert p.params_billions is None or p.params_billions > 1
    assert "1M" not in (p.estimated_params or "") and not (p.notes.get("params_range") or "").startswith("1M")
    # a tokenizer's sentencepiece file is not a model name
    assert not any(n.endswith(".model") for n in p.model_names)


def test_control_a_small_real_model_still_sizes_the_project():
    cfg = ("import torch\nfrom transformers import GPT2Config, GPT2LMHeadModel\n\n\ndef main():\n"
           "    model = GPT2LMHeadModel(GPT2Config(n_layer=6, n_embd=384, n_head=6, vocab_size=50304))\n"
           "    loss = model(x, labels=x).loss\n    loss.backward()\n")
    p = _audit({"train.py": cfg}).project
    assert p.params_billions is not None and 0.01 < p.params_billions < 0.1


# --- inference ------------------------------------------------------------------------------------------------------------

_GENERATE = (  # alpaca-lora generate.py: the fine-tuned LoRA model behind a Gradio UI
    "import fire\nimport gradio as gr\nimport torch\nfrom peft import PeftModel\nfrom transformers import LlamaForCausalLM\n\n\n"
    "def main(load_8bit: bool = False, base_model: str = '', lora_weights: str = 'tloen/alpaca-lora-7b'):\n"
    "    model = LlamaForCausalLM.from_pretrained(\n        base_model,\n        load_in_8bit=load_8bit,\n"
    "        torch_dtype=torch.float16,\n        device_map='auto',\n    )\n"
    "    model = PeftModel.from_pretrained(model, lora_weights, torch_dtype=torch.float16)\n\n"
    "    def evaluate(instruction, max_new_tokens=128):\n"
    "        with torch.no_grad():\n            out = model.generate(input_ids=input_ids, max_new_tokens=max_new_tokens)\n"
    "        return out\n\n    gr.Interface(fn=evaluate, inputs=[], outputs=[]).queue().launch()\n\n\n"
    "if __name__ == '__main__':\n    fire.Fire(main)\n"
)
_FINETUNE = ("import transformers\nfrom peft import get_peft_model\n\n\ndef train(base_model: str = ''):\n"
             "    model = get_peft_model(model, config)\n"
             "    transformers.Trainer(model=model, args=transformers.TrainingArguments(fp16=True, output_dir='o')).train()\n")


def test_a_gradio_script_that_generates_with_the_model_is_the_projects_inference():
    a = _audit({"finetune.py": _FINETUNE, "generate.py": _GENERATE})
    assert a.project.does_inference and a.result("J1").status.value != "n/a"
    j4 = a.result("J4")
    assert j4.status.value == "unused" and "load_in_8bit=load_8bit at generate.py:11" in j4.detail


def test_control_a_gradio_ui_that_only_calls_a_server_is_still_a_side_app():
    ui = ("import gradio as gr\nimport requests\n\n\ndef ask(q):\n    return requests.post('http://localhost:8000', json={'q': q}).json()\n\n\n"
          "gr.Interface(fn=ask, inputs='text', outputs='text').launch()\n")
    a = _audit({"finetune.py": _FINETUNE, "web_ui.py": ui})
    assert a.roles.role("web_ui.py") == "side" and not a.project.does_inference


def test_a_launch_passing_its_own_argument_leaves_the_options_default_as_the_model():
    # Qwen finetune/finetune_ds.sh: MODEL="Qwen/Qwen-7B" and ``-m|--model) MODEL=$1`` in its option loop; finetune.py's
    # ``model_name_or_path`` defaults to Qwen/Qwen-7B. The report said "Estimated scale: unknown".
    train = ("from dataclasses import dataclass, field\nfrom typing import Optional\nimport transformers\n\n\n@dataclass\n"
             "class ModelArguments:\n    model_name_or_path: Optional[str] = field(default='Qwen/Qwen-7B')\n\n\n"
             "def train():\n    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))\n"
             "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
             "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)\n"
             "    transformers.Trainer(model=model, args=training_args).train()\n")
    launch = ('MODEL="Qwen/Qwen-7B" # Set the path if you do not want to load from huggingface directly\n'
              'while [[ "$1" != "" ]]; do\n    case $1 in\n        -m | --model )\n            shift\n            MODEL=$1\n'
              '            ;;\n    esac\n    shift\ndone\n'
              'torchrun --nproc_per_node 8 finetune.py \\\n    --model_name_or_path $MODEL \\\n    --bf16 True \\\n    --output_dir out\n')
    p = _audit({"finetune.py": train, "finetune/finetune_ds.sh": launch}).project
    assert p.params_billions == 7.0


def test_a_trainer_script_that_splits_layers_over_gpus_is_not_said_to_fall_back_to_dataparallel():
    # alpaca-lora finetune.py:227-230 and qlora.py:341-342 keep the Trainer from nn.DataParallel on purpose
    train = ("import torch\nimport transformers\n\n\ndef train():\n"
             "    model = transformers.AutoModelForCausalLM.from_pretrained('huggyllama/llama-7b', device_map='auto')\n"
             "    if not ddp and torch.cuda.device_count() > 1:\n        model.is_parallelizable = True\n        model.model_parallel = True\n"
             "    trainer = transformers.Trainer(model=model, args=transformers.TrainingArguments(output_dir='o'))\n"
             "    trainer.train()\n")
    a1 = _audit({"finetune.py": train, "run.sh": "python finetune.py --base_model x\n"}).result("A1")
    assert "DataParallel" not in a1.detail and "model.is_parallelizable = True at finetune.py:8" in a1.detail


def test_packing_advice_for_a_plain_trainer_script_uses_transformers_own_collator():
    from reports.advice import build_plan

    rec = next(r for r in build_plan(_audit({"finetune.py": _FINETUNE})).recommendations if r.check == "F7")
    assert "DataCollatorWithFlattening" in rec.text and "SFTConfig" not in rec.text
    # control: a TRL project keeps TRL's packing flag
    trl = ("from trl import SFTConfig, SFTTrainer\n\n\ndef main():\n"
           "    SFTTrainer(model='Qwen/Qwen2-7B', args=SFTConfig(output_dir='o')).train()\n")
    rec = next(r for r in build_plan(_audit({"sft.py": trl})).recommendations if r.check == "F7")
    assert "SFTConfig(packing=True)" in rec.text


def test_small_file_advice_for_text_only_training_names_no_images():
    from reports.advice import build_plan

    rec = next(r for r in build_plan(_audit({"finetune.py": _FINETUNE})).recommendations if r.check == "F4")
    assert "image" not in rec.text and "save_to_disk" in rec.text


def test_zero3_overlap_reason_counts_the_configs_and_bucket_view_is_no_bucket_tuning():
    # trlx: zero2-bf16.yaml (the Slurm default) and zero2-fp16.yaml beside one ZeRO-3 config; megatron_20b.yaml sets
    # gradient_as_bucket_view, a memory option
    def z(st):
        return f'{{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {{"stage": {st}}}, "bf16": {{"enabled": true}}}}'
    files = {"configs/ds_z2_bf16.json": z(2), "configs/ds_z2_fp16.json": z(2), "configs/ds_z3.json": z(3),
             "configs/nemo.yaml": "model:\n  gradient_as_bucket_view: true\n",
             "train.py": "import deepspeed\nengine, *_ = deepspeed.initialize(model=model, config=args.ds)\nengine.backward(loss)\n"}
    e2 = _audit(files).result("E2")
    assert "ZeRO-3 in 1 of 3 DeepSpeed configs" in e2.detail and "tuned DDP buckets" not in e2.detail
    assert "DDP (gradient_as_bucket_view) overlaps" in e2.detail


def test_a_lavis_style_recipe_with_an_image_processor_is_multimodal():
    # MiniGPT-4 train_configs/minigpt4_stage1_pretrain.yaml: its model is built in code from ``vit_model="eva_clip_g"``
    # defaults; the recipe names the image processor. The report said "Model type: LLM" and H was n/a.
    cfg = ("model:\n  arch: minigpt4\n  model_type: pretrain_vicuna0\n\ndatasets:\n  laion:\n    batch_size: 64\n"
           "    vis_processor:\n      train:\n        name: \"blip2_image_train\"\n        image_size: 224\n"
           "run:\n  task: image_text_pretrain\n  init_lr: 1e-4\n  max_epoch: 4\n")
    train = ("import torch\nimport minigpt4.tasks as tasks\n\n\ndef main():\n    task = tasks.setup_task(cfg)\n"
             "    model = task.build_model(cfg)\n    loss = model(samples)['loss']\n    loss.backward()\n")
    p = _audit({"train_configs/minigpt4_stage1_pretrain.yaml": cfg, "train.py": train}).project
    assert p.multimodal and p.model_type == "MLLM"


def test_a_debug_recipe_beside_real_ones_does_not_size_the_project():
    # lingua: the README's quick start trains apps/main/configs/debug.yaml (101M); llama_1B.yaml and llama_7B.yaml are the
    # models. The report said "Estimated scale: 101M".
    cfg = "name: {name}\nsteps: 1000\nmodel:\n  dim: {dim}\n  n_layers: {layers}\n  n_heads: 16\n  vocab_size: 128256\n"
    train = ("import torch\nfrom apps.main.transformer import LMTransformer\n\n\ndef train(args):\n"
             "    model = LMTransformer(args.model)\n    loss = model(x, y)\n    loss.backward()\n")
    files = {"apps/main/train.py": train,
             "apps/main/configs/debug.yaml": cfg.format(name="debug", dim=1024, layers=8),
             "apps/main/configs/llama_1B.yaml": cfg.format(name="llama_1B", dim=2048, layers=25),
             "apps/main/configs/llama_7B.yaml": cfg.format(name="llama_7B", dim=4096, layers=32),
             "README.md": "```bash\ntorchrun --nproc-per-node 8 -m apps.main.train config=apps/main/configs/debug.yaml\n```\n"}
    p = _audit(files).project
    assert p.params_billions is None or p.params_billions > 1
