// Source positions of a parsed scenario. A Node is one message of the text as protobuf's
// ParseInfoTree saw it: its own position (where its field name starts) and the positions of its
// fields, 1-based. A field the text left out has no position; asking for it gives the message's
// own, which is where a missing value belongs.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/text_format.h>

#include <stdexcept>
#include <string>

namespace gmp::scenario {

struct Pos {
  int line = 1;
  int column = 1;
};

class Node {
 public:
  using Tree = google::protobuf::TextFormat::ParseInfoTree;

  Node(const google::protobuf::Descriptor* type, const Tree* tree, Pos self, std::string name)
      : type_(type), tree_(tree), self_(self), name_(std::move(name)) {}

  Pos self() const { return self_; }
  const std::string& name() const { return name_; }  // the field this message was given as

  // Where the field (the index-th value of a repeated one) starts, or self() when it is absent.
  Pos at(const std::string& field, int index = -1) const {
    if (tree_ == nullptr) return self_;
    auto loc = tree_->GetLocation(find(field, index), index);
    return loc.line < 0 ? self_ : Pos{loc.line + 1, loc.column + 1};
  }

  // The message held in the field (the index-th value of a repeated one).
  Node child(const std::string& field, int index = -1) const {
    const google::protobuf::FieldDescriptor* f = find(field, index);
    const Tree* sub = tree_ == nullptr ? nullptr : tree_->GetTreeForNested(f, index);
    return Node(f->message_type(), sub, at(field, index), field);
  }

 private:
  const google::protobuf::FieldDescriptor* find(const std::string& field, int index) const {
    const google::protobuf::FieldDescriptor* f = type_->FindFieldByName(field);
    if (f == nullptr || f->is_repeated() != (index >= 0)) {
      throw std::logic_error(type_->full_name() + " has no " + (index >= 0 ? "repeated " : "") +
                             "field " + field);
    }
    return f;
  }

  const google::protobuf::Descriptor* type_;
  const Tree* tree_;
  Pos self_;
  std::string name_;
};

}  // namespace gmp::scenario
