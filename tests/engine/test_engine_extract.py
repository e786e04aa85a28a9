"""Extractors, one file at a time: Python (ast), YAML, JSON, shell launchers, dependency files."""

from __future__ import annotations

from checks.facts import Container, Expr, extract_file
from checks.facts.types import FileFacts


def x(path: str, text: str | bytes) -> FileFacts:
    ff = extract_file(path, text.encode() if isinstance(text, str) else text)
    return ff


# --- Python ----------------------------------------------------------------------------


def test_python_import_resolution() -> None:
    ff = x("train.py", (
        "import torch\n"
        "import torch.distributed as dist\n"
        "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision\n"
        "from .model import GPT\n"
        "import deepspeed.comm\n"
        "dist.init_process_group('nccl')\n"
        "model = FSDP(GPT(), mixed_precision=MixedPrecision(param_dtype=torch.bfloat16))\n"
        "model = torch.compile(model)\n"
        "deepspeed.comm.barrier()\n"
        "my.compile(model)\n"
    ))
    names = {c.name: c for c in ff.calls}
    assert "torch.distributed.init_process_group" in names
    assert names["torch.distributed.fsdp.FullyShardedDataParallel"].line == 7
    assert "torch.compile" in names and "deepspeed.comm.barrier" in names and ".model.GPT" in names
    mp = names["torch.distributed.fsdp.MixedPrecision"].kwargs["param_dtype"]
    assert isinstance(mp, Expr) and mp.dotted == "torch.bfloat16"
    assert names["my.compile"].name == "my.compile"  # not an import: stays unresolved
    assert {(i.module, i.name) for i in ff.imports} >= {("torch.distributed", None), ("torch.distributed.fsdp", "FullyShardedDataParallel"), (".model", "GPT")}


def test_python_constant_resolution_and_scopes() -> None:
    ff = x("train.py", (
        "from torch.utils.data import DataLoader\n"
        "NUM_WORKERS = 8\n"
        "BS = 4 * 2\n"
        "NEG = -1\n"
        "def build(ds):\n"
        "    PREFETCH = 4\n"
        "    return DataLoader(ds, num_workers=NUM_WORKERS, batch_size=BS, prefetch_factor=PREFETCH, pin_memory=NEG < 0)\n"
        "def other(ds, n):\n"
        "    NUM_WORKERS = n\n"
        "    return DataLoader(ds, num_workers=NUM_WORKERS)\n"
        "def third(ds, BS):\n"
        "    return DataLoader(ds, batch_size=BS)\n"
    ))
    first, second, third = [c for c in ff.calls if c.short == "DataLoader"]
    assert first.kwargs["num_workers"] == 8 and first.kwargs["batch_size"] == 8 and first.kwargs["prefetch_factor"] == 4
    assert isinstance(first.kwargs["pin_memory"], Expr)
    assert first.func == "build" and first.kw_line("num_workers") == 7
    # a local rebinding to a non-constant hides the module constant
    assert isinstance(second.kwargs["num_workers"], Expr)
    assert isinstance(third.kwargs["batch_size"], Expr)  # a parameter hides the module constant
    assert {a.name: a.value for a in ff.assigns}.items() >= {"NUM_WORKERS": 8, "BS": 8, "NEG": -1, "PREFETCH": 4}.items()


def test_python_args_references_keep_the_setting_name() -> None:
    ff = x("train.py", "from transformers import TrainingArguments\nTrainingArguments(bf16=args.bf16, fp16=cfg.train.fp16, seed=int(args.seed))\n")
    [c] = [c for c in ff.calls if c.short == "TrainingArguments"]
    assert c.kwargs["bf16"].ref == "bf16" and c.kwargs["fp16"].ref == "fp16" and c.kwargs["seed"].ref == "seed"


def test_python_argparse_defaults() -> None:
    ff = x("args.py", (
        "import argparse\n"
        "p = argparse.ArgumentParser()\n"
        "p.add_argument('--num-workers', type=int, default=4)\n"
        "p.add_argument('--bf16', action='store_true')\n"
        "p.add_argument('--no-fusion', action='store_false', dest='fusion')\n"
        "p.add_argument('-b', '--batch_size', default=8)\n"
        "p.add_argument('data')\n"
    ))
    opts = {a.dest: a for a in ff.arg_options}
    assert opts["num_workers"].default == 4 and opts["num_workers"].line == 3
    assert opts["bf16"].default is False and opts["bf16"].action == "store_true"
    assert opts["fusion"].default is True and opts["fusion"].flags == ("--no-fusion",)
    assert opts["batch_size"].flags == ("-b", "--batch_size")
    assert "data" not in opts


def test_python_dataclass_fields() -> None:
    ff = x("args.py", (
        "from dataclasses import dataclass, field\n"
        "from typing import Optional\n"
        "@dataclass\n"
        "class TrainingArguments:\n"
        "    model_max_length: int = field(default=512, metadata={'help': 'max'})\n"
        "    lora_enable: bool = False\n"
        "    optim: str = field(default='adamw_torch')\n"
        "    targets: list = field(default_factory=lambda: ['q_proj'])\n"
        "    cache_dir: Optional[str] = field(metadata={'help': 'x'})\n"
    ))
    fields = {f.name: f for f in ff.fields}
    assert fields["model_max_length"].default == 512 and fields["model_max_length"].owner == "TrainingArguments"
    assert fields["lora_enable"].default is False and fields["lora_enable"].line == 6
    assert fields["optim"].default == "adamw_torch"
    assert fields["targets"].default == ("q_proj",)  # default_factory=lambda: [literal] builds that literal
    assert "cache_dir" not in fields  # no default


def test_python_environment_writes() -> None:
    ff = x("env.py", (
        "import os\n"
        "os.environ['NCCL_IB_DISABLE'] = '0'\n"
        "os.environ.setdefault('NCCL_DEBUG', 'INFO')\n"
        "os.putenv('NCCL_P2P_LEVEL', 'NVL')\n"
        "os.environ['PYTORCH_CUDA_ALLOC_CONF'] = f'expandable_segments:{flag}'\n"
        "value = os.environ['NCCL_SOCKET_IFNAME']\n"
    ))
    envs = {(e.name, e.value, e.line) for e in ff.envs}
    assert envs == {("NCCL_IB_DISABLE", "0", 2), ("NCCL_DEBUG", "INFO", 3), ("NCCL_P2P_LEVEL", "NVL", 4), ("PYTORCH_CUDA_ALLOC_CONF", "", 5)}


def test_python_dict_literals_are_config_entries_with_lines() -> None:
    ff = x("ds.py", (
        "ds_config = {\n"
        "    'train_micro_batch_size_per_gpu': 4,\n"
        "    'zero_optimization': {\n"
        "        'stage': 3,\n"
        "        'offload_param': {'device': 'cpu'},\n"
        "    },\n"
        "}\n"
        "engine, *_ = deepspeed.initialize(model=m, config={'bf16': {'enabled': True}})\n"
        "cfg['gradient_accumulation_steps'] = 8\n"
    ))
    entries = {e.dotted: e for e in ff.configs}
    assert entries["ds_config.zero_optimization.stage"].value == 3 and entries["ds_config.zero_optimization.stage"].line == 4
    assert entries["ds_config.zero_optimization"].value == Container("map")
    assert entries["ds_config.zero_optimization.offload_param.device"].value == "cpu"
    assert entries["initialize.config.bf16.enabled"].value is True and entries["initialize.config.bf16.enabled"].line == 8
    assert entries["cfg.gradient_accumulation_steps"].value == 8
    assert all(e.fmt == "python" for e in ff.configs)


def test_python_docstrings_and_strings_are_not_code() -> None:
    ff = x("doc.py", (
        '"""Use torch.compile(model) and read /mnt/nvme/data."""\n'
        "def f():\n"
        "    '''bf16=True; deepspeed.initialize(config=ds)'''\n"
        "    return 'torch.compile(model)'\n"
        "class A:\n"
        "    \"\"\"FSDP(model)\"\"\"\n"
    ))
    assert ff.calls == [] and ff.paths == [] and ff.imports == []


def test_python_attribute_assignments_decorators_and_paths() -> None:
    ff = x("k.py", (
        "import torch\n"
        "import triton\n"
        "import triton.language as tl\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
        "for p in model.vision_tower.parameters():\n"
        "    p.requires_grad = False\n"
        "@triton.jit\n"
        "def kernel(X):\n"
        "    x = tl.load(X)\n"
        "@torch.compile(mode='max-autotune')\n"
        "def step(b):\n"
        "    return b\n"
        "DATA = 's3://bucket/tokens'\n"
    ))
    targets = {a.target: a for a in ff.attr_assigns}
    assert targets["torch.backends.cuda.matmul.allow_tf32"].value is True
    rg = targets["p.requires_grad"]
    assert rg.value is False and rg.loop == "model.vision_tower.parameters()"
    assert {(d.name, d.target) for d in ff.decorators} == {("triton.jit", "kernel"), ("torch.compile", "step")}
    assert any(c.name == "triton.language.load" for c in ff.calls)
    assert [p.value for p in ff.paths] == ["s3://bucket/tokens"]


def test_python_bad_files_record_an_error_and_never_raise() -> None:
    assert x("py2.py", "print 'hi'\n").error.startswith("Python syntax error")
    assert x("nul.py", "x = 1\x00\n").error
    deep = "x = " + "+".join("1" for _ in range(50_000)) + "\n"
    assert x("deep.py", deep).error
    latin = x("latin.py", "# caf\xe9\nimport torch\ntorch.compile(m)\n".encode("latin-1"))
    assert latin.error is None and [c.name for c in latin.calls] == ["torch.compile"]
    bom = x("bom.py", b"\xef\xbb\xbfimport torch\ntorch.compile(m)\n")
    assert bom.error is None and bom.calls[0].line == 2


def test_python_312_fstrings_keep_the_rest_of_the_file() -> None:
    # facebookresearch/lingua apps/mtp/train.py: a PEP 701 f-string (the outer quote reused inside the field) is
    # valid on Python 3.12 only. On an older interpreter the file must still give its calls, at their own lines.
    ff = x("train.py", (
        "import torch\n"
        "logger.info(f\"Setting checkpoint path to {str(Path(args.dump_dir) / \"checkpoints\")}\")\n"
        "msg = f\"\"\"{cfg[\"a\"]\n"
        "   + cfg['b']}\"\"\"\n"
        "model = torch.compile(model, mode=\"max-autotune\")\n"
        "print(f\"{rank}\", f\"{x!r:>{width}}\")\n"
    ))
    assert ff.error is None
    compile_call = next(c for c in ff.calls if c.name == "torch.compile")
    assert compile_call.line == 5 and compile_call.kwargs["mode"] == "max-autotune"
    assert x("bad.py", "x = f\"{a\"\ny = (\n").error.startswith("Python syntax error at line")


def test_pep701_rewrite_keeps_every_line_and_column() -> None:
    from checks.facts.fstrings import rewrite_pep701

    src = "a = f\"{d[\"k\"]}\"  # f\"{e[\"z\"]}\"\nb = f\"{x}\" + 'f\"{'\nc = f\"\"\"{m[\"a\"]\n}\"\"\"\n"
    out = rewrite_pep701(src)
    assert out is not None and [len(line) for line in out.split("\n")] == [len(line) for line in src.split("\n")]
    assert "f\"{x}\"" in out and "# f\"{e[\"z\"]}\"" in out  # valid f-strings and comments are left alone
    assert rewrite_pep701("x = f\"{y}\"\n") is None


# --- YAML ------------------------------------------------------------------------------


def test_yaml_line_numbers_multi_document_and_values() -> None:
    ff = x("cfg.yaml", (
        "# comment\n"
        "model:\n"
        "  name: meta-llama/Llama-2-7b-hf\n"
        "---\n"
        "train:\n"
        "  bf16: true\n"
        "  lr: 1e-4\n"
        "  # bf16: false\n"
        "  stages: [1, 2]\n"
        "  callbacks:\n"
        "    - class_path: ModelCheckpoint\n"
        "      every_n_train_steps: 1000\n"
    ))
    e = {c.dotted: c for c in ff.configs}
    assert e["model.name"].line == 3
    assert e["train.bf16"].value is True and e["train.bf16"].line == 6
    assert e["train.lr"].line == 7
    assert e["train.stages"].value == (1, 2)
    assert e["train.callbacks.0.every_n_train_steps"].value == 1000 and e["train.callbacks.0.every_n_train_steps"].line == 12
    assert not any(c.line == 8 for c in ff.configs)  # the commented-out line is no entry


def test_yaml_block_scalar_launch_commands_keep_their_lines() -> None:
    ff = x(".github/workflows/train.yml", (
        "jobs:\n"
        "  train:\n"
        "    steps:\n"
        "      - name: Train\n"
        "        run: |\n"
        "          pip install -r requirements.txt\n"
        "          export NCCL_DEBUG=INFO\n"
        "          torchrun --nproc_per_node 8 train.py \\\n"
        "            --bf16 True --deepspeed ds.json\n"
        "      - run: deepspeed --num_gpus 2 finetune.py --lora_r 8\n"
    ))
    launches = {(lc.launcher, lc.line): lc for lc in ff.launches}
    torchrun = launches[("torchrun", 8)]
    assert torchrun.launcher_args == {"nproc_per_node": 8}
    assert torchrun.script_args == {"bf16": True, "deepspeed": "ds.json"}
    assert launches[("deepspeed", 10)].script_args == {"lora_r": 8}
    assert any(e.name == "NCCL_DEBUG" and e.line == 7 for e in ff.envs)


def test_yaml_kubernetes_argv_lists_and_env() -> None:
    ff = x("k8s/job.yaml", (
        "spec:\n"
        "  containers:\n"
        "    - name: trainer\n"
        "      command: [\"torchrun\"]\n"
        "      args: [\"--nnodes=2\", \"--nproc_per_node=8\", \"train.py\", \"--bf16\", \"True\"]\n"
        "      env:\n"
        "        - name: NCCL_IB_HCA\n"
        "          value: mlx5_0\n"
    ))
    [launch] = ff.launches
    assert launch.line == 4 and launch.launcher_args == {"nnodes": 2, "nproc_per_node": 8} and launch.script_args == {"bf16": True}
    assert [(e.name, e.value, e.line) for e in ff.envs] == [("NCCL_IB_HCA", "mlx5_0", 7)]


def test_yaml_errors_and_alias_bombs() -> None:
    assert x("bad.yaml", "a:\n\tb: 1\n").error.startswith("YAML parse error")
    levels = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        levels.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    bomb = x("bomb.yaml", "\n".join(levels) + "\n")
    assert bomb.error and "alias" in bomb.error
    assert len(bomb.configs) < 50_000
    merged = x("merge.yaml", "base: &base\n  bf16: true\ntrain:\n  <<: *base\n  lr: 0.1\n")
    assert merged.error is None
    assert {c.dotted for c in merged.configs} >= {"base.bf16", "train.<<.bf16", "train.lr"}


# --- JSON ------------------------------------------------------------------------------


def test_json_key_paths_and_lines() -> None:
    ff = x("ds_config.json", (
        "{\n"
        '  "bf16": {\n'
        '    "enabled": "auto"\n'
        "  },\n"
        '  "zero_optimization": {"stage": 3,\n'
        '    "offload_param": {"device": "cpu", "pin_memory": true}},\n'
        '  "tags": ["a", "b"],\n'
        '  "steps": [{"lr": 0.1}, {"lr": 0.01}],\n'
        '  "we\\"ird": 1\n'
        "}\n"
    ))
    e = {c.dotted: c for c in ff.configs}
    assert e["bf16.enabled"].value == "auto" and e["bf16.enabled"].line == 3
    assert e["zero_optimization.stage"].line == 5 and e["zero_optimization.offload_param.pin_memory"].line == 6
    assert e["tags"].value == ("a", "b") and e["steps.1.lr"].value == 0.01 and e["steps.1.lr"].line == 8
    assert e['we"ird'].line == 9


def test_json_errors_are_recorded() -> None:
    assert x("bad.json", '{"a": 1,,}').error.startswith("JSON parse error")
    assert x("deep.json", "[" * 100_000 + "]" * 100_000).error
    assert x("bom.json", b'\xef\xbb\xbf{"fp16": {"enabled": false}}').configs[1].value is False


# --- shell -----------------------------------------------------------------------------


def _launch(text: str, path: str = "run.sh"):
    ff = x(path, text)
    assert len(ff.launches) == 1, ff.launches
    return ff.launches[0], ff


def test_shell_torchrun_flag_forms_and_script_args() -> None:
    lc, _ = _launch("torchrun --nproc_per_node=8 --master-port 29500 --standalone train.py --bf16 True --lr=2e-5 --tags a\n")
    assert lc.launcher == "torchrun" and lc.script == "train.py"
    assert lc.launcher_args == {"nproc_per_node": 8, "master_port": 29500, "standalone": True}
    assert lc.script_args == {"bf16": True, "lr": 2e-5, "tags": "a"}


def test_shell_python_m_torch_distributed_and_accelerate_and_deepspeed() -> None:
    lc, _ = _launch("python -m torch.distributed.run --nproc_per_node 4 finetune.py --fp16 True\n")
    assert (lc.launcher, lc.launcher_args, lc.script, lc.script_args) == ("torchrun", {"nproc_per_node": 4}, "finetune.py", {"fp16": True})
    lc, _ = _launch("accelerate launch --config_file configs/fsdp.yaml --num_processes 8 train.py --mixed_precision bf16\n")
    assert lc.launcher == "accelerate" and lc.launcher_args["config_file"] == "configs/fsdp.yaml" and lc.script_args == {"mixed_precision": "bf16"}
    lc, _ = _launch("deepspeed --hostfile hostfile --num_gpus 8 train.py --deepspeed ds_z3.json\n")
    assert lc.launcher == "deepspeed" and lc.launcher_args == {"hostfile": "hostfile", "num_gpus": 8}


def test_shell_wrappers_variables_exports_and_continuations() -> None:
    text = (
        "#!/bin/bash\n"
        "export NCCL_IB_HCA=mlx5_0,mlx5_1 NCCL_SOCKET_IFNAME=eth0\n"
        "NODES=${NUM_NODES:-2}\n"  # (a scheduler's own count, ``${SLURM_NNODES:-2}``, stays the job's: round 58)
        "GPUS=8\n"
        "srun -N $NODES --gpus-per-node $GPUS \\\n"
        "  torchrun --nnodes=$NODES --nproc_per_node ${GPUS} train.py \\\n"
        "    --output_dir ${OUT:-/mnt/ckpt}\n"
        "CUDA_DEVICE_MAX_CONNECTIONS=1 python train.py --log_every 10\n"
    )
    ff = x("launch.sh", text)
    srun, plain = ff.launches
    assert srun.line == 5 and srun.wrappers == ("srun",)
    assert srun.launcher_args == {"nnodes": 2, "nproc_per_node": 8} and srun.script_args == {"output_dir": "/mnt/ckpt"}
    assert plain.launcher == "python" and plain.env == {"CUDA_DEVICE_MAX_CONNECTIONS": "1"} and plain.script_args == {"log_every": 10}
    envs = {(e.name, e.value, e.line) for e in ff.envs}
    assert {("NCCL_IB_HCA", "mlx5_0,mlx5_1", 2), ("NCCL_SOCKET_IFNAME", "eth0", 2)} <= envs


def test_shell_megatron_arrays_and_flag_strings() -> None:
    arrays = (
        "MODEL_ARGS=(\n"
        "    --num-layers 24\n"
        "    --hidden-size 2048\n"
        "    # --fp8-format hybrid\n"
        "    --bf16\n"
        ")\n"
        "PAR=(--tensor-model-parallel-size 2 --sequence-parallel)\n"
        "torchrun --nproc_per_node 8 pretrain_gpt.py ${MODEL_ARGS[@]} \"${PAR[@]}\"\n"
    )
    lc, _ = _launch(arrays)
    assert lc.line == 8
    assert lc.script_args == {"num_layers": 24, "hidden_size": 2048, "bf16": True, "tensor_model_parallel_size": 2, "sequence_parallel": True}
    older = (
        'GPT_ARGS="--num-layers 24 \\\n'
        '          --use-flash-attn"\n'
        "torchrun $DISTRIBUTED_ARGS pretrain_gpt.py $GPT_ARGS --save-interval 500\n"
    )
    lc, _ = _launch(older)
    assert lc.script_args == {"num_layers": 24, "use_flash_attn": True, "save_interval": 500}


def test_shell_sbatch_directives_and_crlf() -> None:
    ff = x("job.sbatch", "#!/bin/bash\r\n#SBATCH --nodes=4\r\n#SBATCH -N 4 --gres=gpu:8\r\nsrun python train.py --bf16 True\r\n")
    entries = {(c.dotted, c.value, c.line) for c in ff.configs}
    assert ("SBATCH.nodes", 4, 2) in entries and ("SBATCH.gres", "gpu:8", 3) in entries
    [lc] = ff.launches
    assert lc.script == "train.py" and lc.script_args == {"bf16": True} and lc.wrappers == ("srun",)


def test_shell_comments_and_non_launch_commands_are_ignored() -> None:
    ff = x("run.sh", "# torchrun --nproc_per_node 8 train.py\necho 'deepspeed train.py'\ncd /tmp && ls\n")
    assert ff.launches == []


# --- dependencies ----------------------------------------------------------------------


def _deps(path: str, text: str) -> dict[str, tuple[str, int]]:
    return {d.name: (d.spec, d.line) for d in x(path, text).deps}


def test_requirements_files() -> None:
    deps = _deps("requirements.txt", (
        "torch>=2.1  # pinned by the cluster image\n"
        "flash_attn>=2.5 ; sys_platform == 'linux'\n"
        "-e .\n"
        "-r requirements-dev.txt\n"
        "git+https://github.com/huggingface/peft.git#egg=peft\n"
        "torch-tb @ https://example.com/whl/torch_tb.whl\n"
        "accelerate[deepspeed]==0.30.1\n"
        "# deepspeed\n"
    ))
    assert deps == {
        "torch": (">=2.1", 1), "flash-attn": (">=2.5 ; sys_platform == 'linux'", 2), "peft": ("git+https://github.com/huggingface/peft.git#egg=peft", 5),
        "torch-tb": ("torch-tb @ https://example.com/whl/torch_tb.whl", 6), "accelerate": ("==0.30.1", 7),
    }
    assert _deps("requirements/train.txt", "liger-kernel\n") == {"liger-kernel": ("", 1)}


def test_pyproject_setup_py_and_conda() -> None:
    pyproject = (
        "[project]\nname = 'x'\ndependencies = [\n  'transformers>=4.40',\n  'trl',\n]\n"
        "[project.optional-dependencies]\ntrain = ['deepspeed==0.14.0']\n"
        "[tool.poetry.dependencies]\npython = '^3.10'\nvllm = '^0.5'\n"
    )
    deps = _deps("pyproject.toml", pyproject)
    assert deps["transformers"] == (">=4.40", 4) and deps["deepspeed"] == ("==0.14.0", 8) and deps["vllm"][1] == 11
    assert "python" not in deps
    setup = "from setuptools import setup\nsetup(\n    name='x',\n    install_requires=['torch', 'peft>=0.10'],\n    extras_require={'fa': ['flash-attn']},\n)\n"
    deps = _deps("setup.py", setup)
    assert set(deps) == {"torch", "peft", "flash-attn"} and deps["peft"] == (">=0.10", 4)
    conda = "name: train\ndependencies:\n  - python=3.10\n  - pytorch::pytorch=2.1.0\n  - pip:\n    - deepspeed==0.12.6\n    - flash-attn\n"
    deps = _deps("environment.yml", conda)
    assert deps["pytorch"] == ("==2.1.0", 4) and deps["deepspeed"] == ("==0.12.6", 6) and deps["flash-attn"] == ("", 7)


def test_dockerfile_env_and_pip_installs() -> None:
    ff = x("Dockerfile", (
        "FROM nvcr.io/nvidia/pytorch:24.01-py3\n"
        "ENV NCCL_DEBUG=INFO NCCL_IB_DISABLE=0\n"
        "ENV CUDA_DEVICE_MAX_CONNECTIONS 1\n"
        "RUN pip install --no-cache-dir flash-attn==2.5.8 \\\n"
        "    deepspeed && rm -rf /root/.cache\n"
        'CMD ["torchrun", "--nproc_per_node", "8", "train.py"]\n'
    ))
    assert {(e.name, e.value, e.line) for e in ff.envs} == {("NCCL_DEBUG", "INFO", 2), ("NCCL_IB_DISABLE", "0", 2), ("CUDA_DEVICE_MAX_CONNECTIONS", "1", 3)}
    # (each requirement at the physical line that holds it: deepspeed on the continuation line)
    assert {(d.name, d.spec, d.line) for d in ff.deps} == {("flash-attn", "==2.5.8", 4), ("deepspeed", "", 5)}
    [lc] = ff.launches
    assert lc.line == 6 and lc.launcher_args == {"nproc_per_node": 8}


def test_shell_heredoc_configs_become_config_entries_at_their_lines() -> None:
    ff = x("train.slurm", (
        "#!/bin/bash\n"
        "ZERO_STAGE=3\n"
        "config_json=./ds_config.$SLURM_JOBID.json\n"
        "cat <<EOT > $config_json\n"
        "{\n"
        '  "train_micro_batch_size_per_gpu": $MICRO_BATCH_SIZE,\n'
        '  "zero_optimization": {\n'
        '    "stage": $ZERO_STAGE\n'
        "  },\n"
        '  "bf16": {"enabled": true}\n'
        "}\n"
        "EOT\n"
        "cat > accelerate.yaml <<-'EOF'\n"
        "\tdistributed_type: FSDP\n"
        "\tmixed_precision: bf16\n"
        "\tEOF\n"
        "python - <<PY\n"
        "print('torchrun is not launched here')\n"
        "PY\n"
        "deepspeed --num_gpus 8 train.py --deepspeed $config_json\n"
    ))
    e = {c.dotted: c for c in ff.configs}
    assert e["zero_optimization.stage"].value == 3 and e["zero_optimization.stage"].line == 8
    assert e["zero_optimization.stage"].text == '"stage": $ZERO_STAGE'  # the script's own text
    assert e["train_micro_batch_size_per_gpu"].value == "$MICRO_BATCH_SIZE"
    assert e["bf16.enabled"].value is True and e["bf16.enabled"].line == 10
    assert e["distributed_type"].value == "FSDP" and e["mixed_precision"].line == 15
    [launch] = ff.launches
    assert launch.line == 20 and launch.launcher == "deepspeed" and launch.script_args == {"deepspeed": "./ds_config.$SLURM_JOBID.json"}
    # a here-string and a heredoc that is neither JSON nor YAML add nothing
    assert x("a.sh", "cat <<< 'a: 1'\npython - <<PY\nimport torch\nPY\n").configs == []


def test_shell_heredoc_read_into_a_variable_is_the_launch_flags_at_their_lines() -> None:
    """OpenRLHF's launch scripts: ``read -r -d '' training_commands <<EOF`` holds the module and its flags, and
    ``deepspeed --module $training_commands`` runs them; a quoted delimiter keeps ``$VARS`` as written."""
    ff = x("examples/scripts/train_sft.sh", (
        "set -x\n"
        "MAX_LEN=2048\n"
        "read -r -d '' training_commands <<EOF\n"
        "openrlhf.cli.train_sft \\\n"
        "   --data.max_len $MAX_LEN \\\n"
        "   --train.micro_batch_size 2 \\\n"
        "   --ds.packing_samples \\\n"
        "   --model.gradient_checkpointing_enable\n"
        "EOF\n"
        "    # --wandb [WANDB_TOKENS]\n"
        "read -d '' -r quoted <<'EOF'\n"
        "openrlhf.cli.train_rm --data.max_len $MAX_LEN\n"
        "EOF\n"
        "if [[ ${1} != \"slurm\" ]]; then\n"
        "    deepspeed --module $training_commands\n"
        "    deepspeed --module $quoted\n"
        "fi\n"
    ))
    sft, rm = ff.launches
    assert (sft.line, sft.launcher, sft.script) == (15, "deepspeed", "openrlhf.cli.train_sft")
    assert sft.script_args == {"data.max_len": 2048, "train.micro_batch_size": 2, "ds.packing_samples": True,
                               "model.gradient_checkpointing_enable": True}
    assert [sft.arg_line(k) for k in sft.script_args] == [5, 6, 7, 8]
    assert rm.script == "openrlhf.cli.train_rm" and rm.script_args == {"data.max_len": "$MAX_LEN"} and rm.arg_line("data.max_len") == 12


def test_shell_hydra_overrides_are_script_args_written_as_they_are() -> None:
    """verl's launches: ``python3 -m verl.trainer.main_ppo key.path=value ...`` (Hydra overrides, ``+`` adds a key); a
    quoted ``"$var"`` holding spaces stays one value; each flag keeps its line and its spelling for the evidence."""
    ff = x("examples/run_qwen2-7b_megatron.sh", (
        "train_files=\"['$HOME/gsm8k/train.parquet', '$HOME/math/train.parquet']\"\n"
        "python3 -m verl.trainer.main_ppo --config-path=config \\\n"
        "    --config-name='ppo_megatron_trainer.yaml' \\\n"
        "    data.train_files=\"$train_files\" \\\n"
        "    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n"
        "    +actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full \\\n"
        "    ~trainer.logger \\\n"
        "    trainer.n_gpus_per_node=8 $@\n"
        "python train.py --ds.zero_stage 3 --bf16\n"
    ))
    verl, ds = ff.launches
    assert verl.script == "verl.trainer.main_ppo"
    assert verl.script_args["actor_rollout_ref.actor.megatron.tensor_model_parallel_size"] == 2
    assert verl.script_args["actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity"] == "full"
    assert verl.script_args["data.train_files"] == "[$HOME/gsm8k/train.parquet, $HOME/math/train.parquet]"
    assert verl.script_args["trainer.n_gpus_per_node"] == 8 and "trainer.logger" not in verl.script_args
    assert verl.arg_line("actor_rollout_ref.actor.megatron.tensor_model_parallel_size") == 5
    assert verl.arg_text["actor_rollout_ref.actor.megatron.tensor_model_parallel_size"] == (
        "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2")
    assert ds.arg_text == {"ds.zero_stage": "--ds.zero_stage 3", "bf16": "--bf16"}


def test_shell_ray_job_submit_runs_the_command_after_the_double_dash() -> None:
    """slime's launches: ``ray job submit --address=... -- python3 train.py --flags ${ARRAY[@]}``: the entrypoint after
    ``--`` is the launch (Ray a wrapper), and an array no line of the file fills is no flag's value."""
    ff = x("scripts/run.sh", (
        "PERF_ARGS=(\n   --tensor-model-parallel-size 2\n   --sequence-parallel\n)\n"
        "ray job submit --address=\"http://127.0.0.1:8265\" \\\n   -- python3 train.py \\\n"
        "   --actor-num-gpus-per-node 8 \\\n   --colocate \\\n   ${MODEL_ARGS[@]} \\\n   ${PERF_ARGS[@]}\n"
        "ray stop --force\n"
    ))
    job, stop = ff.launches
    assert (job.launcher, job.script, job.wrappers) == ("python", "train.py", ("ray",))
    assert job.script_args == {"actor_num_gpus_per_node": 8, "colocate": True, "tensor_model_parallel_size": 2,
                               "sequence_parallel": True}
    assert job.arg_line("tensor_model_parallel_size") == 2 and job.arg_line("actor_num_gpus_per_node") == 7
    assert stop.launcher == "ray"


def test_an_interval_flag_inside_a_compound_test_stands_for_its_modulus() -> None:
    """smollm's m4 trainer: ``is_opt_to_save_model = curr_opt_step % hparams.train_saving_opt_steps == 0``, forced to True
    under a save-switch ``if``, then ``if not opt_step_is_saved and (finished_training or is_opt_to_save_model):``."""
    ff = x("vision/m4/training/trainer.py", (
        "class Trainer:\n"
        "    def _maybe_save(self, curr_opt_step, finished_training, opt_step_is_saved):\n"
        "        is_opt_to_save_model = curr_opt_step != 0 and curr_opt_step % self.hparams.train_saving_opt_steps == 0\n"
        "        if self.hparams.save_switch_path is not None:\n"
        "            is_opt_to_save_model = True\n"
        "        if not opt_step_is_saved and (finished_training or is_opt_to_save_model):\n"
        "            self._save(curr_opt_step)\n"
    ))
    [save] = [c for c in ff.calls if c.name.endswith("_save")]
    assert save.guard == ("not opt_step_is_saved and (finished_training or (curr_opt_step != 0 and curr_opt_step % "
                          "self.hparams.train_saving_opt_steps == 0))"), save.guard


def test_notebook_code_cells_at_their_file_lines() -> None:
    import json

    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["Try `torch.compile(model)` and bf16 later.\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["!pip install -q peft==0.10.0\n", "import torch\n", "from transformers import TrainingArguments\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["%%time\n", "await train(\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": [
            "args = TrainingArguments(output_dir='out',\n", "                         bf16=True)\n", "model = torch.compile(model)"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(nb, indent=1)
    lines = text.split("\n")
    ff = x("notebooks/sft.ipynb", text)
    assert ff.kind == "notebook" and ff.error is None
    calls = {c.name: c for c in ff.calls}
    ta = calls["transformers.TrainingArguments"]
    assert ta.kwargs["bf16"] is True and "TrainingArguments(output_dir" in lines[ta.line - 1] and "bf16=True" in lines[ta.kw_line("bf16") - 1]
    assert "torch.compile(model)" in lines[calls["torch.compile"].line - 1]
    assert len([c for c in ff.calls if c.name == "torch.compile"]) == 1  # not from the markdown cell
    [dep] = ff.deps
    assert dep.name == "peft" and "pip install" in lines[dep.line - 1]
    assert x("broken.ipynb", "{not json").error.startswith("notebook is not valid JSON")


def test_notebook_runs_through_the_checks() -> None:
    import json

    from checks.engine import audit_files

    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": [
        "from transformers import TrainingArguments\n", "args = TrainingArguments(output_dir='o', bf16=True)\n"]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    audit = audit_files([("train.ipynb", json.dumps(nb, indent=1).encode())])
    c1 = audit.result("C1")
    assert c1.status.value == "used" and c1.evidence[0].path == "train.ipynb"


def test_keyword_lines_of_multi_line_calls() -> None:
    ff = x("train.py", (
        "from transformers import TrainingArguments\n"
        "args = TrainingArguments(output_dir='out', bf16=True,\n"
        "    save_steps=500,\n"
        "    logging_steps=10)\n"
    ))
    [c] = [c for c in ff.calls if c.short == "TrainingArguments"]
    assert c.line == 2
    assert c.kw_line("output_dir") == 2 and c.kw_line("bf16") == 2
    assert c.kw_line("save_steps") == 3 and c.kw_line("logging_steps") == 4
    assert set(c.kw_lines) == {"save_steps", "logging_steps"}  # same-line keywords are not stored


def test_equal_lines_share_one_string_within_a_scan() -> None:
    from checks.engine import build_facts

    body = "import torch\nx = torch.ones(3)\n"
    facts = build_facts([("a.py", body.encode()), ("b.py", body.encode()), ("c.yaml", b"bf16: true\n"), ("d.yaml", b"bf16: true\n")])
    a, b = (facts.files[p].calls[0] for p in ("a.py", "b.py"))
    assert a.text == b.text == "x = torch.ones(3)" and a.text is b.text
    c, d = (facts.files[p].configs[0] for p in ("c.yaml", "d.yaml"))
    assert c.text is d.text and c.keys[0] is d.keys[0]


def test_queries_over_several_names_keep_repository_order() -> None:
    from checks.engine import build_facts
    from checks.facts.store import name_matches

    files = [
        ("b.py", b"import torch\nfrom torch.nn.attention import SDPBackend\nk = SDPBackend.FLASH_ATTENTION\nd = torch.bfloat16\n"),
        ("a.py", b"import torch\nd = torch.float16\nk = torch.bfloat16\n"),
        ("c.py", b"import torch\nx = torch.bfloat16\ny = torch.float16\nz = torch.bfloat16\n"),
    ]
    facts = build_facts(files)
    patterns = ("torch.float16", "torch.bfloat16", "SDPBackend.FLASH_ATTENTION")
    got = facts.refs(*patterns)
    expected = [r for r in facts.records("refs") if any(name_matches(r.name, p) for p in patterns)]
    assert [(r.path, r.line) for r in got] == [(r.path, r.line) for r in expected]
    assert [r.path for r in got] == ["b.py", "b.py", "a.py", "a.py", "c.py", "c.py", "c.py"]  # scan order, not sorted by path


def test_a_path_seen_twice_keeps_the_last_copy() -> None:
    """A tar archive may repeat an entry; extraction keeps the last one, and so does the scan."""
    from checks.engine import build_facts

    facts = build_facts([("t.py", b"import torch\ntorch.compile(m)\n"), ("t.py", b"import torch\nx = 1\n")])
    assert list(facts.files) == ["t.py"]
    assert facts.calls("torch.compile") == [] and facts.records("calls") == []


def test_config_under_finds_sections_at_any_depth_in_scan_order() -> None:
    from checks.engine import build_facts

    facts = build_facts([
        ("b.json", b'{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}, "bf16": {"enabled": true}}'),
        ("a.yaml", b"deepspeed:\n  zero_optimization:\n    stage: 2\nfsdp_config:\n  fsdp_offload_params: true\n"),
        ("c.yaml", b"zero_optimization: 1\n"),  # a scalar: nothing below it
    ])
    got = [(e.path, e.dotted) for e in facts.config_under("zero_optimization", "fsdp_config")]
    assert got == [
        ("b.json", "zero_optimization.stage"), ("b.json", "zero_optimization.offload_param"),
        ("b.json", "zero_optimization.offload_param.device"),
        ("a.yaml", "deepspeed.zero_optimization.stage"), ("a.yaml", "fsdp_config.fsdp_offload_params"),
    ]
    assert [e.dotted for e in facts.config_under("deepspeed.zero_optimization")] == ["deepspeed.zero_optimization.stage"]
    assert facts.config_under("offload_param.device") == []  # nothing below a leaf


def test_resolve_file_by_reference() -> None:
    from checks.engine import build_facts
    from checks.rules.a_parallelism import resolve_file

    facts = build_facts([("configs/ds/zero3.json", b"{}"), ("scripts/zero3.json", b"{}"), ("ds.json", b"{}")])
    assert resolve_file(facts, "./configs/ds/zero3.json") == "configs/ds/zero3.json"
    assert resolve_file(facts, "ds/zero3.json") == "configs/ds/zero3.json"
    assert resolve_file(facts, "zero3.json") == "configs/ds/zero3.json"  # the first in scan order
    assert resolve_file(facts, "/workspace/repo/ds.json") == "ds.json"
    assert resolve_file(facts, "$CFG/ds.json") is None and resolve_file(facts, "missing.json") is None


def test_calls_where_tests_name_segments_in_scan_order_with_suppressions() -> None:
    from checks.engine import build_facts

    facts = build_facts([
        ("b.py", b"from x import use_flash_attn, patch_sdpa\nuse_flash_attn(m)\nprint(1)\npatch_sdpa(m)  # accel-ignore: D1\n"),
        ("a.py", b"from y import patch_sdpa\npatch_sdpa(m)\n"),
    ])
    def hit(s: str) -> bool:
        return "flash" in s or "sdpa" in s

    assert [(c.path, c.line) for c in facts.calls_where(hit)] == [("b.py", 2), ("b.py", 4), ("a.py", 2)]
    assert [(c.path, c.line) for c in facts.for_check("D1").calls_where(hit)] == [("b.py", 2), ("a.py", 2)]
    assert facts.calls_where(lambda s: s == "nothing") == []


def test_parse_expr_of_guard_texts() -> None:
    from checks.rules._helpers import guard_flags, parse_expr

    assert guard_flags("args.compile and not (self.eval)") == [("compile", False), ("eval", True)]
    assert parse_expr("a and (") is None and parse_expr("x\x00") is None  # a null byte: ValueError, not a crash
    assert parse_expr("step % args.accum == 0") is parse_expr("step % args.accum == 0")  # parsed once


def test_an_audit_leaves_the_garbage_collector_as_it_found_it() -> None:
    import gc

    from checks.engine import audit_files

    assert gc.isenabled() and gc.get_freeze_count() == 0
    audit = audit_files([("train.py", b"import torch\nmodel = torch.compile(model)\n")])
    assert audit.result("D2").status.value in {"used", "partial"}
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_facts_loaded_from_the_cache_share_texts_and_lines(tmp_path) -> None:
    from checks.engine import DirFactsCache, build_facts

    body = ("import torch\n" + "\n" * 300 + "x = torch.ones(3)\n").encode()
    files = [("a.py", body), ("b.py", body)]
    cache = DirFactsCache(tmp_path)
    build_facts(files, cache=cache)  # fills the cache
    warm = build_facts(files, cache=cache)  # every file from the cache
    a, b = (warm.files[p].calls[0] for p in ("a.py", "b.py"))
    assert a.text == "x = torch.ones(3)" and a.text is b.text
    assert a.line == 302 and a.line is b.line


def test_python_a_floor_under_a_computed_value_is_not_a_setting() -> None:
    # ``if logging_steps == 0: logging_steps = 1`` guards tiny data; the cap ``if logging_steps > 25`` is what runs
    ff = x("trainer/utils.py", (
        "def configure_logging_steps(config, train_data):\n"
        "    logging_steps = int(0.2 * len(train_data) / config.batch_size)\n"
        "    if logging_steps == 0:\n        logging_steps = 1\n"
        "    if 1 > logging_steps:\n        logging_steps = 1\n"
        "    if logging_steps > 25:\n        logging_steps = 25\n"
        "    if fast:\n        logging_steps = 5\n"
        "    return logging_steps\n"))
    assert sorted((a.line, a.value) for a in ff.assigns if a.name == "logging_steps") == [(8, 25), (10, 5)]


def test_a_local_initialised_to_none_and_computed_later_is_no_setting() -> None:
    """olmo-core's forward: ``max_doc_len: Optional[int] = None`` then ``max_doc_len = max(max_doc_lens)`` in a branch. The
    None is a placeholder for a computed value; read as a setting it became the 'switch that is off' a check cited. A None
    that stays None, and a module-level None, are still recorded."""
    ff = x("src/olmo_core/nn/transformer/model.py", (
        "from typing import Optional\n\n\n"
        "def forward(self, input_ids, **kwargs):\n"
        "    max_doc_len: Optional[int] = None\n"
        "    cp_group = None\n"
        "    if (max_doc_lens := kwargs.pop('max_doc_lens', None)) is not None:\n"
        "        max_doc_len = max(max_doc_lens)\n"
        "    return self.blocks(input_ids, max_doc_len=max_doc_len, cp_group=cp_group)\n\n\n"
        "ATTN_BACKEND = None\n"
    ))
    names = {a.name for a in ff.assigns}
    assert "max_doc_len" not in names
    assert {"cp_group", "ATTN_BACKEND"} <= names


def test_early_exits_inside_both_arms_of_an_if_else_guard_what_follows() -> None:
    # xtuner v1 ``Trainer._maybe_save``: each arm returns early unless its own condition holds
    ff = x("trainer.py", (
        "def maybe_save(self):\n"
        "    if interval == -1:\n"
        "        if step != total:\n            return False\n"
        "    else:\n"
        "        if step % interval != 0:\n            return False\n"
        "    torch.save(state, path)\n"
        "    if fast:\n        return True\n    else:\n        log('slow')\n"
        "    finish()\n"
    ))
    save = next(c for c in ff.calls if c.name == "torch.save")
    assert save.guard == "(((interval == -1) and not (step != total)) or (not (interval == -1) and not (step % interval != 0)))"
    # an arm that always returns leaves only the other arm's condition; an if/else without early exits adds nothing
    finish = next(c for c in ff.calls if c.name == "finish")
    assert finish.guard == save.guard + " and (not (fast))"


def test_a_command_built_in_a_variable_and_run_by_eval_is_a_launch() -> None:
    # Megatron-DeepSpeed's examples_deepspeed/MoE/*.sh: flags in quoted strings, the command in run_cmd, run by eval
    ff = x("examples/MoE/pretrain_moe.sh", (
        "EP_SIZE=128\nEP_PARALLEL_SIZE=$EP_SIZE\n"
        "megatron_options=\" \\\n        --tensor-model-parallel-size 1 \\\n"
        "        --moe-expert-parallel-size ${EP_PARALLEL_SIZE} \\\n        --num-experts ${EP_SIZE}\"\n"
        "run_cmd=\"deepspeed ${DIR}/../../pretrain_gpt.py ${megatron_options} &> ${OUTPUT_BASEPATH}/log/run.log\"\n"
        "echo ${run_cmd}\neval ${run_cmd}\n"
    ))
    [launch] = ff.launches
    assert launch.launcher == "deepspeed" and launch.script.endswith("pretrain_gpt.py") and "eval" in launch.wrappers
    assert launch.script_args["moe_expert_parallel_size"] == 128 and launch.script_args["num_experts"] == 128
    # each flag at the line it is written on, through both variables; the redirection is no flag's value
    assert launch.arg_line("tensor_model_parallel_size") == 4 and launch.arg_line("num_experts") == 6


def test_a_flag_list_appended_to_in_a_branch_keeps_every_flags_line() -> None:
    ff = x("run.sh", (
        'opts=" \\\n        --num-layers 2 \\\n        --kd"\n'
        'if [ "${CKPT}" = "true" ]; then\nopts="${opts} \\\n        --checkpoint-activations"\nfi\n'
        'run_cmd="deepspeed pretrain_gpt.py ${opts} &> ${LOG}/run.log"\neval ${run_cmd}\n'
    ))
    [launch] = ff.launches
    assert {k: launch.arg_line(k) for k in launch.script_args} == {"num_layers": 2, "kd": 3, "checkpoint_activations": 6}
    assert launch.script_args["checkpoint_activations"] is True


def test_a_local_bound_to_an_imported_name_is_read_through() -> None:
    # mistral-finetune ``_train``: ``param_dtype = torch.bfloat16`` then ``prepare_mixed_precision(..., param_dtype=param_dtype)``
    ff = x("train.py", (
        "import torch\n\n\ndef _train(model):\n    param_dtype = torch.bfloat16\n"
        "    prepare_mixed_precision(model.parameters(), param_dtype=param_dtype)\n    dtype = compute()\n    f(dtype=dtype)\n"
    ))
    prep = next(c for c in ff.calls if c.name.endswith("prepare_mixed_precision"))
    assert prep.kwargs["param_dtype"].dotted == "torch.bfloat16"
    other = next(c for c in ff.calls if c.name == "f")
    assert other.kwargs["dtype"].dotted is None and other.kwargs["dtype"].ref == "dtype"


def test_a_json_config_template_reads_its_literal_settings() -> None:
    # Megatron-DeepSpeed ``ds_config_gpt_slw_TEMPLATE.json``: placeholders a launch script fills with sed
    ff = x("examples/curriculum_learning/ds_config_gpt_slw_TEMPLATE.json", (
        '{\n  "train_batch_size": GBSIZE,\n  "zero_optimization": {\n    "stage": ZERO_STAGE\n  },\n'
        '  "curriculum_learning": {\n    "enabled": true,\n    "curriculum_type": "seqlen",\n    "max_difficulty": CONFIG_CL_MAX\n  }\n}\n'
    ))
    assert ff.error is None
    got = {e.dotted: (e.value, e.line) for e in ff.configs}
    assert got["curriculum_learning.enabled"] == (True, 7) and got["curriculum_learning.curriculum_type"] == ("seqlen", 8)
    assert got["zero_optimization.stage"] == ("${ZERO_STAGE}", 4)
    assert x("broken.json", '{\n  "a": 1,,\n}\n').error is not None  # not a template: still an error
