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

{{/*
spec.schedulerNames whose pods the Ballast plugins may evict, as a JSON list:
schedulerNames, and default-scheduler in replaceDefault mode, where Ballast
serves it. The umbrella's ballast.validate checks the list against the
scheduler's profiles.
*/}}
{{- define "descheduler.schedulerNames" -}}
{{- $names := .Values.schedulerNames }}
{{- if eq .Values.global.schedulerMode "replaceDefault" }}
{{- $names = append $names "default-scheduler" }}
{{- end }}
{{- $names | uniq | toJson }}
{{- end }}

{{/*
Namespaces the Ballast plugins move pods from, as JSON api.Namespaces: the
include list when set, else the exclude list with kube-system and Ballast's
own namespace.
*/}}
{{- define "descheduler.namespaces" -}}
{{- if .Values.namespaces.include }}
{{- dict "include" .Values.namespaces.include | toJson }}
{{- else }}
{{- $exclude := concat (list "kube-system" (include "descheduler.namespace" .)) .Values.namespaces.exclude }}
{{- dict "exclude" ($exclude | uniq) | toJson }}
{{- end }}
{{- end }}

{{/*
The ConfigMap the descheduler keeps its recent moves in, so that a restart
or a new leader undoes none of them.
*/}}
{{- define "descheduler.movesConfigMap" -}}
{{- include "ballast.movesConfigMap" . -}}
{{- end -}}

{{/*
The ValidatingAdmissionPolicy (and its binding) that narrows the
descheduler's right to patch Deployments to the rollout of a surge move.
*/}}
{{- define "descheduler.surgePolicyName" -}}
{{- printf "%s-surge" (include "descheduler.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/*
The ValidatingAdmissionPolicy (and its binding) that keeps the descheduler's
right to create ConfigMaps to its moves ConfigMap.
*/}}
{{- define "descheduler.movesPolicyName" -}}
{{- printf "%s-moves" (include "descheduler.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end -}}
