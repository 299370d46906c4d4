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

{{/* Whether LoadAware reads the descheduler's moves (its args' plannedMoves). */}}
{{- define "scheduler.readsPlannedMoves" -}}
{{- $la := .Values.plugins.loadAware }}
{{- if and $la.enabled (($la.plannedMoves).enabled) }}true{{ end }}
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
{{- /*
With LoadAware on, the scores of LoadVariationRiskBalancing and PodCountBalance are terms of LoadAware's
score (its args' variationRisk and podCountBalance), weighted as the plugins' weights say, and LoadAware
weighs their sum: one plugin and one pass over the nodes instead of three, the same total. Without
LoadAware, they run as plugins of their own.
*/}}
{{- $la := $p.loadAware }}
{{- $risk := $p.loadVariationRiskBalancing }}
{{- $pods := $p.podCountBalance }}
{{- $terms := and $la.enabled (or $risk.enabled $pods.enabled) }}
{{- $laArgs := merge (omit $la "enabled" "weight" "plannedMoves") $stats }}
{{- with $la.plannedMoves }}
{{- if .enabled }}
{{- $validFor := float64 (include "ballast.seconds" .validFor) }}
{{- if or (lt $validFor 1.0) (gt $validFor 3600.0) }}
{{- fail (printf "scheduler.plugins.loadAware.plannedMoves.validFor=%s must be between 1s and 1h" .validFor) }}
{{- end }}
{{- $_ := set $laArgs "plannedMoves" (dict "namespace" (include "scheduler.namespace" $) "name" (include "ballast.movesConfigMap" $) "validFor" .validFor) }}
{{- end }}
{{- end }}
{{- $laWeight := int $la.weight }}
{{- if $terms }}
{{- $_ := set $laArgs "scoringStrategy" (merge (dict "weight" $la.weight) (default (dict) $la.scoringStrategy)) }}
{{- if $risk.enabled }}
{{- $_ := set $laArgs "variationRisk" (omit $risk "enabled") }}
{{- $laWeight = add $laWeight $risk.weight }}
{{- end }}
{{- if $pods.enabled }}
{{- $_ := set $laArgs "podCountBalance" (omit $pods "enabled") }}
{{- $laWeight = add $laWeight $pods.weight }}
{{- end }}
{{- end }}
plugins:
  multiPoint:
    enabled:
      {{- if $la.enabled }}
      - name: LoadAware
        weight: {{ $laWeight }}
      {{- end }}
      {{- if and $risk.enabled (not $terms) }}
      - name: LoadVariationRiskBalancing
        weight: {{ $risk.weight }}
      {{- end }}
      {{- if and $pods.enabled (not $terms) }}
      - name: PodCountBalance
        weight: {{ $pods.weight }}
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
  {{- if $la.enabled }}
  - name: LoadAware
    args:
      {{- toYaml $laArgs | nindent 6 }}
  {{- end }}
  {{- if and $risk.enabled (not $terms) }}
  - name: LoadVariationRiskBalancing
    args:
      {{- toYaml (omit $risk "enabled" "weight") | nindent 6 }}
  {{- end }}
  {{- if $p.usageAwareFit.enabled }}
  - name: UsageAwareFit
    args:
      {{- toYaml (omit $p.usageAwareFit "enabled") | nindent 6 }}
  {{- end }}
{{- end }}
