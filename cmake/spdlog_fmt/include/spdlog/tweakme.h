// kiln's addition to spdlog's tweakme.h, the header spdlog includes first
// (spdlog/common.h) so that a project can configure it. Found before the
// installed one because kiln_spdlog puts this folder on the include path
// (CMakeLists.txt); the installed one (Debian's sets SPDLOG_FMT_EXTERNAL) is
// included first, unchanged.
//
// What it adds: fmt's formatting engine, detail::vformat_to<char>, is declared
// explicitly instantiated elsewhere (fmt.cpp here, in kiln_spdlog), so a file
// that logs does not compile its own copy. Every log call instantiates it, and
// its code generation (integer and floating-point writers, the format-string
// parser) was most of the ~12 s at -O3 that each file including base/log.hpp
// spent on spdlog and fmt. fmt's own format.cc makes the same instantiation;
// fmt 9 omits the matching declaration in format.h for a clang quirk only
// (fmt issue 2377; kiln builds with g++).
#pragma once
#include_next <spdlog/tweakme.h>

#if defined(SPDLOG_COMPILED_LIB) && defined(SPDLOG_FMT_EXTERNAL) && !defined(FMT_HEADER_ONLY)
#include <fmt/core.h>
FMT_BEGIN_NAMESPACE
namespace detail {
extern template void vformat_to<char>(buffer<char>&, basic_string_view<char>,
                                      basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
}  // namespace detail
FMT_END_NAMESPACE
#endif
