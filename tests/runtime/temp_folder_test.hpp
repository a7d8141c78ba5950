// A fixture whose tests each get a fresh folder under the system's temporary
// one (made in SetUp, removed with what it holds in TearDown).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

namespace kiln::runtime::testing {

class TempFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-runtime-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    temp_folder_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(temp_folder_); }
  const std::filesystem::path& temp_folder() const { return temp_folder_; }

 private:
  std::filesystem::path temp_folder_;
};

}  // namespace kiln::runtime::testing
