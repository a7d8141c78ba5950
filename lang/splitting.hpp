// Whether a kernel's body may run on several threads (docs/manual/threads.md,
// "Which kernels split"). A call on n threads runs the whole body on each
// thread; only the prelude's phase helpers (kiln::for_each_point,
// for_each_point_3d, for_each_column, for_each_level_up, for_each_level_down)
// share their points among the threads. Any other statement runs on every
// thread: a plain loop that accumulates into an array then adds n times, and
// any write into memory outside a phase is a race. So a body splits only when
//   - it calls at least one phase helper, and
//   - outside the helpers' calls it writes no element of any array: no
//     assignment, compound assignment or increment whose target is an
//     element (`a(i) = `, `p[i] += `, `*p = `, `x->y = `, `++a(i)`). A
//     named lambda (`auto f = [&](...) { a(c, k) = ...; };`) counts as inside
//     when every use of its name is inside a helper's call (or inside another
//     such lambda).
// Locals (`const double x = ...`, `auto [lo, hi] = ...`) are each thread's
// own and may be written anywhere. The rule reads the text, not the C++: it
// refuses some bodies that would be safe (a write guarded by `if (thread ==
// 0)` cannot be written at all), never accepts one that writes an element
// outside a phase.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln::lang {

// The phase helpers: the calls codegen passes the call's context to.
inline constexpr std::string_view kPhaseHelpers[] = {"for_each_point", "for_each_point_3d", "for_each_column",
                                                     "for_each_level_up", "for_each_level_down"};

// Why a body cannot be split among threads, with the line (1-based, in the
// kernel's source) that shows it; nullopt when it can.
struct SplitRefusal {
  int line = 0;
  std::string why;
};
std::optional<SplitRefusal> why_not_split(std::string_view body);

}  // namespace kiln::lang
