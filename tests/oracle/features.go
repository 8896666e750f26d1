package main

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// The protocol's feature keys are the fields of upstream's structured.Features in
// lowerCamelCase. They are derived by reflection so that a field added in a later release
// becomes a key (and shows up in "version") without touching this file.
var featureFields = func() map[string]int {
	fields := map[string]int{}
	t := reflect.TypeFor[structured.Features]()
	for i := range t.NumField() {
		if t.Field(i).Type.Kind() == reflect.Bool {
			fields[lowerFirst(t.Field(i).Name)] = i
		}
	}
	return fields
}()

func lowerFirst(name string) string {
	r, size := utf8.DecodeRuneInString(name)
	return string(unicode.ToLower(r)) + name[size:]
}

// featureKeys lists every key a request may use, sorted.
func featureKeys() []string {
	keys := make([]string, 0, len(featureFields))
	for key := range featureFields {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// allocatorFeatures turns request features into upstream's Features; an absent key is false.
func allocatorFeatures(requested map[string]bool) (structured.Features, error) {
	var features structured.Features
	v := reflect.ValueOf(&features).Elem()
	for key, on := range requested {
		index, ok := featureFields[key]
		if !ok {
			return features, fmt.Errorf("unknown feature %q (known: %s)", key, strings.Join(featureKeys(), ", "))
		}
		v.Field(index).SetBool(on)
	}
	return features, nil
}

// celFeatures picks the CEL environment the scheduler builds for these gates: its cel.NewCache
// gets EnableConsumableCapacity and EnableListTypeAttributes from the gates of the same names.
// Absent keys are false, as for "allocate". (Only listTypeAttributes changes answers: the
// scheduler compiles in the "stored expressions" environment, which ignores feature gates, so
// allowMultipleAllocations and includes() are declared either way.)
func celFeatures(requested map[string]bool) (cel.Features, error) {
	features, err := allocatorFeatures(requested)
	if err != nil {
		return cel.Features{}, err
	}
	return cel.Features{
		EnableConsumableCapacity: features.ConsumableCapacity,
		EnableListTypeAttributes: features.ListTypeAttributes,
	}, nil
}
