//===- OnnxOdsGen.cpp - Generate the onnx dialect's ODS from ONNX --------===//
//
// Reads onnx::OpSchemaRegistry (the registry of the libonnx kiln is built
// against) and writes, for every operator of the default ONNX domain at its
// newest opset version, an ODS definition: operands (optional operands accept
// `none`, variadic operands are `Variadic<>`), results, attributes with their
// types and defaults, type constraints, graph attributes as regions, the
// operator's documentation and its opset version.
//
// It also writes `OnnxOpsMeta.inc`, a table the importer uses to name
// attributes exactly as the ODS does.
//
// Usage: onnx-ods-gen <OnnxOps.td> <OnnxOpsMeta.inc>
//
// The per-op knobs that say which ops have hand-written C++ (verifiers,
// folders, shape functions) live in the tables at the top of this file.
//
//===----------------------------------------------------------------------===//

#include "onnx/defs/schema.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

static bool kHooks = true;
/// Highest default-domain opset kiln targets.
constexpr int kMaxOpset = 17;

/// Ops whose verifier is hand-written (dialects/Onnx/IR/Verifiers.cpp).
const std::set<std::string> kVerifierOps = {
    "Concat",   "Conv",     "Gemm",      "MatMul",     "Transpose",
    "Reshape",  "Flatten",  "Gather",    "Softmax",    "LogSoftmax",
    "Split",    "Squeeze",  "Unsqueeze", "Slice",      "Cast",
    "MaxPool",  "AveragePool", "If",         "Loop",       "Scan",
    "Constant"};

/// Ops with hand-written folders (dialects/Onnx/IR/Folders.cpp).
const std::set<std::string> kFolderOps = {
    "Constant", "Shape",     "Size",  "Gather",   "Unsqueeze", "Squeeze",
    "Concat",   "Cast",      "Identity", "Reshape", "ConstantOfShape",
    "Range",    "Add",       "Sub",   "Mul",      "Div",       "Slice",
    "Expand",   "Equal",     "Where", "Neg",      "Flatten"};

/// Ops with a hand-written shape function (dialects/Onnx/IR/Shape*.cpp).
/// Elementwise ops get theirs from their family table.
const std::set<std::string> kShapeOps = {
    // Unary elementwise (same shape as input 0).
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Cos",
    "Cosh", "Elu", "Erf", "Exp", "Floor", "HardSigmoid", "HardSwish", "Identity",
    "IsInf", "IsNaN", "LeakyRelu", "Log", "Neg", "Not", "Reciprocal", "Relu",
    "Round", "Selu", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign",
    "Sqrt", "Tan", "Tanh", "ThresholdedRelu", "Celu", "Clip", "Softmax",
    "LogSoftmax", "Hardmax", "Shrink", "Dropout", "Cast",
    "CastLike", "LRN", "InstanceNormalization", "BatchNormalization",
    "LayerNormalization", "MeanVarianceNormalization", "LpNormalization",
    "CumSum", "PRelu",
    // Broadcasting (multidirectional).
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Equal",
    "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Min", "Mean",
    "Sum", "BitShift", "Where",
    // Shape-changing.
    "MatMul", "Gemm", "Conv", "MaxPool", "AveragePool", "LpPool",
    "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "Transpose",
    "Reshape", "Flatten", "Concat", "Squeeze", "Unsqueeze", "Gather", "Shape",
    "Size", "Constant", "ConstantOfShape", "Expand", "Range", "Slice",
    "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
    "ReduceSumSquare", "ArgMax", "ArgMin", "Tile", "Split",
    // ShapeNN.cpp / ShapeMisc.cpp.
    "MatMulInteger", "QLinearMatMul", "ConvInteger", "QLinearConv",
    "ConvTranspose", "GatherElements", "ScatterElements", "ScatterND",
    "Scatter", "Trilu", "QuantizeLinear", "DequantizeLinear", "EyeLike",
    "ReverseSequence", "DynamicQuantizeLinear", "NonZero", "Pad", "Resize",
    "DepthToSpace", "SpaceToDepth", "TopK", "OneHot", "GatherND", "RNN", "GRU",
    "LSTM", "Einsum", "GridSample", "RoiAlign", "Det", "DFT", "STFT", "MaxUnpool",
    "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"};

/// Ops that are not pure: random generators and control flow.
const std::set<std::string> kImpureOps = {
    "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
    "Bernoulli",    "Multinomial",      "If",            "Loop",
    "Scan",         "SequenceMap"};

/// Names ODS would turn into accessors that clash with `Operation`/`OpState`
/// methods; they get a trailing underscore in the dialect.
const std::set<std::string> kReservedNames = {
    "type", "operands", "results", "attributes", "name", "context", "loc",
    "operation", "regions", "properties", "result", "operand", "region",
    "body_"};

std::string camel(const std::string &s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
              : c;
    up = false;
  }
  return out;
}

std::string escapeDoc(std::string s) {
  // `}]` would end the ODS code block early.
  size_t pos = 0;
  while ((pos = s.find("}]", pos)) != std::string::npos) {
    s.replace(pos, 2, "} ]");
    pos += 3;
  }
  return s;
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// Maps an ONNX element type name to an ODS type.
std::string elementOds(const std::string &t) {
  static const std::map<std::string, std::string> map = {
      {"float", "F32"},       {"double", "F64"},      {"float16", "F16"},
      {"bfloat16", "BF16"},   {"int8", "I8"},         {"int16", "I16"},
      {"int32", "I32"},       {"int64", "I64"},       {"uint8", "UI8"},
      {"uint16", "UI16"},     {"uint32", "UI32"},     {"uint64", "UI64"},
      {"bool", "I1"},         {"string", "Onnx_StringType"},
      {"complex64", "Complex<F32>"}, {"complex128", "Complex<F64>"}};
  auto it = map.find(t);
  if (it == map.end()) {
    std::cerr << "onnx-ods-gen: unknown element type '" << t << "'\n";
    std::exit(1);
  }
  return it->second;
}

/// Strips `prefix(` ... `)` from `s`; returns false if `s` is not of that form.
bool unwrap(const std::string &s, const std::string &prefix,
            std::string &inner) {
  if (s.rfind(prefix + "(", 0) != 0 || s.back() != ')')
    return false;
  inner = s.substr(prefix.size() + 1, s.size() - prefix.size() - 2);
  return true;
}

/// Converts one ONNX type string ("tensor(float)", "seq(tensor(int64))",
/// "optional(seq(tensor(float)))") to ODS; tensor element types are collected
/// into `tensorElems` so that they become one TensorOf<>.
void typeOds(const std::string &t, std::set<std::string> &tensorElems,
             std::map<std::string, std::set<std::string>> &seqElems,
             std::map<std::string, std::set<std::string>> &optElems) {
  std::string inner;
  if (unwrap(t, "tensor", inner)) {
    tensorElems.insert(elementOds(inner));
    return;
  }
  if (unwrap(t, "sparse_tensor", inner)) {
    tensorElems.insert(elementOds(inner));
    return;
  }
  if (unwrap(t, "seq", inner)) {
    std::string e;
    if (!unwrap(inner, "tensor", e)) {
      std::cerr << "onnx-ods-gen: unsupported type " << t << "\n";
      std::exit(1);
    }
    seqElems["seq"].insert(elementOds(e));
    return;
  }
  if (unwrap(t, "optional", inner)) {
    std::string e, e2;
    if (unwrap(inner, "tensor", e)) {
      optElems["tensor"].insert(elementOds(e));
      return;
    }
    if (unwrap(inner, "seq", e) && unwrap(e, "tensor", e2)) {
      optElems["seq"].insert(elementOds(e2));
      return;
    }
  }
  std::cerr << "onnx-ods-gen: unsupported type " << t << "\n";
  std::exit(1);
}

std::string join(const std::set<std::string> &s) {
  std::string out;
  for (const auto &e : s)
    out += (out.empty() ? "" : ", ") + e;
  return out;
}

/// The ODS constraint for one formal parameter.
std::string paramConstraint(const onnx::OpSchema::FormalParameter &p,
                            bool allowNone) {
  std::set<std::string> tensorElems;
  std::map<std::string, std::set<std::string>> seqElems, optElems;
  for (const std::string *t : p.GetTypes())
    typeOds(*t, tensorElems, seqElems, optElems);
  std::vector<std::string> alts;
  if (!tensorElems.empty())
    alts.push_back("TensorOf<[" + join(tensorElems) + "]>");
  if (seqElems.count("seq"))
    alts.push_back("Onnx_SeqOf<[TensorOf<[" + join(seqElems["seq"]) + "]>]>");
  if (optElems.count("tensor"))
    alts.push_back("Onnx_OptOf<[TensorOf<[" + join(optElems["tensor"]) +
                   "]>]>");
  if (optElems.count("seq"))
    alts.push_back("Onnx_OptOf<[Onnx_SeqOf<[TensorOf<[" +
                   join(optElems["seq"]) + "]>]>]>");
  if (allowNone)
    alts.push_back("NoneType");
  if (alts.size() == 1)
    return alts[0];
  std::string out = "AnyTypeOf<[";
  for (size_t i = 0; i < alts.size(); ++i)
    out += (i ? ", " : "") + alts[i];
  return out + "]>";
}

std::string formatFloat(float f) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(f));
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

/// The ODS attribute constraint (with default where the schema has one).
/// Returns "" for graph attributes, which become regions.
std::string attrConstraint(const onnx::OpSchema::Attribute &a) {
  using onnx::AttributeProto;
  std::string base;
  switch (a.type) {
  case AttributeProto::FLOAT: base = "F32Attr"; break;
  case AttributeProto::INT: base = "Onnx_I64Attr"; break;
  case AttributeProto::STRING: base = "StrAttr"; break;
  case AttributeProto::TENSOR: base = "ElementsAttr"; break;
  case AttributeProto::SPARSE_TENSOR: base = "ElementsAttr"; break;
  case AttributeProto::TYPE_PROTO: base = "TypeAttr"; break;
  case AttributeProto::FLOATS: base = "DenseF32ArrayAttr"; break;
  case AttributeProto::INTS: base = "DenseI64ArrayAttr"; break;
  case AttributeProto::STRINGS: base = "StrArrayAttr"; break;
  case AttributeProto::TENSORS: base = "TypedArrayAttrBase<ElementsAttr, \"tensors\">"; break;
  case AttributeProto::GRAPH: return "";
  default:
    std::cerr << "onnx-ods-gen: unsupported attribute type for " << a.name
              << "\n";
    std::exit(1);
  }
  if (a.required)
    return base;
  const AttributeProto &d = a.default_value;
  bool hasDefault = d.has_f() || d.has_i() || d.has_s() || d.floats_size() ||
                    d.ints_size() || d.strings_size();
  if (!hasDefault)
    return "OptionalAttr<" + base + ">";
  std::string value;
  switch (a.type) {
  case AttributeProto::FLOAT: value = formatFloat(d.f()); break;
  case AttributeProto::INT: value = std::to_string(d.i()); break;
  case AttributeProto::STRING: value = "\"" + d.s() + "\""; break;
  case AttributeProto::FLOATS:
    value = "{";
    for (int i = 0; i < d.floats_size(); ++i)
      value += (i ? ", " : "") + formatFloat(d.floats(i)) + "f";
    value += "}";
    break;
  case AttributeProto::INTS:
    value = "{";
    for (int i = 0; i < d.ints_size(); ++i)
      value += (i ? ", " : "") + std::to_string(d.ints(i));
    value += "}";
    break;
  case AttributeProto::STRINGS:
    value = "{";
    for (int i = 0; i < d.strings_size(); ++i)
      value += std::string(i ? ", " : "") + "\"" + d.strings(i) + "\"";
    value += "}";
    break;
  default:
    return "OptionalAttr<" + base + ">";
  }
  return "DefaultValuedAttr<" + base + ", " + quote(value) + ">";
}

struct Generated {
  std::string ods;
  std::string meta;
};

/// Gives every operand, result, attribute and region a unique ODS name whose
/// accessor does not clash. Returns the name to use for `onnxName`.
std::string uniqueName(const std::string &onnxName,
                       std::set<std::string> &usedCamel) {
  std::string name = onnxName;
  if (kReservedNames.count(name))
    name += "_";
  while (usedCamel.count(camel(name)))
    name += "_";
  usedCamel.insert(camel(name));
  return name;
}

void emitOp(const onnx::OpSchema &s, Generated &g) {
  const std::string &op = s.Name();
  std::ostringstream os;
  std::set<std::string> used;
  std::vector<std::string> traits;
  if (!kImpureOps.count(op))
    traits.push_back("Pure");
  if (op == "Constant")
    traits.push_back("ConstantLike");
  if (kHooks && kShapeOps.count(op))
    traits.push_back("DeclareOpInterfaceMethods<ShapeInferenceOpInterface>");

  int variadicInputs = 0;
  for (const auto &p : s.inputs())
    variadicInputs += p.GetOption() == onnx::OpSchema::Variadic;
  int variadicOutputs = 0;
  for (const auto &p : s.outputs())
    variadicOutputs += p.GetOption() == onnx::OpSchema::Variadic;
  if (variadicInputs > 1 || variadicOutputs > 1) {
    std::cerr << "onnx-ods-gen: " << op << " has several variadic groups\n";
    std::exit(1);
  }

  std::vector<std::string> regionNames;
  for (const auto &kv : s.attributes())
    if (kv.second.type == onnx::AttributeProto::GRAPH)
      regionNames.push_back(kv.first);
  if (!regionNames.empty())
    traits.push_back("RecursiveMemoryEffects");

  os << "def Onnx_" << op << "Op : Onnx_Op<\"" << op << "\"";
  os << ", [";
  for (size_t i = 0; i < traits.size(); ++i)
    os << (i ? ", " : "") << traits[i];
  os << "]> {\n";
  os << "  let summary = \"ONNX " << op << " (opset " << s.since_version()
     << ")\";\n";
  os << "  let description = [{\n";
  os << "ONNX operator `" << op << "`, version " << s.since_version()
     << " of the default domain.\n";
  if (s.doc())
    os << escapeDoc(s.doc());
  os << "\n  }];\n";

  // Operands and attributes.
  os << "  let arguments = (ins";
  bool first = true;
  g.meta += "ONNX_OP(" + op + ", " + std::to_string(s.since_version()) + ")\n";
  for (const auto &p : s.inputs()) {
    std::string c =
        paramConstraint(p, p.GetOption() == onnx::OpSchema::Optional);
    if (p.GetOption() == onnx::OpSchema::Variadic)
      c = "Variadic<" + c + ">";
    os << (first ? "\n    " : ",\n    ") << c << ":$"
       << uniqueName(p.GetName(), used);
    first = false;
  }
  for (const auto &kv : s.attributes()) {
    const auto &a = kv.second;
    std::string c = attrConstraint(a);
    if (c.empty())
      continue;
    std::string name = uniqueName(a.name, used);
    if (name != a.name)
      g.meta += "ONNX_ATTR_RENAME(" + op + ", " + a.name + ", " + name + ")\n";
    os << (first ? "\n    " : ",\n    ") << c << ":$" << name;
    first = false;
  }
  os << ");\n";

  os << "  let results = (outs";
  first = true;
  for (const auto &p : s.outputs()) {
    std::string c =
        paramConstraint(p, p.GetOption() == onnx::OpSchema::Optional);
    if (p.GetOption() == onnx::OpSchema::Variadic)
      c = "Variadic<" + c + ">";
    os << (first ? "\n    " : ",\n    ") << c << ":$"
       << uniqueName(p.GetName(), used);
    first = false;
  }
  os << ");\n";

  if (!regionNames.empty()) {
    os << "  let regions = (region";
    for (size_t i = 0; i < regionNames.size(); ++i) {
      std::string name = uniqueName(regionNames[i], used);
      if (name != regionNames[i])
        g.meta += "ONNX_ATTR_RENAME(" + op + ", " + regionNames[i] + ", " +
                  name + ")\n";
      os << (i ? ", " : " ") << "SizedRegion<1>:$" << name;
    }
    os << ");\n";
  }

  if (kHooks && kVerifierOps.count(op))
    os << "  let hasVerifier = 1;\n";
  if (kHooks && kFolderOps.count(op))
    os << "  let hasFolder = 1;\n";
  os << "  let extraClassDeclaration = [{\n"
     << "    /// The ONNX opset version this op's interface follows.\n"
     << "    static constexpr int64_t kOpsetVersion = " << s.since_version()
     << ";\n  }];\n";
  os << "}\n\n";
  g.ods += os.str();
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: onnx-ods-gen <OnnxOps.td> <OnnxOpsMeta.inc>\n";
    return 2;
  }
  // Newest version <= kMaxOpset of every default-domain op. Deprecated ops
  // (Scatter, Upsample) keep their last live version; the importer rewrites
  // them to their successors, but the dialect still has them.
  std::map<std::string, onnx::OpSchema> latest;
  for (const auto &s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (!s.domain().empty() || s.since_version() > kMaxOpset || s.Deprecated())
      continue;
    auto it = latest.find(s.Name());
    if (it == latest.end() || it->second.since_version() < s.since_version())
      latest.insert_or_assign(s.Name(), s);
  }

  for (const auto *list : {&kVerifierOps, &kFolderOps, &kShapeOps, &kImpureOps})
    for (const std::string &name : *list)
      if (!latest.count(name)) {
        std::cerr << "onnx-ods-gen: '" << name
                  << "' in a knob table is not an op of the registry\n";
        return 1;
      }

  Generated g;
  size_t count = 0;
  for (const auto &kv : latest) {
    emitOp(kv.second, g);
    ++count;
  }

  std::ofstream td(argv[1]);
  td << "//===- OnnxOps.td - ONNX operators (generated) ---------------*- "
        "tablegen -*-===//\n"
     << "//\n// Generated by utils/onnx-ods-gen from onnx::OpSchemaRegistry "
        "(ONNX "
     << ONNX_NAMESPACE::OpSchemaRegistry::DomainToVersionRange::Instance()
            .Map()
            .at("")
            .second
     << " max opset) — do not edit.\n// " << count
     << " operators of the default domain.\n//\n"
     << "//===---------------------------------------------------------------"
        "-------===//\n\n"
     << "#ifndef KILN_ONNX_OPS_TD\n#define KILN_ONNX_OPS_TD\n\n"
     << "include \"dialects/Onnx/IR/OnnxBase.td\"\n\n"
     << g.ods << "#endif // KILN_ONNX_OPS_TD\n";
  std::ofstream meta(argv[2]);
  meta << "// Generated by utils/onnx-ods-gen — do not edit.\n"
       << "// ONNX_OP(Name, OpsetVersion): every generated op.\n"
       << "// ONNX_ATTR_RENAME(Op, OnnxName, OdsName): attributes renamed.\n"
       << "#ifndef ONNX_OP\n#define ONNX_OP(N, V)\n#endif\n"
       << "#ifndef ONNX_ATTR_RENAME\n#define ONNX_ATTR_RENAME(O, A, B)\n"
          "#endif\n"
       << g.meta << "#undef ONNX_OP\n#undef ONNX_ATTR_RENAME\n";
  if (!td || !meta) {
    std::cerr << "onnx-ods-gen: cannot write output\n";
    return 1;
  }
  return 0;
}
