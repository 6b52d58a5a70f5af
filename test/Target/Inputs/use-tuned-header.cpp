// Built against a generated AOT header whose kernel `scale` has a @tuned
// table over its @heuristic (test/Target/header-tuned.tile): the values it
// chooses for four sizes, without a GPU (only the shapes are read).
#include <cstdio>

int main() {
  for (int64_t n : {500, 640, 5000, 8192}) {
    tilec::TensorArg x = tilec::TensorArg::contiguous(0, {n}, tilec::ScalarType::F32);
    std::printf("n=%lld", static_cast<long long>(n));
    for (const auto &[name, value] : header_tuned_kernels::scale_choice(2.0f, x))
      std::printf(" %s=%lld", name.c_str(), static_cast<long long>(value));
    std::printf("\n");
  }
  return 0;
}
