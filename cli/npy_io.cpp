#include "cli/npy_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <optional>

#include <xtensor/xnpy.hpp>

namespace kiln::cli {
namespace {

struct DtypeName {
  ElementType type;
  std::string_view dtype;
  std::size_t size;
};
// Little-endian only: kiln runs on little-endian hosts and passes the bytes as they lie.
constexpr DtypeName kDtypes[] = {{ElementType::f64, "<f8", 8},
                                 {ElementType::f32, "<f4", 4},
                                 {ElementType::i32, "<i4", 4},
                                 {ElementType::i64, "<i8", 8},
                                 {ElementType::boolean, "|b1", 1}};

const DtypeName& dtype_entry(ElementType type) {
  return *std::find_if(std::begin(kDtypes), std::end(kDtypes), [&](const DtypeName& d) { return d.type == type; });
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw NpyError(path.string() + ": " + what);
}

std::string accepted_dtypes() {
  std::string list;
  for (const DtypeName& d : kDtypes) list += (list.empty() ? "" : ", ") + std::string(d.dtype);
  return list;
}

// Bytes of an array of `shape`; nullopt when an extent is negative or the size overflows.
std::optional<std::size_t> payload_bytes(ElementType type, const std::vector<std::int64_t>& shape) {
  std::size_t bytes = dtype_entry(type).size;
  for (const std::int64_t extent : shape)
    if (extent < 0 || __builtin_mul_overflow(bytes, static_cast<std::size_t>(extent), &bytes)) return std::nullopt;
  return bytes;
}

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
};

// xtensor's parse_header takes this framing for granted (it reads the last
// character of strings that are empty when a header lacks it): check it first,
// so that a malformed header is an error, never undefined behaviour.
void check_framing(std::string text, const std::filesystem::path& path) {
  std::erase(text, ' ');
  const bool framed = text.size() >= 3 && text.front() == '{' && text.back() == '\n' &&
                      text[text.size() - 2] == '}' && text.find("'shape':(") != std::string::npos;
  if (!framed) fail(path, "the header is not a dictionary of 'descr', 'fortran_order' and 'shape'");
}

// xtensor reads an extent that is not a number as 0 and "-1" as 2^64 - 1:
// the shape it parsed must be the one the header spells.
void check_shape(std::string text, const std::vector<std::size_t>& shape, const std::filesystem::path& path) {
  std::erase(text, ' ');
  std::string dims;
  for (const std::size_t extent : shape) dims += (dims.empty() ? "" : ",") + std::to_string(extent);
  if (text.find("'shape':(" + dims + ")") == std::string::npos &&
      text.find("'shape':(" + dims + ",)") == std::string::npos)
    fail(path, "its shape is not a tuple of non-negative integers");
}

// NumPy's own limit (numpy.lib.format's max_header_size): a real header is a
// few hundred bytes. A larger length is a broken or hostile file, refused
// before a string of that size is allocated.
constexpr std::uint32_t kMaxHeaderLength = 10000;

// The header's text: its length (2 bytes in format 1.0, 4 in 2.0, little-
// endian, unsigned), checked, then that many bytes. Read here, not by
// xtensor's read_header_*: they assemble the length from signed chars, so a
// length byte of 0x80 or more (a header of 128 bytes or more) becomes a
// length near 4 GiB, which a fuzzed `kiln run --in` file ran out of memory on.
std::string read_header_text(std::istream& file, unsigned char major, const std::filesystem::path& path) {
  unsigned char bytes[4] = {};
  const int width = major == 1 ? 2 : 4;
  if (!file.read(reinterpret_cast<char*>(bytes), width)) fail(path, "the file ends inside its header");
  std::uint32_t length = 0;
  for (int i = width; i-- > 0;) length = length << 8 | bytes[i];
  if (length > kMaxHeaderLength)
    fail(path, "its header claims " + std::to_string(length) + " bytes, more than NumPy's limit of " +
                   std::to_string(kMaxHeaderLength));
  std::string text(length, '\0');
  if (!file.read(text.data(), length)) fail(path, "the file ends inside its header");
  return text;
}

Header read_header(std::istream& file, const std::filesystem::path& path) {
  try {
    unsigned char major = 0, minor = 0;
    xt::detail::read_magic(file, &major, &minor);
    if (!((major == 1 || major == 2) && minor == 0))
      fail(path, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                     " is not supported (1.0 and 2.0 are)");
    const std::string text = read_header_text(file, major, path);
    if (!file) fail(path, "the file ends inside its header");
    check_framing(text, path);
    Header header;
    xt::detail::parse_header(text, header.descr, &header.fortran_order, header.shape);
    check_shape(text, header.shape, path);
    return header;
  } catch (const NpyError&) {
    throw;
  } catch (const std::runtime_error& e) {  // xtensor's own checks
    fail(path, std::string("not a valid .npy file (") + e.what() + ")");
  }
}

std::vector<std::int64_t> signed_shape(const std::vector<std::size_t>& shape, const std::filesystem::path& path) {
  std::vector<std::int64_t> out;
  for (const std::size_t extent : shape) {
    if (extent > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
      fail(path, "an extent of its shape is out of range");
    out.push_back(static_cast<std::int64_t>(extent));
  }
  return out;
}

// The payload must be exactly what the header describes: a shorter file is
// cut off, a longer one is not what its header says it is.
void check_payload_size(std::ifstream& file, const std::filesystem::path& path, std::size_t expected,
                        const std::string& described) {
  std::error_code error;
  const std::uintmax_t total = std::filesystem::file_size(path, error);
  if (error) fail(path, "cannot tell its size (" + error.message() + ")");
  const std::uintmax_t remaining = total - static_cast<std::uintmax_t>(file.tellg());
  if (remaining != expected)
    fail(path, "holds " + std::to_string(remaining) + " bytes of data, but its header describes " + described +
                   ", " + std::to_string(expected) + " bytes");
}

}  // namespace

HostArray::HostArray(ElementType type, std::vector<std::int64_t> shape, Order order, bool zeroed)
    : type_(type), shape_(std::move(shape)), order_(order), size_bytes_(0) {
  const std::optional<std::size_t> bytes = payload_bytes(type_, shape_);
  if (!bytes) throw NpyError("an array of shape " + shape_text(shape_) + " is too large");
  size_bytes_ = *bytes;
  try {
    // Zeroing a buffer that a file read overwrites at once would touch every page twice.
    data_ = zeroed ? std::make_unique<std::byte[]>(size_bytes_)
                   : std::make_unique_for_overwrite<std::byte[]>(size_bytes_);
  } catch (const std::bad_alloc&) {
    throw NpyError("cannot allocate " + std::to_string(size_bytes_) + " bytes for an array of shape " +
                   shape_text(shape_));
  }
}

HostArray HostArray::zeros(ElementType type, std::vector<std::int64_t> shape, Order order) {
  return HostArray(type, std::move(shape), order, true);
}

kiln_arg HostArray::view() const {
  const std::size_t rank = shape_.size();
  if (rank == 0 || rank > static_cast<std::size_t>(kMaxRank))
    throw NpyError("an array of shape " + shape_text(shape_) + " cannot be a kernel argument (rank 1 to 4)");
  kiln_arg arg{};
  arg.data = data_.get();
  arg.type = static_cast<std::int32_t>(type_);
  arg.rank = static_cast<std::int32_t>(rank);
  // From the contiguous dimension outwards: the last in C order, the first in Fortran order.
  std::int64_t step = 1;
  for (std::size_t i = 0; i < rank; ++i) {
    const std::size_t d = order_ == Order::fortran ? i : rank - 1 - i;
    arg.shape[d] = shape_[d];
    arg.strides[d] = step;
    step *= shape_[d];
  }
  return arg;
}

HostArray load_npy(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(path, std::string("cannot open it (") + std::strerror(errno) + ")");
  const Header header = read_header(file, path);
  const auto* entry = std::find_if(std::begin(kDtypes), std::end(kDtypes),
                                   [&](const DtypeName& d) { return d.dtype == header.descr; });
  if (entry == std::end(kDtypes))
    fail(path, "dtype '" + header.descr + "' is not one kiln takes (" + accepted_dtypes() + ")");
  std::vector<std::int64_t> shape = signed_shape(header.shape, path);
  const std::optional<std::size_t> bytes = payload_bytes(entry->type, shape);
  if (!bytes) fail(path, "its shape " + shape_text(shape) + " is too large");
  check_payload_size(file, path, *bytes, shape_text(shape) + " of " + std::string(entry->dtype));

  HostArray array(entry->type, std::move(shape), header.fortran_order ? Order::fortran : Order::c, false);
  if (!file.read(reinterpret_cast<char*>(array.data()), static_cast<std::streamsize>(array.size_bytes())))
    fail(path, "reading its data failed");
  return array;
}

void save_npy(const std::filesystem::path& path, const HostArray& array) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) fail(path, std::string("cannot create it (") + std::strerror(errno) + ")");
  xt::detail::write_header(file, std::string(npy_dtype(array.type())), array.order() == Order::fortran,
                           array.shape());
  file.write(reinterpret_cast<const char*>(array.data()), static_cast<std::streamsize>(array.size_bytes()));
  file.close();
  if (!file) fail(path, "writing it failed");
}

std::string_view npy_dtype(ElementType type) { return dtype_entry(type).dtype; }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace kiln::cli
