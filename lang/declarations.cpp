#include "lang/declarations.hpp"

namespace kiln::lang {

const ArgDecl* KernelInfo::find_arg(std::string_view wanted) const {
  for (const auto& arg : args)
    if (arg.name == wanted) return &arg;
  return nullptr;
}

const ParamDecl* KernelInfo::find_param(std::string_view wanted) const {
  for (const auto& param : params)
    if (param.name == wanted) return &param;
  return nullptr;
}

bool KernelInfo::checked() const {
  for (const auto& arg : args)
    if (!arg.extents.empty()) return true;
  return false;
}

}  // namespace kiln::lang
