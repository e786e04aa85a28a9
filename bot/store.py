"""The durable journal behind the queue: deliveries seen, jobs with leases, the newest head of each PR.

Huey dequeues a message before running it, so a worker killed with ``kill -9`` would lose the job.
The journal is the source of truth instead:

* a webhook is accepted in one atomic step (the delivery ID is recorded and its jobs are written, state
  ``queued``); only then is the huey message sent and 202 returned. A redelivery of a recorded delivery
  does nothing.
* a worker *claims* a job before running it (``queued`` -> ``running`` with a lease it renews by heartbeat),
  and marks it ``done``/``failed``/``superseded`` at the end. A second job of the same pull request cannot be
  claimed while one runs (the per-PR lock).
* the recovery sweep re-queues jobs whose lease ran out (their worker died) and queued jobs whose huey
  message may never have been sent; a duplicate message is harmless because only one claim succeeds.

Two implementations with one contract: :class:`SqliteStore` (a file in ``ACCEL_DATA_DIR``) and
:class:`RedisStore` (atomic Lua scripts, shared by any number of workers).
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

DELIVERY_TTL = 8 * 86400  # GitHub lets a delivery be redelivered for 3 days (7 on GHES)
HEAD_TTL = 30 * 86400
MAX_ATTEMPTS = 5  # a job that kills its worker this many times stops being retried (transient retries don't count)
DIED_REPEATEDLY = "worker died repeatedly"  # queued once more with this error: the runner completes its check runs


@dataclass(slots=True)
class JobSpec:
    kind: str  # "pr_audit" | "command"
    payload: dict[str, Any]
    pr_key: str = ""  # the lock: one job of a pull request runs at a time
    head_sha: str = ""
    supersedable: bool = False  # dropped when a newer push of the PR has been seen
    id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(slots=True)
class Job:
    id: str
    kind: str
    payload: dict[str, Any]
    pr_key: str
    head_sha: str
    supersedable: bool
    state: str
    attempts: int  # every run: the first, transient retries and runs after a worker died
    delivery: str = ""
    error: str = ""  # the last failure's reason (DIED_REPEATEDLY: the recovery sweep gave up on its worker)
    deaths: int = 0  # runs whose worker died (its lease ran out): only these lead to DIED_REPEATEDLY


@dataclass(frozen=True, slots=True)
class PRHead:
    pr_key: str
    sha: str
    ts: float  # the event's time (``pull_request.updated_at``); an older event never moves the head back


class Claim:
    CLAIMED = "claimed"
    BUSY = "busy"  # another job of the same PR runs: try again shortly
    RUNNING = "running"  # this job runs elsewhere (a duplicate message)
    GONE = "gone"  # finished, superseded or unknown


class JobStore(Protocol):
    def ping(self) -> bool: ...
    def accept(self, delivery: str, event: str, specs: list[JobSpec], head: PRHead | None = None, now: float | None = None) -> list[str] | None: ...
    def seen(self, delivery: str) -> bool: ...
    def add_job(self, spec: JobSpec, now: float | None = None) -> str: ...
    def get(self, job_id: str) -> Job | None: ...
    def claim(self, job_id: str, owner: str, lease: float, now: float | None = None) -> tuple[str, Job | None]: ...
    def heartbeat(self, job_id: str, owner: str, lease: float, now: float | None = None) -> bool: ...
    def finish(self, job_id: str, owner: str, state: str, error: str = "", now: float | None = None) -> None: ...
    def release(self, job_id: str, owner: str, delay: float, error: str = "", now: float | None = None) -> int: ...
    def latest_head(self, pr_key: str) -> str | None: ...
    def set_head(self, head: PRHead) -> None: ...
    def recover(self, stale_queued: float, now: float | None = None) -> list[str]: ...
    def try_lock(self, name: str, owner: str, ttl: float, now: float | None = None) -> bool: ...
    def lock_owner(self, name: str, now: float | None = None) -> str | None: ...
    def unlock(self, name: str, owner: str) -> None: ...
    def note_redelivery(self, delivery: str) -> int: ...
    def active_count(self) -> int: ...
    def prune(self, now: float | None = None) -> None: ...
    def close(self) -> None: ...


def _now(now: float | None) -> float:
    return time.time() if now is None else now


# --------------------------------------------------------------------------- SQLite

_SCHEMA = """
create table if not exists deliveries (guid text primary key, event text not null, received_at real not null);
create table if not exists jobs (
    id text primary key, kind text not null, payload text not null, pr_key text not null default '',
    head_sha text not null default '', supersedable integer not null default 0, state text not null,
    attempts integer not null default 0, owner text not null default '', lease_until real not null default 0,
    not_before real not null default 0, created_at real not null, updated_at real not null,
    delivery text not null default '', error text not null default '', deaths integer not null default 0);
create index if not exists jobs_state on jobs (state);
create index if not exists jobs_pr on jobs (pr_key, state);
create table if not exists heads (pr_key text primary key, sha text not null, ts real not null, seen_at real not null);
create table if not exists redeliveries (guid text primary key, count integer not null, last_at real not null);
create table if not exists locks (name text primary key, owner text not null, until real not null);
"""

_FINAL = ("done", "failed", "superseded")


class _GroupCommit:
    """One writer thread commits the accepts that arrive together in one transaction.

    Each accept runs inside its own SAVEPOINT, so one failing accept does not undo the others. A caller
    returns only after the transaction holding its rows is committed.
    """

    def __init__(self, store: SqliteStore, max_batch: int = 256) -> None:
        self.store = store
        self.max_batch = max_batch
        self._q: queue.SimpleQueue[tuple[Callable[[sqlite3.Connection], Any], Future[Any]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="journal-writer", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[sqlite3.Connection], Any]) -> Future[Any]:
        fut: Future[Any] = Future()
        self._q.put((fn, fut))
        return fut

    def close(self) -> None:
        self._q.put(None)
        self._thread.join(5)

    def _run(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < self.max_batch:
                try:
                    nxt = self._q.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._q.put(None)
                    break
                batch.append(nxt)
            results: list[tuple[Future[Any], Any, BaseException | None]] = []
            try:
                with self.store._tx() as c:
                    for i, (fn, fut) in enumerate(batch):
                        c.execute(f"savepoint a{i}")
                        try:
                            results.append((fut, fn(c), None))
                            c.execute(f"release a{i}")
                        except BaseException as exc:
                            c.execute(f"rollback to a{i}")
                            c.execute(f"release a{i}")
                            results.append((fut, None, exc))
            except BaseException as exc:  # the commit itself failed: nobody's rows are on disk
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for fut, value, err in results:
                if err is not None:
                    fut.set_exception(err)
                else:
                    fut.set_result(value)


class SqliteStore:
    """The journal in one SQLite file (WAL): a 202 means the job is committed and survives a killed process."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        conn = self._conn()
        conn.executescript(_SCHEMA)
        if "deaths" not in {r[1] for r in conn.execute("pragma table_info(jobs)")}:  # a journal from before the counter
            conn.execute("alter table jobs add column deaths integer not null default 0")
        self._writer: _GroupCommit | None = None
        self._writer_lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("pragma journal_mode=wal")
            # WAL + NORMAL: a commit survives a killed process (kill -9); only an OS crash or power cut can lose the
            # last commits, the same guarantee as Redis with appendfsync everysec. No fsync on the ack path.
            conn.execute("pragma synchronous=normal")
            conn.execute("pragma busy_timeout=30000")
            self._local.conn = conn
        return conn

    class _Tx:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def __enter__(self) -> sqlite3.Connection:
            self.conn.execute("begin immediate")
            return self.conn

        def __exit__(self, exc_type, exc, tb) -> None:
            self.conn.execute("commit" if exc_type is None else "rollback")

    def _tx(self) -> SqliteStore._Tx:
        return SqliteStore._Tx(self._conn())

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def ping(self) -> bool:
        try:
            self._conn().execute("select 1").fetchone()
            return True
        except sqlite3.Error:
            return False

    @staticmethod
    def _insert_job(c: sqlite3.Connection, spec: JobSpec, now: float, delivery: str = "") -> None:
        c.execute(
            "insert into jobs (id, kind, payload, pr_key, head_sha, supersedable, state, created_at, updated_at, delivery)"
            " values (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?)",
            (spec.id, spec.kind, json.dumps(spec.payload), spec.pr_key, spec.head_sha, int(spec.supersedable), now, now, delivery),
        )

    @staticmethod
    def _set_head(c: sqlite3.Connection, head: PRHead, now: float) -> None:
        c.execute(
            "insert into heads (pr_key, sha, ts, seen_at) values (?, ?, ?, ?)"
            " on conflict(pr_key) do update set sha=excluded.sha, ts=excluded.ts, seen_at=excluded.seen_at where excluded.ts >= heads.ts",
            (head.pr_key, head.sha, head.ts, now),
        )

    def accept_future(
        self, delivery: str, event: str, specs: list[JobSpec], head: PRHead | None = None, now: float | None = None
    ) -> Future[list[str] | None]:
        """:meth:`accept` without blocking: the future resolves once the rows are committed."""
        now = _now(now)

        def write(c: sqlite3.Connection) -> list[str] | None:
            cur = c.execute("insert or ignore into deliveries (guid, event, received_at) values (?, ?, ?)", (delivery, event, now))
            if cur.rowcount == 0:
                return None
            if head is not None:
                self._set_head(c, head, now)
            for spec in specs:
                self._insert_job(c, spec, now, delivery)
            return [s.id for s in specs]

        with self._writer_lock:
            if self._writer is None:
                self._writer = _GroupCommit(self)
        return self._writer.submit(write)

    def accept(self, delivery: str, event: str, specs: list[JobSpec], head: PRHead | None = None, now: float | None = None) -> list[str] | None:
        return self.accept_future(delivery, event, specs, head, now).result()

    def seen(self, delivery: str) -> bool:
        return self._conn().execute("select 1 from deliveries where guid=?", (delivery,)).fetchone() is not None

    def add_job(self, spec: JobSpec, now: float | None = None) -> str:
        with self._tx() as c:
            self._insert_job(c, spec, _now(now))
        return spec.id

    @staticmethod
    def _row_job(row: tuple) -> Job:
        return Job(row[0], row[1], json.loads(row[2]), row[3], row[4], bool(row[5]), row[6], row[7], row[8], row[9], row[10])

    _COLS = "id, kind, payload, pr_key, head_sha, supersedable, state, attempts, delivery, error, deaths"

    def get(self, job_id: str) -> Job | None:
        row = self._conn().execute(f"select {self._COLS} from jobs where id=?", (job_id,)).fetchone()
        return self._row_job(row) if row else None

    def claim(self, job_id: str, owner: str, lease: float, now: float | None = None) -> tuple[str, Job | None]:
        now = _now(now)
        with self._tx() as c:
            row = c.execute(f"select {self._COLS}, lease_until from jobs where id=?", (job_id,)).fetchone()
            if row is None:
                return Claim.GONE, None
            job = self._row_job(row)
            if job.state == "running" and row[-1] > now:
                return Claim.RUNNING, job
            if job.state not in ("queued", "running"):
                return Claim.GONE, job
            if job.pr_key:
                other = c.execute(
                    "select 1 from jobs where pr_key=? and state='running' and lease_until>? and id<>?", (job.pr_key, now, job_id)
                ).fetchone()
                if other:
                    return Claim.BUSY, job
            bump = 1 if job.state == "running" else 0  # taken over from a worker that died
            c.execute(
                "update jobs set state='running', owner=?, lease_until=?, attempts=attempts+?, deaths=deaths+?, updated_at=? where id=?",
                (owner, now + lease, bump, bump, now, job_id),
            )
            job.state, job.attempts, job.deaths = "running", job.attempts + bump, job.deaths + bump
            return Claim.CLAIMED, job

    def heartbeat(self, job_id: str, owner: str, lease: float, now: float | None = None) -> bool:
        now = _now(now)
        with self._tx() as c:
            cur = c.execute("update jobs set lease_until=? where id=? and owner=? and state='running'", (now + lease, job_id, owner))
            return cur.rowcount == 1

    def finish(self, job_id: str, owner: str, state: str, error: str = "", now: float | None = None) -> None:
        assert state in _FINAL
        with self._tx() as c:
            c.execute(
                "update jobs set state=?, error=?, updated_at=?, lease_until=0 where id=? and (owner=? or state='queued')",
                (state, error[:2000], _now(now), job_id, owner),
            )

    def release(self, job_id: str, owner: str, delay: float, error: str = "", now: float | None = None) -> int:
        now = _now(now)
        with self._tx() as c:
            c.execute(
                "update jobs set state='queued', owner='', lease_until=0, attempts=attempts+1, not_before=?, updated_at=?, error=?"
                " where id=? and owner=? and state='running'",
                (now + delay, now, error[:2000], job_id, owner),
            )
            row = c.execute("select attempts from jobs where id=?", (job_id,)).fetchone()
        return int(row[0]) if row else 0

    def latest_head(self, pr_key: str) -> str | None:
        row = self._conn().execute("select sha from heads where pr_key=?", (pr_key,)).fetchone()
        return row[0] if row else None

    def set_head(self, head: PRHead) -> None:
        with self._tx() as c:
            self._set_head(c, head, time.time())

    def recover(self, stale_queued: float, now: float | None = None) -> list[str]:
        now = _now(now)
        with self._tx() as c:
            dead = [r[0] for r in c.execute("select id from jobs where state='running' and lease_until<=?", (now,))]
            for jid in dead:
                c.execute(
                    "update jobs set state='queued', attempts=attempts+1, deaths=deaths+1, owner='',"
                    " lease_until=0, updated_at=?, error=case when deaths+1>=? then ? else error end where id=?",
                    (now, MAX_ATTEMPTS, DIED_REPEATEDLY, jid),
                )
            marks = ",".join("?" * len(dead))
            revived = [r[0] for r in c.execute(f"select id from jobs where id in ({marks}) and state='queued'", dead)] if dead else []
            stale = [
                r[0]
                for r in c.execute("select id from jobs where state='queued' and not_before<=? and updated_at<=?", (now, now - stale_queued))
                if r[0] not in revived
            ]
            for jid in stale:
                c.execute("update jobs set updated_at=? where id=?", (now, jid))
        return revived + stale

    def try_lock(self, name: str, owner: str, ttl: float, now: float | None = None) -> bool:
        now = _now(now)
        with self._tx() as c:
            row = c.execute("select owner, until from locks where name=?", (name,)).fetchone()
            if row and row[1] > now and row[0] != owner:
                return False
            c.execute("insert or replace into locks (name, owner, until) values (?, ?, ?)", (name, owner, now + ttl))
            return True

    def lock_owner(self, name: str, now: float | None = None) -> str | None:
        row = self._conn().execute("select owner from locks where name=? and until>?", (name, _now(now))).fetchone()
        return row[0] if row else None

    def unlock(self, name: str, owner: str) -> None:
        with self._tx() as c:
            c.execute("delete from locks where name=? and owner=?", (name, owner))

    def note_redelivery(self, delivery: str) -> int:
        now = time.time()
        with self._tx() as c:
            c.execute(
                "insert into redeliveries (guid, count, last_at) values (?, 1, ?) on conflict(guid) do update set count=count+1, last_at=excluded.last_at",
                (delivery, now),
            )
            return int(c.execute("select count from redeliveries where guid=?", (delivery,)).fetchone()[0])

    def active_count(self) -> int:
        return int(self._conn().execute("select count(*) from jobs where state in ('queued', 'running')").fetchone()[0])

    def prune(self, now: float | None = None) -> None:
        now = _now(now)
        with self._tx() as c:
            c.execute("delete from deliveries where received_at<?", (now - DELIVERY_TTL,))
            c.execute("delete from redeliveries where last_at<?", (now - DELIVERY_TTL,))
            c.execute("delete from jobs where state in ('done', 'failed', 'superseded') and updated_at<?", (now - DELIVERY_TTL,))
            c.execute("delete from heads where seen_at<?", (now - HEAD_TTL,))
            c.execute("delete from locks where until<?", (now,))


# --------------------------------------------------------------------------- Redis

_ACCEPT = """
local p = ARGV[1]
if not redis.call('SET', p..'delivery:'..ARGV[2], ARGV[3], 'NX', 'EX', ARGV[4]) then return false end
local now = tonumber(ARGV[5])
if ARGV[6] ~= '' then
  local hk = p..'head:'..ARGV[6]
  local cur = redis.call('HGET', hk, 'ts')
  if (not cur) or tonumber(cur) <= tonumber(ARGV[8]) then
    redis.call('HSET', hk, 'sha', ARGV[7], 'ts', ARGV[8])
  end
  redis.call('EXPIRE', hk, ARGV[10])
end
local specs = cjson.decode(ARGV[9])
for _, j in ipairs(specs) do
  local jk = p..'job:'..j.id
  redis.call('HSET', jk, 'kind', j.kind, 'payload', j.payload, 'pr_key', j.pr_key, 'head_sha', j.head_sha,
    'supersedable', j.supersedable, 'state', 'queued', 'attempts', 0, 'lease_until', 0, 'owner', '',
    'not_before', 0, 'updated_at', now, 'created_at', now, 'delivery', ARGV[2], 'error', '')
  redis.call('ZADD', p..'active', now, j.id)
end
return 1
"""

_CLAIM = """
local p, id, owner = ARGV[1], ARGV[2], ARGV[3]
local now, lease = tonumber(ARGV[4]), tonumber(ARGV[5])
local jk = p..'job:'..id
local st = redis.call('HGET', jk, 'state')
if not st then return 'gone' end
local bump = 0
if st == 'running' then
  if tonumber(redis.call('HGET', jk, 'lease_until')) > now then return 'running' end
  bump = 1
elseif st ~= 'queued' then
  return 'gone'
end
local prk = redis.call('HGET', jk, 'pr_key')
if prk ~= '' then
  local lk = p..'prlock:'..prk
  local holder = redis.call('GET', lk)
  if holder and holder ~= id then return 'busy' end
  redis.call('SET', lk, id, 'PX', math.ceil(lease * 1000))
end
redis.call('HSET', jk, 'state', 'running', 'owner', owner, 'lease_until', now + lease, 'updated_at', now)
redis.call('HINCRBY', jk, 'attempts', bump)
redis.call('HINCRBY', jk, 'deaths', bump)
return 'claimed'
"""

_HEARTBEAT = """
local p, id, owner = ARGV[1], ARGV[2], ARGV[3]
local now, lease = tonumber(ARGV[4]), tonumber(ARGV[5])
local jk = p..'job:'..id
if redis.call('HGET', jk, 'state') ~= 'running' or redis.call('HGET', jk, 'owner') ~= owner then return 0 end
redis.call('HSET', jk, 'lease_until', now + lease)
local prk = redis.call('HGET', jk, 'pr_key')
if prk ~= '' then redis.call('SET', p..'prlock:'..prk, id, 'PX', math.ceil(lease * 1000)) end
return 1
"""

_FINISH = """
local p, id, owner, state, err, now, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local jk = p..'job:'..id
local st = redis.call('HGET', jk, 'state')
if not st then return 0 end
if not (redis.call('HGET', jk, 'owner') == owner or st == 'queued') then return 0 end
redis.call('HSET', jk, 'state', state, 'error', err, 'updated_at', now, 'lease_until', 0)
redis.call('ZREM', p..'active', id)
redis.call('EXPIRE', jk, ttl)
local prk = redis.call('HGET', jk, 'pr_key')
if prk ~= '' and redis.call('GET', p..'prlock:'..prk) == id then redis.call('DEL', p..'prlock:'..prk) end
return 1
"""

_RELEASE = """
local p, id, owner = ARGV[1], ARGV[2], ARGV[3]
local now, delay, err = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local jk = p..'job:'..id
if redis.call('HGET', jk, 'state') ~= 'running' or redis.call('HGET', jk, 'owner') ~= owner then
  return tonumber(redis.call('HGET', jk, 'attempts') or 0)
end
redis.call('HSET', jk, 'state', 'queued', 'owner', '', 'lease_until', 0, 'not_before', now + delay, 'updated_at', now, 'error', err)
local n = redis.call('HINCRBY', jk, 'attempts', 1)
local prk = redis.call('HGET', jk, 'pr_key')
if prk ~= '' and redis.call('GET', p..'prlock:'..prk) == id then redis.call('DEL', p..'prlock:'..prk) end
return n
"""

_RECOVER = """
local p = ARGV[1]
local now, stale, maxa, ttl = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local out = {}
for _, id in ipairs(redis.call('ZRANGE', p..'active', 0, 999)) do
  local jk = p..'job:'..id
  local st = redis.call('HGET', jk, 'state')
  if not st then
    redis.call('ZREM', p..'active', id)
  elseif st == 'running' and tonumber(redis.call('HGET', jk, 'lease_until')) <= now then
    redis.call('HINCRBY', jk, 'attempts', 1)
    local n = redis.call('HINCRBY', jk, 'deaths', 1)
    if n >= maxa then
      redis.call('HSET', jk, 'error', 'worker died repeatedly')
    end
    redis.call('HSET', jk, 'state', 'queued', 'owner', '', 'lease_until', 0, 'updated_at', now)
    table.insert(out, id)
  elseif st == 'queued' and tonumber(redis.call('HGET', jk, 'not_before')) <= now
         and tonumber(redis.call('HGET', jk, 'updated_at')) <= now - stale then
    redis.call('HSET', jk, 'updated_at', now)
    table.insert(out, id)
  end
end
return out
"""


_UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisStore:
    """The journal in Redis; every state change is one Lua script (atomic across workers)."""

    def __init__(self, url: str, prefix: str = "accel:") -> None:
        import redis

        self.redis = redis.Redis.from_url(url, decode_responses=True, health_check_interval=30)
        self.prefix = prefix
        self._accept = self.redis.register_script(_ACCEPT)
        self._claim = self.redis.register_script(_CLAIM)
        self._heartbeat = self.redis.register_script(_HEARTBEAT)
        self._finish = self.redis.register_script(_FINISH)
        self._release = self.redis.register_script(_RELEASE)
        self._recover = self.redis.register_script(_RECOVER)
        self._unlock = self.redis.register_script(_UNLOCK)

    def close(self) -> None:
        self.redis.close()

    def ping(self) -> bool:
        try:
            return bool(self.redis.ping())
        except Exception:
            return False

    @staticmethod
    def _spec_json(spec: JobSpec) -> dict[str, str]:
        return {
            "id": spec.id, "kind": spec.kind, "payload": json.dumps(spec.payload), "pr_key": spec.pr_key,
            "head_sha": spec.head_sha, "supersedable": "1" if spec.supersedable else "0",
        }

    def accept(self, delivery: str, event: str, specs: list[JobSpec], head: PRHead | None = None, now: float | None = None) -> list[str] | None:
        args = [
            self.prefix, delivery, event, DELIVERY_TTL, repr(_now(now)),
            head.pr_key if head else "", head.sha if head else "", repr(head.ts) if head else "0",
            json.dumps([self._spec_json(s) for s in specs]), HEAD_TTL,
        ]
        ok = self._accept(args=args)
        return [s.id for s in specs] if ok else None

    def seen(self, delivery: str) -> bool:
        return bool(self.redis.exists(f"{self.prefix}delivery:{delivery}"))

    def add_job(self, spec: JobSpec, now: float | None = None) -> str:
        now = _now(now)
        d = self._spec_json(spec)
        jk = f"{self.prefix}job:{spec.id}"
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(jk, mapping={
                "kind": d["kind"], "payload": d["payload"], "pr_key": d["pr_key"], "head_sha": d["head_sha"],
                "supersedable": d["supersedable"], "state": "queued", "attempts": 0, "lease_until": 0, "owner": "",
                "not_before": 0, "updated_at": now, "created_at": now, "delivery": "", "error": "",
            })
            pipe.zadd(f"{self.prefix}active", {spec.id: now})
            pipe.execute()
        return spec.id

    def get(self, job_id: str) -> Job | None:
        h = self.redis.hgetall(f"{self.prefix}job:{job_id}")
        if not h:
            return None
        return Job(
            job_id, h["kind"], json.loads(h["payload"]), h.get("pr_key", ""), h.get("head_sha", ""), h.get("supersedable") == "1",
            h["state"], int(h.get("attempts", 0)), h.get("delivery", ""), h.get("error", ""), int(h.get("deaths", 0)),
        )

    def claim(self, job_id: str, owner: str, lease: float, now: float | None = None) -> tuple[str, Job | None]:
        status = self._claim(args=[self.prefix, job_id, owner, repr(_now(now)), repr(lease)])
        return status, self.get(job_id)

    def heartbeat(self, job_id: str, owner: str, lease: float, now: float | None = None) -> bool:
        return bool(self._heartbeat(args=[self.prefix, job_id, owner, repr(_now(now)), repr(lease)]))

    def finish(self, job_id: str, owner: str, state: str, error: str = "", now: float | None = None) -> None:
        assert state in _FINAL
        self._finish(args=[self.prefix, job_id, owner, state, error[:2000], repr(_now(now)), DELIVERY_TTL])

    def release(self, job_id: str, owner: str, delay: float, error: str = "", now: float | None = None) -> int:
        return int(self._release(args=[self.prefix, job_id, owner, repr(_now(now)), repr(delay), error[:2000]]))

    def latest_head(self, pr_key: str) -> str | None:
        return self.redis.hget(f"{self.prefix}head:{pr_key}", "sha")

    def set_head(self, head: PRHead) -> None:
        # compare-and-set through the accept script's logic would need a delivery; a tiny script does it
        script = (
            "local cur = redis.call('HGET', KEYS[1], 'ts') "
            "if (not cur) or tonumber(cur) <= tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], 'sha', ARGV[1], 'ts', ARGV[2]) end "
            "redis.call('EXPIRE', KEYS[1], ARGV[3]) return 1"
        )
        self.redis.eval(script, 1, f"{self.prefix}head:{head.pr_key}", head.sha, repr(head.ts), HEAD_TTL)

    def recover(self, stale_queued: float, now: float | None = None) -> list[str]:
        return list(self._recover(args=[self.prefix, repr(_now(now)), repr(stale_queued), MAX_ATTEMPTS, DELIVERY_TTL]))

    def try_lock(self, name: str, owner: str, ttl: float, now: float | None = None) -> bool:
        key = f"{self.prefix}lock:{name}"
        ms = max(1, int(ttl * 1000))  # Redis refuses a zero expiry; a zero-length window (debounce off) still expires at once
        if self.redis.set(key, owner, nx=True, px=ms):
            return True
        if self.redis.get(key) == owner:
            self.redis.pexpire(key, ms)
            return True
        return False

    def lock_owner(self, name: str, now: float | None = None) -> str | None:
        value = self.redis.get(f"{self.prefix}lock:{name}")
        return value.decode() if isinstance(value, bytes) else value

    def unlock(self, name: str, owner: str) -> None:
        self._unlock(keys=[f"{self.prefix}lock:{name}"], args=[owner])

    def note_redelivery(self, delivery: str) -> int:
        key = f"{self.prefix}redeliver:{delivery}"
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, DELIVERY_TTL)
            n, _ = pipe.execute()
        return int(n)

    def active_count(self) -> int:
        return int(self.redis.zcard(f"{self.prefix}active"))

    def prune(self, now: float | None = None) -> None:
        # deliveries, finished jobs and heads expire by TTL
        return None


def open_store(data_dir: Path, redis_url: str | None) -> JobStore:
    return RedisStore(redis_url) if redis_url else SqliteStore(Path(data_dir) / "state.sqlite3")
