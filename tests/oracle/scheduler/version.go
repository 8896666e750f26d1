package main

import (
	"context"
	"encoding/json"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
)

type pluginJSON struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight,omitempty"`
}

type versionResponse struct {
	Kubernetes string                  `json:"kubernetes"`
	Plugins    map[string][]pluginJSON `json:"plugins"`
}

// version reports the linked release and, per extension point, the plugins the (given or
// default) profile runs, in order, with the Score weights: what a comparison can cover.
func (s *server) version(raw json.RawMessage) (*versionResponse, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fw, _, err := s.framework(ctx, &scheduleRequest{Config: raw}, outOfScope, nil)
	if err != nil {
		return nil, err
	}
	listed := fw.ListPlugins()
	points := map[string]config.PluginSet{
		"preEnqueue": listed.PreEnqueue,
		"queueSort":  listed.QueueSort,
		"preFilter":  listed.PreFilter,
		"filter":     listed.Filter,
		"postFilter": listed.PostFilter,
		"preScore":   listed.PreScore,
		"score":      listed.Score,
		"reserve":    listed.Reserve,
		"permit":     listed.Permit,
		"preBind":    listed.PreBind,
		"bind":       listed.Bind,
	}
	resp := &versionResponse{Kubernetes: upstreamVersion(), Plugins: map[string][]pluginJSON{}}
	for point, set := range points {
		plugins := []pluginJSON{}
		for _, plugin := range set.Enabled {
			plugins = append(plugins, pluginJSON{Name: plugin.Name, Weight: plugin.Weight})
		}
		resp.Plugins[point] = plugins
	}
	return resp, nil
}
