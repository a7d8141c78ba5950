// Writers killed with SIGKILL at random points of compiling and publishing
// while readers use the same cache: no reader may get a wrong output, an
// error or a partial entry, and nothing a dead writer leaves may be served.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <stop_token>
#include <thread>

#include "tests/api/child_process.hpp"
#include "tests/api/crash_case.hpp"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using crash::ms_since;
using crash::text_of;

// Captures this process's stderr, where the "kiln" logger writes, while it lives.
class StderrCapture {
 public:
  explicit StderrCapture(fs::path file) : file_(std::move(file)) {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    const int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    saved_ = -1;
  }
  std::string text() const {
    std::ifstream in(file_);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  fs::path file_;
  int saved_ = -1;
};

constexpr int kTrials = 200;
constexpr int kLanes = 2;                // writers at a time: two cores, shared
constexpr double kExistingRd = 0.125;    // a specialisation already on disk
constexpr double kKillSpan = 1.5;        // kills within 0 to 1.5x of a whole writer's time

// Trial i's own rd_o_cvd: a key of its own, so that every writer compiles.
double rd_of_trial(int trial) { return 0.3 + trial * 1e-4; }

// Fixed unless KILN_CRASH_SEED says otherwise (to replay a reported failure);
// the kill points also depend on timing, which no seed fixes.
std::uint64_t crash_seed() {
  const char* text = std::getenv("KILN_CRASH_SEED");
  return text && *text ? std::stoull(text) : 20240611;
}

enum class Outcome { completed, killed, failed };

struct Trials {
  fs::path dir;
  fs::path logs;
  std::uint64_t seed = 0;
  double span_ms = 0;                   // kills fall 0 to span_ms after "ready"
  std::atomic<int> next{0};
  std::atomic<int> current[kLanes];     // the trial each lane's writer works on; -1: none
  std::atomic<int> reads{0};
  std::mutex mutex;                     // guards what follows
  std::vector<Outcome> outcomes = std::vector<Outcome>(kTrials, Outcome::failed);
  std::vector<std::string> problems;

  void note(std::string problem) {
    std::lock_guard lock(mutex);
    problems.push_back(std::move(problem));
  }
  // Kills spread over 1.5x of a writer's time complete a third of the writers.
  // The load on a shared machine changes while the trials run, so the span
  // follows the outcomes (a stochastic approximation): shorter after a
  // completion, longer after a kill, steady at one completion in three.
  void adapt_span(Outcome outcome) {
    std::lock_guard lock(mutex);
    if (outcome == Outcome::completed) span_ms *= 0.96;
    if (outcome == Outcome::killed) span_ms *= 1.02;
  }
  double span() {
    std::lock_guard lock(mutex);
    return span_ms;
  }
};

// A writer resolves the trial's own specialisation and, one time in three,
// the one on disk too (before or after); it is killed `delay` after it is
// ready (if it has not completed by then).
Outcome run_writer(Trials& t, int trial, double delay_ms, bool with_existing, bool existing_first) {
  std::vector<std::string> args = {"resolve", text_of(rd_of_trial(trial))};
  if (with_existing) args.insert(existing_first ? args.begin() + 1 : args.end(), text_of(kExistingRd));
  const fs::path log = t.logs / ("writer-" + std::to_string(trial) + ".log");
  auto writer = crash_child(args, t.dir, log, {{"KILN_LOCK_TIMEOUT", "5"}});
  if (!writer->read_line(30s)) {
    t.note("trial " + std::to_string(trial) + ": writer never ready: " + writer->stderr_text());
    return Outcome::failed;
  }
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<std::int64_t>(delay_ms * 1000)));
  writer->kill(SIGKILL);
  const std::optional<int> status = writer->wait(30s);
  if (status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) return Outcome::killed;
  if (writer->exited_ok()) return Outcome::completed;
  t.note("trial " + std::to_string(trial) + ": writer failed (status " + std::to_string(status.value_or(-1)) +
         "): " + writer->stderr_text());
  return Outcome::failed;
}

void run_lane(Trials& t, int lane) {
  for (int trial; (trial = t.next.fetch_add(1)) < kTrials;) {
    t.current[lane] = trial;
    std::mt19937_64 rng(t.seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(trial + 1));
    const double delay = std::uniform_real_distribution<double>(0, t.span())(rng);
    const bool with_existing = rng() % 3 == 0, existing_first = rng() % 2 == 0;
    Outcome outcome = Outcome::failed;
    try {
      outcome = run_writer(t, trial, delay, with_existing, existing_first);
    } catch (const std::exception& e) {  // cannot spawn: a failed trial, not a terminated test
      t.note("trial " + std::to_string(trial) + ": " + e.what());
    }
    t.adapt_span(outcome);
    std::lock_guard lock(t.mutex);
    t.outcomes[static_cast<std::size_t>(trial)] = outcome;
  }
  t.current[lane] = -1;
}

// Fresh Runtimes of its own, one after another, each resolving the
// specialisation on disk, one a writer works on now and an earlier one.
void read_until_stopped(Trials& t, std::uint64_t seed, std::stop_token stop) {
  std::mt19937_64 rng(seed);
  Config config = config_for(t.dir);
  config.build_slot_dir = build_slots_beside(t.dir);
  config.log_level = "warn";
  config.lock_timeout = 20s;
  while (!stop.stop_requested()) {
    std::vector<double> rds = {kExistingRd};
    if (const int now = t.current[rng() % kLanes]; now >= 0) {
      rds.push_back(rd_of_trial(now));
      if (now > 0) rds.push_back(rd_of_trial(static_cast<int>(rng() % static_cast<std::uint64_t>(now))));
    }
    std::shuffle(rds.begin(), rds.end(), rng);
    try {
      Runtime rt(config);
      for (double rd : rds) {
        if (const std::string wrong = crash::run_and_check(rt, rd); !wrong.empty())
          t.note("reader, rd_o_cvd " + text_of(rd) + ": wrong output: " + wrong);
        ++t.reads;
      }
    } catch (const std::exception& e) {
      t.note(std::string("reader: ") + e.what());
    }
    std::this_thread::sleep_for(5ms);  // a reader that spins takes a core from the writers
  }
}

// How long a writer takes from "ready" to its exit, as the trials run it:
// kLanes at a time beside the reader; the median of two rounds.
constexpr int kCalibrationRuns = 2 * kLanes;

double measure_window(Trials& t) {
  std::vector<double> times;
  for (int round = 0; round < kCalibrationRuns / kLanes; ++round) {
    std::vector<std::unique_ptr<ChildProcess>> writers;
    std::vector<Clock::time_point> ready;
    for (int i = 0; i < kLanes; ++i) {
      const double rd = rd_of_trial(kTrials + round * kLanes + i);
      writers.push_back(crash_child({"resolve", text_of(rd)}, t.dir, t.logs / ("calibration-" + std::to_string(i))));
    }
    for (auto& writer : writers) {
      EXPECT_TRUE(writer->read_line(30s)) << writer->stderr_text();
      ready.push_back(Clock::now());
    }
    const auto deadline = Clock::now() + 60s;
    for (std::size_t done = 0; done < writers.size() && Clock::now() < deadline;) {
      for (std::size_t i = 0; i < writers.size(); ++i)
        if (writers[i] && !writers[i]->running()) {
          times.push_back(ms_since(ready[i]));
          EXPECT_TRUE(writers[i]->exited_ok()) << writers[i]->stderr_text();
          writers[i].reset();
          ++done;
        }
      std::this_thread::sleep_for(200us);
    }
  }
  EXPECT_EQ(times.size(), static_cast<std::size_t>(kCalibrationRuns)) << "calibration writers hang";
  std::sort(times.begin(), times.end());
  return times.empty() ? 1000.0 : times[times.size() / 2];
}

// Entry keys that decode, as another process reads them; files that are temporaries.
std::set<std::string> inspect(const fs::path& dir, const fs::path& log, int& temporaries) {
  auto inspector = crash_child({"inspect", dir.string()}, dir, log);
  std::set<std::string> good;
  for (const std::string& line : inspector->read_all(60s)) {
    if (line.starts_with("entry ") && line.ends_with(" ok")) good.insert(line.substr(6, 32));
    else if (line.starts_with("entry ")) ADD_FAILURE() << "an entry does not decode: " << line;
    else if (line.starts_with("file ") && line.find("/.tmp.") != std::string::npos) ++temporaries;
  }
  EXPECT_TRUE(inspector->wait(10s) && inspector->exited_ok()) << inspector->stderr_text();
  return good;
}

// A fresh Runtime: each specialisation is a disk hit exactly when a good entry
// was there (a dead writer's temporary is never served), else compiled; right.
void expect_fresh_runtime_serves(const fs::path& dir, const std::vector<double>& rds, const std::set<std::string>& good) {
  Runtime fresh(config_for(dir));
  for (double rd : rds) {
    const std::uint64_t hits_before = fresh.metrics().total().disk_hits;
    std::string key;
    try {
      EXPECT_EQ(crash::run_and_check(fresh, rd, &key), "") << "rd_o_cvd " << text_of(rd);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rd_o_cvd " << text_of(rd) << ": " << e.what();
      continue;
    }
    const bool hit = fresh.metrics().total().disk_hits > hits_before;
    EXPECT_EQ(hit, good.contains(key)) << "rd_o_cvd " << text_of(rd) << ", key " << key;
  }
  const KernelMetrics total = fresh.metrics().total();
  EXPECT_EQ(total.compiles + total.disk_hits, rds.size());
  std::printf("fresh runtime: %llu disk hits, %llu compiles\n", static_cast<unsigned long long>(total.disk_hits),
              static_cast<unsigned long long>(total.compiles));
}

TEST(CrashWriters, KilledAtRandomPointsNeitherBreakReadersNorLeaveEntriesThatAreServedBroken) {
  TempDir scratch;
  Trials t;
  t.dir = scratch.path() / "cache";
  t.logs = scratch.path() / "logs";
  fs::create_directories(t.logs);
  t.seed = crash_seed();
  for (auto& lane : t.current) lane = -1;
  const auto start = Clock::now();
  {
    Runtime first(config_for(t.dir));
    ASSERT_EQ(crash::run_and_check(first, kExistingRd), "");
  }
  StderrCapture reader_log(t.logs / "readers.log");
  std::jthread reader([&t](std::stop_token stop) { read_until_stopped(t, t.seed + 1, stop); });
  t.span_ms = kKillSpan * measure_window(t);
  std::printf("seed %llu (KILN_CRASH_SEED), %d trials, %d at a time, kill 0-%.0f ms after ready at first\n",
              static_cast<unsigned long long>(t.seed), kTrials, kLanes, t.span_ms);
  std::vector<std::jthread> lanes;
  for (int lane = 0; lane < kLanes; ++lane) lanes.emplace_back(run_lane, std::ref(t), lane);
  for (std::jthread& lane : lanes) lane.join();
  reader.request_stop();
  reader.join();
  reader_log.restore();
  const double trials_ms = ms_since(start);

  for (const std::string& problem : t.problems) ADD_FAILURE() << problem;
  EXPECT_EQ(reader_log.text(), "") << "the readers logged warnings (a bad entry?)";
  const auto count = [&](Outcome o) { return std::count(t.outcomes.begin(), t.outcomes.end(), o); };
  std::printf("writers: %ld killed, %ld completed, %ld failed (kills 0-%.0f ms at last); %d reads checked; %.1f s\n",
              count(Outcome::killed), count(Outcome::completed), count(Outcome::failed), t.span(), t.reads.load(),
              trials_ms / 1000);
  EXPECT_EQ(count(Outcome::failed), 0);
  // The kill points span the window: most land in compiling, some after publishing.
  EXPECT_GE(count(Outcome::killed), kTrials / 5) << "the kills came too late to hit compiles";
  EXPECT_GE(count(Outcome::completed), kTrials / 40) << "the kills came too early to reach publishing";
  EXPECT_GT(t.reads.load(), kTrials / 4) << "the readers hardly ran";

  int temporaries = 0;
  const std::set<std::string> good = inspect(t.dir, t.logs / "inspect.log", temporaries);
  std::printf("%zu good entries, %d temporary files left by killed writers\n", good.size(), temporaries);
  std::vector<double> rds = {kExistingRd};
  for (int trial = 0; trial < kTrials + kCalibrationRuns; ++trial) rds.push_back(rd_of_trial(trial));
  expect_fresh_runtime_serves(t.dir, rds, good);
  std::printf("whole test: %.1f s\n", ms_since(start) / 1000);
}

}  // namespace
}  // namespace kiln::testing
