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
