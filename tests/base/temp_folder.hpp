// A fresh temporary folder per test, removed with whatever is in it
// (tests/support/temp_dir.hpp, named for the base layer's tests).
#pragma once

#include "tests/support/temp_dir.hpp"

namespace kiln::base::testing {

class TempFolder : public kiln::testing::TempDir {
 public:
  TempFolder() : kiln::testing::TempDir("kiln-base-test") {}
};

}  // namespace kiln::base::testing
