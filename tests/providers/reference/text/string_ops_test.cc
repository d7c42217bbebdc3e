// StringConcat, StringSplit and RegexFullMatch (opset 20) beyond the ONNX tests. Expected
// values are Python's: a + b, str.split(sep, maxsplit), re.fullmatch(pattern, s).
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

Tensor strings(const Shape& shape, const std::vector<std::string>& v) {
  return Tensor::from_vector<std::string>(shape, v);
}

TEST(StringConcat, BroadcastsBothWays) {
  OpTester("StringConcat", 20)
      .input(strings({2, 1}, {"a", "b"}))
      .input(strings({3}, {"x", "", "z"}))
      .expect<std::string>({2, 3}, {"ax", "a", "az", "bx", "b", "bz"})
      .check();
}

TEST(StringConcat, IncompatibleShapesAreAnError) {
  expect_error(OpTester("StringConcat", 20)
                   .input(strings({2}, {"a", "b"}))
                   .input(strings({3}, {"x", "y", "z"})),
               ErrorCode::kInvalidModel, "StringConcat");
}

TEST(StringSplit, DelimiterKeepsEmptyPiecesAndMaxsplitKeepsTheRest) {
  // "a,,b,c".split(",", 2) == ["a", "", "b,c"]; "x".split(",", 2) == ["x"]
  OpTester("StringSplit", 20)
      .output("y")
      .output("z")
      .input(strings({2}, {"a,,b,c", "x"}))
      .attr("delimiter", std::string(","))
      .attr("maxsplit", int64_t{2})
      .expect<std::string>({2, 3}, {"a", "", "b,c", "x", "", ""})
      .expect<int64_t>({2}, {3, 1})
      .check();
}

TEST(StringSplit, WhitespaceWithMaxsplitKeepsTrailingSpace) {
  // "  a b  c ".split(None, 1) == ["a", "b  c "]; "   ".split() == []
  OpTester("StringSplit", 20)
      .output("y")
      .output("z")
      .input(strings({2}, {"  a b  c ", "   "}))
      .attr("maxsplit", int64_t{1})
      .expect<std::string>({2, 2}, {"a", "b  c ", "", ""})
      .expect<int64_t>({2}, {2, 0})
      .check();
}

TEST(StringSplit, MultiCharacterDelimiter) {
  // "1<>2<><>3".split("<>") == ["1", "2", "", "3"]
  OpTester("StringSplit", 20)
      .output("y")
      .output("z")
      .input(strings({1, 1}, {"1<>2<><>3"}))
      .attr("delimiter", std::string("<>"))
      .expect<std::string>({1, 1, 4}, {"1", "2", "", "3"})
      .expect<int64_t>({1, 1}, {4})
      .check();
}

TEST(RegexFullMatch, WholeStringMustMatch) {
  // [bool(re.fullmatch(r"[a-z]+\d*", s)) for s in ["abc12", "abc12!", "", "Z"]]
  OpTester("RegexFullMatch", 20)
      .input(strings({2, 2}, {"abc12", "abc12!", "", "Z"}))
      .attr("pattern", std::string("[a-z]+\\d*"))
      .expect<bool>({2, 2}, {true, false, false, false})
      .check();
}

TEST(RegexFullMatch, PatternStdRegexRefusesIsAnError) {
  expect_error(OpTester("RegexFullMatch", 20)
                   .input(strings({1}, {"a"}))
                   .attr("pattern", std::string("(?P<name>a)")),
               ErrorCode::kNotImplemented, "ECMAScript");
}

}  // namespace
}  // namespace recur::test
