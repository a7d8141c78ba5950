#include "runtime/call/extents.hpp"

#include <string>

#include "kiln/errors.hpp"
#include "lang/binder.hpp"

namespace kiln::runtime {
namespace {

// The extents one array dimension holds: [lo, hi], one value unless blocked.
struct Held {
  std::int64_t lo;
  std::int64_t hi;
  std::string text;  // how the error shows it: "100", or "96 (3 blocks of nproma 32)"
};

class Checker {
  struct Where {
    std::size_t arg = 0;
    int dim = 0;
  };

 public:
  Checker(const lang::KernelInfo& kernel, const kiln_arg* const* args, std::span<const std::int64_t> nproma,
          const kiln_value* params)
      : kernel_(kernel),
        args_(args),
        nproma_(nproma),
        params_(params),
        sizes_(kernel.sizes.size()),
        lo_by_(kernel.sizes.size()),
        seen_(kernel.sizes.size(), false) {}

  std::vector<SizeBounds> run() {
    for (std::size_t i = 0; i < kernel_.args.size(); ++i)
      for (std::size_t d = 0; d < kernel_.args[i].extents.size(); ++d) dimension(i, static_cast<int>(d));
    for (std::size_t s = 0; s < kernel_.sizes.size(); ++s) range(s);
    for (std::size_t i = 0; i < kernel_.args.size(); ++i) table_target(i);
    return sizes_;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ArgumentError("kiln: kernel '" + kernel_.name + "', " + what);
  }
  std::string where(std::size_t arg, int dim) const {
    return "argument '" + kernel_.args[arg].name + "' dimension " + std::to_string(dim);
  }
  std::int64_t value(std::size_t param) const { return params_[param].i64; }

  Held held(std::size_t i, int d) const {
    const kiln_arg& a = *args_[i];
    if (nproma_[i] == lang::kFlat || d != 0) {
      const std::int64_t extent = a.shape[d];
      if (extent < 0) fail(where(i, d) + ": negative extent " + std::to_string(extent));
      return {extent, extent, std::to_string(extent)};
    }
    const std::int64_t np = a.shape[0], nb = a.shape[kernel_.args[i].rank];
    std::int64_t hi = 0;
    if (np < 1 || nb < 0 || __builtin_mul_overflow(np, nb, &hi))
      fail(where(i, d) + ": " + std::to_string(nb) + " blocks of nproma " + std::to_string(np) + " hold no extent");
    const std::int64_t lo = nb == 0 ? 0 : hi - np + 1;
    return {lo, hi, std::to_string(hi) + " (" + std::to_string(nb) + " blocks of nproma " + std::to_string(np) + ")"};
  }

  std::string declared(const lang::Extent& e) const {
    const std::string offset = e.offset > 0 ? " + " + std::to_string(e.offset)
                               : e.offset < 0 ? " - " + std::to_string(-e.offset) : "";
    switch (e.of) {
      case lang::Extent::Of::constant: return std::to_string(e.offset);
      case lang::Extent::Of::param: {
        const std::string& name = kernel_.params[e.index].name;
        return name + offset + " = " + std::to_string(value(e.index) + e.offset) + " (" + name + " = " +
               std::to_string(value(e.index)) + ")";
      }
      case lang::Extent::Of::size: return kernel_.sizes[e.index].name + offset;
    }
    return "";
  }

  void dimension(std::size_t i, int d) {
    const lang::Extent& e = kernel_.args[i].extents[static_cast<std::size_t>(d)];
    const Held h = held(i, d);
    if (e.of != lang::Extent::Of::size) {
      const std::int64_t want = e.of == lang::Extent::Of::constant ? e.offset : value(e.index) + e.offset;
      if (want < h.lo || want > h.hi) fail(where(i, d) + ": extent " + h.text + ", declared " + declared(e));
      return;
    }
    SizeBounds& size = sizes_[e.index];
    Where& lo_by = lo_by_[e.index];
    const std::int64_t lo = h.lo - e.offset, hi = h.hi - e.offset;
    if (seen_[e.index] && (lo > size.hi || hi < size.lo)) {
      const Where by = lo > size.hi ? Where{size.arg, size.dim} : lo_by;
      fail(where(i, d) + " (" + declared(e) + "): extent " + h.text + ", but " + where(by.arg, by.dim) + " has " +
           held(by.arg, by.dim).text + " for " + kernel_.sizes[e.index].name +
           ": the arrays sharing a size must agree on it");
    }
    if (!seen_[e.index] || lo > size.lo) {
      size.lo = lo;
      lo_by = {i, d};
    }
    if (!seen_[e.index] || hi < size.hi) {
      size.hi = hi;
      size.arg = i;
      size.dim = d;
    }
    seen_[e.index] = true;
  }

  void range(std::size_t s) {
    const lang::SizeDecl& decl = kernel_.sizes[s];
    if (!decl.start) return;
    const std::int64_t start = value(*decl.start), end = value(*decl.end);
    const SizeBounds& size = sizes_[s];
    if (start >= end || (start >= 0 && end <= size.hi)) return;
    const std::string& a = kernel_.params[*decl.start].name;
    const std::string& b = kernel_.params[*decl.end].name;
    fail("domain range [" + a + ", " + b + ") = [" + std::to_string(start) + ", " + std::to_string(end) +
         ") lies outside size " + decl.name + " = [0, " + std::to_string(size.hi) + ") (" +
         where(size.arg, size.dim) + ", extent " + held(size.arg, size.dim).text + ")");
  }

  // A table with rows indexes a size that is not empty (the prelude reads row
  // 0 of a field in place of a missing neighbour, and drops it).
  void table_target(std::size_t i) {
    const lang::ArgDecl& table = kernel_.args[i];
    if (!table.indexes) return;
    const int rank = lang::passed_rank(table.rank, nproma_[i]);
    for (int d = 0; d < rank; ++d)
      if (args_[i]->shape[d] <= 0) return;
    const SizeBounds& size = sizes_[*table.indexes];
    if (size.hi >= 1) return;
    fail("argument '" + table.name + "' indexes " + kernel_.sizes[*table.indexes].name + ", which is empty (" +
         where(size.arg, size.dim) + ", extent " + held(size.arg, size.dim).text +
         "): a table with entries needs something to index");
  }

  const lang::KernelInfo& kernel_;
  const kiln_arg* const* args_;
  std::span<const std::int64_t> nproma_;
  const kiln_value* params_;
  std::vector<SizeBounds> sizes_;
  std::vector<Where> lo_by_;  // per size: the dimension that bounds it from below
  std::vector<bool> seen_;    // per size: some dimension has bounded it
};

}  // namespace

std::vector<SizeBounds> check_extents(const lang::KernelInfo& kernel, const kiln_arg* const* args,
                                      std::span<const std::int64_t> nproma, const kiln_value* params) {
  return Checker(kernel, args, nproma, params).run();
}

}  // namespace kiln::runtime
