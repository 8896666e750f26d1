package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// scheduleRequest is one scenario: the cluster as the scheduler's informers would hold it, and
// the pod to place. Objects are core/v1 and storage/v1 JSON as the API server stores them.
type scheduleRequest struct {
	Op                     string                      `json:"op"`
	Nodes                  []*v1.Node                  `json:"nodes"`
	Pods                   []*v1.Pod                   `json:"pods"`
	Namespaces             []*v1.Namespace             `json:"namespaces"`
	PersistentVolumes      []*v1.PersistentVolume      `json:"persistentVolumes"`
	PersistentVolumeClaims []*v1.PersistentVolumeClaim `json:"persistentVolumeClaims"`
	StorageClasses         []*storagev1.StorageClass   `json:"storageClasses"`
	CSINodes               []*storagev1.CSINode        `json:"csiNodes"`
	CSIDrivers             []*storagev1.CSIDriver      `json:"csiDrivers"`
	Pod                    *v1.Pod                     `json:"pod"`
	Config                 json.RawMessage             `json:"config,omitempty"`
}

type statusJSON struct {
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
	Plugin  string   `json:"plugin"`
}

type preFilterJSON struct {
	statusJSON
	// NodeNames is the PreFilterResult (the only nodes worth filtering); absent means all.
	NodeNames []string `json:"nodeNames,omitempty"`
}

type scheduleResponse struct {
	PreFilter   preFilterJSON               `json:"prefilter"`
	Filter      map[string]statusJSON       `json:"filter"`
	ScoreStatus *statusJSON                 `json:"scoreStatus,omitempty"`
	Scores      map[string]map[string]int64 `json:"scores"`
	Total       map[string]int64            `json:"total"`
}

// toStatus writes a status; nil is upstream's Success.
func toStatus(s *fwk.Status) statusJSON {
	if s == nil {
		return statusJSON{Code: fwk.Success.String(), Reasons: []string{}}
	}
	reasons := s.Reasons()
	if reasons == nil {
		reasons = []string{}
	}
	return statusJSON{Code: s.Code().String(), Reasons: reasons, Plugin: s.Plugin()}
}

// schedule runs one scheduling cycle's decision as kube-scheduler's schedulePod does, except
// that Filter runs on every node (no percentageOfNodesToScore cut, no stop at enough feasible
// nodes) and Score runs even when a single node is feasible. Nodes a PreFilterResult leaves out
// get the status upstream records for them, without running Filter.
func (s *server) schedule(req *scheduleRequest) (*scheduleResponse, error) {
	if req.Pod == nil {
		return nil, fmt.Errorf(`request has no "pod"`)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fw, _, err := s.framework(ctx, req, outOfScope, nil)
	if err != nil {
		return nil, err
	}
	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	decided, err := filterAll(ctx, fw, state, req.Pod)
	if err != nil {
		return nil, err
	}
	resp := &scheduleResponse{
		PreFilter: decided.preFilter,
		Filter:    decided.filter,
		Scores:    map[string]map[string]int64{},
		Total:     map[string]int64{},
	}
	feasible := decided.feasible
	if len(feasible) == 0 {
		return resp, nil
	}
	if status := fw.RunPreScorePlugins(ctx, state, req.Pod, feasible); !status.IsSuccess() {
		prescore := toStatus(status)
		resp.ScoreStatus = &prescore
		return resp, nil
	}
	nodeScores, status := fw.RunScorePlugins(ctx, state, req.Pod, feasible)
	if !status.IsSuccess() {
		prescore := toStatus(status)
		resp.ScoreStatus = &prescore
		return resp, nil
	}
	weights := scoreWeights(fw)
	for _, node := range nodeScores {
		for _, score := range node.Scores {
			perNode, ok := resp.Scores[score.Name]
			if !ok {
				perNode = map[string]int64{}
				resp.Scores[score.Name] = perNode
			}
			// The runtime reports weighted scores; the comparison wants them normalized.
			perNode[node.Name] = score.Score / weights[score.Name]
		}
		resp.Total[node.Name] = node.TotalScore
	}
	return resp, nil
}

// framework builds the profile (without the plugins named in `disabled`) on this scenario's
// snapshot and informers, the way upstream's scheduler tests do: a fake clientset's informer
// factory, and the snapshot lister (also the mutable one preemption lists nodes and victims
// through, as kube-scheduler's own setup passes it). The informers are never started: objects
// go straight into their stores, which is all the plugins' listers and VolumeBinding's assume
// caches read, and it costs no sync wait.
func (s *server) framework(ctx context.Context, req *scheduleRequest, disabled []string,
	pdbs []*policyv1.PodDisruptionBudget, options ...frameworkruntime.Option,
) (framework.Framework, *config.KubeSchedulerProfile, error) {
	profile, err := s.profileFor(req.Config, disabled)
	if err != nil {
		return nil, nil, err
	}
	var placed []*v1.Pod
	for _, pod := range req.Pods {
		if pod.Spec.NodeName != "" {
			placed = append(placed, pod)
		}
	}
	snapshot := internalcache.NewSnapshot(placed, req.Nodes)
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	options = append([]frameworkruntime.Option{
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		// As the scheduler does: NodeVolumeLimits reads CSINodes through it.
		frameworkruntime.WithSharedCSIManager(
			nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithMutableSnapshotLister(snapshot),
	}, options...)
	fw, err := frameworkruntime.NewFramework(ctx, s.registry, profile, options...)
	if err != nil {
		return nil, nil, fmt.Errorf("build framework: %w", err)
	}
	// After the plugins registered their informers (and any indexers), fill the stores.
	stores := []struct {
		informer cache.SharedIndexInformer
		objects  []runtime.Object
	}{
		{factory.Core().V1().Nodes().Informer(), objects(req.Nodes)},
		{factory.Core().V1().Pods().Informer(), objects(req.Pods)},
		{factory.Core().V1().Namespaces().Informer(), objects(req.Namespaces)},
		{factory.Core().V1().PersistentVolumes().Informer(), objects(req.PersistentVolumes)},
		{factory.Core().V1().PersistentVolumeClaims().Informer(), objects(req.PersistentVolumeClaims)},
		{factory.Storage().V1().StorageClasses().Informer(), objects(req.StorageClasses)},
		{factory.Storage().V1().CSINodes().Informer(), objects(req.CSINodes)},
		{factory.Storage().V1().CSIDrivers().Informer(), objects(req.CSIDrivers)},
	}
	if pdbs != nil {
		stores = append(stores, struct {
			informer cache.SharedIndexInformer
			objects  []runtime.Object
		}{factory.Policy().V1().PodDisruptionBudgets().Informer(), objects(pdbs)})
	}
	for _, store := range stores {
		for _, obj := range store.objects {
			if err := store.informer.GetIndexer().Add(obj); err != nil {
				return nil, nil, fmt.Errorf("store %T: %w", obj, err)
			}
		}
	}
	return fw, profile, nil
}

// filtered is what PreFilter and Filter decided, in the response's words and in upstream's
// NodeToStatus (what PostFilter is given when no node is feasible).
type filtered struct {
	preFilter preFilterJSON
	filter    map[string]statusJSON
	feasible  []fwk.NodeInfo
	statuses  *framework.NodeToStatus
}

// filterAll runs PreFilter, then Filter on every node the PreFilterResult keeps. As in
// upstream's findNodesThatFitPod, a PreFilter rejection becomes every node's status (and
// `filter` stays empty), and nodes the PreFilterResult leaves out get "node(s) didn't satisfy
// plugin(s) [...]" as UnschedulableAndUnresolvable.
func filterAll(
	ctx context.Context, fw framework.Framework, state fwk.CycleState, pod *v1.Pod,
) (*filtered, error) {
	out := &filtered{filter: map[string]statusJSON{}, statuses: framework.NewDefaultNodeToStatus()}
	preRes, status, narrowing := fw.RunPreFilterPlugins(ctx, state, pod)
	out.preFilter.statusJSON = toStatus(status)
	if !preRes.AllNodes() {
		out.preFilter.NodeNames = sortedNames(preRes.NodeNames.UnsortedList())
	}
	if !status.IsSuccess() {
		out.statuses.SetAbsentNodesStatus(status)
		return out, nil
	}
	nodes, err := fw.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, fmt.Errorf("list snapshot nodes: %w", err)
	}
	absent := fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
		fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(narrowing)))
	for _, nodeInfo := range nodes {
		name := nodeInfo.Node().Name
		if !preRes.AllNodes() && !preRes.NodeNames.Has(name) {
			out.filter[name] = toStatus(absent)
			out.statuses.Set(name, absent)
			continue
		}
		status := fw.RunFilterPlugins(ctx, state, pod, nodeInfo)
		out.filter[name] = toStatus(status)
		if status.IsSuccess() {
			out.feasible = append(out.feasible, nodeInfo)
		} else {
			out.statuses.Set(name, status)
		}
	}
	return out, nil
}

func objects[T runtime.Object](items []T) []runtime.Object {
	out := make([]runtime.Object, 0, len(items))
	for _, item := range items {
		out = append(out, item)
	}
	return out
}

func scoreWeights(fw framework.Framework) map[string]int64 {
	weights := map[string]int64{}
	for _, plugin := range fw.ListPlugins().Score.Enabled {
		weights[plugin.Name] = int64(plugin.Weight)
	}
	return weights
}

func sortedNames(names []string) []string {
	sort.Strings(names)
	return names
}
