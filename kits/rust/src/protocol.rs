//! The bot protocol (spec/PROTOCOL.md, version 1) as Rust types, and a
//! [`Bot`] that turns the referee's lines into the bot's replies.
//!
//! You should not need to change this file: write your strategy in
//! `strategy.rs`. The `Bot` answers `hello`, `ping` and `bye` itself, reads
//! each turn request into a [`Turn`] and asks the strategy for an index into
//! `turn.legal`, and ignores every message type and field it does not know.

use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Characters (Unicode code points) of a move's `note` (spec/PROTOCOL.md, "The
/// reply"): beyond the limits of a note or an info the reply is malformed, so
/// the helper keeps within them.
pub const NOTE_MAX: usize = 280;
/// Numbers in a move's `info`.
pub const INFO_KEYS_MAX: usize = 16;
/// Characters of an `info` key: 1 to 32 of `A-Z a-z 0-9 _ . -`.
pub const INFO_KEY_MAX: usize = 32;
/// The largest size of an `info` number.
pub const INFO_ABS_MAX: f64 = 1e15;

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
    /// What [`Game::say`] set for the move being chosen ("" for no note);
    /// cleared before each turn.
    pub note: String,
    pub info: Vec<(String, f64)>,
}

impl Game {
    pub fn new(start: GameStart) -> Self {
        let rng = Rng::new(u64::from(start.seed));
        Game {
            start,
            rng,
            events: Vec::new(),
            note: String::new(),
            info: Vec::new(),
        }
    }

    /// A note (any text; "" for none) and numbers by name to send with the
    /// move being chosen, and with no other: call it in `choose`, e.g.
    /// `game.say("the double first", &[("estimate", -2.5), ("worlds", 16.0)])`.
    /// A second call replaces the first. The referee keeps them in the game
    /// log and never sends them to another seat. When the move is sent, the
    /// note is cut to [`NOTE_MAX`] characters and an entry the protocol would
    /// refuse is dropped with a line on stderr; of more than [`INFO_KEYS_MAX`]
    /// good entries the first ones, in the order given, are kept (a repeated
    /// name takes its last value).
    pub fn say(&mut self, note: &str, info: &[(&str, f64)]) {
        self.note = note.to_string();
        self.info = info
            .iter()
            .map(|&(key, value)| (key.to_string(), value))
            .collect();
    }
}

/// A move's numbers as sent: a JSON object, its keys in their order, a whole
/// number written without ".0".
#[derive(Debug, Default)]
struct Info(Vec<(String, f64)>);

impl Info {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Info {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            if value.fract() == 0.0 {
                map.serialize_entry(key, &(*value as i64))?; // within ±1e15: exact
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

/// The note as sent: none for "", else at most [`NOTE_MAX`] code points (a
/// Rust string is UTF-8, and is cut between characters only).
fn clean_note(note: &str) -> Option<String> {
    if note.is_empty() {
        None
    } else {
        Some(note.chars().take(NOTE_MAX).collect())
    }
}

fn valid_info_key(key: &str) -> bool {
    (1..=INFO_KEY_MAX).contains(&key.len())
        && key
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-')
}

/// The info as sent: each key valid and each value a finite number within
/// [`INFO_ABS_MAX`]; any other entry is dropped with a line on stderr, and so
/// is each good entry past the first [`INFO_KEYS_MAX`].
fn clean_info(info: &[(String, f64)]) -> Info {
    let mut clean: Vec<(String, f64)> = Vec::new();
    for (key, value) in info {
        if !valid_info_key(key) {
            let shown: String = key.chars().take(40).collect();
            log(&format!(
                "info key {shown:?} dropped: a key is 1 to {INFO_KEY_MAX} of A-Z a-z 0-9 _ . -"
            ));
        } else if !value.is_finite() || value.abs() > INFO_ABS_MAX {
            log(&format!(
                "info {key} dropped: {value} is not a number from -1e15 to 1e15"
            ));
        } else if let Some(slot) = clean.iter_mut().find(|(k, _)| k == key) {
            slot.1 = *value; // a repeated name: its last value
        } else if clean.len() >= INFO_KEYS_MAX {
            log(&format!(
                "info {key} dropped: at most {INFO_KEYS_MAX} numbers"
            ));
        } else {
            clean.push((key.clone(), *value));
        }
    }
    Info(clean)
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
        /// Left out when nothing was said: the line is then as it always was.
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        #[serde(skip_serializing_if = "Info::is_empty")]
        info: Info,
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
        // What the strategy says goes with this move only.
        self.game.note.clear();
        self.game.info.clear();
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
        Some(Reply::Move {
            id,
            index,
            note: clean_note(&self.game.note),
            info: clean_info(&self.game.info),
        })
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

    /// Says a note and numbers on turn 7 only.
    fn says_on_7(turn: &Turn, game: &mut Game) -> usize {
        if turn.id == 7 {
            game.say("heaviest tile ☕", &[("estimate", -2.5), ("worlds", 16.0)]);
        }
        0
    }

    #[test]
    fn say_puts_a_note_and_info_on_this_move_only() {
        let mut bot = Bot::new(says_on_7, "rust-kit");
        let legal = r#"[{"action":"play","tile":[6,2],"train":1},{"action":"draw"}]"#;
        assert_eq!(
            bot.handle(&turn(7, legal)),
            vec![
                r#"{"type":"move","id":7,"index":0,"note":"heaviest tile ☕","info":{"estimate":-2.5,"worlds":16}}"#
            ]
        );
        // The next turn says nothing: the line is the very one of a bot without say.
        assert_eq!(
            bot.handle(&turn(8, legal)),
            vec![r#"{"type":"move","id":8,"index":0}"#]
        );
    }

    /// Says a long note: by turn id, 279 letters and an emoji, 300 "é", nothing.
    fn long_note(turn: &Turn, game: &mut Game) -> usize {
        let note = match turn.id {
            1 => format!("{}😀bc", "a".repeat(279)),
            2 => "é".repeat(300),
            _ => String::new(),
        };
        game.say(&note, &[]);
        0
    }

    #[test]
    fn say_cuts_a_long_note_to_280_code_points() {
        let mut bot = Bot::new(long_note, "rust-kit");
        let note_of = |bot: &mut Bot, id: u64| -> Value {
            let out = bot.handle(&turn(id, r#"[{"action":"draw"}]"#));
            assert_eq!(out.len(), 1);
            let move_: Value = serde_json::from_str(&out[0]).unwrap();
            assert!(move_.get("info").is_none(), "{}", out[0]);
            move_.get("note").cloned().unwrap_or(Value::Null)
        };
        // The emoji (four bytes) is the 280th character: kept whole.
        let cut = note_of(&mut bot, 1);
        assert_eq!(cut, format!("{}😀", "a".repeat(279)).as_str());
        assert_eq!(cut.as_str().unwrap().chars().count(), NOTE_MAX);
        assert_eq!(note_of(&mut bot, 2), "é".repeat(280).as_str()); // characters, not bytes
        assert_eq!(
            bot.handle(&turn(3, r#"[{"action":"draw"}]"#)),
            vec![r#"{"type":"move","id":3,"index":0}"#]
        );
    }

    /// Says numbers the protocol refuses, among good ones; on turn 2, 20 good
    /// ones and a repeated name; on turn 3, only a bad one.
    fn bad_info(turn: &Turn, game: &mut Game) -> usize {
        let long_key = "k".repeat(33);
        let many: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
        match turn.id {
            1 => game.say(
                "",
                &[
                    ("ok", 2.0),
                    ("bad key", 1.0),
                    ("", 3.0),
                    (&long_key, 4.0),
                    ("é", 5.0),
                    ("nan", f64::NAN),
                    ("inf", f64::NEG_INFINITY),
                    ("big", 1e15 + 2.0),
                    ("max", -1e15),
                    ("a.b-c_9", 0.5),
                ],
            ),
            2 => {
                let mut info: Vec<(&str, f64)> = many
                    .iter()
                    .enumerate()
                    .map(|(i, k)| (k.as_str(), i as f64))
                    .collect();
                info.push(("n0", 100.0));
                game.say("", &info);
            }
            _ => game.say("", &[("no good", 1.0)]),
        }
        0
    }

    #[test]
    fn say_drops_an_info_the_protocol_refuses() {
        let mut bot = Bot::new(bad_info, "rust-kit");
        assert_eq!(
            bot.handle(&turn(1, r#"[{"action":"draw"}]"#)),
            vec![
                r#"{"type":"move","id":1,"index":0,"info":{"ok":2,"max":-1000000000000000,"a.b-c_9":0.5}}"#
            ]
        );
        // Of 20 good numbers the first 16, in the order given; a repeated
        // name takes its last value.
        let out = bot.handle(&turn(2, r#"[{"action":"draw"}]"#));
        let move_: Value = serde_json::from_str(&out[0]).unwrap();
        let info = move_["info"].as_object().unwrap();
        assert_eq!(info.len(), INFO_KEYS_MAX);
        assert_eq!(info["n0"], 100);
        assert_eq!(info["n15"], 15);
        assert!(info.get("n16").is_none());
        assert_eq!(
            bot.handle(&turn(3, r#"[{"action":"draw"}]"#)),
            vec![r#"{"type":"move","id":3,"index":0}"#]
        );
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
