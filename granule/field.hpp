// A float64 field [rows][cols] in one of the two layouts the kernels take:
// level-contiguous (C order, as NumPy) or horizontal-contiguous (ICON's
// Fortran order (nproma, nlev), the one GPUs coalesce). Owns its values and
// hands out the kiln_arg view that points at them.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kiln/arg.hpp"

namespace kiln::granule {

enum class Layout { c, fortran };

class Field {
 public:
  Field() = default;
  Field(std::int64_t rows, std::int64_t cols, Layout layout)
      : rows_(rows), cols_(cols), layout_(layout), values_(static_cast<std::size_t>(rows * cols), 0.0) {}

  // One-dimensional ([rows]): the layout does not matter.
  static Field column(std::int64_t rows) { return Field(rows, 1, Layout::c, true); }

  double& operator()(std::int64_t row, std::int64_t col) { return values_[offset(row, col)]; }
  double operator()(std::int64_t row, std::int64_t col) const { return values_[offset(row, col)]; }

  // Every value drawn uniformly from [lo, hi), in (row, col) order: both
  // layouts hold the same values for the same seed.
  void fill_random(double lo, double hi, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> draw(lo, hi);
    for (std::int64_t row = 0; row < rows_; ++row)
      for (std::int64_t col = 0; col < cols_; ++col) (*this)(row, col) = draw(rng);
  }

  // The view a kernel call takes; valid while this field lives and keeps its size.
  kiln_arg arg() {
    if (one_dimensional_) return c_array(values_.data(), {rows_});
    return layout_ == Layout::c ? c_array(values_.data(), {rows_, cols_}) : f_array(values_.data(), {rows_, cols_});
  }

  const std::vector<double>& values() const { return values_; }
  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }

 private:
  Field(std::int64_t rows, std::int64_t cols, Layout layout, bool one_dimensional)
      : Field(rows, cols, layout) {
    one_dimensional_ = one_dimensional;
  }
  std::size_t offset(std::int64_t row, std::int64_t col) const {
    return static_cast<std::size_t>(layout_ == Layout::c ? row * cols_ + col : col * rows_ + row);
  }

  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  Layout layout_ = Layout::c;
  bool one_dimensional_ = false;
  std::vector<double> values_;
};

}  // namespace kiln::granule
