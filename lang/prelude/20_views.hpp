// A strided view of an argument array. Strides fixed by the specialisation are
// template constants (the optimiser sees them); the others are read at run time.
template <class T, int Rank, index_t S0 = dynamic, index_t S1 = dynamic, index_t S2 = dynamic, index_t S3 = dynamic>
class View : public Bounds<Rank> {
 public:
  KILN_FN explicit View(const kiln_arg& arg) : data_(static_cast<T*>(arg.data)) {
    for (int d = 0; d < Rank; ++d) runtime_strides_[d] = arg.strides[d];
  }
#ifdef KILN_CHECK
  View(const kiln_arg& arg, CheckReport* report, int32_t index) : View(arg) { this->bind(report, index, arg.shape); }
#endif

  KILN_FN static constexpr index_t fixed_stride(int d) { return d == 0 ? S0 : d == 1 ? S1 : d == 2 ? S2 : S3; }

  KILN_FN index_t stride(int d) const { return fixed_stride(d) != dynamic ? fixed_stride(d) : runtime_strides_[d]; }

  // The caller's strides agree with the constants this code was compiled for.
  KILN_FN static bool matches(const kiln_arg& arg) {
    for (int d = 0; d < Rank; ++d)
      if (fixed_stride(d) != dynamic && fixed_stride(d) != arg.strides[d]) return false;
    return true;
  }

  KILN_FN T& operator()(index_t i) const {
    static_assert(Rank == 1);
    KILN_GUARD(i);
    return data_[i * stride(0)];
  }
  KILN_FN T& operator()(index_t i, index_t j) const {
    static_assert(Rank == 2);
    KILN_GUARD(i, j);
    return data_[i * stride(0) + j * stride(1)];
  }
  KILN_FN T& operator()(index_t i, index_t j, index_t k) const {
    static_assert(Rank == 3);
    KILN_GUARD(i, j, k);
    return data_[i * stride(0) + j * stride(1) + k * stride(2)];
  }
  KILN_FN T& operator()(index_t i, index_t j, index_t k, index_t l) const {
    static_assert(Rank == 4);
    KILN_GUARD(i, j, k, l);
    return data_[i * stride(0) + j * stride(1) + k * stride(2) + l * stride(3)];
  }

 private:
  T* data_;
  index_t runtime_strides_[Rank > 0 ? Rank : 1];
};

