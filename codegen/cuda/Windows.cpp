//===- Windows.cpp - convolution and pooling stages of a rows kernel ------===//
//
// The stages of a `rows` kernel (Rows.cpp) that slide a window over an
// NCHW image: conv2d and max/avg pooling. A thread computes whole output
// elements of the row, each from its window of the input (positions in
// the padding skipped), accumulating in double as the oracle does. A
// convolution whose window is long (a weight gradient: the batch as its
// channels and the image as its window, tens of thousands of products per
// output) gives a warp each output instead, the lanes splitting the window
// and summing by shuffles.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/RowEmitter.h"

#include "ir/DlcDialect.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;
using namespace dlc::codegen::cuda;

void RowEmitter::conv2d(Conv2dOp op) {
  Value result = op.getResult();
  std::vector<int64_t> xs = shapeOf(op.getX()), ws = shapeOf(op.getW());
  ArrayRef<int64_t> st = op.getStrides(), pad = op.getPadding(), dil = op.getDilations();
  int64_t groups = op.getGroups(), O = ws[0], Cg = ws[1], KH = ws[2], KW = ws[3];
  // Below a window of kWarpWindow products a thread per output keeps every
  // lane busy; above it a warp per output.
  bool warpPerOutput = RowEmitter::warpPerOutput(op);
  if (warpPerOutput) {
    out.line(llvm::formatv("// {0}: a warp per output element, its lanes splitting the "
                           "window of {1} products",
                           describeOp(op), Cg * KH * KW)
                 .str());
    openLoop("e", "threadIdx.x / 32", perRow(result), "blockDim.x / 32");
  } else {
    out.line("// " + describeOp(op) + ": a thread per output element");
    openStrided("e", perRow(result));
  }
  Index idx = rowElement(result, "e");
  out.line(llvm::formatv("const int64_t cbase = ({0}) / {1} * {2};", idx[1],
                         O / groups, Cg)
               .str());
  out.line("double sum = 0;");
  if (warpPerOutput) {
    openLoop("p", "threadIdx.x % 32", Cg * KH * KW, "32");
    out.line(llvm::formatv("const int64_t c = p / {0}, kh = p / {1} % {2}, kw = p % {1};",
                           KH * KW, KW, KH)
                 .str());
  } else {
    openSerial("c", "0", Cg);
    openSerial("kh", "0", KH);
  }
  out.line(llvm::formatv("const int64_t ih = {0} * {1} - {2} + kh * {3};", idx[2],
                         st[0], pad[0], dil[0])
               .str());
  out.line(llvm::formatv("if (ih < 0 || ih >= {0}) continue;", xs[2]).str());
  if (!warpPerOutput)
    openSerial("kw", "0", KW);
  out.line(llvm::formatv("const int64_t iw = {0} * {1} - {2} + kw * {3};", idx[3],
                         st[1], pad[1], dil[1])
               .str());
  out.line(llvm::formatv("if (iw < 0 || iw >= {0}) continue;", xs[3]).str());
  std::string xv = read(op.getX(), {idx[0], "cbase + c", "ih", "iw"});
  std::string wv = read(op.getW(), {idx[1], "c", "kh", "kw"});
  out.line("sum += (double)" + xv + " * (double)" + wv + ";");
  if (warpPerOutput) {
    close();
    out.line("for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);");
  } else {
    close();
    close();
    close();
  }
  if (op.getBias())
    out.line("sum += (double)" + read(op.getBias(), {idx[1]}) + ";");
  if (warpPerOutput) // every lane has the sum; one stores it
    out.open("if (threadIdx.x % 32 == 0)");
  write(result, idx, "(" + target().computeType(elementDType(result)) + ")sum");
  if (warpPerOutput)
    out.close();
  close();
}

void RowEmitter::pool(Operation *op, bool max) {
  Value x = op->getOperand(0), result = op->getResult(0);
  std::vector<int64_t> xs = shapeOf(x);
  auto kernel = op->getAttrOfType<DenseI64ArrayAttr>("kernel").asArrayRef();
  auto st = op->getAttrOfType<DenseI64ArrayAttr>("strides").asArrayRef();
  auto pad = op->getAttrOfType<DenseI64ArrayAttr>("padding").asArrayRef();
  bool includePad = false;
  if (auto avg = dyn_cast<AvgPool2dOp>(op))
    includePad = avg.getCountIncludePad();
  out.line("// " + describeOp(op) + ": a thread per output element");
  openStrided("e", perRow(result));
  Index idx = rowElement(result, "e");
  out.line(max ? "double a = -INFINITY;" : "double a = 0;");
  out.line("int64_t count = 0;");
  openSerial("kh", "0", kernel[0]);
  out.line(llvm::formatv("const int64_t ih = {0} * {1} - {2} + kh;", idx[2], st[0], pad[0]).str());
  out.line(llvm::formatv("if (ih < 0 || ih >= {0}) continue;", xs[2]).str());
  openSerial("kw", "0", kernel[1]);
  out.line(llvm::formatv("const int64_t iw = {0} * {1} - {2} + kw;", idx[3], st[1], pad[1]).str());
  out.line(llvm::formatv("if (iw < 0 || iw >= {0}) continue;", xs[3]).str());
  std::string v = read(x, {idx[0], idx[1], "ih", "iw"});
  out.line(max ? "a = ((double)" + v + " > a || " + v + " != " + v + ") && a == a ? (double)" + v + " : a;"
               : "a += (double)" + v + ";");
  out.line("++count;");
  close();
  close();
  std::string value = max ? "a"
                          : includePad ? "a / " + std::to_string(kernel[0] * kernel[1])
                                       : "count ? a / count : 0.0";
  write(result, idx, "(" + target().computeType(elementDType(result)) + ")(" + value + ")");
  close();
}
