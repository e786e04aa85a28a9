"""Round 49 (issue #9): claims of more public repositories, read claim by claim. Each test is one false claim of those
reports, made from the shape of the real code, with a control that keeps the rule honest."""

from __future__ import annotations

from checks.engine import audit_files
from checks.model import Status


def _audit(files: dict[str, str]):
    return audit_files((k, v.encode()) for k, v in files.items())


def _check(audit, cid: str):
    return next(r for r in audit.results if r.id == cid)


# --- facebookresearch/chameleon: an inference-only release scored as training code -------------------------------------

_TRANSFORMER = (
    "import torch\nfrom torch import nn\nfrom xformers.ops import fmha\n\n\n"
    "class Attention(nn.Module):\n"
    "    def forward(self, x, cache, attn_bias):\n"
    "        xq, xk, xv = self.wqkv(x).chunk(3, dim=-1)\n"
    "        output = fmha.memory_efficient_attention_forward(xq, cache[0], cache[1], attn_bias)\n"
    "        return self.wo(output)\n\n\n"
    "class Transformer(nn.Module):\n"
    "    @torch.no_grad()\n"
    "    def forward_with_attn_bias(self, token_values, attn_bias, cache):\n"
    "        h = self.tok_embeddings(token_values)\n"
    "        for i, layer in enumerate(self.layers):\n"
    "            h = layer(h, cache[i], attn_bias)\n"
    "        return self.output(self.norm(h)).float()\n\n\n"
    "def make_cache(args, length, dtype=None):\n"
    "    shape = (1, length, args.n_kv_heads, args.dim // args.n_heads)\n"
    "    return [(torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype)) for _ in range(args.n_layers)]\n")
_CUDAGRAPH = (
    "import torch\n\n\n"
    "class CUDAGraphWrapper:\n"
    "    def __init__(self, fn, warmup_iter=1):\n        self.fn = fn\n        self.warmup_iter = warmup_iter\n"
    "        self.graph = None\n\n"
    "    def __call__(self, *args, **kwargs):\n"
    "        if self.warmup_iter > 0:\n            self.warmup_iter -= 1\n            return self.fn(*args, **kwargs)\n"
    "        if self.graph is None:\n            self.graph = torch.cuda.CUDAGraph()\n"
    "            with torch.cuda.graph(self.graph):\n                self.result = self.fn(*args, **kwargs)\n"
    "        self.graph.replay()\n        return self.result\n\n\n"
    "def cudagraph_wrap(fn):\n    return CUDAGraphWrapper(fn)\n")
_ADAPTER = (
    "import torch\nfrom chameleon.inference import transformer\nfrom chameleon.inference.cudagraph import cudagraph_wrap\n\n\n"
    "class ChameleonModelAdapter:\n"
    "    \"\"\"Adapter for Chameleon-style model that handles state, such as cache.\"\"\"\n\n"
    "    def __init__(self, model, max_seq_len):\n        self._model = model\n        self._max_seq_len = max_seq_len\n\n"
    "    def initialize(self, prompt_tokens):\n"
    "        self._cache = transformer.make_cache(args=self._model.args, length=len(prompt_tokens) * self._max_seq_len)\n"
    "        self._forward = cudagraph_wrap(self._model.forward_with_attn_bias)\n\n"
    "    @torch.inference_mode()\n"
    "    def __call__(self, inputs):\n"
    "        return self._forward(token_values=inputs[:, -1], attn_bias=self._bias, cache=self._cache)\n")
_CHAMELEON = (
    "import torch\nfrom chameleon.inference.model_adapter import ChameleonModelAdapter\n\n\n"
    "class ChameleonInferenceModel:\n"
    "    def __init__(self, model):\n        self.adapter = ChameleonModelAdapter(model, max_seq_len=4096)\n\n"
    "    @torch.inference_mode()\n"
    "    def generate(self, prompt_text, max_gen_len=4096):\n"
    "        tokens = self.tokenize(prompt_text)\n        self.adapter.initialize([tokens])\n"
    "        for _ in range(max_gen_len):\n            logits = self.adapter(tokens)\n"
    "            tokens = torch.cat([tokens, logits.argmax(-1)[:, -1:]], dim=1)\n"
    "        return tokens\n")
_EXAMPLE = (
    "from chameleon.inference.chameleon import ChameleonInferenceModel\n\n\n"
    "def main():\n    model = ChameleonInferenceModel(load_model('./data/models/7b/'))\n"
    "    tokens = model.generate(prompt_text='All your base')\n    print(tokens)\n\n\n"
    "if __name__ == '__main__':\n    main()\n")


def _chameleon(adapter_dir: str = "chameleon/inference") -> dict[str, str]:
    return {
        "chameleon/__init__.py": "",
        "chameleon/inference/__init__.py": "",
        "chameleon/inference/transformer.py": _TRANSFORMER,
        "chameleon/inference/cudagraph.py": _CUDAGRAPH,
        f"{adapter_dir}/model_adapter.py": _ADAPTER,
        "chameleon/inference/chameleon.py": _CHAMELEON.replace("chameleon.inference.model_adapter",
                                                              adapter_dir.replace("/", ".") + ".model_adapter"),
        "chameleon/inference/examples/simple.py": _EXAMPLE,
        "README.md": "# Chameleon\n\nStandalone inference code: a fast GPU-based inference implementation.\n\n"
                     "```bash\npython -m chameleon.inference.examples.simple\n```\n",
    }


def test_a_model_adapter_in_an_inference_folder_is_no_fine_tuning_path():
    """Chameleon: ``chameleon/inference/model_adapter.py`` (an adapter in the design-pattern sense) made the project a
    fine-tuning one, so an inference-only release was scored on 52 training checks. A folder of inference code names
    its workload, not an adapter fine-tune. Control: the same file outside an inference folder (``chameleon/tuning/``)
    still reads as fine-tuning code."""
    a = _audit(_chameleon())
    assert not a.project.does_training and a.project.does_inference
    assert _check(a, "A1").status is Status.NA and _check(a, "F1").status is Status.NA
    control = _audit(_chameleon("chameleon/tuning"))
    assert control.project.does_training


def test_a_decode_step_captured_as_a_cuda_graph_by_hand_is_not_eager():
    """Chameleon: J6 said "decode runs as CUDA graphs" (``torch.cuda.graph`` in ``cudagraph.py``), while J5 said
    "generation runs in PyTorch eager" and step zero "decoding in eager PyTorch: ... CPU dispatch per token". A decode
    step captured by hand is not eager: J5 says so, and step zero reads J6's evidence. Control: without the capture,
    both say eager."""
    a = _audit(_chameleon())
    assert _check(a, "J6").status is Status.USED
    j5 = _check(a, "J5")
    assert j5.status is Status.UNUSED and "captured as a CUDA graph" in (j5.detail or "") and "eager" not in (j5.detail or "")
    assert "eager" not in " ".join(a.project.bottleneck_reasons)
    assert any("runs as CUDA graphs (`chameleon/inference/cudagraph.py" in r for r in a.project.bottleneck_reasons)
    eager = _chameleon()
    eager["chameleon/inference/model_adapter.py"] = _ADAPTER.replace(
        "cudagraph_wrap(self._model.forward_with_attn_bias)", "self._model.forward_with_attn_bias")
    eager["chameleon/inference/cudagraph.py"] = "import torch\n"
    b = _audit(eager)
    assert _check(b, "J6").status is Status.UNUSED
    assert "eager" in (_check(b, "J5").detail or "") and any("eager PyTorch" in r for r in b.project.bottleneck_reasons)


def test_xformers_forward_only_attention_is_fused_attention():
    """Chameleon: D1 said "flash-attn is installed but nothing enables it" beside ``fmha.memory_efficient_attention_forward``
    (xformers' forward-only entry, which dispatches to the same fused kernels). Control: a hand-written softmax attention."""
    a = _audit(_chameleon())
    assert _check(a, "D1").status is Status.USED
    plain = _chameleon()
    plain["chameleon/inference/transformer.py"] = _TRANSFORMER.replace(
        "fmha.memory_efficient_attention_forward(xq, cache[0], cache[1], attn_bias)",
        "torch.softmax(xq @ cache[0].transpose(-2, -1), dim=-1) @ cache[1]")
    assert _check(_audit(plain), "D1").status is not Status.USED
