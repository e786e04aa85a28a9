"""File roles: which files are the project's training path, and which are only around it.

Only the training path (entry points that a launcher, recipe or console script reaches, and
what they import), the rest of the project's own code, its configs, launch scripts and build
files decide a check's status and feed step zero. Tests, CI, dev tooling, docs, benchmarks,
evaluation harnesses, archived copies of old runs (``records/``, ``archive/``, dated folders) and
vendored packages (a nested folder with its own ``setup.py``/``pyproject.toml``) and side projects that are
not LLM/MLLM training (a gradio/streamlit demo app, a diffusion trainer, a gym environment, and the
modules only they import) are context: a report may show them ("also seen in tests") but they never
change a status. Notebooks beside a repository's training entry points are tutorials (docs).

Entry points: a launch in a shell script/Makefile/YAML, a console script, a ``train*.py`` name, and the
commands of the README and docs code blocks (``torchrun ... src/train.py``, ``llamafactory-cli train
examples/x.yaml``: :func:`checks.facts.docs_md.extract_doc_commands`), with the recipes they name.

Conservative by design: a folder is out of scope only by a clear name (``tests/``, ``.github/``,
``records/``...); ``examples/`` and ``scripts/`` stay in scope (recipes live there), and a file
that an in-scope entry point reaches by import or launch is on the training path wherever it
sits. ``paths.training`` globs of ``.github/accel-audit.yml`` put files back in scope.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .facts.docs_md import MODULE_MAIN
from .facts.store import MAIN_GUARD, python_config_modules, source_lacks
from .facts.types import Expr, FileFacts
from .lazyre import lazy_compile

# roles that decide statuses and step zero
TRAINING = "training"  # an entry point or a module it imports
CODE = "code"  # other project code (library modules, tools) not reached from a recognised entry point
CONFIG = "config"
LAUNCH = "launch"
BUILD = "build"  # requirements, pyproject/setup.py, Dockerfiles, conda envs
# a README or training guide (docs/multi-node.md): its facts are only what prose can say (which files its commands
# run, whether its launches span nodes), never that a practice is used, so it is read with the training path
GUIDE = "guide"
IN_SCOPE = frozenset({TRAINING, CODE, CONFIG, LAUNCH, BUILD, GUIDE})
# context only
TEST, CI, DEV, DOCS, BENCHMARK, EVAL, ARCHIVE, VENDORED = "test", "ci", "dev", "docs", "benchmark", "eval", "archive", "vendored"
SIDE = "side"  # a side project that is not LLM/MLLM training (demo app, diffusion trainer, gym environment)
# another model's or recipe's code in a library of many (``models/<family>/``, ``recipes/<family>/``) whose documented run
# builds on one family: options the library offers, not the run's settings (see :func:`other_run_files`)
OTHER = "other"
# a sub-package the project's own packaging leaves out of its distribution (``[tool.setuptools.packages.find] exclude =
# ["pkg/experimental*"]``): code kept beside the package, not shipped with it (see :func:`unshipped_files`)
UNSHIPPED = "unshipped"
OUT_OF_SCOPE = frozenset({TEST, CI, DEV, DOCS, BENCHMARK, EVAL, ARCHIVE, VENDORED, SIDE, OTHER, UNSHIPPED})

ROLE_LABELS: dict[str, tuple[str, str]] = {
    TEST: ("tests", "测试代码"),
    CI: ("CI", "CI 配置"),
    DEV: ("dev tooling", "开发工具"),
    DOCS: ("docs", "文档"),
    BENCHMARK: ("benchmarks", "基准测试"),
    EVAL: ("evaluation code", "评测代码"),
    ARCHIVE: ("archived copies", "归档副本"),
    VENDORED: ("vendored packages", "第三方内置包"),
    SIDE: ("side projects (not LLM training)", "非 LLM 训练的旁支项目"),
    OTHER: ("other models' and recipes' code (not the documented run)", "其他模型/配方的代码（非文档所述的运行）"),
    UNSHIPPED: ("sub-packages the project's packaging leaves out", "项目打包时排除的子包"),
}

_DIR_ROLES: dict[str, str] = {
    **dict.fromkeys(("tests", "test", "testing", "unittests", "unit_tests", "unit-tests", "integration_tests",
                     "functional_tests", "functional-tests", "e2e", "end_to_end", "end-to-end", "test_utils", "test-utils", "testdata", "test_data", "test-data",
                     "test_fixtures", "test-fixtures", "autotest", "autotests", "auto_test", "smoke_tests",
                     # (oat ``examples/dry_run/``: launches that check a setup end to end, not the recipes it trains with)
                     "dry_run", "dry-run", "dryrun", "dry_runs"), TEST),
    # (``.lightning/workflows/`` is Lightning AI's CI, litgpt's GPU tests; ``.azure/`` PyTorch Lightning's pipelines)
    **dict.fromkeys((".github", ".gitlab", ".circleci", ".buildkite", ".ci", "ci", ".lightning", ".azure", ".azure-pipelines",
                     ".jenkins"), CI),
    **dict.fromkeys((".runpod", ".devcontainer", "devtools", "dev_tools", "dev-tools", ".husky", ".vscode", ".idea", ".dev_scripts",
                     "dev_scripts"), DEV),
    **dict.fromkeys(("docs", "doc", "documentation", "website", "site", "_site"), DOCS),
    **dict.fromkeys(("benchmark", "benchmarks", "bench", "benchmarking"), BENCHMARK),
    **dict.fromkeys(("eval", "evals", "evaluation", "evaluations", "lm_eval", "lm-evaluation-harness", "opencompass",
                     "eval_harness", "evaluation_harness",
                     # a copy of a multimodal evaluation toolkit (MiniCPM-o ``eval_mm/vlmevalkit/``, 900 files of benchmark
                     # loaders and judge wrappers)
                     "vlmevalkit", "lmms-eval", "lmms_eval", "evalscope",
                     # LAVIS's VQA evaluation tools, kept by its descendants (MiniGPT4-video ``minigpt4/common/vqa_tools/``
                     # with a copy of the A-OKVQA benchmark repository and its own ``transfer_experiments/train.py``)
                     "vqa_tools"), EVAL),
    **dict.fromkeys(("records", "archive", "archived", "archives", "attic", "deprecated", "old", "backup", "backups"), ARCHIVE),
    **dict.fromkeys(("third_party", "third-party", "thirdparty", "3rdparty", "vendor", "vendored", "external", "extern"), VENDORED),
    # a web front end's source tree (unsloth ``studio/frontend/src/...``: its data-recipe JSONs name UI nodes ``note_1`` and
    # columns ``domain``, read as model names); ``node_modules`` is its installed packages
    **dict.fromkeys(("frontend", "front-end", "front_end", "node_modules"), SIDE),
}
_CI_FILES = {".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", ".pre-commit-config.yaml", "codecov.yml", ".codecov.yml",
             ".readthedocs.yaml", ".readthedocs.yml", "greptile.json", "renovate.json", ".mergify.yml", "appveyor.yml",
             "cloudbuild.yaml", "bitbucket-pipelines.yml", "jenkinsfile"}
_DOC_FILES = {"mkdocs.yml", "mkdocs.yaml", "_config.yml", "book.toml"}
_DEV_FILES = {"noxfile.py", "tasks.py", "fabfile.py", ".pylintrc.toml", "ruff.toml", ".ruff.toml", "mypy.ini", "pyrightconfig.json",
              "tsconfig.json", "package.json", ".eslintrc.json", ".prettierrc.json"}
#: a folder of evaluation tasks or suites named with more words (OLMo ``olmo_data/oe_eval_tasks/``, ``downstream_evals``,
#: ``eval_configs``); the bare names are in :data:`_DIR_ROLES`
#: (and the held-out/held-in suites of an agent-tuning paper: AgentTuning ``eval_heldout/``; the multimodal evaluation of
#: MiniCPM-o: ``eval_mm/``)
_EVAL_DIR = lazy_compile(r"^(?!train)(\w+[_-])?(evals?|evaluations?)([_-](tasks?|suites?|configs?|data|sets?|harness|scripts?|held_?(out|in)"
                         r"|mm|vlm|llm|mllm|vl))?$",
                       re.I)
#: an evaluation harness named in CamelCase (OpenCoder-llm ``OpenCodeEval/``: vLLM generation over HumanEval/MBPP with its
#: own ``src/`` and requirements-eval.txt; ``HumanEval/``, ``MathEval/``)
_CAMEL_EVAL = lazy_compile(r"^(?!Train)[A-Z][A-Za-z0-9]*[a-z0-9]Evals?(Kit|Harness)?$")
#: a folder kept as the old copy of another (AgentTuning ``AgentBench.old/``, ``models_old/``, ``src.bak/``; FlagEmbedding
#: ``research/old-examples/``)
#: (and a kept previous release: Video-R1's ``previous_version/Video-R1-main-previous/``)
_OLD_DIR = lazy_compile(r"^(.+[._-](old|bak|backup|orig|previous)|(old|bak|backup|previous)[._-].+)$", re.I)
#: a script named for evaluation (open-r1 ``slurm/evaluate.slurm``, ``eval_mmlu.sh``, ``evaluate.py``)
#: a module named for the evaluation of one model or task (``idefics2_eval.py``, ``mmmu_evaluate.py``)
_EVAL_SUFFIX = lazy_compile(r"[_-](eval|evaluate|evaluation)\.py$")
_DIR_TRAIN = lazy_compile(r"(^|/)train\w*(/|$)")
_EVAL_FILE = lazy_compile(r"^(eval|evals|evaluate|evaluation)([_\-.][\w.\-]*)?\.(py|sh|slurm|sbatch)$")
_TEST_DIR = lazy_compile(r"^(tests?|testing|unit_?tests?|integration_?tests?|functional_?tests?)[_\-]?v?\d+$", re.I)  # tests_v1, test2
# a benchmark script, or a profiling script named for what it profiles (``profile_layers.py``, ``profile_fsdp.py``: it times
# layers or engines for a cost model or a report; a bare ``profile.py``/``profiler.py`` is a utility the trainer may import)
_BENCH_FILE = lazy_compile(r"^((bench|benchmark)(_\w+)?|profile_\w+|\w+_(bench|benchmark))\.py$")  # + ``pg_transport_bench.py``
#: a launch script of a benchmark (open_lm ``run_bench.sh``: ``torchrun -m benchmark.main ... --log-every-n-steps 1 --profile``)
_BENCH_SHELL = lazy_compile(r"^((run_)?(bench|benchmark)(_\w+)?|\w+_(bench|benchmark))\.(sh|slurm|sbatch)$")
_TEST_FILE = lazy_compile(r"^(test_\w+|\w+_test|conftest|tests)\.py$")
# a dated copy of a run: ``2024-10-14_ModernArch/``, ``20240501/``, ``train_gpt2_2024_10_14.py``
_DATED = lazy_compile(r"(?:^|[_\-.])(?:19|20)\d{2}[-_.]?(?:0[1-9]|1[0-2])[-_.]?(?:0[1-9]|[12]\d|3[01])(?:[_\-.]|$)")
#: a file named from the day it was written, ``YYMMDD_`` (RWKV-LM ``RWKV-v8/251014_rosa_1bit_train.py``): one dated experiment
_DATED_PREFIX = lazy_compile(r"^2\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])_")
# the scripts that reproduce published papers' runs (Megatron-LM ``examples/academic_paper_scripts/``: sc21's 384-node
# tables, detoxify, msdp): records of those runs, not the project's own recipes
_PAPER_DIR = lazy_compile(r"^(\w+[_\-])?papers?([_\-]\w+)?$", re.I)
#: a folder of teaching material (MPP-LLaVA ``deepspeed_tutorials/``: a RoBERTa MLM and a ViT on synthetic data that show
#: DeepSpeed's ZeRO stages; corenet ``tutorials/``; verl ``examples/tutorial/``): walk-throughs, not the project's runs
_TUTORIAL_DIR = lazy_compile(r"^([\w.]+[_-])?tutorials?$", re.I)
_ENTRY_NAME = lazy_compile(r"^(pre)?train\w*\.py$|^\w*_(pre)?train(ing)?\.py$|^\w*_fine_?tun(e|ing)\.py$|^(fine_?tune|finetuning|sft|dpo|grpo|ppo|rlhf|kto|orpo|cpo|bco|simpo|xpo|gkd|rloo|nash_md|reward_model(ing)?)\w*\.py$", re.I)
# a sub-package of extras kept beside a package's run (``trl/experimental/``, ``contrib/``, ``sandbox/``): its modules are
# the run's only when the training path imports them or a launch runs them (``experiments/`` is left out: oat's and
# realhf's runs live there)
_SIDELINE_DIR = lazy_compile(r"(^|/)(experimental|contrib|sandbox|playground|prototypes?)/")
_LIBRARY_MODULE = lazy_compile(r"_(trainer|config|configs|utils|loss|losses)\.py$")
#: a module of helpers (``training_utils.py``, ``train_util.py``): named for training, it runs nothing by itself
_HELPER_MODULE = lazy_compile(r"_(utils?|helpers?|tools)\.py$")
_TRAIN_LAUNCHERS = frozenset({"torchrun", "deepspeed", "accelerate", "colossalai", "llamafactory", "axolotl", "torchtune", "tune", "swift",
                              "composer", "lightning", "litgpt", "nanotron", "python", "mpirun", "srun"})
_PACKAGING = ("setup.py", "pyproject.toml")
_PACKAGING_FILES = frozenset({"setup.py", "pyproject.toml", "setup.cfg"})
_CONSOLE_SCRIPT = lazy_compile(r"^\s*[\w.\-]+\s*=\s*([A-Za-z_][\w.]*)\s*:\s*[A-Za-z_]\w*\s*$")
# side projects: what a file imports says what it is
_WEB_APPS = frozenset({"gradio", "streamlit"})
_GYM = frozenset({"gym", "gymnasium"})
_LLM_APPS = frozenset({"langchain", "langchain_core", "langchain_community", "langchain_openai", "langgraph", "llama_index", "crewai",
                       "pinecone", "chromadb"})
_LLM_LIBS = frozenset({"transformers", "vllm", "trl", "peft", "deepspeed", "megatron", "sglang", "torchtune", "nanotron", "litgpt"})
#: libraries only LLM training uses (deepspeed and megatron train CNNs in their examples too)
#: (an RLHF script whose reward model is a DistilBERT sentiment classifier, trlx's ``nemo_llama2_ppo_sentiments.py``,
#: trains an LLM through one of them)
_LLM_ONLY = frozenset({"vllm", "trl", "peft", "sglang", "torchtune", "nanotron", "litgpt", "flash_attn", "liger_kernel", "trlx",
                       "openrlhf", "verl", "llamafactory", "axolotl", "swift", "xtuner", "lmflow", "unsloth"})
#: torchvision's datasets and model zoo (``from torchvision.models import AlexNet``, ``torchvision.datasets.CIFAR10``)
_VISION_TASK = lazy_compile(r"^torchvision\.(datasets|models)(\.|$)")
#: BERT-family task heads: classification, QA, tagging, masked-LM pre-training
_ENCODER_TASK = lazy_compile(r"^(Bert|Roberta|Albert|Electra|DistilBert|Deberta\w*|XLMRoberta)\w*For(SequenceClassification|QuestionAnswering|"
                           r"TokenClassification|MultipleChoice|PreTraining\w*|NextSentencePrediction|MaskedLM)$|^Bert(MultiTask|Model)$"
                             # (a masked-LM head on the bare encoder: DeepSpeed's BERT tutorial ``RobertaModel`` + ``RobertaLMHead``)
                             r"|^(Roberta|XLMRoberta|Bert)LMHead$")
_CLASSIFIER = lazy_compile(r"^\w*For(SequenceClassification|TokenClassification|MultipleChoice)$")
_GENERATIVE = lazy_compile(r"ForCausalLM|LMHeadModel|ForConditionalGeneration|Seq2SeqLM")
_GLUE_SETS = frozenset({"glue", "super_glue", "nyu-mll/glue", "aps/super_glue"})
#: a causal, sequence-to-sequence or vision-language model: the file trains a language model after all
_CAUSAL_NAME = lazy_compile(r"ForCausalLM|LMHeadModel|ForConditionalGeneration|Seq2SeqLM|Vision2Seq|ImageTextToText|"
                          r"^(Llama|GPT|Mistral|Qwen|Llava|LLaVA|Blip|Bloom|T5|OPT|CLIP|Siglip)([A-Z0-9_]|$)|"
                          r"(?i:\b(llama|gpt2?|mistral|qwen\d?|llava|blip2?|clip|opt|bloom|t5)\b)")
#: computer-vision detection, segmentation and OCR toolkits: a tool built on them alone (LongLoRA's ``pdf2txt/``: a
#: detectron2 layout detector and easyocr that turn PDFs into the text corpus) is a data-preparation side project
_VISION_TOOLS = frozenset({"detectron2", "mmdet", "mmseg", "mmocr", "easyocr", "paddleocr", "ultralytics"})
_DIFFUSION_NAME = lazy_compile(r"StableDiffusion|UNet2DConditionModel|UNet2DModel|DDPMScheduler|DDIMScheduler|DiffusionPipeline|AutoencoderKL")
# the documents whose commands count: READMEs and docs of the project, not of its tests or vendored copies
_DOC_ROLES = (None, DOCS)


@dataclass(slots=True)
class Roles:
    """The role of every scanned file, and why."""

    by_path: dict[str, str] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # path -> short reason ("under tests/", "imported by train.py")
    entry_points: list[str] = field(default_factory=list)
    #: folders holding a copy of a third-party library (``llava/trl``): the project calls into them, nothing else does
    library_copies: list[str] = field(default_factory=list)
    #: the release each copy declares, by library: ``{"transformers": ("transformers/src/transformers/__init__.py", 21,
    #: "4.42.0.dev0")}`` (anole installs its copy with ``pip install -e``: that is the transformers its training runs)
    library_versions: dict[str, tuple[str, int, str]] = field(default_factory=dict)

    def role(self, path: str) -> str:
        return self.by_path.get(path, CODE)

    def in_scope(self, path: str) -> bool:
        return self.role(path) in IN_SCOPE

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(self.by_path.values()).items()))

    def to_json(self) -> list[dict[str, object]]:
        return [{"path": p, "role": r, "in_scope": r in IN_SCOPE} for p, r in self.by_path.items()]


def glob_match(path: str, globs: Iterable[str]) -> bool:
    """Whether ``path`` matches one of ``globs`` (``paths.training`` / ``paths.exclude`` of the repository's config)."""
    for g in globs:
        g = g.strip().strip("/")
        if not g:
            continue
        if fnmatch.fnmatchcase(path, g) or (g.endswith("/**") and (path + "/").startswith(g[:-2])):
            return True
        if not any(ch in g for ch in "*?[") and (path == g or path.startswith(g + "/")):
            return True
    return False


def path_role(path: str, kind: str) -> tuple[str | None, str]:
    """The out-of-scope role a path's own name gives it (None: in scope by name), and the reason."""
    parts = path.split("/")
    name = parts[-1]
    low = name.lower()
    for d in parts[:-1]:
        r = _DIR_ROLES.get(d.lower()) or (TEST if _TEST_DIR.match(d) or _DIR_ROLES.get(d.lower().lstrip("_")) == TEST else None)
        if r is not None:
            return r, f"under {d}/"
        if _EVAL_DIR.match(d) or _CAMEL_EVAL.match(d):
            return EVAL, f"under {d}/"
        if _OLD_DIR.match(d):
            return ARCHIVE, f"old copy {d}/"
        if _DATED.search(d):
            return ARCHIVE, f"dated copy {d}/"
        if _PAPER_DIR.match(d):
            return ARCHIVE, f"a paper's scripts {d}/"
        if _TUTORIAL_DIR.match(d):
            return DOCS, f"a tutorial {d}/"
    if low in _CI_FILES:
        return CI, "CI configuration"
    if low in _DOC_FILES:
        return DOCS, "docs build configuration"
    if low in _DEV_FILES:
        return DEV, "dev tooling"
    if kind == "requirements" and re.search(r"(^|[-_./])(dev|tests?|lint|docs?|ci|style)([-_.]|$)", low):
        return DEV, "dev/test requirements"
    if kind == "python" and _TEST_FILE.match(low):
        return TEST, "test module"
    if (kind == "python" and _BENCH_FILE.match(low)) or (kind == "shell" and _BENCH_SHELL.match(low)):
        return BENCHMARK, "benchmark script"
    if kind in ("python", "shell") and _EVAL_FILE.match(low):
        return EVAL, "evaluation script"
    if kind in ("python", "shell", "notebook") and (_DATED.search(low) or _DATED_PREFIX.match(low)):
        return ARCHIVE, "dated copy"
    return None, ""


#: a top-level folder named for a version of the project (``RWKV-v4neo``, ``RWKV-v2-RNN``, ``InternLM-XComposer-2.5-Reward``):
#: a stem, then ``v`` and a number or a dotted version, then an optional suffix
_VERSIONED_DIR = lazy_compile(r"^(?P<stem>[A-Za-z][\w.-]*?[A-Za-z])[-_](?:v(?P<v>\d+(?:\.\d+)*)|(?P<d>\d+\.\d+(?:\.\d+)*))(?:[-_].*|[a-z]+)?$")


def _older_versions(files: Mapping[str, FileFacts], paths: list[str], decided: Mapping[str, str], forced: set[str]) -> dict[str, str]:
    """Files under top-level folders that are older versions of one project, each folder named for a version of the same
    stem (``RWKV-v1`` ... ``RWKV-v8``), when a newer such folder holds a training entry point (``RWKV-v7/train_temp/
    train.py``): every folder of a lower version is an archived copy; newer folders without training code (``RWKV-v8``'s
    prototypes) and folders of the newest trained version (``-2.5-Reward`` beside ``-2.5-OmniLive``) stay. path -> why."""
    groups: dict[str, dict[str, tuple[int, ...]]] = {}
    for top in {p.split("/", 1)[0] for p in paths if "/" in p}:  # each top-level folder once
        m = _VERSIONED_DIR.match(top)
        if m is not None:
            version = tuple(int(x) for x in (m.group("v") or m.group("d")).split("."))
            groups.setdefault(m.group("stem").lower(), {})[top] = version
    out: dict[str, str] = {}
    for folders in groups.values():
        if len(set(folders.values())) < 2:
            continue
        trained = [v for top, v in folders.items()
                   if any(q.startswith(top + "/") and _ENTRY_NAME.match(q.rsplit("/", 1)[-1]) and path_role(q, files[q].kind)[0] is None
                          for q in paths)]
        if not trained:
            continue
        newest = max(trained)
        keep = next(top for top, v in sorted(folders.items()) if v == newest)
        for q in paths:
            top = q.split("/", 1)[0]
            if top in folders and folders[top] < newest and q not in decided and q not in forced:
                out[q] = f"an older version of the project: {keep}/ is newer"
    return out


def _module_names(path: str) -> list[str]:
    """The dotted module names a Python file may be imported as (each suffix of its path)."""
    if not path.endswith(".py"):
        return []
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts[i:]) for i in range(len(parts)) if parts[i:]]


class _ModuleIndex:
    """The project's Python files by every dotted name they may be imported as. ``packaged``: folders below the
    repository's root that hold a ``setup.py``/``pyproject.toml``/``setup.cfg`` of their own (a bundled package)."""

    def __init__(self, paths: Iterable[str], packaged: Iterable[str] = ()) -> None:
        self.by_name: dict[str, list[str]] = {}
        for p in paths:
            for m in _module_names(p):
                self.by_name.setdefault(m, []).append(p)
        self.packaged = frozenset(d for d in packaged if d)

    def resolve(self, module: str, importer: str) -> list[str]:
        if module.startswith("."):
            level = len(module) - len(module.lstrip("."))
            pkg = importer.split("/")[:-1]
            if level > 1:
                pkg = pkg[: len(pkg) - (level - 1)] if level - 1 <= len(pkg) else []
            rest = module.lstrip(".")
            full = "/".join(pkg + (rest.split(".") if rest else []))
            hits = [h for h in (full + ".py", full + "/__init__.py") if h in self._paths()]
            return hits
        hits = self.by_name.get(module, [])
        if not hits:
            return hits
        # an absolute import finds a top-level module in a folder on ``sys.path``: the importing script's own folder or
        # one above it (``from models import build_model`` in ``classification/main.py`` is ``classification/models``,
        # not another sub-project's ``models`` package), else the root of an installed package
        here = importer.rsplit("/", 1)[0] if "/" in importer else ""
        depth = module.count(".") + 1
        roots = {h: _import_root(h, depth) for h in hits}
        local = [h for h in hits if roots[h] == "" or here == roots[h] or here.startswith(roots[h] + "/")]
        if local:
            hits = local
        elif module.split(".", 1)[0] in _UPSTREAM and all(not h.endswith("/__init__.py") for h in hits):
            # a module file named like a library, out of the importer's reach (TokenFlow's ``tokenflow/utils/deepspeed.py``,
            # a config builder): ``import deepspeed`` in ``i2t/llava/train/train.py`` is the installed DeepSpeed
            return []
        else:
            # a bundled package (its own setup.py) exposes its top-level packages under its root or ``src/``, never a
            # subpackage as a top-level name: ``import datasets`` (Hugging Face's) is not ``clip_benchmark/clip_benchmark/datasets``
            hits = [h for h in hits if not any(roots[h].startswith(d + "/") and roots[h] != d + "/src" for d in self.packaged)]
        if len(hits) > 3:  # ``utils`` in every folder: too ambiguous to follow
            return []
        return hits

    def _paths(self) -> set[str]:
        s = getattr(self, "_ps", None)
        if s is None:
            s = self._ps = {p for ps in self.by_name.values() for p in ps}
        return s


def _import_root(path: str, depth: int) -> str:
    """The folder that must be on ``sys.path`` for ``path`` to import under a dotted name of ``depth`` parts."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return "/".join(parts[: len(parts) - depth])


def _missing_script(script: str | None, paths: set[str], origin: str, names: set[str]) -> bool:
    """A launch's script written as a plain relative ``.py`` path with a folder (no variable, no absolute path) that no
    file of the repository is, wherever the launch is started from, while a file of the same name lives in another
    folder: the launch of a package the fork renamed (``llava/train/train_mem.py`` beside ``videollava/train/train_mem.py``).
    A script the repository does not ship at all (a wheel without its examples) is not judged stale."""
    if not script:
        return False
    s = script.strip().strip("'\"")
    if not s.endswith(".py") or s.startswith("/") or re.search(r"[$`*?{}]", s):
        return False
    s = s.removeprefix("./")
    name = s.rsplit("/", 1)[-1]
    if "/" not in s.replace("../", "") or name not in names:
        return False
    if "../" in s:
        here = origin.rsplit("/", 1)[0] if "/" in origin else ""
        norm = posixpath.normpath(f"{here}/{s}" if here else s)
        return not norm.startswith("..") and norm not in paths
    # (a path that ends with a file of the repository runs it from a folder above the checkout: open_flamingo's
    # ``python open_flamingo/open_flamingo/train/train.py`` is ``open_flamingo/train/train.py``)
    return s not in paths and not any(p.endswith("/" + s) or ("/" in p and s.endswith("/" + p)) for p in paths)


def ds_config_ref(launch: Any) -> str | None:
    """The DeepSpeed config file a launch passes (``--deepspeed ./scripts/zero3.json`` -> ``scripts/zero3.json``, or
    ``--deepspeed_config``), or None."""
    ref = launch.script_args.get("deepspeed") or launch.script_args.get("deepspeed_config") \
        or launch.launcher_args.get("deepspeed_config")
    if not isinstance(ref, str):
        return None
    s = ref.strip().strip("'\"")
    while s.startswith("./"):
        s = s[2:]
    return s if s.endswith((".json", ".yaml", ".yml")) else None


def _missing_config(launch: Any, paths: set[str], names: set[str]) -> str | None:
    """The DeepSpeed config a launch passes, written as a relative path with a folder (no variable) that no file of the
    repository is or ends with, while a file of the same name lives in another folder; None otherwise."""
    s = ds_config_ref(launch)
    if s is None or s.startswith(("/", "../")) or "/" not in s or re.search(r"[$`*?{}]", s):
        return None
    if s.rsplit("/", 1)[-1] not in names or s in paths or any(q.endswith("/" + s) for q in paths):
        return None
    return s


def _config_found_elsewhere(files: Mapping[str, FileFacts], paths: list[str], pathset: set[str], here: str) -> bool:
    """Another shipped launch, or a command of the project's README or docs/, passes a DeepSpeed config the repository
    has at that path."""
    for q in paths:
        ff = files[q]
        runs = ff.launches if ff.kind == "shell" and q != here else \
            ff.doc_launches if ff.kind == "docs" and ("/" not in q or q.startswith("docs/")) else []
        for x in runs:
            r = ds_config_ref(x)
            if r is not None and (r in pathset or any(t.endswith("/" + r) for t in pathset)):
                return True
    return False


def _legacy_folders(files: Mapping[str, FileFacts], paths: list[str], decided: Mapping[str, str], forced: set[str]) -> dict[str, str]:
    """Files under a folder that a README or guide of the project calls its previous version (``legacy_dir`` hints), when
    that folder holds Python code and Python code of the project remains outside it: path -> why."""
    out: dict[str, str] = {}
    hints = [(p, h) for p in paths if files[p].kind == "docs" and path_role(p, "docs")[0] in _DOC_ROLES
             for h in files[p].doc_hints if h.kind == "legacy_dir"]
    if not hints:
        return out
    for doc, h in hints:
        here = doc.rsplit("/", 1)[0] + "/" if "/" in doc else ""
        for folder in dict.fromkeys((here + h.value, h.value)):
            inside = [q for q in paths if q.startswith(folder + "/") and q not in decided and q not in forced]
            if not any(files[q].kind == "python" for q in inside):
                continue
            if not any(files[q].kind == "python" and q not in decided and not q.startswith(folder + "/") for q in paths):
                continue  # the folder is all the code there is: the docs' "previous version" is still the project
            for q in inside:
                out.setdefault(q, f"an archived copy: {doc}:{h.line} calls {folder}/ the previous version")
            break
    return out


def _absent_script(script: str | None, names: set[str]) -> bool:
    """A launch's script written as a plain ``.py`` name or relative path that no file of the repository has as its name."""
    s = str(script or "").strip().strip("'\"")
    s = _LAUNCH_DIR.sub("", s)
    if not s.endswith(".py") or s.startswith("/") or re.search(r"[$`*?{}]", s):
        return False
    return s.rsplit("/", 1)[-1] not in names


def _removed_script(script: str | None, names: set[str], shipped: Callable[[], set[str]]) -> bool:
    """A launch's script (a plain ``.py`` path, its working directory written as a variable or not) that no file of the
    repository has as its name, in a folder that holds scripts other launches run: Megatron-LLM kept upstream's
    ``examples/pretrain_gpt*.sh`` (``python pretrain_gpt.py``, ``${MEGATRON_CODE_DIR}/pretrain_gpt.py``) after removing
    ``pretrain_gpt.py`` from its root, where ``pretrain_bert.py`` and ``finetune.py`` still run. (A package that ships no
    launched script in that folder, an sdist without the repository's root scripts, is not judged.)"""
    s = _LAUNCH_DIR.sub("", str(script or "").strip().strip("'\"")).removeprefix("./")
    if not s.endswith(".py") or s.startswith(("/", "../")) or re.search(r"[$`*?{}]", s):
        return False
    name = s.rsplit("/", 1)[-1]
    if name in names or any(n.startswith(name[:-3] + "_") and n.endswith(".py") for n in names):
        return False  # (a renamed script keeps the recipe: fms-fsdp's ``train.sh`` runs ``main_training.py``, now ``main_training_llama.py``)
    return (s.rsplit("/", 1)[0] if "/" in s else "") in shipped()


_STALE = "a stale launch script"


def _beside_stale_launches(files: Mapping[str, FileFacts], paths: list[str], roles: Roles, forced: set[str]) -> None:
    """Shell scripts that launch no training themselves, in a folder whose every training launch is stale (Megatron-LLM's
    ``examples/sc21/run_table_1.sh`` sets ``NNODES=384`` and sources the job scripts that end in ``SRUN.sh``, which runs the
    removed ``pretrain_gpt.py``): their settings are that launch's, role other."""
    stale: dict[str, str] = {}
    live: set[str] = set()
    for q in paths:
        if files[q].kind != "shell" or "/" not in q:
            continue
        d = q.rsplit("/", 1)[0]
        if roles.by_path.get(q) == OTHER and roles.why.get(q, "").startswith(_STALE):
            stale.setdefault(d, q)
        elif any(_trains(x.launcher, x.script) for x in files[q].launches):
            live.add(d)
    for q in paths:
        d = q.rsplit("/", 1)[0] if "/" in q else ""
        if d in stale and d not in live and q not in roles.by_path and q not in forced and files[q].kind == "shell":
            roles.by_path[q], roles.why[q] = OTHER, f"beside the stale launch script {stale[d]}, which its settings feed"


def _side_folder(path: str, py_by_dir: Mapping[str, list[str]], decided: Mapping[str, str]) -> bool:
    """The folder of ``path`` holds a side project's Python files, and none that may be the training path's (the others are
    already judged out of it: the side project's evaluation script, a test)."""
    here = path.rsplit("/", 1)[0] if "/" in path else ""
    py = py_by_dir.get(here, [])
    return any(decided.get(q) == SIDE for q in py) and all(q in decided for q in py)


#: a launch's working directory written before its script (``$(pwd)/``, ```pwd`/``, ``${base_dir}/``, ``$(dirname $0)/``)
_LAUNCH_DIR = lazy_compile(r"^(\$\{?\w+\}?|`[^`]*`|\$\([^)]*\))/")


def _script_paths(script: str | None, paths: set[str], index: _ModuleIndex, origin: str = "") -> list[str]:
    """Files a launcher's script argument names (``train.py``, ``src/train.py``, ``-m pkg.train``, ``pkg.train``).

    A relative script runs from the directory the launch is started in, which is the launch file's folder or one above
    it (DeepSpeed-Chat ``step1_supervised_finetuning/training_scripts/llama2/run_llama2_7b.sh`` runs ``deepspeed main.py``
    from ``step1_supervised_finetuning/``): of the files that end with the script's path, those in the nearest such
    folder. A name that only files elsewhere hold is ambiguous when several do, so none of them is taken."""
    if not script:
        return []
    s = script.strip().strip("'\"")
    if s.startswith("./"):
        s = s[2:]
    rel = _LAUNCH_DIR.sub("", s)
    if s.endswith(".py") and origin and ("../" in rel or rel != s):
        # ``deepspeed ../../nvidia_run_squad_deepspeed.py``, ``deepspeed `pwd`/deepspeed_train.py`` (``base_dir=`pwd```):
        # relative to the launch file's folder, inside the repository
        here = origin.rsplit("/", 1)[0] if "/" in origin else ""
        norm = posixpath.normpath(f"{here}/{rel}" if here else rel)
        if norm in paths or "../" in rel:
            return [norm] if norm in paths else []
        s = rel
    if s.endswith(".py"):
        if s in paths:
            return [s]
        tail = "/" + s.lstrip("/")
        found = sorted(p for p in paths if p.endswith(tail) or tail.endswith("/" + p))
        if not found and "/" not in s:
            return _renamed_variants(s, paths, origin)
        if len(found) <= 1:
            return found
        parts = origin.split("/")[:-1]
        for depth in range(len(parts), 0, -1):
            here = "/".join(parts[:depth]) + "/"
            near = [p for p in found if p.startswith(here)]
            if near:
                # the folder itself first, then its sub-folders (``cd`` into ``training/`` and ``python main.py``)
                return sorted(near, key=lambda p: (p.count("/"), p))[:1]
        return []
    if re.fullmatch(r"[A-Za-z_][\w.]*", s):
        return _module_files(index, s, origin)
    return []


def _module_files(index: _ModuleIndex, module: str, origin: str) -> list[str]:
    """The files ``python -m module`` may run, started from the folder of ``origin`` (a launch script or a document) or
    one above it: those importable from there first (LanguageBind's ``scripts/audio_language/train.sh`` and
    ``TRAIN_AND_VALIDATE.md`` run ``cd /path/to/LanguageBind; torchrun -m main``: the root's ``main.py``, not
    ``training/main.py``, a copy of OpenCLIP's trainer nothing imports), else any (up to three)."""
    hits = index.by_name.get(module, [])
    here = origin.rsplit("/", 1)[0] if "/" in origin else ""
    depth = module.count(".") + 1
    near = [h for h in hits if (root := _import_root(h, depth)) == "" or here == root or here.startswith(root + "/")]
    return (near or hits)[:3]


def _renamed_variants(script: str, paths: set[str], origin: str) -> list[str]:
    """The scripts that replaced a launched script the repository no longer has, as variants of its name beside the launch
    (fms-fsdp: ``scripts/train.sh`` runs ``main_training.py``; the repository has ``main_training_llama.py`` and
    ``main_training_mamba.py``): in the launch file's folder, else the folder above it, the files named ``<stem>_<variant>.py``."""
    stem = script.removesuffix(".py")
    if not re.fullmatch(r"\w+", stem):
        return []
    pat = re.compile(rf"^{re.escape(stem)}_\w+\.py$")
    parts = origin.split("/")[:-1]
    for depth in (len(parts), len(parts) - 1):
        if depth < 0:
            continue
        here = "/".join(parts[:depth])
        near = sorted(p for p in paths if (p.rsplit("/", 1)[0] if "/" in p else "") == here and pat.match(p.rsplit("/", 1)[-1]))
        if near:
            return near
    return []


_STEP_CALLS = frozenset({"backward", "fit", "train", "pretrain", "train_model", "run_training", "finetune"})
#: inference engines a serving or generation script imports
_ENGINE_MODULES = ("vllm", "sglang", "lmdeploy", "tensorrt_llm", "text_generation", "mii", "distilabel", "exllamav2", "llama_cpp",
                   "megatron.core.inference")
#: launchers (checks.facts.shell) that start an inference engine's server
_SERVING_LAUNCHERS = frozenset({"vllm", "sglang", "text-generation-launcher", "lmdeploy", "trtllm-serve", "tritonserver"})
#: calls that start an inference engine (DeepSpeed-Inference's ``deepspeed.init_inference``)
_ENGINE_CALLS = frozenset({"init_inference"})
#: a script named for inference (``zero_inference.py``, ``run_generation.py``, ``predict.py``, ``serve.py``)
_INFER_SCRIPT = lazy_compile(r"(^|[_-])(infer|inference|generate|generation|predict|prediction|serve|server|serving)([_-]|\.py$)", re.I)
#: a script named for sampling: from a model (LlamaGen's ``sample_c2i_ddp.py``, run by ``torchrun`` in ``sample_c2i.sh``, calls
#: ``generate``), or from data (LLM-Shearing's ``data/sample.py`` tokenizes and saves a data mix): an inference script only
#: when it generates
_SAMPLE_SCRIPT = lazy_compile(r"(^|[_-])(sample|sampling)([_-]|\.py$)", re.I)
_SAMPLING_CALLS = frozenset({"generate", "sample", "sample_images", "generate_images"})


def _trains_itself(ff: FileFacts) -> bool:
    """A script that runs a training step or a trainer itself (``loss.backward()``, ``trainer.train()``, ``Trainer(``)."""
    return any((c.short in _STEP_CALLS and not _eval_mode(c)) or c.short.endswith("Trainer") for c in ff.calls)


def _eval_mode(c: Any) -> bool:
    """``module.train(mode=False)`` / ``module.train(False)``: a switch to evaluation mode (DoRA's
    ``commonsense_evaluate.py`` before merging its adapters), not a training step."""
    if isinstance(c, RoleCall):
        return c.eval_mode
    return c.short == "train" and (c.kwargs.get("mode") is False or (bool(c.args) and c.args[0] is False))


#: a launch's ``--do_train`` value that switches training off
_TRAIN_OFF = lazy_compile(r"(?i)^\s*(false|0|no)\s*$")
#: the calls of a loop that steps an optimizer by hand (``optimizer.zero_grad()`` before a loss scaler that steps it)
_HAND_STEP_CALLS = frozenset({"zero_grad", "step"})


def _calls_training(files: Mapping[str, FileFacts], index: Any, script: str) -> bool:
    """A script that calls a function of a project module it imports whose body runs a training step (OmniQuant's
    ``python main.py`` calls ``omniquant(lm, args, ...)`` from ``quantize/omniquant.py``, whose loop runs
    ``optimizer.zero_grad()`` and a loss scaler that calls ``backward``): its launch starts training, though the script
    itself names no step."""
    ff = files[script]
    called = {c.short for c in ff.calls}
    for imp in ff.imports:
        if not imp.name or imp.name not in called:
            continue
        for q in index.resolve(imp.module, script):
            if q != script and q in files and any(c.func == imp.name and (c.short in _HAND_STEP_CALLS or (
                    c.short in _STEP_CALLS and not _eval_mode(c))) for c in files[q].calls):
                return True
    return False


trains_itself = _trains_itself  # (the overview asks it of a launched script: checks.project)


def _classes_only(ff: FileFacts) -> bool:
    """A Python file of classes filed into a registry (LAVIS-style ``@registry.register_task``) whose code all sits in class
    bodies: every call inside a ``class`` statement or a decorator's, none at module level or in a top-level function. (In
    a package, such a module stays an entry point: its users start it.)"""
    if not ff.classes or not any(_REGISTRY_DECORATOR.search(d.name) for d in ff.decorators):
        return False
    # (the roles read calls as :class:`RoleCall`, which carries where each call sits; a plain file's calls carry lines)
    level = None if ff.calls and isinstance(ff.calls[0], RoleCall) else _class_level_lines(ff)
    return all(c.class_level if level is None else level(c.line) for c in ff.calls)


#: a decorator that files a class into a registry by name (LAVIS ``@registry.register_task("video_text_pretrain")``)
_REGISTRY_DECORATOR = lazy_compile(r"(^|\.)register\w*$")


def _trains(launcher: str, script: str | None) -> bool:
    """A launch that starts training: a distributed/training launcher, or ``python`` running a train*.py."""
    if launcher == "python":
        return bool(script and _ENTRY_NAME.match(script.rsplit("/", 1)[-1]))
    return launcher in _TRAIN_LAUNCHERS


def _trains_module(launcher: str, script: str | None) -> bool:
    """A ``python -m`` launch of a module named for training (PRIME's ``python3 -m verl.trainer.main_ppo``): what
    :func:`_own_application` also takes for a launch that trains."""
    if launcher != "python" or not script or not _MODULE_FORM.fullmatch(script):
        return False
    name = script.rsplit(".", 1)[-1] + ".py"
    return bool(_ENTRY_NAME.match(name) or _MAIN_ALGO.match(name))


#: a documented command run by a plain ``python`` (no distributed launcher)
_PLAIN_PYTHON = lazy_compile(r"\s*(\S*/)?python[\d.]*\s")
#: a call that runs a training loop (nanoT5's ``main.py``: ``train(model, train_dataloader, ...)`` of its ``utils``)
_TRAIN_LOOP_CALLS = frozenset({"train", "fit", "pretrain", "finetune", "train_loop", "training_loop", "run_training", "train_one_epoch",
                               "train_epoch"})


def _starts_training(ff: FileFacts) -> bool:
    """A package's main module that trains: a training step or trainer of its own, or a call of a training loop."""
    return _trains_itself(ff) or any(c.short in _TRAIN_LOOP_CALLS for c in ff.calls)


#: a module a ``python -m`` launch runs (no path, no ``.py``)
_MODULE_FORM = lazy_compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
#: a training entry point named ``main_<algorithm>`` (verl's ``verl/trainer/main_ppo.py``, which PRIME's launch runs)
_MAIN_ALGO = lazy_compile(r"^main_(ppo|grpo|dpo|sft|rlhf|kto|orpo|simpo|rloo|gkd|reinforce\w*)\.py$", re.I)


def _kind_role(kind: str, name: str) -> str:
    if name in _PACKAGING:
        return BUILD
    if kind == "docs":
        return GUIDE
    if kind in ("python", "notebook"):
        return CODE
    if kind in ("yaml", "json", "toml"):
        return CONFIG
    if kind in ("shell", "make", "hostfile"):
        return LAUNCH
    return BUILD  # requirements, pyproject, conda, docker


def _nested_packages(paths: Iterable[str]) -> list[str]:
    """Folders below the root with their own ``setup.py``/``pyproject.toml``: separately packaged code."""
    out = []
    for p in paths:
        parts = p.split("/")
        if len(parts) > 1 and parts[-1] in _PACKAGING:
            out.append("/".join(parts[:-1]))
    return _outermost(out)


#: import names of third-party training libraries a repository may carry a copy of
_UPSTREAM = frozenset({"trl", "transformers", "peft", "accelerate", "deepspeed", "vllm", "sglang", "flash_attn", "datasets",
                       "bitsandbytes", "xformers", "timm", "open_clip", "diffusers", "liger_kernel", "auto_gptq", "awq", "apex",
                       "lm_eval", "torchtune", "megatron_core",
                       # OpenMMLab's and Meta's vision toolkits, copied whole beside a grounding MLLM (Groma's ``mmcv/``, ``mmdet/``)
                       "mmcv", "mmdet", "mmengine", "mmseg", "detectron2"})


#: a distribution name picked by a conditional expression of two string literals
_CHOSEN_NAME = lazy_compile(r"""^\s*['"]([\w.-]+)['"]\s+if\s.+\selse\s+['"]([\w.-]+)['"]\s*$""")


def _own_distributions(files: Mapping[str, FileFacts], folder: str = "") -> set[str]:
    """The import names the repository's own packaging declares (``[project] name = "trl"``, ``setup(name="trl")``), or
    that of the package in ``folder``."""
    out: set[str] = set()
    for p in ("pyproject.toml", "setup.py"):
        ff = files.get(f"{folder}/{p}" if folder else p)
        if ff is None:
            continue
        names = [e.value for e in ff.configs if e.keys[-1:] == ("name",) and e.keys[0] in ("project", "tool")]
        names += [c.kwargs["name"] for c in ff.calls if c.short == "setup" and isinstance(c.kwargs.get("name"), str)]
        # a name chosen by a build switch (mmcv's ``name='mmcv' if os.getenv('MMCV_WITH_OPS', '0') == '0' else
        # 'mmcv-full'``): either distribution is the package's own
        names += [n for c in ff.calls if c.short == "setup" and isinstance(c.kwargs.get("name"), Expr)
                  for m in [_CHOSEN_NAME.match(c.kwargs["name"].text)] if m for n in m.group(1, 2)]
        out |= {n.strip().lower().replace("-", "_") for n in names if isinstance(n, str)}
    return out


def _own_application(files: Mapping[str, FileFacts], d: str, inside: list[str], outside: list[str], index: Any) -> bool:
    """A packaged folder that is one of the repository's own applications, not a copy of a library: its distribution is
    no known upstream library, nothing outside it imports it, and its own launch scripts run its own scripts
    (DeepSpeedExamples ``applications/DeepSpeed-Chat/``: ``setup(name="deepspeed-chat")``, whose
    ``training_scripts/llama2/run_llama2_7b.sh`` runs ``deepspeed main.py``). A bundled AutoGPTQ is named ``auto_gptq``."""
    if _own_distributions(files, d) & _UPSTREAM:
        return False
    inside_set = set(inside)
    importers = [p for p in outside if any(t in inside_set for imp in files[p].imports for t in index.resolve(imp.module, p))]
    if importers:
        # an import by code that trains, or by a module such code imports, makes it a library the project uses; an import by
        # the project's demos and evaluation helpers alone does not (LongVA: ``longva/`` with its own pyproject and training
        # scripts, imported only by ``local_demo/`` and ``vision_niah/``; the README installs it with ``pip install -e longva/``)
        outside_set = set(outside)
        trainers = {q for q in outside if _trains_itself(files[q])}
        for p in importers:
            if p in trainers:
                return False
            stem = p.rsplit("/", 1)[-1].removesuffix(".py")
            if any(q in outside_set and any(p in index.resolve(i.module, q) or i.name == stem for i in files[q].imports)
                   for q in trainers):
                return False
    pathset = set(files)
    return any(t.startswith(d + "/") for p in files if p.startswith(d + "/") and files[p].kind == "shell"
               for x in files[p].launches if _trains(x.launcher, x.script) or _trains_module(x.launcher, x.script)
               for t in _script_paths(x.script, pathset, index, p))


def _in_main_block(c: Any) -> bool:
    """A call in its module's ``if __name__ == "__main__":`` block (a :class:`RoleCall` carries the answer: the roles'
    recorded view of a call has no guard)."""
    if isinstance(c, RoleCall):
        return c.main
    return bool(c.guard) and MAIN_GUARD.search(c.guard) is not None


#: a shell script named for debugging (``debug.sh``, ``debug_sft.sh``, ``train_debug.sh``)
_DEBUG_SCRIPT = lazy_compile(r"(?i)^(debug([_-]\w*)?|\w*[_-]debug)\.(sh|bash)$")


def _version_file(files: Mapping[str, FileFacts], d: str) -> tuple[str, int, str] | None:
    """(path, line, version) of the ``__version__`` string package ``d`` assigns: in its ``__init__.py`` (TRL's copy) or
    the ``version.py`` it imports it from (mmcv's and mmdet's ``from .version import __version__``), else None."""
    for name in ("__init__.py", "version.py", "__version__.py"):
        ff = files.get(f"{d}/{name}")
        a = next((a for a in ff.assigns if a.name == "__version__" and isinstance(a.value, str)), None) if ff is not None else None
        if a is not None:
            return a.path, a.line, a.value
    return None


def _reexport_source(files: Mapping[str, FileFacts], index: Any, target: str, name: str, lib_copies: set[str]) -> list[str]:
    """``from trl.trainer import DPOTrainer`` where ``trl/`` is a library copy: not the package ``__init__.py`` (which
    re-exports every trainer of the library) but the module its ``from .dpo_trainer import DPOTrainer`` names. Other
    targets, and names no import of the ``__init__`` binds, are returned as they are."""
    if not target.endswith("__init__.py") or not any(target.startswith(c + "/") for c in lib_copies):
        return [target]
    out: list[str] = []
    for i2 in files[target].imports:
        if i2.name == name:
            full = f"{i2.module}.{i2.name}" if not i2.module.endswith(".") else i2.module + i2.name
            out += [u for u in (index.resolve(full, target) or index.resolve(i2.module, target)) if u != target]
    return out or [target]


def _outermost(folders: Iterable[str]) -> list[str]:
    """The outermost of ``folders`` (a ``src`` layout's own folder is the package itself)."""
    outer: list[str] = []
    for d in sorted(set(folders)):
        if not any(d.startswith(o + "/") for o in outer):
            outer.append(d)
    return outer


def _submodules(files: Mapping[str, FileFacts], paths: Iterable[str]) -> list[str]:
    """Folders that are git submodules: their ``.git`` is a file pointing at the superproject's ``.git/modules/``, i.e.
    another repository's checkout kept inside this one (an sdist or a local clone ships it; a GitHub tarball leaves the
    folder empty). The scanned root's own ``.git`` (a worktree's link) is never a file the scan reads."""
    return sorted(p.rsplit("/", 1)[0] for p in paths if "/" in p and files[p].kind == "gitlink")


#: methods only ``transformers.Trainer`` itself defines (its loop, wrapping, checkpoint and search plumbing); a subclass
#: overrides a few of them, a copy of the class defines most
_HF_TRAINER_METHODS = frozenset({
    "_inner_training_loop", "_wrap_model", "_maybe_log_save_evaluate", "_save_checkpoint", "_load_from_checkpoint",
    "_load_optimizer_and_scheduler", "_load_rng_state", "_rotate_checkpoints", "_sorted_checkpoints", "_get_train_sampler",
    "_get_eval_sampler", "_remove_unused_columns", "_set_signature_columns_if_needed", "create_optimizer_and_scheduler",
    "get_optimizer_cls_and_kwargs", "evaluation_loop", "prediction_step", "prediction_loop", "_hp_search_setup",
    "_tune_save_checkpoint", "hyperparameter_search", "floating_point_ops", "store_flos", "_nested_gather",
    "_pad_across_processes", "_push_from_checkpoint", "init_git_repo", "_load_best_model", "_move_model_to_device",
})
#: at least this many of them in one file that subclasses no trainer: a copy of the class, not an extension of it
_TRAINER_COPY_MIN = 15
_SUBCLASS = lazy_compile(r"class\s+\w+\s*\(")


def framework_copy(ff: FileFacts) -> str | None:
    """Why a Python file is a copy of ``transformers.Trainer`` kept in the project (None: it is not one).

    A project that needs a changed training loop sometimes copies the whole HF Trainer module and renames the class
    (``class RaftTrainer:`` with the Trainer's ``_inner_training_loop``, ``_wrap_model``, ``create_optimizer`` ...):
    every FSDP/DDP wrap, ``torch.compile``, fused-optimizer or CPU-offload branch in it is the framework's option
    plumbing behind a ``TrainingArguments`` field, not a setting of the project's run. Such a file defines (has code in)
    at least :data:`_TRAINER_COPY_MIN` of the Trainer's own methods, imports transformers, and subclasses no trainer
    (a ``class X(Trainer):`` that overrides methods extends the framework and stays the project's code). A copy that
    the training path imports is put back on it (:func:`classify_roles`, step 4)."""
    if ff.kind != "python" or not any(i.module.split(".", 1)[0] == "transformers" for i in ff.imports):
        return None
    if any(_SUBCLASS.match(r.text.strip()) and r.name.rsplit(".", 1)[-1].endswith("Trainer") for r in ff.refs):
        return None
    defined = sorted({c.func for c in ff.calls if c.func in _HF_TRAINER_METHODS})
    if len(defined) < _TRAINER_COPY_MIN:
        return None
    return f"a copy of transformers.Trainer (defines {len(defined)} of its methods, {', '.join(defined[:3])}..., without subclassing it)"


def _reexported_to(files: Mapping[str, FileFacts], index: Any, path: str, importers: Mapping[str, set[str]],
                   side: Mapping[str, str]) -> bool:
    """Does a file outside ``side`` (not a package ``__init__``) import, from ``path``'s package, a name that the package's
    ``__init__.py`` takes from ``path``?"""
    folder, _, name = path.rpartition("/")
    init_path = f"{folder}/__init__.py" if folder else "__init__.py"
    init = files.get(init_path)
    if init is None or not name.endswith(".py"):
        return False
    mod = name[:-3]
    dotted = (folder.replace("/", ".") + "." + mod) if folder else mod
    names = {i.name for i in init.imports if i.name and (i.module == "." + mod or i.module == dotted or i.module.endswith("." + dotted))}
    return bool(names) and any(
        imp.name in names and init_path in index.resolve(imp.module, w)
        for w in importers.get(init_path, ()) if w not in side and not w.endswith("__init__.py") for imp in files[w].imports)


def _package_exports(files: Mapping[str, FileFacts], path: str) -> bool:
    """Does the ``__init__.py`` of ``path``'s package import from it (``from .atorch_trainer import AtorchTrainer``, or the
    module's dotted path)?"""
    folder, _, name = path.rpartition("/")
    init = files.get(f"{folder}/__init__.py" if folder else "__init__.py")
    if init is None or not name.endswith(".py"):
        return False
    mod = name[:-3]
    dotted = (folder.replace("/", ".") + "." + mod) if folder else mod
    return any(i.module == "." + mod or i.module == dotted or i.module.endswith("." + dotted) for i in init.imports)


def training_script_name(name: str) -> bool:
    """A file name the roles take for a training entry point (:data:`_ENTRY_NAME`), whatever its extension (a README's
    ``bash finetune.sh`` as well as ``torchrun train.py``)."""
    return bool(_ENTRY_NAME.match(name.rsplit(".", 1)[0] + ".py"))


def side_signal(ff: FileFacts) -> str | None:
    """Why a Python file or notebook is a side project that is not LLM/MLLM training (None: no such sign).

    A web demo (imports gradio/streamlit; not a ``train*.py``), a diffusion model trainer (imports diffusers or a
    Stable Diffusion / UNet / DDPM class, and trains: ``backward()`` / ``.train()``; a diffusion inference container
    in a library is not one), an RL gym environment that uses no LLM library, an LLM application (RAG or agent on
    langchain / llama_index / crewai) that trains nothing. An environment or application that the rest of the
    project imports is not a side project (see :func:`classify_roles`).
    """
    if ff.kind not in ("python", "notebook") or ff.path.endswith("__init__.py"):
        return None  # a package's __init__ re-exports everything, diffusion classes too: not a side project by itself
    tops = {i.module.split(".", 1)[0] for i in ff.imports if i.module and not i.module.startswith(".")}
    name = ff.path.rsplit("/", 1)[-1]
    web = sorted(tops & _WEB_APPS)
    # ... unless it generates with a model itself (alpaca-lora ``generate.py``: the fine-tuned LoRA model loaded in 8 bit,
    # ``model.generate(...)`` behind a Gradio UI): that is the project's inference, which J judges
    # (a checkpoint it loads itself and generates from; LAVIS's Streamlit demos take their models from a helper)
    generates = any(c.short == "generate" for c in ff.calls) and any(c.short == "from_pretrained" for c in ff.calls)
    if web and not _ENTRY_NAME.match(name) and not generates:
        return f"a {web[0]} web app or demo (imports {web[0]}): a UI, not the training code"
    if ("diffusers" in tops or any(i.name and _DIFFUSION_NAME.search(i.name) for i in ff.imports)) and any(
        c.short in ("backward", "train") for c in ff.calls
    ):
        return "a diffusion model trainer (diffusers / Stable Diffusion), not LLM training"
    task = _non_llm_task(ff, tops)
    if task:
        return task
    tool = sorted(tops & _VISION_TOOLS)
    if tool and not tops & (_LLM_LIBS | _LLM_ONLY) and not any(_CAUSAL_NAME.search(i.name or i.module or "") for i in ff.imports):
        return f"a vision detection or OCR tool (imports {tool[0]}, no LLM library), not LLM/MLLM training"
    gym = sorted(tops & _GYM)
    if gym and not tops & _LLM_LIBS:
        return f"an RL environment (imports {gym[0]}, no LLM library)"
    app = sorted(tops & _LLM_APPS)
    if app and not any(c.short in ("backward", "train") for c in ff.calls):
        return f"an LLM application (RAG / agent: imports {app[0]}), not training"
    return None


def _vision_name(name: str) -> bool:
    """A torchvision dataset or model-zoo name (a prefix test first: the roles view of every call asks)."""
    return (name.startswith("torchvision.") and bool(_VISION_TASK.match(name))) or name == "timm.create_model"


def _vision_call(c: Any) -> bool:
    """A call of torchvision's datasets or model zoo (a :class:`RoleCall` keeps the full name of those calls only)."""
    try:
        return _vision_name(c.name)
    except AttributeError:
        return False


def _non_llm_task(ff: FileFacts, tops: set[str]) -> str | None:
    """A script that trains an image classifier or a BERT-style encoder and no language model: DeepSpeedExamples'
    ``training/cifar/cifar10_deepspeed.py`` (torchvision's CIFAR10), ``training/pipeline_parallelism/train.py``
    (AlexNet), ``training/BingBertSquad/nvidia_run_squad_deepspeed.py`` (``BertForQuestionAnswering``). Only a file that
    runs a training step itself and names no causal or vision-language model, nor an LLM-only library."""
    if tops & _LLM_ONLY or not _trains_itself(ff):
        return None
    names = [i.name or "" for i in ff.imports] + [c.short for c in ff.calls]
    # a classification head fine-tuned on the GLUE benchmark (GaLore's ``run_glue.py``: RoBERTa on MRPC through
    # ``AutoModelForSequenceClassification``, or the project's pre-trained LLaMA through ``LlamaForSequenceClassification``,
    # with ``load_dataset("glue", task)``): a downstream benchmark, not LLM training; a reward model built on the same class
    # for RLHF loads no GLUE task and stays
    head = next((n for n in names if _CLASSIFIER.search(n)), None)
    if head and not any(_GENERATIVE.search(n) for n in names) and any(
            c.short in ("load_dataset", "load", "load_metric") and c.args and c.args[0] in _GLUE_SETS for c in ff.calls):
        return f"a GLUE classification fine-tune ({head}), not LLM/MLLM training"
    if any(_CAUSAL_NAME.search(n) for n in names) or any(_CAUSAL_NAME.search(i.module) for i in ff.imports if i.module):
        return None
    vision = next((f"{i.module}.{i.name}" if i.name else i.module for i in ff.imports
                   if i.module and _VISION_TASK.match(f"{i.module}.{i.name}" if i.name else i.module)), None)
    vision = vision or next((c.name for c in ff.calls if _vision_call(c)), None)  # ``torchvision.datasets.CIFAR10(``
    # timm's model zoo (pytorch-accelerated ``examples/vision/transfer_learning/pets_finetune.py``: ``create_model("resnet50d")``)
    vision = vision or next((f"timm.{i.name}" for i in ff.imports if i.module == "timm" and i.name == "create_model"), None)
    vision = vision or next((c.name for c in ff.calls if c.short == "create_model" and _vision_call(c)), None)
    if vision:
        return f"an image model trainer ({vision}), not LLM/MLLM training"
    encoder = next((n for n in names if _ENCODER_TASK.match(n)), None)
    if encoder:
        return f"a BERT-style encoder trainer ({encoder}), not LLM/MLLM training"
    return None


def _doc_targets(doc: str, token: str, paths: set[str], index: _ModuleIndex) -> list[str]:
    """The files a documented command names: relative to the document's folder, then to the root, then one file by its tail."""
    s = token.strip().strip("'\"")
    if s.startswith("./"):
        s = s[2:]
    if s.startswith("/") and ".." not in s.split("/"):
        # the checkout at the file system's root, as in a container (GOT-OCR2.0: ``deepspeed
        # /GOT-OCR-2.0-master/GOT/train/train_GOT.py``): the file whose whole path in the repository is the rest
        rel = s.lstrip("/")
        return [rel] if "/" in rel and rel in paths else []
    if not s or ".." in s.split("/"):
        return []
    if "/" not in s and not re.search(r"\.(py|ya?ml|json|toml|sh)$", s):
        return _module_files(index, s, doc) if re.fullmatch(r"[A-Za-z_][\w.]*", s) else []  # python -m pkg.train
    here = doc.rsplit("/", 1)[0] + "/" if "/" in doc else ""
    for cand in (here + s, s):
        if cand in paths:
            return [cand]
    tail = "/" + s
    found = [p for p in paths if p.endswith(tail)]
    return found if len(found) == 1 else []


def _registered_recipes(files: Mapping[str, FileFacts], paths: list[str], decided: Mapping[str, str]) -> dict[str, str]:
    """Training scripts a recipe registry names (torchtune's ``Recipe(name="lora_finetune_single_device",
    file_path="lora_finetune_single_device.py", ...)``, which ``tune run <name>`` resolves): a call in the project's own
    code with a ``name=`` and a ``.py`` file keyword that names one file of the repository. Only a file that runs a
    training step (``backward()``) is an entry point; a registered generation or evaluation recipe is not."""
    py = [p for p in paths if files[p].kind == "python"]
    out: dict[str, str] = {}
    for p in py:
        if p in decided:
            continue
        for c in files[p].calls:
            if not isinstance(c.kwargs.get("name"), str):
                continue
            for k, v in c.kwargs.items():
                if k == "name" or not isinstance(v, str) or not v.endswith(".py") or ".." in v.split("/"):
                    continue
                tail = "/" + v.strip().lstrip("./")
                hits = [t for t in py if t.endswith(tail) and t != p and t not in decided]
                if len(hits) == 1 and hits[0] not in out and any(x.short == "backward" for x in files[hits[0]].calls):
                    out[hits[0]] = f"{p}:{c.kw_line(k)}"
    return out


# a folder of one sub-folder per model family or recipe family: ``models/``, ``recipes/``, ``perf_recipes/``, ``model_zoo/``
_ZOO = lazy_compile(r"^(\w+_)?(models|recipes|model_zoo|zoo)$", re.I)
_ZOO_MIN = 4  # sub-folders holding Python code: fewer is a package's own layout, not a library of families


def _run_recipe_files(files: Mapping[str, FileFacts], paths: list[str]) -> dict[str, str]:
    """The file of each recipe function a README (or docs/) Python quickstart builds its run from (the ``run_recipe`` doc
    hints, resolved as :meth:`checks.facts.store.Facts.run_recipe` does: the one file of the hint's module that defines the
    function) -> the README place."""
    out: dict[str, str] = {}
    for p in paths:
        ff = files[p]
        if ff.kind != "docs" or ("/" in p and not p.startswith("docs/")):
            continue
        for h in ff.doc_hints:
            if h.kind != "run_recipe":
                continue
            module, _, name = h.value.partition(":")
            stem = module.replace(".", "/")
            homes = [q for q in paths if files[q].kind == "python" and (q.endswith(f"{stem}.py") or f"{stem}/" in q)
                     and any(c.func == name for c in files[q].calls)]
            if len(homes) == 1 and homes[0] not in out:
                out[homes[0]] = f"{p}:{h.line}"
    return out


def _imported_files(files: Mapping[str, FileFacts], index: _ModuleIndex, module: str, name: str | None, importer: str,
                    depth: int = 0) -> list[str]:
    """The files an import statement uses: the module itself, or, through a package ``__init__`` that re-exports it, the
    module that defines the imported name (followed up to four re-exports)."""
    targets: list[str] = []
    if name:
        full = f"{module}.{name}" if not module.endswith(".") else module + name
        targets = index.resolve(full, importer)
    if not targets:
        targets = index.resolve(module, importer)
    out: list[str] = []
    for t in targets:
        if not t.endswith("__init__.py") or not name:
            out.append(t)
        elif depth < 4:
            for imp in files[t].imports:
                if imp.name == name or imp.text.rstrip(",) ").endswith(f" as {name}"):
                    out += _imported_files(files, index, imp.module, imp.name, t, depth + 1)
    return out


#: distributions of training frameworks that projects copy whole into a folder of theirs (LIMO's and SkyThought's
#: LLaMA-Factory, rllm's verl), whose ``examples/`` are upstream's recipes
_FRAMEWORK_DISTS = frozenset({"llamafactory", "llmtuner", "verl", "openrlhf", "axolotl", "trl", "torchtune", "xtuner", "ms_swift",
                              "swift", "open_instruct", "nemo_aligner", "lmflow", "fastchat", "alignment_handbook"})


def _framework_copy_examples(files: Mapping[str, FileFacts], paths: list[str], scoped: Mapping[str, str],
                             forced: Iterable[str]) -> dict[str, str]:
    """Recipe files under ``<copy>/examples/`` of a training framework copied into a folder of the repository
    (LIMO's ``train/``: LLaMA-Factory with its own ``setup.py``, ``name="llamafactory"``, and upstream's 50 example recipes
    beside the project's ``train_limo.yaml``), unless the project names them: a launch outside those examples, a
    documented command, or a link in the docs (LIMO's README links ``train/examples/train_limo.yaml``), outside the copy:
    upstream's own README names every example. Those examples are upstream's, not the project's runs. Path -> why."""
    copies = sorted({p.rsplit("/", 1)[0] for p in paths if "/" in p and p.rsplit("/", 1)[1] in ("setup.py", "pyproject.toml")
                     and _own_distributions(files, p.rsplit("/", 1)[0]) & _FRAMEWORK_DISTS}
                    - {""})
    # (a copy beside code of the project's own: not a released framework's own tree, all of it under one folder, as an
    # sdist unpacks: ``axolotl-0.6.0/setup.py`` is axolotl itself)
    copies = [d for d in copies if any(not p.startswith(d + "/") and files[p].kind in ("python", "shell", "notebook") for p in paths)]
    if not copies or _own_distributions(files) & _FRAMEWORK_DISTS:
        return {}
    named: set[str] = set()
    for p, ff in files.items():
        if any(p.startswith(d + "/") for d in copies):
            continue  # (upstream's own docs and scripts name every example: LLaMA-Factory's ``examples/README.md``)
        base = p.rsplit("/", 1)[0] if "/" in p else ""
        values = [h.value for h in ff.doc_hints if h.kind in ("config_link", "listed_link", "command_file", "command")
                  and isinstance(h.value, str)]
        for x in ff.launches:
            values += [v for v in (x.script, *x.script_args.values(), *x.launcher_args.values()) if isinstance(v, str)]
        for v in values:
            v = v.strip("'\"").removeprefix("./")
            named |= {v, f"{base}/{v}" if base else v, *(f"{d}/{v}" for d in copies)}
    direct = set(named)  # (what the project names itself, before the files those point at)
    # ... and the files a named recipe points at (LIMO's ``deepspeed: examples/deepspeed/ds_z3_config.json``, run from the copy)
    for p in [q for q in named if q in files]:
        base = p.rsplit("/", 1)[0] if "/" in p else ""
        for e in files[p].configs:
            if isinstance(e.value, str) and e.value.endswith((".json", ".yaml", ".yml")):
                v = e.value.strip("'\"").removeprefix("./")
                named |= {v, f"{base}/{v}" if base else v, *(f"{d}/{v}" for d in copies)}
    keep = set(forced) | named
    out: dict[str, str] = {}
    for d in copies:
        prefix = f"{d}/examples/"
        # recipe files; and launch scripts too once the project names its own example there (LIMO's README links
        # ``train_limo.yaml``): otherwise a launch script under a copy's examples may be a run the project added there
        # (SkyThought's ``skythought-rl/examples/sky-t1/run-sky-t1-7b-step2.sh`` in its verl copy)
        kinds = (CONFIG, LAUNCH) if any(p.startswith(prefix) for p in direct) else (CONFIG,)
        for p in paths:
            if p.startswith(prefix) and scoped.get(p) in kinds and p not in keep:
                out[p] = f"an example recipe of the {sorted(_own_distributions(files, d) & _FRAMEWORK_DISTS)[0]} copy in {d}/, not a run the project names"
    return out


def other_run_files(files: Mapping[str, FileFacts], paths: list[str], scoped: Mapping[str, str], index: _ModuleIndex,
                    keep: Iterable[str] = ()) -> dict[str, str]:
    """Files of other model or recipe families than the documented run's -> why.

    A library of many recipes (one Python recipe function per model and GPU) and many model implementations keeps one
    sub-folder per family under a ``models/`` or ``recipes/`` folder (a *zoo*: at least four sub-folders with Python code).
    When the README's Python quickstart builds its run from one recipe function (:func:`_run_recipe_files`) and that file
    sits in a zoo's sub-folder (``recipes/llama/h100/llama3.py``: family ``llama``), the run's model family is known. Then
    the code and configs in every other family's sub-folder of every zoo (``models/qwen_omni/``, ``recipes/moonlight/``, and
    all of ``diffusion/models/``, which holds no ``llama``) are other runs the library offers: another model's FP8 context,
    another recipe's expert-parallel size. Only files in scope so far are moved, and a file that code outside those folders
    imports (not through a package ``__init__``, which re-exports every family) stays: the run may use it (shared helpers
    in ``models/common/``, a converter the trainer calls). Without a quickstart recipe in a zoo nothing moves: when the
    run cannot be told apart, every family is read, as before.
    """
    runs = _run_recipe_files(files, paths)
    if not runs:
        return {}
    children: dict[str, set[str]] = defaultdict(set)  # zoo folder -> its sub-folders with Python code
    for p in paths:
        if files[p].kind != "python":
            continue
        parts = p.split("/")
        for i in range(len(parts) - 2):
            if _ZOO.match(parts[i]):
                children["/".join(parts[: i + 1])].add(parts[i + 1])
    zoos = {d: ch for d, ch in children.items() if len(ch) >= _ZOO_MIN}
    # a folder whose sub-folders are mostly those families again (``diffusion/conversion/{flux,wan,...}`` beside
    # ``diffusion/models/{flux,wan,...}``) holds per-family code too
    known = set().union(*zoos.values()) if zoos else set()
    every: dict[str, set[str]] = defaultdict(set)
    for p in paths:
        if files[p].kind == "python":
            parts = p.split("/")
            for i in range(len(parts) - 2):
                every["/".join(parts[: i + 1])].add(parts[i + 1])
    for d, ch in every.items():
        shared = ch & known
        if d not in zoos and len(shared) >= 3 and 2 * len(shared) > len(ch):
            zoos[d] = ch
    families: dict[str, str] = {}  # family -> the run recipe file in it
    for run in runs:
        for d, ch in zoos.items():
            if run.startswith(d + "/"):
                fam = run[len(d) + 1 :].split("/", 1)[0]
                if fam in ch:
                    families.setdefault(fam, run)
    if not families:
        return {}
    kept = set(keep)
    cand: dict[str, tuple[str, str]] = {}  # file -> (zoo, family folder)
    for p in paths:
        if p in kept or scoped.get(p, CODE) not in IN_SCOPE:
            continue
        for d, ch in zoos.items():
            if p.startswith(d + "/"):
                fam = p[len(d) + 1 :].split("/", 1)[0]
                if fam in ch and fam not in families and "/" in p[len(d) + 1 :]:
                    cand[p] = (d, fam)
                    break
    if not cand:
        return {}
    # keep what the rest of the code imports; a package ``__init__`` re-exports every family, so an import through one
    # counts only for the name it binds (``from pkg import AutoBridge`` -> ``pkg/__init__.py`` -> ``conversion/auto_bridge.py``)
    used: set[str] = set()
    stack = [p for p in paths if p not in cand and files[p].kind in ("python", "notebook") and not p.endswith("__init__.py")
             and scoped.get(p, CODE) in IN_SCOPE]
    seen: set[str] = set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        for imp in files[p].imports:
            for t in _imported_files(files, index, imp.module, imp.name, p):
                if t in cand and t not in used:
                    used.add(t)
                    stack.append(t)
    run_of = ", ".join(f"{f} ({r}, run by {runs[r]})" for f, r in sorted(families.items()))
    return {p: f"another family's code ({d}/{fam}/): the documented run builds on {run_of}"
            for p, (d, fam) in cand.items() if p not in used}


_FIND_KEYS = ("tool", "setuptools", "packages", "find")
_LITERAL_PART = lazy_compile(r"^[A-Za-z_]\w*$")


def unshipped_files(files: Mapping[str, FileFacts], paths: list[str], decided: Mapping[str, str]) -> dict[str, str]:
    """Files under a sub-package that the root ``pyproject.toml`` leaves out of the distribution -> why.

    ``[tool.setuptools.packages.find] exclude = ["ochat/experimental*"]`` (or ``"pkg.experimental*"``) carves a folder
    out of a package the project ships: code kept beside the package (an experiment, a copied script), not what its
    users install and run. Only a pattern naming a sub-package of a named package counts (two or more parts, the first
    one literal); a top-level ``"examples*"``/``"scripts*"``/``"tests*"`` says nothing about the run (recipes live
    there), and ``"*.tests"`` is already a test folder by name. Files another role already claims keep it.
    """
    cfg = files.get("pyproject.toml")
    if cfg is None:
        return {}
    where = ""
    pats: list[tuple[str, str]] = []  # (path pattern, the pattern as written)
    line = 0
    for e in cfg.configs:
        if tuple(e.keys[:4]) != _FIND_KEYS or len(e.keys) != 5:
            continue
        values = e.value if isinstance(e.value, (tuple, list)) else (e.value,)
        if e.keys[4] == "where" and values and isinstance(values[0], str):
            where = values[0].strip().strip("/").removeprefix("./")
        elif e.keys[4] == "exclude":
            line = e.line
            for v in values:
                if not isinstance(v, str):
                    continue
                pat = v.strip().strip("/")
                path_pat = pat if "/" in pat else pat.replace(".", "/")
                parts = path_pat.split("/")
                if len(parts) >= 2 and _LITERAL_PART.match(parts[0]):
                    pats.append((path_pat, pat))
    if not pats:
        return {}
    prefix = where + "/" if where and where != "." else ""
    out: dict[str, str] = {}
    for p in paths:
        if p in decided or not p.startswith(prefix):
            continue
        folders = p[len(prefix):].split("/")[:-1]
        for i in range(2, len(folders) + 1):
            d = "/".join(folders[:i])
            hit = next((w for pp, w in pats if fnmatch.fnmatchcase(d, pp)), None)
            if hit is not None:
                out[p] = f"left out of the package by pyproject.toml:{line} (exclude \"{hit}\")"
                break
    return out


def _shadowed_modules(files: Mapping[str, FileFacts], paths: list[str], assigned: Mapping[str, str],
                      forced: set[str]) -> dict[str, str]:
    """``d/x.py`` beside a regular package ``d/x/`` (with its ``__init__.py``): Python's import finds the package first, so
    no import reaches the module; only a launch or a documented command that runs the file itself does."""
    pathset = set(paths)
    # (by path first: a test file is extracted only when its facts are needed, see checks.deferred)
    candidates = [p for p in paths if p.endswith(".py") and not p.endswith("/__init__.py") and p not in assigned
                  and p not in forced and f"{p[:-3]}/__init__.py" in pathset]
    if not candidates:
        return {}
    run = {x.script.removeprefix("./") for q in paths if q not in assigned for x in files[q].launches if x.script}
    out: dict[str, str] = {}
    for p in candidates:
        if p in run or any("/" in r and p.endswith("/" + r) for r in run):
            continue
        pkg = p[:-3]
        out[p] = f"shadowed by the package {pkg}/ beside it (an import of the name loads {pkg}/__init__.py)"
    return out


def classify_roles(files: Mapping[str, FileFacts], training: Iterable[str] = ()) -> Roles:
    """Give every file a role (see the module docstring). ``training``: globs forced onto the training path."""
    training = tuple(training)
    roles = Roles()
    paths = list(files)
    pathset = set(paths)
    packaged = {p.rsplit("/", 1)[0] for p in paths if "/" in p and p.rsplit("/", 1)[1] in _PACKAGING_FILES}
    # a repository that ships a package (setup.py/pyproject, a wheel's or an sdist's metadata): its users write the scripts
    # that start its registered tasks (LAVIS's sdist), so those stay its entry points
    root_packaged = any(("/" not in p and p in _PACKAGING_FILES) or p == "PKG-INFO" or (p.endswith(".dist-info/METADATA") and p.count("/") == 1)
                        for p in paths)

    def distributed(path: str) -> bool:  # (an ancestor folder's setup.py/pyproject, or the root's)
        return root_packaged or any(path.startswith(d + "/") for d in packaged)
    index = _ModuleIndex((p for p in paths if files[p].kind == "python"), packaged)

    # 1. names: out-of-scope folders and files (a README or guide under docs/ is read for what it documents)
    for p in paths:
        r, why = path_role(p, files[p].kind)
        if r is not None and not (r == DOCS and files[p].kind == "docs"):
            roles.by_path[p], roles.why[p] = r, why

    # 1b. a folder of evaluation wrappers (Mantis ``mantis/mllm_tools/``: 22 of its 24 modules are ``<model>_eval.py``, with the
    # other models' configs they load under ``model_utils/``): an evaluation harness, with everything under it
    py_by_dir: dict[str, list[str]] = {}
    for p in paths:
        if files[p].kind == "python" and "/" in p and not p.endswith("/__init__.py"):
            py_by_dir.setdefault(p.rsplit("/", 1)[0], []).append(p.rsplit("/", 1)[1])
    for d, names in sorted(py_by_dir.items()):
        evals = [n for n in names if _EVAL_SUFFIX.search(n)]
        if len(evals) >= 3 and len(evals) * 3 >= len(names) * 2 and not _DIR_TRAIN.search(d):
            for p in paths:
                if p.startswith(d + "/") and p not in roles.by_path:
                    roles.by_path[p], roles.why[p] = EVAL, f"an evaluation harness ({len(evals)} of {len(names)} modules in {d}/ are *_eval.py)"

    # 2. vendored: a nested package with its own packaging, or a git submodule (another repository checked out in a
    # folder: its ``.git`` file links to ``../.git/modules/<name>``), when the repository has its own code outside it
    nested = _nested_packages(p for p in paths if p not in roles.by_path)
    submodules = _submodules(files, [p for p in paths if p not in roles.by_path])
    code = [p for p in paths if files[p].kind in ("python", "notebook") and p not in roles.by_path]
    for d in _outermost([*nested, *submodules]):
        inside = [p for p in code if p.startswith(d + "/")]
        outside = [p for p in code if not p.startswith(d + "/")]
        if inside and outside and not (d not in submodules and _own_application(files, d, inside, outside, index)):
            why = (f"a git submodule ({d}/.git links to another repository)" if d in submodules
                   else f"separately packaged ({d}/ has its own setup.py/pyproject.toml)")
            for p in paths:
                if p.startswith(d + "/") and p not in roles.by_path:
                    roles.by_path[p], roles.why[p] = VENDORED, why

    # 2b. a copy of a framework's trainer class kept in the package: the framework's code, not the project's settings;
    # unless its package re-exports it (ATorch ``atorch/trainer/__init__.py``: ``from .atorch_trainer import AtorchTrainer``):
    # a forked trainer a library offers as its own API is the library's trainer, the one a user runs
    for p in paths:
        if p not in roles.by_path:
            why = framework_copy(files[p])
            if why and not _package_exports(files, p):
                roles.by_path[p], roles.why[p] = VENDORED, why

    # 2c. a copy of a third-party library kept at the root under its import name (LLaVA-NeXT ships ``trl/`` with
    # ``__version__ = "0.7.11.dev0"``): the library's code, whatever of it the project imports, not the project's settings;
    # never the project's own package (the trl repository's ``trl/``, named by its pyproject or setup.py)
    # and the same copy nested in the project's package (VILA's ``llava/trl/``, imported as ``llava.trl.trainer``)
    own = _own_distributions(files)
    lib_copies: set[str] = set()
    for d in sorted({p.rsplit("/", 1)[0] for p in paths if p.endswith("/__init__.py")}):
        name = d.rsplit("/", 1)[-1]
        init = files.get(f"{d}/__init__.py")
        # (a repository whose packaging names no distribution, a wheel's tree, may be that library itself: not judged; a
        # packaged folder of the project's own that holds the copy names one too: LongVA's ``longva/pyproject.toml``
        # beside ``longva/trl/``)
        if name in _UPSTREAM and not own and "/" in d:
            parts = d.split("/")
            owners = set().union(*(_own_distributions(files, "/".join(parts[:k])) for k in range(1, len(parts))))
            home = next(("/".join(parts[:k]) for k in range(1, len(parts)) if name in _own_distributions(files, "/".join(parts[:k]))), None)
            if home is not None and any(files[p].kind == "python" and not p.startswith(home + "/") for p in paths):
                # a whole checkout of the library in a folder of the repository, beside code of the project's own (LMOps
                # ``dpkd/transformers/``, whose own setup.py names transformers, installed for ``dpkd/``'s scripts): its
                # packaging is the copy's, not the project's (an sdist's ``trl-0.12.0/setup.py`` holds the whole tree)
                owners = {f"{name} (a checkout in {home}/)"}
        elif not own and "/" not in d and name in _UPSTREAM and not any(p.endswith((".dist-info/METADATA", "PKG-INFO")) for p in paths) \
                and any(files[p].kind == "python" and not p.startswith(name) and any(i.module.split(".", 1)[0] == name for i in files[p].imports)
                        for p in paths):
            # a copy at the root of a repository that packages nothing, imported by scripts of the project's own outside
            # any package of the library's name (UniTok's ``open_clip/`` with ``version.py``: ``__version__ = '2.20.0'``,
            # beside ``main.py`` and ``models/``; not a wheel or an sdist, whose METADATA / PKG-INFO names the distribution:
            # torchtune's wheel ships ``recipes/`` beside ``torchtune/``)
            owners = {"the project"}
        else:
            owners = own
        # (a distribution named for its package is the package's own: ``open_clip_torch`` ships ``src/open_clip/``)
        owned = any(o == name or o.startswith(name + "_") for o in owners)
        declares = _version_file(files, d) if name in _UPSTREAM and owners and not owned and init is not None else None
        if declares is None:
            continue
        if any(d.startswith(c + "/") for c in lib_copies):
            continue
        if not any(files[p].kind == "python" and not p.startswith(d + "/") and p not in roles.by_path for p in paths):
            continue
        lib_copies.add(d)
        roles.library_versions.setdefault(name, declares)
        for p in paths:
            if p.startswith(d + "/") and p not in roles.by_path:
                roles.by_path[p], roles.why[p] = VENDORED, f"a copy of the {name} library ({declares[0]} declares its own __version__)"

    roles.library_copies = sorted(lib_copies)

    # 3. a dev Makefile: one without a training launch
    for p in paths:
        ff = files[p]
        if p not in roles.by_path and ff.kind == "make" and not any(_trains(x.launcher, x.script) for x in ff.launches):
            roles.by_path[p], roles.why[p] = DEV, "Makefile without a training launch"

    # 3a. a launch script named for debugging beside the project's other training launches (Groma's ``scripts/debug.sh``: one
    # GPU, micro-batch 1, no accumulation): a developer's shortcut, not a recipe of the run
    launchers = [p for p in paths if p not in roles.by_path and files[p].kind == "shell"
                 and any(_trains(x.launcher, x.script) for x in files[p].launches)]
    debug = [p for p in launchers if _DEBUG_SCRIPT.match(p.rsplit("/", 1)[-1])]
    if debug and len(debug) < len(launchers):
        for p in debug:
            roles.by_path[p], roles.why[p] = DEV, "a debug launch beside the project's training launches"

    forced = [p for p in paths if training and glob_match(p, training)]
    forced_set = set(forced)

    # 3b. side projects that are not LLM/MLLM training: by what a file imports, then the modules only they import
    side: dict[str, str] = {}
    for p in paths:
        if p not in roles.by_path and p not in forced_set:
            why = side_signal(files[p])
            if why:
                side[p] = why
    if side:
        importers: dict[str, set[str]] = {}
        for p in paths:
            if files[p].kind in ("python", "notebook") and p not in roles.by_path:
                for imp in files[p].imports:
                    for t in index.resolve(imp.module, p):
                        if t != p:
                            importers.setdefault(t, set()).add(p)
        # an environment or LLM application the rest of the project imports is the training's own (an agent's
        # environment, a retrieval step of the data pipeline), not a side project; a package __init__ that re-exports
        # a module is not a use of it
        for p in [p for p, why in side.items() if why.startswith(("an RL environment", "an LLM application", "a vision detection"))]:
            if any(w not in side and not w.endswith("__init__.py") for w in importers.get(p, ())):
                del side[p]
        # a module whose class the rest of the project imports through its package's ``__init__`` (align-anything's
        # ``trainers/base/supervised_trainer.py``, the base of every text trainer, saves a diffusers LoRA in one branch:
        # ``from align_anything.trainers.base import SupervisedTrainerBase``): the training's own code
        for p in [p for p in side if _reexported_to(files, index, p, importers, side)]:
            del side[p]
        # (a script a training launch runs is an entry point of its own, whatever else imports it: LanguageBind's ``main.py``,
        # run by ``torchrun -m main`` in every ``scripts/*/train.sh``, is also imported by its Gradio demo's model module)
        run_by_launch = {t for q in paths for x in files[q].launches if files[q].kind == "shell" and _trains(x.launcher, x.script)
                         for t in _script_paths(x.script, pathset, index, q)}
        grew = True
        while grew:
            grew = False
            for t, who in importers.items():
                if t in side or t in roles.by_path or t in forced_set or files[t].kind != "python" or t.endswith("__init__.py") \
                        or t in run_by_launch:
                    continue
                users = {w for w in who if not w.endswith("__init__.py")}
                # (a package ``__init__`` that imports the module hands it to the package's users, and one of them outside the
                # side projects keeps it: transfusion-pytorch's ``from transfusion_pytorch import Transfusion`` in
                # ``train_toy.py`` uses ``transfusion_pytorch/transfusion.py``, which the MNIST trainers import directly)
                via_init = {u for w in who if w.endswith("__init__.py") for u in importers.get(w, ()) if not u.endswith("__init__.py")}
                if users and all(w in side for w in users) and all(u in side for u in via_init):
                    side[t] = f"imported only by side-project code ({sorted(users)[0]})"
                    grew = True
        # a side trainer's own folder (LLaMA2-Accessory ``Large-DiT-ImageNet/``: ``train.py`` trains a diffusion transformer on
        # diffusers' VAE; ``models.py``, ``sample.py`` and ``diffusion/`` sit beside it): the whole folder is that side project
        # when nothing outside it imports its files and none of its other files trains
        for p, why in list(side.items()):
            d = p.rsplit("/", 1)[0] if "/" in p else ""
            if not d or not why.startswith(("a diffusion model trainer", "an image model trainer", "a vision detection")):
                continue
            inside = [q for q in paths if q.startswith(d + "/") and files[q].kind in ("python", "notebook")
                      and q not in roles.by_path and q not in side and q not in forced_set]
            if not inside or any(_trains_itself(files[q]) for q in inside):
                continue
            if any(not w.startswith(d + "/") for q in inside for w in importers.get(q, ())):
                continue
            for q in inside:
                side[q] = f"beside the side project's {p}"
        # the repository itself is such a project when nothing else is left: then it is not a side project
        rest = [p for p in paths if files[p].kind in ("python", "notebook") and p not in roles.by_path and p not in side]
        if rest:
            for p, why in side.items():
                roles.by_path[p], roles.why[p] = SIDE, why
        else:
            side = {}

    # 3b'. a folder the project's own docs call its previous version (BELLE's train/README.md: the DeepSpeed-Chat based
    # code of the last version "放在dschat_train_v1目录下，未做任何改动"): an archived copy, while code outside it remains
    for p, why in _legacy_folders(files, paths, roles.by_path, forced_set).items():
        roles.by_path[p], roles.why[p] = ARCHIVE, why
    # 3b''. top-level folders that are older versions of the same project beside a newer one that trains (RWKV-LM
    # ``RWKV-v1`` ... ``RWKV-v6`` beside ``RWKV-v7/train_temp``; InternLM-XComposer ``InternLM-XComposer-1.0``/``-2.0``)
    for p, why in _older_versions(files, paths, roles.by_path, forced_set).items():
        roles.by_path[p], roles.why[p] = ARCHIVE, why

    # 3b-iii. a module shadowed by a package of the same name beside it (RL4LMs ``envs/text_generation/policy.py`` beside
    # ``policy/__init__.py``): an import of the name loads the package, so the module is a leftover no import reaches
    for p, why in _shadowed_modules(files, paths, roles.by_path, forced_set).items():
        roles.by_path[p], roles.why[p] = ARCHIVE, why

    # 3c. sub-packages the packaging leaves out: context, unless a launch, a documented command or an import reaches them
    for p, why in unshipped_files(files, [p for p in paths if p not in forced_set], roles.by_path).items():
        roles.by_path[p], roles.why[p] = UNSHIPPED, why

    # 4. the training path: entry points of in-scope launches, console scripts, train*.py, documented commands,
    # forced globs; then imports
    entries: list[str] = list(forced)
    basenames = {q.rsplit("/", 1)[-1] for q in paths}
    py_by_dir: dict[str, list[str]] = defaultdict(list)  # the Python files of each folder
    for q in paths:
        if files[q].kind == "python":
            py_by_dir[q.rsplit("/", 1)[0] if "/" in q else ""].append(q)
    shipped_memo: list[set[str]] = []
    in_play = [q for q in paths if q not in roles.by_path]  # (the files the launches are read from, before this pass)

    def shipped_dirs() -> set[str]:
        """The folders that hold a script some launch runs (Megatron-LLM's root: ``pretrain_bert.py``, ``finetune.py``): a
        script named there that the repository does not have at all was removed (see _removed_script). Made on first need."""
        if not shipped_memo:
            shipped_memo.append({t.rsplit("/", 1)[0] if "/" in t else "" for q in in_play
                                 for x in files[q].launches for t in _script_paths(x.script, pathset, index, q) if t.endswith(".py")})
        return shipped_memo[0]

    # the scripts every launch of which passes ``--do_train False`` (SpinQuant's ``2_eval_ptq.sh``: ``torchrun ... ptq.py
    # --do_train False --do_eval True``, a script whose own entry function is named ``train()``): evaluation runs
    # (resolved only where some launch switches training off: the other repositories pay nothing for it)
    runs_of: dict[str, list[bool]] = defaultdict(list)
    if any(_TRAIN_OFF.match(str(x.script_args.get("do_train", ""))) for q in in_play for x in files[q].launches):
        for q in in_play:
            for x in files[q].launches:
                off = bool(_TRAIN_OFF.match(str(x.script_args.get("do_train", ""))))
                for t in _script_paths(x.script, pathset, index, q):
                    runs_of[t].append(off)
    eval_only = {t for t, offs in runs_of.items() if all(offs)}
    launched: set[str] = set()  # the scripts the launches run
    blind: set[str] = set()  # launch files with a training launch whose script is not resolved
    trains_somewhere: list[bool] = []  # (computed on first need) whether any file in scope so far trains itself
    named: list[str] = []  # train*.py found by their name alone
    named_sideline: list[str] = []  # ``pkg/experimental/cpo/cpo_trainer.py``: an entry by its name only
    for p in paths:
        if p in roles.by_path:
            continue
        ff = files[p]
        evaluates: list[str] = []
        ran: list[str] = []  # every script this file's launches name (before the python-launch filter below)
        for launch in ff.launches:
            targets = _script_paths(launch.script, pathset, index, p)
            if not targets and _trains(launch.launcher, launch.script):
                blind.add(p)  # a training launch whose script is not known (``deepspeed --module $cmds``)
            launched.update(targets)
            ran += targets
            # a launch of an inference script that runs no training step itself (BELLE ``run_zero_inference.sh`` runs
            # ``zero_inference.py``: ``Seq2SeqTrainer(...).predict(...)`` under ZeRO-3; EasyLM ``serve_llama_7b.sh`` runs
            # ``python -m EasyLM.models.llama.llama_serve``): a prediction run, like an evaluation
            for t in targets:
                # (a script that serves through an inference engine stays in scope: the J checks judge that inference)
                if t not in roles.by_path and t not in forced_set and (_INFER_SCRIPT.search(t.rsplit("/", 1)[-1]) or (
                        _SAMPLE_SCRIPT.search(t.rsplit("/", 1)[-1]) and any(c.short in _SAMPLING_CALLS for c in files[t].calls))) \
                        and not any(c.short in _STEP_CALLS for c in files[t].calls) \
                        and not any(i.module == m or i.module.startswith(m + ".") for i in files[t].imports for m in _ENGINE_MODULES) \
                        and not any(c.short in _ENGINE_CALLS for c in files[t].calls):
                    if not trains_somewhere:
                        # (a file named for training counts too: EasyLM's JAX ``llama_train.py`` calls no ``backward``)
                        trains_somewhere.append(any(
                            _ENTRY_NAME.match(q.rsplit("/", 1)[-1]) or _trains_itself(files[q]) for q in paths
                            if q not in roles.by_path and files[q].kind in ("python", "notebook")))
                    if not trains_somewhere[0]:
                        # a repository that trains nowhere (pytorch-labs/gpt-fast: ``generate.py``, launched by its
                        # speculative-decoding scripts, is the project itself): its inference scripts are its run
                        continue
                    roles.by_path[t], roles.why[t] = EVAL, f"an inference script {p} launches: it runs no training step"
            for t in targets:
                if t in eval_only and t not in roles.by_path and t not in forced_set:
                    roles.by_path[t], roles.why[t] = EVAL, f"every launch of it passes --do_train False ({p}): an evaluation run"
            if launch.launcher == "python" and not launch.wrappers:
                # ``python run_streaming.py`` (an inference experiment's script) starts training only when the script
                # is named for it or trains itself; a distributed launcher (torchrun, deepspeed, srun) keeps its script
                targets = [t for t in targets if _ENTRY_NAME.match(t.rsplit("/", 1)[-1]) or _trains_itself(files[t])
                           or roles.by_path.get(t) == EVAL or _calls_training(files, index, t)]
            # a launch of an evaluation harness's script (Megatron-DeepSpeed ``MoE/ds_evalharness.sh`` runs
            # ``tasks/eval_harness/evaluate.py``): an evaluation run, whatever parallel layout it passes
            evaluates += [t for t in targets if roles.by_path.get(t) == EVAL]
            entries += [t for t in targets if roles.by_path.get(t) != EVAL]
        # (a script that also starts a serving engine itself, ``vllm serve`` before its client, stays: J judges that engine)
        if evaluates and ff.kind == "shell" and not any(x.launcher in _SERVING_LAUNCHERS for x in ff.launches) and all(
                roles.by_path.get(t) == EVAL for x in ff.launches for t in _script_paths(x.script, pathset, index, p)):
            roles.by_path[p], roles.why[p] = EVAL, f"launches the evaluation script {evaluates[0]}"
            continue
        # a launch script whose every launch runs a script the repository does not have (Video-LLaVA keeps LLaVA's
        # ``scripts/v1_5/*.sh`` that run ``llava/train/train_mem.py``; its own trainer is ``videollava/train/``): stale,
        # its flags are no recipe of this project's run
        missing = [x.script for x in ff.launches if _trains(x.launcher, x.script) and (
            _missing_script(x.script, pathset, p, basenames) or _removed_script(x.script, basenames, shipped_dirs))]
        if ff.kind == "shell" and missing and p not in forced_set and len(missing) == sum(
                1 for x in ff.launches if _trains(x.launcher, x.script)):
            roles.by_path[p], roles.why[p] = OTHER, f"{_STALE}: it runs {missing[0]}, which the repository does not have"
            continue
        # ... or hands every training launch a DeepSpeed config at a path the repository has nowhere, while a config of
        # that name sits elsewhere (R1-V's and Video-R1's ``local_scripts/train_aria_moe.sh``: ``cd /home/tiger/
        # multimodal-open-r1`` then ``--deepspeed scripts/zero3.json``, written for another checkout's layout)
        trains = [x for x in ff.launches if _trains(x.launcher, x.script)]
        lost = [c for x in trains if (c := _missing_config(x, pathset, basenames))]
        # (only where another launch or documented command of the project passes a config that is there: open-r1-
        # multimodal, whose scripts these are, documents ``--deepspeed scripts/zero3.json`` too; its layout, broken or
        # not, is the project's)
        if lost and not _config_found_elsewhere(files, paths, pathset, p):
            lost = []
        if ff.kind == "shell" and trains and len(lost) == len(trains) and p not in forced_set:
            roles.by_path[p], roles.why[p] = OTHER, f"{_STALE}: it passes {lost[0]}, which the repository does not have there"
            continue
        # a launch script that runs only side projects' scripts (DeepSpeedExamples ``training/cifar/run_ds_moe.sh`` runs
        # ``cifar10_deepspeed.py``, a CIFAR-10 CNN): the side project's launch, not a recipe of the project's training
        if ff.kind == "shell" and ran and p not in forced_set and all(roles.by_path.get(t) == SIDE and t not in forced_set for t in ran):
            roles.by_path[p], roles.why[p] = SIDE, f"launches the side project's script {ran[0]}"
            continue
        # one whose launches run a script that is nowhere in the repository, from a folder of a side project's code
        # (DeepSpeedExamples ``training/BingBertSquad/run_hf.sh`` runs ``nvidia_run_squad_mpi.py`` beside the BERT SQuAD
        # scripts): that side project's launch too; its node count is no run of the project's
        if ff.kind == "shell" and not ran and p not in forced_set and _side_folder(p, py_by_dir, roles.by_path) and all(
                _absent_script(x.script, basenames) for x in ff.launches if _trains(x.launcher, x.script)) and any(
                _trains(x.launcher, x.script) for x in ff.launches):
            roles.by_path[p], roles.why[p] = SIDE, "a side project's launch: its script is missing, beside the side project's code"
            continue
        for e in ff.configs:  # [project.scripts] name = "pkg.cli:main"; setup(entry_points={"console_scripts": [...]})
            if e.keys and e.keys[0] in ("project", "tool") and "scripts" in e.keys and isinstance(e.value, str) and ":" in e.value:
                entries += index.by_name.get(e.value.split(":", 1)[0].strip(), [])[:3]
        if ff.kind == "python" and _ENTRY_NAME.match(p.rsplit("/", 1)[-1]) and _HELPER_MODULE.search(p) and not any(
                _in_main_block(c) for c in ff.calls):
            # a helper module named for training (Show-o's ``models/training_utils.py``: an EMA class and LR helpers, which
            # nothing imports) is no run of its own: it is on the training path only when an entry point imports it
            pass
        elif (ff.kind == "python" and not distributed(p) and _ENTRY_NAME.match(p.rsplit("/", 1)[-1]) and _classes_only(ff)
              and not _trains_itself(ff)):
            # a module that only defines classes (MovieChat's ``tasks/video_text_pretrain.py``: a task class registered with
            # ``@registry.register_task``, whose methods are empty) runs nothing of its own: an import puts it on the path
            pass
        elif ff.kind == "python" and _ENTRY_NAME.match(p.rsplit("/", 1)[-1]):
            # a trainer or config module of a sideline sub-package (``experimental/cpo/cpo_trainer.py``) is a library class
            # named like a recipe; a script there (``experimental/train_alpaca.py``) stays an entry point
            (named_sideline if _SIDELINE_DIR.search(p) and _LIBRARY_MODULE.search(p) else named).append(p)
    _beside_stale_launches(files, paths, roles, forced_set)
    registered = _registered_recipes(files, paths, roles.by_path)
    entries += list(registered)
    # Python config recipes a config loader reads (mmengine ``Config.fromfile``: xtuner's 587 configs) are the training
    # path's recipes, as YAML recipes are; the dataset and model modules they import are its input pipeline and model
    config_modules = python_config_modules(files)  # a set: taken in the files' order, so the roles' order is the same every run
    recipes = [p for p in paths if p in config_modules and p not in roles.by_path]
    entries += recipes
    documented: dict[str, str] = {}  # file -> "README.md:71", the command that runs it
    commanded: set[str] = set()  # the scripts documented commands run (not the recipes they hand them)
    offered: set[str] = set()  # scripts the docs offer in place of the run's ("replace `train_mem.py` with `train_xformers.py`")
    prose: dict[str, str] = {}  # the run's scripts that prose names (the one replaced), not a command
    for p in paths:
        ff = files[p]
        if ff.kind != "docs" or not ff.doc_hints or path_role(p, ff.kind)[0] not in _DOC_ROLES:
            continue
        for h in ff.doc_hints:
            if h.kind == "alternative":
                offered.update(_doc_targets(p, h.value, pathset, index))
            if h.kind in ("command", "command_file", "run_script"):
                for t in _doc_targets(p, h.value, pathset, index):
                    if h.kind == "command" and MODULE_MAIN.fullmatch(h.value) and _PLAIN_PYTHON.match(h.text or "") \
                            and not _starts_training(files[t]):
                        # ``python -m pkg.main`` of a package whose main serves or converts: not a training run (a
                        # distributed launcher's ``torchrun -m open_clip_train.main`` is one, whatever its main calls)
                        continue
                    # a test, archive or side file stays context; an unshipped one that a command runs is the run's
                    if roles.by_path.get(t, UNSHIPPED) == UNSHIPPED and t not in documented:
                        documented[t] = f"{p}:{h.line}"
                        if h.kind == "run_script":
                            prose[t] = f"{p}:{h.line}"
                    if h.kind in ("command", "run_script"):
                        commanded.add(t)
    entries += list(documented)
    # in a repository that ships no launch of its own, a train*.py beside the entry point its README's command runs
    # (FastChat: the README runs ``fastchat/train/train_mem.py``; ``train_lora.py``, ``train_xformers.py``,
    # ``train_baichuan.py`` sit beside it) is an alternative entry point, not the run: it joins the training path only if
    # the run imports it. (Where launches are shipped, one the engine cannot resolve, ``deepspeed --module $cmds``, would
    # leave its script looking unlaunched: there every train*.py stays an entry point.)
    shipped = any(files[p].launches for p in paths if p not in roles.by_path)
    run_dirs = set() if shipped else {e.rsplit("/", 1)[0] if "/" in e else "" for e in commanded if e in pathset}
    if shipped and not any(p not in roles.by_path for p in blind):
        # every in-scope training launch is resolved: a train*.py beside the scripts they run that none of them runs
        # (Video-LLaVA's ``train_xformers.py`` beside the launched ``train_mem.py``) is an alternative entry point too
        run_dirs |= {t.rsplit("/", 1)[0] if "/" in t else "" for t in launched if _ENTRY_NAME.match(t.rsplit("/", 1)[-1])}
    siblings = [p for p in named if p not in entries and p not in documented and (p.rsplit("/", 1)[0] if "/" in p else "") in run_dirs]
    elsewhere: list[str] = []
    if shipped and launched and not any(p not in roles.by_path for p in blind) and run_dirs:
        # ... and one in a folder where nothing is launched or documented, below a folder of the run's (Chinese-Vicuna's
        # ``tools/application/chatglm_lora_finetune.py``, a ChatGLM example no script or README step runs, beside the
        # launched ``finetune*.py`` at the root): another script the repository offers, not the run; it joins the
        # training path only if the run imports it
        ran_dirs = {t.rsplit("/", 1)[0] if "/" in t else "" for t in (*launched, *documented)}
        # (a folder of plain scripts only: a sub-package's trainer, torchtitan's ``experiments/*/trainer.py``, may be what
        # a registry the run reads at run time picks, and its modules the run's own; and a script that runs itself, from a
        # main block or module-level training calls: RWKV's ``src/trainer.py`` holds the run's callback, a module it imports)
        elsewhere = [p for p in named if p not in entries and p not in documented and p not in siblings
                     and "/" in p and not any(p.startswith(d + "/") and "/" not in p[len(d) + 1:] for d in ran_dirs)
                     and any(d == "" or p.startswith(d + "/") for d in run_dirs)
                     and p.rsplit("/", 1)[0] + "/__init__.py" not in pathset
                     and any(_in_main_block(c) or (c.func is None and c.short in _STEP_CALLS) for c in files[p].calls)]
        siblings += elsewhere
    # a train*.py found by its name alone inside a copy of another project's package, which imports that package by its own
    # top-level name (LISA's ``model/llava/train/train.py``: ``from llava import conversation``, with no ``llava/`` at the
    # root): it runs only in the upstream checkout, so it is the copy's entry point, not this project's run
    upstream = {p: d for p in named if p not in entries and p not in documented and p not in siblings
                and (d := _upstream_script(files[p], pathset, packaged)) is not None
                and _imported_as_subpackage(files, [q for q in paths if q not in roles.by_path], d)}
    siblings += list(upstream)
    # a script the docs offer in place of the run's is an alternative wherever it lives, unless a command runs it too
    siblings += [p for p in sorted(offered) if p not in siblings and p not in entries and p not in commanded and files[p].kind == "python"]
    if shipped and launched and not any(p not in roles.by_path for p in blind):
        # every training launch is resolved: a train*.py that only scripts nothing runs import is a module of those scripts,
        # not an entry point of its own (LanguageBind's ``training/train.py``, imported by ``training/main.py``, a copy of
        # OpenCLIP's trainer beside the launched root ``main.py``); imported by a package or a launched script, it stays
        importers_of: dict[str, set[str]] = {}
        for q in paths:
            if files[q].kind == "python" and q not in roles.by_path:
                for imp in files[q].imports:
                    for t in _targets(imp, q, index):
                        if t != q:
                            importers_of.setdefault(t, set()).add(q)

        def unrun_script(q: str) -> bool:
            return (q not in launched and q not in documented and q not in forced_set and not q.endswith("__init__.py")
                    and any(_in_main_block(c) for c in files[q].calls))

        named = [p for p in named if not importers_of.get(p) or not all(unrun_script(q) for q in importers_of[p])
                 or p in documented or p in forced_set]
    entries += [p for p in named if p not in siblings]
    # a sideline sub-package (``trl/experimental/``) beside a run that a launch, console script or command starts outside it:
    # its modules named like trainers are recipes offered beside the run, not entry points of it (see :data:`_SIDELINE_DIR`)
    sideline_aside = any(e in pathset and not _SIDELINE_DIR.search(e) for e in entries)
    if not sideline_aside:
        entries += named_sideline
    for c in (c for p in paths if p not in roles.by_path and p.endswith("setup.py") for c in files[p].calls if c.short == "setup"):
        eps = c.kwargs.get("entry_points")
        text = repr(eps) if eps is not None else ""
        for m in re.findall(r"=\s*([A-Za-z_][\w.]*)\s*:", text):
            entries += index.by_name.get(m, [])[:3]
    # console scripts a setup.py builds in a helper (``console_scripts = ["llamafactory-cli = llamafactory.cli:main"]``)
    for a in (a for p in paths if p not in roles.by_path and p.endswith("setup.py") for a in files[p].assigns):
        values = a.value if isinstance(a.value, (tuple, list)) else (a.value,)
        for v in values:
            m = _CONSOLE_SCRIPT.match(v) if isinstance(v, str) else None
            if m:
                entries += index.by_name.get(m.group(1), [])[:3]
    seen: set[str] = set()
    stack = [e for e in entries if e in pathset]
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        if roles.by_path.get(p) == SIDE and p not in forced_set:
            continue  # a demo app or diffusion trainer that a launch runs is still not LLM training
        if lib_copies and p not in entries and p not in forced_set and any(p.startswith(c + "/") for c in lib_copies):
            # a copy of a library the project imports (anole's ``transformers/src/transformers/``, 4.42.0.dev0, installed
            # with ``pip install -e``; Groma's ``mmcv/`` and ``mmdet/``) is that library, read as if installed: its trainer's
            # SageMaker branch, its collators, quantizer and checkpoint helpers are not the project's choices
            continue
        if roles.by_path.get(p) is not None and p not in forced:
            why = roles.why.get(p, "")
            if roles.by_path[p] not in (VENDORED, UNSHIPPED) and p not in entries:
                # an eval harness, benchmark, archive or test helper that a training script imports runs beside
                # training, not as its input pipeline: it stays context unless a launch names it
                continue
            roles.why[p] = f"on the training path (also {why})" if why else "on the training path"
        roles.by_path[p] = TRAINING if files[p].kind in ("python", "notebook") else _kind_role(files[p].kind, p.rsplit("/", 1)[-1])
        if lib_copies and p.endswith("/__init__.py") and any(p.startswith(c + "/") for c in lib_copies):
            # a library copy's package ``__init__`` imports the library's whole surface (transformers': 753 modules, every
            # model): what the project uses of it is the modules its imports name (:func:`_reexport_source`), not all that
            continue
        for imp in files[p].imports:
            targets = index.resolve(imp.module, p)
            if imp.name:
                full = f"{imp.module}.{imp.name}" if not imp.module.endswith(".") else imp.module + imp.name
                targets = index.resolve(full, p) or targets
                if lib_copies:
                    targets = [u for t in targets for u in _reexport_source(files, index, t, imp.name, lib_copies)]
            stack.extend(t for t in targets if t not in seen)
    roles.entry_points = sorted({e for e in entries if e in pathset and roles.by_path.get(e) == TRAINING})
    for p in siblings:
        if p not in roles.by_path:
            run = sorted(e for e in roles.entry_points if (e.rsplit("/", 1)[0] if "/" in e else "") == (p.rsplit("/", 1)[0] if "/" in p else ""))
            roles.by_path[p] = OTHER
            roles.why[p] = (f"the entry point of a copied package ({upstream[p]}/ is imported here as a top-level package the "
                            "repository root does not have)" if p in upstream else
                            f"a training script no launch or documented command runs, in a folder of its own below the run's "
                            f"({roles.entry_points[0] if roles.entry_points else 'the run'} is launched)" if p in elsewhere else
                            f"an alternative entry point beside {run[0] if run else 'the run'}, which a launch or documented command runs")
    _alternatives_imports(files, paths, roles, index, [p for p in siblings if roles.by_path.get(p) == OTHER])
    for p, where in documented.items():
        if roles.by_path.get(p) in IN_SCOPE and not roles.why.get(p):
            roles.why[p] = f"named as the run's script at {where}" if p in prose else f"run by the documented command at {where}"
    for p, where in registered.items():
        if roles.by_path.get(p) == TRAINING and not roles.why.get(p):
            roles.why[p] = f"a training recipe registered at {where} (a launcher runs it by its registered name)"

    # 4b. notebooks beside the training entry points: tutorials and walk-throughs, not the training path
    if any(e.endswith(".py") for e in roles.entry_points):
        for p in paths:
            if p not in roles.by_path and files[p].kind == "notebook":
                roles.by_path[p], roles.why[p] = DOCS, "a notebook beside the training entry points (a tutorial)"

    # 5. everything else by kind
    for p in paths:
        if p not in roles.by_path:
            roles.by_path[p] = _kind_role(files[p].kind, p.rsplit("/", 1)[-1])

    # 5a. configs and requirements kept beside a side project's scripts (DeepSpeedExamples ``training/cifar/ds_config.json``,
    # the BingBertSquad 1-bit Adam configs, LongLoRA's ``pdf2txt/requirements.txt``): the side project's settings. The folder that decides is the config's nearest
    # one holding anything but configs, docs and build files; it must hold a side file and no training-path file or launch
    if any(r == SIDE for r in roles.by_path.values()):
        for p, why in _side_configs(files, paths, roles, forced_set).items():
            roles.by_path[p], roles.why[p] = SIDE, why

    # 5b. the code of a sideline sub-package that nothing on the training path imports: recipes kept beside the run
    if sideline_aside:
        for p in paths:
            m = _SIDELINE_DIR.search(p)
            if m and roles.by_path.get(p) == CODE and files[p].kind == "python":
                roles.by_path[p] = OTHER
                roles.why[p] = (f"under the sideline sub-package {p[:m.end()]} beside the run: no launch, console script, "
                                "documented command or import of the training path reaches it")

    # 6. a library of many model and recipe families whose documented run builds on one: the other families are context
    for p, why in other_run_files(files, paths, roles.by_path, index, forced).items():
        roles.by_path[p], roles.why[p] = OTHER, why
    # 6b. the example recipes of a training framework copied into the repository: upstream's examples, not the project's runs
    for p, why in _framework_copy_examples(files, paths, roles.by_path, forced).items():
        roles.by_path[p], roles.why[p] = OTHER, why
    # 6c. the top-level configs of a Hydra config folder that no entry point of the run loads and no launch names
    for p, why in _unselected_hydra_configs(files, paths, roles, forced_set).items():
        roles.by_path[p], roles.why[p] = OTHER, why
    for p in forced:
        roles.why[p] = "paths.training"
    return roles


#: Hydra's command-line options that pick another primary config (``--config-name ppo_megatron_trainer``, ``-cn x``)
_HYDRA_NAME_FLAGS = ("config-name", "config_name", "cn")
#: words a file's source holds when one of its launches can name a Hydra config (a flag, or a YAML file)
_HYDRA_NAMING_WORDS = (b"config-name", b"config_name", b"-cn", b".yaml", b".yml")


def _unselected_hydra_configs(files: Mapping[str, FileFacts], paths: list[str], roles: Roles, forced: set[str]) -> dict[str, str]:
    """Primary configs of a Hydra config folder that the run does not load (PRIME's verl fork: its launch runs
    ``main_ppo``, whose ``@hydra.main(config_path="config", config_name="ppo_trainer")`` loads ``ppo_trainer.yaml``; the
    Megatron backend's ``ppo_megatron_trainer.yaml`` beside it is read only with ``--config-name ppo_megatron_trainer``).
    A config folder counts once an entry point on the training path loads a config from it; a top-level config there is
    kept when any entry point in scope loads it, when any launch or documented command names it (``--config-name``, or its
    file), and when it is not in scope; config groups (sub-folders) are the run's choices and stay. Path -> why."""
    loads: dict[str, list[tuple[str, str]]] = {}  # config folder -> (entry file, config file) of each @hydra.main
    for p in paths:
        ff = files[p]
        # (a file still being extracted, a deferred test, whose source has no ``config_name`` is not read: see
        # :meth:`checks.deferred.Pending.lacks`)
        if ff.kind != "python" or source_lacks(ff, (b"config_name",)):
            continue
        for c in ff.calls:
            name, where = c.kwargs.get("config_name"), c.kwargs.get("config_path")
            if c.short != "main" or not isinstance(name, str) or not isinstance(where, str) or where.startswith(("/", "pkg:")):
                continue
            here = p.rsplit("/", 1)[0] if "/" in p else ""
            folder = posixpath.normpath(posixpath.join(here, where)) if here or where not in ("", ".") else ""
            stem = name.removesuffix(".yaml").removesuffix(".yml")
            loads.setdefault(folder, []).append((p, f"{folder}/{stem}.yaml" if folder and folder != "." else f"{stem}.yaml"))
    if not loads:
        return {}
    named: set[str] = set()  # config names and files any launch or documented command names
    for ff in files.values():
        if source_lacks(ff, _HYDRA_NAMING_WORDS):
            continue  # (no such word in a deferred file's source: none of its launches can name a config)
        for x in (*ff.launches, *ff.doc_launches):
            for key, v in (*x.script_args.items(), *x.launcher_args.items()):
                if isinstance(v, str) and (str(key).lstrip("-") in _HYDRA_NAME_FLAGS or v.endswith((".yaml", ".yml"))):
                    v = v.strip("'\"").rsplit("/", 1)[-1]
                    named |= {v.removesuffix(".yaml").removesuffix(".yml")}
    out: dict[str, str] = {}
    for folder, pairs in loads.items():
        run = [(e, cfg) for e, cfg in pairs if roles.by_path.get(e) == TRAINING]
        if not run:
            continue
        # (what any entry point in scope loads stays: simpleRL's ``fsdp_sft_trainer.py`` reads its LoRA switch from
        # ``sft_trainer.yaml``; the config of an evaluation script, TinyZero's ``main_generation.py``, is context with it)
        chosen = {cfg for e, cfg in pairs if roles.by_path.get(e, TRAINING) in IN_SCOPE}
        prefix = f"{folder}/" if folder and folder != "." else ""
        for q in paths:
            if not q.startswith(prefix) or "/" in q[len(prefix):] or not q.endswith((".yaml", ".yml")) or q in chosen:
                continue
            stem = q.rsplit("/", 1)[-1].removesuffix(".yaml").removesuffix(".yml")
            if stem in named or q in forced or roles.by_path.get(q) not in IN_SCOPE:
                continue
            if any(cfg.removesuffix(".yaml") + ".yml" == q for cfg in chosen):
                continue
            entry, cfg = run[0]
            out[q] = (f"a Hydra config the run does not load: {entry} loads {cfg}, and no launch or documented command "
                      f"names {stem} (--config-name)")
    return out


#: the kinds of file that run or hold code; a folder of only the others (configs, docs, requirements) runs nothing itself
_ACTIVE_KINDS = frozenset({"python", "notebook", "shell", "make"})


def _side_configs(files: Mapping[str, FileFacts], paths: list[str], roles: Roles, forced: set[str]) -> dict[str, str]:
    """Config files whose nearest folder with more than configs, docs and build files holds a side project's file and no
    training-path file or launch (see step 5a of :func:`classify_roles`)."""
    children: dict[str, list[str]] = {}
    for p in paths:
        children.setdefault(p.rsplit("/", 1)[0] if "/" in p else "", []).append(p)
    verdict: dict[str, str | None] = {}

    def decide(d: str) -> str | None:
        if d not in verdict:
            own = children.get(d, [])
            active = [q for q in own if files[q].kind in _ACTIVE_KINDS]
            if not active and d:
                verdict[d] = decide(d.rsplit("/", 1)[0] if "/" in d else "")
            elif not d:
                verdict[d] = None  # the repository's root is never a side project's folder
            else:
                side = [q for q in active if roles.by_path.get(q) == SIDE]
                live = [q for q in active if roles.by_path.get(q) in (TRAINING, LAUNCH)]
                verdict[d] = f"beside the side project's {side[0]}" if side and not live else None
        return verdict[d]

    out: dict[str, str] = {}
    for p in paths:
        if files[p].kind in ("yaml", "json", "toml", "requirements") and roles.by_path.get(p) in IN_SCOPE and p not in forced:
            why = decide(p.rsplit("/", 1)[0] if "/" in p else "")
            if why:
                out[p] = why
    return out


def _targets(imp: Any, p: str, index: Any) -> list[str]:
    targets = index.resolve(imp.module, p)
    if imp.name:
        full = f"{imp.module}.{imp.name}" if not imp.module.endswith(".") else imp.module + imp.name
        targets = index.resolve(full, p) or targets
    return targets


def _upstream_script(ff: FileFacts, pathset: set[str], packaged: set[str]) -> str | None:
    """The folder of a copied package whose script ``ff`` is, when the script imports that package by its own top-level
    name and nothing at the repository's root (or under ``src/``, or packaging at the root or above the package that
    installs it) provides that name: ``model/llava`` for LISA's ``model/llava/train/train.py`` (``from llava.constants
    import ...``; LISA ships no setup.py)."""
    folders = ff.path.split("/")[:-1]
    for imp in ff.imports:
        top = imp.module.split(".", 1)[0]
        if imp.module.startswith(".") or top not in folders[1:]:
            continue
        k = folders.index(top, 1)
        # the import names a module of that folder (``llava.constants``: model/llava/constants.py), not a library that
        # shares a folder's name (``import torch`` in dlrover's ``trainer/torch/``)
        pkg = "/".join(folders[: k + 1])
        rest = [*imp.module.split(".")[1:], *([imp.name] if imp.name and imp.name != "*" else [])]
        if f"{pkg}/__init__.py" not in pathset or not rest or not any(
                f"{pkg}/{'/'.join(rest[:n])}{tail}" in pathset for n in range(1, len(rest) + 1) for tail in (".py", "/__init__.py")):
            continue
        if folders[k - 1] == "src" or any("/".join(folders[:j]) in packaged for j in range(1, k + 1)) \
                or not _PACKAGING_FILES.isdisjoint(pathset):
            continue  # a src layout, or a package that packaging above it installs (an sdist's ``x-1.0/setup.py``)
        if f"{top}.py" in pathset or any(q.startswith((f"{top}/", f"src/{top}/")) for q in pathset):
            continue
        return pkg
    return None


def _imported_as_subpackage(files: Mapping[str, FileFacts], scope: list[str], pkg: str) -> bool:
    """Whether code of the project outside folder ``pkg`` imports it as a sub-package of the folder above it (LISA's
    ``model/LISA.py``: ``from .llava.model.language_model.llava_llama import ...``; or ``model.llava...``): the project's
    own import root for that package is not its parent folder, as an installed wheel's ``purelib/`` would be."""
    parent, top = pkg.rsplit("/", 2)[-2:]
    for q in scope:
        ff = files[q]
        if ff.kind != "python" or q.startswith(pkg + "/"):
            continue
        for imp in ff.imports:
            m = imp.module
            if not m.startswith("."):
                if (m + ".").startswith(f"{parent}.{top}."):
                    return True
                continue
            level = len(m) - len(m.lstrip("."))
            base = q.split("/")[:-1]
            base = base[: len(base) - (level - 1)] if level > 1 else base
            full = "/".join(base + [x for x in m.lstrip(".").split(".") if x])
            if full == pkg or full.startswith(pkg + "/"):
                return True
    return False


def _alternatives_imports(files: Mapping[str, FileFacts], paths: list[str], roles: Roles, index: Any, alternatives: list[str]) -> None:
    """Modules that only alternative entry points import (FastChat's ``llama_xformers_attn_monkey_patch.py``, imported by
    ``train_xformers.py`` alone) are the alternatives' code: role ``other`` too. Only modules no role has claimed yet."""
    if not alternatives:
        return
    alt = set(alternatives)
    cand: dict[str, str] = {}
    for p in alternatives:
        for imp in files[p].imports:
            for t in _targets(imp, p, index):
                if t not in roles.by_path and t not in alt and files[t].kind == "python":
                    cand.setdefault(t, p)
    if not cand:
        return
    stems = {t.rsplit("/", 1)[-1].removesuffix(".py") for t in cand}
    words = tuple(s.encode() for s in stems)
    for q in paths:
        if q in alt or not cand:
            continue
        ff = files[q]
        # a file still being extracted (a test, deferred) whose source names none of the candidates' modules cannot pass
        # the test below: its facts are not needed
        if source_lacks(ff, words):
            continue
        for imp in ff.imports:
            # a cheap test on the names first: only an import naming one of the candidates' modules is resolved
            if stems.isdisjoint(f"{imp.module}.{imp.name or ''}".replace("..", ".").split(".")):
                continue
            for t in _targets(imp, q, index):
                if t != q and cand.pop(t, None) is not None:
                    stems = {c.rsplit("/", 1)[-1].removesuffix(".py") for c in cand}
                    words = tuple(s.encode() for s in stems)
    for t, p in cand.items():
        roles.by_path[t], roles.why[t] = OTHER, f"imported only by the alternative entry point {p}"


class RoleCall:
    """What :func:`classify_roles` reads of a call (see :func:`role_calls`): its last name segment, its enclosing function,
    whether it switches a module to evaluation mode (``train(mode=False)``),
    its keywords whose value is a string (``name="lora_finetune"``, ``file_path="recipe.py"``), a ``setup(...)`` call's
    ``entry_points``, the full name of a config loader or of a torchvision dataset/model, the lines of a named recipe
    registration, and whether it sits in its module's main block. Reading anything else raises (so that a new read of the
    roles cannot go unrecorded)."""

    __slots__ = ("_kw_lines", "_line", "_name", "args", "class_level", "eval_mode", "func", "kwargs", "main", "short")

    def __init__(self, c: Any, short: str, class_level: bool = False) -> None:
        self.short = short
        self.eval_mode = _eval_mode(c)  # ``module.train(mode=False)``: read by :func:`_trains_itself` (its value kept, not the call's)
        self.class_level = class_level  # in a class body or on a decorator's line (read for registry modules only)
        self.func: str | None = c.func
        self.main = _in_main_block(c)  # in the module's ``if __name__ == "__main__":`` block
        kwargs = c.kwargs
        self._name: str | None = None
        self._line: int | None = None
        self._kw_lines: dict[str, int] = _NO_LINES
        # a dataset loader's first argument when it is a name (``load_dataset("glue", task)``: the GLUE fine-tunes), else none
        self.args: tuple[str, ...] = (c.args[0],) if short in _DATASET_LOADERS and c.args and isinstance(c.args[0], str) else ()
        if not kwargs:
            self.kwargs: dict[str, Any] = kwargs
            if short in _LOADERS or _vision_name(c.name):
                self._name = c.name
            return
        kw = {k: v for k, v in kwargs.items() if v.__class__ is str or isinstance(v, str)}
        if short == "setup" and "entry_points" in kwargs:
            kw["entry_points"] = kwargs["entry_points"]
        if short == "setup" and "name" in kwargs:
            kw["name"] = kwargs["name"]  # a distribution name chosen by a build switch is an expression (mmcv's setup.py)
        self.kwargs = kw
        if short in _LOADERS or _vision_name(c.name):
            self._name = c.name
        if isinstance(kwargs.get("name"), str):
            self._line = c.line
            self._kw_lines = dict(c.kw_lines)

    @property
    def name(self) -> str:
        if self._name is None:
            raise AttributeError("the roles read the full name of config loaders only")
        return self._name

    def kw_line(self, keyword: str) -> int:
        if self._line is None:
            raise AttributeError("the roles read the lines of named registrations only")
        return self._kw_lines.get(keyword, self._line)

    def __repr__(self) -> str:
        return repr((self.short, self.func, self.kwargs, self._name, self._line, self._kw_lines, self.main, self.class_level, self.args,
                     self.eval_mode))


_LOADERS = frozenset({"fromfile", "from_file", "load"})
_DATASET_LOADERS = frozenset({"load_dataset", "load", "load_metric"})
_NO_LINES: dict[str, int] = {}


def role_calls(ff: FileFacts) -> list[RoleCall]:
    """A file's calls as :func:`classify_roles` reads them (one :class:`RoleCall` per call, in order): a recording of the
    roles' reads (:mod:`checks.query_log`) hands these out for ``calls``, so an edit of what the roles never read (a
    number passed to a call, an argument, a moved line) leaves them as they were."""
    shorts: dict[str, str] = {}
    out = []
    level = _class_level_lines(ff)
    for c in ff.calls:
        n = c.name
        s = shorts.get(n)
        if s is None:
            s = shorts[n] = n.rsplit(".", 1)[-1]
        out.append(RoleCall(c, s, level is not None and level(c.line)))
    return out


def _class_level_lines(ff: FileFacts) -> Callable[[int], bool] | None:
    """For a module named like an entry point that files classes into a registry: whether a line sits in a class body or on
    a decorator's line (see :func:`_classes_only`); None for any other file (nothing is read)."""
    if not ff.classes or not _ENTRY_NAME.match(ff.path.rsplit("/", 1)[-1]) \
            or not any(_REGISTRY_DECORATOR.search(d.name) for d in ff.decorators):
        return None
    spans = [(k.line, k.end) for k in ff.classes]
    decorated = {d.line for d in ff.decorators}
    return lambda line: line in decorated or any(a <= line <= b for a, b in spans)


__all__ = ["ARCHIVE", "BENCHMARK", "BUILD", "CI", "CODE", "CONFIG", "DEV", "DOCS", "EVAL", "GUIDE", "IN_SCOPE", "LAUNCH", "OTHER", "OUT_OF_SCOPE",
           "ROLE_LABELS", "SIDE", "TEST", "TRAINING", "UNSHIPPED", "VENDORED", "Roles", "classify_roles", "ds_config_ref", "other_run_files", "path_role",
           "side_signal", "training_script_name", "trains_itself", "unshipped_files"]
