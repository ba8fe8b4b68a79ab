//===- DnnlConvPrelude.cpp - oneDNN's convolution for the CPU kernels -----===//
//
// The part of the CPU prelude a module includes when one of its f32
// convolutions reads its weights from the module (Contraction.cpp decides):
// dlc_conv_dnnl runs the call's rows of the convolution through oneDNN's
// convolution primitive (brgconv/jit kernels in oneDNN's blocked or
// channels-last layouts), reordering the NCHW activations in and out around
// it and the weights once.
//
// Why the weights may be reordered once: a module's weights are immutable
// and stay at one address for the life of the executable that loads them (a
// CPU session points into its module; its executable is its own dlopen of
// the kernels, so this file's cache lives and dies with it). The cache is
// keyed by that address, so kernels sharing a body (ResNet's repeated
// blocks) keep their own. Training modules hold their parameters as state,
// never as weights: their convolutions stay on im2col + GEMM.
//
// Each plan (weights, batch, channel range) is created once, under the
// cache's lock, on the first call that needs it: oneDNN JIT-compiles its
// kernels for one thread (the runtime's pool runs the calls side by side,
// each on oneDNN with OpenMP's thread count set to 1). A plan oneDNN
// cannot make returns false, and the kernel runs its own im2col + GEMM.
//
//===----------------------------------------------------------------------===//

#include "codegen/cpu/CpuTarget.h"

using namespace dlc::codegen;

std::string CpuTarget::dnnlConvPrelude() const {
  return R"(
#include <oneapi/dnnl/dnnl.h>
#include <cstdio>
#include <mutex>
#include <vector>
extern "C" void omp_set_num_threads(int);
namespace {
// G groups of C / G input and O / G output channels each (depthwise: C
// groups of one); NCHW plans (which split output channels) have one.
// winograd: ask oneDNN for its Winograd kernels first (Contraction.cpp's
// winogradCandidate).
struct DlcConvShape {
  int64_t C, H, W, O, KH, KW, OH, OW, sh, sw, pt, pl, dh, dw, G, winograd;
};
// What a plan computes: `batch` images, or of one image, output channels
// [first, last) (NCHW: a batch of one splits over its channels) or output
// rows [first, last) (channels-last, NHWC: over its rows).
struct DlcConvPart {
  bool nhwc;
  int64_t batch, first, last;
};
struct DlcConvPlan {
  const float *w;
  DlcConvPart part;
  bool ok;
  dnnl_primitive_t conv, srcReorder, dstReorder;
  dnnl_memory_desc_t userSrc, convSrc, userDst, convDst, weights, bias, scratch;
  const float *blockedWeights;
  /// NHWC rows: the first input row read, as an offset from the image.
  int64_t srcOffset;
};
// Per-thread buffers: the reordered source and result and oneDNN's scratch
// pad, grown when a larger one is asked for, never freed (plain pointers:
// nothing thread-local has a destructor, so the module unloads).
inline void *dlc_conv_buffer(int slot, size_t bytes) {
  static thread_local void *data[3] = {nullptr, nullptr, nullptr};
  static thread_local size_t size[3] = {0, 0, 0};
  if (size[slot] < bytes) {
    free(data[slot]);
    data[slot] = aligned_alloc(64, (bytes + 63) / 64 * 64);
    size[slot] = data[slot] ? bytes : 0;
  }
  return data[slot];
}
inline dnnl_stream_t dlc_conv_stream(dnnl_engine_t engine) {
  static thread_local dnnl_stream_t stream = nullptr;
  if (!stream) {
    omp_set_num_threads(1);
    if (dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) != dnnl_success)
      stream = nullptr;
  }
  return stream;
}
inline bool dlc_run(dnnl_primitive_t p, dnnl_stream_t stream, std::initializer_list<int> argIds,
                    std::initializer_list<const dnnl_memory_desc_t *> mds,
                    std::initializer_list<void *> ptrs, dnnl_engine_t engine) {
  dnnl_exec_arg_t args[8];
  int n = 0;
  bool ok = true;
  auto id = argIds.begin();
  auto md = mds.begin();
  for (void *ptr : ptrs) {
    args[n].arg = *id++;
    ok = ok && dnnl_memory_create(&args[n].memory, *md++, engine, ptr) == dnnl_success;
    if (!ok)
      break;
    ++n;
  }
  ok = ok && dnnl_primitive_execute(p, stream, n, args) == dnnl_success &&
       dnnl_stream_wait(stream) == dnnl_success;
  for (int i = 0; i < n; ++i)
    dnnl_memory_destroy(args[i].memory);
  return ok;
}
inline dnnl_primitive_t dlc_reorder(const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                                    dnnl_engine_t engine) {
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t p = nullptr;
  if (dnnl_reorder_primitive_desc_create(&pd, from, engine, to, engine, nullptr) ==
      dnnl_success)
    dnnl_primitive_create(&p, pd);
  dnnl_primitive_desc_destroy(pd);
  return p;
}
class DlcConvCache {
public:
  ~DlcConvCache() {
    for (DlcConvPlan *plan : plans_) {
      dnnl_primitive_destroy(plan->conv);
      dnnl_primitive_destroy(plan->srcReorder);
      dnnl_primitive_destroy(plan->dstReorder);
      delete plan;
    }
    for (Weights &w : weights_)
      free(w.blocked);
    if (engine_)
      dnnl_engine_destroy(engine_);
  }
  dnnl_engine_t engine() const { return engine_; }
  /// The plan for `part` of the convolution whose weights are `w`, made on
  /// first use.
  const DlcConvPlan *plan(const DlcConvShape &s, const float *w, bool hasBias,
                          const DlcConvPart &part) {
    std::lock_guard<std::mutex> hold(lock_);
    for (const DlcConvPlan *p : plans_)
      if (p->w == w && p->part.nhwc == part.nhwc && p->part.batch == part.batch &&
          p->part.first == part.first && p->part.last == part.last)
        return p;
    DlcConvPlan *p = new DlcConvPlan{};
    p->w = w;
    p->part = part;
    p->ok = make(*p, s, hasBias);
    if (!p->ok)
      fprintf(stderr,
              "dlc: warning: oneDNN cannot run the convolution of %lld channels to "
              "%lld (%s [%lld, %lld) of %lld image(s)), kernel %lldx%lld: it runs "
              "on dlc's own loops\n",
              (long long)s.C, (long long)s.O, part.nhwc ? "NHWC rows" : "NCHW channels",
              (long long)part.first, (long long)part.last, (long long)part.batch,
              (long long)s.KH, (long long)s.KW);
    plans_.push_back(p);
    return p;
  }

private:
  struct Weights {
    const float *w;
    dnnl_memory_desc_t md;
    float *blocked;
  };
  /// The filters at `w` (OIHW, `userMd`) in the layout `md`: reordered
  /// once and shared by the plans that read them so.
  const float *blockedWeights(const float *w, const dnnl_memory_desc_t &userMd,
                              const dnnl_memory_desc_t &md, dnnl_stream_t stream) {
    for (const Weights &k : weights_)
      if (k.w == w && dnnl_memory_desc_equal(&k.md, &md))
        return k.blocked;
    float *blocked =
        (float *)aligned_alloc(64, (dnnl_memory_desc_get_size(&md) + 63) / 64 * 64);
    dnnl_primitive_t reorder = dlc_reorder(&userMd, &md, engine_);
    bool ok = blocked && reorder &&
              dlc_run(reorder, stream, {DNNL_ARG_FROM, DNNL_ARG_TO}, {&userMd, &md},
                      {(void *)w, blocked}, engine_);
    dnnl_primitive_destroy(reorder);
    if (!ok) {
      free(blocked);
      return nullptr;
    }
    weights_.push_back({w, md, blocked});
    return blocked;
  }

  bool make(DlcConvPlan &p, const DlcConvShape &s, bool hasBias) {
    if (s.G != 1 && !p.part.nhwc) // NCHW plans split channels, not groups
      return false;
    if (!engine_ && dnnl_engine_create(&engine_, dnnl_cpu, 0) != dnnl_success) {
      engine_ = nullptr;
      return false;
    }
    dnnl_stream_t stream = dlc_conv_stream(engine_);
    if (!stream)
      return false;
    const DlcConvPart &part = p.part;
    // NCHW: channels [first, last) of whole images. NHWC: all channels of
    // output rows [first, last), which read input rows [top, bottom]
    // (window positions outside the image are the padding), given to
    // oneDNN as rows [top, stride * last) where the image has them: a
    // strided window's part then has the stride times its output rows, as
    // a whole image does. Without the unread last row, oneDNN 2.6 takes its
    // generic direct kernel for ResNet-50's strided 1x1 convolutions
    // instead of its 1x1 one, 2-2.7x slower (AVX2, 27 rows for 14).
    const int64_t oc = part.nhwc ? s.O : part.last - part.first;
    const int64_t oh = part.nhwc ? part.last - part.first : s.OH;
    const int64_t top = part.first * s.sh - s.pt,
                  bottom = (part.last - 1) * s.sh - s.pt + (s.KH - 1) * s.dh,
                  strideEnd = part.last * s.sh - s.pt - 1;
    int64_t inFirst = 0, inRows = s.H, padTop = s.pt;
    if (part.nhwc && part.batch == 1) {
      const int64_t inLast = bottom > strideEnd ? bottom : strideEnd;
      inFirst = top > 0 ? top : 0;
      inRows = (inLast < s.H - 1 ? inLast : s.H - 1) - inFirst + 1;
      padTop = inFirst - top;
    }
    p.srcOffset = part.nhwc ? inFirst * s.W * s.C : 0;
    // Grouped filters: oneDNN's 5-d [G, O / G, C / G, KH, KW], the same
    // bytes as dlc's OIHW with I = C / G.
    const int weiDims = s.G == 1 ? 4 : 5;
    dnnl_dims_t src = {part.batch, s.C, inRows, s.W}, dst = {part.batch, oc, oh, s.OW},
                wei = {oc, s.C, s.KH, s.KW}, bias = {oc}, strides = {s.sh, s.sw},
                dilates = {s.dh - 1, s.dw - 1}, padL = {padTop, s.pl};
    // The far sides' padding: what makes oneDNN's output size dlc's (none
    // where the windows leave input rows or columns unread).
    dnnl_dims_t padR = {(oh - 1) * s.sh + (s.KH - 1) * s.dh + 1 - inRows - padTop,
                        (s.OW - 1) * s.sw + (s.KW - 1) * s.dw + 1 - s.W - s.pl};
    for (int i = 0; i < 2; ++i)
      if (padR[i] < 0)
        padR[i] = 0;
    const dnnl_format_tag_t userTag = part.nhwc ? dnnl_nhwc : dnnl_nchw;
    dnnl_memory_desc_t anySrc, anyWei, anyDst, userWei;
    dnnl_memory_desc_init_by_tag(&p.userSrc, 4, src, dnnl_f32, userTag);
    dnnl_memory_desc_init_by_tag(&p.userDst, 4, dst, dnnl_f32, userTag);
    if (s.G != 1) {
      const dnnl_dims_t grouped = {s.G, s.O / s.G, s.C / s.G, s.KH, s.KW};
      for (int i = 0; i < 5; ++i)
        wei[i] = grouped[i];
    }
    dnnl_memory_desc_init_by_tag(&userWei, weiDims, wei, dnnl_f32,
                                 s.G == 1 ? dnnl_oihw : dnnl_goihw);
    dnnl_memory_desc_init_by_tag(&anyWei, weiDims, wei, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&p.bias, 1, bias, dnnl_f32, dnnl_x);
    // Winograd first where the shape allows it and this part is whole 16-
    // channel blocks (its kernels read and write nChw16c: NHWC activations
    // are reordered in and out around it), then the direct kernels.
    const bool winograd = s.winograd && oc % 16 == 0;
    bool ok = false;
    for (int attempt = winograd ? 0 : 1; attempt < 2 && !ok; ++attempt) {
      const bool direct = attempt == 1;
      // NCHW activations go to the layout oneDNN's kernels want and back;
      // NHWC ones are the direct kernels' layout (brgconv's on AVX-512)
      // and stay, but for windows wider than 1x1 of one group on CPUs
      // without AVX-512: there oneDNN 2.6's NHWC direct kernels run at
      // 45-60% of the FMA peak, its nChw8c ones at 60-85% (ResNet-50's
      // 3x3 convolutions, one thread of an AMD EPYC), well beyond the
      // reorders in and out (ResNet-50 at batch 1, two threads: about 7%).
      static const bool avx512 = __builtin_cpu_supports("avx512f");
      const bool keepNhwc = avx512 || s.KH * s.KW == 1 || s.G != 1;
      const dnnl_format_tag_t convTag =
          part.nhwc && direct && keepNhwc ? dnnl_nhwc : dnnl_format_tag_any;
      dnnl_memory_desc_init_by_tag(&anySrc, 4, src, dnnl_f32, convTag);
      dnnl_memory_desc_init_by_tag(&anyDst, 4, dst, dnnl_f32, convTag);
      dnnl_convolution_desc_t desc;
      if (dnnl_dilated_convolution_forward_desc_init(
              &desc, dnnl_forward_inference,
              direct ? dnnl_convolution_direct : dnnl_convolution_winograd, &anySrc, &anyWei,
              hasBias ? &p.bias : nullptr, &anyDst, strides, dilates, padL, padR) !=
          dnnl_success)
        continue;
      dnnl_primitive_attr_t attr = nullptr;
      dnnl_primitive_desc_t pd = nullptr;
      ok = dnnl_primitive_attr_create(&attr) == dnnl_success &&
           dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) ==
               dnnl_success &&
           dnnl_primitive_desc_create(&pd, &desc, attr, engine_, nullptr) == dnnl_success;
      if (ok) {
        p.convSrc = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
        p.convDst = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
        p.weights = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        p.scratch = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        ok = dnnl_primitive_create(&p.conv, pd) == dnnl_success;
      }
      dnnl_primitive_desc_destroy(pd);
      dnnl_primitive_attr_destroy(attr);
    }
    if (!ok)
      return false;
    if (!dnnl_memory_desc_equal(&p.userSrc, &p.convSrc) &&
        !(p.srcReorder = dlc_reorder(&p.userSrc, &p.convSrc, engine_)))
      return false;
    if (!dnnl_memory_desc_equal(&p.userDst, &p.convDst) &&
        !(p.dstReorder = dlc_reorder(&p.convDst, &p.userDst, engine_)))
      return false;
    const float *w = part.nhwc ? p.w : p.w + part.first * s.C * s.KH * s.KW;
    p.blockedWeights = blockedWeights(w, userWei, p.weights, stream);
    return p.blockedWeights != nullptr;
  }

  std::mutex lock_;
  std::vector<DlcConvPlan *> plans_;
  std::vector<Weights> weights_;
  dnnl_engine_t engine_ = nullptr;
};
DlcConvCache dlc_conv_cache;

// One plan's convolution: x at its first image (NHWC: its first input row
// read), y at the first element it writes.
inline bool dlc_conv_run(const DlcConvPlan &p, const float *x, const float *bias, float *y) {
  dnnl_engine_t engine = dlc_conv_cache.engine();
  dnnl_stream_t stream = dlc_conv_stream(engine);
  if (!stream)
    return false;
  void *src = (void *)x, *dst = y;
  if (p.srcReorder) {
    src = dlc_conv_buffer(0, dnnl_memory_desc_get_size(&p.convSrc));
    if (!src || !dlc_run(p.srcReorder, stream, {DNNL_ARG_FROM, DNNL_ARG_TO},
                         {&p.userSrc, &p.convSrc}, {(void *)x, src}, engine))
      return false;
  }
  if (p.dstReorder && !(dst = dlc_conv_buffer(1, dnnl_memory_desc_get_size(&p.convDst))))
    return false;
  void *scratch = dlc_conv_buffer(2, dnnl_memory_desc_get_size(&p.scratch) + 64);
  if (!scratch)
    return false;
  const float *b = bias && !p.part.nhwc ? bias + p.part.first : bias;
  bool ok = b ? dlc_run(p.conv, stream,
                        {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST,
                         DNNL_ARG_SCRATCHPAD},
                        {&p.convSrc, &p.weights, &p.bias, &p.convDst, &p.scratch},
                        {src, (void *)p.blockedWeights, (void *)b, dst, scratch}, engine)
              : dlc_run(p.conv, stream,
                        {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_SCRATCHPAD},
                        {&p.convSrc, &p.weights, &p.convDst, &p.scratch},
                        {src, (void *)p.blockedWeights, dst, scratch}, engine);
  if (ok && p.dstReorder)
    ok = dlc_run(p.dstReorder, stream, {DNNL_ARG_FROM, DNNL_ARG_TO}, {&p.convDst, &p.userDst},
                 {dst, (void *)y}, engine);
  return ok;
}

// Rows [first, last) of a convolution through oneDNN: whole images
// together, a part of an image by its rows' second index (NCHW: (image,
// output channel) rows; NHWC: (image, output row)). y holds element `flat`
// of the result at y[flat - yBase]. False, having written nothing, when
// oneDNN cannot run it (the caller's own loops then do); false after
// writing only on an execution failure, which the caller's loops then
// overwrite.
inline bool dlc_conv_dnnl(const DlcConvShape &s, bool nhwc, const float *x, const float *w,
                          const float *bias, float *y, int64_t yBase, int64_t first,
                          int64_t last) {
  const int64_t image = s.C * s.H * s.W, perImage = nhwc ? s.OH : s.O,
                perRow = nhwc ? s.OW * s.O : s.OH * s.OW;
  while (first < last) {
    int64_t n = first / perImage, a = first % perImage, batch = 1, b;
    if (a == 0 && last - first >= perImage) {
      batch = (last - first) / perImage;
      b = perImage;
    } else {
      b = perImage < a + (last - first) ? perImage : a + (last - first);
    }
    const DlcConvPlan *p = dlc_conv_cache.plan(s, w, bias != nullptr, {nhwc, batch, a, b});
    if (!p->ok ||
        !dlc_conv_run(*p, x + n * image + p->srcOffset, bias,
                      y + ((n * perImage + a) * perRow - yBase)))
      return false;
    first += batch == 1 ? b - a : batch * perImage;
  }
  return true;
}
} // namespace
)";
}
