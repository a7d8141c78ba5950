#include "jit/nvrtc.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace kiln::jit {

// NVRTC's C API, declared here rather than through nvrtc.h: kiln builds
// where no CUDA toolkit is installed. The handful of signatures below are
// NVRTC's stable ABI (unchanged since CUDA 7, CUBIN calls since 11.1).
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
constexpr nvrtcResult kNvrtcSuccess = 0;

struct Nvrtc::Api {
  void* handle = nullptr;
  const char* (*GetErrorString)(nvrtcResult);
  nvrtcResult (*Version)(int*, int*);
  nvrtcResult (*GetNumSupportedArchs)(int*);
  nvrtcResult (*GetSupportedArchs)(int*);
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*DestroyProgram)(nvrtcProgram*);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, std::size_t*);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*GetPTXSize)(nvrtcProgram, std::size_t*);
  nvrtcResult (*GetPTX)(nvrtcProgram, char*);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, std::size_t*);
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*);
};

namespace {

// The soname of CUDA 13, then 12, then the toolkit's default place.
constexpr const char* kLibraries[] = {"libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"};

template <typename F>
void bind(void* handle, const char* name, F& function, const std::string& library) {
  function = reinterpret_cast<F>(::dlsym(handle, name));
  if (!function) throw std::runtime_error("kiln: " + library + " lacks " + name + " (NVRTC too old?)");
}

std::shared_ptr<Nvrtc::Api> load_api(std::string& library) {
  std::string tried;
  for (const char* name : kLibraries) {
    void* handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += std::string("\n  ") + name + ": " + ::dlerror();
      continue;
    }
    library = name;
    auto api = std::make_shared<Nvrtc::Api>();
    api->handle = handle;
    bind(handle, "nvrtcGetErrorString", api->GetErrorString, library);
    bind(handle, "nvrtcVersion", api->Version, library);
    bind(handle, "nvrtcGetNumSupportedArchs", api->GetNumSupportedArchs, library);
    bind(handle, "nvrtcGetSupportedArchs", api->GetSupportedArchs, library);
    bind(handle, "nvrtcCreateProgram", api->CreateProgram, library);
    bind(handle, "nvrtcDestroyProgram", api->DestroyProgram, library);
    bind(handle, "nvrtcCompileProgram", api->CompileProgram, library);
    bind(handle, "nvrtcGetProgramLogSize", api->GetProgramLogSize, library);
    bind(handle, "nvrtcGetProgramLog", api->GetProgramLog, library);
    bind(handle, "nvrtcGetPTXSize", api->GetPTXSize, library);
    bind(handle, "nvrtcGetPTX", api->GetPTX, library);
    bind(handle, "nvrtcGetCUBINSize", api->GetCUBINSize, library);
    bind(handle, "nvrtcGetCUBIN", api->GetCUBIN, library);
    return api;  // never dlclosed: compiled code may be in use until exit
  }
  throw std::runtime_error("kiln: NVRTC (CUDA's run-time compiler) not found; install the CUDA toolkit or put "
                           "libnvrtc.so.13 on the library path. Tried:" + tried);
}

void check(const Nvrtc::Api& api, nvrtcResult result, const char* call) {
  if (result != kNvrtcSuccess) throw std::runtime_error(std::string("kiln: ") + call + ": " + api.GetErrorString(result));
}

// Destroys the program on every way out.
struct Program {
  const Nvrtc::Api& api;
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle) api.DestroyProgram(&handle);
  }
};

std::string program_log(const Nvrtc::Api& api, nvrtcProgram program) {
  std::size_t size = 0;
  if (api.GetProgramLogSize(program, &size) != kNvrtcSuccess || size <= 1) return {};
  std::string log(size, '\0');
  if (api.GetProgramLog(program, log.data()) != kNvrtcSuccess) return {};
  log.resize(size - 1);  // the terminating NUL
  return log;
}

}  // namespace

std::string CudaArch::name() const {
  std::string text = virtual_arch ? "compute_" : "sm_";
  text += std::to_string(number);
  return text;
}

// C++17: what NVRTC 12 and 13 both take. (The prelude marks every helper
// kernels call __device__, constexpr ones too: NVRTC has no relaxed constexpr.)
std::span<const std::string> Nvrtc::kernel_options() {
  static const std::string options[] = {"-std=c++17"};
  return options;
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

const Nvrtc& Nvrtc::get() {
  // A failed load throws out of the initialiser, so the next call tries again.
  static const Nvrtc nvrtc = [] {
    Nvrtc n;
    auto api = load_api(n.library_);
    check(*api, api->Version(&n.major_, &n.minor_), "nvrtcVersion");
    int count = 0;
    check(*api, api->GetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
    n.supported_.resize(static_cast<std::size_t>(std::max(count, 0)));
    check(*api, api->GetSupportedArchs(n.supported_.data()), "nvrtcGetSupportedArchs");
    Dl_info where{};
    std::string file = n.library_;
    if (::dladdr(reinterpret_cast<void*>(api->Version), &where) != 0 && where.dli_fname) {
      std::error_code ignored;
      file = std::filesystem::canonical(where.dli_fname, ignored).string();
      if (file.empty()) file = where.dli_fname;
    }
    n.identity_ = "nvrtc " + n.version() + " " + file;
    n.api_ = std::move(api);
    return n;
  }();
  return nvrtc;
}

GpuCompileOutput Nvrtc::compile(std::string_view source, const std::string& file_name, const CudaArch& arch,
                                std::span<const std::string> options) const {
  if (std::find(supported_.begin(), supported_.end(), arch.number) == supported_.end()) {
    std::string list;
    for (int a : supported_) {
      list += ' ';  // not " " + ...: GCC 12 warns falsely (-Wrestrict) on that
      list += std::to_string(a);
    }
    throw std::invalid_argument("kiln: NVRTC " + version() + " cannot compile for " + arch.name() +
                                "; it supports" + list);
  }
  const auto start = std::chrono::steady_clock::now();
  const Api& api = *api_;
  const std::string text(source);  // NVRTC wants a NUL-terminated copy
  Program program{api};
  check(api, api.CreateProgram(&program.handle, text.c_str(), file_name.c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  std::vector<std::string> all = {"--gpu-architecture=" + arch.name()};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& o : all) argv.push_back(o.c_str());

  GpuCompileOutput out;
  const nvrtcResult compiled = api.CompileProgram(program.handle, static_cast<int>(argv.size()), argv.data());
  out.log = program_log(api, program.handle);
  if (compiled != kNvrtcSuccess) {
    if (out.log.empty()) out.log = api.GetErrorString(compiled);
    return out;
  }
  std::size_t size = 0;
  if (arch.virtual_arch) {
    check(api, api.GetPTXSize(program.handle, &size), "nvrtcGetPTXSize");
    out.binary.resize(size);
    check(api, api.GetPTX(program.handle, out.binary.data()), "nvrtcGetPTX");
  } else {
    check(api, api.GetCUBINSize(program.handle, &size), "nvrtcGetCUBINSize");
    out.binary.resize(size);
    check(api, api.GetCUBIN(program.handle, out.binary.data()), "nvrtcGetCUBIN");
  }
  out.ok = true;
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace kiln::jit
