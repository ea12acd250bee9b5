#include "lengen/compute_threads.h"

#include <dlfcn.h>
#include <torch/torch.h>

namespace lengen {

void set_compute_threads(int threads) {
  torch::set_num_threads(threads);
  // Looked up at run time: LibTorch may be linked against another BLAS, or none.
  using SetThreads = void (*)(int);
  if (auto set_openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    set_openblas(1);
  }
}

}  // namespace lengen
