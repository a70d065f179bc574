// Tests of the protocol helper with the strategy, in memory (no process):
// `go test ./...`. The fixtures are real requests recorded by the referee
// (spec/kit_fixtures.py writes them; `make examples` refreshes them).

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// decode reads one JSON object keeping numbers exact (ids go up to 2^53-1).
func decode(t *testing.T, line string) map[string]interface{} {
	t.Helper()
	decoder := json.NewDecoder(strings.NewReader(line))
	decoder.UseNumber()
	var message map[string]interface{}
	if err := decoder.Decode(&message); err != nil {
		t.Fatalf("not a JSON object: %q (%v)", line, err)
	}
	return message
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

// checkReplies checks what the session answered to one referee line.
func checkReplies(t *testing.T, line string, replies []string) {
	t.Helper()
	message := decode(t, line)
	switch message["type"] {
	case "hello":
		if len(replies) != 1 {
			t.Fatalf("hello: want 1 reply, got %q", replies)
		}
		reply := decode(t, replies[0])
		if reply["type"] != "ready" || reply["name"] != BotName {
			t.Fatalf("hello: want ready named %q, got %s", BotName, replies[0])
		}
	case "turn":
		if len(replies) != 1 {
			t.Fatalf("turn %v: want 1 reply, got %q", message["id"], replies)
		}
		reply := decode(t, replies[0])
		if reply["type"] != "move" || reply["id"] != message["id"] {
			t.Fatalf("turn %v: want a move with its id, got %s", message["id"], replies[0])
		}
		index, err := reply["index"].(json.Number).Int64()
		legal := message["legal"].([]interface{})
		if err != nil || index < 0 || index >= int64(len(legal)) {
			t.Fatalf("turn %v: index %v is not one of its %d legal moves", message["id"], reply["index"], len(legal))
		}
	default:
		if len(replies) != 0 {
			t.Fatalf("%v: want no reply, got %q", message["type"], replies)
		}
	}
}

func TestFixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("fixtures", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no fixtures/*.jsonl: run `make examples` at the repository root")
	}
	for _, path := range paths {
		path := path
		t.Run(filepath.Base(path), func(t *testing.T) {
			lines := readLines(t, path)
			session := NewSession(io.Discard)
			turns := 0
			for _, line := range lines {
				checkReplies(t, line, session.Handle(line))
				if decode(t, line)["type"] == "turn" {
					turns++
				}
			}
			if turns == 0 && !strings.HasPrefix(filepath.Base(path), "game_end") {
				t.Fatalf("%s holds no turn request", path)
			}
			// The same lines through Run end cleanly at end of input, with
			// one line written for hello and one for each turn, and no more.
			var out bytes.Buffer
			if err := Run(strings.NewReader(strings.Join(lines, "\n")+"\n"), &out, io.Discard); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := strings.Count(out.String(), "\n"); got != turns+1 {
				t.Fatalf("Run wrote %d lines, want %d", got, turns+1)
			}
		})
	}
}

func TestPingPongKeepsLargeNonce(t *testing.T) {
	replies := NewSession(io.Discard).Handle(`{"type":"ping","nonce":9007199254740991}`)
	if len(replies) != 1 || replies[0] != `{"type":"pong","nonce":9007199254740991}` {
		t.Fatalf("got %q", replies)
	}
}

func TestTurnEchoesLargeID(t *testing.T) {
	turn := `{"type":"turn","id":9007199254740991,"seat":1,"view":{"hand":[[4,2]],"drawn":null},` +
		`"legal":[{"action":"draw"}],"clock":{"move_ms":1000,"bank_ms":30000}}`
	replies := NewSession(io.Discard).Handle(turn)
	if len(replies) != 1 || replies[0] != `{"type":"move","id":9007199254740991,"index":0}` {
		t.Fatalf("got %q", replies)
	}
}

func TestIgnoresWhatItDoesNotKnow(t *testing.T) {
	session := NewSession(io.Discard)
	for _, line := range []string{
		`{"type":"from_the_future","x":[1,{"y":null}]}`,
		`{"extra":true,"type":"round_end","round":0,"new_field":"ignored"}`,
		`not json`,
		`[1,2]`,
		``,
		"\r",
	} {
		if replies := session.Handle(line); len(replies) != 0 {
			t.Fatalf("%q: want no reply, got %q", line, replies)
		}
	}
	replies := session.Handle(`{"future":1,"type":"hello","protocol":1,"rules":{"new_rule":3}}` + "\r\n")
	if len(replies) != 1 || decode(t, replies[0])["type"] != "ready" {
		t.Fatalf("hello with unknown fields: got %q", replies)
	}
}

func TestRunStopsAtBye(t *testing.T) {
	input := `{"type":"hello","protocol":1}` + "\n" + `{"type":"bye","reason":"done"}` + "\n" +
		`{"type":"ping","nonce":5}` + "\n"
	var out bytes.Buffer
	if err := Run(strings.NewReader(input), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 1 {
		t.Fatalf("want only ready before bye, got %q", out.String())
	}
}

func TestBrokenStrategyPlaysLegalMoveZero(t *testing.T) {
	turn := `{"type":"turn","id":7,"seat":0,"view":{},"legal":[{"action":"draw"}]}`
	for name, choose := range map[string]func(*Turn, *Game) int{
		"panic":        func(*Turn, *Game) int { panic("bug") },
		"out of range": func(*Turn, *Game) int { return 3 },
	} {
		session := NewSession(io.Discard)
		session.choose = choose
		replies := session.Handle(turn)
		if len(replies) != 1 || replies[0] != `{"type":"move","id":7,"index":0}` {
			t.Fatalf("%s: got %q", name, replies)
		}
	}
}

func TestGameKeepsStartAndEvents(t *testing.T) {
	session := NewSession(io.Discard)
	var seen *Game
	session.choose = func(_ *Turn, game *Game) int { seen = game; return 0 }
	for _, line := range []string{
		`{"type":"game_start","seat":2,"players":3,"seed":4294967295,"rules":{"max_pip":9},"rounds":10}`,
		`{"type":"round_start","round":0,"engine":9,"hand":[[5,1]],"holder":null}`,
		`{"type":"played","seat":0,"tile":[9,4],"train":0,"end":4}`,
		`{"type":"drew","seat":1,"tile":null,"reason":"turn"}`,
		`{"type":"turn","id":1,"seat":2,"view":{},"legal":[{"action":"draw"}]}`,
	} {
		session.Handle(line)
	}
	if seen == nil || seen.Start.Seat != 2 || seen.Start.Seed != 4294967295 || seen.Start.Rules.MaxPip != 9 {
		t.Fatalf("game_start not kept: %+v", seen)
	}
	if seen.Round.Engine != 9 || seen.Round.Holder != nil || len(seen.Events) != 2 ||
		*seen.Events[0].Tile != (Tile{9, 4}) || seen.Events[1].Tile != nil {
		t.Fatalf("round not kept: %+v", seen)
	}
}

// sayTurn is a turn request with one play (6-1) and a draw.
const sayTurn = `{"type":"turn","id":%d,"seat":0,"view":{"hand":[[6,1]]},` +
	`"legal":[{"action":"play","tile":[6,1],"train":3},{"action":"draw"}]}`

func TestSayPutsANoteAndInfoOnThisMoveOnly(t *testing.T) {
	session := NewSession(io.Discard)
	session.choose = func(turn *Turn, game *Game) int {
		if turn.ID == 7 {
			game.Say("heaviest tile ☕", map[string]float64{"worlds": 16, "estimate": -2.5})
		}
		return Choose(turn, game)
	}
	got := session.Handle(fmt.Sprintf(sayTurn, 7))
	want := `{"type":"move","id":7,"index":0,"note":"heaviest tile ☕","info":{"estimate":-2.5,"worlds":16}}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// The next turn says nothing: the line is the very one of a bot without Say.
	got = session.Handle(fmt.Sprintf(sayTurn, 8))
	if len(got) != 1 || got[0] != `{"type":"move","id":8,"index":0}` {
		t.Fatalf("a move that says nothing: got %q", got)
	}
}

func TestSayCutsALongNoteTo280CodePoints(t *testing.T) {
	var note string
	session := NewSession(io.Discard)
	session.choose = func(_ *Turn, game *Game) int { game.Say(note, nil); return 0 }
	sent := func() string {
		t.Helper()
		replies := session.Handle(fmt.Sprintf(sayTurn, 7))
		if len(replies) != 1 {
			t.Fatalf("want one reply, got %q", replies)
		}
		var move struct {
			Note *string         `json:"note"`
			Info json.RawMessage `json:"info"`
		}
		if err := json.Unmarshal([]byte(replies[0]), &move); err != nil || move.Info != nil {
			t.Fatalf("%q: %v", replies[0], err)
		}
		if move.Note == nil {
			return "<none>"
		}
		return *move.Note
	}
	// The emoji (4 bytes) is the 280th character: kept whole.
	note = strings.Repeat("a", 279) + "😀bc"
	if got := sent(); got != strings.Repeat("a", 279)+"😀" || utf8.RuneCountInString(got) != NoteMax {
		t.Fatalf("got %q", got)
	}
	note = strings.Repeat("é", 300) // characters, not bytes
	if got := sent(); got != strings.Repeat("é", 280) {
		t.Fatalf("got %q", got)
	}
	note = "x\xffy" // not UTF-8: U+FFFD instead
	if got := sent(); got != "x\uFFFDy" {
		t.Fatalf("got %q", got)
	}
	note = ""
	if got := sent(); got != "<none>" {
		t.Fatalf("an empty note is sent: %q", got)
	}
}

func TestSayDropsAnInfoTheProtocolRefuses(t *testing.T) {
	var info map[string]float64
	var log bytes.Buffer
	session := NewSession(&log)
	session.choose = func(_ *Turn, game *Game) int { game.Say("", info); return 0 }
	info = map[string]float64{
		"ok": 2, "bad key": 1, "": 3, strings.Repeat("k", 33): 4, "é": 5,
		"nan": math.NaN(), "inf": math.Inf(-1), "big": 1e15 + 2, "max": -1e15, "a.b-c_9": 0.5,
	}
	got := session.Handle(fmt.Sprintf(sayTurn, 7))
	want := `{"type":"move","id":7,"index":0,"info":{"a.b-c_9":0.5,"max":-1000000000000000,"ok":2}}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if lines := strings.Count(log.String(), "\n"); lines != 7 || !strings.Contains(log.String(), `"bad key"`) {
		t.Fatalf("want 7 lines of log, got %q", log.String())
	}
	// Of 20 good numbers, the first 16 in sorted order.
	info = map[string]float64{}
	for i := 0; i < 20; i++ {
		info[fmt.Sprintf("n%02d", i)] = float64(i)
	}
	var move struct {
		Info map[string]float64 `json:"info"`
	}
	if err := json.Unmarshal([]byte(session.Handle(fmt.Sprintf(sayTurn, 7))[0]), &move); err != nil {
		t.Fatal(err)
	}
	if len(move.Info) != InfoKeysMax || move.Info["n15"] != 15 || move.Info["n16"] != 0 {
		t.Fatalf("got %v", move.Info)
	}
	info = map[string]float64{"no good": 1}
	if got := session.Handle(fmt.Sprintf(sayTurn, 7)); got[0] != `{"type":"move","id":7,"index":0}` {
		t.Fatalf("got %q", got)
	}
}
