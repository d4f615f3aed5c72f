//===- QdqExport.cpp - --quantize=int8 --emit=onnx -------------------------===//
//
// Writes kiln's static INT8 quantisation back into the ONNX file as QDQ,
// the form ONNX Runtime's quantiser writes, so that the same quantised
// model can run in ONNX Runtime or be inspected in Netron:
//
//   x -> QuantizeLinear(x_scale, x_zero_point) -> DequantizeLinear -> node
//   W_int8 -> DequantizeLinear(W_scale, axis) -> node
//
// The file is edited, not regenerated: every other node, initializer,
// input, output and attribute stays as it was. kiln reading the export
// (kiln-fuse-qdq) compiles the same integer graph as --quantize=int8.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/Importer.h"
#include "compiler/Importer/ImporterInternal.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

namespace kiln {
namespace {

::onnx::TensorProto *addInitializer(::onnx::GraphProto &graph, const std::string &name,
                                    int32_t dtype, const std::vector<int64_t> &dims,
                                    const void *data, size_t bytes) {
  ::onnx::TensorProto *t = graph.add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  for (int64_t d : dims)
    t->add_dims(d);
  t->set_raw_data(std::string(static_cast<const char *>(data), bytes));
  return t;
}

::onnx::NodeProto *addNode(google::protobuf::RepeatedPtrField<::onnx::NodeProto> &nodes,
                           const std::string &opType, const std::string &name,
                           const std::vector<std::string> &inputs, const std::string &output) {
  ::onnx::NodeProto *n = nodes.Add();
  n->set_op_type(opType);
  n->set_name(name);
  for (const std::string &in : inputs)
    n->add_input(in);
  n->add_output(output);
  return n;
}

/// Every tensor name that a node of `graph` or of its subgraphs reads.
void collectReads(const ::onnx::GraphProto &graph, std::set<std::string> &names) {
  for (const ::onnx::NodeProto &node : graph.node()) {
    for (const std::string &in : node.input())
      names.insert(in);
    for (const ::onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectReads(attr.g(), names);
      for (const ::onnx::GraphProto &g : attr.graphs())
        collectReads(g, names);
    }
  }
  for (const ::onnx::ValueInfoProto &out : graph.output())
    names.insert(out.name());
}

} // namespace

bool writeQdqModel(const std::string &input, const std::string &output,
                   const std::vector<QdqNode> &nodes, const std::vector<QdqInput> &inputs,
                   std::string &error) {
  ::onnx::ModelProto model;
  {
    std::ifstream in(input, std::ios::binary);
    if (!in) {
      error = "cannot read '" + input + "'";
      return false;
    }
    google::protobuf::io::IstreamInputStream raw(&in);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    if (!model.ParseFromCodedStream(&coded)) {
      error = "'" + input + "' is not an ONNX model";
      return false;
    }
  }
  if (model.functions_size() > 0) {
    // The quantised nodes are numbered in the graph with the calls inlined.
    error = "--emit=onnx: '" + input + "' has model-local functions, which the QDQ export "
            "does not write yet (compile it with --quantize=int8 to a library instead)";
    return false;
  }
  ::onnx::GraphProto &graph = *model.mutable_graph();
  for (const ::onnx::TensorProto &t : graph.initializer())
    if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
      error = "--emit=onnx: '" + input + "' keeps its weights in external data files, which "
              "the QDQ export does not write yet";
      return false;
    }
  int64_t opset = 0;
  for (const ::onnx::OperatorSetIdProto &id : model.opset_import())
    if (id.domain().empty() || id.domain() == "ai.onnx")
      opset = id.version();
  if (opset < 13) {
    error = "--emit=onnx: '" + input + "' has opset " + std::to_string(opset) +
            "; the QDQ export needs 13 or later (per-channel DequantizeLinear)";
    return false;
  }
  std::map<int, const QdqNode *> byIndex;
  for (const QdqNode &q : nodes) {
    if (q.nodeIndex < 0 || q.nodeIndex >= graph.node_size()) {
      error = "--emit=onnx: node #" + std::to_string(q.nodeIndex) + " is not in the model";
      return false;
    }
    const std::string &type = graph.node(q.nodeIndex).op_type();
    if ((type != "Conv" && type != "MatMul" && type != "Gemm") ||
        graph.node(q.nodeIndex).input_size() < 2) {
      error = "--emit=onnx: node #" + std::to_string(q.nodeIndex) + " (" + type +
              ") is not the Conv, MatMul or Gemm kiln quantised";
      return false;
    }
    if (!byIndex.emplace(q.nodeIndex, &q).second) {
      error = "--emit=onnx: node #" + std::to_string(q.nodeIndex) +
              " became several ops that kiln quantises; the QDQ export cannot write them";
      return false;
    }
  }

  std::map<int, std::vector<const QdqInput *>> inputsOf;
  for (const QdqInput &q : inputs) {
    if (q.nodeIndex < 0 || q.nodeIndex >= graph.node_size() || q.input < 0 ||
        q.input >= graph.node(q.nodeIndex).input_size() ||
        graph.node(q.nodeIndex).input(q.input).empty()) {
      error = "--emit=onnx: input " + std::to_string(q.input) + " of node #" +
              std::to_string(q.nodeIndex) + " is not in the model";
      return false;
    }
    if (graph.node(q.nodeIndex).op_type() != q.opType) {
      error = "--emit=onnx: node #" + std::to_string(q.nodeIndex) + " is a " +
              graph.node(q.nodeIndex).op_type() + ", where kiln quantised a " + q.opType;
      return false;
    }
    inputsOf[q.nodeIndex].push_back(&q);
  }

  google::protobuf::RepeatedPtrField<::onnx::NodeProto> out;
  std::map<std::string, std::string> dequantized; // activation -> its DequantizeLinear
  std::set<std::string> replaced;                 // float weights no longer read here
  for (int i = 0; i < graph.node_size(); ++i) {
    ::onnx::NodeProto node = graph.node(i);
    // The quantised activations it reads, one pair per tensor (made before
    // its first reader).
    for (const QdqInput *q : inputsOf[i]) {
      std::string x = node.input(q->input);
      if (!dequantized.count(x)) {
        std::string s = x + "_kiln_scale", z = x + "_kiln_zero_point";
        addInitializer(graph, s, ::onnx::TensorProto::FLOAT, {}, &q->scale, sizeof(float));
        addInitializer(graph, z, ::onnx::TensorProto::UINT8, {}, &q->zeroPoint, 1);
        addNode(out, "QuantizeLinear", x + "_kiln_quantize", {x, s, z}, x + "_kiln_quantized");
        addNode(out, "DequantizeLinear", x + "_kiln_dequantize", {x + "_kiln_quantized", s, z},
                x + "_kiln_dequantized");
        dequantized[x] = x + "_kiln_dequantized";
      }
      node.set_input(q->input, dequantized[x]);
    }
    auto it = byIndex.find(i);
    if (it == byIndex.end()) {
      out.Add()->Swap(&node);
      continue;
    }
    const QdqNode &q = *it->second;
    std::string tag = "_kiln_" + std::to_string(i);
    // The weights.
    const std::string &w = node.input(1);
    replaced.insert(w);
    std::string wq = w + tag, ws = w + tag + "_scale", wd = w + tag + "_dequantized";
    addInitializer(graph, wq, ::onnx::TensorProto::INT8, q.weightShape, q.weights.data(),
                   q.weights.size());
    addInitializer(graph, ws, ::onnx::TensorProto::FLOAT,
                   {static_cast<int64_t>(q.weightScales.size())}, q.weightScales.data(),
                   q.weightScales.size() * sizeof(float));
    ::onnx::NodeProto *dq = addNode(out, "DequantizeLinear", w + tag + "_dequantize", {wq, ws}, wd);
    ::onnx::AttributeProto *axis = dq->add_attribute();
    axis->set_name("axis");
    axis->set_type(::onnx::AttributeProto::INT);
    axis->set_i(q.weightAxis);
    if (node.op_type() != "Gemm") {
      node.set_input(1, wd);
      out.Add()->Swap(&node);
      continue;
    }
    // Gemm: MatMul by the [K, N] weights (alpha is in their scales), + C.
    bool hasC = node.input_size() > 2 && !node.input(2).empty();
    std::string product = hasC ? node.output(0) + "_kiln_matmul" : node.output(0);
    addNode(out, "MatMul", node.name(), {node.input(0), wd}, product);
    if (hasC)
      addNode(out, "Add", node.name() + "_kiln_bias", {product, node.input(2)}, node.output(0));
  }
  graph.mutable_node()->Swap(&out);
  // The float weights that nothing reads any more.
  std::set<std::string> reads;
  collectReads(graph, reads);
  auto *inits = graph.mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i)
    if (replaced.count(inits->Get(i).name()) && !reads.count(inits->Get(i).name()))
      inits->DeleteSubrange(i, 1);
  auto *graphInputs = graph.mutable_input();
  for (int i = graphInputs->size() - 1; i >= 0; --i)
    if (replaced.count(graphInputs->Get(i).name()) && !reads.count(graphInputs->Get(i).name()))
      graphInputs->DeleteSubrange(i, 1);

  std::ofstream file(output, std::ios::binary | std::ios::trunc);
  if (!file || !model.SerializeToOstream(&file)) {
    error = "cannot write '" + output + "'";
    return false;
  }
  return true;
}

} // namespace kiln
