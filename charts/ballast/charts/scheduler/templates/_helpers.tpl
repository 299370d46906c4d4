{{/* Chart name of scheduler. */}}
{{- define "scheduler.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of scheduler objects; other components derive the same name through ballast.componentFullname. */}}
{{- define "scheduler.fullname" -}}
{{- include "ballast.componentFullname" (list . .Chart.Name) }}
{{- end }}

{{/* Namespace of scheduler objects. */}}
{{- define "scheduler.namespace" -}}
{{- include "ballast.namespace" . }}
{{- end }}

{{/* Labels of scheduler objects. */}}
{{- define "scheduler.labels" -}}
{{- include "ballast.labels" . }}
{{- end }}

{{/* Selector labels of scheduler pods. */}}
{{- define "scheduler.selectorLabels" -}}
{{- include "ballast.selectorLabels" . }}
{{- end }}

{{/* ServiceAccount scheduler runs as. */}}
{{- define "scheduler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "scheduler.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Lease the scheduler replicas elect their leader on. */}}
{{- define "scheduler.leaseName" -}}
{{- default (include "scheduler.fullname" .) .Values.leaderElection.resourceName }}
{{- end }}

{{/* Plugins and their args, the same in every Ballast profile. */}}
{{- define "scheduler.profileBody" -}}
{{- $p := .Values.plugins }}
{{- if hasKey $p.loadAware "thresholdStatistics" }}
{{- fail "scheduler.plugins.loadAware.thresholdStatistics has moved to global.thresholdStatistics, which the descheduler reads too" }}
{{- end }}
{{- with $p.loadAware.scoringStrategy }}
{{- if eq (default "Bottleneck" .combine) "Bottleneck" }}
{{- $weights := list }}
{{- range .resources }}
{{- $weights = append $weights (toString .weight) }}
{{- end }}
{{- if gt (len ($weights | uniq)) 1 }}
{{- fail (printf "scheduler.plugins.loadAware.scoringStrategy.resources: weights %v apply only with combine: WeightedMean; give every resource the same weight, or set scheduler.plugins.loadAware.scoringStrategy.combine=WeightedMean" $weights) }}
{{- end }}
{{- end }}
{{- end }}
{{- /* One statistic per resource for the scheduler and the descheduler. */}}
{{- $stats := dict }}
{{- with (.Values.global).thresholdStatistics }}
{{- $stats = dict "thresholdStatistics" . }}
{{- end }}
plugins:
  multiPoint:
    enabled:
      {{- if $p.loadAware.enabled }}
      - name: LoadAware
        weight: {{ $p.loadAware.weight }}
      {{- end }}
      {{- if $p.loadVariationRiskBalancing.enabled }}
      - name: LoadVariationRiskBalancing
        weight: {{ $p.loadVariationRiskBalancing.weight }}
      {{- end }}
      {{- if $p.podCountBalance.enabled }}
      - name: PodCountBalance
        weight: {{ $p.podCountBalance.weight }}
      {{- end }}
      {{- if $p.usageAwareFit.enabled }}
      - name: UsageAwareFit
      {{- end }}
  {{- with $p.disabledScorePlugins }}
  score:
    disabled:
      {{- range . }}
      - name: {{ . }}
      {{- end }}
  {{- end }}
pluginConfig:
  {{- if $p.loadAware.enabled }}
  - name: LoadAware
    args:
      {{- toYaml (merge (omit $p.loadAware "enabled" "weight") $stats) | nindent 6 }}
  {{- end }}
  {{- if $p.loadVariationRiskBalancing.enabled }}
  - name: LoadVariationRiskBalancing
    args:
      {{- toYaml (omit $p.loadVariationRiskBalancing "enabled" "weight") | nindent 6 }}
  {{- end }}
  {{- if $p.usageAwareFit.enabled }}
  - name: UsageAwareFit
    args:
      {{- toYaml (omit $p.usageAwareFit "enabled") | nindent 6 }}
  {{- end }}
{{- end }}
