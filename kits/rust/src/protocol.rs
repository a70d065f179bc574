//! The bot protocol (spec/PROTOCOL.md, version 1) as Rust types, and a
//! [`Bot`] that turns the referee's lines into the bot's replies.
//!
//! You should not need to change this file: write your strategy in
//! `strategy.rs`. The `Bot` answers `hello`, `ping` and `bye` itself, reads
//! each turn request into a [`Turn`] and asks the strategy for an index into
//! `turn.legal`, and ignores every message type and field it does not know.

use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tile: in hands and in `legal` high end first (`Tile(6, 4)`); on a train
/// as it lies (`.0` touches the tile before it, `.1` faces away).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Tile(pub i32, pub i32);

impl Tile {
    /// The tile's pip count.
    pub fn pips(self) -> i32 {
        self.0 + self.1
    }

    pub fn is_double(self) -> bool {
        self.0 == self.1
    }

    /// True when one of its ends shows `pip`.
    pub fn has(self, pip: i32) -> bool {
        self.0 == pip || self.1 == pip
    }
}

/// What a move does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Play,
    Draw,
    Pass,
    End,
    /// An action added by a later version of the protocol.
    #[serde(other)]
    Other,
}

/// One entry of a turn's `legal` list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Move {
    pub action: Action,
    /// With `Play`: the tile.
    #[serde(default)]
    pub tile: Option<Tile>,
    /// With `Play`: the train it goes on.
    #[serde(default)]
    pub train: Option<usize>,
    /// With `Play`: it announces the last-but-one tile.
    #[serde(default)]
    pub announce: bool,
}

/// One train of the table (`view.trains` is indexed by train number).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Train {
    /// Its number: seat `s` owns train `s`, then the Mexican train, then branches.
    pub train: usize,
    /// The side it belongs to; -1 for the Mexican train.
    pub owner: i32,
    /// From the hub outwards, each as it lies.
    pub tiles: Vec<Tile>,
    /// The number a new tile must match.
    pub end: i32,
    /// Anyone may play on it.
    pub public: bool,
    /// Its last tile is a double not yet played on.
    pub open_double: bool,
    /// For a branch, the train it grew from; -1 otherwise.
    pub parent: i32,
}

/// Everything the seat may know when it must decide (the turn's `view`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct View {
    pub round: i32,
    pub engine: i32,
    /// This seat's tiles, sorted, high end first.
    pub hand: Vec<Tile>,
    /// The tile just drawn, when only it may be played.
    pub drawn: Option<Tile>,
    pub trains: Vec<Train>,
    /// By seat: marker up.
    pub markers: Vec<bool>,
    /// By seat: tiles in hand.
    pub hand_counts: Vec<i32>,
    /// By seat: totals of the finished rounds.
    pub scores: Vec<i32>,
    /// Tiles left to draw.
    pub boneyard: i32,
    /// Trains with a live open double.
    pub open_doubles: Vec<usize>,
    /// Trains whose open double binds this seat now.
    pub binding: Vec<usize>,
    /// "start", "follow", "continue", "swan" or "build".
    pub step: String,
    /// The seat after this turn.
    pub next: usize,
}

/// The clocks of one decision, in ms.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct Clock {
    pub move_ms: i64,
    pub bank_ms: i64,
}

/// A turn request: this bot must decide now.
#[derive(Debug, Clone, Deserialize)]
pub struct Turn {
    /// 1 to 2^53 - 1: echoed in the reply.
    pub id: u64,
    /// This bot's seat.
    pub seat: usize,
    #[serde(default)]
    pub view: View,
    /// Every legal move; never empty.
    pub legal: Vec<Move>,
    #[serde(default)]
    pub clock: Clock,
}

/// The `game_start` message.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct GameStart {
    pub game: String,
    pub seat: usize,
    pub players: usize,
    pub names: Vec<String>,
    /// Every rules option (spec/RULES.md), as sent.
    pub rules: Value,
    /// The bot's own seed, 0 to 2^32 - 1.
    pub seed: u32,
    pub rounds: i32,
}

/// A small random number generator (SplitMix64): seeded with the game's bot
/// seed, a bot replays identically.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number from 0 to `n` - 1 (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// What the bot knows about the game in progress.
#[derive(Debug, Clone)]
pub struct Game {
    pub start: GameStart,
    pub rng: Rng,
    /// This round's messages so far, `round_start` first, then every event
    /// (`played`, `drew`, `passed`, `marker`), the bot's own moves included.
    pub events: Vec<Value>,
}

impl Game {
    pub fn new(start: GameStart) -> Self {
        let rng = Rng::new(u64::from(start.seed));
        Game {
            start,
            rng,
            events: Vec::new(),
        }
    }
}

/// A strategy: the index in `turn.legal` of the move to play.
pub type Strategy = fn(&Turn, &mut Game) -> usize;

/// The messages the bot sends, written with `type` first.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Reply<'a> {
    Ready {
        name: &'a str,
        version: &'a str,
        protocol: u32,
    },
    Move {
        id: u64,
        index: usize,
    },
    Pong {
        nonce: u64,
    },
}

fn log(text: &str) {
    eprintln!("rust-kit: {text}");
}

/// The protocol state machine, without any process or stream: feed it each
/// line the referee sent, write out the lines it returns.
pub struct Bot {
    strategy: Strategy,
    name: String,
    game: Game,
    finished: bool,
}

impl Bot {
    pub fn new(strategy: Strategy, name: &str) -> Self {
        Bot {
            strategy,
            name: name.to_string(),
            game: Game::new(GameStart::default()),
            finished: false,
        }
    }

    /// True once `bye` arrived: the bot should exit with status 0.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The lines to send for one received line (without their newlines):
    /// usually none, one for `hello`, `turn` and `ping`.
    pub fn handle(&mut self, line: &str) -> Vec<String> {
        let msg: Value = match serde_json::from_str(line) {
            Ok(msg) => msg,
            Err(err) => {
                log(&format!("ignored a line that is not JSON: {err}"));
                return Vec::new();
            }
        };
        let kind = match msg.get("type").and_then(Value::as_str) {
            Some(kind) => kind,
            None => {
                log("ignored a line that is not a message");
                return Vec::new();
            }
        };
        let reply = match kind {
            "hello" => {
                if msg.get("protocol").and_then(Value::as_u64) != Some(1) {
                    log("the referee speaks another protocol version; this bot speaks 1");
                }
                Some(Reply::Ready {
                    name: &self.name,
                    version: "1.0",
                    protocol: 1,
                })
            }
            "turn" => self.on_turn(&msg),
            "ping" => match msg.get("nonce").and_then(Value::as_u64) {
                Some(nonce) => Some(Reply::Pong { nonce }),
                None => {
                    log("a ping without a nonce; ignored");
                    None
                }
            },
            "game_start" => {
                match serde_json::from_value::<GameStart>(msg) {
                    Ok(start) => self.game = Game::new(start),
                    Err(err) => log(&format!("could not read game_start ({err}); ignored")),
                }
                None
            }
            "round_start" => {
                self.game.events.clear();
                self.game.events.push(msg);
                None
            }
            "played" | "drew" | "passed" | "marker" | "round_end" => {
                self.game.events.push(msg);
                None
            }
            "error" => {
                log(&format!(
                    "the referee says {}: {}",
                    msg["code"], msg["message"]
                ));
                None
            }
            "bye" => {
                self.finished = true;
                None
            }
            // game_end and message types added later need no answer.
            _ => None,
        };
        reply
            .map(|r| serde_json::to_string(&r).expect("replies always serialize"))
            .into_iter()
            .collect()
    }

    fn on_turn(&mut self, msg: &Value) -> Option<Reply<'static>> {
        // The id must be echoed whatever else happens: it is the one field a
        // reply cannot do without.
        let id = match msg.get("id").and_then(Value::as_u64) {
            Some(id) => id,
            None => {
                log("a turn without an id; it cannot be answered");
                return None;
            }
        };
        let count = msg
            .get("legal")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let index = match serde_json::from_value::<Turn>(msg.clone()) {
            Ok(turn) => {
                let strategy = self.strategy;
                let game = &mut self.game;
                // A panicking strategy costs this decision only (its message
                // goes to stderr), not the game.
                panic::catch_unwind(AssertUnwindSafe(|| strategy(&turn, game))).unwrap_or_else(
                    |_| {
                        log("the strategy panicked; playing legal move 0");
                        0
                    },
                )
            }
            Err(err) => {
                log(&format!(
                    "could not read the turn ({err}); playing legal move 0"
                ));
                0
            }
        };
        let index = if index < count {
            index
        } else {
            log(&format!(
                "the strategy chose index {index} of {count} legal moves; playing legal move 0"
            ));
            0 // legal[0] is always legal
        };
        Some(Reply::Move { id, index })
    }
}

/// Reads lines from `input` and writes the replies to `output`, flushing
/// after each, until `bye` or end of input.
pub fn run(bot: &mut Bot, mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut buf = Vec::new();
    while !bot.finished() {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break; // end of input: exit 0, as after bye
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches('\n').trim_end_matches('\r');
        for reply in bot.handle(line) {
            writeln!(output, "{reply}")?;
            output.flush()?; // a reply in a buffer has not been sent
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: &str = r#"{"type":"hello","protocol":1,"referee":"test","players":2,"rules":{"max_pip":6},"time":{"move_ms":1000},"max_line":1048576}"#;

    fn first_legal(_: &Turn, _: &mut Game) -> usize {
        0
    }

    fn out_of_range(turn: &Turn, _: &mut Game) -> usize {
        turn.legal.len()
    }

    fn panics(_: &Turn, _: &mut Game) -> usize {
        panic!("oops")
    }

    fn turn(id: u64, legal: &str) -> String {
        format!(
            r#"{{"type":"turn","id":{id},"seat":0,"view":{{"round":0,"engine":6,"hand":[[6,2]],"drawn":null,"trains":[],"markers":[false,false],"hand_counts":[1,1],"scores":[0,0],"boneyard":0,"open_doubles":[],"binding":[],"step":"start","next":1}},"legal":{legal},"clock":{{"move_ms":1000,"bank_ms":30000}}}}"#
        )
    }

    #[test]
    fn hello_gets_ready() {
        let mut bot = Bot::new(first_legal, "rust-kit");
        assert_eq!(
            bot.handle(HELLO),
            vec![r#"{"type":"ready","name":"rust-kit","version":"1.0","protocol":1}"#]
        );
    }

    #[test]
    fn ping_gets_pong_with_a_big_nonce_and_unknown_fields() {
        let mut bot = Bot::new(first_legal, "rust-kit");
        assert_eq!(
            bot.handle(r#"{"type":"ping","nonce":9007199254740991}"#),
            vec![r#"{"type":"pong","nonce":9007199254740991}"#]
        );
        // A field before `type`, and fields nobody knows yet.
        assert_eq!(
            bot.handle(r#"{"extra":[1,{"a":null}],"type":"ping","nonce":0,"more":"x"}"#),
            vec![r#"{"type":"pong","nonce":0}"#]
        );
    }

    #[test]
    fn turn_gets_its_id_back() {
        let mut bot = Bot::new(first_legal, "rust-kit");
        let line = turn(
            9007199254740991,
            r#"[{"action":"play","tile":[6,2],"train":1,"why":"later"},{"action":"draw"}]"#,
        );
        assert_eq!(
            bot.handle(&line),
            vec![r#"{"type":"move","id":9007199254740991,"index":0}"#]
        );
        // A turn whose view cannot be read still gets legal move 0.
        assert_eq!(
            bot.handle(
                r#"{"type":"turn","id":12,"seat":0,"view":"??","legal":[{"action":"draw"}]}"#
            ),
            vec![r#"{"type":"move","id":12,"index":0}"#]
        );
    }

    #[test]
    fn a_failing_strategy_still_plays_a_legal_move() {
        for strategy in [out_of_range as Strategy, panics] {
            let mut bot = Bot::new(strategy, "rust-kit");
            let line = turn(7, r#"[{"action":"draw"},{"action":"pass"}]"#);
            assert_eq!(
                bot.handle(&line),
                vec![r#"{"type":"move","id":7,"index":0}"#]
            );
        }
    }

    #[test]
    fn everything_else_gets_no_answer() {
        let mut bot = Bot::new(first_legal, "rust-kit");
        for line in [
            r#"{"type":"from_the_future","id":3}"#,
            r#"{"type":"passed","seat":1}"#,
            r#"{"type":"error","code":"stale","message":"m","request":2}"#,
            r#"{"type":"game_end","scores":[1,2],"ranks":[1,2]}"#,
            "not json",
            "[1,2]",
            "",
            r#"{"no_type":1}"#,
            r#"{"type":7}"#,
        ] {
            assert!(bot.handle(line).is_empty(), "{line}");
        }
        assert!(!bot.finished());
    }

    #[test]
    fn game_start_seeds_the_game() {
        let mut bot = Bot::new(first_legal, "rust-kit");
        bot.handle(r#"{"type":"game_start","game":"g","seat":1,"players":2,"names":["a","b"],"rules":{},"seed":4294967295,"rounds":7,"new":1}"#);
        assert_eq!(bot.game.start.seed, 4_294_967_295);
        assert_eq!(bot.game.start.seat, 1);
        bot.handle(r#"{"type":"round_start","round":0}"#);
        bot.handle(r#"{"type":"passed","seat":0}"#);
        assert_eq!(bot.game.events.len(), 2);
        let mut again = Rng::new(4_294_967_295);
        assert_eq!(bot.game.rng.next_u64(), again.next_u64());
    }

    #[test]
    fn run_stops_at_bye_and_at_end_of_input() {
        let input = format!(
            "{HELLO}\r\n{}\n{}\n{}\n",
            r#"{"type":"ping","nonce":3}"#,
            r#"{"type":"bye","reason":"done"}"#,
            turn(1, r#"[{"action":"draw"}]"#)
        );
        let mut out = Vec::new();
        let mut bot = Bot::new(first_legal, "rust-kit");
        run(&mut bot, input.as_bytes(), &mut out).unwrap();
        assert!(bot.finished());
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 2, "ready and pong only: {text}");
        assert!(text.ends_with("{\"type\":\"pong\",\"nonce\":3}\n"));

        let mut none = Vec::new();
        let mut idle = Bot::new(first_legal, "rust-kit");
        run(&mut idle, &b""[..], &mut none).unwrap();
        assert!(none.is_empty());
    }
}
