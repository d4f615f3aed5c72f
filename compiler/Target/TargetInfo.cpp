//===- TargetInfo.cpp - The machine kiln compiles for ---------------------===//
//
// Builds the LLVM target machine from --target/--mcpu/--mattr, describes it
// for the rest of the compiler (pointer width, bare metal or not, which
// floating-point precisions the hardware has), and refuses arithmetic a
// target cannot do before LLVM is asked to (LLVM's soft-float legalisation
// of float64 on a single-precision FPU is slow at best and, for some
// comparisons, an instruction-selection crash).
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Target.h"
#include "dialects/Onnx/IR/DataTypes.h"
#include "dialects/Onnx/IR/OnnxOps.h"
#include "dialects/Onnx/IR/ShapeHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

using namespace mlir;

namespace kiln {

namespace {

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

std::string hostFeatures() {
  std::string features;
  for (const auto &f : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty())
      features += ",";
    features += (f.second ? "+" : "-") + f.first().str();
  }
  return features;
}

llvm::Triple targetTriple(const TargetOptions &options) {
  return llvm::Triple(llvm::Triple::normalize(
      options.triple.empty() ? llvm::sys::getDefaultTargetTriple() : options.triple));
}

bool isFloat64(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  return type.isF64();
}

/// The core an M-profile architecture names when no --mcpu is given, so
/// that the FPU and DSP features a microcontroller triple implies are used
/// (LLVM's "generic" has none: soft float even for an eabihf triple).
std::string defaultCpu(const llvm::Triple &triple) {
  if (!triple.isARM() && !triple.isThumb())
    return "generic";
  return llvm::StringSwitch<std::string>(triple.getArchName())
      .Cases({"thumbv6m", "armv6m"}, "cortex-m0plus")
      .Cases({"thumbv7m", "armv7m"}, "cortex-m3")
      .Cases({"thumbv7em", "armv7em"}, "cortex-m4")
      .Cases({"thumbv8m.base", "armv8m.base"}, "cortex-m23")
      .Cases({"thumbv8m.main", "armv8m.main"}, "cortex-m33")
      .Cases({"thumbv8.1m.main", "armv8.1m.main"}, "cortex-m55")
      .Default("generic");
}

} // namespace

bool isBareMetalTriple(const llvm::Triple &triple) {
  return triple.getOS() == llvm::Triple::UnknownOS && triple.isOSBinFormatELF() &&
         triple.getEnvironment() != llvm::Triple::GNU;
}

std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const TargetOptions &options, std::string &error) {
  initializeTargets();
  bool host = isHostTriple(options.triple);
  llvm::Triple triple = targetTriple(options);
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    error = "unknown target '" + options.triple + "': " + error;
    return nullptr;
  }
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple, "", ""));
  if (!generic) {
    error = "cannot describe target '" + triple.str() + "'";
    return nullptr;
  }
  // --mattr: "+name" or "-name", each a feature this target has.
  SmallVector<StringRef> requested;
  StringRef(options.features).split(requested, ',', -1, /*KeepEmpty=*/true);
  for (StringRef f : requested) {
    if (options.features.empty())
      break;
    StringRef name = f.drop_front();
    bool known = llvm::any_of(generic->getAllProcessorFeatures(),
                              [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; });
    if (f.size() < 2 || (f[0] != '+' && f[0] != '-') || !known) {
      error = "--mattr: '" + f.str() + "' is not +FEATURE or -FEATURE with a feature of '" +
              triple.str() + "'";
      return nullptr;
    }
  }
  std::string cpu = options.cpu, features = options.features;
  if (cpu == "native" && !host) {
    error = "--mcpu=native only applies to the host ('" + triple.str() +
            "' is not the machine kiln runs on)";
    return nullptr;
  }
  if ((cpu.empty() && host) || cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    std::string hf = hostFeatures();
    features = features.empty() ? hf : hf + "," + features;
  }
  if (cpu.empty())
    cpu = defaultCpu(triple);
  if (cpu != "generic" && !generic->isCPUStringValid(cpu)) {
    error = "unknown --mcpu '" + cpu + "' for target '" + triple.str() + "'";
    return nullptr;
  }
  // A soft-float ABI (arm-*-eabi, not eabihf) keeps floats out of FPU
  // registers and, like clang, out of the FPU: firmware for such a core may
  // not have one or may not enable it.
  if ((triple.isARM() || triple.isThumb()) && triple.getEnvironment() == llvm::Triple::EABI)
    features = features.empty() ? "+soft-float" : "+soft-float," + features;
  llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive;
  switch (options.optLevel) {
  case 0: level = llvm::CodeGenOptLevel::None; break;
  case 1: level = llvm::CodeGenOptLevel::Less; break;
  case 2: level = llvm::CodeGenOptLevel::Default; break;
  default: break;
  }
  llvm::TargetOptions to;
  // Firmware is linked at a fixed address: no GOT, constants reached
  // PC-relative or absolutely, the descriptor in read-only data.
  llvm::Reloc::Model reloc = isBareMetalTriple(triple) ? llvm::Reloc::Static : llvm::Reloc::PIC_;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, to, reloc, std::nullopt, level));
  if (!tm) {
    error = "cannot create a target machine for '" + triple.str() + "'";
    return nullptr;
  }
  return tm;
}

std::string TargetDescription::label() const { return cpu + " (" + triple + ")"; }

LogicalResult describeTarget(const TargetOptions &options, TargetDescription &desc,
                             std::string &error) {
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(options, error);
  if (!tm)
    return failure();
  const llvm::Triple &triple = tm->getTargetTriple();
  desc.triple = triple.str();
  desc.cpu = tm->getTargetCPU().str();
  desc.pointerBits = tm->createDataLayout().getPointerSizeInBits();
  if (desc.pointerBits < 32) {
    error = "target '" + desc.triple + "' has " + std::to_string(desc.pointerBits) +
            "-bit pointers; kiln compiles for 32- and 64-bit targets";
    return failure();
  }
  desc.bareMetal = isBareMetalTriple(triple);
  desc.elf = triple.isOSBinFormatELF();
  desc.expandFloatMinMax = !triple.isX86() && !triple.isAArch64();
  desc.hasFloat32 = desc.hasFloat64 = true;
  const llvm::MCSubtargetInfo &sti = *tm->getMCSubtargetInfo();
  if (triple.isX86()) {
    if (sti.checkFeatures("+avx512f"))
      desc.vectorBits = 512, desc.vectorRegisters = 32;
    else if (sti.checkFeatures("+avx"))
      desc.vectorBits = 256, desc.vectorRegisters = 16;
    else if (sti.checkFeatures("+sse2"))
      desc.vectorBits = 128, desc.vectorRegisters = 16;
    if (sti.checkFeatures("+avx512f,+avx512vnni"))
      desc.int8DotProduct = "vnni512";
    else if (sti.checkFeatures("+avx512f,+avx512bw"))
      desc.int8DotProduct = "pmaddwd512";
    else if (sti.checkFeatures("+avx2"))
      desc.int8DotProduct = "pmaddwd256";
    desc.nativeRounding = sti.checkFeatures("+sse4.1");
  } else if (triple.isAArch64() && sti.checkFeatures("+neon")) {
    desc.vectorBits = 128, desc.vectorRegisters = 32;
    desc.nativeRounding = true;
    if (sti.checkFeatures("+dotprod"))
      desc.int8DotProduct = "sdot128";
  }
  // Eight steps of a kernel are some 100-200 cycles: about an L3 miss.
  if ((triple.isX86() || triple.isAArch64()) && !desc.bareMetal)
    desc.prefetchDistance = 8;
  if (triple.isARM() || triple.isThumb()) {
    desc.hasFloat32 = sti.checkFeatures("+vfp2sp") && !sti.checkFeatures("+soft-float");
    desc.hasFloat64 = desc.hasFloat32 && sti.checkFeatures("+fp64");
  }
  return success();
}

LogicalResult lowerForTarget(PassManager &pm, ModuleOp module,
                             const TargetDescription &target) {
  // Each onnx op's label, by location, before the ops are lowered. Not
  // NoValue or constants: they share the location of the node they were
  // made for.
  llvm::DenseMap<Location, std::string> labels;
  module->walk([&](Operation *op) {
    if (op->getName().getDialectNamespace() == "onnx" && !isa<onnx::NoValueOp>(op) &&
        !op->hasTrait<OpTrait::ConstantLike>())
      labels.try_emplace(op->getLoc(), onnx::opLabel(op));
  });
  // String tensors live on the heap of kiln's C runtime (strings.c),
  // which kiln links for the 64-bit host only.
  if (target.bareMetal || target.pointerBits != 64 || !isHostTriple(target.triple)) {
    Operation *user = nullptr;
    module->walk([&](Operation *op) {
      bool strings = llvm::any_of(op->getOperandTypes(), onnx::isStringType) ||
                     llvm::any_of(op->getResultTypes(), onnx::isStringType);
      if (auto f = dyn_cast<func::FuncOp>(op))
        strings = llvm::any_of(f.getArgumentTypes(), onnx::isStringType) ||
                  llvm::any_of(f.getResultTypes(), onnx::isStringType);
      if (!strings)
        return WalkResult::advance();
      user = op;
      // A node that uses them names itself; the function is the fallback.
      return isa<func::FuncOp>(op) ? WalkResult::advance() : WalkResult::interrupt();
    });
    if (user) {
      std::string label = labels.lookup(user->getLoc());
      user->emitError() << (label.empty() ? std::string() : label + ": ")
                        << "string tensors need kiln's C runtime (its heap and number "
                           "parsing), which kiln has for the 64-bit host only, not for '"
                        << target.triple << "'";
      return failure();
    }
  }
  if (failed(pm.run(module)))
    return failure();
  if (target.hasFloat64)
    return success();
  // One error per ONNX node: its first operation the target cannot do.
  llvm::DenseSet<Location> reported;
  auto report = [&](Operation *op, const Twine &why) {
    if (!reported.insert(op->getLoc()).second)
      return;
    std::string label = labels.lookup(op->getLoc());
    op->emitError() << (label.empty() ? std::string() : label + ": ") << why;
  };
  module->walk([&](Operation *op) {
    StringRef dialect = op->getName().getDialectNamespace();
    if (dialect != "arith" && dialect != "math")
      return;
    StringRef name = op->getName().getStringRef();
    // Moving bits, or flipping the sign bit, needs no FPU.
    if (name == "arith.constant" || name == "arith.select" || name == "arith.bitcast" ||
        name == "math.absf" || name == "arith.negf" || name == "math.copysign")
      return;
    // Without an FPU, LLVM turns these into calls to libm (sqrtf, floorf,
    // ...), which a kiln object does not use.
    bool libm = !target.hasFloat32 &&
                (name == "math.sqrt" || name == "math.rsqrt" || name == "math.floor" ||
                 name == "math.ceil" || name == "math.round" || name == "math.roundeven" ||
                 name == "math.trunc" || name == "math.fma");
    if (libm) {
      report(op, name + " is not supported on " + target.label() +
                     ": without an FPU it would call the C math library, which kiln's "
                     "objects do not use");
      return;
    }
    if (llvm::none_of(op->getOperandTypes(), isFloat64) &&
        llvm::none_of(op->getResultTypes(), isFloat64))
      return;
    report(op, "float64 arithmetic (" + name + ") is not supported on " + target.label() +
                   ": " +
                   (target.hasFloat32 ? "its FPU has single precision only"
                                      : "it has no FPU in use") +
                   ", and kiln does not emulate float64");
  });
  return success(reported.empty());
}

} // namespace kiln
