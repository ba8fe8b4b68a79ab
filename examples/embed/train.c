/*===- train.c - A C program that trains a model through the runtime -----===*
 *
 * Usage: dlc-embed-train STEP.dlcm STEPS CHECKPOINT.safetensors
 *
 * STEP.dlcm is a train step compiled by `dlc compile M.dlg --train -o ...`,
 * for a classifier whose inputs are `x: f32[N, F]` (F >= 10), `label:
 * i32[N]` and the learning rate `lr: f32[]` (examples/mnist_mlp.dlg is one).
 * The program makes its own data (class c when feature c is the largest of
 * the first ten), runs STEPS train steps on the CPU (each one forward,
 * backward and optimizer update; the parameters and moments stay in the
 * session), prints the loss as it goes, and saves every state tensor as a
 * .safetensors checkpoint that `dlc run M.dlg --params` reads. C99, only
 * <dlc/runtime.h> and libdlc_runtime.
 *
 *===----------------------------------------------------------------------===*/
#include <dlc/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(dlc_status_t status, const char *what) {
  int code = dlc_status_exit_code(status);
  fprintf(stderr, "train: %s: %s\n", what, dlc_status_message(status));
  dlc_status_free(status);
  return code;
}

/* A standard normal number from a small deterministic generator. */
static uint64_t rngState = 0x9E3779B97F4A7C15ull;
static double uniform(void) {
  rngState = rngState * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rngState >> 11) * (1.0 / 9007199254740992.0);
}
static float normal(void) {
  double s = 0;
  for (int i = 0; i < 12; ++i) /* Irwin–Hall: close enough for data */
    s += uniform();
  return (float)(s - 6.0);
}

static DLTensor view(void *data, DLDataType dtype, int32_t ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  return t;
}

/* A safetensors dtype name for a DLPack type. */
static const char *safetensorsType(DLDataType t) {
  if (t.code == kDLFloat)
    return t.bits == 64 ? "F64" : t.bits == 32 ? "F32" : "F16";
  if (t.code == kDLBfloat)
    return "BF16";
  if (t.code == kDLInt)
    return t.bits == 64 ? "I64" : t.bits == 32 ? "I32" : "I8";
  return t.code == kDLUInt ? "U8" : "BOOL";
}

/* Every state tensor of the session as one .safetensors file: an 8-byte
 * header length, the JSON header (padded with spaces to a multiple of 8),
 * then the tensors' bytes in order. */
static int saveCheckpoint(dlc_module_t *module, dlc_session_t *session, const char *path) {
  size_t count = dlc_module_state_count(module);
  char *header = malloc(64 + count * 512);
  void **data = calloc(count, sizeof(void *));
  size_t length = 0;
  uint64_t offset = 0;
  length += (size_t)sprintf(header + length, "{");
  for (size_t i = 0; i < count; ++i) {
    dlc_tensor_info_t info;
    dlc_status_t s = dlc_module_state_info(module, i, &info);
    if (s)
      return fail(s, "state info");
    data[i] = malloc(info.size_bytes ? info.size_bytes : 1);
    DLTensor t = view(data[i], info.dtype, info.ndim, (int64_t *)info.shape);
    if ((s = dlc_session_read_state(session, i, &t)))
      return fail(s, "reading state");
    length += (size_t)sprintf(header + length, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[",
                              i ? "," : "", info.name, safetensorsType(info.dtype));
    for (int32_t d = 0; d < info.ndim; ++d)
      length += (size_t)sprintf(header + length, "%s%lld", d ? "," : "",
                                (long long)info.shape[d]);
    length += (size_t)sprintf(header + length, "],\"data_offsets\":[%llu,%llu]}",
                              (unsigned long long)offset,
                              (unsigned long long)(offset + info.size_bytes));
    offset += info.size_bytes;
  }
  length += (size_t)sprintf(header + length, "}");
  while (length % 8)
    header[length++] = ' ';
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "train: cannot write %s\n", path);
    return 2;
  }
  uint64_t n = length;
  unsigned char le[8];
  for (int b = 0; b < 8; ++b)
    le[b] = (unsigned char)(n >> (8 * b));
  fwrite(le, 1, 8, f);
  fwrite(header, 1, length, f);
  for (size_t i = 0; i < count; ++i) {
    dlc_tensor_info_t info;
    dlc_status_free(dlc_module_state_info(module, i, &info));
    fwrite(data[i], 1, info.size_bytes, f);
    free(data[i]);
  }
  fclose(f);
  free(data);
  free(header);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s STEP.dlcm STEPS CHECKPOINT.safetensors\n", argv[0]);
    return 2;
  }
  int steps = atoi(argv[2]);
  dlc_module_t *module = NULL;
  dlc_status_t s = dlc_module_load_file(argv[1], &module);
  if (s)
    return fail(s, "loading the module");
  dlc_session_t *session = NULL;
  if ((s = dlc_session_create(module, "cpu", NULL, &session)))
    return fail(s, "creating the session");

  /* The inputs: x [N, F], label [N], lr []; the output: the loss. */
  dlc_tensor_info_t xInfo, labelInfo, lrInfo;
  if (dlc_module_input_count(module) != 3 || dlc_module_output_count(module) != 1 ||
      (s = dlc_module_input_info(module, 0, &xInfo)) ||
      (s = dlc_module_input_info(module, 1, &labelInfo)) ||
      (s = dlc_module_input_info(module, 2, &lrInfo))) {
    if (s)
      return fail(s, "inputs");
    fprintf(stderr, "train: expected inputs x, label, lr and one output (the loss)\n");
    return 2;
  }
  int64_t n = xInfo.shape[0], features = xInfo.shape[1];
  printf("train step: x [%lld, %lld], %zu state tensors\n", (long long)n,
         (long long)features, dlc_module_state_count(module));
  float *x = malloc((size_t)(n * features) * sizeof(float));
  int32_t *label = malloc((size_t)n * sizeof(int32_t));
  float lr = 1e-3f, loss = 0, first = 0;
  int64_t xShape[2] = {n, features}, labelShape[1] = {n};
  DLTensor xT = view(x, xInfo.dtype, 2, xShape);
  DLTensor labelT = view(label, labelInfo.dtype, 1, labelShape);
  DLTensor lrT = view(&lr, lrInfo.dtype, 0, NULL);
  DLTensor lossT = view(&loss, lrInfo.dtype, 0, NULL);
  const DLTensor *inputs[3] = {&xT, &labelT, &lrT};
  const DLTensor *outputs[1] = {&lossT};

  for (int step = 1; step <= steps; ++step) {
    for (int64_t i = 0; i < n; ++i) {
      int best = 0;
      for (int64_t f = 0; f < features; ++f) {
        float v = normal() * (f < 10 ? 1.0f : 0.05f);
        x[i * features + f] = v;
        if (f < 10 && v > x[i * features + best])
          best = (int)f;
      }
      label[i] = best;
    }
    if ((s = dlc_session_run(session, inputs, 3, outputs, 1)))
      return fail(s, "running a train step");
    if (step == 1)
      first = loss;
    if (step == 1 || step % 20 == 0 || step == steps)
      printf("step %d: loss %.4f\n", step, loss);
  }
  printf("loss %s: %.4f -> %.4f\n", loss < first ? "decreased" : "did not decrease", first, loss);
  int code = saveCheckpoint(module, session, argv[3]);
  if (!code)
    printf("checkpoint: %s\n", argv[3]);
  free(x);
  free(label);
  dlc_session_destroy(session);
  dlc_module_release(module);
  return code;
}
