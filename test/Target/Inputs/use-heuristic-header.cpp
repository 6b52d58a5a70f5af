// Built against a generated AOT header whose kernel `scale` has a
// @heuristic (test/Target/header-heuristic.tile): the values it chooses for
// two sizes, without a GPU (only the shapes are read).
#include <cstdio>

int main() {
  for (int64_t n : {500, 5000}) {
    tilec::TensorArg x = tilec::TensorArg::contiguous(0, {n}, tilec::ScalarType::F32);
    for (const auto &[name, value] : header_heuristic_kernels::scale_choice(2.0f, x))
      std::printf("n=%lld %s=%lld\n", static_cast<long long>(n), name.c_str(),
                  static_cast<long long>(value));
  }
  if (!tilec::driverAvailable())
    std::printf("no GPU\n");
  return 0;
}
