// Data-parallel training on c10d over loopback: the bucketed collectives sum and copy the
// right values, 2 ranks train exactly like 1 process with the same global batch, torchrun's
// variables are checked, and a dead worker stops `lengen launch` promptly.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lengen/checkpoint.h"
#include "lengen/config_io.h"
#include "lengen/decoder.h"
#include "lengen/errors.h"
#include "lengen/process_group.h"
#include "lengen/rank_agreement.h"
#include "lengen/run_folder.h"
#include "lengen/sequence.h"
#include "lengen/task.h"
#include "lengen/trainer.h"
#include "temp_folder.h"
#include "tiny_copy_config.h"

namespace fs = std::filesystem;

namespace lengen {
namespace {

int free_port() {
  const int socket_fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(::bind(socket_fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(::getsockname(socket_fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ::close(socket_fd);
  return ntohs(address.sin_port);
}

// Runs body(group) on `world` ranks, one thread each, all in this process.
void on_ranks(int world, const std::function<void(DataParallel&)>& body) {
  const int port = free_port();
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&, rank] {
      ProcessGroupOptions options;
      options.rank = rank;
      options.world_size = world;
      options.master_port = port;
      options.timeout = std::chrono::seconds(20);
      auto group = join_process_group(options);
      body(*group);
    });
  }
  for (auto& thread : threads) thread.join();
}

// A tensor whose values depend on rank and position, so a wrong offset or a missing rank shows.
torch::Tensor rank_values(int rank, torch::IntArrayRef shape, torch::Dtype dtype) {
  const int64_t n = c10::multiply_integers(shape);
  return (torch::arange(n, torch::kDouble) * 0.5 + 100.0 * (rank + 1)).to(dtype).reshape(shape);
}

TEST(ProcessGroup, BucketedAllReduceSumsMixedShapesAndDtypes) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {3}, {2, 5}, {4, 3, 2}, {1000}, {7}};
  const std::vector<torch::Dtype> dtypes = {torch::kFloat, torch::kFloat, torch::kDouble,
                                            torch::kFloat, torch::kFloat, torch::kLong};
  constexpr int kWorld = 2;
  on_ranks(kWorld, [&](DataParallel& group) {
    std::vector<torch::Tensor> tensors;
    for (size_t i = 0; i < shapes.size(); ++i) tensors.push_back(rank_values(group.rank(), shapes[i], dtypes[i]));
    tensors.insert(tensors.begin() + 2, torch::Tensor());  // a parameter without a gradient
    group.all_reduce_sum(tensors);
    EXPECT_FALSE(tensors[2].defined());
    tensors.erase(tensors.begin() + 2);
    for (size_t i = 0; i < shapes.size(); ++i) {
      auto expected = rank_values(0, shapes[i], dtypes[i]) + rank_values(1, shapes[i], dtypes[i]);
      EXPECT_EQ(tensors[i].sizes(), expected.sizes());
      EXPECT_EQ(tensors[i].scalar_type(), dtypes[i]);
      EXPECT_TRUE(torch::equal(tensors[i], expected)) << "tensor " << i << " on rank " << group.rank();
    }
  });
}

TEST(ProcessGroup, BroadcastCopiesRankZerosTensors) {
  on_ranks(
      2,
      [](DataParallel& group) {
        auto weight = rank_values(group.rank(), {5, 4}, torch::kFloat).requires_grad_();
        auto bias = rank_values(group.rank(), {4}, torch::kFloat).requires_grad_();
        std::vector<torch::Tensor> tensors{weight, bias};
        group.broadcast(tensors);
        EXPECT_TRUE(torch::equal(weight, rank_values(0, {5, 4}, torch::kFloat)));
        EXPECT_TRUE(torch::equal(bias, rank_values(0, {4}, torch::kFloat)));
      });
}

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::vector<std::pair<std::string, std::optional<std::string>>>& values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      set(name, value);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) set(name, value);
  }

 private:
  static void set(const std::string& name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

std::string env_error(const std::vector<std::pair<std::string, std::optional<std::string>>>& values) {
  ScopedEnv env(values);
  try {
    process_group_options_from_env();
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

TEST(ProcessGroup, ReadsTorchrunsVariables) {
  {
    ScopedEnv env({{"WORLD_SIZE", std::nullopt}});
    EXPECT_FALSE(process_group_options_from_env());
  }
  {
    ScopedEnv env({{"WORLD_SIZE", "1"}, {"RANK", "0"}});
    EXPECT_FALSE(process_group_options_from_env());
  }
  {
    // A single process that calls itself rank 1 was launched wrongly: it is not a second rank 0.
    ScopedEnv env({{"WORLD_SIZE", "1"}, {"RANK", "1"}});
    EXPECT_THROW(process_group_options_from_env(), UserError);
  }
  {
    ScopedEnv env({{"WORLD_SIZE", "4"},
                   {"RANK", "3"},
                   {"LOCAL_RANK", "1"},
                   {"MASTER_ADDR", "node7"},
                   {"MASTER_PORT", "29501"},
                   {"LENGEN_DIST_TIMEOUT", "2.5"}});
    auto options = process_group_options_from_env();
    ASSERT_TRUE(options);
    EXPECT_EQ(options->world_size, 4);
    EXPECT_EQ(options->rank, 3);
    EXPECT_EQ(options->local_rank, 1);
    EXPECT_EQ(options->master_addr, "node7");
    EXPECT_EQ(options->master_port, 29501);
    EXPECT_EQ(options->timeout, std::chrono::milliseconds(2500));
  }
  const std::vector<std::pair<std::string, std::optional<std::string>>> good = {
      {"WORLD_SIZE", "2"},      {"RANK", "1"},
      {"LOCAL_RANK", "1"},      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", "29500"}, {"LENGEN_DIST_TIMEOUT", std::nullopt}};
  auto with = [&](const std::string& name, std::optional<std::string> value) {
    auto values = good;
    for (auto& entry : values) {
      if (entry.first == name) entry.second = value;
    }
    return values;
  };
  EXPECT_EQ(env_error(good), "");
  EXPECT_NE(env_error(with("WORLD_SIZE", "two")).find("WORLD_SIZE"), std::string::npos);
  EXPECT_NE(env_error(with("RANK", "2")).find("RANK='2'"), std::string::npos);
  EXPECT_NE(env_error(with("RANK", std::nullopt)).find("RANK is not set"), std::string::npos);
  EXPECT_NE(env_error(with("LOCAL_RANK", "-1")).find("LOCAL_RANK"), std::string::npos);
  EXPECT_NE(env_error(with("MASTER_ADDR", std::nullopt)).find("MASTER_ADDR"), std::string::npos);
  EXPECT_NE(env_error(with("MASTER_PORT", "70000")).find("MASTER_PORT"), std::string::npos);
  EXPECT_NE(env_error(with("MASTER_PORT", "29500x")).find("MASTER_PORT"), std::string::npos);
  EXPECT_NE(env_error(with("LENGEN_DIST_TIMEOUT", "0")).find("LENGEN_DIST_TIMEOUT"), std::string::npos);
}

// Ranks that cannot meet are a problem of the launch: a user error naming the setting to change,
// in one line, not c10d's socket log.
TEST(ProcessGroup, RendezvousTimesOutWithAClearError) {
  ProcessGroupOptions options;
  options.rank = 0;
  options.world_size = 2;
  options.master_port = free_port();
  options.timeout = std::chrono::milliseconds(500);
  const auto start = std::chrono::steady_clock::now();
  try {
    join_process_group(options);
    FAIL() << "joined a group whose other rank never came";
  } catch (const UserError& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find("rank 0 of 2 could not meet the others"), std::string::npos) << text;
    EXPECT_NE(text.find("no answer within 0.5 s (LENGEN_DIST_TIMEOUT)"), std::string::npos) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(ProcessGroup, APortInUseIsNamed) {
  const int socket_fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  ASSERT_GE(socket_fd, 0);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_any;
  socklen_t length = sizeof(address);
  ASSERT_EQ(::bind(socket_fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(::listen(socket_fd, 1), 0);
  ASSERT_EQ(::getsockname(socket_fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ProcessGroupOptions options;
  options.rank = 0;
  options.world_size = 2;
  options.master_port = ntohs(address.sin6_port);
  options.timeout = std::chrono::milliseconds(500);
  try {
    join_process_group(options);
    FAIL() << "rank 0 served on a port another program holds";
  } catch (const UserError& error) {
    EXPECT_NE(
        std::string(error.what())
            .find("MASTER_PORT " + std::to_string(options.master_port) + " is in use by another program"),
        std::string::npos)
        << error.what();
  }
  ::close(socket_fd);
}

Config tiny_data_parallel_config() {
  Config config = testing::tiny_copy_config();
  config.train.steps = 24;
  config.train.warmup = 4;
  config.train.log_every = 1;
  config.train.eval_every = 1000;  // validation and the checkpoint come at the last step
  config.train.checkpoint_every = 1000;
  config.train.val_samples = 16;
  config.train.threads = 1;
  config.eval.lengths = {6};
  config.eval.samples = 8;
  config.eval.attention_stats = false;
  return config;
}

class DataParallelTraining : public testing::TempFolderTest {
 protected:
  DataParallelTraining() : TempFolderTest("lengen_dp") {}

  std::string write_config(const Config& config) {
    const std::string path = (root_ / "config.json").string();
    std::ofstream(path) << config_to_json(config).dump(2);
    return path;
  }

  // Runs `lengen ARGS` with `env` prefixed; returns the exit code, keeping stderr in err_.
  int run_cli(const std::string& args, const std::string& env = "") {
    const fs::path err = root_ / "stderr.txt";
    const std::string command = env + " " + LENGEN_CLI_PATH + " " + args + " > " +
                                (root_ / "stdout.txt").string() + " 2> " + err.string();
    const int status = std::system(command.c_str());
    std::ifstream in(err);
    err_ = std::string(std::istreambuf_iterator<char>(in), {});
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string err_;
};

// A rank started by hand without its peers: one line that says what to do, nothing of
// c10d's own connection log, and no run folder.
TEST_F(DataParallelTraining, ALoneRankSaysInOneLineThatItsPeersAreMissing) {
  const std::string run_dir = (root_ / "lone").string();
  const std::string env =
      "WORLD_SIZE=2 RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port()) +
      " LENGEN_DIST_TIMEOUT=1";
  EXPECT_EQ(run_cli("train " + write_config(tiny_data_parallel_config()) + " --out " + run_dir, env), 2)
      << err_;
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
  EXPECT_NE(err_.find("rank 1 of 2 could not meet the others"), std::string::npos) << err_;
  EXPECT_NE(err_.find("lengen launch --nproc N"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(run_dir));
}

// Ranks started by hand with different settings (here another learning rate) would be averaged
// into one model labelled with rank 0's config: both ranks refuse at setup, naming the key, and
// no run folder is made.
TEST_F(DataParallelTraining, RanksStartedWithOtherSettingsAreRefusedAtSetup) {
  const std::string config = write_config(tiny_data_parallel_config());
  const std::string run_dir = (root_ / "run").string();
  const std::string env = "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port()) +
                          " LENGEN_DIST_TIMEOUT=30";
  const auto rank = [&](int number, const std::string& extra) {
    const std::string name = (root_ / ("rank" + std::to_string(number))).string();
    return "(" + env + " RANK=" + std::to_string(number) + " " + LENGEN_CLI_PATH + " train " + config +
           " --out " + run_dir + extra + " > /dev/null 2> " + name + ".err; echo $? > " + name + ".rc)";
  };
  ASSERT_EQ(std::system((rank(1, " --set train.lr=0.002") + " & " + rank(0, "") + "; wait").c_str()), 0);
  const auto text = [&](const std::string& name) {
    std::ifstream in(root_ / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string expected =
      "rank 1 of 2 was started with other settings than rank 0 (config key train.lr: 0.003 on rank 0, "
      "0.002 on rank 1)";
  for (const std::string name : {"rank0", "rank1"}) {
    SCOPED_TRACE(name);
    const std::string err = text(name + ".err");
    EXPECT_EQ(text(name + ".rc"), "2\n") << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find(expected), std::string::npos) << err;
  }
  EXPECT_FALSE(fs::exists(run_dir));
}

// What ranks compare: the thread count is each machine's own; another learning rate or --resume on
// one rank only are named with the rank that differs.
TEST_F(DataParallelTraining, RankAgreementIgnoresThreadsAndNamesTheRank) {
  const Config config = tiny_data_parallel_config();
  Config threads = config;
  threads.train.threads = 2;
  EXPECT_EQ(rank_agreement(config, "", false), rank_agreement(threads, "", false));
  Config lr = config;
  lr.train.lr = 0.002;
  EXPECT_EQ(rank_agreement_difference(rank_agreement(config, "", false), rank_agreement(lr, "", false), 3),
            "config key train.lr: 0.003 on rank 0, 0.002 on rank 3");
  EXPECT_EQ(rank_agreement_difference(rank_agreement(config, "", true), rank_agreement(config, "", false), 1),
            "resume: true on rank 0, false on rank 1");
}

std::vector<double> logged_loss_values(const std::string& path) {
  std::vector<double> losses;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto record = nlohmann::json::parse(line);
    if (record.contains("loss")) losses.push_back(record["loss"].get<double>());
  }
  return losses;
}

Decoder final_model(const Config& config, const std::string& run_dir) {
  auto task = make_task(config.task.name, config.task.params, config.task.seed);
  Decoder model(config.model, vocab_size(task->num_symbols()));
  load_checkpoint(RunFolder(run_dir).latest_checkpoint(), model, nullptr);
  return model;
}

TEST_F(DataParallelTraining, TwoRanksTrainLikeOneProcessWithTheSameGlobalBatch) {
  const Config config = tiny_data_parallel_config();
  const std::string single_dir = (root_ / "single").string();
  TrainOptions single;
  single.run_dir = single_dir;
  train(config, single);

  const std::string parallel_dir = (root_ / "parallel").string();
  ASSERT_EQ(run_cli("launch --nproc 2 -- train " + write_config(config) + " --out " + parallel_dir,
                    "LENGEN_DIST_TIMEOUT=30"),
            0)
      << err_;

  const auto single_losses = logged_loss_values(RunFolder(single_dir).log_path());
  const auto parallel_losses = logged_loss_values(RunFolder(parallel_dir).log_path());
  ASSERT_EQ(single_losses.size(), static_cast<size_t>(config.train.steps));
  ASSERT_EQ(parallel_losses.size(), single_losses.size());
  double worst_loss = 0.0;
  for (size_t i = 0; i < single_losses.size(); ++i) {
    worst_loss = std::max(worst_loss, std::abs(single_losses[i] - parallel_losses[i]));
  }
  EXPECT_LT(worst_loss, 1e-4);
  EXPECT_LT(single_losses.back(), single_losses.front());

  Decoder a = final_model(config, single_dir);
  Decoder b = final_model(config, parallel_dir);
  double worst_weight = 0.0;
  const auto b_parameters = b->named_parameters();
  for (const auto& item : a->named_parameters()) {
    const auto difference = (item.value() - b_parameters[item.key()]).abs().max().item<double>();
    worst_weight = std::max(worst_weight, difference);
    EXPECT_TRUE(torch::allclose(item.value(), b_parameters[item.key()], 1e-3, 1e-4)) << item.key();
  }
  std::cout << "1 vs 2 ranks over " << config.train.steps << " steps: max |loss difference| " << worst_loss
            << ", max |weight difference| " << worst_weight << "\n";
}

// Process ids whose parent is `parent`, in increasing order.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> result;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    const auto after_name = stat.rfind(')');
    if (after_name == std::string::npos) continue;
    std::istringstream fields(stat.substr(after_name + 1));
    char state = 0;
    pid_t ppid = 0;
    if (fields >> state >> ppid && ppid == parent) result.push_back(std::stoi(name));
  }
  std::sort(result.begin(), result.end());
  return result;
}

TEST_F(DataParallelTraining, LaunchStopsPromptlyWhenAWorkerDies) {
  Config config = tiny_data_parallel_config();
  config.train.steps = 100000;  // runs until a worker is killed
  config.train.log_every = 100;
  const std::string config_path = write_config(config);
  const std::string command = std::string(LENGEN_CLI_PATH) + " launch --nproc 2 --grace 2 -- train " +
                              config_path + " --out " + (root_ / "run").string() + " 2> " +
                              (root_ / "stderr.txt").string();
  const pid_t launcher = ::fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    ::setpgid(0, 0);  // one process group with its workers, so that a failed test can end them all
    ::setenv("LENGEN_DIST_TIMEOUT", "5", 1);
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::unique_ptr<void, std::function<void(void*)>> end_all(
      this, [launcher](void*) { ::kill(-launcher, SIGKILL); });
  // Waits for training to run (rank 0 has written the run folder), then kills rank 1's process.
  std::vector<pid_t> workers;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    workers = children_of(launcher);
    if (workers.size() == 2 && fs::exists(root_ / "run" / "config.json")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(workers.size(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Rank 1 was started second: the higher process id.
  ASSERT_EQ(::kill(workers[1], SIGKILL), 0);
  const auto killed_at = std::chrono::steady_clock::now();
  int status = 0;
  ASSERT_EQ(::waitpid(launcher, &status, 0), launcher);
  const auto stopped_after = std::chrono::steady_clock::now() - killed_at;
  std::ifstream in(root_ / "stderr.txt");
  const std::string err(std::istreambuf_iterator<char>(in), {});
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  EXPECT_NE(err.find("rank 1 of 2 was killed by signal 9"), std::string::npos) << err;
  EXPECT_LT(stopped_after, std::chrono::seconds(10)) << err;
}

// Bad input is met by every rank at once: the user reads it once, from rank 0, and not one
// line per worker plus the launcher's own.
TEST_F(DataParallelTraining, LaunchNamesBadInputInOneLine) {
  Config config = tiny_data_parallel_config();
  // 16 samples do not split over 3 workers: every rank refuses.
  ASSERT_EQ(
      run_cli("launch --nproc 3 -- train " + write_config(config) + " --out " + (root_ / "run").string()), 2);
  EXPECT_NE(err_.find("must be divisible by the 3 data-parallel workers"), std::string::npos) << err_;
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
  // A bad override, the same way.
  ASSERT_EQ(run_cli("launch --nproc 2 -- train " + write_config(config) + " --out " +
                    (root_ / "run").string() + " --set train.lr=-1"),
            2);
  EXPECT_EQ(err_, "lengen: error: --set train.lr=-1: train.lr must be > 0, got -1\n");
}

}  // namespace
}  // namespace lengen
