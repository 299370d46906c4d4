{{/* Chart name of descheduler. */}}
{{- define "descheduler.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of descheduler objects; other components derive the same name through ballast.componentFullname. */}}
{{- define "descheduler.fullname" -}}
{{- include "ballast.componentFullname" (list . .Chart.Name) }}
{{- end }}

{{/* Namespace of descheduler objects. */}}
{{- define "descheduler.namespace" -}}
{{- include "ballast.namespace" . }}
{{- end }}

{{/* Labels of descheduler objects. */}}
{{- define "descheduler.labels" -}}
{{- include "ballast.labels" . }}
{{- end }}

{{/* Selector labels of descheduler pods. */}}
{{- define "descheduler.selectorLabels" -}}
{{- include "ballast.selectorLabels" . }}
{{- end }}

{{/* ServiceAccount descheduler runs as. */}}
{{- define "descheduler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "descheduler.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Lease the descheduler replicas elect their leader on. */}}
{{- define "descheduler.leaseName" -}}
{{- default (include "descheduler.fullname" .) .Values.leaderElection.resourceName }}
{{- end }}
