// TfIdfVectorizer beyond the ONNX tests (which cover TF on integers only): a string pool,
// TFIDF and IDF weights, skips for bigrams, and the errors. Counts worked out by hand from the
// operator's definition in the comments.
#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

// Pool: 1-grams "a", "b"; 2-gram ("a", "b"); weights 2, 3, 5 into columns 0, 1, 2.
OpTester string_model(const std::string& mode, const Tensor& x) {
  return OpTester("TfIdfVectorizer", 9)
      .input("x", x)
      .attr("mode", mode)
      .attr("min_gram_length", int64_t{1})
      .attr("max_gram_length", int64_t{2})
      .attr("max_skip_count", int64_t{1})
      .attr("ngram_counts", std::vector<int64_t>{0, 2})
      .attr("ngram_indexes", std::vector<int64_t>{0, 1, 2})
      .attr("pool_strings", std::vector<std::string>{"a", "b", "a", "b"})
      .attr("weights", std::vector<float>{2, 3, 5})
      .output("y");
}

TEST(TfIdfVectorizer, StringPoolWithSkipsAndWeights) {
  // ["a", "c", "b", "a", "b"]: "a" twice, "b" twice; ("a", "b") at 0 with one skip and at 3
  // with none: twice. TFIDF = counts * weights = [4, 6, 10]; IDF = weights where counted.
  const Tensor x = Tensor::from_vector<std::string>({5}, {"a", "c", "b", "a", "b"});
  Outputs tfidf = string_model("TFIDF", x).run({{"x", x}});
  EXPECT_EQ(tfidf[0].shape(), (Shape{3}));
  EXPECT_EQ(values<float>(tfidf[0]), (std::vector<float>{4, 6, 10}));
  // Row 2 ["b", "b"] has no "a" and no bigram.
  const Tensor rows = Tensor::from_vector<std::string>({2, 2}, {"a", "b", "b", "b"});
  Outputs idf = string_model("IDF", rows).run({{"x", rows}});
  EXPECT_EQ(idf[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(idf[0]), (std::vector<float>{2, 3, 5, 0, 3, 0}));
}

TEST(TfIdfVectorizer, InputTypeMustMatchThePool) {
  const Tensor x = Tensor::from_vector<int64_t>({2}, {1, 2});
  const std::string msg = error_of([&] { string_model("TF", x).run({{"x", x}}); });
  EXPECT_NE(msg.find("node 'node' (TfIdfVectorizer)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not match the pool"), std::string::npos) << msg;
}

TEST(TfIdfVectorizer, NgramCountsMustSplitThePool) {
  const Tensor x = Tensor::from_vector<int64_t>({2}, {1, 2});
  // Bigrams from pool index 1: three items left, not a whole number of bigrams.
  const std::string msg = error_of([&] {
    OpTester("TfIdfVectorizer", 9)
        .input("x", x)
        .attr("mode", std::string("TF"))
        .attr("min_gram_length", int64_t{2})
        .attr("max_gram_length", int64_t{2})
        .attr("max_skip_count", int64_t{0})
        .attr("ngram_counts", std::vector<int64_t>{0, 1})
        .attr("ngram_indexes", std::vector<int64_t>{0, 1})
        .attr("pool_int64s", std::vector<int64_t>{1, 2, 3, 4})
        .output("y")
        .run({{"x", x}});
  });
  EXPECT_NE(msg.find("do not split a pool of 4 items"), std::string::npos) << msg;
}

}  // namespace
}  // namespace recur::test
