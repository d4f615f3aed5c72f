// RUN: kiln-opt %s --kiln-expand-math | FileCheck %s
// kiln-expand-math lets float max/min ignore the sign of zero (nsz):
// ONNX leaves max(-0, +0) open, and x86 then needs three instructions per
// max instead of six. NaN still propagates (no nnan).

// CHECK-LABEL: func.func @min_max(
// CHECK: arith.maximumf %{{.+}}, %{{.+}} fastmath<nsz> : vector<16xf32>
// CHECK: arith.minimumf %{{.+}}, %{{.+}} fastmath<nsz> : f32
// CHECK: vector.reduction <maximumf>, %{{.+}} fastmath<nsz> : vector<16xf32> into f32
// CHECK: arith.maxnumf %{{.+}}, %{{.+}} : f32
func.func @min_max(%a: vector<16xf32>, %b: vector<16xf32>, %x: f32, %y: f32) -> (vector<16xf32>, f32, f32, f32) {
  %m = arith.maximumf %a, %b : vector<16xf32>
  %n = arith.minimumf %x, %y : f32
  %r = vector.reduction <maximumf>, %a : vector<16xf32> into f32
  %k = arith.maxnumf %x, %y : f32
  return %m, %n, %r, %k : vector<16xf32>, f32, f32, f32
}

// CHECK-LABEL: func.func @polynomial_exp(
// CHECK-NOT: math.exp
func.func @polynomial_exp(%x: f32) -> f32 {
  %e = math.exp %x : f32
  return %e : f32
}

// f32 exp has kiln's own expansion: k = round(x log2e) by adding
// 1.5 * 2^23, a polynomial in the remainder, 2^k added into the exponent
// bits, then 0 below ln(FLT_MIN) and +inf above ln(FLT_MAX).
// CHECK-LABEL: func.func @exp_f32_vector(
// CHECK-NOT: math.exp
// CHECK: %[[T:.+]] = arith.addf %{{.+}}, %{{.+}} fastmath<contract> : vector<16xf32>
// CHECK: arith.subf %[[T]], %{{.+}} : vector<16xf32>
// CHECK: %[[BITS:.+]] = arith.bitcast %[[T]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[K:.+]] = arith.shli %[[BITS]], %{{.+}} : vector<16xi32>
// CHECK: arith.addi %{{.+}}, %[[K]] : vector<16xi32>
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: arith.cmpf ogt
// CHECK: arith.select
// CHECK-NOT: math.
func.func @exp_f32_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.exp %x : vector<16xf32>
  return %e : vector<16xf32>
}

// f32 erf has kiln's own expansion too: x P(x^2) / Q(x^2), one division,
// no selects between coefficient sets; the input and the result clamped.
// CHECK-LABEL: func.func @erf_f32_vector(
// CHECK-NOT: math.erf
// CHECK-COUNT-2: arith.select
// CHECK: %[[T:.+]] = arith.mulf %[[X:.+]], %[[X]] : vector<16xf32>
// CHECK-COUNT-10: arith.mulf {{.*}}%[[T]]{{.*}} fastmath<contract> : vector<16xf32>
// CHECK: arith.divf
// CHECK-COUNT-2: arith.select
// CHECK-NOT: arith.select
// CHECK-NOT: math.
func.func @erf_f32_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %e = math.erf %x : vector<16xf32>
  return %e : vector<16xf32>
}
