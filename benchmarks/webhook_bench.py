"""Webhook service benchmark: ack latency under load, PR audits per minute, peak RSS, all on loopback.

Processes: a fake GitHub (REST API + tarball host, serving a ~40 MB repository tarball), the real service
(``accel-audit serve``: uvicorn + ``--workers`` in-process workers on the SQLite queue, or ``--worker-procs``
separate ``accel-audit worker`` processes sharing it; default pacing of 1 write/s per installation; every
audit runs in a limited child process), and this client, which sends ``--deliveries`` signed deliveries,
50 at a time, and measures the time to each answer. Of them, ``--prs`` are ``pull_request opened`` events of
distinct PRs (each a full audit of base and head) and ``--hostile`` more are PRs whose head holds 40 files of
1 MiB of ``x=1`` lines (the probe's memory bomb); the rest are deliveries a busy organisation also receives
(comments without a command, pushes, statuses), acknowledged and ignored. Then it waits for every audit's
check run to complete and reports the web process's peak RSS (VmHWM).

    .venv/bin/python benchmarks/webhook_bench.py [--deliveries 500] [--prs 24] [--hostile 1] [--worker-procs 2]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bot.signature import sign  # noqa: E402

SECRET = "benchmark-webhook-secret-0123456789"
APP_ID = 4242
BASE_SHA = "b" * 40


def head_sha(n: int) -> str:
    return f"c{n:039x}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def synthetic_repo(target_mb: int, head: bool) -> bytes:
    """A training repository: ~3 MB of Python/YAML/JSON sources plus model/data assets up to ``target_mb`` of archive."""
    rng = random.Random(7)
    buf = io.BytesIO()
    top = "octo-org-train-repo-" + ("c" if head else "b") * 7
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tf:
        def add(path: str, data: bytes) -> None:
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size, info.mtime = len(data), 1_700_000_000
            tf.addfile(info, io.BytesIO(data))

        save_steps = 1 if head else 500
        add("train.py", (
            "from transformers import Trainer, TrainingArguments\n"
            f"args = TrainingArguments(output_dir='out', bf16={not head}, save_steps={save_steps}, logging_steps=10,\n"
            "    dataloader_num_workers=8, gradient_checkpointing=True)\n"
        ).encode())
        for i in range(600):
            body = "\n".join(
                f"def f{i}_{j}(x, y={j}):\n    z = torch.matmul(x, x.T) * {rng.random():.6f}\n    return torch.nn.functional.gelu(z) + y\n"
                for j in range(25)
            )
            add(f"src/pkg{i % 40}/mod{i}.py", ("import torch\n\n" + body).encode())
        for i in range(300):
            add(f"configs/exp{i}.yaml", "\n".join(f"key_{k}: {rng.randint(0, 9999)}" for k in range(60)).encode())
        size = buf.tell()
        n = 0
        while buf.tell() < target_mb * 1_000_000 - 600_000:
            add(f"assets/shard{n}.bin", rng.randbytes(1 << 20))
            n += 1
            tf.fileobj.flush()  # type: ignore[union-attr]
        del size
    return buf.getvalue()


HOSTILE_FROM = 900  # PR numbers from here on carry the hostile head


def hostile_repo() -> bytes:
    """40 files of just under 1 MiB of ``x=1`` statements (the read cap is 1 MiB per file): 1.5 GB in one process."""
    buf = io.BytesIO()
    big = ("import torch\n" + "x=1\n" * ((1 << 18) - 8)).encode()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for i in range(40):
            info = tarfile.TarInfo(f"octo-org-train-repo-hhhhhhh/gen/mod{i}.py")
            info.size, info.mtime = len(big), 1_700_000_000
            tf.addfile(info, io.BytesIO(big))
    return buf.getvalue()


def run_fake(port: int, public_key: str, tarball_mb: int) -> None:
    from tests.bot.fakegh import FakeGitHub, FakeServer, git_diff

    fake = FakeGitHub(APP_ID, public_key.encode())
    fake.tarballs[BASE_SHA] = synthetic_repo(tarball_mb, head=False)
    head = synthetic_repo(tarball_mb, head=True)
    hostile = hostile_repo()
    for n in range(1, 1000):  # each PR has its own head commit (same content): one check run per PR
        fake.tarballs[head_sha(n)] = hostile if n >= HOSTILE_FROM else head
    diff = git_diff({"train.py": "bf16=True\n"}, {"train.py": "bf16=False\n"})
    repo = {"id": 1296269, "name": "train-repo", "full_name": "octo-org/train-repo", "owner": {"login": "octo-org"}, "default_branch": "main"}
    for n in range(1, 1000):
        fake.diffs[n] = diff
        fake.pulls[n] = {"number": n, "state": "open", "user": {"login": "dev"}, "head": {"sha": head_sha(n), "ref": f"b{n}", "repo": repo},
                         "base": {"sha": BASE_SHA, "ref": "main", "repo": repo}}
    server = FakeServer(fake)
    server.httpd.server_address = ("127.0.0.1", port)
    import http.server

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), server.httpd.RequestHandlerClass)
    httpd.daemon_threads = True
    fake.api_base = fake.codeload_base = f"http://127.0.0.1:{port}"
    print(json.dumps({"ready": True, "tarball_bytes": len(head)}), flush=True)
    httpd.serve_forever()


def payloads(n_prs: int, total: int, n_hostile: int = 0) -> list[tuple[str, dict]]:
    repo = {"id": 1296269, "name": "train-repo", "full_name": "octo-org/train-repo", "owner": {"login": "octo-org"}, "default_branch": "main"}
    inst = {"id": 42}
    out: list[tuple[str, dict]] = []
    for n in [*range(1, n_prs + 1), *range(HOSTILE_FROM, HOSTILE_FROM + n_hostile)]:
        pr = {"number": n, "state": "open", "updated_at": "2026-11-01T10:00:00Z", "user": {"login": "dev"},
              "head": {"sha": head_sha(n), "ref": f"b{n}", "repo": repo}, "base": {"sha": BASE_SHA, "ref": "main", "repo": repo}}
        out.append(("pull_request", {"action": "opened", "number": n, "pull_request": pr, "repository": repo, "installation": inst}))
    i = 0
    while len(out) < total:
        i += 1
        kind = i % 3
        if kind == 0:
            out.append(("issue_comment", {"action": "created", "issue": {"number": i}, "comment": {"id": i, "body": "LGTM", "user": {"login": "dev", "type": "User"}},
                                          "repository": repo, "installation": inst, "sender": {"type": "User"}}))
        elif kind == 1:
            out.append(("push", {"ref": "refs/heads/main", "after": head_sha(1), "repository": repo, "installation": inst}))
        else:
            out.append(("status", {"sha": head_sha(1), "state": "success", "repository": repo, "installation": inst}))
    rng = random.Random(1)
    rng.shuffle(out)
    return out


def build_requests(host: str, port: int, items: list[tuple[str, dict]]) -> list[tuple[str, bytes]]:
    """Every delivery as raw HTTP/1.1 bytes, signed, built before the clock starts (a wrk-like load generator)."""
    out = []
    for event, payload in items:
        body = json.dumps(payload).encode()
        head = (
            f"POST /api/github/webhooks HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: GitHub-Hookshot/bench\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nX-GitHub-Event: {event}\r\n"
            f"X-GitHub-Delivery: {uuid.uuid4()}\r\nX-Hub-Signature-256: {sign(SECRET, body)}\r\n\r\n"
        )
        out.append((event, head.encode() + body))
    return out


async def send_all(host: str, port: int, requests: list[tuple[str, bytes]], concurrency: int) -> list[tuple[str, float]]:
    """``concurrency`` keep-alive connections, each sending its next delivery as soon as the previous one is answered."""
    todo: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    for r in requests:
        todo.put_nowait(r)
    latencies: list[tuple[str, float]] = []

    async def connection() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while not todo.empty():
                event, req = todo.get_nowait()
                t0 = time.perf_counter()
                writer.write(req)
                await writer.drain()
                status = await reader.readline()
                length = 0
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                latencies.append((event, time.perf_counter() - t0))
                code = int(status.split()[1])
                assert code in (200, 202), status
        finally:
            writer.close()

    await asyncio.gather(*(connection() for _ in range(concurrency)))
    return latencies


METRICS_TOKEN = "benchmark-metrics-token-0123456789"


class RssWatch:
    """The peak resident set (VmHWM) of some processes, read from /proc until stopped."""

    def __init__(self, pids: list[int]) -> None:
        import threading

        self.pids = pids
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self) -> None:
        for pid in self.pids:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        self.peak_mb = max(self.peak_mb, int(line.split()[1]) / 1024)
            except OSError:
                pass

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self._read()

    def stop(self) -> None:
        self._read()
        self._stop.set()
        self._thread.join(2)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--deliveries", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--prs", type=int, default=24, help="pull_request deliveries among them (each a full audit)")
    ap.add_argument("--tarball-mb", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=1200)
    ap.add_argument("--workers", type=int, default=2, help="in-process workers of accel-audit serve (0: measure the ack path alone)")
    ap.add_argument("--worker-procs", type=int, default=0, help="separate `accel-audit worker` processes (serve then runs none)")
    ap.add_argument("--hostile", type=int, default=0, help="extra PRs whose head is 40 files of 1 MiB of statements")
    ap.add_argument("--fake-port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--public-key", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.fake_port:
        run_fake(args.fake_port, args.public_key, args.tarball_mb)
        return 0

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()).decode()
    pub = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    fake_port, app_port = free_port(), free_port()
    procs: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            fake = subprocess.Popen([sys.executable, __file__, "--fake-port", str(fake_port), "--public-key", pub, "--tarball-mb", str(args.tarball_mb)],
                                    stdout=subprocess.PIPE, text=True, cwd=ROOT)
            procs.append(fake)
            info = json.loads(fake.stdout.readline())
            env = dict(os.environ, ACCEL_APP_ID=str(APP_ID), ACCEL_PRIVATE_KEY=pem, ACCEL_WEBHOOK_SECRET=SECRET,
                       ACCEL_GITHUB_API_URL=f"http://127.0.0.1:{fake_port}", ACCEL_DATA_DIR=str(Path(tmp) / "data"),
                       ACCEL_METRICS_TOKEN=METRICS_TOKEN)
            env.pop("ACCEL_REDIS_URL", None)
            in_process = 0 if args.worker_procs else args.workers
            app = subprocess.Popen([sys.executable, "-m", "accel_audit.cli", "serve", "--host", "127.0.0.1", "--port", str(app_port),
                                    "--workers", str(in_process)],
                                   env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(Path(tmp) / "serve.log", "w"))
            procs.append(app)
            for i in range(args.worker_procs):
                procs.append(subprocess.Popen([sys.executable, "-m", "accel_audit.cli", "worker", "--workers", "1", "--metrics-port", "0"],
                                              env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(Path(tmp) / f"worker{i}.log", "w")))
            rss = RssWatch([app.pid])
            rss.start()
            base = f"http://127.0.0.1:{app_port}"
            for _ in range(300):
                try:
                    if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            requests = build_requests("127.0.0.1", app_port, payloads(args.prs, args.deliveries, args.hostile))
            n_audits = args.prs + args.hostile
            t_start = time.perf_counter()
            timed = asyncio.run(send_all("127.0.0.1", app_port, requests, args.concurrency))
            t_acked = time.perf_counter() - t_start
            lat = [x for _, x in timed]
            ms = [x * 1000 for x in lat]
            pr_ms = [x * 1000 for e, x in timed if e == "pull_request"]
            workers = f"{args.worker_procs} worker process(es)" if args.worker_procs else f"{args.workers} in-process worker(s)"
            print(f"tarball: {info['tarball_bytes'] / 1e6:.1f} MB per commit (base and head), {args.prs} PRs (+{args.hostile} hostile) among "
                  f"{len(lat)} deliveries, {args.concurrency} concurrent, {workers}")
            print(f"ack latency: p50 {statistics.median(ms):.1f} ms, p99 {pct(ms, 99):.1f} ms, max {max(ms):.1f} ms (target p99 < 50 ms); "
                  f"all acked in {t_acked:.2f} s; pull_request deliveries (journaled) p50 {statistics.median(pr_ms):.1f} ms, "
                  f"max {max(pr_ms):.1f} ms", flush=True)
            done = 0
            auditing = args.workers or args.worker_procs
            # while the audits run: one delivery at a time every 100 ms (no queueing in this client), each timed
            probe = build_requests("127.0.0.1", app_port, payloads(0, 3000))
            during: list[float] = []
            next_state = 0.0
            while auditing and time.perf_counter() - t_start < args.timeout:
                if time.perf_counter() >= next_state:
                    state = httpx.get(f"http://127.0.0.1:{fake_port}/_fake/state", timeout=5).json()
                    done = state["completed"]
                    if done >= n_audits:
                        break
                    next_state = time.perf_counter() + 0.5
                during.extend(x for _, x in asyncio.run(send_all("127.0.0.1", app_port, [probe[len(during) % len(probe)]], 1)))
                time.sleep(0.1)
            elapsed = time.perf_counter() - t_start
            conclusions = httpx.get(f"http://127.0.0.1:{fake_port}/_fake/state", timeout=5).json()["conclusions"]
            metrics = httpx.get(base + "/metrics", timeout=5, headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).text
            audit_sum = float(next(line.split()[-1] for line in metrics.splitlines() if line.startswith("accel_audit_duration_seconds_sum")))
            audit_n = float(next(line.split()[-1] for line in metrics.splitlines() if line.startswith("accel_audit_duration_seconds_count")))
            rss.stop()
        finally:
            for p in reversed(procs):
                p.terminate()
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
    if during:
        dm = [x * 1000 for x in during]
        print(f"ack latency while audits run (one at a time, every 100 ms): {len(dm)} deliveries, p50 {statistics.median(dm):.1f} ms, "
              f"p99 {pct(dm, 99):.1f} ms, max {max(dm):.1f} ms (target p99 < 50 ms)")
    print(f"web process (serve) peak RSS: {rss.peak_mb:.0f} MB (VmHWM)")
    if not (args.workers or args.worker_procs):
        return 0
    mean = f"; mean audit (base + head) {audit_sum / audit_n:.1f} s" if audit_n else ""
    print(f"audits: {done}/{n_audits} completed in {elapsed:.1f} s -> {done / elapsed * 60:.1f} PR audits per minute "
          f"({workers}, writes paced 1/s per installation){mean}; conclusions {conclusions}")
    return 0 if done >= n_audits else 1


if __name__ == "__main__":
    sys.exit(main())
