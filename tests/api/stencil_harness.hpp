// Runs a kernel of kernels_src/ on one set of arguments three ways (specialised,
// generic, the independent reference) in both memory layouts, and checks that
// specialised and generic agree bit for bit, that both match the reference,
// that nothing outside the domain changes, and that the layouts (C order,
// Fortran order, ICON's blocks) agree bit for bit.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "tests/api/test_support.hpp"

namespace kiln::testing {

// How the arrays of a call lie in memory: C order (cols contiguous), Fortran
// order (rows contiguous) or ICON's blocks of Fortran order (nproma, cols,
// nblks), the fields' horizontal rows split into blocks of nproma.
struct Layout {
  enum class Order { c, fortran, blocked } order = Order::c;
  std::int64_t nproma = 0;  // blocked only
  static Layout c() { return {Order::c, 0}; }
  static Layout fortran() { return {Order::fortran, 0}; }
  static Layout blocked(std::int64_t nproma) { return {Order::blocked, nproma}; }
  std::string name() const {
    return order == Order::c ? "C order" : order == Order::fortran ? "Fortran order" : "blocked, nproma " + std::to_string(nproma);
  }
};

// A rank-1 array [rows] (cols == 0) or a rank-2 array [rows][cols] in one of
// the layouts above. Only fields over horizontal rows are blocked (nproma >
// 0); tables and vertical profiles stay flat, as in ICON with kiln's tables.
template <class T>
struct Array {
  std::int64_t rows = 0, cols = 0;
  bool fortran = false;
  std::int64_t nproma = 0;  // > 0: blocked
  std::vector<T> data;

  Array(std::int64_t r, std::int64_t c, bool f, T fill, std::int64_t p = 0)
      : rows(r), cols(c), fortran(f || p > 0), nproma(p), data(size(r, c, p), fill) {}
  static std::size_t size(std::int64_t r, std::int64_t c, std::int64_t p = 0) {
    const std::int64_t padded = p > 0 ? (r + p - 1) / p * p : r;
    return std::size_t(padded) * std::size_t(c ? c : 1);
  }
  std::int64_t blocks() const { return (rows + nproma - 1) / nproma; }

  std::size_t at(std::int64_t r, std::int64_t c) const {
    if (nproma > 0) return std::size_t(r % nproma + (c + r / nproma * width()) * nproma);
    if (cols == 0) return std::size_t(r);
    return std::size_t(fortran ? c * rows + r : r * cols + c);
  }
  T& operator()(std::int64_t r, std::int64_t c = 0) { return data[at(r, c)]; }
  const T& operator()(std::int64_t r, std::int64_t c = 0) const { return data[at(r, c)]; }
  std::int64_t width() const { return cols ? cols : 1; }

  // The arguments hold a pointer: the kernel writes through it even from a const Array.
  kiln_arg view() const {
    if (nproma > 0)
      return cols == 0 ? f_array(data.data(), {nproma, blocks()}) : f_array(data.data(), {nproma, cols, blocks()});
    if (cols == 0) return c_array(data.data(), {rows});
    return fortran ? f_array(data.data(), {rows, cols}) : c_array(data.data(), {rows, cols});
  }

  // The padding of the last block (no row of the array) holds the same bits in both.
  bool same_padding(const Array& other) const {
    for (std::int64_t r = rows; nproma > 0 && r < blocks() * nproma; ++r)
      for (std::int64_t c = 0; c < width(); ++c)
        if (std::memcmp(&data[at(r, c)], &other.data[at(r, c)], sizeof(T)) != 0) return false;
    return true;
  }
};

using Field = Array<double>;
using IndexArray = Array<std::int32_t>;

inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A quiet NaN with a payload: what an output holds before a call. Any read of
// it shows in the results, and an untouched point keeps its exact bits.
inline double poison() {
  const std::uint64_t bits = 0x7ff8'0000'dead'beefULL;
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// A kernel's arguments in declaration order, by name: arrays and scalars.
class Arguments {
 public:
  explicit Arguments(Layout layout) : layout_(layout) {}
  const Layout& layout() const { return layout_; }

  // A field over horizontal rows, [rows][cols] (cols == 0: [rows]), of values
  // drawn from [lo, hi) in logical order, seeded by its position: every
  // layout holds the same values.
  Field& random(const std::string& name, std::int64_t rows, std::int64_t cols, double lo = -1.0, double hi = 1.0);
  Field& filled(const std::string& name, std::int64_t rows, std::int64_t cols, double value);
  // A vertical profile [levels]: never blocked.
  Field& profile(const std::string& name, std::int64_t levels, double lo, double hi);
  IndexArray& table(const std::string& name, const std::vector<std::int32_t>& row_major, std::int64_t rows,
               std::int64_t cols);
  void scalar(const std::string& name, double value) { entries_.push_back({name, value}); }

  Field& field(const std::string& name) { return std::get<Field>(find(name)); }
  const Field& field(const std::string& name) const { return std::get<Field>(find(name)); }
  const IndexArray& table(const std::string& name) const { return std::get<IndexArray>(find(name)); }
  double scalar(const std::string& name) const { return std::get<double>(find(name)); }

  // `settings` (domain and static values) plus the strides of every array
  // (and the blocks of the blocked ones).
  Spec spec(const Spec& settings) const;
  // `settings` plus the blocks of the blocked arrays: what a generic build needs.
  Spec generic_spec(const Spec& settings) const;
  void run(const Kernel& kernel, int threads = 0);  // 0: the handle's own thread count
  // The call's arguments in declaration order: views of this object's arrays
  // (through which a kernel writes), scalars by value.
  std::vector<kiln_arg> views() const;

 private:
  using Value = std::variant<Field, IndexArray, double>;
  struct Entry {
    std::string name;
    Value value;
  };
  Value& find(const std::string& name);
  const Value& find(const std::string& name) const;

  Field& add(const std::string& name, std::int64_t rows, std::int64_t cols, double value, bool horizontal);
  void fill_random(Field& f, double lo, double hi);

  Layout layout_;
  std::vector<Entry> entries_;
};

inline void Arguments::fill_random(Field& f, double lo, double hi) {
  const unsigned seed = 1000 + unsigned(entries_.size() - 1);
  const std::vector<double> values = random_field(Field::size(f.rows, f.cols), lo, hi, seed);
  for (std::int64_t r = 0; r < f.rows; ++r)
    for (std::int64_t c = 0; c < f.width(); ++c) f(r, c) = values[std::size_t(r * f.width() + c)];
}

inline Field& Arguments::random(const std::string& name, std::int64_t rows, std::int64_t cols, double lo,
                                double hi) {
  Field& f = add(name, rows, cols, 0.0, true);
  fill_random(f, lo, hi);
  return f;
}

inline Field& Arguments::profile(const std::string& name, std::int64_t levels, double lo, double hi) {
  Field& f = add(name, levels, 0, 0.0, false);
  fill_random(f, lo, hi);
  return f;
}

inline Field& Arguments::filled(const std::string& name, std::int64_t rows, std::int64_t cols, double value) {
  return add(name, rows, cols, value, true);
}

inline Field& Arguments::add(const std::string& name, std::int64_t rows, std::int64_t cols, double value,
                             bool horizontal) {
  const bool blocked = layout_.order == Layout::Order::blocked && horizontal;
  entries_.push_back({name, Field(rows, cols, layout_.order != Layout::Order::c, value, blocked ? layout_.nproma : 0)});
  return std::get<Field>(entries_.back().value);
}

inline IndexArray& Arguments::table(const std::string& name, const std::vector<std::int32_t>& row_major,
                               std::int64_t rows, std::int64_t cols) {
  entries_.push_back({name, IndexArray(rows, cols, layout_.order != Layout::Order::c, 0)});
  IndexArray& t = std::get<IndexArray>(entries_.back().value);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) t(r, c) = row_major[std::size_t(r * cols + c)];
  return t;
}

inline Arguments::Value& Arguments::find(const std::string& name) {
  for (Entry& e : entries_)
    if (e.name == name) return e.value;
  throw std::invalid_argument("no argument " + name);
}

inline const Arguments::Value& Arguments::find(const std::string& name) const {
  return const_cast<Arguments*>(this)->find(name);
}

inline Spec Arguments::spec(const Spec& settings) const {
  Spec spec = settings;
  for (const Entry& e : entries_) {
    if (const Field* f = std::get_if<Field>(&e.value))
      f->nproma > 0 ? spec.blocked_like(e.name, f->view()) : spec.strides_of(e.name, f->view());
    if (const IndexArray* t = std::get_if<IndexArray>(&e.value)) spec.strides_of(e.name, t->view());
  }
  return spec;
}

inline Spec Arguments::generic_spec(const Spec& settings) const {
  Spec spec = settings;
  for (const Entry& e : entries_)
    if (const Field* f = std::get_if<Field>(&e.value); f && f->nproma > 0) spec.blocked(e.name, f->nproma);
  return spec;
}

inline std::vector<kiln_arg> Arguments::views() const {
  std::vector<kiln_arg> args;
  for (const Entry& e : entries_) {
    if (const Field* f = std::get_if<Field>(&e.value)) args.push_back(f->view());
    else if (const IndexArray* t = std::get_if<IndexArray>(&e.value)) args.push_back(t->view());
    else args.push_back(kiln::scalar(std::get<double>(e.value)));
  }
  return args;
}

inline void Arguments::run(const Kernel& kernel, int threads) {
  const std::vector<kiln_arg> args = views();
  if (threads == 0) return kernel.invoke(args);
  std::vector<const kiln_arg*> pointers;
  for (const kiln_arg& a : args) pointers.push_back(&a);
  kernel.invoke_on(threads, pointers.data(), pointers.size());
}

// The index box a kernel may write: [hs, he) x [vs, ve) of the domain entity.
struct Box {
  std::int64_t hs, he, vs, ve;
  bool contains(std::int64_t h, std::int64_t k) const { return h >= hs && h < he && k >= vs && k < ve; }
  bool empty() const { return he <= hs || ve <= vs; }
};

// Reads back a value the settings hold (domain and static parameters).
inline std::int64_t int_setting(const Spec& settings, const std::string& name) {
  const Spec::Entry* e = settings.find(name);
  if (!e) throw std::invalid_argument("no setting " + name);
  return std::get<std::int64_t>(e->value);
}
inline bool bool_setting(const Spec& settings, const std::string& name) {
  const Spec::Entry* e = settings.find(name);
  if (!e) throw std::invalid_argument("no setting " + name);
  return std::get<bool>(e->value);
}
inline Box box_of(const Spec& settings) {
  return {int_setting(settings, "horizontal_start"), int_setting(settings, "horizontal_end"),
          int_setting(settings, "vertical_start"), int_setting(settings, "vertical_end")};
}

// One kernel under test: how to make its arguments (fixed seeds, either
// layout), which of them are outputs, and its reference.
struct StencilUnderTest {
  std::string kernel;
  std::vector<std::string> outputs;
  std::function<Arguments(Layout)> make;
  std::function<void(Arguments&, const Spec& settings)> reference;
};

// rtol for kernel against reference: the JIT'd code fuses multiply-adds and
// may sum in another order than the reference.
inline constexpr double kRtol = 3e-6;

// got against the reference inside the box, bit for bit against the values
// before the call outside it.
inline void expect_output(const std::string& name, const Field& got, const Field& want, const Field& before,
                          const Box& box) {
  int reported = 0;
  for (std::int64_t h = 0; h < got.rows && reported < 5; ++h)
    for (std::int64_t k = 0; k < got.width() && reported < 5; ++k) {
      const double g = got(h, k), w = want(h, k);
      const bool ok = box.contains(h, k) ? same_bits(g, w) || std::fabs(g - w) <= kRtol * std::fabs(w)
                                         : same_bits(g, before(h, k));
      if (!ok) {
        ADD_FAILURE() << name << "[" << h << "][" << k << "] = " << g << ", want " << w << " (before " << before(h, k)
                      << (box.contains(h, k) ? ", inside the domain)" : ", outside the domain)");
        ++reported;
      }
    }
}

inline void expect_identical(const std::string& what, const Field& a, const Field& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.width(), b.width());
  for (std::int64_t h = 0; h < a.rows; ++h)
    for (std::int64_t k = 0; k < a.width(); ++k)
      ASSERT_TRUE(same_bits(a(h, k), b(h, k))) << what << " at [" << h << "][" << k << "]: " << a(h, k) << " vs "
                                               << b(h, k);
}

// Whether any output point inside the box changed: a non-empty domain must
// do something, or the comparisons above would hold vacuously.
inline bool changed_inside(const StencilUnderTest& s, const Arguments& after, const Arguments& before, const Box& box) {
  for (const std::string& name : s.outputs) {
    const Field &a = after.field(name), &b = before.field(name);
    for (std::int64_t h = 0; h < a.rows; ++h)
      for (std::int64_t k = 0; k < a.width(); ++k)
        if (box.contains(h, k) && !same_bits(a(h, k), b(h, k))) return true;
  }
  return false;
}

// Every check of this harness for one choice of settings. A non-empty domain
// must change some output unless `expect_change` says the settings leave the
// kernel nothing to do.
inline void check_stencil(Runtime& rt, const StencilUnderTest& s, const Spec& settings, bool expect_change = true) {
  SCOPED_TRACE(s.kernel + " " + settings.to_json());
  const Box box = box_of(settings);
  const Arguments shape = s.make(Layout::c());
  for (const std::string& out : s.outputs)  // a setting beyond the arrays would corrupt memory, not fail
    ASSERT_TRUE(box.empty() || (box.hs >= 0 && box.he <= shape.field(out).rows && box.vs >= 0 &&
                                box.ve <= shape.field(out).width()))
        << "the domain lies outside " << out;
  // Blocks of 7 split every grid's zones mid-block, and leave a padded last block.
  const Layout layouts[] = {Layout::c(), Layout::fortran(), Layout::blocked(7)};
  std::vector<Arguments> by_layout;
  for (const Layout& layout : layouts) {
    SCOPED_TRACE(layout.name());
    const Arguments before = s.make(layout);
    Arguments specialised = before, generic = before, expected = before;
    const Kernel kernel = rt.kernel(s.kernel, before.spec(settings));
    specialised.run(kernel, 1);
    generic.run(rt.kernel(s.kernel, before.generic_spec(settings), Mode::generic));
    s.reference(expected, settings);
    // Threads (each helper a phase, points shared, a barrier after): the same
    // bits as one thread, also with more threads than cores.
    for (int threads : {2, 3, 7}) {
      Arguments threaded = before;
      threaded.run(kernel, threads);
      for (const std::string& out : s.outputs)
        expect_identical(out + " " + std::to_string(threads) + " threads vs 1", threaded.field(out),
                         specialised.field(out));
    }
    for (const std::string& out : s.outputs) {
      expect_identical(out + " specialised vs generic", specialised.field(out), generic.field(out));
      expect_output(out, specialised.field(out), expected.field(out), before.field(out), box);
      EXPECT_TRUE(specialised.field(out).same_padding(before.field(out))) << out << ": the last block's padding changed";
      EXPECT_TRUE(generic.field(out).same_padding(before.field(out))) << out << ": the last block's padding changed";
    }
    EXPECT_EQ(changed_inside(s, specialised, before, box), expect_change && !box.empty());
    by_layout.push_back(std::move(specialised));
  }
  for (std::size_t i = 1; i < by_layout.size(); ++i)
    for (const std::string& out : s.outputs)
      expect_identical(out + " C order vs " + layouts[i].name(), by_layout[0].field(out), by_layout[i].field(out));
}

}  // namespace kiln::testing
