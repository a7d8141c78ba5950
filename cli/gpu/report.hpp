// What kiln_gpu_check found: each check adds its figures to one JSON
// document (printed as tables as it goes), and a check that throws is
// recorded and the next one runs. The document is written whatever happened.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace kiln::gpu_check {

class Report {
 public:
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();

  // Runs `check`; an exception it throws is printed, recorded under
  // doc["errors"] with the check's name, and counted.
  void run(const std::string& name, const std::function<void()>& check);
  void error(const std::string& where, const std::string& what);
  // A result outside its tolerance (correctness): counted, the run goes on.
  void fail() { ++failures_; }

  int failures() const { return failures_; }
  int errors() const { return errors_; }
  // 1 when any result failed or any check could not run, else 0.
  int exit_status() const { return failures_ || errors_ ? 1 : 0; }
  // Writes doc, with the process's exit status, to `path` (nothing when
  // empty); throws naming the file.
  void write(const std::string& path, int exit_status);

 private:
  int failures_ = 0, errors_ = 0;
};

}  // namespace kiln::gpu_check
