// models/dynamic_lstm through the C++ API: one session, exported with dynamic batch and
// sequence axes, runs inputs of two different (batch, seq) shapes, in either order and again,
// against PyTorch's outputs (tools/models/export_dynamic_lstm.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "recur/recur.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

const std::string kModelDir = std::string(RECUR_SOURCE_DIR) + "/models/dynamic_lstm";

std::vector<tools::DataSet> data_sets() {
  auto sets = tools::read_data_sets(kModelDir);
  EXPECT_TRUE(sets.ok()) << sets.status().message();
  return sets.ok() ? std::move(sets).value() : std::vector<tools::DataSet>{};
}

void expect_matches(const Session& session, const tools::DataSet& ds) {
  ASSERT_EQ(ds.inputs.size(), 1u);
  ASSERT_EQ(ds.inputs[0].first, "x");
  Outputs out = session.run({{"x", ds.inputs[0].second}});
  for (const auto& [name, want] : ds.outputs) {
    const Tensor& got = out[name];
    EXPECT_EQ(got.shape(), want.shape()) << ds.dir << " " << name;
    tools::Comparison c = tools::compare(got, want, tools::Tolerance{});
    EXPECT_TRUE(c.match) << ds.dir << " " << name << ": " << c.reason << " (max abs error "
                         << c.max_abs << ")";
  }
}

class DynamicLstm : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(DynamicLstm, TwoShapesThroughOneSession) {
  const std::vector<tools::DataSet> sets = data_sets();
  ASSERT_EQ(sets.size(), 2u);
  // The two data sets differ in both dynamic axes, so no traced size can hide.
  const Shape& a = sets[0].inputs.at(0).second.shape();
  const Shape& b = sets[1].inputs.at(0).second.shape();
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_NE(a[0], b[0]);
  EXPECT_NE(a[1], b[1]);

  Session session(kModelDir + "/model.onnx", SessionOptions().providers(GetParam()));
  ASSERT_EQ(session.inputs().size(), 1u);
  const ValueInfo& x = session.inputs()[0];
  ASSERT_TRUE(x.shape.has_value());
  ASSERT_EQ(x.shape->size(), 3u);
  EXPECT_EQ((*x.shape)[0].symbol, "batch");
  EXPECT_EQ((*x.shape)[1].symbol, "seq");
  EXPECT_EQ((*x.shape)[2].value, 12);

  // Longer after shorter, then shorter after longer: nothing sized by one run may leak into
  // the next.
  expect_matches(session, sets[0]);
  expect_matches(session, sets[1]);
  expect_matches(session, sets[0]);
  expect_matches(session, sets[1]);
}

INSTANTIATE_TEST_SUITE_P(Providers, DynamicLstm,
                         ::testing::Values(std::vector<std::string>{},
                                           std::vector<std::string>{"reference"}),
                         [](const auto& info) {
                           return info.param.empty() ? std::string("Default") : info.param[0];
                         });

}  // namespace
}  // namespace recur
