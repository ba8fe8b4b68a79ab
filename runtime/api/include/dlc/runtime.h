/*===- dlc/runtime.h - The dlc runtime's C API -------------------*- C -*-===*
 *
 * Load a compiled module (.dlcm), create a session on a device, run it on
 * DLPack tensors. C99; the library (libdlc_runtime) depends on libc, libdl,
 * libpthread, zlib and libstdc++ only.
 *
 * OWNERSHIP
 *  - dlc_status_t: NULL means success. A non-NULL status belongs to the
 *    caller, who frees it with dlc_status_free; its message lives until then.
 *  - dlc_module_t: dlc_module_load_* returns a module holding one reference;
 *    dlc_module_retain adds one, dlc_module_release drops one and frees the
 *    module at zero. A session keeps its module alive on its own, so the
 *    caller may release the module as soon as its sessions exist.
 *  - dlc_session_t: created by dlc_session_create, freed by
 *    dlc_session_destroy.
 *  - Strings and shapes handed out by dlc_module_* queries belong to the
 *    module and stay valid while it lives.
 *  - Tensors passed to dlc_session_run are borrowed for the call only; the
 *    runtime never frees or keeps them. Output memory is the caller's.
 *  - A module loaded from a file maps the file: do not modify or truncate the
 *    file while the module lives. dlc_module_load_memory copies the bytes.
 *
 * THREADING
 *  - A module is immutable once loaded: any number of threads may query it
 *    and create sessions from it at the same time.
 *  - A session is used by one thread at a time. Calls on one session must not
 *    overlap (an overlapping dlc_session_run is refused with
 *    DLC_INVALID_ARGUMENT); different sessions run concurrently. On "cpu" each
 *    session owns a thread pool (one thread per core unless options say).
 *  - dlc_set_log_callback may be called at any time; the callback is called
 *    from the thread that calls into the runtime, never two at once.
 *
 * ERRORS
 *  Nothing in this API throws, aborts or prints on bad input. A corrupt or
 *  hostile module is refused at load time with DLC_INVALID_MODULE and a
 *  message naming the file, the section and the byte offset:
 *    "m.dlcm: section 'header' at byte 412: inputs[0] ('x'): dimension 1 is negative (-5)"
 *  A module holds compiled code that runs in this process: load modules from
 *  sources you trust, as you would a shared library.
 *
 *===----------------------------------------------------------------------===*/
#ifndef DLC_RUNTIME_H
#define DLC_RUNTIME_H

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define DLC_API
#else
#define DLC_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function's meaning changes; additions keep it. */
#define DLC_RUNTIME_API_VERSION 1 /* 1.1: state; 1.3: dynamic dimensions */

/* DLPack 0.6 has no boolean type code; this is the value later DLPack
 * versions gave kDLBool. The runtime reports i1 tensors as
 * {DLC_DL_BOOL, 8, 1} and also accepts {kDLUInt, 8, 1} for them. */
#define DLC_DL_BOOL 6

/*===----------------------------------------------------------------------===
 * Status
 *===----------------------------------------------------------------------===*/

typedef enum dlc_status_code_t {
  DLC_OK = 0,
  DLC_INVALID_ARGUMENT = 1,   /* a bad call: wrong tensor, null handle, option */
  DLC_INVALID_MODULE = 2,     /* a corrupt, hostile or unsupported module file */
  DLC_NOT_FOUND = 3,          /* a file that cannot be opened */
  DLC_UNAVAILABLE = 4,        /* the device does not exist in this build/machine */
  DLC_RESOURCE_EXHAUSTED = 5, /* out of memory, or over a device limit */
  DLC_UNIMPLEMENTED = 6,      /* a valid module needs what this runtime lacks */
  DLC_INTERNAL = 7,           /* a bug in the runtime */
  /* A run's data is outside an op's domain (module format 1.2's checks:
   * an index, id or label out of range, an integer division by zero, a
   * negative integer exponent). The message names the op, its location
   * and the value; the run's outputs (and the state tensors a train step
   * updates) are undefined; the session stays usable (dlc_session_reset_state
   * restores the state). */
  DLC_DATA_ERROR = 8
} dlc_status_code_t;

typedef struct dlc_status_s *dlc_status_t;

/* DLC_OK for NULL. */
DLC_API dlc_status_code_t dlc_status_code(dlc_status_t status);
/* "" for NULL. */
DLC_API const char *dlc_status_message(dlc_status_t status);
/* The exit code the dlc tools use for it: 0 OK; 2 bad input (invalid
 * argument, invalid module, not found); 3 runtime fault (unavailable,
 * resource exhausted, unimplemented, data error); 70 internal error. */
DLC_API int dlc_status_exit_code(dlc_status_t status);
/* Accepts NULL. */
DLC_API void dlc_status_free(dlc_status_t status);

/* "0.1.0 (module format 1.5)" */
DLC_API const char *dlc_runtime_version(void);

/*===----------------------------------------------------------------------===
 * Logging
 *===----------------------------------------------------------------------===*/

typedef enum dlc_log_level_t {
  DLC_LOG_ERROR = 0,
  DLC_LOG_WARNING = 1,
  DLC_LOG_INFO = 2,
  DLC_LOG_DEBUG = 3
} dlc_log_level_t;

typedef void (*dlc_log_callback_t)(void *user_data, dlc_log_level_t level,
                                   const char *message);

/* Process-wide. NULL (the default) drops every message. */
DLC_API void dlc_set_log_callback(dlc_log_callback_t callback, void *user_data);

/*===----------------------------------------------------------------------===
 * Modules
 *===----------------------------------------------------------------------===*/

typedef struct dlc_module_s dlc_module_t;

/* Loads and verifies (identifier and version, FlatBuffers verifier,
 * checksums, then every index, offset, size and shape against the file). */
DLC_API dlc_status_t dlc_module_load_file(const char *path, dlc_module_t **out_module);
DLC_API dlc_status_t dlc_module_load_memory(const void *data, size_t size,
                                            dlc_module_t **out_module);
/* Both accept NULL. */
DLC_API void dlc_module_retain(dlc_module_t *module);
DLC_API void dlc_module_release(dlc_module_t *module);

/* The module's name ("" when it has none). */
DLC_API const char *dlc_module_name(const dlc_module_t *module);

typedef struct dlc_tensor_info_t {
  const char *name;
  DLDataType dtype;
  int32_t ndim;
  const int64_t *shape; /* ndim entries */
  uint64_t size_bytes;  /* product(shape) * element size */
} dlc_tensor_info_t;

DLC_API size_t dlc_module_input_count(const dlc_module_t *module);
DLC_API size_t dlc_module_output_count(const dlc_module_t *module);
DLC_API dlc_status_t dlc_module_input_info(const dlc_module_t *module, size_t index,
                                           dlc_tensor_info_t *out_info);
DLC_API dlc_status_t dlc_module_output_info(const dlc_module_t *module, size_t index,
                                            dlc_tensor_info_t *out_info);

/*===----------------------------------------------------------------------===
 * Dynamic dimensions (module format 1.3)
 *
 * A module compiled for a range of sizes of one dimension (`dlc compile
 * --dim N=1..64`, such as the batch) serves any N in [min, max] with one
 * session. Its dynamic inputs and outputs are those whose dimension 0 grows
 * with N: dlc_module_input_info / output_info report their shape at max,
 * where dimension 0 is rows * max; a run passes them with dimension 0 =
 * rows * N for one N in [min, max], the same N for all of them (the other
 * dimensions as reported). dlc_session_run takes N from the tensors and
 * refuses, with DLC_INVALID_ARGUMENT naming the tensor, a dimension 0 that
 * is not a multiple of rows, an N outside [min, max], or two tensors of
 * different N. Outputs get exactly their N's rows: nothing is written past
 * them. On the CPU, kernels whose rows grow with N run over the first N's
 * rows only; the rest of the plan runs at max.
 *===----------------------------------------------------------------------===*/

/* 0 for a module of static shapes; at most 1 in this runtime. */
DLC_API size_t dlc_module_dynamic_dim_count(const dlc_module_t *module);
/* Dimension `index`'s name (owned by the module), and its smallest and
 * largest size; any output may be NULL. */
DLC_API dlc_status_t dlc_module_dynamic_dim_info(const dlc_module_t *module, size_t index,
                                                 const char **name, int64_t *min,
                                                 int64_t *max);
/* The dynamic dimension input (output) `index`'s dimension 0 grows with,
 * or -1 for a static tensor (and for a NULL module or an index out of
 * range). Its rows per N are info.shape[0] / max. */
DLC_API int32_t dlc_module_input_dynamic_dim(const dlc_module_t *module, size_t index);
DLC_API int32_t dlc_module_output_dynamic_dim(const dlc_module_t *module, size_t index);

/*===----------------------------------------------------------------------===
 * Sessions
 *===----------------------------------------------------------------------===*/

typedef struct dlc_session_s dlc_session_t;

typedef struct dlc_session_options_t {
  uint32_t struct_size;      /* sizeof(dlc_session_options_t); set by _init */
  uint32_t num_threads;      /* cpu, cuda-emu: worker threads; 0 = DLC_NUM_THREADS
                                if set, else the process's cores shared among
                                the ranks on this host */
  uint64_t max_memory_bytes; /* 0 = the device's memory */
} dlc_session_options_t;

DLC_API void dlc_session_options_init(dlc_session_options_t *options);

/* device: "cpu"; "cuda:N" ("cuda" is "cuda:0"), an NVIDIA GPU through the
 * driver (DLC_UNAVAILABLE, message "no CUDA driver: ..." or "no CUDA device
 * ...", on a machine without); "cuda-emu", CUDA kernels emulated on the CPU
 * (for tests). Checks the module against the device (its arena against the
 * memory limit, a loadable binary for every kernel) before allocating, then
 * allocates the plan's arena, loads the kernels (on CUDA: the cubin for the
 * device's architecture, else PTX, else the kernel's source through NVRTC
 * and the disk cache) and, on CUDA, uploads the weights. options may be
 * NULL. */
DLC_API dlc_status_t dlc_session_create(dlc_module_t *module, const char *device,
                                        const dlc_session_options_t *options,
                                        dlc_session_t **out_session);
/* Accepts NULL. */
DLC_API void dlc_session_destroy(dlc_session_t *session);

/* Runs the module once. inputs[i] must match input i exactly: dtype, ndim,
 * shape (a dynamic input's dimension 0: its rows at the run's N, see
 * "Dynamic dimensions" above), a CPU device (kDLCPU; on a "cuda:N" session also kDLCUDA memory of
 * device N, used in place), compact row-major strides (or NULL
 * strides), non-NULL data unless empty. outputs[i] likewise, and the runtime
 * writes its result into outputs[i]->data. Outputs must not overlap each other
 * or any input. Returns when the results are in the outputs. */
DLC_API dlc_status_t dlc_session_run(dlc_session_t *session, const DLTensor *const *inputs,
                                     size_t num_inputs, const DLTensor *const *outputs,
                                     size_t num_outputs);

/*===----------------------------------------------------------------------===
 * State (module format 1.1)
 *
 * A module may declare state: tensors that persist across runs, such as the
 * parameters and optimizer moments of a training module (`dlc train`
 * compiles one; each run is one train step). A session owns one buffer per
 * state tensor on its device, initialised when the session is created (to
 * the compiled initial values: the parameters' initialisers, drawn by the
 * session since module format 1.5, zeros for moments and counters); every
 * run reads and updates them in place, with no
 * copy to the host. Read them to save a checkpoint, write them to resume
 * one. Tensors are passed as for dlc_session_run (compact, host memory, or
 * on a "cuda:N" session also device memory of device N); the state is copied.
 *===----------------------------------------------------------------------===*/

DLC_API size_t dlc_module_state_count(const dlc_module_t *module);
DLC_API dlc_status_t dlc_module_state_info(const dlc_module_t *module, size_t index,
                                           dlc_tensor_info_t *out_info);
/* The index of the state tensor called `name`, or DLC_INVALID_ARGUMENT
 * naming the tensors there are. */
DLC_API dlc_status_t dlc_module_state_index(const dlc_module_t *module, const char *name,
                                            size_t *out_index);
/* Copies state tensor `index` of the session into `out` (its dtype and
 * shape must match dlc_module_state_info), or `value` into it. */
DLC_API dlc_status_t dlc_session_read_state(dlc_session_t *session, size_t index,
                                            const DLTensor *out);
DLC_API dlc_status_t dlc_session_write_state(dlc_session_t *session, size_t index,
                                             const DLTensor *value);
/* Every state tensor back to its initial value. */
DLC_API dlc_status_t dlc_session_reset_state(dlc_session_t *session);

/* A module compiled for a mesh (`dlc compile --mesh data=N ...`) holds one
 * plan per rank and the collectives between its kernels. Its session runs
 * this process's rank under a launch of N processes (mpirun; torchrun's or
 * DLC_RANK/DLC_WORLD_SIZE variables): the collectives go through NCCL on a
 * CUDA device and MPI on the CPU (both loaded with dlopen), and every
 * rank's session creation checks that the ranks run the same collectives.
 * Sets *rank and *world_size (0 and 1 for a module without a mesh); either
 * may be NULL. */
DLC_API dlc_status_t dlc_session_rank(const dlc_session_t *session, int32_t *rank,
                                      int32_t *world_size);
/* Over all runs so far: seconds the collectives took on the session's
 * communication thread (waiting for peers included), and seconds the plan
 * waited for them; the kernels between a collective and the first step
 * that needs it overlap the rest. Either may be NULL. */
DLC_API dlc_status_t dlc_session_collective_seconds(const dlc_session_t *session,
                                                    double *busy_seconds,
                                                    double *waited_seconds);

/* Per-kernel timing (a profile): after dlc_session_enable_kernel_timing,
 * every run adds each launch's wall time to its kernel. Host devices (cpu,
 * cuda-emu) only: elsewhere DLC_STATUS_UNIMPLEMENTED. Off by default (it
 * reads the clock twice a launch). */
DLC_API dlc_status_t dlc_session_enable_kernel_timing(dlc_session_t *session);
/* The kernels the session launches, in the order of first launch. */
DLC_API dlc_status_t dlc_session_kernel_count(const dlc_session_t *session, size_t *count);
/* Kernel `index`'s name (owned by the session, valid while it lives), its
 * launches and their seconds over the timed runs so far. Any output may be
 * NULL. */
DLC_API dlc_status_t dlc_session_kernel_time(const dlc_session_t *session, size_t index,
                                             const char **name, uint64_t *calls,
                                             double *seconds);

/* The timed launches in order, for traces: the kernel (an index of
 * dlc_session_kernel_time) and its start and end in nanoseconds of
 * CLOCK_MONOTONIC (std::chrono::steady_clock). The first 2^20 launches
 * since timing was enabled; *events is owned by the session and valid until
 * its next run. */
typedef struct dlc_kernel_event_t {
  uint32_t kernel;
  uint32_t reserved;
  int64_t start_ns;
  int64_t end_ns;
} dlc_kernel_event_t;
DLC_API dlc_status_t dlc_session_kernel_events(const dlc_session_t *session,
                                               const dlc_kernel_event_t **events,
                                               size_t *count);

/* The device memory a session holds: its plan's arena (intermediate
 * tensors), the module's weights and the state tensors, in bytes. Any
 * output may be NULL. */
DLC_API dlc_status_t dlc_session_memory(const dlc_session_t *session, uint64_t *arena_bytes,
                                        uint64_t *weight_bytes, uint64_t *state_bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_RUNTIME_H */
