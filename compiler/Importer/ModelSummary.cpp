//===- ModelSummary.cpp - what kiln check reports about a model -----------===//
//
// Reads the ModelProto alone (no validation, no shape inference, no
// import), so that `kiln check` can describe models kiln cannot compile:
// the op types per domain with their counts, the graph's inputs and
// outputs as declared, and the parameters held by initializers.
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/ImporterInternal.h"

#include <set>

using namespace mlir;

namespace kiln {
namespace {

void summarizeValue(const ::onnx::ValueInfoProto &vi, ValueSummary &out) {
  out.name = vi.name();
  const ::onnx::TypeProto &type = vi.type();
  if (type.has_tensor_type()) {
    const auto &t = type.tensor_type();
    out.dtype = importer::dataTypeName(t.elem_type());
    if (t.has_shape())
      for (const auto &d : t.shape().dim())
        out.dims.push_back(d.has_dim_value()   ? std::to_string(d.dim_value())
                           : d.has_dim_param() ? d.dim_param()
                                               : std::string("?"));
    else
      out.dims.push_back("...");
  } else if (type.has_sequence_type()) {
    out.dtype = "sequence";
  } else if (type.has_optional_type()) {
    out.dtype = "optional";
  } else {
    out.dtype = "unknown";
  }
}

/// Bytes of one element of an ONNX data type (0 when not fixed-size).
int64_t elementBytes(int32_t dt) {
  switch (dt) {
  case ::onnx::TensorProto::BOOL:
  case ::onnx::TensorProto::INT8:
  case ::onnx::TensorProto::UINT8:
    return 1;
  case ::onnx::TensorProto::INT16:
  case ::onnx::TensorProto::UINT16:
  case ::onnx::TensorProto::FLOAT16:
  case ::onnx::TensorProto::BFLOAT16:
    return 2;
  case ::onnx::TensorProto::INT32:
  case ::onnx::TensorProto::UINT32:
  case ::onnx::TensorProto::FLOAT:
    return 4;
  case ::onnx::TensorProto::INT64:
  case ::onnx::TensorProto::UINT64:
  case ::onnx::TensorProto::DOUBLE:
  case ::onnx::TensorProto::COMPLEX64:
    return 8;
  case ::onnx::TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

void countOps(const ::onnx::GraphProto &graph, const std::map<std::string, int> &opsets,
              std::vector<OpSummary> &ops, std::vector<size_t> *nodeOps) {
  for (const auto &node : graph.node()) {
    std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    auto it = llvm::find_if(ops, [&](const OpSummary &o) {
      return o.domain == domain && o.opType == node.op_type();
    });
    if (it == ops.end()) {
      OpSummary o;
      o.domain = domain;
      o.opType = node.op_type();
      auto v = opsets.find(domain);
      o.opset = v == opsets.end() ? 0 : v->second;
      ops.push_back(o);
      it = ops.end() - 1;
    }
    ++it->count;
    if (nodeOps)
      nodeOps->push_back(it - ops.begin());
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        countOps(attr.g(), opsets, ops, nullptr);
      for (const auto &g : attr.graphs())
        countOps(g, opsets, ops, nullptr);
    }
  }
}

} // namespace

LogicalResult summarizeOnnxModel(MLIRContext &context, llvm::StringRef path,
                                 ModelSummary &summary) {
  importer::LoadedModel model;
  if (failed(importer::readModelProto(context, path, model)))
    return failure();
  const ::onnx::ModelProto &m = model.proto;
  if (!m.has_graph())
    return emitError(importer::modelLoc(context, model))
           << "not a valid ONNX model: it has no graph";
  summary.producer = m.producer_name();
  if (!m.producer_version().empty())
    summary.producer += " " + m.producer_version();
  summary.irVersion = m.ir_version();
  std::map<std::string, int> opsets;
  for (const auto &op : m.opset_import())
    opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = static_cast<int>(op.version());
  if (m.opset_import_size() == 0)
    opsets[""] = 1;
  const ::onnx::GraphProto &g = m.graph();
  std::set<std::string> initialized;
  for (const auto &t : g.initializer()) {
    initialized.insert(t.name());
    int64_t n = 1;
    for (int64_t d : t.dims())
      n = (d < 0 || n > (int64_t(1) << 40)) ? 0 : n * d;
    ++summary.initializers;
    summary.parameters += n;
    summary.parameterBytes += n * elementBytes(t.data_type());
  }
  for (const auto &vi : g.input()) {
    if (initialized.count(vi.name()))
      continue;
    summary.inputs.emplace_back();
    summarizeValue(vi, summary.inputs.back());
  }
  for (const auto &vi : g.output()) {
    summary.outputs.emplace_back();
    summarizeValue(vi, summary.outputs.back());
  }
  countOps(g, opsets, summary.ops, &summary.nodeOps);
  return success();
}

} // namespace kiln
