"""deploy/: the Kubernetes image is a parameter (kustomize ``images:``), never ``:latest``."""

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
