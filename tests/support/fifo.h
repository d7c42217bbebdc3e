// Reading from a FIFO in a test without letting a regression hang the test binary.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

namespace recur::testing {

// Makes a FIFO at `path`; false where the file system cannot hold one.
inline bool make_fifo(const std::string& path) { return ::mkfifo(path.c_str(), 0600) == 0; }

// Runs `f`, which reads `fifo`, and says whether it finished within `seconds`. A reader stuck
// in open() or read() waits for a writer: one is opened and closed to release it, so a
// regression fails the test instead of blocking it until CTest's timeout.
template <class F>
bool finishes_promptly(F&& f, const std::string& fifo, int seconds = 10) {
  auto done = std::async(std::launch::async, std::forward<F>(f));
  if (done.wait_for(std::chrono::seconds(seconds)) == std::future_status::ready) {
    done.get();
    return true;
  }
  for (int tries = 0; tries < 100; ++tries) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) {
      ::close(fd);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  done.get();
  return false;
}

}  // namespace recur::testing
