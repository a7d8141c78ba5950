// What a GPU binary's ELF header says it is for, shared by the NVRTC, hipRTC
// and GPU-cache tests: the machine and the architecture in e_flags.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace kiln::testing {

inline constexpr std::uint16_t kEmCuda = 190;
inline constexpr std::uint16_t kEmAmdgpu = 224;

struct ElfHeader {
  bool is_elf = false;    // 64 bytes at least, starting "\x7fELF"
  bool is_elf64 = false;
  std::uint16_t machine = 0;
  std::uint32_t flags = 0;
  // CUDA 12.8 on: the SM number in e_flags' second byte (0x5a04 for sm_90).
  std::uint32_t cuda_sm() const { return (flags >> 8) & 0xff; }
  // EF_AMDGPU_MACH_AMDGCN_* (LLVM's ELF.h): the low byte.
  std::uint32_t amdgpu_mach() const { return flags & 0xff; }
};

inline ElfHeader elf_header(const std::vector<char>& bytes) {
  ElfHeader h;
  if (bytes.size() < 64 || std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0) return h;
  h.is_elf = true;
  h.is_elf64 = bytes[4] == 2;
  std::memcpy(&h.machine, bytes.data() + 18, 2);
  std::memcpy(&h.flags, bytes.data() + 48, 4);
  return h;
}

}  // namespace kiln::testing
