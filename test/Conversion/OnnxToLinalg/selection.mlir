// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// TopK, Compress and NonZero (Selection.cpp), compiled when their output
// shapes are static (K and the selected counts are the declared output
// dims):
//   - TopK ranks every element of its row in one generic over the input
//     dims plus an extra reduction loop j along the axis: rank[i] counts
//     the j with x[j] strictly before x[i] (larger, or smaller with
//     largest = 0; a signed or unsigned compare for integers), ties going
//     to the lower index (x[j] == x[i] and j < i). A second generic, with
//     the same extra loop (now i over the input axis) and the output dim k
//     along the axis, gathers value and index of the element of rank k as
//     two results, selecting where rank == k;
//   - Compress walks the condition in an scf.for carrying the count kept
//     so far and the output; a kept slice is copied (extract_slice then
//     insert_slice at the count) only under count < capacity, so extra
//     selections are dropped; without an axis the input is flattened;
//   - NonZero walks the flattened input in the same way and, for each
//     non-zero element, inserts its row-major coordinates (remui/divui by
//     each dim, last dim first) into column `count` of the [rank, count]
//     output.
// What cannot be lowered is tested in unsupported.mlir.

// TopK, largest, float, along the last axis. The rank generic reads x
// twice: at (d0, d1) (the element i = d1) and at (d0, d2) (the other
// element j = d2, the extra reduction loop); it compares with ogt, ties
// with oeq and j < i, and adds the i1 outcome to the i64 count. The gather
// generic reads the ranks and x at (d0, d2) and writes both outputs at
// (d0, d1), where d1 = k: value and index (d2) where rank == k.
// CHECK-LABEL: func.func @topk_largest(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
// CHECK: %[[Z:.*]] = arith.constant 0 : i64
// CHECK: %[[RE:.*]] = tensor.empty() : tensor<2x5xi64>
// CHECK: %[[R0:.*]] = linalg.fill ins(%[[Z]] : i64) outs(%[[RE]] : tensor<2x5xi64>)
// CHECK: %[[RANK:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]], %[[X]] : tensor<2x5xf32>, tensor<2x5xf32>) outs(%[[R0]] : tensor<2x5xi64>)
// CHECK-NEXT: ^bb0(%[[XI:[a-z0-9_]+]]: f32, %[[XJ:[a-z0-9_]+]]: f32, %[[ACC:[a-z0-9_]+]]: i64):
// CHECK-NEXT: %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 2 : index
// NaN counts as larger than any number (and equal to NaN), so that the
// ranks stay a permutation.
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[XJ]], %[[XI]] : f32
// CHECK-NEXT: %[[NANJ:.*]] = arith.cmpf uno, %[[XJ]], %[[XJ]] : f32
// CHECK-NEXT: %[[NANI:.*]] = arith.cmpf uno, %[[XI]], %[[XI]] : f32
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: %[[NOTNANI:.*]] = arith.xori %[[NANI]], %[[TRUE]] : i1
// CHECK-NEXT: %[[NANFIRST:.*]] = arith.andi %[[NANJ]], %[[NOTNANI]] : i1
// CHECK-NEXT: %[[STRICT:.*]] = arith.ori %[[GT]], %[[NANFIRST]] : i1
// CHECK-NEXT: %[[OEQ:.*]] = arith.cmpf oeq, %[[XJ]], %[[XI]] : f32
// CHECK-NEXT: %[[BOTHNAN:.*]] = arith.andi %[[NANJ]], %[[NANI]] : i1
// CHECK-NEXT: %[[EQ:.*]] = arith.ori %[[OEQ]], %[[BOTHNAN]] : i1
// CHECK-NEXT: %[[LOW:.*]] = arith.cmpi ult, %[[J]], %[[I]] : index
// CHECK-NEXT: %[[TIE:.*]] = arith.andi %[[EQ]], %[[LOW]] : i1
// CHECK-NEXT: %[[BEF:.*]] = arith.ori %[[STRICT]], %[[TIE]] : i1
// CHECK-NEXT: %[[INC:.*]] = arith.extui %[[BEF]] : i1 to i64
// CHECK-NEXT: %[[SUM:.*]] = arith.addi %[[ACC]], %[[INC]] : i64
// CHECK-NEXT: linalg.yield %[[SUM]] : i64
// CHECK-NEXT: } -> tensor<2x5xi64>
// CHECK: %[[VZ:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[VI:.*]] = linalg.fill ins(%[[VZ]] : f32) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: %[[II:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<2x3xi64>)
// CHECK: %[[OUT:[a-z0-9_]+]]:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[RANK]], %[[X]] : tensor<2x5xi64>, tensor<2x5xf32>) outs(%[[VI]], %[[II]] : tensor<2x3xf32>, tensor<2x3xi64>)
// CHECK-NEXT: ^bb0(%[[R:[a-z0-9_]+]]: i64, %[[V:[a-z0-9_]+]]: f32, %[[OV:[a-z0-9_]+]]: f32, %[[OI:[a-z0-9_]+]]: i64):
// CHECK-NEXT: %[[KX:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[K:.*]] = arith.index_cast %[[KX]] : index to i64
// CHECK-NEXT: %[[SX:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[S:.*]] = arith.index_cast %[[SX]] : index to i64
// CHECK-NEXT: %[[HIT:.*]] = arith.cmpi eq, %[[R]], %[[K]] : i64
// CHECK-NEXT: %[[NV:.*]] = arith.select %[[HIT]], %[[V]], %[[OV]] : f32
// CHECK-NEXT: %[[NI:.*]] = arith.select %[[HIT]], %[[S]], %[[OI]] : i64
// CHECK-NEXT: linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK-NEXT: } -> (tensor<2x3xf32>, tensor<2x3xi64>)
// CHECK: return %[[OUT]]#0, %[[OUT]]#1 : tensor<2x3xf32>, tensor<2x3xi64>
// CHECK-NOT: onnx.
func.func @topk_largest(%x: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  %k = "onnx.Constant"() <{value = dense<3> : tensor<1xi64>}> : () -> tensor<1xi64>
  %v, %i = "onnx.TopK"(%x, %k) <{axis = 1 : i64, largest = 1 : i64, sorted = 1 : i64}> : (tensor<2x5xf32>, tensor<1xi64>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %v, %i : tensor<2x3xf32>, tensor<2x3xi64>
}

// -----

// TopK, smallest, signed integers, along axis -2 = 0: the extra loop d2
// replaces d0 in the maps ((d2, d1)), i and k are linalg.index 0, and the
// strict comparison is slt.
// CHECK-LABEL: func.func @topk_smallest(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<4x3xi32>)
// CHECK: %[[RANK:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]], %[[X]] : tensor<4x3xi32>, tensor<4x3xi32>) outs(%{{.*}} : tensor<4x3xi64>)
// CHECK-NEXT: ^bb0(%[[XI:[a-z0-9_]+]]: i32, %[[XJ:[a-z0-9_]+]]: i32, %[[ACC:[a-z0-9_]+]]: i64):
// CHECK-NEXT: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[LT:.*]] = arith.cmpi slt, %[[XJ]], %[[XI]] : i32
// CHECK-NEXT: %[[EQ:.*]] = arith.cmpi eq, %[[XJ]], %[[XI]] : i32
// CHECK-NEXT: %[[LOW:.*]] = arith.cmpi ult, %[[J]], %[[I]] : index
// CHECK-NEXT: %[[TIE:.*]] = arith.andi %[[EQ]], %[[LOW]] : i1
// CHECK-NEXT: arith.ori %[[LT]], %[[TIE]] : i1
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[RANK]], %[[X]] : tensor<4x3xi64>, tensor<4x3xi32>) outs(%{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<2x3xi64>)
// CHECK-NEXT: ^bb0(%[[R:[a-z0-9_]+]]: i64, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i64):
// CHECK-NEXT: %[[KX:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[K:.*]] = arith.index_cast %[[KX]] : index to i64
// CHECK-NEXT: %[[SX:.*]] = linalg.index 2 : index
// CHECK: arith.cmpi eq, %[[R]], %[[K]] : i64
// CHECK: } -> (tensor<2x3xi32>, tensor<2x3xi64>)
func.func @topk_smallest(%x: tensor<4x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi64>) {
  %k = "onnx.Constant"() <{value = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %v, %i = "onnx.TopK"(%x, %k) <{axis = -2 : i64, largest = 0 : i64, sorted = 1 : i64}> : (tensor<4x3xi32>, tensor<1xi64>) -> (tensor<2x3xi32>, tensor<2x3xi64>)
  return %v, %i : tensor<2x3xi32>, tensor<2x3xi64>
}

// -----

// TopK of unsigned integers (ui8, signless i8 after conversion) compares
// with ugt, not sgt; a 1-D input has one parallel loop and the extra one.
// CHECK-LABEL: func.func @topk_unsigned(
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK-NEXT: ^bb0(%[[XI:[a-z0-9_]+]]: i8, %[[XJ:[a-z0-9_]+]]: i8, %{{.*}}: i64):
// CHECK: arith.cmpi ugt, %[[XJ]], %[[XI]] : i8
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK: } -> (tensor<2xi8>, tensor<2xi64>)
func.func @topk_unsigned(%x: tensor<6xui8>) -> (tensor<2xui8>, tensor<2xi64>) {
  %k = "onnx.Constant"() <{value = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
  %v, %i = "onnx.TopK"(%x, %k) <{axis = 0 : i64, largest = 1 : i64, sorted = 1 : i64}> : (tensor<6xui8>, tensor<1xi64>) -> (tensor<2xui8>, tensor<2xi64>)
  return %v, %i : tensor<2xui8>, tensor<2xi64>
}

// -----

// Compress along axis 1 into 2 columns: the output starts as zeros; the
// loop runs over the 4 condition entries carrying (count, y), both
// starting at 0 / the zeros; a column is written only when the condition
// holds and count < 2, as column i of x into column count of y; count
// grows by the condition (extui, index_cast), inside or past capacity.
// CHECK-LABEL: func.func @compress_axis(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x4xf32>, %[[C:[a-z0-9_]+]]: tensor<4xi1>) -> tensor<2x2xf32>
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Y0:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[N:.*]] = arith.constant 4 : index
// CHECK: %[[LOOP:[a-z0-9_]+]]:2 = scf.for %[[I:[a-z0-9_]+]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[CNT:[a-z0-9_]+]] = %[[C0]], %[[Y:[a-z0-9_]+]] = %[[Y0]]) -> (index, tensor<2x2xf32>) {
// CHECK-NEXT: %[[KEEP:.*]] = tensor.extract %[[C]][%[[I]]] : tensor<4xi1>
// CHECK-NEXT: %[[CAP:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[ROOM:.*]] = arith.cmpi ult, %[[CNT]], %[[CAP]] : index
// CHECK-NEXT: %[[W:.*]] = arith.andi %[[KEEP]], %[[ROOM]] : i1
// CHECK-NEXT: %[[IF:.*]] = scf.if %[[W]] -> (tensor<2x2xf32>) {
// CHECK-NEXT: %[[SL:.*]] = tensor.extract_slice %[[X]][0, %[[I]]] [2, 1] [1, 1] : tensor<2x4xf32> to tensor<2xf32>
// CHECK-NEXT: %[[INS:.*]] = tensor.insert_slice %[[SL]] into %[[Y]][0, %[[CNT]]] [2, 1] [1, 1] : tensor<2xf32> into tensor<2x2xf32>
// CHECK-NEXT: scf.yield %[[INS]] : tensor<2x2xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[Y]] : tensor<2x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[K64:.*]] = arith.extui %[[KEEP]] : i1 to i64
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K64]] : i64 to index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[CNT]], %[[KI]] : index
// CHECK-NEXT: scf.yield %[[NEXT]], %[[IF]] : index, tensor<2x2xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[LOOP]]#1 : tensor<2x2xf32>
func.func @compress_axis(%x: tensor<2x4xf32>, %c: tensor<4xi1>) -> tensor<2x2xf32> {
  %0 = "onnx.Compress"(%x, %c) <{axis = 1 : i64}> : (tensor<2x4xf32>, tensor<4xi1>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Compress without an axis flattens the input to [6]; the condition is
// shorter (5), so the loop runs 5 times; single elements move, into a
// result of capacity 3.
// CHECK-LABEL: func.func @compress_flat(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x3xi32>, %[[C:[a-z0-9_]+]]: tensor<5xi1>) -> tensor<3xi32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK: %[[Y0:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<3xi32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[N:.*]] = arith.constant 5 : index
// CHECK: %[[LOOP:[a-z0-9_]+]]:2 = scf.for %[[I:[a-z0-9_]+]] = %[[C0]] to %[[N]] step %{{.*}} iter_args(%[[CNT:[a-z0-9_]+]] = %[[C0]], %[[Y:[a-z0-9_]+]] = %[[Y0]]) -> (index, tensor<3xi32>) {
// CHECK-NEXT: %[[KEEP:.*]] = tensor.extract %[[C]][%[[I]]] : tensor<5xi1>
// CHECK-NEXT: %[[CAP:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[ROOM:.*]] = arith.cmpi ult, %[[CNT]], %[[CAP]] : index
// CHECK-NEXT: %[[W:.*]] = arith.andi %[[KEEP]], %[[ROOM]] : i1
// CHECK-NEXT: scf.if %[[W]] -> (tensor<3xi32>) {
// CHECK-NEXT: %[[SL:.*]] = tensor.extract_slice %[[FLAT]][%[[I]]] [1] [1] : tensor<6xi32> to tensor<i32>
// CHECK-NEXT: tensor.insert_slice %[[SL]] into %[[Y]][%[[CNT]]] [1] [1] : tensor<i32> into tensor<3xi32>
// CHECK: return %[[LOOP]]#1 : tensor<3xi32>
func.func @compress_flat(%x: tensor<2x3xi32>, %c: tensor<5xi1>) -> tensor<3xi32> {
  %0 = "onnx.Compress"(%x, %c) : (tensor<2x3xi32>, tensor<5xi1>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// NonZero of a [2, 3] float: the loop walks the 6 flattened elements
// carrying (count, y [2, 4] of zeros); x != 0 is cmpf une; under
// nonzero && count < 4 the column index (i rem 3) goes to row 1 and the
// row index ((i div 3) rem 2) to row 0, both at column count; count grows
// by the non-zero test.
// CHECK-LABEL: func.func @nonzero(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<2x3xf32>) -> tensor<2x4xi64>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: %[[Y0:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<2x4xi64>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[N:.*]] = arith.constant 6 : index
// CHECK: %[[LOOP:[a-z0-9_]+]]:2 = scf.for %[[I:[a-z0-9_]+]] = %[[C0]] to %[[N]] step %{{.*}} iter_args(%[[CNT:[a-z0-9_]+]] = %[[C0]], %[[Y:[a-z0-9_]+]] = %[[Y0]]) -> (index, tensor<2x4xi64>) {
// CHECK-NEXT: %[[E:.*]] = tensor.extract %[[FLAT]][%[[I]]] : tensor<6xf32>
// CHECK-NEXT: %[[FZ:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[NZ:.*]] = arith.cmpf une, %[[E]], %[[FZ]] : f32
// CHECK-NEXT: %[[CAP:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[ROOM:.*]] = arith.cmpi ult, %[[CNT]], %[[CAP]] : index
// CHECK-NEXT: %[[W:.*]] = arith.andi %[[NZ]], %[[ROOM]] : i1
// CHECK-NEXT: %[[IF:.*]] = scf.if %[[W]] -> (tensor<2x4xi64>) {
// CHECK-NEXT: %[[D1:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[COL:.*]] = arith.remui %[[I]], %[[D1]] : index
// CHECK-NEXT: %[[REST:.*]] = arith.divui %[[I]], %[[D1]] : index
// CHECK-NEXT: %[[COL64:.*]] = arith.index_cast %[[COL]] : index to i64
// CHECK-NEXT: %[[ROW1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[Y1:.*]] = tensor.insert %[[COL64]] into %[[Y]][%[[ROW1]], %[[CNT]]] : tensor<2x4xi64>
// CHECK-NEXT: %[[D0:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[ROW:.*]] = arith.remui %[[REST]], %[[D0]] : index
// CHECK-NEXT: arith.divui %[[REST]], %[[D0]] : index
// CHECK-NEXT: %[[ROW64:.*]] = arith.index_cast %[[ROW]] : index to i64
// CHECK-NEXT: %[[ROW0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[Y2:.*]] = tensor.insert %[[ROW64]] into %[[Y1]][%[[ROW0]], %[[CNT]]] : tensor<2x4xi64>
// CHECK-NEXT: scf.yield %[[Y2]] : tensor<2x4xi64>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[Y]] : tensor<2x4xi64>
// CHECK-NEXT: }
// CHECK-NEXT: %[[N64:.*]] = arith.extui %[[NZ]] : i1 to i64
// CHECK-NEXT: %[[NI:.*]] = arith.index_cast %[[N64]] : i64 to index
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[CNT]], %[[NI]] : index
// CHECK-NEXT: scf.yield %[[NEXT]], %[[IF]] : index, tensor<2x4xi64>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[LOOP]]#1 : tensor<2x4xi64>
func.func @nonzero(%x: tensor<2x3xf32>) -> tensor<2x4xi64> {
  %0 = "onnx.NonZero"(%x) : (tensor<2x3xf32>) -> tensor<2x4xi64>
  return %0 : tensor<2x4xi64>
}

// -----

// NonZero of a 1-D bool: no reshape, x != false with cmpi ne, one
// coordinate row.
// CHECK-LABEL: func.func @nonzero_bool(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<5xi1>) -> tensor<1x5xi64>
// CHECK-NOT: tensor.collapse_shape
// CHECK: scf.for %[[I:[a-z0-9_]+]] = {{.*}} iter_args(%[[CNT:[a-z0-9_]+]] = %{{.*}}, %[[Y:[a-z0-9_]+]] = %{{.*}}) -> (index, tensor<1x5xi64>) {
// CHECK-NEXT: %[[E:.*]] = tensor.extract %[[X]][%[[I]]] : tensor<5xi1>
// CHECK-NEXT: %[[F:.*]] = arith.constant false
// CHECK-NEXT: arith.cmpi ne, %[[E]], %[[F]] : i1
// CHECK: scf.if
// CHECK: arith.remui %[[I]], %{{.*}} : index
// CHECK: %[[R0:.*]] = arith.constant 0 : index
// CHECK-NEXT: tensor.insert %{{.*}} into %[[Y]][%[[R0]], %[[CNT]]] : tensor<1x5xi64>
// CHECK-NEXT: scf.yield
func.func @nonzero_bool(%x: tensor<5xi1>) -> tensor<1x5xi64> {
  %0 = "onnx.NonZero"(%x) : (tensor<5xi1>) -> tensor<1x5xi64>
  return %0 : tensor<1x5xi64>
}
