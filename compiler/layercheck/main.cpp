// Links one compiler layer whole, with only the layers and libraries its
// CMake target may use (compiler/CMakeLists.txt): a call from a layer into
// one above it is an undefined symbol here, so the build fails.
int main() { return 0; }
