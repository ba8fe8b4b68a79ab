//===- Matmul.cpp - tiled shared-memory GEMM with its epilogue fused ------===//
//
// The `matmul` strategy of dlc-tile: a block computes a BM x BN tile of one
// batch of the matmul, staging BK-deep slices of both operands in shared
// memory; each thread accumulates a TM x TN register tile (SIMT FMAs, the
// accumulator in float for f32/f16/bf16, double for f64, int64 for
// integers). The operands are read through the elemental emitter, so a
// transposed or broadcast operand, or an element-wise producer fused into
// the kernel, is read in place. The epilogue (bias, activation, residual,
// casts; then reshapes and transposes) is computed per output element from
// the accumulator register and stored where the layout tail sends it.
// Tensor cores (mma.sync / wgmma for f16 and bf16) are not used yet.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/Kernels.h"

#include "ir/DlcDialect.h"
#include "passes/TileRules.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

/// The matmul operand's index for output batch index `batch`, row/column
/// `inner0`, `inner1` of its (untransposed) last two dimensions.
static Index operandIndex(Value operand, const Index &batch, bool transposed,
                          const std::string &rowIdx, const std::string &colIdx) {
  std::vector<int64_t> shape = shapeOf(operand);
  size_t rank = shape.size(), batchRank = rank - 2;
  Index index(rank, "0");
  size_t skip = batch.size() - batchRank; // NumPy broadcasting aligns right
  for (size_t d = 0; d < batchRank; ++d)
    index[d] = shape[d] == 1 ? "0" : batch[skip + d];
  index[rank - 2] = transposed ? colIdx : rowIdx;
  index[rank - 1] = transposed ? rowIdx : colIdx;
  return index;
}

void cuda::emitMatmulKernel(KernelContext &ctx) {
  auto mm = cast<MatmulOp>(fusableMatmul(ctx.view.op));
  CodeWriter &out = ctx.out;
  const CudaTarget &target = ctx.target;
  ElementalEmitter elemental(target, out, ctx.buffers, ctx.statics, *ctx.checks);

  std::vector<int64_t> outShape = shapeOf(mm.getResult());
  size_t rank = outShape.size();
  int64_t M = outShape[rank - 2], N = outShape[rank - 1];
  std::vector<int64_t> lhsShape = shapeOf(mm.getLhs());
  int64_t K = mm.getTransposeA() ? lhsShape[lhsShape.size() - 2] : lhsShape.back();
  std::vector<int64_t> batchShape(outShape.begin(), outShape.end() - 2);
  ArrayRef<int64_t> tile = ctx.schedule.getTile().asArrayRef();
  ArrayRef<int64_t> threadTile = ctx.schedule.getThreadTile().asArrayRef();
  int64_t BM = tile[0], BN = tile[1], BK = tile[2], TM = threadTile[0],
          TN = threadTile[1];
  int64_t threads = (BM / TM) * (BN / TN);
  DType dtype = elementDType(mm.getResult());
  std::string acc = dtype == DType::F64 ? "double"
                    : isFloat(dtype)      ? "float"
                                          : "long long";

  out.line(llvm::formatv("// {0}: [{1} x {2}] x [{2} x {3}] over {4} batch(es); "
                         "block tile {5}x{6}x{7}, thread tile {8}x{9}",
                         describeOp(mm), M, K, N, product(batchShape), BM, BN,
                         BK, TM, TN)
               .str());
  out.line(llvm::formatv("__shared__ {0} As[{1}][{2}];", acc, BK, BM).str());
  out.line(llvm::formatv("__shared__ {0} Bs[{1}][{2}];", acc, BK, BN).str());
  out.line(llvm::formatv("const int tx = threadIdx.x % {0}, ty = threadIdx.x / {0};",
                         BN / TN)
               .str());
  out.line(llvm::formatv("const int64_t m0 = (int64_t)blockIdx.y * {0}, n0 = "
                         "(int64_t)blockIdx.x * {1};",
                         BM, BN)
               .str());
  Index batch = decompose(out, "(int64_t)blockIdx.z", batchShape);
  out.line(llvm::formatv("{0} acc[{1}][{2}];", acc, TM, TN).str());
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", TM).str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int j = 0; j < {0}; ++j) acc[i][j] = 0;", TN).str());
  out.close();

  out.open(llvm::formatv("for (int64_t k0 = 0; k0 < {0}; k0 += {1})", K, BK).str());
  // Stage the operands' slices; consecutive threads read consecutive
  // elements of the operand's contiguous dimension.
  auto stage = [&](Value operand, bool transposed, int64_t rows, bool isLhs) {
    int64_t total = rows * BK, perThread = (total + threads - 1) / threads;
    int64_t contiguous = transposed == isLhs ? rows : BK;
    out.line(llvm::formatv("// {0} slice: {1} x {2}", isLhs ? "lhs" : "rhs",
                           isLhs ? "BM" : "BK", isLhs ? "BK" : "BN")
                 .str());
    out.open(llvm::formatv("for (int l = 0; l < {0}; ++l)", perThread).str());
    out.line(llvm::formatv("const int e = threadIdx.x + l * {0};", threads).str());
    if (total % threads)
      out.line(llvm::formatv("if (e >= {0}) break;", total).str());
    std::string kk, rr;
    if (contiguous == BK) {
      kk = llvm::formatv("e % {0}", BK);
      rr = llvm::formatv("e / {0}", BK);
    } else {
      rr = llvm::formatv("e % {0}", rows);
      kk = llvm::formatv("e / {0}", rows);
    }
    out.line("const int kk = " + kk + ", rr = " + rr + ";");
    std::string origin = isLhs ? "m0" : "n0";
    int64_t extent = isLhs ? M : N;
    out.line("const int64_t gk = k0 + kk, gr = " + origin + " + rr;");
    std::string dest = isLhs ? "As[kk][rr]" : "Bs[kk][rr]";
    out.open(llvm::formatv("if (gk < {0} && gr < {1})", K, extent).str());
    elemental.pushScope();
    Index index = isLhs ? operandIndex(operand, batch, transposed, "gr", "gk")
                        : operandIndex(operand, batch, transposed, "gk", "gr");
    std::string value = elemental.emit(operand, index);
    elemental.popScope();
    out.line(dest + " = (" + acc + ")" + value + ";");
    out.close();
    out.line("else");
    out.line("  " + dest + " = 0;");
    out.close();
  };
  stage(mm.getLhs(), mm.getTransposeA(), BM, true);
  stage(mm.getRhs(), mm.getTransposeB(), BN, false);
  out.line("__syncthreads();");
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int kk = 0; kk < {0}; ++kk)", BK).str());
  out.line(llvm::formatv("{0} a[{1}], b[{2}];", acc, TM, TN).str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int i = 0; i < {0}; ++i) a[i] = As[kk][ty + i * {1}];",
                         TM, BM / TM)
               .str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int j = 0; j < {0}; ++j) b[j] = Bs[kk][tx + j * {1}];",
                         TN, BN / TN)
               .str());
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", TM).str());
  out.line("#pragma unroll");
  out.line(llvm::formatv("for (int j = 0; j < {0}; ++j) acc[i][j] += a[i] * b[j];",
                         TN)
               .str());
  out.close();
  out.close();
  out.line("__syncthreads();");
  out.close();

  // The epilogue, per accumulator: the matmul's element is the register
  // (a buffer whose base is the element's own flat index).
  out.line("// epilogue: the kernel's results from each accumulator");
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int i = 0; i < {0}; ++i)", TM).str());
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int j = 0; j < {0}; ++j)", TN).str());
  out.line(llvm::formatv("const int64_t m = m0 + ty + i * {0}, n = n0 + tx + j * {1};",
                         BM / TM, BN / TN)
               .str());
  out.line(llvm::formatv("if (m >= {0} || n >= {1}) continue;", M, N).str());
  Index preIndex = batch;
  preIndex.push_back("m");
  preIndex.push_back("n");
  out.line("const int64_t flat_mn = " + flatIndex(outShape, preIndex) + ";");
  out.line("const " + target.storageType(dtype) + " acc_v = " +
           target.store(dtype, "acc[i][j]") + ";");
  ctx.buffers[mm.getResult()] = Buffer{"(&acc_v)", dtype, outShape, "flat_mn"};
  elemental.pushScope();
  for (auto [r, result] : llvm::enumerate(ctx.view.results)) {
    // Walk back through the layout tail to the value at the matmul's shape.
    SmallVector<Operation *> tail;
    Value pre = result;
    while (Operation *def = pre.getDefiningOp()) {
      if (!isa<ReshapeOp, TransposeOp>(def))
        break;
      tail.push_back(def);
      pre = def->getOperand(0);
    }
    std::string value = elemental.emit(pre, preIndex);
    std::vector<int64_t> shape = outShape;
    Index index = indexThroughLayoutTail(out, tail, preIndex, shape);
    const Buffer &buffer = ctx.results[r];
    out.line(buffer.ptr + "[" + flatIndex(shape, index) + "] = " +
             target.store(buffer.dtype, value) + ";" +
             (tail.empty() ? "" : "  // through " + std::to_string(tail.size()) +
                                      " layout op(s)"));
  }
  elemental.popScope();
  out.close();
  out.close();
}
