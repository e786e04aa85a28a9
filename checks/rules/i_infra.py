"""I. Infrastructure and operations (基础设施与运维): I1-I5.

I1/I2 read the training-data locations the repository states (data-path config keys, launcher
flags, ``DATA_*`` shell variables, ``load_dataset`` arguments, path literals on data-loading lines).
What cannot be known statically is said in ``detail``: with no visible data location both are
``unused`` with no recommendation (never a made-up ``used``). I1 is ``used`` when the data sit on a
path of the compute node (relative path, local or mounted file system, the HF cache) and
``unused`` when training reads straight from a storage service by URI (``s3://``, ``oss://``,
``gs://``, ``hdfs://``, ``cfs://``...) or streams from the Hub, whose location relative to the GPUs
is not pinned. I2 is ``used`` for named fast media (``/dev/shm``, NVMe/SSD paths, ``/raid``,
Lustre/GPFS/FSx/Weka/Ceph), ``unused`` with a finding for slow ones (HDFS, CFS, MDFS, NFS, object
stores, Hub streaming), and ``unused`` without a recommendation when no path names its medium.

I3-I5: ``used`` means the frequency is sane, including when nothing saves/logs/reports too
often. Too frequent (``unused``, with the line in ``findings``):
* I3 checkpoint every < 50 steps (< 10 when only adapters are saved or the model is < 1B),
* I4 logging every < 10 steps (the seed's "logging_steps >= 10"),
* I5 reporting to an external tracker (W&B, TensorBoard, MLflow...) every < 10 steps,
including a ``torch.save``/``print``/``wandb.log`` in the training-step loop with no interval guard.
HF defaults (``save_steps``/``logging_steps`` 500), ``*_strategy: epoch`` and HF ratios (< 1) are sane.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..base import Check, Context, register
from ..facts import Call, Expr, Facts, Setting, as_number, register_vote_bands, truthy
from ..facts.store import MAIN_GUARD
from ..facts.types import PathLiteral
from ..lazyre import lazy_compile
from ..model import Bottleneck, Evidence, Example, FixSafety, Outcome, Priority, Status
from ..project import checkpoint_tool_file
from ._helpers import (
    HF_DEFAULTS,
    HF_STEP_HOOKS,
    _module_names,
    callers_off,
    class_at,
    class_span_at,
    deepspeed_alternative_files,
    empty_section_gate,
    guard_off,
    hf_sites_training_first,
    hf_trainer_subclasses,
    parse_expr,
    resolve_file,
    runs_file,
    section_flag_off,
    uses_hf_trainer,
)
from .a_parallelism import is_lightning, torchx_runner

U, P, N = Status.USED, Status.PARTIAL, Status.UNUSED
#: I3-I5 found no interval setting and no call in a training-step loop: the frequency cannot be judged, so the status is
#: ``n/a`` (it leaves the score and its maximum, like any check that cannot apply) with this detail, never a claimed "sane"
NOT_JUDGED = "not judged: "

_TEST_PATH = lazy_compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_test\.py$|(^|/)debug[^/]*$", re.I)

# --------------------------------------------------------------------------------------------
# I1 / I2: data locations
# --------------------------------------------------------------------------------------------

_DATA_KEYS = (
    "data_path", "data_paths", "train_data", "train_data_path", "train_data_paths", "train_file", "train_files", "train_path",
    "data_dir", "data_root", "dataset_dir", "dataset_path", "dataset_root", "data_files", "train_data_dir", "image_folder",
    "image_root", "video_folder", "data_prefix", "train_data_file", "tokenized_path", "train_dataset_path", "train_data_prefix",
    "data_cache_path", "train_shards", "train_urls", "data_folder", "corpus_path", "dataset_name_or_path", "hf_dataset_or_datasets",
    "train_split_path", "dataset_name",
    # MMDetection-style dataset entries (Osprey ``configs/stage2.json``: ``"ann_file": "./data/...", "img_prefix": "./data/coco/imgs"``)
    # and LAVIS-style image roots (``vis_root``)
    "ann_file", "img_prefix", "vis_root", "ann_root",
)
_HUB_KEYS = {"dataset_name", "hf_dataset_or_datasets", "dataset_name_or_path"}
#: the location keys of a dataset entry in a list of them (:data:`_DATA_KEYS`' MMDetection and LAVIS spellings)
_ENTRY_KEYS = ("ann_file", "img_prefix", "vis_root", "ann_root", "data_path", "image_folder")
_OBJECT_SCHEMES = {"s3", "s3a", "s3n", "oss", "gs", "gcs", "obs", "cos", "tos", "az", "abfs", "abfss", "wasb", "wasbs", "azureml", "r2", "ks3", "bos", "minio"}
_BUILDERS = {"json", "csv", "parquet", "text", "arrow", "imagefolder", "audiofolder", "webdataset", "pandas", "sql", "generator", "videofolder"}
_PLACEHOLDER = lazy_compile(r"path/to|your[_\s-]|^\|.*\|$|<|\{|\$|xxx|/path\b|\.\.\.|^none$|^null$", re.I)
_DATA_LINE = lazy_compile(r"data|corpus|shard|jsonl|parquet|\.tar\b|webdataset|wds\.|memmap|mmap|train_file|load_from_disk", re.I)
_NOT_DATA_LINE = lazy_compile(r"output|save|ckpt|checkpoint|log_dir|logging|tensorboard|wandb|model_name|model_path|tokenizer|pretrained", re.I)
_STAGING_LINE = lazy_compile(r"download|upload|sync|\bcp\b|copy|rsync|snapshot", re.I)
_DATA_ENV = lazy_compile(r"^(TRAIN_)?DATA(SET)?(_(PATH|DIR|ROOT|PREFIX|FILE|HOME))?S?$|^HF_DATASETS_CACHE$|^(TRAIN|DATA)_(PATH|DIR|FILES?)$")
_HUB_ID = lazy_compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_LOADERS = ("load_dataset", "load_from_disk", "StreamingDataset", "WebDataset")
# a dataset class or reader called with a data file: ``LineDataset("data/train.jsonl")``, ``pd.read_parquet(...)``
_DATA_DIR_HEAD = lazy_compile(r"^(\./)?data(sets?)?/?$", re.I)
#: the joined path names where data is read: bound to a data-named variable, or read on that very line
_DATA_DIR_LINE = lazy_compile(r"^\s*\w*data\w*\s*=|memmap|open\(|load", re.I)
_DATA_CALL = lazy_compile(r"dataset|load|open|read|memmap|from_file|from_json|from_parquet|from_csv", re.I)
_NOT_READ_CALL = lazy_compile(r"download|upload|save|dump|write|tokenizer|pretrained|checkpoint|state_dict|model|config", re.I)
_DATA_FILE = lazy_compile(r"\.(jsonl|json|parquet|csv|tsv|arrow|txt|bin|npy|npz|tar|tfrecord|mds)(\.gz|\.zst)?$", re.I)
_NOT_DATA_FILE = lazy_compile(r"(^|/)(config|tokenizer|tokenizer_config|vocab|special_tokens_map|generation_config|dataset_info|meta|"
                            r"merges|added_tokens|requirements|README|LICENSE)\.\w+$|^\w+$", re.I)

FAST = {"ramdisk", "local-ssd", "parallel-fs"}
#: storage a path names as the compute cluster's own (node RAM/SSD, the cluster's parallel or mounted network file system),
#: or a Hub dataset downloaded into the node's cache before training (a storage service read by URI is caught before)
_ON_CLUSTER = FAST | {"hf-hub", "nfs", "cfs", "mdfs", "hdfs"}  # a network file system mounted on the node (``/mnt/cfs``) is in its VPC
SLOW = {"object-store", "hdfs", "cfs", "mdfs", "nfs", "http", "remote-other", "hub-stream"}
REMOTE_URI = {"object-store", "hdfs", "cfs", "mdfs", "http", "remote-other", "hub-stream"}


def storage_of(path: str) -> str:
    """Storage kind a data location names: object-store, hdfs, cfs, mdfs, nfs, ramdisk, local-ssd, parallel-fs, local."""
    low = path.strip().lower()
    if low.startswith("pipe:"):
        m = re.search(r"\b([a-z][a-z0-9]*)://", low)
        return storage_of(m.group(0) + "x") if m else "local"
    m = re.match(r"^([a-z][a-z0-9+]*)://", low)
    if m:
        scheme = m.group(1)
        if scheme in _OBJECT_SCHEMES:
            return "object-store"
        if scheme in {"hdfs", "viewfs", "afs", "har"}:
            return "hdfs"
        if scheme in {"cfs", "mdfs"}:
            return scheme
        if scheme == "file":
            return storage_of(low[len("file://"):])
        if scheme in {"http", "https", "hf", "ftp"}:
            return "http"
        return "remote-other"
    comps = [c for c in low.split("/") if c]
    if low.startswith("/dev/shm") or any(c in {"shm", "ramdisk", "tmpfs"} for c in comps):
        return "ramdisk"

    def has(*keys: str) -> bool:
        return any(c == k or c.startswith(k) or c.endswith(("_" + k, "-" + k)) for c in comps for k in keys)

    if has("nvme", "ssd", "localssd", "local_ssd", "local-ssd") or low.startswith("/raid"):
        return "local-ssd"
    if has("lustre", "gpfs", "fsx", "weka", "wekafs", "beegfs", "ceph", "cephfs", "vast", "scratch"):
        return "parallel-fs"
    if has("hdfs"):
        return "hdfs"
    if has("mdfs"):
        return "mdfs"
    if has("cfs"):
        return "cfs"
    if has("nfs", "nas"):
        return "nfs"
    return "local"


@dataclass(frozen=True, slots=True)
class DataLoc:
    value: str
    kind: str
    fact: Any
    key: str

    @property
    def remote(self) -> bool:
        """Read from a storage service by URI (or streamed from the Hub), not from a path on the node."""
        return self.kind == "hub-stream" or (self.kind in REMOTE_URI and bool(re.match(r"^([a-z][a-z0-9+]*://|pipe:)", self.value.lower())))


#: a placeholder phrase in brackets, one value to fill in (OpenCoder ``DATA_PATH=" |your data path| "``), never a list of paths
_BRACKETED = lazy_compile(r"^(?:\|[^|]*\||<[^<>]*>|\[[^\[\]]*\s[^\[\]]*\])$")


def _split_values(v: Any) -> list[str]:
    if isinstance(v, str) and _BRACKETED.match(v.strip()):
        return []
    if isinstance(v, str):
        # Megatron ``--data-path 0.5 /a 0.5 /b`` and comma lists
        parts = [p for p in re.split(r"[\s,]+", v.strip()) if p]
        return [p for p in parts if as_number(p) is None] or ([v] if v.strip() else [])
    if isinstance(v, tuple):
        return [x for x in v if isinstance(x, str)]
    return []


#: InternVL's shape: the dataset reads either a local path or an ``s3://`` one (a scheme test), and its S3 helper module
#: reads one image under ``if __name__ == '__main__':`` as a smoke test
_S3_HELPER = {
    "train/finetune.py": (
        "import argparse\nimport os\n\nfrom utils.s3_fileio import S3Backend\n\n\n"
        "class LazySupervisedDataset:\n    def __init__(self, root, rows):\n        self.root, self.rows = root, rows\n\n"
        "    def __getitem__(self, i):\n        data_item = self.rows[i]\n        if data_item['image'].startswith('s3://'):\n"
        "            return S3Backend().get(self.root + data_item['image'])\n"
        "        return open(os.path.join(self.root, data_item['image']), 'rb').read()\n\n\n"
        "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n    parser.add_argument('--data_path', type=str, default=None)\n"
        "    args = parser.parse_args()\n    model = build_model()\n    for batch in loader:\n        model(batch).loss.backward()\n"),
    "utils/s3_fileio.py": (
        "import boto3\n\n\nclass S3Backend:\n    def __init__(self, end_point_url=None):\n"
        "        self.client = boto3.client('s3', endpoint_url=end_point_url)\n\n"
        "    def get(self, filepath):\n        bucket, key = filepath[5:].split('/', 1)\n"
        "        return self.client.get_object(Bucket=bucket, Key=key)['Body'].read()\n\n\n"
        "if __name__ == '__main__':\n    s3backend = S3Backend(end_point_url='http://ceph.example.org:8060')\n"
        "    filepath = 's3://mllm/datasets/ai2d/images/4109.png'\n    data = s3backend.get(filepath)\n    print(data[:100])\n"),
}

#: a URI scheme with nothing after it (``"s3://"``, ``"hdfs://"``)
_BARE_SCHEME = lazy_compile(r"^[a-zA-Z][a-zA-Z0-9+]*://$")
#: a regular expression, not a path (ms-swift's ``re.search('/datasets--.+?--(.+?)/snapshots/', dataset_id)``)
_REGEX_TOKENS = lazy_compile(r"\.[+*]\??|\(\?|\\[dwsSb.]|\[\^")
#: the address of a socket, message queue or RPC endpoint (ms-swift's weight sync ``f'tcp://[{metadata.zmq_ip}]:{port}'``,
#: ``ipc:///tmp/feed``, ``grpc://``, ``redis://``): processes talk there, no training data is read from it
_ENDPOINT_SCHEME = lazy_compile(r"^(tcp|udp|ipc|inproc|ws|wss|grpc|zmq|redis|rediss|amqp|mqtt|unix|nccl|gloo|env)://", re.I)


def _in_module_main(f: Facts, lit: Any) -> bool:
    """A literal inside the ``if __name__ == '__main__':`` block of a module that other files import (InternVL's
    ``utils/s3_fileio.py`` reading one S3 image as a smoke test): the calls on both sides of it run only under that guard,
    and the module is imported, not run, by the project."""
    ff = f.files.get(lit.path)
    if ff is None:
        return False
    before = max((c for c in ff.calls if c.line <= lit.line), key=lambda c: c.line, default=None)
    after = min((c for c in ff.calls if c.line >= lit.line), key=lambda c: c.line, default=None)
    sides = [c for c in (before, after) if c is not None]
    if not sides or not all(c.guard and MAIN_GUARD.search(c.guard) for c in sides):
        return False
    names = _module_names(lit.path)
    return bool(names) and any(i.path != lit.path and (i.module in names or f"{i.module}.{i.name}" in names)
                               for i in f.imports(*{n.split(".", 1)[0] for n in names}))


def _hub_sibling(f: Facts, path: str, line: int) -> bool:
    """A recipe's ``data_files`` entry (at ``path:line``) whose dataset's ``path`` beside it is a Hugging Face Hub
    repository id: the files are read from that repository (downloaded into the cache), not from a path on the node."""
    ff = f.files.get(path)
    if ff is None:
        return False
    for e in ff.configs:
        if e.line == line and e.keys and e.keys[-1] == "data_files":
            want = (*e.keys[:-1], "path")
            return any(x.keys == want and isinstance(x.value, str) and _HUB_ID.match(x.value)
                       and not x.value.startswith((".", "/")) for x in ff.configs)
    return False


def data_locations(f: Facts) -> list[DataLoc]:
    """Every visible training-data location with its storage kind."""
    out: list[DataLoc] = []

    def add(value: str, fact: Any, key: str, hub_ok: bool = False, stream: bool = False) -> None:
        v = value.strip().strip("\"'")
        if len(v) < 2 or _PLACEHOLDER.search(v) or _TEST_PATH.search(getattr(fact, "path", "")):
            return
        if _BARE_SCHEME.match(v) or _ENDPOINT_SCHEME.match(v) or _REGEX_TOKENS.search(v):
            return  # ``if path.startswith('s3://'):``: a test for a scheme, no location; or a socket's address
        if isinstance(fact, PathLiteral) and _in_module_main(f, fact):
            return  # a debug call under a helper module's ``if __name__ == '__main__':``, which importing it never runs
        m = re.match(r"^(REMOTE|HF|MS|hf|ms)[:@](?!//)(.+)$", v)
        if m and _HUB_ID.match(m.group(2)):
            # a hub repository named with a loader's prefix (LLaMA-Factory ``dataset_dir: REMOTE:llamafactory/demo_data``):
            # downloaded into the cache before training, not a path on the node
            out.append(DataLoc(m.group(2), "hf-hub", fact, key))
            return
        if hub_ok and _HUB_ID.match(v) and not re.search(r"\.(json|jsonl|csv|parquet|txt|arrow|bin|tar)$", v):
            out.append(DataLoc(v, "hub-stream" if stream else "hf-hub", fact, key))
            return
        if "/" not in v and "." not in v and (hub_ok or not re.search(r"data|corpus|shard", v, re.I)):
            return  # a registered dataset name (LLaMA-Factory ``dataset: alpaca_en``) or a bare word (``auto``), not a location
        kind = storage_of(v)
        if kind == "http":
            return  # an HTTP(S) source is downloaded once into a local cache (datasets, wget), not read per step
        line = getattr(fact, "text", "")
        if kind in SLOW and _STAGING_LINE.search(line):
            return
        out.append(DataLoc(v, kind, fact, key))

    for s in f.effective(*_DATA_KEYS):
        if s.source in {"argparse-default", "field-default"} and not isinstance(s.value, str):
            continue
        if s.source == "config" and s.name == "data_files" and _hub_sibling(f, s.path, s.line):
            continue
        for v in _split_values(s.value):
            add(v, s, s.key, hub_ok=s.name in _HUB_KEYS)
    for e in f.config("datasets.path", "datasets.data_files"):
        if _hub_sibling(f, e.path, e.line):
            continue  # axolotl ``path: QingyiSi/Alpaca-CoT`` with ``data_files: [Chain-of-Thought/...json]``: files of that hub repo
        for v in _split_values(e.value):
            add(v, e, e.dotted, hub_ok=True)
    # a list of dataset entries a launch hands to the trainer as a JSON file (Osprey ``--dataset_config
    # ./osprey/configs/stage2.json``: ``[{"type": "coco_data", "ann_file": "./data/coco/...", "img_prefix": "./data/coco/imgs"}]``),
    # whose records the settings leave out as data
    listed = [e for e in f.config(*_ENTRY_KEYS) if e.keys and isinstance(e.keys[0], int) and e.path.endswith(".json")]
    if listed:
        passed = {resolve_file(f, v) for x in f.launches() for v in x.script_args.values() if isinstance(v, str) and v.endswith(".json")}
        for e in listed:
            if e.path in passed and isinstance(e.value, str):
                add(e.value, e, e.dotted)
    # a data section's list of files (OLMo ``data: {paths: [gs://ai2-llm/preprocessed/.../part-0-00000.npy, ...]}``)
    for e in f.config("data.paths", "data.files", "data.urls", "data.path", "dataset.paths", "train_data.paths"):
        for v in _split_values(e.value)[:3]:
            add(v, e, e.dotted)
    for e in f.config("remote", "local"):
        if any(k in e.dotted.lower() for k in ("dataset", "loader")):
            for v in _split_values(e.value):
                add(v, e, e.dotted)
    for env in f.envs():
        if _DATA_ENV.match(env.name):
            for v in _split_values(env.value):
                add(v, env, env.name)
    for c in f.calls(*_LOADERS):
        stream = truthy(c.kwargs.get("streaming")) is True
        first = c.args[0] if c.args and isinstance(c.args[0], str) else None
        if c.short == "load_dataset" and first and first.lower() in _BUILDERS:
            for k in ("data_files", "data_dir"):
                for v in _split_values(c.kwargs.get(k)):
                    add(v, c, f"load_dataset({k}=)")
        elif first:
            add(first, c, f"{c.short}()", hub_ok=c.short == "load_dataset", stream=stream)
        for k in ("remote", "local", "urls"):
            for v in _split_values(c.kwargs.get(k)):
                add(v, c, f"{c.short}({k}=)")
    def reads(short: str) -> bool:
        return short not in _LOADERS and bool(_DATA_CALL.search(short)) and not _NOT_READ_CALL.search(short)

    for c in f.calls_where(reads):
        if not any(isinstance(a, str) for a in c.args) and not any(isinstance(v, str) for v in c.kwargs.values()):
            continue
        mode = c.kwargs.get("mode", c.args[1] if c.short == "open" and len(c.args) > 1 else "r")
        if isinstance(mode, str) and any(ch in mode for ch in "wax"):
            continue
        for a in (*c.args, *c.kwargs.values()):
            if isinstance(a, str) and 2 < len(a) < 300 and _NOT_DATA_FILE.search(a) is None and (
                _DATA_FILE.search(a) or re.match(r"^(\./)?data(sets?)?/", a)
            ):
                add(a, c, f"{c.short}()")
    # ``data_dir = os.path.join("data", dataset)`` (nanoGPT): the repository's own data/ folder, joined in code
    for c in f.calls("os.path.join", "posixpath.join"):
        head = c.args[0] if c.args and isinstance(c.args[0], str) else None
        if head and _DATA_DIR_HEAD.match(head) and _DATA_DIR_LINE.search(c.text):
            add(head.rstrip("/") + "/", c, "os.path.join()")
    for p in f.path_literals():
        line = p.text
        if _DATA_LINE.search(line) and not _NOT_DATA_LINE.search(line):
            add(p.value, p, "path")
    seen: set[tuple[str, str, int]] = set()
    uniq: list[DataLoc] = []
    for d in out:
        k = (d.value, getattr(d.fact, "path", ""), getattr(d.fact, "line", 0))
        if k not in seen:
            seen.add(k)
            uniq.append(d)
    return uniq


#: a script that prepares data (``prepare_data.py``, ``preprocess.py``): it reads its source once, not during training
#: a data-preparation script, Python or shell (Megatron-LM ``tools/common_pile_dataset/setup_common_pile_dataset.sh`` points
#: the HF cache at Lustre while it builds a CI dataset once)
_PREP_SCRIPT = lazy_compile(r"(^|/)[^/]*(preprocess|prepare|pre_?tokeniz|tokenize_(data|dataset|corpus)|build_(data|dataset)|make_dataset|"
                          r"process_data|data_prep|download|setup_\w*data)[^/]*\.(py|sh)$", re.I)


def training_data_locations(ctx: Context) -> list[DataLoc]:
    """The data locations the training reads: in configs, launches and the training path's code. A Python file off the
    training path (llama-cookbook's ``multilingual/prepare_data.py`` streams 10,000 documents from the Hub to build a
    tokenizer corpus) and data-preparation scripts read their source once, not per step: not judged."""
    train = ctx.project.training_files
    out = []
    for d in data_locations(ctx.facts):
        path = getattr(d.fact, "path", "")
        if _PREP_SCRIPT.search(path) or (train and path.endswith(".py") and path not in train):
            continue
        out.append(d)
    return out


def _loc_ev(d: DataLoc) -> Evidence:
    return Facts.ev(d.fact, key=d.key, value=d.value)


def _loc_values(locs: list[DataLoc]) -> dict[str, Any]:
    return {"data_paths": sorted({d.value for d in locs})[:8], "storage": sorted({d.kind for d in locs})}


@register
class I1StorageColocated(Check):
    id = "I1"
    title = "Storage co-located with compute"
    title_zh = "存储与计算同城/同集群"
    bottlenecks = (Bottleneck.DATA_IO,)
    priority = Priority.HIGH
    benefit = "removes cross-region/WAN latency from every data read; data loading keeps up with the GPUs"
    what = (
        "Whether training data are read from the compute cluster (a path on the node: relative, local, mounted, the HF "
        "cache) rather than straight from a storage service by URI (`s3://`, `oss://`, `gs://`, `hdfs://`, `cfs://`) or "
        "streamed from the Hub during training. Reads data-path keys, launcher flags, `DATA_*` variables, `load_dataset` "
        "arguments and data-loading path literals; when no location is visible the detail says so."
    )
    why = (
        "Cross-region object-store reads add tens of milliseconds of latency per request and are capped by WAN bandwidth "
        "(AWS documents same-region S3 access for throughput and no inter-region transfer cost); training at thousands of "
        "samples/s then waits on I/O. The seed ranks cross-city storage as high priority: move the data to the same "
        "cluster or copy it to local SSD before training."
    )
    fix = "Keep the training data in the same region/cluster as the GPUs, or stage them to local NVMe (`aws s3 sync s3://bucket/data /local_nvme/data`) before training and point the data path there."
    fix_zh = "将训练数据放在与 GPU 同城/同集群的存储中，或在训练前拷贝到本地 NVMe（如 `aws s3 sync s3://bucket/data /local_nvme/data`），并将数据路径指向本地。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance.html",)
    snippets = {"shell": "aws s3 sync s3://my-bucket/train-data /local_nvme/train-data\ntorchrun --nproc_per_node 8 train.py --data_path /local_nvme/train-data\n"}
    examples = (
        Example({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\ndata_path: data/alpaca_data.json\n"}, Status.NA,
                "a relative path names no storage: not judged"),
        Example({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\ndata_path: /mnt/cfs/datasets/alpaca_data.json\n"}, U,
                "a network file system mounted on the node"),
        Example({"examples/train_lora/qwen3_lora_sft_ray.yaml": (  # LLaMA-Factory: a hub repository named with its REMOTE: prefix
            "model_name_or_path: Qwen/Qwen3-4B-Instruct-2507\nstage: sft\ndataset: alpaca_zh_demo\n"
            "dataset_dir: REMOTE:llamafactory/demo_data\n")}, U, "a hub dataset directory downloaded before training"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --data-path /mnt/nvme/corpus/gpt_text_document\n"}, U, "megatron local prefix"),
        Example({"train.py": "from datasets import load_dataset\nds = load_dataset('tatsu-lab/alpaca', split='train')\n"}, U, "hub download to cache"),
        Example({"train.yaml": "train_data: s3://my-bucket/pretrain/shards/\nbf16: true\n"}, N, "s3 bucket"),
        Example({"examples/falcon/qlora.yml": (  # axolotl: data_files of a hub dataset are files of that repository
            "base_model: tiiuae/falcon-7b\ndatasets:\n  - path: QingyiSi/Alpaca-CoT\n    data_files:\n"
            "      - Chain-of-Thought/formatted_cot_data/gsm8k_train.json\n    type: alpaca:chat\n")}, U,
                "data_files inside a hub dataset are downloaded with it"),
        Example(_S3_HELPER, Status.NA, "an s3:// scheme test and a helper module's __main__ smoke test name no training data"),
        Example({**_S3_HELPER, "shell/finetune.sh": "torchrun --nproc_per_node 8 train/finetune.py --data_path s3://my-bucket/train/\n"},
                N, "the launch reads its training data from S3"),
        Example({"train.py": "from datasets import load_dataset\nds = load_dataset('HuggingFaceFW/fineweb', split='train', streaming=True)\n"}, N, "hub streaming"),
        Example({"train.py": "import torch\nloss.backward()\n"}, Status.NA, "no data location visible: not judged"),
        Example({"train.py": "from torch.utils.data import DataLoader\ndataset = LineDataset('data/train.jsonl', 256)\n"
                             "loader = DataLoader(dataset, batch_size=8)\n"}, Status.NA, "relative file in a dataset call: not judged"),
        Example({"eval.py": "import json\nwith open('results.json', 'w') as fh:\n    json.dump(r, fh)\n"}, Status.NA, "an output file is not data: no location, not judged"),
        Example({"train.py": "import os\nimport numpy as np\ndata_dir = os.path.join('data', dataset)\n"
                             "x = np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')\n"}, Status.NA,
                "nanoGPT data dir joined in code: not judged"),
        Example({  # llama-cookbook: a tokenizer-corpus script off the training path streams from the Hub; training reads local JSON
            "src/llama_cookbook/finetuning.py": (
                "from datasets import load_dataset\n\ndef main(train_config):\n"
                "    ds = load_dataset('json', data_files='src/llama_cookbook/datasets/alpaca_data.json', split='train')\n"
                "    trainer.train(ds)\n"),
            "getting-started/finetuning/finetuning.py": "from llama_cookbook.finetuning import main\nmain()\n",
            "end-to-end-use-cases/multilingual/prepare_data.py": (
                "import os\nfrom datasets import load_dataset\n\nDATASET = 'rahular/varta'\n\n"
                "def main(split='validation', lang='hi', save_path='data'):\n"
                "    dataset = load_dataset(DATASET, split=split, streaming=True)\n"
                "    with open(os.path.join(save_path, f'{lang}.txt'), 'w') as f:\n"
                "        for d in dataset:\n            f.write(d['text'] + '\\n')\n"),
        }, Status.NA, "a data-preparation script's Hub stream is not the training's data"),
        Example({"train.py": "import os\nout_dir = os.path.join('data', 'runs')\nos.makedirs(out_dir, exist_ok=True)\n"}, Status.NA,
                "an output folder under data/ is not data: no location, not judged"),
        Example({"train.yaml": "# data_path: s3://bucket/x\ndata_path: ${DATA}\n"}, Status.NA, "commented out and placeholder: not judged"),
    )

    def detect(self, ctx: Context) -> Outcome:
        locs = training_data_locations(ctx)
        remote = [d for d in locs if d.remote]
        if remote:
            ev = [_loc_ev(d) for d in remote]
            first = remote[0]
            return Outcome(N, ev, f"training data read straight from {first.kind} ({first.value}); its location relative to the GPUs is not pinned",
                           _loc_values(locs), findings=ev)
        # a path names where it lives only through its medium (``/dev/shm``, ``/mnt/nvme``, ``/lustre``) or a Hub download
        # (copied into the node's cache before training); a relative or unnamed path (``data/alpaca.json``) resolves on
        # whatever file system the job runs from, which may be a network mount in another region: it proves nothing
        named = [d for d in locs if d.kind in _ON_CLUSTER]
        unnamed = [d for d in locs if d.kind not in _ON_CLUSTER]
        if named and len(named) > len(unnamed):
            kinds = sorted({d.kind for d in named})
            hub = all(d.kind == "hf-hub" for d in named)
            detail = ("data downloaded from the HF Hub into the local cache before training" if hub
                      else f"training data on storage of the compute nodes ({', '.join(kinds)})")
            if unnamed:
                detail += (f"; {len(unnamed)} other data path{'s do' if len(unnamed) != 1 else ' does'} not name its storage "
                           f"({unnamed[0].value} at {unnamed[0].fact.path}:{unnamed[0].fact.line})")
            return Outcome(U, [_loc_ev(d) for d in named], detail, _loc_values(locs))
        if locs:
            shown = ", ".join(dict.fromkeys(d.value for d in unnamed[:3]))
            where = f"{unnamed[0].fact.path}:{unnamed[0].fact.line}"
            return Outcome(Status.NA, [], NOT_JUDGED + f"the training-data paths ({shown}; {where}) do not say where the data live: a "
                           "relative or unnamed path resolves on whatever file system the job runs from, possibly a network mount "
                           "in another region; check on a training node that the directory is on the GPUs' cluster (`df -h <dir>`, "
                           "the mount's region) or stage the data to local NVMe before training", _loc_values(locs))
        return Outcome(Status.NA, [], NOT_JUDGED + "no training-data location is visible in the repository: check where the run's "
                       "data-path flag or config points and that the directory is on the GPUs' cluster (`df -h <dir>`, the "
                       "mount's region)", {})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        return self.priority if outcome.status == Status.UNUSED and outcome.findings else None


@register
class I2FastStorage(Check):
    id = "I2"
    title = "High-performance storage media"
    title_zh = "高性能存储介质"
    bottlenecks = (Bottleneck.DATA_IO,)
    priority = Priority.HIGH
    benefit = "local NVMe or a parallel file system feeds GB/s per node; slow DFS/NAS reads stall the GPUs"
    what = (
        "Which medium the training data paths name: fast (`/dev/shm`, NVMe/SSD paths, `/raid`, Lustre/GPFS/FSx/Weka/Ceph) "
        "or slow (HDFS, CFS, MDFS, NFS/NAS, object stores or Hub streaming read directly). A path that names no medium "
        "cannot be judged statically and the detail says so."
    )
    why = (
        "A data-center NVMe SSD reads 3-7 GB/s per drive and a DGX's /raid array ~25 GB/s (NVIDIA DGX H100 guide), while "
        "NFS and HDFS clients typically deliver 100s of MB/s with millisecond latency per small read; the seed ranks slow "
        "media (CFS-1.5/HDFS/MDFS) as a high-priority fix: copy the data to local SSD first."
    )
    fix = "Copy the dataset to node-local NVMe (or `/dev/shm` for small sets) or a high-performance parallel FS (Lustre/GPFS/Ceph) before training, and read from there."
    fix_zh = "训练前将数据拷贝到本机 NVMe SSD（小数据集可放 `/dev/shm`）或高性能并行文件系统（Lustre/GPFS/Ceph），并从该处读取。"
    fix_safety = FixSafety.DISPLAY_ONLY
    references = ("https://docs.nvidia.com/dgx/dgxh100-user-guide/", "https://docs.mosaicml.com/projects/streaming/")
    snippets = {"shell": "rsync -a /nfs/datasets/pretrain/ /local_nvme/pretrain/\ntorchrun --nproc_per_node 8 train.py --data_path /local_nvme/pretrain\n"}
    examples = (
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --data-path /mnt/nvme0/corpus/text_document\n"}, U, "nvme"),
        Example({"train.yaml": "dataset_dir: /dev/shm/data\nbf16: true\n"}, U, "ramdisk"),
        Example({"train.yaml": "train_data_path: /lustre/fsw/datasets/pile\n"}, U, "lustre"),
        Example({"run.sh": "DATA_PATH=hdfs://namenode:8020/user/me/data\npython train.py --data_path $DATA_PATH\n"}, N, "hdfs"),
        Example({"train.yaml": "data_path: /nfs/shared/datasets/alpaca.json\n"}, N, "nfs"),
        Example({"train.yaml": "data_path: data/alpaca.json\n"}, Status.NA, "medium not named: not judged"),
        Example({"tools/ci_dataset/setup_ci_dataset.sh": (
            "OUTPUT_DIR=\"/lustre/fsw/projects/ci/text/v01_filtered_data\"\n"
            "# Redirect HuggingFace cache to lustre so it doesn't fill up /home\nexport HF_HOME=\"/lustre/fsw/projects/ci/hf_home\"\n"
            "export HF_DATASETS_CACHE=\"${HF_HOME}/datasets\"\npython tools/preprocess_data.py --input raw.jsonl --output-prefix ${OUTPUT_DIR}/text\n"),
                 "train.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --data-path data/my_text_document\n"}, Status.NA,
                "a dataset setup script's Lustre cache builds data once; the run's own path names no medium: not judged"),
        Example({"train.yaml": "# data_path: /mnt/nvme/data\nlr: 1e-5\n"}, Status.NA, "commented out: no location, not judged"),
    )

    def detect(self, ctx: Context) -> Outcome:
        locs = training_data_locations(ctx)
        slow = [d for d in locs if d.kind in SLOW]
        fast = [d for d in locs if d.kind in FAST]
        if slow:
            ev = [_loc_ev(d) for d in slow]
            kinds = sorted({d.kind for d in slow})
            return Outcome(N, ev, f"training data on slow storage ({', '.join(kinds)}): {slow[0].value}", _loc_values(locs), findings=ev)
        if fast:
            kinds = sorted({d.kind for d in fast})
            return Outcome(U, [_loc_ev(d) for d in fast], f"training data on fast storage ({', '.join(kinds)})", _loc_values(locs))
        # a path that names no medium (``data/alpaca.json``) may be on NVMe or on NFS: unknown, not a finding
        if locs:
            return Outcome(Status.NA, [_loc_ev(d) for d in locs[:5]],
                           NOT_JUDGED + f"the data paths ({locs[0].value}) do not name their storage medium: check on a training "
                           "node which file system holds them (`df -hT <dir>`: local NVMe/SSD, or NFS/FUSE/object store)", _loc_values(locs))
        return Outcome(Status.NA, [], NOT_JUDGED + "no training-data location is visible in the repository: check on a training "
                       "node which file system holds the run's data (`df -hT <dir>`: local NVMe/SSD, or NFS/FUSE/object store)", {})

    def recommendation_priority(self, ctx: Context, outcome: Outcome) -> Priority | None:
        return self.priority if outcome.status == Status.UNUSED and outcome.findings else None


# --------------------------------------------------------------------------------------------
# I3-I5: frequencies
# --------------------------------------------------------------------------------------------


def interval(v: Any) -> tuple[float | None, str]:
    """(steps, kind) of an interval value; kind is steps | ratio | epoch | time | off | unknown."""
    if isinstance(v, bool) or v is None:
        return None, "off"
    if isinstance(v, (int, float)):
        if v <= 0:
            return None, "off"
        return (float(v), "ratio") if v < 1 else (float(v), "steps")
    if isinstance(v, str):
        s = v.strip().lower()
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ba|batch|batches|step|steps|it|iter|iters|iterations)?", s)
        if m:
            return interval(float(m.group(1)))
        if re.fullmatch(r"(\d+(?:\.\d+)?\s*)?(ep|epoch|epochs|dur)", s):
            return None, "epoch"
        if re.fullmatch(r"\d+(?:\.\d+)?\s*(s|sec|m|min|h|hr|hours?|minutes?|seconds?)", s):
            return None, "time"
        if s in {"no", "none", "off", "false", ""}:
            return None, "off"
    return None, "unknown"


_EPOCH_MODULO = lazy_compile(r"\b\w*epoch\w*\s*(?:\+\s*1\s*)?\)?\s*%\s*(?:\w+\.)*(\w+)")


def _epoch_modulo_names(f: Facts) -> frozenset[str]:
    """Names an epoch counter is taken modulo in a guard (LLaMA2-Accessory ``main_finetune.py``: ``if args.output_dir and
    (epoch % args.save_interval == 0 or ...)``, ``--save_interval`` "number of epochs between model saving"): intervals
    counted in epochs, not steps. Memoised per scan."""
    key = ("epoch-modulo-names",)
    if key not in f._memo:
        names = {m.group(1) for c in f.calls_selected("modulo_guard") for m in _EPOCH_MODULO.finditer(c.guard or "")}
        f._memo[key] = frozenset(names)  # type: ignore[assignment]
    return f._memo[key]  # type: ignore[return-value]


def _strategy_off(f: Facts, s: Setting, strategy: str) -> Setting | None:
    """The setting of ``<x>_strategy`` to epoch/no in the same file/launch/call, which makes a step interval moot."""
    for t in f.settings(strategy):
        if t.path != s.path:
            continue
        if s.source == "launcher" and t.source == "launcher" and t.text != s.text:
            continue  # another command of the same script (each flag is cited at its own line: the command is its text)
        if s.source == "call" and t.source == "call" and t.text != s.text:
            continue  # another call (keywords of one call share its first line as text)
        if (isinstance(t.value, str) and t.value.lower() in {"epoch", "no", "best"}) or t.value is False:
            return t  # (``--save_strategy "no"`` and YAML ``save_strategy: no`` are read as a boolean)
        if isinstance(t.value, Expr) and re.search(r"\.(EPOCH|NO)\b", t.value.text):
            return t
    return None


@dataclass(frozen=True, slots=True)
class Interval:
    fact: Any
    key: str
    name: str
    steps: float | None
    kind: str
    in_loop: bool = False


def interval_settings(f: Facts, names: tuple[str, ...], strategy: str | None = None, explicit_only: tuple[str, ...] = ()) -> list[Interval]:
    from ._registry import debug_recipe

    out: list[Interval] = []
    # a DeepSpeed config the run does not pick (LongLoRA's ``stage3.json`` that no command passes, h2o-llmstudio's dict
    # behind ``use_deepspeed``, off by default): its ``steps_per_print`` is not the run's
    alt_ds = deepspeed_alternative_files(f)
    for s in f.effective(*names):
        if _TEST_PATH.search(s.path) or debug_recipe(f, s):  # a debug recipe of a config registry is not the run's setting
            continue
        if s.path.endswith(".py") and checkpoint_tool_file(s.path):
            continue  # a converter's own manager settings (maxtext ``convert_gemma_chkpt.py``: ``save_interval_steps = 1``)
        if s.path in alt_ds and (s.path.endswith(".json") or s.name == "steps_per_print"):
            continue
        if s.source == "assign" and _in_eval_function(f, s):
            continue  # LAVIS ``def evaluation(...): print_freq = 10``: the evaluation loop's interval, not the training loop's
        if s.source in {"argparse-default", "field-default"} and s.value is None:
            continue
        if s.source == "field-default" and _paces_other_output(f, s):
            continue
        if s.name in explicit_only and s.rank == 0:
            continue
        steps, kind = interval(s.value)
        if isinstance(s.value, Expr) or isinstance(s.value, (list, tuple, dict)):
            continue  # (a list of steps, openpipe-art's ``checkpoint_steps = ()``: no interval)
        moot = _strategy_off(f, s, strategy) if strategy and kind == "steps" else None
        if moot is not None:
            # the step count is unused, not a number of epochs (Online-RLHF ``save_strategy="epoch", save_steps=1000000000``):
            # the strategy is the evidence (GeoChat's launch: ``--save_strategy "epoch"`` a line above ``--save_steps 7000``)
            off = moot.value is False or (moot.value.lower() == "no" if isinstance(moot.value, str)
                                          else bool(re.search(r"\.NO\b", str(getattr(moot.value, "text", "")))))
            if not any(i.fact is moot for i in out):
                out.append(Interval(moot, moot.key, strategy or s.name, None, "off" if off else "epoch"))
            continue
        if kind == "steps" and s.name in _epoch_modulo_names(f):
            kind = "epoch"
        out.append(Interval(s, s.key, s.name, steps, kind))
    out += _get_defaults(f, names, {i.name for i in out if i.steps is not None})
    return _registry_voted(f, out)


def _get_defaults(f: Facts, names: tuple[str, ...], known: set[str]) -> list[Interval]:
    """The default a training-path file reads an interval with when no config or launch sets it: LAVIS ``log_freq =
    self.config.run_cfg.get("log_freq", 50)`` (no recipe sets ``log_freq``: every 50 steps)."""
    out: list[Interval] = []
    want = set(names) - known
    for c in f.calls("get") if want else ():
        if len(c.args) != 2 or not isinstance(c.args[0], str) or c.args[0] not in want or _TEST_PATH.search(c.path):
            continue
        value = as_number(c.args[1])
        if value is None or isinstance(c.args[1], bool):
            continue
        s = Setting(c.args[0], c.args[1], c.path, c.line, "field-default", c.text, f"{c.name}({c.args[0]!r}, {c.args[1]!r})", 0)
        steps, kind = interval(s.value)
        out.append(Interval(s, s.key, s.name, steps, kind))
    return out


#: a config class whose interval paces evaluation (OLMo-core ``EvaluatorCallback.log_interval = 5``: batches of an
#: evaluation pass) or a progress line beside its own metrics interval (``ConsoleLoggerCallback.log_interval = 1`` next to
#: ``metrics_log_interval``): neither says how often the training run logs its metrics
#: (not a class that merely names evaluation among other duties: realhf's ``ExperimentSaveEvalControl.save_freq_steps``)
_EVAL_OWNER = lazy_compile(r"Evaluat(or|ion)|^Eval|Validat")
_METRICS_INTERVAL = lazy_compile(r"^metrics?_\w*interval$")


def _paces_other_output(f: Facts, s: Setting) -> bool:
    owner = next((x.owner for x in f.fields(s.name) if x.path == s.path and x.line == s.line), None)
    if owner is None:
        return False
    if _EVAL_OWNER.search(owner.rsplit(".", 1)[-1]):
        return True
    return not _METRICS_INTERVAL.match(s.name) and any(
        x.owner == owner and x.path == s.path and _METRICS_INTERVAL.match(x.name) for x in f.records("fields"))


_EVAL_FUNC = lazy_compile(r"^_*(eval\w*|valid\w*|test\w*|inference\w*|predict\w*)$", re.I)


def _in_eval_function(f: Facts, s: Setting) -> bool:
    """A local variable of an evaluation, validation or prediction function (``def evaluation(self, model, data_loader):``)."""
    return any(a.path == s.path and a.line == s.line and a.func and _EVAL_FUNC.match(a.func.rsplit(".", 1)[-1])
               for a in f.assigns(s.name))


def _registry_voted(f: Facts, items: list[Interval]) -> list[Interval]:
    """Intervals set inside config-registry recipes (torchtitan ``MetricsProcessor.Config(log_freq=1)`` in 2 of 97 recipes)
    are voted as recipes are (:func:`_registry.recipe_vote`): recipes that leave the name unset count at the config-class
    default when it is known, and the values of the minority verdict are left out; the distribution goes to the detail."""
    from ._registry import recipe_of, recipe_vote, script_vote

    by_name: dict[str, list[Interval]] = {}
    for i in items:
        by_name.setdefault(i.name, []).append(i)
    out: list[Interval] = []
    for name, group in by_name.items():
        inside = [i for i in group if isinstance(i.fact, Setting) and i.fact.source == "call" and i.steps is not None
                  and recipe_of(f, i.fact) is not None]
        vote = None
        if inside:
            defaults = [s for s in f.settings(name) if s.source == "field-default" and as_number(s.value) is not None
                        and not _TEST_PATH.search(s.path)]
            default = (defaults[0], float(as_number(defaults[0].value) or 0)) if len({repr(s.value) for s in defaults}) == 1 else None
            vote = recipe_vote(f, [(i.fact, i.steps) for i in inside], default, _band_for(name))
        scripts = False
        if vote is None:
            # call keywords each in its own script (no registry): one vote per file, the config-class defaults then apply to
            # no counted script and are left out
            per_file: dict[str, tuple[Any, float]] = {}
            calls = [i for i in group if isinstance(i.fact, Setting) and i.fact.source == "call" and i.steps is not None]
            if max(Counter(i.fact.path for i in calls).values(), default=0) == 1:
                per_file = {i.fact.path: (i.fact, i.steps) for i in calls}
            vote = script_vote(f, per_file, _band_for(name)) if per_file else None
            scripts = vote is not None
        if vote is None:
            out += group
            continue
        kept = [i for i in group if any(i.fact is k for k in vote.kept)]
        if scripts:
            f._memo[("registry-vote-note", name)] = [vote.text(name)]  # type: ignore[list-item]
            out += kept
            continue
        d = vote.default
        if d is not None and any(d is k for k in vote.kept) and all(i.fact is not d for i in kept):
            steps, kind = interval(d.value)
            kept.append(Interval(d, d.key, name, steps, kind))
        f._memo[("registry-vote-note", name)] = [vote.text(name)]  # type: ignore[list-item]
        out += kept
    return out


def registry_notes(f: Facts, items: list[Interval]) -> str:
    """The distribution notes of the registry votes behind ``items`` (see :func:`_registry_voted`)."""
    notes: list[str] = []
    for name in dict.fromkeys(i.name for i in items):
        notes += [n for n in f._memo.get(("registry-vote-note", name), []) if n not in notes]  # type: ignore[union-attr]
    return "; ".join(notes)


def _with_notes(out: Outcome, notes: str) -> Outcome:
    if notes and out.status != Status.NA:
        out.detail = f"{out.detail}; {notes}" if out.detail else notes
    return out


# -- Python config files (mmengine ``Config.fromfile`` recipes) --------------------------------------

#: mmengine/mmcv logger hooks: ``LoggerHook`` (mmengine), ``TextLoggerHook`` (mmcv), also as strings (``type='LoggerHook'``)
_LOGGER_HOOK = lazy_compile(r"LoggerHook$")


def _type_name(c: Call) -> str:
    """The class a config dict builds (``dict(type=LoggerHook, ...)``, ``dict(type='mmengine.LoggerHook')``), else the callee."""
    t = c.kwargs.get("type")
    if isinstance(t, Expr):
        return (t.dotted or t.text).rsplit(".", 1)[-1]
    if isinstance(t, str):
        return t.rsplit(".", 1)[-1]
    return c.short


def hook_intervals(f: Facts, hook: re.Pattern[str]) -> list[Setting]:
    """``interval=`` of hooks configured as mmengine/mmcv config dicts: ``default_hooks = dict(logger=dict(type=LoggerHook,
    interval=10))``, ``LoggerHook(interval=50)``, mmcv ``log_config = dict(interval=50, hooks=[dict(type='TextLoggerHook')])``.
    A name given as the interval (``interval=log_interval``) is the file's own value of it where the parser bound one;
    otherwise the hook is skipped (its interval is not known)."""
    configs = f.config_modules()
    out: list[Setting] = []
    for c in f.calls_with_kw("interval"):
        if _TEST_PATH.search(c.path) or as_number(c.kwargs["interval"]) is None:
            continue
        name = _type_name(c)
        if not hook.search(name):
            hooks = c.kwargs.get("hooks")
            if not (c.short == "dict" and "type" not in c.kwargs and hooks is not None and re.search(r"\w+LoggerHook\b", _text_of(hooks))):
                continue
            name = "log_config"
        v = c.kwargs["interval"]
        out.append(Setting("interval", v, c.path, c.kw_line("interval"), "config" if c.path in configs else "call", c.text,
                           f"{name}(interval=)", 2))
    return out


def config_file_intervals(f: Facts, items: list[Interval], hooks: list[Setting], what: str, band: Any) -> list[Interval]:
    """Intervals of Python config files (:meth:`Facts.config_modules`) voted as recipes: each file runs with its hook's
    interval (``dict(type=LoggerHook, interval=10)``), else with the interval setting it makes (``logging_steps=1`` of an
    HF-Trainer variant, ``log_interval = 1``); the values of the minority band are left out when one band holds more than
    half of the files, and the distribution goes to the detail. Without such a majority every value is judged."""
    from ._registry import config_file_vote

    configs = f.config_modules()
    hook_items = [Interval(s, s.key, "interval", *interval(s.value)) for s in hooks]
    per_file: dict[str, tuple[Any, float]] = {}
    for i in items:
        if i.fact.path in configs and i.steps is not None and i.fact.path not in per_file:
            per_file[i.fact.path] = (i.fact, i.steps)
    for i in hook_items:
        if i.fact.path in configs and i.steps is not None:
            per_file[i.fact.path] = (i.fact, i.steps)  # the hook is what the runner paces by
    vote = config_file_vote(f, per_file, band)
    if vote is None:
        return items + hook_items
    kept = {id(x) for x in vote.kept}
    out = [i for i in items + hook_items if i.fact.path not in configs or id(i.fact) in kept]
    note = vote.text(what)
    for i in out:
        notes = f._memo.setdefault(("registry-vote-note", i.name), [])
        if note not in notes:
            notes.append(note)  # type: ignore[arg-type]
    return out


def _mm_config(model: str, interval: int, visualizer: str = "None") -> str:
    """An mmengine-style Python config (xtuner ``configs/<model>/<model>_qlora_alpaca_e3.py``): module-level settings only."""
    return (
        "from datasets import load_dataset\nfrom mmengine.hooks import CheckpointHook, IterTimerHook, LoggerHook\n"
        "from mmengine.visualization import Visualizer, WandbVisBackend\nfrom transformers import AutoTokenizer\n\n"
        f"pretrained_model_name_or_path = '{model}'\ndata_path = 'tatsu-lab/alpaca'\nmax_length = 2048\n"
        "batch_size = 1\naccumulative_counts = 16\ndataloader_num_workers = 0\nsave_steps = 500\n\n"
        "train_dataloader = dict(batch_size=batch_size, num_workers=dataloader_num_workers,\n"
        "                        dataset=dict(type=load_dataset, path=data_path))\n"
        "default_hooks = dict(\n    timer=dict(type=IterTimerHook),\n"
        f"    logger=dict(type=LoggerHook, log_metric_by_epoch=False, interval={interval}),\n"
        "    checkpoint=dict(type=CheckpointHook, by_epoch=False, interval=save_steps),\n)\n"
        f"visualizer = {visualizer}\nlog_level = 'INFO'\n")


#: the entry point of an mmengine project: ``xtuner train <config>.py`` loads the config with ``Config.fromfile``
_MM_TRAIN = ("from mmengine.config import Config\nfrom mmengine.runner import Runner\n\n"
             "def main(args):\n    cfg = Config.fromfile(args.config)\n    runner = Runner.from_cfg(cfg)\n    runner.train()\n")


#: oumi ``TrainingParams``: the HF arguments built through a variable, ``report_to`` from the ``enable_*`` flags
_OUMI_PARAMS = (
    "from dataclasses import dataclass\nimport transformers\nimport trl\n\n@dataclass\nclass TrainingParams:\n"
    "    enable_wandb: bool = False\n    enable_tensorboard: bool = False\n    logging_steps: int = 50\n\n"
    "    def to_hf(self):\n        config_class = trl.SFTConfig if self.trainer_type == 'TRL_SFT' else transformers.TrainingArguments\n"
    "        return config_class(\n            logging_steps=self.logging_steps,\n            report_to=self._get_hf_report_to(),\n        )\n\n"
    "    def _get_hf_report_to(self):\n        report_to = []\n        if self.enable_wandb:\n            report_to.append('wandb')\n"
    "        if self.enable_tensorboard:\n            report_to.append('tensorboard')\n        if len(report_to) == 0:\n"
    "            report_to.append('none')\n        return report_to\n")


#: mmengine visualizer backends that report to an external tracker (``LocalVisBackend`` writes the work dir's own files)
_VIS_BACKEND = lazy_compile(r"\b(Wandb|Tensorboard|MLflow|ClearML|Neptune|DVCLive|Aim)VisBackend\b", re.I)


@dataclass(frozen=True, slots=True)
class VisualizerVote:
    """How the Python config files of an mmengine project set their ``visualizer``: the trackers the majority reports to
    (empty: none), the settings of that majority and the distribution text."""

    trackers: tuple[str, ...]
    kept: list[Setting]
    n: int
    total: int
    note: str


def visualizer_vote(f: Facts) -> VisualizerVote | None:
    """``visualizer`` of mmengine Python config files (:meth:`Facts.config_modules`), voted per file: ``visualizer = None``
    (metrics stay in the runner's log; no external tracker) or ``dict(type=Visualizer, vis_backends=[dict(type=
    WandbVisBackend)])`` (the LoggerHook hands its metrics to those backends at its interval). None with fewer than three
    files setting it or without a majority."""
    configs = f.config_modules()
    per_file: dict[str, tuple[Setting, tuple[str, ...]]] = {}
    for st in f.settings("visualizer"):
        if st.path not in configs or st.source != "config":
            continue
        names = () if st.value is None else tuple(sorted({m.lower() for m in _VIS_BACKEND.findall(_text_of(st.value))}))
        per_file[st.path] = (st, names)
    for c in f.calls_with_kw("vis_backends"):  # ``visualizer = dict(type=Visualizer, vis_backends=[dict(type=TensorboardVisBackend)])``
        if c.path in configs:
            backends = c.kwargs["vis_backends"]
            names = tuple(sorted({m.lower() for m in _VIS_BACKEND.findall(_text_of(backends))}))
            per_file[c.path] = (Setting("visualizer", backends, c.path, c.kw_line("vis_backends"), "config", c.text, "vis_backends", 2), names)
    if len(per_file) < 3:
        return None
    by: dict[tuple[str, ...], list[Setting]] = {}
    for st, names in per_file.values():
        by.setdefault(names, []).append(st)
    top, kept = max(by.items(), key=lambda kv: len(kv[1]))
    if len(kept) * 2 <= len(per_file):
        return None
    counts = ", ".join(f"{'no external tracker' if not k else ' + '.join(k)} in {len(v)}" for k, v in sorted(by.items(), key=lambda kv: -len(kv[1])))
    note = f"visualizer in the {len(per_file)} Python config files: {counts} (judged by the majority)"
    return VisualizerVote(top, kept, len(kept), len(per_file), note)


# -- training-step loops -----------------------------------------------------------------------

_STEP_FUNCS = {"training_step", "train_step", "on_step_end", "on_train_batch_end", "on_batch_end", "on_after_backward",
               "optimizer_step", "on_before_optimizer_step", "train_batch"}
_OPT_STEP = lazy_compile(r"(optim|\bopt\b|scaler|engine|model_engine|fabric|accelerator)", re.I)


def _is_step_call(c: Call) -> bool:
    if c.short in {"backward", "manual_backward", "take_optimizer_step"}:  # instructlab-training's ``accelerator.take_optimizer_step()``
        return True
    return c.short == "step" and bool(_OPT_STEP.search(c.name) or _OPT_STEP.search(c.text)) and "sched" not in c.name.lower()


@functools.lru_cache(maxsize=4096)
def _epoch_loop(loop: str) -> bool:
    """Whether a loop's iterable walks epochs (``range(args.num_epochs)``, ``self.epochs``), judged without the keywords of
    the calls around the data (a progress bar's ``tqdm(enumerate(zip(laion_loader, mmc4_loader)), total=..., initial=epoch
    * num_batches_per_epoch)`` walks batches: its ``epoch`` is only the bar's starting count)."""
    try:
        node = ast.parse(loop, mode="eval")
    except SyntaxError:
        return "epoch" in loop.lower()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            n.keywords = []
            # (nor a label among its arguments: ``metric_logger.log_every(data_loader, 10, f'Epoch: [{epoch}]')``)
            n.args = [a for a in n.args if not isinstance(a, ast.JoinedStr) and not (isinstance(a, ast.Constant) and isinstance(a.value, str))]
    # (a count of iterations per epoch walks the batches of one epoch: LAVIS/TimeChat ``metric_logger.log_every(
    # range(iters_per_epoch), log_freq, header)``, ``range(args.steps_per_epoch)``)
    return "epoch" in _PER_EPOCH.sub("", ast.unparse(node).lower())


_PER_EPOCH = lazy_compile(r"\w*_per_epoch\w*")


def step_loops(f: Facts) -> set[tuple[str, str | None, str]]:
    """(path, function, loop iterable) of loops that run one optimizer step per iteration."""
    loops = {(c.path, c.func, c.loop) for c in f.calls("backward", "manual_backward", "step", "take_optimizer_step")
             if c.loop is not None and not _epoch_loop(c.loop) and _is_step_call(c)}
    # a loop that calls the trainer's own step method (``outputs = self.training_step(dataloader)``, nanotron)
    loops |= {(c.path, c.func, c.loop) for c in f.calls("training_step", "train_step")
              if c.loop is not None and not _epoch_loop(c.loop) and c.func not in _STEP_FUNCS}
    # a loop that runs one step of DeepSpeed's pipeline engine per iteration (MPP-LLaVA ``loss =
    # engine.train_batch(data_iter=train_iter)``: forward, backward and the optimizer step over all micro-batches)
    loops |= {(c.path, c.func, c.loop) for c in f.calls("train_batch") if c.loop is not None and not _epoch_loop(c.loop)
              and "." in c.name and c.func != "train_batch" and c.kwargs.get("data_iter") is not None}
    # an RL trainer's loop that runs one policy update per iteration through its engine (AReaL ``for global_step in
    # range(start_step, max_steps): ... self.actor.ppo_update(adv_batch)``)
    loops |= {(c.path, c.func, c.loop) for c in f.calls("ppo_update") if c.loop is not None and not _epoch_loop(c.loop)
              and c.name.count(".") >= 1 and c.func not in _STEP_FUNCS and c.func != "ppo_update"}
    # an RL trainer's loop over its training data loader that calls the trainer's own update method once per batch
    # (``for iter, rand_prompts in enumerate(self.train_dataloader): ... status = self.train_critic_and_policy(batch)``):
    # generation, scoring and the policy update of one training step sit behind that one call
    loops |= {(c.path, c.func, c.loop) for c in f.calls_where(lambda s: s.startswith("train_") and "loader" not in s)
              if c.loop is not None and c.name.count(".") == 1 and c.name.startswith("self.") and _TRAIN_LOADER.search(c.loop)
              and not _epoch_loop(c.loop) and c.func not in _STEP_FUNCS}
    # ... or that hands each batch's training to a worker group or engine it holds (RLinf ``for batch in
    # self.train_dataloader: ... actor_handle = self.actor.run_training(input_channel=...)``): one policy update per iteration
    loops |= {(c.path, c.func, c.loop) for c in f.calls("run_training")
              if c.loop is not None and c.name.count(".") == 2 and c.name.startswith("self.") and _TRAIN_LOADER.search(c.loop)
              and not _epoch_loop(c.loop) and c.func not in _STEP_FUNCS}
    # a loop that calls a method of its own file whose body runs the backward and the optimizer step outside any loop (CoLLiE
    # ``loss = self.train_fn(self, batch, self.global_batch_idx)``, a static method ending in ``trainer.engine.backward(loss)``
    # and ``trainer.engine.step()``): one step per iteration
    # The same for a method named for a training step whose body makes the optimizer step outside any loop with no backward
    # of its own, because a pipeline schedule runs forward and backward inside another call (NeMo-Aligner
    # ``train_single_step``: ``self.model.get_loss_and_metrics(batch, forward_only=False)`` -> Megatron-Core's
    # ``forward_backward_func``, then ``self.optimizer.step(closure=None)``), called once per batch by ``fit``'s loop
    # a loss-scaler object whose ``__call__`` runs the backward and the optimizer step (DeiT/MAE's ``NativeScaler``,
    # LLaMA2-Accessory ``grad_norm = loss_scaler(loss, optimizer, model, parameters=..., update_grad=...)``)
    if any(c.func == "__call__" for c in f.calls("backward")):
        loops |= {(c.path, c.func, c.loop) for c in f.calls_where(lambda s: s.endswith("scaler"))
                  if c.loop is not None and not _epoch_loop(c.loop) and c.func not in _STEP_FUNCS and len(c.args) >= 2
                  and all(isinstance(a, Expr) for a in c.args[:2]) and "loss" in c.args[0].text and "optim" in c.args[1].text}
    # a loop whose optimizer step is a helper of the project's (modded-nanogpt ``training_manager.step_optimizers(step)``)
    # after an inner micro-batch loop that runs the backward in the same function
    stepped = {(c.path, c.func) for c in f.calls("backward")}
    loops |= {(c.path, c.func, c.loop) for c in f.calls_where(lambda s: _OPTIMIZER_STEP_HELPER.match(s) is not None)
              if c.loop is not None and not _epoch_loop(c.loop) and (c.path, c.func) in stepped and c.func not in _STEP_FUNCS}
    # a loop over steps around an inner gradient-accumulation loop that runs the backward and the step (LISA, GLaMM: ``for
    # global_step in range(args.steps_per_epoch): for i in range(args.grad_accumulation_steps): ... model.backward(loss);
    # model.step()``, then ``writer.add_scalar("train/lr", ...)`` in the outer body): a call records its innermost loop only,
    # so the outer one is the function's loop over steps; each of its iterations is one optimizer step
    accum = {(p, fn) for p, fn, lp in loops if fn and _ACCUM_LOOP.search(lp)}
    for path in sorted({p for p, _ in accum}):
        loops |= {(c.path, c.func, c.loop) for c in f.files[path].calls
                  if (c.path, c.func) in accum and c.loop is not None and _STEPS_LOOP.search(c.loop)
                  and not _ACCUM_LOOP.search(c.loop)}  # (``steps_per_epoch`` counts steps, not epochs)
    backward = {(c.path, c.func) for c in f.calls("backward", "manual_backward") if c.func and c.loop is None}
    stepping = {(c.path, c.func) for c in f.calls("step") if c.func and c.loop is None and _is_step_call(c)
                and ((c.path, c.func) in backward or _STEP_HELPER.search(c.func))}
    for path, func in stepping:
        for c in f.files[path].calls if path in f.files else ():
            if (c.loop is not None and c.name == f"self.{func}" and c.func != func and not _epoch_loop(c.loop)
                    and c.func not in _STEP_FUNCS):
                loops.add((c.path, c.func, c.loop))
    # ... or a module-level function of another file, imported by name, whose body accumulates over micro-batches and then
    # steps the optimizer once (GRPO-Zero: ``for step, batch in enumerate(train_dataloader, start=1): ... results =
    # update_policy(model, optimizer, episodes, ...)`` with ``from grpo import rollout, update_policy``; ``update_policy``
    # runs ``loss.backward()`` per micro-batch, then ``optimizer.step()``)
    looped_backward = {(c.path, c.func) for c in f.calls("backward") if c.func and c.loop is not None}
    helpers = {(c.path, c.func) for c in f.calls("step") if c.func and "." not in c.func and c.loop is None and _is_step_call(c)
               and (c.path, c.func) in looped_backward}
    for path, func in sorted(helpers):
        module = path.removesuffix(".py").replace("/", ".")
        importers = {i.path for i in f.imports(module.rsplit(".", 1)[-1], module) if i.name == func}
        for c in f.calls(func):
            if (c.name in (func, f"{module}.{func}") and c.path in importers and c.loop is not None and not _epoch_loop(c.loop)
                    and c.func not in _STEP_FUNCS):
                loops.add((c.path, c.func, c.loop))
    return loops


#: the iterable of a gradient-accumulation loop (``range(args.grad_accumulation_steps)``, ``range(micro_batches)``)
_ACCUM_LOOP = lazy_compile(r"(?i)^\s*range\((.*,\s*)?[\w.]*(grad(ient)?_?acc\w*|accum\w*|micro_?(batch|step)\w*)\s*\)\s*$")
#: the iterable of a loop over optimizer steps (``range(args.steps_per_epoch)``, ``range(start_step, max_steps)``)
_STEPS_LOOP = lazy_compile(r"(?i)^\s*range\((.*,\s*)?[\w.]*(steps?|iters?|iterations?)(_per_epoch)?\s*\)\s*$")

#: a helper that steps the optimizers (``step_optimizers``, ``optimizer_step``, ``step_optimizer``)
_OPTIMIZER_STEP_HELPER = lazy_compile(r"^_*(step_optimizers?|optimizers?_step)$")

#: a method named for one training step (``train_single_step``, ``train_step_fn``, ``training_step``, ``update_step``)
_STEP_HELPER = lazy_compile(r"(?i)^_*(train\w*_step|step_train\w*|update_step|training_step)\w*$")

#: the iterable of a loop over the training data loader (``self.train_dataloader``, ``enumerate(train_loader)``)
_TRAIN_LOADER = lazy_compile(r"(?i)\btrain(ing)?_?(data)?_?loader\b")


#: an RL trainer (skyrl-train ``RayPPOTrainer.train``): a loop over the prompt loader, one rollout and policy update per
#: iteration behind the trainer's own ``self.train_critic_and_policy``; checkpoints every ``ckpt_interval`` steps and a
#: W&B/console report per step (``{report}`` is the report line(s) of the loop body)
_RL_TRAINER = (
    "import torch\nfrom myrl.utils.tracking import Tracking\n\n\nclass RayPPOTrainer:\n"
    "    def __init__(self, cfg, tracker: Tracking, train_dataloader):\n        self.cfg = cfg\n        self.tracker = tracker\n"
    "        self.train_dataloader = train_dataloader\n        self.global_step = 1\n\n"
    "    def train(self):\n        for iter, rand_prompts in enumerate(self.train_dataloader):\n"
    "            generator_output = self.generate(rand_prompts)\n"
    "            training_input = self.convert_to_training_input(generator_output)\n"
    "            status = self.train_critic_and_policy(training_input)\n"
    "            if self.cfg.trainer.ckpt_interval > 0 and self.global_step % self.cfg.trainer.ckpt_interval == 0:\n"
    "                self.save_checkpoints()\n{report}            self.global_step += 1\n\n"
    "    def save_checkpoints(self):\n        torch.save({{'global_step': self.global_step}}, 'trainer_state.pt')\n")
_RL_REPORT = "            self.tracker.log(status, step=self.global_step, commit=True)\n"
_RL_REPORT_SPACED = ("            if self.global_step % self.cfg.trainer.report_interval == 0:\n"
                     "                self.tracker.log(status, step=self.global_step, commit=True)\n")
_RL_CONFIG = "trainer:\n  ckpt_interval: {ckpt}\n  report_interval: 20\n  logger: wandb\n"

_LAST_STEP = lazy_compile(r"\b[\w.]*(step|iter|iteration)s?\w*\s*(>=|==)\s*[\w.]*(max|total|num|last|final)_?\w*(steps?|iters?|iterations?)\b"
                        r"|\b[\w.]*(max|total|num)_?\w*(steps?|iters?)\s*(<=|==)\s*[\w.]*(step|iter)\w*\b", re.I)


#: a condition that holds once, when the job is told to stop (a signal handler's flag, a preemption notice, a time limit)
_INTERRUPTED = lazy_compile(r"(?i)interrupt|preempt|sigterm|sigusr|signal_received|received_signal|stop_requested|time_?limit"
                          r"|timed_?out|deadline")


def _guard(f: Facts, guard: str | None, path: str | None = None) -> tuple[bool, float | None]:
    """(guarded by an interval condition, the interval when it can be resolved).

    The interval is the effective value of the name after ``%`` as the guarding file sees it
    (``near=path``); a test that passes ``save_interval=1`` to the same function is not the setting.
    """
    if not guard:
        return False, None
    guard = _without_skips(guard)
    if not guard:
        return False, None
    # the run's last step (Prismatic ``if self.max_steps is not None and metrics.global_step >= self.max_steps:`` saves the
    # final checkpoint, then returns): once, whatever boundary it shares the guard with
    if _LAST_STEP.search(guard) and not re.search(r"\bor\b", guard):  # (``step % every == 0 or step == max_steps``: the interval)
        return True, None
    # a save when the job is told to stop (NeMo's preemption callback: ``if self.interrupted:`` after SIGTERM, then exit): once
    if _INTERRUPTED.search(guard) and not re.search(r"\bor\b", guard):
        return True, None
    # the first modulus that is no accumulation boundary (litgpt: ``not (iter_num % accum_iters != 0) and step_count %
    # save_interval == 0``, the accumulation flag spelled out where it stands): an accumulation test alone fires once
    # per optimizer step
    mods = list(re.finditer(r"%\s*(\(?)\s*([A-Za-z_][\w.]*|\d+)(\s*[-+*/])?", guard))
    m = next((x for x in mods if not _ACCUM_NAME.search(x.group(2).rsplit(".", 1)[-1])), None)
    if mods and m is None:
        return False, None  # once per optimizer step
    if m and m.group(1) and m.group(3):
        return True, None  # an interval computed in the guard (PLLaVA ``global_step % (2 * log_freq + 3)``): not its first term
    if m:
        tok = m.group(2)
        if tok.isdigit():
            return True, float(tok)
        name = tok.rsplit(".", 1)[-1]
        settings = _by_attribute_path([s for s in f.effective(name, near=path) if not _TEST_PATH.search(s.path)], tok)
        vals = [n for s in settings if (n := as_number(s.value)) is not None and n > 0]
        if not vals and path is not None:
            vals = _derived_interval(f, name, path)
        return True, (min(vals) if vals else None)
    if re.search(r"(interval|every|freq|should_|next_|last_|time\.time|perf_counter|elapsed|_steps\b|_iters\b|\b(do|time_to|need)_\w+|_now\b)",
                 guard, re.I):
        return True, None
    # a flag the loop computed from a progress helper handed the interval (NeMo-Aligner ``run_val, save_model, is_train_end =
    # check_progress(self.step, self.max_steps, self.val_check_interval, self.cfg.save_interval, ...)`` then ``if
    # save_model:``): an interval guard, at the value of the interval setting named like the flag when one is known
    if path is not None:
        for part in re.split(r"\band\b", guard):
            name = part.strip().strip("()").strip()
            if re.fullmatch(r"[A-Za-z_]\w*", name) and (derived := _flag_interval(f, name, path)) is not None:
                return True, derived[0]
    # a guard made only of rank checks and on/off flags still fires every step; any other condition does not
    return (not all(_trivial_condition(part) for part in re.split(r"\band\b|\bor\b", guard))), None


def _by_attribute_path(settings: list[Any], attr: str) -> list[Any]:
    """The settings of a config section the guard's attribute path names, when its leaf is set in several (nanoT5's
    ``args.checkpoint.every_steps`` beside ``eval.every_steps`` and ``logging.every_steps`` in one YAML): those whose dotted
    key ends with the path's longest tail that any key ends with (``checkpoint.every_steps``); all of them otherwise."""
    parts = attr.split(".")
    for k in range(len(parts), 1, -1):
        tail = ".".join(parts[-k:])
        hit = [s for s in settings if s.key == tail or s.key.endswith("." + tail)]
        if hit:
            return hit
    return settings


#: a modulus that marks an accumulation boundary (``% accum_iters``, nanoT5's ``batch_id % args.optim.grad_acc == 0``)
_ACCUM_NAME = lazy_compile(r"(?i)accum|grad_?acc(_|$)|acc_steps$")
_INTERVAL_ARG = lazy_compile(r"(?i)interval|every|freq")


def _flag_interval(f: Facts, name: str, path: str) -> tuple[float | None] | None:
    """``name`` assigned in ``path`` from a call given an interval setting (``run_val, save_model, is_train_end =
    check_progress(step, max_steps, val_check_interval, cfg.save_interval, ...)``): (the interval,) where the argument
    that shares the flag's first word (``save_interval`` for ``save_model``) resolves to a number, else (None,); None when
    the flag is not such a result."""
    pat = re.compile(rf"^\s*\(?\s*(?:[A-Za-z_]\w*\s*,\s*)*{re.escape(name)}\s*(?:,\s*[A-Za-z_]\w*\s*)*\)?\s*=\s*[\w.]+\(")
    ff = f.files.get(path)
    for c in ff.calls if ff is not None else ():
        if not pat.match(c.text):
            continue
        leaves = [t.rsplit(".", 1)[-1] for t in (_text_of(a).strip() for a in [*c.args, *c.kwargs.values()])
                  if re.fullmatch(r"[A-Za-z_][\w.]*", t)]
        intervals = [x for x in leaves if _INTERVAL_ARG.search(x)]
        if not intervals:
            continue
        word = name.lower().split("_", 1)[0]
        for leaf in intervals:
            if leaf.lower().split("_", 1)[0] == word:
                vals = [n for s in f.effective(leaf, near=path) if not _TEST_PATH.search(s.path)
                        and (n := as_number(s.value)) is not None and n > 0]
                return (min(vals) if vals else None,)
        return (None,)
    return None


#: a condition that paces a report by steps or time (``should_update_logs``, ``should_log``, ``log_every``, ``is_log_step``)
_PACING = lazy_compile(r"(?i)should_|interval|every|freq|log_step|_due\b")


def _without_skips(guard: str) -> str:
    """The guard without the negated terms that an earlier early exit leaves on every later line of the loop
    (``if global_step <= args.last_step: continue`` when resuming, ``if batch_metrics.interrupted: ... return``): they hold on
    every step that runs, so they are no interval. A negated ``%`` term (``if step % 10 != 0: continue``) is kept."""
    node = parse_expr(guard)
    if node is None:
        return guard
    terms = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]
    # (an early exit on a condition's negation, ``if not trainer._logger_connector.should_update_logs: return`` in
    # flash-attention's SpeedMonitor, leaves ``not (not <condition>)``: the condition itself holds on the lines after it)
    # (only a pacing condition: ``if not train_summary_writer: return`` leaves a writer's presence, no interval: Ludwig)
    terms = [t.operand.operand if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and isinstance(t.operand, ast.UnaryOp)
             and isinstance(t.operand.op, ast.Not) and _PACING.search(ast.unparse(t.operand.operand)) else t for t in terms]
    keep = [t for t in terms if not (isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not)
                                     and not any(isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mod) for x in ast.walk(t.operand)))]
    if len(keep) == len(terms) and not any(isinstance(t, ast.UnaryOp) for t in terms):
        return guard
    return " and ".join(ast.unparse(t) for t in keep)


def _derived_interval(f: Facts, name: str, path: str) -> list[float]:
    """The interval a local name derives from a setting: ``log_iter_interval = train.log_interval * accum_iters``
    (litgpt) counts micro-batches, so it fires every ``log_interval`` optimizer steps. Read from the assignment
    line in the same file; factors about gradient accumulation only convert micro-steps to steps."""
    pat = re.compile(rf"^\s*{re.escape(name)}\s*(:[^=]+)?=\s*(.+)$")
    ff = f.files.get(path)
    for c in ff.calls if ff is not None else ():
        m = pat.match(c.text)
        if not m:
            continue
        expr = parse_expr(m.group(2))
        if expr is None or any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(expr)):
            continue  # ``x = min(x, self.total_steps)`` caps the value an earlier line gave: not where it comes from
        for node in ast.walk(expr):
            leaf = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if not leaf or leaf == name or "accum" in leaf.lower() or not re.search(r"interval|every|freq|steps", leaf, re.I):
                continue
            vals = [n for s in f.effective(leaf, near=path) if not _TEST_PATH.search(s.path) and (n := as_number(s.value)) is not None and n > 0]
            if vals:
                return vals
    return []


#: a step counter past the first step (``global_step != 0``, ``step > 0``, ``iteration >= 1``): true on every later step
_PAST_FIRST_STEP = lazy_compile(r"[\w.]*(step|iter|iteration)s?\s*(!=\s*0|>\s*0|>=\s*1)", re.I)
_RANKISH = lazy_compile(r"rank|main_process|master|process_index|is_world_process_zero|local_process|sync_gradients", re.I)


def _trivial_condition(part: str) -> bool:
    """A condition true on every step of the logging rank: a flag, a rank check, a None check."""
    p = part.strip()
    # a part of a split ``wandb_run and (not cfg.enable_fsdp or rank == 0)`` keeps one parenthesis of the group
    while p.startswith("(") and p.count("(") > p.count(")"):
        p = p[1:].strip()
    while p.endswith(")") and p.count(")") > p.count("("):
        p = p[:-1].strip()
    while p.startswith("(") and p.endswith(")"):
        p = p[1:-1].strip()
    if p.startswith("not "):
        p = p[4:].strip().strip("()").strip()
    if re.fullmatch(r"[\w.]+(\(\))?", p):
        return True  # ``args.with_tracking``, ``master_process``, ``accelerator.is_main_process``
    if MAIN_GUARD.fullmatch(p):
        return True  # the script's ``if __name__ == "__main__":`` body (llm.c ``train_gpt2.py``) runs whenever the script does
    if re.fullmatch(r"[\w.()]+\s+is\s+(not\s+)?None", p):
        return True
    if _PAST_FIRST_STEP.fullmatch(p):
        return True  # ``global_step != 0`` (GLaMM's per-step ``writer.add_scalar("train/lr", ...)``): every step but the first
    return bool(_RANKISH.search(p)) and not re.search(r"step|iter|epoch|batch", p, re.I)


def step_helpers(f: Facts) -> dict[tuple[str, str], list[Call]]:
    """Helpers a step loop calls in its own file, by (path, function name): the call sites in the loop.

    ``self.train_step_logs(...)`` in nanotron's loop runs ``wandb.log`` every step although the
    ``wandb.log`` line is in another method; one level is followed, within the file (methods and
    module functions of the training script), so a common name elsewhere does not match.
    """
    loops = step_loops(f)
    if not loops:
        return {}
    loop_keys = {(p, fn) for p, fn, _ in loops}
    out: dict[tuple[str, str], list[Call]] = {}
    for c in f.calls_in(p for p, _fn in loop_keys):
        if c.loop is None or (c.path, c.func) not in loop_keys or (c.path, c.func, c.loop) not in loops:
            continue
        direct = (c.name.count(".") == 1 and c.name.startswith("self.")) or "." not in c.name  # self.helper(...) / helper(...)
        if direct and c.short != c.func:
            out.setdefault((c.path, c.short), []).append(c)
    # one more level, into another file: a helper that reports through an object its class built from an imported class
    # (AReaL: ``self._export_and_commit_stats(...)`` in the loop -> ``self.stats_logger.commit(...)`` with
    # ``self.stats_logger = StatsLogger(config, ft_spec)`` -> ``logger.info`` in utils/stats_logger.py): that method runs at
    # the loop's call sites of the helper, when the helper calls it unconditionally
    for (path, name), sites in list(out.items()):
        ff = f.files.get(path)
        if ff is None:
            continue
        built = {a.target: m.group(1) for a in ff.attr_assigns
                 if isinstance(a.value, Expr) and (m := re.match(r"([A-Z]\w*)\(", a.value.text))}
        for c in ff.calls:
            if c.func != name or c.guard or c.name.count(".") != 2 or not c.name.startswith("self."):
                continue
            recv, meth = c.name.rsplit(".", 1)
            target = _class_file(f, path, built.get(recv))
            if target is not None and target != path and any(x.func == meth for x in f.files[target].calls):
                out.setdefault((target, meth), []).extend(sites)
    return out


def _not_a_checkpoint_save(f: Facts, c: Call) -> bool:
    """A ``save`` in the step loop that is not a checkpoint every step: a tracer's flush (AReaL ``perf_tracer.save(step=step)``),
    or the save method of a project saver object that checks its own frequency first (``self.saver.save(...)`` where
    ``Saver.save`` begins ``if not self.freq_ctl.check(...): return``): its interval is the saver's config, not the loop's."""
    if "." not in c.name:
        return False
    recv = c.name.rsplit(".", 1)[0]
    if _NOT_CKPT_OWNER.search(recv.rsplit(".", 1)[-1]):
        return True
    ff = f.files.get(c.path)
    if ff is None or recv.count(".") != 1 or not recv.startswith("self."):
        return False
    built = {a.target: m.group(1) for a in ff.attr_assigns if isinstance(a.value, Expr) and (m := re.match(r"([A-Z]\w*)\(", a.value.text))}
    target = _class_file(f, c.path, built.get(recv))
    return target is not None and any(x.func == c.short and _SELF_PACED.search(x.text) for x in f.files[target].calls)


#: a saver's own pacing inside its save method (``self.freq_ctl.check(...)``, ``self.interval``, ``should_save``)
_SELF_PACED = lazy_compile(r"(?i)freq|interval|every_n|should_save")


def _class_file(f: Facts, path: str, cls: str | None) -> str | None:
    """The project file that defines ``cls``, by the ``from <module> import <cls>`` of ``path``."""
    if cls is None:
        return None
    for i in f.files[path].imports:
        if i.name == cls:
            base = i.module.replace(".", "/")
            for cand in (f"{base}.py", f"{base}/__init__.py", f"src/{base}.py", f"src/{base}/__init__.py"):
                if cand in f.files:
                    return cand
    return None


_DIFFUSION = lazy_compile(r"diffusion|unet\d*|ddpm|ddim|vae", re.I)


def side_trainers(f: Facts) -> set[str]:
    """Training files of a diffusion side trainer in an LLM project (TRL's DDPO/AlignProp trainers import
    ``DDPOStableDiffusionPipeline``): their step loops train an image model, not the project's LLM, so what they save,
    log or report every step is context, not the project's setting. Empty when the project has no other training
    (a diffusion project is judged on its own loops). Memoised per scan."""
    memo = f._memo
    if ("side-trainers",) not in memo:
        diff = {i.path for i in f.imports("diffusers")} | {i.path for i in f.records("imports")
                                                           if i.name and _DIFFUSION.search(i.name)}
        loops = {p for p, _, _ in step_loops(f)}
        other = (loops - diff) or ({c.path for c in uses_hf_trainer(f)} - diff)
        memo[("side-trainers",)] = sorted(diff & loops) if other else []  # type: ignore[assignment]
    return set(memo[("side-trainers",)])  # type: ignore[arg-type]


#: a guard that tests a debug switch (``config.debug``, ``args.debug_mode``)
_DEBUG_GUARD = lazy_compile(r"(?i)\bdebug")
#: a step function a ``while`` training loop calls once per step (a module's own, imported: ``train_utils.train_step``)
_OWN_STEP_CALLS = frozenset({"self.step", "self.train_step", "self.training_step", "train_step", "training_step"})
#: an interval guard of the step counter (``step % log_every``, ``args.iteration % args.log_interval``)
_STEP_MODULO = lazy_compile(r"(step|iteration|iters?)\w*\s*%")


def per_step_calls(f: Facts, calls: list[Call], threshold: float,
                   spaced: list[tuple[Call, float | None]] | None = None) -> list[tuple[Call, float]]:
    """Calls that run every training step (or every < ``threshold`` steps): in a step loop or per-step hook,
    or in a helper of the same file that the step loop calls (at the interval of the guard around that call).
    ``spaced`` collects the other calls of the step loop: guarded at ``threshold`` steps or more (or an unknown interval)."""
    loops = step_loops(f)
    helpers = step_helpers(f) if calls else {}
    out: list[tuple[Call, float]] = []
    via: dict[int, list[Call]] = {}  # a helper's call in ``out``: the step loop's calls of that helper
    guards: dict[tuple[str | None, str], tuple[bool, float | None]] = {}  # _guard is pure: many calls share one guard

    def every(guard: str | None, path: str) -> tuple[bool, float | None]:
        if (guard, path) not in guards:
            guards[(guard, path)] = _guard(f, guard, path)
        return guards[(guard, path)]

    side = side_trainers(f)
    # a ``while step < max_steps:`` loop has no ``for`` iterable: a call beside the optimizer step of the same function, outside
    # any ``for``, under an interval guard (``if step % args.log_every == 0``) is taken as in that loop, at that interval
    while_steps = {(x.path, x.func) for x in f.calls("step") if x.loop is None and _is_step_call(x)}
    # a trainer's ``fit`` whose ``while`` loop calls its own step method (verl ``batch = self.step(metrics, ...)``) and then
    # reports with the step counter (``self.logger.log(data=metrics, step=self.global_steps)``): a call after the step call that
    # passes ``step=`` runs once per step (one before it, such as a validation before training, does not)
    own_steps: dict[tuple[str, str | None], int] = {}
    for x in f.calls("step", "train_step", "training_step"):
        # (or a module-level step function the ``while`` loop of a Megatron-style ``train()`` calls: GLM's ``lm_loss, ... =
        # train_step(train_data_iterator, model, optimizer, ...)``)
        if x.loop is None and (x.name in _OWN_STEP_CALLS or (x.short in _OWN_STEP_CALLS and not x.name.startswith("self."))) \
                and x.func not in _STEP_FUNCS:
            key = (x.path, x.func)
            own_steps[key] = min(own_steps.get(key, x.line), x.line)
    # ... and one hop further: a method of the same file that such a loop calls after its step call with the step counter
    # (Ludwig ``self.write_step_summary(train_summary_writer=..., step=progress_tracker.steps, ...)`` right after
    # ``self.train_step(...)`` in its ``while`` loop) runs once per step, at the guard around that call
    own_helpers: dict[tuple[str, str], list[Call]] = {}
    for (path, func), first in own_steps.items():
        for x in f.files[path].calls if path in f.files else ():
            if (x.func == func and x.loop is None and x.line > first
                    and ((x.name.count(".") == 1 and x.name.startswith("self.")) or "." not in x.name)
                    and (("step" in x.kwargs and re.search(r"step", _text_of(x.kwargs["step"])) is not None)
                         # or under an interval guard of the step counter (Ludwig ``if progress_tracker.steps %
                         # final_steps_per_checkpoint == 0: self._eval_and_checkpoint(...)``; GLM ``if args.iteration %
                         # args.log_interval == 0: report_iteration_metrics(summary_writer, ...)``), as in a ``while`` step loop
                         or _STEP_MODULO.search(x.guard or "") is not None)):
                own_helpers.setdefault((path, x.short), []).append(x)
    for c in calls:
        if _TEST_PATH.search(c.path) or c.path in side or _FINAL_SAVE.search(c.func or ""):
            continue  # a helper that ends the run (``_save_and_exit``) runs once, not every step
        in_step = (c.loop is not None and ((c.path, c.func, c.loop) in loops or _nested_in_step_loop(f, c, loops))) or (c.loop is None and c.func in _STEP_FUNCS) or (
            c.loop is None and (c.path, c.func) in while_steps and bool(c.guard) and "%" in (c.guard or "")) or (
            c.loop is None and c.line > own_steps.get((c.path, c.func), c.line) and "step" in c.kwargs
            and re.search(r"step", _text_of(c.kwargs["step"])) is not None)
        sites = [] if in_step or c.func is None or c.loop is not None else (
            helpers.get((c.path, c.func)) or own_helpers.get((c.path, c.func), []))
        if not in_step and not sites:
            continue
        if (sites and _flag_off_at_sites(f, c, sites)) or _once_only(f, c):
            continue
        if in_step and c.guard and _DEBUG_GUARD.search(c.guard) and guard_off(f, c):
            continue  # PLLaVA: ``if config.debug and global_step % (2 * log_freq + 3) == 0: logger.info(...); break``, debug off
        if sites and all(_nonfinite_branch(s.guard) for s in sites):
            continue  # a handler the loop calls only on a non-finite loss (cramming ``engage_troubleshooting``): not each step
        cite = c  # the call a spaced (guarded) site is cited by: the helper's call site when that site carries the guard
        if in_step:
            guarded, n = every(c.guard, c.path)
        else:  # the helper's own guard and the guard around its call site both gate it: the sparser one wins
            own = every(c.guard, c.path)
            per_site = [every(s.guard, s.path) for s in sites]
            if own[0] and (own[1] is not None or not all(g for g, _ in per_site) or not all("%" in (x.guard or "") for x in sites)):
                guarded, n = own
            elif all(g for g, _ in per_site):
                # the call sites' modulo guards (a helper's own condition of unknown interval, ``if
                # cfg.get("async_save", False):``, does not hide the loop's ``if step % save_freq == 0``)
                known = [x for _, x in per_site if x is not None]
                guarded, n = True, (min(known) if len(known) == len(per_site) else None)
                cite = sites[0]  # the interval is the call site's, whatever flag the helper tests itself
            else:
                guarded, n = False, None
        if not guarded:
            out.append((c, 1.0))
        elif n is not None and n < threshold:
            out.append((c, n))
        elif spaced is not None:
            spaced.append((cite, n))
        if sites and (guarded is False or (n is not None and n < threshold)):
            via[id(c)] = sites
    # a logging wrapper's own body (llm.c ``def print0(*args): if rank == 0: print(*args)``) is its call sites' log, cited
    # once, at the site in the loop that is itself in the list
    hit = {(c.path, c.line) for c, _ in out}
    return [(c, n) for c, n in out if not (id(c) in via and any((s.path, s.line) in hit for s in via[id(c)]))]


def _nested_in_step_loop(f: Facts, c: Call, loops: set[tuple[str, str | None, str]]) -> bool:
    """A call of an inner loop whose iterable is evaluated in a step loop (``for name, meter in metric_logger.meters.items():
    log_writer.add_scalar(...)`` in LLaMA2-Accessory's step loop): the call that builds the inner loop's iterable
    (``metric_logger.meters.items``, on the ``for`` line that opens it) comes before it in the same function and belongs to a
    step loop."""
    it = c.loop or ""
    if "(" not in it or c.path not in f.files:
        return False
    return any(x.func == c.func and x.line < c.line and x.loop != c.loop and (x.path, x.func, x.loop) in loops
               and (x.name + "(") in it and x.text.lstrip().startswith("for ") and it in x.text for x in f.files[c.path].calls)


def _once_only(f: Facts, c: Call) -> bool:
    """A branch that runs once: its guard tests a flag (``if not self._first_step_finished:``, ``if self._t0 is None:``) that
    the same function then sets (``self._first_step_finished = True``), so the call runs on the first step only (oumi's MFU
    callback logs "First step time" in ``on_step_end`` this way): not per-step logging."""
    if not c.guard or c.func is None:
        return False
    node = parse_expr(c.guard)
    terms = node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node] if node is not None else []
    for t in terms:
        flag, want = None, None
        if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and isinstance(t.operand, (ast.Name, ast.Attribute)):
            flag, want = ast.unparse(t.operand), "true"
        elif (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Is) and isinstance(t.comparators[0], ast.Constant)
              and t.comparators[0].value is None and isinstance(t.left, (ast.Name, ast.Attribute))):
            flag, want = ast.unparse(t.left), "set"
        if flag is None:
            continue
        for a in f.files[c.path].attr_assigns if c.path in f.files else ():
            if a.func == c.func and a.target.rsplit(".", 1)[-1] == flag.rsplit(".", 1)[-1] and a.target.endswith(flag.split(".", 1)[-1]):
                if (want == "true" and truthy(a.value) is True) or (want == "set" and a.value is not None):
                    return True
    return False


def _flag_off_at_sites(f: Facts, c: Call, sites: list[Call]) -> bool:
    """A helper's branch under a bare keyword flag that another caller turns on explicitly (lmms-engine
    ``_check_eval_results(rank, wait_until_complete=True)`` after the loop) while the step loop's call does not pass it
    (``self._check_eval_results(rank)``): the flag keeps its default there, off, so the branch does not run each step."""
    if not c.guard:
        return False
    flags = [t.strip() for t in re.split(r"\band\b", _without_skips(c.guard)) if re.fullmatch(r"\s*[A-Za-z_]\w*\s*", t)]
    others = [x for x in f.calls(c.func or "") if x.short == c.func and x not in sites]
    return any(all(g not in s.kwargs for s in sites) and any(truthy(x.kwargs.get(g)) is True for x in others) for g in flags)


def _spaced_detail(what: str, spaced: list[tuple[Call, float | None]]) -> str:
    """The sane detail cited from guarded calls in the step loop (the site and interval that make it sane)."""
    parts: list[str] = []
    # up to three different readings (direct-preference-optimization: three W&B calls of its evaluation block read alike,
    # the training metrics' call after them is paced by the clock)
    for c, n in spaced:
        if len(set(parts)) >= 3:
            break
        name = _guard_setting(c.guard)
        timed = _TIME_PACED.search(c.guard or "")
        if timed:  # ``time.time() - last_log > self.config.minimum_log_interval_secs``: paced by the clock, not by steps
            parts.append(f"{c.short}() at most once per `{timed.group(1).rsplit('.', 1)[-1]}` seconds")
        elif n is not None:
            unit = "examples" if _COUNTS_EXAMPLES.search(c.guard or "") else "steps"  # ``self.example_counter % eval_every``
            parts.append(f"{c.short}() every {int(n) if float(n).is_integer() else n} {unit}" + (f" ({name})" if name else ""))
        else:
            parts.append(f"{c.short}() under `{c.guard}`")
    # two helpers cited by the same guarded call site in the loop read the same (nanotron's save_checkpoint)
    return f"{what} in the training-step loop only under a guard: " + ", ".join(dict.fromkeys(parts))


#: a guard that paces by elapsed time (``time.time() - last_log > self.config.minimum_log_interval_secs``)
_TIME_PACED = lazy_compile(r"time\.(?:time|perf_counter|monotonic)\(\)\s*-\s*[\w.]+\s*>=?\s*([A-Za-z_][\w.]*)")
#: an interval guard over a count of examples rather than steps (``self.example_counter % self.config.eval_every == 0``)
_COUNTS_EXAMPLES = lazy_compile(r"\b\w*(example|sample)s?_?(counter|count|seen|idx)\w*\s*%", re.I)


def _guard_setting(guard: str | None) -> str | None:
    """The setting after ``%`` in an interval guard (``iter_num % eval_interval == 0`` -> ``eval_interval``), if a name."""
    # as the interval itself is read (:func:`_guard`): the first modulus that is no accumulation boundary (open_clip's
    # ``(i + 1) % args.accum_freq`` early exit before ``i_accum % args.log_every_n_steps == 0``)
    mods = re.finditer(r"%\s*\(?\s*([A-Za-z_][\w.]*)", _without_skips(guard) if guard else "")
    m = next((x for x in mods if not _ACCUM_NAME.search(x.group(1).rsplit(".", 1)[-1])), None)
    return m.group(1).rsplit(".", 1)[-1] if m else None


def _spaced_values(spaced: list[tuple[Call, float | None]]) -> dict[str, Any]:
    """The interval settings that gate the guarded calls (``eval_interval: 2000``): for the report's recipe distribution."""
    out: dict[str, Any] = {}
    for c, n in spaced[:3]:
        name = _guard_setting(c.guard)
        if name and n is not None and name not in out:
            out[name] = int(n) if float(n).is_integer() else n
    return out


def _adapter_only(f: Facts, ctx: Context) -> bool:
    for s in f.effective("finetuning_type", "adapter", "peft_type", "train_type"):
        if isinstance(s.value, str) and s.value.lower() in {"lora", "qlora", "dora", "ia3", "adalora", "loha", "lokr", "prefix", "prompt"}:
            return True
    if any(truthy(s.value) for s in f.effective("use_peft", "use_lora", "lora_enable", "use_qlora")):
        return True
    # a PEFT wrapper behind a rank or switch that is off (``if lora_rank > 0:`` with ``lora.rank: 0``) trains no adapter
    return any(not guard_off(f, c) and not callers_off(f, c) for c in f.calls(*_PEFT_WRAPPERS))


_ADAPTER_SWITCHES = ("use_peft", "use_lora", "lora_enable", "use_qlora")
_ADAPTER_KINDS = ("finetuning_type", "adapter", "peft_type", "train_type")


def _adapter_file(f: Facts, path: str) -> bool | None:
    """Whether the launch or recipe in ``path`` trains an adapter (``--lora_enable True``, ``finetuning_type: lora``): True,
    False when it names a full fine-tune, None when it says nothing."""
    for s in f.settings(*_ADAPTER_SWITCHES, *_ADAPTER_KINDS):
        if s.path != path or s.source not in ("launcher", "config"):
            continue
        if s.name in _ADAPTER_KINDS:
            return isinstance(s.value, str) and s.value.lower() in {"lora", "qlora", "dora", "ia3", "adalora", "loha", "lokr", "prefix", "prompt"}
        if (t := truthy(s.value)) is not None:
            return t
    return _launched_script_adapter(f, path)


_PEFT_WRAPPERS = ("get_peft_model", "LoraConfig", "prepare_model_for_kbit_training")


#: an ``if`` that switches adapters on or off (``if training_args.lora_enable:``, ``if model_args.use_peft``)
_ADAPTER_GUARD = lazy_compile(r"(?i)lora|peft|adapter|finetuning_type|train_type|qlora")


def _launched_script_adapter(f: Facts, path: str) -> bool | None:
    """Whether the script a launch in ``path`` runs wraps the model in an adapter itself: a project that keeps one script
    per method (Llama2-Chinese ``finetune_lora.sh`` runs ``finetune_clm_lora.py``, which calls ``get_peft_model``;
    ``finetune.sh`` runs ``finetune_clm.py``, which calls no PEFT wrapper). True or False when every launch of ``path``
    runs a script of the project and they agree; None otherwise, or when a wrapper of the script sits under an adapter switch."""
    marks: set[bool] = set()
    for x in f.launches():
        if x.path != path:
            continue
        files = [p for p in f.files if p.endswith(".py") and runs_file(x.script, p)]
        if len(files) != 1:
            return None
        wraps = [c for c in f.calls(*_PEFT_WRAPPERS) if c.path == files[0]]
        if any(_ADAPTER_GUARD.search(c.guard or "") for c in wraps):
            return None  # (an adapter switch of the script decides: read from the launch's flags above, or the code's default)
        marks.add(any(not guard_off(f, c) and not callers_off(f, c) for c in wraps))
    return marks.pop() if len(marks) == 1 else None


def _per_recipe_threshold(f: Facts, ctx: Context, items: list[Interval], threshold: int) -> Callable[[Interval], int]:
    """The interval below which a save is too frequent, per recipe: 10 steps for a recipe that trains an adapter, 50 for a
    full fine-tune of a model of 1B or more. A project with both (mPLUG-Owl2's ``finetune_lora.sh`` with ``--lora_enable True``
    beside ``finetune.sh``, a 7B full fine-tune, both at ``--save_steps 10``) is judged recipe by recipe: the adapter
    recipes' leniency does not carry over to the full ones."""
    small_model = ctx.project.params_billions is not None and ctx.project.params_billions < 1
    if threshold == 50 or small_model:
        return lambda i: threshold
    files = {getattr(i.fact, "path", "") for i in items if getattr(i.fact, "source", None) in ("launcher", "config")}
    marks = {p: _adapter_file(f, p) for p in files}
    if marks and True not in marks.values() and _adapters_in_other_runs(f, files):
        # OpenChatKit: the GPipe launches (``--checkpoint-steps 10``) fine-tune 3B-20B models in full; the only PEFT wrapper
        # is in ``training/lora/example/redpajama-incite-chat-3b.py``, a run of its own that none of them starts
        return lambda i: 50 if getattr(i.fact, "path", "") in marks else threshold
    if True not in marks.values() or len(files) < 2:
        return lambda i: threshold
    # recipes that say nothing about adapters run the code's default: full, since some recipes must switch the adapter on
    return lambda i: 10 if marks.get(getattr(i.fact, "path", "")) else 50 if getattr(i.fact, "path", "") in marks else threshold


def _adapters_in_other_runs(f: Facts, recipe_files: set[str]) -> bool:
    """Every PEFT wrapper of the project sits in a script that trains on its own (a Trainer or a backward pass of its own)
    that none of the launches in ``recipe_files`` runs: an adapter example beside them, not their training."""
    peft = {c.path for c in f.calls(*_PEFT_WRAPPERS) if not _TEST_PATH.search(c.path)}
    if not peft:
        return False
    launched = {p for x in f.launches() if x.path in recipe_files and x.script
                for p in [resolve_file(f, x.script.rsplit("/", 1)[-1] if "$" in x.script else x.script)] if p}
    if not launched:
        return False
    own = {c.path for c in f.calls("backward", "train") if c.path in peft}
    return peft <= own and not (peft & launched)


def _finding(fact: Any, key: str, value: Any) -> Evidence:
    return Facts.ev(fact, key=key, value=value)


def _outcome(bad: list[tuple[Any, str, float]], ok: list[Interval], what: str, threshold: int, values: dict[str, Any],
             sane_detail: str, spaced: list[tuple[Call, float | None]] | None = None, extra_ev: tuple[Evidence, ...] = ()) -> Outcome:
    """Too frequent: ``unused`` with the findings. Otherwise ``used`` only with the site that makes it sane (the interval
    setting, the guarded call, or the HF Trainer whose default applies); with nothing seen, ``n/a`` "not judged"."""
    if bad:
        findings = [_finding(x, k, int(n) if float(n).is_integer() else n) for x, k, n in bad]
        # recipes that vote (alignment-handbook: logging_steps 5 in 9 recipes, 1 in 3): the headline of a distribution is the
        # interval most of them set, not its extreme (ties: the more frequent interval); places in code (a console logger's
        # default 1 beside evaluator callbacks' 5) each run: the smallest interval among them is the headline
        # (a code default that recipes leave in place is one more such vote: ms-swift's ``logging_steps`` 5 in 13 recipes and
        # by default, 1 in 11, is "every 5 steps", not "every step")
        if all(isinstance(x, Setting) for x, _, _ in bad) and any(x.source in ("config", "launcher") for x, _, _ in bad):
            counts = Counter(n for _, _, n in bad)
            worst = max(counts, key=lambda n: (counts[n], -n))
        else:
            worst = min(n for _, _, n in bad)
        worst_txt = "every step" if worst == 1 else f"every {int(worst)} steps"
        return Outcome(N, findings, f"{what} {worst_txt} (threshold: every {threshold} steps or more)", values, findings=findings)
    if sane_detail.startswith(NOT_JUDGED):
        return Outcome(Status.NA, [], sane_detail, values)  # nothing seen: nothing claimed
    ev = [_finding(i.fact, i.key, i.steps if i.steps is None or not float(i.steps).is_integer() else int(i.steps)) for i in ok]
    ev += [Facts.ev(c) for c, _ in (spaced or [])[:3]]
    return Outcome(U, ev + list(extra_ev), sane_detail, values)


#: LAVIS ``RunnerBase``: the epoch loop hands each epoch to the task's step loop and saves once per epoch after it
_EPOCH_RUNNER = {
    "lavis/runners/runner_base.py": (
        "import os\nimport torch\n\n\nclass RunnerBase:\n    def train(self):\n"
        "        for cur_epoch in range(self.start_epoch, self.max_epoch):\n"
        "            train_stats = self.train_epoch(cur_epoch)\n            self._save_checkpoint(cur_epoch, is_best=False)\n\n"
        "    def train_epoch(self, epoch):\n        return self.task.train_epoch(epoch=epoch, model=self.model, data_loader=self.train_loader)\n\n"
        "    def _save_checkpoint(self, cur_epoch, is_best=False):\n        save_obj = {'model': self.model.state_dict(), 'epoch': cur_epoch}\n"
        "        torch.save(save_obj, os.path.join(self.output_dir, f'checkpoint_{cur_epoch}.pth'))\n"),
    "lavis/tasks/base_task.py": (
        "class BaseTask:\n    def train_epoch(self, epoch, model, data_loader, optimizer):\n"
        "        for i in range(len(data_loader)):\n            loss = model(next(data_loader))['loss']\n"
        "            loss.backward()\n            optimizer.step()\n            optimizer.zero_grad()\n"),
}


def _epoch_saves(f: Facts, calls: list[Call]) -> list[Call]:
    """Save calls in an epoch loop of a training function, outside its step loop (torchtune: ``self.save_checkpoint(
    epoch=curr_epoch)`` at the end of ``for curr_epoch in range(self.epochs_run, self.total_epochs):``): once per epoch."""
    step_funcs = {(p, fn) for p, fn, _ in step_loops(f)}
    side = side_trainers(f)

    def runs_epochs(c: Call) -> bool:
        # or an epoch loop that hands each epoch to a training function (LAVIS ``RunnerBase.train``: ``train_stats =
        # self.train_epoch(cur_epoch)`` then ``self._save_checkpoint(cur_epoch)`` in ``for cur_epoch in range(...)``)
        return (c.path, c.func) in step_funcs or (c.path in f.files and any(
            x.func == c.func and x.loop == c.loop and _EPOCH_TRAIN_CALL.search(x.short) for x in f.files[c.path].calls))

    return [c for c in calls if c.loop is not None and "epoch" in c.loop.lower() and runs_epochs(c)
            and not _TEST_PATH.search(c.path) and c.path not in side]


#: a call that trains one epoch (``train_epoch``, ``train_one_epoch``, ``_train_epoch``, ``run_epoch``)
_EPOCH_TRAIN_CALL = lazy_compile(r"^_?(train_(one_)?epoch|run_(train_)?epoch|train_single_epoch)$")


def _hf_default_site(f: Facts, name: str) -> Evidence | None:
    """The HF Trainer (or its arguments) whose default for ``name`` applies: the evidence a default-based "sane" cites.
    A site in a script that runs a trainer's ``train()`` comes first (:func:`hf_sites_training_first`)."""
    sites = [x for x in hf_sites_training_first(f) if not _TEST_PATH.search(x.path)]
    # a trainer that passes the value, computed in code (BELLE ``TrainingArguments(..., save_steps=eval_and_save_steps)``):
    # the default does not apply there
    # (or whose file sets it on the arguments object: BELLE ``training_args.save_steps = training_args.eval_steps``)
    sites = [x for x in sites if not (isinstance(x, Call) and name in x.kwargs) and _attr_set(f, x.path, name) is None]
    return Facts.ev(sites[0], key=name, value=HF_DEFAULTS[name]) if sites else None


def _attr_set(f: Facts, path: str, name: str) -> Any:
    """Where ``path`` sets ``name`` on the trainer's arguments: an assignment ``<args>.<name> = ...``, or an arguments
    call of its own that passes it (``RewardConfig(..., save_steps=eval_steps)`` beside ``RewardTrainer(args=training_args)``);
    None when it does not."""
    ff = f.files.get(path)
    if ff is None:
        return None
    return next((a for a in ff.attr_assigns if a.target.rsplit(".", 1)[-1] == name), None) or next(
        (c for c in ff.calls if name in c.kwargs and c.short.endswith(("Arguments", "Config"))), None)


def _computed_kw(f: Facts, name: str) -> tuple[str, int, str] | None:
    """Where the first HF trainer site (training scripts first) gets ``name`` from code: a keyword computed in code or an
    assignment to the arguments object in its file, as (path, line, the value as written)."""
    for x in hf_sites_training_first(f):
        if _TEST_PATH.search(x.path):
            continue
        if isinstance(x, Call) and isinstance(x.kwargs.get(name), Expr):
            return x.path, x.kw_line(name), f"{name}={x.kwargs[name].text}"
        a = _attr_set(f, x.path, name)
        if isinstance(a, Call):
            return a.path, a.kw_line(name), f"{name}={a.kwargs[name].text if isinstance(a.kwargs[name], Expr) else a.kwargs[name]!r}"
        if a is not None:
            return a.path, a.line, a.text.strip()
    return None


def _strategy_values(f: Facts, node: ast.expr | None) -> set[str] | None:
    """The values an HF ``*_strategy`` expression can take: a string, each branch of a conditional expression
    (``config.eval_strategy if config.valid_split is not None else "no"``), or an option read through an object
    (``config.eval_strategy``: the concrete values its settings give it). None when any of them is unknown."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value.lower()}
    if isinstance(node, ast.Constant) and node.value is False:
        return {"no"}  # ``--save_strategy "no"`` (Medusa's launches) and YAML ``save_strategy: no`` read as a boolean
    if isinstance(node, ast.IfExp):
        a, b = _strategy_values(f, node.body), _strategy_values(f, node.orelse)
        return None if a is None or b is None else a | b
    if isinstance(node, ast.Attribute) and re.search(r"\.(EPOCH|NO)$", ast.unparse(node)):
        return {node.attr.lower()}  # IntervalStrategy.EPOCH / SaveStrategy.NO
    if isinstance(node, (ast.Attribute, ast.Name)):
        name = node.attr if isinstance(node, ast.Attribute) else node.id
        vals = [x.value for x in f.settings(name) if not isinstance(x.value, Expr) and not _TEST_PATH.search(x.path)]
        if vals and all(isinstance(v, str) for v in vals):
            return {v.lower() for v in vals}
    return None


def _no_step_saves(f: Facts) -> Setting | None:
    """An HF ``save_strategy`` that every setting makes ``"no"`` or ``"epoch"``: no checkpoint on a step interval, so the
    HF default ``save_steps`` (500) never applies. The first such setting, or None when any may save by steps."""
    sites = [s for s in f.effective("save_strategy") if not _TEST_PATH.search(s.path)]
    if not sites:
        return None
    for s in sites:
        node = parse_expr(s.value.text) if isinstance(s.value, Expr) else ast.Constant(s.value)
        vals = _strategy_values(f, node)
        if not vals or not vals <= {"no", "epoch"}:
            return None
    return sites[0]


def recipe_spread(items: list[Interval]) -> str:
    """How two recipes that disagree set an interval, for the detail of a sane verdict (DISC-LawLLM: ``save_steps`` 10000
    in its full fine-tune, 500 in its LoRA recipe): "" when they agree. The headline value is the smaller one
    (:func:`_values`); the spread says that the other recipe checkpoints or logs far less often."""
    per: dict[str, dict[Any, list[Any]]] = {}
    for i in items:
        if i.kind == "steps" and i.steps is not None and isinstance(i.fact, Setting) and i.fact.source in ("config", "launcher"):
            n = int(i.steps) if float(i.steps).is_integer() else i.steps
            per.setdefault(i.name, {}).setdefault(n, []).append(i.fact)
    parts = []
    for name, by in per.items():
        # (three recipes or more are voted, and the vote's note gives their distribution: see _values)
        if len(by) > 1 and sum(map(len, by.values())) < 3:
            shown = ", ".join(f"{n} in {x[0].path}:{x[0].line}" + (f" (+{len(x) - 1})" if len(x) > 1 else "")
                              for n, x in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:4])
            parts.append(f"{name} differs by recipe: {shown}")
    return "; ".join(parts)


def _values(items: list[Interval], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    vals: dict[str, Any] = {}
    # recipes that each set a name (config files, launches) are read by the interval most of them set, as a finding's
    # headline is (see _outcome): LLaMA-VID's ``save_steps`` is 1000 in 11 recipes and 200 in 1, not "save_steps=200"
    # (a code default that recipes leave in place votes with them: ms-swift's ``save_steps`` default beside 300 recipes)
    voted: dict[str, Counter[Any]] = {}
    for i in items:
        if i.steps is not None and i.kind == "steps" and isinstance(i.fact, Setting):
            voted.setdefault(i.name, Counter())[int(i.steps) if float(i.steps).is_integer() else i.steps] += 1
    recipes = {i.name for i in items if isinstance(i.fact, Setting) and i.fact.source in ("config", "launcher")}
    for i in items:
        if i.name in voted and i.name in recipes and i.kind == "steps" and all(
                isinstance(x.fact, Setting) for x in items if x.name == i.name and x.steps is not None):
            counts = voted[i.name]
            if not isinstance(vals.get(i.name), (int, float)):  # (a number of steps outranks a kind, as below)
                vals[i.name] = max(counts, key=lambda n: (counts[n], -n))
            continue
        if i.steps is not None and i.kind == "epoch":
            # (a count of epochs, LLaMA2-Accessory ``--save_interval 1``: "number of epochs between model saving")
            n = int(i.steps) if float(i.steps).is_integer() else i.steps
            vals.setdefault(i.name, f"{n} epoch" + ("" if n == 1 else "s"))
        elif i.steps is not None:
            v = int(i.steps) if float(i.steps).is_integer() else i.steps
            old = vals.get(i.name)
            # a number of steps outranks a kind that another place gives the same name (``checkpointing_steps: epoch`` in
            # one recipe, ``500`` in another): the smallest number, whichever came first
            vals[i.name] = min(old, v) if isinstance(old, (int, float)) else v
        elif i.kind in {"epoch", "time"} and i.name not in vals:
            vals[i.name] = i.kind
    vals.update(extra or {})
    return vals


#: a save guarded by a step counter's multiple of ``save_freq`` (``self.global_step % self.config.trainer.save_freq == 0``)
_STEP_MOD_SAVE_FREQ = lazy_compile(r"\bglobal_steps?\s*%\s*[\w.]*\bsave_freq\b|\bsteps?\s*%\s*[\w.]*\bsave_freq\b")


_SAVE_KEYS = ("save_steps", "save_interval", "checkpoint_interval", "save_every_n_steps", "every_n_train_steps", "save_interval_steps",
              "save_every", "ckpt_every", "checkpoint_every", "save_every_steps",
              "checkpointing_steps", "checkpoint_factor", "save_iters", "checkpoint_every_n_steps", "save_freq_steps", "ckpt_interval",
              "save_iteration_interval",  # LLaMA2-Accessory: "number of iterations between within-epoch model saving"
              "checkpoint_steps")  # OpenChatKit ``--checkpoint-steps``: ``if pipe.global_step % args.checkpoint_steps == 0: save_checkpoint``
_SAVE_CALLS = ("torch.save", "save_checkpoint", "save_state", "save_pretrained", "save_model", "torch.distributed.checkpoint.save",
               "save_state_dict",
               "save_training_checkpoint")  # cramming's engine: model, optimizer and scheduler state of the run


def _interval_band(*edges: int):  # type: ignore[no-untyped-def]
    """The verdict band of an interval (steps) for recipes that vote on it: under each threshold, or sane (>= the last
    threshold, a ratio < 1 or off)."""
    def band(n: float) -> str:
        if n < 1:
            return f"every {edges[-1]} steps or more (or a ratio, or off)"
        lo = 1
        for e in edges:
            if n < e:
                return f"every {lo}-{e - 1} steps"
            lo = e
        return f"every {edges[-1]} steps or more (or a ratio, or off)"
    return band


# recipes that disagree on a save interval vote by I3's verdict (under 10 / 10-49 / 50 steps or more)
register_vote_bands("^(" + "|".join(_SAVE_KEYS) + ")$", _interval_band(10, 50))


def _band_for(name: str):  # type: ignore[no-untyped-def]
    """The verdict band of an interval setting for a registry vote: I3's for save intervals, I4/I5's otherwise."""
    return _interval_band(10, 50) if name in _SAVE_KEYS else _interval_band(10)

#: a checkpointer's own config object (torchtitan ``CheckpointManager.Config(interval=500)``): its ``interval`` is the save interval
_CKPT_CONFIG = lazy_compile(r"(?i)(^|\.)\w*checkpoint\w*(\.config)?$")


def _checkpointer_intervals(f: Facts) -> list[Interval]:
    """``interval=`` of a checkpointer's config object, voted over config-registry recipes with the config-class default
    (``interval: int = 500`` in the checkpointer's ``Config``) for recipes that leave it unset; debug/test recipes aside."""
    from ._registry import debug_recipe, recipe_of, recipe_vote

    calls = [c for c in f.calls_with_kw("interval") if _CKPT_CONFIG.search(".".join(c.name.split(".")[-2:])) and not _TEST_PATH.search(c.path)
             and not debug_recipe(f, c) and as_number(c.kwargs["interval"]) is not None]
    if not calls:
        return []
    fields = [x for x in f.records("fields") if x.name == "interval" and re.search(r"checkpoint", f"{x.path} {x.owner}", re.I)
              and as_number(x.default) is not None and not _TEST_PATH.search(x.path)]
    default = (fields[0], float(as_number(fields[0].default) or 0)) if len({repr(x.default) for x in fields}) == 1 else None
    inside = [(c, float(as_number(c.kwargs["interval"]) or 0)) for c in calls if recipe_of(f, c) is not None]
    vote = recipe_vote(f, inside, default, _interval_band(10, 50)) if inside else None
    if vote is None:
        return [Interval(c, f"{c.short}(interval=)", "checkpoint_interval", *interval(as_number(c.kwargs["interval"]))) for c in calls]
    f._memo[("registry-vote-note", "checkpoint_interval")] = [vote.text("checkpoint interval")]  # type: ignore[list-item]
    out: list[Interval] = []
    for x in vote.kept:
        v = x.default if x is (default[0] if default else None) else x.kwargs["interval"]
        key = f"{x.owner}.interval" if hasattr(x, "owner") else f"{x.short}(interval=)"
        out.append(Interval(x, key, "checkpoint_interval", *interval(as_number(v))))
    return out


#: config classes whose ``save_interval`` flushes traces, profiles or logs (AReaL ``PerfTracerConfig.save_interval: int = 1``,
#: "Flush trace events to disk every N calls"): not a checkpoint interval
_NOT_CKPT_OWNER = lazy_compile(r"(?i)(trac(e|er|ing)|profil|telemetry|monitor)\w*$")


def _not_a_checkpoint(fact: Any) -> bool:
    """A dataclass field default of a tracer/profiler config class (its key is ``Owner.name``)."""
    return (isinstance(fact, Setting) and fact.source == "field-default" and "." in fact.key
            and bool(_NOT_CKPT_OWNER.search(fact.key.rsplit(".", 1)[0])))


_FINAL_SAVE = lazy_compile(r"(?i)(exit|preempt|on_demand|emergency|interrupt|on_signal|sigterm|on_train_end)")


#: the receiver of a checkpoint object's save (``self.ckpt_callback``, ``checkpoint_manager``, ``self.checkpointer``)
_CKPT_RECEIVER = lazy_compile(r"(?i)^_*(ckpt|checkpoint)")


def save_sites(f: Facts) -> list[Call]:
    """Checkpoint saves: the save calls themselves, and calls of the project's own helpers whose body saves
    (llama-recipes ``save_peft_checkpoint(model, output_dir)`` -> ``model.save_pretrained``; ``save_model_checkpoint`` ->
    ``torch.save``), so that a helper called once per epoch is read as a per-epoch save."""
    direct = [c for c in f.calls(*_SAVE_CALLS) if c.short != "save_pretrained" or "tokenizer" not in c.text.lower()]
    # a save method of a checkpoint object (NeMo-Aligner ``self.ckpt_callback.custom_save(monitor_candidates=...)``, the
    # Lightning checkpoint callback's save patched by the package): a checkpoint save, so the trainer's own ``save`` method
    # that calls it is a save helper, and the ``self.save(...)`` of its step loop a checkpoint site
    direct += [c for c in f.calls_where(lambda s: "save" in s.lower()) if c not in direct and "." in c.name
               and _CKPT_RECEIVER.search(c.name.rsplit(".", 1)[0].rsplit(".", 1)[-1]) and not _TEST_PATH.search(c.path)]
    # a helper that saves only every N steps itself (OpenRLHF ``save_logs_and_checkpoints``: ``if global_step % save_steps == 0``)
    # is judged by that guard, where the step loop calls it (step_helpers)
    gated = {c.func for c in direct if c.func and "%" in (c.guard or "")}
    helpers = {c.func for c in direct if c.func and re.search(r"save|checkpoint|ckpt", c.func, re.I) and c.func not in gated
               and not _TEST_PATH.search(c.path)}
    via = [c for c in f.calls(*sorted(helpers)) if c.func not in helpers and c.short in helpers and c not in direct] if helpers else []
    return direct + [c for c in via if not _paced_by_base(f, c, helpers)]


def _paced_by_base(f: Facts, c: Call, helpers: set[str]) -> bool:
    """``self.X(...)`` resolved through the calling class's bases to a method X that saves only under a ``%`` guard of the
    step (ROLL: every pipeline's loop calls ``self.do_checkpoint(global_step=global_step)``; ``BasePipeline.do_checkpoint``
    hands the save to each cluster's ``do_checkpoint`` only ``if global_step > 0 and (global_step % save_steps == 0 ...)``),
    though a worker's method of the same name saves unguarded."""
    if c.name != f"self.{c.short}":
        return False
    span = class_span_at(f, c.path, c.line)
    if span is None:
        return False
    for base in getattr(span, "bases", ()) or ():
        target = _class_file(f, c.path, str(base).rsplit(".", 1)[-1])
        if target is None:
            continue
        body = [x for x in f.files[target].calls if x.func == c.short]
        saves = [x for x in body if x.short in helpers or x.short in _SAVE_CALLS or x.short == c.short]
        if saves and all("%" in (x.guard or "") for x in saves):
            return True
    return False


#: an RL trainer whose step loop calls its engine's policy update and reports through helper objects (AReaL-like)
_PPO_SAVER = ("class Saver:\n    def __init__(self, config):\n        self.freq_ctl = FrequencyControl(config.freq_steps)\n\n"
             "    def save(self, engine, step):\n        if not self.freq_ctl.check(steps=1):\n            return\n"
             "        engine.save(self.path(step))\n")
_PPO_STATS = ("import logging\n\nlogger = logging.getLogger('stats')\n\nclass StatsLogger:\n    def commit(self, step, stats):\n"
             "        logger.info(f'Train step {step + 1} done.')\n        logger.info(str(stats))\n")
_PPO_TRAINER = ("from pkg.utils.saver import Saver\nfrom pkg.utils.stats_logger import StatsLogger\n\nclass PPOTrainer:\n"
               "    def __init__(self, config):\n        self.saver = Saver(config.saver)\n        self.stats_logger = StatsLogger()\n\n"
               "    def train(self, max_steps):\n        for global_step in range(0, max_steps):\n"
               "            batch = self.actor.prepare_batch(self.dataloader)\n            self.actor.ppo_update(batch)\n"
               "            self.saver.save(self.actor, global_step)\n            self._export_and_commit_stats(global_step)\n\n"
               "    def _export_and_commit_stats(self, global_step):\n        stats = self.actor.export_stats()\n"
               "        self.stats_logger.commit(global_step, stats)\n")
_PPO_FILES = {"pkg/utils/saver.py": _PPO_SAVER, "pkg/utils/stats_logger.py": _PPO_STATS, "pkg/trainer/rl_trainer.py": _PPO_TRAINER}


#: Ludwig's trainer: a ``while`` loop over the batcher calls the trainer's own ``train_step``, then evaluates and checkpoints
#: through a method of its own under an interval guard of the step counter; ``{default}`` is steps_per_checkpoint's default
#: (0: one checkpoint per epoch, the interval computed from the epoch length)
_OWN_STEP_CHECKPOINT = {
    "mylib/schema/trainer.py": ("from dataclasses import dataclass\n\n\n@dataclass\nclass TrainerConfig:\n"
                                "    epochs: int = 3\n    steps_per_checkpoint: int = {default}\n"),
    "mylib/trainers/trainer.py": (
        "import torch\n\n\nclass Trainer:\n    def __init__(self, model, optimizer, config):\n        self.model = model\n"
        "        self.optimizer = optimizer\n        self.steps_per_checkpoint = config.steps_per_checkpoint\n"
        "        self.skip_save_progress = False\n\n"
        "    def save_checkpoint(self, progress_tracker, save_path):\n"
        "        torch.save(self.model.state_dict(), f\"{{save_path}}/model_{{progress_tracker.steps}}.pt\")\n\n"
        "    def train_step(self, inputs, targets):\n        loss = self.model(inputs, targets)\n        loss.backward()\n"
        "        self.optimizer.step()\n        self.optimizer.zero_grad()\n        return loss\n\n"
        "    def _eval_and_checkpoint(self, progress_tracker, save_path):\n        self.evaluate(progress_tracker)\n"
        "        if not self.skip_save_progress:\n            self.save_checkpoint(progress_tracker, save_path)\n\n"
        "    def _train_loop(self, batcher, progress_tracker, save_path):\n"
        "        steps_per_checkpoint = self.steps_per_checkpoint or batcher.steps_per_epoch\n"
        "        while not batcher.last_batch():\n            inputs, targets = batcher.next_batch()\n"
        "            loss = self.train_step(inputs, targets)\n            progress_tracker.steps += 1\n"
        "            if progress_tracker.steps % steps_per_checkpoint == 0:\n"
        "                self._eval_and_checkpoint(progress_tracker, save_path)\n"),
}


def _grad_dumps(interval: str) -> dict[str, str]:
    """Megatron-LM-shaped: the step saves gradients for debugging under a local flag bound to an interval test whose setting
    defaults to None (``save_wgrads_in_this_iteration = (args.save_wgrads_interval is not None and (iteration + 1) %
    args.save_wgrads_interval == 0)``), and the loop checkpoints every ``--save-interval`` iterations."""
    return {
        "pkg/arguments.py": (
            "import argparse\n\n\ndef get_args():\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument('--save', type=str, default=None)\n    parser.add_argument('--save-interval', type=int, default=1000)\n"
            f"    parser.add_argument('--save-wgrads-interval', type=int, default={interval})\n    return parser.parse_args()\n"),
        "pkg/training.py": (
            "import torch\n\nfrom pkg.checkpointing import save_checkpoint, save_grads\n\n\n"
            "def train_step(args, model, optimizer, batch, iteration):\n"
            "    save_wgrads_in_this_iteration = (args.save_wgrads_interval is not None and\n"
            "                                     (iteration + 1) % args.save_wgrads_interval == 0)\n"
            "    loss = model(**batch).loss\n    loss.backward()\n    optimizer.step()\n    if save_wgrads_in_this_iteration:\n"
            "        save_grads(args.save, {n: p.grad.cpu() for n, p in model.named_parameters()}, iteration + 1, 'wgrads')\n"
            "    optimizer.zero_grad()\n    return loss\n\n\n"
            "def train(args, model, optimizer, data_iterator):\n    iteration = 0\n    while iteration < args.train_iters:\n"
            "        train_step(args, model, optimizer, next(data_iterator), iteration)\n        iteration += 1\n"
            "        if args.save and iteration % args.save_interval == 0:\n            save_checkpoint(iteration, model, optimizer)\n"),
        "pkg/checkpointing.py": (
            "import torch\n\n\ndef save_checkpoint(iteration, model, optimizer):\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, f'ckpt/iter_{iteration:07d}.pt')\n\n\n"
            "def save_grads(save_dir, state_dict, iteration, label):\n    torch.save(state_dict, f'{save_dir}/{label}/iter_{iteration:07d}.pt')\n"),
        "pretrain.py": "from pkg.arguments import get_args\nfrom pkg.training import train\n\ntrain(get_args(), model, optimizer, data_iterator)\n",
        "examples/pretrain.sh": "torchrun --nproc_per_node 8 pretrain.py --save /ckpt --save-interval 1000\n",
    }


def _save_ctl(steps: str) -> dict[str, str]:
    """realhf 0.3.0-shaped: the master worker builds its save control from ``exp_ctrl.save_freq_*`` fields, ``save_freq_steps``
    defaulting to ``steps``, the others None; ``FrequencyControl.check`` returns False when its frequency is None."""
    return {
        "pkg/api/system_api.py": (
            "import dataclasses\nfrom typing import Optional\n\n\n@dataclasses.dataclass\nclass ExperimentSaveEvalControl:\n"
            "    total_train_epochs: int = 1\n    save_freq_epochs: Optional[int] = None\n"
            f"    save_freq_steps: Optional[int] = {steps}\n    save_freq_secs: Optional[int] = None\n"),
        "pkg/system/master_worker.py": (
            "from pkg.base import timeutil\n\n\nclass MasterWorker:\n    def _configure(self, config):\n"
            "        self.__save_ctl = timeutil.EpochStepTimeFreqCtl(\n            freq_epoch=config.exp_ctrl.save_freq_epochs,\n"
            "            freq_step=config.exp_ctrl.save_freq_steps,\n            freq_sec=config.exp_ctrl.save_freq_secs,\n        )\n\n"
            "    def _poll(self, model, batch, optimizer):\n        model(batch).loss.backward()\n        optimizer.step()\n"
            "        if self.__save_ctl.check(epochs=0, steps=1):\n            model.save('ckpt')\n"),
    }


def _paced_save(interval: str) -> dict[str, str]:
    """xtuner v1-shaped: the trainer calls ``self._maybe_save()`` every step; the method returns early unless the step is
    due, in both arms of an ``if interval == -1: ... else: ...`` (only at the end, or every ``checkpoint_interval``)."""
    return {
        "mytrainer/train/trainer.py": (
            "import torch\nfrom pydantic import BaseModel\n\n\nclass TrainerConfig(BaseModel):\n"
            f"    checkpoint_interval: int | None = {interval}\n\n\n"
            "class Trainer:\n    def __init__(self, config: TrainerConfig):\n        self._checkpoint_interval = config.checkpoint_interval\n\n"
            "    def fit(self):\n        for data in self._data_iter():\n            loss = self._engine.train_step(data)\n"
            "            self._optimizer.step()\n            self._cur_step += 1\n            self._maybe_save()\n\n"
            "    def _maybe_save(self) -> bool:\n        ckp_interval = self._checkpoint_interval\n        if ckp_interval is None:\n"
            "            return False\n        if ckp_interval == -1:  # only save at the end of training\n"
            "            if self._cur_step != self.total_step:\n                return False\n        else:\n"
            "            if self._cur_step % ckp_interval != 0 and self._cur_step != self.total_step:\n                return False\n"
            "        self._engine.save_dcp(weights_dir=self.work_dir / f'step-{self._cur_step}')\n"
            "        torch.save(self._lr_scheduler.state_dict(), self.work_dir / 'scheduler.pt')\n        return True\n"),
    }


def _regime(ckpt: str, publish: str) -> dict[str, str]:
    """A recipe library's regime section (fairseq2 0.8.1 ``recipe/config.py`` ``RegimeSection``) and the trainer that acts
    on it: a step interval of None is never due."""
    return {
        "mylib/recipe/config.py": (
            "from dataclasses import dataclass\n\n\n@dataclass(kw_only=True)\nclass RegimeSection:\n"
            "    num_steps: int | None = None\n"
            f"    checkpoint_every_n_steps: int | None = {ckpt}\n    \"\"\"The step interval at which to checkpoint.\"\"\"\n\n"
            f"    publish_metrics_every_n_steps: int | None = {publish}\n    \"\"\"The step interval at which to publish training metrics.\"\"\"\n"),
        "mylib/recipe/trainer.py": (
            "from mylib.trainer import Trainer\n\n\ndef create_trainer(regime_section, unit, data_reader):\n"
            "    return Trainer(unit=unit, data_reader=data_reader, max_num_steps=regime_section.num_steps,\n"
            "                   checkpoint_every_n_steps=regime_section.checkpoint_every_n_steps,\n"
            "                   publish_metrics_every_n_steps=regime_section.publish_metrics_every_n_steps)\n"),
        "mylib/trainer.py": (
            "import logging\n\nlog = logging.getLogger(__name__)\n\n\nclass Trainer:\n"
            "    def __init__(self, unit, data_reader, max_num_steps=None, checkpoint_every_n_steps=None, publish_metrics_every_n_steps=None):\n"
            "        self._unit, self._data_reader, self._max_num_steps = unit, data_reader, max_num_steps\n"
            "        self._checkpoint_every_n_steps = checkpoint_every_n_steps\n        self._publish_every = publish_metrics_every_n_steps\n"
            "        self._step_nr = 0\n\n"
            "    def _should_do(self, every_n_steps):\n        if every_n_steps is not None:\n"
            "            return self._step_nr % every_n_steps == 0\n        return self._step_nr == self._max_num_steps\n\n"
            "    def run(self):\n        state = 'data_load'\n        while state != 'stopped':\n"
            "            state = self._run_step() if state == 'data_load' else self._run_post_step()\n\n"
            "    def _run_step(self):\n        batch = next(self._data_reader, None)\n        if batch is None:\n            return 'stopped'\n"
            "        self._step_nr += 1\n        loss = self._unit(batch)\n        loss.backward()\n        return 'post_step'\n\n"
            "    def _run_post_step(self):\n        if self._should_do(self._checkpoint_every_n_steps):\n"
            "            self._checkpoint_manager.save_checkpoint(self._step_nr)\n"
            "        if self._should_do(self._publish_every):\n            self._metric_recorder.record_metric_values('train', {}, self._step_nr)\n"
            "        return 'data_load'\n"),
    }


@register
class I3CheckpointFrequency(Check):
    id = "I3"
    title = "Sane checkpoint frequency"
    title_zh = "Checkpoint 保存频率"
    bottlenecks = (Bottleneck.DATA_IO,)
    priority = Priority.LOW
    benefit = "no training stall for checkpoint writes most steps (a 7B full checkpoint with Adam states is ~80-100 GB)"
    what = (
        "Whether checkpoints are saved at a sane interval: HF `save_steps`/`save_strategy`, Megatron `--save-interval`, "
        "nanotron `checkpoint_interval`, torchtitan `checkpoint.interval`, Lightning `ModelCheckpoint(every_n_train_steps=)`, "
        "accelerate `checkpointing_steps`, and `torch.save`/`save_checkpoint` calls in the training-step loop without an "
        "interval guard. Too frequent: every < 50 steps (< 10 for adapter-only or sub-1B checkpoints)."
    )
    why = (
        "A synchronous checkpoint blocks every rank: saving a 7B model with Adam states writes ~84 GB (16 bytes/param), "
        "minutes on network storage; per-step saving can cost more than the training itself. PyTorch's async "
        "checkpointing paper reports checkpoint stalls cut from minutes to seconds only when saves are also infrequent "
        "(PyTorch blog, 2024). The seed lists over-frequent saving as a low-priority but free fix."
    )
    fix = "Save every few hundred steps or per epoch (`save_steps: 500`, `save_strategy: epoch`, `--save-interval 1000`) and keep `save_total_limit` small; guard loop saves with `if step % save_every == 0`."
    fix_zh = "每几百步或每个 epoch 保存一次（`save_steps: 500`、`save_strategy: epoch`、`--save-interval 1000`），并设置较小的 `save_total_limit`；训练循环中的保存用 `if step % save_every == 0` 控制。"
    fix_safety = FixSafety.SAFE
    references = ("https://pytorch.org/blog/reducing-checkpointing-times/", "https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments.save_steps")
    snippets = {
        "hf-yaml": "save_strategy: steps\nsave_steps: 500\nsave_total_limit: 3\n",
        "shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --save-interval 1000\n",
        "python": "if step % save_every == 0 and rank == 0:\n    torch.save(model.state_dict(), f\"ckpt_{step}.pt\")\n",
        "lightning": "ckpt = ModelCheckpoint(every_n_train_steps=1000, save_top_k=3)\n",
    }
    examples = (
        Example({"train.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nsave_steps: 500\nsave_total_limit: 3\n"}, U, "save every 500"),
        Example({"train.py": "from transformers import Trainer, TrainingArguments\nargs = TrainingArguments(output_dir='o', save_strategy='epoch', save_steps=1)\n"}, U, "epoch strategy"),
        Example({"train.py": "from transformers import Trainer, TrainingArguments\ntrainer = Trainer(model=m, args=TrainingArguments(output_dir='o'))\n"}, U, "HF defaults"),
        Example({  # checkpoints only per epoch with a validation split, none otherwise: the HF save_steps default never applies
            "llm/params.py": ("from typing import Optional\nfrom pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                              "    valid_split: Optional[str] = Field(None)\n    eval_strategy: str = Field('epoch')\n"),
            "llm/train.py": ("from transformers import Trainer, TrainingArguments\n\ndef train(config, model, data):\n"
                             "    args = TrainingArguments(\n        output_dir='out',\n"
                             "        save_strategy=config.eval_strategy if config.valid_split is not None else 'no',\n    )\n"
                             "    Trainer(model=model, args=args, train_dataset=data).train()\n"),
        }, U, "save strategy epoch or no"),
        Example({"train.py": (  # nanoGPT: a while-True step loop whose saves sit under the eval interval and a counter's test
            "import torch\n\neval_interval = 2000\nalways_save_checkpoint = False\nmax_iters = 600000\n"
            "iter_num = 0\nbest_val_loss = 1e9\n\n"
            "while True:\n"
            "    if iter_num % eval_interval == 0 and master_process:\n"
            "        losses = estimate_loss()\n"
            "        if losses['val'] < best_val_loss or always_save_checkpoint:\n"
            "            best_val_loss = losses['val']\n"
            "            if iter_num > 0:\n"
            "                torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))\n"
            "    loss = model(X, Y)\n    loss.backward()\n    optimizer.step()\n"
            "    iter_num += 1\n"
            "    if iter_num > max_iters:\n        break\n")},
            U, "saves every eval_interval steps under a counter's test (iter_num > 0 after iter_num = 0 is no switch)"),
        Example({"train.yaml": "save_steps: 0.1\n"}, U, "ratio"),
        Example({"arctic_training/config/checkpoint.py": (  # arctic-training: periodic saves off unless a recipe sets them
            "from pydantic import BaseModel, Field\n\nclass CheckpointConfig(BaseModel):\n    enabled: bool = True\n"
            "    save_every_n_steps: int = Field(default=0, ge=0)\n    save_end_of_training: bool = False\n")}, U,
            "periodic saving off by a pydantic Field default"),
        Example({  # verl: the PPO trainer saves only when trainer.save_freq > 0
            "verl/trainer/config/ppo_trainer.yaml": "trainer:\n  total_epochs: 30\n  save_freq: -1\n  test_freq: -1\n",
            "verl/trainer/ppo/ray_trainer.py": (
                "class RayPPOTrainer:\n    def fit(self):\n        for batch_dict in self.train_dataloader:\n"
                "            metrics = self.step(batch_dict)\n"
                "            if self.config.trainer.save_freq > 0 and self.global_steps % self.config.trainer.save_freq == 0:\n"
                "                self._save_checkpoint()\n"),
        }, U, "save_freq -1: no periodic checkpoint"),
        Example({"config/checkpoint.py": (
            "from pydantic import BaseModel, Field\n\nclass CheckpointConfig(BaseModel):\n"
            "    save_every_n_steps: int = Field(default=5, ge=0)\n")}, N, "pydantic Field default of 5 steps"),
        Example({"llm/train.py": (  # the same conditional, but the strategy it reads saves by steps, every 5
            "from transformers import Trainer, TrainingArguments\n\ndef train(config, model, data):\n"
            "    args = TrainingArguments(output_dir='out', save_steps=5,\n"
            "                             save_strategy=config.eval_strategy if config.valid_split is not None else 'no')\n"
            "    Trainer(model=model, args=args, train_dataset=data).train()\n"),
            "llm/params.py": "from pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n    eval_strategy: str = Field('steps')\n"},
            N, "conditional strategy that saves every 5 steps"),
        Example({"train.py": (
            "from transformers import TrainingArguments\nargs = TrainingArguments(\n    output_dir='o',\n"
            "    save_strategy='epoch',\n    save_steps=5,\n)\n")}, U, "multi-line call with epoch strategy"),
        Example(_EPOCH_RUNNER, U, "a runner's epoch loop saves after each train_epoch() (LAVIS)"),
        Example({"train.yaml": "model_name_or_path: meta-llama/Llama-2-13b-hf\nsave_steps: 1\n"}, N, "save every step"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --save-interval 10 --num-layers 32\n"}, N, "megatron every 10"),
        Example({"train.py": (
            "import torch\nfor step, batch in enumerate(loader):\n    loss = model(batch).loss\n    loss.backward()\n"
            "    optimizer.step()\n    if rank == 0:\n        torch.save(model.state_dict(), 'ckpt.pt')\n")}, N, "torch.save in step loop"),
        Example({"train.py": (
            "import torch\nfor step, batch in enumerate(loader):\n    loss = model(batch).loss\n    loss.backward()\n"
            "    optimizer.step()\n    if step % 1000 == 0:\n        torch.save(model.state_dict(), 'ckpt.pt')\n")}, U, "guarded loop save"),
        Example({"recipes/lora_finetune_distributed.py": (  # torchtune: one checkpoint at the end of each epoch
            "class LoRAFinetuneRecipeDistributed:\n    def train(self):\n"
            "        for curr_epoch in range(self.epochs_run, self.total_epochs):\n"
            "            for idx, batch in enumerate(self._dataloader):\n                loss = self._loss_step(batch)\n"
            "                loss.backward()\n                self._optimizer.step()\n"
            "            self.epochs_run += 1\n            self.save_checkpoint(epoch=curr_epoch)\n")}, U, "checkpoint once per epoch"),
        Example({"train.py": (  # nanoGPT: a module-level ``while True`` loop saves under the eval interval
            "import torch\neval_interval = 2000\nalways_save_checkpoint = True\niter_num = 0\nwhile True:\n"
            "    if iter_num % eval_interval == 0 and master_process:\n        losses = estimate_loss()\n"
            "        if losses['val'] < best_val_loss or always_save_checkpoint:\n"
            "            torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))\n"
            "    logits, loss = model(X, Y)\n    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    iter_num += 1\n")}, U,
            "module-level while loop saving every eval_interval"),
        Example({"train.py": (  # the same loop saving every 5 iterations
            "import torch\nsave_interval_iters = 5\niter_num = 0\nwhile True:\n"
            "    if iter_num % save_interval_iters == 0 and master_process:\n"
            "        torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))\n"
            "    logits, loss = model(X, Y)\n    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n    iter_num += 1\n")}, N,
            "module-level while loop saving every 5 iterations"),
        Example({"train.py": (  # nothing saves in the loop and no interval is set: not judged (n/a), never called sane
            "import torch\nfor step, batch in enumerate(loader):\n    loss = model(batch).loss\n    loss.backward()\n"
            "    optimizer.step()\n")}, Status.NA, "nothing seen: not judged"),
        Example({  # llama-recipes: the project's own save helper, called once per epoch after validation
            "src/llama_recipes/model_checkpointing/checkpoint_handler.py": (
                "import torch\n\ndef save_peft_checkpoint(model, model_path):\n    model.save_pretrained(model_path)\n"),
            "src/llama_recipes/utils/train_utils.py": (
                "from llama_recipes.model_checkpointing import save_peft_checkpoint\n\n"
                "def train(model, train_dataloader, optimizer, train_config):\n    best_val_loss = float('inf')\n"
                "    for epoch in range(train_config.num_epochs):\n        for step, batch in enumerate(train_dataloader):\n"
                "            loss = model(**batch).loss\n            loss.backward()\n            optimizer.step()\n"
                "            optimizer.zero_grad()\n        eval_epoch_loss = evaluation(model)\n"
                "        if train_config.save_model and eval_epoch_loss < best_val_loss:\n"
                "            save_peft_checkpoint(model, train_config.output_dir)\n"),
        }, U, "save helper once per epoch"),
        Example({  # the same helper called after every optimizer step
            "ckpt.py": "import torch\n\ndef save_model_checkpoint(model, path):\n    torch.save(model.state_dict(), path)\n",
            "train.py": (
                "from ckpt import save_model_checkpoint\n\n"
                "def train(model, loader, optimizer):\n    for step, batch in enumerate(loader):\n"
                "        loss = model(**batch).loss\n        loss.backward()\n        optimizer.step()\n"
                "        save_model_checkpoint(model, 'out/model.pt')\n"),
        }, N, "save helper every step"),
        Example({  # axolotl: recipes save a few times per epoch
            **{f"examples/{m}/lora.yml": f"base_model: {m}\nsequence_len: 4096\nsaves_per_epoch: 1\nlogging_steps: 1\n"
               for m in ("llama-3", "mistral", "qwen2")},
        }, U, "axolotl saves_per_epoch"),
        Example({  # torchtitan 0.3.0: a checkpointer Config object per registry recipe; unset recipes keep interval=500
            "torchtitan/components/checkpointer/base.py": (
                "from dataclasses import dataclass\nclass BaseCheckpointManager:\n    @dataclass(kw_only=True, slots=True)\n"
                "    class Config:\n        enable: bool = False\n        interval: int = 500\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.trainer import Trainer\nfrom torchtitan.components.checkpoint import CheckpointManager\n"
                "def llama3_debugmodel() -> Trainer.Config:\n    return Trainer.Config(checkpoint=CheckpointManager.Config(interval=10))\n"
                "def llama3_8b() -> Trainer.Config:\n    return Trainer.Config(checkpoint=CheckpointManager.Config(interval=500))\n"
                "def llama3_70b() -> Trainer.Config:\n    return Trainer.Config(checkpoint=CheckpointManager.Config(interval=500))\n"
                "def llama3_405b() -> Trainer.Config:\n    return Trainer.Config(steps=3000)\n"),
        }, U, "checkpointer Config interval 500 in the registry recipes"),
        Example({
            "torchtitan/components/checkpointer/base.py": (
                "from dataclasses import dataclass\nclass BaseCheckpointManager:\n    @dataclass(kw_only=True, slots=True)\n"
                "    class Config:\n        interval: int = 500\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.trainer import Trainer\nfrom torchtitan.components.checkpoint import CheckpointManager\n"
                "def llama3_8b() -> Trainer.Config:\n    return Trainer.Config(checkpoint=CheckpointManager.Config(interval=5))\n"
                "def llama3_70b() -> Trainer.Config:\n    return Trainer.Config(checkpoint=CheckpointManager.Config(interval=5))\n"
                "def llama3_405b() -> Trainer.Config:\n    return Trainer.Config(checkpoint=CheckpointManager.Config(interval=10))\n"),
        }, N, "checkpointer Config interval 5-10 in most registry recipes"),
        Example({"areal/api/cli_args.py": (  # AReaL: a perf tracer flushes its trace file every step; checkpoints every 1000
            "from dataclasses import dataclass, field\n\n@dataclass\nclass PerfTracerConfig:\n    enabled: bool = False\n"
            "    save_interval: int = field(default=1, metadata={'help': 'Flush trace events to disk every N calls to save(step=...).'})\n\n"
            "@dataclass\nclass CheckpointConfig:\n    save_interval: int = 1000\n")}, U,
            "a tracer's flush interval is not a checkpoint interval"),
        # a saver object called every step that checks its own frequency first: its interval is the saver's config
        Example({**_PPO_FILES, "pkg/engine.py": ("import torch\n\nclass Engine:\n    def save(self, path):\n"
                                                "        torch.save(self.model.state_dict(), path)\n"),
                 "pkg/trainer/rl_trainer.py": _PPO_TRAINER.replace(
            "            self.actor.ppo_update(batch)\n", "            loss = self.model(batch).loss\n            loss.backward()\n"
            "            self.optimizer.step()\n")}, Status.NA, "a self-paced saver called every step is not judged from the loop"),
        Example(_paced_save("500"), U, "a save method that returns early unless the step is due, in both arms of an if/else"),
        Example(_paced_save("1"), N, "the same method with checkpoint_interval 1: a checkpoint every step"),
        Example({"myrl/config/ppo_base_config.yaml": _RL_CONFIG.format(ckpt=10),
                 "myrl/trainer.py": _RL_TRAINER.format(report="")}, N, "RL trainer: full checkpoint every 10 steps"),
        Example({"myrl/config/ppo_base_config.yaml": _RL_CONFIG.format(ckpt=100),
                 "myrl/trainer.py": _RL_TRAINER.format(report="")}, U, "RL trainer: checkpoint every 100 steps"),
        Example(_save_ctl("None"), U, "every save frequency of the save control defaults to None: no periodic checkpoint"),
        Example(_regime("None", "None"), U, "a regime section's checkpoint_every_n_steps defaults to None and nothing sets it"),
        Example(_regime("5", "None"), N, "the same section checkpointing every 5 steps"),
        Example(_save_ctl("1"), N, "the same control with save_freq_steps 1: a checkpoint every step"),
        Example(_grad_dumps("None"), U, "gradient dumps under a local flag bound to an interval test whose setting is None"),
        Example(_grad_dumps("1"), N, "the same dumps with their interval defaulting to 1: a save every step"),
        Example({k: v.format(default=0) for k, v in _OWN_STEP_CHECKPOINT.items()}, U,
                "a while step loop checkpoints through its own method under an interval guard (once per epoch by default)"),
        Example({k: v.format(default=5) for k, v in _OWN_STEP_CHECKPOINT.items()}, N, "the same trainer checkpointing every 5 steps"),
        Example(torchx_runner(ckpt=100), U, "torchtitan launched from a Python runner with --checkpoint.interval=100"),
        Example(torchx_runner(ckpt=5), N, "the same launch checkpointing every 5 steps"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        small = _adapter_only(f, ctx) or (ctx.project.params_billions is not None and ctx.project.params_billions < 1)
        threshold = 10 if small else 50
        # an on-policy RL step generates a batch of rollouts before it trains (MMR1: 512 prompts x 8 responses of up to 8,192
        # tokens): minutes per step, so a save every 5 RL steps (verl's ``save_freq``) is no stall of note
        rl_steps = bool(ctx.project.alignment and {"vllm", "sglang"} & set(ctx.project.frameworks))
        items = [i for i in interval_settings(f, _SAVE_KEYS, strategy="save_strategy") if not _not_a_checkpoint(i.fact)]
        items += _checkpointer_intervals(f)
        # ``save_freq`` counts steps in some trainers (verl ``trainer.save_freq``) and epochs in others (TRL DDPO): only its
        # "off" value (verl ``save_freq: -1``, saves only when ``save_freq > 0``) is read
        # ... unless the code saves on a step counter's multiple of it (verl and EasyR1's ray_trainer: ``if save_freq > 0 and
        # self.global_step % self.config.trainer.save_freq == 0: self._save_checkpoint()``): then it counts steps
        by_step = any(_STEP_MOD_SAVE_FREQ.search(c.guard or "") for c in f.calls_where(lambda s: "save" in s.lower()))
        items += [i for i in interval_settings(f, ("save_freq",)) if i.kind == "off" or (by_step and i.kind == "steps")]
        if not items:
            items += _save_control_off(f)
        if not items:
            items += _none_every_n(f, _SAVE_KEYS)
        # axolotl ``saves_per_epoch: 1``: a few checkpoints per epoch (it sets the save interval from the epoch length)
        per_epoch_saves = [s for s in interval_settings(f, ("saves_per_epoch",)) if s.steps is not None and s.steps >= 1]
        items += [Interval(i.fact, i.key, i.name, None, "epoch") for i in per_epoch_saves]
        for e in f.config("checkpoint.interval"):
            enabled = [x for x in f.config("checkpoint.enable_checkpoint", "checkpoint.enable") if x.path == e.path]
            if all(truthy(x.value) is not False for x in enabled) and not _TEST_PATH.search(e.path):
                steps, kind = interval(e.value)
                items.append(Interval(e, e.dotted, "checkpoint_interval", steps, kind))
        # the same torchtitan key as a launch flag (``--checkpoint.interval=100`` in the launched command line)
        for s in f.settings("interval"):
            if s.source == "launcher" and s.key.lower().endswith("checkpoint.interval") and not _TEST_PATH.search(s.path):
                steps, kind = interval(s.value)
                items.append(Interval(s, s.key, "checkpoint_interval", steps, kind))
        recipe_limit = _per_recipe_threshold(f, ctx, items, threshold)

        def limit(i: Interval) -> int:
            return min(recipe_limit(i), 5) if rl_steps and i.name == "save_freq" else recipe_limit(i)
        bad: list[tuple[Any, str, float]] = [(i.fact, i.key, i.steps) for i in items if i.kind == "steps" and i.steps is not None
                                             and i.steps < limit(i)]
        threshold = max((limit(i) for i in items if i.kind == "steps" and i.steps is not None and i.steps < limit(i)), default=threshold)
        spaced: list[tuple[Call, float | None]] = []
        # a save that ends the run (``_save_and_exit``, on-demand/preemption/emergency saves) happens once, not every step
        save_calls = [c for c in save_sites(f) if not guard_off(f, c) and not _FINAL_SAVE.search(f"{c.short} {c.func or ''}")
                      and not _not_a_checkpoint_save(f, c)]
        loop = per_step_calls(f, save_calls, threshold, spaced)
        bad += [(c, f"{c.short}() in the training loop", n) for c, n in loop]
        extra: dict[str, Any] = {}
        if loop:
            extra["save_in_step_loop"] = int(min(n for _, n in loop))
        # ``save_strategy`` "no"/"epoch" on every setting: the HF save_steps default never applies
        no_steps = _no_step_saves(f) if not items and uses_hf_trainer(f) else None
        if not items and uses_hf_trainer(f) and no_steps is None:
            extra["save_steps"] = HF_DEFAULTS["save_steps"]
        values = _values(items, extra)
        stepped = [i for i in items if i.kind == "steps" and i.steps is not None]
        if any(i.steps < limit(i) for i in stepped) and any(limit(i) <= i.steps < threshold for i in stepped):
            # a full fine-tune's interval is a finding that an adapter recipe's same interval is not: the engine's note on
            # recipes that disagree says how they were judged (not by the majority)
            values["judged_per_recipe"] = "every 10 steps or more for the recipes that train adapters, 50 for full fine-tunes"
        if per_epoch_saves:
            values["saves_per_epoch"] = int(max(i.steps or 1 for i in per_epoch_saves))
        hf = _hf_default_site(f, "save_steps") if "save_steps" in extra else None
        all_off = bool(items) and all(i.kind == "off" for i in items)
        per_epoch = _epoch_saves(f, save_calls) if (not items or all_off) and not loop and hf is None else []
        epoch_txt = ""
        if per_epoch:
            c = per_epoch[0]
            epoch_txt = (f"a checkpoint once per epoch: {c.short}() in the epoch loop, after the step loop ({c.path}:{c.line}"
                         f"{f' (+{len(per_epoch) - 1})' if len(per_epoch) > 1 else ''})")
        if values and items:
            sane = "checkpoints at a sane interval (" + ", ".join(f"{k}={v}" for k, v in values.items()) + ")"
            if spread := recipe_spread(items):
                sane += f"; {spread}"
        elif no_steps is not None:
            sane = (f"no step-interval checkpoint: save_strategy is 'no' or 'epoch' ({no_steps.path}:{no_steps.line}: "
                    f"{no_steps.value.text if isinstance(no_steps.value, Expr) else repr('no' if no_steps.value is False else no_steps.value)}), "
                    "so no save stalls the training steps")
            values["save_strategy"] = "no/epoch"
        elif hf is not None:
            sane = f"HF Trainer default: a checkpoint every 500 steps (save_steps is not set; the trainer at {hf.path}:{hf.line})"
        elif per_epoch:
            sane = epoch_txt + ("; " + _spaced_detail("other saves", spaced) if spaced else "")
            if all_off:
                # LAVIS: ``save_freq: -1`` switches off the extra every-N-epochs save, not the runner's save after each epoch
                i = items[0]
                sane += (f"; {i.name} is {i.fact.value!r} ({i.fact.path}:{i.fact.line}{f' (+{len(items) - 1})' if len(items) > 1 else ''})"
                         ", which turns off only the extra periodic save")
            values["save_strategy"] = "epoch"
        elif spaced and not (items and all(i.kind == "off" for i in items)
                             and all(any(re.search(rf"\b{re.escape(i.name)}\b", c.guard or "") for i in items) for c, _ in spaced)):
            sane = _spaced_detail("checkpoints saved", spaced)
            values.update(_spaced_values(spaced))
        elif items and all(i.kind == "off" for i in items):
            # (also when the loop's saves sit under that very setting: verl ``if save_freq > 0 and (...)`` with ``save_freq: -1``)
            # periodic saving switched off (arctic-training ``save_every_n_steps: HumanInt = Field(default=0, ge=0)``): no
            # checkpoint stall during the run; saves, if any, come at the end or per epoch
            i = items[0]
            sane = (f"no periodic checkpoint: {i.name} is {i.fact.value!r} ({i.fact.path}:{i.fact.line}"
                    f"{f' (+{len(items) - 1})' if len(items) > 1 else ''}), so no save stalls the training steps")
            values[i.name] = "off"
        elif (computed := _computed_kw(f, "save_steps")) is not None:
            sane = NOT_JUDGED + (f"save_steps is computed in code ({computed[0]}:{computed[1]}: `{computed[2][:120]}`); check the "
                                 "interval it gives against the run's steps")
        elif switched := _switched_off_loop_saves(f, threshold):
            # cramming: ``if cfg.impl.save_intermediate_checkpoints and step % cfg.impl.save_every_nth_step == 0:
            # model_engine.save_training_checkpoint(...)`` with ``save_intermediate_checkpoints: False``
            c, off = switched
            sane = (f"no checkpoint during the run: {c.short}() in the training-step loop ({c.path}:{c.line}) runs only when a switch "
                    f"is on, and it is off ({_off_text(off)}), so no save stalls the training steps")
            values["intermediate_checkpoints"] = "off"
            per_epoch = [c]
        else:
            sane = NOT_JUDGED + ("no checkpoint interval setting and no save call in a training-step loop were found on the training "
                                 "path; check how often your launch saves (its save interval or save callback)")
        cited = (hf,) if hf is not None else (f.ev(no_steps),) if no_steps is not None else tuple(Facts.ev(c, key=c.short) for c in per_epoch[:3])
        return _with_notes(_outcome(bad, items, "checkpoints saved", threshold, values, sane, spaced, cited), registry_notes(f, items))


def _switched_off_loop_saves(f: Facts, threshold: float) -> tuple[Call, list[Any]] | None:
    """A save of the training-step loop behind a switch that is off, with the settings that turn it off (asked when the loop
    has no live save: the run saves no checkpoint while it trains)."""
    offs: dict[int, list[Any]] = {}
    calls: list[Call] = []
    for c in save_sites(f):
        if not _FINAL_SAVE.search(f"{c.short} {c.func or ''}") and (off := guard_off(f, c)):
            offs[id(c)] = off
            calls.append(c)
    if not calls:
        return None
    spaced: list[tuple[Call, float | None]] = []
    hits = [c for c, _n in per_step_calls(f, calls, threshold, spaced)] + [c for c, _n in spaced]
    return (hits[0], offs[id(hits[0])]) if hits else None


def _off_text(off: list[Any]) -> str:
    x = off[0]
    key = getattr(x, "key", None) if hasattr(x, "value") else None  # a setting; else the call itself (``if False:``)
    return f"{key} = {x.value!r} at {x.path}:{x.line}" if key else f"its branch at {x.path}:{x.line}"


#: keywords of a frequency control (``EpochStepTimeFreqCtl(freq_epoch=..., freq_step=..., freq_sec=...)``, ``FrequencyControl(
#: frequency_steps=...)``)
_FREQ_KW = lazy_compile(r"^(freq|frequency)_?(step|steps|epoch|epochs|sec|secs|seconds|iter|iters)$")
_SAVE_CONTEXT = lazy_compile(r"(?i)sav(e|er|ing)|ckpt|checkpoint")


#: an "every N steps" interval named for logging or publishing metrics (``log_every_n_steps``, fairseq2
#: ``publish_metrics_every_n_steps``)
_LOG_EVERY_N = lazy_compile(r"^(\w+_)?(log|logging|metrics?)(_\w+)?_every_n_steps$")


def _none_every_n(f: Facts, names: Iterable[str]) -> list[Interval]:
    """An "every N steps" interval field whose default is None and that nothing sets (fairseq2 ``RegimeSection.
    checkpoint_every_n_steps: int | None = None``, "the step interval at which to checkpoint", tested ``if every_n_steps is
    not None:`` before the modulo): no periodic save or log. Not beside an HF Trainer, whose own default may fill the None.
    The fields, as ``off`` intervals."""
    if uses_hf_trainer(f):
        return []
    out: list[Interval] = []
    for n in dict.fromkeys(names):
        if "every_n" not in n:
            continue
        ss = [s for s in f.effective(n) if not _TEST_PATH.search(s.path)]
        nones = [s for s in ss if s.source == "field-default" and s.value is None]
        # a call that hands the field on under its own name (``Trainer(checkpoint_every_n_steps=regime.checkpoint_every_n_steps)``)
        # sets nothing
        passed = [s for s in ss if s.source == "call" and isinstance(s.value, Expr) and s.value.text.rsplit(".", 1)[-1] == n]
        if nones and len(nones) + len(passed) == len(ss):
            out.append(Interval(nones[0], nones[0].key, nones[0].name, None, "off"))
    return out


def _save_control_off(f: Facts) -> list[Interval]:
    """A save-frequency control whose every frequency reads a config field that defaults to None and that nothing sets:
    no periodic checkpoint (realhf ``EpochStepTimeFreqCtl(freq_epoch=config.exp_ctrl.save_freq_epochs, freq_step=...,
    freq_sec=...)`` with ``save_freq_epochs/steps/secs: Optional[int] = None``; AReaL's ``Saver`` over ``_Timer.freq_steps:
    int | None = None``, "None disables step-based saving"), as long as the control is built for saving (its file, function or
    line says save/saver/checkpoint). The fields' None defaults, as ``off`` intervals; empty otherwise."""
    out: list[Interval] = []
    for c in f.all_calls():
        kws = [k for k in c.kwargs if _FREQ_KW.match(k)]
        if not kws or _TEST_PATH.search(c.path) or not _SAVE_CONTEXT.search(f"{c.path} {c.func or ''} {c.text}"):
            continue
        fields: list[Setting] = []
        for k in kws:
            v = c.kwargs[k]
            ref = v.ref if isinstance(v, Expr) and re.fullmatch(r"[\w.]+", v.text) else None
            settings = f.effective(ref) if ref else []
            if not settings or any(s.source != "field-default" or s.value is not None for s in settings):
                break
            fields.append(settings[0])
        else:
            out += [Interval(s, s.key, s.name, None, "off") for s in fields if all(s is not x.fact for x in out)]
    return out


_LOG_KEYS = ("logging_steps", "log_interval", "log_every_n_steps", "print_freq", "log_every", "log_freq", "logging_interval", "log_steps",
             "steps_per_print", "iteration_step_info_interval", "print_every", "log_every_n_iters", "console_log_interval", "display_interval",
             "loss_log_interval",  # arctic-training ``loss_log_interval: HumanInt = Field(default=1, ge=0)``
             "metrics_collect_interval")  # OLMo-core ``Trainer``: metrics are gathered (a device sync) and logged every N steps
# recipes that disagree on a logging/report interval vote by I4/I5's verdict (under 10 steps or not): Megatron-LM's launches at
# --log-interval 1, 2 and 5 are one majority against the default 100
register_vote_bands("^(" + "|".join((*_LOG_KEYS, "tensorboard_log_interval")) + ")$", _interval_band(10))
_LOG_FUNCS = lazy_compile(r"^(print|print0|printr|log0|rank0_print|print_rank_0|print_rank0|master_print|print_master|log_rank|log_rank_0|log_rank0"
                        r"|log_dist|print_log|log_info|printflock)$")
# (base_logger.info too; a project's own Logger's ``log_stats(stats, step)``: nanoT5 prints and sends to Neptune through it)
_LOGGER_RECV = lazy_compile(r"(^|\.)(logger|logging|log|\w*_logger|LOGGER)\.(info|debug|warning|warn|log_stats)$")


_WARN_TEXT = lazy_compile(r"""^f?['"]\s*\W*\s*(WARN(ING)?|Warning|ERROR|Error)\b""")
#: a message that announces an event of the run, logged in the branch that handles it (cramming ``if not
#: no_recovery_necessary: log.info(f"Attempting reload of checkpoint ...")``): not the step's metrics
_EVENT_TEXT = lazy_compile(r"""^f?['"]\s*\W*\s*(Attempting|Stopping|Resuming|Recovering|Reloading|Restarting|Non-finite|Found (NaN|nan|inf)"""
                         r"""|Detected (NaN|nan|inf)|NaN|Nan|Inf"""
                         # a checkpoint being written under the save interval (GaLore ``logger.info(f"Saving model and
                         # optimizer to {dir}, update step {update_step}")``): the save's message, not the step's metrics
                         r"""|Saving|Saved)\b""")


def _console_trackers(f: Facts) -> list[Call]:
    """Tracker calls of a multi-backend tracking object that also prints to the console (lmms-engine / verl ``Tracking`` with
    ``self.default_backend.append("console")`` in the trainer that calls ``self.tracking.log(train_metrics, ...)``): each
    such report is also a console log line."""
    out: list[Call] = []
    console: dict[str, bool] = {}
    bound = _tracker_objects(f)
    for c in tracker_calls(f):
        if not (re.search(r"(?i)track(ing|er)\w*\.log$", c.name) or c.name.rsplit(".", 1)[0] in bound.get(c.path, ())):
            continue
        if c.path not in console:
            ff = f.files.get(c.path)
            console[c.path] = ff is not None and any("console" in (*x.args, *x.kwargs.values()) or _backend_console(f, x)
                                                     for x in ff.calls if _TRACKER_OBJECT.match(f"{x.name}("))
            console[c.path] = console[c.path] or (ff is not None and any("console" in (*x.args, *x.kwargs.values()) for x in ff.calls))
        if console[c.path]:
            out.append(c)
    return out


def _backend_console(f: Facts, c: Call) -> bool:
    """A tracking object whose backends come from the run config (verl ``Tracking(default_backend=self.config.trainer.logger)``
    with ``trainer.logger: ['console', 'wandb']``) and every effective value of that setting includes the console."""
    v = c.kwargs.get("default_backend")
    ref = v.text.rsplit(".", 1)[-1] if isinstance(v, Expr) and re.fullmatch(r"[\w.]+", v.text) else None
    if not ref:
        return False
    parts = v.text.split(".")  # type: ignore[union-attr]
    tail = ".".join(parts[-2:]) if len(parts) > 2 else ref  # ``trainer.logger``: the section the run config names
    vals = [s.value for s in f.effective(ref) if not _TEST_PATH.search(s.path) and (s.key == tail or s.key.endswith("." + tail))]
    return bool(vals) and all((isinstance(x, (tuple, list)) and "console" in x) or x == "console" for x in vals)


#: a test for a non-finite value: ``torch.isnan(loss)``, ``math.isinf(x)``, ``DynamicLossScaler._has_inf_or_nan(loss)``,
#: ``scaler.has_overflow(params)`` (true on the exception); ``torch.isfinite(x)`` is its negation
_NONFINITE_TEST = lazy_compile(r"(?:^|_)(?:isnan|isinf|inf_or_nan|nan_or_inf|has_nan|has_inf|overflow)$")


def _nonfinite_branch(guard: str | None) -> bool:
    """Whether an ``if`` branch runs only on a non-finite value: one of its and-ed terms is such a test, read through
    ``not`` (``if torch.isnan(loss).any():``, ``if not torch.isfinite(grad_norm):``, and the ``else`` of ``if not
    _has_inf_or_nan(loss):``, recorded as ``not (not _has_inf_or_nan(loss))``)."""
    node = parse_expr(guard) if guard else None
    if node is None:
        return False
    for t in node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node]:
        neg = False
        while isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            neg, t = not neg, t.operand
        while isinstance(t, ast.Call):
            fn0 = t.func.attr if isinstance(t.func, ast.Attribute) else t.func.id if isinstance(t.func, ast.Name) else ""
            if isinstance(t.func, ast.Attribute) and fn0 in ("any", "all", "item") and not t.args:
                t = t.func.value  # ``torch.isnan(loss).any()``
            elif fn0 in ("any", "all") and len(t.args) == 1:
                t = t.args[0]  # ``torch.any(torch.isinf(grad_norm))`` (LLaMA2-Accessory)
            else:
                break
        if not isinstance(t, ast.Call):
            continue
        fn = t.func.attr if isinstance(t.func, ast.Attribute) else t.func.id if isinstance(t.func, ast.Name) else ""
        if (_NONFINITE_TEST.search(fn) and not neg) or (fn == "isfinite" and neg):
            return True
    return False


_LOSS_TEXT = lazy_compile(r"(?i)\bloss")


#: a function that saves a checkpoint or evaluates: its log lines report that event, not the training step's metrics
_SAVE_OR_EVAL_FUNC = lazy_compile(r"^_*(save|checkpoint|ckpt|eval|evaluate|evaluation|validate|validation|test)(_\w*)?$", re.I)


def log_calls(f: Facts) -> list[Call]:
    """Console/file logging calls: ``print``, ``logger.info``, ``accelerator.print``, ``print_rank_0``, ``tqdm.write``.
    A warning under a condition (``if not torch.isfinite(grad_norm): logger.warning(...)``) reports an exception to the
    step, not its metrics: left out, as is any log in a branch that runs only on a non-finite value (``else:
    log_dist("Found NaN loss, skip backward")`` of ``if not _has_inf_or_nan(loss):``)."""
    out = []
    for c in f.calls("print", "info", "debug", "warning", "warn", "write", "rank0_print", "print_rank_0", "print_rank0", "master_print",
                     "log_rank_0", "log_dist", "print_log", "log_info", "print0", "printr", "log0", "print_master", "log_rank", "log_rank0",
                     "set_postfix", "set_postfix_str", "log_stats"):
        if _nonfinite_branch(c.guard) or (c.guard and c.args and _EVENT_TEXT.match(_text_of(c.args[0]))):
            continue
        if c.func and _SAVE_OR_EVAL_FUNC.match(c.func.rsplit(".", 1)[-1]):
            continue  # MOSS-RLHF: ``_save_checkpoint``'s "saved to ..." message, an ``evaluate()`` summary: not the step's metrics
        if c.short in ("set_postfix", "set_postfix_str"):
            # a progress bar showing the loss (``pbar.set_postfix(loss=loss.item())``): the loss is read on the host and
            # printed with it; a bar showing anything else (a learning rate, a sample count) is not a metrics log
            if _LOSS_TEXT.search(c.text) or _shows_loss_dict(f, c):
                out.append(c)
            continue
        if c.name == "print" or c.name.endswith(("accelerator.print", "fabric.print")) or c.name in {"tqdm.write", "tqdm.tqdm.write"}:
            # a warning printed under a condition (verl ``if not torch.isfinite(grad_norm): print(f"WARN: ...")``) is the
            # ``print`` spelling of a guarded ``logger.warning``: not the step's metrics
            if not (c.guard and c.args and _WARN_TEXT.match(_text_of(c.args[0]))):
                out.append(c)
        elif c.short != "print" and _LOG_FUNCS.match(c.short):
            out.append(c)
        elif _LOGGER_RECV.search(c.name) and not (c.short in ("warning", "warn") and c.guard):
            out.append(c)
    return out


def _shows_loss_dict(f: Facts, c: Call) -> bool:
    """A progress bar given a dict the same function filled with the loss just before (MobiLlama ``log = {'loss':
    loss.item(), 'learning_rate': lr, ...}`` then ``example_batch_idxes.set_postfix(log)``): the loss is read and shown."""
    if len(c.args) != 1 or not getattr(c.args[0], "ref", None) or "." in c.args[0].ref:
        return False
    name, ff = c.args[0].ref, f.files.get(c.path)
    return ff is not None and any(len(e.keys) == 2 and e.keys[0] == name and isinstance(e.keys[1], str) and _LOSS_TEXT.search(e.keys[1])
                                  and c.line - 40 <= e.line < c.line for e in ff.configs)


def hf_hook_logs(f: Facts, threshold: float) -> list[tuple[Call, float]]:
    """``self.log(...)`` in an HF Trainer subclass's own ``compute_loss``/``training_step`` (Medusa 0.1's
    ``CustomizedTrainer(Trainer).compute_loss`` ends with ``self.log(log)`` of each head's loss and top-k accuracies, after
    their ``.item()`` syncs), with how often it runs: the Trainer calls these hooks on every micro-batch, and ``Trainer.log``
    hands each dict to every callback at once (the console progress callback prints it, the ``report_to`` trackers send
    it), whatever ``logging_steps`` says. Only classes derived from an HF/TRL trainer: Lightning's ``self.log`` in a
    LightningModule's ``training_step`` is paced by ``log_every_n_steps``. A call under an interval guard of ``threshold``
    steps or more, or under a switch that is off, is left out."""
    subclasses = hf_trainer_subclasses(f)
    out: list[tuple[Call, float]] = []
    if not subclasses:
        return out
    for c in f.calls("log"):
        if c.name != "self.log" or c.func not in HF_STEP_HOOKS or _TEST_PATH.search(c.path) or guard_off(f, c):
            continue
        if class_at(f, c.path, c.line) not in subclasses:
            continue
        if (n := _hook_pace(f, c, threshold)) is not None:
            out.append((c, n))
    return out


def _hook_pace(f: Facts, c: Call, threshold: float) -> float | None:
    """How often a log call in a hook run on every micro-batch runs, in steps: 1 unguarded, the interval of its guard when
    that is under ``threshold``; None when it is spaced enough (or guarded by something else)."""
    guarded, n = _guard(f, c.guard, c.path)
    if not guarded:
        return 1.0
    return n if n is not None and n < threshold else None


def hf_hook_console_logs(f: Facts, threshold: float) -> list[tuple[Call, float]]:
    """Console logging (:func:`log_calls`: ``print``, ``logger.info``) in an HF Trainer subclass's own ``compute_loss`` /
    ``training_step`` or in a method of the same class they call through ``self`` (two calls deep), with how often it runs:
    the Trainer calls these hooks on every micro-batch, whatever ``logging_steps`` says (SPIN's ``SPINTrainer.spin_loss``,
    reached from ``compute_loss`` through ``get_batch_metrics``, prints its eight loss and reward tensors on every rank at
    every step). A call under an interval guard of ``threshold`` steps or more, or under a switch that is off, is left out."""
    subclasses = hf_trainer_subclasses(f)
    if not subclasses:
        return []
    step: set[tuple[str, str, str]] = set()  # (path, class, method) run on every micro-batch
    paths = sorted({k.path for k in f.records("classes") if k.name in subclasses})
    frontier = {(c.path, k, c.func) for c in f.calls_in(paths) if c.func in HF_STEP_HOOKS
                and (k := class_at(f, c.path, c.line)) in subclasses}
    for _hop in range(3):
        step |= frontier
        nxt: set[tuple[str, str, str]] = set()
        for path, k, m in frontier:
            for c in f.calls_in([path]):
                if c.func == m and c.name.startswith("self.") and c.name.count(".") == 1 and class_at(f, c.path, c.line) == k:
                    nxt.add((path, k, c.name.split(".", 1)[1]))
        frontier = nxt - step
    out: list[tuple[Call, float]] = []
    for c in log_calls(f):
        if not c.func or _TEST_PATH.search(c.path) or (c.path, class_at(f, c.path, c.line), c.func) not in step or guard_off(f, c):
            continue
        if (n := _hook_pace(f, c, threshold)) is not None:
            out.append((c, n))
    return out


def _self_play_trainer(log: str) -> dict[str, str]:
    """SPIN's shape: ``compute_loss`` -> ``get_batch_metrics`` -> ``spin_loss``, which ends with ``{log}``; the recipe logs
    every 10 steps."""
    return {
        "spin/trainer.py": (
            "import torch.nn.functional as F\nfrom transformers import Trainer\n\n\nclass SPINTrainer(Trainer):\n"
            "    def spin_loss(self, policy_logps, reference_logps):\n        logits = policy_logps - reference_logps\n"
            "        losses = -F.logsigmoid(self.beta * logits)\n        " + log + "return losses\n\n"
            "    def get_batch_metrics(self, model, batch):\n        policy_logps = self.concatenated_forward(model, batch)\n"
            "        return self.spin_loss(policy_logps, batch['reference_logps']).mean()\n\n"
            "    def compute_loss(self, model, inputs, return_outputs=False):\n"
            "        return self.get_batch_metrics(model, inputs)\n"),
        "configs/config.yaml": "model_name_or_path: alignment-handbook/zephyr-7b-sft-full\nlogging_steps: 10\nbf16: true\n",
        "spin/run_spin.py": ("from transformers import TrainingArguments\nfrom trainer import SPINTrainer\n\n\ndef main():\n"
                             "    args = TrainingArguments(output_dir='out', logging_steps=10)\n"
                             "    SPINTrainer(model=model, args=args, train_dataset=ds).train()\n\n\n"
                             "if __name__ == '__main__':\n    main()\n"),
    }


#: Medusa 0.1 ``train.py``: an HF Trainer subclass whose ``compute_loss`` logs each head's loss and top-k accuracies with
#: ``self.log`` on every micro-batch; ``logging_steps`` is left at the HF default (500)
_HOOK_LOGGING_TRAINER = (
    "import transformers\nfrom transformers import Trainer\nfrom torch.nn import CrossEntropyLoss\n\n\n"
    "class CustomizedTrainer(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False):\n"
    "        logits = model(input_ids=inputs['input_ids'], attention_mask=inputs['attention_mask'])\n"
    "        loss = 0\n        log = {}\n        for i in range(model.medusa):\n"
    "            loss_i = CrossEntropyLoss()(logits[i].view(-1, logits.shape[-1]), inputs['labels'].view(-1))\n"
    "            loss += loss_i\n            log[f'medusa{i}_loss'] = loss_i.item()\n"
    "{log}        return (loss, logits) if return_outputs else loss\n\n\n"
    "def train():\n    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
    "    (training_args,) = parser.parse_args_into_dataclasses()\n"
    "    trainer = CustomizedTrainer(model=model, args=training_args, train_dataset=ds)\n    trainer.train()\n")
#: Lightning's ``Trainer(log_every_n_steps=...)`` default: how often ``self.log`` values logged in ``training_step`` reach the logger
LIGHTNING_LOG_EVERY = 50
_LIGHTNING_CLASS = lazy_compile(r"class\s+(\w+)\s*\(")


def _lightning_default_logger(ctx: Context) -> list[Call]:
    """Lightning Trainers on the training path whose ``logger`` is not ``False`` (unset, ``True``, or handed through from a
    caller: xTuring's ``Trainer(..., log_every_n_steps=50, logger=logger)`` with ``logger=True`` by default), in a project
    whose LightningModule logs in ``training_step``: Lightning builds its default logger (TensorBoardLogger when tensorboard
    is installed, else CSVLogger) and writes the logged values every ``log_every_n_steps``."""
    f = ctx.facts
    if not lightning_step_logs(f):
        return []
    training = ctx.project.training_files
    return [c for c in f.calls("Trainer") if is_lightning(c) and not _TEST_PATH.search(c.path)
            and (not training or c.path in training) and truthy(c.kwargs.get("logger", True)) is not False and not guard_off(f, c)]


def lightning_step_logs(f: Facts) -> list[Call]:
    """``self.log(...)`` in the ``training_step`` of the project's LightningModule subclasses (``class MinGPT(LightningModule):``
    ... ``self.log("train_loss", loss)``), outside tests and not under a switch that is off: Lightning's Trainer hands these
    values to its logger every ``log_every_n_steps`` steps, not on every step."""
    classes = {m.group(1) for r in f.refs("LightningModule") if (m := _LIGHTNING_CLASS.match(r.text.strip())) and not _TEST_PATH.search(r.path)}
    if not classes:
        return []
    return [c for c in f.calls("log") if c.name == "self.log" and c.func == "training_step" and not _TEST_PATH.search(c.path)
            and class_at(f, c.path, c.line) in classes and not guard_off(f, c)]


#: a LightningModule's ``self.log`` in ``training_step``: Lightning hands it to the logger every ``log_every_n_steps``
_LIGHTNING_SELF_LOG = (
    "import lightning as L\nfrom lightning.pytorch.loggers import WandbLogger\n\n\nclass LitModel(L.LightningModule):\n"
    "    def training_step(self, batch, batch_idx):\n        loss = self.model(batch).loss\n"
    "        self.log('train_loss', loss)\n        return loss\n\n\n"
    "trainer = L.Trainer(logger=WandbLogger(project='p'), log_every_n_steps=50)\ntrainer.fit(LitModel(), loader)\n")


def _lightning_passed_logger(every: int) -> dict[str, str]:
    """xTuring 0.1.8's shape: a library's Lightning trainer hands the caller's ``logger`` (``True`` by default) to the
    Trainer; the LightningModule logs the loss in ``training_step``."""
    return {"mylib/trainers/lightning_trainer.py": (
        "import pytorch_lightning as pl\nfrom pytorch_lightning.trainer.trainer import Trainer\n\n\n"
        "class TuringLightningModule(pl.LightningModule):\n    def training_step(self, batch, batch_idx):\n"
        "        loss = self.model_engine.training_step(batch)\n        self.log('loss', loss.item(), prog_bar=True)\n"
        "        return loss\n\n\nclass LightningTrainer:\n    def __init__(self, module, max_epochs=3, logger=True):\n"
        "        self.module = module\n"
        f"        self.trainer = Trainer(num_nodes=1, accelerator='gpu', max_epochs=max_epochs, log_every_n_steps={every}, logger=logger)\n\n"
        "    def fit(self):\n        self.trainer.fit(self.module)\n")}


def _computed_logging(cap: int) -> str:
    """A trainer that derives ``logging_steps`` from the data size, floors it at 1 and caps it (an example's source)."""
    return ("from transformers import Trainer, TrainingArguments\n\n"
            "def configure_logging_steps(config, train_data):\n"
            "    if config.logging_steps == -1:\n"
            "        logging_steps = int(0.2 * len(train_data) / config.batch_size)\n"
            "        if logging_steps == 0:\n            logging_steps = 1\n"
            f"        if logging_steps > {cap}:\n            logging_steps = {cap}\n"
            "    else:\n        logging_steps = config.logging_steps\n"
            "    return logging_steps\n\n"
            "def train(config, model, train_data):\n"
            "    args = TrainingArguments(output_dir='out', logging_steps=configure_logging_steps(config, train_data))\n"
            "    Trainer(model=model, args=args, train_dataset=train_data).train()\n")


#: a recipe library whose README quickstart runs the pretraining recipe: it starts from ``_pretrain_common()`` (log every 10
#: iterations); the SFT base logs every iteration, but no documented run uses it
_RUN_README = (
    "## Training quickstart\n\n```python\nfrom mylib.recipes.llama import llama_1b_pretrain_config\n"
    "from mylib.training.pretrain import pretrain\n\ncfg = llama_1b_pretrain_config()\npretrain(cfg, forward_step)\n```\n"
)
_RUN_LIBRARY = {
    "mylib/recipes/common.py": (
        "from mylib.training.config import ConfigContainer, LoggerConfig\n\n"
        "def _pretrain_common():\n    return ConfigContainer(logger=LoggerConfig(log_interval=10, tensorboard_dir='tb'))\n\n"
        "def _sft_common():\n    return ConfigContainer(logger=LoggerConfig(log_interval=1, tensorboard_dir='tb'))\n"),
    "mylib/recipes/llama.py": (
        "from mylib.recipes.common import _pretrain_common, _sft_common\n\n"
        "def llama_1b_pretrain_config():\n    cfg = _pretrain_common()\n    cfg.train.global_batch_size = 512\n    return cfg\n\n"
        "def llama_1b_sft_config():\n    cfg = _sft_common()\n    return cfg\n"),
}


def _name_table_args(logging_steps: int) -> dict[str, str]:
    """An arguments module with a table of option names for another trainer and a loop logging at ``logging_steps``."""
    return {
        "pkg/args.py": (
            "from dataclasses import dataclass, field\n\n"
            "# option names of this trainer -> the Megatron option each one is forwarded as\n"
            "COMMON_TO_MEGATRON_ARG_MAP = {\n    \"bf16\": \"bf16\",\n    \"output_dir\": \"save\",\n"
            "    \"save_steps\": \"save_interval\",\n    \"logging_steps\": \"log_interval\",\n    \"eval_steps\": \"eval_interval\",\n}\n\n\n"
            "@dataclass\nclass TrainingArgs:\n    output_dir: str = field(default=None)\n"
            f"    logging_steps: int = field(default={logging_steps}, metadata={{\"help\": \"Log every X updates steps.\"}})\n"
            "    save_steps: int = field(default=500)\n"),
        "pkg/train.py": (
            "import torch\nfrom pkg.args import TrainingArgs\n\n\n"
            "def train(model, loader, args: TrainingArgs):\n    opt = torch.optim.AdamW(model.parameters())\n"
            "    for step, batch in enumerate(loader):\n        loss = model(**batch).loss\n        loss.backward()\n"
            "        opt.step()\n        opt.zero_grad()\n"
            "        if step % args.logging_steps == 0:\n            print(f\"step {step} loss {loss.item()}\")\n"),
    }



#: FlagAI's ``Trainer.train_step`` shape: a NaN/inf loss skips backward with a notice in the else branch (shared by the
#: I4 examples and tests/engine/test_round15_flagai_rules.py)
NAN_SKIP_STEP = (
    "from mylib.logger import log_dist\nfrom mylib.fp16 import DynamicLossScaler\n\nclass Trainer:\n"
    "    def train_step(self, data, model, optimizer):\n        lm_loss = model(**data)['loss']\n"
    "        reduced_loss = lm_loss.detach().clone().view(1)\n"
    "        if not DynamicLossScaler._has_inf_or_nan(reduced_loss):\n            lm_loss.backward()\n"
    "            optimizer.step()\n        else:\n            log_dist('Found NaN loss, skip backward', [0])\n"
    "        return reduced_loss\n\n"
)

#: CoLLiE 1.0.7's Trainer: the batch loop calls the trainer's own static ``train_fn``, which runs the engine's backward and step and
#: returns the all-reduced loss as a float; the loop then shows it in the progress bar (``{log}``)
_STATIC_TRAIN_FN = (
    "import torch.distributed as dist\nfrom tqdm import tqdm\n\n\nclass Trainer:\n"
    "    def __init__(self, engine, loader, epochs=3):\n        self.engine = engine\n        self.loader = loader\n"
    "        self.epochs = epochs\n\n    def train(self):\n        bar = tqdm(self.loader)\n"
    "        for epoch in range(self.epochs):\n            for self.batch_idx, batch in enumerate(bar):\n"
    "                loss = self.train_fn(self, batch)\n{log}\n"
    "    @staticmethod\n    def train_fn(trainer, batch):\n        outputs = trainer.engine(**batch)\n        loss = outputs['loss']\n"
    "        trainer.engine.backward(loss)\n        trainer.engine.step()\n        dist.all_reduce(loss)\n"
    "        return loss.detach().cpu().item()\n")
_POSTFIX_EVERY = "                bar.set_postfix(Loss=round(loss, 4))\n"
_POSTFIX_SPACED = "                if (self.batch_idx + 1) % 50 == 0:\n                    bar.set_postfix(Loss=round(loss, 4))\n"


def _static_train_fn(log: str) -> dict[str, str]:
    return {"mylib/controller/trainer.py": _STATIC_TRAIN_FN.format(log=log)}


def _ds_monitor(default: str) -> dict[str, str]:
    """CoLLiE 1.0.7's monitors: DeepSpeed's ``MonitorMaster`` (TensorBoard/W&B/CSV) is built only when the run's ``ds_config``
    has a ``monitor_config`` key; ``default`` is the config field's default mapping."""
    return {
        "mylib/config.py": ("from dataclasses import dataclass, field\n\n\n@dataclass\nclass LMConfig:\n    train_epochs: int = 3\n"
                            f"    ds_config: dict = field(default_factory=lambda: {default})\n"),
        "mylib/monitor.py": ("from deepspeed.monitor.monitor import MonitorMaster\n\n\ndef get_monitor(config):\n"
                             "    if \"monitor_config\" in config.ds_config.keys():\n"
                             "        return MonitorMaster(config.ds_config[\"monitor_config\"])\n    return None\n\n\n"
                             "class StepMonitor:\n    def __init__(self, config):\n        self.monitor = get_monitor(config)\n\n"
                             "    def __call__(self, step, loss):\n        if self.monitor is not None:\n"
                             "            self.monitor.write_events([(\"train/loss\", loss, step)])\n"),
        "mylib/trainer.py": ("class Trainer:\n    def __init__(self, engine, loader, monitors=()):\n        self.engine = engine\n"
                             "        self.loader = loader\n        self.monitors = list(monitors)\n\n    def train(self):\n"
                             "        for step, batch in enumerate(self.loader):\n            loss = self.engine(**batch)['loss']\n"
                             "            self.engine.backward(loss)\n            self.engine.step()\n"
                             "            for monitor in self.monitors:\n                monitor(step, loss)\n"),
    }


@register
class I4LoggingFrequency(Check):
    id = "I4"
    title = "Sane logging frequency"
    title_zh = "日志打印频率"
    bottlenecks = (Bottleneck.LATENCY,)
    priority = Priority.LOW
    benefit = "fewer host syncs and less console I/O on the critical path: a loss read (`loss.item()`) only for the log is read every N steps, not every step"
    what = (
        "Whether metrics are logged at a sane interval: HF `logging_steps`, Megatron `--log-interval`, Lightning "
        "`log_every_n_steps`, DeepSpeed `steps_per_print`, nanotron `iteration_step_info_interval`, `print_freq`/`log_freq`, "
        "and `print`/`logger.info` in the training-step loop without an interval guard. Too frequent: every < 10 steps."
    )
    why = (
        "Logging a loss each step forces a GPU-to-CPU sync (`.item()`) that drains the CUDA queue, and console/file I/O "
        "on rank 0 delays every rank at the next collective; the seed recommends `logging_steps >= 10`. The cost is small "
        "per step (typically 1-5 %) but free to remove."
    )
    fix = "Log every 10-100 steps: `logging_steps: 10` (HF), `--log-interval 10` (Megatron), `log_every_n_steps=50` (Lightning), `steps_per_print: 100` (DeepSpeed); guard loop prints with `if step % log_every == 0`."
    fix_zh = "每 10-100 步打印一次日志：`logging_steps: 10`（HF）、`--log-interval 10`（Megatron）、`log_every_n_steps=50`（Lightning）、`steps_per_print: 100`（DeepSpeed）；训练循环中的打印用 `if step % log_every == 0` 控制。"
    fix_safety = FixSafety.SAFE
    references = ("https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments.logging_steps",
                  "https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html")
    snippets = {
        "hf-yaml": "logging_steps: 10\n",
        "deepspeed-json": '{\n  "steps_per_print": 100\n}\n',
        "shell": "torchrun --nproc_per_node 8 pretrain_gpt.py --log-interval 10\n",
        "lightning": "trainer = L.Trainer(log_every_n_steps=50)\n",
        "python": "if step % log_every == 0:\n    print(f\"step {step} loss {loss.item():.4f}\")\n",
    }
    examples = (
        Example({  # verl: the Tracking object's backends come from trainer.logger, console included; fed every step
            "verl/trainer/config/ppo_trainer.yaml": "trainer:\n  project_name: verl_examples\n  logger: ['console', 'wandb']\n",
            "verl/trainer/ppo/trainer_base.py": (
                "from verl.utils.tracking import Tracking\n\nclass PPOTrainer:\n    def fit(self):\n"
                "        self.logger = Tracking(project_name=self.config.trainer.project_name,\n"
                "                               default_backend=self.config.trainer.logger)\n"
                "        while self.global_steps <= self.total_training_steps:\n            metrics = {}\n"
                "            batch = self.step(metrics)\n            self.logger.log(data=metrics, step=self.global_steps)\n"
                "            self.global_steps += 1\n"),
        }, N, "console-backed Tracking from the run config, every step"),
        Example({"engine.py": (  # a warning printed under a condition is not the step's metrics
            "import torch\n\ndef optimizer_step(model, optimizer, loader, log_every=100):\n"
            "    for step, batch in enumerate(loader):\n        loss = model(batch).loss\n        loss.backward()\n"
            "        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "        if not torch.isfinite(grad_norm):\n            print(f'WARN: grad_norm is not finite: {grad_norm}')\n"
            "        optimizer.step()\n        if step % log_every == 0:\n            print(f'step {step} loss {loss.item()}')\n")},
            U, "guarded warning print, metrics every 100 steps"),
        Example({  # an interval computed from the data size: the floor for tiny data (== 0 -> 1) is not the setting, the cap is
            "llm/params.py": (
                "from pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                "    logging_steps: int = Field(-1, title='Number of steps between logging events')\n"
                "    batch_size: int = Field(2, title='Batch size')\n"),
            "llm/train.py": _computed_logging(25),
        }, U, "computed interval, floored at 1 and capped at 25"),
        Example({
            "llm/params.py": (
                "from pydantic import BaseModel, Field\n\nclass LLMParams(BaseModel):\n"
                "    logging_steps: int = Field(-1, title='Number of steps between logging events')\n"),
            "llm/train.py": _computed_logging(5),
        }, N, "computed interval capped at 5"),
        Example({  # arctic-training: the loss is logged by a post-loss callback at an interval whose pydantic default is 1
            "arctic_training/config/trainer.py": (
                "from pydantic import BaseModel, Field\n\nclass TrainerConfig(BaseModel):\n"
                "    loss_log_interval: int = Field(default=1, ge=0)\n"),
            "arctic_training/callback/logging.py": (
                "from arctic_training.logging import logger\n\ndef _log_loss_value(self, loss):\n"
                "    if self.config.loss_log_interval != 0 and self.global_step % self.config.loss_log_interval == 0:\n"
                "        logger.info(f'Global Step: {self.global_step}, Loss: {loss}')\n    return loss\n\n"
                "post_loss_log_cb = ('post-loss', _log_loss_value)\n"),
        }, N, "loss logged every step by a Field(default=1) interval"),
        Example({"config/trainer.py": (
            "from pydantic import BaseModel, Field\n\nclass TrainerConfig(BaseModel):\n"
            "    loss_log_interval: int = Field(default=50, ge=0)\n")}, U, "loss logged every 50 steps"),
        Example({  # torchtitan 0.3.0: recipes as functions of a config registry; only the debug model logs every step
            "torchtitan/components/metrics.py": (
                "from dataclasses import dataclass\n"
                "class MetricsProcessor:\n"
                "    @dataclass\n"
                "    class Config:\n"
                "        log_freq: int = 10\n"
                "        enable_tensorboard: bool = False\n"),
            "torchtitan/models/llama3/config_registry.py": (
                "from torchtitan.trainer import Trainer\n"
                "from torchtitan.components.metrics import MetricsProcessor\n"
                "def llama3_debugmodel() -> Trainer.Config:\n"
                "    return Trainer.Config(metrics=MetricsProcessor.Config(log_freq=1), steps=10)\n"
                "def llama3_8b() -> Trainer.Config:\n"
                "    return Trainer.Config(metrics=MetricsProcessor.Config(enable_tensorboard=True), steps=1000)\n"
                "def llama3_70b() -> Trainer.Config:\n"
                "    return Trainer.Config(metrics=MetricsProcessor.Config(enable_tensorboard=True), steps=1000)\n"),
        }, U, "a debug recipe of a config registry is not the run's logging interval"),
        Example({  # torchtitan 0.3.0: two real recipes log every step, the others leave log_freq at the Config default of 10
            "torchtitan/components/metrics.py": (
                "from dataclasses import dataclass\nclass MetricsProcessor:\n    @dataclass\n    class Config:\n        log_freq: int = 10\n"),
            "torchtitan/models/qwen3/config_registry.py": (
                "from torchtitan.trainer import Trainer\nfrom torchtitan.components.metrics import MetricsProcessor\n"
                "def qwen3_0_6b() -> Trainer.Config:\n    return Trainer.Config(metrics=MetricsProcessor.Config(log_freq=1), steps=100)\n"
                "def qwen3_moe_deepep() -> Trainer.Config:\n    return Trainer.Config(metrics=MetricsProcessor.Config(log_freq=1), steps=100)\n"
                "def qwen3_8b() -> Trainer.Config:\n    return Trainer.Config(metrics=MetricsProcessor.Config(enable_tensorboard=True), steps=3000)\n"
                "def qwen3_14b() -> Trainer.Config:\n    return Trainer.Config(metrics=MetricsProcessor.Config(), steps=3000)\n"
                "def qwen3_32b() -> Trainer.Config:\n    return Trainer.Config(metrics=MetricsProcessor.Config(), steps=3000)\n"),
        }, U, "registry recipes that leave log_freq unset count at the Config default"),
        Example({  # the same registry where most recipes log every step
            "torchtitan/components/metrics.py": (
                "from dataclasses import dataclass\nclass MetricsProcessor:\n    @dataclass\n    class Config:\n        log_freq: int = 10\n"),
            "torchtitan/models/qwen3/config_registry.py": (
                "from torchtitan.trainer import Trainer\nfrom torchtitan.components.metrics import MetricsProcessor\n"
                "def qwen3_0_6b() -> Trainer.Config:\n    return Trainer.Config(metrics=MetricsProcessor.Config(log_freq=1), steps=100)\n"
                "def qwen3_1_7b() -> Trainer.Config:\n    return Trainer.Config(metrics=MetricsProcessor.Config(log_freq=2), steps=100)\n"
                "def qwen3_8b() -> Trainer.Config:\n    return Trainer.Config(metrics=MetricsProcessor.Config(log_freq=1), steps=3000)\n"
                "def qwen3_32b() -> Trainer.Config:\n    return Trainer.Config(metrics=MetricsProcessor.Config(), steps=3000)\n"),
        }, N, "most registry recipes log every 1-2 steps"),
        Example({"train.yaml": "logging_steps: 10\nsave_steps: 500\n"}, U, "logging every 10"),
        Example(_regime("None", "None"), U, "a regime section's publish_metrics_every_n_steps defaults to None and nothing sets it"),
        Example({"trainer.py": (  # lmms-engine: a helper's wait branch runs only when the final call passes the flag
            "import logging\nlogger = logging.getLogger(__name__)\n\nclass Trainer:\n"
            "    def _check_eval_results(self, rank, wait_until_complete=False):\n        if wait_until_complete:\n"
            "            logger.info('Waiting for pending evaluation jobs to complete...')\n"
            "    def train(self, args):\n        for step, batch in enumerate(self.train_dataloader):\n"
            "            loss = self.training_step(batch)\n            self.optimizer.step()\n"
            "            if self.global_step % args.logging_steps == 0:\n                logger.info('step %d loss %.4f', step, loss)\n"
            "            self._check_eval_results(0)\n        self._check_eval_results(0, wait_until_complete=True)\n"),
            "train.yaml": "logging_steps: 50\n"}, U, "a helper's flag branch turned on only after the loop"),
        Example({  # lmms-engine: a Tracking object with a console backend prints the metrics of every optimizer step
            "src/lmms_engine/train/fsdp2/fsdp2_trainer.py": (
                "from lmms_engine.utils.tracking import Tracking\n\nclass FSDP2SFTTrainer:\n    def __init__(self, args):\n"
                "        self.default_backend = []\n        if 'wandb' in args.report_to:\n            self.default_backend.append('wandb')\n"
                "        self.default_backend.append('console')\n"
                "    def train(self, rank):\n        self.tracking = Tracking(self.args.run_name, default_backend=self.default_backend)\n"
                "        for step, batch in enumerate(self.train_dataloader):\n            train_metrics = self.training_step(batch)\n"
                "            self.optimizer.step()\n            if rank == 0:\n"
                "                self.tracking.log(train_metrics, step=self.global_step)\n"),
            "examples/qwen2_5_vl/example_config.yaml": "trainer_args:\n  logging_steps: 10\n",
        }, N, "a console-backed Tracking object fed every step"),
        Example({"train.py": (  # a warning only when the gradient norm is not finite: not per-step logging
            "import logging\nlogger = logging.getLogger(__name__)\n"
            "for step, batch in enumerate(loader):\n    loss = model(batch).loss\n    loss.backward()\n"
            "    grad_norm = clip_grad_norm_(model.parameters(), 1.0)\n"
            "    if not torch.isfinite(grad_norm):\n        logger.warning(f'step {step}: grad_norm is not finite')\n"
            "    optimizer.step()\n"
            "    if step % 50 == 0:\n        logger.info('step %d loss %.4f', step, loss.item())\n")}, U,
            "a conditional warning is not per-step logging"),
        Example({"mylib/trainer.py": (  # the else of a NaN test is the skip notice of a bad step, not the step's metrics
            NAN_SKIP_STEP +
            "    def train(self, model, optimizer, loader, log_interval=100):\n        total = 0.0\n"
            "        for iteration, batch in enumerate(loader):\n            total += self.train_step(batch, model, optimizer)\n"
            "            if (iteration + 1) % log_interval == 0:\n"
            "                log_dist(f'iteration {iteration + 1} loss {total.item() / log_interval}', [0])\n"
            "                total = 0.0\n")}, U, "a NaN-skip notice in the else of a finite-loss test, metrics every 100 iterations"),
        Example({"mylib/trainer.py": (  # the same NaN-skip notice, and the loss logged every iteration
            NAN_SKIP_STEP +
            "    def train(self, model, optimizer, loader):\n"
            "        for iteration, batch in enumerate(loader):\n            loss = self.train_step(batch, model, optimizer)\n"
            "            log_dist(f'iteration {iteration + 1} loss {loss.item()}', [0])\n")}, N,
            "a NaN-skip notice beside a loss logged every iteration"),
        Example({"trainer.py": (  # the same helper whose flag the step loop passes
            "import logging\nlogger = logging.getLogger(__name__)\n\nclass Trainer:\n"
            "    def _report(self, rank, verbose=False):\n        if verbose:\n            logger.info('rank %d done', rank)\n"
            "    def train(self, args):\n        for step, batch in enumerate(self.train_dataloader):\n"
            "            loss = self.training_step(batch)\n            self.optimizer.step()\n"
            "            self._report(0, verbose=True)\n        self._report(0, verbose=True)\n")}, N,
            "a helper's flag branch turned on by the step loop"),
        Example({"train.py": "from transformers import Trainer, TrainingArguments\ntrainer = Trainer(model=m, args=TrainingArguments(output_dir='o'))\n"}, U, "HF defaults"),
        Example({"train.py": "import lightning as L\ntrainer = L.Trainer(log_every_n_steps=50)\n"}, U, "lightning 50"),
        Example({"medusa/train/train.py": _HOOK_LOGGING_TRAINER.replace("{log}", "        self.log(log)\n")}, N,
                "self.log in an HF Trainer subclass's compute_loss: every micro-batch, past logging_steps"),
        Example({"medusa/train/train.py": _HOOK_LOGGING_TRAINER.replace("{log}", "")}, U, "the same trainer without its own log: HF default 500"),
        Example({"train.py": _LIGHTNING_SELF_LOG}, U, "a LightningModule's self.log in training_step, at log_every_n_steps 50"),
        Example({"gptlib/models.py": _LIGHTNING_SELF_LOG.split("\n\n\ntrainer = ")[0] + "\n"}, U,
                "a LightningModule's self.log in training_step, log_every_n_steps set nowhere: Lightning's default 50"),
        Example({"train.py": _LIGHTNING_SELF_LOG.replace("log_every_n_steps=50", "log_every_n_steps=1")}, N,
                "the same module under a Trainer that logs every step"),
        Example({"train.yaml": "logging_steps: 1\n"}, N, "logging every step"),
        Example({**_RUN_LIBRARY, "README.md": _RUN_README}, U, "the README's run recipe starts from a base that logs every 10 iterations"),
        Example(_RUN_LIBRARY, N, "a recipe library without a documented run: its SFT base logs every iteration"),
        Example({"run.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --log-interval 1 --num-layers 24\n"}, N, "megatron log-interval 1"),
        Example({"ds_config.json": '{\n  "steps_per_print": 1,\n  "zero_optimization": {"stage": 2}\n}\n'}, N, "deepspeed steps_per_print 1"),
        Example({  # Baichuan-7B: steps_per_print 16, and the engine's micro-timers printed at every step anyway
            "config/deepspeed.json": ('{\n  "train_micro_batch_size_per_gpu": 1,\n  "steps_per_print": 16,\n'
                                      '  "zero_optimization": {"stage": 2},\n  "wall_clock_breakdown": true\n}\n'),
            "scripts/train.sh": "deepspeed train.py --deepspeed --deepspeed_config config/deepspeed.json\n"},
            N, "deepspeed wall_clock_breakdown true: timings printed every step"),
        Example({
            "config/deepspeed.json": ('{\n  "train_micro_batch_size_per_gpu": 1,\n  "steps_per_print": 16,\n'
                                      '  "zero_optimization": {"stage": 2},\n  "wall_clock_breakdown": false\n}\n'),
            "scripts/train.sh": "deepspeed train.py --deepspeed --deepspeed_config config/deepspeed.json\n"},
            U, "the same with wall_clock_breakdown false"),
        Example({"examples/pretrain_yuan.sh": (  # Yuan 2.0: every micro-batch timed with a device synchronisation
            'GPT_ARGS="\n    --tensor-model-parallel-size 1 \\\n    --timing-log-level 2 \\\n    --num-workers 2 \\\n    --bf16\n"\n'
            'OUTPUT_ARGS="\n    --log-interval 10 \\\n    --save-interval 10000\n"\n'
            "torchrun --nproc_per_node 8 pretrain_yuan.py $GPT_ARGS $OUTPUT_ARGS\n")},
            N, "megatron timing-log-level 2 beside log-interval 10"),
        Example({"train.py": (
            "for step, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n"
            "    print(f'step {step} loss {loss.item()}')\n")}, N, "print every step"),
        Example({"train.py": (
            "for step, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n"
            "    if step % 50 == 0:\n        print(f'step {step} loss {loss.item()}')\n")}, U, "guarded print"),
        Example({"train_gpt.py": (  # modded-nanogpt: a rank-0 print wrapper every step
            "import torch\nmaster_process = int(os.environ.get('RANK', 0)) == 0\n"
            "def print0(s, console=False):\n    if master_process:\n        print(s)\n"
            "for step in range(train_steps + 1):\n    loss = model(inputs, targets)\n    loss.backward()\n"
            "    for opt in optimizers:\n        opt.step()\n"
            "    print0(f'step:{step+1}/{train_steps} train_time:{approx_time:.0f}ms', console=True)\n")}, N, "print0 every step"),
        Example({"pretrain.py": (  # litgpt: fabric.print gated by an interval derived from log_interval=1
            "import lightning as L\nfrom dataclasses import dataclass\n"
            "@dataclass\nclass TrainArgs:\n    log_interval: int = 1\n    save_interval: int = 1000\n"
            "def fit(fabric, model, optimizer, train, accum_iters):\n"
            "    log_iter_interval = train.log_interval * train.gradient_accumulation_iters(accum_iters)\n"
            "    for iter_num, batch in enumerate(train_iterator):\n        loss = model(batch)\n        fabric.backward(loss)\n"
            "        optimizer.step()\n"
            "        if iter_num % log_iter_interval == 0:\n            fabric.print(f'iter {iter_num}: loss {loss.item():.4f}')\n")}, N,
            "fabric.print at a derived interval of 1"),
        Example({"trainer.py": (  # an early exit is the interval guard
            "import logging\nlogger = logging.getLogger(__name__)\n"
            "for step, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n"
            "    if step % 100 != 0:\n        continue\n    logger.info('step %d loss %.4f', step, loss.item())\n")}, U,
            "early continue guards logger.info"),
        Example({  # xtuner: mmengine Python configs are the recipes; 3 of 4 log every 10 iterations through their LoggerHook
            "xtuner/tools/train.py": _MM_TRAIN,
            "xtuner/configs/llama/llama2_7b_qlora_alpaca_e3.py": _mm_config("meta-llama/Llama-2-7b-hf", 10),
            "xtuner/configs/qwen/qwen1_5_7b_qlora_alpaca_e3.py": _mm_config("Qwen/Qwen1.5-7B", 10),
            "xtuner/configs/internlm/internlm2_7b_qlora_alpaca_e3.py": _mm_config("internlm/internlm2-7b", 10),
            "xtuner/configs/llama_speed_benchmark/llama2_70b_full_alpaca_8k.py": _mm_config("meta-llama/Llama-2-70b-hf", 1),
        }, U, "mmengine configs: the majority's LoggerHook logs every 10 iterations"),
        Example({  # the same configs where most log every iteration
            "xtuner/tools/train.py": _MM_TRAIN,
            "xtuner/configs/llama/llama2_7b_qlora_alpaca_e3.py": _mm_config("meta-llama/Llama-2-7b-hf", 1),
            "xtuner/configs/qwen/qwen1_5_7b_qlora_alpaca_e3.py": _mm_config("Qwen/Qwen1.5-7B", 1),
            "xtuner/configs/internlm/internlm2_7b_qlora_alpaca_e3.py": _mm_config("internlm/internlm2-7b", 10),
        }, N, "mmengine configs: the majority's LoggerHook logs every iteration"),
        Example({  # oumi: an HF callback that logs the first step's time once, then only accumulates it
            "src/oumi/core/callbacks/mfu_callback.py": (
                "import time\nimport transformers\nfrom oumi.utils.logging import logger\n\n"
                "class MfuTrainerCallback(transformers.TrainerCallback):\n    def __init__(self):\n"
                "        self._first_step_finished = False\n        self._time_for_train_steps = 0.0\n"
                "    def on_step_begin(self, args, state=None, control=None, **kwargs):\n        self._step_start_time = time.time()\n"
                "    def on_step_end(self, args, state=None, control=None, **kwargs):\n"
                "        delta_time_seconds = time.time() - self._step_start_time\n        if not self._first_step_finished:\n"
                "            self._first_step_finished = True\n            logger.info(f'First step time: {delta_time_seconds:.2f}s')\n"
                "            return\n        self._time_for_train_steps += delta_time_seconds\n"),
            "configs/recipes/llama3_1/sft/8b_full/train.yaml": "training:\n  trainer_type: TRL_SFT\n  logging_steps: 100\n  save_steps: 800\n",
        }, U, "a callback's first-step-only log"),
        Example({  # the same callback logging on every step unless a verbosity flag (never set there) is off
            "src/mylib/callbacks/timing_callback.py": (
                "import time\nimport logging\nimport transformers\nlogger = logging.getLogger(__name__)\n\n"
                "class TimingCallback(transformers.TrainerCallback):\n    def __init__(self, quiet=False):\n        self._quiet = quiet\n"
                "    def on_step_begin(self, args, state=None, control=None, **kwargs):\n        self._t0 = time.time()\n"
                "    def on_step_end(self, args, state=None, control=None, **kwargs):\n        if not self._quiet:\n"
                "            logger.info(f'step time: {time.time() - self._t0:.2f}s')\n"),
            "configs/train.yaml": "training:\n  logging_steps: 100\n",
        }, N, "a callback's log on every step"),
        Example({  # nanoGPT: recipe modules exec'ed over train.py's module-level defaults; 2 of 3 recipes log every 10 iterations
            "train.py": (
                "import time\nimport torch\n# default config values designed to train a gpt2 (124M) on OpenWebText\n"
                "out_dir = 'out'\neval_interval = 2000\nlog_interval = 1\neval_iters = 200\nwandb_log = False # disabled by default\n"
                "batch_size = 12\nmax_iters = 600000\n"
                "exec(open('configurator.py').read())  # overrides from command line or config file\n"
                "t0 = time.time()\nwhile True:\n    loss = model(X, Y)\n    loss.backward()\n    optimizer.step()\n"
                "    if iter_num % log_interval == 0 and master_process:\n"
                "        print(f'iter {iter_num}: loss {loss.item():.4f}')\n    iter_num += 1\n"),
            "config/train_gpt2.py": "wandb_log = True\nbatch_size = 12\neval_interval = 1000\neval_iters = 200\nlog_interval = 10\n",
            "config/train_shakespeare_char.py": (
                "out_dir = 'out-shakespeare-char'\neval_interval = 250 # keep frequent because we'll overfit\neval_iters = 200\n"
                "log_interval = 10 # don't print too too often\nbatch_size = 64\nmax_iters = 5000\n"),
            "config/finetune_shakespeare.py": "out_dir = 'out-shakespeare'\neval_interval = 5\neval_iters = 40\nbatch_size = 1\nmax_iters = 20\n",
        }, U, "recipe modules: the majority logs every 10"),
        Example({  # the same layout where most recipes keep train.py's log_interval = 1
            "train.py": (
                "import torch\nout_dir = 'out'\neval_interval = 2000\nlog_interval = 1\nbatch_size = 12\n"
                "exec(open('configurator.py').read())\n"
                "while True:\n    loss = model(X, Y)\n    loss.backward()\n    optimizer.step()\n"
                "    if iter_num % log_interval == 0 and master_process:\n        print(f'iter {iter_num}: loss {loss.item():.4f}')\n"),
            "config/train_gpt2.py": "batch_size = 12\neval_interval = 1000\nlog_interval = 10\n",
            "config/train_small.py": "out_dir = 'out-small'\nbatch_size = 64\neval_interval = 250\n",
            "config/finetune.py": "out_dir = 'out-ft'\nbatch_size = 1\neval_interval = 5\n",
        }, N, "recipe modules: the majority keeps the default of 1"),
        Example({  # Megatron-LM: launch scripts that leave --log-interval unset run with its default of 100
            "megatron/training/config/training_config.py": (
                "from dataclasses import dataclass\n@dataclass\nclass TrainingConfig:\n    micro_batch_size: int = 1\n"
                "    log_interval: int = 100\n    \"\"\"Report loss and timing interval.\"\"\"\n"),
            "examples/gpt3/train_gpt3_175b_distributed.sh": (
                "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n    --micro-batch-size 1 \\\n    --log-interval 100 \\\n    --save-interval 10000\n"),
            "examples/llama/train_llama3_8b.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 --save-interval 1000\n",
            "examples/mixtral/train_mixtral_8x7b.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 --num-experts 8\n",
            "examples/debug/run_tiny.sh": "torchrun --nproc_per_node 1 pretrain_gpt.py --micro-batch-size 1 --log-interval 1\n",
        }, U, "launch scripts: the majority runs with the default of 100"),
        Example({  # the same launch scripts where most pass --log-interval 1: judged by them, the default notwithstanding
            "megatron/training/config/training_config.py": (
                "from dataclasses import dataclass\n@dataclass\nclass TrainingConfig:\n    log_interval: int = 100\n"),
            "examples/gpt3/train_gpt3_175b_distributed.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 --log-interval 1\n",
            "examples/llama/train_llama3_8b.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 2 \\\n    --log-interval 1\n",
            "examples/mixtral/train_mixtral_8x7b.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 1 --log-interval 1\n",
            "examples/bert/train_bert.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 4\n",
        }, N, "launch scripts: the majority logs every step"),
        Example({"train.py": (  # no log call and no logging interval on the training path: not judged (n/a)
            "import torch\nfor step, batch in enumerate(loader):\n    loss = model(batch).loss\n    loss.backward()\n"
            "    optimizer.step()\n")}, Status.NA, "nothing seen: not judged"),
        # an RL step loop (one policy update per iteration) logs through a helper that calls a stats object of another file
        Example(_PPO_FILES, N, "per-step log two calls below an RL update loop, in the stats logger's module"),
        # a table translating option names for another trainer (``"logging_steps": "log_interval"``) sets nothing: the
        # arguments class's own default decides (ATorch ``COMMON_TO_MEGATRON_ARG_MAP`` beside ``AtorchTrainingArgs``)
        Example(_name_table_args(1), N, "field default 1 beside a table mapping the option's name to another trainer's"),
        Example(_name_table_args(500), U, "field default 500 beside the same name table"),
        Example(torchx_runner(log_freq=1), N, "torchtitan launched from a Python runner with --metrics.log_freq=1"),
        Example(torchx_runner(log_freq=50), U, "the same launch with --metrics.log_freq=50"),
        Example(_static_train_fn(_POSTFIX_EVERY), N, "the loss in the progress bar after every call of the trainer's own train_fn"),
        Example(_static_train_fn(_POSTFIX_SPACED), U, "the same progress bar updated every 50 batches"),
        Example(_self_play_trainer("print(f'losses: {losses}')\n        "), N,
                "an HF Trainer subclass's loss, reached from compute_loss, prints its tensors on every micro-batch (SPIN)"),
        Example(_self_play_trainer("if self.state.global_step % 100 == 0:\n            print(f'losses: {losses}')\n        "), U,
                "the same print every 100 steps; logging_steps 10"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        threshold = 10
        items = config_file_intervals(f, interval_settings(f, _LOG_KEYS, strategy="logging_strategy"), hook_intervals(f, _LOGGER_HOOK),
                                      "the logging interval (LoggerHook interval, else logging_steps/log_interval)", _interval_band(threshold))
        bad: list[tuple[Any, str, float]] = [(i.fact, i.key, i.steps) for i in items if i.kind == "steps" and i.steps is not None and i.steps < threshold]
        spaced: list[tuple[Call, float | None]] = []
        loop = per_step_calls(f, log_calls(f) + _console_trackers(f), threshold, spaced)
        bad += [(c, f"{c.short}() in the training loop", n) for c, n in loop]
        # the Trainer subclass's own hook logs on every micro-batch, past logging_steps (printed by the progress callback)
        hooks = hf_hook_logs(f, threshold)
        bad += [(c, f"self.log() in the HF Trainer subclass's {c.func} (every micro-batch, whatever logging_steps)", n) for c, n in hooks]
        # ... and so do its prints and logger calls there, or in the methods those hooks call
        seen = {(c.path, c.line) for c, _ in loop}
        prints = [(c, n) for c, n in hf_hook_console_logs(f, threshold) if (c.path, c.line) not in seen]
        bad += [(c, f"{c.short}() in the HF Trainer subclass's {c.func}, run on every micro-batch whatever logging_steps", n)
                for c, n in prints]
        loop += hooks + prints
        timers = _step_timers(f)
        bad += [(t, why, 1) for t, why in timers]
        extra: dict[str, Any] = {}
        if loop:
            extra["log_in_step_loop"] = int(min(n for _, n in loop))
        if not any(i.name == "logging_steps" for i in items) and uses_hf_trainer(f):
            extra["logging_steps"] = HF_DEFAULTS["logging_steps"]
        # a LightningModule's self.log in training_step and nothing else that paces logging (no interval setting, no log call
        # in a step loop, no HF Trainer): Lightning's default log_every_n_steps of 50 applies. Only then: where the run has
        # its own interval (FlagAI's log_interval), a LightningModule of another model family in the library is not the run
        lit = [] if items or loop or "logging_steps" in extra else lightning_step_logs(f)
        if lit:
            extra["log_every_n_steps"] = LIGHTNING_LOG_EVERY
        values = _values(items, extra)
        hf = _hf_default_site(f, "logging_steps") if "logging_steps" in extra else None
        lt = Facts.ev(lit[0], key="log_every_n_steps", value=LIGHTNING_LOG_EVERY) if lit else None
        off = [] if items or loop or spaced or extra else _none_every_n(
            f, sorted({x.name for x in f.records("fields") if _LOG_EVERY_N.match(_norm(x.name)) and not _TEST_PATH.search(x.path)}))
        if off:
            items = off
            i = off[0]
            values[i.name] = "off"
            sane = (f"no step logging interval: {i.name} is None ({i.fact.path}:{i.fact.line}) and nothing sets it, so metrics "
                    "are not logged every few steps")
        elif values:
            sane = "logging at a sane interval (" + ", ".join(f"{k}={v}" for k, v in values.items()) + ")"
            if spread := recipe_spread(items):
                sane += f"; {spread}"
            if hf is not None:
                sane += f"; logging_steps is not set: the HF Trainer default of 500 applies (the trainer at {hf.path}:{hf.line})"
            if lt is not None:
                sane += (f"; log_every_n_steps is not set: Lightning's default of {LIGHTNING_LOG_EVERY} applies to the "
                         f"LightningModule's self.log in training_step ({lt.path}:{lt.line})")
        elif spaced:
            sane = _spaced_detail("metrics logged", spaced)
            values.update(_spaced_values(spaced))
        else:
            sane = NOT_JUDGED + ("no logging interval setting and no log call in a training-step loop were found on the training path; "
                                 "check how often your launch logs")
        out = _outcome(bad, items, "metrics logged", threshold, values, sane, spaced, tuple(e for e in (hf, lt) if e is not None))
        if timers and out.status == N:
            t, why = timers[0]
            shown = t.spelled or f"{t.key}: {str(t.value).lower() if isinstance(t.value, bool) else t.value}"
            out = replace(out, detail=f"{out.detail}; `{shown}` at {t.path}:{t.line}: {why}")
        return _with_notes(out, registry_notes(f, items))


def _step_timers(f: Facts) -> list[tuple[Setting, str]]:
    """Timers a run switches on that synchronise the GPU and print on every step, whatever the logging interval: DeepSpeed's
    ``wall_clock_breakdown: true`` (the engine logs its forward/backward/step micro-timers at every ``step()``, each read
    through a synchronised CUDA event; ``steps_per_print`` paces only the rest) and Megatron's ``--timing-log-level 2``
    (every micro-batch's forward, backward and pipeline send/receive timed with ``torch.cuda.synchronize()``; the
    argument's own help warns it may increase iteration time)."""
    out: list[tuple[Setting, str]] = []
    alt_ds = deepspeed_alternative_files(f)  # a DeepSpeed config no run picks is not the run's (as for steps_per_print)
    for s in f.effective("wall_clock_breakdown"):
        if truthy(s.value) and not _TEST_PATH.search(s.path) and s.path not in alt_ds:
            out.append((s, "DeepSpeed prints forward/backward/step timings at every step, each timer synchronising the GPU"))
            break
    for s in f.effective("timing_log_level"):
        n = as_number(s.value)
        if n is not None and n >= 2 and not _TEST_PATH.search(s.path):
            out.append((s, "Megatron times every micro-batch's forward, backward and pipeline transfers with torch.cuda.synchronize()"))
            break
    return out


_TRACKER_DEPS = ("wandb", "tensorboard", "tensorboardx", "mlflow", "comet-ml", "swanlab", "clearml", "neptune", "dvclive", "aim")
_TRACKER_CALL = lazy_compile(
    r"^(wandb\.log|swanlab\.log|mlflow\.log_metrics?|.*\.add_scalars?|.*accelerator\.log|.*fabric\.log(_dict)?|.*(wandb|swanlab|tracker|tracking)\w*\.log"
    r"|.*experiment\.log_metrics?|.*\.report_scalar|.*(aim_)?run\.track|.*wandb_run\.log|comet_ml\..*log_metrics?"
    # the Lightning logger API (``Logger.log_metrics(metrics, step)``) called directly, on the trainer's or the module's logger
    # or a wrapper over a list of them (NeMo-Aligner ``self.logger.log_metrics(metrics, step=self.step, prefix="train/")``):
    # it writes to TensorBoard/W&B on every call, outside Lightning's ``log_every_n_steps``
    r"|(.*\.)?\w*loggers?\.log_metrics)$")
_LOGGER_METRICS = lazy_compile(r"^self\.loggers?\.log_metrics$")
_TRACKER_OBJECT = lazy_compile(r"^([\w.]*\.)?\w*Track(ing|er)\w*\(")
_LIGHTNING_LOGGERS = ("WandbLogger", "TensorBoardLogger", "MLFlowLogger", "CometLogger", "NeptuneLogger", "SwanLabLogger")


_METRIC_LOGGER = lazy_compile(r"(^|\.)\w*metrics?_?logger\.(info|log)$", re.I)
_TRACKER_MODULES = ("wandb", "mlflow", "torch.utils.tensorboard", "tensorboardX", "tensorboard", "swanlab", "aim", "comet_ml")


def tracker_calls(f: Facts) -> list[Call]:
    pool = f.calls("log", "add_scalar", "add_scalars", "log_metric", "log_metrics", "report_scalar", "track", "log_dict")
    out = [c for c in pool if _TRACKER_CALL.match(c.name) and (not c.name.startswith("self.log") or _LOGGER_METRICS.match(c.name))]
    # a multi-backend tracking object bound to any name (verl ``self.logger = Tracking(..., default_backend=["console",
    # "wandb"])`` then ``self.logger.log(data=metrics, step=self.global_steps)``): its ``log`` reports to the trackers
    bound = _tracker_objects(f)
    out += [c for c in pool if c.short == "log" and c not in out and c.name.rsplit(".", 1)[0] in bound.get(c.path, ())]
    # ... or an object of the project's own logger class whose ``log`` method writes the trackers (align-anything ``Logger.log``:
    # ``self.writer.add_scalar(...)`` / ``self.wandb.log(...)``, bound as ``self.logger = Logger(...)``)
    owners = {k for c in out if c.func and c.func.rsplit(".", 1)[-1] == "log" and (k := class_at(f, c.path, c.line))}
    if owners:
        made = re.compile(r"^([\w.]*\.)?(" + "|".join(map(re.escape, sorted(owners))) + r")\(")
        own = {a.target for a in f.records("attr_assigns") if isinstance(a.value, Expr) and made.match(a.value.text)}
        # (bound in a base trainer's file, called in its subclasses' loops with the step: ``self.logger.log(info, step=...)``)
        out += [c for c in pool if c.short == "log" and c not in out and c.name.rsplit(".", 1)[0] in own
                and ("step" in c.kwargs or len(c.args) >= 2)]
    # a metrics logger whose handlers are the trackers (instructlab-training: ``metric_logger.info({"step": ..., "lr": ...})``
    # on ``logging.getLogger("instructlab.training.metrics")``, configured with W&B/TensorBoard/MLflow handlers): a tracker
    # report when it is given a dict of metrics and the project imports a tracker
    if any(not _TEST_PATH.search(i.path) for i in f.imports(*_TRACKER_MODULES)):
        out += [c for c in f.calls("info", "log") if _METRIC_LOGGER.search(c.name) and c.args
                and _text_of(c.args[0]).lstrip().startswith("{") and c not in out]
    out += [c for c in _wrapper_logs(f) if c not in out]
    if any(_FABRIC_LOG.match(c.name) for c in out) and _fabrics_without_loggers(f):
        # ``fabric.log_dict(...)`` where every ``Fabric(...)`` of the project is built without ``loggers=`` (lit-llama's
        # ``L.Fabric(accelerator="cuda", devices=devices, precision="bf16-mixed", strategy=strategy)``): Fabric has no
        # logger to write to, so the call reports nothing
        out = [c for c in out if not _FABRIC_LOG.match(c.name)]
    return out


_FABRIC_LOG = lazy_compile(r"^(.*\.)?fabric\.log(_dict)?$")


def _fabrics_without_loggers(f: Facts) -> bool:
    """The project builds Lightning Fabric (outside tests), never with ``loggers=`` / ``logger=`` (nor ``**kwargs`` that may
    carry them)."""
    built = [c for c in f.calls("Fabric") if c.short == "Fabric" and not _TEST_PATH.search(c.path)]
    return bool(built) and not any("loggers" in c.kwargs or "logger" in c.kwargs or "**" in c.text for c in built)


def _wrapper_logs(f: Facts) -> list[Call]:
    """``log`` calls on an object of the project's own metrics-logger class (RLinf ``self.metric_logger =
    MetricLogger(cfg)`` then ``self.metric_logger.log(metrics, step)``), where the module that defines the class creates
    the trackers itself (``wandb.init``, ``SummaryWriter``...) and has a ``log`` method that writes to them: each such call
    is a report to those trackers. The class is found by the caller's ``from <module> import <Class>``."""
    memo = f._memo
    if ("wrapper-logs",) in memo:
        return list(memo[("wrapper-logs",)])  # type: ignore[arg-type]
    inits = {n.rsplit(".", 1)[-1] for n in _TRACKER_INITS}
    writers: dict[str, bool] = {}

    def writes(path: str) -> bool:
        if path not in writers:
            ff = f.files[path]
            writers[path] = (not _TEST_PATH.search(path) and any(c.short in inits for c in ff.calls)
                             and any(c.func == "log" for c in ff.calls))
        return writers[path]

    out: list[Call] = []
    for path in sorted({c.path for c in f.calls("log")}):
        ff = f.files.get(path)
        if ff is None or _TEST_PATH.search(path):
            continue
        bound = {a.target for a in ff.attr_assigns if isinstance(a.value, Expr) and (m := re.match(r"([A-Z]\w*)\(", a.value.text))
                 and (target := _class_file(f, path, m.group(1))) is not None and target != path and writes(target)}
        out += [c for c in ff.calls if c.short == "log" and c.name.rsplit(".", 1)[0] in bound]
    memo[("wrapper-logs",)] = out  # type: ignore[assignment]
    return list(out)


_TRACKER_INITS = ("wandb.init", "swanlab.init", "mlflow.start_run", "SummaryWriter", "aim.Run", "comet_ml.Experiment",
                  "neptune.init_run", "clearml.Task.init", "MonitorMaster")  # DeepSpeed's monitor: TensorBoard/W&B/CSV backends


_TRACKER_FIELD = lazy_compile(r"(?i)wandb|tensorboard|mlflow|swanlab|comet|neptune|clearml|tracker|report_to")


def _tracker_disabled(f: Facts) -> list[Any]:
    """Config fields that switch a tracker off by default (realhf ``wandb_mode: str = "disabled"``, ``use_wandb: bool =
    False``, ``report_to: str = "none"``), outside tests: the project's own statement that nothing is reported."""
    out = []
    for x in f.records("fields"):
        if not _TRACKER_FIELD.search(x.name) or _TEST_PATH.search(x.path):
            continue
        v = x.default
        if v is False or (isinstance(v, str) and v.strip().lower() in ("disabled", "none")):
            out.append(x)
    return out


def _any_tracker(f: Facts, lt_loggers: list[Any]) -> bool:
    """Could anything in scope report to an experiment tracker: a tracker module imported or a tracker created or called,
    a tracking object, the HF Trainer (its default ``report_to``) or a Lightning logger?"""
    return bool(any(not _TEST_PATH.search(i.path) for i in f.imports(*_TRACKER_MODULES, "neptune", "clearml", "dvclive", "comet_ml"))
                or any(not _TEST_PATH.search(c.path) for c in f.calls(*_TRACKER_INITS)) or tracker_calls(f)
                or uses_hf_trainer(f) or lt_loggers or f.config("report_to") or f.settings("report_to"))


def _bare_accelerators(f: Facts) -> list[Call]:
    """The project's ``Accelerator(...)`` creations, outside tests, when none passes ``log_with`` (or ``**kwargs`` that may
    carry it): Accelerate then starts no tracker, and ``accelerator.log`` writes nowhere (pytorch-accelerated
    ``Trainer._create_accelerator`` returns ``Accelerator()``). Empty when any creation may name a tracker."""
    accs = [c for c in f.calls("Accelerator") if c.short == "Accelerator" and c.name.split(".", 1)[0] == "accelerate"
            and not _TEST_PATH.search(c.path)]
    if any("log_with" in c.kwargs or c.star_kwargs or len(c.args) >= 10 for c in accs):
        return []
    return accs


def _trackers_switched_off(f: Facts) -> list[tuple[Call, list[Any], str]]:
    """Every tracker the project creates (``wandb.init``, ``SummaryWriter``...) is created behind a switch that is off
    (arctic-training: ``if self.global_rank == 0 and self.config.wandb.enable: self.wandb_experiment = wandb.init(...)``
    with ``enable: bool = False``), or started in the client's "disabled" mode (see :func:`_mode_disabled`): each creation
    with what switches it off and how ("switch", "mode" or "unset", see :func:`_section_unset`). Empty when a tracker is
    created unconditionally, under a switch that is on or unknown, or not at all."""
    inits = [c for c in f.calls(*_TRACKER_INITS) if not _TEST_PATH.search(c.path) and c.name.rsplit(".", 1)[-1] in
             {n.rsplit(".", 1)[-1] for n in _TRACKER_INITS}]
    out: list[tuple[Call, list[Any], str]] = []
    for c in inits:
        off, how = guard_off(f, c) or callers_off(f, c), "switch"
        if not off:
            off, how = _mode_disabled(f, c), "mode"
        if not off:
            off, how = _section_unset(f, c), "unset"
        if not off:
            return []
        out.append((c, off, how))
    return out


def _muted_reports(f: Facts) -> list[Call]:
    """Reports that go nowhere because every tracker creation is off and at least one by a disabled mode or an unset section
    (see :func:`_trackers_switched_off`): ``wandb.log``/``swanlab.log`` when that client's every run starts in "disabled" mode
    (a no-op), and ``add_scalar`` on the attribute a ``SummaryWriter`` that is not created would have been bound to."""
    offs = _trackers_switched_off(f)
    if not any(how != "switch" for _, _, how in offs):
        return []
    muted: list[Call] = []
    for client in ("wandb", "swanlab"):
        mine = [(c, how) for c, _, how in offs if c.name.split(".", 1)[0] == client]
        if mine and all(how == "mode" for _, how in mine):
            muted += [c for c in f.calls(f"{client}.log") if c.name == f"{client}.log"]
    writers = {(c.path, c.line) for c, _, _ in offs if c.short == "SummaryWriter"}
    bound = {(a.path, a.target) for a in f.records("attr_assigns") if (a.path, a.line) in writers}
    muted += [c for c in f.calls("add_scalar", "add_scalars") if (c.path, c.name.rsplit(".", 1)[0]) in bound]
    return muted


def _off_reason(c: Call, sites: list[Any], how: str) -> str:
    """Why one tracker creation reports nothing by default (see :func:`_trackers_switched_off`), citing both lines."""
    s0 = sites[0]
    at = f"{c.name}() ({c.path}:{c.line})"
    if how == "mode":
        return (f"{at} starts its run with mode {s0.owner}.mode, {s0.default!r} by default ({s0.path}:{s0.line}) and set nowhere, "
                "so its log calls are no-ops")
    if how == "unset":
        return f"{at} runs only when {s0.owner}.{s0.name} is set, and it is None by default ({s0.path}:{s0.line}) and set nowhere"
    if s0 is c:
        return f"{at} runs only under `{c.guard}`, which nothing in the project makes true"
    key, value = _site_key_value(s0)
    return f"{at} runs only when {key} is {'set' if value is None else 'on'}, and it is {value!r} ({s0.path}:{s0.line})"


def _site_key_value(s0: Any) -> tuple[str, Any]:
    """How a setting that switches a tracker off is named and what it holds: a class field, a setting or a parameter default."""
    if hasattr(s0, "owner") and hasattr(s0, "default"):
        return f"{s0.owner}.{s0.name}", s0.default
    if hasattr(s0, "key"):
        return s0.key, s0.value
    if hasattr(s0, "func") and hasattr(s0, "value"):
        return f"the {s0.name} parameter of {s0.func}()", s0.value
    return "its switch", None


def _section_fields(f: Facts, holder: str, name: str) -> list[Any]:
    """The fields ``name`` of the typed config section ``holder`` (``wandb: WandBConfig = field(...)`` -> ``WandBConfig.mode``;
    a local holder named after its class, ``swanlab_config`` -> ``SwanlabConfig``), outside tests, when every class the
    section may hold has one and nothing sets ``<holder>.<name>`` (a config key or an assignment to the chain); empty
    otherwise."""
    classes = {m.group(1) for fl in f.fields(holder) if not _TEST_PATH.search(fl.path)
               and (m := re.match(rf"\s*{re.escape(holder)}\s*:\s*(?:Optional\[)?([A-Z]\w*)", fl.text or ""))}
    if not classes:
        classes = {"".join(p[:1].upper() + p[1:] for p in holder.split("_") if p)}
    found = [fl for fl in f.fields(name) if fl.owner in classes and not _TEST_PATH.search(fl.path)]
    if not found or {fl.owner for fl in found} != classes or f.config(f"{holder}.{name}") or f.attr_assigns(f"{holder}.{name}"):
        return []
    return found


def _chain_holder(node: ast.expr | None) -> tuple[str, str] | None:
    """(holder, name) of ``x.holder.name`` / ``holder.name``."""
    if not isinstance(node, ast.Attribute):
        return None
    v = node.value
    holder = v.attr if isinstance(v, ast.Attribute) else v.id if isinstance(v, ast.Name) and v.id not in ("self", "cls") else None
    return (holder, node.attr) if holder else None


def _mode_disabled(f: Facts, c: Call) -> list[Any]:
    """A W&B/SwanLab run started with ``mode=`` read from a typed config section whose ``mode`` defaults to "disabled"
    (AReaL ``wandb.init(mode=self.config.wandb.mode, ...)`` with ``WandBConfig.mode: str = field(default="disabled")``):
    ``mode="disabled"`` is the client's documented off switch, its ``log`` calls are no-ops. The section's ``mode`` fields
    when they all default to "disabled" and nothing sets the section's mode; empty otherwise."""
    if c.name.rsplit(".", 1)[-1] != "init" or c.name.split(".", 1)[0] not in ("wandb", "swanlab"):
        return []
    v = c.kwargs.get("mode")
    hn = _chain_holder(parse_expr(v.text) if isinstance(v, Expr) and v.text else None)
    if hn is None or hn[1] != "mode":
        return []
    modes = _section_fields(f, *hn)
    return modes if modes and all(isinstance(fl.default, str) and fl.default.strip().lower() == "disabled" for fl in modes) else []


def _section_unset(f: Facts, c: Call) -> list[Any]:
    """A tracker created under ``<section>.<field> is not None`` (AReaL ``if self.config.tensorboard.path is not None:
    SummaryWriter(log_dir=self.config.tensorboard.path)``) where the typed section's field defaults to None and nothing
    sets it: the tracker is not created. That field; empty otherwise."""
    node = parse_expr(c.guard) if c.guard else None
    for t in node.values if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) else [node] if node is not None else []:
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.IsNot)
                and isinstance(t.comparators[0], ast.Constant) and t.comparators[0].value is None):
            continue
        hn = _chain_holder(t.left)
        found = _section_fields(f, *hn) if hn else []
        if found and all(fl.default is None for fl in found):
            return found
    return []


def _tracker_objects(f: Facts) -> dict[str, set[str]]:
    """path -> names bound to a tracking object in that file (``self.logger = Tracking(...)``)."""
    bound: dict[str, set[str]] = {}
    for a in f.records("attr_assigns"):
        if isinstance(a.value, Expr) and _TRACKER_OBJECT.match(a.value.text):
            bound.setdefault(a.path, set()).add(a.target)
    return bound


def _text_of(v: Any) -> str:
    return v.text if isinstance(v, Expr) else repr(v)


def _module_paced_trackers(f: Facts) -> tuple[list[Interval], str]:
    """Trackers written by a metrics module that carries its own logging interval (torchtitan ``components/metrics.py``: the
    TensorBoard/W&B loggers' ``add_scalar``/``wandb.log`` and ``MetricsProcessor.Config.log_freq: int = 10``, "how often to log
    metrics to TensorBoard", which ``should_log(step)`` applies before the training step hands it the metrics): the tracker calls
    sit in the loggers' own ``log`` methods, outside any step loop, and report at that interval. The interval settings of the
    fields named for logging intervals in the trackers' own files (voted over recipes like I4's), and a note naming them."""
    side = side_trainers(f)
    calls = [c for c in tracker_calls(f) if not _TEST_PATH.search(c.path) and c.path not in side]
    files = sorted({c.path for c in calls})
    names = sorted({x.name for x in f.records("fields") if x.path in files and _norm(x.name) in _LOG_KEYS and as_number(x.default) is not None})
    if not names:
        return [], ""
    items = interval_settings(f, tuple(names))
    if not items:
        return [], ""
    field = next(x for x in f.records("fields") if x.path in files and x.name == names[0])
    here = [c for c in calls if c.path == field.path]
    shown = ", ".join(dict.fromkeys(f"{'.'.join(c.name.split('.')[-2:])}() at {c.path}:{c.line}" for c in here[:2]))
    return items, (f"the trackers of {field.path} ({shown}) report at that module's logging interval "
                   f"{field.owner}.{field.name} ({field.path}:{field.line})")


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "_")


#: a launch flag that turns an external tracker on (torchtitan ``--metrics.enable_wandb``, ``--use_wandb``)
_LAUNCH_TRACKER = lazy_compile(r"(?i)(^|[._])(enable|use)_(wandb|tensorboard|mlflow|swanlab|comet|neptune|aim|clearml)$")


def _launch_tracker_intervals(f: Facts) -> list[Interval]:
    """The logging interval flags of a launch that turns a tracker on by flag (torchtitan ``--metrics.enable_wandb`` beside
    ``--metrics.log_freq=1``: the trainer reports to W&B at that interval), each at its own line. Only what the launch itself
    states: a launch that turns a tracker on without an interval flag leaves the launched trainer's default, not judged here."""
    out: list[Interval] = []
    for launch in f.launches():
        if _TEST_PATH.search(launch.path):
            continue
        args = launch.script_args
        if not any(_LAUNCH_TRACKER.search(_norm(k)) and truthy(v) is True for k, v in args.items()):
            continue
        for k, v in args.items():
            if _norm(k.rsplit(".", 1)[-1]) in _LOG_KEYS:
                steps, kind = interval(v)
                s = Setting(_norm(k), v, launch.path, launch.arg_line(k), "launcher", launch.text, f"--{k}", 3, launch.script)
                out.append(Interval(s, s.key, _norm(k.rsplit(".", 1)[-1]), steps, kind))
    return out


def _report_to_builder(f: Facts, s: Setting) -> tuple[str, ...] | None:
    """The trackers a helper of the same file builds ``report_to`` from (oumi ``report_to=self._get_hf_report_to()``, whose body
    is ``if self.enable_wandb: report_to.append("wandb")`` per tracker): each tracker whose flag a recipe turns on, or whose
    flag is on by default (``enable_tensorboard: bool = True``). None when ``report_to`` is not such a call."""
    m = re.fullmatch(r"\s*(?:self\.)?(\w+)\(\s*\)\s*", s.value.text)
    ff = f.files.get(s.path)
    if m is None or ff is None:
        return None
    adds = [c for c in ff.calls if c.func == m.group(1) and c.short in {"append", "add", "extend"} and c.args and isinstance(c.args[0], str)]
    if not adds:
        return None
    out: list[str] = []
    for c in adds:
        name = c.args[0].lower()
        if name in {"none", "null"}:
            continue
        flags = [t.rsplit(".", 1)[-1] for t in re.findall(r"(?<![\w.])(?:self\.)?[A-Za-z_]\w*", c.guard or "")]
        if not flags:
            out.append(name)
            continue
        sets = [x for x in f.settings(*flags) if not _TEST_PATH.search(x.path)]
        if any(truthy(x.value) is True and x.source in {"config", "launcher", "field-default", "argparse-default"} for x in sets):
            out.append(name)
    return tuple(out) or ("none",)


#: a key string read from a holder (``self.config["log"]``, ``cfg.get("log")``); a list literal (``["wandb"] if x else None``)
#: is not a subscript: its ``[`` follows no name, call or subscript
_KEY_STRING = lazy_compile(r"""(?<=[\w)\]])\s*\[\s*["'][^"']*["']\s*\]|\.get\(\s*["'][^"']*["']""")


#: ms-swift ``TrainArgumentsMixin``: HF ``Seq2SeqTrainingArguments`` defaults overridden in a dataclass mixin
_SWIFT_ARGS = ("from dataclasses import dataclass, field\nfrom typing import List\n\nfrom transformers import Seq2SeqTrainingArguments\n\n\n"
               "@dataclass\nclass TrainArgumentsMixin:\n    logging_steps: int = {steps}\n"
               "    report_to: List[str] = field(default_factory=lambda: ['tensorboard'])\n\n\n"
               "@dataclass\nclass TrainArguments(TrainArgumentsMixin, Seq2SeqTrainingArguments):\n    pass\n")
_SWIFT_TRAIN = ("from transformers import Seq2SeqTrainer\n\n\ndef train(model, args, dataset):\n"
                "    trainer = Seq2SeqTrainer(model=model, args=args, train_dataset=dataset)\n    trainer.train()\n")


_NONE_ELSE = lazy_compile(r"""^\s*(?P<then>["'][\w,\s-]+["']|\[[^\]]*\])\s+if\s+(?P<cond>.+?)\s+else\s+(?:["'](?:none|null)?["']|\[\s*\])\s*$""", re.I)


def _report_to_condition(rt: list[Setting]) -> tuple[str, str] | None:
    """(the condition, where) when every ``report_to`` the run takes is a ternary whose else branch reports nothing
    (lm-buddy ``report_to="wandb" if is_tracking_enabled(config) else "none"``): the trackers are the condition's, not the
    run's by default. None otherwise; an else branch of ``None`` is not nothing (transformers 4.x reads it as "all")."""
    if not rt:
        return None
    conds = []
    for s in rt:
        m = _NONE_ELSE.match(s.value.text) if isinstance(s.value, Expr) else None
        if m is None:
            return None
        conds.append((m.group("cond"), f"{s.path}:{s.line}"))
    return conds[0]


def hf_trackers(f: Facts) -> tuple[list[str], list[Setting]]:
    """Trackers the HF Trainer reports to (``report_to``; before transformers v5 the default was every installed one)."""
    rt = [s for s in f.effective("report_to") if not _TEST_PATH.search(s.path)]
    named: list[str] = []
    builders = {s.path for s in rt if isinstance(s.value, Expr) and _report_to_builder(f, s) is not None}
    rt = [s for s in rt if not (s.source == "assign" and s.path in builders)]  # the builder's own ``report_to = []`` accumulator
    for s in rt:
        vals = s.value if isinstance(s.value, tuple) else (s.value,)
        if isinstance(s.value, Expr) and (built := _report_to_builder(f, s)) is not None:
            vals = built  # ``report_to=self._get_hf_report_to()``: the trackers its flags turn on
        elif isinstance(s.value, Expr):  # ``"all" if get("train.report_to") else "none"``: any tracker it may name
            # a string that only names a key (``self.config["log"]``, ``cfg.get("log")``) is not a tracker
            text = _KEY_STRING.sub("", s.value.text)
            vals = tuple(re.findall(r"""["']([\w,\s-]+)["']""", text)) or (() if text != s.value.text else ("all",))
        for v in vals:
            if isinstance(v, str):
                named += [p for p in re.split(r"[,\s\[\]\"']+", v.lower()) if p and p not in {"none", "null"}]
    installed = sorted({d.name for d in f.deps(*_TRACKER_DEPS)} | {i.module.split(".")[0] for i in f.imports("wandb", "swanlab", "mlflow")})
    if rt and not named:
        return [], rt
    if "all" in named:
        return installed or ["all"], rt
    if named:
        return sorted(set(named)), rt
    return installed, []


# VeOmni: the W&B callback reports every step, behind ``train.wandb.enable``, a field of the section's own class whose
# default is False; the sibling sections (gradient checkpointing, mixed precision) have an ``enable`` of their own
_SECTION_TRACKER = {
    "pkg/arguments.py": (
        "from dataclasses import dataclass, field\n\n\n@dataclass\nclass WandbConfig:\n"
        "    enable: bool = field(default=False)\n    project: str = field(default=\"demo\")\n\n\n"
        "@dataclass\nclass GradientCheckpointingConfig:\n    enable: bool = field(default=True)\n\n\n"
        "@dataclass\nclass TrainingArguments:\n    wandb: WandbConfig = field(default_factory=WandbConfig)\n"
        "    gradient_checkpointing: GradientCheckpointingConfig = field(default_factory=GradientCheckpointingConfig)\n"),
    "pkg/callbacks.py": (
        "import wandb\n\n\nclass WandbTraceCallback:\n    def __init__(self, trainer):\n        self.trainer = trainer\n\n"
        "    def on_train_begin(self, state):\n        args = self.trainer.args\n"
        "        if args.train.global_rank == 0 and args.train.wandb.enable:\n"
        "            wandb.init(project=args.train.wandb.project)\n\n"
        "    def on_step_end(self, state):\n        args = self.trainer.args\n"
        "        if args.train.global_rank == 0 and args.train.wandb.enable:\n"
        "            wandb.log(self.trainer.step_env_metrics, step=state.global_step)\n"),
    "pkg/trainer.py": (
        "class Trainer:\n    def train_step(self, batch):\n        loss = self.model(**batch).loss\n        loss.backward()\n"
        "        self.optimizer.step()\n        for callback in self.callbacks:\n            callback.on_step_end(self.state)\n"),
}

#: Ludwig's trainer: a ``while`` loop over the batcher calls the trainer's own ``train_step`` and then a summary method with
#: the step counter, which writes TensorBoard scalars (``{guard}`` wraps that call: empty for every step)
_OWN_STEP_SUMMARY = {
    "mylib/trainers/trainer.py": (
        "import torch\nfrom torch.utils.tensorboard import SummaryWriter\n\n\nclass Trainer:\n"
        "    @classmethod\n    def write_step_summary(cls, train_summary_writer, combined_loss, step, learning_rate=None):\n"
        "        if not train_summary_writer:\n            return\n"
        "        train_summary_writer.add_scalar(\"combined/step_training_loss\", combined_loss, global_step=step)\n"
        "        if learning_rate:\n"
        "            train_summary_writer.add_scalar(\"combined/step_learning_rate\", learning_rate, global_step=step)\n\n"
        "    def train_step(self, inputs, targets):\n        loss = self.model(inputs, targets)\n        loss.backward()\n"
        "        self.optimizer.step()\n        self.optimizer.zero_grad()\n        return loss\n\n"
        "    def _train_loop(self, batcher, progress_tracker, train_summary_writer):\n"
        "        while not batcher.last_batch() and progress_tracker.steps < self.total_steps:\n"
        "            inputs, targets = batcher.next_batch()\n            loss = self.train_step(inputs, targets)\n"
        "{guard}"
        "            self.write_step_summary(train_summary_writer=train_summary_writer, combined_loss=loss.detach().float(),\n"
        "                                    step=progress_tracker.steps, learning_rate=progress_tracker.learning_rate)\n"
        "            progress_tracker.steps += 1\n"),
}


def _own_step_summary(every: int | None) -> dict[str, str]:
    guard = "" if every is None else f"            if progress_tracker.steps % {every} == 0:\n"
    text = _OWN_STEP_SUMMARY["mylib/trainers/trainer.py"].format(guard=guard)
    if every is not None:  # the summary call moves under the guard
        text = text.replace("            self.write_step_summary(", "                self.write_step_summary(").replace(
            "\n                                    step=", "\n                                        step=")
    return {"mylib/trainers/trainer.py": text}


#: fairseq2: a TensorBoard metric recorder that the trainer's ``_metric_recorder.record_metric_values`` feeds (see ``_regime``)
_TB_RECORDER = {
    "mylib/metrics/recorders/tensorboard.py": (
        "from torch.utils.tensorboard import SummaryWriter\n\n\nclass TensorBoardRecorder:\n"
        "    def __init__(self, output_dir):\n        self._writer = SummaryWriter(output_dir)\n\n"
        "    def record_metric_values(self, category, values, step_nr=None):\n        for name, value in values.items():\n"
        "            self._writer.add_scalar(f\"{category}/{name}\", value, step_nr)\n"),
}


#: pytorch-accelerated: a trainer that builds its Accelerator itself and prints the epoch's metrics through callbacks;
#: ``{acc}`` is the Accelerator's arguments, ``{report}`` the step loop's report line(s)
_ACCEL_TRAINER = {
    "mypkg/trainer.py": (
        "from accelerate import Accelerator\n\n\nclass Trainer:\n    def __init__(self, model, loss_func, optimizer, callbacks=()):\n"
        "        self.model = model\n        self.loss_func = loss_func\n        self.optimizer = optimizer\n"
        "        self.callbacks = list(callbacks)\n        self._accelerator = self._create_accelerator()\n\n"
        "    def _create_accelerator(self):\n        return Accelerator({acc})\n\n"
        "    def _run_train_epoch(self, train_dl, epoch):\n        for step, batch in enumerate(train_dl):\n"
        "            xb, yb = batch\n            loss = self.loss_func(self.model(xb), yb)\n"
        "            self._accelerator.backward(loss)\n            self.optimizer.step()\n            self.optimizer.zero_grad()\n"
        "{report}"
        "        for cb in self.callbacks:\n            cb.on_train_epoch_end(self, epoch)\n"),
}


#: AReaL: the trainer starts W&B with the mode of its config section (default "disabled") and TensorBoard only when a log
#: path is set (default None), then reports every step; ``{mode}`` is WandBConfig.mode's default
_MODE_TRACKERS = {
    "pkg/config.py": (
        "from dataclasses import dataclass, field\n\n\n@dataclass\nclass WandBConfig:\n"
        "    mode: str = field(default=\"{mode}\", metadata={{\"help\": \"online, offline or disabled\"}})\n"
        "    project: str = \"demo\"\n\n\n@dataclass\nclass TensorBoardConfig:\n    path: str | None = None\n\n\n"
        "@dataclass\nclass TrainConfig:\n    wandb: WandBConfig = field(default_factory=WandBConfig)\n"
        "    tensorboard: TensorBoardConfig = field(default_factory=TensorBoardConfig)\n"),
    "pkg/trainer.py": (
        "import wandb\nfrom torch.utils.tensorboard import SummaryWriter\n\nfrom pkg.config import TrainConfig\n\n\n"
        "class Trainer:\n    def __init__(self, config: TrainConfig, model, loader, optimizer):\n        self.config = config\n"
        "        self.model = model\n        self.loader = loader\n        self.optimizer = optimizer\n"
        "        wandb.init(mode=self.config.wandb.mode, project=self.config.wandb.project)\n        self.writer = None\n"
        "        if self.config.tensorboard.path is not None:\n"
        "            self.writer = SummaryWriter(log_dir=self.config.tensorboard.path)\n\n"
        "    def train(self):\n        for step, batch in enumerate(self.loader):\n"
        "            loss = self.model(**batch).loss\n            loss.backward()\n            self.optimizer.step()\n"
        "            self.optimizer.zero_grad()\n            wandb.log({{\"loss\": loss.item()}}, step=step)\n"
        "            if self.writer is not None:\n                self.writer.add_scalar(\"train/loss\", loss.item(), step)\n"),
}

#: RLinf: the runner reports through its own metrics-logger class, whose module creates the trackers; one policy update per
#: batch through the actor worker group's ``run_training`` (``{report}``: the report line(s) of the loop body)
_WRAPPED_TRACKERS = {
    "pkg/utils/metric_logger.py": (
        "import wandb\nfrom torch.utils.tensorboard import SummaryWriter\n\n\nclass MetricLogger:\n"
        "    def __init__(self, cfg):\n        self.backends = cfg.logger.get(\"logger_backends\", [\"tensorboard\"])\n"
        "        self.writer = SummaryWriter(cfg.logger.log_path) if \"tensorboard\" in self.backends else None\n"
        "        if \"wandb\" in self.backends:\n            wandb.init(project=cfg.logger.project_name)\n\n"
        "    def log(self, data, step):\n        for key, value in data.items():\n"
        "            if self.writer is not None:\n                self.writer.add_scalar(key, value, step)\n"
        "        if \"wandb\" in self.backends:\n            wandb.log(data, step=step)\n"),
    "pkg/runners/runner.py": (
        "from pkg.utils.metric_logger import MetricLogger\n\n\nclass Runner:\n"
        "    def __init__(self, cfg, actor, train_dataloader):\n        self.cfg = cfg\n        self.actor = actor\n"
        "        self.train_dataloader = train_dataloader\n        self.metric_logger = MetricLogger(cfg)\n"
        "        self.global_steps = 0\n\n    def run(self):\n        for batch in self.train_dataloader:\n"
        "            handle = self.actor.run_training(batch)\n            metrics = handle.wait()\n"
        "            self.global_steps += 1\n{report}"),
}


@register
class I5ReportFrequency(Check):
    id = "I5"
    title = "Sane progress-report frequency"
    title_zh = "进度上报频率"
    bottlenecks = (Bottleneck.LATENCY,)
    priority = Priority.LOW
    benefit = "no per-step network/file reporting and host syncs for W&B, TensorBoard or MLflow"
    what = (
        "Whether reports to external trackers (W&B, TensorBoard, MLflow, SwanLab...) fire at a sane interval: HF "
        "`report_to` with `logging_steps`, Lightning loggers with `log_every_n_steps`, Megatron `--tensorboard-log-interval` "
        "when set explicitly (its default 1 writes a local event file), "
        "and `wandb.log`/`writer.add_scalar`/`accelerator.log` in the training-step loop or a per-step callback "
        "(`on_step_end`) without an interval guard. Too frequent: every < 10 steps."
    )
    why = (
        "Each report serialises metrics, syncs them from the GPU and hands them to a tracker client; at every step and "
        "to several trackers this adds host work and network traffic on rank 0 that the other ranks wait for at the next "
        "collective. The seed asks to lower the reporting frequency; Lightning's default is every 50 steps and the HF "
        "Trainer's 500."
    )
    fix = "Report every 10-100 steps: `logging_steps: 10`+ with `report_to: [wandb]` (one tracker), `log_every_n_steps=50` (Lightning), or `if step % log_every == 0: wandb.log(...)` in a custom loop."
    fix_zh = "每 10-100 步上报一次：HF 设置 `logging_steps: 10` 以上并只保留一个 `report_to` 目标，Lightning 设置 `log_every_n_steps=50`，自定义循环中用 `if step % log_every == 0: wandb.log(...)`。"
    fix_safety = FixSafety.SAFE
    references = ("https://docs.wandb.ai/guides/track/log/", "https://lightning.ai/docs/pytorch/stable/extensions/logging.html")
    snippets = {
        "hf-yaml": "report_to: wandb\nlogging_steps: 10\n",
        "lightning": "trainer = L.Trainer(logger=WandbLogger(project=\"p\"), log_every_n_steps=50)\n",
        "python": "if step % log_every == 0:\n    wandb.log({\"loss\": loss.item()}, step=step)\n",
    }
    examples = (
        Example({  # OpenFlamingo 2.0.1: a progress bar over the zipped loaders whose starting count names the epoch
            "train/train_utils.py": (
                "import wandb\nfrom tqdm import tqdm\n\n\ndef train_one_epoch(args, model, epoch, laion_loader, mmc4_loader, optimizer, wandb):\n"
                "    num_batches_per_epoch = mmc4_loader.num_batches\n"
                "    for num_steps, (batch_laion, batch_mmc4) in tqdm(enumerate(zip(laion_loader, mmc4_loader)),\n"
                "                                                     initial=(epoch * num_batches_per_epoch)):\n"
                "        loss = model(batch_laion) + model(batch_mmc4)\n        loss.backward()\n        optimizer.step()\n"
                "        if args.rank == 0 and args.report_to_wandb:\n"
                "            wandb.log({'loss': loss.item(), 'global_step': num_steps}, commit=True)\n"),
        }, N, "wandb.log after every optimizer step of a tqdm(enumerate(zip(...)), initial=epoch * n) loop"),
        Example({  # arctic-training: W&B is created only when the pydantic switch wandb.enable (default False) is on
            "arctic_training/config/wandb.py": (
                "from pydantic import BaseModel\n\nclass WandBConfig(BaseModel):\n    enable: bool = False\n"
                "    project: str = 'arctic-training'\n"),
            "arctic_training/trainer/trainer.py": (
                "import wandb\n\nclass Trainer:\n    def __init__(self, config):\n        self.config = config\n"
                "        self.wandb_experiment = None\n"
                "        if self.global_rank == 0 and self.config.wandb.enable:\n"
                "            self.wandb_experiment = wandb.init(project=self.config.wandb.project)\n\n"
                "    def epoch(self):\n        for batch in self.train_batches:\n            self.step(batch)\n"
                "            if self.wandb_experiment is not None:\n"
                "                self.wandb_experiment.log({'loss': self.loss}, step=self.global_step)\n"),
        }, U, "tracker created only behind a switch that is off"),
        Example({  # verl: a Tracking object bound to self.logger, fed after every step of the trainer's while loop
            "verl/trainer/ppo/trainer_base.py": (
                "from verl.utils.tracking import Tracking\n\nclass PPOTrainer:\n    def fit(self):\n"
                "        self.logger = Tracking(project_name='verl', default_backend=self.config.trainer.logger)\n"
                "        if self.config.trainer.get('val_before_train', True):\n"
                "            self.logger.log(data=self._validate(), step=self.global_steps)\n"
                "        while self.global_steps <= self.total_training_steps:\n            metrics = {}\n"
                "            batch = self.step(metrics)\n            self.logger.log(data=metrics, step=self.global_steps)\n"
                "            self.global_steps += 1\n"),
        }, N, "Tracking object bound to self.logger, fed every step"),
        Example({
            "trainer/base.py": (
                "from utils.tracking import Tracking\n\nclass Trainer:\n    def fit(self):\n"
                "        self.logger = Tracking(project_name='demo', default_backend=['wandb'])\n"
                "        while self.global_steps <= self.total_training_steps:\n            metrics = {}\n"
                "            batch = self.step(metrics)\n            if self.global_steps % self.config.log_every == 0:\n"
                "                self.logger.log(data=metrics, step=self.global_steps)\n"
                "            self.global_steps += 1\n"),
            "config.yaml": "log_every: 50\n",
        }, U, "Tracking object fed every 50 steps"),
        Example({"myrl/config/ppo_base_config.yaml": _RL_CONFIG.format(ckpt=100),
                 "myrl/trainer.py": _RL_TRAINER.format(report=_RL_REPORT)}, N, "RL trainer: tracker fed after every update"),
        Example({"myrl/config/ppo_base_config.yaml": _RL_CONFIG.format(ckpt=100),
                 "myrl/trainer.py": _RL_TRAINER.format(report=_RL_REPORT_SPACED)}, U, "RL trainer: tracker fed every 20 steps"),
        Example({
            "train.py": (
                "import wandb\n\nuse_wandb = True\nif use_wandb:\n    wandb.init(project='gpt')\n"
                "for step, batch in enumerate(loader):\n    loss = model(batch).loss\n    loss.backward()\n"
                "    optimizer.step()\n    wandb.log({'loss': loss.item()})\n"),
        }, N, "tracker switched on, reported every step"),
        Example({"train.yaml": "report_to: wandb\nlogging_steps: 10\n"}, U, "wandb every 10"),
        Example({  # ms-swift: the HF arguments subclass overrides report_to with a default_factory lambda
            "mylib/arguments.py": _SWIFT_ARGS.format(steps=5),
            "mylib/train.py": _SWIFT_TRAIN,
        }, N, "report_to from a default_factory lambda, every 5 steps"),
        Example({"mylib/arguments.py": _SWIFT_ARGS.format(steps=50), "mylib/train.py": _SWIFT_TRAIN}, U,
                "report_to from a default_factory lambda, every 50 steps"),
        Example({"train.yaml": "report_to: none\nlogging_steps: 1\n"}, U, "no tracker"),
        Example({  # xtuner: mmengine Python configs with no visualizer: metrics stay in the runner's log
            "xtuner/tools/train.py": _MM_TRAIN,
            "xtuner/configs/llama/llama2_7b_qlora_alpaca_e3.py": _mm_config("meta-llama/Llama-2-7b-hf", 1),
            "xtuner/configs/qwen/qwen1_5_7b_qlora_alpaca_e3.py": _mm_config("Qwen/Qwen1.5-7B", 10),
            "xtuner/configs/internlm/internlm2_7b_qlora_alpaca_e3.py": _mm_config("internlm/internlm2-7b", 10),
        }, U, "mmengine configs without a visualizer"),
        Example({  # the same configs reporting to W&B through the visualizer, their LoggerHook every iteration
            "xtuner/tools/train.py": _MM_TRAIN,
            "xtuner/configs/llama/llama2_7b_qlora_alpaca_e3.py": _mm_config(
                "meta-llama/Llama-2-7b-hf", 1, "dict(type=Visualizer, vis_backends=[dict(type=WandbVisBackend)])"),
            "xtuner/configs/qwen/qwen1_5_7b_qlora_alpaca_e3.py": _mm_config(
                "Qwen/Qwen1.5-7B", 1, "dict(type=Visualizer, vis_backends=[dict(type=WandbVisBackend)])"),
            "xtuner/configs/internlm/internlm2_7b_qlora_alpaca_e3.py": _mm_config(
                "internlm/internlm2-7b", 1, "dict(type=Visualizer, vis_backends=[dict(type=WandbVisBackend)])"),
        }, N, "mmengine configs reporting to W&B every iteration"),
        Example({  # oumi: report_to built from enable_* flags of the training params; recipes turn W&B on, log every 100 steps
            "src/oumi/core/configs/params/training_params.py": _OUMI_PARAMS,
            "configs/recipes/llama3_1/sft/8b_full/train.yaml": "training:\n  enable_wandb: True\n  logging_steps: 100\n",
            "configs/recipes/qwen3/sft/8b_full/train.yaml": "training:\n  enable_wandb: True\n  logging_steps: 50\n",
        }, U, "report_to built from enable_wandb, every 100 steps"),
        Example({
            "src/oumi/core/configs/params/training_params.py": _OUMI_PARAMS,
            "configs/recipes/llama3_1/sft/8b_full/train.yaml": "training:\n  enable_wandb: True\n  logging_steps: 1\n",
        }, N, "report_to built from enable_wandb, every step"),
        Example({"train.py": (
            "import wandb\nfor step, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n"
            "    if step % 100 == 0:\n        wandb.log({'loss': loss.item()})\n")}, U, "guarded wandb.log"),
        Example({"train.yaml": "report_to: [wandb, tensorboard]\nlogging_steps: 1\n"}, N, "two trackers every step"),
        Example({"train.py": (
            "import wandb\nfor step, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n    optimizer.step()\n"
            "    wandb.log({'loss': loss.item()})\n")}, N, "wandb.log every step"),
        Example({"train.py": (
            "import lightning as L\nfrom lightning.pytorch.loggers import WandbLogger\n"
            "trainer = L.Trainer(logger=WandbLogger(project='p'), log_every_n_steps=1)\n")}, N, "lightning every step"),
        Example({"run.sh": ("torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --micro-batch-size 4 --tensorboard-dir /logs/tb "
                            "--tensorboard-log-interval 1\n")}, N, "megatron tensorboard every step"),
        Example({"run.sh": ("torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 24 --micro-batch-size 4 --tensorboard-dir /logs/tb "
                            "--tensorboard-log-interval 100\n")}, U, "megatron tensorboard every 100"),
        Example({"cb.py": (
            "import wandb\nfrom transformers import TrainerCallback\nclass CB(TrainerCallback):\n"
            "    def on_step_end(self, args, state, control, **kw):\n        wandb.log({'step': state.global_step})\n")}, N, "per-step callback"),
        Example({  # nanotron: wandb.log in a helper the loop calls at a config-dataclass interval that defaults to 1
            "src/nanotron/config/config.py": (
                "from dataclasses import dataclass\nfrom typing import Optional\n"
                "@dataclass\nclass LoggingArgs:\n    log_level: Optional[str] = None\n    iteration_step_info_interval: Optional[int] = 1\n"),
            "src/nanotron/trainer.py": (
                "import wandb\nclass DistributedTrainer:\n    def train(self, dataloader):\n"
                "        for self.iteration_step in range(self.start_iteration_step, self.config.tokens.train_steps + 1):\n"
                "            outputs, loss_avg = self.training_step(dataloader=dataloader)\n"
                "            if (self.iteration_step - 1) % self.config.logging.iteration_step_info_interval == 0:\n"
                "                self.train_step_logs(outputs=outputs, loss_avg=loss_avg)\n"
                "    def train_step_logs(self, outputs, loss_avg):\n"
                "        if wandb is not None:\n            wandb.log({'lm_loss': loss_avg.item(), 'iteration_step': self.iteration_step})\n"),
        }, N, "tracker in a helper at a dataclass default of 1"),
        Example({
            "config.py": "from dataclasses import dataclass\n@dataclass\nclass LoggingArgs:\n    log_interval: int = 100\n",
            "trainer.py": (
                "import wandb\nclass Trainer:\n    def train(self, loader):\n        for step, batch in enumerate(loader):\n"
                "            loss = self.train_step(batch)\n            if step % self.config.log_interval == 0:\n"
                "                self.log_metrics(loss)\n"
                "    def log_metrics(self, loss):\n        wandb.log({'loss': loss.item()})\n"),
        }, U, "tracker in a helper every 100 steps"),
        Example({  # TRL: the LLM trainers report through HF callbacks; only the diffusion side trainer logs every step
            "trl/trainer/sft_trainer.py": (
                "from transformers import Trainer\nclass SFTTrainer(Trainer):\n"
                "    def __init__(self, model, args, train_dataset=None):\n        super().__init__(model=model, args=args, train_dataset=train_dataset)\n"),
            "trl/trainer/sft_config.py": "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n"
                                         "@dataclass\nclass SFTConfig(TrainingArguments):\n    dataset_text_field: str = 'text'\n",
            "examples/scripts/sft.py": (
                "from trl import SFTConfig, SFTTrainer\nargs = SFTConfig(output_dir='out', report_to='wandb', logging_steps=25)\n"
                "trainer = SFTTrainer(model=model, args=args, train_dataset=ds)\ntrainer.train()\n"),
            "trl/trainer/ddpo_trainer.py": (
                "from accelerate import Accelerator\nfrom ..models import DDPOStableDiffusionPipeline\n"
                "class DDPOTrainer:\n    def _train_batched_samples(self, inner_epoch, epoch, global_step, batched_samples):\n"
                "        for i, sample in enumerate(batched_samples):\n            loss = self.calculate_loss(sample)\n"
                "            self.accelerator.backward(loss)\n            self.optimizer.step()\n"
                "            self.accelerator.log({'loss': loss.item(), 'epoch': epoch}, step=global_step)\n"),
        }, U, "per-step tracker only in a diffusion side trainer"),
        Example({  # a diffusion project: its own loop is the training path
            "train_dreambooth.py": (
                "from accelerate import Accelerator\nfrom diffusers import UNet2DConditionModel\naccelerator = Accelerator(log_with='wandb')\n"
                "for step, batch in enumerate(train_dataloader):\n    loss = unet(batch).loss\n    accelerator.backward(loss)\n"
                "    optimizer.step()\n    accelerator.log({'loss': loss.item()}, step=step)\n"),
        }, N, "diffusion project logging every step"),
        Example({"train.py": (  # a while-loop trainer (no ``for`` iterable): wandb.log under the loop's interval guard
            "import argparse\nimport wandb\np = argparse.ArgumentParser()\np.add_argument('--log_every', type=int, default=10)\n"
            "args = p.parse_args()\ndef main():\n    step = 0\n    while step < args.max_steps:\n"
            "        _, loss = model(x, y)\n        loss.backward()\n        optimizer.step()\n        step += 1\n"
            "        if step % args.log_every == 0 and rank == 0:\n            wandb.log({'loss': loss.item()}, step=step)\n")}, U,
            "while loop with a guarded wandb.log"),
        Example({"train.py": (  # the same loop with an interval of 1
            "import argparse\nimport wandb\np = argparse.ArgumentParser()\np.add_argument('--report_every', type=int, default=1)\n"
            "args = p.parse_args()\ndef main():\n    step = 0\n    while step < args.max_steps:\n"
            "        _, loss = model(x, y)\n        loss.backward()\n        optimizer.step()\n        step += 1\n"
            "        if step % args.report_every == 0:\n            wandb.log({'loss': loss.item()}, step=step)\n")}, N,
            "while loop reporting every step"),
        Example({  # instructlab-training: a metrics logger whose handlers are the trackers, fed every step after the resume skip
            "src/instructlab/training/logger.py": (
                "import logging\n\ndef setup_metric_logger(output_dir, wandb_project=None, tensorboard_log_dir=None):\n"
                "    logger = logging.getLogger('instructlab.training.metrics')\n"
                "    if wandb_project:\n        import wandb\n        logger.addHandler(WandbHandler(wandb_project))\n"
                "    if tensorboard_log_dir:\n        from torch.utils.tensorboard import SummaryWriter\n"
                "        logger.addHandler(TensorBoardHandler(SummaryWriter(tensorboard_log_dir)))\n"),
            "src/instructlab/training/main_ds.py": (
                "import logging\n\ndef train(args, model, accelerator, batch_loss_manager, local_rank):\n"
                "    metric_logger = logging.getLogger('instructlab.training.metrics')\n    global_step = 1\n"
                "    for batch in accelerator.train_loader:\n        if global_step <= args.last_step:\n"
                "            global_step += 1\n            continue\n"
                "        loss = batch_loss_manager.process_batch(batch)\n        accelerator.take_optimizer_step()\n"
                "        if local_rank == 0:\n            metric_logger.info({'step': global_step, 'loss': loss}, extra={'step': global_step})\n"
                "        global_step += 1\n"),
        }, N, "metrics logger fed every step"),
        Example({
            "logger.py": "import logging\nimport wandb\n\nmetrics_logger = logging.getLogger('metrics')\n",
            "train.py": (
                "import argparse\nfrom logger import metrics_logger\n"
                "p = argparse.ArgumentParser()\np.add_argument('--log_interval', type=int, default=50)\nargs = p.parse_args()\n"
                "for step, batch in enumerate(loader):\n    loss = model(**batch).loss\n    loss.backward()\n    optimizer.step()\n"
                "    if step % args.log_interval == 0:\n        metrics_logger.info({'step': step, 'loss': loss.item()})\n"),
        }, U, "metrics logger every 50 steps"),
        Example({"train.py": (  # no tracker and no tracker interval: not judged (n/a)
            "import torch\nfor step, batch in enumerate(loader):\n    loss = model(batch).loss\n    loss.backward()\n"
            "    optimizer.step()\n")}, Status.NA, "nothing seen: not judged"),
        Example({  # torchtitan: the metrics module's TensorBoard/W&B loggers report at its own Config.log_freq (10)
            "torchtitan/components/metrics.py": (
                "from dataclasses import dataclass\nfrom torch.utils.tensorboard import SummaryWriter\n\n"
                "class TensorBoardLogger:\n    def log(self, metrics, step):\n        for k, v in metrics.items():\n"
                "            self.writer.add_scalar(k, v, step)\n\n"
                "class WandBLogger:\n    def log(self, metrics, step):\n        self.wandb.log(metrics, step=step)\n\n"
                "class MetricsProcessor:\n    @dataclass\n    class Config:\n        log_freq: int = 10\n"
                "        enable_tensorboard: bool = False\n"
                "    def should_log(self, step):\n        return step == 1 or step % self.config.log_freq == 0\n"
                "    def log(self, step, loss):\n        self.logger.log({'loss': loss}, step)\n"),
            "torchtitan/trainer.py": (
                "class Trainer:\n    def train_step(self, data_iterator):\n"
                "        should_log = self.metrics_processor.should_log(self.step)\n        loss = self.forward_backward(data_iterator)\n"
                "        self.optimizers.step()\n        if not should_log:\n            return\n"
                "        self.metrics_processor.log(self.step, loss.item())\n"),
        }, U, "trackers paced by their metrics module's log_freq of 10"),
        Example({
            "mylib/metrics.py": (
                "from dataclasses import dataclass\nimport wandb\n\n"
                "class WandBLogger:\n    def log(self, metrics, step):\n        wandb.log(metrics, step=step)\n\n"
                "@dataclass\nclass MetricsConfig:\n    log_freq: int = 1\n"),
            "mylib/trainer.py": (
                "class Trainer:\n    def train_step(self, batch):\n        loss = self.model(batch).loss\n        loss.backward()\n"
                "        self.optimizer.step()\n        if self.step % self.config.log_freq == 0:\n"
                "            self.metrics.log({'loss': loss.item()}, self.step)\n"),
        }, N, "trackers paced by their metrics module's log_freq of 1"),
        Example({  # lmms-engine / verl: a unified Tracking object (W&B + console backends) fed at every optimizer step
            "src/lmms_engine/utils/tracking.py": (
                "import wandb\n\nclass Tracking:\n    def __init__(self, project_name, default_backend='console'):\n"
                "        self.logger = {}\n        if 'wandb' in default_backend:\n            wandb.init(project=project_name)\n"
                "            self.logger['wandb'] = wandb\n"
                "    def log(self, data, step=None):\n        for backend in self.logger.values():\n            backend.log(data, step=step)\n"),
            "src/lmms_engine/train/fsdp2/fsdp2_trainer.py": (
                "from lmms_engine.utils.tracking import Tracking\n\nclass FSDP2SFTTrainer:\n    def train(self, rank):\n"
                "        self.tracking = Tracking(self.args.run_name, default_backend=['wandb', 'console'])\n"
                "        for step, batch in enumerate(self.train_dataloader):\n            train_metrics = self.training_step(batch)\n"
                "            is_accumulation_complete = self.accumulated_grad_steps == 0\n            if is_accumulation_complete:\n"
                "                if rank == 0:\n                    self.tracking.log(train_metrics, step=self.global_step)\n"
                "                self.global_step += 1\n"),
        }, N, "a Tracking object fed every optimizer step"),
        Example({
            "utils/tracking.py": "import wandb\n\nclass Tracking:\n    def log(self, data, step=None):\n        wandb.log(data, step=step)\n",
            "trainer.py": (
                "from utils.tracking import Tracking\n\ndef train(model, loader, optimizer, args):\n    tracking = Tracking()\n"
                "    for step, batch in enumerate(loader):\n        loss = model(**batch).loss\n        loss.backward()\n"
                "        optimizer.step()\n        if step % args.log_every == 0:\n            tracking.log({'loss': loss.item()}, step=step)\n"),
            "train.yaml": "log_every: 50\n",
        }, U, "a Tracking object fed every 50 steps"),
        Example(_SECTION_TRACKER, U, "a per-step W&B callback behind its config section's switch, off by default"),
        Example({**_SECTION_TRACKER, "pkg/arguments.py": _SECTION_TRACKER["pkg/arguments.py"].replace(
            "enable: bool = field(default=False)", "enable: bool = field(default=True)")}, N,
                "the same callback with the section's switch on by default"),
        Example({  # realhf 0.3.0: W&B disabled by the config, stats go to the log every step, no tracker library anywhere
            "pkg/experiments/common.py": ("import dataclasses\n\n\n@dataclasses.dataclass\nclass CommonExperimentConfig:\n"
                                          "    wandb_mode: str = 'disabled'\n    seed: int = 1\n"),
            "pkg/system/master_worker.py": (
                "import logging\n\nlogger = logging.getLogger('master')\n\n\ndef run(model, loader, optimizer):\n"
                "    for step, batch in enumerate(loader):\n        loss = model(batch).loss\n        loss.backward()\n"
                "        optimizer.step()\n        logger.info(f'step {step} loss {loss.item():.4f}')\n"),
        }, U, "W&B disabled and no tracker imported or created anywhere: nothing is reported"),
        Example(_own_step_summary(None), N, "TensorBoard scalars every step from a summary method the step loop calls with step="),
        Example(_own_step_summary(50), U, "the same summary call every 50 steps"),
        Example({"medusa/train/train.py": _HOOK_LOGGING_TRAINER.replace("{log}", "        self.log(log)\n"),
                 "pyproject.toml": "[project]\nname = 'medusa-llm'\n\n[project.optional-dependencies]\ntrain = ['bitsandbytes', 'wandb']\n"}, N,
                "self.log in an HF Trainer subclass's compute_loss: every installed tracker, every micro-batch"),
        Example({"medusa/train/train.py": _HOOK_LOGGING_TRAINER.replace("{log}", ""),
                 "pyproject.toml": "[project]\nname = 'medusa-llm'\n\n[project.optional-dependencies]\ntrain = ['bitsandbytes', 'wandb']\n"}, U,
                "the same trainer without its own log: W&B at the HF default of 500 steps"),
        Example({"mylib/train.py": _HOOK_LOGGING_TRAINER.replace("{log}", ""),
                 "setup.py": "from setuptools import setup\n\nsetup(name='mylib', install_requires=['torch', 'transformers', 'peft'])\n"}, U,
                "report_to unset and no tracker among the dependencies: the HF default reports whatever is installed every 500 steps"),
        Example({"mylib/train.py": _HOOK_LOGGING_TRAINER.replace("{log}", ""),
                 "setup.py": "from setuptools import setup\n\nsetup(name='mylib', install_requires=['torch', 'transformers', 'peft'])\n",
                 "scripts/train.sh": "torchrun --nproc_per_node 8 mylib/train.py --output_dir out --logging_steps 1\n"}, N,
                "the same trainer launched with --logging_steps 1: every installed tracker every step"),
        Example({"train.py": _LIGHTNING_SELF_LOG}, U, "a LightningModule's self.log in training_step, at log_every_n_steps 50"),
        Example(_lightning_passed_logger(50), U, "a Lightning Trainer given the caller's logger (default True): Lightning's default logger every 50 steps"),
        Example(_lightning_passed_logger(1), N, "the same Trainer with log_every_n_steps=1: the default logger every step"),
        Example(torchx_runner(log_freq=1), N, "torchtitan launched with --metrics.enable-wandb and --metrics.log_freq=1: W&B every step"),
        Example(torchx_runner(log_freq=20), U, "the same launch logging every 20 steps"),
        Example(_ds_monitor("{}"), U, "DeepSpeed's MonitorMaster only for a monitor_config key of a ds_config that defaults to {}"),
        Example(_ds_monitor("{'monitor_config': {'wandb': {'enabled': True}}}"), Status.NA,
                "the same monitor with a ds_config default that names the key: the interval is DeepSpeed's, not judged"),
        Example({**_regime("None", "None"), **_TB_RECORDER}, U,
                "TensorBoard written only when metrics are published, and publish_metrics_every_n_steps is None and set nowhere"),
        Example({**_regime("None", "5"), **_TB_RECORDER}, Status.NA,
                "the same recorder publishing every 5 steps through a helper: the interval is not traced to the tracker, not judged"),
        Example({k: v.format(acc="", report="") for k, v in _ACCEL_TRAINER.items()}, U,
                "a trainer's own Accelerator() without log_with and no tracker anywhere: nothing is reported"),
        Example({k: v.format(acc="log_with=\"wandb\"", report="            self._accelerator.log({\"train_loss\": loss.item()}, step=step)\n")
                 for k, v in _ACCEL_TRAINER.items()}, N, "the same trainer with log_with='wandb', logging every step"),
        Example({k: v.format(mode="disabled") for k, v in _MODE_TRACKERS.items()}, U,
                "W&B started in its config's default mode 'disabled', TensorBoard only with a log path (None): no report"),
        Example({k: v.format(mode="online") for k, v in _MODE_TRACKERS.items()}, N, "the same trainer with W&B online by default"),
        Example({**{k: v.format(mode="disabled") for k, v in _MODE_TRACKERS.items()}, "recipes/grpo.yaml": "wandb:\n  mode: online\n"}, N,
                "the same trainer with a recipe that turns W&B online"),
        Example({k: v.format(report="            self.metric_logger.log(metrics, self.global_steps)\n") for k, v in _WRAPPED_TRACKERS.items()},
                N, "the project's metrics-logger class writes TensorBoard every RL step"),
        Example({**{k: v.format(report="            if self.global_steps % self.cfg.runner.log_interval == 0:\n"
                                       "                self.metric_logger.log(metrics, self.global_steps)\n")
                    for k, v in _WRAPPED_TRACKERS.items()}, "config/ppo.yaml": "runner:\n  log_interval: 20\n"},
                U, "the same logger every 20 RL steps"),
    )

    def detect(self, ctx: Context) -> Outcome:
        f = ctx.facts
        threshold = 10
        bad: list[tuple[Any, str, float]] = []
        ok: list[Interval] = []
        values: dict[str, Any] = {}

        def judge(intervals: list[Interval]) -> None:
            """Each interval shorter than the threshold is a finding, the others make it sane; their values are shown."""
            for i in intervals:
                if i.kind == "steps" and i.steps is not None and i.steps < threshold:
                    bad.append((i.fact, i.key, i.steps))
                else:
                    ok.append(i)
            values.update(_values(intervals))

        lt_default: Any = None
        tb_default: Any = None
        hf_recipes = bool({"llamafactory", "axolotl"} & set(ctx.project.frameworks))  # YAML recipes run by the HF Trainer
        # an HF arguments object built through a variable (oumi ``config_class(report_to=self._get_hf_report_to(), ...)``)
        built_args = any(s.source == "call" and not _TEST_PATH.search(s.path) for s in f.settings("report_to"))
        # (a ``report_to`` key of a project that declares its own ``--report-to`` option and trains without the HF Trainer,
        # open_lm ``report-to: "wandb"`` read by its own argparse: the project's switch, not HF's logging_steps reporting)
        own_option = not uses_hf_trainer(f) and any(s.source == "argparse-default" and not _TEST_PATH.search(s.path)
                                                    for s in f.settings("report_to"))
        hf_like = uses_hf_trainer(f) or ((f.config("report_to") or built_args) and not own_option) or hf_recipes
        trackers, rt = hf_trackers(f) if hf_like else ([], [])
        if not trackers and not rt and hf_recipes and interval_settings(f, ("logging_steps",), strategy="logging_strategy"):
            trackers = ["all"]  # report_to unset: HF's default "all" (every installed tracker), at logging_steps
        hf_unset = not trackers and not rt and uses_hf_trainer(f) and not f.settings("report_to")
        if hf_unset:
            # the project's HF Trainer with report_to unset and no tracker among its dependencies: the default "all"
            # (transformers 4.x; "none" from 5.0) reports to whatever the run's environment has installed, at logging_steps
            trackers = ["all"]
        vis = visualizer_vote(f) if not trackers and not rt else None
        if vis is not None and vis.trackers:
            # mmengine: the LoggerHook hands its metrics to the visualizer's backends every ``interval`` iterations
            values["visualizer"] = list(vis.trackers)
            logs = config_file_intervals(f, [], hook_intervals(f, _LOGGER_HOOK), "the LoggerHook interval", _interval_band(threshold))
            judge(logs)
        if trackers:
            values["report_to"] = trackers
            logs = [i for i in interval_settings(f, ("logging_steps",), strategy="logging_strategy")]
            judge(logs)
            if not logs:
                values["logging_steps"] = HF_DEFAULTS["logging_steps"]
        lt_loggers: list[Any] = [c for c in f.calls(*_LIGHTNING_LOGGERS) if c.name.startswith(("lightning", "pytorch_lightning"))]
        # LightningCLI YAML: ``trainer.logger.class_path: lightning.pytorch.loggers.WandbLogger``
        lt_loggers += [e for e in f.config("logger.class_path") if isinstance(e.value, str)
                       and e.value.rsplit(".", 1)[-1] in _LIGHTNING_LOGGERS and not _TEST_PATH.search(e.path)]
        implicit = [] if lt_loggers else _lightning_default_logger(ctx)
        if lt_loggers or implicit:
            lt = interval_settings(f, ("log_every_n_steps",))
            judge(lt)
            if not lt:  # Lightning's default log_every_n_steps is 50
                values["log_every_n_steps"] = 50
                lt_default = (lt_loggers or implicit)[0]
        if implicit:
            values["lightning_logger"] = "default"
        tb = [s for s in f.effective("tensorboard_dir", "wandb_project") if s.rank > 0 and isinstance(s.value, str) and s.value]
        if tb:
            mg = interval_settings(f, ("tensorboard_log_interval",), explicit_only=("tensorboard_log_interval",))
            judge(mg)
            # Megatron-LM's default ``--tensorboard-log-interval`` is 1, but its scalars go to a local event file
            # (W&B logs asynchronously) at iterations of seconds: only an explicit short interval is judged.
            megatron_tb = [s for s in tb if s.name == "tensorboard_dir" and s.source == "launcher"]  # Megatron's --tensorboard-dir
            tb_default = megatron_tb[0] if megatron_tb and not mg else None
        judge(_launch_tracker_intervals(f))
        spaced: list[tuple[Call, float | None]] = []
        # a report under a section's switch that is off (``if args.train.wandb.enable: wandb.log(...)`` with ``enable``
        # defaulting to False in the section's class) does not run: the tracker's own creation decides below
        # with the run's tracker known to be Lightning's default logger, a tracker call in a script the training path never
        # reaches (a research script shipped in the package with its own loop and wandb.log) is not the run's reporting
        training = ctx.project.training_files
        muted = _muted_reports(f)
        loop = per_step_calls(f, [c for c in tracker_calls(f) if not section_flag_off(f, c) and c not in muted
                                  and not (implicit and training and c.path not in training)], threshold, spaced)
        bad += [(c, f"{c.name}() in the training loop", n) for c, n in loop]
        # the Trainer subclass's own hook hands its dict to the report_to trackers on every micro-batch, past logging_steps
        hooks = hf_hook_logs(f, threshold) if trackers else []
        bad += [(c, f"self.log() in the HF Trainer subclass's {c.func}: reported to {', '.join(trackers)} every micro-batch, "
                 "whatever logging_steps", n) for c, n in hooks]
        loop += hooks
        if loop:
            values["report_in_step_loop"] = int(min(n for _, n in loop))
        paced_note = ""
        paced: list[Interval] = []
        if not loop and not spaced and not trackers and not ok:
            paced, paced_note = _module_paced_trackers(f)
            judge(paced)
        defaults: list[Evidence] = []
        default_notes: list[str] = []
        if lt_default is not None:
            defaults.append(Facts.ev(lt_default))
            default_notes.append(f"a Lightning logger ({lt_default.path}:{lt_default.line}) at Lightning's default log_every_n_steps (50)")
        implicit_note = (f"; the Lightning Trainer ({implicit[0].path}:{implicit[0].line}) is given no logger of its own: Lightning's "
                         "default logger (TensorBoard when installed, else CSV) receives the self.log values of training_step"
                         if implicit else "")
        if tb_default is not None:
            defaults.append(Facts.ev(tb_default))
            default_notes.append(f"TensorBoard/W&B scalars ({tb_default.key} at {tb_default.path}:{tb_default.line}) at Megatron's default "
                                 "--tensorboard-log-interval: written by rank 0 to a local event file (W&B asynchronously), "
                                 "not judged too frequent; set --tensorboard-log-interval to judge it")
        if bad:
            what = ("progress reported to every installed tracker (report_to is not set: the HF Trainer's default is all "
                    "under transformers 4.x)" if hf_unset else "progress reported to trackers")
            out = _outcome(bad, ok, what, threshold, values, "")
            return _with_notes(out, "; ".join(x for x in (paced_note, registry_notes(f, paced)) if x))
        if vis is not None and not vis.trackers and not trackers and not loop and not spaced and not ok:
            first = vis.kept[0]
            how = "visualizer is None" if first.value is None else "the visualizer has only local backends (LocalVisBackend)"
            return Outcome(U, [Facts.ev(x) for x in vis.kept[:5]], f"no external tracker is reported to: {how} in {vis.n} of "
                           f"{vis.total} Python config files ({first.path}:{first.line}); metrics stay in the runner's log; {vis.note}",
                           {"visualizer": None})
        if not trackers and not rt and not ok and not spaced and not defaults:
            offs = _trackers_switched_off(f)
            if any(how != "switch" for _, _, how in offs):
                return Outcome(U, [Facts.ev(c) for c, _, _ in offs[:3]] + [Facts.ev(s[0], key=_site_key_value(s[0])[0], value=_site_key_value(s[0])[1])
                                                                            for c, s, _ in offs[:3] if s and s[0] is not c],
                               "no external tracker by default: " + "; ".join(_off_reason(c, s, how) for c, s, how in offs[:4])
                               + (f" (+{len(offs) - 4} more)" if len(offs) > 4 else ""), {**values, "tracker": None})
            if offs:
                init, sites, _ = offs[0]
                s0 = sites[0]
                gate = empty_section_gate(f, init.guard) if s0 is init else []
                if gate:  # ``if "monitor_config" in config.ds_config.keys():`` with ``ds_config`` defaulting to ``{}``
                    g0 = gate[0]
                    return Outcome(U, [Facts.ev(init), Facts.ev(g0, key=f"{g0.owner}.{g0.name}", value=g0.default)],
                                   f"no external tracker by default: {init.short}() ({init.path}:{init.line}) runs only when "
                                   f"`{init.guard}`, and {g0.owner}.{g0.name} defaults to an empty mapping ({g0.path}:{g0.line}) "
                                   "that nothing in the package fills with that key", {**values, "tracker": None})
                return Outcome(U, [Facts.ev(init), Facts.ev(s0)],
                               f"no external tracker by default: {init.name}() ({init.path}:{init.line}) runs only when {s0.key} "
                               f"is on, and it is {s0.value!r} ({s0.path}:{s0.line})", values)
            disabled = _tracker_disabled(f)
            if disabled and not _any_tracker(f, lt_loggers):
                d0 = disabled[0]
                return Outcome(U, [Facts.ev(d0, key=f"{d0.owner}.{d0.name}", value=d0.default)],
                               f"no external tracker: {d0.owner}.{d0.name} is {d0.default!r} ({d0.path}:{d0.line}) and nothing in the "
                               "project imports or creates a tracker (W&B, TensorBoard, MLflow, SwanLab, Aim, Comet...); metrics stay "
                               "in the log", {**values, "tracker": None})
            # fairseq2: the trackers receive values only when metrics are published, and the publishing interval field
            # (``publish_metrics_every_n_steps: int | None = None``) is None and set nowhere; no tracker call in a step loop
            off_every = _none_every_n(f, sorted({x.name for x in f.records("fields") if _LOG_EVERY_N.match(_norm(x.name))
                                                 and not _TEST_PATH.search(x.path)})) if _any_tracker(f, lt_loggers) else []
            if off_every:
                i = off_every[0]
                return Outcome(U, [Facts.ev(i.fact, key=i.key)],
                               f"no step report interval: {i.name} is None ({i.fact.path}:{i.fact.line}) and nothing sets it, and no "
                               "tracker call sits in a training-step loop, so trackers are not reported to every few steps",
                               {**values, i.name: "off"})
            bare = _bare_accelerators(f) if not implicit and not _any_tracker(f, lt_loggers) else []
            if bare:
                a0 = bare[0]
                return Outcome(U, [Facts.ev(a) for a in bare[:3]],
                               f"no external tracker: the Accelerator is created without log_with ({a0.path}:{a0.line}"
                               f"{f' (+{len(bare) - 1})' if len(bare) > 1 else ''}), so Accelerate starts no tracker, and nothing in "
                               "the project imports, creates or calls one (W&B, TensorBoard, MLflow, SwanLab, Aim, Comet...): no "
                               "progress report leaves the process", {**values, "tracker": None})
            return Outcome(Status.NA, [], NOT_JUDGED + "no tracker interval setting and no tracker call in a training-step loop were found "
                           "on the training path; check how often your launch reports to W&B/TensorBoard/MLflow, if it does", values)
        hf = _hf_default_site(f, "logging_steps") if trackers and "logging_steps" in values and not any(
            i.name == "logging_steps" for i in ok) else None
        if trackers:
            names = ", ".join(trackers) if trackers != ["all"] else "every installed tracker (report_to: all)" if rt else \
                "every installed tracker (report_to is not set: the HF Trainer's default is all)"
            sane = f"reporting to {names} every {values.get('logging_steps', '?')} steps"
            cond = _report_to_condition(rt)
            if cond is not None:
                sane = f"reporting to {names} (only when `{cond[0]}`, else none: {cond[1]}) every {values.get('logging_steps', '?')} steps"
            if hf is not None:
                sane += f" (logging_steps is not set: the HF Trainer default; the trainer at {hf.path}:{hf.line})"
        elif spaced:
            sane = _spaced_detail("progress reported to trackers", spaced)
            values.update(_spaced_values(spaced))
        elif defaults and not ok:
            sane = "reporting through " + "; ".join(default_notes)
        elif ok:
            via = vis is not None and bool(vis.trackers)
            sane = (f"reporting to {', '.join(vis.trackers)} through the mmengine visualizer at the LoggerHook interval: " if via  # type: ignore[union-attr]
                    else "tracker intervals at or above the threshold: ") + ", ".join(
                f"{i.key}={int(i.steps) if i.steps is not None and float(i.steps).is_integer() else i.steps or i.kind}" for i in ok[:3])
            notes = (paced_note, registry_notes(f, paced)) + ((vis.note, registry_notes(f, ok)) if via else ())  # type: ignore[union-attr]
            sane += "".join(f"; {x}" for x in notes if x) + implicit_note
        else:  # report_to: none / [] and no other tracker: nothing is reported
            r0 = rt[0]
            shown = ("[" + ", ".join(map(str, r0.value)) + "]" if isinstance(r0.value, tuple)
                     else f"`{r0.value.text}`" if isinstance(r0.value, Expr) else repr(r0.value))
            sane = f"no external tracker is reported to: {r0.key} is {shown} ({r0.path}:{r0.line})"
        ev = [Facts.ev(s) for s in rt] + [Facts.ev(i.fact, key=i.key) for i in ok] + [Facts.ev(c) for c, _ in spaced[:3]]
        ev += [hf] if hf is not None else []
        ev += defaults
        side = sorted(side_trainers(f))
        side_calls = [c for c in tracker_calls(f) if c.path in side]
        if side_calls:
            c = side_calls[0]
            sane += (f"; the tracker calls of the diffusion side trainer{'s' if len(side) > 1 else ''} ({c.path}:{c.line}"
                     f"{f' (+{len(side_calls) - 1})' if len(side_calls) > 1 else ''}) are context, not the project's setting")
        return Outcome(U, ev, sane, values)
