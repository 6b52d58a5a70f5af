//===- Stack.cpp - Running the compiler on a stack of its own -------------===//

#include "tilec/Stack.h"

#include <exception>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define TILEC_HAVE_PTHREAD 1
#endif

using namespace tilec;

void tilec::runOnCompilerStack(llvm::function_ref<void()> fn) {
#ifdef TILEC_HAVE_PTHREAD

  struct Call {
    llvm::function_ref<void()> fn;
    std::exception_ptr error;
  } call{fn, nullptr};
  auto entry = [](void *p) -> void * {
    auto *c = static_cast<Call *>(p);
    try {
      c->fn();
    } catch (...) {
      c->error = std::current_exception();
    }
    return nullptr;
  };
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) == 0) {
    pthread_t thread;
    bool started = pthread_attr_setstacksize(&attr, kCompilerStackBytes) == 0 &&
                   pthread_create(&thread, &attr, entry, &call) == 0;
    pthread_attr_destroy(&attr);
    if (started) {
      pthread_join(thread, nullptr);
      if (call.error)
        std::rethrow_exception(call.error);
      return;
    }
  }
#endif
  fn(); // no thread: the caller's stack (the depth limits still hold)
}
