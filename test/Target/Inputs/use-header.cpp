// Built against a generated AOT header (included on the command line) and
// the runtime library only.
#include <cstdio>

int main() {
  for (const tilec::KernelSignature &sig : header_kernels::signatures()) {
    std::printf("kernel %s grid ", sig.name.c_str());
    for (size_t i = 0; i < sig.grid.size(); ++i)
      std::printf("%s%s", i ? ", " : "", sig.grid[i].str(sig.params).c_str());
    std::printf("\n");
  }
  if (!tilec::driverAvailable()) {
    std::printf("no GPU\n");
    return 0;
  }
  return 0;
}
