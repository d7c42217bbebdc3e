#include "tools/recur_run/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <vector>

#include "tools/common/npy.h"

namespace recur::tools {

namespace {

namespace fs = std::filesystem;

struct Planned {
  std::string output;  // the output's name
  std::string file;    // its file name in the directory
  std::string bytes;   // the whole .npy
};

// Closes the descriptor on every path out, errors included.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closing is where a delayed write error shows, so the caller needs its result.
  int close() {
    const int r = ::close(fd_);
    fd_ = -1;
    return r;
  }

 private:
  int fd_;
};

[[noreturn]] void fail(const std::string& message) { throw Error(ErrorCode::kIo, message); }

bool is_plain(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

Fd open_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("--output-dir '" + dir + "': cannot create it: " + ec.message());
  // O_NOFOLLOW: a link planted in the directory's place would send every file elsewhere.
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      fail("--output-dir '" + dir + "' is a symbolic link; give the directory itself");
    }
    fail("--output-dir '" + dir + "': " + std::strerror(err));
  }
  return fd;
}

std::vector<Planned> plan(const Outputs& outs, std::ostream& log) {
  std::vector<Planned> files;
  std::map<std::string, std::string> owner;  // file name -> output name
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].is_sequence() || outs[i].is_map()) {
      log << "skipped " << outs.name(i) << ": a " << dtype_name(outs[i].dtype())
          << " has no .npy form\n";
      continue;
    }
    const std::string file = output_file_name(outs.name(i));
    const auto [it, fresh] = owner.emplace(file, outs.name(i));
    if (!fresh) {
      const std::string who = it->second == outs.name(i)
                                  ? "output '" + outs.name(i) + "' is listed twice: both"
                                  : "outputs '" + it->second + "' and '" + outs.name(i) + "'";
      throw Error(ErrorCode::kInvalidArgument,
                  who + " would be written to '" + file + "'; nothing was written");
    }
    auto bytes = encode_npy(outs[i]);
    if (!bytes.ok())
      throw Error(bytes.status().code(), outs.name(i) + ": " + bytes.status().message());
    files.push_back({outs.name(i), file, std::move(bytes).value()});
  }
  return files;
}

// lstat, relative to the directory: a link in the file's place is seen, not followed.
void check_target(int dir, const std::string& path, const std::string& file, bool overwrite) {
  struct stat st {};
  if (::fstatat(dir, file.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return;
    fail("cannot check '" + path + "': " + std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) fail("'" + path + "' is a symbolic link; recur-run will not replace it");
  if (!S_ISREG(st.st_mode)) fail("'" + path + "' exists and is not a regular file");
  if (!overwrite) fail("'" + path + "' exists; pass --overwrite to replace it");
}

void write_all(int fd, const std::string& bytes, const std::string& path) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot write '" + path + "': " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

// Without `overwrite` the rename must not replace a file that appeared since the check.
void publish(int dir, const std::string& tmp, const std::string& file, const std::string& path,
             bool overwrite) {
  if (overwrite) {
    check_target(dir, path, file, true);  // again: a link may have appeared since the plan
    if (::renameat(dir, tmp.c_str(), dir, file.c_str()) != 0) {
      fail("cannot rename into '" + path + "': " + std::strerror(errno));
    }
    return;
  }
  if (::renameat2(dir, tmp.c_str(), dir, file.c_str(), RENAME_NOREPLACE) == 0) return;
  if (errno == EEXIST) fail("'" + path + "' exists; pass --overwrite to replace it");
  // File systems without RENAME_NOREPLACE: link() refuses an existing name just the same.
  if (errno != EINVAL || ::linkat(dir, tmp.c_str(), dir, file.c_str(), 0) != 0) {
    fail("cannot create '" + path + "': " + std::strerror(errno));
  }
  ::unlinkat(dir, tmp.c_str(), 0);
}

void write_one(int dir, const Planned& p, const std::string& path, bool overwrite, int serial) {
  // A short temporary name of its own: the final one may already be near NAME_MAX.
  const std::string tmp =
      ".recur-run." + std::to_string(::getpid()) + "." + std::to_string(serial) + ".tmp";
  Fd fd(::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (fd.get() < 0)
    fail("cannot create a temporary file for '" + path + "': " + std::strerror(errno));
  try {
    write_all(fd.get(), p.bytes, path);
    if (fd.close() != 0) fail("cannot write '" + path + "': " + std::strerror(errno));
    publish(dir, tmp, p.file, path, overwrite);
  } catch (...) {
    ::unlinkat(dir, tmp.c_str(), 0);
    throw;
  }
}

}  // namespace

std::string output_file_name(const std::string& output_name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : output_name) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_plain(c)) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out + ".npy";
}

void write_outputs(const Outputs& outs, const std::string& dir, bool overwrite, std::ostream& log) {
  const std::vector<Planned> files = plan(outs, log);
  const Fd d = open_dir(dir);
  std::vector<std::string> paths;
  for (const Planned& p : files) {
    paths.push_back((fs::path(dir) / p.file).string());
    check_target(d.get(), paths.back(), p.file, overwrite);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    write_one(d.get(), files[i], paths[i], overwrite, static_cast<int>(i));
    log << "wrote " << paths[i] << "\n";
  }
}

}  // namespace recur::tools
