{{/*
Names are fixed, not derived from the release name: the operator is a cluster singleton (one
ClusterRole, one CRD set, one scheduler name), and the objects are the same as deploy/'s.
*/}}

{{/* Labels every object carries: deploy/'s two, then Helm's bookkeeping. */}}
{{- define "dra-operator.labels" -}}
app.kubernetes.io/name: dra-operator
app.kubernetes.io/part-of: dra-operator
{{ include "dra-operator.helmLabels" . }}
{{- end -}}

{{/* Helm's bookkeeping labels alone, for objects whose other labels come from deploy/. */}}
{{- define "dra-operator.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* Selector of the operator's pods: stable across upgrades, as deploy/'s. */}}
{{- define "dra-operator.selectorLabels" -}}
app.kubernetes.io/name: dra-operator
app.kubernetes.io/component: operator
{{- end -}}

{{- define "dra-operator.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/*
The routing this install gets (docs/coexistence.md), as YAML for fromYaml:
  mutate: "v1", "v1beta1" or "" (no MutatingAdmissionPolicy), enforce: true/false, why: text.
routing.mode auto: chosen from the cluster. MutatingAdmissionPolicy v1 from 1.36 (or when the
server says it serves it), v1beta1 on 1.34/1.35 when served (feature gate and runtime-config);
ValidatingAdmissionPolicy v1 from 1.30. bare-control-plane: none. manual: routing.mutate and
routing.enforce as given. A value missing (an upgrade with --reuse-values of a chart that had
no routing.mode) counts as auto.
*/}}
{{- define "dra-operator.routing" -}}
{{- $mode := .Values.routing.mode | default "auto" -}}
{{- $minor := int (regexFind "^[0-9]+" .Capabilities.KubeVersion.Minor) -}}
{{- $apis := .Capabilities.APIVersions -}}
{{- $v1 := or (ge $minor 36) ($apis.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy") -}}
{{- $beta := $apis.Has "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy" -}}
{{- $vap := or (ge $minor 30) ($apis.Has "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy") -}}
{{- $served := ternary "v1" (ternary "v1beta1" "" $beta) $v1 -}}
{{- if eq $mode "bare-control-plane" }}
mutate: ""
enforce: false
why: routing.mode=bare-control-plane
{{- else if eq $mode "manual" }}
mutate: {{ ternary ($served | default "v1") "" (.Values.routing.mutate | default false) | quote }}
enforce: {{ .Values.routing.enforce | default false }}
why: routing.mode=manual
{{- else }}
mutate: {{ $served | quote }}
enforce: {{ $vap }}
why: {{ printf "Kubernetes %s.%s" .Capabilities.KubeVersion.Major .Capabilities.KubeVersion.Minor | quote }}
{{- end }}
{{- end -}}
