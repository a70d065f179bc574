// protocol.cpp: reading the referee's messages and answering them.
#include "protocol.hpp"

#include <cmath>
#include <exception>
#include <iostream>
#include <utility>

namespace kit {
namespace {

// Logs go to stderr: stdout carries protocol lines only.
void log(const std::string& text) { std::cerr << "cpp-kit: " << text << std::endl; }

// Field readers: a missing (or null) field takes its default, so that fields
// added with defaults in later versions of the protocol do not break the bot;
// a field of the wrong type throws json::Error.
std::int64_t int_field(const json::Value& obj, const char* key, std::int64_t fallback = 0) {
  const json::Value& v = obj[key];
  return v.is_null() ? fallback : v.as_int();
}

bool bool_field(const json::Value& obj, const char* key, bool fallback = false) {
  const json::Value& v = obj[key];
  return v.is_null() ? fallback : v.as_bool();
}

std::string string_field(const json::Value& obj, const char* key) {
  const json::Value& v = obj[key];
  return v.is_null() ? std::string() : v.as_string();
}

// A list of values read by `read`; missing means empty.
template <typename Read>
auto list_field(const json::Value& obj, const char* key, Read read) {
  std::vector<decltype(read(json::Value()))> out;
  const json::Value& v = obj[key];
  if (v.is_null()) return out;
  for (const json::Value& item : v.as_array()) out.push_back(read(item));
  return out;
}

int to_int(const json::Value& v) { return static_cast<int>(v.as_int()); }
bool to_bool(const json::Value& v) { return v.as_bool(); }

Train train_from_json(const json::Value& v) {
  Train t;
  t.train = static_cast<int>(int_field(v, "train"));
  t.owner = static_cast<int>(int_field(v, "owner", -1));
  t.tiles = list_field(v, "tiles", tile_from_json);
  t.end = static_cast<int>(int_field(v, "end"));
  t.is_public = bool_field(v, "public");
  t.open_double = bool_field(v, "open_double");
  t.parent = static_cast<int>(int_field(v, "parent", -1));
  return t;
}

View view_from_json(const json::Value& v) {
  View view;
  view.round = static_cast<int>(int_field(v, "round"));
  view.engine = static_cast<int>(int_field(v, "engine"));
  view.hand = list_field(v, "hand", tile_from_json);
  if (!v["drawn"].is_null()) view.drawn = tile_from_json(v["drawn"]);
  view.trains = list_field(v, "trains", train_from_json);
  view.markers = list_field(v, "markers", to_bool);
  view.hand_counts = list_field(v, "hand_counts", to_int);
  view.scores = list_field(v, "scores", to_int);
  view.boneyard = static_cast<int>(int_field(v, "boneyard"));
  view.open_doubles = list_field(v, "open_doubles", to_int);
  view.binding = list_field(v, "binding", to_int);
  view.step = string_field(v, "step");
  view.next = static_cast<int>(int_field(v, "next"));
  return view;
}

void start_game(Game& game, const json::Value& msg) {
  game.seat = static_cast<int>(int_field(msg, "seat"));
  game.players = static_cast<int>(int_field(msg, "players"));
  game.rounds = static_cast<int>(int_field(msg, "rounds"));
  game.seed = static_cast<std::uint32_t>(int_field(msg, "seed"));
  game.names = list_field(msg, "names", [](const json::Value& n) { return n.as_string(); });
  game.rules = msg["rules"];
  game.rng.seed(game.seed);
  game.events.clear();
}

// The length of the valid UTF-8 sequence (RFC 3629: no overlong form, no
// surrogate, nothing past U+10FFFF) that starts at s[i], or 0 when none does.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  auto at = [&s](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  auto tail = [&at](std::size_t k) { return at(k) >= 0x80 && at(k) <= 0xBF; };
  const unsigned c = at(i);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return tail(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return at(i + 1) >= lo && at(i + 1) <= hi && tail(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return at(i + 1) >= lo && at(i + 1) <= hi && tail(i + 2) && tail(i + 3) ? 4 : 0;
  }
  return 0;
}

bool valid_info_key(const std::string& key) {
  if (key.empty() || key.size() > kInfoKeyMax) return false;
  for (char c : key) {
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

// The info as sent (an empty object for none): each key valid and each value
// a finite number within kInfoAbsMax; any other entry is dropped with a line
// on stderr, and so is each good entry past the first kInfoKeysMax.
json::Value clean_info(const Info& info) {
  json::Value clean{json::Object{}};
  for (const auto& [key, value] : info) {
    if (!valid_info_key(key)) {
      log("info key " + json::dump(json::Value(clean_note(key.substr(0, 40)))) +
          " dropped: a key is 1 to 32 of A-Z a-z 0-9 _ . -");
    } else if (!std::isfinite(value) || std::fabs(value) > kInfoAbsMax) {
      log("info " + key + " dropped: " + std::to_string(value) + " is not a number from -1e15 to 1e15");
    } else if (clean.find(key) == nullptr && clean.size() >= kInfoKeysMax) {
      log("info " + key + " dropped: at most " + std::to_string(kInfoKeysMax) + " numbers");
    } else {
      clean.set(key, value);  // a repeated key: its last value
    }
  }
  return clean;
}

}  // namespace

std::string clean_note(const std::string& note) {
  std::string out;
  std::size_t count = 0;
  for (std::size_t i = 0; i < note.size() && count < kNoteMax; ++count) {
    const std::size_t length = utf8_length(note, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not UTF-8
      ++i;
    } else {
      out.append(note, i, length);
      i += length;
    }
  }
  return out;
}

Tile tile_from_json(const json::Value& v) {
  if (v.size() != 2) throw json::Error("a tile is an array of two numbers");
  return Tile{static_cast<int>(v[0].as_int()), static_cast<int>(v[1].as_int())};
}

Move move_from_json(const json::Value& v) {
  Move m;
  m.action = string_field(v, "action");
  if (!v["tile"].is_null()) m.tile = tile_from_json(v["tile"]);
  m.train = static_cast<int>(int_field(v, "train", -1));
  m.announce = bool_field(v, "announce");
  return m;
}

Turn turn_from_json(const json::Value& v) {
  Turn turn;
  turn.id = int_field(v, "id");
  turn.seat = static_cast<int>(int_field(v, "seat"));
  turn.view = view_from_json(v["view"]);
  turn.legal = list_field(v, "legal", move_from_json);
  turn.move_ms = int_field(v["clock"], "move_ms");
  turn.bank_ms = int_field(v["clock"], "bank_ms");
  return turn;
}

Bot::Bot(Strategy strategy, std::string name) : strategy_(strategy), name_(std::move(name)) {}

std::vector<std::string> Bot::handle(const std::string& line) {
  json::Value msg;
  try {
    msg = json::parse(line);
  } catch (const json::Error& e) {
    log(std::string("ignored a line that is not JSON: ") + e.what());
    return {};
  }
  if (!msg.is_object() || !msg["type"].is_string()) {
    log("ignored a line that is not a message");
    return {};
  }
  const std::string& type = msg["type"].as_string();
  try {
    if (type == "hello") {
      if (int_field(msg, "protocol", 1) != 1) log("the referee speaks another protocol version; this bot speaks 1");
      return {json::dump(json::Value::object(
          {{"type", "ready"}, {"name", name_}, {"version", "1.0"}, {"protocol", 1}}))};
    }
    if (type == "turn") return {on_turn(msg)};
    if (type == "ping") {
      return {json::dump(json::Value::object({{"type", "pong"}, {"nonce", msg["nonce"].as_int()}}))};
    }
    if (type == "game_start") {
      start_game(game_, msg);
    } else if (type == "round_start") {
      game_.events.clear();
      game_.events.push_back(msg);
    } else if (type == "played" || type == "drew" || type == "passed" || type == "marker" ||
               type == "round_end") {
      game_.events.push_back(msg);
    } else if (type == "error") {
      log("the referee says " + string_field(msg, "code") + ": " + string_field(msg, "message"));
    } else if (type == "bye") {
      finished_ = true;
    }
    // game_end and message types added later need no answer.
  } catch (const std::exception& e) {
    log("could not read a " + type + " message (" + e.what() + "); ignored");
  }
  return {};
}

std::string Bot::on_turn(const json::Value& msg) {
  // The id must be echoed whatever else happens; it is the one field a reply
  // cannot do without.
  std::int64_t id = msg["id"].as_int();
  std::size_t count = msg["legal"].size();
  int index = 0;  // legal[0] is always legal: the fallback
  game_.note.clear();  // what choose() says goes with this move only
  game_.info.clear();
  try {
    Turn turn = turn_from_json(msg);
    index = strategy_(turn, game_);
  } catch (const std::exception& e) {
    log(std::string("choose failed (") + e.what() + "); playing legal move 0");
  }
  if (index < 0 || static_cast<std::size_t>(index) >= count) {
    log("choose returned index " + std::to_string(index) + " of " + std::to_string(count) +
        " legal moves; playing legal move 0");
    index = 0;
  }
  json::Value reply = json::Value::object({{"type", "move"}, {"id", id}, {"index", index}});
  std::string note = clean_note(game_.note);
  if (!note.empty()) reply.set("note", std::move(note));
  json::Value info = clean_info(game_.info);
  if (info.size() > 0) reply.set("info", std::move(info));
  return json::dump(reply);
}

int run(Bot& bot, std::istream& in, std::ostream& out) {
  std::string line;
  while (!bot.finished() && std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (const std::string& reply : bot.handle(line)) {
      out << reply << '\n' << std::flush;  // a reply in a buffer has not been sent
    }
  }
  return 0;  // after bye or at end of input
}

}  // namespace kit
