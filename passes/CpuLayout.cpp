//===- CpuLayout.cpp - channels-last convolutions for the CPU -------------===//
//
// `dlc-cpu-layout`: the layout assignment of the CPU's convolutions, as
// XLA's layout assignment and TVM's ConvertLayout do for theirs. oneDNN's
// convolution kernels on AVX-512 (brgconv) read and write NHWC; an NCHW
// convolution pays a reorder of its input and of its result around every
// call (codegen/cpu/DnnlConvPrelude.cpp), a tenth of ResNet-50's time. Here
// each convolution the CPU runs on oneDNN becomes a channels-last one
// between two transposes, and the transposes then sink through the
// element-wise ops that read them and cancel (ComposeTransposes, then the
// identity fold) against the next convolution's: a chain of convolutions,
// their activations and residual adds stays NHWC, and the layout changes
// only where an op that has no channels-last form reads it (a pooling, a
// reshape, the graph's outputs).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/CpuPackedGemm.h"
#include "passes/analysis/DynamicRows.h"

#include "ir/DlcDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstdlib>
#include <string>

namespace dlc {
#define GEN_PASS_DEF_DLCCPULAYOUT
#include "passes/Passes.h.inc"
} // namespace dlc

using namespace mlir;
using namespace dlc;

namespace {

constexpr int64_t kToNhwc[] = {0, 2, 3, 1};
constexpr int64_t kToNchw[] = {0, 3, 1, 2};

/// Whether `v`'s rows grow with the dimension of a module for a range of
/// sizes (DynamicRows.h's mark, on its defining op or function argument).
bool hasDynamicRows(Value v) {
  if (Operation *def = v.getDefiningOp())
    return def->hasAttr(kDynamicRowsAttr);
  auto arg = cast<BlockArgument>(v);
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func && func.getArgAttr(arg.getArgNumber(), kDynamicRowsAttr);
}

/// transpose(x, perm), carrying x's dynamic-rows mark (both layouts keep
/// the batch first): unmarked, a kernel yielding it would run every row of
/// the range's largest size, whatever the size of the run.
Value transpose(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  OperationState state(loc, TransposeOp::getOperationName());
  state.addOperands(x);
  state.addAttribute("perm", b.getDenseI64ArrayAttr(perm));
  if (perm.front() == 0 && hasDynamicRows(x))
    state.addAttribute(kDynamicRowsAttr, b.getUnitAttr());
  state.addTypes(type.clone(shape));
  return b.create(state)->getResult(0);
}

/// The convolutions the CPU runs on oneDNN's primitive in any layout (the
/// code generator's own rule for NCHW ones, Contraction.cpp, is narrower:
/// there the reorders of the activations cost what a 1x1 convolution on
/// a large image gains).
/// `packing`: CpuPackedGemm.h's mode where the CPU compiling packs, else
/// Off.
bool runsOnDnnl(Conv2dOp conv, CpuPackedGemm packing) {
  auto w = conv.getW().getType();
  auto y = conv.getResult().getType();
  if (conv.getChannelsLast() ||
      !cast<RankedTensorType>(conv.getX().getType()).getElementType().isF32() ||
      !isa_and_nonnull<ParamOp, ConstantOp>(conv.getW().getDefiningOp()))
    return false;
  auto ws = cast<RankedTensorType>(w).getShape();
  auto ys = cast<RankedTensorType>(y).getShape();
  int64_t flopsPerImage = 2 * ws[0] * ws[1] * ws[2] * ws[3] * ys[2] * ys[3];
  // A channels-last convolution's calls split its output rows, an NCHW
  // one's its output channels: under 64 output pixels an image (ResNet-50's
  // last stage, 7x7) the rows are too few to share at batch 1 (its 3x3
  // convolutions of 512 channels, two threads: 1.63 ms split by rows, 1.25
  // ms by channels with the reorders). Per image, not per batch: a module
  // for a range of batch sizes (--dim N=1..64) must choose as the module
  // for each size does, to compute the same bits.
  // oneDNN's kernels want a long enough reduction per output: LeNet's
  // first convolution (1 channel, 5x5: 25 products an output, 6 outputs)
  // ran 1.75x slower channels-last on oneDNN than as im2col + GEMM, its
  // second (6 channels, 150 products, 0.48 MFLOP an image) 1.3x faster
  // with its pooling (N=64, two threads: 230 us fused as im2col + GEMM,
  // 178 us channels-last); an RGB 3x3 stem (27 products: MobileNet's, 32
  // outputs at 112x112) 360 -> 210 us channels-last, its input's
  // transpose included; a pointwise 1x1 of 32 channels between depthwise
  // ones is best channels-last too (the transposes around it cost more).
  // Grouped and depthwise ones have oneDNN kernels of their own, and
  // im2col + GEMM runs them as a GEMM per group of O / G rows (one,
  // depthwise): a MobileNet-like stack of three depthwise + pointwise pairs
  // at 112x112, N=1, two threads: 1.77 ms NCHW, 1.30 ms channels-last.
  // Grouped and 1x1 ones are taken whatever their pixels. NCHW, im2col +
  // GEMM runs a depthwise one as a GEMM a channel: MobileNet v1's two at
  // 7x7 (1024 and 512 channels, two threads, AVX2) took 298 and 188 us,
  // channels-last 52 and 37. A 1x1 one's NCHW plan reorders its activations
  // in and out, and between channels-last neighbours it needs transposes
  // too: MobileNet's 7x7 pointwise pair 670 + 914 -> 457 + 869 us, ResNet-50's
  // stage 4 about 0.9 ms faster, though 7 rows split 4 and 3.
  // Where the CPU compiling packs (CpuPackedGemm.h), one the packed
  // implicit GEMM runs is channels-last whatever its pixels: ResNet-50's
  // 7x7 3x3 convolutions of 512 channels (AVX2, two threads) took 2.5-2.9
  // ms NCHW on oneDNN, 1.9-2.0 ms on it, though 7 rows split 4 and 3.
  bool grouped = conv.getGroups() != 1, pointwise = ws[2] * ws[3] == 1;
  int64_t reduction = ws[1] * ws[2] * ws[3];
  bool longEnough = grouped || reduction >= 27;
  bool packed = packedConvolution(ws[1] * conv.getGroups(), ws[0], ws[2], ws[3],
                                  conv.getGroups(), packing);
  return flopsPerImage >= 400'000 && longEnough &&
         (grouped || pointwise || packed || ys[2] * ys[3] >= 64);
}

/// op(transpose(a, p), transpose(b, p), scalar...) ->
/// transpose(op(a, b, scalar...), p) for an element-wise op whose operands
/// are all the same transpose of values of one shape, or scalars.
struct SinkTransposeBelowElementwise
    : public OpInterfaceRewritePattern<ElementwiseOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(ElementwiseOpInterface elementwise,
                                PatternRewriter &rewriter) const override {
    Operation *op = elementwise.getOperation();
    if (op->getNumResults() != 1 || op->getNumRegions() != 0)
      return failure();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    std::optional<ArrayRef<int64_t>> perm;
    SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      auto type = cast<RankedTensorType>(v.getType());
      if (type.getRank() == 0) {
        operands.push_back(v);
        continue;
      }
      auto t = v.getDefiningOp<TransposeOp>();
      if (!t || type.getShape() != resultType.getShape() || (perm && *perm != t.getPerm()))
        return failure();
      perm = t.getPerm();
      operands.push_back(t.getX());
    }
    if (!perm)
      return failure();
    auto inner = cast<RankedTensorType>(
        llvm::find_if(operands, [](Value v) {
          return cast<RankedTensorType>(v.getType()).getRank() > 0;
        })->getType());
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addAttributes(op->getAttrs());
    state.addTypes(inner.clone(resultType.getElementType()));
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(), moved->getResult(0), *perm));
    return success();
  }
};

/// pool(transpose(x, to NCHW)) -> transpose(pool_channels_last(x), to
/// NCHW): a pooling of NHWC activations (ResNet's after its stem, its
/// global average) reads them as they are.
template <typename PoolOp>
struct SinkTransposeBelowPooling : public OpRewritePattern<PoolOp> {
  using OpRewritePattern<PoolOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(PoolOp pool, PatternRewriter &rewriter) const override {
    auto t = pool.getX().template getDefiningOp<TransposeOp>();
    if (pool.getChannelsLast() || !t || t.getPerm() != ArrayRef<int64_t>(kToNchw))
      return failure();
    auto type = cast<RankedTensorType>(pool.getType());
    auto shape = type.getShape();
    OperationState state(pool.getLoc(), pool->getName());
    state.addOperands(t.getX());
    state.addAttributes(pool->getAttrs());
    state.addAttribute(pool.getChannelsLastAttrName(), rewriter.getUnitAttr());
    state.addTypes(type.clone({shape[0], shape[2], shape[3], shape[1]}));
    Operation *moved = rewriter.create(state);
    rewriter.replaceOp(pool, transpose(rewriter, pool.getLoc(), moved->getResult(0), kToNchw));
    return success();
  }
};

struct CpuLayoutPass : public dlc::impl::DlcCpuLayoutBase<CpuLayoutPass> {
  void runOnOperation() override {
    // Comparison switches (docs/design/2026-11-22-cpu-codegen.md):
    // DLC_CPU_CONV=gemm runs no convolution on oneDNN, DLC_CPU_LAYOUT=nchw
    // keeps them all NCHW.
    const char *library = std::getenv("DLC_CPU_CONV");
    const char *layout = std::getenv("DLC_CPU_LAYOUT");
    if ((library && std::string(library) == "gemm") || (layout && std::string(layout) == "nchw"))
      return;
    CpuPackedGemm packing = cpuPackedGemmFromEnv();
    if (!hostCpuPacks(packing))
      packing = CpuPackedGemm::Off;
    SmallVector<Conv2dOp> convs;
    getOperation().walk([&](Conv2dOp conv) {
      if (runsOnDnnl(conv, packing))
        convs.push_back(conv);
    });
    if (convs.empty())
      return;
    OpBuilder b(&getContext());
    for (Conv2dOp conv : convs) {
      b.setInsertionPoint(conv);
      Location loc = conv.getLoc();
      Value x = transpose(b, loc, conv.getX(), kToNhwc);
      OperationState state(loc, Conv2dOp::getOperationName());
      state.addOperands(x);
      state.addOperands(conv->getOperands().drop_front());
      state.addAttributes(conv->getAttrs());
      state.addAttribute(conv.getChannelsLastAttrName(), b.getUnitAttr());
      auto type = conv.getResult().getType();
      auto shape = cast<RankedTensorType>(type).getShape();
      state.addTypes(cast<RankedTensorType>(type).clone(
          {shape[0], shape[2], shape[3], shape[1]}));
      Value y = b.create(state)->getResult(0);
      conv.getResult().replaceAllUsesWith(transpose(b, loc, y, kToNchw));
      conv.erase();
    }
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkTransposeBelowElementwise, SinkTransposeBelowPooling<MaxPool2dOp>,
                 SinkTransposeBelowPooling<AvgPool2dOp>>(&getContext());
    TransposeOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
