// Command dra-oracle answers "what would upstream Kubernetes do?" for the Python tests.
//
// It links upstream's DRA CEL environment and structured-parameters allocator (the exact
// release the control plane is pinned to) and serves them over a JSON-lines protocol on
// stdin/stdout, so one long-running process can judge thousands of generated cases per test
// run. The protocol is documented in README.md next to this file.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

const usage = "usage: dra-oracle serve   (JSON-lines requests on stdin, responses on stdout)"

func main() {
	if len(os.Args) != 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "dra-oracle: %v\n", err)
		os.Exit(1)
	}
}

// serve answers one request line with exactly one response line, in order, until stdin ends.
// Lines are read whole (no length limit): an allocate request for hundreds of nodes is
// megabytes long.
func serve(in io.Reader, out io.Writer) error {
	reader := bufio.NewReaderSize(in, 1<<20)
	writer := bufio.NewWriter(out)
	srv := newServer()
	for {
		line, readErr := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if _, err := writer.Write(srv.handle(line)); err != nil {
				return fmt.Errorf("write response: %w", err)
			}
			if err := writer.WriteByte('\n'); err != nil {
				return fmt.Errorf("write response: %w", err)
			}
			// The client waits for each answer before it sends more, so flush every line.
			if err := writer.Flush(); err != nil {
				return fmt.Errorf("write response: %w", err)
			}
		}
		if errors.Is(readErr, io.EOF) {
			return nil
		}
		if readErr != nil {
			return fmt.Errorf("read request: %w", readErr)
		}
	}
}
