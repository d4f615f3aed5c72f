//===- ModelLoader.cpp - Read, check and shape-infer an ONNX model --------===//
//
// Parses the protobuf (streamed from the file, never read whole into a second
// buffer), checks the model header and every node against the ONNX schema of
// its opset, pins user-given input shapes, and runs ONNX's reference shape
// inference with data propagation so that the importer sees typed values.
//
// Everything that can throw (libonnx validation and inference) is caught
// here and turned into a diagnostic. ONNX's inference itself can crash on
// a model that says something impossible (LayerNormalization with an axis
// past the input's rank reads out of bounds in libonnx 1.12), so it runs
// in a forked child, which sends back only the types it
// inferred; if the child dies, the model is imported without them and
// kiln's own shape functions and verifiers say what is wrong; so it is
// if the child takes longer than a minute (libonnx can loop for good).
//
//===----------------------------------------------------------------------===//

#include "compiler/Importer/ImporterInternal.h"

#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;

namespace kiln::importer {

Location modelLoc(MLIRContext &context, const LoadedModel &model) {
  return FileLineColLoc::get(&context, model.path, 0, 0);
}

Location nodeLoc(MLIRContext &context, const LoadedModel &model,
                 const ::onnx::NodeProto &node, int index) {
  if (auto it = model.nodeIndex.find(&node); it != model.nodeIndex.end())
    index = it->second;
  Location file = FileLineColLoc::get(&context, model.path, index, 0);
  return NameLoc::get(StringAttr::get(&context, node.name()), file);
}

std::string qualifiedOpType(const ::onnx::NodeProto &node) {
  if (node.domain().empty() || node.domain() == "ai.onnx")
    return node.op_type();
  return node.domain() + "." + node.op_type();
}

namespace {

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// Parses the file into `proto` without an intermediate copy of its bytes.
LogicalResult parseFile(MLIRContext &context, LoadedModel &model) {
  Location loc = modelLoc(context, model);
  if (llvm::sys::fs::is_directory(model.path))
    return emitError(loc) << "is a directory, not an ONNX model file";
  uint64_t size = 0;
  if (!llvm::sys::fs::file_size(model.path, size) && size == 0)
    return emitError(loc) << "not a valid ONNX model: the file is empty";
  int fd = ::open(model.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return emitError(loc) << "cannot open the model: " << std::strerror(errno);
  bool ok;
  {
    google::protobuf::io::FileInputStream raw(fd);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT32_MAX);
    ok = model.proto.ParseFromCodedStream(&coded) &&
         coded.ConsumedEntireMessage();
  }
  ::close(fd);
  if (!ok)
    return emitError(loc)
           << "not a valid ONNX model: the file does not parse as an ONNX "
              "ModelProto (truncated, corrupt, or not a protobuf; files over "
              "2 GiB must keep their weights in external data)";
  return success();
}

LogicalResult checkHeader(MLIRContext &context, LoadedModel &model) {
  Location loc = modelLoc(context, model);
  ::onnx::ModelProto &m = model.proto;
  if (!m.has_graph())
    return emitError(loc) << "not a valid ONNX model: it has no graph";
  if (m.ir_version() <= 0)
    return emitError(loc) << "not a valid ONNX model: ir_version is "
                          << m.ir_version();
  for (const auto &op : m.opset_import()) {
    std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    model.opsets[domain] = static_cast<int>(op.version());
  }
  // IR versions before 3 had no opset_import: they mean opset 1.
  if (m.opset_import_size() == 0) {
    model.opsets[""] = 1;
    auto *opset = model.proto.add_opset_import();
    opset->set_domain("");
    opset->set_version(1);
  }
  // The training ops expand into default-domain ops of the dialect's form:
  // a model of that domain alone gets the newest default opset for them.
  if (!model.opsets.count("") && model.opsets.count(kTrainingDomain))
    model.opsets[""] = kLibonnxOpset;
  // A model without the default domain fails later, at its first node of
  // that domain (or at a node of an unsupported domain).
  auto it = model.opsets.find("");
  if (it != model.opsets.end() &&
      (it->second < kMinOpset || it->second > kMaxOpset))
    return emitError(loc) << "default-domain opset " << it->second
                          << " is not supported (kiln supports opsets "
                          << kMinOpset << " to " << kMaxOpset << ")";
  return success();
}

/// Checks every dim of a TypeProto (recursively through seq/optional).
LogicalResult checkTypeDims(MLIRContext &context, const LoadedModel &model,
                            const ::onnx::TypeProto &type,
                            const std::string &what) {
  if (type.has_sequence_type())
    return checkTypeDims(context, model, type.sequence_type().elem_type(),
                         what);
  if (type.has_optional_type())
    return checkTypeDims(context, model, type.optional_type().elem_type(),
                         what);
  if (type.has_map_type())
    return emitError(modelLoc(context, model))
           << what << " is an ONNX map, which kiln does not support";
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return success();
  for (const auto &dim : type.tensor_type().shape().dim()) {
    if (dim.has_dim_value() &&
        (dim.dim_value() < 0 || dim.dim_value() > kMaxDim))
      return emitError(modelLoc(context, model))
             << what << " has an invalid dim " << dim.dim_value();
  }
  return success();
}

LogicalResult checkTensorDims(MLIRContext &context, const LoadedModel &model,
                              const ::onnx::TensorProto &t, Location loc) {
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxDim)
      return emitError(loc) << "tensor '" << t.name() << "' has an invalid dim "
                            << d;
    if (d != 0 && count > kMaxDim / d)
      return emitError(loc) << "tensor '" << t.name()
                            << "' has too many elements";
    count *= d;
  }
  return success();
}

/// Validates every node of `graph` (and its subgraphs) against the ONNX
/// schema of the model's opset, so that the rest of the importer and ONNX's
/// shape inference only see well-formed nodes.
LogicalResult checkGraph(MLIRContext &context, const LoadedModel &model,
                         const ::onnx::GraphProto &graph) {
  for (const auto &vi : graph.input())
    if (failed(checkTypeDims(context, model, vi.type(),
                             "graph input '" + vi.name() + "'")))
      return failure();
  for (const auto &vi : graph.output())
    if (failed(checkTypeDims(context, model, vi.type(),
                             "graph output '" + vi.name() + "'")))
      return failure();
  for (const auto &vi : graph.value_info())
    if (failed(checkTypeDims(context, model, vi.type(),
                             "value '" + vi.name() + "'")))
      return failure();
  for (const auto &t : graph.initializer())
    if (failed(checkTensorDims(context, model, t, modelLoc(context, model))))
      return failure();

  for (int i = 0, e = graph.node_size(); i < e; ++i) {
    const ::onnx::NodeProto &node = graph.node(i);
    Location loc = nodeLoc(context, model, node, i);
    std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    auto opset = model.opsets.find(domain);
    if (opset == model.opsets.end())
      return emitError(loc) << qualifiedOpType(node) << ": the model imports no "
                            << "opset for domain '" << domain << "'";
    bool training = isTrainingDomain(domain) &&
                    llvm::is_contained(kTrainingOps, node.op_type());
    if (!isDefaultDomain(domain) && !training)
      return emitError(loc)
             << qualifiedOpType(node) << ": ops of domain '" << domain
             << "' are not supported (only the default ONNX domain is, and "
                "of '"
             << kTrainingDomain << "' Adagrad, Adam, Momentum and Gradient)";
    const ::onnx::OpSchema *schema = ::onnx::OpSchemaRegistry::Schema(
        node.op_type(), opset->second, training ? kTrainingDomain : "");
    if (!schema)
      return emitError(loc) << qualifiedOpType(node) << ": unknown op '"
                            << node.op_type() << "' in opset " << opset->second
                            << (training ? " of the training domain"
                                         : " of the default domain");
    try {
      schema->Verify(node);
    } catch (const std::exception &e) {
      // ONNX's messages start with the node name already; keep the reason.
      return emitError(loc) << node.op_type() << "-" << schema->since_version()
                            << ": " << e.what();
    }
    for (const auto &attr : node.attribute()) {
      // ONNX's own shape inference divides by these: check them first.
      const std::string &an = attr.name();
      if ((an == "strides" || an == "dilations" || an == "kernel_shape") &&
          attr.type() == ::onnx::AttributeProto::INTS)
        for (int64_t v : attr.ints())
          if (v < 1)
            return emitError(loc) << node.op_type() << ": attribute '" << an
                                  << "' must be >= 1, got " << v;
      if ((an == "group" || an == "blocksize") &&
          attr.type() == ::onnx::AttributeProto::INT && attr.i() < 1)
        return emitError(loc) << node.op_type() << ": attribute '" << an
                              << "' must be >= 1, got " << attr.i();
      if (attr.has_t() &&
          failed(checkTensorDims(context, model, attr.t(), loc)))
        return failure();
      if (attr.has_g() && failed(checkGraph(context, model, attr.g())))
        return failure();
      for (const auto &g : attr.graphs())
        if (failed(checkGraph(context, model, g)))
          return failure();
    }
  }
  return success();
}

/// Applies `--input-shape` to the graph's declared inputs.
LogicalResult pinInputShapes(MLIRContext &context, LoadedModel &model,
                             const ImportOptions &options) {
  Location loc = modelLoc(context, model);
  ::onnx::GraphProto *graph = model.proto.mutable_graph();
  std::set<std::string> seen;
  for (const InputShape &pin : options.inputShapes) {
    if (!seen.insert(pin.name).second)
      return emitError(loc) << "--input-shape: input '" << pin.name
                            << "' is given more than once";
    ::onnx::ValueInfoProto *input = nullptr;
    for (auto &vi : *graph->mutable_input())
      if (vi.name() == pin.name)
        input = &vi;
    if (!input) {
      std::string names;
      for (const auto &vi : graph->input())
        names += (names.empty() ? "'" : ", '") + vi.name() + "'";
      return emitError(loc) << "--input-shape: the model has no input named '"
                            << pin.name << "' (its inputs: " << names << ")";
    }
    if (!input->type().has_tensor_type())
      return emitError(loc) << "--input-shape: input '" << pin.name
                            << "' is not a tensor";
    auto *tensorType = input->mutable_type()->mutable_tensor_type();
    auto *shape = tensorType->mutable_shape();
    if (tensorType->has_shape() && shape->dim_size() != 0 &&
        shape->dim_size() != static_cast<int>(pin.dims.size()))
      return emitError(loc) << "--input-shape: input '" << pin.name
                            << "' has rank " << shape->dim_size()
                            << " but the given shape has rank "
                            << pin.dims.size();
    while (shape->dim_size() < static_cast<int>(pin.dims.size()))
      shape->add_dim();
    for (size_t i = 0; i < pin.dims.size(); ++i) {
      auto *dim = shape->mutable_dim(static_cast<int>(i));
      if (pin.dims[i] < 0)
        continue;
      if (dim->has_dim_value() && dim->dim_value() != pin.dims[i])
        return emitError(loc) << "--input-shape: dim " << i << " of input '"
                              << pin.name << "' is fixed to "
                              << dim->dim_value() << " by the model, not "
                              << pin.dims[i];
      dim->set_dim_value(pin.dims[i]);
    }
  }
  return success();
}

/// Pins the symbolic leading dim of graph inputs to 1 and records it: kiln
/// runs a model with a dynamic batch one item at a time. All such dims must
/// be one dim (the same name, or unnamed). With options.symbolicBatch they
/// stay symbolic, all named as the named ones are ("batch" when none is).
/// Leading dims of different names (a length-first sequence [seq, batch,
/// ...] beside its lengths [batch]) are no batch: they stay symbolic dims
/// of their own.
void pinDynamicBatch(LoadedModel &model, const ImportOptions &options) {
  if (!options.dynamicBatch)
    return;
  ::onnx::GraphProto *graph = model.proto.mutable_graph();
  std::set<std::string> initializers;
  for (const auto &t : graph->initializer())
    initializers.insert(t.name());
  std::string batchName;
  std::vector<std::pair<std::string, ::onnx::TensorShapeProto_Dimension *>> leading;
  for (auto &vi : *graph->mutable_input()) {
    if (initializers.count(vi.name()) || !vi.type().has_tensor_type() ||
        !vi.type().tensor_type().has_shape() ||
        vi.type().tensor_type().shape().dim_size() == 0)
      continue;
    auto *dim = vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
    if (dim->has_dim_value())
      continue;
    std::string name = dim->has_dim_param() ? dim->dim_param() : "";
    if (!name.empty() && !batchName.empty() && name != batchName)
      return;
    if (batchName.empty())
      batchName = name;
    leading.push_back({vi.name(), dim});
  }
  if (options.symbolicBatch) {
    if (!leading.empty())
      model.symbolicBatch = batchName.empty() ? "batch" : batchName;
    for (auto &entry : leading)
      entry.second->set_dim_param(model.symbolicBatch);
    return;
  }
  for (auto &[input, dim] : leading) {
    model.dynamicBatchInputs[input] = batchName.empty() ? "batch" : batchName;
    dim->clear_dim_param();
    dim->set_dim_value(1);
  }
  // Outputs declared [batchName, ...] must carry the batch (checked by
  // kiln-dynamic-batch).
  if (!batchName.empty())
    for (const auto &vi : graph->output())
      if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape() &&
          vi.type().tensor_type().shape().dim_size() > 0 &&
          vi.type().tensor_type().shape().dim(0).dim_param() == batchName)
        model.dynamicBatchOutputs.insert(vi.name());
}

/// ONNX's inference on `proto`: strictly first, to keep ONNX's reason for
/// the first node it cannot infer (`strictError`); then, if that failed,
/// leniently, so that every other node still gets its types (kiln reports
/// a node only if it ends up untyped). False, with `error`, if even the
/// lenient run fails.
bool inferShapes(::onnx::ModelProto &proto, std::string &strictError, std::string &error) {
  ::onnx::ShapeInferenceOptions opts;
  opts.check_type = false;
  opts.enable_data_propagation = true;
  opts.error_mode = 1;
  try {
    ::onnx::shape_inference::InferShapes(proto, ::onnx::OpSchemaRegistry::Instance(), opts);
    return true;
  } catch (const std::exception &e) {
    strictError = e.what();
  }
  opts.error_mode = 0;
  try {
    ::onnx::shape_inference::InferShapes(proto, ::onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
  return true;
}

void stripTensorData(::onnx::TensorProto &t) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_uint64_data();
  t.clear_string_data();
}

/// Drops every tensor's values from `graph` (and the graphs inside it):
/// what is left is the structure and the types, small to send back.
void stripData(::onnx::GraphProto &graph) {
  for (::onnx::TensorProto &t : *graph.mutable_initializer())
    stripTensorData(t);
  graph.clear_sparse_initializer();
  for (::onnx::NodeProto &node : *graph.mutable_node())
    for (::onnx::AttributeProto &a : *node.mutable_attribute()) {
      if (a.has_t())
        stripTensorData(*a.mutable_t());
      for (::onnx::TensorProto &t : *a.mutable_tensors())
        stripTensorData(t);
      if (a.has_g())
        stripData(*a.mutable_g());
      for (::onnx::GraphProto &g : *a.mutable_graphs())
        stripData(g);
    }
}

/// What ONNX's inference changes: each graph's value_info, input and
/// output types (a Loop body's inputs get theirs from the Loop), nested
/// graphs included, from `from` (the same graph, inferred elsewhere) into
/// `to`. False if the two differ in structure.
bool copyInferredTypes(const ::onnx::GraphProto &from, ::onnx::GraphProto &to) {
  if (from.node_size() != to.node_size() || from.output_size() != to.output_size() ||
      from.input_size() != to.input_size())
    return false;
  *to.mutable_value_info() = from.value_info();
  *to.mutable_input() = from.input();
  *to.mutable_output() = from.output();
  for (int n = 0; n < from.node_size(); ++n) {
    const ::onnx::NodeProto &fromNode = from.node(n);
    ::onnx::NodeProto &toNode = *to.mutable_node(n);
    if (fromNode.attribute_size() != toNode.attribute_size())
      return false;
    for (int a = 0; a < fromNode.attribute_size(); ++a) {
      const ::onnx::AttributeProto &fa = fromNode.attribute(a);
      ::onnx::AttributeProto &ta = *toNode.mutable_attribute(a);
      if (fa.has_g() != ta.has_g() || fa.graphs_size() != ta.graphs_size())
        return false;
      if (fa.has_g() && !copyInferredTypes(fa.g(), *ta.mutable_g()))
        return false;
      for (int g = 0; g < fa.graphs_size(); ++g)
        if (!copyInferredTypes(fa.graphs(g), *ta.mutable_graphs(g)))
          return false;
    }
  }
  return true;
}

bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= size_t(n);
  }
  return true;
}

bool writeString(int fd, const std::string &s) {
  uint64_t size = s.size();
  return writeAll(fd, &size, sizeof size) && writeAll(fd, s.data(), s.size());
}

/// The next length-prefixed string of `message` from `at`.
bool readString(const std::string &message, size_t &at, std::string &out) {
  uint64_t size;
  if (message.size() - at < sizeof size)
    return false;
  std::memcpy(&size, message.data() + at, sizeof size);
  at += sizeof size;
  if (message.size() - at < size)
    return false;
  out = message.substr(at, size);
  at += size;
  return true;
}

/// How long ONNX's inference may take (a Scan claiming 2^31 scan inputs
/// keeps libonnx busy for good) before the model goes on without it.
constexpr std::chrono::seconds kInferenceLimit{60};

LogicalResult runOnnxShapeInference(MLIRContext &context, LoadedModel &model) {
  std::string strictError, error;
  // Without a pipe or a child: in this process, unprotected.
  auto inProcess = [&]() -> LogicalResult {
    if (!inferShapes(model.proto, model.inferenceError, error))
      return emitError(modelLoc(context, model)) << "ONNX shape inference failed: " << error;
    return success();
  };
  int fds[2];
  if (::pipe(fds) != 0)
    return inProcess();
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return inProcess();
  }
  if (child == 0) {
    // The child: infer, then send back the status, the errors and the
    // graph without its tensors' values.
    ::close(fds[0]);
    // A crash here is the parent's to report: no LLVM stack dump.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
      ::signal(sig, SIG_DFL);
    bool ok = inferShapes(model.proto, strictError, error);
    stripData(*model.proto.mutable_graph());
    std::string types;
    bool sent = model.proto.SerializeToString(&types) && writeAll(fds[1], ok ? "1" : "0", 1) &&
                writeString(fds[1], strictError) && writeString(fds[1], error) &&
                writeString(fds[1], types);
    ::_exit(sent ? 0 : 1);
  }
  ::close(fds[1]);
  std::string message;
  bool late = false;
  char buffer[1 << 16];
  auto deadline = std::chrono::steady_clock::now() + kInferenceLimit;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    struct pollfd ready = {fds[0], POLLIN, 0};
    int polled = left.count() > 0 ? ::poll(&ready, 1, int(left.count())) : 0;
    if (polled < 0 && errno == EINTR)
      continue;
    if (polled == 0) {
      late = true;
      ::kill(child, SIGKILL);
      break;
    }
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    message.append(buffer, size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (late) {
    model.inferenceError = "ONNX's shape inference did not finish in " +
                           std::to_string(kInferenceLimit.count()) + " s";
    return success();
  }
  size_t at = 1;
  std::string types;
  ::onnx::ModelProto inferred;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || message.empty() ||
      !readString(message, at, strictError) || !readString(message, at, error) ||
      !readString(message, at, types) || !inferred.ParseFromString(types)) {
    // The child crashed (or could not answer): no ONNX types.
    model.inferenceError = WIFSIGNALED(status)
                               ? "ONNX's shape inference crashed on this model (signal " +
                                     std::to_string(WTERMSIG(status)) + ")"
                               : "ONNX's shape inference gave no answer";
    return success();
  }
  model.inferenceError = strictError;
  if (message[0] != '1')
    return emitError(modelLoc(context, model)) << "ONNX shape inference failed: " << error;
  if (!copyInferredTypes(inferred.graph(), *model.proto.mutable_graph()))
    model.inferenceError = "ONNX's shape inference changed the graph's structure";
  return success();
}

} // namespace

LogicalResult readModelProto(MLIRContext &context, StringRef path, LoadedModel &model) {
  model.path = path.str();
  if (!llvm::sys::fs::exists(path))
    return emitError(modelLoc(context, model)) << "cannot open the model: no such file";
  return parseFile(context, model);
}

LogicalResult loadModel(MLIRContext &context, StringRef path,
                        const ImportOptions &options, LoadedModel &model) {
  model.path = path.str();
  model.eraseInferredShapes = options.eraseInferredShapes;
  SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real)) {
    model.dir = llvm::sys::path::parent_path(real).str();
  } else {
    return emitError(modelLoc(context, model))
           << "cannot open the model: no such file";
  }
  if (failed(parseFile(context, model)) || failed(checkHeader(context, model)) ||
      failed(inlineLocalFunctions(context, model)) ||
      failed(rewriteNewerOpsets(context, model)) ||
      failed(checkGraph(context, model, model.proto.graph())) ||
      failed(pinInputShapes(context, model, options)))
    return failure();
  pinDynamicBatch(model, options);
  if (options.onnxShapeInference &&
      failed(runOnnxShapeInference(context, model)))
    return failure();
  return success();
}

} // namespace kiln::importer
