// Loading a model and running it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "recur/assignment.h"
#include "recur/export.h"
#include "recur/model_metadata.h"
#include "recur/options.h"
#include "recur/profile.h"
#include "recur/tensor.h"
#include "recur/value_info.h"

namespace recur {

// Named outputs in the order they were asked for (by default the model's output order).
class RECUR_API Outputs {
 public:
  void add(std::string name, Tensor t) {
    names_.push_back(std::move(name));
    tensors_.push_back(std::move(t));
  }
  size_t size() const { return tensors_.size(); }
  const std::string& name(size_t i) const { return names_.at(i); }
  const Tensor& operator[](size_t i) const { return tensors_.at(i); }
  const Tensor& operator[](std::string_view name) const;  // throws recur::Error if absent
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<std::string> names_;
  std::vector<Tensor> tensors_;
};

using Feeds = std::vector<std::pair<std::string, Tensor>>;

class RECUR_API Session {
 public:
  explicit Session(const std::string& model_path, const SessionOptions& options = {});
  // A model held in memory; external data is resolved against `base_dir`.
  static Session from_bytes(const void* data, size_t size, const SessionOptions& options = {},
                            const std::string& base_dir = ".");

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  // What the model file says about itself: producer, description, metadata_props, ...
  const ModelMetadata& metadata() const;

  // Runs the model. Const and safe to call from several threads at once.
  Outputs run(const Feeds& feeds, const RunOptions& options = {}) const;

  const std::vector<NodeAssignment>& assignment() const;
  // The assignment as a table, with device copies, fusions and notes.
  std::string explain() const;
  // The providers that took part, in priority order.
  const std::vector<std::string>& providers() const;
  // What loading let pass with a warning (unknown attributes under strict_schema(false)),
  // each line naming the file, node and attribute. Also printed to stderr at load.
  const std::vector<std::string>& warnings() const;

  // With SessionOptions::profile: the events recorded so far, ordered by start (empty when
  // not profiling). Runs in progress are waited for.
  std::vector<ProfileEvent> profile() const;
  // Writes the events recorded so far to the profile path (whole or not at all: a temporary
  // file renamed) and returns the path; "" when the session has no profile path. The session
  // keeps recording and writes the file again when it is destroyed.
  std::string end_profiling() const;

  struct Impl;

 private:
  explicit Session(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// The providers compiled into this build, in default priority order, and whether each has
// its device (e.g. "cudnn" without a GPU is listed with available=false and the reason).
struct ProviderInfo {
  std::string name;
  bool available = false;
  std::string reason;  // why not available
};
RECUR_API std::vector<ProviderInfo> list_providers();

}  // namespace recur
