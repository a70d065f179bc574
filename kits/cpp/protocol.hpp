// protocol.hpp: the bot protocol (spec/PROTOCOL.md, version 1) as C++ types
// and a Bot that turns the referee's lines into the bot's replies.
//
// You should not need to change this file: write your strategy in
// strategy.cpp. The Bot answers hello, ping and bye itself, reads each turn
// request into a Turn and asks choose() (strategy.cpp) for an index into
// turn.legal, and ignores every message type and field it does not know.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "json.hpp"

namespace kit {

// A tile: in hands and in `legal` high end first ({6, 4}); on a train as it
// lies (`a` touches the tile before it, `b` faces away).
struct Tile {
  int a = 0;
  int b = 0;

  int pips() const { return a + b; }
  bool is_double() const { return a == b; }
  bool has(int pip) const { return a == pip || b == pip; }
  bool operator==(const Tile& other) const { return a == other.a && b == other.b; }
};

// One entry of a turn's `legal` list.
struct Move {
  std::string action;     // "play", "draw", "pass" or "end"
  Tile tile;              // with "play": the tile
  int train = -1;         // with "play": the train it goes on
  bool announce = false;  // with "play": it announces the last-but-one tile

  bool is_play() const { return action == "play"; }
};

// One train of the table (view.trains is indexed by train number).
struct Train {
  int train = 0;             // its number: seat s owns train s, then the Mexican train, then branches
  int owner = -1;            // the side it belongs to; -1 for the Mexican train
  std::vector<Tile> tiles;   // from the hub outwards, each as it lies
  int end = 0;               // the number a new tile must match
  bool is_public = false;    // anyone may play on it (JSON `public`)
  bool open_double = false;  // its last tile is a double not yet played on
  int parent = -1;           // for a branch, the train it grew from
};

// Everything the seat may know when it must decide (the turn's `view`).
struct View {
  int round = 0;
  int engine = 0;
  std::vector<Tile> hand;              // sorted, high end first
  std::optional<Tile> drawn;           // the tile just drawn, when only it may be played
  std::vector<Train> trains;
  std::vector<bool> markers;           // by seat: marker up
  std::vector<int> hand_counts;        // by seat
  std::vector<int> scores;             // by seat: totals of the finished rounds
  int boneyard = 0;                    // tiles left to draw
  std::vector<int> open_doubles;       // trains with a live open double
  std::vector<int> binding;            // trains whose open double binds this seat now
  std::string step;                    // "start", "follow", "continue", "swan" or "build"
  int next = 0;                        // the seat after this turn
};

// A turn request: this bot must decide now.
struct Turn {
  std::int64_t id = 0;  // up to 2^53 - 1: echoed in the reply
  int seat = 0;         // this bot's seat
  View view;
  std::vector<Move> legal;  // never empty
  std::int64_t move_ms = 0;  // this decision's own time
  std::int64_t bank_ms = 0;  // what is left in the game's bank
};

// The limits of a move's `note` and `info` (spec/PROTOCOL.md, "The reply"):
// beyond them the reply is malformed, so the helper keeps within them.
constexpr std::size_t kNoteMax = 280;     // characters (Unicode code points) of a note
constexpr std::size_t kInfoKeysMax = 16;  // numbers in an info
constexpr std::size_t kInfoKeyMax = 32;   // characters of an info key: A-Z a-z 0-9 _ . -
constexpr double kInfoAbsMax = 1e15;      // the largest size of an info number

// Numbers by name, in order: {{"estimate", -2.5}, {"worlds", 16}}.
using Info = std::vector<std::pair<std::string, double>>;

// What the bot knows about the game in progress.
struct Game {
  int seat = 0;
  int players = 0;
  int rounds = 0;
  std::uint32_t seed = 0;          // the bot's own seed, 0 to 2^32 - 1
  std::vector<std::string> names;  // by seat
  json::Value rules;               // game_start.rules, every rules option
  std::mt19937_64 rng;             // seeded with `seed`: a seeded bot replays identically
  // This round's messages so far, round_start first, then every event
  // (played, drew, passed, marker), the bot's own moves included.
  std::vector<json::Value> events;

  // What say() set for the move being chosen; cleared before each turn.
  std::string note;
  Info info;

  // A note (any UTF-8 text; "" for none) and numbers by name to send with the
  // move being chosen, and with no other: call it in choose(), e.g.
  //   game.say("the double first", {{"estimate", -2.5}, {"worlds", 16}});
  // A second call replaces the first. The referee keeps them in the game log
  // and never sends them to another seat. When the move is sent, the note is
  // cut to kNoteMax characters (clean_note) and an info entry the protocol
  // would refuse is dropped with a line on stderr; of more than kInfoKeysMax
  // good entries the first ones, in the order given, are kept (a repeated key
  // takes its last value).
  void say(std::string text, Info numbers = {}) {
    note = std::move(text);
    info = std::move(numbers);
  }
};

// The note as sent: at most kNoteMax code points, never a UTF-8 sequence cut
// in half, and each byte that is not part of valid UTF-8 replaced by U+FFFD
// (the referee refuses a line that is not UTF-8).
std::string clean_note(const std::string& note);

// The strategy (strategy.cpp): returns an index into turn.legal.
int choose(const Turn& turn, Game& game);

// Reading protocol values; each throws json::Error when a field is missing or
// of the wrong type, and skips fields it does not know.
Tile tile_from_json(const json::Value& v);
Move move_from_json(const json::Value& v);
Turn turn_from_json(const json::Value& v);

// The protocol state machine, without any process or stream: feed it each
// line the referee sent, write out the lines it returns.
class Bot {
 public:
  using Strategy = int (*)(const Turn&, Game&);

  explicit Bot(Strategy strategy = choose, std::string name = "cpp-kit");

  // The lines to send for one received line (without their newlines):
  // usually none, one for hello, turn and ping.
  std::vector<std::string> handle(const std::string& line);

  // True once `bye` arrived: the bot should exit with status 0.
  bool finished() const { return finished_; }

 private:
  std::string on_turn(const json::Value& msg);

  Strategy strategy_;
  std::string name_;
  Game game_;
  bool finished_ = false;
};

// Reads lines from `in` and writes the replies to `out`, flushing after each,
// until `bye` or end of input. Returns the process exit status (0).
int run(Bot& bot, std::istream& in, std::ostream& out);

}  // namespace kit
