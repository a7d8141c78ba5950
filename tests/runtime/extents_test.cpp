// The extent rules of runtime/call/extents.hpp, in C++ and without a compiler:
// flat and blocked arrays, offsets, parameter extents, sizes no flat array
// has, and the errors' words. (tests/api/extents_test.cpp checks that the
// generated entries refuse the same calls.)
#include "runtime/call/extents.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/errors.hpp"
#include "lang/binder.hpp"

namespace kiln::runtime {
namespace {

const lang::KernelInfo& kernel() {
  static const lang::KernelInfo info = lang::parse_kernel_source(R"(#pragma kiln kernel k
#pragma kiln array double w[cells][levels + 1]
#pragma kiln array double area[cells]
#pragma kiln array int32 c2e[cells][3] indexes cells
#pragma kiln array double box[nz]
#pragma kiln domain horizontal_start horizontal_end nz
#pragma kiln size cells contains horizontal_start horizontal_end
#pragma kiln size levels
)",
                                                     "k.kiln");
  return info;
}

kiln_arg shaped(std::vector<std::int64_t> shape) {
  kiln_arg a{};
  a.rank = static_cast<std::int32_t>(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) a.shape[d] = shape[d];
  return a;
}

struct Call {
  kiln_arg w = shaped({10, 5}), area = shaped({10}), c2e = shaped({10, 3}), box = shaped({7});
  std::vector<std::int64_t> nproma = {lang::kFlat, lang::kFlat, lang::kFlat, lang::kFlat};
  std::vector<kiln_value> params = {{.i64 = 0}, {.i64 = 10}, {.i64 = 7}};

  std::vector<SizeBounds> check() const {
    const kiln_arg* args[] = {&w, &area, &c2e, &box};
    return check_extents(kernel(), args, nproma, params.data());
  }
  std::string error() const {
    try {
      check();
    } catch (const ArgumentError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no ArgumentError";
    return "";
  }
};

TEST(Extents, FlatArraysThatAgreeGiveEachSizeItsValue) {
  const std::vector<SizeBounds> sizes = Call().check();
  EXPECT_EQ(sizes[0].lo, 10);
  EXPECT_EQ(sizes[0].hi, 10);
  EXPECT_EQ(sizes[1].lo, 4);  // w is [cells][levels + 1]
  EXPECT_EQ(sizes[1].hi, 4);
}

TEST(Extents, ABlockedArrayHoldsTheSizesThatFillItsLastBlock) {
  Call call;
  call.w = shaped({4, 5, 3});  // nproma 4, 3 blocks: 9 to 12 cells
  call.nproma[0] = 4;
  for (std::int64_t cells : {9, 10, 12}) {
    call.area = shaped({cells});
    call.c2e = shaped({cells, 3});
    call.params[1].i64 = cells;
    EXPECT_NO_THROW(call.check()) << cells;
  }
  call.area = shaped({8});
  call.c2e = shaped({8, 3});
  call.params[1].i64 = 8;
  EXPECT_NE(call.error().find("argument 'area' dimension 0 (cells): extent 8, but argument 'w' dimension 0 has 12 "
                              "(3 blocks of nproma 4) for cells"),
            std::string::npos)
      << call.error();
}

TEST(Extents, ASizeOnlyBlockedArraysHaveIsBoundedByTheirBlocks) {
  Call call;
  call.w = shaped({4, 5, 3});
  call.area = shaped({8, 2});  // nproma 8, 2 blocks: 9 to 16 cells
  call.c2e = shaped({10, 3});
  call.nproma = {4, 8, lang::kFlat, lang::kFlat};
  EXPECT_NO_THROW(call.check());
  call.c2e = shaped({11, 3});
  call.nproma[2] = lang::kFlat;
  call.params[1].i64 = 11;
  EXPECT_NO_THROW(call.check());
  call.area = shaped({2, 3});  // nproma 2, 3 blocks: 5 or 6 cells
  EXPECT_NE(call.error().find("argument 'area' dimension 0 (cells): extent 6 (3 blocks of nproma 2)"),
            std::string::npos)
      << call.error();
  call.area = shaped({0, 3});
  EXPECT_NE(call.error().find("3 blocks of nproma 0 hold no extent"), std::string::npos) << call.error();
}

TEST(Extents, ConstantAndParameterExtentsMustBeHeld) {
  Call call;
  call.c2e = shaped({10, 2});
  EXPECT_NE(call.error().find("kernel 'k', argument 'c2e' dimension 1: extent 2, declared 3"), std::string::npos)
      << call.error();
  call = Call();
  call.params[2].i64 = 8;
  EXPECT_NE(call.error().find("argument 'box' dimension 0: extent 7, declared nz = 8"), std::string::npos)
      << call.error();
}

TEST(Extents, ADomainRangeOutsideItsSizeIsRefusedAnEmptyOneNot) {
  Call call;
  call.params[1].i64 = 11;
  EXPECT_NE(call.error().find("domain range [horizontal_start, horizontal_end) = [0, 11) lies outside size cells = "
                              "[0, 10) (argument 'w' dimension 0, extent 10)"),
            std::string::npos)
      << call.error();
  call.params[0].i64 = -1;
  call.params[1].i64 = 5;
  EXPECT_NE(call.error().find("= [-1, 5) lies outside"), std::string::npos) << call.error();
  call.params[0].i64 = 50;  // empty: start >= end
  EXPECT_NO_THROW(call.check());
}

}  // namespace
}  // namespace kiln::runtime
