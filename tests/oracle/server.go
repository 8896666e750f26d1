package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	sigsjson "sigs.k8s.io/json"

	"k8s.io/dynamic-resource-allocation/cel"
)

// celCacheSize only affects speed: upstream caches successful compilations only, so a
// bigger cache than the scheduler's 10 entries gives the same answers for generated corpora
// that reuse expressions across many devices.
const celCacheSize = 1024

// server holds what is worth keeping between requests: compiled selectors, per CEL feature
// set (the device type and functions differ between feature sets).
type server struct {
	celCaches map[cel.Features]*cel.Cache
}

func newServer() *server {
	return &server{celCaches: map[cel.Features]*cel.Cache{}}
}

func (s *server) celCache(features cel.Features) *cel.Cache {
	cache, ok := s.celCaches[features]
	if !ok {
		cache = cel.NewCache(celCacheSize, features)
		s.celCaches[features] = cache
	}
	return cache
}

// protocolError answers a request the oracle could not understand. It is never an upstream
// result, so the client raises it instead of comparing it.
type protocolError struct {
	ProtocolError string `json:"protocolError"`
}

type versionResponse struct {
	Kubernetes string   `json:"kubernetes"`
	Features   []string `json:"features"`
}

// handle turns one request line into one response line. A panic inside upstream code (for
// example on input the API server would have rejected) becomes a protocol error so that one
// bad case does not end the session.
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
	case "cel":
		var req celRequest
		if err := decodeStrict(line, &req); err != nil {
			return nil, err
		}
		return s.evaluate(req)
	case "allocate":
		var req allocateRequest
		if err := decodeStrict(line, &req); err != nil {
			return nil, err
		}
		sc, err := req.scenario()
		if err != nil {
			return nil, err
		}
		return s.allocate(sc), nil
	case "version":
		var req struct {
			Op string `json:"op"`
		}
		if err := decodeStrict(line, &req); err != nil {
			return nil, err
		}
		return versionResponse{Kubernetes: upstreamVersion(), Features: featureKeys()}, nil
	case "":
		return nil, errors.New(`request has no "op"`)
	default:
		return nil, fmt.Errorf("unknown op %q", envelope.Op)
	}
}

// decodeStrict decodes like the API server does (case-sensitive field names) but also rejects
// unknown and duplicate fields: a misspelled field in a generated object would otherwise be
// dropped silently and the oracle would judge a different case than the one the test meant.
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

// mustMarshal encodes one response line, leaving <, > and & as they are so that error texts
// stay readable in logs (JSON decoders accept both forms).
func mustMarshal(v any) []byte {
	var buf bytes.Buffer
	encoder := json.NewEncoder(&buf)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(v); err != nil {
		// Only our own response types get here; they always encode.
		panic(fmt.Sprintf("marshal response: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// upstreamVersion reports the k8s.io/dynamic-resource-allocation release linked in, read
// from the build so it can never disagree with go.mod.
func upstreamVersion() string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/dynamic-resource-allocation" {
				return dep.Version
			}
		}
	}
	return "unknown"
}
