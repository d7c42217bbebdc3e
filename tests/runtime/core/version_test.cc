#include "recur/version.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace recur {
namespace {

// The version written in CMakeLists.txt's project() line, read here independently of CMake.
std::string project_version() {
  std::ifstream in(std::string(RECUR_SOURCE_DIR) + "/CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  const std::string s = text.str();
  if (!std::regex_search(s, m, std::regex(R"(project\(recur VERSION ([0-9]+\.[0-9]+\.[0-9]+))"))) {
    return "";
  }
  return m[1];
}

TEST(Version, HeaderMacrosComeFromTheProjectVersion) {
  const std::string v = project_version();
  ASSERT_FALSE(v.empty()) << "no project(recur VERSION x.y.z) in CMakeLists.txt";
  EXPECT_EQ(RECUR_VERSION_STRING, v);
  EXPECT_EQ(std::to_string(RECUR_VERSION_MAJOR) + "." + std::to_string(RECUR_VERSION_MINOR) + "." +
                std::to_string(RECUR_VERSION_PATCH),
            v);
  EXPECT_EQ(RECUR_VERSION,
            RECUR_VERSION_MAJOR * 10000 + RECUR_VERSION_MINOR * 100 + RECUR_VERSION_PATCH);
}

TEST(Version, LibraryReportsTheSameVersionAsItsHeaders) {
  EXPECT_STREQ(version(), RECUR_VERSION_STRING);
}

}  // namespace
}  // namespace recur
