package main

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// preemptRequest is a "schedule" scenario plus what preemption reads besides it: the
// PodDisruptionBudgets (in the order the victims are charged to them) and where the dry run
// starts among the potential nodes.
type preemptRequest struct {
	scheduleRequest
	PodDisruptionBudgets []*policyv1.PodDisruptionBudget `json:"podDisruptionBudgets"`
	// Offset is taken modulo the number of potential nodes (upstream draws it at random).
	Offset int32 `json:"offset"`
}

type victimsJSON struct {
	Pods             []string   `json:"pods"`
	NumPDBViolations int        `json:"numPDBViolations"`
	Status           statusJSON `json:"status"`
}

type candidateJSON struct {
	Node             string   `json:"node"`
	Pods             []string `json:"pods"`
	NumPDBViolations int64    `json:"numPDBViolations"`
}

type preemptResponse struct {
	PreFilter preFilterJSON         `json:"prefilter"`
	Filter    map[string]statusJSON `json:"filter"`
	// PotentialNodes are the nodes Filter found Unschedulable, in the request's order.
	PotentialNodes []string               `json:"potentialNodes"`
	Victims        map[string]victimsJSON `json:"victims"`
	// Eligible is PodEligibleToPreemptOthers' reason why not, or "".
	Eligible      string          `json:"eligible"`
	Offset        int32           `json:"offset"`
	NumCandidates int32           `json:"numCandidates"`
	Candidates    []candidateJSON `json:"candidates"`
	Chosen        string          `json:"chosen"`
	Status        statusJSON      `json:"status"`
}

// preempt answers what kube-scheduler's DefaultPreemption would do for a pod that Filter
// placed nowhere, without acting on it: for every potential node, the victims upstream's
// SelectVictimsOnNode picks (given the DomainVictims upstream's Evaluator.GetVictimsOnNode
// builds); then, as Evaluator.Preempt's evaluation, the eligibility check, the dry run from
// the given offset over as many candidates as the plugin's args ask, the candidate
// SelectCandidate picks, and the PostFilter status it would return. The dry run runs with a
// parallelism of 1, so which nodes it tries before it has enough candidates is upstream's
// sequential answer, not a race.
func (s *server) preempt(req *preemptRequest) (*preemptResponse, error) {
	if req.Pod == nil {
		return nil, fmt.Errorf(`request has no "pod"`)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pdbs := req.PodDisruptionBudgets
	if pdbs == nil {
		pdbs = []*policyv1.PodDisruptionBudget{}
	}
	fw, profile, err := s.framework(ctx, &req.scheduleRequest, preemptionOutOfScope, pdbs,
		frameworkruntime.WithParallelism(1), frameworkruntime.WithPodNominator(noNominatedPods{}))
	if err != nil {
		return nil, err
	}
	pl, err := newDefaultPreemption(ctx, fw, profile)
	if err != nil {
		return nil, err
	}
	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	decided, err := filterAll(ctx, fw, state, req.Pod)
	if err != nil {
		return nil, err
	}
	resp := &preemptResponse{
		PreFilter:      decided.preFilter,
		Filter:         decided.filter,
		PotentialNodes: []string{},
		Victims:        map[string]victimsJSON{},
		Candidates:     []candidateJSON{},
	}
	lister := fw.MutableSnapshotSharedLister().NodeInfos()
	var potential []fwk.NodeInfo
	for _, node := range req.Nodes {
		nodeInfo, err := lister.Get(node.Name)
		if err != nil {
			return nil, fmt.Errorf("snapshot node %q: %w", node.Name, err)
		}
		if decided.statuses.Get(node.Name).Code() == fwk.Unschedulable {
			potential = append(potential, nodeInfo)
			resp.PotentialNodes = append(resp.PotentialNodes, node.Name)
		}
	}
	for _, nodeInfo := range potential {
		victims, err := pl.Evaluator.GetVictimsOnNode(ctx, nodeInfo)
		if err != nil {
			return nil, fmt.Errorf("victims on node %q: %w", nodeInfo.Node().Name, err)
		}
		pods, violations, status := pl.SelectVictimsOnNode(
			ctx, state.Clone(), req.Pod, nodeInfo.Snapshot(), victims, pdbs)
		resp.Victims[nodeInfo.Node().Name] = victimsJSON{
			Pods: podNames(pods), NumPDBViolations: violations, Status: toStatus(status)}
	}
	resp.Status = toStatus(evaluatePreemption(ctx, pl, state, req, decided, potential, pdbs, resp))
	return resp, nil
}

// evaluatePreemption is Evaluator.evaluate's course on the potential nodes, filling the
// response's eligibility, candidates and choice; it returns the status DefaultPreemption's
// PostFilter would (its "preemption: " prefix included).
func evaluatePreemption(ctx context.Context, pl *defaultpreemption.DefaultPreemption,
	state fwk.CycleState, req *preemptRequest, decided *filtered, potential []fwk.NodeInfo,
	pdbs []*policyv1.PodDisruptionBudget, resp *preemptResponse,
) *fwk.Status {
	pod := req.Pod
	nominated := decided.statuses.Get(pod.Status.NominatedNodeName)
	if ok, reason := pl.PodEligibleToPreemptOthers(ctx, pod, nominated); !ok {
		resp.Eligible = reason
		return fwk.NewStatus(fwk.Unschedulable, "preemption: "+reason)
	}
	statuses := framework.NewDefaultNodeToStatus()
	var candidates []candidateJSON
	if len(potential) > 0 {
		var num int32
		_, num = pl.GetOffsetAndNumCandidates(int32(len(potential)))
		resp.Offset = req.Offset % int32(len(potential))
		resp.NumCandidates = num
		found, nodeStatuses, err := pl.Evaluator.DryRunPreemption(
			ctx, state, pod, potential, pdbs, resp.Offset, num)
		if err != nil && len(found) == 0 {
			return fwk.AsStatus(err)
		}
		statuses = nodeStatuses
		for _, c := range found {
			candidates = append(candidates, candidateJSON{
				Node: c.Name(), Pods: podNames(c.Victims().Pods),
				NumPDBViolations: c.Victims().NumPDBViolations,
			})
		}
		resp.Candidates = append(resp.Candidates, candidates...)
		if best := pl.Evaluator.SelectCandidate(ctx, found); best != nil {
			resp.Chosen = best.Name()
			return fwk.NewStatus(fwk.Success, fmt.Sprintf(
				"preemption: found a potential placement for pod on node %v, preempting %d victims",
				best.Name(), len(best.Victims().Pods)))
		}
	}
	fitError := &framework.FitError{
		Pod:         pod,
		NumAllNodes: len(req.Nodes),
		Diagnosis:   framework.Diagnosis{NodeToStatus: statuses},
	}
	fitError.Diagnosis.NodeToStatus.SetAbsentNodesStatus(
		fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"))
	return fwk.NewStatus(fwk.Unschedulable, "preemption: "+fitError.Error())
}

// newDefaultPreemption builds upstream's plugin with the profile's (defaulted) args and
// v1.37.2's feature gates, as the in-tree registry's factory would: the framework's own
// instance is not reachable, and the oracle calls the plugin's methods directly.
func newDefaultPreemption(ctx context.Context, fw framework.Framework,
	profile *config.KubeSchedulerProfile,
) (*defaultpreemption.DefaultPreemption, error) {
	var args *config.DefaultPreemptionArgs
	for _, pc := range profile.PluginConfig {
		if pc.Name == defaultpreemption.Name {
			args, _ = pc.Args.(*config.DefaultPreemptionArgs)
		}
	}
	if args == nil {
		return nil, fmt.Errorf("the profile has no %sArgs", defaultpreemption.Name)
	}
	fts := plfeature.NewSchedulerFeaturesFromGates(feature.DefaultFeatureGate)
	pl, err := defaultpreemption.New(ctx, args, fw, fts)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", defaultpreemption.Name, err)
	}
	return pl, nil
}

// noNominatedPods is the scheduling queue's nominator for a scenario without nominated pods:
// RunFilterPluginsWithNominatedPods, which preemption's simulation calls, asks it.
type noNominatedPods struct{}

func (noNominatedPods) AddNominatedPod(klog.Logger, fwk.PodInfo, *fwk.NominatingInfo) {}
func (noNominatedPods) DeleteNominatedPodIfExists(*v1.Pod)                            {}
func (noNominatedPods) UpdateNominatedPod(klog.Logger, *v1.Pod, fwk.PodInfo)          {}
func (noNominatedPods) NominatedPodsForNode(string) []fwk.PodInfo                     { return nil }

// podNames are "namespace/name", in the order given.
func podNames(pods []*v1.Pod) []string {
	names := make([]string, 0, len(pods))
	for _, pod := range pods {
		names = append(names, pod.Namespace+"/"+pod.Name)
	}
	return names
}
