// Package k3sserver runs, beside the lane's real control plane and node,
// the parts of a k3s server that Ballast's k3s install path meets: the CRDs
// k3s creates, helm-controller registered as k3s registers it, the deploy
// controller that applies the files of server/manifests, the agent's import
// of image archives from agent/images, the kube-scheduler arguments k3s
// derives from config.yaml and its config.yaml.d drop-ins, the annotations and
// labels k3s puts on a server's Node, and the files k3s writes for local tools
// (/etc/rancher/k3s/k3s.yaml). Each follows what k3s does (its source is cited
// where it matters); what k3s does beyond that is not here, and docs/e2e.md
// says which parts are real and which stand in.
package k3sserver
