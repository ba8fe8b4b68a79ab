//===- Gemm.cpp - operand staging and epilogue of the GEMM templates ------===//

#include "codegen/cuda/Gemm.h"

#include "passes/TileRules.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

GemmProblem cuda::gemmProblem(const KernelContext &ctx) {
  GemmProblem p;
  p.matmul = cast<MatmulOp>(fusableMatmul(ctx.view.op));
  p.outShape = shapeOf(p.matmul.getResult());
  size_t rank = p.outShape.size();
  p.M = p.outShape[rank - 2];
  p.N = p.outShape[rank - 1];
  std::vector<int64_t> lhsShape = shapeOf(p.matmul.getLhs());
  p.K = p.matmul.getTransposeA() ? lhsShape[lhsShape.size() - 2] : lhsShape.back();
  p.batchShape.assign(p.outShape.begin(), p.outShape.end() - 2);
  p.dtype = elementDType(p.matmul.getResult());
  return p;
}

Index cuda::matmulOperandIndex(Value v, const Index &batch, bool transposed,
                               const std::string &r, const std::string &c) {
  std::vector<int64_t> shape = shapeOf(v);
  size_t rank = shape.size(), batchRank = rank - 2;
  Index index(rank, "0");
  size_t skip = batch.size() - batchRank; // NumPy broadcasting aligns right
  for (size_t d = 0; d < batchRank; ++d)
    index[d] = shape[d] == 1 ? "0" : batch[skip + d];
  index[rank - 2] = transposed ? c : r;
  index[rank - 1] = transposed ? r : c;
  return index;
}

const Buffer *cuda::argumentBuffer(const KernelContext &ctx, Value v, DType dtype) {
  auto it = ctx.buffers.find(v);
  if (it == ctx.buffers.end() || !llvm::is_contained(ctx.view.args, v) ||
      !it->second.base.empty() || it->second.dtype != dtype || elementDType(v) != dtype)
    return nullptr;
  return &it->second;
}

std::string cuda::aligned16(ArrayRef<const Buffer *> buffers) {
  std::string condition;
  for (const Buffer *b : buffers)
    condition += std::string(condition.empty() ? "" : " && ") +
                 "((unsigned long long)(const void *)" + b->ptr + " & 15) == 0";
  return condition;
}

void cuda::emitChunkCopy(CodeWriter &out, const std::string &aligned) {
  out.line("if (" + aligned + ") dlc_cp_async16(dst, src, full);");
  out.line("else for (int e = 0; e < 16; ++e) ((unsigned char *)dst)[e] = full ? ((const "
           "unsigned char *)src)[e] : 0;");
}

void cuda::emitLdmatrixLanes(CodeWriter &out) {
  out.line("const int lrow = lane % 8, q_lo = (lane / 8) % 2, q_hi = lane / 16;  // ldmatrix: "
           "the lane's row of its matrix q = lane / 8, and q's two bits");
}

/// Opens the loop over this thread's elements of a `rows` x `depth` slice
/// and declares `kk` and `rr`; the caller closes it.
static void openSliceLoop(CodeWriter &out, const GemmProblem &problem, bool isLhs, int64_t rows,
                          int64_t depth, int64_t threads) {
  MatmulOp mm = problem.matmul;
  bool transposed = isLhs ? mm.getTransposeA() : mm.getTransposeB();
  int64_t total = rows * depth, perThread = (total + threads - 1) / threads;
  // The lhs is [m, k] unless transposed; the rhs [k, n] unless transposed.
  bool rowsContiguous = transposed == isLhs;
  // Unrolled: a slice prefetched into registers is indexed by `l`, which
  // must be a constant for the array to stay in registers.
  out.line("#pragma unroll");
  out.open(llvm::formatv("for (int l = 0; l < {0}; ++l)", perThread).str());
  out.line(llvm::formatv("const int e = threadIdx.x + l * {0};", threads).str());
  if (total % threads)
    out.line(llvm::formatv("if (e >= {0}) break;", total).str());
  std::string kk, rr;
  if (rowsContiguous) {
    rr = llvm::formatv("e % {0}", rows);
    kk = llvm::formatv("e / {0}", rows);
  } else {
    kk = llvm::formatv("e % {0}", depth);
    rr = llvm::formatv("e / {0}", depth);
  }
  out.line("const int kk = " + kk + ", rr = " + rr + ";");
}

void cuda::emitOperandSlice(KernelContext &ctx, ElementalEmitter &elemental,
                            const GemmProblem &problem, const Index &batch, bool isLhs,
                            int64_t rows, int64_t depth, int64_t threads,
                            const std::function<std::string(const std::string &)> &store,
                            const std::string &kOrigin) {
  CodeWriter &out = ctx.out;
  MatmulOp mm = problem.matmul;
  Value operand = isLhs ? mm.getLhs() : mm.getRhs();
  bool transposed = isLhs ? mm.getTransposeA() : mm.getTransposeB();
  out.line(llvm::formatv("// {0} slice: {1} x {2}", isLhs ? "lhs" : "rhs",
                         isLhs ? "BM" : "BK", isLhs ? "BK" : "BN")
               .str());
  openSliceLoop(out, problem, isLhs, rows, depth, threads);
  std::string origin = isLhs ? "m0" : "n0";
  int64_t extent = isLhs ? problem.M : problem.N;
  out.line("const int64_t gk = " + kOrigin + " + kk, gr = " + origin + " + rr;");
  out.open(llvm::formatv("if (gk < {0} && gr < {1})", problem.K, extent).str());
  elemental.pushScope();
  Index index = isLhs ? matmulOperandIndex(operand, batch, transposed, "gr", "gk")
                      : matmulOperandIndex(operand, batch, transposed, "gk", "gr");
  std::string value = elemental.emit(operand, index);
  elemental.popScope();
  out.line(store(value));
  out.close();
  out.line("else");
  out.line("  " + store("0"));
  out.close();
}

void cuda::emitSliceLoop(KernelContext &ctx, const GemmProblem &problem, bool isLhs,
                         int64_t rows, int64_t depth, int64_t threads,
                         const std::string &statement) {
  openSliceLoop(ctx.out, problem, isLhs, rows, depth, threads);
  ctx.out.line(statement);
  ctx.out.close();
}

void cuda::emitGemmEpilogue(KernelContext &ctx, ElementalEmitter &elemental,
                            const GemmProblem &problem, const Index &batch,
                            const std::string &accumulator) {
  CodeWriter &out = ctx.out;
  const CudaTarget &target = ctx.target;
  Index preIndex = batch;
  preIndex.push_back("m");
  preIndex.push_back("n");
  out.line("const int64_t flat_mn = " + flatIndex(problem.outShape, preIndex) + ";");
  out.line("const " + target.storageType(problem.dtype) +
           " acc_v = " + target.store(problem.dtype, accumulator) + ";");
  // The matmul's element is the register: a buffer whose base is the
  // element's own flat index.
  MatmulOp mm = problem.matmul;
  ctx.buffers[mm.getResult()] =
      Buffer{"(&acc_v)", problem.dtype, problem.outShape, "flat_mn"};
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
    std::vector<int64_t> shape = problem.outShape;
    Index index = indexThroughLayoutTail(out, tail, preIndex, shape);
    const Buffer &buffer = ctx.results[r];
    out.line(buffer.ptr + "[" + flatIndex(shape, index) + "] = " +
             target.store(buffer.dtype, value) + ";" +
             (tail.empty() ? "" : "  // through " + std::to_string(tail.size()) +
                                      " layout op(s)"));
  }
  elemental.popScope();
}
