// See parse_errors.h. Positions follow protobuf's tokenizer: 0-based, a tab advancing the column
// to the next multiple of 8; diagnostics add 1 to both.
#include "sim/textproto/parse_errors.h"

#include <sstream>
#include <utility>

namespace gmp::textproto {

namespace {

int advance(int column, char c) { return c == '\t' ? column + 8 - column % 8 : column + 1; }

// The first quoted name in s after `after`, or "" when `after` is not in s.
std::string quoted_after(const std::string& s, const std::string& after) {
  size_t at = s.find(after);
  if (at == std::string::npos) return {};
  size_t begin = s.find('"', at + after.size() - 1);
  size_t end = begin == std::string::npos ? begin : s.find('"', begin + 1);
  return end == std::string::npos ? std::string() : s.substr(begin + 1, end - begin - 1);
}

// The field that an error about a just-read field name names, or "".
std::string field_in(const std::string& message) {
  for (const char* after : {"has no field named \"", "Non-repeated field \"", "Field \""}) {
    if (std::string name = quoted_after(message, after); !name.empty()) return name;
  }
  return {};
}

}  // namespace

// Rewrites protobuf's unknown-field message, listing what is allowed there:
//   Message type "gmp.scenario.Op" has no field named "spin".
std::string ParseErrors::explain(const std::string& message) const {
  if (message.ends_with("got: ")) return message + "end of file";
  if (message.starts_with("Message is too deep") && !too_deep_.empty()) return too_deep_;
  std::string type = quoted_after(message, "Message type \"");
  std::string field = quoted_after(message, "has no field named \"");
  const auto* d = google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(type);
  if (field.empty() || d == nullptr) return message;
  std::string allowed;
  for (int i = 0; i < d->field_count(); i++) allowed += (i ? ", " : "") + d->field(i)->name();
  if (d == operations_) return "unknown operation \"" + field + "\" (operations: " + allowed + ")";
  return "unknown field \"" + field + "\" (fields of " + d->name() + ": " + allowed + ")";
}

ParseErrors::ParseErrors(std::string source, const std::string& text, const google::protobuf::Descriptor* operations)
    : source_(std::move(source)), operations_(operations) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines_.push_back(line);
}

void ParseErrors::AddError(int line, int column, const std::string& message) {
  std::string name = field_in(message);
  if (!name.empty() && line >= 0 && line < static_cast<int>(lines_.size())) {
    // Find the byte at `column`, step back over blanks, and check that the name ends there.
    const std::string& l = lines_[line];
    size_t at = 0;
    for (int c = 0; at < l.size() && c < column; at++) c = advance(c, l[at]);
    while (at > 0 && (l[at - 1] == ' ' || l[at - 1] == '\t')) at--;
    if (at >= name.size() && l.compare(at - name.size(), name.size(), name) == 0) {
      column = 0;
      for (size_t i = 0; i < at - name.size(); i++) column = advance(column, l[i]);
    }
  }
  diagnostics.push_back({source_, line + 1, column + 1, explain(message)});
}

}  // namespace gmp::textproto
