//===- VectorizeInt8Conv.cpp - int8 dot-product kernels for convs -*- C++ -*-===//
//
// The second form kiln-vectorize-int8-matmul takes: the integer convs by
// constant weights (ConvInteger, QLinearConv; Int8ConstantWeights.cpp,
// convConstantWeights), a matmul with the weights on the left,
//
//   out[..., m, p] += ext(X[..., k, p]) * extsi(W'[m, k])   (i32; X u8 or s8)
//
// X [..., K, P] the input (im2col'd unless the conv is 1x1), W' [M, K] an
// int8 constant, out [..., M, P] the output in NCHW order. The lanes run
// along the output positions p, so the output needs no transpose; the dot
// product wants G consecutive k of one position side by side (4 bytes or
// 2 words), which X has a row apart. So, for each tile of NR = NV x L positions (the
// parallel loop), for each dim before k, for each chunk of K:
//   pack: per group of 4 k, the 4 rows' NR bytes (vector loads, masked in
//     the last tile) interleaved into NR x 4 bytes, in a per-thread
//     buffer on the stack [chunk / 4][NR * 4] (about 32 KiB), top bits
//     flipped when the dot product reads the other signedness than X's;
//   per tile of MR output channels: MR x NV accumulators (vector<L x i32>)
//     start from the output; per group, NV buffer vectors, and per row
//     the row's 4 weights as one i32 (a compile-time packed [M, K / 4]
//     global) broadcast to every lane; one dot product per accumulator;
//     stores.
// The packing costs one pass over X per tile, shared by all M rows.
// When the op right after the kernel is an elementwise generic that reads
// the output as it is (the float epilogue: dequantisation, bias,
// activation, residual add, the next op's quantisation), writes a
// contiguous buffer of the same positions, and the int32 output is read by
// nothing else, the last chunk's stores apply its body to the
// accumulators and write its result instead: the int32 output is never
// written out and read back.
// Every kind of the matmul kernels: the byte kinds (vnni512: vpdpbusd,
// u8 x s8; sdot128: s8 x s8) pack groups of 4 k as bytes; the word kinds
// (pmaddwd512/256: vpmaddwd, then vpaddd) groups of 2 k as words widened
// by X's signedness, the weights as sign-extended words. Exact as the
// matmul kernels are: flipped bytes (X + 128 or X - 128) are corrected by
// -+128 x sum_k W'[m, k] from a constant, added to the accumulators with
// the first chunk; words need no correction.
//
//===----------------------------------------------------------------------===//

#include "passes/Codegen/CPU/Contraction.h"
#include "passes/Codegen/CPU/Int8Dot.h"
#include "passes/Codegen/CPU/VectorHelpers.h"
#include "passes/Utils/Int8Matmul.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cstring>

using namespace mlir;
using kiln::int8::ByteOperand;
using kiln::int8::DotKind;

namespace {

/// The weights-left int8 matmul `op` is, if the kernel takes it.
struct WeightsLeft {
  linalg::GenericOp op;
  Value x, out;
  /// The zero fill of `out` before the op (erased with it): the first
  /// chunk's accumulators start from zero instead of loading the output.
  Operation *zeroFill = nullptr;
  ArrayRef<char> weights; ///< W' [M, K], row-major int8.
  bool signedX = false;
  int64_t m = 0, p = 0, k = 0;
  SmallVector<int64_t> batch; ///< X's and the output's dims before k and m.
};

std::optional<WeightsLeft> match(linalg::GenericOp op) {
  std::optional<kiln::int8::Int8Contraction> c =
      kiln::int8::matchInt8Contraction(op, kiln::int8WeightsLeftMaps);
  if (!c)
    return std::nullopt;
  WeightsLeft wl;
  wl.op = op;
  wl.x = c->x;
  wl.out = c->out;
  wl.signedX = c->signedX;
  wl.weights = c->weights;
  wl.zeroFill = c->zeroFill;
  int64_t r = c->xType.getRank();
  wl.m = c->wType.getDimSize(0);
  wl.k = c->wType.getDimSize(1);
  wl.p = c->xType.getDimSize(r - 1);
  wl.batch.assign(c->xType.getShape().begin(), c->xType.getShape().end() - 2);
  if (c->xType.getDimSize(r - 2) != wl.k || c->outType.getDimSize(r - 2) != wl.m ||
      c->outType.getDimSize(r - 1) != wl.p ||
      c->outType.getShape().drop_back(2) != ArrayRef<int64_t>(wl.batch) || wl.k < 1)
    return std::nullopt;
  return wl;
}

/// The elementwise generic right after the kernel that reads its output
/// (the float epilogue: scale, bias, activation, residual add, the next
/// op's quantisation), when the kernel can apply it to its accumulators
/// and write its result instead: all loops parallel, a vectorisable body
/// that does not read its own output, the iteration space the kernel's
/// output with the positions unflattened, every operand contiguous with
/// an identity map (then read as [..., M, P]) or indexed by the batch and
/// channel dims alone (a per-channel or scalar value), and the kernel's
/// output read by nothing else.
struct Epilogue {
  linalg::GenericOp op;
  unsigned accInput = 0;
  /// Per input: its [..., M, P] view (identity map), or null (a value
  /// indexed by the batch and channel dims: its map).
  SmallVector<Value> views;
  Value output; ///< The consumer's output.
  /// The views and constants between the kernel and the consumer, moved
  /// before the kernel (which then reads them).
  SmallVector<Operation *> between;
};

/// `v` through views (reshapes, casts) back to the value it views.
Value viewedBase(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// `v` (contiguous, identity layout, of `shape`) as [batch..., M, P].
Value flatView(OpBuilder &b, Location loc, Value v, int64_t batch) {
  auto type = cast<MemRefType>(v.getType());
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d <= batch; ++d)
    groups.push_back({d});
  ReassociationIndices rest;
  for (int64_t d = batch + 1; d < type.getRank(); ++d)
    rest.push_back(d);
  groups.push_back(rest);
  return memref::CollapseShapeOp::create(b, loc, v, groups);
}

std::optional<Epilogue> matchEpilogue(const WeightsLeft &wl) {
  Operation *next = wl.op->getNextNode();
  SmallVector<Operation *> between;
  while (next && isMemoryEffectFree(next) && next->getNumRegions() == 0) {
    between.push_back(next);
    next = next->getNextNode();
  }
  auto consumer = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!consumer || !consumer.hasPureBufferSemantics() || consumer.getNumDpsInits() != 1 ||
      consumer.getNumReductionLoops() != 0 || !kiln::vec::vectorisableBody(consumer))
    return std::nullopt;
  Block &body = consumer.getRegion().front();
  if (!body.getArguments().back().use_empty())
    return std::nullopt;
  int64_t nb = int64_t(wl.batch.size());
  // The iteration space: [batch..., M, spatial...] with the spatial dims
  // P in all.
  OpOperand *init = consumer.getDpsInitOperand(0);
  auto initType = dyn_cast<MemRefType>(init->get().getType());
  if (!initType || !initType.hasStaticShape() || !initType.getLayout().isIdentity() ||
      initType.getRank() < nb + 2 || initType.getRank() != int64_t(consumer.getNumLoops()) ||
      !consumer.getMatchingIndexingMap(init).isIdentity())
    return std::nullopt;
  ArrayRef<int64_t> shape = initType.getShape();
  int64_t positions = 1;
  for (int64_t d = nb + 1; d < initType.getRank(); ++d)
    positions *= shape[size_t(d)];
  if (shape.take_front(nb) != ArrayRef<int64_t>(wl.batch) || shape[size_t(nb)] != wl.m ||
      positions != wl.p)
    return std::nullopt;
  Epilogue e;
  e.op = consumer;
  bool found = false;
  for (OpOperand *in : consumer.getDpsInputOperands()) {
    AffineMap map = consumer.getMatchingIndexingMap(in);
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
    if (map.isIdentity()) {
      if (type.getShape() != shape || !type.getLayout().isIdentity())
        return std::nullopt;
      if (!found && viewedBase(in->get()) == viewedBase(wl.out)) {
        e.accInput = in->getOperandNumber();
        found = true;
      }
      e.views.push_back(in->get());
      continue;
    }
    // Indexed by the batch and channel dims alone (or constant 0).
    for (AffineExpr r : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(r);
      auto constant = dyn_cast<AffineConstantExpr>(r);
      if (!(dim && int64_t(dim.getPosition()) <= nb) && !(constant && constant.getValue() == 0))
        return std::nullopt;
    }
    e.views.push_back(Value());
  }
  if (!found)
    return std::nullopt;
  // The kernel's output is read by nothing else: its users (and its
  // views') are the kernel, its zero fill and the consumer.
  // A function's argument (an output of the model, or read by its caller)
  // keeps its values.
  Operation *kernel = wl.op;
  Value base = viewedBase(wl.out);
  if (isa<BlockArgument>(base))
    return std::nullopt;
  SmallVector<Value> work{base};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(user)) {
        work.push_back(user->getResult(0));
        continue;
      }
      if (user != kernel && user != consumer.getOperation() && user != wl.zeroFill)
        return std::nullopt;
    }
  }
  e.output = init->get();
  // The kernel now writes the epilogue's output while it still reads X
  // (every tile) and the epilogue's inputs (its own positions): the
  // output may share no memory with X, and with an input only as the same
  // buffer of the same element width (each position read, then written,
  // by the same lane).
  auto elementBits = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementTypeBitWidth();
  };
  if (kiln::vec::mayOverlap(e.output, wl.x))
    return std::nullopt;
  for (OpOperand *in : consumer.getDpsInputOperands()) {
    Value v = in->get();
    bool samePositions = viewedBase(v) == viewedBase(e.output) &&
                         elementBits(v) == elementBits(e.output) &&
                         consumer.getMatchingIndexingMap(in).isIdentity();
    if (!samePositions && kiln::vec::mayOverlap(v, e.output))
      return std::nullopt;
  }
  e.between = std::move(between);
  return e;
}

class WeightsLeftBuilder {
public:
  WeightsLeftBuilder(const WeightsLeft &wl, const DotKind &dot, bool parallel,
                     std::optional<Epilogue> epilogue)
      : wl(wl), dot(dot), parallel(parallel), epilogue(std::move(epilogue)),
        flip(dot.a == ByteOperand::Unsigned ? wl.signedX
             : dot.a == ByteOperand::Signed ? !wl.signedX
                                            : false) {
    int64_t lanes = dot.lanes, g = dot.group;
    // 32 positions per tile on 16 lanes, 16 on 8 (AVX2) and 4 (NEON).
    nv = std::clamp<int64_t>((wl.p + lanes - 1) / lanes, 1, lanes >= 8 ? 2 : 4);
    // Accumulators, the buffer vectors and one broadcast (and vpmaddwd's
    // product) in the registers; of the row counts that fit, one that
    // divides M if there is one.
    int64_t most =
        std::min<int64_t>((dot.registers - nv - (dot.accumulates ? 1 : 2)) / nv, 12);
    mr = std::min(most, wl.m);
    for (int64_t rows = mr; rows >= std::min<int64_t>(4, mr); --rows)
      if (wl.m % rows == 0) {
        mr = rows;
        break;
      }
    groups = (wl.k + g - 1) / g;
    // G bytes or G words per lane: 4 bytes either way.
    int64_t groupBytes = nv * lanes * 4;
    chunk = std::clamp<int64_t>((int64_t(32) << 10) / groupBytes, 1, groups);
    chunks = (groups + chunk - 1) / chunk;
  }

  void build(ModuleOp module, unsigned &globals);

private:
  Location loc() const { return wl.op->getLoc(); }
  Value index(OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc(), v); }
  /// The tile of positions at `p0` (`vectors` vectors, the last with
  /// `lastOn` lanes in bounds), for every dim before k.
  void positionTile(OpBuilder &b, Value p0, int64_t vectors, int64_t lastOn);
  /// Packs groups [g0, g0 + count) of the tile into the buffer.
  void pack(OpBuilder &b, ArrayRef<Value> outer, Value g0, Value count, Value p0,
            int64_t vectors, int64_t lastOn);
  /// The tile of `rows` output channels at `m0`, groups [g0, g0 + count)
  /// from the buffer; `first` is true in the first chunk.
  void rowTile(OpBuilder &b, ArrayRef<Value> outer, Value first, Value last, Value g0,
               Value count,
               Value m0, int64_t rows, Value p0, int64_t vectors, int64_t lastOn);

  /// The accumulators of rows m0 + r, positions p0 + v * L, through the
  /// epilogue into its output (masked to `on` lanes).
  void storeEpilogue(OpBuilder &b, ArrayRef<Value> outer, Value m0, Value p0,
                     ArrayRef<Value> accs, int64_t rows, int64_t vectors, int64_t lastOn);

  const WeightsLeft &wl;
  const DotKind &dot;
  bool parallel;
  std::optional<Epilogue> epilogue;
  /// The epilogue's operands as [..., M, P] (null: per channel), made
  /// before the kernel's loops.
  SmallVector<Value> views;
  Value epilogueOutput;
  /// X's bytes are read with their top bit flipped (the dot product's
  /// other signedness); the correction constant takes the difference off.
  bool flip;
  int64_t nv = 1, mr = 1, groups = 1, chunk = 1, chunks = 1;
  Value weights, correction, buffer;
};

void WeightsLeftBuilder::build(ModuleOp module, unsigned &globals) {
  OpBuilder b(wl.op);
  // W' as one i32 per row and group of G k (4 bytes or 2 sign-extended
  // words; zero past K), and the correction for flipped bytes: sum_k (X +-
  // 128) W' = sum_k X W' +- 128 sum_k W'.
  int64_t g = dot.group;
  std::vector<char> packed(size_t(wl.m * groups * 4), 0);
  std::vector<int32_t> sums(size_t(wl.m), 0);
  for (int64_t i = 0; i < wl.m; ++i)
    for (int64_t kk = 0; kk < wl.k; ++kk) {
      char v = wl.weights[size_t(i * wl.k + kk)];
      if (g == 4) {
        packed[size_t(i * groups * 4 + kk)] = v;
      } else {
        int16_t word = int8_t(v);
        std::memcpy(&packed[size_t(i * groups * 4 + kk * 2)], &word, 2);
      }
      sums[size_t(i)] += (dot.a == ByteOperand::Unsigned ? -128 : 128) * int32_t(int8_t(v));
    }
  weights = kiln::int8::packedGlobal(b, loc(), module, globals, b.getI32Type(),
                                     {wl.m, groups}, packed);
  if (flip)
    correction = kiln::int8::packedGlobal(
        b, loc(), module, globals, b.getI32Type(), {wl.m},
        ArrayRef<char>(reinterpret_cast<const char *>(sums.data()), sums.size() * 4));
  if (epilogue) {
    for (Operation *op : epilogue->between)
      op->moveBefore(wl.op);
    b.setInsertionPoint(wl.op);
    int64_t nb = int64_t(wl.batch.size());
    for (Value v : epilogue->views)
      views.push_back(v ? flatView(b, loc(), v, nb) : Value());
    epilogueOutput = flatView(b, loc(), epilogue->output, nb);
  }
  // The buffer: a scratch alloca (each thread of a parallel loop makes
  // its own; kiln-outline-parallel-loops remakes it), its stack freed
  // after the kernel.
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value stack = LLVM::StackSaveOp::create(b, loc(), ptr);
  int64_t width = nv * dot.lanes;
  buffer = memref::AllocaOp::create(
      b, loc(), MemRefType::get({chunk, width * g}, b.getIntegerType(unsigned(32 / g))),
      b.getI64IntegerAttr(64));
  buffer.getDefiningOp()->setAttr("kiln.scratch", b.getUnitAttr());
  int64_t tiles = (wl.p + width - 1) / width, full = wl.p / width, rest = wl.p % width;
  auto loop = scf::ForOp::create(b, loc(), index(b, 0), index(b, tiles), index(b, 1));
  LLVM::StackRestoreOp::create(b, loc(), stack);
  int64_t work = wl.m * wl.p * wl.k;
  for (int64_t d : wl.batch)
    work *= d;
  if (parallel && tiles >= 2 && work >= kiln::vec::kParallelWork &&
      !kiln::vec::insideParallelLoop(wl.op))
    loop->setAttr("kiln.parallel", b.getUnitAttr());
  OpBuilder lb = OpBuilder::atBlockTerminator(loop.getBody());
  Value p0 = arith::MulIOp::create(lb, loc(), loop.getInductionVar(), index(lb, width));
  if (!rest)
    return positionTile(lb, p0, nv, dot.lanes);
  int64_t restVectors = (rest + dot.lanes - 1) / dot.lanes;
  int64_t lastOn = rest - (restVectors - 1) * dot.lanes;
  if (!full)
    return positionTile(lb, p0, restVectors, lastOn);
  Value whole = arith::CmpIOp::create(lb, loc(), arith::CmpIPredicate::slt,
                                      loop.getInductionVar(), index(lb, full));
  auto branch = scf::IfOp::create(lb, loc(), whole, /*withElseRegion=*/true);
  OpBuilder tb = branch.getThenBodyBuilder();
  positionTile(tb, p0, nv, dot.lanes);
  OpBuilder eb = branch.getElseBodyBuilder();
  positionTile(eb, p0, restVectors, lastOn);
}

void WeightsLeftBuilder::positionTile(OpBuilder &b, Value p0, int64_t vectors, int64_t lastOn) {
  SmallVector<Value> outer;
  OpBuilder inner = b;
  for (int64_t d : wl.batch) {
    auto loop = scf::ForOp::create(inner, loc(), index(inner, 0), index(inner, d), index(inner, 1));
    outer.push_back(loop.getInductionVar());
    inner = OpBuilder::atBlockTerminator(loop.getBody());
  }
  auto chunkLoop =
      scf::ForOp::create(inner, loc(), index(inner, 0), index(inner, chunks), index(inner, 1));
  OpBuilder cb = OpBuilder::atBlockTerminator(chunkLoop.getBody());
  Value c = chunkLoop.getInductionVar();
  Value g0 = arith::MulIOp::create(cb, loc(), c, index(cb, chunk));
  Value count = arith::MinSIOp::create(
      cb, loc(), index(cb, chunk), arith::SubIOp::create(cb, loc(), index(cb, groups), g0));
  Value first = arith::CmpIOp::create(cb, loc(), arith::CmpIPredicate::eq, c, index(cb, 0));
  Value last =
      arith::CmpIOp::create(cb, loc(), arith::CmpIPredicate::eq, c, index(cb, chunks - 1));
  pack(cb, outer, g0, count, p0, vectors, lastOn);
  int64_t fullRows = wl.m / mr * mr, restRows = wl.m % mr;
  if (fullRows) {
    auto rows =
        scf::ForOp::create(cb, loc(), index(cb, 0), index(cb, fullRows), index(cb, mr));
    OpBuilder rb = OpBuilder::atBlockTerminator(rows.getBody());
    rowTile(rb, outer, first, last, g0, count, rows.getInductionVar(), mr, p0, vectors, lastOn);
  }
  if (restRows)
    rowTile(cb, outer, first, last, g0, count, index(cb, fullRows), restRows, p0, vectors,
            lastOn);
}

void WeightsLeftBuilder::pack(OpBuilder &b, ArrayRef<Value> outer, Value g0, Value count,
                              Value p0, int64_t vectors, int64_t lastOn) {
  int64_t lanes = dot.lanes, g = dot.group;
  Type i8 = b.getI8Type();
  auto rowType = VectorType::get({lanes}, i8);
  auto packedType = VectorType::get({lanes * g}, b.getIntegerType(unsigned(32 / g)));
  // Lane i of the first operand, then lane i of the second.
  SmallVector<int64_t> interleave;
  for (int64_t i = 0; i < lanes; ++i) {
    interleave.push_back(i);
    interleave.push_back(lanes + i);
  }
  auto loop = scf::ForOp::create(b, loc(), index(b, 0), count, index(b, 1));
  OpBuilder gb = OpBuilder::atBlockTerminator(loop.getBody());
  Value group = loop.getInductionVar();
  Value k0 = arith::MulIOp::create(gb, loc(), arith::AddIOp::create(gb, loc(), g0, group),
                                   index(gb, g));
  Value zero = arith::ConstantOp::create(gb, loc(), rowType, gb.getZeroAttr(rowType));
  for (int64_t v = 0; v < vectors; ++v) {
    int64_t on = v + 1 == vectors ? lastOn : lanes;
    Value at = arith::AddIOp::create(gb, loc(), p0, index(gb, v * lanes));
    SmallVector<Value> rows;
    for (int64_t j = 0; j < g; ++j) {
      Value kk = arith::AddIOp::create(gb, loc(), k0, index(gb, j));
      if (wl.k % g == 0) {
        SmallVector<Value> idx(outer.begin(), outer.end());
        idx.append({kk, at});
        rows.push_back(kiln::vec::load(gb, loc(), wl.x, idx, rowType, on));
        continue;
      }
      // The last group is partial: rows past K read row K - 1 and become
      // zero (their weights are zero too).
      Value in = arith::CmpIOp::create(gb, loc(), arith::CmpIPredicate::slt, kk, index(gb, wl.k));
      SmallVector<Value> idx(outer.begin(), outer.end());
      idx.append({arith::MinSIOp::create(gb, loc(), kk, index(gb, wl.k - 1)), at});
      Value row = kiln::vec::load(gb, loc(), wl.x, idx, rowType, on);
      rows.push_back(arith::SelectOp::create(gb, loc(), in, row, zero));
    }
    auto wordType = VectorType::get({lanes}, gb.getI16Type());
    if (g == 2) {
      // Words: the two rows widened by X's signedness, interleaved.
      auto widen = [&](Value row) {
        return wl.signedX ? Value(arith::ExtSIOp::create(gb, loc(), wordType, row))
                          : Value(arith::ExtUIOp::create(gb, loc(), wordType, row));
      };
      Value words = vector::ShuffleOp::create(gb, loc(), widen(rows[0]), widen(rows[1]),
                                              interleave);
      vector::StoreOp::create(gb, loc(), words, buffer,
                              ValueRange{group, index(gb, v * lanes * 2)});
      continue;
    }
    // Bytes (r0 r1) and (r2 r3) paired, then the pairs as words.
    Value low = vector::ShuffleOp::create(gb, loc(), rows[0], rows[1], interleave);
    Value high = vector::ShuffleOp::create(gb, loc(), rows[2], rows[3], interleave);
    Value words = vector::ShuffleOp::create(
        gb, loc(), vector::BitCastOp::create(gb, loc(), wordType, low),
        vector::BitCastOp::create(gb, loc(), wordType, high), interleave);
    Value bytes = vector::BitCastOp::create(gb, loc(), packedType, words);
    if (flip) {
      auto top = arith::ConstantOp::create(
          gb, loc(), packedType, DenseElementsAttr::get(packedType, gb.getI8IntegerAttr(-128)));
      bytes = arith::XOrIOp::create(gb, loc(), bytes, top);
    }
    vector::StoreOp::create(gb, loc(), bytes, buffer, ValueRange{group, index(gb, v * lanes * 4)});
  }
}

void WeightsLeftBuilder::rowTile(OpBuilder &b, ArrayRef<Value> outer, Value first, Value last,
                                 Value g0, Value count, Value m0, int64_t rows, Value p0,
                                 int64_t vectors, int64_t lastOn) {
  Type i32 = b.getI32Type();
  int64_t lanes = dot.lanes;
  auto accType = VectorType::get({lanes}, i32);
  // The dot product's operands: G bytes or G words per lane.
  auto operandType =
      VectorType::get({lanes * dot.group}, b.getIntegerType(unsigned(32 / dot.group)));
  auto on = [&](int64_t v) { return v + 1 == vectors ? lastOn : lanes; };
  auto outIndex = [&](OpBuilder &b, int64_t r, int64_t v) {
    SmallVector<Value> idx(outer.begin(), outer.end());
    idx.push_back(arith::AddIOp::create(b, loc(), m0, index(b, r)));
    idx.push_back(arith::AddIOp::create(b, loc(), p0, index(b, v * lanes)));
    return idx;
  };
  // The accumulators: the output so far, or in the first chunk zero when
  // a zero fill came before; plus the correction in the first chunk.
  auto loaded = [&](OpBuilder &b) {
    SmallVector<Value> accs;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < vectors; ++v)
        accs.push_back(kiln::vec::load(b, loc(), wl.out, outIndex(b, r, v), accType, on(v)));
    return accs;
  };
  auto zeros = [&](OpBuilder &b) {
    Value zero = arith::ConstantOp::create(b, loc(), accType, b.getZeroAttr(accType));
    return SmallVector<Value>(size_t(rows * vectors), zero);
  };
  SmallVector<Value> inits;
  if (!wl.zeroFill) {
    inits = loaded(b);
  } else if (chunks == 1) {
    inits = zeros(b);
  } else {
    SmallVector<Type> types(size_t(rows * vectors), accType);
    auto branch = scf::IfOp::create(b, loc(), types, first, /*withElseRegion=*/true);
    OpBuilder tb = branch.getThenBodyBuilder();
    scf::YieldOp::create(tb, loc(), zeros(tb));
    OpBuilder eb = branch.getElseBodyBuilder();
    scf::YieldOp::create(eb, loc(), loaded(eb));
    inits.assign(branch.getResults().begin(), branch.getResults().end());
  }
  for (int64_t r = 0; correction && r < rows; ++r) {
    Value row = arith::AddIOp::create(b, loc(), m0, index(b, r));
    Value c = memref::LoadOp::create(b, loc(), correction, ValueRange{row});
    c = arith::SelectOp::create(b, loc(), first, c,
                                arith::ConstantIntOp::create(b, loc(), i32, 0));
    Value add = vector::BroadcastOp::create(b, loc(), accType, c);
    for (int64_t v = 0; v < vectors; ++v)
      inits[size_t(r * vectors + v)] =
          arith::AddIOp::create(b, loc(), inits[size_t(r * vectors + v)], add);
  }
  auto intrinsic = StringAttr::get(b.getContext(), dot.intrinsic);
  auto groupLoop = scf::ForOp::create(
      b, loc(), index(b, 0), count, index(b, 1), inits,
      [&](OpBuilder &gb, Location l, Value g, ValueRange accs) {
        SmallVector<Value> panel;
        for (int64_t v = 0; v < vectors; ++v)
          panel.push_back(vector::LoadOp::create(gb, l, operandType, buffer,
                                                 ValueRange{g, index(gb, v * lanes * dot.group)}));
        Value group = arith::AddIOp::create(gb, l, g0, g);
        SmallVector<Value> next;
        for (int64_t r = 0; r < rows; ++r) {
          Value row = arith::AddIOp::create(gb, l, m0, index(gb, r));
          Value w = memref::LoadOp::create(gb, l, weights, ValueRange{row, group});
          Value ws = vector::BitCastOp::create(gb, l, operandType,
                                               vector::BroadcastOp::create(gb, l, accType, w));
          for (int64_t v = 0; v < vectors; ++v) {
            Value acc = accs[size_t(r * vectors + v)];
            if (dot.accumulates) {
              next.push_back(LLVM::CallIntrinsicOp::create(gb, l, accType, intrinsic,
                                                           ValueRange{acc, panel[size_t(v)], ws})
                                 .getResult(0));
              continue;
            }
            Value products = LLVM::CallIntrinsicOp::create(gb, l, accType, intrinsic,
                                                           ValueRange{panel[size_t(v)], ws})
                                 .getResult(0);
            next.push_back(arith::AddIOp::create(gb, l, acc, products));
          }
        }
        scf::YieldOp::create(gb, l, next);
      });
  auto storeAccs = [&](OpBuilder &b) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < vectors; ++v)
        kiln::vec::store(b, loc(), groupLoop.getResult(unsigned(r * vectors + v)), wl.out,
                         outIndex(b, r, v), on(v));
  };
  if (!epilogue)
    return storeAccs(b);
  SmallVector<Value> accs(groupLoop.getResults().begin(), groupLoop.getResults().end());
  if (chunks == 1)
    return storeEpilogue(b, outer, m0, p0, accs, rows, vectors, lastOn);
  // The last chunk's sums through the epilogue, the others kept.
  auto branch = scf::IfOp::create(b, loc(), last, /*withElseRegion=*/true);
  OpBuilder tb = branch.getThenBodyBuilder();
  storeEpilogue(tb, outer, m0, p0, accs, rows, vectors, lastOn);
  OpBuilder eb = branch.getElseBodyBuilder();
  storeAccs(eb);
}

void WeightsLeftBuilder::storeEpilogue(OpBuilder &b, ArrayRef<Value> outer, Value m0, Value p0,
                                       ArrayRef<Value> accs, int64_t rows, int64_t vectors,
                                       int64_t lastOn) {
  int64_t lanes = dot.lanes;
  linalg::GenericOp op = epilogue->op;
  Block &body = op.getRegion().front();
  for (int64_t r = 0; r < rows; ++r) {
    Value row = arith::AddIOp::create(b, loc(), m0, index(b, r));
    // Per-channel values: one load per row, broadcast.
    SmallVector<Value> scalars(views.size());
    for (size_t i = 0; i < views.size(); ++i) {
      if (views[i])
        continue;
      OpOperand *in = op.getDpsInputOperand(unsigned(i));
      SmallVector<Value> idx;
      for (AffineExpr e : op.getMatchingIndexingMap(in).getResults()) {
        auto dim = dyn_cast<AffineDimExpr>(e);
        if (!dim)
          idx.push_back(index(b, 0));
        else if (int64_t(dim.getPosition()) < int64_t(outer.size()))
          idx.push_back(outer[dim.getPosition()]);
        else
          idx.push_back(row);
      }
      scalars[i] = memref::LoadOp::create(b, loc(), in->get(), idx);
    }
    for (int64_t v = 0; v < vectors; ++v) {
      int64_t on = v + 1 == vectors ? lastOn : lanes;
      SmallVector<Value> idx(outer.begin(), outer.end());
      idx.push_back(row);
      idx.push_back(arith::AddIOp::create(b, loc(), p0, index(b, v * lanes)));
      IRMapping map;
      for (size_t i = 0; i < views.size(); ++i) {
        Type elem = body.getArgument(unsigned(i)).getType();
        auto type = VectorType::get({lanes}, elem);
        Value value;
        if (i == epilogue->accInput)
          value = accs[size_t(r * vectors + v)];
        else if (views[i])
          value = kiln::vec::load(b, loc(), views[i], idx, type, on);
        else
          value = vector::BroadcastOp::create(b, loc(), type, scalars[i]);
        map.map(body.getArgument(unsigned(i)), value);
      }
      SmallVector<Value> results = kiln::vec::vectorizeBody(b, op, map, lanes);
      kiln::vec::store(b, loc(), results[0], epilogueOutput, idx, on);
    }
  }
}

} // namespace

bool kiln::int8::vectorizeWeightsLeft(linalg::GenericOp op, const DotKind &dot, bool parallel,
                                      ModuleOp module, unsigned &globals,
                                      llvm::SmallPtrSetImpl<Operation *> &erased) {
  std::optional<WeightsLeft> wl = match(op);
  if (!wl)
    return false;
  std::optional<Epilogue> epilogue = matchEpilogue(*wl);
  WeightsLeftBuilder(*wl, dot, parallel, epilogue).build(module, globals);
  if (epilogue) {
    erased.insert(epilogue->op);
    epilogue->op.erase();
  }
  if (wl->zeroFill)
    wl->zeroFill->erase();
  return true;
}
