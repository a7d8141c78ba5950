// The collective resolution's messages (runtime/collective/messages.hpp):
// what a member asked for comes back whole, and bytes cut anywhere are an
// Error naming the collective resolution, never a read past their end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/errors.hpp"
#include "runtime/collective/messages.hpp"

namespace kiln::runtime {
namespace {

Asked two_keys() {
  Asked asked;
  asked.keys = {{0x0123456789abcdefULL, 0xfedcba9876543210ULL}, {1, 2}};
  asked.names = {"stencil7", "update_theta_and_exner (generic)"};
  return asked;
}

TEST(CollectiveMessages, WhatAMemberAskedForComesBackWhole) {
  const Asked back = decode(encode(two_keys()));
  EXPECT_FALSE(back.failure);
  ASSERT_EQ(back.keys.size(), 2u);
  EXPECT_EQ(back.keys[0], two_keys().keys[0]);
  EXPECT_EQ(back.keys[1], two_keys().keys[1]);
  EXPECT_EQ(back.names, two_keys().names);
}

TEST(CollectiveMessages, AFailureToPrepareComesBackWithItsStatusAndBytes) {
  Asked asked;
  asked.failure = Unpacked{7, {'n', 'o', ' ', 's', 'p', 'e', 'c'}};
  const Asked back = decode(encode(asked));
  ASSERT_TRUE(back.failure);
  EXPECT_EQ(back.failure->status, 7);
  EXPECT_EQ(std::string(back.failure->bytes.begin(), back.failure->bytes.end()), "no spec");
  EXPECT_TRUE(back.keys.empty());
}

TEST(CollectiveMessages, SharesFollowOneAnotherInOneMessage) {
  std::vector<char> message;
  const std::vector<char> object{'\x7f', 'E', 'L', 'F'};
  pack(message, kObject, object);
  pack(message, 3, std::vector<char>{'x'});
  std::size_t at = 0;
  const Unpacked first = unpack(message, at);
  const Unpacked second = unpack(message, at);
  EXPECT_EQ(first.status, kObject);
  EXPECT_EQ(first.bytes, object);
  EXPECT_EQ(second.status, 3);
  EXPECT_EQ(second.bytes, std::vector<char>{'x'});
  EXPECT_EQ(at, message.size());
}

TEST(CollectiveMessages, EveryTruncationIsAnErrorNamingTheCollectiveResolution) {
  const std::vector<char> whole = encode(two_keys());
  for (std::size_t size = 0; size < whole.size(); ++size) {
    const std::vector<char> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(size));
    try {
      (void)decode(cut);
      ADD_FAILURE() << "a message cut to " << size << " of " << whole.size() << " bytes decoded";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "kiln: collective resolution: a truncated message") << size;
    }
  }
}

}  // namespace
}  // namespace kiln::runtime
