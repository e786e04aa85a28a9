"""Launch scripts -> launcher commands, their flags, script arguments and exported env vars.

Understands ``torchrun``, ``python -m torch.distributed.run|launch``, ``deepspeed``,
``accelerate launch``, ``colossalai run``, ``llamafactory-cli``, axolotl, ``tune run``
and plain ``python script.py``, behind wrappers such as ``srun``, ``mpirun``, ``nohup``
or ``env``; ``$VAR`` / ``${VAR:-default}`` from assignments earlier in the file are
substituted.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..lazyre import lazy_compile
from .types import ConfigEntry, EnvVar, FileFacts, Launch

_ASSIGN = lazy_compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_VAR = lazy_compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[@*]\])?(?::?[-=]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
# ``ARGS=(`` ... ``)`` or ``ARGS+=(`` ... ``)``: a bash array of launcher flags (Megatron-LM's example scripts)
_ARRAY_START = lazy_compile(r"^(?:export\s+|declare\s+-a\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)(\+?)=\((.*)$")
# ``GPT_ARGS="`` ... ``"``: a double-quoted string of flags spread over several lines (Megatron-LM's older scripts)
_QUOTED_START = lazy_compile(r'^(?:export\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)="([^"]*)$')
_WRAPPERS = {"srun", "mpirun", "mpiexec", "nohup", "env", "exec", "time", "sudo", "numactl", "taskset", "stdbuf", "sbatch", "bash", "sh", "uv", "poetry", "pdm", "conda", "eval"}
_WRAPPER_SUBCMDS = {"run"}  # uv run / poetry run / conda run
#: wrapper options that take two words (Open MPI ``--mca btl_tcp_if_include eth0``, ``-gmca``)
_TWO_VALUE_OPTS = {"--mca", "-mca", "--gmca", "-gmca"}
#: MPI options that export a variable, as ``NAME=VALUE`` or as two words (MPICH ``-genv NAME VALUE``)
_ENV_OPTS = {"-env", "--env", "-genv", "--genv"}
_PYTHON = lazy_compile(r"^(.*/)?python(3(\.\d+)?)?$")
# launcher flags that never take a value
_BOOL_LAUNCHER_FLAGS = {"standalone", "no_python", "no-python", "module", "m", "use_env", "use-env", "multi_gpu", "multi-gpu", "use_deepspeed", "use-deepspeed", "use_fsdp", "use-fsdp", "no_local_rank", "no-local-rank", "autotuning"}


class _Word(str):
    """A shell word that remembers the physical line it came from (a flag's evidence is its own line)."""

    line: int
    quoted: bool = False  # the whole word is one double-quoted ``"$NAME"``: its value is never split into words


_JINJA = lazy_compile(r"\{\{(.*?)\}\}")


def _word(text: str, line: int) -> _Word:
    w = _Word(text)
    w.line = line
    return w


_SPACE = " \t\r\n\f\v"
_PUNCT = ";&|()"
_PLAIN = lazy_compile(r"""[^\s;&|()\\'"$`]+""")
_PLAIN_NOPUNCT = lazy_compile(r"""[^\s\\'"$`]+""")
_DQ_PLAIN = lazy_compile(r'[^"\\$`]+')
_VAR_REF = lazy_compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[@*]\])?\}|([A-Za-z_][A-Za-z0-9_]*))$")


def _close_paren(s: str, i: int) -> int:
    """Index just after the ``)`` that closes the ``(`` at ``s[i]`` (quotes inside skipped); ``len(s)`` if none."""
    depth, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == "\\":
            i += 1
        elif c in "'\"":
            j = s.find(c, i + 1)
            i = n - 1 if j < 0 else j
        i += 1
    return n


def _lex(s: str, punct: bool = True) -> list[tuple[str, int]]:
    """Shell words of ``s`` with their start offsets, in one pass (linear in the length of ``s``).

    Quotes and backslashes are removed as the shell does; ``$(...)``, ``$((...))`` and backquotes stay
    inside their word (a command substitution never splits a command); ``#`` starts a comment only at
    the start of a word; with ``punct`` the control operators ``;``, ``&``, ``|``, ``(``, ``)`` (and
    ``&&``, ``||``, ``;;``) are words of their own. An unterminated quote runs to the end of ``s``.
    Replaces :mod:`shlex`, whose tokenizer grows each token one character at a time (quadratic in the
    length of a word: an 800 KB line took 11 s).
    """
    out: list[tuple[str, int]] = []
    plain = _PLAIN if punct else _PLAIN_NOPUNCT
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c in _SPACE:
            i += 1
            continue
        if c == "#":
            break
        if punct and c in _PUNCT:
            two = s[i : i + 2]
            if two in ("&&", "||", ";;"):
                out.append((two, i))
                i += 2
            else:
                out.append((c, i))
                i += 1
            continue
        start = i
        buf: list[str] = []
        while i < n:
            c = s[i]
            if c in _SPACE:
                break
            if punct and c in _PUNCT:
                if c == "&" and i > start and s[i - 1] in "<>":  # 2>&1
                    buf.append(c)
                    i += 1
                    continue
                break
            if c == "\\":
                if i + 1 < n:
                    buf.append(s[i + 1])
                i += 2
                continue
            if c == "'":
                j = s.find("'", i + 1)
                j = n if j < 0 else j
                buf.append(s[i + 1 : j])
                i = j + 1
                continue
            if c == '"':
                i += 1
                while i < n and s[i] != '"':
                    d = s[i]
                    if d == "\\" and i + 1 < n:
                        buf.append(s[i + 1] if s[i + 1] in '$`"\\\n' else s[i : i + 2])
                        i += 2
                    elif d == "$" and s.startswith("$(", i):
                        j = _close_paren(s, i + 1)
                        buf.append(s[i:j])
                        i = j
                    elif d == "`":
                        j = s.find("`", i + 1)
                        j = n - 1 if j < 0 else j
                        buf.append(s[i : j + 1])
                        i = j + 1
                    else:
                        m = _DQ_PLAIN.match(s, i)
                        if m:
                            buf.append(m.group())
                            i = m.end()
                        else:
                            buf.append(d)
                            i += 1
                i += 1
                continue
            if c == "$" and s.startswith("$(", i):
                j = _close_paren(s, i + 1)
                buf.append(s[i:j])
                i = j
                continue
            if c == "`":
                j = s.find("`", i + 1)
                j = n - 1 if j < 0 else j
                buf.append(s[i : j + 1])
                i = j + 1
                continue
            m = plain.match(s, i)
            if m:
                buf.append(m.group())
                i = m.end()
            else:
                buf.append(c)
                i += 1
        out.append(("".join(buf), start))
    return out


def _split_words(s: str, comments: bool = True) -> list[str]:
    """``shlex.split`` without its quadratic tokenizer (no control operators)."""
    return [w for w, _ in _lex(s, punct=False)] if comments else s.split()


#: the node count a batch scheduler gives the job (``n_node=${SLURM_JOB_NUM_NODES:-1}`` in vila-u's SLURM launchers): the job's
#: value, not the default a run outside the scheduler falls back to
_SCHEDULER_NODES = frozenset({"SLURM_JOB_NUM_NODES", "SLURM_NNODES", "PBS_NUM_NODES", "LSB_MAX_NUM_HOSTS"})


def _sub_vars(token: str, variables: dict[str, str]) -> str:
    def rep(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        if name in variables:
            return variables[name]
        if m.group(2) is not None and name not in _SCHEDULER_NODES:
            return m.group(2)
        return f"${{{name}}}" if m.group(2) is not None else m.group(0)  # (the job's count, as the scheduler names it)

    return _VAR.sub(rep, token)


_ARITH_NAME = lazy_compile(r"\$?\{?([A-Za-z_]\w*)\}?")
_ARITH_OK = lazy_compile(r"^[\d\s+\-*/%()]+$")


def _arith_value(node: ast.AST) -> int:
    """An integer expression of ``+ - * / %`` and parentheses, with bash's integer division (toward zero)."""
    if isinstance(node, ast.Expression):
        return _arith_value(node.body)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _arith_value(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _arith_value(node.left), _arith_value(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and b:
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return q if not isinstance(node.op, ast.Mod) else a - q * b
    raise ValueError("not shell integer arithmetic")


def _eval_arith(v: str, variables: dict[str, str]) -> str:
    """``$((...))`` spans whose names all hold integers, computed as bash does (InternVL's launches:
    ``GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))`` with ``BATCH_SIZE=128``, ``PER_DEVICE_BATCH_SIZE=4`` and
    ``GPUS=8`` is ``4``; bash reads a bare name inside the parentheses as that variable). A span with a name the script
    leaves unset, or anything but integer arithmetic, stays as written."""
    out, i = [], 0
    while (j := v.find("$((", i)) >= 0:
        depth, k = 0, j + 1
        while k < len(v):
            depth += {"(": 1, ")": -1}.get(v[k], 0)
            if depth == 0:
                break
            k += 1
        if depth or v[k - 1] != ")":
            break
        inner = v[j + 3 : k - 1]
        if "$((" in inner:
            inner = _eval_arith(inner, variables)
        expr = _ARITH_NAME.sub(lambda m: variables.get(m.group(1), m.group(0)).strip(), inner)
        value: str | None = None
        if _ARITH_OK.match(expr):
            try:
                value = str(_arith_value(ast.parse(expr.replace("/", "//"), mode="eval")))
            except (ValueError, SyntaxError, RecursionError):
                value = None
        out.append(v[i:j] + (value if value is not None else v[j : k + 1]))
        i = k + 1
    out.append(v[i:])
    return "".join(out)


#: a placeholder phrase in brackets, a value to fill in: ``|model path|``, ``<path to your model>``, ``[your data dir]``
_BRACKETED_PLACEHOLDER = lazy_compile(r"^(?:\|[^|]*\s[^|]*\||<[^<>]*\s[^<>]*>|\[[^\[\]]*\s[^\[\]]*\])$")


def _expand(cmd: list[str], variables: dict[str, str], var_words: dict[str, list[_Word]] | None = None) -> list[str]:
    """Substitute variables; an unquoted ``$ARGS`` holding several flags splits into words, as bash does.

    A variable that holds an array or a multi-line string of flags (``var_words``) expands to its
    words with the lines they were written on; a variable that expands to nothing is no word
    (``srun ${SRUN_ARGS} python ...`` with ``SRUN_ARGS`` empty).
    """
    out: list[str] = []
    for t in cmd:
        line = getattr(t, "line", 0)
        if "$" not in t:
            out.append(t)
            continue
        if getattr(t, "quoted", False) and (v := _sub_vars(t, variables)).strip() and v != t and not v.lstrip().startswith("-"):
            # a double-quoted value is one word (aguvis ``MODEL_PATH="Please provide the path to the model"`` passed as
            # ``--model_path "$MODEL_PATH"``: a sentence, not the model ``Please`` followed by five stray words); a quoted
            # flag list is still read as its flags, as its author meant
            out.append(_word(v, line))
            continue
        ref = _VAR_REF.match(t)
        if ref and _BRACKETED_PLACEHOLDER.match(held := variables.get(ref.group(1) or ref.group(2), "").strip()):
            # a placeholder phrase in brackets (OpenCoder ``MODEL_PATH=" |model path| "`` passed as ``$MODEL_PATH``): bash
            # would split it, but it stands for one value the user fills in, never for the words ``|model`` and ``path|``
            out.append(_word(held, line))
            continue
        if ref and var_words is not None:
            name = ref.group(1) or ref.group(2)
            if name in var_words and variables.get(name) == " ".join(var_words[name]):
                out.extend(var_words[name])
                continue
        v = _sub_vars(t, variables)
        if "$((" in v:
            v = _eval_arith(v, variables)
        if "//" in v and "//" not in t and "://" not in v:
            # a folder variable that ends in a slash joined with one more (Macaw-LLM ``path=./``,
            # ``train_path=$path/run_clm_llms.py``: ``.//run_clm_llms.py``): the same path, spelt once
            v = re.sub(r"/{2,}", "/", v)
        if v == t:
            out.append(t)
        elif not v.strip() and not _ASSIGN.match(t):
            continue
        elif not _ASSIGN.match(t) and not _OVERRIDE.match(t) and "$(" not in t and "`" not in t and any(ch.isspace() for ch in v.strip()):
            out.extend(_word(w, line) for w in _split_words(v))
        else:
            out.append(_word(v, line))
    return out


def _comment_above(src_lines: list[str], i: int) -> str | None:
    """The comment lines right above line index ``i`` (a ``#`` block with no blank line between), joined; None if none."""
    out: list[str] = []
    j = i - 1
    while j >= 0 and len(out) < 4 and (t := src_lines[j].strip()).startswith("#") and not t.startswith("#!"):
        out.append(t.lstrip("#").strip())
        j -= 1
    return " ".join(reversed(out)).strip()[:300] or None


def _array_words(body: str) -> list[str]:
    return _split_words(body)


def _logical_lines(text: str, first_line: int) -> list[tuple[int, str]]:
    return [(start, logical) for start, logical, _ in _logical_lines_at(text, first_line)]


def _logical_lines_at(text: str, first_line: int) -> list[tuple[int, str, list[int]]]:
    """Backslash-continued lines joined: (first line, text, offset in the text where each physical line starts)."""
    out: list[tuple[int, str, list[int]]] = []
    buf: list[str] = []
    starts: list[int] = []
    pos = 0
    start = first_line
    for i, raw in enumerate(text.splitlines()):
        line = raw.rstrip()
        if not buf:
            start = first_line + i
            starts, pos = [], 0
        starts.append(pos)
        piece = line[:-1] if line.endswith("\\") else line
        buf.append(piece)
        pos += len(piece) + 1
        # a comment line ends at its newline, backslash or not (BingBertSquad ``run_hf.sh``: ``#run_cmd="deepspeed ... \``
        # kept above the live ``run_cmd="python3.6 -m torch.distributed.launch ...``)
        if line.endswith("\\") and not (len(buf) == 1 and line.lstrip().startswith("#")):
            continue
        out.append((start, " ".join(buf), starts))
        buf = []
    if buf:
        out.append((start, " ".join(buf), starts))
    return out


def _split_commands(tokens: list[str], keep_fi: bool = False) -> list[list[str]]:
    """The simple commands of a logical line; ``keep_fi``: each ``fi`` and ``else`` is kept as a command of its own, so
    that the caller can follow the ``if`` blocks it opened."""
    cmds: list[list[str]] = [[]]
    for t in tokens:
        if t in {"&&", "||", ";", "|", "&", ";;", "(", ")", "{", "}", "then", "do", "else", "fi", "done"}:
            if keep_fi and t in ("fi", "else"):
                cmds.append([str(t)])
            cmds.append([])
        else:
            cmds[-1].append(t)
    return [c for c in cmds if c]


_VAR_ONLY = lazy_compile(r"^\$\{?([A-Za-z_]\w*|\d+|[@*])\}?$")


def _empty_test(cmd: list[str]) -> str | None:
    """The variable a test checks for emptiness (``if [ "$ZERO_STAGE" == "" ]``, ``[ -z "${X}" ]``, ``[[ $X = "" ]]``),
    else None."""
    words = [str(t) for t in cmd]
    if words[:1] == ["if"]:
        words = words[1:]
    if len(words) < 3 or words[0] not in {"[", "[["} or words[-1] not in {"]", "]]"}:
        return None
    inner = words[1:-1]
    if len(inner) == 2 and inner[0] == "-z":
        m = _VAR_ONLY.match(inner[1])
        return m.group(1) if m else None
    if len(inner) == 3 and inner[1] in {"==", "="}:
        for a, b in ((inner[0], inner[2]), (inner[2], inner[0])):
            m = _VAR_ONLY.match(a)
            if m and b == "":
                return m.group(1)
    return None


def _bound_test(cmd: list[str]) -> tuple[str, str, float] | None:
    """(variable, operator, bound) of a numeric test of one variable against a number (``if [ $WORKERS -gt 112 ]``), else
    None."""
    words = [str(t) for t in cmd]
    if words[:1] == ["if"]:
        words = words[1:]
    words = [w for w in words if w != ";" and w != "then"]
    if len(words) != 5 or words[0] not in {"[", "[["} or words[-1] not in {"]", "]]"} or words[2] not in _BOUND_OPS:
        return None
    m = _VAR_ONLY.match(words[1])
    try:
        bound = float(words[3])
    except ValueError:
        return None
    return (m.group(1), words[2], bound) if m else None


#: a number's tests, by what makes them true
_BOUND_OPS: dict[str, Any] = {"-gt": lambda a, b: a > b, "-ge": lambda a, b: a >= b, "-lt": lambda a, b: a < b,
                              "-le": lambda a, b: a <= b, "-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b}


#: ``${NAME:-default}`` / ``${NAME-default}`` / ``${NAME:=default}``: the environment's value, else the script's default
_SELF_DEFAULT = lazy_compile(r"^\$\{\w+:?[-=]")


def _string_test(cmd: list[str], variables: Mapping[str, str], overridable: set[str] | frozenset[str] = frozenset()) -> bool | None:
    """Whether an ``if``/``elif`` test of one variable against a string holds, where the script has set that variable to a
    plain value of its own (LLM-Blender's ``dataset="UnifiedFeedback"`` then ``elif [[ $dataset =~ "UnifiedFeedback" ]];
    then ... gradient_accumulation_steps=16``): ``=``, ``==`` (a glob in ``[[ ]]``), ``!=`` and ``=~``. None when the test is
    of another shape, compound, or the value is not the script's own (a positional argument, a substitution, a default of
    an environment value: ``overridable``)."""
    words = [str(t) for t in cmd]
    if words[:1] in (["if"], ["elif"]):
        words = words[1:]
    if len(words) != 5 or (words[0], words[-1]) not in (("[", "]"), ("[[", "]]")):
        return None
    a, op, b = words[1:4]
    m = _VAR_ONLY.match(a)
    if m is None or op not in ("=", "==", "!=", "=~") or "$" in b or "`" in b or m.group(1) in overridable:
        return None
    value = variables.get(m.group(1))
    if value is None or not _set_already(value) or "$" in value or "`" in value:
        return None
    value = value.strip().strip("'\"")
    if op == "=~":
        try:
            return re.search(b, value) is not None
        except re.error:
            return None
    same = fnmatch.fnmatchcase(value, b) if words[0] == "[[" else value == b
    return same if op != "!=" else not same


def _set_already(value: str | None) -> bool:
    """A variable holds a value of the script's own (``ZERO_STAGE=3``): a default for an empty one does not apply. Unset, empty
    or a positional argument (``ZERO_STAGE=$1``, empty when the script runs without arguments) takes the default."""
    v = (value or "").strip().strip("'\"")
    return bool(v) and not re.fullmatch(r"\$\{?[0-9@*#]\}?", v)


def _norm(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _parse_opts(tokens: list[str], stop_at_script: bool, lines: dict[str, int] | None = None,
                spell: dict[str, str] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Parse ``--k v`` / ``--k=v`` / ``--flag`` until a positional (script) token; return (opts, rest).

    ``lines``: filled with the physical line of each flag (words read from a script carry it); ``spell``: with each flag
    as written, its value included.
    """
    opts: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if _REDIRECT_START.match(t):
            # a redirection ends the arguments (DB-GPT-Hub ``--fp16 >> ${train_log}``: ``--fp16`` is a switch, ``>>`` no value)
            return opts, []
        if t == "--":
            if not stop_at_script and i == 0:
                # ``torchrun -m training.train -- --scale 1b ...``: the separator ends the launcher's options; what follows
                # is the script's own
                i += 1
                continue
            return opts, tokens[i + 1 :]
        if t.startswith("-") and len(t) > 1 and not _is_number(t):
            if lines is not None and hasattr(t, "line"):
                lines[_norm(t.split("=", 1)[0])] = t.line  # type: ignore[attr-defined]
            if "=" in t:
                k, v = t.split("=", 1)
                opts[_norm(k)] = _coerce(v)
                if spell is not None:
                    spell[_norm(k)] = str(t)
                i += 1
                continue
            k = _norm(t)
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if k in _OPTION_LISTS and not stop_at_script and nxt is not None and _DOTTED_KEY.match(nxt):
                # LAVIS's ``--options run.accum_grad_iters 2 run.num_workers 12`` (and mmengine's ``--cfg-options a.b=1``):
                # config keys overridden in pairs, each the run's value of that key
                j = i + 1
                while j < len(tokens) and not tokens[j].startswith("-"):
                    key = tokens[j]
                    if "=" in key:
                        key, val = key.split("=", 1)
                        step = 1
                    elif _DOTTED_KEY.match(key) and j + 1 < len(tokens) and not tokens[j + 1].startswith("--"):
                        val, step = tokens[j + 1], 2
                    else:
                        break
                    if lines is not None and hasattr(tokens[j], "line"):
                        lines[_norm(key)] = tokens[j].line  # type: ignore[attr-defined]
                    opts[_norm(key)] = _coerce(val.strip("'\""))
                    if spell is not None:
                        spell[_norm(key)] = f"{key} {val}" if step == 2 else str(tokens[j])
                    j += step
                i = j
                continue
            if k in _BOOL_LAUNCHER_FLAGS and stop_at_script:
                opts[k] = True
                i += 1
                continue
            if nxt is not None and (not nxt.startswith("-") or _is_number(nxt)) and not (stop_at_script and _looks_like_script(nxt)) \
                    and not _ARRAY_EXPANSION.match(nxt) and not _REDIRECT_START.match(nxt):
                opts[k] = _coerce(nxt)
                if spell is not None:
                    spell[k] = f"{t} {nxt}"
                i += 2
            else:
                opts[k] = True
                if spell is not None:
                    spell[k] = str(t)
                i += 1
            continue
        if stop_at_script:
            return opts, tokens[i:]
        if i == 0 and t.lower().endswith((".yaml", ".yml", ".json")) and "=" not in t and "config" not in opts:
            # the script's first argument a recipe file, its flags overriding it (alignment-handbook's and Step-DPO's
            # ``train.py configs/config_full.yaml --gradient_accumulation_steps=8``, TRL's parser): the config it starts from
            opts["config"] = str(t)
            if lines is not None and hasattr(t, "line"):
                lines["config"] = t.line  # type: ignore[attr-defined]
            i += 1
            continue
        over = _OVERRIDE.match(t)
        if over:
            # a Hydra/OmegaConf override after the script (verl ``actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2``,
            # ``+trainer.val_before_train=False``): the run's value of that config key
            k = over.group(1)
            if lines is not None and hasattr(t, "line"):
                lines[_norm(k)] = t.line  # type: ignore[attr-defined]
            opts[_norm(k)] = _coerce(over.group(2).strip("'\""))
            if spell is not None:
                spell[_norm(k)] = str(t)
        i += 1
    return opts, []


#: a word that starts a redirection of the command's output (``>>``, ``> log``, ``2>&1``, ``&> out.log``, ``>log.txt``)
_REDIRECT_START = lazy_compile(r"^(\d?>|&>)")
#: flags whose value is a list of config overrides (LAVIS ``--options``, mmengine ``--cfg-options``)
_OPTION_LISTS = frozenset({"options", "cfg_options"})
#: a dotted config key (``run.accum_grad_iters``), alone or with its ``=value``
_DOTTED_KEY = lazy_compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+(=.*)?$")
#: an array expanded whole (``${MODEL_ARGS[@]}``) that no assignment in the file gave words: flags of its own, never
#: the value of the flag before it
_ARRAY_EXPANSION = lazy_compile(r"^\$(\{\w+\[[@*]\]\}|[@*]|\{[@*]\})$")
#: ``key.path=value`` / ``+key=value`` / ``++key=value`` (not ``~key``, which deletes a key)
_OVERRIDE = lazy_compile(r"^\+{0,2}([A-Za-z_][\w-]*(?:\.[\w-]+)*)=(.*)$", re.S)


def _is_number(t: str) -> bool:
    try:
        float(t)
        return True
    except ValueError:
        return False


def _looks_like_script(t: str) -> bool:
    """A launcher's own options end at the training script (``--config_file acc.yaml`` is an option value)."""
    return t.endswith(".py")


def _coerce(v: str) -> Any:
    low = v.lower()
    if low in {"true", "yes"}:
        return True
    if low in {"false", "no"}:
        return False
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v


#: the job launchers whose options may hold a placeholder of several words (``srun -p Your Partion``)
_JOB_WRAPPERS = frozenset({"srun", "mpirun", "mpiexec"})


def _wrapper_opts_end(tokens: list[str], i: int) -> int:
    """Past a wrapper's own options (``srun -N 2 --gpus 8 ...``), up to the next command word."""
    while i < len(tokens) and (tokens[i].startswith(("-", "$")) or _ASSIGN.match(tokens[i])):
        tok = tokens[i]
        i += 1
        if i + 1 < len(tokens) and (tok in _TWO_VALUE_OPTS or (tok in _ENV_OPTS and "=" not in tokens[i])):
            i += 2  # ``mpirun --mca btl ^openib``, ``-genv NCCL_DEBUG INFO``: a key and its value
            continue
        if "=" not in tok and tok.startswith("-") and i < len(tokens) and not tokens[i].startswith("-"):
            nxt_base = tokens[i].rsplit("/", 1)[-1]
            if nxt_base not in _LAUNCHERS and not _PYTHON.match(nxt_base) and nxt_base not in _WRAPPERS:
                i += 1
    return i


def _placeholder_end(tokens: list[str], i: int) -> int | None:
    """Where a job launcher's options go on after plain words that name no command or script (two at most), else None."""
    j = i
    while j < len(tokens) and j - i < 2 and not tokens[j].startswith(("-", "$")) and not _is_command_word(tokens[j]) \
            and "/" not in tokens[j] and "." not in tokens[j] and "=" not in tokens[j]:
        j += 1
    return j if i < j < len(tokens) and tokens[j].startswith("-") else None


def _parse_command(
    tokens: list[str], lines: tuple[dict[str, int], ...] | None = None
) -> tuple[str, dict[str, Any], str | None, dict[str, Any], tuple[str, ...]] | None:
    """(launcher, launcher options, script, script options, wrappers); ``lines``: (launcher, script) flag lines to fill,
    and optionally the script flags' spellings."""
    la_lines, sa_lines = lines[:2] if lines is not None else (None, None)
    sa_spell = lines[2] if lines is not None and len(lines) > 2 else None  # type: ignore[misc]
    wrappers: list[str] = []
    i = 0
    while i < len(tokens):
        base = tokens[i].rsplit("/", 1)[-1]
        if tokens[i].startswith("$") and i + 1 < len(tokens) and (wrappers or _is_command_word(tokens[i + 1])):
            i += 1  # an unresolved ``${SRUN_ARGS}`` / ``$LAUNCHER_PREFIX`` before the command: opaque wrapper words
            continue
        if base in _WRAPPERS:
            wrappers.append(base)
            i += 1
            if base in {"uv", "poetry", "pdm", "conda"} and i < len(tokens) and tokens[i] in _WRAPPER_SUBCMDS:
                i += 1
            i = _wrapper_opts_end(tokens, i)
            continue
        if wrappers and wrappers[-1] in _JOB_WRAPPERS and (j := _placeholder_end(tokens, i)) is not None:
            # ``srun -p Your Partion --nodes=$NNODES ... bash -c '...'`` (ShareGPT4V): a partition left as two placeholder
            # words, then more of srun's options, then the command
            i = _wrapper_opts_end(tokens, j)
            continue
        break
    rest = tokens[i:]
    if not rest:
        return None
    head = rest[0].rsplit("/", 1)[-1]
    launcher: str | None = None
    args = rest[1:]
    if _PYTHON.match(head):
        if args[:2] in (["-m", "torch.distributed.run"], ["-m", "torch.distributed.launch"]):
            launcher, args = "torchrun", args[2:]
        elif args[:2] == ["-m", "deepspeed.launcher.runner"]:
            launcher, args = "deepspeed", args[2:]
        elif args[:2] == ["-m", "accelerate.commands.launch"]:
            launcher, args = "accelerate", args[2:]
        elif len(args) >= 2 and args[0] == "-m" and args[1].startswith("axolotl"):
            return "axolotl", {}, args[2] if len(args) > 2 else None, _parse_opts(args[3:], False, sa_lines, sa_spell)[0], tuple(wrappers)
        else:
            # python [-u] [-m module] script.py args
            j = 0
            while j < len(args) and args[j].startswith("-") and args[j] != "-m":
                j += 1
            if j < len(args) and args[j] == "-m" and j + 1 < len(args):
                return "python", {}, args[j + 1], _parse_opts(args[j + 2 :], False, sa_lines, sa_spell)[0], tuple(wrappers)
            if j < len(args) and args[j].endswith(".py"):
                return "python", {}, args[j], _parse_opts(args[j + 1 :], False, sa_lines, sa_spell)[0], tuple(wrappers)
            return None
    elif head in {"torchrun", "deepspeed"}:
        launcher = head
    elif head == "accelerate" and args[:1] == ["launch"]:
        launcher, args = "accelerate", args[1:]
    elif head == "colossalai" and args[:1] == ["run"]:
        launcher, args = "colossalai", args[1:]
    elif head in {"llamafactory-cli", "axolotl", "tune"}:
        name = {"llamafactory-cli": "llamafactory", "axolotl": "axolotl", "tune": "torchtune"}[head]
        sub = [a for a in args if not a.startswith("-")]
        script = next((a for a in sub if a.endswith((".yaml", ".yml", ".json"))), None)
        return name, {"command": sub[0] if sub else None}, script, _parse_opts([a for a in args if a != script], False, sa_lines, sa_spell)[0], tuple(wrappers)
    elif head in {"swift", "megatron"} and args[:1] and args[0] in _SWIFT_TRAIN_COMMANDS:
        # ms-swift's console scripts (``swift sft --model Qwen/Qwen2.5-7B --use_liger_kernel true ...``, ``megatron sft
        # --tensor_model_parallel_size 2 ...``): its trainer's options as flags, its process count from NPROC_PER_NODE
        opts = {"command": args[0], **({"backend": "megatron"} if head == "megatron" else {})}
        return "swift", opts, None, _parse_opts(args[1:], False, sa_lines, sa_spell)[0], tuple(wrappers)
    elif head == "ray" and args[:2] == ["job", "submit"] and "--" in args:
        # ``ray job submit --address=... -- python3 train.py --flags`` (slime, verl): the job's entrypoint is the command
        # after ``--``, started by Ray on the cluster; Ray's submit options are the wrapper's
        inner = _parse_command(rest[args.index("--") + 2 :], lines)
        if inner is not None:
            launcher_i, opts_i, script_i, script_args_i, wrappers_i = inner
            return launcher_i, opts_i, script_i, script_args_i, (*wrappers, "ray", *wrappers_i)
        launcher = head
    elif head in {"composer", "lightning", "litgpt", "fairseq-train", "ray", "sbatch", "vllm"} | _SERVING_CLIS:
        launcher = head
        if head == "vllm" and args[:1] == ["serve"]:
            return "vllm", {}, args[1] if len(args) > 1 else None, _parse_opts(args[2:], False, sa_lines, sa_spell)[0], tuple(wrappers)
    if launcher is None:
        return None
    opts, rest_args = _parse_opts(args, stop_at_script=True, lines=la_lines)
    while len(rest_args) > 1 and _VAR_ONLY.match(rest_args[0]) and rest_args[1] in {"-m", "--module"}:
        # ``deepspeed ${num_gpus_flag} --module training.trainer`` (dolly's notebook): an unresolved variable that holds
        # launcher options (empty, or ``--num_gpus=4``) is followed by the launcher's own module switch, not the script
        more, rest_args = _parse_opts(rest_args[1:], stop_at_script=True, lines=la_lines)
        opts.update(more)
    script = None
    script_args: dict[str, Any] = {}
    if rest_args:
        if rest_args[0] in {"-m", "--module"} and len(rest_args) > 1:
            script, tail = rest_args[1], rest_args[2:]
        else:
            script, tail = rest_args[0], rest_args[1:]
        script_args = _parse_opts(tail, stop_at_script=False, lines=sa_lines, spell=sa_spell)[0]
        if opts.get("module") is True or opts.get("m") is True:
            pass
    return launcher, opts, script, script_args, tuple(wrappers)


_LAUNCHERS = {"torchrun", "deepspeed", "accelerate", "colossalai", "llamafactory-cli", "axolotl", "tune", "composer", "lightning", "litgpt", "vllm",
              "swift"}
#: the ``swift`` / ``megatron`` (ms-swift) sub-commands that train: pre-training, fine-tuning, preference and RL training
_SWIFT_TRAIN_COMMANDS = frozenset({"sft", "pt", "rlhf"})
# inference servers and engine builders: their flags are read like a launcher's (``text-generation-launcher --quantize awq``)
_SERVING_CLIS = {"text-generation-launcher", "lmdeploy", "trtllm-serve", "trtllm-build", "tritonserver", "sglang"}
_LAUNCHERS |= _SERVING_CLIS


def _is_command_word(t: str) -> bool:
    base = t.rsplit("/", 1)[-1]
    return base in _LAUNCHERS or base in _WRAPPERS or bool(_PYTHON.match(base))


def unset_var(expr: str, fallback: str) -> str:
    """A value filled in outside the shell (a Jinja ``{{ n_proc }}``, an IPython ``{deepspeed_config}``) as the reference
    of an unset shell variable named after it (``${n_proc}``): read as unknown, never as a word of its own."""
    return "${" + (re.sub(r"\W+", "_", expr.strip()).strip("_") or fallback) + "}"


def extract_shell_text(path: str, text: str, out: FileFacts, first_line: int = 1, variables: dict[str, str] | None = None) -> None:
    """Parse shell-like text; launches and exported env vars go to ``out``."""
    if "{{" in text:
        # a Jinja-templated job script (picotron's ``template/base_job.slurm``: ``torchrun --nproc_per_node={{ n_proc_per_node }}``):
        # a placeholder is a value filled in later, read as an unset shell variable, never as a word of its own
        text = _JINJA.sub(lambda m: unset_var(m.group(1), "TEMPLATE"), text)
    variables = dict(variables or {})
    src_lines = text.splitlines()
    var_words: dict[str, list[_Word]] = {}  # arrays and multi-line flag strings: their words, each with its line
    array: tuple[str, list[str]] | None = None  # an ``ARGS=(`` block still open
    quoted: tuple[str, list[str]] | None = None  # a ``NAME="`` string still open
    heredoc: _Heredoc | None = None  # a ``cat <<EOT > ds_config.json`` body still open
    # the open ``if`` blocks: the variable each one tests for emptiness where the script has already set it, else None
    empty_if: list[str | None] = []
    # the open ``if`` blocks' numeric tests of one variable (``if [ $WORKERS -gt 112 ]``): a clamp of that variable
    bound_if: list[tuple[str, str, float] | None] = []
    # the open ``if`` blocks' string tests (:func:`_string_test`): "taken" (this branch runs), "skip" (it does not, a later
    # one may), "done" (an earlier branch ran), "unknown"
    branch_if: list[str] = []
    overridable: set[str] = set()  # variables the script sets to its own default of an environment value

    def words_at(body: str, line: int, where: tuple[str, list[int], int, int] | None = None) -> list[_Word]:
        """The words of ``body``, each at ``line``; with ``where`` (the logical line, the offsets of its physical lines, its
        indent, where ``body`` starts in it), each at the physical line that holds it: a flag list kept in a quoted string
        continued over lines (Yuan's ``GPT_ARGS="\n --tensor-model-parallel-size 1 \\\n ... --bf16\n"``) cites ``--bf16``
        at its own line, not the string's first."""
        out_w: list[_Word] = []
        pos = where[3] if where is not None else 0
        for w in _array_words(body):
            at = line
            if where is not None and (p := where[0].find(w, pos)) >= 0:
                at, pos = line + bisect_right(where[1], p + where[2]) - 1, p + len(w)
            ref = _VAR_REF.match(w)
            name = (ref.group(1) or ref.group(2)) if ref else None
            if name and name in var_words and variables.get(name) == " ".join(var_words[name]):
                out_w.extend(var_words[name])
            else:
                v = _sub_vars(w, variables)
                # ``"--fp8-format hybrid"`` in an array: the expansion is split into words again where it is used (not a
                # command substitution or arithmetic it holds: ``--nodes=$((NUM_NODES - 1))`` is one word)
                out_w.extend(_word(x, at) for x in (v.split() if any(ch.isspace() for ch in v) and "$(" not in v else (v,)))
        return out_w

    for line_no, logical, starts in _logical_lines_at(text, first_line):
        if "$[" in logical:
            # bash's old arithmetic ``$[128/($WORLD_SIZE*$NPROC_PER_NODE*4)]`` (VideoLLaMA2's launches) is ``$((...))``
            logical = _OLD_ARITH.sub(r"$((\1))", logical)
        if "$(echo" in logical:
            # ``python dist_clm_train.py $(echo ${ARGS}) --rank 0`` (OpenChatKit): echoing a variable hands on its words,
            # as ``${ARGS}`` itself would
            logical = _ECHO_VAR.sub(r"\1", logical)
        stripped = logical.strip()
        if heredoc is not None:
            if (logical.lstrip("\t") if heredoc.strip_tabs else logical).strip() == heredoc.delimiter:
                if heredoc.var:
                    # ``read -r -d '' training_commands <<EOF`` (OpenRLHF's launch scripts): the body is the value of
                    # the variable, a flag list whose words keep their own lines for ``deepspeed --module $training_commands``
                    words = [w for ln, body, at in heredoc.parts for w in _body_words(body, ln, at, variables if heredoc.expand else {})]
                    variables[heredoc.var] = " ".join(words)
                    var_words[heredoc.var] = words
                else:
                    _heredoc_config(path, heredoc, variables, out)
                heredoc = None
            else:
                heredoc.lines.append((line_no, logical))
                heredoc.parts.append((line_no, logical, starts))
            continue
        if quoted is not None:
            # inside the open string each '"' toggles: ``--model "${llm}" \`` closes and reopens it, so the string
            # ends at the last quote of a line with an odd number of them (LLaVA / Qwen-VL ``args="..."`` blocks)
            if stripped.count('"') % 2:
                cut = stripped.rfind('"')
                inside, closed = stripped[:cut].replace('"', ""), '"'
            else:
                inside, closed = stripped.replace('"', ""), ""
            lead = len(logical) - len(logical.lstrip())
            quoted[1].extend(words_at(inside, line_no, (stripped, starts, lead, 0)))
            if closed:
                variables[quoted[0]] = " ".join(quoted[1])
                var_words[quoted[0]] = quoted[1]
                quoted = None
            continue
        qstart = _QUOTED_START.match(stripped)
        if qstart:
            lead = len(logical) - len(logical.lstrip())
            quoted = (qstart.group(1), words_at(qstart.group(2), line_no, (stripped, starts, lead, qstart.start(2))))
            continue
        if array is not None:
            inside, closed, _ = stripped.partition(")") if not stripped.startswith("#") else ("", "", "")
            array[1].extend(words_at(inside, line_no))
            if closed:
                variables[array[0]] = " ".join(array[1])
                var_words[array[0]] = array[1]
                array = None
            continue
        start = _ARRAY_START.match(stripped)
        if start:
            inside, closed, _ = start.group(3).partition(")")
            words = words_at(inside, line_no)
            name = start.group(1)
            if start.group(2) and variables.get(name):  # ``+=`` appends to the array
                prev = var_words.get(name) if variables.get(name) == " ".join(var_words.get(name, [])) else None
                words = [*(prev if prev is not None else [_word(variables[name], line_no)]), *words]
            if closed:
                variables[name] = " ".join(words)
                var_words[name] = words
            else:
                array = (name, words)
            continue
        if stripped.startswith(("#SBATCH", "#PBS", "#BSUB")):
            _scheduler_directive(path, line_no, stripped, out)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        hd = _HEREDOC.search(stripped)
        if hd:
            target = _REDIRECT.search(stripped)
            into = _READ_INTO.match(stripped)
            heredoc = _Heredoc(hd.group(3), bool(hd.group(1)), not hd.group(2), _sub_vars(target.group(1), variables) if target else "", [],
                               into.group(1) if into else "")
        lead = len(logical) - len(logical.lstrip())
        tokens = []
        for w, off in _lex(stripped):
            tok = _word(w, line_no + bisect_right(starts, off + lead) - 1)
            tok.off = off  # where the word starts in the logical line: a quoted value's own words are found from there
            if stripped.startswith('"$', off) and "[" not in w and _VAR_REF.match(w):
                tok.quoted = True  # ``--model_path "$MODEL_PATH"``: bash hands on the value as one word, spaces and all
            tokens.append(tok)


        snippet = stripped[:300]
        once: str | None = None  # ``[ -z "$X" ] && X=2``: a default for the next command of the line only
        for cmd in _split_commands(tokens, keep_fi=True):
            if cmd == ["fi"]:
                if empty_if:
                    empty_if.pop()
                if bound_if:
                    bound_if.pop()
                if branch_if:
                    branch_if.pop()
                continue
            if cmd == ["else"]:
                if branch_if:
                    branch_if[-1] = {"taken": "done", "skip": "taken"}.get(branch_if[-1], branch_if[-1])
                continue
            tested = _empty_test(cmd)
            if str(cmd[0]) == "if":
                empty_if.append(tested if tested is not None and _set_already(variables.get(tested)) else None)
                bound_if.append(_bound_test(cmd))
                holds = _string_test(cmd, variables, overridable)
                branch_if.append("unknown" if holds is None else "taken" if holds else "skip")
            elif str(cmd[0]) == "elif":
                if branch_if and branch_if[-1] in ("taken", "done"):
                    branch_if[-1] = "done"
                elif branch_if and branch_if[-1] == "skip":
                    holds = _string_test(cmd, variables, overridable)
                    branch_if[-1] = "unknown" if holds is None else "taken" if holds else "skip"
            elif any(b in ("skip", "done") for b in branch_if) and all(_ASSIGN.match(str(t)) for t in cmd):
                continue  # an assignment in a branch the script's own values rule out
            elif tested is not None:
                once = tested if _set_already(variables.get(tested)) else None
                continue
            kept = {v for v in empty_if if v} | ({once} if once else set())
            once = None
            raw = cmd
            cmd = _expand(cmd, variables, var_words)
            env: dict[str, str] = {}
            exported = False
            if cmd and cmd[0] in {"export", "declare", "local", "readonly", "set"}:
                exported = cmd[0] == "export"
                cmd = [t for t in cmd[1:] if not t.startswith("-")]
                raw = [t for t in raw[1:] if not t.startswith("-")]
            k = 0
            env_lines: dict[str, int] = {}
            env_raw: dict[str, tuple[Any, str]] = {}  # an assignment's token and value as written, before substitution
            while k < len(cmd) and _ASSIGN.match(cmd[k]):
                name, value = _ASSIGN.match(cmd[k]).groups()  # type: ignore[union-attr]
                if name in kept and k + 1 == len(cmd):
                    # ``if [ "$ZERO_STAGE" == "" ]; then ZERO_STAGE=0; fi`` after ``ZERO_STAGE=3``: the default does not apply
                    k += 1
                    continue
                clamp = next((b for b in reversed(bound_if) if b is not None and b[0] == name), None)
                if clamp is not None and k + 1 == len(cmd):
                    # ``WORKERS=$((NODES * GPUS * 4))`` then ``if [ $WORKERS -gt 112 ]; then WORKERS=112; fi`` (Mantis): a cap
                    # of a computed value leaves it computed; of a literal (``WORKERS=1``), it applies only if the test holds
                    try:
                        before: float | None = float(variables.get(name, ""))
                    except ValueError:
                        before = None
                    if before is None or not _BOUND_OPS[clamp[1]](before, clamp[2]):
                        k += 1
                        continue
                env[name] = value
                env_lines[name] = getattr(cmd[k], "line", line_no)
                m = _ASSIGN.match(raw[k]) if k < len(raw) else None
                if m and m.group(1) == name:
                    env_raw[name] = (raw[k], m.group(2))
                    # ``MODE=${MODE:-ft}``: a default the caller's environment overrides (MeZO's README runs ``MODE=lora bash
                    # finetune.sh``), so a test of it picks no branch
                    (overridable.add if _SELF_DEFAULT.match(str(m.group(2)).strip("'\"")) else overridable.discard)(name)
                k += 1
            body = cmd[k:]
            if not body or exported:
                for name, value in env.items():
                    words: list[_Word] | None = None
                    if any(ch.isspace() for ch in value.strip()):  # FLAGS="--a 1 --b": its words, each at its own line
                        # (``run_cmd="deepspeed pretrain_gpt.py ${megatron_options}"``: the flag list's words keep the lines
                        # they were written on; read before the variable is rebound: ``opts="${opts} --x"`` appends)
                        raw_tok, written = env_raw.get(name, (None, ""))
                        words = (_value_words(raw_tok, written, env_lines.get(name, line_no), (stripped, line_no, starts, lead),
                                              variables, var_words) if written
                                 else [_word(w, env_lines.get(name, line_no)) for w in _split_words(value)])
                    variables[name] = value
                    var_words.pop(name, None)
                    if words is not None:
                        var_words[name] = words
                        variables[name] = " ".join(words)
                    out.envs.append(EnvVar(path, line_no, name, value, "shell", snippet, comment=_comment_above(src_lines, line_no - first_line)))
                if exported:
                    continue
            if not body:
                continue
            evaled = body[0] == "eval"
            if body[0] in ("env", "eval"):  # env VAR=1 torchrun ...; eval ${run_cmd} whose value starts with ${NCCL_OPTS} VAR=1 words
                j = 1
                while j < len(body) and _ASSIGN.match(body[j]):
                    name, value = _ASSIGN.match(body[j]).groups()  # type: ignore[union-attr]
                    env[name] = value
                    env_lines.setdefault(name, getattr(body[j], "line", 0) or line_no)  # the line the word was written on
                    j += 1
                body = [body[0], *body[j:]] if evaled else body[j:]  # ``eval`` stays the command's wrapper
            for name, value in env.items():
                at = env_lines.get(name, line_no) if evaled else line_no
                # (the line that sets it, with its own text: ``OPTIONS_NCCL="NCCL_IB_DISABLE=0 ..."`` for ``eval ${run_cmd}``)
                written = src_lines[at - first_line].strip()[:300] if at != line_no and 0 <= at - first_line < len(src_lines) else snippet
                out.envs.append(EnvVar(path, at, name, value, "shell", written))
            for name, value, at in _mpi_env(body):  # ``mpirun -x NCCL_IB_DISABLE=1 python ...``: exported to every rank
                env.setdefault(name, value)
                out.envs.append(EnvVar(path, at, name, value, "shell", snippet))
            inner = _shell_c(raw, body, (stripped, line_no, starts, lead), variables, var_words)
            for run in inner if inner is not None else [body]:
                launch = launch_of(run, path, line_no, snippet, env)
                if launch is not None:
                    if inner is not None:
                        launch.wrappers = (*launch.wrappers, "bash -c")  # its flags sit inside a quoted string
                    out.launches.append(launch)


#: the shells whose ``-c`` string is a script of its own (``-lc``, ``-xc`` too)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_DASH_C = lazy_compile(r"^-[a-zA-Z]*c[a-zA-Z]*$")


def _shell_c(raw: list[Any], body: list[Any], where: tuple[str, int, list[int], int], variables: dict[str, str],
             var_words: dict[str, list[_Word]]) -> list[list[Any]] | None:
    """The commands of the string that ``bash -c`` runs, each after the words before ``bash`` (ShareGPT4V's and
    Open-LLaVA-NeXT's ``srun --nodes=$NNODES ... bash -c 'torchrun ... train_mem.py \\ --bf16 True \\ ...'``: the run's
    flags are inside the quotes, each cited at its own line), or None when the command runs no shell string. ``where``:
    the logical line, its first line, the offsets of its physical lines and its indent."""
    at = next((k for k in range(len(body) - 2) if str(body[k]).rsplit("/", 1)[-1] in _SHELLS and _DASH_C.match(body[k + 1])), None)
    src = next((raw[k + 2] for k in range(len(raw) - 2) if str(raw[k]).rsplit("/", 1)[-1] in _SHELLS and _DASH_C.match(raw[k + 1])), None)
    if at is None or src is None:
        return None
    stripped, line_no, starts, lead = where
    off = getattr(src, "off", None)
    if off is not None and stripped[off : off + 1] in ("'", '"'):
        off += 1  # the string's text starts after its quote
    words = []
    for w, o in _lex(str(src)):
        words.append(_word(w, line_no + bisect_right(starts, off + o + lead) - 1 if off is not None else getattr(src, "line", line_no)))
    runs = []
    for cmd in _split_commands(words):
        cmd = _expand(cmd, variables, var_words)
        k = 0
        while k < len(cmd) and _ASSIGN.match(cmd[k]):
            k += 1  # ``bash -c 'NCCL_DEBUG=INFO torchrun ...'``: the command after its own assignments
        if cmd[k:]:
            runs.append([*body[:at], *cmd[k:]])
    return runs


#: a redirection or pipe in a command kept in a variable (``run_cmd="deepspeed ... &> ${LOG}"``): no flag follows
_REDIRECT_WORD = lazy_compile(r"^(\d?>>?|&>>?|\d?>&\d|\||\|\||&&|;)$")


def _value_words(raw_tok: Any, written: str, at: int, where: tuple[str, int, list[int], int], variables: dict[str, str],
                 var_words: dict[str, list[_Word]]) -> list[_Word]:
    """The words of an assignment's value as written, each at the physical line that holds it: a flag list kept in a quoted
    string over continued lines (Megatron-DeepSpeed ``megatron_options=" --kd \\ --load-teacher ..."``), with ``${VAR}``
    references expanded to that variable's words and lines. ``where``: the logical line, its first line, the offsets of
    its physical lines and its indent. A redirection ends the words (``&> ${LOG_PATH}/run.log`` is not a flag's value)."""
    stripped, line_no, starts, lead = where
    pos = getattr(raw_tok, "off", None)
    out: list[_Word] = []
    for w in _array_words(written):
        if _REDIRECT_WORD.match(w):
            break
        ln = at
        if pos is not None and (p := stripped.find(w, pos)) >= 0:
            ln, pos = line_no + bisect_right(starts, p + lead) - 1, p + len(w)
        ref = _VAR_REF.match(w)
        name = (ref.group(1) or ref.group(2)) if ref else None
        if name and name in var_words and variables.get(name) == " ".join(var_words[name]):
            out.extend(var_words[name])
            continue
        v = _sub_vars(w, variables)
        # (a command substitution or arithmetic the value holds, ``--nodes=$((NUM_NODES - 1))``, is one word)
        out.extend(_word(x, ln) for x in (v.split() if any(ch.isspace() for ch in v) and "$(" not in v else (v,)) if x)
    return out


#: a command substitution that only echoes one variable (``$(echo ${ARGS})``, ``$(echo $ARGS)``)
_ECHO_VAR = lazy_compile(r"\$\(\s*echo\s+(\$\{[A-Za-z_]\w*\}|\$[A-Za-z_]\w*)\s*\)")
_OLD_ARITH = lazy_compile(r"\$\[([^\[\]\n]*)\]")


def _mpi_env(body: list[Any]) -> list[tuple[str, str, int]]:
    """(name, value, line) of each variable an MPI launcher exports to its ranks before the command it runs: Open MPI's
    ``-x NAME=VALUE``, MPICH/MVAPICH's ``-env NAME=VALUE`` / ``-genv NAME VALUE``. A bare ``-x NAME`` passes the caller's
    value on: nothing new is set."""
    if not body or str(body[0]).rsplit("/", 1)[-1] not in {"mpirun", "mpiexec"}:
        return []
    out: list[tuple[str, str, int]] = []
    i = 1
    while i < len(body) - 1:
        tok = str(body[i])
        if _PYTHON.match(tok.rsplit("/", 1)[-1]) or tok.rsplit("/", 1)[-1] in _LAUNCHERS:
            break  # the command the ranks run: its own flags are not the launcher's
        if tok == "-x" or tok in _ENV_OPTS:
            nxt = str(body[i + 1])
            m = _ASSIGN.match(nxt)
            if m:
                out.append((m.group(1), m.group(2), getattr(body[i + 1], "line", 0)))
                i += 2
                continue
            if tok.endswith("env") and i + 2 < len(body) and re.fullmatch(r"[A-Za-z_]\w*", nxt):
                out.append((nxt, str(body[i + 2]), getattr(body[i + 1], "line", 0)))
                i += 3
                continue
        i += 1
    return out


def launch_of(tokens: list[Any], path: str, line_no: int, text: str, env: dict[str, str] | None = None) -> Launch | None:
    """The launch record of a command's words (a shell line's, or a flag list a Python runner builds), or None when they
    start no known launcher; each flag's own physical line is kept where it differs from the command's first line."""
    la_lines: dict[str, int] = {}
    sa_lines: dict[str, int] = {}
    sa_spell: dict[str, str] = {}
    parsed = _parse_command(tokens, (la_lines, sa_lines, sa_spell))
    if parsed is None:
        return None
    launcher, opts, script, script_args, wrappers = parsed
    launch = Launch(path, line_no, launcher, opts, script, script_args, text, wrappers, env if env is not None else {})
    launch.arg_lines = {k: ln for k, ln in sa_lines.items() if ln != line_no and k in script_args}
    launch.launcher_arg_lines = {k: ln for k, ln in la_lines.items() if ln != line_no and k in opts}
    launch.arg_text = {k: t[:200] for k, t in sa_spell.items() if k in script_args}
    return launch


# ``cat <<EOT > $config_json`` / ``<<-'EOF'`` (not the ``<<<`` here-string)
_HEREDOC = lazy_compile(r"(?<!<)<<(?!<)(-)?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_REDIRECT = lazy_compile(r"(?<![0-9&<>])>>?\s*([^\s<>|;&]+)")
_UNQUOTED_VAR = lazy_compile(r'(?<!["\w])(\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*)')


#: ``read -r -d '' NAME <<EOF``: the here-document becomes the value of NAME
_READ_INTO = lazy_compile(r"""read\s+(?:-[a-zA-Z]+\s+(?:''\s+|""\s+)?)*([A-Za-z_][A-Za-z0-9_]*)\s*<<""")


@dataclass(slots=True)
class _Heredoc:
    delimiter: str
    strip_tabs: bool
    expand: bool  # an unquoted delimiter expands $VARS in the body
    target: str  # the redirect target, "" when none
    lines: list[tuple[int, str]]
    var: str = ""  # the variable ``read`` fills with the body, "" when none
    parts: list[tuple[int, str, list[int]]] = field(default_factory=list)  # the body's logical lines, with line starts


def _body_words(body: str, line_no: int, starts: list[int], variables: dict[str, str]) -> list[_Word]:
    """The words of one logical line of a here-document, each at its physical line, variables substituted."""
    stripped = body.strip()
    if not stripped or stripped.startswith("#"):
        return []
    lead = len(body) - len(body.lstrip())
    out: list[_Word] = []
    for w, off in _lex(stripped):
        v = _sub_vars(w, variables) if "$" in w else w
        out.extend(_word(x, line_no + bisect_right(starts, off + lead) - 1) for x in (v.split() if v != w and any(ch.isspace() for ch in v) else (v,)) if x)
    return out


def _heredoc_config(path: str, hd: _Heredoc, variables: dict[str, str], out: FileFacts) -> None:
    """A JSON or YAML config written by the script (DeepSpeed configs in slurm scripts): its keys, at their lines."""
    if not hd.lines:
        return
    from . import configs  # configs imports this module: import at use

    body = "\n".join(line.lstrip("\t") if hd.strip_tabs else line for _, line in hd.lines)
    if hd.expand:
        body = "\n".join(_sub_vars(line, variables) for line in body.split("\n"))
    head = body.lstrip()[:1]
    target = hd.target.lower()
    if target.endswith(".json") or head in ("{", "["):
        kind = "json"
        body = _UNQUOTED_VAR.sub(lambda m: json.dumps(m.group(1)), body)  # "stage": $ZERO_STAGE -> a string value
    elif target.endswith((".yaml", ".yml")) or re.match(r"\s*[\w.-]+:(\s|$)", body):
        kind = "yaml"
    else:
        return
    tmp = FileFacts(path=path, kind=kind)
    (configs.extract_json if kind == "json" else configs.extract_yaml)(path, body, tmp)
    if tmp.error:
        return
    offset = hd.lines[0][0] - 1
    original = {n: line.strip()[:300] for n, line in hd.lines}  # snippets show the script's text, before expansion
    out.configs.extend(replace(e, line=e.line + offset, text=original.get(e.line + offset, e.text)) for e in tmp.configs)
    out.envs.extend(replace(e, line=e.line + offset) for e in tmp.envs)
    for launch in tmp.launches:
        launch.line += offset
        out.launches.append(launch)


def _scheduler_directive(path: str, line_no: int, text: str, out: FileFacts) -> None:
    """``#SBATCH --nodes=2 --gres=gpu:8`` -> config entries ``SBATCH.nodes`` etc."""
    directive, _, rest = text.partition(" ")
    opts, _ = _parse_opts(_split_words(rest), stop_at_script=False)
    short = {"N": "nodes", "n": "ntasks", "G": "gpus", "c": "cpus_per_task"}
    for k, v in opts.items():
        out.configs.append(ConfigEntry(path, line_no, (directive.lstrip("#"), short.get(k, k)), v, "scheduler", text[:300]))


def extract_dockerfile(path: str, text: str, out: FileFacts) -> list[tuple[int, str]]:
    """ENV/ARG become env vars; RUN lines go through the shell parser; returns RUN lines for dependency parsing."""
    runs: list[tuple[int, str]] = []
    for line_no, logical in _logical_lines(text, 1):
        s = logical.strip()
        if not s or s.startswith("#"):
            continue
        instr, _, rest = s.partition(" ")
        instr = instr.upper()
        if instr == "ENV":
            rest = rest.strip()
            if "=" in rest.split(" ", 1)[0]:
                parts = _split_words(rest)
                for p in parts:
                    if "=" in p:
                        k, v = p.split("=", 1)
                        out.envs.append(EnvVar(path, line_no, k, v, "docker", s[:300]))
            else:
                k, _, v = rest.partition(" ")
                out.envs.append(EnvVar(path, line_no, k, v.strip(), "docker", s[:300]))
        elif instr in {"RUN", "CMD", "ENTRYPOINT"}:
            body = rest.strip()
            if body.startswith("["):
                try:
                    import json

                    body = " ".join(json.loads(body))
                except ValueError:
                    pass
            runs.append((line_no, body))
            extract_shell_text(path, body, out, first_line=line_no)
    return runs
