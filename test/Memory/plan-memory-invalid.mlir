// RUN: kiln-opt %s --kiln-plan-memory --split-input-file --verify-diagnostics
// What the static memory plan cannot place is an error on the allocation.

func.func @dynamic_shape(%n: index, %out: memref<4xf32>) {
  // expected-error @+1 {{a buffer's size depends on more than the model's dynamic dims (kiln.symbolic_dim arguments): the memory plan cannot size it}}
  %a = memref.alloc(%n) : memref<?xf32>
  %sub = memref.subview %a[0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1]>>
  memref.copy %sub, %out : memref<4xf32, strided<[1]>> to memref<4xf32>
  return
}

// -----

func.func @alloca(%out: memref<4xf32>) {
  // expected-error @+1 {{stack or re-allocations are not supported by the memory plan}}
  %a = memref.alloca() : memref<4xf32>
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  return
}
