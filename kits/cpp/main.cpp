// main.cpp: the bot process. It speaks the protocol on stdin and stdout until
// `bye` or end of input; the work is done by kit::Bot (protocol.cpp) and
// kit::choose (strategy.cpp).
#include <iostream>

#include "protocol.hpp"

int main() {
  std::ios::sync_with_stdio(false);  // faster I/O; every reply is still flushed
  kit::Bot bot(kit::choose, "cpp-kit");  // the bot's name, sent in `ready`
  return kit::run(bot, std::cin, std::cout);
}
