// A persistent tuning cache (docs/tuning-cache.md): what a provider chose by timing, per key,
// kept in a file so that later sessions, in this process or another, take the choice without
// timing again. Provider-independent: keys and values are strings the provider words; `env`
// names what every entry depends on (CPU, ISA, library and recur versions), and a file written
// for another env is ignored and rewritten, never trusted.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace recur {

class TuningCache {
 public:
  // The file is read on the first find() or record(), not here. So is `env` computed: the
  // machine's description reaches code (oneDNN's ISA detection, /proc/cpuinfo) that a session
  // whose nodes never consult the cache should not map.
  TuningCache(std::string path, std::function<std::string()> env);
  TuningCache(std::string path, std::string env);
  // Writes what record() could not write yet (another process held the lock).
  ~TuningCache();
  TuningCache(const TuningCache&) = delete;
  TuningCache& operator=(const TuningCache&) = delete;

  // "$XDG_CACHE_HOME/recur/tuning-cache", or "~/.cache/recur/tuning-cache"; empty when
  // neither XDG_CACHE_HOME nor HOME is set.
  static std::string default_path();

  std::optional<std::string> find(const std::string& key);
  // Keeps the entry and writes the file at once, merged with the entries other processes
  // wrote meanwhile. Called right after timing (seconds), never per run.
  void record(const std::string& key, const std::string& value);

  const std::string& path() const { return path_; }
  // The warning given when the file was corrupt, foreign or not a regular file; empty if none.
  std::string warning() const;

  struct Parsed {
    bool ok = false;
    bool missing = false;
    std::string problem;  // why the file is not trusted, when !ok && !missing
    std::map<std::string, std::string> entries;
  };
  // Reads and checks the file at `path` for `env`.
  static Parsed read_file(const std::string& path, const std::string& env);

 private:
  void load_locked();
  bool write_locked();  // false: the lock was busy or the write failed; pending_ stays

  std::string path_;
  std::function<std::string()> make_env_;  // until load_locked() fills env_
  std::string env_;
  mutable std::mutex mu_;
  bool loaded_ = false;
  std::string warning_;
  std::map<std::string, std::string> entries_;
  std::map<std::string, std::string> pending_;  // recorded, not yet in the file
};

}  // namespace recur
