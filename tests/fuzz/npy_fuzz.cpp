// libFuzzer target over kiln's .npy reader (cli/npy_io.cpp: xtensor's
// header parser, then kiln's checks of dtype, shape, order and payload size),
// the untrusted input of `kiln run --in`. Every input must end in an array or
// in an NpyError naming the file: any other exception, a crash or a read past
// the input is a finding. Built and run by run_fuzz.sh with ASan and UBSan.
//
// KILN_FUZZ_WRITE_SEEDS=<folder>: write valid .npy files of every dtype kiln
// takes, both orders and ranks 1 to 4, there and exit.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include "cli/npy_io.hpp"
#include "tests/fuzz/seeds.hpp"

namespace {

using namespace kiln;
using namespace kiln::cli;

void write_seeds(const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  int n = 0;
  for (ElementType type : {ElementType::f64, ElementType::f32, ElementType::i32, ElementType::i64, ElementType::boolean})
    for (Order order : {Order::c, Order::fortran})
      for (const std::vector<std::int64_t>& shape :
           {std::vector<std::int64_t>{3}, {2, 3}, {2, 1, 3}, {1, 2, 2, 2}, {0, 4}}) {
        save_npy(folder / ("seed" + std::to_string(n++) + ".npy"), HostArray::zeros(type, shape, order));
      }
  std::printf("npy_fuzz: %d seeds written to %s\n", n, folder.c_str());
}

// The input as a file, as load_npy reads one: an anonymous memory file.
std::filesystem::path as_file(const std::uint8_t* data, std::size_t size, int& fd) {
  fd = ::memfd_create("npy_fuzz", MFD_CLOEXEC);
  if (fd < 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<std::size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  write_seeds_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  int fd = -1;
  const std::filesystem::path path = as_file(data, size, fd);
  try {
    const HostArray array = load_npy(path);
    (void)array.view();
  } catch (const NpyError&) {
    // the reader's answer to a bad file: fine
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npy_fuzz: not an NpyError: %s\n", e.what());
    std::abort();
  }
  ::close(fd);
  return 0;
}
