//===- Patterns.h - onnx -> linalg patterns and helpers -----------*- C++ -*-===//
//
// Shared by the per-category files of the onnx -> linalg conversion: the
// populate functions, the type converter (unsigned -> signless), and small
// builders for the linalg/tensor idioms every category uses.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CONVERSION_ONNXTOLINALG_PATTERNS_H
#define KILN_PASSES_CONVERSION_ONNXTOLINALG_PATTERNS_H

#include "dialects/Onnx/IR/DataTypes.h"
#include "dialects/Onnx/IR/OnnxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace kiln::lowering {

/// ONNX types use unsigned integers (ui8...); arith wants signless ones.
/// This converter maps `tensor<..xui8>` to `tensor<..xi8>` and leaves
/// everything else alone. Patterns read signedness from the original op.
class OnnxTypeConverter : public mlir::TypeConverter {
public:
  OnnxTypeConverter();
};

/// Adds the name of every op it lowers to `dynamicReady` (if given): the
/// elementwise lowering handles dynamic dims.
void populateElementwisePatterns(const mlir::TypeConverter &converter,
                                 mlir::RewritePatternSet &patterns,
                                 llvm::StringSet<> *dynamicReady = nullptr);
void populateLinearPatterns(const mlir::TypeConverter &converter,
                            mlir::RewritePatternSet &patterns);
/// With `winograd`, 3x3 convs that fit winogradFits use Winograd F(2x2, 3x3)
/// or, on maps of 28x28 and up, F(4x4, 3x3).
void populateConvolutionPatterns(const mlir::TypeConverter &converter,
                                 mlir::RewritePatternSet &patterns, bool winograd = false);
void populatePoolingPatterns(const mlir::TypeConverter &converter,
                             mlir::RewritePatternSet &patterns);
void populateReductionPatterns(const mlir::TypeConverter &converter,
                               mlir::RewritePatternSet &patterns);
void populateDataMovementPatterns(const mlir::TypeConverter &converter,
                                  mlir::RewritePatternSet &patterns);
void populateSlicingPatterns(const mlir::TypeConverter &converter,
                             mlir::RewritePatternSet &patterns);
void populateNormalizationPatterns(const mlir::TypeConverter &converter,
                                   mlir::RewritePatternSet &patterns);
void populateIndexingPatterns(const mlir::TypeConverter &converter,
                              mlir::RewritePatternSet &patterns);
void populateGatherScatterPatterns(const mlir::TypeConverter &converter,
                                   mlir::RewritePatternSet &patterns);
void populateLossPatterns(const mlir::TypeConverter &converter,
                          mlir::RewritePatternSet &patterns);
void populateResizePatterns(const mlir::TypeConverter &converter,
                            mlir::RewritePatternSet &patterns);
void populateQuantizePatterns(const mlir::TypeConverter &converter,
                              mlir::RewritePatternSet &patterns);
void populateRecurrentPatterns(const mlir::TypeConverter &converter,
                               mlir::RewritePatternSet &patterns);
void populateSamplingPatterns(const mlir::TypeConverter &converter,
                              mlir::RewritePatternSet &patterns);
void populateSelectionPatterns(const mlir::TypeConverter &converter,
                               mlir::RewritePatternSet &patterns);
void populateTextPatterns(const mlir::TypeConverter &converter,
                          mlir::RewritePatternSet &patterns);
void populateMatrixPatterns(const mlir::TypeConverter &converter,
                            mlir::RewritePatternSet &patterns);
void populateStringPatterns(const mlir::TypeConverter &converter,
                            mlir::RewritePatternSet &patterns);

// String tensors (Strings.cpp): tensors of i64, each element the address of
// a NUL-terminated UTF-8 text; text is read and made by the C runtime's
// kiln_string_* hooks.

using onnx::isStringType; // dialects/Onnx/IR/DataTypes.h
/// Whether a Cast to or from string handles `type` (string, floats, 8- to
/// 64-bit integers).
bool isStringCastable(mlir::Type type);
/// Calls the runtime hook `name` (declared in `module` if need be).
mlir::Value callStringHook(mlir::OpBuilder &b, mlir::Location loc, mlir::ModuleOp module,
                           llvm::StringRef name, mlir::Type result, mlir::ValueRange args);
/// The i64 address of `texts`, stored one after the other, NUL-terminated,
/// in a private constant global ("" for none).
mlir::Value constantStrings(mlir::OpBuilder &b, mlir::Location loc, mlir::ModuleOp module,
                            llvm::ArrayRef<std::string> texts);
/// ONNX Cast of scalar text `s` to element type `to`, and of scalar `x` of
/// element type `from` to a text.
mlir::Value castFromString(mlir::OpBuilder &b, mlir::Location loc, mlir::ModuleOp module,
                           mlir::Value s, mlir::Type to);
mlir::Value castToString(mlir::OpBuilder &b, mlir::Location loc, mlir::ModuleOp module,
                         mlir::Value x, mlir::Type from);
/// Copies `func`'s string results (by index) with kiln_string_export before
/// it returns, so that the caller owns every output string.
void exportStringResults(mlir::func::FuncOp func, llvm::ArrayRef<unsigned> results);
void populateSpectralPatterns(const mlir::TypeConverter &converter,
                              mlir::RewritePatternSet &patterns);

/// Rewrites every onnx If, Loop and Scan of `module` into scf ops around
/// their (inlined) subgraphs; errors on the op when one cannot be.
mlir::LogicalResult lowerControlFlow(mlir::ModuleOp module);

/// Declines `op` in a pattern, recording `reason` for the pass to report as
/// the user-facing error (MLIR's notifyMatchFailure alone is not shown).
mlir::LogicalResult unsupported(mlir::ConversionPatternRewriter &rewriter,
                                mlir::Operation *op, const llvm::Twine &reason);

/// Where unsupported() records reasons while the pass runs (nullptr: off).
void setFailureLog(llvm::DenseMap<mlir::Operation *, std::string> *log);

/// "the CPU backend" or "the GPU backend": the pass's `backend` option, as
/// refusals name it (set while the pass runs).
std::string backendName();
void setBackendName(llvm::StringRef name);

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// The signless version of an (ONNX) element type.
mlir::Type signlessType(mlir::Type type);

/// The element type of a shaped value or type as ONNX sees it (may be
/// unsigned).
mlir::Type elementTypeOf(mlir::Value v);

/// f32 or f64: the float types the CPU backend computes in today.
bool isSupportedFloat(mlir::Type type);
/// Signed, unsigned or signless integers of 8..64 bits (not i1).
bool isSupportedInt(mlir::Type type);
bool isBool(mlir::Type type);

/// A readable element type name for diagnostics ("float32", "uint8").
std::string typeName(mlir::Type type);

/// acc + x * y, for floats or integers: a contraction's body.
mlir::Value multiplyAdd(mlir::OpBuilder &b, mlir::Location loc, mlir::Value acc,
                        mlir::Value x, mlir::Value y);

/// Converts scalar `v` (signless, of ONNX type `from`) to ONNX type `to`
/// with ONNX Cast semantics (float->int truncates toward zero, x != 0 for
/// bool). Returns a signless value.
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       mlir::Type from, mlir::Type to);

/// An arith.constant scalar of (signless) `type` with `value`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// An arith.constant of index type.
inline mlir::Value indexConstant(mlir::OpBuilder &b, mlir::Location loc, int64_t value) {
  return mlir::arith::ConstantIndexOp::create(b, loc, value);
}

/// An op's `axis` attribute counted from the front (negative counts from
/// the end); out of [0, rank) when the attribute is.
inline int64_t normalizedAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// Whether `type` has no elements, as far as its static dims tell.
inline bool knownEmpty(mlir::ShapedType type) { return llvm::is_contained(type.getShape(), 0); }

/// The most negative value of a signless float/int type (for max pooling
/// and max reductions), as an attribute.
mlir::TypedAttr lowestValue(mlir::Type type, bool isUnsigned);
mlir::TypedAttr highestValue(mlir::Type type, bool isUnsigned);

//===----------------------------------------------------------------------===//
// Tensor builders
//===----------------------------------------------------------------------===//

/// True if `type` is a ranked tensor with static dims.
bool isStaticTensor(mlir::Type type);

/// The static result type of `op`'s result `index`, converted.
mlir::RankedTensorType convertedResultType(const mlir::TypeConverter &converter,
                                           mlir::Operation *op,
                                           unsigned index = 0);

/// The model's symbolic dims as the lowering sizes them (see
/// DynamicDims.cpp): built from kiln-dim-symbols' attributes before the
/// conversion, which records here where a size could not be told.
class DimSymbolTable {
public:
  void build(mlir::ModuleOp module);
  /// The symbol `type`'s dim `dim` is, for a tensor the pattern lowering
  /// the op at `loc` makes; none if that cannot be told.
  std::optional<int64_t> resolve(mlir::Location loc, mlir::RankedTensorType type,
                                 int64_t dim) const;
  /// Per dim of `v` (an argument or an op result before the conversion):
  /// its symbol, -1 static, -2 not one of the symbols; empty if unknown.
  llvm::SmallVector<int64_t> symbolsOf(mlir::Value v) const;

  /// How diagnostics name the op at `loc` (it is gone after the conversion).
  std::string labelAt(mlir::Location loc) const { return labels.lookup(loc); }

  unsigned numSymbols = 0;
  /// How many expressions kiln-dim-symbols recorded (dim ids numSymbols
  /// and up).
  unsigned numExprs = 0;
  /// How many floor dims (window ops' output sizes) it recorded (ids after
  /// the expressions).
  unsigned numFloors = 0;
  /// How many product dims (a Reshape merging two dims) it recorded (ids
  /// after the floor dims).
  unsigned numProducts = 0;
  /// Whether sizes are looked up (else every `?` is the one symbolic dim).
  bool enabled() const {
    return numSymbols > 1 || numExprs > 0 || numFloors > 0 || numProducts > 0;
  }
  /// What dim id `id` is, as kiln::onnx::dimExpression reads it off the
  /// function that holds the symbols; empty for none.
  llvm::SmallVector<int64_t> expression(int64_t id) const;
  /// The floor dim `id` is ({id', a, s}, kiln::onnx::dimFloor); empty for
  /// none.
  llvm::SmallVector<int64_t> floor(int64_t id) const;
  /// The product dim `id` is ({c, i, j}, kiln::onnx::dimProduct); empty
  /// for none.
  llvm::SmallVector<int64_t> product(int64_t id) const;
  /// The function that holds the symbols' records (kiln.symbol_names).
  mlir::Operation *function() const { return main; }
  /// Per op location, the first size that could not be told.
  llvm::DenseMap<mlir::Location, std::string> failures;

private:
  struct Entry {
    mlir::RankedTensorType type;
    llvm::SmallVector<int64_t> symbols;
    bool result;
  };
  llvm::DenseMap<mlir::Location, llvm::SmallVector<Entry>> byLoc;
  mlir::Operation *main = nullptr; ///< The function with kiln.symbol_names.
  llvm::DenseMap<mlir::Location, std::string> labels;
};

/// Where emptyTensor and dynamicDimSize look symbols up while the pass
/// runs (nullptr: one symbolic dim at most).
void setDimSymbols(DimSymbolTable *table);

/// The run-time size of dim id `symbol` (a symbolic dim or an expression
/// of them): `tensor.dim` of the first argument dim of the enclosing
/// function that is it, else the expression computed from its symbols'
/// (null if none).
mlir::Value symbolSize(mlir::OpBuilder &b, mlir::Location loc, int64_t symbol);

/// The run-time size of `type`'s dynamic dim `dim`, for a tensor that the
/// pattern lowering the op at `loc` makes: the size of the symbolic dim it
/// is (the only one when the model has one).
mlir::Value dynamicDimSize(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::RankedTensorType type, int64_t dim);

/// Marks the function of `op` so that its entry point refuses 0 for the
/// symbolic dim that `v` (an onnx value) has at `dim` (every symbolic dim
/// when that is unknown): `kiln.symbolic_min`, the symbols' indices.
void requireNonZero(mlir::Operation *op, mlir::Value v, int64_t dim);

/// What dim `dim` of `v` (an onnx value) is, as [c0, c_0, ..., c_{n-1}]
/// (c0 + sum c_k dim_k over the model's symbolic dims); none when it is
/// static or not such an expression.
std::optional<llvm::SmallVector<int64_t>> dimExpr(mlir::Value v, int64_t dim);

/// Whether dim `da` of `a` and dim `db` of `b` (onnx values) always have
/// the same size: the same static size, or the same dynamic dim.
bool sameSize(mlir::Value a, int64_t da, mlir::Value b, int64_t db);

/// Makes the entry point of `op`'s function refuse the dims' values for
/// which `expr` (as dimExpr gives it) is negative.
void requireNonNegative(mlir::Operation *op, llvm::ArrayRef<int64_t> expr);

/// A tensor.empty of `type`; its `?` dims have dynamicDimSize's sizes.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);
/// A tensor.empty of `type` with the given sizes of its `?` dims.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type, mlir::ValueRange dynamicSizes);
/// Dim `dim` of the tensor `v` as an index value: a constant when it is
/// static, else `tensor.dim`. (`tensor::getMixedSize` gives it as an
/// OpFoldResult.)
mlir::Value dimValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, int64_t dim);
/// `tensor.dim` of `v` at each of `dims` that is dynamic.
llvm::SmallVector<mlir::Value> dynamicSizesOf(mlir::OpBuilder &b, mlir::Location loc,
                                              mlir::Value v, llvm::ArrayRef<int64_t> dims);

/// A new tensor of `type` filled with `scalar`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value scalar);

/// The map from an output of shape `out` to an operand of shape `in` under
/// numpy broadcasting (leading dims dropped, size-1 dims read at 0).
mlir::AffineMap broadcastMap(mlir::MLIRContext *context,
                             llvm::ArrayRef<int64_t> in,
                             llvm::ArrayRef<int64_t> out);

using ScalarBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// An elementwise linalg.generic over `resultType` reading every input with
/// numpy broadcasting; `body` maps the input scalars to the result scalar.
/// Its dynamic dims are those of `sizesOf` (of the result's rank) when
/// given, else the op's symbols' (emptyTensor): give it for a temporary
/// that is not shaped like the op's result or operands alone, where
/// those could be told apart only by their symbols (an integer matmul's
/// [M, K] operand shifted by its zero point looks like its [M, N] result).
mlir::Value broadcastGeneric(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::ValueRange inputs,
                             mlir::RankedTensorType resultType,
                             ScalarBody body, mlir::Value sizesOf = {});

using ReduceCombine = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::Value acc, mlir::Value x)>;
using ReduceMap =
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value)>;

/// Reduces `x` over the dims where `reduce` is set, starting from `init`;
/// the result keeps those dims with size 1 (so that numpy broadcasting
/// brings it back). `pre`, if given, maps each element before combining.
mlir::Value reduceKeepDims(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                           llvm::ArrayRef<bool> reduce, mlir::TypedAttr init,
                           ReduceCombine combine, ReduceMap pre = nullptr);

/// How many elements of the float tensor `x` a reduction over the dims in
/// `reduce` combines: the static dims' product, and the dynamic dims'
/// sizes multiplied at run time as a value of x's element type (null when
/// none is dynamic).
std::pair<double, mlir::Value> reducedCount(mlir::OpBuilder &b, mlir::Location loc,
                                            mlir::Value x, llvm::ArrayRef<bool> reduce);

/// The mean of a float tensor over the dims in `reduce` (keepdims shape).
mlir::Value meanKeepDims(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                         llvm::ArrayRef<bool> reduce);

/// Softmax (or log-softmax) of a float tensor along `axis`, max-shifted.
mlir::Value softmaxAlong(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                         int64_t axis, bool isLog);

/// A tensor of `type` whose every element is `body`'s value, computed from
/// the output position (linalg.index) in a generic with no inputs.
mlir::Value generateTensor(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location)> body);

/// Copies `src` into a new tensor of `type`, element (d...) reading
/// src[readMap(d...)]: strided, flipped or wrapped reads.
mlir::Value copyThroughMap(mlir::OpBuilder &b, mlir::Location loc, mlir::Value src,
                           mlir::AffineMap readMap, mlir::RankedTensorType type);
/// The same with the sizes of `type`'s `?` dims given.
mlir::Value copyThroughMap(mlir::OpBuilder &b, mlir::Location loc, mlir::Value src,
                           mlir::AffineMap readMap, mlir::RankedTensorType type,
                           mlir::ValueRange dynamicSizes);

/// An index read from tensor data (integer or float scalar) as `index`:
/// negative values count from the end, and the result is clamped to
/// [0, dim - 1] so that bad data never reads out of bounds.
mlir::Value clampedIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                         int64_t dim);
/// The same for a dim known at run time (`dim`, an index at least 1;
/// clampedIndex's constants where it is a constant).
mlir::Value clampedRuntimeIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                                mlir::Value dim);

/// `v` (an onnx value) transposed at compile time when it is a constant:
/// a 2-D [R, C] one, or with `slab`, slab `slab` of a 3-D [D, R, C] one
/// (a recurrent op's weights per direction); [C, R] either way. None for
/// anything else. The contraction kernels want the output's columns
/// contiguous in the weight (Gemm's transB, W and R of RNN, GRU, LSTM).
std::optional<mlir::Value> transposedConstant(mlir::OpBuilder &b, mlir::Location loc,
                                              mlir::Value v,
                                              std::optional<int64_t> slab = std::nullopt);

/// The slice of `v` at index `at` of dim `axis`, that dim dropped.
mlir::Value extractSliceAt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                           int64_t axis, mlir::OpFoldResult at);

/// `dest` with `part` written at index `at` of dim `axis`; `part` has
/// dest's shape without that dim (or with it as 1).
mlir::Value insertSliceAt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value part,
                          mlir::Value dest, int64_t axis, mlir::OpFoldResult at);

/// Reshapes `v` to `type` (same element count) with collapse/expand_shape.
mlir::Value reshapeTensor(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value v, mlir::RankedTensorType type);

/// Permutes the dims of `v`: result dim i is input dim perm[i].
mlir::Value transposeTensor(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value v, llvm::ArrayRef<int64_t> perm);

/// Pads the trailing (spatial) dims of `v` with `padValue`:
/// `low`/`high` give the pad of every dim (zeros for leading dims).
mlir::Value padTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high,
                      mlir::Value padValue);

/// Computes begin/end pads of a conv/pool window op for every spatial dim
/// from its attributes (explicit pads, or auto_pad SAME_UPPER/SAME_LOWER/
/// VALID) and the input and output spatial sizes. A dynamic dim gets the
/// stated pads (enough without ceil_mode); false for SAME with one.
bool resolvePads(llvm::StringRef autoPad,
                 std::optional<llvm::ArrayRef<int64_t>> pads,
                 llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> out,
                 llvm::ArrayRef<int64_t> kernel,
                 llvm::ArrayRef<int64_t> strides,
                 llvm::ArrayRef<int64_t> dilations,
                 llvm::SmallVectorImpl<int64_t> &begin,
                 llvm::SmallVectorImpl<int64_t> &end);

/// numpy.matmul of `a` and `b` (same element type; 1-D operands promoted,
/// batch dims broadcast), reshaped to `resultType`. Fails if the inner
/// dims differ.
mlir::FailureOr<mlir::Value> buildMatMul(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::Value a, mlir::Value bv,
                                         mlir::RankedTensorType resultType);

/// N-D grouped convolution of x [N, C, S...] (already padded) with
/// w [M, C/g, K...], plus an optional bias [M], into yType [N, M, O...].
mlir::Value buildConv(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value w, mlir::Value bias, int64_t g,
                      llvm::ArrayRef<int64_t> strides,
                      llvm::ArrayRef<int64_t> dilations,
                      mlir::RankedTensorType yType);

/// A conv of x [N, C, H, W] by w [K, C, 3, 3] into y [N, K, OH, OW] that
/// Winograd computes with fewer multiplies (Winograd.cpp): f32,
/// stride and dilation 1, one group, enough channels and tiles.
bool winogradFits(mlir::RankedTensorType xType, mlir::RankedTensorType wType,
                  mlir::RankedTensorType yType, int64_t group,
                  llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations);

/// That conv as Winograd F(4x4, 3x3) for outputs of 28x28 and up, else
/// F(2x2, 3x3): `weights` the constant kernel (K * C * 9 floats,
/// row-major), `bias` [K] or null, `padLo` the pads before the two
/// spatial dims (those after follow from yType). With
/// `relu`, the output transform also applies max(y, 0) (the Relu that was
/// the conv's only user).
mlir::Value buildWinogradConv(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                              llvm::ArrayRef<float> weights, mlir::Value bias,
                              llvm::ArrayRef<int64_t> padLo, mlir::RankedTensorType yType,
                              bool relu = false);

/// The attributes of a Conv-like op.
struct ConvAttrs {
  int64_t group;
  llvm::StringRef autoPad;
  std::optional<llvm::ArrayRef<int64_t>> pads, strides, dilations;
};

/// A Conv-like op: x [N, C, S...] padded with zeros as `attrs` say, then
/// buildConv. Fails with `why` set on inconsistent shapes or groups.
mlir::FailureOr<mlir::Value>
buildConvWithAttrs(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                   mlir::Value w, mlir::Value bias, const ConvAttrs &attrs,
                   mlir::RankedTensorType yType, std::string &why);

using LoopBody = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::Value iv, mlir::ValueRange iters)>;

/// An scf.for over [lo, hi) (index values) carrying `inits`; `body`
/// returns the values to yield. Returns the loop's results.
llvm::SmallVector<mlir::Value> forLoop(mlir::OpBuilder &b, mlir::Location loc,
                                       mlir::Value lo, mlir::Value hi,
                                       mlir::ValueRange inits, LoopBody body);

/// An attribute array or `count` copies of `fill`.
llvm::SmallVector<int64_t>
valuesOr(std::optional<llvm::ArrayRef<int64_t>> values, size_t count,
         int64_t fill);

} // namespace kiln::lowering

#endif // KILN_PASSES_CONVERSION_ONNXTOLINALG_PATTERNS_H
