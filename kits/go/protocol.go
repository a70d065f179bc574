// The protocol helper: everything between the referee's lines and Choose.
//
// The bot contract is spec/PROTOCOL.md (protocol version 1): one JSON object
// per line on stdin, one per line on stdout, logs on stderr. This file answers
// hello with ready, ping with pong, and every turn with a move chosen by
// Choose (strategy.go); it keeps the game's messages in a Game for Choose to
// read, stops at bye, and ignores every message type and field it does not
// know. You should not need to change it: write your strategy in strategy.go.
//
// Session.Handle works on one line at a time and returns the reply lines, so
// the whole bot can be driven in memory (see protocol_test.go); Run connects a
// Session to real streams.

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"sort"
	"strings"
	"unicode/utf8"
)

// ProtocolVersion is the protocol this bot speaks (hello.protocol, ready.protocol).
const ProtocolVersion = 1

// The limits of a move's note and info (spec/PROTOCOL.md, "The reply"):
// beyond them the reply is malformed, so the helper keeps within them.
const (
	NoteMax     = 280  // characters (Unicode code points) of a note
	InfoKeysMax = 16   // numbers in an info
	InfoKeyMax  = 32   // characters of an info key: A-Z a-z 0-9 _ . -
	InfoAbsMax  = 1e15 // the largest size of an info number
)

// Tile is a domino: its two pip counts. In hands and in legal moves the high
// end comes first ([6,4]); on a train a tile is written as it lies.
type Tile [2]int

// Pips is the tile's value: the sum of its two ends.
func (t Tile) Pips() int { return t[0] + t[1] }

// IsDouble says whether both ends are the same number.
func (t Tile) IsDouble() bool { return t[0] == t[1] }

// Has says whether either end of the tile shows pip p.
func (t Tile) Has(p int) bool { return t[0] == p || t[1] == p }

// Rules are the rules options of a game (spec/RULES.md, "Options").
type Rules struct {
	MaxPip                   int    `json:"max_pip"`
	Players                  int    `json:"players"`
	HandSize                 int    `json:"hand_size"`
	HandTable                string `json:"hand_table"`
	Rounds                   string `json:"rounds"`
	EngineSource             string `json:"engine_source"`
	FirstPlayer              string `json:"first_player"`
	FirstTurn                string `json:"first_turn"`
	FirstTurnsComplete       bool   `json:"first_turns_complete"`
	FirstTrainUntilStuck     bool   `json:"first_train_until_stuck"`
	FirstTrainDraws          bool   `json:"first_train_draws"`
	MexicanTrain             bool   `json:"mexican_train"`
	MexicanStartRestricted   bool   `json:"mexican_start_restricted"`
	MustPlay                 bool   `json:"must_play"`
	DrawUntilPlayable        bool   `json:"draw_until_playable"`
	DoublesBind              bool   `json:"doubles_bind"`
	SatisfyOrder             string `json:"satisfy_order"`
	FollowUp                 string `json:"follow_up"`
	OwnDoubleFollowUp        string `json:"own_double_follow_up"`
	BindDuration             string `json:"bind_duration"`
	AnyPlayClearsMarker      bool   `json:"any_play_clears_marker"`
	UnfinishedOwnDoubleMarks bool   `json:"unfinished_own_double_marks"`
	DoubleBlankScore         int    `json:"double_blank_score"`
	Teams                    bool   `json:"teams"`
	BranchingDoubles         bool   `json:"branching_doubles"`
	SwanDrive                bool   `json:"swan_drive"`
	AnnounceOneTile          bool   `json:"announce_one_tile"`
	AnnouncePenalty          int    `json:"announce_penalty"`
}

// TimeControl is the clocks of a game, in milliseconds.
type TimeControl struct {
	StartupMs   int64 `json:"startup_ms"`
	MoveMs      int64 `json:"move_ms"`
	BankMs      int64 `json:"bank_ms"`
	IncrementMs int64 `json:"increment_ms"`
	GraceMs     int64 `json:"grace_ms"`
}

// GameStart is the game_start message.
type GameStart struct {
	Game    string      `json:"game"`
	Seat    int         `json:"seat"` // this bot's seat in this game
	Players int         `json:"players"`
	Names   []string    `json:"names"`
	Rules   Rules       `json:"rules"`
	Time    TimeControl `json:"time"`
	Seed    int64       `json:"seed"` // the bot's own seed, 0 to 2^32-1
	Rounds  int         `json:"rounds"`
}

// RoundStart is the round_start message: the engine and this bot's hand.
type RoundStart struct {
	Round       int    `json:"round"`
	Engine      int    `json:"engine"`
	Hand        []Tile `json:"hand"`
	Holder      *int   `json:"holder"` // nil when the engine came from the centre
	Starter     int    `json:"starter"`
	HandCounts  []int  `json:"hand_counts"`
	Boneyard    int    `json:"boneyard"`
	EngineDraws []int  `json:"engine_draws"`
}

// Event is one of the events every seat sees: played, drew, passed, marker.
// Type says which; only that type's fields are set.
type Event struct {
	Type        string `json:"type"`
	Seat        int    `json:"seat"`
	Tile        *Tile  `json:"tile"`         // played; drew (nil unless this bot drew it)
	Train       int    `json:"train"`        // played
	End         int    `json:"end"`          // played: the train's new open end
	OpensDouble bool   `json:"opens_double"` // played
	Branches    []int  `json:"branches"`     // played
	Announce    bool   `json:"announce"`     // played
	Reason      string `json:"reason"`       // drew: "turn" or "penalty"
	Up          bool   `json:"up"`           // marker
}

// Train is one train on the table, as a turn request shows it.
type Train struct {
	Train      int    `json:"train"`
	Owner      int    `json:"owner"` // the side it belongs to, -1 for the Mexican train
	Tiles      []Tile `json:"tiles"` // from the hub outwards, each as it lies
	End        int    `json:"end"`   // the number a new tile must match
	Public     bool   `json:"public"`
	OpenDouble bool   `json:"open_double"`
	Parent     int    `json:"parent"` // for a branch, the train it grew from; else -1
}

// View is everything this seat may know when it must decide.
type View struct {
	Round       int     `json:"round"`
	Engine      int     `json:"engine"`
	Hand        []Tile  `json:"hand"`
	Drawn       *Tile   `json:"drawn"` // the tile just drawn, when only it may be played
	Trains      []Train `json:"trains"`
	Markers     []bool  `json:"markers"`
	HandCounts  []int   `json:"hand_counts"`
	Scores      []int   `json:"scores"`
	Boneyard    int     `json:"boneyard"`
	OpenDoubles []int   `json:"open_doubles"`
	Binding     []int   `json:"binding"`
	Step        string  `json:"step"` // start, follow, continue, swan or build
	Next        int     `json:"next"`
}

// Move is one entry of a turn's legal list: "play" (with Tile and Train),
// "draw", "pass" or "end".
type Move struct {
	Action   string `json:"action"`
	Tile     Tile   `json:"tile"`
	Train    int    `json:"train"`
	Announce bool   `json:"announce"`
}

// Clock is the time left for one decision, in milliseconds.
type Clock struct {
	MoveMs int64 `json:"move_ms"`
	BankMs int64 `json:"bank_ms"`
}

// Turn is a turn request: this bot must answer with an index into Legal.
type Turn struct {
	ID    int64  `json:"id"` // 1 to 2^53-1: echoed in the reply
	Seat  int    `json:"seat"`
	View  View   `json:"view"`
	Legal []Move `json:"legal"` // never empty; Legal[0] is always legal
	Clock Clock  `json:"clock"`
}

// Game is what the helper remembers of the game in progress, for Choose.
type Game struct {
	Start  GameStart  // the game_start message: seat, players, names, rules, seed
	Round  RoundStart // the current round's round_start: engine and hand as dealt
	Events []Event    // this round's events so far, oldest first, this bot's own included
	Rand   *rand.Rand // seeded with Start.Seed: a game replays identically

	// What Say set for the move being chosen; cleared before each turn.
	Note string
	Info map[string]float64
}

// Say attaches a note (any text; "" for none) and numbers by name (nil for
// none) to the move being chosen, and to no other: call it in Choose, e.g.
//
//	game.Say("the double first", map[string]float64{"estimate": -2.5, "worlds": 16})
//
// A second call replaces the first. The referee keeps them in the game log and
// never sends them to another seat. When the move is sent, the note is cut to
// NoteMax characters and an info entry the protocol would refuse is dropped
// with a line on the log (see cleanNote and cleanInfo).
func (g *Game) Say(note string, info map[string]float64) {
	g.Note = note
	g.Info = nil
	if len(info) > 0 {
		g.Info = make(map[string]float64, len(info))
		for key, value := range info {
			g.Info[key] = value
		}
	}
}

// cleanNote is the note as sent: at most NoteMax code points, never a UTF-8
// sequence cut in half, each byte that is not UTF-8 replaced by U+FFFD.
func cleanNote(note string) string {
	if utf8.ValidString(note) && utf8.RuneCountInString(note) <= NoteMax {
		return note
	}
	var clean strings.Builder
	count := 0
	for _, r := range note { // a byte that is not UTF-8 comes as utf8.RuneError (U+FFFD)
		if count == NoteMax {
			break
		}
		clean.WriteRune(r)
		count++
	}
	return clean.String()
}

// validInfoKey says whether key is 1 to InfoKeyMax of A-Z a-z 0-9 _ . -
func validInfoKey(key string) bool {
	if len(key) == 0 || len(key) > InfoKeyMax {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// cleanInfo is the info as sent (nil for none): each key valid and each value
// a finite number within InfoAbsMax; any other entry is dropped with a line
// on the log. A map has no order, so the keys are taken in sorted order, and
// past InfoKeysMax good entries the rest are dropped.
func (s *Session) cleanInfo(info map[string]float64) map[string]float64 {
	if len(info) == 0 {
		return nil
	}
	keys := make([]string, 0, len(info))
	for key := range info {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	clean := make(map[string]float64)
	for _, key := range keys {
		value := info[key]
		switch {
		case !validInfoKey(key):
			s.logf("info key %.40q dropped: a key is 1 to %d of A-Z a-z 0-9 _ . -", key, InfoKeyMax)
		case math.IsNaN(value) || math.Abs(value) > InfoAbsMax:
			s.logf("info %s dropped: %v is not a number from -1e15 to 1e15", key, value)
		case len(clean) == InfoKeysMax:
			s.logf("info %s dropped: at most %d numbers", key, InfoKeysMax)
		default:
			clean[key] = value
		}
	}
	if len(clean) == 0 {
		return nil
	}
	return clean
}

// Session is one connection's protocol state. Feed it the referee's lines
// with Handle; send back the lines it returns.
type Session struct {
	log    io.Writer
	choose func(*Turn, *Game) int // Choose, unless a test swaps it
	game   Game
	done   bool
}

// NewSession makes a session that plays with Choose and logs to log.
func NewSession(log io.Writer) *Session {
	return &Session{log: log, choose: Choose, game: newGame(GameStart{})}
}

func newGame(start GameStart) Game {
	return Game{Start: start, Rand: rand.New(rand.NewSource(start.Seed))}
}

// Done says whether the referee said bye: nothing more will come.
func (s *Session) Done() bool { return s.done }

func (s *Session) logf(format string, args ...interface{}) {
	fmt.Fprintf(s.log, BotName+": "+format+"\n", args...)
}

// Handle takes one line from the referee (its newline optional) and returns
// the lines to send back, each without its newline: none for most messages,
// one for hello, turn and ping. A line it cannot read is logged and ignored.
func (s *Session) Handle(line string) []string {
	line = strings.TrimRight(line, "\r\n")
	if strings.TrimSpace(line) == "" {
		return nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(line), &head); err != nil {
		s.logf("not a JSON object, ignored: %.80s", line)
		return nil
	}
	reply, err := s.dispatch(head.Type, []byte(line))
	if err != nil {
		s.logf("cannot read %s (%v), ignored: %.80s", head.Type, err, line)
		return nil
	}
	if reply == nil {
		return nil
	}
	data, err := json.Marshal(reply)
	if err != nil {
		s.logf("cannot write reply to %s: %v", head.Type, err)
		return nil
	}
	return []string{string(data)}
}

// The replies this bot sends.
type ready struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Author   string `json:"author"`
	Protocol int    `json:"protocol"`
}

type moveReply struct {
	Type  string             `json:"type"`
	ID    int64              `json:"id"`
	Index int                `json:"index"`
	Note  string             `json:"note,omitempty"` // left out when nothing was said
	Info  map[string]float64 `json:"info,omitempty"`
}

type pong struct {
	Type  string `json:"type"`
	Nonce int64  `json:"nonce"`
}

// dispatch decodes one message by its type and returns the reply, or nil.
func (s *Session) dispatch(kind string, data []byte) (interface{}, error) {
	switch kind {
	case "hello":
		var hello struct {
			Protocol int `json:"protocol"`
		}
		if err := json.Unmarshal(data, &hello); err != nil {
			return nil, err
		}
		if hello.Protocol != ProtocolVersion {
			s.logf("referee speaks protocol %d; this bot speaks %d", hello.Protocol, ProtocolVersion)
		}
		return ready{"ready", BotName, BotVersion, BotAuthor, ProtocolVersion}, nil
	case "game_start":
		var start GameStart
		if err := json.Unmarshal(data, &start); err != nil {
			return nil, err
		}
		s.game = newGame(start)
	case "round_start":
		var round RoundStart
		if err := json.Unmarshal(data, &round); err != nil {
			return nil, err
		}
		s.game.Round = round
		s.game.Events = nil
	case "played", "drew", "passed", "marker":
		var event Event
		if err := json.Unmarshal(data, &event); err != nil {
			return nil, err
		}
		s.game.Events = append(s.game.Events, event)
	case "turn":
		var turn Turn
		if err := json.Unmarshal(data, &turn); err != nil {
			return nil, err
		}
		s.game.Note, s.game.Info = "", nil // what Choose says goes with this move only
		index := s.decide(&turn)
		return moveReply{"move", turn.ID, index, cleanNote(s.game.Note), s.cleanInfo(s.game.Info)}, nil
	case "ping":
		var ping struct {
			Nonce int64 `json:"nonce"`
		}
		if err := json.Unmarshal(data, &ping); err != nil {
			return nil, err
		}
		return pong{"pong", ping.Nonce}, nil
	case "error":
		var e struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, err
		}
		s.logf("referee says %s: %s", e.Code, e.Message)
	case "game_end":
		var end struct {
			Scores []int `json:"scores"`
			Ranks  []int `json:"ranks"`
		}
		if err := json.Unmarshal(data, &end); err != nil {
			return nil, err
		}
		s.logf("game over: scores %v, ranks %v", end.Scores, end.Ranks)
	case "bye":
		s.done = true
	}
	// round_end, and any message type added later: nothing to do.
	return nil, nil
}

// decide asks the strategy for a move. A strategy that panics or returns an
// index out of range is logged, and legal move 0 (always legal) is played
// instead, so a bug costs a poor move rather than a forfeit.
func (s *Session) decide(turn *Turn) (index int) {
	defer func() {
		if r := recover(); r != nil {
			s.logf("Choose panicked on request %d (%v); playing legal move 0", turn.ID, r)
			index = 0
		}
	}()
	index = s.choose(turn, &s.game)
	if index < 0 || index >= len(turn.Legal) {
		s.logf("Choose returned %d for %d legal moves; playing legal move 0", index, len(turn.Legal))
		return 0
	}
	return index
}

// Run plays one connection: it reads lines from in until bye or end of
// input, and writes each reply to out as one line. It returns nil then, or
// the error that stopped it writing.
func Run(in io.Reader, out io.Writer, log io.Writer) error {
	session := NewSession(log)
	reader := bufio.NewReader(in) // no line length limit
	for !session.Done() {
		line, readErr := reader.ReadString('\n')
		for _, reply := range session.Handle(line) {
			if _, err := io.WriteString(out, reply+"\n"); err != nil {
				return err
			}
			// A reply still in a buffer has not been sent.
			if flusher, ok := out.(interface{ Flush() error }); ok {
				if err := flusher.Flush(); err != nil {
					return err
				}
			}
		}
		if errors.Is(readErr, io.EOF) {
			return nil
		}
		if readErr != nil {
			return readErr
		}
	}
	return nil
}
