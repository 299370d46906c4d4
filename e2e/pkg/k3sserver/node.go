package k3sserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// What k3s records on a server's Node.
const (
	// NodeArgsAnnotation holds the arguments k3s last started with (NodeArgs).
	NodeArgsAnnotation = "k3s.io/node-args"
	// LabelControlPlane and LabelMaster mark a server that runs an API
	// server; k3s's cloud provider sets the instance type of every node.
	LabelControlPlane = "node-role.kubernetes.io/control-plane"
	LabelMaster       = "node-role.kubernetes.io/master"
	InstanceType      = "k3s"
)

// MarkServer waits for node to register, then records on it what a k3s
// server does when it starts: its arguments (args, the command first) and
// the server's role and instance-type labels.
func MarkServer(ctx context.Context, client kubernetes.Interface, node string, args []string) error {
	nodeArgs, err := NodeArgs(args)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{NodeArgsAnnotation: nodeArgs},
		"labels": map[string]string{
			LabelControlPlane: "true", LabelMaster: "true", corev1.LabelInstanceTypeStable: InstanceType,
		},
	}})
	if err != nil {
		return fmt.Errorf("encoding the node patch: %w", err)
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = client.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "k3s"})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("recording k3s's arguments on node %s: %w (last: %v)", node, err, last)
	}
	return nil
}
