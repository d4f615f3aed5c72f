#!/usr/bin/python3
"""The graph `kiln compile --quantize=dynamic` builds, written as ONNX, so
that ONNX Runtime can run the same dynamically quantised model.

    python3 utils/bench/quantize_dynamic.py IN.onnx OUT.onnx

Each float MatMul whose B is a constant 2-D weight (an initializer, through
Identity nodes) and each Gemm with one (transA = 0, beta = 1) becomes

    q, s, zp = DynamicQuantizeLinear(A)
    acc = MatMulInteger(q, Wq, zp)
    y = Cast(acc, float) * (s * w_scale)   (+ C for Gemm)

with Wq = round_half_even(W / w_scale) in [-127, 127] (int8) and w_scale
= max_k |W[k, n]| / 127 per output column (alpha folded in), as
passes/Quantization/QuantizeDynamic.cpp does. ONNX Runtime (graph
optimisation 'all') fuses the pattern into its DynamicQuantizeMatMul.
A benchmark aid: kiln itself quantises inside the compiler.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_weights(w, alpha):
    most = np.abs(w).max(axis=0)
    step = np.where(most > 0, most / np.float32(127), np.float32(1)).astype(np.float32)
    q = np.clip(np.round(w / step), -127, 127).astype(np.int8)
    return q, (step * np.float32(alpha)).astype(np.float32)


def quantize_dynamic(model):
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    alias = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "Identity"}

    def constant(name):
        while name in alias:
            name = alias[name]
        t = inits.get(name)
        if t is None or t.data_type != TensorProto.FLOAT or len(t.dims) != 2:
            return None
        return numpy_helper.to_array(t)

    done = {}
    nodes, count = [], 0
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        w = None
        if node.op_type == "MatMul":
            w, alpha, bias = constant(node.input[1]), 1.0, None
        elif (node.op_type == "Gemm" and not attrs.get("transA", 0) and
              attrs.get("beta", 1.0) == 1.0):
            w = constant(node.input[1])
            if w is not None and attrs.get("transB", 0):
                w = np.ascontiguousarray(w.T)
            alpha = attrs.get("alpha", 1.0)
            bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        if w is None:
            nodes.append(node)
            continue
        key = (node.input[1], node.op_type, attrs.get("transB", 0), alpha)
        if key not in done:
            q, scale = quantize_weights(w, alpha)
            base = "qd%d" % len(done)
            graph.initializer.extend([numpy_helper.from_array(q, base + "_w"),
                                      numpy_helper.from_array(scale, base + "_scale")])
            done[key] = base
        base, p = done[key], "qd_%d" % count
        count += 1
        a, y = node.input[0], node.output[0]
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [a], [p + "_q", p + "_s", p + "_zp"]),
            helper.make_node("MatMulInteger", [p + "_q", base + "_w", p + "_zp"], [p + "_acc"]),
            helper.make_node("Cast", [p + "_acc"], [p + "_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "_s", base + "_scale"], [p + "_sc"]),
            helper.make_node("Mul", [p + "_f", p + "_sc"], [y if bias is None else p + "_y"]),
        ]
        if bias is not None:
            nodes.append(helper.make_node("Add", [p + "_y", bias], [y]))
    del graph.node[:]
    graph.node.extend(nodes)
    return model, count


def main():
    model, count = quantize_dynamic(onnx.load(sys.argv[1]))
    onnx.save(model, sys.argv[2])
    print("%d MatMul/Gemm quantised" % count)


if __name__ == "__main__":
    main()
