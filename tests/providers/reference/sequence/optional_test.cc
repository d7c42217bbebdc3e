// Optional values: none fed and returned, the Optional* operators, and the guards that keep
// an empty optional away from operators that do not take one.
#include <gtest/gtest.h>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur {
namespace {

using testing::expect_error;
using testing::floats;
using testing::ModelBuilder;
using testing::TempDir;

void optional_input(ModelBuilder& m, const std::string& name) {
  auto* in = m.graph().add_input();
  in->set_name(name);
  in->mutable_type()
      ->mutable_optional_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(1);
}

TEST(Optional, HasElementAndGetElement) {
  TempDir dir;
  ModelBuilder m(16);
  optional_input(m, "maybe");
  m.output("has", DType::kBool);
  m.output("value", DType::kFloat32);
  m.node("OptionalHasElement", {"maybe"}, {"has"});
  m.node("OptionalGetElement", {"maybe"}, {"value"}, "get");
  Session s(m.save(dir.path()), SessionOptions().providers({"reference"}));
  ASSERT_EQ(s.inputs().size(), 1u);
  EXPECT_TRUE(s.inputs()[0].optional);

  Outputs present = s.run({{"maybe", floats({2}, {1.5f, -2})}});
  EXPECT_TRUE(present["has"].data<bool>()[0]);
  EXPECT_EQ(present["value"].data<float>()[1], -2.0f);

  expect_error(
      [&] {
        s.run({{"maybe", Tensor::none()}});
      },
      ErrorCode::kInvalidArgument, {"get", "empty"});
}

TEST(Optional, HasElementOfAnEmptyOptional) {
  TempDir dir;
  ModelBuilder m(16);
  optional_input(m, "maybe");
  m.output("has", DType::kBool);
  m.node("OptionalHasElement", {"maybe"}, {"has"});
  Session s(m.save(dir.path()), SessionOptions().providers({"reference"}));
  EXPECT_FALSE(s.run({{"maybe", Tensor::none()}})[0].data<bool>()[0]);
}

TEST(Optional, NoneReachesOnlyOperatorsThatTakeIt) {
  TempDir dir;
  ModelBuilder m(16);
  optional_input(m, "maybe");
  m.output("y", DType::kFloat32);
  m.node("Relu", {"maybe"}, {"y"}, "relu");
  Session s(m.save(dir.path()), SessionOptions().providers({"reference"}));
  expect_error(
      [&] {
        s.run({{"maybe", Tensor::none()}});
      },
      ErrorCode::kInvalidArgument, {"relu", "empty optional"});
}

TEST(Optional, NoneIsRefusedForAnInputThatIsNotOptional) {
  TempDir dir;
  ModelBuilder m(16);
  m.input("x", DType::kFloat32, {2});
  m.output("y", DType::kFloat32);
  m.node("Identity", {"x"}, {"y"});
  Session s(m.save(dir.path()), SessionOptions().providers({"reference"}));
  expect_error(
      [&] {
        s.run({{"x", Tensor::none()}});
      },
      ErrorCode::kInvalidArgument, {"'x'", "not declare it optional"});
}

}  // namespace
}  // namespace recur
