package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// defaultTimeout is the scheduler's default DRA filter timeout (DRASchedulerFilterTimeout,
// beta and on): past it the scheduler gives up on the node, and so does the oracle.
const defaultTimeout = 10 * time.Second

// allocateRequest is one scheduler Filter call: these claims, together, on this node.
type allocateRequest struct {
	Op        string                       `json:"op"`
	Features  map[string]bool              `json:"features,omitempty"`
	Node      *corev1.Node                 `json:"node"`
	Classes   []*resourceapi.DeviceClass   `json:"classes"`
	Slices    []*resourceapi.ResourceSlice `json:"slices"`
	Allocated []*resourceapi.ResourceClaim `json:"allocated"`
	Claims    []*resourceapi.ResourceClaim `json:"claims"`
	// TimeoutSeconds overrides defaultTimeout (an extension of the documented protocol).
	TimeoutSeconds *float64 `json:"timeoutSeconds,omitempty"`
}

type allocateResponse struct {
	Error     *string                        `json:"error"`
	Allocated bool                           `json:"allocated"`
	Results   []resourceapi.AllocationResult `json:"results"`
	// NodeError explains allocated=false when upstream returned an error that only rules
	// out this node (ErrFailedAllocationOnNode, e.g. invalid pools): the scheduler treats
	// it as "unschedulable here", not as fatal.
	NodeError *string `json:"nodeError,omitempty"`
}

// scenario is a decoded allocate request in the shape upstream's allocator takes.
type scenario struct {
	features structured.Features
	node     *corev1.Node
	classes  classLister
	slices   []*resourceapi.ResourceSlice
	state    structured.AllocatedState
	claims   []*resourceapi.ResourceClaim
	timeout  time.Duration
}

func (req allocateRequest) scenario() (scenario, error) {
	features, err := allocatorFeatures(req.Features)
	if err != nil {
		return scenario{}, err
	}
	if req.Node == nil {
		// The scheduler always has a node; upstream's allocator dereferences it.
		return scenario{}, errors.New(`"node" is required: upstream's allocator cannot run without one`)
	}
	classes, err := newClassLister(req.Classes)
	if err != nil {
		return scenario{}, err
	}
	state, err := allocatedState(req.Allocated, features.ConsumableCapacity)
	if err != nil {
		return scenario{}, err
	}
	timeout := defaultTimeout
	if req.TimeoutSeconds != nil {
		if *req.TimeoutSeconds <= 0 {
			return scenario{}, fmt.Errorf("timeoutSeconds must be positive, got %v", *req.TimeoutSeconds)
		}
		timeout = time.Duration(*req.TimeoutSeconds * float64(time.Second))
	}
	return scenario{
		features: features,
		node:     req.Node,
		classes:  classes,
		slices:   req.Slices,
		state:    state,
		claims:   req.Claims,
		timeout:  timeout,
	}, nil
}

// allocate does what the scheduler plugin does for one pod and one node: PreFilter builds the
// allocator (with the plugin's CEL cache for these gates), Filter calls Allocate under the
// filter timeout and sorts the outcome into fatal error, node-only failure or fit.
func (s *server) allocate(sc scenario) allocateResponse {
	allocator, err := s.newAllocator(sc)
	if err != nil {
		return errorResponse(err.Error())
	}
	return runAllocate(allocator, sc)
}

func (s *server) newAllocator(sc scenario) (structured.Allocator, error) {
	celCache := s.celCache(cel.Features{
		EnableConsumableCapacity: sc.features.ConsumableCapacity,
		EnableListTypeAttributes: sc.features.ListTypeAttributes,
	})
	return structured.NewAllocator(context.Background(), sc.features, sc.state, sc.classes, sc.slices, celCache)
}

func runAllocate(allocator structured.Allocator, sc scenario) allocateResponse {
	ctx, cancel := context.WithTimeout(context.Background(), sc.timeout)
	defer cancel()
	results, err := allocator.Allocate(ctx, sc.node, sc.claims)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		// The scheduler replaces the error with its own text in this case.
		return errorResponse(fmt.Sprintf("node %s: timed out trying to allocate devices", sc.node.Name))
	case errors.Is(err, structured.ErrFailedAllocationOnNode):
		text := err.Error()
		return allocateResponse{NodeError: &text}
	case err != nil:
		return errorResponse(err.Error())
	case results == nil && len(sc.claims) > 0:
		return allocateResponse{}
	}
	if results == nil {
		results = []resourceapi.AllocationResult{}
	}
	return allocateResponse{Allocated: true, Results: results}
}

func errorResponse(text string) allocateResponse {
	return allocateResponse{Error: &text}
}

// allocatedState gathers the devices in use the way the scheduler's claim tracker does:
// admin-access results never count; with ConsumableCapacity a result carrying a shareID is
// one share of a multi-allocatable device (its consumedCapacity added to the device's
// total), every other result takes the whole device.
func allocatedState(claims []*resourceapi.ResourceClaim, consumableCapacity bool) (structured.AllocatedState, error) {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for i, claim := range claims {
		if claim == nil || claim.Status.Allocation == nil {
			return state, fmt.Errorf("allocated[%d]: claim has no status.allocation", i)
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			if result.AdminAccess != nil && *result.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
			if consumableCapacity && result.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, result.ShareID))
				if result.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, result.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(id)
		}
	}
	return state, nil
}

// classLister answers like the scheduler's informer-backed lister, including its NotFound
// error text for a missing class.
type classLister struct {
	ordered []*resourceapi.DeviceClass
	byName  map[string]*resourceapi.DeviceClass
}

func newClassLister(classes []*resourceapi.DeviceClass) (classLister, error) {
	lister := classLister{ordered: classes, byName: make(map[string]*resourceapi.DeviceClass, len(classes))}
	for i, class := range classes {
		if class == nil {
			return lister, fmt.Errorf("classes[%d]: null", i)
		}
		if _, dup := lister.byName[class.Name]; dup {
			return lister, fmt.Errorf("classes[%d]: duplicate device class %q", i, class.Name)
		}
		lister.byName[class.Name] = class
	}
	return lister, nil
}

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	return l.ordered, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	class, ok := l.byName[name]
	if !ok {
		return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclass"), name)
	}
	return class, nil
}
