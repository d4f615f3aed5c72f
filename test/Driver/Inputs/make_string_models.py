"""Models with string tensors for strings.test, with their inputs and
expected outputs as .npy (NumPy's fixed-width Unicode arrays).

    python3 make_string_models.py OUTDIR
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from make_dynamic_models import init, model, vi

S, F, I64 = TensorProto.STRING, TensorProto.FLOAT, TensorProto.INT64


def save(out, name, array):
    np.save(os.path.join(out, name + ".npy"), array)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    # StringNormalizer: stopwords matched ignoring case (also outside
    # ASCII), the rest lower-cased code point by code point.
    model(out, "normalize",
          [helper.make_node("StringNormalizer", ["x"], ["y"], name="norm",
                            case_change_action="LOWER", is_case_sensitive=0,
                            stopwords=["the", "ÄRGER"])],
          [vi("x", [1, 6], S)], [vi("y", [1, 4], S)])
    save(out, "normalize_x",
         np.array([["The", "ÄPFEL", "ärger", "Straße", "ΑΒΓ", "x1"]]))
    save(out, "normalize_y", np.array([["äpfel", "straße", "αβγ", "x1"]]))
    # Every string a stopword: one "" (case-sensitive, upper-casing).
    model(out, "allgone",
          [helper.make_node("StringNormalizer", ["x"], ["y"], name="norm",
                            case_change_action="UPPER", is_case_sensitive=1,
                            stopwords=["a", "b"])],
          [vi("x", [3], S)], [vi("y", [1], S)])
    save(out, "allgone_x", np.array(["a", "b", "a"]))
    save(out, "allgone_y", np.array([""]))

    # Casts: floats to text (the shortest text that reads back the same
    # float; NaN and infinities as ONNX spells them), text to float32,
    # int64 and back to text.
    model(out, "casts",
          [helper.make_node("Cast", ["f"], ["f_text"], name="f2s", to=S),
           helper.make_node("Cast", ["t"], ["t_float"], name="s2f", to=F),
           helper.make_node("Cast", ["i"], ["i_int"], name="s2i", to=I64),
           helper.make_node("Cast", ["i_int"], ["i_text"], name="i2s", to=S)],
          [vi("f", [2, 4]), vi("t", [6], S), vi("i", [3], S)],
          [vi("f_text", [2, 4], S), vi("t_float", [6]), vi("i_int", [3], I64),
           vi("i_text", [3], S)])
    save(out, "casts_f", np.array([[0.5, -1.25, 3.1415927, 100.0],
                                   [1e-5, 0.1, np.nan, -np.inf]], np.float32))
    save(out, "casts_t", np.array(["1.5", "-2", "NaN", "1e3", "INF", "-inf"]))
    save(out, "casts_i", np.array(["42", "-7", "+0012"]))
    save(out, "casts_f_text", np.array([["0.5", "-1.25", "3.1415927", "100.0"],
                                        ["1e-05", "0.1", "NaN", "-INF"]]))
    save(out, "casts_t_float",
         np.array([1.5, -2, np.nan, 1000, np.inf, -np.inf], np.float32))
    save(out, "casts_i_int", np.array([42, -7, 12], np.int64))
    save(out, "casts_i_text", np.array(["42", "-7", "12"]))

    # Float -> text -> float is exact (the shortest text reads back the
    # same float), over enough elements for a parallel loop.
    rng = np.random.default_rng(0)
    many = (rng.standard_normal((64, 512)) *
            10.0 ** rng.integers(-20, 20, (64, 512))).astype(np.float32)
    model(out, "roundtrip",
          [helper.make_node("Cast", ["x"], ["s"], name="f2s", to=S),
           helper.make_node("Cast", ["s"], ["y"], name="s2f", to=F)],
          [vi("x", [64, 512])], [vi("y", [64, 512])])
    save(out, "roundtrip_x", many)
    model(out, "tostring",
          [helper.make_node("Cast", ["x"], ["s"], name="f2s", to=S)],
          [vi("x", [64, 512])], [vi("s", [64, 512], S)])

    # Ops that only move strings: Transpose, Reshape, Gather, Slice,
    # Concat, Unsqueeze, Squeeze, Flatten; an input returned as it is
    # (Identity); Shape of a string tensor.
    words = np.array([["a", "bb", "ccc"], ["dddd", "é", ""]])
    t = words.T.reshape(6)
    g = t[[4, 0]]
    c = np.concatenate([g, t[1:3]])
    model(out, "move",
          [helper.make_node("Transpose", ["x"], ["t"], name="transpose"),
           helper.make_node("Reshape", ["t", "six"], ["r"], name="reshape"),
           helper.make_node("Gather", ["r", "idx"], ["g"], name="gather"),
           helper.make_node("Slice", ["r", "start", "end"], ["s"], name="slice"),
           helper.make_node("Concat", ["g", "s"], ["c"], name="concat", axis=0),
           helper.make_node("Unsqueeze", ["c", "zero"], ["u"], name="unsqueeze"),
           helper.make_node("Squeeze", ["u", "zero"], ["q"], name="squeeze"),
           helper.make_node("Unsqueeze", ["q", "zero"], ["u2"], name="unsqueeze2"),
           helper.make_node("Flatten", ["u2"], ["y"], name="flatten", axis=1),
           helper.make_node("Identity", ["x"], ["same"], name="identity"),
           helper.make_node("Shape", ["x"], ["shape"], name="shape")],
          [vi("x", [2, 3], S)],
          [vi("y", [1, 4], S), vi("same", [2, 3], S), vi("shape", [2], I64)],
          [init("six", np.array([6], np.int64)), init("idx", np.array([4, 0], np.int64)),
           init("start", np.array([1], np.int64)), init("end", np.array([3], np.int64)),
           init("zero", np.array([0], np.int64))])
    save(out, "move_x", words)
    save(out, "move_y", c.reshape(1, 4))
    save(out, "move_same", words)
    save(out, "move_shape", np.array([2, 3], np.int64))

    # A dynamic length: one library for every number of strings.
    model(out, "dynamic",
          [helper.make_node("Cast", ["x"], ["f"], name="s2f", to=F),
           helper.make_node("Identity", ["x"], ["same"], name="identity")],
          [vi("x", [1, "n"], S)], [vi("f", [1, "n"]), vi("same", [1, "n"], S)])
    save(out, "dynamic_x5", np.array([["1", "2.5", "x", "-3", "1e2"]]))
    save(out, "dynamic_f5", np.array([[1, 2.5, np.nan, -3, 100]], np.float32))
    save(out, "dynamic_x40", np.array([[str(i) for i in range(40)]]))
    save(out, "dynamic_f40", np.arange(40, dtype=np.float32).reshape(1, 40))

    # Refused: an op that would compare or compute on the addresses.
    model(out, "expand",
          [helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")],
          [vi("x", [1, 3], S)], [vi("y", [2, 3], S)],
          [init("shape", np.array([2, 3], np.int64))])
    # Refused: how many strings are kept depends on the data and the
    # output's shape is not declared.
    model(out, "undeclared",
          [helper.make_node("StringNormalizer", ["x"], ["y"], name="norm",
                            stopwords=["a"])],
          [vi("x", [3], S)], [helper.make_tensor_value_info("y", S, None)])


if __name__ == "__main__":
    main()
