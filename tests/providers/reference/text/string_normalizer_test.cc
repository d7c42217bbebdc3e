// StringNormalizer beyond the ONNX tests: UTF-8 case changes and case-insensitive stopwords,
// a [1, C] input whose strings are all removed, case-sensitive matching, and malformed UTF-8.
// Expected values are Python's str.lower() / str.upper().
#include <locale>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor strings(const Shape& shape, const std::vector<std::string>& v) {
  return Tensor::from_vector<std::string>(shape, v);
}

Outputs normalize(const Tensor& x, const std::string& action, int64_t sensitive,
                  const std::vector<std::string>& stopwords) {
  return OpTester("StringNormalizer", 10)
      .input("x", x)
      .attr("case_change_action", action)
      .attr("is_case_sensitive", sensitive)
      .attr("stopwords", stopwords)
      .output("y")
      .run({{"x", x}});
}

bool has_utf8_locale() {
  try {
    std::locale("C.UTF-8");
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

TEST(StringNormalizer, Utf8CaseAndCaseInsensitiveStopwords) {
  if (!has_utf8_locale()) GTEST_SKIP() << "no C.UTF-8 locale: only ASCII changes case";
  // [w.lower() for w in ["Éa", "ÜBER", "b"] if w.lower() != "über"] == ["éa", "b"]
  Outputs out = normalize(strings({3}, {"\xC3\x89"
                                        "a",
                                        "\xC3\x9C"
                                        "BER",
                                        "b"}),
                          "LOWER", 0,
                          {"\xC3\xBC"
                           "ber"});
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  EXPECT_EQ(values<std::string>(out[0]), (std::vector<std::string>{"\xC3\xA9"
                                                                   "a",
                                                                   "b"}));
}

TEST(StringNormalizer, AllRemovedFromATwoDimensionalInput) {
  Outputs out = normalize(strings({1, 2}, {"Monday", "MONDAY"}), "UPPER", 0, {"monday"});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1}));
  EXPECT_EQ(values<std::string>(out[0]), (std::vector<std::string>{""}));
}

TEST(StringNormalizer, CaseSensitiveKeepsOtherCases) {
  Outputs out = normalize(strings({3}, {"Monday", "monday", "x"}), "NONE", 1, {"monday"});
  EXPECT_EQ(values<std::string>(out[0]), (std::vector<std::string>{"Monday", "x"}));
}

TEST(StringNormalizer, MalformedUtf8IsAnError) {
  const std::string msg = error_of([] { normalize(strings({2}, {"ok", "\xC3"}), "UPPER", 1, {}); });
  EXPECT_NE(msg.find("node 'node' (StringNormalizer)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("string 1 is not valid UTF-8"), std::string::npos) << msg;
}

TEST(StringNormalizer, RejectsOtherShapes) {
  const std::string msg = error_of([] {
    normalize(strings({2, 2}, {"a", "b", "c", "d"}), "NONE", 1, {});
  });
  EXPECT_NE(msg.find("[1, C]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace recur::test
