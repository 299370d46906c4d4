package charts

import (
	"context"
	"strings"
	"testing"
)

// TestSchemaRejectsBadValues checks that Helm refuses wrong types and out-of-range
// values before rendering, naming the offending field.
func TestSchemaRejectsBadValues(t *testing.T) {
	cases := []struct {
		name, values, wantPath string
	}{
		{"threshold above 100", `scheduler: {plugins: {loadAware: {thresholds: {cpu: 101}}}}`, "/scheduler/plugins/loadAware/thresholds/cpu"},
		{"threshold of 0 (filters every node)", `scheduler: {plugins: {loadAware: {thresholds: {memory: 0}}}}`, "/scheduler/plugins/loadAware/thresholds/memory"},
		{"eviction cap of 0 (the plugin would refuse to start)", `descheduler: {loadAwareBalance: {maxEvictionsPerNode: 0}}`, "/descheduler/loadAwareBalance/maxEvictionsPerNode"},
		{"policy-wide cap of 0", `descheduler: {maxEvictionsPerCycle: 0}`, "/descheduler/maxEvictionsPerCycle"},
		{"negative threshold", `descheduler: {loadAwareBalance: {lowThresholds: {memory: -1}}}`, "/descheduler/loadAwareBalance/lowThresholds/memory"},
		{"zero deviation (every node above the mean would be hot)", `descheduler: {loadAwareBalance: {deviationThresholds: {cpu: 0}}}`, "/descheduler/loadAwareBalance/deviationThresholds/cpu"},
		{"unknown strategy", `scheduler: {plugins: {loadAware: {scoringStrategy: {type: MostLoaded}}}}`, "/scheduler/plugins/loadAware/scoringStrategy/type"},
		{"replicas as a string", `scheduler: {replicas: "two"}`, "/scheduler/replicas"},
		{"zero weight", `scheduler: {plugins: {podCountBalance: {weight: 0}}}`, "/scheduler/plugins/podCountBalance/weight"},
		{"unknown resource", `scheduler: {plugins: {loadAware: {scoringStrategy: {resources: [{name: gpu, weight: 1}]}}}}`, "/scheduler/plugins/loadAware/scoringStrategy/resources/0/name"},
		{"unknown provider", `load-watcher: {provider: datadog}`, "/load-watcher/provider"},
		{"bad duration", `descheduler: {deschedulingInterval: "5 minutes"}`, "/descheduler/deschedulingInterval"},
		{"bad window", `load-watcher: {windows: ["5min"]}`, "/load-watcher/windows/0"},
		{"misspelt key", `scheduler: {replica: 2}`, "/scheduler"},
		{"bad mode", `global: {schedulerMode: both}`, "/global/schedulerMode"},
		{"port out of range", `global: {loadWatcher: {port: 70000}}`, "/global/loadWatcher/port"},
		{"dry run as a string", `descheduler: {dryRun: "yes"}`, "/descheduler/dryRun"},
		{"overcommit below 1", `scheduler: {plugins: {usageAwareFit: {maxOvercommit: {cpu: 0.5}}}}`, "/scheduler/plugins/usageAwareFit/maxOvercommit/cpu"},
		{"prometheus address without scheme", `load-watcher: {prometheus: {address: "prometheus:9090"}}`, "/load-watcher/prometheus/address"},
		{"metrics-server timeout of 0", `load-watcher: {metricsServer: {timeout: 0s}}`, "/load-watcher/metricsServer/timeout"},
		{"metrics-server timeout without a unit", `load-watcher: {metricsServer: {timeout: "10"}}`, "/load-watcher/metricsServer/timeout"},
		{"insecure token switch as a string", `load-watcher: {prometheus: {allowInsecureBearerToken: "yes"}}`, "/load-watcher/prometheus/allowInsecureBearerToken"},
		{"prometheus answer limit of 0", `load-watcher: {prometheus: {maxResponseBytes: 0}}`, "/load-watcher/prometheus/maxResponseBytes"},
		{"prometheus answer limit with a unit", `load-watcher: {prometheus: {maxResponseBytes: 4Mi}}`, "/load-watcher/prometheus/maxResponseBytes"},
		{"bad digest", `scheduler: {image: {digest: "latest"}}`, "/scheduler/image/digest"},
		{"no scheduler names", `descheduler: {schedulerNames: []}`, "/descheduler/schedulerNames"},
		{"repeated scheduler name", `descheduler: {schedulerNames: [ballast-scheduler, ballast-scheduler]}`, "/descheduler/schedulerNames"},
		{"include and exclude namespaces", `descheduler: {namespaces: {include: [apps], exclude: [batch]}}`, "/descheduler/namespaces"},
		{"namespace that cannot exist", `descheduler: {namespaces: {exclude: [Batch_Jobs]}}`, "/descheduler/namespaces/exclude/0"},
		{"namespaces as a string", `descheduler: {namespaces: {include: apps}}`, "/descheduler/namespaces/include"},
		{"namespaces of one plugin", `descheduler: {spreadReplicas: {namespaces: {include: [apps]}}}`, "/descheduler/spreadReplicas"},
		{"unknown selector operator", `descheduler: {labelSelector: {matchExpressions: [{key: tier, operator: Equals, values: [web]}]}}`, "/descheduler/labelSelector/matchExpressions/0/operator"},
		{"In without values", `descheduler: {labelSelector: {matchExpressions: [{key: tier, operator: In}]}}`, "/descheduler/labelSelector/matchExpressions/0"},
		{"Exists with values", `descheduler: {labelSelector: {matchExpressions: [{key: tier, operator: Exists, values: [web]}]}}`, "/descheduler/labelSelector/matchExpressions/0/values"},
		{"label value with a space", `descheduler: {labelSelector: {matchLabels: {tier: "front end"}}}`, "/descheduler/labelSelector/matchLabels/tier"},
		{"label key with a space", `descheduler: {labelSelector: {matchLabels: {"my tier": web}}}`, "/descheduler/labelSelector/matchLabels"},
		{"selector as a string", `descheduler: {labelSelector: "tier=web"}`, "/descheduler/labelSelector"},
		{"network policy switch as a string", `load-watcher: {networkPolicy: {enabled: "yes"}}`, "/load-watcher/networkPolicy/enabled"},
		{"metrics peers as a string", `load-watcher: {networkPolicy: {metricsFrom: "monitoring"}}`, "/load-watcher/networkPolicy/metricsFrom"},
		{"metrics peer that is no NetworkPolicyPeer", `load-watcher: {networkPolicy: {metricsFrom: [{namespace: monitoring}]}}`, "/load-watcher/networkPolicy/metricsFrom/0"},
		{"empty API peer (would admit nothing or everything)", `load-watcher: {networkPolicy: {apiFrom: [{}]}}`, "/load-watcher/networkPolicy/apiFrom/0"},
		{"ipBlock without cidr", `load-watcher: {networkPolicy: {metricsFrom: [{ipBlock: {except: [10.0.0.1/32]}}]}}`, "/load-watcher/networkPolicy/metricsFrom/0/ipBlock"},
		{"peer selector with a bad label", `load-watcher: {networkPolicy: {metricsFrom: [{podSelector: {matchLabels: {app: "prom etheus"}}}]}}`, "/load-watcher/networkPolicy/metricsFrom/0/podSelector/matchLabels/app"},
		{"bind switch as a string", `load-watcher: {bindPodIP: "true"}`, "/load-watcher/bindPodIP"},
		{"metrics port 0", `load-watcher: {metricsPort: 0}`, "/load-watcher/metricsPort"},
		{"TLS switch as a string", `global: {loadWatcher: {tls: {enabled: "true"}}}`, "/global/loadWatcher/tls/enabled"},
		{"TLS Secret name with a slash", `global: {loadWatcher: {tls: {enabled: true, secretName: "ns/cert"}}}`, "/global/loadWatcher/tls/secretName"},
		{"misspelt TLS key", `global: {loadWatcher: {tls: {secret: cert}}}`, "/global/loadWatcher/tls"},
		{"image tag with a space", `global: {image: {tag: "1.0 beta"}}`, "/global/image/tag"},
		{"component image tag with a space", `scheduler: {image: {tag: "v1 "}}`, "/scheduler/image/tag"},
		{"image name in capitals", `load-watcher: {image: {repository: Load-Watcher}}`, "/load-watcher/image/repository"},
		{"registry with a space", `global: {image: {registry: "my registry"}}`, "/global/image/registry"},
		{"negative request", `scheduler: {resources: {requests: {cpu: -1}}}`, "/scheduler/resources/requests/cpu"},
		{"request that is no quantity", `scheduler: {resources: {requests: {memory: "1.2.3Gi"}}}`, "/scheduler/resources/requests/memory"},
		{"unknown resource name", `scheduler: {resources: {limits: {cpus: 1}}}`, "/scheduler/resources/limits"},
		{"toleration with an unknown operator", `scheduler: {tolerations: [{key: a, operator: Equals, value: b}]}`, "/scheduler/tolerations/0/operator"},
		{"toleration with an unknown effect", `load-watcher: {tolerations: [{key: a, operator: Exists, effect: NoSchedul}]}`, "/load-watcher/tolerations/0/effect"},
		{"toleration of every key with Equal", `descheduler: {tolerations: [{operator: Equal, value: b}]}`, "/descheduler/tolerations/0/operator"},
		{"Exists toleration with a value", `scheduler: {tolerations: [{key: a, operator: Exists, value: b}]}`, "/scheduler/tolerations/0/value"},
		{"toleration seconds without NoExecute", `scheduler: {tolerations: [{key: a, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}]}`, "/scheduler/tolerations/0/effect"},
		{"toleration key with a space", `scheduler: {tolerations: [{key: "my key", operator: Exists}]}`, "/scheduler/tolerations/0/key"},
		{"pod label key with a space", `scheduler: {podLabels: {"my label": x}}`, "/scheduler/podLabels"},
		{"pod label value with a space", `descheduler: {podLabels: {tier: "front end"}}`, "/descheduler/podLabels/tier"},
		{"common label key with a space", `global: {commonLabels: {"team name": lab}}`, "/global/commonLabels"},
		{"node selector key with a space", `load-watcher: {nodeSelector: {"node type": small}}`, "/load-watcher/nodeSelector"},
		{"annotation key with a space", `scheduler: {podAnnotations: {"my note": x}}`, "/scheduler/podAnnotations"},
		{"dashboard label key with a space", `grafanaDashboard: {labels: {"grafana dashboard": "1"}}`, "/grafanaDashboard/labels"},
		{"priority class that cannot exist", `scheduler: {priorityClassName: "System Critical"}`, "/scheduler/priorityClassName"},
		{"spread constraint without a topology key", `scheduler: {topologySpreadConstraints: [{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}]}`, "/scheduler/topologySpreadConstraints/0"},
		{"spread constraint with an unknown policy", `scheduler: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Never}]}`,
			"/scheduler/topologySpreadConstraints/0/whenUnsatisfiable"},
		{"misspelt affinity", `descheduler: {affinity: {nodeAfinity: {}}}`, "/descheduler/affinity"},
		{"opt-in selector with a bad label", `optIn: {namespaceSelector: {matchLabels: {"opt in": "true"}}}`, "/optIn/namespaceSelector/matchLabels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Render(context.Background(), RenderOptions{Values: valuesFromYAML(t, tc.values)})
			if err == nil {
				t.Fatal("bad values accepted")
			}
			if !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), "'"+tc.wantPath+"'") {
				t.Errorf("error does not name %s as a schema violation:\n%v", tc.wantPath, err)
			}
		})
	}
}

// TestSchemaAcceptsWhatTheAPIAccepts keeps the schema from refusing values the
// API server and the kubelet take: the forms users write.
func TestSchemaAcceptsWhatTheAPIAccepts(t *testing.T) {
	for _, doc := range []string{
		`global: {image: {registry: "localhost:5000", tag: "v0.4.0-rc.1_linux"}}`,
		`global: {image: {registry: "registry.lab.example:5000/team/ballast/"}}`,
		`scheduler: {image: {repository: ballast/scheduler__dev-build}}`,
		`scheduler: {resources: {requests: {cpu: 0.5, memory: 100M}, limits: {cpu: "1", memory: 1Gi}}}`,
		`load-watcher: {resources: {requests: {memory: "1e8", ephemeral-storage: 1Gi}, limits: {memory: 128Mi}}}`,
		`load-watcher: {resources: {requests: {hugepages-2Mi: 4Mi}, limits: {hugepages-2Mi: 4Mi}}}`,
		`scheduler: {tolerations: [{key: CriticalAddonsOnly, operator: Exists}, {operator: Exists}, {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}]}`,
		`descheduler: {tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 30}, {key: dedicated, value: lab}]}`,
		`scheduler: {nodeSelector: {kubernetes.io/os: linux}, podLabels: {team: lab}, podAnnotations: {"example.com/note": "any text at all"}}`,
		`scheduler: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, minDomains: 2, labelSelector: {matchLabels: {app.kubernetes.io/name: scheduler}}}]}`,
		`scheduler: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]}]}}}}`,
		`global: {commonLabels: {example.com/team: lab}, imagePullSecrets: [{name: regcred}]}`,
	} {
		if _, _, err := Render(context.Background(), RenderOptions{Values: valuesFromYAML(t, doc)}); err != nil {
			t.Errorf("%s: refused: %v", doc, err)
		}
	}
}
