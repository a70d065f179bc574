// Tests of the sample strategy in strategy.go. When you rewrite Choose,
// rewrite these to say what yours should do.

package main

import "testing"

func play(a, b, train int) Move { return Move{Action: "play", Tile: Tile{a, b}, Train: train} }

func TestChoose(t *testing.T) {
	cases := []struct {
		name  string
		seat  int
		hand  []Tile
		legal []Move
		want  int
	}{
		{"heaviest tile", 0, []Tile{{3, 1}, {6, 5}},
			[]Move{play(3, 1, 0), play(6, 5, 3), {Action: "draw"}}, 1},
		{"own train when equal", 1, []Tile{{6, 5}},
			[]Move{play(6, 5, 3), play(6, 5, 1)}, 1},
		{"a double that can be followed", 0, []Tile{{3, 3}, {3, 0}, {5, 1}},
			[]Move{play(5, 1, 2), play(3, 3, 2)}, 1},
		{"a double alone is just its pips", 0, []Tile{{3, 3}, {5, 1}},
			[]Move{play(5, 1, 2), play(3, 3, 2)}, 0},
		{"draw when nothing plays", 0, []Tile{{1, 0}},
			[]Move{{Action: "draw"}, {Action: "pass"}}, 0},
		{"end before pass", 0, []Tile{{1, 0}},
			[]Move{{Action: "pass"}, {Action: "end"}}, 1},
	}
	for _, c := range cases {
		turn := &Turn{ID: 1, Seat: c.seat, View: View{Hand: c.hand}, Legal: c.legal}
		if got := Choose(turn, &Game{}); got != c.want {
			t.Errorf("%s: Choose = %d, want %d", c.name, got, c.want)
		}
	}
}
