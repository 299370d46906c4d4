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

{{/*
The value a component starts with for a flag: the last of extraArgs that sets
it (--flag=value or --flag value, as the flag parser reads them), else def.
Takes (list extraArgs flag def).
*/}}
{{- define "ballast.flagValue" -}}
{{- $args := index . 0 -}}
{{- $flag := index . 1 -}}
{{- $value := index . 2 -}}
{{- $next := false -}}
{{- range $args -}}
{{- $a := toString . -}}
{{- if $next -}}
{{- $value = $a -}}
{{- $next = false -}}
{{- else if or (hasPrefix (printf "--%s=" $flag) $a) (hasPrefix (printf "-%s=" $flag) $a) -}}
{{- $value = regexReplaceAll "^--?[^=]+=" $a "" -}}
{{- else if or (eq $a (printf "--%s" $flag)) (eq $a (printf "-%s" $flag)) -}}
{{- $next = true -}}
{{- end -}}
{{- end -}}
{{- $value -}}
{{- end -}}

{{/*
Fails on what would leave pods with no scheduler, or a scheduler with no usage:
a component enabled with no replica, replaceDefault or the opt-in policy with
no Ballast scheduler running, usage that goes stale between two samples.
*/}}
{{- define "ballast.validateScheduling" -}}
{{- $mode := .Values.global.schedulerMode }}
{{- $s := index .Values "scheduler" }}
{{- $d := index .Values "descheduler" }}
{{- $lw := index .Values "load-watcher" }}
{{- if and (eq $mode "replaceDefault") (not $s.enabled) }}
{{- fail "global.schedulerMode=replaceDefault with scheduler.enabled=false: the cluster's own scheduler is renamed and nothing would serve default-scheduler, so no pod would be scheduled again; set scheduler.enabled=true, or global.schedulerMode=second" }}
{{- end }}
{{- range $name := list "scheduler" "load-watcher" "descheduler" }}
{{- $c := index $.Values $name }}
{{- if and $c.enabled (eq (int $c.replicas) 0) }}
{{- $why := dict "scheduler" (ternary "the cluster's own scheduler is renamed in replaceDefault mode and no pod would be scheduled again" "pods that ask for Ballast's scheduler (by schedulerName or the namespace opt-in) would never be scheduled" (eq $mode "replaceDefault")) "load-watcher" "the scheduler and descheduler would read usage from a Service with no pod behind it" "descheduler" "nothing would ever be moved" }}
{{- fail (printf "%s.replicas=0 with %s.enabled=true runs no %s: %s; set %s.replicas to 1 or more, or %s.enabled=false" $name $name $name (get $why $name) $name $name) }}
{{- end }}
{{- end }}
{{- if $lw.enabled }}
{{- $period := include "ballast.flagValue" (list $lw.extraArgs "period" $lw.period) }}
{{- $periodKey := ternary "load-watcher.period" "load-watcher.extraArgs (--period)" (eq $period (toString $lw.period)) }}
{{- $periodS := float64 (include "ballast.seconds" $period) }}
{{- $stale := include "ballast.flagValue" (list $lw.extraArgs "stale-after" $lw.staleAfter) }}
{{- $staleKey := ternary "load-watcher.staleAfter" "load-watcher.extraArgs (--stale-after)" (eq $stale (toString $lw.staleAfter)) }}
{{- if and $stale (le (float64 (include "ballast.seconds" $stale)) $periodS) }}
{{- fail (printf "%s=%s must be longer than %s=%s: every node would turn stale between two samples and load-watcher would report itself not ready; leave load-watcher.staleAfter empty (three periods) or raise it" $staleKey $stale $periodKey $period) }}
{{- end }}
{{- if not .Values.global.loadWatcher.address }}
{{- if $s.enabled }}
{{- $sStale := include "ballast.flagValue" (list $s.extraArgs "load-watcher-stale-after" $s.loadWatcherStaleAfter) }}
{{- $sKey := ternary "scheduler.loadWatcherStaleAfter" "scheduler.extraArgs (--load-watcher-stale-after)" (eq $sStale (toString $s.loadWatcherStaleAfter)) }}
{{- if le (float64 (include "ballast.seconds" $sStale)) $periodS }}
{{- fail (printf "%s=%s must be longer than %s=%s: the scheduler would find every node's usage stale between two samples and place pods by requests alone; raise scheduler.loadWatcherStaleAfter (three periods or more) or lower load-watcher.period" $sKey $sStale $periodKey $period) }}
{{- end }}
{{- end }}
{{- if $d.enabled }}
{{- /* The descheduler's own default, core/client's DefaultStaleAfter. */}}
{{- $dStale := include "ballast.flagValue" (list $d.extraArgs "load-watcher-stale-after" "90s") }}
{{- if le (float64 (include "ballast.seconds" $dStale)) $periodS }}
{{- fail (printf "%s=%s must be shorter than the descheduler's staleness limit, %s (--load-watcher-stale-after in descheduler.extraArgs, 90s by default): it would find every node's usage stale between two samples and move nothing; lower load-watcher.period, or add a longer --load-watcher-stale-after to descheduler.extraArgs" $periodKey $period $dStale) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
A resource quantity (the schema has checked its form: 100m, 0.5, 128Mi, 1e3)
as a number, for rules that compare quantities.
*/}}
{{- define "ballast.quantity" -}}
{{- $q := toString . -}}
{{- $n := regexFind "^\\+?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)" $q -}}
{{- $suffix := trimPrefix $n $q -}}
{{- $v := float64 (trimPrefix "+" $n) -}}
{{- $units := dict "" 1.0 "n" 0.000000001 "u" 0.000001 "m" 0.001 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "P" 1000000000000000.0 "E" 1000000000000000000.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 -}}
{{- if hasKey $units $suffix -}}
{{- $v = mulf $v (get $units $suffix) -}}
{{- else -}}
{{- /* An exponent: e3, E-2 (strconv reads a leading 0 as octal, so zeros go first). */ -}}
{{- $down := hasPrefix "-" (substr 1 2 $suffix) -}}
{{- $exp := int (default "0" (regexReplaceAll "^[eE][+-]?0*" $suffix "")) -}}
{{- range until (int (min 400 $exp)) -}}
{{- $v = ternary (divf $v 10.0) (mulf $v 10.0) $down -}}
{{- end -}}
{{- end -}}
{{- $v -}}
{{- end -}}

{{/*
Fails on container resources the API server refuses: a request above its
limit, or, for a resource that cannot be overcommitted (hugepages, extended
resources), a request that differs from its limit or has none.
*/}}
{{- define "ballast.validateResources" -}}
{{- range $name := list "load-watcher" "scheduler" "descheduler" }}
{{- $c := index $.Values $name }}
{{- if $c.enabled }}
{{- $req := default (dict) ($c.resources).requests }}
{{- $lim := default (dict) ($c.resources).limits }}
{{- range $r, $q := $req }}
{{- $overcommit := has $r (list "cpu" "memory" "ephemeral-storage") }}
{{- if hasKey $lim $r }}
{{- $l := index $lim $r }}
{{- if and $overcommit (gt (float64 (include "ballast.quantity" $q)) (float64 (include "ballast.quantity" $l))) }}
{{- fail (printf "%s.resources.requests.%s=%v is above %s.resources.limits.%s=%v: the API server refuses a request above its limit; lower the request or raise the limit" $name $r $q $name $r $l) }}
{{- end }}
{{- if and (not $overcommit) (ne (float64 (include "ballast.quantity" $q)) (float64 (include "ballast.quantity" $l))) }}
{{- fail (printf "%s.resources.requests.%s=%v must equal %s.resources.limits.%s=%v: the API server refuses a request other than the limit for a resource that cannot be overcommitted" $name $r $q $name $r $l) }}
{{- end }}
{{- else if not $overcommit }}
{{- fail (printf "%s.resources.requests.%s needs %s.resources.limits.%s, equal to it: the API server refuses a request without a limit for a resource that cannot be overcommitted" $name $r $name $r) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Fails on labels that would take the place of the ones Ballast's selectors,
Services and NetworkPolicy find its pods by.
*/}}
{{- define "ballast.validateLabels" -}}
{{- $own := list "helm.sh/chart" "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/version" "app.kubernetes.io/managed-by" "app.kubernetes.io/component" "app.kubernetes.io/part-of" }}
{{- range $k := $own }}
{{- if hasKey (default (dict) $.Values.global.commonLabels) $k }}
{{- fail (printf "global.commonLabels must not set %s: Ballast sets it on every object, and its selectors, Services and NetworkPolicy find its pods by it; remove it from global.commonLabels" $k) }}
{{- end }}
{{- range $name := list "scheduler" "load-watcher" "descheduler" }}
{{- if hasKey (default (dict) (index $.Values $name).podLabels) $k }}
{{- fail (printf "%s.podLabels must not set %s: Ballast sets it on the pod, and its selectors, Services and NetworkPolicy find the pod by it; remove it from %s.podLabels" $name $k $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* Checks on combinations the schema cannot express; called once from the umbrella. */}}
{{- define "ballast.validate" -}}
{{- include "ballast.validateScheduling" . }}
{{- include "ballast.validateLabels" . }}
{{- include "ballast.validateResources" . }}
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
