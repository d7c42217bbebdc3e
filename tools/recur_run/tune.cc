#include "tools/recur_run/tune.h"

#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "recur/recur.h"
#include "runtime/provider/tuning_cache.h"
#include "tools/recur_run/feeds.h"

namespace recur::tools {

namespace {

// The entry lines of the cache file, whatever env it was written for: only printed.
std::map<std::string, std::string> entries_of(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("entry\t", 0) != 0) continue;
    const size_t t = line.find('\t', 6);
    if (t != std::string::npos) out[line.substr(6, t - 6)] = line.substr(t + 1);
  }
  return out;
}

}  // namespace

int run_tune(const Args& a) {
  if (a.session.deterministic())
    usage_error("--tune times implementations: not with --deterministic");
  std::string path = TuningCache::default_path();
  if (auto it = a.session.config().find("onednn.tuning_cache"); it != a.session.config().end())
    path = it->second;
  if (path.empty() || path == "off")
    usage_error("--tune needs a tuning cache, not --tuning-cache off");
  Args t = a;
  t.random_inputs = true;
  t.session.set("onednn.tuning_cache", path).set("onednn.tune", "1");
  const auto before = entries_of(path);
  {
    const Session session(t.target, t.session);
    const Feeds feeds = model_feeds(session, t);
    session.run(feeds, run_options(t));
  }  // the session writes what is left when it is destroyed
  const auto after = entries_of(path);
  int added = 0;
  for (const auto& [k, v] : after) {
    auto it = before.find(k);
    if (it != before.end() && it->second == v) continue;
    std::cout << "recorded: " << k << " -> " << v << "\n";
    ++added;
  }
  std::cout << "tuning cache " << path << ": " << added << " recorded, " << after.size()
            << " entries in all\n";
  return kExitOk;
}

}  // namespace recur::tools
