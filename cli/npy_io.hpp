// NumPy .npy files as kernel arguments. A file is read once into one buffer
// and handed to a kernel where it lies: its C or Fortran order becomes the
// strides of the kiln_arg, so no element is copied or reordered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/errors.hpp"

namespace kiln::cli {

// A file that cannot be read or written as .npy; the message names the file and the cause.
class NpyError : public Error {
 public:
  using Error::Error;
};

enum class Order {
  c,        // row-major: the last index is contiguous (NumPy's default)
  fortran,  // column-major: the first index is contiguous (ICON's fields)
};

// An array that owns its elements, contiguous in C or Fortran order.
class HostArray {
 public:
  // Elements start as zeros. Throws NpyError when the shape's size overflows or cannot be allocated.
  static HostArray zeros(ElementType type, std::vector<std::int64_t> shape, Order order);

  ElementType type() const { return type_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  Order order() const { return order_; }
  std::byte* data() const { return data_.get(); }
  std::size_t size_bytes() const { return size_bytes_; }

  // The kernel argument for this array: its elements in place, with the
  // strides (in elements) that its order implies. Rank 1 to 4.
  kiln_arg view() const;

 private:
  friend HostArray load_npy(const std::filesystem::path& path);
  HostArray(ElementType type, std::vector<std::int64_t> shape, Order order, bool zeroed);

  ElementType type_;
  std::vector<std::int64_t> shape_;
  Order order_;
  std::size_t size_bytes_;
  std::unique_ptr<std::byte[]> data_;
};

// Reads a .npy file (format 1.0 or 2.0, little-endian, a dtype kiln takes:
// <f8 <f4 <i4 <i8 |b1). xtensor parses the header; the payload is read in one
// piece straight into the array. Throws NpyError naming the file and the cause.
HostArray load_npy(const std::filesystem::path& path);

// Writes `array` as .npy in its own order (fortran_order follows it). Throws NpyError.
void save_npy(const std::filesystem::path& path, const HostArray& array);

// The .npy dtype of an element type: "<f8", "<f4", "<i4", "<i8", "|b1".
std::string_view npy_dtype(ElementType type);

// A shape as NumPy prints it: "(4, 6)", "(5,)", "()".
std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace kiln::cli
