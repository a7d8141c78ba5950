#include "jit/rtc_library.hpp"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace kiln::jit {
namespace {

template <typename F>
void bind(const RtcApi& api, std::string_view prefix, std::string_view name, F& function) {
  function = reinterpret_cast<F>(api.symbol(prefix, name));
}

// The real path behind the handle (dladdr of a function in it).
std::string real_file(void* function, const std::string& fallback) {
  Dl_info where{};
  if (::dladdr(function, &where) == 0 || !where.dli_fname) return fallback;
  std::error_code ignored;
  const std::filesystem::path file = std::filesystem::canonical(where.dli_fname, ignored);
  return file.empty() ? std::string(where.dli_fname) : file.string();
}

void fail(const RtcApi& api, RtcApi::Result result, const char* what) {
  if (result != 0) throw std::runtime_error("kiln: " + api.library + ": " + what + ": " + api.GetErrorString(result));
}

}  // namespace

void* RtcApi::symbol(std::string_view prefix, std::string_view name) const {
  const std::string full = std::string(prefix) + std::string(name);
  void* address = ::dlsym(handle, full.c_str());
  if (!address) throw std::runtime_error("kiln: " + library + " lacks " + full + " (too old a version?)");
  return address;
}

std::shared_ptr<RtcApi> load_rtc(std::string_view prefix, std::span<const char* const> libraries,
                                 const std::string& what_is_missing) {
  std::string tried;
  for (const char* name : libraries) {
    void* handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += std::string("\n  ") + name + ": " + ::dlerror();
      continue;
    }
    auto api = std::make_shared<RtcApi>();  // never dlclosed: code it made may run until exit
    api->handle = handle;
    api->library = name;
    bind(*api, prefix, "GetErrorString", api->GetErrorString);
    bind(*api, prefix, "Version", api->Version);
    bind(*api, prefix, "CreateProgram", api->CreateProgram);
    bind(*api, prefix, "DestroyProgram", api->DestroyProgram);
    bind(*api, prefix, "CompileProgram", api->CompileProgram);
    bind(*api, prefix, "GetProgramLogSize", api->GetProgramLogSize);
    bind(*api, prefix, "GetProgramLog", api->GetProgramLog);
    api->file = real_file(reinterpret_cast<void*>(api->Version), name);
    return api;
  }
  throw std::runtime_error("kiln: " + what_is_missing + ". Tried:" + tried);
}

RtcProgram::RtcProgram(const RtcApi& api, std::string_view source, const std::string& file_name,
                       std::span<const std::string> options)
    : api_(api) {
  const std::string text(source);  // NUL-terminated
  fail(api, api.CreateProgram(&handle_, text.c_str(), file_name.c_str(), 0, nullptr, nullptr), "CreateProgram");
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const RtcApi::Result compiled = api.CompileProgram(handle_, static_cast<int>(argv.size()), argv.data());
  std::size_t size = 0;
  if (api.GetProgramLogSize(handle_, &size) == 0 && size > 1) {
    log_.assign(size, '\0');
    if (api.GetProgramLog(handle_, log_.data()) == 0) log_.resize(std::strlen(log_.c_str()));  // up to its NUL
    else log_.clear();
  }
  ok_ = compiled == 0;
  if (!ok_ && log_.empty()) log_ = api.GetErrorString(compiled);
}

RtcProgram::~RtcProgram() {
  if (handle_) api_.DestroyProgram(&handle_);
}

std::vector<char> RtcProgram::read(RtcApi::Result (*size)(RtcApi::Program, std::size_t*),
                                   RtcApi::Result (*copy)(RtcApi::Program, char*), const char* what) const {
  std::size_t bytes = 0;
  fail(api_, size(handle_, &bytes), what);
  std::vector<char> out(bytes);
  fail(api_, copy(handle_, out.data()), what);
  return out;
}

}  // namespace kiln::jit
