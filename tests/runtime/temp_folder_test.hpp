// A fixture whose tests each get a fresh folder under the system's temporary
// one (tests/support/temp_dir.hpp; gtest makes a fixture per test).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/temp_dir.hpp"

namespace kiln::runtime::testing {

class TempFolderTest : public ::testing::Test {
 protected:
  const std::filesystem::path& temp_folder() const { return folder_.path(); }

 private:
  kiln::testing::TempDir folder_{"kiln-runtime-test"};
};

}  // namespace kiln::runtime::testing
