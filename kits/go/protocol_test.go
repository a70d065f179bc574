// Tests of the protocol helper with the strategy, in memory (no process):
// `go test ./...`. The fixtures are real requests recorded by the referee
// (spec/kit_fixtures.py writes them; `make examples` refreshes them).

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
