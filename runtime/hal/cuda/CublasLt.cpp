//===- CublasLt.cpp - library GEMMs through cuBLASLt, by dlopen -----------===//

#include "runtime/hal/cuda/CublasLt.h"

#include "runtime/base/Symbols.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace dlc::rt::hal::cuda {

namespace {

// From cublasLt.h, cublas_api.h and library_types.h (CUDA 12 and 13).
using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext *;
using Descriptor = void *; // cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, ...
constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
constexpr int CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14;
constexpr int CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
constexpr int32_t CUBLAS_OP_N = 0, CUBLAS_OP_T = 1;
constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3, CUBLASLT_MATMUL_DESC_TRANSB = 4,
              CUBLASLT_MATMUL_DESC_EPILOGUE = 7, CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
              CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26;
constexpr int CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
              CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;
constexpr uint32_t CUBLASLT_EPILOGUE_DEFAULT = 1, CUBLASLT_EPILOGUE_RELU = 2,
                   CUBLASLT_EPILOGUE_BIAS = 4, CUBLASLT_EPILOGUE_GELU = 32;
constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5;
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

/// The pointers every operand must be aligned to: the alignment the
/// algorithm is chosen for (runs check it), which the arena guarantees.
constexpr uint32_t kAlignment = 16;

struct Library {
  cublasStatus_t (*create)(cublasLtHandle_t *);
  cublasStatus_t (*destroy)(cublasLtHandle_t);
  size_t (*getVersion)();
  const char *(*statusName)(cublasStatus_t);
  cublasStatus_t (*descCreate)(Descriptor *, int computeType, int scaleType);
  cublasStatus_t (*descDestroy)(Descriptor);
  cublasStatus_t (*descSet)(Descriptor, int attribute, const void *value, size_t bytes);
  cublasStatus_t (*layoutCreate)(Descriptor *, int type, uint64_t rows, uint64_t cols,
                                 int64_t ld);
  cublasStatus_t (*layoutDestroy)(Descriptor);
  cublasStatus_t (*layoutSet)(Descriptor, int attribute, const void *value, size_t bytes);
  cublasStatus_t (*preferenceCreate)(Descriptor *);
  cublasStatus_t (*preferenceDestroy)(Descriptor);
  cublasStatus_t (*preferenceSet)(Descriptor, int attribute, const void *value, size_t bytes);
  cublasStatus_t (*heuristic)(cublasLtHandle_t, Descriptor operation, Descriptor a,
                              Descriptor b, Descriptor c, Descriptor d, Descriptor preference,
                              int requested, cublasLtMatmulHeuristicResult_t *results,
                              int *returned);
  cublasStatus_t (*matmul)(cublasLtHandle_t, Descriptor operation, const void *alpha,
                           const void *a, Descriptor aLayout, const void *b, Descriptor bLayout,
                           const void *beta, const void *c, Descriptor cLayout, void *d,
                           Descriptor dLayout, const cublasLtMatmulAlgo_t *algo,
                           void *workspace, size_t workspaceBytes, void *stream);
  std::string loadedFrom;
};

/// Loads and binds the library once per process; null with `why` set when
/// it is missing or lacks an entry point.
const Library *loadLibrary(std::string *why) {
  static std::string failure;
  static const Library *library = [&]() -> const Library * {
    const char *override = std::getenv("DLC_CUBLASLT_LIBRARY");
    const char *candidates[] = {override && *override ? override : nullptr,
                                "libcublasLt.so.13", "libcublasLt.so.12",
                                "/usr/local/cuda/lib64/libcublasLt.so.13",
                                "/usr/local/cuda/lib64/libcublasLt.so.12"};
    void *handle = nullptr;
    const char *name = nullptr;
    for (const char *candidate : candidates) {
      if (!candidate)
        continue;
      // Never closed: the library stays loaded for the life of the process.
      if ((handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL))) {
        name = candidate;
        break;
      }
      if (candidate == override)
        break; // an explicit choice that fails is not replaced by another
    }
    if (!handle) {
      failure = "libcublasLt could not be loaded (set DLC_CUBLASLT_LIBRARY to its path)";
      return nullptr;
    }
    auto *l = new Library();
    bool ok = bindSymbol(handle, "cublasLtCreate", l->create) &&
              bindSymbol(handle, "cublasLtDestroy", l->destroy) &&
              bindSymbol(handle, "cublasLtGetVersion", l->getVersion) &&
              bindSymbol(handle, "cublasLtGetStatusName", l->statusName) &&
              bindSymbol(handle, "cublasLtMatmulDescCreate", l->descCreate) &&
              bindSymbol(handle, "cublasLtMatmulDescDestroy", l->descDestroy) &&
              bindSymbol(handle, "cublasLtMatmulDescSetAttribute", l->descSet) &&
              bindSymbol(handle, "cublasLtMatrixLayoutCreate", l->layoutCreate) &&
              bindSymbol(handle, "cublasLtMatrixLayoutDestroy", l->layoutDestroy) &&
              bindSymbol(handle, "cublasLtMatrixLayoutSetAttribute", l->layoutSet) &&
              bindSymbol(handle, "cublasLtMatmulPreferenceCreate", l->preferenceCreate) &&
              bindSymbol(handle, "cublasLtMatmulPreferenceDestroy", l->preferenceDestroy) &&
              bindSymbol(handle, "cublasLtMatmulPreferenceSetAttribute", l->preferenceSet) &&
              bindSymbol(handle, "cublasLtMatmulAlgoGetHeuristic", l->heuristic) &&
              bindSymbol(handle, "cublasLtMatmul", l->matmul);
    if (!ok) {
      failure = strCat(name, " lacks an entry point dlc uses (cuBLASLt 12 or later)");
      delete l;
      return nullptr;
    }
    l->loadedFrom = name;
    return l;
  }();
  if (!library && why)
    *why = failure;
  return library;
}

int cudaType(DType dtype) {
  return dtype == DType::BF16 ? CUDA_R_16BF : dtype == DType::F16 ? CUDA_R_16F : CUDA_R_32F;
}

} // namespace

struct CublasLtHandle::Impl {
  const Library *library = nullptr;
  cublasLtHandle_t handle = nullptr;
  std::string describe(cublasStatus_t status) const {
    const char *name = library->statusName ? library->statusName(status) : nullptr;
    return strCat(name ? name : "cuBLAS status", " (", status, ")");
  }
};

struct CublasLtGemm::Impl {
  std::shared_ptr<const CublasLtHandle> owner;
  const CublasLtHandle::Impl *lt = nullptr;
  LibraryGemmCall call;
  Descriptor operation = nullptr, a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspaceBytes = 0;
  ~Impl() {
    if (!lt)
      return;
    const Library &l = *lt->library;
    for (Descriptor layout : {a, b, c, d})
      if (layout)
        l.layoutDestroy(layout);
    if (operation)
      l.descDestroy(operation);
  }
};

std::shared_ptr<CublasLtHandle> CublasLtHandle::create(std::string *why) {
  const Library *library = loadLibrary(why);
  if (!library)
    return nullptr;
  std::shared_ptr<CublasLtHandle> h(new CublasLtHandle());
  h->impl_ = std::make_unique<Impl>();
  h->impl_->library = library;
  cublasStatus_t s = library->create(&h->impl_->handle);
  if (s != CUBLAS_STATUS_SUCCESS) {
    *why = strCat("cublasLtCreate failed: ", h->impl_->describe(s));
    h->impl_->handle = nullptr;
    return nullptr;
  }
  return h;
}

CublasLtHandle::~CublasLtHandle() {
  if (impl_ && impl_->handle)
    impl_->library->destroy(impl_->handle);
}

std::unique_ptr<CublasLtGemm> CublasLtHandle::prepare(const LibraryGemmCall &g,
                                                      std::string *why) const {
  const Library &l = *impl_->library;
  std::unique_ptr<CublasLtGemm> gemm(new CublasLtGemm());
  gemm->impl_ = std::make_unique<CublasLtGemm::Impl>();
  CublasLtGemm::Impl &p = *gemm->impl_;
  p.owner = shared_from_this();
  p.lt = impl_.get();
  p.call = g;
  auto failed = [&](const char *step, cublasStatus_t s) {
    *why = strCat(step, " failed: ", impl_->describe(s));
    return nullptr;
  };
#define DLC_LT(step, expr)                                                                     \
  if (cublasStatus_t s_ = (expr); s_ != CUBLAS_STATUS_SUCCESS)                                 \
    return failed(step, s_);

  // Column-major: cuBLASLt's A is dlc's B, its B dlc's A (file comment).
  DLC_LT("cublasLtMatmulDescCreate",
         l.descCreate(&p.operation, g.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                      CUDA_R_32F));
  int32_t opA = g.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int32_t opB = g.transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  DLC_LT("TRANSA", l.descSet(p.operation, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA));
  DLC_LT("TRANSB", l.descSet(p.operation, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB));
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (g.activation == LibraryGemmCall::Activation::kRelu)
    epilogue = CUBLASLT_EPILOGUE_RELU;
  if (g.activation == LibraryGemmCall::Activation::kGeluTanh)
    epilogue = CUBLASLT_EPILOGUE_GELU;
  if (g.bias >= 0) {
    // RELU_BIAS = RELU | BIAS, GELU_BIAS = GELU | BIAS; DEFAULT becomes BIAS.
    epilogue = epilogue == CUBLASLT_EPILOGUE_DEFAULT ? CUBLASLT_EPILOGUE_BIAS
                                                     : epilogue | CUBLASLT_EPILOGUE_BIAS;
    int32_t biasType = cudaType(g.biasDtype);
    DLC_LT("BIAS_DATA_TYPE", l.descSet(p.operation, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                       &biasType, sizeof biasType));
  }
  DLC_LT("EPILOGUE", l.descSet(p.operation, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                               sizeof epilogue));

  const int operandType = cudaType(g.operandDtype), resultType = cudaType(g.resultDtype);
  auto layout = [&](Descriptor *out, int type, int64_t rows, int64_t cols, int64_t stride) {
    cublasStatus_t s = l.layoutCreate(out, type, rows, cols, rows);
    if (s == CUBLAS_STATUS_SUCCESS && g.batch > 1) {
      int32_t count = static_cast<int32_t>(g.batch);
      s = l.layoutSet(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
      if (s == CUBLAS_STATUS_SUCCESS)
        s = l.layoutSet(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                        sizeof stride);
    }
    return s;
  };
  // Stored row-major [k, n] (or [n, k] transposed) is column-major n x k
  // (k x n); the leading dimension is the stored row's length.
  DLC_LT("layout A", g.transposeB ? layout(&p.a, operandType, g.k, g.n, g.strideB)
                                  : layout(&p.a, operandType, g.n, g.k, g.strideB));
  DLC_LT("layout B", g.transposeA ? layout(&p.b, operandType, g.m, g.k, g.strideA)
                                  : layout(&p.b, operandType, g.k, g.m, g.strideA));
  DLC_LT("layout C", layout(&p.c, resultType, g.n, g.m, g.m * g.n));
  DLC_LT("layout D", layout(&p.d, resultType, g.n, g.m, g.m * g.n));

  Descriptor preference = nullptr;
  DLC_LT("cublasLtMatmulPreferenceCreate", l.preferenceCreate(&preference));
  uint64_t workspace = kCublasLtWorkspaceBytes;
  cublasStatus_t s = l.preferenceSet(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                     &workspace, sizeof workspace);
  for (int attribute = CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES;
       s == CUBLAS_STATUS_SUCCESS && attribute < CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + 4;
       ++attribute) // A, B, C, D
    s = l.preferenceSet(preference, attribute, &kAlignment, sizeof kAlignment);
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = l.heuristic(impl_->handle, p.operation, p.a, p.b, p.c, p.d, preference, 1, &result,
                    &returned);
  l.preferenceDestroy(preference);
  if (s != CUBLAS_STATUS_SUCCESS)
    return failed("cublasLtMatmulAlgoGetHeuristic", s);
  if (returned == 0) {
    *why = "cuBLASLt has no algorithm for this GEMM";
    return nullptr;
  }
#undef DLC_LT
  p.algo = result.algo;
  p.workspaceBytes = result.workspaceSize;
  return gemm;
}

CublasLtGemm::~CublasLtGemm() = default;

Status CublasLtGemm::run(void *const *args, void *stream, void *workspace, bool *ran) const {
  const Impl &p = *impl_;
  const LibraryGemmCall &g = p.call;
  const Library &l = *p.lt->library;
  *ran = false;
  void *a = args[g.a], *b = args[g.b], *d = args[g.d];
  void *c = g.c >= 0 ? args[g.c] : d;
  void *bias = g.bias >= 0 ? args[g.bias] : nullptr;
  for (void *pointer : {a, b, c, d, bias})
    if (reinterpret_cast<uintptr_t>(pointer) % kAlignment)
      return okStatus();
  if (bias) {
    cublasStatus_t s =
        l.descSet(p.operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    if (s != CUBLAS_STATUS_SUCCESS)
      return internalError("cuBLASLt BIAS_POINTER: ", p.lt->describe(s));
  }
  const float alpha = 1.0f, beta = g.c >= 0 ? 1.0f : 0.0f;
  // Column-major: cuBLASLt's A is dlc's B, its B dlc's A.
  cublasStatus_t s = l.matmul(p.lt->handle, p.operation, &alpha, b, p.a, a, p.b, &beta, c, p.c,
                              d, p.d, &p.algo, workspace, p.workspaceBytes, stream);
  if (s != CUBLAS_STATUS_SUCCESS)
    return unavailable("cublasLtMatmul failed: ", p.lt->describe(s));
  *ran = true;
  return okStatus();
}

} // namespace dlc::rt::hal::cuda
