#include "jit/hiprtc.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>

namespace kiln::jit {

// hipRTC's functions beyond those it shares with NVRTC (rtc_library.hpp).
struct Hiprtc::Api {
  std::shared_ptr<RtcApi> rtc;
  RtcApi::Result (*GetCodeSize)(RtcApi::Program, std::size_t*);
  RtcApi::Result (*GetCode)(RtcApi::Program, char*);
};

namespace {

constexpr const char* kLibraries[] = {"libamdhip64.so.5", "libamdhip64.so.6", "/opt/rocm/lib/libamdhip64.so"};

// Checked here with ROCm 5.2.3 and no GPU: each gives an EM_AMDGPU code
// object. (MI250X is gfx90a, MI100 gfx908, Radeon Pro W6800 gfx1030; MI300A,
// gfx942, needs a newer ROCm.)
constexpr std::string_view kSupported[] = {"gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"};

// This hipRTC calls every source ".../comgr-XXXXXX/input/CompileSource" in its
// log, whatever name it was given: put the name back. (Sources with #line
// directives, as kiln generates, name their own files already.)
std::string name_the_source(std::string log, const std::string& file_name) {
  constexpr std::string_view kMarker = "/input/CompileSource";
  for (std::size_t at = log.find(kMarker); at != std::string::npos; at = log.find(kMarker, at)) {
    std::size_t begin = log.rfind('\n', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    log.replace(begin, at + kMarker.size() - begin, file_name);
    at = begin + file_name.size();
  }
  return log;
}

}  // namespace

std::span<const std::string_view> Hiprtc::supported() { return kSupported; }

// -O3 is hipRTC's default already; C++17 as for NVRTC.
std::span<const std::string> Hiprtc::kernel_options() {
  static const std::string options[] = {"-std=c++17", "-O3"};
  return options;
}

base::Result<Hiprtc> Hiprtc::load() {
  Hiprtc h;
  auto api = std::make_shared<Api>();
  base::Result<std::shared_ptr<RtcApi>> loaded =
      load_rtc("hiprtc", kLibraries,
               "hipRTC (HIP's run-time compiler, in libamdhip64) not found; install ROCm "
               "(Debian: libamdhip64-dev libamd-comgr-dev rocm-device-libs)");
  if (!loaded) return base::failed(loaded.error());
  api->rtc = std::move(*loaded);
  const base::Result<void*> code_size = api->rtc->symbol("hiprtc", "GetCodeSize");
  if (!code_size) return base::failed(code_size.error());
  const base::Result<void*> code = api->rtc->symbol("hiprtc", "GetCode");
  if (!code) return base::failed(code.error());
  api->GetCodeSize = reinterpret_cast<decltype(api->GetCodeSize)>(*code_size);
  api->GetCode = reinterpret_cast<decltype(api->GetCode)>(*code);
  int major = 0, minor = 0;
  if (api->rtc->Version(&major, &minor) != 0) major = minor = -1;
  h.library_ = api->rtc->library;
  h.identity_ = "hiprtc " + std::to_string(major) + "." + std::to_string(minor) + " " + api->rtc->build;
  h.api_ = std::move(api);
  return h;
}

base::Result<const Hiprtc*> Hiprtc::get() {
  // As Nvrtc::get(): a failed load is tried again on the next call.
  static std::mutex mutex;
  static std::optional<Hiprtc> hiprtc;
  std::lock_guard lock(mutex);
  if (!hiprtc) {
    base::Result<Hiprtc> loaded = load();
    if (!loaded) return base::failed(loaded.error());
    hiprtc = std::move(*loaded);
  }
  return &*hiprtc;
}

base::Result<void> Hiprtc::check_arch(std::string_view arch) {
  if (std::find(std::begin(kSupported), std::end(kSupported), arch) != std::end(kSupported)) return {};
  std::string list;
  for (std::string_view a : kSupported) {
    list += ' ';
    list += a;
  }
  return base::failed({base::Failure::Kind::invalid, 0,
                       "kiln: hipRTC cannot compile for '" + std::string(arch) + "' here; it is known to work for" +
                           list});
}

base::Result<GpuCompileOutput> Hiprtc::compile(std::string_view source, const std::string& file_name,
                                               std::string_view arch, std::span<const std::string> options) const {
  if (const base::Result<void> known = check_arch(arch); !known) return base::failed(known.error());
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> all = {"--offload-arch=" + std::string(arch)};
  all.insert(all.end(), options.begin(), options.end());
  const base::Result<std::unique_ptr<RtcProgram>> program = RtcProgram::compile(*api_->rtc, source, file_name, all);
  if (!program) return base::failed(program.error());
  GpuCompileOutput out;
  out.log = name_the_source((*program)->log(), file_name);
  if (!(*program)->ok()) return out;
  base::Result<std::vector<char>> binary = (*program)->read(api_->GetCodeSize, api_->GetCode, "hiprtcGetCode");
  if (!binary) return base::failed(binary.error());
  out.binary = std::move(*binary);
  out.ok = true;
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace kiln::jit
