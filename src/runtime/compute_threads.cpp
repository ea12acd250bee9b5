#include "lengen/compute_threads.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "lengen/errors.h"

namespace lengen {

namespace {

// Whether the process may hold `count` threads at once (ulimits, a container's pids limit):
// LibTorch's pools would wait forever for a thread that cannot start.
bool can_hold_threads(int count) {
  std::mutex mutex;
  std::condition_variable released;
  bool done = false;
  std::vector<std::thread> threads;
  bool all = true;
  try {
    threads.reserve(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      threads.emplace_back([&] {
        std::unique_lock<std::mutex> lock(mutex);
        released.wait(lock, [&] { return done; });
      });
    }
  } catch (const std::system_error&) {
    all = false;
  } catch (const std::bad_alloc&) {
    all = false;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  released.notify_all();
  for (std::thread& thread : threads) thread.join();
  return all;
}

}  // namespace

void set_compute_threads(int threads) {
  // LibTorch keeps two pools of `threads` - 1 each (OpenMP's and the one of its own), alive at once.
  if (threads > 1 && !can_hold_threads(2 * (threads - 1))) {
    throw UserError("cannot start " + std::to_string(threads) +
                    " compute threads: this process may not hold that many (its memory or process limit, "
                    "ulimit -v / -u); use fewer (train.threads, --threads)");
  }
  // A config written on a larger machine: more threads than cores take turns on them, slower than fewer.
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0 && static_cast<unsigned>(threads) > cores)
    spdlog::warn("{} compute threads on {} cores: they share the cores and run slower than {}", threads, cores, cores);
  torch::set_num_threads(threads);
  // Looked up at run time: LibTorch may be linked against another BLAS, or none.
  using SetThreads = void (*)(int);
  if (auto set_openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    set_openblas(threads);
  }
}

}  // namespace lengen
