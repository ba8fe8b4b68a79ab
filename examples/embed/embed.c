/*===- embed.c - A C program that embeds the dlc runtime ------------------===*
 *
 * Usage: dlc-embed-example MODULE.dlcm [--threads N] [--device DEVICE]
 *
 * Loads a compiled module, fills each input with (input index + 1) * (i % 5)
 * for element i, runs it on the CPU (or DEVICE: cuda, cuda-emu), and prints
 * every output. Everything it
 * needs is in <dlc/runtime.h> and libdlc_runtime; it is C99 on purpose.
 *
 *===----------------------------------------------------------------------===*/
#include <dlc/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void logToStderr(void *user, dlc_log_level_t level, const char *message) {
  (void)user;
  if (level <= DLC_LOG_WARNING)
    fprintf(stderr, "dlc: %s\n", message);
}

static int fail(dlc_status_t status, const char *what) {
  int code = dlc_status_exit_code(status);
  fprintf(stderr, "embed: %s: %s\n", what, dlc_status_message(status));
  dlc_status_free(status);
  return code;
}

static uint64_t elementCount(const dlc_tensor_info_t *info) {
  uint64_t n = 1;
  for (int32_t d = 0; d < info->ndim; ++d)
    n *= (uint64_t)info->shape[d];
  return n;
}

/* Element i of input k. */
static double inputValue(size_t k, uint64_t i) { return (double)(k + 1) * (double)(i % 5); }

static void store(void *data, DLDataType t, uint64_t i, double v) {
  if (t.code == kDLFloat && t.bits == 32) ((float *)data)[i] = (float)v;
  else if (t.code == kDLFloat && t.bits == 64) ((double *)data)[i] = v;
  else if (t.code == kDLInt && t.bits == 32) ((int32_t *)data)[i] = (int32_t)v;
  else if (t.code == kDLInt && t.bits == 64) ((int64_t *)data)[i] = (int64_t)v;
  else if (t.bits == 8) ((uint8_t *)data)[i] = (uint8_t)v;
  /* f16/bf16 stay zero: this example does not convert them. */
}

static double load(const void *data, DLDataType t, uint64_t i) {
  if (t.code == kDLFloat && t.bits == 32) return ((const float *)data)[i];
  if (t.code == kDLFloat && t.bits == 64) return ((const double *)data)[i];
  if (t.code == kDLInt && t.bits == 32) return ((const int32_t *)data)[i];
  if (t.code == kDLInt && t.bits == 64) return (double)((const int64_t *)data)[i];
  if (t.code == kDLInt && t.bits == 8) return ((const int8_t *)data)[i];
  if (t.bits == 8) return ((const uint8_t *)data)[i];
  return 0.0;
}

/* A DLTensor over freshly allocated memory for `info` (zeroed). */
static int makeTensor(const dlc_tensor_info_t *info, DLTensor *t) {
  memset(t, 0, sizeof *t);
  t->data = calloc(info->size_bytes ? info->size_bytes : 1, 1);
  if (!t->data)
    return 0;
  t->device.device_type = kDLCPU;
  t->device.device_id = 0;
  t->ndim = info->ndim;
  t->dtype = info->dtype;
  t->shape = (int64_t *)info->shape; /* DLPack's field is not const; not written */
  t->strides = NULL;
  t->byte_offset = 0;
  return 1;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  unsigned threads = 0;
  const char *device = "cpu";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = (unsigned)atoi(argv[++i]);
    else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      device = argv[++i];
    else if (!path)
      path = argv[i];
  }
  if (!path) {
    fprintf(stderr, "usage: dlc-embed-example MODULE.dlcm [--threads N] [--device DEVICE]\n");
    return 2;
  }
  dlc_set_log_callback(logToStderr, NULL);

  dlc_module_t *module = NULL;
  dlc_status_t status = dlc_module_load_file(path, &module);
  if (status)
    return fail(status, "load");

  dlc_session_options_t options;
  dlc_session_options_init(&options);
  options.num_threads = threads;
  dlc_session_t *session = NULL;
  status = dlc_session_create(module, device, &options, &session);
  if (status) {
    dlc_module_release(module);
    return fail(status, "session");
  }

  size_t numInputs = dlc_module_input_count(module);
  size_t numOutputs = dlc_module_output_count(module);
  DLTensor *inputs = calloc(numInputs + 1, sizeof(DLTensor));
  DLTensor *outputs = calloc(numOutputs + 1, sizeof(DLTensor));
  const DLTensor **inputPtrs = calloc(numInputs + 1, sizeof(DLTensor *));
  const DLTensor **outputPtrs = calloc(numOutputs + 1, sizeof(DLTensor *));
  dlc_tensor_info_t *outputInfo = calloc(numOutputs + 1, sizeof(dlc_tensor_info_t));
  int ok = inputs && outputs && inputPtrs && outputPtrs && outputInfo;

  for (size_t k = 0; ok && k < numInputs; ++k) {
    dlc_tensor_info_t info;
    dlc_module_input_info(module, k, &info);
    ok = makeTensor(&info, &inputs[k]);
    for (uint64_t i = 0; ok && i < elementCount(&info); ++i)
      store(inputs[k].data, info.dtype, i, inputValue(k, i));
    inputPtrs[k] = &inputs[k];
  }
  for (size_t k = 0; ok && k < numOutputs; ++k) {
    dlc_module_output_info(module, k, &outputInfo[k]);
    ok = makeTensor(&outputInfo[k], &outputs[k]);
    outputPtrs[k] = &outputs[k];
  }
  int exitCode = 0;
  if (!ok) {
    fprintf(stderr, "embed: out of memory\n");
    exitCode = 3;
  } else {
    status = dlc_session_run(session, inputPtrs, numInputs, outputPtrs, numOutputs);
    if (status) {
      exitCode = fail(status, "run");
    } else {
      printf("module '%s' ran on %s\n", dlc_module_name(module), device);
      for (size_t k = 0; k < numOutputs; ++k) {
        const dlc_tensor_info_t *info = &outputInfo[k];
        uint64_t n = elementCount(info);
        double sum = 0;
        printf("%s [", info->name);
        for (int32_t d = 0; d < info->ndim; ++d)
          printf("%s%lld", d ? "x" : "", (long long)info->shape[d]);
        printf("] =");
        for (uint64_t i = 0; i < n; ++i) {
          double v = load(outputs[k].data, info->dtype, i);
          sum += v;
          if (i < 32)
            printf(" %g", v);
        }
        printf("%s\n", n > 32 ? " ..." : "");
        printf("%s sum = %g\n", info->name, sum);
      }
    }
  }

  for (size_t k = 0; k < numInputs; ++k)
    free(inputs ? inputs[k].data : NULL);
  for (size_t k = 0; k < numOutputs; ++k)
    free(outputs ? outputs[k].data : NULL);
  free(inputs);
  free(outputs);
  free(inputPtrs);
  free(outputPtrs);
  free(outputInfo);
  dlc_session_destroy(session);
  dlc_module_release(module);
  return exitCode;
}
