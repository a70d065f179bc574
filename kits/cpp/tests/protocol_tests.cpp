// protocol_tests.cpp: tests of json.hpp and of the protocol helper, run by
// `ctest`.
//
//   protocol_tests [FIXTURES_DIR]     (default: fixtures)
//
// It tests the JSON reader and writer, the Bot on hand-made lines, and then
// feeds every line of every FIXTURES_DIR/*.jsonl (lines the referee sent to a
// seat in a real game) to a fresh Bot with the real strategy, in memory,
// checking each reply. It fails when there are no fixtures.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "json.hpp"
#include "protocol.hpp"

namespace {

// ---------------------------------------------------------------- JSON

void test_json_scalars() {
  CHECK(json::parse("true").as_bool());
  CHECK(!json::parse("false").as_bool());
  CHECK(json::parse(" null ").is_null());
  CHECK(json::parse("0").as_int() == 0);
  CHECK(json::parse("-12").as_int() == -12);
  CHECK(json::parse("3.5").as_double() == 3.5);
  CHECK(json::parse("1e3").is_number() && !json::parse("1e3").is_int());
  CHECK(json::parse("-2.5E-1").as_double() == -0.25);
  CHECK(json::dump(json::parse("[true,false,null,-7,0.5]")) == "[true,false,null,-7,0.5]");
  CHECK_THROWS(json::parse("\"x\"").as_int());  // wrong type asked for
}

void test_json_escapes() {
  CHECK(json::parse(R"("a\"b\\c\/d")").as_string() == "a\"b\\c/d");
  CHECK(json::parse(R"("\b\f\n\r\t")").as_string() == "\b\f\n\r\t");
  CHECK(json::parse(R"("\u0041\u00e9\u20AC")").as_string() == "A\xC3\xA9\xE2\x82\xAC");  // A, é, €
  CHECK(json::parse(R"("\ud83d\ude00")").as_string() == "\xF0\x9F\x98\x80");              // a surrogate pair
  CHECK(json::parse(R"("\ud83dx")").as_string() == "\xEF\xBF\xBDx");                     // a lone one: U+FFFD
  CHECK(json::parse(R"("\ude00\u0041")").as_string() == "\xEF\xBF\xBD" "A");
  CHECK(json::parse("\"caf\xC3\xA9\"").as_string() == "caf\xC3\xA9");  // raw UTF-8 passes through
  CHECK(json::parse(R"("\u0000")").as_string() == std::string(1, '\0'));

  // The writer escapes what JSON requires, and reads back what it wrote.
  std::string nasty = std::string("q\"b\\n\nt\tc") + '\x01' + "\xC3\xA9" + std::string(1, '\0');
  std::string written = json::dump(json::Value(nasty));
  CHECK(written == std::string("\"q\\\"b\\\\n\\nt\\tc\\u0001\xC3\xA9\\u0000\""));
  CHECK(json::parse(written).as_string() == nasty);
}

void test_json_nesting() {
  const std::string text = R"({"a":[1,{"b":[[],{}]}],"c":{"d":null,"e":"x"}})";
  json::Value v = json::parse(text);
  CHECK(v["a"][0].as_int() == 1);
  CHECK(v["a"][1]["b"].size() == 2);
  CHECK(v["a"][1]["b"][0].is_array() && v["a"][1]["b"][0].size() == 0);
  CHECK(v["a"][1]["b"][1].is_object());
  CHECK(v["c"]["d"].is_null() && v["c"].find("d") != nullptr);
  CHECK(v["c"]["e"].as_string() == "x");
  CHECK(json::dump(v) == text);  // compact, keys in their order
  CHECK(json::dump(json::parse(" { \"k\" : [ 1 , 2 ] } ")) == R"({"k":[1,2]})");

  std::string deep(200, '[');
  deep += std::string(200, ']');
  CHECK(json::parse(deep).is_array());
  std::string too_deep(5000, '[');
  too_deep += std::string(5000, ']');
  CHECK_THROWS(json::parse(too_deep));  // refused, not a stack overflow

  json::Value built = json::Value::object({{"type", "move"}, {"id", 3}, {"tile", json::Value::array({6, 4})}});
  built.set("index", 1);
  built.set("id", 4);
  CHECK(json::dump(built) == R"({"type":"move","id":4,"tile":[6,4],"index":1})");
}

void test_json_big_integers() {
  const std::int64_t max_safe = 9007199254740991;  // 2^53 - 1: the largest id and nonce
  CHECK(json::parse("9007199254740991").as_int() == max_safe);
  CHECK(json::parse("9007199254740993").as_int() == max_safe + 2);  // beyond a double's precision
  CHECK(json::parse("4294967295").as_int() == 4294967295LL);        // the largest bot seed
  CHECK(json::parse("9223372036854775807").as_int() == INT64_MAX);
  CHECK(json::parse("-9223372036854775808").as_int() == INT64_MIN);
  CHECK(!json::parse("9223372036854775808").is_int());  // past int64: a double
  CHECK(!json::parse("-9223372036854775809").is_int());
  CHECK(json::parse("9223372036854775808").as_double() == 9223372036854775808.0);
  CHECK(json::dump(json::Value(max_safe)) == "9007199254740991");
  CHECK(json::dump(json::Value(INT64_MIN)) == "-9223372036854775808");
}

void test_json_errors() {
  for (const char* bad : {"", " ", "{", "}", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":1,}", "{a:1}", "01", "-",
                          "1.", ".5", "1e", "+1", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"",
                          "\"a\nb\"", "{} x", "[] []", "'a'"}) {
    CHECK_THROWS(json::parse(bad));
  }
}

void test_json_unknown_fields() {
  json::Value v = json::parse(R"({"future":{"x":[1,{"y":2}]},"type":"ping","nonce":5,"later":true})");
  CHECK(v["type"].as_string() == "ping");
  CHECK(v["nonce"].as_int() == 5);
  CHECK(v.find("missing") == nullptr);
  CHECK(v["missing"].is_null());
  CHECK(v["missing"]["deeper"].is_null());

  // A move with fields from a later version reads as the move it is.
  kit::Move m = kit::move_from_json(
      json::parse(R"({"why":{"a":[]},"action":"play","tile":[6,4],"train":2,"score":1.5})"));
  CHECK(m.is_play() && m.tile.a == 6 && m.tile.b == 4 && m.train == 2 && !m.announce);
}

// ---------------------------------------------------------------- protocol

const char* kHello =
    R"({"type":"hello","protocol":1,"referee":"test","players":2,"rules":{"max_pip":6},"time":{"move_ms":1000},"max_line":1048576})";

// A turn request: hand [[6,6],[6,2],[5,4]], engine 6, two seats, the Mexican train.
std::string turn_line(std::int64_t id, const std::string& legal) {
  return R"({"type":"turn","id":)" + std::to_string(id) +
         R"(,"seat":0,"view":{"round":0,"engine":6,"hand":[[6,6],[6,2],[5,4]],"drawn":null,"trains":[)"
         R"({"train":0,"owner":0,"tiles":[],"end":6,"public":false,"open_double":false,"parent":-1},)"
         R"({"train":1,"owner":1,"tiles":[[6,4]],"end":4,"public":true,"open_double":false,"parent":-1},)"
         R"({"train":2,"owner":-1,"tiles":[],"end":6,"public":true,"open_double":false,"parent":-1}],)"
         R"("markers":[false,true],"hand_counts":[3,4],"scores":[0,0],"boneyard":10,"open_doubles":[],)"
         R"("binding":[],"step":"start","next":1},"legal":)" +
         legal + R"(,"clock":{"move_ms":1000,"bank_ms":30000}})";
}

void test_hello_ping_unknown() {
  kit::Bot bot;
  std::vector<std::string> out = bot.handle(kHello);
  CHECK(out.size() == 1);
  if (out.size() == 1) {
    json::Value ready = json::parse(out[0]);
    CHECK(ready["type"].as_string() == "ready");
    CHECK(ready["name"].as_string() == "cpp-kit");
    CHECK(ready["protocol"].as_int() == 1);
  }
  out = bot.handle(R"({"type":"ping","nonce":9007199254740991})");
  CHECK(out.size() == 1 && out[0] == R"({"type":"pong","nonce":9007199254740991})");
  // A field before `type`, and fields nobody knows yet.
  out = bot.handle(R"({"extra":[1,2],"type":"ping","nonce":0,"more":{"a":null}})");
  CHECK(out.size() == 1 && out[0] == R"({"type":"pong","nonce":0})");
  // Message types from the future, events, errors and bad lines: no answer.
  for (const char* line : {R"({"type":"from_the_future","id":3})", R"({"type":"passed","seat":1})",
                           R"({"type":"error","code":"stale","message":"m","request":2})",
                           R"({"type":"game_end","scores":[1,2],"ranks":[1,2]})", "not json", "[1,2]", "",
                           R"({"no_type":1})", R"({"type":7})"}) {
    CHECK_MSG(bot.handle(line).empty(), line);
  }
  CHECK(!bot.finished());
}

void test_turn_reply() {
  kit::Bot bot;
  bot.handle(kHello);
  const std::int64_t big = 9007199254740991;
  std::vector<std::string> out = bot.handle(
      turn_line(big, R"([{"action":"play","tile":[5,4],"train":1},{"action":"play","tile":[6,2],"train":2}])"));
  CHECK(out.size() == 1);
  if (out.size() == 1) {
    json::Value move = json::parse(out[0]);
    CHECK(move["type"].as_string() == "move");
    CHECK(move["id"].as_int() == big);
    CHECK(move["index"].as_int() == 0);  // 5-4: nine pips beat eight
  }
  // A turn whose view cannot be read still gets legal move 0, with its id.
  out = bot.handle(R"({"type":"turn","id":12,"seat":0,"view":"??","legal":[{"action":"draw"}]})");
  CHECK(out.size() == 1 && out[0] == R"({"type":"move","id":12,"index":0})");
}

// A strategy that misbehaves: the helper must still answer legally.
int out_of_range(const kit::Turn& turn, kit::Game&) { return static_cast<int>(turn.legal.size()); }
int throws(const kit::Turn&, kit::Game&) { throw std::runtime_error("oops"); }

void test_bad_strategy() {
  for (kit::Bot::Strategy s : {out_of_range, throws}) {
    kit::Bot bot(s);
    std::vector<std::string> out = bot.handle(turn_line(7, R"([{"action":"draw"},{"action":"pass"}])"));
    CHECK(out.size() == 1 && out[0] == R"({"type":"move","id":7,"index":0})");
  }
}

void test_bye_and_end_of_input() {
  kit::Bot bot;
  CHECK(bot.handle(R"({"type":"bye","reason":"done"})").empty());
  CHECK(bot.finished());

  // run() stops at bye: the turn after it is not answered.
  std::istringstream in(std::string(kHello) + "\r\n" + R"({"type":"ping","nonce":3})" + "\n" +
                        R"({"type":"bye","reason":"done"})" + "\n" +
                        turn_line(1, R"([{"action":"draw"}])") + "\n");
  std::ostringstream out;
  kit::Bot runner;
  CHECK(kit::run(runner, in, out) == 0);
  std::string text = out.str();
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);  // ready and pong
  CHECK(text.find(R"({"type":"pong","nonce":3})") != std::string::npos);

  // End of input without bye: exit 0 too.
  std::istringstream empty("");
  std::ostringstream none;
  kit::Bot idle;
  CHECK(kit::run(idle, empty, none) == 0);
  CHECK(none.str().empty());
}

// ---------------------------------------------------------------- say

// What the `says` strategy says (with game.say), and on which turn.
std::string g_note;
kit::Info g_info;
std::int64_t g_say_on = -1;  // the turn id it speaks on; -1: every turn

int says(const kit::Turn& turn, kit::Game& game) {
  if (g_say_on < 0 || turn.id == g_say_on) game.say(g_note, g_info);
  return kit::choose(turn, game);
}

const char* kTwoPlays = R"([{"action":"play","tile":[5,4],"train":1},{"action":"play","tile":[6,2],"train":2}])";

void test_say_note_and_info_on_this_move_only() {
  g_note = "heaviest tile \xE2\x98\x95";  // a hot beverage, U+2615
  g_info = {{"estimate", -2.5}, {"worlds", 16}};
  g_say_on = 7;
  kit::Bot bot(says);
  std::vector<std::string> out = bot.handle(turn_line(7, kTwoPlays));
  CHECK(out.size() == 1 &&
        out[0] == R"({"type":"move","id":7,"index":0,"note":"heaviest tile )" "\xE2\x98\x95"
                  R"(","info":{"estimate":-2.5,"worlds":16}})");
  // The next turn says nothing: the line is the very one of a bot without say.
  out = bot.handle(turn_line(8, kTwoPlays));
  CHECK(out.size() == 1 && out[0] == R"({"type":"move","id":8,"index":0})");
}

// The number of code points of valid UTF-8 text.
std::size_t code_points(const std::string& text) {
  std::size_t count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

void test_say_cuts_a_long_note() {
  const std::string emoji = "\xF0\x9F\x98\x80";  // U+1F600: four bytes, one character
  g_note = std::string(279, 'a') + emoji + "bc";
  g_info.clear();
  g_say_on = -1;
  kit::Bot bot(says);
  std::vector<std::string> out = bot.handle(turn_line(7, R"([{"action":"draw"}])"));
  CHECK(out.size() == 1);
  if (out.size() == 1) {
    json::Value move = json::parse(out[0]);
    CHECK(move["note"].as_string() == std::string(279, 'a') + emoji);  // the emoji kept whole
    CHECK(code_points(move["note"].as_string()) == kit::kNoteMax);
    CHECK(move.find("info") == nullptr);
  }
  // Characters, not bytes: 280 of a two-byte character.
  std::string e_acute;
  for (int i = 0; i < 300; ++i) e_acute += "\xC3\xA9";
  CHECK(kit::clean_note(e_acute) == e_acute.substr(0, 560));
  // What is not UTF-8 (a stray byte, an overlong form, a surrogate, a cut
  // sequence) becomes U+FFFD, one for each byte, and counts as a character.
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(kit::clean_note("x\xFFy") == "x" + fffd + "y");
  CHECK(kit::clean_note("\xC0\xAF") == fffd + fffd);
  CHECK(kit::clean_note("\xED\xA0\x80") == fffd + fffd + fffd);
  CHECK(kit::clean_note("ab\xF0\x9F") == "ab" + fffd + fffd);
  CHECK(kit::clean_note(std::string(279, 'a') + "\xF0\x9F\x98") == std::string(279, 'a') + fffd);
  // No note: the move as before.
  g_note.clear();
  out = bot.handle(turn_line(7, R"([{"action":"draw"}])"));
  CHECK(out.size() == 1 && out[0] == R"({"type":"move","id":7,"index":0})");
}

void test_say_drops_a_bad_info() {
  g_note.clear();
  g_info = {{"ok", 2},      {"bad key", 1}, {"", 3}, {std::string(33, 'k'), 4}, {"\xC3\xA9", 5},
            {"nan", NAN},   {"inf", -INFINITY},     {"big", 1e15 + 2},         {"max", -1e15},
            {"a.b-c_9", 0.5}};
  g_say_on = -1;
  kit::Bot bot(says);
  std::ostringstream logged;
  std::streambuf* stderr_buffer = std::cerr.rdbuf(logged.rdbuf());
  std::vector<std::string> out = bot.handle(turn_line(7, R"([{"action":"draw"}])"));
  std::cerr.rdbuf(stderr_buffer);
  CHECK(out.size() == 1 &&
        out[0] == R"({"type":"move","id":7,"index":0,"info":{"ok":2,"max":-1000000000000000,"a.b-c_9":0.5}})");
  const std::string log = logged.str();
  CHECK_MSG(std::count(log.begin(), log.end(), '\n') == 7, log);
  CHECK_MSG(log.find("\"bad key\"") != std::string::npos, log);

  // Of 20 good numbers the first 16, in the order given; a repeated key takes its last value.
  g_info.clear();
  for (int i = 0; i < 20; ++i) g_info.emplace_back("n" + std::to_string(i), i);
  g_info.emplace_back("n0", 100);
  stderr_buffer = std::cerr.rdbuf(logged.rdbuf());
  out = bot.handle(turn_line(7, R"([{"action":"draw"}])"));
  std::cerr.rdbuf(stderr_buffer);
  CHECK(out.size() == 1);
  if (out.size() == 1) {
    const json::Value move = json::parse(out[0]);
    const json::Value& info = move["info"];
    CHECK(info.size() == kit::kInfoKeysMax);
    CHECK(info["n0"].as_double() == 100 && info["n15"].as_double() == 15 && info.find("n16") == nullptr);
  }
  // Nothing good: no info at all.
  g_info = {{"no good", 1}};
  stderr_buffer = std::cerr.rdbuf(logged.rdbuf());
  out = bot.handle(turn_line(7, R"([{"action":"draw"}])"));
  std::cerr.rdbuf(stderr_buffer);
  CHECK(out.size() == 1 && out[0] == R"({"type":"move","id":7,"index":0})");
}

// ---------------------------------------------------------------- fixtures

// True when `move` (a reply) names an entry of `legal`: by index, or spelled out.
bool names_legal_move(const json::Value& move, const json::Value& legal) {
  if (move.find("index") != nullptr) {
    const json::Value& index = move["index"];
    return index.is_int() && index.as_int() >= 0 && static_cast<std::size_t>(index.as_int()) < legal.size();
  }
  kit::Move spelled = kit::move_from_json(move);
  for (const json::Value& entry : legal.as_array()) {
    kit::Move m = kit::move_from_json(entry);
    bool same_tile = (m.tile == spelled.tile) || (m.tile == kit::Tile{spelled.tile.b, spelled.tile.a});
    if (m.action == spelled.action && (!m.is_play() || (same_tile && m.train == spelled.train)) &&
        m.announce == spelled.announce) {
      return true;
    }
  }
  return false;
}

// Feeds one fixture to a fresh Bot, line by line; returns the turns answered.
int check_fixture(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  const std::string name = file.filename().string();
  CHECK_MSG(!lines.empty(), name);
  CHECK_MSG(!lines.empty() && json::parse(lines[0])["type"].as_string() == "hello", name + " starts with hello");

  kit::Bot bot;
  int turns = 0;
  bool bye = false;  // a recorded session may end with bye; the fixtures end before it
  for (std::size_t n = 0; n < lines.size() && !bye; ++n) {
    const std::string where = name + ":" + std::to_string(n + 1);
    json::Value msg = json::parse(lines[n]);
    const std::string type = msg["type"].is_string() ? msg["type"].as_string() : "";
    std::vector<std::string> out;
    try {
      out = bot.handle(lines[n]);
    } catch (const std::exception& e) {
      CHECK_MSG(false, where + ": handle threw " + e.what());
      continue;
    }
    if (type == "hello") {
      CHECK_MSG(out.size() == 1 && json::parse(out[0])["type"].as_string() == "ready", where);
    } else if (type == "turn") {
      ++turns;
      CHECK_MSG(out.size() == 1, where + ": one move per turn");
      if (out.size() != 1) continue;
      json::Value move = json::parse(out[0]);
      CHECK_MSG(move["type"].as_string() == "move", where);
      CHECK_MSG(move["id"].is_int() && move["id"].as_int() == msg["id"].as_int(), where + ": the turn's id");
      CHECK_MSG(names_legal_move(move, msg["legal"]), where + ": " + out[0] + " is legal");
    } else {
      CHECK_MSG(out.empty(), where + ": nothing written for " + type);
      bye = type == "bye";
    }
  }
  CHECK_MSG(bot.finished() == bye, name + ": finished after bye only");

  // The whole file through run(): it ends at end of input, exit status 0,
  // with one line for hello and one for each turn.
  std::ifstream again(file);
  std::ostringstream out;
  kit::Bot runner;
  CHECK_MSG(kit::run(runner, again, out) == 0, name);
  std::string text = out.str();
  CHECK_MSG(std::count(text.begin(), text.end(), '\n') == 1 + turns, name + ": lines written by run()");

  // And bye after it: no answer, finished.
  if (!bye) CHECK_MSG(bot.handle(R"({"type":"bye","reason":"done"})").empty() && bot.finished(), name);
  return turns;
}

void test_fixtures(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  // Never pass on zero fixtures: a missing or empty folder is a failure.
  CHECK_MSG(!files.empty(), "no fixtures/*.jsonl in " + dir.string() + " (`make examples` writes them)");
  int turns = 0;
  for (const auto& file : files) turns += check_fixture(file);
  CHECK_MSG(turns > 0, "the fixtures hold turn requests");
  std::cout << files.size() << " fixtures, " << turns << " turn requests answered\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path fixtures = argc > 1 ? argv[1] : "fixtures";
  test_json_scalars();
  test_json_escapes();
  test_json_nesting();
  test_json_big_integers();
  test_json_errors();
  test_json_unknown_fields();
  test_hello_ping_unknown();
  test_turn_reply();
  test_bad_strategy();
  test_bye_and_end_of_input();
  test_say_note_and_info_on_this_move_only();
  test_say_cuts_a_long_note();
  test_say_drops_a_bad_info();
  try {
    test_fixtures(fixtures);
  } catch (const std::exception& e) {
    CHECK_MSG(false, std::string("reading the fixtures: ") + e.what());
  }
  return check_summary();
}
