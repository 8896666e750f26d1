package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

// outOfScope are left out of the profile "schedule" and "version" run: DynamicResources has its
// own oracle (the allocator one in tests/oracle), and DefaultPreemption only serves PostFilter,
// which "schedule" does not evaluate. "preempt" leaves out DynamicResources only
// (preemptionOutOfScope), so that DefaultPreemption's args are defaulted with the profile.
var (
	outOfScope           = []string{"DynamicResources", "DefaultPreemption"}
	preemptionOutOfScope = []string{"DynamicResources"}
)

type profileConfig struct {
	profile *config.KubeSchedulerProfile
	err     error
}

// profileFor turns a kubescheduler.config.k8s.io/v1 KubeSchedulerProfile (absent: the default
// one), with the plugins named in `disabled` added to plugins.multiPoint.disabled, into the
// internal profile exactly as kube-scheduler loads its --config file: the scheduler's own
// strict decoder applies v1 defaulting (the default plugins merged with the given ones,
// default plugin args) and conversion, then upstream's validation runs.
func (s *server) profileFor(
	raw json.RawMessage, disabled []string,
) (*config.KubeSchedulerProfile, error) {
	key := strings.Join(disabled, ",") + "\n" + string(raw)
	if cached, ok := s.profiles[key]; ok {
		return cached.profile, cached.err
	}
	profile, err := decodeProfile(raw, disabled)
	s.profiles[key] = &profileConfig{profile: profile, err: err}
	return profile, err
}

func decodeProfile(raw json.RawMessage, disabled []string) (*config.KubeSchedulerProfile, error) {
	profile := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &profile); err != nil {
			return nil, fmt.Errorf("config is not a KubeSchedulerProfile object: %w", err)
		}
	}
	if _, ok := profile["schedulerName"]; !ok {
		profile["schedulerName"] = "default-scheduler"
	}
	if err := disable(profile, disabled); err != nil {
		return nil, err
	}
	document, err := json.Marshal(map[string]any{
		"apiVersion": "kubescheduler.config.k8s.io/v1",
		"kind":       "KubeSchedulerConfiguration",
		"profiles":   []any{profile},
	})
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(document, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("config decoded as %T", obj)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return &cfg.Profiles[0], nil
}

// disable adds the named plugins to plugins.multiPoint.disabled.
func disable(profile map[string]any, names []string) error {
	plugins, err := object(profile, "plugins")
	if err != nil {
		return err
	}
	multiPoint, err := object(plugins, "multiPoint")
	if err != nil {
		return err
	}
	disabled, _ := multiPoint["disabled"].([]any)
	if multiPoint["disabled"] != nil && disabled == nil {
		return fmt.Errorf("config: plugins.multiPoint.disabled is not a list")
	}
	for _, name := range names {
		disabled = append(disabled, map[string]any{"name": name})
	}
	multiPoint["disabled"] = disabled
	return nil
}

func object(parent map[string]any, key string) (map[string]any, error) {
	value, present := parent[key]
	if !present || value == nil {
		child := map[string]any{}
		parent[key] = child
		return child, nil
	}
	child, ok := value.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("config: %s is not an object", key)
	}
	return child, nil
}
