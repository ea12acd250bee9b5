#include "lengen/process_group.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fcntl.h>
#include <spdlog/fmt/fmt.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include "lengen/errors.h"

#ifdef LENGEN_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#endif

namespace lengen {

namespace {

// Environment variables: integers must be whole, in range, and name themselves on error.
std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string required_env(const char* name, const std::string& why) {
  auto value = env(name);
  if (!value) throw UserError("environment variable " + std::string(name) + " is not set (" + why + ")");
  return *value;
}

int parse_env_int(const char* name, const std::string& text, int low, int high) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    throw UserError("environment variable " + std::string(name) + "='" + text + "' is not an integer in [" +
                    std::to_string(low) + ", " + std::to_string(high) + "]");
  }
  return value;
}

std::chrono::milliseconds parse_env_seconds(const char* name, const std::string& text) {
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  // A week at most: a larger count overflows the clock's deadline arithmetic into the past.
  constexpr double kMaxSeconds = 7 * 24 * 3600;
  if (end != text.c_str() + text.size() || !std::isfinite(seconds) || seconds <= 0 || seconds > kMaxSeconds) {
    throw UserError("environment variable " + std::string(name) + "='" + text +
                    "' is not a number of seconds above 0 and at most 604800 (a week)");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(seconds * 1000)));
}

#ifdef LENGEN_HAVE_GLOO

// c10d's process groups derive from Backend since LibTorch 2.0, from ProcessGroup before.
#if TORCH_VERSION_MAJOR >= 2
using Collectives = c10d::Backend;
#else
using Collectives = c10d::ProcessGroup;
#endif

// The message without LibTorch's C++ backtrace, which would bury the one line that matters.
std::string short_message(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error))
    return c10_error->what_without_backtrace();
  return error.what();
}

double seconds(std::chrono::milliseconds duration) { return duration.count() / 1000.0; }

// Indexes of the tensors that share one flat buffer (one per dtype and device), in the callers'
// order: every rank passes the same tensors, so every rank builds the same buckets.
std::vector<std::vector<size_t>> make_buckets(const std::vector<torch::Tensor>& tensors) {
  std::map<std::pair<int, std::string>, std::vector<size_t>> buckets;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].defined()) continue;
    buckets[{static_cast<int>(tensors[i].scalar_type()), tensors[i].device().str()}].push_back(i);
  }
  std::vector<std::vector<size_t>> list;
  for (auto& [key, indexes] : buckets) list.push_back(std::move(indexes));
  return list;
}

class C10dGroup final : public DataParallel {
 public:
  C10dGroup(const ProcessGroupOptions& options, c10::intrusive_ptr<c10d::Store> store,
            c10::intrusive_ptr<Collectives> collectives, torch::Device buffer_device)
      : options_(options),
        store_(std::move(store)),
        collectives_(std::move(collectives)),
        buffer_device_(buffer_device) {}

  int rank() const override { return options_.rank; }
  int world_size() const override { return options_.world_size; }

  void broadcast(std::vector<torch::Tensor>& tensors) override {
    run_bucketed(tensors, "broadcast", [this](std::vector<torch::Tensor>& flat) {
      c10d::BroadcastOptions broadcast_options;
      broadcast_options.rootRank = 0;
      return collectives_->broadcast(flat, broadcast_options);
    });
  }

  void all_reduce_sum(std::vector<torch::Tensor>& tensors) override {
    run_bucketed(tensors, "all_reduce_sum", [this](std::vector<torch::Tensor>& flat) {
      c10d::AllreduceOptions reduce_options;
      reduce_options.reduceOp = c10d::ReduceOp::SUM;
      return collectives_->allreduce(flat, reduce_options);
    });
  }

 private:
  // Flattens each bucket into one buffer, starts every bucket's collective before waiting on
  // any (Gloo runs them on its worker threads), then copies the results back in place.
  // Undefined tensors (a parameter without a gradient) are skipped.
  template <typename Collective>
  void run_bucketed(std::vector<torch::Tensor>& tensors, const char* what, Collective collective) {
    torch::NoGradGuard no_grad;
    const auto buckets = make_buckets(tensors);
    std::vector<std::vector<torch::Tensor>> flats(buckets.size());
    try {
      std::vector<decltype(collective(flats[0]))> works;
      for (size_t b = 0; b < buckets.size(); ++b) {
        std::vector<torch::Tensor> pieces;
        for (size_t i : buckets[b]) {
          pieces.push_back(tensors[i].reshape({-1}).to(buffer_device_));
        }
        flats[b] = {torch::cat(pieces)};
        works.push_back(collective(flats[b]));
      }
      for (auto& work : works) work->wait();
    } catch (const std::exception& error) {
      throw DataParallelError(std::string(what) + " failed on rank " + std::to_string(options_.rank) +
                              " of " + std::to_string(options_.world_size) + ": " + short_message(error) +
                              " (a worker died, or none answered within LENGEN_DIST_TIMEOUT=" +
                              fmt::format("{:g}", seconds(options_.timeout)) + " s)");
    }
    for (size_t b = 0; b < buckets.size(); ++b) {
      int64_t offset = 0;
      for (size_t i : buckets[b]) {
        auto& tensor = tensors[i];
        tensor.copy_(flats[b][0].narrow(0, offset, tensor.numel()).view(tensor.sizes()));
        offset += tensor.numel();
      }
    }
  }

  ProcessGroupOptions options_;
  c10::intrusive_ptr<c10d::Store> store_;  // rank 0 serves the rendezvous for as long as the group lives
  c10::intrusive_ptr<Collectives> collectives_;
  // Gloo reduces host buffers (any Gloo build can), NCCL device ones; tensors elsewhere
  // (e.g. a CUDA gradient under Gloo) travel through a copy.
  torch::Device buffer_device_;
};

// Gloo binds to one interface: GLOO_SOCKET_IFNAME as in PyTorch, the loopback for a
// single-machine job, else the address this machine's hostname resolves to.
std::shared_ptr<::gloo::transport::Device> gloo_device(const std::string& master_addr) {
  if (auto interface = env("GLOO_SOCKET_IFNAME"))
    return c10d::ProcessGroupGloo::createDeviceForInterface(*interface);
  if (master_addr == "127.0.0.1" || master_addr == "localhost" || master_addr == "::1") {
    return c10d::ProcessGroupGloo::createDeviceForHostname(master_addr);
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

// c10d logs each failed connection attempt to stderr, burying lengen's one message; only the main
// thread runs while a rank joins, so silencing stderr then hides nothing else.
class QuietStderr {
 public:
  QuietStderr() {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved_ >= 0 && null_fd >= 0) ::dup2(null_fd, STDERR_FILENO);
    if (null_fd >= 0) ::close(null_fd);
  }
  ~QuietStderr() {
    std::fflush(stderr);
    if (saved_ < 0) return;
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
  }
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  int saved_ = -1;
};

// Why the ranks could not meet, naming the setting to change rather than c10d's sockets: a
// problem of the launch, so a user error (exit 2).
UserError setup_error(const std::string& what, const std::exception& error,
                      const ProcessGroupOptions& options) {
  const std::string text = short_message(error);
  auto says = [&](const char* phrase) { return text.find(phrase) != std::string::npos; };
  std::string reason;
  if (says("Address already in use")) {
    reason = fmt::format("MASTER_PORT {} is in use by another program", options.master_port);
  } else if (says("resolve") || says("getaddrinfo") || says("Name or service not known")) {
    reason = fmt::format("MASTER_ADDR '{}' does not resolve to an address", options.master_addr);
  } else if (says("imed out") || says("imeout")) {
    reason = fmt::format("no answer within {:g} s (LENGEN_DIST_TIMEOUT)", seconds(options.timeout));
  } else {
    reason = text.substr(0, text.find('\n'));
  }
  // Most failed rendezvous are a rank started by hand without its peers.
  return UserError(fmt::format(
      "data-parallel setup: rank {} of {} {}: {} (all {} ranks must run, with the same MASTER_ADDR and "
      "MASTER_PORT; `lengen launch --nproc N -- train ...` starts them)",
      options.rank, options.world_size, what, reason, options.world_size));
}

c10::intrusive_ptr<c10d::Store> connect_store(const ProcessGroupOptions& options) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<std::uint16_t>(options.master_port);
  store_options.isServer = options.rank == 0;
  store_options.numWorkers = static_cast<std::size_t>(options.world_size);
  store_options.waitWorkers = true;
  store_options.timeout = options.timeout;
  try {
    const QuietStderr quiet;
    return c10::make_intrusive<c10d::TCPStore>(options.master_addr, store_options);
  } catch (const std::exception& error) {
    throw setup_error(
        fmt::format("could not meet the others at {}:{}", options.master_addr, options.master_port), error,
        options);
  }
}

// Ranks started with different configs would train one averaged model under rank 0's name: a
// mismatch stops both sides with a line naming the difference, before any tensor moves.
void agree_with_rank_zero(c10d::Store& store, const ProcessGroupOptions& options) {
  if (options.agreement.empty()) return;
  const auto bytes = [](const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); };
  const auto text = [](const std::vector<uint8_t>& data) { return std::string(data.begin(), data.end()); };
  const std::string kOk = "ok";
  const auto refusal = [&options](int rank, const std::string& difference) {
    return UserError(
        fmt::format("data-parallel setup: rank {} of {} was started with other settings than "
                    "rank 0 ({}); start every rank with the same config, --set, --data and "
                    "--resume (`lengen launch --nproc N -- train ...` does)",
                    rank, options.world_size, difference));
  };
  try {
    if (options.rank == 0) {
      store.set("lengen/agreement", bytes(options.agreement));
      for (int rank = 1; rank < options.world_size; ++rank) {
        const std::string verdict = text(store.get("lengen/verdict/" + std::to_string(rank)));
        if (verdict != kOk) throw refusal(rank, verdict);
      }
      return;
    }
    const std::string rank_zero = text(store.get("lengen/agreement"));
    std::string verdict = kOk;
    if (rank_zero != options.agreement) {
      verdict =
          options.difference ? options.difference(rank_zero, options.agreement, options.rank) : "they differ";
    }
    store.set("lengen/verdict/" + std::to_string(options.rank), bytes(verdict));
    if (verdict != kOk) throw refusal(options.rank, verdict);
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& error) {
    throw setup_error("could not compare its settings with rank 0's", error, options);
  }
}

c10::intrusive_ptr<Collectives> make_collectives(const ProcessGroupOptions& options,
                                                 const c10::intrusive_ptr<c10d::Store>& store) {
#ifdef USE_C10D_NCCL
  if (options.device == torch::kCUDA) {
    auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
    nccl_options->timeout = options.timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, options.rank, options.world_size, nccl_options);
  }
#endif
  auto gloo_options = c10d::ProcessGroupGloo::Options::create(options.timeout);
  gloo_options->devices.push_back(gloo_device(options.master_addr));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, options.rank, options.world_size, gloo_options);
}

#endif  // LENGEN_HAVE_GLOO

}  // namespace

std::unique_ptr<DataParallel> join_process_group(const ProcessGroupOptions& options) {
#ifdef LENGEN_HAVE_GLOO
  if (options.device == torch::kCUDA && torch::cuda::is_available()) {
    // Each rank of a machine on its own GPU; the trainer's "cuda" then means this one.
    const auto gpu = static_cast<c10::DeviceIndex>(options.local_rank % torch::cuda::device_count());
    c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->setDevice(c10::Device(c10::DeviceType::CUDA, gpu));
  }
  auto store = connect_store(options);
  agree_with_rank_zero(*store, options);
  c10::intrusive_ptr<Collectives> collectives;
  try {
    const QuietStderr quiet;
    collectives = make_collectives(options, store);
  } catch (const std::exception& error) {
    throw setup_error("could not connect to the others", error, options);
  }
  torch::Device buffer_device = torch::kCPU;
#ifdef USE_C10D_NCCL
  if (options.device == torch::kCUDA) buffer_device = torch::kCUDA;
#endif
  return std::make_unique<C10dGroup>(options, std::move(store), std::move(collectives), buffer_device);
#else
  (void)options;
  throw UserError(
      "data-parallel training needs Gloo's headers (libgloo-dev, see scripts/setup.sh) at build time; "
      "this lengen was built without them, so run a single process (unset WORLD_SIZE)");
#endif
}

std::optional<ProcessGroupOptions> process_group_options_from_env(torch::DeviceType device) {
  constexpr int kMaxRanks = 1 << 20;
  auto world_text = env("WORLD_SIZE");
  if (!world_text) return std::nullopt;
  ProcessGroupOptions options;
  options.world_size = parse_env_int("WORLD_SIZE", *world_text, 1, kMaxRanks);
  if (options.world_size == 1) {
    // One process is rank 0 or nothing: RANK=1 of 1 is a launch mistake, not a second run.
    if (auto rank = env("RANK")) parse_env_int("RANK", *rank, 0, 0);
    return std::nullopt;
  }
  const std::string why = "WORLD_SIZE=" + *world_text + " asks for data-parallel training";
  options.rank = parse_env_int("RANK", required_env("RANK", why), 0, options.world_size - 1);
  if (auto local_rank = env("LOCAL_RANK"))
    options.local_rank = parse_env_int("LOCAL_RANK", *local_rank, 0, kMaxRanks);
  options.master_addr = required_env("MASTER_ADDR", why);
  options.master_port = parse_env_int("MASTER_PORT", required_env("MASTER_PORT", why), 1, 65535);
  if (auto timeout = env("LENGEN_DIST_TIMEOUT"))
    options.timeout = parse_env_seconds("LENGEN_DIST_TIMEOUT", *timeout);
  options.device = device;
  return options;
}

}  // namespace lengen
