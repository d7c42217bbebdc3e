#include "runtime/engine/session/profiler.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace recur {

namespace {

thread_local ProfileBuffer* t_current = nullptr;

double to_us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// The graph attribute of `owner` that holds `g` ("then_branch", "body").
std::string attribute_holding(const Node& owner, const Graph* g) {
  for (const auto& [name, a] : owner.attributes) {
    if (a.g.get() == g) return name;
    for (const auto& sub : a.graphs)
      if (sub.get() == g) return name;
  }
  return {};
}

void fill_step(const ProfileRecord& r, ProfileEvent& e) {
  const SubgraphPlan& plan = *r.plan;
  const Step& s = plan.steps[static_cast<size_t>(r.step)];
  const Graph& g = *plan.graph;
  if (s.kind == Step::Kind::kCopy) {
    e.category = "copy";
    e.name = static_cast<size_t>(s.src) < g.num_values() ? g.value(s.src).name : "copy";
    e.op = "copy to " + s.device.to_string();
    return;
  }
  const Node& n = g.node(s.node);
  e.category = "node";
  e.name = n.name;
  e.op = n.domain_op();
  e.provider = plan.providers[static_cast<size_t>(s.provider)]->name();
}

void append_events(const ProfileBuffer& b, const std::vector<ProfileRecord>& records,
                   const std::vector<int32_t>& ranks, const std::vector<int64_t>& dims,
                   std::vector<ProfileEvent>* out) {
  // Offsets of each input's dims in `dims`.
  std::vector<size_t> dim_at(ranks.size() + 1, 0);
  for (size_t i = 0; i < ranks.size(); ++i)
    dim_at[i + 1] = dim_at[i] + static_cast<size_t>(std::max(ranks[i], 0));
  (void)b;
  for (const ProfileRecord& r : records) {
    ProfileEvent e;
    e.run = r.run;
    e.thread = r.tid;
    e.start_us = to_us(r.start_ns);
    e.dur_us = to_us(r.dur_ns);
    e.failed = r.failed;
    if (r.kind == ProfileRecord::Kind::kRun) {
      e.category = "run";
      e.name = "run";
      out->push_back(std::move(e));
      continue;
    }
    fill_step(r, e);
    if (r.parent >= 0) {
      const ProfileRecord& p = records[static_cast<size_t>(r.parent)];
      if (p.kind == ProfileRecord::Kind::kStep) {
        const SubgraphPlan& pp = *p.plan;
        const Node& owner = pp.graph->node(pp.steps[static_cast<size_t>(p.step)].node);
        e.parent = owner.name;
        e.subgraph = attribute_holding(owner, r.plan->graph);
        if (owner.op_type == "Loop" || owner.op_type == "Scan") e.iteration = r.iteration;
      }
    }
    for (uint32_t i = r.shapes_begin; i < r.shapes_begin + r.shapes_count; ++i) {
      if (ranks[i] < 0) {
        e.input_shapes.emplace_back(std::nullopt);
      } else {
        e.input_shapes.emplace_back(
            std::vector<int64_t>(dims.begin() + static_cast<ptrdiff_t>(dim_at[i]),
                                 dims.begin() + static_cast<ptrdiff_t>(dim_at[i + 1])));
      }
    }
    out->push_back(std::move(e));
  }
}

void write_event(std::string& s, const ProfileEvent& e) {
  s += "{\"name\":" + json_string(e.name) + ",\"cat\":" + json_string(e.category) +
       ",\"ph\":\"X\",\"ts\":" + json_number(e.start_us) + ",\"dur\":" + json_number(e.dur_us) +
       ",\"pid\":1,\"tid\":" + std::to_string(e.thread) + ",\"args\":{";
  std::string args;
  auto add = [&args](const std::string& key, const std::string& value) {
    args += (args.empty() ? "" : ",") + json_string(key) + ":" + value;
  };
  if (e.run >= 0) add("run", std::to_string(e.run));
  if (!e.op.empty()) add("op", json_string(e.op));
  if (!e.provider.empty()) add("provider", json_string(e.provider));
  if (!e.parent.empty()) add("parent", json_string(e.parent));
  if (!e.subgraph.empty()) add("subgraph", json_string(e.subgraph));
  if (e.iteration >= 0) add("iteration", std::to_string(e.iteration));
  if (e.failed) add("failed", "true");
  if (e.category == "node" || e.category == "copy") {
    std::string shapes;
    for (const auto& sh : e.input_shapes) {
      shapes += shapes.empty() ? "" : ",";
      if (!sh) {
        shapes += "null";
        continue;
      }
      shapes += "[";
      for (size_t i = 0; i < sh->size(); ++i) {
        if (i) shapes += ',';
        shapes += std::to_string((*sh)[i]);
      }
      shapes += "]";
    }
    add("input_shapes", "[" + shapes + "]");
  }
  s += args + "}}";
}

void write_metadata(std::string& s, const char* what, int tid, const std::string& name) {
  s += std::string("{\"name\":\"") + what +
       "\",\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(tid) +
       ",\"args\":{\"name\":" + json_string(name) + "}},\n";
}

}  // namespace

ProfileBuffer* ProfileBuffer::current() { return t_current; }

int32_t ProfileBuffer::begin_step(const SubgraphPlan& plan, size_t step,
                                  std::span<const Tensor> frame) {
  ProfileRecord r;
  r.plan = &plan;
  r.step = static_cast<int32_t>(step);
  r.parent = current_;
  r.iteration = iteration_;
  r.run = run_;
  r.tid = tid_;
  r.shapes_begin = static_cast<uint32_t>(ranks_.size());
  const Step& s = plan.steps[step];
  auto add_shape = [this](const Tensor& t) {
    if (!t.is_tensor()) {
      ranks_.push_back(-1);
      return;
    }
    ranks_.push_back(static_cast<int32_t>(t.shape().size()));
    dims_.insert(dims_.end(), t.shape().begin(), t.shape().end());
  };
  if (s.kind == Step::Kind::kCopy) {
    add_shape(frame[static_cast<size_t>(s.src)]);
  } else {
    for (ValueId v : s.inputs) {
      if (v == kNoValue) {
        ranks_.push_back(-1);
      } else {
        add_shape(frame[static_cast<size_t>(v)]);
      }
    }
  }
  r.shapes_count = static_cast<uint32_t>(ranks_.size()) - r.shapes_begin;
  const auto index = static_cast<int32_t>(records_.size());
  current_ = index;
  r.start_ns = now_ns();  // last, so the bookkeeping above is not counted
  records_.push_back(r);
  return index;
}

void ProfileBuffer::end_step(int32_t record, bool ok) {
  ProfileRecord& r = records_[static_cast<size_t>(record)];
  r.dur_ns = now_ns() - r.start_ns;
  r.failed = !ok;
  current_ = r.parent;
  iteration_ = r.iteration;
}

int32_t ProfileBuffer::enter_subgraph() {
  const int32_t saved = iteration_;
  iteration_ = current_ >= 0 ? records_[static_cast<size_t>(current_)].sub_runs++ : -1;
  return saved;
}

Profiler::~Profiler() {
  if (path_.empty() || !dirty_.load()) return;
  Result<std::string> w = write();
  // A destructor cannot report otherwise, and a lost trace should not go unnoticed.
  if (!w.ok()) std::cerr << "recur: " << w.status().message() << "\n";
}

void Profiler::phase(const char* name, ProfileClock::time_point begin) {
  const auto ns = [this](ProfileClock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin_).count();
  };
  std::lock_guard lock(mu_);
  phases_.push_back({name, {ns(begin), ns(ProfileClock::now()) - ns(begin)}});
  dirty_ = true;
}

void Profiler::set_model(std::string model, std::vector<std::string> providers) {
  std::lock_guard lock(mu_);
  model_ = std::move(model);
  providers_ = std::move(providers);
}

int32_t Profiler::tid_of(std::thread::id id) {
  auto it = std::find(threads_.begin(), threads_.end(), id);
  if (it == threads_.end()) it = threads_.insert(threads_.end(), id);
  return static_cast<int32_t>(it - threads_.begin()) + 1;
}

ProfileBuffer* Profiler::acquire(int64_t* run) {
  ProfileBuffer* b = nullptr;
  int32_t tid = 0;
  {
    std::lock_guard lock(mu_);
    tid = tid_of(std::this_thread::get_id());
    if (free_.empty()) {
      buffers_.push_back(std::make_unique<ProfileBuffer>(origin_));
      b = buffers_.back().get();
    } else {
      b = free_.back();
      free_.pop_back();
    }
  }
  b->mu_.lock();
  b->tid_ = tid;
  b->run_ = *run = runs_.fetch_add(1);
  b->current_ = -1;
  b->iteration_ = -1;
  return b;
}

void Profiler::release(ProfileBuffer* b) {
  b->mu_.unlock();
  std::lock_guard lock(mu_);
  free_.push_back(b);
  dirty_ = true;
}

std::vector<ProfileEvent> Profiler::events() const {
  std::vector<ProfileEvent> out;
  std::vector<ProfileBuffer*> buffers;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, t] : phases_) {
      ProfileEvent e;
      e.category = "session";
      e.name = name;
      e.start_us = to_us(t.first);
      e.dur_us = to_us(t.second);
      out.push_back(std::move(e));
    }
    for (const auto& b : buffers_) buffers.push_back(b.get());
  }
  // Buffers are never freed before the profiler, so they can be read outside mu_ (a run
  // holds its buffer's lock and takes mu_ when it ends).
  for (ProfileBuffer* b : buffers) {
    std::lock_guard lock(b->mu_);
    append_events(*b, b->records_, b->ranks_, b->dims_, &out);
  }
  std::stable_sort(out.begin(), out.end(), [](const ProfileEvent& a, const ProfileEvent& b) {
    // An enclosing event first when two start together, so viewers nest them.
    return a.start_us != b.start_us ? a.start_us < b.start_us : a.dur_us > b.dur_us;
  });
  return out;
}

Result<std::string> Profiler::write() const {
  if (path_.empty()) return std::string();
  dirty_ = false;
  const std::vector<ProfileEvent> events = this->events();
  std::string s = "{\"traceEvents\":[\n";
  std::string model;
  std::string providers;
  int threads = 0;
  {
    std::lock_guard lock(mu_);
    model = model_;
    for (const auto& p : providers_) providers += (providers.empty() ? "" : ",") + json_string(p);
    threads = static_cast<int>(threads_.size());
  }
  write_metadata(s, "process_name", 0, "recur " + model);
  write_metadata(s, "thread_name", 0, "session load");
  for (int t = 1; t <= threads; ++t)
    write_metadata(s, "thread_name", t, "run thread " + std::to_string(t));
  for (size_t i = 0; i < events.size(); ++i) {
    write_event(s, events[i]);
    s += i + 1 < events.size() ? ",\n" : "\n";
  }
  s += "],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"model\":" + json_string(model) +
       ",\"providers\":[" + providers + "]}}\n";
  // Written whole under a temporary name, then renamed: a reader never sees half a trace.
  const std::string tmp = path_ + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << s;
    f.close();
    if (!f) return Status(ErrorCode::kInvalidArgument, "cannot write the profile to '" + tmp + "'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path_, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Status(ErrorCode::kInvalidArgument,
                  "cannot write the profile to '" + path_ + "': " + ec.message());
  }
  return path_;
}

ProfileRun::ProfileRun(Profiler* p) : profiler_(p) {
  if (!p) return;
  int64_t run = 0;
  buffer_ = p->acquire(&run);
  ProfileRecord r;
  r.kind = ProfileRecord::Kind::kRun;
  r.run = run;
  r.tid = buffer_->tid_;
  record_ = static_cast<int32_t>(buffer_->records_.size());
  r.start_ns = buffer_->now_ns();
  buffer_->records_.push_back(r);
  previous_ = t_current;
  t_current = buffer_;
  uncaught_ = std::uncaught_exceptions();
}

ProfileRun::~ProfileRun() {
  if (!buffer_) return;
  ProfileRecord& r = buffer_->records_[static_cast<size_t>(record_)];
  r.dur_ns = buffer_->now_ns() - r.start_ns;
  r.failed = std::uncaught_exceptions() > uncaught_;
  t_current = previous_;
  profiler_->release(buffer_);
}

}  // namespace recur
