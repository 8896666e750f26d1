package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	sigsjson "sigs.k8s.io/json"

	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// server keeps what is worth keeping between requests: the in-tree registry and every
// profile configuration already decoded.
type server struct {
	registry frameworkruntime.Registry
	profiles map[string]*profileConfig
}

func newServer() *server {
	// The runtime counts plugin calls in the scheduler's metrics, which exist once registered.
	metrics.Register()
	return &server{registry: plugins.NewInTreeRegistry(), profiles: map[string]*profileConfig{}}
}

// protocolError answers a request the oracle could not understand (or a panic inside upstream
// code). It is never a scheduling verdict: the client raises it instead of comparing it.
type protocolError struct {
	ProtocolError string `json:"protocolError"`
}

func (s *server) handle(line []byte) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			out = mustMarshal(protocolError{fmt.Sprintf("panic: %v\n%s", r, debug.Stack())})
		}
	}()
	response, err := s.dispatch(line)
	if err != nil {
		return mustMarshal(protocolError{err.Error()})
	}
	return mustMarshal(response)
}

func (s *server) dispatch(line []byte) (any, error) {
	var envelope struct {
		Op string `json:"op"`
	}
	if err := json.Unmarshal(line, &envelope); err != nil {
		return nil, fmt.Errorf("request is not a JSON object: %w", err)
	}
	switch envelope.Op {
	case "schedule":
		var req scheduleRequest
		if err := decodeStrict(line, &req); err != nil {
			return nil, err
		}
		return s.schedule(&req)
	case "preempt":
		var req preemptRequest
		if err := decodeStrict(line, &req); err != nil {
			return nil, err
		}
		return s.preempt(&req)
	case "version":
		var req struct {
			Op     string          `json:"op"`
			Config json.RawMessage `json:"config,omitempty"`
		}
		if err := decodeStrict(line, &req); err != nil {
			return nil, err
		}
		return s.version(req.Config)
	case "":
		return nil, errors.New(`request has no "op"`)
	default:
		return nil, fmt.Errorf("unknown op %q", envelope.Op)
	}
}

// decodeStrict decodes like the API server (case-sensitive field names) and also rejects
// unknown and duplicate fields: a misspelled field in a generated object would otherwise be
// dropped and the oracle would judge another scenario than the test meant.
func decodeStrict(data []byte, into any) error {
	strictErrs, err := sigsjson.UnmarshalStrict(data, into,
		sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return fmt.Errorf("decode request: %w", err)
	}
	if len(strictErrs) > 0 {
		return fmt.Errorf("decode request: %w", errors.Join(strictErrs...))
	}
	return nil
}

// mustMarshal encodes one response line, leaving <, > and & readable in reason texts.
func mustMarshal(v any) []byte {
	var buf bytes.Buffer
	encoder := json.NewEncoder(&buf)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(v); err != nil {
		panic(fmt.Sprintf("marshal response: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// upstreamVersion is the linked k8s.io/kubernetes release, read from the build so that it can
// never disagree with go.mod.
func upstreamVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/kubernetes" {
				return dep.Version
			}
		}
	}
	return "unknown"
}
