// A vector that keeps up to N elements inside itself and goes to the heap only beyond that.
// recur::Shape is one: tensor shapes almost always have few dimensions, and a shape that lives
// on the heap would make every tensor a run places, and every view of one, allocate (issue 13:
// no heap allocation in the steady state of a run).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace recur {

namespace detail {
// Out of line and cold, so that at() itself is two instructions that inline into the caller
// instead of a clone of at() in each file that uses it.
[[noreturn, gnu::cold, gnu::noinline]] inline void small_vector_out_of_range() {
  throw std::out_of_range("SmallVector::at");
}
}  // namespace detail

// The std::vector API that recur's code and its users need, for trivially copyable elements.
// Converts to and from std::vector<T> implicitly, so code written for std::vector keeps
// compiling (each conversion copies, and allocates on the std::vector side).
template <class T, size_t N>
class SmallVector {
  // Elements are copied with memcpy and never destroyed one by one.
  static_assert(std::is_trivially_copyable<T>::value, "SmallVector holds trivially copyable T");
  static_assert(N > 0, "SmallVector needs an inline capacity");

  template <class It>
  using IfIterator =
      std::enable_if_t<std::is_convertible<typename std::iterator_traits<It>::iterator_category,
                                           std::input_iterator_tag>::value>;

 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  static constexpr size_t inline_capacity = N;

  SmallVector() noexcept {}
  explicit SmallVector(size_t n) { resize(n); }
  SmallVector(size_t n, const T& value) { assign(n, value); }
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  template <class It, class = IfIterator<It>>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  // Implicit both ways, as the type it replaces (Shape was std::vector<int64_t>).
  SmallVector(const std::vector<T>& values) {  // NOLINT(google-explicit-constructor)
    assign(values.begin(), values.end());
  }
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  SmallVector(const SmallVector& o) { copy_from(o); }
  SmallVector(SmallVector&& o) noexcept { move_from(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) {
      size_ = 0;
      copy_from(o);
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      move_from(o);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~SmallVector() { release(); }

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return capacity_; }
  size_t max_size() const noexcept { return static_cast<size_t>(-1) / sizeof(T); }
  // Whether the elements live inside the object (no heap block).
  bool is_inline() const noexcept { return data_ == inline_data(); }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return data_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& at(size_t i) {
    if (i >= size_) [[unlikely]]
      detail::small_vector_out_of_range();
    return data_[i];
  }
  const T& at(size_t i) const {
    if (i >= size_) [[unlikely]]
      detail::small_vector_out_of_range();
    return data_[i];
  }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity_) grow_to(n);
  }
  void shrink_to_fit() {}
  void clear() noexcept { size_ = 0; }
  void resize(size_t n) { resize(n, T()); }
  void resize(size_t n, const T& value) {
    if (n > size_) {
      const T v = value;  // `value` may be one of ours: read it before growing
      reserve(n);
      std::fill(data_ + size_, data_ + n, v);
    }
    size_ = n;
  }
  void push_back(const T& value) {
    const T v = value;
    if (size_ == capacity_) grow_to(next_capacity(size_ + 1));
    data_[size_++] = v;
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    const T v(std::forward<Args>(args)...);
    if (size_ == capacity_) grow_to(next_capacity(size_ + 1));
    data_[size_] = v;
    return data_[size_++];
  }
  void pop_back() { --size_; }

  void assign(size_t n, const T& value) {
    const T v = value;
    size_ = 0;
    reserve(n);
    std::fill(data_, data_ + n, v);
    size_ = n;
  }
  template <class It, class = IfIterator<It>>
  void assign(It first, It last) {
    clear();
    append(first, last);
  }
  void assign(std::initializer_list<T> values) { assign(values.begin(), values.end()); }

  iterator insert(const_iterator pos, const T& value) { return insert(pos, size_t{1}, value); }
  iterator insert(const_iterator pos, size_t n, const T& value) {
    const T v = value;
    const size_t at = open_gap(pos, n);
    std::fill(data_ + at, data_ + at + n, v);
    return data_ + at;
  }
  template <class It, class = IfIterator<It>>
  iterator insert(const_iterator pos, It first, It last) {
    // Through a copy: the range may be part of this vector, or single-pass.
    const SmallVector values(first, last);
    const size_t at = open_gap(pos, values.size());
    std::copy(values.begin(), values.end(), data_ + at);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t at = static_cast<size_t>(first - data_);
    const size_t n = static_cast<size_t>(last - first);
    std::copy(data_ + at + n, data_ + size_, data_ + at);
    size_ -= n;
    return data_ + at;
  }
  void swap(SmallVector& o) noexcept {
    SmallVector t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) {
    return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector& a, const std::vector<T>& b) { return !(a == b); }
  friend bool operator==(const std::vector<T>& a, const SmallVector& b) { return b == a; }
  friend bool operator!=(const std::vector<T>& a, const SmallVector& b) { return !(b == a); }
  friend bool operator<(const SmallVector& a, const SmallVector& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  T* inline_data() noexcept { return inline_; }
  const T* inline_data() const noexcept { return inline_; }

  static size_t next_capacity(size_t need) { return std::max(need, size_t{2} * need); }
  void grow_to(size_t n) {
    T* block = static_cast<T*>(::operator new(n * sizeof(T)));
    if (size_ > 0) std::memcpy(static_cast<void*>(block), data_, size_ * sizeof(T));
    release();
    data_ = block;
    capacity_ = n;
  }
  void release() noexcept {
    if (!is_inline()) ::operator delete(data_);
    data_ = inline_data();
    capacity_ = N;
  }
  template <class It>
  void append(It first, It last) {
    for (; first != last; ++first) push_back(static_cast<T>(*first));
  }
  void copy_from(const SmallVector& o) {
    reserve(o.size_);
    if (o.size_ > 0) std::memcpy(static_cast<void*>(data_), o.data_, o.size_ * sizeof(T));
    size_ = o.size_;
  }
  // Takes o's heap block, or copies its inline elements; leaves o empty.
  void move_from(SmallVector& o) noexcept {
    if (o.is_inline()) {
      if (o.size_ > 0) std::memcpy(static_cast<void*>(data_), o.data_, o.size_ * sizeof(T));
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
      o.data_ = o.inline_data();
      o.capacity_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }
  // Makes room for n elements at pos; returns pos's index.
  size_t open_gap(const_iterator pos, size_t n) {
    const size_t at = static_cast<size_t>(pos - data_);
    if (size_ + n > capacity_) grow_to(next_capacity(size_ + n));
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + n);
    size_ += n;
    return at;
  }

  T* data_ = inline_data();
  size_t size_ = 0;
  size_t capacity_ = N;
  T inline_[N];  // the first size_ are set while is_inline()
};

}  // namespace recur
