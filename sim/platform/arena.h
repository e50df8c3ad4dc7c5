// Arena<T>: objects of one type that live as long as their owner, allocated in chunks. Making one
// is a bump of a counter instead of a malloc, the objects sit next to each other in allocation
// order (goroutines made together are used together), and the owner's destruction frees a chunk
// at a time instead of an object at a time. Objects are never freed one by one: for what the port
// keeps for the whole run anyway (Gs, their stack contexts, sudogs, the interpreter's tasks).
// Not thread-safe: the owner serializes make() as it would a std::vector's push_back.
#pragma once

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace gmp::plat {

template <class T, size_t kChunk = 256>
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    // Oldest first, as a std::vector destroys its elements.
    for (size_t i = 0; i < size_; i++) at(i)->~T();
    for (T* c : chunks_) ::operator delete(static_cast<void*>(c), std::align_val_t(alignof(T)));
  }

  template <class... Args>
  T* make(Args&&... args) {
    if (size_ == chunks_.size() * kChunk) {
      chunks_.push_back(static_cast<T*>(::operator new(sizeof(T) * kChunk, std::align_val_t(alignof(T)))));
    }
    T* p = ::new (static_cast<void*>(at(size_))) T(std::forward<Args>(args)...);
    size_++;
    return p;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  T* at(size_t i) const { return chunks_[i / kChunk] + i % kChunk; }

  std::vector<T*> chunks_;
  size_t size_ = 0;
};

}  // namespace gmp::plat
