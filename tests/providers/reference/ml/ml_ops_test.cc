// ai.onnx.ml operators beyond the ONNX tests; expected values worked out by hand from the spec.
#include <cmath>
#include <string>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr const char* kMl = "ai.onnx.ml";

TEST(Binarizer, IntegerInputAndThreshold) {
  OpTester("Binarizer", 1, kMl)
      .input(Tensor::from_vector<int32_t>({4}, {1, 2, 3, -1}))
      .attr("threshold", 1.5f)
      .expect<int32_t>({4}, {0, 1, 1, 0})
      .check();
}

TEST(ArrayFeatureExtractor, OneDimensionalInputGivesOneRow) {
  OpTester("ArrayFeatureExtractor", 1, kMl)
      .input(Tensor::from_vector<std::string>({3}, {"a", "b", "c"}))
      .input(Tensor::from_vector<int64_t>({2}, {2, 0}))
      .expect<std::string>({1, 2}, {"c", "a"})
      .check();
}

TEST(ArrayFeatureExtractor, IndexOutOfRangeIsAnError) {
  expect_error(OpTester("ArrayFeatureExtractor", 1, kMl)
                   .input(Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}))
                   .input(Tensor::from_vector<int64_t>({1}, {2})),
               ErrorCode::kInvalidArgument, "out of range");
}

TEST(LabelEncoder, NanKeyMatchesNanAndDefaultString) {
  OpTester("LabelEncoder", 2, kMl)
      .input(Tensor::from_vector<float>({3}, {std::nanf(""), 1.0f, 2.0f}))
      .attr("keys_floats", std::vector<float>{std::nanf(""), 1.0f})
      .attr("values_strings", std::vector<std::string>{"nan", "one"})
      .expect<std::string>({3}, {"nan", "one", "_Unused"})
      .check();
}

TEST(LabelEncoder, RepeatedKeyTakesTheLastValue) {
  OpTester("LabelEncoder", 4, kMl)
      .input(Tensor::from_vector<int64_t>({2}, {1, 7}))
      .attr("keys_int64s", std::vector<int64_t>{1, 1})
      .attr("values_int64s", std::vector<int64_t>{5, 6})
      .attr("default_int64", int64_t{9})
      .expect<int64_t>({2}, {6, 9})
      .check();
}

TEST(LabelEncoder, TwoKeyListsAreAnError) {
  expect_error(OpTester("LabelEncoder", 2, kMl)
                   .input(Tensor::from_vector<int64_t>({1}, {1}))
                   .attr("keys_int64s", std::vector<int64_t>{1})
                   .attr("keys_floats", std::vector<float>{1})
                   .attr("values_int64s", std::vector<int64_t>{5}),
               ErrorCode::kInvalidModel, "exactly one keys_*");
}

// cat->1, dog->2, cow->3, the pairs of most CategoryMapper tests below.
OpTester animals() {
  OpTester t("CategoryMapper", 1, kMl);
  t.attr("cats_strings", std::vector<std::string>{"cat", "dog", "cow"})
      .attr("cats_int64s", std::vector<int64_t>{1, 2, 3});
  return t;
}

TEST(CategoryMapper, StringsToInt64WithDefault) {
  animals()
      .attr("default_int64", int64_t{99})
      .input(Tensor::from_vector<std::string>({4}, {"dog", "cat", "horse", "cow"}))
      .expect<int64_t>({4}, {2, 1, 99, 3})
      .check();
}

TEST(CategoryMapper, Int64ToStringsWithDefault) {
  animals()
      .attr("default_string", std::string("none"))
      .input(Tensor::from_vector<int64_t>({4}, {3, 1, 7, 2}))
      .expect<std::string>({4}, {"cow", "cat", "none", "dog"})
      .check();
}

TEST(CategoryMapper, SpecDefaultsAreMinusOneAndUnused) {
  animals()
      .input(Tensor::from_vector<std::string>({2}, {"cat", "CAT"}))
      .expect<int64_t>({2}, {1, -1})
      .check();
  animals()
      .input(Tensor::from_vector<int64_t>({2}, {0, 2}))
      .expect<std::string>({2}, {"_Unused", "dog"})
      .check();
}

TEST(CategoryMapper, EmptyInputGivesEmptyOutput) {
  animals().input(Tensor::from_vector<std::string>({0}, {})).expect<int64_t>({0}, {}).check();
  animals().input(Tensor::from_vector<int64_t>({2, 0}, {})).expect<std::string>({2, 0}, {}).check();
}

TEST(CategoryMapper, MultiDimensionalInputKeepsItsShape) {
  animals()
      .input(Tensor::from_vector<std::string>({2, 1, 3}, {"cow", "x", "cat", "dog", "dog", ""}))
      .expect<int64_t>({2, 1, 3}, {3, -1, 1, 2, 2, -1})
      .check();
  animals()
      .input(Tensor::from_vector<int64_t>({3, 2}, {1, 2, 3, 4, -1, 1}))
      .expect<std::string>({3, 2}, {"cat", "dog", "cow", "_Unused", "_Unused", "cat"})
      .check();
}

TEST(CategoryMapper, RepeatedKeyTakesItsLastPair) {
  // "a" is paired with 1 and 3; 7 with "x" and "z".
  OpTester t("CategoryMapper", 1, kMl);
  t.attr("cats_strings", std::vector<std::string>{"a", "x", "b", "a", "z"})
      .attr("cats_int64s", std::vector<int64_t>{1, 7, 2, 3, 7});
  OpTester(t)
      .input(Tensor::from_vector<std::string>({3}, {"a", "b", "x"}))
      .expect<int64_t>({3}, {3, 2, 7})
      .check();
  OpTester(t)
      .input(Tensor::from_vector<int64_t>({3}, {7, 1, 3}))
      .expect<std::string>({3}, {"z", "a", "a"})
      .check();
}

TEST(CategoryMapper, EmptyListsMapEverythingToTheDefault) {
  OpTester("CategoryMapper", 1, kMl)
      .attr("cats_strings", std::vector<std::string>{})
      .attr("cats_int64s", std::vector<int64_t>{})
      .input(Tensor::from_vector<std::string>({2}, {"a", ""}))
      .expect<int64_t>({2}, {-1, -1})
      .check();
}

TEST(CategoryMapper, ListsOfDifferentLengthsAreAnError) {
  expect_error(
      OpTester("CategoryMapper", 1, kMl)
          .attr("cats_strings", std::vector<std::string>{"a", "b"})
          .attr("cats_int64s", std::vector<int64_t>{1, 2, 3})
          .input(Tensor::from_vector<std::string>({1}, {"a"})),
      ErrorCode::kInvalidModel,
      "node 'node' (ai.onnx.ml::CategoryMapper): cats_strings has 2 entries but cats_int64s has 3");
}

TEST(CategoryMapper, AMissingListIsAnError) {
  expect_error(OpTester("CategoryMapper", 1, kMl)
                   .attr("cats_strings", std::vector<std::string>{"a"})
                   .input(Tensor::from_vector<std::string>({1}, {"a"})),
               ErrorCode::kInvalidModel,
               "node 'node' (ai.onnx.ml::CategoryMapper): cats_strings and cats_int64s must "
               "both be set; cats_int64s is missing");
  expect_error(OpTester("CategoryMapper", 1, kMl)
                   .attr("default_int64", int64_t{0})
                   .input(Tensor::from_vector<int64_t>({1}, {1})),
               ErrorCode::kInvalidModel, "cats_strings is missing");
}

TEST(CategoryMapper, InputOfAnotherDtypeIsAnError) {
  expect_error(
      animals().input(Tensor::from_vector<float>({2}, {1, 2})), ErrorCode::kInvalidModel,
      "node 'node' (ai.onnx.ml::CategoryMapper): X must be a string or int64 tensor, not float32");
  expect_error(animals().input(Tensor::from_vector<int32_t>({1}, {1})), ErrorCode::kInvalidModel,
               "not int32");
}

OpTester two_trees() {
  // Tree 0: x0 <= 0.5 ? leaf0 (1, target 0) : (x1 < 2 ? leaf1 (2, target 1) : leaf2 (3, target 0)).
  // Tree 1: a single leaf, leaf3 (10, target 1).
  OpTester t("TreeEnsemble", 5, kMl);
  t.attr("nodes_featureids", std::vector<int64_t>{0, 1, 0})
      .attr("nodes_modes", Tensor::from_vector<uint8_t>({3}, {0, 1, 0}))
      .attr("nodes_splits", Tensor::from_vector<float>({3}, {0.5f, 2.0f, 0.0f}))
      .attr("nodes_truenodeids", std::vector<int64_t>{0, 1, 3})
      .attr("nodes_trueleafs", std::vector<int64_t>{1, 1, 1})
      .attr("nodes_falsenodeids", std::vector<int64_t>{1, 2, 3})
      .attr("nodes_falseleafs", std::vector<int64_t>{0, 1, 1})
      .attr("leaf_targetids", std::vector<int64_t>{0, 1, 0, 1})
      .attr("leaf_weights", Tensor::from_vector<float>({4}, {1, 2, 3, 10}))
      .attr("tree_roots", std::vector<int64_t>{0, 2})
      .attr("n_targets", int64_t{2});
  return t;
}

TEST(TreeEnsemble, SumOverTwoTrees) {
  two_trees()
      .input(Tensor::from_vector<float>({3, 2}, {0, 5, 1, 1, 1, 3}))
      .expect<float>({3, 2}, {1, 10, 0, 12, 3, 10})
      .check();
}

TEST(TreeEnsemble, AverageDividesByTheTreeCount) {
  two_trees()
      .attr("aggregate_function", int64_t{0})
      .input(Tensor::from_vector<double>({1, 2}, {1, 1}))
      .expect<double>({1, 2}, {0, 6})
      .check();
}

TEST(TreeEnsemble, FeatureOutOfRangeIsAnError) {
  expect_error(two_trees().input(Tensor::from_vector<float>({1, 1}, {1})),
               ErrorCode::kInvalidArgument, "feature 1 is out of range");
}

TEST(OneHotEncoder, IntegersAndFloatsTruncatedTowardZero) {
  // Categories 3, 1, 7, -1. 1.5 -> 1, 7.9 -> 7, -0.5 -> 0 (none), -1.2 -> -1, NaN and 1e30
  // (no int64 value) match nothing.
  OpTester("OneHotEncoder", 1, kMl)
      .input(Tensor::from_vector<float>({2, 3}, {1.5f, 7.9f, -0.5f, -1.2f, std::nanf(""), 1e30f}))
      .attr("cats_int64s", std::vector<int64_t>{3, 1, 7, -1})
      .expect<float>({2, 3, 4}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0,  //
                                 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0})
      .check();
  OpTester("OneHotEncoder", 1, kMl)
      .input(Tensor::from_vector<int32_t>({2}, {7, 2}))
      .attr("cats_int64s", std::vector<int64_t>{3, 1, 7})
      .expect<float>({2, 3}, {0, 0, 1, 0, 0, 0})
      .check();
}

TEST(OneHotEncoder, StringsAndARepeatedCategory) {
  // "b" is listed twice; its last position wins, as in ONNX Runtime.
  OpTester("OneHotEncoder", 1, kMl)
      .input(Tensor::from_vector<std::string>({3}, {"b", "a", "c"}))
      .attr("cats_strings", std::vector<std::string>{"a", "b", "c", "b"})
      .expect<float>({3, 4}, {0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0})
      .check();
}

TEST(OneHotEncoder, UnknownCategoryWithZerosZeroIsAnError) {
  expect_error(OpTester("OneHotEncoder", 1, kMl)
                   .input(Tensor::from_vector<int64_t>({3}, {1, 7, 5}))
                   .attr("cats_int64s", std::vector<int64_t>{3, 1, 7})
                   .attr("zeros", int64_t{0}),
               ErrorCode::kInvalidArgument, "X[2] = 5 is not a category");
  expect_error(OpTester("OneHotEncoder", 1, kMl)
                   .input(Tensor::from_vector<int64_t>({1}, {1}))
                   .attr("cats_int64s", std::vector<int64_t>{1})
                   .attr("cats_strings", std::vector<std::string>{"a"}),
               ErrorCode::kInvalidModel, "exactly one of cats_int64s and cats_strings");
}

TEST(FeatureVectorizer, CutsPadsAndMixesTypes) {
  // A [2, 2] keeps 3 columns (one of zeros), B [2, 3] int64 keeps 1, C [2, 1, 2] flattens to 2.
  OpTester("FeatureVectorizer", 1, kMl)
      .input(Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}))
      .input(Tensor::from_vector<int64_t>({2, 3}, {5, 6, 7, 8, 9, 10}))
      .input(Tensor::from_vector<double>({2, 1, 2}, {0.5, 1.5, 2.5, 3.5}))
      .attr("inputdimensions", std::vector<int64_t>{3, 1, 2})
      .expect<float>({2, 6}, {1, 2, 0, 5, 0.5f, 1.5f, 3, 4, 0, 8, 2.5f, 3.5f})
      .check();
}

TEST(FeatureVectorizer, OneDimensionalInputIsOneRow) {
  OpTester("FeatureVectorizer", 1, kMl)
      .input(Tensor::from_vector<float>({2}, {1, 2}))
      .input(Tensor::from_vector<float>({2}, {5, 6}))
      .attr("inputdimensions", std::vector<int64_t>{2, 1})
      .expect<float>({1, 3}, {1, 2, 5})
      .check();
}

TEST(FeatureVectorizer, RowCountsAndDimensionsMustAgree) {
  expect_error(OpTester("FeatureVectorizer", 1, kMl)
                   .input(Tensor::from_vector<float>({2, 1}, {1, 2}))
                   .input(Tensor::from_vector<float>({3, 1}, {5, 6, 7}))
                   .attr("inputdimensions", std::vector<int64_t>{1, 1}),
               ErrorCode::kInvalidArgument, "input 1 has 3 rows but input 0 has 2");
  expect_error(OpTester("FeatureVectorizer", 1, kMl)
                   .input(Tensor::from_vector<float>({2, 1}, {1, 2}))
                   .attr("inputdimensions", std::vector<int64_t>{1, 1}),
               ErrorCode::kInvalidModel, "inputdimensions has 2 values for 1 inputs");
  expect_error(OpTester("FeatureVectorizer", 1, kMl)
                   .input(Tensor::from_vector<float>({2, 1}, {1, 2}))
                   .attr("inputdimensions", std::vector<int64_t>{-1}),
               ErrorCode::kInvalidModel, "inputdimensions holds -1");
}

}  // namespace
}  // namespace recur::test
