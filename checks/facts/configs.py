"""YAML / JSON / TOML configs -> key-path facts with line numbers.

YAML goes through libyaml (PyYAML's C loader) at the node level, so every key keeps
its line. JSON is validated by the C ``json`` module, then a light tokenizer walks it
once more for line numbers. Strings that hold launcher command lines (CI steps,
Kubernetes ``command:``, slurm templates) are handed to the shell parser.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from typing import Any

import yaml

from ..lazyre import lazy_compile
from .shell import extract_shell_text
from .types import ConfigEntry, Container, EnvVar, FileFacts, share_tuple, share_value, shared_line, yaml_scalar_table

try:  # libyaml is the fast path; the pure-Python loader still works without it
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

_LAUNCH_HINT = lazy_compile(
    r"\b(torchrun|deepspeed|accelerate\s+launch|torch\.distributed\.(run|launch)|srun|mpirun|llamafactory-cli|python3?\s+\S+\.py|"
    r"vllm\s+serve|python3?\s+-m\s+(vllm|sglang)\.|text-generation-launcher|lmdeploy\s+serve|trtllm-serve)\b"
)
#: a patch kept as a string (dclm's dataset records store the ``git diff`` of the code that made them, ``"dcnlp_diff":
#: "diff --git a/... @@ -24,7 +25,7 @@ ... python ray_processing/tokenize_shuffle.py ..."``): its lines are code of another
#: revision, added or removed, not a command this config runs
_PATCH = lazy_compile(r"^(?:diff --git |--- a/|\+\+\+ b/|@@ -\d+(?:,\d+)? \+\d+)", re.M)
_ENV_KEY = lazy_compile(r"^(NCCL_|TORCH_|CUDA_|PYTORCH_|OMP_|NVIDIA_|UCX_|FI_|GLOO_)[A-Z0-9_]*$")


def _snippet(lines: list[str], line: int) -> str:
    return lines[line - 1].strip()[:300] if 0 < line <= len(lines) else ""


class _Lines(list[str]):
    """A config file's lines, with the scan's table in which equal snippets share one string."""

    def __init__(self, text: str, strings: dict[str, str] | None) -> None:
        super().__init__(text.splitlines())
        self.strings = strings if strings is not None else {}

    def snippet(self, line: int) -> str:
        t = _snippet(self, line)
        return self.strings.setdefault(t, t)


def extract_yaml(path: str, text: str, out: FileFacts, strings: dict[str, str] | None = None) -> None:
    lines = _Lines(text, strings)
    loader = _Loader(text)
    loader.scalars = yaml_scalar_table(lines.strings)
    loader.resolve = _cached_resolve(loader.resolve, loader.scalars)  # the C composer asks the instance's
    budget = [_MAX_YAML_NODES + len(text) // 2]  # no document without aliases has more nodes than that
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                _walk_yaml(loader, node, (), path, lines, out, budget)
    except _YamlTooLarge:
        out.error = "YAML aliases expand to far more nodes than the text holds (alias bomb?): only the first ones were read"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        out.error = f"YAML parse error{where}: {getattr(exc, 'problem', None) or exc}"
    except (RecursionError, ValueError) as exc:
        out.error = f"YAML could not be analysed: {exc}"
    finally:
        # the remembering resolver holds the loader's own bound method: a cycle, which the scan's paused collector would
        # leave holding every file's loader and nodes (+23 MB peak on Megatron-LM) unless it is undone here
        del loader.resolve
        loader.dispose()


def _yaml_scalar(loader: Any, node: yaml.Node) -> Any:
    # a scalar's value is a function of its resolved tag and its text: ``true``, ``1``, ``bf16`` recur across a repository's
    # configs, and PyYAML constructs each in Python; values of immutable exact types are kept in the scan's table
    memo = loader.scalars
    key = (node.tag, node.value)
    v = memo.get(key, _UNSEEN)
    if v is not _UNSEEN:
        return v
    try:
        v = loader.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, TypeError):
        v = node.value
    if v is None or v.__class__ in _KEPT_SCALARS:  # not a float: a ``.nan`` is a new object each time, as before
        memo[key] = v
    return v


_UNSEEN = object()


def _cached_resolve(resolve: Any, memo: dict[Any, Any]) -> Any:
    """The loader's tag resolver, remembered: a safe loader's tag for a node is a function of the node's kind, its text
    and whether it was plain or quoted (no path resolvers), and PyYAML resolves each of a file's keys and values in Python
    by regex. The keys, ``(node class, text, implicit)``, never equal a scalar's ``(tag, text)`` in the same table."""

    def cached(kind: type, value: str | None, implicit: Any) -> str:
        key = (kind, value, implicit)
        tag = memo.get(key)
        if tag is None:
            tag = memo[key] = resolve(kind, value, implicit)
        return tag  # type: ignore[no-any-return]

    return cached
_KEPT_SCALARS = frozenset({str, int, bool})


class _YamlTooLarge(Exception):
    """Aliases make the document expand past the node budget ("billion laughs")."""


#: nodes walked per YAML file beyond half its length; aliases are walked again where they are used (merge keys),
#: so the walk is bounded by the text's size, not by the alias expansion
_MAX_YAML_NODES = 10_000


def _walk_yaml(
    loader: Any, node: yaml.Node, keys: tuple[str | int, ...], path: str, lines: _Lines, out: FileFacts,
    budget: list[int] | None = None,
) -> None:
    if budget is not None:
        budget[0] -= 1 + (len(node.value) if isinstance(node.value, list) else 0)
        if budget[0] < 0:
            raise _YamlTooLarge
    if isinstance(node, yaml.MappingNode):
        for k_node, v_node in node.value:
            if not isinstance(k_node, yaml.ScalarNode):
                continue
            key = lines.strings.setdefault(k_node.value, k_node.value)
            line = shared_line(k_node.start_mark.line + 1)
            sub = share_tuple((*keys, key), lines.strings)  # key paths and values recur across a repository's configs
            if isinstance(v_node, yaml.ScalarNode):
                val = share_value(_yaml_scalar(loader, v_node), lines.strings)
                out.configs.append(ConfigEntry(path, line, sub, val, "yaml", lines.snippet(line)))
                _string_value(path, line, key, val, out)
            elif isinstance(v_node, yaml.SequenceNode) and all(isinstance(i, yaml.ScalarNode) for i in v_node.value):
                vals = share_tuple(tuple(_yaml_scalar(loader, i) for i in v_node.value), lines.strings)
                out.configs.append(ConfigEntry(path, line, sub, vals, "yaml", lines.snippet(line)))
                if key in _ARGV_KEYS and all(isinstance(v, str) and v.strip() and not any(c.isspace() for c in v) for v in vals):
                    continue  # an argv list: read as one command line with its mapping's args (below)
                for i in v_node.value:
                    v = _yaml_scalar(loader, i)
                    if isinstance(v, str):
                        _string_value(path, i.start_mark.line + 1, key, v, out)
            else:
                kind = "map" if isinstance(v_node, yaml.MappingNode) else "seq"
                out.configs.append(ConfigEntry(path, line, sub, Container(kind), "yaml", lines.snippet(line)))
                _walk_yaml(loader, v_node, sub, path, lines, out, budget)
        _k8s_env(loader, node, path, lines, out)
        _argv_command(loader, node, path, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            if isinstance(item, (yaml.MappingNode, yaml.SequenceNode)):
                _walk_yaml(loader, item, (*keys, i), path, lines, out, budget)
            elif isinstance(item, yaml.ScalarNode):
                v = share_value(_yaml_scalar(loader, item), lines.strings)
                ln = shared_line(item.start_mark.line + 1)
                out.configs.append(ConfigEntry(path, ln, share_tuple((*keys, i), lines.strings), v, "yaml", lines.snippet(ln)))
                if isinstance(v, str):
                    _string_value(path, item.start_mark.line + 1, str(keys[-1]) if keys else "", v, out)


#: keys whose value may be an exec-form argv list (Kubernetes/Kubeflow ``command``/``args``, compose ``entrypoint``)
_ARGV_KEYS = {"command", "args", "entrypoint", "cmd"}


def _argv_command(loader: Any, node: yaml.MappingNode, path: str, out: FileFacts) -> None:
    """``command: ["torchrun"]`` + ``args: ["--nproc_per_node=8", "train.py", "--bf16", "True"]`` is one launch."""
    words: list[str] = []
    line = 0
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value in _ARGV_KEYS and isinstance(v, yaml.SequenceNode) and v.value:
            items = [_yaml_scalar(loader, i) if isinstance(i, yaml.ScalarNode) else None for i in v.value]
            if not all(isinstance(i, str) and i.strip() and not any(c.isspace() for c in i) for i in items):
                return  # a shell string inside the list (``["bash", "-c", "torchrun ..."]``) was read item by item
            words += [str(i) for i in items]
            line = line or k.start_mark.line + 1
    if words and _LAUNCH_HINT.search(" ".join(words)):
        extract_shell_text(path, shlex.join(words), out, first_line=line)


def _k8s_env(loader: Any, node: yaml.MappingNode, path: str, lines: _Lines, out: FileFacts) -> None:
    """``- name: NCCL_IB_HCA`` / ``value: mlx5`` items (Kubernetes, compose) are environment variables."""
    pairs = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
    name, value = pairs.get("name"), pairs.get("value")
    if isinstance(name, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode) and _ENV_KEY.match(str(name.value)):
        line = name.start_mark.line + 1
        out.envs.append(EnvVar(path, line, str(name.value), str(value.value), "yaml", lines.snippet(line)))


def _string_value(path: str, line: int, key: str, val: Any, out: FileFacts) -> None:
    if not isinstance(val, str):
        return
    if _ENV_KEY.match(key):
        out.envs.append(EnvVar(path, line, key, val, "yaml", f"{key}: {val}"[:300]))
    if _LAUNCH_HINT.search(val) and not _PATCH.search(val):
        # a multi-line block scalar starts on the line after its key
        first = line + 1 if "\n" in val.strip() else line
        extract_shell_text(path, val, out, first_line=first)


# --- JSON -------------------------------------------------------------------

_JSON_TOKEN = lazy_compile(r'"(?:[^"\\\n]|\\.)*"|[{}\[\]:,]|\n|[^\s{}\[\]:,"]+')


#: a bare word where a JSON value belongs (``"train_batch_size": GBSIZE,``): a template's placeholder that a launch script
#: fills with ``sed`` before training (Megatron-DeepSpeed ``ds_config_gpt_slw_TEMPLATE.json``)
_TEMPLATE_VALUE = lazy_compile(r'(:\s*)(?!(?:true|false|null)\b)([A-Za-z_][A-Za-z0-9_]*)(?=\s*[,}\]\n])')


def extract_json(path: str, text: str, out: FileFacts, strings: dict[str, str] | None = None) -> None:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        # a config template: its placeholders read as unresolved ``${NAME}`` strings, its literal settings as written
        filled = _TEMPLATE_VALUE.sub(lambda m: f'{m.group(1)}"${{{m.group(2)}}}"', text) if isinstance(exc, json.JSONDecodeError) else text
        try:
            data = json.loads(filled) if filled != text else None
        except (json.JSONDecodeError, RecursionError):
            data = None
        if data is None:
            line = getattr(exc, "lineno", None)
            out.error = f"JSON parse error{f' at line {line}' if line else ''}: {getattr(exc, 'msg', exc)}"
            return
        text = filled
    if not isinstance(data, (dict, list)):
        return
    lines = _Lines(text, strings)
    _walk_json(data, _json_key_lines(text), path, lines, out)


def _json_key_lines(text: str) -> dict[tuple[str | int, ...], int]:
    """Line of every key path, from one pass of a small tokenizer over valid JSON."""
    result: dict[tuple[str | int, ...], int] = {}
    stack: list[list[Any]] = []  # frames: [kind, keypath, current key or index]
    line = 1
    expect_key = False
    pending_key: str | None = None
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        if tok == "\n":
            line += 1
            continue
        if tok in "{[":
            prefix = _current_path(stack, pending_key)
            stack.append(["map" if tok == "{" else "seq", prefix, 0])
            expect_key = tok == "{"
            pending_key = None
            if tok == "[":
                result.setdefault((*prefix, 0), line)
            continue
        if tok in "}]":
            if stack:
                stack.pop()
            pending_key = None
            continue
        if tok == ",":
            if stack and stack[-1][0] == "seq":
                stack[-1][2] += 1
                result.setdefault(stack[-1][1] + (stack[-1][2],), line)
            else:
                expect_key = True
            pending_key = None
            continue
        if tok == ":":
            expect_key = False
            continue
        if expect_key and stack and stack[-1][0] == "map" and tok.startswith('"'):
            try:
                key = json.loads(tok)
            except json.JSONDecodeError:
                key = tok.strip('"')
            pending_key = key
            result.setdefault(stack[-1][1] + (key,), line)
            expect_key = False
    return result


def _current_path(stack: list[list[Any]], pending_key: str | None) -> tuple[str | int, ...]:
    if not stack:
        return ()
    top = stack[-1]
    if top[0] == "map":
        return top[1] + ((pending_key,) if pending_key is not None else ())
    return top[1] + (top[2],)


def _walk_json(data: Any, key_lines: dict[tuple[str | int, ...], int], path: str, lines: _Lines, out: FileFacts, keys: tuple[str | int, ...] = ()) -> None:
    items = data.items() if isinstance(data, dict) else enumerate(data)
    for k, v in items:
        sub = (*keys, k)
        line = key_lines.get(sub, key_lines.get(keys, 1))
        if isinstance(v, dict) or (isinstance(v, list) and any(isinstance(i, (dict, list)) for i in v)):
            if isinstance(k, str):
                out.configs.append(ConfigEntry(path, line, share_tuple(sub, lines.strings), Container("map" if isinstance(v, dict) else "seq"),
                                               "json", lines.snippet(line)))
            _walk_json(v, key_lines, path, lines, out, sub)
        elif isinstance(k, str):
            val = share_value(tuple(v) if isinstance(v, list) else v, lines.strings)
            out.configs.append(ConfigEntry(path, line, share_tuple(sub, lines.strings), val, "json", lines.snippet(line)))
            _string_value(path, line, k, v, out)


# --- TOML -------------------------------------------------------------------


def extract_toml(path: str, text: str, out: FileFacts) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        out.error = f"TOML parse error: {exc}"
        return None
    lines = text.splitlines()
    section_lines: dict[str, int] = {}
    key_re = re.compile(r"^\s*(\[+)?\s*([A-Za-z0-9_.\-\"']+)\s*(\]+)?\s*(=)?")
    section = ""
    for i, raw in enumerate(lines, 1):
        m = key_re.match(raw)
        if not m:
            continue
        if m.group(1):
            section = m.group(2).replace('"', "").replace("'", "")
            section_lines.setdefault(section, i)
        elif m.group(4):
            section_lines.setdefault(f"{section}.{m.group(2)}" if section else m.group(2), i)

    def walk(d: dict[str, Any], keys: tuple[str, ...]) -> None:
        for k, v in d.items():
            sub = (*keys, k)
            dotted = ".".join(sub)
            line = section_lines.get(dotted) or section_lines.get(".".join(keys)) or 1
            if isinstance(v, dict):
                out.configs.append(ConfigEntry(path, line, sub, Container("map"), "toml", _snippet(lines, line)))
                walk(v, sub)
            elif not (isinstance(v, list) and any(isinstance(i, dict) for i in v)):
                out.configs.append(ConfigEntry(path, line, sub, tuple(v) if isinstance(v, list) else v, "toml", _snippet(lines, line)))

    walk(data, ())
    return data
