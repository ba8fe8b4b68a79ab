//===- Contraction.cpp - matmul and conv2d on the CPU ---------------------===//
//
// f32 and f64 go to the prelude's dlc_sgemm (oneDNN or OpenBLAS) and
// dlc_dgemm (OpenBLAS), one call per
// batch slice of this call's rows; convolution's rows are (image, output
// channel): im2col (skipped for 1x1 unit-stride unpadded kernels) then one
// GEMM per image and group for the call's channels. A bf16 or f16 matmul
// widens its operands to f32 (exact) for dlc_sgemm, accumulating in f32 as
// tensor cores do (--precision bf16|f16 on the CPU). Other dtypes use
// loops accumulating in double, as the oracle does.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/MaskedAttention.h"
#include "codegen/cpu/Stages.h"

#include "ir/DlcDialect.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace dlc;
using namespace dlc::codegen;

static std::string str(int64_t v) { return std::to_string(v); }

/// The prelude's GEMM for an f32 product whose B has rows `ldb` floats
/// apart: dlc_sgemm_b_rows_2k where B is read in place with rows a multiple
/// of 2 KiB apart (CpuTarget.cpp: oneDNN's rate halves there without
/// AVX-512), else dlc_sgemm.
static const char *sgemmFor(bool transposeB, int64_t ldb) {
  return !transposeB && ldb % 512 == 0 ? "dlc_sgemm_b_rows_2k" : "dlc_sgemm";
}

/// Whether an f32 product by B runs dlc_sgemm_weights or dlc_sgemv_weights
/// (B packed once, PackedGemmPrelude.cpp): B is a whole module weight the
/// rule of CpuPackedGemm.h takes; the prelude adds the CPU's condition.
static bool multipliesByWeights(const CpuTarget &target, DType dtype, int64_t K, int64_t N,
                                const std::string &bBase, bool constantB) {
  return dtype == DType::F32 && constantB && bBase == "0" &&
         packedProduct(K, N, target.packedGemm);
}

std::string StageContext::rowsBegin(int64_t unitRows) const {
  int64_t per = unitRows / analysis.rows;
  return per == 1 ? target.rangeBegin() : target.rangeBegin() + " * " + str(per);
}
std::string StageContext::rowsEnd(int64_t unitRows) const {
  int64_t per = unitRows / analysis.rows;
  return per == 1 ? target.rangeEnd() : target.rangeEnd() + " * " + str(per);
}

std::string dlc::codegen::addressOf(const Buffer &b, const std::string &flat) {
  if (b.base.empty())
    return "(" + b.ptr + " + " + flat + ")";
  return "(" + b.ptr + " + (" + flat + ") - (" + b.base + "))";
}
std::string dlc::codegen::loadAt(const CTarget &target, const Buffer &b,
                                 const std::string &flat) {
  return target.load(b.dtype, elementAt(b, flat));
}
std::string dlc::codegen::storeAt(const CTarget &target, const Buffer &b,
                                  const std::string &flat,
                                  const std::string &value) {
  std::string v = value;
  if (b.dtype == DType::I1)
    v = "(" + value + ") != 0";
  else if (!isFloat(b.dtype))
    v = "dlc_float_to_int(" + value + ")";
  return elementAt(b, flat) + " = " + target.store(b.dtype, v) + ";";
}

/// The flat index, in a tensor of batch shape `in`, of the batch element
/// `b` of the broadcast batch shape `out` (NumPy rules).
static std::string batchIndex(const std::vector<int64_t> &out,
                              const std::vector<int64_t> &in,
                              const std::string &b) {
  std::string flat;
  int64_t stride = 1;
  size_t skip = out.size() - in.size();
  std::vector<int64_t> outStrides(out.size(), 1);
  for (size_t d = out.size(); d-- > 0;) {
    outStrides[d] = stride;
    stride *= out[d];
  }
  int64_t inStride = 1;
  for (size_t d = in.size(); d-- > 0;) {
    if (in[d] != 1) {
      std::string i = "(" + b + " / " + str(outStrides[d + skip]) + ") % " +
                      str(out[d + skip]);
      flat += (flat.empty() ? "" : " + ") + i + " * " + str(inStride);
    }
    inStride *= in[d];
  }
  return flat.empty() ? "0" : "(" + flat + ")";
}

/// Masked attention's products (MaskedAttention.h): `rows` as far as the
/// end of the query tile of row m (tiles of keys.tile rows of the M), and
/// the keys [k0, k1) that tile attends, of `count` in all.
static void emitKeyTile(CodeWriter &out, const KeyTiles &keys, int64_t M, int64_t count) {
  const std::string tile = str(keys.tile);
  out.line("const int64_t tile = m / " + tile + ", mEnd = (tile + 1) * " + tile + " < " +
           str(M) + " ? (tile + 1) * " + tile + " : " + str(M) + ";");
  out.line("const int64_t rows = mEnd - m < qEnd - q ? mEnd - m : qEnd - q;");
  emitTileKeys(out, keys, "tile", count);
}

/// The offset of key k0 in B: q·kᵀ's keys are B's columns (rows when B is
/// transposed, K floats apart); p·v's are B's rows (N apart; columns when
/// transposed).
static std::string keyOffsetInB(bool tb, int64_t K, int64_t N, bool columns) {
  if (columns)
    return tb ? "k0 * " + str(K) : std::string("k0");
  return tb ? std::string("k0") : "k0 * " + str(N);
}

void dlc::codegen::emitMatmul(Operation *op, StageContext &ctx) {
  auto matmul = cast<MatmulOp>(op);
  CodeWriter &out = ctx.out;
  std::vector<int64_t> a = shapeOf(matmul.getLhs()), b = shapeOf(matmul.getRhs()),
                       c = shapeOf(matmul.getResult());
  bool ta = matmul.getTransposeA(), tb = matmul.getTransposeB();
  int64_t M = c[c.size() - 2], N = c.back();
  int64_t K = ta ? a[a.size() - 2] : a.back();
  std::vector<int64_t> cBatch(c.begin(), c.end() - 2), aBatch(a.begin(), a.end() - 2),
      bBatch(b.begin(), b.end() - 2);
  int64_t unitRows = 1;
  for (int64_t d : cBatch)
    unitRows *= d;
  unitRows *= M;
  Buffer A = ctx.operand(matmul.getLhs()), B = ctx.operand(matmul.getRhs());
  const Buffer &C = ctx.result;
  bool blas = (A.dtype == DType::F32 || A.dtype == DType::F64) && K > 0;
  // bf16 and f16: widened to f32 (exactly) for sgemm, which accumulates in
  // f32 as tensor cores do; the result rounded once.
  bool widened = (A.dtype == DType::BF16 || A.dtype == DType::F16) && A.dtype == B.dtype &&
                 A.dtype == C.dtype && K > 0;
  if (blas && ctx.analysis.parallelDims == c.size()) {
    // A single row split over its columns (AnalysisOptions::
    // splitSingleRowColumns): this call's columns [begin, end) of it.
    ctx.usesBlas = true;
    const char *gemm = A.dtype != DType::F32 ? "dlc_dgemm" : sgemmFor(tb, N);
    std::string begin = ctx.target.rangeBegin(), end = ctx.target.rangeEnd();
    if (multipliesByWeights(ctx.target, A.dtype, K, N, "0", ctx.isConstant(matmul.getRhs()))) {
      out.line("dlc_sgemv_weights(" + std::string(gemm) + ", " + (tb ? "true" : "false") + ", " +
               str(N) + ", " + str(K) + ", " + addressOf(A, "0") + ", " + addressOf(B, "0") +
               ", " + str(tb ? K : N) + ", " + addressOf(C, "0") + ", " + begin + ", " + end +
               ");");
      return;
    }
    out.line(std::string(gemm) + "(false, " + (tb ? "true" : "false") + ", 1, " + end + " - " +
             begin + ", " + str(K) + ", " + addressOf(A, "0") + ", " + str(K) + ", " +
             addressOf(B, tb ? begin + " * " + str(K) : begin) + ", " + str(tb ? K : N) + ", " +
             addressOf(C, begin) + ", " + str(N) + ");");
    return;
  }
  std::string first = ctx.rowsBegin(unitRows), last = ctx.rowsEnd(unitRows);

  out.open("for (int64_t q = " + first + ", qEnd = " + last + "; q < qEnd;)");
  out.line("const int64_t batch = q / " + str(M) + ", m = q % " + str(M) + ";");
  const KeyTiles *keys = blas && ctx.keyTiles && !ta ? ctx.keyTiles : nullptr;
  if (keys)
    emitKeyTile(out, *keys, M, ctx.keyColumns ? N : K);
  else
    out.line("const int64_t rows = " + str(M) + " - m < qEnd - q ? " + str(M) +
             " - m : qEnd - q;");
  auto batchBase = [&](const std::vector<int64_t> &batch, int64_t size) {
    std::string index = batchIndex(cBatch, batch, "batch");
    return index == "0" ? std::string("0") : index + " * " + str(size);
  };
  std::string aBase = batchBase(aBatch, M * K), bBase = batchBase(bBatch, K * N);
  std::string aFirst = ta ? aBase + " + m" : aBase + " + m * " + str(K);
  if (aBase == "0")
    aFirst = ta ? "m" : "m * " + str(K);
  if (blas) {
    ctx.usesBlas = true;
    std::string gemm = A.dtype != DType::F32 ? "dlc_dgemm" : sgemmFor(tb, N);
    if (keys) {
      // Only the keys [k0, k1) of the rows' tile: q·kᵀ's columns, or p·v's
      // k. Rows lda = K apart either way; B's keys are its rows (or
      // columns, transposed).
      const bool columns = ctx.keyColumns;
      const std::string n = columns ? "k1 - k0" : str(N), k = columns ? str(K) : "k1 - k0",
                        keyAt = columns ? " + k0" : "";
      out.line(gemm + "(false, " + (tb ? "true" : "false") + ", rows, " + n + ", " + k + ", " +
               addressOf(A, aFirst + (columns ? "" : " + k0")) + ", " + str(K) + ", " +
               addressOf(B, bBase + " + " + keyOffsetInB(tb, K, N, columns)) + ", " +
               str(tb ? K : N) + ", " + addressOf(C, "q * " + str(N) + keyAt) + ", " + str(N) +
               ");");
      out.line("q += rows;");
      out.close();
      return;
    }
    if (multipliesByWeights(ctx.target, A.dtype, K, N, bBase, ctx.isConstant(matmul.getRhs())))
      gemm = "dlc_sgemm_weights(" + gemm + ", ";
    else
      gemm += "(";
    out.line(gemm + (ta ? "true" : "false") + ", " +
             (tb ? "true" : "false") + ", rows, " + str(N) + ", " + str(K) +
             ", " + addressOf(A, aFirst) + ", " + str(ta ? M : K) + ", " +
             addressOf(B, bBase) + ", " + str(tb ? K : N) + ", " +
             addressOf(C, "q * " + str(N)) + ", " + str(N) + ");");
  } else if (widened) {
    ctx.usesBlas = true;
    // The call's A rows (all of A's batch when A is transposed), B's batch
    // and the result rows, in f32.
    std::string aCount = ta ? str(M * K) : "rows * " + str(K);
    std::string aStart = ta ? aBase : aFirst;
    out.line("float *wa = dlc_gemm_scratch(0, " + aCount + "), *wb = dlc_gemm_scratch(1, " +
             str(K * N) + "), *wc = dlc_gemm_scratch(2, rows * " + str(N) + ");");
    out.line("for (int64_t i = 0; i < " + aCount + "; ++i) wa[i] = " +
             loadAt(ctx.target, A, aStart + " + i") + ";");
    out.line("for (int64_t i = 0; i < " + str(K * N) + "; ++i) wb[i] = " +
             loadAt(ctx.target, B, bBase + " + i") + ";");
    out.line(std::string(sgemmFor(tb, N)) + "(" + (ta ? "true" : "false") + ", " +
             (tb ? "true" : "false") + ", rows, " + str(N) + ", " + str(K) + ", " +
             (ta ? "wa + m" : "wa") + ", " + str(ta ? M : K) + ", wb, " + str(tb ? K : N) +
             ", wc, " + str(N) + ");");
    out.line("for (int64_t i = 0; i < rows * " + str(N) + "; ++i) " +
             storeAt(ctx.target, C, "q * " + str(N) + " + i", "wc[i]"));
  } else {
    out.open("for (int64_t r = 0; r < rows; ++r)");
    out.open("for (int64_t n = 0; n < " + str(N) + "; ++n)");
    out.line("double acc = 0;");
    out.open("for (int64_t k = 0; k < " + str(K) + "; ++k)");
    std::string ai = ta ? aBase + " + k * " + str(M) + " + m + r"
                        : aBase + " + (m + r) * " + str(K) + " + k";
    std::string bi = tb ? bBase + " + n * " + str(K) + " + k"
                        : bBase + " + k * " + str(N) + " + n";
    out.line("acc += (double)" + loadAt(ctx.target, A, ai) + " * (double)" +
             loadAt(ctx.target, B, bi) + ";");
    out.close();
    out.line(storeAt(ctx.target, C, "(q + r) * " + str(N) + " + n", "acc"));
    out.close();
    out.close();
  }
  out.line("q += rows;");
  out.close();
}

/// Whether an f32 NCHW convolution runs on oneDNN's primitive: one group
/// (the prelude's NCHW plans split output channels, which would cut groups;
/// dlc-cpu-layout makes grouped ones channels-last) and weights the module holds (reordered
/// once, DnnlConvPrelude.cpp). Where it wins (ResNet-50 at batch 1 on two
/// threads, `dlc profile` with DLC_CPU_CONV=dnnl against =gemm, AVX-512):
/// every kernel wider than 1x1, 1.1-1.9x (the stem 1.9x: no im2col); 1x1
/// kernels on 7x7 images, 1.2-1.5x (a GEMM 49 columns wide is a poor
/// one). Not 1x1 kernels on larger images, 1.1-1.7x slower: their
/// im2col-free GEMM is as fast as oneDNN, which pays for reordering the
/// activations in and out. Nor small ones, whose reorders cost more than
/// the arithmetic (LeNet's 5x5 kernels of 1 and 6 channels).
static bool convThroughDnnl(Conv2dOp conv, const StageContext &ctx) {
  using Library = CpuTarget::ConvLibrary;
  if (ctx.target.convLibrary == Library::Gemm || conv.getGroups() != 1 ||
      !ctx.isConstant(conv.getW()))
    return false;
  if (ctx.target.convLibrary == Library::Dnnl)
    return true;
  std::vector<int64_t> w = shapeOf(conv.getW()), y = shapeOf(conv.getResult());
  int64_t flopsPerImage = 2 * w[0] * w[1] * w[2] * w[3] * y[2] * y[3];
  bool wide = w[2] * w[3] > 1, smallImage = y[2] * y[3] < 128;
  return flopsPerImage >= 4'000'000 && (wide || smallImage);
}

namespace {
/// A convolution's sizes, in NCHW terms whatever its layout.
struct ConvGeometry {
  explicit ConvGeometry(Conv2dOp conv);
  int64_t N, C, H, W, O, Cg, KH, KW, OH, OW, G, Og, sh, sw, pt, pl, dh, dw;
};
/// A convolution stage: its sizes and its operands' buffers.
struct ConvStage : ConvGeometry {
  ConvStage(Conv2dOp conv, StageContext &ctx);
  mlir::Value convX;
  Buffer X, Wt;
  std::optional<Buffer> bias;
};
} // namespace

/// A channels-last convolution's input, of which this call's output rows
/// read the input rows (image, row) from those of its first output row's
/// top window row to its last output row's bottom one, 4 rows more on
/// either side: the Winograd blocks (dlc_conv_winograd) reach up to R - 1
/// output rows past the call's, and oneDNN's parts take the row under a
/// strided part's last (DnnlConvPrelude.cpp).
static Buffer inputRows(const ConvStage &s, StageContext &ctx) {
  const std::string begin = "(" + ctx.rowsBegin(s.N * s.OH) + ")",
                    last = "(" + ctx.rowsEnd(s.N * s.OH) + " - 1)";
  const std::string top = "(" + begin + " % " + str(s.OH) + " * " + str(s.sh) + " - " +
                          str(s.pt + 4) + ")",
                    bottom = "((" + last + " % " + str(s.OH) + " + 1) * " + str(s.sh) + " + " +
                             str((s.KH - 1) * s.dh + 4 - s.pt) + ")";
  const std::string first = begin + " / " + str(s.OH) + " * " + str(s.H) + " + (" + top +
                            " > 0 ? " + top + " : 0)",
                    end = last + " / " + str(s.OH) + " * " + str(s.H) + " + (" + bottom + " < " +
                          str(s.H) + " ? " + bottom + " : " + str(s.H) + ")";
  return ctx.operandRows(s.convX, first, end);
}

ConvGeometry::ConvGeometry(Conv2dOp conv) {
  std::vector<int64_t> x = shapeOf(conv.getX()), w = shapeOf(conv.getW()),
                       y = shapeOf(conv.getResult());
  if (conv.getChannelsLast()) { // [N, H, W, C] as [N, C, H, W]
    x = {x[0], x[3], x[1], x[2]};
    y = {y[0], y[3], y[1], y[2]};
  }
  N = x[0], C = x[1], H = x[2], W = x[3];
  O = w[0], Cg = w[1], KH = w[2], KW = w[3], OH = y[2], OW = y[3];
  G = conv.getGroups(), Og = O / G;
  sh = conv.getStrides()[0], sw = conv.getStrides()[1];
  pt = conv.getPadding()[0], pl = conv.getPadding()[1];
  dh = conv.getDilations()[0], dw = conv.getDilations()[1];
}

ConvStage::ConvStage(Conv2dOp conv, StageContext &ctx) : ConvGeometry(conv) {
  convX = conv.getX();
  X = conv.getChannelsLast() ? inputRows(*this, ctx) : ctx.operand(conv.getX());
  Wt = ctx.operand(conv.getW());
  if (conv.getBias())
    bias = ctx.operand(conv.getBias());
}

/// Whether a convolution runs as Winograd first, and dlc's output block
/// (0: no): on the packed GEMM where the CPU packs (dlc_conv_winograd),
/// else oneDNN's (F(4x4, 3x3) or F(2x2, 3x3) on AVX-512; the prelude falls
/// back to the direct kernels where it has none): 3x3 windows, unit
/// strides and dilations, one group, padding of at most one, channels in
/// multiples of its 16-wide blocks. dlc's F(4x4, 3x3) where the image has
/// 28 rows and columns or more, else F(2x2, 3x3): its blocks of 4 rows are
/// computed whole by each call that has one of their rows, which wastes
/// much of a call of a few rows. On ResNet-50, two AVX2 threads, against
/// the packed implicit GEMM: its 3x3s at 56x56 and 28x28 F(4x4) 0.65 and
/// 0.6x (F(2x2) 0.75 and 0.65x), at 14x14 F(2x2) 0.7x (F(4x4) 1.0x). None
/// where the batch has fewer than 196 output pixels (a 14x14 image): the
/// transformed filters are 16/9 of the filters' bytes, all read by every
/// call for a few rows, and such a product is bound by reading them (7x7
/// at batch 1, two threads: F(2x2) 1.2x the implicit GEMM's time, one
/// thread 1.0x; at batch 8 the two are even; DLC_CPU_WINOGRAD=2 lifts this
/// for tests). On ResNet-50's 3x3 convolutions (bench/cpu/conv_bench.cpp,
/// one thread) oneDNN's runs 1.3-3.1x faster than its direct kernels. The
/// price is rounding: Winograd's transforms add and subtract (and scale)
/// products before the filter's sum, so its error against the f64 oracle
/// is a few times the direct kernels' (ResNet-50's logits: RMS error
/// relative to their RMS 3.44e-7 direct, 3.48e-7 with F(2x2), 3.54e-7 with
/// F(4x4) too; tests keep their tolerances; DLC_CPU_WINOGRAD=0 turns it
/// off).
static int64_t winogradCandidate(const ConvGeometry &s, const CpuTarget &target) {
  using Winograd = CpuTarget::Winograd;
  if (!(target.winograd != Winograd::Never && s.KH == 3 && s.KW == 3 && s.sh == 1 &&
        s.sw == 1 && s.dh == 1 && s.dw == 1 && s.G == 1 && s.pt <= 1 && s.pl <= 1 &&
        s.C % 16 == 0 && s.O % 16 == 0 &&
        (target.winograd == Winograd::Always || s.N * s.OH * s.OW >= 196)))
    return 0;
  return s.OH >= 28 && s.OW >= 28 ? 4 : 2;
}

/// Four slices of the output channels for a convolution of a batch of at
/// most 8 output rows (ResNet-50's 7x7 stage at batch 1) and 128 channels
/// or more, on the packed implicit GEMM (not Winograd, which transforms
/// all channels at once): its calls split over channel slices, then rows.
/// Split over its 7 rows alone, two threads took 4 and 3 (an eighth of the
/// time lost to waiting), and each read all the filters for a few rows,
/// a product bound by reading them; a slice's call reads its slice's.
/// ResNet-50's 7x7 3x3s (two threads): 2.6 -> 2.1 ms. Its 1x1s stay on
/// oneDNN's 1x1 kernels, split by rows (moved to the packed GEMM in
/// slices, those of 2048 input channels took 8-15% longer).
int64_t dlc::codegen::convChannelSlices(Operation *op, const CpuTarget &target) {
  auto conv = dyn_cast<Conv2dOp>(op);
  if (!conv || !conv.getChannelsLast() || elementDType(conv.getResult()) != DType::F32)
    return 1;
  ConvGeometry s(conv);
  if (!packedConvolution(s.C, s.O, s.KH, s.KW, s.G, target.packedGemm) ||
      winogradCandidate(s, target) != 0 || s.N * s.OH > 8 || s.O < 128)
    return 1;
  return 4;
}

/// The call to dlc_conv_dnnl (DnnlConvPrelude.cpp) for this call's `rows`
/// of the convolution, opening the block of the loops that compute them
/// where oneDNN cannot; before it, for a channels-last one the CPU may run
/// as an implicit GEMM on its packed filters, dlc_conv_packed
/// (PackedGemmPrelude.cpp), which declines where the CPU does not pack.
static void openDnnlConv(Conv2dOp conv, StageContext &ctx, const ConvStage &s, int64_t rows) {
  std::string shape;
  for (int64_t v : {s.C, s.H, s.W, s.O, s.KH, s.KW, s.OH, s.OW, s.sh, s.sw, s.pt, s.pl, s.dh,
                    s.dw, s.G, winogradCandidate(s, ctx.target)})
    shape += (shape.empty() ? "DlcConvShape{" : ", ") + str(v);
  shape += "}";
  const Buffer &Y = ctx.result;
  // x, w, bias, y, yBase, first, last: the arguments both calls share.
  const std::string operands =
      addressOf(s.X, "0") + ", " + addressOf(s.Wt, "0") + ", " +
      (s.bias ? addressOf(*s.bias, "0") : "nullptr") + ", " + Y.ptr + ", " +
      (Y.base.empty() ? "0" : Y.base) + ", " + ctx.rowsBegin(rows) + ", " + ctx.rowsEnd(rows);
  ctx.usesDnnlConv = true;
  const std::string dnnl = "!dlc_conv_dnnl(" + shape + ", " +
                           (conv.getChannelsLast() ? "true" : "false") + ", " + operands + ")";
  ConvEpilogue *tail = ctx.epilogue;
  if (!conv.getChannelsLast() ||
      !packedConvolution(s.C, s.O, s.KH, s.KW, s.G, ctx.target.packedGemm)) {
    ctx.out.open("if (" + dnnl + ")");
    return;
  }
  ctx.usesBlas = true; // the packed GEMM's scratch is the blas prelude's
  if (!tail) {
    ctx.out.open("if (!dlc_conv_packed(" + shape + ", " + operands + ") && " + dnnl + ")");
    return;
  }
  // The packed kernel stores the kernel's result, tail applied; where it
  // declines, oneDNN or the loops compute the stage and the result loops
  // apply the tail, inside this block.
  const Buffer &R = tail->result;
  ctx.out.open("if (!dlc_conv_packed(" + shape + ", " + addressOf(s.X, "0") + ", " +
               addressOf(s.Wt, "0") + ", " + (s.bias ? addressOf(*s.bias, "0") : "nullptr") +
               ", " + R.ptr + ", " + (R.base.empty() ? "0" : R.base) + ", " +
               ctx.rowsBegin(rows) + ", " + ctx.rowsEnd(rows) + ", DlcConvEpilogue{" +
               (tail->residual ? addressOf(*tail->residual, "0") : "nullptr") + ", " +
               (tail->relu ? "true" : "false") + "}" +
               (ctx.channelSliced ? ", dlc_panel0, dlc_panel1) && dlc_slice == 0)" : "))"));
  tail->taken = true;
  ctx.out.open("if (" + dnnl + ")");
}

/// A channels-last convolution (dlc-cpu-layout made it for oneDNN): rows
/// are (image, output row); oneDNN computes them, else loops accumulating
/// in double, as the oracle does.
static void emitConv2dChannelsLast(Conv2dOp conv, StageContext &ctx) {
  CodeWriter &out = ctx.out;
  ConvStage s(conv, ctx);
  const int64_t H = s.H, W = s.W, C = s.C, O = s.O, Cg = s.Cg, Og = s.Og, KH = s.KH, KW = s.KW,
                OH = s.OH, OW = s.OW, sh = s.sh, sw = s.sw, pt = s.pt, pl = s.pl, dh = s.dh,
                dw = s.dw;
  const Buffer &X = s.X, &Wt = s.Wt, &Y = ctx.result;
  const std::optional<Buffer> &bias = s.bias;
  bool dnnl = X.dtype == DType::F32;
  if (dnnl)
    openDnnlConv(conv, ctx, s, s.N * OH);
  out.open("for (int64_t q = " + ctx.rowsBegin(s.N * OH) + "; q < " + ctx.rowsEnd(s.N * OH) +
           "; ++q)");
  out.line("const int64_t n = q / " + str(OH) + ", oh = q % " + str(OH) + ";");
  out.open("for (int64_t ow = 0; ow < " + str(OW) + "; ++ow)");
  out.open("for (int64_t o = 0; o < " + str(O) + "; ++o)");
  out.line("const int64_t g = o / " + str(Og) + ";");
  out.line("double acc = " +
           (bias ? "(double)" + loadAt(ctx.target, *bias, "o") : std::string("0")) + ";");
  openWindowLoops(out, {KH, KW, sh, sw, pt, pl, dh, dw, H, W});
  out.open("for (int64_t c = 0; c < " + str(Cg) + "; ++c)");
  out.line("acc += (double)" +
           loadAt(ctx.target, X,
                  "((n * " + str(H) + " + ih) * " + str(W) + " + iw) * " + str(C) + " + g * " +
                      str(Cg) + " + c") +
           " * (double)" +
           loadAt(ctx.target, Wt,
                  "((o * " + str(Cg) + " + c) * " + str(KH) + " + kh) * " + str(KW) + " + kw") +
           ";");
  out.close();
  out.close();
  out.close();
  out.line(storeAt(ctx.target, Y, "((q * " + str(OW) + ") + ow) * " + str(O) + " + o", "acc"));
  out.close();
  out.close();
  out.close();
  if (dnnl)
    out.close();
}

void dlc::codegen::emitConv2d(Operation *op, StageContext &ctx) {
  auto conv = cast<Conv2dOp>(op);
  if (conv.getChannelsLast())
    return emitConv2dChannelsLast(conv, ctx);
  CodeWriter &out = ctx.out;
  ConvStage s(conv, ctx);
  const int64_t C = s.C, H = s.H, W = s.W, O = s.O, Cg = s.Cg, KH = s.KH, KW = s.KW, OH = s.OH,
                OW = s.OW, G = s.G, Og = s.Og, sh = s.sh, sw = s.sw, pt = s.pt, pl = s.pl,
                dh = s.dh, dw = s.dw;
  const Buffer &X = s.X, &Wt = s.Wt, &Y = ctx.result;
  const std::optional<Buffer> &bias = s.bias;
  bool blas = X.dtype == DType::F32 || X.dtype == DType::F64;
  int64_t patch = Cg * KH * KW, pixels = OH * OW;
  std::string type = ctx.target.storageType(X.dtype);

  bool dnnl = blas && X.dtype == DType::F32 && convThroughDnnl(conv, ctx);
  if (dnnl) // oneDNN's primitive, else the loops below
    openDnnlConv(conv, ctx, s, s.N * O);
  if (blas) {
    // This call's rows are (image, output channel) pairs q in [first, last):
    // per image, the channels [o0, o1) it has, per group among them: the
    // group's im2col (skipped for 1x1 unit-stride unpadded kernels), one GEMM
    // for the channels, then their bias. A batch of one thus splits over
    // output channels (each call building the image's columns it needs).
    ctx.usesBlas = true;
    bool direct = KH == 1 && KW == 1 && sh == 1 && sw == 1 && pt == 0 &&
                  pl == 0 && OH == H && OW == W;
    // The input extent the windows cover, padding included.
    int64_t Hp = (OH - 1) * sh + (KH - 1) * dh + 1, Wp = (OW - 1) * sw + (KW - 1) * dw + 1;
    bool padded = pt > 0 || pl > 0 || Hp > H || Wp > W;
    if (!padded) {
      Hp = H;
      Wp = W;
    }
    if (!direct) {
      out.line("DlcScratch colMemory(" + str(patch * pixels + (padded ? Cg * Hp * Wp : 0)) +
               " * sizeof(" + type + "));");
      guardScratch(out, ctx.checks->add(fb::CheckKind::scratch_memory, ctx.kernelOp),
                   "colMemory");
      out.line(type + " *col = (" + type + " *)colMemory.data;");
      if (padded)
        out.line(type + " *padded = col + " + str(patch * pixels) + ";");
    }
    out.open("for (int64_t q = " + ctx.rowsBegin(s.N * O) + ", qEnd = " +
             ctx.rowsEnd(s.N * O) + "; q < qEnd;)");
    out.line("const int64_t n = q / " + str(O) + ", o0 = q % " + str(O) + ";");
    out.line("const int64_t o1 = " + str(O) + " < o0 + (qEnd - q) ? " + str(O) +
             " : o0 + (qEnd - q);");
    out.open("for (int64_t g = o0 / " + str(Og) + "; g * " + str(Og) + " < o1; ++g)");
    out.line("const int64_t gFirst = o0 > g * " + str(Og) + " ? o0 : g * " + str(Og) +
             ", gLast = o1 < (g + 1) * " + str(Og) + " ? o1 : (g + 1) * " + str(Og) + ";");
    std::string xBase = "(n * " + str(C) + " + g * " + str(Cg) + ") * " + str(H * W);
    if (!direct) {
      // im2col: col[(c, kh, kw), (oh, ow)], zero outside the image. A
      // padded kernel first copies the group's image into `padded`, zero
      // around it, so that each row of columns is a copy of a constant
      // length (vectorised and unrolled by the compiler), with no bounds to
      // test: the padded copy is a ninth of the columns of a 3x3 kernel.
      std::string src = padded ? "padded" : addressOf(X, xBase);
      if (padded) {
        out.line("// the group's channels, padded: [" + str(Cg) + ", " + str(Hp) + ", " +
                 str(Wp) + "]");
        out.open("for (int64_t c = 0; c < " + str(Cg) + "; ++c)");
        out.open("for (int64_t y = 0; y < " + str(Hp) + "; ++y)");
        // memset/memcpy, not loops: GCC 12.2 at -O3 for x86-64-v3
        // miscompiles the loop form of this copy (rows of zeros and rows
        // copied, chosen per row; ONNX's test_conv_with_strides_and_
        // asymmetric_padding caught it).
        std::string size = "sizeof(" + type + ")";
        out.line(type + " *dst = padded + (c * " + str(Hp) + " + y) * " + str(Wp) + ";");
        out.line("const int64_t ih = y - " + str(pt) + ";");
        out.open("if (ih < 0 || ih >= " + str(H) + ")");
        out.line("memset(dst, 0, " + str(Wp) + " * " + size + ");");
        out.line("continue;");
        out.close();
        int64_t left = std::min(pl, Wp), inside = std::max<int64_t>(0, std::min(W, Wp - pl));
        if (left > 0)
          out.line("memset(dst, 0, " + str(left) + " * " + size + ");");
        if (inside > 0)
          out.line("memcpy(dst + " + str(pl) + ", " +
                   addressOf(X, xBase + " + (c * " + str(H) + " + ih) * " + str(W)) + ", " +
                   str(inside) + " * " + size + ");");
        if (left + inside < Wp)
          out.line("memset(dst + " + str(left + inside) + ", 0, " + str(Wp - left - inside) +
                   " * " + size + ");");
        out.close();
        out.close();
      }
      out.line(std::string("// im2col: col[(c, kh, kw), (oh, ow)] from the ") +
               (padded ? "padded " : "") + "image");
      out.open("for (int64_t c = 0; c < " + str(Cg) + "; ++c)");
      out.open("for (int64_t kh = 0; kh < " + str(KH) + "; ++kh)");
      out.open("for (int64_t kw = 0; kw < " + str(KW) + "; ++kw)");
      out.line(type + " *row = col + ((c * " + str(KH) + " + kh) * " + str(KW) +
               " + kw) * " + str(pixels) + ";");
      out.open("for (int64_t oh = 0; oh < " + str(OH) + "; ++oh)");
      out.line("const " + type + " *from = " + src + " + (c * " + str(Hp) + " + oh * " +
               str(sh) + " + kh * " + str(dh) + ") * " + str(Wp) + " + kw * " + str(dw) +
               ";");
      if (sw == 1)
        out.line("memcpy(row + oh * " + str(OW) + ", from, " + str(OW) + " * sizeof(" + type +
                 "));");
      else
        out.line("for (int64_t ow = 0; ow < " + str(OW) + "; ++ow) row[oh * " + str(OW) +
                 " + ow] = from[ow * " + str(sw) + "];");
      out.close();
      out.close();
      out.close();
      out.close();
    }
    const char *gemm = X.dtype == DType::F32 ? sgemmFor(false, pixels) : "dlc_dgemm";
    std::string colPtr = direct ? addressOf(X, xBase) : "col";
    std::string yFirst = "(n * " + str(O) + " + gFirst) * " + str(pixels);
    out.line(std::string(gemm) + "(false, false, gLast - gFirst, " + str(pixels) +
             ", " + str(patch) + ", " + addressOf(Wt, "gFirst * " + str(patch)) +
             ", " + str(patch) + ", " + colPtr + ", " + str(pixels) + ", " +
             addressOf(Y, yFirst) + ", " + str(pixels) + ");");
    if (bias) {
      out.open("for (int64_t o = gFirst; o < gLast; ++o)");
      out.line(type + " *plane = " +
               addressOf(Y, "(n * " + str(O) + " + o) * " + str(pixels)) + ";");
      out.line("const " + type + " b = " + elementAt(*bias, "o") + ";");
      out.open("for (int64_t i = 0; i < " + str(pixels) + "; ++i)");
      out.line("plane[i] += b;");
      out.close();
      out.close();
    }
    out.close();
    out.line("q += o1 - o0;");
    out.close();
    if (dnnl)
      out.close();
  } else {
    out.open("for (int64_t q = " + ctx.rowsBegin(s.N * O) + "; q < " +
             ctx.rowsEnd(s.N * O) + "; ++q)");
    out.line("const int64_t n = q / " + str(O) + ", o = q % " + str(O) +
             ", g = o / " + str(Og) + ";");
    out.open("for (int64_t oh = 0; oh < " + str(OH) + "; ++oh)");
    out.open("for (int64_t ow = 0; ow < " + str(OW) + "; ++ow)");
    out.line("double acc = " +
             (bias ? "(double)" + loadAt(ctx.target, *bias, "o") : std::string("0")) + ";");
    out.open("for (int64_t c = 0; c < " + str(Cg) + "; ++c)");
    openWindowLoops(out, {KH, KW, sh, sw, pt, pl, dh, dw, H, W});
    out.line("acc += (double)" +
             loadAt(ctx.target, X, "((n * " + str(C) + " + g * " + str(Cg) +
                                       " + c) * " + str(H) + " + ih) * " + str(W) + " + iw") +
             " * (double)" +
             loadAt(ctx.target, Wt, "((o * " + str(Cg) + " + c) * " + str(KH) +
                                        " + kh) * " + str(KW) + " + kw") + ";");
    out.close();
    out.close();
    out.close();
    out.line(storeAt(ctx.target, Y, "((n * " + str(O) + " + o) * " + str(OH) +
                                         " + oh) * " + str(OW) + " + ow", "acc"));
    out.close();
    out.close();
    out.close();
  }
}
