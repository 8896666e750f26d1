package main

// Upstream's side of the benchmark tables in docs/benchmarks.md: the Python bench/ scripts run
//
//	cd tests/oracle && go test -bench . -run '^$'
//
// and parse the ns/op lines. Inputs are the data files the Python benchmarks use too, so both
// sides time the same cases: bench/cel_selectors.json (DRA_ORACLE_CEL_SELECTORS overrides) and
// bench/scenarios/*.json, each one allocate request (DRA_ORACLE_SCENARIOS overrides the
// directory).

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
)

type celSelectorSet struct {
	Driver    string             `json:"driver"`
	Device    resourceapi.Device `json:"device"`
	Features  map[string]bool    `json:"features"`
	Selectors []struct {
		Name       string `json:"name"`
		Expression string `json:"expression"`
		// Match is the expected verdict, so that a selector that stopped matching (and
		// so got cheaper) cannot go unnoticed.
		Match bool `json:"match"`
	} `json:"selectors"`
}

func benchInput(env, fallback string) string {
	if path := os.Getenv(env); path != "" {
		return path
	}
	return filepath.Join("..", "..", "bench", fallback)
}

func readCELSelectors(b *testing.B) (celSelectorSet, cel.Features) {
	path := benchInput("DRA_ORACLE_CEL_SELECTORS", "cel_selectors.json")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var set celSelectorSet
	if err := decodeStrict(data, &set); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	features, err := celFeatures(set.Features)
	if err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	return set, features
}

// BenchmarkCEL times what the allocator pays per (selector, device) pair once the selector is
// cached (evaluate: DeviceMatches, which includes building the device's attribute maps), and
// one compilation as the cache does it (compile: no cost estimation).
func BenchmarkCEL(b *testing.B) {
	set, features := readCELSelectors(b)
	device := celDevice(set.Driver, set.Device)
	ctx := context.Background()
	b.Run("evaluate", func(b *testing.B) {
		cache := newServer().celCache(features)
		for _, selector := range set.Selectors {
			b.Run(selector.Name, func(b *testing.B) {
				compiled := cache.GetOrCompile(selector.Expression)
				if compiled.Error != nil {
					b.Fatalf("%s: %v", selector.Expression, compiled.Error)
				}
				match, _, err := compiled.DeviceMatches(ctx, device)
				if err != nil || match != selector.Match {
					b.Fatalf("%s: match=%v err=%v, want match=%v", selector.Expression, match, err, selector.Match)
				}
				for b.Loop() {
					_, _, _ = compiled.DeviceMatches(ctx, device)
				}
			})
		}
	})
	b.Run("compile", func(b *testing.B) {
		compiler := cel.GetCompiler(features)
		for _, selector := range set.Selectors {
			b.Run(selector.Name, func(b *testing.B) {
				for b.Loop() {
					if compiled := compiler.CompileCELExpression(selector.Expression, cel.Options{DisableCostEstimation: true}); compiled.Error != nil {
						b.Fatalf("%s: %v", selector.Expression, compiled.Error)
					}
				}
			})
		}
	})
}

// BenchmarkAllocate times each scenario two ways: "full" is one scheduling attempt on the
// scenario's node as the scheduler does it (NewAllocator in PreFilter plus Allocate in
// Filter); "allocate" is Filter alone on a prepared allocator, which the scheduler repeats
// for every candidate node. Extra metrics: ns/claim, and allocated (1 or 0) so a scenario
// that stopped fitting shows in the output.
func BenchmarkAllocate(b *testing.B) {
	dir := benchInput("DRA_ORACLE_SCENARIOS", "scenarios")
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no scenarios in %s (err=%v)", dir, err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		var req allocateRequest
		if err := decodeStrict(data, &req); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		sc, err := req.scenario()
		if err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		srv := newServer()
		outcome := srv.allocate(sc)
		if outcome.Error != nil {
			b.Logf("%s: upstream error: %s", name, *outcome.Error)
		}
		report := func(b *testing.B) {
			allocated := 0.0
			if outcome.Allocated {
				allocated = 1
			}
			b.ReportMetric(allocated, "allocated")
			if len(sc.claims) > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sc.claims)), "ns/claim")
			}
		}
		b.Run(name+"/full", func(b *testing.B) {
			for b.Loop() {
				srv.allocate(sc)
			}
			report(b)
		})
		b.Run(name+"/allocate", func(b *testing.B) {
			allocator, err := srv.newAllocator(sc)
			if err != nil {
				b.Fatalf("%s: %v", path, err)
			}
			for b.Loop() {
				runAllocate(allocator, sc)
			}
			report(b)
		})
	}
}
