#!/usr/bin/env python3
"""Writes the small ONNX models that kiln's importer tests run on.

    make_models.py OUTDIR

Three groups:
  - broken models (OUTDIR/bad_*.onnx, OUTDIR/ext_*/model.onnx): written raw,
    never passed to onnx.checker, each with exactly one defect;
  - valid models (OUTDIR/ok_*.onnx, OUTDIR/ok_external/model.onnx): checked
    with onnx.checker, exercising opset normalisation and importer features;
  - models kiln once mishandled (OUTDIR/bug_*.onnx, OUTDIR/ext_huge_range/,
    see regressions.test).

Everything is deterministic and built with onnx.helper (no network).
"""

import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
BOOL = TensorProto.BOOL


def vi(name, shape, elem=F):
    """A tensor value info; shape None means unranked."""
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, opset=17, initializers=(), domains=(),
          ir_version=8, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] if opset is not None else []
    opsets += [helper.make_opsetid(d, v) for d, v in domains]
    m = helper.make_model(graph, opset_imports=opsets,
                          producer_name="kiln-tests")
    m.ir_version = ir_version
    return m


def write_raw(path, m):
    """Writes a model without checking it (broken models)."""
    with open(path, "wb") as f:
        f.write(m.SerializeToString() if not isinstance(m, bytes) else m)


def write_valid(path, m):
    onnx.checker.check_model(m)
    write_raw(path, m)


def relu_model(opset=17):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [vi("x", [2, 3])], [vi("y", [2, 3])], opset=opset)


def external(tensor, location, offset=None, length=None):
    """Turns `tensor` into an external-data tensor pointing at `location`."""
    tensor.ClearField("raw_data")
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    del tensor.external_data[:]
    entries = [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    if length is not None:
        entries.append(("length", str(length)))
    for k, v in entries:
        e = tensor.external_data.add()
        e.key = k
        e.value = v
    return tensor


def raw_tensor(name, dims, elem=F):
    """A TensorProto without data (helper.make_tensor checks the count)."""
    t = TensorProto()
    t.name = name
    t.data_type = elem
    t.dims.extend(dims)
    return t


def add_weight_model(w):
    """y = Add(x, w) with `w` an initializer of shape [4]."""
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                 [vi("x", [4])], [vi("y", [4])], initializers=[w])


def weight4(name="w"):
    return numpy_helper.from_array(
        np.array([1, 2, 3, 4], dtype=np.float32), name)


# ---------------------------------------------------------------------------
# Broken models.
# ---------------------------------------------------------------------------

def write_broken(out):
    # bad_missing.onnx is deliberately not written.

    write_raw(os.path.join(out, "bad_empty.onnx"), b"")

    rng = random.Random(1234)
    # 0xff starts a field with the invalid wire type 7: never a protobuf.
    garbage = b"\xff" + bytes(rng.randrange(256) for _ in range(255))
    write_raw(os.path.join(out, "bad_garbage.onnx"), garbage)

    whole = add_weight_model(weight4()).SerializeToString()
    write_raw(os.path.join(out, "bad_truncated.onnx"),
              whole[: len(whole) - 7])

    m = onnx.ModelProto()
    m.ir_version = 8
    m.opset_import.add().version = 17
    write_raw(os.path.join(out, "bad_nograph.onnx"), m)

    m = relu_model()
    m.ir_version = 0
    write_raw(os.path.join(out, "bad_irversion.onnx"), m)

    write_raw(os.path.join(out, "bad_unknown_op.onnx"),
              model([helper.make_node("FrobnicateAll", ["x"], ["y"],
                                      name="frob")],
                    [vi("x", [2])], [vi("y", [2])]))

    write_raw(os.path.join(out, "bad_unknown_domain.onnx"),
              model([helper.make_node("Relu", ["x"], ["t"], name="first"),
                     helper.make_node("Gizmo", ["t"], ["y"], name="gizmo",
                                      domain="com.example")],
                    [vi("x", [2])], [vi("y", [2])],
                    domains=[("com.example", 1)]))

    write_raw(os.path.join(out, "bad_domain_not_imported.onnx"),
              model([helper.make_node("Gizmo", ["x"], ["y"], name="gizmo",
                                      domain="com.example")],
                    [vi("x", [2])], [vi("y", [2])]))

    write_raw(os.path.join(out, "bad_opset25.onnx"), relu_model(opset=25))
    write_raw(os.path.join(out, "bad_opset99.onnx"), relu_model(opset=99))

    write_raw(os.path.join(out, "bad_add_1_input.onnx"),
              model([helper.make_node("Add", ["x"], ["y"], name="add1")],
                    [vi("x", [2])], [vi("y", [2])]))
    write_raw(os.path.join(out, "bad_add_3_inputs.onnx"),
              model([helper.make_node("Add", ["x", "x", "x"], ["y"],
                                      name="add3")],
                    [vi("x", [2])], [vi("y", [2])]))

    w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
    write_raw(os.path.join(out, "bad_conv_group_float.onnx"),
              model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                                      group=1.0)],
                    [vi("x", [1, 1, 5, 5])], [vi("y", None)],
                    initializers=[w]))

    write_raw(os.path.join(out, "bad_transpose_perm_string.onnx"),
              model([helper.make_node("Transpose", ["x"], ["y"],
                                      name="transpose", perm="1,0")],
                    [vi("x", [2, 3])], [vi("y", None)]))

    # a -> b -> a: two nodes feeding each other.
    write_raw(os.path.join(out, "bad_cycle.onnx"),
              model([helper.make_node("Add", ["x", "b"], ["a"], name="n0"),
                     helper.make_node("Relu", ["a"], ["b"], name="n1")],
                    [vi("x", [2])], [vi("b", [2])]))
    # A node reading its own output.
    write_raw(os.path.join(out, "bad_self_cycle.onnx"),
              model([helper.make_node("Add", ["x", "y"], ["y"], name="loop")],
                    [vi("x", [2])], [vi("y", [2])]))

    write_raw(os.path.join(out, "bad_undefined_input.onnx"),
              model([helper.make_node("Relu", ["x"], ["t"], name="ok"),
                     helper.make_node("Add", ["t", "nowhere"], ["y"],
                                      name="uses_undefined")],
                    [vi("x", [2])], [vi("y", [2])]))

    write_raw(os.path.join(out, "bad_produced_twice.onnx"),
              model([helper.make_node("Relu", ["x"], ["y"], name="first"),
                     helper.make_node("Neg", ["x"], ["y"], name="second")],
                    [vi("x", [2])], [vi("y", [2])]))

    write_raw(os.path.join(out, "bad_output_undefined.onnx"),
              model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                    [vi("x", [2])], [vi("y", [2]), vi("ghost", [2])]))

    # Shapes that do not broadcast (ONNX's inference fails on the node).
    write_raw(os.path.join(out, "bad_add_broadcast.onnx"),
              model([helper.make_node("Add", ["x", "z"], ["y"], name="add")],
                    [vi("x", [2]), vi("z", [3])], [vi("y", None)]))

    m = relu_model()
    m.graph.input[0].type.tensor_type.shape.dim[1].dim_value = -3
    write_raw(os.path.join(out, "bad_negative_dim.onnx"), m)

    huge = raw_tensor("huge", [10 ** 13])
    write_raw(os.path.join(out, "bad_absurd_dim.onnx"),
              model([helper.make_node("Identity", ["huge"], ["y"],
                                      name="id")],
                    [], [vi("y", None)], initializers=[huge]))

    # Each dim is fine, their product (2^60 elements) is not.
    many = raw_tensor("many", [1 << 30, 1 << 30])
    write_raw(os.path.join(out, "bad_too_many_elements.onnx"),
              model([helper.make_node("Identity", ["many"], ["y"],
                                      name="id")],
                    [], [vi("y", None)], initializers=[many]))

    w = weight4()
    w.raw_data = w.raw_data[:8]  # 8 bytes, dims [4] of float need 16.
    write_raw(os.path.join(out, "bad_raw_data_size.onnx"),
              add_weight_model(w))

    w = raw_tensor("w", [4])
    w.float_data.extend([1.0, 2.0, 3.0])  # 3 values for 4.
    write_raw(os.path.join(out, "bad_float_data_count.onnx"),
              add_weight_model(w))

    # A Constant node whose tensor attribute has a bad dim.
    t = raw_tensor("c", [-1])
    write_raw(os.path.join(out, "bad_constant_dim.onnx"),
              model([helper.make_node("Constant", [], ["y"], name="const",
                                      value=t)],
                    [], [vi("y", None)]))

    # Softmax before opset 13 on an input of unknown rank, axis not last.
    write_raw(os.path.join(out, "bad_softmax11_unranked.onnx"),
              model([helper.make_node("Softmax", ["x"], ["y"], name="softmax",
                                      axis=1)],
                    [vi("x", None)], [vi("y", None)], opset=11))

    # If whose else branch reads a value defined nowhere.
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t_out"], name="then_id")],
        "then", [], [vi("t_out", [2])])
    else_g = helper.make_graph(
        [helper.make_node("Add", ["x", "undefined_in_branch"], ["e_out"],
                          name="else_add")],
        "else", [], [vi("e_out", [2])])
    write_raw(os.path.join(out, "bad_if_undefined.onnx"),
              model([helper.make_node("If", ["c"], ["y"], name="if",
                                      then_branch=then_g,
                                      else_branch=else_g)],
                    [vi("c", [], BOOL), vi("x", [2])], [vi("y", [2])]))

    # A model of its own, used with a bad --input-shape.
    write_valid(os.path.join(out, "shape_target.onnx"),
                model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                      [vi("x", ["N", 3])], [vi("y", ["N", 3])]))

    # External data: each model in its own folder (the folder is the limit).
    def ext_model(folder, tensor, data=None, data_name="weights.bin"):
        d = os.path.join(out, folder)
        os.makedirs(d, exist_ok=True)
        if data is not None:
            with open(os.path.join(d, data_name), "wb") as f:
                f.write(data)
        write_raw(os.path.join(d, "model.onnx"), add_weight_model(tensor))

    raw16 = weight4().raw_data
    ext_model("ext_absolute", external(weight4(), "/etc/passwd"))
    ext_model("ext_dotdot", external(weight4(), "../outside.bin"))
    ext_model("ext_dotdot_inner", external(weight4(), "sub/../../outside.bin"))
    ext_model("ext_missing", external(weight4(), "nothere.bin"))
    ext_model("ext_past_end", external(weight4(), "weights.bin", offset=8,
                                       length=16), data=raw16)
    ext_model("ext_offset_past_end", external(weight4(), "weights.bin",
                                              offset=100), data=raw16)
    ext_model("ext_short", external(weight4(), "weights.bin"),
              data=raw16[:12])
    ext_model("ext_bad_offset", external(weight4(), "weights.bin",
                                         offset=-4), data=raw16)
    ext_model("ext_no_location", external(weight4(), ""), data=raw16)
    # A symlink inside the model's folder that points outside it.
    with open(os.path.join(out, "outside.bin"), "wb") as f:
        f.write(raw16)
    ext_model("ext_symlink", external(weight4(), "weights.bin"))
    link = os.path.join(out, "ext_symlink", "weights.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join(out, "outside.bin"), link)

    # The model path is a directory.
    os.makedirs(os.path.join(out, "bad_dir.onnx"), exist_ok=True)

    m = relu_model()
    m.graph.input[0].ClearField("type")
    write_raw(os.path.join(out, "bad_untyped_input.onnx"), m)

    write_raw(os.path.join(out, "bad_unknown_attr.onnx"),
              model([helper.make_node("Relu", ["x"], ["y"], name="relu",
                                      bogus=3)],
                    [vi("x", [2])], [vi("y", [2])]))

    write_raw(os.path.join(out, "bad_topk1_no_k.onnx"),
              model([helper.make_node("TopK", ["x"], ["v", "i"],
                                      name="topk")],
                    [vi("x", [3])], [vi("v", [3]), vi("i", [3], I64)],
                    opset=9))

    write_raw(os.path.join(out, "bad_softmax11_axis.onnx"),
              model([helper.make_node("Softmax", ["x"], ["y"], name="softmax",
                                      axis=5)],
                    [vi("x", [2, 3])], [vi("y", [2, 3])], opset=11))

    write_raw(os.path.join(out, "bad_cast1_type.onnx"),
              model([helper.make_node("Cast", ["x"], ["y"], name="cast",
                                      to="FLOAT7")],
                    [vi("x", [2])], [vi("y", [2])], opset=1, ir_version=3))

    # Scan-8 with sequence_lens (per-item lengths are not supported).
    write_raw(os.path.join(out, "bad_scan8.onnx"),
              model([helper.make_node(
                  "Scan", ["lens", "x"], ["y"], name="scan", num_scan_inputs=1,
                  body=helper.make_graph(
                      [helper.make_node("Identity", ["a"], ["b"])], "body",
                      [vi("a", [2])], [vi("b", [2])]))],
                  [vi("lens", [1], TensorProto.INT32), vi("x", [1, 3, 2])],
                  [vi("y", [1, 3, 2])], opset=8))

    # If whose then branch names an output that nothing produces.
    then_g = helper.make_graph([], "then", [], [vi("ghost", [2])])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e_out"], name="else_id")],
        "else", [], [vi("e_out", [2])])
    write_raw(os.path.join(out, "bad_if_output_undefined.onnx"),
              model([helper.make_node("Neg", ["x"], ["nx"], name="neg"),
                     helper.make_node("If", ["c"], ["y"], name="if",
                                      then_branch=then_g,
                                      else_branch=else_g)],
                    [vi("c", [], BOOL), vi("x", [2])], [vi("y", [2])]))

    # A sparse initializer with an index past its dense size.
    m = model([helper.make_node("Add", ["x", "sp"], ["y"], name="add")],
              [vi("x", [4])], [vi("y", [4])])
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "sp"),
        numpy_helper.from_array(np.array([0, 99], np.int64), "sp_idx"), [4]))
    write_raw(os.path.join(out, "bad_sparse_index.onnx"), m)


# ---------------------------------------------------------------------------
# Models kiln once mishandled (regressions.test).
# ---------------------------------------------------------------------------

def write_known_bugs(out):
    def bug(name, m):
        write_raw(os.path.join(out, name + ".onnx"), m)

    # strides=0: ONNX's conv shape inference divides by it (SIGFPE).
    w = numpy_helper.from_array(np.ones((2, 3, 3, 3), np.float32), "w")
    bug("bug_conv_stride0",
        model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                                strides=[0, 0])],
              [vi("x", [1, 3, 5, 5])], [vi("y", None)], initializers=[w]))

    bug("bug_constant_no_value",
        model([helper.make_node("Constant", [], ["y"], name="const")],
              [], [vi("y", None)]))
    bug("bug_constant_two_values",
        model([helper.make_node("Constant", [], ["y"], name="const",
                                value_float=1.0, value_int=2)],
              [], [vi("y", None)]))

    # A node output with the name of an initializer (ONNX names are SSA).
    bug("bug_init_shadowed",
        model([helper.make_node("Relu", ["x"], ["w"], name="relu")],
              [vi("x", [4])], [vi("w", [4])], initializers=[weight4()]))

    # Two graph inputs with one name.
    bug("bug_dup_input",
        model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [vi("x", [2]), vi("x", [2])], [vi("y", [2])]))

    # If branches with different numbers of outputs.
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t"], name="then_id")],
        "then", [], [vi("t", [2])])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e"], name="else_id"),
         helper.make_node("Neg", ["x"], ["e2"], name="else_neg")],
        "else", [], [vi("e", [2]), vi("e2", [2])])
    bug("bug_if_branch_arity",
        model([helper.make_node("If", ["c"], ["y"], name="if",
                                then_branch=then_g, else_branch=else_g)],
              [vi("c", [], BOOL), vi("x", [2])], [vi("y", None)]))

    # A Loop body without the (iteration, condition) inputs.
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"], name="body_id")],
        "body", [vi("c", [], BOOL)], [vi("c_out", [], BOOL)])
    bug("bug_loop_body_arity",
        model([helper.make_node("Loop", ["M", "cond", "v0"], ["v"],
                                name="loop", body=body)],
              [vi("M", [], I64), vi("cond", [], BOOL), vi("v0", [2])],
              [vi("v", [2])]))

    # An axis past the rank: libonnx 1.12's LayerNormalization inference
    # reads out of bounds (SIGSEGV) before kiln's checks run.
    bug("bug_layernorm_axis",
        model([helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"],
                                name="ln", axis=-7)],
              [vi("x", [2, 3, 5]), vi("s", [5]), vi("b", [5])], [vi("y", None)]))

    # Momentum's update count T as a string tensor (a scalar constant of
    # its type was made, and crashed).
    momentum = helper.make_node(
        "Momentum", ["r", "t", "x", "g", "v"], ["x_new", "v_new"], name="momentum",
        domain="ai.onnx.preview.training", alpha=0.9, beta=0.1, mode="standard",
        norm_coefficient=0.0)
    m = model([momentum],
              [vi("r", [], F), vi("t", [], TensorProto.STRING), vi("x", [2]),
               vi("g", [2]), vi("v", [2])],
              [vi("x_new", [2]), vi("v_new", [2])])
    m.opset_import.add(domain="ai.onnx.preview.training", version=1)
    bug("bug_momentum_t_type", m)

    # Run-time starts with a million entries for a rank-3 input (the
    # lowering emitted code per entry and per dim).
    bug("bug_slice_long_starts",
        model([helper.make_node("Slice", ["x", "s", "e"], ["y"], name="slice")],
              [vi("x", [4, 3, 2]), vi("s", [1 << 20], I64), vi("e", [3], I64)],
              [vi("y", [2, 2, 1])]))

    # A Scan whose initial state is declared [2, 1] while its body takes
    # and yields [2] (the lowering cast one to the other: invalid IR).
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "xi"], ["s2"], name="body_add"),
         helper.make_node("Identity", ["s2"], ["yi"], name="body_id")],
        "body", [vi("s", [2]), vi("xi", [2])], [vi("s2", [2]), vi("yi", [2])])
    bug("bug_scan_state_shape",
        model([helper.make_node("Scan", ["init", "x"], ["final", "ys"], name="scan",
                                num_scan_inputs=1, body=body)],
              [vi("init", [2, 1]), vi("x", [3, 2])], [vi("final", [2]), vi("ys", [3, 2])]))

    # Run-time Squeeze axes longer than the input's rank (a negative rank
    # was asked of a SmallVector: abort).
    bug("bug_squeeze_many_axes",
        model([helper.make_node("Squeeze", ["x", "axes"], ["y"], name="squeeze")],
              [vi("x", [1, 3, 1, 5]), vi("axes", [7], I64)], [vi("y", None)]))

    # LayerNormalization's B of a higher rank than X (invalid linalg).
    bug("bug_layernorm_bias_rank",
        model([helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"],
                                name="ln", axis=0)],
              [vi("x", [2, 3]), vi("s", [2, 3]), vi("b", [2, 3, 3])], [vi("y", None)]))

    # A pooling window of 2^62: the average divisor counted it tap by tap
    # (compilation never ended). Windows are capped at 2^31 - 1; the
    # largest allowed one compiles at once.
    for name, k in (("bug_avgpool_huge_kernel", 1 << 62), ("avgpool_widest_kernel", (1 << 31) - 1)):
        bug(name,
            model([helper.make_node("AveragePool", ["x"], ["y"], name="pool",
                                    auto_pad="SAME_LOWER", kernel_shape=[2, k])],
                  [vi("x", [1, 3, 5, 5])], [vi("y", None)]))

    # MaxPool with ceil_mode over an input of dynamic height and a static
    # output (utils/fuzz_models.py): the memory plan sized the padded
    # copy through a collapse of the dynamic dim, reading a destroyed
    # temporary (a crash). Valid: it compiles and runs.
    bug("maxpool_dynamic_height_ceil",
        model([helper.make_node("MaxPool", ["x"], ["y"], name="pool", ceil_mode=1,
                                kernel_shape=[3, 3], strides=[2, 2])],
              [vi("x", [1, 1, "n", 4])], [vi("y", [1, 1, 2, 2])], opset=12))

    # IR version 2 predates opset_import: opset 1 is meant (valid model).
    m = relu_model()
    del m.opset_import[:]
    m.ir_version = 2
    bug("bug_ir2_no_opset", m)

    # offset + length overflows int64 in the message.
    d = os.path.join(out, "ext_huge_range")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(weight4().raw_data)
    write_raw(os.path.join(d, "model.onnx"),
              add_weight_model(external(weight4(), "weights.bin",
                                        offset=1 << 62, length=1 << 62)))


# ---------------------------------------------------------------------------
# Valid models.
# ---------------------------------------------------------------------------

def write_valid_models(out):
    def ok(name, nodes, inputs, outputs, opset, initializers=()):
        write_valid(os.path.join(out, name + ".onnx"),
                    model(nodes, inputs, outputs, opset=opset,
                          initializers=initializers, name=name))

    ok("ok_squeeze11",
       [helper.make_node("Squeeze", ["x"], ["y"], name="squeeze",
                         axes=[0, 2])],
       [vi("x", [1, 3, 1, 4])], [vi("y", [3, 4])], 11)
    ok("ok_unsqueeze11",
       [helper.make_node("Unsqueeze", ["x"], ["y"], name="unsqueeze",
                         axes=[0])],
       [vi("x", [3, 4])], [vi("y", [1, 3, 4])], 11)
    ok("ok_reducesum11",
       [helper.make_node("ReduceSum", ["x"], ["y"], name="reducesum",
                         axes=[1], keepdims=0)],
       [vi("x", [2, 3, 4])], [vi("y", [2, 4])], 11)
    ok("ok_slice1",
       [helper.make_node("Slice", ["x"], ["y"], name="slice", starts=[1, 0],
                         ends=[3, 2], axes=[0, 1])],
       [vi("x", [4, 5])], [vi("y", [2, 2])], 9)
    ok("ok_pad2",
       [helper.make_node("Pad", ["x"], ["y"], name="pad", mode="constant",
                         pads=[0, 1, 0, 2], value=1.5)],
       [vi("x", [2, 3])], [vi("y", [2, 6])], 10)
    ok("ok_split11",
       [helper.make_node("Split", ["x"], ["a", "b"], name="split", axis=0,
                         split=[2, 3])],
       [vi("x", [5, 4])], [vi("a", [2, 4]), vi("b", [3, 4])], 11)
    ok("ok_clip6",
       [helper.make_node("Clip", ["x"], ["y"], name="clip", min=-1.0,
                         max=6.0)],
       [vi("x", [4])], [vi("y", [4])], 10)
    ok("ok_clip6_min_only",
       [helper.make_node("Clip", ["x"], ["y"], name="clip", min=0.5)],
       [vi("x", [4])], [vi("y", [4])], 10)
    ok("ok_upsample7",
       [helper.make_node("Upsample", ["x"], ["y"], name="upsample",
                         mode="nearest", scales=[1.0, 1.0, 2.0, 2.0])],
       [vi("x", [1, 1, 2, 2])], [vi("y", [1, 1, 4, 4])], 8)
    scales = numpy_helper.from_array(
        np.array([1.0, 1.0, 2.0, 3.0], np.float32), "scales")
    ok("ok_upsample9",
       [helper.make_node("Upsample", ["x", "scales"], ["y"], name="upsample",
                         mode="nearest")],
       [vi("x", [1, 1, 2, 2])], [vi("y", [1, 1, 4, 6])], 9, [scales])
    ok("ok_resize10",
       [helper.make_node("Resize", ["x", "scales"], ["y"], name="resize",
                         mode="linear")],
       [vi("x", [1, 1, 2, 2])], [vi("y", [1, 1, 4, 6])], 10, [scales])
    ok("ok_softmax11",
       [helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=1)],
       [vi("x", [2, 3, 4, 5])], [vi("y", [2, 3, 4, 5])], 11)
    ok("ok_softmax11_last",
       [helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-1)],
       [vi("x", [2, 3])], [vi("y", [2, 3])], 11)
    ok("ok_constant_forms",
       [helper.make_node("Constant", [], ["ints"], name="c_ints",
                         value_ints=[3, 1, 4]),
        helper.make_node("Constant", [], ["flt"], name="c_float",
                         value_float=2.5)],
       [], [vi("ints", [3], I64), vi("flt", [])], 13)
    ok("ok_scatter9",
       [helper.make_node("Scatter", ["x", "idx", "upd"], ["y"],
                         name="scatter", axis=0)],
       [vi("x", [3, 3]), vi("idx", [1, 3], I64), vi("upd", [1, 3])],
       [vi("y", [3, 3])], 9)
    ok("ok_topk1",
       [helper.make_node("TopK", ["x"], ["v", "i"], name="topk", k=2)],
       [vi("x", [3, 5])], [vi("v", [3, 2]), vi("i", [3, 2], I64)], 9)

    ok("ok_dropout7",
       [helper.make_node("Dropout", ["x"], ["y"], name="dropout",
                         ratio=0.25)],
       [vi("x", [2])], [vi("y", [2])], 7)

    # Dropout-7's mask has the data's type; Dropout-10's is bool.
    ok("ok_dropout7_mask",
       [helper.make_node("Dropout", ["x"], ["y", "m"], name="dropout",
                         ratio=0.25)],
       [vi("x", [2, 3])], [vi("y", [2, 3]), vi("m", [2, 3])], 7)
    ok("ok_dropout10_mask",
       [helper.make_node("Dropout", ["x"], ["y", "m"], name="dropout")],
       [vi("x", [2, 3])], [vi("y", [2, 3]), vi("m", [2, 3], TensorProto.BOOL)],
       10)

    def legacy(name, nodes, inputs, outputs):
        # Opset 1 models: IR version 3 is the oldest with opset_import.
        write_valid(os.path.join(out, name + ".onnx"),
                    model(nodes, inputs, outputs, opset=1, ir_version=3,
                          name=name))

    legacy("ok_reshape1",
           [helper.make_node("Reshape", ["x"], ["y"], name="reshape",
                             shape=[3, 2])],
           [vi("x", [2, 3])], [vi("y", [3, 2])])
    legacy("ok_cast1",
           [helper.make_node("Cast", ["x"], ["y"], name="cast", to="INT32")],
           [vi("x", [2])], [vi("y", [2], TensorProto.INT32)])
    legacy("ok_add1_broadcast",
           [helper.make_node("Add", ["x", "z"], ["y"], name="add",
                             broadcast=1, axis=0)],
           [vi("x", [2, 3]), vi("z", [2])], [vi("y", [2, 3])])

    # A sparse initializer (2-D coordinates) becomes a dense constant.
    m = model([helper.make_node("Add", ["x", "sp"], ["y"], name="add")],
              [vi("x", [2, 2])], [vi("y", [2, 2])])
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([7.0, 9.0], np.float32), "sp"),
        numpy_helper.from_array(np.array([[0, 1], [1, 0]], np.int64),
                                "sp_idx"), [2, 2]))
    write_valid(os.path.join(out, "ok_sparse.onnx"), m)

    # An initializer also listed as a graph input: a constant, not an arg.
    bias = numpy_helper.from_array(np.array([0.5, -0.5], np.float32), "bias")
    write_valid(os.path.join(out, "ok_init_as_input.onnx"),
                model([helper.make_node("Add", ["x", "bias"], ["y"],
                                        name="add")],
                      [vi("x", [2]), vi("bias", [2])], [vi("y", [2])],
                      initializers=[bias], ir_version=8))

    # A dynamic batch dim, pinned with --input-shape.
    write_valid(os.path.join(out, "ok_dynamic_batch.onnx"),
                model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                      [vi("x", ["N", 3])], [vi("y", ["N", 3])]))

    # If: the branches read `x` from the enclosing graph.
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t_out"], name="then_id")],
        "then", [], [vi("t_out", [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e_out"], name="else_neg")],
        "else", [], [vi("e_out", [2])])
    write_valid(os.path.join(out, "ok_if.onnx"),
                model([helper.make_node("If", ["c"], ["y"], name="if",
                                        then_branch=then_g,
                                        else_branch=else_g)],
                      [vi("c", [], BOOL), vi("x", [2])], [vi("y", [2])]))

    # Loop: v = v + x, M times.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"],
                          name="body_cond"),
         helper.make_node("Add", ["v_in", "x"], ["v_out"], name="body_add")],
        "body",
        [vi("iter", [], I64), vi("cond_in", [], BOOL), vi("v_in", [2])],
        [vi("cond_out", [], BOOL), vi("v_out", [2])])
    write_valid(os.path.join(out, "ok_loop.onnx"),
                model([helper.make_node("Loop", ["M", "cond", "v0"], ["v"],
                                        name="loop", body=body)],
                      [vi("M", [], I64), vi("cond", [], BOOL),
                       vi("v0", [2]), vi("x", [2])],
                      [vi("v", [2])]))

    # Scan-8: a batch of 2 running sums, the scan input read backwards;
    # inputs and expected outputs beside it as .npy.
    body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "next"], ["sum_out"],
                          name="body_add"),
         helper.make_node("Identity", ["sum_out"], ["scan_out"],
                          name="body_id")],
        "body", [vi("sum_in", [2]), vi("next", [2])],
        [vi("sum_out", [2]), vi("scan_out", [2])])
    write_valid(os.path.join(out, "ok_scan8.onnx"),
                model([helper.make_node("Scan", ["", "init", "xs"],
                                        ["final", "sums"], name="scan",
                                        num_scan_inputs=1, directions=[1],
                                        body=body)],
                      [vi("init", [2, 2]), vi("xs", [2, 3, 2])],
                      [vi("final", [2, 2]), vi("sums", [2, 3, 2])],
                      opset=8))
    init = np.array([[0.0, 1.0], [10.0, -1.0]], np.float32)
    xs = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    sums = init[:, None, :] + np.cumsum(xs[:, ::-1, :], axis=1)
    np.save(os.path.join(out, "scan8_init.npy"), init)
    np.save(os.path.join(out, "scan8_xs.npy"), xs)
    np.save(os.path.join(out, "scan8_final.npy"), sums[:, -1, :])
    np.save(os.path.join(out, "scan8_sums.npy"), sums.astype(np.float32))

    # External data inside the model's folder: one 8 KiB weight (becomes a
    # dense resource) and one 16-byte weight (becomes dense<...>), both in
    # weights.bin.
    d = os.path.join(out, "ok_external")
    os.makedirs(d, exist_ok=True)
    big = np.arange(2048, dtype=np.float32)
    small = np.array([1.5, -2.0, 3.25, 4.0], np.float32)
    with open(os.path.join(d, "weights.bin"), "wb") as f:
        f.write(big.tobytes())
        f.write(small.tobytes())
    big_t = external(numpy_helper.from_array(big, "big"), "weights.bin",
                     offset=0, length=big.nbytes)
    small_t = external(numpy_helper.from_array(small, "small"),
                       "weights.bin", offset=big.nbytes, length=small.nbytes)
    m = model([helper.make_node("Add", ["x", "big"], ["y"], name="add_big"),
               helper.make_node("Mul", ["s", "small"], ["z"],
                                name="mul_small")],
              [vi("x", [2048]), vi("s", [4])],
              [vi("y", [2048]), vi("z", [4])],
              initializers=[big_t, small_t])
    path = os.path.join(d, "model.onnx")
    write_raw(path, m)
    onnx.checker.check_model(path)  # By path: resolves the external data.


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_models.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    write_broken(out)
    write_valid_models(out)
    write_known_bugs(out)


if __name__ == "__main__":
    main()
