/*===- tilec.h - The tilec C API -----------------------------------*- C -*-===*
 *
 * A stable C interface to the compiler and the runtime, for embedding tilec
 * in C programs and in other languages' FFIs. Every function that can fail
 * returns a tilec_error* (NULL on success) that carries the full diagnostic
 * text (file:line:col, the source line and a caret) or the runtime error
 * (the failing CUDA call, the CUDA error name, the kernel). Nothing here
 * prints, throws or aborts.
 *
 * NULL handles and out-pointers are misuse that is reported, not a crash:
 * functions returning tilec_error* return an error naming the NULL argument;
 * the inspection functions return NULL or 0 for a NULL program (or an
 * out-of-range index); the _destroy functions and tilec_error_message accept
 * NULL; tilec_compile_options_init(NULL) and tilec_program_kernel_param with
 * a NULL info do nothing.
 *
 *   tilec_compile_options o;  tilec_compile_options_init(&o);
 *   tilec_program *p;
 *   tilec_error *e = tilec_compile(src, strlen(src), &o, &p);
 *   if (e) { fputs(tilec_error_message(e), stderr); tilec_error_destroy(e); }
 *
 * Threads: every function may be called from any thread, and from several at
 * once: compiling, describing, interpreting, tuning and the cache share only
 * internally locked state (the compile cache, the tuning database, the
 * interpreter's print sink). A program, module or kernel may be used by
 * several threads at once (launches included: they only read it) but must
 * not be destroyed while another thread uses it; a launch plan likewise. An
 * error belongs to the thread that received it. Launches on one stream from
 * several threads are ordered as the driver receives them. The GPU
 * functions make the handle's device current on the calling thread.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TILEC_TILEC_H
#define TILEC_TILEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: tilec_arg has a dtype (tilec_arg_tensor_typed); arrays of tilec_arg
 * built against version 1 must be rebuilt.
 * 3: tilec_module_load_device, tilec_c_api_version, tilec_launch_plan_*,
 *    tilec_describe, tilec_cache_info/clear (additions only).
 * 4: tilec_error_kind, tilec_tune, tilec_program_header,
 *    tilec_set_print_callback (additions only).
 * 5: tilec_program_kernel_num_heuristics, tilec_program_kernel_heuristic,
 *    tilec_program_kernel_choose (additions only). */
#define TILEC_C_API_VERSION 5

/* The version the library was built with (TILEC_C_API_VERSION then), for
 * bindings that load it at run time. */
int tilec_c_api_version(void);

typedef struct tilec_error tilec_error;
typedef struct tilec_program tilec_program;
typedef struct tilec_module tilec_module;
typedef struct tilec_kernel tilec_kernel;

/* Errors ------------------------------------------------------------------*/
const char *tilec_error_message(const tilec_error *error);
void tilec_error_destroy(tilec_error *error);

typedef enum tilec_error_kind {
  TILEC_ERROR_NONE = 0,     /* a NULL error */
  TILEC_ERROR_COMPILE = 1,  /* the source: the message is the diagnostic */
  TILEC_ERROR_ARGUMENT = 2, /* misuse (a NULL handle) or arguments that do not
                               match the kernel (count, kind, rank, dtype,
                               sizes, an @require that fails) */
  TILEC_ERROR_RUNTIME = 3,  /* the driver or the device (a CUDA error, no GPU,
                               a JIT failure), or an interpreted kernel that
                               failed while running (an assertion) */
  TILEC_ERROR_TOOL = 4,     /* an external tool or file: ptxas missing or
                               failing, a file that cannot be written */
  TILEC_ERROR_INTERNAL = 5  /* out of memory or a bug in tilec */
} tilec_error_kind;
tilec_error_kind tilec_error_get_kind(const tilec_error *error);

/* Compiling ---------------------------------------------------------------*/
typedef struct tilec_compile_options {
  const char *file_name;  /* for diagnostics; default "<source>" */
  const char *arch;       /* "sm_90a" (default), "sm_90" or "sm_80" */
  const char *kernel;     /* compile only this kernel; NULL: all */
  const char *const *define_names;  /* -D NAME=VALUE pairs */
  const char *const *define_values;
  size_t num_defines;
  unsigned opt_level;     /* 0..3, default 3 */
  unsigned num_warps;     /* 0: chosen by the compiler */
  int use_cache;          /* nonzero: in-process + disk compile cache (default 1) */
  unsigned min_blocks_per_sm; /* blocks per SM the registers must allow; 0: no limit */
} tilec_compile_options;

void tilec_compile_options_init(tilec_compile_options *options);

/* Compiles `source` (of `size` bytes) to PTX. On success *out is a program
 * that the caller destroys with tilec_program_destroy. */
tilec_error *tilec_compile(const char *source, size_t size,
                           const tilec_compile_options *options,
                           tilec_program **out);
void tilec_program_destroy(tilec_program *program);

const char *tilec_program_ptx(const tilec_program *program, size_t *size);
/* The program assembled into a cubin by ptxas (CUDA toolkit), for `arch`
 * (NULL: the arch it was compiled for). The bytes stay valid while the
 * program lives. An error when ptxas is missing or fails. */
tilec_error *tilec_program_cubin(tilec_program *program, const char *arch,
                                 const char **data, size_t *size);
size_t tilec_program_num_kernels(const tilec_program *program);
const char *tilec_program_kernel_name(const tilec_program *program, size_t kernel);
unsigned tilec_program_kernel_threads(const tilec_program *program, size_t kernel);
/* The grid clause as written, e.g. "cdiv(x.shape[0], 1024)"; `dim` 0..2. */
const char *tilec_program_kernel_grid(const tilec_program *program, size_t kernel,
                                      unsigned dim);
unsigned tilec_program_kernel_grid_dims(const tilec_program *program, size_t kernel);
size_t tilec_program_kernel_num_params(const tilec_program *program, size_t kernel);

typedef struct tilec_param_info {
  const char *name;
  int is_tensor;
  const char *dtype; /* "f32", "bf16", ... */
  unsigned rank;     /* 0 for scalars */
} tilec_param_info;
void tilec_program_kernel_param(const tilec_program *program, size_t kernel,
                                size_t param, tilec_param_info *info);
/* The compile-time parameters the kernel's @heuristic(...) chooses at
 * launch (those the program did not fix with a define): how many, and the
 * name of the i-th (NULL past the end). */
size_t tilec_program_kernel_num_heuristics(const tilec_program *program, size_t kernel);
const char *tilec_program_kernel_heuristic(const tilec_program *program, size_t kernel,
                                           size_t i);

/* Running (needs an NVIDIA driver) ----------------------------------------*/
int tilec_device_count(void); /* 0 where there is no driver or GPU */

/* Loads the program's PTX on device 0 (tilec_module_load) or on `device`
 * (its primary context, the one the CUDA runtime and torch use): its kernels
 * launch there, on streams of that device. */
tilec_error *tilec_module_load(const tilec_program *program, tilec_module **out);
tilec_error *tilec_module_load_device(const tilec_program *program, int device,
                                      tilec_module **out);
void tilec_module_destroy(tilec_module *module);
/* The kernel stays valid while its module lives. */
tilec_error *tilec_module_get_kernel(tilec_module *module, const char *name,
                                     tilec_kernel **out);

typedef enum tilec_arg_kind {
  TILEC_ARG_INT = 0,    /* any integer scalar parameter */
  TILEC_ARG_FLOAT = 1,  /* any float scalar parameter (f16/bf16 converted) */
  TILEC_ARG_TENSOR = 2
} tilec_arg_kind;

typedef struct tilec_arg {
  tilec_arg_kind kind;
  int64_t i;
  double f;
  uint64_t ptr;        /* device pointer */
  unsigned rank;
  int64_t sizes[4];
  int64_t strides[4];  /* in elements */
  /* The tensor's element type ("f32", "bf16", ...; as tilec_param_info's),
   * checked at launch against the parameter's; NULL: not checked. */
  const char *dtype;
} tilec_arg;

tilec_arg tilec_arg_int(int64_t value);
tilec_arg tilec_arg_float(double value);
/* A contiguous (row-major) tensor. A rank above 4, or NULL sizes with a
 * nonzero rank, give an argument that tilec_launch refuses with an error. */
tilec_arg tilec_arg_tensor(uint64_t ptr, unsigned rank, const int64_t *sizes);
/* A tensor with its strides (in elements; NULL: contiguous) and element
 * type (NULL: not checked): a launch refuses a dtype other than the
 * parameter's, naming the parameter. */
tilec_arg tilec_arg_tensor_typed(uint64_t ptr, unsigned rank, const int64_t *sizes,
                                 const int64_t *strides, const char *dtype);

/* A program's kernels as written, parsed but not compiled (for bindings:
 * which compile-time parameters there are, their defaults, which parameter
 * types name a type parameter). On success *json is a NUL-terminated JSON
 * object, freed with tilec_string_destroy:
 *   {"version": 1, "kernels": [{"name": "saxpy",
 *     "compile_time": [{"name": "BLOCK", "kind": "int", "default": "1024"},
 *                      {"name": "T", "kind": "type", "default": "f32"}],
 *     "params": [{"name": "x", "type": "tensor<T, 1>", "tensor": true,
 *                 "rank": 1, "element": "T", "element_is_parameter": true}],
 *     "writes": ["y"],
 *     "requires": [{"condition": "x.shape[0] > 0", "message": "..."}],
 *     "tune": [{"name": "BN", "values": ["128", "256"]}],
 *     "grid": ["cdiv(x.shape[0], BLOCK)"]}]}
 * Defaults and values are the source text. A syntax error is the error's
 * diagnostic. `file_name` (may be NULL) names the source in it. */
tilec_error *tilec_describe(const char *source, size_t size, const char *file_name,
                            char **json);
void tilec_string_destroy(char *s);

/* The process's compile cache (in process and on disk, see docs/embedding.md):
 * tilec_cache_info gives a JSON object, freed with tilec_string_destroy:
 *   {"directory": "/home/u/.cache/tilec", "max_bytes": N, "entries": N,
 *    "bytes": N, "memory_hits": N, "disk_hits": N, "misses": N, "corrupt": N}
 * (directory "" when the cache is in process only); tilec_cache_clear
 * removes every disk entry and forgets the in-process ones. */
tilec_error *tilec_cache_info(char **json);
tilec_error *tilec_cache_clear(void);

/* The CPU reference interpreter ---------------------------------------------
 * Runs `kernel` of `source` on the host (no GPU needed), on host memory:
 * every program of the grid in turn, with the language's semantics (the
 * reference the GPU is tested against). Tensor data is read and written as
 * the parameter's element type. Compile errors and run-time failures (an
 * assertion, an out-of-range grid) come back as the error's message. */
typedef struct tilec_host_arg {
  tilec_arg_kind kind;
  int64_t i;
  double f;
  void *data;          /* host memory */
  unsigned rank;       /* at most 8 */
  int64_t sizes[8];
  int64_t strides[8];  /* in elements */
} tilec_host_arg;
tilec_error *tilec_interpret(const char *source, size_t size,
                             const tilec_compile_options *options, const char *kernel,
                             const tilec_host_arg *args, size_t num_args);

/* The values the @heuristic expressions give for a launch with `args`:
 * values[i] for the i-th parameter of tilec_program_kernel_heuristic. A
 * launch path compiles the program again with those defines and launches
 * that kernel (the Python package does so on every call). Only shapes,
 * strides and integer scalars are read (a tensor's data pointer may be 0).
 * An error when the arguments do not match the kernel or an expression
 * fails (division by zero). */
tilec_error *tilec_program_kernel_choose(const tilec_program *program, size_t kernel,
                                         const tilec_arg *args, size_t num_args,
                                         int64_t *values);

/* Launches on `stream` (a CUstream; NULL: the default stream). The grid is
 * evaluated from the arguments. The arguments are checked first (args NULL
 * with num_args > 0, an unknown kind, a tensor rank above 4, a negative size:
 * errors), before the kernel (NULL: an error) and the driver are used. */
tilec_error *tilec_launch(const tilec_kernel *kernel, const tilec_arg *args,
                          size_t num_args, void *stream);

/* A launch prepared once and run many times (bindings' hot loops): the
 * arguments are checked, the grid evaluated and the parameters packed (TMA
 * descriptors encoded) by tilec_launch_plan_create; tilec_launch_plan_run
 * only enqueues, on `stream`. The tensors must stay where they were; the
 * plan must not outlive its kernel's module. */
typedef struct tilec_launch_plan tilec_launch_plan;
tilec_error *tilec_launch_plan_create(const tilec_kernel *kernel, const tilec_arg *args,
                                      size_t num_args, tilec_launch_plan **out);
tilec_error *tilec_launch_plan_run(const tilec_launch_plan *plan, void *stream);
void tilec_launch_plan_destroy(tilec_launch_plan *plan);

/* Autotuning: the program of `kernel` compiled with the best values of its
 * @tune space for these launch arguments (device memory on `device`; every
 * configuration runs on them, so outputs are clobbered), chosen by timing
 * each on the GPU, or taken from the tuning database (the same one as
 * `tilec tune`; `database_path` NULL: $TILEC_TUNING_DB, else tuning.db in
 * the compile cache directory; "": in memory only). A kernel without @tune
 * compiles as usual. `out` (may be NULL: only the choice is wanted)
 * receives that program, with the tuned kernel alone. `choice_json` (may be
 * NULL) receives, freed with
 * tilec_string_destroy:
 *   {"defines": {"BLOCK": "512"}, "microseconds": 12.5,
 *    "from_database": false, "database": "/path/tuning.db",
 *    "trials": [{"config": "BLOCK=512", "microseconds": 12.5}, ...],
 *    "heuristic": {"ROWS": 4}, "heuristic_microseconds": 14.0}
 * (a trial's microseconds are negative where it could not run). Parameters
 * outside the @tune space take what the kernel's @heuristic chooses for
 * these arguments ("heuristic", all of its values); "heuristic_microseconds"
 * is the time of the kernel a plain launch runs, measured beside the trials
 * (-1: not measured, e.g. a choice from the database, or no @heuristic). */
tilec_error *tilec_tune(const char *source, size_t size,
                        const tilec_compile_options *options, const char *kernel,
                        const tilec_arg *args, size_t num_args, int device,
                        const char *database_path, tilec_program **out,
                        char **choice_json);

/* The program as a self-contained C++ header for ahead-of-time use (the
 * PTX embedded, one typed launch function per kernel, as `tilec
 * -emit=header`), in namespace `namespace_name` (NULL: from the file name,
 * "saxpy.tile": saxpy_kernels; a name that is not a C++ name is an error),
 * naming `source_name` (NULL: the program's file name) in its comment.
 * Freed with tilec_string_destroy. */
tilec_error *tilec_program_header(const tilec_program *program, const char *namespace_name,
                                  const char *source_name, char **header);

/* Where `print` in kernels run by tilec_interpret writes: `callback` gets
 * each line (with its newline) and `user`; NULL restores the default, the
 * process's stdout. Process-wide; calls are serialized. (GPU printf output
 * is written by the CUDA driver to the process's stdout at the next
 * synchronization.) */
typedef void (*tilec_print_callback)(const char *text, size_t size, void *user);
void tilec_set_print_callback(tilec_print_callback callback, void *user);

tilec_error *tilec_malloc(size_t bytes, uint64_t *ptr);
tilec_error *tilec_free(uint64_t ptr);
tilec_error *tilec_memcpy_htod(uint64_t dst, const void *src, size_t bytes);
tilec_error *tilec_memcpy_dtoh(void *dst, uint64_t src, size_t bytes);
tilec_error *tilec_synchronize(void);

#ifdef __cplusplus
}
#endif

#endif /* TILEC_TILEC_H */
