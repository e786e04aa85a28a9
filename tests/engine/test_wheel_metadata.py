"""A wheel ships its dependencies only as ``Requires-Dist`` headers of ``*.dist-info/METADATA`` (lm-buddy 0.9.0 pins
transformers==4.36.2 there and nowhere else): they are read as a requirements file is. Fails on the engine before."""

from __future__ import annotations

from checks.engine import audit_files
from checks.facts import extract_file

_METADATA = (
    "Metadata-Version: 2.1\nName: mylib\nVersion: 0.9.0\nLicense: \n        Apache License\n        \n"
    "        Version 2.0, January 2004\nRequires-Python: >=3.10\n"
    "Requires-Dist: torch ==2.1.2\nRequires-Dist: transformers ==4.36.2\n"
    "Requires-Dist: urllib3 <2,>=1.26.18\nRequires-Dist: pytest ==7.4.3 ; extra == 'dev'\n"
    "\n# mylib\n\nRequires-Dist: not-a-header==1.0\n"
)


def test_requires_dist_headers_are_dependencies():
    ff = extract_file("mylib-0.9.0.dist-info/METADATA", _METADATA.encode())
    assert ff.kind == "requirements"
    assert [(d.name, d.spec, d.line) for d in ff.deps] == [
        ("torch", "==2.1.2", 9), ("transformers", "==4.36.2", 10), ("urllib3", "<2,>=1.26.18", 11), ("pytest", "==7.4.3", 12)]


def test_a_pinned_transformers_in_a_wheel_reaches_the_checks():
    audit = audit_files([
        ("mylib-0.9.0.dist-info/METADATA", _METADATA.encode()),
        ("mylib/train.py", b"from transformers import AutoModelForCausalLM, Trainer\n"
                           b"model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')\nTrainer(model=model).train()\n"),
    ])
    r = audit.result("D1")
    assert "requirements pin transformers == 4.36.2" in r.detail
    assert any(e.path == "mylib-0.9.0.dist-info/METADATA" and e.line == 10 for e in r.evidence)


def test_control_a_metadata_file_outside_a_dist_info_folder_is_not_read():
    ff = extract_file("docs/METADATA", _METADATA.encode())
    assert ff.kind != "requirements" and not ff.deps
