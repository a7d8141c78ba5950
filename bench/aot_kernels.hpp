// The granule's kernels built ahead of time by the system compiler from
// kiln's generic translation units (bench/aot_sources_main.cpp): the
// baseline kiln_stencil_bench times kiln's specialised builds against.
#pragma once

#include <span>
#include <string_view>

#include "kiln/arg.hpp"

namespace kiln_bench {

struct AotKernel {
  std::string_view name;
  int (*entry)(const kiln_arg* const* args, const kiln_value* params, const kiln_context* context);
  // A kernel with a temporary (at most one here) takes it after its
  // arguments, laid out as argument `temporary_like`; -1: none.
  int temporary_like;
};

std::span<const AotKernel> aot_kernels();

}  // namespace kiln_bench
