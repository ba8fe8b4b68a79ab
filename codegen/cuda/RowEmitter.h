//===- RowEmitter.h - a rows kernel, stage by stage -------------*- C++ -*-===//
//
// The state of one kernel of the `rows` strategy (Rows.cpp has the kernel
// and its design) while its stages are emitted, and the emitters of the
// stages, split by the kind of computation over Rows.cpp and Windows.cpp.
// Internal to codegen/cuda.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CODEGEN_CUDA_ROWEMITTER_H
#define DLC_CODEGEN_CUDA_ROWEMITTER_H

#include "codegen/cuda/Kernels.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace dlc::codegen::cuda {

/// Fewer rows than this leave most of a GPU's SMs idle.
constexpr int64_t kFewRows = 32;

/// A reduction (ReduceOpInterface) as C, for the kernels that compute one:
/// its accumulator type, `init`, `combine` (a statement folding `v` into
/// `a`), `finish` (the result from `a`: a mean divides), the prelude's
/// reduction over threads (`dlc_block_<collective>`, `dlc_warp_<collective>`)
/// and which input axes it reduces (R elements per output).
struct ReductionCode {
  std::string acc, init, combine, finish, collective;
  std::vector<bool> reduced;
  std::vector<int64_t> reducedShape;
  bool keep = false;
  int64_t R = 1;
  /// The input index of output `outIndex`'s element `r` (a variable: its
  /// position among the R reduced elements).
  Index inputIndex(CodeWriter &out, const Index &outIndex, const std::string &r) const;
};
ReductionCode reductionCode(mlir::Operation *reduction);

/// Emission state of one row kernel.
struct RowEmitter {
  KernelContext &ctx;
  CodeWriter &out;
  ElementalEmitter elemental;
  Index rowIndex;
  /// `warp_rows`: each warp has its own row (its lanes are the row's
  /// threads, `lane` in scope); else the block's threads share the row.
  bool warpRows;
  /// The threads that compute one row.
  int64_t threads;
  /// The split this kernel uses: the analysis's, or finer for attention.
  unsigned parallelDims;

  RowEmitter(KernelContext &ctx)
      : ctx(ctx), out(ctx.out),
        elemental(ctx.target, ctx.out, ctx.buffers, ctx.statics, *ctx.checks),
        warpRows(ctx.schedule.getStrategy() == KernelStrategy::warp_rows),
        threads(warpRows ? 32 : ctx.schedule.getBlock()[0]),
        parallelDims(ctx.analysis.parallelDims) {}

  /// The row's threads: this one's place among them, and how many.
  std::string rowThread() const { return warpRows ? "lane" : "threadIdx.x"; }
  std::string rowThreads() const { return warpRows ? "32" : "blockDim.x"; }
  /// The prelude's reduction over the row's threads: `dlc_block_<what>`, or
  /// `dlc_warp_<what>` (shuffles only) when a warp has the row.
  std::string rowReduction(llvm::StringRef what) const {
    return (warpRows ? "dlc_warp_" : "dlc_block_") + what.str();
  }
  /// Who computes a row, in the emitted comments.
  const char *rowGroup() const { return warpRows ? "warp" : "block"; }
  /// The barrier between stages of a row.
  std::string rowBarrier() const { return warpRows ? "__syncwarp();" : "__syncthreads();"; }

  const CudaTarget &target() const { return ctx.target; }
  std::vector<int64_t> suffixOf(mlir::Value v) const {
    std::vector<int64_t> s = shapeOf(v);
    return {s.begin() + parallelDims, s.end()};
  }
  int64_t perRow(mlir::Value v) const { return product(suffixOf(v)); }
  /// A convolution whose window (Cg x KH x KW products) is this long or
  /// longer gives a warp each output element (Windows.cpp), else a thread.
  static constexpr int64_t kWarpWindow = 512;
  static bool warpPerOutput(Conv2dOp op) {
    llvm::ArrayRef<int64_t> w = llvm::cast<mlir::RankedTensorType>(op.getW().getType()).getShape();
    return w[1] * w[2] * w[3] >= kWarpWindow;
  }
  /// The threads a window stage (conv2d, pooling) wants: one per 4 output
  /// elements of the row, or a warp per output element; whole warps, at
  /// most 512.
  int64_t windowThreads(mlir::Operation *stage) const {
    int64_t outputs = perRow(stage->getResult(0));
    auto conv = llvm::dyn_cast<Conv2dOp>(stage);
    int64_t need = conv && warpPerOutput(conv) ? outputs * 32 : (outputs + 3) / 4;
    return std::clamp<int64_t>((need + 31) / 32 * 32, 32, 512);
  }
  /// The full index of element `e` (a C expression) of this row of `v`.
  Index rowElement(mlir::Value v, const std::string &e) {
    Index index = rowIndex;
    Index rest = decompose(out, e, suffixOf(v));
    index.insert(index.end(), rest.begin(), rest.end());
    return index;
  }
  std::string read(mlir::Value v, const Index &index) { return elemental.emit(v, index); }
  void write(mlir::Value v, const Index &index, const std::string &value) {
    const Buffer &buffer = ctx.buffers.at(v);
    out.line(elementAt(buffer, flatIndex(buffer.shape, index)) + " = " +
             target().store(buffer.dtype, value) + ";");
  }
  /// `for (var = first; var < n; var += step) {` with a fresh scope.
  void openLoop(const std::string &var, const std::string &first, int64_t n,
                const std::string &step) {
    out.open(llvm::formatv("for (int64_t {0} = {1}; {0} < {2}; {0} += {3})", var, first, n,
                           step)
                 .str());
    elemental.pushScope();
  }
  /// `for (e = threadIdx.x; e < n; e += blockDim.x) {` (the lanes of the
  /// row's warp under warp_rows) with a fresh scope.
  void openStrided(const std::string &var, int64_t n) {
    openLoop(var, rowThread(), n, rowThreads());
  }
  void openSerial(const std::string &var, const std::string &from, int64_t n) {
    out.open(llvm::formatv("for (int64_t {0} = {1}; {0} < {2}; ++{0})", var,
                           from, n)
                 .str());
    elemental.pushScope();
  }
  void close() {
    elemental.popScope();
    out.close();
  }

  // The stages: each computes this row's elements of its result, the
  // block's threads together. Rows.cpp: contractions, normalisations,
  // reductions and losses along the row.
  void matmul(MatmulOp op);
  void softmax(mlir::Operation *op, bool log);
  void norm(mlir::Operation *op, bool rms);
  void reduce(mlir::Operation *op);
  void loss(mlir::Operation *op);
  // Windows.cpp: convolution and pooling, a window of the input per output
  // element.
  void conv2d(Conv2dOp op);
  void pool(mlir::Operation *op, bool max);
};

} // namespace dlc::codegen::cuda

#endif // DLC_CODEGEN_CUDA_ROWEMITTER_H
