// Config files: round trips, every error a user can cause, overrides, the schema, the CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>

#include "lengen/attention_choices.h"
#include "lengen/config_io.h"
#include "lengen/errors.h"

namespace lengen {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The UserError message `action` throws; fails the test when it throws nothing.
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& error) {
    std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    return message;
  }
  ADD_FAILURE() << "expected a UserError";
  return "";
}

std::string config_error(const std::string& text) {
  return error_of([&] { config_from_string(text, "test.json"); });
}

std::string override_error(const std::string& assignment) {
  return error_of([&] {
    Config config;
    apply_override(config, assignment);
  });
}

Config overridden(const std::string& assignment) {
  Config config;
  apply_override(config, assignment);
  return config;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TempDir {
 public:
  TempDir() {
    static int count = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("lengen_config_test_" + std::to_string(getpid()) + "_" + std::to_string(count++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return path_ / name;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Leaves of a config JSON as key paths; `fields` says which objects are values, not sections.
void collect_keys(const json& object, const std::string& prefix, const std::set<std::string>& fields,
                  std::set<std::string>& keys) {
  for (const auto& [name, value] : object.items()) {
    std::string key = prefix.empty() ? name : prefix + "." + name;
    if (value.is_object() && !fields.count(key)) {
      collect_keys(value, key, fields, keys);
    } else {
      keys.insert(key);
    }
  }
}

std::set<std::string> schema_keys() {
  std::set<std::string> keys;
  for (const auto& info : config_schema()) keys.insert(info.key);
  return keys;
}

// Counts the members of an aggregate: the most initializers T{...} accepts. This lets a test
// notice a member added to config.h but not to the key table.
struct AnyMember {
  template <typename T>
  operator T() const;
};

template <typename T, typename... Args>
constexpr auto brace_initializable(int) -> decltype(T{std::declval<Args>()...}, true) {
  return true;
}
template <typename T, typename... Args>
constexpr bool brace_initializable(long) {
  return false;
}

template <typename T, typename... Args>
constexpr size_t member_count() {
  if constexpr (brace_initializable<T, Args..., AnyMember>(0)) {
    return member_count<T, Args..., AnyMember>();
  } else {
    return sizeof...(Args);
  }
}

// Schema keys directly inside `section`, counting a nested section as one member.
size_t keys_in_section(const std::string& section) {
  std::string prefix = section.empty() ? "" : section + ".";
  std::set<std::string> members;
  for (const auto& key : schema_keys()) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    std::string rest = key.substr(prefix.size());
    members.insert(rest.substr(0, rest.find('.')));
  }
  return members.size();
}

struct CommandResult {
  int exit_code;
  std::string out;
  std::string err;
};

CommandResult run_cli(const std::string& arguments) {
  TempDir dir;
  auto out = dir.path() / "stdout";
  auto err = dir.path() / "stderr";
  std::string command =
      std::string(LENGEN_CLI_PATH) + " " + arguments + " >" + out.string() + " 2>" + err.string();
  int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(out), read_text(err)};
}

const std::string kSampleConfig = std::string(LENGEN_TEST_DATA_DIR) + "/sample_config.json";

TEST(ConfigTest, DefaultsRoundTrip) {
  json defaults = config_to_json(Config{});
  EXPECT_EQ(config_to_json(config_from_json(defaults)), defaults);
  EXPECT_EQ(config_to_json(config_from_string("{}")), defaults);
}

TEST(ConfigTest, EveryValueRoundTrips) {
  Config config =
      load_config(kSampleConfig, {"description=round trip", "task.params.vocab=20", "train.seed=7",
                                  "model.attention.learn_alpha=true", "model.attention.normalizer=entmax"});
  json written = config_to_json(config);
  EXPECT_EQ(config_to_json(config_from_json(written)), written);
  EXPECT_EQ(config_to_json(config_from_string(written.dump(2))), written);
  // config.json and `config show` write a task's whole numbers as integers: "vocab": 20, not 20.0.
  EXPECT_EQ(written["task"]["params"]["vocab"].dump(), "20");
  config.task.params["write_prob"] = 0.25;
  EXPECT_EQ(config_to_json(config)["task"]["params"]["write_prob"].dump(), "0.25");
}

// A config changed by --set says so in its description, which the run's config.json keeps.
TEST(ConfigTest, SetsAreNamedInTheDescription) {
  const std::string file = load_config(kSampleConfig).description;
  EXPECT_EQ(load_config(kSampleConfig, {"train.seed=7", "model.layers=1"}).description,
            file + " [--set train.seed=7 --set model.layers=1]");
  EXPECT_EQ(load_config(kSampleConfig, {"train.seed=7", "description=mine"}).description, "mine");
}

TEST(ConfigTest, SampleConfigLoads) {
  Config config = load_config(kSampleConfig);
  EXPECT_EQ(config.task.name, "copy");
  EXPECT_EQ(config.task.params.at("vocab"), 32);
  EXPECT_EQ(config.task.len_min, 8);
  EXPECT_EQ(config.task.len_max, 16);
  EXPECT_EQ(config.model.layers, 2);
  EXPECT_EQ(config.model.d_model, 64);
  EXPECT_EQ(config.model.heads, 4);
  EXPECT_EQ(config.model.d_head, 16);
  EXPECT_EQ(config.model.d_mlp, 256);
  EXPECT_EQ(config.model.attention.normalizer, "entmax15");
  EXPECT_EQ(config.model.attention.scaling, "asentmax");
  EXPECT_EQ(config.model.attention.positions, "nape");
  EXPECT_EQ(config.train.steps, 3000);
  EXPECT_EQ(config.train.batch_size, 32);
  EXPECT_DOUBLE_EQ(config.train.lr, 1e-3);
  EXPECT_EQ(config.train.warmup, 300);
  EXPECT_EQ(config.eval.lengths, (std::vector<int64_t>{16, 32, 64, 128}));
}

TEST(ConfigTest, KeysLeftOutKeepTheirDefaults) {
  Config config = config_from_string(R"({"train": {"lr": 0.01}, "model": {"attention": {"alpha": 1.3}}})");
  Config defaults;
  EXPECT_DOUBLE_EQ(config.train.lr, 0.01);
  EXPECT_DOUBLE_EQ(config.model.attention.alpha, 1.3);
  EXPECT_EQ(config.train.steps, defaults.train.steps);
  EXPECT_EQ(config.model.attention.normalizer, defaults.model.attention.normalizer);
}

TEST(ConfigTest, WholeNumbersWrittenAsFloatsAreIntegers) {
  EXPECT_EQ(config_from_string(R"({"train": {"steps": 3e3}})").train.steps, 3000);
}

TEST(ConfigTest, CommentsAreAllowed) {
  EXPECT_EQ(config_from_string("{\n  // short run\n  \"train\": {\"steps\": 1000}\n}").train.steps, 1000);
}

TEST(ConfigTest, ToJsonHasExactlyTheSchemaKeys) {
  std::set<std::string> keys;
  collect_keys(config_to_json(Config{}), "", schema_keys(), keys);
  EXPECT_EQ(keys, schema_keys());
}

TEST(ConfigTest, SchemaCoversEveryMemberOfEveryStruct) {
  EXPECT_EQ(member_count<Config>(), keys_in_section(""));
  EXPECT_EQ(member_count<TaskConfig>(), keys_in_section("task"));
  EXPECT_EQ(member_count<ModelConfig>(), keys_in_section("model"));
  EXPECT_EQ(member_count<AttentionConfig>(), keys_in_section("model.attention"));
  EXPECT_EQ(member_count<TrainConfig>(), keys_in_section("train"));
  EXPECT_EQ(member_count<EvalConfig>(), keys_in_section("eval"));
}

TEST(ConfigTest, SchemaHasTypeDefaultAndMeaningForEveryKey) {
  for (const auto& info : config_schema()) {
    EXPECT_FALSE(info.type.empty()) << info.key;
    EXPECT_FALSE(info.default_value.empty()) << info.key;
    EXPECT_FALSE(info.meaning.empty()) << info.key;
  }
  std::string text = config_schema_text();
  for (const auto& key : schema_keys()) EXPECT_THAT(text, HasSubstr(key + " "));
}

TEST(ConfigTest, UnknownKeySuggestsTheClosestKey) {
  EXPECT_EQ(config_error(R"({"model": {"attention": {"normaliser": "softmax"}}})"),
            "test.json: unknown config key 'model.attention.normaliser' "
            "(did you mean 'model.attention.normalizer'?)");
  EXPECT_EQ(config_error(R"({"trian": {"lr": 0.1}})"),
            "test.json: unknown config key 'trian' (did you mean 'train'?)");
  EXPECT_EQ(config_error(R"({"zzzzzzzzzzzz": 1})"), "test.json: unknown config key 'zzzzzzzzzzzz'");
  EXPECT_THAT(config_error(R"({"model": {"attention": {"positions": "NoPE"}}})"),
              HasSubstr("did you mean 'nope'"));
  EXPECT_EQ(config_error(R"({"lr": 0.1})"), "test.json: unknown config key 'lr' (did you mean 'train.lr'?)");
  EXPECT_EQ(config_error(R"({"train": {"normalizer": "sparsemax"}})"),
            "test.json: unknown config key 'train.normalizer' (did you mean 'model.attention.normalizer'?)");
  // A control character in a key is shown, not obeyed: a NUL would end the message there.
  EXPECT_EQ(config_error(R"({"task": {"na\u0000me": "copy"}})"),
            "test.json: unknown config key 'task.na\\x00me' (did you mean 'task.name'?)");
}

TEST(ConfigTest, WrongTypesNameTheKeyAndTheValue) {
  EXPECT_EQ(config_error(R"({"train": {"lr": "abc"}})"),
            "test.json: config key 'train.lr' must be a number, got \"abc\"");
  EXPECT_EQ(config_error(R"({"train": {"steps": 2.5}})"),
            "test.json: config key 'train.steps' must be an integer, got 2.5");
  EXPECT_EQ(config_error(R"({"train": {"seed": -1}})"),
            "test.json: config key 'train.seed' must be a non-negative integer, got -1");
  // LibTorch keeps 32 bits of the model's seed: 2^32 + 1 would train seed 1's model.
  EXPECT_NE(config_error(R"({"train": {"seed": 4294967297}})").find("train.seed"), std::string::npos);
  EXPECT_EQ(config_from_string(R"({"train": {"seed": 4294967295}})").train.seed, 4294967295u);
  EXPECT_EQ(config_error(R"({"eval": {"attention_stats": 1}})"),
            "test.json: config key 'eval.attention_stats' must be true or false, got 1");
  EXPECT_EQ(config_error(R"({"task": {"name": 3}})"),
            "test.json: config key 'task.name' must be a string, got 3");
  EXPECT_EQ(config_error(R"({"eval": {"lengths": [16, "x"]}})"),
            "test.json: config key 'eval.lengths' must be a list of integers, got [16,\"x\"]");
  EXPECT_EQ(config_error(R"({"task": {"params": {"vocab": "big"}}})"),
            "test.json: config key 'task.params.vocab' must be a number, got \"big\"");
  EXPECT_EQ(config_error(R"({"model": 3})"), "test.json: config key 'model' must be an object, got 3");
  EXPECT_EQ(config_error("[1, 2]"), "test.json: the config must be an object, got [1,2]");
}

TEST(ConfigTest, OutOfRangeValuesNameTheBound) {
  EXPECT_EQ(config_error(R"({"train": {"batch_size": 0}})"),
            "test.json: train.batch_size must be in [1, 1048576], got 0");
  EXPECT_EQ(config_error(R"({"train": {"lr": 0}})"), "test.json: train.lr must be > 0, got 0");
  EXPECT_EQ(config_error(R"({"train": {"beta2": 1.0}})"),
            "test.json: train.beta2 must be in [0, 1), got 1.0");
  EXPECT_EQ(config_error(R"({"task": {"len_min": 0}})"),
            "test.json: task.len_min must be in [1, 1048576], got 0");
  EXPECT_EQ(config_error(R"({"model": {"heads": 0}})"),
            "test.json: model.heads must be in [1, 65536], got 0");
  EXPECT_EQ(config_error(R"({"eval": {"lengths": [16, 0]}})"),
            "test.json: eval.lengths entries must be in [1, 1048576], got 0");
  // Upper bounds stop a typo before it allocates or starts threads without end.
  EXPECT_EQ(config_error(R"({"train": {"threads": 100000}})"),
            "test.json: train.threads must be in [1, 1024], got 100000");
  EXPECT_EQ(config_error(R"({"train": {"batch_size": 1e15}})"),
            "test.json: train.batch_size must be in [1, 1048576], got 1e+15");
}

TEST(ConfigTest, InvalidChoicesListTheAllowedValues) {
  EXPECT_EQ(config_error(R"({"model": {"attention": {"normalizer": "entmax1.5"}}})"),
            "test.json: model.attention.normalizer must be one of " + joined_names(normalizer_names()) +
                ", got \"entmax1.5\" (did you mean 'entmax15'?)");
  EXPECT_THAT(config_error(R"({"task": {"name": "cpy"}})"),
              ::testing::AllOf(StartsWith("test.json: task.name must be one of "), HasSubstr("reverse"),
                               HasSubstr(", got \"cpy\" (did you mean 'copy'?)")));
  EXPECT_EQ(config_error(R"({"train": {"device": "tpu"}})"),
            "test.json: train.device must be one of cpu, cuda, auto, got \"tpu\" (did you mean 'cpu'?)");
}

TEST(ConfigTest, RulesAcrossKeys) {
  EXPECT_EQ(config_error(R"({"task": {"len_min": 20, "len_max": 16}})"),
            "test.json: task.len_min (20) must be <= task.len_max (16)");
  EXPECT_EQ(config_error(R"({"train": {"steps": 100, "warmup": 300}})"),
            "test.json: train.warmup (300) must be <= train.steps (100)");
  EXPECT_EQ(config_error(R"({"model": {"heads": 2, "attention": {"positions": "nape", "alibi_heads": 3}}})"),
            "test.json: model.attention.alibi_heads (3) must be <= model.heads (2) with nape positions");
  EXPECT_NO_THROW(
      config_from_string(R"({"model": {"heads": 2, "attention": {"positions": "rope", "alibi_heads": 3}}})"));
  EXPECT_EQ(
      config_error(R"({"model": {"attention": {"learn_alpha": true}}})"),
      "test.json: model.attention.learn_alpha needs model.attention.normalizer \"entmax\", got \"softmax\"");
  EXPECT_EQ(
      config_error(R"({"model": {"attention": {"normalizer": "entmax", "learn_alpha": true, "alpha": 2}}})"),
      "test.json: model.attention.alpha must be in (1, 2) when learned, got 2.0");
  // An alpha far past sparsemax's 2 gives all-zero or non-finite attention, not a distribution.
  EXPECT_NE(config_error(R"({"model": {"attention": {"normalizer": "entmax", "alpha": 1e30}}})")
                .find("model.attention.alpha"),
            std::string::npos);
  EXPECT_EQ(config_error(R"({"eval": {"long_from": 4096}})"),
            "test.json: eval.long_from (4096) and eval.long_samples (0) go together: set both or neither");
  EXPECT_EQ(config_error(R"({"eval": {"long_samples": 30}})"),
            "test.json: eval.long_from (0) and eval.long_samples (30) go together: set both or neither");
}

TEST(ConfigTest, ValidateCatchesConfigsBuiltInCode) {
  Config config;
  config.train.batch_size = 0;
  EXPECT_EQ(error_of([&] { validate_config(config, "sweep"); }),
            "sweep: train.batch_size must be in [1, 1048576], got 0");
}

TEST(ConfigTest, DuplicateKeysAreErrors) {
  EXPECT_EQ(config_error(R"({"train": {"lr": 0.1, "steps": 500, "lr": 0.2}})"),
            "test.json: duplicate config key 'train.lr'");
  EXPECT_EQ(config_error(R"({"model": {"attention": {"alpha": 1.2}}, "model": {}})"),
            "test.json: duplicate config key 'model'");
}

TEST(ConfigTest, JsonSyntaxErrorsGiveLineAndColumn) {
  std::string message = config_error("{\n  \"train\": {\"lr\": 0.1,}\n}");
  EXPECT_THAT(message, StartsWith("test.json:2:23: invalid JSON: "));
  EXPECT_THAT(message, HasSubstr("syntax error"));
}

TEST(ConfigTest, FileErrorsStartWithTheFileName) {
  TempDir dir;
  std::string missing = (dir.path() / "missing.json").string();
  EXPECT_EQ(error_of([&] { load_config(missing); }), missing + ": no such config file");
  std::string broken = dir.write("broken.json", "{\"train\": }").string();
  EXPECT_THAT(error_of([&] { load_config(broken); }), StartsWith(broken + ":1:11: invalid JSON: "));
  std::string typo = dir.write("typo.json", R"({"train": {"stpes": 10}})").string();
  EXPECT_EQ(error_of([&] { load_config(typo); }),
            typo + ": unknown config key 'train.stpes' (did you mean 'train.steps'?)");
  std::string crossed = dir.write("crossed.json", R"({"train": {"steps": 1000}})").string();
  EXPECT_EQ(error_of([&] { load_config(crossed, {"train.warmup=2000"}); }),
            crossed + " with --set train.warmup=2000: train.warmup (2000) must be <= train.steps (1000)");
  EXPECT_EQ(error_of([&] {
              load_config(crossed, {"train.lr=0.01", "train.warmup=2000"});
            }),
            crossed +
                " with --set train.lr=0.01 --set train.warmup=2000: train.warmup (2000) must be <= "
                "train.steps (1000)");
}

TEST(ConfigTest, OverridesOfEveryType) {
  EXPECT_EQ(overridden("train.steps=500").train.steps, 500);
  EXPECT_EQ(overridden("task.seed=18446744073709551615").task.seed, 18446744073709551615ull);
  EXPECT_DOUBLE_EQ(overridden("train.lr=3e-4").train.lr, 3e-4);
  EXPECT_TRUE(overridden("model.attention.learn_alpha=true").model.attention.learn_alpha);
  EXPECT_FALSE(overridden("eval.attention_stats=false").eval.attention_stats);
  EXPECT_EQ(overridden("model.attention.normalizer=sparsemax").model.attention.normalizer, "sparsemax");
  EXPECT_EQ(overridden("description=a b=c, [d]").description, "a b=c, [d]");
  EXPECT_EQ(overridden("description=123").description, "123");
  EXPECT_EQ(overridden("task.name=reverse").task.name, "reverse");
  // A string written as JSON, quotes and all, is that string, as in a config file.
  EXPECT_EQ(overridden(R"(description="after fix")").description, "after fix");
  EXPECT_EQ(overridden(R"(eval.decode="greedy")").eval.decode, DecodeMode::kGreedy);
  EXPECT_EQ(overridden(R"(description="a "b" c")").description, R"("a "b" c")");  // not one JSON string
  EXPECT_EQ(overridden("eval.lengths=64,128").eval.lengths, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(overridden("eval.lengths=[64, 128]").eval.lengths, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(overridden("eval.lengths=32").eval.lengths, (std::vector<int64_t>{32}));
  // An empty list is written as one: an empty value (an unset variable) is refused.
  EXPECT_TRUE(overridden("eval.lengths=[]").eval.lengths.empty());
  EXPECT_THROW(overridden("eval.lengths="), UserError);
  EXPECT_THROW(overridden("description="), UserError);
  EXPECT_EQ(overridden("task.params.vocab=64").task.params.at("vocab"), 64);
  EXPECT_EQ(overridden(R"(task.params={"write_prob": 0.1})").task.params.at("write_prob"), 0.1);
  Config section = overridden(R"(train={"lr": 0.5, "steps": 10})");
  EXPECT_DOUBLE_EQ(section.train.lr, 0.5);
  EXPECT_EQ(section.train.steps, 10);
}

TEST(ConfigTest, TaskParamOverridesKeepTheOtherParams) {
  Config config;
  config.task.params = {{"vocab", 32}, {"max_reps", 4}};
  apply_override(config, "task.params.vocab=8");
  EXPECT_EQ(config.task.params, (TaskParams{{"vocab", 8}, {"max_reps", 4}}));
  // So does an object, as one given for a section does.
  apply_override(config, R"(task.params={"vocab": 16})");
  EXPECT_EQ(config.task.params, (TaskParams{{"vocab", 16}, {"max_reps", 4}}));
  apply_override(config, "task.params={}");
  EXPECT_EQ(config.task.params, (TaskParams{{"vocab", 16}, {"max_reps", 4}}));
}

TEST(ConfigTest, OverrideErrors) {
  EXPECT_EQ(override_error("train.lr=abc"),
            "--set train.lr=abc: config key 'train.lr' must be a number, got \"abc\"");
  EXPECT_EQ(
      override_error("eval.attention_stats=yes"),
      "--set eval.attention_stats=yes: config key 'eval.attention_stats' must be true or false, got \"yes\"");
  EXPECT_EQ(
      override_error("eval.lengths=64,abc"),
      "--set eval.lengths=64,abc: config key 'eval.lengths' must be a list of integers, got \"64,abc\"");
  EXPECT_EQ(override_error("train.batch_size=0"),
            "--set train.batch_size=0: train.batch_size must be in [1, 1048576], got 0");
  EXPECT_EQ(override_error("task.params.vocab=many"),
            "--set task.params.vocab=many: config key 'task.params.vocab' must be a number, got \"many\"");
  EXPECT_EQ(override_error("model.attention.normaliser=softmax"),
            "--set model.attention.normaliser=softmax: unknown config key 'model.attention.normaliser' "
            "(did you mean 'model.attention.normalizer'?)");
  EXPECT_EQ(override_error("train.lr"), "--set train.lr: an override must look like key.path=value");
  EXPECT_EQ(
      override_error("model.attention.scaling=ASEntmax"),
      "--set model.attention.scaling=ASEntmax: model.attention.scaling must be one of none, ssmax, learned, "
      "asentmax, got \"ASEntmax\" (did you mean 'asentmax'?)");
}

TEST(ConfigTest, DocsMatchTheSchema) {
  std::string docs = read_text(std::string(LENGEN_SOURCE_DIR) + "/docs/config.md");
  EXPECT_EQ(docs, config_schema_markdown())
      << "docs/config.md is stale: run `lengen config schema --markdown > docs/config.md`";
}

TEST(ConfigCliTest, ShowPrintsTheResolvedConfigWithOverrides) {
  CommandResult result =
      run_cli("config show " + kSampleConfig + " --set train.steps=500 --set eval.lengths=16,32");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  json shown = json::parse(result.out);
  EXPECT_EQ(shown["train"]["steps"], 500);
  EXPECT_EQ(shown["eval"]["lengths"], json({16, 32}));
  EXPECT_EQ(shown["model"]["attention"]["normalizer"], "entmax15");
  EXPECT_EQ(config_to_json(config_from_json(shown)), shown);
}

TEST(ConfigCliTest, BadKeyExitsTwoWithOneLine) {
  CommandResult result = run_cli("config show " + kSampleConfig + " --set train.stepz=5");
  EXPECT_EQ(result.exit_code, kUserErrorExitCode);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            "lengen: error: --set train.stepz=5: unknown config key 'train.stepz' "
            "(did you mean 'train.steps'?)\n");
}

// A config that shows is one that trains: task parameters are checked as training checks them.
TEST(ConfigCliTest, ShowChecksTheTaskParameters) {
  CommandResult result = run_cli("config show " + kSampleConfig + " --set task.params.vocb=5");
  EXPECT_EQ(result.exit_code, kUserErrorExitCode);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("'vocb'"), std::string::npos) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
}

TEST(ConfigCliTest, MissingFileExitsTwo) {
  CommandResult result = run_cli("config show /nonexistent/config.json");
  EXPECT_EQ(result.exit_code, kUserErrorExitCode);
  EXPECT_EQ(result.err, "lengen: error: /nonexistent/config.json: no such config file\n");
}

TEST(ConfigCliTest, SchemaMarkdownIsTheDocs) {
  CommandResult result = run_cli("config schema --markdown");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, config_schema_markdown());
}

}  // namespace
}  // namespace lengen
