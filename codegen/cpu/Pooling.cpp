//===- Pooling.cpp - max and average pooling on the CPU -------------------===//
//
// One (image, channel) plane per row of the stage; padding counts as -inf
// (max) or 0 (average), as in the oracle. f32/f64 max pooling works a row
// of the output at a time in the storage type (max rounds nothing); the
// other windows accumulate in double.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/Stages.h"

#include "ir/DlcDialect.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

static std::string str(int64_t v) { return std::to_string(v); }

void dlc::codegen::emitPool2d(Operation *op, StageContext &ctx) {
  bool isMax = isa<MaxPool2dOp>(op);
  auto kernel = op->getAttrOfType<DenseI64ArrayAttr>("kernel").asArrayRef();
  auto strides = op->getAttrOfType<DenseI64ArrayAttr>("strides").asArrayRef();
  auto padding = op->getAttrOfType<DenseI64ArrayAttr>("padding").asArrayRef();
  bool includePad = false;
  if (auto avg = dyn_cast<AvgPool2dOp>(op))
    includePad = avg.getCountIncludePad();
  auto x = cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
  auto y = cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  int64_t H = x[2], W = x[3], OH = y[2], OW = y[3];
  Buffer X = ctx.operand(op->getOperand(0));
  const Buffer &Y = ctx.result;
  CodeWriter &out = ctx.out;

  out.open("for (int64_t plane = " + ctx.rowsBegin(y[0] * y[1]) + "; plane < " +
           ctx.rowsEnd(y[0] * y[1]) + "; ++plane)");
  out.open("for (int64_t oh = 0; oh < " + str(OH) + "; ++oh)");
  if (isMax && (X.dtype == DType::F32 || X.dtype == DType::F64) && Y.dtype == X.dtype) {
    // Max is exact in the storage type: an output row starts at -inf and
    // takes the maximum with each window position's input row, over the
    // columns ow where that position is inside the image ([lo, hi), as in
    // im2col), a loop without a test per element that vectorises.
    std::string type = ctx.target.storageType(X.dtype);
    out.line(type + " *dst = " +
             addressOf(Y, "(plane * " + str(OH) + " + oh) * " + str(OW)) + ";");
    out.line("for (int64_t ow = 0; ow < " + str(OW) + "; ++ow) dst[ow] = -INFINITY;");
    out.open("for (int64_t kh = 0; kh < " + str(kernel[0]) + "; ++kh)");
    out.line("const int64_t ih = oh * " + str(strides[0]) + " - " + str(padding[0]) + " + kh;");
    out.line("if (ih < 0 || ih >= " + str(H) + ") continue;");
    out.open("for (int64_t kw = 0; kw < " + str(kernel[1]) + "; ++kw)");
    int64_t sw = strides[1];
    out.line("const int64_t off = kw - " + str(padding[1]) + ";");
    emitInsideColumns(out, W, OW, sw);
    out.line("const int64_t src = (plane * " + str(H) + " + ih) * " + str(W) + " + off;");
    out.open("for (int64_t ow = lo; ow < hi; ++ow)");
    out.line("const " + type + " v = " + elementAt(X, "src + ow * " + str(sw)) + ", a = dst[ow];");
    out.line("dst[ow] = v != v || a != a ? (" + type + ")NAN : v > a ? v : a;");
    out.close();
    out.close();
    out.close();
    out.close();
    out.close();
    return;
  }
  out.open("for (int64_t ow = 0; ow < " + str(OW) + "; ++ow)");
  out.line(isMax ? "double acc = -INFINITY;" : "double acc = 0;");
  if (!isMax)
    out.line("int64_t count = 0;");
  out.open("for (int64_t kh = 0; kh < " + str(kernel[0]) + "; ++kh)");
  out.line("const int64_t ih = oh * " + str(strides[0]) + " - " + str(padding[0]) + " + kh;");
  out.line("if (ih < 0 || ih >= " + str(H) + ") continue;");
  out.open("for (int64_t kw = 0; kw < " + str(kernel[1]) + "; ++kw)");
  out.line("const int64_t iw = ow * " + str(strides[1]) + " - " + str(padding[1]) + " + kw;");
  out.line("if (iw < 0 || iw >= " + str(W) + ") continue;");
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
