package lane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
)

// applyManifests server-side applies every object of a multi-document YAML
// stream, as `kubectl apply --server-side` would.
func applyManifests(ctx context.Context, cfg *rest.Config, manifests []byte) error {
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating a dynamic client: %w", err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("decoding manifests: %w", err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("mapping %s: %w", gvk, err)
		}
		raw, err := obj.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encoding %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		res := client.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		if _, err := res.Patch(ctx, obj.GetName(), types.ApplyPatchType, raw,
			metav1.PatchOptions{FieldManager: "ballast-e2e", Force: ptr.To(true)}); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
		}
	}
}
