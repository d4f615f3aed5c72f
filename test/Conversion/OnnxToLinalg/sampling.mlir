// RUN: kiln-opt %s --convert-onnx-to-linalg --split-input-file -mlir-print-local-scope | FileCheck %s
// GridSample (Sampling.cpp) for X [N, C, H, W] and grid [N, H_out, W_out, 2]
// is one all-parallel generic over Y [N, C, H_out, W_out] with no inputs.
// Its body reads the grid at (n, h_out, w_out, 0) for x and (..., 1) for
// y, maps [-1, 1] to pixels ((g + 1) * (size - 1) / 2 with align_corners,
// ((g + 1) * size - 1) / 2 without), then reads each tap of X with
// tensor.extract at (n, c, row, col):
//   - nearest: one tap at the roundeven of the position;
//   - bilinear: 4 taps at floor and floor + 1, weighted by the fractions;
//   - bicubic: 16 taps at floor - 1 .. floor + 2, with Keys' weights
//     (A = -0.75) for each axis.
// Every tap index is clamped (maxnumf 0, minnumf size - 1) before fptosi
// and index_cast, so no grid value reads out of bounds. padding_mode says
// what a tap outside the image is: zeros checks 0 <= v < size per axis and
// selects 0 otherwise; border is the clamp alone; reflection folds the tap
// back into [lo, hi] ([0, size - 1] with align_corners, [-0.5,
// size - 0.5] without) with floor((lo - v) / range) (or (v - hi)) folds
// whose parity picks the border to measure from, then clamps.
// What cannot be lowered is tested in unsupported.mlir.

// Bilinear, zeros padding, align_corners = 0, W = 4 and H = 3: x and y are
// ((g + 1) * 4 - 1) / 2 and ((g + 1) * 3 - 1) / 2. The first tap (y1, x1)
// is checked in full: each axis's validity (v < size and v >= 0), the
// clamp into [0, size - 1], fptosi and index_cast, the read at (n, c, row,
// col) and the select to 0 unless both axes are valid; it is weighted by
// 1 - fx. The other taps are (y1, x1 + 1), (y1 + 1, x1), (y1 + 1, x1 + 1);
// the rows are mixed by 1 - fy and fy.
// CHECK-LABEL: func.func @bilinear_zeros(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x2x3x4xf32>, %[[G:[a-z0-9_]+]]: tensor<1x2x5x2xf32>) -> tensor<1x2x2x5xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x2x5xf32>
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[E]] : tensor<1x2x2x5xf32>) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[N:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[C:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[OY:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[OX:.*]] = linalg.index 3 : index
// CHECK-NEXT: %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[GX:.*]] = tensor.extract %[[G]][%[[N]], %[[OY]], %[[OX]], %[[I0]]] : tensor<1x2x5x2xf32>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[GX1:.*]] = arith.addf %[[GX]], %[[ONE]] : f32
// CHECK-NEXT: %[[W:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT: %[[GXW:.*]] = arith.mulf %[[GX1]], %[[W]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[GXM:.*]] = arith.subf %[[GXW]], %[[ONE]] : f32
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[PX:.*]] = arith.divf %[[GXM]], %[[TWO]] : f32
// CHECK-NEXT: %[[I1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[GY:.*]] = tensor.extract %[[G]][%[[N]], %[[OY]], %[[OX]], %[[I1]]] : tensor<1x2x5x2xf32>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[GY1:.*]] = arith.addf %[[GY]], %[[ONE]] : f32
// CHECK-NEXT: %[[H:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[GYH:.*]] = arith.mulf %[[GY1]], %[[H]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[GYM:.*]] = arith.subf %[[GYH]], %[[ONE]] : f32
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[PY:.*]] = arith.divf %[[GYM]], %[[TWO]] : f32
// CHECK-NEXT: %[[X1:.*]] = math.floor %[[PX]] : f32
// CHECK-NEXT: %[[Y1:.*]] = math.floor %[[PY]] : f32
// CHECK-NEXT: %[[FX:.*]] = arith.subf %[[PX]], %[[X1]] : f32
// CHECK-NEXT: %[[FY:.*]] = arith.subf %[[PY]], %[[Y1]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[X2:.*]] = arith.addf %[[X1]], %[[ONE]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[Y2:.*]] = arith.addf %[[Y1]], %[[ONE]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[GXW:.*]] = arith.subf %[[ONE]], %[[FX]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[GYW:.*]] = arith.subf %[[ONE]], %[[FY]] : f32
// Tap (y1, x1): the row axis, then the column axis.
// CHECK-NEXT: %[[HS:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[RLT:.*]] = arith.cmpf olt, %[[Y1]], %[[HS]] : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[RGE:.*]] = arith.cmpf oge, %[[Y1]], %[[Z]] : f32
// CHECK-NEXT: %[[RV:.*]] = arith.andi %[[RLT]], %[[RGE]] : i1
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[RLO:.*]] = arith.maxnumf %[[Y1]], %[[Z]] : f32
// CHECK-NEXT: %[[HM:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[RCL:.*]] = arith.minnumf %[[RLO]], %[[HM]] : f32
// CHECK-NEXT: %[[RI64:.*]] = arith.fptosi %[[RCL]] : f32 to i64
// CHECK-NEXT: %[[RI:.*]] = arith.index_cast %[[RI64]] : i64 to index
// CHECK-NEXT: %[[WS:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT: %[[CLT:.*]] = arith.cmpf olt, %[[X1]], %[[WS]] : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CGE:.*]] = arith.cmpf oge, %[[X1]], %[[Z]] : f32
// CHECK-NEXT: %[[CV:.*]] = arith.andi %[[CLT]], %[[CGE]] : i1
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CLO:.*]] = arith.maxnumf %[[X1]], %[[Z]] : f32
// CHECK-NEXT: %[[WM:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[CCL:.*]] = arith.minnumf %[[CLO]], %[[WM]] : f32
// CHECK-NEXT: %[[CI64:.*]] = arith.fptosi %[[CCL]] : f32 to i64
// CHECK-NEXT: %[[CI:.*]] = arith.index_cast %[[CI64]] : i64 to index
// CHECK-NEXT: %[[P11:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %[[RI]], %[[CI]]] : tensor<1x2x3x4xf32>
// CHECK-NEXT: %[[VALID:.*]] = arith.andi %[[RV]], %[[CV]] : i1
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V11:.*]] = arith.select %[[VALID]], %[[P11]], %[[Z]] : f32
// CHECK-NEXT: %[[T11:.*]] = arith.mulf %[[GXW]], %[[V11]] : f32
// Tap (y1, x2).
// CHECK: arith.cmpf olt, %[[Y1]], %{{.*}} : f32
// CHECK: arith.cmpf olt, %[[X2]], %{{.*}} : f32
// CHECK: arith.maxnumf %[[X2]], %{{.*}} : f32
// CHECK: %[[P12:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %{{.*}}, %{{.*}}] : tensor<1x2x3x4xf32>
// CHECK: %[[V12:.*]] = arith.select %{{.*}}, %[[P12]], %{{.*}} : f32
// CHECK-NEXT: %[[T12:.*]] = arith.mulf %[[FX]], %[[V12]] : f32
// CHECK-NEXT: %[[TOP:.*]] = arith.addf %[[T11]], %[[T12]] : f32
// Taps (y2, x1) and (y2, x2).
// CHECK: arith.cmpf olt, %[[Y2]], %{{.*}} : f32
// CHECK: arith.cmpf olt, %[[X1]], %{{.*}} : f32
// CHECK: tensor.extract %[[X]]
// CHECK: %[[T21:.*]] = arith.mulf %[[GXW]], %{{.*}} : f32
// CHECK: arith.cmpf olt, %[[Y2]], %{{.*}} : f32
// CHECK: arith.cmpf olt, %[[X2]], %{{.*}} : f32
// CHECK: tensor.extract %[[X]]
// CHECK: %[[T22:.*]] = arith.mulf %[[FX]], %{{.*}} : f32
// CHECK-NEXT: %[[BOT:.*]] = arith.addf %[[T21]], %[[T22]] : f32
// CHECK-NEXT: %[[WTOP:.*]] = arith.mulf %[[GYW]], %[[TOP]] : f32
// CHECK-NEXT: %[[WBOT:.*]] = arith.mulf %[[FY]], %[[BOT]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[WTOP]], %[[WBOT]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<1x2x2x5xf32>
// CHECK-NEXT: return %[[Y]] : tensor<1x2x2x5xf32>
func.func @bilinear_zeros(%x: tensor<1x2x3x4xf32>, %g: tensor<1x2x5x2xf32>) -> tensor<1x2x2x5xf32> {
  %0 = "onnx.GridSample"(%x, %g) <{align_corners = 0 : i64, mode = "bilinear", padding_mode = "zeros"}> : (tensor<1x2x3x4xf32>, tensor<1x2x5x2xf32>) -> tensor<1x2x2x5xf32>
  return %0 : tensor<1x2x2x5xf32>
}

// -----

// Nearest, border padding, align_corners = 1: x = (g + 1) * 1.5 (W = 4),
// y = (g + 1) * 1 (H = 3); one tap at roundeven(y), roundeven(x), clamped
// into [0, 2] and [0, 3]; border needs no validity test and no select.
// CHECK-LABEL: func.func @nearest_border(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x1x3x4xf32>, %[[G:[a-z0-9_]+]]: tensor<1x2x2x2xf32>)
// CHECK: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK: %[[N:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[C:.*]] = linalg.index 1 : index
// CHECK: tensor.extract %[[G]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[GX1:.*]] = arith.addf %{{.*}}, %[[ONE]] : f32
// CHECK-NEXT: %[[SX:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT: %[[PX:.*]] = arith.mulf %[[GX1]], %[[SX]] : f32
// CHECK: tensor.extract %[[G]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[GY1:.*]] = arith.addf %{{.*}}, %[[ONE]] : f32
// CHECK-NEXT: %[[SY:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[PY:.*]] = arith.mulf %[[GY1]], %[[SY]] : f32
// CHECK-NEXT: %[[RY:.*]] = math.roundeven %[[PY]] : f32
// CHECK-NEXT: %[[RX:.*]] = math.roundeven %[[PX]] : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[RLO:.*]] = arith.maxnumf %[[RY]], %[[Z]] : f32
// CHECK-NEXT: %[[HM:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[RCL:.*]] = arith.minnumf %[[RLO]], %[[HM]] : f32
// CHECK-NEXT: %[[RI64:.*]] = arith.fptosi %[[RCL]] : f32 to i64
// CHECK-NEXT: %[[RI:.*]] = arith.index_cast %[[RI64]] : i64 to index
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CLO:.*]] = arith.maxnumf %[[RX]], %[[Z]] : f32
// CHECK-NEXT: %[[WM:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[CCL:.*]] = arith.minnumf %[[CLO]], %[[WM]] : f32
// CHECK-NEXT: %[[CI64:.*]] = arith.fptosi %[[CCL]] : f32 to i64
// CHECK-NEXT: %[[CI:.*]] = arith.index_cast %[[CI64]] : i64 to index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %[[RI]], %[[CI]]] : tensor<1x1x3x4xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
// CHECK-NEXT: } -> tensor<1x1x2x2xf32>
func.func @nearest_border(%x: tensor<1x1x3x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.GridSample"(%x, %g) <{align_corners = 1 : i64, mode = "nearest", padding_mode = "border"}> : (tensor<1x1x3x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Bilinear, border padding, f64: four reads, each index only clamped
// (maxnumf 0 / minnumf size - 1), no compare and no select anywhere in
// the body.
// CHECK-LABEL: func.func @bilinear_border(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x1x3x4xf64>
// CHECK: linalg.generic
// CHECK: %[[X1:.*]] = math.floor %{{.*}} : f64
// CHECK-NEXT: %[[Y1:.*]] = math.floor %{{.*}} : f64
// CHECK-NOT: arith.cmpf
// CHECK-NOT: arith.select
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[RLO:.*]] = arith.maxnumf %[[Y1]], %[[Z]] : f64
// CHECK-NEXT: %[[HM:.*]] = arith.constant 2.000000e+00 : f64
// CHECK-NEXT: %[[RCL:.*]] = arith.minnumf %[[RLO]], %[[HM]] : f64
// CHECK-NEXT: %[[RI64:.*]] = arith.fptosi %[[RCL]] : f64 to i64
// CHECK-NEXT: %[[RI:.*]] = arith.index_cast %[[RI64]] : i64 to index
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[CLO:.*]] = arith.maxnumf %[[X1]], %[[Z]] : f64
// CHECK-NEXT: %[[WM:.*]] = arith.constant 3.000000e+00 : f64
// CHECK-NEXT: %[[CCL:.*]] = arith.minnumf %[[CLO]], %[[WM]] : f64
// CHECK-NEXT: %[[CI64:.*]] = arith.fptosi %[[CCL]] : f64 to i64
// CHECK-NEXT: %[[CI:.*]] = arith.index_cast %[[CI64]] : i64 to index
// CHECK-NEXT: %[[P:.*]] = tensor.extract %[[X]][%{{.*}}, %{{.*}}, %[[RI]], %[[CI]]] : tensor<1x1x3x4xf64>
// CHECK-NEXT: arith.mulf %{{.*}}, %[[P]] : f64
// CHECK-COUNT-3: tensor.extract %[[X]]
// CHECK-NOT: arith.cmpf
// CHECK-NOT: arith.select
// CHECK: linalg.yield
// CHECK-NEXT: } -> tensor<1x1x2x2xf64>
func.func @bilinear_border(%x: tensor<1x1x3x4xf64>, %g: tensor<1x2x2x2xf64>) -> tensor<1x1x2x2xf64> {
  %0 = "onnx.GridSample"(%x, %g) <{align_corners = 0 : i64, mode = "bilinear", padding_mode = "border"}> : (tensor<1x1x3x4xf64>, tensor<1x2x2x2xf64>) -> tensor<1x1x2x2xf64>
  return %0 : tensor<1x1x2x2xf64>
}

// -----

// Nearest, reflection padding, align_corners = 0: the rounded row v is
// folded into [-0.5, 2.5] (range 3). Below: dx = -0.5 - v, n =
// floor(dx / 3), r = dx - n * 3, n even (floor(n * 0.5) * 2 == n) picks
// -0.5 + r, odd 2.5 - r. Above: dx = v - 2.5, even picks 2.5 - r, odd
// -0.5 + r. v < -0.5 takes the first, 2.5 < v the second, else v; the
// result is then clamped into [0, 2]. The column does the same over
// [-0.5, 3.5] (range 4). No validity select with reflection.
// CHECK-LABEL: func.func @nearest_reflection(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x1x3x4xf32>
// CHECK: %[[N:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[C:.*]] = linalg.index 1 : index
// CHECK: %[[RY:.*]] = math.roundeven %{{.*}} : f32
// CHECK-NEXT: %[[RX:.*]] = math.roundeven %{{.*}} : f32
// Row, folded from below.
// CHECK-NEXT: %[[LO:.*]] = arith.constant -5.000000e-01 : f32
// CHECK-NEXT: %[[DX:.*]] = arith.subf %[[LO]], %[[RY]] : f32
// CHECK-NEXT: %[[RNG:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[DX]], %[[RNG]] : f32
// CHECK-NEXT: %[[NF:.*]] = math.floor %[[Q]] : f32
// CHECK-NEXT: %[[RNG:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[NR:.*]] = arith.mulf %[[NF]], %[[RNG]] : f32
// CHECK-NEXT: %[[REM:.*]] = arith.subf %[[DX]], %[[NR]] : f32
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[NH:.*]] = arith.mulf %[[NF]], %[[HALF]] : f32
// CHECK-NEXT: %[[NHF:.*]] = math.floor %[[NH]] : f32
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[N2:.*]] = arith.mulf %[[NHF]], %[[TWO]] : f32
// CHECK-NEXT: %[[EVEN:.*]] = arith.cmpf oeq, %[[N2]], %[[NF]] : f32
// CHECK-NEXT: %[[LO:.*]] = arith.constant -5.000000e-01 : f32
// CHECK-NEXT: %[[FROMLO:.*]] = arith.addf %[[LO]], %[[REM]] : f32
// CHECK-NEXT: %[[HI:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT: %[[FROMHI:.*]] = arith.subf %[[HI]], %[[REM]] : f32
// CHECK-NEXT: %[[BELOW:.*]] = arith.select %[[EVEN]], %[[FROMLO]], %[[FROMHI]] : f32
// Row, folded from above.
// CHECK-NEXT: %[[HI:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT: %[[DX:.*]] = arith.subf %[[RY]], %[[HI]] : f32
// CHECK-NEXT: %[[RNG:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[DX]], %[[RNG]] : f32
// CHECK-NEXT: %[[NF:.*]] = math.floor %[[Q]] : f32
// CHECK: %[[EVEN:.*]] = arith.cmpf oeq, %{{.*}}, %[[NF]] : f32
// CHECK-NEXT: %[[LO:.*]] = arith.constant -5.000000e-01 : f32
// CHECK-NEXT: %[[FROMLO:.*]] = arith.addf %[[LO]], %{{.*}} : f32
// CHECK-NEXT: %[[HI:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT: %[[FROMHI:.*]] = arith.subf %[[HI]], %{{.*}} : f32
// CHECK-NEXT: %[[ABOVE:.*]] = arith.select %[[EVEN]], %[[FROMHI]], %[[FROMLO]] : f32
// Row, which fold applies, then the clamp.
// CHECK-NEXT: %[[LO:.*]] = arith.constant -5.000000e-01 : f32
// CHECK-NEXT: %[[ISLO:.*]] = arith.cmpf olt, %[[RY]], %[[LO]] : f32
// CHECK-NEXT: %[[R1:.*]] = arith.select %[[ISLO]], %[[BELOW]], %[[RY]] : f32
// CHECK-NEXT: %[[HI:.*]] = arith.constant 2.500000e+00 : f32
// CHECK-NEXT: %[[ISHI:.*]] = arith.cmpf olt, %[[HI]], %[[RY]] : f32
// CHECK-NEXT: %[[R2:.*]] = arith.select %[[ISHI]], %[[ABOVE]], %[[R1]] : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[RLO:.*]] = arith.maxnumf %[[R2]], %[[Z]] : f32
// CHECK-NEXT: %[[HM:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[RCL:.*]] = arith.minnumf %[[RLO]], %[[HM]] : f32
// CHECK-NEXT: %[[RI64:.*]] = arith.fptosi %[[RCL]] : f32 to i64
// CHECK-NEXT: %[[RI:.*]] = arith.index_cast %[[RI64]] : i64 to index
// Column, over [-0.5, 3.5].
// CHECK-NEXT: %[[LO:.*]] = arith.constant -5.000000e-01 : f32
// CHECK-NEXT: arith.subf %[[LO]], %[[RX]] : f32
// CHECK-NEXT: %[[RNG:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: arith.subf %[[RX]], %{{.*}} : f32
// CHECK: arith.cmpf olt, %[[RX]], %{{.*}} : f32
// CHECK: arith.cmpf olt, %{{.*}}, %[[RX]] : f32
// CHECK-NEXT: %[[C2:.*]] = arith.select
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CLO:.*]] = arith.maxnumf %[[C2]], %[[Z]] : f32
// CHECK-NEXT: %[[WM:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[CCL:.*]] = arith.minnumf %[[CLO]], %[[WM]] : f32
// CHECK-NEXT: %[[CI64:.*]] = arith.fptosi %[[CCL]] : f32 to i64
// CHECK-NEXT: %[[CI:.*]] = arith.index_cast %[[CI64]] : i64 to index
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %[[RI]], %[[CI]]] : tensor<1x1x3x4xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @nearest_reflection(%x: tensor<1x1x3x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.GridSample"(%x, %g) <{align_corners = 0 : i64, mode = "nearest", padding_mode = "reflection"}> : (tensor<1x1x3x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Bilinear, reflection padding, align_corners = 1: the bounds are the
// pixel centres [0, 2] for rows (range 2) and [0, 3] for columns (range
// 3); every one of the four taps is folded before its clamp and read, and
// no tap is zeroed.
// CHECK-LABEL: func.func @bilinear_reflection(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x1x3x4xf32>
// CHECK: %[[X1:.*]] = math.floor %[[PX:.*]] : f32
// CHECK-NEXT: %[[Y1:.*]] = math.floor %[[PY:.*]] : f32
// CHECK-NEXT: arith.subf %[[PX]], %[[X1]] : f32
// CHECK-NEXT: arith.subf %[[PY]], %[[Y1]] : f32
// CHECK: %[[DX:.*]] = arith.subf %{{.*}}, %[[Y1]] : f32
// CHECK-NEXT: %[[RNG:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: arith.divf %[[DX]], %[[RNG]] : f32
// CHECK: arith.subf %[[Y1]], %{{.*}} : f32
// CHECK: %[[DX:.*]] = arith.subf %{{.*}}, %[[X1]] : f32
// CHECK-NEXT: %[[RNG:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: arith.divf %[[DX]], %[[RNG]] : f32
// CHECK: arith.subf %[[X1]], %{{.*}} : f32
// CHECK: %[[P:.*]] = tensor.extract %[[X]]
// CHECK-NEXT: arith.mulf %{{.*}}, %[[P]] : f32
// CHECK-COUNT-3: tensor.extract %[[X]]
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
func.func @bilinear_reflection(%x: tensor<1x1x3x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.GridSample"(%x, %g) <{align_corners = 1 : i64, mode = "bilinear", padding_mode = "reflection"}> : (tensor<1x1x3x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Bicubic, zeros padding: Keys' weights with A = -0.75 for fx (then fy):
// far(t + 1) = ((A x - 5A) x + 8A) x - 4A, near(t) = ((A + 2) x - (A + 3))
// x x + 1, near(1 - t), far(2 - t). Then 16 taps, row y1 - 1 first with
// columns x1 - 1 .. x1 + 2, each validity-selected to 0 and weighted by
// its column weight; each row sum is weighted by its row weight. Exactly
// 16 reads of X.
// CHECK-LABEL: func.func @bicubic(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x1x4x4xf32>
// CHECK: %[[X1:.*]] = math.floor %{{.*}} : f32
// CHECK-NEXT: %[[Y1:.*]] = math.floor %{{.*}} : f32
// CHECK-NEXT: %[[FX:.*]] = arith.subf %{{.*}}, %[[X1]] : f32
// CHECK-NEXT: %[[FY:.*]] = arith.subf %{{.*}}, %[[Y1]] : f32
// far(fx + 1):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[T0:.*]] = arith.addf %[[FX]], %[[ONE]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.constant -7.500000e-01 : f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[A]], %[[T0]] : f32
// CHECK-NEXT: %[[A5:.*]] = arith.constant -3.750000e+00 : f32
// CHECK-NEXT: %[[F2:.*]] = arith.subf %[[F1]], %[[A5]] : f32
// CHECK-NEXT: %[[F3:.*]] = arith.mulf %[[F2]], %[[T0]] : f32
// CHECK-NEXT: %[[A8:.*]] = arith.constant -6.000000e+00 : f32
// CHECK-NEXT: %[[F4:.*]] = arith.addf %[[F3]], %[[A8]] : f32
// CHECK-NEXT: %[[F5:.*]] = arith.mulf %[[F4]], %[[T0]] : f32
// CHECK-NEXT: %[[A4:.*]] = arith.constant -3.000000e+00 : f32
// CHECK-NEXT: %[[WX0:.*]] = arith.subf %[[F5]], %[[A4]] : f32
// near(fx):
// CHECK-NEXT: %[[A2:.*]] = arith.constant 1.250000e+00 : f32
// CHECK-NEXT: %[[N1:.*]] = arith.mulf %[[A2]], %[[FX]] : f32
// CHECK-NEXT: %[[A3:.*]] = arith.constant 2.250000e+00 : f32
// CHECK-NEXT: %[[N2:.*]] = arith.subf %[[N1]], %[[A3]] : f32
// CHECK-NEXT: %[[N3:.*]] = arith.mulf %[[N2]], %[[FX]] : f32
// CHECK-NEXT: %[[N4:.*]] = arith.mulf %[[N3]], %[[FX]] : f32
// CHECK-NEXT: %[[ONEB:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[WX1:.*]] = arith.addf %[[N4]], %[[ONEB]] : f32
// near(1 - fx), far(2 - fx):
// CHECK-NEXT: %[[T2:.*]] = arith.subf %[[ONE]], %[[FX]] : f32
// CHECK-NEXT: %[[A2:.*]] = arith.constant 1.250000e+00 : f32
// CHECK-NEXT: %[[N1:.*]] = arith.mulf %[[A2]], %[[T2]] : f32
// CHECK-NEXT: %[[A3:.*]] = arith.constant 2.250000e+00 : f32
// CHECK-NEXT: %[[N2:.*]] = arith.subf %[[N1]], %[[A3]] : f32
// CHECK-NEXT: %[[N3:.*]] = arith.mulf %[[N2]], %[[T2]] : f32
// CHECK-NEXT: %[[N4:.*]] = arith.mulf %[[N3]], %[[T2]] : f32
// CHECK-NEXT: %[[ONEB:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[WX2:.*]] = arith.addf %[[N4]], %[[ONEB]] : f32
// CHECK-NEXT: %[[T3:.*]] = arith.subf %[[TWO]], %[[FX]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.constant -7.500000e-01 : f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[A]], %[[T3]] : f32
// CHECK-NEXT: %[[A5:.*]] = arith.constant -3.750000e+00 : f32
// CHECK-NEXT: %[[F2:.*]] = arith.subf %[[F1]], %[[A5]] : f32
// CHECK-NEXT: %[[F3:.*]] = arith.mulf %[[F2]], %[[T3]] : f32
// CHECK-NEXT: %[[A8:.*]] = arith.constant -6.000000e+00 : f32
// CHECK-NEXT: %[[F4:.*]] = arith.addf %[[F3]], %[[A8]] : f32
// CHECK-NEXT: %[[F5:.*]] = arith.mulf %[[F4]], %[[T3]] : f32
// CHECK-NEXT: %[[A4:.*]] = arith.constant -3.000000e+00 : f32
// CHECK-NEXT: %[[WX3:.*]] = arith.subf %[[F5]], %[[A4]] : f32
// The same four for fy; the last is far(2 - fy).
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[TWOY:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: arith.addf %[[FY]], %{{.*}} : f32
// CHECK: %[[T3:.*]] = arith.subf %[[TWOY]], %[[FY]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.constant -7.500000e-01 : f32
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[A]], %[[T3]] : f32
// CHECK-NEXT: %[[A5:.*]] = arith.constant -3.750000e+00 : f32
// CHECK-NEXT: %[[F2:.*]] = arith.subf %[[F1]], %[[A5]] : f32
// CHECK-NEXT: %[[F3:.*]] = arith.mulf %[[F2]], %[[T3]] : f32
// CHECK-NEXT: %[[A8:.*]] = arith.constant -6.000000e+00 : f32
// CHECK-NEXT: %[[F4:.*]] = arith.addf %[[F3]], %[[A8]] : f32
// CHECK-NEXT: %[[F5:.*]] = arith.mulf %[[F4]], %[[T3]] : f32
// CHECK-NEXT: %[[A4:.*]] = arith.constant -3.000000e+00 : f32
// CHECK-NEXT: %[[WY3:.*]] = arith.subf %[[F5]], %[[A4]] : f32
// CHECK-NEXT: %[[SUM0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ROW0:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[M1:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[Y1]], %[[M1]] : f32
// CHECK-NEXT: %[[M1:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.addf %[[X1]], %[[M1]] : f32
// CHECK: arith.cmpf olt, %[[R]], %{{.*}} : f32
// CHECK: arith.cmpf olt, %[[C]], %{{.*}} : f32
// CHECK: %[[P:.*]] = tensor.extract %[[X]]
// CHECK: %[[V:.*]] = arith.select %{{.*}}, %[[P]], %{{.*}} : f32
// CHECK-NEXT: %[[WV:.*]] = arith.mulf %[[WX0]], %[[V]] : f32
// CHECK-NEXT: %[[ACC:.*]] = arith.addf %[[ROW0]], %[[WV]] : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[C:.*]] = arith.addf %[[X1]], %[[Z]] : f32
// CHECK: arith.cmpf olt, %[[R]], %{{.*}} : f32
// CHECK: arith.cmpf olt, %[[C]], %{{.*}} : f32
// CHECK: tensor.extract %[[X]]
// CHECK: arith.mulf %[[WX1]], %{{.*}} : f32
// CHECK: tensor.extract %[[X]]
// CHECK: arith.mulf %[[WX2]], %{{.*}} : f32
// CHECK: tensor.extract %[[X]]
// CHECK: arith.mulf %[[WX3]], %{{.*}} : f32
// CHECK-NEXT: %[[ROWSUM:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[WR:.*]] = arith.mulf %{{.*}}, %[[ROWSUM]] : f32
// CHECK-NEXT: arith.addf %[[SUM0]], %[[WR]] : f32
// CHECK-COUNT-12: tensor.extract %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x1x4x4xf32>
// CHECK-NOT: tensor.extract
// CHECK: %[[WR:.*]] = arith.mulf %[[WY3]], %{{.*}} : f32
// CHECK-NEXT: %[[RES:.*]] = arith.addf %{{.*}}, %[[WR]] : f32
// CHECK-NEXT: linalg.yield %[[RES]] : f32
func.func @bicubic(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.GridSample"(%x, %g) <{align_corners = 0 : i64, mode = "bicubic", padding_mode = "zeros"}> : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Bicubic, counted from the start of the body: 2 grid reads, then exactly
// 16 reads of X, each followed by its zeros-padding select.
// CHECK-LABEL: func.func @bicubic_count(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<1x1x4x4xf32>, %[[G:[a-z0-9_]+]]: tensor<1x2x2x2xf32>)
// CHECK-COUNT-2: tensor.extract %[[G]]
// CHECK-NOT: tensor.extract %[[X]]
// CHECK: math.floor
// CHECK-COUNT-16: tensor.extract %[[X]]{{.*}}{{[[:space:]].*}}arith.andi{{.*}}{{[[:space:]].*}}arith.constant 0.0{{.*}}{{[[:space:]].*}}arith.select
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
func.func @bicubic_count(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = "onnx.GridSample"(%x, %g) <{align_corners = 1 : i64, mode = "bicubic", padding_mode = "zeros"}> : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
