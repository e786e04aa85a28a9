"""Round 43 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.model import Status

from .claims import audit as _audit
from .claims import check as _check

# --- eric-mitchell/direct-preference-optimization: a README whose runs are indented code blocks ---------------------------

_DPO_TRAINERS = (
    "import torch\nimport torch.nn.functional as F\nimport wandb\n\n\n"
    "def preference_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps, beta):\n"
    "    logits = (policy_chosen_logps - policy_rejected_logps) - (reference_chosen_logps - reference_rejected_logps)\n"
    "    return -F.logsigmoid(beta * logits)\n\n\n"
    "class BasicTrainer:\n    def __init__(self, policy, config, reference_model=None):\n        self.policy = policy\n"
    "        self.config = config\n        self.reference_model = reference_model\n\n"
    "    def train(self, batches):\n"
    "        self.optimizer = torch.optim.RMSprop(self.policy.parameters(), lr=self.config.lr)\n"
    "        for batch in batches:\n"
    "            for microbatch_idx in range(self.config.gradient_accumulation_steps):\n"
    "                loss = self.get_batch_metrics(batch[microbatch_idx], self.config.loss)\n"
    "                (loss / self.config.gradient_accumulation_steps).backward()\n"
    "            self.optimizer.step()\n            self.optimizer.zero_grad()\n"
)
_DPO_TRAIN = (
    "import hydra\nfrom omegaconf import DictConfig\nimport transformers\n\nimport trainers\n\n\n"
    "@hydra.main(version_base=None, config_path='config', config_name='config')\n"
    "def main(config: DictConfig):\n"
    "    policy = transformers.AutoModelForCausalLM.from_pretrained(config.model.name_or_path)\n"
    "    trainer = trainers.BasicTrainer(policy, config)\n    trainer.train([])\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)
_DPO_CONFIG = ("seed: 0\nbatch_size: 4\nlr: 5e-7\ngradient_accumulation_steps: 1\nwarmup_steps: 150\n\n"
               "defaults:\n- _self_\n- model: blank_model\n- loss: sft # which loss function, either sft or dpo\n")
_DPO_README = (
    "# DPO: Direct Preference Optimization\n\n## Running SFT\n\nRun SFT for Pythia 6.9B on Anthropic-HH data with batch size 64:\n\n"
    "    python -u train.py model=pythia69 datasets=[hh] loss=sft exp_name=anthropic_dpo_pythia69 gradient_accumulation_steps=2 "
    "batch_size=64 eval_batch_size=32 trainer=FSDPTrainer sample_during_eval=false\n\n"
    "## Running DPO\n\nTo run DPO, use the same command as SFT, but pass `loss=dpo`:\n\n"
    "    python -u train.py model=pythia69 datasets=[hh] loss=dpo loss.beta=0.1 exp_name=anthropic_dpo_pythia69 "
    "gradient_accumulation_steps=2 batch_size=32 eval_batch_size=32 trainer=FSDPTrainer sample_during_eval=false\n"
)


def _dpo(readme: str | None = _DPO_README) -> dict[str, str]:
    files = {"trainers.py": _DPO_TRAINERS, "train.py": _DPO_TRAIN, "config/config.yaml": _DPO_CONFIG,
             "config/loss/sft.yaml": "name: sft\n", "config/loss/dpo.yaml": "name: dpo\nbeta: ???\nreference_free: false\n",
             "config/model/blank_model.yaml": "name_or_path: ???\npolicy_dtype: float32\n"}
    if readme is not None:
        files["README.md"] = readme
    return files


def test_runs_documented_in_indented_code_blocks_are_the_documented_runs() -> None:
    """The README documents its SFT and DPO runs only in indented (four-space) code blocks, and has no fenced block: its
    DPO run makes the project an alignment project (G6 applies) and its accumulation of 2 is the run's (C5)."""
    a = _audit(_dpo())
    assert _check(a, "G6").status != Status.NA, _check(a, "G6").detail
    c5 = _check(a, "C5")
    assert c5.status == Status.USED and any(e.path == "README.md" for e in c5.evidence), c5.detail


def test_without_the_documented_runs_the_preference_project_is_read_from_its_code_alone() -> None:
    a = _audit(_dpo(readme=None))
    assert _check(a, "G6").status == Status.NA
    assert _check(a, "C5").status == Status.UNUSED  # gradient_accumulation_steps: 1 in the config
    # the same commands as a paragraph of prose are not a code block
    prose = _DPO_README.replace("\n    python", "\npython")
    assert _check(_audit(_dpo(readme=prose)), "C5").status == Status.UNUSED


# --- PRIME-RL/PRIME: its training is a verl fork in training/ with its own setup.py, run by python -m ----------------------

_MAIN_PPO = (
    "import hydra\nimport ray\n\nfrom verl.trainer.ppo.ray_trainer import RayPPOTrainer\n\n\n"
    "@hydra.main(config_path='config', config_name='ppo_trainer', version_base=None)\n"
    "def main(config):\n    ray.init()\n    if config.actor_rollout_ref.actor.strategy == 'fsdp':\n"
    "        from verl.workers.fsdp_workers import ActorRolloutRefWorker\n    else:\n"
    "        from verl.workers.megatron_workers import ActorRolloutRefWorker\n"
    "    trainer = RayPPOTrainer(config=config, worker=ActorRolloutRefWorker)\n    trainer.fit()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)
_RAY_TRAINER = (
    "class RayPPOTrainer:\n    def __init__(self, config, worker):\n        self.config = config\n        self.worker = worker\n\n"
    "    def fit(self):\n        for batch in self.config.data:\n            self.worker.update_actor(batch)\n"
)
_FSDP_WORKERS = (
    "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy, MixedPrecision\n"
    "from transformers import AutoModelForCausalLM\n\n\n"
    "class ActorRolloutRefWorker:\n    def __init__(self, config):\n"
    "        module = AutoModelForCausalLM.from_pretrained(config.model.path, attn_implementation='flash_attention_2')\n"
    "        module.gradient_checkpointing_enable()\n"
    "        mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.float32)\n"
    "        self.actor = FSDP(module, sharding_strategy=ShardingStrategy.FULL_SHARD, mixed_precision=mp)\n"
    "        self.optimizer = torch.optim.AdamW(self.actor.parameters(), lr=config.optim.lr)\n\n"
    "    def update_actor(self, batch):\n        loss = self.actor(**batch).loss\n        loss.backward()\n"
    "        self.optimizer.step()\n        self.optimizer.zero_grad()\n"
)
_MEGATRON_WORKERS = (
    "from megatron.core import parallel_state as mpu\n\n\nclass ActorRolloutRefWorker:\n"
    "    def __init__(self, config):\n        mpu.initialize_model_parallel(\n"
    "            tensor_model_parallel_size=config.actor.megatron.tensor_model_parallel_size,\n"
    "            pipeline_model_parallel_size=config.actor.megatron.pipeline_model_parallel_size)\n"
)
_PPO_TRAINER_YAML = ("data:\n  train_batch_size: 1024\nactor_rollout_ref:\n  model:\n    path: ~/models/deepseek-llm-7b-chat\n"
                     "  actor:\n    strategy: fsdp\n    ppo_micro_batch_size: 64\n    optim:\n      lr: 1e-6\n"
                     "  rollout:\n    name: vllm\n    tensor_model_parallel_size: 2\n")
_MEGATRON_YAML = ("data:\n  train_batch_size: 1024\nactor_rollout_ref:\n  actor:\n    strategy: megatron\n    megatron:\n"
                  "      tensor_model_parallel_size: 4\n      pipeline_model_parallel_size: 1\n      sequence_parallel: True\n")
_PRIME_LAUNCH = ("set -x\nexport NCCL_DEBUG=WARN\n\npython3 -m verl.trainer.main_ppo \\\n"
                 "    data.train_files=[\"$DATA_PATH/train.parquet\"] \\\n    data.train_batch_size=256 \\\n"
                 "    actor_rollout_ref.model.path=PRIME-RL/Eurus-2-7B-SFT \\\n"
                 "    actor_rollout_ref.actor.fsdp_config.param_offload=True \\\n    trainer.n_gpus_per_node=8{extra}\n")


def _prime(extra: str = "") -> dict[str, str]:
    return {
        "README.md": "# PRIME\n\nProcess reinforcement through implicit rewards. See training/README.md.\n",
        "training/setup.py": "from setuptools import setup, find_packages\n\nsetup(name='verl', version='0.1', packages=find_packages())\n",
        "training/README.md": "# Training\n\n```bash\nbash examples/run_prime_main.sh\n```\n",
        "training/examples/run_prime_main.sh": _PRIME_LAUNCH.format(extra=extra),
        "training/verl/__init__.py": "",
        "training/verl/trainer/__init__.py": "",
        "training/verl/trainer/main_ppo.py": _MAIN_PPO,
        "training/verl/trainer/ppo/__init__.py": "",
        "training/verl/trainer/ppo/ray_trainer.py": _RAY_TRAINER,
        "training/verl/trainer/config/ppo_trainer.yaml": _PPO_TRAINER_YAML,
        "training/verl/trainer/config/ppo_megatron_trainer.yaml": _MEGATRON_YAML,
        "training/verl/workers/__init__.py": "",
        "training/verl/workers/fsdp_workers.py": _FSDP_WORKERS,
        "training/verl/workers/megatron_workers.py": _MEGATRON_WORKERS,
        "eval/run_math.py": "import json\n\n\ndef score(path):\n    return json.load(open(path))\n",
        "data_preprocessing/stage1_filter.py": "import datasets\n\nds = datasets.load_dataset('PRIME-RL/Eurus-2-RL-Data')\n",
    }


def test_a_framework_fork_packaged_in_a_folder_and_run_by_module_is_the_projects_training() -> None:
    """PRIME's ``training/`` is its verl fork (``setup(name='verl')``) and its only launch runs ``python3 -m
    verl.trainer.main_ppo``: the fork is the project's training, not a vendored package (A2 FSDP, C1 BF16)."""
    a = _audit(_prime())
    assert a.roles.role("training/verl/trainer/main_ppo.py") == "training", a.roles.why.get("training/verl/trainer/main_ppo.py")
    assert _check(a, "A2").status == Status.USED
    assert _check(a, "C1").status == Status.USED


def test_a_hydra_config_the_run_does_not_load_is_not_the_runs() -> None:
    """main_ppo loads ppo_trainer.yaml; the Megatron backend's ppo_megatron_trainer.yaml beside it is another run: its
    tensor parallel size of 4 and sequence parallelism are not the project's."""
    a = _audit(_prime())
    assert a.roles.role("training/verl/trainer/config/ppo_megatron_trainer.yaml") == "other"
    assert a.roles.role("training/verl/trainer/config/ppo_trainer.yaml") == "config"
    assert _check(a, "A4").status != Status.USED or not any("megatron" in e.path for e in _check(a, "A4").evidence)
    assert _check(a, "A6").status != Status.USED
    # a launch that picks it with --config-name runs it
    b = _audit(_prime(extra=" \\\n    --config-name ppo_megatron_trainer"))
    assert b.roles.role("training/verl/trainer/config/ppo_megatron_trainer.yaml") == "config"
    assert _check(b, "A6").status == Status.USED


# --- THUDM/ChatGLM2-6B: P-Tuning v2 launches and the model's own chat methods in its API servers ---------------------------

_GLM_MAIN = (
    "import torch\nfrom transformers import AutoConfig, AutoModel, AutoTokenizer, HfArgumentParser, Seq2SeqTrainingArguments\n\n"
    "from arguments import ModelArguments\nfrom trainer_seq2seq import Seq2SeqTrainer\n\n\n"
    "def main():\n    parser = HfArgumentParser((ModelArguments, Seq2SeqTrainingArguments))\n"
    "    model_args, training_args = parser.parse_args_into_dataclasses()\n"
    "    config = AutoConfig.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)\n"
    "    config.pre_seq_len = model_args.pre_seq_len\n"
    "    model = AutoModel.from_pretrained(model_args.model_name_or_path, config=config, trust_remote_code=True)\n"
    "    if model_args.quantization_bit is not None:\n        model = model.quantize(model_args.quantization_bit)\n"
    "    if model_args.pre_seq_len is not None:\n        model = model.half()\n        model.transformer.prefix_encoder.float()\n"
    "    trainer = Seq2SeqTrainer(model=model, args=training_args)\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)
_GLM_ARGS = (
    "from dataclasses import dataclass, field\nfrom typing import Optional\n\n\n@dataclass\nclass ModelArguments:\n"
    "    model_name_or_path: str = field(metadata={'help': 'Path to pretrained model'})\n"
    "    pre_seq_len: Optional[int] = field(default=None)\n    quantization_bit: Optional[int] = field(default=None)\n"
)
_GLM_TRAINER = ("from transformers import Trainer\n\n\nclass Seq2SeqTrainer(Trainer):\n"
                "    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):\n"
                "        generated_tokens = self.model.generate(**inputs)\n        return None, generated_tokens, None\n")
_GLM_PT = ("PRE_SEQ_LEN=128\nLR=2e-2\nNUM_GPUS=1\n\ntorchrun --standalone --nnodes=1 --nproc-per-node=$NUM_GPUS main.py \\\n"
           "    --do_train \\\n    --train_file AdvertiseGen/train.json \\\n    --model_name_or_path THUDM/chatglm2-6b \\\n"
           "    --per_device_train_batch_size 1 \\\n    --gradient_accumulation_steps 16 \\\n    --learning_rate $LR \\\n"
           "    --pre_seq_len $PRE_SEQ_LEN \\\n    --quantization_bit 4\n")
_GLM_DS = ("LR=1e-4\n\ndeepspeed --num_gpus=4 --master_port 29500 main.py \\\n    --deepspeed deepspeed.json \\\n    --do_train \\\n"
           "    --train_file AdvertiseGen/train.json \\\n    --model_name_or_path THUDM/chatglm2-6b \\\n"
           "    --per_device_train_batch_size 4 \\\n    --learning_rate $LR \\\n    --fp16\n")
_GLM_API = (
    "from fastapi import FastAPI, Request\nfrom transformers import AutoTokenizer, AutoModel\nimport uvicorn\n\napp = FastAPI()\n\n\n"
    "@app.post('/')\nasync def create_item(request: Request):\n    json_post = await request.json()\n"
    "    response, history = model.chat(tokenizer, json_post['prompt'], history=json_post.get('history'))\n"
    "    return {'response': response, 'history': history}\n\n\n"
    "if __name__ == '__main__':\n    tokenizer = AutoTokenizer.from_pretrained('THUDM/chatglm2-6b', trust_remote_code=True)\n"
    "    model = AutoModel.from_pretrained('THUDM/chatglm2-6b', trust_remote_code=True).cuda()\n    model.eval()\n"
    "    uvicorn.run(app, host='0.0.0.0', port=8000, workers=1)\n"
)


def _glm(train_sh: str = _GLM_PT, api: bool = True) -> dict[str, str]:
    files = {"ptuning/main.py": _GLM_MAIN, "ptuning/arguments.py": _GLM_ARGS, "ptuning/trainer_seq2seq.py": _GLM_TRAINER,
             "ptuning/train.sh": train_sh, "ptuning/train_chat.sh": train_sh, "ptuning/ds_train_finetune.sh": _GLM_DS,
             "ptuning/deepspeed.json": '{\n  "train_micro_batch_size_per_gpu": "auto",\n  "zero_optimization": {"stage": 2}\n}\n'}
    if api:
        files["api.py"] = _GLM_API
    return files


def test_p_tuning_v2_launches_are_parameter_efficient_runs() -> None:
    """ChatGLM2-6B's train.sh and train_chat.sh pass ``--pre_seq_len 128``: P-Tuning v2 trains only the prefix encoder.
    G4 does not say "full-parameter fine-tuning (no LoRA/PEFT)", and G5 does not say "no layer freezing found"."""
    a = _audit(_glm())
    g4, g5 = _check(a, "G4"), _check(a, "G5")
    assert g4.status == Status.USED and "P-Tuning v2" in g4.detail and "ds_train_finetune.sh" in g4.detail, g4.detail
    assert "no layer freezing found" not in g5.detail and g5.priority is None, g5.detail
    # control: the same launches without a prefix length fine-tune every weight
    full = _audit(_glm(train_sh=_GLM_PT.replace(" \\\n    --pre_seq_len $PRE_SEQ_LEN", "")))
    assert _check(full, "G4").status == Status.UNUSED
    assert "no layer freezing found" in _check(full, "G5").detail


def test_a_remote_code_models_chat_method_in_an_api_server_is_inference() -> None:
    """ChatGLM2-6B serves the model from api.py with ``model.chat(...)`` (its remote code's generation): the project does
    inference, and the J checks cite that call."""
    a = _audit(_glm())
    assert a.project.does_inference
    j5 = _check(a, "J5")
    assert j5.status == Status.UNUSED and any(e.path == "api.py" for e in j5.evidence), j5.detail
    # without the server only the trainer's evaluation generate is left: no inference workload
    assert not _audit(_glm(api=False)).project.does_inference


# --- direct-preference-optimization: what paces its W&B reports --------------------------------------------------------

_DPO_LOOP = (
    "import time\n\nimport torch\nimport wandb\n\n\nclass BasicTrainer:\n"
    "    def __init__(self, policy, config):\n        self.policy = policy\n        self.config = config\n"
    "        self.optimizer = torch.optim.RMSprop(policy.parameters(), lr=config.lr)\n\n"
    "    def train(self):\n        self.example_counter = 0\n        last_log = None\n"
    "        for batch in self.train_iterator:\n"
    "            if self.{counter} % self.config.eval_every == 0 and self.example_counter > 0:\n"
    "                mean_eval_metrics = self.evaluate()\n"
    "                if self.config.wandb.enabled and self.rank == 0:\n"
    "                    wandb.log(mean_eval_metrics, step=self.example_counter)\n"
    "                    if self.config.sample_during_eval:\n"
    "                        wandb.log({'policy_samples': self.policy_table}, step=self.example_counter)\n"
    "                        if self.config.loss.name in {'dpo', 'ipo'}:\n"
    "                            wandb.log({'reference_samples': self.reference_table}, step=self.example_counter)\n"
    "            loss = self.policy(batch).loss\n            loss.backward()\n"
    "            self.optimizer.step()\n            self.optimizer.zero_grad()\n"
    "            self.example_counter += self.config.batch_size\n"
    "            if last_log is None or time.time() - last_log > self.config.minimum_log_interval_secs:\n"
    "                if self.config.wandb.enabled and self.rank == 0:\n"
    "                    wandb.log({'loss': loss.item()}, step=self.example_counter)\n"
    "                last_log = time.time()\n"
)
_DPO_LOOP_CONFIG = ("batch_size: 64\nlr: 5e-7\neval_every: 20000\nminimum_log_interval_secs: 1.0\nsample_during_eval: true\n"
                    "wandb:\n  enabled: true\nloss:\n  name: dpo\n")


def test_reports_paced_by_examples_and_by_the_clock_say_so() -> None:
    """DPO's evaluation reports run every 20,000 examples (``self.example_counter % self.config.eval_every``), not steps,
    and its training metrics at most once per ``minimum_log_interval_secs``: the detail said "every 20000 steps" and
    left the second call out."""
    files = {"trainers.py": _DPO_LOOP.replace("{counter}", "example_counter"), "config/config.yaml": _DPO_LOOP_CONFIG,
             "train.py": "from trainers import BasicTrainer\n\nBasicTrainer(None, None).train()\n"}
    i5 = _check(_audit(files), "I5")
    assert "every 20000 examples (eval_every)" in i5.detail, i5.detail
    assert "log() at most once per `minimum_log_interval_secs` seconds" in i5.detail, i5.detail
    # control: a step counter is counted in steps
    files["trainers.py"] = _DPO_LOOP.replace("{counter}", "global_step")
    assert "every 20000 steps (eval_every)" in _check(_audit(files), "I5").detail


# --- direct-preference-optimization: an FSDP mixed-precision policy whose dtype every config leaves null ------------------

_DPO_FSDP = (
    "import functools\n\nimport torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision, "
    "ShardingStrategy\n\n\nclass FSDPTrainer:\n    def __init__(self, policy, config):\n        self.config = config\n"
    "        mp_dtype = getattr(torch, config.model.fsdp_policy_mp) if config.model.fsdp_policy_mp is not None else None\n"
    "        policy_mp_policy = MixedPrecision(param_dtype=mp_dtype, reduce_dtype=mp_dtype, buffer_dtype=mp_dtype)\n"
    "        self.policy = FSDP(policy, sharding_strategy=ShardingStrategy.FULL_SHARD, mixed_precision=policy_mp_policy)\n"
    "        self.optimizer = torch.optim.RMSprop(self.policy.parameters(), lr=config.lr)\n\n"
    "    def train(self, batches):\n        for batch in batches:\n            loss = self.policy(batch).loss\n"
    "            loss.backward()\n            self.optimizer.step()\n            self.optimizer.zero_grad()\n"
)
_DPO_FSDP_README = (
    "# DPO\n\nRun SFT for Pythia 6.9B:\n\n"
    "    python -u train.py model=pythia69 loss=sft gradient_accumulation_steps=2 batch_size=64 trainer=FSDPTrainer\n\n"
    "Run SFT for Pythia 2.8B in BF16:\n\n"
    "    python -u train.py model=pythia28 loss=sft gradient_accumulation_steps=2 batch_size=64 trainer=FSDPTrainer "
    "model.fsdp_policy_mp=bfloat16\n\n"
    "Run DPO for Pythia 6.9B:\n\n"
    "    python -u train.py model=pythia69 loss=dpo loss.beta=0.1 batch_size=32 trainer=FSDPTrainer\n"
)


def _dpo_fsdp(readme: str | None = _DPO_FSDP_README, mp: str = "null") -> dict[str, str]:
    files = {"trainers.py": _DPO_FSDP, "train.py": _DPO_TRAIN.replace("trainers.BasicTrainer(policy, config)",
                                                                       "trainers.FSDPTrainer(policy, config)"),
             "config/config.yaml": _DPO_CONFIG,
             "config/model/pythia28.yaml": f"name_or_path: EleutherAI/pythia-2.8b\npolicy_dtype: float32\nfsdp_policy_mp: {mp}\n",
             "config/model/pythia69.yaml": f"name_or_path: EleutherAI/pythia-6.9b\npolicy_dtype: float32\nfsdp_policy_mp: {mp}\n"}
    if readme is not None:
        files["README.md"] = readme
    return files


def test_an_fsdp_policy_whose_dtype_every_config_leaves_null_is_bf16_only_where_a_run_sets_it() -> None:
    """``MixedPrecision(param_dtype=mp_dtype)`` with ``mp_dtype = getattr(torch, config.model.fsdp_policy_mp) if ... else
    None`` and ``fsdp_policy_mp: null`` in every model config: FP32 unless a run passes ``model.fsdp_policy_mp=bfloat16``
    (1 of the 3 documented runs here). C1 said "BF16 mixed precision"."""
    c1 = _check(_audit(_dpo_fsdp()), "C1")
    assert c1.status == Status.PARTIAL and "1 of 3 runs" in c1.detail, c1.detail
    assert any(e.path == "README.md" for e in c1.evidence)
    # no run sets it: FP32
    c1 = _check(_audit(_dpo_fsdp(readme=None)), "C1")
    assert c1.status == Status.UNUSED, c1.detail  # ("explicitly disabled": policy_dtype is float32 in the same configs)
    # control: a config that sets it is BF16 training
    assert _check(_audit(_dpo_fsdp(readme=None, mp="bfloat16")), "C1").status == Status.USED


# --- pytorch-labs/gpt-fast: an inference-only project whose scripts are its run ------------------------------------------

_GF_GENERATE = (
    "import torch\nimport torch._dynamo.config\n\nfrom model import Transformer\nfrom tp import maybe_init_dist\n\n\n"
    "def decode_one_token(model, x, input_pos):\n    logits = model(x, input_pos)\n    return torch.argmax(logits[:, -1], dim=-1)\n\n\n"
    "def decode_n_tokens(model, cur_token, input_pos, num_new_tokens):\n    new_tokens = []\n"
    "    for i in range(num_new_tokens):\n        next_token = decode_one_token(model, cur_token, input_pos)\n"
    "        input_pos += 1\n        new_tokens.append(next_token.clone())\n        cur_token = next_token.view(1, -1)\n"
    "    return new_tokens\n\n\n"
    "@torch.no_grad()\ndef generate(model, prompt, max_new_tokens, draft_model=None, speculate_k=8):\n"
    "    model.setup_caches(max_batch_size=1, max_seq_length=prompt.size(-1) + max_new_tokens)\n"
    "    input_pos = torch.arange(0, prompt.size(-1), device=prompt.device)\n"
    "    return decode_n_tokens(model, prompt.view(1, -1), input_pos, max_new_tokens - 1)\n\n\n"
    "def _load_model(checkpoint_path, device, precision, use_tp):\n"
    "    with torch.device('meta'):\n        model = Transformer.from_name(checkpoint_path.parent.name)\n"
    "    if 'int8' in str(checkpoint_path):\n        from quantize import WeightOnlyInt8QuantHandler\n"
    "        simple_quantizer = WeightOnlyInt8QuantHandler(model)\n        model = simple_quantizer.convert_for_runtime()\n"
    "    model.load_state_dict(torch.load(str(checkpoint_path), mmap=True, weights_only=True), assign=True)\n"
    "    if use_tp:\n        from tp import apply_tp\n        apply_tp(model)\n"
    "    return model.to(device=device, dtype=precision).eval()\n\n\n"
    "def main(prompt, checkpoint_path, max_new_tokens=100, compile=True, device='cuda'):\n"
    "    global decode_one_token\n    rank = maybe_init_dist()\n    use_tp = rank is not None\n"
    "    model = _load_model(checkpoint_path, device, torch.bfloat16, use_tp)\n"
    "    if compile:\n        decode_one_token = torch.compile(decode_one_token, mode='reduce-overhead', fullgraph=True)\n"
    "    y = generate(model, prompt, max_new_tokens)\n    return y\n"
)
_GF_TP = (
    "import os\n\nimport torch\nimport torch.distributed as dist\nfrom torch.distributed import _functional_collectives as funcol\n\n\n"
    "def maybe_init_dist():\n    if 'LOCAL_RANK' not in os.environ:\n        return None\n"
    "    rank = int(os.environ['LOCAL_RANK'])\n    dist.init_process_group(backend='nccl', rank=rank)\n    return rank\n\n\n"
    "def _apply_tp_linear(linear, style):\n    world_size = dist.get_world_size()\n"
    "    linear.weight = torch.nn.Parameter(torch.tensor_split(linear.weight, world_size, dim=0)[dist.get_rank()])\n\n\n"
    "def _apply_tp_ffn(mlp):\n    _apply_tp_linear(mlp.w1, 'colwise')\n    _apply_tp_linear(mlp.w2, 'rowwise')\n"
    "    mlp.register_forward_hook(lambda _module, _input, output: funcol.all_reduce(output, 'sum', list(range(dist.get_world_size()))))\n\n\n"
    "def apply_tp(model):\n    for block in model.layers:\n        _apply_tp_ffn(block.feed_forward)\n"
)
_GF_QUANT = (
    "import torch\nimport torch.nn as nn\n\n\nclass WeightOnlyInt8QuantHandler:\n    def __init__(self, mod):\n        self.mod = mod\n\n"
    "    def convert_for_runtime(self):\n        return self.mod\n"
)


def _gpt_fast(train: bool = False) -> dict[str, str]:
    files = {
        "generate.py": _GF_GENERATE, "tp.py": _GF_TP, "quantize.py": _GF_QUANT,
        "model.py": "import torch.nn as nn\n\n\nclass Transformer(nn.Module):\n    pass\n",
        "scripts/speculate_7B_int8.sh": ("export MODEL_REPO=meta-llama/Llama-2-7b-chat-hf\n"
                                         "time python generate.py --compile --checkpoint_path checkpoints/$MODEL_REPO/model_int8.pth "
                                         "--max_new_tokens 200\n"),
        "scripts/tp_70B.sh": ("time torchrun --standalone --nproc_per_node=8 generate.py --compile "
                              "--checkpoint_path checkpoints/meta-llama/Llama-2-70b-chat-hf/model.pth\n"),
    }
    if train:
        files["train.py"] = ("import torch\nfrom model import Transformer\n\nmodel = Transformer()\n"
                             "opt = torch.optim.AdamW(model.parameters())\nfor batch in loader:\n"
                             "    model(batch).loss.backward()\n    opt.step()\n")
    return files


def test_an_inference_only_projects_launched_generation_script_is_its_run() -> None:
    """gpt-fast's ``generate.py`` (launched by its scripts) was an "inference script: it runs no training step", context in a
    repository that trains nowhere, so the checks read no decode loop, no quantization and no tensor parallelism of it."""
    a = _audit(_gpt_fast())
    assert a.roles.role("generate.py") != "eval", a.roles.why.get("generate.py")
    assert _check(a, "J4").status == Status.USED, _check(a, "J4").detail  # WeightOnlyInt8QuantHandler + model_int8.pth
    assert _check(a, "A4").status == Status.USED and "apply_tp" in _check(a, "A4").detail, _check(a, "A4").detail
    # control: beside a training script the same launched generation script is a prediction run, context
    assert _audit(_gpt_fast(train=True)).roles.role("generate.py") == "eval"
    # ... also beside one that is only named for training (EasyLM's JAX ``llama_train.py`` calls no ``backward``)
    jax = {**_gpt_fast(), "models/llama_train.py": "import jax\nimport optax\n\n\ndef train_step(state, batch):\n"
           "    grads = jax.grad(loss_fn)(state.params, batch)\n    return state.apply_gradients(grads=grads)\n"}
    assert _audit(jax).roles.role("generate.py") == "eval"


def test_a_decode_step_compiled_into_cuda_graphs_is_not_eager() -> None:
    """gpt-fast compiles its decode step with ``mode="reduce-overhead"``: J5 said "generation runs in PyTorch eager" and
    step zero "decoding in eager PyTorch"; its decode is memory-bandwidth bound."""
    a = _audit(_gpt_fast())
    j5 = _check(a, "J5")
    assert "eager" not in j5.detail and "CUDA graphs" in j5.detail, j5.detail
    assert j5.priority is not None and j5.priority.name == "MEDIUM"
    assert a.project.bottleneck.value == "memory-bound" and not any("eager" in r for r in a.project.bottleneck_reasons)
    # control: without the compile the loop is eager
    files = _gpt_fast()
    files["generate.py"] = _GF_GENERATE.replace("decode_one_token = torch.compile(decode_one_token, mode='reduce-overhead', "
                                                "fullgraph=True)", "pass")
    assert "eager" in _check(_audit(files), "J5").detail


# --- ContextualAI/gritlm: a statistics script that counts tokens is not offline preprocessing ------------------------------

_GRIT_DATA = (
    "from transformers import DataCollatorWithPadding\n\n\nclass CustomCollator(DataCollatorWithPadding):\n"
    "    query_max_len: int = 32\n\n    def __call__(self, features):\n        query = [f[0] for f in features]\n"
    "        features = {}\n        features['query'] = self.tokenizer(\n            query,\n            padding=True,\n"
    "            truncation=True,\n            max_length=self.query_max_len,\n            return_tensors='pt',\n        )\n"
    "        return features\n"
)
_GRIT_RUN = (
    "import datasets\nfrom transformers import AutoModel, AutoTokenizer, Trainer, TrainingArguments\n\n"
    "from gritlm.training.data import CustomCollator\n\n\ndef main():\n"
    "    tokenizer = AutoTokenizer.from_pretrained('mistralai/Mistral-7B-v0.1')\n"
    "    model = AutoModel.from_pretrained('mistralai/Mistral-7B-v0.1')\n"
    "    ds = datasets.load_dataset('json', data_files='train.jsonl', split='train')\n"
    "    trainer = Trainer(model=model, args=TrainingArguments(output_dir='out', bf16=True), train_dataset=ds,\n"
    "                      data_collator=CustomCollator(tokenizer))\n    trainer.train()\n\n\n"
    "if __name__ == '__main__':\n    main()\n"
)
_GRIT_LEN = (
    "import multiprocessing\n\nimport datasets\nfrom transformers import AutoTokenizer\n\n"
    "tokenizer = AutoTokenizer.from_pretrained('openaccess-ai-collective/tiny-mistral')\n"
    "ds = datasets.load_dataset('json', data_files='/data/tuluv2.jsonl', split='train')\n\n\n"
    "def compute_len(ex):\n    ex['len'] = sum([\n        len(tokenizer.tokenize(z.strip() + '</s>'))\n"
    "        for z in ex['text'][1::2]\n    ])\n    return ex\n\n\n"
    "g_lens = ds.map(compute_len, num_proc=8)\ng_lens = [ex['len'] for ex in g_lens]\n"
)


def test_a_script_that_counts_tokens_is_not_offline_preprocessing() -> None:
    """gritlm's ``scripts/compute_target_len.py`` maps ``len(tokenizer.tokenize(...))`` over a dataset to print the median
    length; its training path tokenizes each batch in ``CustomCollator.__call__``. F6 said the data is tokenized ahead."""
    files = {"gritlm/training/data.py": _GRIT_DATA, "gritlm/training/run.py": _GRIT_RUN, "scripts/compute_target_len.py": _GRIT_LEN,
             "scripts/train.sh": "torchrun --nproc_per_node 8 -m gritlm.training.run --output_dir out --bf16\n"}
    f6 = _check(_audit(files), "F6")
    assert f6.status == Status.UNUSED, f6.detail
    # control: a map that keeps the token ids is preprocessing ahead of training
    files["scripts/compute_target_len.py"] = _GRIT_LEN.replace("len(tokenizer.tokenize(z.strip() + '</s>'))",
                                                               "tokenizer(z.strip() + '</s>')['input_ids']")
    assert _check(_audit(files), "F6").status != Status.UNUSED
