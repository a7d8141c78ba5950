#!/usr/bin/env bash
# Installs what kiln needs on Debian 12 and nothing else. Idempotent: when every
# package is present it does not touch apt at all.
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config  # scripts/build.sh builds with Ninja; make: the install test's Makefile
  llvm-19-dev libclang-19-dev libclang-cpp19-dev clang-19
  liblld-19-dev zlib1g-dev libzstd-dev  # lld, in process: links each kernel into a shared object
  libclang-rt-19-dev  # libFuzzer, ASan and UBSan runtimes for tests/fuzz (not part of clang-19)
  libxxhash-dev libsqlite3-dev libspdlog-dev
  libexpected-dev  # tl::expected (header-only): base::Result, the typed results of the cache
  libgtest-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev
  libxtensor-dev
  # hipRTC (AMD GPUs, compiled without one): ROCm 5.2 from Debian. kiln dlopens
  # libamdhip64 at run time; the device libraries are what hipRTC links against.
  libamdhip64-dev libamd-comgr-dev rocm-device-libs
  # OpenMPI: kiln::mpi (collective resolution) and its tests under mpirun.
  libopenmpi-dev openmpi-bin
  # The Fortran module (bindings/fortran) and its tests.
  gfortran
  # The Python package (bindings/python) and kiln report: a virtual environment
  # (Debian's own Python refuses pip installs outside one), headers to build it.
  python3-venv python3-dev
  # api.bad_tables_valgrind: the JIT'd kernels' writes, which ASan cannot see.
  valgrind
)

# clang parses kernels against the newest GCC it finds; that GCC's libstdc++
# headers must exist or clang's driver produces an unusable include path.
newest_gcc=$(ls /usr/lib/gcc/x86_64-linux-gnu 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -n "${newest_gcc}" ]]; then
  packages+=("libstdc++-${newest_gcc%%.*}-dev")
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

bash "$(dirname "$0")/python_env.sh"
