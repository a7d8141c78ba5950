#include "jit/rtc_library.hpp"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>

namespace kiln::jit {
namespace {

template <typename F>
base::Result<void> bind_function(const RtcApi& api, std::string_view prefix, std::string_view name,
                                 F& function) {
  const base::Result<void*> address = api.symbol(prefix, name);
  if (!address) return base::failed(address.error());
  function = reinterpret_cast<F>(*address);
  return {};
}

// The real path behind the handle (dladdr of a function in it).
std::string real_file(void* function, const std::string& fallback) {
  Dl_info where{};
  if (::dladdr(function, &where) == 0 || !where.dli_fname) return fallback;
  std::error_code ignored;
  const std::filesystem::path file = std::filesystem::canonical(where.dli_fname, ignored);
  return file.empty() ? std::string(where.dli_fname) : file.string();
}

// The file's name and size: what it is, not where (RtcApi::build).
std::string build_of(const std::string& file) {
  std::error_code failed;
  const std::uintmax_t bytes = std::filesystem::file_size(file, failed);
  return std::filesystem::path(file).filename().string() + " " + (failed ? "?" : std::to_string(bytes)) + " bytes";
}

// A failed call of the library: its own words for `result`.
base::Result<void> check(const RtcApi& api, RtcApi::Result result, const char* what) {
  if (result == 0) return {};
  return base::failed(
      {base::Failure::Kind::io, 0, "kiln: " + api.library + ": " + what + ": " + api.GetErrorString(result)});
}

}  // namespace

base::Result<void*> RtcApi::symbol(std::string_view prefix, std::string_view name) const {
  const std::string full = std::string(prefix) + std::string(name);
  void* address = ::dlsym(handle, full.c_str());
  if (!address) {
    return base::failed(
        {base::Failure::Kind::not_found, 0, "kiln: " + library + " lacks " + full + " (too old a version?)"});
  }
  return address;
}

base::Result<std::shared_ptr<RtcApi>> load_rtc(std::string_view prefix, std::span<const char* const> libraries,
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
    // All bound, in this order; the first that is missing is named.
    for (const base::Result<void>& bound :
         {bind_function(*api, prefix, "GetErrorString", api->GetErrorString),
          bind_function(*api, prefix, "Version", api->Version),
          bind_function(*api, prefix, "CreateProgram", api->CreateProgram),
          bind_function(*api, prefix, "DestroyProgram", api->DestroyProgram),
          bind_function(*api, prefix, "CompileProgram", api->CompileProgram),
          bind_function(*api, prefix, "GetProgramLogSize", api->GetProgramLogSize),
          bind_function(*api, prefix, "GetProgramLog", api->GetProgramLog)}) {
      if (!bound) return base::failed(bound.error());
    }
    api->file = real_file(reinterpret_cast<void*>(api->Version), name);
    api->build = build_of(api->file);
    return api;
  }
  return base::failed({base::Failure::Kind::not_found, 0, "kiln: " + what_is_missing + ". Tried:" + tried});
}

base::Result<std::unique_ptr<RtcProgram>> RtcProgram::compile(const RtcApi& api, std::string_view source,
                                                              const std::string& file_name,
                                                              std::span<const std::string> options) {
  std::unique_ptr<RtcProgram> program(new RtcProgram(api));  // the constructor is private
  const std::string text(source);  // NUL-terminated
  const base::Result<void> created = check(
      api, api.CreateProgram(&program->handle_, text.c_str(), file_name.c_str(), 0, nullptr, nullptr), "CreateProgram");
  if (!created) return base::failed(created.error());
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const RtcApi::Result compiled = api.CompileProgram(program->handle_, static_cast<int>(argv.size()), argv.data());
  std::size_t size = 0;
  std::string& log = program->log_;
  if (api.GetProgramLogSize(program->handle_, &size) == 0 && size > 1) {
    log.assign(size, '\0');
    if (api.GetProgramLog(program->handle_, log.data()) == 0) log.resize(std::strlen(log.c_str()));  // up to its NUL
    else log.clear();
  }
  program->ok_ = compiled == 0;
  if (!program->ok_ && log.empty()) log = api.GetErrorString(compiled);
  return program;
}

RtcProgram::~RtcProgram() {
  if (handle_) api_.DestroyProgram(&handle_);
}

base::Result<std::vector<char>> RtcProgram::read(RtcApi::Result (*size)(RtcApi::Program, std::size_t*),
                                                 RtcApi::Result (*copy)(RtcApi::Program, char*),
                                                 const char* what) const {
  std::size_t bytes = 0;
  if (const base::Result<void> sized = check(api_, size(handle_, &bytes), what); !sized)
    return base::failed(sized.error());
  std::vector<char> out(bytes);
  if (const base::Result<void> copied = check(api_, copy(handle_, out.data()), what); !copied)
    return base::failed(copied.error());
  return out;
}

}  // namespace kiln::jit
