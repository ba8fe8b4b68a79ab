//===- Pooling.cpp - max and average pooling on the CPU -------------------===//
//
// One (image, channel) plane per row of the stage; padding counts as -inf
// (max) or 0 (average), as in the oracle. f32/f64 max pooling works in the
// storage type (max rounds nothing), the windows inside the image unrolled
// and vectorised; the other windows accumulate in double.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/Stages.h"

#include "ir/DlcDialect.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

static std::string str(int64_t v) { return std::to_string(v); }

void dlc::codegen::openWindowLoops(CodeWriter &out, const Window &w) {
  auto axis = [&](const char *k, const char *i, const char *o, int64_t K, int64_t s, int64_t p,
                  int64_t d, int64_t size) {
    out.open(std::string("for (int64_t ") + k + " = 0; " + k + " < " + str(K) + "; ++" + k + ")");
    out.line(std::string("const int64_t ") + i + " = " + o + " * " + str(s) + " - " + str(p) +
             " + " + k + (d == 1 ? "" : " * " + str(d)) + ";");
    out.line(std::string("if (") + i + " < 0 || " + i + " >= " + str(size) + ") continue;");
  };
  axis("kh", "ih", "oh", w.KH, w.sh, w.pt, w.dh, w.H);
  axis("kw", "iw", "ow", w.KW, w.sw, w.pl, w.dw, w.W);
}

namespace {
/// A pooling's kind, window and shapes (its operand's and result's, in the
/// op's layout).
struct PoolWindow {
  explicit PoolWindow(Operation *op)
      : isMax(isa<MaxPool2dOp>(op)),
        kernel(op->getAttrOfType<DenseI64ArrayAttr>("kernel").asArrayRef()),
        strides(op->getAttrOfType<DenseI64ArrayAttr>("strides").asArrayRef()),
        padding(op->getAttrOfType<DenseI64ArrayAttr>("padding").asArrayRef()),
        x(cast<RankedTensorType>(op->getOperand(0).getType()).getShape()),
        y(cast<RankedTensorType>(op->getResult(0).getType()).getShape()) {
    if (auto avg = dyn_cast<AvgPool2dOp>(op))
      includePad = avg.getCountIncludePad();
  }
  bool isMax, includePad = false;
  ArrayRef<int64_t> kernel, strides, padding, x, y;
};
} // namespace

/// Channels-last (dlc-cpu-layout): rows are (image, output row); each
/// output position takes its window's positions inside the image (tested
/// once per position, not per channel) over all channels at once, a loop
/// the compiler vectorises. Max works in the storage type for f32/f64 (a
/// NaN wins, as in the oracle), the rest accumulates in double.
static void emitPool2dChannelsLast(Operation *op, StageContext &ctx) {
  const PoolWindow window(op);
  const bool isMax = window.isMax, includePad = window.includePad;
  ArrayRef<int64_t> kernel = window.kernel, strides = window.strides, padding = window.padding,
                    x = window.x, y = window.y;
  int64_t H = x[1], W = x[2], C = x[3], OH = y[1], OW = y[2];
  Buffer X = ctx.operand(op->getOperand(0));
  const Buffer &Y = ctx.result;
  CodeWriter &out = ctx.out;
  bool exact = isMax && (X.dtype == DType::F32 || X.dtype == DType::F64) && Y.dtype == X.dtype;
  std::string acc = exact ? ctx.target.storageType(X.dtype) : "double";

  out.open("for (int64_t q = " + ctx.rowsBegin(y[0] * OH) + "; q < " + ctx.rowsEnd(y[0] * OH) +
           "; ++q)");
  out.line("const int64_t n = q / " + str(OH) + ", oh = q % " + str(OH) + ";");
  out.open("for (int64_t ow = 0; ow < " + str(OW) + "; ++ow)");
  // Each channel loop is kept a loop: GCC otherwise unrolls a short one
  // (LeNet's 16 channels) completely before its vectoriser runs, and the
  // max's NaN test then leaves scalar compares and branches (LeNet's pool
  // of [64, 10, 10, 16], one thread: 34 us unrolled, 4 us vectorised).
  const std::string keepLoop = "#pragma GCC unroll 1";
  out.line(acc + " acc[" + str(C) + "];");
  out.line(keepLoop);
  out.line("for (int64_t c = 0; c < " + str(C) + "; ++c) acc[c] = " +
           (isMax ? "-INFINITY" : "0") + ";");
  if (!isMax)
    out.line("int64_t count = 0;");
  openWindowLoops(out, {kernel[0], kernel[1], strides[0], strides[1], padding[0], padding[1], 1,
                        1, H, W});
  if (!isMax)
    out.line("++count;");
  out.line("const int64_t at = ((n * " + str(H) + " + ih) * " + str(W) + " + iw) * " + str(C) +
           ";");
  out.line("#pragma GCC ivdep");
  out.line(keepLoop);
  out.open("for (int64_t c = 0; c < " + str(C) + "; ++c)");
  if (exact) {
    out.line("const " + acc + " v = " + elementAt(X, "at + c") + ";");
    out.line("acc[c] = v > acc[c] || v != v ? v : acc[c];");
  } else if (isMax) {
    out.line("const double v = " + loadAt(ctx.target, X, "at + c") + ";");
    out.line("acc[c] = v != v || acc[c] != acc[c] ? NAN : v > acc[c] ? v : acc[c];");
  } else {
    out.line("acc[c] += " + loadAt(ctx.target, X, "at + c") + ";");
  }
  out.close();
  out.close();
  out.close();
  std::string scale = isMax      ? ""
                      : includePad ? " / " + str(kernel[0] * kernel[1]) + ".0"
                                   : " / (double)count"; // padding only: NaN
  out.line(keepLoop);
  out.open("for (int64_t c = 0; c < " + str(C) + "; ++c)");
  out.line(storeAt(ctx.target, Y, "(q * " + str(OW) + " + ow) * " + str(C) + " + c",
                   "acc[c]" + scale));
  out.close();
  out.close();
  out.close();
}

void dlc::codegen::emitPool2d(Operation *op, StageContext &ctx) {
  if (op->hasAttr("channels_last"))
    return emitPool2dChannelsLast(op, ctx);
  const PoolWindow window(op);
  const bool isMax = window.isMax, includePad = window.includePad;
  ArrayRef<int64_t> kernel = window.kernel, strides = window.strides, padding = window.padding,
                    x = window.x, y = window.y;
  int64_t H = x[2], W = x[3], OH = y[2], OW = y[3];
  Buffer X = ctx.operand(op->getOperand(0));
  const Buffer &Y = ctx.result;
  CodeWriter &out = ctx.out;

  out.open("for (int64_t plane = " + ctx.rowsBegin(y[0] * y[1]) + "; plane < " +
           ctx.rowsEnd(y[0] * y[1]) + "; ++plane)");
  out.open("for (int64_t oh = 0; oh < " + str(OH) + "; ++oh)");
  if (isMax && (X.dtype == DType::F32 || X.dtype == DType::F64) && Y.dtype == X.dtype) {
    // Max is exact in the storage type. Rows and columns whose window lies
    // wholly inside the image (compile-time bounds) take a loop over the
    // columns with the window unrolled and nothing to test, which the
    // compiler vectorises; the border (padding) tests each position. A NaN
    // anywhere in the window gives NaN, as in the oracle.
    std::string type = ctx.target.storageType(X.dtype);
    int64_t KH = kernel[0], KW = kernel[1], sh = strides[0], sw = strides[1];
    int64_t pt = padding[0], pl = padding[1];
    auto firstInside = [](int64_t pad, int64_t stride) { return (pad + stride - 1) / stride; };
    auto endInside = [](int64_t size, int64_t k, int64_t pad, int64_t stride, int64_t out) {
      int64_t last = size - k + pad; // the last window start inside, in padded terms
      return last < 0 ? int64_t(0) : std::min(out, last / stride + 1);
    };
    int64_t rLo = std::min(OH, firstInside(pt, sh)), rHi = std::max(rLo, endInside(H, KH, pt, sh, OH));
    int64_t cLo = std::min(OW, firstInside(pl, sw)), cHi = std::max(cLo, endInside(W, KW, pl, sw, OW));
    auto take = [&](const std::string &v) {
      out.line("{ const " + type + " v = " + v + "; m = v > m || v != v ? v : m; }");
    };
    std::string planeBase = "plane * " + str(H * W);
    // One output element at (oh, ow), testing each window position.
    auto checkedElement = [&](const std::string &ow) {
      out.line(type + " m = -INFINITY;");
      out.open("for (int64_t kh = 0; kh < " + str(KH) + "; ++kh)");
      out.line("const int64_t ih = oh * " + str(sh) + " - " + str(pt) + " + kh;");
      out.line("if (ih < 0 || ih >= " + str(H) + ") continue;");
      out.open("for (int64_t kw = 0; kw < " + str(KW) + "; ++kw)");
      out.line("const int64_t iw = " + ow + " * " + str(sw) + " - " + str(pl) + " + kw;");
      out.line("if (iw < 0 || iw >= " + str(W) + ") continue;");
      take(elementAt(X, planeBase + " + ih * " + str(W) + " + iw"));
      out.close();
      out.close();
      out.line("dst[" + ow + "] = m;");
    };
    auto checkedColumns = [&](int64_t from, int64_t to) {
      if (from >= to)
        return;
      out.open("for (int64_t ow = " + str(from) + "; ow < " + str(to) + "; ++ow)");
      checkedElement("ow");
      out.close();
    };
    out.line(type + " *dst = " +
             addressOf(Y, "(plane * " + str(OH) + " + oh) * " + str(OW)) + ";");
    bool borderRows = rLo > 0 || rHi < OH;
    if (borderRows)
      out.open("if (oh >= " + str(rLo) + " && oh < " + str(rHi) + ")");
    checkedColumns(0, cLo);
    out.line("const int64_t top = " + planeBase + " + (oh * " + str(sh) + " - " + str(pt) +
             ") * " + str(W) + " - " + str(pl) + ";");
    out.line("#pragma GCC ivdep");
    out.open("for (int64_t ow = " + str(cLo) + "; ow < " + str(cHi) + "; ++ow)");
    out.line(type + " m = -INFINITY;");
    if (KH * KW <= 64) {
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          take(elementAt(X, "top + ow * " + str(sw) + " + " + str(kh * W + kw)));
    } else { // a large window (a global pool): loops, still without tests
      out.open("for (int64_t kh = 0; kh < " + str(KH) + "; ++kh)");
      out.open("for (int64_t kw = 0; kw < " + str(KW) + "; ++kw)");
      take(elementAt(X, "top + ow * " + str(sw) + " + kh * " + str(W) + " + kw"));
      out.close();
      out.close();
    }
    out.line("dst[ow] = m;");
    out.close();
    checkedColumns(cHi, OW);
    if (borderRows) {
      out.close();
      out.open("else");
      checkedColumns(0, OW);
      out.close();
    }
    out.close();
    out.close();
    return;
  }
  out.open("for (int64_t ow = 0; ow < " + str(OW) + "; ++ow)");
  out.line(isMax ? "double acc = -INFINITY;" : "double acc = 0;");
  if (!isMax)
    out.line("int64_t count = 0;");
  openWindowLoops(out, {kernel[0], kernel[1], strides[0], strides[1], padding[0], padding[1], 1,
                        1, H, W});
  out.line("const double v = " +
           loadAt(ctx.target, X, "(plane * " + str(H) + " + ih) * " + str(W) + " + iw") + ";");
  if (isMax)
    out.line("acc = v != v || acc != acc ? NAN : v > acc ? v : acc;");
  else
  {
    out.line("acc += v;");
    out.line("++count;");
  }
  out.close();
  out.close();
  if (!isMax)
    out.line(includePad ? "acc /= " + str(kernel[0] * kernel[1]) + ";"
                        : "acc /= (double)count; // a window of padding only gives NaN");
  out.line(storeAt(ctx.target, Y, "(plane * " + str(OH) + " + oh) * " + str(OW) + " + ow", "acc"));
  out.close();
  out.close();
  out.close();
}
