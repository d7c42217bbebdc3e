// int8 LSTMs (issue 18): com.microsoft::DynamicQuantizeLSTM on the reference provider and on
// oneDNN, and a float LSTM under cpu_precision int8 on oneDNN. The expected outputs in
// tests/data/int8 come from ONNX Runtime 1.30 (CPU, one thread), written by
// tools/gen_int8_tests.py; the tolerances are those of docs/precision.md ("int8").
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"
#include "tests/support/providers.h"
#include "tools/common/testdir.h"

namespace recur {
namespace {

const char* const kQuantizedCases[] = {"dqlstm_forward",
                                       "dqlstm_batch3",
                                       "dqlstm_reverse_per_tensor",
                                       "dqlstm_bidirectional_state",
                                       "dqlstm_uint8_weights",
                                       "dqlstm_seqlens",
                                       "dqlstm_initial_h_large"};

std::string case_dir(const std::string& name) {
  return std::string(RECUR_SOURCE_DIR) + "/tests/data/int8/" + name;
}

// The reference kernel follows ONNX Runtime's arithmetic (uint8 X and h with scales from their
// ranges, integer GEMMs); what is left is float rounding in the cell (measured: 1.2e-7).
// With sequence_lens (dqlstm_seqlens) a finished row's h must count as 0 in the batch's h
// range: keeping its final state there instead was off by 3e-4.
constexpr tools::Tolerance kReferenceTol{0.0, 1e-6};
// oneDNN requantizes W and R to per-channel scales shared by both, and h with a fixed scale
// (1/127 a step): measured 0.014 at most against ONNX Runtime.
constexpr tools::Tolerance kOnednnInt8Tol{0.0, 0.03};
// A float LSTM quantized at load against its float32 outputs: measured 0.040 at most.
constexpr tools::Tolerance kInt8VsFp32Tol{0.0, 0.06};

void expect_case(const std::string& name, const SessionOptions& opts, tools::Tolerance tol) {
  std::ostringstream log;
  const tools::TestResult r = tools::run_test_dir(case_dir(name), opts, tol, &log);
  EXPECT_EQ(r.outcome, tools::TestResult::Outcome::kPass) << name << ": " << r.reason << "\n"
                                                          << log.str();
}

// The provider and notes of the model's only node.
NodeAssignment only_node(const std::string& name, const SessionOptions& opts) {
  Session s(case_dir(name) + "/model.onnx", opts);
  EXPECT_EQ(s.assignment().size(), 1u);
  return s.assignment().empty() ? NodeAssignment{} : s.assignment().front();
}

bool has_note(const NodeAssignment& a, const std::string& part) {
  for (const auto& n : a.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

std::string all_notes(const NodeAssignment& a) {
  std::string out;
  for (const auto& n : a.notes) out += n + "; ";
  return out;
}

// The schema check knows the contrib operator: an attribute DynamicQuantizeLSTM does not have
// (layout, which LSTM-14 has) is refused at load, naming it.
TEST(DynamicQuantizeLstm, SchemaRefusesUnknownAttribute) {
  std::ifstream in(case_dir("dqlstm_forward") + "/model.onnx", std::ios::binary);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromIstream(&in));
  onnx::AttributeProto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("layout");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(0);
  const std::string bytes = m.SerializeAsString();
  SessionOptions opts;
  opts.providers({"reference"});
  testing::expect_error([&] { Session::from_bytes(bytes.data(), bytes.size(), opts); },
                        ErrorCode::kInvalidModel,
                        {"DynamicQuantizeLSTM", "unknown attribute 'layout'"});
}

TEST(DynamicQuantizeLstm, ReferenceMatchesOnnxRuntime) {
  SessionOptions opts;
  opts.providers({"reference"});
  for (const char* name : kQuantizedCases) expect_case(name, opts, kReferenceTol);
}

TEST(DynamicQuantizeLstm, OnednnMatchesOnnxRuntime) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "no oneDNN provider";
  SessionOptions opts;
  opts.providers({"onednn", "reference"});
  for (const std::string name : kQuantizedCases) {
    const NodeAssignment a = only_node(name, opts);
    if (name == "dqlstm_seqlens") {
      // oneDNN's int8 kernel runs full sequences only: the reference runs it.
      EXPECT_EQ(a.provider, "reference") << name;
      ASSERT_FALSE(a.declined.empty());
      EXPECT_NE(a.declined.front().reason.find("sequence_lens"), std::string::npos);
    } else if (!testing::have_onednn_int8()) {
      // Without VNNI oneDNN's products saturate: the reference runs it, and says why.
      EXPECT_EQ(a.provider, "reference") << name;
      ASSERT_FALSE(a.declined.empty());
      EXPECT_NE(a.declined.front().reason.find("VNNI"), std::string::npos);
    } else {
      EXPECT_EQ(a.provider, "onednn") << name;
    }
    expect_case(name, opts, kOnednnInt8Tol);
  }
}

// A DynamicQuantizeLSTM node that lists Y alone (Y_h and Y_c dropped from the node and the
// graph): the same Y as the node with all three, on the reference provider and on oneDNN.
// Both kernels used to fail with "output index 1 out of range".
TEST(DynamicQuantizeLstm, ANodeListingYAloneGivesTheSameY) {
  for (const std::string name : {"dqlstm_forward", "dqlstm_bidirectional_state"}) {
    onnx::ModelProto m;
    {
      std::ifstream f(case_dir(name) + "/model.onnx", std::ios::binary);
      ASSERT_TRUE(m.ParseFromIstream(&f)) << name;
    }
    const std::string full = m.SerializeAsString();
    onnx::NodeProto* n = m.mutable_graph()->mutable_node(0);
    ASSERT_EQ(n->op_type(), "DynamicQuantizeLSTM") << name;
    while (n->output_size() > 1) n->mutable_output()->RemoveLast();
    while (m.graph().output_size() > 1) m.mutable_graph()->mutable_output()->RemoveLast();
    ASSERT_EQ(m.graph().output(0).name(), n->output(0)) << name;
    const std::string y_only = m.SerializeAsString();
    for (const std::string provider : {"reference", "onednn"}) {
      if (provider == "onednn" ? !testing::have_onednn_int8() : !testing::have_provider(provider))
        continue;
      SessionOptions opts;
      opts.providers({provider});
      const Session a = Session::from_bytes(full.data(), full.size(), opts);
      const Session b = Session::from_bytes(y_only.data(), y_only.size(), opts);
      auto sets = tools::read_data_sets(case_dir(name), &a);
      ASSERT_TRUE(sets.ok()) << sets.status().message();
      auto feeds = tools::feeds_for(a, sets.value().front());
      ASSERT_TRUE(feeds.ok()) << feeds.status().message();
      const Outputs want = a.run(feeds.value());
      const Outputs got = b.run(feeds.value());
      ASSERT_EQ(got.size(), 1u) << name << " on " << provider;
      const tools::Comparison same = tools::compare(got[0], want[0], tools::Tolerance{0.0, 0.0});
      EXPECT_TRUE(same.match) << name << " on " << provider << ": " << same.reason;
    }
  }
}

TEST(Int8Precision, FloatLstmOnOnednnWithinInt8Tolerance) {
  if (!testing::have_onednn_int8()) GTEST_SKIP() << "needs the oneDNN provider and VNNI";
  SessionOptions opts;
  opts.providers({"onednn"}).cpu_precision(SessionOptions::Precision::kInt8);
  const NodeAssignment a = only_node("lstm_fp32_bidirectional", opts);
  EXPECT_TRUE(has_note(a, "int8: W and R quantized at load")) << all_notes(a);
  expect_case("lstm_fp32_bidirectional", opts, kInt8VsFp32Tol);
}

// X's quantization parameters are guessed from the previous run and checked: the outputs must
// not depend on what ran before. A session that ran another X first gives the same bits as a
// fresh one.
TEST(Int8Precision, OutputsDoNotDependOnEarlierRuns) {
  if (!testing::have_onednn_int8()) GTEST_SKIP() << "needs the oneDNN provider and VNNI";
  SessionOptions opts;
  opts.providers({"onednn"}).cpu_precision(SessionOptions::Precision::kInt8);
  const std::string model = case_dir("lstm_fp32_bidirectional") + "/model.onnx";
  Session fresh(model, opts), used(model, opts);
  const Shape shape{9, 4, 16};
  std::vector<float> a(9 * 4 * 16), b(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(static_cast<int>(i * 37 % 101) - 50) / 25.0f;  // in [-2, 2]
    b[i] = 0.3f * a[(i * 7) % a.size()] + 0.5f;                              // another range
  }
  used.run({{"X", Tensor::from_vector(shape, a)}});
  const Outputs want = fresh.run({{"X", Tensor::from_vector(shape, b)}});
  const Outputs got = used.run({{"X", Tensor::from_vector(shape, b)}});
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    const tools::Comparison c = tools::compare(got[k], want[k], tools::Tolerance{0.0, 0.0});
    EXPECT_TRUE(c.match) << want.name(k) << ": " << c.reason;
  }
}

// X's range sets its scale, so a NaN in X is an error naming the node, not garbage out.
TEST(Int8Precision, NanInXIsAnError) {
  if (!testing::have_onednn_int8()) GTEST_SKIP() << "needs the oneDNN provider and VNNI";
  SessionOptions opts;
  opts.providers({"onednn"}).cpu_precision(SessionOptions::Precision::kInt8);
  Session s(case_dir("lstm_fp32_bidirectional") + "/model.onnx", opts);
  std::vector<float> x(9 * 4 * 16, 0.5f);
  x[100] = std::nanf("");
  testing::expect_error(
      [&] {
        s.run({{"X", Tensor::from_vector({9, 4, 16}, x)}});
      },
      ErrorCode::kInvalidArgument, {"lstm_fp32_bidirectional", "NaN"});
}

// One LSTM with more than one 32-column block per thread (at H=512, weights of 2.25 MiB per
// direction, packed on huge pages), and an X for it.
struct BigLstm {
  std::string bytes;
  Tensor x;
};

BigLstm big_lstm(int64_t H = 512) {
  const int64_t T = 4, N = 8, I = 640;
  std::mt19937 rng(18);
  auto random = [&](const Shape& shape, float scale) {
    std::uniform_real_distribution<float> u(-scale, scale);
    std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
    for (float& x : v) x = u(rng);
    return Tensor::from_vector(shape, v);
  };
  // PyTorch's default initialisation: uniform in +-1/sqrt(H).
  const float w = 1.0f / std::sqrt(static_cast<float>(H));
  testing::ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {T, N, I});
  mb.initializer("W", random({1, 4 * H, I}, w));
  mb.initializer("R", random({1, 4 * H, H}, w));
  mb.initializer("B", random({1, 8 * H}, w));
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32).output("Y_c", DType::kFloat32);
  testing::set_attr(mb.node("LSTM", {"X", "W", "R", "B"}, {"Y", "Y_h", "Y_c"}, "big_lstm"),
                    "hidden_size", H);
  BigLstm m;
  m.bytes = mb.bytes();
  m.x = random({T, N, I}, 1.0f);
  return m;
}

SessionOptions int8_options() {
  SessionOptions o;
  o.providers({"onednn"}).cpu_precision(SessionOptions::Precision::kInt8);
  return o;
}

void expect_same_bits(const Outputs& got, const Outputs& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const tools::Comparison same = tools::compare(got[k], want[k], tools::Tolerance{0.0, 0.0});
    EXPECT_TRUE(same.match) << want.name(k) << " " << what << ": " << same.reason;
  }
}

// A float LSTM with initial_h and initial_c inputs: T steps, N rows, the given direction.
std::string lstm_with_state(int64_t T, int64_t N, int64_t I, int64_t H, const char* direction) {
  const int64_t D = std::string(direction) == "bidirectional" ? 2 : 1;
  std::mt19937 rng(7);
  auto random = [&](const Shape& shape) {
    std::uniform_real_distribution<float> u(-0.4f, 0.4f);
    std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
    for (float& x : v) x = u(rng);
    return Tensor::from_vector(shape, v);
  };
  testing::ModelBuilder mb(14);
  mb.input("X", DType::kFloat32, {T, N, I});
  mb.input("initial_h", DType::kFloat32, {D, N, H});
  mb.input("initial_c", DType::kFloat32, {D, N, H});
  mb.initializer("W", random({D, 4 * H, I}));
  mb.initializer("R", random({D, 4 * H, H}));
  mb.initializer("B", random({D, 8 * H}));
  mb.output("Y", DType::kFloat32).output("Y_h", DType::kFloat32).output("Y_c", DType::kFloat32);
  onnx::NodeProto& n = mb.node("LSTM", {"X", "W", "R", "B", "", "initial_h", "initial_c"},
                               {"Y", "Y_h", "Y_c"}, "lstm_state");
  testing::set_attr(n, "hidden_size", H);
  testing::set_attr(n, "direction", std::string(direction));
  return mb.bytes();
}

// oneDNN's int8 LSTM quantizes h for [-1, 1]. An initial_h beyond it (here up to 4, in some
// rows only, so that the batch's slices take both paths) must not saturate: those rows run
// their first step in float32. The oracle is the reference provider's float32 LSTM; with h
// saturated at 1 the outputs were off by up to 0.3.
TEST(Int8Precision, InitialHBeyondOneIsNotSaturated) {
  if (!testing::have_onednn_int8()) GTEST_SKIP() << "needs the oneDNN provider and VNNI";
  const int64_t N = 4, I = 5, H = 8;
  for (const char* direction : {"forward", "reverse", "bidirectional"}) {
    for (const int64_t T : {int64_t{1}, int64_t{2}, int64_t{6}}) {
      const int64_t D = std::string(direction) == "bidirectional" ? 2 : 1;
      const std::string model = lstm_with_state(T, N, I, H, direction);
      std::vector<float> x(static_cast<size_t>(T * N * I)), h(static_cast<size_t>(D * N * H)),
          c(h.size());
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i));
      for (size_t i = 0; i < h.size(); ++i) {
        const int64_t row = static_cast<int64_t>(i) / H % N;
        // Rows 1 and 3 beyond [-1, 1], rows 0 and 2 within.
        h[i] = (row % 2 ? 4.0f : 0.9f) * std::cos(1.3f * static_cast<float>(i));
        c[i] = 2.0f * std::sin(0.4f * static_cast<float>(i));
      }
      const Feeds feeds{{"X", Tensor::from_vector({T, N, I}, x)},
                        {"initial_h", Tensor::from_vector({D, N, H}, h)},
                        {"initial_c", Tensor::from_vector({D, N, H}, c)}};
      SessionOptions ref;
      ref.providers({"reference"});
      const Outputs want = Session::from_bytes(model.data(), model.size(), ref).run(feeds);
      for (const int threads : {1, 2}) {
        SessionOptions opts = int8_options();
        opts.threads(threads);
        const Session s = Session::from_bytes(model.data(), model.size(), opts);
        ASSERT_TRUE(has_note(s.assignment().front(), "int8: W and R quantized at load"))
            << all_notes(s.assignment().front());
        const Outputs got = s.run(feeds);
        for (size_t k = 0; k < want.size(); ++k) {
          const tools::Comparison cmp = tools::compare(got[k], want[k], kInt8VsFp32Tol);
          EXPECT_TRUE(cmp.match) << direction << " T=" << T << " threads=" << threads << " "
                                 << want.name(k) << ": " << cmp.reason << " (max abs error "
                                 << cmp.max_abs << ")";
        }
      }
    }
  }
}

// A node may list only some of LSTM's outputs: Y alone (the usual export), or Y_h or Y_c
// behind omitted ones. The int8 kernel computes the states anyway (Y_h is Y's last step) and
// used to fail with "output index 1 out of range" where the node listed only Y. The oracle is
// the reference provider's float32 LSTM, within the int8 tolerance.
TEST(Int8Precision, NodesListingSomeOutputsRun) {
  if (!testing::have_onednn_int8()) GTEST_SKIP() << "needs the oneDNN provider and VNNI";
  const int64_t T = 5, N = 3, I = 6, H = 8;
  const std::vector<std::vector<std::string>> listings = {
      {"Y"}, {"", "Y_h"}, {"Y", "", "Y_c"}, {"", "", "Y_c"}, {"Y", "Y_h"}};
  for (const char* direction : {"forward", "bidirectional"}) {
    const int64_t D = std::string(direction) == "bidirectional" ? 2 : 1;
    for (const std::vector<std::string>& outs : listings) {
      std::mt19937 rng(11);
      testing::ModelBuilder mb(14);
      mb.input("X", DType::kFloat32, {T, N, I});
      mb.initializer("W", testing::random_tensor({D, 4 * H, I}, rng, 0.4f));
      mb.initializer("R", testing::random_tensor({D, 4 * H, H}, rng, 0.4f));
      std::string listed;
      for (const std::string& o : outs) {
        if (!o.empty()) mb.output(o, DType::kFloat32);
        listed += (listed.empty() ? "" : ",") + (o.empty() ? std::string("''") : o);
      }
      onnx::NodeProto& n = mb.node("LSTM", {"X", "W", "R"}, outs, "lstm_some");
      testing::set_attr(n, "hidden_size", H);
      testing::set_attr(n, "direction", std::string(direction));
      const std::string model = mb.bytes();
      const Feeds feeds{{"X", testing::random_tensor({T, N, I}, rng, 1.0f)}};
      SessionOptions ref;
      ref.providers({"reference"});
      const Outputs want = Session::from_bytes(model.data(), model.size(), ref).run(feeds);
      const Session s = Session::from_bytes(model.data(), model.size(), int8_options());
      ASSERT_TRUE(has_note(s.assignment().front(), "int8: W and R quantized at load"))
          << all_notes(s.assignment().front());
      const Outputs got = s.run(feeds);
      ASSERT_EQ(got.size(), want.size()) << listed;
      for (size_t k = 0; k < want.size(); ++k) {
        const tools::Comparison cmp = tools::compare(got[k], want[k], kInt8VsFp32Tol);
        EXPECT_TRUE(cmp.match) << direction << " outputs " << listed << ": " << want.name(k) << ": "
                               << cmp.reason;
      }
    }
  }
}

// initial_h's range decides how its rows run, so a NaN there is an error, as in X.
TEST(Int8Precision, NanInInitialHIsAnError) {
  if (!testing::have_onednn_int8()) GTEST_SKIP() << "needs the oneDNN provider and VNNI";
  const std::string model = lstm_with_state(3, 2, 4, 8, "forward");
  const Session s = Session::from_bytes(model.data(), model.size(), int8_options());
  std::vector<float> h(16, 0.5f);
  h[5] = std::nanf("");
  testing::expect_error(
      [&] {
        s.run({{"X", Tensor::from_vector({3, 2, 4}, std::vector<float>(24, 0.1f))},
               {"initial_h", Tensor::from_vector({1, 2, 8}, h)},
               {"initial_c", Tensor::from_vector({1, 2, 8}, std::vector<float>(16, 0.0f))}});
      },
      ErrorCode::kInvalidArgument, {"lstm_state", "initial_h", "NaN"});
}

// onednn.threading=omp: a direction's threads share one primitive (oneDNN's own threading)
// instead of slicing the batch. The outputs stay within the int8 tolerance of float32 and are
// those of one thread.
TEST(Int8Precision, ThreadsCanShareOnePrimitive) {
  if (!testing::have_onednn_int8()) GTEST_SKIP() << "needs the oneDNN provider and VNNI";
  const BigLstm m = big_lstm();
  SessionOptions two = int8_options(), one = int8_options(), fp32;
  two.threads(2).set("onednn.threading", "omp");
  one.threads(1);
  fp32.providers({"reference"});
  Session s2 = Session::from_bytes(m.bytes.data(), m.bytes.size(), two);
  Session s1 = Session::from_bytes(m.bytes.data(), m.bytes.size(), one);
  Session sf = Session::from_bytes(m.bytes.data(), m.bytes.size(), fp32);
  ASSERT_EQ(s2.assignment().size(), 1u);
  EXPECT_TRUE(has_note(s2.assignment().front(), "2 threads share each direction's oneDNN"))
      << all_notes(s2.assignment().front());
  EXPECT_TRUE(has_note(s1.assignment().front(), "one thread per oneDNN primitive"))
      << all_notes(s1.assignment().front());
  const Outputs got = s2.run({{"X", m.x}});
  const Outputs want = sf.run({{"X", m.x}});
  ASSERT_EQ(got.size(), 3u);
  for (size_t k = 0; k < got.size(); ++k) {
    const tools::Comparison c = tools::compare(got[k], want[k], kInt8VsFp32Tol);
    EXPECT_TRUE(c.match) << want.name(k) << " against float32: " << c.reason;
  }
  expect_same_bits(got, s1.run({{"X", m.x}}), "against one thread");
}

// onednn.threading=auto with threads to share and an R larger than one core's L2 (H=1024: 4 MiB
// of int8): the runs try batch slices and a team in turn and keep the faster (team_tuner.h).
// Either way gives the bits of one thread, so the choice, which depends on timing, never shows
// in the outputs. A deterministic session takes the slices without timing.
TEST(Int8Precision, AutoThreadingTimesBothWaysWithTheSameResults) {
  if (!testing::have_onednn_int8()) GTEST_SKIP() << "needs the oneDNN provider and VNNI";
  if (::sysconf(_SC_LEVEL2_CACHE_SIZE) >= (long{4} << 20))
    GTEST_SKIP() << "this CPU's L2 holds the 4 MiB R, so the kernel does not time a team";
  const BigLstm m = big_lstm(1024);
  SessionOptions two = int8_options(), one = int8_options(), fixed = int8_options();
  two.threads(2);
  one.threads(1);
  fixed.threads(2).deterministic(true);
  Session s2 = Session::from_bytes(m.bytes.data(), m.bytes.size(), two);
  Session s1 = Session::from_bytes(m.bytes.data(), m.bytes.size(), one);
  Session sd = Session::from_bytes(m.bytes.data(), m.bytes.size(), fixed);
  EXPECT_TRUE(has_note(s2.assignment().front(), "whichever the runs time faster"))
      << all_notes(s2.assignment().front());
  EXPECT_TRUE(has_note(sd.assignment().front(), "one thread per oneDNN primitive"))
      << all_notes(sd.assignment().front());
  const Outputs want = s1.run({{"X", m.x}});
  // Twelve runs take both ways at least twice each (the tuner's first four runs).
  for (int r = 0; r < 12; ++r)
    expect_same_bits(s2.run({{"X", m.x}}), want, "run " + std::to_string(r));
  expect_same_bits(sd.run({{"X", m.x}}), want, "deterministic");
}

// A cell oneDNN 2.6 has no fast int8 for stays float32, and says why.
TEST(Int8Precision, GruDeclinesWithTheReason) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "no oneDNN provider";
  SessionOptions opts;
  opts.providers({"onednn"}).cpu_precision(SessionOptions::Precision::kInt8);
  Session s(std::string(RECUR_SOURCE_DIR) + "/tests/data/rnn/gru_batch1/model.onnx", opts);
  ASSERT_EQ(s.assignment().size(), 1u);
  EXPECT_TRUE(has_note(s.assignment().front(), "int8 declined (oneDNN 2.6 runs an int8 GRU"))
      << all_notes(s.assignment().front());
}

TEST(Int8Precision, DeclinedWithoutVnni) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "no oneDNN provider";
  if (testing::have_onednn_int8()) GTEST_SKIP() << "this processor has VNNI: int8 runs";
  SessionOptions opts;
  opts.providers({"onednn"}).cpu_precision(SessionOptions::Precision::kInt8);
  const NodeAssignment a = only_node("lstm_fp32_bidirectional", opts);
  EXPECT_TRUE(has_note(a, "int8 declined (this processor has no VNNI")) << all_notes(a);
}

TEST(Int8Precision, Fp32IsTheDefault) {
  if (!testing::have_provider("onednn")) GTEST_SKIP() << "no oneDNN provider";
  SessionOptions opts;
  opts.providers({"onednn"});
  EXPECT_FALSE(has_note(only_node("lstm_fp32_bidirectional", opts), "int8"));
}

}  // namespace
}  // namespace recur
