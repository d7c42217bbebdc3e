// discard_pages and DiscardBehind (runtime/core/page_discard.h): which bytes they give back,
// and that they never reach past the range they are given.
#include "runtime/core/page_discard.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace recur {
namespace {

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// An anonymous private mapping filled with 0x5A: a discarded page reads as zeros.
struct Pages {
  explicit Pages(size_t n) : size(n * kPage) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
    if (base) std::memset(base, 0x5A, size);
  }
  ~Pages() {
    if (base) ::munmap(base, size);
  }
  // Per page: true where every byte still holds 0x5A, false where every byte is zero.
  std::vector<bool> kept() const {
    std::vector<bool> out;
    for (size_t p = 0; p < size / kPage; ++p) {
      const unsigned char* q = base + p * kPage;
      const bool all_kept = std::all_of(q, q + kPage, [](unsigned char c) { return c == 0x5A; });
      const bool all_zero = std::all_of(q, q + kPage, [](unsigned char c) { return c == 0; });
      EXPECT_TRUE(all_kept || all_zero) << "page " << p << " is partly discarded";
      out.push_back(all_kept);
    }
    return out;
  }
  size_t size;
  unsigned char* base = nullptr;
};

TEST(DiscardPages, OnlyWholePagesInsideTheRange) {
  Pages m(8);
  ASSERT_NE(m.base, nullptr);
  // From byte 100 of page 1 to byte 100 of page 6: pages 2 to 5 are whole inside it.
  discard_pages(m.base + kPage + 100, m.base + 6 * kPage + 100);
  EXPECT_EQ(m.kept(), (std::vector<bool>{true, true, false, false, false, false, true, true}));
  // A range inside one page discards nothing.
  Pages n(2);
  ASSERT_NE(n.base, nullptr);
  discard_pages(n.base + 1, n.base + kPage - 1);
  discard_pages(n.base + kPage, n.base + kPage);
  EXPECT_EQ(n.kept(), (std::vector<bool>{true, true}));
}

TEST(DiscardBehind, GivesBackInStepsAndNeverPastTheReader) {
  // 64 pages of 4 KiB: a step is 64 KiB, the least DiscardBehind takes.
  const size_t pages = 64;
  Pages m(pages);
  ASSERT_NE(m.base, nullptr);
  unsigned char* begin = m.base + 100;
  unsigned char* end = m.base + m.size - 100;
  DiscardBehind behind(begin, end);
  const size_t step = std::max<size_t>(size_t{1} << 16, static_cast<size_t>(end - begin) / 16);
  // Less than a step read: nothing is given back yet.
  behind.read_to(begin + step / 2);
  EXPECT_EQ(m.kept(), std::vector<bool>(pages, true));
  // A step and a half: the whole pages before the reader go, none at or after it, and not
  // page 0, which holds bytes before `begin`.
  const unsigned char* reader = begin + step + step / 2;
  behind.read_to(reader);
  const std::vector<bool> kept = m.kept();
  EXPECT_TRUE(kept[0]);
  const size_t reader_page = static_cast<size_t>(reader - m.base) / kPage;
  for (size_t p = 1; p < reader_page; ++p) EXPECT_FALSE(kept[p]) << "page " << p;
  for (size_t p = reader_page; p < pages; ++p) EXPECT_TRUE(kept[p]) << "page " << p;
  // Read to the end: everything but the two partial pages at the ends, the page the reader
  // was in last time included.
  behind.read_to(end);
  std::vector<bool> all(pages, false);
  all.front() = all.back() = true;
  EXPECT_EQ(m.kept(), all);
}

TEST(DiscardBehind, DefaultDiscardsNothing) {
  Pages m(32);
  ASSERT_NE(m.base, nullptr);
  DiscardBehind none;
  none.read_to(m.base + m.size);
  EXPECT_EQ(m.kept(), std::vector<bool>(32, true));
}

TEST(DiscardPages, AFileMappingReadsTheFileAgain) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("recur_discard_" + std::to_string(::getpid()) + ".bin");
  std::string bytes(16 * kPage, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 3);
  { std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size())); }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* p = ::mmap(nullptr, bytes.size(), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  std::filesystem::remove(path);
  ASSERT_NE(p, MAP_FAILED);
  const char* c = static_cast<const char*>(p);
  ASSERT_EQ(std::memcmp(c, bytes.data(), bytes.size()), 0);
  discard_pages(c, c + bytes.size());
  EXPECT_EQ(std::memcmp(c, bytes.data(), bytes.size()), 0);
  ::munmap(p, bytes.size());
}

}  // namespace
}  // namespace recur
