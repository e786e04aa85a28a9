"""``python -m build``: the sdist and the wheel install in a fresh venv with their templates and data, and the
installed ``accel-audit scan`` audits a fixture exactly as the checkout does.

Offline: the build uses this environment's setuptools (``--no-isolation``), the wheel is installed with
``--no-deps --no-index``, and the fresh venv finds the dependencies through a ``.pth`` line naming this
environment's site-packages (a plain path: this environment's editable install of accel-audit is not
activated there, so the code that runs is the wheel's).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "repos" / "hf_deepspeed"
# the packages pyproject ships (``include = ["checks*", ...]``): a new package cannot be left out of this test
PACKAGES = tuple(p.rstrip("*") for p in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"])
NEEDED = ("reports/templates/report.md.j2", "reports/data/hardware.json", "reports/data/priority_order.json", "accel_audit/app-manifest.json")


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    pytest.importorskip("build")
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for pkg in PACKAGES:  # a copy: the build writes build/ and *.egg-info next to the sources
        shutil.copytree(ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("dist")
    res = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    [sdist] = out.glob("accel_audit-*.tar.gz")
    [wheel] = out.glob("accel_audit-*-py3-none-any.whl")
    return sdist, wheel


def test_the_wheel_and_sdist_carry_templates_and_data(dists: tuple[Path, Path]) -> None:
    sdist, wheel = dists
    names = set(zipfile.ZipFile(wheel).namelist())
    for need in NEEDED:
        assert need in names, need
    assert {f"{p}/__init__.py" for p in PACKAGES if (ROOT / p / "__init__.py").exists()} <= names
    assert {n for n in names if n.endswith(".json") and n.startswith("reports/data/")} == {
        f"reports/data/{p.name}" for p in (ROOT / "reports" / "data").glob("*.json")}
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "accel-audit = accel_audit.cli:entry" in zipfile.ZipFile(wheel).read(entry).decode()
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("/METADATA"))).decode()
    assert "Requires-Python: >=3.11" in meta
    members = {m.split("/", 1)[1] for m in tarfile.open(sdist).getnames() if "/" in m}
    for need in (*NEEDED, "pyproject.toml", "README.md"):
        assert need in members, need


def _fresh_venv(where: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    py = where / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # the dependencies of this environment (not its editable accel-audit: a .pth path line activates no .pth inside)
    Path(site, "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return py


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_the_installed_package_scans_a_fixture(dists: tuple[Path, Path], tmp_path: Path, kind: str) -> None:
    sdist, wheel = dists
    if kind == "sdist":  # the sdist is complete: it builds the same wheel offline
        tarfile.open(sdist).extractall(tmp_path / "x", filter="data")
        [src] = (tmp_path / "x").iterdir()
        res = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "w"), str(src)],
                             capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-3000:]
        [wheel] = (tmp_path / "w").glob("*.whl")
    py = _fresh_venv(tmp_path / "venv")
    res = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    work = tmp_path / "elsewhere"  # not the checkout: nothing can be imported from the sources
    work.mkdir()
    where = subprocess.run([str(py), "-c", "import accel_audit, reports; print(accel_audit.__file__); print(reports.__file__)"],
                           cwd=work, capture_output=True, text=True, check=True).stdout.split()
    assert all(p.startswith(str(tmp_path / "venv")) for p in where), where
    cli = tmp_path / "venv" / "bin" / "accel-audit"
    md = subprocess.run([str(cli), "scan", str(FIXTURE)], cwd=work, capture_output=True, text=True, timeout=300)
    assert md.returncode == 0, md.stderr
    assert md.stdout.startswith("# LLM/MLLM Training Acceleration Audit")  # the jinja2 template
    js = subprocess.run([str(cli), "scan", str(FIXTURE), "--format", "json"], cwd=work, capture_output=True, text=True, timeout=300)
    expected = subprocess.run([sys.executable, "-m", "accel_audit.cli", "scan", str(FIXTURE), "--format", "json"],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert json.loads(js.stdout) == json.loads(expected.stdout)  # the same report as the checkout (data files included)
    reg = subprocess.run([str(cli), "register", "--help"], cwd=work, capture_output=True, text=True)
    assert reg.returncode == 0 and "--public-url" in reg.stdout
    manifest = subprocess.run([str(py), "-c", "from accel_audit.commands.register import load_manifest; print(load_manifest()['name'])"],
                              cwd=work, capture_output=True, text=True, check=True)
    assert manifest.stdout.strip() == "accel-audit"
