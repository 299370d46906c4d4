{{/* Chart name of load-watcher. */}}
{{- define "load-watcher.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of load-watcher objects; other components derive the same name through ballast.componentFullname. */}}
{{- define "load-watcher.fullname" -}}
{{- include "ballast.componentFullname" (list . .Chart.Name) }}
{{- end }}

{{/* Namespace of load-watcher objects. */}}
{{- define "load-watcher.namespace" -}}
{{- include "ballast.namespace" . }}
{{- end }}

{{/* Labels of load-watcher objects. */}}
{{- define "load-watcher.labels" -}}
{{- include "ballast.labels" . }}
{{- end }}

{{/* Selector labels of load-watcher pods. */}}
{{- define "load-watcher.selectorLabels" -}}
{{- include "ballast.selectorLabels" . }}
{{- end }}

{{/* ServiceAccount load-watcher runs as. */}}
{{- define "load-watcher.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "load-watcher.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
