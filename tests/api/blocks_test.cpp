// ICON's blocked layout through the public API: kiln::flat_table (index and
// block arrays to a flat table) and the errors of a call whose arrays do not
// match the blocks it was specialised for. That every kernel computes the
// same on blocks as on flat arrays is stencils_test.cpp's (a third layout).
#include <numeric>

#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

// idx/blk (nproma, nblks, n) in Fortran order, 1-based, from a flat table.
struct IconTable {
  std::int64_t nproma, nblks, n;
  std::vector<std::int32_t> idx, blk;
  IconTable(const std::vector<std::int32_t>& flat, std::int64_t entities, std::int64_t cols, std::int64_t p)
      : nproma(p), nblks((entities + p - 1) / p), n(cols), idx(std::size_t(p * nblks * cols), 0),
        blk(idx.size(), 0) {
    for (std::int64_t e = 0; e < entities; ++e)
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int32_t to = flat[std::size_t(e * n + j)];
        idx[at(e, j)] = to < 0 ? 0 : to % std::int32_t(p) + 1;
        blk[at(e, j)] = to < 0 ? 0 : to / std::int32_t(p) + 1;
      }
  }
  std::size_t at(std::int64_t e, std::int64_t j) const {
    return std::size_t(e % nproma + nproma * (e / nproma + nblks * j));
  }
  kiln_arg idx_view() { return f_array(idx.data(), {nproma, nblks, n}); }
  kiln_arg blk_view() { return f_array(blk.data(), {nproma, nblks, n}); }
};

// 11 entities, 3 neighbours, -1 for two missing ones; blocks of 4 (3 blocks,
// one entity of padding).
const std::vector<std::int32_t> kFlat = {1, 2, 3,  0, 2, -1, 10, 9, 8, 4,  5, 6,  7,  8,  9,  -1, 0, 1,
                                         2, 3, 4,  5, 6, 7,  8,  9, 10, 0, 1, 2, 3,  4,  5};

TEST(FlatTable, GivesBackTheFlatTableTheIndexAndBlockArraysCameFrom) {
  for (std::int64_t nproma : {1, 4, 11, 16}) {
    IconTable icon(kFlat, 11, 3, nproma);
    std::vector<std::int32_t> table(kFlat.size(), 77);
    flat_table(icon.idx_view(), icon.blk_view(), c_array(table.data(), {11, 3}));
    EXPECT_EQ(table, kFlat) << "nproma " << nproma;
  }
}

TEST(FlatTable, WritesAnyStridesOfTheOutput) {
  IconTable icon(kFlat, 11, 3, 4);
  std::vector<std::int32_t> fortran(kFlat.size(), 77);
  flat_table(icon.idx_view(), icon.blk_view(), f_array(fortran.data(), {11, 3}));
  for (std::int64_t e = 0; e < 11; ++e)
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(fortran[std::size_t(j * 11 + e)], kFlat[std::size_t(e * 3 + j)]);
}

void expect_refused(IconTable& icon, std::vector<std::int32_t>& table, std::int64_t entities,
                    const std::string& fragment) {
  const std::vector<std::int32_t> before = table;
  try {
    flat_table(icon.idx_view(), icon.blk_view(), c_array(table.data(), {entities, 3}));
    ADD_FAILURE() << "no error, expected: " << fragment;
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
  EXPECT_EQ(table, before) << "a refused conversion wrote to the table";
}

TEST(FlatTable, BrokenTablesAreRefusedNamingTheEntryAndNothingIsWritten) {
  std::vector<std::int32_t> table(kFlat.size() + 6, 77);
  {
    IconTable icon(kFlat, 11, 3, 4);
    icon.idx[icon.at(9, 1)] = 5;  // past nproma
    expect_refused(icon, table, 11, "idx(2, 3, 2) = 5 lies outside 1..4 (nproma)");
  }
  {
    IconTable icon(kFlat, 11, 3, 4);
    icon.blk[icon.at(0, 2)] = 0;  // idx without blk
    expect_refused(icon, table, 11, "idx(1, 1, 3) = 4 with blk(1, 1, 3) = 0");
  }
  {
    IconTable icon(kFlat, 11, 3, 4);
    expect_refused(icon, table, 13, "13 entities, more than the 12");
  }
  {
    IconTable icon(kFlat, 11, 3, 4);
    std::vector<double> wrong(kFlat.size());
    try {
      flat_table(icon.idx_view(), icon.blk_view(), c_array(wrong.data(), {11, 3}));
      ADD_FAILURE() << "a double table was accepted";
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("table must be an int32 array of rank 2"), std::string::npos) << e.what();
    }
  }
}

// A blocked call: the kernel of update_theta_and_exner over (nproma, nlev, nblks).
class BlockedCalls : public RuntimeTest {
 protected:
  static constexpr std::int64_t kNproma = 4, kLevels = 3, kBlocks = 2;
  std::vector<double> theta = std::vector<double>(kNproma * kLevels * kBlocks, 300.0);
  std::vector<double> exner = std::vector<double>(theta.size(), 1.0);
  std::vector<double> z_temp = std::vector<double>(theta.size(), 1.0);
  std::vector<double> area = std::vector<double>(kNproma * kBlocks, 2.0);
  kiln_arg field(std::vector<double>& v) { return f_array(v.data(), {kNproma, kLevels, kBlocks}); }

  Spec spec() {
    Spec s;
    s.set("horizontal_start", 1).set("horizontal_end", 7).set("vertical_start", 0).set("vertical_end", kLevels);
    s.set("rd_o_cvd", 0.4);
    for (const char* name : {"theta_v", "exner", "z_temp"}) s.blocked(name, kNproma);
    return s.blocked("area", kNproma);
  }
};

TEST_F(BlockedCalls, TouchesExactlyTheDomainsPointsInTheirBlocks) {
  const Kernel k = rt.kernel("update_theta_and_exner", spec());
  k(field(theta), field(exner), f_array(area.data(), {kNproma, kBlocks}), field(z_temp));
  for (std::int64_t jb = 0; jb < kBlocks; ++jb)
    for (std::int64_t lev = 0; lev < kLevels; ++lev)
      for (std::int64_t jc = 0; jc < kNproma; ++jc) {
        const std::int64_t c = jb * kNproma + jc;
        const double want = c >= 1 && c < 7 ? 302.0 : 300.0;
        EXPECT_EQ(theta[std::size_t(jc + kNproma * (lev + kLevels * jb))], want) << "cell " << c << " level " << lev;
      }
}

TEST_F(BlockedCalls, FlatArraysAndOtherNpromaAreRefusedNamingTheArgument) {
  const Kernel k = rt.kernel("update_theta_and_exner", spec());
  const kiln_arg flat_area = c_array(area.data(), {kNproma * kBlocks});
  try {
    k(field(theta), field(exner), flat_area, field(z_temp));
    ADD_FAILURE() << "a flat array was taken for a blocked one";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'area': expected a double array of rank 2 (declared of rank 1, specialised "
                                         "blocked: nproma, ..., nblks), got a double array of rank 1"),
              std::string::npos)
        << e.what();
  }
  std::vector<double> other(theta.size(), 300.0);
  const kiln_arg nproma_8 = f_array(other.data(), {8, kLevels, 1});
  try {
    k(nproma_8, field(exner), f_array(area.data(), {kNproma, kBlocks}), field(z_temp));
    ADD_FAILURE() << "blocks of 8 were taken for blocks of 4";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'theta_v': blocks of nproma 8 (its first extent), specialised for nproma 4"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(other, std::vector<double>(theta.size(), 300.0)) << "a refused call wrote";
}

// One block (nproma = n_cells, as on GPUs) with its count specialised: the
// same results, and arrays of another block count are refused.
TEST_F(BlockedCalls, OneBlockIsABlockCountToo) {
  std::vector<double> one_theta(kNproma * kBlocks * kLevels, 300.0), one_exner(one_theta.size(), 1.0),
      one_z(one_theta.size(), 1.0), one_area(kNproma * kBlocks, 2.0);
  auto one = [](std::vector<double>& v) { return f_array(v.data(), {kNproma * kBlocks, kLevels, 1}); };
  Spec s;
  s.set("horizontal_start", 1).set("horizontal_end", 7).set("vertical_start", 0).set("vertical_end", kLevels);
  s.set("rd_o_cvd", 0.4);
  s.blocked_like("theta_v", one(one_theta)).blocked_like("exner", one(one_exner)).blocked_like("z_temp", one(one_z));
  s.blocked_like("area", f_array(one_area.data(), {kNproma * kBlocks, 1}));
  const Kernel k = rt.kernel("update_theta_and_exner", s);
  k(one(one_theta), one(one_exner), f_array(one_area.data(), {kNproma * kBlocks, 1}), one(one_z));
  for (std::int64_t lev = 0; lev < kLevels; ++lev)
    for (std::int64_t c = 0; c < kNproma * kBlocks; ++c)
      EXPECT_EQ(one_theta[std::size_t(c + kNproma * kBlocks * lev)], c >= 1 && c < 7 ? 302.0 : 300.0) << c;
  // Two blocks of the same nproma have the same strides: only the count differs.
  std::vector<double> two(one_theta.size() * 2, 300.0);
  const std::string message = message_of<ArgumentError>([&] {
    k(f_array(two.data(), {kNproma * kBlocks, kLevels, 2}), one(one_exner),
      f_array(one_area.data(), {kNproma * kBlocks, 1}), one(one_z));
  });
  EXPECT_NE(message.find("'theta_v': 2 blocks (its last extent), specialised for 1"), std::string::npos) << message;
  EXPECT_EQ(two, std::vector<double>(one_theta.size() * 2, 300.0)) << "a refused call wrote";
}

}  // namespace
}  // namespace kiln::testing
