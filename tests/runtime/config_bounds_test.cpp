// Issue 33, item 10: the bounds of the KILN_* counts hold for values past 64
// bits too, and a Config set in code (the C and Fortran setters) is held to
// the same bounds by Config::validate().
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"

namespace kiln {
namespace {

std::string error_of(const auto& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// from_chars leaves its output alone past 64 bits: 20 digits were read as 0,
// which KILN_BUILD_SLOTS takes as "no limit".
TEST(ConfigBounds, TwentyDigitsAreRefusedNotReadAsZero) {
  for (const char* name : {"KILN_BUILD_SLOTS", "KILN_BUILD_THREADS", "KILN_THREADS"}) {
    ::setenv(name, "18446744073709551616", 1);
    const std::string message = error_of([] { Config::from_env(); });
    ::unsetenv(name);
    EXPECT_NE(message.find(std::string(name) + "='18446744073709551616': expected a whole number"), std::string::npos)
        << message;
  }
}

TEST(ConfigBounds, CheckHoldsAConfigSetInCodeToTheVariablesBounds) {
  Config ok;
  EXPECT_EQ(error_of([&] { ok.validate(); }), "");
  Config level;
  level.log_level = "garbage";
  EXPECT_EQ(error_of([&] { level.validate(); }),
            "kiln: Config::log_level 'garbage': expected trace, debug, info, warn, error, critical or off (as "
            "KILN_LOG_LEVEL takes it)");
  Config builders;
  builders.build_threads = 1'000'000;
  EXPECT_EQ(error_of([&] { builders.validate(); }),
            "kiln: Config::build_threads 1000000: expected 0 (the default) to 256 (as KILN_BUILD_THREADS takes it)");
  Config slots;
  slots.build_slots = 5000;
  EXPECT_NE(error_of([&] { slots.validate(); }).find("KILN_BUILD_SLOTS"), std::string::npos);
  Config threads;
  threads.threads = 1025;
  EXPECT_NE(error_of([&] { threads.validate(); }).find("threads 1025: expected 0 (the default) to 1024"), std::string::npos);
  Config cpu;
  cpu.target_cpu = "pentium-9000";
  EXPECT_NE(error_of([&] { cpu.validate(); }).find("KILN_TARGET_CPU"), std::string::npos);
  Config gather;
  gather.gather = "yes";
  EXPECT_EQ(error_of([&] { gather.validate(); }),
            "kiln: Config::gather 'yes': expected auto, on or off (as KILN_GATHER takes it)");
}

// C++ code that fills a Config and makes a Runtime gets the same refusal, at
// construction: a negative thread count was taken as it was before.
TEST(ConfigBounds, ARuntimeRefusesAConfigOutsideTheBoundsWhenMade) {
  Config threads;
  threads.threads = -2;
  EXPECT_NE(error_of([&] { Runtime runtime(threads); }).find("Config::threads -2: expected 0 (the default) to 1024"),
            std::string::npos);
  Config timeout;
  timeout.lock_timeout = std::chrono::milliseconds(-1);
  EXPECT_NE(error_of([&] { Runtime runtime(timeout); }).find("Config::lock_timeout -1 ms"), std::string::npos);
  Config level;
  level.log_level = "loud";
  EXPECT_NE(error_of([&] { Runtime runtime(level); }).find("KILN_LOG_LEVEL"), std::string::npos);
}

}  // namespace
}  // namespace kiln
