/*===- runner.c - Run a test module on a device and check it -------------===*
 *
 * The GPU suite's runner (test/gpu/run.sh): C, links only libdlc_runtime,
 * so it runs on a GPU machine without the compiler.
 *
 * Usage: dlc-gpu-runner DIR NAME [--device D] [--repeat N] [--device-tensors]
 *            [--expect-compiles N] [--expect-cache-hits N] [--expect-graph-runs N]
 *            [--rtol R] [--atol A]
 *
 * Loads DIR/NAME.dlcm, inputs DIR/NAME.in<i>.bin and expected outputs
 * DIR/NAME.out<i>.bin (raw f32, from dlc-cuda-testgen), runs the module N
 * times on D (default cuda:0) and checks every run's outputs. With
 * --device-tensors, inputs and outputs are kDLCUDA memory (cuMemAlloc
 * through a dlopen'ed libcuda). The --expect-* options count the runtime's
 * log lines: NVRTC compilations, kernel-cache hits, and runs that launched
 * a CUDA graph. Exit 0 when all is as expected, 1 when a check fails, else
 * the runtime's exit code (3: no device, ...).
 *
 *===----------------------------------------------------------------------===*/
#include <dlc/runtime.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gCompiles, gCacheHits, gGraphRuns, gVerbose;

static void onLog(void *user, dlc_log_level_t level, const char *message) {
  (void)user;
  if (strstr(message, "compiled by nvrtc"))
    ++gCompiles;
  if (strstr(message, "from the kernel cache"))
    ++gCacheHits;
  if (strstr(message, "into a CUDA graph") || strstr(message, "replayed the CUDA graph"))
    ++gGraphRuns;
  if (gVerbose || level <= DLC_LOG_WARNING)
    fprintf(stderr, "  [runtime] %s\n", message);
}

static float *readFloats(const char *path, size_t count) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "dlc-gpu-runner: cannot open %s\n", path);
    return NULL;
  }
  float *v = malloc(count * sizeof(float) + 1);
  size_t got = fread(v, sizeof(float), count, f);
  fclose(f);
  if (got != count) {
    fprintf(stderr, "dlc-gpu-runner: %s holds %zu values, not %zu\n", path, got, count);
    free(v);
    return NULL;
  }
  return v;
}

/* The few driver calls --device-tensors needs, through dlopen. */
typedef int (*CuInit)(unsigned);
typedef int (*CuDeviceGet)(int *, int);
typedef int (*CuCtxRetain)(void **, int);
typedef int (*CuCtxSet)(void *);
typedef int (*CuAlloc)(unsigned long long *, size_t);
typedef int (*CuFree)(unsigned long long);
typedef int (*CuHtoD)(unsigned long long, const void *, size_t);
typedef int (*CuDtoH)(void *, unsigned long long, size_t);
static struct {
  CuAlloc alloc;
  CuFree free;
  CuHtoD htod;
  CuDtoH dtoh;
} gCu;

static int openDriver(int ordinal) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlc-gpu-runner: --device-tensors: %s\n", dlerror());
    return 0;
  }
  CuInit init = (CuInit)dlsym(lib, "cuInit");
  CuDeviceGet get = (CuDeviceGet)dlsym(lib, "cuDeviceGet");
  CuCtxRetain retain = (CuCtxRetain)dlsym(lib, "cuDevicePrimaryCtxRetain");
  CuCtxSet set = (CuCtxSet)dlsym(lib, "cuCtxSetCurrent");
  gCu.alloc = (CuAlloc)dlsym(lib, "cuMemAlloc_v2");
  gCu.free = (CuFree)dlsym(lib, "cuMemFree_v2");
  gCu.htod = (CuHtoD)dlsym(lib, "cuMemcpyHtoD_v2");
  gCu.dtoh = (CuDtoH)dlsym(lib, "cuMemcpyDtoH_v2");
  int device = 0;
  void *context = NULL;
  return init && get && retain && set && gCu.alloc && gCu.free && gCu.htod && gCu.dtoh &&
         init(0) == 0 && get(&device, ordinal) == 0 && retain(&context, device) == 0 &&
         set(context) == 0;
}

static int fail(dlc_status_t s) {
  int code = dlc_status_exit_code(s);
  fprintf(stderr, "dlc-gpu-runner: error: %s\n", dlc_status_message(s));
  dlc_status_free(s);
  return code;
}

int main(int argc, char **argv) {
  const char *dir = NULL, *name = NULL, *device = "cuda:0";
  int repeat = 1, deviceTensors = 0;
  int expectCompiles = -1, expectCacheHits = -1, expectGraphRuns = -1;
  double rtol = 1e-4, atol = 1e-5;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (!strcmp(a, "--device") && more) device = argv[++i];
    else if (!strcmp(a, "--repeat") && more) repeat = atoi(argv[++i]);
    else if (!strcmp(a, "--device-tensors")) deviceTensors = 1;
    else if (!strcmp(a, "--expect-compiles") && more) expectCompiles = atoi(argv[++i]);
    else if (!strcmp(a, "--expect-cache-hits") && more) expectCacheHits = atoi(argv[++i]);
    else if (!strcmp(a, "--expect-graph-runs") && more) expectGraphRuns = atoi(argv[++i]);
    else if (!strcmp(a, "--rtol") && more) rtol = atof(argv[++i]);
    else if (!strcmp(a, "--atol") && more) atol = atof(argv[++i]);
    else if (!strcmp(a, "-v")) gVerbose = 1;
    else if (a[0] != '-' && !dir) dir = a;
    else if (a[0] != '-' && !name) name = a;
    else {
      fprintf(stderr, "dlc-gpu-runner: unknown argument '%s'\n", a);
      return 2;
    }
  }
  if (!dir || !name || repeat < 1) {
    fprintf(stderr, "usage: dlc-gpu-runner DIR NAME [--device D] [--repeat N] "
                    "[--device-tensors] [--expect-compiles N] [--expect-cache-hits N] "
                    "[--expect-graph-runs N] [--rtol R] [--atol A] [-v]\n");
    return 2;
  }
  dlc_set_log_callback(onLog, NULL);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.dlcm", dir, name);
  dlc_module_t *module = NULL;
  dlc_status_t s = dlc_module_load_file(path, &module);
  if (s)
    return fail(s);
  dlc_session_t *session = NULL;
  s = dlc_session_create(module, device, NULL, &session);
  if (s)
    return fail(s);

  const size_t ni = dlc_module_input_count(module), no = dlc_module_output_count(module);
  DLTensor *tensors = calloc(ni + no, sizeof(DLTensor));
  const DLTensor **in = calloc(ni + 1, sizeof(DLTensor *)), **out = calloc(no + 1, sizeof(DLTensor *));
  float **host = calloc(ni + no, sizeof(float *)), **expected = calloc(no + 1, sizeof(float *));
  unsigned long long *dev = calloc(ni + no, sizeof(unsigned long long));
  size_t *count = calloc(ni + no, sizeof(size_t));
  int ordinal = strncmp(device, "cuda:", 5) == 0 ? atoi(device + 5) : 0;
  if (deviceTensors && !openDriver(ordinal))
    return 3;
  for (size_t t = 0; t < ni + no; ++t) {
    dlc_tensor_info_t info;
    s = t < ni ? dlc_module_input_info(module, t, &info) : dlc_module_output_info(module, t - ni, &info);
    if (s)
      return fail(s);
    count[t] = info.size_bytes / sizeof(float);
    if (t < ni) {
      snprintf(path, sizeof path, "%s/%s.in%zu.bin", dir, name, t);
      if (!(host[t] = readFloats(path, count[t])))
        return 2;
    } else {
      snprintf(path, sizeof path, "%s/%s.out%zu.bin", dir, name, t - ni);
      if (!(expected[t - ni] = readFloats(path, count[t])))
        return 2;
      host[t] = malloc(info.size_bytes + 1);
    }
    DLTensor *x = &tensors[t];
    x->data = host[t];
    x->device.device_type = kDLCPU;
    x->ndim = info.ndim;
    x->dtype = info.dtype;
    x->shape = (int64_t *)info.shape;
    if (deviceTensors) {
      if (gCu.alloc(&dev[t], info.size_bytes ? info.size_bytes : 1) != 0) {
        fprintf(stderr, "dlc-gpu-runner: cuMemAlloc failed\n");
        return 3;
      }
      if (t < ni)
        gCu.htod(dev[t], host[t], info.size_bytes);
      x->data = (void *)(uintptr_t)dev[t];
      x->device.device_type = kDLCUDA;
      x->device.device_id = ordinal;
    }
    if (t < ni)
      in[t] = x;
    else
      out[t - ni] = x;
  }

  double worst = 0;
  for (int r = 0; r < repeat; ++r) {
    for (size_t o = 0; o < no; ++o) /* poison: every run must write its outputs */
      for (size_t i = 0; i < count[ni + o]; ++i)
        host[ni + o][i] = NAN;
    if (deviceTensors)
      for (size_t o = 0; o < no; ++o)
        gCu.htod(dev[ni + o], host[ni + o], count[ni + o] * sizeof(float));
    s = dlc_session_run(session, in, ni, out, no);
    if (s)
      return fail(s);
    for (size_t o = 0; o < no; ++o) {
      if (deviceTensors)
        gCu.dtoh(host[ni + o], dev[ni + o], count[ni + o] * sizeof(float));
      for (size_t i = 0; i < count[ni + o]; ++i) {
        double want = expected[o][i], got = host[ni + o][i];
        double e = fabs(got - want) / (atol + rtol * fabs(want));
        if (!(e <= worst))
          worst = isnan(e) ? INFINITY : e;
      }
    }
  }
  dlc_session_destroy(session);
  dlc_module_release(module);
  if (deviceTensors)
    for (size_t t = 0; t < ni + no; ++t)
      gCu.free(dev[t]);

  int ok = worst <= 1.0;
  if (expectCompiles >= 0 && gCompiles != expectCompiles) ok = 0;
  if (expectCacheHits >= 0 && gCacheHits != expectCacheHits) ok = 0;
  if (expectGraphRuns >= 0 && gGraphRuns != expectGraphRuns) ok = 0;
  printf("%s on %s%s: %s (%d runs; worst error %.3g of the tolerance; %d NVRTC compiles, "
         "%d cache hits, %d graph runs)\n",
         name, device, deviceTensors ? " with device tensors" : "", ok ? "ok" : "FAILED", repeat,
         worst, gCompiles, gCacheHits, gGraphRuns);
  if (!ok && (expectCompiles >= 0 || expectCacheHits >= 0 || expectGraphRuns >= 0))
    printf("  expected: %d NVRTC compiles, %d cache hits, %d graph runs (-1: any)\n",
           expectCompiles, expectCacheHits, expectGraphRuns);
  return ok ? 0 : 1;
}
