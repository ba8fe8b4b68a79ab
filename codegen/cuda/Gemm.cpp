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
  p.op = fusableContraction(ctx.view.op);
  p.matmul = dyn_cast<MatmulOp>(p.op);
  p.conv = dyn_cast<Conv2dOp>(p.op);
  GemmDims g = gemmDims(p.op);
  p.M = g.m;
  p.N = g.n;
  p.K = g.k;
  p.resultShape = shapeOf(p.op->getResult(0));
  if (p.conv)
    p.batchShape = {(int64_t)p.conv.getGroups()};
  else
    p.batchShape.assign(p.resultShape.begin(), p.resultShape.end() - 2);
  p.dtype = elementDType(p.op->getResult(0));
  return p;
}

Index GemmProblem::resultIndex(const Index &batch, const std::string &m,
                               const std::string &n) const {
  if (!conv) {
    Index index = batch;
    index.push_back(m);
    index.push_back(n);
    return index;
  }
  // [N, O, OH, OW]: n is (image, pixel); the group's channels follow the
  // groups before it.
  std::string channel = conv.getGroups() == 1
                            ? m
                            : llvm::formatv("({0} * {1} + {2})", batch[0], M, m).str();
  int64_t OH = resultShape[2], OW = resultShape[3];
  return {llvm::formatv("{0} / {1}", n, OH * OW).str(), channel,
          llvm::formatv("{0} / {1} % {2}", n, OW, OH).str(),
          llvm::formatv("{0} % {1}", n, OW).str()};
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
  bool transposed = problem.transposed(isLhs);
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

/// Opens the test that element (gk, gr) of a convolution's operand slice is
/// in the problem and declares what reading it needs: the window position
/// (c, kh, kw) of k and, for the image, the input pixel (ih, iw) that output
/// pixel gr reads there (the test fails in the padding). Returns the
/// operand's index.
static Index openConvolutionElement(CodeWriter &out, const GemmProblem &problem,
                                    const Index &batch, bool isLhs) {
  Conv2dOp conv = problem.conv;
  std::vector<int64_t> xs = shapeOf(conv.getX()), ws = shapeOf(conv.getW());
  int64_t Cg = ws[1], KH = ws[2], KW = ws[3], OH = problem.resultShape[2],
          OW = problem.resultShape[3];
  ArrayRef<int64_t> st = conv.getStrides(), pad = conv.getPadding(), dil = conv.getDilations();
  bool grouped = conv.getGroups() > 1;
  if (KH * KW == 1)
    out.line("const int64_t c = gk, kh = 0, kw = 0;");
  else
    out.line(llvm::formatv("const int64_t c = gk / {0}, kh = gk / {1} % {2}, kw = gk % {1};",
                           KH * KW, KW, KH)
                 .str());
  if (isLhs) {
    out.open(llvm::formatv("if (gk < {0} && gr < {1})", problem.K, problem.M).str());
    std::string channel =
        grouped ? llvm::formatv("{0} * {1} + gr", batch[0], problem.M).str() : "gr";
    return {channel, "c", "kh", "kw"};
  }
  // gr is (image, output pixel).
  out.line(llvm::formatv("const int64_t img = gr / {0}, ih = gr / {1} % {2} * {3} - {4} + kh * "
                         "{5}, iw = gr % {1} * {6} - {7} + kw * {8};",
                         OH * OW, OW, OH, st[0], pad[0], dil[0], st[1], pad[1], dil[1])
               .str());
  out.open(llvm::formatv("if (gk < {0} && gr < {1} && ih >= 0 && ih < {2} && iw >= 0 && "
                         "iw < {3})",
                         problem.K, problem.N, xs[2], xs[3])
               .str());
  std::string channel = grouped ? llvm::formatv("{0} * {1} + c", batch[0], Cg).str() : "c";
  return {"img", channel, "ih", "iw"};
}

void cuda::emitOperandSlice(KernelContext &ctx, ElementalEmitter &elemental,
                            const GemmProblem &problem, const Index &batch, bool isLhs,
                            int64_t rows, int64_t depth, int64_t threads,
                            const std::function<std::string(const std::string &)> &store,
                            const std::string &kOrigin) {
  CodeWriter &out = ctx.out;
  Value operand = isLhs ? problem.lhs() : problem.rhs();
  out.line(llvm::formatv("// {0} slice: {1} x {2}", isLhs ? "lhs" : "rhs",
                         isLhs ? "BM" : "BK", isLhs ? "BK" : "BN")
               .str());
  openSliceLoop(out, problem, isLhs, rows, depth, threads);
  std::string origin = isLhs ? "m0" : "n0";
  int64_t extent = isLhs ? problem.M : problem.N;
  out.line("const int64_t gk = " + kOrigin + " + kk, gr = " + origin + " + rr;");
  Index index;
  if (problem.conv) {
    index = openConvolutionElement(out, problem, batch, isLhs);
  } else {
    out.open(llvm::formatv("if (gk < {0} && gr < {1})", problem.K, extent).str());
    bool transposed = problem.transposed(isLhs);
    index = isLhs ? matmulOperandIndex(operand, batch, transposed, "gr", "gk")
                  : matmulOperandIndex(operand, batch, transposed, "gk", "gr");
  }
  elemental.pushScope();
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
  Index preIndex = problem.resultIndex(batch, "m", "n");
  out.line("const int64_t flat_mn = " + flatIndex(problem.resultShape, preIndex) + ";");
  std::string sum = accumulator;
  if (problem.conv && problem.conv.getBias()) {
    elemental.pushScope();
    sum = "(" + accumulator + " + " + elemental.emit(problem.conv.getBias(), {preIndex[1]}) + ")";
    elemental.popScope();
  }
  out.line("const " + target.storageType(problem.dtype) +
           " acc_v = " + target.store(problem.dtype, sum) + ";");
  // The contraction's element is the register: a buffer whose base is the
  // element's own flat index.
  ctx.buffers[problem.op->getResult(0)] =
      Buffer{"(&acc_v)", problem.dtype, problem.resultShape, "flat_mn"};
  elemental.pushScope();
  for (auto [r, result] : llvm::enumerate(ctx.view.results)) {
    // Walk back through the layout tail to the value at the contraction's shape.
    SmallVector<Operation *> tail;
    Value pre = result;
    while (Operation *def = pre.getDefiningOp()) {
      if (!isa<ReshapeOp, TransposeOp>(def))
        break;
      tail.push_back(def);
      pre = def->getOperand(0);
    }
    std::string value = elemental.emit(pre, preIndex);
    std::vector<int64_t> shape = problem.resultShape;
    Index index = indexThroughLayoutTail(out, tail, preIndex, shape);
    const Buffer &buffer = ctx.results[r];
    out.line(buffer.ptr + "[" + flatIndex(shape, index) + "] = " +
             target.store(buffer.dtype, value) + ";" +
             (tail.empty() ? "" : "  // through " + std::to_string(tail.size()) +
                                      " layout op(s)"));
  }
  elemental.popScope();
}
