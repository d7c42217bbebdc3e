// SharedRegistry: providers whose kernels are the same in every instance build one registry
// per process and share it, and the operators' shape rules come from the same registration pass.
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "providers/reference/reference_provider.h"
#ifdef RECUR_HAVE_ONEDNN
#include "providers/onednn/onednn_provider.h"
#endif

namespace recur {
namespace {

constexpr const char* kOps[] = {"LSTM", "GRU", "RNN", "Identity", "Conv", "Loop", "MatMul"};

TEST(SharedRegistry, ReferenceProvidersShareOneRegistryWithEveryKernel) {
  const auto a = make_reference_provider();
  const auto host = make_reference_provider("host");
  EXPECT_EQ(&a->registry(), &host->registry());
  // The shared registry holds the kernels, not an empty stand-in.
  EXPECT_GT(a->registry().ops().size(), 150u);
  for (const char* op : kOps) EXPECT_NE(a->registry().find("", op, 14), nullptr) << op;
}

TEST(SharedRegistry, ShapeRulesComeFromTheSameRegistrations) {
  const OpRules& rules = builtin_op_rules();
  EXPECT_EQ(&rules, &builtin_op_rules());
  EXPECT_GT(rules.size(), 150u);
  // Loop is left out: its outputs come from running its body, not from a static rule.
  for (const char* op : {"LSTM", "GRU", "RNN", "Identity", "Conv", "MatMul"})
    EXPECT_TRUE(rules.find("", op, 14)) << op;
  // No rule outside an operator's opsets, nor for an unknown operator.
  EXPECT_FALSE(rules.find("", "LSTM", 0));
  EXPECT_FALSE(rules.find("", "NoSuchOp", 14));
}

TEST(SharedRegistry, ProvidersWithKernelsOfTheirOwnKeepTheirOwnRegistry) {
  struct OneOp final : ExecutionProvider {
    explicit OneOp(const char* op) : ExecutionProvider("one-op", Device::cpu()) {
      mutable_registry().add(KernelDef{.op_type = op, .since = 1, .create = {}});
    }
  };
  const OneOp relu("Relu"), tanh("Tanh");
  EXPECT_NE(&relu.registry(), &tanh.registry());
  EXPECT_NE(relu.registry().find("", "Relu", 14), nullptr);
  EXPECT_EQ(relu.registry().find("", "Tanh", 14), nullptr);
  EXPECT_NE(tanh.registry().find("", "Tanh", 14), nullptr);
}

// The first sessions of a process may be created on several threads at once: one registry and
// one set of rules come out (ThreadSanitizer checks the build itself, tools/tsan.sh).
TEST(SharedRegistry, ConcurrentFirstUseBuildsOneRegistry) {
  std::vector<std::unique_ptr<ExecutionProvider>> made(8);
  std::vector<const OpRules*> rules(made.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < made.size(); ++i) {
    threads.emplace_back([&, i] {
      made[i] = make_reference_provider();
      rules[i] = &builtin_op_rules();
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 1; i < made.size(); ++i) {
    EXPECT_EQ(&made[i]->registry(), &made[0]->registry());
    EXPECT_EQ(rules[i], rules[0]);
  }
}

#ifdef RECUR_HAVE_ONEDNN
TEST(SharedRegistry, OnednnProvidersShareOneRegistry) {
  const auto a = make_onednn_provider();
  const auto b = make_onednn_provider();
  EXPECT_EQ(&a->registry(), &b->registry());
  for (const char* op : {"LSTM", "GRU", "RNN"}) EXPECT_NE(a->registry().find("", op, 14), nullptr);
}
#endif

}  // namespace
}  // namespace recur
