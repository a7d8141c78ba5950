#include "jit/nvrtc.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <mutex>
#include <optional>

#include "jit/rtc_library.hpp"

namespace kiln::jit {

// NVRTC's functions beyond those hipRTC shares (rtc_library.hpp).
struct Nvrtc::Api {
  std::shared_ptr<RtcApi> rtc;
  RtcApi::Result (*GetNumSupportedArchs)(int*);
  RtcApi::Result (*GetSupportedArchs)(int*);
  RtcApi::Result (*GetPTXSize)(RtcApi::Program, std::size_t*);
  RtcApi::Result (*GetPTX)(RtcApi::Program, char*);
  RtcApi::Result (*GetCUBINSize)(RtcApi::Program, std::size_t*);
  RtcApi::Result (*GetCUBIN)(RtcApi::Program, char*);
};

namespace {

// The soname of CUDA 13, then 12, then the toolkit's default place.
constexpr const char* kLibraries[] = {"libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"};

template <typename F>
base::Result<void> bind_function(const RtcApi& rtc, const char* name, F& function) {
  const base::Result<void*> address = rtc.symbol("nvrtc", name);
  if (!address) return base::failed(address.error());
  function = reinterpret_cast<F>(*address);
  return {};
}

base::Result<void> check(const RtcApi& rtc, RtcApi::Result result, const char* call) {
  if (result == 0) return {};
  return base::failed({base::Failure::Kind::io, 0, std::string("kiln: ") + call + ": " + rtc.GetErrorString(result)});
}

}  // namespace

std::string CudaArch::name() const {
  std::string text = virtual_arch ? "compute_" : "sm_";
  text += std::to_string(number);
  return text;
}

base::Result<CudaArch> parse_cuda_arch(std::string_view text) {
  CudaArch arch;
  std::string_view digits;
  if (text.starts_with("sm_")) {
    digits = text.substr(3);
  } else if (text.starts_with("compute_")) {
    digits = text.substr(8);
    arch.virtual_arch = true;
  }
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), arch.number);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || arch.number <= 0) {
    return base::failed({base::Failure::Kind::invalid, 0,
                         "kiln: '" + std::string(text) + "' is not a CUDA architecture (sm_90, compute_90, ...)"});
  }
  return arch;
}

// C++17: what NVRTC 12 and 13 both take. (The prelude marks every helper
// kernels call __device__, constexpr ones too: NVRTC has no relaxed constexpr.)
// -default-device: what kernel text defines without a space is device code.
// The call operator of a generic lambda ([&](auto c, ...), as kernels take
// ICON's blocked indices) gets no space from its enclosing kernel otherwise,
// and NVRTC refuses it as host code.
std::span<const std::string> Nvrtc::kernel_options() {
  static const std::string options[] = {"-std=c++17", "-default-device"};
  return options;
}

base::Result<Nvrtc> Nvrtc::load() {
  Nvrtc n;
  auto api = std::make_shared<Api>();
  base::Result<std::shared_ptr<RtcApi>> loaded =
      load_rtc("nvrtc", kLibraries,
               "NVRTC (CUDA's run-time compiler) not found; install the CUDA toolkit or put libnvrtc.so.13 "
               "on the library path");
  if (!loaded) return base::failed(loaded.error());
  api->rtc = std::move(*loaded);
  const RtcApi& rtc = *api->rtc;
  for (const base::Result<void>& bound :
       {bind_function(rtc, "GetNumSupportedArchs", api->GetNumSupportedArchs),
        bind_function(rtc, "GetSupportedArchs", api->GetSupportedArchs),
        bind_function(rtc, "GetPTXSize", api->GetPTXSize), bind_function(rtc, "GetPTX", api->GetPTX),
        bind_function(rtc, "GetCUBINSize", api->GetCUBINSize), bind_function(rtc, "GetCUBIN", api->GetCUBIN)}) {
    if (!bound) return base::failed(bound.error());
  }
  if (const base::Result<void> called = check(rtc, rtc.Version(&n.major_, &n.minor_), "nvrtcVersion"); !called)
    return base::failed(called.error());
  int count = 0;
  if (const base::Result<void> called = check(rtc, api->GetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
      !called)
    return base::failed(called.error());
  n.supported_.resize(static_cast<std::size_t>(std::max(count, 0)));
  if (const base::Result<void> called =
          check(rtc, api->GetSupportedArchs(n.supported_.data()), "nvrtcGetSupportedArchs");
      !called)
    return base::failed(called.error());
  n.library_ = rtc.library;
  n.identity_ = "nvrtc " + n.version() + " " + rtc.build;
  n.api_ = std::move(api);
  return n;
}

base::Result<const Nvrtc*> Nvrtc::get() {
  // A failed load is tried again on the next call; a loaded one is kept
  // until exit (code it made may run until then).
  static std::mutex mutex;
  static std::optional<Nvrtc> nvrtc;
  std::lock_guard lock(mutex);
  if (!nvrtc) {
    base::Result<Nvrtc> loaded = load();
    if (!loaded) return base::failed(loaded.error());
    nvrtc = std::move(*loaded);
  }
  return &*nvrtc;
}

base::Result<void> Nvrtc::check_arch(const CudaArch& arch) const {
  if (std::find(supported_.begin(), supported_.end(), arch.number) != supported_.end()) return {};
  std::string list;
  for (int a : supported_) {
    list += ' ';  // not " " + ...: GCC 12 warns falsely (-Wrestrict) on that
    list += std::to_string(a);
  }
  return base::failed({base::Failure::Kind::invalid, 0,
                       "kiln: NVRTC " + version() + " cannot compile for " + arch.name() + "; it supports" + list});
}

base::Result<GpuCompileOutput> Nvrtc::compile(std::string_view source, const std::string& file_name,
                                              const CudaArch& arch, std::span<const std::string> options) const {
  if (const base::Result<void> known = check_arch(arch); !known) return base::failed(known.error());
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> all = {"--gpu-architecture=" + arch.name()};
  all.insert(all.end(), options.begin(), options.end());
  const base::Result<std::unique_ptr<RtcProgram>> program = RtcProgram::compile(*api_->rtc, source, file_name, all);
  if (!program) return base::failed(program.error());
  GpuCompileOutput out;
  out.log = (*program)->log();
  if (!(*program)->ok()) return out;
  base::Result<std::vector<char>> binary = arch.virtual_arch
                                               ? (*program)->read(api_->GetPTXSize, api_->GetPTX, "nvrtcGetPTX")
                                               : (*program)->read(api_->GetCUBINSize, api_->GetCUBIN, "nvrtcGetCUBIN");
  if (!binary) return base::failed(binary.error());
  out.binary = std::move(*binary);
  out.ok = true;
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace kiln::jit
