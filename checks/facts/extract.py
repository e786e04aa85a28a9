"""One file's bytes -> :class:`FileFacts`, by the file's kind."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ..lazyre import lazy_compile
from .configs import extract_json, extract_toml, extract_yaml
from .deps import extract_requirements, extract_wheel_metadata, from_cog, from_conda_env, from_pyproject, from_setup_calls, pip_installs
from .docs_md import (
    extract_doc_commands,
    extract_doc_config_links,
    extract_doc_hints,
    extract_doc_inline_commands,
    extract_doc_legacy,
    extract_doc_pins,
    extract_doc_replacements,
    extract_doc_run_models,
    extract_doc_run_recipes,
    extract_doc_scripts,
)
from .notebook import DATABRICKS_HEADER, extract_databricks, extract_notebook
from .python import extract_python
from .shell import extract_dockerfile, extract_shell_text
from .types import ConfigEntry, FileFacts

_SUPPRESS = lazy_compile(r"#\s*accel-ignore\b(?::\s*([A-Ja-j]\d+(?:\s*,\s*[A-Ja-j]\d+)*))?")
_SHELL_EXT = {".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".pbs", ".job", ".lsf"}
_DOC_EXT = {".md", ".qmd", ".rst", ".mdx"}
#: prose files read for documented facts (a multi-node launch, the training commands): READMEs, docs about
#: distributed runs and the guides that show how to train (``multigpu_finetuning.md``, ``docs/quickstart.md``)
_DOC_TOPIC = lazy_compile(r"multi[-_]?node|multinode|distributed|cluster|slurm|launch|nccl|deepspeed|fsdp|scale"
                        r"|train|fine[-_]?tun|quick[-_]?start|getting[-_]started|multi[-_]?gpu|single[-_]?gpu|usage", re.I)
#: a README named for one of the project's models (MPP-LLaVA's ``MPPQwen14B_README.md``, ``MiniGPT4Qwen_README.md``)
_README_SUFFIX = lazy_compile(r"[_\-.]readme\.\w+$")
_DATA_JSON = {"tokenizer.json", "vocab.json", "package-lock.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"}


def classify(path: str) -> str | None:
    """The parser a file goes to, or None when no check reads it."""
    if path.endswith(".py") and not path.endswith("/.py") and path != ".py":
        return "python"  # most files of a tree: the answer below, without building a path (a walk asks it of every file)
    p = PurePosixPath(path)
    name = p.name
    low = name.lower()
    suffix = p.suffix.lower()
    if suffix in {".py", ".pyi"}:
        return "python"
    if name == ".gitmodules":
        return "gitmodules"  # the submodules the repository declares (each a path and the repository it is checked out from)
    if name == ".git" and len(p.parts) > 1:
        return "gitlink"  # a submodule's ``.git`` file (``gitdir: ../.git/modules/x``): another repository checked out here
    if suffix == ".ipynb":
        return "notebook"
    if suffix in {".yaml", ".yml"}:
        return "conda" if low.startswith("environment") else "yaml"
    if suffix == ".json":
        return None if low in _DATA_JSON or low.endswith(".index.json") else "json"
    if suffix == ".toml":
        return "pyproject" if low == "pyproject.toml" else "toml"
    if suffix in _SHELL_EXT:
        return "shell"
    if low in {"makefile", "gnumakefile"} or suffix == ".mk":
        return "make"
    if low == "dockerfile" or low.startswith("dockerfile.") or suffix == ".dockerfile" or low == "containerfile":
        return "docker"
    if suffix in _DOC_EXT and (low.startswith("readme") or _README_SUFFIX.search(low) or _DOC_TOPIC.search(path)):
        return "docs"
    if low.startswith("hostfile") and suffix in {"", ".txt", ".example"} | ({suffix} if suffix[1:].isdigit() or "_" in suffix else set()):
        return "hostfile"  # DeepSpeed's/colossalai's list of nodes (``node-0 slots=8``), which ``--hostfile`` names
    if name == "METADATA" and len(p.parts) > 1 and p.parts[-2].endswith(".dist-info"):
        return "requirements"  # a wheel's metadata: its ``Requires-Dist`` lines are the only dependency declaration it ships
    # (``requirement.txt`` too: BitDistiller's pins ``transformers==4.31.0`` there)
    if (low.startswith("requirement") and suffix in {".txt", ".in"}) or (
        suffix in {".txt", ".in"} and any(part.lower() == "requirements" for part in p.parts[:-1])
    ):
        return "requirements"
    return None


def _suppressions(text: str) -> dict[int, frozenset[str]]:
    out: dict[int, frozenset[str]] = {}
    if "accel-ignore" not in text:
        return out
    for i, line in enumerate(text.splitlines(), 1):
        m = _SUPPRESS.search(line)
        if m:
            ids = frozenset(x.strip().upper() for x in m.group(1).split(",")) if m.group(1) else frozenset({"*"})
            out[i] = ids
    return out


def decode_text(data: bytes) -> str:
    """A file's text: UTF-8 (a leading byte-order mark dropped), or UTF-16 when it starts with that encoding's mark (a
    requirements file saved by a Windows tool); undecodable bytes replaced, never an error."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", errors="replace").removeprefix("\ufeff")
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def extract_file(path: str, data: bytes, kind: str | None = None, strings: dict[str, str] | None = None) -> FileFacts:
    """Facts of one file. Never raises on bad content: parse errors land in ``error``.

    ``strings``: one table for the files of a scan, in which equal texts are shared (see
    :func:`checks.facts.python.extract_python`).
    """
    kind = kind or classify(path) or "other"
    text = decode_text(data)
    lines = text.count("\n") + 1
    try:
        return _extract(path, text, kind, lines, strings)
    except Exception as exc:  # RecursionError, MemoryError, a parser bug: this file's error, never the audit's
        out = FileFacts(path=path, kind=kind, lines=lines)
        out.error = f"could not parse ({type(exc).__name__}): the file's facts are left out"
        return out


def _extract(path: str, text: str, kind: str, lines: int, strings: dict[str, str] | None) -> FileFacts:
    out = FileFacts(path=path, kind=kind, lines=lines)
    out.suppressed = _suppressions(text)
    if kind == "gitlink":
        if not text.startswith("gitdir:"):
            out.kind = "other"  # a file named .git that links nowhere says nothing
        return out
    if kind == "python" and text.startswith(DATABRICKS_HEADER):
        extract_databricks(path, text, out, strings)
    elif kind == "python":
        extract_python(path, text, out, strings)
        if PurePosixPath(path).name == "setup.py":
            from_setup_calls(out, text)
    elif kind in {"yaml", "conda"}:
        extract_yaml(path, text, out, strings)
        if kind == "conda":
            from_conda_env(out, text)
        elif path.rsplit("/", 1)[-1] == "cog.yaml":
            from_cog(out, text)
    elif kind == "json":
        extract_json(path, text, out, strings)
    elif kind == "notebook":
        extract_notebook(path, text, out)
    elif kind in {"toml", "pyproject"}:
        data_ = extract_toml(path, text, out)
        if kind == "pyproject" and data_ is not None:
            from_pyproject(path, data_, text, out)
    elif kind in {"shell", "make"}:
        body = text if kind == "shell" else "\n".join(line[1:] if line.startswith("\t") else line for line in text.splitlines())
        extract_shell_text(path, body, out)
        pip_installs(path, list(enumerate(body.splitlines(), 1)), out)
    elif kind == "docker":
        runs = extract_dockerfile(path, text, out)
        pip_installs(path, runs, out, text.splitlines())
    elif kind == "requirements":
        if path.endswith(".dist-info/METADATA"):
            extract_wheel_metadata(path, text, out)
        else:
            extract_requirements(path, text, out)
    elif kind == "docs":
        extract_doc_hints(path, text, out)
        extract_doc_commands(path, text, out)
        extract_doc_run_recipes(path, text, out)
        extract_doc_run_models(path, text, out)
        extract_doc_scripts(path, text, out)
        extract_doc_replacements(path, text, out)
        extract_doc_legacy(path, text, out)
        extract_doc_inline_commands(path, text, out)
        extract_doc_config_links(path, text, out)
        extract_doc_pins(path, text, out)
    elif kind == "gitmodules":
        # ``[submodule "Megatron-LM-NEO"]`` / ``path = Megatron-LM-NEO`` / ``url = https://...``: one entry per path, the
        # url as its text (a GitHub tarball and a plain clone leave the folder empty)
        url = ""
        pending: tuple[int, str] | None = None
        for i, ln in enumerate(text.splitlines(), 1):
            key, eq, val = ln.strip().partition("=")
            if ln.strip().startswith("["):
                if pending is not None:
                    out.configs.append(ConfigEntry(path, pending[0], ("submodule_path",), pending[1], "gitmodules", url[:300]))
                pending, url = None, ""
            elif eq and key.strip() == "path" and val.strip():
                pending = (i, val.strip().strip("/"))
            elif eq and key.strip() == "url":
                # (credentials in the url, ``https://user:token@host/...``, never reach a report)
                url = re.sub(r"(?<=//)[^/@\s]+@", "", val.strip())
        if pending is not None:
            out.configs.append(ConfigEntry(path, pending[0], ("submodule_path",), pending[1], "gitmodules", url[:300]))
    elif kind == "hostfile":
        hosts = [(i, ln.split("#", 1)[0].strip()) for i, ln in enumerate(text.splitlines(), 1)]
        hosts = [(i, h) for i, h in hosts if h]
        # a line of dots (Baichuan-7B's ``[master address] slots=8`` / ``[worker address] slots=8`` / ``...``) says the list
        # goes on: no host, and the count is a least
        more = [(i, h) for i, h in hosts if not h.strip(".…")]
        hosts = [(i, h) for i, h in hosts if h.strip(".…")]
        if hosts:
            out.configs.append(ConfigEntry(path, hosts[0][0], ("hostfile_hosts",), len(hosts), "hostfile", hosts[0][1][:300]))
        if hosts and more:
            out.configs.append(ConfigEntry(path, more[0][0], ("hostfile_more",), True, "hostfile", more[0][1][:300]))
    return out
