"""Download pinned releases (sdist or wheel) from the package index and unpack them safely into a cache folder.

Nothing here imports or runs the downloaded code. Wheels come through ``pip download --no-deps
--only-binary :all: --ignore-requires-python`` (a wheel is never built; the code is only read, so the
interpreter a release asks for does not matter). Sdists come from the index's simple API (PEP 691 JSON)
and are checked against its sha256, because ``pip download`` of an sdist runs the package's setup.py to
read its metadata. Archives are unpacked with path checks (no absolute paths, no ``..``, no links,
regular files only).

    python -m corpus.fetch megatron-core==0.9.0 deepspeed==0.15.1 --dest ~/.cache/accel-audit-corpus
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

DEFAULT_DEST = Path.home() / ".cache" / "accel-audit-corpus"
INDEX = "https://pypi.org/simple"


class FetchError(Exception):
    pass


def _safe_member(name: str) -> PurePosixPath | None:
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        return None
    return p


def unpack(archive: Path, dest: Path) -> Path:
    """Unpack ``archive`` (.tar.gz / .zip / .whl) into ``dest``; unsafe members are skipped. Returns ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    if archive.suffix in {".whl", ".zip"}:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                rel = _safe_member(info.filename)
                if rel is None or info.is_dir():
                    continue
                if (info.external_attr >> 16) & 0o170000 == 0o120000:  # a symlink stored in the zip
                    continue
                out = dest.joinpath(*rel.parts)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(zf.read(info))
    else:
        with tarfile.open(archive) as tf:
            for m in tf:
                rel = _safe_member(m.name)
                if rel is None or not m.isfile():
                    continue
                f = tf.extractfile(m)
                if f is None:
                    continue
                out = dest.joinpath(*rel.parts)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(f.read())
    return dest


def fetch(spec: str, dest: Path = DEFAULT_DEST, kind: str = "sdist") -> Path:
    """``spec`` is ``name==version``; ``kind`` is ``sdist`` or ``wheel``. Returns the unpacked folder (cached)."""
    if "==" not in spec:
        raise FetchError(f"pin a version: {spec!r} (name==version)")
    name, version = spec.split("==", 1)
    folder = dest / f"{name.lower().replace('_', '-')}-{version}-{kind}"
    if (folder / ".complete").exists():
        return folder
    downloads = dest / "_downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    if kind == "sdist":
        unpack(_download_sdist(name, version, downloads), folder)
        (folder / ".complete").write_text(spec)
        return folder
    before = set(downloads.iterdir())
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:", "--ignore-requires-python", "-d", str(downloads), spec]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise FetchError(f"pip download {spec} ({kind}) failed: {res.stderr.strip()[-500:]}")
    new = sorted(set(downloads.iterdir()) - before) or sorted(
        p for p in downloads.iterdir() if p.name.lower().replace("_", "-").startswith(f"{name.lower().replace('_', '-')}-{version}")
    )
    if not new:
        raise FetchError(f"pip download {spec} left no file")
    unpack(new[0], folder)
    (folder / ".complete").write_text(new[0].name)
    return folder


def _norm(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _download_sdist(name: str, version: str, downloads: Path) -> Path:
    req = urllib.request.Request(f"{INDEX}/{_norm(name)}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    for f in files:
        fname = f["filename"]
        base = fname.removesuffix(".tar.gz").removesuffix(".zip")
        if base == fname or not fname.lower().replace("_", "-").startswith(_norm(name)):
            continue
        if base.rsplit("-", 1)[-1] != version:
            continue
        out = downloads / fname
        if not out.exists():
            with urllib.request.urlopen(f["url"], timeout=300) as resp:
                data = resp.read()
            want = f.get("hashes", {}).get("sha256")
            if want and hashlib.sha256(data).hexdigest() != want:
                raise FetchError(f"{fname}: sha256 does not match the index")
            out.write_bytes(data)
        return out
    raise FetchError(f"no sdist of {name} {version} on the index")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+", help="name==version")
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    ap.add_argument("--kind", choices=("sdist", "wheel"), default="sdist")
    args = ap.parse_args(argv)
    for spec in args.specs:
        try:
            print(fetch(spec, args.dest, args.kind))
        except FetchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
