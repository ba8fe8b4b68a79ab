//===- conv_bench.cpp - ResNet-50's convolutions: im2col + GEMM vs oneDNN -===//
//
//   dlc-bench-conv [THREADS]
//
// GFLOP/s of each distinct convolution of ResNet-50 at batch 1 (f32,
// forward, bias and ReLU fused where the library can), computed five ways
// on THREADS threads (oneDNN's OpenMP threads):
//
//   im2col+sgemm  what dlc's CPU kernels do today (codegen/cpu/
//                 Contraction.cpp): the image copied into a zero-bordered
//                 buffer, the columns copied from it row by row, one
//                 dnnl_sgemm of [O, C*KH*KW] by [C*KH*KW, OH*OW];
//   nchw          oneDNN's convolution primitive on NCHW activations (the
//                 layout dlc keeps), its weights in the layout it picks;
//   nhwc          the same on NHWC activations;
//   blocked       the same with the activations' layout left to oneDNN
//                 (nChw8c on AVX2): what a layout kept across layers buys;
//   winograd      oneDNN's Winograd convolution (3x3, stride 1, AVX-512
//                 only), layouts left to it: GFLOP/s counted as the direct
//                 convolution's FLOPs, so above the peak where it wins.
//
// Each is the best of 7 timings of 5 calls. Weights are reordered once,
// outside the timing, as a compiler would at load time; activation
// reorders are not counted either: the nhwc and blocked columns are what a
// network kept in that layout would run at. The implementation oneDNN
// chose is printed beside.
//
//===----------------------------------------------------------------------===//

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" void omp_set_num_threads(int);

namespace {

using Clock = std::chrono::steady_clock;
using Tag = dnnl::memory::format_tag;

struct Conv {
  int c, o, hw, k, stride, pad;
};

// ResNet-50's convolutions at batch 1, one of each shape (stem, the
// bottleneck's 1x1 and 3x3 at each stage, a projection).
const Conv kConvs[] = {{3, 64, 224, 7, 2, 3},     {64, 64, 56, 1, 1, 0},
                       {64, 64, 56, 3, 1, 1},     {64, 256, 56, 1, 1, 0},
                       {256, 64, 56, 1, 1, 0},    {128, 128, 28, 3, 1, 1},
                       {512, 128, 28, 1, 1, 0},   {256, 256, 14, 3, 1, 1},
                       {1024, 256, 14, 1, 1, 0},  {512, 512, 7, 3, 1, 1},
                       {2048, 512, 7, 1, 1, 0},   {1024, 2048, 14, 1, 2, 0}};

template <typename F>
double best(F f) {
  f();
  double fastest = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    auto a = Clock::now();
    for (int i = 0; i < 5; ++i)
      f();
    fastest = std::min(fastest, std::chrono::duration<double>(Clock::now() - a).count() / 5);
  }
  return fastest;
}

/// dlc's method: padded copy, im2col rows by memcpy (unit stride) or a
/// strided loop, one GEMM.
double im2colGemm(const Conv &s, int out) {
  int patch = s.c * s.k * s.k, pixels = out * out;
  int hp = (out - 1) * s.stride + s.k, wp = hp;
  std::vector<float> x((size_t)s.c * s.hw * s.hw, 0.5f), w((size_t)s.o * patch, 0.25f),
      padded((size_t)s.c * hp * wp), col((size_t)patch * pixels), y((size_t)s.o * pixels);
  bool direct = s.k == 1 && s.stride == 1 && s.pad == 0;
  return best([&] {
    const float *b = x.data();
    if (!direct) {
      for (int c = 0; c < s.c; ++c)
        for (int r = 0; r < hp; ++r) {
          float *dst = &padded[((size_t)c * hp + r) * wp];
          int ih = r - s.pad;
          std::memset(dst, 0, wp * sizeof(float));
          if (ih >= 0 && ih < s.hw)
            std::memcpy(dst + s.pad, &x[((size_t)c * s.hw + ih) * s.hw],
                        std::min(s.hw, wp - s.pad) * sizeof(float));
        }
      for (int c = 0; c < s.c; ++c)
        for (int kh = 0; kh < s.k; ++kh)
          for (int kw = 0; kw < s.k; ++kw) {
            float *row = &col[(((size_t)c * s.k + kh) * s.k + kw) * pixels];
            for (int oh = 0; oh < out; ++oh) {
              const float *from = &padded[((size_t)c * hp + oh * s.stride + kh) * wp + kw];
              if (s.stride == 1)
                std::memcpy(row + oh * out, from, out * sizeof(float));
              else
                for (int ow = 0; ow < out; ++ow)
                  row[oh * out + ow] = from[ow * s.stride];
            }
          }
      b = col.data();
    }
    dnnl_sgemm('N', 'N', s.o, pixels, patch, 1.0f, w.data(), patch, b, pixels, 0.0f, y.data(),
               pixels);
  });
}

/// oneDNN's convolution with bias and ReLU as a post-op, activations in
/// `layout`, weights as the primitive wants them (reordered once).
std::pair<double, std::string> onednn(const Conv &s, int out, Tag layout,
                                      dnnl::algorithm algo = dnnl::algorithm::convolution_direct) {
  using namespace dnnl;
  static engine eng(engine::kind::cpu, 0);
  static stream strm(eng);
  memory::dims src{1, s.c, s.hw, s.hw}, wei{s.o, s.c, s.k, s.k}, bias{s.o},
      dst{1, s.o, out, out}, strides{s.stride, s.stride}, pad{s.pad, s.pad};
  auto f32 = memory::data_type::f32;
  post_ops ops;
  ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
  primitive_attr attr;
  attr.set_post_ops(ops);
  convolution_forward::desc d(prop_kind::forward_inference, algo,
                              memory::desc(src, f32, layout), memory::desc(wei, f32, Tag::any),
                              memory::desc(bias, f32, Tag::x), memory::desc(dst, f32, layout),
                              strides, pad, pad);
  convolution_forward::primitive_desc pd;
  try {
    pd = convolution_forward::primitive_desc(d, attr, eng);
  } catch (const dnnl::error &) {
    return {1e30, "unavailable"};
  }
  memory x(pd.src_desc(), eng), w(pd.weights_desc(), eng), b(pd.bias_desc(), eng),
      y(pd.dst_desc(), eng);
  std::fill_n(static_cast<float *>(x.get_data_handle()), pd.src_desc().get_size() / 4, 0.5f);
  std::fill_n(static_cast<float *>(w.get_data_handle()), pd.weights_desc().get_size() / 4,
              0.25f);
  std::fill_n(static_cast<float *>(b.get_data_handle()), s.o, 0.0f);
  convolution_forward conv(pd);
  double t = best([&] {
    conv.execute(strm, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b},
                        {DNNL_ARG_DST, y}});
    strm.wait();
  });
  return {t, pd.impl_info_str()};
}

} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads < 1) {
    std::fprintf(stderr, "usage: dlc-bench-conv [THREADS]\n");
    return 2;
  }
  omp_set_num_threads(threads);
  std::printf("conv c o hw k stride pad im2col_sgemm nchw nhwc blocked impl_nchw impl_nhwc "
              "impl_blocked winograd impl_winograd\n");
  for (const Conv &s : kConvs) {
    int out = (s.hw + 2 * s.pad - s.k) / s.stride + 1;
    double flops = 2.0 * s.o * s.c * s.k * s.k * out * out;
    double gemm = im2colGemm(s, out);
    auto nchw = onednn(s, out, Tag::nchw), nhwc = onednn(s, out, Tag::nhwc),
         blocked = onednn(s, out, Tag::any),
         wino = onednn(s, out, Tag::any, dnnl::algorithm::convolution_winograd);
    std::printf("%dx%d_%d->%d@%d/%d %d %d %d %d %d %d %.1f %.1f %.1f %.1f %s %s %s %.1f %s\n", s.k, s.k,
                s.c, s.o, s.hw, s.stride, s.c, s.o, s.hw, s.k, s.stride, s.pad,
                flops / gemm / 1e9, flops / nchw.first / 1e9, flops / nhwc.first / 1e9,
                flops / blocked.first / 1e9, nchw.second.c_str(), nhwc.second.c_str(),
                blocked.second.c_str(), flops / wino.first / 1e9, wino.second.c_str());
  }
  return 0;
}
