//===- ModelInfo.cpp - The model's interface, and its C header -------------===//

#include "compiler/Target/Target.h"
#include "dialects/Onnx/IR/DataTypes.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

using namespace mlir;

namespace kiln {

namespace {
int64_t elementBytes(int32_t dtype) {
  switch (dtype) {
  case 1: case 6: case 12: return 4;          // float, int32, uint32
  case 2: case 3: case 9: return 1;           // uint8, int8, bool
  case 4: case 5: case 10: case 16: return 2; // uint16, int16, f16, bf16
  case 7: case 11: case 13: return 8;         // int64, double, uint64
  case 8: return 8; // string: a pointer (string tensors need a 64-bit host)
  default: return 0;
  }
}

const char *cTypeOf(int32_t dtype) {
  switch (dtype) {
  case 1: return "float";
  case 11: return "double";
  case 2: case 9: return "uint8_t";
  case 3: return "int8_t";
  case 4: case 10: case 16: return "uint16_t";
  case 5: return "int16_t";
  case 6: return "int32_t";
  case 7: return "int64_t";
  case 12: return "uint32_t";
  case 13: return "uint64_t";
  case 8: return "char *"; // NUL-terminated UTF-8
  default: return "void";
  }
}

const char *dtypeName(int32_t dtype) {
  switch (dtype) {
  case 1: return "float32";
  case 2: return "uint8";
  case 3: return "int8";
  case 4: return "uint16";
  case 5: return "int16";
  case 6: return "int32";
  case 7: return "int64";
  case 8: return "string";
  case 9: return "bool";
  case 10: return "float16";
  case 11: return "float64";
  case 12: return "uint32";
  case 13: return "uint64";
  case 16: return "bfloat16";
  default: return "unknown";
  }
}

std::string quoted(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}
} // namespace

int64_t TensorInfo::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d < 0 ? 1 : d;
  return n;
}

int64_t TensorInfo::numSymbolic(int64_t k) const { return llvm::count(dims, -1 - k); }

bool TensorInfo::hasSymbolic() const {
  return llvm::any_of(dims, [](int64_t d) { return d < 0; });
}

int64_t TensorInfo::numBytes() const { return numElements() * elementBytes(dtype); }

std::string makeIdentifier(StringRef text) {
  std::string id;
  for (char c : text)
    id += (isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (id.empty() || isdigit(static_cast<unsigned char>(id[0])))
    id = "model_" + id;
  return id;
}

LogicalResult readModelInfo(ModuleOp module, ModelInfo &info) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  if (!func)
    return module.emitError("the module has no @main function");
  // The TensorInfo dim index of kiln-dim-symbols' dim id `id` (an
  // expression, a floor or a product, with what it is made of before it
  // in info.dimExprs); -1 for none.
  std::function<int64_t(int64_t)> dimIndex = [&](int64_t id) -> int64_t {
    int64_t numSymbols = info.symbolicDims.size();
    auto names = func->getAttrOfType<ArrayAttr>("kiln.symbol_names");
    if (id < 0 || !names)
      return -1;
    if (id < numSymbols)
      return id;
    using Kind = ModelInfo::DimExpression::Kind;
    ModelInfo::DimExpression e;
    e.coefficients.assign(numSymbols + 1, 0);
    if (SmallVector<int64_t> f = onnx::dimFloor(func, id); !f.empty()) {
      int64_t x = dimIndex(f[0]);
      if (x < 0)
        return -1;
      e.kind = Kind::Floor;
      e.args = {x, f[1], f[2]};
    } else if (SmallVector<int64_t> p = onnx::dimProduct(func, id); !p.empty()) {
      int64_t x = dimIndex(p[1]), y = dimIndex(p[2]);
      if (x < 0 || y < 0)
        return -1;
      e.kind = Kind::Product;
      e.args = {p[0], x, y};
    } else {
      SmallVector<int64_t> expr = onnx::dimExpression(func, id);
      if (expr.empty())
        return -1;
      e.coefficients.assign(expr.begin(), expr.end());
    }
    e.text = e.kind == Kind::Sum
                 ? onnx::dimExprString(e.coefficients, names.getValue())
                 : onnx::dimIdString(func, id);
    auto it = llvm::find(info.dimExprs, e);
    if (it == info.dimExprs.end())
      it = info.dimExprs.insert(it, std::move(e));
    return numSymbols + (it - info.dimExprs.begin());
  };
  auto describe = [&](Type type, DictionaryAttr attrs, StringRef what,
                      unsigned index, TensorInfo &t) -> LogicalResult {
    if (auto name = attrs ? attrs.getAs<StringAttr>("onnx.name") : StringAttr())
      t.name = name.str();
    else
      t.name = (what + std::to_string(index)).str();
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || (!tensor.hasStaticShape() && !info.symbolic())) {
      std::string s;
      llvm::raw_string_ostream os(s);
      type.print(os);
      if (!isa<TensorType>(type))
        return func.emitError() << "graph " << what << " '" << t.name << "' has type " << s
                                << "; only tensors are supported at the graph's boundary "
                                   "(not sequences or optionals)";
      return func.emitError() << "graph " << what << " '" << t.name
                              << "' has type " << s
                              << "; only static shapes are supported, apart from a "
                                 "leading batch dim (pin its dims with --input-shape)";
    }
    t.dtype = static_cast<int32_t>(onnx::dataTypeForElementType(tensor.getElementType()));
    if (elementBytes(t.dtype) == 0)
      return func.emitError() << "graph " << what << " '" << t.name
                              << "' has an element type that is not supported yet";
    // Symbolic dim k as -1-k: named by kiln.dim_names with several. An
    // output's dims are what kiln-dim-symbols recorded: a symbolic dim, or
    // an expression of them (-1-(n + j) for info.dimExprs[j]).
    auto dimNames = attrs ? attrs.getAs<ArrayAttr>("kiln.dim_names") : ArrayAttr();
    ArrayRef<int64_t> ids;
    auto resultIds = func->getAttrOfType<ArrayAttr>("kiln.result_dim_symbols");
    if (what == "output" && resultIds && index < resultIds.size())
      if (auto a = dyn_cast<DenseI64ArrayAttr>(resultIds[index]))
        if (a.size() == tensor.getRank())
          ids = a.asArrayRef();
    int64_t numSymbols = info.symbolicDims.size();
    for (auto [j, d] : llvm::enumerate(tensor.getShape())) {
      if (!ShapedType::isDynamic(d)) {
        t.dims.push_back(d);
        continue;
      }
      if (!ids.empty() && ids[j] >= 0 && ids[j] < numSymbols) {
        t.dims.push_back(-1 - ids[j]);
        continue;
      }
      if (!ids.empty() && ids[j] >= numSymbols)
        if (int64_t k = dimIndex(ids[j]); k >= 0) {
          t.dims.push_back(-1 - k);
          continue;
        }
      int64_t k = 0;
      if (dimNames || info.symbolicDims.size() > 1) {
        k = -1;
        if (dimNames && dimNames.size() == size_t(tensor.getRank()))
          if (auto name = dyn_cast<StringAttr>(dimNames[j]))
            for (auto [i, sd] : llvm::enumerate(info.symbolicDims))
              if (sd.name == name.getValue())
                k = i;
        if (k < 0) {
          // Named at the op that makes it, when there is one.
          std::string dims;
          for (auto [i, sd] : llvm::enumerate(info.symbolicDims))
            dims += (i ? ", '" : "'") + sd.name + "'";
          Value v;
          if (what == "output")
            v = func.getBody().front().getTerminator()->getOperand(index);
          Operation *def = v ? v.getDefiningOp() : nullptr;
          InFlightDiagnostic diag = def ? def->emitError() : func.emitError();
          if (def && def->getDialect() && def->getDialect()->getNamespace() == "onnx")
            diag << onnx::opLabel(def) << ": result #" << cast<OpResult>(v).getResultNumber()
                 << " is ";
          diag << "graph " << what << " '" << t.name << "', whose dim " << j;
          return diag << " is neither one of the model's dynamic dims (" << dims
                      << ") nor a sum of them with whole coefficients (it is a product of "
                         "more dims, or a rounded fraction), which kiln does not compile (pin "
                         "them with --input-shape)";
        }
      }
      t.dims.push_back(-1 - k);
    }
    if (auto dim = attrs ? attrs.getAs<StringAttr>("kiln.dynamic_dim") : StringAttr()) {
      t.dynamicBatch = true;
      info.dynamicDim = dim.str();
    }
    return success();
  };
  // The symbolic dims, in order (kiln-dim-symbols, run before this).
  auto batch = func->getAttrOfType<StringAttr>("kiln.batch_dim");
  if (auto names = func->getAttrOfType<ArrayAttr>("kiln.symbol_names"))
    for (StringRef n : names.getAsValueRange<StringAttr>()) {
      info.symbolicDims.push_back({n.str()});
      info.symbolicDims.back().batch = batch && batch.getValue() == n;
    }
  FunctionType type = func.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    TensorInfo t;
    if (failed(describe(type.getInput(i), func.getArgAttrDict(i), "input", i, t)))
      return failure();
    info.inputs.push_back(std::move(t));
  }
  for (unsigned i = 0; i < type.getNumResults(); ++i) {
    TensorInfo t;
    if (failed(describe(type.getResult(i), func.getResultAttrDict(i), "output", i, t)))
      return failure();
    info.outputs.push_back(std::move(t));
  }
  return success();
}

void readWorkspace(ModuleOp module, ModelInfo &info) {
  Operation *main = module.lookupSymbol("main");
  if (!main)
    return;
  if (auto size = main->getAttrOfType<IntegerAttr>("kiln.workspace_size"))
    info.workspaceSize = size.getInt();
  if (auto m = main->getAttrOfType<DenseI64ArrayAttr>("kiln.symbolic_max"))
    for (auto [k, max] : llvm::enumerate(m.asArrayRef()))
      if (k < info.symbolicDims.size())
        info.symbolicDims[k].max = max;
  if (auto m = main->getAttrOfType<DenseI64ArrayAttr>("kiln.symbolic_min"))
    for (int64_t k : m.asArrayRef())
      if (k >= 0 && size_t(k) < info.symbolicDims.size())
        info.symbolicDims[k].min = 1;
  if (auto list = main->getAttrOfType<ArrayAttr>("kiln.dim_constraints")) {
    auto names = main->getAttrOfType<ArrayAttr>("kiln.symbol_names");
    for (Attribute a : list) {
      auto c = dyn_cast<DenseI64ArrayAttr>(a);
      if (!c || !names || size_t(c.size()) != names.size() + 1)
        continue;
      // One dim's: a smallest value (c0 + c dim >= 0, c > 0).
      ArrayRef<int64_t> e = c.asArrayRef();
      if (llvm::count_if(e.drop_front(), [](int64_t x) { return x != 0; }) == 1) {
        size_t k = llvm::find_if(e.drop_front(), [](int64_t x) { return x != 0; }) - e.begin() - 1;
        if (e[k + 1] > 0 && k < info.symbolicDims.size()) {
          int64_t min = e[0] >= 0 ? 0 : (-e[0] + e[k + 1] - 1) / e[k + 1];
          info.symbolicDims[k].min = std::max(info.symbolicDims[k].min, min);
          continue;
        }
      }
      info.dimConstraints.push_back(
          {std::vector<int64_t>(e.begin(), e.end()),
           onnx::dimExprString(e, names.getValue()) + " >= 0"});
    }
  }
  if (auto m = main->getAttrOfType<IntegerAttr>("kiln.symbolic_limit"))
    info.symbolicLimit = m.getInt();
  if (auto a = main->getAttrOfType<IntegerAttr>("kiln.workspace_alignment"))
    info.workspaceAlignment = a.getInt();
}

std::string generateHeader(const ModelInfo &info) {
  std::string s;
  llvm::raw_string_ostream os(s);
  const std::string &n = info.name;
  // The name's case is kept: `net` and `NET` are different models.
  std::string guard = "KILN_MODEL_" + n + "_H_";
  os << "/* " << n << ".h - generated by kiln; do not edit.\n"
     << " *\n"
     << " * Run the model with " << n << "_run() (see docs/abi.md in kiln).\n"
     << " * Buffers are dense, row-major, aligned to their element size; the\n"
     << " * workspace is " << n << "_WORKSPACE_SIZE bytes aligned to "
     << n << "_WORKSPACE_ALIGNMENT.\n */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stddef.h>\n#include <stdint.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  os << R"(#ifndef KILN_STATUS_DEFINED
#define KILN_STATUS_DEFINED
typedef enum kiln_status {
  KILN_STATUS_OK = 0,
  KILN_STATUS_INVALID_ARGUMENT = 1,
  KILN_STATUS_SHAPE_MISMATCH = 2,
  KILN_STATUS_OUT_OF_MEMORY = 3,
  KILN_STATUS_UNSUPPORTED = 4,
  KILN_STATUS_INTERNAL = 5
} kiln_status;
#endif

#ifndef KILN_MODEL_DESC_DEFINED
#define KILN_MODEL_DESC_DEFINED
typedef struct kiln_tensor_desc {
  const char *name;
  int32_t dtype;
  int32_t rank;
  const int64_t *dims;
  int64_t num_elements;
  int64_t num_bytes;
} kiln_tensor_desc;

typedef struct kiln_model_desc {
  uint32_t abi_version;
  const char *name;
  int32_t num_inputs;
  int32_t num_outputs;
  const kiln_tensor_desc *inputs;
  const kiln_tensor_desc *outputs;
  int64_t workspace_size;
  int64_t workspace_alignment;
  int (*run)(const void *const *inputs, void *const *outputs, void *workspace);
  int32_t num_dynamic_dims;
  const char *const *dynamic_dim_names;
  int (*run_dims)(const int64_t *dims, const void *const *inputs,
                  void *const *outputs, void *workspace);
  int64_t (*workspace_size_for)(const int64_t *dims);
  int32_t num_dim_exprs;
  const int64_t *dim_exprs;
  const char *const *dim_expr_names;
  const int64_t *dim_expr_ops;
} kiln_model_desc;
#endif

)";
  bool dynamic = !info.dynamicDim.empty();
  bool symbolic = info.symbolic();
  int numDynamic = info.numDynamicDims();
  // "'seq'" or "'src', 'tgt'"; "seq up to 128, ..." when every dim has a max.
  std::string quotedNames, maxima;
  bool allMax = symbolic;
  for (auto [k, d] : llvm::enumerate(info.symbolicDims)) {
    quotedNames += (k ? ", '" : "'") + d.name + "'";
    maxima += (k ? ", " : "") + d.name + " up to " + std::to_string(d.max);
    allMax &= d.max > 0;
  }
  auto isString = [](const TensorInfo &t) { return t.dtype == 8; };
  if (llvm::any_of(info.inputs, isString) || llvm::any_of(info.outputs, isString))
    os << "/* String tensors (dtype 8): one char * per element, to NUL-terminated\n"
       << "   UTF-8 (NULL reads as \"\"). Input strings are read during the call\n"
       << "   only; each string of a string output is a malloc'd copy the caller\n"
       << "   frees with free() after a run that returned 0. Link kiln_runtime. */\n";
  os << "#define " << n << "_NUM_INPUTS " << info.inputs.size() << "\n"
     << "#define " << n << "_NUM_OUTPUTS " << info.outputs.size() << "\n"
     << "#define " << n << "_WORKSPACE_SIZE " << info.workspaceSize
     << (allMax && info.workspaceSize >= 0
             ? " /* for " + maxima + " */"
         : info.workspaceSize < 0
             ? " /* depends on the dynamic dims: see " + n + "_workspace_size() */"
                    : std::string())
     << "\n"
     << "#define " << n << "_WORKSPACE_ALIGNMENT " << info.workspaceAlignment
     << "\n\n";
  os << "/* Dynamic dims (-1-k for dynamic dim k in the DIMS below): their values\n   are "
        "passed to "
     << n << "_run_dims(). */\n"
     << "#define " << n << "_NUM_DYNAMIC_DIMS " << numDynamic << "\n";
  if (dynamic)
    os << "#define " << n << "_DYNAMIC_DIM_0_NAME " << quoted(info.dynamicDim) << "\n";
  for (auto [k, d] : llvm::enumerate(info.symbolicDims)) {
    os << "#define " << n << "_DYNAMIC_DIM_" << info.symbolicIndex(k) << "_NAME "
       << quoted(d.name) << "\n";
    if (d.max)
      os << "#define " << n << "_DYNAMIC_DIM_" << info.symbolicIndex(k) << "_MAX " << d.max
         << " /* --max-shape: larger values are refused */\n";
  }
  using Kind = ModelInfo::DimExpression::Kind;
  if (!info.dimExprs.empty())
    os << "\n/* Output dims computed from the dynamic dims: expression j is -1-("
       << n << "_NUM_DYNAMIC_DIMS + j)\n   in the DIMS below. A sum (past + seq) is "
          "c[0] + c[1] dims[0] + c[2] dims[1] + ...\n   with c its coefficients (_DIM_EXPR_j); a "
          "conv's or pool's output size\n   floor((d(x) + a) / s) has _DIM_EXPR_j_FLOOR {x, a, "
          "s}, and dims merged by\n   a Reshape c d(x) d(y) _DIM_EXPR_j_PRODUCT {c, x, y}, where "
          "d(x) is dims[x]\n   for a dynamic dim and expression x - "
       << n << "_NUM_DYNAMIC_DIMS after them. */";
  os << "\n#define " << n << "_NUM_DIM_EXPRS " << info.dimExprs.size() << "\n";
  for (auto [j, e] : llvm::enumerate(info.dimExprs)) {
    os << "#define " << n << "_DIM_EXPR_" << j << "_NAME " << quoted(e.text) << "\n";
    if (e.kind == Kind::Floor) {
      os << "#define " << n << "_DIM_EXPR_" << j << "_FLOOR {"
         << info.descriptorIndex(e.args[0]) << ", " << e.args[1] << ", " << e.args[2] << "}\n";
      continue;
    }
    if (e.kind == Kind::Product) {
      os << "#define " << n << "_DIM_EXPR_" << j << "_PRODUCT {" << e.args[0] << ", "
         << info.descriptorIndex(e.args[1]) << ", " << info.descriptorIndex(e.args[2])
         << "}\n";
      continue;
    }
    os << "#define " << n << "_DIM_EXPR_" << j << " {" << e.coefficients[0];
    if (dynamic)
      os << ", 0";
    for (int64_t c : ArrayRef(e.coefficients).drop_front())
      os << ", " << c;
    os << "}\n";
  }
  os << "\n";
  if (info.stats.known) {
    const CodeStats &c = info.stats;
    os << "/* What the model's code needs on " << info.targetLabel << ", in bytes.\n"
       << " * Flash: code, constants (weights, tables) and initial data; RAM: the\n"
       << " * workspace and static data; stack: the deepest chain of the generated\n"
       << " * code's frames below " << n << "_run, its own included, without what it\n"
       << " * calls outside (memcpy/memset, compiler-runtime helpers): add a margin\n"
       << " * for those; -1 if unknown. */\n"
       << "#define " << n << "_CODE_SIZE " << c.codeSize << "\n"
       << "#define " << n << "_CONST_SIZE " << c.constSize << "\n"
       << "#define " << n << "_DATA_SIZE " << c.dataSize + c.bssSize << "\n"
       << "#define " << n << "_FLASH_SIZE " << c.codeSize + c.constSize + c.dataSize << "\n"
       << "#define " << n << "_RAM_SIZE "
       << (info.workspaceSize < 0 ? -1 : info.workspaceSize + c.dataSize + c.bssSize)
       << (info.workspaceSize < 0 ? " /* depends on the dynamic dims */" : "")
       << "\n"
       << "#define " << n << "_STACK_SIZE " << c.stackSize << "\n\n";
  }
  auto tensors = [&](const std::vector<TensorInfo> &list, StringRef kind) {
    for (auto [i, t] : llvm::enumerate(list)) {
      std::string p = n + "_" + kind.str() + "_" + std::to_string(i);
      os << "/* " << kind.lower() << " " << i << ": " << dtypeName(t.dtype) << " [";
      for (auto [k, d] : llvm::enumerate(t.dims))
        os << (k ? "," : "") << (k == 0 && t.dynamicBatch ? info.dynamicDim : info.dimText(d));
      std::string per;
      if (t.dynamicBatch)
        per = info.dynamicDim + " item";
      bool repeated = false;
      for (size_t k = 0; k < info.symbolicDims.size() + info.dimExprs.size(); ++k)
        if (int64_t count = t.numSymbolic(k)) {
          per += (per.empty() ? "" : " and ") + std::string("unit of ") + info.dimText(-1 - k);
          repeated |= count > 1;
        }
      if (repeated)
        per += " (per dim that has it)";
      os << "]" << (per.empty() ? "" : "; the sizes below are per " + per) << " */\n";
      os << "#define " << p << "_NAME " << quoted(t.name) << "\n";
      os << "#define " << p << "_DTYPE " << t.dtype << "\n";
      os << "#define " << p << "_RANK " << t.dims.size() << "\n";
      os << "#define " << p << "_DIMS {";
      for (auto [k, d] : llvm::enumerate(t.dims))
        os << (k ? ", " : "")
           << (k == 0 && t.dynamicBatch ? -1 : info.descriptorDim(d));
      if (t.dims.empty())
        os << "1"; // A scalar: keep the initializer non-empty in C.
      os << "}\n";
      os << "#define " << p << "_NUM_ELEMENTS " << t.numElements() << "\n";
      os << "#define " << p << "_NUM_BYTES " << t.numBytes() << "\n\n";
    }
  };
  tensors(info.inputs, "INPUT");
  tensors(info.outputs, "OUTPUT");
  // "\n   dims[1] is src (0 to 2147483647), dims[2] is tgt (...)"
  std::string symbolicRanges;
  for (auto [k, d] : llvm::enumerate(info.symbolicDims))
    symbolicRanges += std::string(k ? ",\n   " : "\n   ") + "dims[" +
                      std::to_string(info.symbolicIndex(k)) + "] is " + d.name + " (" +
                      std::to_string(d.min) + " to " + std::to_string(info.symbolicTop(k)) + ")";
  // "\n   with seq - 1 >= 0"
  for (auto [j, c] : llvm::enumerate(info.dimConstraints))
    symbolicRanges += std::string(j ? ",\n   " : ",\n   with ") + c.text;
  os << "/* Runs the model: inputs[i] and outputs[i] point at the tensors "
        "above.\n   Returns KILN_STATUS_OK (0) or a status code."
     << (info.batchOnly()
             ? "\n   This model has the dynamic batch dim " + quotedNames + ", kept whole: " + n +
                   "_run runs\n   one item (dims 1), " + n + "_run_dims() any number of them."
         : symbolic ? "\n   This model has the dynamic dim" +
                          std::string(info.symbolicDims.size() > 1 ? "s " : " ") + quotedNames +
                          ": call " + n +
                          "_run_dims() instead\n   (" + n + "_run returns "
                          "KILN_STATUS_INVALID_ARGUMENT)."
                    : std::string())
     << " */\n"
     << "int " << n
     << "_run(const void *const *inputs, void *const *outputs, void *workspace);\n\n";
  if (info.cuda()) {
    std::string workspace = info.workspaceSize >= 0 && !symbolic
                                ? n + "_WORKSPACE_SIZE bytes"
                                : n + "_workspace_size(dims) bytes";
    os << "/* NVIDIA GPU (--target=cuda). " << n << "_run and " << n << "_run_dims\n"
          "   take HOST pointers: the runtime copies the inputs to device buffers\n"
          "   it allocates at the first run (and again, larger, when a run's dims\n"
          "   need more), runs the kernels and copies the outputs back; their\n"
          "   workspace argument is not used (NULL is fine); calls of them take\n"
          "   turns. " << n << "_run_device and " << n << "_run_dims_device take DEVICE\n"
          "   pointers (cuMemAlloc'd; zero-copy): the inputs, the outputs and a\n"
          "   workspace of " << workspace << " of device memory, run on the\n"
          "   default stream and return once the kernels are done (dims as for\n"
          "   " << n << "_run_dims"
       << (dynamic ? ": the items run one after another" : "")
       << "). The _async forms take the same and a stream\n"
          "   (a CUstream / cudaStream_t in device 0's primary context; NULL: the\n"
          "   default stream), queue the kernels on it and return at once (a\n"
          "   model that reads a tensor's values on the host waits there): the\n"
          "   outputs are ready once the stream gets past them\n"
          "   (cuStreamSynchronize, an event), and a workspace is not shared\n"
          "   with a run still in flight. Threads may run at the same time, each\n"
          "   with its own outputs and workspace. Without a CUDA driver or device\n"
          "   these return KILN_STATUS_UNSUPPORTED; kiln_cuda_error()\n"
          "   (kiln/runtime.h) says why. */\n"
          "int " << n
       << "_run_device(const void *const *inputs, void *const *outputs, void *workspace);\n"
          "int " << n
       << "_run_device_async(const void *const *inputs, void *const *outputs, void *workspace,\n"
          "    void *stream);\n"
          "int " << n
       << "_run_dims_device(const int64_t *dims, const void *const *inputs,\n"
          "    void *const *outputs, void *workspace);\n"
          "int " << n
       << "_run_dims_device_async(const int64_t *dims, const void *const *inputs,\n"
          "    void *const *outputs, void *workspace, void *stream);\n\n";
  }
  os
     << "/* Runs the model for the dynamic dims' values dims[0.."
     << n << "_NUM_DYNAMIC_DIMS)"
     << (dynamic ? ": dims[0] items of " + info.dynamicDim +
                       ", one after another, each batched tensor holding\n   dims[0] "
                       "items back to back (" + n + "_run is dims[0] = 1). With no items, "
                       "outputs\n   that do not depend on " + info.dynamicDim +
                       " are not written."
                 : symbolic ? std::string(".")
                            : std::string("; this model has none, so dims may be NULL."))
     << (symbolic ? symbolicRanges + "; the workspace must hold " + n +
                        "_workspace_size(dims)\n   bytes" +
                        (allMax && info.workspaceSize >= 0 ? " (" + n + "_WORKSPACE_SIZE)."
                                                           : std::string("."))
                  : std::string())
     << " */\n"
     << "int " << n
     << "_run_dims(const int64_t *dims, const void *const *inputs, void *const *outputs,\n"
     << "    void *workspace);\n\n"
     << "/* The workspace's size in bytes for the dynamic dims' values"
     << (symbolic ? std::string("; -1 for\n   values out of range or dims NULL.")
                  : std::string(" (here always\n   ") + n + "_WORKSPACE_SIZE: " +
                        (dynamic ? "items run one at a time" : "the model is static") + ").")
     << " */\n"
     << "int64_t " << n << "_workspace_size(const int64_t *dims);\n\n"
     << "/* The model's descriptor, for tools. */\n"
     << "const kiln_model_desc *" << n << "_describe(void);\n\n";
  // Typed wrapper with parameter names made from the tensor names.
  llvm::StringSet<> used;
  auto param = [&](StringRef prefix, const TensorInfo &t) {
    std::string id = prefix.str() + makeIdentifier(t.name);
    std::string unique = id;
    for (int k = 2; !used.insert(unique).second; ++k)
      unique = id + "_" + std::to_string(k);
    return unique;
  };
  SmallVector<std::string> ins, outs;
  for (const TensorInfo &t : info.inputs)
    ins.push_back(param("in_", t));
  for (const TensorInfo &t : info.outputs)
    outs.push_back(param("out_", t));
  os << "/* Typed convenience wrapper: one pointer per input, then per output. */\n"
     << "static inline int " << n << "_run_typed(";
  for (auto [i, t] : llvm::enumerate(info.inputs))
    os << "const " << cTypeOf(t.dtype) << " *" << ins[i] << ", ";
  for (auto [i, t] : llvm::enumerate(info.outputs))
    os << cTypeOf(t.dtype) << " *" << outs[i] << ", ";
  os << "void *workspace) {\n";
  os << "  const void *inputs[" << std::max<size_t>(info.inputs.size(), 1) << "] = {";
  if (info.inputs.empty())
    os << "0";
  llvm::interleave(ins, os, ", ");
  os << "};\n  void *outputs[" << std::max<size_t>(info.outputs.size(), 1) << "] = {";
  if (info.outputs.empty())
    os << "0";
  llvm::interleave(outs, os, ", ");
  os << "};\n  return " << n << "_run(inputs, outputs, workspace);\n}\n\n";
  os << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* " << guard
     << " */\n";
  return s;
}

} // namespace kiln
