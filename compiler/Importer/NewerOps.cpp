//===- NewerOps.cpp - Ops new since opset 17, from older ones -------------===//
//
// The ops of opsets 18 to 24 that compose from opset-17 ones, as the
// rewriter of NewerOpsets.cpp expands them: Mish (18), Gelu (20),
// GroupNormalization (18, and 21's per-channel scale), RMSNormalization,
// RotaryEmbedding and Attention (23, after onnx/reference/ops), Swish and
// TensorScatter (24). The nodes added keep the name and index of the
// node they come from.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/NewerOpsets.h"

#include "llvm/ADT/StringSet.h"

#include <limits>

using namespace mlir;

namespace kiln::importer::newer {

/// GroupNormalization: the input as [N, G, rest], normalised per group by
/// InstanceNormalization (whose scale and bias are per group, as opset 18
/// has them), then back to the input's shape; from opset 21 the scale and
/// bias are per channel and apply after, on [N, C, rest].
LogicalResult Rewriter::rewriteGroupNorm(NodeProto &node) {
  const AttributeProto *groups = findAttr(node, "num_groups");
  if (!groups || groups->i() < 1 || groups->i() > (int64_t(1) << 24))
    return error() << "num_groups must be given, from 1 to 2^24";
  if (node.input_size() < 3 || !hasInput(node, 1) || !hasInput(node, 2))
    return error() << "it takes X, scale and bias";
  float epsilon = 1e-5f;
  if (const AttributeProto *e = findAttr(node, "epsilon"))
    epsilon = e->f();
  int64_t g = groups->i();
  bool perChannel = model.opsets[""] >= 21;
  // Before opset 21 scale and bias hold one value per group.
  for (int i : {1, 2})
    if (std::optional<std::vector<int64_t>> dims = statedDims(node.input(i));
        !perChannel && dims && (dims->size() != 1 || ((*dims)[0] >= 0 && (*dims)[0] != g)))
      return error() << (i == 1 ? "scale" : "bias") << " must have num_groups (" << g
                     << ") elements before opset 21";
  std::string x = node.input(0);
  std::string grouped = add("Reshape", {x, constant({0, g, -1})});
  std::string scale = node.input(1), bias = node.input(2);
  if (perChannel) {
    // InstanceNormalization's scale and bias take the input's type.
    scale = add("CastLike", {floatConstant(std::vector<float>(size_t(g), 1.f)), x});
    bias = add("CastLike", {floatConstant(std::vector<float>(size_t(g), 0.f)), x});
  }
  std::string normal = add("InstanceNormalization", {grouped, scale, bias},
                           [&](NodeProto &n) {
                             setAttr(n, "epsilon", AttributeProto::FLOAT)->set_f(epsilon);
                           });
  std::string shape = add("Shape", {x});
  if (!perChannel)
    return becomes(node, "Reshape", {normal, shape});
  // Per channel: [N, C, rest] * scale[C, 1] + bias[C, 1], then X's shape.
  std::string channels =
      add("Concat", {constant({0}), add("Shape", {node.input(1)}), constant({-1})},
          [](NodeProto &c) { setInt(c, "axis", 0); });
  std::string rows = add("Reshape", {normal, channels});
  std::string column = constant({-1, 1});
  std::string scaled = add("Mul", {rows, add("Reshape", {node.input(1), column})});
  std::string shifted = add("Add", {scaled, add("Reshape", {node.input(2), column})});
  return becomes(node, "Reshape", {shifted, shape});
}

/// Gelu: x/2 * (1 + erf(x / sqrt 2)), or with approximate="tanh"
/// x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))), the forms kiln's
/// GELU fusion recognises.
LogicalResult Rewriter::rewriteGelu(NodeProto &node) {
  std::string approximate = "none";
  if (const AttributeProto *a = findAttr(node, "approximate"))
    approximate = a->s();
  if (approximate != "none" && approximate != "tanh")
    return error() << "approximate '" << approximate << "' is not 'none' nor 'tanh'";
  std::string x = node.input(0);
  auto scalar = [&](float v) { return add("CastLike", {floatConstant({v}, true), x}); };
  std::string inner;
  if (approximate == "none") {
    inner = add("Erf", {add("Div", {x, scalar(1.4142135623730951f)})});
  } else {
    std::string cube = add("Mul", {add("Mul", {x, x}), x});
    std::string sum = add("Add", {x, add("Mul", {cube, scalar(0.044715f)})});
    inner = add("Tanh", {add("Mul", {sum, scalar(0.7978845608028654f)})});
  }
  std::string half = add("Mul", {x, scalar(0.5f)});
  std::string onePlus = add("Add", {inner, scalar(1.f)});
  return becomes(node, "Mul", {half, onePlus});
}

/// Mish: x * tanh(softplus(x)).
LogicalResult Rewriter::rewriteMish(NodeProto &node) {
  std::string x = node.input(0);
  return becomes(node, "Mul", {x, add("Tanh", {add("Softplus", {x})})});
}

LogicalResult Rewriter::rewriteSwish(NodeProto &node) {
  // Swish-24: x * sigmoid(alpha * x) (alpha 1 is SiLU, as torch writes it).
  std::string x = node.input(0);
  float alpha = 1;
  if (const AttributeProto *a = findAttr(node, "alpha"))
    alpha = a->f();
  std::string scaled = alpha == 1 ? x : add("Mul", {x, scalarLike(alpha, x)});
  return becomes(node, "Mul", {x, add("Sigmoid", {scaled})});
}

LogicalResult Rewriter::rewriteTensorScatter(NodeProto &node) {
  // TensorScatter-24 (a key/value cache updated in place): present is
  // past with update's positions s written at write_indices[b] + s along
  // `axis` (modulo its length when circular). Read the other way: cache
  // position p takes update[p - w[b]] where 0 <= p - w[b] < the update's
  // length (after the modulo), else keeps past[p]; a GatherElements of
  // the update by those indices and a Where.
  if (!hasInput(node, 1))
    return error() << "it takes past_cache and update";
  std::string past = node.input(0), update = node.input(1);
  std::optional<int64_t> rank = rankOf(past);
  if (!rank || *rank < 2)
    return error() << "kiln needs the model to state the rank of '" << past
                   << "' (at least 2)";
  int64_t axis = -2;
  if (const AttributeProto *a = findAttr(node, "axis"))
    axis = a->i();
  if (axis < -*rank || axis >= *rank)
    return error() << "axis " << axis << " is out of range for rank " << *rank;
  if (axis < 0)
    axis += *rank;
  if (axis == 0)
    return error() << "axis 0 is the batch: the sequence axis must come after it";
  std::string mode = "linear";
  if (const AttributeProto *a = findAttr(node, "mode"))
    mode = a->s();
  if (mode != "linear" && mode != "circular")
    return error() << "mode '" << mode << "' is not 'linear' or 'circular'";
  if (staticDim(update, axis) == 0)
    return error() << "an update of no positions is not supported";
  // Positions along the axis, [1, ..., M, ..., 1], and the write index of
  // each batch item, [B, 1, ..., 1].
  std::vector<int64_t> alongAxis(size_t(*rank), 1), perItem(size_t(*rank), 1);
  alongAxis[size_t(axis)] = -1;
  perItem[0] = -1;
  std::string length = shapeOf(past, axis, axis + 1);
  std::string positions =
      add("Reshape", {add("Range", {constant({0}, true),
                                    add("Squeeze", {length, constant({0})}),
                                    constant({1}, true)}),
                      constant(alongAxis)});
  std::string offset = positions;
  if (hasInput(node, 2))
    offset = add("Sub", {positions, add("Reshape", {node.input(2), constant(perItem)})});
  if (mode == "circular")
    offset = add("Mod", {offset, length});
  std::string written =
      add("And", {add("GreaterOrEqual", {offset, constant({0}, true)}),
                  add("Less", {offset, shapeOf(update, axis, axis + 1)})});
  std::string indices = add("Expand", {add("Where", {written, offset, constant({0}, true)}),
                                       add("Shape", {past})});
  std::string taken = add("GatherElements", {update, indices},
                          [&](NodeProto &n) { setInt(n, "axis", axis); });
  return becomes(node, "Where", {written, taken, past});
}

/// RMSNormalization-23: x / sqrt(mean(x^2 over axis..) + epsilon) * scale.
LogicalResult Rewriter::rewriteRmsNorm(NodeProto &node) {
  if (!hasInput(node, 1))
    return error() << "it takes X and scale";
  int64_t axis = -1;
  if (const AttributeProto *a = findAttr(node, "axis"))
    axis = a->i();
  float epsilon = 1e-5f;
  if (const AttributeProto *e = findAttr(node, "epsilon"))
    epsilon = e->f();
  std::string x = node.input(0), scale = node.input(1);
  std::vector<int64_t> axes;
  if (axis < 0) {
    if (axis < -64)
      return error() << "axis " << axis << " is out of range";
    for (int64_t a = axis; a < 0; ++a)
      axes.push_back(a);
  } else {
    std::optional<int64_t> rank = rankOf(x);
    if (!rank)
      return error() << "its axis is " << axis << " and the model does not state the rank of '"
                     << x << "'";
    if (axis >= *rank)
      return error() << "axis " << axis << " is out of range for rank " << *rank;
    for (int64_t a = axis; a < *rank; ++a)
      axes.push_back(a);
  }
  std::string mean = add("ReduceMean", {add("Mul", {x, x})}, [&](NodeProto &r) {
    setInts(r, "axes", axes);
    setInt(r, "keepdims", 1);
  });
  std::string rms = add("Sqrt", {add("Add", {mean, scalarLike(epsilon, x)})});
  return becomes(node, "Mul", {add("Div", {x, rms}), scale});
}

/// RotaryEmbedding-23 (onnx/reference/ops/op_rotary_embedding.py): X as
/// [batch, seq, heads, head_size]; its first rotary_embedding_dim values
/// (all by default) rotated in halves or interleaved pairs by the cos and
/// sin caches (gathered at position_ids when given).
LogicalResult Rewriter::rewriteRotary(NodeProto &node) {
  if (!hasInput(node, 1) || !hasInput(node, 2))
    return error() << "it takes X, cos_cache and sin_cache";
  std::string x = node.input(0);
  std::optional<int64_t> rank = rankOf(x);
  if (!rank || (*rank != 3 && *rank != 4))
    return error() << "kiln needs the model to state the rank of '" << x << "' (3 or 4)";
  int64_t interleaved = 0, dim = 0, heads = 0;
  if (const AttributeProto *a = findAttr(node, "interleaved"))
    interleaved = a->i();
  if (const AttributeProto *a = findAttr(node, "rotary_embedding_dim"))
    dim = a->i();
  if (const AttributeProto *a = findAttr(node, "num_heads"))
    heads = a->i();
  if (dim < 0 || dim % 2)
    return error() << "rotary_embedding_dim " << dim << " is not even";
  if (*rank == 3 && heads < 1)
    return error() << "a 3-D input needs num_heads";
  std::string tokens = *rank == 4 ? transpose(x, {0, 2, 1, 3})
                                  : add("Reshape", {x, constant({0, 0, heads, -1})});
  std::string rotated = tokens, kept;
  if (dim > 0) {
    rotated = slice(tokens, 3, 0, dim);
    kept = slice(tokens, 3, dim, std::numeric_limits<int64_t>::max());
  }
  std::string cos = node.input(1), sin = node.input(2);
  if (hasInput(node, 3)) {
    cos = add("Gather", {cos, node.input(3)});
    sin = add("Gather", {sin, node.input(3)});
  }
  std::string two = constant({2});
  cos = add("Unsqueeze", {cos, two});
  sin = add("Unsqueeze", {sin, two});
  std::string x1, x2;
  if (interleaved) {
    x1 = slice(rotated, 3, 0, std::numeric_limits<int64_t>::max(), 2);
    x2 = slice(rotated, 3, 1, std::numeric_limits<int64_t>::max(), 2);
  } else {
    std::vector<std::string> halves =
        addOutputs("Split", {rotated}, 2, [](NodeProto &n) { setInt(n, "axis", 3); });
    x1 = halves[0];
    x2 = halves[1];
  }
  std::string real = add("Sub", {add("Mul", {cos, x1}), add("Mul", {sin, x2})});
  std::string imag = add("Add", {add("Mul", {sin, x1}), add("Mul", {cos, x2})});
  std::string joined;
  if (interleaved) {
    std::string last = constant({-1});
    std::string pairs = add("Concat", {add("Unsqueeze", {real, last}), add("Unsqueeze", {imag, last})},
                            [](NodeProto &c) { setInt(c, "axis", -1); });
    joined = add("Reshape", {pairs, add("Shape", {rotated})});
  } else {
    joined = add("Concat", {real, imag}, [](NodeProto &c) { setInt(c, "axis", -1); });
  }
  if (dim > 0)
    joined = add("Concat", {joined, kept}, [](NodeProto &c) { setInt(c, "axis", -1); });
  if (*rank == 3)
    return becomes(node, "Reshape", {joined, add("Shape", {x})});
  (void)becomes(node, "Transpose", {joined});
  setInts(node, "perm", {0, 2, 1, 3});
  return success();
}

/// Attention-23 as MatMul, Softmax, MatMul over [batch, heads, seq, size]
/// (onnx/reference/ops/op_attention.py): 3-D inputs split into heads;
/// past keys and values prepended (present_key/present_value are those);
/// grouped key/value heads repeated, each one for q_num_heads /
/// kv_num_heads query heads in turn; scores scaled (1/sqrt(head_size) by
/// default), softcapped, then masked (attn_mask: bool keeps, float adds;
/// is_causal: key j for query i when j <= i + the past's length).
LogicalResult Rewriter::rewriteAttention(NodeProto &node) {
  if (!hasInput(node, 1) || !hasInput(node, 2))
    return error() << "it takes Q, K and V";
  if (node.output_size() > 3 && !node.output(3).empty())
    return error() << "its qk_matmul_output output is not supported";
  if (hasInput(node, 4) != hasInput(node, 5))
    return error() << "past_key and past_value go together";
  std::string q = node.input(0), k = node.input(1), v = node.input(2);
  std::optional<int64_t> rank = rankOf(q);
  if (!rank || (*rank != 3 && *rank != 4))
    return error() << "kiln needs the model to state the rank of '" << q << "' (3 or 4)";
  int64_t causal = 0, qHeads = 0, kvHeads = 0;
  float softcap = 0;
  std::optional<float> scale;
  if (const AttributeProto *a = findAttr(node, "is_causal"))
    causal = a->i();
  if (const AttributeProto *a = findAttr(node, "q_num_heads"))
    qHeads = a->i();
  if (const AttributeProto *a = findAttr(node, "kv_num_heads"))
    kvHeads = a->i();
  if (const AttributeProto *a = findAttr(node, "softcap"))
    softcap = a->f();
  if (const AttributeProto *a = findAttr(node, "scale"))
    scale = a->f();
  if (causal && hasInput(node, 3))
    return error() << "is_causal with an attn_mask is not supported (opset 23 does not "
                      "allow it)";
  if (hasInput(node, 6))
    return error() << "its nonpad_kv_seqlen input (opset 24) is not supported yet";
  if (*rank == 3) {
    if (qHeads < 1 || kvHeads < 1)
      return error() << "3-D inputs need q_num_heads and kv_num_heads";
    auto heads = [&](const std::string &t, int64_t n) {
      return transpose(add("Reshape", {t, constant({0, 0, n, -1})}), {0, 2, 1, 3});
    };
    q = heads(q, qHeads);
    k = heads(k, kvHeads);
    v = heads(v, kvHeads);
  } else {
    qHeads = staticDim(q, 1).value_or(0);
    kvHeads = staticDim(k, 1).value_or(0);
  }
  if (hasInput(node, 4)) {
    auto concat = [&](const std::string &past, const std::string &now) {
      return add("Concat", {past, now}, [](NodeProto &c) { setInt(c, "axis", 2); });
    };
    k = concat(node.input(4), k);
    v = concat(node.input(5), v);
  }
  for (auto [i, value] : {std::pair<int, std::string>{1, k}, {2, v}})
    if (node.output_size() > i && !node.output(i).empty())
      addOutputs("Identity", {value}, 1, nullptr, {node.output(i)});
  if (qHeads > 0 && kvHeads > 0 && qHeads != kvHeads) {
    if (qHeads % kvHeads)
      return error() << "q_num_heads " << qHeads << " is not a multiple of kv_num_heads "
                     << kvHeads;
    int64_t reps = qHeads / kvHeads;
    auto repeat = [&](const std::string &t) {
      std::string tiled = add("Tile", {add("Unsqueeze", {t, constant({2})}),
                                       constant({1, 1, reps, 1, 1})});
      std::string shape = add("Concat", {constant({0, qHeads}), shapeOf(t, 2)},
                              [](NodeProto &c) { setInt(c, "axis", 0); });
      return add("Reshape", {tiled, shape});
    };
    k = repeat(k);
    v = repeat(v);
  }
  std::string scores = add("MatMul", {q, transpose(k, {0, 1, 3, 2})});
  std::string factor;
  if (scale) {
    factor = scalarLike(*scale, q);
  } else {
    std::string size = add("CastLike", {shapeOf(q, 3, 4), q});
    factor = add("Reciprocal", {add("Sqrt", {size})});
  }
  scores = add("Mul", {scores, factor});
  if (softcap > 0) {
    std::string cap = scalarLike(softcap, q);
    scores = add("Mul", {add("Tanh", {add("Div", {scores, cap})}), cap});
  }
  std::string minusInf = scalarLike(-std::numeric_limits<float>::infinity(), q);
  std::string zero = scalarLike(0.f, q);
  if (hasInput(node, 3)) {
    std::string mask = node.input(3);
    // A bool mask keeps where true; a float mask adds. Bool: as the model
    // declares it, or made by a comparison or a Cast to bool.
    bool isBool = false;
    static const llvm::StringSet<> comparisons = {
        "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor",
        "IsNaN", "IsInf"};
    for (auto it = scopes.rbegin(); it != scopes.rend() && !isBool; ++it) {
      for (const auto *list : {&(*it)->input(), &(*it)->value_info()})
        for (const auto &vi : *list)
          if (vi.name() == mask && vi.type().tensor_type().elem_type() == TensorProto::BOOL)
            isBool = true;
      for (const TensorProto &t : (*it)->initializer())
        if (t.name() == mask && t.data_type() == TensorProto::BOOL)
          isBool = true;
      for (const NodeProto &n : (*it)->node())
        if (llvm::is_contained(n.output(), mask)) {
          const AttributeProto *to = findAttr(n, "to");
          isBool |= comparisons.contains(n.op_type()) ||
                    (n.op_type() == "Cast" && to && to->i() == TensorProto::BOOL);
        }
    }
    std::string bias = isBool ? add("Where", {mask, zero, minusInf}) : mask;
    scores = add("Add", {scores, bias});
  } else if (causal) {
    auto scalarDim = [&](const std::string &t, int64_t d) {
      return add("Squeeze", {shapeOf(t, d, d + 1), constant({0})});
    };
    std::string rows = add("Range", {constant({0}, true), scalarDim(q, 2), constant({1}, true)});
    std::string cols = add("Range", {constant({0}, true), scalarDim(k, 2), constant({1}, true)});
    if (hasInput(node, 4))
      rows = add("Add", {rows, scalarDim(node.input(4), 2)});
    std::string hidden = add("Less", {add("Unsqueeze", {rows, constant({1})}),
                                      add("Unsqueeze", {cols, constant({0})})});
    scores = add("Add", {scores, add("Where", {hidden, minusInf, zero})});
  }
  std::string probs = add("Softmax", {scores}, [](NodeProto &n) { setInt(n, "axis", -1); });
  std::string out = add("MatMul", {probs, v});
  while (node.output_size() > 1)
    node.mutable_output()->RemoveLast();
  if (*rank == 3)
    return becomes(node, "Reshape", {transpose(out, {0, 2, 1, 3}), constant({0, 0, -1})});
  return becomes(node, "Identity", {out});
}

} // namespace kiln::importer::newer
