// `kiln run`, through the built `kiln` binary: inputs written as .npy by
// xtensor (C and Fortran order), outputs read back and checked against a
// computation written here from the kernel's formula; every error a non-zero
// exit with a message that names the argument.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xnpy.hpp>

#include "tests/tools/kiln_process.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::testing::Result;
using kiln::testing::TempDir;

// Runs `kiln run ARGS` on its own cache folder.
Result run_kiln(const fs::path& cache, const std::vector<std::string>& args) {
  std::string quoted = "run";
  for (const std::string& arg : args) quoted += " '" + arg + "'";
  return kiln::testing::run_kiln_with(cache, quoted);
}

using CField = xt::xarray<double, xt::layout_type::row_major>;
using FField = xt::xarray<double, xt::layout_type::column_major>;

CField random_field(std::vector<std::size_t> shape, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  CField field(shape);
  for (double& x : field) x = dist(rng);
  return field;
}

constexpr double kRdOCvd = 287.04 / 717.6;

// update_theta_and_exner's fields on [cells][levels] and a domain inside them.
struct ThetaCase {
  std::size_t cells = 10, levels = 7;
  int hs = 2, he = 9, vs = 1, ve = 6;
  CField theta_v = random_field({cells, levels}, 280, 320, 1);
  CField exner = random_field({cells, levels}, 0.7, 1.0, 2);
  CField area = random_field({cells}, 1e-3, 2e-3, 3);
  CField z_temp = random_field({cells, levels}, -1, 1, 4);

  // The issue's formula on the domain; every other point keeps its value.
  void reference(CField& theta, CField& ex) const {
    for (int c = hs; c < he; ++c)
      for (int k = vs; k < ve; ++k) {
        const double th0 = theta(c, k);
        const double th = th0 + area(c) * z_temp(c, k);
        ex(c, k) *= 1 + kRdOCvd * (th / th0 - 1);
        theta(c, k) = th;
      }
  }

  std::map<std::string, std::string> spec() const {
    char rd[64];
    std::snprintf(rd, sizeof rd, "%.17g", kRdOCvd);
    return {{"horizontal_start", std::to_string(hs)}, {"horizontal_end", std::to_string(he)},
            {"vertical_start", std::to_string(vs)},   {"vertical_end", std::to_string(ve)},
            {"rd_o_cvd", rd}};
  }

  // Writes the four inputs into `dir` in the given order.
  void write(const fs::path& dir, bool fortran) const {
    fs::create_directories(dir);
    const std::pair<const char*, const CField*> fields[] = {
        {"theta_v", &theta_v}, {"exner", &exner}, {"z_temp", &z_temp}};
    for (const auto& [name, field] : fields) {
      if (fortran) xt::dump_npy((dir / (std::string(name) + ".npy")).string(), FField(*field));
      else xt::dump_npy((dir / (std::string(name) + ".npy")).string(), *field);
    }
    xt::dump_npy((dir / "area.npy").string(), area);
  }
};

// The arguments of `kiln run`, by option, so that a test can change one.
struct Invocation {
  std::string kernel = "update_theta_and_exner";
  std::map<std::string, std::string> spec;  // name -> value, given as one comma-separated --spec
  std::map<std::string, std::string> in;    // name -> file
  std::vector<std::string> extra;
  fs::path out;

  std::vector<std::string> args() const {
    std::string joined;
    for (const auto& [name, value] : spec) joined += (joined.empty() ? "" : ",") + name + "=" + value;
    std::vector<std::string> out_args{kernel, "--spec", joined};
    for (const auto& [name, file] : in) out_args.insert(out_args.end(), {"--in", name + "=" + file});
    out_args.insert(out_args.end(), extra.begin(), extra.end());
    out_args.insert(out_args.end(), {"--out", out.string()});
    return out_args;
  }
};

Invocation theta_invocation(const ThetaCase& t, const fs::path& inputs, const fs::path& out) {
  Invocation run;
  run.spec = t.spec();
  run.out = out;
  for (const char* name : {"theta_v", "exner", "area", "z_temp"})
    run.in[name] = (inputs / (std::string(name) + ".npy")).string();
  return run;
}

CField load(const fs::path& file) { return xt::load_npy<double>(file.string()); }

void expect_close(const CField& got, const CField& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (std::size_t i = 0; i < got.size(); ++i)  // relative: the JIT'd code may fuse multiply-adds
    ASSERT_LE(std::fabs(got.flat(i) - want.flat(i)), 1e-14 * std::fabs(want.flat(i))) << "at " << i;
}

class RunCommand : public ::testing::Test {
 protected:
  TempDir dir;
  fs::path cache = dir.path() / "cache";
  ThetaCase theta;

  // Writes the inputs in one order, runs, and returns the folder of the outputs.
  fs::path run_theta(bool fortran, bool generic, const std::string& tag) {
    const fs::path inputs = dir.path() / ("in-" + tag), out = dir.path() / ("out-" + tag);
    theta.write(inputs, fortran);
    Invocation run = theta_invocation(theta, inputs, out);
    if (generic) run.extra.push_back("--generic");
    const Result result = run_kiln(cache, run.args());
    EXPECT_TRUE(result.exited && result.status == 0) << result.output;
    return out;
  }
};

TEST_F(RunCommand, SpecialisedMatchesTheFormulaAndKeepsPointsOutsideTheDomain) {
  const fs::path out = run_theta(false, false, "c");
  CField theta_v = theta.theta_v, exner = theta.exner;
  theta.reference(theta_v, exner);
  expect_close(load(out / "theta_v.npy"), theta_v);
  expect_close(load(out / "exner.npy"), exner);
  EXPECT_EQ(theta_v(0, 0), theta.theta_v(0, 0));  // outside the domain: the input's value
  EXPECT_NE(theta_v(theta.hs, theta.vs), theta.theta_v(theta.hs, theta.vs));
  // The declarations do not say what a kernel writes: every array comes back.
  EXPECT_EQ(load(out / "area.npy"), theta.area);
  EXPECT_EQ(load(out / "z_temp.npy"), theta.z_temp);
}

TEST_F(RunCommand, GenericGivesTheSameResultsAsSpecialised) {
  const fs::path specialised = run_theta(false, false, "specialised");
  const fs::path generic = run_theta(false, true, "generic");
  for (const char* name : {"theta_v.npy", "exner.npy"}) EXPECT_EQ(load(generic / name), load(specialised / name));
}

// A header of 128 bytes or more (here padded to 240, as NumPy pads a long
// one): its length's low byte is 0x80 or more, which xtensor's own reader
// took for a length near 4 GiB. kiln reads it as it is.
TEST_F(RunCommand, AHeaderOf128BytesOrMoreIsRead) {
  const fs::path inputs = dir.path() / "in-long", out = dir.path() / "out-long";
  theta.write(inputs, false);
  const fs::path exner = inputs / "exner.npy";
  std::ifstream in(exner, std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_EQ(bytes[6], '\x01');  // format 1.0: a 2-byte length at 8
  const std::size_t length = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  const std::size_t longer = 240 - 10;  // the whole preamble 240 bytes, a multiple of 16
  std::string header = bytes.substr(10, length);
  header.insert(header.size() - 1, longer - length, ' ');  // before the closing newline
  bytes = bytes.substr(0, 8) + std::string{static_cast<char>(longer & 0xff), static_cast<char>(longer >> 8)} +
          header + bytes.substr(10 + length);
  std::ofstream(exner, std::ios::binary | std::ios::trunc) << bytes;
  const Result result = run_kiln(cache, theta_invocation(theta, inputs, out).args());
  ASSERT_TRUE(result.exited && result.status == 0) << result.output;
  CField theta_v = theta.theta_v, want_exner = theta.exner;
  theta.reference(theta_v, want_exner);
  expect_close(load(out / "exner.npy"), want_exner);
}

TEST_F(RunCommand, FortranOrderInputsGiveTheResultsOfCOrderAndStayInFortranOrder) {
  const fs::path c = run_theta(false, false, "c");
  const fs::path fortran = run_theta(true, false, "fortran");
  for (const char* name : {"theta_v.npy", "exner.npy", "z_temp.npy"}) {
    EXPECT_EQ(load(fortran / name), load(c / name)) << name;
    // Written as it was read: a column-major load accepts only fortran_order True.
    EXPECT_NO_THROW((xt::load_npy<double, xt::layout_type::column_major>((fortran / name).string()))) << name;
  }
}

TEST_F(RunCommand, ArrayGivenByShapeStartsAsZeros) {
  const fs::path inputs = dir.path() / "in", out = dir.path() / "out";
  theta.write(inputs, false);
  Invocation run = theta_invocation(theta, inputs, out);
  run.in.erase("z_temp");
  run.extra = {"--shape", "z_temp=10x7"};
  const Result result = run_kiln(cache, run.args());
  ASSERT_TRUE(result.exited && result.status == 0) << result.output;
  // z_temp = 0: theta_v keeps its values and exner is multiplied by exactly 1.
  EXPECT_EQ(load(out / "z_temp.npy"), xt::zeros<double>({theta.cells, theta.levels}));
  EXPECT_EQ(load(out / "theta_v.npy"), theta.theta_v);
  EXPECT_EQ(load(out / "exner.npy"), theta.exner);
}

// A kernel of every scalar and static type, on float and int32 arrays.
constexpr const char* kGatherKernel = R"(#pragma kiln kernel scaled_gather
#pragma kiln array float x[1]
#pragma kiln array int32 index[1]
#pragma kiln array float y[1]
#pragma kiln scalar float a
#pragma kiln scalar int32 b
#pragma kiln scalar int64 c
#pragma kiln scalar bool negate
#pragma kiln domain n
#pragma kiln static bool twice
#pragma kiln static int offset
kiln::for_each_column(0, n, [&](kiln::index_t i) {
  float v = a * x(index(i)) + float(b) + float(c) + float(offset);
  if (negate) v = -v;
  y(i) = twice ? 2.0f * v : v;
});
)";

TEST_F(RunCommand, ScalarsAndStaticsOfEveryTypeFromSpec) {
  const fs::path kernel = dir.path() / "scaled_gather.kiln";
  std::ofstream(kernel) << kGatherKernel;
  xt::dump_npy((dir.path() / "x.npy").string(), xt::xarray<float>{0.5f, 1.5f, 2.5f, 3.5f});
  xt::dump_npy((dir.path() / "index.npy").string(), xt::xarray<std::int32_t>{3, 0, 2});
  for (const bool generic : {false, true}) {
    const fs::path out = dir.path() / (generic ? "generic" : "specialised");
    std::vector<std::string> args{"scaled_gather", "--kernel-file", kernel.string(), "--spec",
                                  "a=2,b=-3,c=10,negate=yes,n=3,twice=true,offset=1",
                                  "--in", "x=" + (dir.path() / "x.npy").string(),
                                  "--in", "index=" + (dir.path() / "index.npy").string(),
                                  "--shape", "y=4", "--out", out.string()};
    if (generic) args.push_back("--generic");
    const Result result = run_kiln(cache, args);
    ASSERT_TRUE(result.exited && result.status == 0) << result.output;
    // y(i) = -2 (2 x(index(i)) - 3 + 10 + 1) for i < 3; y(3) was not in the domain.
    const xt::xarray<float> want{-2 * (2 * 3.5f + 8), -2 * (2 * 0.5f + 8), -2 * (2 * 2.5f + 8), 0.0f};
    EXPECT_EQ(xt::load_npy<float>((out / "y.npy").string()), want) << (generic ? "generic" : "specialised");
    EXPECT_EQ(xt::load_npy<std::int32_t>((out / "index.npy").string()), (xt::xarray<std::int32_t>{3, 0, 2}));
  }
}

TEST_F(RunCommand, ScalarsOutOfTheirTypesRangeAreRefused) {
  const fs::path kernel = dir.path() / "scaled_gather.kiln";
  std::ofstream(kernel) << kGatherKernel;
  const std::pair<const char*, const char*> cases[] = {
      {"a=2,b=3000000000", "--spec b='3000000000': expected an integer in the int32 range ('b' is an int32 scalar)"},
      {"a=1e39,b=0", "--spec a='1e39': expected a number in the float range ('a' is a float scalar)"}};
  for (const auto& [values, expected] : cases) {
    const Result result = run_kiln(
        cache, {"scaled_gather", "--kernel-file", kernel.string(), "--spec", values, "--spec",
                "c=1,negate=0,n=3,twice=1,offset=0", "--shape", "x=4", "--shape", "index=3", "--shape", "y=4", "--out",
                (dir.path() / "out").string()});
    EXPECT_TRUE(result.exited && result.status != 0) << result.output;
    EXPECT_NE(result.output.find(expected), std::string::npos) << result.output;
  }
}

// ---- errors ----------------------------------------------------------------

struct ErrorCase {
  const char* name;
  // Changes a valid invocation; `dir` holds the valid inputs (C order).
  std::function<void(Invocation&, const fs::path& dir)> change;
  std::vector<std::string> expected;  // substrings of the message
};

void write_bytes(const fs::path& file, const std::string& bytes) { std::ofstream(file, std::ios::binary) << bytes; }

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const ErrorCase kErrorCases[] = {
    {"MissingArray", [](Invocation& r, const fs::path&) { r.in.erase("z_temp"); },
     {"argument 'z_temp'", "is missing", "--shape z_temp=AxB"}},
    {"ExtraArray", [](Invocation& r, const fs::path&) { r.in["extra"] = r.in["area"]; },
     {"--in extra: no array argument 'extra'", "theta_v, exner, area, z_temp"}},
    {"ScalarGivenAsArray", [](Invocation& r, const fs::path&) { r.in["rd_o_cvd"] = r.in["area"]; },
     {"--in rd_o_cvd: 'rd_o_cvd' is not an array"}},
    {"WrongRank", [](Invocation& r, const fs::path&) { r.in["theta_v"] = r.in["area"]; },
     {"argument 'theta_v'", "expected a double array of rank 2", "got dtype '<f8' of shape (10,)"}},
    {"WrongDtype",
     [](Invocation& r, const fs::path& dir) {
       r.in["theta_v"] = (dir / "theta_v_f4.npy").string();
       xt::dump_npy(r.in["theta_v"], xt::xarray<float>(xt::zeros<float>({10, 7})));
     },
     {"argument 'theta_v'", ".npy dtype '<f8'", "got dtype '<f4' of shape (10, 7)"}},
    {"UnsupportedDtype",
     [](Invocation& r, const fs::path& dir) {
       r.in["theta_v"] = (dir / "theta_v_u2.npy").string();
       xt::dump_npy(r.in["theta_v"], xt::xarray<std::uint16_t>(xt::zeros<std::uint16_t>({10, 7})));
     },
     {"argument 'theta_v'", "dtype '<u2' is not one kiln takes"}},
    {"MissingFile", [](Invocation& r, const fs::path& dir) { r.in["exner"] = (dir / "nothere.npy").string(); },
     {"argument 'exner'", "nothere.npy: cannot open it"}},
    {"NotNpy",
     [](Invocation& r, const fs::path& dir) {
       r.in["exner"] = (dir / "text.npy").string();
       write_bytes(r.in["exner"], "exner,1.0,2.0\n");
     },
     {"argument 'exner'", "not a valid .npy file"}},
    {"ShapeNotIntegers",
     [](Invocation& r, const fs::path& dir) {
       std::string bytes = read_bytes(r.in["exner"]);
       bytes.replace(bytes.find("(10, 7)"), 7, "(1O, 7)");  // a letter O: the header keeps its length
       r.in["exner"] = (dir / "letter.npy").string();
       write_bytes(r.in["exner"], bytes);
     },
     {"argument 'exner'", "its shape is not a tuple of non-negative integers"}},
    {"TruncatedData",
     [](Invocation& r, const fs::path& dir) {
       const std::string bytes = read_bytes(r.in["exner"]);
       r.in["exner"] = (dir / "cut.npy").string();
       write_bytes(r.in["exner"], bytes.substr(0, bytes.size() - 8));
     },
     {"argument 'exner'", "holds 552 bytes of data, but its header describes (10, 7) of <f8, 560 bytes"}},
    {"HeaderPastNumpysLimit",
     [](Invocation& r, const fs::path& dir) {
       std::string bytes = read_bytes(r.in["exner"]);
       bytes[8] = '\xff', bytes[9] = '\xff';  // format 1.0's header length: 65535
       r.in["exner"] = (dir / "huge_header.npy").string();
       write_bytes(r.in["exner"], bytes);
     },
     {"argument 'exner'", "its header claims 65535 bytes, more than NumPy's limit of 10000"}},
    {"TrailingData",
     [](Invocation& r, const fs::path& dir) {
       const std::string bytes = read_bytes(r.in["exner"]);
       r.in["exner"] = (dir / "long.npy").string();
       write_bytes(r.in["exner"], bytes + "12345678");
     },
     {"argument 'exner'", "holds 568 bytes of data"}},
    {"BadSpecValue", [](Invocation& r, const fs::path&) { r.spec["horizontal_start"] = "abc"; },
     {"--spec horizontal_start='abc': expected an integer ('horizontal_start' is an int64 domain parameter)"}},
    {"BadStaticValue", [](Invocation& r, const fs::path&) { r.spec["rd_o_cvd"] = "0.4.1"; },
     {"--spec rd_o_cvd='0.4.1': expected a number ('rd_o_cvd' is a double static parameter)"}},
    {"SpecEntryWithoutValue", [](Invocation& r, const fs::path&) { r.extra = {"--spec", "rd_o_cvd"}; },
     {"--spec 'rd_o_cvd': expected name=value"}},
    {"UnknownSpecName", [](Invocation& r, const fs::path&) { r.spec["bogus"] = "1"; },
     {"--spec bogus: no parameter or scalar argument 'bogus'", "takes: horizontal_start"}},
    {"MissingSpecValue",
     [](Invocation& r, const fs::path&) { r.spec = {{"horizontal_start", "0"}, {"horizontal_end", "1"}}; },
     {"--spec lacks vertical_start (int64 domain parameter), vertical_end (int64 domain parameter), rd_o_cvd"}},
    {"ArrayGivenInSpec", [](Invocation& r, const fs::path&) { r.spec["theta_v"] = "1"; },
     {"--spec theta_v: 'theta_v' is an array argument: give it with --in theta_v=FILE.npy"}},
    {"InAndShapeForOneArray", [](Invocation& r, const fs::path&) { r.extra = {"--shape", "z_temp=10x7"}; },
     {"argument 'z_temp' is given with both --in and --shape"}},
    {"ShapeOfWrongRank",
     [](Invocation& r, const fs::path&) {
       r.in.erase("z_temp");
       r.extra = {"--shape", "z_temp=70"};
     },
     {"argument 'z_temp' (--shape z_temp=70): expected 2 positive extents joined by 'x'"}},
    {"ArrayGivenTwice", [](Invocation& r, const fs::path&) { r.extra = {"--in", "theta_v=" + r.in["theta_v"]}; },
     {"--in gives 'theta_v' twice"}},
    {"UnknownKernel", [](Invocation& r, const fs::path&) { r.kernel = "no_such_kernel"; },
     {"unknown kernel 'no_such_kernel'", "update_theta_and_exner"}},
    // Issue 19's domain rows (fields [10][7]): refused before the kernel runs, whatever was compiled before.
    {"HorizontalEndPastTheCells", [](Invocation& r, const fs::path&) { r.spec["horizontal_end"] = "12"; },
     {"kernel 'update_theta_and_exner', domain range [horizontal_start, horizontal_end) = [2, 12) lies outside size "
      "cells = [0, 10) (argument 'theta_v' dimension 0, extent 10)"}},
    {"VerticalEndPastTheLevels", [](Invocation& r, const fs::path&) { r.spec["vertical_end"] = "10"; },
     {"[vertical_start, vertical_end) = [1, 10) lies outside size levels = [0, 7)"}},
    {"HorizontalEndFarPastTheCells", [](Invocation& r, const fs::path&) { r.spec["horizontal_end"] = "100000000"; },
     {"= [2, 100000000) lies outside size cells"}},
    {"NegativeHorizontalStart", [](Invocation& r, const fs::path&) { r.spec["horizontal_start"] = "-3"; },
     {"= [-3, 9) lies outside size cells"}},
    {"NegativeHorizontalStartGeneric",
     [](Invocation& r, const fs::path&) {
       r.spec["horizontal_start"] = "-3";
       r.extra = {"--generic"};
     },
     {"= [-3, 9) lies outside size cells"}},
    {"NegativeVerticalStart", [](Invocation& r, const fs::path&) { r.spec["vertical_start"] = "-2"; },
     {"= [-2, 6) lies outside size levels"}},
    {"AreaShorterThanTheFields",
     [](Invocation& r, const fs::path& dir) {
       r.in["area"] = (dir / "area_short.npy").string();
       xt::dump_npy(r.in["area"], CField(xt::ones<double>({9})));
     },
     {"argument 'area' dimension 0 (cells): extent 9, but argument 'theta_v' dimension 0 has 10"}},
};

// Nothing written: the folder is made before the kernel runs (an unwritable
// one stops the command first), so a call the kernel refuses leaves it empty.
bool no_outputs(const fs::path& out) { return !fs::exists(out) || fs::is_empty(out); }

// The same run twice: the first compiles and is refused, the second loads
// the cached kernel and is refused as well (issue 19: "once the kernel was
// cached, exit 0 with 25 wrong points").
TEST(RunCommandCached, ACachedKernelRefusesADomainOutsideTheArraysToo) {
  TempDir dir;
  const ThetaCase theta;
  theta.write(dir.path(), false);
  Invocation run = theta_invocation(theta, dir.path(), dir.path() / "out");
  run.spec["horizontal_start"] = "-3";
  for (int time = 0; time < 2; ++time) {
    const Result result = run_kiln(dir.path() / "cache", run.args());
    EXPECT_TRUE(result.exited && result.status != 0) << result.output;
    EXPECT_NE(result.output.find("= [-3, 9) lies outside size cells"), std::string::npos) << result.output;
    EXPECT_TRUE(no_outputs(dir.path() / "out"));
  }
}

// --check: a C2E entry out of range (issue 19's table) stops the kernel and
// names the table, its row and column, the entry and the point.
TEST(RunCommandCheck, ATableEntryOutOfRangeIsNamed) {
  TempDir dir;
  const std::size_t cells = 4, edges = 6, levels = 3;
  const fs::path in = dir.path();
  xt::dump_npy((in / "kh_smag_ec.npy").string(), random_field({edges, levels}, 0, 1, 5));
  xt::dump_npy((in / "vn.npy").string(), random_field({edges, levels}, -1, 1, 6));
  xt::dump_npy((in / "e_bln_c_s.npy").string(), random_field({cells, 3}, 0, 1, 7));
  xt::dump_npy((in / "geofac_div.npy").string(), random_field({cells, 3}, -1, 1, 8));
  xt::dump_npy((in / "diff_multfac_smag.npy").string(), CField(xt::ones<double>({levels})));
  xt::xarray<std::int32_t, xt::layout_type::row_major> c2e = {{0, 1, 2}, {1, 2, 3}, {2, 3, 6}, {3, 4, 5}};
  xt::dump_npy((in / "C2E.npy").string(), c2e);
  std::vector<std::string> args = {"temporary_fields_for_turbulence_diagnostics", "--spec",
                                   "horizontal_start=0,horizontal_end=4,vertical_start=0,vertical_end=3"};
  for (const char* name : {"kh_smag_ec", "vn", "e_bln_c_s", "geofac_div", "diff_multfac_smag", "C2E"})
    args.insert(args.end(), {"--in", std::string(name) + "=" + (in / (std::string(name) + ".npy")).string()});
  args.insert(args.end(), {"--shape", "kh_c=4x3", "--shape", "div=4x3", "--out", (dir.path() / "out").string()});
  args.push_back("--check");
  const Result result = run_kiln(dir.path() / "cache", args);
  EXPECT_TRUE(result.exited && result.status != 0) << result.output;
  EXPECT_NE(result.output.find("check mode: table 'C2E' at (2, 2) holds 6, outside edges (the size it indexes), at "
                               "point (2, 0)"),
            std::string::npos)
      << result.output;
  // Without --check the same entry is read past vn's end: the extent checks cannot see a table's contents.
}

// Test names carry the case's name; this prints it in place of the bytes.
void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class RunCommandErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(RunCommandErrors, ExitsNonZeroNamingTheArgument) {
  TempDir dir;
  const ThetaCase theta;
  theta.write(dir.path(), false);
  Invocation run = theta_invocation(theta, dir.path(), dir.path() / "out");
  GetParam().change(run, dir.path());
  const Result result = run_kiln(dir.path() / "cache", run.args());
  EXPECT_TRUE(result.exited) << "crashed: " << result.output;
  EXPECT_NE(result.status, 0) << result.output;
  for (const std::string& expected : GetParam().expected)
    EXPECT_NE(result.output.find(expected), std::string::npos) << "expected '" << expected << "' in: " << result.output;
  EXPECT_TRUE(no_outputs(dir.path() / "out")) << "outputs written despite the error";
}

INSTANTIATE_TEST_SUITE_P(Cases, RunCommandErrors, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) { return std::string(info.param.name); });

}  // namespace
