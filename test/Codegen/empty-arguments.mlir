// RUN: kiln-opt %s --kiln-empty-arguments | FileCheck %s
// Entry arguments without elements and a zero dim after the first (which
// the bare-pointer calling convention refuses) become memref<0xT>; their
// uses read a zero-sized stack buffer of the original type instead. Other
// arguments, including 1-D empty ones, stay as they are.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<0xi64>, %[[K:[a-z0-9]+]]: memref<i64>, %[[Y:[a-z0-9]+]]: memref<0xi64>, %[[E:[a-z0-9]+]]: memref<0xf32>, %[[WS:[a-z0-9]+]]: memref<0xi8>)
// Each stand-in goes to the top of the entry block: y's ends up first.
// CHECK: %[[YS:.*]] = memref.alloca() : memref<3x0x5xi64>
// CHECK: %[[XS:.*]] = memref.alloca() : memref<3x0x5xi64>
// CHECK: memref.copy %[[XS]], %[[YS]] : memref<3x0x5xi64> to memref<3x0x5xi64>
// CHECK: memref.load %[[K]][]
// CHECK: memref.load %[[E]]
func.func @main(%x: memref<3x0x5xi64>, %k: memref<i64>, %y: memref<3x0x5xi64>, %e: memref<0xf32>, %ws: memref<0xi8>) {
  memref.copy %x, %y : memref<3x0x5xi64> to memref<3x0x5xi64>
  %0 = memref.load %k[] : memref<i64>
  %c0 = arith.constant 0 : index
  %1 = memref.load %e[%c0] : memref<0xf32>
  return
}
