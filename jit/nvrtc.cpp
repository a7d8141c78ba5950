#include "jit/nvrtc.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <stdexcept>

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
void bind(const RtcApi& rtc, const char* name, F& function) {
  function = reinterpret_cast<F>(rtc.symbol("nvrtc", name));
}

void check(const RtcApi& rtc, RtcApi::Result result, const char* call) {
  if (result != 0) throw std::runtime_error(std::string("kiln: ") + call + ": " + rtc.GetErrorString(result));
}

}  // namespace

std::string CudaArch::name() const {
  std::string text = virtual_arch ? "compute_" : "sm_";
  text += std::to_string(number);
  return text;
}

CudaArch parse_cuda_arch(std::string_view text) {
  CudaArch arch;
  std::string_view digits;
  if (text.starts_with("sm_")) {
    digits = text.substr(3);
  } else if (text.starts_with("compute_")) {
    digits = text.substr(8);
    arch.virtual_arch = true;
  }
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), arch.number);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || arch.number <= 0)
    throw std::invalid_argument("kiln: '" + std::string(text) + "' is not a CUDA architecture (sm_90, compute_90, ...)");
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

const Nvrtc& Nvrtc::get() {
  // A failed load throws out of the initialiser, so the next call tries again.
  static const Nvrtc nvrtc = [] {
    Nvrtc n;
    auto api = std::make_shared<Api>();
    api->rtc = load_rtc("nvrtc", kLibraries,
                        "NVRTC (CUDA's run-time compiler) not found; install the CUDA toolkit or put libnvrtc.so.13 "
                        "on the library path");
    const RtcApi& rtc = *api->rtc;
    bind(rtc, "GetNumSupportedArchs", api->GetNumSupportedArchs);
    bind(rtc, "GetSupportedArchs", api->GetSupportedArchs);
    bind(rtc, "GetPTXSize", api->GetPTXSize);
    bind(rtc, "GetPTX", api->GetPTX);
    bind(rtc, "GetCUBINSize", api->GetCUBINSize);
    bind(rtc, "GetCUBIN", api->GetCUBIN);
    check(rtc, rtc.Version(&n.major_, &n.minor_), "nvrtcVersion");
    int count = 0;
    check(rtc, api->GetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
    n.supported_.resize(static_cast<std::size_t>(std::max(count, 0)));
    check(rtc, api->GetSupportedArchs(n.supported_.data()), "nvrtcGetSupportedArchs");
    n.library_ = rtc.library;
    n.identity_ = "nvrtc " + n.version() + " " + rtc.file;
    n.api_ = std::move(api);
    return n;
  }();
  return nvrtc;
}

void Nvrtc::check_arch(const CudaArch& arch) const {
  if (std::find(supported_.begin(), supported_.end(), arch.number) != supported_.end()) return;
  std::string list;
  for (int a : supported_) {
    list += ' ';  // not " " + ...: GCC 12 warns falsely (-Wrestrict) on that
    list += std::to_string(a);
  }
  throw std::invalid_argument("kiln: NVRTC " + version() + " cannot compile for " + arch.name() + "; it supports" +
                              list);
}

GpuCompileOutput Nvrtc::compile(std::string_view source, const std::string& file_name, const CudaArch& arch,
                                std::span<const std::string> options) const {
  check_arch(arch);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> all = {"--gpu-architecture=" + arch.name()};
  all.insert(all.end(), options.begin(), options.end());
  const RtcProgram program(*api_->rtc, source, file_name, all);
  GpuCompileOutput out;
  out.log = program.log();
  if (!program.ok()) return out;
  out.binary = arch.virtual_arch ? program.read(api_->GetPTXSize, api_->GetPTX, "nvrtcGetPTX")
                                 : program.read(api_->GetCUBINSize, api_->GetCUBIN, "nvrtcGetCUBIN");
  out.ok = true;
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace kiln::jit
