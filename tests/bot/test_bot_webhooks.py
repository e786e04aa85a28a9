"""Receiving: signature before parsing, 400 for malformed bodies, 202 once queued, duplicates do nothing."""

from __future__ import annotations

import json

from bot.signature import sign, verify

from .helpers import SECRET, check_run, deliver, headers, issue_comment, pull_request


def test_github_documented_test_vector() -> None:
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert sign("It's a Secret to Everybody", b"Hello, World!") == expected
    assert verify("It's a Secret to Everybody", b"Hello, World!", expected)
    assert not verify("It's a Secret to Everybody", b"Hello, World?", expected)
    assert not verify("It's a Secret to Everybody", b"Hello, World!", expected[7:])  # no "sha256=" prefix
    assert not verify("It's a Secret to Everybody", b"Hello, World!", None)


def test_missing_or_wrong_signature_is_401_and_queues_nothing(client, rt) -> None:
    body = json.dumps(pull_request()).encode()
    h = headers("pull_request", body)
    del h["X-Hub-Signature-256"]
    assert client.post("/api/github/webhooks", content=body, headers=h).status_code == 401
    r = deliver(client, "pull_request", pull_request(), secret="not the secret")
    assert r.status_code == 401
    # a valid signature of another body: the signature is checked on the raw bytes
    h = headers("pull_request", body)
    assert client.post("/api/github/webhooks", content=body + b" ", headers=h).status_code == 401
    assert rt.store.active_count() == 0 and rt.huey.pending_count() == 0


def test_signature_is_checked_before_parsing(client) -> None:
    # garbage with a wrong signature: 401, not 400 (nothing is parsed before the signature holds)
    r = client.post("/api/github/webhooks", content=b"{not json", headers=headers("pull_request", b"other", secret=SECRET))
    assert r.status_code == 401


def test_malformed_bodies_are_400(client, rt) -> None:
    for body in (b"{not json", b"[1, 2]", json.dumps({"action": "opened"}).encode()):
        r = client.post("/api/github/webhooks", content=body, headers=headers("pull_request", body))
        assert r.status_code == 400, body
    body = json.dumps(pull_request()).encode()
    h = headers("pull_request", body)
    del h["X-GitHub-Delivery"]
    assert client.post("/api/github/webhooks", content=body, headers=h).status_code == 400
    assert rt.store.active_count() == 0


def test_pull_request_is_queued_durably_and_duplicate_does_nothing(client, rt) -> None:
    r = deliver(client, "pull_request", pull_request(), delivery="72d3162e-cc78-11e3-81ab-4c9367dc0958")
    assert r.status_code == 202 and r.json()["status"] == "queued"
    assert rt.store.seen("72d3162e-cc78-11e3-81ab-4c9367dc0958")
    rt.dispatcher.join()
    assert rt.store.active_count() == 1 and rt.huey.pending_count() == 1
    again = deliver(client, "pull_request", pull_request(), delivery="72d3162e-cc78-11e3-81ab-4c9367dc0958")
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    rt.dispatcher.join()
    assert rt.store.active_count() == 1 and rt.huey.pending_count() == 1


def test_dedupe_survives_a_restart(client, rt, settings, gh_mock) -> None:
    from fastapi.testclient import TestClient

    from bot.app import create_app
    from bot.runtime import build_runtime

    from .helpers import TEST_TUNING

    assert deliver(client, "pull_request", pull_request(), delivery="d-1").status_code == 202
    rt.close()
    restarted = build_runtime(settings, TEST_TUNING)
    try:
        with TestClient(create_app(restarted)) as c2:
            assert deliver(c2, "pull_request", pull_request(), delivery="d-1").json()["status"] == "duplicate"
    finally:
        restarted.close()


def test_events_routing(client, rt) -> None:
    assert deliver(client, "pull_request", pull_request(action="labeled")).json()["status"] == "ignored"
    assert deliver(client, "pull_request", pull_request(action="closed")).json()["status"] == "ignored"
    assert deliver(client, "star", {"action": "created", "repository": {}}).json()["status"] == "ignored"
    inst = {"action": "created", "installation": {"id": 42, "account": {"login": "octo-org"}}, "repositories": [{"full_name": "octo-org/train-repo"}]}
    assert deliver(client, "installation", inst).json()["status"] == "logged"
    unknown_button = check_run(action="requested_action")
    unknown_button["requested_action"] = {"identifier": "frobnicate"}
    assert deliver(client, "check_run", unknown_button).json()["status"] == "logged"
    assert deliver(client, "check_run", check_run(action="created")).json()["status"] == "ignored"
    assert deliver(client, "check_run", check_run(name="Some other CI")).json()["status"] == "ignored"
    assert deliver(client, "issue_comment", issue_comment("looks good to me")).json()["status"] == "ignored"
    assert deliver(client, "issue_comment", issue_comment("/accel help", kind="Bot")).json()["status"] == "ignored"
    assert rt.store.active_count() == 0
    for action in ("opened", "synchronize", "reopened", "ready_for_review"):
        assert deliver(client, "pull_request", pull_request(action=action)).status_code == 202
    assert deliver(client, "check_run", check_run()).json()["status"] == "queued"
    assert deliver(client, "issue_comment", issue_comment("please\n/accel rescan")).json()["status"] == "queued"
    assert rt.store.active_count() == 6


def test_health_and_metrics(client, rt) -> None:
    assert client.get("/healthz").json() == {"status": "ok", "journal": True, "queue": True}
    deliver(client, "pull_request", pull_request())
    deliver(client, "pull_request", pull_request(), secret="wrong secret")
    assert client.get("/metrics").status_code == 404  # not on the webhook port without ACCEL_METRICS_TOKEN
    text = rt.metrics.render().decode()
    assert 'accel_webhook_deliveries_total{event="pull_request",outcome="queued"} 1.0' in text
    assert 'accel_webhook_deliveries_total{event="pull_request",outcome="bad_signature"} 1.0' in text
    assert "accel_queue_depth 1.0" in text
    assert "accel_audit_duration_seconds_bucket" in text and "accel_github_api_errors" in text


def test_metrics_ports_bind_to_localhost_by_default() -> None:
    import argparse

    from accel_audit.commands import serve

    parser = argparse.ArgumentParser()
    serve.add_parser(parser.add_subparsers())
    s = parser.parse_args(["serve"])
    w = parser.parse_args(["worker"])
    assert (s.metrics_port, s.metrics_host) == (0, "127.0.0.1")  # serve: no metrics port unless asked for
    assert (w.metrics_port, w.metrics_host) == (9100, "127.0.0.1")
