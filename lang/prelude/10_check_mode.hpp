#ifdef KILN_CHECK
// ---- check mode (KILN_CHECK; the CPU only) -----------------------------------
// Every view access is bounds-checked and every table read range-checked. The
// first violation writes what it was here and jumps back to the entry, which
// returns check_status: the access itself never happens. Must match
// runtime/call/check_report.hpp.
struct CheckReport {
  void* jump[5];      // __builtin_setjmp's buffer, set by the entry
  index_t index[4];   // the index that was out of bounds (rank of them), or the table's row and column
  index_t point[2];   // the loop point being computed (has_point)
  index_t value;      // a table's entry that was out of its range
  int32_t arg;        // the argument (kernel.args.size() + t: temporary t)
  int32_t rank;       // how many values index holds
  int32_t kind;       // 1: an index outside the array; 2: a table entry outside its size; 3: a -1 the table may not hold
  int32_t has_point;
  // The last -1 read from a table that may hold it (`indexes <size> or -1`):
  // where an index -1 the kernel then used as if present came from.
  index_t missing_at[2];  // the table's row and column
  int32_t missing_table;  // 1 + the table's argument index; 0: none read
  int32_t missing_rank;   // how many values missing_at holds
};
inline constexpr int check_status = -2;

[[noreturn]] __attribute__((noinline, cold)) inline void check_failed(CheckReport* report, int32_t kind, int32_t arg,
                                                                      const index_t* index, int rank) {
  report->kind = kind;
  report->arg = arg;
  report->rank = rank;
  for (int d = 0; d < rank; ++d) report->index[d] = index[d];
  __builtin_longjmp(report->jump, 1);
}
#define KILN_GUARD(...) this->guard({__VA_ARGS__})
#define KILN_NOTE_POINT(layout, c, k) (layout).note_point(c, k);

// What a view knows in check mode: the report it writes a violation to, its
// index among the arguments, and the extents its indices must lie within.
template <int Rank>
class Bounds {
 public:
  void guard(const index_t (&index)[Rank]) const {
    for (int d = 0; d < Rank; ++d)
      if (index[d] < 0 || index[d] >= shape_[d]) check_failed(report_, 1, arg_, index, Rank);
  }
  void note_point(index_t c, index_t k) const {
    report_->point[0] = c;
    report_->point[1] = k;
    report_->has_point = 1;
  }
  CheckReport* report() const { return report_; }
  int32_t arg() const { return arg_; }

 protected:
  void bind(CheckReport* report, int32_t arg, const index_t* shape) {
    report_ = report;
    arg_ = arg;
    for (int d = 0; d < Rank; ++d) shape_[d] = shape[d];
  }

 private:
  CheckReport* report_ = nullptr;
  int32_t arg_ = 0;
  index_t shape_[Rank > 0 ? Rank : 1] = {};
};
#else
#define KILN_GUARD(...) ((void)0)
#define KILN_NOTE_POINT(layout, c, k)
template <int Rank>
class Bounds {};  // nothing outside check mode
#endif

