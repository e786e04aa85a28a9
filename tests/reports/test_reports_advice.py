"""Recommendation order (the seed's fourth step) and applicability of advice."""

from __future__ import annotations

from checks.model import Bottleneck, Evidence, Priority, Project, Status
from reports.advice import build_plan

from .helpers import fake_check, make_audit, result

H, M, L = Priority.HIGH, Priority.MEDIUM, Priority.LOW
U, P, N, NA = Status.USED, Status.PARTIAL, Status.UNUSED, Status.NA


def ids(plan):
    return [r.check for r in plan.recommendations]


def test_priority_then_bottleneck_then_fourth_step_order():
    checks = {
        "C1": fake_check("C1", priority=H, bottlenecks=(Bottleneck.COMPUTE,)),
        "D1": fake_check("D1", priority=H, bottlenecks=(Bottleneck.MEMORY,)),
        "I1": fake_check("I1", priority=H, bottlenecks=(Bottleneck.DATA_IO,)),
        "F1": fake_check("F1", priority=M, bottlenecks=(Bottleneck.DATA_IO,)),
        "D2": fake_check("D2", priority=M, bottlenecks=(Bottleneck.LAUNCH,)),
        "E4": fake_check("E4", priority=L),
    }
    results = [result("E4", N, L), result("D2", N, M), result("F1", N, M), result("I1", N, H), result("D1", N, H), result("C1", N, H)]
    project = Project(bottleneck=Bottleneck.MEMORY, multi_node=True)
    plan = build_plan(make_audit(results, project), checks)
    # high first; within high the memory-bound D1 first, then the fourth step's order (I1 before C1)
    assert ids(plan) == ["D1", "I1", "C1", "F1", "D2", "E4"]
    assert plan.get("D1").matches_bottleneck and not plan.get("I1").matches_bottleneck

    plan = build_plan(make_audit(results, Project(bottleneck=Bottleneck.DATA_IO, multi_node=True)), checks)
    assert ids(plan) == ["I1", "C1", "D1", "F1", "D2", "E4"]


def test_inference_project_follows_scenario_b():
    checks = {c: fake_check(c, priority=H) for c in ("J4", "J5", "J1", "D1")}
    results = [result(c, N, H) for c in ("J4", "J1", "D1", "J5")]
    project = Project(does_inference=True, does_training=False)
    assert ids(build_plan(make_audit(results, project), checks)) == ["J5", "J1", "D1", "J4"]


def test_used_na_and_no_priority_are_never_recommended():
    checks = {c: fake_check(c, priority=H) for c in ("C1", "C3", "D1", "D2", "F3")}
    results = [
        result("C1", U, H),  # in use, even if a check (wrongly) set a priority
        result("C3", NA, H),
        result("D1", N, None),  # the check's recommendation_priority said no
        result("D2", P, M),
        result("F3", N, L),
    ]
    plan = build_plan(make_audit(results), checks)
    assert ids(plan) == ["D2", "F3"]


def test_sharding_advice_withheld_for_a_small_single_gpu_model():
    checks = {c: fake_check(c, priority=H) for c in ("A2", "A3", "C4", "G4")}
    results = [result(c, N, H) for c in ("A2", "A3", "C4", "G4")]
    small = Project(params_billions=0.1, estimated_params="100M")
    plan = build_plan(make_audit(results, small), checks)
    assert ids(plan) == []
    assert {w.check for w in plan.withheld} == {"A2", "A3", "C4", "G4"}
    assert "fits one GPU" in next(w for w in plan.withheld if w.check == "A2").reason

    big = Project(params_billions=70.0, estimated_params="70B", num_gpus=8)
    plan = build_plan(make_audit(results, big), checks)
    assert set(ids(plan)) == {"A2", "C4", "G4"}  # FSDP and ZeRO-3 are one choice
    assert "same change as A2" in next(w for w in plan.withheld if w.check == "A3").reason


def test_one_recommendation_per_underlying_change():
    checks = {c: fake_check(c, priority=H) for c in ("A2", "A3", "B1", "B5")}
    results = [result(c, N, H) for c in ("A2", "A3", "B1", "B5")]
    ds = Project(params_billions=70.0, num_gpus=8, frameworks=["deepspeed", "transformers"])
    plan = build_plan(make_audit(results, ds), checks)
    assert ids(plan) == ["A3"] and {w.check for w in plan.withheld} == {"A2", "B1", "B5"}
    plain = Project(params_billions=70.0, num_gpus=8, frameworks=["transformers"])
    assert ids(build_plan(make_audit(results, plain), checks)) == ["A2"]


def test_a_line_shared_by_two_checks_is_listed_once():
    checks = {c: fake_check(c, priority=M) for c in ("I4", "I5")}
    line = Evidence("configs/sft.yaml", 9, "logging_steps: 1", "logging_steps", 1)
    other = Evidence("train.py", 40, "print(loss.item())")
    plan = build_plan(make_audit([result("I4", N, M, findings=[line]), result("I5", N, M, findings=[line, other])]), checks)
    i4, i5 = plan.get("I4"), plan.get("I5")
    assert i4.findings == [line] and i5.findings == [other]
    plan = build_plan(make_audit([result("I4", N, M, findings=[line]), result("I5", N, M, findings=[line])]), checks)
    assert plan.get("I5").findings == [] and plan.get("I5").detail == "same place(s) as I4"


def test_lora_is_an_option_for_a_full_fine_tune_not_a_must_do():
    checks = {"G4": fake_check("G4", priority=H)}
    results = [result("G4", N, H)]
    full = Project(finetunes=True, params_billions=7.0)
    assert build_plan(make_audit(results, full), checks).get("G4").priority == L
    rl = Project(alignment=True, params_billions=7.0)  # OpenRLHF's full-parameter PPO/DPO: LoRA is an option too
    assert build_plan(make_audit(results, rl), checks).get("G4").priority == L


def test_single_gpu_gets_no_multi_gpu_advice():
    checks = {c: fake_check(c, priority=M) for c in ("A1", "E2", "E4", "F1")}
    results = [result(c, N, M) for c in ("A1", "E2", "E4", "F1")]
    plan = build_plan(make_audit(results, Project(num_gpus=1)), checks)
    assert ids(plan) == ["F1"]


def test_single_node_gets_no_nccl_fabric_advice():
    checks = {c: fake_check(c, priority=L) for c in ("E3", "E4", "F1")}
    results = [result(c, N, L) for c in ("E3", "E4", "F1")]
    plan = build_plan(make_audit(results, Project(num_gpus=8)), checks)
    assert ids(plan) == ["F1"]
    assert "NCCL_IB_HCA" in next(w.reason for w in plan.withheld if w.check == "E4")
    assert sorted(ids(build_plan(make_audit(results, Project(num_gpus=16, multi_node=True)), checks))) == ["E3", "E4", "F1"]


def test_alternative_in_use_covers_the_need():
    checks = {c: fake_check(c, priority=H) for c in ("A2", "A3", "B1", "B3", "D3", "D5")}
    results = [result("A2", N, H), result("A3", U), result("B1", U), result("B3", N, L), result("D3", N, L), result("D5", U)]
    plan = build_plan(make_audit(results, Project(num_gpus=8, params_billions=7.0)), checks)
    assert ids(plan) == []
    assert {w.check for w in plan.withheld} == {"A2", "B3", "D3"}


def test_liger_advice_follows_the_model_family():
    checks = {"D5": fake_check("D5", priority=H)}
    results = [result("D5", N, H)]
    hf = ["transformers"]
    assert ids(build_plan(make_audit(results, Project(model_families=["gpt2"], frameworks=hf)), checks)) == []
    assert ids(build_plan(make_audit(results, Project(model_families=["llama"], frameworks=hf)), checks)) == ["D5"]
    assert ids(build_plan(make_audit(results, Project(model_families=["phi"], frameworks=hf)), checks)) == ["D5"]  # phi3 yes, phi-2 no
    assert ids(build_plan(make_audit(results, Project(model_families=[], frameworks=hf)), checks)) == ["D5"]  # unknown: keep
    # seed: Liger is for HF models; a Megatron or hand-written model gets no Liger advice
    for fw in ([], ["megatron"], ["lightning"]):
        plan = build_plan(make_audit(results, Project(model_families=["llama"], frameworks=fw)), checks)
        assert ids(plan) == [] and "Hugging Face" in plan.withheld[0].reason


def test_fp8_advice_only_where_the_gpu_has_fp8():
    checks = {"C2": fake_check("C2", priority=L)}
    results = [result("C2", N, L)]
    assert ids(build_plan(make_audit(results, Project(hardware="A100-SXM4-80GB")), checks)) == []
    assert ids(build_plan(make_audit(results, Project(hardware="v100")), checks)) == []
    assert ids(build_plan(make_audit(results, Project(hardware="h100")), checks)) == ["C2"]
    assert ids(build_plan(make_audit(results, Project(hardware=None)), checks)) == ["C2"]


def test_v100_gets_fp16_not_bf16():
    snippets = {
        "hf-yaml": "bf16: true\ntf32: true\n",
        "deepspeed-json": '{\n  "bf16": {"enabled": true}\n}\n',
        "python": "import torch\nwith torch.autocast('cuda', dtype=torch.bfloat16):\n    loss = model(x)\n",
    }
    checks = {"C1": fake_check("C1", priority=H, snippets=snippets)}
    results = [result("C1", N, H)]
    yaml_repo = {"train.yaml": "learning_rate: 1.0e-4\noutput_dir: out\nbf16: false\n"}
    rec = build_plan(make_audit(results, Project(hardware="v100"), yaml_repo), checks).get("C1")
    assert "FP16" in rec.text and "V100" in rec.text and "BF16 (" not in rec.text
    assert rec.snippet.code == "fp16: true\n"
    ds_repo = {"ds.json": '{"zero_optimization": {"stage": 2}}'}
    rec = build_plan(make_audit(results, Project(hardware="v100"), ds_repo), checks).get("C1")
    assert '"fp16": {"enabled": true, "loss_scale": 0}' in rec.snippet.code and "bf16" not in rec.snippet.code
    raw = {"train.py": "import torch\nloss = model(x)\nloss.backward()\n"}
    rec = build_plan(make_audit(results, Project(hardware="v100"), raw), checks).get("C1")
    assert rec.snippet.target == "python" and "GradScaler" in rec.snippet.code and "bfloat16" not in rec.snippet.code
    rec = build_plan(make_audit(results, Project(hardware="h100"), yaml_repo), checks).get("C1")
    assert rec.snippet.code == "bf16: true\ntf32: true\n" and rec.text == "fix C1"


def test_evidence_and_benefit_travel_with_the_recommendation():
    checks = {"F1": fake_check("F1", priority=M)}
    ev = Evidence("train.py", 12, "DataLoader(ds, num_workers=0)", "DataLoader(num_workers=)", 0)
    plan = build_plan(make_audit([result("F1", N, M, [ev], detail="num_workers=0")]), checks)
    rec = plan.get("F1")
    assert rec.evidence == [ev] and rec.benefit == "benefit of F1" and rec.detail == "num_workers=0"
    out = rec.to_json()
    assert out["check"] == "F1" and out["priority"] == "medium" and out["evidence"][0]["line"] == 12


def test_inference_only_project_gets_no_training_advice():
    from checks.workload import inference_not_applicable

    cids = ("A1", "A2", "A4", "C1", "C3", "D1", "D5", "D6", "F1", "G4", "I3", "J4")
    checks = {c: fake_check(c, priority=M) for c in cids}
    serving = Project(does_inference=True, does_training=False)
    # the engine makes the training checks n/a on such a project (out of the score, nothing to advise)
    results = [result(c, NA, None) if inference_not_applicable(c, serving) else result(c, N, M) for c in cids]
    assert [r.id for r in results if r.status is N] == ["A4", "D1", "J4"]
    plan = build_plan(make_audit(results, serving), checks)
    assert ids(plan) == ["D1", "J4", "A4"]  # appendix A, scenario B order
    assert not plan.withheld
    results = [result(c, N, M) for c in cids]
    both = Project(does_inference=True, does_training=True, frameworks=["transformers"])
    assert len(ids(build_plan(make_audit(results, both), checks))) == len(cids)


def test_lora_sizes_memory_by_the_adapters():
    checks = {c: fake_check(c, priority=H) for c in ("A2", "C4")}
    results = [result(c, N, H) for c in ("A2", "C4")]
    lora = Project(params_billions=8.0, num_gpus=8, adapter_training=True)
    plan = build_plan(make_audit(results, lora), checks)
    assert ids(plan) == [] and "LoRA trains adapters" in plan.withheld[0].reason
    full = Project(params_billions=8.0, num_gpus=8)
    assert "A2" in ids(build_plan(make_audit(results, full), checks))


def test_a_partial_use_is_triggered_by_its_judgment_not_by_what_is_in_place():
    """LLaMA-Factory F6: 'Triggered by: loader.py:332 save_to_disk(...)' read as if the offline preprocessing were the
    problem; a partial result without findings is triggered by the check's own judgment, citing the sites it rests on."""
    from reports.markdown import render_markdown

    ev = [Evidence("src/data/loader.py", 332, "dataset_dict.save_to_disk(data_args.tokenized_path)")]
    part = result("F6", P, priority=M, evidence=ev, detail="data is preprocessed ahead, but some tokenization still runs per sample")
    md = render_markdown(make_audit([part], Project(does_training=True), files={"train.py": "loss.backward()\n"}))
    line = next(x for x in md.splitlines() if "Triggered by" in x and "F6" not in x and "save_to_disk" in x)
    assert "Triggered by: data is preprocessed ahead, but some tokenization still runs per sample (`src/data/loader.py:332`" in line
    missing = result("F1", N, priority=M, findings=[Evidence("train.py", 1, "DataLoader(ds, num_workers=0)")], detail="main process")
    md2 = render_markdown(make_audit([missing], Project(does_training=True), files={"train.py": "loss.backward()\n"}))
    assert "Triggered by: `train.py:1`" in md2
