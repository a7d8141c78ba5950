// What kiln logs while one lives: the "kiln" logger replaced by one that
// keeps its last lines (for tests linked against kiln's objects, which share
// spdlog's registry with them; libkiln's copy is its own).
#pragma once

#include <memory>
#include <string>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

namespace kiln::testing {

class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(128)) {
    spdlog::drop("kiln");
    auto logger = std::make_shared<spdlog::logger>("kiln", sink_);
    logger->set_level(spdlog::level::trace);
    logger->set_pattern("%l: %v");
    spdlog::register_logger(logger);
  }
  ~LogCapture() { spdlog::drop("kiln"); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string text() const {
    std::string all;
    for (const std::string& line : sink_->last_formatted()) all += line;
    return all;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

}  // namespace kiln::testing
