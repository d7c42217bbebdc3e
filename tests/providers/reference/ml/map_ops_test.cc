// ZipMap, DictVectorizer and CastMap: the ai.onnx.ml operators that make and take maps. The
// expected values are worked out by hand from the specification and ONNX Runtime's documented
// behaviour (docs/semantics.md, "Maps").
#include <cmath>
#include <string>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr const char* kMl = "ai.onnx.ml";

Tensor string_map(const std::vector<std::string>& keys, const std::vector<float>& values) {
  const auto n = static_cast<int64_t>(keys.size());
  return Tensor::map(Tensor::from_vector<std::string>({n}, keys),
                     Tensor::from_vector<float>({n}, values));
}

template <typename V>
Tensor int_map(const std::vector<int64_t>& keys, const std::vector<V>& values) {
  const auto n = static_cast<int64_t>(keys.size());
  return Tensor::map(Tensor::from_vector<int64_t>({n}, keys), Tensor::from_vector<V>({n}, values));
}

TEST(ZipMap, RowsBecomeMapsInLabelOrder) {
  OpTester("ZipMap", 1, kMl)
      .input(Tensor::from_vector<float>({2, 3}, {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f}))
      .attr("classlabels_strings", std::vector<std::string>{"cat", "ant", "dog"})
      .expect(Tensor::sequence({string_map({"cat", "ant", "dog"}, {0.1f, 0.2f, 0.7f}),
                                string_map({"cat", "ant", "dog"}, {0.5f, 0.25f, 0.25f})}))
      .check();
}

TEST(ZipMap, OneDimensionalInputIsOneRowWithIntLabels) {
  OpTester("ZipMap", 1, kMl)
      .input(Tensor::from_vector<float>({2}, {0.4f, 0.6f}))
      .attr("classlabels_int64s", std::vector<int64_t>{7, -3})
      .expect(Tensor::sequence({int_map<float>({7, -3}, {0.4f, 0.6f})}))
      .check();
}

TEST(ZipMap, EmptyBatchIsAnEmptySequence) {
  Outputs out = OpTester("ZipMap", 1, kMl)
                    .input(Tensor::zeros(DType::kFloat32, {0, 2}))
                    .attr("classlabels_int64s", std::vector<int64_t>{0, 1})
                    .run();
  ASSERT_TRUE(out[0].is_sequence());
  EXPECT_EQ(out[0].elements().size(), 0u);
}

TEST(ZipMap, MapsOfOneRunAreIndependentOfTheInput) {
  // The maps must own their values: feeding new numbers into the same input buffer for a second
  // run must not change the first run's maps.
  std::vector<float> x = {1, 2};
  OpTester t("ZipMap", 1, kMl);
  t.input("x", Tensor::borrow(x.data(), DType::kFloat32, {1, 2}))
      .attr("classlabels_int64s", std::vector<int64_t>{0, 1});
  Outputs first = t.run();
  x[0] = 9;
  t.run();
  EXPECT_EQ(first[0].elements()[0].map_values().data<float>()[0], 1.0f);
}

TEST(ZipMap, ModelDeclaresASequenceOfMaps) {
  Session s = OpTester("ZipMap", 1, kMl)
                  .input(Tensor::from_vector<float>({1, 2}, {0, 1}))
                  .attr("classlabels_strings", std::vector<std::string>{"a", "b"})
                  .session("reference");
  ASSERT_EQ(s.outputs().size(), 1u);
  EXPECT_EQ(s.outputs()[0].dtype, DType::kSequence);
  EXPECT_EQ(s.outputs()[0].element_dtype, DType::kMap);
  EXPECT_EQ(s.outputs()[0].map_key_dtype, DType::kString);
  EXPECT_EQ(s.outputs()[0].map_value_dtype, DType::kFloat32);
}

TEST(ZipMap, WrongWidthIsAnError) {
  expect_error(OpTester("ZipMap", 1, kMl)
                   .input(Tensor::from_vector<float>({1, 3}, {0, 1, 2}))
                   .attr("classlabels_int64s", std::vector<int64_t>{0, 1}),
               ErrorCode::kInvalidArgument, "3 columns for 2 class labels");
}

TEST(ZipMap, RankThreeIsAnError) {
  expect_error(OpTester("ZipMap", 1, kMl)
                   .input(Tensor::zeros(DType::kFloat32, {1, 1, 2}))
                   .attr("classlabels_int64s", std::vector<int64_t>{0, 1}),
               ErrorCode::kInvalidArgument, "[C] or [N, C]");
}

TEST(ZipMap, RepeatedLabelIsRefusedAtLoad) {
  expect_error(OpTester("ZipMap", 1, kMl)
                   .input(Tensor::zeros(DType::kFloat32, {1, 2}))
                   .attr("classlabels_strings", std::vector<std::string>{"a", "a"}),
               ErrorCode::kInvalidModel, "'a' is given twice");
}

TEST(ZipMap, BothOrNoLabelListsAreRefused) {
  expect_error(OpTester("ZipMap", 1, kMl).input(Tensor::zeros(DType::kFloat32, {1, 2})),
               ErrorCode::kInvalidModel, "exactly one of");
  expect_error(OpTester("ZipMap", 1, kMl)
                   .input(Tensor::zeros(DType::kFloat32, {1, 1}))
                   .attr("classlabels_strings", std::vector<std::string>{"a"})
                   .attr("classlabels_int64s", std::vector<int64_t>{1}),
               ErrorCode::kInvalidModel, "exactly one of");
}

TEST(DictVectorizer, ValuesAtVocabularyKeysOthersZero) {
  OpTester("DictVectorizer", 1, kMl)
      .input(string_map({"b", "zz", "a"}, {2.5f, 9.0f, -1.0f}))
      .attr("string_vocabulary", std::vector<std::string>{"a", "b", "c"})
      .expect<float>({1, 3}, {-1.0f, 2.5f, 0.0f})
      .check();
}

TEST(DictVectorizer, IntKeysStringValuesAndARepeatedVocabularyKey) {
  OpTester("DictVectorizer", 1, kMl)
      .input(int_map<std::string>({4, 2}, {"four", "two"}))
      .attr("int64_vocabulary", std::vector<int64_t>{2, 3, 2, 4})
      .expect<std::string>({1, 4}, {"two", "", "two", "four"})
      .check();
}

TEST(DictVectorizer, DoubleAndInt64Values) {
  OpTester("DictVectorizer", 1, kMl)
      .input(int_map<double>({1}, {0.125}))
      .attr("int64_vocabulary", std::vector<int64_t>{0, 1})
      .expect<double>({1, 2}, {0.0, 0.125})
      .check();
  OpTester("DictVectorizer", 1, kMl)
      .input(int_map<int64_t>({0}, {-5}))
      .attr("int64_vocabulary", std::vector<int64_t>{0})
      .expect<int64_t>({1, 1}, {-5})
      .check();
}

TEST(DictVectorizer, KeyTypeMustMatchTheVocabulary) {
  expect_error(OpTester("DictVectorizer", 1, kMl)
                   .input(int_map<float>({1}, {1.0f}))
                   .attr("string_vocabulary", std::vector<std::string>{"1"}),
               ErrorCode::kInvalidArgument, "int64 keys, but the vocabulary is string");
}

TEST(DictVectorizer, ATensorIsNotAMap) {
  expect_error(OpTester("DictVectorizer", 1, kMl)
                   .input(Tensor::from_vector<float>({1}, {1.0f}))
                   .attr("int64_vocabulary", std::vector<int64_t>{0}),
               ErrorCode::kInvalidArgument, "X must be a map");
}

TEST(CastMap, DenseWritesValuesInKeyOrder) {
  OpTester("CastMap", 1, kMl)
      .input(int_map<float>({5, -1, 2}, {0.5f, 1.5f, 2.5f}))
      .expect<float>({1, 3}, {1.5f, 2.5f, 0.5f})
      .check();
}

TEST(CastMap, SparsePadsAndDropsKeysBeyondMaxMap) {
  OpTester("CastMap", 1, kMl)
      .input(int_map<float>({3, 1, 9}, {7.9f, -2.5f, 1.0f}))
      .attr("cast_to", std::string("TO_INT64"))
      .attr("map_form", std::string("SPARSE"))
      .attr("max_map", int64_t{5})
      .expect<int64_t>({1, 5}, {0, -2, 0, 7, 0})
      .check();
}

TEST(CastMap, StringsToNumbersAndNumbersToStrings) {
  OpTester("CastMap", 1, kMl)
      .input(int_map<std::string>({0, 1}, {" 2.5", "-3e2x"}))
      .expect<float>({1, 2}, {2.5f, -300.0f})
      .check();
  OpTester("CastMap", 1, kMl)
      .input(int_map<float>({1}, {0.5f}))
      .attr("cast_to", std::string("TO_STRING"))
      .attr("map_form", std::string("SPARSE"))
      .attr("max_map", int64_t{2})
      .expect<std::string>({1, 2}, {"0.f", "0.500000"})
      .check();
}

TEST(CastMap, UnconvertibleValuesNameTheirKey) {
  expect_error(OpTester("CastMap", 1, kMl)
                   .input(int_map<std::string>({4}, {"abc"}))
                   .attr("cast_to", std::string("TO_INT64")),
               ErrorCode::kInvalidArgument, "key 4 'abc' is not a number");
  expect_error(OpTester("CastMap", 1, kMl)
                   .input(int_map<float>({2}, {std::nanf("")}))
                   .attr("cast_to", std::string("TO_INT64")),
               ErrorCode::kInvalidArgument, "key 2 has no int64 value");
  expect_error(OpTester("CastMap", 1, kMl).input(int_map<std::string>({0}, {"1e99"})),
               ErrorCode::kInvalidArgument, "out of range");
}

TEST(CastMap, NegativeKeyInASparseMapIsAnError) {
  expect_error(OpTester("CastMap", 1, kMl)
                   .input(int_map<float>({-1, 0}, {1.0f, 2.0f}))
                   .attr("map_form", std::string("SPARSE"))
                   .attr("max_map", int64_t{2}),
               ErrorCode::kInvalidArgument, "key -1 is negative");
}

TEST(CastMap, BadAttributesAreRefusedAtLoad) {
  expect_error(OpTester("CastMap", 1, kMl)
                   .input(int_map<float>({0}, {1.0f}))
                   .attr("cast_to", std::string("TO_DOUBLE")),
               ErrorCode::kInvalidModel, "cast_to 'TO_DOUBLE'");
  expect_error(OpTester("CastMap", 1, kMl)
                   .input(int_map<float>({0}, {1.0f}))
                   .attr("map_form", std::string("SPARSE"))
                   .attr("max_map", int64_t{0}),
               ErrorCode::kInvalidModel, "max_map = 0");
  expect_error(OpTester("CastMap", 1, kMl)
                   .input(int_map<float>({0}, {1.0f}))
                   .attr("map_form", std::string("BOTH")),
               ErrorCode::kInvalidModel, "map_form 'BOTH'");
}

TEST(CastMap, StringKeyedMapIsAnError) {
  expect_error(OpTester("CastMap", 1, kMl).input(string_map({"a"}, {1.0f})),
               ErrorCode::kInvalidArgument, "map(int64, string) or map(int64, float32)");
}

TEST(Maps, AMapFedToAnOperatorThatTakesNoMapsIsRefused) {
  expect_error(OpTester("Identity", 17).input(int_map<float>({0}, {1.0f})),
               ErrorCode::kNotImplemented, "is a map, which this operator does not take");
}

}  // namespace
}  // namespace recur::test
