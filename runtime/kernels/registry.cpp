#include "runtime/kernels/registry.hpp"

#include <algorithm>
#include <exception>
#include <mutex>

#include "kernels_src/embedded_sources.hpp"
#include "base/log.hpp"
#include "kiln/errors.hpp"
#include "runtime/kernels/cache_key.hpp"

namespace kiln::runtime {

namespace {

// Parsed, with the digest cache keys take (computed here once, not per key).
lang::KernelInfo parse(std::string_view source, std::string_view file_name) {
  lang::KernelInfo info = lang::parse_kernel_source(source, file_name);
  info.source_digest = text_digest(info.source);
  return info;
}

}  // namespace

namespace {

// One embedded kernel, parsed on first use, by whichever Registry asks first.
struct EmbeddedKernel {
  std::string name;  // the file's stem
  const kernels_src::EmbeddedFile* file = nullptr;
  std::once_flag parsed;
  std::shared_ptr<const lang::KernelInfo> info;
  std::exception_ptr error;
};

std::map<std::string, EmbeddedKernel, std::less<>>& embedded_kernels() {
  static std::map<std::string, EmbeddedKernel, std::less<>> table = [] {
    std::map<std::string, EmbeddedKernel, std::less<>> out;
    for (const auto& file : kernels_src::kernels()) {
      std::string name(file.name.substr(0, file.name.rfind('.')));
      EmbeddedKernel& entry = out[name];
      entry.name = std::move(name);
      entry.file = &file;
    }
    return out;
  }();
  return table;
}

// Null when `name` is not embedded; throws KernelSourceError when the file
// does not parse or declares another name (a build mistake: tests parse them all).
const lang::KernelInfo* embedded(std::string_view name) {
  auto& table = embedded_kernels();
  const auto it = table.find(name);
  if (it == table.end()) return nullptr;
  EmbeddedKernel& entry = it->second;
  std::call_once(entry.parsed, [&entry] {
    try {
      entry.info = std::make_shared<const lang::KernelInfo>(parse(entry.file->text, entry.file->name));
      if (entry.info->name != entry.name)
        throw KernelSourceError("kiln: embedded " + std::string(entry.file->name) + " declares the kernel '" +
                                entry.info->name + "', not '" + entry.name + "'");
    } catch (...) {
      entry.error = std::current_exception();
    }
  });
  if (entry.error) std::rethrow_exception(entry.error);
  return entry.info.get();
}

}  // namespace

Registry::Registry() : added_(std::make_shared<const KernelMap>()) {}

const lang::KernelInfo& Registry::add(std::string_view source, std::string_view file_name, std::string_view path,
                                      bool* replaced) {
  lang::KernelInfo info = parse(source, file_name);
  info.user = true;  // the cache's index records its file and digest (kiln warm checks them)
  info.path = path;
  const lang::KernelInfo& added = insert(std::make_shared<const lang::KernelInfo>(std::move(info)), replaced);
  if (!added.checked())  // once: when it is registered
    base::log().warn("kernel '{}' ({}) declares no extents: its calls are not checked against its arrays "
                     "(docs/manual/kernel-language.md, \"Extents\")", added.name, added.file_name);
  return added;
}

const lang::KernelInfo& Registry::insert(std::shared_ptr<const lang::KernelInfo> info, bool* replaced) {
  std::lock_guard lock(mutex_);
  if (replaced != nullptr) *replaced = false;
  if (auto it = embedded_kernels().find(info->name); it != embedded_kernels().end())
    throw KernelSourceError("kiln: " + info->file_name + ": a kernel named '" + info->name +
                            "' is already registered (from " + std::string(it->second.file->name) +
                            ", embedded in kiln): give yours another name");
  auto copy = std::make_shared<KernelMap>(*added_);
  if (auto it = copy->find(info->name); it != copy->end()) {
    if (it->second->source_digest == info->source_digest) return *it->second;  // the same text again
    replaced_.push_back(it->second);
    copy->erase(it);
    if (replaced != nullptr) *replaced = true;
  }
  const lang::KernelInfo& added = *info;
  const std::string name = info->name;
  copy->emplace(name, std::move(info));
  added_ = std::move(copy);
  return added;
}

const lang::KernelInfo& Registry::get(std::string_view name) const {
  std::lock_guard lock(mutex_);
  if (auto it = added_->find(name); it != added_->end()) return *it->second;
  if (const lang::KernelInfo* info = embedded(name)) return *info;
  std::string known;
  for (const std::string& n : names_locked()) known += (known.empty() ? "" : ", ") + n;
  throw UnknownKernelError("kiln: unknown kernel '" + std::string(name) + "'; known kernels: " + known);
}

std::vector<std::string> Registry::names() const {
  std::lock_guard lock(mutex_);
  return names_locked();
}

std::vector<std::string> Registry::names_locked() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : embedded_kernels()) out.push_back(name);
  for (const auto& [name, _] : *added_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kiln::runtime
