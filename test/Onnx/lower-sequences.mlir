// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(onnx-lower-sequences))' | FileCheck %s
// --onnx-lower-sequences (LowerSequences.cpp): a sequence built and used
// inside a function, of known length L and one static element shape S,
// becomes the stacked tensor [L, S...] and its ops become onnx tensor ops:
//   - SequenceConstruct: each element Reshape'd to [1, S...] (a constant
//     shape), Concat on axis 0; SequenceInsert without a position
//     Concat's the new element last; SequenceEmpty has no tensor;
//   - SequenceAt: Gather on axis 0 at the position Reshape'd to a scalar;
//   - SequenceErase / SequenceInsert at a position: the position is
//     normalised (Less than 0 ? + L : itself, a Where) and a Gather reads
//     an index vector computed from an iota constant: j + 1 from the
//     position on (erase), or j below it, the new last element at it and
//     j - 1 above it (insert);
//   - SequenceLength: a constant;
//   - SplitToSequence (equal chunks): Reshape [.., L, chunk, ..],
//     Transpose L first, Reshape to [L, S...];
//   - ConcatFromSequence: Transpose the sequence dim to the axis and,
//     without new_axis, Reshape it into the next dim.
// The sequence ops are erased once unused and the function's result types
// follow the new values. Sequences it cannot stack are left alone.

// SequenceConstruct of three [2, 3] tensors and SequenceAt: three Reshapes
// to [1, 2, 3] by the constant shape, one Concat on axis 0 into [3, 2, 3]
// in the elements' order, the position reshaped to a scalar and a Gather
// on axis 0 back to [2, 3]; no sequence op is left.
// CHECK-LABEL: func.func @construct_at(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3xf32>, %[[B:[a-z0-9_]+]]: tensor<2x3xf32>, %[[C:[a-z0-9_]+]]: tensor<2x3xf32>, %[[P:[a-z0-9_]+]]: tensor<i64>) -> tensor<2x3xf32>
// CHECK-NOT: onnx.Sequence
// CHECK: %[[SA:.*]] = "onnx.Constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}>
// CHECK-NEXT: %[[RA:.*]] = "onnx.Reshape"(%[[A]], %[[SA]]) {{.*}} -> tensor<1x2x3xf32>
// CHECK-NEXT: %[[SB:.*]] = "onnx.Constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}>
// CHECK-NEXT: %[[RB:.*]] = "onnx.Reshape"(%[[B]], %[[SB]]) {{.*}} -> tensor<1x2x3xf32>
// CHECK-NEXT: %[[SC:.*]] = "onnx.Constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}>
// CHECK-NEXT: %[[RC:.*]] = "onnx.Reshape"(%[[C]], %[[SC]]) {{.*}} -> tensor<1x2x3xf32>
// CHECK-NEXT: %[[ST:.*]] = "onnx.Concat"(%[[RA]], %[[RB]], %[[RC]]) <{axis = 0 : i64}> : (tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<3x2x3xf32>
// CHECK-NEXT: %[[NOSHAPE:.*]] = "onnx.Constant"() <{value = dense<> : tensor<0xi64>}>
// CHECK-NEXT: %[[PS:.*]] = "onnx.Reshape"(%[[P]], %[[NOSHAPE]]) {{.*}} -> tensor<i64>
// CHECK-NEXT: %[[AT:.*]] = "onnx.Gather"(%[[ST]], %[[PS]]) <{axis = 0 : i64}> : (tensor<3x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[AT]] : tensor<2x3xf32>
// CHECK-NOT: onnx.Sequence
func.func @construct_at(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>, %p: tensor<i64>) -> tensor<2x3xf32> {
  %s = "onnx.SequenceConstruct"(%a, %b, %c) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> !onnx.seq<tensor<2x3xf32>>
  %0 = "onnx.SequenceAt"(%s, %p) : (!onnx.seq<tensor<2x3xf32>>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// SequenceErase at a run-time position of a sequence of 3: the position
// is normalised with the length 3 (Less 0, Add 3, Where); the index vector
// over the 2 results is Where(iota >= p, iota + 1, iota) with the iota
// [0, 1]; a Gather of the stacked [3, 2, 3] by it gives [2, 2, 3], from
// which SequenceAt gathers.
// CHECK-LABEL: func.func @erase(
// CHECK-SAME: %[[P:[a-z0-9_]+]]: tensor<i64>, %[[Q:[a-z0-9_]+]]: tensor<i64>) -> tensor<2x3xf32>
// CHECK-NOT: onnx.Sequence
// CHECK: %[[ST:.*]] = "onnx.Concat"({{.*}}) <{axis = 0 : i64}> {{.*}} -> tensor<3x2x3xf32>
// CHECK-NEXT: %[[J:.*]] = "onnx.Constant"() <{value = dense<[0, 1]> : tensor<2xi64>}>
// CHECK-NEXT: %[[NOSHAPE:.*]] = "onnx.Constant"() <{value = dense<> : tensor<0xi64>}>
// CHECK-NEXT: %[[PS:.*]] = "onnx.Reshape"(%[[P]], %[[NOSHAPE]]) {{.*}} -> tensor<i64>
// CHECK-NEXT: %[[ZERO:.*]] = "onnx.Constant"() <{value = dense<0> : tensor<i64>}>
// CHECK-NEXT: %[[LEN:.*]] = "onnx.Constant"() <{value = dense<3> : tensor<i64>}>
// CHECK-NEXT: %[[NEG:.*]] = "onnx.Less"(%[[PS]], %[[ZERO]]) : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK-NEXT: %[[WRAP:.*]] = "onnx.Add"(%[[PS]], %[[LEN]]) : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %[[POS:.*]] = "onnx.Where"(%[[NEG]], %[[WRAP]], %[[PS]]) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %[[FROM:.*]] = "onnx.GreaterOrEqual"(%[[J]], %[[POS]]) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi1>
// CHECK-NEXT: %[[ONE:.*]] = "onnx.Constant"() <{value = dense<1> : tensor<i64>}>
// CHECK-NEXT: %[[NEXT:.*]] = "onnx.Add"(%[[J]], %[[ONE]]) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
// CHECK-NEXT: %[[IDX:.*]] = "onnx.Where"(%[[FROM]], %[[NEXT]], %[[J]]) : (tensor<2xi1>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK-NEXT: %[[ER:.*]] = "onnx.Gather"(%[[ST]], %[[IDX]]) <{axis = 0 : i64}> : (tensor<3x2x3xf32>, tensor<2xi64>) -> tensor<2x2x3xf32>
// CHECK: %[[QS:.*]] = "onnx.Reshape"(%[[Q]], %{{.*}}) {{.*}} -> tensor<i64>
// CHECK-NEXT: %[[AT:.*]] = "onnx.Gather"(%[[ER]], %[[QS]]) <{axis = 0 : i64}> : (tensor<2x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[AT]] : tensor<2x3xf32>
// CHECK-NOT: onnx.Sequence
func.func @erase(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>, %p: tensor<i64>, %q: tensor<i64>) -> tensor<2x3xf32> {
  %s = "onnx.SequenceConstruct"(%a, %b, %c) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> !onnx.seq<tensor<2x3xf32>>
  %e = "onnx.SequenceErase"(%s, %p) : (!onnx.seq<tensor<2x3xf32>>, tensor<i64>) -> !onnx.seq<tensor<2x3xf32>>
  %0 = "onnx.SequenceAt"(%e, %q) : (!onnx.seq<tensor<2x3xf32>>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// SequenceErase without a position (the last element): the Gather by the
// iota [0, 1] alone, no index computation.
// CHECK-LABEL: func.func @erase_last(
// CHECK: %[[ST:.*]] = "onnx.Concat"({{.*}}) <{axis = 0 : i64}> {{.*}} -> tensor<3x2x3xf32>
// CHECK-NEXT: %[[J:.*]] = "onnx.Constant"() <{value = dense<[0, 1]> : tensor<2xi64>}>
// CHECK-NEXT: %[[ER:.*]] = "onnx.Gather"(%[[ST]], %[[J]]) <{axis = 0 : i64}> : (tensor<3x2x3xf32>, tensor<2xi64>) -> tensor<2x2x3xf32>
// CHECK-NOT: onnx.Where
// CHECK: "onnx.Gather"(%[[ER]], %{{.*}}) <{axis = 0 : i64}> : (tensor<2x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
// CHECK-NOT: onnx.Sequence
func.func @erase_last(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>, %q: tensor<i64>) -> tensor<2x3xf32> {
  %none = onnx.NoValue
  %s = "onnx.SequenceConstruct"(%a, %b, %c) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> !onnx.seq<tensor<2x3xf32>>
  %e = "onnx.SequenceErase"(%s, %none) : (!onnx.seq<tensor<2x3xf32>>, none) -> !onnx.seq<tensor<2x3xf32>>
  %0 = "onnx.SequenceAt"(%e, %q) : (!onnx.seq<tensor<2x3xf32>>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// SequenceInsert of %x at a run-time position into a sequence of 2: the
// stacked [2, 2, 3] and the reshaped %x are Concat'ed (%x last, index 2);
// the position is normalised with the old length 2; over the iota
// [0, 1, 2] the index is Where(j < p, j, Where(j == p, 2, j - 1)), and the
// Gather of the grown tensor by it is the inserted sequence [3, 2, 3].
// CHECK-LABEL: func.func @insert(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x3xf32>, %[[P:[a-z0-9_]+]]: tensor<i64>, %[[Q:[a-z0-9_]+]]: tensor<i64>) -> tensor<2x3xf32>
// CHECK-NOT: onnx.Sequence
// CHECK: %[[ST:.*]] = "onnx.Concat"({{.*}}) <{axis = 0 : i64}> {{.*}} -> tensor<2x2x3xf32>
// CHECK-NEXT: %[[SX:.*]] = "onnx.Constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}>
// CHECK-NEXT: %[[RX:.*]] = "onnx.Reshape"(%[[X]], %[[SX]]) {{.*}} -> tensor<1x2x3xf32>
// CHECK-NEXT: %[[GROWN:.*]] = "onnx.Concat"(%[[ST]], %[[RX]]) <{axis = 0 : i64}> : (tensor<2x2x3xf32>, tensor<1x2x3xf32>) -> tensor<3x2x3xf32>
// CHECK-NEXT: %[[NOSHAPE:.*]] = "onnx.Constant"() <{value = dense<> : tensor<0xi64>}>
// CHECK-NEXT: %[[PS:.*]] = "onnx.Reshape"(%[[P]], %[[NOSHAPE]]) {{.*}} -> tensor<i64>
// CHECK-NEXT: %[[ZERO:.*]] = "onnx.Constant"() <{value = dense<0> : tensor<i64>}>
// CHECK-NEXT: %[[LEN:.*]] = "onnx.Constant"() <{value = dense<2> : tensor<i64>}>
// CHECK-NEXT: %[[NEG:.*]] = "onnx.Less"(%[[PS]], %[[ZERO]])
// CHECK-NEXT: %[[WRAP:.*]] = "onnx.Add"(%[[PS]], %[[LEN]])
// CHECK-NEXT: %[[POS:.*]] = "onnx.Where"(%[[NEG]], %[[WRAP]], %[[PS]]) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %[[J:.*]] = "onnx.Constant"() <{value = dense<[0, 1, 2]> : tensor<3xi64>}>
// CHECK-NEXT: %[[BELOW:.*]] = "onnx.Less"(%[[J]], %[[POS]]) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
// CHECK-NEXT: %[[AT:.*]] = "onnx.Equal"(%[[J]], %[[POS]]) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
// CHECK-NEXT: %[[ONE:.*]] = "onnx.Constant"() <{value = dense<1> : tensor<i64>}>
// CHECK-NEXT: %[[PREV:.*]] = "onnx.Sub"(%[[J]], %[[ONE]]) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
// CHECK-NEXT: %[[NEW:.*]] = "onnx.Constant"() <{value = dense<2> : tensor<i64>}>
// CHECK-NEXT: %[[ABOVE:.*]] = "onnx.Where"(%[[AT]], %[[NEW]], %[[PREV]]) : (tensor<3xi1>, tensor<i64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT: %[[IDX:.*]] = "onnx.Where"(%[[BELOW]], %[[J]], %[[ABOVE]]) : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT: %[[INS:.*]] = "onnx.Gather"(%[[GROWN]], %[[IDX]]) <{axis = 0 : i64}> : (tensor<3x2x3xf32>, tensor<3xi64>) -> tensor<3x2x3xf32>
// CHECK: %[[QS:.*]] = "onnx.Reshape"(%[[Q]], %{{.*}}) {{.*}} -> tensor<i64>
// CHECK-NEXT: %[[R:.*]] = "onnx.Gather"(%[[INS]], %[[QS]]) <{axis = 0 : i64}> : (tensor<3x2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
// CHECK-NEXT: return %[[R]] : tensor<2x3xf32>
// CHECK-NOT: onnx.Sequence
func.func @insert(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %x: tensor<2x3xf32>, %p: tensor<i64>, %q: tensor<i64>) -> tensor<2x3xf32> {
  %s = "onnx.SequenceConstruct"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> !onnx.seq<tensor<2x3xf32>>
  %i = "onnx.SequenceInsert"(%s, %x, %p) : (!onnx.seq<tensor<2x3xf32>>, tensor<2x3xf32>, tensor<i64>) -> !onnx.seq<tensor<2x3xf32>>
  %0 = "onnx.SequenceAt"(%i, %q) : (!onnx.seq<tensor<2x3xf32>>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// SequenceEmpty and two SequenceInserts without a position: the first
// element sets the element type; SequenceLength is the constant 2 and the
// function returns it; no sequence op is left.
// CHECK-LABEL: func.func @empty_insert_length(
// CHECK-NOT: onnx.Sequence
// CHECK: %[[L:.*]] = "onnx.Constant"() <{value = dense<2> : tensor<i64>}> : () -> tensor<i64>
// CHECK-NEXT: return %[[L]] : tensor<i64>
func.func @empty_insert_length(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<i64> {
  %s = "onnx.SequenceEmpty"() : () -> !onnx.seq<tensor<*xf32>>
  %none = onnx.NoValue
  %1 = "onnx.SequenceInsert"(%s, %a, %none) : (!onnx.seq<tensor<*xf32>>, tensor<2x3xf32>, none) -> !onnx.seq<tensor<*xf32>>
  %2 = "onnx.SequenceInsert"(%1, %b, %none) : (!onnx.seq<tensor<*xf32>>, tensor<2x3xf32>, none) -> !onnx.seq<tensor<*xf32>>
  %0 = "onnx.SequenceLength"(%2) : (!onnx.seq<tensor<*xf32>>) -> tensor<i64>
  return %0 : tensor<i64>
}

// SplitToSequence of [2, 3, 4] on axis 1 into the default chunks of 1,
// keepdims = 0: Reshape to [2, 3, 1, 4], Transpose [1, 0, 2, 3] to put the
// 3 chunks first, Reshape to [3, 2, 4] (the chunk dim dropped); SequenceAt
// gathers a [2, 4].
// CHECK-LABEL: func.func @split_keepdims0(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x3x4xf32>, %[[Q:[a-z0-9_]+]]: tensor<i64>) -> tensor<2x4xf32>
// CHECK-NOT: onnx.Sequence
// CHECK-NOT: onnx.SplitToSequence
// CHECK: %[[S4:.*]] = "onnx.Constant"() <{value = dense<[2, 3, 1, 4]> : tensor<4xi64>}>
// CHECK-NEXT: %[[R4:.*]] = "onnx.Reshape"(%[[X]], %[[S4]]) {{.*}} : (tensor<2x3x4xf32>, tensor<4xi64>) -> tensor<2x3x1x4xf32>
// CHECK-NEXT: %[[TR:.*]] = "onnx.Transpose"(%[[R4]]) <{perm = array<i64: 1, 0, 2, 3>}> : (tensor<2x3x1x4xf32>) -> tensor<3x2x1x4xf32>
// CHECK-NEXT: %[[S3:.*]] = "onnx.Constant"() <{value = dense<[3, 2, 4]> : tensor<3xi64>}>
// CHECK-NEXT: %[[ST:.*]] = "onnx.Reshape"(%[[TR]], %[[S3]]) {{.*}} : (tensor<3x2x1x4xf32>, tensor<3xi64>) -> tensor<3x2x4xf32>
// CHECK: %[[QS:.*]] = "onnx.Reshape"(%[[Q]], %{{.*}}) {{.*}} -> tensor<i64>
// CHECK-NEXT: %[[AT:.*]] = "onnx.Gather"(%[[ST]], %[[QS]]) <{axis = 0 : i64}> : (tensor<3x2x4xf32>, tensor<i64>) -> tensor<2x4xf32>
// CHECK-NEXT: return %[[AT]] : tensor<2x4xf32>
// CHECK-NOT: onnx.Sequence
// CHECK-NOT: onnx.SplitToSequence
func.func @split_keepdims0(%x: tensor<2x3x4xf32>, %q: tensor<i64>) -> tensor<2x4xf32> {
  %none = onnx.NoValue
  %s = "onnx.SplitToSequence"(%x, %none) <{axis = 1 : i64, keepdims = 0 : i64}> : (tensor<2x3x4xf32>, none) -> !onnx.seq<tensor<2x4xf32>>
  %0 = "onnx.SequenceAt"(%s, %q) : (!onnx.seq<tensor<2x4xf32>>, tensor<i64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// SplitToSequence with the constant split [2, 2, 2] of the 6 on axis 1
// (keepdims ignored when split is given: elements [2, 2, 4]): Reshape to
// [2, 3, 2, 4], Transpose [1, 0, 2, 3], Reshape to [3, 2, 2, 4]. Then
// ConcatFromSequence on axis 1 without new_axis: Transpose [1, 0, 2, 3]
// puts the sequence dim before axis 1 ([2, 3, 2, 4]) and a Reshape merges
// them into [2, 6, 4]; the function's result type becomes static.
// CHECK-LABEL: func.func @split_chunks_concat(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
// CHECK: %[[S4:.*]] = "onnx.Constant"() <{value = dense<[2, 3, 2, 4]> : tensor<4xi64>}>
// CHECK-NEXT: %[[R4:.*]] = "onnx.Reshape"(%[[X]], %[[S4]]) {{.*}} -> tensor<2x3x2x4xf32>
// CHECK-NEXT: %[[TR:.*]] = "onnx.Transpose"(%[[R4]]) <{perm = array<i64: 1, 0, 2, 3>}> : (tensor<2x3x2x4xf32>) -> tensor<3x2x2x4xf32>
// CHECK-NEXT: %[[SS:.*]] = "onnx.Constant"() <{value = dense<[3, 2, 2, 4]> : tensor<4xi64>}>
// CHECK-NEXT: %[[ST:.*]] = "onnx.Reshape"(%[[TR]], %[[SS]]) {{.*}} -> tensor<3x2x2x4xf32>
// CHECK-NEXT: %[[MOVED:.*]] = "onnx.Transpose"(%[[ST]]) <{perm = array<i64: 1, 0, 2, 3>}> : (tensor<3x2x2x4xf32>) -> tensor<2x3x2x4xf32>
// CHECK-NEXT: %[[SO:.*]] = "onnx.Constant"() <{value = dense<[2, 6, 4]> : tensor<3xi64>}>
// CHECK-NEXT: %[[CAT:.*]] = "onnx.Reshape"(%[[MOVED]], %[[SO]]) {{.*}} : (tensor<2x3x2x4xf32>, tensor<3xi64>) -> tensor<2x6x4xf32>
// CHECK-NEXT: return %[[CAT]] : tensor<2x6x4xf32>
// CHECK-NOT: onnx.SplitToSequence
// CHECK-NOT: onnx.ConcatFromSequence
func.func @split_chunks_concat(%x: tensor<2x6x4xf32>) -> tensor<2x?x4xf32> {
  %split = "onnx.Constant"() <{value = dense<2> : tensor<3xi64>}> : () -> tensor<3xi64>
  %s = "onnx.SplitToSequence"(%x, %split) <{axis = 1 : i64, keepdims = 0 : i64}> : (tensor<2x6x4xf32>, tensor<3xi64>) -> !onnx.seq<tensor<2x2x4xf32>>
  %0 = "onnx.ConcatFromSequence"(%s) <{axis = 1 : i64, new_axis = 0 : i64}> : (!onnx.seq<tensor<2x2x4xf32>>) -> tensor<2x?x4xf32>
  return %0 : tensor<2x?x4xf32>
}

// ConcatFromSequence with new_axis = 1 on axis -1 (a new last axis): the
// stacked [3, 2, 3] is only transposed, perm [1, 2, 0], to [2, 3, 3]; no
// Reshape follows.
// CHECK-LABEL: func.func @concat_new_axis(
// CHECK: %[[ST:.*]] = "onnx.Concat"({{.*}}) <{axis = 0 : i64}> {{.*}} -> tensor<3x2x3xf32>
// CHECK-NEXT: %[[T:.*]] = "onnx.Transpose"(%[[ST]]) <{perm = array<i64: 1, 2, 0>}> : (tensor<3x2x3xf32>) -> tensor<2x3x3xf32>
// CHECK-NEXT: return %[[T]] : tensor<2x3x3xf32>
// CHECK-NOT: onnx.ConcatFromSequence
func.func @concat_new_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>) -> tensor<2x3x3xf32> {
  %s = "onnx.SequenceConstruct"(%a, %b, %c) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> !onnx.seq<tensor<2x3xf32>>
  %0 = "onnx.ConcatFromSequence"(%s) <{axis = -1 : i64, new_axis = 1 : i64}> : (!onnx.seq<tensor<2x3xf32>>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}

// SplitToSequence by chunk sizes that are data: only the count (the 3
// sizes) is known, which is enough for SequenceLength; no Reshape.
// CHECK-LABEL: func.func @split_sizes_from_data(
// CHECK-NEXT: %[[L:.*]] = "onnx.Constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
// CHECK-NEXT: return %[[L]] : tensor<i64>
func.func @split_sizes_from_data(%x: tensor<6xf32>, %sizes: tensor<3xi64>) -> tensor<i64> {
  %s = "onnx.SplitToSequence"(%x, %sizes) <{axis = 0 : i64, keepdims = 1 : i64}> : (tensor<6xf32>, tensor<3xi64>) -> !onnx.seq<tensor<?xf32>>
  %0 = "onnx.SequenceLength"(%s) : (!onnx.seq<tensor<?xf32>>) -> tensor<i64>
  return %0 : tensor<i64>
}

// Elements of different shapes ([2, 3] and [1, 3]) cannot be stacked: read
// at a run-time position, the SequenceConstruct and SequenceAt stay as
// they are (for the lowering to report), nothing is reshaped or gathered,
// and the result type stays dynamic; the length is still a constant.
// CHECK-LABEL: func.func @mixed_shapes(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<2x3xf32>, %[[B:[a-z0-9_]+]]: tensor<1x3xf32>, %[[P:[a-z0-9_]+]]: tensor<i64>) -> (tensor<?x3xf32>, tensor<i64>)
// CHECK-NOT: onnx.Reshape
// CHECK-NOT: onnx.Concat
// CHECK-NEXT: %[[S:.*]] = "onnx.SequenceConstruct"(%[[A]], %[[B]]) : (tensor<2x3xf32>, tensor<1x3xf32>) -> !onnx.seq<tensor<?x3xf32>>
// CHECK-NEXT: %[[AT:.*]] = "onnx.SequenceAt"(%[[S]], %[[P]]) : (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) -> tensor<?x3xf32>
// CHECK-NEXT: %[[L:.*]] = "onnx.Constant"() <{value = dense<2> : tensor<i64>}>
// CHECK-NEXT: return %[[AT]], %[[L]] : tensor<?x3xf32>, tensor<i64>
func.func @mixed_shapes(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>, %p: tensor<i64>) -> (tensor<?x3xf32>, tensor<i64>) {
  %s = "onnx.SequenceConstruct"(%a, %b) : (tensor<2x3xf32>, tensor<1x3xf32>) -> !onnx.seq<tensor<?x3xf32>>
  %0 = "onnx.SequenceAt"(%s, %p) : (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) -> tensor<?x3xf32>
  %1 = "onnx.SequenceLength"(%s) : (!onnx.seq<tensor<?x3xf32>>) -> tensor<i64>
  return %0, %1 : tensor<?x3xf32>, tensor<i64>
}

// The same through SequenceInserts (ONNX's test_sequence_model1): the
// second element's shape differs from the first's, so that insert and
// everything after it stay; the SequenceAt result stays dynamic.
// CHECK-LABEL: func.func @insert_mixed_shapes(
// CHECK: %[[E:.*]] = "onnx.SequenceEmpty"()
// CHECK: %[[I1:.*]] = "onnx.SequenceInsert"(%[[E]],
// CHECK: %[[I2:.*]] = "onnx.SequenceInsert"(%[[I1]],
// CHECK: %[[AT:.*]] = "onnx.SequenceAt"(%[[I2]], %{{.*}}) : (!onnx.seq<tensor<*xf32>>, tensor<i64>) -> tensor<?x3xf32>
// CHECK-NOT: onnx.Gather
// CHECK: return %[[AT]] : tensor<?x3xf32>
func.func @insert_mixed_shapes(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>, %p: tensor<i64>) -> tensor<?x3xf32> {
  %s = "onnx.SequenceEmpty"() : () -> !onnx.seq<tensor<*xf32>>
  %none = onnx.NoValue
  %1 = "onnx.SequenceInsert"(%s, %x, %none) : (!onnx.seq<tensor<*xf32>>, tensor<2x3xf32>, none) -> !onnx.seq<tensor<*xf32>>
  %2 = "onnx.SequenceInsert"(%1, %y, %none) : (!onnx.seq<tensor<*xf32>>, tensor<1x3xf32>, none) -> !onnx.seq<tensor<*xf32>>
  %0 = "onnx.SequenceAt"(%2, %p) : (!onnx.seq<tensor<*xf32>>, tensor<i64>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// Mixed shapes at compile-time positions (ONNX's test_sequence_model1 with
// its initializers as constants): the pass keeps the list of elements, so
// inserting z at position 1 and reading position -1 (y) is y itself; the
// result type becomes static and no sequence op is left.
// CHECK-LABEL: func.func @mixed_constant_positions(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x3xf32>, %[[Y:[a-z0-9_]+]]: tensor<1x3xf32>, %[[Z:[a-z0-9_]+]]: tensor<3x3xf32>) -> (tensor<1x3xf32>, tensor<3x3xf32>)
// CHECK-NOT: onnx.Sequence
// CHECK-NOT: onnx.Gather
// CHECK: return %[[Y]], %[[Z]] : tensor<1x3xf32>, tensor<3x3xf32>
func.func @mixed_constant_positions(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>, %z: tensor<3x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %s = "onnx.SequenceEmpty"() : () -> !onnx.seq<tensor<*xf32>>
  %none = onnx.NoValue
  %1 = "onnx.SequenceInsert"(%s, %x, %none) : (!onnx.seq<tensor<*xf32>>, tensor<2x3xf32>, none) -> !onnx.seq<tensor<*xf32>>
  %2 = "onnx.SequenceInsert"(%1, %y, %none) : (!onnx.seq<tensor<*xf32>>, tensor<1x3xf32>, none) -> !onnx.seq<tensor<*xf32>>
  %pos = "onnx.Constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
  %3 = "onnx.SequenceInsert"(%2, %z, %pos) : (!onnx.seq<tensor<*xf32>>, tensor<3x3xf32>, tensor<i64>) -> !onnx.seq<tensor<*xf32>>
  %last = "onnx.Constant"() <{value = dense<-1> : tensor<i64>}> : () -> tensor<i64>
  %4 = "onnx.SequenceAt"(%3, %last) : (!onnx.seq<tensor<*xf32>>, tensor<i64>) -> tensor<?x3xf32>
  %5 = "onnx.SequenceAt"(%3, %pos) : (!onnx.seq<tensor<*xf32>>, tensor<i64>) -> tensor<?x3xf32>
  return %4, %5 : tensor<?x3xf32>, tensor<?x3xf32>
}

// Erasing at a constant position, then ConcatFromSequence of the rest along
// axis 0: one Concat of the remaining elements ([2, 3] and [3, 3]) in
// order; SequenceAt out of range at compile time is left alone.
// CHECK-LABEL: func.func @mixed_erase_concat(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x3xf32>, %[[Y:[a-z0-9_]+]]: tensor<1x3xf32>, %[[Z:[a-z0-9_]+]]: tensor<3x3xf32>) -> (tensor<5x3xf32>, tensor<?x3xf32>)
// CHECK: %[[S:.*]] = "onnx.SequenceConstruct"(%[[X]], %[[Y]], %[[Z]])
// CHECK: %[[E:.*]] = "onnx.SequenceErase"(%[[S]],
// CHECK: %[[CAT:.*]] = "onnx.Concat"(%[[X]], %[[Z]]) <{axis = 0 : i64}> : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<5x3xf32>
// CHECK: %[[AT:.*]] = "onnx.SequenceAt"(%[[E]],
// CHECK: return %[[CAT]], %[[AT]] : tensor<5x3xf32>, tensor<?x3xf32>
func.func @mixed_erase_concat(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>, %z: tensor<3x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %s = "onnx.SequenceConstruct"(%x, %y, %z) : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<3x3xf32>) -> !onnx.seq<tensor<?x3xf32>>
  %one = "onnx.Constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
  %e = "onnx.SequenceErase"(%s, %one) : (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) -> !onnx.seq<tensor<?x3xf32>>
  %c = "onnx.ConcatFromSequence"(%e) <{axis = 0 : i64}> : (!onnx.seq<tensor<?x3xf32>>) -> tensor<?x3xf32>
  %five = "onnx.Constant"() <{value = dense<5> : tensor<i64>}> : () -> tensor<i64>
  %a = "onnx.SequenceAt"(%e, %five) : (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) -> tensor<?x3xf32>
  return %c, %a : tensor<?x3xf32>, tensor<?x3xf32>
}
