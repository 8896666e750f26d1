package main

import (
	"context"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
)

// celRequest asks whether one selector matches one device, as the scheduler would see it.
type celRequest struct {
	Op         string             `json:"op"`
	Expression string             `json:"expression"`
	Device     resourceapi.Device `json:"device"`
	Driver     string             `json:"driver"`
	Features   map[string]bool    `json:"features,omitempty"`
}

// celResponse carries exactly one non-null field.
type celResponse struct {
	CompileError *string `json:"compileError"`
	Match        *bool   `json:"match"`
	RuntimeError *string `json:"runtimeError"`
}

// evaluate compiles through upstream's cache, exactly like the allocator does (no cost
// estimation, successful compilations kept), then runs DeviceMatches on the device built
// the way the allocator builds it from a ResourceSlice entry. The texts are upstream's
// without the allocator's "class X: selector #i: CEL ... error:" prefix.
func (s *server) evaluate(req celRequest) (celResponse, error) {
	features, err := celFeatures(req.Features)
	if err != nil {
		return celResponse{}, err
	}
	compiled := s.celCache(features).GetOrCompile(req.Expression)
	if compiled.Error != nil {
		text := compiled.Error.Error()
		return celResponse{CompileError: &text}, nil
	}
	match, _, err := compiled.DeviceMatches(context.Background(), celDevice(req.Driver, req.Device))
	if err != nil {
		text := err.Error()
		return celResponse{RuntimeError: &text}, nil
	}
	return celResponse{Match: &match}, nil
}

func celDevice(driver string, device resourceapi.Device) cel.Device {
	return cel.Device{
		Driver:                   driver,
		AllowMultipleAllocations: device.AllowMultipleAllocations,
		Attributes:               device.Attributes,
		Capacity:                 device.Capacity,
	}
}
