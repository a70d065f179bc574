// strategy_tests.cpp: tests of the sample strategy in strategy.cpp. Change
// them (or delete them) with it.
#include <string>

#include "check.hpp"
#include "json.hpp"
#include "protocol.hpp"

namespace {

// The index choose() picks among `legal` (a JSON list), with hand 6-6, 6-2,
// 5-4, seat 0, trains 0 and 1 owned by seats 0 and 1, train 2 the Mexican train.
int choose_for(const std::string& legal) {
  const std::string line =
      R"({"type":"turn","id":1,"seat":0,"view":{"engine":6,"hand":[[6,6],[6,2],[5,4]],"trains":[)"
      R"({"train":0,"owner":0,"tiles":[],"end":6},{"train":1,"owner":1,"tiles":[[6,4]],"end":4},)"
      R"({"train":2,"owner":-1,"tiles":[],"end":6}],"step":"start"},"legal":)" +
      legal + "}";
  kit::Game game;
  return kit::choose(kit::turn_from_json(json::parse(line)), game);
}

void test_heaviest_tile() {
  CHECK(choose_for(R"([{"action":"play","tile":[6,2],"train":0},{"action":"play","tile":[5,4],"train":1}])") == 1);
}

void test_own_train_when_equal() {
  CHECK(choose_for(R"([{"action":"play","tile":[5,4],"train":1},{"action":"play","tile":[5,4],"train":0}])") == 1);
}

void test_double_it_can_follow() {
  // 6-2 follows 6-6: the double beats 7-5 ...
  CHECK(choose_for(R"([{"action":"play","tile":[7,5],"train":1},{"action":"play","tile":[6,6],"train":2}])") == 1);
  // ... but not a heavier tile.
  CHECK(choose_for(R"([{"action":"play","tile":[6,6],"train":2},{"action":"play","tile":[7,6],"train":1}])") == 1);
}

void test_never_draws_while_it_can_play() {
  CHECK(choose_for(R"([{"action":"play","tile":[1,0],"train":2},{"action":"draw"}])") == 0);
}

void test_without_a_play() {
  // End, else draw, else pass.
  CHECK(choose_for(R"([{"action":"draw"},{"action":"pass"},{"action":"end"}])") == 2);
  CHECK(choose_for(R"([{"action":"pass"},{"action":"draw"}])") == 1);
  CHECK(choose_for(R"([{"action":"pass"}])") == 0);
}

void test_announces() {
  // Announced first, then the same play unannounced.
  CHECK(choose_for(R"([{"action":"play","tile":[5,4],"train":1,"announce":true},)"
                   R"({"action":"play","tile":[5,4],"train":1}])") == 0);
}

}  // namespace

int main() {
  test_heaviest_tile();
  test_own_train_when_equal();
  test_double_it_can_follow();
  test_never_draws_while_it_can_play();
  test_without_a_play();
  test_announces();
  return check_summary();
}
