// The sequence operators chained into small models: splitting and joining (numeric and string
// tensors), positions (negative, out of range), and static sequence types. Expected values are
// numpy's: np.array_split / np.split / np.concatenate / np.stack of the same arrays.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::ModelBuilder;
using testing::set_attr;

void add_output(ModelBuilder& mb, const std::string& name) {
  mb.graph().add_output()->set_name(name);
}

Session session_of(const ModelBuilder& mb) {
  const std::string bytes = mb.bytes();
  return Session::from_bytes(bytes.data(), bytes.size(), SessionOptions{}.providers({"reference"}));
}

template <class T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

// The first value of each element of a sequence.
std::vector<float> firsts(const Tensor& seq) {
  std::vector<float> v;
  for (const Tensor& e : seq.elements()) v.push_back(e.data<float>()[0]);
  return v;
}

// Three float inputs a, b, c of one element each, fed 1, 2 and 3, into SequenceConstruct
// of `first` of them ("seq"); `more` adds the nodes under test.
Outputs run_on_seq(size_t first, bool seq_is_output, const std::vector<std::string>& outputs,
                   const std::function<void(ModelBuilder&)>& more) {
  ModelBuilder mb(17);
  for (const char* n : {"a", "b", "c"}) mb.input(n, DType::kFloat32, {1});
  const std::vector<std::string> all = {"a", "b", "c"};
  mb.node("SequenceConstruct", std::vector<std::string>(all.begin(), all.begin() + first), {"seq"});
  more(mb);
  if (seq_is_output) add_output(mb, "seq");
  for (const auto& o : outputs) add_output(mb, o);
  return session_of(mb).run({{"a", Tensor::from_vector<float>({1}, {1})},
                             {"b", Tensor::from_vector<float>({1}, {2})},
                             {"c", Tensor::from_vector<float>({1}, {3})}});
}

Tensor arange(const Shape& shape) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(SplitToSequence, ScalarSplitLeavesAShorterLastPiece) {
  ModelBuilder mb(17);
  mb.input("x", DType::kFloat32, {5, 2});
  mb.initializer("split", Tensor::scalar<int64_t>(2));
  mb.initializer("last", Tensor::scalar<int32_t>(-1));
  mb.node("SplitToSequence", {"x", "split"}, {"seq"}, "split");
  mb.node("SequenceLength", {"seq"}, {"n"});
  mb.node("SequenceAt", {"seq", "last"}, {"tail"});
  set_attr(mb.node("ConcatFromSequence", {"seq"}, {"joined"}), "axis", int64_t{0});
  for (const char* o : {"n", "tail", "joined"}) add_output(mb, o);
  const Tensor x = arange({5, 2});
  Outputs out = session_of(mb).run({{"x", x}});
  // np.array_split(np.arange(10).reshape(5, 2), [2, 4]): pieces of 2, 2 and 1 rows.
  EXPECT_EQ(values_of<int64_t>(out[0]), (std::vector<int64_t>{3}));
  EXPECT_EQ(out[1].shape(), (Shape{1, 2}));
  EXPECT_EQ(values_of<float>(out[1]), (std::vector<float>{8, 9}));
  EXPECT_EQ(out[2].shape(), (Shape{5, 2}));
  EXPECT_EQ(values_of<float>(out[2]), values_of<float>(x));
}

TEST(SplitToSequence, KeepdimsZeroThenStackOnANewLastAxis) {
  ModelBuilder mb(17);
  mb.input("x", DType::kFloat32, {2, 3});
  auto& split = mb.node("SplitToSequence", {"x"}, {"seq"});
  set_attr(split, "axis", int64_t{1});
  set_attr(split, "keepdims", int64_t{0});
  auto& concat = mb.node("ConcatFromSequence", {"seq"}, {"y"});
  set_attr(concat, "axis", int64_t{-1});
  set_attr(concat, "new_axis", int64_t{1});
  mb.node("SequenceAt", {"seq", "one"}, {"col"});
  mb.initializer("one", Tensor::scalar<int64_t>(1));
  add_output(mb, "y");
  add_output(mb, "col");
  const Tensor x = arange({2, 3});
  Outputs out = session_of(mb).run({{"x", x}});
  // np.stack([x[:, i] for i in range(3)], axis=-1) == x; x[:, 1] == [1, 4]
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values_of<float>(out[0]), values_of<float>(x));
  EXPECT_EQ(out[1].shape(), (Shape{2}));
  EXPECT_EQ(values_of<float>(out[1]), (std::vector<float>{1, 4}));
}

// Found by fuzz_model (tests/fuzz_regressions/model/concat_from_sequence_new_axis_ranks.onnx):
// the new axis was inserted into every tensor's shape at tensor 0's axis before the ranks were
// compared, past the end of a lower-rank tensor's shape.
TEST(ConcatFromSequence, NewAxisWithTensorsOfDifferentRanksIsAnError) {
  ModelBuilder mb(17);
  mb.input("a", DType::kFloat32, {2, 3, 4});
  mb.input("b", DType::kFloat32, {2});
  mb.node("SequenceConstruct", {"a", "b"}, {"seq"});
  auto& concat = mb.node("ConcatFromSequence", {"seq"}, {"y"}, "join");
  set_attr(concat, "axis", int64_t{-1});
  set_attr(concat, "new_axis", int64_t{1});
  add_output(mb, "y");
  testing::expect_error(
      [&] {
        session_of(mb).run({{"a", arange({2, 3, 4})}, {"b", arange({2})}});
      },
      ErrorCode::kInvalidArgument, {"tensor 1 has shape [2]", "tensor 0's [2,3,4]"});
}

TEST(SplitToSequence, SplitLengthsMustSumToTheAxis) {
  ModelBuilder mb(17);
  mb.input("x", DType::kFloat32, {3});
  mb.initializer("split", Tensor::from_vector<int64_t>({2}, {1, 1}));
  mb.node("SplitToSequence", {"x", "split"}, {"seq"}, "s");
  mb.node("SequenceLength", {"seq"}, {"n"});
  add_output(mb, "n");
  testing::expect_error(
      [&] {
        session_of(mb).run({{"x", arange({3})}});
      },
      ErrorCode::kInvalidArgument, {"node 's' (SplitToSequence)", "sums to 2"});
}

TEST(Sequence, StringTensorsSplitInsertAndJoin) {
  ModelBuilder mb(17);
  mb.input("x", DType::kString, {3});
  mb.input("w", DType::kString, {1});
  mb.initializer("front", Tensor::scalar<int64_t>(0));
  mb.node("SplitToSequence", {"x"}, {"seq"});
  mb.node("SequenceInsert", {"seq", "w", "front"}, {"seq2"});
  set_attr(mb.node("ConcatFromSequence", {"seq2"}, {"y"}), "axis", int64_t{0});
  add_output(mb, "y");
  const Tensor x = Tensor::from_vector<std::string>({3}, {"a", "bb", "long enough to allocate"});
  const Tensor w = Tensor::from_vector<std::string>({1}, {"first"});
  Outputs out = session_of(mb).run({{"x", x}, {"w", w}});
  EXPECT_EQ(values_of<std::string>(out[0]),
            (std::vector<std::string>{"first", "a", "bb", "long enough to allocate"}));
}

TEST(Sequence, PositionsOutOfRangeAreErrors) {
  ModelBuilder mb(17);
  mb.input("a", DType::kFloat32, {1});
  mb.input("p", DType::kInt64, {});
  mb.node("SequenceConstruct", {"a", "a", "a"}, {"seq"});
  mb.node("SequenceAt", {"seq", "p"}, {"y"}, "at");
  add_output(mb, "y");
  Session s = session_of(mb);
  // Valid positions are [-3, 2].
  Outputs ok = s.run({{"a", arange({1})}, {"p", Tensor::scalar<int64_t>(-3)}});
  EXPECT_EQ(ok[0].shape(), (Shape{1}));
  for (int64_t bad : {int64_t{3}, int64_t{-4}}) {
    testing::expect_error(
        [&] {
          s.run({{"a", arange({1})}, {"p", Tensor::scalar<int64_t>(bad)}});
        },
        ErrorCode::kOutOfRange, {"node 'at' (SequenceAt)", "out of range"});
  }
}

TEST(Sequence, InsertCanAppendAndChecksTheDtype) {
  ModelBuilder mb(17);
  mb.input("a", DType::kFloat32, {1});
  mb.input("b", DType::kFloat32, {2});
  mb.input("i", DType::kInt32, {2});
  mb.initializer("end", Tensor::scalar<int32_t>(1));
  mb.node("SequenceConstruct", {"a"}, {"seq"});
  mb.node("SequenceInsert", {"seq", "b", "end"}, {"seq2"});  // position n: appends
  mb.node("SequenceAt", {"seq2", "end"}, {"y"});
  mb.node("SequenceInsert", {"seq", "i"}, {"bad"}, "ins");
  mb.node("SequenceLength", {"bad"}, {"n"});
  add_output(mb, "y");
  add_output(mb, "n");
  testing::expect_error(
      [&] {
        session_of(mb).run({{"a", arange({1})},
                            {"b", arange({2})},
                            {"i", Tensor::from_vector<int32_t>({2}, {1, 2})}});
      },
      ErrorCode::kInvalidArgument, {"node 'ins' (SequenceInsert)", "int32"});
}

// SequenceInsert grows in place only a sequence it reads last: one that is also a graph
// output, or that another node reads too, comes out as it went in.
TEST(Sequence, InsertLeavesASequenceOthersReadUnchanged) {
  for (bool seq_is_output : {true, false}) {
    const Outputs o = run_on_seq(1, seq_is_output, {"s1", "s2"}, [](ModelBuilder& mb) {
      mb.node("SequenceInsert", {"seq", "b"}, {"s1"});
      mb.node("SequenceInsert", {"seq", "c"}, {"s2"});
    });
    if (seq_is_output) {
      EXPECT_EQ(firsts(o["seq"]), (std::vector<float>{1}));
    }
    EXPECT_EQ(firsts(o["s1"]), (std::vector<float>{1, 2})) << seq_is_output;
    EXPECT_EQ(firsts(o["s2"]), (std::vector<float>{1, 3})) << seq_is_output;
  }
}

// SequenceErase, likewise, shrinks in place only a sequence it reads last.
TEST(Sequence, EraseLeavesASequenceOthersReadUnchanged) {
  for (bool seq_is_output : {true, false}) {
    const Outputs o = run_on_seq(3, seq_is_output, {"s1", "s2"}, [](ModelBuilder& mb) {
      mb.initializer("first", Tensor::scalar<int64_t>(0));
      mb.node("SequenceErase", {"seq"}, {"s1"});
      mb.node("SequenceErase", {"seq", "first"}, {"s2"});
    });
    if (seq_is_output) {
      EXPECT_EQ(firsts(o["seq"]), (std::vector<float>{1, 2, 3}));
    }
    EXPECT_EQ(firsts(o["s1"]), (std::vector<float>{1, 2})) << seq_is_output;
    EXPECT_EQ(firsts(o["s2"]), (std::vector<float>{2, 3})) << seq_is_output;
  }
}

// A Loop that appends its iteration number to a carried sequence, as a decoder appends its
// tokens: from an empty sequence made in the graph, and from one the caller feeds, which must
// not change.
TEST(Sequence, LoopAppendsToACarriedSequence) {
  for (bool fed : {false, true}) {
    ModelBuilder mb(17);
    mb.input("m", DType::kInt64, {});
    if (fed) {
      auto* in = mb.graph().add_input();
      in->set_name("seq0");
      in->mutable_type()
          ->mutable_sequence_type()
          ->mutable_elem_type()
          ->mutable_tensor_type()
          ->set_elem_type(7);
    } else {
      set_attr(mb.node("SequenceEmpty", {}, {"seq0"}), "dtype", int64_t{7});
    }
    onnx::GraphProto body;
    body.set_name("body");
    auto add_body_input = [&](const char* name, bool sequence, int type) {
      auto* i = body.add_input();
      i->set_name(name);
      auto* t = i->mutable_type();
      (sequence ? t->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()
                : t->mutable_tensor_type())
          ->set_elem_type(type);
    };
    add_body_input("iter", false, 7);
    add_body_input("cond_in", false, 9);
    add_body_input("seq_in", true, 7);
    auto node = [&](const char* op, std::vector<std::string> in, const char* out) {
      auto* n = body.add_node();
      n->set_op_type(op);
      for (const auto& i : in) n->add_input(i);
      n->add_output(out);
    };
    node("Identity", {"cond_in"}, "cond_out");
    node("SequenceInsert", {"seq_in", "iter"}, "seq_out");
    body.add_output()->set_name("cond_out");
    body.add_output()->set_name("seq_out");
    set_attr(mb.node("Loop", {"m", "", "seq0"}, {"seq"}), "body", body);
    add_output(mb, "seq");
    Feeds feeds = {{"m", Tensor::scalar<int64_t>(3000)}};
    const Tensor start = Tensor::sequence({Tensor::scalar<int64_t>(-1)});
    if (fed) feeds.emplace_back("seq0", start);
    const Outputs o = session_of(mb).run(feeds);
    const std::vector<Tensor>& got = o["seq"].elements();
    const size_t first = fed ? 1 : 0;
    ASSERT_EQ(got.size(), first + 3000) << fed;
    for (size_t k = 0; k < 3000; ++k) {
      ASSERT_EQ(got[first + k].data<int64_t>()[0], static_cast<int64_t>(k)) << k;
    }
    EXPECT_EQ(start.elements().size(), 1u);  // the caller's sequence is as it was
  }
}

TEST(Sequence, EraseFromAnEmptySequenceIsAnError) {
  ModelBuilder mb(17);
  set_attr(mb.node("SequenceEmpty", {}, {"seq"}), "dtype", int64_t{7});
  mb.node("SequenceLength", {"seq"}, {"n"});
  mb.node("SequenceErase", {"seq"}, {"seq2"}, "erase");
  mb.node("SequenceLength", {"seq2"}, {"m"});
  add_output(mb, "n");
  add_output(mb, "m");
  testing::expect_error([&] { session_of(mb).run({}); }, ErrorCode::kOutOfRange,
                        {"node 'erase' (SequenceErase)", "empty"});
}

TEST(Sequence, StaticTypesOfSequenceOutputs) {
  ModelBuilder mb(17);
  set_attr(mb.node("SequenceEmpty", {}, {"seq"}), "dtype", int64_t{7});
  mb.node("SequenceLength", {"seq"}, {"n"});
  add_output(mb, "seq");
  add_output(mb, "n");
  Session s = session_of(mb);
  EXPECT_EQ(s.outputs()[0].dtype, DType::kSequence);
  EXPECT_EQ(s.outputs()[0].element_dtype, DType::kInt64);
  EXPECT_EQ(s.outputs()[1].dtype, DType::kInt64);
  Outputs out = s.run({});
  ASSERT_TRUE(out[0].is_sequence());
  EXPECT_TRUE(out[0].elements().empty());
  EXPECT_EQ(out[0].element_dtype(), DType::kInt64);
  EXPECT_EQ(values_of<int64_t>(out[1]), (std::vector<int64_t>{0}));
}

TEST(ConcatFromSequence, MismatchedShapesAreErrors) {
  ModelBuilder mb(17);
  mb.input("a", DType::kFloat32, {2, 2});
  mb.input("b", DType::kFloat32, {2, 3});
  mb.node("SequenceConstruct", {"a", "b"}, {"seq"});
  auto& c = mb.node("ConcatFromSequence", {"seq"}, {"y"}, "cat");
  set_attr(c, "axis", int64_t{0});
  add_output(mb, "y");
  testing::expect_error(
      [&] {
        session_of(mb).run({{"a", arange({2, 2})}, {"b", arange({2, 3})}});
      },
      ErrorCode::kInvalidArgument, {"node 'cat' (ConcatFromSequence)", "does not match"});
}

TEST(ConcatFromSequence, ScalarsStackButDoNotConcatenate) {
  auto model = [](int64_t new_axis) {
    ModelBuilder mb(17);
    mb.input("a", DType::kInt32, {});
    mb.input("b", DType::kInt32, {});
    mb.node("SequenceConstruct", {"a", "b"}, {"seq"});
    auto& c = mb.node("ConcatFromSequence", {"seq"}, {"y"}, "cat");
    set_attr(c, "axis", int64_t{0});
    set_attr(c, "new_axis", new_axis);
    mb.graph().add_output()->set_name("y");
    return session_of(mb);
  };
  const Feeds feeds = {{"a", Tensor::scalar<int32_t>(4)}, {"b", Tensor::scalar<int32_t>(7)}};
  // np.stack([4, 7]) == [4, 7]; np.concatenate of 0-d arrays is an error.
  Outputs out = model(1).run(feeds);
  EXPECT_EQ(out[0].shape(), (Shape{2}));
  EXPECT_EQ(values_of<int32_t>(out[0]), (std::vector<int32_t>{4, 7}));
  testing::expect_error([&] { model(0).run(feeds); }, ErrorCode::kInvalidArgument,
                        {"node 'cat' (ConcatFromSequence)", "scalars"});
}

}  // namespace
}  // namespace recur
