// The semaphore treap (sema.go's semaRoot): a binary search tree by semaphore id, heap-ordered by
// ticket, with a FIFO (or LIFO-fronted) list of waiters behind each node.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/runtime/rand.h"
#include "sim/runtime/sema.h"
#include "tests/sync/fake_g.h"

using namespace gmp;
using namespace gmp::rt;
using gmp::synctest::FakeG;

namespace {

// Checks every treap invariant below root and returns the keys in order.
void walk(const sudog* s, const sudog* parent, std::vector<uint64_t>& keys, size_t& nodes) {
  if (s == nullptr) return;
  nodes++;
  REQUIRE(s->parent == parent);
  REQUIRE(s->ticket != 0);
  REQUIRE((s->ticket & 1) == 1);
  if (parent != nullptr) REQUIRE(parent->ticket <= s->ticket);  // heap order on tickets
  walk(s->prev, s, keys, nodes);
  keys.push_back(semaKey(s));
  walk(s->next, s, keys, nodes);
}

std::vector<uint64_t> checkTreap(const semaRoot& root) {
  std::vector<uint64_t> keys;
  size_t nodes = 0;
  walk(root.treap, nullptr, keys, nodes);
  REQUIRE(keys.size() == nodes);
  // Strictly ascending: a search tree of distinct keys.
  for (size_t i = 1; i < keys.size(); i++) REQUIRE(keys[i - 1] < keys[i]);
  return keys;
}

int depth(const sudog* s) { return s == nullptr ? 0 : 1 + std::max(depth(s->prev), depth(s->next)); }

// A deterministic permutation of 0..n-1.
std::vector<size_t> permutation(size_t n, uint32_t seed) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = i;
  uint32_t st = seed;
  for (size_t i = n; i > 1; i--) std::swap(v[i - 1], v[cheaprandStep(st) % i]);
  return v;
}

}  // namespace

TEST_CASE("semaRoot: distinct ids come back by id, the treap stays a BST and a heap", "[sema]") {
  FakeG fg(nullptr, 12345);
  constexpr size_t n = 300;
  std::vector<std::unique_ptr<Sema>> semas;
  std::vector<sudog> sgs(n);
  for (size_t i = 0; i < n; i++) semas.push_back(std::make_unique<Sema>(1000 + 7 * i));

  semaRoot root;
  std::vector<uint64_t> expect;
  for (size_t i : permutation(n, 99)) {
    root.queue(semas[i].get(), &sgs[i], false);
    REQUIRE(sgs[i].elem == semas[i].get());
    REQUIRE(sgs[i].g == &fg.gp);
    expect.push_back(semas[i]->id);
    std::sort(expect.begin(), expect.end());
    REQUIRE(checkTreap(root) == expect);
  }
  // Balanced on average: far below the 300 of a degenerate tree.
  CHECK(depth(root.treap) < 40);

  // A missing id finds nothing and changes nothing.
  Sema absent(5);
  REQUIRE(root.dequeue(&absent).found == nullptr);
  REQUIRE(checkTreap(root) == expect);

  for (size_t i : permutation(n, 7)) {
    const semaRoot::Dequeued d = root.dequeue(semas[i].get());
    REQUIRE(d.found == &sgs[i]);
    REQUIRE(d.found->elem == nullptr);
    REQUIRE(d.found->ticket == 0);
    REQUIRE(d.found->parent == nullptr);
    REQUIRE(d.found->prev == nullptr);
    REQUIRE(d.found->next == nullptr);
    expect.erase(std::find(expect.begin(), expect.end(), semas[i]->id));
    REQUIRE(checkTreap(root) == expect);
  }
  REQUIRE(root.treap == nullptr);
}

TEST_CASE("semaRoot: waiters on one id are FIFO, and lifo puts a waiter in front", "[sema]") {
  FakeG fg(nullptr, 3);
  Sema a(10), b(20), c(5);
  sudog s[8];
  semaRoot root;
  root.queue(&a, &s[0], false);
  root.queue(&b, &s[1], false);
  root.queue(&a, &s[2], false);
  root.queue(&c, &s[3], false);
  root.queue(&a, &s[4], false);
  root.queue(&a, &s[5], true);  // to the front of a's list, taking s[0]'s place in the tree
  REQUIRE(checkTreap(root) == std::vector<uint64_t>{5, 10, 20});
  // The head of a's list counts the waiters behind it.
  const sudog* head = root.treap;
  while (semaKey(head) != 10) head = 10 < semaKey(head) ? head->prev : head->next;
  REQUIRE(head == &s[5]);
  REQUIRE(head->waiters == 3);

  std::vector<sudog*> got;
  for (int i = 0; i < 4; i++) {
    got.push_back(root.dequeue(&a).found);
    checkTreap(root);
  }
  REQUIRE(got == std::vector<sudog*>{&s[5], &s[0], &s[2], &s[4]});
  REQUIRE(root.dequeue(&a).found == nullptr);
  REQUIRE(checkTreap(root) == std::vector<uint64_t>{5, 20});
  REQUIRE(root.dequeue(&b).found == &s[1]);
  REQUIRE(root.dequeue(&c).found == &s[3]);
  REQUIRE(root.treap == nullptr);
}

TEST_CASE("semaRoot: rotations keep the in-order sequence and the parent links", "[sema]") {
  // (y (x a b) c) <-> (x a (y b c)), hung below a parent p.
  Sema ka(1), kx(2), kb(3), ky(4), kc(5), kp(6);
  sudog a, x, b, y, c, p;
  a.elem = &ka;
  x.elem = &kx;
  b.elem = &kb;
  y.elem = &ky;
  c.elem = &kc;
  p.elem = &kp;
  for (sudog* s : {&a, &x, &b, &y, &c, &p}) s->ticket = 1;
  semaRoot root;
  root.treap = &p;
  p.prev = &y;
  y.parent = &p;
  y.prev = &x;
  x.parent = &y;
  y.next = &c;
  c.parent = &y;
  x.prev = &a;
  a.parent = &x;
  x.next = &b;
  b.parent = &x;
  const std::vector<uint64_t> inorder{1, 2, 3, 4, 5, 6};

  root.rotateRight(&y);
  REQUIRE(checkTreap(root) == inorder);
  REQUIRE(p.prev == &x);
  REQUIRE(x.prev == &a);
  REQUIRE(x.next == &y);
  REQUIRE(y.prev == &b);
  REQUIRE(y.next == &c);

  root.rotateLeft(&x);
  REQUIRE(checkTreap(root) == inorder);
  REQUIRE(p.prev == &y);
  REQUIRE(y.prev == &x);
  REQUIRE(x.next == &b);

  // At the root: the new subtree root becomes the treap's root.
  root.rotateRight(&p);
  REQUIRE(root.treap == &y);
  REQUIRE(y.parent == nullptr);
  REQUIRE(p.prev == &c);
  REQUIRE(checkTreap(root) == inorder);
}
