"""Dependency declarations -> normalised package names with their lines."""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..lazyre import lazy_compile
from .types import Dependency, FileFacts

_REQ = lazy_compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)\s*(\[[^\]]*\])?\s*(.*)$")
_EGG = lazy_compile(r"[#&]egg=([A-Za-z0-9._\-]+)")
_GIT_NAME = lazy_compile(r"/([A-Za-z0-9._\-]+?)(?:\.git)?(?:@[^#\s]*)?(?:#.*)?$")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(spec: str) -> tuple[str, str] | None:
    """``'flash-attn>=2.5 ; sys_platform == "linux"'`` -> ``('flash-attn', '>=2.5 ...')``."""
    s = spec.split(" #", 1)[0].strip()
    if not s or s.startswith(("#", "-r", "-c", "--", "-e .", ".")):
        return None
    if s.startswith("-e "):
        s = s[3:].strip()
    if " @ " in s:  # PEP 508 direct reference: ``torch @ https://.../torch.whl`` names its package first
        name = s.split(" @ ", 1)[0].strip()
        return normalise(name.split("[", 1)[0]), s
    if "://" in s or s.startswith("git+"):
        m = _EGG.search(s) or _GIT_NAME.search(s.split("#", 1)[0])
        return (normalise(m.group(1)), s) if m else None
    m = _REQ.match(s)
    if not m:
        return None
    return normalise(m.group(1)), (m.group(3) or "").strip()


def extract_requirements(path: str, text: str, out: FileFacts) -> None:
    for i, raw in enumerate(text.splitlines(), 1):
        r = parse_requirement(raw)
        if r:
            out.deps.append(Dependency(path, i, r[0], r[1], raw.strip()[:300]))


def extract_wheel_metadata(path: str, text: str, out: FileFacts) -> None:
    """A wheel's ``*.dist-info/METADATA``: each ``Requires-Dist:`` header (PEP 566), extras included as a pyproject's
    optional dependencies are; the headers end at the first blank line (the long description follows)."""
    for i, raw in enumerate(text.splitlines(), 1):
        if not raw:  # an indented line continues a header (a licence text); an empty one ends the headers
            return
        if raw.startswith("Requires-Dist:"):
            r = parse_requirement(raw[len("Requires-Dist:"):].split(";", 1)[0])
            if r:
                out.deps.append(Dependency(path, i, r[0], r[1], raw.strip()[:300]))


def pip_installs(path: str, lines: list[tuple[int, str]], out: FileFacts, source: list[str] | None = None) -> None:
    """``pip install a b==1`` inside RUN lines / shell scripts. ``source``: the file's physical lines, when ``lines`` are
    logical ones joined from backslash continuations (a Dockerfile ``RUN``): each requirement is then cited at the physical
    line that holds it (Chinese-Llama-2's ``transformers==4.31.0`` on the line under ``RUN pip config ... && \\``)."""
    def physical(line_no: int, word: str) -> int:
        if source is None:
            return line_no
        for i in range(line_no - 1, min(len(source), line_no + 200)):
            if word in source[i]:
                return i + 1
            if not source[i].rstrip().endswith("\\"):
                break  # the logical line ends here
        return line_no

    for line_no, body in lines:
        for segment in re.split(r"&&|;|\|\|", body):
            seg = segment.strip()
            m = re.search(r"\b(?:pip3?|uv pip|python3? -m pip|conda|mamba)\s+install\s+(.*)$", seg)
            if not m:
                continue
            try:
                words = shlex.split(m.group(1))
            except ValueError:
                words = m.group(1).split()
            skip_next = False
            for w in words:
                if skip_next:
                    skip_next = False
                    continue
                if w in {"-r", "-c", "--requirement", "-f", "--find-links", "-i", "--index-url", "--extra-index-url", "--channel"}:
                    skip_next = True
                    continue
                if w.startswith("-"):
                    continue
                r = parse_requirement(w)
                if r:
                    out.deps.append(Dependency(path, physical(line_no, w), r[0], r[1], seg[:300]))


def from_pyproject(path: str, data: dict[str, Any], text: str, out: FileFacts) -> None:
    lines = text.splitlines()

    def line_of(spec: str) -> int:
        for i, raw in enumerate(lines, 1):
            if spec in raw:
                return i
        return 1

    specs: list[str] = []
    project = data.get("project") or {}
    specs += [s for s in project.get("dependencies") or [] if isinstance(s, str)]
    for group in (project.get("optional-dependencies") or {}).values():
        specs += [s for s in group if isinstance(s, str)]
    for group in (data.get("dependency-groups") or {}).values():
        specs += [s for s in group if isinstance(s, str)]
    for s in specs:
        r = parse_requirement(s)
        if r:
            ln = line_of(s)
            out.deps.append(Dependency(path, ln, r[0], r[1], lines[ln - 1].strip()[:300] if lines else s))
    poetry = ((data.get("tool") or {}).get("poetry") or {}).get("dependencies") or {}
    for name, ver in poetry.items():
        if name.lower() == "python":
            continue
        ln = line_of(name)
        out.deps.append(Dependency(path, ln, normalise(name), str(ver), lines[ln - 1].strip()[:300] if lines else name))


#: a module-level list of requirement strings in setup.py that ``install_requires`` picks from by name (the Hugging Face
#: convention, copied by alignment-handbook and SPIN: ``_deps = ["vllm==0.3.0", ...]``, ``deps = {b: a for ...}``,
#: ``install_requires = [deps["vllm"], ...]``)
_DEPS_TABLE = lazy_compile(r"(?i)^_?(deps|dependencies|requirements?|requires|required_packages)$")


def from_setup_calls(out: FileFacts, text: str = "") -> None:
    """``setup(install_requires=[...], extras_require={...})`` in setup.py (already parsed by ast), then the pins of a
    module-level table of requirement strings (:data:`_DEPS_TABLE`), which ``install_requires`` often picks from by name or
    is bound to, each at its own line; a name the ``setup()`` call's own lists give keeps that declaration."""
    for call in out.calls:
        if call.short != "setup":
            continue
        specs: list[str] = []
        req = call.kwargs.get("install_requires")
        if isinstance(req, tuple):
            specs += [s for s in req if isinstance(s, str)]
        extras = call.kwargs.get("extras_require")
        if isinstance(extras, dict):
            for v in extras.values():
                if isinstance(v, tuple):
                    specs += [s for s in v if isinstance(s, str)]
        for s in specs:
            r = parse_requirement(s)
            if r:
                line = call.kw_line("install_requires")
                out.deps.append(Dependency(out.path, line, r[0], r[1], s))
    found = {d.name for d in out.deps}
    lines = text.splitlines()
    for a in out.assigns:
        if a.func is not None or not _DEPS_TABLE.match(a.name) or not isinstance(a.value, tuple) or len(a.value) < 2:
            continue
        reqs = [(s, parse_requirement(s)) for s in a.value if isinstance(s, str)]
        if len(reqs) != len(a.value) or not all(r for _s, r in reqs):
            continue
        for s, r in reqs:
            if r is None or r[0] in found:
                continue
            line = next((i for i in range(a.line, min(len(lines), a.line + 400) + 1) if f'"{s}"' in lines[i - 1] or f"'{s}'" in lines[i - 1]),
                        a.line)
            out.deps.append(Dependency(out.path, line, r[0], r[1], s))
            found.add(r[0])


def from_cog(out: FileFacts, text: str = "") -> None:
    """``build: python_packages:`` of a Cog ``cog.yaml`` (DeepSeek-Math: ``torch==2.0.1``, ``transformers==4.37.2``, the
    packages its Replicate predictor is built with), each at its own line."""
    lines = text.splitlines()
    for e in out.configs:
        if tuple(e.keys[:2]) != ("build", "python_packages") or not isinstance(e.value, tuple):
            continue
        for v in e.value:
            r = parse_requirement(v) if isinstance(v, str) else None
            if not r:
                continue
            line = next((i + 1 for i in range(e.line - 1, min(len(lines), e.line + 500)) if v in lines[i]), e.line)
            out.deps.append(Dependency(out.path, line, r[0], r[1], lines[line - 1].strip()[:300] if line <= len(lines) else e.text))


def from_conda_env(out: FileFacts, text: str = "") -> None:
    """``dependencies:`` of environment.yml, conda and pip sections (each item at its own line when ``text`` is given)."""
    lines = text.splitlines()

    def item_line(e: Any, v: str) -> tuple[int, str]:
        for i in range(e.line, min(len(lines), e.line + 500)):
            if v in lines[i]:
                return i + 1, lines[i].strip()[:300]
        return e.line, e.text

    for e in out.configs:
        if not e.keys or e.keys[0] != "dependencies" or not isinstance(e.value, (str, tuple)):
            continue
        values = e.value if isinstance(e.value, tuple) else (e.value,)
        for v in values:
            if not isinstance(v, str):
                continue
            spec = v.split("::", 1)[-1]
            spec = re.sub(r"^([A-Za-z0-9._\-]+)=", r"\1==", spec) if "==" not in spec and "=" in spec else spec
            r = parse_requirement(spec)
            if r:
                line, snippet = item_line(e, v) if isinstance(e.value, tuple) else (e.line, e.text)
                out.deps.append(Dependency(out.path, line, r[0], r[1], snippet))
