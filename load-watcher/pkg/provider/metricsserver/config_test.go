package metricsserver

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want field.ErrorList
	}{
		{name: "valid", cfg: Config{Timeout: 5 * time.Second}},
		{
			name: "negative timeout",
			cfg:  Config{Timeout: -time.Second},
			want: field.ErrorList{field.Invalid(field.NewPath("m", "timeout"), nil, "")},
		},
		{
			// SetDefaults fills a zero timeout; a flag given 0 reaches
			// Validate as it is, and means no deadline at all.
			name: "zero timeout",
			cfg:  Config{},
			want: field.ErrorList{field.Invalid(field.NewPath("m", "timeout"), nil, "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate(field.NewPath("m"))
			var got field.ErrorList
			if agg, ok := err.(utilerrors.Aggregate); ok {
				for _, e := range agg.Errors() {
					got = append(got, e.(*field.Error))
				}
			} else if err != nil {
				t.Fatalf("want an aggregate of field errors, got %T: %v", err, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")); diff != "" {
				t.Errorf("Validate (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNewDefaultsTheTimeout(t *testing.T) {
	p, err := New(Config{Client: newFake(t)})
	if err != nil {
		t.Fatal(err)
	}
	if p.timeout != DefaultTimeout {
		t.Errorf("timeout = %s, want %s", p.timeout, DefaultTimeout)
	}
	if _, err := New(Config{Client: newFake(t), Timeout: -time.Second}); err == nil {
		t.Errorf("New with a negative timeout: want error")
	}
}
