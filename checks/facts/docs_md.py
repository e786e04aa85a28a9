"""Facts documented in prose (README, docs/*.md/.qmd/.rst): only what a check needs to know that the code cannot show.

Three kinds. ``multi_node``: a documented multi-node launch (E1: GPUDirect RDMA matters only for multi-node training,
and many projects document their multi-node launch only in Markdown). ``command`` / ``command_file``: the script and
the files (recipes, configs) a documented training command runs, from the shell code blocks of a README
(``torchrun --nproc_per_node 8 src/train.py --config configs/a.yaml``, ``llamafactory-cli train examples/x.yaml``):
:mod:`checks.roles` takes them as entry points of the training path. The same commands are kept as launches of their
own (``doc_launches``), apart from the shipped ones: they are the run's settings only when the repository ships no
launch at all (Stanford Alpaca's ``torchrun ... train.py --bf16 True --fsdp "full_shard auto_wrap"`` in its README is
the only place its run is configured, see :meth:`checks.facts.store.Facts.documented_runs`); a repository that ships a
launch keeps the rule that a README is not use. ``model``: the base checkpoint a documented training run starts from (``base_model:`` in a README's
YAML config block, ``--model_name_or_path`` of a README's training command): the overview names it, and sizes the model
by that name, when no config of the training path names one.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import yaml

from ..lazyre import lazy_compile
from .shell import extract_shell_text
from .types import DocHint, FileFacts

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# a count of nodes > 1, or a variable that holds it
_NODES = r"(\d+|\$\{?\w+\}?|<[\w -]+>)"
_MULTI_NODE = (
    lazy_compile(rf"--nnodes[= ]+{_NODES}"),
    lazy_compile(rf"--(?:[\w-]+\.)*num[-_]nodes[= ]+{_NODES}"),  # also a dotted config override: --launch.num_nodes=2
    lazy_compile(rf"--num[-_]machines[= ]+{_NODES}"),
    lazy_compile(rf"\bnum_machines:\s*{_NODES}"),
    lazy_compile(rf"\bnnodes\s*[=:]\s*{_NODES}"),  # TorchrunArgs(nnodes = 2, ...) in a Python example, nnodes: 2 in YAML
    # a Hydra/OmegaConf override of a config's node count (AReaL's README: ``python3 examples/math/gsm8k_rl.py --config x.yaml
    # cluster.n_nodes=2 cluster.n_gpus_per_node=8 scheduler.type=ray``)
    lazy_compile(rf"(?<![\w.-])(?:[\w-]+\.)+(?:n_nodes|num_nodes|nnodes)={_NODES}"),
    lazy_compile(rf"#SBATCH\s+(?:--nodes[= ]|-N\s*){_NODES}"),
    lazy_compile(rf"\bsrun\b.*\s(?:-N\s*|--nodes[= ]){_NODES}"),
    # a batch job submitted on several nodes (open-r1's README: ``sbatch --nodes=2 slurm/train.slurm --model ...``)
    lazy_compile(rf"\bsbatch\b.*\s(?:-N\s*|--nodes[= ]){_NODES}"),
    lazy_compile(r"\s--hostfile[= ]+\S+"),
    # a hostfile named in a config (GPT-NeoX's README: 'pass in the path to the hostfile with "hostfile": "/path/to/hostfile"')
    lazy_compile(r"[\"']hostfile[\"']\s*:\s*[\"'][^\"']+[\"']"),
    # a node count passed to a launcher wrapper through the environment (LLaMA-Factory's ``FORCE_TORCHRUN=1 NNODES=2
    # NODE_RANK=0 ... llamafactory-cli train x.yaml``; an elastic ``MAX_NNODES=3``)
    lazy_compile(rf"(?<![\w$])(?:MAX_)?(?:NNODES|NUM_NODES|N_NODES)={_NODES}"),
    # prose that points at a multi-node batch script (modalities' README: "For a multinode training with slurm, see the
    # example sbatch-file container/slurm_singularity.sbatch"): the launch is documented, only not inlined
    lazy_compile(r"\bmulti[- ]?node\b[^.]*?\s[\w./-]+\.(?:sbatch|slurm)\b", re.I),
    # a command run on each node with its rank and the rendezvous address (llm-foundry's README: ``composer --world_size 16
    # --node_rank 0 --master_addr 0.0.0.0 --master_port 7501 train.py yamls/pretrain/mpt-125m.yaml``): joining nodes is its purpose
    lazy_compile(r"\s--(?:node|machine)[_-]rank[= ]+\S+(?=.*\s--(?:master[_-]addr|main[_-]process[_-]ip)\b)"),
    # prose that has the user fill in a DeepSpeed hostfile for several machines (Nanbeige's README: "modify the config/hostfile
    # based on the cluster setup. If using multiple machines and multiple GPUs, ..."; "修改 config/hostfile，如果是多机多卡"):
    # its ``deepspeed main.py`` launch names no node count, so the hostfile decides it
    lazy_compile(r"\bhostfile\b(?=.*(?:\bmultiple (?:machines|nodes)\b|\bmulti[- ]?node\b|多机|多节点))"
                 r"|(?:\bmultiple (?:machines|nodes)\b|\bmulti[- ]?node\b|多机|多节点).*\bhostfile\b", re.I),
)


#: a documented command that runs a tool, not training (verl ``torchrun --nnodes 8 ... -m verl.model_merger merge``; a
#: distributed forward pass that fills an offline cache, NeMo AutoModel ``-m nemo_automodel.recipes.llm.precompute_dspark_dist``)
_NON_TRAINING_CMD = lazy_compile(r"(-m\s+[\w.]*(merg|convert|export|eval|infer|serv|precompute)[\w.]*"
                               r"|[\w/.-]*(merg|convert|export|eval|infer|serv|precompute)\w*\.py\b)", re.I)
#: a tool module whose usage text documents that tool's own launch (verl ``model_merger/__main__.py``)
_TOOL_PATH = lazy_compile(r"(merg|convert|export|infer|serv|ckpt|checkpoint|precompute)", re.I)


def _many(token: str | None, lines: list[str] | None = None, i: int = 0) -> bool:
    if token is None:
        return True  # --hostfile: a list of hosts
    if token.isdigit():
        return int(token) > 1
    # $NNODES: the documented command is meant for several nodes, unless the same code block sets it to one right above
    # (CPM-Bee's README: ``NNODES=1`` a few lines over ``torchrun --nnodes=${NNODES} ...``)
    name = token.strip("${}")
    if lines is not None and name.isidentifier():
        for j in range(i - 2, max(i - 200, 0) - 1, -1):
            t = lines[j].strip()
            if t.startswith("```"):
                break
            m = _NODES_SET.match(t)
            if m and m.group(1) == name:
                return not m.group(2).isdigit() or int(m.group(2)) > 1
    return True


#: a shell assignment of a node count (``NNODES=1``, ``export NUM_NODES=4``)
_NODES_SET = lazy_compile(r"^(?:export\s+)?(\w+)=[\"']?(\$?\{?[\w:-]+\}?)[\"']?\s*(?:#.*)?$")


def extract_doc_hints(path: str, text: str, out: FileFacts) -> None:
    """Documented multi-node launches, one hint per line (the first matching form)."""
    if not any(k in text for k in ("nnodes", "nodes", "NODES", "machines", "SBATCH", "hostfile", "srun", ".sbatch", ".slurm", "_rank")):
        return
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        _multi_node_hint(path, i, line, out, lines)


def _command(lines: list[str], i: int) -> str:
    """Line ``i`` (1-based) with the lines a trailing backslash continues it onto (at most 40): the whole command, whose
    module or script may come lines after its ``--nnodes``."""
    parts = [lines[i - 1]]
    while parts[-1].rstrip().endswith("\\") and i < len(lines) and len(parts) < 40:
        parts.append(lines[i])
        i += 1
    return " ".join(parts)


#: an ``srun`` with more tasks than it runs on one node (Lumina-mGPT's TRAIN.md: ``srun -n32 --ntasks-per-node=8 --gres=gpu:8
#: bash exps/7B.sh``: 32 ranks, 8 a node, so 4 nodes)
_SRUN_TASKS = lazy_compile(r"\bsrun\b.*?\s(?:-n\s*|--ntasks[= ])(\d+)\b")
_SRUN_PER_NODE = lazy_compile(r"\s--ntasks-per-node[= ](\d+)\b")


def _srun_nodes(line: str) -> str | None:
    """``srun -n32 --ntasks-per-node=8``: the tasks over the tasks of a node, as the hint's value, when more than one node."""
    m, per = _SRUN_TASKS.search(line), _SRUN_PER_NODE.search(line)
    if m is None or per is None or int(per.group(1)) < 1 or int(m.group(1)) <= int(per.group(1)):
        return None
    nodes = -(-int(m.group(1)) // int(per.group(1)))
    return f"srun {m.group(1)} tasks, {per.group(1)} per node ({nodes} nodes)"


def _multi_node_hint(path: str, i: int, line: str, out: FileFacts, lines: list[str] | None = None) -> None:
    """The first multi-node form on a line, as a hint; none for a command that runs a tool rather than training (its
    continuation lines included, see :func:`_command`)."""
    if "srun" in line and (tasks := _srun_nodes(line)) is not None:
        if not _NON_TRAINING_CMD.search(line):
            out.doc_hints.append(DocHint(path, i, "multi_node", tasks, line.strip()[:300]))
        return
    for pat in _MULTI_NODE:
        m = pat.search(line)
        if m and _many(m.group(1) if m.groups() else None, lines, i):
            if not _NON_TRAINING_CMD.search(_command(lines, i) if lines is not None and line.rstrip().endswith("\\") else line):
                out.doc_hints.append(DocHint(path, i, "multi_node", m.group(0).strip(), line.strip()[:300]))
            return


#: a module-level string that is a command-line tool's usage text (xtuner ``CLI_HELP_MSG``, ``USAGE``, ``EPILOG``, ``__doc__``)
_USAGE_NAME = lazy_compile(r"(^|_)(HELP|USAGE|EPILOG|DOC)(_|$)|^__doc__$", re.I)
_MULTI_NODE_WORDS = ("nnodes", "NNODES", "NUM_NODES", "num_nodes", "num-nodes", "num_machines", "num-machines", "SBATCH", "hostfile", "srun")


def _may_name_nodes(text: str) -> bool:
    """Whether ``text`` has a piece of every one of :data:`_MULTI_NODE_WORDS` (``nodes`` of ``num_nodes``, ``NODES``,
    ``machines``...): six substring scans that let 97 % of a repository's Python files skip the ten of the words
    (Megatron-LM: 0.09 -> 0.07 s)."""
    return "nodes" in text or "NODES" in text or "machines" in text or "SBATCH" in text or "hostfile" in text or "srun" in text


def extract_usage_hints(path: str, text: str, tree: ast.Module | None, out: FileFacts) -> None:
    """Multi-node launches documented in a Python tool's usage text: the module docstring, or a string assigned to a
    ``*_HELP*``/``USAGE``/``EPILOG`` name at module level or inside a module-level function (xtuner entry_point.py:45 ``NPROC_PER_NODE=$NGPUS NNODES=$NNODES
    ... xtuner dist_train``). Prose, as a README is: a hint, never a launch."""
    # substring tests first: a regex alternation over every Python file's text cost 0.1 s on Megatron-LM
    if tree is None or not _may_name_nodes(text) or not any(w in text for w in _MULTI_NODE_WORDS) \
            or _TOOL_PATH.search("/".join(path.rsplit("/", 2)[-2:])):
        return
    lines = text.splitlines()
    spans: list[tuple[int, int]] = []
    for i, node in enumerate(tree.body):
        value, names = None, []
        if isinstance(node, ast.Assign):
            value, names = node.value, [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            value, names = node.value, [node.target.id]
        elif i == 0 and isinstance(node, ast.Expr):
            value, names = node.value, ["__doc__"]
        if not isinstance(value, (ast.Constant, ast.JoinedStr)) or (isinstance(value, ast.Constant) and not isinstance(value.value, str)):
            continue
        if any(_USAGE_NAME.search(n) for n in names):
            spans.append((value.lineno, getattr(value, "end_lineno", None) or value.lineno))
    # a usage text a module-level function builds before printing it (OLMo-core internal/experiment.py ``main()``:
    # ``usage = f"""... $ python {sys.argv[0]} launch run01 ai2/pluto-cirrascale --launch.num_nodes=2"""``)
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for sub in ast.walk(node):
            if not (isinstance(sub, ast.Assign) and any(isinstance(t, ast.Name) and _USAGE_NAME.search(t.id) for t in sub.targets)):
                continue
            value = sub.value
            if isinstance(value, ast.Call):  # ``f"""...""".strip()``, ``textwrap.dedent("""...""")``
                fn = value.func
                value = fn.value if isinstance(fn, ast.Attribute) and not value.args else (value.args[0] if value.args else value)
            if isinstance(value, ast.JoinedStr) or (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                spans.append((value.lineno, getattr(value, "end_lineno", None) or value.lineno))
    for start, end in spans:
        for i in range(start, min(end, len(lines)) + 1):
            _multi_node_hint(path, i, lines[i - 1], out, lines)


#: torchrun's multi-node flags as a launcher module writes them into the command it builds
_BUILT_NODES = lazy_compile(rf"--nnodes[= ]+{_NODES}")
_BUILT_RANK = lazy_compile(r"--node[_-]rank\b")
_BUILT_RENDEZVOUS = lazy_compile(r"--(?:master|rdzv)[_-](?:addr|endpoint)\b")
#: ... into the command of a launcher that starts training processes (not a vLLM server's own ``--nnodes``)
_BUILT_LAUNCHER = lazy_compile(r"\btorchrun\b|\btorch\.distributed\.(?:run|launch)\b")


def extract_launcher_hints(path: str, text: str, tree: ast.Module | None, out: FileFacts) -> None:
    """A multi-node launch the project's own launcher builds: a function whose string literals and f-strings write
    torchrun's ``--nnodes`` (more than one node, or a value it fills in) with a ``--node_rank`` and a rendezvous address, in
    a command that starts ``torchrun``
    (NeMo AutoModel's SkyPilot launcher: ``parts += ["--nnodes=$SKYPILOT_NUM_NODES", "--node_rank=$SKYPILOT_NODE_RANK",
    '--master_addr=...']`` under ``if num_nodes > 1:``). The project offers multi-node runs, as a README that documents one
    does: a hint, never a launch. None for a tool's command (a merge, an export, a precompute), a tool module, or a function
    named for one (``build_vllm_server_cmd``: a vLLM server's nodes are inference, not training)."""
    if tree is None or "--nnodes" not in text or "rank" not in text or _TOOL_PATH.search("/".join(path.rsplit("/", 2)[-2:])):
        return
    seen: set[int] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        words: list[tuple[str, int]] = []
        for node in ast.walk(fn):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                words.append((node.value, node.lineno))
            elif isinstance(node, ast.JoinedStr):
                words.append(("".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "${x}"
                                      for v in node.values), node.lineno))
        whole = " ".join(w for w, _ in words)
        if (not (_BUILT_RANK.search(whole) and _BUILT_RENDEZVOUS.search(whole) and _BUILT_LAUNCHER.search(whole))
                or _NON_TRAINING_CMD.search(whole) or _TOOL_PATH.search(fn.name)):
            continue
        for w, line in words:
            m = _BUILT_NODES.search(w)
            if m and _many(m.group(1)) and line not in seen:
                seen.add(line)
                out.doc_hints.append(DocHint(path, line, "multi_node", f"a launcher builds {m.group(0).strip()} with a node rank "
                                             "and a rendezvous address", w.strip()[:300]))
                break


# a fenced block (``` or ~~~, any indent) and its language; rst ``.. code-block:: bash`` / ``.. code:: console``
_FENCE = lazy_compile(r"^\s*(`{3,}|~{3,})\s*\{?\.?([\w+-]*)")
_RST_BLOCK = lazy_compile(r"^(\s*)\.\.\s+(?:code-block|code|sourcecode)::\s*([\w+-]*)\s*$")
_SHELL_LANGS = frozenset({"", "bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession", "sbatch", "slurm", "text"})
#: launchers that start training whatever script they run; ``python`` counts only for a train*/finetune* script
_TRAIN_LAUNCHERS = frozenset({"torchrun", "deepspeed", "accelerate", "colossalai", "llamafactory", "axolotl", "torchtune", "tune",
                              "composer", "lightning", "litgpt", "nanotron", "mpirun", "srun"})
#: a script a training launcher runs that does something else (``torchrun ... convert_hf.py``, ``export.py``, ``chat.py``)
_NOT_TRAINING = lazy_compile(r"convert|export|infer|generat|eval|bench|serve|server|chat|merge|quantiz|inspect|download|demo|test", re.I)
#: launchers that take a path or ``-m module``; the others' first word is a subcommand (``litgpt chat``, ``tune run``)
_SCRIPT_LAUNCHERS = frozenset({"python", "torchrun", "deepspeed", "accelerate", "colossalai", "mpirun", "srun"})
_TRAIN_SCRIPT = lazy_compile(r"(^|[/._-])((pre)?train\w*|\w*_(pre)?train(ing)?|fine_?tun\w*|finetuning|sft|dpo|grpo|ppo|rlhf|kto|orpo|cpo|bco|simpo|xpo|gkd|rloo|nash_md|reward_model(ing)?)(\.py)?$", re.I)
#: a launch script named for its training stage first and its model after (CuMo's ``sft_mistral_7b.sh`` beside
#: ``pretrain_mistral_7b.sh``), which a README runs with ``bash``
_STAGE_SCRIPT = lazy_compile(r"(^|/)(sft|dpo|grpo|ppo|rlhf|kto|orpo|simpo|rloo)_\w+$", re.I)
#: the folder of a training script (``finetune/``, ``pretrain/``, ``training/``, ``sft/``)
#: a package's main module run with ``python -m`` (``nanoT5.main``, ``pkg.__main__``)
MODULE_MAIN = lazy_compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\.(main|__main__)")
_TRAIN_DIR = lazy_compile(r"(^|/)((pre)?train(ing)?|fine_?tun(e|es|ing)|sft)$", re.I)
# a repository path a command names: a script or a recipe (``examples/train_lora/llama3_lora_sft.yaml``, ``config_yaml=x.yaml``)
_PATH_TOKEN = lazy_compile(r"(?:^|[=\s'\"])((?:\./)?[\w.\-/]*[\w\-]\.(?:py|ya?ml|json|toml|sh))(?=$|[\s'\";,)])")
_MAX_BLOCK_LINES = 400
_INDENTED = lazy_compile(r"^(?: {4}|\t)\S")
#: a block labelled Python that holds a launch command (ChatDoctor's README: ```` ```python ```` over ``torchrun
#: --nproc_per_node=4 --master_port=<your_random_port> train.py \``): its first command starts a launcher
_PY_LANGS = frozenset({"python", "py", "python3"})
_LAUNCH_LINE = lazy_compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:torchrun|deepspeed|accelerate\s+launch|python3?\s+(?:-m\s+)?[\w./-]+\.py"
                            r"|python3?\s+-m\s+[\w.]+|srun|mpirun)(?:\s|$)")


def _shell_in_python_fence(body: str) -> bool:
    """A block labelled Python whose first command is a launch and which is not Python (it does not parse)."""
    first = next((x.strip() for x in body.splitlines() if x.strip() and not x.lstrip().startswith("#")), "")
    if not _LAUNCH_LINE.match(first):
        return False
    try:
        ast.parse(body)
    except (SyntaxError, ValueError):
        return True
    return False


def _blocks(text: str) -> list[tuple[int, str]]:
    """(first line number, body) of each shell-like code block of Markdown or reStructuredText."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        r = None if m else _RST_BLOCK.match(lines[i])
        if m:
            fence, lang = m.group(1), m.group(2).lower()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                j += 1
            if j - i - 1 <= _MAX_BLOCK_LINES and (lang in _SHELL_LANGS or (
                    lang in _PY_LANGS and _shell_in_python_fence("\n".join(lines[i + 1 : j])))):
                out.append((i + 2, "\n".join(lines[i + 1 : j])))
            i = j + 1
            continue
        if r:
            indent, lang = len(r.group(1)), r.group(2).lower()
            j = i + 1
            body: list[str] = []
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
                body.append(lines[j])
                j += 1
            if lang in _SHELL_LANGS and len(body) <= _MAX_BLOCK_LINES:
                width = min((len(x) - len(x.lstrip()) for x in body if x.strip()), default=0)
                out.append((i + 2, "\n".join(x[width:] for x in body)))
            i = j
            continue
        if _INDENTED.match(lines[i]) and (i == 0 or not lines[i - 1].strip()):
            # a Markdown indented code block (four spaces after a blank line)
            j = i
            while j < len(lines) and (_INDENTED.match(lines[j]) or (not lines[j].strip() and j + 1 < len(lines) and _INDENTED.match(lines[j + 1]))):
                j += 1
            if j - i <= _MAX_BLOCK_LINES:
                out.append((i + 1, "\n".join(x[4:] if x.startswith("    ") else x.lstrip("\t") for x in lines[i:j])))
            i = j
            continue
        i += 1
    return out


def _trains(launcher: str, script: str | None) -> bool:
    stem = str(script or "").rsplit("/", 1)[-1].rsplit(".", 1)[0] if str(script or "").endswith(".py") else str(script or "").rsplit(".", 1)[-1]
    if stem and _NOT_TRAINING.search(stem):
        return False
    if launcher in _TRAIN_LAUNCHERS:
        return True
    if launcher != "python" or not script:
        return False
    if MODULE_MAIN.fullmatch(str(script)):
        return True  # ``python -m nanoT5.main``: a package's main module (the roles keep it only if it starts a training run)
    folder, _, name = str(script).strip("'\"").rpartition("/")
    # a script named for training, or one kept in a training folder (lit-llama's README: ``python finetune/lora.py``,
    # ``python pretrain/redpajama.py``)
    return bool(_TRAIN_SCRIPT.search(name.removesuffix(".py"))) or (name.endswith(".py") and bool(_TRAIN_DIR.search(folder)))


#: flags of a documented training command that hand the trainer a sharded/ZeRO setup (a ``command_flag`` doc hint each)
_SHARDING_FLAGS = frozenset({"fsdp", "fsdp_config", "deepspeed", "deepspeed_config", "zero_stage"})
_OFF_VALUES = frozenset({"", "false", "0", "no", "none"})


#: a documented command that runs a shell script of the repository (``bash scripts/train.sh``, ``sh ./run_sft.sh``)
_RUN_SHELL = lazy_compile(r"^\s*(?:\$\s+)?(?:bash|sh)\s+((?:\./)?[\w./-]+\.sh)\b")


def _flag_lines_joined(body: str) -> str:
    """A code block whose command goes on over lines of flags without a trailing backslash (Vary's README: ``deepspeed
    Vary/train/train_qwen_vary.py --deepspeed ...`` then ``--model_name_or_path ...``, ``--bf16 True``, one per line) with
    the backslashes put back: a line that starts with ``--`` is no command of its own, so it can only be the line above's
    flags. Lines keep their numbers (each flag is cited at its own line)."""
    lines = body.split("\n")
    changed = False
    for i in range(1, len(lines)):
        prev = lines[i - 1].rstrip()
        if lines[i].lstrip().startswith("--") and prev and not prev.endswith("\\") and not prev.lstrip().startswith("#"):
            lines[i - 1] = prev + " \\"
            changed = True
    return "\n".join(lines) if changed else body


#: ``cd finetune/llama_full`` in a documented block: the commands below it run from that folder of the repository
_CD = lazy_compile(r"^\s*cd\s+(?:\./)?([\w.][\w./-]*?)/?\s*(?:&&.*)?$")


def _from_folder(launch: Any, cds: list[tuple[int, str]]) -> Any:
    """``launch`` with its bare relative script placed in the folder the block's last ``cd`` above it entered (FireAct's
    README: ``cd finetune/llama_full`` then ``torchrun ... finetune.py``, one of three ``finetune.py`` the repository ships)."""
    script = str(launch.script or "").strip("'\"")
    folder = next((d for ln, d in reversed(cds) if ln <= launch.line), None)
    if not folder or not script.endswith(".py") or script.startswith(("/", "$", "..")) or ".." in folder.split("/"):
        return launch
    return replace(launch, script=posixpath.normpath(f"{folder}/{script.removeprefix('./')}"))


def extract_doc_commands(path: str, text: str, out: FileFacts) -> None:
    """The script and files of each documented training command (``command`` / ``command_file`` hints), and the model it
    starts from (a ``model`` hint per ``--model_name_or_path`` / ``--base_model`` flag).

    The code blocks are parsed as shell into a scratch record: their launches never reach ``out.launches``; a training
    command's launch is kept in ``out.doc_launches``.
    """
    # (an indented Markdown block is a code block too: the DPO reference's README documents its runs only so)
    if "```" not in text and "~~~" not in text and ".. code" not in text and not (
            path.endswith((".md", ".markdown")) and ("\n    " in text or "\n\t" in text)):
        return
    for first, body in _blocks(text):
        for i, line in enumerate(body.splitlines()):
            m = _RUN_SHELL.match(line)
            # ``bash examples/scripts/lmm_r1/train_fre_text.sh``: the README runs the training script it ships
            stem = m.group(1).rsplit(".", 1)[0] if m else ""
            if m and (_TRAIN_SCRIPT.search(stem) or (m.group(1).endswith(".sh") and _STAGE_SCRIPT.search(stem))) \
                    and not _NOT_TRAINING.search(m.group(1).rsplit("/", 1)[-1]):
                out.doc_hints.append(DocHint(path, first + i, "shell_command", m.group(1).removeprefix("./"), line.strip()[:300]))
        scratch = FileFacts(path=path, kind="shell", lines=0)
        try:
            extract_shell_text(path, _flag_lines_joined(body), scratch, first_line=first)
        except Exception:  # a prose block that is not shell: no command from it
            continue
        cds = [(first + i, m.group(1)) for i, line in enumerate(body.splitlines()) if (m := _CD.match(line))]
        for launch in scratch.launches:
            if not _trains(launch.launcher, launch.script):
                continue
            launch = _from_folder(launch, cds)
            shown = launch.text.strip()[:300]
            script = str(launch.script or "").strip("'\"")
            if script and (launch.launcher in _SCRIPT_LAUNCHERS or "/" in script or "." in script):
                out.doc_hints.append(DocHint(path, launch.line, "command", script, shown))
                # (a plain ``python -m pkg.main`` names the entry point only: its README runs the same main to evaluate,
                # convert and try variants, open_clip's ``--val-data ... --pretrained`` runs and its RoBERTa example's
                # ``--lock-text``, so its flags are not read as the run's settings)
                if not (launch.launcher == "python" and MODULE_MAIN.fullmatch(script)):
                    out.doc_launches.append(launch)
            for key, value in launch.script_args.items():
                if str(key).replace("-", "_") in DOC_MODEL_KEYS and isinstance(value, str) and value.strip("'\""):
                    out.doc_hints.append(DocHint(path, launch.arg_line(key), "model", value.strip("'\""), shown))
                # a sharding flag the command hands the trainer (FastChat ``--fsdp "full_shard auto_wrap"``, ``--deepspeed
                # ds.json``), at the command's own line: the command's text is cut at 300 characters, its flags are not
                if str(key).replace("-", "_") in _SHARDING_FLAGS and str(value).strip("'\"").lower() not in _OFF_VALUES:
                    out.doc_hints.append(DocHint(path, launch.line, "command_flag", str(key).replace("-", "_"), shown))
            seen = {str(launch.script)}
            for m in _PATH_TOKEN.finditer(launch.text):
                token = m.group(1)
                stem = token.rsplit("/", 1)[-1].rsplit(".", 1)[0]
                if token not in seen and not _NOT_TRAINING.search(stem):  # ``python train.py config/eval_gpt2.py``: an eval run
                    seen.add(token)
                    out.doc_hints.append(DocHint(path, launch.line, "command_file", token, shown))


_PY_FENCE = lazy_compile(r"^\s*(`{3,}|~{3,})\s*\{?\.?(python|py|python3)\b", re.I)
#: the training entry a documented quickstart hands its config to (``pretrain(cfg, forward_step)``, ``finetune(cfg)``)
_TRAIN_ENTRY = lazy_compile(r"(?i)^(pre)?train(ing)?$|^finetune$|^fine_tune$|^run_training$")


def _fenced(lines: list[str], opening: re.Pattern[str]) -> Iterator[tuple[list[str], int]]:
    """(body lines, line number of the first body line) of each fenced block whose opening line ``opening`` matches
    (its group 1 is the fence, which closes the block)."""
    i = 0
    while i < len(lines):
        m = opening.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(m.group(1)):
            j += 1
        yield lines[i + 1 : j], i + 2
        i = j + 1


def extract_doc_run_recipes(path: str, text: str, out: FileFacts) -> None:
    """``run_recipe`` hints: a Python quickstart that imports a config-building function (``from pkg.recipes.llama import
    llama32_1b_config``), calls it (``cfg = llama32_1b_config()``) and hands the result to a training entry
    (``pretrain(cfg, forward_step)``) names the recipe its run is built from: value ``module:function``."""
    if "```" not in text and "~~~" not in text:
        return
    lines = text.splitlines()
    for block, first in _fenced(lines, _PY_FENCE):
        body = "\n".join(block)
        try:
            tree = ast.parse(body)
        except (SyntaxError, ValueError):
            continue
        imported = {a.asname or a.name: f"{n.module}:{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and n.module and n.level == 0 for a in n.names}
        built: dict[str, tuple[str, int]] = {}  # variable -> (module:function, line)
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Call) \
                    and isinstance(n.value.func, ast.Name) and n.value.func.id in imported:
                built[n.targets[0].id] = (imported[n.value.func.id], first + n.lineno - 1)
        for n in ast.walk(tree):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and _TRAIN_ENTRY.search(n.func.id)):
                continue
            for a in [*n.args, *(k.value for k in n.keywords)]:
                if isinstance(a, ast.Name) and a.id in built:
                    recipe, line = built[a.id]
                    out.doc_hints.append(DocHint(path, line, "run_recipe", recipe, lines[line - 1].strip()[:300]))


#: prose that swaps one documented script for another (LLaVA's and FastChat's READMEs: "replace `llava/train/train_mem.py`
#: above with [llava/train/train_xformers.py](llava/train/train_xformers.py)"): the first is the documented run's script,
#: the second an alternative entry point for other hardware
_REPLACE = lazy_compile(r"(?i)\breplace\s+\[?`?((?:\./)?[\w./-]*[\w-]\.py)`?\]?(?:\([^)\s]*\))?\s+(?:above\s+|in\s+the\s+"
                      r"command(?:s)?\s+above\s+)?with\s+\[?`?((?:\./)?[\w./-]*[\w-]\.py)`?\]?")


def extract_doc_replacements(path: str, text: str, out: FileFacts) -> None:
    """``run_script`` and ``alternative`` hints from prose that replaces one script of the documented run with another
    ("replace `train_mem.py` above with `train_xformers.py`" for GPUs without FlashAttention): the replaced script is what
    the documented run executes, the replacement an alternative entry point beside it (see :mod:`checks.roles`)."""
    if "eplace" not in text:
        return
    for i, line in enumerate(text.splitlines(), 1):
        for m in _REPLACE.finditer(line):
            run, alt = m.group(1).removeprefix("./"), m.group(2).removeprefix("./")
            if run != alt:
                out.doc_hints.append(DocHint(path, i, "run_script", run, line.strip()[:300]))
                out.doc_hints.append(DocHint(path, i, "alternative", alt, line.strip()[:300]))


#: prose that calls a folder the project's previous version (BELLE's train/README.md: "上一版基于deepspeed-chat的代码放在
#: dschat_train_v1目录下，未做任何改动"; "the old version of the code is kept in legacy_train/")
#: NExT-GPT's README: "we wrap the former old codebase into the [NExT-GPT-Lagacy](NExT-GPT-Lagacy)")
_LEGACY_PROSE = lazy_compile(r"上一版|上个版本|旧版|老版本|(previous|old|older|legacy|deprecated|earlier|first|former)\s+(version|release|implementation|code)", re.I)
#: a folder named for being old (``-legacy``, NExT-GPT's misspelt ``-Lagacy``, ``-old``, ``-deprecated``, ``-archive``)
_OLD_NAME = lazy_compile(r"(?i)l[ae]gacy|(^|[-_])old([-_]|$)|deprecated|archive|previous")
#: a folder-like token, ASCII only (prose in Chinese runs into it: "放在dschat_train_v1目录下"); the roles keep only the
#: tokens that are folders of the repository
_FOLDER_TOKEN = lazy_compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/]*[A-Za-z0-9_/]")


def extract_doc_legacy(path: str, text: str, out: FileFacts) -> None:
    """``legacy_dir`` hints: a folder the document calls the project's previous version (value: the token as written;
    :mod:`checks.roles` keeps the folders of the repository it names as archived copies)."""
    if not _LEGACY_PROSE.search(text):
        return
    for i, line in enumerate(text.splitlines(), 1):
        if not _LEGACY_PROSE.search(line):
            continue
        for m in _FOLDER_TOKEN.finditer(line):
            token = m.group(0).strip("/.")
            # (a hyphenated name counts only when it names itself old: NExT-GPT's ``NExT-GPT-Lagacy``, not mPLUG-Owl's
            # "The LLaMA-2 version of mPLUG-Owl ... compared previous version")
            if ("_" in token or "/" in token or any(ch.isdigit() for ch in token) or ("-" in token and _OLD_NAME.search(token))) \
                    and not re.search(r"\.(py|md|json|ya?ml|sh|txt)$", token):
                out.doc_hints.append(DocHint(path, i, "legacy_dir", token, line.strip()[:300]))


#: a Markdown link to a config file of the repository (LIMO's README: "Use our provided [configuration file](https://github.com/
#: GAIR-NLP/LIMO/blob/main/train/examples/train_limo.yaml)"): the repository path after ``/blob/<ref>/``, or a relative target
_CONFIG_LINK = lazy_compile(r"\]\(\s*(?:https?://github\.com/[\w.-]+/[\w.-]+/(?:blob|tree)/[\w.-]+/|\./)?([\w./-]+\.(?:ya?ml|json|toml|sh))\s*\)")


def extract_doc_config_links(path: str, text: str, out: FileFacts) -> None:
    """``config_link`` hints: a config file or launch script the document links to (value: its path in the repository,
    relative to the root for a GitHub URL, as written otherwise; Open-LLaVA-NeXT's "Training script with DeepSpeed ZeRO-2:
    [`finetune.sh`](scripts/v1_6/train/7b/finetune.sh)"); :mod:`checks.roles` keeps a linked recipe of a framework copy's
    examples. A link in a release-news section, a dated news line or a table row is a ``listed_link`` instead: it announces
    or catalogues a recipe, it does not document the way to train (InternVL's "`2025/08/30`: ... a [offline RL
    stage](...stage3_mpo.sh)")."""
    if "](" not in text:
        return
    news = False  # under a "News" / "Updates" / "Changelog" heading: a link there announces, it does not document the run
    for i, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            news = bool(_NEWS_HEADING.search(line))
        if "](" not in line:
            continue
        # (a table row is a catalogue entry: liger-kernel's examples table, oumi's model table)
        kind = "listed_link" if news or _DATED_LINE.match(line) or line.lstrip().startswith("|") else "config_link"
        for m in _CONFIG_LINK.finditer(line):
            out.doc_hints.append(DocHint(path, i, kind, m.group(1).lstrip("/"), line.strip()[:300]))


#: a heading of release news (InternVL's "## News", ROLL's "## 📣 Updates")
_NEWS_HEADING = lazy_compile(r"(?i)\b(news|updates?|changelog|change log|release notes|what'?s new|announcements?)\b")
#: a line that starts with a date, a news item (``- `2025/08/30`: ...``, ``| **[07/31/2025]** ...``)
_DATED_LINE = lazy_compile(r"^[\s|*>+-]*[`*\[(]*\s*(\d{4}[/.-]\d{1,2}([/.-]\d{1,2})?|\d{1,2}[/.-]\d{1,2}[/.-]\d{4})\b")


#: a line that names the file the next code block is (the name in backticks, ``**train.py**``, ``#### train.py``, ``train.py:``)
_BLOCK_NAME = lazy_compile(r"^\s*(?:#+\s*)?[`*_]*((?:\./)?[\w./-]*[\w-]\.py)[`*_]*\s*:?\s*$")
#: a block's own first line naming it (``# train.py``, ``# file: train.py``)
_BLOCK_COMMENT_NAME = lazy_compile(r"^\s*#\s*(?:file(?:name)?\s*:\s*)?((?:\./)?[\w./-]*[\w-]\.py)\s*$", re.I)


def extract_doc_scripts(path: str, text: str, out: FileFacts) -> None:
    """``script_block`` hints: a fenced Python block that the document names as a file (the line before it is only the
    file name, in backticks or bold or as a heading, or its first line is ``# train.py``) and that is a script (an ``if __name__ ==
    "__main__":`` block): the document gives the whole script a command of its own runs (xllm's README: the four-line
    ``train.py`` that calls the package's ``cli_run_train``, then ``deepspeed --num_gpus=8 train.py --deepspeed_stage 2``).
    Value: the file name as written."""
    if "```" not in text and "~~~" not in text:
        return
    lines = text.splitlines()
    for block, first in _fenced(lines, _PY_FENCE):
        if "__main__" not in "\n".join(block):
            continue
        try:
            tree = ast.parse("\n".join(block))
        except (SyntaxError, ValueError):
            continue
        if not any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body):
            continue
        k = first - 1 + next((n for n, x in enumerate(block) if x.strip()), 0)  # the block's first line (0-based)
        m = _BLOCK_COMMENT_NAME.match(lines[k]) if k < len(lines) else None
        if m is None:
            k = first - 3  # the line before the fence (0-based)
            while k >= 0 and not lines[k].strip():
                k -= 1
            m = _BLOCK_NAME.match(lines[k]) if k >= 0 else None
        if m:
            out.doc_hints.append(DocHint(path, k + 1, "script_block", m.group(1).removeprefix("./"), lines[k].strip()[:300]))


#: the keys a documented run names its base checkpoint with (a README's YAML config or training command)
DOC_MODEL_KEYS = frozenset({"base_model", "model_name_or_path", "pretrained_model_name_or_path", "base_model_name_or_path"})
#: keys only a training config holds: a YAML block with one of them (at any depth) is the config of a documented run, not a
#: serving or evaluation config that also names a model
_RUN_KEYS = frozenset({"trainer", "training", "learning_rate", "lr", "epochs", "num_epochs", "num_train_epochs", "max_steps",
                       "micro_batch_size", "per_device_train_batch_size", "gradient_accumulation_steps", "finetuning_type",
                       "do_train", "train_batch_size", "global_batch_size"})
_YAML_FENCE = lazy_compile(r"^\s*(`{3,}|~{3,})\s*\{?\.?(yaml|yml)\s*\}?\s*$", re.I)


def _keys(node: Any, depth: int = 0) -> set[str]:
    """Every mapping key of a parsed YAML document, to a few levels."""
    if depth > 4:
        return set()
    if isinstance(node, dict):
        return {str(k) for k in node} | {k for v in node.values() for k in _keys(v, depth + 1)}
    if isinstance(node, list):
        return {k for v in node[:50] for k in _keys(v, depth + 1)}
    return set()


def extract_doc_run_models(path: str, text: str, out: FileFacts) -> None:
    """``model`` hints from a documented run's YAML config: a fenced ``yaml`` block that holds a training key (``trainer:``,
    ``learning_rate:``, ``epochs:``) and names its base checkpoint at the top level (``base_model: meta-llama/Llama-3.1-8B``)."""
    if not any(k in text for k in DOC_MODEL_KEYS) or ("```" not in text and "~~~" not in text):
        return
    lines = text.splitlines()
    for body, first in _fenced(lines, _YAML_FENCE):
        if len(body) > _MAX_BLOCK_LINES:
            continue
        try:
            doc = yaml.load("\n".join(body), Loader=_Loader)
        except yaml.YAMLError:
            continue
        if not isinstance(doc, dict) or not _keys(doc) & _RUN_KEYS:
            continue
        for key in sorted(DOC_MODEL_KEYS & {str(k) for k in doc}):
            value = doc[key]
            if not isinstance(value, str) or not value.strip():
                continue
            at = next((n for n, line in enumerate(body) if re.match(rf"{key}\s*:", line)), 0)
            out.doc_hints.append(DocHint(path, first + at, "model", value.strip(), body[at].strip()[:300]))


#: an inline code span of prose (single backticks, one line)
_INLINE_SPAN = lazy_compile(r"(?<!`)`([^`\n]{8,300})`(?!`)")
#: launchers whose inline command is kept: the ones that start several processes from a config or a flag
_INLINE_LAUNCHERS = frozenset({"accelerate", "torchrun", "deepspeed"})


def extract_doc_inline_commands(path: str, text: str, out: FileFacts) -> None:
    """``inline_command`` hints: a training launch written in an inline code span of prose instead of a code block
    (pytorch-accelerated's README: "`accelerate launch --config_file accelerate_config.yaml train.py [--training-args]`").
    Value: the script it runs; text: the command. Kept apart from ``command`` hints: the roles and the rules that take a
    documented command as the run do not read them; a check reads one only to say where the run's settings are (an
    accelerate config the repository does not ship)."""
    if "`" not in text or not any(w in text for w in _INLINE_LAUNCHERS):
        return
    for i, line in enumerate(text.splitlines(), 1):
        if "`" not in line or line.lstrip().startswith(("```", "~~~")):
            continue
        for m in _INLINE_SPAN.finditer(line):
            body = m.group(1).strip().removeprefix("$").strip()
            if body.split(" ", 1)[0] not in _INLINE_LAUNCHERS:
                continue
            scratch = FileFacts(path=path, kind="shell", lines=0)
            try:
                extract_shell_text(path, body, scratch, first_line=i)
            except Exception:  # not shell after all
                continue
            for launch in scratch.launches:
                script = str(launch.script or "").strip("'\"")
                if launch.launcher in _INLINE_LAUNCHERS and script and _trains(launch.launcher, script):
                    out.doc_hints.append(DocHint(path, i, "inline_command", script, body[:300]))


#: libraries whose documented release decides what advice can work (a Trainer argument, an attention default, a kernel)
_PINNED_LIBS = {"transformers": "transformers", "torch": "torch", "pytorch": "torch", "accelerate": "accelerate", "peft": "peft",
                "deepspeed": "deepspeed", "trl": "trl", "flash-attn": "flash-attn", "flash_attn": "flash-attn",
                "bitsandbytes": "bitsandbytes"}
_INSTALL = lazy_compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip|conda|mamba)\s+install\s+(.*)$")
#: ``transformers==4.28.1``, and the one-``=`` spelling of a README (PMC-LLaMA ``pip install transformers=4.28.1, sentencepiece``)
_PIN_WORD = lazy_compile(r"^([A-Za-z][\w.-]*)==?(\d+(?:\.\d+)*)[,;]?$")


def extract_doc_pins(path: str, text: str, out: FileFacts) -> None:
    """``pin`` hints: the release of a library the document's install commands pin (``pip install transformers==4.28.1``,
    ``conda install pytorch==1.13.0``), value ``name==version``. Where the project declares no requirement for the
    library, its README's install line is the environment it was run in."""
    if "install" not in text:
        return
    for first, body in _blocks(text):
        for k, raw in enumerate(body.splitlines()):
            m = _INSTALL.search(raw)
            if not m:
                continue
            for w in m.group(1).split():
                p = _PIN_WORD.match(w.strip("'\""))
                name = _PINNED_LIBS.get(p.group(1).lower()) if p else None
                if p and name:
                    out.doc_hints.append(DocHint(path, first + k, "pin", f"{name}=={p.group(2)}", raw.strip()[:300]))
