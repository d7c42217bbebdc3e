#include <gtest/gtest.h>

#include "recur/recur.h"

TEST(Smoke, ListsReference) {
  bool found = false;
  for (const auto& p : recur::list_providers()) found |= p.name == "reference";
  EXPECT_TRUE(found);
}
