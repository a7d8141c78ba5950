#include "lang/identity.hpp"

namespace kiln::lang {

std::string_view codegen_digest() { return KILN_CODEGEN_DIGEST; }

}  // namespace kiln::lang
