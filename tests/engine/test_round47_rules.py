"""Round 47 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.model import Status

from .claims import audit as _audit
from .claims import check as _check


def _recs(a):
    from reports.advice import build_plan
    return {r.check: r for r in build_plan(a).recommendations}


_LOOP = (
    "import torch\nfrom transformers import AutoModelForCausalLM\n\n\n"
    "def main():\n    model = AutoModelForCausalLM.from_pretrained('gpt2')\n"
    "    opt = torch.optim.AdamW(model.parameters())\n"
    "    loader = torch.utils.data.DataLoader(list(range(8)), batch_size=4, num_workers=4)\n"
    "    for batch in loader:\n        loss = model(batch).loss\n        loss.backward()\n        opt.step()\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


# --- microsoft/LMOps: "Needs PyTorch 2.1+ (corag/requirements.txt:1 pins torch==2.4.0: raise it first)" -------------------

def test_the_pytorch_pin_of_one_monorepo_project_is_no_cap_of_another():
    files = {"dpkd/train.py": _LOOP, "dpkd/run.sh": "torchrun --nproc_per_node 8 dpkd/train.py\n",
             "dpkd/requirements.txt": "torch==1.13.1\n", "corag/requirements.txt": "torch==2.4.0\n"}
    a = _audit(files)
    recs = _recs(a)
    assert _check(a, "D2").status is Status.UNUSED
    assert "D2" in recs and not recs["D2"].text.startswith("Needs PyTorch")
    # control: one folder's declarations cap it together, and the one that caps it is cited
    del files["corag/requirements.txt"]
    recs = _recs(_audit({**files, "dpkd/environment.yml":
                         "dependencies:\n  - pytorch=1.12.1\n", "dpkd/requirements.txt": "torch>=1.10\n"}))
    assert recs["D2"].text.startswith("Needs PyTorch 2.0+ (dpkd/environment.yml:2 pins `pytorch==1.12.1`"), recs["D2"].text


# --- baaivision/Emu: an inference release (no training code) audited as a training project -------------------------------

_EMU_MODEL = (
    "import torch\nfrom transformers import LlamaConfig, LlamaForCausalLM\n\n\nclass Emu(torch.nn.Module):\n"
    "    def __init__(self, config):\n        super().__init__()\n        self.lm = LlamaForCausalLM(config)\n\n"
    "    @classmethod\n    def from_pretrained(cls, path, **kwargs):\n"
    "        config = LlamaConfig.from_pretrained(path)\n        model = LlamaForCausalLM.from_config(config)\n"
    "        model.load_state_dict(torch.load(f'{path}/pytorch_model.bin'))\n        return model\n")
_EMU_PIPELINE = (
    "import torch\n\n\nclass EmuGenerationPipeline(torch.nn.Module):\n"
    "    @torch.no_grad()\n    def forward(self, latents, cond):\n"
    "        for t in self.scheduler.timesteps:\n            noise_pred = self.unet(latents, t, cond).sample\n"
    "            latents = self.scheduler.step(noise_pred, t, latents).prev_sample\n        return latents\n")
_EMU_INFER = (
    "import torch\nfrom peft import LoraConfig, get_peft_model\nfrom models.modeling_emu import Emu\n\n\n"
    "def main():\n    model = Emu.from_pretrained('BAAI/Emu')\n"
    "    model.lm = get_peft_model(model.lm, LoraConfig(r=16))\n    model.eval()\n"
    "    print(model.lm.generate(torch.tensor([[1, 2, 3]]), max_new_tokens=64))\n\n\nif __name__ == '__main__':\n    main()\n")


def test_a_release_that_builds_and_loads_models_and_trains_nothing_is_inference_only():
    files = {"models/modeling_emu.py": _EMU_MODEL, "models/pipeline.py": _EMU_PIPELINE, "inference.py": _EMU_INFER}
    a = _audit(files)
    assert not a.project.does_training and a.project.does_inference
    assert _check(a, "A1").status is Status.NA and _check(a, "F1").status is Status.NA
    # control: a step that trains the model makes it a fine-tuning project
    b = _audit({**files, "train.py": _EMU_INFER.replace("    model.eval()\n", "    model.lm(torch.tensor([[1]])).loss.backward()\n")})
    assert b.project.does_training


# --- mlfoundations/open_clip: "the model is compiled" from a task's ``compile`` method that only ``--torchcompile`` calls ---

_OC_TASK = (
    "import re\nimport torch\n\nPATTERN = re.compile(r'\\\\s+')\n\n\nclass TrainingTask(torch.nn.Module):\n"
    "    def __init__(self, model):\n        super().__init__()\n        self.trainable_module = model\n\n"
    "    def compile(self, target='model', **kwargs):\n"
    "        if target == 'model':\n            self.trainable_module = torch.compile(self.trainable_module, **kwargs)\n"
    "        return self\n")
_OC_MAIN = (
    "import argparse\nimport torch\nfrom open_clip.task import TrainingTask\n\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--torchcompile', action='store_true', default=False)\n    args = parser.parse_args()\n"
    "    task = TrainingTask(torch.nn.Linear(8, 8))\n    if args.torchcompile:\n        task.compile()\n"
    "    opt = torch.optim.AdamW(task.parameters())\n"
    "    for x in torch.utils.data.DataLoader(list(range(8)), num_workers=4):\n"
    "        task.trainable_module(x).sum().backward()\n        opt.step()\n\n\nif __name__ == '__main__':\n    main()\n")


def test_a_method_called_only_behind_an_off_flag_is_off_beside_a_library_function_of_its_name():
    files = {"src/open_clip/task.py": _OC_TASK, "src/open_clip/__init__.py": "", "src/main.py": _OC_MAIN,
             "scripts/train.sh": "torchrun --nproc_per_node 8 src/main.py\n"}
    assert _check(_audit(files), "D2").status is Status.UNUSED
    # control: a launch that passes the flag runs the method
    b = _audit({**files, "scripts/train.sh": "torchrun --nproc_per_node 8 src/main.py --torchcompile\n"})
    assert _check(b, "D2").status is Status.USED


# --- NVIDIA/NeMo: "only NCCL diagnostics set (no tuning)" beside the executor's environment dicts --------------------------

_NEMO_EXECUTOR = (
    "import nemo_run as run\n\nPERF_ENV_VARS = {\n    \"TORCH_NCCL_AVOID_RECORD_STREAMS\": \"1\",\n"
    "    \"NCCL_NVLS_ENABLE\": \"0\",\n}\n\n\ndef slurm_executor(nodes: int, gpu: str):\n"
    "    if gpu == 'gb200':\n        PERF_ENV_VARS[\"NCCL_NET_GDR_LEVEL\"] = \"PHB\"\n"
    "    executor = run.SlurmExecutor(nodes=nodes, ntasks_per_node=8, env_vars=PERF_ENV_VARS)\n"
    "    executor.env_vars[\"NCCL_MIN_CTAS\"] = \"32\"\n    return executor\n")


def test_a_launch_executors_environment_dicts_set_nccl():
    files = {"scripts/executors.py": _NEMO_EXECUTOR, "train.py": _LOOP, "run.sh": "NCCL_DEBUG=INFO torchrun --nnodes 4 --nproc_per_node 8 train.py\n"}
    a = _audit(files)
    assert {e.name for e in a.facts.envs("NCCL_")} >= {"NCCL_NVLS_ENABLE", "NCCL_NET_GDR_LEVEL", "NCCL_MIN_CTAS"}
    assert _check(a, "E4").status is Status.USED and _check(a, "E1").status is Status.USED
    # control: the same keys in a dict that is no environment (a table of benchmark results) set nothing
    b = _audit({**files, "scripts/executors.py": _NEMO_EXECUTOR.replace("PERF_ENV_VARS", "PERF_RESULTS").replace("env_vars", "tags")})
    assert not b.facts.envs("NCCL_NET") and not b.facts.envs("NCCL_MIN")


def test_nccl_buffer_registration_is_a_memory_setting_not_a_tuning():
    # megatron-bridge ``environment_utils.py``: ``"NCCL_GRAPH_REGISTER": 0`` beside the allocator's expandable segments
    env = "ENV_VARS = {\n    \"NCCL_GRAPH_REGISTER\": 0,\n    \"PYTORCH_CUDA_ALLOC_CONF\": \"expandable_segments:True\",\n}\n"
    r = _check(_audit({"recipes/env.py": env, "train.py": _LOOP, "run.sh": "torchrun --nproc_per_node 8 train.py\n"}), "E4")
    assert r.status is not Status.USED and "NCCL_GRAPH_REGISTER" in (r.detail or ""), r.detail


# --- NVIDIA/NeMo: "checkpoints saved every step" from the preemption callback's save on SIGTERM -----------------------------

_NEMO_PREEMPT = (
    "import signal\nimport sys\nimport torch\nfrom lightning.pytorch.callbacks import Callback\n\n\n"
    "class PreemptionCallback(Callback):\n    def __init__(self):\n        self.interrupted = False\n"
    "        signal.signal(signal.SIGTERM, self._handler)\n\n    def _handler(self, signum, frame):\n"
    "        self.interrupted = True\n\n    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):\n"
    "        if self.interrupted:\n            trainer.save_checkpoint('last.ckpt')\n            sys.exit(0)\n")
_NEMO_TRAIN = (
    "import lightning.pytorch as pl\nfrom lightning.pytorch.callbacks import ModelCheckpoint\n"
    "from callbacks.preemption import PreemptionCallback\nfrom model import GPT\n\n\n"
    "def main():\n    trainer = pl.Trainer(max_steps=1000, callbacks=[PreemptionCallback(), ModelCheckpoint(every_n_train_steps=500)])\n"
    "    trainer.fit(GPT())\n\n\nif __name__ == '__main__':\n    main()\n")
_NEMO_MODEL = (
    "import torch\nimport lightning.pytorch as pl\n\n\nclass GPT(pl.LightningModule):\n"
    "    def training_step(self, batch, batch_idx):\n        return self(batch).loss\n")


def test_a_save_when_the_job_is_preempted_is_no_per_step_save():
    files = {"callbacks/preemption.py": _NEMO_PREEMPT, "train.py": _NEMO_TRAIN, "model.py": _NEMO_MODEL,
             "run.sh": "torchrun --nproc_per_node 8 train.py\n"}
    r = _check(_audit(files), "I3")
    assert r.status is Status.USED and "every step" not in (r.detail or ""), r.detail
    # control: the same save behind a flag that is no interruption (a debug switch that is on) runs every step
    b = _check(_audit({**files, "callbacks/preemption.py": _NEMO_PREEMPT.replace("self.interrupted", "self.verbose").replace(
        "self.verbose = False", "self.verbose = True")}), "I3")
    assert b.status is Status.UNUSED and "every step" in (b.detail or ""), b.detail



# --- hpcaitech/ColossalAI: "checkpoints saved every step" when the interval flag is widened by the epoch's end -------------

_CAI_TRAIN = (
    "import argparse\nimport torch\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--save_interval', type=int, default=1000)\n"
    "    parser.add_argument('--skip_save_each_epoch', action='store_true')\n    args = parser.parse_args()\n"
    "    model = torch.nn.Linear(8, 8)\n    opt = torch.optim.AdamW(model.parameters())\n"
    "    loader = torch.utils.data.DataLoader(list(range(64)), batch_size=8, num_workers=4)\n"
    "    for step, batch in enumerate(loader):\n        model(batch).sum().backward()\n        opt.step()\n"
    "        save_model_condition = (\n            args.save_interval > 0 and (step + 1) % args.save_interval == 0\n        )\n"
    "        if not args.skip_save_each_epoch:\n"
    "            save_model_condition = save_model_condition or (step + 1) == len(loader)\n"
    "        if save_model_condition:\n            torch.save(model.state_dict(), f'ckpt-{step}.pt')\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def test_an_interval_flag_widened_by_another_condition_is_still_the_interval():
    files = {"train.py": _CAI_TRAIN, "train.sh": "torchrun --nproc_per_node 8 train.py --save_interval 1000\n"}
    r = _check(_audit(files), "I3")
    assert r.status is Status.USED and "every step" not in (r.detail or ""), r.detail
    # control: a flag that was no interval test before it was widened saves every step
    b = _check(_audit({**files, "train.py": _CAI_TRAIN.replace("args.save_interval > 0 and (step + 1) % args.save_interval == 0",
                                                               "step >= 0")}), "I3")
    assert b.status is Status.UNUSED and "every step" in (b.detail or ""), b.detail


# --- hpcaitech/ColossalAI and BELLE: the hostfile a launch names is shipped, and lists its nodes ---------------------------

def test_a_shipped_hostfile_gives_the_launchs_nodes():
    files = {"train/src/train.py": _LOOP, "train/configs/hostfile": "node_ip_0 slots=8\nnode_ip_1 slots=8\n",
             "train/scripts/multinode_run.sh": "deepspeed --hostfile configs/hostfile src/train.py --deepspeed ds.json\n"}
    a = _audit(files)
    assert a.project.multi_node and a.project.num_nodes == 2
    # ColossalChat: ``--hostfile ./hostfile`` next to the script, holding ``localhost``: one node
    b = _audit({"train.py": _LOOP, "hostfile": "localhost\n",
                "train_sft.sh": "colossalai run --nproc_per_node 8 --hostfile ./hostfile train.py\n"})
    assert not b.project.multi_node
    # control: a hostfile the repository does not ship leaves the count to the job (several nodes, how many unknown)
    c = _audit({k: v for k, v in files.items() if k != "train/configs/hostfile"})
    assert c.project.multi_node and c.project.num_nodes is None


# --- microsoft/LMOps: a whole checkout of transformers in a project's folder was 1,243 files of its training path -----------

def _lmops(sdist: bool = False) -> dict[str, str]:
    lib = "dpkd/transformers"
    files = {
        f"{lib}/setup.py": "from setuptools import setup\nsetup(name='transformers', version='4.36.0')\n",
        f"{lib}/src/transformers/__init__.py": ("__version__ = '4.36.0'\nfrom .optimization import get_constant_schedule\n"
                                                "from .models import bert, llama\n"),
        f"{lib}/src/transformers/optimization.py": "def get_constant_schedule(optimizer):\n    return optimizer\n",
        f"{lib}/src/transformers/models/__init__.py": "from . import bert, llama\n",
        f"{lib}/src/transformers/models/bert/__init__.py": "from .configuration_bert import BertConfig\n",
        f"{lib}/src/transformers/models/bert/configuration_bert.py": "class BertConfig:\n    vocab_size = 30522\n",
        f"{lib}/src/transformers/models/llama/__init__.py": "",
        "dpkd/main.py": ("import torch\nimport transformers\nfrom transformers import get_constant_schedule\n\n\ndef main():\n"
                         "    transformers.logging.set_verbosity_info()\n"
                         "    model = torch.nn.Linear(8, 8)\n    opt = torch.optim.AdamW(model.parameters())\n"
                         "    sched = get_constant_schedule(opt)\n    model(torch.ones(8)).sum().backward()\n    opt.step()\n"
                         "    sched.step()\n\n\nif __name__ == '__main__':\n    main()\n"),
        "dpkd/scripts/train.sh": "torchrun --nproc_per_node 8 dpkd/main.py\n",
    }
    if sdist:  # the library's own sdist: one folder holding its packaging and everything else
        files = {k.replace("dpkd/transformers/", "transformers-4.36.0/"): v for k, v in files.items() if k.startswith(lib)}
    return files


def test_a_checkout_of_a_library_in_a_project_folder_is_a_copy_of_it():
    a = _audit(_lmops())
    assert a.roles.library_copies == ["dpkd/transformers/src/transformers"]
    assert a.roles.by_path["dpkd/main.py"] == "training"
    # the module the project imports is the library's too, read as if installed (round 57), as is every model of its __init__
    assert a.roles.by_path["dpkd/transformers/src/transformers/optimization.py"] == "vendored"
    assert a.roles.by_path["dpkd/transformers/src/transformers/models/bert/configuration_bert.py"] != "training"
    # control: the library's own sdist is the project itself, not a copy
    assert _audit(_lmops(sdist=True)).roles.library_copies == []


# --- NVIDIA/NeMo: "bpe" and "GPT2BPETokenizer" listed as the model names -------------------------------------------------

_NEMO_TOK = (
    "from nemo.collections.nlp.modules.common.tokenizer_utils import get_nmt_tokenizer\n\n\n"
    "class MegatronBaseModel:\n    def _build_tokenizer(self):\n"
    "        self.tokenizer = get_nmt_tokenizer(library=self._cfg.tokenizer.library, model_name=self._cfg.tokenizer.type)\n")


def test_a_tokenizer_sections_type_is_no_model_name():
    cfg = ("trainer:\n  devices: 8\n  precision: bf16\nmodel:\n  model_name: meta-llama/Llama-2-7b-hf\n"
           "  tokenizer:\n    library: megatron\n    type: GPT2BPETokenizer\n")
    files = {"nemo/models/base.py": _NEMO_TOK, "examples/conf/megatron_gpt_config.yaml": cfg, "train.py": _LOOP,
             "run.sh": "torchrun --nproc_per_node 8 train.py --config-name megatron_gpt_config\n"}
    names = _audit(files).project.model_names
    assert "GPT2BPETokenizer" not in names and "meta-llama/Llama-2-7b-hf" in names, names
    # control: the same value as the section's model setting names a model
    b = _audit({**files, "examples/conf/megatron_gpt_config.yaml": cfg.replace("  tokenizer:\n    library: megatron\n    type: GPT2BPETokenizer\n", "")
                + "  pretrained: EleutherAI/gpt-neox-20b\n", "nemo/models/base.py": _NEMO_TOK.replace("tokenizer.type", "pretrained")})
    assert "EleutherAI/gpt-neox-20b" in b.project.model_names, b.project.model_names


# --- mlfoundations/open_clip: a switch computed from the run's options (compile_step) read as always on -------------------

_OC_TRAIN = (
    "import argparse\nimport torch\n\n\ndef train_one_epoch(model, opt, loader, args):\n"
    "    compile_step = (\n        getattr(args, 'torchcompile', False)\n"
    "        and getattr(args, 'torchcompile_strategy', 'task') == 'step'\n    )\n"
    "    step = lambda b: model(b).sum().backward()\n"
    "    if compile_step:\n        step = torch.compile(step)\n"
    "    for batch in loader:\n        step(batch)\n        opt.step()\n\n\n"
    "def main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--torchcompile', action='store_true', default=False)\n"
    "    parser.add_argument('--torchcompile-strategy', default='task')\n    args = parser.parse_args()\n"
    "    model = torch.nn.Linear(8, 8)\n"
    "    train_one_epoch(model, torch.optim.AdamW(model.parameters()), torch.utils.data.DataLoader(list(range(8)), num_workers=4), args)\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def test_a_switch_computed_from_off_options_is_off():
    files = {"src/train.py": _OC_TRAIN, "scripts/run.sh": "torchrun --nproc_per_node 8 src/train.py\n"}
    assert _check(_audit(files), "D2").status is Status.UNUSED
    # control: a launch that turns the option on compiles the step
    b = _audit({**files, "scripts/run.sh": "torchrun --nproc_per_node 8 src/train.py --torchcompile --torchcompile-strategy step\n"})
    assert _check(b, "D2").status is Status.USED


# --- OpenLMLab/collie: "no ZeRO configuration found" beside ``config.ds_config = {... "zero_optimization": {"stage": 3}}`` ---

_COLLIE_EXAMPLE = (
    "import torch\nfrom mylib.config import CollieConfig\nfrom mylib.trainer import Trainer\n\n"
    "config = CollieConfig.from_pretrained('decapoda-research/llama-7b-hf')\nconfig.dp_size = 8\n"
    "config.ds_config = {\n    \"fp16\": {\"enabled\": True},\n    \"zero_optimization\": {\n        \"stage\": 3,\n"
    "        \"offload_optimizer\": {\"device\": \"cpu\"},\n    },\n}\n"
    "trainer = Trainer(model=torch.nn.Linear(8, 8), config=config)\ntrainer.train()\n")
_COLLIE_CONFIG = (
    "from dataclasses import dataclass, field\n\n\n@dataclass\nclass CollieConfig:\n    dp_size: int = 1\n"
    "    ds_config: dict = field(default_factory=dict)\n\n    @classmethod\n    def from_pretrained(cls, name):\n        return cls()\n")
_COLLIE_TRAINER = (
    "import deepspeed\n\n\nclass Trainer:\n    def __init__(self, model, config):\n"
    "        self.engine, self.optimizer, _, _ = deepspeed.initialize(model=model, config=config.ds_config)\n\n"
    "    def train(self):\n        for batch in range(10):\n            loss = self.engine(batch)\n"
    "            self.engine.backward(loss)\n            self.engine.step()\n")


def test_a_deepspeed_config_set_on_a_config_object_is_read():
    files = {"examples/finetune_llama.py": _COLLIE_EXAMPLE, "mylib/config.py": _COLLIE_CONFIG, "mylib/trainer.py": _COLLIE_TRAINER,
             "mylib/__init__.py": "", "examples/run.sh": "torchrun --nproc_per_node 8 examples/finetune_llama.py\n"}
    a = _audit(files)
    assert _check(a, "A3").status is Status.USED and _check(a, "C4").status is Status.USED, _check(a, "A3").detail
    # control: a dict of another kind set on the object (its own "stage" of a curriculum) is no DeepSpeed config
    b = _audit({**files, "examples/finetune_llama.py": _COLLIE_EXAMPLE.replace("\"zero_optimization\"", "\"curriculum\"")})
    assert _check(b, "A3").status is not Status.USED, _check(b, "A3").detail
