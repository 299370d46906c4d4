// Package argsfuzz fuzzes a descheduler plugin's args the way the descheduler
// reads them from its policy: decoded from YAML, defaulted through a scheme,
// then validated.
package argsfuzz

import (
	"fmt"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Plugin is what Fuzz needs of one plugin.
type Plugin struct {
	// AddToScheme registers the args' defaulting.
	AddToScheme func(*runtime.Scheme) error
	// New returns empty args.
	New func() runtime.Object
	// Validate is the validator the plugin registers.
	Validate func(runtime.Object) error
}

// Fuzz adds the plugin's shipped defaults (empty args, defaulted) and seeds
// to f, then decodes, defaults and validates every input. Nothing may panic;
// defaulting must be complete in one pass; validation must not change the args
// and must say the same thing twice; args that validate must survive a round
// trip through YAML unchanged and still validate.
func Fuzz(f *testing.F, p Plugin, seeds ...string) {
	scheme := runtime.NewScheme()
	if err := p.AddToScheme(scheme); err != nil {
		f.Fatalf("registering the args' defaults: %v", err)
	}
	shipped := p.New()
	scheme.Default(shipped)
	data, err := yaml.Marshal(shipped)
	if err != nil {
		f.Fatalf("encoding the default args: %v", err)
	}
	f.Add(data)
	f.Add([]byte("{}"))
	for _, s := range seeds {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		args, err := decode(scheme, p.New, data)
		if err != nil {
			return // refused while decoding: the descheduler would not start
		}
		again := args.DeepCopyObject()
		scheme.Default(again)
		if !apiequality.Semantic.DeepEqual(args, again) {
			t.Fatalf("args were not fully defaulted in one pass:\n once %#v\n twice %#v", args, again)
		}
		before := args.DeepCopyObject()
		err = p.Validate(args)
		if !apiequality.Semantic.DeepEqual(args, before) {
			t.Fatal("validating the args changed them")
		}
		if err2 := p.Validate(args); fmt.Sprint(err2) != fmt.Sprint(err) {
			t.Fatalf("validating twice: %v, then %v", err, err2)
		}
		if err != nil {
			return
		}

		encoded, err := yaml.Marshal(args)
		if err != nil {
			t.Fatalf("encoding valid args: %v", err)
		}
		back, err := decode(scheme, p.New, encoded)
		if err != nil {
			t.Fatalf("valid args do not decode again: %v\n%s", err, encoded)
		}
		if !apiequality.Semantic.DeepEqual(args, back) {
			t.Fatalf("valid args changed in a round trip:\n before %#v\n after %#v", args, back)
		}
		if err := p.Validate(back); err != nil {
			t.Fatalf("valid args are invalid after a round trip: %v", err)
		}
	})
}

// decode reads args from YAML or JSON, refusing unknown fields, and defaults them.
func decode(scheme *runtime.Scheme, newArgs func() runtime.Object, data []byte) (runtime.Object, error) {
	raw, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("args are not YAML: %w", err)
	}
	args := newArgs()
	if err := yaml.UnmarshalStrict(raw, args); err != nil {
		return nil, fmt.Errorf("decoding args: %w", err)
	}
	scheme.Default(args)
	return args, nil
}
