// json.hpp: a small JSON reader and writer, enough for the bot protocol.
//
// One header, C++17, no dependencies. It reads any JSON text (RFC 8259):
// objects, arrays, strings with every escape (\uXXXX too, surrogate pairs
// included, written out as UTF-8), numbers, true, false and null. Integers
// that fit a signed 64-bit integer are kept exactly (request ids go up to
// 2^53 - 1); other numbers become doubles.
//
//     json::Value msg = json::parse(R"({"type":"ping","nonce":7})");
//     if (msg["type"].as_string() == "ping") {
//         json::Value pong = json::Value::object({{"type", "pong"}, {"nonce", msg["nonce"]}});
//         std::cout << json::dump(pong) << '\n';   // {"type":"pong","nonce":7}
//     }
//
// Looking up a key that is not there gives null (`msg["nope"].is_null()`), so
// unknown and missing fields are easy to skip. The as_*() accessors throw
// json::Error when a value is not of the type asked for.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace json {

// Thrown for text that is not JSON, and for a value used as the wrong type.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Value;
using Array = std::vector<Value>;
// An object keeps its keys in the order they came (the protocol's objects are
// small, so a key is found by a linear search).
using Object = std::vector<std::pair<std::string, Value>>;

enum class Type { Null, Bool, Int, Double, String, Array, Object };

class Value {
 public:
  Value() = default;  // null
  Value(std::nullptr_t) {}
  Value(bool b) : type_(Type::Bool), bool_(b) {}
  // Every integer type but bool (int, long, std::int64_t, std::size_t, ...).
  template <typename T,
            typename std::enable_if<std::is_integral<T>::value && !std::is_same<T, bool>::value,
                                    int>::type = 0>
  Value(T n) : type_(Type::Int), int_(static_cast<std::int64_t>(n)) {}
  Value(double d) : type_(Type::Double), double_(d) {}
  Value(const char* s) : type_(Type::String), string_(s) {}
  Value(std::string s) : type_(Type::String), string_(std::move(s)) {}
  Value(Array a) : type_(Type::Array), array_(std::move(a)) {}
  Value(Object o) : type_(Type::Object), object_(std::move(o)) {}

  // Value::object({{"type", "move"}, {"id", 3}}) and Value::array({1, 2}).
  static Value object(std::initializer_list<std::pair<std::string, Value>> members) {
    return Value(Object(members));
  }
  static Value array(std::initializer_list<Value> items) { return Value(Array(items)); }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_int() const { return type_ == Type::Int; }
  bool is_number() const { return type_ == Type::Int || type_ == Type::Double; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }

  bool as_bool() const {
    expect(Type::Bool, "a boolean");
    return bool_;
  }
  std::int64_t as_int() const {
    expect(Type::Int, "an integer");
    return int_;
  }
  double as_double() const {
    if (type_ == Type::Int) return static_cast<double>(int_);
    expect(Type::Double, "a number");
    return double_;
  }
  const std::string& as_string() const {
    expect(Type::String, "a string");
    return string_;
  }
  const Array& as_array() const {
    expect(Type::Array, "an array");
    return array_;
  }
  Array& as_array() {
    expect(Type::Array, "an array");
    return array_;
  }
  const Object& as_object() const {
    expect(Type::Object, "an object");
    return object_;
  }
  Object& as_object() {
    expect(Type::Object, "an object");
    return object_;
  }

  // The member named `key`, or nullptr when this is not an object or has no
  // such key (with a repeated key, the last one wins, as in most parsers).
  const Value* find(std::string_view key) const {
    if (type_ != Type::Object) return nullptr;
    for (auto it = object_.rbegin(); it != object_.rend(); ++it) {
      if (it->first == key) return &it->second;
    }
    return nullptr;
  }
  // The member named `key`, or null when there is none.
  const Value& operator[](std::string_view key) const {
    const Value* found = find(key);
    return found != nullptr ? *found : null_value();
  }
  // The item at `index` of an array (throws when out of range).
  const Value& operator[](std::size_t index) const { return as_array().at(index); }
  std::size_t size() const {
    if (type_ == Type::Array) return array_.size();
    if (type_ == Type::Object) return object_.size();
    return 0;
  }

  // Adds (or replaces) a member of an object.
  void set(std::string key, Value value) {
    for (auto& member : as_object()) {
      if (member.first == key) {
        member.second = std::move(value);
        return;
      }
    }
    object_.emplace_back(std::move(key), std::move(value));
  }

 private:
  static const Value& null_value() {
    static const Value null;
    return null;
  }
  void expect(Type wanted, const char* what) const {
    if (type_ != wanted) throw Error(std::string("JSON value is not ") + what);
  }

  Type type_ = Type::Null;
  bool bool_ = false;
  std::int64_t int_ = 0;
  double double_ = 0.0;
  std::string string_;
  Array array_;
  Object object_;
};

namespace detail {

// A recursive-descent parser over one JSON text.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Value parse_document() {
    Value value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("unexpected text after the JSON value");
    return value;
  }

 private:
  static constexpr int kMaxDepth = 256;  // nesting deeper than this is refused

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("invalid JSON at byte " + std::to_string(pos_) + ": " + what);
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_whitespace() {
    while (!at_end()) {
      char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }
  void expect_char(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void expect_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) fail("unknown literal");
    pos_ += word.size();
  }

  Value parse_value(int depth) {
    if (depth > kMaxDepth) fail("nested too deeply");
    skip_whitespace();
    switch (peek()) {
      case '{': return parse_object(depth);
      case '[': return parse_array(depth);
      case '"': return Value(parse_string());
      case 't': expect_word("true"); return Value(true);
      case 'f': expect_word("false"); return Value(false);
      case 'n': expect_word("null"); return Value();
      default: return parse_number();
    }
  }

  Value parse_object(int depth) {
    expect_char('{');
    Object members;
    skip_whitespace();
    if (peek() == '}') {
      ++pos_;
      return Value(std::move(members));
    }
    while (true) {
      skip_whitespace();
      if (peek() != '"') fail("expected a string key");
      std::string key = parse_string();
      skip_whitespace();
      expect_char(':');
      Value item = parse_value(depth + 1);
      members.emplace_back(std::move(key), std::move(item));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect_char('}');
      return Value(std::move(members));
    }
  }

  Value parse_array(int depth) {
    expect_char('[');
    Array items;
    skip_whitespace();
    if (peek() == ']') {
      ++pos_;
      return Value(std::move(items));
    }
    while (true) {
      items.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect_char(']');
      return Value(std::move(items));
    }
  }

  // Four hex digits of a \u escape.
  unsigned parse_hex4() {
    if (text_.size() - pos_ < 4) fail("short \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      code <<= 4;
      if (c >= '0' && c <= '9') code |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') code |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') code |= static_cast<unsigned>(c - 'A' + 10);
      else fail("bad hex digit in \\u escape");
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  // The code point of a \u escape (the backslash and 'u' already read),
  // joining a surrogate pair; a lone surrogate becomes U+FFFD.
  unsigned parse_unicode_escape() {
    unsigned code = parse_hex4();
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (text_.substr(pos_, 2) == "\\u") {
        std::size_t before = pos_;
        pos_ += 2;
        unsigned low = parse_hex4();
        if (low >= 0xDC00 && low <= 0xDFFF) {
          return 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        pos_ = before;  // not a pair: read that escape on its own
      }
      return 0xFFFD;
    }
    if (code >= 0xDC00 && code <= 0xDFFF) return 0xFFFD;
    return code;
  }

  std::string parse_string() {
    expect_char('"');
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;  // UTF-8 bytes pass through unchanged
        continue;
      }
      if (at_end()) fail("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': append_utf8(out, parse_unicode_escape()); break;
        default: fail("unknown escape");
      }
    }
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  Value parse_number() {
    std::size_t start = pos_;
    bool negative = false;
    if (peek() == '-') {
      negative = true;
      ++pos_;
    }
    if (!is_digit(peek())) fail("expected a value");
    if (peek() == '0') {
      ++pos_;  // a leading zero stands alone
    } else {
      while (is_digit(peek())) ++pos_;
    }
    bool integer = true;
    if (peek() == '.') {
      integer = false;
      ++pos_;
      if (!is_digit(peek())) fail("expected a digit after '.'");
      while (is_digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integer = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!is_digit(peek())) fail("expected a digit in the exponent");
      while (is_digit(peek())) ++pos_;
    }
    std::string digits(text_.substr(start, pos_ - start));
    if (integer) {
      // Accumulate as a negative number, whose range is one larger, so that
      // -9223372036854775808 fits; anything beyond int64 becomes a double.
      std::int64_t value = 0;
      bool overflow = false;
      constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
      for (std::size_t i = negative ? 1 : 0; i < digits.size(); ++i) {
        int digit = digits[i] - '0';
        if (value < (kMin + digit) / 10) {
          overflow = true;
          break;
        }
        value = value * 10 - digit;
      }
      if (!overflow && negative) return Value(value);
      if (!overflow && value != kMin) return Value(-value);
    }
    return Value(std::strtod(digits.c_str(), nullptr));
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

inline void dump_string(const std::string& s, std::string& out) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;  // UTF-8 bytes are written as they are
        }
    }
  }
  out += '"';
}

inline void dump_value(const Value& v, std::string& out) {
  switch (v.type()) {
    case Type::Null: out += "null"; break;
    case Type::Bool: out += v.as_bool() ? "true" : "false"; break;
    case Type::Int: out += std::to_string(v.as_int()); break;
    case Type::Double: {
      double d = v.as_double();
      if (!std::isfinite(d)) throw Error("JSON cannot hold NaN or infinity");
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      out += buf;
      break;
    }
    case Type::String: dump_string(v.as_string(), out); break;
    case Type::Array: {
      out += '[';
      bool first = true;
      for (const Value& item : v.as_array()) {
        if (!first) out += ',';
        first = false;
        dump_value(item, out);
      }
      out += ']';
      break;
    }
    case Type::Object: {
      out += '{';
      bool first = true;
      for (const auto& member : v.as_object()) {
        if (!first) out += ',';
        first = false;
        dump_string(member.first, out);
        out += ':';
        dump_value(member.second, out);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace detail

// Parses one JSON text (surrounding whitespace allowed); throws json::Error.
inline Value parse(std::string_view text) { return detail::Parser(text).parse_document(); }

// Writes a value as compact JSON: no whitespace, keys in their order.
inline std::string dump(const Value& value) {
  std::string out;
  detail::dump_value(value, out);
  return out;
}

}  // namespace json
