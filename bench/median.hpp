// The median the benchmark programs report: of an odd count the middle value,
// of an even count the mean of the two middle ones. Not for an empty list.
#pragma once

#include <algorithm>
#include <vector>

namespace kiln_bench {

inline double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace kiln_bench
