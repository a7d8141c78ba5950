// `kiln report FILE.json... [-o FOLDER]`: figures (PNG and SVG) and a text
// summary from metrics JSON files. The work is Python's (matplotlib, the
// field's convention for plots): cli/report/kiln_report.py, which this
// command runs in place of itself with the first Python it finds.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "kiln/errors.hpp"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::vector<std::string> files;
  std::string output = "kiln-report";
};

// Installed: <prefix>/share/kiln/report beside <prefix>/bin/kiln; in the
// build tree, the sources' folder.
fs::path report_script() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path installed = self.parent_path().parent_path() / "share" / "kiln" / "report" / "kiln_report.py";
    if (fs::exists(installed, error)) return installed;
  }
  const fs::path source = fs::path(KILN_REPORT_SOURCE_DIR) / "kiln_report.py";
  if (fs::exists(source, error)) return source;
  const fs::path installed = self.parent_path().parent_path() / "share" / "kiln" / "report";
  throw Error("kiln report: its script is missing: neither " + installed.string() + " nor " + KILN_REPORT_SOURCE_DIR +
              " holds kiln_report.py");
}

// KILN_PYTHON, else the project's .venv (scripts/setup.sh makes it, with
// matplotlib), else python3 on the PATH.
std::string python() {
  if (const char* chosen = std::getenv("KILN_PYTHON"); chosen && *chosen) {
    if (::access(chosen, X_OK) != 0)
      throw Error(std::string("kiln report: KILN_PYTHON='") + chosen + "': not an executable file");
    return chosen;
  }
  if (::access(KILN_VENV_PYTHON, X_OK) == 0) return KILN_VENV_PYTHON;
  return "python3";
}

[[noreturn]] void run_report(const ReportOptions& o) {
  const std::string interpreter = python(), script = report_script().string();
  std::vector<std::string> args{interpreter, script};
  args.insert(args.end(), o.files.begin(), o.files.end());
  args.insert(args.end(), {"-o", o.output});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(argv[0], argv.data());
  const int error = errno;
  throw Error("kiln report: cannot run " + interpreter + ": " + std::strerror(error) +
              (error == ENOENT ? " (run scripts/setup.sh, which makes .venv with matplotlib, or set KILN_PYTHON)" : ""));
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* report = app.add_subcommand(
      "report", "Figures (PNG, SVG) and a summary of init against run from metrics JSON (KILN_METRICS_FILE)");
  report->add_option("files", options->files, "metrics JSON files (kiln demo --steps-sweep writes a set)")
      ->required()
      ->check(CLI::ExistingFile);
  report->add_option("-o,--output", options->output, "folder for the figures and summary.txt (default kiln-report)");
  report->callback([options] { run_report(*options); });
}

}  // namespace kiln::cli
