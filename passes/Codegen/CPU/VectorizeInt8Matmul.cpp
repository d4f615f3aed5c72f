//===- VectorizeInt8Matmul.cpp - int8 dot-product kernels -----*- C++ -*-===//
//
// kiln-vectorize-int8-matmul: the integer matmuls that the lowering of
// MatMulInteger and QLinearMatMul makes for a constant B (Int8ConstantWeights.cpp,
// matMulConstantB),
//
//   out[..., m, n] += ext(A[..., m, k]) * extsi(B'[k, n])   (i32; A u8 or s8)
//
// become register-blocked kernels on the target's integer dot product,
// which adds G products of adjacent pairs into each i32 lane:
//   vnni512     AVX-512 VNNI vpdpbusd: G = 4 bytes (u8 x s8), 16 lanes;
//   pmaddwd512  AVX-512BW vpmaddwd + vpaddd: G = 2 words (s16 x s16);
//   pmaddwd256  AVX2 vpmaddwd + vpaddd: G = 2 words, 8 lanes;
//   sdot128     AArch64 (dotprod) sdot: G = 4 bytes (s8 x s8), 4 lanes.
//
//   B' is packed at compile time into one panel per tile of NR = NV x L
//   columns, G consecutive k of a column side by side (bytes for the
//   byte kinds, sign-extended words for vpmaddwd):
//     packed[tile][k / G][(v * L + lane) * G + k % G]   (zero-padded)
//   for each tile of columns (the parallel loop), each dim of A before m,
//   each tile of MR rows:
//     MR x NV accumulators (vector<L x i32>) start from the output;
//     per group of G k: NV panel vectors, and per row the row's G values
//     of A (as bytes, or widened to words) broadcast to every lane as one
//     i32, one dot product per accumulator;
//     a last, partial group reads its values one by one;
//   stores (masked in the last, partial tile of columns).
//
// All are exact: vpdpbusd multiplies unsigned bytes of its first operand
// by signed bytes of its second, sdot signed by signed, both without
// saturation (A of the other signedness is read with its bytes' top bit
// flipped, A + 128 or A - 128, and 128 x sum_k B'[k, n] is taken off or
// added by starting the accumulators from a packed constant); vpmaddwd's
// two 16-bit products of 8-bit values sum far below the i32 range.
// (vpmaddubsw, with its 16-bit saturation, is not used.)
// Generics of other forms, dynamic shapes or other targets stay for the
// loop lowering.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/Int8Dot.h"
#include "passes/Codegen/CPU/Passes.h"
#include "passes/Codegen/CPU/VectorHelpers.h"
#include "passes/Utils/Int8Matmul.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>

namespace kiln {
#define GEN_PASS_DEF_VECTORIZEINT8MATMULPASS
#include "passes/Codegen/CPU/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

using kiln::int8::ByteOperand;
using kiln::int8::DotKind;

/// The int8 matmul `op` is, if it is one the kernel takes.
struct Int8Matmul {
  linalg::GenericOp op;
  Value a, out;
  /// The zero fill of `out` before the op (erased with it): the
  /// accumulators start from zero instead of loading the output.
  Operation *zeroFill = nullptr;
  ArrayRef<char> weights; ///< B' [K, N], row-major int8.
  bool signedA = false;
  int64_t m = 0, n = 0, k = 0;
  SmallVector<int64_t> batch; ///< A's and the output's dims before m.
};

std::optional<Int8Matmul> match(linalg::GenericOp op) {
  std::optional<kiln::int8::Int8Contraction> c =
      kiln::int8::matchInt8Contraction(op, kiln::int8MatmulMaps);
  if (!c)
    return std::nullopt;
  Int8Matmul mm;
  mm.op = op;
  mm.a = c->x;
  mm.out = c->out;
  mm.signedA = c->signedX;
  mm.weights = c->weights;
  mm.zeroFill = c->zeroFill;
  int64_t r = c->xType.getRank();
  mm.k = c->wType.getDimSize(0);
  mm.n = c->wType.getDimSize(1);
  mm.m = c->xType.getDimSize(r - 2);
  mm.batch.assign(c->xType.getShape().begin(), c->xType.getShape().end() - 2);
  if (c->xType.getDimSize(r - 1) != mm.k || c->outType.getDimSize(r - 1) != mm.n ||
      c->outType.getDimSize(r - 2) != mm.m ||
      c->outType.getShape().drop_back(2) != ArrayRef<int64_t>(mm.batch))
    return std::nullopt;
  return mm;
}

/// Builds one kernel; the tile is MR rows by NV vectors.
class Int8KernelBuilder {
public:
  Int8KernelBuilder(const Int8Matmul &mm, const DotKind &dot, bool parallel)
      : mm(mm), dot(dot), parallel(parallel),
        flipA(dot.a == ByteOperand::Unsigned ? mm.signedA
                                             : dot.a == ByteOperand::Signed && !mm.signedA) {
    nv = std::clamp<int64_t>((mm.n + dot.lanes - 1) / dot.lanes, 1, dot.registers / 8);
    // Accumulators, the panel vectors and one broadcast in the registers
    // (and for vpmaddwd one product).
    mr = std::clamp<int64_t>((dot.registers - nv - 2) / nv, 1, 8);
    mr = std::min(mr, mm.m);
  }

  void build(ModuleOp module, unsigned &globals);

private:
  Location loc() const { return mm.op->getLoc(); }
  Value index(OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc(), v); }
  Value global(OpBuilder &b, ModuleOp module, unsigned &globals, Type elem,
               ArrayRef<int64_t> shape, ArrayRef<char> bytes);
  /// The tile of columns at `n0` (`vectors` vectors, the last with
  /// `lastOn` lanes in bounds), for every dim before m.
  void columnTile(OpBuilder &b, Value tile, Value n0, int64_t vectors, int64_t lastOn);
  /// The tile of `rows` rows at `m0` of the columns at `n0`.
  void rowTile(OpBuilder &b, ArrayRef<Value> outer, Value m0, int64_t rows, Value tile, Value n0,
               int64_t vectors, int64_t lastOn);
  /// The G values of A's row `row` at group `group` (k = G * group ...),
  /// in bounds up to `valid` of them, as one i32: four bytes (xor 0x80
  /// for signed A) or two words.
  Value rowGroup(OpBuilder &b, ArrayRef<Value> outer, Value row, Value group, int64_t valid);

  const Int8Matmul &mm;
  const DotKind &dot;
  bool parallel;
  /// A's bytes are read with their top bit flipped (xor 0x80: A + 128 as
  /// u8, or A - 128 as s8), the other signedness than A's; the packed
  /// correction constant takes the difference off.
  bool flipA;
  int64_t nv = 1, mr = 1;
  Value packed, correction;
};

Value Int8KernelBuilder::global(OpBuilder &b, ModuleOp module, unsigned &globals, Type elem,
                                ArrayRef<int64_t> shape, ArrayRef<char> bytes) {
  return kiln::int8::packedGlobal(b, loc(), module, globals, elem, shape, bytes);
}

void Int8KernelBuilder::build(ModuleOp module, unsigned &globals) {
  OpBuilder b(mm.op);
  int64_t g = dot.group, width = nv * dot.lanes, tiles = (mm.n + width - 1) / width;
  int64_t groups = (mm.k + g - 1) / g;
  // Bytes for vpdpbusd, sign-extended words for vpmaddwd.
  int64_t elemBytes = g == 4 ? 1 : 2;
  std::vector<char> panels(size_t(tiles * groups * width * g * elemBytes), 0);
  std::vector<int32_t> sums(size_t(tiles * width), 0);
  for (int64_t kk = 0; kk < mm.k; ++kk)
    for (int64_t j = 0; j < mm.n; ++j) {
      int8_t v = int8_t(mm.weights[size_t(kk * mm.n + j)]);
      int64_t t = j / width, col = j % width;
      size_t at = size_t(((t * groups + kk / g) * width + col) * g + kk % g);
      if (elemBytes == 1) {
        panels[at] = char(v);
      } else {
        int16_t word = v;
        std::memcpy(&panels[at * 2], &word, 2);
      }
      // sum_k (A +- 128) B' = sum_k A B' +- 128 sum_k B'.
      sums[size_t(j)] += (dot.a == ByteOperand::Unsigned ? -128 : 128) * int32_t(v);
    }
  packed = global(b, module, globals, b.getIntegerType(unsigned(8 * elemBytes)),
                  {tiles, groups, width * g}, panels);
  if (flipA)
    correction = global(b, module, globals, b.getI32Type(), {tiles * width},
                        ArrayRef<char>(reinterpret_cast<const char *>(sums.data()),
                                       sums.size() * sizeof(int32_t)));
  int64_t full = mm.n / width, rest = mm.n % width;
  auto loop = scf::ForOp::create(b, loc(), index(b, 0), index(b, tiles), index(b, 1));
  int64_t work = mm.m * mm.n * mm.k;
  for (int64_t d : mm.batch)
    work *= d;
  if (parallel && tiles >= 2 && work >= kiln::vec::kParallelWork &&
      !kiln::vec::insideParallelLoop(mm.op))
    loop->setAttr("kiln.parallel", b.getUnitAttr());
  OpBuilder lb = OpBuilder::atBlockTerminator(loop.getBody());
  Value tile = loop.getInductionVar();
  Value n0 = arith::MulIOp::create(lb, loc(), tile, index(lb, width));
  if (!rest)
    return columnTile(lb, tile, n0, nv, dot.lanes);
  int64_t restVectors = (rest + dot.lanes - 1) / dot.lanes;
  int64_t lastOn = rest - (restVectors - 1) * dot.lanes;
  if (!full)
    return columnTile(lb, tile, n0, restVectors, lastOn);
  Value whole = arith::CmpIOp::create(lb, loc(), arith::CmpIPredicate::slt, tile, index(lb, full));
  auto branch = scf::IfOp::create(lb, loc(), whole, /*withElseRegion=*/true);
  OpBuilder tb = branch.getThenBodyBuilder();
  columnTile(tb, tile, n0, nv, dot.lanes);
  OpBuilder eb = branch.getElseBodyBuilder();
  columnTile(eb, tile, n0, restVectors, lastOn);
}

void Int8KernelBuilder::columnTile(OpBuilder &b, Value tile, Value n0, int64_t vectors,
                                   int64_t lastOn) {
  // The dims before m, then the row tiles.
  SmallVector<Value> outer;
  OpBuilder inner = b;
  for (int64_t d : mm.batch) {
    auto loop = scf::ForOp::create(inner, loc(), index(inner, 0), index(inner, d), index(inner, 1));
    outer.push_back(loop.getInductionVar());
    inner = OpBuilder::atBlockTerminator(loop.getBody());
  }
  int64_t fullRows = mm.m / mr * mr, restRows = mm.m % mr;
  if (fullRows) {
    auto rows = scf::ForOp::create(inner, loc(), index(inner, 0), index(inner, fullRows),
                                   index(inner, mr));
    OpBuilder rb = OpBuilder::atBlockTerminator(rows.getBody());
    rowTile(rb, outer, rows.getInductionVar(), mr, tile, n0, vectors, lastOn);
  }
  if (restRows)
    rowTile(inner, outer, index(inner, fullRows), restRows, tile, n0, vectors, lastOn);
}

Value Int8KernelBuilder::rowGroup(OpBuilder &b, ArrayRef<Value> outer, Value row, Value group,
                                  int64_t valid) {
  Type i32 = b.getI32Type();
  int64_t g = dot.group;
  Value k0 = arith::MulIOp::create(b, loc(), group, index(b, g));
  SmallVector<Value> idx(outer.begin(), outer.end());
  idx.push_back(row);
  idx.push_back(k0);
  auto constant = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc(), i32, v); };
  Value word;
  if (valid == g) {
    // One load of the group, widened to words for vpmaddwd.
    Value values = vector::LoadOp::create(b, loc(), VectorType::get({g}, b.getI8Type()), mm.a, idx);
    if (g == 2) {
      auto words = VectorType::get({2}, b.getI16Type());
      values = mm.signedA ? Value(arith::ExtSIOp::create(b, loc(), words, values))
                          : Value(arith::ExtUIOp::create(b, loc(), words, values));
    }
    Value asWord = vector::BitCastOp::create(b, loc(), VectorType::get({1}, i32), values);
    word = vector::ExtractOp::create(b, loc(), asWord, ArrayRef<int64_t>{0});
  } else {
    // A partial group: its values one by one, the rest zero (they meet
    // the panel's zero padding).
    int64_t bits = 32 / g;
    word = constant(0);
    for (int64_t j = 0; j < valid; ++j) {
      idx.back() = arith::AddIOp::create(b, loc(), k0, index(b, j));
      Value value = memref::LoadOp::create(b, loc(), mm.a, idx);
      Value wide = g == 2 && mm.signedA ? Value(arith::ExtSIOp::create(b, loc(), i32, value))
                                        : Value(arith::ExtUIOp::create(b, loc(), i32, value));
      wide = arith::AndIOp::create(b, loc(), wide, constant((int64_t(1) << bits) - 1));
      if (j)
        wide = arith::ShLIOp::create(b, loc(), wide, constant(bits * j));
      word = arith::OrIOp::create(b, loc(), word, wide);
    }
  }
  if (flipA)
    word = arith::XOrIOp::create(b, loc(), word, constant(int64_t(int32_t(0x80808080u))));
  return word;
}

void Int8KernelBuilder::rowTile(OpBuilder &b, ArrayRef<Value> outer, Value m0, int64_t rows,
                                Value tile, Value n0, int64_t vectors, int64_t lastOn) {
  Type i32 = b.getI32Type();
  int64_t lanes = dot.lanes;
  auto accType = VectorType::get({lanes}, i32);
  // The dot product's operands: bytes or words.
  auto operandType =
      VectorType::get({lanes * dot.group}, b.getIntegerType(unsigned(32 / dot.group)));
  auto on = [&](int64_t v) { return v + 1 == vectors ? lastOn : lanes; };
  auto outIndex = [&](OpBuilder &b, int64_t r, int64_t v) {
    SmallVector<Value> idx(outer.begin(), outer.end());
    idx.push_back(arith::AddIOp::create(b, loc(), m0, index(b, r)));
    idx.push_back(arith::AddIOp::create(b, loc(), n0, index(b, v * lanes)));
    return idx;
  };
  SmallVector<Value> inits;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < vectors; ++v) {
      Value acc = mm.zeroFill ? Value(arith::ConstantOp::create(b, loc(), accType,
                                                                  b.getZeroAttr(accType)))
                              : kiln::vec::load(b, loc(), mm.out, outIndex(b, r, v), accType,
                                                on(v));
      if (correction) {
        Value at = arith::AddIOp::create(b, loc(), n0, index(b, v * lanes));
        acc = arith::AddIOp::create(
            b, loc(), acc, vector::LoadOp::create(b, loc(), accType, correction, ValueRange{at}));
      }
      inits.push_back(acc);
    }
  auto intrinsic = StringAttr::get(b.getContext(), dot.intrinsic);
  // One group of G k: NV panel vectors, a broadcast per row.
  auto step = [&](OpBuilder &b, Value group, ValueRange accs, int64_t valid) {
    SmallVector<Value> weights;
    for (int64_t v = 0; v < vectors; ++v)
      weights.push_back(vector::LoadOp::create(
          b, loc(), operandType, packed, ValueRange{tile, group, index(b, v * lanes * dot.group)}));
    SmallVector<Value> next;
    for (int64_t r = 0; r < rows; ++r) {
      Value row = arith::AddIOp::create(b, loc(), m0, index(b, r));
      Value word = rowGroup(b, outer, row, group, valid);
      Value values = vector::BitCastOp::create(
          b, loc(), operandType, vector::BroadcastOp::create(b, loc(), accType, word));
      for (int64_t v = 0; v < vectors; ++v) {
        Value acc = accs[size_t(r * vectors + v)];
        if (dot.accumulates) {
          next.push_back(LLVM::CallIntrinsicOp::create(b, loc(), accType, intrinsic,
                                                       ValueRange{acc, values, weights[size_t(v)]})
                             .getResult(0));
          continue;
        }
        Value products = LLVM::CallIntrinsicOp::create(b, loc(), accType, intrinsic,
                                                       ValueRange{values, weights[size_t(v)]})
                             .getResult(0);
        next.push_back(arith::AddIOp::create(b, loc(), acc, products));
      }
    }
    return next;
  };
  int64_t fullGroups = mm.k / dot.group, tail = mm.k % dot.group;
  SmallVector<Value> accs = inits;
  if (fullGroups) {
    auto groups = scf::ForOp::create(
        b, loc(), index(b, 0), index(b, fullGroups), index(b, 1), inits,
        [&](OpBuilder &gb, Location l, Value group, ValueRange iterArgs) {
          scf::YieldOp::create(gb, l, step(gb, group, iterArgs, dot.group));
        });
    accs.assign(groups.getResults().begin(), groups.getResults().end());
  }
  if (tail)
    accs = step(b, index(b, fullGroups), accs, tail);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < vectors; ++v)
      kiln::vec::store(b, loc(), accs[size_t(r * vectors + v)], mm.out, outIndex(b, r, v), on(v));
}

struct VectorizeInt8MatmulPass
    : public kiln::impl::VectorizeInt8MatmulPassBase<VectorizeInt8MatmulPass> {
  using Base::Base;
  void runOnOperation() override {
    std::optional<DotKind> dot = kiln::int8::dotKind(kind);
    if (!dot)
      return;
    ModuleOp module = getOperation();
    SmallVector<Int8Matmul> found;
    module.walk([&](linalg::GenericOp op) {
      if (std::optional<Int8Matmul> mm = match(op))
        found.push_back(*mm);
    });
    SmallVector<linalg::GenericOp> others;
    module.walk([&](linalg::GenericOp op) { others.push_back(op); });
    unsigned globals = 0;
    bool changed = !found.empty();
    for (Int8Matmul &mm : found) {
      Int8KernelBuilder(mm, *dot, parallel).build(module, globals);
      llvm::erase(others, mm.op);
      mm.op.erase();
      if (mm.zeroFill)
        mm.zeroFill->erase();
    }
    llvm::SmallPtrSet<Operation *, 8> erased;
    for (linalg::GenericOp op : others) {
      if (erased.contains(op))
        continue;
      if (kiln::int8::vectorizeWeightsLeft(op, *dot, parallel, module, globals, erased)) {
        op.erase();
        changed = true;
      }
    }
    if (!changed)
      return;
    // The weights are now only read packed: drop their dead views and
    // globals (the packing read their bytes, so only now).
    kiln::vec::eraseUnusedGlobals(module);
  }
};

} // namespace

std::optional<kiln::int8::Int8Contraction> kiln::int8::matchInt8Contraction(
    linalg::GenericOp op,
    function_ref<SmallVector<AffineMap, 3>(MLIRContext *, int64_t)> maps) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return std::nullopt;
  Int8Contraction c;
  c.x = op.getDpsInputs()[0];
  c.out = op.getDpsInits()[0];
  Value w = op.getDpsInputs()[1];
  auto xType = dyn_cast<MemRefType>(c.x.getType());
  auto wType = dyn_cast<MemRefType>(w.getType());
  auto outType = dyn_cast<MemRefType>(c.out.getType());
  if (!xType || !wType || !outType || !xType.getElementType().isInteger(8) ||
      !wType.getElementType().isInteger(8) || !outType.getElementType().isInteger(32) ||
      !xType.hasStaticShape() || !outType.hasStaticShape() || wType.getRank() != 2 ||
      !wType.hasStaticShape() || xType.getRank() < 2 || outType.getRank() != xType.getRank() ||
      !kiln::vec::innermostContiguous(c.x) || !kiln::vec::innermostContiguous(c.out))
    return std::nullopt;
  SmallVector<AffineMap> actual = op.getIndexingMapsArray();
  SmallVector<AffineMap, 3> expected = maps(op.getContext(), xType.getRank());
  if (ArrayRef<AffineMap>(actual) != ArrayRef<AffineMap>(expected) ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
      !kiln::vec::isInt8MultiplyAccumulate(op, &c.signedX))
    return std::nullopt;
  std::optional<ArrayRef<char>> weights =
      kiln::contraction::constantBytes(w, IntegerType::get(op.getContext(), 8));
  if (!weights)
    return std::nullopt;
  c.weights = *weights;
  c.xType = xType;
  c.wType = wType;
  c.outType = outType;
  c.zeroFill = zeroFillBefore(op, c.out);
  return c;
}

Operation *kiln::int8::zeroFillBefore(linalg::GenericOp op, Value out) {
  Operation *before = op->getPrevNode();
  while (before && isMemoryEffectFree(before))
    before = before->getPrevNode();
  // A linalg.fill only (no generic the pass may still visit).
  std::optional<Value> value =
      isa_and_nonnull<linalg::FillOp>(before) ? kiln::vec::constantFill(before, out) : std::nullopt;
  return value && matchPattern(*value, m_Zero()) ? before : nullptr;
}

Value kiln::int8::packedGlobal(OpBuilder &b, Location loc, ModuleOp module, unsigned &globals,
                               Type elem, ArrayRef<int64_t> shape, ArrayRef<char> bytes) {
  std::string name = ("__kiln_int8_packed_" + Twine(globals++)).str();
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto type = MemRefType::get(shape, elem);
  auto value = DenseResourceElementsAttr::get(
      RankedTensorType::get(shape, elem), name,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, /*align=*/64));
  memref::GlobalOp::create(mb, loc, name, mb.getStringAttr("private"), type, value,
                           /*constant=*/true, mb.getI64IntegerAttr(64));
  return memref::GetGlobalOp::create(b, loc, type, name);
}
