package cluster

import (
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)
