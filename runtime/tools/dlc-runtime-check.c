/*===- dlc-runtime-check.c - Verify a .dlcm through the C API ------------===*
 *
 * Usage: dlc-runtime-check FILE.dlcm [--device DEVICE]
 *
 * Loads the module (every file check: identifier, version, FlatBuffers
 * verifier, checksums, indices/offsets/shapes) and prints its signature
 * (with its dynamic dimensions, module format 1.3: shapes at max);
 * with --device, also creates a session (the device checks, loading the
 * kernels). Exit codes as the dlc tools: 0 valid, 2 bad file or usage,
 * 3 runtime fault (device unavailable, over its memory), 70 internal.
 *
 *===----------------------------------------------------------------------===*/
#include <dlc/runtime.h>

#include <stdio.h>
#include <string.h>

static const char *dtypeName(DLDataType t) {
  if (t.code == kDLFloat && t.bits == 64) return "f64";
  if (t.code == kDLFloat && t.bits == 32) return "f32";
  if (t.code == kDLFloat && t.bits == 16) return "f16";
  if (t.code == kDLBfloat && t.bits == 16) return "bf16";
  if (t.code == kDLInt && t.bits == 64) return "i64";
  if (t.code == kDLInt && t.bits == 32) return "i32";
  if (t.code == kDLInt && t.bits == 8) return "i8";
  if (t.code == kDLUInt && t.bits == 8) return "u8";
  if (t.code == DLC_DL_BOOL) return "i1";
  return "?";
}

/* A dynamic tensor (dim >= 0) also shows its rows per N: "(dimension 0: 2 * N)". */
static void printTensor(const dlc_module_t *module, const char *kind, size_t i,
                        const dlc_tensor_info_t *info, int32_t dim) {
  printf("  %s %zu '%s': %s[", kind, i, info->name, dtypeName(info->dtype));
  for (int32_t d = 0; d < info->ndim; ++d)
    printf("%s%lld", d ? ", " : "", (long long)info->shape[d]);
  printf("]");
  const char *name = NULL;
  int64_t max = 0;
  if (dim >= 0 && info->ndim > 0 &&
      !dlc_module_dynamic_dim_info(module, (size_t)dim, &name, NULL, &max) && max > 0)
    printf(" (dimension 0: %lld * %s)", (long long)(info->shape[0] / max), name);
  printf("\n");
}

static int fail(dlc_status_t status) {
  int code = dlc_status_exit_code(status);
  fprintf(stderr, "dlc-runtime-check: error: %s\n", dlc_status_message(status));
  dlc_status_free(status);
  return code;
}

int main(int argc, char **argv) {
  const char *path = NULL, *device = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
      device = argv[++i];
    else if (argv[i][0] != '-' && !path)
      path = argv[i];
    else {
      fprintf(stderr, "usage: dlc-runtime-check FILE.dlcm [--device DEVICE]\n");
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "usage: dlc-runtime-check FILE.dlcm [--device DEVICE]\n");
    return 2;
  }
  dlc_module_t *module = NULL;
  dlc_status_t status = dlc_module_load_file(path, &module);
  if (status)
    return fail(status);
  printf("module '%s': %zu inputs, %zu outputs\n", dlc_module_name(module),
         dlc_module_input_count(module), dlc_module_output_count(module));
  for (size_t i = 0; i < dlc_module_dynamic_dim_count(module); ++i) {
    const char *name = NULL;
    int64_t min = 0, max = 0;
    dlc_module_dynamic_dim_info(module, i, &name, &min, &max);
    printf("  dynamic dimension %zu '%s': [%lld, %lld]\n", i, name, (long long)min,
           (long long)max);
  }
  for (size_t i = 0; i < dlc_module_input_count(module); ++i) {
    dlc_tensor_info_t info;
    dlc_module_input_info(module, i, &info);
    printTensor(module, "input", i, &info, dlc_module_input_dynamic_dim(module, i));
  }
  for (size_t i = 0; i < dlc_module_output_count(module); ++i) {
    dlc_tensor_info_t info;
    dlc_module_output_info(module, i, &info);
    printTensor(module, "output", i, &info, dlc_module_output_dynamic_dim(module, i));
  }
  if (device) {
    dlc_session_t *session = NULL;
    status = dlc_session_create(module, device, NULL, &session);
    if (status) {
      dlc_module_release(module);
      return fail(status);
    }
    printf("session on %s: ok\n", device);
    dlc_session_destroy(session);
  }
  dlc_module_release(module);
  printf("valid\n");
  return 0;
}
