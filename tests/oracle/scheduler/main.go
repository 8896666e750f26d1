// Command dra-scheduler-oracle answers "what would kube-scheduler decide?" for the Python tests.
//
// It links kube-scheduler's framework runtime and in-tree plugins from the exact release the
// control plane is pinned to, builds the default profile (without DynamicResources, which has
// its own oracle) on a cluster snapshot given as JSON, and reports every plugin's
// PreFilter/Filter verdicts and normalized scores ("schedule"), or what DefaultPreemption would
// decide for a pod that fits nowhere: the victims on each node, the candidates and the node
// chosen ("preempt"). One process serves many scenarios over a JSON-lines protocol on
// stdin/stdout (README.md next to this file).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/klog/v2"
)

const usage = "usage: dra-scheduler-oracle serve   (JSON-lines requests on stdin, responses on stdout)"

func main() {
	if len(os.Args) != 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	quietKlog()
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "dra-scheduler-oracle: %v\n", err)
		os.Exit(1)
	}
}

// quietKlog keeps upstream's informational logging off stderr: the Python client reads stderr
// only to explain a crash, and thousands of scenarios would fill it with noise.
func quietKlog() {
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	_ = flags.Set("v", "0")
	_ = flags.Set("stderrthreshold", "ERROR")
	_ = flags.Set("logtostderr", "true")
}

// serve answers each request line with exactly one response line, in order, until stdin ends.
// Lines are read whole: a scenario with hundreds of nodes and pods is megabytes long.
func serve(in io.Reader, out io.Writer) error {
	reader := bufio.NewReaderSize(in, 1<<20)
	writer := bufio.NewWriter(out)
	srv := newServer()
	for {
		line, readErr := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			response := srv.handle(line)
			if _, err := writer.Write(append(response, '\n')); err != nil {
				return fmt.Errorf("write response: %w", err)
			}
			// The client waits for each answer before it sends the next request.
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
