package explain

import (
	"strings"
	"testing"
)

// -n is the pod's namespace, as in kubectl: `explain pod -n media web`
// explains media/web; without it, the kubeconfig context's namespace.
func TestPodRef(t *testing.T) {
	context := func() string { return "from-context" }
	for _, tc := range []struct {
		ref, namespace   string
		wantNS, wantName string
		wantErr          string
	}{
		{ref: "web-x", namespace: "media", wantNS: "media", wantName: "web-x"},
		{ref: "media/web-x", wantNS: "media", wantName: "web-x"},
		{ref: "media/web-x", namespace: "media", wantNS: "media", wantName: "web-x"},
		{ref: "web-x", wantNS: "from-context", wantName: "web-x"},
		{ref: "media/web-x", namespace: "default", wantErr: "-n says default"},
		{ref: "media/", wantErr: "want NAME or NAMESPACE/NAME"},
		{ref: "a/b/c", wantErr: "want NAME or NAMESPACE/NAME"},
	} {
		ns, name, err := podRef(tc.ref, tc.namespace, context)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s -n %q: err = %v, want %q", tc.ref, tc.namespace, err, tc.wantErr)
			}
		case err != nil || ns != tc.wantNS || name != tc.wantName:
			t.Errorf("%s -n %q: %s/%s, %v; want %s/%s", tc.ref, tc.namespace, ns, name, err, tc.wantNS, tc.wantName)
		}
	}
}
