// A dynamic shape has no size to plan (test/passes/dlc-plan-memory.mlir).
func.func @dynamic_shape_is_an_error(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = dlc.exp %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}
