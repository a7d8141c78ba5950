#include "runtime/call/temporaries.hpp"

#include <cstdlib>
#include <new>

#include "kiln/errors.hpp"

namespace kiln::runtime {

Span span_of(const kiln_arg& array) {
  std::int64_t low = 0, high = 0;
  for (int d = 0; d < array.rank; ++d) {
    if (array.shape[d] <= 0) return {};
    const std::int64_t last = (array.shape[d] - 1) * array.strides[d];
    (last < 0 ? low : high) += last;
  }
  return {high - low + 1, -low};
}

std::size_t temporary_bytes(const lang::TemporaryDecl& temp, const kiln_arg& like) {
  return static_cast<std::size_t>(span_of(like).elements) * element_size(temp.type);
}

kiln_arg temporary_view(const lang::TemporaryDecl& temp, const kiln_arg& like, std::uintptr_t base) {
  kiln_arg view = like;
  view.type = static_cast<std::int32_t>(temp.type);
  view.data = reinterpret_cast<void*>(base + static_cast<std::uintptr_t>(span_of(like).origin) * element_size(temp.type));
  return view;
}

void TemporaryBuffer::Free::operator()(std::byte* p) const noexcept { std::free(p); }

bool TemporaryBuffer::reserve(std::size_t bytes) {
  if (bytes <= capacity_) return false;
  constexpr std::size_t kAlign = 64;  // a cache line; what aligned_alloc needs the size to be a multiple of
  const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  data_.reset();  // the old buffer first: the new one may need the memory
  capacity_ = 0;
  data_.reset(static_cast<std::byte*>(std::aligned_alloc(kAlign, rounded)));
  if (!data_) throw std::bad_alloc();
  capacity_ = rounded;
  return true;
}

// One thread's temporaries: a buffer each, their views, and the pointers the
// entry takes (the call's arguments, then the views).
struct Temporaries::Set {
  std::vector<TemporaryBuffer> buffers;
  std::vector<kiln_arg> views;
  std::vector<const kiln_arg*> pointers;
};

Temporaries::Temporaries(const lang::KernelInfo& info, Metrics& metrics, std::string metrics_name)
    : info_(info), metrics_(metrics), metrics_name_(std::move(metrics_name)) {}

Temporaries::~Temporaries() = default;

Temporaries::Lease Temporaries::lease(const kiln_arg* const* args, std::size_t count) {
  std::unique_ptr<Set> set;
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      set = std::move(free_.back());
      free_.pop_back();
    }
  }
  const std::size_t n = info_.temporaries.size();
  if (!set) {
    set = std::make_unique<Set>();
    set->buffers.resize(n);
    set->views.resize(n);
  }
  Lease lease(*this, std::move(set));  // given back however this ends
  Set& s = *lease.set_;
  s.pointers.assign(args, args + count);
  for (std::size_t t = 0; t < n; ++t) {
    const lang::TemporaryDecl& temp = info_.temporaries[t];
    const kiln_arg& like = *args[temp.like];
    const std::size_t bytes = temporary_bytes(temp, like);
    try {
      if (s.buffers[t].reserve(bytes)) metrics_.count_temporary_allocation(metrics_name_);
    } catch (const std::bad_alloc&) {
      throw Error("kiln: " + info_.name + ": cannot allocate temporary '" + temp.name + "' (" +
                  std::to_string(bytes) + " bytes, laid out like '" + info_.args[temp.like].name + "')");
    }
    s.views[t] = temporary_view(temp, like, reinterpret_cast<std::uintptr_t>(s.buffers[t].data()));
    s.pointers.push_back(&s.views[t]);
  }
  return lease;
}

void Temporaries::give_back(std::unique_ptr<Set> set) noexcept {
  try {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(set));
  } catch (...) {
    // No room to keep it: its memory goes, a later call allocates again.
  }
}

Temporaries::Lease::Lease(Temporaries& owner, std::unique_ptr<Set> set) : owner_(&owner), set_(std::move(set)) {}
Temporaries::Lease::Lease(Lease&&) noexcept = default;

Temporaries::Lease::~Lease() {
  if (set_) owner_->give_back(std::move(set_));
}

const kiln_arg* const* Temporaries::Lease::args() const { return set_->pointers.data(); }

}  // namespace kiln::runtime
