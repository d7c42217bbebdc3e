// A compiled node, and what it sees while it runs.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/provider/run_control.h"

namespace recur {

class KernelContext;
class SubgraphPlan;  // a compiled subgraph, opaque to kernels (runtime/engine/session/plan.h)

// Per-run state a provider keeps for the length of one run(): a CUDA stream, a cuDNN handle.
class ProviderRunState {
 public:
  virtual ~ProviderRunState() = default;
};

// Records the device work of a run so it can be replayed without the host (CUDA graphs).
// Made by ExecutionProvider::make_recorder; used by one session for one input signature.
class RunRecorder {
 public:
  virtual ~RunRecorder() = default;
  // Counts the device bytes the calling thread allocates until stop_measuring (a normal run):
  // the size of the arena a recording needs.
  virtual void start_measuring() = 0;
  virtual size_t stop_measuring() = 0;
  // Called on the recording run's thread before the run begins: while the returned token
  // lives, runs begun on the thread use the stream the recording is made on, which the
  // recorder keeps for its replays (null: the run's own stream will do).
  virtual std::shared_ptr<void> bind_thread() { return nullptr; }
  // From here until stop_recording, the device work the calling thread queues on `state`'s
  // stream is recorded, not run, and device allocations come from an arena of `arena_bytes`
  // that lives as long as the recorder (so addresses stay valid for replays).
  virtual Status start_recording(ProviderRunState* state, size_t arena_bytes) = 0;
  virtual Status stop_recording(ProviderRunState* state) = 0;
  // Runs the recorded work for the run whose state is `state`, and waits for it: the errors
  // its kernels raised are returned here. Work queued on `state`'s stream after it returns
  // (copies of the outputs) sees the recording's results.
  virtual Status replay(ProviderRunState* state) = 0;
};

// Immutable after compile. run() may be called from several threads at once.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status run(KernelContext& ctx) const = 0;
  // The inputs, a bit each, whose memory output 0 may take: the kernel never reads an element
  // of such an input after it has written output 0's element at that index (elementwise
  // operators, a per-channel affine, a softmax or normalisation row by row). Where such an
  // input is read by nothing after this node and has the output's dtype and element count, the
  // memory plan and KernelContext::allocate_output give the output its memory: an activation
  // after a convolution then holds one tensor instead of two.
  virtual uint32_t overwritable_inputs() const { return 0; }
};

// What the executor offers a subgraph-running kernel (If, Loop, Scan).
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  // Runs `plan` with its formal inputs; values it captures from enclosing graphs are taken
  // from the calling node's implicit inputs. Sets `outputs` to the subgraph's outputs, on the
  // host, reusing its capacity (SubgraphOutputs keeps one from run to run).
  virtual Status run_into(const SubgraphPlan& plan, std::span<const Tensor> inputs,
                          const KernelContext& caller, std::vector<Tensor>& outputs) const = 0;
  // As run_into, but the inputs are moved into the subgraph (and left empty), so that a value
  // held by nothing else stays that way inside it: a Loop's carried sequence can then grow in
  // place (KernelContext::take_input) instead of being copied every iteration.
  virtual Status run_moving_into(const SubgraphPlan& plan, std::span<Tensor> inputs,
                                 const KernelContext& caller,
                                 std::vector<Tensor>& outputs) const = 0;
  // As run_into, in a vector of its own.
  Result<std::vector<Tensor>> run(const SubgraphPlan& plan, std::span<const Tensor> inputs,
                                  const KernelContext& caller) const {
    std::vector<Tensor> outputs;
    RECUR_RETURN_IF_ERROR(run_into(plan, inputs, caller, outputs));
    return outputs;
  }
};

// A vector for a subgraph's outputs that keeps its capacity from run to run, so that a kernel
// running a subgraph on every run (If) allocates nothing for it in the steady state. Each
// thread keeps a stack of them: nested subgraphs get vectors of their own. The tensors are
// dropped when this goes out of scope.
class SubgraphOutputs {
 public:
  SubgraphOutputs();
  ~SubgraphOutputs();
  SubgraphOutputs(const SubgraphOutputs&) = delete;
  SubgraphOutputs& operator=(const SubgraphOutputs&) = delete;
  std::vector<Tensor>& tensors() { return *tensors_; }

 private:
  std::vector<Tensor>* tensors_;
};

// Gives a kernel's outputs memory that outlives the run: an arena planned at load for values
// of static shape, blocks cached between runs for the others (runtime/engine/session).
class OutputPlacer {
 public:
  virtual ~OutputPlacer() = default;
  // Sets `out` (the frame's slot) to memory for `slot` of `dtype` and `shape` on `device`, or
  // returns false and leaves `out` alone; the caller then allocates.
  virtual bool place(ValueId slot, DType dtype, const Shape& shape, Device device, Tensor& out) = 0;
  // Whether output `out` may take the memory of `x`, input slot `in` of a node that reads it
  // last (Kernel::overwritable_inputs): memory of this placer's that nothing else holds.
  virtual bool reusable(const Tensor& x, ValueId in, ValueId out) const {
    (void)x, (void)in, (void)out;
    return false;
  }
};

// The view of one node's inputs and outputs during a run. Built by the executor; kernels only
// read inputs and fill outputs.
class KernelContext {
 public:
  struct Env {
    int threads = 1;
    int64_t max_loop_iterations = 0;
    const SubgraphRunner* subgraphs = nullptr;
    ProviderRunState* provider_state = nullptr;
    const RunControl* control = nullptr;  // null: the run cannot be cancelled
    // The run's seed and draw counter (run_random.h); null outside a session's run (a kernel
    // test), where every draw is the first draw of a run seeded with 0.
    const RunRandom* random = nullptr;
  };

  KernelContext(const Node& node, std::span<Tensor> frame, std::span<const ValueId> inputs,
                std::span<const ValueId> implicit_inputs, std::span<const ValueId> outputs,
                Device device, const Env& env)
      : node_(node),
        frame_(frame),
        inputs_(inputs),
        implicit_(implicit_inputs),
        outputs_(outputs),
        device_(device),
        env_(env) {}

  const Node& node() const { return node_; }
  Device device() const { return device_; }
  const Env& env() const { return env_; }

  size_t num_inputs() const { return inputs_.size(); }
  // nullptr for an omitted optional input.
  const Tensor* input(size_t i) const {
    if (i >= inputs_.size() || inputs_[i] == kNoValue) return nullptr;
    const Tensor& t = frame_[static_cast<size_t>(inputs_[i])];
    return t.defined() ? &t : nullptr;
  }
  // Input i for the kernel to keep or change: moved out of the frame where this node is its
  // last reader (the executor frees it afterwards anyway), else a shallow copy. A value held
  // nowhere else then has a use count of 1, so a kernel may grow it in place (SequenceInsert).
  Tensor take_input(size_t i) {
    if (i >= inputs_.size() || inputs_[i] == kNoValue) return Tensor();
    Tensor& t = frame_[static_cast<size_t>(inputs_[i])];
    if (i < last_reads_.size() && last_reads_[i]) return std::exchange(t, Tensor());
    return t;
  }
  // Per input, 1 where this node is the value's last reader (Step::last_read).
  void set_last_reads(std::span<const uint8_t> last_reads) { last_reads_ = last_reads; }
  // The kernel's Kernel::overwritable_inputs.
  void set_overwritable(uint32_t inputs) { overwritable_ = inputs; }
  size_t num_implicit_inputs() const { return implicit_.size(); }
  const Tensor* implicit_input(size_t i) const {
    const Tensor& t = frame_[static_cast<size_t>(implicit_[i])];
    return t.defined() ? &t : nullptr;
  }

  size_t num_outputs() const { return outputs_.size(); }
  // False for an output the model omitted (""); a kernel may skip computing it.
  bool output_requested(size_t i) const { return i < outputs_.size() && outputs_[i] != kNoValue; }
  // Allocates output i on the kernel's device. For an omitted output, a scratch tensor that
  // is discarded after the node runs.
  // Output 0 may be in the memory of an input the kernel declared (Kernel::overwritable_inputs).
  Result<Tensor*> allocate_output(size_t i, DType dtype, const Shape& shape);
  // Sets output i to an existing tensor (a view of an input, a constant).
  Status set_output(size_t i, Tensor t);
  // Where allocate_output takes memory from first; null: Tensor::empty.
  void set_placer(OutputPlacer* placer) { placer_ = placer; }

  // kCancelled naming the node (and "at <what> <index>", e.g. "at time step 12") once the run
  // is terminated or past its deadline; ok otherwise. For kernels that loop for long.
  Status check_cancelled(const char* what = nullptr, int64_t index = 0) const {
    if (!env_.control) return ok_status();
    Status st = env_.control->check();
    if (st.ok()) return st;
    std::string m = st.message();
    if (what) m += std::string(" at ") + what + " " + std::to_string(index);
    return error(st.code(), m);
  }
  // Whether long kernels should run in blocks so that check_cancelled() is reached often.
  bool fine_grained_cancel() const { return env_.control && env_.control->fine_grained; }

  // "node 'x' (Op): " prefix helper for error messages.
  Status error(ErrorCode code, const std::string& message) const {
    return Status(code, node_.describe() + ": " + message);
  }

 private:
  const Node& node_;
  std::span<Tensor> frame_;
  std::span<const ValueId> inputs_;
  std::span<const ValueId> implicit_;
  std::span<const ValueId> outputs_;
  Device device_;
  const Env& env_;
  OutputPlacer* placer_ = nullptr;
  std::span<const uint8_t> last_reads_;
  uint32_t overwritable_ = 0;
  // Output 0 in the memory of an overwritable input that allows it, or null.
  Tensor* output_over_input(DType dtype, const Shape& shape);
  // Outputs the model omitted. A list keeps pointers stable and, unlike a deque, allocates
  // nothing until used: a context is made for every step of every run.
  std::list<Tensor> discarded_;
};

}  // namespace recur
