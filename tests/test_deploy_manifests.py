"""deploy/: the Kubernetes image is a parameter (kustomize ``images:``), compose's a version tag; never ``:latest``."""

from __future__ import annotations

from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def _containers() -> list[dict]:
    out = []
    for doc in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()):
        spec = ((doc or {}).get("spec") or {}).get("template", {}).get("spec", {})
        out += spec.get("containers", [])
    return out


def test_the_app_image_is_set_by_kustomize() -> None:
    app_images = {c["image"] for c in _containers() if c["name"] in ("web", "worker")}
    assert app_images == {"accel-audit"}  # the name kustomize's images transformer replaces
    assert not any(c["image"].endswith(":latest") for c in _containers())
    kust = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assert kust["resources"] == ["kubernetes.yaml"]
    [image] = kust["images"]
    assert image["name"] == "accel-audit"
    assert "/" in image["newName"]  # registry/name
    assert image["newTag"] and image["newTag"] != "latest"


def test_compose_runs_one_versioned_image() -> None:
    import re
    import tomllib

    version = tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())["project"]["version"]
    services = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    images = {services[s]["image"] for s in ("app", "worker")}
    assert images == {f"${{ACCEL_IMAGE:-accel-audit:{version}}}"}  # app and workers run the same, versioned image
    assert not any(re.search(r":latest\b", str(svc.get("image", ""))) for svc in services.values())
