// A Mexican Train bot in Go, standard library only: `go build -o build/bot .`
// then `build/bot` speaks the protocol of spec/PROTOCOL.md on stdin/stdout.
package main

import (
	"fmt"
	"os"
)

func main() {
	// Only protocol lines may reach the referee: keep the real stdout for
	// them and send anything else printed (a stray fmt.Println) to the log.
	protocolOut := os.Stdout
	os.Stdout = os.Stderr
	// os.Stdout is unbuffered: each reply is written (sent) as it is made.
	if err := Run(os.Stdin, protocolOut, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", BotName, err)
		os.Exit(1)
	}
}
