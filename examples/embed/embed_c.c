/* JIT embedding in C through tilec.h: compile, inspect the signature, run. */
#include "tilec/tilec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static char *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  *size = fread(buf, 1, (size_t)n, f);
  buf[*size] = 0;
  fclose(f);
  return buf;
}

static int fail(tilec_error *e) {
  fprintf(stderr, "%s\n", tilec_error_message(e));
  tilec_error_destroy(e);
  return 1;
}

int main(int argc, char **argv) {
  size_t size;
  char *source = readFile(argc > 1 ? argv[1] : SAXPY_TILE, &size);
  if (!source)
    return 1;
  tilec_compile_options options;
  tilec_compile_options_init(&options);
  options.file_name = "saxpy.tile";
  const char *names[] = {"BLOCK"}, *values[] = {"512"};
  options.define_names = names;
  options.define_values = values;
  options.num_defines = 1;

  tilec_program *program;
  tilec_error *e = tilec_compile(source, size, &options, &program);
  free(source);
  if (e)
    return fail(e);
  for (size_t k = 0; k < tilec_program_num_kernels(program); ++k) {
    printf("kernel %s: %u threads, grid (%s), params:", tilec_program_kernel_name(program, k),
           tilec_program_kernel_threads(program, k), tilec_program_kernel_grid(program, k, 0));
    for (size_t p = 0; p < tilec_program_kernel_num_params(program, k); ++p) {
      tilec_param_info info;
      tilec_program_kernel_param(program, k, p, &info);
      printf(" %s:%s%s", info.name, info.is_tensor ? "tensor " : "", info.dtype);
    }
    printf("\n");
  }

  if (tilec_device_count() == 0) {
    printf("no GPU: skipping the run\n");
    tilec_program_destroy(program);
    return 0;
  }
  enum { N = 100001 };
  static float x[N], y[N], out[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)(i % 7);
    y[i] = 1.0f;
  }
  uint64_t dx, dy;
  tilec_module *module;
  tilec_kernel *kernel;
  if ((e = tilec_malloc(sizeof x, &dx)) || (e = tilec_malloc(sizeof y, &dy)) ||
      (e = tilec_memcpy_htod(dx, x, sizeof x)) || (e = tilec_memcpy_htod(dy, y, sizeof y)) ||
      (e = tilec_module_load(program, &module)) ||
      (e = tilec_module_get_kernel(module, "saxpy", &kernel)))
    return fail(e);
  int64_t n = N;
  tilec_arg args[3] = {tilec_arg_float(3.0), tilec_arg_tensor(dx, 1, &n),
                       tilec_arg_tensor(dy, 1, &n)};
  if ((e = tilec_launch(kernel, args, 3, NULL)) || (e = tilec_synchronize()) ||
      (e = tilec_memcpy_dtoh(out, dy, sizeof out)))
    return fail(e);
  /* A wrong argument is an error object, not a crash. */
  e = tilec_launch(kernel, args, 2, NULL);
  printf("expected error: %s\n", e ? tilec_error_message(e) : "(none!)");
  if (!e)
    return 1;
  tilec_error_destroy(e);
  for (int i = 0; i < N; ++i)
    if (fabsf(out[i] - (3.0f * x[i] + 1.0f)) > 1e-5f) {
      printf("mismatch at %d\n", i);
      return 1;
    }
  printf("saxpy through the C API matched the host reference\n");
  tilec_free(dx);
  tilec_free(dy);
  tilec_module_destroy(module);
  tilec_program_destroy(program);
  return 0;
}
