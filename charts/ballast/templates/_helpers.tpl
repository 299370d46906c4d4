{{/*
Helpers shared by the umbrella and its subcharts. Helm shares named templates
across a chart and its subcharts, so the components use these for what must
agree between them: names that cross component boundaries, images, the
scheduler mode and the pod security baseline.
*/}}

{{/* Name of umbrella-level objects. */}}
{{- define "ballast.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of umbrella-level objects, truncated to the 63 characters a DNS label allows. */}}
{{- define "ballast.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Namespace of every Ballast object. */}}
{{- define "ballast.namespace" -}}
{{- default .Release.Namespace .Values.global.namespaceOverride }}
{{- end }}

{{/*
Full name of a component from its chart name: "<release>-<component>", or the
release name alone when it already contains the component name. Components
use it to find each other, so it takes the component name as an argument.
Usage: include "ballast.componentFullname" (list . "load-watcher")
*/}}
{{- define "ballast.componentFullname" -}}
{{- $ctx := index . 0 }}
{{- $name := index . 1 }}
{{- if contains $name $ctx.Release.Name }}
{{- $ctx.Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" $ctx.Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/*
The ConfigMap the descheduler keeps its recent moves in and the scheduler's
LoadAware reads them from.
*/}}
{{- define "ballast.movesConfigMap" -}}
{{- printf "%s-moves" (include "ballast.componentFullname" (list . "descheduler")) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* URL of load-watcher as the scheduler and descheduler reach it. */}}
{{- define "ballast.loadWatcherAddress" -}}
{{- if .Values.global.loadWatcher.address }}
{{- .Values.global.loadWatcher.address }}
{{- else }}
{{- printf "%s://%s.%s.svc:%v" (ternary "https" "http" .Values.global.loadWatcher.tls.enabled) (include "ballast.componentFullname" (list . "load-watcher")) (include "ballast.namespace" .) .Values.global.loadWatcher.port }}
{{- end }}
{{- end }}

{{/* Directory the scheduler and descheduler find load-watcher's CA bundle in. */}}
{{- define "ballast.loadWatcherCADir" -}}
/etc/ballast/load-watcher-ca
{{- end }}

{{/* The client flag trusting load-watcher's CA; an args item, only with global.loadWatcher.tls.enabled. */}}
{{- define "ballast.loadWatcherCAArg" -}}
- --load-watcher-ca-file={{ include "ballast.loadWatcherCADir" . }}/{{ .Values.global.loadWatcher.tls.caKey }}
{{- end }}

{{/* Mount of load-watcher's CA bundle; a volumeMounts item, only with global.loadWatcher.tls.enabled. */}}
{{- define "ballast.loadWatcherCAVolumeMount" -}}
- name: load-watcher-ca
  mountPath: {{ include "ballast.loadWatcherCADir" . }}
  readOnly: true
{{- end }}

{{/*
Only the CA key of load-watcher's TLS Secret, never its private key; a
volumes item, only with global.loadWatcher.tls.enabled.
*/}}
{{- define "ballast.loadWatcherCAVolume" -}}
- name: load-watcher-ca
  secret:
    secretName: {{ .Values.global.loadWatcher.tls.secretName }}
    items:
      - key: {{ .Values.global.loadWatcher.tls.caKey }}
        path: {{ .Values.global.loadWatcher.tls.caKey }}
{{- end }}

{{/* Labels every Ballast object carries; the component chart's name is the component label. */}}
{{- define "ballast.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: {{ .Chart.Name }}
app.kubernetes.io/part-of: ballast
{{- with .Values.global.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of a component: stable across upgrades. */}}
{{- define "ballast.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Image reference of a component: registry/repository, then @digest or :tag. */}}
{{- define "ballast.image" -}}
{{- $ref := printf "%s/%s" (trimSuffix "/" .Values.global.image.registry) .Values.image.repository }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $ref .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $ref (.Values.image.tag | default .Values.global.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/*
schedulerName for Ballast's own pods. In replaceDefault mode they are placed
by the cluster's renamed built-in scheduler, so a Ballast scheduler that is
down or starting never blocks its own pods.
*/}}
{{- define "ballast.ownSchedulerName" -}}
{{- if eq .Values.global.schedulerMode "replaceDefault" }}
{{- .Values.global.bootstrapSchedulerName }}
{{- end }}
{{- end }}

{{/* Pod-level settings every component shares. */}}
{{- define "ballast.podSpecCommon" -}}
{{- with (include "ballast.ownSchedulerName" .) }}
schedulerName: {{ . }}
{{- end }}
{{- with .Values.global.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml .Values.global.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Seconds in a Go duration ("1m30s" is 90; the schema has checked its form), as
a number, for rules that compare durations. The chart's one duration helper.
*/}}
{{- define "ballast.seconds" -}}
{{- $total := 0.0 -}}
{{- $units := dict "ns" 0.000000001 "us" 0.000001 "µs" 0.000001 "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h)" (toString .) -1 -}}
{{- $n := regexFind "^[0-9]+(\\.[0-9]+)?" . -}}
{{- $total = addf $total (mulf (float64 $n) (get $units (trimPrefix $n .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/*
Fails on leader election durations the leader elector refuses at start:
leaseDuration > renewDeadline > 1.2 × retryPeriod. Takes (list section values).
*/}}
{{- define "ballast.validateLeaderElection" -}}
{{- $name := index . 0 -}}
{{- $le := index . 1 -}}
{{- $lease := float64 (include "ballast.seconds" $le.leaseDuration) -}}
{{- $renew := float64 (include "ballast.seconds" $le.renewDeadline) -}}
{{- $retry := float64 (include "ballast.seconds" $le.retryPeriod) -}}
{{- if le $lease $renew -}}
{{- fail (printf "%s.leaderElection.leaseDuration=%s must be longer than %s.leaderElection.renewDeadline=%s" $name $le.leaseDuration $name $le.renewDeadline) -}}
{{- end -}}
{{- if le $renew (mulf 1.2 $retry) -}}
{{- fail (printf "%s.leaderElection.renewDeadline=%s must be longer than 1.2 × %s.leaderElection.retryPeriod=%s (the leader elector's jitter)" $name $le.renewDeadline $name $le.retryPeriod) -}}
{{- end -}}
{{- end -}}

{{/* Checks on combinations the schema cannot express; called once from the umbrella. */}}
{{- define "ballast.validate" -}}
{{- $mode := .Values.global.schedulerMode }}
{{- $s := index .Values "scheduler" }}
{{- $d := index .Values "descheduler" }}
{{- $lw := index .Values "load-watcher" }}
{{- if and (eq $mode "second") (eq $s.schedulerName "default-scheduler") }}
{{- fail "scheduler.schedulerName must not be default-scheduler in second mode: two schedulers would race for every pod; set global.schedulerMode=replaceDefault instead" }}
{{- end }}
{{- if or (eq .Values.global.bootstrapSchedulerName "default-scheduler") (eq .Values.global.bootstrapSchedulerName $s.schedulerName) }}
{{- fail "global.bootstrapSchedulerName must differ from default-scheduler and scheduler.schedulerName: it names the cluster's built-in scheduler after it is renamed" }}
{{- end }}
{{- if and $s.enabled (gt (int $s.replicas) 1) (not $s.leaderElection.enabled) }}
{{- fail "scheduler.replicas > 1 requires scheduler.leaderElection.enabled=true: without it every replica binds pods" }}
{{- end }}
{{- if and $d.enabled (gt (int $d.replicas) 1) (not $d.leaderElection.enabled) }}
{{- fail "descheduler.replicas > 1 requires descheduler.leaderElection.enabled=true: without it every replica evicts pods" }}
{{- end }}
{{- if and $lw.enabled (eq $lw.provider "prometheus") (not $lw.prometheus.address) }}
{{- fail "load-watcher.prometheus.address is required when load-watcher.provider=prometheus" }}
{{- end }}
{{- if and $lw.enabled (eq $lw.provider "prometheus") $lw.prometheus.bearerTokenSecret.name (hasPrefix "http://" (lower $lw.prometheus.address)) (not $lw.prometheus.allowInsecureBearerToken) }}
{{- fail (printf "load-watcher.prometheus.bearerTokenSecret would go to load-watcher.prometheus.address=%s in clear text: use an https:// address, or set load-watcher.prometheus.allowInsecureBearerToken=true" $lw.prometheus.address) }}
{{- end }}
{{- $tls := .Values.global.loadWatcher.tls }}
{{- if and $tls.enabled (not $tls.secretName) }}
{{- fail "global.loadWatcher.tls.secretName is required when global.loadWatcher.tls.enabled=true: name the kubernetes.io/tls Secret holding load-watcher's certificate" }}
{{- end }}
{{- if and $tls.enabled .Values.global.loadWatcher.address (not (hasPrefix "https://" .Values.global.loadWatcher.address)) }}
{{- fail (printf "global.loadWatcher.address=%s must be an https:// URL when global.loadWatcher.tls.enabled=true" .Values.global.loadWatcher.address) }}
{{- end }}
{{- if and $lw.enabled (eq (int $lw.metricsPort) (int .Values.global.loadWatcher.port)) }}
{{- fail (printf "load-watcher.metricsPort must differ from global.loadWatcher.port (%v): metrics have a port of their own" .Values.global.loadWatcher.port) }}
{{- end }}
{{- if and (not $lw.enabled) (not .Values.global.loadWatcher.address) (or $s.enabled $d.enabled) }}
{{- fail "load-watcher.enabled=false needs global.loadWatcher.address: the scheduler and descheduler must read usage from somewhere" }}
{{- end }}
{{- if $s.enabled }}
{{- $p := $s.plugins }}
{{- if not (or $p.loadAware.enabled $p.loadVariationRiskBalancing.enabled $p.podCountBalance.enabled $p.usageAwareFit.enabled) }}
{{- fail "scheduler.plugins: enable at least one Ballast plugin, or disable the scheduler with scheduler.enabled=false" }}
{{- end }}
{{- end }}
{{- if and $s.enabled $s.leaderElection.enabled }}
{{- include "ballast.validateLeaderElection" (list "scheduler" $s.leaderElection) }}
{{- end }}
{{- if and $d.enabled $d.leaderElection.enabled }}
{{- include "ballast.validateLeaderElection" (list "descheduler" $d.leaderElection) }}
{{- end }}
{{- if $lw.enabled }}
{{- $period := float64 (include "ballast.seconds" $lw.period) }}
{{- range $lw.windows }}
{{- if lt (float64 (include "ballast.seconds" .)) $period }}
{{- fail (printf "load-watcher.windows holds %s, shorter than load-watcher.period=%s: a window must hold at least one sample" . $lw.period) }}
{{- end }}
{{- end }}
{{- end }}
{{- $p := $s.plugins }}
{{- if $lw.enabled }}
{{- range $name, $w := dict "scheduler.plugins.loadAware.window" $p.loadAware.window "scheduler.plugins.loadVariationRiskBalancing.window" $p.loadVariationRiskBalancing.window "scheduler.plugins.usageAwareFit.window" $p.usageAwareFit.window "descheduler.loadAwareBalance.window" $d.loadAwareBalance.window "descheduler.spreadReplicas.window" $d.spreadReplicas.window }}
{{- if not (has $w $lw.windows) }}
{{- fail (printf "%s=%s is not one of the windows load-watcher keeps (load-watcher.windows=%v)" $name $w $lw.windows) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and $d.enabled (not $d.loadAwareBalance.enabled) (not $d.spreadReplicas.enabled) (not $d.extraProfiles) }}
{{- fail "descheduler: enable descheduler.loadAwareBalance or descheduler.spreadReplicas, or add descheduler.extraProfiles, or set descheduler.enabled=false" }}
{{- end }}
{{- if $d.enabled }}
{{- $names := $d.schedulerNames }}
{{- if has "default-scheduler" $names }}
{{- fail "descheduler.schedulerNames must not list default-scheduler: in second mode it is the cluster's request-based scheduler, which would place a moved pod anywhere; in replaceDefault mode the chart adds it" }}
{{- end }}
{{- if has .Values.global.bootstrapSchedulerName $names }}
{{- fail (printf "descheduler.schedulerNames must not list global.bootstrapSchedulerName (%s): the pods it places are not Ballast's" .Values.global.bootstrapSchedulerName) }}
{{- end }}
{{- if $s.enabled }}
{{- $profiles := list $s.schedulerName }}
{{- range $s.extraProfiles }}
{{- $profiles = append $profiles .schedulerName }}
{{- end }}
{{- $profiles = without ($profiles | uniq) "default-scheduler" }}
{{- if ne (sortAlpha $names | toJson) (sortAlpha $profiles | toJson) }}
{{- fail (printf "descheduler.schedulerNames=%v must list the profiles of Ballast's scheduler, %v (scheduler.schedulerName and the scheduler.extraProfiles names): Helm does not let the descheduler read the scheduler's values" $names $profiles) }}
{{- end }}
{{- end }}
{{- if and $d.labelSelector $d.defaultEvictor.labelSelector }}
{{- fail "set descheduler.labelSelector or descheduler.defaultEvictor.labelSelector, not both: the first is rendered into the second" }}
{{- end }}
{{- end }}
{{- range $name := list "loadAwareBalance" "spreadReplicas" }}
{{- $args := index $d $name }}
{{- if and $args.evictionCooldown $args.balanceCooldown }}
{{- if lt (include "ballast.seconds" $args.balanceCooldown | float64) (include "ballast.seconds" $args.evictionCooldown | float64) }}
{{- fail (printf "descheduler.%s.balanceCooldown (%s) must be at least evictionCooldown (%s): balancing would undo a move sooner than cooling a hot node may" $name $args.balanceCooldown $args.evictionCooldown) }}
{{- end }}
{{- end }}
{{- end }}
{{- /*
The descheduler calls a node hot at its highThresholds and predicts the
replacement with the scheduler's thresholds (read from the scheduler's
configuration): a high threshold above the scheduler's would leave a node the
scheduler already refuses pods for uncounted as hot.
*/}}
{{- if and $s.enabled $p.loadAware.enabled $d.enabled }}
{{- $sched := default (dict) $p.loadAware.thresholds }}
{{- range $name := list "loadAwareBalance" "spreadReplicas" }}
{{- $args := index $d $name }}
{{- if $args.enabled }}
{{- range $r, $high := $args.highThresholds }}
{{- if and (hasKey $sched $r) (gt (float64 $high) (float64 (index $sched $r))) }}
{{- fail (printf "descheduler.%s.highThresholds.%s (%v) must be at most scheduler.plugins.loadAware.thresholds.%s (%v): a node the scheduler keeps pods off would not count as hot for the descheduler; lower descheduler.%s.highThresholds.%s with it" $name $r $high $r (index $sched $r) $name $r) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- range $r, $high := $d.loadAwareBalance.highThresholds }}
{{- $low := index $d.loadAwareBalance.lowThresholds $r }}
{{- if and $low (le (float64 $high) (float64 $low)) }}
{{- fail (printf "descheduler.loadAwareBalance.highThresholds.%s (%v) must be above lowThresholds.%s (%v)" $r $high $r $low) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
API version of MutatingAdmissionPolicy the cluster serves (GA in 1.36, beta
behind a feature gate in 1.34-1.35); empty when it serves none.
*/}}
{{- define "ballast.admissionPolicyAPI" -}}
{{- if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy" -}}
admissionregistration.k8s.io/v1
{{- else if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy" -}}
admissionregistration.k8s.io/v1beta1
{{- end -}}
{{- end -}}

{{/* Whether the namespace opt-in policy is rendered: "true" or empty. */}}
{{- define "ballast.optIn" -}}
{{- if and .Values.optIn.enabled (index .Values "scheduler" "enabled") (ne .Values.global.schedulerMode "replaceDefault") (include "ballast.admissionPolicyAPI" .) -}}
true
{{- end -}}
{{- end -}}
